# Ground truth, measured by ebprof and perf at once: three workloads with
# known answers run side by side, and ebprof and perf (-g, the same
# frame-pointer walk) sample them at 999 Hz over one window, until each
# workload has used 6 CPU-seconds (about 6,000 samples each).
#   split7030  burn_seventy:burn_thirty     70:30
#   chains     chain_a/b/c_leaf             50:30:20, at three call depths
#   recurse    recurse_leaf                 100%, under 24 recurse_step frames
# Each share must be within ±3 points, on at least 5,000 samples per workload
# (binomial error then at most 0.7 points: the bound holds at 4 sigma).
# Then each workload's profile is compared with perf's, function by function,
# callers included, and the share of samples with the complete call chain
# is compared with perf's (GCC's frameless leaves cost both the same frame).
source "$(dirname "$0")/lib.bash"
source "$ROOT/tests/accuracy/acc.bash"

have_symbols "$EX/split7030" burn_seventy burn_thirty run_split main
have_symbols "$EX/chains" chain_a_leaf chain_b_leaf chain_c_leaf chain_b1 chain_b2 \
	chain_c1 chain_c2 chain_c3 chain_c4 run_chains main
have_symbols "$EX/recurse" recurse_leaf recurse_step main

bg "$EX/split7030" 600; A=$BG
bg "$EX/chains" 600; B=$BG
bg "$EX/recurse" 600 24; C=$BG
sleep 0.3
record_both 6 "$T/gt" "$A" "$B" "$C"

rc=0
$COMPARE expect --folded "$T/gt.ebprof.folded" --perf "$T/gt.perf.folded" --proc split7030 \
	--funcs burn_seventy,burn_thirty --want 70,30 || rc=1
$COMPARE expect --folded "$T/gt.ebprof.folded" --perf "$T/gt.perf.folded" --proc chains \
	--funcs chain_a_leaf,chain_b_leaf,chain_c_leaf --want 50,30,20 || rc=1
$COMPARE expect --folded "$T/gt.ebprof.folded" --perf "$T/gt.perf.folded" --proc recurse \
	--funcs recurse_leaf,recurse_step --want 100,0 || rc=1

for w in split7030 chains recurse; do
	$COMPARE diff --ours "$T/gt.ebprof.folded" --perf "$T/gt.perf.folded" --proc $w \
		--fp-bin "$EX/$w" || rc=1
done

# GCC gives the leaves no frame, so a frame-pointer walk skips each leaf's
# caller: the complete chain is expected in (almost) no sample, in perf's
# walk exactly as in ours. 24 + 1 recurse_step frames make recurse's chain.
steps=$(printf 'recurse_step;%.0s' $(seq 25))
$COMPARE fidelity --ours "$T/gt.ebprof.folded" --perf "$T/gt.perf.folded" --proc chains \
	--label "chains (gcc)" --expect "0% (leaf caller skipped)" \
	--chain "main;run_chains;chain_a_leaf" \
	--chain "main;run_chains;chain_b1;chain_b2;chain_b_leaf" \
	--chain "main;run_chains;chain_c1;chain_c2;chain_c3;chain_c4;chain_c_leaf" || rc=1
$COMPARE fidelity --ours "$T/gt.ebprof.folded" --perf "$T/gt.perf.folded" --proc recurse \
	--label "recurse (gcc)" --expect "0% (leaf caller skipped)" \
	--chain "main;${steps}recurse_leaf" || rc=1
[ "$rc" -eq 0 ] || fail "ground truth or agreement with perf failed (see above)"
ok "ground truth within ±3 points, and ebprof agrees with perf"
