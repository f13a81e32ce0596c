/*
 * diff: `ebprof diff BEFORE AFTER -o diff.svg`, a differential flame
 * graph of two folded files (or perf script outputs, as render reads
 * them): AFTER's shape, coloured by what changed since BEFORE.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "render/diff.h"
#include "render/folded.h"

static void diff_usage(FILE *out)
{
	fputs("usage: ebprof diff BEFORE.folded AFTER.folded [options]\n"
	      "Draw AFTER as a flame graph coloured by the change from BEFORE: red where\n"
	      "a frame grew, blue where it shrank, deeper for larger changes. Tooltips\n"
	      "show both counts and the change in percent.\n"
	      "\n"
	      "  -o, --output FILE   where to write the SVG (default: stdout)\n"
	      "  -n, --normalize     scale BEFORE to AFTER's total first (recordings of\n"
	      "                      different lengths)\n"
	      "      --by WHAT       total (default: a frame's change includes its\n"
	      "                      callees', so every caller on the path shows it) or\n"
	      "                      self (only where samples end, as difffolded.pl)\n"
	      "      --title TEXT    the SVG's title\n"
	      "      --minwidth PX   prune frames narrower than this (default 0.1)\n"
	      CLI_BOUND_USAGE,
	      out);
}

enum { OPT_BY = 256, OPT_TITLE, OPT_MINWIDTH };

static const struct option diff_longopts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "normalize", no_argument, NULL, 'n' },
	{ "help", no_argument, NULL, 'h' },
	{ "by", required_argument, NULL, OPT_BY },
	{ "title", required_argument, NULL, OPT_TITLE },
	{ "minwidth", required_argument, NULL, OPT_MINWIDTH },
	CLI_BOUND_OPTIONS,
	{ 0 },
};

static int diff_read(struct profile *p, const char *path, const struct lines_bounds *bounds)
{
	struct folded_read_stats st = { 0 };
	FILE *in = cli_open_input("diff", path);
	char note[256];
	int err;

	if (!in)
		return -1;
	err = folded_read_bounded(p, in, bounds, &st);
	fclose(in);
	if (err) {
		cli_report_read_error("diff", path, err, st.binary_at);
		return -1;
	}
	cli_bounds_note(note, sizeof(note), st.too_long, st.too_deep, bounds);
	if (st.skipped)
		fprintf(stderr, "ebprof diff: %s: skipped %llu malformed line(s), the first at "
				"line %llu%s\n",
			path, (unsigned long long)st.skipped, (unsigned long long)st.first_bad_line,
			note);
	if (!st.lines) {
		fprintf(stderr, "ebprof diff: %s has no stacks\n", path);
		return -1;
	}
	return 0;
}

static int diff_write(const struct profile *p, const char *path, const struct diff_options *o)
{
	FILE *out = stdout;
	int err;

	if (path && strcmp(path, "-")) {
		out = fopen(path, "w");
		if (!out) {
			fprintf(stderr, "ebprof diff: cannot create %s: %m\n", path);
			return -1;
		}
	}
	err = diff_write_svg(p, out, o);
	if (fflush(out) && !err)
		err = -EIO;
	if (out != stdout && fclose(out) && !err)
		err = -EIO;
	if (err) {
		fprintf(stderr, "ebprof diff: writing %s: %s\n", path ? path : "stdout",
			strerror(-err));
		if (out != stdout)
			remove(path);
		return -1;
	}
	return 0;
}

int cli_diff(int argc, char **argv)
{
	struct profile *before = NULL, *after = NULL;
	struct diff_options o;
	struct lines_bounds bounds = { 0 };
	const char *output = NULL;
	char *end;
	int c, ret = 1, err;

	diff_options_init(&o);
	while ((c = getopt_long(argc, argv, "o:nh", diff_longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 'n':
			o.normalize = true;
			break;
		case 'h':
			diff_usage(stdout);
			return 0;
		case OPT_BY:
			if (!strcmp(optarg, "total")) {
				o.by = DIFF_BY_TOTAL;
			} else if (!strcmp(optarg, "self")) {
				o.by = DIFF_BY_SELF;
			} else {
				fprintf(stderr, "ebprof diff: invalid --by '%s': expected total "
						"or self\n", optarg);
				return 2;
			}
			break;
		case OPT_TITLE:
			o.title = optarg;
			break;
		case OPT_MINWIDTH:
			o.min_width = strtod(optarg, &end);
			if (*end || end == optarg || !(o.min_width >= 0 && o.min_width <= 1000)) {
				fprintf(stderr, "ebprof diff: invalid minwidth '%s': expected 0 "
						"to 1000 pixels\n", optarg);
				return 2;
			}
			break;
		case CLI_OPT_MAX_LINE:
		case CLI_OPT_MAX_DEPTH:
			if (cli_parse_bound("diff", c, optarg, &bounds))
				return 2;
			break;
		default:
			diff_usage(stderr);
			return 2;
		}
	}
	if (argc - optind != 2) {
		fprintf(stderr, "ebprof diff: expected two files, BEFORE and AFTER\n");
		diff_usage(stderr);
		return 2;
	}
	before = profile_new();
	after = profile_new();
	if (!before || !after) {
		fprintf(stderr, "ebprof diff: out of memory\n");
		goto free_profiles;
	}
	if (diff_read(before, argv[optind], &bounds) ||
	    diff_read(after, argv[optind + 1], &bounds))
		goto free_profiles;
	err = diff_overlay(after, before);
	if (err) {
		fprintf(stderr, "ebprof diff: %s\n", strerror(-err));
		goto free_profiles;
	}
	if (!diff_write(after, output, &o))
		ret = 0;
free_profiles:
	profile_free(before);
	profile_free(after);
	return ret;
}
