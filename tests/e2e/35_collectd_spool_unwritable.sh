# An unwritable spool does not stop the metrics. collectd runs in a private
# mount namespace where SpoolDir is a read-only tmpfs (root ignores
# permission bits, not a read-only file system). Every window fails, yet:
# - the per-function values keep arriving in the CSV;
# - the log holds one clear line naming the directory and the cause;
# - once the file system is remounted read-write, the spool resumes by
#   itself and the log says so once.
source "$(dirname "$0")/collectd.bash"

D=$(collectd_dir rospool csv)
S=$D/spool
bg "$EX/split7030" 30; W=$BG
{
	collectd_conf "$D" e2ehost 1
	cat <<EOF2
$(collectd_csv "$D")
LoadPlugin ebprof
<Plugin ebprof>
  Frequency 499
  PID $W
  SpoolDir "$S"
  SpoolInterval 1
</Plugin>
EOF2
} >"$D/collectd.conf"
collectd_start "$D" unshare -m --propagation private \
	sh -c 'mount -t tmpfs -o ro,size=4m tmpfs "$1" && shift && exec "$@"' sh "$S"

F="$D/csv/e2ehost/ebprof-self/gauge-burn_seventy-*"
wait_for 20 has_rows 5 "$F" || { show_log "$D"; fail "metrics did not keep flowing with a read-only spool"; }
errors=$(grep -c 'ebprof plugin: spool:' "$D/log")
[ "$errors" -eq 1 ] || { show_log "$D"; fail "$errors spool error lines for 5+ failed windows, want exactly 1"; }
grep -q "ebprof plugin: spool: .*$S.*Read-only file system" "$D/log" ||
	{ show_log "$D"; fail "the spool error does not name $S and the cause"; }
ok "read-only spool: $(csv_rows "$F") rows of burn_seventy, one log line: $(grep 'ebprof plugin: spool:' "$D/log")"

# The problem goes away.
nsenter -t "$COLLECTD" -m mount -o remount,rw "$S" || fail "cannot remount the spool read-write"
wait_for 10 grep -q "ebprof plugin: spool: writing to $S again" "$D/log" ||
	{ show_log "$D"; fail "no recovery line after the remount"; }
wait_for 5 nsenter -t "$COLLECTD" -m test -f "$S/latest.svg" || fail "no latest.svg after recovery"
n=$(nsenter -t "$COLLECTD" -m sh -c "ls '$S'/ebprof-*.svg | wc -l")
collectd_stop "$COLLECTD"
[ "$(grep -c 'ebprof plugin: spool:' "$D/log")" -eq 2 ] || { show_log "$D"; fail "want one error and one recovery line"; }
ok "after remount: spool resumed ($n SVG files), logged once: $(grep 'again' "$D/log")"
