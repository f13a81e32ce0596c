/*
 * elfcache: a small LRU of ELF symbol tables.
 *
 * The cache is a flat array searched linearly: at the default of 256
 * entries a search compares a few hundred bytes, far less than the work
 * of one cache miss, and it needs no hash table to keep in step. Recency
 * is a counter stamped on each use; eviction picks the oldest stamp among
 * the entries nobody holds, until both the entry bound and the byte bound
 * (elfsym_bytes() of each table, summed) are met. When every entry is held the array grows: the
 * holders (process records) are bounded, so the growth is too.
 */
#include "bpf/grow.h"
#include "symbolizer/elfcache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symbolizer/elfsym.h"

#define ELFCACHE_DEFAULT_MAX 256

struct elfcache_entry {
	uint32_t dev_major, dev_minor;
	uint64_t inode;
	bool deleted;
	char *path; /* NULL unless the path is part of the key */
	struct elfsym *elf;
	size_t bytes;  /* elfsym_bytes(elf) plus the key's path */
	uint64_t used; /* stamp of the last use */
	uint32_t holds;
};

struct elfcache {
	struct elfcache_entry *entries;
	size_t nr, cap, max;
	uint64_t bytes, max_bytes; /* of the tables kept, and their bound */
	uint64_t clock;
	uint64_t hits, misses;
	uint64_t drops; /* tables freed, ever */
};

static bool key_uses_path(const struct elfcache_key *key)
{
	return !key->inode || key->deleted;
}

struct elfcache *elfcache_new(size_t max, uint64_t max_bytes)
{
	struct elfcache *cache = calloc(1, sizeof(*cache));

	if (!cache)
		return NULL;
	cache->max = max ? max : ELFCACHE_DEFAULT_MAX;
	cache->max_bytes = max_bytes ? max_bytes : ELFCACHE_DEFAULT_MAX_BYTES;
	cache->cap = cache->max;
	cache->entries = calloc(cache->cap, sizeof(*cache->entries));
	if (!cache->entries) {
		free(cache);
		return NULL;
	}
	return cache;
}

static void entry_clear(struct elfcache *cache, struct elfcache_entry *e)
{
	cache->bytes -= e->bytes;
	cache->drops++;
	elfsym_free(e->elf);
	free(e->path);
	memset(e, 0, sizeof(*e));
}

void elfcache_free(struct elfcache *cache)
{
	if (!cache)
		return;
	for (size_t i = 0; i < cache->nr; i++)
		entry_clear(cache, &cache->entries[i]);
	free(cache->entries);
	free(cache);
}

static bool entry_matches(const struct elfcache_entry *e, const struct elfcache_key *key)
{
	if (e->inode != key->inode || e->dev_major != key->dev_major ||
	    e->dev_minor != key->dev_minor || e->deleted != key->deleted)
		return false;
	if (!key_uses_path(key))
		return true;
	return e->path && key->path && !strcmp(e->path, key->path);
}

bool elfcache_get(struct elfcache *cache, const struct elfcache_key *key, const struct elfsym **elf)
{
	for (size_t i = 0; i < cache->nr; i++) {
		struct elfcache_entry *e = &cache->entries[i];

		if (entry_matches(e, key)) {
			e->used = ++cache->clock;
			cache->hits++;
			*elf = e->elf;
			return true;
		}
	}
	cache->misses++;
	*elf = NULL;
	return false;
}

/* The least recently used entry nobody holds, or NULL. */
static struct elfcache_entry *entry_oldest(struct elfcache *cache)
{
	struct elfcache_entry *oldest = NULL;

	for (size_t i = 0; i < cache->nr; i++) {
		struct elfcache_entry *e = &cache->entries[i];

		if (!e->holds && (!oldest || e->used < oldest->used))
			oldest = e;
	}
	return oldest;
}

/* Drops entry e, moving the last entry into its place. */
static void entry_drop(struct elfcache *cache, struct elfcache_entry *e)
{
	entry_clear(cache, e);
	/* Tables live on the heap: moving the last entry moves no table. */
	*e = cache->entries[--cache->nr];
	memset(&cache->entries[cache->nr], 0, sizeof(*e));
}

int elfcache_put(struct elfcache *cache, const struct elfcache_key *key, struct elfsym *elf)
{
	struct elfcache_entry *slot, *old;
	size_t bytes = elfsym_bytes(elf);
	char *path = NULL;

	if (key_uses_path(key) && key->path) {
		path = strdup(key->path);
		if (!path) {
			elfsym_free(elf);
			return -ENOMEM;
		}
	}
	bytes += path ? strlen(path) + 1 : 0;
	/* Make room in bytes first, then in entries: the new table may push
	 * out several small ones, never one somebody holds. */
	while (cache->nr && cache->bytes + bytes > cache->max_bytes && (old = entry_oldest(cache)))
		entry_drop(cache, old);
	slot = NULL;
	if (cache->nr >= cache->max) {
		slot = entry_oldest(cache);
		if (slot)
			entry_clear(cache, slot);
	}
	if (!slot && GROW_ARRAY(&cache->entries, &cache->cap, cache->nr + 1, 1)) {
		free(path);
		elfsym_free(elf);
		return -ENOMEM;
	}
	if (!slot)
		slot = &cache->entries[cache->nr++];
	*slot = (struct elfcache_entry){
	    .dev_major = key->dev_major,
	    .dev_minor = key->dev_minor,
	    .inode = key->inode,
	    .deleted = key->deleted,
	    .path = path,
	    .elf = elf,
	    .bytes = bytes,
	    .used = ++cache->clock,
	};
	cache->bytes += bytes;
	return 0;
}

static struct elfcache_entry *entry_of(struct elfcache *cache, const struct elfsym *elf)
{
	for (size_t i = 0; i < cache->nr; i++)
		if (cache->entries[i].elf == elf)
			return &cache->entries[i];
	return NULL;
}

int elfcache_hold(struct elfcache *cache, const struct elfsym *elf)
{
	struct elfcache_entry *e;

	if (!elf)
		return 0;
	e = entry_of(cache, elf);
	if (!e)
		return -ENOENT;
	e->holds++;
	return 0;
}

void elfcache_release(struct elfcache *cache, const struct elfsym *elf)
{
	struct elfcache_entry *e;

	if (!elf)
		return;
	e = entry_of(cache, elf);
	if (e && e->holds)
		e->holds--;
}

void elfcache_trim(struct elfcache *cache)
{
	while (cache->nr > cache->max || cache->bytes > cache->max_bytes) {
		struct elfcache_entry *oldest = entry_oldest(cache);

		if (!oldest)
			return;
		entry_drop(cache, oldest);
	}
}

uint64_t elfcache_drops(const struct elfcache *cache)
{
	return cache->drops;
}

void elfcache_stats(const struct elfcache *cache, struct elfcache_stats *stats)
{
	stats->hits = cache->hits;
	stats->misses = cache->misses;
	stats->cached = cache->nr;
	stats->bytes = cache->bytes;
	stats->held = 0;
	stats->held_bytes = 0;
	for (size_t i = 0; i < cache->nr; i++) {
		stats->held += cache->entries[i].holds != 0;
		stats->held_bytes += cache->entries[i].holds ? cache->entries[i].bytes : 0;
	}
}
