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
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sys/resource.h>

#include "bpf/kfeat.h"
#include "bpf/sampler.h"
#include "cli/cli.h"
#include "render/capture.h"

#define MAX_TARGETS 1024

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
	unsigned long stall_s;
	uint64_t max_symbol_table, max_perf_map;
	unsigned long unwind_mib; /* table memory bound; 0: the unwinder's default */
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
	      "      --stall-timeout S  give up on a symbolizer making no progress for S\n"
	      "                         seconds (default 5; see README, Reliability)\n"
	      "      --max-symbol-table SIZE  skip ELF symbol tables larger than this\n"
	      "                         (default 256MiB)\n"
	      "      --max-perf-map SIZE  read at most this much of a JIT perf map\n"
	      "                         (default 256MiB)\n"
	      "  -q, --quiet            no summary on stderr\n",
	      out);
}

enum { OPT_FORMAT = 256, OPT_DRAIN, OPT_NO_KERNEL, OPT_NO_USER, OPT_IDLE, OPT_SELF,
       OPT_ADDRESSES, OPT_TITLE, OPT_MINWIDTH, OPT_STALL, OPT_MAX_SYMTAB, OPT_MAX_PERFMAP,
       OPT_UNWIND, OPT_MAX_FRAMES, OPT_UNWIND_MEMORY };

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
	{ "stall-timeout", required_argument, NULL, OPT_STALL },
	{ "max-symbol-table", required_argument, NULL, OPT_MAX_SYMTAB },
	{ "max-perf-map", required_argument, NULL, OPT_MAX_PERFMAP },
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
	o->stall_s = CAPTURE_DEFAULT_STALL_MS / 1000;
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
		case OPT_STALL:
			if (cli_parse_uint(optarg, 1, 3600, &o->stall_s))
				return bad_value("stall timeout", optarg, "expected 1 to 3600 seconds");
			break;
		case OPT_MAX_SYMTAB:
			if (cli_parse_size(optarg, 1024, 1ULL << 40, &o->max_symbol_table))
				return bad_value("symbol table bound", optarg,
						 "expected 1KiB to 1TiB (bytes, or with K, M, G or T)");
			break;
		case OPT_MAX_PERFMAP:
			if (cli_parse_size(optarg, 1024, 1ULL << 40, &o->max_perf_map))
				return bad_value("perf map bound", optarg,
						 "expected 1KiB to 1TiB (bytes, or with K, M, G or T)");
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
		"mappings on FUSE or network file systems not read\n",
		(unsigned long long)u->tables, (unsigned long long)u->rows,
		u->table_bytes / 1048576.0, u->rows ? (double)u->table_bytes / u->rows : 0.0,
		u->table_kernel_bytes / 1048576.0, u->max_bytes / 1048576.0,
		(unsigned long long)u->built, u->build_us / 1000.0,
		u->frame_bytes ? u->build_us / 1000.0 / (u->frame_bytes / 1e6) : 0.0,
		(unsigned long long)u->refused, (unsigned long long)u->no_cfi,
		(unsigned long long)u->remote);
}

static void print_summary(const struct record_opts *o, const struct sampler *s,
			  const struct capture_stats *cs, const struct profile *p, double secs)
{
	const struct symbolizer_stats *ss = &cs->symbolizer;
	struct sampler_stats t;
	uint64_t lost;

	sampler_totals(s, &t);
	lost = sampler_stats_lost(&t) + cs->lost_stalled + cs->lost_memory;
	fprintf(stderr,
		"ebprof: %.1f s at %u Hz on %d CPUs: %llu samples, %llu recorded, "
		"%llu stacks in the profile\n",
		secs, o->sampler.frequency, sampler_cpu_count(s), (unsigned long long)t.samples,
		(unsigned long long)t.recorded, (unsigned long long)profile_stack_count(p));
	fprintf(stderr,
		"ebprof: lost %llu samples (%.3f%%): kernel stack %llu, user stack %llu, "
		"hash collision %llu, stacks map full %llu, counts map full %llu, "
		"missing stack %llu, symbolizer stalled %llu, out of memory %llu\n",
		(unsigned long long)lost, t.samples ? 100.0 * lost / t.samples : 0.0,
		(unsigned long long)t.kstack_errors, (unsigned long long)t.ustack_errors,
		(unsigned long long)t.stack_collisions, (unsigned long long)t.stacks_full,
		(unsigned long long)t.counts_full, (unsigned long long)t.missing_stacks,
		(unsigned long long)cs->lost_stalled, (unsigned long long)cs->lost_memory);
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
	if (cs->stalls)
		fprintf(stderr,
			"ebprof: the symbolizer stalled %llu time(s) (no progress for %lu s; "
			"interrupted %llu time(s)): %llu samples lost, %llu samples of the processes "
			"it stalled on named [stalled]%s\n",
			(unsigned long long)cs->stalls, o->stall_s,
			(unsigned long long)cs->interrupts, (unsigned long long)cs->lost_stalled,
			(unsigned long long)cs->unnamed_stalled,
			cs->given_up ? "; gave up naming after that" : "");
	fprintf(stderr,
		"ebprof: new processes: %llu reported, %llu snapshot, %llu gone before their "
		"snapshot, %llu reports lost (ring buffer full); %llu process records held\n",
		(unsigned long long)t.process_events, (unsigned long long)cs->tracked,
		(unsigned long long)cs->gone,
		(unsigned long long)t.process_events_lost + cs->track_dropped,
		(unsigned long long)ss->processes);
	print_unwind_summary(s, cs, &t);
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

static void capture_config_from(const struct record_opts *o, struct capture_config *cc)
{
	capture_config_init(cc);
	cc->symbolizer.addresses = o->addresses;
	cc->symbolizer.elf_bounds.max_table = o->max_symbol_table;
	cc->symbolizer.perfmap_max_bytes = o->max_perf_map;
	cc->stall_ms = (unsigned int)(o->stall_s * 1000);
	cc->interrupt_signal = SIGURG;
	cc->unwind.max_bytes = (uint64_t)o->unwind_mib << 20;
	cc->unwind.max_frames = o->sampler.max_frames;
}

int cli_record(int argc, char **argv)
{
	struct record_opts o = { 0 };
	struct capture_config cc;
	struct capture_stats cs;
	struct kfeat features;
	struct sigaction sa = { 0 };
	struct sampler *s = NULL;
	struct capture *cap = NULL;
	struct profile *profile = NULL;
	char err[512], subtitle[256];
	double start, next, end;
	bool out_of_fds;
	int ret = 1, rc;

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
	capture_config_from(&o, &cc);
	cc.symbolizer.maps_text_only =
		kfeat_state(&features, KFEAT_PROCMAP_QUERY) == KFEAT_ABSENT;
	rc = capture_new(&cc, &cap);
	profile = profile_new();
	if (rc || !profile) {
		fprintf(stderr, "ebprof record: cannot start naming samples: %s\n",
			strerror(rc ? -rc : ENOMEM));
		goto free_all;
	}
	o.sampler.report_processes = true;
	if (sampler_open(&o.sampler, &s, err, sizeof(err))) {
		fprintf(stderr, "ebprof record: %s\n", err);
		goto free_all;
	}
	rc = capture_attach(cap, s);
	if (rc) {
		fprintf(stderr, "ebprof record: cannot start the new-process thread: %s%s\n",
			strerror(-rc), rc == -EMFILE || rc == -ENFILE ? ": raise `ulimit -n`" : "");
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
		rc = capture_drain(cap, profile, NULL);
		if (rc) {
			fprintf(stderr, "ebprof record: draining the BPF maps failed: %s\n",
				strerror(-rc));
			break;
		}
		if (now_s() >= end || !targets_alive(&o))
			break;
	}
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
	if (!o.quiet)
		print_summary(&o, s, &cs, profile, now_s() - start);
	out_of_fds = fds_ran_out(&cs);
	snprintf(subtitle, sizeof(subtitle), "%llu samples at %u Hz over %.1f s",
		 (unsigned long long)profile_total(profile), o.sampler.frequency, now_s() - start);
	if (cli_write_profile(profile, o.format, o.output, o.title, subtitle, o.min_width,
			      o.sampler.frequency))
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
