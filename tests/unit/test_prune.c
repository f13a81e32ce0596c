/*
 * prune: the two-pass reader must give the very SVG the whole tree gives,
 * byte for byte, while holding far fewer tree nodes: on generated files with
 * many rare stacks under a few hot paths, at several minimum widths, with
 * counts that saturate the sketch, and with a sketch so small that most
 * estimates are wrong (a wrong estimate may only keep more, never less).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "render/prune.h"

/* A deterministic generator: the same seed, the same file. */
static uint64_t next(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s >> 33;
}

/*
 * Writes `lines` stacks: a process, a hot path chosen from a few, then
 * 1-20 frames from a vocabulary of `names`, some kernel ones, with counts
 * that fall off (the first `big` lines get counts past 2^32).
 */
static FILE *generate(uint64_t seed, size_t lines, unsigned int names, size_t big)
{
	FILE *f = tmpfile();

	assert_non_null(f);
	for (size_t i = 0; i < lines; i++) {
		unsigned int depth = 1 + (unsigned int)(next(&seed) % 20);

		fprintf(f, "proc%u;main;hot_%u", (unsigned int)(next(&seed) % 3),
			(unsigned int)(next(&seed) % 4));
		for (unsigned int d = 0; d < depth; d++)
			fprintf(f, ";fn_%u%s", (unsigned int)(next(&seed) % names),
				next(&seed) % 9 ? "" : "_[k]");
		if (i < big)
			fprintf(f, " %llu\n", (unsigned long long)(5ULL << 32) + i);
		else
			fprintf(f, " %u\n", 1 + (unsigned int)(1000 / (1 + next(&seed) % 1000)));
	}
	fputs("not a stack line\n", f); /* counted and skipped by both readers */
	rewind(f);
	return f;
}

static char *svg_of(const struct profile *p, const struct svg_options *opts)
{
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);

	assert_non_null(out);
	assert_int_equal(svg_write(p, out, opts), 0);
	assert_int_equal(fclose(out), 0);
	return text;
}

/* The nodes under n, n included (the generated trees are shallow). */
static size_t nodes(const struct profile_node *n)
{
	size_t count = 1;

	for (size_t i = 0; i < profile_node_child_count(n); i++)
		count += nodes(profile_node_child(n, i));
	return count;
}

/* Both readers on one file: same SVG, same stats; returns the tree nodes
 * each holds. */
static void compare(FILE *f, double min_width, size_t *whole_nodes, size_t *pruned_nodes)
{
	struct folded_read_stats a = { 0 }, b = { 0 };
	struct profile *whole = profile_new(), *pruned = profile_new();
	struct svg_options opts;
	char *x, *y;

	svg_options_init(&opts);
	if (min_width >= 0)
		opts.min_width = min_width;
	assert_non_null(whole);
	assert_non_null(pruned);
	rewind(f);
	assert_int_equal(folded_read_bounded(whole, f, NULL, &a), 0);
	assert_int_equal(prune_read_folded(pruned, f, NULL, &b, &opts), 0);
	assert_int_equal(a.lines, b.lines);
	assert_int_equal(a.skipped, b.skipped);
	assert_int_equal(b.skipped, 1);
	assert_true(profile_total(whole) == profile_total(pruned));
	x = svg_of(whole, &opts);
	y = svg_of(pruned, &opts);
	assert_string_equal(x, y);
	*whole_nodes = nodes(profile_root(whole));
	*pruned_nodes = nodes(profile_root(pruned));
	free(x);
	free(y);
	profile_free(whole);
	profile_free(pruned);
}

static void test_same_svg_with_far_fewer_stacks(void **state)
{
	FILE *f = generate(1, 60000, 5000, 0);
	size_t whole, pruned;

	(void)state;
	compare(f, -1, &whole, &pruned);
	assert_true(whole > 500000);
	assert_true(pruned * 4 < whole); /* most frames are below 0.1 px */
	fclose(f);
}

static void test_same_svg_at_other_widths(void **state)
{
	static const double widths[] = { 0, 0.01, 1, 5 };
	FILE *f = generate(2, 20000, 3000, 0);
	size_t whole, pruned;

	(void)state;
	for (size_t i = 0; i < sizeof(widths) / sizeof(widths[0]); i++) {
		compare(f, widths[i], &whole, &pruned);
		if (widths[i] == 0)
			assert_int_equal(pruned, whole); /* every frame drawn: none cut */
		else if (widths[i] >= 1)
			assert_true(pruned * 2 < whole);
		else
			assert_true(pruned <= whole);
	}
	fclose(f);
}

static void test_counts_past_32_bits_saturate_and_keep(void **state)
{
	FILE *f = generate(3, 20000, 2000, 50);
	size_t whole, pruned;

	(void)state;
	compare(f, -1, &whole, &pruned);
	assert_true(pruned < whole);
	fclose(f);
}

/* A file of one block's worth of bytes still gets a sketch of 256 blocks;
 * with 10^4 distinct names its estimates are mostly inflated. Inflated
 * estimates keep more, and the SVG must still be the same. */
static void test_small_sketch_many_collisions(void **state)
{
	FILE *f = generate(4, 3000, 10000, 0);
	size_t whole, pruned;

	(void)state;
	compare(f, 1, &whole, &pruned);
	assert_true(pruned <= whole);
	fclose(f);
}

static void test_pipe_is_refused_untouched(void **state)
{
	struct profile *p = profile_new();
	int fds[2];
	FILE *in;

	(void)state;
	assert_int_equal(pipe(fds), 0);
	assert_int_equal(write(fds[1], "a;b 1\n", 6), 6);
	close(fds[1]);
	in = fdopen(fds[0], "r");
	assert_non_null(in);
	assert_int_equal(prune_read_folded(p, in, NULL, NULL, NULL), -ESPIPE);
	assert_true(profile_total(p) == 0);
	/* Nothing was read: the caller reads the same stream whole. */
	assert_int_equal(folded_read(p, in, NULL), 0);
	assert_true(profile_total(p) == 1);
	fclose(in);
	profile_free(p);
}

static void test_overflowing_total_is_refused(void **state)
{
	struct profile *p = profile_new();
	FILE *f = tmpfile();

	(void)state;
	assert_non_null(f);
	fprintf(f, "a;b %llu\na;c %llu\n", (unsigned long long)FOLDED_MAX_COUNT,
		(unsigned long long)FOLDED_MAX_COUNT);
	rewind(f);
	assert_int_equal(prune_read_folded(p, f, NULL, NULL, NULL), -EOVERFLOW);
	fclose(f);
	profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_svg_with_far_fewer_stacks),
		cmocka_unit_test(test_same_svg_at_other_widths),
		cmocka_unit_test(test_counts_past_32_bits_saturate_and_keep),
		cmocka_unit_test(test_small_sketch_many_collisions),
		cmocka_unit_test(test_pipe_is_refused_untouched),
		cmocka_unit_test(test_overflowing_total_is_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
