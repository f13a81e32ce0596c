/*
 * split7030: burns CPU in an exact 70/30 split between two functions.
 *
 * Every round calls burn_seventy() with 7 units of work and burn_thirty()
 * with 3. The two loops run the same instructions (only an immediate
 * differs, which also keeps identical-code folding from merging them), so
 * the split of CPU time is 70/30 up to the last unfinished round.
 * The compiler is kept from inlining, cloning and tail-calling them, so the
 * symbols the profiler sees are the ones named here.
 *
 * Usage: split7030 [SECONDS]   (default 6)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define UNIT 200000UL /* about 0.1 ms of work on this machine */

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

NOCLEVER unsigned long run_split(unsigned long rounds)
{
	unsigned long sink = 0;

	for (unsigned long r = 0; r < rounds; r++) {
		sink += burn_seventy(7 * UNIT);
		sink += burn_thirty(3 * UNIT);
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
	double seconds = argc > 1 ? atof(argv[1]) : 6.0;
	double end = now() + seconds;
	unsigned long sink = 0;

	while (now() < end)
		sink += run_split(4);
	printf("%lu\n", sink & 1);
	return 0;
}
