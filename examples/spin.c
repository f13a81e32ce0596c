/*
 * spin: burns a fixed amount of CPU time, then prints the CPU time it used.
 *
 * The frequency test needs a target whose CPU time is known exactly over the
 * whole recording. spin runs until its own CPU clock reaches SECONDS (not
 * the wall clock: on a busy machine it simply takes longer), or until
 * MAX_WALL seconds have passed, and then prints user+system time from
 * getrusage() in seconds, so that the expected sample count is
 * frequency x that number.
 *
 * Usage: spin [CPU_SECONDS] [MAX_WALL_SECONDS]   (defaults 5 and 120)
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#ifdef __clang__
#define NOCLEVER __attribute__((noinline, used))
#else
#define NOCLEVER __attribute__((noinline, noclone, used))
#endif

NOCLEVER unsigned long spin_burn(unsigned long n)
{
	unsigned long x = 13;

	for (unsigned long i = 0; i < n; i++) {
		x = x * 6364136223846793005UL + i;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double cpu = argc > 1 ? atof(argv[1]) : 5.0;
	double wall_end = clock_s(CLOCK_MONOTONIC) + (argc > 2 ? atof(argv[2]) : 120.0);
	unsigned long sink = 0;
	struct rusage ru;

	while (clock_s(CLOCK_PROCESS_CPUTIME_ID) < cpu && clock_s(CLOCK_MONOTONIC) < wall_end)
		sink += spin_burn(200000);
	getrusage(RUSAGE_SELF, &ru);
	printf("%.6f %lu\n", ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
		ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6, sink & 1);
	return 0;
}
