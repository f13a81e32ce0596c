#!/usr/bin/env python3
"""Compares the boxes of two flame graph SVGs drawn from the same folded file.

Usage: svgboxes.py OURS.svg THEIRS.svg

A box is a frame's <title>: "NAME (N samples, P%)". flamegraph.pl prints N
with thousands separators and strips the _[k]/_[i]/_[j]/_[w] annotation from
NAME; both are normalised away. Both tools leave out frames narrower than
0.1 px of a 1200 px image, so the multisets of (NAME, N) must be equal,
except for a box whose width is that threshold to a part in a million, where
the two tools' floating point may round either way: such boxes are left out
on both sides and counted. Prints "boxes=N near=M" and exits 0 when equal; prints the first
differences and exits 1 otherwise.
"""
import collections
import html
import re
import sys

TITLE = re.compile(r"<title>([^<]*)</title>")
BOX = re.compile(r"^(.*) \(([\d,]+) samples?, [\d.]+%\)$")


def boxes(path):
    out = collections.Counter()
    with open(path, errors="replace") as f:
        for raw in TITLE.findall(f.read()):
            m = BOX.match(html.unescape(raw))
            if m:
                name = re.sub(r"_\[[kwij]\]$", "", m.group(1))
                out[(name, int(m.group(2).replace(",", "")))] += 1
    return out


def main():
    ours, theirs = boxes(sys.argv[1]), boxes(sys.argv[2])
    total = max((n for name, n in ours if name == "all"), default=0)
    if not total:
        print("no 'all' box in %s" % sys.argv[1])
        return 1
    threshold = total * 0.1 / 1180.0
    near = [k for k in (ours | theirs) if abs(k[1] - threshold) <= threshold * 1e-6]
    for k in near:
        ours.pop(k, None)
        theirs.pop(k, None)
    only_ours, only_theirs = ours - theirs, theirs - ours
    if only_ours or only_theirs:
        print("boxes differ: ours %d, flamegraph.pl %d" % (sum(ours.values()), sum(theirs.values())))
        for k, n in list(only_ours.items())[:8]:
            print("  only ours: %s (%d samples) x%d" % (k[0], k[1], n))
        for k, n in list(only_theirs.items())[:8]:
            print("  only flamegraph.pl: %s (%d samples) x%d" % (k[0], k[1], n))
        return 1
    print("boxes=%d near=%d" % (sum(ours.values()), len(near)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
