/*
 * stacks: a profile's tree handed back out as whole stacks, one call per
 * stack with samples, root first. The tree is the right shape for an SVG;
 * most other formats (speedscope, pprof, a second profile laid over a
 * first) want one stack at a time, and this is the one walk they share.
 */
#ifndef EBPROF_RENDER_STACKS_H
#define EBPROF_RENDER_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "render/profile.h"

/*
 * Called once per node with self samples in `slot`: frames[0..n) root
 * first, count = the node's self samples. The names and mappings belong
 * to the profile (a mapping pointer is the same for every frame of one
 * mapping) and the array is reused: copy what you keep. A non-zero return
 * stops the walk and is returned by stacks_for_each().
 */
typedef int (*stacks_fn)(const struct frame *frames, size_t n, uint64_t count, void *ctx);

/* Visits the stacks in the profile's stable order. Returns 0, -ENOMEM, or
 * what fn returned. */
int stacks_for_each(const struct profile *p, unsigned int slot, stacks_fn fn, void *ctx);

#endif
