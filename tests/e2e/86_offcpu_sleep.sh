# Off-CPU time of a known sleep: one thread sleeps 10 ms 200 times in
# offcpu_sleep_known(); its stack must carry ~2 s (within 5% of the wall
# time the workload measured itself) of [off-cpu: sleep], under the
# function and the kernel's nanosleep path. With a minimum wait above
# 10 ms, the same sleeps are not counted at all, and the idle task never
# appears.
source "$(dirname "$0")/lib.bash"
source "$ROOT/tests/e2e/offcpu.bash"

offcpu_record "$T/s" "--mode offcpu --offcpu-period-us 100" sleep 200 10
wall_us=$(( $(offcpu_value "$T/s.out" wall_ns) / 1000 ))
known=$(offcpu_us "$T/s.folded" '^offcpu;.*;offcpu_sleep_known;.*hrtimer_nanosleep_\[k\];\[off-cpu: sleep\]$')
# All of the process: the loop, and the 1 s settling sleep before it.
all=$(offcpu_us "$T/s.folded" '^offcpu;')
echo "sleep: $known us on offcpu_sleep_known's stack, $all us in all, workload wall $wall_us us + 1 s"
within "$known" "$wall_us" "$((wall_us / 20))" || {
	sort -t' ' -k2 -n -r "$T/s.folded" | head -5 >&2
	fail "offcpu_sleep_known's stack shows $known us of sleep, not ~$wall_us us (5%)"
}
[ "$all" -le $((wall_us + 1000000 + wall_us / 20)) ] ||
	fail "the process shows $all us off-CPU in $wall_us us + 1 s"
grep -q '^swapper\|^\[idle\]' "$T/s.folded" && fail "the idle task was counted"
grep -q 'samples of 0.100 ms' "$T/s.err" || fail "no off-CPU line in the summary"
ok "10 ms x 200 sleeps: $known us on their stack (wall $wall_us us)"

# Sleeps of 5 ms under a 50 ms minimum wait: skipped, not counted. A
# loaded machine may stretch a few past 50 ms: at most a fifth may count.
offcpu_record "$T/m" "--mode offcpu --offcpu-period-us 100 --offcpu-min-us 50000" sleep 50 5
loop_us=$(( $(offcpu_value "$T/m.out" wall_ns) / 1000 ))
short=$(sed -n 's/.* \([0-9]*\) waits under --offcpu-min-us.*/\1/p' "$T/m.err")
counted=$(offcpu_us "$T/m.folded" 'offcpu_sleep_known')
[ "${short:-0}" -ge 40 ] || fail "only ${short:-0} of 50 waits of 5 ms were under a 50 ms minimum"
[ "$counted" -le $((loop_us / 5)) ] ||
	fail "$counted us of $loop_us us of 5 ms sleeps counted under a 50 ms minimum"
ok "a 50 ms minimum wait skips 5 ms sleeps ($short waits under it, $counted us counted)"
