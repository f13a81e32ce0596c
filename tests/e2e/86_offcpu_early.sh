# Off-CPU stacks of a process whose unwind tables are not loaded yet. The
# workload, built without frame pointers (offcpu-nofp), sleeps 5 ms 40
# times from its first instruction on (offcpu early: no settling sleep),
# so its first waits leave the CPU before its tables are in the kernel.
# Their user stacks are copied at the switch-out and unwound in user
# space, as on-CPU samples are; walked by frame pointer instead, those
# waits lose every caller of libc's nanosleep. At least 97% of the known
# sleep's off-CPU time must lie under the whole chain from _start down to
# offcpu_sleep_known.
source "$(dirname "$0")/lib.bash"
OFFCPU=$EX/offcpu-nofp
source "$ROOT/tests/e2e/offcpu.bash"

offcpu_record "$T/e" "--mode offcpu --unwind dwarf --offcpu-period-us 100" early 40 5
sleep_re='^offcpu-nofp;.*\[off-cpu: sleep\]$'
whole=$(offcpu_us "$T/e.folded" '^offcpu-nofp;_start;.*;main;.*offcpu_sleep_known;.*\[off-cpu: sleep\]$')
all=$(offcpu_us "$T/e.folded" "$sleep_re")
grep "truncated" "$T/e.err"
[ "$all" -ge 150000 ] || fail "only $all us of sleep recorded for 40 sleeps of 5 ms"
pct=$(awk -v w="$whole" -v a="$all" 'BEGIN { printf "%.2f", 100 * w / a }')
at_least "$pct" 97 || {
	grep -E "$sleep_re" "$T/e.folded" | sort -t' ' -k2 -n -r | head -5 >&2
	fail "only $pct% of $all us of sleep is under _start;...;offcpu_sleep_known (want >= 97%)"
}
ok "sleeps before their tables: $pct% of $all us whole from _start to offcpu_sleep_known"
