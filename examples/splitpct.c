/*
 * splitpct: burns CPU split between two functions by a share given on the
 * command line, so that two runs make a known change for differential
 * flame graphs ("splitpct 70" then "splitpct 50": burn_first shrinks from
 * 70% to 50%, burn_second grows from 30% to 50%).
 *
 * Each round gives burn_first PCT units of work and burn_second 100 - PCT;
 * both loops run the same instructions, so CPU time follows the units. As
 * in split7030, nothing is inlined, cloned or tail-called.
 *
 * Usage: splitpct PCT [SECONDS]   (PCT 0 to 100; default 6 seconds)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define UNIT 20000UL /* about 0.01 ms of work: a round is about 1 ms */

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

NOCLEVER unsigned long run_pct(unsigned long pct, unsigned long rounds)
{
	unsigned long sink = 0;

	for (unsigned long r = 0; r < rounds; r++) {
		sink += burn_first(pct * UNIT);
		sink += burn_second((100 - pct) * UNIT);
	}
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
	while (now() < end)
		sink += run_pct((unsigned long)pct, 4);
	printf("%lu\n", sink & 1);
	return 0;
}
