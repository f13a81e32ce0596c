/*
 * debuginfo: find separate debug files, and unpack MiniDebugInfo.
 *
 * The search follows the places GDB documents, in its order: the
 * build-id tree, then the debuglink name next to the binary, in .debug/
 * beside it, and under the debug root with the binary's directory. A
 * candidate is accepted only if it proves to be for this very build: the
 * same build-id, or the CRC32 the debuglink carries (zlib's crc32 is the
 * same CRC). Each place is tried inside the process's root first, then
 * in ours, and every candidate is opened through the gate (target_open):
 * a container's path cannot lead to a FIFO, a device or a host file.
 *
 * Every section read here is sized by the file, so each is bounded
 * before it is read (debuginfo_section_bound), and so is a candidate
 * that libelf reads (elfhdr_check) and a debug-link candidate whose
 * whole content is checksummed (the gate's file size bound).
 */
#include "symbolizer/debuginfo.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <lzma.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "symbolizer/elfhdr.h"
#include "symbolizer/target.h"

#define MAX_BUILD_ID 64
#define CRC_CHUNK 65536

int debuginfo_build_id(Elf *e, unsigned char *id, size_t cap)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE ||
		    sh.sh_size > DEBUGINFO_MAX_SMALL_SECTION)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf)
			continue;
		while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((char *)data->d_buf + name_off, "GNU", 4) || !nh.n_descsz ||
			    nh.n_descsz > cap)
				continue;
			memcpy(id, (char *)data->d_buf + desc_off, nh.n_descsz);
			return (int)nh.n_descsz;
		}
	}
	return -ENOENT;
}

/* The name of section sh of e, or NULL; the name table itself is bounded. */
static const char *section_name(Elf *e, const GElf_Shdr *sh)
{
	Elf_Scn *names;
	GElf_Shdr nh;
	size_t shstrndx;

	if (elf_getshdrstrndx(e, &shstrndx))
		return NULL;
	names = elf_getscn(e, shstrndx);
	if (!names || !gelf_getshdr(names, &nh) || nh.sh_size > DEBUGINFO_MAX_SMALL_SECTION)
		return NULL;
	return elf_strptr(e, shstrndx, sh->sh_name);
}

uint64_t debuginfo_section_bound(Elf *e, size_t index, const GElf_Shdr *sh)
{
	size_t shstrndx;
	const char *name;

	if (sh->sh_type == SHT_NOBITS)
		return 0;
	if (sh->sh_type == SHT_NOTE || (!elf_getshdrstrndx(e, &shstrndx) && index == shstrndx))
		return DEBUGINFO_MAX_SMALL_SECTION;
	name = section_name(e, sh);
	if (name && !strcmp(name, ".gnu_debuglink"))
		return DEBUGINFO_MAX_SMALL_SECTION;
	if (name && !strcmp(name, ".gnu_debugdata"))
		return DEBUGINFO_MAX_MINIDEBUG;
	return 0;
}

/* The data of the section called name, or NULL (also when over its bound). */
static Elf_Data *section_data(Elf *e, const char *name)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		n = section_name(e, &sh);
		if (!n || strcmp(n, name))
			continue;
		if (sh.sh_size > debuginfo_section_bound(e, elf_ndxscn(scn), &sh))
			return NULL;
		return elf_getdata(scn, NULL);
	}
	return NULL;
}

/* Opens a candidate through the gate: a missing one is no refusal. */
static int open_candidate(const struct debuginfo_paths *paths, const char *root, const char *path,
			  struct target_file *f)
{
	struct target_path p = { .root = root, .path = path, .flags = TARGET_QUIET };

	return target_open(paths->gate, &p, f);
}

/* Opens a candidate whose build-id is id; -ENOENT when it is not. */
static int open_by_build_id(const struct debuginfo_paths *paths, const char *root,
			    const char *path, const unsigned char *id, int len)
{
	unsigned char other[MAX_BUILD_ID] = { 0 };
	struct target_file f;
	int n = -1, err = open_candidate(paths, root, path, &f);
	Elf *e = NULL;

	if (err)
		return err;
	if (!elfhdr_check(f.fd, NULL, 0))
		e = elf_begin(f.fd, ELF_C_READ, NULL);
	if (e) {
		n = debuginfo_build_id(e, other, sizeof(other));
		elf_end(e);
	}
	if (n != len || memcmp(id, other, (size_t)len)) {
		target_file_close(&f);
		return -ENOENT;
	}
	return f.fd;
}

/*
 * Opens a candidate whose whole content has CRC32 crc; -ENOENT when not.
 * It reads the whole file (within the gate's size bound), telling the
 * gate at each chunk that it is still at work.
 */
static int open_by_crc(const struct debuginfo_paths *paths, const char *root, const char *path,
		       uint32_t crc)
{
	unsigned char buf[CRC_CHUNK];
	uLong sum = crc32(0, Z_NULL, 0);
	struct target_file f;
	int err = open_candidate(paths, root, path, &f);
	ssize_t n;

	if (err)
		return err;
	while ((n = read(f.fd, buf, sizeof(buf))) > 0) {
		sum = crc32(sum, buf, (uInt)n);
		target_tick(paths->gate);
	}
	if (n < 0 || (uint32_t)sum != crc) {
		target_file_close(&f);
		return -ENOENT;
	}
	return f.fd;
}

/* The roots to try: the process's, then ours (NULL). */
static int roots(const struct debuginfo_paths *paths, const char *out[2])
{
	int n = 0;

	if (paths->root && paths->root[0])
		out[n++] = paths->root;
	out[n++] = NULL;
	return n;
}

static int find_by_build_id(Elf *e, const struct debuginfo_paths *paths)
{
	unsigned char id[MAX_BUILD_ID];
	char hex[2 * MAX_BUILD_ID + 1], path[4096];
	const char *rs[2];
	int len = debuginfo_build_id(e, id, sizeof(id)), nr = roots(paths, rs);

	if (len < 2)
		return -ENOENT;
	for (int i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", paths->debug_root, hex, hex + 2);
	for (int r = 0; r < nr; r++) {
		int fd = open_by_build_id(paths, rs[r], path, id, len);

		if (fd >= 0)
			return fd;
	}
	return -ENOENT;
}

static int find_by_debuglink(Elf *e, const struct debuginfo_paths *paths)
{
	Elf_Data *data = section_data(e, ".gnu_debuglink");
	const char *link, *rs[2];
	char dir[4096], path[8192 + 64];
	size_t len, crc_off;
	uint32_t crc;
	int nr = roots(paths, rs);

	if (!data || !data->d_buf || !paths->path || paths->path[0] != '/')
		return -ENOENT;
	link = data->d_buf;
	len = strnlen(link, data->d_size);
	crc_off = (len + 4) & ~(size_t)3; /* the name, its NUL, padding to 4 */
	if (!len || memchr(link, '/', len) || crc_off + 4 > data->d_size)
		return -ENOENT;
	memcpy(&crc, (const char *)data->d_buf + crc_off, 4); /* the target's byte order: ours */
	snprintf(dir, sizeof(dir), "%s", paths->path);
	*strrchr(dir, '/') = '\0';
	for (int r = 0; r < nr; r++) {
		const char *const formats[] = { "%s/%.*s", "%s/.debug/%.*s" };
		int fd;

		for (int f = 0; f < 2; f++) {
			snprintf(path, sizeof(path), formats[f], dir, (int)len, link);
			fd = open_by_crc(paths, rs[r], path, crc);
			if (fd >= 0)
				return fd;
		}
		snprintf(path, sizeof(path), "%s%s/%.*s", paths->debug_root, dir, (int)len, link);
		fd = open_by_crc(paths, rs[r], path, crc);
		if (fd >= 0)
			return fd;
	}
	return -ENOENT;
}

int debuginfo_open(Elf *e, const struct debuginfo_paths *paths)
{
	int fd;

	if (!paths || !paths->debug_root || !paths->debug_root[0])
		return -ENOENT;
	fd = find_by_build_id(e, paths);
	if (fd >= 0)
		return fd;
	return find_by_debuglink(e, paths);
}

int debuginfo_minidebug(Elf *e, void **image, size_t *size)
{
	Elf_Data *data = section_data(e, ".gnu_debugdata");
	lzma_stream strm = LZMA_STREAM_INIT;
	unsigned char *out = NULL;
	size_t cap = 0;
	lzma_ret ret;

	*image = NULL;
	*size = 0;
	if (!data || !data->d_buf || !data->d_size)
		return -ENOENT;
	if (lzma_stream_decoder(&strm, DEBUGINFO_MAX_MINIDEBUG, 0) != LZMA_OK)
		return -ENOEXEC;
	strm.next_in = data->d_buf;
	strm.avail_in = data->d_size;
	do {
		if (!strm.avail_out) {
			size_t grown = cap ? cap * 2 : data->d_size * 4;
			unsigned char *buf;

			if (grown > DEBUGINFO_MAX_MINIDEBUG)
				goto err_format;
			buf = realloc(out, grown);
			if (!buf) {
				lzma_end(&strm);
				free(out);
				return -ENOMEM;
			}
			out = buf;
			strm.next_out = out + cap;
			strm.avail_out = grown - cap;
			cap = grown;
		}
		ret = lzma_code(&strm, LZMA_FINISH);
	} while (ret == LZMA_OK);
	if (ret != LZMA_STREAM_END)
		goto err_format;
	*size = cap - strm.avail_out;
	*image = out;
	lzma_end(&strm);
	return 0;

err_format:
	lzma_end(&strm);
	free(out);
	return -ENOEXEC;
}
