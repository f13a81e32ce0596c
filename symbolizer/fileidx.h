/*
 * fileidx: finds what user space keeps per mapped file by the file's
 * identity (device and inode), in constant time.
 *
 * The unwinder keeps one table per file, shared by every process that
 * maps it, and looks each mapping of every new process up by its file:
 * with a table list walked from its head, that look-up grew with the
 * tables held (a busy host holds a few hundred: every compiler, every
 * test binary of the builds beside it). This index answers it by hashing
 * the identity instead. One value may be filed under several keys (the
 * same build at two paths: a container's copy of libc); a key has one
 * value, the last one filed under it.
 *
 * The index owns its entries, not the values: the caller removes a value's
 * keys before freeing it. Not thread-safe: the caller's lock covers it.
 */
#ifndef EBPROF_SYMBOLIZER_FILEIDX_H
#define EBPROF_SYMBOLIZER_FILEIDX_H

#include <stddef.h>
#include <stdint.h>

struct fileidx;

/* A mapped file's identity, as /proc/PID/maps gives it (inode 0: the vDSO). */
struct fileidx_key {
	uint32_t dev_major, dev_minor;
	uint64_t inode;
};

/* An empty index; NULL when out of memory. Free with fileidx_free(). */
struct fileidx *fileidx_new(void);

/* Frees the index and its entries (not the values); NULL is fine. */
void fileidx_free(struct fileidx *x);

/*
 * Files value under key, in place of what was filed there. Returns 0, or
 * -ENOMEM (then the index is as it was).
 */
int fileidx_add(struct fileidx *x, const struct fileidx_key *key, void *value);

/* The value filed under key, or NULL. */
void *fileidx_find(const struct fileidx *x, const struct fileidx_key *key);

/* Removes key's entry if it holds value (another value's entry stays). */
void fileidx_remove(struct fileidx *x, const struct fileidx_key *key, const void *value);

/* Entries held. */
size_t fileidx_count(const struct fileidx *x);

#endif
