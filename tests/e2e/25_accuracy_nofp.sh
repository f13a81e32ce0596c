# Accuracy without frame pointers: the GCC -fomit-frame-pointer builds of
# chains and recurse, and a qsort callback through libc, recorded at once
# by ebprof walking its unwind tables and by perf --call-graph dwarf (perf
# copies 8 KiB of stack per sample and unwinds it afterwards with
# libunwind/libdw). Both must find the complete call chain in at least 99%
# of the leaves' samples and agree within 3 points; and, function by
# function, the same top 10, the same self shares (within 3 points) and the
# same callers for every function above 5% (by dwarf on both sides the
# callers are comparable in every frame, libc's included).
source "$(dirname "$0")/lib.bash"
source "$ROOT/tests/accuracy/acc.bash"
export ACC_UNWIND=dwarf PERF_CALL_GRAPH="--call-graph dwarf"

bg "$EX/chains-nofp" 600; A=$BG
bg "$EX/recurse-nofp" 600 24; B=$BG
ln -s "$EX/unwcases-nofp" "$T/qsort-nofp"
bg "$T/qsort-nofp" qsort 600; C=$BG
sleep 0.3
record_both 3 "$T/dw" "$A" "$B" "$C"

rc=0
steps=$(printf 'recurse_step;%.0s' $(seq 25))
$COMPARE fidelity --ours "$T/dw.ebprof.folded" --perf "$T/dw.perf.folded" \
	--proc chains-nofp --label "chains (gcc, no fp; dwarf)" --expect "100%" --want-ours 99 \
	--chain "main;run_chains;chain_a_leaf" \
	--chain "main;run_chains;chain_b1;chain_b2;chain_b_leaf" \
	--chain "main;run_chains;chain_c1;chain_c2;chain_c3;chain_c4;chain_c_leaf" || rc=1
$COMPARE fidelity --ours "$T/dw.ebprof.folded" --perf "$T/dw.perf.folded" \
	--proc recurse-nofp --label "recurse (gcc, no fp; dwarf)" --expect "100%" --want-ours 99 \
	--chain "main;${steps}recurse_leaf" || rc=1
for w in chains-nofp recurse-nofp qsort-nofp; do
	bin=$EX/$w
	[ "$w" = qsort-nofp ] && bin=$EX/unwcases-nofp
	# --fp-bin names the functions whose callers are compared: every frame here,
	# since both sides unwind by tables (libc has no symbol table to list).
	$COMPARE diff --ours "$T/dw.ebprof.folded" --perf "$T/dw.perf.folded" --proc "$w" \
		--label "$w (dwarf)" --fp-bin "$bin" || rc=1
done
[ "$rc" -eq 0 ] || fail "without frame pointers ebprof's tables and perf's dwarf unwinding differ (above)"
ok "without frame pointers: complete chains and callers as perf --call-graph dwarf finds them"
