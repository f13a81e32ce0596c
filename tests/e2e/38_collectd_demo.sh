# `make demo`, the first of the README's two commands for a new user:
# examples/demo.sh runs a real collectd with the plugin on
# examples/collectd.conf against the 70/30 workload. It must end well,
# leave a well-formed flame graph that names the workload's two functions,
# and print both among the top functions collectd recorded, with a sample
# rate near the configured 499 Hz. Nothing else in make check runs it.
source "$(dirname "$0")/lib.bash"

out=$T/demo.out
DEMO_SECONDS=6 make -s -C "$ROOT" demo >"$out" 2>&1 || { cat "$out"; fail "make demo failed"; }
cat "$out"

svg=$ROOT/build/demo/spool/latest.svg
[ -f "$svg" ] || fail "make demo wrote no flame graph"
grep -q "^  $svg\$" "$out" || fail "make demo did not say where its flame graph is"
python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$svg" ||
	fail "the demo's flame graph is not well-formed XML"
for fn in burn_seventy burn_thirty; do
	grep -q "$fn" "$svg" || fail "the demo's flame graph does not name $fn"
	sed -n '/^Top functions/,/^$/p' "$out" | grep -q " $fn\$" ||
		fail "the demo's top functions do not list $fn"
done

rate=$(sed -n 's/^Health: ~\([0-9]*\) samples\/s.*/\1/p' "$out")
[ -n "$rate" ] || fail "the demo printed no health line"
# One single-threaded process at 499 Hz: between a half and the full rate.
[ "$rate" -ge 250 ] && [ "$rate" -le 520 ] || fail "the demo sampled $rate a second, not ~499"
ok "make demo: a flame graph naming burn_seventy and burn_thirty, ~$rate samples/s"
