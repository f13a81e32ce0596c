"""Section 9 of bench.py: what off-CPU profiling costs per context switch.

A pipe ping-pong between two processes pinned to one CPU (pingpong.c)
switches a few hundred thousand times a second. Its throughput is measured
alone, under `ebprof record --mode offcpu` system-wide (every switch of the
machine runs the program), and under `perf sched record -a` (BCC's
offcputime is not packaged for Debian 12, so perf is the anchor); with
kernel.bpf_stats_enabled, the kernel's own run_time_ns / run_cnt of the
switch program gives its cost per switch. The floor, an empty program on
the same tracepoint (floor.bpf.c's bench_switch_floor: the tracepoint's
call into BPF and the run-time accounting, which no switch program can
avoid), is attached during the same ping-pong as ebprof, and alone; each
figure is stated above the floor of its own run. Runs are paired and
shuffled as the other sections' are; medians are reported.

The bare hand-off switches far more often than a service does. The same
ping-pong with some rounds of computation per hand-off is run alone, under
ebprof and under perf sched too: what a service of that switch rate loses
is that row's "throughput lost". The rounds are calibrated at the start of
the section so that the ping-pong alone switches SERVICE_RATE times a
second (the rate the off-CPU issue names), whatever this host's speed
that day: a fixed amount gave 141,000 switches a second on a slow day and
320,000 on a fast one.
"""
import json
import os
import subprocess
import time

SWITCHES_PER_TRIP = 2  # one process blocks in read(), the other runs
SERVICE_RATE = 100000  # switches a second of the service-rate ping-pong, alone


def _switch_prog(prefix):
    """(run_time_ns, run_cnt) of the loaded tracing programs named prefix*."""
    out = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True,
                         check=True).stdout
    ns = cnt = 0
    for p in json.loads(out or "[]"):
        if p.get("type") == "tracing" and p.get("name", "").startswith(prefix):
            ns += p.get("run_time_ns", 0)
            cnt += p.get("run_cnt", 0)
    return ns, cnt


def _per_run(before, after):
    """ns per run between two _switch_prog() readings; None without runs."""
    runs = after[1] - before[1]
    return (after[0] - before[0]) / runs if runs > 0 else None


def _pingpong(tools, seconds, work=0, nofp=False):
    """Switches a second of the ping-pong; nofp: examples/offcpu.c's, built without
    frame pointers (build/examples/offcpu-nofp), whose loop keeps six values live
    across its read() and write(), rbp among them, as code built the way Debian
    builds its packages does; it runs seconds after a settling second."""
    if nofp:
        argv = [os.path.join(tools, "..", "examples", "offcpu-nofp"), "pingpong", str(seconds)]
    else:
        argv = [os.path.join(tools, "pingpong"), str(seconds), "0", str(work)]
    out = subprocess.run(argv, capture_output=True, text=True, check=True,
                         timeout=seconds + 60).stdout
    got = dict(line.split() for line in out.splitlines() if line.strip())
    return float(got["round_trips"]) * SWITCHES_PER_TRIP / float(got.get("seconds", seconds))


def _service_work(tools, seconds):
    """pingpong's WORK (rounds of a multiply-add chain per hand-off) for which
    the ping-pong alone switches about SERVICE_RATE times a second: time per
    switch is taken as linear in WORK, fitted from the bare hand-off and a
    probe, then corrected once from a run at the fitted WORK."""
    per0 = 1.0 / _pingpong(tools, seconds)
    probe = 2000
    per1 = 1.0 / _pingpong(tools, seconds, probe)
    slope = max((per1 - per0) / probe, 1e-12)
    work = max(1, int((1.0 / SERVICE_RATE - per0) / slope))
    per = 1.0 / _pingpong(tools, seconds, work)
    slope = max((per - per0) / work, 1e-12)
    return max(1, int((1.0 / SERVICE_RATE - per0) / slope))


def _start(argv, tmp, ready, name, stdout=subprocess.DEVNULL):
    err = open(os.path.join(tmp, name + ".err"), "w")
    proc = subprocess.Popen(argv, stdout=stdout, stderr=err, cwd=tmp)
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


def _start_floor(tools, tmp):
    """The empty program on sched_switch (floor.c's switch mode), attached."""
    out = os.path.join(tmp, "floor.out")
    with open(out, "w") as f:
        return _start([os.path.join(tools, "floor"), os.path.join(tools, "floor.bpf.o"),
                       "switch"], tmp, lambda: "attached" in open(out).read(), "floor",
                      stdout=f)


def _run(kind, ebprof, tools, tmp, seconds, service_work):
    """Switches a second of the ping-pong under kind, ns per switch of ebprof's
    program (None but for ebprof) and of the floor's (None without it). A
    kind ending in "-service" runs the ping-pong with service_work rounds a hand-off."""
    work, nofp = 0, kind.endswith("-nofp")
    if kind.endswith("-service"):
        kind, work = kind[:-len("-service")], service_work
    if nofp:
        kind = kind[:-len("-nofp")]
    if kind == "none":
        return _pingpong(tools, seconds, work, nofp), None, None
    floor = None
    if kind.startswith("ebprof"):
        floor = _start_floor(tools, tmp)
        errpath = os.path.join(tmp, "ebprof.err")
        argv = [ebprof, "record", "--mode", "offcpu", "-d", "100000", "--format", "folded",
                "-o", os.path.join(tmp, "offcpu.folded")]
        if kind == "ebprof-fp":
            argv += ["--unwind", "fp"]
        proc, err = _start(argv, tmp, lambda: "sampling" in open(errpath).read(), "ebprof")
    elif kind == "floor":
        floor = proc, err = _start_floor(tools, tmp)
    else:
        data = os.path.join(tmp, "perf-sched.data")
        argv = ["perf", "sched", "record", "-a", "-o", data]
        proc, err = _start(argv, tmp, lambda: os.path.exists(data) and os.path.getsize(data) > 0,
                           "perf")
    try:
        ours0, floor0 = _switch_prog("ebprof_switch"), _switch_prog("bench_switch")
        rate = _pingpong(tools, seconds, work, nofp)
        ours1, floor1 = _switch_prog("ebprof_switch"), _switch_prog("bench_switch")
    finally:
        _stop(proc, err)
        if floor is not None and floor[0] is not proc:
            _stop(*floor)
    ours = _per_run(ours0, ours1) if kind.startswith("ebprof") else None
    return rate, ours, _per_run(floor0, floor1) if floor is not None else None


def section_offcpu(bench, ebprof, tools, median):
    """Adds the rows of section 9 to bench.res."""
    seconds = bench.dur(5, 1, 2)
    reps = bench.reps
    with open("/proc/sys/kernel/bpf_stats_enabled") as f:
        saved = f.read().strip()
    rates = {"none": [], "floor": [], "ebprof": [], "ebprof-fp": [], "perf": [],
             "none-service": [], "floor-service": [], "ebprof-service": [], "perf-service": [],
             "none-nofp": [], "ebprof-nofp": []}
    lost = {"floor": [], "ebprof": [], "ebprof-fp": [], "perf": [], "floor-service": [],
            "ebprof-service": [], "perf-service": [], "ebprof-nofp": []}
    per_switch = {"ebprof": [], "ebprof-fp": [], "ebprof-nofp": []}
    floor_ns = {"floor": [], "ebprof": [], "ebprof-fp": [], "ebprof-nofp": []}
    above = {"ebprof": [], "ebprof-fp": [], "ebprof-nofp": []}
    service_work = _service_work(tools, bench.dur(1, 0.5))
    try:
        subprocess.run(["sysctl", "-q", "kernel.bpf_stats_enabled=1"], check=True)
        for _ in range(reps):
            order = list(rates)
            bench.rng.shuffle(order)
            got = {k: _run(k, ebprof, tools, bench.tmp, seconds, service_work) for k in order}
            for k in rates:
                rates[k].append(got[k][0])
            for k in lost:
                alone = got["none" + k[k.index("-"):] if k.endswith(("-service", "-nofp"))
                            else "none"][0]
                lost[k].append(100.0 * (1 - got[k][0] / alone))
            for k in floor_ns:
                if got[k][2] is not None:
                    floor_ns[k].append(got[k][2])
            for k in per_switch:
                if got[k][1] is not None:
                    per_switch[k].append(got[k][1])
                    if got[k][2] is not None:
                        above[k].append(got[k][1] - got[k][2])
    finally:
        subprocess.run(["sysctl", "-q", "kernel.bpf_stats_enabled=" + saved])
    note = "pipe ping-pong, two processes on CPU 0"
    bench.res.add("9 offcpu", "switches/s alone", "none", median(rates["none"]), "/s", "",
                  "", None, None, reps, note)
    bench.res.add("9 offcpu", "throughput lost", "floor (empty tp_btf/sched_switch)",
                  median(lost["floor"]), "%", "", "", None, None, reps, note + "; system-wide")
    bench.res.add("9 offcpu", "throughput lost", "ebprof --mode offcpu", median(lost["ebprof"]),
                  "%", "", "perf sched record", median(lost["perf"]), None, reps,
                  note + "; system-wide")
    bench.res.add("9 offcpu", "throughput lost", "ebprof --mode offcpu --unwind fp",
                  median(lost["ebprof-fp"]), "%", "", "perf sched record", median(lost["perf"]),
                  None, reps, note + "; system-wide")
    for k, variant in (("ebprof", "ebprof --mode offcpu"),
                       ("ebprof-fp", "ebprof --mode offcpu --unwind fp"),
                       ("ebprof-nofp", "ebprof --mode offcpu, ping-pong without frame pointers")):
        if per_switch[k]:
            bench.res.add("9 offcpu", "BPF ns/switch", variant, median(per_switch[k]), "ns", "",
                          "", None, None, reps, "run_time_ns / run_cnt of ebprof_switch")
        if above[k]:
            bench.res.add("9 offcpu", "BPF ns/switch above floor", variant, median(above[k]),
                          "ns", "", "floor, same run", median(floor_ns[k]), None, reps,
                          "ebprof_switch minus bench_switch_floor, attached together")
    service = ("the same with %d rounds of work per hand-off, calibrated for %d switches/s"
               % (service_work, SERVICE_RATE))
    bench.res.add("9 offcpu", "switches/s alone, service rate", "none",
                  median(rates["none-service"]), "/s", "", "", None, None, reps, service)
    bench.res.add("9 offcpu", "throughput lost, service rate", "floor (empty tp_btf/sched_switch)",
                  median(lost["floor-service"]), "%", "", "", None, None, reps, service)
    bench.res.add("9 offcpu", "throughput lost, service rate", "ebprof --mode offcpu",
                  median(lost["ebprof-service"]), "%", "", "perf sched record",
                  median(lost["perf-service"]), None, reps, service + "; system-wide")
    nofp = ("examples/offcpu-nofp pingpong: built without frame pointers, as Debian builds, "
            "six values live across its calls, rbp among them")
    bench.res.add("9 offcpu", "throughput lost, no frame pointers", "ebprof --mode offcpu",
                  median(lost["ebprof-nofp"]), "%", "", "", None, None, reps,
                  nofp + "; alone %.0f switches/s" % median(rates["none-nofp"]))
    if floor_ns["floor"]:
        bench.res.add("9 offcpu", "BPF ns/switch", "floor alone", median(floor_ns["floor"]),
                      "ns", "", "", None, None, reps, "run_time_ns / run_cnt of bench_switch_floor")
