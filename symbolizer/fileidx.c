/*
 * fileidx: a hash of file identities (see fileidx.h). Separate chains,
 * one small node per key; the bucket array doubles once the entries
 * outnumber the buckets, so a chain stays about one node long. A failed
 * doubling leaves the chains longer, never wrong.
 */
#include "symbolizer/fileidx.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#define FILEIDX_FIRST_BUCKETS 64

struct fileidx_node {
	struct fileidx_key key;
	void *value;
	struct fileidx_node *next;
};

struct fileidx {
	struct fileidx_node **buckets;
	size_t n_buckets; /* a power of two */
	size_t count;
};

/* The identity's bits spread over the word (the multiply), its high half folded onto the low. */
static uint64_t key_hash(const struct fileidx_key *k)
{
	uint64_t h = k->inode ^ ((uint64_t)k->dev_major << 44) ^ ((uint64_t)k->dev_minor << 24);

	h *= 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 31);
}

static bool key_equal(const struct fileidx_key *a, const struct fileidx_key *b)
{
	return a->inode == b->inode && a->dev_major == b->dev_major &&
	       a->dev_minor == b->dev_minor;
}

static struct fileidx_node **bucket_of(const struct fileidx *x, const struct fileidx_key *k)
{
	return &x->buckets[key_hash(k) & (x->n_buckets - 1)];
}

struct fileidx *fileidx_new(void)
{
	struct fileidx *x = calloc(1, sizeof(*x));

	if (!x)
		return NULL;
	x->buckets = calloc(FILEIDX_FIRST_BUCKETS, sizeof(*x->buckets));
	if (!x->buckets) {
		free(x);
		return NULL;
	}
	x->n_buckets = FILEIDX_FIRST_BUCKETS;
	return x;
}

void fileidx_free(struct fileidx *x)
{
	if (!x)
		return;
	for (size_t b = 0; b < x->n_buckets; b++) {
		while (x->buckets[b]) {
			struct fileidx_node *n = x->buckets[b];

			x->buckets[b] = n->next;
			free(n);
		}
	}
	free(x->buckets);
	free(x);
}

/* Doubles the buckets, moving every node; out of memory: left as it is. */
static void grow(struct fileidx *x)
{
	size_t n = x->n_buckets * 2;
	struct fileidx_node **buckets = calloc(n, sizeof(*buckets));

	if (!buckets)
		return;
	for (size_t b = 0; b < x->n_buckets; b++) {
		while (x->buckets[b]) {
			struct fileidx_node *node = x->buckets[b];
			struct fileidx_node **to = &buckets[key_hash(&node->key) & (n - 1)];

			x->buckets[b] = node->next;
			node->next = *to;
			*to = node;
		}
	}
	free(x->buckets);
	x->buckets = buckets;
	x->n_buckets = n;
}

static struct fileidx_node *node_find(const struct fileidx *x, const struct fileidx_key *key)
{
	for (struct fileidx_node *n = *bucket_of(x, key); n; n = n->next)
		if (key_equal(&n->key, key))
			return n;
	return NULL;
}

int fileidx_add(struct fileidx *x, const struct fileidx_key *key, void *value)
{
	struct fileidx_node *n = node_find(x, key), **head;

	if (n) {
		n->value = value;
		return 0;
	}
	n = malloc(sizeof(*n));
	if (!n)
		return -ENOMEM;
	if (x->count >= x->n_buckets)
		grow(x);
	head = bucket_of(x, key);
	*n = (struct fileidx_node){ .key = *key, .value = value, .next = *head };
	*head = n;
	x->count++;
	return 0;
}

void *fileidx_find(const struct fileidx *x, const struct fileidx_key *key)
{
	const struct fileidx_node *n = node_find(x, key);

	return n ? n->value : NULL;
}

void fileidx_remove(struct fileidx *x, const struct fileidx_key *key, const void *value)
{
	for (struct fileidx_node **p = bucket_of(x, key); *p; p = &(*p)->next) {
		struct fileidx_node *n = *p;

		if (key_equal(&n->key, key)) {
			if (n->value == value) {
				*p = n->next;
				free(n);
				x->count--;
			}
			return;
		}
	}
}

size_t fileidx_count(const struct fileidx *x)
{
	return x->count;
}
