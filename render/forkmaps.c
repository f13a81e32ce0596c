/* forkmaps: the mappings a process's forks begin with (see forkmaps.h). */
#include "render/forkmaps.h"

#include <stdlib.h>

struct forkmaps_entry {
	uint32_t tgid;
	uint64_t start_time;
	uint64_t read_at;
	struct procmaps *maps; /* NULL: an empty slot */
};

struct forkmaps {
	struct forkmaps_entry slots[FORKMAPS_SLOTS];
};

struct forkmaps *forkmaps_new(void)
{
	return calloc(1, sizeof(struct forkmaps));
}

void forkmaps_free(struct forkmaps *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < FORKMAPS_SLOTS; i++)
		procmaps_free(f->slots[i].maps);
	free(f);
}

/* The first of a PID's two slots; the second is the next one. */
static struct forkmaps_entry *pair_of(struct forkmaps *f, uint32_t tgid)
{
	/* PIDs come in runs: a multiplicative hash spreads them. */
	uint32_t h = (tgid * 2654435761u) >> 16;

	return &f->slots[(h * 2) % FORKMAPS_SLOTS];
}

static struct forkmaps_entry *find(struct forkmaps *f, uint32_t tgid, uint64_t start_time)
{
	struct forkmaps_entry *pair = pair_of(f, tgid);

	for (int i = 0; i < 2; i++)
		if (pair[i].maps && pair[i].tgid == tgid && pair[i].start_time == start_time)
			return &pair[i];
	return NULL;
}

struct procmaps *forkmaps_get(struct forkmaps *f, uint32_t tgid, uint64_t start_time,
			      uint64_t now, uint64_t *read_at)
{
	struct forkmaps_entry *e = find(f, tgid, start_time);

	if (!e || now < e->read_at || now - e->read_at > FORKMAPS_MAX_AGE_NS)
		return NULL;
	*read_at = e->read_at;
	return procmaps_ref(e->maps);
}

void forkmaps_put(struct forkmaps *f, uint32_t tgid, uint64_t start_time, struct procmaps *maps,
		  uint64_t read_at)
{
	struct forkmaps_entry *e = find(f, tgid, start_time);

	if (!e) {
		struct forkmaps_entry *pair = pair_of(f, tgid);

		/* An empty slot, else the one read longer ago. */
		e = !pair[0].maps			? &pair[0]
		    : !pair[1].maps			? &pair[1]
		    : pair[0].read_at <= pair[1].read_at ? &pair[0]
							 : &pair[1];
	}
	procmaps_free(e->maps);
	*e = (struct forkmaps_entry){ tgid, start_time, read_at, procmaps_ref(maps) };
}

size_t forkmaps_bytes(const struct forkmaps *f)
{
	size_t bytes = 0;

	for (size_t i = 0; i < FORKMAPS_SLOTS; i++)
		bytes += procmaps_bytes(f->slots[i].maps);
	return bytes;
}
