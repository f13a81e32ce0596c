/*
 * capture tests, on real eBPF: a child burns CPU in a known function, the
 * sampler (filtered to the child) is drained through a capture into a
 * profile. The symbolizer is pointed at a /proc of the test's own for the
 * stalls: the child's /proc/PID/maps there is a FIFO nobody writes, so
 * reading the child's maps blocks in open(), as a read of a file nobody
 * answers would. The guarantee under test: capture_drain() and
 * capture_free() return within the stall timeout of the worker's last
 * progress, with the loss counted, and the next drains name what they can.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "render/capture.h"
#include "render/stacks.h"

#define STALL_MS 400

__attribute__((noinline)) static uint64_t capture_burn(uint64_t rounds)
{
	uint64_t x = rounds;

	for (uint64_t i = 0; i < rounds; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

struct fixture {
	pid_t child;
	uint32_t tgid;
	struct sampler *sampler;
	struct capture *capture;
	struct profile *profile;
	char proc[64];	  /* a /proc of the test's own; "" for the real one */
	char fifo[128];	  /* the child's maps there */
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct sampler_config sc;
	char err[512];

	assert_non_null(f);
	f->child = fork();
	assert_true(f->child >= 0);
	if (!f->child) {
		uint64_t sink = 0;

		prctl(PR_SET_NAME, "capture_child");
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive a failed test */
		for (;;)
			sink += capture_burn(100000);
	}
	f->tgid = (uint32_t)f->child;
	sampler_config_init(&sc);
	sc.tgids = &f->tgid;
	sc.n_tgids = 1;
	sc.frequency = 999;
	sc.report_processes = true;
	assert_int_equal(sampler_open(&sc, &f->sampler, err, sizeof(err)), 0);
	f->profile = profile_new();
	assert_non_null(f->profile);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[256];

	capture_free(f->capture);
	sampler_free(f->sampler);
	profile_free(f->profile);
	kill(f->child, SIGKILL);
	waitpid(f->child, NULL, 0);
	if (f->fifo[0]) {
		/* Lets an abandoned worker's open() return, so it ends and frees. */
		int fd = open(f->fifo, O_WRONLY | O_NONBLOCK);

		if (fd >= 0)
			close(fd);
		usleep(200 * 1000);
	}
	if (f->proc[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->proc);
		assert_int_equal(system(cmd), 0);
	}
	free(f);
	return 0;
}

/*
 * A /proc where the child's maps is a FIFO nobody writes: snapshotting the
 * child (or naming it) blocks in open() until a writer comes. Its stat is
 * not there: with the sampler's start times nothing reads it.
 */
static void fake_proc_with_blocking_maps(struct fixture *f, struct capture_config *cc)
{
	char path[160];

	strcpy(f->proc, "/tmp/test_capture.XXXXXX");
	assert_non_null(mkdtemp(f->proc));
	snprintf(path, sizeof(path), "%s/%u", f->proc, f->tgid);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(f->fifo, sizeof(f->fifo), "%s/%u/maps", f->proc, f->tgid);
	assert_int_equal(mkfifo(f->fifo, 0644), 0);
	cc->symbolizer.proc_root = f->proc;
}

/* Samples of the child's stacks with a frame called name, in p. */
struct count_ctx {
	const char *name;
	uint64_t samples;
};

static int count_frame(const struct frame *frames, size_t n, uint64_t count, void *ctx)
{
	struct count_ctx *c = ctx;

	for (size_t i = 0; i < n; i++)
		if (!strcmp(frames[i].name, c->name)) {
			c->samples += count;
			break;
		}
	return 0;
}

static uint64_t samples_with(const struct profile *p, const char *name)
{
	struct count_ctx c = { .name = name };

	assert_int_equal(stacks_for_each(p, 0, count_frame, &c), 0);
	return c.samples;
}

static void start(struct fixture *f, const struct capture_config *cc)
{
	assert_int_equal(capture_new(cc, &f->capture), 0);
	assert_int_equal(capture_attach(f->capture, f->sampler), 0);
}

/* The plain path: every sample named and added, the snapshot counted. */
static void test_samples_are_named_into_the_profile(void **state)
{
	struct fixture *f = *state;
	struct capture_config cc;
	struct capture_stats cs;
	struct sampler_stats delta;

	capture_config_init(&cc);
	start(f, &cc);
	usleep(500 * 1000);
	assert_int_equal(capture_drain(f->capture, f->profile, &delta), 0);
	assert_true(delta.recorded > 100);
	capture_stats(f->capture, &cs);
	assert_true(cs.received > 100);
	assert_int_equal(profile_total(f->profile), cs.received);
	assert_true(samples_with(f->profile, "capture_burn") > profile_total(f->profile) / 2);
	capture_stats(f->capture, &cs);
	assert_int_equal(cs.lost_stalled, 0);
	assert_int_equal(cs.stalls, 0);
	assert_true(cs.symbolizer.frames > 0);
	assert_true(cs.tracked >= 1);
}

/*
 * Stuck with no way out (no interrupt signal): the drain returns within
 * the stall timeout, the worker is abandoned, what it held is counted
 * lost, and a new worker goes on. The process it was stuck on is not
 * read again: its samples keep their name and get one "[stalled]" frame.
 */
static void test_a_stuck_worker_is_abandoned_and_counted(void **state)
{
	struct fixture *f = *state;
	struct capture_config cc;
	struct capture_stats cs;
	struct sampler_stats delta;
	double t0;

	capture_config_init(&cc);
	fake_proc_with_blocking_maps(f, &cc);
	cc.stall_ms = STALL_MS;
	start(f, &cc);
	usleep(300 * 1000);
	t0 = now();
	assert_int_equal(capture_drain(f->capture, f->profile, &delta), 0);
	assert_true(now() - t0 < STALL_MS / 1000.0 + 1.0);
	capture_stats(f->capture, &cs);
	assert_int_equal(cs.stalls, 1);
	assert_int_equal(cs.interrupts, 0);
	assert_false(cs.given_up);
	/* Every sample is somewhere: lost with the worker, or in the profile. */
	assert_true(cs.received > 0);
	assert_int_equal(cs.lost_stalled + profile_total(f->profile), cs.received);

	/* The next drain: the new worker names the child "[stalled]", at once. */
	usleep(300 * 1000);
	t0 = now();
	assert_int_equal(capture_drain(f->capture, f->profile, &delta), 0);
	assert_true(now() - t0 < 1.0);
	capture_stats(f->capture, &cs);
	assert_int_equal(cs.stalls, 1);
	assert_true(cs.unnamed_stalled > 0);
	assert_int_equal(cs.unnamed_stalled, samples_with(f->profile, CAPTURE_STALLED_NAME));
	assert_int_equal(cs.lost_stalled + profile_total(f->profile), cs.received);
	assert_true(samples_with(f->profile, "capture_child") == profile_total(f->profile));
	/* Stopping is prompt too. */
	t0 = now();
	capture_free(f->capture);
	f->capture = NULL;
	assert_true(now() - t0 < 1.0);
}

/*
 * With an interrupt signal, a blocking system call returns EINTR: the
 * worker comes back by itself (the process is named as unreadable), and
 * nothing is abandoned.
 */
static void test_an_interrupt_frees_a_worker_blocked_in_a_system_call(void **state)
{
	struct fixture *f = *state;
	struct capture_config cc;
	struct capture_stats cs;
	struct sampler_stats delta;
	double t0;

	capture_config_init(&cc);
	fake_proc_with_blocking_maps(f, &cc);
	cc.stall_ms = STALL_MS;
	cc.interrupt_signal = SIGURG;
	start(f, &cc);
	usleep(300 * 1000);
	t0 = now();
	assert_int_equal(capture_drain(f->capture, f->profile, &delta), 0);
	assert_true(now() - t0 < 2 * STALL_MS / 1000.0 + 1.0);
	capture_stats(f->capture, &cs);
	assert_true(cs.interrupts >= 1);
	assert_int_equal(cs.stalls, 0);
	assert_int_equal(cs.lost_stalled, 0);
	assert_true(cs.received > 0);
	assert_int_equal(profile_total(f->profile), cs.received);
}

/* Forks a child that waits for a byte on a pipe (not sampled meanwhile), then burns. */
static pid_t start_burner_on_cue(int *cue)
{
	int fds[2];
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		char c;
		uint64_t sink = 0;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(fds[1]);
		if (read(fds[0], &c, 1) != 1)
			_exit(1);
		for (;;)
			sink += capture_burn(100000);
	}
	close(fds[0]);
	*cue = fds[1];
	return pid;
}

/* Starts Debian's python3.11 spinning, once it says it runs. */
static pid_t start_python(void)
{
	int fds[2];
	char c;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(fds[1], 1);
		close(fds[0]);
		execl("/usr/bin/python3.11", "python3.11", "-c",
		      "import sys\nsys.stdout.write('r'); sys.stdout.flush()\nwhile True: pass",
		      (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], &c, 1), 1);
	close(fds[0]);
	return pid;
}

/*
 * A worker that loaded a Python process, then is abandoned (stuck on
 * another process): its Python counters stay in the totals, and the
 * worker that replaces it keeps the Python process (and forgets it from
 * the sampler's map once it exits; without that the map only fills).
 */
static void test_an_abandoned_workers_python_state_is_kept(void **state)
{
	struct fixture *f = *state;
	struct capture_config cc;
	struct capture_stats cs;
	struct sampler_stats delta;
	struct sampler_config sc;
	uint32_t tgids[2];
	pid_t python, stuck;
	char path[160], err[512];
	uint64_t examined;
	int cue, i;

	/* This test's own sampler: the Python process and the one that will stall. */
	capture_free(f->capture);
	f->capture = NULL;
	sampler_free(f->sampler);
	python = start_python();
	stuck = start_burner_on_cue(&cue);
	tgids[0] = (uint32_t)python;
	tgids[1] = (uint32_t)stuck;
	sampler_config_init(&sc);
	sc.tgids = tgids;
	sc.n_tgids = 2;
	sc.frequency = 499;
	sc.report_processes = true;
	assert_int_equal(sampler_open(&sc, &f->sampler, err, sizeof(err)), 0);
	assert_true(sampler_python(f->sampler));
	/* Our /proc: the Python process's directory is the real one; the other's maps blocks. */
	strcpy(f->proc, "/tmp/test_capture.XXXXXX");
	assert_non_null(mkdtemp(f->proc));
	snprintf(path, sizeof(path), "%s/%d", f->proc, python);
	snprintf(err, sizeof(err), "/proc/%d", python);
	assert_int_equal(symlink(err, path), 0);
	snprintf(path, sizeof(path), "%s/%d", f->proc, stuck);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(f->fifo, sizeof(f->fifo), "%s/%d/maps", f->proc, stuck);
	assert_int_equal(mkfifo(f->fifo, 0644), 0);
	capture_config_init(&cc);
	cc.symbolizer.proc_root = f->proc;
	cc.stall_ms = STALL_MS;
	start(f, &cc);

	for (i = 0; i < 50; i++) {
		usleep(100 * 1000);
		assert_int_equal(capture_drain(f->capture, f->profile, &delta), 0);
		capture_stats(f->capture, &cs);
		if (cs.python.loaded == 1)
			break;
	}
	assert_int_equal(cs.python.loaded, 1);
	assert_int_equal(cs.stalls, 0);
	examined = cs.python.examined;
	assert_true(examined >= 1);

	/* The other process runs: its snapshot blocks, the worker is abandoned. */
	assert_int_equal(write(cue, "x", 1), 1);
	for (i = 0; i < 20 && cs.stalls == 0; i++) {
		usleep(200 * 1000);
		assert_int_equal(capture_drain(f->capture, f->profile, &delta), 0);
		capture_stats(f->capture, &cs);
	}
	assert_int_equal(cs.stalls, 1);
	assert_int_equal(capture_drain(f->capture, f->profile, &delta), 0);
	capture_stats(f->capture, &cs);
	assert_int_equal(cs.stalls, 1);
	assert_int_equal(cs.python.loaded, 1);	      /* kept by the new worker */
	assert_true(cs.python.examined >= examined); /* the old one's count is not lost */

	/* It exits: the new worker forgets it. */
	kill(python, SIGKILL);
	waitpid(python, NULL, 0);
	usleep(100 * 1000);
	assert_int_equal(capture_drain(f->capture, f->profile, &delta), 0);
	capture_stats(f->capture, &cs);
	assert_int_equal(cs.python.loaded, 0);
	kill(stuck, SIGKILL);
	waitpid(stuck, NULL, 0);
	close(cue);
}

/* A child named capture_kids that burns for ms (forever: -1), then exits. */
static pid_t kid_start(int ms)
{
	pid_t kid = fork();

	assert_true(kid >= 0);
	if (!kid) {
		double end = now() + ms / 1e3;

		prctl(PR_SET_NAME, "capture_kids");
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		while (ms < 0 || now() < end)
			capture_burn(10000);
		_exit(0);
	}
	return kid;
}

/*
 * Reports of processes whose files the unwinder knows are put off and
 * taken in batches: the watch thread's timer hands them to the worker
 * with no drain to wake it, and a process that exited meanwhile is still
 * snapshot from the maps read at its report, not counted gone. A first
 * child, prepared before sampling starts, has its files' tables built;
 * then eight more burn 30 ms each, one after the other, and exit.
 */
static void test_put_off_reports_are_taken_without_a_drain(void **state)
{
	static const char *const comms[] = { "capture_kids" };
	struct capture_prepared prep;
	struct sampler_config sc;
	struct capture_config cc;
	struct capture_stats cs;
	struct sampler *sampler;
	struct capture *capture;
	char err[512];
	double until;
	pid_t first;
	int kids = 8;

	(void)state;
	sampler_config_init(&sc);
	sc.comms = comms;
	sc.n_comms = 1;
	sc.frequency = 999;
	sc.report_processes = true;
	sc.start_later = true;
	assert_int_equal(sampler_open(&sc, &sampler, err, sizeof(err)), 0);
	assert_int_equal(sampler_unwind_mode(sampler), SAMPLER_UNWIND_TABLES);
	capture_config_init(&cc);
	assert_int_equal(capture_new(&cc, &capture), 0);
	assert_int_equal(capture_attach(capture, sampler), 0);
	first = kid_start(-1);
	usleep(100 * 1000); /* named */
	assert_int_equal(capture_prepare(capture, 10000, &prep), 0);
	assert_int_equal(prep.ready, 1);
	assert_int_equal(sampler_start(sampler, err, sizeof(err)), 0);
	kill(first, SIGKILL);
	waitpid(first, NULL, 0);
	for (int i = 0; i < kids; i++) {
		pid_t kid = kid_start(30);

		assert_int_equal(waitpid(kid, NULL, 0), kid);
	}
	/* No drain: only the timer (50 ms after a report) wakes the worker. */
	until = now() + 3;
	do {
		usleep(20 * 1000);
		capture_stats(capture, &cs);
	} while (cs.tracked + cs.gone < 1 + (uint64_t)kids && now() < until);
	assert_int_equal(cs.tracked, 1 + kids);
	assert_int_equal(cs.gone, 0);
	assert_int_equal(cs.track_dropped, 0);
	capture_free(capture);
	sampler_free(sampler);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_samples_are_named_into_the_profile, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_a_stuck_worker_is_abandoned_and_counted,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_an_interrupt_frees_a_worker_blocked_in_a_system_call, setup, teardown),
		cmocka_unit_test_setup_teardown(test_an_abandoned_workers_python_state_is_kept,
						setup, teardown),
		cmocka_unit_test(test_put_off_reports_are_taken_without_a_drain),
	};

	if (geteuid() != 0) {
		fprintf(stderr, "test_capture needs root (real eBPF)\n");
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
