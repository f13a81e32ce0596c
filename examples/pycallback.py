"""Python -> C -> Python: a sort key called by sorted(), a hook called by
json's C decoder, each burning the CPU in Python.

pycallback.py SECONDS
"""
import json
import sys
import time


def burn(n):
    x = 0
    for i in range(n):
        x += i
    return x


def sort_key(v):
    burn(300)
    return -v


def object_hook(d):
    burn(300)
    return d


doc = json.dumps([{"k": i} for i in range(200)])
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    sorted(range(200), key=sort_key)
    json.loads(doc, object_hook=object_hook)
