# Shared by the accuracy tests (tests/e2e/2*_accuracy_*.sh), after lib.bash:
# perf and ebprof recording the same processes over the same window, perf's
# samples collapsed into ebprof's folded form, and the comparisons.
# Sourced, not run.
ACC=$ROOT/tests/accuracy
COMPARE="/usr/bin/python3 $ACC/compare.py"
PERF=${PERF:-/usr/bin/perf}

[ -x "$PERF" ] || fail "$PERF is missing: the accuracy tests compare against perf (apt install linux-perf)"

# record_both CPU_SECONDS OUT_PREFIX PID...: ebprof and perf (-g) at 999 Hz on
# the same PIDs over the same window, stopped together (SIGINT, which both
# answer by writing what they have) once every PID has used CPU_SECONDS of
# CPU since the window opened. A fixed wall-clock window would give too few
# samples when other jobs share the CPUs; a CPU-time window gives the same
# count on a busy machine as on an idle one, only later (at most
# ACC_MAX_WALL s).
# The window opens on one instant for both: perf is set up with its events
# disabled (-D -1), ebprof is started and waited for until it says it
# samples (a line it writes once its events, one on each thread of the
# -p processes, are attached), and only then is perf enabled through its
# control FIFO, its acknowledgement awaited.
# Started together, each would begin sampling when its own set-up ended
# (perf's is the slower), a difference of windows rather than of samplers.
# Writes OUT_PREFIX.ebprof.folded and OUT_PREFIX.perf.folded. Both walk
# stacks by frame pointer unless ACC_UNWIND=dwarf, which makes ebprof use
# its tables and perf --call-graph dwarf (PERF_CALL_GRAPH) on the same
# samples.
record_both() {
	local cpu=$1 out=$2 perf_pid eb_pid rc p start=$SECONDS ack
	shift 2
	local pids=("$@") eargs=()
	for p in "${pids[@]}"; do eargs+=(-p "$p"); done
	rm -f "$out.ctl" "$out.ack"
	mkfifo "$out.ctl" "$out.ack" || fail "cannot make perf's control FIFOs at $out"
	"$PERF" record -q -F 999 ${PERF_CALL_GRAPH:--g} -D -1 --control "fifo:$out.ctl,$out.ack" \
		-p "$(IFS=,; echo "${pids[*]}")" -o "$out.perf.data" >"$out.perf.log" 2>&1 &
	perf_pid=$!
	"$EBPROF" record --unwind "${ACC_UNWIND:-fp}" "${eargs[@]}" -F 999 -d "${ACC_MAX_WALL:-120}" \
		--format folded -o "$out.ebprof.folded" 2>"$out.ebprof.log" &
	eb_pid=$!
	wait_started "$eb_pid" "$out.ebprof.log" 30 ||
		fail "ebprof record did not start sampling within 30 s: $(cat "$out.ebprof.log")"
	# Opening a FIFO blocks until the other end is open: both sides under a
	# timeout, so a perf that died at set-up fails the test instead of hanging it.
	timeout 30 bash -c 'echo enable >"$1"' _ "$out.ctl" ||
		fail "perf record took no 'enable' within 30 s: $(cat "$out.perf.log")"
	ack=$(timeout 30 head -n1 "$out.ack") ||
		fail "perf record did not acknowledge 'enable' within 30 s: $(cat "$out.perf.log")"
	[ "$ack" = ack ] || fail "perf record answered '$ack' to 'enable', not 'ack'"
	wait_cpu "$cpu" "${ACC_MAX_WALL:-120}" "${pids[@]}"
	kill -INT "$eb_pid" "$perf_pid" 2>/dev/null
	wait "$eb_pid"
	rc=$?
	[ "$rc" -eq 0 ] || fail "ebprof record exited $rc: $(cat "$out.ebprof.log")"
	wait "$perf_pid"
	rc=$?
	# perf record ends with the signal's status when it is interrupted
	[ "$rc" -eq 0 ] || [ "$rc" -eq 130 ] || fail "perf record exited $rc: $(cat "$out.perf.log")"
	perf_fold "$out.perf.data" "$out.perf.folded"
	echo "recorded $((SECONDS - start)) s of wall time for $cpu CPU-seconds per process"
	cat "$out.ebprof.log"
}

# wait_started PID LOG SECONDS: until the ebprof record PID has written
# its "sampling" line to LOG (after its events are attached); fails
# (status 1) if it exits or SECONDS pass first.
wait_started() {
	local pid=$1 log=$2 max=$3 start=$SECONDS
	while [ $((SECONDS - start)) -lt "$max" ]; do
		kill -0 "$pid" 2>/dev/null || return 1
		grep -qs '^ebprof: sampling' "$log" && return 0
		sleep 0.05
	done
	return 1
}

# perf_fold DATA OUT: perf's samples as folded stacks, by our own collapser.
# --no-inline: perf's dwarf mode would otherwise add the functions inlined
# at each pc (examples/clocksplit.h's helpers, inlined into run_chains),
# which neither ebprof nor a frame-pointer walk shows: like for like.
perf_fold() {
	"$PERF" script --no-inline -F comm,pid,tid,ip,sym,dso -i "$1" 2>"$1.script.log" |
		/usr/bin/python3 "$ACC/perf_collapse.py" >"$2" ||
		fail "collapsing perf's samples failed: $(cat "$1.script.log")"
	[ -s "$2" ] || fail "perf recorded no samples: $(cat "$1.script.log")"
}

# have_symbols BINARY NAME...: every NAME is a function in BINARY's symbol
# table, under that exact name, at an address no other NAME shares, and no
# clone of it (NAME.constprop.0, NAME.isra.0, NAME.part.0, NAME.cold) exists:
# the compiler neither inlined, cloned nor folded what the test expects.
have_symbols() {
	local bin=$1 name addr
	shift
	local syms
	syms=$(nm --defined-only "$bin") || fail "nm $bin failed"
	declare -A seen=()
	for name in "$@"; do
		addr=$(awk -v n="$name" '$3 == n && $2 ~ /^[Tt]$/ { print $1 }' <<<"$syms")
		[ -n "$addr" ] || fail "$bin: no function named $name (inlined or renamed?)"
		[ -z "${seen[$addr]:-}" ] ||
			fail "$bin: $name and ${seen[$addr]} share address $addr (identical-code folding)"
		seen[$addr]=$name
		! grep -qE " ${name}\.(constprop|isra|part|cold|clone)" <<<"$syms" ||
			fail "$bin: the compiler made a clone of $name: $(grep -E " ${name}\." <<<"$syms")"
	done
	ok "$(basename "$bin"): $# expected functions, each its own symbol"
}
