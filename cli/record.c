/*
 * record: sample stacks for a while, then write one flame graph.
 *
 * The loop is the whole pipeline in a straight line: open the sampler,
 * drain it every interval into the symbolizer and a profile, stop on the
 * deadline, on Ctrl-C or SIGTERM, or when every traced process has exited,
 * drain one last time and write the output. Ctrl-C never loses what was
 * recorded. The summary on stderr counts every loss by cause.
 *
 * Meanwhile the sampler's watch thread has the symbolizer snapshot each
 * new process the moment it is first sampled, so a process that exits
 * before the drain (a compiler in a build) is still named, and has the
 * unwinder load the unwind tables of its files (and unwind the samples
 * taken before they were loaded). A mutex keeps the two threads out of
 * the symbolizer at the same time; the unwinder has its own.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bpf/sampler.h"
#include "cli/cli.h"
#include "symbolizer/symbolizer.h"
#include "symbolizer/unwinder.h"

#define MAX_TARGETS 1024
/* The process, every user frame the unwinder may give, the kernel frames. */
#define MAX_FRAMES (1 + EBPROF_MAX_FRAMES + EBPROF_MAX_DEPTH)

struct record_opts {
	struct sampler_config sampler;
	uint32_t tgids[MAX_TARGETS];
	const char *comms[MAX_TARGETS];
	unsigned long duration_s;
	unsigned long drain_ms;
	enum cli_format format;
	const char *output;
	const char *title;
	double min_width;
	bool addresses;
	bool quiet;
	unsigned long unwind_mib; /* table memory bound; 0: the unwinder's default */
};

struct record_run {
	pthread_mutex_t lock; /* the symbolizer and the counts below */
	struct symbolizer *sym;
	struct unwinder *unwinder; /* NULL: stacks walked by frame pointer */
	uint64_t tracked, gone; /* new processes snapshot, or already gone */
	struct profile *profile;
	struct frame frames[MAX_FRAMES];
	int err;
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static void record_usage(FILE *out)
{
	fputs("usage: ebprof record [options]\n"
	      "Sample on-CPU stacks (system-wide, or of the given processes) and write a\n"
	      "flame graph. Ctrl-C stops early and still writes the output.\n"
	      "\n"
	      "  -p, --pid PID          profile this process (repeatable); default: all\n"
	      "  -c, --comm NAME        profile processes with this exact name (repeatable)\n"
	      "  -d, --duration SECONDS how long to sample (default 30)\n"
	      "  -F, --frequency HZ     samples per second per CPU (default 99)\n"
	      "      --format FORMAT    svg, folded, speedscope or pprof (default svg)\n"
	      "  -o, --output FILE      where to write (default ebprof.svg / ebprof.folded;\n"
	      "                         - for stdout)\n"
	      "      --drain-interval-ms MS  how often to empty the kernel maps (default 1000)\n"
	      "      --unwind MODE      user stacks by fp (frame pointers, as the kernel\n"
	      "                         walks them, 127 frames), dwarf (.eh_frame tables,\n"
	      "                         frame pointers where a file has none) or auto\n"
	      "                         (dwarf where the kernel can, else fp; the default)\n"
	      "      --max-frames N     deepest user stack with tables (1-4096, default 1024)\n"
	      "      --unwind-memory MIB  bound on unwind tables' memory (default 64)\n"
	      "      --no-kernel        leave kernel stacks out\n"
	      "      --no-user          leave user stacks out\n"
	      "      --include-idle     sample the idle task too\n"
	      "      --include-self     sample ebprof itself too\n"
	      "      --addresses        add +0xOFFSET to every resolved frame\n"
	      "      --title TEXT       the SVG's title\n"
	      "      --minwidth PX      prune SVG frames narrower than this (default 0.1)\n"
	      "  -q, --quiet            no summary on stderr\n",
	      out);
}

enum { OPT_FORMAT = 256, OPT_DRAIN, OPT_NO_KERNEL, OPT_NO_USER, OPT_IDLE, OPT_SELF,
       OPT_ADDRESSES, OPT_TITLE, OPT_MINWIDTH, OPT_UNWIND, OPT_MAX_FRAMES, OPT_UNWIND_MEMORY };

static const struct option record_longopts[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "comm", required_argument, NULL, 'c' },
	{ "duration", required_argument, NULL, 'd' },
	{ "frequency", required_argument, NULL, 'F' },
	{ "output", required_argument, NULL, 'o' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "drain-interval-ms", required_argument, NULL, OPT_DRAIN },
	{ "no-kernel", no_argument, NULL, OPT_NO_KERNEL },
	{ "no-user", no_argument, NULL, OPT_NO_USER },
	{ "include-idle", no_argument, NULL, OPT_IDLE },
	{ "include-self", no_argument, NULL, OPT_SELF },
	{ "addresses", no_argument, NULL, OPT_ADDRESSES },
	{ "title", required_argument, NULL, OPT_TITLE },
	{ "minwidth", required_argument, NULL, OPT_MINWIDTH },
	{ "unwind", required_argument, NULL, OPT_UNWIND },
	{ "max-frames", required_argument, NULL, OPT_MAX_FRAMES },
	{ "unwind-memory", required_argument, NULL, OPT_UNWIND_MEMORY },
	{ 0 },
};

static int bad_value(const char *opt, const char *value, const char *want)
{
	fprintf(stderr, "ebprof record: invalid %s '%s': %s\n", opt, value, want);
	return -1;
}

static int parse_record_opts(int argc, char **argv, struct record_opts *o)
{
	unsigned long v;
	char *end;
	int c;

	sampler_config_init(&o->sampler);
	o->duration_s = 30;
	o->drain_ms = 1000;
	o->format = CLI_FORMAT_SVG;
	o->min_width = -1;
	while ((c = getopt_long(argc, argv, "p:c:d:F:o:qh", record_longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (cli_parse_uint(optarg, 1, 0x7fffffff, &v))
				return bad_value("PID", optarg, "expected a process id");
			if (kill((pid_t)v, 0) && errno == ESRCH) {
				fprintf(stderr, "ebprof record: no process with PID %lu\n", v);
				return -1;
			}
			if (o->sampler.n_tgids == MAX_TARGETS)
				return bad_value("PID", optarg, "too many PIDs (1024 at most)");
			o->tgids[o->sampler.n_tgids++] = (uint32_t)v;
			break;
		case 'c':
			if (!*optarg || strlen(optarg) >= SAMPLER_COMM_LEN)
				return bad_value("process name", optarg,
						 "expected 1 to 15 characters, as in /proc/PID/comm");
			if (o->sampler.n_comms == MAX_TARGETS)
				return bad_value("process name", optarg, "too many (1024 at most)");
			o->comms[o->sampler.n_comms++] = optarg;
			break;
		case 'd':
			if (cli_parse_uint(optarg, 1, 31 * 24 * 3600UL, &o->duration_s))
				return bad_value("duration", optarg, "expected 1 to 2678400 seconds");
			break;
		case 'F':
			if (cli_parse_uint(optarg, 1, SAMPLER_MAX_FREQUENCY, &v))
				return bad_value("frequency", optarg, "expected 1 to 100000 Hz");
			o->sampler.frequency = (unsigned int)v;
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
			if (cli_parse_format(optarg) < 0)
				return bad_value("format", optarg, "expected " CLI_FORMATS);
			o->format = cli_parse_format(optarg);
			break;
		case OPT_DRAIN:
			if (cli_parse_uint(optarg, 10, 60000, &o->drain_ms))
				return bad_value("drain interval", optarg, "expected 10 to 60000 ms");
			break;
		case OPT_NO_KERNEL:
			o->sampler.kernel_stacks = false;
			break;
		case OPT_NO_USER:
			o->sampler.user_stacks = false;
			break;
		case OPT_IDLE:
			o->sampler.include_idle = true;
			break;
		case OPT_SELF:
			o->sampler.include_self = true;
			break;
		case OPT_ADDRESSES:
			o->addresses = true;
			break;
		case OPT_TITLE:
			o->title = optarg;
			break;
		case OPT_UNWIND:
			if (!strcmp(optarg, "fp"))
				o->sampler.unwind = SAMPLER_UNWIND_FP;
			else if (!strcmp(optarg, "dwarf"))
				o->sampler.unwind = SAMPLER_UNWIND_TABLES;
			else if (!strcmp(optarg, "auto"))
				o->sampler.unwind = SAMPLER_UNWIND_AUTO;
			else
				return bad_value("unwind mode", optarg, "expected fp, dwarf or auto");
			break;
		case OPT_MAX_FRAMES:
			if (cli_parse_uint(optarg, 1, EBPROF_MAX_FRAMES, &v))
				return bad_value("frame cap", optarg, "expected 1 to 4096 frames");
			o->sampler.max_frames = (uint32_t)v;
			break;
		case OPT_UNWIND_MEMORY:
			if (cli_parse_uint(optarg, 1, 1u << 20, &o->unwind_mib))
				return bad_value("unwind memory", optarg,
						 "expected 1 to 1048576 MiB");
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
	if (optind < argc) {
		fprintf(stderr, "ebprof record: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (!o->sampler.kernel_stacks && !o->sampler.user_stacks) {
		fprintf(stderr, "ebprof record: --no-kernel and --no-user leave nothing to sample\n");
		return -1;
	}
	o->sampler.tgids = o->sampler.n_tgids ? o->tgids : NULL;
	o->sampler.comms = o->sampler.n_comms ? o->comms : NULL;
	if (!o->output)
		o->output = o->format == CLI_FORMAT_SVG ? "ebprof.svg"
			  : o->format == CLI_FORMAT_FOLDED ? "ebprof.folded"
			  : o->format == CLI_FORMAT_SPEEDSCOPE ? "ebprof.speedscope.json"
								: "ebprof.pb.gz";
	return 0;
}

static int add_sample(const struct sampler_sample *s, void *ctx)
{
	struct record_run *run = ctx;
	size_t n;
	int err;

	/* Per sample, so the watch thread never waits for a whole drain. */
	pthread_mutex_lock(&run->lock);
	n = symbolizer_stack_started(run->sym, s->tgid, s->start_time, s->comm, s->uips, s->n_uips,
				     s->kips, s->n_kips, run->frames, MAX_FRAMES);
	err = profile_add(run->profile, run->frames, n, s->count);
	pthread_mutex_unlock(&run->lock);
	if (err)
		run->err = err;
	return err;
}

/* True while at least one traced PID still runs (always true system-wide). */
static bool targets_alive(const struct record_opts *o)
{
	if (!o->sampler.n_tgids)
		return true;
	for (size_t i = 0; i < o->sampler.n_tgids; i++)
		if (!kill((pid_t)o->tgids[i], 0) || errno != ESRCH)
			return true;
	return false;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * On the sampler's watch thread, within milliseconds of a process's first
 * sample; the main thread may be resolving a drain at the same time.
 */
static int track_process(const struct sampler_process *p, void *ctx)
{
	struct record_run *run = ctx;
	int err;

	/* Tables first: the samples copied before them wait behind this report. */
	if (run->unwinder)
		unwinder_track(run->unwinder, p->tgid, p->start_time);
	pthread_mutex_lock(&run->lock);
	err = symbolizer_track_started(run->sym, p->tgid, p->start_time);
	if (err == -ESRCH)
		run->gone++;
	else if (!err)
		run->tracked++;
	pthread_mutex_unlock(&run->lock);
	return 0;
}

static void sleep_until(double deadline)
{
	double left = deadline - now_s();
	struct timespec ts;

	if (left <= 0 || stop_signal)
		return;
	ts.tv_sec = (time_t)left;
	ts.tv_nsec = (long)((left - ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL); /* a signal cuts it short, as it should */
}

/* How user stacks were walked, and every way a walk stopped early. */
static void print_unwind_summary(const struct sampler *s, const struct record_run *run,
				 const struct sampler_stats *t)
{
	struct unwinder_stats us;

	if (sampler_unwind_mode(s) != SAMPLER_UNWIND_TABLES) {
		fprintf(stderr, "ebprof: user stacks by frame pointer (the kernel's walk, at most "
				"127 frames)\n");
		return;
	}
	unwinder_stats(run->unwinder, &us);
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
		".eh_frame); %llu refused at the bound, %llu files without unwind info\n",
		(unsigned long long)us.tables, (unsigned long long)us.rows,
		us.table_bytes / 1048576.0, us.rows ? (double)us.table_bytes / us.rows : 0.0,
		us.table_kernel_bytes / 1048576.0, us.max_bytes / 1048576.0,
		(unsigned long long)us.built, us.build_us / 1000.0,
		us.frame_bytes ? us.build_us / 1000.0 / (us.frame_bytes / 1e6) : 0.0,
		(unsigned long long)us.refused, (unsigned long long)us.no_cfi);
}

static void print_summary(const struct record_opts *o, const struct sampler *s,
			  const struct record_run *run, const struct profile *p, double secs)
{
	struct sampler_stats t;
	struct symbolizer_stats ss;
	uint64_t lost;

	sampler_totals(s, &t);
	symbolizer_stats(run->sym, &ss);
	lost = sampler_stats_lost(&t);
	fprintf(stderr,
		"ebprof: %.1f s at %u Hz on %d CPUs: %llu samples, %llu recorded, "
		"%llu stacks in the profile\n",
		secs, o->sampler.frequency, sampler_cpu_count(s), (unsigned long long)t.samples,
		(unsigned long long)t.recorded, (unsigned long long)profile_stack_count(p));
	fprintf(stderr,
		"ebprof: lost %llu samples (%.3f%%): kernel stack %llu, user stack %llu, "
		"hash collision %llu, stacks map full %llu, counts map full %llu, "
		"missing stack %llu\n",
		(unsigned long long)lost, t.samples ? 100.0 * lost / t.samples : 0.0,
		(unsigned long long)t.kstack_errors, (unsigned long long)t.ustack_errors,
		(unsigned long long)t.stack_collisions, (unsigned long long)t.stacks_full,
		(unsigned long long)t.counts_full, (unsigned long long)t.missing_stacks);
	fprintf(stderr,
		"ebprof: not profiled (by choice): %llu filtered out, %llu idle; "
		"unresolved frames: %llu of %llu (%.1f%%)%s\n",
		(unsigned long long)t.filtered, (unsigned long long)t.idle,
		(unsigned long long)ss.unresolved, (unsigned long long)ss.frames,
		ss.frames ? 100.0 * ss.unresolved / ss.frames : 0.0,
		ss.kernel_hidden ? "; kernel addresses hidden (kptr_restrict, or no CAP_SYSLOG)"
				 : "");
	if (ss.perfmaps_refused)
		fprintf(stderr,
			"ebprof: refused %llu JIT perf map(s) not owned by their process's user "
			"or writable by others; those JIT frames are unnamed\n",
			(unsigned long long)ss.perfmaps_refused);
	fprintf(stderr,
		"ebprof: new processes: %llu reported, %llu snapshot, %llu gone before their "
		"snapshot, %llu reports lost (ring buffer full); %llu process records held\n",
		(unsigned long long)t.process_events, (unsigned long long)run->tracked,
		(unsigned long long)run->gone, (unsigned long long)t.process_events_lost,
		(unsigned long long)ss.processes);
	print_unwind_summary(s, run, &t);
}

int cli_record(int argc, char **argv)
{
	struct record_opts o = { 0 };
	struct record_run run = { 0 };
	struct symbolizer_config scfg;
	struct kfeat features;
	struct sigaction sa = { 0 };
	struct sampler *s = NULL;
	struct sampler_watch *watch = NULL;
	char err[512], subtitle[256];
	double start, next, end;
	int ret = 1, rc = 0;

	if (parse_record_opts(argc, argv, &o))
		return 2;
	/* What this kernel lacks is turned off, and said once. */
	kfeat_probe(&features);
	for (int id = 0; id < KFEAT_NR && !o.quiet; id++) {
		if (kfeat_state(&features, id) == KFEAT_ABSENT) {
			kfeat_missing_message(id, err, sizeof(err));
			fprintf(stderr, "ebprof record: %s\n", err);
		}
	}
	o.sampler.features = &features;
	/* The symbolizer first: reports are read from the first sample on. */
	symbolizer_config_init(&scfg);
	scfg.addresses = o.addresses;
	scfg.maps_text_only = kfeat_state(&features, KFEAT_PROCMAP_QUERY) == KFEAT_ABSENT;
	run.sym = symbolizer_new(&scfg);
	run.profile = profile_new();
	if (!run.sym || !run.profile) {
		fprintf(stderr, "ebprof record: out of memory\n");
		goto free_all;
	}
	o.sampler.report_processes = true;
	if (sampler_open(&o.sampler, &s, err, sizeof(err))) {
		fprintf(stderr, "ebprof record: %s\n", err);
		goto free_all;
	}
	pthread_mutex_init(&run.lock, NULL);
	if (sampler_unwmaps(s)) {
		struct unwinder_config ucfg;

		unwinder_config_init(&ucfg);
		ucfg.max_bytes = (uint64_t)o.unwind_mib << 20;
		ucfg.max_frames = o.sampler.max_frames;
		if (unwinder_new(sampler_unwmaps(s), &ucfg, &run.unwinder)) {
			fprintf(stderr, "ebprof record: out of memory\n");
			goto free_all;
		}
		sampler_set_copy_handler(s, unwinder_unwind_copy, run.unwinder);
	}
	rc = sampler_watch_start(s, track_process, &run, &watch);
	if (rc) {
		fprintf(stderr, "ebprof record: cannot start the new-process thread: %s\n",
			strerror(-rc));
		goto free_all;
	}
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* Loading takes a moment (the verifier checks the unwinder): say when it samples. */
	if (!o.quiet)
		fprintf(stderr, "ebprof: sampling at %u Hz on %d CPUs, user stacks by %s\n",
			o.sampler.frequency, sampler_cpu_count(s),
			sampler_unwind_mode(s) == SAMPLER_UNWIND_TABLES ? "unwind tables"
									: "frame pointers");

	start = now_s();
	end = start + (double)o.duration_s;
	next = start;
	while (!stop_signal) {
		next += o.drain_ms / 1000.0;
		sleep_until(next < end ? next : end);
		rc = sampler_drain(s, add_sample, &run, NULL);
		if (rc) {
			fprintf(stderr, "ebprof record: %s\n",
				run.err ? "out of memory while aggregating stacks"
					: "draining the BPF maps failed");
			if (rc < 0 && !run.err)
				fprintf(stderr, "ebprof record: %s\n", strerror(-rc));
			break;
		}
		pthread_mutex_lock(&run.lock);
		symbolizer_end_drain(run.sym);
		pthread_mutex_unlock(&run.lock);
		if (run.unwinder)
			unwinder_end_drain(run.unwinder);
		if (now_s() >= end || !targets_alive(&o))
			break;
	}
	/*
	 * Whatever ended the loop, the last window was drained above. What the
	 * watch thread had not read yet (reports, and samples copied before
	 * their tables) is read here, and the copies recorded with one drain
	 * more: no copied sample is left behind.
	 */
	sampler_watch_stop(watch);
	watch = NULL;
	if (!rc) {
		sampler_poll_processes(s, track_process, &run, 0);
		if (sampler_drain(s, add_sample, &run, NULL) == 0) {
			pthread_mutex_lock(&run.lock);
			symbolizer_end_drain(run.sym);
			pthread_mutex_unlock(&run.lock);
		}
	}
	if (!o.quiet)
		print_summary(&o, s, &run, run.profile, now_s() - start);
	snprintf(subtitle, sizeof(subtitle), "%llu samples at %u Hz over %.1f s",
		 (unsigned long long)profile_total(run.profile), o.sampler.frequency,
		 now_s() - start);
	if (cli_write_profile(run.profile, o.format, o.output, o.title, subtitle, o.min_width,
			      o.sampler.frequency))
		goto free_all;
	if (!o.quiet && strcmp(o.output, "-"))
		fprintf(stderr, "ebprof: wrote %s\n", o.output);
	ret = 0;

free_all:
	sampler_watch_stop(watch);
	profile_free(run.profile);
	symbolizer_free(run.sym);
	unwinder_free(run.unwinder);
	sampler_free(s);
	return ret;
}
