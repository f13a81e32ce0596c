/*
 * profile: the call tree every writer reads.
 *
 * Symbolized stacks arrive here from the symbolizer (or from a folded file)
 * and leave as folded text, an SVG or per-function metrics. The tree is
 * built for many stacks that share prefixes: a stack walks down from the
 * root, and only the part below the deepest existing node allocates.
 *
 * Layout, chosen for half a million stacks a hundred frames deep:
 * - A name is interned together with its kind as one "symbol" (id, kind,
 *   bytes) in an arena of large blocks, found through one open-addressing
 *   hash table. A symbol never moves, so nodes point at it and its name.
 *   The id indexes flat arrays when profile_functions() counts recursion.
 * - Where a frame's code is (its file's mapping and an address, for pprof)
 *   is interned the same way, as a "location" that points at an interned
 *   mapping: a node holds a 32-bit location id, not strings, and the
 *   thousands of nodes of one library share one mapping. A node keeps the
 *   location of the frame that made it; aggregating by function, later
 *   frames of the same function add samples, not addresses.
 * - Nodes live in fixed-size chunks that never move, so a node pointer
 *   handed to a reader stays valid until the profile changes. A node is
 *   56 bytes: symbol, children, self/total for both weight slots, the
 *   child count and the location id. (The children array's capacity is
 *   not stored: it follows from the count, see kids_cap().)
 * - Children are kept sorted by (name, kind) as they are inserted, so a
 *   lookup is a binary search and every walk has one stable order without
 *   sorting behind a const reader's back. Most nodes have one child, which
 *   is stored inline; more children live in an array grown by doubling.
 *   Inserting into a node with k children moves up to k pointers, which is
 *   cheap for the fan-outs real profiles have (thousands, not millions).
 * - The walk down compares names with strcmp and hashes nothing: a name is
 *   only hashed when a new node needs its symbol. It first follows the
 *   previous stack's path, still in cache: sorted folded files read ~35%
 *   faster. (Looking every frame's symbol up first, to compare pointers,
 *   was measured slower: the hash costs more than the strcmp it saves.)
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/grow.h"
#include "render/profile.h"

struct symbol {
	uint32_t id;
	uint8_t kind;
	char name[];
};

struct location {
	const struct frame_mapping *mapping; /* the profile's copy; NULL: none */
	uint64_t address;
};

struct profile_node {
	const struct symbol *sym; /* NULL for the root sentinel */
	union {
		struct profile_node *one;   /* !many: at most one child */
		struct profile_node **many; /* many: an array of kids_cap() */
	} kids;
	uint64_t self[PROFILE_WEIGHTS];
	uint64_t total[PROFILE_WEIGHTS];
	uint32_t nkids : 31;
	uint32_t many : 1;
	uint32_t loc; /* location id + 1; 0: unknown */
};
/* Half a million stacks make millions of nodes: keep a node this size. */
_Static_assert(sizeof(void *) != 8 || sizeof(struct profile_node) == 56,
	       "a profile node grew past 56 bytes");

#define NODES_PER_CHUNK 4096
#define ARENA_BLOCK (256 * 1024)
/* Names longer than this get their own allocation rather than wasting the
 * tail of an arena block. */
#define ARENA_BIG (ARENA_BLOCK / 8)

struct arena_block {
	struct arena_block *next;
	size_t used, size;
	char bytes[];
};

/*
 * An open-addressing index from hashes to dense ids, at most half full.
 * The symbols, mappings and locations each have one; what an id names,
 * and when it is the key sought, is the table's (index_find takes the
 * comparison).
 */
struct index {
	uint32_t *ids; /* id + 1; 0 is empty */
	uint32_t *hashes;
	size_t nslots; /* power of two */
};

/* A table of interned records: pointers by id, and their index. */
struct table {
	void **rows;
	size_t n, cap;
	struct index index;
};

struct profile {
	struct profile_node root;

	struct profile_node **chunks; /* each NODES_PER_CHUNK nodes */
	size_t nchunks, chunks_cap;
	size_t nodes_used; /* root excluded */

	/* Interned records, in the arena: symbols (rows are struct symbol *),
	 * mappings (struct frame_mapping *) and locations (struct location *). */
	struct table syms, maps, locs;

	struct arena_block *blocks; /* ARENA_BLOCK sized, reused after clear */
	struct arena_block *current;
	struct arena_block *big; /* oversized names, freed by clear */

	size_t stacks;	  /* nodes with self[0] > 0 */
	size_t max_depth; /* deepest stack added, in frames */

	/* The nodes of the last stack added, root first. Consecutive stacks
	 * often share a prefix (folded files are sorted; a drain lists one
	 * thread's stacks together), and these nodes are still in cache. */
	struct profile_node **last;
	size_t last_len, last_cap;
};

/* --- symbols -------------------------------------------------------------- */

/* FNV-1a over the name, then the kind. Only new nodes hash, so this need
 * not be fast; it must only spread well. */
static uint32_t symbol_hash(const char *name, size_t len, enum frame_kind kind)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)name[i];
		h *= 16777619u;
	}
	h ^= (uint32_t)kind;
	h *= 16777619u;
	return h;
}

static void *arena_alloc(struct profile *p, size_t size)
{
	struct arena_block *b;

	size = (size + 7) & ~(size_t)7;
	if (size > ARENA_BIG) {
		b = malloc(sizeof(*b) + size);
		if (!b)
			return NULL;
		b->size = b->used = size;
		b->next = p->big;
		p->big = b;
		return b->bytes;
	}
	b = p->current;
	while (b && b->size - b->used < size)
		b = b->next; /* after a clear, older blocks wait here for reuse */
	if (!b) {
		b = malloc(sizeof(*b) + ARENA_BLOCK);
		if (!b)
			return NULL;
		b->size = ARENA_BLOCK;
		b->used = 0;
		b->next = NULL;
		/* Append after current so the reuse order stays the list order. */
		if (p->current) {
			b->next = p->current->next;
			p->current->next = b;
		} else {
			b->next = p->blocks;
			p->blocks = b;
		}
	}
	p->current = b;
	b->used += size;
	return b->bytes + b->used - size;
}

/* --- interned tables --------------------------------------------------------- */

typedef bool (*index_match)(const void *row, const void *key);

/* The id of the row matching key (hash h): true, or false with *slot
 * where it would go. */
static bool index_find(const struct table *t, uint32_t h, index_match match, const void *key,
		       uint32_t *id, size_t *slot)
{
	const struct index *x = &t->index;
	size_t i;

	for (i = h & (x->nslots - 1); x->ids[i]; i = (i + 1) & (x->nslots - 1)) {
		if (x->hashes[i] == h && match(t->rows[x->ids[i] - 1], key)) {
			*id = x->ids[i] - 1;
			return true;
		}
	}
	*slot = i;
	return false;
}

/* Doubles the index and reinserts every id. */
static int index_grow(struct index *x)
{
	size_t n = x->nslots ? x->nslots * 2 : 1024;
	uint32_t *ids = calloc(n, sizeof(*ids));
	uint32_t *hashes = malloc(n * sizeof(*hashes));

	if (!ids || !hashes) {
		free(ids);
		free(hashes);
		return -ENOMEM;
	}
	for (size_t i = 0; i < x->nslots; i++) {
		size_t j;

		if (!x->ids[i])
			continue;
		for (j = x->hashes[i] & (n - 1); ids[j]; j = (j + 1) & (n - 1))
			;
		ids[j] = x->ids[i];
		hashes[j] = x->hashes[i];
	}
	free(x->ids);
	free(x->hashes);
	x->ids = ids;
	x->hashes = hashes;
	x->nslots = n;
	return 0;
}

/*
 * The row matching key (and its *id), or NULL: then one more row fits
 * (rows and index have grown, keeping the load at or under one half), and
 * *slot is where table_add() puts it. Returns 0 or -ENOMEM.
 */
static int table_find(struct table *t, uint32_t h, index_match match, const void *key,
		      void **row, uint32_t *id, size_t *slot)
{
	*row = NULL;
	if (t->index.nslots && index_find(t, h, match, key, id, slot)) {
		*row = t->rows[*id];
		return 0;
	}
	if (t->n >= UINT32_MAX - 1)
		return -ENOMEM;
	if ((t->n + 1) * 2 > t->index.nslots) {
		if (index_grow(&t->index))
			return -ENOMEM;
		index_find(t, h, match, key, id, slot);
	}
	return GROW_ARRAY(&t->rows, &t->cap, t->n + 1, 1024);
}

/* Adds row as the next id at slot (from a table_find() that found none). */
static uint32_t table_add(struct table *t, size_t slot, uint32_t h, void *row)
{
	uint32_t id = (uint32_t)t->n++;

	t->rows[id] = row;
	t->index.ids[slot] = id + 1;
	t->index.hashes[slot] = h;
	return id;
}

static void table_clear(struct table *t)
{
	t->n = 0;
	if (t->index.ids)
		memset(t->index.ids, 0, t->index.nslots * sizeof(*t->index.ids));
}

static void table_free(struct table *t)
{
	free(t->rows);
	free(t->index.ids);
	free(t->index.hashes);
}

/* --- symbols ------------------------------------------------------------------ */

struct symbol_key {
	const char *name;
	enum frame_kind kind;
};

static bool symbol_match(const void *row, const void *key)
{
	const struct symbol *sym = row;
	const struct symbol_key *k = key;

	return sym->kind == k->kind && !strcmp(sym->name, k->name);
}

/* Returns the one symbol for (name, kind), creating it; NULL: no memory.
 * Finding an existing symbol never allocates. */
static const struct symbol *symbol_intern(struct profile *p, const char *name,
					  enum frame_kind kind)
{
	struct symbol_key key = { name, kind };
	size_t len = strlen(name), slot = 0;
	uint32_t h = symbol_hash(name, len, kind), id = 0;
	struct symbol *sym;
	void *row;

	if (table_find(&p->syms, h, symbol_match, &key, &row, &id, &slot))
		return NULL;
	if (row)
		return row;
	sym = arena_alloc(p, sizeof(*sym) + len + 1);
	if (!sym)
		return NULL;
	sym->id = (uint32_t)p->syms.n;
	sym->kind = (uint8_t)kind;
	memcpy(sym->name, name, len + 1);
	table_add(&p->syms, slot, h, sym);
	return sym;
}

static const struct symbol *symbol_at(const struct profile *p, size_t id)
{
	return p->syms.rows[id];
}

/* --- mappings and locations ------------------------------------------------- */

/* A 64-bit value folded into an FNV-style 32-bit hash. */
static uint32_t hash_u64(uint32_t h, uint64_t v)
{
	for (int i = 0; i < 8; i++) {
		h ^= (uint32_t)(v >> (8 * i)) & 0xff;
		h *= 16777619u;
	}
	return h;
}

static bool mapping_match(const void *row, const void *key)
{
	const struct frame_mapping *a = row, *b = key;

	return a->start == b->start && a->limit == b->limit && a->offset == b->offset &&
	       a->build_id_len == b->build_id_len && !strcmp(a->file, b->file) &&
	       (!a->build_id_len || !memcmp(a->build_id, b->build_id, a->build_id_len));
}

/* The profile's copy of m (file and build-id in the arena); NULL: no memory.
 * The hash leaves the strings out: mappings that share a range in
 * different processes are the same file more often than not. */
static const struct frame_mapping *mapping_intern(struct profile *p,
						  const struct frame_mapping *m)
{
	uint32_t h = hash_u64(hash_u64(hash_u64(2166136261u, m->start), m->limit), m->offset);
	const char *file = m->file ? m->file : "";
	struct frame_mapping key = *m, *copy;
	size_t len = strlen(file), slot = 0;
	uint32_t id = 0;
	void *row;

	key.file = file;
	if (!m->build_id)
		key.build_id_len = 0;
	if (table_find(&p->maps, h, mapping_match, &key, &row, &id, &slot))
		return NULL;
	if (row)
		return row;
	copy = arena_alloc(p, sizeof(*copy) + len + 1 + key.build_id_len);
	if (!copy)
		return NULL;
	*copy = key;
	copy->file = memcpy((char *)(copy + 1), file, len + 1);
	copy->build_id = key.build_id_len ? memcpy((char *)(copy + 1) + len + 1, key.build_id,
						   key.build_id_len)
					  : NULL;
	table_add(&p->maps, slot, h, copy);
	return copy;
}

static bool location_match(const void *row, const void *key)
{
	const struct location *a = row, *b = key;

	return a->mapping == b->mapping && a->address == b->address;
}

/*
 * The location of frame f in the profile, interned with its mapping, as
 * its id + 1 in *loc: 0 when f says nothing of where it is. Returns 0 or
 * -ENOMEM. Finding what is already interned never allocates.
 */
static int location_intern(struct profile *p, const struct frame *f, uint32_t *loc)
{
	struct location key = { NULL, f->address }, *copy;
	size_t slot = 0;
	void *row;
	uint32_t h, id = 0;

	*loc = 0;
	if (!f->mapping && !f->address)
		return 0;
	if (f->mapping) {
		key.mapping = mapping_intern(p, f->mapping);
		if (!key.mapping)
			return -ENOMEM;
	}
	h = hash_u64(hash_u64(2166136261u, (uint64_t)(uintptr_t)key.mapping), key.address);
	if (table_find(&p->locs, h, location_match, &key, &row, &id, &slot))
		return -ENOMEM;
	if (!row) {
		copy = arena_alloc(p, sizeof(*copy));
		if (!copy)
			return -ENOMEM;
		*copy = key;
		id = table_add(&p->locs, slot, h, copy);
	}
	*loc = id + 1;
	return 0;
}

/* A node's location, or NULL. */
static const struct location *location_of(const struct profile *p,
					   const struct profile_node *n)
{
	return n->loc ? p->locs.rows[n->loc - 1] : NULL;
}

/* --- nodes ------------------------------------------------------------------ */

static struct profile_node *kid_at(const struct profile_node *n, size_t i)
{
	return n->many ? n->kids.many[i] : n->kids.one;
}

static int kid_cmp(const char *name, enum frame_kind kind, const struct profile_node *kid)
{
	int c = strcmp(name, kid->sym->name);

	if (c)
		return c;
	return (int)kind - (int)kid->sym->kind;
}

/* Binary search: returns true and *pos of the match, or false and *pos
 * where (name, kind) would be inserted. */
static bool kid_find(const struct profile_node *n, const char *name, enum frame_kind kind,
		     size_t *pos)
{
	size_t lo = 0, hi = n->nkids;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = kid_cmp(name, kind, kid_at(n, mid));

		if (!c) {
			*pos = mid;
			return true;
		}
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	*pos = lo;
	return false;
}

/*
 * The capacity of n's children array: 1 (the inline slot) until a second
 * child comes, then 4, doubled each time it fills. Children are never
 * removed one by one, so the count alone tells it, and a node need not
 * store it.
 */
static uint32_t kids_cap(const struct profile_node *n)
{
	if (!n->many)
		return 1;
	if (n->nkids <= 4)
		return 4;
	/* the next power of two; nkids has 31 bits, so this is at most 2^31 */
	return 1u << (32 - __builtin_clz((uint32_t)n->nkids - 1));
}

/* Makes room for one more child of n, so that kids_insert() cannot fail. */
static int kids_reserve(struct profile_node *n)
{
	struct profile_node **many;
	uint32_t cap = kids_cap(n);

	if (n->nkids < cap)
		return 0;
	if (cap >= 1u << 29)
		return -ENOMEM; /* the count has 31 bits */
	if (!n->many) {
		many = malloc(4 * sizeof(*many));
		if (!many)
			return -ENOMEM;
		many[0] = n->kids.one;
		n->many = 1;
	} else {
		many = realloc(n->kids.many, 2 * (size_t)cap * sizeof(*many));
		if (!many)
			return -ENOMEM;
	}
	n->kids.many = many;
	return 0;
}

/* Inserts kid at pos; kids_reserve(n) must have succeeded. */
static void kids_insert(struct profile_node *n, size_t pos, struct profile_node *kid)
{
	if (!n->many) {
		n->kids.one = kid;
		n->nkids = 1;
		return;
	}
	memmove(&n->kids.many[pos + 1], &n->kids.many[pos],
		(n->nkids - pos) * sizeof(*n->kids.many));
	n->kids.many[pos] = kid;
	n->nkids++;
}

/* Ensures `count` more nodes can be taken without allocating. */
static int nodes_reserve(struct profile *p, size_t count)
{
	size_t need = (p->nodes_used + count + NODES_PER_CHUNK - 1) / NODES_PER_CHUNK;

	while (p->nchunks < need) {
		struct profile_node *chunk;

		if (GROW_ARRAY(&p->chunks, &p->chunks_cap, p->nchunks + 1, 16))
			return -ENOMEM;
		chunk = malloc(NODES_PER_CHUNK * sizeof(*chunk));
		if (!chunk)
			return -ENOMEM;
		p->chunks[p->nchunks++] = chunk;
	}
	return 0;
}

static struct profile_node *node_take(struct profile *p, const struct symbol *sym,
				      uint32_t loc)
{
	size_t i = p->nodes_used++;
	struct profile_node *n = &p->chunks[i / NODES_PER_CHUNK][i % NODES_PER_CHUNK];

	memset(n, 0, sizeof(*n));
	n->sym = sym;
	n->loc = loc;
	return n;
}

static void node_add_weight(struct profile *p, struct profile_node *n, unsigned int slot,
			    uint64_t count, bool leaf)
{
	n->total[slot] += count;
	if (!leaf)
		return;
	if (slot == 0 && n->self[0] == 0)
		p->stacks++;
	n->self[slot] += count;
}

/* --- public ----------------------------------------------------------------- */

struct profile *profile_new(void)
{
	return calloc(1, sizeof(struct profile));
}

static void kids_free_all(struct profile *p)
{
	for (size_t i = 0; i < p->nodes_used; i++) {
		struct profile_node *n = &p->chunks[i / NODES_PER_CHUNK][i % NODES_PER_CHUNK];

		if (n->many)
			free(n->kids.many);
	}
	if (p->root.many)
		free(p->root.kids.many);
}

static void big_free_all(struct profile *p)
{
	while (p->big) {
		struct arena_block *next = p->big->next;

		free(p->big);
		p->big = next;
	}
}

void profile_free(struct profile *p)
{
	if (!p)
		return;
	kids_free_all(p);
	for (size_t i = 0; i < p->nchunks; i++)
		free(p->chunks[i]);
	free(p->chunks);
	free(p->last);
	table_free(&p->syms);
	table_free(&p->maps);
	table_free(&p->locs);
	while (p->blocks) {
		struct arena_block *next = p->blocks->next;

		free(p->blocks);
		p->blocks = next;
	}
	big_free_all(p);
	free(p);
}

void profile_clear(struct profile *p)
{
	kids_free_all(p);
	memset(&p->root, 0, sizeof(p->root));
	p->nodes_used = 0;
	table_clear(&p->syms);
	table_clear(&p->maps);
	table_clear(&p->locs);
	for (struct arena_block *b = p->blocks; b; b = b->next)
		b->used = 0;
	p->current = p->blocks;
	big_free_all(p);
	p->stacks = 0;
	p->max_depth = 0;
	p->last_len = 0;
}

static bool node_is(const struct profile_node *n, const struct frame *f)
{
	return n->sym->kind == f->kind && !strcmp(n->sym->name, f->name);
}

int profile_add_weight(struct profile *p, unsigned int slot, const struct frame *frames,
		       size_t n, uint64_t count)
{
	struct profile_node *node = &p->root, *kid;
	size_t depth, pos = 0, i;
	uint32_t loc;
	int err;

	if (slot >= PROFILE_WEIGHTS || !n)
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (!frames[i].name || (unsigned int)frames[i].kind >= FRAME_KIND_NR)
			return -EINVAL;
	if (!count)
		return 0;
	if (GROW_ARRAY(&p->last, &p->last_cap, n, 64))
		return -ENOMEM;

	/* Walk down as far as the tree already goes: first along the last
	 * stack's path, then by searching children. */
	for (depth = 0; depth < n && depth < p->last_len; depth++) {
		if (!node_is(p->last[depth], &frames[depth]))
			break;
		node = p->last[depth];
	}
	for (; depth < n; depth++) {
		if (!kid_find(node, frames[depth].name, frames[depth].kind, &pos))
			break;
		node = kid_at(node, pos);
		p->last[depth] = node;
	}
	p->last_len = depth;

	/* Allocate everything a new branch needs before linking any of it,
	 * so that -ENOMEM leaves the tree as it was. Symbols and locations
	 * interned before a failure are unreferenced and harmless. */
	if (depth < n) {
		for (i = depth; i < n; i++)
			if (!symbol_intern(p, frames[i].name, frames[i].kind) ||
			    location_intern(p, &frames[i], &loc))
				return -ENOMEM;
		err = nodes_reserve(p, n - depth);
		if (err)
			return err;
		err = kids_reserve(node);
		if (err)
			return err;
		/* Nothing can fail from here on: the interning only finds now. */
		for (i = depth; i < n; i++) {
			location_intern(p, &frames[i], &loc);
			kid = node_take(p, symbol_intern(p, frames[i].name, frames[i].kind), loc);
			kids_insert(node, i == depth ? pos : 0, kid);
			node = kid;
			p->last[i] = node;
		}
	}
	p->last_len = n;

	node_add_weight(p, &p->root, slot, count, false);
	for (i = 0; i < n; i++)
		node_add_weight(p, p->last[i], slot, count, i + 1 == n);
	if (n > p->max_depth)
		p->max_depth = n;
	return 0;
}

int profile_add(struct profile *p, const struct frame *frames, size_t n, uint64_t count)
{
	return profile_add_weight(p, 0, frames, n, count);
}

/*
 * The one walk of the tree (see profile.h): nodes are visited in a stable
 * order, and walk[d] is the node at depth d whose children are being
 * visited.
 */
int profile_walk(const struct profile *p, unsigned int slot, profile_visit_fn visit,
		 profile_leave_fn leave, void *ctx)
{
	struct walk_frame {
		const struct profile_node *node;
		size_t next; /* next child to visit */
	} *walk;
	size_t top = 0;
	int err = 0;

	if (slot >= PROFILE_WEIGHTS)
		return -EINVAL;
	walk = malloc((p->max_depth + 1) * sizeof(*walk));
	if (!walk)
		return -ENOMEM;
	walk[0] = (struct walk_frame){ &p->root, 0 };
	while (true) {
		struct walk_frame *f = &walk[top];
		const struct profile_node *kid;

		if (f->next == f->node->nkids) {
			if (!top)
				break;
			if (leave)
				leave(f->node, top, ctx);
			top--;
			continue;
		}
		kid = kid_at(f->node, f->next++);
		if (!kid->total[slot])
			continue;
		err = visit(kid, top + 1, ctx);
		if (err < 0)
			break;
		if (err == 0)
			walk[++top] = (struct walk_frame){ kid, 0 };
		err = 0;
	}
	free(walk);
	return err;
}

/*
 * Merging walks src twice. Pass one creates every missing node with zero
 * weight and records which dst node mirrors each src node; pass two adds
 * the weights from that record, visiting src in the same order. A failure
 * in pass one leaves dst's weights unchanged; it may keep some zero-weight
 * nodes, which every writer skips.
 */
struct merge {
	struct profile *dst;
	const struct profile *src;
	struct profile_node **path;   /* path[d]: the dst node at depth d */
	struct profile_node **mirror; /* the dst node of each src node, in walk order */
	size_t n_mirror, visited;
};

static int merge_structure(const struct profile_node *skid, size_t depth, void *ctx)
{
	struct merge *m = ctx;
	struct profile_node *parent = m->path[depth - 1], *dkid;
	size_t pos;

	if (kid_find(parent, skid->sym->name, skid->sym->kind, &pos)) {
		dkid = kid_at(parent, pos);
	} else {
		const struct symbol *sym = symbol_intern(m->dst, skid->sym->name, skid->sym->kind);
		const struct location *sloc = location_of(m->src, skid);
		uint32_t loc = 0;

		if (!sym || (sloc && location_intern(m->dst, &(struct frame){
				.mapping = sloc->mapping,
				.address = sloc->address }, &loc)) ||
		    nodes_reserve(m->dst, 1) || kids_reserve(parent))
			return -ENOMEM;
		dkid = node_take(m->dst, sym, loc);
		kids_insert(parent, pos, dkid);
	}
	m->mirror[m->n_mirror++] = dkid;
	m->path[depth] = dkid;
	return 0;
}

static int merge_weights(const struct profile_node *skid, size_t depth, void *ctx)
{
	struct merge *m = ctx;
	struct profile_node *dkid = m->mirror[m->visited++];

	(void)depth;
	dkid->total[0] += skid->total[0];
	if (skid->self[0] && !dkid->self[0])
		m->dst->stacks++;
	dkid->self[0] += skid->self[0];
	return 0;
}

int profile_merge(struct profile *dst, const struct profile *src)
{
	struct merge m = { .dst = dst, .src = src };
	int err = -ENOMEM;

	if (dst == src)
		return -EINVAL;
	if (!src->root.total[0])
		return 0;
	m.path = malloc((src->max_depth + 1) * sizeof(*m.path));
	m.mirror = malloc((src->nodes_used + 1) * sizeof(*m.mirror));
	if (!m.path || !m.mirror)
		goto out_free;
	m.path[0] = &dst->root;
	err = profile_walk(src, 0, merge_structure, NULL, &m);
	if (err)
		goto out_free;
	/* The walk allocates before it visits: on -ENOMEM nothing is added. */
	err = profile_walk(src, 0, merge_weights, NULL, &m);
	if (err)
		goto out_free;
	node_add_weight(dst, &dst->root, 0, src->root.total[0], false);
	if (src->max_depth > dst->max_depth)
		dst->max_depth = src->max_depth;
out_free:
	free(m.path);
	free(m.mirror);
	return err;
}

static size_t table_bytes(const struct table *t)
{
	return t->cap * sizeof(*t->rows) +
	       t->index.nslots * (sizeof(*t->index.ids) + sizeof(*t->index.hashes));
}

size_t profile_bytes(const struct profile *p)
{
	size_t bytes = sizeof(*p) + p->chunks_cap * sizeof(*p->chunks) +
		       p->nchunks * NODES_PER_CHUNK * sizeof(struct profile_node) +
		       p->last_cap * sizeof(*p->last) + table_bytes(&p->syms) +
		       table_bytes(&p->maps) + table_bytes(&p->locs);

	for (size_t i = 0; i < p->nodes_used; i++) {
		const struct profile_node *n = &p->chunks[i / NODES_PER_CHUNK][i % NODES_PER_CHUNK];

		if (n->many)
			bytes += kids_cap(n) * sizeof(*n->kids.many);
	}
	if (p->root.many)
		bytes += kids_cap(&p->root) * sizeof(*p->root.kids.many);
	for (const struct arena_block *b = p->blocks; b; b = b->next)
		bytes += sizeof(*b) + b->size;
	for (const struct arena_block *b = p->big; b; b = b->next)
		bytes += sizeof(*b) + b->size;
	return bytes;
}

uint64_t profile_total(const struct profile *p)
{
	return p->root.total[0];
}

size_t profile_stack_count(const struct profile *p)
{
	return p->stacks;
}

size_t profile_max_depth(const struct profile *p)
{
	return p->max_depth;
}

const struct profile_node *profile_root(const struct profile *p)
{
	return &p->root;
}

const char *profile_node_name(const struct profile_node *n)
{
	return n->sym ? n->sym->name : "";
}

enum frame_kind profile_node_kind(const struct profile_node *n)
{
	return n->sym ? (enum frame_kind)n->sym->kind : FRAME_UNKNOWN;
}

const struct frame_mapping *profile_node_mapping(const struct profile *p,
						 const struct profile_node *n)
{
	const struct location *loc = location_of(p, n);

	return loc ? loc->mapping : NULL;
}

uint64_t profile_node_address(const struct profile *p, const struct profile_node *n)
{
	const struct location *loc = location_of(p, n);

	return loc ? loc->address : 0;
}

uint64_t profile_node_total(const struct profile_node *n, unsigned int slot)
{
	return slot < PROFILE_WEIGHTS ? n->total[slot] : 0;
}

uint64_t profile_node_self(const struct profile_node *n, unsigned int slot)
{
	return slot < PROFILE_WEIGHTS ? n->self[slot] : 0;
}

size_t profile_node_child_count(const struct profile_node *n)
{
	return n->nkids;
}

const struct profile_node *profile_node_child(const struct profile_node *n, size_t i)
{
	return i < n->nkids ? kid_at(n, i) : NULL;
}

/* --- functions ---------------------------------------------------------------- */

static int function_cmp(const void *a, const void *b)
{
	const struct profile_function *x = a, *y = b;
	int c;

	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	c = strcmp(x->name, y->name);
	if (c)
		return c;
	return (int)x->kind - (int)y->kind;
}

/*
 * Which process a function was sampled in most: processes are the root's
 * children and a depth-first walk finishes one before it starts the next,
 * so per symbol it is enough to keep the running process and its sum, and
 * to compare it with the best so far when another process begins.
 */
struct function_process {
	const struct profile_node *current; /* process root being summed */
	uint64_t current_total;
	const struct profile_node *best;
	uint64_t best_total;
	uint32_t count;
};

static void function_process_close(struct function_process *fp)
{
	if (!fp->current)
		return;
	if (fp->current_total > fp->best_total ||
	    (fp->current_total == fp->best_total && fp->best &&
	     strcmp(fp->current->sym->name, fp->best->sym->name) < 0)) {
		fp->best = fp->current;
		fp->best_total = fp->current_total;
	}
	fp->current = NULL;
}

static void function_process_add(struct function_process *fp, const struct profile_node *process,
				 uint64_t total)
{
	if (fp->current != process) {
		function_process_close(fp);
		fp->current = process;
		fp->current_total = 0;
		fp->count++;
	}
	fp->current_total += total;
}

/*
 * One depth-first walk. on_path[id] counts how many nodes of a symbol are
 * on the current path: a node adds its total only when it is the first
 * (outermost) of its symbol, so a recursive function's samples count once.
 */
struct functions_walk {
	uint64_t *self, *total;
	uint32_t *on_path;
	struct function_process *procs;
	const struct profile_node *process; /* the root's child above the node */
};

static int functions_visit(const struct profile_node *kid, size_t depth, void *ctx)
{
	struct functions_walk *w = ctx;

	if (depth == 1)
		w->process = kid;
	if (!w->on_path[kid->sym->id]++) {
		w->total[kid->sym->id] += kid->total[0];
		if (w->process->sym->kind == FRAME_PROCESS)
			function_process_add(&w->procs[kid->sym->id], w->process, kid->total[0]);
	}
	w->self[kid->sym->id] += kid->self[0];
	return 0;
}

static void functions_leave(const struct profile_node *n, size_t depth, void *ctx)
{
	struct functions_walk *w = ctx;

	(void)depth;
	w->on_path[n->sym->id]--;
}

int profile_functions(const struct profile *p, struct profile_function **out, size_t *n)
{
	struct functions_walk w = { 0 };
	uint64_t *self, *total;
	struct function_process *procs;
	struct profile_function *fns = NULL;
	size_t count = 0, nsyms = p->syms.n;
	int err = -ENOMEM;

	*out = NULL;
	*n = 0;
	if (!nsyms)
		return 0;
	self = w.self = calloc(nsyms, sizeof(*self));
	total = w.total = calloc(nsyms, sizeof(*total));
	w.on_path = calloc(nsyms, sizeof(*w.on_path));
	procs = w.procs = calloc(nsyms, sizeof(*procs));
	if (!self || !total || !w.on_path || !procs ||
	    profile_walk(p, 0, functions_visit, functions_leave, &w))
		goto out_free;

	for (size_t id = 0; id < nsyms; id++)
		if (total[id] && symbol_at(p, id)->kind != FRAME_PROCESS)
			count++;
	if (count) {
		fns = malloc(count * sizeof(*fns));
		if (!fns)
			goto out_free;
		count = 0;
		for (size_t id = 0; id < nsyms; id++) {
			const struct symbol *sym = symbol_at(p, id);
			struct function_process *fp = &procs[id];

			if (!total[id] || sym->kind == FRAME_PROCESS)
				continue;
			function_process_close(fp);
			fns[count++] = (struct profile_function){
				.name = sym->name,
				.kind = (enum frame_kind)sym->kind,
				.self = self[id],
				.total = total[id],
				.process = fp->best ? fp->best->sym->name : "",
				.processes = fp->count,
			};
		}
		qsort(fns, count, sizeof(*fns), function_cmp);
	}
	*out = fns;
	*n = count;
	err = 0;
out_free:
	free(self);
	free(total);
	free(w.on_path);
	free(procs);
	return err;
}

double profile_cpu_percent(uint64_t samples, double frequency, double seconds)
{
	if (!(frequency > 0) || !(seconds > 0))
		return 0;
	return (double)samples * 100.0 / (frequency * seconds);
}

/*
 * Walks src keeping the path without the dropped kind in frames[]; every
 * node with self samples is one stack to add.
 */
struct without_walk {
	struct profile *dst;
	enum frame_kind kind;
	struct frame *frames;
	size_t *kept; /* kept[d]: frames kept down to depth d */
};

static int without_visit(const struct profile_node *kid, size_t depth, void *ctx)
{
	struct without_walk *w = ctx;
	size_t n = w->kept[depth - 1];

	if ((enum frame_kind)kid->sym->kind != w->kind)
		w->frames[n++] = (struct frame){ kid->sym->name, (enum frame_kind)kid->sym->kind };
	w->kept[depth] = n;
	if (kid->self[0] && n)
		return profile_add(w->dst, w->frames, n, kid->self[0]);
	return 0;
}

int profile_add_without(struct profile *dst, const struct profile *src, enum frame_kind kind)
{
	struct without_walk w = { .dst = dst, .kind = kind };
	int err = -ENOMEM;

	if (dst == src || kind == FRAME_PROCESS || (unsigned int)kind >= FRAME_KIND_NR)
		return -EINVAL;
	w.frames = malloc((src->max_depth + 1) * sizeof(*w.frames));
	w.kept = malloc((src->max_depth + 1) * sizeof(*w.kept));
	if (w.frames && w.kept) {
		w.kept[0] = 0;
		err = profile_walk(src, 0, without_visit, NULL, &w);
	}
	free(w.frames);
	free(w.kept);
	return err;
}
