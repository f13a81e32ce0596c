/*
 * intern: dense indices for (string, tag[, pair]) keys in order of first
 * sight, as speedscope's frame list and pprof's tables number them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "render/intern.h"

static int setup(void **state)
{
	*state = intern_new();
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	intern_free(*state);
	return 0;
}

static void test_keys_are_numbered_in_order_of_first_sight(void **state)
{
	struct intern *t = *state;
	uint32_t i;
	int added;

	assert_int_equal(intern_add(t, "main", 1, &i, &added), 0);
	assert_int_equal(i, 0);
	assert_int_equal(added, 1);
	assert_int_equal(intern_add(t, "work", 1, &i, &added), 0);
	assert_int_equal(i, 1);
	assert_int_equal(added, 1);
	/* The same string again is the same index, not a new one. */
	assert_int_equal(intern_add(t, "main", 1, &i, &added), 0);
	assert_int_equal(i, 0);
	assert_int_equal(added, 0);
	/* A copy of the string is the same key: keys compare by content. */
	char copy[] = "work";
	assert_int_equal(intern_add(t, copy, 1, &i, NULL), 0);
	assert_int_equal(i, 1);
	assert_int_equal(intern_count(t), 2);
	assert_string_equal(intern_string(t, 1), "work");
	assert_int_equal(intern_tag(t, 1), 1);
}

static void test_tag_and_pair_are_part_of_the_key(void **state)
{
	struct intern *t = *state;
	uint32_t user, kernel, at1, at2, again;
	uint64_t a, b;

	assert_int_equal(intern_add(t, "read", 1, &user, NULL), 0);
	assert_int_equal(intern_add(t, "read", 2, &kernel, NULL), 0);
	assert_int_not_equal(user, kernel); /* a user and a kernel "read" stay two */
	assert_int_equal(intern_add_pair(t, "read", 1, 7, 0x1000, &at1, NULL), 0);
	assert_int_equal(intern_add_pair(t, "read", 1, 7, 0x2000, &at2, NULL), 0);
	assert_int_not_equal(at1, at2);
	assert_int_not_equal(at1, user); /* (0, 0) is a pair too, and another one */
	assert_int_equal(intern_add_pair(t, "read", 1, 0, 0, &again, NULL), 0);
	assert_int_equal(again, user);
	intern_pair(t, at2, &a, &b);
	assert_int_equal(a, 7);
	assert_int_equal(b, 0x2000);
	assert_int_equal(intern_count(t), 4);
}

static void test_many_keys_keep_their_indices_as_the_table_grows(void **state)
{
	struct intern *t = *state;
	static char names[20000][8];
	uint32_t i;

	for (uint32_t k = 0; k < 20000; k++) {
		snprintf(names[k], sizeof(names[k]), "f%u", k);
		assert_int_equal(intern_add(t, names[k], k % 3, &i, NULL), 0);
		assert_int_equal(i, k);
	}
	for (uint32_t k = 0; k < 20000; k += 997) {
		assert_int_equal(intern_add(t, names[k], k % 3, &i, NULL), 0);
		assert_int_equal(i, k);
		assert_string_equal(intern_string(t, k), names[k]);
	}
	assert_int_equal(intern_count(t), 20000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_keys_are_numbered_in_order_of_first_sight,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_tag_and_pair_are_part_of_the_key, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_many_keys_keep_their_indices_as_the_table_grows, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
