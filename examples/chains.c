/*
 * chains: burns CPU over three call chains of different depths, in a known
 * 50/30/20 split:
 *
 *   main -> run_chains -> chain_a_leaf                                  50%
 *   main -> run_chains -> chain_b1 -> chain_b2 -> chain_b_leaf          30%
 *   main -> run_chains -> chain_c1 -> chain_c2 -> chain_c3 -> chain_c4
 *                      -> chain_c_leaf                                  20%
 *
 * run_chains() gives the three chains 50, 30 and 20% of the thread's CPU
 * time by the clock (clocksplit.h): a chunk of the same loop at a time to
 * whichever is behind its share, so the split holds to within one chunk
 * whatever a call or an iteration costs (under emulation too). The chains
 * are there to test call-chain fidelity: a frame-pointer walk must return
 * each leaf's exact callers, at three depths.
 *
 * Compiler tricks are defeated on purpose, and tests/e2e checks with nm that
 * every name below is in the binary, once, at its own address:
 *   inlining, constprop clones  noinline + noclone (clang has no noclone and
 *                               clones nothing noinline keeps out)
 *   sibling calls               an empty asm after every call keeps the call
 *                               from being the function's last act (the
 *                               Makefile adds -fno-optimize-sibling-calls too)
 *   identical-code folding      each leaf and each link mixes in its own
 *                               constant, so no two bodies are identical
 *
 * Usage: chains [SECONDS]   (default 6)
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

/* The leaves: one loop, three seeds. */
NOCLEVER unsigned long chain_a_leaf(unsigned long n)
{
	unsigned long x = 101;

	for (unsigned long i = 0; i < n; i++) {
		x = x * 6364136223846793005UL + i;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

NOCLEVER unsigned long chain_b_leaf(unsigned long n)
{
	unsigned long x = 103;

	for (unsigned long i = 0; i < n; i++) {
		x = x * 6364136223846793005UL + i;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

NOCLEVER unsigned long chain_c_leaf(unsigned long n)
{
	unsigned long x = 107;

	for (unsigned long i = 0; i < n; i++) {
		x = x * 6364136223846793005UL + i;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

/*
 * LINK(name, next, k): a function that only calls the next one down the
 * chain. The asm after the call makes the result pass through a register
 * the compiler cannot see through, so the call is not in tail position.
 */
#define LINK(name, next, k)                                    \
	NOCLEVER unsigned long name(unsigned long n)           \
	{                                                      \
		unsigned long r = next(n);                     \
		__asm__ volatile("" : "+r"(r));                \
		return r ^ (k);                                \
	}

LINK(chain_b2, chain_b_leaf, 0xb2)
LINK(chain_b1, chain_b2, 0xb1)
LINK(chain_c4, chain_c_leaf, 0xc4)
LINK(chain_c3, chain_c4, 0xc3)
LINK(chain_c2, chain_c3, 0xc2)
LINK(chain_c1, chain_c2, 0xc1)

static struct clocksplit split = { .chunk = CHUNK };

/* A round is about ten chunks, 5 ms. */
NOCLEVER unsigned long run_chains(unsigned long rounds)
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

	clocksplit_add(&split, chain_a_leaf, 5);
	clocksplit_add(&split, chain_b1, 3);
	clocksplit_add(&split, chain_c1, 2);
	while (now() < end)
		sink += run_chains(4);
	printf("%lu\n", sink & 1);
	return 0;
}
