# The 70/30 workload, recorded at 999 Hz until each process has used 7 s of
# CPU (about 7,000 samples, so the binomial error of a share is about 0.6
# points and the ±3 bound holds every run; waiting for CPU time rather than
# wall time keeps that true on a shared machine). Two builds run side by
# side under one recording:
#   split7030        -fno-omit-frame-pointer: GCC still gives the leaf
#                    functions no frame, so a frame-pointer walk skips the
#                    leaf's caller (run_split) -- perf's walk does the same.
#   split7030-leaffp -mno-omit-leaf-frame-pointer too: the whole chain
#                    main -> run_split -> burn_* comes back.
# (--unwind fp: this test is about what the frame-pointer walk gives; the
# table unwinder has its own tests, 8*_unwind_*.)
source "$(dirname "$0")/lib.bash"

bg "$EX/split7030" 120; A=$BG
bg "$EX/split7030-leaffp" 120; B=$BG
sleep 0.3
"$EBPROF" record --unwind fp -p "$A" -p "$B" -F 999 -d 100 --format folded -o "$T/split.folded" \
	2>"$T/summary" &
R=$!
wait_sampling "$T/summary"
wait_cpu 7 90 "$A" "$B"
kill -INT "$R"
wait "$R" || fail "ebprof record exited $?: $(cat "$T/summary")"
cat "$T/summary"

for proc in split7030 split7030-leaff; do
	total=$($FOLDED_PY "$T/split.folded" total "$proc")
	at_least "$total" 5000 || fail "$proc: only $total samples, need 5000 for a ±3 test"
	read -r pct a b < <($FOLDED_PY "$T/split.folded" pair "$proc" burn_seventy burn_thirty)
	within "$pct" 70 3 || fail "$proc: burn_seventy has $pct% (want 70±3; $a vs $b)"
	both=$(awk -v a="$a" -v b="$b" -v t="$total" 'BEGIN { printf "%.1f", 100 * (a + b) / t }')
	at_least "$both" 95 || fail "$proc: burn_* cover only $both% of $total samples"
	ok "$proc: $total samples, burn_seventy $pct% of the split ($a:$b), burn_* $both%"
done

# What a frame-pointer walk truly gives.
chain=$($FOLDED_PY "$T/split.folded" chain split7030 burn_seventy)
[[ $chain == *";main;burn_seventy" ]] ||
	fail "split7030: expected ...;main;burn_seventy (leaf caller skipped), got: $chain"
ok "split7030 chain: $chain"
chain=$($FOLDED_PY "$T/split.folded" chain split7030-leaff burn_seventy)
[[ $chain == *";main;run_split;burn_seventy" ]] ||
	fail "split7030-leaffp: expected ...;main;run_split;burn_seventy, got: $chain"
[[ $chain == split7030-leaff\;* ]] || fail "first frame is not the process name: $chain"
ok "split7030-leaffp chain: $chain"

grep -q "samples" "$T/summary" && grep -q "lost" "$T/summary" && grep -q "unresolved" "$T/summary" ||
	fail "the summary lacks samples, losses or unresolved frames"
