# Issue 12: a binary that starts again and again has its unwind tables
# built once. perl (a copy under a name of its own, so that -c picks only
# these runs) runs 20 times in a row, 0.2 s of work each with 0.6 s
# between runs: three drains at --drain-interval-ms 200, so a table freed
# when no process used it for a drain (the old policy) is gone when the
# next run starts and is built again every time. The unwind table cache
# keeps them: record's summary must count each file built once and the
# tables reused by the 19 later runs, within --unwind-memory 1 MiB.
source "$(dirname "$0")/lib.bash"

RUNS=20
cp "$(command -v perl)" "$T/ebprof-rerun"
"$EBPROF" record --unwind dwarf -c ebprof-rerun -F 999 --drain-interval-ms 200 \
	--unwind-memory 1 -d 60 --format folded -o "$T/runs.folded" 2>"$T/summary" &
R=$!
BG_PIDS+=("$R")
wait_for 10 grep -q "sampling at" "$T/summary" || fail "record did not start: $(cat "$T/summary")"
for _ in $(seq "$RUNS"); do
	"$T/ebprof-rerun" -MTime::HiRes=time -e 'my $e = time + 0.2; 1 while time < $e' ||
		fail "the perl run failed"
	sleep 0.6
done
kill -INT "$R"
wait "$R" || fail "ebprof record exited $?: $(cat "$T/summary")"
cat "$T/summary"

# unwind table cache: B built, R reused after their last user left, K kept now ...
read -r built reused < <(sed -n \
	's/.*unwind table cache: \([0-9]*\) built, \([0-9]*\) reused after.*/\1 \2/p' "$T/summary")
[ -n "$built" ] || fail "no unwind table cache line in record's summary"
# perl, libc, libm, libcrypt, ld.so and the vDSO: six files, whichever run maps them.
[ "$built" -le 8 ] || fail "$built tables built for $RUNS runs of one binary (each run rebuilt them)"
at_least "$reused" $(( (RUNS - 1) * 4 )) ||
	fail "only $reused tables reused in $((RUNS - 1)) runs after the first"
kernel=$(sed -n 's/.*unwind tables: .*; \([0-9.]*\) MiB in the kernel, bound \([0-9]*\) MiB.*/\1 \2/p' \
	"$T/summary")
read -r kmib bound <<<"$kernel"
[ "$bound" = 1 ] || fail "the bound is not --unwind-memory's: '$kernel'"
awk -v k="$kmib" 'BEGIN { exit !(k > 0 && k <= 1) }' || fail "$kmib MiB of tables in the kernel, bound 1 MiB"
samples=$(grep -c '^ebprof-rerun' "$T/runs.folded")
at_least "$samples" 1 || fail "no sample of the runs recorded"
ok "$RUNS runs of one binary: $built tables built, $reused reused, $kmib MiB in the kernel (bound 1 MiB)"
