/*
 * elfhdr: reads the few header fields that size libelf's first
 * allocations, in the file's own class and byte order (a process may map
 * any file executable, a big-endian one included).
 */
#include "symbolizer/elfhdr.h"

#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

/* Where the header's bytes come from: a file or an image. */
struct elfhdr_src {
	int fd;
	const unsigned char *image;
	size_t size;
	bool big_endian;
};

static bool elfhdr_read(const struct elfhdr_src *src, uint64_t off, void *buf, size_t len)
{
	if (src->fd < 0) {
		if (off > src->size || len > src->size - off)
			return false;
		memcpy(buf, src->image + off, len);
		return true;
	}
	return pread(src->fd, buf, len, (off_t)off) == (ssize_t)len;
}

/* An unsigned field of len bytes (2, 4 or 8) at off; 0 when unreadable. */
static uint64_t elfhdr_field(const struct elfhdr_src *src, uint64_t off, size_t len)
{
	unsigned char b[8];
	uint64_t v = 0;

	if (!elfhdr_read(src, off, b, len))
		return 0;
	for (size_t i = 0; i < len; i++)
		v |= (uint64_t)b[src->big_endian ? len - 1 - i : i] << (8 * i);
	return v;
}

int elfhdr_check(int fd, const void *image, size_t size)
{
	struct elfhdr_src src = { .fd = fd, .image = image, .size = size };
	unsigned char ident[EI_NIDENT];
	uint64_t shoff, shnum, phnum;
	bool is64;

	if (!elfhdr_read(&src, 0, ident, sizeof(ident)) || memcmp(ident, ELFMAG, SELFMAG))
		return 0;
	if (ident[EI_CLASS] != ELFCLASS32 && ident[EI_CLASS] != ELFCLASS64)
		return 0;
	is64 = ident[EI_CLASS] == ELFCLASS64;
	src.big_endian = ident[EI_DATA] == ELFDATA2MSB;
	/* Elf32_Ehdr and Elf64_Ehdr: e_shoff, e_phnum, e_shnum. */
	shoff = elfhdr_field(&src, is64 ? 0x28 : 0x20, is64 ? 8 : 4);
	phnum = elfhdr_field(&src, is64 ? 0x38 : 0x2c, 2);
	shnum = elfhdr_field(&src, is64 ? 0x3c : 0x30, 2);
	if (shoff) {
		/* Extended numbering: the real counts are in section 0. */
		if (!shnum)
			shnum = elfhdr_field(&src, shoff + (is64 ? 0x20 : 0x14), is64 ? 8 : 4);
		if (phnum == PN_XNUM)
			phnum = elfhdr_field(&src, shoff + (is64 ? 0x2c : 0x1c), 4);
	}
	if (shnum > ELFHDR_MAX_HEADERS || phnum > ELFHDR_MAX_HEADERS)
		return -EFBIG;
	return 0;
}

bool elfhdr_table_fits(Elf *e, const GElf_Shdr *sh, uint64_t max)
{
	Elf_Scn *strings = elf_getscn(e, sh->sh_link);
	GElf_Shdr ss;

	return sh->sh_size <= max && (!strings || !gelf_getshdr(strings, &ss) ||
				      ss.sh_type == SHT_NOBITS || ss.sh_size <= max);
}
