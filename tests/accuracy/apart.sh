#!/usr/bin/env bash
# tests/accuracy/apart.sh [ROUNDS] [SECONDS]: does sampling at the same time
# move either profiler? The accuracy tests run perf and ebprof together on
# the same processes; this script runs both on examples/syscalls (a loop of
# read(2) from /dev/zero, where the kernel's small functions around
# read_zero take a few percent), ROUNDS times (default 10): once together,
# then one after the other, SECONDS each (default 3). Each round prints
# read_zero's self share and the sample count of each, both ways. Equal gaps
# together and apart say the tests' method is not what moves a share. Root;
# make all first. Not a test: it reports, it does not judge.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ROUNDS=${1:-10} SECS=${2:-3}
EB=$ROOT/build/ebprof
PERF=${PERF:-/usr/bin/perf}
FOLDED="/usr/bin/python3 $ROOT/tests/e2e/folded.py"
if [ ! -x "$EB" ] || [ ! -x "$ROOT/build/examples/syscalls" ]; then
	echo "apart: run make all first" >&2
	exit 1
fi
[ -x "$PERF" ] || { echo "apart: $PERF is missing (apt install linux-perf)" >&2; exit 1; }
W=$(mktemp -d /tmp/ebprof-apart.XXXXXX)
A=
trap '[ -n "$A" ] && kill "$A" 2>/dev/null; rm -rf "$W"' EXIT

# share FOLDED: read_zero's self share (%) of the syscalls samples, and their count
share() {
	echo "$($FOLDED "$1" self syscalls 'read_zero_[k]')% of $($FOLDED "$1" total syscalls)"
}
perf_folded() {
	"$PERF" script --no-inline -F comm,pid,tid,ip,sym,dso -i "$1" 2>/dev/null |
		/usr/bin/python3 "$ROOT/tests/accuracy/perf_collapse.py" >"$2"
}

"$ROOT/build/examples/syscalls" 100000 &
A=$!
sleep 0.5
for r in $(seq 1 "$ROUNDS"); do
	"$PERF" record -q -F 999 -g -p "$A" -o "$W/t.data" >/dev/null 2>&1 &
	P=$!
	"$EB" record --unwind fp -p "$A" -F 999 -d "$SECS" --format folded -o "$W/t.eb" 2>/dev/null
	kill -INT "$P"
	wait "$P" || true
	perf_folded "$W/t.data" "$W/t.perf"
	"$EB" record --unwind fp -p "$A" -F 999 -d "$SECS" --format folded -o "$W/a.eb" 2>/dev/null
	"$PERF" record -q -F 999 -g -p "$A" -o "$W/a.data" -- sleep "$SECS" >/dev/null 2>&1
	perf_folded "$W/a.data" "$W/a.perf"
	echo "round $r: together ebprof $(share "$W/t.eb"), perf $(share "$W/t.perf");" \
		"apart ebprof $(share "$W/a.eb"), perf $(share "$W/a.perf")"
done
