/*
 * render: folded stacks in, a flame graph out. Reads our folded files,
 * flamegraph.pl-style input and stackcollapse output, from files or stdin,
 * merges them into one profile and writes an SVG (or folded text again,
 * which normalises and merges). Malformed lines are counted and reported,
 * never silently dropped.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "render/folded.h"

static void render_usage(FILE *out)
{
	fputs("usage: ebprof render [FILE.folded]... [options]\n"
	      "Read folded stacks (- or no file: stdin) and write a flame graph.\n"
	      "\n"
	      "  -o, --output FILE   where to write (default: stdout)\n"
	      "      --format FORMAT svg or folded (default svg)\n"
	      "      --title TEXT    the SVG's title\n"
	      "      --minwidth PX   prune frames narrower than this (default 0.1)\n",
	      out);
}

enum { OPT_FORMAT = 256, OPT_TITLE, OPT_MINWIDTH };

static const struct option render_longopts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "help", no_argument, NULL, 'h' },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "title", required_argument, NULL, OPT_TITLE },
	{ "minwidth", required_argument, NULL, OPT_MINWIDTH },
	{ 0 },
};

static int read_one(struct profile *p, const char *path)
{
	struct folded_read_stats st = { 0 };
	FILE *in = stdin;
	int err;

	if (strcmp(path, "-")) {
		in = fopen(path, "r");
		if (!in) {
			fprintf(stderr, "ebprof render: cannot open %s: %s\n", path,
				strerror(errno));
			return -1;
		}
	}
	err = folded_read(p, in, &st);
	if (in != stdin)
		fclose(in);
	if (err) {
		fprintf(stderr, "ebprof render: reading %s: %s\n", path, strerror(-err));
		return -1;
	}
	if (st.skipped)
		fprintf(stderr,
			"ebprof render: %s: skipped %llu malformed line(s) of %llu, "
			"the first at line %llu\n",
			path, (unsigned long long)st.skipped,
			(unsigned long long)(st.lines + st.skipped),
			(unsigned long long)st.first_bad_line);
	return 0;
}

int cli_render(int argc, char **argv)
{
	const char *output = NULL, *title = NULL;
	enum cli_format format = CLI_FORMAT_SVG;
	double min_width = -1;
	struct profile *p;
	char *end;
	int c, ret = 1;

	while ((c = getopt_long(argc, argv, "o:h", render_longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 'h':
			render_usage(stdout);
			return 0;
		case OPT_FORMAT:
			if (cli_parse_format(optarg) < 0) {
				fprintf(stderr, "ebprof render: invalid format '%s': "
						"expected svg or folded\n", optarg);
				return 2;
			}
			format = cli_parse_format(optarg);
			break;
		case OPT_TITLE:
			title = optarg;
			break;
		case OPT_MINWIDTH:
			min_width = strtod(optarg, &end);
			if (*end || end == optarg || !(min_width >= 0 && min_width <= 1000)) {
				fprintf(stderr, "ebprof render: invalid minwidth '%s': "
						"expected 0 to 1000 pixels\n", optarg);
				return 2;
			}
			break;
		default:
			render_usage(stderr);
			return 2;
		}
	}
	p = profile_new();
	if (!p) {
		fprintf(stderr, "ebprof render: out of memory\n");
		return 1;
	}
	if (optind == argc) {
		if (read_one(p, "-"))
			goto free_profile;
	}
	for (int i = optind; i < argc; i++)
		if (read_one(p, argv[i]))
			goto free_profile;
	if (!cli_write_profile(p, format, output, title, NULL, min_width))
		ret = 0;
free_profile:
	profile_free(p);
	return ret;
}
