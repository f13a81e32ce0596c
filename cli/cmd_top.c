/*
 * top: a live view of the hottest functions, refreshed at every drain.
 *
 * The pipeline is record's (cli/sampling.c): the same options, the same
 * capture, drained every --drain-interval-ms into a profile of that
 * interval alone. Each interval's profile becomes per-function self and
 * total samples through profile_functions(), shown as percent of one CPU
 * over the interval (profile_cpu_percent(): the figures the collectd
 * plugin reports), with the process each function was sampled in most.
 *
 * On a terminal the view is full-screen through ncurses: keys sort by self
 * or total and hide or show kernel frames (hiding them gives their time
 * to the user function that entered the kernel, profile_add_without()),
 * a resize redraws, and q, Ctrl-C, SIGTERM or an error end curses mode
 * before anything else is said, so the terminal is left as it was found.
 * Without a terminal on stdout, each interval is one plain table.
 *
 * Nothing here names a sample: the capture's worker does, so a process
 * whose files block cannot freeze the screen (render/capture.h).
 */
#include <curses.h>
#include <errno.h>
#include <getopt.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "symbolizer/utf8.h"

#define TOP_NAME_MAX 512 /* bytes of a function name shown */

struct top_opts {
	struct cli_sampling sampling;
	unsigned long duration_s; /* 0: until q or a signal */
	unsigned long lines;	  /* rows per plain table */
};

/* What one interval shows, kept to redraw on a key or a resize. */
struct top_view {
	const struct top_opts *opts;
	struct sampler *sampler;
	struct capture *cap;
	struct profile *window;	  /* the last interval's samples */
	struct profile *stripped; /* the same without kernel frames */
	double seconds;		  /* the interval the window covers */
	unsigned long intervals;
	bool sort_total;
	bool hide_kernel;
};

static void top_usage(FILE *out)
{
	fputs("usage: ebprof top [options]\n"
	      "Show the functions with the most CPU time, live: self and total as percent\n"
	      "of one CPU over each interval, with the process beside each. Keys: s sorts\n"
	      "by self, t by total, k hides or shows kernel frames, q quits. Without a\n"
	      "terminal on stdout, prints one plain table per interval.\n"
	      "\n"
	      "  -d, --duration SECONDS stop after this long (default: until q or Ctrl-C)\n"
	      "  -n, --lines N          rows of each plain table (default 20)\n"
	      CLI_SAMPLING_USAGE,
	      out);
}

static const struct option top_longopts[] = {
	CLI_SAMPLING_OPTIONS,
	{ "duration", required_argument, NULL, 'd' },
	{ "lines", required_argument, NULL, 'n' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

static int parse_top_opts(int argc, char **argv, struct top_opts *o)
{
	int c, rc;

	cli_sampling_init(&o->sampling);
	o->lines = 20;
	while ((c = getopt_long(argc, argv, CLI_SAMPLING_SHORTOPTS "d:n:h", top_longopts,
				NULL)) != -1) {
		rc = cli_sampling_option("top", &o->sampling, c, optarg);
		if (rc < 0)
			return -1;
		if (rc > 0)
			continue;
		switch (c) {
		case 'd':
			if (cli_parse_duration("top", optarg, &o->duration_s))
				return -1;
			break;
		case 'n':
			if (cli_parse_uint(optarg, 1, 100000, &o->lines)) {
				fprintf(stderr, "ebprof top: invalid lines '%s': expected 1 to "
						"100000\n", optarg);
				return -1;
			}
			break;
		case 'h':
			top_usage(stdout);
			exit(0);
		default:
			top_usage(stderr);
			return -1;
		}
	}
	if (o->sampling.sampler.mode != SAMPLER_MODE_CPU) {
		/* Its columns are percent of a CPU: off-CPU time has no place there yet. */
		fprintf(stderr, "ebprof top: --mode %s: top shows on-CPU time only; use "
				"`ebprof record --mode %s`\n",
			sampler_mode_name(o->sampling.sampler.mode),
			sampler_mode_name(o->sampling.sampler.mode));
		return -1;
	}
	return cli_sampling_finish("top", &o->sampling, argc, argv);
}

static int cmp_total(const void *a, const void *b)
{
	const struct profile_function *x = a, *y = b;

	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	return strcmp(x->name, y->name);
}

/*
 * The functions to show, sorted as asked; the caller frees *out. The
 * names point into the view's profiles, valid until the next drain.
 */
static int top_functions(struct top_view *v, struct profile_function **out, size_t *n)
{
	const struct profile *p = v->window;
	int err;

	if (v->hide_kernel) {
		profile_clear(v->stripped);
		err = profile_add_without(v->stripped, v->window, FRAME_KERNEL);
		if (err)
			return err;
		p = v->stripped;
	}
	err = profile_functions(p, out, n);
	if (!err && v->sort_total && *n)
		qsort(*out, *n, sizeof(**out), cmp_total);
	return err;
}

/*
 * A name fit for a terminal: control characters (a hostile process may
 * name a function with escape sequences) and bytes that are not UTF-8
 * become '?', and a cut never splits a character. Kernel, JIT and inlined
 * frames keep their folded suffix ("_[k]").
 */
static void top_printable(const char *name, enum frame_kind kind, char *out, size_t len)
{
	const char *suffix = frame_kind_suffix(kind);
	size_t used = 0, room = len - strlen(suffix) - 1;

	for (const unsigned char *c = (const unsigned char *)name; *c && used < room;) {
		uint32_t cp;
		size_t n = utf8_decode(c, &cp);

		if (!n || cp < 0x20 || cp == 0x7f) {
			out[used++] = '?';
			c++;
			continue;
		}
		if (used + n > room)
			break;
		memcpy(out + used, c, n);
		used += n;
		c += n;
	}
	snprintf(out + used, len - used, "%s", suffix);
}

/* "name" or "name+2" when the function ran in 2 more processes. */
static void top_process(const struct profile_function *f, char *out, size_t len)
{
	char name[32];

	top_printable(f->process, FRAME_PROCESS, name, sizeof(name));
	if (f->processes > 1)
		snprintf(out, len, "%s+%u", name, f->processes - 1);
	else
		snprintf(out, len, "%s", name);
}

static void top_header(const struct top_view *v, char *buf, size_t len)
{
	struct capture_stats cs;
	struct sampler_stats t;
	char losses[256];
	uint64_t lost;
	size_t procs = profile_node_child_count(profile_root(v->window));

	sampler_totals(v->sampler, &t);
	capture_stats(v->cap, &cs);
	lost = cli_losses(losses, sizeof(losses), &t, &cs, false);
	snprintf(buf, len,
		 "ebprof top: %u Hz on %d CPUs, %.1f s: %llu samples in %zu process%s; "
		 "lost %llu since start%s%s%s",
		 v->opts->sampling.sampler.frequency, sampler_cpu_count(v->sampler), v->seconds,
		 (unsigned long long)profile_total(v->window), procs, procs == 1 ? "" : "es",
		 (unsigned long long)lost, lost ? " (" : "", losses, lost ? ")" : "");
}

#define TOP_COLUMNS "  SELF%  TOTAL%  PROCESS          FUNCTION"

static void top_row(const struct top_view *v, const struct profile_function *f, char *buf,
		    size_t len)
{
	double hz = v->opts->sampling.sampler.frequency;
	char name[TOP_NAME_MAX], process[64];

	top_printable(f->name, f->kind, name, sizeof(name));
	top_process(f, process, sizeof(process));
	snprintf(buf, len, "%7.1f %7.1f  %-16s %s", profile_cpu_percent(f->self, hz, v->seconds),
		 profile_cpu_percent(f->total, hz, v->seconds), process, name);
}

static int top_print_table(struct top_view *v)
{
	struct profile_function *fns;
	char line[TOP_NAME_MAX + 128];
	size_t n;
	int err = top_functions(v, &fns, &n);

	if (err)
		return err;
	top_header(v, line, sizeof(line));
	printf("%s\n%s\n", line, TOP_COLUMNS);
	for (size_t i = 0; i < n && i < v->opts->lines; i++) {
		top_row(v, &fns[i], line, sizeof(line));
		printf("%s\n", line);
	}
	printf("\n");
	fflush(stdout);
	free(fns);
	return 0;
}

static void top_draw(struct top_view *v)
{
	struct profile_function *fns = NULL;
	char line[TOP_NAME_MAX + 128];
	size_t n = 0;
	int err = top_functions(v, &fns, &n);

	erase();
	top_header(v, line, sizeof(line));
	mvaddnstr(0, 0, line, COLS);
	snprintf(line, sizeof(line), "sorted by %s; kernel frames %s%s",
		 v->sort_total ? "total" : "self", v->hide_kernel ? "hidden" : "shown",
		 v->intervals ? "" : "; first interval under way");
	if (err)
		snprintf(line, sizeof(line), "cannot list the functions: %s", strerror(-err));
	mvaddnstr(1, 0, line, COLS);
	attron(A_REVERSE);
	mvaddnstr(2, 0, TOP_COLUMNS, COLS);
	attroff(A_REVERSE);
	for (size_t i = 0; i < n && (int)i + 4 < LINES; i++) {
		top_row(v, &fns[i], line, sizeof(line));
		mvaddnstr((int)i + 3, 0, line, COLS);
	}
	mvaddnstr(LINES - 1, 0, "s: sort by self  t: sort by total  k: hide/show kernel frames"
				"  q: quit", COLS);
	refresh();
	free(fns);
}

/* Waits for the next drain while answering keys; false once asked to quit. */
static bool top_wait_keys(struct top_view *v, double until)
{
	while (!cli_stop_signal()) {
		double left = until - cli_now();
		int key;

		if (left <= 0)
			return true;
		timeout(left > 0.1 ? 100 : (int)(left * 1000) + 1);
		key = getch();
		switch (key) {
		case 'q':
		case 'Q':
			return false;
		case 's':
			v->sort_total = false;
			break;
		case 't':
			v->sort_total = true;
			break;
		case 'k':
			v->hide_kernel = !v->hide_kernel;
			break;
		case KEY_RESIZE:
			break;
		default:
			continue;
		}
		top_draw(v);
	}
	return false;
}

/* Curses mode on stdout; NULL when the terminal type is unknown. */
static SCREEN *top_screen_start(void)
{
	SCREEN *screen = newterm(NULL, stdout, stdin);

	if (!screen)
		return NULL;
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	return screen;
}

static void top_screen_end(SCREEN **screen)
{
	if (!*screen)
		return;
	endwin();
	delscreen(*screen);
	*screen = NULL;
}

int cli_top(int argc, char **argv)
{
	struct top_opts o = { 0 };
	struct top_view v = { .opts = &o };
	SCREEN *screen = NULL;
	double start, last, next, end;
	bool interactive = isatty(STDOUT_FILENO) && isatty(STDIN_FILENO);
	const char *failed = NULL;
	int ret = 1, rc = 0;

	if (parse_top_opts(argc, argv, &o))
		return 2;
	v.window = profile_new();
	v.stripped = profile_new();
	if (!v.window || !v.stripped) {
		fprintf(stderr, "ebprof top: out of memory\n");
		goto free_all;
	}
	if (cli_sampling_start("top", &o.sampling, false, &v.cap, &v.sampler))
		goto free_all;
	/* Ours, not curses' (which installs its own only where none is set):
	 * a signal ends the loop, and the loop ends curses mode. */
	cli_stop_on_signals();
	if (interactive) {
		setlocale(LC_CTYPE, ""); /* UTF-8 names; numbers stay in the C locale */
		screen = top_screen_start();
		if (!screen) {
			fprintf(stderr, "ebprof top: cannot use the terminal (TERM=%s): set TERM "
					"to a known terminal type, or pipe the output for plain "
					"tables\n", getenv("TERM") ? getenv("TERM") : "unset");
			goto free_all;
		}
	}
	start = last = next = cli_now();
	end = o.duration_s ? start + (double)o.duration_s : 0;
	v.seconds = o.sampling.drain_ms / 1000.0;
	if (screen)
		top_draw(&v);
	while (!cli_stop_signal()) {
		next += o.sampling.drain_ms / 1000.0;
		if (end && next > end)
			next = end;
		if (screen) {
			if (!top_wait_keys(&v, next))
				break;
		} else {
			cli_sleep_until(next);
			if (cli_stop_signal())
				break;
		}
		profile_clear(v.window);
		rc = capture_drain(v.cap, v.window, NULL);
		if (rc) {
			failed = "draining the BPF maps";
			break;
		}
		v.seconds = cli_now() - last;
		last = cli_now();
		v.intervals++;
		if (screen)
			top_draw(&v);
		else if ((rc = top_print_table(&v))) {
			failed = "listing the functions";
			break;
		}
		if ((end && cli_now() >= end) || !cli_sampling_targets_alive(&o.sampling))
			break;
	}
	top_screen_end(&screen);
	if (rc) {
		fprintf(stderr, "ebprof top: %s failed: %s\n", failed, strerror(-rc));
		goto free_all;
	}
	ret = 0;

free_all:
	top_screen_end(&screen);
	capture_free(v.cap);
	sampler_free(v.sampler);
	profile_free(v.window);
	profile_free(v.stripped);
	return ret;
}
