/*
 * elfcache: ELF symbol tables kept between samples, keyed by file.
 *
 * Many processes map the same libc; reading its symbol table once and
 * keeping it saves both time and memory. A file is named by the device and
 * inode its maps line gives, not by path: one path may name different
 * files in different mount namespaces, or before and after an upgrade.
 * For a deleted file or one without an inode the path joins the key.
 * The cache holds at most max tables and drops the least recently used.
 * Files that could not be read are remembered too, so a bad file is not
 * opened again for every sample.
 */
#ifndef EBPROF_SYMBOLIZER_ELFCACHE_H
#define EBPROF_SYMBOLIZER_ELFCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct elfcache;
struct elfsym;

struct elfcache_key {
	uint32_t dev_major, dev_minor;
	uint64_t inode;
	const char *path; /* compared only when inode is 0 or deleted is set */
	bool deleted;
};

/* Returns NULL when out of memory; max 0 means 64. Free with elfcache_free(). */
struct elfcache *elfcache_new(size_t max);

/* Frees the cache and every table in it. */
void elfcache_free(struct elfcache *cache);

/*
 * Looks key up. Returns true on a hit, and sets *elf to the table (NULL
 * when the file was found unreadable). Counts a hit or a miss. *elf is
 * owned by the cache and valid until the next elfcache_put().
 */
bool elfcache_get(struct elfcache *cache, const struct elfcache_key *key,
		  const struct elfsym **elf);

/*
 * Stores elf (may be NULL: the file is unreadable) for key, taking
 * ownership of it, and drops the least recently used entry if the cache
 * is full. Returns 0, or -ENOMEM (elf is then freed).
 */
int elfcache_put(struct elfcache *cache, const struct elfcache_key *key, struct elfsym *elf);

struct elfcache_stats {
	uint64_t hits, misses;
	uint64_t cached; /* entries held now, unreadable files included */
};

void elfcache_stats(const struct elfcache *cache, struct elfcache_stats *stats);

#endif
