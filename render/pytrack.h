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
 * at the next few ends of drains. A Python it cannot walk is reported
 * through warn(), once per distinct reason (a fleet of one unsupported
 * version says it once), and profiled natively.
 *
 * Not thread-safe: one per worker.
 */
#ifndef EBPROF_RENDER_PYTRACK_H
#define EBPROF_RENDER_PYTRACK_H

#include <stdint.h>

struct pytrack;
struct sampler;

typedef void (*pytrack_warn_fn)(const char *message, void *ctx);

/*
 * A tracker loading into sampler (not owned; it must walk Python frames:
 * sampler_python()), reading processes under proc_root (NULL: "/proc").
 * warn may be NULL. Returns NULL when out of memory; free with
 * pytrack_free() (which leaves the loaded layouts in the map: the
 * sampler's to free).
 */
struct pytrack *pytrack_new(struct sampler *sampler, const char *proc_root, pytrack_warn_fn warn,
			    void *warn_ctx);

void pytrack_free(struct pytrack *t);

/* A process the sampler reported: Python or not, and loaded if we can walk it. */
void pytrack_process(struct pytrack *t, uint32_t tgid, uint64_t start_time);

/* The end of a drain: asks again about the Pythons still starting, forgets the exited. */
void pytrack_end_drain(struct pytrack *t);

struct pytrack_stats {
	uint64_t loaded;      /* Python processes whose frames are walked now */
	uint64_t unsupported; /* Pythons profiled natively (warned), ever */
	uint64_t refused;     /* layouts the map had no room for, ever */
};

void pytrack_stats(const struct pytrack *t, struct pytrack_stats *stats);

#endif
