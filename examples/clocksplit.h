/*
 * clocksplit: runs a few functions in a known split of CPU time, by the
 * clock, for the workloads with known answers (split7030, splitpct,
 * chains).
 *
 * Giving each function a count of iterations of one loop splits CPU time
 * only where every iteration costs the same, which emulation does not
 * promise: under qemu's TCG (the Debian 6.1 guest of `make check`) the
 * cost of a call, a return or a loop depends on how the code was
 * translated. So the caller runs each function in turn, a chunk of
 * iterations at a time, until it has had its share of the thread's CPU
 * time so far (CLOCK_THREAD_CPUTIME_ID, the time a CPU-clock sampler
 * counts). The split then holds to within one chunk over the whole run,
 * whatever an iteration costs. The functions stay plain loops (no clock
 * read inside, so a leaf stays a leaf for the frame-pointer tests); the
 * clock is read in the caller, once a chunk (about 0.3 us natively,
 * against a chunk of about 0.5 ms). Phases stay contiguous, and chunks
 * vary in length at random: one chunk at a time to whichever function
 * was furthest behind, in chunks of one length, read 44% to 74% for a
 * 70% share under a 999 Hz sampler (perf's and ours alike), the pattern
 * beating against the sampler's clock.
 *
 * clocksplit_round() is always inlined, so the functions' caller on the
 * stack is the workload's own run_* function.
 */
#ifndef EBPROF_EXAMPLES_CLOCKSPLIT_H
#define EBPROF_EXAMPLES_CLOCKSPLIT_H

#include <time.h>

#define CLOCKSPLIT_MAX 4

struct clocksplit {
	int n;
	unsigned long chunk; /* iterations per call */
	unsigned long (*fn[CLOCKSPLIT_MAX])(unsigned long n);
	double weight[CLOCKSPLIT_MAX]; /* shares; 0: never run */
	double used[CLOCKSPLIT_MAX];	/* CPU seconds spent in each */
	unsigned long long seed;	/* of the chunk lengths */
	double round_s;			/* CPU seconds of a round: ten first chunks */
};

static inline double clocksplit_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline void clocksplit_add(struct clocksplit *cs, unsigned long (*fn)(unsigned long),
				  double weight)
{
	if (cs->n < CLOCKSPLIT_MAX) {
		cs->fn[cs->n] = fn;
		cs->weight[cs->n] = weight;
		cs->used[cs->n] = 0;
		cs->n++;
	}
	if (!cs->seed)
		cs->seed = 0x9e3779b97f4a7c15ULL;
}

/*
 * Runs one chunk of function i and adds its CPU time. Chunks are of
 * random length, from half to one and a half times chunk, so that no
 * fixed pattern of work beats against a sampler's regular clock.
 */
static inline __attribute__((always_inline)) unsigned long clocksplit_chunk(struct clocksplit *cs,
									    int i)
{
	unsigned long r;
	double start;

	cs->seed ^= cs->seed << 13;
	cs->seed ^= cs->seed >> 7;
	cs->seed ^= cs->seed << 17;
	start = clocksplit_cpu();
	r = cs->fn[i](cs->chunk / 2 + (unsigned long)(cs->seed % (cs->chunk + 1)));
	__asm__ volatile("" : "+r"(r)); /* not a tail call, nor moved past the clock */
	cs->used[i] += clocksplit_cpu() - start;
	return r;
}

/*
 * Runs one round of about ten chunks: each function in turn, one chunk at
 * a time, until its share of all the CPU time used so far (this round
 * included) is reached. Phases stay contiguous (70% then 30%), and what
 * one round overshoots the next round gives back. Returns a sink value.
 */
static inline __attribute__((always_inline)) unsigned long clocksplit_round(struct clocksplit *cs)
{
	double total = 0, weights = 0, goal;
	unsigned long sink = 0;

	for (int i = 0; i < cs->n; i++) {
		total += cs->used[i];
		weights += cs->weight[i];
	}
	if (weights <= 0)
		return 0;
	/* The first round learns how long a chunk takes: a round is ten. */
	if (cs->round_s <= 0) {
		for (int i = 0; i < cs->n && cs->round_s <= 0; i++) {
			if (cs->weight[i] > 0) {
				sink += clocksplit_chunk(cs, i);
				cs->round_s = 10 * cs->used[i];
			}
		}
	}
	goal = total + cs->round_s;
	for (int i = 0; i < cs->n; i++)
		while (cs->weight[i] > 0 && cs->used[i] < goal * cs->weight[i] / weights)
			sink += clocksplit_chunk(cs, i);
	return sink;
}

#endif
