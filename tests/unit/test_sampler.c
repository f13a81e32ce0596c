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
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "bpf/sampler.h"
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
};

/* Burns CPU until killed, in burn_user() mostly. */
static void workload_run(const struct workload *w)
{
	static char buf[1 << 20];
	int zero = open("/dev/zero", O_RDONLY);
	uint64_t sink = 0;

	if (w->name)
		prctl(PR_SET_NAME, w->name);
	for (unsigned int i = 0;; i++) {
		sink += w->distinct > 1 ? descend((int)(i % (unsigned int)w->distinct), 200000)
					: burn_user(200000);
		/* ~1 MiB of clear_user() next to ~1 ms of user work: a few % kernel. */
		if (w->syscalls && read(zero, buf, sizeof(buf)) < 0)
			_exit(1);
		__asm__ volatile("" : : "r"(sink));
	}
}

static pid_t workload_start(const struct workload *w)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		workload_run(w);
		_exit(0);
	}
	return pid;
}

static void workload_stop(pid_t pid)
{
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
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
	if (sample->pid == 0)
		t->idle += sample->count;
	if (sample->tgid == (uint32_t)getpid())
		t->self += sample->count;
	return 0;
}

static struct sampler *open_or_fail(const struct sampler_config *config)
{
	char err[ERRLEN];
	struct sampler *s = NULL;
	int ret = sampler_open(config, &s, err, sizeof(err));

	if (ret)
		fail_msg("sampler_open: %d: %s", ret, err);
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
		      "(collisions %llu stacks_full %llu counts_full %llu) unique %llu drains %llu\n",
		      what, (unsigned long long)st->samples, (unsigned long long)st->recorded,
		      (unsigned long long)st->filtered, (unsigned long long)st->idle,
		      (unsigned long long)sampler_stats_lost(st),
		      (unsigned long long)st->stack_collisions, (unsigned long long)st->stacks_full,
		      (unsigned long long)st->counts_full, (unsigned long long)st->unique_stacks,
		      (unsigned long long)st->drains);
}

/* A child burning one CPU for 2 s at 999 Hz: ~2000 samples, all its own. */
static void test_profiles_one_process(void **state)
{
	struct workload w = { .syscalls = true };
	struct sampler_config config;
	struct sampler_stats total;
	struct tally t = { 0 }, after = { 0 };
	struct sampler *s;
	pid_t child;

	(void)state;
	child = workload_start(&w);
	sampler_config_init(&config);
	config.frequency = 999;
	config.tgids = (const uint32_t *)&child;
	config.n_tgids = 1;
	t.want[0] = (uint32_t)child;
	s = open_or_fail(&config);
	assert_true(sampler_cpu_count(s) >= 1);

	for (int i = 0; i < 10; i++) {
		sleep_ms(200);
		drain_or_fail(s, &t, NULL);
	}
	workload_stop(child);
	after.want[0] = (uint32_t)child;
	drain_or_fail(s, &after, NULL);
	sampler_totals(s, &total);
	print_stats("one process", &total);

	assert_true(t.samples >= 999 * 2 * 7 / 10);
	assert_int_equal(t.wrong_tgid + after.wrong_tgid, 0);
	/* Before the kill: a process that is still running always has a user stack. */
	assert_int_equal(t.no_ustack, 0);
	assert_true(t.with_kstack > 0);
	assert_true(t.leaf_in_burn >= t.samples * 7 / 10);
	assert_int_equal(sampler_stats_lost(&total), 0);
	assert_int_equal(t.samples + after.samples, total.recorded);
	assert_int_equal(total.drains, 11);
	sampler_free(s);
}

/*
 * The key property: draining while samples arrive loses no increment.
 * Two children spread over many stacks; a drain every 10 ms; the sum of
 * every count handed out equals what the program recorded.
 */
static void test_drain_loses_no_increment(void **state)
{
	struct workload w = { .distinct = 40, .syscalls = true };
	struct sampler_config config;
	struct sampler_stats total;
	struct tally t = { 0 };
	struct sampler *s;
	uint32_t tgids[2];
	double end;

	(void)state;
	tgids[0] = (uint32_t)workload_start(&w);
	tgids[1] = (uint32_t)workload_start(&w);
	sampler_config_init(&config);
	config.frequency = 999;
	config.tgids = tgids;
	config.n_tgids = 2;
	memcpy(t.want, tgids, sizeof(t.want));
	s = open_or_fail(&config);

	end = now_s() + 1.5;
	while (now_s() < end) {
		drain_or_fail(s, &t, NULL);
		sleep_ms(10);
	}
	workload_stop((pid_t)tgids[0]);
	workload_stop((pid_t)tgids[1]);
	drain_or_fail(s, &t, NULL);
	sampler_totals(s, &total);
	print_stats("fast drains", &total);

	assert_true(total.drains >= 20);
	assert_true(total.recorded >= 999 * 3 / 2);
	assert_true(t.per_tgid[0] > 0 && t.per_tgid[1] > 0);
	assert_int_equal(t.wrong_tgid, 0);
	assert_int_equal(sampler_stats_lost(&total), 0);
	assert_int_equal(t.samples, total.recorded);
	sampler_free(s);
}

/* System-wide, the profiler does not see itself unless asked to. */
static void test_self_excluded_by_default(void **state)
{
	struct sampler_config config;
	struct sampler_stats d_without, d_with;
	struct tally without = { 0 }, with = { 0 };
	struct sampler *s_without, *s_with;
	uint64_t sink = 0;
	double end;

	(void)state;
	sampler_config_init(&config);
	config.frequency = 999;
	s_without = open_or_fail(&config);
	config.include_self = true;
	s_with = open_or_fail(&config);

	end = now_s() + 0.5;
	while (now_s() < end)
		sink += burn_user(100000);
	__asm__ volatile("" : : "r"(sink));
	drain_or_fail(s_without, &without, &d_without);
	drain_or_fail(s_with, &with, &d_with);
	print_stats("without self", &d_without);

	assert_int_equal(without.self, 0);
	assert_true(with.self >= 999 / 2 * 7 / 10);
	assert_true(d_without.filtered >= with.self * 7 / 10);
	sampler_free(s_without);
	sampler_free(s_with);
}

/* include_idle=false: no pid-0 sample, and the idle time is counted apart. */
static void test_idle_excluded_by_default(void **state)
{
	struct sampler_config config;
	struct sampler_stats d_without;
	struct tally without = { 0 }, with = { 0 };
	struct sampler *s_without, *s_with;
	double lo, hi;

	(void)state;
	sampler_config_init(&config);
	config.frequency = 999;
	s_without = open_or_fail(&config);
	config.include_idle = true;
	s_with = open_or_fail(&config);
	sleep_ms(1000);
	drain_or_fail(s_without, &without, &d_without);
	drain_or_fail(s_with, &with, NULL);
	print_stats("no idle", &d_without);

	assert_int_equal(without.idle, 0);
	/* Both samplers watched the same idle time: their idle counts agree. */
	lo = (double)with.idle * 0.7 - 20;
	hi = (double)with.idle * 1.3 + 20;
	assert_true((double)d_without.idle >= lo && (double)d_without.idle <= hi);
	sampler_free(s_without);
	sampler_free(s_with);
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

/* Frequency 0 means the default, 99 Hz: ~99 samples of a 1 s burn. */
static void test_zero_frequency_is_default(void **state)
{
	struct workload w = { 0 };
	struct sampler_config config;
	struct tally t = { 0 };
	struct sampler *s;
	pid_t child;

	(void)state;
	child = workload_start(&w);
	sampler_config_init(&config);
	config.frequency = 0;
	config.tgids = (const uint32_t *)&child;
	config.n_tgids = 1;
	s = open_or_fail(&config);
	sleep_ms(1000);
	drain_or_fail(s, &t, NULL);
	workload_stop(child);
	print_message("default frequency: %llu samples in 1 s\n", (unsigned long long)t.samples);
	assert_true(t.samples >= SAMPLER_DEFAULT_FREQUENCY * 7 / 10);
	assert_true(t.samples <= SAMPLER_DEFAULT_FREQUENCY * 13 / 10);
	sampler_free(s);
}

/* A full counts map loses samples, counts the loss, and recovers next drain. */
static void test_full_counts_map_recovers(void **state)
{
	struct workload w = { .distinct = 40 };
	struct sampler_config config;
	struct sampler_stats first, second;
	struct tally t1 = { 0 }, t2 = { 0 };
	struct sampler *s;
	pid_t child;

	(void)state;
	child = workload_start(&w);
	sampler_config_init(&config);
	config.frequency = 999;
	config.tgids = (const uint32_t *)&child;
	config.n_tgids = 1;
	config.max_keys = 4;
	s = open_or_fail(&config);
	sleep_ms(500);
	drain_or_fail(s, &t1, &first);
	sleep_ms(300);
	drain_or_fail(s, &t2, &second);
	workload_stop(child);
	print_stats("max_keys 4, first", &first);
	print_stats("max_keys 4, second", &second);

	assert_true(first.counts_full > 0);
	assert_true(t1.records <= 4);
	assert_true(second.recorded > 0);
	assert_true(t2.samples > 0);
	assert_true(sampler_stats_lost(&second) > 0);
	sampler_free(s);
}

static void test_full_stacks_map_counts_loss(void **state)
{
	struct workload w = { .distinct = 40 };
	struct sampler_config config;
	struct sampler_stats d;
	struct tally t = { 0 };
	struct sampler *s;
	pid_t child;

	(void)state;
	child = workload_start(&w);
	sampler_config_init(&config);
	config.frequency = 999;
	config.tgids = (const uint32_t *)&child;
	config.n_tgids = 1;
	config.max_stacks = 4;
	s = open_or_fail(&config);
	sleep_ms(500);
	drain_or_fail(s, &t, &d);
	workload_stop(child);
	print_stats("max_stacks 4", &d);
	assert_true(d.stacks_full > 0);
	assert_true(t.samples > 0);
	assert_int_equal(d.missing_stacks, 0);
	sampler_free(s);
}

/* A name filter matches the process name, and samples carry it. */
static void test_filters_by_process_name(void **state)
{
	struct workload named = { .name = "ebprof-burner" }, other = { 0 };
	const char *comms[] = { "ebprof-burner" };
	struct sampler_config config;
	struct tally t = { 0 };
	struct sampler *s;
	pid_t a, b;

	(void)state;
	a = workload_start(&named);
	b = workload_start(&other);
	sampler_config_init(&config);
	config.frequency = 999;
	config.comms = comms;
	config.n_comms = 1;
	strcpy(t.want_comm, "ebprof-burner");
	t.want[0] = (uint32_t)a;
	s = open_or_fail(&config);
	sleep_ms(500);
	drain_or_fail(s, &t, NULL);
	workload_stop(a);
	workload_stop(b);
	assert_true(t.samples >= 999 / 2 * 7 / 10);
	assert_int_equal(t.wrong_comm, 0);
	assert_int_equal(t.wrong_tgid, 0);
	sampler_free(s);
}

/* sampler_set_tgids() moves the filter while sampling. */
static void test_set_tgids_moves_filter(void **state)
{
	struct workload w = { 0 };
	struct sampler_config config;
	struct tally before = { 0 }, after = { 0 };
	struct sampler *s;
	uint32_t first, second;

	(void)state;
	first = (uint32_t)workload_start(&w);
	second = (uint32_t)workload_start(&w);
	sampler_config_init(&config);
	config.frequency = 999;
	config.tgids = &first;
	config.n_tgids = 1;
	s = open_or_fail(&config);
	sleep_ms(300);
	before.want[0] = first;
	drain_or_fail(s, &before, NULL);
	assert_int_equal(sampler_set_tgids(s, &second, 1), 0);
	drain_or_fail(s, NULL, NULL); /* what raced the change */
	sleep_ms(300);
	after.want[0] = second;
	drain_or_fail(s, &after, NULL);
	workload_stop((pid_t)first);
	workload_stop((pid_t)second);

	assert_true(before.samples > 100 && before.wrong_tgid == 0);
	assert_true(after.samples > 100 && after.wrong_tgid == 0);
	sampler_free(s);

	/* Without a PID filter at open there is no filter to move. */
	sampler_config_init(&config);
	config.comms = (const char *const[]){ "nothing-runs-me" };
	config.n_comms = 1;
	s = open_or_fail(&config);
	assert_int_equal(sampler_set_tgids(s, &second, 1), -EINVAL);
	sampler_free(s);
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
	struct sampler_config config;
	struct sampler *s;
	long online = sysconf(_SC_NPROCESSORS_ONLN);

	(void)state;
	sampler_config_init(&config);
	s = open_or_fail(&config);
	assert_int_equal(sampler_cpu_count(s), online);
	sampler_free(s);
	sampler_free(NULL);
}

static void test_perf_event_advice_names_the_fix(void **state)
{
	char err[ERRLEN];

	(void)state;
	sampler_diag_perf_event(-EACCES, 3, err, sizeof(err));
	assert_non_null(strstr(err, "CAP_PERFMON"));
	assert_non_null(strstr(err, "perf_event_paranoid"));
	assert_non_null(strstr(err, "CPU 3"));
	sampler_diag_load(-ENOSYS, err, sizeof(err));
	assert_non_null(strstr(err, "5.8"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parses_cpu_lists),
		cmocka_unit_test(test_perf_event_advice_names_the_fix),
		cmocka_unit_test(test_rejects_bad_config),
		cmocka_unit_test(test_attaches_every_online_cpu),
		cmocka_unit_test(test_profiles_one_process),
		cmocka_unit_test(test_drain_loses_no_increment),
		cmocka_unit_test(test_self_excluded_by_default),
		cmocka_unit_test(test_idle_excluded_by_default),
		cmocka_unit_test(test_zero_frequency_is_default),
		cmocka_unit_test(test_full_counts_map_recovers),
		cmocka_unit_test(test_full_stacks_map_counts_loss),
		cmocka_unit_test(test_filters_by_process_name),
		cmocka_unit_test(test_set_tgids_moves_filter),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
