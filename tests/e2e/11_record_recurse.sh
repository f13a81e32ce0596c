# A recursion 24 levels deep shows as a chain of repeated recurse_step
# frames: 25 calls of recurse_step, of which a frame-pointer walk skips the
# last (the caller of the frameless leaf) unless leaf frame pointers are on.
# (--unwind fp: the frame-pointer walk; 28_unwind_cases.sh walks 1,000
# frames by tables.)
source "$(dirname "$0")/lib.bash"

bg "$EX/recurse" 6 24; A=$BG
bg "$EX/recurse-leaffp" 6 24; B=$BG
sleep 0.3
"$EBPROF" record --unwind fp -p "$A" -p "$B" -F 499 -d 3 --format folded -o "$T/rec.folded" \
	2>"$T/summary" || fail "ebprof record exited $?: $(cat "$T/summary")"

run=$($FOLDED_PY "$T/rec.folded" run recurse recurse_step)
[ "$run" -eq 24 ] || fail "recurse: longest recurse_step chain is $run, want 24"
run=$($FOLDED_PY "$T/rec.folded" run recurse-leaffp recurse_step)
[ "$run" -eq 25 ] || fail "recurse-leaffp: longest recurse_step chain is $run, want 25"
chain=$($FOLDED_PY "$T/rec.folded" chain recurse-leaffp recurse_leaf)
[[ $chain == *";main;recurse_step;recurse_step;"*";recurse_step;recurse_leaf" ]] ||
	fail "recurse-leaffp: unexpected chain $chain"
ok "recursion: 24 / 25 repeated frames; $chain"
