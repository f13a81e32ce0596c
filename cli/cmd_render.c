/*
 * render: profiles in, a flame graph (or another format) out. Reads our
 * folded files, flamegraph.pl-style input, stackcollapse output and raw
 * `perf script` text (told apart by their first lines, or by --input),
 * from files or stdin, and merges them into one profile: counts add up
 * exactly, so a fleet's or a day's files become one graph. --root puts
 * each input's file or directory name above its stacks, so the merged
 * graph still shows which host or window a stack came from. Malformed
 * lines are counted and reported, never silently dropped; so are lines
 * and stacks over the bounds (--max-line, --max-depth), which keep memory
 * bounded whatever the input, and binary input is refused at once.
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/grow.h"
#include "cli/cli.h"
#include "render/folded.h"
#include "render/perfscript.h"
#include "render/prune.h"
#include "render/stacks.h"

#define RENDER_HEAD 65536 /* bytes looked at to tell perf script from folded */

static void render_usage(FILE *out)
{
	fputs("usage: ebprof render [FILE]... [options]\n"
	      "Read folded stacks or `perf script` output (- or no file: stdin), merge\n"
	      "them, and write a flame graph.\n"
	      "\n"
	      "  -o, --output FILE   where to write (default: stdout)\n"
	      "      --format FORMAT svg, folded, speedscope or pprof (default svg)\n"
	      "      --input KIND    auto, folded or perf-script (default auto: by the\n"
	      "                      first lines of each file)\n"
	      "      --root WHAT     add a root frame above each file's stacks: file (its\n"
	      "                      name without .folded/.txt...) or dir (its directory's\n"
	      "                      name, for HOST/latest.folded trees)\n"
	      "  -F, --frequency HZ  the inputs' sampling frequency, for pprof's CPU time\n"
	      "                      (default: unknown, pprof gets sample counts only)\n"
	      "      --title TEXT    the SVG's title\n"
	      "      --minwidth PX   prune frames narrower than this (default 0.1)\n"
	      CLI_BOUND_USAGE,
	      out);
}

enum { OPT_FORMAT = 256, OPT_TITLE, OPT_MINWIDTH, OPT_INPUT, OPT_ROOT };
enum render_input { INPUT_AUTO, INPUT_FOLDED, INPUT_PERF };
enum render_root { ROOT_NONE, ROOT_FILE, ROOT_DIR };

static const struct option render_longopts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "help", no_argument, NULL, 'h' },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "title", required_argument, NULL, OPT_TITLE },
	{ "minwidth", required_argument, NULL, OPT_MINWIDTH },
	{ "input", required_argument, NULL, OPT_INPUT },
	{ "root", required_argument, NULL, OPT_ROOT },
	{ "frequency", required_argument, NULL, 'F' },
	CLI_BOUND_OPTIONS,
	{ 0 },
};

/*
 * A stream that first gives back the bytes already read to look at the
 * input, then the rest of the input: stdin cannot be rewound.
 */
struct head_stream {
	FILE *rest;
	char *head;
	size_t len, pos;
};

static ssize_t head_stream_read(void *cookie, char *buf, size_t size)
{
	struct head_stream *h = cookie;

	if (h->pos < h->len) {
		size_t n = h->len - h->pos < size ? h->len - h->pos : size;

		memcpy(buf, h->head + h->pos, n);
		h->pos += n;
		return (ssize_t)n;
	}
	size = fread(buf, 1, size, h->rest);
	return size || !ferror(h->rest) ? (ssize_t)size : -1;
}

/* The root frame's name for a path: "web01" for web01.folded with
 * ROOT_FILE, and for web01/latest.folded with ROOT_DIR. */
static void root_name(const char *path, enum render_root root, char *name, size_t len)
{
	char copy[PATH_MAX], dir[PATH_MAX], *dot;

	if (!strcmp(path, "-")) {
		snprintf(name, len, "stdin");
		return;
	}
	snprintf(copy, sizeof(copy), "%s", path);
	if (root == ROOT_DIR) {
		snprintf(dir, sizeof(dir), "%s", dirname(copy));
		/* "latest.folded" alone: the name of the current directory. */
		if (!strcmp(dir, ".") && !realpath(".", copy))
			snprintf(copy, sizeof(copy), ".");
		else if (strcmp(dir, "."))
			snprintf(copy, sizeof(copy), "%s", dir);
	}
	snprintf(name, len, "%s", basename(copy));
	if (root == ROOT_FILE) {
		dot = strchr(name, '.');
		if (dot && dot != name)
			*dot = '\0';
	}
}

struct root_ctx {
	struct profile *dst;
	struct frame *frames;
	size_t cap;
	const char *root;
};

static int add_under_root(const struct frame *frames, size_t n, uint64_t count, void *ctx)
{
	struct root_ctx *r = ctx;

	if (GROW_ARRAY(&r->frames, &r->cap, n + 1, 64))
		return -ENOMEM;
	r->frames[0] = (struct frame){ r->root, FRAME_PROCESS };
	memcpy(r->frames + 1, frames, n * sizeof(*frames));
	return profile_add(r->dst, r->frames, n + 1, count);
}

/*
 * Reads one input into p. whole, when not NULL, is the same input as a
 * file that can be rewound: with prune (the SVG's options) a folded file
 * is read in two passes that keep only what the SVG draws (render/prune.h).
 */
static int read_stream(struct profile *p, FILE *in, FILE *whole, const char *path, bool perf,
		       const struct lines_bounds *bounds, const struct svg_options *prune)
{
	char note[256];
	int err;

	if (perf) {
		struct perfscript_read_stats st = { 0 };

		err = perfscript_read_bounded(p, in, bounds, &st);
		cli_bounds_note(note, sizeof(note), st.too_long, st.too_deep, bounds);
		if (!err && (st.skipped || st.too_deep))
			fprintf(stderr,
				"ebprof render: %s: skipped %llu line(s) that are not perf "
				"script frames, the first at line %llu, and %llu sample(s)%s\n",
				path, (unsigned long long)st.skipped,
				(unsigned long long)st.first_bad_line,
				(unsigned long long)st.too_deep, note);
		if (err)
			cli_report_read_error("render", path, err, st.binary_at);
	} else {
		struct folded_read_stats st = { 0 };

		err = -ESPIPE;
		if (prune && whole)
			err = prune_read_folded(p, whole, bounds, &st, prune);
		if (err == -EAGAIN) { /* the file changed between the passes */
			profile_clear(p);
			err = fseeko(whole, 0, SEEK_SET) ? -errno : -ESPIPE;
			in = whole;
		}
		if (err == -ESPIPE) {
			st = (struct folded_read_stats){ 0 };
			err = folded_read_bounded(p, in, bounds, &st);
		}
		cli_bounds_note(note, sizeof(note), st.too_long, st.too_deep, bounds);
		if (!err && st.skipped)
			fprintf(stderr,
				"ebprof render: %s: skipped %llu malformed line(s) of %llu, "
				"the first at line %llu%s\n",
				path, (unsigned long long)st.skipped,
				(unsigned long long)st.lines + st.skipped,
				(unsigned long long)st.first_bad_line, note);
		if (err)
			cli_report_read_error("render", path, err, st.binary_at);
	}
	return err;
}

static int read_one(struct profile *p, const char *path, enum render_input input,
		    enum render_root root, const struct lines_bounds *bounds,
		    const struct svg_options *prune)
{
	struct head_stream h = { .rest = stdin };
	cookie_io_functions_t io = { .read = head_stream_read };
	struct profile *one = p;
	FILE *in = NULL;
	bool perf = input == INPUT_PERF;
	int err = -ENOMEM;

	if (strcmp(path, "-")) {
		h.rest = cli_open_input("render", path);
		if (!h.rest)
			return -1;
	}
	h.head = malloc(RENDER_HEAD);
	if (root != ROOT_NONE)
		one = profile_new();
	if (!h.head || !one)
		goto out_close;
	if (input == INPUT_AUTO) {
		h.len = fread(h.head, 1, RENDER_HEAD, h.rest);
		perf = perfscript_detect(h.head, h.len);
	}
	in = fopencookie(&h, "r", io);
	if (!in)
		goto out_close;
	err = read_stream(one, in, h.rest != stdin && root == ROOT_NONE ? h.rest : NULL, path,
			  perf, bounds, prune);
	if (err) {
		err = 1; /* said by read_stream() */
		goto out_close;
	}
	if (ferror(h.rest))
		err = -EIO;
	if (!err && root != ROOT_NONE) {
		struct root_ctx r = { .dst = p };
		char name[NAME_MAX + 1];

		root_name(path, root, name, sizeof(name));
		r.root = name;
		err = stacks_for_each(one, 0, add_under_root, &r);
		free(r.frames);
	}
out_close:
	if (in)
		fclose(in);
	if (h.rest != stdin)
		fclose(h.rest);
	free(h.head);
	if (one != p)
		profile_free(one);
	if (err < 0)
		cli_report_read_error("render", path, err, 0);
	return err ? -1 : 0;
}

int cli_render(int argc, char **argv)
{
	const char *output = NULL, *title = NULL;
	enum format format = FORMAT_SVG;
	enum render_input input = INPUT_AUTO;
	enum render_root root = ROOT_NONE;
	unsigned long frequency = 0;
	struct lines_bounds bounds = { 0 };
	double min_width = -1;
	struct svg_options prune, *prune_opts = &prune;
	struct profile *p;
	char *end;
	int c, ret = 1;

	while ((c = getopt_long(argc, argv, "o:hF:", render_longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 'h':
			render_usage(stdout);
			return 0;
		case OPT_FORMAT:
			if (format_parse(optarg) < 0) {
				fprintf(stderr, "ebprof render: invalid format '%s': "
						"expected " FORMAT_NAMES "\n", optarg);
				return 2;
			}
			format = format_parse(optarg);
			break;
		case OPT_INPUT:
			if (!strcmp(optarg, "auto")) {
				input = INPUT_AUTO;
			} else if (!strcmp(optarg, "folded")) {
				input = INPUT_FOLDED;
			} else if (!strcmp(optarg, "perf-script")) {
				input = INPUT_PERF;
			} else {
				fprintf(stderr, "ebprof render: invalid input '%s': "
						"expected auto, folded or perf-script\n", optarg);
				return 2;
			}
			break;
		case OPT_ROOT:
			if (!strcmp(optarg, "file")) {
				root = ROOT_FILE;
			} else if (!strcmp(optarg, "dir")) {
				root = ROOT_DIR;
			} else {
				fprintf(stderr, "ebprof render: invalid root '%s': "
						"expected file or dir\n", optarg);
				return 2;
			}
			break;
		case 'F':
			if (cli_parse_uint(optarg, 1, 1000000, &frequency)) {
				fprintf(stderr, "ebprof render: invalid frequency '%s': "
						"expected 1 to 1000000 Hz\n", optarg);
				return 2;
			}
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
		case CLI_OPT_MAX_LINE:
		case CLI_OPT_MAX_DEPTH:
			if (cli_parse_bound("render", c, optarg, &bounds))
				return 2;
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
	/* One folded file drawn as an SVG needs only the frames it draws. */
	svg_options_init(&prune);
	if (min_width >= 0)
		prune.min_width = min_width;
	if (format != FORMAT_SVG || argc - optind != 1)
		prune_opts = NULL;
	if (optind == argc) {
		if (read_one(p, "-", input, root, &bounds, NULL))
			goto free_profile;
	}
	for (int i = optind; i < argc; i++)
		if (read_one(p, argv[i], input, root, &bounds, prune_opts))
			goto free_profile;
	if (!cli_write_profile(p, format, output,
			       &(struct format_options){ title, NULL, min_width,
							 (unsigned int)frequency }))
		ret = 0;
free_profile:
	profile_free(p);
	return ret;
}
