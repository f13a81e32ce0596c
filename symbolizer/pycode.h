/*
 * pycode: a Python frame's name, "qualname (file.py:line)".
 *
 * The BPF walk gives a Python frame as a code object's address, a
 * checksum of some of its fields, and the instruction index
 * (bpf/ebprof.h). The symbolizer asks pycode for its name: pycode reads
 * the code object from the process (process_vm_readv), checks that it
 * still has the checksum the walk saw (a code object freed and its memory
 * reused since is refused, never named after the new one), reads its
 * qualified name, file name, first line and location table, and keeps
 * them in a cache keyed by (process, start time, address, checksum), as
 * it keeps, until the end of the drain, that one could not be read. The
 * line is the location table's line for the instruction: 3.11's table
 * (Objects/locations.md) is decoded here, by pycode_line().
 *
 * Not thread-safe: one cache per symbolizer.
 */
#ifndef EBPROF_SYMBOLIZER_PYCODE_H
#define EBPROF_SYMBOLIZER_PYCODE_H

#include <stddef.h>
#include <stdint.h>

struct pycode_cache;

/* Code objects kept by default (a few hundred bytes each), and the bytes
 * of their names and location tables (a big function's table is a few
 * kB; the table of one code object is read up to 256 KiB). */
#define PYCODE_DEFAULT_ENTRIES 16384
#define PYCODE_DEFAULT_BYTES (8ULL << 20)

/*
 * Returns NULL when out of memory; 0 entries: PYCODE_DEFAULT_ENTRIES, 0
 * bytes: PYCODE_DEFAULT_BYTES. Free with pycode_cache_free().
 */
struct pycode_cache *pycode_cache_new(size_t max_entries, uint64_t max_bytes);

void pycode_cache_free(struct pycode_cache *c);

/*
 * Writes the name of the Python frame (first, second: its two stack
 * slots) of process tgid (started at start_time) into buf, as
 * "qualname (file.py:line)" (the file's last path component; "?" for a
 * line the table does not give). Returns 0; -ESTALE when the code object
 * at that address is no longer the one sampled; -EFAULT when it could
 * not be read (the process exited, or the address made no sense);
 * -EPROTONOSUPPORT for a frame of an unknown layout; -ENOMEM.
 */
int pycode_name(struct pycode_cache *c, uint32_t tgid, uint64_t start_time, uint64_t first,
		uint64_t second, char *buf, size_t len);

/*
 * The source line of instruction index lasti (in code units) by a 3.11
 * location table of n bytes, for a code object whose first line is
 * firstlineno; -1 when the table says the instruction has no line, or
 * does not reach it, or is malformed.
 */
int pycode_line(const uint8_t *table, size_t n, int firstlineno, uint32_t lasti);

/*
 * The end of a drain: code objects that could not be read (kept, so that
 * their frames do not read the process again) are read again from now on.
 */
void pycode_end_drain(struct pycode_cache *c);

struct pycode_stats {
	uint64_t hits, misses;	/* misses: code objects read */
	uint64_t negative_hits; /* frames refused by a failed read of this drain */
	uint64_t stale;	  /* frames refused: their code object was replaced */
	uint64_t faults;  /* frames whose code object could not be read */
	uint64_t entries; /* held now */
	uint64_t bytes;	  /* heap held now: the slots, names and tables */
	uint64_t flushes; /* times the cache was full and emptied */
};

void pycode_stats(const struct pycode_cache *c, struct pycode_stats *stats);

#endif
