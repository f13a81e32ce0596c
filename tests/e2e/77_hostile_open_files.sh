# Issue 20, finding 7: out of file descriptors. With `ulimit -n 29`
# record exited 0 with 100% [unknown] frames and no word about
# descriptors; with `ulimit -n 16` the error blamed the kernel version
# ("needs Linux 5.8 or newer") where libbpf's probe had failed with
# EMFILE. Across a range of limits, record either names the workload's
# functions and exits 0, or says "Too many open files: raise `ulimit
# -n`" and exits non-zero; it never blames the kernel.
source "$(dirname "$0")/lib.bash"

bg "$EX/split7030" 60; A=$BG
sleep 0.3
named=0 refused=0
for n in 10 12 16 20 24 26 28 29 30 32 34 36 40 48 64 1024; do
	(ulimit -n "$n" && exec "$EBPROF" record -p "$A" -F 499 -d 1 --format folded \
		-o "$T/n$n.folded") 2>"$T/n$n.err"
	rc=$?
	grep -q "Linux 5.8" "$T/n$n.err" && fail "ulimit -n $n: the kernel is blamed: $(cat "$T/n$n.err")"
	if [ "$rc" -eq 0 ]; then
		grep -q "Too many open files" "$T/n$n.err" &&
			fail "ulimit -n $n: out of descriptors, yet exit 0: $(cat "$T/n$n.err")"
		pct=$($FOLDED_PY "$T/n$n.folded" has split7030 'burn_(seventy|thirty)$')
		at_least "$pct" 90 ||
			fail "ulimit -n $n: exit 0 with burn_* named in only $pct% of the samples"
		named=$((named + 1))
	else
		grep -q 'Too many open files: raise `ulimit -n`' "$T/n$n.err" ||
			fail "ulimit -n $n: exit $rc without naming the limit: $(cat "$T/n$n.err")"
		refused=$((refused + 1))
	fi
done
[ "$named" -ge 1 ] && [ "$refused" -ge 1 ] || fail "$named limits named, $refused refused: the range missed the edge"
ok "16 descriptor limits: $refused say 'Too many open files: raise \`ulimit -n\`' and fail, $named name every function"
