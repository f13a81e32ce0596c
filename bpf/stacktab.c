/*
 * stacktab: a drain's stacks by id, frames packed in one array (see
 * stacktab.h). Open addressing with linear probing; the ids are already
 * well-mixed hashes, so their low bits pick the slot.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/grow.h"
#include "bpf/stacktab.h"

#define STACKTAB_MIN_SLOTS 256
/* Above this many bytes, a drain that used under a quarter gives memory back. */
#define STACKTAB_KEEP_BYTES (1u << 20)

void stacktab_clear(struct stacktab *t)
{
	size_t frame_bytes = t->cap_frames * sizeof(*t->frames);

	if (frame_bytes > STACKTAB_KEEP_BYTES && t->n_frames < t->cap_frames / 4) {
		stacktab_free(t);
		return;
	}
	if (t->slots)
		memset(t->slots, 0, t->n_slots * sizeof(*t->slots));
	t->n = 0;
	t->n_frames = 0;
}

void stacktab_free(struct stacktab *t)
{
	free(t->slots);
	free(t->frames);
	memset(t, 0, sizeof(*t));
}

static struct stacktab_slot *stacktab_slot(struct stacktab_slot *slots, size_t n_slots,
					   uint64_t id)
{
	size_t mask = n_slots - 1;

	for (size_t i = (size_t)id & mask;; i = (i + 1) & mask)
		if (slots[i].id == id || slots[i].id == 0)
			return &slots[i];
}

/* Keeps the table at most half full. */
static int stacktab_grow_slots(struct stacktab *t)
{
	size_t n_slots = t->n_slots ? t->n_slots * 2 : STACKTAB_MIN_SLOTS;
	struct stacktab_slot *slots;

	if ((t->n + 1) * 2 <= t->n_slots)
		return 0;
	slots = calloc(n_slots, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < t->n_slots; i++)
		if (t->slots[i].id)
			*stacktab_slot(slots, n_slots, t->slots[i].id) = t->slots[i];
	free(t->slots);
	t->slots = slots;
	t->n_slots = n_slots;
	return 0;
}

static int stacktab_reserve_frames(struct stacktab *t, size_t more)
{
	return GROW_ARRAY(&t->frames, &t->cap_frames, t->n_frames + more, 4096);
}

int stacktab_add_chunk(struct stacktab *t, uint64_t id, uint32_t index, uint32_t nr,
		       const uint64_t *ips, uint32_t per_chunk)
{
	struct stacktab_slot *slot;
	uint64_t first = (uint64_t)index * per_chunk;
	uint32_t n;

	if (stacktab_grow_slots(t))
		return -ENOMEM;
	slot = stacktab_slot(t->slots, t->n_slots, id);
	if (!slot->id) {
		if (stacktab_reserve_frames(t, (size_t)nr + 1))
			return -ENOMEM;
		slot->id = id;
		slot->at = t->n_frames;
		memset(slot->seen, 0, sizeof(slot->seen));
		slot->chunks = 0;
		slot->need = per_chunk ? (nr + per_chunk - 1) / per_chunk : 0;
		t->frames[t->n_frames++] = nr;
		t->n_frames += nr;
		t->n++;
	}
	if (t->frames[slot->at] != nr || first >= nr || index >= STACKTAB_MAX_CHUNKS ||
	    (slot->seen[index / 64] >> (index % 64) & 1))
		return 0; /* another stack's chunk under this id, or one seen already */
	n = nr - first < per_chunk ? (uint32_t)(nr - first) : per_chunk;
	memcpy(&t->frames[slot->at + 1 + first], ips, (size_t)n * sizeof(*ips));
	slot->seen[index / 64] |= 1ull << (index % 64);
	slot->chunks++;
	return 0;
}

int stacktab_add(struct stacktab *t, uint64_t id, const uint64_t *ips, uint32_t nr)
{
	struct stacktab_slot *slot;

	if (stacktab_grow_slots(t))
		return -ENOMEM;
	slot = stacktab_slot(t->slots, t->n_slots, id);
	if (slot->id)
		return 0;
	return stacktab_add_chunk(t, id, 0, nr, ips, nr ? nr : 1);
}

bool stacktab_find(const struct stacktab *t, uint64_t id, const uint64_t **ips, uint32_t *nr)
{
	const struct stacktab_slot *slot;

	if (!t->n_slots || id == 0)
		return false;
	slot = stacktab_slot(t->slots, t->n_slots, id);
	if (!slot->id || slot->chunks < slot->need)
		return false;
	*nr = (uint32_t)t->frames[slot->at];
	*ips = &t->frames[slot->at + 1];
	return true;
}
