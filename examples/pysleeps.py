"""Python functions that wait, for off-CPU profiles: sleep_a() and
sleep_b() sleep 4 ms each, one after the other, from one call site, so
that the interpreter waits from the same native place (its registers and
its C stack) for both; only their Python frames tell them apart.

pysleeps.py SECONDS
"""
import sys
import time


def sleep_a():
    time.sleep(0.004)


def sleep_b():
    time.sleep(0.004)


def main():
    end = time.monotonic() + float(sys.argv[1])
    waits = [sleep_a, sleep_b]
    i = 0
    while time.monotonic() < end:
        waits[i & 1]()
        i += 1


main()
