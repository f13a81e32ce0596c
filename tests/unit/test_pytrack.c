/*
 * pytrack tests, without BPF: the sampler's two Python calls are stubs
 * here that record what they were asked and check that they were asked
 * inside the owner's hooks (the capture's lock). A real Debian
 * /usr/bin/python3.11, started here, is loaded once detected, its file
 * examined once for two processes, forgotten when it exits; a process
 * that is no Python, or no longer one after an exec, costs the sampler no
 * forget unless it was loaded, and then one; a tracker
 * whose enter hook says no (its worker was abandoned) touches nothing,
 * then or later; another tracker adopts its processes and forgets them
 * at their exit; the counters add up. A Python stopped at its exec
 * (ptrace), its interpreter not up yet, is asked again on a fake clock
 * 50 ms after its first ask, then after 100 ms, then every 200 ms, for
 * PYTRACK_SOON_MS, and loaded at the first timed ask after it was let
 * go; past the timed asks the ends of drains still ask; one the owner
 * says not to read again is dropped unread.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "bpf/sampler.h"
#include "render/pytrack.h"
#include "symbolizer/procmaps.h"

#define PYTHON "/usr/bin/python3.11"

/* What the stubs saw. */
static struct {
	bool in_hook;	  /* between enter and leave */
	bool refuse;	  /* enter says no */
	unsigned int enters, outside; /* calls of the sampler outside the hooks */
	uint32_t set[16], forgot[16];
	struct ebprof_py_proc py; /* the last one set */
	size_t n_set, n_forgot;
} seen;

int sampler_python_set(struct sampler *s, uint32_t tgid, const struct ebprof_py_proc *py)
{
	(void)s;
	seen.py = *py;
	seen.outside += !seen.in_hook;
	if (seen.n_set < 16)
		seen.set[seen.n_set++] = tgid;
	return 0;
}

void sampler_python_forget(struct sampler *s, uint32_t tgid)
{
	(void)s;
	seen.outside += !seen.in_hook;
	if (seen.n_forgot < 16)
		seen.forgot[seen.n_forgot++] = tgid;
}

static bool enter(void *ctx)
{
	(void)ctx;
	seen.enters++;
	if (seen.refuse)
		return false;
	seen.in_hook = true;
	return true;
}

static void leave(void *ctx)
{
	(void)ctx;
	assert_true(seen.in_hook);
	seen.in_hook = false;
}

/* The timed asks' clock, moved by hand (ns). */
static uint64_t fake_now;

static uint64_t fake_clock(void *ctx)
{
	(void)ctx;
	return fake_now;
}

#define MS 1000000ull

static struct pytrack *tracker(struct target *gate)
{
	struct pytrack *t = pytrack_new(&(struct pytrack_config){
		.sampler = (struct sampler *)&seen, /* never dereferenced by the stubs */
		.gate = gate,
		.enter = enter,
		.leave = leave,
		.now = fake_clock,
	});

	assert_non_null(t);
	return t;
}

static pid_t start_python(void)
{
	int fds[2];
	char c;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		dup2(fds[1], 1);
		close(fds[0]);
		execl(PYTHON, "python3.11", "-c",
		      "import sys, time\nsys.stdout.write('r'); sys.stdout.flush()\ntime.sleep(60)",
		      (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], &c, 1), 1);
	close(fds[0]);
	return pid;
}

/*
 * A Python stopped at its exec, before its interpreter is up (detection
 * answers "not yet"); *ready: the pipe that says it is, once let go.
 */
static pid_t start_python_stopped(int *ready)
{
	int fds[2], status;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		dup2(fds[1], 1);
		close(fds[0]);
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		execl(PYTHON, "python3.11", "-c",
		      "import sys, time\nsys.stdout.write('r'); sys.stdout.flush()\ntime.sleep(60)",
		      (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	assert_int_equal(waitpid(pid, &status, 0), pid); /* the SIGTRAP of its exec */
	assert_true(WIFSTOPPED(status));
	*ready = fds[0];
	return pid;
}

/* Lets a stopped Python go and waits until its interpreter runs its script. */
static void let_go(pid_t pid, int ready)
{
	char c;

	assert_int_equal(ptrace(PTRACE_DETACH, pid, NULL, NULL), 0);
	assert_int_equal(read(ready, &c, 1), 1);
	close(ready);
}

static void stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static int reset(void **state)
{
	(void)state;
	memset(&seen, 0, sizeof(seen));
	return 0;
}

static void test_loaded_examined_once_forgotten_at_exit(void **state)
{
	struct target *gate = target_new(&(struct target_config){ .proc_root = "/proc" });
	struct pytrack *t = tracker(gate);
	struct pytrack_stats st;
	pid_t a = start_python(), b = start_python();

	(void)state;
	pytrack_process(t, (uint32_t)a, 1, NULL);
	pytrack_process(t, (uint32_t)b, 2, NULL);
	pytrack_stats(t, &st);
	assert_int_equal(st.loaded, 2);
	assert_int_equal(seen.n_set, 2);
	assert_int_equal(seen.set[0], (uint32_t)a);
	assert_int_equal(seen.set[1], (uint32_t)b);
	assert_int_equal(st.examined, 1); /* one file, two processes */
	assert_int_equal(st.reused, 1);
	assert_true(st.cache_bytes > 0);
	/* Samples in the interpreter: with Python frames, or without (counted). */
	{
		uint64_t native[3] = { 0x1000, seen.py.eval_start + 64, 0x2000 };
		uint64_t python[4] = { 0x1000, EBPROF_PY_FRAME | 0x5000, 3, seen.py.eval_start + 64 };
		uint64_t elsewhere[2] = { 0x1000, 0x2000 };

		assert_true(seen.py.eval_end > seen.py.eval_start);
		pytrack_sample(t, (uint32_t)b, 2, native, 3, 5);
		pytrack_sample(t, (uint32_t)b, 2, python, 4, 7);
		pytrack_sample(t, (uint32_t)b, 2, elsewhere, 2, 11);
		pytrack_sample(t, (uint32_t)b, 3, native, 3, 13); /* another process, same pid */
		pytrack_sample(t, 1, 2, native, 3, 17);		  /* not a Python */
		pytrack_stats(t, &st);
		assert_int_equal(st.native_only, 5);
	}
	stop(a);
	pytrack_end_drain(t);
	pytrack_stats(t, &st);
	assert_int_equal(st.loaded, 1);
	assert_int_equal(seen.n_forgot, 1);
	assert_int_equal(seen.forgot[0], (uint32_t)a);
	assert_int_equal(seen.outside, 0); /* the sampler only inside the hooks */
	stop(b);
	pytrack_free(t);
	target_free(gate);
}

/*
 * Only a process it loaded costs the sampler a forget: every new process
 * that is no Python, none. A loaded Python reported again as something
 * else (an exec keeps the start time) is forgotten once and leaves the list.
 */
static void test_forgets_only_what_it_loaded(void **state)
{
	struct pytrack *t = tracker(NULL);
	struct procmaps *self;
	struct pytrack_stats st;
	pid_t a = start_python();

	(void)state;
	pytrack_process(t, (uint32_t)getpid(), 1, NULL); /* this test: no Python */
	pytrack_process(t, 4194304, 1, NULL);		  /* no such process */
	assert_int_equal(seen.n_forgot, 0);
	pytrack_process(t, (uint32_t)a, 2, NULL);
	assert_int_equal(seen.n_set, 1);
	assert_int_equal(procmaps_load("/proc/self/maps", &self), 0);
	pytrack_process(t, (uint32_t)a, 2, self); /* its maps now: no Python */
	procmaps_free(self);
	assert_int_equal(seen.n_forgot, 1);
	assert_int_equal(seen.forgot[0], (uint32_t)a);
	pytrack_stats(t, &st);
	assert_int_equal(st.loaded, 0);
	stop(a);
	pytrack_end_drain(t);
	assert_int_equal(seen.n_forgot, 1); /* off the list: not forgotten again at its exit */
	assert_int_equal(seen.outside, 0);
	pytrack_free(t);
}

/* A worker abandoned mid-detection: its tracker must not touch the sampler, then or later. */
static void test_refused_hook_touches_nothing(void **state)
{
	struct pytrack *t = tracker(NULL);
	struct pytrack_stats st;
	pid_t a = start_python();

	(void)state;
	seen.refuse = true;
	pytrack_process(t, (uint32_t)a, 1, NULL);
	seen.refuse = false;
	pytrack_process(t, (uint32_t)a, 1, NULL);
	pytrack_end_drain(t);
	assert_int_equal(seen.enters, 1); /* never asked again */
	assert_int_equal(seen.n_set + seen.n_forgot, 0);
	pytrack_stats(t, &st);
	assert_int_equal(st.loaded, 0);
	stop(a);
	pytrack_free(t);
}

/* The worker that replaces an abandoned one takes its processes and forgets them at their exit. */
static void test_adopted_processes_are_forgotten_at_exit(void **state)
{
	struct pytrack *old = tracker(NULL), *heir = tracker(NULL);
	struct pytrack_stats st, sum = { 0 };
	pid_t a = start_python();

	(void)state;
	pytrack_process(old, (uint32_t)a, 7, NULL);
	pytrack_stats(old, &st);
	assert_int_equal(st.loaded, 1);
	pytrack_counters_add(&sum, &st);
	seen.in_hook = true; /* the capture adopts under its lock */
	assert_int_equal(pytrack_adopt(heir, old), 0);
	seen.in_hook = false;
	pytrack_free(old);
	pytrack_stats(heir, &st);
	assert_int_equal(st.loaded, 1);
	assert_int_equal(st.examined, 0);
	pytrack_counters_add(&sum, &st);
	assert_int_equal(sum.examined, 1); /* the totals keep the old one's */
	stop(a);
	pytrack_end_drain(heir);
	pytrack_stats(heir, &st);
	assert_int_equal(st.loaded, 0);
	assert_int_equal(seen.n_forgot, 1);
	assert_int_equal(seen.forgot[0], (uint32_t)a);
	assert_int_equal(seen.outside, 0);
	pytrack_free(heir);
}

/* Asked again on time, then loaded at the first ask after its interpreter is up. */
static void test_starting_asked_again_on_time(void **state)
{
	struct pytrack *t = tracker(NULL);
	struct pytrack_stats st;
	struct pytrack_due due;
	int ready;
	pid_t a = start_python_stopped(&ready);

	(void)state;
	fake_now = 1000 * MS;
	pytrack_process(t, (uint32_t)a, 5, NULL);
	pytrack_stats(t, &st);
	assert_int_equal(st.loaded, 0);
	assert_true(pytrack_next_ask(t, &due));
	assert_int_equal(due.tgid, (uint32_t)a);
	assert_int_equal(due.start_time, 5);
	assert_int_equal(due.at, 1050 * MS);
	/* Reported again (its first sample): still one, asked anew. */
	fake_now = 1010 * MS;
	pytrack_process(t, (uint32_t)a, 5, NULL);
	assert_true(pytrack_next_ask(t, &due));
	assert_int_equal(due.at, 1060 * MS);
	/* Still stopped: not yet, and the next one later. */
	fake_now = due.at;
	pytrack_ask(t, &due, false);
	assert_true(pytrack_next_ask(t, &due));
	assert_int_equal(due.at, 1160 * MS);
	assert_int_equal(seen.n_set, 0);
	let_go(a, ready);
	fake_now = due.at;
	pytrack_ask(t, &due, false);
	pytrack_stats(t, &st);
	assert_int_equal(st.loaded, 1);
	assert_int_equal(seen.n_set, 1);
	assert_int_equal(seen.set[0], (uint32_t)a);
	assert_false(pytrack_next_ask(t, &due)); /* answered: asked no more */
	/* A stale ask (answered meanwhile) does nothing. */
	pytrack_ask(t, &(struct pytrack_due){ (uint32_t)a, 5, 0 }, false);
	assert_int_equal(seen.n_set, 1);
	pytrack_end_drain(t);
	assert_int_equal(seen.n_set, 1);
	assert_int_equal(seen.outside, 0);
	stop(a);
	pytrack_free(t);
}

/* The timed asks back off to every 200 ms and end after PYTRACK_SOON_MS; the drains still ask. */
static void test_timed_asks_bounded(void **state)
{
	struct pytrack *t = tracker(NULL);
	struct pytrack_stats st;
	struct pytrack_due due;
	uint64_t first = 2000 * MS, last;
	unsigned int asks = 0;
	int ready;
	pid_t a = start_python_stopped(&ready);

	(void)state;
	fake_now = first;
	pytrack_process(t, (uint32_t)a, 9, NULL);
	last = first;
	while (pytrack_next_ask(t, &due)) {
		uint64_t gap = due.at - last;

		assert_true(gap == (asks == 0 ? 50 * MS : asks == 1 ? 100 * MS : 200 * MS));
		assert_true(due.at - first <= PYTRACK_SOON_MS * MS);
		fake_now = last = due.at;
		pytrack_ask(t, &due, false);
		asks++;
		assert_true(asks < 100);
	}
	/* 50, 150, then every 200 ms up to 4,950. */
	assert_int_equal(asks, 2 + (PYTRACK_SOON_MS - 150) / 200);
	assert_int_equal(seen.n_set, 0);
	/* Past them, an end of a drain asks, and loads it once it is up. */
	let_go(a, ready);
	pytrack_end_drain(t);
	pytrack_stats(t, &st);
	assert_int_equal(st.loaded, 1);
	assert_int_equal(seen.outside, 0);
	stop(a);
	pytrack_free(t);
}

/* One the owner will not have read again (quarantined) is dropped, not read, by drains either. */
static void test_skipped_is_dropped(void **state)
{
	struct pytrack *t = tracker(NULL);
	struct pytrack_stats st;
	struct pytrack_due due;
	int ready;
	pid_t a = start_python_stopped(&ready);

	(void)state;
	fake_now = 0;
	pytrack_process(t, (uint32_t)a, 3, NULL);
	assert_true(pytrack_next_ask(t, &due));
	let_go(a, ready);
	fake_now = due.at;
	pytrack_ask(t, &due, true);
	assert_false(pytrack_next_ask(t, &due));
	pytrack_end_drain(t);
	pytrack_stats(t, &st);
	assert_int_equal(st.loaded, 0);
	assert_int_equal(seen.n_set, 0);
	assert_int_equal(seen.outside, 0);
	stop(a);
	pytrack_free(t);
}

/* A tracker whose worker was abandoned has nothing to ask, on time or not. */
static void test_refused_hook_no_timed_asks(void **state)
{
	struct pytrack *t = tracker(NULL);
	struct pytrack_due due;
	int ready;
	pid_t a = start_python_stopped(&ready);
	size_t touched;
	unsigned int enters;

	(void)state;
	fake_now = 0;
	pytrack_process(t, (uint32_t)a, 4, NULL);
	assert_true(pytrack_next_ask(t, &due));
	let_go(a, ready);
	touched = seen.n_set + seen.n_forgot; /* "not yet" forgets any old layout */
	enters = seen.enters;
	seen.refuse = true;
	fake_now = due.at;
	pytrack_ask(t, &due, false);
	seen.refuse = false;
	assert_false(pytrack_next_ask(t, &due));
	pytrack_ask(t, &due, false);
	pytrack_end_drain(t);
	assert_int_equal(seen.enters, enters + 1); /* the one refused, then never again */
	assert_int_equal(seen.n_set + seen.n_forgot, touched);
	stop(a);
	pytrack_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_loaded_examined_once_forgotten_at_exit, reset),
		cmocka_unit_test_setup(test_forgets_only_what_it_loaded, reset),
		cmocka_unit_test_setup(test_refused_hook_touches_nothing, reset),
		cmocka_unit_test_setup(test_adopted_processes_are_forgotten_at_exit, reset),
		cmocka_unit_test_setup(test_starting_asked_again_on_time, reset),
		cmocka_unit_test_setup(test_timed_asks_bounded, reset),
		cmocka_unit_test_setup(test_skipped_is_dropped, reset),
		cmocka_unit_test_setup(test_refused_hook_no_timed_asks, reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
