# Issue 12: building a process's unwind tables cannot hang the profiler
# either. A real hole, and one only the table builder falls in: a library
# built without unwind tables (-fno-asynchronous-unwind-tables), with its
# symbols, whose separate debug file (.gnu_debuglink, beside it) is served
# by a FUSE server that stops answering (fuse_stall.py). The symbolizer
# names the library from its own .symtab and never opens the debug file;
# the table builder, finding no .eh_frame, looks there for .debug_frame,
# and that open blocks in the kernel where no signal short of SIGKILL
# frees it (so would a file on a FUSE server behind an overlay or a loop
# device, or on a hung disk: none is on a mount the unwinder skips).
# Table builds run on the capture's worker under its watchdog, so:
# 1. record -d 4 --unwind dwarf ends on time and counts the stalled build
#    (before, the sampler's watch thread opened the file and hung, and
#    record with it, past its kill timeout);
# 2. record stops within 3 s of SIGINT in the middle of it;
# 3. collectd (Unwind dwarf) keeps dispatching values every second, counts
#    the stalled build in ebprof-health/derive-unwind-build_stalled, and
#    stops within 3 s of SIGTERM.
source "$(dirname "$0")/collectd.bash"
source "$(dirname "$0")/hostile.bash"
[ -c /dev/fuse ] || fail "no /dev/fuse: the kernel needs CONFIG_FUSE_FS"

FUSE=$T/fuse
LIB=$T/lib/libnocfi.so
mkdir -p "$FUSE" "$T/lib"
cc -O1 -g0 -fno-omit-frame-pointer -fno-inline -fno-asynchronous-unwind-tables -fno-unwind-tables \
	-fPIC -shared -DFIXTURE_SHARED -o "$LIB" "$ROOT/tests/fixtures/hostile_lib.c" ||
	fail "cannot build the library without unwind tables"
readelf --debug-dump=frames "$LIB" | grep -q FDE && fail "$LIB has unwind tables"
nm "$LIB" | grep -qE " t now$" || fail "$LIB has no .symtab"
: >"$T/lib/libnocfi.debug"
objcopy --add-gnu-debuglink="$T/lib/libnocfi.debug" "$LIB" || fail "objcopy --add-gnu-debuglink failed"
python3 "$ROOT/tests/e2e/fuse_stall.py" "$FUSE" "$HOSTILE_LIB" "$T/arm" >"$T/fuse.out" 2>&1 &
F=$!
# The server's end frees whatever still waits on it (ENOTCONN), then
# unmount. Stopped workloads take no SIGTERM: they get SIGKILL.
trap 'kill -9 ${W_one:-} ${W_two:-} ${W_three:-} 2>/dev/null; kill -9 "$F" 2>/dev/null
	wait "$F" 2>/dev/null; umount -l "$FUSE" 2>/dev/null; cleanup' EXIT
wait_for 5 grep -q mounted "$T/fuse.out" || fail "the FUSE server did not start: $(cat "$T/fuse.out")"
ln -sf "$FUSE/libhostile_lib.so" "$T/lib/libnocfi.debug"

# workload NAME: a process running in the library; its PID in W_NAME.
# All wait stopped for their turn.
workload() {
	local w
	"$HOSTILE_BIN" burn "$LIB" 90 >"$T/$1.out" 2>&1 &
	w=$!; BG_PIDS+=("$w")
	wait_for 5 grep -q ready "$T/$1.out" || fail "$1: the workload did not start: $(cat "$T/$1.out")"
	kill -STOP "$w"
	eval "W_$1=$w"
}
workload one
workload two
workload three
touch "$T/arm" # the server answers nothing from now on
W=$W_one
kill -CONT "$W"

# unwind_stalled NAME: the count of table builds given up, from record's summary.
unwind_stalled() {
	sed -n 's/.*unwind table builds: \([0-9]*\) stalled.*/\1/p' "$T/$1.err" | head -1 | grep . ||
		echo 0
}

# 1. A bounded recording ends on time; the stalled build is counted.
record_hostile stall 4 -p "$W" -F 999 --unwind dwarf --stall-timeout 1
n=$(unwind_stalled stall)
at_least "$n" 1 || fail "the stalled table build is not reported: $(cat "$T/stall.err")"
samples=$(awk '{ n += $NF } END { print n + 0 }' "$T/stall.folded")
at_least "$samples" 500 || fail "only $samples samples in 4 s at 999 Hz: $(cat "$T/stall.err")"
ok "record -d 4 --unwind dwarf through a debug file on a stalled FUSE server: ended in $WALL s, $n table build(s) stalled, $samples samples kept"

# 2. Ctrl-C in the middle of it.
kill -STOP "$W"
W=$W_two
kill -CONT "$W"
"$EBPROF" record -p "$W" -F 999 -d 60 --unwind dwarf --stall-timeout 1 --format folded \
	-o "$T/int.folded" 2>"$T/int.err" &
R=$!
sleep 3
t0=$(date +%s.%N)
kill -INT "$R"
for _ in $(seq 100); do kill -0 "$R" 2>/dev/null || break; sleep 0.1; done
kill -0 "$R" 2>/dev/null && { kill -9 "$R"; fail "record ignored SIGINT during a stalled table build"; }
wait "$R" || fail "record exited $? after SIGINT: $(cat "$T/int.err")"
took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
awk -v t="$took" 'BEGIN { exit !(t <= 3) }' || fail "record took $took s to stop after SIGINT: $(cat "$T/int.err")"
[ -e "$T/int.folded" ] && grep -q "ebprof: wrote" "$T/int.err" ||
	fail "record wrote nothing after SIGINT: $(cat "$T/int.err")"
ok "record stopped $took s after SIGINT, with its output written"

# 3. collectd.
kill -STOP "$W"
W=$W_three
kill -CONT "$W"
D=$(collectd_dir stall csv)
{
	collectd_conf "$D" e2ehost 1
	cat <<EOF2
$(collectd_csv "$D")
LoadPlugin ebprof
<Plugin ebprof>
  Frequency 999
  PID $W
  Unwind "dwarf"
  StallTimeout 1
</Plugin>
EOF2
} >"$D/collectd.conf"
collectd_start "$D"
wait_for 10 grep -q 'ebprof plugin: sampling' "$D/log" || { show_log "$D"; fail "the plugin did not start"; }
sleep 8
H=$D/csv/e2ehost/ebprof-health
rows=$(csv_rows "$H/frequency-samples-*")
at_least "$rows" 5 || { show_log "$D"; fail "only $rows health values in 8 s of a stalled table build"; }
stalled=$(tail -n 1 "$(ls -t "$H"/derive-unwind-build_stalled-* | head -1)" | awk -F, '{ printf "%d", $2 }')
at_least "$stalled" 1 || { show_log "$D"; fail "ebprof-health/derive-unwind-build_stalled is $stalled"; }
t0=$(date +%s.%N)
collectd_stop "$COLLECTD"
took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
awk -v t="$took" 'BEGIN { exit !(t <= 3) }' || fail "collectd took $took s to stop after SIGTERM"
ok "collectd through a stalled table build: $rows values in 8 s, $stalled build(s) stalled, stopped $took s after SIGTERM"
