/*
 * elfcache: ELF symbol tables kept between samples, keyed by file.
 *
 * Many processes map the same libc; reading its symbol table once and
 * keeping it saves both time and memory. A file is named by the device and
 * inode its maps line gives, not by path: one path may name different
 * files in different mount namespaces, or before and after an upgrade.
 * For a deleted file or one without an inode the path joins the key.
 * The cache holds at most max tables it may drop, and at most max_bytes
 * of them (elfsym_bytes(), summed), and drops the least recently used. A
 * table a process record holds (elfcache_hold) is never dropped: a process
 * that has exited can no longer be read again, so its tables stay until
 * its record lets them go, and the cache grows past its bounds for them
 * (the process records are bounded in their turn); elfcache_trim() at the
 * end of a drain brings it back. Files that could not be read are remembered too, so a bad
 * file is not opened again for every sample.
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

/* Bytes of symbol tables kept by default: node's table is ~17 MB, libLLVM's
 * ~5 MB, most libraries' a few kB. */
#define ELFCACHE_DEFAULT_MAX_BYTES (64ULL << 20)

/* Returns NULL when out of memory; max 0 means 256 tables, max_bytes 0
 * ELFCACHE_DEFAULT_MAX_BYTES. Free with elfcache_free(). */
struct elfcache *elfcache_new(size_t max, uint64_t max_bytes);

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
 * ownership of it, and drops the least recently used entry nobody holds
 * if the cache is full. Returns 0, or -ENOMEM (elf is then freed).
 */
int elfcache_put(struct elfcache *cache, const struct elfcache_key *key, struct elfsym *elf);

/*
 * Holds the cached table elf (from elfcache_get or elfcache_put) so that
 * it is not dropped, and keeps it valid, until as many elfcache_release()
 * calls. elf NULL is ignored. Returns 0, or -ENOENT for a table not cached.
 */
int elfcache_hold(struct elfcache *cache, const struct elfsym *elf);
void elfcache_release(struct elfcache *cache, const struct elfsym *elf);

/* Drops least recently used tables nobody holds until at most max are kept. */
void elfcache_trim(struct elfcache *cache);

/*
 * Entries dropped so far. A table from elfcache_get() or elfcache_put()
 * stays valid while this count does not change, which lets a caller keep
 * it between lookups.
 */
uint64_t elfcache_drops(const struct elfcache *cache);

struct elfcache_stats {
	uint64_t hits, misses;
	uint64_t cached; /* entries kept now, unreadable files included */
	uint64_t held;	 /* of those, entries some process record holds */
	uint64_t bytes;	 /* of every table kept (elfsym_bytes() and key) */
	uint64_t held_bytes; /* of those held */
};

void elfcache_stats(const struct elfcache *cache, struct elfcache_stats *stats);

#endif
