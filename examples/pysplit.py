"""A known 70/30 CPU split between two Python functions doing the same work.

pysplit.py SECONDS: hot70() gets 7 units of each 10, hot30() 3.
"""
import sys
import time


def work(n):
    x = 0
    for i in range(n):
        x += i * i
    return x


def hot70(units):
    for _ in range(units):
        work(20000)


def hot30(units):
    for _ in range(units):
        work(20000)


end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    hot70(7)
    hot30(3)
