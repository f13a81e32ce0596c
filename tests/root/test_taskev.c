/*
 * taskev: an event on every thread of the named processes, each thread
 * once, in a process whose threads exist before the call; a process that
 * is gone is skipped; more threads than allowed is -E2BIG with a message
 * and nothing left open; and an opened event ticks while its thread runs
 * (read as the event's count, CPU-clock nanoseconds).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "bpf/taskev.h"

#define EXTRA_THREADS 3

static pthread_barrier_t done;

static void *waiter(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&done);
	return NULL;
}

/* Open descriptors of this process, to see that nothing leaks. */
static int open_fds(void)
{
	int n = 0;

	for (int fd = 0; fd < 4096; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

static void test_every_thread_once(void **state)
{
	pthread_t t[EXTRA_THREADS];
	uint32_t me = (uint32_t)getpid();
	uint32_t twice[2] = { me, me };
	struct taskev ev;
	char err[256] = "";

	(void)state;
	assert_int_equal(pthread_barrier_init(&done, NULL, EXTRA_THREADS + 1), 0);
	for (int i = 0; i < EXTRA_THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, waiter, NULL), 0);
	/* The same process twice: still one event per thread. */
	assert_int_equal(taskev_open(&ev, twice, 2, 99, 64, err, sizeof(err)), 0);
	assert_int_equal(ev.n, EXTRA_THREADS + 1);
	for (size_t i = 0; i < ev.n; i++) {
		assert_true(ev.ev[i].fd >= 0);
		for (size_t j = 0; j < i; j++)
			assert_int_not_equal(ev.ev[i].tid, ev.ev[j].tid);
	}
	taskev_free(&ev);
	assert_null(ev.ev);
	pthread_barrier_wait(&done);
	for (int i = 0; i < EXTRA_THREADS; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&done);
}

static void test_gone_process_is_skipped(void **state)
{
	struct taskev ev;
	char err[256] = "";
	uint32_t gone;
	pid_t pid = fork();

	(void)state;
	if (pid == 0)
		_exit(0);
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	gone = (uint32_t)pid;
	assert_int_equal(taskev_open(&ev, &gone, 1, 99, 64, err, sizeof(err)), 0);
	assert_int_equal(ev.n, 0);
	taskev_free(&ev);
}

static void test_too_many_threads_closes_all(void **state)
{
	pthread_t t[EXTRA_THREADS];
	uint32_t me = (uint32_t)getpid();
	struct taskev ev;
	char err[256] = "";
	int before;

	(void)state;
	assert_int_equal(pthread_barrier_init(&done, NULL, EXTRA_THREADS + 1), 0);
	for (int i = 0; i < EXTRA_THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, waiter, NULL), 0);
	before = open_fds();
	assert_int_equal(taskev_open(&ev, &me, 1, 99, 2, err, sizeof(err)), -E2BIG);
	print_message("%s\n", err);
	assert_non_null(strstr(err, "more threads than the 2 perf events"));
	assert_int_equal(ev.n, 0);
	assert_null(ev.ev);
	assert_int_equal(open_fds(), before);
	pthread_barrier_wait(&done);
	for (int i = 0; i < EXTRA_THREADS; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&done);
}

static void test_event_ticks_with_its_thread(void **state)
{
	uint32_t me = (uint32_t)getpid();
	struct taskev ev;
	char err[256] = "";
	uint64_t v[2] = { 0 }; /* the count, the ns enabled */
	volatile unsigned long sink = 0;
	struct timespec t0, t1;

	(void)state;
	assert_int_equal(taskev_open(&ev, &me, 1, 99, 64, err, sizeof(err)), 0);
	assert_int_equal(ev.n, 1);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do {
		for (int i = 0; i < 100000; i++)
			sink += (unsigned long)i;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
	} while ((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) < 50000000L);
	assert_int_equal(read(ev.ev[0].fd, v, sizeof(v)), sizeof(v));
	print_message("CPU-clock count after 50 ms of this thread's CPU: %llu ns (enabled %llu)\n",
		      (unsigned long long)v[0], (unsigned long long)v[1]);
	assert_true(v[0] >= 40000000ULL);
	assert_true(v[1] >= 40000000ULL);
	taskev_free(&ev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_thread_once),
		cmocka_unit_test(test_gone_process_is_skipped),
		cmocka_unit_test(test_too_many_threads_closes_all),
		cmocka_unit_test(test_event_ticks_with_its_thread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
