"""Compares folded profiles: ebprof's against perf's, and either against a
known answer. Every check prints what it measured; any failed check makes
the exit status 1, so a drop in accuracy fails the test that asked.

Usage: compare.py COMMAND [OPTIONS]

  diff     --ours F --perf F --proc NAME... [--fde ELF]... [--fp-bin ELF]...
           The differential test. On the samples of the named processes:
             0. both have as many samples, within 10%;
             1. at least 9 of perf's top 10 self functions are in our top 10
                (when perf has n < 10 functions: at least n - 1 of them);
             2. every function above 5% in either profile agrees within
                +-3 percentage points;
             3. for each of those functions, the most common chain of
                callers is the same in both, counting only frames of code
                built with frame pointers (--fp-bin executables, and the
                kernel, whose stacks both take from the kernel's unwinder).
           --fde ELF names the unnamed code of a stripped ELF by function:
           each [ELF+0xOFF] frame becomes the .eh_frame FDE (one per
           function) that holds OFF, in both profiles alike.

  expect   --folded F --proc NAME --funcs A,B,C --want 50,30,20
           [--perf F] [--min-samples N] [--cover PCT]
           Ground truth: each function's share of the samples whose leaf is
           one of FUNCS is within +-3 points of WANT, with at least N samples
           of the process (default 5000), and FUNCS together are the leaf of
           at least PCT% (default 95) of the process's samples.

  fidelity --ours F --perf F --proc NAME --chain 'main;f;g;leaf'...
           [--want-ours PCT] [--agree PTS]
           Which share of the samples whose leaf ends a known chain carry
           that whole chain, ours and perf's. Fails when ours is below
           --want-ours, or differs from perf's by more than --agree points.

  table    FILE
           Prints the rows collected in FILE (tab-separated: workload, what,
           expected, ebprof, perf) as an aligned table.

Rows for the table go to the file named by $ACC_TABLE, when it is set.
"""
import argparse
import bisect
import os
import re
import subprocess
import sys
from collections import Counter, defaultdict

TOL = 3.0  # percentage points, for every share comparison
COUNT_TOL = 0.10  # relative, for sample counts over one window
FAILED = []


def check(ok, msg):
    print(("ok:   " if ok else "FAIL: ") + msg)
    if not ok:
        FAILED.append(msg)


def row(workload, what, expected, ours, perf):
    path = os.environ.get("ACC_TABLE")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write("\t".join([workload, what, expected, ours, perf]) + "\n")


def load(path, procs):
    """Counter of stack tuple -> samples, for the given process names."""
    stacks = Counter()
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            stack, _, count = line.rpartition(" ")
            frames = tuple(stack.split(";"))
            if frames[0] in procs:
                stacks[frames] += int(count)
    return stacks


class Fdes:
    """Function ranges of stripped ELF files, from their .eh_frame."""

    def __init__(self, paths):
        self.by_name = {}
        for path in paths:
            out = subprocess.run(["readelf", "--debug-dump=frames", path], check=True,
                                 capture_output=True, text=True).stdout
            ranges = sorted((int(a, 16), int(b, 16)) for a, b in
                            re.findall(r"FDE cie=\w+ pc=([0-9a-f]+)\.\.([0-9a-f]+)", out))
            if not ranges:
                sys.exit(f"compare: {path} has no .eh_frame FDEs")
            self.by_name[os.path.basename(path)] = ranges

    def name(self, frame):
        m = re.match(r"^\[(.+)\+0x([0-9a-f]+)\]$", frame)
        if not m or m.group(1) not in self.by_name:
            return frame
        ranges, off = self.by_name[m.group(1)], int(m.group(2), 16)
        i = bisect.bisect_right(ranges, (off, float("inf"))) - 1
        if i >= 0 and ranges[i][0] <= off < ranges[i][1]:
            return f"[{m.group(1)}:fn@0x{ranges[i][0]:x}]"
        return frame

    def stacks(self, stacks):
        out = Counter()
        for s, c in stacks.items():
            out[tuple(self.name(f) for f in s)] += c
        return out


def self_shares(stacks):
    total = sum(stacks.values())
    leaf = Counter()
    for s, c in stacks.items():
        leaf[s[-1] if len(s) > 1 else "[no frames]"] += c
    return {f: 100.0 * c / total for f, c in leaf.items()}, leaf, total


def top(counts, n=10):
    return [f for f, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n]]


def noise_tie(ours, tenth):
    """
    True when a function we rank below 10th differs from our 10th function by
    no more than sampling noise: three standard deviations of the difference
    of two Poisson counts. Ranks among functions with a handful of samples
    each (the 0.1% tail) swap from run to run in both profilers; a rank there
    says nothing about accuracy, and a test that failed on it would fail by
    chance. Functions with real weight never pass as a tie.
    """
    return tenth - ours <= 3.0 * (tenth + ours) ** 0.5


def fp_names(paths):
    names = set()
    for path in paths:
        out = subprocess.run(["nm", "--defined-only", path], check=True,
                             capture_output=True, text=True).stdout
        names.update(line.split()[-1] for line in out.splitlines() if len(line.split()) == 3)
    return names


def callers(stacks, func, keep):
    """The most common chain above FUNC, frames limited to KEEP, and its share."""
    chains = Counter()
    for s, c in stacks.items():
        if s[-1] == func:
            chains[";".join(f for f in s[1:-1] if keep(f))] += c
    if not chains:
        return "", 0.0
    chain, c = chains.most_common(1)[0]
    return chain, 100.0 * c / sum(chains.values())


def cmd_diff(a):
    fdes = Fdes(a.fde)
    ours = fdes.stacks(load(a.ours, a.proc))
    perf = fdes.stacks(load(a.perf, a.proc))
    label = a.label or a.proc[0]
    o_share, o_count, o_total = self_shares(ours)
    p_share, p_count, p_total = self_shares(perf)
    print(f"{label}: ebprof {o_total} samples, perf {p_total} samples")
    check(o_total >= a.min_samples and p_total >= a.min_samples,
          f"{label}: at least {a.min_samples} samples each (ebprof {o_total}, perf {p_total})")
    if not o_total or not p_total:
        return
    # Same processes, same window, same frequency: the counts must match too.
    # record_both opens one window for both; a sampler that loses samples
    # silently loses more than the tolerance.
    ratio = o_total / p_total
    check(abs(ratio - 1) <= COUNT_TOL, f"{label}: ebprof has {100 * (ratio - 1):+.1f}% samples "
          f"vs perf over the same window (within {100 * COUNT_TOL:g}%)")
    row(label, "samples, ebprof vs perf", f"+-{100 * COUNT_TOL:g}%", str(o_total), str(p_total))

    p_top, o_top = top(p_count), top(o_count)
    need = max(len(p_top) - 1, 0) if len(p_top) < 10 else 9
    found, tied = [], []
    print(f"{label}: perf's top {len(p_top)} self functions:")
    for f in p_top:
        note = ""
        if f in o_top:
            found.append(f)
        elif noise_tie(o_count.get(f, 0), o_count[o_top[-1]]):
            tied.append(f)
            note = "(ties our 10th within sampling noise) "
        else:
            note = "(not in our top 10) "
        print(f"    {p_share[f]:6.2f}%  ebprof {o_share.get(f, 0):6.2f}%  {note}{f}")
    check(len(found) + len(tied) >= need,
          f"{label}: {len(found)} of perf's top {len(p_top)} self functions in our top 10, "
          f"{len(tied)} more tied with our 10th (need {need})")
    row(label, "perf's top 10 in our top 10", f">={need}", str(len(found) + len(tied)),
        str(len(p_top)))

    keep_names = fp_names(a.fp_bin)
    keep = lambda f: f.endswith("_[k]") or f in keep_names
    hot = sorted({f for f, s in list(o_share.items()) + list(p_share.items()) if s > 5.0},
                 key=lambda f: -p_share.get(f, 0))
    for f in hot:
        o, p = o_share.get(f, 0.0), p_share.get(f, 0.0)
        check(abs(o - p) <= TOL, f"{label}: self {f}: ebprof {o:.2f}% vs perf {p:.2f}% "
              f"(within {TOL:g} points)")
        row(label, f"self {f}", "", f"{o:.1f}%", f"{p:.1f}%")
        if not a.fp_bin:
            continue
        oc, ocs = callers(ours, f, keep)
        pc, pcs = callers(perf, f, keep)
        check(oc == pc, f"{label}: callers of {f}: ebprof '{oc}' ({ocs:.0f}% of its samples) "
              f"vs perf '{pc}' ({pcs:.0f}%)")
    if not a.fp_bin:
        print(f"{label}: callers not compared: no code here has frame pointers")


def cmd_expect(a):
    stacks = load(a.folded, [a.proc])
    perf = load(a.perf, [a.proc]) if a.perf else None
    funcs = a.funcs.split(",")
    want = [float(w) for w in a.want.split(",")]
    label = a.label or a.proc

    def shares(st):
        _, count, total = self_shares(st)
        among = sum(count.get(f, 0) for f in funcs)
        return [100.0 * count.get(f, 0) / among if among else 0 for f in funcs], among, total

    o, o_among, o_total = shares(stacks)
    p = shares(perf)[0] if perf else None
    check(o_total >= a.min_samples, f"{label}: {o_total} samples (need {a.min_samples} for a "
          f"+-{TOL:g} test)")
    cover = 100.0 * o_among / o_total if o_total else 0
    check(cover >= a.cover, f"{label}: {','.join(funcs)} are the leaf of {cover:.1f}% of the "
          f"samples (need {a.cover:g}%)")
    for i, f in enumerate(funcs):
        ps = f"{p[i]:.1f}%" if p else "-"
        check(abs(o[i] - want[i]) <= TOL, f"{label}: {f} {o[i]:.2f}% of {o_among} samples "
              f"(want {want[i]:g} +-{TOL:g}; perf {ps})")
        row(label, f"share {f}", f"{want[i]:g}%", f"{o[i]:.1f}%", ps)


def fidelity(stacks, chains):
    """Percent of the samples ending in a chain's leaf that carry the whole chain."""
    by_leaf = {c[-1]: c for c in chains}
    hit = total = 0
    for s, c in stacks.items():
        chain = by_leaf.get(s[-1])
        if chain is None:
            continue
        total += c
        if s[-len(chain):] == chain:
            hit += c
    return 100.0 * hit / total if total else 0.0, total


def cmd_fidelity(a):
    chains = [tuple(c.split(";")) for c in a.chain]
    o, on = fidelity(load(a.ours, [a.proc]), chains)
    p, pn = fidelity(load(a.perf, [a.proc]), chains)
    label = a.label or a.proc
    print(f"{label}: complete chain in ebprof {o:.1f}% of {on}, perf {p:.1f}% of {pn}")
    check(on > 0 and pn > 0, f"{label}: both profiles have samples in the chains' leaves")
    check(o >= a.want_ours, f"{label}: ebprof's complete-chain share {o:.1f}% "
          f"(need >= {a.want_ours:g}%)")
    check(abs(o - p) <= a.agree, f"{label}: complete-chain share ebprof {o:.1f}% vs perf "
          f"{p:.1f}% (within {a.agree:g} points)")
    row(label, "complete call chain", a.expect or "", f"{o:.1f}%", f"{p:.1f}%")


def cmd_table(a):
    rows = [l.rstrip("\n").split("\t") for l in open(a.file, encoding="utf-8") if l.strip()]
    head = ["workload", "measure", "expected", "ebprof", "perf"]
    w = [max(len(r[i]) for r in rows + [head]) for i in range(5)]
    fmt = lambda r: "| " + " | ".join(c.ljust(w[i]) for i, c in enumerate(r)) + " |"
    print(fmt(head))
    print("|" + "|".join("-" * (x + 2) for x in w) + "|")
    for r in rows:
        print(fmt(r))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("diff")
    d.add_argument("--ours", required=True)
    d.add_argument("--perf", required=True)
    d.add_argument("--proc", action="append", required=True)
    d.add_argument("--fde", action="append", default=[])
    d.add_argument("--fp-bin", action="append", default=[])
    d.add_argument("--min-samples", type=int, default=1000)
    d.add_argument("--label")
    e = sub.add_parser("expect")
    e.add_argument("--folded", required=True)
    e.add_argument("--proc", required=True)
    e.add_argument("--funcs", required=True)
    e.add_argument("--want", required=True)
    e.add_argument("--perf")
    e.add_argument("--min-samples", type=int, default=5000)
    e.add_argument("--cover", type=float, default=95.0)
    e.add_argument("--label")
    f = sub.add_parser("fidelity")
    f.add_argument("--ours", required=True)
    f.add_argument("--perf", required=True)
    f.add_argument("--proc", required=True)
    f.add_argument("--chain", action="append", required=True)
    f.add_argument("--want-ours", type=float, default=0.0)
    f.add_argument("--agree", type=float, default=TOL)
    f.add_argument("--expect")
    f.add_argument("--label")
    t = sub.add_parser("table")
    t.add_argument("file")
    a = ap.parse_args()
    {"diff": cmd_diff, "expect": cmd_expect, "fidelity": cmd_fidelity, "table": cmd_table}[a.cmd](a)
    if FAILED:
        print(f"{len(FAILED)} check(s) failed", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
