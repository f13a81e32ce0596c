# Issue 20, finding 3: a process with JIT code (anonymous executable
# memory) writes a /tmp/perf-PID.map of several GiB without a newline (a
# sparse file). It passes the trust checks (the process's own user, mode
# 0644), and an unbounded getline() read it whole: 4 GiB took the
# profiler to 4.2 GB of memory. The reader now skips a line over 64 KiB
# to its newline, reads at most 16 MiB per refresh and 256 MiB of one
# map in all: record ends on time, within its memory bound, and says
# what it skipped.
source "$(dirname "$0")/hostile.bash"

"$HOSTILE_BIN" jit $((4 << 30)) 12 >"$T/jit.out" &
P=$!; BG_PIDS+=("$P")
wait_for 5 grep -q ready "$T/jit.out" || fail "the JIT workload did not start"
[ "$(stat -c %s "/tmp/perf-$P.map")" -eq $((4 << 30)) ] || fail "no 4 GiB perf map"
trap 'rm -f "/tmp/perf-$P.map"; cleanup' EXIT
record_hostile jit 5 -p "$P" -F 999
total=$($FOLDED_PY "$T/jit.folded" total hostile_work)
at_least "$total" 1000 || fail "only $total samples of the JIT workload: $(cat "$T/jit.err")"
grep -q '\[anon\]\|\[jit\]' "$T/jit.folded" || fail "no JIT frames in: $(head -c 300 "$T/jit.folded")"
grep -q "1 perf-map lines too long" "$T/jit.err" ||
	fail "the skipped line is not reported: $(cat "$T/jit.err")"
ok "a 4 GiB perf map without a newline: record ended in $WALL s (-d 5), peak RSS $RSS_KB kB, the line skipped and reported"
