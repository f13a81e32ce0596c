#!/usr/bin/env python3
"""soaksample: one row of the soak's CSV, about a running collectd.

    soaksample.py header
    soaksample.py PID HEALTH_DIR SECONDS
    soaksample.py maps PID SECONDS     (the short soak's line, 61_reliability_soak.sh)

From /proc: RSS (kB; of it anonymous, file-backed and shared: the unwind
tables' BPF arrays are mapped shared), open fds, threads. From bpftool: the entries of
each of the daemon's hash maps, summed, and the fullest map's share of
its max_entries. From the plugin's own health metrics (the csv plugin's
files under HEALTH_DIR, the newest value of each): glibc's heap (in use,
free, mapped) and each cache's bytes, and the samples the spool window
dropped at its bound.
"""
import glob
import json
import os
import subprocess
import sys

HEALTH = ['heap_in_use', 'heap_free', 'heap_mapped', 'cache_symbols', 'cache_processes',
          'cache_perfmaps', 'cache_names', 'cache_window', 'cache_interval', 'cache_unwind',
          'unwind_tables', 'cache_inline', 'cache_python', 'kernel_symbols',
          'cache_forks']
COLUMNS = (['seconds', 'rss_kb', 'rss_anon_kb', 'rss_file_kb', 'rss_shmem_kb', 'fds', 'threads', 'map_entries', 'map_fullest_pct'] +
           HEALTH + ['lost_window'])


def newest_value(health_dir, name):
    files = sorted(glob.glob(os.path.join(health_dir, name + '-*')), key=os.path.getmtime)
    if not files:
        return ''
    with open(files[-1]) as f:
        lines = [l for l in f.read().splitlines() if l[:1].isdigit()]
    return lines[-1].split(',')[1] if lines else ''


def bpf_maps(pid):
    """The daemon's hash maps: (name, entries, max_entries) each."""
    ids = set()
    for fd in os.listdir('/proc/%s/fd' % pid):
        try:
            if os.readlink('/proc/%s/fd/%s' % (pid, fd)) != 'anon_inode:bpf-map':
                continue
            with open('/proc/%s/fdinfo/%s' % (pid, fd)) as f:
                for line in f:
                    if line.startswith('map_id:'):
                        ids.add(int(line.split()[1]))
        except OSError:
            pass
    maps = []
    for i in sorted(ids):
        meta = json.loads(subprocess.run(['bpftool', '-j', 'map', 'show', 'id', str(i)],
                                         capture_output=True, text=True).stdout or '{}')
        if meta.get('type') not in ('hash', 'lru_hash'):
            continue
        cap = meta.get('max_entries', 0)
        n = map_entries(i)
        # A dump of a full LRU map that evicts meanwhile may also hold keys
        # inserted while it ran: a transient excess, which a second dump
        # does not repeat. A real excess stays.
        for _ in range(2):
            if n <= cap:
                break
            n = min(n, map_entries(i))
        maps.append((meta.get('name', str(i)), n, cap))
    return maps


def map_entries(map_id):
    """The distinct keys of one dump of a map. A dump is not atomic: when
    the key it stands on is deleted (an LRU map evicting it, say), the
    kernel's next-key walk starts again from the first bucket, so a dump of
    a busy map may list a key twice; counted once here."""
    out = subprocess.run(['bpftool', '-j', 'map', 'dump', 'id', str(map_id)],
                         capture_output=True, text=True).stdout
    rows = json.loads(out) if out.strip() else []
    return len({json.dumps(r.get('key'), sort_keys=True) for r in rows})


def main():
    if sys.argv[1] == 'header':
        print(','.join(COLUMNS))
        return
    if sys.argv[1] == 'maps':
        # 61_reliability_soak.sh: "seconds rss_kb fds name:entries/max..."
        pid, seconds = sys.argv[2:4]
        rss = [l.split()[1] for l in open('/proc/%s/status' % pid) if l.startswith('VmRSS:')]
        print(seconds, rss[0] if rss else 0, len(os.listdir('/proc/%s/fd' % pid)),
              ' '.join('%s:%d/%d' % m for m in bpf_maps(pid)))
        return
    pid, health_dir, seconds = sys.argv[1:4]
    rss = anon = filed = shmem = threads = 0
    with open('/proc/%s/status' % pid) as f:
        for line in f:
            if line.startswith('VmRSS:'):
                rss = int(line.split()[1])
            elif line.startswith('RssAnon:'):
                anon = int(line.split()[1])
            elif line.startswith('RssFile:'):
                filed = int(line.split()[1])
            elif line.startswith('RssShmem:'):
                shmem = int(line.split()[1])
            elif line.startswith('Threads:'):
                threads = int(line.split()[1])
    fds = len(os.listdir('/proc/%s/fd' % pid))
    maps = bpf_maps(pid)
    entries = sum(n for _, n, _ in maps)
    fullest = max([100.0 * n / m for _, n, m in maps if m] or [0.0])
    row = [seconds, rss, anon, filed, shmem, fds, threads, entries, '%.1f' % fullest]
    row += [newest_value(health_dir, 'bytes-' + h) for h in HEALTH]
    row.append(newest_value(health_dir, 'derive-lost-window'))
    print(','.join(str(v) for v in row))


if __name__ == '__main__':
    main()
