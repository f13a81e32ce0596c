# The cases an unwinder must get right, each with a known chain, walked by
# unwind tables through code with no frame pointer (examples/unwcases.c
# built by GCC -fomit-frame-pointer; Debian's libc has none either):
#   qsort      a callback through libc: main;sort_rounds;qsort_r;<libc's
#              merge sort, any depth>;cmp_slow
#   signal     a handler: main;signal_target;<libc's __restore_rt, the
#              signal frame's own FDE ('S' augmentation)>;on_prof
#   vdso       clock_gettime in a loop keeps its callers down to main
#   plt        samples in the PLT stub of strlen keep plt_loop and main
#   leaf       GCC's frameless leaves (chains, built with frame pointers):
#              the leaf's caller is there by tables, never by frame pointer
#   recursion  1,000 recursive frames come out as 1,000 frames
# Each must hold in at least 99% of the samples concerned.
source "$(dirname "$0")/lib.bash"

LIBC=$(ldd "$EX/unwcases-nofp" | awk '/libc.so.6/ { print $3 }')
[ -r "$LIBC" ] || fail "cannot find the libc unwcases-nofp links"

record() { # OUT SECONDS_OF_CPU PID... (by tables)
	local out=$1 cpu=$2 r args=()
	shift 2
	for p in "$@"; do args+=(-p "$p"); done
	"$EBPROF" record --unwind dwarf "${args[@]}" -F 999 -d 300 --format folded \
		-o "$T/$out.folded" 2>"$T/$out.summary" &
	r=$!
	wait_sampling "$T/$out.summary"
	wait_cpu "$cpu" 120 "$@"
	kill -INT "$r"
	wait "$r" || fail "ebprof record exited $?: $(cat "$T/$out.summary")"
	grep "truncated" "$T/$out.summary"
}

check() { # NAME PCT TOTAL MIN_TOTAL
	at_least "$3" "$4" || fail "$1: only $3 samples"
	at_least "$2" 99 || fail "$1: whole in only $2% of $3 samples (want >= 99%)"
	ok "$1: whole in $2% of $3 samples"
}

# One process name per mode (the name is the command's: a link to the binary).
for m in qsort signal vdso plt; do
	ln -s "$EX/unwcases-nofp" "$T/case-$m"
	bg "$T/case-$m" "$m" 600; eval "P_$m=$BG"
done
sleep 0.3
# 8 s of CPU each. The PLT case drops the stub's page before each call,
# so that a good share of its samples (the page faults) have their pc in
# the 16-byte stub: about 250 a second at 999 Hz on 6 Dec 2026.
record cases 8 "$P_qsort" "$P_signal" "$P_vdso" "$P_plt"
F=$T/cases.folded

read -r pct _ tot < <($FOLDED_PY "$F" under case-qsort '(cmp_slow|spin)' \
	'main;sort_rounds;qsort_r;(msort[^;]*;)+cmp_slow(;spin)?')
check "qsort callback through libc" "$pct" "$tot" 500

# The frame between signal_target and on_prof must be the sigreturn trampoline:
# the FDE of libc's 'S' CIE (Debian's libc has no symbol for it).
read -r lo hi < <(readelf -wf "$LIBC" | awk '
	/ CIE/ { cie = $1 } /Augmentation:/ && /"zRS"/ { s = cie }
	/ FDE / && s != "" && $0 ~ "cie=" s { split($NF, r, /[=.]+/); print r[2], r[3]; exit }')
[ -n "$lo" ] || fail "no signal-frame FDE in $LIBC"
# (The tick may interrupt signal_target inside clock_gettime: those frames come
# between signal_target and the trampoline.)
read -r pct _ tot < <($FOLDED_PY "$F" under case-signal '(on_prof|spin)' \
	"main;signal_target;([^;]+;)*(__restore_rt|\\[libc\\.so\\.6\\+0x[0-9a-f]+\\]);on_prof(;spin)?")
check "signal handler through __restore_rt" "$pct" "$tot" 100
bad=$(grep "^case-signal;" "$F" | grep -o '\[libc\.so\.6+0x[0-9a-f]*\];on_prof' |
	sed 's/.*+0x\([0-9a-f]*\)\].*/\1/' | sort -u | while read -r off; do
		(( 16#$off >= 16#$lo && 16#$off < 16#$hi )) || echo "$off"
	done)
[ -z "$bad" ] || fail "frames between signal_target and on_prof outside __restore_rt ($lo-$hi): $bad"
ok "the signal frame is libc's sigreturn trampoline ($lo..$hi)"

# (A sample in the PLT stub of clock_gettime is named _init: the symbolizer
# names a stub after the symbol before the PLT. Under kvm-clock the vDSO
# reads the clock in a function of its own that it does not export, so
# that frame, below the vDSO's clock_gettime, is [vdso].)
read -r pct _ tot < <($FOLDED_PY "$F" under case-vdso '.*' \
	'main;vdso_loop(;clock_gettime[^;]*|;_init|;\[vdso[^;]*\])*')
read -r vpct _ _ < <($FOLDED_PY "$F" has case-vdso '^clock_gettime$|__vdso|\[vdso\]')
check "clock_gettime (vDSO) loop" "$pct" "$tot" 500
at_least "$vpct" 20 || fail "only $vpct% of samples in the vDSO: not a vDSO test"

read -r pct _ tot < <($FOLDED_PY "$F" under case-plt '_init|\[unwcases-nofp\+0x[0-9a-f]+\]' \
	'main;plt_loop;[^;]+')
check "samples in the PLT stub of strlen" "$pct" "$tot" 100

# Frameless leaves in a frame-pointer build: the caller by tables, not by fp.
bg "$EX/chains" 600; C=$BG
sleep 0.3
record leaf 2 "$C"
"$EBPROF" record --unwind fp -p "$C" -F 999 -d 3 --format folded -o "$T/leaf-fp.folded" \
	2>/dev/null || fail "ebprof record --unwind fp failed"
read -r pct _ tot < <($FOLDED_PY "$T/leaf.folded" under chains 'chain_[abc]_leaf' \
	'main;run_chains;(chain_a_leaf|chain_b1;chain_b2;chain_b_leaf|chain_c1;chain_c2;chain_c3;chain_c4;chain_c_leaf)')
check "frameless leaves with their callers (GCC, frame pointers)" "$pct" "$tot" 1000
read -r fpct _ ftot < <($FOLDED_PY "$T/leaf-fp.folded" within chains 'chain_[abc]_leaf' \
	'run_chains;chain_a_leaf|chain_b2;chain_b_leaf|chain_c4;chain_c_leaf')
at_least "$ftot" 500 || fail "the frame-pointer walk has only $ftot leaf samples"
at_least 1 "$fpct" || fail "the frame-pointer walk kept the leaf's caller in $fpct% of samples"
ok "by frame pointer the leaf's caller is there in $fpct% of $ftot samples"

# 1,000 recursive frames (recurse N calls recurse_step N + 1 times).
bg "$EX/recurse-nofp" 600 999; R=$BG
sleep 0.3
record deep 2 "$R"
run=$($FOLDED_PY "$T/deep.folded" run recurse-nofp recurse_step)
[ "$run" -eq 1000 ] || fail "recursion: the most common run of recurse_step frames is $run, want 1000"
read -r pct _ tot < <($FOLDED_PY "$T/deep.folded" under recurse-nofp recurse_leaf \
	'main(;recurse_step){1000};recurse_leaf')
check "1,000 recursive frames" "$pct" "$tot" 1000
