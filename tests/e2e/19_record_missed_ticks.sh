# Ticks that fall due and never run the program are counted (bpf/tickgrid.h),
# and the count agrees with an independent one. bpftrace's profile probe, a
# second CPU-clock event per CPU at the same frequency, counts its own
# missed ticks beside the recording: at each of its ticks, the ticks its
# grid says fell due on that CPU since its first, minus those that ran.
# Midway, perf_event_max_sample_rate is lowered below the frequency for
# 2 s, so the kernel throttles both events (each runs a tick or two a
# jiffy, then waits for the next): thousands of ticks are missed, as they
# are when a hypervisor holds a CPU back. ebprof's count must be there
# (at least a fifth of the throttled span's ticks) and within 5% + 20 of
# bpftrace's over the same span; the profile's samples plus the missed
# ticks are the ticks due, within a tick per CPU.
source "$(dirname "$0")/lib.bash"

HZ=999
PERIOD=$((1000000000 / HZ))
RATE_FILE=/proc/sys/kernel/perf_event_max_sample_rate
OLD_RATE=$(cat "$RATE_FILE")
trap 'echo "$OLD_RATE" >"$RATE_FILE"; cleanup' EXIT
now_ns() { python3 -c 'import time; print(time.monotonic_ns())'; }

bg "$EX/split7030" 60

# Every 100 ms: CLOCK_MONOTONIC ns, and the missed ticks summed over CPUs
# (up to 8; a CPU's count is off by a constant when its first tick was late).
bpftrace -e "
profile:hz:$HZ {
	if (@first[cpu] == 0) { @first[cpu] = nsecs; }
	@n[cpu] = @n[cpu] + 1;
	@mc[cpu] = (int64)((nsecs - @first[cpu]) / $PERIOD + 1) - (int64)@n[cpu];
}
interval:ms:100 {
	printf(\"%llu %lld\\n\", nsecs, @mc[0] + @mc[1] + @mc[2] + @mc[3] + @mc[4] + @mc[5] +
	       @mc[6] + @mc[7]);
}
END { clear(@first); clear(@n); clear(@mc); }" >"$T/bt.out" 2>"$T/bt.err" &
BT=$!
BG_PIDS+=("$BT")
wait_for 60 grep -qs '^[0-9]* -\?[0-9]*$' "$T/bt.out" ||
	fail "bpftrace did not start: $(cat "$T/bt.err")"

"$EBPROF" record -F "$HZ" -d 8 --format folded -o "$T/r.folded" 2>"$T/r.err" &
REC=$!
BG_PIDS+=("$REC")
wait_sampling "$T/r.err"
t0=$(now_ns)
sleep 2
echo 250 >"$RATE_FILE"
sleep 2
echo "$OLD_RATE" >"$RATE_FILE"
wait "$REC" || fail "ebprof record exited $?: $(cat "$T/r.err")"
t1=$(now_ns)
sleep 0.3
kill -INT "$BT"
wait "$BT" 2>/dev/null

# bpftrace's count over [t0, t1]: its last line before each.
at() { awk -v t="$1" 'NF == 2 && $1 ~ /^[0-9]+$/ && $1 <= t { v = $2 } END { print v + 0 }' "$T/bt.out"; }
bt=$(( $(at "$t1") - $(at "$t0") ))
missed=$(sed -n 's/^ebprof: ticks missed: \([0-9]*\) .*/\1/p' "$T/r.err")
[ -n "$missed" ] || fail "no ticks missed line: $(cat "$T/r.err")"
grep '^ebprof: ticks missed' "$T/r.err"
echo "bpftrace over the same span: $bt ticks missed"
cpus=$(nproc)
at_least "$missed" $((2 * HZ * cpus / 5)) ||
	fail "only $missed ticks missed counted, with both events throttled 2 s on $cpus CPUs"
within "$missed" "$bt" $((bt / 20 + 20)) ||
	fail "ebprof counted $missed ticks missed, bpftrace $bt over the same span (5% + 20)"

# What ran and what was missed are every tick due (the recording's length
# from its summary), within a tick per CPU and the summary's rounding.
read -r secs samples < <(sed -n 's/^ebprof: \([0-9.]*\) s at .* CPUs: \([0-9]*\) samples.*/\1 \2/p' "$T/r.err")
due=$(awk -v s="$secs" -v hz="$HZ" -v n="$cpus" 'BEGIN { printf "%d", s * hz * n }')
within $((samples + missed)) "$due" $((HZ * cpus / 10 + cpus)) ||
	fail "$samples samples + $missed missed, not the $due ticks due in $secs s on $cpus CPUs"
ok "ticks missed: ebprof $missed, bpftrace $bt over the same span; $samples ran + $missed missed of $due due"
