# Issue 18, part 2, in collectd: `DebuginfodURLs` names a stripped
# library from a debug file fetched in the background. The fixture library
# (tests/fixtures/groupfix.c, four static functions) runs stripped of
# .symtab, with no debug file on this host; Debian's debuginfod on
# loopback serves the unstripped build (it has .symtab and DWARF). The
# spool's first windows may hold grouped "[libgroupfix.so+0x...]" frames;
# once the fetch is counted (debuginfod-fetched 1 in the csv files), later
# windows must name group_forty..group_ten, and nothing may have failed.
source "$(dirname "$0")/collectd.bash"

FIX=$ROOT/build/fixtures
[ -x "$FIX/groupfix-pie" ] && [ -f "$FIX/libgroupfix.so" ] ||
	fail "build/fixtures is not built: run make unit"
command -v debuginfod >/dev/null || fail "debuginfod is not installed: run make deps"
mkdir -p "$T/srv" "$T/stripped" "$T/cache"
cp "$FIX/libgroupfix.so" "$T/srv/libgroupfix.so"
strip --strip-all -o "$T/stripped/libgroupfix.so" "$FIX/libgroupfix.so" || fail "strip failed"
id=$(readelf -n "$T/stripped/libgroupfix.so" | awk '/Build ID/ { print $3 }')
[ -n "$id" ] || fail "the fixture library has no build-id"

PORT=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
debuginfod -F -p "$PORT" -d "$T/index.sqlite" -t 0 -g 0 "$T/srv" >"$T/debuginfod.log" 2>&1 &
BG_PIDS+=("$!")
wait_for 30 /usr/bin/python3 -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=5).read(1)" \
	"http://127.0.0.1:$PORT/buildid/$id/debuginfo" 2>/dev/null ||
	fail "debuginfod does not serve the fixture's debug file: $(tail -3 "$T/debuginfod.log")"

"$FIX/groupfix-pie" "$T/stripped/libgroupfix.so" grp-dbgfod 60 >"$T/w.out" &
BG_PIDS+=("$!")
wait_for 5 grep -q ready "$T/w.out" || fail "the workload did not start"
D=$(collectd_dir dbgfod csv)
{
	collectd_conf "$D" e2ehost 1
	collectd_csv "$D"
	cat <<EOF
LoadPlugin ebprof
<Plugin ebprof>
  Frequency 199
  Process "grp-dbgfod"
  DebuginfodURLs "http://127.0.0.1:$PORT"
  SpoolDir "$D/spool"
  SpoolInterval 1
  SpoolFormat folded
  SpoolRetention 100000
</Plugin>
EOF
} >"$D/collectd.conf"
collectd_start "$D" env DEBUGINFOD_CACHE_PATH="$T/cache"
H=$D/csv/e2ehost/ebprof-health
fetched() {
	cat "$H"/derive-debuginfod-fetched-* 2>/dev/null | awk -F, '$1 ~ /^[0-9]/ { v = $2 } END { exit !(v >= 1) }'
}
wait_for 30 fetched || { show_log "$D"; fail "debuginfod-fetched never reached 1"; }
since=$(date +%s)
sleep 4
collectd_stop "$COLLECTD"
failed=$(cat "$H"/derive-debuginfod-failed-* | awk -F, '$1 ~ /^[0-9]/ { v = $2 } END { print v + 0 }')
[ "$failed" -eq 0 ] || fail "debuginfod-failed is $failed"

# The windows written after the fetch was counted, a second of margin.
late=()
for f in "$D"/spool/ebprof-*.folded; do
	[ "$(stat -c %Y "$f")" -gt $((since + 1)) ] && late+=("$f")
done
[ ${#late[@]} -ge 1 ] || fail "no spool window after the fetch"
cat "${late[@]}" >"$T/late.folded"
named=$(grep -Eo 'group_(forty|thirty|twenty|ten)' "$T/late.folded" | sort -u | wc -l)
echo "windows after the fetch: ${#late[@]}; hot functions named: $named of 4"
echo "top frames: $(grep '^grp-dbgfod;' "$T/late.folded" | sort -t' ' -k2 -nr | head -3 | tr '\n' '|')"
[ "$named" -eq 4 ] || fail "the stripped library is not named from the fetched file in later windows"
ok "collectd: a stripped library named from debuginfod in later windows; debuginfod-fetched 1, failed 0"
