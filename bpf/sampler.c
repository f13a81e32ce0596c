/*
 * sampler: loads the BPF program, attaches it to every CPU, and drains it.
 *
 * This is the first stage of the data flow: it turns the kernel's counts
 * into (process, thread, kernel stack, user stack, count) records of raw
 * addresses, which the symbolizer names and the profile folds.
 *
 * The program writes into one of two pairs of maps (counts and stacks),
 * both reached through two-slot map-in-map arrays; the generation
 * active_gen in its .bss says which (its low bit), and the other pair
 * waits empty. A drain moves to the next generation, then updates a slot
 * of the counts array, which returns only after every program that might
 * still use the old pair has finished (synchronize_rcu() in the kernel's
 * maybe_wait_bpf_programs()), so the old pair is then frozen: reading and
 * clearing it cannot lose a racing increment. A program reads the
 * generation once, so a key's stacks are in the pair its count is in. The
 * drained pair becomes the empty spare. Each CPU also holds the counts of
 * its last keys in slots of its own, tagged with the generation (struct
 * ebprof_pending): the drain reads the old generation's and hands them out
 * beside the counts map's.
 *
 * Stats are per-CPU counters that only grow; each drain reports the
 * difference from the last one.
 *
 * New processes come through a separate path: a BPF ring buffer the
 * program writes at a process's first sample, read by
 * sampler_poll_processes() whenever the caller likes, independently of
 * the drains. With unwind tables, the same ring buffer carries copies of
 * samples of processes whose tables were not loaded yet; the caller's copy
 * handler unwinds each, and the next drain hands them out after the
 * kernel's counts (one sample each); such a copy wakes no reader, but
 * waits for the next report's wake-up, or for sampler_watch_flush()
 * before a drain. An off-CPU copy, of a task leaving the CPU, is kept
 * instead under its id until the drain hands out the samples of its wait,
 * which name it as their user stack.
 *
 * Stacks are stored by the program in chunks of 32 frames (any depth up
 * to 4,096 frames) and put back together here in a user-side table.
 *
 * Off-CPU samples (modes offcpu and wall) come from a second program, on
 * the scheduler's switch (bpf/offcpu.bpf.h), into the same maps; their
 * keys carry the state the task waited in, and each counts one period of
 * off-CPU time. In offcpu mode no CPU-clock event is opened.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/ebprof.h"
#include "bpf/ebprof.skel.h"
#include "bpf/cpuevents.h"
#include "bpf/grow.h"
#include "bpf/kbtf.h"
#include "bpf/ringrd.h"
#include "bpf/stacktab.h"
#include "bpf/steal.h"
#include "bpf/taskev.h"
#include "bpf/sampler.h"
#include "bpf/sampler_diag.h"
#include "bpf/unwind.h"
#include "bpf/unwmaps.h"

/*
 * Defaults for a busy host: a 2-socket server running a build sees a few
 * thousand distinct stack pairs a minute. A stacks entry is ~1 KiB, and
 * the maps are not preallocated (see sampler_load), so an idle host pays
 * for what it uses only.
 */
#define SAMPLER_DEFAULT_MAX_STACKS 16384
#define SAMPLER_DEFAULT_MAX_KEYS 16384
#define SAMPLER_MIN_FILTER_ENTRIES 1024
/* Entries read per batch call while draining: 4096 keys are 160 KiB. */
#define SAMPLER_DRAIN_CHUNK 4096
/* Stack chunks read per batch call: 256 are 66 KiB. */
#define SAMPLER_STACK_CHUNK 256
/*
 * Process reports: 40 bytes each with the ring buffer's header, so 64 KiB
 * hold ~1600, far more than a host starts between two polls. The LRU map
 * remembers the last 8192 processes reported; one it forgot is reported
 * again at its next sample, which costs a re-read, not a loss.
 */
#define SAMPLER_PROCESS_RING_BYTES (64 * 1024)
/*
 * With copies: a copy is ~2.3 KiB plus the stack it carries (up to 16
 * KiB; a few hundred bytes on a main thread's shallow stack), and copies
 * are sent only while the ring is less than half full, so reports always
 * find room. The ring is sized by the samples a second the host can take
 * (sampler_copy_ring_bytes()): 1 KiB for each, from 256 KiB to 2 MiB. At
 * 999 Hz on 2 CPUs, 2 MiB hold 50 to 400 copies between two polls of the
 * watch thread, which reads them within milliseconds; at 99 Hz, 256 KiB
 * hold more seconds of copies than that. Mapped once (ringrd.h), the
 * whole ring counts in the reader's VmRSS on kernels that count BPF maps
 * there (6.1 does not).
 */
#define SAMPLER_COPY_RING_PER_SAMPLE 1024u
#define SAMPLER_COPY_RING_MIN (256u << 10)
#define SAMPLER_COPY_RING_MAX (2u << 20)
/* The table unwinder's maps (see sampler_config). */
#define SAMPLER_DEFAULT_MAPPINGS 32768
#define SAMPLER_DEFAULT_TABLES 8192
#define SAMPLER_DEFAULT_RULES 16384
#define SAMPLER_UNWIND_PROCS 16384
/* Python processes whose frames are walked at once (one small entry each). */
#define SAMPLER_PYTHON_PROCS 4096
#define SAMPLER_REPORTED_ENTRIES 8192
#define SAMPLER_WATCH_NICE -10

/*
 * struct ebprof_chunk with uint64_t in place of __u64: the two are distinct
 * types in C (unsigned long vs unsigned long long), and sampler_sample
 * hands out uint64_t pointers.
 */
struct sampler_chunk {
	uint32_t nr;
	uint32_t pad;
	uint64_t ips[EBPROF_CHUNK_FRAMES];
};
_Static_assert(sizeof(struct sampler_chunk) == sizeof(struct ebprof_chunk),
	       "struct sampler_chunk must mirror struct ebprof_chunk");

/* The frames of an off-CPU copy, as a drain hands them out. */
struct sampler_stack {
	uint64_t nr;
	uint64_t ips[EBPROF_MAX_FRAMES];
};

/*
 * Copied samples, unwound, waiting for the next drain: packed records of
 * a struct late_sample followed by its kernel then user frames.
 */
struct late_sample {
	uint32_t tgid;
	uint32_t n_kips, n_uips;
	uint64_t start_time;
	char comm[SAMPLER_COMM_LEN];
};

struct late_queue {
	uint64_t *words;
	size_t n, cap;
	uint64_t lost; /* copies that found no memory here: counted, not kept */
	uint64_t stops[UNW_DEPTH_CAP + 1]; /* how their user-space walks ended */
	uint64_t fp_frames;
};

/*
 * Off-CPU copies (struct ebprof_copy_event with an id), unwound, kept
 * under their ids until a drain hands out the samples of their waits: a
 * ring of the last SAMPLER_OFFCPU_COPIES, the oldest overwritten. Most
 * are of waits that carry no sample and are never asked for; a sample
 * whose copy was overwritten (a wait longer than that many switch-outs of
 * tasks without tables) is counted as a missing stack.
 */
#define SAMPLER_OFFCPU_COPIES 1024

struct offcpu_copy {
	uint64_t id; /* 0: empty */
	uint32_t n;
	uint64_t *ips;
};

struct sampler {
	struct ebprof_bpf *skel;
	struct bpf_link **links; /* per-thread events (taskev) */
	int n_links;
	struct cpuevents cpus;	 /* per-CPU events, and their ticks' grid */
	bool *online;		 /* per possible CPU, for sampler_follow_cpus() */
	uint64_t *cpu_ticks;	 /* per possible CPU, the program's runs there */
	/* A fixed PID filter's processes, traced by per-thread events (taskev); NULL: per CPU. */
	uint32_t *task_tgids;
	size_t n_task_tgids;
	size_t n_task_events; /* attached on threads; 0: one event per CPU */
	char task_events_why[192]; /* why a fixed PID filter got per-CPU events, or "" */
	struct bpf_link *exec_link;
	struct bpf_link *rename_link;
	int switch_fd; /* the off-CPU program's attachment; -1: none (cpu mode) */
	int wakeup_fd; /* the new tasks' program's (ebprof_wakeup_new); -1: none */
	bool offcpu_fp; /* off-CPU user stacks by frame pointer: see sampler_create() */
	bool rq_clock;	/* off-CPU waits timed by the run queue's clock: sampler_rq_clock() */
	/* task_struct.se.cfs_rq, cfs_rq.rq, rq.clock; task_struct.sched_info.last_arrival or 0 */
	uint32_t rq_clock_offsets[4];
	uint32_t off_sum_exec; /* task_struct.se.sum_exec_runtime, off-CPU; 0: not found */
	enum sampler_mode mode;
	uint64_t offcpu_period_ns;
	double load_seconds;	 /* every load tried, fallbacks included */
	uint64_t verified_insns; /* by the kernel's verifier, for the programs loaded */
	uint64_t steal_at_start; /* ns: /proc/stat's steal when the events were attached */
	uint64_t started_ns;	 /* CLOCK_MONOTONIC when the events were attached, 0 before */
	int n_online; /* CPUs online at the start */
	unsigned int frequency; /* Hz, for sampler_start() */
	uint32_t ring_bytes;	/* the process_events ring's size */
	bool started;		/* the perf events (and the switch program) are attached */
	bool steal_known;	/* steal_at_start was read */
	bool targets_iter;	/* the targets iterator is loaded (sampler_targets()) */
	struct ringrd *processes; /* NULL without report_processes */
	sampler_process_fn process_fn; /* of the poll in progress */
	void *process_ctx;
	enum sampler_unwind unwind; /* SAMPLER_UNWIND_FP or _TABLES, as loaded */
	struct unwmaps *unwmaps;    /* NULL with frame pointers */
	sampler_copy_fn copy_fn;
	void *copy_ctx;
	sampler_oracle_fn oracle_fn;
	void *oracle_ctx;
	uint64_t *copy_ips; /* EBPROF_MAX_FRAMES, for the handler */
	bool python;	     /* the program walks Python frames (py_procs) */
	uint32_t off_fsbase; /* task_struct.thread.fsbase; 0: unknown, no Python */
	pthread_mutex_t late_lock; /* late and offcpu_copies, shared with the watch thread */
	struct late_queue late;
	struct offcpu_copy *offcpu_copies; /* SAMPLER_OFFCPU_COPIES; NULL until the first */
	uint32_t offcpu_next;		   /* the slot the next one takes */
	int n_possible_cpus;
	/* The two inner pairs; gen & 1 indexes the one the program writes. */
	struct bpf_map *counts_maps[2];
	struct bpf_map *stacks_maps[2];
	uint64_t gen;	 /* active_gen, as the last swap that waited stored it */
	struct ebprof_pending *pending; /* a pair's slots, every possible CPU's */
	bool tgid_filter; /* a PID filter sampler_set_tgids() may replace */
	bool prealloc; /* maps preallocated: kernels before 6.1 */
	uint32_t max_keys;
	uint32_t max_stacks;
	/* Drain buffers, of chunk entries each, allocated at open. */
	uint32_t chunk;
	struct ebprof_key *keys;
	uint64_t *counts;
	struct ebprof_chunk_key *chunk_keys; /* SAMPLER_STACK_CHUNK of each */
	struct sampler_chunk *chunk_buf;
	struct stacktab table;		 /* the drained stacks, by id */
	struct ebprof_cpu *percpu; /* one slot per possible CPU, for the stats */
	struct sampler_stack ustack;
	uint64_t kernel_totals[EBPROF_STAT_NR];
	uint64_t grid_missed;	     /* tickgrid_missed() at the last stats read */
	uint64_t cpus_detached;	     /* s->cpus.detached at the last stats read */
	uint64_t cpus_reopened;	     /* s->cpus.reopened at the last stats read */
	struct sampler_stats totals;
};

void sampler_config_init(struct sampler_config *config)
{
	memset(config, 0, sizeof(*config));
	config->frequency = SAMPLER_DEFAULT_FREQUENCY;
	config->kernel_stacks = true;
	config->user_stacks = true;
	config->unwind = SAMPLER_UNWIND_AUTO;
	config->python = true;
}

uint64_t sampler_stats_lost(const struct sampler_stats *stats)
{
	return stats->kstack_errors + stats->ustack_errors + stats->stack_collisions +
	       stats->stacks_full + stats->counts_full + stats->missing_stacks +
	       stats->offcpu_throttled;
}

uint64_t sampler_stats_recorded(const struct sampler_stats *stats)
{
	return stats->recorded + stats->copies_recorded;
}

uint64_t sampler_stats_truncated(const struct sampler_stats *stats)
{
	return stats->unw_no_table + stats->unw_no_row + stats->unw_unsupported +
	       stats->unw_read_fault + stats->unw_depth_cap;
}

/*
 * libbpf prints through one process-wide callback. Ours keeps warnings
 * (why a load failed, with the verifier's log) and drops the chatter.
 */
static int sampler_libbpf_print(enum libbpf_print_level level, const char *format, va_list ap)
{
	if (level != LIBBPF_WARN)
		return 0;
	fputs("ebprof: ", stderr); /* libbpf starts its lines with "libbpf: " */
	return vfprintf(stderr, format, ap);
}

static int sampler_check_config(const struct sampler_config *config, char *err, size_t errlen)
{
	if (config->frequency > SAMPLER_MAX_FREQUENCY) {
		snprintf(err, errlen, "sampling frequency %u Hz is above the maximum of %u Hz",
			 config->frequency, (unsigned int)SAMPLER_MAX_FREQUENCY);
		return -EINVAL;
	}
	if (!config->kernel_stacks && !config->user_stacks) {
		snprintf(err, errlen, "neither kernel nor user stacks are enabled: nothing to record");
		return -EINVAL;
	}
	if (config->n_tgids && !config->tgids) {
		snprintf(err, errlen, "%zu PIDs to filter on, but no PID list", config->n_tgids);
		return -EINVAL;
	}
	if (config->max_frames > EBPROF_MAX_FRAMES) {
		snprintf(err, errlen, "a frame cap of %u is above the maximum of %u frames",
			 config->max_frames, (unsigned int)EBPROF_MAX_FRAMES);
		return -EINVAL;
	}
	if (config->n_comms && !config->comms) {
		snprintf(err, errlen, "%zu process names to filter on, but no name list",
			 config->n_comms);
		return -EINVAL;
	}
	for (size_t i = 0; i < config->n_comms; i++) {
		if (!config->comms[i] || !config->comms[i][0]) {
			snprintf(err, errlen, "process name %zu in the filter is empty", i + 1);
			return -EINVAL;
		}
	}
	if (config->mode > SAMPLER_MODE_WALL) {
		snprintf(err, errlen, "sampling mode %d is none of cpu, offcpu and wall",
			 (int)config->mode);
		return -EINVAL;
	}
	if (config->offcpu_period_ns && (config->offcpu_period_ns < SAMPLER_MIN_OFFCPU_PERIOD_NS ||
					 config->offcpu_period_ns > SAMPLER_MAX_OFFCPU_PERIOD_NS)) {
		snprintf(err, errlen,
			 "an off-CPU sampling period of %llu ns is outside 1 us to 10 s",
			 (unsigned long long)config->offcpu_period_ns);
		return -EINVAL;
	}
	for (size_t i = 0; i < config->n_tgids; i++) {
		if (config->tgids[i] == 0) {
			snprintf(err, errlen,
				 "PID 0 in the filter: the idle task is selected with include_idle");
			return -EINVAL;
		}
	}
	return 0;
}

static uint32_t max_u32(uint32_t a, uint32_t b)
{
	return a > b ? a : b;
}

uint32_t sampler_copy_ring_bytes(unsigned int frequency, int cpus, enum sampler_mode mode)
{
	uint64_t want = (uint64_t)frequency * (uint64_t)(cpus > 0 ? cpus : 1);
	uint32_t bytes = SAMPLER_COPY_RING_MIN;

	/* Off-CPU walks send copies too, at up to their cap a second per CPU. */
	if (mode != SAMPLER_MODE_CPU)
		return SAMPLER_COPY_RING_MAX;
	want *= SAMPLER_COPY_RING_PER_SAMPLE;
	while (bytes < want && bytes < SAMPLER_COPY_RING_MAX)
		bytes *= 2;
	return bytes;
}

/* Defaults a zero in the config stands for. */
static uint32_t or_default(uint32_t value, uint32_t fallback)
{
	return value ? value : fallback;
}

/*
 * The table unwinder's switches and map sizes; with frame pointers, its
 * maps at the smallest size the kernel takes.
 */
static void sampler_load_unwinder(struct sampler *s, struct ebprof_bpf *skel,
				  const struct sampler_config *config)
{
	bool tables = s->unwind == SAMPLER_UNWIND_TABLES;

	skel->rodata->unwind_mode = tables ? EBPROF_UNWIND_TABLES : EBPROF_UNWIND_FP;
	skel->rodata->max_frames = or_default(config->max_frames, EBPROF_DEFAULT_FRAMES);
	skel->rodata->copy_samples = tables && config->report_processes;
	skel->rodata->copy_ring_limit = s->ring_bytes / 2;
	skel->rodata->oracle_every = tables && config->report_processes ? config->oracle_every : 0;
	bpf_map__set_max_entries(skel->maps.unw_procs, tables ? SAMPLER_UNWIND_PROCS : 1);
	bpf_map__set_max_entries(skel->maps.unw_mappings,
				 tables ? or_default(config->max_mappings, SAMPLER_DEFAULT_MAPPINGS)
					: 1);
	bpf_map__set_max_entries(skel->maps.unw_tables,
				 tables ? or_default(config->max_tables, SAMPLER_DEFAULT_TABLES) : 1);
	bpf_map__set_max_entries(skel->maps.unw_rules,
				 tables ? or_default(config->max_rules, SAMPLER_DEFAULT_RULES) : 1);
	/* Python frames are found by the table unwinder only (bpf/python.bpf.h). */
	s->python = tables && config->python && s->off_fsbase;
	skel->rodata->python_frames = s->python;
	skel->rodata->off_fsbase = s->off_fsbase;
	bpf_map__set_max_entries(skel->maps.py_procs, s->python ? SAMPLER_PYTHON_PROCS : 1);
}

/*
 * ln(x) for x in (0, 1], without libm: halve the range to [0.5, 1), then
 * 2 atanh((x - 1) / (x + 1)) by its series, which converges fast there.
 */
static double sampler_ln(double x)
{
	double ln2 = 0.69314718055994530942, y, y2, term, sum = 0;
	int e = 0;

	while (x < 0.5) {
		x *= 2;
		e--;
	}
	y = (x - 1) / (x + 1);
	y2 = y * y;
	term = y;
	for (int k = 1; k < 60; k += 2) {
		sum += term / k;
		term *= y2;
	}
	return e * ln2 + 2 * sum;
}

/*
 * The exponential gaps' table: -ln(u) at the midpoints of 256 equal
 * slices of (0, 1), scaled so that its mean is exactly one period. The
 * mean is what makes a sample worth one period; the table's tail stops
 * at 6.2 periods, which only bounds how far apart two samples fall.
 */
static void sampler_exp_table(volatile uint32_t *table)
{
	double v[EBPROF_OFFCPU_EXP], sum = 0, scale;

	for (int i = 0; i < EBPROF_OFFCPU_EXP; i++) {
		v[i] = -sampler_ln((i + 0.5) / EBPROF_OFFCPU_EXP);
		sum += v[i];
	}
	scale = (double)(1u << EBPROF_OFFCPU_EXP_SHIFT) * EBPROF_OFFCPU_EXP / sum;
	for (int i = 0; i < EBPROF_OFFCPU_EXP; i++)
		table[i] = (uint32_t)(v[i] * scale + 0.5);
}

/*
 * The off-CPU programs are tp_btf programs, on sched_switch and on
 * sched_wakeup_new, whose loads name their tracepoints by BTF id (the
 * kernel's typedefs btf_trace_sched_switch and btf_trace_sched_wakeup_new).
 * Under libbpf's own section name, libbpf finds that id by loading and
 * indexing the whole kernel BTF, 7 MiB of peak RSS measured here, which
 * kbtf exists to avoid. So their sections are ours ("ebprof_tp_btf",
 * "ebprof_tp_btf_new"), registered as raw tracepoint programs, which need
 * no BTF, and at load this callback makes each the tracing program it is,
 * with the id kbtf found (the cookie).
 */
static int sampler_switch_prepare(struct bpf_program *prog, struct bpf_prog_load_opts *opts,
				  long cookie)
{
	int err = bpf_program__set_type(prog, BPF_PROG_TYPE_TRACING);

	opts->expected_attach_type = BPF_TRACE_RAW_TP;
	opts->attach_btf_id = (__u32)cookie;
	return err;
}

/* The targets iterator (ebprof_targets): a task iterator, made so the same way. */
static int sampler_iter_prepare(struct bpf_program *prog, struct bpf_prog_load_opts *opts,
				long cookie)
{
	int err = bpf_program__set_type(prog, BPF_PROG_TYPE_TRACING);

	if (!cookie)
		return -EOPNOTSUPP; /* no bpf_iter_task: never loaded (sampler_load) */
	opts->expected_attach_type = BPF_TRACE_ITER;
	opts->attach_btf_id = (__u32)cookie;
	return err;
}

/*
 * Registers the sections with libbpf (process-wide, like libbpf's print
 * callback; once, for the kernel's ids). Returns 0 or a negative errno;
 * *iter_id gets bpf_iter_task's id. A kernel without the task iterator
 * (before 5.8) registers its section all the same (the object names it),
 * with id 0: it is not loaded.
 */
static int sampler_register_switch(uint32_t *iter_id, char *err, size_t errlen)
{
	static const struct {
		const char *section, *btf_name;
		bool iterator;
	} progs[] = {
		{ "ebprof_tp_btf", "btf_trace_sched_switch", false },
		{ "ebprof_tp_btf_new", "btf_trace_sched_wakeup_new", false },
		{ "ebprof_iter_task", "bpf_iter_task", true },
	};
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static int registered;
	static uint32_t iter_btf_id;
	const int n = (int)(sizeof(progs) / sizeof(progs[0]));
	uint32_t id;
	int ret = 0;

	pthread_mutex_lock(&lock);
	for (int i = registered; !ret && i < n; i++) {
		if (progs[i].iterator) {
			if (kbtf_func_id(KBTF_VMLINUX, progs[i].btf_name, &id, err, errlen))
				id = 0;
			iter_btf_id = id;
			if (errlen)
				err[0] = '\0';
		} else {
			ret = kbtf_typedef_id(KBTF_VMLINUX, progs[i].btf_name, &id, err, errlen);
		}
		if (!ret) {
			/* LIBBPF_OPTS spelled out (sz is libbpf's version check):
			 * cppcheck cannot expand the macro and gives up on the file. */
			struct libbpf_prog_handler_opts opts = {
				.sz = sizeof(opts),
				.cookie = (long)id,
				.prog_prepare_load_fn = progs[i].iterator ? sampler_iter_prepare
									  : sampler_switch_prepare,
			};

			ret = libbpf_register_prog_handler(progs[i].section,
							   BPF_PROG_TYPE_RAW_TRACEPOINT, 0, &opts);
			if (ret < 0)
				snprintf(err, errlen, "registering the BPF program %s with libbpf: %s",
					 progs[i].section, strerror(-ret));
			else
				ret = 0;
		}
		if (!ret)
			registered = i + 1;
	}
	*iter_id = iter_btf_id;
	pthread_mutex_unlock(&lock);
	return ret;
}

/* The off-CPU program's switches, and which programs and maps load. */
static void sampler_load_offcpu(struct sampler *s, struct ebprof_bpf *skel,
				const struct sampler_config *config, uint32_t off_state)
{
	bool offcpu = s->mode != SAMPLER_MODE_CPU;

	bpf_program__set_autoload(skel->progs.ebprof_sample, s->mode != SAMPLER_MODE_OFFCPU);
	bpf_program__set_autoload(skel->progs.ebprof_targets, s->targets_iter);
	bpf_program__set_autoload(skel->progs.ebprof_switch, offcpu);
	bpf_program__set_autoload(skel->progs.ebprof_wakeup_new, offcpu);
	bpf_program__set_autoload(skel->progs.ebprof_switch_walk,
				  offcpu && !s->offcpu_fp && s->unwind == SAMPLER_UNWIND_TABLES);
	/* Task storage needs 5.11: a kernel without it still samples on-CPU. */
	bpf_map__set_autocreate(skel->maps.offcpu_tasks, offcpu);
	skel->rodata->off_state = off_state;
	skel->rodata->offcpu_fp_walk = s->offcpu_fp;
	skel->rodata->offcpu_rq_clock = s->rq_clock;
	skel->rodata->off_se_cfs_rq = s->rq_clock_offsets[0];
	skel->rodata->off_cfs_rq_rq = s->rq_clock_offsets[1];
	skel->rodata->off_rq_clock = s->rq_clock_offsets[2];
	skel->rodata->off_last_arrival = s->rq_clock_offsets[3];
	skel->rodata->off_sum_exec = s->off_sum_exec;
	skel->rodata->offcpu_period_ns = s->offcpu_period_ns;
	skel->rodata->offcpu_min_ns = config->offcpu_min_ns;
	skel->rodata->offcpu_max_rate =
		or_default(config->offcpu_max_rate, SAMPLER_DEFAULT_OFFCPU_RATE);
	sampler_exp_table(skel->rodata->offcpu_exp);
}

/*
 * Writes the PID filter's array copy (struct ebprof_fast_filter): the PIDs
 * themselves when they fit, unused slots repeating the first; else only a
 * count that sends the BPF side to the tgids map. Before load it sets the
 * initial image; after, it writes the live map (mapped), one word at a time.
 */
static void sampler_fast_filter(struct ebprof_fast_filter *f, const uint32_t *tgids, size_t n)
{
	if (n == 0 || n > EBPROF_FAST_TGIDS) {
		__atomic_store_n(&f->n, EBPROF_FAST_TGIDS + 1, __ATOMIC_RELEASE);
		return;
	}
	for (size_t i = 0; i < EBPROF_FAST_TGIDS; i++)
		__atomic_store_n(&f->tgids[i], tgids[i < n ? i : 0], __ATOMIC_RELAXED);
	__atomic_store_n(&f->n, (uint32_t)n, __ATOMIC_RELEASE);
}

/*
 * Puts the off-CPU table walk (ebprof_switch_walk) in the slot the switch
 * program tail-calls, when it was loaded. Returns 0 or a negative errno.
 */
static int sampler_fill_walker(struct ebprof_bpf *skel)
{
	int fd = bpf_program__fd(skel->progs.ebprof_switch_walk);
	uint32_t zero = 0;

	if (fd < 0)
		return 0; /* not loaded: the switch program walks by frame pointer */
	return bpf_map_update_elem(bpf_map__fd(skel->maps.offcpu_walker), &zero, &fd, BPF_ANY)
		       ? -errno
		       : 0;
}

/*
 * Whether the PID filter goes into the program as constants: fixed for
 * the whole run and short. The verifier then knows every PID, and a tick
 * of another process is rejected without a read of the filter's memory
 * (measured in tests/bench/README.md, "The filtered path").
 */
static bool sampler_tgids_constant(const struct sampler_config *config)
{
	return config->tgids_fixed && config->n_tgids && config->n_tgids <= EBPROF_FAST_TGIDS;
}

/*
 * Whether the sampling events go on the filter's threads rather than on
 * the CPUs (taskev.h): a PID filter fixed for the run, with no name
 * filter (a name can be taken by any process later). EBPROF_EVENTS=cpu
 * keeps the per-CPU events, for the benchmark's comparison and the tests.
 */
static bool sampler_wants_task_events(const struct sampler_config *config)
{
	const char *force = getenv("EBPROF_EVENTS");

	return config->tgids_fixed && config->n_tgids && !config->n_comms &&
	       !(force && !strcmp(force, "cpu"));
}

/* The instructions the verifier processed for obj's loaded programs (0: a kernel before 5.16). */
static uint64_t sampler_verified(struct bpf_object *obj)
{
	struct bpf_program *prog;
	uint64_t sum = 0;

	bpf_object__for_each_program(prog, obj) {
		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info);

		if (bpf_program__fd(prog) >= 0 &&
		    !bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
			sum += info.verified_insns;
	}
	return sum;
}

/*
 * task_struct's members the program reads, in the order of sampler_load()'s
 * task_offsets: group_leader, comm, start_boottime, mm at 0 to 3 (4, 5
 * and 12 are the state's and mm_struct's start_stack and exe_file, the
 * caller's), tgid and pid at 6 and 7, in bytes;
 * at 8 the bit of in_execve (KBTF_ABSENT if this kernel has none), set
 * while an exec replaces the process's memory; at 9 to 11 real_parent,
 * parent_exec_id and self_exec_id, in bytes (all three 0 if one is
 * missing: no report then names a parent). One read of the BTF.
 */
static int sampler_task_offsets(uint32_t *task_offsets, char *err, size_t errlen)
{
	static const char *const members[] = { "group_leader", "comm",	     "start_boottime",
					       "mm",	       "tgid",	     "pid",
					       "in_execve",    "real_parent", "parent_exec_id",
					       "self_exec_id" };
	static const int at[] = { 0, 1, 2, 3, 6, 7, 8, 9, 10, 11 };
	uint32_t bits[10] = { 0 };
	bool parent = true;
	int ret;

	ret = kbtf_member_bits(KBTF_VMLINUX, "task_struct", members, bits, 10, err, errlen);
	for (size_t i = 0; !ret && i < 6; i++) {
		if (bits[i] == KBTF_ABSENT || bits[i] % 8) {
			snprintf(err, errlen, "the kernel's BTF has no byte-aligned task_struct.%s",
				 members[i]);
			ret = -ENOENT;
		}
		task_offsets[at[i]] = bits[i] / 8;
	}
	task_offsets[8] = bits[6];
	for (size_t i = 7; i < 10; i++)
		parent = parent && bits[i] != KBTF_ABSENT && bits[i] % 64 == 0;
	for (size_t i = 7; i < 10; i++)
		task_offsets[at[i]] = parent ? bits[i] / 8 : 0;
	return ret;
}

/*
 * Opens and loads the skeleton, or returns NULL and sets *err. Sets
 * everything fixed at load: the .rodata switches and the map sizes and
 * flags. Without BPF_F_NO_PREALLOC the two
 * stacks maps would pin max_stacks KiB each from the start; kernels before
 * 6.1 refuse non-preallocated maps in perf_event programs (KFEAT_NOPREALLOC),
 * so the caller asks for prealloc there.
 * Not preallocating has one catch at start-up: see sampler_prime_stacks().
 */
static struct ebprof_bpf *sampler_load(struct sampler *s, const struct sampler_config *config,
				       const uint32_t *task_offsets, bool prealloc, int *err)
{
	struct ebprof_bpf *skel;
	uint32_t flags = prealloc ? 0 : BPF_F_NO_PREALLOC;
	struct timespec t0, t1;

	skel = ebprof_bpf__open();
	if (!skel) {
		*err = errno > 0 ? -errno : -ENOMEM;
		return NULL;
	}
	skel->rodata->filter_flags = (config->n_tgids ? EBPROF_FILTER_TGID : 0) |
				     (config->n_comms ? EBPROF_FILTER_COMM : 0);
	sampler_fast_filter(&skel->data_filter->fast_filter, config->tgids, config->n_tgids);
	if (sampler_tgids_constant(config)) {
		skel->rodata->n_fixed_tgids = (uint32_t)config->n_tgids;
		for (size_t i = 0; i < EBPROF_FAST_TGIDS; i++)
			skel->rodata->fixed_tgids[i] = config->tgids[i < config->n_tgids ? i : 0];
	}
	skel->rodata->self_tgid = config->include_self ? 0 : (uint32_t)getpid();
	skel->rodata->include_idle = config->include_idle;
	skel->rodata->kernel_stacks = config->kernel_stacks;
	skel->rodata->user_stacks = config->user_stacks;
	skel->rodata->report_processes = config->report_processes;
	skel->rodata->off_group_leader = task_offsets[0];
	skel->rodata->off_comm = task_offsets[1];
	skel->rodata->off_start_boottime = task_offsets[2];
	skel->rodata->off_mm = task_offsets[3];
	skel->rodata->off_start_stack = task_offsets[5];
	skel->rodata->off_tgid = task_offsets[6];
	skel->rodata->off_pid = task_offsets[7];
	if (task_offsets[9] && task_offsets[12]) {
		skel->rodata->off_real_parent = task_offsets[9];
		skel->rodata->off_parent_exec_id = task_offsets[10];
		skel->rodata->off_self_exec_id = task_offsets[11];
		skel->rodata->off_exe_file = task_offsets[12];
	}
	if (task_offsets[8] != KBTF_ABSENT) {
		skel->rodata->off_in_execve = task_offsets[8] / 8;
		skel->rodata->in_execve_mask = (uint8_t)(1u << (task_offsets[8] % 8));
	}
	sampler_load_offcpu(s, skel, config, task_offsets[4]);
	/* Without reports, the smallest maps the kernel accepts. */
	bpf_map__set_max_entries(skel->maps.reported,
				 config->report_processes ? SAMPLER_REPORTED_ENTRIES : 1);
	s->ring_bytes = !config->report_processes ? (uint32_t)sysconf(_SC_PAGESIZE)
			: s->unwind == SAMPLER_UNWIND_TABLES
			? sampler_copy_ring_bytes(s->frequency, (int)sysconf(_SC_NPROCESSORS_ONLN),
						  s->mode)
			: SAMPLER_PROCESS_RING_BYTES;
	bpf_map__set_max_entries(skel->maps.process_events, s->ring_bytes);
	bpf_map__set_max_entries(skel->maps.scratch, (uint32_t)s->n_possible_cpus);
	sampler_load_unwinder(s, skel, config);

	s->counts_maps[0] = skel->maps.counts_a;
	s->counts_maps[1] = skel->maps.counts_b;
	s->stacks_maps[0] = skel->maps.stacks_a;
	s->stacks_maps[1] = skel->maps.stacks_b;
	for (int i = 0; i < 2; i++) {
		bpf_map__set_max_entries(s->counts_maps[i], s->max_keys);
		bpf_map__set_max_entries(s->stacks_maps[i], s->max_stacks);
		bpf_map__set_map_flags(s->counts_maps[i], flags);
		bpf_map__set_map_flags(s->stacks_maps[i], flags);
	}
	bpf_map__set_map_flags(bpf_map__inner_map(skel->maps.counts), flags);
	bpf_map__set_map_flags(bpf_map__inner_map(skel->maps.stacks), flags);
	bpf_map__set_map_flags(skel->maps.py_procs, flags);
	bpf_map__set_max_entries(skel->maps.tgids,
				 max_u32((uint32_t)config->n_tgids, SAMPLER_MIN_FILTER_ENTRIES));
	bpf_map__set_max_entries(skel->maps.comms, max_u32((uint32_t)config->n_comms, 1));

	/*
	 * Written only here, before load: not mmapable, the kernel keeps it
	 * in kmalloc'd memory rather than vmalloc'd pages, and a rejected
	 * tick, which reads nothing else of ours but its counters, was
	 * measured ~12% cheaper (tests/bench/README.md, "The filtered path").
	 */
	bpf_map__set_map_flags(skel->maps.rodata,
			       bpf_map__map_flags(skel->maps.rodata) & ~BPF_F_MMAPABLE);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	*err = ebprof_bpf__load(skel);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	s->load_seconds += (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	if (!*err)
		s->verified_insns = sampler_verified(skel->obj);
	if (!*err)
		*err = sampler_fill_walker(skel);
	if (*err) {
		ebprof_bpf__destroy(skel);
		return NULL;
	}
	return skel;
}

static int sampler_fill_filters(struct sampler *s, const struct sampler_config *config)
{
	uint8_t yes = 1;
	int fd, err;

	fd = bpf_map__fd(s->skel->maps.tgids);
	for (size_t i = 0; i < config->n_tgids; i++) {
		err = bpf_map_update_elem(fd, &config->tgids[i], &yes, BPF_ANY);
		if (err)
			return err;
	}
	fd = bpf_map__fd(s->skel->maps.comms);
	for (size_t i = 0; i < config->n_comms; i++) {
		char comm[EBPROF_COMM_LEN] = { 0 };

		/* The kernel keeps TASK_COMM_LEN - 1 characters of a name. */
		strncpy(comm, config->comms[i], sizeof(comm) - 1);
		err = bpf_map_update_elem(fd, comm, &yes, BPF_ANY);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Primes the kernel allocator behind each stacks map on every CPU. Without
 * preallocation, a map's per-CPU cache of 1 KiB elements starts with a
 * single element (prefill_mem_cache(), kernel/bpf/memalloc.c) and refills
 * from irq_work, which cannot run inside the program: the first sample on
 * a CPU that stores a new kernel and a new user stack would find the cache
 * empty for the second one and be lost. One insert from user space on that
 * CPU takes the element and raises the refill; the delete gives it back.
 * A CPU outside our affinity mask is skipped: its first such sample may
 * then be lost, and is counted in stacks_full. With only >= 0, primes that
 * CPU alone (one that came online after the start); -1: every online one.
 */
static void sampler_prime_stacks(struct sampler *s, const bool *online, int only)
{
	size_t size = CPU_ALLOC_SIZE(s->n_possible_cpus);
	cpu_set_t *saved = CPU_ALLOC(s->n_possible_cpus);
	cpu_set_t *one = CPU_ALLOC(s->n_possible_cpus);
	/* Id 0 is never a stack's hash: the program maps 0 to 1. */
	struct ebprof_chunk_key id = { 0 };
	struct sampler_chunk chunk = { 0 };

	if (!saved || !one || sched_getaffinity(0, size, saved))
		goto free_sets;
	for (int cpu = 0; cpu < s->n_possible_cpus; cpu++) {
		if (!online[cpu] || (only >= 0 && cpu != only) || !CPU_ISSET_S(cpu, size, saved))
			continue;
		CPU_ZERO_S(size, one);
		CPU_SET_S(cpu, size, one);
		if (sched_setaffinity(0, size, one))
			continue;
		for (int i = 0; i < 2; i++) {
			int fd = bpf_map__fd(s->stacks_maps[i]);

			if (!bpf_map_update_elem(fd, &id, &chunk, BPF_ANY))
				bpf_map_delete_elem(fd, &id);
		}
	}
	sched_setaffinity(0, size, saved);
free_sets:
	CPU_FREE(saved);
	CPU_FREE(one);
}

/* At most this many per-thread events, and half the descriptors the process may open. */
#define SAMPLER_MAX_TASK_EVENTS 1024

static size_t sampler_task_event_limit(void)
{
	struct rlimit nofile;
	size_t limit = SAMPLER_MAX_TASK_EVENTS;

	if (!getrlimit(RLIMIT_NOFILE, &nofile) && nofile.rlim_cur != RLIM_INFINITY &&
	    nofile.rlim_cur / 2 < limit)
		limit = (size_t)(nofile.rlim_cur / 2);
	return limit;
}

/*
 * A CPU-clock event on every thread of the filter's processes (taskev.h),
 * each carrying the program. Returns 0, or a negative errno with the
 * reason in s->task_events_why and nothing left attached.
 */
static int sampler_attach_tasks(struct sampler *s, unsigned int frequency)
{
	size_t limit = sampler_task_event_limit();
	char *why = s->task_events_why;
	size_t whylen = sizeof(s->task_events_why);
	struct bpf_link **links;
	struct taskev t;
	int ret;

	ret = taskev_open(&t, s->task_tgids, s->n_task_tgids, frequency, limit, why, whylen);
	if (ret)
		return ret;
	if (t.n == 0) {
		snprintf(why, whylen, "the processes to profile have no threads left");
		ret = -ESRCH;
		goto free_events;
	}
	links = realloc(s->links, t.n * sizeof(*links));
	if (!links) {
		snprintf(why, whylen, "out of memory for %zu perf events", t.n);
		ret = -ENOMEM;
		goto free_events;
	}
	s->links = links;
	for (size_t i = 0; i < t.n; i++) {
		struct bpf_link *link =
			bpf_program__attach_perf_event(s->skel->progs.ebprof_sample, t.ev[i].fd);

		if (!link) {
			ret = -errno;
			snprintf(why, whylen, "attaching the BPF program to thread %d: %s",
				 (int)t.ev[i].tid, strerror(-ret));
			while (s->n_links > 0)
				bpf_link__destroy(s->links[--s->n_links]);
			goto free_events;
		}
		t.ev[i].fd = -1; /* the link closes it */
		s->links[s->n_links++] = link;
	}
	s->n_task_events = t.n;
	why[0] = '\0';
free_events:
	taskev_free(&t);
	return ret;
}

/*
 * One CPU-clock event per online CPU, each carrying the program; or, for a
 * fixed PID filter, one per thread of its processes, and per CPU only if
 * those cannot be opened (the reason is kept for sampler_task_events()).
 */
static int sampler_attach(struct sampler *s, unsigned int frequency, char *err, size_t errlen)
{
	bool *online;
	int ret;

	/* A start tried again after a failure begins afresh. */
	cpuevents_free(&s->cpus);
	free(s->online);
	free(s->cpu_ticks);
	s->online = calloc((size_t)s->n_possible_cpus, sizeof(*s->online));
	s->cpu_ticks = calloc((size_t)s->n_possible_cpus, sizeof(*s->cpu_ticks));
	if (!s->online || !s->cpu_ticks)
		return -ENOMEM;
	ret = cpuevents_init(&s->cpus, s->skel->progs.ebprof_sample, s->n_possible_cpus,
			     frequency);
	if (ret)
		return ret;
	online = s->online;
	if (sampler_diag_online_cpus(online, s->n_possible_cpus) < 0) {
		/* No sysfs: try every CPU; an offline one answers ENODEV. */
		for (int cpu = 0; cpu < s->n_possible_cpus; cpu++)
			online[cpu] = true;
	}
	if (!s->prealloc)
		sampler_prime_stacks(s, online, -1);
	s->n_online = 0;
	for (int cpu = 0; cpu < s->n_possible_cpus; cpu++)
		s->n_online += online[cpu];
	if (s->task_tgids && s->mode != SAMPLER_MODE_OFFCPU && !sampler_attach_tasks(s, frequency))
		return 0;
	for (int cpu = 0; cpu < s->n_possible_cpus; cpu++) {
		if (!online[cpu] || s->mode == SAMPLER_MODE_OFFCPU)
			continue;
		ret = cpuevents_open(&s->cpus, cpu, 0, err, errlen);
		if (ret == -ENODEV)
			continue;
		if (ret)
			return ret;
	}
	cpuevents_opened(&s->cpus);
	if (s->cpus.n_open == 0 && s->mode != SAMPLER_MODE_OFFCPU) {
		snprintf(err, errlen, "no online CPU accepted a CPU-clock perf event");
		return -ENODEV;
	}
	return 0;
}

/*
 * With per-CPU events: closes those whose CPU went offline, and opens one
 * on each online CPU without one (bpf/cpuevents.h). Before the grid's
 * update, with the program's runs per CPU in s->percpu. An event that
 * cannot be opened is tried again at the next stats read.
 */
static void sampler_follow_cpus(struct sampler *s, uint64_t now_ns)
{
	char err[256];
	bool online;

	if (!s->started || s->mode == SAMPLER_MODE_OFFCPU || s->n_task_events ||
	    s->cpus.grid.stop_ns)
		return;
	for (int cpu = 0; cpu < s->n_possible_cpus; cpu++)
		s->cpu_ticks[cpu] = s->percpu[cpu].stats[EBPROF_STAT_SAMPLES];
	online = sampler_diag_online_cpus(s->online, s->n_possible_cpus) >= 0;
	cpuevents_look(&s->cpus, now_ns, online ? s->online : NULL, s->cpu_ticks);
	if (!online)
		return;
	for (int cpu = 0; cpu < s->n_possible_cpus; cpu++) {
		if (!s->online[cpu] || cpuevents_has(&s->cpus, cpu))
			continue;
		if (!s->prealloc)
			sampler_prime_stacks(s, s->online, cpu);
		cpuevents_open(&s->cpus, cpu, s->cpu_ticks[cpu], err, sizeof(err));
	}
}

/* Appends one unwound copy to the late queue; on no memory it is counted lost. */
static void sampler_queue_late(struct sampler *s, const struct ebprof_copy_event *e,
			       const uint64_t *uips, uint32_t n_uips, int stop)
{
	struct late_queue *q = &s->late;
	uint32_t n_kips = e->n_kips <= EBPROF_MAX_DEPTH ? e->n_kips : EBPROF_MAX_DEPTH;
	size_t head = (sizeof(struct late_sample) + 7) / 8, need = head + n_kips + n_uips;
	struct late_sample ls = { .tgid = e->tgid, .n_kips = n_kips, .n_uips = n_uips,
				  .start_time = e->start_time };

	memcpy(ls.comm, e->comm, sizeof(ls.comm));
	ls.comm[sizeof(ls.comm) - 1] = '\0';
	pthread_mutex_lock(&s->late_lock);
	if (GROW_ARRAY(&q->words, &q->cap, q->n + need, 4096)) {
		q->lost++;
		goto unlock;
	}
	memcpy(&q->words[q->n], &ls, sizeof(ls));
	memcpy(&q->words[q->n + head], e->kips, n_kips * sizeof(uint64_t));
	memcpy(&q->words[q->n + head + n_kips], uips, n_uips * sizeof(uint64_t));
	q->n += need;
	if (stop >= 0 && stop <= UNW_DEPTH_CAP)
		q->stops[stop]++;
unlock:
	pthread_mutex_unlock(&s->late_lock);
}

/*
 * Keeps an off-CPU copy's frames under its id, and counts how its walk
 * ended as the late queue counts its copies'. Without memory it is not
 * kept: the samples that name it are counted as missing stacks.
 */
static void sampler_keep_offcpu_copy(struct sampler *s, uint64_t id, const uint64_t *uips,
				     uint32_t n_uips, int stop)
{
	struct offcpu_copy *slot;
	uint64_t *ips = malloc((n_uips ? n_uips : 1) * sizeof(*ips));

	pthread_mutex_lock(&s->late_lock);
	if (stop >= 0 && stop <= UNW_DEPTH_CAP)
		s->late.stops[stop]++;
	if (!s->offcpu_copies)
		s->offcpu_copies = calloc(SAMPLER_OFFCPU_COPIES, sizeof(*s->offcpu_copies));
	if (!ips || !s->offcpu_copies) {
		free(ips);
		goto unlock;
	}
	slot = &s->offcpu_copies[s->offcpu_next];
	s->offcpu_next = (s->offcpu_next + 1) % SAMPLER_OFFCPU_COPIES;
	free(slot->ips);
	memcpy(ips, uips, n_uips * sizeof(*ips));
	*slot = (struct offcpu_copy){ .id = id, .n = n_uips, .ips = ips };
unlock:
	pthread_mutex_unlock(&s->late_lock);
}

/* Copies the frames of the off-CPU copy id into *copy; false if none is kept. */
static bool sampler_find_offcpu_copy(struct sampler *s, uint64_t id, struct sampler_stack *copy)
{
	bool found = false;

	pthread_mutex_lock(&s->late_lock);
	for (uint32_t i = 0; s->offcpu_copies && i < SAMPLER_OFFCPU_COPIES && !found; i++) {
		const struct offcpu_copy *c = &s->offcpu_copies[i];

		if (c->id != id)
			continue;
		memcpy(copy->ips, c->ips, c->n * sizeof(*c->ips));
		copy->nr = c->n;
		found = true;
	}
	pthread_mutex_unlock(&s->late_lock);
	return found;
}

/*
 * A copied sample: the handler unwinds it (on this thread, after the
 * process's own report, which came first on this ring buffer), and it
 * waits for the next drain. Without a handler it keeps its first frame.
 */
static int sampler_on_copy(struct sampler *s, const struct ebprof_copy_event *e, size_t size)
{
	size_t head = offsetof(struct ebprof_copy_event, stack);
	struct sampler_copy copy = {
		.tgid = e->tgid,
		.start_time = e->start_time,
		.comm = e->comm,
		.sampled_at = e->sampled_at,
		.regs = &e->regs,
		.stack = e->stack,
		.stack_len = e->stack_bytes,
	};
	uint32_t n = 0;
	int stop = UNW_NO_TABLE;
	bool stale = false;
	char comm[SAMPLER_COMM_LEN];

	if (size < head)
		return 0;
	if (copy.stack_len > size - head)
		copy.stack_len = (uint32_t)(size - head);
	memcpy(comm, e->comm, sizeof(comm));
	comm[sizeof(comm) - 1] = '\0';
	copy.comm = comm;
	if (e->type == EBPROF_EVENT_ORACLE) {
		/* Recorded by the program already: only the test's handler sees it. */
		if (s->oracle_fn)
			s->oracle_fn(&copy, (const uint64_t *)e->uips,
				     e->n_uips <= EBPROF_MAX_DEPTH + 1 ? e->n_uips : 0, s->oracle_ctx);
		return 0;
	}
	if (s->copy_fn)
		n = s->copy_fn(&copy, s->copy_ips, EBPROF_MAX_FRAMES, &stop, &stale, s->copy_ctx);
	if (s->copy_fn && stale && s->process_fn) {
		/* Its mappings changed since its report: report it again, then retry. */
		struct sampler_process again = { .tgid = e->tgid, .start_time = e->start_time };

		memcpy(again.comm, comm, sizeof(again.comm));
		s->process_fn(&again, s->process_ctx);
		n = s->copy_fn(&copy, s->copy_ips, EBPROF_MAX_FRAMES, &stop, &stale, s->copy_ctx);
	}
	if (!n && (e->regs.valid & UNW_REG(UNW_RIP))) {
		s->copy_ips[0] = e->regs.r[UNW_RIP];
		n = 1;
	}
	if (e->id)
		sampler_keep_offcpu_copy(s, e->id, s->copy_ips, n, stop);
	else
		sampler_queue_late(s, e, s->copy_ips, n, stop);
	return 0;
}

static int sampler_on_process(void *ctx, void *data, size_t size)
{
	const struct ebprof_process_event *event = data;
	struct sampler *s = ctx;
	struct sampler_process process;

	if (size >= sizeof(uint32_t) && (*(const uint32_t *)data == EBPROF_EVENT_COPY ||
					 *(const uint32_t *)data == EBPROF_EVENT_ORACLE))
		return sampler_on_copy(s, data, size);
	if (size < sizeof(*event) || event->type != EBPROF_EVENT_PROCESS)
		return 0;
	process.tgid = event->tgid;
	process.start_time = event->start_time;
	process.sampled_at = event->sampled_at;
	process.parent_tgid = event->parent_tgid;
	process.parent_start_time = event->parent_tgid ? event->parent_start_time : 0;
	memcpy(process.comm, event->comm, sizeof(process.comm));
	process.comm[sizeof(process.comm) - 1] = '\0';
	return s->process_fn ? s->process_fn(&process, s->process_ctx) : 0;
}

/*
 * The exec and rename hooks: they tell the program that a task's name or
 * mappings changed (see cache_gen in ebprof.bpf.c).
 */
static int sampler_attach_hooks(struct sampler *s, char *err, size_t errlen)
{
	int ret;

	s->exec_link = bpf_program__attach(s->skel->progs.ebprof_exec);
	if (s->exec_link)
		s->rename_link = bpf_program__attach(s->skel->progs.ebprof_rename);
	if (!s->exec_link || !s->rename_link) {
		char advice[64];

		ret = -errno;
		snprintf(err, errlen, "attaching to the %s tracepoint: %s%s",
			 s->exec_link ? "task_rename" : "sched_process_exec", strerror(-ret),
			 sampler_diag_advice(ret, advice, sizeof(advice)));
		return ret;
	}
	return 0;
}

/*
 * Attaches a tp_btf program to the point its load named (no name here)
 * into *fd, which stays -1 on failure. Returns 0 or a negative errno.
 */
static int sampler_attach_tp(struct bpf_program *prog, const char *tracepoint, int *fd,
			     char *err, size_t errlen)
{
	char advice[64];
	int ret = bpf_raw_tracepoint_open(NULL, bpf_program__fd(prog));

	if (ret >= 0) {
		*fd = ret;
		return 0;
	}
	snprintf(err, errlen, "attaching to the %s tracepoint: %s%s", tracepoint, strerror(-ret),
		 sampler_diag_advice(ret, advice, sizeof(advice)));
	return ret;
}

/*
 * The off-CPU programs, on the scheduler's switch and on a new task's
 * first wake-up: after the hooks, before the ticks.
 */
static int sampler_attach_switch(struct sampler *s, char *err, size_t errlen)
{
	int ret;

	if (s->mode == SAMPLER_MODE_CPU)
		return 0;
	ret = sampler_attach_tp(s->skel->progs.ebprof_switch, "sched_switch", &s->switch_fd, err,
				errlen);
	if (!ret)
		ret = sampler_attach_tp(s->skel->progs.ebprof_wakeup_new, "sched_wakeup_new",
					&s->wakeup_fd, err, errlen);
	return ret;
}

/*
 * The offset of task_struct's state word: __state since 5.14, state
 * before. Only off-CPU reads it; cpu mode asks nothing more of the BTF.
 */
static int sampler_state_offset(enum sampler_mode mode, uint32_t *offset, char *err,
				size_t errlen)
{
	static const char *const state_new[] = { "__state" }, *const state_old[] = { "state" };

	*offset = 0;
	if (mode == SAMPLER_MODE_CPU)
		return 0;
	if (!kbtf_member_offsets(KBTF_VMLINUX, "task_struct", state_new, offset, 1, err, errlen))
		return 0;
	return kbtf_member_offsets(KBTF_VMLINUX, "task_struct", state_old, offset, 1, err,
				   errlen);
}

/*
 * Whether the scheduler's clock (sched_clock) agrees across CPUs, so that a
 * wait stamped on one CPU's run queue and ended on another's is timed
 * right: the kernel marks it stable on a TSC that is (the clocksource
 * "tsc", which the kernel gives up at the first sign of an unstable TSC),
 * and under KVM where the host says its clock is (KVM_FEATURE_CLOCKSOURCE_
 * STABLE_BIT, CPUID 0x40000001 EAX bit 24). Elsewhere the waits keep
 * bpf_ktime_get_ns(), which is monotonic across CPUs by construction.
 */
static bool sampler_sched_clock_stable(void)
{
	char name[32] = "";
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "re");

	if (f) {
		if (!fgets(name, sizeof(name), f))
			name[0] = '\0';
		fclose(f);
	}
	if (!strcmp(name, "tsc\n"))
		return true;
#if defined(__x86_64__) || defined(__i386__)
	if (!strcmp(name, "kvm-clock\n")) {
		unsigned int a, b, c, d;

		__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x40000000U));
		/* "KVMKVMKVM\0\0\0" in EBX, ECX, EDX */
		if (b != 0x4b4d564bU || c != 0x564b4d56U || d != 0x4dU || a < 0x40000001U)
			return false;
		__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x40000001U));
		return a & (1U << 24);
	}
#endif
	return false;
}

/*
 * The offset of outer.member.inner_member in the kernel's BTF, where
 * member is a struct inner (task_struct.se.sum_exec_runtime). Returns 0
 * or -1 (either is missing).
 */
static int sampler_nested_offset(const char *outer, const char *member, const char *inner,
				 const char *inner_member, uint32_t *offset)
{
	uint32_t a = 0, b = 0;
	char err[128];

	if (kbtf_member_offsets(KBTF_VMLINUX, outer, &member, &a, 1, err, sizeof(err)) ||
	    kbtf_member_offsets(KBTF_VMLINUX, inner, &inner_member, &b, 1, err, sizeof(err)))
		return -1;
	*offset = a + b;
	return 0;
}

/*
 * Whether off-CPU waits are timed by the run queue's clock, read in place
 * at the switch (offcpu_now() in offcpu.bpf.h), and its offsets: only with
 * a stable scheduler clock and the group scheduler's pointers in the BTF
 * (CONFIG_FAIR_GROUP_SCHED). EBPROF_OFFCPU_CLOCK=ktime keeps the helper
 * (the benchmark's comparison, and the tests' check of the two clocks);
 * =rq takes the run queue's clock whatever the clocksource (the 6.1 guest
 * of tests/kernel checks that path so, on any host).
 */
static bool sampler_rq_clock(enum sampler_mode mode, uint32_t offsets[4])
{
	static const char *const cfs_rq_rq[] = { "rq" }, *const rq_clock[] = { "clock" };
	const char *force = getenv("EBPROF_OFFCPU_CLOCK");
	bool stable = force && !strcmp(force, "rq");
	char err[128];

	offsets[0] = offsets[1] = offsets[2] = offsets[3] = 0;
	if (mode == SAMPLER_MODE_CPU || (force && !strcmp(force, "ktime")) ||
	    !(stable || sampler_sched_clock_stable()))
		return false;
	if (sampler_nested_offset("task_struct", "se", "sched_entity", "cfs_rq", &offsets[0]) ||
	    kbtf_member_offsets(KBTF_VMLINUX, "cfs_rq", cfs_rq_rq, &offsets[1], 1, err,
				sizeof(err)) ||
	    kbtf_member_offsets(KBTF_VMLINUX, "rq", rq_clock, &offsets[2], 1, err, sizeof(err))) {
		offsets[0] = offsets[1] = offsets[2] = 0;
		return false;
	}
	/*
	 * The scheduler's own stamp of a task's last switch-in, on that clock
	 * (CONFIG_SCHED_INFO); offsets[3] stays 0 without it.
	 */
	sampler_nested_offset("task_struct", "sched_info", "sched_info", "last_arrival",
			      &offsets[3]);
	return true;
}

/*
 * task_struct.se.sum_exec_runtime, for the off-CPU modes: a wait whose
 * switch-in the program missed is timed by it (offcpu_unseen()). 0 when
 * the BTF lacks it (such waits are then untimed, as counted).
 */
static uint32_t sampler_sum_exec_offset(enum sampler_mode mode)
{
	uint32_t offset = 0;

	if (mode == SAMPLER_MODE_CPU ||
	    sampler_nested_offset("task_struct", "se", "sched_entity", "sum_exec_runtime", &offset))
		return 0;
	return offset;
}

/* The ring buffer's reader, for report_processes. */
static int sampler_open_reports(struct sampler *s, char *err, size_t errlen)
{
	int ret;

	ret = ringrd_open(bpf_map__fd(s->skel->maps.process_events), &s->processes);
	if (ret) {
		char advice[64];

		snprintf(err, errlen, "reading the process ring buffer: %s%s", strerror(-ret),
			 sampler_diag_advice(ret, advice, sizeof(advice)));
		return ret;
	}
	return 0;
}

static int sampler_alloc_buffers(struct sampler *s, uint32_t chunk)
{
	s->chunk = chunk ? chunk : SAMPLER_DRAIN_CHUNK;
	s->keys = calloc(s->chunk, sizeof(*s->keys));
	s->counts = calloc(s->chunk, sizeof(*s->counts));
	s->chunk_keys = calloc(SAMPLER_STACK_CHUNK, sizeof(*s->chunk_keys));
	s->chunk_buf = calloc(SAMPLER_STACK_CHUNK, sizeof(*s->chunk_buf));
	s->percpu = calloc((size_t)s->n_possible_cpus, sizeof(*s->percpu));
	s->pending = calloc((size_t)s->n_possible_cpus * EBPROF_PENDING_SLOTS, sizeof(*s->pending));
	s->copy_ips = calloc(EBPROF_MAX_FRAMES, sizeof(*s->copy_ips));
	if (!s->keys || !s->counts || !s->chunk_keys || !s->chunk_buf || !s->percpu ||
	    !s->pending || !s->copy_ips)
		return -ENOMEM;
	return 0;
}

/*
 * Picks the walk: tables where asked and the kernel has what the table
 * unwinder calls (KFEAT_UNWIND_TABLES); auto falls back to frame
 * pointers without them, and the caller has said so (kfeat's line).
 */
static int sampler_pick_unwind(struct sampler *s, const struct sampler_config *config,
			       const struct kfeat *features, char *err, size_t errlen)
{
	s->unwind = SAMPLER_UNWIND_FP;
	if (config->unwind == SAMPLER_UNWIND_FP || !config->user_stacks)
		return 0;
	if (kfeat_state(features, KFEAT_UNWIND_TABLES) == KFEAT_PRESENT) {
		s->unwind = SAMPLER_UNWIND_TABLES;
		return 0;
	}
	if (config->unwind == SAMPLER_UNWIND_AUTO)
		return 0;
	kfeat_missing_message(KFEAT_UNWIND_TABLES, err, errlen);
	return -EOPNOTSUPP;
}

/*
 * Where a task's user fs base is kept (task_struct.thread.fsbase, x86-64),
 * for the Python walk's thread state; 0 when the kernel's BTF does not
 * say (then no Python frames: sampler_python() is false).
 */
static uint32_t sampler_fsbase_offset(void)
{
	static const char *const thread[] = { "thread" }, *const fsbase[] = { "fsbase" };
	uint32_t at_thread, at_fsbase;
	char err[128];

	if (kbtf_member_offsets(KBTF_VMLINUX, "task_struct", thread, &at_thread, 1, err,
				sizeof(err)) ||
	    kbtf_member_offsets(KBTF_VMLINUX, "thread_struct", fsbase, &at_fsbase, 1, err,
				sizeof(err)))
		return 0;
	return at_thread + at_fsbase;
}

static int sampler_open_unwmaps(struct sampler *s)
{
	struct ebprof_bpf *skel = s->skel;
	struct unwmaps_maps m = {
		.procs = bpf_map__fd(skel->maps.unw_procs),
		.mappings = bpf_map__fd(skel->maps.unw_mappings),
		.rules = bpf_map__fd(skel->maps.unw_rules),
		.tables = bpf_map__fd(skel->maps.unw_tables),
		.max_procs = bpf_map__max_entries(skel->maps.unw_procs),
		.max_mappings = bpf_map__max_entries(skel->maps.unw_mappings),
		.max_rules = bpf_map__max_entries(skel->maps.unw_rules),
		.max_tables = bpf_map__max_entries(skel->maps.unw_tables),
		.gen = &skel->bss->unw_gen,
	};

	if (s->unwind != SAMPLER_UNWIND_TABLES)
		return 0;
	return unwmaps_new(&m, &s->unwmaps);
}

int sampler_open(const struct sampler_config *config, struct sampler **out, char *err,
		 size_t errlen)
{
	const struct kfeat *config_features;
	enum kfeat_state noprealloc;
	struct sampler_config defaults;
	struct kfeat features;
	unsigned int frequency;
	struct sampler *s;
	uint32_t iter_id = 0;
	int ret;

	*out = NULL;
	if (errlen)
		err[0] = '\0';
	if (!config) {
		sampler_config_init(&defaults);
		config = &defaults;
	}
	ret = sampler_check_config(config, err, errlen);
	if (ret)
		return ret;
	frequency = config->frequency ? config->frequency : SAMPLER_DEFAULT_FREQUENCY;
	ret = sampler_diag_btf(err, errlen);
	if (ret)
		return ret;
	ret = sampler_register_switch(&iter_id, err, errlen);
	if (ret)
		return ret;
	static const char *const mm_members[] = { "start_stack", "exe_file" };
	uint32_t task_offsets[13], mm_bits[2];

	ret = sampler_task_offsets(task_offsets, err, errlen);
	if (!ret)
		ret = sampler_state_offset(config->mode, &task_offsets[4], err, errlen);
	if (!ret)
		ret = kbtf_member_bits(KBTF_VMLINUX, "mm_struct", mm_members, mm_bits, 2, err,
				       errlen);
	if (!ret && (mm_bits[0] == KBTF_ABSENT || mm_bits[0] % 8)) {
		snprintf(err, errlen, "the kernel's BTF has no byte-aligned mm_struct.start_stack");
		ret = -ENOENT;
	}
	if (ret)
		return ret;
	/* In bytes; exe_file 0 (no report names a parent) if this kernel lacks it. */
	task_offsets[5] = mm_bits[0] / 8;
	task_offsets[12] = mm_bits[1] != KBTF_ABSENT && mm_bits[1] % 64 == 0 ? mm_bits[1] / 8 : 0;
	libbpf_set_print(sampler_libbpf_print);

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->off_fsbase = sampler_fsbase_offset();
	pthread_mutex_init(&s->late_lock, NULL);
	s->switch_fd = -1;
	s->wakeup_fd = -1;
	s->mode = config->mode;
	s->frequency = frequency;
	/* Known targets, to be prepared before the start: the iterator lists them. */
	s->targets_iter = config->start_later && iter_id && (config->n_tgids || config->n_comms);
	s->offcpu_period_ns = config->offcpu_period_ns ? config->offcpu_period_ns
						       : SAMPLER_DEFAULT_OFFCPU_PERIOD_NS;
	s->rq_clock = sampler_rq_clock(config->mode, s->rq_clock_offsets);
	s->off_sum_exec = sampler_sum_exec_offset(config->mode);
	if (!config->features) {
		kfeat_probe(&features);
		config_features = &features;
	} else {
		config_features = config->features;
	}
	ret = sampler_pick_unwind(s, config, config_features, err, errlen);
	if (ret)
		goto free_sampler;
	if (config->mode != SAMPLER_MODE_CPU &&
	    kfeat_state(config_features, KFEAT_TASK_STORAGE) == KFEAT_ABSENT) {
		kfeat_missing_message(KFEAT_TASK_STORAGE, err, errlen);
		ret = -EOPNOTSUPP;
		goto free_sampler;
	}
	s->max_keys = config->max_keys ? config->max_keys : SAMPLER_DEFAULT_MAX_KEYS;
	s->max_stacks = config->max_stacks ? config->max_stacks : SAMPLER_DEFAULT_MAX_STACKS;
	s->tgid_filter = config->n_tgids > 0 && !config->tgids_fixed;
	if (sampler_wants_task_events(config)) {
		s->task_tgids = malloc(config->n_tgids * sizeof(*s->task_tgids));
		if (!s->task_tgids) {
			ret = -ENOMEM;
			snprintf(err, errlen, "out of memory for the PID filter");
			goto free_sampler;
		}
		memcpy(s->task_tgids, config->tgids, config->n_tgids * sizeof(*s->task_tgids));
		s->n_task_tgids = config->n_tgids;
	}
	s->n_possible_cpus = libbpf_num_possible_cpus();
	if (s->n_possible_cpus <= 0) {
		ret = s->n_possible_cpus ? s->n_possible_cpus : -ENODEV;
		snprintf(err, errlen, "cannot count the possible CPUs: %s", strerror(-ret));
		goto free_sampler;
	}
	ret = sampler_alloc_buffers(s, config->drain_chunk);
	if (ret) {
		snprintf(err, errlen, "out of memory for the drain buffers");
		goto free_sampler;
	}

	noprealloc = kfeat_state(config_features, KFEAT_NOPREALLOC);
	s->prealloc = noprealloc == KFEAT_ABSENT;
	s->skel = sampler_load(s, config, task_offsets, s->prealloc, &ret);
	/* A probe refused for lack of privilege leaves it to the load to tell. */
	if (!s->skel && ret == -EINVAL && noprealloc == KFEAT_UNKNOWN) {
		s->prealloc = true;
		s->skel = sampler_load(s, config, task_offsets, true, &ret);
	}
	/*
	 * A verifier that gives up on the off-CPU table walk (ebprof_switch_walk;
	 * Linux 6.1's did while it was inside the switch program: 1M
	 * instructions): auto walks off-CPU stacks by frame pointer there, on-CPU
	 * ones still by tables, and says so (the plugin's offcpu_fp_walk gauge).
	 */
	if (!s->skel && ret == -E2BIG && s->mode != SAMPLER_MODE_CPU &&
	    s->unwind == SAMPLER_UNWIND_TABLES && config->unwind == SAMPLER_UNWIND_AUTO) {
		s->offcpu_fp = true;
		s->skel = sampler_load(s, config, task_offsets, s->prealloc, &ret);
	}
	if (!s->skel) {
		sampler_diag_load(ret, err, errlen);
		goto free_sampler;
	}
	ret = sampler_fill_filters(s, config);
	if (ret) {
		snprintf(err, errlen, "writing the PID and name filters: %s", strerror(-ret));
		goto free_sampler;
	}
	ret = sampler_open_unwmaps(s);
	if (ret) {
		snprintf(err, errlen, "out of memory for the unwind tables' bookkeeping");
		goto free_sampler;
	}
	/* Before the samples start, so that no exec, rename or first sample goes unseen. */
	ret = sampler_attach_hooks(s, err, errlen);
	if (ret)
		goto free_sampler;
	if (config->report_processes) {
		ret = sampler_open_reports(s, err, errlen);
		if (ret)
			goto free_sampler;
	}
	if (!config->start_later) {
		ret = sampler_start(s, err, errlen);
		if (ret)
			goto free_sampler;
	}
	*out = s;
	return 0;

free_sampler:
	sampler_free(s);
	return ret;
}

int sampler_start(struct sampler *s, char *err, size_t errlen)
{
	int ret;

	if (errlen)
		err[0] = '\0';
	if (s->started)
		return 0;
	ret = sampler_attach_switch(s, err, errlen);
	if (!ret)
		ret = sampler_attach(s, s->frequency, err, errlen);
	s->started = !ret;
	if (s->started) {
		s->steal_known = !steal_read_ns(&s->steal_at_start);
		s->started_ns = tickgrid_now_ns();
	}
	return ret;
}

int sampler_targets(struct sampler *s, sampler_process_fn fn, void *ctx)
{
	struct ebprof_target t[64];
	struct bpf_link *link;
	int fd, n = 0, ret = 0;
	ssize_t got;

	if (!s->targets_iter)
		return -EOPNOTSUPP;
	link = bpf_program__attach_iter(s->skel->progs.ebprof_targets, NULL);
	if (!link)
		return errno > 0 ? -errno : -EINVAL;
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0) {
		ret = -errno;
		goto destroy_link;
	}
	/* The seq_file hands out whole records: a read never splits one. */
	while (!ret && (got = read(fd, t, sizeof(t))) != 0) {
		if (got < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			ret = -errno;
			break;
		}
		for (size_t i = 0; !ret && i < (size_t)got / sizeof(t[0]); i++) {
			struct sampler_process p = { .tgid = t[i].tgid,
						     .start_time = t[i].start_time };

			ret = fn(&p, ctx);
			n += !ret;
		}
	}
	close(fd);
destroy_link:
	bpf_link__destroy(link);
	return ret ? ret : n;
}

/* Sums the per-CPU stats and moves the previous totals forward. */
static int sampler_read_stats(struct sampler *s, struct sampler_stats *delta)
{
	int fd = bpf_map__fd(s->skel->maps.cpus);
	uint64_t d[EBPROF_STAT_NR], now = tickgrid_now_ns(), missed;
	uint32_t zero = 0;

	/* now before the read: every tick due by then ran, or is in flight. */
	if (bpf_map_lookup_elem(fd, &zero, s->percpu))
		return -errno;
	sampler_follow_cpus(s, now);
	for (int cpu = 0; cpu < s->n_possible_cpus; cpu++)
		tickgrid_update(&s->cpus.grid, cpu, now, s->percpu[cpu].stats[EBPROF_STAT_SAMPLES]);
	missed = tickgrid_missed(&s->cpus.grid);
	delta->ticks_missed = missed - s->grid_missed;
	s->grid_missed = missed;
	delta->cpus_detached = s->cpus.detached - s->cpus_detached;
	delta->cpus_reopened = s->cpus.reopened - s->cpus_reopened;
	s->cpus_detached = s->cpus.detached;
	s->cpus_reopened = s->cpus.reopened;
	for (uint32_t i = 0; i < EBPROF_STAT_NR; i++) {
		uint64_t sum = 0;

		for (int cpu = 0; cpu < s->n_possible_cpus; cpu++)
			sum += s->percpu[cpu].stats[i];
		d[i] = sum - s->kernel_totals[i];
		s->kernel_totals[i] = sum;
	}
	delta->samples = d[EBPROF_STAT_SAMPLES];
	delta->recorded = d[EBPROF_STAT_RECORDED];
	delta->filtered = d[EBPROF_STAT_FILTERED];
	delta->idle = d[EBPROF_STAT_IDLE];
	delta->kstack_errors = d[EBPROF_STAT_KSTACK_ERR];
	delta->ustack_errors = d[EBPROF_STAT_USTACK_ERR];
	delta->stack_collisions = d[EBPROF_STAT_COLLISION];
	delta->stacks_full = d[EBPROF_STAT_STACKS_FULL];
	delta->counts_full = d[EBPROF_STAT_COUNTS_FULL];
	delta->process_events = d[EBPROF_STAT_PROCESS_EVENTS];
	delta->process_events_lost = d[EBPROF_STAT_PROCESS_EVENTS_LOST];
	delta->process_in_exec = d[EBPROF_STAT_PROCESS_IN_EXEC];
	delta->copied = d[EBPROF_STAT_COPIED];
	delta->unw_no_table = d[EBPROF_STAT_UNW_NO_TABLE];
	delta->unw_no_row = d[EBPROF_STAT_UNW_NO_ROW];
	delta->unw_unsupported = d[EBPROF_STAT_UNW_UNSUPPORTED];
	delta->unw_read_fault = d[EBPROF_STAT_UNW_READ_FAULT];
	delta->unw_depth_cap = d[EBPROF_STAT_UNW_DEPTH_CAP];
	delta->unw_fp_frames = d[EBPROF_STAT_UNW_FP_FRAMES];
	delta->offcpu_switches = d[EBPROF_STAT_OFFCPU_SWITCHES];
	delta->offcpu_samples = d[EBPROF_STAT_OFFCPU_SAMPLES];
	delta->offcpu_recorded = d[EBPROF_STAT_OFFCPU_RECORDED];
	delta->offcpu_throttled = d[EBPROF_STAT_OFFCPU_THROTTLED];
	delta->offcpu_short = d[EBPROF_STAT_OFFCPU_SHORT];
	delta->offcpu_untimed = d[EBPROF_STAT_OFFCPU_UNTIMED];
	delta->offcpu_walks = d[EBPROF_STAT_OFFCPU_WALKS];
	delta->offcpu_unseen = d[EBPROF_STAT_OFFCPU_UNSEEN];
	delta->py_frames = d[EBPROF_STAT_PY_FRAMES];
	delta->py_faults = d[EBPROF_STAT_PY_FAULTS];
	delta->samples += delta->offcpu_samples;
	delta->recorded += delta->offcpu_recorded;
	return 0;
}

static void sampler_stats_add(struct sampler_stats *sum, const struct sampler_stats *d)
{
	sum->samples += d->samples;
	sum->recorded += d->recorded;
	sum->filtered += d->filtered;
	sum->idle += d->idle;
	sum->kstack_errors += d->kstack_errors;
	sum->ustack_errors += d->ustack_errors;
	sum->stack_collisions += d->stack_collisions;
	sum->stacks_full += d->stacks_full;
	sum->counts_full += d->counts_full;
	sum->missing_stacks += d->missing_stacks;
	sum->unique_stacks += d->unique_stacks;
	sum->drains += d->drains;
	sum->process_events += d->process_events;
	sum->process_events_lost += d->process_events_lost;
	sum->process_in_exec += d->process_in_exec;
	sum->copied += d->copied;
	sum->copies_recorded += d->copies_recorded;
	sum->unw_no_table += d->unw_no_table;
	sum->unw_no_row += d->unw_no_row;
	sum->unw_unsupported += d->unw_unsupported;
	sum->unw_read_fault += d->unw_read_fault;
	sum->unw_depth_cap += d->unw_depth_cap;
	sum->unw_fp_frames += d->unw_fp_frames;
	sum->offcpu_switches += d->offcpu_switches;
	sum->offcpu_samples += d->offcpu_samples;
	sum->offcpu_recorded += d->offcpu_recorded;
	sum->offcpu_throttled += d->offcpu_throttled;
	sum->offcpu_short += d->offcpu_short;
	sum->offcpu_untimed += d->offcpu_untimed;
	sum->offcpu_walks += d->offcpu_walks;
	sum->offcpu_unseen += d->offcpu_unseen;
	sum->py_frames += d->py_frames;
	sum->py_faults += d->py_faults;
	sum->ticks_missed += d->ticks_missed;
	sum->cpus_detached += d->cpus_detached;
	sum->cpus_reopened += d->cpus_reopened;
	sum->slot_counted += d->slot_counted;
}

/*
 * Reads and deletes the next chunk of a counts map nobody writes any more,
 * into s->keys and s->counts. *batch carries the kernel's position from
 * one call to the next (NULL on the first call). Returns the number of
 * entries, 0 when the map is empty, or -errno.
 */
static int sampler_take_counts(struct sampler *s, int fd, uint32_t **batch, uint32_t *position)
{
	uint32_t count = s->chunk;
	int err;

	err = bpf_map_lookup_and_delete_batch(fd, *batch, position, s->keys, s->counts, &count,
					      NULL);
	*batch = position;
	/* -ENOENT: the end of the map, possibly with a last few entries. */
	if (err && err != -ENOENT)
		return err;
	if (err == -ENOENT && count == 0)
		return 0;
	return (int)count;
}

/*
 * Empties a stacks map nobody writes any more, one key at a time: the
 * fallback when the batch read below fails. A full map may hold a few
 * entries more than max_entries (the kernel checks its size with a per-CPU
 * counter), so this goes on until the map is empty, not to a count.
 */
static int sampler_clear_stacks(struct sampler *s, int fd)
{
	uint32_t n, count;
	int err;

	do {
		n = 0;
		while (n < SAMPLER_STACK_CHUNK &&
		       !bpf_map_get_next_key(fd, n ? &s->chunk_keys[n - 1] : NULL, &s->chunk_keys[n]))
			n++;
		count = n;
		err = n ? bpf_map_delete_batch(fd, s->chunk_keys, &count, NULL) : 0;
	} while (!err && n == SAMPLER_STACK_CHUNK);
	return err;
}

/*
 * Moves every stack chunk of a stacks map nobody writes any more into
 * s->table, SAMPLER_STACK_CHUNK per system call, emptying the map as it
 * reads. A stack the table has no memory for is left out, and its samples
 * are later counted as missing. Returns 0 or -errno; on an error the map
 * is still emptied.
 */
static int sampler_take_stacks(struct sampler *s, int fd)
{
	uint32_t position, *batch = NULL, count;
	int err;

	stacktab_clear(&s->table);
	do {
		count = SAMPLER_STACK_CHUNK;
		err = bpf_map_lookup_and_delete_batch(fd, batch, &position, s->chunk_keys,
						      s->chunk_buf, &count, NULL);
		batch = &position;
		for (uint32_t i = 0; i < count && (!err || err == -ENOENT); i++) {
			const struct sampler_chunk *c = &s->chunk_buf[i];
			uint32_t nr = c->nr > EBPROF_MAX_FRAMES ? EBPROF_MAX_FRAMES : c->nr;

			stacktab_add_chunk(&s->table, s->chunk_keys[i].id, s->chunk_keys[i].index, nr,
					   c->ips, EBPROF_CHUNK_FRAMES);
		}
	} while (!err);
	if (err == -ENOENT)
		return 0; /* the end of the map */
	sampler_clear_stacks(s, fd);
	return err;
}

/*
 * Finds the stack stored under id among the drained stacks: a program
 * stores a key's stacks in the pair it counts the key in (count_sample()).
 * Sets *ips and *nr (no frames for id 0). Returns false if it is not there.
 */
static bool sampler_find_stack(struct sampler *s, uint64_t id, const uint64_t **ips,
			       uint32_t *nr)
{
	static const uint64_t none[1];

	*ips = none;
	*nr = 0;
	return id == 0 || stacktab_find(&s->table, id, ips, nr);
}

/*
 * Points the programs at the next generation, and so the spare pair
 * (active_gen in ebprof.bpf.c), and waits for those still running on the
 * old one: the pair and the CPUs' pending slots of its generation are
 * frozen on return. The wait is the kernel's, which makes every update of
 * a map of maps wait for running programs (maybe_wait_bpf_programs()): the
 * old pair's counts map is put back in its own slot, which changes nothing
 * else. One wait a drain; slots updated in turn waited twice. After a
 * failed wait the next swap stores the same generation again.
 */
static int sampler_swap(struct sampler *s)
{
	uint64_t gen = s->gen + 1;
	int spare = (int)(gen & 1), old = !spare, fd;
	uint32_t slot = (uint32_t)old;

	__atomic_store_n(&s->skel->bss->active_gen, gen, __ATOMIC_SEQ_CST);
	fd = bpf_map__fd(s->counts_maps[old]);
	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.counts), &slot, &fd, BPF_ANY)) {
		/*
		 * No wait: programs may still be counting in the old pair.
		 * Samples keep going to the spare pair, and the old one is left
		 * to be drained at the next swap, so nothing is lost.
		 */
		return -errno;
	}
	s->gen = gen;
	return 0;
}

/*
 * Hands entry i of the current chunk to fn with its stacks. Returns fn's
 * return value, or 0 if the entry was dropped because a stack was missing.
 * again: a key the counts map handed out already (a CPU's pending count).
 */
static int sampler_hand_out(struct sampler *s, uint32_t i, sampler_sample_fn fn, void *ctx,
			    struct sampler_stats *d, bool again)
{
	const struct ebprof_key *key = &s->keys[i];
	struct sampler_sample sample = {
		.tgid = key->tgid,
		.start_time = key->start_time,
		.offcpu = key->state < EBPROF_OFFCPU_STATES ? key->state : EBPROF_OFFCPU_SLEEP,
		.count = s->counts[i],
	};
	bool copied;

	/* An off-CPU wait whose user stack was copied: the frames user space unwound. */
	copied = (key->ustack & EBPROF_COPY_ID) &&
		 sampler_find_offcpu_copy(s, key->ustack, &s->ustack);
	if (copied) {
		sample.uips = s->ustack.ips;
		sample.n_uips = (uint32_t)s->ustack.nr;
	}
	if (!sampler_find_stack(s, key->kstack, &sample.kips, &sample.n_kips) ||
	    (!copied && !sampler_find_stack(s, key->ustack, &sample.uips, &sample.n_uips))) {
		d->missing_stacks += s->counts[i];
		return 0;
	}
	memcpy(sample.comm, key->comm, sizeof(sample.comm));
	sample.comm[sizeof(sample.comm) - 1] = '\0';
	d->unique_stacks += !again;
	d->slot_counted += again ? s->counts[i] : 0;
	return fn ? fn(&sample, ctx) : 0;
}

/* Reads pair's pending slots of every CPU into s->pending: slot i of CPU c at i * CPUs + c. */
static int sampler_read_pending(struct sampler *s, int pair)
{
	int fd = bpf_map__fd(s->skel->maps.pending), err;
	uint32_t keys[EBPROF_PENDING_SLOTS], count = EBPROF_PENDING_SLOTS, out;
	uint32_t first = (uint32_t)pair * EBPROF_PENDING_SLOTS, before = first - 1;

	/* A batch goes on from the key after in_batch's. */
	err = bpf_map_lookup_batch(fd, pair ? &before : NULL, &out, keys, s->pending, &count, NULL);
	if (!err && count == EBPROF_PENDING_SLOTS && keys[0] == first)
		return 0;
	/* Kernels before 5.6 have no batch: a slot at a time. */
	for (uint32_t i = 0; i < EBPROF_PENDING_SLOTS; i++) {
		uint32_t key = first + i;

		if (bpf_map_lookup_elem(fd, &key, &s->pending[(size_t)i * s->n_possible_cpus]))
			return -errno;
	}
	return 0;
}

/* Hands out entries [0, n) of the chunk, which the counts map handed out before. */
static int sampler_hand_out_again(struct sampler *s, uint32_t n, sampler_sample_fn fn, void *ctx,
				  struct sampler_stats *d)
{
	int ret = 0;

	for (uint32_t j = 0; j < n && !ret; j++)
		ret = sampler_hand_out(s, j, fn, ctx, d, true);
	return ret;
}

/*
 * Hands out what the CPUs counted for generation gen in their pending
 * slots (those of pair): more samples of keys its counts map held, so
 * after them, with their stacks from the same pair. Returns 0 or -errno
 * (the slots could not be read), and fn's return value in *ret.
 */
static int sampler_hand_out_pending(struct sampler *s, int pair, uint64_t gen,
				    sampler_sample_fn fn, void *ctx, struct sampler_stats *d,
				    int *ret)
{
	size_t n_slots = (size_t)EBPROF_PENDING_SLOTS * s->n_possible_cpus;
	uint32_t n = 0;
	int err;

	err = sampler_read_pending(s, pair);
	if (err)
		return err;
	for (size_t i = 0; i < n_slots && !*ret; i++) {
		const struct ebprof_pending *p = &s->pending[i];

		if (p->tag != gen + 1 || !p->count)
			continue;
		s->keys[n] = p->key;
		s->counts[n] = p->count;
		if (++n == s->chunk) {
			*ret = sampler_hand_out_again(s, n, fn, ctx, d);
			n = 0;
		}
	}
	if (!*ret)
		*ret = sampler_hand_out_again(s, n, fn, ctx, d);
	return 0;
}

/*
 * Hands out the copies unwound since the last drain, one sample each, and
 * adds how their walks ended to the unwinder's counters. The queue is
 * taken whole under the lock, so the watch thread keeps queueing.
 */
static int sampler_hand_out_late(struct sampler *s, sampler_sample_fn fn, void *ctx,
				 struct sampler_stats *d)
{
	struct late_queue q;
	size_t head = (sizeof(struct late_sample) + 7) / 8, at = 0;
	int ret = 0;

	pthread_mutex_lock(&s->late_lock);
	q = s->late;
	s->late = (struct late_queue){ 0 };
	pthread_mutex_unlock(&s->late_lock);
	d->unw_no_table += q.stops[UNW_NO_TABLE] + q.lost;
	d->unw_no_row += q.stops[UNW_NO_ROW];
	d->unw_unsupported += q.stops[UNW_UNSUPPORTED];
	d->unw_read_fault += q.stops[UNW_READ_FAULT];
	d->unw_depth_cap += q.stops[UNW_DEPTH_CAP];
	d->missing_stacks += q.lost;
	while (at < q.n && !ret) {
		struct late_sample ls;
		struct sampler_sample sample;

		memcpy(&ls, &q.words[at], sizeof(ls));
		sample = (struct sampler_sample){
			.tgid = ls.tgid,
			.start_time = ls.start_time,
			.kips = &q.words[at + head],
			.n_kips = ls.n_kips,
			.uips = &q.words[at + head + ls.n_kips],
			.n_uips = ls.n_uips,
			.count = 1,
		};
		memcpy(sample.comm, ls.comm, sizeof(sample.comm));
		at += head + ls.n_kips + ls.n_uips;
		d->copies_recorded++;
		d->unique_stacks++;
		if (fn)
			ret = fn(&sample, ctx);
	}
	free(q.words);
	return ret;
}

void sampler_set_copy_handler(struct sampler *s, sampler_copy_fn fn, void *ctx)
{
	s->copy_fn = fn;
	s->copy_ctx = ctx;
}

void sampler_set_oracle_handler(struct sampler *s, sampler_oracle_fn fn, void *ctx)
{
	s->oracle_fn = fn;
	s->oracle_ctx = ctx;
}

enum sampler_unwind sampler_unwind_mode(const struct sampler *s)
{
	return s->unwind;
}

bool sampler_offcpu_fp(const struct sampler *s)
{
	return s->offcpu_fp;
}

double sampler_load_cost(const struct sampler *s, uint64_t *verified_insns)
{
	*verified_insns = s->verified_insns;
	return s->load_seconds;
}

bool sampler_offcpu_rq_clock(const struct sampler *s)
{
	return s->rq_clock;
}

struct unwmaps *sampler_unwmaps(struct sampler *s)
{
	return s->unwmaps;
}

bool sampler_python(const struct sampler *s)
{
	return s->python;
}

/* After a change to py_procs: no CPU keeps the layout it looked up before (unw_gen). */
static void sampler_python_changed(struct sampler *s)
{
	__atomic_add_fetch(&s->skel->bss->unw_gen, 1, __ATOMIC_RELEASE);
}

int sampler_python_set(struct sampler *s, uint32_t tgid, const struct ebprof_py_proc *py)
{
	if (!s->python)
		return -EOPNOTSUPP;
	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.py_procs), &tgid, py, BPF_ANY))
		return -errno;
	sampler_python_changed(s);
	return 0;
}

void sampler_python_forget(struct sampler *s, uint32_t tgid)
{
	if (s->python && !bpf_map_delete_elem(bpf_map__fd(s->skel->maps.py_procs), &tgid))
		sampler_python_changed(s);
}

int sampler_drain(struct sampler *s, sampler_sample_fn fn, void *ctx, struct sampler_stats *delta)
{
	struct sampler_stats d = { .drains = 1 };
	uint32_t position, *batch = NULL;
	int old, n, ret = 0, err;
	size_t retiring = s->unwmaps ? unwmaps_retiring(s->unwmaps) : 0;

	err = sampler_swap(s);
	if (err)
		return err;
	/* The swap waited for running programs: none still reads the mappings freed before it. */
	if (s->unwmaps)
		unwmaps_retire(s->unwmaps, retiring);
	old = (int)((s->gen - 1) & 1); /* the pair of the generation just left */

	/* After the swap, so that every increment in the old counts is in these stats. */
	err = sampler_read_stats(s, &d);
	n = sampler_take_stacks(s, bpf_map__fd(s->stacks_maps[old]));
	if (n < 0 && !err)
		err = n;

	/* Read to the end even after fn stops, so the pair is empty for its next turn. */
	while ((n = sampler_take_counts(s, bpf_map__fd(s->counts_maps[old]), &batch,
					&position)) > 0) {
		for (uint32_t i = 0; i < (uint32_t)n && !ret; i++)
			ret = sampler_hand_out(s, i, fn, ctx, &d, false);
	}
	if (n < 0 && !err)
		err = n;
	if (!ret) {
		n = sampler_hand_out_pending(s, old, s->gen - 1, fn, ctx, &d, &ret);
		if (n < 0 && !err)
			err = n;
	}
	if (!ret)
		ret = sampler_hand_out_late(s, fn, ctx, &d);
	sampler_stats_add(&s->totals, &d);
	if (delta)
		*delta = d;
	return ret ? ret : err;
}

int sampler_set_tgids(struct sampler *s, const uint32_t *tgids, size_t n_tgids)
{
	uint32_t key, next, *prev = NULL;
	uint8_t yes = 1;
	int fd;

	if (!s->tgid_filter)
		return -EINVAL;
	/* The map is whole at every step: the array copy defers to it while both change. */
	__atomic_store_n(&s->skel->data_filter->fast_filter.n, EBPROF_FAST_TGIDS + 1,
			 __ATOMIC_RELEASE);
	fd = bpf_map__fd(s->skel->maps.tgids);
	/* Drop the PIDs that left first, so the map has room for newcomers. */
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		bool keep = false;

		for (size_t i = 0; i < n_tgids && !keep; i++)
			keep = tgids[i] == next;
		if (!keep && !bpf_map_delete_elem(fd, &next))
			continue; /* restart the walk after the deleted key's place */
		key = next;
		prev = &key;
	}
	for (size_t i = 0; i < n_tgids; i++) {
		if (bpf_map_update_elem(fd, &tgids[i], &yes, BPF_ANY))
			return -errno;
	}
	sampler_fast_filter(&s->skel->data_filter->fast_filter, tgids, n_tgids);
	/* Every CPU's cached verdict is stale now. */
	__atomic_add_fetch(&s->skel->bss->cache_gen, 1, __ATOMIC_RELAXED);
	return 0;
}

int sampler_poll_processes(struct sampler *s, sampler_process_fn fn, void *ctx, int timeout_ms)
{
	int ret;

	if (!s->processes)
		return -EINVAL;
	s->process_fn = fn;
	s->process_ctx = ctx;
	ret = ringrd_poll(s->processes, timeout_ms, sampler_on_process, s);
	s->process_fn = NULL;
	s->process_ctx = NULL;
	return ret;
}

int sampler_process_fd(const struct sampler *s)
{
	return s->processes ? ringrd_fd(s->processes) : -EINVAL;
}

struct sampler_watch {
	struct sampler *sampler;
	sampler_process_fn fn;
	sampler_idle_fn idle; /* NULL: none */
	void *ctx;
	int stop_fd;  /* an eventfd: readable when the thread should end */
	int flush_fd; /* an eventfd: readable when a flush is asked for */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t flushed; /* CLOCK_MONOTONIC */
	uint64_t flush_asked, flush_done; /* under lock */
};

/* Reads the ring buffer to its end for every flush asked so far, then says so. */
static void sampler_watch_flushed(struct sampler_watch *w)
{
	uint64_t count, asked;

	/* Nonblocking; the flushes it counts are all answered below. */
	if (read(w->flush_fd, &count, sizeof(count)) < 0 && errno != EAGAIN)
		return;
	pthread_mutex_lock(&w->lock);
	asked = w->flush_asked;
	pthread_mutex_unlock(&w->lock);
	sampler_poll_processes(w->sampler, w->fn, w->ctx, 0);
	pthread_mutex_lock(&w->lock);
	w->flush_done = asked;
	pthread_cond_broadcast(&w->flushed);
	pthread_mutex_unlock(&w->lock);
}

/*
 * Waits on the ring buffer's epoll fd (itself pollable), on stop_fd and
 * on flush_fd, and reads what is reported. A callback error is not the
 * thread's to handle: it goes on with the next report.
 */
static void *sampler_watch_run(void *arg)
{
	struct sampler_watch *w = arg;
	struct pollfd fds[3] = {
		{ .fd = sampler_process_fd(w->sampler), .events = POLLIN },
		{ .fd = w->stop_fd, .events = POLLIN },
		{ .fd = w->flush_fd, .events = POLLIN },
	};

	/*
	 * A report is worth something only if it is read before the process
	 * exits, tens of ms on a loaded host: run ahead of the workload. This
	 * costs it little, as a report needs a sample: at most one per tick
	 * per CPU. Without CAP_SYS_NICE the thread keeps its nice value.
	 */
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), SAMPLER_WATCH_NICE);
	for (int timeout_ms = -1;;) {
		if (poll(fds, 3, timeout_ms) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (fds[1].revents)
			break;
		if (fds[2].revents)
			sampler_watch_flushed(w);
		/* A record left for want of memory would wake the poll at once: wait a little. */
		else if (fds[0].revents &&
			 sampler_poll_processes(w->sampler, w->fn, w->ctx, 0) == -ENOMEM)
			usleep(10000);
		timeout_ms = w->idle ? w->idle(w->ctx) : -1;
	}
	return NULL;
}

int sampler_watch_start(struct sampler *s, sampler_process_fn fn, sampler_idle_fn idle, void *ctx,
			struct sampler_watch **out)
{
	struct sampler_watch *w;
	pthread_condattr_t attr;
	int err;

	*out = NULL;
	if (!s->processes)
		return -EINVAL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->sampler = s;
	w->fn = fn;
	w->idle = idle;
	w->ctx = ctx;
	w->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	w->flush_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w->stop_fd < 0 || w->flush_fd < 0) {
		err = -errno;
		goto close_fds;
	}
	/* The flush's wait ends on the monotonic clock, as capture's and the unwinder's do. */
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->flushed, &attr);
	pthread_condattr_destroy(&attr);
	err = -pthread_create(&w->thread, NULL, sampler_watch_run, w);
	if (!err) {
		*out = w;
		return 0;
	}
	pthread_cond_destroy(&w->flushed);
	pthread_mutex_destroy(&w->lock);
close_fds:
	if (w->stop_fd >= 0)
		close(w->stop_fd);
	if (w->flush_fd >= 0)
		close(w->flush_fd);
	free(w);
	return err;
}

int sampler_watch_flush(struct sampler_watch *w, unsigned int timeout_ms)
{
	uint64_t one = 1, ticket, end;
	struct timespec until;
	int err = 0;

	if (!w)
		return 0;
	end = tickgrid_now_ns() + timeout_ms * 1000000ull;
	until = (struct timespec){ .tv_sec = (time_t)(end / 1000000000ull),
				   .tv_nsec = (long)(end % 1000000000ull) };
	pthread_mutex_lock(&w->lock);
	ticket = ++w->flush_asked;
	pthread_mutex_unlock(&w->lock);
	/* An eventfd write of 1 cannot fail short of overflow. */
	if (write(w->flush_fd, &one, sizeof(one)) != sizeof(one))
		abort();
	pthread_mutex_lock(&w->lock);
	while (w->flush_done < ticket && err != ETIMEDOUT)
		err = pthread_cond_timedwait(&w->flushed, &w->lock, &until);
	err = w->flush_done < ticket ? -ETIMEDOUT : 0;
	pthread_mutex_unlock(&w->lock);
	return err;
}

void sampler_watch_stop(struct sampler_watch *w)
{
	uint64_t one = 1;

	if (!w)
		return;
	/* An eventfd write of 1 cannot fail short of overflow. */
	if (write(w->stop_fd, &one, sizeof(one)) != sizeof(one))
		abort();
	pthread_join(w->thread, NULL);
	close(w->stop_fd);
	close(w->flush_fd);
	pthread_cond_destroy(&w->flushed);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

void sampler_totals(const struct sampler *s, struct sampler_stats *total)
{
	*total = s->totals;
}

int sampler_steal_ns(const struct sampler *s, uint64_t *ns)
{
	uint64_t now;
	int ret;

	if (!s->steal_known)
		return -EOPNOTSUPP;
	ret = steal_read_ns(&now);
	if (ret)
		return ret;
	*ns = now > s->steal_at_start ? now - s->steal_at_start : 0;
	return 0;
}

double sampler_sampled_s(const struct sampler *s)
{
	/* sampler_stop() stops the grid, with or without per-CPU events. */
	uint64_t end = s->cpus.grid.stop_ns ? s->cpus.grid.stop_ns : tickgrid_now_ns();

	return s->started_ns && end > s->started_ns ? (end - s->started_ns) / 1e9 : 0.0;
}

size_t sampler_ring_bytes(const struct sampler *s)
{
	return s->ring_bytes;
}

uint64_t sampler_offcpu_period_ns(const struct sampler *s)
{
	return s->offcpu_period_ns;
}

enum sampler_mode sampler_mode(const struct sampler *s)
{
	return s->mode;
}

static const char *const sampler_mode_names[] = { "cpu", "offcpu", "wall" };

const char *sampler_mode_name(enum sampler_mode mode)
{
	return mode <= SAMPLER_MODE_WALL ? sampler_mode_names[mode] : "?";
}

int sampler_parse_mode(const char *name)
{
	for (int i = 0; i <= SAMPLER_MODE_WALL; i++)
		if (!strcmp(name, sampler_mode_names[i]))
			return i;
	return -1;
}

int sampler_cpu_count(const struct sampler *s)
{
	return s->mode == SAMPLER_MODE_OFFCPU || s->n_task_events ? s->n_online : s->cpus.n_open;
}

size_t sampler_task_events(const struct sampler *s, const char **why)
{
	if (why)
		*why = s->task_events_why[0] ? s->task_events_why : NULL;
	return s->n_task_events;
}

bool sampler_ticks_measured(const struct sampler *s)
{
	return !s->n_task_events && tickgrid_active(&s->cpus.grid);
}

void sampler_stop(struct sampler *s)
{
	/*
	 * Closing a CPU-clock event takes it off its CPU, which cancels its
	 * timer and waits for a tick in progress there: no sample is left
	 * half counted when the caller drains. No tick falls due after the
	 * close starts.
	 */
	cpuevents_stop(&s->cpus, tickgrid_now_ns());
	for (int i = 0; i < s->n_links; i++) {
		bpf_link__destroy(s->links[i]);
		s->links[i] = NULL;
	}
	if (s->switch_fd >= 0)
		close(s->switch_fd);
	if (s->wakeup_fd >= 0)
		close(s->wakeup_fd);
	s->switch_fd = -1;
	s->wakeup_fd = -1;
}

void sampler_free(struct sampler *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->n_links; i++)
		bpf_link__destroy(s->links[i]);
	free(s->links);
	free(s->task_tgids);
	bpf_link__destroy(s->exec_link);
	bpf_link__destroy(s->rename_link);
	if (s->switch_fd >= 0)
		close(s->switch_fd);
	if (s->wakeup_fd >= 0)
		close(s->wakeup_fd);
	ringrd_free(s->processes);
	ebprof_bpf__destroy(s->skel);
	free(s->keys);
	free(s->counts);
	free(s->chunk_keys);
	free(s->chunk_buf);
	stacktab_free(&s->table);
	free(s->percpu);
	free(s->pending);
	cpuevents_free(&s->cpus);
	free(s->online);
	free(s->cpu_ticks);
	free(s->copy_ips);
	free(s->late.words);
	for (uint32_t i = 0; s->offcpu_copies && i < SAMPLER_OFFCPU_COPIES; i++)
		free(s->offcpu_copies[i].ips);
	free(s->offcpu_copies);
	unwmaps_free(s->unwmaps);
	pthread_mutex_destroy(&s->late_lock);
	free(s);
}
