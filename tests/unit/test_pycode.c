/*
 * pycode tests: the 3.11 location table decoder against the lines
 * CPython itself gives (co_positions()) for a function whose table uses
 * the short, one-line and long forms and goes back up the file; the
 * no-column and no-location forms and malformed tables; and naming a
 * code object laid out as 3.11 lays it out, in this process's own memory,
 * including one replaced under the same address (never named after the
 * new one).
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <linux/types.h>

#include "bpf/ebprof.h"
#include "heap_now.h"
#include "symbolizer/pycode.h"
#include "symbolizer/pyproc.h"

/* from python3.11 3.11.2: sample() below, co_firstlineno 2 */
static const uint8_t sample_table[] = {
	0x80, 0x00, 0xd8, 0x0c, 0x0d, 0x80, 0x45, 0xdd, 0x10, 0x19, 0x98, 0x25,
	0xd1, 0x10, 0x20, 0xd4, 0x10, 0x20, 0xf0, 0x00, 0x0f, 0x05, 0x14, 0xf0,
	0x00, 0x0f, 0x05, 0x14, 0x89, 0x04, 0x88, 0x01, 0x88, 0x31, 0xd8, 0x0b,
	0x0c, 0x88, 0x75, 0x8a, 0x39, 0x88, 0x39, 0xd8, 0x0c, 0x11, 0x90, 0x51,
	0x98, 0x11, 0x91, 0x55, 0x89, 0x4e, 0x88, 0x45, 0x88, 0x45, 0xe0, 0x0c,
	0x11, 0x90, 0x51, 0x89, 0x4a, 0x88, 0x45, 0xf0, 0x14, 0x00, 0x12, 0x17,
	0xd8, 0x11, 0x12, 0xf1, 0x03, 0x01, 0x12, 0x13, 0x88, 0x05, 0x88, 0x05,
	0xe0, 0x0a, 0x0f, 0x90, 0x23, 0x8a, 0x2b, 0x88, 0x2b, 0xd8, 0x08, 0x0d,
	0x90, 0x21, 0x89, 0x0b, 0x88, 0x05, 0xf0, 0x03, 0x00, 0x0b, 0x10, 0x90,
	0x23, 0x8a, 0x2b, 0x88, 0x2b, 0xe0, 0x0b, 0x2d, 0xd0, 0x0b, 0x2d, 0x95,
	0x75, 0x98, 0x55, 0x91, 0x7c, 0x94, 0x7c, 0xd0, 0x0b, 0x2d, 0xd1, 0x0b,
	0x2d, 0xd4, 0x0b, 0x2d, 0xd0, 0x04, 0x2d,
};
static const int sample_lines[] = {
	2, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
	4, 4, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5, 6, 6, 6,
	6, 6, 6, 6, 6, 6, 8, 8, 8, 8, 8, 18, 19, 18, 18, 18,
	18, 20, 20, 20, 20, 20, 20, 21, 21, 21, 21, 21, 20, 20, 20, 20,
	20, 20, 22, 22, 22, 22, 22, 22, 22, 22, 22, 22, 22, 22, 22, 22,
	22, 22, 22, 22, 22, 22, 22, 22, 22, 22, 22,
};
/* forms: [0, 1, 2, 3, 10, 11, 12, 14] */

static void test_line_matches_cpython(void **state)
{
	size_t n = sizeof(sample_lines) / sizeof(sample_lines[0]);

	(void)state;
	for (size_t i = 0; i < n; i++)
		assert_int_equal(pycode_line(sample_table, sizeof(sample_table), 2, (uint32_t)i),
				 sample_lines[i]);
	/* Past the last instruction the table says nothing. */
	assert_int_equal(pycode_line(sample_table, sizeof(sample_table), 2, (uint32_t)n), -1);
}

static void test_line_no_column_and_no_location(void **state)
{
	/* 13 (no column) over 2 units, +3; 15 (none) over 1; 13 over 1, -2. */
	static const uint8_t t[] = { 0x80 | 13 << 3 | 1, 0x06, 0x80 | 15 << 3, 0x80 | 13 << 3, 0x05 };

	(void)state;
	assert_int_equal(pycode_line(t, sizeof(t), 10, 0), 13);
	assert_int_equal(pycode_line(t, sizeof(t), 10, 1), 13);
	assert_int_equal(pycode_line(t, sizeof(t), 10, 2), -1);
	assert_int_equal(pycode_line(t, sizeof(t), 10, 3), 11);
	assert_int_equal(pycode_line(t, sizeof(t), 10, 4), -1);
}

static void test_line_malformed(void **state)
{
	static const uint8_t no_lead[] = { 0x06 };
	static const uint8_t cut_varint[] = { 0x80 | 13 << 3, 0x45 };
	static const uint8_t cut_columns[] = { 0x80 | 11 << 3, 0x01 };

	(void)state;
	assert_int_equal(pycode_line(no_lead, sizeof(no_lead), 1, 0), -1);
	assert_int_equal(pycode_line(cut_varint, sizeof(cut_varint), 1, 0), -1);
	assert_int_equal(pycode_line(cut_columns, sizeof(cut_columns), 1, 0), -1);
	assert_int_equal(pycode_line(NULL, 0, 1, 0), -1);
}

/* Objects laid out as 3.11's row says, in our own memory. */
struct fake_str {
	uint8_t b[48 + 64];
};

static void fake_ascii(struct fake_str *s, const char *text, const struct pyproc_layout *l)
{
	uint64_t len = strlen(text);
	uint32_t state = 1u << 5 | 1u << 6 | 1u << 2; /* compact, ascii, 1 byte a character */

	memset(s, 0, sizeof(*s));
	memcpy(s->b + l->str_length, &len, 8);
	memcpy(s->b + l->str_state, &state, 4);
	memcpy(s->b + l->str_ascii_data, text, len + 1);
}

struct fake_code {
	uint8_t b[256];
};

static void put32(struct fake_code *c, uint16_t off, uint32_t v)
{
	memcpy(c->b + off, &v, 4);
}

static void put64(struct fake_code *c, uint16_t off, uint64_t v)
{
	memcpy(c->b + off, &v, 8);
}

static uint32_t fake_checksum(const struct fake_code *c, const struct pyproc_layout *l)
{
	uint32_t f[4];
	uint64_t q, t;

	memcpy(&f[0], c->b + l->code_flags, 4);
	memcpy(&f[1], c->b + l->code_argcount, 4);
	memcpy(&f[2], c->b + l->code_kwonly, 4);
	memcpy(&f[3], c->b + l->code_firstlineno, 4);
	memcpy(&q, c->b + l->code_qualname, 8);
	memcpy(&t, c->b + l->code_linetable, 8);
	return ebprof_py_checksum(f[0], f[1], f[2], f[3], q, t);
}

/* Lays out code as a code object of line 2 with these names and location
 * table, and names it (pycode_name's result). */
static int name_fake_code(struct pycode_cache *c, struct fake_code *code,
			  const struct pyproc_layout *l, const struct fake_str *qualname,
			  const struct fake_str *filename, const uint8_t *table, char *name,
			  size_t size)
{
	put32(code, l->code_firstlineno, 2);
	put64(code, l->code_qualname, (uint64_t)(uintptr_t)qualname);
	put64(code, l->code_filename, (uint64_t)(uintptr_t)filename);
	put64(code, l->code_linetable, (uint64_t)(uintptr_t)table);
	return pycode_name(c, (uint32_t)getpid(), 1, EBPROF_PY_FRAME | (uint64_t)(uintptr_t)code,
			   (uint64_t)fake_checksum(code, l) << 32, name, size);
}

static void test_name_and_replaced_code(void **state)
{
	const struct pyproc_layout *l = pyproc_layout(0);
	static struct fake_str qualname, filename, other;
	static struct fake_code code;
	static uint8_t bytes[32 + sizeof(sample_table)];
	uint64_t size = sizeof(sample_table), first, second;
	struct pycode_cache *c = pycode_cache_new(4, 0);
	struct pycode_stats st;
	char name[256];

	(void)state;
	assert_non_null(l);
	assert_int_equal(l->major, 3);
	assert_int_equal(l->minor, 11);
	assert_non_null(c);
	fake_ascii(&qualname, "Worker.sample", l);
	fake_ascii(&filename, "/srv/app/sample.py", l);
	fake_ascii(&other, "other_function", l);
	memcpy(bytes + l->bytes_size, &size, 8);
	memcpy(bytes + l->bytes_data, sample_table, sizeof(sample_table));
	put32(&code, l->code_firstlineno, 2);
	put32(&code, l->code_argcount, 2);
	put64(&code, l->code_qualname, (uint64_t)(uintptr_t)&qualname);
	put64(&code, l->code_filename, (uint64_t)(uintptr_t)&filename);
	put64(&code, l->code_linetable, (uint64_t)(uintptr_t)bytes);
	first = EBPROF_PY_FRAME | (uint64_t)(uintptr_t)&code;
	/* Instruction 44 is on line 19 (sample_lines). */
	second = (uint64_t)fake_checksum(&code, l) << 32 | 44;
	assert_int_equal(pycode_name(c, (uint32_t)getpid(), 1, first, second, name, sizeof(name)), 0);
	assert_string_equal(name, "Worker.sample (sample.py:19)");
	/* Again: from the cache, another line. */
	second = (second & ~0xffffffffull) | 1;
	assert_int_equal(pycode_name(c, (uint32_t)getpid(), 1, first, second, name, sizeof(name)), 0);
	assert_string_equal(name, "Worker.sample (sample.py:3)");
	pycode_stats(c, &st);
	assert_int_equal(st.hits, 1);
	assert_int_equal(st.misses, 1);

	/* The code object is freed and another takes its memory: the sample's
	 * checksum no longer matches what is there, and it is not named. */
	put64(&code, l->code_qualname, (uint64_t)(uintptr_t)&other);
	put32(&code, l->code_firstlineno, 7);
	second = (uint64_t)0x1234567 << 32 | 44;
	assert_int_equal(pycode_name(c, (uint32_t)getpid(), 1, first, second, name, sizeof(name)),
			 -ESTALE);
	/* A sample of the new one is named after the new one. */
	second = (uint64_t)fake_checksum(&code, l) << 32 | 44;
	assert_int_equal(pycode_name(c, (uint32_t)getpid(), 1, first, second, name, sizeof(name)), 0);
	assert_string_equal(name, "other_function (sample.py:24)");
	/* An unknown layout, and an address that reads nothing. */
	assert_int_equal(pycode_name(c, (uint32_t)getpid(), 1, first | 5ull << 48, second, name,
				     sizeof(name)), -EPROTONOSUPPORT);
	assert_int_equal(pycode_name(c, (uint32_t)getpid(), 1, EBPROF_PY_FRAME | 0x10, second, name,
				     sizeof(name)), -EFAULT);
	pycode_stats(c, &st);
	assert_int_equal(st.stale, 1);
	assert_int_equal(st.faults, 1);
	pycode_cache_free(c);
}

static void test_cache_bound(void **state)
{
	const struct pyproc_layout *l = pyproc_layout(0);
	static struct fake_str qualname, filename;
	static struct fake_code codes[10];
	static uint8_t bytes[32 + sizeof(sample_table)];
	uint64_t size = sizeof(sample_table);
	struct pycode_cache *c = pycode_cache_new(4, 0);
	struct pycode_stats st;
	char name[256];

	(void)state;
	fake_ascii(&qualname, "f", l);
	fake_ascii(&filename, "f.py", l);
	memcpy(bytes + l->bytes_size, &size, 8);
	memcpy(bytes + l->bytes_data, sample_table, sizeof(sample_table));
	for (int i = 0; i < 10; i++) {
		put32(&codes[i], l->code_firstlineno, 2);
		put64(&codes[i], l->code_qualname, (uint64_t)(uintptr_t)&qualname);
		put64(&codes[i], l->code_filename, (uint64_t)(uintptr_t)&filename);
		put64(&codes[i], l->code_linetable, (uint64_t)(uintptr_t)bytes);
		assert_int_equal(pycode_name(c, (uint32_t)getpid(), 1,
					     EBPROF_PY_FRAME | (uint64_t)(uintptr_t)&codes[i],
					     (uint64_t)fake_checksum(&codes[i], l) << 32, name,
					     sizeof(name)), 0);
		assert_string_equal(name, "f (f.py:2)");
	}
	pycode_stats(c, &st);
	assert_true(st.entries <= 4);
	assert_int_equal(st.flushes, 2);
	pycode_cache_free(c);
}

/*
 * The byte bound: location tables of 4 KiB each fill a cache of 10 KiB
 * after three code objects, however many entries it may hold; it is
 * emptied (counted) and the bytes it reports stay within the bound plus
 * one entry and the slots.
 */
static void test_cache_byte_bound(void **state)
{
	const struct pyproc_layout *l = pyproc_layout(0);
	static struct fake_str qualname, filename;
	static struct fake_code codes[10];
	static uint8_t bytes[32 + 4096];
	uint64_t size = 4096;
	struct pycode_cache *c = pycode_cache_new(64, 10 << 10);
	struct pycode_stats st;
	char name[256];

	(void)state;
	assert_non_null(c);
	fake_ascii(&qualname, "g", l);
	fake_ascii(&filename, "g.py", l);
	memcpy(bytes + l->bytes_size, &size, 8);
	memcpy(bytes + l->bytes_data, sample_table, sizeof(sample_table));
	for (int i = 0; i < 10; i++) {
		assert_int_equal(name_fake_code(c, &codes[i], l, &qualname, &filename, bytes, name,
						sizeof(name)), 0);
		assert_string_equal(name, "g (g.py:2)");
		pycode_stats(c, &st);
		assert_true(st.entries <= 3);
	}
	/* 10 objects, 3 a fill: emptied after the 3rd, 6th and 9th. */
	assert_int_equal(st.flushes, 3);
	assert_true(st.bytes > 4096);
	assert_true(st.bytes <= (10 << 10) + 4096 + 16 + 128 * 64 * 2);
	pycode_cache_free(c);
}

/*
 * The heap the cache holds is what it reports (bytes-cache_python, and
 * what its byte bound counts): names are read into room for 4 bytes a
 * character, which must not stay allocated for ASCII names. Checked with
 * the allocator's own count, from before the cache is made to after 8
 * code objects with 50-character names are in it; the cache's struct is
 * the only thing not reported.
 */
static void test_cache_holds_what_it_reports(void **state)
{
	const struct pyproc_layout *l = pyproc_layout(0);
	static struct fake_str qualname, filename;
	static struct fake_code codes[8];
	static uint8_t bytes[32 + sizeof(sample_table)];
	uint64_t size = sizeof(sample_table);
	size_t before = heap_now(), held;
	struct pycode_cache *c = pycode_cache_new(64, 0);
	struct pycode_stats st;
	char name[256];

	(void)state;
	assert_non_null(c);
	fake_ascii(&qualname, "Worker.a_method_name_of_fifty_characters_or_so__", l);
	fake_ascii(&filename, "/srv/app/a_module_path_of_about_fifty_chars__.py", l);
	memcpy(bytes + l->bytes_size, &size, 8);
	memcpy(bytes + l->bytes_data, sample_table, sizeof(sample_table));
	for (int i = 0; i < 8; i++)
		assert_int_equal(name_fake_code(c, &codes[i], l, &qualname, &filename, bytes, name,
						sizeof(name)), 0);
	pycode_stats(c, &st);
	assert_int_equal(st.entries, 8);
	held = heap_now() - before;
	print_message("heap held %zu bytes, reported %" PRIu64 "\n", held, st.bytes);
	assert_true(held >= st.bytes);
	assert_true(held <= st.bytes + 256);
	pycode_cache_free(c);
}

/*
 * A host with no Python holds no slot table: it is made at the first
 * frame named, and only then reported.
 */
static void test_no_table_before_the_first_frame(void **state)
{
	const struct pyproc_layout *l = pyproc_layout(0);
	static struct fake_str qualname, filename;
	static struct fake_code code;
	static uint8_t bytes[32 + sizeof(sample_table)];
	uint64_t size = sizeof(sample_table);
	size_t before = heap_now();
	struct pycode_cache *c = pycode_cache_new(0, 0);
	struct pycode_stats st;
	char name[256];

	(void)state;
	assert_non_null(c);
	pycode_stats(c, &st);
	assert_int_equal(st.bytes, 0);
	assert_true(heap_now() - before < 1024);
	fake_ascii(&qualname, "f", l);
	fake_ascii(&filename, "m.py", l);
	memcpy(bytes + l->bytes_size, &size, 8);
	memcpy(bytes + l->bytes_data, sample_table, sizeof(sample_table));
	assert_int_equal(name_fake_code(c, &code, l, &qualname, &filename, bytes, name, sizeof(name)),
			 0);
	pycode_stats(c, &st);
	assert_true(st.bytes > (1 << 20)); /* the default table: 32,768 slots */
	assert_true(heap_now() - before >= st.bytes);
	pycode_cache_free(c);
}

/*
 * A code object that cannot be read (its file name points nowhere) is
 * read once a drain, however many frames name it; and read again at the
 * next drain, so that a good read then is not hidden. Failed reads take
 * room like the others: the bound holds.
 */
static void test_failed_read_cached_for_the_drain(void **state)
{
	const struct pyproc_layout *l = pyproc_layout(0);
	static struct fake_str qualname, filename;
	static struct fake_code code, bad[10];
	static uint8_t bytes[32 + sizeof(sample_table)];
	uint64_t size = sizeof(sample_table), first, second;
	struct pycode_cache *c = pycode_cache_new(4, 0);
	struct pycode_stats st;
	char name[256];

	(void)state;
	assert_non_null(c);
	fake_ascii(&qualname, "Late.ready", l);
	fake_ascii(&filename, "late.py", l);
	memcpy(bytes + l->bytes_size, &size, 8);
	memcpy(bytes + l->bytes_data, sample_table, sizeof(sample_table));
	put32(&code, l->code_firstlineno, 2);
	put64(&code, l->code_qualname, (uint64_t)(uintptr_t)&qualname);
	put64(&code, l->code_filename, 0x10); /* not in the checksum: same frame, unreadable */
	put64(&code, l->code_linetable, (uint64_t)(uintptr_t)bytes);
	first = EBPROF_PY_FRAME | (uint64_t)(uintptr_t)&code;
	second = (uint64_t)fake_checksum(&code, l) << 32 | 44;
	for (int i = 0; i < 5; i++)
		assert_int_equal(pycode_name(c, (uint32_t)getpid(), 1, first, second, name,
					     sizeof(name)), -EFAULT);
	pycode_stats(c, &st);
	assert_int_equal(st.misses, 1);
	assert_int_equal(st.negative_hits, 4);
	assert_int_equal(st.faults, 5); /* every frame refused is counted */
	/* Readable now; this drain still says no, the next one reads it. */
	put64(&code, l->code_filename, (uint64_t)(uintptr_t)&filename);
	assert_int_equal(pycode_name(c, (uint32_t)getpid(), 1, first, second, name, sizeof(name)),
			 -EFAULT);
	pycode_end_drain(c);
	assert_int_equal(pycode_name(c, (uint32_t)getpid(), 1, first, second, name, sizeof(name)), 0);
	assert_string_equal(name, "Late.ready (late.py:19)");
	assert_int_equal(pycode_name(c, (uint32_t)getpid(), 1, first, second, name, sizeof(name)), 0);
	pycode_stats(c, &st);
	assert_int_equal(st.misses, 2);
	assert_int_equal(st.hits, 1);
	/* Ten unreadable code objects in a cache of four. */
	for (int i = 0; i < 10; i++) {
		put64(&bad[i], l->code_qualname, 0x20);
		assert_int_equal(pycode_name(c, (uint32_t)getpid(), 1,
					     EBPROF_PY_FRAME | (uint64_t)(uintptr_t)&bad[i],
					     (uint64_t)fake_checksum(&bad[i], l) << 32, name,
					     sizeof(name)), -EFAULT);
	}
	pycode_stats(c, &st);
	assert_true(st.entries <= 4);
	assert_true(st.flushes >= 2);
	pycode_cache_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_line_matches_cpython),
		cmocka_unit_test(test_line_no_column_and_no_location),
		cmocka_unit_test(test_line_malformed),
		cmocka_unit_test(test_name_and_replaced_code),
		cmocka_unit_test(test_cache_bound),
		cmocka_unit_test(test_cache_byte_bound),
		cmocka_unit_test(test_cache_holds_what_it_reports),
		cmocka_unit_test(test_no_table_before_the_first_frame),
		cmocka_unit_test(test_failed_read_cached_for_the_drain),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
