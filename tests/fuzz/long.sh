#!/usr/bin/env bash
# The long runs behind the figures in tests/README.md (Reliability): each
# target in turn for SECONDS (default 600) at nice 19, rebuilt just before
# its run so that it tests the code as it is then. One summary line per
# target goes to build/fuzz/long-summary.txt.
set -u
secs=${1:-600}
shift || true
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(ksyms procmaps elfsym folded config perfmap)
for t in "${targets[@]}"; do
	make -s "build/fuzz/fuzz_$t" >/dev/null 2>&1 || { echo "$t: build failed" >>build/fuzz/long-summary.txt; continue; }
	echo "# $(date -u +%H:%M:%S) $(git rev-parse --short HEAD)" >>build/fuzz/long-summary.txt
	tests/fuzz/run.sh "$secs" "build/fuzz/fuzz_$t" >>build/fuzz/long-summary.txt 2>&1
	cp "build/fuzz/fuzz_$t.log" "build/fuzz/long-fuzz_$t.log"
done
