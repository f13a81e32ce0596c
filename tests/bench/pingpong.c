/*
 * pingpong: two processes on one CPU hand a byte back and forth through
 * two pipes, so that every hand-over is a context switch: the workload
 * for the cost of off-CPU profiling per switch (bench.py, section 9).
 *
 * Usage: pingpong SECONDS [CPU [WORK]]   (CPU default 0, WORK 0)
 * Prints "round_trips N" and "seconds S": each round trip is two
 * switches (one process blocks in read(), the other runs). WORK is a fixed
 * amount of computation (that many rounds of a multiply-add chain) each
 * process does per hand-off, for a service-like rate of switches (~100k a
 * second here) beside the bare hand-off's several hundred thousand: the
 * profiler's share of such a service's time is what it loses.
 */
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* WORK rounds of a dependent multiply-add chain the compiler cannot drop. */
static void work(unsigned long rounds)
{
	static volatile unsigned long sink;
	unsigned long x = sink | 1;

	for (unsigned long i = 0; i < rounds; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		perror("sched_setaffinity");
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 5, t0, end;
	int cpu = argc > 2 ? atoi(argv[2]) : 0, ping[2], pong[2];
	unsigned long rounds = argc > 3 ? strtoul(argv[3], NULL, 10) : 0;
	unsigned long long trips = 0;
	char b = 0;
	pid_t child;

	if (pipe(ping) || pipe(pong))
		return 1;
	pin(cpu);
	child = fork();
	if (child < 0)
		return 1;
	if (child == 0) {
		/* The echo: until the parent closes its end. */
		close(ping[1]);
		close(pong[0]);
		while (read(ping[0], &b, 1) == 1) {
			work(rounds);
			if (write(pong[1], &b, 1) != 1)
				break;
		}
		_exit(0);
	}
	close(ping[0]);
	close(pong[1]);
	t0 = now();
	end = t0 + seconds;
	while (now() < end) {
		for (int i = 0; i < 1000; i++) {
			work(rounds);
			if (write(ping[1], &b, 1) != 1 || read(pong[0], &b, 1) != 1)
				return 1;
		}
		trips += 1000;
	}
	printf("round_trips %llu\nseconds %.6f\n", trips, now() - t0);
	fflush(stdout);
	close(ping[1]);
	waitpid(child, NULL, 0);
	return 0;
}
