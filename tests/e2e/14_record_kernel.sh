# A syscall-heavy workload: reading /dev/zero spends its time in the
# kernel, so its stacks end in named kernel frames ("_[k]") below the
# user function that made the calls.
source "$(dirname "$0")/lib.bash"

bg "$EX/syscalls" 6; A=$BG
sleep 0.3
"$EBPROF" record -p "$A" -F 499 -d 3 --format folded -o "$T/sys.folded" \
	2>"$T/summary" || fail "ebprof record exited $?: $(cat "$T/summary")"

k=$($FOLDED_PY "$T/sys.folded" has syscalls '_\[k\]$')
at_least "$k" 80 || fail "only $k% of samples have kernel frames"
rd=$($FOLDED_PY "$T/sys.folded" has syscalls '^(ksys_read|vfs_read|__x64_sys_read)_\[k\]$')
at_least "$rd" 50 || fail "the read path is named in only $rd% of samples"
under=$(grep -E '(^|;)read_zero_loop;([^;]*_\[k\];)*[^;]*_\[k\] [0-9]+$' "$T/sys.folded" |
	awk '{ s += $NF } END { print s + 0 }')
total=$($FOLDED_PY "$T/sys.folded" total syscalls)
at_least "$under" "$((total / 2))" || fail "kernel frames under read_zero_loop in $under of $total"
ok "kernel frames in $k% of samples, read path named in $rd%, $under/$total under read_zero_loop"
