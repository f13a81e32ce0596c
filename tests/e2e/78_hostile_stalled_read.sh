# Issue 20's guarantee: the drain cannot hang the process, even on a
# read nobody foresaw. A real one: the library a process runs in is
# served by a FUSE file system that stops answering (fuse_stall.py, as a
# container's FUSE server that hangs). Opening that file blocks in the
# kernel, and no signal short of SIGKILL frees it. The gate cannot help
# (it is a regular file); what must hold is that the thread that has to
# stop never waits on it:
# 1. record -d 4 ends on time, says the symbolizer stalled, and names
#    the process's samples [stalled] rather than losing them;
# 2. record stops within 3 s of SIGINT in the middle of the stall;
# 3. collectd keeps dispatching values every second, logs the stall,
#    and stops within 3 s of SIGTERM.
source "$(dirname "$0")/collectd.bash"
source "$(dirname "$0")/hostile.bash"
[ -c /dev/fuse ] || fail "no /dev/fuse: the kernel needs CONFIG_FUSE_FS"

MNT=$T/fuse
mkdir -p "$MNT"
python3 "$ROOT/tests/e2e/fuse_stall.py" "$MNT" "$HOSTILE_LIB" "$T/arm" >"$T/fuse.out" 2>&1 &
F=$!
# The server's end frees whatever still waits on it (ENOTCONN), then
# unmount. Stopped workloads take no SIGTERM: they get SIGKILL.
trap 'kill -9 "$F" ${W_one:-} ${W_two:-} ${W_three:-} 2>/dev/null; wait "$F" 2>/dev/null
	umount -l "$MNT" 2>/dev/null; cleanup' EXIT
wait_for 5 grep -q mounted "$T/fuse.out" || fail "the FUSE server did not start: $(cat "$T/fuse.out")"

# workload NAME: a process running in the library over FUSE; its PID in
# W_NAME. All start before the server hangs (a dlopen() would hang too),
# and wait stopped for their turn, so that each has a CPU when it counts.
workload() {
	local w
	"$HOSTILE_BIN" burn "$MNT/libhostile_lib.so" 90 >"$T/$1.out" 2>&1 &
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

# 1. A bounded recording ends on time, with what it could name.
record_hostile stall 4 -p "$W" -F 999 --stall-timeout 1
grep -q "the symbolizer stalled 1 time" "$T/stall.err" ||
	fail "the stall is not reported: $(cat "$T/stall.err")"
pct=$($FOLDED_PY "$T/stall.folded" has hostile_work '^\[stalled\]$')
at_least "$pct" 50 || fail "[stalled] in only $pct% of the samples: $(head -c 300 "$T/stall.folded")"
ok "record -d 4 through a stalled FUSE read: ended in $WALL s, [stalled] in $pct% of the samples"

# 2. Ctrl-C in the middle of it.
kill -STOP "$W"
W=$W_two
kill -CONT "$W"
"$EBPROF" record -p "$W" -F 999 -d 60 --stall-timeout 1 --format folded -o "$T/int.folded" \
	2>"$T/int.err" &
R=$!
sleep 3
t0=$(date +%s.%N)
kill -INT "$R"
for _ in $(seq 100); do kill -0 "$R" 2>/dev/null || break; sleep 0.1; done
kill -0 "$R" 2>/dev/null && { kill -9 "$R"; fail "record ignored SIGINT during a stall"; }
wait "$R" || fail "record exited $? after SIGINT: $(cat "$T/int.err")"
took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
awk -v t="$took" 'BEGIN { exit !(t <= 3) }' || fail "record took $took s to stop after SIGINT"
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
  StallTimeout 1
</Plugin>
EOF2
} >"$D/collectd.conf"
collectd_start "$D"
wait_for 10 grep -q 'ebprof plugin: sampling' "$D/log" || { show_log "$D"; fail "the plugin did not start"; }
sleep 8
H=$D/csv/e2ehost/ebprof-health
rows=$(csv_rows "$H/frequency-samples-*")
at_least "$rows" 5 || { show_log "$D"; fail "only $rows health values in 8 s of a stalled read"; }
grep -q "ebprof plugin: naming samples stalled" "$D/log" || { show_log "$D"; fail "the stall is not logged"; }
stalls=$(tail -n 1 "$(ls -t "$H"/derive-stalls-* | head -1)" | awk -F, '{ printf "%d", $2 }')
at_least "$stalls" 1 || fail "ebprof-health/derive-stalls is $stalls"
t0=$(date +%s.%N)
collectd_stop "$COLLECTD"
took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
awk -v t="$took" 'BEGIN { exit !(t <= 3) }' || fail "collectd took $took s to stop after SIGTERM"
ok "collectd through a stalled FUSE read: $rows values in 8 s, $stalls stall(s), stopped $took s after SIGTERM"
