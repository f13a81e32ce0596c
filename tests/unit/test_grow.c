/* grow: the one doubling growth every module's arrays go through. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "bpf/grow.h"

static void test_growth_doubles_and_keeps_the_elements(void **state)
{
	uint32_t *v = NULL;
	size_t cap = 0;

	(void)state;
	assert_int_equal(GROW_ARRAY(&v, &cap, 1, 4), 0);
	assert_int_equal(cap, 4); /* the first capacity */
	for (uint32_t i = 0; i < 4; i++)
		v[i] = i;
	assert_int_equal(GROW_ARRAY(&v, &cap, 4, 4), 0);
	assert_int_equal(cap, 4); /* room already: nothing moves */
	assert_int_equal(GROW_ARRAY(&v, &cap, 5, 4), 0);
	assert_int_equal(cap, 8);
	assert_int_equal(GROW_ARRAY(&v, &cap, 33, 4), 0);
	assert_int_equal(cap, 64); /* doubled until it holds 33 */
	for (uint32_t i = 0; i < 4; i++)
		assert_int_equal(v[i], i);
	free(v);
}

static void test_an_overflowing_size_is_refused_and_changes_nothing(void **state)
{
	uint64_t *v = NULL;
	size_t cap = 0;

	(void)state;
	assert_int_equal(GROW_ARRAY(&v, &cap, 2, 2), 0);
	v[1] = 42;
	assert_int_equal(GROW_ARRAY(&v, &cap, SIZE_MAX / 4, 2), -ENOMEM);
	assert_int_equal(GROW_ARRAY(&v, &cap, SIZE_MAX, 2), -ENOMEM);
	assert_int_equal(cap, 2);
	assert_int_equal(v[1], 42);
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_growth_doubles_and_keeps_the_elements),
		cmocka_unit_test(test_an_overflowing_size_is_refused_and_changes_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
