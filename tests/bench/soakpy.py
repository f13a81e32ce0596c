#!/usr/bin/env python3
"""soakpy: one Python process of the soak's churn.

    soakpy.py K MILLISECONDS

Builds 30 to 90 functions whose names and bodies depend on K (class
Soak<K> with methods m<J>, module functions f<K>_<J>, so each run's code
objects are new ones, with their own names and location tables) and
calls them, several deep, for MILLISECONDS of CPU, then exits. Every run
is a new CPython 3.11 process: the profiler walks its frames and fills
its code-object cache (bytes-cache_python) with entries for it, which
the soak must see reach the cache's bound and stay there.
"""
import random
import sys
import time


def source(k):
    rng = random.Random(k)
    js = sorted(rng.sample(range(1000), 30 + k % 60))
    lines = ['class Soak%d:' % k]
    for j in js:
        lines += ['    def m%d(self, x):' % j,
                  '        for i in range(%d):' % (20 + j % 40),
                  '            x = (x * %d + i) %% 1000003' % (2 * j + 3),
                  '        return x', '']
    for n, j in enumerate(js):
        nxt = js[(n + 1) % len(js)]
        lines += ['def f%d_%d(obj, x, depth):' % (k, j),
                  '    x = obj.m%d(x)' % j,
                  '    if depth:',
                  '        x = f%d_%d(obj, x, depth - 1)' % (k, nxt),
                  '    return x', '']
    lines += ['ENTRY = [%s]' % ', '.join('f%d_%d' % (k, j) for j in js),
              'OBJ = Soak%d()' % k]
    return '\n'.join(lines) + '\n'


def main():
    k, ms = int(sys.argv[1]), int(sys.argv[2])
    scope = {}
    exec(compile(source(k), 'soak%d.py' % k, 'exec'), scope)
    end = time.monotonic() + ms / 1000
    x, i = k, 0
    while time.monotonic() < end:
        x = scope['ENTRY'][i % len(scope['ENTRY'])](scope['OBJ'], x, 6)
        i += 1
    return 0 if x >= 0 else 1


if __name__ == '__main__':
    sys.exit(main())
