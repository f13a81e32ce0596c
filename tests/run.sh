#!/usr/bin/env bash
# Runs test programs and e2e scripts, and ends with one line:
# "N passed, N failed". A cmocka binary counts each of its cases; a script
# counts as one test. A script may exit 77 to say "skipped", which is
# reported and counted as a failure: on the machines we support every test
# must run. Logs go to build/test-logs/ (TEST_LOGS overrides).
set -u
label=$1; shift
passed=0 failed=0
failures=()
logdir=${TEST_LOGS:-build/test-logs}
mkdir -p "$logdir"
for t in "$@"; do
	name=$(basename "$t")
	log="$logdir/$name.log"
	start=$(date +%s)
	if [[ $t == *.sh ]]; then
		bash "$t" >"$log" 2>&1
	else
		"$t" >"$log" 2>&1
	fi
	rc=$?
	secs=$(( $(date +%s) - start ))
	if [[ $t != *.sh ]]; then
		p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
		f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
		p=${p:-0} f=${f:-0}
		if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
	elif [ "$rc" -eq 0 ]; then
		p=1 f=0
	else
		p=0 f=1
	fi
	passed=$((passed + p)) failed=$((failed + f))
	if [ "$f" -eq 0 ]; then
		printf 'PASS %-40s %3ss  (%s)\n' "$name" "$secs" "$p case(s)"
	else
		[ "$rc" -eq 77 ] && why="skipped, which counts as failed" || why="exit $rc"
		printf 'FAIL %-40s %3ss  (%s) -- log: %s\n' "$name" "$secs" "$why" "$log"
		# the failed checks first: the tail below may not reach them
		grep -E '^(FAIL|not ok|\[  (FAILED|ERROR) )' "$log" | head -10 | sed 's/^/    ! /'
		sed 's/^/    | /' "$log" | tail -40
		failures+=("$name")
	fi
done
echo
[ ${#failures[@]} -gt 0 ] && echo "failed ($label): ${failures[*]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
