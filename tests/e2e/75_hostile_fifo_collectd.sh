# Issue 20, finding 1 inside collectd: the FIFO swapped in after dlclose
# blocked the plugin's read callback, so values stopped, and collectd's
# shutdown hung ("read-function of the `ebprof' plugin took 60.159
# seconds"). The same rounds as 71_hostile_fifo_after_dlclose.sh, under a
# real collectd reading every second: a health value must arrive for
# (nearly) every second of the run, the FIFOs are counted in
# ebprof-health/derive-refused-not_regular, naming never stalls
# (derive-stalls stays 0, and no read takes StallTimeout, 5 s, or more:
# a FIFO opened past the gate would block the worker until then), and
# collectd stops within 3 s of SIGTERM. A read may overrun its 1 s
# interval while it reads the slow library's 256 MiB debug file on a
# loaded machine: that read progresses, and the README's guarantee is
# the stall timeout, not the interval.
source "$(dirname "$0")/collectd.bash"
source "$(dirname "$0")/hostile.bash"

D=$(collectd_dir fifo csv)
{
	collectd_conf "$D" e2ehost 1
	cat <<EOF2
$(collectd_csv "$D")
LoadPlugin ebprof
<Plugin ebprof>
  Frequency 999
  Process "hostile_work"
</Plugin>
EOF2
} >"$D/collectd.conf"
collectd_start "$D"
wait_for 10 grep -q 'ebprof plugin: sampling' "$D/log" || { show_log "$D"; fail "the plugin did not start"; }
start=$SECONDS
fifo_rounds race 10
fifo_rounds slow 6
elapsed=$((SECONDS - start))
sleep 2
H=$D/csv/e2ehost/ebprof-health
rows=$(csv_rows "$H/frequency-samples-*")
at_least "$rows" $((elapsed - 1)) ||
	{ show_log "$D"; fail "only $rows health values in $elapsed s of hostile processes (one a second expected)"; }
fifos=$(tail -n 1 "$(ls -t "$H"/derive-refused-not_regular-* | head -1)" | awk -F, '{ printf "%d", $2 }')
at_least "$fifos" 4 || { show_log "$D"; fail "refused-not_regular is $fifos after 6 slow rounds"; }
t0=$(date +%s.%N)
collectd_stop "$COLLECTD"
took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
awk -v t="$took" 'BEGIN { exit !(t <= 3) }' || fail "collectd took $took s to stop after SIGTERM"
stalls=$(tail -n 1 "$(ls -t "$H"/derive-stalls-* | head -1)" | awk -F, '{ printf "%d", $2 }')
[ "$stalls" = 0 ] || { show_log "$D"; fail "naming stalled $stalls time(s): a file blocked the worker"; }
longest=$(sed -n "s/.*read-function of the .ebprof' plugin took \([0-9.]*\) seconds.*/\1/p" "$D/log" |
	sort -g | tail -n 1)
if [ -n "$longest" ] && awk -v t="$longest" 'BEGIN { exit !(t >= 5) }'; then
	show_log "$D"
	fail "a read of the ebprof plugin took $longest s (StallTimeout is 5 s)"
fi
ok "collectd through 16 hostile processes: $rows values in $elapsed s, $fifos FIFOs refused, stopped $took s after SIGTERM, longest read ${longest:-<1} s"
