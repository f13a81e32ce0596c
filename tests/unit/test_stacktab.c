/* stacktab: a drain's stacks by id, frames packed end to end. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <stdlib.h>
#include <cmocka.h>

#include "bpf/stacktab.h"

/* Stack i: i % 130 frames, frame j = i * 1000 + j; ids spread like hashes. */
static uint64_t id_of(uint64_t i)
{
	return (i + 1) * 0x9e3779b97f4a7c15ULL;
}

static uint32_t fill(uint64_t i, uint64_t *ips)
{
	uint32_t nr = (uint32_t)(i % 130);

	for (uint32_t j = 0; j < nr; j++)
		ips[j] = i * 1000 + j;
	return nr;
}

static void test_every_stack_comes_back_whole(void **state)
{
	struct stacktab t = { 0 };
	uint64_t ips[130];

	(void)state;
	for (uint64_t i = 0; i < 5000; i++)
		assert_int_equal(stacktab_add(&t, id_of(i), ips, fill(i, ips)), 0);
	assert_int_equal(t.n, 5000);
	for (uint64_t i = 0; i < 5000; i++) {
		const uint64_t *got;
		uint32_t nr;

		assert_true(stacktab_find(&t, id_of(i), &got, &nr));
		assert_int_equal(nr, i % 130);
		for (uint32_t j = 0; j < nr; j++)
			assert_int_equal(got[j], i * 1000 + j);
	}
	stacktab_free(&t);
}

static void test_first_add_of_an_id_wins(void **state)
{
	struct stacktab t = { 0 };
	uint64_t a[2] = { 1, 2 }, b[3] = { 7, 8, 9 };
	const uint64_t *got;
	uint32_t nr;

	(void)state;
	assert_int_equal(stacktab_add(&t, 42, a, 2), 0);
	assert_int_equal(stacktab_add(&t, 42, b, 3), 0);
	assert_int_equal(t.n, 1);
	assert_true(stacktab_find(&t, 42, &got, &nr));
	assert_int_equal(nr, 2);
	assert_int_equal(got[1], 2);
	assert_false(stacktab_find(&t, 43, &got, &nr));
	assert_false(stacktab_find(&t, 0, &got, &nr));
	stacktab_free(&t);
}

static void test_clear_empties_and_gives_back_big_tables(void **state)
{
	struct stacktab t = { 0 };
	uint64_t ips[130];
	const uint64_t *got;
	uint32_t nr;

	(void)state;
	for (uint64_t i = 0; i < 100; i++)
		assert_int_equal(stacktab_add(&t, id_of(i), ips, fill(i, ips)), 0);
	stacktab_clear(&t);
	assert_int_equal(t.n, 0);
	assert_false(stacktab_find(&t, id_of(5), &got, &nr));
	assert_non_null(t.frames); /* small: kept for the next drain */

	/* ~2.6 MiB of frames, then a drain that uses none: the memory goes. */
	for (uint64_t i = 0; i < 5000; i++)
		assert_int_equal(stacktab_add(&t, id_of(i), ips, fill(i, ips)), 0);
	stacktab_clear(&t);
	assert_non_null(t.frames);
	stacktab_clear(&t);
	assert_null(t.frames);
	assert_null(t.slots);
	assert_false(stacktab_find(&t, id_of(5), &got, &nr));
	assert_int_equal(stacktab_add(&t, id_of(5), ips, fill(5, ips)), 0);
	assert_true(stacktab_find(&t, id_of(5), &got, &nr));
	assert_int_equal(nr, 5);
	stacktab_free(&t);
}

/* A 100-frame stack in 4 chunks of 32, in any order, comes back whole; not before. */
static void test_chunks_in_any_order(void **state)
{
	struct stacktab t = { 0 };
	uint64_t ips[100];
	const uint64_t *got;
	static const uint32_t order[] = { 3, 1, 0, 2 };
	uint32_t nr;

	(void)state;
	for (uint64_t i = 0; i < 100; i++)
		ips[i] = 0x400000 + i;
	for (int k = 0; k < 4; k++) {
		uint32_t c = order[k];
		uint64_t chunk[32] = { 0 };

		/* The kernel's last chunk is whole too: frames past nr are garbage. */
		memcpy(chunk, &ips[c * 32], (c == 3 ? 4 : 32) * sizeof(uint64_t));
		assert_false(stacktab_find(&t, 77, &got, &nr));
		assert_int_equal(stacktab_add_chunk(&t, 77, c, 100, chunk, 32), 0);
		/* The same chunk twice, or one from a stack of another length, changes nothing. */
		assert_int_equal(stacktab_add_chunk(&t, 77, c, 100, chunk, 32), 0);
		assert_int_equal(stacktab_add_chunk(&t, 77, c, 99, ips, 32), 0);
	}
	assert_true(stacktab_find(&t, 77, &got, &nr));
	assert_int_equal(nr, 100);
	assert_memory_equal(got, ips, sizeof(ips));
	/* A stack missing a chunk is never found. */
	assert_int_equal(stacktab_add_chunk(&t, 78, 0, 40, ips, 32), 0);
	assert_false(stacktab_find(&t, 78, &got, &nr));
	stacktab_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_stack_comes_back_whole),
		cmocka_unit_test(test_first_add_of_an_id_wins),
		cmocka_unit_test(test_clear_empties_and_gives_back_big_tables),
		cmocka_unit_test(test_chunks_in_any_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
