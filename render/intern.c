/*
 * intern: an open-addressing hash table from borrowed (string, tag) keys
 * to dense indices. The writers that use it hold the profile, which owns
 * every name, for the table's whole life, so nothing is copied.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/grow.h"
#include "render/intern.h"

struct intern_key {
	const char *s;
	unsigned int tag;
	uint32_t hash;
	uint64_t a, b;
};

struct intern {
	struct intern_key *keys; /* by index */
	size_t n, cap;
	uint32_t *slots; /* index + 1; 0 is empty */
	size_t nslots;	 /* power of two, at most half full */
};

struct intern *intern_new(void)
{
	return calloc(1, sizeof(struct intern));
}

void intern_free(struct intern *t)
{
	if (!t)
		return;
	free(t->keys);
	free(t->slots);
	free(t);
}

static uint32_t intern_hash(const char *s, unsigned int tag, uint64_t a, uint64_t b)
{
	uint32_t h = 2166136261u ^ tag;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 16777619u;
	}
	for (int i = 0; (a || b) && i < 128; i += 8) {
		h ^= (uint32_t)((i < 64 ? a >> i : b >> (i - 64)) & 0xff);
		h *= 16777619u;
	}
	return h;
}

static int intern_grow(struct intern *t)
{
	size_t n = t->nslots ? t->nslots * 2 : 256;
	uint32_t *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++) {
		size_t j = t->keys[i].hash & (n - 1);

		while (slots[j])
			j = (j + 1) & (n - 1);
		slots[j] = (uint32_t)i + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = n;
	return 0;
}

int intern_add(struct intern *t, const char *s, unsigned int tag, uint32_t *index,
	       int *added)
{
	return intern_add_pair(t, s, tag, 0, 0, index, added);
}

int intern_add_pair(struct intern *t, const char *s, unsigned int tag, uint64_t a, uint64_t b,
		    uint32_t *index, int *added)
{
	uint32_t h = intern_hash(s, tag, a, b);
	size_t j;

	if (added)
		*added = 0;
	if ((t->n + 1) * 2 > t->nslots && intern_grow(t))
		return -ENOMEM;
	for (j = h & (t->nslots - 1); t->slots[j]; j = (j + 1) & (t->nslots - 1)) {
		const struct intern_key *k = &t->keys[t->slots[j] - 1];

		if (k->hash == h && k->tag == tag && k->a == a && k->b == b && !strcmp(k->s, s)) {
			*index = t->slots[j] - 1;
			return 0;
		}
	}
	if (t->n == UINT32_MAX - 1)
		return -ENOMEM;
	if (GROW_ARRAY(&t->keys, &t->cap, t->n + 1, 256))
		return -ENOMEM;
	t->keys[t->n] = (struct intern_key){ s, tag, h, a, b };
	t->slots[j] = (uint32_t)t->n + 1;
	*index = (uint32_t)t->n++;
	if (added)
		*added = 1;
	return 0;
}

size_t intern_count(const struct intern *t)
{
	return t->n;
}

const char *intern_string(const struct intern *t, uint32_t index)
{
	return index < t->n ? t->keys[index].s : NULL;
}

unsigned int intern_tag(const struct intern *t, uint32_t index)
{
	return index < t->n ? t->keys[index].tag : 0;
}

void intern_pair(const struct intern *t, uint32_t index, uint64_t *a, uint64_t *b)
{
	*a = index < t->n ? t->keys[index].a : 0;
	*b = index < t->n ? t->keys[index].b : 0;
}
