/*
 * diff: what a reader of a differential flame graph sees. A workload whose
 * 70/30 split became 50/50 must show the shrunk function blue and the
 * grown one red, with the right counts and percentages in the tooltips;
 * callers carry the change of what they call; --normalize compares shares
 * rather than counts; frames only AFTER has are "new".
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "render/diff.h"
#include "render/folded.h"

static struct profile *from_folded(const char *text)
{
	struct profile *p = profile_new();
	FILE *f = fmemopen((void *)text, strlen(text), "r");

	assert_non_null(p);
	assert_non_null(f);
	assert_int_equal(folded_read(p, f, NULL), 0);
	fclose(f);
	return p;
}

/* BEFORE 70/30, AFTER 50/50: the change of the issue, as a user would
 * record it (the comparison is AFTER against BEFORE). */
static struct profile *split_diff(unsigned int before_scale)
{
	char before_text[256];
	struct profile *before, *after;

	snprintf(before_text, sizeof(before_text),
		 "split;main;run_split;burn_seventy %u\nsplit;main;run_split;burn_thirty %u\n",
		 70 * before_scale, 30 * before_scale);
	before = from_folded(before_text);
	after = from_folded("split;main;run_split;burn_seventy 50\n"
			    "split;main;run_split;burn_thirty 50\n");
	assert_int_equal(diff_overlay(after, before), 0);
	profile_free(before);
	return after;
}

static char *svg_of(const struct profile *p, const struct diff_options *o)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	assert_non_null(f);
	assert_int_equal(diff_write_svg(p, f, o), 0);
	assert_int_equal(fclose(f), 0);
	return text;
}

/* The fill of the frame whose tooltip starts with "NAME (". */
static void fill_of(const char *svg, const char *name, char rgb[8])
{
	char key[128];
	const char *at, *fill;

	snprintf(key, sizeof(key), "<title>%s (", name);
	at = strstr(svg, key);
	assert_non_null(at);
	fill = strstr(at, "fill=\"");
	assert_non_null(fill);
	memcpy(rgb, fill + 6, 7);
	rgb[7] = '\0';
}

static const char *tooltip_of(const char *svg, const char *name, char *buf, size_t len)
{
	char key[128];
	const char *at, *end;

	snprintf(key, sizeof(key), "<title>%s (", name);
	at = strstr(svg, key);
	assert_non_null(at);
	end = strstr(at, "</title>");
	assert_non_null(end);
	snprintf(buf, len, "%.*s", (int)(end - at - 7), at + 7);
	return buf;
}

static void test_the_shrunk_function_is_blue_and_the_grown_one_red(void **state)
{
	struct profile *p = split_diff(1);
	char *svg = svg_of(p, NULL), rgb[8], tip[512];

	(void)state;
	/* burn_seventy: 70 -> 50, the largest change: full blue */
	fill_of(svg, "burn_seventy", rgb);
	assert_string_equal(rgb, "#3737ff");
	/* burn_thirty: 30 -> 50, as large a change: full red */
	fill_of(svg, "burn_thirty", rgb);
	assert_string_equal(rgb, "#ff3737");
	/* the callers: 100 -> 100, unchanged */
	fill_of(svg, "run_split", rgb);
	assert_string_equal(rgb, "#ffffff");
	tooltip_of(svg, "burn_seventy", tip, sizeof(tip));
	assert_string_equal(tip, "burn_seventy (50 samples, 50.00%; before 70, after 50, "
				 "-28.57%; self before 70, after 50, -28.57%)");
	tooltip_of(svg, "burn_thirty", tip, sizeof(tip));
	assert_string_equal(tip, "burn_thirty (50 samples, 50.00%; before 30, after 50, "
				 "+66.67%; self before 30, after 50, +66.67%)");
	assert_non_null(strstr(svg, "Red grew, blue shrank, in total samples"));
	free(svg);
	profile_free(p);
}

static void test_normalize_compares_shares_not_counts(void **state)
{
	/* BEFORE recorded ten times as long: 700/300 against 50/50. */
	struct profile *p = split_diff(10);
	struct diff_options o;
	struct diff_change c;
	char *svg, rgb[8], tip[512];

	(void)state;
	diff_options_init(&o);
	/* Without normalizing everything looks shrunk: blue everywhere. */
	svg = svg_of(p, &o);
	fill_of(svg, "burn_thirty", rgb);
	assert_int_equal(rgb[5], 'f'); /* blue channel full: shrank */
	free(svg);

	o.normalize = true;
	svg = svg_of(p, &o);
	fill_of(svg, "burn_thirty", rgb);
	assert_string_equal(rgb, "#ff3737");
	fill_of(svg, "burn_seventy", rgb);
	assert_string_equal(rgb, "#3737ff");
	fill_of(svg, "main", rgb);
	assert_string_equal(rgb, "#ffffff");
	tooltip_of(svg, "burn_thirty", tip, sizeof(tip));
	assert_non_null(strstr(tip, "before 30, after 50, +66.67%"));
	assert_non_null(strstr(svg, "before normalized to after"));
	free(svg);

	diff_change_of(p, profile_node_child(profile_root(p), 0), &o, DIFF_BY_TOTAL, &c);
	assert_true(fabs(c.before - 100.0) < 1e-9 && fabs(c.delta) < 1e-9);
	profile_free(p);
}

static void test_a_change_shows_on_every_caller_on_its_path(void **state)
{
	struct profile *before = from_folded("app;main;parse;lex 10\napp;main;eval 90\n");
	struct profile *after = from_folded("app;main;parse;lex 40\napp;main;eval 90\n");
	struct diff_options o;
	char *svg, rgb[8], tip[512];

	(void)state;
	assert_int_equal(diff_overlay(after, before), 0);
	diff_options_init(&o);
	svg = svg_of(after, &o);
	/* parse has no self samples, but everything below it grew */
	fill_of(svg, "parse", rgb);
	assert_string_equal(rgb, "#ff3737");
	fill_of(svg, "main", rgb);
	assert_string_equal(rgb, "#ff3737");
	fill_of(svg, "eval", rgb);
	assert_string_equal(rgb, "#ffffff");
	tooltip_of(svg, "parse", tip, sizeof(tip));
	assert_non_null(strstr(tip, "before 10, after 40, +300.00%; self before 0, after 0"));
	free(svg);

	/* By self, as difffolded.pl: only lex, where the samples end. */
	o.by = DIFF_BY_SELF;
	svg = svg_of(after, &o);
	fill_of(svg, "parse", rgb);
	assert_string_equal(rgb, "#ffffff");
	fill_of(svg, "lex", rgb);
	assert_string_equal(rgb, "#ff3737");
	assert_non_null(strstr(svg, "in self samples"));
	free(svg);
	profile_free(before);
	profile_free(after);
}

static void test_new_frames_say_new_and_gone_frames_are_not_drawn(void **state)
{
	struct profile *before = from_folded("app;main;old 50\napp;main;kept 50\n");
	struct profile *after = from_folded("app;main;fresh 10\napp;main;kept 50\n");
	char *svg, tip[512];

	(void)state;
	assert_int_equal(diff_overlay(after, before), 0);
	svg = svg_of(after, NULL);
	tooltip_of(svg, "fresh", tip, sizeof(tip));
	assert_non_null(strstr(tip, "before 0, after 10, new"));
	assert_null(strstr(svg, "<title>old ("));
	tooltip_of(svg, "main", tip, sizeof(tip));
	assert_non_null(strstr(tip, "before 100, after 60, -40.00%"));
	free(svg);
	profile_free(before);
	profile_free(after);
}

/*
 * Issue 20, finding 6: BEFORE normalized to an AFTER of 2^53 samples was
 * printed above 2^64 once (the factor was a double). Each normalized
 * count is now a product divided once: the whole of BEFORE becomes
 * exactly AFTER's total, and a share of it is exact too.
 */
static void test_normalize_is_exact_for_big_totals(void **state)
{
	struct profile *before = from_folded("app;a 1\napp;b 2\n");
	struct profile *after = from_folded("app;a 3002399751580330\napp;b 6004799503160661\n");
	const struct profile_node *root, *app, *b;
	struct diff_options o;
	struct diff_change c;
	char *svg;

	(void)state;
	assert_int_equal(profile_total(after), 9007199254740991ULL); /* 2^53 - 1 */
	assert_int_equal(diff_overlay(after, before), 0);
	diff_options_init(&o);
	o.normalize = true;
	root = profile_root(after);
	app = profile_node_child(root, 0);
	diff_change_of(after, app, &o, DIFF_BY_TOTAL, &c);
	assert_true(c.before == 9007199254740991.0);
	assert_true(c.after == 9007199254740991.0);
	assert_true(c.delta == 0.0);
	b = profile_node_child(app, 1);
	diff_change_of(after, b, &o, DIFF_BY_TOTAL, &c);
	assert_true(c.before == 6004799503160660.0 + 2.0 / 3.0);
	svg = svg_of(after, &o);
	assert_non_null(strstr(svg, "before 9007199254740991, after 9007199254740991, +0.00%"));
	assert_null(strstr(svg, "18446744073709551616"));
	free(svg);
	profile_free(before);
	profile_free(after);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_the_shrunk_function_is_blue_and_the_grown_one_red),
		cmocka_unit_test(test_normalize_compares_shares_not_counts),
		cmocka_unit_test(test_normalize_is_exact_for_big_totals),
		cmocka_unit_test(test_a_change_shows_on_every_caller_on_its_path),
		cmocka_unit_test(test_new_frames_say_new_and_gone_frames_are_not_drawn),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
