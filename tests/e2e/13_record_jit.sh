# A Node.js function run with --perf-basic-prof exists only as JIT code; its
# name comes from /tmp/perf-PID.map and it is marked as a JIT frame.
source "$(dirname "$0")/lib.bash"
command -v node >/dev/null || fail "node is not installed (make deps installs nodejs)"

node --perf-basic-prof "$ROOT/examples/jit.js" 8 >/dev/null 2>&1 &
A=$!; BG_PIDS+=("$A")
sleep 2 # let V8 optimise hotJitFunction and write the map
"$EBPROF" record -p "$A" -F 499 -d 3 --format folded -o "$T/jit.folded" \
	2>"$T/summary" || fail "ebprof record exited $?: $(cat "$T/summary")"
rm -f "/tmp/perf-$A.map"

pct=$($FOLDED_PY "$T/jit.folded" has node 'hotJitFunction.*_\[j\]$')
at_least "$pct" 50 || {
	sort -k2 -n -t' ' "$T/jit.folded" | tail -5
	fail "hotJitFunction_[j] in only $pct% of samples"
}
ok "hotJitFunction named as a JIT frame in $pct% of samples"
