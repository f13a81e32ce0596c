/*
 * elfsym: the function symbols and loadable segments of one ELF file.
 *
 * A sampled user address is first turned into a file offset through its
 * mapping (ip - start + pgoff), then into the address the ELF file's
 * symbols use, through the PT_LOAD segment that holds that offset
 * (offset - p_offset + p_vaddr). This one rule works for PIE and non-PIE
 * executables and for shared objects alike. The symbol search is bounded
 * by each symbol's size, so an address outside every function is not
 * named after the nearest one.
 */
#ifndef EBPROF_SYMBOLIZER_ELFSYM_H
#define EBPROF_SYMBOLIZER_ELFSYM_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct elfsym;
struct debuginfo_paths;

struct elfsym_symbol {
	uint64_t value;	  /* ELF virtual address */
	uint64_t size;	  /* 0 when the symbol table gives none */
	const char *name; /* owned by the table */
};

struct elfsym_segment {
	uint64_t vaddr, offset, filesz, memsz;
	uint32_t flags; /* PF_R, PF_W, PF_X */
};

/*
 * What one ELF file may make us read and keep. A file sets its section
 * sizes itself: a .symtab whose header claims 3 GiB (a sparse file) made
 * libelf allocate and read 3 GiB. The defaults are far above any real
 * file (the largest tables on our Debian 12 host are node's: a 7.2 MiB
 * .strtab, 330k symbols) and far below what hurts.
 */
#define ELFSYM_DEFAULT_MAX_TABLE (256ULL << 20) /* bytes of one symbol or string table */
#define ELFSYM_DEFAULT_MAX_SYMBOLS (4u << 20)	/* function symbols kept from one table */

struct elfsym_bounds {
	uint64_t max_table;   /* 0: ELFSYM_DEFAULT_MAX_TABLE */
	uint64_t max_symbols; /* 0: ELFSYM_DEFAULT_MAX_SYMBOLS */
};

/*
 * Bounds hit, each counted once per file read. A table over its bound is
 * skipped (the next source of names is tried: .dynsym after .symtab); a
 * file with too many headers, or whose section names are over their
 * bound, is not read at all (-ENOEXEC).
 */
struct elfsym_breaches {
	uint64_t tables;   /* a symbol or string table over max_table */
	uint64_t symbols;  /* a table with more functions than max_symbols */
	uint64_t sections; /* too many headers, or a note, link, name or
			    * MiniDebugInfo section over its bound (debuginfo.h) */
};

struct elfsym_options {
	const struct debuginfo_paths *debug; /* NULL: no separate debug files */
	struct elfsym_bounds bounds;
	struct elfsym_breaches *breaches; /* NULL: not counted */
};

/*
 * Reads the ELF file open on fd (the fd stays the caller's; it may be
 * closed after the call) into *out. Function symbols come from .symtab, or
 * when the file is stripped from its separate debug file (options->debug),
 * its MiniDebugInfo (.gnu_debugdata) and .dynsym. Returns 0, or a negative
 * errno: -ENOEXEC for a file that is not a usable ELF file (garbage,
 * truncated, no PT_LOAD, too many headers), -ENOMEM. A file with no
 * function symbol at all still loads (its addresses then come out as
 * "[file+0xoff]"). options may be NULL for the defaults. The caller frees
 * the table with elfsym_free().
 */
int elfsym_open_fd_with(int fd, const struct elfsym_options *options, struct elfsym **out);

/*
 * As elfsym_open_fd_with(), from an ELF image of size bytes in memory (the
 * vDSO). The image is copied while reading and stays the caller's.
 */
int elfsym_open_mem_with(const void *image, size_t size, const struct elfsym_options *options,
			 struct elfsym **out);

/* elfsym_open_fd_with() with the default bounds and no debug files. */
int elfsym_open_fd(int fd, struct elfsym **out);

/* elfsym_open_fd_with() with the default bounds, debug files looked for where paths say. */
int elfsym_open_fd_debug(int fd, const struct debuginfo_paths *paths, struct elfsym **out);

/* elfsym_open_mem_with() with the default bounds. */
int elfsym_open_mem(const void *image, size_t size, struct elfsym **out);

/*
 * As elfsym_open_fd(), by path, opened through the gate (target_open():
 * a regular file, never blocking); -errno when that refuses it.
 */
int elfsym_open(const char *path, struct elfsym **out);

/* As elfsym_open_fd_debug(), by path. */
int elfsym_open_debug(const char *path, const struct debuginfo_paths *paths, struct elfsym **out);

void elfsym_free(struct elfsym *elf);

/*
 * The file's GNU build-id (from its own notes, not its debug file's,
 * though the two match), *len bytes owned by elf; NULL when it has none.
 */
const unsigned char *elfsym_build_id(const struct elfsym *elf, size_t *len);

/* Function symbols kept, one per address, sorted by address. */
size_t elfsym_count(const struct elfsym *elf);

/* The heap memory elf holds, in bytes (its symbols, ends, segments and
 * name pool as allocated); 0 for NULL. What the ELF cache's bound counts. */
size_t elfsym_bytes(const struct elfsym *elf);

size_t elfsym_segment_count(const struct elfsym *elf);

/*
 * libelf's view of the in-memory ELF image of size bytes (the vDSO's),
 * through a private copy, since libelf wants a writable buffer: *copy
 * (owned by the caller, freed after elf_end()). NULL, with *copy NULL,
 * when out of memory or libelf is unusable.
 */
Elf *elfsym_memory(const void *image, size_t size, char **copy);

/*
 * Reads the PT_LOAD segments of the ELF file e into *out (a new array,
 * *n entries, which the caller frees; at least one entry is allocated).
 * Returns 0, -ENOEXEC for unreadable program headers, or -ENOMEM. A file
 * with none gives 0 and *n 0.
 */
int elfsym_read_segments(Elf *e, struct elfsym_segment **out, size_t *n);
const struct elfsym_segment *elfsym_segment_at(const struct elfsym *elf, size_t i);

/*
 * Translates a file offset into the file's virtual address through the
 * PT_LOAD segment whose file bytes hold it. Returns 0, or -ENOENT when no
 * segment does.
 */
int elfsym_offset_to_vaddr(const struct elfsym *elf, uint64_t offset, uint64_t *vaddr);

/*
 * The function holding vaddr, or NULL. A symbol with a size holds
 * [value, value + size). A symbol without one (hand-written assembly)
 * holds up to the next symbol, and never past the end of its segment.
 * *offset (if not NULL) gets vaddr - value. The result is owned by elf.
 */
const struct elfsym_symbol *elfsym_lookup(const struct elfsym *elf, uint64_t vaddr,
					  uint64_t *offset);

/*
 * Functions whose bounds are known but not their names: a stripped
 * file's call frame information has one FDE per function (cfi_functions()
 * gives them; the symbolizer hands them over, elfsym does not read CFI).
 */
struct elfsym_range {
	uint64_t start, end; /* [start, end), ELF virtual addresses */
};

/*
 * True when the names came from a full symbol table (.symtab, a separate
 * debug file's or MiniDebugInfo's), false when from .dynsym alone or none:
 * then most internal functions have no name, and their bounds are worth
 * reading (elfsym_take_ranges).
 */
bool elfsym_complete(const struct elfsym *elf);

/*
 * Gives elf n ranges (sorted by start, not overlapping, as cfi_functions()
 * gives them), replacing any it had; elf owns the array (from malloc)
 * from then on, and it counts in elfsym_bytes().
 */
void elfsym_take_ranges(struct elfsym *elf, struct elfsym_range *ranges, size_t n);

/*
 * The first address of the function that holds vaddr, for an address no
 * symbol names (elfsym_lookup() gave NULL), so that one unnamed function
 * is one frame: the start of the range (elfsym_take_ranges) that holds it,
 * else the start of the gap it is in, which is the furthest of the end of
 * the symbol before it, the end of the range before it and the start of
 * its segment. Returns 0, or -ENOENT when no segment holds vaddr.
 */
int elfsym_function_start(const struct elfsym *elf, uint64_t vaddr, uint64_t *start);

#endif
