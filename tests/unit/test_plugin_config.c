/*
 * Tests for pconf: what an operator sees when <Plugin ebprof> is right,
 * and the error line when it is not (it must name the key and the value,
 * since a config error stops collectd and that line is all they get).
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
#include <unistd.h>

#include "plugin/config.h"
#include "tests/unit/stub_collectd.h"

enum value_kind { V_NUM, V_STR, V_BOOL };

struct option {
	const char *key;
	enum value_kind kind;
	double num;
	const char *str;
};

static oconfig_item_t *block_of(const struct option *opts, size_t n)
{
	oconfig_item_t *root = stub_ci_block("Plugin");

	stub_ci_string(root, "ebprof");
	for (size_t i = 0; i < n; i++) {
		oconfig_item_t *ci = stub_ci_child(root, opts[i].key);

		if (opts[i].kind == V_NUM)
			stub_ci_number(ci, opts[i].num);
		else if (opts[i].kind == V_STR)
			stub_ci_string(ci, opts[i].str);
		else
			stub_ci_bool(ci, opts[i].num != 0);
	}
	return root;
}

/* Parses opts into c; returns pconf_parse()'s result. */
static int parse(struct pconf *c, const struct option *opts, size_t n)
{
	oconfig_item_t *root = block_of(opts, n);
	int rc = pconf_parse(c, root);

	stub_ci_free(root);
	return rc;
}

/* Each one-option block of bad is refused, with a log line naming its key. */
static void expect_each_refused(const struct option (*bad)[1], size_t n)
{
	struct pconf c;

	for (size_t i = 0; i < n; i++) {
		stub_reset();
		pconf_init(&c);
		assert_int_equal(parse(&c, bad[i], 1), -EINVAL);
		assert_true(stub_log_has("ebprof plugin: ", bad[i][0].key, "bad value", NULL));
		pconf_free(&c);
	}
}

static int setup(void **state)
{
	(void)state;
	stub_reset();
	return 0;
}

static void test_defaults(void **state)
{
	struct pconf c;

	(void)state;
	pconf_init(&c);
	assert_int_equal(parse(&c, NULL, 0), 0);
	assert_int_equal(pconf_finish(&c, 10.0, 100000), 0);
	assert_int_equal(c.frequency, 99);
	assert_int_equal(c.top_functions, 20);
	assert_true(c.kernel_stacks);
	assert_true(c.user_stacks);
	assert_true(c.python);
	assert_false(c.include_idle);
	assert_false(c.include_self);
	assert_false(c.addresses);
	assert_false(c.inlines);
	assert_int_equal(c.n_pids, 0);
	assert_int_equal(c.n_processes, 0);
	assert_null(c.spool_dir);
	assert_int_equal(c.spool_formats, FORMAT_BIT(FORMAT_SVG) | FORMAT_BIT(FORMAT_FOLDED));
	assert_true(c.spool_interval == 60.0);
	assert_int_equal(c.keep_files, 60);
	assert_int_equal(c.keep_bytes, 0);
	assert_int_equal(c.max_stacks, 0);
	assert_int_equal(stub_log_count(LOG_ERR), 0);
	pconf_free(&c);
}

static void test_every_key(void **state)
{
	const struct option opts[] = {
		{ "Frequency", V_NUM, 999, NULL },
		{ "PID", V_NUM, 42, NULL },
		{ "PID", V_NUM, 4194304, NULL },
		{ "Process", V_STR, 0, "nginx" },
		{ "Process", V_STR, 0, "fifteen_chars__" },
		{ "KernelStacks", V_BOOL, 0, NULL },
		{ "UserStacks", V_BOOL, 1, NULL },
		{ "Python", V_BOOL, 0, NULL },
		{ "IncludeIdle", V_BOOL, 1, NULL },
		{ "IncludeSelf", V_STR, 0, "yes" },
		{ "Addresses", V_BOOL, 1, NULL },
		{ "Inline", V_BOOL, 1, NULL },
		{ "TopFunctions", V_NUM, 1000, NULL },
		{ "MaxStacks", V_NUM, 65536, NULL },
		{ "SpoolDir", V_STR, 0, "/var/spool/ebprof" },
		{ "SpoolInterval", V_NUM, 30, NULL },
		{ "SpoolFormat", V_STR, 0, "folded" },
		{ "SpoolRetention", V_NUM, 12, NULL },
	};
	struct pconf c;

	(void)state;
	pconf_init(&c);
	assert_int_equal(parse(&c, opts, sizeof(opts) / sizeof(opts[0])), 0);
	assert_int_equal(pconf_finish(&c, 10.0, 100000), 0);
	assert_int_equal(c.frequency, 999);
	assert_int_equal(c.n_pids, 2);
	assert_int_equal(c.pids[0], 42);
	assert_int_equal(c.pids[1], 4194304);
	assert_int_equal(c.n_processes, 2);
	assert_string_equal(c.processes[0], "nginx");
	assert_string_equal(c.processes[1], "fifteen_chars__");
	assert_false(c.kernel_stacks);
	assert_true(c.user_stacks);
	assert_false(c.python);
	assert_true(c.include_idle);
	assert_true(c.include_self);
	assert_true(c.addresses);
	assert_true(c.inlines);
	assert_int_equal(c.top_functions, 1000);
	assert_int_equal(c.max_stacks, 65536);
	assert_string_equal(c.spool_dir, "/var/spool/ebprof");
	assert_true(c.spool_interval == 30.0);
	assert_int_equal(c.spool_formats, FORMAT_BIT(FORMAT_FOLDED));
	assert_int_equal(c.keep_files, 12);
	assert_int_equal(c.keep_bytes, 0);
	assert_int_equal(stub_log_count(LOG_ERR), 0);
	pconf_free(&c);
}

/* The bounds an operator may move, and the stall timeout. */
static void test_bounds_and_stall_timeout(void **state)
{
	const struct option opts[] = {
		{ "StallTimeout", V_NUM, 12, NULL },
		{ "MaxSymbolTable", V_STR, 0, "512MiB" },
		{ "MaxPerfMap", V_STR, 0, "1G" },
	};
	const struct option bad[][1] = {
		{ { "StallTimeout", V_NUM, 0, NULL } },
		{ { "StallTimeout", V_NUM, 3601, NULL } },
		{ { "MaxSymbolTable", V_NUM, 1048576, NULL } }, /* a size needs its unit */
		{ { "MaxSymbolTable", V_STR, 0, "10B" } },
		{ { "MaxPerfMap", V_STR, 0, "2TiB" } },
		{ { "MaxPerfMap", V_STR, 0, "lots" } },
	};
	struct pconf c;

	(void)state;
	pconf_init(&c);
	assert_int_equal(parse(&c, NULL, 0), 0);
	assert_int_equal(c.stall_ms, 0);
	assert_int_equal(c.max_symbol_table, 0);
	assert_int_equal(c.max_perf_map, 0);
	assert_int_equal(parse(&c, opts, sizeof(opts) / sizeof(opts[0])), 0);
	assert_int_equal(c.stall_ms, 12000);
	assert_int_equal(c.max_symbol_table, 512ULL << 20);
	assert_int_equal(c.max_perf_map, 1ULL << 30);
	pconf_free(&c);
	expect_each_refused(bad, sizeof(bad) / sizeof(bad[0]));
}

/* The caches' byte bounds and MallocTrim: defaults, sizes, and refusals. */
static void test_cache_memory_and_malloc_trim(void **state)
{
	const struct option opts[] = {
		{ "SymbolCacheMemory", V_STR, 0, "128MiB" },
		{ "ProcessMemory", V_STR, 0, "8MiB" },
		{ "NameCacheMemory", V_STR, 0, "2MiB" },
		{ "SpoolWindowMemory", V_STR, 0, "1GiB" },
		{ "MallocTrim", V_BOOL, 0, NULL },
	};
	const struct option bad[][1] = {
		{ { "SymbolCacheMemory", V_NUM, 67108864, NULL } }, /* a size needs its unit */
		{ { "ProcessMemory", V_STR, 0, "32KiB" } },	     /* below 64KiB */
		{ { "NameCacheMemory", V_STR, 0, "2TiB" } },
		{ { "SpoolWindowMemory", V_STR, 0, "lots" } },
		{ { "MallocTrim", V_STR, 0, "sometimes" } },
	};
	struct pconf c;

	(void)state;
	pconf_init(&c);
	assert_int_equal(parse(&c, NULL, 0), 0);
	assert_int_equal(c.symbol_cache_bytes, 0);
	assert_int_equal(c.process_bytes, 0);
	assert_int_equal(c.name_cache_bytes, 0);
	assert_int_equal(c.window_bytes, 64ULL << 20);
	assert_true(c.malloc_trim);
	assert_int_equal(parse(&c, opts, sizeof(opts) / sizeof(opts[0])), 0);
	assert_int_equal(c.symbol_cache_bytes, 128ULL << 20);
	assert_int_equal(c.process_bytes, 8ULL << 20);
	assert_int_equal(c.name_cache_bytes, 2ULL << 20);
	assert_int_equal(c.window_bytes, 1ULL << 30);
	assert_false(c.malloc_trim);
	assert_int_equal(stub_log_count(LOG_ERR), 0);
	pconf_free(&c);
	expect_each_refused(bad, sizeof(bad) / sizeof(bad[0]));
}

/* DebuginfodURLs: off by default; a URL list turns it on and is exported. */
static void test_debuginfod_urls(void **state)
{
	const struct option opts[] = {
		{ "DebuginfodURLs", V_STR, 0, "http://127.0.0.1:8002 https://debuginfod.debian.net" },
	};
	const struct option bad[][1] = {
		{ { "DebuginfodURLs", V_STR, 0, "debuginfod.debian.net" } }, /* no scheme */
		{ { "DebuginfodURLs", V_NUM, 8002, NULL } },
		{ { "DebuginfodURLs", V_BOOL, 1, NULL } },
	};
	char *saved = getenv("DEBUGINFOD_URLS") ? strdup(getenv("DEBUGINFOD_URLS")) : NULL;
	struct pconf c;

	(void)state;
	pconf_init(&c);
	assert_int_equal(parse(&c, NULL, 0), 0);
	assert_false(c.debuginfod);
	assert_int_equal(parse(&c, opts, 1), 0);
	assert_true(c.debuginfod);
	assert_string_equal(getenv("DEBUGINFOD_URLS"), opts[0].str);
	pconf_free(&c);
	expect_each_refused(bad, sizeof(bad) / sizeof(bad[0]));
	if (saved)
		setenv("DEBUGINFOD_URLS", saved, 1);
	else
		unsetenv("DEBUGINFOD_URLS");
	free(saved);
}

static void test_keys_are_case_insensitive(void **state)
{
	const struct option opts[] = {
		{ "frequency", V_NUM, 49, NULL },
		{ "TOPFUNCTIONS", V_NUM, 5, NULL },
	};
	struct pconf c;

	(void)state;
	pconf_init(&c);
	assert_int_equal(parse(&c, opts, 2), 0);
	assert_int_equal(c.frequency, 49);
	assert_int_equal(c.top_functions, 5);
	pconf_free(&c);
}

/* Mode and the off-CPU keys: parsed, case-insensitive values, bad ones named. */
static void test_mode_and_offcpu_keys(void **state)
{
	const struct option good[] = { { "Mode", V_STR, 0, "Wall" },
				       { "OffCPUPeriod", V_NUM, 250, NULL },
				       { "OffCPUMinimum", V_NUM, 40, NULL } };
	const struct option bad_mode[] = { { "Mode", V_STR, 0, "offcpus" } };
	const struct option bad_period[] = { { "OffCPUPeriod", V_NUM, 0, NULL } };
	struct pconf c;

	(void)state;
	pconf_init(&c);
	assert_int_equal(c.mode, PCONF_MODE_CPU);
	assert_int_equal(parse(&c, good, 3), 0);
	assert_int_equal(c.mode, PCONF_MODE_WALL);
	assert_int_equal(c.offcpu_period_us, 250);
	assert_int_equal(c.offcpu_min_us, 40);
	assert_int_equal(parse(&c, bad_mode, 1), -EINVAL);
	assert_true(stub_log_has("Mode", "offcpus", "cpu, offcpu or wall", NULL));
	assert_int_equal(parse(&c, bad_period, 1), -EINVAL);
	assert_true(stub_log_has("OffCPUPeriod", "a whole number from 1 to 10000000", NULL));
	pconf_free(&c);
}

static void test_unknown_key_is_named(void **state)
{
	const struct option opts[] = { { "Frequncy", V_NUM, 99, NULL } };
	struct pconf c;

	(void)state;
	pconf_init(&c);
	assert_int_equal(parse(&c, opts, 1), -EINVAL);
	assert_true(stub_log_has("ebprof plugin: ", "unknown option", "\"Frequncy\"", NULL));
	pconf_free(&c);
}

/* Every bad value: refused, and the error line names the key and value. */
static void test_bad_values_name_key_and_value(void **state)
{
	const struct {
		struct option opt;
		const char *shown; /* how the value appears in the message */
	} cases[] = {
		{ { "Frequency", V_NUM, 0, NULL }, "Frequency 0:" },
		{ { "Frequency", V_NUM, -5, NULL }, "Frequency -5:" },
		{ { "Frequency", V_NUM, 1.5, NULL }, "Frequency 1.5:" },
		{ { "Frequency", V_NUM, 200000, NULL }, "Frequency 200000:" },
		{ { "Frequency", V_NUM, 1e12, NULL }, "Frequency 1000000000000:" },
		{ { "Frequency", V_STR, 0, "fast" }, "Frequency \"fast\":" },
		{ { "Frequency", V_BOOL, 1, NULL }, "Frequency true:" },
		{ { "PID", V_NUM, 0, NULL }, "PID 0:" },
		{ { "PID", V_NUM, -1, NULL }, "PID -1:" },
		{ { "PID", V_NUM, 4194305, NULL }, "PID 4194305:" },
		{ { "PID", V_STR, 0, "nginx" }, "PID \"nginx\":" },
		{ { "Process", V_STR, 0, "" }, "Process \"\":" },
		{ { "Process", V_STR, 0, "sixteen_chars___" }, "Process \"sixteen_chars___\":" },
		{ { "Process", V_NUM, 5, NULL }, "Process 5:" },
		{ { "KernelStacks", V_NUM, 3, NULL }, "KernelStacks 3:" },
		{ { "UserStacks", V_STR, 0, "maybe" }, "UserStacks \"maybe\":" },
		{ { "IncludeIdle", V_NUM, 1, NULL }, "IncludeIdle 1:" },
		{ { "Addresses", V_STR, 0, "sometimes" }, "Addresses \"sometimes\":" },
		{ { "Inline", V_NUM, 2, NULL }, "Inline 2:" },
		{ { "TopFunctions", V_NUM, 0, NULL }, "TopFunctions 0:" },
		{ { "TopFunctions", V_NUM, 1001, NULL }, "TopFunctions 1001:" },
		{ { "TopFunctions", V_NUM, -20, NULL }, "TopFunctions -20:" },
		{ { "MaxStacks", V_NUM, 1, NULL }, "MaxStacks 1:" },
		{ { "MaxStacks", V_NUM, 1e9, NULL }, "MaxStacks 1000000000:" },
		{ { "SpoolDir", V_STR, 0, "relative/dir" }, "SpoolDir \"relative/dir\":" },
		{ { "SpoolDir", V_NUM, 5, NULL }, "SpoolDir 5:" },
		{ { "SpoolInterval", V_NUM, 0, NULL }, "SpoolInterval 0:" },
		{ { "SpoolInterval", V_NUM, -60, NULL }, "SpoolInterval -60:" },
		{ { "SpoolInterval", V_NUM, 1e6, NULL }, "SpoolInterval 1000000:" },
		{ { "SpoolInterval", V_STR, 0, "1m" }, "SpoolInterval \"1m\":" },
		{ { "SpoolFormat", V_STR, 0, "png" }, "SpoolFormat \"png\":" },
		{ { "SpoolFormat", V_STR, 0, "svg png" }, "SpoolFormat \"svg png\":" },
		{ { "SpoolFormat", V_NUM, 1, NULL }, "SpoolFormat 1:" },
		{ { "SpoolRetention", V_NUM, 0, NULL }, "SpoolRetention 0:" },
		{ { "SpoolRetention", V_NUM, -3, NULL }, "SpoolRetention -3:" },
		{ { "SpoolRetention", V_NUM, 1e7, NULL }, "SpoolRetention 10000000:" },
		{ { "SpoolRetention", V_STR, 0, "200XB" }, "SpoolRetention \"200XB\":" },
		{ { "SpoolRetention", V_STR, 0, "0MB" }, "SpoolRetention \"0MB\":" },
		{ { "SpoolRetention", V_STR, 0, "-5MB" }, "SpoolRetention \"-5MB\":" },
		{ { "SpoolRetention", V_STR, 0, "2TiB" }, "SpoolRetention \"2TiB\":" },
		{ { "SpoolRetention", V_STR, 0, "100B" }, "SpoolRetention \"100B\":" },
		{ { "SpoolRetention", V_STR, 0, "lots" }, "SpoolRetention \"lots\":" },
		{ { "SpoolRetention", V_BOOL, 1, NULL }, "SpoolRetention true:" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pconf c;
		int rc;

		stub_reset();
		pconf_init(&c);
		rc = parse(&c, &cases[i].opt, 1);
		if (rc != -EINVAL || !stub_log_has("ebprof plugin: ", cases[i].shown, NULL))
			fail_msg("case %zu (%s): rc %d, log:\n%s", i, cases[i].shown, rc,
				 stub.log ? stub.log : "(nothing)");
		pconf_free(&c);
	}
}

static void test_an_option_with_two_values_is_refused(void **state)
{
	oconfig_item_t *root = stub_ci_block("Plugin");
	oconfig_item_t *ci = stub_ci_child(root, "TopFunctions");
	struct pconf c;

	(void)state;
	stub_ci_number(ci, 10);
	stub_ci_number(ci, 20);
	pconf_init(&c);
	assert_int_equal(pconf_parse(&c, root), -EINVAL);
	assert_true(stub_log_has("TopFunctions 10 20:", NULL));
	stub_ci_free(root);
	pconf_free(&c);
}

static void test_spool_format_repeated_or_listed(void **state)
{
	const struct option repeated[] = {
		{ "SpoolFormat", V_STR, 0, "svg" },
		{ "SpoolFormat", V_STR, 0, "folded" },
	};
	const struct option listed[] = { { "SpoolFormat", V_STR, 0, "SVG folded" } };
	const struct option one[] = { { "SpoolFormat", V_STR, 0, "svg" } };
	const struct option all[] = { { "SpoolFormat", V_STR, 0, "svg folded" },
				      { "SpoolFormat", V_STR, 0, "Speedscope,pprof" } };
	struct pconf c;

	(void)state;
	pconf_init(&c);
	assert_int_equal(parse(&c, repeated, 2), 0);
	assert_int_equal(c.spool_formats, FORMAT_BIT(FORMAT_SVG) | FORMAT_BIT(FORMAT_FOLDED));
	pconf_free(&c);
	assert_int_equal(parse(&c, listed, 1), 0);
	assert_int_equal(c.spool_formats, FORMAT_BIT(FORMAT_SVG) | FORMAT_BIT(FORMAT_FOLDED));
	pconf_free(&c);
	assert_int_equal(parse(&c, one, 1), 0);
	assert_int_equal(pconf_finish(&c, 10.0, 0), 0);
	assert_int_equal(c.spool_formats, FORMAT_BIT(FORMAT_SVG));
	pconf_free(&c);
	assert_int_equal(parse(&c, all, 2), 0);
	assert_int_equal(c.spool_formats, FORMAT_BIT(FORMAT_SVG) | FORMAT_BIT(FORMAT_FOLDED) |
						  FORMAT_BIT(FORMAT_SPEEDSCOPE) | FORMAT_BIT(FORMAT_PPROF));
	pconf_free(&c);
}

static void test_spool_format_two_unquoted_values(void **state)
{
	oconfig_item_t *root = stub_ci_block("Plugin");
	oconfig_item_t *ci = stub_ci_child(root, "SpoolFormat");
	struct pconf c;

	(void)state;
	stub_ci_string(ci, "folded");
	stub_ci_string(ci, "svg");
	pconf_init(&c);
	assert_int_equal(pconf_parse(&c, root), 0);
	assert_int_equal(c.spool_formats, FORMAT_BIT(FORMAT_SVG) | FORMAT_BIT(FORMAT_FOLDED));
	stub_ci_free(root);
	pconf_free(&c);
}

static void test_retention_files_or_bytes(void **state)
{
	const struct {
		struct option opt;
		uint64_t files, bytes;
	} cases[] = {
		{ { "SpoolRetention", V_NUM, 30, NULL }, 30, 0 },
		{ { "SpoolRetention", V_STR, 0, "30" }, 30, 0 },
		{ { "SpoolRetention", V_STR, 0, "200MB" }, 0, 200ULL << 20 },
		{ { "SpoolRetention", V_STR, 0, "200 MiB" }, 0, 200ULL << 20 },
		{ { "SpoolRetention", V_STR, 0, "1.5G" }, 0, 3ULL << 29 },
		{ { "SpoolRetention", V_STR, 0, "64k" }, 0, 64ULL << 10 },
		{ { "SpoolRetention", V_STR, 0, "4096B" }, 0, 4096 },
		{ { "SpoolRetention", V_STR, 0, "1TiB" }, 0, 1ULL << 40 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pconf c;

		pconf_init(&c);
		assert_int_equal(parse(&c, &cases[i].opt, 1), 0);
		assert_int_equal(c.keep_files, cases[i].files);
		assert_int_equal(c.keep_bytes, cases[i].bytes);
		pconf_free(&c);
	}
}

static void test_no_stacks_at_all_is_refused(void **state)
{
	const struct option opts[] = {
		{ "KernelStacks", V_BOOL, 0, NULL },
		{ "UserStacks", V_BOOL, 0, NULL },
	};
	struct pconf c;

	(void)state;
	pconf_init(&c);
	assert_int_equal(parse(&c, opts, 2), -EINVAL);
	assert_true(stub_log_has("KernelStacks", "UserStacks", NULL));
	pconf_free(&c);
}

static void test_nested_block_is_refused(void **state)
{
	oconfig_item_t *root = stub_ci_block("Plugin");
	oconfig_item_t *ci = stub_ci_child(root, "Filter");
	struct pconf c;

	(void)state;
	stub_ci_number(stub_ci_child(ci, "PID"), 1);
	pconf_init(&c);
	assert_int_equal(pconf_parse(&c, root), -EINVAL);
	assert_true(stub_log_has("\"Filter\"", NULL));
	stub_ci_free(root);
	pconf_free(&c);
}

static void test_too_many_pids(void **state)
{
	struct option opt = { "PID", V_NUM, 0, NULL };
	struct pconf c;
	int rc = 0;

	(void)state;
	pconf_init(&c);
	for (int i = 1; i <= PCONF_MAX_FILTERS + 1 && rc == 0; i++) {
		opt.num = i;
		rc = parse(&c, &opt, 1);
	}
	assert_int_equal(rc, -EINVAL);
	assert_int_equal(c.n_pids, PCONF_MAX_FILTERS);
	assert_true(stub_log_has("PID 65:", NULL));
	pconf_free(&c);
}

static void test_spool_interval_must_be_a_multiple(void **state)
{
	const struct option opts[] = { { "SpoolInterval", V_NUM, 25, NULL } };
	struct pconf c;

	(void)state;
	pconf_init(&c);
	assert_int_equal(parse(&c, opts, 1), 0);
	assert_int_equal(pconf_finish(&c, 10.0, 0), -EINVAL);
	assert_true(stub_log_has("ebprof plugin: ", "SpoolInterval 25", "10", NULL));
	pconf_free(&c);

	stub_reset();
	pconf_init(&c);
	assert_int_equal(parse(&c, opts, 1), 0);
	assert_int_equal(pconf_finish(&c, 5.0, 0), 0);
	assert_int_equal(stub_log_count(LOG_ERR), 0);
	pconf_free(&c);

	/* 0.3 s is not exact in binary; 3 s is still ten of them. */
	pconf_init(&c);
	c.spool_interval = 3;
	assert_int_equal(pconf_finish(&c, 0.3, 0), 0);
	c.spool_interval = 0.2;
	assert_int_equal(pconf_finish(&c, 0.3, 0), -EINVAL);
	pconf_free(&c);
}

static void test_default_spool_interval_follows_read_interval(void **state)
{
	struct pconf c;

	(void)state;
	pconf_init(&c);
	assert_int_equal(pconf_finish(&c, 7.0, 0), 0);
	assert_true(c.spool_interval == 63.0);
	pconf_free(&c);
	pconf_init(&c);
	assert_int_equal(pconf_finish(&c, 120.0, 0), 0);
	assert_true(c.spool_interval == 120.0);
	pconf_free(&c);
}

static void test_frequency_above_kernel_limit(void **state)
{
	const struct option opts[] = { { "Frequency", V_NUM, 5000, NULL } };
	struct pconf c;

	(void)state;
	pconf_init(&c);
	assert_int_equal(parse(&c, opts, 1), 0);
	assert_int_equal(pconf_finish(&c, 10.0, 4000), -EINVAL);
	assert_true(stub_log_has("ebprof plugin: ", "Frequency 5000", "4000",
				 "perf_event_max_sample_rate", NULL));
	/* An unreadable limit (0) skips the check. */
	assert_int_equal(pconf_finish(&c, 10.0, 0), 0);
	pconf_free(&c);
}

static void test_kernel_max_rate_file(void **state)
{
	char path[] = "/tmp/ebprof-test-rate.XXXXXX";
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "25000\n", 6), 6);
	close(fd);
	assert_int_equal(pconf_kernel_max_rate(path), 25000);
	unlink(path);
	assert_int_equal(pconf_kernel_max_rate(path), 0);
	assert_true(pconf_kernel_max_rate("/proc/sys/kernel/perf_event_max_sample_rate") > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_defaults, setup),
cmocka_unit_test_setup(test_bounds_and_stall_timeout, setup),
		cmocka_unit_test_setup(test_every_key, setup),
		cmocka_unit_test_setup(test_cache_memory_and_malloc_trim, setup),
		cmocka_unit_test_setup(test_debuginfod_urls, setup),
		cmocka_unit_test_setup(test_keys_are_case_insensitive, setup),
		cmocka_unit_test_setup(test_unknown_key_is_named, setup),
		cmocka_unit_test_setup(test_bad_values_name_key_and_value, setup),
		cmocka_unit_test_setup(test_an_option_with_two_values_is_refused, setup),
		cmocka_unit_test_setup(test_spool_format_repeated_or_listed, setup),
		cmocka_unit_test_setup(test_spool_format_two_unquoted_values, setup),
		cmocka_unit_test_setup(test_retention_files_or_bytes, setup),
		cmocka_unit_test_setup(test_no_stacks_at_all_is_refused, setup),
		cmocka_unit_test_setup(test_nested_block_is_refused, setup),
		cmocka_unit_test_setup(test_too_many_pids, setup),
		cmocka_unit_test_setup(test_spool_interval_must_be_a_multiple, setup),
		cmocka_unit_test_setup(test_default_spool_interval_follows_read_interval, setup),
		cmocka_unit_test_setup(test_frequency_above_kernel_limit, setup),
		cmocka_unit_test_setup(test_kernel_max_rate_file, setup),
		cmocka_unit_test_setup(test_mode_and_offcpu_keys, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
