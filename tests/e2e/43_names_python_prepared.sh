# The first samples of a Python named up front: `record -p PID` (and -c
# NAME) of a python3.11 that is already running, 50 recursive calls deep,
# loads its unwind tables and its Python layout before sampling starts,
# so that no sample of its interpreter lacks its Python frames:
#   - prepared (-p, then -c): 0 interpreter samples without Python frames
#     in the output, 0 in the summary's python line, 0 samples copied
#     before their tables. The bound is 0, not a small share: every sample
#     of this script runs inside the evaluation function of a frame chain
#     50 deep that never empties, so a walk that finds no frame is a bug;
#   - the same with preparation turned off (EBPROF_NO_PREPARE, tests
#     only): some do lack them (the ~0.1 s while the tables build), which
#     shows that the check above sees the loss when it is there. The summary must count exactly the ones the output shows.
source "$(dirname "$0")/lib.bash"

PY=/usr/bin/python3.11
[ -x "$PY" ] || fail "$PY is missing: run make deps (Debian's python3.11)"

ln -s "$PY" "$T/pyfirst"
bg "$T/pyfirst" "$ROOT/examples/pydeep.py" 60; DEEP=$BG
# Running for a while, its interpreter up and deep in its recursion.
wait_cpu 1 10 "$DEEP"

# record ARGS... -> OUT: the folded output and the summary of one run.
record() {
	local out=$1
	shift
	"$@" -F 999 -d 3 --format folded -o "$T/$out.folded" 2>"$T/$out.summary" ||
		fail "ebprof record ($out) exited $?: $(cat "$T/$out.summary")"
}

# native_only OUT: "INTERP NATIVE_ONLY" of pyfirst's samples in the output.
native_only() {
	/usr/bin/python3 - "$T/$1.folded" "${2:-pyfirst}" <<'PYEOF'
import sys
interp = bare = 0
for line in open(sys.argv[1], encoding="utf-8"):
    s, _, n = line.rstrip("\n").rpartition(" ")
    f, n = s.split(";"), int(n)
    if f[0] != "pyfirst" or "_PyEval_EvalFrameDefault" not in f:
        continue
    interp += n
    if not any(x.endswith("_[p]") for x in f):
        bare += n
print(interp, bare)
PYEOF
}

# summary_native_only OUT: the python line's count of the same.
summary_native_only() {
	sed -n 's/.* \([0-9]*\) samples in the interpreter without Python frames.*/\1/p' \
		"$T/$1.summary"
}

summary_copied() {
	sed -n 's/.*; \([0-9]*\) samples copied before their tables.*/\1/p' "$T/$1.summary"
}

for how in pid comm; do
	if [ "$how" = pid ]; then
		record "$how" "$EBPROF" record -p "$DEEP"
	else
		record "$how" "$EBPROF" record -c pyfirst
	fi
	! grep -q 'warning' "$T/$how.summary" || fail "$how: unexpected warning: $(cat "$T/$how.summary")"
	read -r interp bare <<<"$(native_only "$how")"
	echo "prepared ($how): $bare of $interp interpreter samples without Python frames;" \
		"summary: $(summary_native_only "$how") native-only, $(summary_copied "$how") copied"
	[ "$interp" -ge 500 ] || fail "$how: only $interp interpreter samples"
	[ "$bare" -eq 0 ] || fail "$how: $bare of $interp interpreter samples lack Python frames"
	[ "$(summary_native_only "$how")" = 0 ] ||
		fail "$how: the summary counts native-only samples: $(grep python: "$T/$how.summary")"
	[ "$(summary_copied "$how")" = 0 ] ||
		fail "$how: samples were copied before their tables: $(cat "$T/$how.summary")"
done
ok "prepared before sampling: every interpreter sample has its Python frames (-p and -c)"

record unprepared env EBPROF_NO_PREPARE=1 "$EBPROF" record -p "$DEEP"
read -r interp bare <<<"$(native_only unprepared)"
echo "unprepared: $bare of $interp interpreter samples without Python frames;" \
	"summary: $(summary_native_only unprepared) native-only, $(summary_copied unprepared) copied"
[ "$bare" -gt 0 ] ||
	fail "without preparation no sample lacks Python frames: the check above proves nothing"
[ "$(summary_native_only unprepared)" = "$bare" ] ||
	fail "without preparation the summary counts $(summary_native_only unprepared) native-only samples, the output shows $bare"
ok "unprepared: $bare of $interp interpreter samples lack Python frames, as expected"

