/*
 * unwtab: one file's unwind rows (cfi_*) in the compact form the BPF
 * unwinder reads, and the rule array every table shares.
 *
 * A table is a flat array of 32-bit words keyed by file offset (layout in
 * bpf/ebprof.h): a page index over the 64 KiB pages the file's code spans,
 * then one word per row, 16 bits of offset within its page and 16 bits of
 * rule index. The rules themselves (how to find the CFA, rbp and the
 * return address) are deduplicated across every table into one shared
 * array, so a row costs 4 bytes and a table has no padding: it is as long
 * as its rows, whatever their number (no per-file cap).
 *
 * The same words are what user space unwinds a copied stack with
 * (unwtab_lookup), so the BPF unwinder and user space agree by
 * construction.
 */
#ifndef EBPROF_SYMBOLIZER_UNWTAB_H
#define EBPROF_SYMBOLIZER_UNWTAB_H

#include <stddef.h>
#include <stdint.h>

#include <linux/types.h>

#include "bpf/ebprof.h"

struct cfi;
struct unwtab_rules;

struct unwtab {
	uint32_t *words; /* owned */
	size_t n_words;
	uint32_t n_rows;
	uint32_t n_pages;
	uint32_t unsupported; /* rows whose rule the unwinder cannot follow */
	uint32_t rules_full;  /* of those, rows whose rule found no room in the rule array */
};

/*
 * The shared rule array, up to max rules (2 to EBPROF_UNW_MAX_RULES; 0:
 * that). Rule 0 is "no row", rule 1 "unsupported". Returns NULL when out
 * of memory.
 */
struct unwtab_rules *unwtab_rules_new(uint32_t max);
void unwtab_rules_free(struct unwtab_rules *rules);

/* The rules so far, index 0 included; owned by rules, valid until the next build. */
const struct ebprof_unw_rule *unwtab_rules_array(const struct unwtab_rules *rules, uint32_t *n);

/*
 * Builds the table of cfi's rows, registering their rules in rules (a rule
 * with no room left becomes the unsupported rule, and is counted). The
 * caller frees the table with unwtab_free(). Returns 0, or -ENOMEM.
 */
int unwtab_build(const struct cfi *cfi, struct unwtab_rules *rules, struct unwtab **out);

void unwtab_free(struct unwtab *t);

/*
 * The rule index at file offset offset of the table's words (n of them),
 * or 0 (no row). The words may be the table's own or a copy (a BPF map).
 */
uint32_t unwtab_find(const uint32_t *words, size_t n, uint64_t offset);

/* The table's size in bytes. */
static inline size_t unwtab_bytes(const struct unwtab *t)
{
	return t->n_words * sizeof(uint32_t);
}

#endif
