#!/usr/bin/env python3
"""The plugin in collectd, paired between builds: collectd runs with each
build's ebprof.so in turn (shuffled in every round) on section 3's busy
workload, started once for all of them, so that the builds share the
machine's drift. Each run: 3 s of start-up left out, then SECONDS of
collectd's CPU (the schedstat of each of its threads) and its VmRSS at the end.
Prints each run, each build's medians, and the median of the rounds'
ratios against the first build, with its 95% interval.

With --together, the builds' collectds run at the same time in each
round, on the same seconds of the workload: its drift between runs (the
rate of new processes moves with the machine's load) is then shared, not
only its drift over the rounds. Each also samples the others, alike for
all.

With --no-new-processes, the workload's shell loop (about 125 new
processes a second) is left out, so that what the samples cost can be
told from what new processes cost.

With --idlers N, each run starts N processes once collectd is up
(tests/bench/idlers: each runs 5 ms, so that the plugin samples it, then
sleeps), and measures from 2 s after they all sleep: what a host's idle
processes cost the plugin at every read.

A build may carry options of its own for the plugin's block, after commas:
build/ebprof.so,Unwind="fp" runs that build with `Unwind "fp"`, so that
one build can be paired with itself in another mode, or an old build
with the mode it was measured in.

Usage: plugin_pair.py [--together] [--no-new-processes] [--idlers N] HZ SECONDS ROUNDS
       PATH-TO-ebprof.so[,Option=Value...]...
"""
import os, random, shutil, signal, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import ci95  # noqa: E402

ARGS = sys.argv[1:]
TOGETHER = "--together" in ARGS[:2]
QUIET = "--no-new-processes" in ARGS[:2]
ARGS = [a for a in ARGS if a not in ("--together", "--no-new-processes")]
IDLERS = 0
if "--idlers" in ARGS:
    i = ARGS.index("--idlers")
    IDLERS = int(ARGS[i + 1])
    del ARGS[i:i + 2]
if len(ARGS) < 4:
    sys.exit(__doc__)
HZ, SECS, ROUNDS, SOS = int(ARGS[0]), float(ARGS[1]), int(ARGS[2]), ARGS[3:]
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.path.join(ROOT, "build")
WARM = 3


def cpu_s(pid):
    """Seconds on a CPU of all of pid's threads, from their schedstat (ns),
    where /proc/PID/stat's ticks (10 ms) are coarser than the differences
    between builds."""
    total = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            total += int(open("/proc/%d/task/%s/schedstat" % (pid, tid)).read().split()[0])
        except (OSError, ValueError, IndexError):
            pass  # a thread that just ended
    return total / 1e9


def rss_mb(pid):
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024
    return 0.0


def start(so, tmp):
    d = tempfile.mkdtemp(prefix="collectd.", dir=tmp)
    for sub in ("plugins", "csv", "spool"):
        os.makedirs(os.path.join(d, sub))
    shutil.copy("/usr/lib/collectd/csv.so", os.path.join(d, "plugins"))
    path, *opts = so.split(",")
    shutil.copy(path, os.path.join(d, "plugins", "ebprof.so"))
    extra = "".join("  %s %s\n" % tuple(o.split("=", 1)) for o in opts)
    with open(os.path.join(d, "collectd.conf"), "w") as f:
        f.write('Hostname "bench"\nFQDNLookup false\nBaseDir "%s"\nPIDFile "%s/collectd.pid"\n'
                'PluginDir "%s/plugins"\nTypesDB "/usr/share/collectd/types.db"\nInterval 1\n'
                'LoadPlugin csv\n<Plugin csv>\n  DataDir "%s/csv"\n</Plugin>\n'
                'LoadPlugin ebprof\n<Plugin ebprof>\n  Frequency %d\n  SpoolDir "%s/spool"\n'
                '  SpoolInterval 5\n%s</Plugin>\n' % (d, d, d, d, HZ, d, extra))
    with open(os.path.join(d, "log"), "w") as log:
        p = subprocess.Popen(["collectd", "-f", "-C", os.path.join(d, "collectd.conf")],
                             stdout=log, stderr=subprocess.STDOUT)
    return so, d, p


def stop(run):
    so, d, p = run
    p.send_signal(signal.SIGTERM)
    if p.wait(30) != 0:
        # The directory goes with the run's temporary files: show its log here.
        with open(os.path.join(d, "log")) as f:
            sys.stderr.write("".join(f.readlines()[-12:]))
        sys.exit("collectd with %s exited %d" % (so, p.returncode))
    shutil.rmtree(d)


def measure(so_list, tmp):
    """Runs collectd with each of so_list at once; each one's % of a core and VmRSS."""
    runs = [start(so, tmp) for so in so_list]
    time.sleep(WARM)
    idlers = None
    if IDLERS:
        idlers = subprocess.Popen([os.path.join(BUILD, "bench", "idlers"), str(IDLERS)],
                                  stdout=subprocess.PIPE, start_new_session=True)
        if idlers.stdout.readline().strip() != b"ready":
            sys.exit("idlers did not start")
        time.sleep(2)
    t0 = [cpu_s(p.pid) for _, _, p in runs]
    time.sleep(SECS)
    t1 = [cpu_s(p.pid) for _, _, p in runs]
    rss = [rss_mb(p.pid) for _, _, p in runs]
    if idlers:
        os.killpg(idlers.pid, signal.SIGKILL)
        idlers.wait()
    for r in runs:
        stop(r)
    return [(100.0 * (b - a) / SECS, m) for a, b, m in zip(t0, t1, rss)]


def main():
    tmp = tempfile.mkdtemp(prefix="plugin_pair.")
    bg = [subprocess.Popen([os.path.join(BUILD, "bench", "manystacks"), "100000", "5"]),
          subprocess.Popen([os.path.join(BUILD, "examples", "split7030"), "100000"]),
          subprocess.Popen([os.path.join(BUILD, "examples", "recurse"), "100000", "40"]),
          subprocess.Popen("sleep 100000" if QUIET else
                           "while :; do ls / >/dev/null; sleep 0.01; done", shell=True,
                           start_new_session=True)]
    res = {so: [] for so in SOS}
    try:
        time.sleep(0.3)
        for r in range(ROUNDS):
            order = list(SOS)
            random.shuffle(order)
            groups = [order] if TOGETHER else [[so] for so in order]
            for group in groups:
                for so, (cpu, rss) in zip(group, measure(group, tmp)):
                    res[so].append((cpu, rss))
                    print("round %d %s: %.2f%% of a core, VmRSS %.1f MB" % (r, so, cpu, rss),
                          flush=True)
    finally:
        for p in bg[:3]:
            p.kill()
        os.killpg(bg[3].pid, signal.SIGKILL)
        shutil.rmtree(tmp, ignore_errors=True)
    first = res[SOS[0]]
    for so in SOS:
        cpus = [c for c, _ in res[so]]
        ratios = [c / b[0] for (c, _), b in zip(res[so], first) if b[0] > 0]
        ci = ci95(ratios)
        print("%s: median %.2f%% of a core %s, VmRSS %.1f MB, paired ratio to the first %.3f%s"
              % (so, statistics.median(cpus), [round(c, 2) for c in cpus],
                 statistics.median(r for _, r in res[so]),
                 statistics.median(ratios) if ratios else float("nan"),
                 " (95%% interval %.3f..%.3f)" % ci if ci else ""))


if __name__ == "__main__":
    main()
