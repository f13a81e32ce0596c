/* utf8: the strict decoder shared by the SVG, speedscope and identifier writers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "symbolizer/utf8.h"

static size_t decode(const char *s, uint32_t *cp)
{
	*cp = 0xdeadbeef;
	return utf8_decode((const unsigned char *)s, cp);
}

static void test_valid_sequences_decode(void **state)
{
	uint32_t cp;

	(void)state;
	assert_int_equal(decode("A", &cp), 1);
	assert_int_equal(cp, 'A');
	assert_int_equal(decode("\xc3\xa9", &cp), 2); /* é */
	assert_int_equal(cp, 0xe9);
	assert_int_equal(decode("\xe2\x82\xac", &cp), 3); /* € */
	assert_int_equal(cp, 0x20ac);
	assert_int_equal(decode("\xf0\x9f\x94\xa5", &cp), 4); /* U+1F525 */
	assert_int_equal(cp, 0x1f525);
	assert_int_equal(decode("\xf4\x8f\xbf\xbf", &cp), 4); /* the last code point */
	assert_int_equal(cp, 0x10ffff);
}

static void test_malformed_sequences_are_refused(void **state)
{
	static const char *const bad[] = {
		"\x80",		    /* stray continuation byte */
		"\xc0\x80",	    /* overlong NUL */
		"\xc1\xbf",	    /* overlong */
		"\xe0\x80\x80",	    /* overlong */
		"\xed\xa0\x80",	    /* surrogate U+D800 */
		"\xf4\x90\x80\x80", /* above U+10FFFF */
		"\xf8\x88\x80\x80", /* five-byte lead */
		"\xe2\x82",	    /* cut by the end of the string */
		"\xe2\x82" "A",	    /* cut by an ASCII byte */
		"\xff",
	};
	uint32_t cp;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(decode(bad[i], &cp), 0);
		assert_int_equal(cp, 0xdeadbeef);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_sequences_decode),
		cmocka_unit_test(test_malformed_sequences_are_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
