# The plugin's ticks-missed counter (bpf/tickgrid.h) in a real collectd,
# system-wide at 999 Hz (one CPU-clock event per CPU): each interval, the
# program's runs a second (frequency-events) plus the ticks missed a second
# (the rate of derive-ticks-missed) are 999 on each CPU, within 3%, both
# when nothing is missed and while perf_event_max_sample_rate is lowered
# below the frequency for 3 s and the kernel throttles the events (then
# thousands of ticks are missed, and must be counted).
source "$(dirname "$0")/collectd.bash"

HZ=999
RATE_FILE=/proc/sys/kernel/perf_event_max_sample_rate
OLD_RATE=$(cat "$RATE_FILE")
trap 'echo "$OLD_RATE" >"$RATE_FILE"; cleanup' EXIT

D=$(collectd_dir ticks csv)
bg "$EX/split7030" 60
{
	collectd_conf "$D" e2ehost 1
	collectd_csv "$D"
	printf 'LoadPlugin ebprof\n<Plugin ebprof>\n  Frequency %s\n</Plugin>\n' "$HZ"
} >"$D/collectd.conf"
collectd_start "$D"
H=$D/csv/e2ehost/ebprof-health
wait_for 60 has_rows 3 "$H/derive-ticks-missed-*" || { show_log "$D"; fail "no ticks-missed values"; }
echo 250 >"$RATE_FILE"
sleep 3
echo "$OLD_RATE" >"$RATE_FILE"
sleep 3
collectd_stop "$COLLECTD"

# Per interval (joined on the time column): runs/s + missed/s.
cat "$H"/frequency-events-* >"$T/events"
cat "$H"/derive-ticks-missed-* >"$T/missed"
awk -F, -v due=$((HZ * $(nproc))) '
	FNR == NR { if ($1 ~ /^[0-9]/) ev[int($1 + 0.5)] = $2; next }
	$1 !~ /^[0-9]/ { next }
	{ t = int($1 + 0.5) }
	seen && (t in ev) && t > pt {
		rate = ($2 - pv) / ($1 - ptf); sum = ev[t] + rate; n++
		printf "%s runs/s + %.0f missed/s = %.0f\n", ev[t], rate, sum
		if (sum < due * 0.97 || sum > due * 1.03) bad++
		if (rate > most) most = rate
	}
	{ seen = 1; pt = t; ptf = $1; pv = $2; total = $2 }
	END { printf "intervals %d, off %d, missed %d, most %.0f/s\n", n, bad + 0, total, most }
' "$T/events" "$T/missed" >"$T/sums"
cat "$T/sums"
read -r _ n _ bad _ missed _ most _ < <(tail -1 "$T/sums" | tr -d ',')
at_least "$n" 6 || { show_log "$D"; fail "only $n intervals with both metrics"; }
[ "$bad" -eq 0 ] || fail "$bad of $n intervals: runs + missed ticks are not $HZ a second on each CPU (3%)"
at_least "$missed" $((HZ * $(nproc) * 3 / 5)) ||
	fail "only $missed ticks missed counted, with the events throttled 3 s on $(nproc) CPUs"
ok "each of $n intervals: program runs + missed ticks = $HZ/s on each of $(nproc) CPUs; $missed missed (up to $most while throttled)"
