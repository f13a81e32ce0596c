/*
 * unwtab: cfi rows to the BPF unwind table layout (see unwtab.h and
 * bpf/ebprof.h).
 *
 * Rows come in ELF virtual addresses; the table is keyed by file offset,
 * which is what a sampled pc gives through its mapping, so each row goes
 * through the executable segment that holds it. Rules are narrowed to
 * the BPF rule's fields (offsets of 32 and 16 bits): one that does not
 * fit becomes the unsupported rule, never a wrong one. The rule array is
 * a hash set of 16-byte rules with open addressing; a system needs a few
 * thousand (research/unwinding.md: about 300 per large library).
 */
#include "symbolizer/unwtab.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "symbolizer/cfi.h"

#define PAGE_SIZE_OFFSETS (1ull << EBPROF_UNW_PAGE_SHIFT)

_Static_assert(sizeof(struct ebprof_unw_rule) == 16, "a rule is 16 bytes in the BPF array");
_Static_assert(EBPROF_CFA_REG == CFI_CFA_REG && EBPROF_CFA_DEREF == CFI_CFA_DEREF &&
		       EBPROF_CFA_PLT == CFI_CFA_PLT &&
		       EBPROF_CFA_UNSUPPORTED == CFI_CFA_UNSUPPORTED,
	       "CFA kinds mirror cfi's");
_Static_assert(EBPROF_REG_AT_CFA == CFI_AT_CFA && EBPROF_REG_IN_REG == CFI_IN_REG &&
		       EBPROF_REG_UNSUPPORTED == CFI_REG_UNSUPPORTED,
	       "register kinds mirror cfi's");

struct unwtab_rules {
	struct ebprof_unw_rule *rules;
	uint32_t n, max;
	uint32_t *slots; /* rule index + 1; 0: empty */
	uint32_t n_slots; /* a power of two, at least twice n; grows up to twice max */
	uint32_t max_slots;
};

/* Slots at first, for one large library's rules (about 300): they double at half full. */
#define RULES_FIRST_SLOTS 1024

/* A row while building: a file offset and its rule's index. */
struct offset_row {
	uint64_t offset;
	uint32_t rule;
};

static const struct ebprof_unw_rule unsupported_rule = { .cfa_kind = EBPROF_CFA_UNSUPPORTED };

static int64_t rules_index(struct unwtab_rules *rules, const struct ebprof_unw_rule *r);

static uint32_t rule_hash(const struct ebprof_unw_rule *r)
{
	uint64_t a, b;

	memcpy(&a, r, 8);
	memcpy(&b, (const char *)r + 8, 8);
	a ^= b * 0x9e3779b97f4a7c15ull;
	a *= 0xff51afd7ed558ccdull;
	return (uint32_t)(a ^ (a >> 32));
}

struct unwtab_rules *unwtab_rules_new(uint32_t max)
{
	struct unwtab_rules *rules = calloc(1, sizeof(*rules));

	if (!rules)
		return NULL;
	rules->max = max && max < EBPROF_UNW_MAX_RULES ? max : EBPROF_UNW_MAX_RULES;
	if (rules->max < 2)
		rules->max = 2;
	rules->max_slots = 1;
	while (rules->max_slots < 2 * rules->max)
		rules->max_slots *= 2;
	rules->n_slots = rules->max_slots < RULES_FIRST_SLOTS ? rules->max_slots : RULES_FIRST_SLOTS;
	rules->rules = calloc(rules->max, sizeof(*rules->rules));
	rules->slots = calloc(rules->n_slots, sizeof(*rules->slots));
	if (!rules->rules || !rules->slots) {
		unwtab_rules_free(rules);
		return NULL;
	}
	rules->n = 1; /* rule 0: no row (all zero: EBPROF_CFA_NONE) */
	/* Rule 1: unsupported, there for the rows that find the array full. */
	if (rules_index(rules, &unsupported_rule) != 1) {
		unwtab_rules_free(rules);
		return NULL;
	}
	return rules;
}

void unwtab_rules_free(struct unwtab_rules *rules)
{
	if (!rules)
		return;
	free(rules->rules);
	free(rules->slots);
	free(rules);
}

const struct ebprof_unw_rule *unwtab_rules_array(const struct unwtab_rules *rules, uint32_t *n)
{
	*n = rules->n;
	return rules->rules;
}

/* Doubles the slots and places every rule again; false if memory is short. */
static bool rules_grow(struct unwtab_rules *rules)
{
	uint32_t n = rules->n_slots * 2, mask = n - 1;
	uint32_t *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return false;
	for (uint32_t k = 1; k < rules->n; k++) { /* rule 0 has no slot */
		uint32_t i = rule_hash(&rules->rules[k]) & mask;

		while (slots[i])
			i = (i + 1) & mask;
		slots[i] = k + 1;
	}
	free(rules->slots);
	rules->slots = slots;
	rules->n_slots = n;
	return true;
}

/* The index of rule r, added if new; 0 only for the no-row rule; -1 when full. */
static int64_t rules_index(struct unwtab_rules *rules, const struct ebprof_unw_rule *r)
{
	uint32_t mask = rules->n_slots - 1, i;

	if (r->cfa_kind == EBPROF_CFA_NONE)
		return 0;
	for (i = rule_hash(r) & mask; rules->slots[i]; i = (i + 1) & mask)
		if (!memcmp(&rules->rules[rules->slots[i] - 1], r, sizeof(*r)))
			return rules->slots[i] - 1;
	if (rules->n >= rules->max)
		return -1;
	/* Half full: more slots (the probe above found r absent, so place it anew). */
	if ((uint64_t)(rules->n + 1) * 2 > rules->n_slots && rules->n_slots < rules->max_slots) {
		if (!rules_grow(rules))
			return -1;
		mask = rules->n_slots - 1;
		for (i = rule_hash(r) & mask; rules->slots[i]; i = (i + 1) & mask)
			;
	}
	rules->rules[rules->n] = *r;
	rules->slots[i] = rules->n + 1;
	return rules->n++;
}

static bool fits(int64_t v, int64_t lo, int64_t hi)
{
	return v >= lo && v <= hi;
}

/* cfi's exact rule in the BPF rule's fields; the unsupported rule when it does not fit. */
static struct ebprof_unw_rule narrow(const struct cfi_rule *c)
{
	struct ebprof_unw_rule r = {
		.cfa_kind = c->cfa_kind,
		.cfa_reg = c->cfa_reg,
		.rbp_kind = c->rbp_kind,
		.rbp_reg = c->rbp_reg,
		.ra_kind = c->ra_kind,
		.ra_reg = c->ra_reg,
		.flags = (c->flags & CFI_SIGNAL) ? EBPROF_RULE_SIGNAL : 0,
		.cfa_add = (int8_t)c->cfa_add,
		.cfa_off = (int32_t)c->cfa_off,
		.rbp_off = (int16_t)c->rbp_off,
		.ra_off = (int16_t)c->ra_off,
	};

	if (c->cfa_kind == CFI_CFA_NONE)
		return (struct ebprof_unw_rule){ .cfa_kind = EBPROF_CFA_NONE };
	if (!fits(c->cfa_add, INT8_MIN, INT8_MAX) || !fits(c->cfa_off, INT32_MIN, INT32_MAX) ||
	    !fits(c->rbp_off, INT16_MIN, INT16_MAX) || !fits(c->ra_off, INT16_MIN, INT16_MAX))
		return unsupported_rule;
	return r;
}

static bool rule_unsupported(const struct ebprof_unw_rule *r)
{
	return r->cfa_kind == EBPROF_CFA_UNSUPPORTED || r->rbp_kind == EBPROF_REG_UNSUPPORTED ||
	       r->ra_kind == EBPROF_REG_UNSUPPORTED;
}

/* cfi's rows by file offset, with their rule indexes; consecutive equal rules merged. */
static int offset_rows(const struct cfi *cfi, struct unwtab_rules *rules, struct unwtab *t,
		       struct offset_row **out, size_t *n_out)
{
	size_t n_rows, n = 0;
	const struct cfi_row *rows = cfi_rows(cfi, &n_rows);
	struct offset_row *o = malloc((n_rows ? n_rows : 1) * sizeof(*o));

	if (!o)
		return -ENOMEM;
	for (size_t i = 0; i < n_rows; i++) {
		struct ebprof_unw_rule r = narrow(&rows[i].rule);
		uint64_t offset;
		int64_t index;

		if (cfi_vaddr_to_offset(cfi, rows[i].pc, &offset))
			continue; /* not in the file's code: no sample can land there */
		index = rules_index(rules, &r);
		if (index < 0) {
			t->rules_full++;
			t->unsupported++;
			index = 1; /* the unsupported rule, always there */
		} else if (rule_unsupported(&r)) {
			t->unsupported++;
		}
		if (n && o[n - 1].offset >= offset)
			continue; /* two segments mapping one offset: keep the first */
		if (n && o[n - 1].rule == (uint32_t)index)
			continue;
		o[n++] = (struct offset_row){ offset, (uint32_t)index };
	}
	*out = o;
	*n_out = n;
	return 0;
}

/*
 * Lays the rows out in pages. Every page from the first row's to the last
 * one's gets an index entry; a page whose first row is not at its offset
 * 0 gets one there, with the rule that runs into it.
 */
static int lay_out(struct unwtab *t, const struct offset_row *o, size_t n)
{
	uint64_t first_page, last_page, n_pages;
	size_t max_words, row = 0, at;
	uint32_t carried = 0, *w;

	if (!n) {
		t->words = calloc(EBPROF_UNW_HEADER_WORDS + 1, sizeof(*t->words));
		t->n_words = EBPROF_UNW_HEADER_WORDS + 1;
		return t->words ? 0 : -ENOMEM;
	}
	first_page = o[0].offset >> EBPROF_UNW_PAGE_SHIFT;
	last_page = o[n - 1].offset >> EBPROF_UNW_PAGE_SHIFT;
	n_pages = last_page - first_page + 1;
	if (last_page > UINT32_MAX || n + n_pages > UINT32_MAX / 2)
		return -EFBIG;
	max_words = EBPROF_UNW_HEADER_WORDS + (n_pages + 1) + n + n_pages;
	w = malloc(max_words * sizeof(*w));
	if (!w)
		return -ENOMEM;
	w[0] = (uint32_t)n_pages;
	w[1] = (uint32_t)first_page;
	at = EBPROF_UNW_HEADER_WORDS + n_pages + 1;
	for (uint64_t p = 0; p < n_pages; p++) {
		uint64_t page_start = (first_page + p) << EBPROF_UNW_PAGE_SHIFT;
		size_t first_row = at - (EBPROF_UNW_HEADER_WORDS + n_pages + 1);

		w[EBPROF_UNW_HEADER_WORDS + p] = (uint32_t)first_row;
		if ((row >= n || o[row].offset != page_start) && carried)
			w[at++] = carried; /* offset 0 of the page, the rule running into it */
		for (; row < n && o[row].offset < page_start + PAGE_SIZE_OFFSETS; row++) {
			w[at++] = (uint32_t)(o[row].offset - page_start) << 16 | o[row].rule;
			carried = o[row].rule;
		}
	}
	t->n_rows = (uint32_t)(at - (EBPROF_UNW_HEADER_WORDS + n_pages + 1));
	w[EBPROF_UNW_HEADER_WORDS + n_pages] = t->n_rows;
	t->n_pages = (uint32_t)n_pages;
	t->n_words = at;
	t->words = realloc(w, at * sizeof(*w));
	if (!t->words)
		t->words = w; /* shrinking failed: keep the bigger block */
	return 0;
}

int unwtab_build(const struct cfi *cfi, struct unwtab_rules *rules, struct unwtab **out)
{
	struct offset_row *o = NULL;
	struct unwtab *t;
	size_t n;
	int err;

	*out = NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	err = offset_rows(cfi, rules, t, &o, &n);
	if (!err)
		err = lay_out(t, o, n);
	free(o);
	if (err) {
		unwtab_free(t);
		return err;
	}
	*out = t;
	return 0;
}

void unwtab_free(struct unwtab *t)
{
	if (!t)
		return;
	free(t->words);
	free(t);
}

uint32_t unwtab_find(const uint32_t *words, size_t n, uint64_t offset)
{
	uint64_t page = offset >> EBPROF_UNW_PAGE_SHIFT, low = offset & (PAGE_SIZE_OFFSETS - 1);
	size_t rows_at, lo, hi;
	uint32_t n_pages;

	if (n < EBPROF_UNW_HEADER_WORDS)
		return 0;
	n_pages = words[0];
	if (page < words[1] || page - words[1] >= n_pages ||
	    n < EBPROF_UNW_HEADER_WORDS + (size_t)n_pages + 1)
		return 0;
	page -= words[1];
	rows_at = EBPROF_UNW_HEADER_WORDS + n_pages + 1;
	lo = words[EBPROF_UNW_HEADER_WORDS + page];
	hi = words[EBPROF_UNW_HEADER_WORDS + page + 1];
	if (hi > n - rows_at || lo >= hi)
		return 0;
	/* The last row of the page at or before low. */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if ((words[rows_at + mid] >> 16) <= low)
			lo = mid;
		else
			hi = mid;
	}
	if ((words[rows_at + lo] >> 16) > low)
		return 0;
	return words[rows_at + lo] & 0xffff;
}
