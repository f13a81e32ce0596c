"""Threads, each unwound with its own thread state: three threads spin in
their own functions while the main thread spins in main_spin().

pythreads.py SECONDS
"""
import sys
import threading
import time


def spin_until(end):
    x = 0
    while time.monotonic() < end:
        for i in range(10000): x += i
    return x


def worker_a(end):
    spin_until(end)


def worker_b(end):
    spin_until(end)


def worker_c(end):
    spin_until(end)


def main_spin(end):
    spin_until(end)


end = time.monotonic() + float(sys.argv[1])
threads = [threading.Thread(target=f, args=(end,)) for f in (worker_a, worker_b, worker_c)]
for t in threads:
    t.start()
main_spin(end)
for t in threads:
    t.join()
