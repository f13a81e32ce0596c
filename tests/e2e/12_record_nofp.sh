# Built with -fomit-frame-pointer, the same 70/30 workload still has its
# leaf functions right (the sampled instruction pointer is exact) but its
# stacks are truncated: the walk cannot climb from the leaf to main. This
# is the expected behaviour of a frame-pointer unwinder, documented here.
# (--unwind fp: by tables the same stacks are whole: 27_unwind_nofp.sh.)
source "$(dirname "$0")/lib.bash"

bg "$EX/split7030-nofp" 6; A=$BG
sleep 0.3
"$EBPROF" record --unwind fp -p "$A" -F 999 -d 3 --format folded -o "$T/nofp.folded" \
	2>"$T/summary" || fail "ebprof record exited $?: $(cat "$T/summary")"

read -r pct a b < <($FOLDED_PY "$T/nofp.folded" pair split7030-nofp burn_seventy burn_thirty)
within "$pct" 70 5 || fail "leaf functions are wrong without frame pointers: $pct% ($a:$b)"
withmain=$($FOLDED_PY "$T/nofp.folded" has split7030-nofp '^run_split$')
at_least 5 "$withmain" ||
	fail "run_split appears in $withmain% of stacks; without frame pointers it should not"
ok "no frame pointers: leaves right ($pct% / 70), run_split in $withmain% of stacks"
