/*
 * unwmaps: the unwind tables in the BPF program's maps, as the table
 * unwinder of ebprof.bpf.c reads them (layouts in bpf/ebprof.h).
 *
 * Three things live there: the rules all tables share (an array that only
 * grows), one table per file (a BPF array map of its own exact size, in a
 * slot of an array of maps), and per process its executable mappings (a
 * range of a big array of mappings, which this module allocates, and the
 * process's entry pointing at it). The sampler makes one when it opens
 * with tables; the caller that builds tables (symbolizer/unwinder) fills
 * it. A table stays mapped read-only in this process (unwmaps_table_word),
 * so that user space unwinds copied stacks from the very words BPF reads:
 * the same pages as the kernel's, counted in our RSS as a shared mapping,
 * not a second copy. Not a kept fd per table: a host maps thousands of
 * files, and collectd's other plugins need their descriptors.
 *
 * Safe to call from several threads (one lock). Ranges of the mapping
 * array a process no longer uses are reused only after the sampler's next
 * drain has waited for running programs (unwmaps_retire), so a sample
 * walking a process's old mappings never reads another's.
 */
#ifndef EBPROF_BPF_UNWMAPS_H
#define EBPROF_BPF_UNWMAPS_H

#include <stddef.h>
#include <stdint.h>

#include <linux/types.h>

#include "bpf/ebprof.h"

struct unwmaps;

/*
 * The maps, by file descriptor (the sampler's), and their sizes. gen, if
 * not NULL, is the program's unw_gen: bumped after every change to procs,
 * so that no CPU keeps walking by an entry it looked up before.
 */
struct unwmaps_maps {
	int procs, mappings, rules, tables;
	uint32_t max_procs, max_mappings, max_rules, max_tables;
	__u64 *gen;
};

/* Returns 0 and sets *out (free it with unwmaps_free()), or -ENOMEM. */
int unwmaps_new(const struct unwmaps_maps *maps, struct unwmaps **out);

/* Unmaps every table and frees; the maps themselves are the sampler's. NULL is fine. */
void unwmaps_free(struct unwmaps *m);

/*
 * Writes rules[synced..n) into the rule array (rules are only ever added).
 * Call it before adding a table whose rows use them. Returns 0, -E2BIG
 * beyond the array's size, or -errno.
 */
int unwmaps_rules_sync(struct unwmaps *m, const struct ebprof_unw_rule *rules, uint32_t n);

/*
 * Loads a table of n words into a free slot (*slot, never 0), and gives it
 * a number no other table of this unwmaps had (*id, never 0; mappings name
 * it, so that the program's rule cache never mixes two tables that shared
 * a slot). Returns 0, -ENOSPC when every slot is taken, or -errno
 * (-ENOMEM, or -EPERM where locked memory runs out).
 */
int unwmaps_table_add(struct unwmaps *m, const uint32_t *words, size_t n, uint32_t *slot,
		      uint32_t *id);

/* The table a walk read last. */
struct unwmaps_pair {
	uint32_t slot; /* 0: none read yet */
	const uint32_t *words;
	size_t n;
};

/*
 * Word i of the table in slot, as BPF reads it, into *word (*pair, zeroed
 * before a walk, keeps the table's mapping at hand). Returns 0, or
 * -ENOENT past its end or for no table.
 */
int unwmaps_table_word(struct unwmaps *m, uint32_t slot, uint32_t i, uint32_t *word,
		       struct unwmaps_pair *pair);

/* Unloads the table in slot. No process's mappings may still name it. */
void unwmaps_table_remove(struct unwmaps *m, uint32_t slot);

/*
 * Sets process tgid's mappings (n of them, sorted by start, not
 * overlapping), replacing what it had. Returns 0, -ENOSPC when the
 * mapping array has no room (the process then has none: its samples are
 * copied or walked by frame pointer), or -errno.
 */
int unwmaps_process_set(struct unwmaps *m, uint32_t tgid, uint64_t start_time,
			const struct ebprof_unw_mapping *mappings, uint32_t n);

/* Forgets process tgid's mappings. */
void unwmaps_process_drop(struct unwmaps *m, uint32_t tgid);

/*
 * The sampler's two calls around each drain's wait for running BPF
 * programs: unwmaps_retiring() before it counts the ranges freed so far,
 * and unwmaps_retire() after it lets the first `counted` of them be
 * reused. A range freed during the wait waits for the next one: a sample
 * that began before its process's entry changed may still walk it.
 */
size_t unwmaps_retiring(struct unwmaps *m);
void unwmaps_retire(struct unwmaps *m, size_t counted);

struct unwmaps_stats {
	uint64_t tables;      /* loaded now */
	uint64_t table_bytes; /* their words */
	uint64_t table_kernel_bytes; /* what the kernel holds for them (whole pages) */
	uint64_t processes;
	uint64_t mappings, max_mappings;
	uint64_t rules, max_rules;
	uint64_t rules_bytes, mappings_bytes; /* the two fixed arrays, allocated at load */
};

void unwmaps_stats(struct unwmaps *m, struct unwmaps_stats *stats);

#endif
