"""Turns `perf script` output into folded stacks in ebprof's own form.

Usage: perf script -F comm,pid,tid,ip,sym,dso -i perf.data | perf_collapse.py > out.folded

perf prints one block per sample: a header line (comm, pid/tid) and then
one indented line per frame, innermost first, "ADDR SYMBOL (DSO)". ebprof
writes "comm;outermost;...;innermost COUNT", kernel frames suffixed _[k],
JIT frames _[j], and a user frame it cannot name as [DSO_BASENAME+0xOFF].
This script writes perf's samples the same way, so the two files can be
compared name for name:
  - the process name comes first (perf's comm, the kernel's 15 characters);
  - a frame at a kernel address (the upper half) gets _[k];
  - a frame from a JIT's /tmp/perf-PID.map gets _[j];
  - an unnamed user frame in a file becomes [basename+0xADDR], perf's
    address being the same file-relative one ebprof prints;
  - any other unnamed frame is [unknown].
"""
import os
import re
import sys
from collections import Counter

HEADER = re.compile(r"^(\S.*?)\s+(\d+)/(\d+)\s*$")
FRAME = re.compile(r"^\s+([0-9a-f]+)\s+(.*?)\s+\((.*)\)\s*$")
KERNEL_BASE = 0xFFFF800000000000


def frame_name(addr, sym, dso):
    """One perf frame as ebprof would name it."""
    if addr >= KERNEL_BASE:
        return (sym if sym != "[unknown]" else "[unknown]") + "_[k]"
    if re.match(r"^/tmp/perf-\d+\.map$", dso):
        return sym + "_[j]"
    if sym != "[unknown]":
        return sym
    if dso.startswith("/"):
        return f"[{os.path.basename(dso)}+0x{addr:x}]"
    return "[unknown]"


def collapse(lines):
    """Counter of folded stack -> samples, from perf script lines."""
    stacks = Counter()
    comm, frames = None, []

    def flush():
        if comm is not None:
            # folded text uses ';' and ' ' as separators: keep them out of names
            names = [comm] + [f.replace(";", ":") for f in reversed(frames)]
            stacks[";".join(n.replace(" ", "_") for n in names)] += 1

    for line in lines:
        line = line.rstrip("\n")
        if not line.strip():
            continue
        m = HEADER.match(line)
        if m:
            flush()
            comm, frames = m.group(1), []
            continue
        m = FRAME.match(line)
        if m and comm is not None:
            frames.append(frame_name(int(m.group(1), 16), m.group(2), m.group(3)))
            continue
        sys.exit(f"perf_collapse: cannot read line: {line!r}")
    flush()
    return stacks


def main():
    stacks = collapse(sys.stdin)
    for stack, count in sorted(stacks.items()):
        print(f"{stack} {count}")


if __name__ == "__main__":
    main()
