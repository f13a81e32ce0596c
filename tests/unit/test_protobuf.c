/*
 * protobuf: the bytes pprof consumers parse. Varints of every size,
 * strings, packed repeated fields and nested messages must come back out
 * of the reader exactly, and truncated input must be refused, not read
 * past.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "render/protobuf.h"

static void test_varints_match_the_wire_format(void **state)
{
	struct pb_buf b;
	/* field 1 varint 150 is "08 96 01" in the protobuf encoding guide */
	static const uint8_t want[] = { 0x08, 0x96, 0x01 };

	(void)state;
	pb_buf_init(&b);
	pb_put_varint(&b, 1, 150);
	assert_int_equal(pb_buf_error(&b), 0);
	assert_int_equal(b.len, sizeof(want));
	assert_memory_equal(b.bytes, want, sizeof(want));
	pb_buf_free(&b);
}

static void test_fields_round_trip(void **state)
{
	static const uint64_t values[] = { 0, 1, 127, 128, 16383, 16384, UINT32_MAX,
					   UINT64_MAX };
	struct pb_buf b, sub;
	struct pb_reader r;
	struct pb_field f;
	size_t pos = 0, i = 0;
	uint64_t v;

	(void)state;
	pb_buf_init(&b);
	pb_buf_init(&sub);
	pb_put_packed(&b, 2, values, 8);
	pb_put_string(&b, 6, "burn_seventy");
	pb_put_varint(&sub, 1, 42);
	pb_put_message(&b, 4, &sub);
	pb_put_varint(&b, 536870911, 7); /* the largest field number */
	assert_int_equal(pb_buf_error(&b), 0);

	pb_reader_init(&r, b.bytes, b.len);
	assert_int_equal(pb_next(&r, &f), 1);
	assert_int_equal(f.number, 2);
	while (pb_field_varint_at(&f, &pos, &v) == 1)
		assert_true(v == values[i++]);
	assert_int_equal(i, 8);
	assert_int_equal(pb_next(&r, &f), 1);
	assert_int_equal(f.number, 6);
	assert_int_equal(f.len, strlen("burn_seventy"));
	assert_memory_equal(f.bytes, "burn_seventy", f.len);
	assert_int_equal(pb_next(&r, &f), 1);
	assert_int_equal(f.number, 4);
	{
		struct pb_reader inner;
		struct pb_field g;

		pb_reader_init(&inner, f.bytes, f.len);
		assert_int_equal(pb_next(&inner, &g), 1);
		assert_int_equal(g.number, 1);
		assert_int_equal(g.varint, 42);
		assert_int_equal(pb_next(&inner, &g), 0);
	}
	assert_int_equal(pb_next(&r, &f), 1);
	assert_int_equal(f.number, 536870911);
	assert_int_equal(f.varint, 7);
	assert_int_equal(pb_next(&r, &f), 0);
	pb_buf_free(&b);
	pb_buf_free(&sub);
}

static void test_reader_refuses_truncated_and_malformed_input(void **state)
{
	static const uint8_t cut_string[] = { 0x32, 0x05, 'a', 'b' };	/* 5 bytes promised */
	static const uint8_t cut_varint[] = { 0x08, 0x96 };		/* no last byte */
	static const uint8_t field_zero[] = { 0x00, 0x01 };		/* field number 0 */
	static const uint8_t group[] = { 0x0b };			/* wire type 3 */
	const uint8_t *bad[] = { cut_string, cut_varint, field_zero, group };
	size_t len[] = { sizeof(cut_string), sizeof(cut_varint), sizeof(field_zero),
			 sizeof(group) };
	struct pb_reader r;
	struct pb_field f;

	(void)state;
	for (size_t i = 0; i < 4; i++) {
		pb_reader_init(&r, bad[i], len[i]);
		assert_int_equal(pb_next(&r, &f), -EBADMSG);
	}
}

static void test_a_string_is_written_whole_at_any_length(void **state)
{
	static char big[100000];
	struct pb_buf b;
	struct pb_reader r;
	struct pb_field f;

	(void)state;
	memset(big, 'x', sizeof(big) - 1);
	pb_buf_init(&b);
	pb_put_string(&b, 6, big);
	pb_reader_init(&r, b.bytes, b.len);
	assert_int_equal(pb_next(&r, &f), 1);
	assert_int_equal(f.len, sizeof(big) - 1);
	assert_int_equal(b.len, 1 + 3 + sizeof(big) - 1); /* tag, 3-byte length, bytes */
	pb_buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_varints_match_the_wire_format),
		cmocka_unit_test(test_fields_round_trip),
		cmocka_unit_test(test_reader_refuses_truncated_and_malformed_input),
		cmocka_unit_test(test_a_string_is_written_whole_at_any_length),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
