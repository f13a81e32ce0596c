/*
 * metrics: a profile and the sampler's counters, turned into collectd
 * value lists.
 *
 * This is the only place that decides what the plugin's metrics are
 * called and what they mean. It builds value lists and dispatches
 * nothing, so unit tests can check every name and value exactly;
 * ebprof.c hands the lists to plugin_dispatch_values().
 *
 * Per function, for the top N functions by self samples:
 *   ebprof-self/gauge-NAME    percent of one CPU spent in NAME itself
 *   ebprof-total/gauge-NAME   percent of one CPU spent in NAME or below
 *   ebprof-self/gauge-[other] the rest, so that the self values of the
 *                             top N plus [other] add up to every sample
 * Percent of one CPU = samples / (frequency * seconds) * 100: a function
 * that keeps two cores busy reads 200. That is why the type is "gauge"
 * (unbounded) and not "percent", which types.db caps at 100.1.
 *
 * Off-CPU time (Mode offcpu or wall), for the top N functions by the
 * time waits spent blocked in them:
 *   ebprof-offcpu_self/gauge-NAME   percent of one thread's time blocked
 *                                   in NAME itself (the frame a wait began
 *                                   in: a kernel function, most often)
 *   ebprof-offcpu_total/gauge-NAME  percent of one thread's time blocked
 *                                   in NAME or below
 *   ebprof-offcpu_self/gauge-[other] the rest
 *   ebprof-offcpu_state/gauge-STATE percent of one thread's time waiting
 *                                   runnable, asleep (sleep) or in io
 * Percent of one thread = off-CPU seconds a second * 100: ten threads
 * blocked in one place all the time read 1000.
 *
 * Health, under ebprof-health/: frequency-samples and frequency-events
 * (per second), derive-lost-CAUSE (cumulative counts), derive-truncated-
 * CAUSE (stacks the table unwinder cut short, by cause), derive-copied
 * (samples copied to user space before their tables), count-stacks,
 * count-unwind_tables, bytes-unwind_tables, derive-unwind-built,
 * derive-unwind-reused, derive-unwind-evicted, derive-unwind-expired (the
 * table cache: builds, reuses, drops at the bound, kept ones freed),
 * derive-unwind-build_stalled, derive-unwind-wait_timeout,
 * derive-unwind-wait_stalled (builds given up on a stalled read, copies
 * unwound without the table they waited for), derive-unwind-copy_gone
 * (copies of processes that exited before their maps were read),
 * derive-unwind-copy_rereads and derive-unwind-copy_unmapped (copies
 * with a pc their process's maps lacked: the maps read again, or not,
 * the code gone by the read),
 * percent-unresolved,
 * duration-drain and ps_cputime (the plugin's own CPU time in
 * microseconds); and what profiled processes' files cost us:
 * derive-refused-CAUSE (files the gate did not open, target.h),
 * derive-bound-WHAT (bounds hit on what files declare) and derive-stalls
 * (symbolizer workers abandoned); and memory, in bytes now:
 * bytes-heap_in_use, bytes-heap_free and bytes-heap_mapped (glibc's
 * mallinfo2 of the whole daemon: in use, freed but kept, taken from the
 * system), and each cache's size, bytes-cache_CACHE for symbols (ELF
 * tables), processes (records with maps and perf maps), perfmaps (of
 * those), names (demangled), window (the spool window's tree),
 * interval (the tree of one read's samples) and unwind (our copy of the unwind tables); derive-lost-window
 * counts the samples the spool window dropped at SpoolWindowMemory.
 * Every type is in the stock types.db.
 */
#ifndef EBPROF_PLUGIN_METRICS_H
#define EBPROF_PLUGIN_METRICS_H

#include <malloc.h>
#include <stddef.h>
#include <stdint.h>

#include "collectd/core/daemon/collectd.h"
#include "collectd/core/daemon/plugin.h"

#include "bpf/sampler.h"
#include "render/profile.h"
#include "symbolizer/symbolizer.h"

#define METRICS_PLUGIN "ebprof"
#define METRICS_OTHER "[other]"
/* Bytes of a name kept before "~" and 8 hex digits when it is too long. */
#define METRICS_NAME_MAX (DATA_MAX_NAME_LEN - 1)
#define METRICS_HASH_LEN 9 /* "~" + 8 hex digits */

/*
 * A batch of value lists. lists[i].values points into memory the batch
 * owns; host, time and interval are left empty for plugin_dispatch_values()
 * to fill in.
 */
struct metrics_batch {
	value_list_t *lists;
	size_t n;
	size_t cap;
	value_t *values; /* two slots per list */
};

void metrics_batch_init(struct metrics_batch *b);
/* Forgets the lists, keeps the memory. */
void metrics_batch_reset(struct metrics_batch *b);
void metrics_batch_free(struct metrics_batch *b);

/*
 * The collectd identifier of a function: its name, with the folded-text
 * suffix of its kind ("_[k]" for kernel, "_[j]" JIT, "_[i]" inlined) so
 * that a kernel and a user function of one name stay apart; '/' and
 * control characters become '_'. A result longer than 127 bytes is cut on
 * a UTF-8 boundary and ends in "~" and 8 hex digits of a hash of the
 * whole name, so two long names with one prefix stay apart.
 * out must hold DATA_MAX_NAME_LEN bytes.
 */
void metrics_function_name(const char *name, enum frame_kind kind, char *out);

/*
 * Appends the per-function lists of p: top_n functions by self (ties by
 * total, then name), each as "self" and "total", then "[other]". seconds
 * is the time the profile covers and frequency the sampling rate, the
 * denominator of "percent of one CPU". Identifiers are unique within the
 * batch. Returns 0, -EINVAL (seconds or frequency not positive) or -ENOMEM.
 */
int metrics_functions(struct metrics_batch *b, const struct profile *p, unsigned int top_n,
		      double frequency, double seconds);

struct metrics_health {
	double seconds;		     /* time this window covers */
	struct sampler_stats window; /* this window's sampler counters */
	struct sampler_stats total;  /* since start: the losses are counters */
	uint64_t frames;	     /* frames symbolized in this window */
	uint64_t unresolved;	     /* of those, unresolved */
	uint64_t lost_memory;	     /* since start: samples dropped for lack of memory */
	uint64_t lost_stalled;	     /* since start: samples lost to a stalled symbolizer */
	uint64_t stalls;	     /* since start: symbolizer workers abandoned */
	/* Since start: refused[] by cause, elf_breaches, perf-map bounds. */
	const struct symbolizer_stats *files;
	double drain_seconds;	     /* drain + symbolize + aggregate, this window */
	uint64_t cpu_user_us;	     /* since start: the plugin's own CPU time */
	uint64_t cpu_system_us;
	uint64_t unwind_tables;	     /* unwind tables loaded now (0 with frame pointers) */
	uint64_t unwind_bytes;	     /* the kernel memory they hold now */
	/* Since start: unwind tables built, kept ones reused, evicted at the bound, expired. */
	uint64_t unwind_built, unwind_reused, unwind_evicted, unwind_expired;
	/* Since start: builds whose builder stalled; copies unwound without a table, by why. */
	uint64_t unwind_build_stalled, unwind_wait_timeout, unwind_wait_stalled;
	/* Since start: copies of processes that exited before their maps were read. */
	uint64_t unwind_copy_gone;
	/* Since start: copies with a pc the maps lacked, the maps read again, or not. */
	uint64_t unwind_copy_rereads, unwind_copy_unmapped;
	uint64_t unwind_user_bytes;  /* and our heap memory for them now */
	/* Since start: samples in a walked Python's interpreter without Python frames. */
	uint64_t python_native_only;
	uint64_t window_bytes;	     /* the spool window's tree now */
	uint64_t interval_bytes;     /* the interval's tree now */
	uint64_t forks_bytes;	     /* parents' maps kept for their forks, now */
	uint64_t lost_window_bytes;  /* since start: of lost_memory, over SpoolWindowMemory */
	/* Off-CPU user stacks walked by frame pointer, the table walk refused by the
	 * kernel's verifier (Linux 6.1): 1, else 0. */
	bool offcpu_fp;
	struct mallinfo2 heap;	     /* glibc's heap of the whole daemon, now */
};

/*
 * Appends the off-CPU lists of p, a profile of off-CPU time in
 * microseconds with its state leaves (capture's offcpu_into), over
 * seconds. Returns 0, -EINVAL (seconds not positive) or -ENOMEM.
 */
int metrics_offcpu(struct metrics_batch *b, const struct profile *p, unsigned int top_n,
		   double seconds);

/* Appends the health lists. Returns 0, -EINVAL (seconds <= 0) or -ENOMEM. */
int metrics_health(struct metrics_batch *b, const struct metrics_health *h);

/* The value of the list with this plugin instance and type instance, or
 * NULL. For tests and the e2e checks of the demo. */
const value_list_t *metrics_find(const struct metrics_batch *b, const char *plugin_instance,
				 const char *type_instance);

#endif
