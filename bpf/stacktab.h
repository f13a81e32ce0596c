/*
 * stacktab: the stacks of one drain, held in user space by their 64-bit
 * ids so that the drain can read the kernel's stacks map in a few batch
 * calls and then look each sample's stacks up without a system call.
 *
 * Frames are packed end to end in one growing array, so a table of 2,000
 * stacks of 25 frames takes ~400 KiB, not 2,000 fixed 1 KiB slots. The
 * table is emptied, not freed, between drains; its memory is given back
 * when one drain used far less than the last ones reserved.
 *
 * The kernel stores a stack in chunks of a fixed number of frames, which
 * the drain reads back in any order (stacktab_add_chunk); a stack is found
 * only once all its chunks are in.
 */
#ifndef EBPROF_BPF_STACKTAB_H
#define EBPROF_BPF_STACKTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STACKTAB_MAX_CHUNKS 128 /* 4,096 frames in chunks of 32 */

struct stacktab_slot {
	uint64_t id; /* 0: empty */
	uint64_t at; /* index of the stack's frame count in frames[] */
	uint64_t seen[STACKTAB_MAX_CHUNKS / 64]; /* which chunks are in */
	uint32_t chunks; /* how many */
	uint32_t need;	 /* chunks the whole stack has */
};

struct stacktab {
	struct stacktab_slot *slots;
	size_t n_slots; /* a power of two, or 0 */
	size_t n;	/* stacks held */
	uint64_t *frames;
	size_t n_frames, cap_frames;
};

/* An empty table holds no memory: a zeroed struct stacktab is one. */
void stacktab_clear(struct stacktab *t);
void stacktab_free(struct stacktab *t);

/*
 * Adds the stack of nr frames under id (not 0). A second add of one id
 * keeps the first. Returns 0 or -ENOMEM.
 */
int stacktab_add(struct stacktab *t, uint64_t id, const uint64_t *ips, uint32_t nr);

/*
 * Adds chunk index of the stack id of nr frames in all: frames [index *
 * per_chunk, ...) from ips (at most per_chunk of them). The first chunk of
 * an id fixes its frame count; a chunk that disagrees, comes twice, or is
 * past STACKTAB_MAX_CHUNKS, is ignored. Returns 0 or -ENOMEM.
 */
int stacktab_add_chunk(struct stacktab *t, uint64_t id, uint32_t index, uint32_t nr,
		       const uint64_t *ips, uint32_t per_chunk);

/*
 * Finds the stack under id: sets *ips (into the table, valid until the
 * next add, clear or free) and *nr. Returns false if it is not there, or
 * if some of its chunks are missing.
 */
bool stacktab_find(const struct stacktab *t, uint64_t id, const uint64_t **ips, uint32_t *nr);

#endif
