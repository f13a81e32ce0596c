# A process sampled in the middle of its exec is not reported then: its
# memory is being replaced (the maps user space would read are half
# built), and the exec's end would ask for a second report anyway. Here a
# parent with 256 MB of touched memory forks 150 children that exec
# /bin/true at once: each child's exec spends about a millisecond freeing
# its copy of the parent's page tables, in the exec (task_struct's
# in_execve set), so at 999 Hz on every CPU some samples land there. The
# summary counts those reports as put off; if the program's test of the
# bit read the wrong byte (or none), the count would be 0.
#
# The children are profiled only from just before their exec: each takes
# the name exec-victim right before its execv, and record takes only that
# name (-c). Where a page fault costs more (a PVM guest: 5 Dec 2026),
# a child's first sample came mostly from its copy-on-write faults right
# after the fork, and it was reported then, before its exec: 0 to 3 put
# off in 150 to 800 execs.
source "$(dirname "$0")/lib.bash"

"$EBPROF" record -F 999 -d 600 -c exec-victim --format folded -o "$T/exec.folded" \
	2>"$T/summary" &
REC=$!; BG_PIDS+=("$REC")
wait_sampling "$T/summary" || fail "record did not start: $(cat "$T/summary")"
python3 - <<'PY' || fail "the fork-and-exec loop failed"
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
big = bytearray(256 << 20)
for i in range(0, len(big), 4096):
    big[i] = 1
for _ in range(150):
    pid = os.fork()
    if pid == 0:
        libc.prctl(15, b"exec-victim", 0, 0, 0)  # PR_SET_NAME
        os.execv("/bin/true", ["true"])
    os.waitpid(pid, 0)
PY
kill -INT "$REC"
wait "$REC" || fail "ebprof record exited $?: $(cat "$T/summary")"
cat "$T/summary"

line=$(grep "ebprof: new processes:" "$T/summary") || fail "no new-process line in the summary"
off=$(sed -n 's/.*, \([0-9]*\) put off to after an exec.*/\1/p' <<<"$line")
[ -n "$off" ] || fail "the summary does not say how many reports were put off: $line"
at_least "$off" 15 || fail "only $off reports put off across 150 execs of 1 ms each (want >= 15): $line"
lost=$(sed -n 's/.*, \([0-9]*\) reports lost.*/\1/p' <<<"$line")
[ "$lost" = 0 ] || fail "reports lost: $line"
ok "reports put off in an exec: $off across 150 execs; $line"
