/*
 * work: a fixed amount of CPU-bound work, timed. Each of THREADS threads
 * runs ROUNDS rounds; a round descends DEPTH frames (so a profiler has a
 * stack of that depth to walk) and then mixes a 128 KiB table (so a
 * profiler that pollutes the caches shows it). The wall time of the whole
 * run goes to stdout in seconds: bench.py compares it with and without a
 * profiler running system-wide. The work does not depend on time, only on
 * the arguments, so a slower run means the machine gave it less.
 *
 * Usage: work THREADS ROUNDS DEPTH
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define WORK_TABLE_WORDS (128 * 1024 / 8)
#define WORK_STEPS 20000 /* table steps per round: about 50 us here */

struct work_thread {
	pthread_t thread;
	unsigned long rounds;
	unsigned int depth;
	uint64_t table[WORK_TABLE_WORDS];
	uint64_t result;
};

__attribute__((noinline)) static uint64_t work_leaf(struct work_thread *w, uint64_t seed)
{
	uint64_t x = seed;

	for (unsigned int i = 0; i < WORK_STEPS; i++) {
		uint64_t *slot = &w->table[x % WORK_TABLE_WORDS];

		x = (x ^ (*slot >> 7)) * 6364136223846793005ULL + 1442695040888963407ULL;
		*slot = x;
	}
	return x;
}

__attribute__((noinline)) static uint64_t work_descend(struct work_thread *w, unsigned int depth,
						       uint64_t seed)
{
	uint64_t r;

	if (depth == 0)
		return work_leaf(w, seed);
	r = work_descend(w, depth - 1, seed + depth);
	__asm__ volatile("" : "+r"(r)); /* not a tail call */
	return r;
}

static void *work_run(void *arg)
{
	struct work_thread *w = arg;

	for (unsigned long i = 0; i < w->rounds; i++)
		w->result += work_descend(w, w->depth, i);
	return NULL;
}

int main(int argc, char **argv)
{
	struct timespec start, end;
	struct work_thread *threads;
	unsigned long rounds;
	unsigned int depth;
	uint64_t sink = 0;
	int n;

	if (argc != 4) {
		fprintf(stderr, "usage: work THREADS ROUNDS DEPTH\n");
		return 2;
	}
	n = atoi(argv[1]);
	rounds = strtoul(argv[2], NULL, 10);
	depth = (unsigned int)atoi(argv[3]);
	if (n <= 0)
		return 1;
	threads = calloc((size_t)n, sizeof(*threads));
	if (!threads)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (int i = 0; i < n; i++) {
		threads[i].rounds = rounds;
		threads[i].depth = depth;
		if (pthread_create(&threads[i].thread, NULL, work_run, &threads[i]))
			return 1;
	}
	for (int i = 0; i < n; i++) {
		pthread_join(threads[i].thread, NULL);
		sink += threads[i].result;
	}
	clock_gettime(CLOCK_MONOTONIC, &end);
	printf("%.6f\n", (double)(end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) / 1e9);
	fprintf(stderr, "work: checksum %llx\n", (unsigned long long)sink);
	free(threads);
	return 0;
}
