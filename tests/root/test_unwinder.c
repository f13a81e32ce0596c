/*
 * unwinder and unwmaps tests, on real BPF maps shaped like the sampler's
 * (made here, no program needed): tracking a process loads one table per
 * file, shared between processes, into the maps the program reads; a copy
 * of this very test's stack, taken three calls deep, unwinds back through
 * those calls by the tables; the byte bound refuses tables and counts
 * them; a process that exits is dropped and its tables freed a drain
 * later (with no cache) or kept by the cache's policy (the last N let go,
 * a grace period) and reused by the next process, within the byte bound;
 * the mapping array's ranges are reused only after a retire.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <bpf/bpf.h>

#include "bpf/sampler.h"
#include "bpf/unwind.h"
#include "bpf/unwmaps.h"
#include "symbolizer/target.h"
#include "symbolizer/unwinder.h"

struct maps {
	struct unwmaps_maps m;
	struct unwmaps *unwmaps;
	int inner;
	__u64 gen; /* the program's unw_gen */
};

/* The maps as the program declares them; mappings_flags 0: a mapping array written by syscall. */
static int maps_setup_flags(void **state, uint32_t mappings_flags)
{
	LIBBPF_OPTS(bpf_map_create_opts, hash, .map_flags = BPF_F_NO_PREALLOC);
	LIBBPF_OPTS(bpf_map_create_opts, tmpl, .map_flags = BPF_F_INNER_MAP | BPF_F_MMAPABLE);
	LIBBPF_OPTS(bpf_map_create_opts, array, .map_flags = mappings_flags);
	struct maps *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	s->m.max_procs = 1024;
	s->m.max_mappings = 64;
	s->m.max_rules = 16384;
	s->m.max_tables = 64;
	s->m.gen = &s->gen;
	s->m.procs = bpf_map_create(BPF_MAP_TYPE_HASH, "t_procs", 4, sizeof(struct ebprof_unw_proc),
				    s->m.max_procs, &hash);
	s->m.mappings = bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_mappings", 4,
				       sizeof(struct ebprof_unw_mapping), s->m.max_mappings, &array);
	s->m.rules = bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_rules", 4,
				    sizeof(struct ebprof_unw_rule), s->m.max_rules, NULL);
	s->inner = bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_tmpl", 4, 8, 1, &tmpl);
	{
		LIBBPF_OPTS(bpf_map_create_opts, outer, .inner_map_fd = s->inner);

		s->m.tables = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "t_tables", 4, 4,
					     s->m.max_tables, &outer);
	}
	if (s->m.procs < 0 || s->m.mappings < 0 || s->m.rules < 0 || s->inner < 0 ||
	    s->m.tables < 0)
		fail_msg("creating BPF maps: %s (the unit tests run as root)", strerror(errno));
	assert_int_equal(unwmaps_new(&s->m, &s->unwmaps), 0);
	*state = s;
	return 0;
}

static int maps_setup(void **state)
{
	return maps_setup_flags(state, BPF_F_MMAPABLE);
}

static int maps_setup_syscall(void **state)
{
	return maps_setup_flags(state, 0);
}

static int maps_teardown(void **state)
{
	struct maps *s = *state;

	unwmaps_free(s->unwmaps);
	close(s->m.procs);
	close(s->m.mappings);
	close(s->m.rules);
	close(s->m.tables);
	close(s->inner);
	free(s);
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A fork of this test that waits for *release to be closed, then exits. */
static pid_t waiting_child(int *release)
{
	int fds[2];
	pid_t child;
	char c;

	assert_int_equal(pipe(fds), 0);
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		close(fds[1]);
		(void)!read(fds[0], &c, 1);
		_exit(0);
	}
	close(fds[0]);
	*release = fds[1];
	return child;
}

static void test_track_loads_tables_and_mappings(void **state)
{
	struct maps *s = *state;
	struct unwinder *u;
	struct unwinder_stats st;
	struct ebprof_unw_proc proc;
	struct ebprof_unw_mapping m;
	uint32_t tgid = (uint32_t)getpid(), slot, holding_us = 0;
	uint64_t start = now_ns(), here = (uint64_t)(uintptr_t)&test_track_loads_tables_and_mappings;
	bool with_table = false;

	assert_int_equal(unwinder_new(s->unwmaps, NULL, &u), 0);
	assert_int_equal(unwinder_track(u, tgid, start), 0);
	assert_int_equal(bpf_map_lookup_elem(s->m.procs, &tgid, &proc), 0);
	assert_int_equal(proc.start_time, start);
	assert_true(proc.n >= 3); /* this test, libc, ld.so, the vDSO... */
	for (uint32_t i = 0; i < proc.n; i++) {
		uint32_t key = proc.first + i, inner_id;

		assert_int_equal(bpf_map_lookup_elem(s->m.mappings, &key, &m), 0);
		/* Every entry of the range is one of ours, the one holding this code once. */
		assert_true(m.start < m.end);
		if (here >= m.start && here < m.end) {
			holding_us++;
			assert_int_not_equal(m.table, 0);
		}
		if (!m.table)
			continue;
		with_table = true;
		slot = m.table;
		/* The slot holds a map: the array of maps answers with its id. */
		assert_int_equal(bpf_map_lookup_elem(s->m.tables, &slot, &inner_id), 0);
	}
	assert_true(with_table);
	assert_int_equal(holding_us, 1);
	unwinder_stats(u, &st);
	assert_true(st.tables >= 3);
	assert_true(st.rows > 10000);
	assert_true(st.table_bytes < st.rows * 4 + st.tables * 4096);
	/* A second process mapping the same files (a fork) shares every table. */
	{
		struct unwinder_stats again;
		int release;
		pid_t child = waiting_child(&release);

		assert_int_equal(unwinder_track(u, (uint32_t)child, now_ns()), 0);
		close(release);
		waitpid(child, NULL, 0);
		unwinder_stats(u, &again);
		assert_int_equal(again.built, st.built);
		assert_int_equal(again.tables, st.tables);
	}
	unwinder_free(u);
	/* Freed: every process and table unloaded. */
	assert_int_not_equal(bpf_map_lookup_elem(s->m.procs, &tgid, &proc), 0);
}

/* --- a copy of our own stack, three calls deep -------------------------- */

struct captured {
	struct ebprof_regs regs;
	uint8_t stack[EBPROF_COPY_BYTES];
	uint32_t len;
	uint64_t ra_middle, ra_outer; /* return addresses into t_middle and t_outer */
};

static uint64_t stack_end(uint64_t sp)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long lo, hi;
	char line[512];
	uint64_t end = sp;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && sp >= lo && sp < hi)
			end = hi;
	fclose(f);
	return end;
}

/* The stack as it is, redzones included: not through ASan's memcpy. */
__attribute__((no_sanitize("address"))) static void raw_copy(uint8_t *dst, uint64_t src,
							      uint32_t n)
{
	const volatile uint8_t *p = (const volatile uint8_t *)src;

	for (uint32_t i = 0; i < n; i++)
		dst[i] = p[i];
}

__attribute__((noinline)) static void t_capture(struct captured *c)
{
	uint64_t rip, rsp, rbp, top;

	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(rip), "=r"(rsp), "=r"(rbp));
	memset(&c->regs, 0, sizeof(c->regs));
	c->regs.r[UNW_RIP] = rip;
	c->regs.r[UNW_RSP] = rsp;
	c->regs.r[UNW_RBP] = rbp;
	c->regs.valid = UNW_REG(UNW_RIP) | UNW_REG(UNW_RSP) | UNW_REG(UNW_RBP);
	c->regs.exact = 1;
	top = stack_end(rsp);
	c->len = top - rsp < sizeof(c->stack) ? (uint32_t)(top - rsp) : sizeof(c->stack);
	raw_copy(c->stack, rsp, c->len);
	c->ra_middle = (uint64_t)__builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void t_middle(struct captured *c)
{
	t_capture(c);
	c->ra_outer = (uint64_t)__builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void t_outer(struct captured *c)
{
	t_middle(c);
	__asm__ volatile("" ::: "memory");
}

static void test_copy_unwinds_through_our_own_calls(void **state)
{
	struct maps *s = *state;
	struct captured *c = calloc(1, sizeof(*c));
	uint64_t start = now_ns(), ips[64];
	struct unwinder_stats st;
	struct sampler_copy copy;
	struct unwinder *u;
	bool stale = false;
	pid_t child;
	uint32_t n;
	int stop;

	assert_non_null(c);
	assert_int_equal(unwinder_new(s->unwmaps, NULL, &u), 0);
	t_outer(c);
	copy = (struct sampler_copy){
		.tgid = (uint32_t)getpid(),
		.start_time = start,
		.comm = "test_unwinder",
		.regs = &c->regs,
		.stack = c->stack,
		.stack_len = c->len,
	};
	/* Not tracked yet: the copy's walk tracks the process first. */
	n = unwinder_unwind_copy(&copy, ips, 64, &stop, &stale, u);
	assert_true(n >= 4);
	assert_int_equal(ips[0], c->regs.r[UNW_RIP]);
	assert_int_equal(ips[1], c->ra_middle);
	assert_int_equal(ips[2], c->ra_outer);
	/* ...and on through cmocka and libc to _start, where the stack ends. */
	assert_int_equal(stop, UNW_END);
	assert_false(stale);
	/* A copy cut short is a read fault, with the frames before it. */
	copy.stack_len = 16;
	n = unwinder_unwind_copy(&copy, ips, 64, &stop, &stale, u);
	assert_true(n >= 1 && n < 4);
	assert_int_equal(stop, UNW_READ_FAULT);
	/* The cap stops it, counted as such. */
	copy.stack_len = c->len;
	n = unwinder_unwind_copy(&copy, ips, 2, &stop, &stale, u);
	assert_int_equal(n, 2);
	assert_int_equal(stop, UNW_DEPTH_CAP);
	unwinder_stats(u, &st);
	assert_int_equal(st.copy_gone, 0);
	/* A copy of a process gone before its maps were read: its pc, counted. */
	child = fork();
	assert_true(child >= 0);
	if (!child)
		_exit(0);
	assert_int_equal(waitpid(child, NULL, 0), child);
	copy.tgid = (uint32_t)child;
	n = unwinder_unwind_copy(&copy, ips, 64, &stop, &stale, u);
	assert_true(n >= 1);
	assert_int_equal(ips[0], c->regs.r[UNW_RIP]);
	unwinder_stats(u, &st);
	assert_int_equal(st.copy_gone, 1);
	unwinder_free(u);
	free(c);
}

/*
 * A pc in memory mapped after the process was tracked: stale when the
 * copy was taken after the read (a read finds it), not when taken before
 * (what a read finds then is what replaced it), then by frame pointer.
 */
static void test_pc_in_a_new_mapping_is_stale(void **state)
{
	struct maps *s = *state;
	struct captured *c = calloc(1, sizeof(*c));
	struct unwinder_stats st;
	struct sampler_copy copy;
	struct unwinder *u;
	uint64_t ips[64], start = now_ns();
	bool stale = false;
	void *code;
	uint32_t n;
	int stop;

	assert_non_null(c);
	assert_int_equal(unwinder_new(s->unwmaps, NULL, &u), 0);
	assert_int_equal(unwinder_track(u, (uint32_t)getpid(), start), 0);
	code = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(code != MAP_FAILED);
	t_outer(c);
	c->regs.r[UNW_RIP] = (uint64_t)code + 16;
	copy = (struct sampler_copy){ .tgid = (uint32_t)getpid(), .start_time = start,
				      .sampled_at = start, .comm = "test_unwinder",
				      .regs = &c->regs, .stack = c->stack, .stack_len = c->len };
	/* Taken before the read: not read again, walked on by frame pointer. */
	n = unwinder_unwind_copy(&copy, ips, 64, &stop, &stale, u);
	assert_false(stale);
	assert_true(n >= 2);
	unwinder_stats(u, &st);
	assert_int_equal(st.copy_unmapped, 1);
	assert_int_equal(st.copy_rereads, 0);
	/* Taken after it: stale. */
	copy.sampled_at = now_ns();
	n = unwinder_unwind_copy(&copy, ips, 64, &stop, &stale, u);
	assert_true(stale);
	assert_int_equal(n, 1);
	assert_int_equal(stop, UNW_NO_TABLE);
	unwinder_stats(u, &st);
	assert_int_equal(st.copy_rereads, 1);
	/* Tracked again, the new mapping is known (anonymous: by frame pointer). */
	assert_int_equal(unwinder_track(u, (uint32_t)getpid(), start), 0);
	stale = false;
	n = unwinder_unwind_copy(&copy, ips, 64, &stop, &stale, u);
	assert_false(stale);
	assert_true(n >= 2);

	/* A pc no read finds: after a vain read, no copy asks again for a second. */
	c->regs.r[UNW_RIP] = 0x1000;
	copy.sampled_at = now_ns();
	unwinder_unwind_copy(&copy, ips, 64, &stop, &stale, u);
	assert_true(stale);
	assert_int_equal(unwinder_track(u, (uint32_t)getpid(), start), 0);
	n = unwinder_unwind_copy(&copy, ips, 64, &stop, &stale, u); /* as the sampler retries */
	assert_true(n >= 2);
	unwinder_stats(u, &st);
	assert_int_equal(st.copy_rereads, 2);
	assert_int_equal(st.copy_unmapped, 2);
	stale = false;
	copy.sampled_at = now_ns();
	unwinder_unwind_copy(&copy, ips, 64, &stop, &stale, u);
	assert_false(stale);
	copy.sampled_at = now_ns() + 1500000000ull;
	unwinder_unwind_copy(&copy, ips, 64, &stop, &stale, u);
	assert_true(stale);
	unwinder_stats(u, &st);
	assert_int_equal(st.copy_rereads, 3);
	assert_int_equal(st.copy_unmapped, 3);
	munmap(code, 4096);
	unwinder_free(u);
	free(c);
}

static void test_memory_bound_refuses_tables(void **state)
{
	struct maps *s = *state;
	struct unwinder_config config;
	struct unwinder_stats st;
	struct unwinder *u;

	unwinder_config_init(&config);
	config.max_bytes = 8192; /* two pages: libc's table alone is ~28 */
	assert_int_equal(unwinder_new(s->unwmaps, &config, &u), 0);
	assert_int_equal(unwinder_track(u, (uint32_t)getpid(), now_ns()), 0);
	unwinder_stats(u, &st);
	assert_true(st.refused >= 1);
	assert_true(st.table_kernel_bytes <= 8192);
	unwinder_free(u);
}

static void test_exited_process_is_dropped_and_its_tables_freed(void **state)
{
	struct maps *s = *state;
	struct unwinder_config config;
	struct unwinder_stats st;
	struct ebprof_unw_proc proc;
	struct unwinder *u;
	uint32_t tgid;
	int release;
	pid_t child = waiting_child(&release);

	tgid = (uint32_t)child;
	unwinder_config_init(&config);
	config.keep_tables = 0; /* no cache: freed as soon as a drain went by unused */
	config.keep_ms = 0;
	assert_int_equal(unwinder_new(s->unwmaps, &config, &u), 0);
	assert_int_equal(unwinder_track(u, tgid, now_ns()), 0);
	assert_int_equal(bpf_map_lookup_elem(s->m.procs, &tgid, &proc), 0);
	unwinder_end_drain(u); /* alive: kept */
	assert_int_equal(bpf_map_lookup_elem(s->m.procs, &tgid, &proc), 0);
	close(release);
	assert_int_equal(waitpid(child, NULL, 0), child);
	unwinder_end_drain(u); /* gone: dropped, its tables unused from now */
	assert_int_not_equal(bpf_map_lookup_elem(s->m.procs, &tgid, &proc), 0);
	unwinder_end_drain(u); /* a whole drain without a user: freed */
	unwinder_stats(u, &st);
	assert_int_equal(st.tables, 0);
	assert_int_equal(st.table_kernel_bytes, 0);
	unwinder_free(u);
}

/* Copies /proc/self/maps to path. */
static void copy_own_maps(const char *path)
{
	FILE *in = fopen("/proc/self/maps", "re"), *out = fopen(path, "we");
	char line[4096];

	assert_non_null(in);
	assert_non_null(out);
	while (fgets(line, sizeof(line), in))
		assert_true(fputs(line, out) >= 0);
	fclose(in);
	assert_int_equal(fclose(out), 0);
}

/*
 * A process found gone when its maps were read: the copies of it still in
 * the ring ask /proc nothing more, each counted gone (here a maps file that
 * appears after the read is not read), until a report reads it anew (an
 * exec's). One that was read while it ran keeps its mappings, and the
 * program's entry, for the copies taken before it exited.
 */
static void test_a_process_found_gone_is_not_read_again(void **state)
{
	struct maps *s = *state;
	struct captured *c = calloc(1, sizeof(*c));
	char root[] = "/tmp/ebprof-unwgone-XXXXXX", path[128];
	struct unwinder_config config;
	struct ebprof_unw_proc proc;
	struct unwinder_stats st;
	struct sampler_copy copy;
	struct unwinder *u, *real;
	uint64_t start = now_ns(), ips[64];
	uint32_t tgid = 424242, child_tgid;
	bool stale = false;
	pid_t child;
	int release, stop;

	assert_non_null(c);
	assert_non_null(mkdtemp(root));
	unwinder_config_init(&config);
	config.proc_root = root;
	assert_int_equal(unwinder_new(s->unwmaps, &config, &u), 0);
	assert_int_equal(unwinder_track(u, tgid, start), -ESRCH);
	snprintf(path, sizeof(path), "%s/%u", root, tgid);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/%u/maps", root, tgid);
	copy_own_maps(path);
	t_outer(c);
	copy = (struct sampler_copy){ .tgid = tgid, .start_time = start, .comm = "gone",
				      .regs = &c->regs, .stack = c->stack, .stack_len = c->len };
	for (int i = 0; i < 3; i++) {
		assert_true(unwinder_unwind_copy(&copy, ips, 64, &stop, &stale, u) >= 1);
		assert_int_equal(ips[0], c->regs.r[UNW_RIP]);
		assert_false(stale);
	}
	unwinder_stats(u, &st);
	assert_int_equal(st.copy_gone, 3);
	/* A report of it, as after an exec, reads it: its copies walk by its maps. */
	assert_int_equal(unwinder_track(u, tgid, start), 0);
	unwinder_unwind_copy(&copy, ips, 64, &stop, &stale, u);
	unwinder_stats(u, &st);
	assert_int_equal(st.copy_gone, 3);
	unwinder_free(u);

	/* Read while it ran, then gone at a second read: kept, with the program's entry. */
	child = waiting_child(&release);
	child_tgid = (uint32_t)child;
	assert_int_equal(unwinder_new(s->unwmaps, NULL, &real), 0);
	assert_int_equal(unwinder_track(real, child_tgid, start), 0);
	assert_int_equal(bpf_map_lookup_elem(s->m.procs, &child_tgid, &proc), 0);
	close(release);
	assert_int_equal(waitpid(child, NULL, 0), child);
	assert_int_equal(unwinder_track(real, child_tgid, start), -ESRCH);
	assert_int_equal(bpf_map_lookup_elem(s->m.procs, &child_tgid, &proc), 0);
	unwinder_end_drain(real); /* the drain's end lets it go */
	assert_int_not_equal(bpf_map_lookup_elem(s->m.procs, &child_tgid, &proc), 0);
	unwinder_free(real);
	snprintf(path, sizeof(path), "rm -rf %s", root);
	assert_int_equal(system(path), 0);
	free(c);
}

/* --- builds by a builder ---------------------------------------------------- */

static int wakes;

static void count_wake(void *ctx)
{
	(void)ctx;
	wakes++;
}

/*
 * With a builder, tracking reads no file: builds are queued and the
 * builder told; the process is loaded once they are done. A build whose
 * builder stalled gives its file no table, and a copy waits for a table
 * only until its limit, then goes on by frame pointer, counted.
 */
static void test_builds_wait_for_a_builder(void **state)
{
	struct maps *s = *state;
	struct captured *c = calloc(1, sizeof(*c));
	struct unwinder_config config;
	struct unwinder_job *job, *late;
	struct unwinder_stats st;
	struct unwinder *u;
	struct ebprof_unw_proc proc;
	struct sampler_copy copy;
	struct target *gate = target_new(&(struct target_config){ .proc_root = "/proc" });
	uint32_t tgid = (uint32_t)getpid(), n;
	uint64_t start = now_ns(), ips[64], t0;
	bool stale = false;
	int stop, jobs = 0;

	assert_non_null(c);
	assert_non_null(gate);
	unwinder_config_init(&config);
	config.wait_ms = 200;
	assert_int_equal(unwinder_new(s->unwmaps, &config, &u), 0);
	unwinder_set_builder(u, count_wake, NULL);
	wakes = 0;
	assert_int_equal(unwinder_track(u, tgid, start), 0);
	assert_true(wakes >= 1);
	unwinder_stats(u, &st);
	assert_int_equal(st.built, 1); /* the vDSO's, from our own memory: no file read */
	/* Not loaded while its tables are being built: its samples are copied. */
	assert_int_not_equal(bpf_map_lookup_elem(s->m.procs, &tgid, &proc), 0);

	/* A copy now waits for them, then goes on by frame pointer, counted. */
	t_outer(c);
	copy = (struct sampler_copy){ .tgid = tgid, .start_time = start, .comm = "test_unwinder",
				      .regs = &c->regs, .stack = c->stack, .stack_len = c->len };
	t0 = now_ns();
	n = unwinder_unwind_copy(&copy, ips, 64, &stop, &stale, u);
	assert_true(n >= 1);
	assert_true(now_ns() - t0 >= 150 * 1000000ull);
	assert_true(now_ns() - t0 < 5000 * 1000000ull);
	unwinder_stats(u, &st);
	assert_int_equal(st.copy_waits, 1);
	assert_int_equal(st.wait_timeout, 1);
	/* Past the limit, the next copy does not wait again. */
	t0 = now_ns();
	unwinder_unwind_copy(&copy, ips, 64, &stop, &stale, u);
	assert_true(now_ns() - t0 < 150 * 1000000ull);

	/* The first build's builder stalls: given up, and its late result is not installed. */
	assert_int_equal(unwinder_job_take(u, &late), 0);
	unwinder_job_stalled(u, unwinder_job_ticket(late));
	unwinder_stats(u, &st);
	assert_int_equal(st.build_stalled, 1);
	/* The rest, as a builder runs them. */
	while (!unwinder_job_take(u, &job)) {
		unwinder_job_read(job, gate);
		unwinder_job_finish(u, job);
		jobs++;
	}
	assert_true(jobs >= 2);
	assert_int_equal(bpf_map_lookup_elem(s->m.procs, &tgid, &proc), 0);
	unwinder_stats(u, &st);
	n = (uint32_t)st.built;
	unwinder_job_read(late, gate); /* it wakes up at last */
	unwinder_job_finish(u, late);
	unwinder_stats(u, &st);
	assert_int_equal(st.built, n);
	/* Whole now, by the tables (the given-up file by frame pointer). */
	n = unwinder_unwind_copy(&copy, ips, 64, &stop, &stale, u);
	assert_true(n >= 4);
	assert_int_equal(ips[1], c->ra_middle);
	assert_int_equal(ips[2], c->ra_outer);
	unwinder_free(u);
	target_free(gate);
	free(c);
}

/* --- the table cache ------------------------------------------------------- */

static uint64_t fake_ms;

static uint64_t fake_now(void)
{
	return fake_ms;
}

/* Tracks a fork of this test, lets it exit, and ends two drains: its tables are unused. */
static void run_and_exit_child(struct unwinder *u)
{
	int release;
	pid_t child = waiting_child(&release);

	assert_int_equal(unwinder_track(u, (uint32_t)child, now_ns()), 0);
	close(release);
	assert_int_equal(waitpid(child, NULL, 0), child);
	unwinder_end_drain(u);
	unwinder_end_drain(u);
}

/* A binary that starts again finds its tables kept for the grace period: built once. */
static void test_cache_keeps_tables_for_the_grace(void **state)
{
	struct maps *s = *state;
	struct unwinder_config config;
	struct unwinder_stats first, st;
	struct unwinder *u;

	unwinder_config_init(&config);
	config.keep_tables = 0; /* the grace alone */
	config.keep_ms = 1000;
	config.now_ms = fake_now;
	fake_ms = 5000;
	assert_int_equal(unwinder_new(s->unwmaps, &config, &u), 0);
	run_and_exit_child(u);
	unwinder_stats(u, &first);
	assert_true(first.tables >= 3);
	assert_int_equal(first.kept, first.tables); /* nobody uses them: kept, loaded */
	assert_int_equal(first.reused, 0);
	assert_int_equal(first.expired, 0);
	/* The same binary again, 999 ms later: every table reused, none built. */
	fake_ms += 999;
	run_and_exit_child(u);
	unwinder_stats(u, &st);
	assert_int_equal(st.built, first.built);
	assert_int_equal(st.reused, first.tables);
	assert_int_equal(st.tables, first.tables);
	/* Past the grace since its last user left: freed, counted. */
	fake_ms += 999;
	unwinder_end_drain(u);
	unwinder_stats(u, &st);
	assert_int_equal(st.tables, first.tables);
	fake_ms += 1;
	unwinder_end_drain(u);
	unwinder_stats(u, &st);
	assert_int_equal(st.tables, 0);
	assert_int_equal(st.table_kernel_bytes, 0);
	assert_int_equal(st.expired, first.tables);
	assert_int_equal(st.evicted, 0);
	unwinder_free(u);
}

/* With no grace, the last keep_tables let go stay, the older ones go. */
static void test_cache_keeps_the_last_n(void **state)
{
	struct maps *s = *state;
	struct unwinder_config config;
	struct unwinder_stats st;
	struct unwinder *u;

	unwinder_config_init(&config);
	config.keep_tables = 2;
	config.keep_ms = 0;
	assert_int_equal(unwinder_new(s->unwmaps, &config, &u), 0);
	run_and_exit_child(u);
	unwinder_stats(u, &st);
	assert_true(st.built >= 3);
	assert_int_equal(st.tables, 2);
	assert_int_equal(st.kept, 2);
	assert_int_equal(st.expired + 2, st.built - st.no_cfi);
	unwinder_free(u);
}

/* Kept tables give way to a new one at the byte bound, least recently used first. */
static void test_cache_stays_within_the_bound(void **state)
{
	struct maps *s = *state;
	char *argv[] = { "sleep", "5", NULL };
	struct unwinder_config config;
	struct unwinder_stats st;
	struct unwinder *u;
	uint64_t bound;
	pid_t pid;
	char path[64], line[512];
	bool has_libc = false;

	/* What a fork of this test holds: the bound is exactly that. */
	assert_int_equal(unwinder_new(s->unwmaps, NULL, &u), 0);
	run_and_exit_child(u);
	unwinder_stats(u, &st);
	bound = st.table_kernel_bytes;
	unwinder_free(u);
	unwinder_config_init(&config);
	config.max_bytes = bound;
	assert_int_equal(unwinder_new(s->unwmaps, &config, &u), 0);
	run_and_exit_child(u);
	unwinder_stats(u, &st);
	assert_int_equal(st.table_kernel_bytes, bound);
	assert_int_equal(st.kept, st.tables);
	/* sleep maps a file none of those is (its own): room is made for it. */
	assert_int_equal(posix_spawn(&pid, "/bin/sleep", NULL, NULL, argv, NULL), 0);
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	for (int i = 0; i < 500 && !has_libc; i++) {
		FILE *f = fopen(path, "r");

		while (f && fgets(line, sizeof(line), f))
			has_libc |= strstr(line, "libc.so") != NULL;
		if (f)
			fclose(f);
		if (!has_libc)
			usleep(10000);
	}
	assert_true(has_libc);
	assert_int_equal(unwinder_track(u, (uint32_t)pid, now_ns()), 0);
	unwinder_stats(u, &st);
	assert_true(st.evicted >= 1);
	assert_int_equal(st.refused, 0);
	assert_true(st.reused >= 2); /* libc and ld.so at least, kept from the fork */
	assert_true(st.table_kernel_bytes <= bound);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	unwinder_free(u);
}

/*
 * A range a process gave up is reused only after a wait for running
 * programs that began after it was given up; every change to a process's
 * entry bumps the program's generation, so that no CPU walks by an entry
 * it looked up before.
 */
static void test_mapping_ranges_wait_for_a_retire(void **state)
{
	struct maps *s = *state;
	struct ebprof_unw_mapping m[40] = { { 0 } };
	struct ebprof_unw_proc proc;
	uint32_t a = 1000001, b = 1000002;
	uint64_t gen;
	size_t counted;

	for (int i = 0; i < 40; i++)
		m[i] = (struct ebprof_unw_mapping){ .start = (uint64_t)i << 12,
						    .end = (uint64_t)(i + 1) << 12 };
	assert_int_equal(unwmaps_process_set(s->unwmaps, a, 1, m, 40), 0);
	assert_true(s->gen > 0);
	/* A drain counts before its wait; a is dropped during the wait. */
	counted = unwmaps_retiring(s->unwmaps);
	gen = s->gen;
	unwmaps_process_drop(s->unwmaps, a);
	assert_true(s->gen > gen);
	unwmaps_retire(s->unwmaps, counted);
	/* 64 slots, 40 waiting for the next wait: 40 more do not fit yet. */
	gen = s->gen;
	assert_int_equal(unwmaps_process_set(s->unwmaps, b, 2, m, 40), -ENOSPC);
	assert_true(s->gen > gen);
	assert_int_equal(bpf_map_lookup_elem(s->m.procs, &b, &proc), 0);
	assert_int_equal(proc.n, 0); /* known, with no mappings: walked by copy or fp */
	/* The next drain's wait began after the drop. */
	unwmaps_retire(s->unwmaps, unwmaps_retiring(s->unwmaps));
	assert_int_equal(unwmaps_process_set(s->unwmaps, b, 2, m, 40), 0);
	assert_int_equal(bpf_map_lookup_elem(s->m.procs, &b, &proc), 0);
	assert_int_equal(proc.n, 40);
	unwmaps_process_drop(s->unwmaps, b);
	unwmaps_retire(s->unwmaps, unwmaps_retiring(s->unwmaps));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_track_loads_tables_and_mappings, maps_setup,
						maps_teardown),
		{ "test_track_loads_tables_and_mappings, written by syscall",
		  test_track_loads_tables_and_mappings, maps_setup_syscall, maps_teardown, NULL },
		cmocka_unit_test_setup_teardown(test_copy_unwinds_through_our_own_calls,
						maps_setup, maps_teardown),
		cmocka_unit_test_setup_teardown(test_pc_in_a_new_mapping_is_stale, maps_setup,
						maps_teardown),
		cmocka_unit_test_setup_teardown(test_memory_bound_refuses_tables, maps_setup,
						maps_teardown),
		cmocka_unit_test_setup_teardown(test_exited_process_is_dropped_and_its_tables_freed,
						maps_setup, maps_teardown),
		cmocka_unit_test_setup_teardown(test_a_process_found_gone_is_not_read_again,
						maps_setup, maps_teardown),
		cmocka_unit_test_setup_teardown(test_builds_wait_for_a_builder, maps_setup,
						maps_teardown),
		cmocka_unit_test_setup_teardown(test_cache_keeps_tables_for_the_grace, maps_setup,
						maps_teardown),
		cmocka_unit_test_setup_teardown(test_cache_keeps_the_last_n, maps_setup,
						maps_teardown),
		cmocka_unit_test_setup_teardown(test_cache_stays_within_the_bound, maps_setup,
						maps_teardown),
		cmocka_unit_test_setup_teardown(test_mapping_ranges_wait_for_a_retire, maps_setup,
						maps_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
