#!/usr/bin/env python3
"""soaksample: one row of the soak's CSV, about a running collectd.

    soaksample.py header
    soaksample.py PID HEALTH_DIR SECONDS

From /proc: RSS (kB; of it anonymous and file-backed), open fds, threads. From bpftool: the entries of
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
          'unwind_tables']
COLUMNS = (['seconds', 'rss_kb', 'rss_anon_kb', 'rss_file_kb', 'fds', 'threads', 'map_entries', 'map_fullest_pct'] +
           HEALTH + ['lost_window'])


def newest_value(health_dir, name):
    files = sorted(glob.glob(os.path.join(health_dir, name + '-*')), key=os.path.getmtime)
    if not files:
        return ''
    with open(files[-1]) as f:
        lines = [l for l in f.read().splitlines() if l[:1].isdigit()]
    return lines[-1].split(',')[1] if lines else ''


def maps_of(pid):
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
    total, fullest = 0, 0.0
    for i in sorted(ids):
        meta = json.loads(subprocess.run(['bpftool', '-j', 'map', 'show', 'id', str(i)],
                                         capture_output=True, text=True).stdout or '{}')
        if meta.get('type') not in ('hash', 'lru_hash'):
            continue
        out = subprocess.run(['bpftool', '-j', 'map', 'dump', 'id', str(i)],
                             capture_output=True, text=True).stdout
        n = len(json.loads(out)) if out.strip() else 0
        total += n
        if meta.get('max_entries'):
            fullest = max(fullest, 100.0 * n / meta['max_entries'])
    return total, fullest


def main():
    if sys.argv[1] == 'header':
        print(','.join(COLUMNS))
        return
    pid, health_dir, seconds = sys.argv[1:4]
    rss = anon = filed = threads = 0
    with open('/proc/%s/status' % pid) as f:
        for line in f:
            if line.startswith('VmRSS:'):
                rss = int(line.split()[1])
            elif line.startswith('RssAnon:'):
                anon = int(line.split()[1])
            elif line.startswith('RssFile:'):
                filed = int(line.split()[1])
            elif line.startswith('Threads:'):
                threads = int(line.split()[1])
    fds = len(os.listdir('/proc/%s/fd' % pid))
    entries, fullest = maps_of(pid)
    row = [seconds, rss, anon, filed, fds, threads, entries, '%.1f' % fullest]
    row += [newest_value(health_dir, 'bytes-' + h) for h in HEALTH]
    row.append(newest_value(health_dir, 'derive-lost-window'))
    print(','.join(str(v) for v in row))


if __name__ == '__main__':
    main()
