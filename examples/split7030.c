/*
 * split7030: burns CPU in an exact 70/30 split between two functions.
 *
 * run_split() gives burn_seventy() 70% of the thread's CPU time and
 * burn_thirty() 30%, by the clock (clocksplit.h): a chunk of work at a
 * time to whichever is behind its share, so the split is 70/30 to within
 * one chunk whatever an iteration costs (under emulation too). The two
 * loops run the same instructions (only an immediate differs, which also
 * keeps identical-code folding from merging them).
 * The compiler is kept from inlining, cloning and tail-calling them, so the
 * symbols the profiler sees are the ones named here.
 *
 * Usage: split7030 [SECONDS]   (default 6)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "clocksplit.h"

#define CHUNK 1000000UL /* about 0.5 ms of work on this machine */

/* clang has no noclone, and clones nothing that noinline keeps out */
#ifdef __clang__
#define NOCLEVER __attribute__((noinline, used))
#else
#define NOCLEVER __attribute__((noinline, noclone, used))
#endif

NOCLEVER unsigned long burn_seventy(unsigned long n)
{
	unsigned long x = 7;

	for (unsigned long i = 0; i < n; i++) {
		x = x * 6364136223846793005UL + i;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

NOCLEVER unsigned long burn_thirty(unsigned long n)
{
	unsigned long x = 3;

	for (unsigned long i = 0; i < n; i++) {
		x = x * 6364136223846793005UL + i;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

static struct clocksplit split = { .chunk = CHUNK };

/* A round is about ten chunks, 5 ms. */
NOCLEVER unsigned long run_split(unsigned long rounds)
{
	unsigned long sink = 0;

	for (unsigned long r = 0; r < rounds; r++)
		sink += clocksplit_round(&split);
	return sink;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 6.0;
	double end = now() + seconds;
	unsigned long sink = 0;

	clocksplit_add(&split, burn_seventy, 7);
	clocksplit_add(&split, burn_thirty, 3);
	while (now() < end)
		sink += run_split(4);
	printf("%lu\n", sink & 1);
	return 0;
}
