# Faults while profiling, each with the real sampler:
# 1. an ELF file replaced on disk while it is mapped: renamed over (the
#    process keeps the old inode, which /proc/PID/map_files still reaches)
#    and overwritten in place where it is not mapped (the symbol and
#    section tables at its end): the first keeps its names, the second
#    costs at most those names, never a crash;
# 2. thousands of processes: 3000 short-lived workers in 10 s, system-wide,
#    and process records stay within their bound;
# 3. the counts map fills up (collectd, MaxStacks 64, system-wide churn):
#    the loss is counted in ebprof-health, and once the churn stops the
#    next intervals lose nothing and split7030, profiled all along, keeps
#    its values.
source "$(dirname "$0")/collectd.bash"

# --- 1. ELF replaced while mapped ---
LIB=$T/libh.so
cp "$ROOT/build/fixtures/libhostile_names.so" "$LIB"
bg python3 -c '
import ctypes, sys, time
lib = ctypes.CDLL(sys.argv[1])
end = time.time() + 40
while time.time() < end:
    lib.hostile_entry()
' "$LIB"
P=$BG
sleep 1
record() { # NAME
	"$EBPROF" record -p "$P" -F 499 -d 2 --format folded -o "$T/$1.folded" 2>"$T/$1.err" ||
		fail "$1: ebprof record exited $?: $(cat "$T/$1.err")"
	kill -0 "$P" || fail "$1: the workload died"
}
record before
grep -q 'hostile_entry;<script>' "$T/before.folded" || fail "the library's frames are not named to begin with"

# Renamed over by another library: the mapping is "(deleted)" now.
cp "$ROOT/build/fixtures/libsymfix.so" "$T/other.so"
mv "$T/other.so" "$LIB"
record renamed
grep -q 'hostile_entry;<script>' "$T/renamed.folded" ||
	fail "after the file was renamed over, its frames lost their names: $(head -c 300 "$T/renamed.folded")"
ok "ELF renamed over while mapped: still named through map_files"

# Overwritten in place past its loaded segments (symbol tables, section
# headers), which the running process never reads.
cp "$ROOT/build/fixtures/libhostile_names.so" "$T/lib2.so"
kill "$P"; wait "$P" 2>/dev/null
bg python3 -c '
import ctypes, sys, time
lib = ctypes.CDLL(sys.argv[1])
end = time.time() + 40
while time.time() < end:
    lib.hostile_entry()
' "$T/lib2.so"
P=$BG
sleep 1
end=$(python3 - "$T/lib2.so" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
phoff, = struct.unpack_from('<Q', d, 0x20)
phentsize, phnum = struct.unpack_from('<HH', d, 0x36)
end = 0
for i in range(phnum):
    p_type, _, p_offset, _, _, p_filesz = struct.unpack_from('<IIQQQQ', d, phoff + i * phentsize)
    if p_type == 1:
        end = max(end, p_offset + p_filesz)
print((end + 4095) // 4096 * 4096)  # the first byte past the last mapped page
PY
)
size=$(stat -c %s "$T/lib2.so")
[ "$end" -lt "$size" ] || fail "nothing past the mapped pages to overwrite ($end of $size)"
python3 -c '
import os, sys
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2])); f.write(os.urandom(int(sys.argv[3]) - int(sys.argv[2])))
' "$T/lib2.so" "$end" "$size"
record overwritten
lines=$(wc -l <"$T/overwritten.folded")
[ "$lines" -gt 0 ] || fail "no stacks after the overwrite"
ok "ELF overwritten in place (bytes $end-$size): no crash, $lines stacks, $(grep -c 'lib2.so+0x\|hostile_entry' "$T/overwritten.folded") with the library as file+offset or names"
kill "$P"; wait "$P" 2>/dev/null

# --- 2. thousands of processes ---
bg "$EX/shortlived" 3000 2; S=$BG
"$EBPROF" record -F 999 -d 10 --format folded -o "$T/many.folded" 2>"$T/many.err" ||
	fail "system-wide record with thousands of processes exited $?: $(cat "$T/many.err")"
kill -0 "$S" 2>/dev/null && kill "$S"
held=$(sed -n 's/.* \([0-9]*\) process records held.*/\1/p' "$T/many.err")
reported=$(sed -n 's/.*new processes: \([0-9]*\) reported.*/\1/p' "$T/many.err")
[ -n "$held" ] && [ "$held" -le 4096 ] || fail "process records: '$held' (bound 4096): $(cat "$T/many.err")"
at_least "$reported" 1000 || fail "only $reported new processes seen: $(cat "$T/many.err")"
pct=$($FOLDED_PY "$T/many.folded" has shortlived 'burn_[0-9]+$')
ok "thousands of processes: $reported reported, $held records held, burn_NNN in $pct% of shortlived's samples"

# --- 3. the counts map fills up, and recovers ---
D=$(collectd_dir full csv)
{
	collectd_conf "$D" e2ehost 1
	cat <<EOF2
$(collectd_csv "$D")
LoadPlugin ebprof
<Plugin ebprof>
  Frequency 999
  MaxStacks 64
  Process "shortlived"
  Process "split7030"
</Plugin>
EOF2
} >"$D/collectd.conf"
# 200 burn_NNN functions in turn: far more stacks than 64 per interval.
# (Filtered by name: other processes on the host must not fill the map.)
bg "$EX/shortlived" 1000000 5; C1=$BG
bg "$EX/split7030" 60; C2=$BG
collectd_start "$D"
[ -n "${KEEP:-}" ] && trap "cp -r $D $KEEP; cleanup" EXIT
H=$D/csv/e2ehost/ebprof-health
# Samples lost to full maps so far (derive values are counters: the last row).
lost() {
	local f s=0
	for f in "$H"/derive-lost-counts_full-* "$H"/derive-lost-stacks_full-*; do
		[ -f "$f" ] && s=$((s + $(tail -n 1 "$f" | awk -F, '{ printf "%d", $2 }')))
	done
	echo "$s"
}
has_loss() { [ "$(lost)" -gt 0 ]; }
wait_for 20 has_loss ||
	{ show_log "$D"; ls "$H" >&2; fail "MaxStacks 64 under churn: no loss counted"; }
sleep 3
kill "$C1" 2>/dev/null
sleep 4 # the intervals still holding the churn's samples
mark=$(csv_rows "$H/derive-lost-counts_full-*")
sleep 5
kill -0 "$COLLECTD" || { show_log "$D"; fail "collectd died with full maps"; }
collectd_stop "$COLLECTD"
# derive values are counters: recovery means they stopped growing.
python3 - "$H" "$mark" <<'PY' || { show_log "$D"; fail "the loss did not stop after the churn"; }
import glob, sys
h, mark = sys.argv[1], int(sys.argv[2])
for kind in ('counts_full', 'stacks_full'):
    rows = []
    for f in sorted(glob.glob('%s/derive-lost-%s-*' % (h, kind))):
        rows += [l.strip().split(',') for l in open(f) if l[0].isdigit()]
    vals = [float(r[1]) for r in rows]
    if not vals:
        continue
    tail = vals[mark:]
    assert len(tail) >= 3, 'only %d intervals after the churn' % len(tail)
    assert tail[-1] == tail[0], '%s still growing after the churn: %r' % (kind, tail)
    print('lost %s: %d in all, none in the last %d intervals' % (kind, vals[-1], len(tail)))
PY
seventy=$(tail -n 3 "$(ls -t "$D"/csv/e2ehost/ebprof-self/gauge-burn_seventy-* | head -1)" |
	awk -F, '{ s += $2 } END { printf "%.1f", s / NR }')
at_least "$seventy" 30 || fail "split7030 not profiled after recovery (burn_seventy $seventy% of a CPU)"
ok "full maps: loss counted ($(lost) in all), none once the churn stopped, samples still flowing"
