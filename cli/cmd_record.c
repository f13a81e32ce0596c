/*
 * record: sample stacks for a while, then write one flame graph.
 *
 * The loop is the whole pipeline in a straight line: open the sampler,
 * drain it every interval into the symbolizer and a profile, stop on the
 * deadline, on Ctrl-C or SIGTERM, or when every traced process has exited,
 * drain one last time and write the output. Ctrl-C never loses what was
 * recorded. The summary on stderr counts every loss by cause.
 *
 * Naming the samples is render/capture's: a worker thread does it, and
 * snapshots each new process the moment it is first sampled (a compiler
 * in a build exits before the drain). This thread never opens a file of
 * a profiled process, so a read that blocks there cannot keep it from
 * stopping on time: capture_drain() returns within the stall timeout of
 * the worker's last progress, whatever the worker is stuck in. With
 * unwind tables, capture also has the unwinder load each new process's
 * tables and unwind the samples copied before they were loaded.
 *
 * On a terminal, a progress line on stderr says after each drain how far
 * the recording is, what it holds and how to stop it; it is erased before
 * the summary, and never written when stderr is a file or a pipe.
 */
#include <errno.h>
#include <inttypes.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sys/ioctl.h>
#include <sys/resource.h>

#include "cli/cli.h"

struct record_opts {
	struct cli_sampling sampling;
	unsigned long duration_s;
	enum format format;
	const char *output;
	char default_output[32]; /* "ebprof." and the format's ending */
	const char *title;
	double min_width;
	bool quiet;
};

static void record_usage(FILE *out)
{
	fputs("usage: ebprof record [options]\n"
	      "Sample on-CPU stacks (system-wide, or of the given processes) and write a\n"
	      "flame graph. Ctrl-C stops early and still writes the output.\n"
	      "\n"
	      "  -d, --duration SECONDS how long to sample (default 30)\n"
	      "      --format FORMAT    svg, folded, speedscope or pprof (default svg)\n"
	      "  -o, --output FILE      where to write (default ebprof.svg / ebprof.folded;\n"
	      "                         - for stdout)\n"
	      "      --title TEXT       the SVG's title\n"
	      "      --minwidth PX      prune SVG frames narrower than this (default 0.1)\n"
	      "  -q, --quiet            no progress line and no summary on stderr\n"
	      CLI_SAMPLING_USAGE,
	      out);
}

enum { OPT_FORMAT = CLI_OPT_SAMPLING_END, OPT_TITLE, OPT_MINWIDTH };

static const struct option record_longopts[] = {
	CLI_SAMPLING_OPTIONS,
	{ "duration", required_argument, NULL, 'd' },
	{ "output", required_argument, NULL, 'o' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "title", required_argument, NULL, OPT_TITLE },
	{ "minwidth", required_argument, NULL, OPT_MINWIDTH },
	{ 0 },
};

static int bad_value(const char *opt, const char *value, const char *want)
{
	fprintf(stderr, "ebprof record: invalid %s '%s': %s\n", opt, value, want);
	return -1;
}

static int parse_record_opts(int argc, char **argv, struct record_opts *o)
{
	char *end;
	int c, rc;

	cli_sampling_init(&o->sampling);
	o->duration_s = 30;
	o->format = FORMAT_SVG;
	o->min_width = -1;
	while ((c = getopt_long(argc, argv, CLI_SAMPLING_SHORTOPTS "d:o:qh", record_longopts,
				NULL)) != -1) {
		rc = cli_sampling_option("record", &o->sampling, c, optarg);
		if (rc < 0)
			return -1;
		if (rc > 0)
			continue;
		switch (c) {
		case 'd':
			if (cli_parse_duration("record", optarg, &o->duration_s))
				return -1;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			record_usage(stdout);
			exit(0);
		case OPT_FORMAT:
			if (format_parse(optarg) < 0)
				return bad_value("format", optarg, "expected " FORMAT_NAMES);
			o->format = format_parse(optarg);
			break;
		case OPT_TITLE:
			o->title = optarg;
			break;
		case OPT_MINWIDTH:
			o->min_width = strtod(optarg, &end);
			if (*end || end == optarg || !(o->min_width >= 0 && o->min_width <= 1000))
				return bad_value("minwidth", optarg, "expected 0 to 1000 pixels");
			break;
		default:
			record_usage(stderr);
			return -1;
		}
	}
	if (cli_sampling_finish("record", &o->sampling, argc, argv))
		return -1;
	if (!o->output) {
		snprintf(o->default_output, sizeof(o->default_output), "ebprof.%s",
			 format_ext(o->format));
		o->output = o->default_output;
	}
	return 0;
}

/* The open-file limit now, for a message that says what to raise. */
static unsigned long long fd_limit(void)
{
	struct rlimit rl;

	return getrlimit(RLIMIT_NOFILE, &rl) ? 0 : (unsigned long long)rl.rlim_cur;
}

/* Files the gate refused and bounds hit: one line, only when there are some. */
static void print_refusals(const struct symbolizer_stats *ss)
{
	static const char *const causes[TARGET_CAUSES] = {
		[TARGET_NOT_REGULAR] = "not a regular file", [TARGET_MISMATCH] = "not the mapped file",
		[TARGET_OUTSIDE_ROOT] = "outside the process's root",
		[TARGET_TOO_LARGE] = "too large", [TARGET_NO_FDS] = "out of file descriptors",
		[TARGET_PERMISSION] = "permission", [TARGET_GONE] = "gone",
		[TARGET_STALLED] = "stalled", [TARGET_OTHER] = "other errors",
	};
	const struct elfsym_breaches *b = &ss->elf_breaches;
	uint64_t total = 0;
	char line[1024];
	int len = 0;

	for (int i = 0; i < TARGET_CAUSES; i++) {
		if (!ss->refused[i])
			continue;
		len += snprintf(line + len, sizeof(line) - (size_t)len, "%s%s %llu",
				total ? ", " : "", causes[i], (unsigned long long)ss->refused[i]);
		total += ss->refused[i];
	}
	if (total)
		fprintf(stderr, "ebprof: files of profiled processes not opened: %llu (%s); their "
				"frames are named [file+0xoffset]\n",
			(unsigned long long)total, line);
	if (b->tables || b->symbols || b->sections || ss->perfmap_lines_too_long ||
	    ss->perfmaps_truncated)
		fprintf(stderr,
			"ebprof: bounds hit: %llu symbol tables over --max-symbol-table, %llu with "
			"too many symbols, %llu ELF files with too many or too large headers or "
			"notes, %llu perf-map lines too long, %llu perf maps read only to "
			"--max-perf-map\n",
			(unsigned long long)b->tables, (unsigned long long)b->symbols,
			(unsigned long long)b->sections,
			(unsigned long long)ss->perfmap_lines_too_long,
			(unsigned long long)ss->perfmaps_truncated);
}

/* How user stacks were walked, and every way a walk stopped early. */
static void print_unwind_summary(const struct sampler *s, const struct capture_stats *cs,
				 const struct sampler_stats *t)
{
	const struct unwinder_stats *u = &cs->unwind;

	if (sampler_unwind_mode(s) != SAMPLER_UNWIND_TABLES || !cs->unwinding) {
		fprintf(stderr, "ebprof: user stacks by frame pointer (the kernel's walk, at most "
				"127 frames)\n");
		return;
	}
	fprintf(stderr,
		"ebprof: user stacks by unwind tables: %llu truncated (no table yet %llu, no row "
		"%llu, unsupported rule %llu, read fault %llu, depth cap %llu); %llu frames by "
		"frame pointer; %llu samples copied before their tables, %llu of them recorded\n",
		(unsigned long long)sampler_stats_truncated(t), (unsigned long long)t->unw_no_table,
		(unsigned long long)t->unw_no_row, (unsigned long long)t->unw_unsupported,
		(unsigned long long)t->unw_read_fault, (unsigned long long)t->unw_depth_cap,
		(unsigned long long)t->unw_fp_frames, (unsigned long long)t->copied,
		(unsigned long long)t->copies_recorded);
	fprintf(stderr,
		"ebprof: unwind tables: %llu loaded, %llu rows, %.2f MiB (%.2f bytes a row; %.2f "
		"MiB in the kernel, bound %.0f MiB); %llu built in %.1f ms (%.1f ms per MB of "
		".eh_frame); %llu refused at the bound, %llu files without unwind info, %llu "
		"mappings on FUSE or network file systems not read\n"
		"ebprof: unwind table cache: %llu built, %llu reused after their last user "
		"left, %llu kept now with no user, %llu evicted at the bound, %llu expired\n"
		"ebprof: unwind table builds: %llu stalled and given up (those files walked by "
		"frame pointer); %llu copied samples waited for their tables, %llu unwound "
		"without one (%llu still being built at the wait's limit, %llu stalled); %llu "
		"copied samples of processes that exited before their maps were read; of the "
		"copies with a pc their process's maps lacked, %llu had the maps read again and "
		"%llu were not (their code was gone by the read)\n",
		(unsigned long long)u->tables, (unsigned long long)u->rows,
		u->table_bytes / 1048576.0, u->rows ? (double)u->table_bytes / u->rows : 0.0,
		u->table_kernel_bytes / 1048576.0, u->max_bytes / 1048576.0,
		(unsigned long long)u->built, u->build_us / 1000.0,
		u->frame_bytes ? u->build_us / 1000.0 / (u->frame_bytes / 1e6) : 0.0,
		(unsigned long long)u->refused, (unsigned long long)u->no_cfi,
		(unsigned long long)u->remote, (unsigned long long)u->built,
		(unsigned long long)u->reused, (unsigned long long)u->kept,
		(unsigned long long)u->evicted, (unsigned long long)u->expired,
		(unsigned long long)u->build_stalled, (unsigned long long)u->copy_waits,
		(unsigned long long)u->wait_timeout + u->wait_stalled,
		(unsigned long long)u->wait_timeout, (unsigned long long)u->wait_stalled,
		(unsigned long long)u->copy_gone, (unsigned long long)u->copy_rereads,
		(unsigned long long)u->copy_unmapped);
	if (sampler_python(s))
		fprintf(stderr,
			"ebprof: python: %llu processes walked, %llu profiled natively (warned), "
			"%llu not loaded; %llu frames, %llu walks cut short by a read fault; names "
			"%llu cached, %llu read, %llu of replaced code, %llu unreadable; files "
			"%llu examined, %llu verdicts reused (%llu kept, %.0f KiB), %llu read in part "
			"or not at all for their declared sizes; %llu samples in "
			"the interpreter without Python frames\n",
			(unsigned long long)cs->python.loaded,
			(unsigned long long)cs->python.unsupported,
			(unsigned long long)cs->python.refused, (unsigned long long)t->py_frames,
			(unsigned long long)t->py_faults,
			(unsigned long long)cs->symbolizer.python_hits,
			(unsigned long long)cs->symbolizer.python_reads,
			(unsigned long long)cs->symbolizer.python_stale,
			(unsigned long long)cs->symbolizer.python_faults,
			(unsigned long long)cs->python.examined, (unsigned long long)cs->python.reused,
			(unsigned long long)cs->python.cache_entries, cs->python.cache_bytes / 1024.0,
			(unsigned long long)cs->python.oversized,
			(unsigned long long)cs->python.native_only);
}

/*
 * Time the hypervisor took from the CPUs has no on-CPU samples: said
 * whenever there was some, and always in wall mode, whose totals it cuts.
 * Neither does a tick that fell due and never ran the program (the
 * hypervisor's hold, reported as steal or not, among the causes): said
 * whenever the events let it be counted.
 */
static void print_held(const struct sampler *s, const struct sampler_stats *t, unsigned int hz)
{
	bool wall = sampler_mode(s) == SAMPLER_MODE_WALL;
	uint64_t ns = 0;
	int ret;

	if (sampler_mode(s) == SAMPLER_MODE_OFFCPU)
		return;
	ret = sampler_steal_ns(s, &ns);
	if (ret && wall)
		fprintf(stderr, "ebprof: steal: unknown (/proc/stat: %s)\n", strerror(-ret));
	else if (!ret && (ns || wall))
		fprintf(stderr,
			"ebprof: steal: the hypervisor held these CPUs for %.0f ms of the recording "
			"(/proc/stat); the tasks it stopped have no on-CPU samples for that time\n",
			ns / 1e6);
	if (sampler_ticks_measured(s)) {
		uint64_t due = t->samples - t->offcpu_samples + t->ticks_missed;

		fprintf(stderr,
			"ebprof: ticks missed: %llu (%.0f ms at %u Hz, %.2f%% of those due): they "
			"fell due while a CPU could not take them (held by the hypervisor, "
			"interrupts off, the event throttled); their time is in no sample\n",
			(unsigned long long)t->ticks_missed, t->ticks_missed * 1e3 / hz, hz,
			due ? 100.0 * t->ticks_missed / due : 0.0);
		if (t->cpus_detached || t->cpus_reopened)
			fprintf(stderr,
				"ebprof: CPU hotplug: %llu CPUs went offline, %llu came online and "
				"were sampled from the next drain; the time a CPU was offline is in "
				"no sample and no tick missed\n",
				(unsigned long long)t->cpus_detached,
				(unsigned long long)t->cpus_reopened);
	}
}

static void print_summary(const struct record_opts *o, const struct sampler *s,
			  const struct capture_stats *cs, const struct profile *p, double secs)
{
	const struct symbolizer_stats *ss = &cs->symbolizer;
	const char *urls = getenv("DEBUGINFOD_URLS");
	struct sampler_stats t;
	char losses[512];
	uint64_t lost;

	sampler_totals(s, &t);
	lost = cli_losses(losses, sizeof(losses), &t, cs, true);
	fprintf(stderr,
		"ebprof: %.1f s at %u Hz on %d CPUs: %llu samples, %llu recorded, "
		"%llu stacks in the profile\n",
		secs, o->sampling.sampler.frequency, sampler_cpu_count(s), (unsigned long long)t.samples,
		(unsigned long long)sampler_stats_recorded(&t),
		(unsigned long long)profile_stack_count(p));
	fprintf(stderr, "ebprof: lost %llu samples (%.3f%%): %s\n", (unsigned long long)lost,
		t.samples ? 100.0 * lost / t.samples : 0.0, losses);
	print_held(s, &t, o->sampling.sampler.frequency);
	fprintf(stderr,
		"ebprof: not profiled (by choice): %llu filtered out, %llu idle; "
		"unresolved frames: %llu of %llu (%.1f%%)%s\n",
		(unsigned long long)t.filtered, (unsigned long long)t.idle,
		(unsigned long long)ss->unresolved, (unsigned long long)ss->frames,
		ss->frames ? 100.0 * ss->unresolved / ss->frames : 0.0,
		ss->kernel_hidden ? "; kernel addresses hidden (kptr_restrict, or no CAP_SYSLOG)"
				  : "");
	if (ss->perfmaps_refused)
		fprintf(stderr,
			"ebprof: refused %llu JIT perf map(s) not owned by their process's user "
			"or writable by others; those JIT frames are unnamed\n",
			(unsigned long long)ss->perfmaps_refused);
	print_refusals(ss);
	if (ss->debuginfod_error)
		fprintf(stderr,
			"ebprof: debuginfod: DEBUGINFOD_URLS is set but the client could not "
			"start (%s): install libdebuginfod1; stripped files keep grouped names\n",
			strerror(-ss->debuginfod_error));
	else if (urls && *urls)
		fprintf(stderr,
			"ebprof: debuginfod: %llu debug files fetched, %llu not found, %llu failed "
			"(server down, timeout, unusable file), %llu still in flight\n",
			(unsigned long long)ss->debuginfod_fetched,
			(unsigned long long)ss->debuginfod_not_found,
			(unsigned long long)ss->debuginfod_failed,
			(unsigned long long)ss->debuginfod_pending);
	if (o->sampling.inlines)
		fprintf(stderr,
			"ebprof: inlined frames: %llu added; files with DWARF %llu, without %llu; "
			"%llu addresses walked in DWARF, %llu answered from the cache; "
			"%.2f MiB of chains, %.2f MiB of debug sections held\n",
			(unsigned long long)ss->inlined_frames, (unsigned long long)ss->inline_files,
			(unsigned long long)ss->inline_files_none,
			(unsigned long long)ss->inline_misses, (unsigned long long)ss->inline_hits,
			ss->inline_bytes / 1048576.0, ss->inline_dwarf_bytes / 1048576.0);
	if (cs->stalls)
		fprintf(stderr,
			"ebprof: the symbolizer stalled %llu time(s) (no progress for %lu s; "
			"interrupted %llu time(s)): %llu samples lost, %llu samples of the processes "
			"it stalled on named [stalled]%s\n",
			(unsigned long long)cs->stalls, o->sampling.stall_s,
			(unsigned long long)cs->interrupts, (unsigned long long)cs->lost_stalled,
			(unsigned long long)cs->unnamed_stalled,
			cs->given_up ? "; gave up naming after that" : "");
	fprintf(stderr,
		"ebprof: new processes: %llu reported, %llu snapshot, %llu gone before their "
		"snapshot, %llu reports lost (ring buffer full), %llu put off to after an "
		"exec; %llu process records held; forks not exec'd: %llu with maps read from "
		"their parent, %llu with their parent's kept from an earlier fork\n",
		(unsigned long long)t.process_events, (unsigned long long)cs->tracked,
		(unsigned long long)cs->gone,
		(unsigned long long)t.process_events_lost + cs->track_dropped,
		(unsigned long long)t.process_in_exec,
		(unsigned long long)ss->processes, (unsigned long long)cs->parent_reads,
		(unsigned long long)cs->borrowed);
	print_unwind_summary(s, cs, &t);
	if (sampler_mode(s) != SAMPLER_MODE_CPU)
		fprintf(stderr,
			"ebprof: off-CPU: %llu context switches, %llu samples of %.3f ms each "
			"(%.3f s), %llu recorded, %llu throttled (--offcpu-max-rate); %llu waits "
			"under --offcpu-min-us, %llu untimed (no task storage or clock); %llu user "
			"stacks walked at a new place; %llu waits whose switch-in the program "
			"missed, timed by the scheduler's stamp of it or the task's run time "
			"since; timed by %s\n",
			(unsigned long long)t.offcpu_switches, (unsigned long long)t.offcpu_samples,
			sampler_offcpu_period_ns(s) / 1e6,
			t.offcpu_samples * (double)sampler_offcpu_period_ns(s) / 1e9,
			(unsigned long long)t.offcpu_recorded, (unsigned long long)t.offcpu_throttled,
			(unsigned long long)t.offcpu_short, (unsigned long long)t.offcpu_untimed,
			(unsigned long long)t.offcpu_walks, (unsigned long long)t.offcpu_unseen,
			sampler_offcpu_rq_clock(s) ? "the run queue's clock" : "bpf_ktime_get_ns()");
}

/*
 * Out of descriptors is the environment's fault, not the input's, and the
 * profile it leaves is mostly unnamed: say so, whatever -q says, and fail.
 */
static bool fds_ran_out(const struct capture_stats *cs)
{
	uint64_t n = cs->symbolizer.refused[TARGET_NO_FDS];

	if (!n)
		return false;
	fprintf(stderr,
		"ebprof record: Too many open files: raise `ulimit -n` (now %llu): %llu files of "
		"profiled processes could not be opened, and their frames are unnamed\n",
		fd_limit(), (unsigned long long)n);
	return true;
}

/*
 * The progress line: one line on stderr, rewritten in place with a
 * carriage return and padded over the previous one; cut to the terminal's
 * width so that it never wraps (a wrapped line cannot be rewritten).
 * progress->width is what to erase; 0: nothing shown.
 */
struct record_progress {
	bool on;	/* stderr is a terminal and not -q */
	size_t width;	/* columns written last */
};

static size_t terminal_columns(int fd)
{
	struct winsize ws;

	if (ioctl(fd, TIOCGWINSZ, &ws) || ws.ws_col < 2)
		return 80;
	return ws.ws_col;
}

static void progress_show(struct record_progress *pr, const char *line)
{
	size_t cols = terminal_columns(STDERR_FILENO) - 1, len = strlen(line);

	if (len > cols)
		len = cols;
	fprintf(stderr, "\r%.*s%*s", (int)len, line,
		pr->width > len ? (int)(pr->width - len) : 0, "");
	fflush(stderr);
	pr->width = len > pr->width ? len : pr->width;
}

static void progress_update(struct record_progress *pr, const struct record_opts *o,
			    const struct sampler *s, struct capture *cap,
			    const struct profile *p, double elapsed)
{
	struct capture_stats cs;
	struct sampler_stats t;
	char losses[256], line[512];
	uint64_t lost;
	size_t procs = profile_node_child_count(profile_root(p));

	if (!pr->on)
		return;
	sampler_totals(s, &t);
	capture_stats(cap, &cs);
	lost = cli_losses(losses, sizeof(losses), &t, &cs, false);
	if (lost)
		snprintf(line, sizeof(line), "ebprof: %.0f s of %lu s, %llu samples, %zu "
			 "process%s, lost %llu (%s); Ctrl-C to stop early",
			 elapsed, o->duration_s, (unsigned long long)sampler_stats_recorded(&t), procs,
			 procs == 1 ? "" : "es", (unsigned long long)lost, losses);
	else
		snprintf(line, sizeof(line), "ebprof: %.0f s of %lu s, %llu samples, %zu "
			 "process%s; Ctrl-C to stop early",
			 elapsed, o->duration_s, (unsigned long long)sampler_stats_recorded(&t), procs,
			 procs == 1 ? "" : "es");
	progress_show(pr, line);
}

/* Erases the line and puts the cursor back at its start. */
static void progress_erase(struct record_progress *pr)
{
	if (!pr->on || !pr->width)
		return;
	fprintf(stderr, "\r%*s\r", (int)pr->width, "");
	fflush(stderr);
	pr->width = 0;
}

/* The graph's subtitle: what was counted, how, and over how long. */
static void record_subtitle(const struct record_opts *o, const struct sampler *s,
			    const struct profile *p, double secs, char *buf, size_t len)
{
	enum sampler_mode mode = sampler_mode(s);
	double period_ms = sampler_offcpu_period_ns(s) / 1e6;

	if (mode == SAMPLER_MODE_CPU)
		snprintf(buf, len, "%llu samples at %u Hz over %.1f s",
			 (unsigned long long)profile_total(p), o->sampling.sampler.frequency, secs);
	else if (mode == SAMPLER_MODE_OFFCPU)
		snprintf(buf, len, "%.3f s off-CPU (a sample per %.3f ms) over %.1f s",
			 profile_total(p) / 1e6, period_ms, secs);
	else
		snprintf(buf, len, "%.3f s wall: on-CPU at %u Hz, off-CPU a sample per %.3f ms, "
			 "over %.1f s", profile_total(p) / 1e6, o->sampling.sampler.frequency,
			 period_ms, secs);
}

/* Loading takes a moment (the verifier checks the unwinder): say when it samples. */
static void record_say_start(const struct record_opts *o, const struct sampler *s)
{
	const char *walk = sampler_unwind_mode(s) != SAMPLER_UNWIND_TABLES ? "frame pointers"
			   : sampler_offcpu_fp(s)
				   ? "unwind tables (off-CPU ones by frame pointers: this kernel's "
				     "verifier refused the table walk on sched_switch)"
				   : "unwind tables";
	double period_ms = sampler_offcpu_period_ns(s) / 1e6;
	unsigned int hz = o->sampling.sampler.frequency;
	const char *why;
	size_t threads = sampler_task_events(s, &why);
	uint64_t verified;
	double load_s;

	if (sampler_mode(s) == SAMPLER_MODE_CPU)
		fprintf(stderr, "ebprof: sampling at %u Hz on %d CPUs, user stacks by %s\n", hz,
			sampler_cpu_count(s), walk);
	else if (sampler_mode(s) == SAMPLER_MODE_OFFCPU)
		fprintf(stderr, "ebprof: sampling off-CPU time (a sample per %.3f ms) on %d CPUs, "
				"user stacks by %s\n", period_ms, sampler_cpu_count(s), walk);
	else
		fprintf(stderr, "ebprof: sampling wall time (on-CPU at %u Hz, off-CPU a sample per "
				"%.3f ms) on %d CPUs, user stacks by %s\n", hz, period_ms,
			sampler_cpu_count(s), walk);
	load_s = sampler_load_cost(s, &verified);
	fprintf(stderr, "ebprof: programs loaded in %.2f s (the kernel's verifier processed %" PRIu64
			" instructions)\n", load_s, verified);
	if (threads)
		fprintf(stderr, "ebprof: a CPU-clock event on each of the %zu thread%s of the -p "
				"processes (and on the threads they start): no other task is "
				"interrupted\n", threads, threads == 1 ? "" : "s");
	else if (why)
		fprintf(stderr, "ebprof: a CPU-clock event per CPU, other processes' ticks "
				"rejected by the program: %s\n", why);
}

int cli_record(int argc, char **argv)
{
	struct record_opts o = { 0 };
	struct record_progress progress = { 0 };
	struct capture_stats cs;
	struct sampler *s = NULL;
	struct capture *cap = NULL;
	struct profile *profile = NULL;
	char subtitle[256];
	double start, next, end, sampled;
	bool out_of_fds;
	int ret = 1, rc = 0;

	if (parse_record_opts(argc, argv, &o))
		return 2;
	profile = profile_new();
	if (!profile) {
		fprintf(stderr, "ebprof record: cannot start naming samples: %s\n",
			strerror(ENOMEM));
		goto free_all;
	}
	if (cli_sampling_start("record", &o.sampling, o.quiet, &cap, &s))
		goto free_all;
	cli_stop_on_signals();
	progress.on = !o.quiet && isatty(STDERR_FILENO);
	if (!o.quiet)
		record_say_start(&o, s);

	start = cli_now();
	end = start + (double)o.duration_s;
	next = start;
	progress_update(&progress, &o, s, cap, profile, 0);
	while (!cli_stop_signal()) {
		next += o.sampling.drain_ms / 1000.0;
		cli_sleep_until(next < end ? next : end);
		rc = capture_drain(cap, profile, NULL);
		if (rc) {
			progress_erase(&progress);
			fprintf(stderr, "ebprof record: draining the BPF maps failed: %s\n",
				strerror(-rc));
			break;
		}
		if (cli_now() >= end || !cli_sampling_targets_alive(&o.sampling))
			break;
		progress_update(&progress, &o, s, cap, profile, cli_now() - start);
	}
	progress_erase(&progress);
	/*
	 * Whatever ended the loop, the last window was drained above. What the
	 * watch thread had not read yet (reports, and samples copied before
	 * their tables) is read now, and recorded with one drain more: no
	 * copied sample is left behind.
	 */
	if (!rc)
		capture_finish(cap, profile, NULL);
	capture_stats(cap, &cs);
	capture_free(cap);
	cap = NULL;
	/*
	 * The span the samples and the ticks missed cover ends at the stop,
	 * not after the last samples were named: that can take a while (a
	 * large library's symbols, read cold) and is no part of the recording.
	 */
	sampled = sampler_sampled_s(s);
	if (sampled <= 0)
		sampled = cli_now() - start;
	if (!o.quiet)
		print_summary(&o, s, &cs, profile, sampled);
	out_of_fds = fds_ran_out(&cs);
	record_subtitle(&o, s, profile, sampled, subtitle, sizeof(subtitle));
	if (cli_write_profile(profile, o.format, o.output,
			      &(struct format_options){ o.title, subtitle, o.min_width,
							o.sampling.sampler.frequency,
							cli_sampling_unit_ns(&o.sampling) }))
		goto free_all;
	if (!o.quiet && strcmp(o.output, "-"))
		fprintf(stderr, "ebprof: wrote %s\n", o.output);
	ret = out_of_fds ? 1 : 0;

free_all:
	capture_free(cap);
	profile_free(profile);
	sampler_free(s);
	return ret;
}
