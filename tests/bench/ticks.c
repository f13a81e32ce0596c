/*
 * ticks: what the interruptions of a busy thread take from it, counted
 * one by one rather than read off a run's total time.
 *
 * One thread per CPU, each pinned to its CPU, DEPTH frames down (so that
 * a profiler has a stack to walk), runs the same small unit of work over
 * and over (a mix of a 128 KiB table, as work.c does, so that evicted
 * cache lines cost it) and reads the time-stamp counter between units.
 * A unit that took longer than the usual one by more than THRESHOLD was
 * interrupted: its excess is the interruption's cost (the interrupt, and
 * a profiler's program run inside it). The excess of the POST units
 * after it is what the interruption left behind (cache and TLB refills).
 * An interruption of LONG or more is the thread losing its CPU (the
 * hypervisor's steal, another task): counted apart, not as a tick.
 *
 * On a shared VM the speed of a run moves by several percent from one
 * run to the next, more than a profiler's cost above the sampling
 * interrupt; each interruption measured against the units around it is
 * not moved by that.
 *
 * Usage: ticks SECONDS DEPTH
 * Prints, per CPU and for all ("all"), one line of key=value pairs:
 *   seconds    time measured
 *   ticks      interruptions shorter than LONG, and ticks_per_s
 *   tick_ns    their mean excess, in ns
 *   post_ns    the mean excess of the POST units after each
 *   lost_pct   (excess + post excess) of all ticks, in % of the time
 *   long, long_ms  interruptions of LONG or more, and their total
 *   unit_ns    the usual unit
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#define TABLE_WORDS (128 * 1024 / 8)
#define UNIT_STEPS 128		   /* table steps per unit: about 0.9 us here */
#define THRESHOLD_NS 500	   /* an interruption: a unit this much slower */
#define LONG_NS 1000000		   /* the CPU lost, not a tick */
#define POST 16			   /* units after an interruption, for what it left */
#define HIST 8192		   /* histogram of unit lengths, in TSC cycles */
#define CALIBRATE_NS 200000000ull  /* the usual unit, from this long first */

struct ticks_thread {
	pthread_t thread;
	int cpu;
	unsigned int depth;
	double seconds;
	uint64_t table[TABLE_WORDS];
	uint64_t x;
	/* results, in TSC cycles */
	uint64_t unit, units, ticks, tick_sum, long_n, long_sum, elapsed;
	int64_t post_sum;
	uint64_t hist[HIST];
};

static double cycles_per_ns;

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static inline __attribute__((always_inline)) void unit_run(struct ticks_thread *t)
{
	uint64_t x = t->x;

	for (unsigned int i = 0; i < UNIT_STEPS; i++) {
		uint64_t *slot = &t->table[x % TABLE_WORDS];

		x = (x ^ (*slot >> 7)) * 6364136223846793005ULL + 1442695040888963407ULL;
		*slot = x;
	}
	t->x = x;
}

/* The median unit over CALIBRATE_NS, in cycles. */
static uint64_t ticks_calibrate(struct ticks_thread *t)
{
	uint64_t end = now_ns() + CALIBRATE_NS, n = 0, seen = 0;
	uint64_t prev = __rdtsc();

	while (now_ns() < end) {
		for (int k = 0; k < 256; k++) {
			uint64_t c;

			unit_run(t);
			c = __rdtsc();
			if (c - prev < HIST) {
				t->hist[c - prev]++;
				n++;
			}
			prev = c;
		}
	}
	for (uint64_t i = 0; i < HIST; i++) {
		seen += t->hist[i];
		if (seen * 2 >= n)
			return i;
	}
	return HIST;
}

static void ticks_measure(struct ticks_thread *t)
{
	uint64_t threshold = (uint64_t)(THRESHOLD_NS * cycles_per_ns);
	uint64_t long_c = (uint64_t)(LONG_NS * cycles_per_ns);
	uint64_t start, prev, deadline;
	unsigned int after = 0;

	t->unit = ticks_calibrate(t);
	deadline = now_ns() + (uint64_t)(t->seconds * 1e9);
	start = prev = __rdtsc();
	for (;;) {
		for (int k = 0; k < 1024; k++) {
			uint64_t c, d;

			unit_run(t);
			c = __rdtsc();
			d = c - prev;
			prev = c;
			t->units++;
			if (d >= long_c) {
				t->long_n++;
				t->long_sum += d;
				after = 0;
			} else if (d > t->unit + threshold) {
				t->ticks++;
				t->tick_sum += d - t->unit;
				after = POST;
			} else if (after) {
				t->post_sum += (int64_t)d - (int64_t)t->unit;
				after--;
			}
		}
		if (now_ns() >= deadline)
			break;
	}
	t->elapsed = prev - start;
}

__attribute__((noinline)) static void ticks_descend(struct ticks_thread *t, unsigned int depth)
{
	if (depth == 0) {
		ticks_measure(t);
		return;
	}
	ticks_descend(t, depth - 1);
	__asm__ volatile("" ::: "memory"); /* not a tail call */
}

static void *ticks_run(void *arg)
{
	struct ticks_thread *t = arg;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(t->cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set)) {
		fprintf(stderr, "ticks: cannot pin a thread to CPU %d\n", t->cpu);
		exit(1);
	}
	t->x = (uint64_t)t->cpu + 1;
	ticks_descend(t, t->depth);
	return NULL;
}

static void ticks_print(const char *who, double seconds, uint64_t ticks, double tick_ns,
			double post_ns, uint64_t long_n, double long_ms, double unit_ns)
{
	double lost = seconds > 0 ? 100.0 * (double)ticks * (tick_ns + post_ns) / (seconds * 1e9) : 0;

	printf("%s seconds=%.3f ticks=%llu ticks_per_s=%.1f tick_ns=%.1f post_ns=%.1f lost_pct=%.4f "
	       "long=%llu long_ms=%.1f unit_ns=%.1f\n",
	       who, seconds, (unsigned long long)ticks, seconds > 0 ? (double)ticks / seconds : 0,
	       tick_ns, post_ns, lost, (unsigned long long)long_n, long_ms, unit_ns);
}

int main(int argc, char **argv)
{
	struct ticks_thread *threads;
	uint64_t c0, c1, n0, n1, ticks = 0, long_n = 0;
	double seconds, all_s = 0, tick_sum = 0, post_sum = 0, long_sum = 0, unit_sum = 0;
	unsigned int depth;
	int n;

	if (argc != 3) {
		fprintf(stderr, "usage: ticks SECONDS DEPTH\n");
		return 2;
	}
	seconds = atof(argv[1]);
	depth = (unsigned int)atoi(argv[2]);
	n = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (n <= 0 || seconds <= 0)
		return 1;
	threads = calloc((size_t)n, sizeof(*threads));
	if (!threads)
		return 1;
	/* The TSC's rate against the clock, over 100 ms. */
	n0 = now_ns();
	c0 = __rdtsc();
	usleep(100000);
	n1 = now_ns();
	c1 = __rdtsc();
	cycles_per_ns = (double)(c1 - c0) / (double)(n1 - n0);
	for (int i = 0; i < n; i++) {
		threads[i].cpu = i;
		threads[i].depth = depth;
		threads[i].seconds = seconds;
		if (pthread_create(&threads[i].thread, NULL, ticks_run, &threads[i]))
			return 1;
	}
	for (int i = 0; i < n; i++) {
		struct ticks_thread *t = &threads[i];
		double s, tn, pn;
		char who[32];

		pthread_join(t->thread, NULL);
		s = (double)t->elapsed / cycles_per_ns / 1e9;
		tn = t->ticks ? (double)t->tick_sum / cycles_per_ns / (double)t->ticks : 0;
		pn = t->ticks ? (double)t->post_sum / cycles_per_ns / (double)t->ticks : 0;
		snprintf(who, sizeof(who), "cpu%d", i);
		ticks_print(who, s, t->ticks, tn, pn, t->long_n,
			    (double)t->long_sum / cycles_per_ns / 1e6, (double)t->unit / cycles_per_ns);
		all_s += s;
		ticks += t->ticks;
		tick_sum += (double)t->tick_sum / cycles_per_ns;
		post_sum += (double)t->post_sum / cycles_per_ns;
		long_n += t->long_n;
		long_sum += (double)t->long_sum / cycles_per_ns / 1e6;
		unit_sum += (double)t->unit / cycles_per_ns;
	}
	/* "all": per CPU, so that ticks_per_s and lost_pct read as one CPU's. */
	ticks_print("all", all_s / n, ticks / (uint64_t)n, ticks ? tick_sum / (double)ticks : 0,
		    ticks ? post_sum / (double)ticks : 0, long_n, long_sum, unit_sum / n);
	free(threads);
	return 0;
}
