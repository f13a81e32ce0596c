# Off-CPU time of Python functions: sleep_a() and sleep_b() of
# examples/pysleeps.py take turns sleeping 4 ms from one call site, so the
# interpreter waits from the same native place for both (Debian's own
# /usr/bin/python3.11). In each of four such processes, each function must
# carry half of the process's sleep time under its own Python frame
# (within 3 points), above time.sleep's native frames. A thread's walk
# from a place it left from before is kept and reused (offcpu.bpf.h), but
# not one with Python frames: reused, it charged one function's waits to
# the other in most processes (40.2 to 50.5% in eight, five of them off
# by more than 3 points), so this test would pass only by rare luck.
source "$(dirname "$0")/lib.bash"

PY=/usr/bin/python3.11
[ -x "$PY" ] || fail "$PY is missing: run make deps (Debian's python3.11)"
pids=() args=()
for i in 1 2 3 4; do
	# Each under a name of its own (a link to the same binary): the profile's root frame.
	ln -s "$PY" "$T/pysleeps$i"
	bg "$T/pysleeps$i" "$ROOT/examples/pysleeps.py" 30; pids+=("$BG"); args+=(-p "$BG")
done
sleep 0.5
"$EBPROF" record --mode offcpu --offcpu-period-us 100 "${args[@]}" -d 4 --format folded \
	-o "$T/sleeps.folded" 2>"$T/summary" || fail "ebprof record exited $?: $(cat "$T/summary")"
kill "${pids[@]}"

# One line a process: its name, sleep_a's and sleep_b's microseconds of sleep.
/usr/bin/python3 - "$T/sleeps.folded" >"$T/split" <<'PYEOF' || fail "reading the profile"
import sys
got = {"pysleeps%d" % i: [0, 0] for i in range(1, 5)}
for line in open(sys.argv[1]):
    stack, n = line.rsplit(" ", 1)
    frames = stack.split(";")
    if frames[-1] != "[off-cpu: sleep]" or frames[0] not in got:
        continue
    for i, name in enumerate(("sleep_a (pysleeps.py:13)_[p]", "sleep_b (pysleeps.py:17)_[p]")):
        if name in frames:
            got[frames[0]][i] += int(n)
print("\n".join("%s %d %d" % (p, a, b) for p, (a, b) in got.items()))
PYEOF
while read -r name a b; do
	total=$((a + b))
	at_least "$total" 2500000 ||
		fail "$name: only $total us of sleep under sleep_a and sleep_b in 4 s: $(cat "$T/summary")"
	pct=$(awk -v a="$a" -v t="$total" 'BEGIN { printf "%.1f", 100 * a / t }')
	within "$pct" 50 3 || {
		grep "^$name;" "$T/sleeps.folded" | sort -t' ' -k2 -nr | head -4 >&2
		fail "$name: sleep_a has $pct% of the two functions' sleep, not 50 (3 points)"
	}
	echo "$name: sleep_a $pct% of $total us"
done <"$T/split"
ok "four Pythons, two functions each sleeping from one native place: half each (3 points)"
