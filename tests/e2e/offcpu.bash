# Shared by the off-CPU tests (8x_offcpu_*, 9x_offcpu_*): records a workload
# of examples/offcpu.c from its first instruction to its last, and reads the
# folded result. Sourced after lib.bash.

OFFCPU=${OFFCPU:-$EX/offcpu} # a test may set another build of it
[ -x "$OFFCPU" ] || fail "$OFFCPU is not built: run make examples"

# offcpu_record OUT_PREFIX "EBPROF OPTIONS" WORKLOAD ARGS...: starts
# `ebprof record` on processes named as $OFFCPU, waits until it samples, runs
# the workload (its stdout in OUT_PREFIX.out), then stops the recording
# with SIGINT (which keeps what was recorded). The profile is
# OUT_PREFIX.folded, ebprof's stderr OUT_PREFIX.err.
offcpu_record() {
	local out=$1 opts=$2 rec
	shift 2
	# shellcheck disable=SC2086
	"$EBPROF" record -c "${OFFCPU##*/}" -d 600 --format folded -o "$out.folded" $opts \
		2>"$out.err" &
	rec=$!
	BG_PIDS+=("$rec")
	# Long enough for a kernel whose verifier refuses a program first (6.1 under emulation: 75 s).
	wait_for 240 grep -qs '^ebprof: sampling' "$out.err" ||
		{ cat "$out.err" >&2; fail "ebprof record did not start"; }
	"$OFFCPU" "$@" >"$out.out" || fail "workload offcpu $* failed"
	# The last waits are counted when their task runs again: give the
	# exiting threads a moment, then stop.
	sleep 0.3
	kill -INT "$rec"
	wait "$rec" || { cat "$out.err" >&2; fail "ebprof record failed"; }
	[ -e "$out.folded" ] || { cat "$out.err" >&2; fail "no profile $out.folded"; }
}

# offcpu_us FOLDED REGEX: the microseconds of the stacks whose frames
# (joined by ';') match REGEX.
offcpu_us() {
	awk -v re="$2" '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s); if (s ~ re) t += n }
		END { printf "%d\n", t }' "$1"
}

# offcpu_value FILE NAME: the value of a "name value" line of a workload.
offcpu_value() {
	awk -v k="$2" '$1 == k { print $2 }' "$1"
}
