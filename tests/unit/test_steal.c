/* steal: the hypervisor's share of the CPUs, read from /proc/stat's text. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "bpf/steal.h"

static void test_the_total_line_eighth_value(void **state)
{
	uint64_t t = 1;

	(void)state;
	assert_int_equal(steal_parse("cpu  2588062 574 345967 12243554 7947 0 7071 19008 0 0\n"
				     "cpu0 1165438 319 167038 6259789 1019 0 3087 9165 0 0\n"
				     "cpu1 1422624 254 178929 5983765 6927 0 3984 9842 0 0\n"
				     "intr 1 2 3\n",
				     &t),
			 0);
	assert_int_equal(t, 19008); /* the "cpu " line, not a CPU's own */
}

static void test_the_total_line_found_after_others(void **state)
{
	uint64_t t = 1;

	(void)state;
	/* Not first (no kernel does this, but the parser looks for the line). */
	assert_int_equal(steal_parse("cpu0 1 2 3 4 5 6 7 99\ncpu  1 2 3 4 5 6 7 42\n", &t), 0);
	assert_int_equal(t, 42);
	/* The last value of the file, no newline after it. */
	assert_int_equal(steal_parse("cpu  1 2 3 4 5 6 7 8", &t), 0);
	assert_int_equal(t, 8);
}

static void test_a_kernel_without_steal_says_zero(void **state)
{
	uint64_t t = 1;

	(void)state;
	assert_int_equal(steal_parse("cpu  1 2 3 4 5 6 7\ncpu0 1 2 3 4 5 6 7\n", &t), 0);
	assert_int_equal(t, 0);
}

static void test_malformed_text_is_refused(void **state)
{
	uint64_t t = 7;

	(void)state;
	assert_int_equal(steal_parse("", &t), -EINVAL);
	assert_int_equal(steal_parse("intr 1 2\ncpu0 1 2 3 4 5 6 7 8\n", &t), -EINVAL);
	assert_int_equal(steal_parse("cpu  1 2 3\n", &t), -EINVAL);  /* too short */
	assert_int_equal(steal_parse("cpu  1 2 3 4 5 6 7 x\n", &t), -EINVAL);
	assert_int_equal(steal_parse("cpu  1 2 3 4 5 6 7 -8\n", &t), -EINVAL);
	assert_int_equal(steal_parse("cpu  1 2 3 4 5 6 7 8z\n", &t), -EINVAL);
	assert_int_equal(steal_parse("cpu  1 2 3 4 5 6 7 99999999999999999999999\n", &t),
			 -EINVAL); /* over 64 bits */
	assert_int_equal(t, 7); /* untouched on refusal */
}

static void test_this_machine_reads(void **state)
{
	uint64_t a = 0, b = 0;

	(void)state;
	assert_int_equal(steal_read_ns(&a), 0);
	assert_int_equal(steal_read_ns(&b), 0);
	assert_true(b >= a); /* it only grows */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_the_total_line_eighth_value),
		cmocka_unit_test(test_the_total_line_found_after_others),
		cmocka_unit_test(test_a_kernel_without_steal_says_zero),
		cmocka_unit_test(test_malformed_text_is_refused),
		cmocka_unit_test(test_this_machine_reads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
