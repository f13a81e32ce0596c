/*
 * ebprof: the collectd plugin, the composition root of sampler,
 * symbolizer, profile, metrics and spool.
 *
 * collectd calls four functions: config (parse <Plugin ebprof> into
 * struct pconf), init (load and attach the BPF sampler, then register the
 * read callback, so a host that cannot sample loses only this plugin),
 * read (every interval: drain the sampler's maps, symbolize each stack,
 * aggregate into this interval's profile, dispatch per-function and
 * health metrics, merge into the spool window and write the window when
 * it is complete) and shutdown (a last drain, the partial window to the
 * spool, and everything freed).
 *
 * All state lives in one static struct. collectd never runs one read
 * callback twice at once, and shutdown runs after the read threads have
 * stopped, so the struct needs no lock. Naming samples and snapshotting
 * new processes is render/capture's, on a worker thread of its own: the
 * read callback and shutdown never open a file of a profiled process, so
 * a read that blocks there (a FUSE file nobody answers) cannot hang
 * collectd. A drain returns within StallTimeout of the worker's last
 * progress; past it the worker is interrupted, then abandoned, and the
 * values keep flowing. With unwind tables, capture also owns the
 * unwinder, which loads each new process's tables and unwinds the
 * samples copied before they were loaded.
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>

#include "collectd/core/daemon/collectd.h"
#include "collectd/core/daemon/plugin.h"

#include "bpf/sampler.h"
#include "plugin/config.h"
#include "plugin/metrics.h"
#include "plugin/spool.h"
#include "render/capture.h"
#include "render/profile.h"

#define EBPROF_MAX_RATE_PATH "/proc/sys/kernel/perf_event_max_sample_rate"
#define EBPROF_MMAP_THRESHOLD (256 * 1024)   /* bytes: see ebprof_malloc_thresholds() */
#define EBPROF_TRIM_THRESHOLD (1024 * 1024)
/* Init waits at most this for the PID and Process targets to be prepared (ebprof_prepare_and_start()). */
#define EBPROF_PREPARE_MS 2000

static struct {
	struct pconf conf;
	struct sampler *sampler;
	struct capture *capture;  /* names samples, snapshots new processes */
	struct profile *interval; /* this read's samples */
	struct profile *offcpu;	  /* this read's off-CPU time, in us (Mode offcpu, wall) */
	struct profile *window;	  /* the spool window being filled */
	struct spool *spool;	  /* NULL without SpoolDir */
	struct metrics_batch batch;

	double read_interval;	       /* seconds */
	unsigned int reads_per_window; /* SpoolInterval / read interval */
	unsigned int window_reads;
	time_t window_start;
	struct timespec last_drain;
	uint64_t last_frames, last_unresolved; /* symbolizer totals at the last read */
	uint64_t lost_memory; /* samples the spool window could not store */
	uint64_t lost_window_bytes; /* of those, over SpoolWindowMemory */
	uint64_t last_stalls; /* stalls logged so far */

	/* The plugin's own CPU time, summed over its callbacks. */
	uint64_t cpu_user_us, cpu_system_us;

	bool spool_failing; /* an error was logged; log again only on recovery */
	char spool_error[512];
	bool warned_kernel_hidden; /* said once: kptr_restrict hides the kernel */
	bool warned_perfmaps;	   /* said once: a planted perf map was refused */
	bool warned_fds;	   /* said once: out of file descriptors */
	bool warned_debuginfod;
	struct kfeat features;	   /* what the kernel offers, probed at init */
} ebprof;

/* --- the plugin's own CPU time -------------------------------------------- */

/*
 * RUSAGE_THREAD around each callback, not RUSAGE_SELF: collectd runs
 * every plugin in one process, and RUSAGE_SELF would bill us for the
 * others. The BPF program's own cost runs in the sampled tasks' context
 * and is not in here; the README says so.
 */
static void ebprof_cpu_mark(struct rusage *ru)
{
	if (getrusage(RUSAGE_THREAD, ru) < 0)
		memset(ru, 0, sizeof(*ru));
}

static uint64_t ebprof_tv_us(const struct timeval *tv)
{
	return (uint64_t)tv->tv_sec * 1000000u + (uint64_t)tv->tv_usec;
}

static void ebprof_cpu_add(const struct rusage *start)
{
	struct rusage end;

	ebprof_cpu_mark(&end);
	if (ebprof_tv_us(&end.ru_utime) >= ebprof_tv_us(&start->ru_utime))
		ebprof.cpu_user_us += ebprof_tv_us(&end.ru_utime) - ebprof_tv_us(&start->ru_utime);
	if (ebprof_tv_us(&end.ru_stime) >= ebprof_tv_us(&start->ru_stime))
		ebprof.cpu_system_us +=
			ebprof_tv_us(&end.ru_stime) - ebprof_tv_us(&start->ru_stime);
}

static double ebprof_seconds_between(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

/* --- config --------------------------------------------------------------- */

static int ebprof_config(oconfig_item_t *ci)
{
	/* Non-zero makes collectd refuse the whole configuration. */
	return pconf_parse(&ebprof.conf, ci) ? -1 : 0;
}

/* --- spool ---------------------------------------------------------------- */

/* Logs a spool error once, and once more when the spool works again. */
static void ebprof_spool_status(int rc, const char *err)
{
	if (rc && (!ebprof.spool_failing || strcmp(err, ebprof.spool_error) != 0)) {
		ERROR(PLUGIN_LOG "spool: %s; metrics continue, flame graphs are not written "
				 "until this is fixed (logged once)",
		      err);
		snprintf(ebprof.spool_error, sizeof(ebprof.spool_error), "%s", err);
		ebprof.spool_failing = true;
	} else if (!rc && ebprof.spool_failing) {
		NOTICE(PLUGIN_LOG "spool: writing to %s again", ebprof.conf.spool_dir);
		ebprof.spool_failing = false;
		ebprof.spool_error[0] = '\0';
	}
}

static void ebprof_spool_window(void)
{
	char title[256], subtitle[256], from[32], to[32], err[512];
	time_t now = time(NULL);
	struct tm tm;
	int rc;

	if (!ebprof.spool)
		return;
	gmtime_r(&ebprof.window_start, &tm);
	strftime(from, sizeof(from), "%Y-%m-%d %H:%M:%S", &tm);
	gmtime_r(&now, &tm);
	strftime(to, sizeof(to), "%H:%M:%S", &tm);
	snprintf(title, sizeof(title), "ebprof on %s", hostname_g ? hostname_g : "localhost");
	snprintf(subtitle, sizeof(subtitle), "%s to %s UTC, %llu samples at %u Hz", from, to,
		 (unsigned long long)profile_total(ebprof.window), ebprof.conf.frequency);
	rc = spool_write(ebprof.spool, ebprof.window, now, title, subtitle, err, sizeof(err));
	ebprof_spool_status(rc, err);
	profile_clear(ebprof.window);
	ebprof.window_reads = 0;
	ebprof.window_start = now;
}

/* --- read ----------------------------------------------------------------- */

/*
 * Adds this read's samples to the spool window, unless the window's tree
 * has reached SpoolWindowMemory: its samples are then counted lost (the
 * lost-memory metric), and the next window starts empty.
 */
static void ebprof_merge_window(void)
{
	uint64_t samples = profile_total(ebprof.interval);

	if (profile_bytes(ebprof.window) >= ebprof.conf.window_bytes) {
		ebprof.lost_memory += samples;
		ebprof.lost_window_bytes += samples;
		return;
	}
	if (profile_merge(ebprof.window, ebprof.interval) < 0)
		ebprof.lost_memory += samples;
}

static int ebprof_discard(const struct sampler_sample *sample, void *ctx)
{
	(void)sample;
	(void)ctx;
	return 0;
}

/*
 * Drains into ebprof.interval; *seconds gets the time the drain covers.
 * last: the shutdown's, which also reads what the watch thread left.
 */
static int ebprof_drain(struct sampler_stats *window, double *seconds, double *drain_seconds,
			bool last)
{
	struct timespec start, end;
	int rc;

	profile_clear(ebprof.interval);
	profile_clear(ebprof.offcpu);
	clock_gettime(CLOCK_MONOTONIC, &start);
	rc = last ? capture_finish_split(ebprof.capture, ebprof.interval, ebprof.offcpu, window)
		  : capture_drain_split(ebprof.capture, ebprof.interval, ebprof.offcpu, window);
	clock_gettime(CLOCK_MONOTONIC, &end);
	*drain_seconds = ebprof_seconds_between(&start, &end);
	*seconds = ebprof_seconds_between(&ebprof.last_drain, &start);
	ebprof.last_drain = start;
	return rc;
}

/*
 * What degrades the graphs for as long as it lasts: said once, not every
 * read, and the values keep flowing.
 */
/* A Python process profiled natively (render/pytrack says each reason once). */
static void ebprof_warn(const char *message, void *ctx)
{
	(void)ctx;
	WARNING(PLUGIN_LOG "%s", message);
}

static void ebprof_warn_once(const struct capture_stats *cs)
{
	const struct symbolizer_stats *sym = &cs->symbolizer;

	if (sym->kernel_hidden && !ebprof.warned_kernel_hidden) {
		/* kallsyms shows addresses to CAP_SYSLOG when kptr_restrict is 0 or 1,
		 * and to anyone when it is 0 and perf_event_paranoid <= 1. */
		WARNING(PLUGIN_LOG "kernel addresses are hidden in /proc/kallsyms (kernel."
				   "kptr_restrict, or collectd lacks CAP_SYSLOG): kernel time "
				   "shows as one [kernel] frame; to name kernel functions give "
				   "collectd CAP_SYSLOG and keep kernel.kptr_restrict at 0 or 1");
		ebprof.warned_kernel_hidden = true;
	}
	if (sym->perfmaps_refused && !ebprof.warned_perfmaps) {
		WARNING(PLUGIN_LOG "ignored a JIT perf map (/tmp/perf-PID.map) owned by neither "
				   "its process's user nor root, or writable by others; that "
				   "process's JIT frames show as [anon]");
		ebprof.warned_perfmaps = true;
	}
	if ((sym->debuginfod_failed || sym->debuginfod_error) && !ebprof.warned_debuginfod) {
		WARNING(PLUGIN_LOG "debuginfod: %s; stripped files keep grouped names "
				   "[file+0xstart] (debuginfod-failed counts the failures)",
			sym->debuginfod_error ? "the client could not start: install libdebuginfod1"
					      : "a fetch failed (server down, timeout or unusable "
						"file): check DebuginfodURLs");
		ebprof.warned_debuginfod = true;
	}
	if (sym->refused[TARGET_NO_FDS] && !ebprof.warned_fds) {
		WARNING(PLUGIN_LOG "Too many open files: raise `ulimit -n` (LimitNOFILE= in "
				   "collectd's unit): files of profiled processes could not be "
				   "opened, and their frames are unnamed (refused-no_fds counts them)");
		ebprof.warned_fds = true;
	}
	if (cs->stalls > ebprof.last_stalls) {
		/* Rare, and each one costs samples: said every time. */
		WARNING(PLUGIN_LOG "naming samples stalled (no progress for %g s, in a read of a "
				   "profiled process's files): gave up on it, %llu samples lost so "
				   "far; that process is named [stalled] from now on%s",
			ebprof.conf.stall_ms ? ebprof.conf.stall_ms / 1000.0
					     : CAPTURE_DEFAULT_STALL_MS / 1000.0,
			(unsigned long long)cs->lost_stalled,
			cs->given_up ? "; after that many stalls, nothing is named any more" : "");
		ebprof.last_stalls = cs->stalls;
	}
}

static int ebprof_build_metrics(const struct sampler_stats *window, double seconds,
				double drain_seconds)
{
	struct capture_stats cs;
	const struct symbolizer_stats *sym = &cs.symbolizer;
	struct metrics_health health = {
		.seconds = seconds,
		.window = *window,
		.drain_seconds = drain_seconds,
		.cpu_user_us = ebprof.cpu_user_us,
		.cpu_system_us = ebprof.cpu_system_us,
		.files = &cs.symbolizer,
	};
	int rc;

	capture_stats(ebprof.capture, &cs);
	if (window->cpus_detached)
		INFO(PLUGIN_LOG "CPU hotplug: %llu CPUs went offline; %d CPUs sampled now",
		     (unsigned long long)window->cpus_detached, sampler_cpu_count(ebprof.sampler));
	if (window->cpus_reopened)
		INFO(PLUGIN_LOG "CPU hotplug: %llu CPUs came online, sampled from this read on; "
			       "%d CPUs sampled now",
		     (unsigned long long)window->cpus_reopened, sampler_cpu_count(ebprof.sampler));
	health.lost_memory = ebprof.lost_memory + cs.lost_memory;
	health.lost_stalled = cs.lost_stalled;
	health.stalls = cs.stalls;
	health.python_native_only = cs.python.native_only;
	ebprof_warn_once(&cs);
	health.frames = sym->frames - ebprof.last_frames;
	health.unresolved = sym->unresolved - ebprof.last_unresolved;
	ebprof.last_frames = sym->frames;
	ebprof.last_unresolved = sym->unresolved;
	sampler_totals(ebprof.sampler, &health.total);
	if (cs.unwinding) {
		health.unwind_tables = cs.unwind.tables;
		health.unwind_bytes = cs.unwind.table_kernel_bytes;
		health.unwind_built = cs.unwind.built;
		health.unwind_reused = cs.unwind.reused;
		health.unwind_evicted = cs.unwind.evicted;
		health.unwind_expired = cs.unwind.expired;
		health.unwind_build_stalled = cs.unwind.build_stalled;
		health.unwind_wait_timeout = cs.unwind.wait_timeout;
		health.unwind_wait_stalled = cs.unwind.wait_stalled;
		health.unwind_copy_gone = cs.unwind.copy_gone;
		health.unwind_copy_rereads = cs.unwind.copy_rereads;
		health.unwind_copy_unmapped = cs.unwind.copy_unmapped;
		health.unwind_user_bytes =
			cs.unwind.table_bytes + cs.unwind.rules_bytes + cs.unwind.mappings_bytes;
	}
	health.window_bytes = profile_bytes(ebprof.window);
	health.interval_bytes = profile_bytes(ebprof.interval);
	health.forks_bytes = cs.forks_bytes;
	health.lost_window_bytes = ebprof.lost_window_bytes;
	health.offcpu_fp = sampler_offcpu_fp(ebprof.sampler);
	health.heap = mallinfo2();

	metrics_batch_reset(&ebprof.batch);
	rc = 0;
	if (ebprof.conf.mode != PCONF_MODE_OFFCPU)
		rc = metrics_functions(&ebprof.batch, ebprof.interval, ebprof.conf.top_functions,
				       ebprof.conf.frequency, seconds);
	if (!rc && ebprof.conf.mode != PCONF_MODE_CPU)
		rc = metrics_offcpu(&ebprof.batch, ebprof.offcpu, ebprof.conf.top_functions,
				    seconds);
	if (!rc)
		rc = metrics_health(&ebprof.batch, &health);
	return rc;
}

static double ebprof_seconds_since_drain(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return ebprof_seconds_between(&ebprof.last_drain, &now);
}

static int ebprof_read(user_data_t *ud)
{
	struct sampler_stats window;
	double seconds, drain_seconds;
	struct rusage cpu;
	char why[128];
	int rc;

	(void)ud;
	/* collectd's first read comes right after init. A window of a few
	 * milliseconds holds a handful of samples and gives noisy values:
	 * leave them for the next read, so each value covers ~an interval. */
	if (ebprof_seconds_since_drain() < ebprof.read_interval / 2)
		return 0;
	ebprof_cpu_mark(&cpu);
	rc = ebprof_drain(&window, &seconds, &drain_seconds, false);
	if (rc) {
		ERROR(PLUGIN_LOG "draining the sampler failed: %s",
		      strerror_r(rc < 0 ? -rc : rc, why, sizeof(why)));
		ebprof_cpu_add(&cpu);
		return -1;
	}
	if (seconds <= 0)
		seconds = ebprof.read_interval;

	rc = ebprof_build_metrics(&window, seconds, drain_seconds);
	if (rc)
		ERROR(PLUGIN_LOG "building metrics failed: %s", strerror_r(-rc, why, sizeof(why)));
	for (size_t i = 0; i < ebprof.batch.n; i++)
		plugin_dispatch_values(&ebprof.batch.lists[i]);

	if (ebprof.spool) {
		ebprof_merge_window();
		if (++ebprof.window_reads >= ebprof.reads_per_window)
			ebprof_spool_window();
	}
	/*
	 * A drain allocates and frees a lot (symbol tables loaded and
	 * evicted, /proc reads, the interval's tree): glibc keeps what was
	 * freed in each thread's arena, and RSS creeps though the heap in use
	 * does not. Give the free pages back once per read: a few ms against
	 * a read interval of seconds.
	 */
	if (ebprof.conf.malloc_trim)
		malloc_trim(0);
	ebprof_cpu_add(&cpu);
	return 0;
}

/* --- init and shutdown ---------------------------------------------------- */

static void ebprof_free_all(void)
{
	/* Returns promptly even when a worker is stuck in a profiled process's file. */
	capture_free(ebprof.capture);
	ebprof.capture = NULL;
	spool_free(ebprof.spool);
	ebprof.spool = NULL;
	profile_free(ebprof.window);
	ebprof.window = NULL;
	profile_free(ebprof.interval);
	ebprof.interval = NULL;
	profile_free(ebprof.offcpu);
	ebprof.offcpu = NULL;
	sampler_free(ebprof.sampler);
	ebprof.sampler = NULL;
	metrics_batch_free(&ebprof.batch);
}

static int ebprof_open_sampler(void)
{
	struct sampler_config sc;
	char err[512] = "", why[128];
	int rc;

	sampler_config_init(&sc);
	sc.frequency = ebprof.conf.frequency;
	sc.tgids = ebprof.conf.pids;
	sc.n_tgids = ebprof.conf.n_pids;
	sc.tgids_fixed = true; /* only collectd.conf sets PIDs, once: constants in the program */
	sc.comms = (const char *const *)ebprof.conf.processes;
	sc.n_comms = ebprof.conf.n_processes;
	sc.kernel_stacks = ebprof.conf.kernel_stacks;
	sc.python = ebprof.conf.python;
	sc.user_stacks = ebprof.conf.user_stacks;
	sc.include_idle = ebprof.conf.include_idle;
	sc.include_self = ebprof.conf.include_self;
	sc.max_stacks = ebprof.conf.max_stacks;
	sc.report_processes = true;
	/* The processes PID and Process name are prepared first (ebprof_prepare()). */
	sc.start_later = ebprof.conf.n_pids || ebprof.conf.n_processes;
	sc.unwind = ebprof.conf.unwind == PCONF_UNWIND_FP      ? SAMPLER_UNWIND_FP
		    : ebprof.conf.unwind == PCONF_UNWIND_DWARF ? SAMPLER_UNWIND_TABLES
							       : SAMPLER_UNWIND_AUTO;
	sc.max_frames = ebprof.conf.max_frames;
	sc.features = &ebprof.features;
	sc.mode = ebprof.conf.mode == PCONF_MODE_OFFCPU ? SAMPLER_MODE_OFFCPU
		  : ebprof.conf.mode == PCONF_MODE_WALL ? SAMPLER_MODE_WALL
							: SAMPLER_MODE_CPU;
	sc.offcpu_period_ns = ebprof.conf.offcpu_period_us * 1000;
	sc.offcpu_min_ns = ebprof.conf.offcpu_min_us * 1000;
	rc = sampler_open(&sc, &ebprof.sampler, err, sizeof(err));
	if (rc) {
		ERROR(PLUGIN_LOG "cannot start sampling: %s",
		      err[0] ? err : strerror_r(-rc, why, sizeof(why)));
		ebprof.sampler = NULL;
	}
	return rc;
}

/*
 * The running processes that PID and Process name get their unwind tables
 * and Python layouts before the first sample (at most EBPROF_PREPARE_MS of
 * init), so that their first samples have Python frames too; then
 * sampling starts. What could not be prepared is said, and samples as
 * before. Returns sampler_start()'s error.
 */
static int ebprof_prepare_and_start(void)
{
	struct capture_prepared prep;
	char err[512] = "", why[128];
	int rc;

	if (ebprof.conf.n_pids || ebprof.conf.n_processes) {
		rc = capture_prepare(ebprof.capture, EBPROF_PREPARE_MS, &prep);
		if (rc)
			WARNING(PLUGIN_LOG "cannot list the PID and Process targets before sampling "
					   "(%s): their first samples may lack Python frames",
				strerror_r(-rc, why, sizeof(why)));
		else if (prep.timed_out)
			WARNING(PLUGIN_LOG "%llu of %llu target processes not ready after %u ms "
					   "(tables still building): their first samples may lack "
					   "Python frames",
				(unsigned long long)(prep.targets - prep.ready),
				(unsigned long long)prep.targets, prep.ms);
	}
	rc = sampler_start(ebprof.sampler, err, sizeof(err));
	if (rc)
		ERROR(PLUGIN_LOG "cannot start sampling: %s",
		      err[0] ? err : strerror_r(-rc, why, sizeof(why)));
	return rc;
}

/* What this kernel lacks is turned off, and said once, at init. */
static void ebprof_probe_kernel(void)
{
	char line[512];

	kfeat_probe(&ebprof.features);
	for (int id = 0; id < KFEAT_NR; id++) {
		if (kfeat_state(&ebprof.features, id) != KFEAT_ABSENT)
			continue;
		kfeat_missing_message(id, line, sizeof(line));
		NOTICE(PLUGIN_LOG "%s", line);
	}
}

static int ebprof_open_spool(void)
{
	struct spool_config sc = {
		.dir = ebprof.conf.spool_dir,
		.keep_files = ebprof.conf.keep_files,
		.keep_bytes = ebprof.conf.keep_bytes,
	};
	char err[512];

	sc.formats = ebprof.conf.spool_formats;
	sc.frequency = ebprof.conf.frequency;
	ebprof.spool = spool_new(&sc);
	if (!ebprof.spool)
		return -ENOMEM;
	/* A bad directory is reported now but is not fatal: the metrics
	 * still work, and the spool retries every window. */
	ebprof_spool_status(spool_open(ebprof.spool, err, sizeof(err)), err);
	return 0;
}

/* The capture: its symbolizer first, so new processes are read from the first sample on. */
static int ebprof_open_capture(void)
{
	struct capture_config cc;

	capture_config_init(&cc);
	cc.symbolizer.addresses = ebprof.conf.addresses;
	cc.symbolizer.inlines = ebprof.conf.inlines;
	cc.symbolizer.debuginfod = ebprof.conf.debuginfod;
	cc.symbolizer.elf_bounds.max_table = ebprof.conf.max_symbol_table;
	cc.symbolizer.perfmap_max_bytes = ebprof.conf.max_perf_map;
	cc.symbolizer.elf_cache_bytes = ebprof.conf.symbol_cache_bytes;
	cc.symbolizer.process_bytes = ebprof.conf.process_bytes;
	cc.symbolizer.names_bytes = ebprof.conf.name_cache_bytes;
	cc.symbolizer.maps_text_only =
		kfeat_state(&ebprof.features, KFEAT_PROCMAP_QUERY) == KFEAT_ABSENT;
	cc.stall_ms = ebprof.conf.stall_ms;
	/* Default-ignored, and collectd uses it for nothing: only our worker gets it. */
	cc.interrupt_signal = SIGURG;
	cc.unwind.max_bytes = ebprof.conf.unwind_bytes;
	cc.unwind.max_frames = ebprof.conf.max_frames;
	cc.warn = ebprof_warn;
	/* Off-CPU samples go to their own profile, in microseconds. */
	cc.offcpu_weight = ebprof.conf.offcpu_period_us ? ebprof.conf.offcpu_period_us
							: SAMPLER_DEFAULT_OFFCPU_PERIOD_NS / 1000;
	return capture_new(&cc, &ebprof.capture);
}

/*
 * glibc raises its mmap threshold to the size of each big block freed
 * (up to 32 MiB), and the trim threshold to twice that: after one
 * libLLVM-sized table, later big blocks come from the arenas, and an
 * arena's free top of up to 64 MiB is never given back. malloc_trim()
 * does not reach the top of a thread's arena either; measured, the
 * capture worker's arena held ~27 MB free and resident at a heap in use
 * of 27 MB. Fixed thresholds stop the raising: blocks of 256 KiB and more
 * (symbol tables, unwind rows, the trees' chunks) are mapped and unmapped
 * on their own, and every arena's top is trimmed past 1 MiB. This is the
 * whole daemon's allocator; the cost is a system call per big block.
 */
static void ebprof_malloc_thresholds(void)
{
	if (!mallopt(M_MMAP_THRESHOLD, EBPROF_MMAP_THRESHOLD) ||
	    !mallopt(M_TRIM_THRESHOLD, EBPROF_TRIM_THRESHOLD))
		WARNING(PLUGIN_LOG "mallopt refused the mmap and trim thresholds; freed "
				   "memory may stay in collectd's RSS (MallocTrim false silences this)");
}

/* A child collectd forks (the exec plugin's) gets huge pages back before its exec. */
static void ebprof_thp_child(void)
{
	prctl(PR_SET_THP_DISABLE, 0, 0, 0, 0);
}

/*
 * Where transparent huge pages are "always" (Debian's kernels), the
 * kernel backs a heap arena's 2 MiB ranges with huge pages, at a fault or
 * later through khugepaged, however few of its 4 KiB pages are in use:
 * measured on Debian's 6.1, 4 MiB of collectd's RSS with the plugin was
 * in huge pages. Off for the daemon (prctl: its memory only, not the
 * kernel's setting), so that RSS follows what is in use; a child it forks
 * gets them back (pthread_atfork), one it spawns otherwise keeps them off.
 */
static void ebprof_no_huge_pages(void)
{
	char why[128];

	if (prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0)) {
		WARNING(PLUGIN_LOG "prctl(PR_SET_THP_DISABLE): %s; huge pages may hold more of "
				   "collectd's RSS than is in use (MallocTrim false silences this)",
			strerror_r(errno, why, sizeof(why)));
		return;
	}
	pthread_atfork(NULL, NULL, ebprof_thp_child);
}

/* How the start-up line says what is sampled: see sampler_task_events(). */
static void ebprof_filter_words(char *buf, size_t len)
{
	const char *why;
	size_t n = sampler_task_events(ebprof.sampler, &why);

	if (n)
		snprintf(buf, len, "filtered: an event on each of the PIDs' %zu thread%s", n,
			 n == 1 ? "" : "s");
	else if (why)
		snprintf(buf, len, "filtered, with an event per CPU: %s", why);
	else
		snprintf(buf, len, "%s",
			 ebprof.conf.n_pids || ebprof.conf.n_processes ? "filtered" : "every process");
}

static int ebprof_init(void)
{
	struct rusage cpu;
	char why[128], filtered[256];
	uint64_t verified;
	double load_s;
	int rc;

	ebprof_cpu_mark(&cpu);
	ebprof.read_interval = CDTIME_T_TO_DOUBLE(plugin_get_interval());
	if (pconf_finish(&ebprof.conf, ebprof.read_interval,
			 pconf_kernel_max_rate(EBPROF_MAX_RATE_PATH)))
		goto fail;
	ebprof_probe_kernel();
	if (ebprof.conf.malloc_trim) {
		ebprof_malloc_thresholds();
		ebprof_no_huge_pages();
	}
	rc = ebprof_open_capture();
	ebprof.interval = profile_new();
	ebprof.offcpu = profile_new();
	ebprof.window = profile_new();
	if (rc || !ebprof.interval || !ebprof.offcpu || !ebprof.window) {
		ERROR(PLUGIN_LOG "out of memory at start-up");
		goto free_all;
	}
	if (ebprof_open_sampler())
		goto free_all;
	rc = capture_attach(ebprof.capture, ebprof.sampler);
	if (rc) {
		ERROR(PLUGIN_LOG "cannot start the thread that snapshots new processes: %s%s",
		      strerror_r(-rc, why, sizeof(why)),
		      rc == -EMFILE || rc == -ENFILE ? ": raise `ulimit -n`" : "");
		goto free_all;
	}
	if (ebprof_prepare_and_start())
		goto free_all;
	if (ebprof.conf.spool_dir && ebprof_open_spool()) {
		ERROR(PLUGIN_LOG "out of memory at start-up");
		goto free_all;
	}
	ebprof.reads_per_window = (unsigned int)(ebprof.conf.spool_interval /
							   ebprof.read_interval + 0.5);
	if (ebprof.reads_per_window == 0)
		ebprof.reads_per_window = 1;
	/* Start the first window now: the samples taken while the program
	 * loaded and the symbolizer read kallsyms would otherwise be
	 * divided by a window that began after them (values above 1000%).
	 * The window starts when the drain swaps maps, at its beginning. */
	clock_gettime(CLOCK_MONOTONIC, &ebprof.last_drain);
	sampler_drain(ebprof.sampler, ebprof_discard, NULL, NULL);
	ebprof.window_start = time(NULL);

	rc = plugin_register_complex_read(NULL, "ebprof", ebprof_read, 0, NULL);
	if (rc) {
		ERROR(PLUGIN_LOG "cannot register the read callback (%d)", rc);
		goto free_all;
	}
	ebprof_filter_words(filtered, sizeof(filtered));
	INFO(PLUGIN_LOG "sampling %s%sat %u Hz on %d CPUs (%s, user stacks by %s), top %u "
			"functions every %g s%s%s",
	     ebprof.conf.mode == PCONF_MODE_OFFCPU ? "off-CPU time, "
	     : ebprof.conf.mode == PCONF_MODE_WALL ? "on- and off-CPU time, " : "",
	     ebprof.conf.mode == PCONF_MODE_CPU	 ? ""
	     : sampler_offcpu_rq_clock(ebprof.sampler) ? "timed by the run queue's clock, "
							 : "timed by bpf_ktime_get_ns(), ",
	     ebprof.conf.frequency, sampler_cpu_count(ebprof.sampler),
	     filtered,
	     sampler_unwind_mode(ebprof.sampler) != SAMPLER_UNWIND_TABLES ? "frame pointers"
	     : sampler_offcpu_fp(ebprof.sampler)
		     ? "unwind tables, off-CPU ones by frame pointers: this kernel's verifier "
		       "refused the table walk on sched_switch"
		     : "unwind tables",
	     ebprof.conf.top_functions, ebprof.read_interval,
	     ebprof.conf.spool_dir ? ", flame graphs to " : "",
	     ebprof.conf.spool_dir ? ebprof.conf.spool_dir : "");
	load_s = sampler_load_cost(ebprof.sampler, &verified);
	INFO(PLUGIN_LOG "programs loaded in %.2f s (the kernel's verifier processed %llu "
			"instructions)", load_s, (unsigned long long)verified);
	ebprof_cpu_add(&cpu);
	return 0;

free_all:
	ebprof_free_all();
fail:
	/* collectd unloads this plugin only; the others keep running. */
	return -1;
}

static int ebprof_shutdown(void)
{
	struct sampler_stats window;
	double seconds, drain_seconds;

	if (ebprof.sampler && ebprof.spool) {
		/*
		 * The last partial window: drain (with what the watch thread had
		 * not read: reports, copied samples), detach, then write.
		 */
		if (ebprof_drain(&window, &seconds, &drain_seconds, true) == 0 &&
		    profile_merge(ebprof.window, ebprof.interval) == 0)
			ebprof.window_reads++;
		capture_free(ebprof.capture);
		ebprof.capture = NULL;
		sampler_free(ebprof.sampler);
		ebprof.sampler = NULL;
		if (profile_total(ebprof.window) > 0)
			ebprof_spool_window();
	}
	ebprof_free_all();
	pconf_free(&ebprof.conf);
	return 0;
}

__attribute__((visibility("default"))) void module_register(void)
{
	pconf_init(&ebprof.conf);
	metrics_batch_init(&ebprof.batch);
	plugin_register_complex_config("ebprof", ebprof_config);
	plugin_register_init("ebprof", ebprof_init);
	plugin_register_shutdown("ebprof", ebprof_shutdown);
}
