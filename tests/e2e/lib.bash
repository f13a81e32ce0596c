# Shared by the end-to-end tests: paths, a scratch directory, background
# workloads that are always reaped, and assertions that say what failed.
# Sourced, not run (once: helpers that source it may be combined). Every
# test runs the real sampler on real eBPF.
[ -n "${EBPROF_E2E_LIB:-}" ] && return 0
EBPROF_E2E_LIB=1
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
EBPROF=$ROOT/build/ebprof
EX=$ROOT/build/examples
FOLDED_PY="/usr/bin/python3 $ROOT/tests/e2e/folded.py"
T=$(mktemp -d /tmp/ebprof-e2e.XXXXXX)
BG_PIDS=()

cleanup() {
	for p in "${BG_PIDS[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

ok() {
	echo "ok: $*"
}

# bg CMD...: start a workload in the background; its PID is in $BG.
bg() {
	"$@" >/dev/null 2>&1 &
	BG=$!
	BG_PIDS+=("$BG")
}

[ "$(id -u)" -eq 0 ] || fail "end-to-end tests need root (CAP_BPF and CAP_PERFMON)"
[ -x "$EBPROF" ] || fail "$EBPROF is not built: run make"

# within VALUE EXPECTED TOLERANCE: true when |VALUE - EXPECTED| <= TOLERANCE.
within() {
	awk -v v="$1" -v e="$2" -v t="$3" 'BEGIN { d = v - e; if (d < 0) d = -d; exit !(d <= t) }'
}

# at_least VALUE MIN
at_least() {
	awk -v v="$1" -v m="$2" 'BEGIN { exit !(v >= m) }'
}

# summary_field FILE WORDS: the number before WORDS in record's summary FILE.
summary_field() {
	sed -n "s/.* \([0-9][0-9]*\) $2.*/\1/p" "$1" | head -1
}

# summary_accounts FILE NAME: every sample in record's summary FILE ends
# one way: samples = recorded (copies unwound in user space included) +
# filtered + idle + lost, exactly; fails naming NAME if not. Sets
# ACCOUNTS to the sum written out, and COPIED to the samples copied.
summary_accounts() {
	local f=$1 name=$2 samples recorded filtered idle lost
	samples=$(summary_field "$f" samples)
	recorded=$(summary_field "$f" recorded)
	filtered=$(summary_field "$f" "filtered out")
	idle=$(summary_field "$f" idle)
	lost=$(sed -n 's/^ebprof: lost \([0-9]*\) samples.*/\1/p' "$f")
	COPIED=$(summary_field "$f" "samples copied before their tables")
	ACCOUNTS="$samples = $recorded recorded + $filtered filtered + $idle idle + $lost lost"
	[ -n "$samples" ] && [ -n "$recorded" ] && [ -n "$lost" ] ||
		fail "$name: no sample accounting in the summary: $(cat "$f")"
	[ "$samples" -eq $((recorded + filtered + idle + lost)) ] ||
		fail "$name: $samples samples != $recorded recorded + $filtered filtered +" \
			"$idle idle + $lost lost (${COPIED:-0} copied): $(grep -E 'samples|copied' "$f")"
}

# shortlived_named FOLDED TOTAL [WHERE]: the percent of examples/shortlived's
# children's TOTAL samples in FOLDED that are named, in NAMED, and what it
# is made of, in NAMED_PARTS; below 95% shows the unnamed stacks and fails
# (WHERE, such as " in the spool", says where the samples were read). Named:
# - in the child's burn_NNN, or, before main, in the dynamic loader's
#   start-up (_dl_start down to init_cpu_features: its CPUID probing is slow
#   under virtualization, 2-6% of a 30 ms child here, and those frames are
#   named too; only burn_NNN cannot be on such a stack yet);
# - or at the end, in do_exit once the process's memory is let go
#   (exit_mm): no profiler can read its user stack past the pc there, which
#   is named (_exit). Its interrupts-off stretches collect the ticks of a
#   loaded VM: 0-2% of the samples, 6.9% in one CI run (the collectd test).
shortlived_named() {
	local f=$1 total=$2 where=${3:-} named loader exiting
	named=$($FOLDED_PY "$f" has shortlived '^(burn_[0-9]{3}|_dl_start)$')
	loader=$($FOLDED_PY "$f" has shortlived '^_dl_start$')
	exiting=$($FOLDED_PY "$f" exiting shortlived)
	NAMED=$(python3 -c "print('%.2f' % ($named + $exiting))")
	NAMED_PARTS="the loader's start-up $loader%, the exit once the memory is gone $exiting%"
	at_least "$NAMED" 95 && return 0
	grep '^shortlived;' "$f" | grep -v 'burn_[0-9]\|;_dl_start;\|^shortlived;_exit;.*;do_exit_\[k\]' |
		sort -t' ' -k2 -n -r | head
	fail "named in only $NAMED% of the children's $total samples$where (burn_NNN, or $NAMED_PARTS; want >= 95%)"
}

# cpu_ticks PID: the process's user + system time so far, in clock ticks
# (fields 14 and 15 of /proc/PID/stat, counted after the comm's ')').
cpu_ticks() {
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || { echo 0; return; }
	stat=${stat##*) }
	awk '{ print $12 + $13 }' <<<"$stat"
}

# wait_cpu CPU_SECONDS MAX_WALL PID...: returns once every PID has used
# CPU_SECONDS of CPU since the call, or after MAX_WALL seconds. A test that
# needs N samples waits for CPU time, not wall time, so a machine shared
# with other jobs gives it the same samples, only later.
wait_cpu() {
	local cpu=$1 max=$2 start=$SECONDS hz p i done
	shift 2
	local pids=("$@") base=()
	hz=$(getconf CLK_TCK)
	for p in "${pids[@]}"; do base+=("$(cpu_ticks "$p")"); done
	while [ $((SECONDS - start)) -lt "$max" ]; do
		sleep 0.2
		done=1
		for i in "${!pids[@]}"; do
			[ $(( $(cpu_ticks "${pids[$i]}") - ${base[$i]} )) -ge $((cpu * hz)) ] || done=0
		done
		[ "$done" -eq 1 ] && return 0
	done
}

# wait_sampling FILE: waits until the `ebprof record` whose stderr goes to
# FILE says it samples. Loading takes a while (the verifier checks the
# table unwinder: 1-4 s on the shared 2-core guest, more under emulation),
# so a workload's CPU is counted (wait_cpu) from then, not from the
# record's launch, or the recording is cut short by its load time.
wait_sampling() {
	wait_for 120 grep -qs '^ebprof: sampling' "$1" ||
		fail "ebprof record did not start sampling: $(cat "$1" 2>/dev/null)"
}

# wait_for SECONDS COMMAND...: polls COMMAND every 0.2 s until it succeeds.
wait_for() {
	local tries=$(( $1 * 5 ))
	shift
	for _ in $(seq "$tries"); do
		"$@" && return 0
		sleep 0.2
	done
	return 1
}

# flamegraph_pl: the path of flamegraph.pl, the anchor our folded output and
# SVG are compared with. It is not packaged in Debian; the project's anchors
# (../shared/anchors/FlameGraph, unchanged, CDDL) sit beside the checkout, or
# FLAMEGRAPH_PL names it. Fails, never skips, when it cannot be found.
flamegraph_pl() {
	local p
	for p in "${FLAMEGRAPH_PL:-}" "$ROOT/../shared/anchors/FlameGraph/flamegraph.pl" \
		/work/shared/anchors/FlameGraph/flamegraph.pl; do
		[ -n "$p" ] && [ -f "$p" ] && { echo "$p"; return 0; }
	done
	fail "flamegraph.pl not found: set FLAMEGRAPH_PL to its path (the anchors' FlameGraph/flamegraph.pl)"
}
