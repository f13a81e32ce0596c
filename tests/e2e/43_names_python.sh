# CPython 3.11 frames, walked in BPF and named "qualname (file.py:line)",
# with Debian's own /usr/bin/python3.11 (not whatever python3 is on PATH):
#   - a function spinning on a known line under 50 recursive Python calls:
#     of the samples that carry Python frames, >= 99% name spin() at the
#     HOT line with all 50 rec() frames and <module> under it; and >= 90%
#     of the samples inside the interpreter carry Python frames (the rest
#     are the few copied before the process's tables were loaded, unwound
#     in user space natively);
#   - a 70/30 CPU split between two Python functions within 3 points;
#   - Python -> C -> Python: a key function called by sorted() and a hook
#     called by json's C decoder come out above the Python frame that
#     called into C, with native frames between (>= 95% of their samples);
#   - threads: each of three threads and the main thread shows its own
#     function (worker_a/b/c under Thread.run, main_spin under <module>),
#     each in >= 10% of the process's Python samples;
#   - a Python started after ebprof: its frames from its first drains on
#     (whether it was first examined before its interpreter was up, and so
#     asked again at a later drain, depends on timing: not asserted);
#   - --no-python: no Python frames at all.
source "$(dirname "$0")/lib.bash"

PY=/usr/bin/python3.11
[ -x "$PY" ] || fail "$PY is missing: run make deps (Debian's python3.11)"
HOT=$(grep -n '# HOT' "$ROOT/examples/pydeep.py" | cut -d: -f1)

# Under its own name (a link to the same binary), so that its samples
# without Python frames can be told from the other Pythons'.
ln -s "$PY" "$T/pydeep"
bg "$T/pydeep" "$ROOT/examples/pydeep.py" 30; DEEP=$BG
bg "$PY" "$ROOT/examples/pysplit.py" 30; SPLIT=$BG
bg "$PY" "$ROOT/examples/pycallback.py" 30; CB=$BG
bg "$PY" "$ROOT/examples/pythreads.py" 30; THR=$BG
sleep 0.5
"$EBPROF" record -p "$DEEP" -p "$SPLIT" -p "$CB" -p "$THR" -F 499 -d 5 --format folded -o "$T/py.folded" \
	2>"$T/summary" || fail "ebprof record exited $?: $(cat "$T/summary")"
! grep -q 'warning' "$T/summary" || fail "unexpected warning: $(cat "$T/summary")"

/usr/bin/python3 - "$T/py.folded" "$HOT" <<'PYEOF' || fail "python frames wrong (above)"
import re, sys
path, hot = sys.argv[1], int(sys.argv[2])
stacks = []
for line in open(path, encoding="utf-8"):
    s, _, n = line.rstrip("\n").rpartition(" ")
    stacks.append((s.split(";"), int(n)))
bad = False

def py(frames):
    return [f[:-4] for f in frames if f.endswith("_[p]")]

# The recursion: samples with Python frames, and those right.
deep = [(f, n) for f, n in stacks if f[0] == "pydeep" and any(x.endswith("_[p]") for x in f)]
interp = sum(n for f, n in stacks if f[0] == "pydeep" and "_PyEval_EvalFrameDefault" in f)
with_py = sum(n for f, n in deep)
right = 0
for f, n in deep:
    p = py(f)
    if (len(p) == 52 and p[0] == "<module> (pydeep.py:24)" and
            all(re.fullmatch(r"rec \(pydeep\.py:2[01]\)", x) for x in p[1:51]) and
            p[51] == "spin (pydeep.py:%d)" % hot):
        right += n
pct = 100.0 * right / with_py if with_py else 0
cover = 100.0 * with_py / interp if interp else 0
print("deep: %d samples with Python frames, %.2f%% exactly <module>, 50 x rec, spin:%d; "
      "%.1f%% of %d interpreter samples carry Python frames" % (with_py, pct, hot, cover, interp))
if with_py < 500 or pct < 99.0 or cover < 90.0:
    top = sorted(deep, key=lambda x: -x[1])[:3]
    for f, n in top:
        print("  %d: %s" % (n, ";".join(py(f))))
    bad = True

# The split.
a = sum(n for f, n in stacks if any(x.startswith("hot70 (pysplit.py:") for x in f))
b = sum(n for f, n in stacks if any(x.startswith("hot30 (pysplit.py:") for x in f))
share = 100.0 * a / (a + b) if a + b else 0
print("split: hot70 %d, hot30 %d samples: %.1f%% (want 70 +- 3)" % (a, b, share))
if a + b < 500 or abs(share - 70) > 3:
    bad = True

# Python -> C -> Python: the callee's Python frame right above the
# interpreter's native frame, which C code called, under the caller's
# Python frame (<module> or raw_decode), with native frames between.
def through_c(callee, caller):
    hits = total = 0
    for f, n in stacks:
        at = [i for i, x in enumerate(f) if x.startswith(callee + " (pycallback.py:")]
        if not at:
            continue
        total += n
        i = at[0]
        up = [j for j in range(i) if f[j].endswith("_[p]")]
        if (up and f[up[-1]].startswith(caller + " (") and i - up[-1] >= 3 and
                f[i - 1] == "_PyEval_EvalFrameDefault" and
                not any(x.endswith("_[p]") for x in f[up[-1] + 1:i])):
            hits += n
    return hits, total

for callee, caller in (("sort_key", "<module>"), ("object_hook", "JSONDecoder.raw_decode")):
    hits, total = through_c(callee, caller)
    pct = 100.0 * hits / total if total else 0
    print("%s under %s through C: %.1f%% of %d samples" % (callee, caller, pct, total))
    if total < 100 or pct < 95:
        bad = True

# Threads: every Python stack of the process is one of the four, whole.
thr = [(py(f), n) for f, n in stacks if any("pythreads.py" in x for x in f)]
total = sum(n for p, n in thr)
for fn, root in (("worker_a", "Thread._bootstrap"), ("worker_b", "Thread._bootstrap"),
                 ("worker_c", "Thread._bootstrap"), ("main_spin", "<module>")):
    n = sum(c for p, c in thr if p and p[0].startswith(root + " (") and
            any(x.startswith(fn + " (pythreads.py:") for x in p) and
            p[-1].startswith("spin_until (pythreads.py:"))
    pct = 100.0 * n / total if total else 0
    print("threads: %s under %s: %.1f%% of %d" % (fn, root, pct, total))
    if pct < 10:
        bad = True
sys.exit(1 if bad else 0)
PYEOF
ok "python frames: $(grep -c '_\[p\]' "$T/py.folded") stacks with Python frames"

# Started under a running recording. (The other workloads but one stop, to
# leave it a CPU.)
kill "$SPLIT" "$CB" "$THR"
ln -s "$PY" "$T/pylate"
"$EBPROF" record -c pylate -F 499 -d 5 --drain-interval-ms 200 --format folded \
	-o "$T/late.folded" 2>"$T/summary3" &
REC=$!
BG_PIDS+=("$REC")
sleep 1
"$T/pylate" "$ROOT/examples/pydeep.py" 3 >/dev/null 2>&1 || fail "pylate exited $?"
wait "$REC" || fail "ebprof record -c pylate exited $?: $(cat "$T/summary3")"
/usr/bin/python3 - "$T/late.folded" <<'PYEOF' || fail "a Python started later has no Python frames"
import sys
stacks = []
for line in open(sys.argv[1], encoding="utf-8"):
    s, _, n = line.rstrip("\n").rpartition(" ")
    stacks.append((s.split(";"), int(n)))
interp = sum(n for f, n in stacks if f[0] == "pylate" and "_PyEval_EvalFrameDefault" in f)
spin = sum(n for f, n in stacks if f[0] == "pylate" and
           any(x.startswith("spin (pydeep.py:") for x in f))
pct = 100.0 * spin / interp if interp else 0
print("late start: %.1f%% of %d interpreter samples in spin() with its Python frames"
      % (pct, interp))
sys.exit(0 if interp >= 100 and pct >= 80 else 1)
PYEOF
ok "a Python started under the recording gets its frames"

"$EBPROF" record --no-python -p "$DEEP" -F 199 -d 1 --format folded -o "$T/nopy.folded" \
	2>"$T/summary2" || fail "ebprof record --no-python exited $?: $(cat "$T/summary2")"
! grep -q '_\[p\]' "$T/nopy.folded" || fail "--no-python: Python frames in the output"
grep -q '_PyEval_EvalFrameDefault' "$T/nopy.folded" ||
	fail "--no-python: the interpreter's own frames are missing"
ok "--no-python: native frames only"
