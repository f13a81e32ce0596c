/*
 * latethreads: a process whose threads start after the profiler attached,
 * and a child it forks, for `record -p`'s per-thread events
 * (tests/e2e/18_record_pid_threads.sh).
 *
 *   latethreads GO THREADS SPIN_MS [IDLE_THREADS]
 *
 * Starts IDLE_THREADS threads that sleep until the end (default 0), then
 * spins in early_spin() until the file GO exists. Then a starter thread
 * starts THREADS threads that each spin SPIN_MS ms of their own CPU time
 * in late_spin() (threads of a thread that itself started late), and
 * after they end the process forks a child that spins SPIN_MS ms in
 * child_spin(). Prints, in ns of CPU time: "late N child N", the late
 * threads' sum and the child's, each read from the thread's own clock.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long spin_ms;
static int n_threads;
static volatile unsigned long sink;

static long long thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Spins until this thread has used ms of CPU; returns the CPU it used in all. */
static __attribute__((noinline)) long long spin_for(long ms)
{
	long long start = thread_cpu_ns(), now;

	do {
		for (int i = 0; i < 100000; i++)
			sink += (unsigned long)i * 2654435761u;
		now = thread_cpu_ns();
	} while (now - start < ms * 1000000LL);
	return now;
}

static __attribute__((noinline)) void *late_spin(void *arg)
{
	long long *used = arg;

	spin_for(spin_ms);
	*used = thread_cpu_ns();
	return NULL;
}

static __attribute__((noinline)) void *starter(void *arg)
{
	long long *used = arg;
	pthread_t *t = calloc((size_t)n_threads, sizeof(*t));

	if (!t)
		exit(1);
	for (int i = 0; i < n_threads; i++)
		if (pthread_create(&t[i], NULL, late_spin, &used[i]))
			exit(1);
	for (int i = 0; i < n_threads; i++)
		pthread_join(t[i], NULL);
	free(t);
	return NULL;
}

static __attribute__((noinline)) void early_spin(const char *go)
{
	while (access(go, F_OK))
		for (int i = 0; i < 100000; i++)
			sink += (unsigned long)i;
}

static __attribute__((noinline)) void child_spin(int fd)
{
	long long used = spin_for(spin_ms);

	if (write(fd, &used, sizeof(used)) != sizeof(used))
		_exit(1);
	_exit(0);
}

static void *idle_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	long long *used, late = 0, child = 0;
	int n_idle = argc > 4 ? atoi(argv[4]) : 0, pipefd[2];
	pthread_t t;
	pid_t pid;

	if (argc < 4) {
		fprintf(stderr, "usage: latethreads GO THREADS SPIN_MS [IDLE_THREADS]\n");
		return 2;
	}
	n_threads = atoi(argv[2]);
	spin_ms = atol(argv[3]);
	used = calloc((size_t)(n_threads > 0 ? n_threads : 1), sizeof(*used));
	if (n_threads <= 0 || spin_ms <= 0 || !used)
		return 2;
	for (int i = 0; i < n_idle; i++)
		if (pthread_create(&t, NULL, idle_thread, NULL))
			return 1;
	early_spin(argv[1]);
	if (pthread_create(&t, NULL, starter, used) || pthread_join(t, NULL))
		return 1;
	for (int i = 0; i < n_threads; i++)
		late += used[i];
	if (pipe(pipefd))
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0)
		child_spin(pipefd[1]);
	if (read(pipefd[0], &child, sizeof(child)) != sizeof(child) || waitpid(pid, NULL, 0) != pid)
		return 1;
	printf("late %lld child %lld\n", late, child);
	return 0;
}
