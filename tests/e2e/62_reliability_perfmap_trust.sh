# A perf map is trusted only when the process's own user (or root) wrote
# it and no one else can rewrite it. A real node process runs as nobody
# with --perf-basic-prof:
# - its own map (nobody's, mode 0644) names hotJitFunction as a JIT frame;
# - the same map replaced by one owned by another uid, or made
#   world-writable, or swapped for a symlink, is refused: none of the
#   planted names reach the graph, and nothing is read through the link;
# - inside collectd the refusal is logged once, however many reads see it.
source "$(dirname "$0")/collectd.bash"
command -v node >/dev/null || fail "node is not installed (make deps installs nodejs)"
command -v setpriv >/dev/null || fail "setpriv (util-linux) is not installed"

cp "$ROOT/examples/jit.js" "$T/jit.js"
chmod 755 "$T"
setpriv --reuid=65534 --regid=65534 --clear-groups -- \
	node --perf-basic-prof "$T/jit.js" 40 >/dev/null 2>&1 &
A=$!; BG_PIDS+=("$A")
MAP=/tmp/perf-$A.map
trap 'rm -f "$MAP" "$T"/*.map; cleanup' EXIT
for _ in $(seq 50); do grep -q hotJitFunction "$MAP" 2>/dev/null && break; sleep 0.2; done
grep -q hotJitFunction "$MAP" || fail "node did not write $MAP"
[ "$(stat -c %u "$MAP")" = 65534 ] || fail "$MAP is not nobody's: $(stat -c '%u %a' "$MAP")"

# record NAME: 2 s of samples of node into $T/NAME.folded.
record() {
	"$EBPROF" record -p "$A" -F 499 -d 2 --format folded -o "$T/$1.folded" 2>"$T/$1.summary" ||
		fail "ebprof record exited $?: $(cat "$T/$1.summary")"
}

# 1. Its own map: used.
record own
pct=$($FOLDED_PY "$T/own.folded" has node 'hotJitFunction.*_\[j\]$')
at_least "$pct" 50 || fail "own map: hotJitFunction_[j] in only $pct% of samples"
ok "own map (uid 65534, $(stat -c %a "$MAP")): hotJitFunction named in $pct% of samples"

# The planted map: the same addresses, other names. node keeps writing to
# the file it opened, which is unlinked now; the name holds the plant.
sed 's/ [^ ]*hotJitFunction.*/ PLANTED_by_another_user/' "$MAP" >"$T/planted.map"
cp "$MAP" "$T/real.map"
plant() { # UID MODE
	rm -f "$MAP"
	cp "$T/planted.map" "$MAP"
	chown "$1:$1" "$MAP"
	chmod "$2" "$MAP"
}

# 2. Another user's map: refused.
plant 4343 644
record other
grep -q PLANTED "$T/other.folded" && fail "a map owned by uid 4343 named frames of nobody's process"
grep -q '_\[j\]' "$T/other.folded" && fail "JIT frames named from a refused map"
ok "map of uid 4343: refused ($(grep -c '\[anon\]\|\[jit\]' "$T/other.folded") stacks show anonymous memory)"

# 3. The process's own uid, but world-writable: refused.
plant 65534 666
record writable
grep -q PLANTED "$T/writable.folded" && fail "a world-writable map was used"
ok "world-writable map: refused"

# 4. A symlink to a file nobody owns: refused, the target is not read.
rm -f "$MAP"
cp "$T/planted.map" "$T/target.map"
chown 65534:65534 "$T/target.map"
ln -s "$T/target.map" "$MAP"
record symlink
grep -q PLANTED "$T/symlink.folded" && fail "a map was read through a symlink"
ok "symlinked map: refused"

# 5. The same planted text, now owned by the process's user, 0644: used.
rm -f "$MAP"
plant 65534 644
record fixed
grep -q 'PLANTED_by_another_user_\[j\]' "$T/fixed.folded" ||
	fail "a map of the process's own user, 0644, was not used"
ok "the process's own map, 0644: used"

# 6. Inside collectd: the planted map again, a warning once, values flow.
plant 4343 644
D=$(collectd_dir perfmap csv)
{
	collectd_conf "$D" e2ehost 1
	cat <<EOF2
$(collectd_csv "$D")
LoadPlugin ebprof
<Plugin ebprof>
  Frequency 499
  PID $A
</Plugin>
EOF2
} >"$D/collectd.conf"
collectd_start "$D"
wait_for 20 has_rows 4 "$D/csv/e2ehost/ebprof-health/frequency-samples-*" ||
	{ show_log "$D"; fail "collectd: no values"; }
collectd_stop "$COLLECTD"
n=$(grep -c 'ebprof plugin: ignored a JIT perf map' "$D/log")
[ "$n" -eq 1 ] || { show_log "$D"; fail "collectd: $n warnings about the planted map, want 1"; }
ls "$D/csv/e2ehost/ebprof-self" | grep -q PLANTED && fail "collectd: a planted name became a metric"
ok "collectd: $(grep 'ignored a JIT perf map' "$D/log" | sed 's/.*ebprof plugin: //')"
