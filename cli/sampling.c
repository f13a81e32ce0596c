/*
 * sampling: what `ebprof record` and `ebprof top` share, from the options
 * that pick what to sample to a running capture, and the words both use
 * for lost samples.
 *
 * Both commands are the same pipeline up to the profile: the options
 * (-p, -c, -F, --no-kernel, ...) become a sampler configuration, the
 * kernel's features are probed once, the capture (render/capture) is made
 * before the sampler so that new processes are reported from the first
 * sample on, and capture_attach() starts draining. What they do with the
 * profile differs; the commands own the loop, and share its clock and its
 * stop: SIGINT and SIGTERM set a flag (the command's only global) that
 * cuts a sleep short and ends the loop, so that what was sampled is kept.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "symbolizer/dbgfetch.h"

/*
 * How long sampling waits for its known targets to be prepared: python3's
 * tables build in ~60 ms here; the capture keeps it under half its stall
 * timeout.
 */
#define CLI_PREPARE_MS 2000

static volatile sig_atomic_t cli_stop_signal_seen;

static void cli_on_stop_signal(int sig)
{
	cli_stop_signal_seen = sig;
}

void cli_stop_on_signals(void)
{
	struct sigaction sa = { 0 };

	/* No SA_RESTART: a sleep or a read waiting for a key returns at once. */
	sa.sa_handler = cli_on_stop_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

int cli_stop_signal(void)
{
	return cli_stop_signal_seen;
}

double cli_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void cli_sleep_until(double deadline)
{
	double left = deadline - cli_now();
	struct timespec ts;

	if (left <= 0 || cli_stop_signal_seen)
		return;
	ts.tv_sec = (time_t)left;
	ts.tv_nsec = (long)((left - ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL); /* a signal cuts it short, as it should */
}

void cli_sampling_init(struct cli_sampling *o)
{
	memset(o, 0, sizeof(*o));
	sampler_config_init(&o->sampler);
	o->drain_ms = 1000;
	o->stall_s = CAPTURE_DEFAULT_STALL_MS / 1000;
}

static int bad_value(const char *cmd, const char *opt, const char *value, const char *want)
{
	fprintf(stderr, "ebprof %s: invalid %s '%s': %s\n", cmd, opt, value, want);
	return -1;
}

int cli_sampling_option(const char *cmd, struct cli_sampling *o, int opt, const char *arg)
{
	unsigned long v;

	switch (opt) {
	case 'p':
		if (cli_parse_uint(arg, 1, 0x7fffffff, &v))
			return bad_value(cmd, "PID", arg, "expected a process id");
		if (kill((pid_t)v, 0) && errno == ESRCH) {
			fprintf(stderr, "ebprof %s: no process with PID %lu\n", cmd, v);
			return -1;
		}
		if (o->sampler.n_tgids == CLI_MAX_TARGETS)
			return bad_value(cmd, "PID", arg, "too many PIDs (1024 at most)");
		o->tgids[o->sampler.n_tgids++] = (uint32_t)v;
		return 1;
	case 'c':
		if (!*arg || strlen(arg) >= SAMPLER_COMM_LEN)
			return bad_value(cmd, "process name", arg,
					 "expected 1 to 15 characters, as in /proc/PID/comm");
		if (o->sampler.n_comms == CLI_MAX_TARGETS)
			return bad_value(cmd, "process name", arg, "too many (1024 at most)");
		o->comms[o->sampler.n_comms++] = arg;
		return 1;
	case 'F':
		if (cli_parse_uint(arg, 1, SAMPLER_MAX_FREQUENCY, &v))
			return bad_value(cmd, "frequency", arg, "expected 1 to 100000 Hz");
		o->sampler.frequency = (unsigned int)v;
		return 1;
	case CLI_OPT_DRAIN:
		if (cli_parse_uint(arg, 10, 60000, &o->drain_ms))
			return bad_value(cmd, "drain interval", arg, "expected 10 to 60000 ms");
		return 1;
	case CLI_OPT_NO_KERNEL:
		o->sampler.kernel_stacks = false;
		return 1;
	case CLI_OPT_NO_USER:
		o->sampler.user_stacks = false;
		return 1;
	case CLI_OPT_PYTHON:
		o->sampler.python = true;
		return 1;
	case CLI_OPT_NO_PYTHON:
		o->sampler.python = false;
		return 1;
	case CLI_OPT_IDLE:
		o->sampler.include_idle = true;
		return 1;
	case CLI_OPT_SELF:
		o->sampler.include_self = true;
		return 1;
	case CLI_OPT_ADDRESSES:
		o->addresses = true;
		return 1;
	case CLI_OPT_INLINE:
		o->inlines = true;
		return 1;
	case CLI_OPT_NO_INLINE:
		o->inlines = false;
		return 1;
	case CLI_OPT_STALL:
		if (cli_parse_uint(arg, 1, 3600, &o->stall_s))
			return bad_value(cmd, "stall timeout", arg, "expected 1 to 3600 seconds");
		return 1;
	case CLI_OPT_MAX_SYMTAB:
		if (cli_parse_size(arg, 1024, 1ULL << 40, &o->max_symbol_table))
			return bad_value(cmd, "symbol table bound", arg,
					 "expected 1KiB to 1TiB (bytes, or with K, M, G or T)");
		return 1;
	case CLI_OPT_MAX_PERFMAP:
		if (cli_parse_size(arg, 1024, 1ULL << 40, &o->max_perf_map))
			return bad_value(cmd, "perf map bound", arg,
					 "expected 1KiB to 1TiB (bytes, or with K, M, G or T)");
		return 1;
	case CLI_OPT_UNWIND:
		if (!strcmp(arg, "fp"))
			o->sampler.unwind = SAMPLER_UNWIND_FP;
		else if (!strcmp(arg, "dwarf"))
			o->sampler.unwind = SAMPLER_UNWIND_TABLES;
		else if (!strcmp(arg, "auto"))
			o->sampler.unwind = SAMPLER_UNWIND_AUTO;
		else
			return bad_value(cmd, "unwind mode", arg, "expected fp, dwarf or auto");
		return 1;
	case CLI_OPT_MAX_FRAMES:
		if (cli_parse_uint(arg, 1, EBPROF_MAX_FRAMES, &v))
			return bad_value(cmd, "frame cap", arg, "expected 1 to 4096 frames");
		o->sampler.max_frames = (uint32_t)v;
		return 1;
	case CLI_OPT_MODE:
		if (sampler_parse_mode(arg) < 0)
			return bad_value(cmd, "mode", arg, "expected cpu, offcpu or wall");
		o->sampler.mode = (enum sampler_mode)sampler_parse_mode(arg);
		return 1;
	case CLI_OPT_OFFCPU_PERIOD:
		if (cli_parse_uint(arg, SAMPLER_MIN_OFFCPU_PERIOD_NS / 1000,
				   SAMPLER_MAX_OFFCPU_PERIOD_NS / 1000, &v))
			return bad_value(cmd, "off-CPU period", arg,
					 "expected 1 to 10000000 microseconds");
		o->sampler.offcpu_period_ns = (uint64_t)v * 1000;
		return 1;
	case CLI_OPT_OFFCPU_MIN:
		if (cli_parse_uint(arg, 0, 3600UL * 1000000, &v))
			return bad_value(cmd, "minimum wait", arg,
					 "expected 0 to 3600000000 microseconds");
		o->sampler.offcpu_min_ns = (uint64_t)v * 1000;
		return 1;
	case CLI_OPT_OFFCPU_RATE:
		if (cli_parse_uint(arg, 1, 1000000, &v))
			return bad_value(cmd, "off-CPU rate cap", arg,
					 "expected 1 to 1000000 updates a second");
		o->sampler.offcpu_max_rate = (uint32_t)v;
		return 1;
	case CLI_OPT_UNWIND_MEMORY:
		if (cli_parse_uint(arg, 1, 1u << 20, &o->unwind_mib))
			return bad_value(cmd, "unwind memory", arg, "expected 1 to 1048576 MiB");
		return 1;
	default:
		return 0;
	}
}

uint64_t cli_sampling_unit_ns(const struct cli_sampling *o)
{
	return o->sampler.mode == SAMPLER_MODE_CPU ? 0 : 1000;
}

/* The capture's weights: time in microseconds, in modes that count time. */
static void cli_sampling_weights(const struct cli_sampling *o, struct capture_config *cc)
{
	uint64_t period = o->sampler.offcpu_period_ns ? o->sampler.offcpu_period_ns
						      : SAMPLER_DEFAULT_OFFCPU_PERIOD_NS;
	unsigned int hz = o->sampler.frequency ? o->sampler.frequency
					       : SAMPLER_DEFAULT_FREQUENCY;

	if (o->sampler.mode == SAMPLER_MODE_CPU)
		return;
	cc->offcpu_weight = period / 1000;
	/* A tick is 1/F s: 10101 us at 99 Hz, off by 1e-6 of itself. */
	cc->cpu_weight = (1000000 + hz / 2) / hz;
}

int cli_sampling_finish(const char *cmd, struct cli_sampling *o, int argc, char **argv)
{
	if (optind < argc) {
		fprintf(stderr, "ebprof %s: unexpected argument '%s'\n", cmd, argv[optind]);
		return -1;
	}
	if (!o->sampler.kernel_stacks && !o->sampler.user_stacks) {
		fprintf(stderr, "ebprof %s: --no-kernel and --no-user leave nothing to sample\n",
			cmd);
		return -1;
	}
	o->sampler.tgids = o->sampler.n_tgids ? o->tgids : NULL;
	o->sampler.tgids_fixed = true; /* the command line's -p list is all there is */
	o->sampler.comms = o->sampler.n_comms ? o->comms : NULL;
	return 0;
}

bool cli_sampling_targets_alive(const struct cli_sampling *o)
{
	if (!o->sampler.n_tgids)
		return true;
	for (size_t i = 0; i < o->sampler.n_tgids; i++)
		if (!kill((pid_t)o->tgids[i], 0) || errno != ESRCH)
			return true;
	return false;
}

/* A Python process profiled without its Python frames (render/pytrack), said once. */
static void cli_warn(const char *message, void *ctx)
{
	fprintf(stderr, "ebprof %s: warning: %s\n", (const char *)ctx, message);
}

/*
 * The processes -p and -c name that run already: their snapshots, unwind
 * tables and Python layouts are loaded before sampling starts, so that
 * their first samples have Python frames too. What could not be is said,
 * and sampling starts anyway (those samples are walked as before, and
 * counted in the python line's native-only samples).
 * EBPROF_NO_PREPARE (tests) turns it off, to show what it changes.
 */
static void cli_prepare(const char *cmd, struct capture *cap, bool quiet)
{
	struct capture_prepared prep;
	int rc = capture_prepare(cap, CLI_PREPARE_MS, &prep);

	if (quiet)
		return;
	if (rc)
		fprintf(stderr,
			"ebprof %s: warning: cannot list the target processes before sampling "
			"(%s): their first samples may lack Python frames\n",
			cmd, strerror(-rc));
	else if (prep.timed_out)
		fprintf(stderr,
			"ebprof %s: warning: %llu of %llu target processes not ready after %u ms "
			"(tables still building): their first samples may lack Python frames\n",
			cmd, (unsigned long long)(prep.targets - prep.ready),
			(unsigned long long)prep.targets, prep.ms);
}

int cli_sampling_start(const char *cmd, struct cli_sampling *o, bool quiet,
		       struct capture **cap, struct sampler **s)
{
	const char *urls, *debug_root;
	struct capture_config cc;
	char err[512];
	int rc;

	*cap = NULL;
	*s = NULL;
	/* What this kernel lacks is turned off, and said once. */
	kfeat_probe(&o->features);
	for (int id = 0; id < KFEAT_NR && !quiet; id++) {
		if (kfeat_state(&o->features, id) == KFEAT_ABSENT) {
			kfeat_missing_message(id, err, sizeof(err));
			fprintf(stderr, "ebprof %s: %s\n", cmd, err);
		}
	}
	o->sampler.features = &o->features;
	/* The symbolizer first: reports are read from the first sample on. */
	capture_config_init(&cc);
	cc.symbolizer.addresses = o->addresses;
	cc.symbolizer.inlines = o->inlines;
	cc.symbolizer.elf_bounds.max_table = o->max_symbol_table;
	cc.symbolizer.perfmap_max_bytes = o->max_perf_map;
	cc.symbolizer.maps_text_only =
		kfeat_state(&o->features, KFEAT_PROCMAP_QUERY) == KFEAT_ABSENT;
	/* The standard variable of debuginfod clients turns fetching on. */
	urls = getenv("DEBUGINFOD_URLS");
	cc.symbolizer.debuginfod = urls && *urls;
	/* Before any thread starts: it may set the environment. */
	rc = cc.symbolizer.debuginfod ? dbgfetch_prepare() : 0;
	if (rc) {
		fprintf(stderr,
			"ebprof %s: cannot make debuginfod's cache directory: %s; set "
			"DEBUGINFOD_CACHE_PATH to a writable one\n",
			cmd, strerror(-rc));
		return -1;
	}
	/* Where separate debug files are looked for (the tests point it away). */
	debug_root = getenv("EBPROF_DEBUG_ROOT");
	if (debug_root)
		cc.symbolizer.debug_root = debug_root;
	cc.stall_ms = (unsigned int)(o->stall_s * 1000);
	cc.interrupt_signal = SIGURG;
	cc.unwind.max_bytes = (uint64_t)o->unwind_mib << 20;
	cc.unwind.max_frames = o->sampler.max_frames;
	cli_sampling_weights(o, &cc);
	if (!quiet) {
		cc.warn = cli_warn;
		cc.warn_ctx = (void *)cmd;
	}
	rc = capture_new(&cc, cap);
	if (rc) {
		fprintf(stderr, "ebprof %s: cannot start naming samples: %s\n", cmd,
			strerror(-rc));
		return -1;
	}
	o->sampler.report_processes = true;
	/* Processes named up front are prepared before the first sample (cli_prepare()). */
	o->sampler.start_later = (o->sampler.n_tgids || o->sampler.n_comms) &&
				 !getenv("EBPROF_NO_PREPARE");
	if (sampler_open(&o->sampler, s, err, sizeof(err))) {
		fprintf(stderr, "ebprof %s: %s\n", cmd, err);
		goto fail;
	}
	rc = capture_attach(*cap, *s);
	if (rc) {
		fprintf(stderr, "ebprof %s: cannot start the new-process thread: %s%s\n", cmd,
			strerror(-rc), rc == -EMFILE || rc == -ENFILE ? ": raise `ulimit -n`" : "");
		goto fail;
	}
	if (o->sampler.start_later)
		cli_prepare(cmd, *cap, quiet);
	if (sampler_start(*s, err, sizeof(err))) {
		fprintf(stderr, "ebprof %s: %s\n", cmd, err);
		goto fail;
	}
	return 0;
fail:
	capture_free(*cap);
	sampler_free(*s);
	*cap = NULL;
	*s = NULL;
	return -1;
}

uint64_t cli_losses(char *buf, size_t len, const struct sampler_stats *t,
		    const struct capture_stats *cs, bool all)
{
	const struct {
		const char *words;
		uint64_t n;
	} causes[] = {
		{ "kernel stack", t->kstack_errors },
		{ "user stack", t->ustack_errors },
		{ "hash collision", t->stack_collisions },
		{ "stacks map full", t->stacks_full },
		{ "counts map full", t->counts_full },
		{ "missing stack", t->missing_stacks },
		{ "off-CPU throttled", t->offcpu_throttled },
		{ "symbolizer stalled", cs->lost_stalled },
		{ "out of memory", cs->lost_memory },
	};
	uint64_t lost = sampler_stats_lost(t) + cs->lost_stalled + cs->lost_memory;
	size_t used = 0;

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < sizeof(causes) / sizeof(causes[0]); i++) {
		int w;

		if (!all && !causes[i].n)
			continue;
		if (used >= len)
			break;
		w = snprintf(buf + used, len - used, "%s%s %llu", used ? ", " : "",
			     causes[i].words, (unsigned long long)causes[i].n);
		if (w < 0)
			break;
		used += (size_t)w;
	}
	return lost;
}
