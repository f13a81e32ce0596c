/*
 * ksyms: kernel addresses to kernel function names, from /proc/kallsyms.
 *
 * The table is read once, sorted by address and searched by bisection.
 * kallsyms gives no sizes, so a text symbol ends where the next symbol of
 * any kind starts, at a known end of kernel text (_etext, _einittext), or
 * at the end of its module (from "modules" next to the kallsyms file, as
 * /proc/modules sits next to /proc/kallsyms). An address past all of them
 * is not resolved rather than named after a far-away function.
 */
#ifndef EBPROF_SYMBOLIZER_KSYMS_H
#define EBPROF_SYMBOLIZER_KSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ksyms;

/* What a lookup finds; the strings are the table's. */
struct ksym {
	uint64_t addr;
	const char *name;
	const char *module; /* NULL for vmlinux */
};

/*
 * Reads a kallsyms file ("/proc/kallsyms" or a test's copy) into *out.
 * Returns 0, or a negative errno (-ENOENT, -ENOMEM, -EINVAL for a file
 * with no symbol at all). The caller frees the table with ksyms_free().
 */
int ksyms_load(const char *path, struct ksyms **out);

void ksyms_free(struct ksyms *ksyms);

/*
 * True when every address read as 0: kernel.kptr_restrict hides them from
 * this reader. Nothing resolves then; the caller should warn once and show
 * kernel time as one "[kernel]" frame.
 */
bool ksyms_hidden(const struct ksyms *ksyms);

/* Text symbols kept (not counting the end markers). */
size_t ksyms_count(const struct ksyms *ksyms);

/* The heap the table holds, in bytes. */
size_t ksyms_bytes(const struct ksyms *ksyms);

/*
 * Fills *out with the text symbol that holds addr and returns true, or
 * returns false when none does (before the first symbol, in data, past
 * the end of text, or hidden). On success *offset (if not NULL) is addr
 * minus the symbol's address. The names live as long as the table.
 */
bool ksyms_lookup(const struct ksyms *ksyms, uint64_t addr, struct ksym *out, uint64_t *offset);

#endif
