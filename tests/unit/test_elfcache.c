/*
 * elfcache: symbol tables kept by file between samples, least recently
 * used dropped first, never one a process record holds.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <limits.h>
#include <unistd.h>
#include <cmocka.h>

#include "symbolizer/elfcache.h"
#include "symbolizer/elfsym.h"

static struct elfcache_key key_of(uint64_t inode, const char *path)
{
	return (struct elfcache_key){ .dev_major = 8, .dev_minor = 1, .inode = inode,
				      .path = path };
}

/* A real table to cache: this test program's own (by its path: the
 * reader refuses symbolic links such as /proc/self/exe). */
static struct elfsym *own_table(void)
{
	struct elfsym *elf = NULL;
	char path[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", path, sizeof(path) - 1);

	assert_true(len > 0);
	path[len] = '\0';
	assert_int_equal(elfsym_open(path, &elf), 0);
	return elf;
}

static bool cached(struct elfcache *c, uint64_t inode, const char *path,
		   const struct elfsym **elf)
{
	struct elfcache_key k = key_of(inode, path);

	return elfcache_get(c, &k, elf);
}

static void test_a_file_is_its_device_and_inode_not_its_path(void **state)
{
	struct elfcache *c = elfcache_new(8, 0);
	struct elfcache_key k = key_of(42, "/usr/lib/libc.so.6");
	struct elfsym *elf = own_table();
	const struct elfsym *got = NULL;
	struct elfcache_stats st;

	(void)state;
	assert_false(cached(c, 42, "/usr/lib/libc.so.6", &got));
	assert_int_equal(elfcache_put(c, &k, elf), 0);
	/* Another path to the same inode (a bind mount, another namespace). */
	assert_true(cached(c, 42, "/proc/1/root/usr/lib/libc.so.6", &got));
	assert_ptr_equal(got, elf);
	/* The same path on another inode (after an upgrade) is another file. */
	assert_false(cached(c, 43, "/usr/lib/libc.so.6", &got));
	/* Without an inode the path is the key. */
	k = key_of(0, "/memfd:jit");
	assert_int_equal(elfcache_put(c, &k, NULL), 0);
	assert_true(cached(c, 0, "/memfd:jit", &got));
	assert_null(got); /* remembered as unreadable */
	assert_false(cached(c, 0, "/memfd:other", &got));
	elfcache_stats(c, &st);
	assert_int_equal(st.hits, 2);
	assert_int_equal(st.misses, 3);
	assert_int_equal(st.cached, 2);
	elfcache_free(c);
}

static void test_the_least_recently_used_table_goes_first(void **state)
{
	struct elfcache *c = elfcache_new(2, 0);
	struct elfcache_key a = key_of(1, "a"), b = key_of(2, "b"), k3 = key_of(3, "c");
	const struct elfsym *got;

	(void)state;
	assert_int_equal(elfcache_put(c, &a, NULL), 0);
	assert_int_equal(elfcache_put(c, &b, NULL), 0);
	assert_true(cached(c, 1, "a", &got)); /* a is now the more recent */
	assert_int_equal(elfcache_drops(c), 0);
	assert_int_equal(elfcache_put(c, &k3, NULL), 0);
	/* A pointer kept by a caller may be stale: the count says so. */
	assert_int_equal(elfcache_drops(c), 1);
	assert_false(cached(c, 2, "b", &got));
	assert_true(cached(c, 1, "a", &got));
	assert_true(cached(c, 3, "c", &got));
	elfcache_free(c);
}

static void test_a_held_table_is_never_dropped(void **state)
{
	struct elfcache *c = elfcache_new(1, 0);
	struct elfcache_key a = key_of(1, "a"), b = key_of(2, "b");
	struct elfsym *elf = own_table();
	const struct elfsym *got = NULL;
	struct elfcache_stats st;

	(void)state;
	assert_int_equal(elfcache_put(c, &a, elf), 0);
	assert_int_equal(elfcache_hold(c, elf), 0);
	assert_int_equal(elfcache_put(c, &b, NULL), 0);
	/* Past max for the held one: both are kept. */
	assert_true(cached(c, 1, "a", &got));
	assert_ptr_equal(got, elf);
	elfcache_stats(c, &st);
	assert_int_equal(st.cached, 2);
	assert_int_equal(st.held, 1);
	elfcache_release(c, elf);
	elfcache_trim(c);
	elfcache_stats(c, &st);
	assert_int_equal(st.cached, 1);
	assert_int_equal(st.held, 0);
	assert_int_equal(elfcache_hold(c, (const struct elfsym *)&st), -ENOENT);
	elfcache_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_file_is_its_device_and_inode_not_its_path),
		cmocka_unit_test(test_the_least_recently_used_table_goes_first),
		cmocka_unit_test(test_a_held_table_is_never_dropped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
