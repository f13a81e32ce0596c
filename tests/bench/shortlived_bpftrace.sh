#!/bin/bash
# Short-lived processes: ebprof and bpftrace on the same loop, at once.
#
#   tests/bench/shortlived_bpftrace.sh [COUNT [MS]]    (defaults: 200 30)
#
# examples/shortlived starts COUNT processes, one after the other, each
# burning MS ms of CPU in its own burn_NNN and exiting. bpftrace runs the
# one-liner the issue names, which resolves user stacks when it exits, by
# which time every child is gone; ebprof record runs system-wide beside it.
# Prints, for each, the share of the children's samples with a burn_NNN
# frame. BCC's profile cannot run here (it needs kernel headers).
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
COUNT=${1:-200}
MS=${2:-30}
T=$(mktemp -d /tmp/ebprof-bench.XXXXXX)
trap 'rm -rf "$T"' EXIT
[ -x "$ROOT/build/examples/shortlived" ] && [ -x "$ROOT/build/ebprof" ] || {
	echo "run make first" >&2
	exit 1
}
command -v bpftrace >/dev/null || { echo "bpftrace is not installed" >&2; exit 1; }

bpftrace -e 'profile:hz:99 { @[comm, ustack] = count(); }' >"$T/bpftrace.out" 2>&1 &
BT=$!
"$ROOT/build/ebprof" record -F 99 -d 600 --format folded -o "$T/ebprof.folded" \
	2>"$T/ebprof.summary" &
EB=$!
sleep 3 # bpftrace compiles its program for a second or two
"$ROOT/build/examples/shortlived" "$COUNT" "$MS"
kill -INT "$BT" "$EB"
wait "$BT" "$EB" || true

python3 - "$T/bpftrace.out" "$T/ebprof.folded" <<'PY'
import re, sys
named = re.compile(r"^burn_\d{3}(\+\d+)?$")

def bpftrace(path):
    # @[comm, \n frame\n frame\n]: count
    total = hit = 0
    comm, frames = None, []
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        m = re.match(r"^@\[(.*), $", line)
        if m:
            comm, frames = m.group(1), []
            continue
        m = re.match(r"^\]: (\d+)$", line)
        if m and comm is not None:
            if comm == "shortlived":
                n = int(m.group(1))
                total += n
                hit += n if any(named.match(f.strip()) for f in frames) else 0
            comm = None
            continue
        if comm is not None:
            frames.append(line)
    return total, hit

def folded(path):
    total = hit = 0
    for line in open(path, errors="replace"):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        frames = stack.split(";")
        if frames[0] != "shortlived":
            continue
        total += int(n)
        hit += int(n) if any(named.match(f) for f in frames[1:]) else 0
    return total, hit

for tool, (total, hit) in (("bpftrace", bpftrace(sys.argv[1])), ("ebprof", folded(sys.argv[2]))):
    print(f"{tool:9s} {hit:6d} of {total:6d} child samples named burn_NNN: "
          f"{100.0 * hit / total if total else 0:.1f}%")
PY
grep "new processes" "$T/ebprof.summary"
