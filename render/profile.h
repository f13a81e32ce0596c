/*
 * profile: symbolized stacks aggregated into a call tree.
 *
 * Each node is one frame under its parent, with the samples that ended
 * there (self) and that passed through it (total). Names are interned, so
 * a function sampled a million times is stored once. Every node holds two
 * weights: slot 0 is the profile; slot 1 is free for a second profile laid
 * over the same tree (differential graphs). Writers (folded_*, svg_*) and
 * the plugin's metrics read the tree; none of them modify it.
 */
#ifndef EBPROF_RENDER_PROFILE_H
#define EBPROF_RENDER_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "symbolizer/frame.h"

#define PROFILE_WEIGHTS 2

struct profile;
struct profile_node;

/* Returns NULL when out of memory. Free with profile_free(). */
struct profile *profile_new(void);
void profile_free(struct profile *p);

/* Drops every stack; keeps the allocations for reuse. */
void profile_clear(struct profile *p);

/*
 * Adds count samples of one stack (frames root first) to weight slot
 * `slot`. Names, and the mappings frames point at, are copied (interned:
 * one copy per distinct name or mapping). Returns 0, -ENOMEM (then nothing is added), or
 * -EINVAL for an empty stack, a NULL name or a bad slot or kind.
 */
int profile_add(struct profile *p, const struct frame *frames, size_t n, uint64_t count);
int profile_add_weight(struct profile *p, unsigned int slot, const struct frame *frames,
		       size_t n, uint64_t count);

/*
 * Adds every stack of src into dst (slot 0 to slot 0). Returns 0, -EINVAL
 * when dst == src, or -ENOMEM: then dst's weights are unchanged, though it
 * may keep some new zero-weight nodes, which every writer skips.
 */
int profile_merge(struct profile *dst, const struct profile *src);

uint64_t profile_total(const struct profile *p); /* samples in slot 0 */

/* The heap memory p holds, in bytes, as allocated: nodes, child arrays,
 * interned names and mappings, indexes, and what a clear kept for reuse.
 * Walks the nodes: O(nodes), for a caller that bounds a profile. */
size_t profile_bytes(const struct profile *p);
size_t profile_stack_count(const struct profile *p); /* nodes with self > 0 */
size_t profile_max_depth(const struct profile *p);

/* Tree walking. The root is a sentinel with no name; children are sorted
 * by name, then kind, so every walk has one stable order. */
const struct profile_node *profile_root(const struct profile *p);
const char *profile_node_name(const struct profile_node *n);
enum frame_kind profile_node_kind(const struct profile_node *n);
/* Where the code of the frame that made node n is (the first of its
 * function's frames under that path; see struct frame): its mapping,
 * owned by the profile (NULL: none), and its address (0: unknown). A
 * profile read from text has neither. */
const struct frame_mapping *profile_node_mapping(const struct profile *p,
						 const struct profile_node *n);
uint64_t profile_node_address(const struct profile *p, const struct profile_node *n);
uint64_t profile_node_total(const struct profile_node *n, unsigned int slot);
uint64_t profile_node_self(const struct profile_node *n, unsigned int slot);
size_t profile_node_child_count(const struct profile_node *n);
const struct profile_node *profile_node_child(const struct profile_node *n, size_t i);

/*
 * The one walk of the tree, depth first, every child before its next
 * sibling, in the stable order above; an explicit stack, not recursion, as
 * folded files can nest deeper than a C stack likes. visit() sees each
 * node below the root whose total in slot is not zero (zero-weight nodes
 * are skipped with their subtree), at depth 1 for the root's children; it
 * returns 0 to go down into the node's children, PROFILE_WALK_SKIP to pass
 * them over, or a negative errno that stops the walk. leave(), if not
 * NULL, is called when the walk comes back up from a node visit() went
 * into. Returns 0, -ENOMEM, or what visit() returned to stop.
 */
#define PROFILE_WALK_SKIP 1
typedef int (*profile_visit_fn)(const struct profile_node *n, size_t depth, void *ctx);
typedef void (*profile_leave_fn)(const struct profile_node *n, size_t depth, void *ctx);
int profile_walk(const struct profile *p, unsigned int slot, profile_visit_fn visit,
		 profile_leave_fn leave, void *ctx);

/* One function's share: self counts samples where it is the leaf; total
 * counts samples where it appears at least once (recursion counted once). */
struct profile_function {
	const char *name; /* owned by the profile */
	enum frame_kind kind;
	uint64_t self;
	uint64_t total;
	/*
	 * The process (root frame) with the most of this function's total
	 * samples, ties to the first by name; owned by the profile. "" when
	 * the profile has no process roots (a folded file may have none).
	 */
	const char *process;
	uint32_t processes; /* how many processes it was sampled in */
};

/*
 * Fills *out with every function but process roots, sorted by self, then
 * total, descending, then by name. The caller frees *out with free();
 * the names belong to p. Returns 0 or -ENOMEM.
 */
int profile_functions(const struct profile *p, struct profile_function **out, size_t *n);

/*
 * Samples as percent of one CPU: one CPU sampled for `seconds` at
 * `frequency` Hz gives frequency * seconds samples, which is 100; a
 * function that keeps two cores busy reads 200. The plugin's metrics and
 * `ebprof top` both show this figure. 0 when frequency or seconds is not
 * positive.
 */
double profile_cpu_percent(uint64_t samples, double frequency, double seconds);

/*
 * Adds every stack of src to dst (slot 0 to slot 0) without its frames of
 * one kind: with FRAME_KERNEL, the samples a function spent in the kernel
 * become its own self samples, as if kernel stacks were never taken. A
 * stack left with only its process frame is kept. Process frames cannot
 * be dropped. Returns 0, -EINVAL (dst == src, kind FRAME_PROCESS or out
 * of range) or -ENOMEM (dst then holds part of src).
 */
int profile_add_without(struct profile *dst, const struct profile *src, enum frame_kind kind);

#endif
