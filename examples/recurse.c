/*
 * recurse: a deep recursion with a known shape. recurse_step() calls itself
 * DEPTH times, then recurse_leaf() burns CPU, so a profile shows DEPTH
 * repeated recurse_step frames between main and the leaf.
 *
 * Usage: recurse [SECONDS] [DEPTH]   (defaults 6 and 24)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* clang has no noclone, and clones nothing that noinline keeps out */
#ifdef __clang__
#define NOCLEVER __attribute__((noinline, used))
#else
#define NOCLEVER __attribute__((noinline, noclone, used))
#endif

NOCLEVER unsigned long recurse_leaf(unsigned long n)
{
	unsigned long x = 11;

	for (unsigned long i = 0; i < n; i++) {
		x = x * 2862933555777941757UL + i;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

NOCLEVER unsigned long recurse_step(unsigned int depth)
{
	unsigned long r;

	if (depth == 0)
		return recurse_leaf(2000000);
	r = recurse_step(depth - 1);
	__asm__ volatile("" : "+r"(r)); /* not a tail call */
	return r + depth;
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
	unsigned int depth = argc > 2 ? (unsigned int)atoi(argv[2]) : 24;
	double end = now() + seconds;
	unsigned long sink = 0;

	while (now() < end)
		sink += recurse_step(depth);
	printf("%lu\n", sink & 1);
	return 0;
}
