/*
 * manystacks: CPU work spread over thousands of distinct call stacks, for
 * the user-space cost benchmark (a profiler's memory and CPU grow with the
 * number of distinct stacks, not with the number of samples). Eight
 * functions call one another along a path chosen by the digits, in base 8,
 * of a path number that changes every few microseconds; the path is
 * LEVELS + 1 calls long, so the program walks through 8^(LEVELS + 1) stacks.
 *
 * Usage: manystacks SECONDS [LEVELS]   (LEVELS default 5: 262144 stacks)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef unsigned long (*step_fn)(unsigned long path, unsigned int level);

static step_fn steps[8];

__attribute__((noinline)) static unsigned long burn(unsigned long x)
{
	for (int i = 0; i < 2000; i++) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

/* One of eight near-identical callers; each is its own symbol and frame. */
#define STEP(n)                                                                   \
	__attribute__((noinline)) static unsigned long step##n(unsigned long path, \
							       unsigned int level) \
	{                                                                         \
		unsigned long r;                                                  \
		if (level == 0)                                                   \
			return burn(path + n);                                    \
		r = steps[path & 7](path >> 3, level - 1);                        \
		__asm__ volatile("" : "+r"(r)); /* not a tail call */             \
		return r + n;                                                     \
	}
STEP(0)
STEP(1)
STEP(2)
STEP(3)
STEP(4)
STEP(5)
STEP(6)
STEP(7)

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? atof(argv[1]) : 10.0);
	unsigned int levels = argc > 2 ? (unsigned int)atoi(argv[2]) : 5;
	unsigned long path = 0, sink = 0;
	step_fn table[8] = { step0, step1, step2, step3, step4, step5, step6, step7 };

	for (int i = 0; i < 8; i++)
		steps[i] = table[i];
	while (now() < end) {
		for (int i = 0; i < 64; i++)
			sink += steps[path & 7](path >> 3, levels);
		/* A large odd stride visits every path, in a scattered order. */
		path = (path + 0x9e3779b97f4a7c15UL) & ((1UL << (3 * (levels + 1))) - 1);
	}
	printf("%lu\n", sink & 1);
	return 0;
}
