"""Section 9 of bench.py: what off-CPU profiling costs per context switch.

A pipe ping-pong between two processes pinned to one CPU (pingpong.c)
switches a few hundred thousand times a second. Its throughput is measured
alone, under `ebprof record --mode offcpu` system-wide (every switch of the
machine runs the program), and under `perf sched record -a` (BCC's
offcputime is not packaged for Debian 12, so perf is the anchor); with
kernel.bpf_stats_enabled, the kernel's own run_time_ns / run_cnt of the
switch program gives its cost per switch. Runs are paired and shuffled as
the other sections' are; medians are reported.
"""
import json
import os
import subprocess
import time

SWITCHES_PER_TRIP = 2  # one process blocks in read(), the other runs


def _switch_prog():
    """(run_time_ns, run_cnt) of the loaded ebprof_switch program(s)."""
    out = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True,
                         check=True).stdout
    ns = cnt = 0
    for p in json.loads(out or "[]"):
        if p.get("type") == "tracing" and p.get("name", "").startswith("ebprof_switch"):
            ns += p.get("run_time_ns", 0)
            cnt += p.get("run_cnt", 0)
    return ns, cnt


def _pingpong(tools, seconds):
    out = subprocess.run([os.path.join(tools, "pingpong"), str(seconds), "0"],
                         capture_output=True, text=True, check=True, timeout=seconds + 60).stdout
    got = dict(line.split() for line in out.splitlines() if line.strip())
    return float(got["round_trips"]) * SWITCHES_PER_TRIP / float(got["seconds"])


def _start(argv, tmp, ready, name):
    err = open(os.path.join(tmp, name + ".err"), "w")
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, cwd=tmp)
    for _ in range(600):
        if proc.poll() is not None:
            raise RuntimeError("%s exited %d" % (name, proc.returncode))
        if ready():
            break
        time.sleep(0.05)
    else:
        raise RuntimeError("%s did not start" % name)
    time.sleep(0.5)
    return proc, err


def _stop(proc, err):
    proc.send_signal(2)
    proc.wait(120)
    err.close()


def _run(kind, ebprof, tools, tmp, seconds):
    """Switches a second of the ping-pong under kind, and ns per switch (ebprof)."""
    if kind == "none":
        return _pingpong(tools, seconds), None
    if kind.startswith("ebprof"):
        errpath = os.path.join(tmp, "ebprof.err")
        argv = [ebprof, "record", "--mode", "offcpu", "-d", "100000", "--format", "folded",
                "-o", os.path.join(tmp, "offcpu.folded")]
        if kind == "ebprof-fp":
            argv += ["--unwind", "fp"]
        proc, err = _start(argv, tmp, lambda: "sampling" in open(errpath).read(), "ebprof")
    else:
        data = os.path.join(tmp, "perf-sched.data")
        argv = ["perf", "sched", "record", "-a", "-o", data]
        proc, err = _start(argv, tmp, lambda: os.path.exists(data) and os.path.getsize(data) > 0,
                           "perf")
    try:
        ns0, cnt0 = _switch_prog()
        rate = _pingpong(tools, seconds)
        ns1, cnt1 = _switch_prog()
    finally:
        _stop(proc, err)
    per_switch = (ns1 - ns0) / (cnt1 - cnt0) if kind != "perf" and cnt1 > cnt0 else None
    return rate, per_switch


def section_offcpu(bench, ebprof, tools, median):
    """Adds the rows of section 9 to bench.res."""
    seconds = bench.dur(5, 1)
    reps = bench.reps
    with open("/proc/sys/kernel/bpf_stats_enabled") as f:
        saved = f.read().strip()
    rates = {"none": [], "ebprof": [], "ebprof-fp": [], "perf": []}
    lost = {"ebprof": [], "ebprof-fp": [], "perf": []}
    per_switch = {"ebprof": [], "ebprof-fp": []}
    try:
        subprocess.run(["sysctl", "-q", "kernel.bpf_stats_enabled=1"], check=True)
        for _ in range(reps):
            order = ["none", "ebprof", "ebprof-fp", "perf"]
            bench.rng.shuffle(order)
            got = {k: _run(k, ebprof, tools, bench.tmp, seconds) for k in order}
            for k in rates:
                rates[k].append(got[k][0])
            for k in lost:
                lost[k].append(100.0 * (1 - got[k][0] / got["none"][0]))
            for k in per_switch:
                if got[k][1] is not None:
                    per_switch[k].append(got[k][1])
    finally:
        subprocess.run(["sysctl", "-q", "kernel.bpf_stats_enabled=" + saved])
    note = "pipe ping-pong, two processes on CPU 0"
    bench.res.add("9 offcpu", "switches/s alone", "none", median(rates["none"]), "/s", "",
                  "", None, None, reps, note)
    bench.res.add("9 offcpu", "throughput lost", "ebprof --mode offcpu", median(lost["ebprof"]),
                  "%", "", "perf sched record", median(lost["perf"]), None, reps,
                  note + "; system-wide")
    bench.res.add("9 offcpu", "throughput lost", "ebprof --mode offcpu --unwind fp",
                  median(lost["ebprof-fp"]), "%", "", "perf sched record", median(lost["perf"]),
                  None, reps, note + "; system-wide")
    for k, variant in (("ebprof", "ebprof --mode offcpu"),
                       ("ebprof-fp", "ebprof --mode offcpu --unwind fp")):
        if per_switch[k]:
            bench.res.add("9 offcpu", "BPF ns/switch", variant, median(per_switch[k]), "ns", "",
                          "", None, None, reps, "run_time_ns / run_cnt of ebprof_switch")
