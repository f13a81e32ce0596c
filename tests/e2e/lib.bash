# Shared by the end-to-end tests: paths, a scratch directory, background
# workloads that are always reaped, and assertions that say what failed.
# Sourced, not run. Every test runs the real sampler on real eBPF.
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
