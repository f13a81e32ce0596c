"""Many threads, generators and asyncio coroutines, with the process's own
view of its Python stacks as the reference a profiler is checked against.

pyasync.py SECONDS OUT

Eight threads and the main thread each burn CPU under a call chain of their
own: plain calls, recursion, a spin inside a generator body driven by a for
loop, generators feeding generators, and asyncio coroutines awaiting
coroutines (one of them looping over a generator; the two gathered ones
yield to the event loop only every ~100 ms of work). Every function a thread
runs is named after it (t0_..t7_, main_), so a stack says which thread it
came from.

Meanwhile a sampler thread takes sys._current_frames() every 1-3 ms (or
as soon as it gets the GIL after) and adds, to each thread's Python stack as
it sees it, the CPU time that thread used since its last look (its CPU
clock, in microseconds): the stack it let the GIL go in stands for the turn
it just ran. Stacks are qualname and line of each frame, outermost first
(the order a folded stack is written in). At exit it writes OUT, one line
per distinct (thread, stack): MICROSECONDS, a tab, the thread's name, a
tab, then the frames "qualname (file.py:line)" joined by ";".
tests/e2e/49_names_python_async.sh compares ebprof's stacks with it.

Such a sampler sees each thread where it last let the GIL go: in the middle
of its work when the interpreter made it switch, but also in every call that
releases the GIL on purpose (the event loop's select(), a sleep), however
little CPU that call takes. So the work here reaches such calls seldom, and
the reference is read per thread (which stacks, in what shares), not as how
the CPU was split between threads.
"""
import asyncio
import collections
import itertools
import os
import random
import sys
import threading
import time


def burn(n):
    x = 0
    for i in range(n): x += i  # BURN
    return x


# n * next(SPREAD) // 100 is n, give or take half (and on average n): work
# of varying length, so that the points where the interpreter makes a thread
# let the GIL go (every 1 ms of its CPU) do not fall in step with a loop of
# fixed length, always at the same few places of it, which a sampler of the
# GIL's turns would see. (A C iterator: no Python frame of its own.)
SPREAD = itertools.cycle(random.Random(14).sample(range(50, 151), 101))


def t0_entry(end):
    while time.monotonic() < end:
        burn(20000)


def t1_leaf(end):
    while time.monotonic() < end:
        burn(20000)


def t1_entry(end):
    t1_leaf(end)


def t2_rec(depth, end):
    if depth == 0:
        while time.monotonic() < end:
            burn(20000)
        return
    t2_rec(depth - 1, end)


def t2_entry(end):
    t2_rec(5, end)


def t3_gen(end):
    """A spin inside a generator body: its frame is called from t3_entry's,
    the frame that calls next() (through the for loop)."""
    while time.monotonic() < end:
        burn(30000 * next(SPREAD) // 100)
        yield 1


def t3_entry(end):
    for _ in t3_gen(end):
        burn(20000 * next(SPREAD) // 100)


def t4_source(end):
    while time.monotonic() < end:
        burn(20000 * next(SPREAD) // 100)
        yield 1


def t4_filter(end):
    for v in t4_source(end):
        burn(10000 * next(SPREAD) // 100)
        yield v


def t4_entry(end):
    for _ in t4_filter(end):
        burn(10000 * next(SPREAD) // 100)


async def t5_inner(end):
    while time.monotonic() < end:
        burn(20000)


async def t5_outer(end):
    burn(1)
    await t5_inner(end)


async def t5_main(end):
    await t5_outer(end)


def t5_entry(end):
    asyncio.run(t5_main(end))


async def t6_worker_a(end):
    while time.monotonic() < end:
        for _ in range(100): burn(30000 * next(SPREAD) // 100)
        await asyncio.sleep(0)


async def t6_worker_b(end):
    while time.monotonic() < end:
        for _ in range(100): burn(15000 * next(SPREAD) // 100)
        await asyncio.sleep(0)


async def t6_main(end):
    await asyncio.gather(t6_worker_a(end), t6_worker_b(end))


def t6_entry(end):
    asyncio.run(t6_main(end))


def t7_gen(end):
    while time.monotonic() < end:
        burn(20000 * next(SPREAD) // 100)
        yield 1


async def t7_coro(end):
    for _ in t7_gen(end):
        burn(10000 * next(SPREAD) // 100)


def t7_entry(end):
    asyncio.run(t7_coro(end))


def main_entry(end, threads):
    while time.monotonic() < end:
        burn(20000)
    for t in threads:
        t.join()


def frame_name(f):
    code = f.f_code
    return "%s (%s:%d)" % (code.co_qualname, os.path.basename(code.co_filename), f.f_lineno)


def cpu_time(ident):
    """The thread's CPU time (ns), or None once it has gone."""
    try:
        return time.clock_gettime_ns(time.pthread_getcpuclockid(ident))
    except (OSError, OverflowError):
        return None


def sampler(end, hist):
    me = threading.get_ident()
    rnd = random.Random(14)
    ran = {}
    while time.monotonic() < end:
        # Not a fixed period: the threads take turns at the GIL in a fixed
        # order, and a sampler in step with them would see each at the same
        # few points of its work.
        time.sleep(rnd.uniform(0.001, 0.003))
        names = {t.ident: t.name for t in threading.enumerate()}
        for ident, f in sys._current_frames().items():
            # A thread that has not run since the last look is where it
            # was: counting it again would only repeat that look.
            cpu = cpu_time(ident)
            if ident == me or cpu is None or ident not in ran:
                ran[ident] = cpu
                continue
            used, ran[ident] = (cpu - ran[ident]) // 1000, cpu
            if used <= 0:
                continue
            frames = []
            while f is not None:
                frames.append(frame_name(f))
                f = f.f_back
            frames.reverse()
            hist[(names.get(ident, "?"), ";".join(frames))] += used


def main():
    seconds, out = float(sys.argv[1]), sys.argv[2]
    # The sampler waits for the GIL after each sleep; with nine threads
    # wanting it at the default 5 ms a turn it would see them every ~60 ms.
    sys.setswitchinterval(0.001)
    end = time.monotonic() + seconds
    hist = collections.Counter()
    entries = (t0_entry, t1_entry, t2_entry, t3_entry, t4_entry, t5_entry, t6_entry, t7_entry)
    threads = [threading.Thread(target=f, args=(end,), name="t%d" % i)
               for i, f in enumerate(entries)]
    smp = threading.Thread(target=sampler, args=(end, hist), name="sampler")
    threading.current_thread().name = "main"
    for t in threads:
        t.start()
    smp.start()
    main_entry(end, threads)
    smp.join()
    with open(out + ".tmp", "w", encoding="utf-8") as f:
        for (name, stack), n in sorted(hist.items()):
            f.write("%d\t%s\t%s\n" % (n, name, stack))
    os.rename(out + ".tmp", out)


if __name__ == "__main__":
    main()
