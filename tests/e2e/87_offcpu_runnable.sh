# Runnable but waiting: three spinning threads pinned to one CPU, for 3 s
# each, wait for the CPU about two thirds of the time. The scheduler's own
# account of that wait (run_delay, /proc/thread-self/schedstat, read by
# each thread as it ends) must match the [off-cpu: runnable] time on the
# spinners' stacks within 5%.
source "$(dirname "$0")/lib.bash"
source "$ROOT/tests/e2e/offcpu.bash"

[ "$(nproc)" -ge 1 ] || fail "no CPU"
offcpu_record "$T/r" "--mode offcpu --offcpu-period-us 100" spin 3 3
delay_us=$(( $(offcpu_value "$T/r.out" run_delay_ns) / 1000 ))
runnable=$(offcpu_us "$T/r.folded" ';offcpu_spinner;.*\[off-cpu: runnable\]$')
other=$(offcpu_us "$T/r.folded" ';offcpu_spinner;.*\[off-cpu: (sleep|io)\]$')
echo "runnable: $runnable us on the spinners' stacks; schedstat run_delay $delay_us us; $other us asleep"
at_least "$delay_us" 3000000 || fail "the spinners waited only $delay_us us: not oversubscribed"
within "$runnable" "$delay_us" "$((delay_us / 20))" ||
	fail "runnable time $runnable us is not the scheduler's $delay_us us (5%)"
[ "$other" -le $((delay_us / 20)) ] || fail "$other us of spinning counted as asleep (5% allowed: a thread may sleep starting and reading its schedstat)"
ok "3 spinners on one CPU: $runnable us runnable, schedstat says $delay_us us"
