# An independent oracle for the BPF table unwinder: elfutils' libdw. The
# sampler copies every 10th sample it walked by tables whole (registers,
# the stack a copy carries: on a main thread up to where its stack began,
# and its own frames); libdw unwinds each copy with its own CFI reader and
# interpreter (tests/oracle/unwind_libdw.c), and the two walks are
# compared frame by frame. At least 99.9% of at least 1,000
# frames must agree, over workloads without frame pointers: call chains,
# a callback through libc, a signal handler, a recursion, a vDSO loop.
source "$(dirname "$0")/lib.bash"

ORACLE=$ROOT/build/oracle/unwind_libdw
[ -x "$ORACLE" ] || fail "$ORACLE is not built (needs libdw-dev: make deps, then make oracles)"

pids=()
bg "$EX/chains-nofp" 600; pids+=("$BG")
bg "$EX/chains-clangnofp" 600; pids+=("$BG")
bg "$EX/unwcases-nofp" qsort 600; pids+=("$BG")
bg "$EX/unwcases-nofp" signal 600; pids+=("$BG")
bg "$EX/unwcases-nofp" vdso 600; pids+=("$BG")
bg "$EX/recurse-nofp" 600 60; pids+=("$BG")
sleep 0.3
"$ORACLE" -v -d 8 -e 10 "${pids[@]}" >"$T/oracle.txt" 2>&1
rc=$?
cat "$T/oracle.txt" | tail -25
summary=$(grep '^unwind_libdw:' "$T/oracle.txt")
[ "$rc" -eq 0 ] || fail "libdw and ebprof disagree, or too few frames: $summary"
ok "$summary"
