/*
 * debuginfo: the symbols a stripped binary left elsewhere.
 *
 * Distributions strip binaries and ship their .symtab in separate debug
 * files (-dbg, -dbgsym packages), found by the binary's build-id
 * (/usr/lib/debug/.build-id/xx/yyyy.debug) or by the name and CRC32 in
 * its .gnu_debuglink section (next to it, in .debug/ next to it, or under
 * /usr/lib/debug). Some (Fedora's MiniDebugInfo) keep a small
 * xz-compressed ELF with the function symbols in .gnu_debugdata instead.
 * elfsym asks this module when a file has no .symtab.
 *
 * For a process in a container, the debug files are in its root first
 * (root = "/proc/PID/root"), then in ours: a build-id or CRC that matches
 * names the same build wherever the file is.
 */
#ifndef EBPROF_SYMBOLIZER_DEBUGINFO_H
#define EBPROF_SYMBOLIZER_DEBUGINFO_H

#include <gelf.h>
#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

struct target;

/*
 * The sections this module reads are sized by the file, so each has a
 * bound: notes (the build-id), .gnu_debuglink and the section names are
 * a few hundred bytes in real files; MiniDebugInfo is a few MiB. A
 * section over its bound is not read (as if absent).
 */
#define DEBUGINFO_MAX_SMALL_SECTION (1u << 20)
#define DEBUGINFO_MAX_MINIDEBUG (64u << 20) /* compressed, and decompressed */

struct debuginfo_paths {
	const char *debug_root; /* "/usr/lib/debug"; NULL or "": no separate files */
	/*
	 * The process's root as we reach it ("/proc/PID/root"); NULL or "":
	 * ours. Candidates are opened through the gate, resolved inside it.
	 */
	const char *root;
	const char *path;    /* the binary's path as the process sees it; NULL: unknown */
	struct target *gate; /* counts the candidates it refuses; NULL: none counted */
};

/*
 * The most bytes this module reads of section sh (number index) of e, or
 * 0 for a section it does not read. elfsym counts the sections over it.
 */
uint64_t debuginfo_section_bound(Elf *e, size_t index, const GElf_Shdr *sh);

/*
 * Opens the separate debug file of the ELF file e: by build-id, then by
 * .gnu_debuglink with its CRC32 checked. Returns an fd the caller closes,
 * -ENOENT when there is none, or another negative errno.
 */
int debuginfo_open(Elf *e, const struct debuginfo_paths *paths);

/*
 * Decompresses e's .gnu_debugdata into *image (*size bytes), an ELF image
 * the caller frees. Returns 0, -ENOENT when there is no such section,
 * -ENOEXEC when it does not decompress (or liblzma is not linked), or
 * -ENOMEM. Both the section and the image are bounded
 * (DEBUGINFO_MAX_MINIDEBUG) so a hostile file cannot exhaust memory.
 */
int debuginfo_minidebug(Elf *e, void **image, size_t *size);

/* e's GNU build-id into id (up to cap bytes); returns its length, or -ENOENT. */
int debuginfo_build_id(Elf *e, unsigned char *id, size_t cap);

#endif
