# The spool under faults, with a real collectd:
# 1. the spool disk fills up (a 256 KiB tmpfs in collectd's own mount
#    namespace, filled to its last pages): values keep arriving in the CSV,
#    one log line names the cause, no temporary file is left; once space
#    returns the spool resumes by itself and says so once;
# 2. collectd stopped with SIGTERM at random moments while it writes a
#    graph every second: no temporary file is left and every published
#    file is whole (SVG parses, folded lines complete);
# 3. collectd killed with SIGKILL (a crash) at random moments: published
#    files are still whole (rename is atomic), and the next start removes
#    the temporary file the dead daemon left.
source "$(dirname "$0")/collectd.bash"
command -v xmllint >/dev/null || fail "xmllint is not installed (make deps)"

spool_conf() { # DIR [EXTRA LINES]
	collectd_conf "$1" e2ehost 1
	cat <<EOF2
$(collectd_csv "$1")
LoadPlugin ebprof
<Plugin ebprof>
  Frequency 999
  SpoolDir "$1/spool"
  SpoolInterval 1
  SpoolFormat svg folded
  SpoolRetention 3
$2
</Plugin>
EOF2
}

# whole SPOOL: every published file complete, no temporary file.
whole() {
	local s=$1 f
	ls -A "$s" | grep -q '\.tmp$' && fail "temporary files left in the spool: $(ls -A "$s" | grep '\.tmp$')"
	for f in "$s"/ebprof-*.svg; do
		[ -e "$f" ] || continue
		xmllint --noout "$f" 2>/dev/null || fail "a half-written SVG was published: $f"
	done
	for f in "$s"/ebprof-*.folded; do
		[ -e "$f" ] || continue
		[ -z "$(tail -c1 "$f")" ] || fail "a folded file without its final newline: $f"
		grep -qvE ' [0-9]+$' "$f" && fail "a folded line without its count: $f"
	done
	return 0
}

# --- 1. the spool disk fills up ---
bg "$EX/split7030" 120; W=$BG
D=$(collectd_dir full csv)
S=$D/spool
spool_conf "$D" "  PID $W" >"$D/collectd.conf"
collectd_start "$D" unshare -m --propagation private sh -c \
	'mount -t tmpfs -o size=256k tmpfs "$1" &&
	 dd if=/dev/zero of="$1/filler" bs=4k count=63 2>/dev/null; shift; exec "$@"' sh "$S"
F="$D/csv/e2ehost/ebprof-self/gauge-burn_seventy-*"
wait_for 20 has_rows 5 "$F" || { show_log "$D"; fail "metrics did not keep flowing with a full spool disk"; }
n=$(grep -c 'ebprof plugin: spool:' "$D/log")
[ "$n" -eq 1 ] || { show_log "$D"; fail "$n spool error lines, want 1"; }
grep -q "ebprof plugin: spool: .*No space left on device" "$D/log" ||
	{ show_log "$D"; fail "the spool error does not name the cause"; }
tmp=$(nsenter -t "$COLLECTD" -m ls -A "$S" | grep -c '\.tmp$')
[ "$tmp" -eq 0 ] || fail "$tmp temporary files left on the full disk"
ok "full spool disk: metrics flow ($(csv_rows "$F") rows), one line: $(grep 'ebprof plugin: spool:' "$D/log")"
nsenter -t "$COLLECTD" -m rm -f "$S/filler"
wait_for 10 grep -q "ebprof plugin: spool: writing to $S again" "$D/log" ||
	{ show_log "$D"; fail "no recovery line once space returned"; }
wait_for 5 nsenter -t "$COLLECTD" -m test -f "$S/latest.svg" || fail "no latest.svg after recovery"
collectd_stop "$COLLECTD"
ok "space returned: the spool resumed, said once"

# --- 2. SIGTERM while writing ---
D=$(collectd_dir term csv)
spool_conf "$D" "" >"$D/collectd.conf"
for i in 1 2 3 4 5 6; do
	collectd_start "$D"
	wait_for 20 test -f "$D/spool/latest.svg" || { show_log "$D"; fail "no spool window"; }
	sleep "$(awk -v s="$RANDOM" 'BEGIN { srand(s); printf "%.3f", 1 + rand() * 2 }')"
	collectd_stop "$COLLECTD"
	whole "$D/spool"
done
ok "SIGTERM at 6 random moments: $(ls "$D/spool" | grep -c '^ebprof-') files, all whole, no temporary file"

# --- 3. SIGKILL while writing, then a restart ---
D=$(collectd_dir kill csv)
spool_conf "$D" "" >"$D/collectd.conf"
left=0
for i in 1 2 3 4 5 6; do
	collectd_start "$D"
	wait_for 20 test -f "$D/spool/latest.svg" || { show_log "$D"; fail "no spool window"; }
	sleep "$(awk -v s="$RANDOM" 'BEGIN { srand(s); printf "%.3f", 1 + rand() * 2 }')"
	kill -KILL "$COLLECTD"; wait "$COLLECTD" 2>/dev/null
	left=$((left + $(ls -A "$D/spool" | grep -c '\.tmp$')))
	for f in "$D"/spool/ebprof-*.svg; do
		xmllint --noout "$f" 2>/dev/null || fail "SIGKILL published a half-written SVG: $f"
	done
done
collectd_start "$D"
wait_for 20 test -f "$D/spool/latest.svg" || { show_log "$D"; fail "no spool window after the crashes"; }
sleep 1.5
collectd_stop "$COLLECTD"
whole "$D/spool"
ok "SIGKILL at 6 random moments: published files whole; $left temporary files left by the kills, removed by the next start"
