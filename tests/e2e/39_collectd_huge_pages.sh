# MallocTrim turns transparent huge pages off for collectd (prctl
# PR_SET_THP_DISABLE), where a kernel set to "always" (Debian's) would back
# its heap arenas' 2 MiB ranges with huge pages however little of each is
# in use. Checked on the daemon as the kernel reports it (THP_enabled in
# /proc/PID/status), with no huge page in its memory after a minute's
# sampling; a program collectd's exec plugin starts has them back (forked:
# the plugin's pthread_atfork handler); MallocTrim false leaves the daemon
# as it was.
source "$(dirname "$0")/collectd.bash"

thp_of() { awk '/^THP_enabled:/{print $2}' "/proc/$1/status"; }
huge_kb() { awk '/^AnonHugePages:/{print $2}' "/proc/$1/smaps_rollup"; }
sampling() { ls -l "/proc/$1/fd" 2>/dev/null | grep -q 'perf_event'; }

[ -n "$(thp_of $$)" ] || fail "this kernel has no THP_enabled in /proc/PID/status"
[ "$(thp_of $$)" = 1 ] || fail "huge pages are off for this shell already: the test cannot tell"
echo "huge pages on this kernel: $(cat /sys/kernel/mm/transparent_hugepage/enabled)"

# The exec plugin runs its program as another user: a directory it can reach.
chmod 711 "$T"
mkdir -m 755 "$T/bin"
cat >"$T/bin/thp.sh" <<'EOF'
#!/bin/sh
# Its own THP_enabled, as a gauge, every second.
while :; do
	v=$(awk '/^THP_enabled:/{print $2}' /proc/$$/status)
	echo "PUTVAL \"$COLLECTD_HOSTNAME/exec-thp/gauge-child\" interval=1 N:$v"
	sleep 1
done
EOF
chmod 755 "$T/bin/thp.sh"
bg "$EX/split7030" 600

# run NAME TRIM: collectd with the plugin (MallocTrim TRIM) and the exec plugin; sets $P and $D.
run() {
	D=$(collectd_dir "$1" csv exec)
	{
		collectd_conf "$D" e2ehost 1
		collectd_csv "$D"
		# ebprof first: collectd shuts plugins down in load order, and
		# 5.12's exec plugin frees its program at shutdown while its
		# reader thread still writes to it when the child exits; loaded
		# after it, ebprof's last window reused that memory and collectd
		# aborted at exit ("free(): invalid next size") in 3-5 of 10 runs
		# on Debian's 6.1 under qemu; loaded first, 0 of 10.
		printf 'LoadPlugin ebprof\n<Plugin ebprof>\n  Frequency 999\n  MallocTrim %s\n' "$2"
		printf '  SpoolDir "%s/spool"\n</Plugin>\n' "$D"
		printf 'LoadPlugin exec\n<Plugin exec>\n  Exec "nobody" "%s"\n</Plugin>\n' "$T/bin/thp.sh"
	} >"$D/collectd.conf"
	collectd_start "$D"
	P=$COLLECTD
	wait_for 60 sampling "$P" || { show_log "$D"; fail "$1: the plugin did not start sampling"; }
	wait_for 30 has_rows 2 "$D/csv/e2ehost/exec-thp/gauge-child-*" ||
		{ show_log "$D"; fail "$1: no value from the exec plugin's program"; }
}

run trim true
[ "$(thp_of "$P")" = 0 ] || { show_log "$D"; fail "MallocTrim true: collectd's THP_enabled is $(thp_of "$P"), not 0"; }
child=$(csv_mean "$D/csv/e2ehost/exec-thp/gauge-child-*")
within "$child" 1 0 || fail "the exec plugin's program has THP_enabled $child, not 1: huge pages were not given back"
sleep 45
kb=$(huge_kb "$P")
[ "$kb" = 0 ] || fail "MallocTrim true: $kb kB of collectd's memory is in huge pages"
ok "MallocTrim true: collectd's THP_enabled 0, no huge page after ~60 s at 999 Hz, its exec child's THP_enabled 1"
collectd_stop "$P"
[ "$COLLECTD_STATUS" = 0 ] || { show_log "$D"; fail "MallocTrim true: collectd exited $COLLECTD_STATUS"; }

run notrim false
[ "$(thp_of "$P")" = 1 ] || { show_log "$D"; fail "MallocTrim false: collectd's THP_enabled is $(thp_of "$P"), not 1"; }
ok "MallocTrim false: collectd's THP_enabled 1"
collectd_stop "$P"
[ "$COLLECTD_STATUS" = 0 ] || { show_log "$D"; fail "MallocTrim false: collectd exited $COLLECTD_STATUS"; }
ok "collectd exited 0 both times"
