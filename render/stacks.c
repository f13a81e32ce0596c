/*
 * stacks: the depth-first walk every stack-at-a-time writer shares.
 *
 * An explicit stack rather than recursion: folded files can nest deeper
 * than a C stack likes. Nodes whose weight in the slot is zero are skipped
 * with their subtree (a failed merge may leave such nodes, and a second
 * slot often covers only part of the tree).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "render/stacks.h"

struct stacks_walk {
	const struct profile_node *node;
	size_t next;
};

int stacks_for_each(const struct profile *p, unsigned int slot, stacks_fn fn, void *ctx)
{
	size_t cap = profile_max_depth(p) + 1, top = 0;
	struct stacks_walk *stack = malloc(cap * sizeof(*stack));
	struct frame *frames = malloc(cap * sizeof(*frames));
	int err = -ENOMEM;

	if (!stack || !frames)
		goto out_free;
	err = 0;
	stack[0] = (struct stacks_walk){ profile_root(p), 0 };
	while (true) {
		struct stacks_walk *w = &stack[top];
		const struct profile_node *kid;
		uint64_t self;

		if (w->next == profile_node_child_count(w->node)) {
			if (!top)
				break;
			top--;
			continue;
		}
		kid = profile_node_child(w->node, w->next++);
		if (!profile_node_total(kid, slot))
			continue;
		frames[top] = (struct frame){
			.name = profile_node_name(kid),
			.kind = profile_node_kind(kid),
			.mapping = profile_node_mapping(p, kid),
			.address = profile_node_address(p, kid),
		};
		self = profile_node_self(kid, slot);
		if (self) {
			err = fn(frames, top + 1, self, ctx);
			if (err)
				break;
		}
		stack[++top] = (struct stacks_walk){ kid, 0 };
	}
out_free:
	free(stack);
	free(frames);
	return err;
}
