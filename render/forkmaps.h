/*
 * forkmaps: the mappings a process's forks begin with, so that a new
 * process that is a fork (not exec'd, of a parent not exec'd either, as
 * the sampler's report says) borrows them rather than having its own
 * /proc/PID/maps read. A shell, a make, a pre-forking server fork many
 * children a second; most are sampled before their exec, and each read is
 * some 100 us of a wake's cold CPU (tests/bench/README.md).
 *
 * Kept by parent (tgid and start time), read from the parent itself: a
 * child may have exec'd by the time it would be read. An entry serves for
 * FORKMAPS_MAX_AGE_NS after its read; a child's mappings that differ (it
 * or its parent mapped more since) are read as any process's are, when
 * one of its samples lands outside them (symbolizer/unwinder.h,
 * symbolizer/proctab.h). FORKMAPS_SLOTS parents at most, two slots to a
 * parent's PID: a later one takes the older.
 *
 * Not thread-safe: the capture's watch thread owns it.
 */
#ifndef EBPROF_RENDER_FORKMAPS_H
#define EBPROF_RENDER_FORKMAPS_H

#include <stddef.h>
#include <stdint.h>

#include "symbolizer/procmaps.h"

#define FORKMAPS_SLOTS 64 /* a power of two */
#define FORKMAPS_MAX_AGE_NS 1000000000ull

struct forkmaps;

/* NULL when out of memory. */
struct forkmaps *forkmaps_new(void);
void forkmaps_free(struct forkmaps *f);

/*
 * The maps kept for the forks of parent (tgid, start_time), read at most
 * FORKMAPS_MAX_AGE_NS before now (ns after boot): a reference of the
 * caller's (procmaps_free() it), and when they were read in *read_at. NULL
 * when there are none that recent.
 */
struct procmaps *forkmaps_get(struct forkmaps *f, uint32_t tgid, uint64_t start_time,
			      uint64_t now, uint64_t *read_at);

/*
 * Keeps maps, the parent's read at read_at, for its later forks: takes a
 * reference of its own (the caller keeps its). Replaces the parent's
 * older entry, or the older of its PID's two slots.
 */
void forkmaps_put(struct forkmaps *f, uint32_t tgid, uint64_t start_time, struct procmaps *maps,
		  uint64_t read_at);

/* The heap memory of the maps kept, in bytes (a list lent elsewhere too is counted whole). */
size_t forkmaps_bytes(const struct forkmaps *f);

#endif
