/*
 * Tests for the sampler, on real eBPF: they load the program, attach it to
 * every CPU, and profile child processes that burn CPU in a known function.
 * Run as root (CAP_BPF and CAP_PERFMON).
 *
 * The function the children burn in sits in its own ELF section, so the
 * linker's __start_/__stop_ symbols bound it exactly, and a sampled user
 * address can be checked without a symbolizer.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <cmocka.h>

#include <bpf/bpf.h>

#include "bpf/sampler.h"
#include "bpf/unwind.h"
#include "bpf/sampler_diag.h"

#define ERRLEN 512

extern const char __start_ebprof_burn[];
extern const char __stop_ebprof_burn[];

/* Pure register arithmetic: no memory access, so no ASan check, no call. */
__attribute__((noinline, section("ebprof_burn"))) static uint64_t burn_user(uint64_t rounds)
{
	uint64_t x = rounds;

	for (uint64_t i = 0; i < rounds; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

static bool in_burn(uint64_t ip)
{
	return ip >= (uintptr_t)__start_ebprof_burn && ip < (uintptr_t)__stop_ebprof_burn;
}

/* Recursion to a varying depth gives each depth its own user stack. */
__attribute__((noinline)) static uint64_t descend(int depth, uint64_t rounds)
{
	if (depth <= 0)
		return burn_user(rounds);
	return descend(depth - 1, rounds) + (uint64_t)depth;
}

struct workload {
	const char *name;  /* process name to set, or NULL */
	int distinct;	   /* > 1: spread over this many distinct stacks */
	bool syscalls;	   /* spend some time in the kernel too */
	bool threads;	   /* burn in short-lived threads: a new pid every ~0.3 ms */
	const char *rename_to; /* take this name on SIGUSR1 */
};

static const char *workload_new_name;

static void workload_rename(int sig)
{
	(void)sig;
	prctl(PR_SET_NAME, workload_new_name);
}

static void *burn_thread(void *arg)
{
	return (void *)(uintptr_t)burn_user((uint64_t)(uintptr_t)arg);
}

/* Burns CPU until killed, in burn_user() mostly. */
static void workload_run(const struct workload *w)
{
	static char buf[1 << 20];
	int zero = open("/dev/zero", O_RDONLY);
	uint64_t sink = 0;

	if (w->name)
		prctl(PR_SET_NAME, w->name);
	if (w->rename_to) {
		workload_new_name = w->rename_to;
		signal(SIGUSR1, workload_rename);
	}
	for (unsigned int i = 0;; i++) {
		if (w->threads) {
			pthread_t thread;
			void *ret = NULL;

			if (pthread_create(&thread, NULL, burn_thread, (void *)(uintptr_t)50000) ||
			    pthread_join(thread, &ret))
				_exit(1);
			sink += (uintptr_t)ret;
			continue;
		}
		sink += w->distinct > 1 ? descend((int)(i % (unsigned int)w->distinct), 200000)
					: burn_user(200000);
		/* ~1 MiB of clear_user() next to ~1 ms of user work: a few % kernel. */
		if (w->syscalls && read(zero, buf, sizeof(buf)) < 0)
			_exit(1);
		__asm__ volatile("" : : "r"(sink));
	}
}

/*
 * What a test started: children and samplers. The teardown kills and frees
 * whatever a failed assertion left behind, so one failure does not leave a
 * child burning a CPU under the next test.
 */
struct fixture {
	pid_t pids[4];
	struct sampler *samplers[2];
};

static int fixture_setup(void **state)
{
	*state = calloc(1, sizeof(struct fixture));
	return *state ? 0 : -1;
}

static void workload_stop(struct fixture *f, pid_t pid)
{
	for (size_t i = 0; i < sizeof(f->pids) / sizeof(f->pids[0]); i++) {
		if (f->pids[i] == pid) {
			f->pids[i] = 0;
			kill(pid, SIGKILL);
			assert_int_equal(waitpid(pid, NULL, 0), pid);
		}
	}
}

static int fixture_teardown(void **state)
{
	struct fixture *f = *state;

	for (size_t i = 0; i < sizeof(f->pids) / sizeof(f->pids[0]); i++)
		if (f->pids[i])
			workload_stop(f, f->pids[i]);
	for (size_t i = 0; i < sizeof(f->samplers) / sizeof(f->samplers[0]); i++)
		sampler_free(f->samplers[i]);
	free(f);
	return 0;
}

static pid_t workload_start(struct fixture *f, const struct workload *w)
{
	size_t slot = 0;
	pid_t pid;

	while (slot < sizeof(f->pids) / sizeof(f->pids[0]) && f->pids[slot])
		slot++;
	assert_true(slot < sizeof(f->pids) / sizeof(f->pids[0]));
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		workload_run(w);
		_exit(0);
	}
	f->pids[slot] = pid;
	return pid;
}

/*
 * CPU time a process has used, in seconds. The CPU clock ticks only while
 * a task runs, so a process's samples are its CPU time times the
 * frequency, however busy the machine is.
 */
static double cpu_seconds(pid_t pid)
{
	struct timespec ts;
	clockid_t clock;

	assert_int_equal(clock_getcpuclockid(pid, &clock), 0);
	assert_int_equal(clock_gettime(clock, &ts), 0);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* count is within 30% of what cpu seconds at frequency Hz should give. */
static void assert_samples_match(uint64_t count, double cpu, unsigned int frequency)
{
	double expected = cpu * frequency;

	print_message("%llu samples for %.2f s of CPU at %u Hz (expected %.0f)\n",
		      (unsigned long long)count, cpu, frequency, expected);
	/* Too little CPU to judge means the machine is overloaded: say so. */
	if (expected < 20)
		fail_msg("the workload got only %.2f s of CPU", cpu);
	assert_true((double)count >= expected * 0.7 && (double)count <= expected * 1.3 + 5);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* What the drain callback saw. */
struct tally {
	uint32_t want[2]; /* expected tgids; 0 = any */
	char want_comm[SAMPLER_COMM_LEN];
	uint64_t samples;
	uint64_t records;
	uint64_t wrong_tgid;
	uint64_t wrong_comm;
	uint64_t no_ustack;
	uint64_t with_kstack;
	uint64_t leaf_in_burn;
	uint64_t idle;
	uint64_t self;
	uint64_t per_tgid[2];
};

static int tally_sample(const struct sampler_sample *sample, void *ctx)
{
	struct tally *t = ctx;

	t->samples += sample->count;
	t->records++;
	if (t->want[0] && sample->tgid != t->want[0] && sample->tgid != t->want[1])
		t->wrong_tgid += sample->count;
	for (int i = 0; i < 2; i++)
		if (t->want[i] && sample->tgid == t->want[i])
			t->per_tgid[i] += sample->count;
	if (t->want_comm[0] && strcmp(sample->comm, t->want_comm) != 0)
		t->wrong_comm += sample->count;
	if (sample->n_uips == 0)
		t->no_ustack += sample->count;
	if (sample->n_kips > 0)
		t->with_kstack += sample->count;
	if (sample->n_uips > 0 && in_burn(sample->uips[0]))
		t->leaf_in_burn += sample->count;
	if (sample->tgid == 0)
		t->idle += sample->count;
	if (sample->tgid == (uint32_t)getpid())
		t->self += sample->count;
	return 0;
}

static struct sampler *open_or_fail(struct fixture *f, const struct sampler_config *config)
{
	char err[ERRLEN];
	struct sampler *s = NULL;
	size_t slot = f->samplers[0] ? 1 : 0;
	int ret = sampler_open(config, &s, err, sizeof(err));

	if (ret)
		fail_msg("sampler_open: %d: %s", ret, err);
	assert_null(f->samplers[slot]);
	f->samplers[slot] = s;
	return s;
}

static void drain_or_fail(struct sampler *s, struct tally *t, struct sampler_stats *delta)
{
	int ret = sampler_drain(s, t ? tally_sample : NULL, t, delta);

	if (ret)
		fail_msg("sampler_drain: %d", ret);
}

static void print_stats(const char *what, const struct sampler_stats *st)
{
	print_message("%s: samples %llu recorded %llu filtered %llu idle %llu lost %llu "
		      "(collisions %llu stacks_full %llu counts_full %llu) unique %llu drains %llu "
		      "slot_counted %llu\n",
		      what, (unsigned long long)st->samples, (unsigned long long)st->recorded,
		      (unsigned long long)st->filtered, (unsigned long long)st->idle,
		      (unsigned long long)sampler_stats_lost(st),
		      (unsigned long long)st->stack_collisions, (unsigned long long)st->stacks_full,
		      (unsigned long long)st->counts_full, (unsigned long long)st->unique_stacks,
		      (unsigned long long)st->drains, (unsigned long long)st->slot_counted);
}

/*
 * Every run of the program ends one way: recorded, filtered, idle or a
 * loss. The stats are read while the program runs, so a few samples per
 * CPU may be in flight.
 */
static bool accounted_for(const struct sampler_stats *st, int n_cpus)
{
	uint64_t ends = st->recorded + st->filtered + st->idle + st->kstack_errors +
			st->ustack_errors + st->stack_collisions + st->stacks_full +
			st->counts_full;
	uint64_t slack = 4 * (uint64_t)n_cpus;

	return ends + slack >= st->samples && ends <= st->samples + slack;
}

/*
 * A child burning CPU for 2 s at 999 Hz: one sample per ms of its CPU time,
 * all its own, with user stacks that end in the function it burns in.
 */
static void test_profiles_one_process(void **state)
{
	struct fixture *f = *state;
	struct workload w = { .syscalls = true };
	struct sampler_config config;
	struct sampler_stats total;
	struct tally t = { 0 }, after = { 0 };
	struct sampler *s;
	double cpu;
	pid_t child;

	child = workload_start(f, &w);
	sampler_config_init(&config);
	config.frequency = 999;
	config.tgids = (const uint32_t *)&child;
	config.n_tgids = 1;
	t.want[0] = (uint32_t)child;
	after.want[0] = (uint32_t)child;
	s = open_or_fail(f, &config);
	assert_true(sampler_cpu_count(s) >= 1);
	cpu = cpu_seconds(child);

	for (int i = 0; i < 10; i++) {
		sleep_ms(200);
		drain_or_fail(s, &t, NULL);
	}
	cpu = cpu_seconds(child) - cpu;
	workload_stop(f, child);
	drain_or_fail(s, &after, NULL);
	sampler_totals(s, &total);
	print_stats("one process", &total);

	assert_samples_match(t.samples + after.samples, cpu, 999);
	assert_int_equal(t.wrong_tgid + after.wrong_tgid, 0);
	/* Before the kill: a process that is still running always has a user stack. */
	assert_int_equal(t.no_ustack, 0);
	assert_true(t.with_kstack > 0);
	assert_true(t.leaf_in_burn >= t.samples * 7 / 10);
	assert_int_equal(sampler_stats_lost(&total), 0);
	assert_int_equal(t.samples + after.samples, total.recorded);
	/*
	 * One loop's few stacks: most are counted in the CPUs' pending slots
	 * (~95%). The slots are direct-mapped by the key's stack ids, which
	 * move with ASLR from run to run: in a run where two frequent keys
	 * share a slot they take turns (one run of five read 40%).
	 */
	assert_true(total.slot_counted > total.recorded / 5);
	assert_int_equal(total.drains, 11);
	assert_true(accounted_for(&total, sampler_cpu_count(s)));
}

/* Bytes of kernel memory the BPF maps open in this process hold (fdinfo's memlock). */
static uint64_t maps_memlock(void)
{
	char path[64], line[128];
	uint64_t sum = 0;

	for (int fd = 0; fd < 1024; fd++) {
		uint64_t memlock = 0;
		bool map = false;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
		f = fopen(path, "re");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			map |= !strncmp(line, "map_type:", 9);
			sscanf(line, "memlock: %" SCNu64, &memlock);
		}
		fclose(f);
		if (map)
			sum += memlock;
	}
	return sum;
}

/*
 * On a kernel without non-preallocated maps in perf_event programs
 * (before 6.1, KFEAT_NOPREALLOC absent) the sampler preallocates them,
 * and still records every sample; otherwise it holds far less.
 */
static void test_preallocates_where_the_kernel_lacks_noprealloc(void **state)
{
	struct fixture *f = *state;
	struct workload w = { 0 };
	struct kfeat old_kernel = { 0 }, here;
	struct sampler_config config;
	struct sampler_stats total;
	struct tally t = { 0 };
	uint64_t prealloc, grown;
	struct sampler *s;
	double cpu;
	pid_t child;

	kfeat_probe(&here);
	assert_int_equal(kfeat_state(&here, KFEAT_NOPREALLOC), KFEAT_PRESENT);
	old_kernel.state[KFEAT_NOPREALLOC] = KFEAT_ABSENT;
	child = workload_start(f, &w);
	sampler_config_init(&config);
	config.frequency = 999;
	config.tgids = (const uint32_t *)&child;
	config.n_tgids = 1;
	config.features = &old_kernel;
	/* The same maps in both: the table unwinder's are arrays, preallocated anyway. */
	config.unwind = SAMPLER_UNWIND_FP;
	t.want[0] = (uint32_t)child;
	s = open_or_fail(f, &config);
	prealloc = maps_memlock();
	cpu = cpu_seconds(child);
	for (int i = 0; i < 5; i++) {
		sleep_ms(200);
		drain_or_fail(s, &t, NULL);
	}
	cpu = cpu_seconds(child) - cpu;
	sampler_totals(s, &total);
	assert_samples_match(t.samples, cpu, 999);
	assert_int_equal(sampler_stats_lost(&total), 0);
	assert_true(t.leaf_in_burn >= t.samples * 7 / 10);

	/* A second sampler beside it, on this kernel's features. */
	config.features = &here;
	open_or_fail(f, &config);
	grown = maps_memlock() - prealloc;
	workload_stop(f, child);
	print_message("maps hold %.1f MiB preallocated, %.1f MiB not\n", prealloc / 1048576.0,
		      grown / 1048576.0);
	/* Two stacks maps of 16384 chunks of 32 frames each. */
	assert_true(prealloc >= 2ULL * 16384 * sizeof(struct ebprof_chunk));
	assert_true(grown < prealloc / 8);
}

/*
 * On a kernel without the table unwinder's helpers (before 5.17,
 * KFEAT_UNWIND_TABLES absent) auto walks frame pointers and dwarf refuses
 * with kfeat's line; where they are, both walk by tables.
 */
static void test_unwind_falls_back_where_the_kernel_lacks_the_helpers(void **state)
{
	struct fixture *f = *state;
	struct kfeat old_kernel, here;
	struct sampler_config config;
	struct sampler *s = NULL;
	char err[ERRLEN];

	kfeat_probe(&here);
	assert_int_equal(kfeat_state(&here, KFEAT_UNWIND_TABLES), KFEAT_PRESENT);
	old_kernel = here;
	old_kernel.state[KFEAT_UNWIND_TABLES] = KFEAT_ABSENT;
	sampler_config_init(&config);
	config.frequency = 99;
	config.report_processes = true;
	config.features = &old_kernel;
	config.unwind = SAMPLER_UNWIND_TABLES;
	assert_int_equal(sampler_open(&config, &s, err, sizeof(err)), -EOPNOTSUPP);
	assert_null(s);
	assert_non_null(strstr(err, "(unwind_tables, Linux 5.17 and later)"));
	config.unwind = SAMPLER_UNWIND_AUTO;
	s = open_or_fail(f, &config);
	assert_int_equal(sampler_unwind_mode(s), SAMPLER_UNWIND_FP);
	config.features = &here;
	s = open_or_fail(f, &config);
	assert_int_equal(sampler_unwind_mode(s), SAMPLER_UNWIND_TABLES);
}

/*
 * The key property: draining while samples arrive loses no increment.
 * Two children spread over many stacks; a drain every 10 ms; the sum of
 * every count handed out equals what the program recorded.
 */
static void test_drain_loses_no_increment(void **state)
{
	struct fixture *f = *state;
	struct workload w = { .distinct = 40, .syscalls = true };
	struct sampler_config config;
	struct sampler_stats total;
	struct tally t = { 0 };
	struct sampler *s;
	uint32_t tgids[2];
	double end, cpu;

	tgids[0] = (uint32_t)workload_start(f, &w);
	tgids[1] = (uint32_t)workload_start(f, &w);
	sampler_config_init(&config);
	config.frequency = 999;
	config.tgids = tgids;
	config.n_tgids = 2;
	memcpy(t.want, tgids, sizeof(t.want));
	s = open_or_fail(f, &config);
	cpu = cpu_seconds((pid_t)tgids[0]) + cpu_seconds((pid_t)tgids[1]);

	end = now_s() + 1.5;
	while (now_s() < end) {
		drain_or_fail(s, &t, NULL);
		sleep_ms(10);
	}
	cpu = cpu_seconds((pid_t)tgids[0]) + cpu_seconds((pid_t)tgids[1]) - cpu;
	workload_stop(f, (pid_t)tgids[0]);
	workload_stop(f, (pid_t)tgids[1]);
	drain_or_fail(s, &t, NULL);
	sampler_totals(s, &total);
	print_stats("fast drains", &total);

	assert_true(total.drains >= 20);
	assert_samples_match(t.samples, cpu, 999);
	assert_true(t.per_tgid[0] > 0 && t.per_tgid[1] > 0);
	assert_int_equal(t.wrong_tgid, 0);
	assert_int_equal(sampler_stats_lost(&total), 0);
	assert_int_equal(t.samples, total.recorded);
}

/*
 * A window with more distinct keys than one batch read of the counts map
 * takes (64 here): every key still comes out, once. Two children each run
 * a thread per ~0.3 ms, whose stacks vary with where the tick lands: 750
 * to 900 keys in 6 s on 6.18.44, more on earlier kernels.
 */
static void test_drain_hands_out_a_large_window(void **state)
{
	struct fixture *f = *state;
	struct workload w = { .threads = true };
	struct sampler_config config;
	struct sampler_stats total;
	struct tally t = { 0 };
	uint32_t tgids[2];
	struct sampler *s;
	double cpu, start, now;

	tgids[0] = (uint32_t)workload_start(f, &w);
	tgids[1] = (uint32_t)workload_start(f, &w);
	sampler_config_init(&config);
	config.frequency = 999;
	config.tgids = tgids;
	config.n_tgids = 2;
	config.drain_chunk = 64;
	memcpy(t.want, tgids, sizeof(t.want));
	s = open_or_fail(f, &config);
	start = now_s();
	cpu = cpu_seconds((pid_t)tgids[0]) + cpu_seconds((pid_t)tgids[1]);
	/* 6 s of their CPU time: ~6000 samples, however loaded the machine is. */
	do {
		sleep_ms(250);
		now = cpu_seconds((pid_t)tgids[0]) + cpu_seconds((pid_t)tgids[1]) - cpu;
	} while (now < 6.0 && now_s() - start < 20);
	workload_stop(f, (pid_t)tgids[0]);
	workload_stop(f, (pid_t)tgids[1]);
	drain_or_fail(s, &t, NULL);
	sampler_totals(s, &total);
	print_stats("large window", &total);

	/* Several batches of 64. */
	assert_true(total.unique_stacks > 4 * 64);
	/* Each key once from the counts map, and again from the CPUs' slots. */
	assert_true(t.records >= total.unique_stacks);
	assert_int_equal(t.wrong_tgid, 0);
	assert_int_equal(sampler_stats_lost(&total), 0);
	assert_int_equal(t.samples, total.recorded);
}

/* System-wide, the profiler does not see itself unless asked to. */
static void test_self_excluded_by_default(void **state)
{
	struct fixture *f = *state;
	struct sampler_config config;
	struct sampler_stats d_without, d_with;
	struct tally without = { 0 }, with = { 0 };
	struct sampler *s_without, *s_with;
	uint64_t sink = 0;
	double end, cpu;

	sampler_config_init(&config);
	config.frequency = 999;
	s_without = open_or_fail(f, &config);
	config.include_self = true;
	s_with = open_or_fail(f, &config);

	cpu = cpu_seconds(getpid());
	end = now_s() + 0.5;
	while (now_s() < end)
		sink += burn_user(100000);
	__asm__ volatile("" : : "r"(sink));
	cpu = cpu_seconds(getpid()) - cpu;
	drain_or_fail(s_without, &without, &d_without);
	drain_or_fail(s_with, &with, &d_with);
	print_stats("without self", &d_without);

	assert_int_equal(without.self, 0);
	assert_samples_match(with.self, cpu, 999);
	/* What one sampler saw of us, the other counted as filtered. */
	assert_true(d_without.filtered >= with.self * 7 / 10);
}

/* include_idle=false: no pid-0 sample, and the idle time is counted apart. */
static void test_idle_excluded_by_default(void **state)
{
	struct fixture *f = *state;
	struct sampler_config config;
	struct sampler_stats d_without;
	struct tally without = { 0 }, with = { 0 }, discard = { 0 };
	struct sampler *s_without, *s_with;
	double lo, hi;

	sampler_config_init(&config);
	config.frequency = 999;
	s_without = open_or_fail(f, &config);
	config.include_idle = true;
	s_with = open_or_fail(f, &config);
	/*
	 * One window for both: the first sampler counted while the second
	 * was loading (the verifier checks the unwinder for a good part of a
	 * second), so what each holds so far is thrown away.
	 */
	drain_or_fail(s_without, &discard, NULL);
	drain_or_fail(s_with, &discard, NULL);
	sleep_ms(1000);
	drain_or_fail(s_without, &without, &d_without);
	drain_or_fail(s_with, &with, NULL);
	print_stats("no idle", &d_without);
	print_message("with idle: %llu idle samples\n", (unsigned long long)with.idle);

	assert_int_equal(without.idle, 0);
	/* Both samplers watched the same idle time: their idle counts agree. */
	lo = (double)with.idle * 0.7 - 20;
	hi = (double)with.idle * 1.3 + 20;
	assert_true((double)d_without.idle >= lo && (double)d_without.idle <= hi);
}

static void test_rejects_bad_config(void **state)
{
	struct sampler_config config;
	struct sampler *s = (struct sampler *)&config;
	char err[ERRLEN] = "";

	(void)state;
	sampler_config_init(&config);
	config.frequency = SAMPLER_MAX_FREQUENCY + 1;
	assert_int_equal(sampler_open(&config, &s, err, sizeof(err)), -EINVAL);
	assert_null(s);
	assert_non_null(strstr(err, "frequency"));
	assert_non_null(strstr(err, "100000"));

	sampler_config_init(&config);
	config.kernel_stacks = false;
	config.user_stacks = false;
	err[0] = '\0';
	assert_int_equal(sampler_open(&config, &s, err, sizeof(err)), -EINVAL);
	assert_true(strlen(err) > 0);

	sampler_config_init(&config);
	config.n_tgids = 3;
	assert_int_equal(sampler_open(&config, &s, err, sizeof(err)), -EINVAL);
}

/* Frequency 0 means the default, 99 Hz. */
static void test_zero_frequency_is_default(void **state)
{
	struct fixture *f = *state;
	struct workload w = { 0 };
	struct sampler_config config;
	struct tally t = { 0 };
	struct sampler *s;
	double cpu;
	pid_t child;

	child = workload_start(f, &w);
	sampler_config_init(&config);
	config.frequency = 0;
	config.tgids = (const uint32_t *)&child;
	config.n_tgids = 1;
	s = open_or_fail(f, &config);
	cpu = cpu_seconds(child);
	sleep_ms(1500);
	cpu = cpu_seconds(child) - cpu;
	workload_stop(f, child);
	drain_or_fail(s, &t, NULL);
	assert_samples_match(t.samples, cpu, SAMPLER_DEFAULT_FREQUENCY);
}

/* A full counts map loses samples, counts the loss, and recovers next drain. */
static void test_full_counts_map_recovers(void **state)
{
	struct fixture *f = *state;
	struct workload w = { .distinct = 40 };
	struct sampler_config config;
	struct sampler_stats first, second;
	struct tally t1 = { 0 }, t2 = { 0 };
	struct sampler *s;
	pid_t child;

	child = workload_start(f, &w);
	sampler_config_init(&config);
	config.frequency = 999;
	config.tgids = (const uint32_t *)&child;
	config.n_tgids = 1;
	config.max_keys = 4;
	s = open_or_fail(f, &config);
	sleep_ms(500);
	drain_or_fail(s, &t1, &first);
	sleep_ms(300);
	drain_or_fail(s, &t2, &second);
	workload_stop(f, child);
	print_stats("max_keys 4, first", &first);
	print_stats("max_keys 4, second", &second);

	assert_true(first.counts_full > 0);
	assert_true(first.unique_stacks <= 4);
	assert_true(second.recorded > 0);
	assert_true(t2.samples > 0);
	assert_true(sampler_stats_lost(&second) > 0);
}

static void test_full_stacks_map_counts_loss(void **state)
{
	struct fixture *f = *state;
	struct workload w = { .distinct = 40 };
	struct sampler_config config;
	struct sampler_stats d;
	struct tally t = { 0 };
	struct sampler *s;
	pid_t child;

	child = workload_start(f, &w);
	sampler_config_init(&config);
	config.frequency = 999;
	config.tgids = (const uint32_t *)&child;
	config.n_tgids = 1;
	config.max_stacks = 4;
	s = open_or_fail(f, &config);
	sleep_ms(500);
	drain_or_fail(s, &t, &d);
	workload_stop(f, child);
	print_stats("max_stacks 4", &d);
	assert_true(d.stacks_full > 0);
	assert_true(t.samples > 0);
	assert_int_equal(d.missing_stacks, 0);
}

/* A name filter matches the process name, and samples carry it. */
static void test_filters_by_process_name(void **state)
{
	struct fixture *f = *state;
	struct workload named = { .name = "ebprof-burner" }, other = { 0 };
	const char *comms[] = { "ebprof-burner" };
	struct sampler_config config;
	struct tally t = { 0 };
	struct sampler *s;
	double cpu;
	pid_t a;

	a = workload_start(f, &named);
	workload_start(f, &other);
	sampler_config_init(&config);
	config.frequency = 999;
	config.comms = comms;
	config.n_comms = 1;
	strcpy(t.want_comm, "ebprof-burner");
	t.want[0] = (uint32_t)a;
	/* Let the child rename itself before sampling starts. */
	sleep_ms(50);
	s = open_or_fail(f, &config);
	cpu = cpu_seconds(a);
	sleep_ms(500);
	cpu = cpu_seconds(a) - cpu;
	workload_stop(f, a);
	drain_or_fail(s, &t, NULL);
	assert_samples_match(t.samples, cpu, 999);
	assert_int_equal(t.wrong_comm, 0);
	assert_int_equal(t.wrong_tgid, 0);
}

/*
 * A process that renames itself while it keeps its CPU: the program keeps
 * each CPU's last task described, and the rename must reach that cache,
 * or the process stays filtered out under its old name.
 */
static void test_rename_reaches_the_name_filter(void **state)
{
	struct fixture *f = *state;
	struct workload w = { .name = "ebprof-before", .rename_to = "ebprof-after" };
	const char *comms[] = { "ebprof-after" };
	struct sampler_config config;
	struct tally t = { 0 };
	struct sampler *s;
	double cpu;
	pid_t a;

	a = workload_start(f, &w);
	sampler_config_init(&config);
	config.frequency = 999;
	config.comms = comms;
	config.n_comms = 1;
	strcpy(t.want_comm, "ebprof-after");
	t.want[0] = (uint32_t)a;
	sleep_ms(50);
	s = open_or_fail(f, &config);
	/* Sampled, and filtered out, under its first name for a while. */
	sleep_ms(300);
	drain_or_fail(s, &t, NULL);
	assert_int_equal(t.samples, 0);
	cpu = cpu_seconds(a);
	assert_int_equal(kill(a, SIGUSR1), 0);
	sleep_ms(500);
	cpu = cpu_seconds(a) - cpu;
	workload_stop(f, a);
	drain_or_fail(s, &t, NULL);
	assert_samples_match(t.samples, cpu, 999);
	assert_int_equal(t.wrong_comm, 0);
	assert_int_equal(t.wrong_tgid, 0);
}

/* sampler_set_tgids() moves the filter while sampling. */
static void test_set_tgids_moves_filter(void **state)
{
	struct fixture *f = *state;
	struct workload w = { 0 };
	struct sampler_config config;
	struct tally before = { 0 }, after = { 0 };
	struct sampler *s;
	uint32_t first, second;

	first = (uint32_t)workload_start(f, &w);
	second = (uint32_t)workload_start(f, &w);
	sampler_config_init(&config);
	config.frequency = 999;
	config.tgids = &first;
	config.n_tgids = 1;
	s = open_or_fail(f, &config);
	sleep_ms(300);
	before.want[0] = first;
	drain_or_fail(s, &before, NULL);
	assert_int_equal(sampler_set_tgids(s, &second, 1), 0);
	drain_or_fail(s, NULL, NULL); /* what raced the change */
	sleep_ms(300);
	after.want[0] = second;
	drain_or_fail(s, &after, NULL);

	assert_true(before.samples > 0);
	assert_int_equal(before.wrong_tgid, 0);
	assert_true(after.samples > 0);
	assert_int_equal(after.wrong_tgid, 0);
}

/*
 * A PID filter is checked first in the kernel, as an array of up to
 * EBPROF_FAST_TGIDS PIDs or, when longer, through the tgids map: a PID in
 * a later slot of the array, then in a filter too long for it, then in a
 * short one again is sampled, and the other busy process is counted as
 * filtered out, not recorded.
 */
static void test_pid_filter_array_and_map(void **state)
{
	struct fixture *f = *state;
	struct workload w = { 0 };
	struct sampler_config config;
	struct sampler_stats delta;
	struct tally t[3] = { 0 };
	uint32_t tgids[EBPROF_FAST_TGIDS + 1], other;
	struct sampler *s;

	/* PIDs above any this test machine has given out: never sampled. */
	for (int i = 0; i < EBPROF_FAST_TGIDS; i++)
		tgids[i] = 4000000 + (uint32_t)i;
	tgids[EBPROF_FAST_TGIDS] = (uint32_t)workload_start(f, &w);
	other = (uint32_t)workload_start(f, &w);
	sampler_config_init(&config);
	config.frequency = 999;
	config.tgids = &tgids[EBPROF_FAST_TGIDS - 2];
	config.n_tgids = 3; /* the workload is the third */
	s = open_or_fail(f, &config);
	for (int phase = 0; phase < 3; phase++) {
		if (phase == 1)
			assert_int_equal(sampler_set_tgids(s, tgids, EBPROF_FAST_TGIDS + 1), 0);
		if (phase == 2)
			assert_int_equal(sampler_set_tgids(s, &other, 1), 0);
		drain_or_fail(s, NULL, NULL); /* what raced the change */
		t[phase].want[0] = phase == 2 ? other : tgids[EBPROF_FAST_TGIDS];
		sleep_ms(300);
		drain_or_fail(s, &t[phase], &delta);
		assert_true(t[phase].samples > 0);
		assert_int_equal(t[phase].wrong_tgid, 0);
		assert_true(delta.filtered > 0);
	}
}

/*
 * A fixed PID filter (tgids_fixed): two PIDs, one of them gone, the other
 * a busy workload, beside another busy process. By default the events go
 * on the workload's thread (bpf/taskev.h): it is sampled and the other
 * process never reaches the program (nothing filtered). With per-CPU
 * events (EBPROF_EVENTS=cpu) the filter is built into the program as
 * constants and the other process is counted as filtered out, not
 * recorded. Such a filter cannot be moved.
 */
static void fixed_pid_filter(void **state, bool per_cpu)
{
	struct fixture *f = *state;
	struct workload w = { 0 };
	struct sampler_config config;
	struct sampler_stats delta;
	struct tally t = { 0 };
	uint32_t tgids[2], other;
	const char *why = "";
	struct sampler *s;

	tgids[0] = 4000000; /* above any PID this machine has given out */
	tgids[1] = (uint32_t)workload_start(f, &w);
	other = (uint32_t)workload_start(f, &w);
	sampler_config_init(&config);
	config.frequency = 999;
	config.tgids = tgids;
	config.n_tgids = 2;
	config.tgids_fixed = true;
	if (per_cpu)
		setenv("EBPROF_EVENTS", "cpu", 1);
	s = open_or_fail(f, &config);
	unsetenv("EBPROF_EVENTS");
	assert_int_equal(sampler_task_events(s, &why), per_cpu ? 0 : 1);
	assert_null(why);
	t.want[0] = tgids[1];
	sleep_ms(400);
	drain_or_fail(s, &t, &delta);
	assert_true(t.samples > 0);
	assert_int_equal(t.wrong_tgid, 0);
	if (per_cpu)
		assert_true(delta.filtered > 0);
	else
		assert_int_equal(delta.filtered, 0);
	assert_int_equal(sampler_set_tgids(s, &other, 1), -EINVAL);
}

static void test_fixed_pid_filter_events_on_threads(void **state)
{
	fixed_pid_filter(state, false);
}

static void test_fixed_pid_filter_filters(void **state)
{
	fixed_pid_filter(state, true);
}

/* Without a PID filter at open there is no filter to move. */
static void test_set_tgids_needs_a_pid_filter(void **state)
{
	struct fixture *f = *state;
	const char *comms[] = { "nothing-runs-me" };
	struct sampler_config config;
	uint32_t tgid = (uint32_t)getpid();
	struct sampler *s;

	sampler_config_init(&config);
	config.comms = comms;
	config.n_comms = 1;
	s = open_or_fail(f, &config);
	assert_int_equal(sampler_set_tgids(s, &tgid, 1), -EINVAL);
}

/*
 * Without privileges, opening fails with EPERM and says which capabilities
 * are missing. The child drops to nobody, which clears every capability.
 */
static void test_unprivileged_open_names_capabilities(void **state)
{
	int status;
	pid_t pid;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct sampler_config config;
		struct sampler *s = NULL;
		char err[ERRLEN] = "";
		int ret;

		if (setgid(65534) || setuid(65534))
			_exit(2);
		sampler_config_init(&config);
		ret = sampler_open(&config, &s, err, sizeof(err));
		fprintf(stderr, "unprivileged open: %d: %s\n", ret, err);
		_exit(ret == -EPERM && s == NULL && strstr(err, "CAP_BPF") &&
				      strstr(err, "CAP_PERFMON")
			      ? 0
			      : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_parses_cpu_lists(void **state)
{
	bool cpus[8];

	(void)state;
	assert_int_equal(sampler_diag_parse_cpus("0-3,5,8-9\n", cpus, 8), 5);
	assert_true(cpus[0] && cpus[3] && !cpus[4] && cpus[5] && !cpus[6] && !cpus[7]);
	assert_int_equal(sampler_diag_parse_cpus("0", cpus, 8), 1);
	assert_int_equal(sampler_diag_parse_cpus("3-1", cpus, 8), -EINVAL);
	assert_int_equal(sampler_diag_parse_cpus("0,x", cpus, 8), -EINVAL);
}

/* One event per online CPU. */
static void test_attaches_every_online_cpu(void **state)
{
	struct fixture *f = *state;
	struct sampler_config config;
	struct sampler *s;
	long online = sysconf(_SC_NPROCESSORS_ONLN);

	sampler_config_init(&config);
	s = open_or_fail(f, &config);
	assert_int_equal(sampler_cpu_count(s), online);
	sampler_free(NULL);
}

static void test_perf_event_advice_names_the_fix(void **state)
{
	char err[ERRLEN];

	struct sampler_diag_privileges none = { .paranoid = 2 };

	(void)state;
	sampler_diag_perf_event_as(-EACCES, 3, 99, &none, err, sizeof(err));
	assert_non_null(strstr(err, "CAP_PERFMON"));
	assert_non_null(strstr(err, "perf_event_paranoid"));
	assert_non_null(strstr(err, "CPU 3"));
	/* Above the kernel's own cap, the frequency is what to change. */
	sampler_diag_perf_event(-EINVAL, 0, 1000000, err, sizeof(err));
	assert_non_null(strstr(err, "perf_event_max_sample_rate"));
	assert_non_null(strstr(err, "1000000 Hz"));
	sampler_diag_load(-ENOSYS, err, sizeof(err));
	assert_non_null(strstr(err, "5.8"));
}

/*
 * Out of descriptors, libbpf's feature probes fail and the load then fails
 * with another errno: the advice used to blame the kernel ("needs Linux
 * 5.8"). It names the limit to raise, whatever the errno (issue 20, 7).
 */
static void test_out_of_descriptors_names_ulimit(void **state)
{
	char err[ERRLEN];
	pid_t pid;
	int status;

	(void)state;
	sampler_diag_load(-EMFILE, err, sizeof(err));
	assert_non_null(strstr(err, "Too many open files: raise `ulimit -n`"));
	sampler_diag_perf_event(-EMFILE, 1, 99, err, sizeof(err));
	assert_non_null(strstr(err, "raise `ulimit -n`"));
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		struct rlimit rl = { 16, 16 };

		if (setrlimit(RLIMIT_NOFILE, &rl))
			_exit(2);
		sampler_diag_load(-EINVAL, err, sizeof(err));
		_exit(strstr(err, "Too many open files: raise `ulimit -n` (now 16") &&
			       !strstr(err, "5.8") ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/*
 * A refused perf event is explained from what the process holds and the
 * paranoid level: never by a capability that is held (Debian's 6.1 at its
 * default level 3 refuses CAP_PERFMON without CAP_SYS_ADMIN).
 */
static void test_perf_event_advice_never_blames_a_held_capability(void **state)
{
	struct sampler_diag_privileges perfmon3 = { .paranoid = 3, .perfmon = true };
	struct sampler_diag_privileges none3 = { .paranoid = 3 };
	struct sampler_diag_privileges perfmon2 = { .paranoid = 2, .perfmon = true };
	struct sampler_diag_privileges root3 = { .paranoid = 3, .perfmon = true,
						 .sys_admin = true };
	char err[ERRLEN];

	(void)state;
	sampler_diag_perf_event_as(-EACCES, 0, 99, &perfmon3, err, sizeof(err));
	assert_null(strstr(err, "needs CAP_PERFMON"));
	assert_non_null(strstr(err, "although CAP_PERFMON is held"));
	assert_non_null(strstr(err, "kernel.perf_event_paranoid is 3"));
	assert_non_null(strstr(err, "CAP_SYS_ADMIN"));
	assert_non_null(strstr(err, "kernel.perf_event_paranoid=2"));

	/* Without CAP_PERFMON at 3, both fixes are needed on Debian. */
	sampler_diag_perf_event_as(-EACCES, 0, 99, &none3, err, sizeof(err));
	assert_non_null(strstr(err, "needs CAP_PERFMON"));
	assert_non_null(strstr(err, "CAP_SYS_ADMIN"));

	/* What the kernel asks is held: something else refuses. */
	sampler_diag_perf_event_as(-EACCES, 0, 99, &perfmon2, err, sizeof(err));
	assert_null(strstr(err, "needs CAP"));
	assert_non_null(strstr(err, "security module"));
	sampler_diag_perf_event_as(-EPERM, 0, 99, &root3, err, sizeof(err));
	assert_null(strstr(err, "needs CAP"));
	assert_non_null(strstr(err, "although CAP_SYS_ADMIN is held"));
}

/* --- new-process reports ---------------------------------------------------- */

static long process_cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/*
 * Burns CPU in burn_user() until the process has used ms more of CPU time
 * than at the call. Counting from the call, not from the fork, matters: a
 * child that burned while the sampler loaded would otherwise return at once.
 */
static void burn_cpu_ms(long ms)
{
	long until = process_cpu_ms() + ms;

	do
		burn_user(200000);
	while (process_cpu_ms() < until);
}

/* Field 22 of /proc/PID/stat: the start time in clock ticks after boot. */
static uint64_t proc_start_ticks(pid_t pid)
{
	char path[64], buf[1024];
	unsigned long long ticks = 0;
	const char *p;
	size_t len;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	assert_non_null(f);
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	p = strrchr(buf, ')');
	assert_non_null(p);
	for (int field = 3; field <= 22 && p; field++)
		p = strchr(p + 1, ' ');
	assert_non_null(p);
	assert_int_equal(sscanf(p, " %llu", &ticks), 1);
	return ticks;
}

/* What the process callback saw; filled on the watch thread or the test's. */
struct reports {
	pthread_mutex_t lock;
	size_t n;
	struct {
		uint32_t tgid;
		uint64_t start_time;
		char comm[SAMPLER_COMM_LEN];
		bool maps; /* /proc/PID/maps still readable and not empty */
	} r[256];
};

static int record_report(const struct sampler_process *p, void *ctx)
{
	struct reports *r = ctx;
	char path[64], line[64];
	bool maps = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/maps", p->tgid);
	f = fopen(path, "re");
	if (f) {
		maps = fgets(line, sizeof(line), f) != NULL;
		fclose(f);
	}
	pthread_mutex_lock(&r->lock);
	if (r->n < sizeof(r->r) / sizeof(r->r[0])) {
		r->r[r->n].tgid = p->tgid;
		r->r[r->n].start_time = p->start_time;
		memcpy(r->r[r->n].comm, p->comm, sizeof(p->comm));
		r->r[r->n].maps = maps;
		r->n++;
	}
	pthread_mutex_unlock(&r->lock);
	return 0;
}

/* Start times the drained samples carry, per tgid. */
struct sample_starts {
	uint32_t tgid[256];
	uint64_t start_time[256];
	size_t n;
	uint64_t samples;
};

static int record_sample_start(const struct sampler_sample *sample, void *ctx)
{
	struct sample_starts *st = ctx;
	size_t i;

	st->samples += sample->count;
	for (i = 0; i < st->n; i++)
		if (st->tgid[i] == sample->tgid)
			break;
	if (i == st->n && st->n < sizeof(st->tgid) / sizeof(st->tgid[0])) {
		st->tgid[st->n] = sample->tgid;
		st->start_time[st->n++] = sample->start_time;
	}
	return 0;
}

/*
 * Sampled hundreds of times, a process is reported once, with the start
 * time /proc shows for it (in clock ticks) and its name; its samples
 * carry the same start time.
 */
static void test_reports_a_process_once(void **state)
{
	struct fixture *f = *state;
	struct workload w = { .name = "ebprof-report" };
	const char *comms[] = { "ebprof-report" };
	struct reports r = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct sample_starts st = { 0 };
	struct sampler_config config;
	struct sampler_stats total;
	struct sampler *s;
	uint64_t ticks;
	pid_t child;
	double until;

	sampler_config_init(&config);
	config.frequency = 999;
	config.comms = comms;
	config.n_comms = 1;
	config.report_processes = true;
	s = open_or_fail(f, &config);
	assert_true(sampler_process_fd(s) >= 0);
	child = workload_start(f, &w);
	until = now_s() + 1.0;
	while (now_s() < until)
		assert_true(sampler_poll_processes(s, record_report, &r, 100) >= 0);
	assert_int_equal(sampler_drain(s, record_sample_start, &st, NULL), 0);
	sampler_totals(s, &total);
	ticks = proc_start_ticks(child);
	workload_stop(f, child);

	print_message("%zu reports for %llu samples\n", r.n, (unsigned long long)st.samples);
	assert_true(st.samples > 100);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.r[0].tgid, (uint32_t)child);
	assert_string_equal(r.r[0].comm, "ebprof-report");
	assert_true(r.r[0].maps);
	/* /proc's start time is the kernel's in USER_HZ ticks. */
	assert_int_equal(r.r[0].start_time / (1000000000ULL / (uint64_t)sysconf(_SC_CLK_TCK)),
			 ticks);
	assert_int_equal(st.n, 1);
	assert_int_equal(st.start_time[0], r.r[0].start_time);
	assert_int_equal(total.process_events, 1);
	assert_int_equal(total.process_events_lost, 0);
}

/* A sampler's config at 999 Hz for the one process *tgid, with reports. */
static void reporting_one(struct sampler_config *config, const uint32_t *tgid)
{
	sampler_config_init(config);
	config->frequency = 999;
	config->tgids = tgid;
	config->n_tgids = 1;
	config->report_processes = true;
}

/*
 * After an exec the process has new mappings: it is reported again, with
 * its new name and the same start time (same process, same PID).
 */
static void test_reports_again_after_exec(void **state)
{
	struct fixture *f = *state;
	struct reports r = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct sampler_config config;
	struct sampler *s;
	int go[2], status = 0;
	uint32_t tgid;
	bool exited = false;
	pid_t child;
	double until;

	assert_int_equal(pipe(go), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		char byte;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		prctl(PR_SET_NAME, "ebprof-preexec");
		close(go[1]);
		/* Burn before and after the sampler is open, then become sh. */
		fcntl(go[0], F_SETFL, O_NONBLOCK);
		while (read(go[0], &byte, 1) != 1)
			burn_user(200000);
		burn_cpu_ms(200);
		execl("/bin/sh", "sh", "-c", "i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done",
		      (char *)NULL);
		_exit(127);
	}
	f->pids[0] = child;
	close(go[0]);
	tgid = (uint32_t)child;
	reporting_one(&config, &tgid);
	s = open_or_fail(f, &config);
	assert_int_equal(write(go[1], "g", 1), 1);
	close(go[1]);
	until = now_s() + 10.0;
	while (now_s() < until && !exited) {
		assert_true(sampler_poll_processes(s, record_report, &r, 50) >= 0);
		exited = waitpid(child, &status, WNOHANG) == child;
	}
	if (exited)
		f->pids[0] = 0;
	sampler_poll_processes(s, record_report, &r, 0);

	assert_true(exited);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	for (size_t i = 0; i < r.n; i++)
		print_message("report %zu: %u %s\n", i, r.r[i].tgid, r.r[i].comm);
	assert_true(r.n >= 2);
	assert_string_equal(r.r[0].comm, "ebprof-preexec");
	assert_string_equal(r.r[r.n - 1].comm, "sh");
	assert_int_equal(r.r[r.n - 1].tgid, tgid);
	assert_int_equal(r.r[r.n - 1].start_time, r.r[0].start_time);
}

/*
 * The reason for reports: 30 ms processes, one after the other, are each
 * reported by the watch thread while they still run, so their mappings
 * can be read; every process that has samples was reported.
 */
static void test_watch_reports_short_lived_processes_while_alive(void **state)
{
	struct fixture *f = *state;
	const char *comms[] = { "ebprof-short" };
	struct reports r = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct sample_starts st = { 0 };
	struct sampler_config config;
	struct sampler_watch *watch;
	struct sampler *s;
	size_t alive = 0, unreported = 0;
	enum { CHILDREN = 20 };

	sampler_config_init(&config);
	config.frequency = 999;
	config.comms = comms;
	config.n_comms = 1;
	config.report_processes = true;
	s = open_or_fail(f, &config);
	assert_int_equal(sampler_watch_start(s, record_report, NULL, &r, &watch), 0);
	for (int i = 0; i < CHILDREN; i++) {
		pid_t child = fork();

		assert_true(child >= 0);
		if (child == 0) {
			prctl(PR_SET_NAME, "ebprof-short");
			burn_cpu_ms(30);
			_exit(0);
		}
		assert_int_equal(waitpid(child, NULL, 0), child);
		/* A drain now and then, as a profiler does: reports go on meanwhile. */
		if (i % 5 == 4)
			assert_int_equal(sampler_drain(s, record_sample_start, &st, NULL), 0);
	}
	assert_int_equal(sampler_drain(s, record_sample_start, &st, NULL), 0);
	sampler_watch_stop(watch);

	for (size_t i = 0; i < r.n; i++)
		alive += r.r[i].maps;
	for (size_t i = 0; i < st.n; i++) {
		bool found = false;

		for (size_t j = 0; j < r.n && !found; j++)
			found = r.r[j].tgid == st.tgid[i] && r.r[j].start_time == st.start_time[i];
		unreported += !found;
	}
	print_message("%zu of %d children sampled, %zu reported, %zu with their maps\n", st.n,
		      CHILDREN, r.n, alive);
	assert_true(st.n >= CHILDREN * 9 / 10);
	assert_int_equal(unreported, 0);
	assert_true(alive >= r.n * 9 / 10);
}

/* A copy handler that only counts: the first frame, as without a handler. */
static uint32_t count_copy(const struct sampler_copy *copy, uint64_t *ips, uint32_t cap, int *stop,
			   bool *stale, void *ctx)
{
	(void)cap;
	(void)stale;
	__atomic_add_fetch((uint64_t *)ctx, 1, __ATOMIC_RELAXED);
	ips[0] = copy->regs->r[UNW_RIP];
	*stop = UNW_END;
	return 1;
}

/*
 * A sample's copy wakes no one (the program leaves it in the ring for
 * the next report's wake-up): a flush before the drain has the watch
 * thread read the ring, so the drain hands out every copy made before
 * it. Nothing loads the child's tables here, so each of its walked
 * samples is copied; the child is gone before the flush, so the count
 * is exact.
 */
static void test_watch_flush_hands_every_copy_to_the_drain(void **state)
{
	struct fixture *f = *state;
	struct workload w = { .name = "ebprof-copied" };
	struct reports r = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct sample_starts st = { 0 };
	struct sampler_config config;
	struct sampler_stats total;
	struct sampler_watch *watch;
	struct sampler *s;
	uint64_t handled = 0;
	uint32_t tgid;
	pid_t child;

	child = workload_start(f, &w);
	tgid = (uint32_t)child;
	reporting_one(&config, &tgid);
	config.unwind = SAMPLER_UNWIND_TABLES;
	s = open_or_fail(f, &config);
	sampler_set_copy_handler(s, count_copy, &handled);
	assert_int_equal(sampler_watch_start(s, record_report, NULL, &r, &watch), 0);
	usleep(500 * 1000);
	workload_stop(f, child);
	assert_int_equal(sampler_watch_flush(watch, 5000), 0);
	assert_int_equal(sampler_drain(s, record_sample_start, &st, NULL), 0);
	sampler_totals(s, &total);
	sampler_watch_stop(watch);

	print_message("%llu copied, %llu handled, %llu handed out, %llu samples drained\n",
		      (unsigned long long)total.copied,
		      (unsigned long long)__atomic_load_n(&handled, __ATOMIC_RELAXED),
		      (unsigned long long)total.copies_recorded, (unsigned long long)st.samples);
	assert_int_equal(r.n, 1);
	assert_true(total.copied >= 50);
	assert_int_equal(__atomic_load_n(&handled, __ATOMIC_RELAXED), total.copied);
	assert_int_equal(total.copies_recorded, total.copied);
	/* A flush of no thread, as a caller without one asks, is no error. */
	assert_int_equal(sampler_watch_flush(NULL, 0), 0);
}

/* A sampler opened without reports says so rather than waiting forever. */
static void test_reports_need_report_processes(void **state)
{
	struct fixture *f = *state;
	struct reports r = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct sampler_watch *watch = (struct sampler_watch *)&r;
	struct sampler *s = open_or_fail(f, NULL);

	assert_int_equal(sampler_poll_processes(s, record_report, &r, 1000), -EINVAL);
	assert_int_equal(sampler_process_fd(s), -EINVAL);
	assert_int_equal(sampler_watch_start(s, record_report, NULL, &r, &watch), -EINVAL);
	assert_null(watch);
	sampler_watch_stop(NULL);
}

/*
 * After sampler_stop(), a drain finds every sample ended: the accounting
 * holds with no slack for samples in flight, and a later drain finds
 * nothing new. The CPUs sampled are still reported. The span sampled ends
 * at the stop, and every tick due in it ran or is counted missed (idle
 * included, every tick of every CPU is a sample).
 */
static void test_stop_leaves_no_sample_in_flight(void **state)
{
	struct fixture *f = *state;
	struct workload w = { .name = "ebprof-stop" };
	struct sampler_config config;
	struct sampler_stats total, after;
	struct tally t = { 0 };
	struct sampler *s;
	double sampled;
	int cpus;

	workload_start(f, &w);
	sampler_config_init(&config);
	config.frequency = 999;
	config.include_idle = true;
	s = open_or_fail(f, &config);
	cpus = sampler_cpu_count(s);
	sleep_ms(500);
	sampler_stop(s);
	sampled = sampler_sampled_s(s);
	drain_or_fail(s, &t, NULL);
	sampler_totals(s, &total);
	print_stats("stopped", &total);
	assert_true(total.samples > 300);
	print_message("sampled %.3f s; ticks missed %llu (measured: %d)\n", sampled,
		      (unsigned long long)total.ticks_missed, sampler_ticks_measured(s));
	assert_true(sampled >= 0.45 && sampled < 5.0);
	if (sampler_ticks_measured(s)) {
		double due = sampled * 999 * cpus, slack = 999 * cpus / 10 + cpus;
		double got = (double)(total.samples + total.ticks_missed);

		assert_true(got > due - slack && got < due + slack);
	}
	assert_int_equal(total.samples, total.recorded + total.filtered + total.idle +
						total.kstack_errors + total.ustack_errors +
						total.stack_collisions + total.stacks_full +
						total.counts_full);
	sleep_ms(200);
	drain_or_fail(s, &t, NULL);
	sampler_totals(s, &after);
	assert_int_equal(after.samples, total.samples);
	assert_int_equal(sampler_cpu_count(s), cpus);
	assert_true(sampler_sampled_s(s) == sampled);
}

/*
 * The copy ring follows the samples a second: 1 KiB each, a power of two
 * from 256 KiB to 2 MiB, and 2 MiB whenever off-CPU walks may copy too.
 */
static void test_copy_ring_follows_the_sample_rate(void **state)
{
	(void)state;
	assert_int_equal(sampler_copy_ring_bytes(99, 2, SAMPLER_MODE_CPU), 256 << 10);
	assert_int_equal(sampler_copy_ring_bytes(99, 0, SAMPLER_MODE_CPU), 256 << 10);
	assert_int_equal(sampler_copy_ring_bytes(499, 2, SAMPLER_MODE_CPU), 1 << 20);
	assert_int_equal(sampler_copy_ring_bytes(999, 1, SAMPLER_MODE_CPU), 1 << 20);
	assert_int_equal(sampler_copy_ring_bytes(999, 2, SAMPLER_MODE_CPU), 2 << 20);
	assert_int_equal(sampler_copy_ring_bytes(99, 16, SAMPLER_MODE_CPU), 2 << 20);
	assert_int_equal(sampler_copy_ring_bytes(4999, 64, SAMPLER_MODE_CPU), 2 << 20);
	assert_int_equal(sampler_copy_ring_bytes(99, 2, SAMPLER_MODE_OFFCPU), 2 << 20);
	assert_int_equal(sampler_copy_ring_bytes(99, 2, SAMPLER_MODE_WALL), 2 << 20);
}

/* The ring the kernel made is the size the sampler says, at two frequencies. */
static void test_copy_ring_made_at_its_size(void **state)
{
	struct fixture *f = *state;
	int cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	unsigned int hz[] = { 99, 999 };

	for (size_t i = 0; i < 2; i++) {
		struct bpf_map_info info = { 0 };
		uint32_t len = sizeof(info);
		struct sampler_config config;
		struct sampler *s;

		sampler_config_init(&config);
		config.frequency = hz[i];
		config.report_processes = true;
		s = open_or_fail(f, &config);
		if (sampler_unwind_mode(s) != SAMPLER_UNWIND_TABLES)
			fail_msg("no unwind tables on this kernel: the copy ring is not made");
		assert_int_equal(sampler_ring_bytes(s),
				 sampler_copy_ring_bytes(hz[i], cpus, SAMPLER_MODE_CPU));
		assert_int_equal(bpf_obj_get_info_by_fd(sampler_process_fd(s), &info, &len), 0);
		assert_int_equal(info.max_entries, sampler_ring_bytes(s));
		sampler_free(s);
		f->samplers[0] = NULL;
	}
}

#define TEST(fn) cmocka_unit_test_setup_teardown(fn, fixture_setup, fixture_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parses_cpu_lists),
		cmocka_unit_test(test_perf_event_advice_names_the_fix),
		cmocka_unit_test(test_out_of_descriptors_names_ulimit),
		TEST(test_preallocates_where_the_kernel_lacks_noprealloc),
		TEST(test_unwind_falls_back_where_the_kernel_lacks_the_helpers),
		cmocka_unit_test(test_perf_event_advice_never_blames_a_held_capability),
		cmocka_unit_test(test_rejects_bad_config),
		cmocka_unit_test(test_unprivileged_open_names_capabilities),
		TEST(test_attaches_every_online_cpu),
		TEST(test_profiles_one_process),
		TEST(test_drain_loses_no_increment),
		TEST(test_drain_hands_out_a_large_window),
		TEST(test_self_excluded_by_default),
		TEST(test_idle_excluded_by_default),
		TEST(test_zero_frequency_is_default),
		TEST(test_full_counts_map_recovers),
		TEST(test_full_stacks_map_counts_loss),
		TEST(test_filters_by_process_name),
		TEST(test_rename_reaches_the_name_filter),
		TEST(test_set_tgids_moves_filter),
		TEST(test_pid_filter_array_and_map),
		TEST(test_set_tgids_needs_a_pid_filter),
		TEST(test_fixed_pid_filter_events_on_threads),
		TEST(test_fixed_pid_filter_filters),
		TEST(test_reports_a_process_once),
		TEST(test_reports_again_after_exec),
		TEST(test_watch_reports_short_lived_processes_while_alive),
		TEST(test_watch_flush_hands_every_copy_to_the_drain),
		TEST(test_reports_need_report_processes),
		TEST(test_stop_leaves_no_sample_in_flight),
		cmocka_unit_test(test_copy_ring_follows_the_sample_rate),
		TEST(test_copy_ring_made_at_its_size),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
