# `record -p` puts a CPU-clock event on each thread of the process rather
# than one on each CPU (bpf/taskev.c), so the ticks of other processes
# never happen. The process (examples/latethreads) starts its spinning
# threads only after the recording attached, from a thread that itself
# started late, and then forks a child; split7030 keeps both CPUs busy
# beside it. Checked, with per-thread events and again with per-CPU ones
# (EBPROF_EVENTS=cpu, the control: the same profile, but every tick of
# split7030 reaches the program and is filtered):
#   - the late threads' samples match the CPU time they measured (±10%);
#   - the child's ticks reach the program through inherited events and
#     are filtered, and no other task's tick does (filtered ≈ the child's
#     CPU time; per CPU: thousands more);
#   - samples = recorded (copies unwound in user space among them) +
#     filtered + idle + losses, exactly;
#   - with too few file descriptors for an event per thread (ulimit -n 64
#     and 40 threads), per-CPU events, a line saying why, the same profile.
source "$(dirname "$0")/lib.bash"

HZ=999
bg "$EX/split7030" 300

# record_case NAME [IDLE_THREADS]: runs latethreads under record -p; env as given.
record_case() {
	local name=$1 idle=${2:-0} L R
	rm -f "$T/go"
	"$EX/latethreads" "$T/go" 3 1500 "$idle" >"$T/$name.out" &
	L=$!
	BG_PIDS+=("$L")
	"$EBPROF" record -p "$L" -F "$HZ" -d 90 --format folded -o "$T/$name.folded" \
		2>"$T/$name.err" &
	R=$!
	wait_sampling "$T/$name.err"
	touch "$T/go"
	wait "$L" || fail "$name: latethreads failed"
	wait "$R" || fail "$name: record exited $?: $(cat "$T/$name.err")"
}

# check_case NAME: the profile and the accounting; prints the filtered count.
check_case() {
	local name=$1 late child n_late want
	read -r _ late _ child <"$T/$name.out"
	n_late=$($FOLDED_PY "$T/$name.folded" count latethreads late_spin)
	want=$(awk -v ns="$late" -v hz="$HZ" 'BEGIN { printf "%d", ns * hz / 1e9 }')
	within "$n_late" "$want" "$((want / 10))" ||
		fail "$name: $n_late samples in late_spin for ${late} ns of CPU (want $want ±10%)"
	[ "$($FOLDED_PY "$T/$name.folded" count latethreads child_spin)" -eq 0 ] ||
		fail "$name: the child (another process) is in the -p profile"
	summary_accounts "$T/$name.err" "$name"
	ok "$name: late_spin $n_late samples for $want expected; $ACCOUNTS (${COPIED:-0} copied)" >&2
	echo "$(summary_field "$T/$name.err" "filtered out") $(summary_field "$T/$name.err" idle) $child"
}

record_case task
grep -q '^ebprof: a CPU-clock event on each of the 1 thread of the -p processes' "$T/task.err" ||
	fail "task: no per-thread events: $(cat "$T/task.err")"
read -r filtered idle child < <(check_case task)
want=$(awk -v ns="$child" -v hz="$HZ" 'BEGIN { printf "%d", ns * hz / 1e9 }')
within "$filtered" "$want" "$((want / 10 + 20))" ||
	fail "task: $filtered ticks filtered; the child's CPU time gives $want (±10%)," \
		"so other tasks' ticks reached the program or the child's did not"
[ "$idle" -eq 0 ] || fail "task: $idle idle ticks reached the program"
ok "task: $filtered filtered, all the child's ($want expected), 0 idle"

EBPROF_EVENTS=cpu record_case cpu
grep -q '^ebprof: a CPU-clock event' "$T/cpu.err" && fail "cpu: EBPROF_EVENTS=cpu said: $(cat "$T/cpu.err")"
read -r filtered _ _ < <(check_case cpu)
at_least "$filtered" $((want + 1000)) ||
	fail "cpu (control): only $filtered ticks filtered with split7030 busy beside it"
ok "cpu (control): $filtered ticks filtered, split7030's among them"

(ulimit -n 64 && record_case fds 40) || exit 1
grep -q '^ebprof: a CPU-clock event per CPU, .*: .*raise `ulimit -n`' "$T/fds.err" ||
	fail "fds: no line saying why per-CPU events: $(cat "$T/fds.err")"
check_case fds >/dev/null
ok "fds: $(grep '^ebprof: a CPU-clock event per CPU' "$T/fds.err")"
