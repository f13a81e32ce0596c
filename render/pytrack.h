/*
 * pytrack: which sampled processes run a CPython whose frames the BPF
 * walk can read, kept loaded in the sampler's py_procs map.
 *
 * The capture's worker hands it every process the sampler reports
 * (after the symbolizer's snapshot, on the same thread, which may read a
 * process's files). pytrack asks symbolizer/pyproc, loads what passes
 * with sampler_python_set(), and keeps the process on a list so that it
 * is forgotten once it has exited. A Python that has not started its main
 * thread yet (a process sampled in its first milliseconds) is asked again
 * soon, whatever the drains' interval: the owner asks pytrack_next_ask()
 * when, and calls pytrack_ask() then (50 ms after the first ask, then
 * 100 ms, then every 200 ms, for PYTRACK_SOON_MS at most), and at the
 * next few ends of drains. A Python it cannot walk is reported
 * through warn(), once per distinct reason (a fleet of one unsupported
 * version says it once), and profiled natively.
 *
 * Files are opened through the worker's gate (symbolizer/target.h: a
 * hostile "libpython" is refused, counted in refused_open), and each
 * distinct file is examined once (symbolizer/pyproc's verdict cache).
 *
 * Detection reads a process's files and may block; the sampler's map is
 * touched only between the owner's enter and leave hooks (the capture's
 * lock, and the check that its worker was not abandoned meanwhile), and
 * so are the lists pytrack_adopt() reads: a tracker whose enter said no
 * touches nothing shared again.
 *
 * Not thread-safe: one per worker.
 */
#ifndef EBPROF_RENDER_PYTRACK_H
#define EBPROF_RENDER_PYTRACK_H

#include <stdbool.h>
#include <stdint.h>

#include "symbolizer/target.h"

/* The timed asks of a starting Python: after the first, then doubling up to the most, for so long. */
#define PYTRACK_SOON_FIRST_MS 50
#define PYTRACK_SOON_MAX_MS 200
#define PYTRACK_SOON_MS 5000

struct procmaps;
struct pytrack;
struct sampler;

typedef void (*pytrack_warn_fn)(const char *message, void *ctx);

struct pytrack_config {
	struct sampler *sampler; /* not owned; it must walk Python frames (sampler_python()) */
	const char *proc_root;	 /* NULL: "/proc" */
	struct target *gate;	 /* not owned; NULL: opens uncounted */
	uint64_t max_table;	 /* bytes of one symbol table read; 0: the symbolizer's default */
	pytrack_warn_fn warn;	 /* NULL: not said (counted) */
	void *warn_ctx;
	/*
	 * Around every touch of the sampler and of the lists: enter returns
	 * false when the owner is gone (nothing is touched, leave is not
	 * called, and the tracker does nothing from then on). NULL: none.
	 */
	bool (*enter)(void *ctx);
	void (*leave)(void *ctx);
	void *hook_ctx;
	/* The clock of the timed asks, in ns. NULL: CLOCK_MONOTONIC (tests: a fake one). */
	uint64_t (*now)(void *ctx);
	void *now_ctx;
};

/* Returns NULL when out of memory; free with pytrack_free() (the loaded layouts stay in the map). */
struct pytrack *pytrack_new(const struct pytrack_config *config);

void pytrack_free(struct pytrack *t);

/*
 * A process the sampler reported: Python or not, and loaded if we can walk
 * it. maps: its executable mappings as read just now by the caller
 * (borrowed for the call: the capture's worker passes the symbolizer's
 * read of the same report), or NULL to have them read here.
 */
void pytrack_process(struct pytrack *t, uint32_t tgid, uint64_t start_time,
		     const struct procmaps *maps);

/* The end of a drain: asks again about the Pythons still starting, forgets the exited. */
void pytrack_end_drain(struct pytrack *t);

/* A Python still starting, due to be asked again at `at` (ns, the config's clock). */
struct pytrack_due {
	uint32_t tgid;
	uint64_t start_time;
	uint64_t at;
};

/*
 * The starting Python due to be asked again first, into *due; false when
 * none awaits a timed ask (then only the ends of drains ask). Reads the
 * lists: call it on the tracker's thread, or under the owner's lock.
 */
bool pytrack_next_ask(const struct pytrack *t, struct pytrack_due *due);

/*
 * Asks again about the process pytrack_next_ask() gave (once its time has
 * come; with no hook held, its answer applied inside them): loaded,
 * warned, or given its next time; past PYTRACK_SOON_MS from its first ask,
 * left to the ends of drains. skip: not asked, and forgotten from the
 * starting ones (a process whose files are not to be read again: the
 * ends of drains do not ask it either). One that is no longer pending
 * (answered at an end of a drain meanwhile) is not asked.
 */
void pytrack_ask(struct pytrack *t, const struct pytrack_due *due, bool skip);

/*
 * A sample of process tgid (its user stack as the sampler gives it: ips, n
 * slots) weighing count. One that runs in the evaluation function of a
 * loaded Python, or of one still starting (its main thread not up when
 * asked), yet carries no Python frame (copied to user space before the
 * process's tables or its detection, taken before it was loaded, or a
 * walk that found none) is counted in native_only: the loss is reported,
 * not silent. One binary search for a process that is not a loaded
 * Python, and a look at the starting ones (usually none).
 */
void pytrack_sample(struct pytrack *t, uint32_t tgid, uint64_t start_time, const uint64_t *ips,
		    size_t n, uint64_t count);

/*
 * Takes over from's processes (loaded, still starting) and the reasons it
 * said, for a worker replacing an abandoned one: the new one forgets them
 * when they exit, asks again about the starting ones, and does not say
 * the same reasons again. Call it under the owners' lock, with to's
 * worker not running yet. A loaded process that finds no room is
 * forgotten from the sampler. Returns 0 or -ENOMEM.
 */
int pytrack_adopt(struct pytrack *to, const struct pytrack *from);

/* Forgets every loaded process from the sampler (nobody will watch them exit). */
void pytrack_forget_all(struct pytrack *t);

struct pytrack_stats {
	uint64_t loaded;      /* Python processes whose frames are walked now */
	uint64_t unsupported; /* Pythons profiled natively (warned), ever */
	uint64_t refused;     /* layouts the map (or the list) had no room for, ever */
	uint64_t refused_open[TARGET_CAUSES]; /* files the gate did not open, by cause */
	uint64_t examined;    /* files whose symbol table was read (verdict cache misses) */
	uint64_t reused;      /* files whose verdict came from the cache */
	uint64_t oversized;   /* files read in part or not at all for their declared sizes */
	uint64_t cache_entries, cache_bytes; /* the verdict cache, now */
	uint64_t native_only; /* samples in a loaded Python's interpreter without Python frames */
};

void pytrack_stats(const struct pytrack *t, struct pytrack_stats *stats);

/* Adds from's counters (not what it holds now: loaded, the cache) to to. */
void pytrack_counters_add(struct pytrack_stats *to, const struct pytrack_stats *from);

#endif
