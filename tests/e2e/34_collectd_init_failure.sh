# Init failures unload ebprof only: collectd keeps running its other
# plugins (the load plugin's CSV keeps growing) and the log says what to fix.
# 1. A host that cannot run the sampler: collectd started without CAP_BPF,
#    CAP_PERFMON and CAP_SYS_ADMIN (dropped from the bounding set, so even
#    root lacks them), which makes loading the BPF program fail for real.
# 2. A SpoolInterval that is not a multiple of the read interval, which
#    init checks once collectd knows the interval.
source "$(dirname "$0")/collectd.bash"

# run NAME 'EBPROF LINES' WRAPPER... ; then NEEDLE... are checked by caller.
run() {
	local name=$1 lines=$2
	shift 2
	D=$(collectd_dir "$name" csv load)
	{
		collectd_conf "$D" e2ehost 1
		printf 'LoadPlugin load\nLoadPlugin csv\n<Plugin csv>\n  DataDir "%s/csv"\n</Plugin>\n' "$D"
		printf 'LoadPlugin ebprof\n<Plugin ebprof>\n%s\n</Plugin>\n' "$lines"
	} >"$D/collectd.conf"
	collectd_start "$D" "$@"
	L="$D/csv/e2ehost/load/load-*"
	wait_for 15 has_rows 2 "$L" || { show_log "$D"; fail "$name: the load plugin wrote nothing"; }
	before=$(csv_rows "$L")
	sleep 2.5
	after=$(csv_rows "$L")
	kill -0 "$COLLECTD" 2>/dev/null || { show_log "$D"; fail "$name: collectd died"; }
	[ "$after" -gt "$before" ] || fail "$name: the load CSV stopped growing ($before -> $after rows)"
	[ ! -e "$D/csv/e2ehost/ebprof-self" ] || fail "$name: ebprof values were written after a failed init"
	grep -q "Initialization of plugin \`ebprof' failed" "$D/log" ||
		{ show_log "$D"; fail "$name: collectd did not report the failed init"; }
	collectd_stop "$COLLECTD"
}

run nocaps '  Frequency 99' setpriv --bounding-set=-bpf,-perfmon,-sys_admin
grep -q 'ebprof plugin: cannot start sampling: .*CAP_BPF' "$D/log" ||
	{ show_log "$D"; fail "nocaps: the log does not say which capabilities are missing"; }
ok "nocaps: load CSV grew $before -> $after rows; $(grep 'ebprof plugin:' "$D/log" | head -1)"

run interval '  SpoolDir "'"$T"'/spool"
  SpoolInterval 2.5'
grep -q 'ebprof plugin: SpoolInterval 2.5 is not a multiple of the read interval 1 s' "$D/log" ||
	{ show_log "$D"; fail "interval: the log does not name SpoolInterval and both values"; }
ok "interval: load CSV grew $before -> $after rows; $(grep 'ebprof plugin:' "$D/log" | head -1)"
