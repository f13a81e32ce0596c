/*
 * folded: what flamegraph.pl users and `ebprof render` see of the folded
 * text: suffixes, one line per stack whatever the names hold, and reading
 * ours, flamegraph.pl's and perf's collapsed files.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "render/folded.h"

/* The folded text of p, NUL-terminated; the caller frees it. */
static char *write_text(const struct profile *p)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	assert_non_null(f);
	assert_int_equal(folded_write(p, f), 0);
	assert_int_equal(fclose(f), 0);
	return text;
}

static struct profile *read_text(const char *text, struct folded_read_stats *stats)
{
	struct profile *p = profile_new();
	FILE *f = fmemopen((void *)text, strlen(text), "r");

	assert_non_null(f);
	assert_int_equal(folded_read(p, f, stats), 0);
	fclose(f);
	return p;
}

static size_t count_char(const char *s, char c)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == c;
	return n;
}

static void test_writer_marks_kinds_with_flamegraph_suffixes(void **state)
{
	struct profile *p = profile_new();
	struct frame f[] = {
		{ "java", FRAME_PROCESS }, { "main", FRAME_USER },
		{ "Lfoo;::bar", FRAME_JIT }, { "helper", FRAME_INLINED },
		{ "[unknown]", FRAME_UNKNOWN }, { "do_syscall_64", FRAME_KERNEL },
	};
	char *text;

	(void)state;
	assert_int_equal(profile_add(p, f, 6, 42), 0);
	text = write_text(p);
	assert_string_equal(text,
			    "java;main;Lfoo_::bar_[j];helper_[i];[unknown];do_syscall_64_[k] 42\n");
	free(text);
	profile_free(p);
}

/* Python frames: "_[p]" out, and read back as Python frames. */
static void test_python_frames_round_trip(void **state)
{
	struct profile *p = profile_new(), *q = profile_new();
	struct frame f[] = {
		{ "python3.11", FRAME_PROCESS }, { "_PyEval_EvalFrameDefault", FRAME_USER },
		{ "<module> (app.py:24)", FRAME_PYTHON }, { "Worker.run (app.py:7)", FRAME_PYTHON },
	};
	const struct profile_node *n;
	char *text;
	FILE *in;

	(void)state;
	assert_int_equal(profile_add(p, f, 4, 3), 0);
	text = write_text(p);
	assert_string_equal(text, "python3.11;_PyEval_EvalFrameDefault;<module> (app.py:24)_[p];"
				  "Worker.run (app.py:7)_[p] 3\n");
	in = fmemopen(text, strlen(text), "r");
	assert_non_null(in);
	assert_int_equal(folded_read(q, in, NULL), 0);
	fclose(in);
	n = profile_node_child(profile_node_child(profile_node_child(profile_root(q), 0), 0), 0);
	assert_string_equal(profile_node_name(n), "<module> (app.py:24)");
	assert_int_equal(profile_node_kind(n), FRAME_PYTHON);
	free(text);
	profile_free(p);
	profile_free(q);
}

/* Only stacks that ended somewhere get a line, in the stable order. */
static void test_writer_emits_one_line_per_leaf_in_stable_order(void **state)
{
	struct profile *p = profile_new();
	struct frame b[] = { { "app", FRAME_PROCESS }, { "main", FRAME_USER }, { "b", FRAME_USER } };
	struct frame a[] = { { "app", FRAME_PROCESS }, { "main", FRAME_USER }, { "a", FRAME_USER } };
	char *text;

	(void)state;
	assert_int_equal(profile_add(p, b, 3, 1), 0);
	assert_int_equal(profile_add(p, a, 3, 2), 0);
	assert_int_equal(profile_add(p, a, 2, 3), 0);
	text = write_text(p);
	assert_string_equal(text, "app;main 3\napp;main;a 2\napp;main;b 1\n");
	free(text);
	profile_free(p);
}

static void test_hostile_name_never_splits_a_line_or_adds_frames(void **state)
{
	struct profile *p = profile_new();
	struct frame f[] = {
		{ "app", FRAME_PROCESS },
		{ "a;b\nc\rd\te\x01" "f\x7fg h", FRAME_USER },
		{ "fake 99\nevil;stack", FRAME_KERNEL },
	};
	struct folded_read_stats stats = { 0 };
	struct profile *back;
	char *text;

	(void)state;
	assert_int_equal(profile_add(p, f, 3, 5), 0);
	text = write_text(p);
	assert_string_equal(text, "app;a_b_c_d_e_f_g h;fake 99_evil_stack_[k] 5\n");
	assert_int_equal(count_char(text, '\n'), 1);
	assert_int_equal(count_char(text, ';'), 2);

	back = read_text(text, &stats);
	assert_int_equal(stats.lines, 1);
	assert_int_equal(stats.skipped, 0);
	assert_int_equal(profile_total(back), 5);
	assert_int_equal(profile_max_depth(back), 3);
	free(text);
	profile_free(back);
	profile_free(p);
}

static void test_reader_takes_flamegraph_pl_lines(void **state)
{
	struct folded_read_stats stats = { 0 };
	struct profile *p;
	const struct profile_node *n;

	(void)state;
	p = read_text("bash;main;execute_command;do_syscall_64_[k];sys_write_[k] 12\n"
		      "bash;main;execute_command 3\n"
		      "java;Interpreter;Lcom/Foo;::run_[j];inline_me_[i] 4\n",
		      &stats);
	assert_int_equal(stats.lines, 3);
	assert_int_equal(stats.skipped, 0);
	assert_int_equal(profile_total(p), 19);
	n = profile_node_child(profile_root(p), 0); /* bash */
	assert_string_equal(profile_node_name(n), "bash");
	assert_int_equal(profile_node_kind(n), FRAME_USER);
	n = profile_node_child(profile_node_child(n, 0), 0); /* execute_command */
	assert_int_equal(profile_node_self(n, 0), 3);
	n = profile_node_child(n, 0);
	assert_string_equal(profile_node_name(n), "do_syscall_64");
	assert_int_equal(profile_node_kind(n), FRAME_KERNEL);

	n = profile_node_child(profile_root(p), 1); /* java */
	n = profile_node_child(profile_node_child(n, 0), 0);
	assert_string_equal(profile_node_name(n), "Lcom/Foo");
	n = profile_node_child(n, 0);
	assert_string_equal(profile_node_name(n), "::run");
	assert_int_equal(profile_node_kind(n), FRAME_JIT);
	n = profile_node_child(n, 0);
	assert_string_equal(profile_node_name(n), "inline_me");
	assert_int_equal(profile_node_kind(n), FRAME_INLINED);
	profile_free(p);
}

/* perf script | stackcollapse-perf.pl keeps C++ signatures with spaces. */
static void test_reader_keeps_spaces_inside_frames(void **state)
{
	struct folded_read_stats stats = { 0 };
	struct profile *p;
	const struct profile_node *n;

	(void)state;
	p = read_text("prog;std::vector<int, std::allocator<int> >::push_back(int const&);"
		      "operator new(unsigned long) 7\r\n",
		      &stats);
	assert_int_equal(stats.lines, 1);
	n = profile_node_child(profile_node_child(profile_root(p), 0), 0);
	assert_string_equal(profile_node_name(n),
			    "std::vector<int, std::allocator<int> >::push_back(int const&)");
	n = profile_node_child(n, 0);
	assert_string_equal(profile_node_name(n), "operator new(unsigned long)");
	assert_int_equal(profile_node_self(n, 0), 7);
	profile_free(p);
}

static void test_reader_counts_malformed_lines_and_goes_on(void **state)
{
	struct folded_read_stats stats = { 0 };
	struct profile *p;

	(void)state;
	p = read_text("a;b 1\n"
		      "\n"
		      "   \n"
		      "no count here\n" /* line 4: the first bad one */
		      "a;b -5\n"
		      "a;b 1.5\n"
		      "a;b 12abc\n"
		      "a;b 99999999999999999999999\n"
		      " 5\n"
		      "42\n"
		      "a;c 2\n",
		      &stats);
	assert_int_equal(stats.lines, 2);
	assert_int_equal(stats.skipped, 7);
	assert_int_equal(stats.first_bad_line, 4);
	assert_int_equal(profile_total(p), 3);
	profile_free(p);

	/* stats may be NULL. */
	p = read_text("garbage\nx 1\n", NULL);
	assert_int_equal(profile_total(p), 1);
	profile_free(p);
}

/*
 * Fuzzer finding (fuzz_folded): counts that add up past 2^64 wrapped the
 * totals, so a stack's samples silently dropped out of the graph and the
 * folded output. Its first fix skipped the line that would wrap, which
 * made the result depend on the order of the lines: after one huge count
 * every later valid line was malformed (issue 20, finding 6). A count is
 * now judged by itself: above FOLDED_MAX_COUNT (2^53) it is malformed,
 * wherever it comes, and the valid lines are all kept.
 */
static void test_reader_refuses_huge_counts_whatever_the_order(void **state)
{
	const char *orders[] = {
		"a;b 18446744073709551615\na 1\nc 0\n",
		"a 1\nc 0\na;b 18446744073709551615\n",
	};
	struct folded_read_stats stats;
	struct profile *p;
	char *text;

	(void)state;
	for (int i = 0; i < 2; i++) {
		memset(&stats, 0, sizeof(stats));
		p = read_text(orders[i], &stats);
		assert_int_equal(stats.lines, 2);
		assert_int_equal(stats.skipped, 1);
		assert_int_equal(stats.first_bad_line, i ? 3 : 1);
		assert_true(profile_total(p) == 1);
		text = write_text(p);
		assert_string_equal(text, "a 1\n");
		free(text);
		profile_free(p);
	}
	/* 2^53 itself is a count; one more is not. */
	memset(&stats, 0, sizeof(stats));
	p = read_text("a 9007199254740992\nb 9007199254740993\n", &stats);
	assert_int_equal(stats.lines, 1);
	assert_true(profile_total(p) == FOLDED_MAX_COUNT);
	profile_free(p);
}

/* Counts that are each fine but add up past 2^53: the read fails as a whole, in any order. */
static void test_reader_refuses_totals_past_the_bound(void **state)
{
	const char *text = "a 9007199254740992\nb 1\n";
	struct profile *p = profile_new();
	FILE *f = fmemopen((void *)text, strlen(text), "r");

	(void)state;
	assert_int_equal(folded_read(p, f, NULL), -EOVERFLOW);
	fclose(f);
	profile_free(p);
	text = "b 1\na 9007199254740992\n";
	p = profile_new();
	f = fmemopen((void *)text, strlen(text), "r");
	assert_int_equal(folded_read(p, f, NULL), -EOVERFLOW);
	fclose(f);
	profile_free(p);
}

static int read_bounded(const char *text, size_t size, const struct lines_bounds *b,
			struct profile *p, struct folded_read_stats *stats)
{
	FILE *f = fmemopen((void *)text, size, "r");
	int err;

	assert_non_null(f);
	err = folded_read_bounded(p, f, b, stats);
	fclose(f);
	return err;
}

/* A line over max_line and a stack over max_depth are skipped and counted; memory stays bounded. */
static void test_reader_bounds_line_length_and_depth(void **state)
{
	struct lines_bounds b = { .max_line = 16, .max_depth = 3 };
	struct folded_read_stats stats = { 0 };
	struct profile *p = profile_new();
	const char *text = "a;b;c 1\n"
			   "a;b;c;d 2\n"		      /* 4 frames */
			   "a;bbbbbbbbbbbbbbbbbbbbbbbbbb 3\n" /* 31 bytes */
			   "x 4\n";
	char *out;

	(void)state;
	assert_int_equal(read_bounded(text, strlen(text), &b, p, &stats), 0);
	assert_int_equal(stats.lines, 2);
	assert_int_equal(stats.skipped, 2);
	assert_int_equal(stats.too_deep, 1);
	assert_int_equal(stats.too_long, 1);
	assert_int_equal(stats.first_bad_line, 2);
	out = write_text(p);
	assert_string_equal(out, "a;b;c 1\nx 4\n");
	free(out);
	profile_free(p);
}

/* 25 million frames on one line (a 50 MB line): skipped, with the default bounds. */
static void test_reader_skips_a_line_of_25_million_frames(void **state)
{
	const size_t frames = 25u * 1000 * 1000;
	size_t len = frames * 2 + 16;
	char *text = malloc(len);
	struct folded_read_stats stats = { 0 };
	struct profile *p = profile_new();

	(void)state;
	assert_non_null(text);
	for (size_t i = 0; i < frames; i++) {
		text[2 * i] = 'f';
		text[2 * i + 1] = ';';
	}
	len = frames * 2 - 1;
	len += (size_t)sprintf(text + len, " 7\nok 1\n");
	assert_int_equal(read_bounded(text, len, NULL, p, &stats), 0);
	assert_int_equal(stats.too_deep, 1);
	assert_int_equal(stats.lines, 1);
	assert_true(profile_max_depth(p) == 1);
	free(text);
	profile_free(p);
}

/* /dev/zero, or any file with a NUL byte up front, is not text: refused at once. */
static void test_reader_refuses_binary_input(void **state)
{
	static const char text[] = "a 1\n\0\0\0\0";
	struct folded_read_stats stats = { 0 };
	struct profile *p = profile_new();

	(void)state;
	assert_int_equal(read_bounded(text, sizeof(text) - 1, NULL, p, &stats), -EBADMSG);
	assert_int_equal(stats.binary_at, 4);
	profile_free(p);
}

static void test_reader_handles_multi_megabyte_lines(void **state)
{
	const size_t frames = 200000;
	size_t len = 0, cap = frames * 24 + 64;
	char *text = malloc(cap);
	struct folded_read_stats stats = { 0 };
	struct profile *p;

	(void)state;
	assert_non_null(text);
	for (size_t i = 0; i < frames; i++)
		len += (size_t)snprintf(text + len, cap - len, "%sfunction_%zu", i ? ";" : "", i % 100);
	snprintf(text + len, cap - len, " 3\nshort 1\n");
	assert_true(len > 2 * 1000 * 1000);
	p = read_text(text, &stats);
	assert_int_equal(stats.lines, 2);
	assert_int_equal(stats.skipped, 0);
	assert_int_equal(profile_max_depth(p), frames);
	assert_int_equal(profile_total(p), 4);
	free(text);
	profile_free(p);
}

static void test_round_trip_is_identical(void **state)
{
	struct profile *p = profile_new(), *back, *again;
	struct frame f[4];
	char names[4][32];
	char *first, *second, *third;
	unsigned int seed = 3;
	/* The kinds the text can tell apart: an unknown frame reads back as
	 * user code, which prints the same. */
	static const enum frame_kind kinds[] = { FRAME_USER, FRAME_KERNEL, FRAME_JIT,
						 FRAME_INLINED };

	(void)state;
	for (int i = 0; i < 2000; i++) {
		size_t n = 1 + (size_t)rand_r(&seed) % 4;

		for (size_t j = 0; j < n; j++) {
			/* Spaces inside and at the end of names survive too. */
			snprintf(names[j], sizeof(names[j]), "%s%d%s", j ? "fn " : "proc",
				 rand_r(&seed) % 5, rand_r(&seed) % 7 ? "" : "  ");
			f[j] = (struct frame){ names[j],
					       j ? kinds[rand_r(&seed) % 4] : FRAME_PROCESS };
		}
		assert_int_equal(profile_add(p, f, n, 1 + (uint64_t)rand_r(&seed) % 1000), 0);
	}
	first = write_text(p);
	back = read_text(first, NULL);
	second = write_text(back);
	assert_string_equal(first, second);
	again = read_text(second, NULL);
	third = write_text(again);
	assert_string_equal(second, third);
	assert_int_equal(profile_total(back), profile_total(p));
	free(first);
	free(second);
	free(third);
	profile_free(p);
	profile_free(back);
	profile_free(again);
}

/* A full disk is an error the caller sees, not a short file. */
static void test_writer_reports_a_full_disk(void **state)
{
	struct profile *p = profile_new();
	struct frame f[] = { { "app", FRAME_PROCESS }, { "main", FRAME_USER } };
	FILE *full = fopen("/dev/full", "w");

	(void)state;
	assert_non_null(full);
	assert_int_equal(profile_add(p, f, 2, 1), 0);
	assert_int_equal(folded_write(p, full), -ENOSPC);
	fclose(full);
	profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_writer_marks_kinds_with_flamegraph_suffixes),
		cmocka_unit_test(test_python_frames_round_trip),
		cmocka_unit_test(test_writer_emits_one_line_per_leaf_in_stable_order),
		cmocka_unit_test(test_hostile_name_never_splits_a_line_or_adds_frames),
		cmocka_unit_test(test_reader_takes_flamegraph_pl_lines),
		cmocka_unit_test(test_reader_keeps_spaces_inside_frames),
		cmocka_unit_test(test_reader_counts_malformed_lines_and_goes_on),
		cmocka_unit_test(test_reader_refuses_huge_counts_whatever_the_order),
		cmocka_unit_test(test_reader_refuses_totals_past_the_bound),
		cmocka_unit_test(test_reader_bounds_line_length_and_depth),
		cmocka_unit_test(test_reader_skips_a_line_of_25_million_frames),
		cmocka_unit_test(test_reader_refuses_binary_input),
		cmocka_unit_test(test_reader_handles_multi_megabyte_lines),
		cmocka_unit_test(test_round_trip_is_identical),
		cmocka_unit_test(test_writer_reports_a_full_disk),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
