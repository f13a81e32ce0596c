/*
 * stacks: the tree walk (profile_walk) turned into whole stacks for every
 * stack-at-a-time writer. Nodes whose weight in the slot is zero are
 * skipped with their subtree (a failed merge may leave such nodes, and a
 * second slot often covers only part of the tree).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "render/stacks.h"

struct stacks_walk {
	const struct profile *p;
	unsigned int slot;
	struct frame *frames; /* frames[d - 1]: the node at depth d */
	stacks_fn fn;
	void *ctx;
	int stopped; /* what fn returned to stop the walk (it may be positive) */
};

static int stacks_visit(const struct profile_node *kid, size_t depth, void *ctx)
{
	struct stacks_walk *w = ctx;
	uint64_t self = profile_node_self(kid, w->slot);

	w->frames[depth - 1] = (struct frame){
		.name = profile_node_name(kid),
		.kind = profile_node_kind(kid),
		.mapping = profile_node_mapping(w->p, kid),
		.address = profile_node_address(w->p, kid),
	};
	if (self)
		w->stopped = w->fn(w->frames, depth, self, w->ctx);
	return w->stopped ? -ECANCELED : 0;
}

int stacks_for_each(const struct profile *p, unsigned int slot, stacks_fn fn, void *ctx)
{
	struct stacks_walk w = { p, slot, NULL, fn, ctx, 0 };
	int err = -ENOMEM;

	w.frames = malloc((profile_max_depth(p) + 1) * sizeof(*w.frames));
	if (w.frames)
		err = profile_walk(p, slot, stacks_visit, NULL, &w);
	free(w.frames);
	return w.stopped ? w.stopped : err;
}
