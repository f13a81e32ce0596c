# Off-CPU time of a known sleep: one thread sleeps 10 ms 200 times in
# offcpu_sleep_known(); its stack must carry ~2 s (within 5% of the wall
# time the workload measured itself) of [off-cpu: sleep], under the
# function and the kernel's nanosleep path. So it must with either clock
# the waits can be timed by: the run queue's, read in place (the default
# where the scheduler's clock is stable), and bpf_ktime_get_ns() (the
# fallback), each forced once by EBPROF_OFFCPU_CLOCK and named by the
# summary. With a minimum wait above 10 ms, the same sleeps are not
# counted at all, and the idle task never appears.
source "$(dirname "$0")/lib.bash"
source "$ROOT/tests/e2e/offcpu.bash"

# known_sleep OUT_PREFIX CLOCK-NAME: records the 200 sleeps and checks them.
known_sleep() {
	local out=$1 clock=$2 wall_us known all
	offcpu_record "$out" "--mode offcpu --offcpu-period-us 100" sleep 200 10
	wall_us=$(( $(offcpu_value "$out.out" wall_ns) / 1000 ))
	known=$(offcpu_us "$out.folded" '^offcpu;.*;offcpu_sleep_known;.*hrtimer_nanosleep_\[k\];\[off-cpu: sleep\]$')
	# All of the process: the loop, and the 1 s settling sleep before it.
	all=$(offcpu_us "$out.folded" '^offcpu;')
	echo "sleep ($clock): $known us on offcpu_sleep_known's stack, $all us in all, workload wall $wall_us us + 1 s"
	within "$known" "$wall_us" "$((wall_us / 20))" || {
		sort -t' ' -k2 -n -r "$out.folded" | head -5 >&2
		fail "$clock: offcpu_sleep_known's stack shows $known us of sleep, not ~$wall_us us (5%)"
	}
	[ "$all" -le $((wall_us + 1000000 + wall_us / 20)) ] ||
		fail "$clock: the process shows $all us off-CPU in $wall_us us + 1 s"
	grep -q '^swapper\|^\[idle\]' "$out.folded" && fail "$clock: the idle task was counted"
	grep -q 'samples of 0.100 ms' "$out.err" || fail "$clock: no off-CPU line in the summary"
	grep -q "timed by $clock\$" "$out.err" ||
		fail "the summary does not say the waits were timed by $clock: $(grep 'off-CPU:' "$out.err")"
	ok "10 ms x 200 sleeps, timed by $clock: $known us on their stack (wall $wall_us us)"
}

EBPROF_OFFCPU_CLOCK=rq known_sleep "$T/s" "the run queue's clock"
EBPROF_OFFCPU_CLOCK=ktime known_sleep "$T/k" "bpf_ktime_get_ns()"
# Unforced, the clock is the run queue's where the scheduler marks its
# clock stable (a TSC clocksource, or KVM's stable clock), as it is here.
offcpu_record "$T/d" "--mode offcpu" sleep 20 10
grep -q "timed by the run queue's clock\|timed by bpf_ktime_get_ns()" "$T/d.err" ||
	fail "the summary names no clock: $(grep 'off-CPU:' "$T/d.err")"
if [ "$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)" = tsc ]; then
	grep -q "timed by the run queue's clock" "$T/d.err" ||
		fail "a TSC clocksource, and the waits were not timed by the run queue's clock"
fi
ok "unforced: $(sed -n 's/.*; timed by //p' "$T/d.err")"

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
