/*
 * inlines: the functions a compiler inlined at an address, from DWARF.
 *
 * A symbol table names the function that holds an address; when a hot
 * loop of an inlined helper sits inside it, the whole loop is charged to
 * the caller. The DWARF of the file (its own .debug_info, a separate
 * debug file, or one fetched from debuginfod: the symbolizer finds it)
 * keeps a DW_TAG_inlined_subroutine for every inlined call, with the
 * address ranges its code landed in. This module walks those ranges down
 * to an address and returns the chain of inlined functions there, from
 * the one inlined into the real function to the innermost; the
 * symbolizer puts each on the stack as a FRAME_INLINED frame.
 *
 * It is cheap by caching twice. Files are named by build-id: a file's
 * DWARF is opened once (the caller's open callback) and kept open
 * while the bounds allow, and a file without any is
 * remembered as such, so that it costs one look-up per frame after. The
 * chain of each (build-id, address) is kept, so a stack drained again
 * costs a hash look-up per frame. Both are bounded in bytes: open DWARF
 * by the size of the debug sections read and by INLINES_MAX_OPEN files
 * (the least recently used file is closed, fd and all, and opened again
 * through the open callback when asked), chains by their allocations
 * (the whole table is dropped when full, which re-reads only the hot
 * addresses). Nothing here knows about processes or the gate.
 *
 * The caller owns the struct inlines (inlines_new / inlines_free).
 */
#ifndef EBPROF_SYMBOLIZER_INLINES_H
#define EBPROF_SYMBOLIZER_INLINES_H

#include <stddef.h>
#include <stdint.h>

/* Chains kept by default: ~100 bytes each, so some 40,000 addresses. */
#define INLINES_DEFAULT_CHAIN_BYTES (4ULL << 20)
/* DWARF sections read and kept open by default; a file whose debug
 * sections alone are over it is not expanded (counted as too_big). */
#define INLINES_DEFAULT_DWARF_BYTES (64ULL << 20)
#define INLINES_MAX_FILES 256 /* files (build-ids) remembered */
#define INLINES_MAX_OPEN 16   /* files with their DWARF (and an fd) open at once */
#define INLINES_MAX_DEPTH 64  /* inlined functions in one chain, DIE nesting walked */
#define INLINES_MAX_ID 64     /* bytes of a build-id */

struct inlines;

struct inlines_config {
	uint64_t chain_bytes; /* 0: INLINES_DEFAULT_CHAIN_BYTES */
	uint64_t dwarf_bytes; /* 0: INLINES_DEFAULT_DWARF_BYTES */
};

/* Returns NULL when out of memory. Free with inlines_free(). */
struct inlines *inlines_new(const struct inlines_config *config);
void inlines_free(struct inlines *in);

/*
 * Opens the file that holds the DWARF of the code of a build-id: returns
 * an fd that inlines then owns, or a negative errno (-ENOENT: no DWARF
 * anywhere). Called once per file, and again only after the file was
 * closed to keep the bounds, or after another error, up to
 * INLINES_OPEN_TRIES times in all.
 */
#define INLINES_OPEN_TRIES 3
typedef int (*inlines_open_fn)(void *arg);

/*
 * The functions inlined at vaddr (the file's link-time address, as in its
 * symbol table) of the file with build-id id (len bytes): *names gets
 * them outermost first (the one inlined into the real function first,
 * the one whose code vaddr is last), *n how many; 0 when none, or when
 * the file has no DWARF. The names are owned by in and valid until the
 * next call. open is asked for the file's DWARF when it is not open. Returns
 * 0, or -ENOMEM (then *n is 0).
 */
int inlines_lookup(struct inlines *in, const unsigned char *id, size_t len, uint64_t vaddr,
		   inlines_open_fn open, void *arg, const char *const **names, size_t *n);

struct inlines_stats {
	uint64_t hits, misses; /* chain look-ups answered from the cache, or walked */
	uint64_t files_dwarf;  /* files whose DWARF was opened, ever */
	uint64_t files_none;   /* files found without DWARF, ever */
	uint64_t too_big;      /* files skipped: debug sections over dwarf_bytes */
	uint64_t flushes;      /* times the chain table was dropped at its bound */
	uint64_t chain_bytes;  /* held now by the chains and their table */
	uint64_t dwarf_bytes;  /* held now: the debug sections of the open files */
};

void inlines_stats(const struct inlines *in, struct inlines_stats *stats);

#endif
