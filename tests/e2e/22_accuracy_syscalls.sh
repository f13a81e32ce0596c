# Kernel frames against perf: a workload that spends most of its time in
# read(2) from /dev/zero, so that the hot self functions are kernel ones
# (read_zero, clear_user...). Both profilers take kernel stacks from the
# kernel's own unwinder, so callers are compared frame for frame, kernel and
# user (the workload has frame pointers; libc, which has none, is left out).
source "$(dirname "$0")/lib.bash"
source "$ROOT/tests/accuracy/acc.bash"

have_symbols "$EX/syscalls" read_zero_loop main
bg "$EX/syscalls" 600; A=$BG
sleep 0.3
record_both 3 "$T/sys" "$A"

$COMPARE diff --ours "$T/sys.ebprof.folded" --perf "$T/sys.perf.folded" --proc syscalls \
	--fp-bin "$EX/syscalls" || fail "kernel-heavy profile differs from perf's (see above)"
kernel=$($FOLDED_PY "$T/sys.ebprof.folded" has syscalls '_\[k\]$')
at_least "$kernel" 50 || fail "only $kernel% of the samples have kernel frames"
ok "syscalls: kernel frames in $kernel% of samples, and ebprof agrees with perf"
