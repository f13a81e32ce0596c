# Soak: collectd with ebprof at 999 Hz system-wide, spooling SVG and
# folded files, while processes churn (a fork+exec loop of short-lived
# workers and shell pipelines), for SOAK_SECONDS (120 in make check, 600
# in make soak). Every few seconds the daemon's RSS, open fds and the
# entries of each of its BPF maps are sampled. It must show:
# - RSS flat: the lowest RSS of the last quarter within 5% of the lowest
#   of the second quarter (the first quarter is warm-up: caches filling).
#   The floor, not the median: building an unwind table for a big binary
#   (node, libLLVM) takes tens of MB for a moment, and the churn starts
#   such processes again and again, so RSS swings by 20-50 MB between
#   samples while the floor, what is kept, stays put; a leak raises it;
# - fds bounded: the last quarter's maximum at most 3 above the second's
#   (a spool file or an ELF file may be open for a moment at a sample);
# - every BPF map within its max_entries, hash maps not growing either;
# - metrics every interval to the end, and collectd still running;
# - the heap in use (the plugin's own mallinfo2 metric) flat: its floor in
#   the last quarter at most SOAK_HEAP_SLACK_KB (4 MB) above the second's;
# then a shorter run of the same load with the plugin built under ASan
# (LD_PRELOAD into collectd) whose LeakSanitizer report at exit holds no
# leak allocated by our code.
source "$(dirname "$0")/collectd.bash"
SECS=${SOAK_SECONDS:-120}
LSAN_SECS=${SOAK_LSAN_SECONDS:-30}

# churn: a background load of processes that come and go. It includes
# the big binaries this host runs (node, clang's libLLVM, python) from
# the start: RSS grows with the symbol tables of the binaries sampled
# (node's adds ~17 MB, libLLVM's ~5 MB, bounded by the 64-table ELF
# cache), and a soak that met node only in its last quarter would measure
# that, not a leak.
churn() {
	bg "$EX/shortlived" 1000000 20
	bg sh -c 'while :; do for i in 1 2 3 4 5 6 7 8; do echo $i | sort | wc -l >/dev/null; done; sleep 0.05; done'
	bg "$EX/split7030" 100000
	bg sh -c 'while :; do
		command -v node >/dev/null && node -e "let e = Date.now() + 300; while (Date.now() < e);"
		command -v clang >/dev/null && echo "int f(void) { return 1; }" | clang -x c -O2 -c -o /dev/null -
		python3 -c "import time; e = time.time() + 0.3
while time.time() < e: pass"
		sleep 1
	done'
}

conf() { # DIR
	collectd_conf "$1" soakhost 1
	cat <<EOF2
$(collectd_csv "$1")
LoadPlugin ebprof
<Plugin ebprof>
  Frequency 999
  TopFunctions 50
  SpoolDir "$1/spool"
  SpoolInterval 5
  SpoolFormat svg folded
  SpoolRetention 5
</Plugin>
EOF2
}

# sample PID: "seconds rss_kb fds map:entries/max..." on one line.
sample() {
	python3 "$ROOT/tests/bench/soaksample.py" maps "$1" "$SECONDS"
}

# ---- 1. the soak proper ----
D=$(collectd_dir soak csv)
conf "$D" >"$D/collectd.conf"
churn
collectd_start "$D"
wait_for 20 test -f "$D/spool/latest.svg" || { show_log "$D"; fail "no spool window within 20 s"; }
S=$T/samples
: >"$S"
end=$((SECONDS + SECS))
t0=$(date +%s)
while [ "$SECONDS" -lt "$end" ]; do
	kill -0 "$COLLECTD" 2>/dev/null || { show_log "$D"; fail "collectd died during the soak"; }
	sample "$COLLECTD" >>"$S" || fail "cannot sample collectd"
	sleep 2
done
cp "$S" "$ROOT/build/soak-samples.txt" # for the record
rows_before=$(csv_rows "$D/csv/soakhost/ebprof-health/frequency-samples-*")
sleep 3
rows_after=$(csv_rows "$D/csv/soakhost/ebprof-health/frequency-samples-*")
[ "$rows_after" -gt "$rows_before" ] || { show_log "$D"; fail "metrics stopped at the end of the soak"; }
collectd_stop "$COLLECTD"
grep -q 'ebprof plugin: .*\(error\|failed\)' "$D/log" && { show_log "$D"; fail "the plugin logged an error"; }
left=$(ls -a "$D/spool" | grep -c '^\.') # . and .. only: no temporary file left
[ "$left" -eq 2 ] || fail "temporary files left in the spool: $(ls -a "$D/spool")"

flat=1
python3 - "$S" <<'PY' || flat=0
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
n = len(rows)
assert n >= 8, 'only %d samples' % n
q = n // 4
second, last = rows[q:2 * q], rows[n - q:]
rss2 = min(int(r[1]) for r in second)
rss4 = min(int(r[1]) for r in last)
med2 = statistics.median(int(r[1]) for r in second)
med4 = statistics.median(int(r[1]) for r in last)
drift = 100.0 * (rss4 - rss2) / rss2
fd2 = max(int(r[2]) for r in second)
fd4 = max(int(r[2]) for r in last)
print('samples %d; RSS floor %d kB (2nd quarter) -> %d kB (last), %+.2f%%; '
      'median %d -> %d kB; RSS min/max %d/%d kB; fds max %d -> %d' %
      (n, rss2, rss4, drift, med2, med4, min(int(r[1]) for r in rows),
       max(int(r[1]) for r in rows), fd2, fd4))
maps = {}
for r in rows:
    for m in r[3:]:
        name, v = m.split(':')
        cur, cap = map(int, v.split('/'))
        assert cur <= cap, '%s holds %d of %d' % (name, cur, cap)
        maps.setdefault(name, []).append(cur)
for name, v in sorted(maps.items()):
    k = len(v) // 4
    print('  map %-14s entries: max %d, 2nd-quarter max %d, last-quarter max %d' %
          (name, max(v), max(v[k:2 * k] or [0]), max(v[len(v) - k:] or [0])))
assert maps, 'no BPF map of the daemon found'
assert abs(drift) <= 5.0, 'RSS drifted %+.2f%%' % drift
# A sample may catch a spool file or an ELF file open for a moment.
assert fd4 <= fd2 + 3, 'open fds grew: %d -> %d' % (fd2, fd4)
PY

# The heap in use, as the plugin reports it (glibc's mallinfo2, every read):
# its floor in the last quarter within HEAP_SLACK_KB of the second
# quarter's. Unlike RSS it does not move with what the allocator keeps or
# gives back, so a leak shows in it alone; the slack is the caches filling
# after the first quarter (unwind tables of the big binaries the churn
# starts again and again, ~3 MB on this host). See the README's soak section.
HEAP_SLACK_KB=${SOAK_HEAP_SLACK_KB:-4096}
python3 - "$t0" "$(date +%s)" "$HEAP_SLACK_KB" "$D"/csv/soakhost/ebprof-health/bytes-heap_in_use-* <<'PY' ||
import sys
t0, t1, slack = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
pts = []
for path in sys.argv[4:]:
    for line in open(path):
        if line[:1].isdigit():
            t, v = line.split(',')[:2]
            if t0 <= float(t) <= t1:
                pts.append((float(t), float(v) / 1024))
assert len(pts) >= 20, 'only %d heap values in the soak' % len(pts)
q = (t1 - t0) / 4
second = [v for t, v in pts if t0 + q <= t < t0 + 2 * q]
last = [v for t, v in pts if t >= t1 - q]
grow = min(last) - min(second)
print('heap in use: floor %.0f kB (2nd quarter) -> %.0f kB (last), %+.0f kB (slack %d kB); '
      'max %.0f kB' % (min(second), min(last), grow, slack, max(v for t, v in pts)))
assert grow <= slack, 'the heap in use grew by %.0f kB: a leak' % grow
PY
	flat=0
# Both figures are printed above before either fails the test.
[ "$flat" = 1 ] || fail "the soak is not flat"
ok "soak ${SECS}s at 999 Hz system-wide with churn: flat, bounded ($rows_after reads)"

# ---- 2. the same load under LeakSanitizer ----
make -s -C "$ROOT" build/libebprof-san.a >/dev/null || fail "cannot build the ASan objects"
DA=$(collectd_dir lsan csv)
(cd "$ROOT/build/san" && cc -shared -fsanitize=address,undefined -o "$DA/plugins/ebprof.so" \
	plugin/*.o bpf/*.o symbolizer/*.o render/*.o -lbpf -ldw -lelf -lz -llzma -lstdc++ -lpthread) ||
	fail "cannot link the ASan plugin"
conf "$DA" >"$DA/collectd.conf"
LSAN_LOG=$DA/lsan
collectd_start "$DA" env LD_PRELOAD="$(gcc -print-file-name=libasan.so)" \
	ASAN_OPTIONS="detect_leaks=1:log_path=$LSAN_LOG:handle_segv=1" \
	UBSAN_OPTIONS="print_stacktrace=1:log_path=$LSAN_LOG"
wait_for 30 test -f "$DA/spool/latest.svg" || { show_log "$DA"; fail "ASan plugin: no spool window"; }
grep -q libasan "/proc/$COLLECTD/maps" || fail "ASan is not loaded into collectd: the leak check would see nothing"
sleep "$LSAN_SECS"
kill -0 "$COLLECTD" || { show_log "$DA"; cat "$LSAN_LOG".* >&2; fail "collectd with the ASan plugin died"; }
collectd_stop "$COLLECTD"
ours=$(cd "$ROOT" && ls bpf/*.c symbolizer/*.c render/*.c plugin/*.c | grep -v '\.bpf\.c$' |
	xargs -n1 basename | paste -sd'|')
report=$(cat "$LSAN_LOG".* 2>/dev/null)
if echo "$report" | grep -q 'ERROR: AddressSanitizer\|runtime error'; then
	echo "$report" | head -60 >&2
	fail "ASan or UBSan found an error in the plugin during the soak"
fi
leaks=$(echo "$report" | awk -v files="/($ours):[0-9]+" '
	/^(Direct|Indirect) leak/ { rec = $0; keep = 0; next }
	rec != "" && $0 ~ files { keep = 1 }
	rec != "" && /^$/ { if (keep) print rec; rec = "" }
	END { if (rec != "" && keep) print rec }')
[ -z "$leaks" ] || { echo "$report" | head -80 >&2; fail "LeakSanitizer: leaks allocated by the plugin: $leaks"; }
summary=$(echo "$report" | grep -o 'SUMMARY: AddressSanitizer: [0-9]* byte(s) leaked.*' | head -1)
ok "LeakSanitizer, ${LSAN_SECS}s of the same load: no leak from the plugin (${summary:-no leaks at all})"
