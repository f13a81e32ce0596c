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

struct ksym {
	uint64_t addr;
	const char *name;   /* owned by the table */
	const char *module; /* owned by the table; NULL for vmlinux */
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

/*
 * The text symbol that holds addr, or NULL when none does (before the
 * first symbol, in data, past the end of text, or hidden). On success
 * *offset (if not NULL) is addr minus the symbol's address. The returned
 * pointer is owned by the table and lives as long as it.
 */
const struct ksym *ksyms_lookup(const struct ksyms *ksyms, uint64_t addr, uint64_t *offset);

#endif
