#!/usr/bin/env python3
"""soakreport: the figures and plots of a soak's CSV (soaksample.py rows).

    soakreport.py CSV OUTDIR FROM_SECONDS MAX_GROWTH_KB [MAX_HEAP_GROWTH_KB]
                  [NAME=BOUND_BYTES...]

Prints, and writes to OUTDIR/summary.txt: RSS and heap in use at the
first sample at or after FROM_SECONDS (the end of warm-up: caches
filling) and at the end, their growth, the least-squares slope over that
span projected to a day, the floor of RSS and of the heap in use in each
10-minute block of that span, the range of fds and map entries, and each
cache's largest size against its bound. Plots OUTDIR/memory.svg (RSS and
glibc's heap) and OUTDIR/caches.svg (every cache, with its bound) with
gnuplot. Exits 1 when the RSS floor of the last block is MAX_GROWTH_KB or
more above the first's (MAX_GROWTH_KB 0: report only): the soak is
system-wide, so a sample may catch the tables of any big process alive
at that moment, which go with it; what a leak or retention adds lifts
every floor. Exits 1 too when the floor of the heap outside the caches
(glibc's heap in use less every cache the plugin reports in the heap)
grows by MAX_HEAP_GROWTH_KB or more from the first block to the last
(0 or absent: report only): RSS alone hides a heap that grows while the
file-backed part (the unwind tables' BPF arrays) shrinks, and the caches
filling to their bounds is not growth.
"""
import csv
import os
import subprocess
import sys


def slope(xs, ys):
    n = len(xs)
    if n < 2:
        return 0.0
    mx, my = sum(xs) / n, sum(ys) / n
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den if den else 0.0


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):  # a column an older CSV lacks, or empty
        return None


# The caches the plugin reports that live in glibc's heap. Not
# cache_perfmaps (a part of cache_processes), nor cache_unwind and
# unwind_tables (the unwind tables' BPF arrays and maps: kernel memory,
# mapped into the daemon, not the heap).
HEAP_CACHES = ('cache_symbols', 'cache_processes', 'cache_names', 'cache_window',
               'cache_interval', 'cache_inline', 'cache_python', 'kernel_symbols')


def outside_caches(r):
    """Heap in use less the caches in it, bytes (None without a heap column)."""
    h = num(r.get('heap_in_use'))
    if h is None:
        return None
    return h - sum(num(r.get(c)) or 0.0 for c in HEAP_CACHES)


def main():
    path, out, start, max_growth = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
    args = sys.argv[5:]
    max_heap = float(args.pop(0)) if args and '=' not in args[0] else 0.0
    bounds = dict(a.split('=', 1) for a in args)
    rows = list(csv.DictReader(open(path)))
    if len(rows) < 2:
        sys.exit('soakreport: only %d samples in %s' % (len(rows), path))
    after = [r for r in rows if float(r['seconds']) >= start] or rows[-2:]
    t = [float(r['seconds']) for r in after]
    rss = [float(r['rss_kb']) for r in after]
    heap = [num(r['heap_in_use']) for r in after]
    outside = [outside_caches(r) for r in after]
    lines = []
    say = lines.append
    span_h = (t[-1] - t[0]) / 3600
    say('samples: %d over %.1f min; from minute %.1f to the end (%.1f min):' %
        (len(rows), float(rows[-1]['seconds']) / 60, t[0] / 60, span_h * 60))
    grow = rss[-1] - rss[0]
    per_day = slope(t, rss) * 86400
    say('  RSS %d kB -> %d kB: %+d kB; min %d, max %d kB; slope %+.1f kB/h = %+.0f kB/day' %
        (rss[0], rss[-1], grow, min(rss), max(rss), per_day / 24, per_day))
    # What is kept, not what happens to be alive at one sample: the floor of
    # each block of the span (10 minutes, or a third of a shorter span). A
    # table held for a live process (anyone's: the soak is system-wide) lifts
    # single samples and goes with the process; a leak lifts every floor.
    block = 600 if t[-1] - t[0] >= 1800 else max((t[-1] - t[0]) / 3, 1)
    floors = {}
    for x, v, h, o in zip(t, rss, heap, outside):
        k = int((x - t[0]) // block)
        f = floors.setdefault(k, [v, h, o])
        f[0] = min(f[0], v)
        if h is not None and f[1] is not None:
            f[1] = min(f[1], h)
        if o is not None and f[2] is not None:
            f[2] = min(f[2], o)
    keys = sorted(floors)
    if len(keys) > 1 and (t[-1] - t[0]) - keys[-1] * block < block / 2:
        keys = keys[:-1]  # a last block of under half a block is no floor
    floor_grow = floors[keys[-1]][0] - floors[keys[0]][0]
    fl_t = [k * block for k in keys]
    fl_day = slope(fl_t, [floors[k][0] for k in keys]) * 86400 if len(keys) > 1 else 0.0
    say('  RSS floor per %.3g-minute block: %s kB; first to last %+d kB; their slope '
        '%+.0f kB/day' % (block / 60, ', '.join('%d' % floors[k][0] for k in keys), floor_grow,
                          fl_day))
    if None not in heap:
        say('  heap-in-use floor per block: %s kB' %
            ', '.join('%.0f' % (floors[k][1] / 1024) for k in keys))
    heap_grow = None
    if None not in outside:
        heap_grow = (floors[keys[-1]][2] - floors[keys[0]][2]) / 1024
        oday = slope(fl_t, [floors[k][2] for k in keys]) * 86400 / 1024 if len(keys) > 1 else 0.0
        say('  heap outside the caches, floor per block: %s kB; first to last %+.0f kB; their '
            'slope %+.0f kB/day' % (', '.join('%.0f' % (floors[k][2] / 1024) for k in keys),
                                   heap_grow, oday))
    if None not in heap:
        hday = slope(t, heap) * 86400
        say('  heap in use %.0f kB -> %.0f kB: %+.0f kB; slope %+.0f kB/day' %
            (heap[0] / 1024, heap[-1] / 1024, (heap[-1] - heap[0]) / 1024, hday / 1024))
        free_kb = [num(r['heap_free']) / 1024 for r in after]
        mapped = [num(r['heap_mapped']) / 1024 for r in after]
        say('  heap free (kept by malloc) %.0f-%.0f kB; heap mapped %.0f-%.0f kB' %
            (min(free_kb), max(free_kb), min(mapped), max(mapped)))
    say('  fds %d-%d; threads %d-%d; BPF hash map entries %d-%d (fullest map %.0f%%)' %
        (min(int(r['fds']) for r in after), max(int(r['fds']) for r in after),
         min(int(r['threads']) for r in after), max(int(r['threads']) for r in after),
         min(int(r['map_entries']) for r in after), max(int(r['map_entries']) for r in after),
         max(float(r['map_fullest_pct']) for r in after)))
    anon = [float(r['rss_anon_kb']) for r in after]
    say('  of RSS, anonymous %d kB -> %d kB (%+d kB), file-backed %s -> %s kB, shared '
        '(the unwind tables\' BPF arrays) %s -> %s kB' %
        (anon[0], anon[-1], anon[-1] - anon[0], after[0]['rss_file_kb'], after[-1]['rss_file_kb'],
         after[0]['rss_shmem_kb'], after[-1]['rss_shmem_kb']))
    for name in ('cache_symbols', 'cache_processes', 'cache_perfmaps', 'cache_names',
                 'cache_window', 'cache_interval', 'cache_unwind', 'unwind_tables',
                 'cache_inline', 'cache_python', 'kernel_symbols', 'cache_forks'):
        vals = [num(r.get(name)) for r in rows if num(r.get(name)) is not None]
        if not vals:
            continue
        late = [num(r.get(name)) for r in after if num(r.get(name)) is not None]
        bound = bounds.get(name)
        say('  %-16s max %8.0f kB, from minute %.0f: %.0f-%.0f kB%s' %
            (name, max(vals) / 1024, t[0] / 60, min(late) / 1024, max(late) / 1024,
             ', bound %.0f kB' % (float(bound) / 1024) if bound else ''))
    lost = num(rows[-1]['lost_window'])
    if lost is not None:
        say('  samples the spool window dropped at its bound: %d' % lost)
    verdict = max_growth <= 0 or floor_grow < max_growth
    if max_growth > 0:
        say('%s: RSS floor growth %+d kB from minute %.1f to the end (%+d kB sample to sample), '
            'limit %d kB' % ('PASS' if verdict else 'FAIL', floor_grow, t[0] / 60, grow,
                             max_growth))
    if max_heap > 0:
        ok = heap_grow is not None and heap_grow < max_heap
        say('%s: heap outside the caches, floor growth %s from minute %.1f to the end, limit %d kB'
            % ('PASS' if ok else 'FAIL',
               'unknown (no heap column)' if heap_grow is None else '%+.0f kB' % heap_grow,
               t[0] / 60, max_heap))
        verdict = verdict and ok
    text = '\n'.join(lines) + '\n'
    sys.stdout.write(text)
    with open(os.path.join(out, 'summary.txt'), 'w') as f:
        f.write(text)
    plot(path, out, bounds)
    sys.exit(0 if verdict else 1)


def plot(path, out, bounds):
    cols = open(path).readline().strip().split(',')
    col = {c: i + 1 for i, c in enumerate(cols)}
    g = ['set datafile separator ","', 'set terminal svg size 900,500 dynamic',
         'set key outside right', 'set grid', 'set xlabel "minutes"',
         'set output "%s/memory.svg"' % out, 'set ylabel "MB"',
         'set title "collectd with ebprof: RSS and glibc heap"',
         ('plot "%s" every ::1 using ($1/60):($%d/1024) with lines lw 2 title "RSS", '
          '"" every ::1 using ($1/60):($%d/1048576) with lines title "heap in use", '
          '"" every ::1 using ($1/60):(($%d%s)/1048576) with lines lw 2 '
          'title "heap outside the caches", '
          '"" every ::1 using ($1/60):($%d/1048576) with lines title "heap free (kept)", '
          '"" every ::1 using ($1/60):($%d/1048576) with lines title "heap mapped"') %
         (path, col['rss_kb'], col['heap_in_use'], col['heap_in_use'],
          ''.join('-$%d' % col[c] for c in HEAP_CACHES if c in col), col['heap_free'],
          col['heap_mapped']),
         'set output "%s/caches.svg"' % out, 'set ylabel "kB"',
         'set title "cache sizes (dashed: bounds)"']
    series = []
    for i, name in enumerate(('cache_symbols', 'cache_processes', 'cache_perfmaps',
                              'cache_names', 'cache_window', 'cache_interval', 'cache_unwind',
                              'unwind_tables', 'cache_inline', 'cache_python')):
        if name not in col:
            continue
        series.append('"%s" every ::1 using ($1/60):($%d/1024) with lines lc %d title "%s"' %
                      (path, col[name], i + 1, name.replace('cache_', '')))
        if name in bounds:
            series.append('%f with lines dt 2 lc %d notitle' % (float(bounds[name]) / 1024, i + 1))
    g.append('plot ' + ', '.join(series))
    subprocess.run(['gnuplot'], input='\n'.join(g) + '\n', text=True, check=True)


if __name__ == '__main__':
    main()
