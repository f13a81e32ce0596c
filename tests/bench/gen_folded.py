#!/usr/bin/env python3
"""Writes a folded-stacks file with exactly N unique stacks, for the render rows.

The stacks look like a real profile's: they share long prefixes (a skewed
choice at each level makes a few paths hot, as in real programs), they are 4
to 40 frames deep, frame names are C and C++ like, a few are kernel frames
with the _[k] suffix, and counts fall off geometrically. The same N always
gives the same file (seeded), so runs compare.

Usage: gen_folded.py N OUT
"""
import random
import sys


def main():
    n, out = int(sys.argv[1]), sys.argv[2]
    rng = random.Random(n)
    mods = ["net", "io", "sched", "alloc", "parse", "render", "db", "http", "json", "crypto"]
    pool = ["%s::%s_%d" % (rng.choice(mods), rng.choice(["read", "write", "step", "visit",
                                                          "handle", "run", "emit", "scan"]), i)
            for i in range(400)]
    pool += ["std::vector<int>::push_back(int const&)", "operator new(unsigned long)",
             "memcpy", "malloc", "free", "__libc_start_main", "main"]
    kernel = ["entry_SYSCALL_64_after_hwframe_[k]", "do_syscall_64_[k]", "ksys_read_[k]",
              "vfs_read_[k]", "tcp_sendmsg_[k]", "copy_user_generic_[k]", "schedule_[k]"]
    comms = ["server", "worker", "db", "cc1", "python3", "java", "nginx", "postgres"]
    seen = set()
    with open(out, "w") as f:
        while len(seen) < n:
            depth = 4 + min(36, int(rng.expovariate(1 / 12.0)))
            frames = [rng.choice(comms), "__libc_start_main", "main"]
            node = 0
            for level in range(depth):
                # Skewed: child k of a node is chosen with weight ~ 1/(k+1).
                k = min(int(rng.paretovariate(1.2)) - 1, 30)
                node = (node * 31 + k * 7 + level) % len(pool)
                frames.append(pool[node])
            if rng.random() < 0.2:
                frames += kernel[: rng.randint(2, len(kernel))]
            stack = ";".join(frames)
            if stack in seen:
                continue
            seen.add(stack)
            f.write("%s %d\n" % (stack, 1 + int(rng.expovariate(1 / 50.0))))


if __name__ == "__main__":
    main()
