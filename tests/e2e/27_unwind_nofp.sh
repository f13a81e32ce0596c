# Whole stacks without frame pointers: chains and syscalls built by GCC 12
# and by clang 14 at -O2 -fomit-frame-pointer (nothing in them, or in
# Debian's libc, keeps a frame pointer), profiled with --unwind dwarf.
# Every sample whose leaf ends a known chain must carry that exact chain
# from _start through libc's start-up to main and down to the leaf, in at
# least 99% of samples; syscalls spends nearly all its time in the kernel,
# so its samples test the user registers the kernel saved on entry.
# The same processes walked by frame pointer (--unwind fp) keep almost
# none of their chains: the test can tell the two apart.
source "$(dirname "$0")/lib.bash"

CHAINS=("main;run_chains;chain_a_leaf" "main;run_chains;chain_b1;chain_b2;chain_b_leaf"
	"main;run_chains;chain_c1;chain_c2;chain_c3;chain_c4;chain_c_leaf")
pids=()
for b in chains-nofp chains-clangnofp syscalls-nofp syscalls-clangnofp; do
	bg "$EX/$b" 600; pids+=("$BG")
done
sleep 0.3
args=()
for p in "${pids[@]}"; do args+=(-p "$p"); done
"$EBPROF" record --unwind dwarf "${args[@]}" -F 999 -d 300 --format folded \
	-o "$T/dwarf.folded" 2>"$T/summary" &
R=$!
wait_sampling "$T/summary"
wait_cpu 2 120 "${pids[@]}"
kill -INT "$R"
wait "$R" || fail "ebprof record exited $?: $(cat "$T/summary")"
cat "$T/summary"
grep -q "user stacks by unwind tables" "$T/summary" || fail "the summary does not say stacks were walked by tables"

for b in chains-nofp chains-clangnofp; do
	read -r pct hit tot < <($FOLDED_PY "$T/dwarf.folded" exact "${b:0:15}" "${CHAINS[@]}")
	at_least "$tot" 1000 || fail "$b: only $tot samples in the chains' leaves"
	at_least "$pct" 99 || {
		grep "^${b:0:15};" "$T/dwarf.folded" | sort -t' ' -k2 -nr | head -5
		fail "$b: the exact chain in only $pct% of $tot samples (want >= 99%)"
	}
	ok "$b: exact chain from _start in $pct% of $tot samples"
done
for b in syscalls-nofp syscalls-clangnofp; do
	read -r pct hit tot < <($FOLDED_PY "$T/dwarf.folded" exact "${b:0:15}" "main;read_zero_loop")
	read -r kpct _ _ < <($FOLDED_PY "$T/dwarf.folded" has "${b:0:15}" '_\[k\]$')
	at_least "$tot" 1000 || fail "$b: only $tot samples under read_zero_loop"
	at_least "$kpct" 80 || fail "$b: only $kpct% of samples have kernel frames: not a kernel-tick test"
	at_least "$pct" 99 || {
		grep "^${b:0:15};" "$T/dwarf.folded" | sort -t' ' -k2 -nr | head -5
		fail "$b: main;read_zero_loop whole in only $pct% of $tot samples (want >= 99%)"
	}
	ok "$b: kernel frames in $kpct% of samples; user chain exact in $pct% of $tot"
done

# The frame-pointer walk of the same processes, to show the test can fail.
"$EBPROF" record --unwind fp -p "${pids[0]}" -F 999 -d 2 --format folded -o "$T/fp.folded" \
	2>"$T/fp.summary" || fail "ebprof record --unwind fp exited $?: $(cat "$T/fp.summary")"
read -r fpct _ ftot < <($FOLDED_PY "$T/fp.folded" exact chains-nofp "${CHAINS[@]}")
at_least 5 "$fpct" || fail "the frame-pointer walk found the exact chain in $fpct% of $ftot samples"
ok "by frame pointer the same chains are whole in $fpct% of $ftot samples"
