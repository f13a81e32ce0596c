#!/usr/bin/env python3
"""The filtered path, paired: several builds of ebprof (and bpftrace, and the
empty-program floor) run at once, each profiling one sleeping process
(-p), while split7030 keeps every CPU busy, so every tick each program
sees is rejected. All pay for the same machine at the same moment, which
the one-after-the-other runs of bench.py cannot give on a shared 2-core
machine. ebprof runs with EBPROF_EVENTS=cpu: this measures the per-CPU
events' rejection (-c COMM, or -p past its per-thread limits), for with
an event on each thread of the process (-p's default) no other task's
tick reaches the program at all. Prints ns per run of each program (the kernel's BPF counters;
turned on for the run) per round and their medians.

Usage: filtered_pair.py HZ SECONDS ROUNDS (PATH-TO-EBPROF | bpftrace | floor)...
"""
import json, os, re, subprocess, sys, time, statistics, signal
HZ = int(sys.argv[1]); SECS = float(sys.argv[2]); REPS = int(sys.argv[3]); bins = sys.argv[4:]
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EX = os.path.join(ROOT, "build", "examples", "split7030")
def progs():
    out = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True).stdout
    return {p["id"]: (p.get("run_time_ns", 0), p.get("run_cnt", 0)) for p in json.loads(out or "[]") if p.get("type") == "perf_event"}
def ids_of(pid):
    ids = set()
    for fd in os.listdir("/proc/%d/fdinfo" % pid):
        try:
            m = re.search(r"^prog_id:\s+(\d+)", open("/proc/%d/fdinfo/%s" % (pid, fd)).read(), re.M)
        except OSError: continue
        if m: ids.add(int(m.group(1)))
    return ids
STATS = "/proc/sys/kernel/bpf_stats_enabled"
saved = open(STATS).read().strip()
open(STATS, "w").write("1")
bg = [subprocess.Popen([EX, "100000"]) for _ in range(os.cpu_count())]
sl = subprocess.Popen(["sleep", "100000"])
res = {b: [] for b in bins}
try:
    for r in range(REPS):
        before = set(progs()); procs = {}
        for b in (bins if r % 2 == 0 else bins[::-1]):
            if b == "floor":
                argv = [os.path.join(ROOT, "build", "bench", "floor"), os.path.join(ROOT, "build", "bench", "floor.bpf.o"), str(HZ)]
            elif b == "bpftrace":
                argv = ["bpftrace", "-e", "profile:hz:%d /pid == %d/ { @[kstack, ustack] = count(); }" % (HZ, sl.pid)]
            else:
                argv = b.split() + ["record", "-F", str(HZ), "-d", "100000", "--format", "folded", "-o", "/tmp/ebprof-pair-%d.folded" % len(procs), "-p", str(sl.pid)]
            procs[b] = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=open("/tmp/ebprof-pair-%d.err" % len(procs), "w"),
                                        env=dict(os.environ, EBPROF_EVENTS="cpu"))
        ids = {}
        for _ in range(600):
            p = progs()
            for b, pr in procs.items():
                if b not in ids:
                    mine = [i for i in ids_of(pr.pid) if i in p and i not in before]
                    if mine: ids[b] = mine
            if len(ids) == len(procs): break
            time.sleep(0.05)
        time.sleep(1.0)
        p0 = progs(); time.sleep(SECS); p1 = progs()
        for b in bins:
            ns = sum(p1[i][0] - p0[i][0] for i in ids[b]); cnt = sum(p1[i][1] - p0[i][1] for i in ids[b])
            res[b].append(ns / cnt if cnt else float("nan"))
        for pr in procs.values(): pr.send_signal(signal.SIGINT)
        for pr in procs.values():
            try: pr.wait(30)
            except subprocess.TimeoutExpired:
                pr.send_signal(signal.SIGINT)
                try: pr.wait(30)
                except subprocess.TimeoutExpired: pr.kill(); pr.wait()
        print(r, " ".join("%s=%.1f" % (os.path.basename(b.split()[0]), res[b][-1]) for b in bins), flush=True)
finally:
    for p in bg + [sl]: p.kill()
    open(STATS, "w").write(saved)
for b in bins:
    print("%-40s median %.1f  runs %s" % (b, statistics.median(res[b]), " ".join("%.0f" % x for x in res[b])))
