# The collectd plugin names short-lived processes too: between two reads
# (1 s apart here, 10 s by default) 30 ms processes start and exit, and the
# sampler's watch thread snapshots each at its first sample. The folded
# files of the spool hold the children's samples, >= 95% named burn_NNN
# (or, before main, the dynamic loader's start-up: see 41_names_shortlived).
source "$(dirname "$0")/collectd.bash"

D=$(collectd_dir short)
{
	collectd_conf "$D" e2ehost 1
	cat <<EOF
LoadPlugin ebprof
<Plugin ebprof>
  Frequency 99
  Process "shortlived"
  SpoolDir "$D/spool"
  SpoolInterval 1
  SpoolFormat folded
  SpoolRetention 100000
</Plugin>
EOF
} >"$D/collectd.conf"
collectd_start "$D"
wait_for 10 grep -q 'ebprof plugin: sampling at' "$D/log" || { show_log "$D"; fail "no start-up line"; }
"$EX/shortlived" 200 30 || fail "the shortlived loop failed"
collectd_stop "$COLLECTD"

cat "$D"/spool/ebprof-*.folded >"$T/all.folded" 2>/dev/null || { show_log "$D"; fail "no folded files in the spool"; }
total=$($FOLDED_PY "$T/all.folded" total shortlived)
at_least "$total" 200 || { show_log "$D"; fail "only $total samples of the children in the spool"; }
named=$($FOLDED_PY "$T/all.folded" has shortlived '^(burn_[0-9]{3}|_dl_start)$')
loader=$($FOLDED_PY "$T/all.folded" has shortlived '^_dl_start$')
# And at the end, in do_exit once the process's memory is let go
# (exit_mm): no profiler can read its user stack past the pc there, which
# is named (_exit). Its interrupts-off stretches collect the ticks of a
# loaded VM: 0-2% of the samples, 6.9% in one CI run (the collectd test).
exiting=$($FOLDED_PY "$T/all.folded" exiting shortlived)
pct=$(python3 -c "print('%.2f' % ($named + $exiting))")
at_least "$pct" 95 || {
	grep '^shortlived;' "$T/all.folded" | grep -v 'burn_[0-9]\|;_dl_start;\|^shortlived;_exit;.*;do_exit_\[k\]' | sort -t' ' -k2 -n -r | head
	fail "named in only $pct% of the children's $total samples in the spool (burn_NNN, or the loader's start-up: $loader%, or the exit once the memory is gone: $exiting%; want >= 95%)"
}
ok "collectd plugin: named in $pct% of $total samples of 200 short-lived processes (the loader's start-up $loader%, the exit once the memory is gone $exiting%)"
