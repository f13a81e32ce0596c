# The collectd plugin names short-lived processes too: between two reads
# (1 s apart here, 10 s by default) 30 ms processes start and exit, and the
# sampler's watch thread snapshots each at its first sample. The folded
# files of the spool hold the children's samples, >= 95% named burn_NNN
# (or, before main, the dynamic loader's start-up, or the exit: see
# shortlived_named in lib.bash).
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
# Named, >= 95%: in burn_NNN, the loader's start-up or the exit (lib.bash).
shortlived_named "$T/all.folded" "$total" " in the spool"
ok "collectd plugin: named in $NAMED% of $total samples of 200 short-lived processes ($NAMED_PARTS)"
