#!/usr/bin/env bash
# make accuracy: runs the accuracy tests (tests/e2e/2*_accuracy_*.sh, the same
# scripts `make check` runs) and prints one table of what they measured:
# expected vs ebprof vs perf, for every workload. Each script's full output
# is in build/test-logs/NAME.log. Exits non-zero when any test failed.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
mkdir -p build/test-logs
export ACC_TABLE=$ROOT/build/accuracy-table.tsv
: >"$ACC_TABLE"
failed=()
for t in tests/e2e/2*_accuracy_*.sh; do
	name=$(basename "$t")
	start=$SECONDS
	if bash "$t" >"build/test-logs/$name.log" 2>&1; then
		printf 'PASS %-36s %3ss\n' "$name" $((SECONDS - start))
	else
		printf 'FAIL %-36s %3ss -- log: build/test-logs/%s.log\n' "$name" \
			$((SECONDS - start)) "$name"
		grep -E '^FAIL' "build/test-logs/$name.log" | sed 's/^/    | /'
		failed+=("$name")
	fi
done
echo
/usr/bin/python3 tests/accuracy/compare.py table "$ACC_TABLE"
echo
if [ ${#failed[@]} -gt 0 ]; then
	echo "accuracy: FAILED: ${failed[*]}"
	exit 1
fi
echo "accuracy: all tests passed"
