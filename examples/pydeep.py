"""A known Python stack: rec() 50 calls deep, then spin() on one line.

Run with Debian's /usr/bin/python3.11: pydeep.py SECONDS. The hot line
is the one marked HOT (tests/e2e/43_names_python.sh finds it by the mark).
"""
import sys
import time


def spin(seconds):
    end = time.monotonic() + seconds
    x = 0
    while time.monotonic() < end:
        for i in range(100000): x += i  # HOT
    return x


def rec(depth, seconds):
    if depth == 1:
        return spin(seconds)
    return rec(depth - 1, seconds)


rec(50, float(sys.argv[1]))
