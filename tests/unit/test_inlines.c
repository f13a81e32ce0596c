/*
 * inlines: the chain of functions inlined at an address, from DWARF, and
 * its caches. The fixture is build/fixtures/inlinefix-pie (built -O1 -g
 * -fno-inline, which still inlines its always_inline helpers): hot_loop()
 * holds mix_block() inlined, which holds mix_round() inlined.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "symbolizer/elfsym.h"
#include "symbolizer/inlines.h"

struct fixture {
	char path[4096];
	struct elfsym *elf;
	const unsigned char *id;
	size_t id_len;
	uint64_t hot_start, hot_end; /* hot_loop's [start, end) */
	int opens;		     /* calls of the open callback */
};

static int open_fixture(void *arg)
{
	struct fixture *f = arg;
	int fd;

	f->opens++;
	fd = open(f->path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static int open_none(void *arg)
{
	((struct fixture *)arg)->opens++;
	return -ENOENT;
}

static int setup(void **state)
{
	static struct fixture f;
	char exe[2048];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const struct elfsym_segment *seg = NULL;

	memset(&f, 0, sizeof(f));
	if (len <= 0)
		return -1;
	exe[len] = '\0';
	*strrchr(exe, '/') = '\0';
	snprintf(f.path, sizeof(f.path), "%s/../fixtures/inlinefix-pie", exe);
	if (elfsym_open(f.path, &f.elf))
		return -1;
	f.id = elfsym_build_id(f.elf, &f.id_len);
	for (size_t i = 0; i < elfsym_segment_count(f.elf); i++)
		if (elfsym_segment_at(f.elf, i)->flags & 1) /* PF_X */
			seg = elfsym_segment_at(f.elf, i);
	for (uint64_t a = seg ? seg->vaddr : 0; seg && a < seg->vaddr + seg->memsz; a++) {
		const struct elfsym_symbol *s = elfsym_lookup(f.elf, a, NULL);

		if (s && !strcmp(s->name, "hot_loop")) {
			f.hot_start = s->value;
			f.hot_end = s->value + s->size;
			break;
		}
	}
	if (!f.id || !f.hot_end)
		return -1;
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	elfsym_free(((struct fixture *)*state)->elf);
	return 0;
}

/*
 * hot_loop's inner loop is mix_round's code inside mix_block's, in that
 * order; its first byte (the loop's set-up) is its own.
 */
static void test_chain_is_outermost_first(void **state)
{
	struct fixture *f = *state;
	struct inlines *in = inlines_new(NULL);
	size_t both = 0, n;
	const char *const *names;

	assert_non_null(in);
	f->opens = 0;
	for (uint64_t a = f->hot_start; a < f->hot_end; a++) {
		assert_int_equal(inlines_lookup(in, f->id, f->id_len, a, open_fixture, f, &names, &n), 0);
		if (a == f->hot_start)
			assert_int_equal(n, 0);
		if (n == 2 && !strcmp(names[0], "mix_block") && !strcmp(names[1], "mix_round"))
			both++;
		if (n)
			assert_string_equal(names[0], "mix_block");
	}
	assert_true(both >= 16); /* the inner loop's instructions, at -O1 */
	assert_int_equal(f->opens, 1); /* DWARF opened once for the file */
	inlines_free(in);
}

/* A second look-up of an address comes from the cache; the bound holds. */
static void test_cache_hits_and_bound(void **state)
{
	struct fixture *f = *state;
	struct inlines *in = inlines_new(&(struct inlines_config){ .chain_bytes = 40000 });
	struct inlines_stats st;
	const char *const *names;
	size_t n;

	assert_non_null(in);
	for (int pass = 0; pass < 2; pass++)
		for (uint64_t a = f->hot_start; a < f->hot_start + 8; a++)
			assert_int_equal(inlines_lookup(in, f->id, f->id_len, a, open_fixture, f,
							&names, &n), 0);
	inlines_stats(in, &st);
	assert_int_equal(st.misses, 8);
	assert_int_equal(st.hits, 8);
	assert_int_equal(st.files_dwarf, 1);
	assert_true(st.dwarf_bytes > 0);
	for (uint64_t a = f->hot_start; a < f->hot_end; a++)
		assert_int_equal(inlines_lookup(in, f->id, f->id_len, a, open_fixture, f, &names, &n),
				 0);
	inlines_stats(in, &st);
	assert_true(st.flushes > 0);
	assert_true(st.chain_bytes <= 40000);
	inlines_free(in);
}

/* A file without DWARF is asked for once, then costs nothing. */
static void test_no_dwarf_asked_once(void **state)
{
	struct fixture *f = *state;
	struct inlines *in = inlines_new(NULL);
	struct inlines_stats st;
	const char *const *names;
	size_t n = 1;

	assert_non_null(in);
	f->opens = 0;
	for (uint64_t a = f->hot_start; a < f->hot_end; a++) {
		assert_int_equal(inlines_lookup(in, f->id, f->id_len, a, open_none, f, &names, &n), 0);
		assert_int_equal(n, 0);
	}
	assert_int_equal(f->opens, 1);
	inlines_stats(in, &st);
	assert_int_equal(st.files_none, 1);
	assert_int_equal(st.misses, 0);
	inlines_free(in);
}

/* A DWARF bound smaller than the file's debug sections: skipped, counted. */
static void test_too_big_is_skipped(void **state)
{
	struct fixture *f = *state;
	struct inlines *in = inlines_new(&(struct inlines_config){ .dwarf_bytes = 16 });
	struct inlines_stats st;
	const char *const *names;
	size_t n = 1;

	assert_non_null(in);
	assert_int_equal(inlines_lookup(in, f->id, f->id_len, f->hot_start + 4, open_fixture, f,
					&names, &n), 0);
	assert_int_equal(n, 0);
	inlines_stats(in, &st);
	assert_int_equal(st.too_big, 1);
	assert_int_equal(st.dwarf_bytes, 0);
	inlines_free(in);
}

/* Files with DWARF open at once are bounded; a closed one reopens when asked. */
static void test_open_files_bounded(void **state)
{
	struct fixture *f = *state;
	struct inlines *in = inlines_new(NULL);
	struct inlines_stats st;
	const char *const *names;
	unsigned char id[20];
	uint64_t one;
	size_t n;

	assert_non_null(in);
	f->opens = 0;
	memset(id, 0, sizeof(id));
	for (int i = 0; i < INLINES_MAX_OPEN + 4; i++) {
		id[0] = (unsigned char)i; /* one file under many build-ids */
		assert_int_equal(inlines_lookup(in, id, sizeof(id), f->hot_start + 1, open_fixture, f,
						&names, &n), 0);
	}
	inlines_stats(in, &st);
	one = st.dwarf_bytes / INLINES_MAX_OPEN;
	assert_true(one > 0);
	assert_int_equal(st.dwarf_bytes, one * INLINES_MAX_OPEN);
	assert_int_equal(st.files_dwarf, INLINES_MAX_OPEN + 4);
	id[0] = 0; /* closed since: asked again at an address not cached */
	assert_int_equal(inlines_lookup(in, id, sizeof(id), f->hot_start + 2, open_fixture, f,
					&names, &n), 0);
	assert_int_equal(f->opens, INLINES_MAX_OPEN + 5);
	inlines_free(in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chain_is_outermost_first),
		cmocka_unit_test(test_cache_hits_and_bound),
		cmocka_unit_test(test_no_dwarf_asked_once),
		cmocka_unit_test(test_too_big_is_skipped),
		cmocka_unit_test(test_open_files_bounded),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
