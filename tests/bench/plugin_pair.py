#!/usr/bin/env python3
"""The plugin in collectd, paired between builds: collectd runs with each
build's ebprof.so in turn (shuffled in every round) on section 3's busy
workload, started once for all of them, so that the builds share the
machine's drift. Each run: 3 s of start-up left out, then SECONDS of
collectd's CPU (utime + stime of /proc/PID/stat) and its VmRSS at the end.
Prints each run, each build's medians, and the median of the rounds'
ratios against the first build.

Usage: plugin_pair.py HZ SECONDS ROUNDS PATH-TO-ebprof.so...
"""
import os, random, shutil, signal, statistics, subprocess, sys, tempfile, time

HZ, SECS, ROUNDS, SOS = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.path.join(ROOT, "build")
WARM = 3


def ticks(pid):
    f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return int(f[11]) + int(f[12])


def rss_mb(pid):
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024
    return 0.0


def run(so, tmp):
    d = tempfile.mkdtemp(prefix="collectd.", dir=tmp)
    for sub in ("plugins", "csv", "spool"):
        os.makedirs(os.path.join(d, sub))
    shutil.copy("/usr/lib/collectd/csv.so", os.path.join(d, "plugins"))
    shutil.copy(so, os.path.join(d, "plugins", "ebprof.so"))
    with open(os.path.join(d, "collectd.conf"), "w") as f:
        f.write('Hostname "bench"\nFQDNLookup false\nBaseDir "%s"\nPIDFile "%s/collectd.pid"\n'
                'PluginDir "%s/plugins"\nTypesDB "/usr/share/collectd/types.db"\nInterval 1\n'
                'LoadPlugin csv\n<Plugin csv>\n  DataDir "%s/csv"\n</Plugin>\n'
                'LoadPlugin ebprof\n<Plugin ebprof>\n  Frequency %d\n  SpoolDir "%s/spool"\n'
                '  SpoolInterval 5\n</Plugin>\n' % (d, d, d, d, HZ, d))
    with open(os.path.join(d, "log"), "w") as log:
        p = subprocess.Popen(["collectd", "-f", "-C", os.path.join(d, "collectd.conf")],
                             stdout=log, stderr=subprocess.STDOUT)
    time.sleep(WARM)
    t0 = ticks(p.pid)
    time.sleep(SECS)
    t1, rss = ticks(p.pid), rss_mb(p.pid)
    p.send_signal(signal.SIGTERM)
    if p.wait(30) != 0:
        sys.exit("collectd with %s exited %d: see %s/log" % (so, p.returncode, d))
    shutil.rmtree(d)
    return 100.0 * (t1 - t0) / os.sysconf("SC_CLK_TCK") / SECS, rss


def main():
    if len(SOS) < 1:
        sys.exit(__doc__)
    tmp = tempfile.mkdtemp(prefix="plugin_pair.")
    bg = [subprocess.Popen([os.path.join(BUILD, "bench", "manystacks"), "100000", "5"]),
          subprocess.Popen([os.path.join(BUILD, "examples", "split7030"), "100000"]),
          subprocess.Popen([os.path.join(BUILD, "examples", "recurse"), "100000", "40"]),
          subprocess.Popen("while :; do ls / >/dev/null; sleep 0.01; done", shell=True,
                           start_new_session=True)]
    res = {so: [] for so in SOS}
    try:
        time.sleep(0.3)
        for r in range(ROUNDS):
            order = list(SOS)
            random.shuffle(order)
            for so in order:
                cpu, rss = run(so, tmp)
                res[so].append((cpu, rss))
                print("round %d %s: %.2f%% of a core, VmRSS %.1f MB" % (r, so, cpu, rss), flush=True)
    finally:
        for p in bg[:3]:
            p.kill()
        os.killpg(bg[3].pid, signal.SIGKILL)
        shutil.rmtree(tmp, ignore_errors=True)
    first = res[SOS[0]]
    for so in SOS:
        cpus = [c for c, _ in res[so]]
        ratios = [c / b[0] for (c, _), b in zip(res[so], first) if b[0] > 0]
        print("%s: median %.2f%% of a core %s, VmRSS %.1f MB, paired ratio to the first %.3f"
              % (so, statistics.median(cpus), [round(c, 2) for c in cpus],
                 statistics.median(r for _, r in res[so]),
                 statistics.median(ratios) if ratios else float("nan")))


if __name__ == "__main__":
    main()
