/*
 * capture: the one path from the sampler to a profile, for the collectd
 * plugin and the `ebprof record` command alike.
 *
 * Naming a sample opens and reads files of the process it came from, and
 * that process may make a read block: a FUSE file its container serves
 * and never answers, /proc files behind a lock it holds, anything nobody
 * foresaw. The thread that must stop on time (record's loop, collectd's
 * read callback and its shutdown) therefore never names anything itself.
 * It drains the sampler's maps (BPF system calls only) and hands the
 * samples to a worker thread, which owns the symbolizer, names them and
 * adds them to the profile; the sampler's watch thread hands over new
 * processes to snapshot the same way (those whose maps it has read in
 * batches, each at most 50 ms late). The stopping thread waits for the
 * worker only while the worker makes progress.
 *
 * The guarantee: capture_drain() and capture_free() return within
 * stall_ms of the worker's last progress (a sample or process done, a
 * file opened, a chunk of one read), plus a grace of stall_ms / 4. When
 * the worker has made none for stall_ms it is sent interrupt_signal
 * (whose handler has no SA_RESTART, so a blocking system call returns
 * EINTR); if that does not free it within the grace, it is abandoned:
 * the samples it held are counted in lost_stalled, the process it was
 * naming is left unnamed from then on (its samples keep their process
 * name and kernel frames, their user part is one "[stalled]" frame), and
 * a new worker with a new symbolizer takes over the rest. An abandoned
 * worker that wakes up later frees what it holds and ends without
 * touching anything shared (its Python tracker loads nothing into the
 * sampler once abandoned; the Python processes it had loaded, and its
 * counters, pass to the worker that replaces it). After CAPTURE_MAX_STALLS abandoned workers
 * nothing is named any more: every sample counts in lost_stalled.
 *
 * When the sampler walks user stacks by unwind tables, the capture also
 * owns the unwinder (symbolizer/unwinder.h): the watch thread has it read
 * a new process's mappings (/proc only) and unwind the samples the
 * program copied before its tables were there, waiting for them a
 * bounded time; the worker builds the tables (reads the files), under
 * the same watchdog as its naming: a build that stalls is abandoned with
 * the worker, counted (unwinder_stats.build_stalled), and that file is
 * walked by frame pointer from then on. capture_drain() ends the
 * unwinder's drain too. Its opens go through the gate
 * (symbolizer/target.h), as the symbolizer's.
 *
 * No global state: a process may run several. The caller owns the
 * sampler and the profiles; a capture owns its threads and symbolizers.
 */
#ifndef EBPROF_RENDER_CAPTURE_H
#define EBPROF_RENDER_CAPTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/sampler.h"
#include "render/profile.h"
#include "render/pytrack.h"
#include "symbolizer/symbolizer.h"
#include "symbolizer/unwinder.h"

#define CAPTURE_DEFAULT_STALL_MS 5000
#define CAPTURE_MAX_STALLS 8
#define CAPTURE_STALLED_NAME "[stalled]"

struct capture_config {
	struct symbolizer_config symbolizer; /* for every symbolizer the capture makes */
	/*
	 * Milliseconds without progress after which the worker is
	 * interrupted, then abandoned. A healthy worker never goes that long:
	 * the longest single step is one bounded section read (at most
	 * 256 MiB). 0: CAPTURE_DEFAULT_STALL_MS.
	 */
	unsigned int stall_ms;
	/*
	 * The signal that interrupts a stalled worker; 0: none. A handler is
	 * installed only if the signal has none; else it is not used.
	 */
	int interrupt_signal;
	/* The unwinder's, used when the sampler walks user stacks by tables. */
	struct unwinder_config unwind;
	/*
	 * What one sample weighs in the profile: an on-CPU sample
	 * (cpu_weight) and an off-CPU one (offcpu_weight), so that a profile
	 * can count time (record --mode offcpu|wall: microseconds) rather
	 * than samples. 0: 1. An off-CPU sample also gets a leaf frame of
	 * kind FRAME_OFFCPU naming the state it waited in.
	 */
	uint64_t cpu_weight;
	uint64_t offcpu_weight;
	/*
	 * Said once per distinct reason, on the worker's thread: a Python
	 * process profiled without its Python frames (render/pytrack). NULL:
	 * not said (counted in capture_stats.python).
	 */
	void (*warn)(const char *message, void *ctx);
	void *warn_ctx;
};

void capture_config_init(struct capture_config *config);

struct capture;

/*
 * Makes the first symbolizer and its worker (the symbolizer reads
 * kallsyms, so do this before opening the sampler: processes are reported
 * from its first sample on). Returns 0 and sets *out, or a negative
 * errno. The caller frees it with capture_free().
 */
int capture_new(const struct capture_config *config, struct capture **out);

/*
 * Starts the sampler's watch thread, which hands new processes to the
 * worker (the sampler must have report_processes), and drains this
 * sampler from now on; makes the unwinder if the sampler has unwind maps.
 * Returns 0 or a negative errno. Call capture_free() before
 * sampler_free().
 */
int capture_attach(struct capture *cap, struct sampler *sampler);

struct capture_prepared {
	uint64_t targets; /* running processes the sampler will sample (sampler_targets()) */
	uint64_t ready;	  /* of those, tracked with every unwind table built, in time */
	bool timed_out;	  /* timeout_ms passed first (or the capture has no worker) */
	unsigned int ms;  /* how long it took */
};

/*
 * Prepares the processes the sampler knows it will sample, before their
 * first sample: for a sampler opened with start_later and a PID or name
 * filter, after capture_attach() and before sampler_start(). Each target
 * goes the way a reported process goes (the worker's snapshot and Python
 * detection through its gate, the unwinder's tables built by the worker
 * under its watchdog), and this waits until all are done, at most
 * timeout_ms (and at most half the stall timeout: a worker stuck meanwhile
 * is the drains' to abandon). Returns 0 with *out filled, or a negative errno
 * (-EOPNOTSUPP: the sampler cannot list its targets; -ENOMEM). Sampling
 * may start either way: a process not ready by then is ready later, and
 * its samples meanwhile are walked as before (copied, native frames).
 */
int capture_prepare(struct capture *cap, unsigned int timeout_ms, struct capture_prepared *out);

/*
 * Drains the sampler: every sample is named by the worker and added to
 * into. Returns when all are, or when the worker stalled (the guarantee
 * above). delta as sampler_drain() fills it. Returns 0 or the sampler's
 * negative errno; samples that could not be added are counted in the
 * stats, never dropped silently.
 */
int capture_drain(struct capture *cap, struct profile *into, struct sampler_stats *delta);

/*
 * As capture_drain(), with the off-CPU samples (struct sampler_sample's
 * offcpu) added to offcpu_into instead (NULL: into, as capture_drain()),
 * so that a caller can keep on-CPU samples and off-CPU time apart.
 */
int capture_drain_split(struct capture *cap, struct profile *into, struct profile *offcpu_into,
			struct sampler_stats *delta);

/*
 * The last drain: stops sampling (sampler_stop()) and the watch thread,
 * reads what it had not read yet (new processes, samples copied before
 * their tables), then drains as capture_drain(), so that no copied sample
 * is left behind and every sample's end is counted.
 */
int capture_finish(struct capture *cap, struct profile *into, struct sampler_stats *delta);
int capture_finish_split(struct capture *cap, struct profile *into, struct profile *offcpu_into,
			 struct sampler_stats *delta);

/* Stops the watch thread and the worker (abandoning a stalled one); NULL is fine. */
void capture_free(struct capture *cap);

struct capture_stats {
	/*
	 * Of every symbolizer so far, as of the last end of a drain: counters
	 * summed over the ones abandoned, the rest (processes, caches held)
	 * the current one's. frames and unresolved include "[stalled]".
	 */
	struct symbolizer_stats symbolizer;
	uint64_t received;	/* samples the sampler handed over: added, or lost below */
	uint64_t lost_stalled;	/* samples lost: held by an abandoned worker, or given up */
	uint64_t lost_memory;	/* samples profile_add() could not store */
	uint64_t unnamed_stalled; /* samples of a process that stalled a worker: "[stalled]" */
	uint64_t stalls;	/* workers abandoned */
	uint64_t interrupts;	/* times a stalled worker was sent the signal */
	uint64_t tracked;	/* new processes snapshot */
	uint64_t gone;		/* new processes gone before their snapshot */
	uint64_t track_dropped; /* new-process reports not queued: the queue was full */
	/*
	 * New processes that were forks (render/forkmaps.h): snapshot from maps
	 * read from their parent for an earlier fork (borrowed), or read from
	 * their parent for them (parent_reads), not from their own.
	 */
	uint64_t borrowed, parent_reads;
	/* The heap memory of the parents' maps kept for their forks, now (a list
	 * a process record shares is counted here and in the symbolizer's). */
	uint64_t forks_bytes;
	bool given_up;		/* CAPTURE_MAX_STALLS reached: nothing is named any more */
	bool unwinding;		/* user stacks by tables: unwind below is filled */
	struct pytrack_stats python; /* Python processes (render/pytrack), as of the last drain */
	struct unwinder_stats unwind;
};

/* Safe while the worker runs; never waits for it. */
void capture_stats(struct capture *cap, struct capture_stats *stats);

#endif
