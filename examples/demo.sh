#!/usr/bin/env bash
# make demo: a real collectd with the ebprof plugin profiles the 70/30
# workload (build/examples/split7030) for about 10 seconds, then prints
# where the flame graph is and the top functions collectd recorded.
# Everything lives under build/demo; collectd runs in the foreground (-f)
# in this script's background and is stopped with SIGTERM, which makes the
# plugin write its last window. Needs root (CAP_BPF and CAP_PERFMON).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DEMO=$ROOT/build/demo
SECONDS_TO_RUN=${DEMO_SECONDS:-10}

die() { echo "demo: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "run as root: the BPF sampler needs CAP_BPF and CAP_PERFMON"
command -v collectd >/dev/null || die "collectd is not installed: run make deps"
[ -f "$ROOT/build/ebprof.so" ] && [ -x "$ROOT/build/examples/split7030" ] || die "run make first"

rm -rf "$DEMO"
mkdir -p "$DEMO/plugins" "$DEMO/csv" "$DEMO/spool"
cp "$ROOT/build/ebprof.so" /usr/lib/collectd/csv.so "$DEMO/plugins/"

"$ROOT/build/examples/split7030" $((SECONDS_TO_RUN + 5)) >/dev/null &
WORKLOAD=$!
COLLECTD=
stop() {
	[ -n "$COLLECTD" ] && kill -TERM "$COLLECTD" 2>/dev/null && wait "$COLLECTD" 2>/dev/null
	kill "$WORKLOAD" 2>/dev/null || true
	wait "$WORKLOAD" 2>/dev/null || true
}
trap stop EXIT

sed -e "s#@DEMO_DIR@#$DEMO#g" -e "s#@WORKLOAD_PID@#$WORKLOAD#g" \
	"$ROOT/examples/collectd.conf" >"$DEMO/collectd.conf"
collectd -f -C "$DEMO/collectd.conf" >"$DEMO/collectd.log" 2>&1 &
COLLECTD=$!

echo "demo: collectd (pid $COLLECTD) profiles split7030 (pid $WORKLOAD) for ${SECONDS_TO_RUN}s"
for _ in $(seq "$SECONDS_TO_RUN"); do
	sleep 1
	kill -0 "$COLLECTD" 2>/dev/null || { cat "$DEMO/collectd.log" >&2; die "collectd exited"; }
	printf .
done
echo
kill -TERM "$COLLECTD"
wait "$COLLECTD" || true
COLLECTD=
grep 'ebprof plugin:' "$DEMO/collectd.log" | sed 's/^/demo: collectd said: /'

CSV=$DEMO/csv/demo
[ -d "$CSV/ebprof-self" ] || { cat "$DEMO/collectd.log" >&2; die "no ebprof values in $CSV"; }
[ -f "$DEMO/spool/latest.svg" ] || die "no flame graph in $DEMO/spool"

echo
echo "Flame graph (open in a browser; click to zoom, Ctrl-F to search):"
echo "  $DEMO/spool/latest.svg"
echo "  history: $(ls "$DEMO"/spool/ebprof-*.svg | wc -l) SVG and $(ls "$DEMO"/spool/ebprof-*.folded | wc -l) folded files in $DEMO/spool"
echo
echo "Top functions by self time, mean over the run, as collectd recorded them"
echo "(percent of one CPU; files $CSV/ebprof-self/gauge-NAME-DATE):"
# Every read writes [other]; a function missing from a read had 0 there.
reads=$(cat "$CSV"/ebprof-self/gauge-\[other\]-* | grep -c '^[0-9]')
for f in "$CSV"/ebprof-self/gauge-*; do
	name=$(basename "$f")
	name=${name#gauge-}
	name=${name%-????-??-??}
	awk -F, -v n="$name" -v reads="$reads" '$1 ~ /^[0-9]/ { s += $2 }
		END { printf "%10.1f %%  %s\n", s / reads, n }' "$f"
done | sort -rn | head -10
echo
samples=$(awk -F, '$1 ~ /^[0-9]/ { s += $2; k++ } END { if (k) printf "%.0f", s / k }' "$CSV"/ebprof-health/frequency-samples-*)
lost=0
for f in "$CSV"/ebprof-health/derive-lost-*; do
	lost=$((lost + $(tail -1 "$f" | cut -d, -f2 | cut -d. -f1)))
done
cpu=$(tail -1 "$CSV"/ebprof-health/ps_cputime-* | awk -F, '{ printf "%.1f ms user, %.1f ms system", $2 / 1000, $3 / 1000 }')
echo "Health: ~$samples samples/s, $lost samples lost, plugin CPU time $cpu"
echo "collectd's log: $DEMO/collectd.log; config: $DEMO/collectd.conf"
