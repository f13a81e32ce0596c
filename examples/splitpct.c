/*
 * splitpct: burns CPU split between two functions by a share given on the
 * command line, so that two runs make a known change for differential
 * flame graphs ("splitpct 70" then "splitpct 50": burn_first shrinks from
 * 70% to 50%, burn_second grows from 30% to 50%).
 *
 * run_pct() gives burn_first PCT% of the thread's CPU time and burn_second
 * the rest, by the clock (clocksplit.h), so the split holds whatever an
 * iteration costs. As in split7030, nothing is inlined, cloned or
 * tail-called.
 *
 * Usage: splitpct PCT [SECONDS]   (PCT 0 to 100; default 6 seconds)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "clocksplit.h"

#define CHUNK 1000000UL /* about 0.5 ms of work on this machine */

#ifdef __clang__
#define NOCLEVER __attribute__((noinline, used))
#else
#define NOCLEVER __attribute__((noinline, noclone, used))
#endif

NOCLEVER unsigned long burn_first(unsigned long n)
{
	unsigned long x = 11;

	for (unsigned long i = 0; i < n; i++) {
		x = x * 6364136223846793005UL + i;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

NOCLEVER unsigned long burn_second(unsigned long n)
{
	unsigned long x = 13;

	for (unsigned long i = 0; i < n; i++) {
		x = x * 6364136223846793005UL + i;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

static struct clocksplit split = { .chunk = CHUNK };

/* A round is about ten chunks, 5 ms. */
NOCLEVER unsigned long run_pct(unsigned long rounds)
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
	long pct = argc > 1 ? atol(argv[1]) : -1;
	double seconds = argc > 2 ? atof(argv[2]) : 6.0;
	double end = now() + seconds;
	unsigned long sink = 0;

	if (pct < 0 || pct > 100) {
		fprintf(stderr, "usage: splitpct PCT [SECONDS]   (PCT from 0 to 100)\n");
		return 2;
	}
	clocksplit_add(&split, burn_first, (double)pct);
	clocksplit_add(&split, burn_second, (double)(100 - pct));
	while (now() < end)
		sink += run_pct(4);
	printf("%lu\n", sink & 1);
	return 0;
}
