#!/usr/bin/env python3
"""ebprof's benchmark: what it costs, beside what users would run instead.

`make bench` runs this script; `make bench-smoke` runs it with --smoke (every
row for a second or two, to prove the rows still work). It measures:

  0 host      what this host charges for a system call, an open and a
              query of /proc/PID/maps (and the first open of a new
              process's), and a page fault (hostcost.c): the
              kernel work a new process costs us, which differs between
              hosts more than between builds
  1 kernel    BPF run time per sample (kernel.bpf_stats_enabled), ebprof's
              program against bpftrace's `@[kstack, ustack] = count()`, on
              shallow and deep (over 60 frames) stacks
  2 slowdown  wall time of a fixed amount of CPU work with each profiler
              running system-wide, against none and against the floor (an
              empty BPF program on the same CPU-clock event: floor.bpf.c)
  3 user      CPU time and peak RSS of the profiler process on a busy system
              (ebprof record, perf record, bpftrace); collectd with and
              without the plugin
  3 startup   what a start costs, wall and CPU time until each samples
              (ebprof record, --mode wall, bpftrace, perf record -g)
  4 symbols   cold load and steady resolves of big libraries' symbols
              (symbench.c, our modules) against `perf report`
  4 inline    symbolizing the addresses of a perf.data of a workload with
              inlined code (ebprof render built -O2 -g with frame pointers):
              names alone and with inline expansion (symbench.c, our
              modules) against `perf report` and `perf report --inline`
  5 render    ebprof render on generated folded files of 10k..500k stacks,
              against flamegraph.pl on the same files (time, peak RSS, SVG)
  6 scaling   how the above grow with frequency, depth, stacks, processes
  7 top       the CPU and memory of a live view refreshed every second at
              99 Hz system-wide on the busy system: `ebprof top` against
              `perf top -g` (both in their text modes, output discarded)
  9 offcpu    off-CPU profiling per context switch: a pipe ping-pong's
              throughput alone, under ebprof --mode offcpu and under perf
              sched record, and the switch program's BPF ns per switch
              (offcpu_bench.py)
  8 unwind    unwinding by .eh_frame tables: BPF ns/sample against the
              frame-pointer walk at 5 to 120 frames, table build time per MB,
              the tables of every process on the machine, the plugin's RSS and
              locked memory with tables, and user CPU per 1000 samples against
              perf record --call-graph dwarf + perf report

Every figure is a median over paired runs: in each run the anchor and we are
measured back to back, in a shuffled order, and the run's ratio is taken;
the median of the ratios is reported. The table is printed and written as
CSV (build/bench/bench.csv), and gnuplot draws build/bench/scaling.svg.

Needs root (BPF, perf events), build/ebprof and the tools under build/bench
(make bench-tools).
"""
import argparse
import csv
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import offcpu_bench  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.path.join(ROOT, "build")
TOOLS = os.path.join(BUILD, "bench")
EBPROF = os.path.join(BUILD, "ebprof")
EX = os.path.join(BUILD, "examples")
NCPU = os.cpu_count() or 1

REFERENCE_PROFILER_RSS_MB = 29.5  # the seed profiler (Rust + aya), measured
BPFTRACE_PROG = "profile:hz:%d %s{ @[kstack, ustack] = count(); }"


def log(msg):
    print("bench: " + msg, file=sys.stderr, flush=True)


def read_text(path):
    """A file's text; profilers print process names, which may be any bytes."""
    with open(path, errors="replace") as f:
        return f.read()


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def interrupts(row):
    """Interrupts of one row of /proc/interrupts so far, all CPUs: LOC, the
    local timer; IWI, irq work. Exits if the kernel has no such row."""
    with open("/proc/interrupts") as f:
        for line in f:
            fields = line.split()
            if fields and fields[0] == row + ":":
                return sum(int(x) for x in fields[1:] if x.isdigit())
    sys.exit("bench: no %s row in /proc/interrupts" % row)


def ci95(values, resamples=2000):
    """A 95% confidence interval of the median: the percentile bootstrap,
    seeded, so that one set of runs always gives the same interval."""
    values = [v for v in values if v is not None]
    if len(values) < 3:
        return None
    rng = random.Random(1)
    meds = sorted(statistics.median(rng.choices(values, k=len(values)))
                  for _ in range(resamples))
    return (meds[int(0.025 * resamples)], meds[int(0.975 * resamples) - 1])


# --- results: one row per figure, printed and written as CSV ----------------

FIELDS = ["section", "row", "variant", "hz", "value", "ci95", "unit", "anchor", "anchor_value",
          "ratio", "runs", "note"]


class Results:
    def __init__(self, path):
        self.path = path
        self.rows = []

    def add(self, section, row, variant, value, unit, hz="", anchor="", anchor_value=None,
            ratio=None, runs=1, note="", ci=None):
        self.rows.append({
            "section": section, "row": row, "variant": variant, "hz": hz,
            "value": fmt(value), "ci95": "%s..%s" % (fmt(ci[0]), fmt(ci[1])) if ci else "",
            "unit": unit, "anchor": anchor,
            "anchor_value": fmt(anchor_value), "ratio": fmt(ratio), "runs": runs,
            "note": note,
        })
        self.write()  # a run cut short keeps what it measured

    def write(self):
        with open(self.path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=FIELDS, lineterminator="\n")
            w.writeheader()
            w.writerows(self.rows)

    def markdown(self, path):
        """The same table in Markdown, for the README's Performance section."""
        cols = FIELDS
        with open(path, "w") as f:
            f.write("| " + " | ".join(cols) + " |\n")
            f.write("|" + "---|" * len(cols) + "\n")
            for r in self.rows:
                f.write("| " + " | ".join(str(r[c]).replace("|", "/") for c in cols) + " |\n")

    def table(self):
        cols = ["section", "row", "variant", "hz", "value", "ci95", "unit", "anchor",
                "anchor_value", "ratio", "runs"]
        widths = {c: max([len(c)] + [len(str(r[c])) for r in self.rows]) for c in cols}
        lines = ["  ".join(c.ljust(widths[c]) for c in cols)]
        lines.append("  ".join("-" * widths[c] for c in cols))
        for r in self.rows:
            lines.append("  ".join(str(r[c]).ljust(widths[c]) for c in cols))
        return "\n".join(lines)


def fmt(v):
    if v is None:
        return ""
    if isinstance(v, float):
        if abs(v) >= 100:
            return "%.0f" % v
        if abs(v) >= 10:
            return "%.1f" % v
        return "%.3g" % v
    return str(v)


# --- processes ----------------------------------------------------------------

class Background:
    """Workloads that run for a whole section, always reaped."""

    def __init__(self):
        self.procs = []

    def start(self, argv, shell=False):
        p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             shell=shell, start_new_session=True)
        self.procs.append(p)
        return p

    def pause(self, p, paused):
        """Stops (or lets go on) p's whole process group: a shell loop and its child."""
        os.killpg(p.pid, signal.SIGSTOP if paused else signal.SIGCONT)

    def stop(self):
        for p in self.procs:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for p in self.procs:
            p.wait()
        self.procs = []


class Timed:
    """A command run under GNU time, for its CPU time and peak RSS.

    Python's own wait4() would give both, but exec keeps the parent's peak
    RSS as the child's ru_maxrss (setmax_mm_hiwater_rss() in the kernel's
    exec), so every child of this ~20 MB interpreter would read at least
    20 MB. GNU time is a small C parent (about 1.5 MB), and its -o file
    gives the child's figures alone. Signals go to the child itself: time
    ignores SIGINT while it waits.
    """

    def __init__(self, argv, tmp, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                 cwd=None, stdin=None, env=None):
        fd, self.report = tempfile.mkstemp(dir=tmp, suffix=".time")
        os.close(fd)
        self.started = time.time()
        self.proc = subprocess.Popen(["/usr/bin/time", "-f", "%e %U %S %M", "-o", self.report]
                                     + list(argv), stdin=stdin, stdout=stdout,
                                     stderr=stderr, cwd=cwd, start_new_session=True,
                                     env=dict(os.environ, **env) if env else None)
        self._pid = None

    def pid(self):
        """The command's own PID (not time's)."""
        for _ in range(200):
            if self._pid:
                return self._pid
            try:
                with open("/proc/%d/task/%d/children" % (self.proc.pid, self.proc.pid)) as f:
                    kids = f.read().split()
                if kids:
                    self._pid = int(kids[0])
                    continue
            except OSError:
                pass
            if self.proc.poll() is not None:
                return None
            time.sleep(0.01)
        return None

    def poll(self):
        return self.proc.poll()

    def signal(self, sig):
        pid = self.pid()
        if pid:
            os.kill(pid, sig)

    def wait(self, timeout):
        """Returns (exit status or -signal, wall s, CPU s, peak RSS MB)."""
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        with open(self.report) as f:
            lines = f.read().splitlines()
        os.remove(self.report)
        rc = self.proc.returncode
        m = re.match(r"Command terminated by signal (\d+)", lines[0]) if lines else None
        if m:
            rc = -int(m.group(1))
        wall, user, system, kb = lines[-1].split()
        return rc, float(wall), float(user) + float(system), int(kb) / 1024.0


def flamegraph_pl():
    """The anchors' flamegraph.pl (unchanged, CDDL): not packaged in Debian,
    it sits beside the checkout (../shared/anchors), or FLAMEGRAPH_PL names it."""
    for p in (os.environ.get("FLAMEGRAPH_PL", ""),
              os.path.join(ROOT, "..", "shared", "anchors", "FlameGraph", "flamegraph.pl"),
              "/work/shared/anchors/FlameGraph/flamegraph.pl"):
        if p and os.path.isfile(p):
            return p
    raise RuntimeError("flamegraph.pl not found: set FLAMEGRAPH_PL to its path")


def run_timed(argv, tmp, timeout=600, **kw):
    """Runs argv to its end: (wall s, CPU s, peak RSS MB); raises on failure."""
    t0 = time.time()
    rc, _, cpu, peak = Timed(argv, tmp, **kw).wait(timeout)
    wall = time.time() - t0  # time's %e counts in 10 ms steps
    if rc != 0:
        raise RuntimeError("%s exited %d" % (argv[0], rc))
    return wall, cpu, peak


def bpf_progs():
    """perf_event BPF programs loaded now: id -> (name, run_time_ns, run_cnt)."""
    out = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True,
                         check=True).stdout
    progs = {}
    for p in json.loads(out or "[]"):
        if p.get("type") == "perf_event":
            progs[p["id"]] = (p.get("name", ""), p.get("run_time_ns", 0), p.get("run_cnt", 0))
    return progs


def prog_ids_of(pid):
    """Ids of the BPF programs process pid holds a descriptor of (its fdinfo)."""
    ids = set()
    try:
        fds = os.listdir("/proc/%d/fdinfo" % pid)
    except OSError:
        return ids
    for fd in fds:
        try:
            with open("/proc/%d/fdinfo/%s" % (pid, fd)) as f:
                m = re.search(r"^prog_id:\s+(\d+)", f.read(), re.M)
        except OSError:
            continue
        if m:
            ids.add(int(m.group(1)))
    return ids


def cpu_ticks(pid):
    """utime + stime of pid in clock ticks, or None once it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, IndexError, ValueError):
        return None


def bpf_stats_on():
    """Turns on the kernel's BPF run-time counters (kernel.bpf_stats_enabled);
    returns the setting found, for bpf_stats_restore()."""
    with open("/proc/sys/kernel/bpf_stats_enabled") as f:
        saved = f.read().strip()
    subprocess.run(["sysctl", "-q", "kernel.bpf_stats_enabled=1"], check=True)
    return saved


def bpf_stats_restore(saved):
    subprocess.run(["sysctl", "-q", "kernel.bpf_stats_enabled=" + saved])


def sampling_ms_per_1000(samples, cpu_s, window_s):
    """ms of CPU per 1000 samples over a window of a record: cpu_s spent in
    the window_s seconds from Profiler.start()'s return to the stop. ebprof
    samples from its "sampling" line, 0.3 s before start() returns, so the
    window holds that share of the samples (pro rata: the rate is steady)."""
    if not samples or cpu_s <= 0:
        return None
    return 1e6 * cpu_s / (samples * window_s / (window_s + 0.3))


def sched_cpu_s(pid):
    """Seconds on a CPU of all of pid's threads, from their schedstat (ns),
    where /proc/PID/stat's ticks (4 ms here) are coarser than section
    ticks' differences; 0 once it is gone."""
    total = 0
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return 0.0
    for tid in tids:
        try:
            with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass  # a thread that just ended
    return total / 1e9


def rss_mb(pid, path="/proc/%d/status", field="VmRSS:"):
    try:
        with open(path % pid) as f:
            for line in f:
                if line.startswith(field):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return None


def pss_mb(pid):
    """The proportional set size: each page divided by the mappings that
    share it. VmRSS counts the BPF ring buffer's data pages twice (libbpf
    maps them twice in a row, so that a record can be read across the
    wrap); PSS counts them once, and shares libc with the other processes."""
    return rss_mb(pid, "/proc/%d/smaps_rollup", "Pss:")


def bpf_memlock_mb(pid):
    """MB of kernel memory charged to the BPF maps pid holds (their fdinfo's memlock)."""
    total = 0
    try:
        for fd in os.listdir("/proc/%d/fdinfo" % pid):
            try:
                with open("/proc/%d/fdinfo/%s" % (pid, fd)) as f:
                    text = f.read()
            except OSError:
                continue
            if "map_type:" in text:
                m = re.search(r"^memlock:\s+(\d+)", text, re.M)
                total += int(m.group(1)) if m else 0
    except OSError:
        return None
    return total / 1048576.0


class Profiler:
    """One profiler run, system-wide: start, wait until it samples, stop."""

    KINDS = ("floor", "perf", "bpftrace", "ebprof")

    def __init__(self, kind, hz, tmp, ebprof_args=(), pid=None, env=None):
        self.kind, self.hz, self.tmp = kind, hz, tmp
        self.env = env  # added to ebprof's environment (EBPROF_EVENTS=cpu)
        self.ebprof_args = list(ebprof_args) + (["-p", str(pid)] if pid else [])
        self.pid = pid  # one process only: ebprof -p, bpftrace's /pid == N/
        self.binary = EBPROF  # section ebuser may pair another build against it
        self.proc = None
        self.prog_ids = []
        self.lost = 0
        self.out = os.path.join(tmp, "%s-%d.out" % (kind, hz))
        self.err = os.path.join(tmp, "%s-%d.err" % (kind, hz))

    def argv(self):
        if self.kind == "floor":
            return [os.path.join(TOOLS, "floor"), os.path.join(TOOLS, "floor.bpf.o"),
                    str(self.hz)]
        if self.kind == "perf":
            return ["perf", "record", "-g", "-a", "-F", str(self.hz), "-o",
                    os.path.join(self.tmp, "perf.data")]
        if self.kind == "bpftrace":
            pred = "/pid == %d/ " % self.pid if self.pid else ""
            return ["bpftrace", "-e", BPFTRACE_PROG % (self.hz, pred)]
        return [self.binary, "record", "-F", str(self.hz), "-d", "100000", "--format", "folded",
                "-o", os.path.join(self.tmp, "ebprof.folded")] + self.ebprof_args

    RATE_PATH = "/proc/sys/kernel/perf_event_max_sample_rate"
    max_rate = None  # as found at the start of the benchmark

    def start(self):
        # The kernel lowers this limit when sampling interrupts run long
        # ("perf: interrupt took too long"); one profiler's run must not
        # change what the next one may ask for.
        if Profiler.max_rate:
            with open(self.RATE_PATH) as f:
                now = int(f.read())
            if now < Profiler.max_rate:
                log("perf_event_max_sample_rate fell to %d; putting back %d"
                    % (now, Profiler.max_rate))
                with open(self.RATE_PATH, "w") as f:
                    f.write(str(Profiler.max_rate))
        before = set(bpf_progs()) if self.kind != "perf" else set()
        self.started = time.time()
        with open(self.out, "w") as out, open(self.err, "w") as err:
            self.proc = Timed(self.argv(), self.tmp, stdout=out, stderr=err,
                              env=self.env if self.kind == "ebprof" else None)
        if self.kind == "perf":
            # perf attaches within a few ms of writing its header.
            path = os.path.join(self.tmp, "perf.data")
            for _ in range(200):
                if os.path.exists(path) and os.path.getsize(path) > 0:
                    break
                time.sleep(0.05)
            time.sleep(0.5)
            return
        for _ in range(600):  # bpftrace compiles first: up to 30 s on a busy host
            if self.proc.poll() is not None:
                raise RuntimeError("%s exited %d: %s" % (self.kind, self.proc.poll(),
                                                         read_text(self.err)[-500:]))
            # Only this profiler's: a unit test elsewhere on the machine (no
            # lock needed for those) may load a perf_event program meanwhile.
            pid = self.proc.pid()
            mine = prog_ids_of(pid) if pid else set()
            new = [i for i in bpf_progs() if i not in before and i in mine]
            if new:
                self.prog_ids = new
                break
            time.sleep(0.05)
        else:
            raise RuntimeError("%s loaded no perf_event program" % self.kind)
        if self.kind == "bpftrace":
            # It prints this line, then attaches; its SIGINT handler is set by then.
            for _ in range(200):
                if "Attaching" in read_text(self.out):
                    break
                time.sleep(0.05)
        if self.kind == "ebprof":
            # Loaded is not sampling yet: the named targets are prepared and the
            # events attached after the load (seconds when the verifier is slow).
            for _ in range(1200):
                if "ebprof: sampling" in read_text(self.err):
                    break
                time.sleep(0.05)
            # Its programs load one after another (the sampler, the table
            # walker's parts): the ids seen first may not hold the sampler's.
            mine = prog_ids_of(self.proc.pid() or 0)
            self.prog_ids = [i for i in bpf_progs() if i not in before and i in mine] \
                or self.prog_ids
        time.sleep(0.3)  # the program is loaded; let the attach finish

    def stats(self):
        """(run_time_ns, run_cnt) summed over this profiler's programs."""
        progs = bpf_progs()
        ns = sum(progs[i][1] for i in self.prog_ids if i in progs)
        cnt = sum(progs[i][2] for i in self.prog_ids if i in progs)
        return ns, cnt

    def stop(self):
        """Stops it as a user would (Ctrl-C); returns (CPU s, peak RSS MB, wall s)."""
        wall = time.time() - self.started
        # bpftrace 0.17 now and then misses a SIGINT (seen here once in
        # dozens of runs): ask again, but only once it has stopped working,
        # for after a SIGINT it symbolizes and prints every stack (over 20 s
        # of CPU, with no output yet, for thousands of stacks), and a second
        # one cuts that short and loses its whole output.
        pid = self.proc.pid()
        self.proc.signal(signal.SIGINT)
        progress = None
        for _ in range(60):
            try:
                self.proc.proc.wait(10)
                break
            except subprocess.TimeoutExpired:
                now = (os.path.getsize(self.out) + os.path.getsize(self.err),
                       cpu_ticks(pid) if pid else None)
                if now == progress:
                    log("%s did not stop on SIGINT; sending it again" % self.kind)
                    self.proc.signal(signal.SIGINT)
                progress = now
        rc, _, cpu, rss = self.proc.wait(60)
        if rc not in (0, -signal.SIGINT):
            raise RuntimeError("%s exited %d: %s" % (self.kind, rc,
                                                     read_text(self.err)[-500:]))
        return cpu, rss, wall

    def samples(self):
        """Samples the profiler says it took, from its own output."""
        if self.kind == "ebprof":
            m = re.search(r"(\d+) samples,", read_text(self.err))
            return int(m.group(1)) if m else None
        if self.kind == "perf":
            m = re.search(r"\((\d+) samples\)", read_text(self.err))
            return int(m.group(1)) if m else None
        if self.kind == "bpftrace":
            # "]: N" ends a key with stacks; "@[, ]: N" one whose stack ids
            # were lost (bpf_get_stackid's table collided: -EEXIST).
            text = read_text(self.out)
            counts = re.findall(r"\]: (\d+)$", text, re.M)
            self.lost = sum(int(c) for c in re.findall(r"^@\[, \]: (\d+)$", text, re.M))
            return sum(int(c) for c in counts)
        return None


# --- the benchmark ----------------------------------------------------------------

class Bench:
    def __init__(self, args):
        self.args = args
        self.smoke = args.smoke
        self.quick = args.quick and not self.smoke
        self.reps = args.reps or (1 if self.smoke else 3 if self.quick else 5)
        self.out = os.path.join(BUILD, "bench")
        os.makedirs(self.out, exist_ok=True)
        self.tmp = tempfile.mkdtemp(prefix="ebprof-bench.")
        self.res = Results(os.path.join(self.out, "bench.csv"))
        self.bg = Background()
        self.rng = random.Random(1)
        self.rss_curve = []
        self.lost = {}
        with open(Profiler.RATE_PATH) as f:
            Profiler.max_rate = int(f.read())

    def dur(self, full, smoke, quick=None):
        """A run's length (or a list of cases): full, or smoke's in a smoke
        run, or quick's (when given) in the quick survey that make bench runs."""
        if self.smoke:
            return smoke
        return quick if self.quick and quick is not None else full

    def cleanup(self):
        self.bg.stop()
        with open(Profiler.RATE_PATH, "w") as f:
            f.write(str(Profiler.max_rate))
        shutil.rmtree(self.tmp, ignore_errors=True)

    # 1 -------------------------------------------------------------------------
    def kernel_cost(self, kind, hz, seconds, ebprof_args=(), pid=None, env=None):
        """ns per run of kind's BPF program over `seconds` of sampling."""
        prof = Profiler(kind, hz, self.tmp, ebprof_args, pid, env)
        prof.start()
        try:
            ns0, cnt0 = prof.stats()
            time.sleep(seconds)
            ns1, cnt1 = prof.stats()
        finally:
            prof.stop()
        if cnt1 <= cnt0:
            raise RuntimeError("%s: no sample counted in %.1f s" % (kind, seconds))
        return (ns1 - ns0) / (cnt1 - cnt0), cnt1 - cnt0

    def kernel_pair(self, workload, hz, seconds, reps, filtered=False):
        """Medians of ours, bpftrace's and the per-run ratio, on a workload per CPU.

        filtered: both profile one sleeping process only, so every sample
        of the workload is rejected: the cost of the filter itself. ebprof
        then keeps its per-CPU events (EBPROF_EVENTS=cpu, as for -c COMM or
        a -p past the per-thread events' limits): with an event per thread
        of the process, which `-p` has by default, no tick of the workload
        reaches its program at all (section 2's "-p" rows measure that).
        """
        env = {"EBPROF_EVENTS": "cpu"} if filtered else None
        self.bg.stop()
        for _ in range(NCPU):
            self.bg.start(workload)
        pid = self.bg.start(["sleep", "100000"]).pid if filtered else None
        time.sleep(0.3)
        ours, theirs, ratios, counts = [], [], [], []
        try:
            for _ in range(reps):
                order = ["ebprof", "bpftrace"]
                self.rng.shuffle(order)
                got = {k: self.kernel_cost(k, hz, seconds, pid=pid, env=env) for k in order}
                ours.append(got["ebprof"][0])
                theirs.append(got["bpftrace"][0])
                counts.append(got["ebprof"][1])
                ratios.append(got["ebprof"][0] / got["bpftrace"][0])
        finally:
            self.bg.stop()
        return median(ours), median(theirs), median(ratios), median(counts)

    def section_kernel(self):
        log("1 kernel cost per sample (bpf_stats_enabled)")
        secs = self.dur(2, 1)  # ~4000 samples a run at 999 Hz on 2 CPUs
        depth_rows = {}
        saved = bpf_stats_on()
        try:
            # Shallow across frequencies; deep (~73 user frames) at 999 Hz.
            cases = [
                ("shallow", [os.path.join(EX, "split7030"), "100000"], "split7030",
                 self.dur([99, 999, 4999], [999], [999, 4999])),
                ("deep", [os.path.join(EX, "recurse-leaffp"), "100000", "70"],
                 "recurse-leaffp depth 70", [999]),
            ]
            for name, argv, what, rates in cases:
                for hz in rates:
                    reps = self.reps if hz == 999 else max(1, self.reps - 2)
                    o, t, r, n = self.kernel_pair(argv, hz, secs if hz != 99 else secs * 2,
                                                  reps)
                    self.res.add("1 kernel", "ns/sample " + name, "ebprof", o, "ns", hz,
                                 "bpftrace", t, r, reps, "%s; ~%d samples/run" % (what, n))
                    if name == "deep":
                        depth_rows[70] = (o, t, r, reps)
            # The filtered path: -p PID against bpftrace's /pid == N/, every
            # sample of the busy CPUs rejected.
            argv = [os.path.join(EX, "split7030"), "100000"]
            for hz in [999] if self.smoke else [999, 4999]:
                reps = self.reps if hz == 999 else max(1, self.reps - 2)
                o, t, r, n = self.kernel_pair(argv, hz, secs, reps, filtered=True)
                self.res.add("1 kernel", "ns/sample filtered out", "ebprof -p, per-CPU events",
                             o, "ns", hz, "bpftrace /pid == N/", t, r, reps,
                             "split7030 on every CPU, a sleeping process profiled; "
                             "~%d samples/run, all rejected; EBPROF_EVENTS=cpu" % n)
            # Scaling with depth (the plot), at 999 Hz.
            for depth in ([30] if self.smoke else [5, 30, 70, 120]):
                argv = [os.path.join(EX, "recurse-leaffp"), "100000", str(depth)]
                reps = max(1, self.reps - 2)
                if depth not in depth_rows:
                    depth_rows[depth] = self.kernel_pair(argv, 999, secs, reps)[:3] + (reps,)
                o, t, r, reps = depth_rows[depth]
                self.res.add("6 scaling", "ns/sample by depth, %d" % depth, "ebprof", o, "ns", 999,
                             "bpftrace", t, r, reps,
                             "depth=%d (recursion; ~%d user frames)" % (depth, depth + 3))
        finally:
            bpf_stats_restore(saved)

    # 2 -------------------------------------------------------------------------
    def shuffled_rounds(self, kinds, hz):
        """reps rounds, each running every kind once in a shuffled order:
        yields (kind, its profiler, started; None for "none"), and stops
        the profiler when the caller's turn with it is over."""
        for _ in range(self.reps):
            order = kinds[:]
            self.rng.shuffle(order)
            for kind in order:
                prof = None if kind == "none" else Profiler(kind, hz, self.tmp)
                if prof:
                    prof.start()
                try:
                    yield kind, prof
                finally:
                    if prof:
                        prof.stop()

    def run_work(self, rounds):
        out = subprocess.run([os.path.join(TOOLS, "work"), str(NCPU), str(rounds), "20"],
                             capture_output=True, text=True, check=True).stdout
        return float(out.strip())

    def section_slowdown(self):
        log("2 slowdown of fixed work, system-wide profilers")
        t0 = time.time()
        # About 3 s of work unprofiled (0.5 s in a smoke run), calibrated here.
        rounds = self.work_rounds()
        kinds = ["none", "floor", "perf", "bpftrace", "ebprof"]
        for hz in ([999] if self.smoke else [99, 999, 4999]):
            times = {k: [] for k in kinds}
            for kind, _ in self.shuffled_rounds(kinds, hz):
                times[kind].append(self.run_work(rounds))
            base = times["none"]
            above = {}
            for kind in kinds[1:]:
                slow = [100 * (x / b - 1) for x, b in zip(times[kind], base)]
                above[kind] = [100 * (x - f) / b
                               for x, f, b in zip(times[kind], times["floor"], base)]
                if kind == "floor":
                    self.res.add("2 slowdown", "slowdown", kind, median(slow), "%", hz,
                                 "none", median(base), None, self.reps,
                                 "the sampling interrupt alone; anchor in s", ci95(slow))
                    continue
                self.res.add("2 slowdown", "slowdown above floor", kind, median(above[kind]),
                             "pp", hz, "floor", median(slow), None, self.reps,
                             "anchor_value = slowdown vs none, %", ci95(above[kind]))
            # Who is cheaper, run by run: the paired difference and its
            # interval say whether the benchmark can tell (the resolution
            # is the interval's half-width).
            for other in ("perf", "bpftrace"):
                diff = [e - o for e, o in zip(above["ebprof"], above[other])]
                ci = ci95(diff)
                self.res.add("2 slowdown", "ebprof minus " + other, "ebprof", median(diff), "pp",
                             hz, other, None, None, self.reps,
                             "resolution +-%s pp" % fmt((ci[1] - ci[0]) / 2) if ci else "", ci)
        log("2 slowdown: %d pairs per frequency in %.0f s" % (self.reps, time.time() - t0))

    def work_rounds(self, seconds=2.0):
        """Rounds of work.c for about `seconds` unprofiled (0.5 s in a smoke run)."""
        t = self.run_work(1000)
        return max(100, int(1000 * self.dur(seconds, 0.5) / t))

    def section_filtered(self):
        """What profiling one process costs the others: the same fixed work,
        unprofiled, while each tool profiles a sleeping process only
        (ebprof -p with its events on that process's thread, and with
        per-CPU events; bpftrace's /pid == N/; the floor's empty program on
        every CPU for scale). Slowdown against no profiler, in %."""
        log("2 slowdown of the others while one sleeping process is profiled")
        t0 = time.time()
        rounds = self.work_rounds(self.dur(4.0, 4.0, 2.0))
        sleeper = subprocess.Popen(["sleep", "100000"])
        saved = bpf_stats_on()
        kinds = ["none", "floor", "bpftrace", "ebprof", "ebprof-cpu"]
        try:
            for hz in self.dur([999, 4999], [4999], [4999]):
                times = {k: [] for k in kinds}
                irqs = {k: [] for k in kinds}  # local timer interrupts /s per CPU
                runs = {k: [] for k in kinds}  # runs of the tool's program /s
                for _ in range(self.reps):
                    order = kinds[:]
                    self.rng.shuffle(order)
                    for kind in order:
                        prof = None
                        if kind != "none":
                            prof = Profiler(kind.split("-")[0], hz, self.tmp,
                                            pid=None if kind == "floor" else sleeper.pid,
                                            env={"EBPROF_EVENTS": "cpu"}
                                            if kind == "ebprof-cpu" else None)
                            prof.start()
                        try:
                            n0, w0 = interrupts("LOC"), time.time()
                            r0 = prof.stats()[1] if prof else 0
                            times[kind].append(self.run_work(rounds))
                            wall = time.time() - w0
                            irqs[kind].append((interrupts("LOC") - n0) / wall / NCPU)
                            runs[kind].append(((prof.stats()[1] if prof else 0) - r0) / wall)
                        finally:
                            if prof:
                                prof.stop()
                base = times["none"]
                slow = {k: [100 * (x / b - 1) for x, b in zip(times[k], base)]
                        for k in kinds[1:]}
                names = {"floor": "floor (every CPU)", "bpftrace": "bpftrace /pid == N/",
                         "ebprof": "ebprof -p", "ebprof-cpu": "ebprof -p, per-CPU events"}
                for k in kinds[1:]:
                    self.res.add("2 slowdown", "others' slowdown, -p a sleeper", names[k],
                                 median(slow[k]), "%", hz, "none", median(base), None,
                                 self.reps, "work.c unprofiled; anchor in s", ci95(slow[k]))
                    # Counted, not timed: what the kernel did for the tool
                    # while the others worked (bpf_stats_enabled for the runs).
                    self.res.add("2 slowdown", "others' timer interrupts, -p a sleeper",
                                 names[k], median(irqs[k]), "/s/CPU", hz, "none",
                                 median(irqs["none"]), None, self.reps,
                                 "LOC in /proc/interrupts during the work")
                    self.res.add("2 slowdown", "program runs, -p a sleeper", names[k],
                                 median(runs[k]), "/s", hz, "", None, None, self.reps,
                                 "run_cnt of the tool's perf_event programs")
                diff = [e - o for e, o in zip(slow["ebprof"], slow["bpftrace"])]
                ci = ci95(diff)
                self.res.add("2 slowdown", "others' slowdown, ebprof -p minus bpftrace",
                             "ebprof -p", median(diff), "pp", hz, "bpftrace /pid == N/", None,
                             None, self.reps,
                             "resolution +-%s pp" % fmt((ci[1] - ci[0]) / 2) if ci else "", ci)
        finally:
            sleeper.kill()
            sleeper.wait()
            bpf_stats_restore(saved)
        log("2 filtered: %d rounds per frequency in %.0f s" % (self.reps, time.time() - t0))

    def run_ticks(self, seconds):
        """tests/bench/ticks.c for seconds, 20 frames deep: its "all" line as a dict."""
        out = subprocess.run([os.path.join(TOOLS, "ticks"), "%g" % seconds, "20"],
                             capture_output=True, text=True, check=True).stdout
        line = [l for l in out.splitlines() if l.startswith("all ")][-1]
        return {k: float(v) for k, v in (f.split("=") for f in line.split()[1:])}

    def section_ticks(self):
        """Where the cost above the floor goes, counted: ticks.c keeps every
        CPU busy and measures each interruption against the units of work
        around it (the time a tick takes and the cache refills it leaves
        behind), which the run-to-run drift of this VM's speed does not
        move as it moves section 2's wall times. Alongside, in the same
        runs, the kernel's run time of each tool's BPF program (bpf_stats)
        and the tool's own process (the schedstat of its threads). All in
        percentage points of one CPU (the machine's is the same share: the
        work and the sampling cover every CPU); each tool is paired with
        the floor of its round."""
        log("2 ticks: what each sampling interrupt takes from a busy thread")
        t0 = time.time()
        secs = self.dur(2.0, 0.5)
        kinds = ["none", "floor", "perf", "bpftrace", "ebprof"]
        saved = bpf_stats_on()
        try:
            for hz in self.dur(self.args.ticks_hz or [999, 4999], [4999],
                               self.args.ticks_hz or [4999]):
                got = {k: [] for k in kinds}  # (lost %, BPF pp, own process pp)
                for kind, prof in self.shuffled_rounds(kinds, hz):
                    # What a tool does once per binary is not charged to the
                    # run: the warm-up outlasts ebprof's first drain (one a
                    # second), which names the work's binaries, and is the
                    # same for every kind. What an operator who leaves a
                    # tool on pays is its steady cost.
                    self.run_ticks(self.dur(self.args.ticks_warm, 0.3))
                    pid = prof.proc.pid() if prof else None
                    b0, c0 = (prof.stats()[0] if prof else 0), (sched_cpu_s(pid) if pid else 0.0)
                    t = self.run_ticks(secs)
                    b1, c1 = (prof.stats()[0] if prof else 0), (sched_cpu_s(pid) if pid else 0.0)
                    span = t["seconds"] * NCPU
                    got[kind].append((t["lost_pct"], 100 * (b1 - b0) / 1e9 / span,
                                      100 * (c1 - c0) / span))
                self.ticks_rows(hz, kinds, got)
        finally:
            bpf_stats_restore(saved)
        log("2 ticks: %d rounds per frequency in %.0f s" % (self.reps, time.time() - t0))

    def ticks_rows(self, hz, kinds, got):
        lost = {k: [g[0] for g in got[k]] for k in kinds}
        self.res.add("2 ticks", "time lost to interruptions", "none", median(lost["none"]), "%",
                     hz, "", None, None, self.reps,
                     "the host's and the kernel's own, with no profiler", ci95(lost["none"]))
        self.res.add("2 ticks", "time lost to interruptions", "floor", median(lost["floor"]),
                     "%", hz, "none", median(lost["none"]), None, self.reps,
                     "the sampling interrupt with an empty program", ci95(lost["floor"]))
        total = {}
        for kind in kinds[2:]:
            above = [g[0] - f[0] for g, f in zip(got[kind], got["floor"])]
            total[kind] = [a + g[2] for a, g in zip(above, got[kind])]
            bpf = [g[1] - f[1] for g, f in zip(got[kind], got["floor"])]
            own = [g[2] for g in got[kind]]
            rest = [a - b for a, b in zip(above, bpf)]
            self.res.add("2 ticks", "above the floor, in the interrupted threads", kind,
                         median(above), "pp", hz, "floor", median(lost["floor"]), None,
                         self.reps, "paired with the floor of the round", ci95(above))
            if kind != "perf":
                self.res.add("2 ticks", "of it, the BPF program (kernel's run time)", kind,
                             median(bpf), "pp", hz, "", None, None, self.reps,
                             "bpf_stats, above the empty program's", ci95(bpf))
                self.res.add("2 ticks", "of it, the rest (cache refills, the event)", kind,
                             median(rest), "pp", hz, "", None, None, self.reps,
                             "the interrupted threads' loss less the program", ci95(rest))
            self.res.add("2 ticks", "the tool's own process", kind, median(own), "pp", hz, "",
                         None, None, self.reps, "schedstat of its threads", ci95(own))
            self.res.add("2 ticks", "above the floor, in all", kind, median(total[kind]), "pp",
                         hz, "", None, None, self.reps,
                         "the interrupted threads' and the tool's own", ci95(total[kind]))
        for other in ("perf", "bpftrace"):
            diff = [e - o for e, o in zip(total["ebprof"], total[other])]
            ci = ci95(diff)
            self.res.add("2 ticks", "above the floor in all, ebprof minus " + other, "ebprof",
                         median(diff), "pp", hz, other, None, None, self.reps,
                         "resolution +-%s pp" % fmt((ci[1] - ci[0]) / 2) if ci else "", ci)

    # 3 -------------------------------------------------------------------------
    def busy_start(self, levels=5):
        """Several workloads, thousands of stacks, and short-lived processes."""
        self.bg.stop()
        self.bg.start([os.path.join(TOOLS, "manystacks"), "100000", str(levels)])
        self.bg.start([os.path.join(EX, "split7030"), "100000"])
        self.bg.start([os.path.join(EX, "recurse"), "100000", "40"])
        self.churn = self.bg.start("while :; do ls / >/dev/null; sleep 0.01; done", shell=True)
        time.sleep(0.3)

    def user_run(self, kind, hz, seconds, ebprof_args=()):
        """One profiler run on the busy system: cpu s, peak MB, samples, RSS curve,
        wall s, and ms per 1000 samples while it sampled (as in ebuser_run())."""
        prof = Profiler(kind, hz, self.tmp, ebprof_args)
        prof.start()
        curve = []
        pid, t0 = prof.proc.pid() or 0, time.time()
        cpu0 = sched_cpu_s(pid)
        while time.time() - t0 < seconds:
            curve.append((time.time() - t0, rss_mb(pid)))
            time.sleep(min(1.0, seconds / 10))
        cpu1, t1 = sched_cpu_s(pid), time.time()
        cpu, peak, wall = prof.stop()
        samples = prof.samples()
        self.lost[kind] = (prof.lost, samples)
        return cpu, peak, samples, curve, wall, sampling_ms_per_1000(samples, cpu1 - cpu0,
                                                                        t1 - t0)

    def section_user(self):
        log("3 user-space cost on a busy system")
        hz = 999
        self.busy_start()
        try:
            long_s = self.dur(45, 3, 20)
            cpu, peak, samples, curve, wall, steady = self.user_run("ebprof", hz, long_s)
            folded = os.path.join(self.tmp, "ebprof.folded")
            stacks = sum(1 for _ in open(folded, "rb")) if os.path.exists(folded) else 0
            drains = max(1, int(wall))  # one drain a second, and a last one at exit
            q = [r for t, r in curve if r is not None]
            early = median(q[len(q) // 4: len(q) // 2]) if len(q) >= 4 else (q[0] if q else None)
            late = median(q[-max(1, len(q) // 4):]) if q else None
            others = {}
            short_s = self.dur(20, 2, 10)
            for kind in ("perf", "bpftrace"):
                others[kind] = self.user_run(kind, hz, short_s)
            pcpu, ppeak, psamples = others["perf"][:3]
            bcpu, bpeak, bsamples = others["bpftrace"][:3]
            perf_report = self.perf_report_cpu()
            per_k = 1000 * cpu / samples if samples else None
            perf_k = 1000 * (pcpu + perf_report) / psamples if psamples else None
            bt_k = 1000 * bcpu / bsamples if bsamples else None
            self.res.add("3 user", "CPU per 1000 samples", "ebprof record", per_k * 1e3, "ms",
                         hz, "perf record+report", perf_k * 1e3 if perf_k else None,
                         per_k / perf_k if perf_k else None, 1,
                         "%d samples, %d unique stacks in %.0f s" % (samples, stacks, wall))
            self.res.add("3 user", "CPU per 1000 samples", "ebprof record", per_k * 1e3, "ms",
                         hz, "bpftrace", bt_k * 1e3 if bt_k else None,
                         per_k / bt_k if bt_k else None, 1,
                         "bpftrace: %d samples, %d of them with both stacks lost to "
                         "stack-id collisions (-EEXIST)" % (bsamples, self.lost["bpftrace"][0]))
            self.res.add("3 user", "CPU per 1000 samples, start and end left out",
                         "ebprof record", steady, "ms", hz, "", None, None, 1,
                         "schedstat from the start's end to the stop, over that window's "
                         "samples; what a long record or the plugin pays")
            self.res.add("3 user", "CPU per drain", "ebprof record", 1e3 * cpu / drains, "ms",
                         hz, "", None, None, 1, "%d drains" % drains)
            self.res.add("3 user", "CPU share of one core", "ebprof record",
                         100 * cpu / wall, "%", hz, "perf record",
                         100 * pcpu / others["perf"][4], cpu / wall / (pcpu / others["perf"][4]),
                         1, "perf's report step not included here")
            self.res.add("3 user", "peak RSS", "ebprof record", peak, "MB", hz, "perf record",
                         ppeak, peak / ppeak, 1, "goal < 16 MB; seed profiler %.1f MB" %
                         REFERENCE_PROFILER_RSS_MB)
            self.res.add("3 user", "peak RSS", "ebprof record", peak, "MB", hz, "bpftrace",
                         bpeak, peak / bpeak, 1, "")
            self.res.add("3 user", "steady RSS (end of run)", "ebprof record", late, "MB", hz,
                         "", None, None, 1, "median VmRSS of the last quarter; goal < 16 MB")
            self.res.add("3 user", "RSS growth, 2nd quarter to end", "ebprof record",
                         (late - early) if early and late else None, "MB", hz, "", None, None,
                         1, "%.1f -> %.1f MB over %.0f s" % (early or 0, late or 0, wall))
            self.rss_curve = curve  # plotted, and kept in build/bench/rss.csv
            with open(os.path.join(self.out, "rss.csv"), "w") as f:
                f.write("seconds,rss_mb\n")
                f.writelines("%.1f,%s\n" % (t, fmt(r)) for t, r in curve)
            self.scaling_user(hz)
        finally:
            self.bg.stop()

    def ebuser_run(self, binary, seconds):
        """One `record` of binary on the busy system, as a dict: ms per 1000
        samples, per 1000 stacks, and per 1000 samples while it samples (the
        start and the end left out: the threads' schedstat from start()'s
        return to the stop, over the samples of that window, pro rata of the
        time it sampled); the samples and stacks; CPU s a second in that
        window, and new processes reported a second."""
        prof = Profiler("ebprof", 999, self.tmp)
        prof.binary = binary
        prof.start()
        pid, t0 = prof.proc.pid(), time.time()
        cpu0 = sched_cpu_s(pid)
        time.sleep(seconds)
        cpu1, t1 = sched_cpu_s(pid), time.time()
        cpu, _, wall = prof.stop()
        samples = prof.samples()
        folded = os.path.join(self.tmp, "ebprof.folded")
        stacks = sum(1 for _ in open(folded, "rb")) if os.path.exists(folded) else 0
        if not samples or not stacks or not cpu1:
            raise RuntimeError("%s: no samples, no stacks or no CPU read" % binary)
        steady = sampling_ms_per_1000(samples, cpu1 - cpu0, t1 - t0)
        m = re.search(r"new processes: (\d+) reported", read_text(prof.err))
        reported = int(m.group(1)) if m else 0
        log("ebuser: %s: %.1f ms per 1000 samples, %.1f per 1000 stacks, %.1f per 1000 samples "
            "while sampling (%d samples, %d stacks, %d processes reported)"
            % (binary, 1e6 * cpu / samples, 1e6 * cpu / stacks, steady or 0, samples, stacks,
               reported))
        return {"per_sample": 1e6 * cpu / samples, "per_stack": 1e6 * cpu / stacks,
                "steady": steady, "samples": samples, "stacks": stacks,
                "cpu_rate": (cpu1 - cpu0) / (t1 - t0),  # CPU s a second while sampling
                "new_rate": reported / (wall or seconds)}  # new processes a second

    def section_ebuser(self):
        """ebprof record's own CPU on section 3's busy system, reps runs of 20 s.

        With --ebprof-base (one build, or several separated by commas), each
        of those and ours take turns (shuffled) in every round, so that a
        change is measured against the builds before it under the same
        load; each ratio is the median of the rounds' ratios. --ebprof
        measures a copy instead of build/ebprof (to rebuild meanwhile).
        """
        log("3 ebprof record's user-space CPU on a busy system")
        secs = self.dur(20, 3)
        bases = [b for b in self.args.ebprof_base.split(",") if b]
        binaries = [self.args.ebprof or EBPROF] + bases
        got = [[] for _ in binaries]
        quiet = []
        self.busy_start()
        try:
            for _ in range(self.reps):
                order = list(range(len(binaries))) + [None]
                self.rng.shuffle(order)
                for k in order:
                    if k is not None:
                        got[k].append(self.ebuser_run(binaries[k], secs))
                        continue
                    # Ours again with the shell loop stopped: no new processes.
                    self.bg.pause(self.churn, True)
                    try:
                        quiet.append(self.ebuser_run(binaries[0], secs))
                    finally:
                        self.bg.pause(self.churn, False)
        finally:
            self.bg.stop()
        self.ebuser_quiet(got[0], quiet)
        for what, key, unit_of in (("CPU per 1000 samples", "per_sample", "samples"),
                                   ("CPU per 1000 distinct stacks", "per_stack", "stacks"),
                                   ("CPU per 1000 samples, start and end left out", "steady",
                                    "samples")):
            ours = [r[key] for r in got[0]]
            note = "%s s runs; %s per run: %s" % (secs, unit_of, ", ".join(
                str(r[unit_of]) for r in got[0]))
            if not bases:
                self.res.add("3 user", what, "ebprof record", median(ours), "ms", 999, "",
                             None, None, self.reps, note, ci95(ours))
            for k, base in enumerate(bases, 1):
                anchor = [r[key] for r in got[k]]
                ratios = [o / b for o, b in zip(ours, anchor)]
                self.res.add("3 user", what, "ebprof record", median(ours), "ms", 999,
                             base, median(anchor), median(ratios), self.reps, note,
                             ci95(ours))

    def ebuser_quiet(self, busy, quiet):
        """What new processes cost: ours on the busy system, against the same
        rounds with its shell loop stopped (the other workloads go on)."""
        ms = [r["steady"] for r in quiet]
        ratios = [q["steady"] / b["steady"] for b, q in zip(busy, quiet)
                  if b["steady"] and q["steady"]]
        self.res.add("3 user", "CPU per 1000 samples, start and end left out, no new processes",
                     "ebprof record", median(ms), "ms", 999,
                     "the same with new processes", median(r["steady"] for r in busy),
                     median(ratios) if ratios else None, self.reps,
                     "the busy system's shell loop stopped; %.1f new processes a second "
                     "reported with it, %.1f without" % (median(r["new_rate"] for r in busy),
                                                         median(r["new_rate"] for r in quiet)),
                     ci95(ms))
        # The CPU a second that the loop's processes add, over their number a second.
        per = [1e6 * (b["cpu_rate"] - q["cpu_rate"]) / (b["new_rate"] - q["new_rate"])
               for b, q in zip(busy, quiet) if b["new_rate"] > q["new_rate"]]
        self.res.add("3 user", "CPU per new process, while sampling", "ebprof record",
                     median(per) if per else None, "us", 999, "", None, None, self.reps,
                     "paired rounds: (CPU a second with the loop - without) / (processes "
                     "reported a second with - without)", ci95(per) if per else None)

    def idle_run(self, kind, binary, n, seconds):
        """One profiler, system-wide at 999 Hz, while n processes start, run
        5 ms each (so that it samples them) and then sleep: its CPU ms a
        second over the next `seconds`, once they are all asleep and 2 s
        more have passed."""
        prof = Profiler(kind, 999, self.tmp)
        prof.binary = binary
        prof.start()
        idlers = subprocess.Popen([os.path.join(TOOLS, "idlers"), str(n)],
                                  stdout=subprocess.PIPE, start_new_session=True)
        try:
            if idlers.stdout.readline().strip() != b"ready":
                raise RuntimeError("idlers did not start")
            time.sleep(2)
            pid = prof.proc.pid()
            cpu0, t0 = sched_cpu_s(pid), time.time()
            time.sleep(seconds)
            cpu1, t1 = sched_cpu_s(pid), time.time()
        finally:
            os.killpg(idlers.pid, signal.SIGKILL)
            idlers.wait()
            prof.stop()
        if not cpu1:
            raise RuntimeError("%s: no CPU read" % kind)
        ms = 1000 * (cpu1 - cpu0) / (t1 - t0)
        log("idle: %s %s: %.2f ms a second with %d idle processes" % (kind, binary, ms, n))
        return ms

    def section_idle(self):
        """A host's idle processes: the profiler's steady CPU once 1,000
        processes were each sampled and have slept since, against perf
        record in the same rounds (and --ebprof-base builds)."""
        log("3 steady CPU with 1000 processes sampled once and idle since")
        n, secs = self.dur(1000, 200), self.dur(10, 2)
        bases = [b for b in self.args.ebprof_base.split(",") if b]
        runs = [("ebprof", self.args.ebprof or EBPROF)] + [("ebprof", b) for b in bases] + \
            [("perf", "perf")]
        got = [[] for _ in runs]
        for _ in range(self.reps):
            order = list(range(len(runs)))
            self.rng.shuffle(order)
            for k in order:
                got[k].append(self.idle_run(runs[k][0], runs[k][1], n, secs))
        note = "%d processes, each 5 ms of CPU then asleep; %d s from 2 s after" % (n, secs)
        for k in range(1, len(runs)):
            ratios = [o / a for o, a in zip(got[0], got[k]) if a]
            self.res.add("3 user", "CPU a second with idle processes sampled once",
                         "ebprof record", median(got[0]), "ms/s", 999,
                         runs[k][1] if runs[k][0] == "ebprof" else "perf record",
                         median(got[k]), median(ratios) if ratios else None, self.reps,
                         note, ci95(got[0]))

    def startup_run(self, kind, binary=EBPROF, ebprof_args=()):
        """One start of a profiler, system-wide at 999 Hz: (wall s, CPU s) to sampling.

        Ready is ebprof's "sampling" line (printed once its events are
        attached); for bpftrace, its "Attaching" line and a perf_event
        program of its loaded (it prints the line before it compiles);
        perf's first bytes of perf.data. CPU is utime + stime of the
        process (every thread) at that moment, from /proc.
        """
        prof = Profiler(kind, 999, self.tmp, ebprof_args)
        prof.binary = binary
        data = os.path.join(self.tmp, "perf.data")
        if kind == "perf" and os.path.exists(data):
            os.remove(data)  # the last start's file would read as this one's
        with open(prof.out, "w") as out, open(prof.err, "w") as err:
            proc = Timed(prof.argv(), self.tmp, stdout=out, stderr=err)
        t0 = time.time()
        pid = proc.pid()
        ready = {"ebprof": lambda: "ebprof: sampling" in read_text(prof.err),
                 "bpftrace": lambda: "Attaching" in read_text(prof.out) and
                 bool(prog_ids_of(pid or 0) & set(bpf_progs())),
                 "perf": lambda: os.path.exists(data) and os.path.getsize(data) > 0}[kind]
        try:
            while not ready():
                if proc.poll() is not None or time.time() - t0 > 120:
                    raise RuntimeError("%s did not start: %s" % (kind, read_text(prof.err)[-300:]))
                time.sleep(0.01)
            wall = time.time() - t0
            ticks = cpu_ticks(pid) if pid else None
        finally:
            # Killed: what it does at exit is not the start's cost, and
            # bpftrace ignores a SIGINT that comes before its handler is set.
            proc.signal(signal.SIGKILL)
            proc.wait(120)
        if ticks is None:
            raise RuntimeError("%s: no CPU figure" % kind)
        return wall, ticks / os.sysconf("SC_CLK_TCK")

    def section_startup(self):
        """What a start costs: the load (the verifier's work on our program), the attach.

        On an idle machine, reps starts of each, interleaved; with
        --ebprof-base, that build's starts too, paired with ours.
        """
        log("3 start-up: wall and CPU time until sampling")
        bases = [b for b in self.args.ebprof_base.split(",") if b]
        runs = [("ebprof", self.args.ebprof or EBPROF, (), "ebprof record"),
                ("ebprof", self.args.ebprof or EBPROF, ("--mode", "wall"),
                 "ebprof record --mode wall")]
        runs += [("ebprof", b, (), "ebprof record, %s" % b) for b in bases]
        runs += [("bpftrace", None, (), "bpftrace"), ("perf", None, (), "perf record -g")]
        got = {r[3]: [] for r in runs}
        self.bg.stop()
        for _ in range(self.reps):
            order = list(runs)
            self.rng.shuffle(order)
            for kind, binary, extra, name in order:
                got[name].append(self.startup_run(kind, binary or EBPROF, extra))
        pairs = [("ebprof record", a) for a in ["bpftrace", "perf record -g"] +
                 ["ebprof record, %s" % b for b in bases]]
        pairs.append(("ebprof record --mode wall", "bpftrace"))
        for variant, anchor in pairs:
            for i, what in enumerate(("wall time to sampling", "CPU time to sampling")):
                mine = [r[i] for r in got[variant]]
                other = [r[i] for r in got[anchor]]
                ratios = [a / b for a, b in zip(mine, other) if b]
                self.res.add("3 startup", what, variant, median(mine), "s", 999, anchor,
                             median(other), median(ratios) if ratios else None, self.reps,
                             "system-wide, idle machine; %s: %s" % (
                                 anchor, ", ".join("%.2f" % v for v in other)), ci95(mine))

    def perf_report_cpu(self):
        """CPU s of `perf report` on the last perf record: perf's symbolization."""
        data = os.path.join(self.tmp, "perf.data")
        return run_timed(["perf", "report", "-i", data, "--stdio"], self.tmp)[1]

    def collectd_run(self, with_plugin, seconds, hz, plugin_lines=""):
        d = tempfile.mkdtemp(prefix="collectd.", dir=self.tmp)
        for sub in ("plugins", "csv", "spool"):
            os.makedirs(os.path.join(d, sub))
        shutil.copy("/usr/lib/collectd/csv.so", os.path.join(d, "plugins"))
        conf = ['Hostname "bench"', "FQDNLookup false", 'BaseDir "%s"' % d,
                'PIDFile "%s/collectd.pid"' % d, 'PluginDir "%s/plugins"' % d,
                'TypesDB "/usr/share/collectd/types.db"', "Interval 1",
                "LoadPlugin csv", '<Plugin csv>\n  DataDir "%s/csv"\n</Plugin>' % d]
        if with_plugin:
            shutil.copy(os.path.join(BUILD, "ebprof.so"), os.path.join(d, "plugins"))
            conf += ["LoadPlugin ebprof",
                     "<Plugin ebprof>\n  Frequency %d\n  SpoolDir \"%s/spool\"\n"
                     "  SpoolInterval 5\n%s</Plugin>" % (hz, d, plugin_lines)]
        with open(os.path.join(d, "collectd.conf"), "w") as f:
            f.write("\n".join(conf) + "\n")
        with open(os.path.join(d, "log"), "w") as logf:
            p = Timed(["collectd", "-f", "-C", os.path.join(d, "collectd.conf")], self.tmp,
                      stdout=logf, stderr=logf)
        time.sleep(self.COLLECTD_WARM)
        t0 = cpu_ticks(p.pid() or 0)
        time.sleep(seconds)
        t1 = cpu_ticks(p.pid() or 0)
        steady = rss_mb(p.pid() or 0)
        self.last_pss = pss_mb(p.pid() or 0)
        self.last_memlock = bpf_memlock_mb(p.pid() or 0)
        p.signal(signal.SIGTERM)
        rc, _, cpu, peak = p.wait(30)
        if rc != 0:
            raise RuntimeError("collectd exited %d: %s" % (rc, read_text(os.path.join(d, "log"))[-500:]))
        ticks = (t1 - t0) / os.sysconf("SC_CLK_TCK") if t0 is not None and t1 is not None else None
        return cpu, peak, steady, ticks

    COLLECTD_HZ = (99, 999, 4999)
    COLLECTD_WARM = 3  # s: start-up (the verifier, every binary's first table) left out

    def section_collectd(self):
        """The plugin's cost in collectd, by frequency: with and without it, paired."""
        log("3 the plugin in collectd on a busy system, by frequency")
        seconds = self.dur(8, 3, 5)
        reps = self.reps if not self.smoke else 1
        self.busy_start()
        try:
            for hz in ((999,) if self.smoke else self.COLLECTD_HZ):
                self.collectd_at(hz, seconds, reps)
        finally:
            self.bg.stop()

    def collectd_at(self, hz, seconds, reps):
        rows = {k: [] for k in ("cpu", "base_cpu", "peak", "base_peak", "rss", "base_rss",
                                "steady", "base_steady", "pss", "base_pss")}
        for _ in range(reps):
            order = [True, False]
            self.rng.shuffle(order)
            got, pss = {}, {}
            for w in order:
                got[w] = self.collectd_run(w, seconds, hz)
                pss[w] = self.last_pss
            on, off = got[True], got[False]
            rows["cpu"].append(on[0] - off[0])
            rows["base_cpu"].append(off[0])
            rows["peak"].append(on[1] - off[1])
            rows["base_peak"].append(off[1])
            rows["rss"].append(on[2] - off[2])
            rows["base_rss"].append(off[2])
            if pss[True] is not None and pss[False] is not None:
                rows["pss"].append(pss[True] - pss[False])
                rows["base_pss"].append(pss[False])
            if on[3] is not None and off[3] is not None:
                rows["steady"].append(on[3] - off[3])
                rows["base_steady"].append(off[3])
        total_s = seconds + self.COLLECTD_WARM
        m = {k: median(v) if v else None for k, v in rows.items()}
        pct = lambda v, s: 100 * v / s if v is not None else None
        self.res.add("3 user", "collectd CPU added by plugin, steady", "collectd+ebprof",
                     pct(m["steady"], seconds), "% core", hz, "collectd alone",
                     pct(m["base_steady"], seconds), None, reps,
                     "busy system, the %d s after the first %d s, an SVG every 5 s"
                     % (seconds, self.COLLECTD_WARM))
        self.res.add("3 user", "collectd CPU added by plugin, with start-up", "collectd+ebprof",
                     pct(m["cpu"], total_s), "% core", hz, "collectd alone",
                     pct(m["base_cpu"], total_s), None, reps,
                     "the whole %d s run: loading the BPF program and the first tables" % total_s)
        self.res.add("3 user", "collectd RSS added by plugin", "collectd+ebprof",
                     m["peak"], "MB", hz, "collectd alone", m["base_peak"], None, reps,
                     "peak RSS (VmHWM) difference")
        self.res.add("3 user", "collectd steady RSS added", "collectd+ebprof",
                     m["rss"], "MB", hz, "collectd alone", m["base_rss"], None, reps,
                     "VmRSS at the end of the run")
        self.res.add("3 user", "collectd steady PSS added", "collectd+ebprof",
                     m["pss"], "MB", hz, "collectd alone", m["base_pss"], None, reps,
                     "Pss at the end of the run: the ring buffer's pages, mapped twice, "
                     "counted once")

    def scaling_user(self, hz):
        """ebprof's user CPU by unique stacks and by number of processes."""
        seconds = self.dur(6, 2, 3)
        for levels in ([3] if self.smoke else [2, 4, 6]):
            self.bg.stop()
            for _ in range(NCPU):
                self.bg.start([os.path.join(TOOLS, "manystacks"), "100000", str(levels)])
            cpu, peak, samples, _, wall, _ = self.user_run("ebprof", hz, seconds)
            stacks = sum(1 for _ in open(os.path.join(self.tmp, "ebprof.folded"), "rb"))
            self.res.add("6 scaling", "user CPU by unique stacks, %d" % stacks, "ebprof record",
                         1e6 * cpu / samples if samples else None, "ms/1000 samples", hz, "",
                         None, None, 1, "stacks=%d peak=%.1fMB" % (stacks, peak))
        for nproc in ([4] if self.smoke else [2, 16, 64]):
            self.bg.stop()
            for _ in range(nproc):
                self.bg.start([os.path.join(EX, "split7030"), "100000"])
            cpu, peak, samples, _, wall, _ = self.user_run("ebprof", hz, seconds)
            self.res.add("6 scaling", "user CPU by processes, %d" % nproc, "ebprof record",
                         1e6 * cpu / samples if samples else None, "ms/1000 samples", hz, "",
                         None, None, 1, "processes=%d peak=%.1fMB" % (nproc, peak))
        self.bg.stop()

    # 8 -------------------------------------------------------------------------
    UNWIND_DEPTHS = (5, 30, 70, 120)
    UNWIND_LIBS = ["/lib/x86_64-linux-gnu/libc.so.6", "/usr/bin/python3.11", "/usr/bin/perl",
                   "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
                   "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1"]

    def section_unwind(self):
        log("7 unwinding by tables")
        self.unwind_kernel()
        self.unwind_build()
        self.unwind_system()
        self.unwind_collectd()
        self.unwind_user()

    def unwind_kernel(self):
        """BPF ns/sample, tables against the kernel's frame-pointer walk, by depth."""
        secs = self.dur(2, 1)
        saved = bpf_stats_on()
        try:
            for depth in self.dur(self.UNWIND_DEPTHS, self.UNWIND_DEPTHS, (5, 70)):
                # recurse-leaffp (frame pointers everywhere, so the walk sees every frame):
                # _start, two libc frames, main and the leaf around the recursion.
                steps = max(depth - 5, 0)
                self.bg.stop()
                for _ in range(NCPU):
                    self.bg.start([os.path.join(EX, "recurse-leaffp"), "100000", str(steps)])
                time.sleep(0.3)
                ours, fps, ratios = [], [], []
                for _ in range(self.reps):
                    order = ["dwarf", "fp"]
                    self.rng.shuffle(order)
                    got = {m: self.kernel_cost("ebprof", 999, secs, ["--unwind", m])[0]
                           for m in order}
                    ours.append(got["dwarf"])
                    fps.append(got["fp"])
                    ratios.append(got["dwarf"] / got["fp"])
                self.bg.stop()
                self.res.add("7 unwind", "BPF ns/sample, %d user frames" % depth,
                             "--unwind dwarf", median(ours), "ns", 999,
                             "--unwind fp (bpf_get_stack)", median(fps), median(ratios),
                             self.reps, "recurse-leaffp %d, one per CPU; aim <= 2x" % steps)
            self.unwind_copy(secs)
        finally:
            self.bg.stop()
            bpf_stats_restore(saved)

    def unwind_copy(self, secs):
        """BPF ns/sample when samples are copied (registers and stack top) before their tables.

        shortlived's children (30 ms of CPU each) mostly end before their
        tables are loaded: nearly every sample of theirs is a copy.
        """
        self.bg.stop()
        for _ in range(NCPU):
            self.bg.start([os.path.join(EX, "shortlived"), "1000000", "30"])
        time.sleep(0.3)
        ours, fps, ratios = [], [], []
        for _ in range(self.reps):
            order = ["dwarf", "fp"]
            self.rng.shuffle(order)
            got = {m: self.kernel_cost("ebprof", 999, secs, ["--unwind", m])[0] for m in order}
            ours.append(got["dwarf"])
            fps.append(got["fp"])
            ratios.append(got["dwarf"] / got["fp"])
        self.bg.stop()
        self.res.add("7 unwind", "BPF ns/sample, short-lived processes (copied before tables)",
                     "--unwind dwarf", median(ours), "ns", 999, "--unwind fp (bpf_get_stack)",
                     median(fps), median(ratios), self.reps,
                     "shortlived 30 ms children, one loop per CPU")

    def unwind_build(self):
        """Table build time per MB of .eh_frame, and bytes per row, with our modules."""
        libs = [l for l in self.UNWIND_LIBS if os.path.exists(l)]
        out = subprocess.run([os.path.join(TOOLS, "unwbench"), "-r", str(max(self.reps, 3))]
                             + libs, capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            f = line.split()
            if f[0] == "total":
                frame, rows, table, per_row, ms, ms_mb = (float(x) for x in f[1:7])
                self.res.add("7 unwind", "table build time per MB of .eh_frame", "unwtab", ms_mb,
                             "ms/MB", "", "", None, None, max(self.reps, 3),
                             "%d files, %.1f MB of CFI, %.0f ms" % (len(libs), frame / 1e6, ms))
                self.res.add("7 unwind", "table bytes per row", "unwtab", per_row, "B", "",
                             "OTel delta (research)", 4.0, per_row / 4.0, 1,
                             "%.0f rows, %.2f MB" % (rows, table / 1048576))
            elif f[0].endswith("libc.so.6"):
                self.res.add("7 unwind", "libc table build", "unwtab", float(f[5]), "ms", "",
                             "drain interval", 1000.0, float(f[5]) / 1000.0, max(self.reps, 3),
                             "%s rows, %s bytes" % (f[2], f[3]))

    def unwind_summary(self, text):
        m = re.search(r"unwind tables: (\d+) loaded, (\d+) rows, ([\d.]+) MiB \(([\d.]+) "
                      r"bytes a row; ([\d.]+) MiB in the kernel", text)
        return [float(x) for x in m.groups()] if m else None

    def unwind_system(self):
        """The tables of every process running on the machine, sampled system-wide."""
        self.busy_start()
        try:
            err = os.path.join(self.tmp, "system.err")
            with open(err, "w") as e:
                subprocess.run([EBPROF, "record", "--unwind", "dwarf", "-F", "99", "-d",
                                str(self.dur(10, 2, 5)), "--format", "folded", "-o",
                                os.path.join(self.tmp, "system.folded")], stderr=e, check=True)
        finally:
            self.bg.stop()
        got = self.unwind_summary(read_text(err))
        if got:
            tables, rows, mib, per_row, kmib = got
            self.res.add("7 unwind", "tables of every process sampled", "ebprof record", kmib,
                         "MiB", 99, "", None, None, 1,
                         "%d tables, %d rows, %.2f MiB of rows (%.2f B/row)"
                         % (tables, rows, mib, per_row))

    def unwind_collectd(self):
        """The plugin's RSS and locked (BPF) memory with tables, against frame pointers."""
        hz, seconds = 999, self.dur(8, 3, 5)
        self.busy_start()
        rss, lock, base_rss, base_lock = [], [], [], []
        try:
            for _ in range(self.reps if not self.smoke else 1):
                order = ["auto", "fp"]
                self.rng.shuffle(order)
                for mode in order:
                    _, _, steady, _ = self.collectd_run(True, seconds, hz, '  Unwind "%s"\n' % mode)
                    (rss if mode == "auto" else base_rss).append(steady)
                    (lock if mode == "auto" else base_lock).append(self.last_memlock)
        finally:
            self.bg.stop()
        self.res.add("7 unwind", "collectd RSS with tables", "Unwind auto", median(rss), "MB",
                     hz, "Unwind fp", median(base_rss), median(rss) / median(base_rss),
                     len(rss), "busy system, VmRSS at the end of the run")
        self.res.add("7 unwind", "BPF locked memory with tables", "Unwind auto", median(lock),
                     "MB", hz, "Unwind fp", median(base_lock),
                     median(lock) / median(base_lock) if median(base_lock) else None, len(lock),
                     "memlock of the plugin's BPF maps (fdinfo)")

    def unwind_user(self):
        """User CPU per 1000 samples: record --unwind dwarf vs perf --call-graph dwarf + report."""
        hz, seconds = 999, self.dur(10, 2, 5)
        self.bg.stop()
        pids = [self.bg.start([os.path.join(EX, "chains-nofp"), "100000"]).pid,
                self.bg.start([os.path.join(EX, "unwcases-nofp"), "qsort", "100000"]).pid]
        time.sleep(0.3)
        plist = []
        for p in pids:
            plist += ["-p", str(p)]
        ours, theirs, ratios = [], [], []
        try:
            for _ in range(self.reps if not self.smoke else 1):
                err = os.path.join(self.tmp, "uw.err")
                with open(err, "w") as e:
                    _, cpu, _ = run_timed([EBPROF, "record", "--unwind", "dwarf", "-F",
                                              str(hz), "-d", str(seconds), "--format", "folded",
                                              "-o", os.path.join(self.tmp, "uw.folded")] + plist,
                                             self.tmp, stderr=e)
                m = re.search(r"(\d+) samples,", read_text(err))
                samples = int(m.group(1)) if m else 0
                data = os.path.join(self.tmp, "uw.data")
                perr = os.path.join(self.tmp, "uw-perf.err")
                with open(perr, "w") as e:
                    _, pcpu, _ = run_timed(["perf", "record", "-F", str(hz), "--call-graph",
                                               "dwarf", "-p", ",".join(map(str, pids)), "-o",
                                               data, "--", "sleep", str(seconds)], self.tmp,
                                              stderr=e)
                rcpu = run_timed(["perf", "report", "-i", data, "--stdio"], self.tmp)[1]
                m = re.search(r"\((\d+) samples\)", read_text(perr))
                psamples = int(m.group(1)) if m else 0
                if samples and psamples:
                    ours.append(1e6 * cpu / samples)
                    theirs.append(1e6 * (pcpu + rcpu) / psamples)
                    ratios.append(ours[-1] / theirs[-1])
        finally:
            self.bg.stop()
        self.res.add("7 unwind", "user CPU per 1000 samples", "record --unwind dwarf",
                     median(ours), "ms", hz, "perf record --call-graph dwarf + report",
                     median(theirs), median(ratios), len(ratios),
                     "chains-nofp + a qsort callback through libc, -p both")

    # 4 -------------------------------------------------------------------------
    def section_symbols(self):
        log("4 symbolization")
        sym = os.path.join(TOOLS, "symbench")
        libs = ["/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1",
                "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"]
        for lib in libs:
            if not os.path.exists(lib):
                continue
            out = subprocess.run([sym, "load", lib, str(max(self.reps, 3)),
                                  str(self.dur(2000000, 100000))],
                                 capture_output=True, text=True, check=True).stdout
            kv = dict(x.split("=") for x in out.split())
            name = os.path.basename(lib)
            self.res.add("4 symbols", "cold load " + name, "ebprof elfsym", float(kv["load_ms"]),
                         "ms", "", "", None, None, max(self.reps, 3),
                         "%s function symbols" % kv["symbols"])
            self.res.add("4 symbols", "steady lookups " + name, "ebprof elfsym",
                         float(kv["lookups_per_s"]) / 1e6, "M/s", "", "", None, None, 1,
                         "random addresses in its code")
        # Same addresses through perf and through us: leaf IPs that perf
        # recorded from a clang compile (libLLVM, libclang-cpp, libstdc++).
        data = os.path.join(self.tmp, "clang.data")
        srcs = sorted(os.path.join(ROOT, d, f) for d in ("symbolizer", "render")
                      for f in os.listdir(os.path.join(ROOT, d)) if f.endswith(".c"))
        if self.smoke:
            srcs = srcs[:1]
        objs = tempfile.mkdtemp(dir=self.tmp)
        subprocess.run(["perf", "record", "-q", "-e", "cpu-clock:u", "-F", "4999", "-o", data,
                        "--", "clang-14", "-O2", "-g", "-std=c11", "-D_GNU_SOURCE",
                        "-I" + ROOT, "-I" + BUILD, "-c"] + srcs, cwd=objs, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        script = subprocess.run(["perf", "script", "-i", data, "-F", "pid,ip,sym,dso",
                                 "--show-mmap-events"], capture_output=True, text=True).stdout
        addrs = os.path.join(self.tmp, "addrs.txt")
        perf_names = []
        maps = {}  # pid -> [(start, end, pgoff, path)]
        mmap = re.compile(r"\s*(\d+) PERF_RECORD_MMAP2 \d+/\d+: \[0x([0-9a-f]+)\(0x([0-9a-f]+)\) "
                          r"@ (0x[0-9a-f]+|0) .*\]: \S*x\S* (/\S+)$")
        sample = re.compile(r"\s*(\d+)\s+([0-9a-f]+) (.*) \((/\S+\.so[.0-9]*)\)$")
        with open(addrs, "w") as f:
            for line in script.splitlines():
                m = mmap.match(line)
                if m:
                    start, size = int(m.group(2), 16), int(m.group(3), 16)
                    maps.setdefault(m.group(1), []).append(
                        (start, start + size, int(m.group(4), 16), m.group(5)))
                    continue
                # A sample in a shared object: its file offset, through the mapping.
                m = sample.match(line)
                if not m:
                    continue
                ip = int(m.group(2), 16)
                for start, end, pgoff, path in maps.get(m.group(1), []):
                    if start <= ip < end and path == m.group(4):
                        f.write("%x %s\n" % (ip - start + pgoff, path))
                        perf_names.append(m.group(3))
                        break
        perf_t, ours_t, ratios, perf_rss, ours_rss = [], [], [], [], []
        names = os.path.join(self.tmp, "names.txt")
        out = os.path.join(self.tmp, "symbench.out")
        for _ in range(self.reps):
            pt, _, prss = run_timed(["perf", "report", "-i", data, "--stdio", "--sort",
                                     "dso,sym"], self.tmp)
            with open(out, "w") as f:
                ot, _, orss = run_timed([sym, "resolve", addrs, "3", names], self.tmp, stdout=f)
            perf_t.append(pt)
            ours_t.append(ot)
            ratios.append(ot / pt)
            perf_rss.append(prss)
            ours_rss.append(orss)
        out = read_text(out)
        kv = dict(x.split("=") for x in out.split())
        ours = read_text(names).splitlines()
        both = [(a, b) for a, b in zip(perf_names, ours)
                if a != "[unknown]" and b != "[unknown]"]
        # perf prints C++ names without their parameter lists; compare the rest.
        def plain(name):
            return name.split("(", 1)[0] if not name.startswith("(") else name
        agree = 100.0 * sum(plain(a) == plain(b) for a, b in both) / len(both) if both else 0
        self.res.add("4 symbols", "cold: name N sampled addresses", "symbench resolve",
                     median(ours_t) * 1e3, "ms", "", "perf report", median(perf_t) * 1e3,
                     median(ratios), self.reps,
                     "N=%s leaf IPs in %s files; both named %d, same name %.1f%% (aliases differ); "
                     "perf also sorts and prints" % (kv["addresses"], kv["files"], len(both),
                                                    agree))
        self.res.add("4 symbols", "cold: peak RSS", "symbench resolve", median(ours_rss), "MB",
                     "", "perf report", median(perf_rss), median(ours_rss) / median(perf_rss),
                     self.reps, "the same run as the row above")
        self.res.add("4 symbols", "warm resolves", "symbench resolve",
                     float(kv["warm_per_s"]) / 1e6, "M/s", "", "", None, None, 1,
                     "the same addresses, tables loaded, names demangled (cached)")
        unnamed_perf = sum(n == "[unknown]" for n in perf_names)
        unnamed_ours = sum(n == "[unknown]" for n in ours)
        self.res.add("4 symbols", "addresses left unnamed", "symbench resolve",
                     100.0 * unnamed_ours / max(1, len(ours)), "%", "", "perf report",
                     100.0 * unnamed_perf / max(1, len(perf_names)), None, 1,
                     "stripped libraries: .dynsym only")

    # 4 inline ------------------------------------------------------------------
    def section_symbolize(self):
        """Names, and names with inlined functions, of the same addresses as perf."""
        log("4 symbolization with inlined functions")
        sym = os.path.join(TOOLS, "symbench")
        # The workload: our own renderer, whose hot loops are static functions
        # the compiler inlines, built -O2 -g with frame pointers so that perf's
        # callchains (and so both address sets) reach the callers.
        exe = os.path.join(self.tmp, "ebprof-fp")
        core = [os.path.join(d, f) for d in ("cli", "bpf", "symbolizer", "render")
                for f in sorted(os.listdir(os.path.join(ROOT, d)))
                if f.endswith(".c") and not f.endswith(".bpf.c")]
        subprocess.run(["cc", "-std=c11", "-D_GNU_SOURCE", "-O2", "-g",
                        "-fno-omit-frame-pointer", "-I" + ROOT, "-I" + BUILD, "-o", exe] + core +
                       ["-lbpf", "-ldw", "-lelf", "-lz", "-llzma", "-lstdc++", "-lpthread",
                        "-lncursesw"], cwd=ROOT, check=True)
        folded = os.path.join(self.tmp, "inline.folded")
        subprocess.run([sys.executable, os.path.join(ROOT, "tests", "bench", "gen_folded.py"),
                        str(self.dur(100000, 5000)), folded], check=True)
        data = os.path.join(self.tmp, "inline.data")
        subprocess.run(["perf", "record", "-q", "-g", "-e", "cpu-clock:u", "-F", "4999", "-o",
                        data, "--", exe, "render", folded, "-o", os.path.join(self.tmp, "inline.svg")], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # Every callchain address in a file, as perf prints it (the file's own
        # address: its text is mapped at file offset = address in these files).
        script = subprocess.run(["perf", "script", "-i", data, "-F", "ip,dso"],
                                capture_output=True, text=True, check=True).stdout
        addrs = os.path.join(self.tmp, "inline-addrs.txt")
        with open(addrs, "w") as f:
            for line in script.splitlines():
                parts = line.split()
                if len(parts) == 2 and parts[1].startswith("(/"):
                    f.write("%s %s\n" % (parts[0], parts[1].strip("()")))
        # binutils' addr2line -f -i (what perf runs for source lines) on the
        # same addresses, file by file: a tool that does expand inlines here.
        by_file = {}
        for line in read_text(addrs).splitlines():
            off, path = line.split()
            by_file.setdefault(path, []).append("0x" + off)
        a2l_in = []
        for i, (path, offs) in enumerate(sorted(by_file.items())):
            a2l_in.append((path, os.path.join(self.tmp, "a2l-%d.txt" % i)))
            with open(a2l_in[-1][1], "w") as f:
                f.write("\n".join(offs) + "\n")
        a2l_out = os.path.join(self.tmp, "inline-a2l.out")
        # The same addresses in a stripped copy of the workload (its .dynsym
        # and .eh_frame kept): named by symbol where .dynsym has one, else
        # grouped under the start of their function, as the symbolizer does.
        stripped = exe + "-stripped"
        subprocess.run(["strip", "--strip-all", "-o", stripped, exe], check=True)
        addrs_stripped = os.path.join(self.tmp, "inline-addrs-stripped.txt")
        with open(addrs_stripped, "w") as f:
            for line in read_text(addrs).splitlines():
                off, path = line.split()
                f.write("%s %s\n" % (off, stripped if path == exe else path))

        def addr2line():
            wall = 0.0
            with open(a2l_out, "w") as out:
                for path, listing in a2l_in:
                    with open(listing) as f:
                        t0 = time.time()
                        subprocess.run(["addr2line", "-f", "-i", "-e", path], stdin=f,
                                       stdout=out, check=True)
                        wall += time.time() - t0
            return wall

        report = ["perf", "report", "-i", data, "--stdio", "--sort", "dso,sym", "-g"]
        times = {k: [] for k in ("names", "inline", "perf", "perf_inline", "addr2line",
                                 "group")}
        ratios = {"names": [], "inline": [], "addr2line": [], "group": []}
        kv_group = {}
        kv, perf_inlined = {}, 0
        names = os.path.join(self.tmp, "inline-names.txt")
        for _ in range(self.reps):
            runs = [("perf", report), ("perf_inline", report + ["--inline"]),
                    ("names", [sym, "resolve", addrs, "0"]),
                    ("inline", [sym, "inline", addrs, "0", names]),
                    ("group", [sym, "group", addrs_stripped, "0", names + ".group"]),
                    ("addr2line", addr2line)]
            random.shuffle(runs)
            for key, argv in runs:
                out = os.path.join(self.tmp, "inline-%s.out" % key)
                if callable(argv):
                    times[key].append(argv())
                    continue
                with open(out, "w") as f:
                    t, _, _ = run_timed(argv, self.tmp, stdout=f)
                times[key].append(t)
                if key == "inline":
                    kv = dict(x.split("=") for x in read_text(out).split())
                if key == "group":
                    kv_group = dict(x.split("=") for x in read_text(out).split())
                if key == "perf_inline":
                    perf_inlined = read_text(out).count("(inlined)")
            ratios["names"].append(times["names"][-1] / times["perf"][-1])
            ratios["inline"].append(times["inline"][-1] / times["perf_inline"][-1])
            ratios["addr2line"].append(times["inline"][-1] / times["addr2line"][-1])
            ratios["group"].append(times["group"][-1] / times["perf"][-1])
        expanded = sum(";" in line for line in read_text(names).splitlines())
        cmd = "perf report --stdio --sort dso,sym -g"
        self.res.add("4 inline", "name N callchain addresses", "symbench resolve",
                     median(times["names"]) * 1e3, "ms", "", cmd, median(times["perf"]) * 1e3,
                     median(ratios["names"]), self.reps,
                     "N=%s in %s files; cold: tables loaded on first use; perf also sorts "
                     "and prints" % (kv.get("addresses"), kv.get("files")))
        group_names = read_text(names + ".group").splitlines()
        grouped = {n for n in group_names if n.startswith("[ebprof-fp-stripped+0x")}
        self.res.add("4 inline", "name them in a stripped copy, grouped", "symbench group",
                     median(times["group"]) * 1e3, "ms", "", cmd,
                     median(times["perf"]) * 1e3, median(ratios["group"]), self.reps,
                     "%s of %s named; %d of them by their function's start (%d functions), "
                     "the rest by .dynsym or another file's symbols; perf reads the "
                     "unstripped file" % (kv_group.get("named"), kv_group.get("addresses"),
                                          sum(n in grouped for n in group_names),
                                          len(grouped)))
        self.res.add("4 inline", "name them with inlined functions", "symbench inline",
                     median(times["inline"]) * 1e3, "ms", "", cmd + " --inline",
                     median(times["perf_inline"]) * 1e3, median(ratios["inline"]), self.reps,
                     "%d of %s addresses gained inlined frames (%s walked in DWARF of %s "
                     "files, %.1f MB held); perf printed %d '(inlined)' entries" %
                     (expanded, kv.get("addresses"), kv.get("inline_walked"),
                      kv.get("inline_dwarf_files"), int(kv.get("inline_bytes", 0)) / 1e6,
                      perf_inlined))
        self.res.add("4 inline", "name them with inlined functions", "symbench inline",
                     median(times["inline"]) * 1e3, "ms", "", "addr2line -f -i (binutils)",
                     median(times["addr2line"]) * 1e3, median(ratios["addr2line"]), self.reps,
                     "the same addresses, one addr2line per file (%d files); it printed %d "
                     "lines (function and file:line per frame, inlined ones included)" %
                     (len(a2l_in), len(read_text(a2l_out).splitlines()) // 2 * 2))
        warm = dict(x.split("=") for x in subprocess.run(
            [sym, "inline", addrs, "3"], capture_output=True, text=True, check=True).stdout.split())
        self.res.add("4 inline", "warm: with inlined functions", "symbench inline",
                     float(warm["warm_per_s"]) / 1e6, "M/s", "", "", None, None, 1,
                     "the same addresses again: chains from the cache")

    # 5 -------------------------------------------------------------------------
    def section_render(self):
        """ebprof render and flamegraph.pl on the same folded files, paired.

        Each pair renders one file with both, in a shuffled order; the row's
        ratio is the median of the pairs' ratios (flamegraph.pl / ebprof:
        a speed-up for time, and the ratio of peak RSS the other way round).
        flamegraph.pl takes ~45 s at 500k stacks here, so it gets at most 3
        pairs there (1 in the quick survey). Both drop frames under 0.1 px of a 1200 px image; the SVG
        size row is one render of each.
        """
        log("5 rendering")
        fg = flamegraph_pl()
        sizes = [2000, 10000] if self.smoke else [10000, 100000, 500000]
        for n in sizes:
            folded = os.path.join(self.tmp, "stacks-%d.folded" % n)
            subprocess.run([sys.executable, os.path.join(ROOT, "tests/bench/gen_folded.py"),
                            str(n), folded], check=True)
            ours_svg = os.path.join(self.tmp, "ours.svg")
            theirs_svg = os.path.join(self.tmp, "theirs.svg")
            runs = {"ours": ([EBPROF, "render", folded, "-o", ours_svg], None),
                    "theirs": (["perl", fg, folded], theirs_svg)}
            reps = self.reps if n < 500000 else self.dur(min(self.reps, 3), 1, 1)
            t_ratio, rss_ratio, got = [], [], {"ours": [], "theirs": []}
            for _ in range(reps):
                pair = {}
                for who in random.sample(sorted(runs), 2):
                    argv, stdout = runs[who]
                    if stdout:
                        with open(stdout, "wb") as out:
                            wall, _, peak = run_timed(argv, self.tmp, stdout=out)
                    else:
                        wall, _, peak = run_timed(argv, self.tmp)
                    pair[who] = (wall, peak)
                    got[who].append((wall, peak))
                t_ratio.append(pair["theirs"][0] / pair["ours"][0])
                rss_ratio.append(pair["ours"][1] / pair["theirs"][1])
            t = median(w for w, _ in got["ours"])
            peak = median(p for _, p in got["ours"])
            fg_t = median(w for w, _ in got["theirs"])
            fg_peak = median(p for _, p in got["theirs"])
            size = os.path.getsize(ours_svg) / 1e6
            fg_size = os.path.getsize(theirs_svg) / 1e6
            with open(ours_svg, "rb") as f:
                drawn = f.read().count(b"<g data-n=")
            note = "%d stacks, %.1f MB folded" % (n, os.path.getsize(folded) / 1e6)
            k = "%dk stacks" % (n // 1000)
            self.res.add("5 render", "render time, " + k, "ebprof render", t, "s", "",
                         "flamegraph.pl", fg_t, median(t_ratio), reps,
                         note + "; ratio = speed-up (flamegraph.pl / ebprof)")
            self.res.add("5 render", "render peak RSS, " + k, "ebprof render", peak, "MB", "",
                         "flamegraph.pl", fg_peak, median(rss_ratio), reps, note)
            self.res.add("5 render", "SVG size, " + k, "ebprof render", size, "MB", "",
                         "flamegraph.pl", fg_size, size / fg_size, 1,
                         note + "; minwidth 0.1 px both; %d frames drawn, %.0f bytes each"
                         % (drawn, 1e6 * size / max(1, drawn)))
            os.remove(folded)

    # 7 -------------------------------------------------------------------------
    def top_run(self, kind, hz, seconds):
        """One live view on the busy system: (CPU s per wall s, peak RSS MB).

        ebprof top prints a plain table every second (stdout not a terminal);
        perf top --stdio prints its table every second (-d 1), with call graphs
        (-g) since ebprof takes whole stacks too. perf top reads keys from
        stdin, so it gets a pipe that stays open; SIGINT ends it.
        """
        if kind == "ebprof":
            argv = [EBPROF, "top", "-F", str(hz), "-d", str(seconds)]
        else:
            argv = ["perf", "top", "-F", str(hz), "-g", "--stdio", "-d", "1"]
        t = Timed(argv, self.tmp, stdin=subprocess.PIPE)
        if kind == "perf":
            time.sleep(seconds)
            t.signal(signal.SIGINT)
        rc, wall, cpu, peak = t.wait(seconds + 60)
        t.proc.stdin.close()
        if rc != 0 or wall <= 0:
            raise RuntimeError("%s top exited %d" % (kind, rc))
        return cpu / wall, peak

    def section_top(self):
        log("7 a live view: ebprof top against perf top")
        hz = 99
        seconds = self.dur(30, 3, 10)
        self.busy_start()
        try:
            share = {"ebprof": [], "perf": []}
            peak = {"ebprof": [], "perf": []}
            for _ in range(self.reps):
                order = ["ebprof", "perf"]
                self.rng.shuffle(order)
                for kind in order:
                    cpu, rss = self.top_run(kind, hz, seconds)
                    share[kind].append(100 * cpu)
                    peak[kind].append(rss)
            ratios = [e / p if p else None for e, p in zip(share["ebprof"], share["perf"])]
            ratios = [r for r in ratios if r is not None]
            self.res.add("7 top", "CPU share of one core", "ebprof top", median(share["ebprof"]),
                         "%", hz, "perf top -g", median(share["perf"]),
                         median(ratios) if ratios else None, self.reps,
                         "system-wide, refreshed every second, %d s runs incl. start-up; "
                         "ratio: median of paired runs" % seconds)
            pr = [e / p for e, p in zip(peak["ebprof"], peak["perf"]) if p]
            self.res.add("7 top", "peak RSS", "ebprof top", median(peak["ebprof"]), "MB", hz,
                         "perf top -g", median(peak["perf"]), median(pr) if pr else None,
                         self.reps, "")
        finally:
            self.bg.stop()

    # 6 -------------------------------------------------------------------------
    def plot(self):
        """scaling.svg from the CSV, through gnuplot."""
        if not shutil.which("gnuplot"):
            raise RuntimeError("gnuplot is not installed: run make deps")
        series = {
            "kernel_hz": lambda r: r["row"] == "ns/sample shallow",
            "kernel_depth": lambda r: r["row"].startswith("ns/sample by depth"),
            "slowdown": lambda r: r["row"] == "slowdown above floor",
            "render": lambda r: r["row"].startswith("render time"),
            "stacks": lambda r: r["row"].startswith("user CPU by unique stacks"),
        }
        for name, want in series.items():
            with open(os.path.join(self.out, name + ".dat"), "w") as f:
                for r in self.res.rows:
                    if not want(r):
                        continue
                    x = re.search(r"(?:depth|stacks)=([0-9.]+)", r["note"])
                    x = x.group(1) if x else r["hz"]
                    if name == "render":
                        x = re.match(r"(\d+) stacks", r["note"]).group(1)
                    if name == "slowdown":
                        f.write("%s %s %s\n" % (x, r["variant"], r["value"]))
                    else:
                        f.write("%s %s %s\n" % (x, r["value"] or "nan", r["anchor_value"] or "nan"))
        with open(os.path.join(self.out, "rss.dat"), "w") as f:
            f.writelines("%.1f %s\n" % (t, r) for t, r in self.rss_curve if r is not None)
        gp = os.path.join(self.out, "scaling.gp")
        with open(gp, "w") as f:
            f.write(GNUPLOT_HEAD % {"dir": self.out})
            for name, title, xlabel, logx, plot in PANELS:
                f.write('set title "%s"\nset xlabel "%s"\n%s\n' %
                        (title, xlabel, "set logscale x" if logx else "unset logscale x"))
                dat = os.path.join(self.out, name + ".dat")
                if os.path.getsize(dat):
                    f.write("set autoscale\nplot " + plot.replace("DAT", '"%s"' % dat) + "\n")
                else:  # a section left out of this run: an empty panel says so
                    f.write('set xrange [1:10]\nset yrange [0:1]\n'
                            'plot -1 t "not measured in this run"\nset autoscale\n')
            f.write("unset multiplot\n")
        subprocess.run(["gnuplot", gp], check=True, cwd=self.out)

    def section_python(self):
        """BPF ns/sample on Python stacks, with Python frames against without.

        One Debian python3.11 per CPU spinning 50 recursive Python calls
        deep (examples/pydeep.py: 52 Python frames a sample), sampled
        system-wide at 999 Hz by ebprof and by ebprof --no-python, paired
        and shuffled as the kernel section pairs ebprof with bpftrace; then
        the profiler's own CPU per 1000 samples, with and without.
        """
        log("10 Python frames: kernel ns/sample and user CPU, --python against --no-python")
        py = "/usr/bin/python3.11"
        if not os.access(py, os.X_OK):
            raise RuntimeError("%s is missing: make deps installs python3.11" % py)
        secs = self.dur(3, 1, 2)
        self.bg.stop()
        for _ in range(NCPU):
            self.bg.start([py, os.path.join(ROOT, "examples", "pydeep.py"), "100000"])
        time.sleep(0.5)
        ns = {"python": [], "native": []}
        ratios, counts = [], []
        saved = bpf_stats_on()
        try:
            for _ in range(self.reps):
                order = ["python", "native"]
                self.rng.shuffle(order)
                got = {k: self.kernel_cost("ebprof", 999, secs,
                                           [] if k == "python" else ["--no-python"])
                       for k in order}
                for k in order:
                    ns[k].append(got[k][0])
                counts.append(got["python"][1])
                ratios.append(got["python"][0] / got["native"][0])
            bpf_stats_restore(saved)
            # The profiler's own CPU (naming the frames) per 1000 samples.
            per_k = {"python": [], "native": []}
            user_ratios = []
            for _ in range(max(1, self.reps - 2)):
                order = ["python", "native"]
                self.rng.shuffle(order)
                got = {}
                for k in order:
                    cpu, _, samples, _, _, _ = self.user_run(
                        "ebprof", 999, secs * 2, [] if k == "python" else ["--no-python"])
                    got[k] = 1000 * cpu / samples if samples else float("nan")
                    per_k[k].append(got[k])
                user_ratios.append(got["python"] / got["native"])
        finally:
            bpf_stats_restore(saved)
            self.bg.stop()
        self.res.add("10 python", "ns/sample, 52 Python frames", "ebprof", median(ns["python"]),
                     "ns", 999, "ebprof --no-python", median(ns["native"]), median(ratios),
                     self.reps, "examples/pydeep.py on every CPU; ~%d samples/run"
                     % median(counts))
        self.res.add("10 python", "CPU per 1000 samples, Python workload", "ebprof record",
                     median(per_k["python"]) * 1e3, "ms", 999, "ebprof --no-python",
                     median(per_k["native"]) * 1e3, median(user_ratios), len(user_ratios),
                     "the same processes; py-spy is not packaged in Debian 12 (no PyPI here)")

    def section_host(self):
        """What this host charges for the kernel work a new process costs us.

        Figures from different hosts differ by these more than by builds:
        a guest whose page tables the hypervisor shadows pays 15 us a page
        fault where nested paging pays well under 1.
        """
        log("0 host: a system call, an open of maps (its own, a new process's first), "
            "a maps query, a page fault")
        self.bg.stop()
        out = subprocess.run([os.path.join(TOOLS, "hostcost"), str(max(self.reps, 3))],
                             check=True, capture_output=True, text=True).stdout
        for line in out.splitlines():
            name, value = line.split()[:2]
            if value != "-":
                self.res.add("0 host", name, "this host", float(value), "us",
                             runs=max(self.reps, 3))

    def section_offcpu(self):
        log("9 off-CPU cost per context switch")
        offcpu_bench.section_offcpu(self, self.args.ebprof or EBPROF, TOOLS, median)

    def run(self):
        sections = self.args.sections.split(",")
        steps = [("host", self.section_host), ("kernel", self.section_kernel),
                 ("slowdown", self.section_slowdown), ("ticks", self.section_ticks),
                 ("filtered", self.section_filtered), ("user", self.section_user),
                 ("ebuser", self.section_ebuser), ("idle", self.section_idle),
                 ("startup", self.section_startup),
                 ("collectd", self.section_collectd),
                 ("symbols", self.section_symbols), ("symbolize", self.section_symbolize),
                 ("render", self.section_render), ("top", self.section_top),
                 ("unwind", self.section_unwind), ("offcpu", self.section_offcpu),
                 ("python", self.section_python)]
        t0 = time.time()
        took = []
        for name, fn in steps:
            # slowdown's wall times need many pairs to resolve a point
            # (section ticks counts the same cost in less time): in the
            # quick survey it runs only when named.
            left_out = ("ebuser", "idle") + (("slowdown",) if self.quick else ())
            if ("all" in sections and name not in left_out) or name in sections:
                t1 = time.time()
                fn()
                took.append((name, time.time() - t1))
                print("bench: section %s took %.0f s" % took[-1], flush=True)
        self.plot()
        self.res.markdown(os.path.join(self.out, "bench.md"))
        print(self.res.table())
        print("\nwritten: %s, %s (%.0f s)" % (self.res.path, os.path.join(self.out,
                                                                        "scaling.svg"),
                                              time.time() - t0))
        print("sections: " + ", ".join("%s %.0f s" % t for t in took))


GNUPLOT_HEAD = """set terminal svg size 1200,800 dynamic font "sans,11"
set output "%(dir)s/scaling.svg"
set multiplot layout 2,3 title "ebprof: how costs grow (make bench)"
set key top left
set grid
"""

# (data file, title, x label, log x, plot command with DAT for the file)
PANELS = [
    ("kernel_hz", "kernel ns per sample by frequency (shallow)", "Hz", True,
     'DAT u 1:2 w lp t "ebprof", DAT u 1:3 w lp t "bpftrace"'),
    ("kernel_depth", "kernel ns per sample by stack depth (999 Hz)", "recursion depth", False,
     'DAT u 1:2 w lp t "ebprof", DAT u 1:3 w lp t "bpftrace"'),
    ("slowdown", "slowdown above the floor (points) by frequency", "Hz", True,
     'for [p in "perf bpftrace ebprof"] DAT u 1:(strcol(2) eq p ? $3 : 1/0) w lp t p'),
    ("render", "render seconds by unique stacks", "stacks", True,
     'DAT u 1:2 w lp t "ebprof render", DAT u 1:3 w lp dt 2 t "flamegraph.pl"'),
    ("stacks", "ebprof CPU ms per 1000 samples by unique stacks", "stacks in the profile", True,
     'DAT u 1:2 w lp t "ebprof record"'),
    ("rss", "ebprof RSS (MB) over a busy run", "seconds", False,
     'DAT u 1:2 w lp t "VmRSS"'),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--smoke", action="store_true", help="every row briefly, to test the rows")
    ap.add_argument("--quick", action="store_true",
                    help="the survey make bench runs (about 15 min): 3 pairs per figure, "
                         "shorter runs, fewer frequencies and depths, section slowdown only "
                         "when named; each README figure comes from its section's own command")
    ap.add_argument("--reps", type=int, default=0,
                    help="paired runs per figure (default 5; 3 with --quick)")
    ap.add_argument("--sections", default="all",
                    help="comma list of host,kernel,slowdown,ticks,filtered,user,ebuser,idle,startup,collectd,"
                         "symbols,"
                         "symbolize,"
                         "render,top,"
                         "unwind,"
                         "offcpu,python "
                         "(default all)")
    ap.add_argument("--ebprof", default="",
                    help="sections ebuser, idle and offcpu: the ebprof binary measured "
                    "(default build/ebprof)")
    ap.add_argument("--ebprof-base", default="",
                    help="sections ebuser, idle and startup: another ebprof binary (the build before a change) "
                         "paired against build/ebprof")
    ap.add_argument("--ticks-hz", type=lambda v: [int(x) for x in v.split(",")],
                    default=None,
                    help="section ticks: the frequencies, a comma list (default 999,4999; "
                         "4999 with --quick); "
                         "one frequency with many --reps is its long mode")
    ap.add_argument("--ticks-warm", type=float, default=1.2,
                    help="section ticks: seconds of work each tool samples before the "
                         "measured run (default 1.2: past ebprof's first drain; 0.3 before "
                         "6 Dec 2026)")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench: needs root (BPF programs and system-wide perf events)")
    for path in (EBPROF, os.path.join(TOOLS, "floor"), os.path.join(TOOLS, "symbench")):
        if not os.access(path, os.X_OK):
            sys.exit("bench: %s is not built: run make bench-tools" % path)
    bench = Bench(args)
    try:
        bench.run()
    finally:
        bench.cleanup()


if __name__ == "__main__":
    main()
