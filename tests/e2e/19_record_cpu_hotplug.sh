# A CPU taken offline and brought back (CPU hotplug) is sampled again,
# and its time away is not counted as ticks missed (bpf/cpuevents.h). The
# kernel detaches a CPU's perf events when it goes offline and never
# attaches them again: before, the CPU had no sample for the rest of the
# run, and its time away and after was counted as missed ticks (727 of
# 1,978 due in a 10 s record with the CPU away 3 s). `ebprof record` and
# collectd with the plugin run side by side, system-wide, while the last
# CPU goes offline for 3 s and comes back, and then for 0.2 s, within one
# drain (the program standing still there tells, and the event's enabled
# time then); after each, a workload pinned to that CPU must be sampled,
# by both, at the frequency.
source "$(dirname "$0")/collectd.bash"

HZ=199
N=$(nproc)
CPU=$((N - 1))
ONLINE=/sys/devices/system/cpu/cpu$CPU/online
[ "$N" -ge 2 ] || fail "CPU hotplug needs two CPUs; this machine has $N"
[ -w "$ONLINE" ] || fail "CPU $CPU cannot be taken offline here ($ONLINE is not writable)"
trap 'echo 1 >"$ONLINE" 2>/dev/null; cleanup' EXIT

D=$(collectd_dir hotplug csv)
{
	collectd_conf "$D" e2ehost 1
	collectd_csv "$D"
	printf 'LoadPlugin ebprof\n<Plugin ebprof>\n  Frequency %s\n</Plugin>\n' "$HZ"
} >"$D/collectd.conf"
collectd_start "$D"
H=$D/csv/e2ehost/ebprof-health
"$EBPROF" record -F "$HZ" -d 600 --format folded -o "$T/hotplug.folded" 2>"$T/summary" &
REC=$!; BG_PIDS+=("$REC")
wait_sampling "$T/summary"
wait_for 60 has_rows 2 "$H/derive-cpus-went_offline-*" || { show_log "$D"; fail "no cpus-went_offline values"; }

# A copy, so that its samples are told from any other split7030's (the 6.1 smoke suite runs one).
cp "$EX/split7030" "$T/pinned7030"
# away AWAY WORK: offline for AWAY seconds, back, and a workload pinned
# there for WORK seconds; its CPU seconds (bash's time: user + system, the
# CPU it had, less on a machine busy with other work) are added to $T/cpu.
TIMEFORMAT='%3U %3S'
away() {
	echo 0 >"$ONLINE" || fail "could not take CPU $CPU offline"
	sleep "$1"
	echo 1 >"$ONLINE" || fail "could not bring CPU $CPU back online"
	# Both drain every second: the CPU has its event again at the first
	# drain after it came back, or (back within a drain) at the second.
	sleep 3
	{ time taskset -c "$CPU" "$T/pinned7030" "$2" >/dev/null; } 2>>"$T/cpu" ||
		fail "split7030 pinned to CPU $CPU failed"
}
away 3 3
away 0.2 2
sleep 1
kill -INT "$REC"
wait "$REC" || fail "ebprof record exited $?: $(cat "$T/summary")"
collectd_stop "$COLLECTD"
cat "$T/summary"

# record: the hotplug said, the pinned workload sampled, no ticks missed for the time away.
grep -q "CPU hotplug: 2 CPUs went offline, 2 came online" "$T/summary" ||
	fail "the summary does not report the CPU's two hotplugs"
summary_accounts "$T/summary" "hotplug"
got=$($FOLDED_PY "$T/hotplug.folded" total pinned7030)
cpu=$(awk '{ s += $1 + $2 } END { printf "%.2f", s }' "$T/cpu")
want=$(awk -v c="$cpu" -v hz="$HZ" 'BEGIN { printf "%d", c * hz }')
at_least "$got" $((want * 8 / 10)) ||
	fail "split7030 on CPU $CPU after it came back: $got samples (want ~$want: $cpu s of CPU at $HZ Hz)"
missed=$(sed -n 's/^ebprof: ticks missed: \([0-9]*\) .*/\1/p' "$T/summary")
samples=$(summary_field "$T/summary" samples)
# The CPU's 3.2 s away are ~640 ticks; each hotplug holds the CPUs a few.
at_least $((samples / 100 + 20)) "$missed" ||
	fail "$missed ticks missed of $samples samples: the CPU's time away was counted"
ok "record: $got samples of the workloads pinned to CPU $CPU after it came back (their CPU: $cpu s, $want ticks); $missed ticks missed ($ACCOUNTS)"

# collectd: the counters, the log, and the program's runs at the frequency on every CPU again.
last() { tail -1 "$(ls -t $1 | head -1)" | cut -d, -f2 | cut -d. -f1; }
[ "$(last "$H/derive-cpus-went_offline-*")" = 2 ] && [ "$(last "$H/derive-cpus-came_online-*")" = 2 ] ||
	fail "the plugin's counters: went_offline $(last "$H/derive-cpus-went_offline-*"), came_online $(last "$H/derive-cpus-came_online-*") (want 2 and 2)"
said() { sed -n "s/.*CPU hotplug: \([0-9]*\) CPUs $1.*/\1/p" "$D/log" | awk '{ s += $1 } END { print s + 0 }'; }
[ "$(said "went offline")" -eq 2 ] && [ "$(said "came online")" -eq 2 ] ||
	{ show_log "$D"; fail "collectd's log: $(said "went offline") CPUs went offline, $(said "came online") came online (want 2 and 2)"; }
# The last three intervals (the pinned workload's): runs a second on all N CPUs.
runs=$(cat "$H"/frequency-events-* | awk -F, '$1 ~ /^[0-9]/ { print $2 }' | tail -4 | head -3 |
	awk '{ s += $1; n++ } END { printf "%.0f", s / n }')
within "$runs" $((HZ * N)) $((HZ * N * 5 / 100)) ||
	fail "the plugin's program ran $runs times a second after the CPU came back (want $((HZ * N)): $HZ on each of $N CPUs)"
pmissed=$(last "$H/derive-ticks-missed-*")
at_least 60 "$pmissed" || fail "the plugin counted $pmissed ticks missed: the CPU's time away was counted"
ok "collectd: twice, 1 CPU went offline and came online; $runs program runs a second after, on $N CPUs; $pmissed ticks missed"
