/*
 * Tests for metrics: the numbers and names an operator graphs. Profiles
 * are built by hand, so every value is known exactly.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/metrics.h"
#include "render/profile.h"
#include "tests/unit/stub_collectd.h"

/* Adds "proc;a;b;c count" with every frame a user frame but the first. */
static void add_stack(struct profile *p, const char *const *names, size_t n, uint64_t count,
		      enum frame_kind leaf_kind)
{
	struct frame frames[16];

	assert_true(n <= 16);
	for (size_t i = 0; i < n; i++)
		frames[i] = (struct frame){ .name = names[i],
					    .kind = i == 0 ? FRAME_PROCESS : FRAME_USER };
	if (n > 1)
		frames[n - 1].kind = leaf_kind;
	assert_int_equal(profile_add(p, frames, n, count), 0);
}

#define ADD(p, count, kind, ...)                                                           \
	do {                                                                               \
		const char *const names_[] = { __VA_ARGS__ };                              \
		add_stack(p, names_, sizeof(names_) / sizeof(names_[0]), count, kind);     \
	} while (0)

static double gauge_of(const struct metrics_batch *b, const char *instance, const char *name)
{
	const value_list_t *vl = metrics_find(b, instance, name);

	if (!vl)
		fail_msg("no %s value for \"%s\"", instance, name);
	assert_string_equal(vl->plugin, "ebprof");
	assert_string_equal(vl->type, "gauge");
	assert_int_equal(vl->values_len, 1);
	return vl->values[0].gauge;
}

/* The 70/30 workload by hand: self and total of every function. */
/* The group fixture: a profile and a batch for each test, freed after it. */
struct metrics_test {
	struct profile *p;
	struct metrics_batch b;
};

static int metrics_setup(void **state)
{
	struct metrics_test *t = calloc(1, sizeof(*t));

	if (!t || !(t->p = profile_new())) {
		free(t);
		return -1;
	}
	metrics_batch_init(&t->b);
	*state = t;
	return 0;
}

static int metrics_teardown(void **state)
{
	struct metrics_test *t = *state;

	metrics_batch_free(&t->b);
	profile_free(t->p);
	free(t);
	return 0;
}

static void test_self_and_total_of_a_known_profile(void **state)
{
	struct metrics_test *t = *state;
	struct profile *p = t->p;
	struct metrics_batch *b = &t->b;

	ADD(p, 70, FRAME_USER, "split7030", "main", "run_split", "burn_seventy");
	ADD(p, 30, FRAME_USER, "split7030", "main", "run_split", "burn_thirty");
	ADD(p, 5, FRAME_KERNEL, "split7030", "main", "write", "ksys_write");
	/* 100 Hz over 1 s: one sample is 1 % of one CPU. */
	assert_int_equal(metrics_functions(b, p, 20, 100, 1.0), 0);
	assert_float_equal(gauge_of(b, "self", "burn_seventy"), 70.0, 1e-9);
	assert_float_equal(gauge_of(b, "self", "burn_thirty"), 30.0, 1e-9);
	assert_float_equal(gauge_of(b, "self", "ksys_write_[k]"), 5.0, 1e-9);
	assert_float_equal(gauge_of(b, "self", "main"), 0.0, 1e-9);
	assert_float_equal(gauge_of(b, "total", "main"), 105.0, 1e-9);
	assert_float_equal(gauge_of(b, "total", "run_split"), 100.0, 1e-9);
	assert_float_equal(gauge_of(b, "total", "burn_seventy"), 70.0, 1e-9);
	assert_float_equal(gauge_of(b, "total", "write"), 5.0, 1e-9);
	assert_float_equal(gauge_of(b, "self", METRICS_OTHER), 0.0, 1e-9);
	/* The process name is the root of every stack, not a function. */
	assert_null(metrics_find(b, "self", "split7030"));
	assert_null(metrics_find(b, "total", "split7030"));
	/* No [other] for total: inclusive shares do not add up. */
	assert_null(metrics_find(b, "total", METRICS_OTHER));
	/* 6 functions, self and total each, plus [other]. */
	assert_int_equal(b->n, 13);
}

/* Python functions are top functions like any other, under their kind's suffix. */
static void test_python_functions(void **state)
{
	struct metrics_test *t = *state;

	ADD(t->p, 60, FRAME_PYTHON, "python3.11", "_PyEval_EvalFrameDefault", "spin (app.py:14)");
	ADD(t->p, 40, FRAME_USER, "python3.11", "_PyEval_EvalFrameDefault", "PyObject_Malloc");
	assert_int_equal(metrics_functions(&t->b, t->p, 20, 100, 1.0), 0);
	assert_float_equal(gauge_of(&t->b, "self", "spin (app.py:14)_[p]"), 60.0, 1e-9);
	assert_float_equal(gauge_of(&t->b, "self", "PyObject_Malloc"), 40.0, 1e-9);
	assert_float_equal(gauge_of(&t->b, "total", "_PyEval_EvalFrameDefault"), 100.0, 1e-9);
}

/* Top N by self, in order, and the top N plus [other] is every sample. */
static void test_top_n_plus_other_is_every_sample(void **state)
{
	struct metrics_test *t = *state;
	struct profile *p = t->p;
	struct metrics_batch *b = &t->b;
	char name[32];
	uint64_t expected_total = 0;
	double sum = 0;

	for (int i = 1; i <= 50; i++) {
		snprintf(name, sizeof(name), "fn%02d", i);
		ADD(p, (uint64_t)i * 3, FRAME_USER, "app", "main", name);
		expected_total += (uint64_t)i * 3;
	}
	/* A stack whose every frame was lost: only the process name. */
	ADD(p, 11, FRAME_USER, "app");
	expected_total += 11;
	assert_int_equal(profile_total(p), expected_total);

	/* frequency * seconds = 100: a value is a sample count, exactly. */
	assert_int_equal(metrics_functions(b, p, 5, 50, 2.0), 0);
	for (size_t i = 0; i < b->n; i++) {
		if (strcmp(b->lists[i].plugin_instance, "self") == 0)
			sum += b->lists[i].values[0].gauge;
	}
	assert_true(sum == (double)expected_total);
	/* The five largest, largest first. */
	assert_string_equal(b->lists[0].type_instance, "fn50");
	assert_string_equal(b->lists[2].type_instance, "fn49");
	assert_string_equal(b->lists[8].type_instance, "fn46");
	assert_float_equal(gauge_of(b, "self", "fn50"), 150.0, 0);
	assert_null(metrics_find(b, "self", "fn45"));
	assert_float_equal(gauge_of(b, "self", METRICS_OTHER),
			   (double)(expected_total - 3 * (50 + 49 + 48 + 47 + 46)), 0);
	/* main is in every stack but has no self: N=5 leaves it out. */
	assert_null(metrics_find(b, "total", "main"));
	assert_int_equal(b->n, 5 * 2 + 1);
}

/* Fewer functions than N: every function, self 0 ones included. */
static void test_top_n_larger_than_profile(void **state)
{
	struct metrics_test *t = *state;
	struct profile *p = t->p;
	struct metrics_batch *b = &t->b;

	ADD(p, 4, FRAME_USER, "app", "main", "work");
	assert_int_equal(metrics_functions(b, p, 1000, 4, 1.0), 0);
	assert_float_equal(gauge_of(b, "self", "work"), 100.0, 1e-9);
	assert_float_equal(gauge_of(b, "self", "main"), 0.0, 1e-9);
	assert_float_equal(gauge_of(b, "total", "main"), 100.0, 1e-9);
	assert_float_equal(gauge_of(b, "self", METRICS_OTHER), 0.0, 1e-9);
	assert_int_equal(b->n, 5);
}

/* Percent of one CPU = samples / (frequency * seconds) * 100. */
static void test_percent_of_one_cpu(void **state)
{
	struct metrics_test *t = *state;
	struct profile *p = t->p;
	struct metrics_batch *b = &t->b;

	/* 99 Hz for 10 s: 990 samples are one CPU; 1980 are two. */
	ADD(p, 1980, FRAME_USER, "app", "main", "spin");
	ADD(p, 99, FRAME_USER, "app", "main", "tick");
	assert_int_equal(metrics_functions(b, p, 20, 99, 10.0), 0);
	assert_float_equal(gauge_of(b, "self", "spin"), 200.0, 1e-9);
	assert_float_equal(gauge_of(b, "self", "tick"), 10.0, 1e-9);
	assert_float_equal(gauge_of(b, "total", "main"), 210.0, 1e-9);
	metrics_batch_reset(b);
	/* The same samples over a read that took 20 s are half as much. */
	assert_int_equal(metrics_functions(b, p, 20, 99, 20.0), 0);
	assert_float_equal(gauge_of(b, "self", "spin"), 100.0, 1e-9);
	metrics_batch_reset(b);
	assert_int_equal(metrics_functions(b, p, 20, 0, 10.0), -EINVAL);
	assert_int_equal(metrics_functions(b, p, 20, 99, 0), -EINVAL);
}

static void test_empty_profile_has_only_other(void **state)
{
	struct metrics_test *t = *state;
	struct profile *p = t->p;
	struct metrics_batch *b = &t->b;

	assert_int_equal(metrics_functions(b, p, 20, 99, 10.0), 0);
	assert_int_equal(b->n, 1);
	assert_float_equal(gauge_of(b, "self", METRICS_OTHER), 0.0, 0);
}

static void test_names_follow_collectd_rules(void **state)
{
	char out[DATA_MAX_NAME_LEN], long_name[400];

	(void)state;
	metrics_function_name("std::vector<int>::push_back", FRAME_USER, out);
	assert_string_equal(out, "std::vector<int>::push_back");
	metrics_function_name("[/usr/lib/libc.so.6+0x1234]", FRAME_UNKNOWN, out);
	assert_string_equal(out, "[_usr_lib_libc.so.6+0x1234]");
	metrics_function_name("bad\nname\x7f", FRAME_USER, out);
	assert_string_equal(out, "bad_name_");
	metrics_function_name("do_syscall_64", FRAME_KERNEL, out);
	assert_string_equal(out, "do_syscall_64_[k]");
	metrics_function_name("LazyCompile:*fib", FRAME_JIT, out);
	assert_string_equal(out, "LazyCompile:*fib_[j]");

	/* Exactly 127 bytes stays as is; 128 is shortened to 127 with a hash. */
	memset(long_name, 'x', 127);
	long_name[127] = '\0';
	metrics_function_name(long_name, FRAME_USER, out);
	assert_string_equal(out, long_name);
	long_name[127] = 'y';
	long_name[128] = '\0';
	metrics_function_name(long_name, FRAME_USER, out);
	assert_int_equal(strlen(out), 127);
	assert_int_equal(out[118], '~');
	assert_memory_equal(out, long_name, 118);
	assert_null(strchr(out, '/'));
}

/* A long name cut inside a multi-byte character: the cut goes before it. */
static void test_long_names_cut_on_utf8_boundaries(void **state)
{
	char name[300], out[DATA_MAX_NAME_LEN];
	size_t len = 0;

	(void)state;
	memset(name, 'a', 117);
	len = 117;
	while (len < 280) {
		memcpy(name + len, "\xc3\xa9", 2); /* U+00E9, two bytes */
		len += 2;
	}
	name[len] = '\0';
	metrics_function_name(name, FRAME_USER, out);
	/* Byte 117 starts a character; 118 is in its middle: keep 117. */
	assert_int_equal(out[117], '~');
	assert_int_equal(strlen(out), 126);
	for (size_t i = 0; i < 117; i++)
		assert_int_equal(out[i], 'a');
}

/*
 * Found by tests/e2e/63_reliability_hostile_names.sh: a function named with
 * invalid UTF-8 reached write_prometheus as is, and Prometheus refuses a
 * scrape with one invalid label value, so every metric of the host was
 * lost. Each byte of an invalid sequence becomes '_'; valid characters,
 * multi-byte ones included, are kept.
 */
static void test_invalid_utf8_becomes_underscores(void **state)
{
	char out[DATA_MAX_NAME_LEN];

	(void)state;
	metrics_function_name("utf8\xff\xfe\xc3(\xe2\x82", FRAME_USER, out);
	assert_string_equal(out, "utf8___(__");
	metrics_function_name("caf\xc3\xa9_\xe2\x82\xac_\xf0\x9f\x98\x80", FRAME_USER, out);
	assert_string_equal(out, "caf\xc3\xa9_\xe2\x82\xac_\xf0\x9f\x98\x80");
	/* Overlong '/', a surrogate, a code point past U+10FFFF. */
	metrics_function_name("a\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80z", FRAME_USER, out);
	assert_string_equal(out, "a_________z");
}

/* Long C++ names that share a prefix longer than the cut stay apart. */
static void test_long_names_stay_unique(void **state)
{
	struct metrics_test *t = *state;
	struct profile *p = t->p;
	struct metrics_batch *b = &t->b;
	char prefix[400], name[300];

	memset(prefix, 0, sizeof(prefix));
	for (size_t i = 0; strlen(prefix) < 250; i++)
		strcat(prefix, "ns::Template<std::basic_string<char>>::");
	for (int i = 0; i < 500; i++) {
		snprintf(name, sizeof(name), "%.250smethod_%d(int)", prefix, i);
		ADD(p, (uint64_t)(1000 - i), FRAME_USER, "app", "main", name);
	}
	assert_int_equal(metrics_functions(b, p, 1000, 99, 10.0), 0);
	assert_int_equal(b->n, 2 * 501 + 1);
	for (size_t i = 0; i < b->n; i++) {
		const char *ti = b->lists[i].type_instance;

		assert_true(strlen(ti) <= 127);
		assert_null(strchr(ti, '/'));
		for (size_t j = i + 1; j < b->n; j++) {
			if (strcmp(b->lists[i].plugin_instance, b->lists[j].plugin_instance) == 0 &&
			    strcmp(ti, b->lists[j].type_instance) == 0)
				fail_msg("two values named %s/%s", b->lists[i].plugin_instance, ti);
		}
	}
}

/* Two names that sanitize to one identifier ("a/b" and "a_b"), and a
 * function that happens to be called "[other]": all kept apart. */
static void test_sanitized_clashes_stay_unique(void **state)
{
	struct metrics_test *t = *state;
	struct profile *p = t->p;
	struct metrics_batch *b = &t->b;
	const value_list_t *plain;

	ADD(p, 9, FRAME_USER, "app", "main", "a_b");
	ADD(p, 5, FRAME_USER, "app", "main", "a/b");
	ADD(p, 3, FRAME_UNKNOWN, "app", "main", "[other]");
	assert_int_equal(metrics_functions(b, p, 20, 100, 1.0), 0);
	/* The larger keeps the plain name. */
	plain = metrics_find(b, "self", "a_b");
	assert_non_null(plain);
	assert_float_equal(plain->values[0].gauge, 9.0, 0);
	/* [other] is the bucket: 0 here, since every leaf is in the top N. */
	assert_float_equal(gauge_of(b, "self", METRICS_OTHER), 0.0, 0);
	for (size_t i = 0; i < b->n; i++) {
		for (size_t j = i + 1; j < b->n; j++)
			assert_false(
			    strcmp(b->lists[i].plugin_instance, b->lists[j].plugin_instance) == 0 &&
			    strcmp(b->lists[i].type_instance, b->lists[j].type_instance) == 0);
	}
}

static void test_health_values(void **state)
{
	struct metrics_health h = {
		.seconds = 2.0,
		.window = { .samples = 400, .recorded = 300, .unique_stacks = 17 },
		.total = { .kstack_errors = 1, .ustack_errors = 2, .stack_collisions = 3,
			   .stacks_full = 4, .counts_full = 5, .missing_stacks = 6 },
		.frames = 200,
		.unresolved = 50,
		.lost_memory = 7,
		.drain_seconds = 0.0125,
		.cpu_user_us = 1500,
		.cpu_system_us = 2500,
	};
	const struct {
		const char *name;
		int64_t value;
	} losses[] = {
		{ "lost-kernel_stack", 1 }, { "lost-user_stack", 2 },  { "lost-collision", 3 },
		{ "lost-stacks_full", 4 },  { "lost-counts_full", 5 }, { "lost-missing_stack", 6 },
		{ "lost-memory", 7 },
	};
	struct metrics_batch b;
	const value_list_t *vl;

	(void)state;
	metrics_batch_init(&b);
	assert_int_equal(metrics_health(&b, &h), 0);
	vl = metrics_find(&b, "health", "samples");
	assert_string_equal(vl->type, "frequency");
	assert_float_equal(vl->values[0].gauge, 150.0, 1e-9);
	vl = metrics_find(&b, "health", "events");
	assert_float_equal(vl->values[0].gauge, 200.0, 1e-9);
	for (size_t i = 0; i < sizeof(losses) / sizeof(losses[0]); i++) {
		vl = metrics_find(&b, "health", losses[i].name);
		assert_non_null(vl);
		assert_string_equal(vl->type, "derive");
		assert_int_equal(vl->values[0].derive, losses[i].value);
	}
	vl = metrics_find(&b, "health", "stacks");
	assert_string_equal(vl->type, "count");
	assert_float_equal(vl->values[0].gauge, 17.0, 0);
	vl = metrics_find(&b, "health", "unresolved");
	assert_string_equal(vl->type, "percent");
	assert_float_equal(vl->values[0].gauge, 25.0, 1e-9);
	vl = metrics_find(&b, "health", "drain");
	assert_string_equal(vl->type, "duration");
	assert_float_equal(vl->values[0].gauge, 0.0125, 1e-12);
	/* Off-CPU stacks by their tables, or none: the fallback's gauge says 0. */
	assert_float_equal(gauge_of(&b, "health", "offcpu_fp_walk"), 0.0, 0);
	vl = metrics_find(&b, "health", "");
	assert_string_equal(vl->type, "ps_cputime");
	assert_int_equal(vl->values_len, 2);
	assert_int_equal(vl->values[0].derive, 1500);
	assert_int_equal(vl->values[1].derive, 2500);

	/* No frames: the unresolved ratio is 0, not NaN. And the kernel refused
	 * the off-CPU table walk: its stacks by frame pointer, the gauge says 1. */
	metrics_batch_reset(&b);
	h.frames = h.unresolved = 0;
	h.offcpu_fp = true;
	assert_int_equal(metrics_health(&b, &h), 0);
	assert_float_equal(gauge_of(&b, "health", "offcpu_fp_walk"), 1.0, 0);
	assert_float_equal(metrics_find(&b, "health", "unresolved")->values[0].gauge, 0.0, 0);
	h.seconds = 0;
	assert_int_equal(metrics_health(&b, &h), -EINVAL);
	metrics_batch_free(&b);
}

/*
 * What profiled processes' files cost shows next to the losses: each
 * cause the gate refuses, each bound hit, samples lost to a stalled
 * symbolizer and the stalls themselves, as counters since start.
 */
static void test_refusals_bounds_and_stalls(void **state)
{
	struct symbolizer_stats files = {
		.refused = { [TARGET_NOT_REGULAR] = 3, [TARGET_OUTSIDE_ROOT] = 2,
			     [TARGET_NO_FDS] = 9 },
		.elf_breaches = { .tables = 4, .symbols = 5, .sections = 6 },
		.perfmap_lines_too_long = 7,
		.perfmaps_truncated = 8,
	};
	struct metrics_health h = { .seconds = 1, .files = &files, .lost_stalled = 11,
				    .stalls = 2, .unwind_built = 12, .unwind_reused = 13,
				    .unwind_evicted = 14, .unwind_expired = 15,
				    .unwind_build_stalled = 16, .unwind_wait_timeout = 17,
				    .unwind_wait_stalled = 18, .python_native_only = 19,
				    .unwind_copy_gone = 20, .unwind_copy_rereads = 21,
				    .unwind_copy_unmapped = 22 };
	const struct {
		const char *name;
		int64_t value;
	} want[] = {
		{ "refused-not_regular", 3 }, { "refused-mismatch", 0 },
		{ "refused-outside_root", 2 }, { "refused-too_large", 0 },
		{ "refused-no_fds", 9 },      { "refused-permission", 0 },
		{ "refused-gone", 0 },	      { "refused-stalled", 0 },
		{ "refused-other", 0 },	      { "bound-symbol_table", 4 },
		{ "bound-symbols", 5 },	      { "bound-elf_headers", 6 },
		{ "bound-perfmap_line", 7 },  { "bound-perfmap_size", 8 },
		{ "stalls", 2 },	      { "lost-stalled", 11 },
		{ "unwind-built", 12 },	      { "unwind-reused", 13 },
		{ "unwind-evicted", 14 },     { "unwind-expired", 15 },
		{ "unwind-build_stalled", 16 }, { "unwind-wait_timeout", 17 },
		{ "unwind-wait_stalled", 18 }, { "python-native_only", 19 },
		{ "unwind-copy_gone", 20 },   { "unwind-copy_rereads", 21 },
		{ "unwind-copy_unmapped", 22 },
	};
	struct metrics_batch b;

	(void)state;
	metrics_batch_init(&b);
	assert_int_equal(metrics_health(&b, &h), 0);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const value_list_t *vl = metrics_find(&b, "health", want[i].name);

		if (!vl)
			fail_msg("no health metric %s", want[i].name);
		assert_string_equal(vl->type, "derive");
		assert_int_equal(vl->values[0].derive, want[i].value);
	}
	/* Before the first drain there are no stats yet: the series exist, at 0. */
	metrics_batch_reset(&b);
	h.files = NULL;
	assert_int_equal(metrics_health(&b, &h), 0);
	assert_int_equal(metrics_find(&b, "health", "refused-not_regular")->values[0].derive, 0);
	metrics_batch_free(&b);
}

/* Memory: glibc's heap and every cache's size, in bytes, as "bytes" gauges. */
static void test_heap_and_cache_sizes(void **state)
{
	struct symbolizer_stats files = {
		.elf_bytes = 1000, .process_bytes = 2000, .perfmap_bytes = 300, .names_bytes = 4000,
		.inline_bytes = 400, .inline_dwarf_bytes = 50, .python_bytes = 800,
		.kernel_bytes = 900,
	};
	struct metrics_health h = {
		.seconds = 1, .files = &files, .window_bytes = 5000, .interval_bytes = 6000,
		.unwind_user_bytes = 7000, .forks_bytes = 3500, .lost_window_bytes = 12,
		.heap = { .arena = 800000, .uordblks = 500000, .fordblks = 300000, .hblkhd = 90000 },
	};
	const struct {
		const char *name;
		double value;
	} want[] = {
		{ "heap_in_use", 590000 }, { "heap_free", 300000 },    { "heap_mapped", 890000 },
		{ "cache_symbols", 1000 }, { "cache_processes", 2000 }, { "cache_perfmaps", 300 },
		{ "cache_names", 4000 },   { "cache_window", 5000 },	{ "cache_interval", 6000 },
		{ "cache_unwind", 7000 },  { "cache_inline", 450 },	{ "cache_python", 800 },
		{ "kernel_symbols", 900 },  { "cache_forks", 3500 },
	};
	struct metrics_batch b;
	const value_list_t *vl;

	(void)state;
	metrics_batch_init(&b);
	assert_int_equal(metrics_health(&b, &h), 0);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		vl = metrics_find(&b, "health", want[i].name);
		if (!vl)
			fail_msg("no health metric %s", want[i].name);
		assert_string_equal(vl->type, "bytes");
		assert_float_equal(vl->values[0].gauge, want[i].value, 0);
	}
	vl = metrics_find(&b, "health", "lost-window");
	assert_non_null(vl);
	assert_int_equal(vl->values[0].derive, 12);
	metrics_batch_free(&b);
}

/*
 * Every type we use is in the stock types.db with as many data sources
 * as we send, so a central collectd needs no types file; and "gauge" has
 * no upper bound (a function on two CPUs reads 200).
 */
static void test_types_are_stock(void **state)
{
	struct metrics_test *t = *state;
	struct profile *p = t->p;
	struct metrics_health h = { .seconds = 1 };
	struct metrics_batch *b = &t->b;
	char line[512];
	FILE *db;

	ADD(p, 1, FRAME_USER, "app", "main");
	assert_int_equal(metrics_functions(b, p, 20, 1, 1), 0);
	assert_int_equal(metrics_health(b, &h), 0);
	for (size_t i = 0; i < b->n; i++) {
		size_t ds = 0;
		bool found = false;

		db = fopen("/usr/share/collectd/types.db", "r");
		assert_non_null(db);
		while (!found && fgets(line, sizeof(line), db)) {
			size_t len = strlen(b->lists[i].type);

			if (strncmp(line, b->lists[i].type, len) != 0 ||
			    (line[len] != ' ' && line[len] != '\t'))
				continue;
			found = true;
			for (const char *c = line; (c = strchr(c, ':')) != NULL; c++)
				ds++;
			ds /= 3; /* name:TYPE:min:max */
			if (strcmp(b->lists[i].type, "gauge") == 0)
				assert_non_null(strstr(line, "GAUGE:U:U"));
		}
		fclose(db);
		if (!found)
			fail_msg("type %s is not in types.db", b->lists[i].type);
		assert_int_equal(ds, b->lists[i].values_len);
		assert_true(strlen(b->lists[i].plugin_instance) < DATA_MAX_NAME_LEN);
	}
}

/*
 * Off-CPU time in microseconds over 2 s: a wait's self time is the frame
 * it blocked in (the state leaf is left out), its state's time is the
 * leaf's, and values are percent of one thread: 1e6 us a second is 100.
 */
static void test_offcpu_time_per_function_and_state(void **state)
{
	struct profile *p = profile_new();
	struct metrics_batch b;

	(void)state;
	ADD(p, 1500000, FRAME_OFFCPU, "app", "main", "sleeper", "hrtimer_nanosleep",
	    "[off-cpu: sleep]");
	ADD(p, 500000, FRAME_OFFCPU, "app", "main", "reader", "iomap_dio_rw",
	    "[off-cpu: io]");
	ADD(p, 100000, FRAME_OFFCPU, "app", "main", "reader", "[off-cpu: runnable]");
	metrics_batch_init(&b);
	assert_int_equal(metrics_offcpu(&b, p, 20, 2.0), 0);
	/* hrtimer_nanosleep is a user frame here (ADD makes only the leaf's kind). */
	assert_float_equal(gauge_of(&b, "offcpu_self", "hrtimer_nanosleep"), 75.0, 1e-9);
	assert_float_equal(gauge_of(&b, "offcpu_self", "iomap_dio_rw"), 25.0, 1e-9);
	assert_float_equal(gauge_of(&b, "offcpu_self", "reader"), 5.0, 1e-9);
	assert_float_equal(gauge_of(&b, "offcpu_total", "reader"), 30.0, 1e-9);
	assert_float_equal(gauge_of(&b, "offcpu_total", "main"), 105.0, 1e-9);
	assert_float_equal(gauge_of(&b, "offcpu_self", METRICS_OTHER), 0.0, 1e-9);
	assert_float_equal(gauge_of(&b, "offcpu_state", "sleep"), 75.0, 1e-9);
	assert_float_equal(gauge_of(&b, "offcpu_state", "io"), 25.0, 1e-9);
	assert_float_equal(gauge_of(&b, "offcpu_state", "runnable"), 5.0, 1e-9);
	/* The state leaves are not functions. */
	assert_null(metrics_find(&b, "offcpu_self", "[off-cpu: sleep]"));
	assert_null(metrics_find(&b, "self", "main"));
	assert_int_equal(metrics_offcpu(&b, p, 20, 0), -EINVAL);
	metrics_batch_free(&b);
	profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_self_and_total_of_a_known_profile, metrics_setup,
					    metrics_teardown),
	    cmocka_unit_test(test_refusals_bounds_and_stalls),
	    cmocka_unit_test_setup_teardown(test_top_n_plus_other_is_every_sample, metrics_setup,
					    metrics_teardown),
	    cmocka_unit_test_setup_teardown(test_top_n_larger_than_profile, metrics_setup,
					    metrics_teardown),
	    cmocka_unit_test_setup_teardown(test_percent_of_one_cpu, metrics_setup,
					    metrics_teardown),
	    cmocka_unit_test_setup_teardown(test_empty_profile_has_only_other, metrics_setup,
					    metrics_teardown),
	    cmocka_unit_test(test_names_follow_collectd_rules),
	    cmocka_unit_test(test_long_names_cut_on_utf8_boundaries),
	    cmocka_unit_test(test_invalid_utf8_becomes_underscores),
	    cmocka_unit_test_setup_teardown(test_long_names_stay_unique, metrics_setup,
					    metrics_teardown),
	    cmocka_unit_test_setup_teardown(test_sanitized_clashes_stay_unique, metrics_setup,
					    metrics_teardown),
	    cmocka_unit_test(test_health_values),
	    cmocka_unit_test_setup_teardown(test_types_are_stock, metrics_setup, metrics_teardown),
		cmocka_unit_test(test_heap_and_cache_sizes),
		cmocka_unit_test(test_offcpu_time_per_function_and_state),
	    cmocka_unit_test_setup_teardown(test_python_functions, metrics_setup, metrics_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
