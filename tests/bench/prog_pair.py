#!/usr/bin/env python3
"""The BPF program's cost, paired between two builds of ebprof: both record
system-wide at once, each on its own perf events, while ticks.c keeps
every CPU busy DEPTH frames deep. So the two programs sample the same
ticks of the same threads, and the guest's drift (its vCPUs' speed moves
by several percent between runs here) is shared. Each round reads every
build's ebprof_sample run time and run count from the kernel's BPF
statistics over SECONDS, and prints ns per run; at the end, each build's
median and the median of the rounds' ratios B/A, with its 95% interval.
Swap A and B for a second run: the order of attach may favour one.

Usage: prog_pair.py HZ SECONDS ROUNDS DEPTH EBPROF-A EBPROF-B
(from the repository's root, after `make bench-tools`)
"""
import os, signal, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import bpf_progs, bpf_stats_on, bpf_stats_restore, ci95, prog_ids_of  # noqa: E402

if len(sys.argv) != 7:
    sys.exit(__doc__)
HZ, SECS, ROUNDS, DEPTH = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
BINS = sys.argv[5:7]
# More options for both builds' `ebprof record`, as in PROG_PAIR_ARGS="--no-user".
EXTRA = os.environ.get("PROG_PAIR_ARGS", "").split()
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TICKS = os.path.join(ROOT, "build", "bench", "ticks")


def sampler_stats(ids):
    """(run_time_ns, run_cnt) summed over ids' ebprof_sample programs."""
    progs = bpf_progs()
    return (sum(progs[i][1] for i in ids if i in progs),
            sum(progs[i][2] for i in ids if i in progs))


def one_round(tmp):
    procs, errs = [], []
    try:
        for i, b in enumerate(BINS):
            errs.append(os.path.join(tmp, "err%d" % i))
            with open(errs[-1], "w") as err:
                procs.append(subprocess.Popen(
                    [b, "record", "-F", HZ, "-d", "1000", "--format", "folded",
                     "-o", os.path.join(tmp, "out%d.folded" % i)] + EXTRA, stderr=err))
        for p, e in zip(procs, errs):
            for _ in range(600):
                if "ebprof: sampling" in open(e).read():
                    break
                if p.poll() is not None:
                    sys.exit("%s exited: %s" % (p.args[0], open(e).read()[-500:]))
                time.sleep(0.05)
        subprocess.run([TICKS, "0.5", DEPTH], capture_output=True, check=True)  # warm
        ids = [[i for i, p in bpf_progs().items() if p[0] == "ebprof_sample"
                and i in prog_ids_of(proc.pid)] for proc in procs]
        before = [sampler_stats(i) for i in ids]
        subprocess.run([TICKS, str(SECS), DEPTH], capture_output=True, check=True)
        after = [sampler_stats(i) for i in ids]
        return [(a[0] - b[0]) / (a[1] - b[1]) for a, b in zip(after, before)]
    finally:
        for p in procs:
            p.send_signal(signal.SIGINT)
        for p in procs:
            p.wait()


def main():
    if not os.path.exists(TICKS):
        sys.exit("no %s: run make bench-tools" % TICKS)
    saved = bpf_stats_on()
    res = {b: [] for b in BINS}
    try:
        with tempfile.TemporaryDirectory(prefix="prog_pair.") as tmp:
            for r in range(ROUNDS):
                for b, ns in zip(BINS, one_round(tmp)):
                    res[b].append(ns)
                print("round %d: %s" % (r, "  ".join("%s %.0f ns" % (b, res[b][-1])
                                                     for b in BINS)), flush=True)
    finally:
        bpf_stats_restore(saved)
    ratios = [b / a for a, b in zip(res[BINS[0]], res[BINS[1]])]
    ci = ci95(ratios)
    print("median ns per run: %s; ratio B/A %.3f%s, rounds %s" % (
        "  ".join("%s %.0f" % (b, statistics.median(res[b])) for b in BINS),
        statistics.median(ratios), " (95%% interval %.3f..%.3f)" % ci if ci else "",
        [round(x, 3) for x in ratios]))


main()
