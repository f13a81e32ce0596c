/*
 * forkmaps tests: the maps kept for a parent's forks are found under the
 * parent's PID and start time only, for FORKMAPS_MAX_AGE_NS after their
 * read; a later put replaces the parent's entry or the older of its PID's
 * slots; every reference handed out stays valid after the entry goes.
 * Maps come from a file written here, each list told apart by its path.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "render/forkmaps.h"

#define SEC 1000000000ull

/* A list of one executable mapping of /bin/prog<n>. */
static struct procmaps *maps_named(int n)
{
	char path[] = "/tmp/test_forkmaps.XXXXXX";
	struct procmaps *maps = NULL;
	int fd = mkstemp(path);
	FILE *f;

	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fprintf(f, "00400000-00401000 r-xp 00000000 08:01 %d /bin/prog%d\n", 100 + n, n);
	fclose(f);
	assert_int_equal(procmaps_load(path, &maps), 0);
	unlink(path);
	assert_int_equal(procmaps_count(maps), 1);
	return maps;
}

static int prog_of(const struct procmaps *maps)
{
	int n = -1;

	assert_non_null(maps);
	assert_int_equal(sscanf(procmaps_at(maps, 0)->path, "/bin/prog%d", &n), 1);
	return n;
}

static void test_found_by_parent_until_too_old(void **state)
{
	struct forkmaps *f = forkmaps_new();
	struct procmaps *maps = maps_named(1), *got;
	uint64_t read_at = 0;

	(void)state;
	assert_non_null(f);
	assert_null(forkmaps_get(f, 42, 7, 10 * SEC, &read_at));
	forkmaps_put(f, 42, 7, maps, 10 * SEC);
	procmaps_free(maps); /* the entry holds its own reference */
	got = forkmaps_get(f, 42, 7, 10 * SEC + FORKMAPS_MAX_AGE_NS, &read_at);
	assert_int_equal(prog_of(got), 1);
	assert_int_equal(read_at, 10 * SEC);
	procmaps_free(got);
	/* Another start time is another process under a reused PID. */
	assert_null(forkmaps_get(f, 42, 8, 10 * SEC, &read_at));
	assert_null(forkmaps_get(f, 43, 7, 10 * SEC, &read_at));
	/* Too old, or read after "now" (a clock that went back): not lent. */
	assert_null(forkmaps_get(f, 42, 7, 10 * SEC + FORKMAPS_MAX_AGE_NS + 1, &read_at));
	assert_null(forkmaps_get(f, 42, 7, 10 * SEC - 1, &read_at));
	assert_true(forkmaps_bytes(f) > 0);
	forkmaps_free(f);
}

static void test_put_replaces_the_parents_entry(void **state)
{
	struct forkmaps *f = forkmaps_new();
	struct procmaps *a = maps_named(1), *b = maps_named(2), *held, *got;
	uint64_t read_at;

	(void)state;
	forkmaps_put(f, 42, 7, a, 1 * SEC);
	held = forkmaps_get(f, 42, 7, 1 * SEC, &read_at);
	forkmaps_put(f, 42, 7, b, 2 * SEC);
	got = forkmaps_get(f, 42, 7, 2 * SEC, &read_at);
	assert_int_equal(prog_of(got), 2);
	assert_int_equal(read_at, 2 * SEC);
	/* The first list is out of the cache but still its borrower's. */
	assert_int_equal(prog_of(held), 1);
	procmaps_free(held);
	procmaps_free(got);
	procmaps_free(a);
	procmaps_free(b);
	forkmaps_free(f);
}

/*
 * Parents whose PIDs share slots: a third takes the older of the two, and
 * the newer stays. PIDs are found by trying, not by knowing the hash.
 */
static void test_third_parent_takes_the_older_slot(void **state)
{
	struct forkmaps *f = forkmaps_new();
	struct procmaps *maps[3] = { maps_named(0), maps_named(1), maps_named(2) }, *got;
	uint32_t pid[3] = { 1000, 0, 0 };
	uint64_t read_at;
	int found = 1;

	(void)state;
	/* Same slots: a PID that, put after 1000, pushes 1000 out only once both are full. */
	forkmaps_put(f, pid[0], 1, maps[0], 1 * SEC);
	for (uint32_t p = 1001; p < 1000000 && found < 3; p++) {
		struct forkmaps *probe = forkmaps_new();
		struct procmaps *keep;

		/* p shares 1000's pair if putting p and another of the pair evicts 1000. */
		forkmaps_put(probe, 1000, 1, maps[0], 1 * SEC);
		forkmaps_put(probe, p, 1, maps[0], 2 * SEC);
		forkmaps_put(probe, p, 2, maps[0], 3 * SEC);
		keep = forkmaps_get(probe, 1000, 1, 3 * SEC, &read_at);
		if (!keep)
			pid[found++] = p;
		procmaps_free(keep);
		forkmaps_free(probe);
	}
	assert_int_equal(found, 3);
	forkmaps_put(f, pid[1], 1, maps[1], 2 * SEC);
	forkmaps_put(f, pid[2], 1, maps[2], 3 * SEC);
	assert_null(forkmaps_get(f, pid[0], 1, 3 * SEC, &read_at));
	got = forkmaps_get(f, pid[1], 1, 3 * SEC, &read_at);
	assert_int_equal(prog_of(got), 1);
	procmaps_free(got);
	got = forkmaps_get(f, pid[2], 1, 3 * SEC, &read_at);
	assert_int_equal(prog_of(got), 2);
	procmaps_free(got);
	for (int i = 0; i < 3; i++)
		procmaps_free(maps[i]);
	forkmaps_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_found_by_parent_until_too_old),
	    cmocka_unit_test(test_put_replaces_the_parents_entry),
	    cmocka_unit_test(test_third_parent_takes_the_older_slot),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
