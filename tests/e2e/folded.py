"""Reads folded stacks and answers the questions the end-to-end tests ask.

Usage: folded.py FILE COMMAND [ARGS...]
  total [PROC]              samples (of one process, by its first frame)
  self PROC FUNC            percent of PROC's samples whose leaf is FUNC
  pair PROC A B             A's percent of the samples whose leaf is A or B
  chain PROC FUNC           the most common full stack ending in FUNC
  has PROC REGEX            percent of PROC's samples with a frame matching REGEX
  run PROC FUNC             longest run of consecutive FUNC frames (weighted mode)
  exact PROC CHAIN...       of PROC's samples whose user leaf ends one of the
                            chains (main;...;leaf), the percent whose user
                            frames are _start, two libc frames (or more), then
                            exactly that chain; prints "pct hits total"
  outermost PROC REGEX      percent of PROC's samples with a user frame whose
                            outermost user frame matches REGEX; "pct hits total"
  rooted PROC REGEX ROOT    of PROC's samples with a frame matching REGEX, the
                            percent whose outermost user frame matches ROOT;
                            "pct hits total"
  entry PROC NAME LO HI     percent of PROC's samples with a user frame whose
                            outermost user frame is _start, or [NAME+0xX] with
                            X in [LO, HI) (hex: a stripped binary's _start);
                            "pct hits total"
  within PROC LEAF REGEX    of PROC's samples whose user leaf matches regex
                            LEAF, the percent whose frames (joined by ';')
                            contain a match of REGEX; "pct hits total"
  under PROC LEAF CHAIN     of PROC's samples whose user leaf matches regex
                            LEAF, the percent whose user frames from main on
                            match regex CHAIN (frames joined by ';');
                            "pct hits total"
  exiting PROC              percent of PROC's samples taken in do_exit once
                            the process's memory was let go: its one user
                            frame is _exit (the stack below it is gone)
"""
import re
import sys
from collections import Counter


def load(path):
    stacks = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            stack, _, count = line.rpartition(" ")
            stacks.append((stack.split(";"), int(count)))
    return stacks


def of(stacks, proc):
    return [(s, c) for s, c in stacks if s[0] == proc]


def user(frames):
    """A stack's user frames, outermost first (no process name, no kernel frames)."""
    return [f for f in frames[1:] if not f.endswith("_[k]")]


def from_main(u):
    return u[u.index("main"):] if "main" in u else []


def pct(hit, tot):
    return f"{100.0 * hit / tot if tot else 0:.2f} {hit} {tot}"


def main():
    path, cmd, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    stacks = load(path)
    if cmd == "total":
        sel = of(stacks, args[0]) if args else stacks
        print(sum(c for _, c in sel))
    elif cmd == "self":
        sel = of(stacks, args[0])
        tot = sum(c for _, c in sel)
        hit = sum(c for s, c in sel if s[-1] == args[1])
        print(f"{100.0 * hit / tot if tot else 0:.2f}")
    elif cmd == "pair":
        sel = of(stacks, args[0])
        a = sum(c for s, c in sel if s[-1] == args[1])
        b = sum(c for s, c in sel if s[-1] == args[2])
        print(f"{100.0 * a / (a + b) if a + b else 0:.2f} {a} {b}")
    elif cmd == "chain":
        sel = Counter()
        for s, c in of(stacks, args[0]):
            if s[-1] == args[1]:
                sel[";".join(s)] += c
        print(sel.most_common(1)[0][0] if sel else "")
    elif cmd == "count":
        rx = re.compile(args[1])
        print(sum(c for s, c in of(stacks, args[0]) if any(rx.fullmatch(f) for f in s)))
    elif cmd == "exiting":
        sel = of(stacks, args[0])
        tot = sum(c for _, c in sel)
        hit = sum(c for s, c in sel if user(s) == ["_exit"] and "do_exit_[k]" in s)
        print(f"{100.0 * hit / tot if tot else 0:.2f}")
    elif cmd == "has":
        sel = of(stacks, args[0])
        rx = re.compile(args[1])
        tot = sum(c for _, c in sel)
        hit = sum(c for s, c in sel if any(rx.search(f) for f in s))
        print(f"{100.0 * hit / tot if tot else 0:.2f}")
    elif cmd == "run":
        runs = Counter()
        for s, c in of(stacks, args[0]):
            best = cur = 0
            for f in s:
                cur = cur + 1 if f == args[1] else 0
                best = max(best, cur)
            runs[best] += c
        print(runs.most_common(1)[0][0] if runs else 0)
    elif cmd == "exact":
        chains = [a.split(";") for a in args[1:]]
        hit = tot = 0
        for s, c in of(stacks, args[0]):
            u = user(s)
            want = [ch for ch in chains if u and u[-1] == ch[-1]]
            if not want:
                continue
            tot += c
            if u[0] == "_start" and any(from_main(u) == ch for ch in want):
                hit += c
        print(pct(hit, tot))
    elif cmd == "outermost":
        rx = re.compile(args[1])
        hit = tot = 0
        for s, c in of(stacks, args[0]):
            u = user(s)
            if not u:
                continue
            tot += c
            hit += c if rx.search(u[0]) else 0
        print(pct(hit, tot))
    elif cmd == "rooted":
        rx, root = re.compile(args[1]), re.compile(args[2])
        hit = tot = 0
        for s, c in of(stacks, args[0]):
            if not any(rx.search(f) for f in s):
                continue
            tot += c
            u = user(s)
            hit += c if u and root.search(u[0]) else 0
        print(pct(hit, tot))
    elif cmd == "entry":
        name, lo, hi = args[1], int(args[2], 16), int(args[3], 16)
        rx = re.compile(r"^\[" + re.escape(name) + r"\+0x([0-9a-f]+)\]$")
        hit = tot = 0
        for s, c in of(stacks, args[0]):
            u = user(s)
            if not u:
                continue
            tot += c
            m = rx.match(u[0])
            if u[0] == "_start" or (m and lo <= int(m.group(1), 16) < hi):
                hit += c
        print(pct(hit, tot))
    elif cmd == "within":
        leaf, rx = re.compile(args[1]), re.compile(args[2])
        hit = tot = 0
        for s, c in of(stacks, args[0]):
            u = user(s)
            if not u or not leaf.fullmatch(u[-1]):
                continue
            tot += c
            hit += c if rx.search(";".join(s)) else 0
        print(pct(hit, tot))
    elif cmd == "under":
        leaf, chain = re.compile(args[1]), re.compile(args[2])
        hit = tot = 0
        for s, c in of(stacks, args[0]):
            u = user(s)
            if not u or not leaf.fullmatch(u[-1]):
                continue
            tot += c
            hit += c if chain.fullmatch(";".join(from_main(u))) and u[0] == "_start" else 0
        print(pct(hit, tot))
    else:
        sys.exit(f"unknown command {cmd}")


main()
