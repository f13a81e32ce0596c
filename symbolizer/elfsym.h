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
 * Reads the ELF file open on fd (the fd stays the caller's; it may be
 * closed after the call) into *out. Function symbols come from .symtab, or
 * when the file is stripped from its MiniDebugInfo (.gnu_debugdata) and
 * .dynsym. Returns 0, or a negative errno:
 * -ENOEXEC for a file that is not a usable ELF file (garbage, truncated,
 * no PT_LOAD), -ENOMEM. A file with no function symbol at all still loads
 * (its addresses then come out as "[file+0xoff]"). The caller frees the
 * table with elfsym_free().
 */
int elfsym_open_fd(int fd, struct elfsym **out);

/*
 * As elfsym_open_fd(), but a stripped file's symbols come first from its
 * separate debug file, looked for where paths say (debuginfo_open()).
 */
int elfsym_open_fd_debug(int fd, const struct debuginfo_paths *paths, struct elfsym **out);

/*
 * As elfsym_open_fd(), from an ELF image of size bytes in memory (the
 * vDSO). The image is copied while reading and stays the caller's.
 */
int elfsym_open_mem(const void *image, size_t size, struct elfsym **out);

/* As elfsym_open_fd(), by path; -errno from open() when that fails. */
int elfsym_open(const char *path, struct elfsym **out);

/* As elfsym_open_fd_debug(), by path. */
int elfsym_open_debug(const char *path, const struct debuginfo_paths *paths, struct elfsym **out);

void elfsym_free(struct elfsym *elf);

/* Function symbols kept, one per address, sorted by address. */
size_t elfsym_count(const struct elfsym *elf);

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

#endif
