/*
 * unwtab tests: a table answers, at every byte of every function, the
 * rule cfi gives at the same address (through the file offset), for the
 * cfifix fixture and for the system's libc; rules are shared between
 * tables; pages that a function runs into start with its rule; and a full
 * rule array gives unsupported rows, counted, never wrong ones.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "symbolizer/cfi.h"
#include "symbolizer/unwtab.h"

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"

static void fixture_path(const char *name, char *out, size_t size)
{
	char exe[2048];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	assert_true(len > 0);
	exe[len] = '\0';
	*strrchr(exe, '/') = '\0';
	snprintf(out, size, "%s/../fixtures/%s", exe, name);
}

/* The BPF rule says what cfi's rule says. */
static void assert_same_rule(const struct cfi_rule *c, const struct ebprof_unw_rule *r,
			     uint64_t vaddr)
{
	if (!c) {
		if (r->cfa_kind != EBPROF_CFA_NONE)
			fail_msg("at %#lx: cfi has no row, the table has kind %u", (unsigned long)vaddr,
				 r->cfa_kind);
		return;
	}
	if (c->cfa_kind != r->cfa_kind || (c->cfa_kind != CFI_CFA_UNSUPPORTED &&
					   (c->cfa_off != r->cfa_off || c->cfa_reg != r->cfa_reg ||
					    c->rbp_kind != r->rbp_kind || c->ra_kind != r->ra_kind ||
					    c->rbp_off != r->rbp_off || c->ra_off != r->ra_off ||
					    c->cfa_add != r->cfa_add)))
		fail_msg("at %#lx: cfi kind %u reg %u off %ld, table kind %u reg %u off %d",
			 (unsigned long)vaddr, c->cfa_kind, c->cfa_reg, (long)c->cfa_off,
			 r->cfa_kind, r->cfa_reg, r->cfa_off);
	assert_int_equal(!!(c->flags & CFI_SIGNAL), !!(r->flags & EBPROF_RULE_SIGNAL));
}

/* Every byte of every function, and the byte after each. */
static uint64_t check_all(const char *path, struct unwtab_rules *rules, struct unwtab **out)
{
	const struct cfi_function *fn;
	const struct ebprof_unw_rule *array;
	struct unwtab *t;
	struct cfi *cfi;
	uint64_t checked = 0;
	uint32_t n_rules;
	size_t n_fn;

	assert_int_equal(cfi_open(path, NULL, &cfi), 0);
	assert_int_equal(unwtab_build(cfi, rules, &t), 0);
	array = unwtab_rules_array(rules, &n_rules);
	fn = cfi_functions(cfi, &n_fn);
	assert_true(n_fn > 0);
	for (size_t i = 0; i < n_fn; i++) {
		for (uint64_t v = fn[i].start; v <= fn[i].end; v++) {
			uint64_t off;
			uint32_t index;

			if (cfi_vaddr_to_offset(cfi, v, &off))
				continue;
			index = unwtab_find(t->words, t->n_words, off);
			assert_true(index < n_rules);
			assert_same_rule(cfi_lookup(cfi, v), &array[index], v);
			checked++;
		}
	}
	cfi_free(cfi);
	*out = t;
	return checked;
}

static void test_fixture_table_matches_cfi_everywhere(void **state)
{
	struct unwtab_rules *rules = unwtab_rules_new(0);
	char path[4096];
	struct unwtab *t;

	(void)state;
	assert_non_null(rules);
	fixture_path("libcfifix.so", path, sizeof(path));
	assert_true(check_all(path, rules, &t) > 50);
	assert_true(t->unsupported >= 2); /* cfix_unsupported, cfix_big */
	assert_int_equal(t->n_words, EBPROF_UNW_HEADER_WORDS + t->n_pages + 1 + t->n_rows);
	unwtab_free(t);
	unwtab_rules_free(rules);
}

static void test_libc_table_matches_cfi_and_costs_4_bytes_a_row(void **state)
{
	struct unwtab_rules *rules = unwtab_rules_new(0);
	struct unwtab *t;
	uint32_t n_rules;

	(void)state;
	assert_true(check_all(LIBC, rules, &t) > 1000000);
	unwtab_rules_array(rules, &n_rules);
	/* libc spans ~25 pages: the index is noise next to its ~20k rows. */
	assert_true(t->n_rows > 10000);
	assert_true(unwtab_bytes(t) < (size_t)t->n_rows * 4 * 101 / 100);
	assert_true(n_rules < 2000);
	unwtab_free(t);
	unwtab_rules_free(rules);
}

/* A second table of the same file adds no rule: rules are shared. */
static void test_rules_are_shared(void **state)
{
	struct unwtab_rules *rules = unwtab_rules_new(0);
	struct unwtab *a, *b;
	struct cfi *cfi;
	uint32_t before, after;

	(void)state;
	assert_int_equal(cfi_open(LIBC, NULL, &cfi), 0);
	assert_int_equal(unwtab_build(cfi, rules, &a), 0);
	unwtab_rules_array(rules, &before);
	assert_int_equal(unwtab_build(cfi, rules, &b), 0);
	unwtab_rules_array(rules, &after);
	assert_int_equal(before, after);
	assert_int_equal(a->n_words, b->n_words);
	assert_memory_equal(a->words, b->words, unwtab_bytes(a));
	unwtab_free(a);
	unwtab_free(b);
	cfi_free(cfi);
	unwtab_rules_free(rules);
}

/*
 * The rule set's slots grow while a table is built (cfix_many alone has
 * 600 rules, more than they first hold): every rule is still found, so a
 * second table of the same file adds none.
 */
static void test_rules_are_found_after_the_slots_grow(void **state)
{
	struct unwtab_rules *rules = unwtab_rules_new(0);
	char path[4096];
	struct unwtab *a, *b;
	struct cfi *cfi;
	uint32_t before, after;

	(void)state;
	fixture_path("libcfifix.so", path, sizeof(path));
	assert_int_equal(cfi_open(path, NULL, &cfi), 0);
	assert_int_equal(unwtab_build(cfi, rules, &a), 0);
	unwtab_rules_array(rules, &before);
	assert_true(before > 600);
	assert_int_equal(a->rules_full, 0);
	assert_int_equal(unwtab_build(cfi, rules, &b), 0);
	unwtab_rules_array(rules, &after);
	assert_int_equal(before, after);
	assert_memory_equal(a->words, b->words, unwtab_bytes(a));
	unwtab_free(a);
	unwtab_free(b);
	cfi_free(cfi);
	unwtab_rules_free(rules);
}

/* With room for 10 rules, the rest are unsupported (counted), never another rule. */
static void test_full_rule_array_gives_unsupported_rows(void **state)
{
	struct unwtab_rules *rules = unwtab_rules_new(10);
	const struct ebprof_unw_rule *array;
	struct unwtab *t;
	struct cfi *cfi;
	uint32_t n_rules;
	size_t n_rows;
	const struct cfi_row *rows;

	(void)state;
	assert_int_equal(cfi_open(LIBC, NULL, &cfi), 0);
	assert_int_equal(unwtab_build(cfi, rules, &t), 0);
	array = unwtab_rules_array(rules, &n_rules);
	assert_true(n_rules <= 10);
	assert_true(t->rules_full > 0);
	assert_true(t->unsupported >= t->rules_full);
	rows = cfi_rows(cfi, &n_rows);
	for (size_t i = 0; i < n_rows; i++) {
		uint64_t off;
		uint32_t index;

		if (cfi_vaddr_to_offset(cfi, rows[i].pc, &off))
			continue;
		index = unwtab_find(t->words, t->n_words, off);
		if (array[index].cfa_kind != EBPROF_CFA_UNSUPPORTED)
			assert_same_rule(cfi_lookup(cfi, rows[i].pc), &array[index], rows[i].pc);
	}
	unwtab_free(t);
	cfi_free(cfi);
	unwtab_rules_free(rules);
}

/* Offsets outside the table, and truncated words, find no row. */
static void test_lookups_outside_find_nothing(void **state)
{
	struct unwtab_rules *rules = unwtab_rules_new(0);
	struct unwtab *t;
	struct cfi *cfi;

	(void)state;
	assert_int_equal(cfi_open(LIBC, NULL, &cfi), 0);
	assert_int_equal(unwtab_build(cfi, rules, &t), 0);
	assert_int_equal(unwtab_find(t->words, t->n_words, 0), 0);
	assert_int_equal(unwtab_find(t->words, t->n_words, UINT64_MAX), 0);
	assert_int_equal(unwtab_find(t->words, 3, 0x30000), 0);
	assert_int_equal(unwtab_find(t->words, 1, 0x30000), 0);
	unwtab_free(t);
	cfi_free(cfi);
	unwtab_rules_free(rules);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture_table_matches_cfi_everywhere),
		cmocka_unit_test(test_libc_table_matches_cfi_and_costs_4_bytes_a_row),
		cmocka_unit_test(test_rules_are_shared),
	    cmocka_unit_test(test_rules_are_found_after_the_slots_grow),
		cmocka_unit_test(test_full_rule_array_gives_unsupported_rows),
		cmocka_unit_test(test_lookups_outside_find_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
