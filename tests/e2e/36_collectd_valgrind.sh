# collectd with ebprof under valgrind: after reads, spool windows and a
# shutdown, no block allocated by the plugin is lost or still held.
# (collectd's own registrations, e.g. the config callback's name, stay
# reachable by design; valgrind's bpf() model also reports syscall
# parameters libbpf legitimately leaves unset. Neither is counted here.)
source "$(dirname "$0")/collectd.bash"
command -v valgrind >/dev/null || fail "valgrind is not installed: run make deps"

D=$(collectd_dir valgrind csv)
bg "$EX/split7030" 30; W=$BG
{
	collectd_conf "$D" e2ehost 1
	cat <<EOF2
$(collectd_csv "$D")
LoadPlugin ebprof
<Plugin ebprof>
  Frequency 499
  PID $W
  SpoolDir "$D/spool"
  SpoolInterval 2
  SpoolRetention 2
</Plugin>
EOF2
} >"$D/collectd.conf"
VG=$D/valgrind.log
collectd_start "$D" valgrind --suppressions="$ROOT/tests/e2e/valgrind.supp" --leak-check=full --show-leak-kinds=all --num-callers=30 --log-file="$VG"
wait_for 40 test -f "$D/spool/latest.svg" || { show_log "$D"; fail "no spool window under valgrind within 40 s"; }
sleep 3
collectd_stop "$COLLECTD"
grep -q "definitely lost: 0 bytes" "$VG" || { grep -A30 "definitely lost in loss" "$VG" >&2; tail -12 "$VG" >&2; fail "valgrind reports definitely lost blocks"; }
grep -q 'indirectly lost: 0 bytes' "$VG" || { tail -40 "$VG" >&2; fail "valgrind reports indirectly lost blocks"; }
# Every loss record whose allocation stack passes through our sources,
# apart from collectd keeping its own copy of what module_register registered.
files=$(cd "$ROOT" && ls bpf/*.c symbolizer/*.c render/*.c plugin/*.c | grep -v '\.bpf\.c$' |
	xargs -n1 basename | sed 's/\./\\./' | paste -sd'|')
ours=$(awk -v files="\\((${files}):[0-9]+\\)" '
	/are (still reachable|definitely lost|indirectly lost|possibly lost) in loss record/ { rec = $0; keep = 0; next }
	rec != "" && $0 ~ files && $0 !~ /module_register/ { keep = 1 }
	rec != "" && /^==[0-9]+== $/ { if (keep) print rec; rec = "" }' "$VG")
[ -z "$ours" ] || { echo "$ours" >&2; fail "blocks allocated by the plugin are left at exit"; }
reads=$(csv_rows "$D/csv/e2ehost/ebprof-health/frequency-samples-*")
ok "valgrind: $reads reads, $(ls "$D/spool" | wc -l) spool files, no lost or held blocks from the plugin ($(grep -o 'still reachable: [0-9,]* bytes' "$VG") are collectd's)"
