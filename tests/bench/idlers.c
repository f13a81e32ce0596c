/*
 * idlers N [BURN_MS]: N processes that each run BURN_MS of CPU (default
 * 5) and then sleep until killed, as the daemons of a host that a
 * profiler sampled once and that have been idle since. The parent prints
 * "ready" once every child has burned, and waits. The children share its
 * process group, and die with it (PR_SET_PDEATHSIG).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000, ready[2];
	double burn = (argc > 2 ? atof(argv[2]) : 5.0) / 1000.0;
	char c;

	if (n <= 0 || pipe(ready)) {
		fprintf(stderr, "usage: idlers N [BURN_MS]\n");
		return 2;
	}
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("idlers: fork");
			return 1;
		}
		if (pid == 0) {
			volatile unsigned long spin = 0;
			double t0 = now_s();

			prctl(PR_SET_PDEATHSIG, SIGKILL);
			while (now_s() - t0 < burn)
				spin++;
			close(ready[0]);
			if (write(ready[1], "x", 1) != 1)
				_exit(1);
			for (;;)
				pause();
		}
	}
	close(ready[1]);
	for (int i = 0; i < n; i++)
		if (read(ready[0], &c, 1) != 1)
			return 1;
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
