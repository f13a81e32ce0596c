/*
 * elfhdr: the header counts of an ELF file, checked before libelf sees it.
 *
 * libelf's elf_begin() allocates and fills one descriptor per section the
 * header announces, before anything else is read: a 2.5 GB sparse file
 * announcing 40 million sections (extended numbering: e_shnum 0, the count
 * in section 0's sh_size) took 8 GB of memory in elf_begin() alone. So
 * every file that elfsym and debuginfo hand to libelf, whether on disk or
 * in memory, first goes through elfhdr_check(), which reads the ELF header
 * (and section 0 for extended counts) itself. And since libelf reads a
 * whole section when asked for its data, whoever reads a symbol table
 * first asks elfhdr_table_fits() whether the size it declares is bounded.
 */
#ifndef EBPROF_SYMBOLIZER_ELFHDR_H
#define EBPROF_SYMBOLIZER_ELFHDR_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Section or program headers of one file; real ones have tens. */
#define ELFHDR_MAX_HEADERS 65536

/*
 * Checks the header of the ELF file on fd, or of image (size bytes; fd
 * -1). Returns 0 when libelf may read it (including files that are not
 * ELF at all: libelf refuses those itself), or -EFBIG when it announces
 * more than ELFHDR_MAX_HEADERS section or program headers.
 */
int elfhdr_check(int fd, const void *image, size_t size);

/*
 * Whether symbol table sh of e and its string table each declare at most
 * max bytes (a string table that holds no bytes in the file is not
 * counted). A sparse file can declare gigabytes that libelf would read.
 */
bool elfhdr_table_fits(Elf *e, const GElf_Shdr *sh, uint64_t max);

#endif
