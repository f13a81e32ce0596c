#!/usr/bin/env python3
"""What bpf_find_vma() would cost a sample: the probe findvma.bpf.c (a
perf_event program that asks for the mapping of every user pc it
interrupts) and the empty floor program run at once, each on its own
CPU-clock events at HZ on every CPU, while ticks.c keeps every CPU busy
DEPTH frames deep in user code. So both sample the same ticks of the same
threads, and the guest's drift is shared. Each round reads both
programs' run time and run count from the kernel's BPF statistics over
SECONDS, the probe's counters (user ticks, mappings found, of a file,
refused as busy), and the irq-work interrupts the machine took
(/proc/interrupts, IWI): the probe cannot release the process's mmap lock
from the timer interrupt and queues the release as one.

Prints each round, then the medians: ns per run of each, their difference
with its 95% interval, and irq-work interrupts per call. The run times
leave out what the queued interrupt costs after the program returns.

Usage: findvma.py HZ SECONDS ROUNDS DEPTH
(from the repository's root, after `make bench-tools`)
"""
import json, os, signal, statistics, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import bpf_progs, bpf_stats_on, bpf_stats_restore, ci95, interrupts  # noqa: E402

if len(sys.argv) != 5:
    sys.exit(__doc__)
HZ, SECS, ROUNDS, DEPTH = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
TOOLS = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "build", "bench"))
PROBES = [("floor", "floor.bpf.o", "bench_floor"), ("find_vma", "findvma.bpf.o", "bench_find_vma")]


def counters(prog_id):
    """The probe's .bss counters, by name."""
    prog = json.loads(subprocess.run(["bpftool", "-j", "prog", "show", "id", str(prog_id)],
                                     capture_output=True, text=True, check=True).stdout)
    for map_id in prog.get("map_ids", []):
        dump = json.loads(subprocess.run(["bpftool", "-j", "map", "dump", "id", str(map_id)],
                                         capture_output=True, text=True, check=True).stdout)
        for entry in dump:
            fields = entry.get("formatted", {}).get("value", {}).get(".bss")
            if fields:
                return {k: v for f in fields for k, v in f.items()}
    sys.exit("findvma: no .bss counters in program %d" % prog_id)


def snapshot(ids):
    progs = bpf_progs()
    return ({n: progs[i][1:] for n, i in ids.items()}, counters(ids["find_vma"]), interrupts("IWI"))


def one_round():
    procs, ids = [], {}
    try:
        for name, obj, prog in PROBES:
            before = set(bpf_progs())
            procs.append(subprocess.Popen([os.path.join(TOOLS, "floor"),
                                           os.path.join(TOOLS, obj), HZ, prog],
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                          text=True))
            line = procs[-1].stdout.readline()
            if not line.startswith("floor: attached"):
                sys.exit("findvma: %s did not attach: %s" % (obj, procs[-1].stderr.read()[-800:]))
            new = [i for i, p in bpf_progs().items() if i not in before and p[0] == prog]
            if len(new) != 1:
                sys.exit("findvma: cannot tell %s's program among %s" % (obj, new))
            ids[name] = new[0]
        subprocess.run([os.path.join(TOOLS, "ticks"), "0.3", DEPTH], capture_output=True,
                       check=True)  # warm
        t0 = snapshot(ids)
        subprocess.run([os.path.join(TOOLS, "ticks"), str(SECS), DEPTH], capture_output=True,
                       check=True)
        t1 = snapshot(ids)
    finally:
        for p in procs:
            p.send_signal(signal.SIGINT)
        for p in procs:
            p.wait()
    ns = {n: (t1[0][n][0] - t0[0][n][0]) / max(t1[0][n][1] - t0[0][n][1], 1) for n in ids}
    counts = {k: t1[1][k] - t0[1][k] for k in t1[1]}
    return ns, counts, t1[2] - t0[2]


def main():
    for tool in ("floor", "floor.bpf.o", "findvma.bpf.o", "ticks"):
        if not os.path.exists(os.path.join(TOOLS, tool)):
            sys.exit("findvma: no build/bench/%s: run make bench-tools" % tool)
    saved = bpf_stats_on()
    rows = []
    try:
        for r in range(ROUNDS):
            ns, counts, iwi = one_round()
            rows.append((ns, counts, iwi))
            print("round %d: floor %.0f ns, find_vma %.0f ns a run; user ticks %d, found %d, "
                  "of a file %d, busy %d; irq-work interrupts %d" % (
                      r, ns["floor"], ns["find_vma"], counts["calls"], counts["found"],
                      counts["in_file"], counts["busy"], iwi), flush=True)
    finally:
        bpf_stats_restore(saved)
    diffs = [row[0]["find_vma"] - row[0]["floor"] for row in rows]
    per_call = [row[2] / max(row[1]["calls"], 1) for row in rows]
    ci = ci95(diffs)
    print("median ns per run: floor %.0f, find_vma %.0f; find_vma above the floor %.0f ns%s; "
          "irq-work interrupts per call %.2f" % (
              statistics.median(r[0]["floor"] for r in rows),
              statistics.median(r[0]["find_vma"] for r in rows), statistics.median(diffs),
              " (95%% interval %.0f..%.0f)" % ci if ci else "", statistics.median(per_call)))


main()
