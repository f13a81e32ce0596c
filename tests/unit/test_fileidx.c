/*
 * fileidx: the unwinder's index of tables by file identity. Every key
 * filed is found across the bucket doublings, keys differing in one field
 * only are told apart, a value may be filed under several keys, a key
 * filed again moves to its new value, and removing a key removes only the
 * entry that holds the given value.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "symbolizer/fileidx.h"

#define N_FILES 5000

static void test_every_key_found_through_growth(void **state)
{
	struct fileidx *x = fileidx_new();
	static int values[N_FILES];

	(void)state;
	assert_non_null(x);
	/* Neighbouring inodes on two devices, as a busy host's files are. */
	for (int i = 0; i < N_FILES; i++) {
		struct fileidx_key k = { 8, (uint32_t)(i % 2), 1000 + (uint64_t)i };

		assert_int_equal(fileidx_add(x, &k, &values[i]), 0);
	}
	assert_int_equal(fileidx_count(x), N_FILES);
	for (int i = 0; i < N_FILES; i++) {
		struct fileidx_key k = { 8, (uint32_t)(i % 2), 1000 + (uint64_t)i };
		struct fileidx_key other_dev = { 8, (uint32_t)(1 - i % 2), 1000 + (uint64_t)i };
		struct fileidx_key other_major = { 9, (uint32_t)(i % 2), 1000 + (uint64_t)i };

		assert_ptr_equal(fileidx_find(x, &k), &values[i]);
		assert_null(fileidx_find(x, &other_dev));
		assert_null(fileidx_find(x, &other_major));
	}
	fileidx_free(x);
}

static void test_several_keys_one_value_and_refiling(void **state)
{
	struct fileidx *x = fileidx_new();
	struct fileidx_key libc = { 8, 1, 42 }, container_libc = { 0, 77, 42 }, vdso = { 0, 0, 0 };
	int first, second;

	(void)state;
	assert_non_null(x);
	assert_null(fileidx_find(x, &vdso));
	assert_int_equal(fileidx_add(x, &vdso, &first), 0);
	assert_ptr_equal(fileidx_find(x, &vdso), &first); /* the all-zero key is a key */
	assert_int_equal(fileidx_add(x, &libc, &first), 0);
	assert_int_equal(fileidx_add(x, &container_libc, &second), 0);
	/* The same build at two paths: the second table merged into the first. */
	assert_int_equal(fileidx_add(x, &container_libc, &first), 0);
	assert_int_equal(fileidx_count(x), 3);
	assert_ptr_equal(fileidx_find(x, &container_libc), &first);
	/* Dropping the merged table removes nothing of the one it went into. */
	fileidx_remove(x, &container_libc, &second);
	assert_ptr_equal(fileidx_find(x, &container_libc), &first);
	assert_int_equal(fileidx_count(x), 3);
	/* Dropping that one removes each of its keys. */
	fileidx_remove(x, &libc, &first);
	fileidx_remove(x, &container_libc, &first);
	assert_null(fileidx_find(x, &libc));
	assert_null(fileidx_find(x, &container_libc));
	assert_ptr_equal(fileidx_find(x, &vdso), &first);
	assert_int_equal(fileidx_count(x), 1);
	fileidx_remove(x, &libc, &first); /* not there: nothing happens */
	assert_int_equal(fileidx_count(x), 1);
	fileidx_free(x);
}

static void test_removal_keeps_the_rest_of_a_chain(void **state)
{
	struct fileidx *x = fileidx_new();
	static int values[N_FILES];

	(void)state;
	assert_non_null(x);
	for (int i = 0; i < N_FILES; i++) {
		struct fileidx_key k = { 259, 3, (uint64_t)i * 4096 };

		assert_int_equal(fileidx_add(x, &k, &values[i]), 0);
	}
	for (int i = 0; i < N_FILES; i += 2) {
		struct fileidx_key k = { 259, 3, (uint64_t)i * 4096 };

		fileidx_remove(x, &k, &values[i]);
	}
	assert_int_equal(fileidx_count(x), N_FILES / 2);
	for (int i = 0; i < N_FILES; i++) {
		struct fileidx_key k = { 259, 3, (uint64_t)i * 4096 };

		if (i % 2)
			assert_ptr_equal(fileidx_find(x, &k), &values[i]);
		else
			assert_null(fileidx_find(x, &k));
	}
	fileidx_free(x);
	fileidx_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_key_found_through_growth),
		cmocka_unit_test(test_several_keys_one_value_and_refiling),
		cmocka_unit_test(test_removal_keeps_the_rest_of_a_chain),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
