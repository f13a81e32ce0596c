/*
 * dbgfetch: the queue and the negative cache of debuginfod fetches,
 * without the thread or the library (no_thread): fetches are completed by
 * hand, and the clock is the test's.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <cmocka.h>

#include "symbolizer/dbgfetch.h"

static time_t test_clock(void *arg)
{
	return *(time_t *)arg;
}

static const unsigned char ID_A[20] = { 0xaa, 1, 2, 3 };
static const unsigned char ID_B[20] = { 0xbb, 1, 2, 3 };

static struct dbgfetch *new_fetch(time_t *now)
{
	struct dbgfetch_config c = { .retry_s = 600, .now = test_clock, .now_arg = now,
				     .no_thread = 1 };
	struct dbgfetch *f = NULL;

	assert_int_equal(dbgfetch_new(&c, &f), 0);
	return f;
}

static void test_a_new_id_is_queued_once_and_then_ready(void **state)
{
	time_t now = 1000;
	struct dbgfetch *f = new_fetch(&now);
	struct dbgfetch_stats st;
	const char *path = NULL;

	(void)state;
	assert_int_equal(dbgfetch_get(f, ID_A, 20, &path), DBGFETCH_PENDING);
	assert_int_equal(dbgfetch_get(f, ID_A, 20, &path), DBGFETCH_PENDING);
	dbgfetch_stats(f, &st);
	assert_int_equal(st.pending, 1);
	assert_int_equal(dbgfetch_complete_one(f, 0, "/cache/a/debuginfo"), 0);
	assert_int_equal(dbgfetch_complete_one(f, 0, "/nothing"), -ENOENT);
	assert_int_equal(dbgfetch_get(f, ID_A, 20, &path), DBGFETCH_READY);
	assert_string_equal(path, "/cache/a/debuginfo");
	dbgfetch_stats(f, &st);
	assert_int_equal(st.fetched, 1);
	assert_int_equal(st.pending, 0);
	dbgfetch_free(f);
}

static void test_a_miss_is_not_asked_again_until_retry(void **state)
{
	time_t now = 1000;
	struct dbgfetch *f = new_fetch(&now);
	struct dbgfetch_stats st;
	const char *path = NULL;

	(void)state;
	assert_int_equal(dbgfetch_get(f, ID_A, 20, &path), DBGFETCH_PENDING);
	assert_int_equal(dbgfetch_get(f, ID_B, 20, &path), DBGFETCH_PENDING);
	assert_int_equal(dbgfetch_complete_one(f, -ENOENT, NULL), 0);	 /* A: 404 */
	assert_int_equal(dbgfetch_complete_one(f, -ETIMEDOUT, NULL), 0); /* B: down */
	dbgfetch_stats(f, &st);
	assert_int_equal(st.not_found, 1);
	assert_int_equal(st.failed, 1);
	now += 599;
	assert_int_equal(dbgfetch_get(f, ID_A, 20, &path), DBGFETCH_MISSING);
	assert_int_equal(dbgfetch_get(f, ID_B, 20, &path), DBGFETCH_MISSING);
	dbgfetch_stats(f, &st);
	assert_int_equal(st.pending, 0);
	now += 1;
	assert_int_equal(dbgfetch_get(f, ID_A, 20, &path), DBGFETCH_PENDING);
	dbgfetch_stats(f, &st);
	assert_int_equal(st.pending, 1);
	assert_int_equal(dbgfetch_complete_one(f, 0, "/cache/a/debuginfo"), 0);
	assert_int_equal(dbgfetch_get(f, ID_A, 20, &path), DBGFETCH_READY);
	dbgfetch_free(f);
}

static void test_an_unusable_file_counts_as_a_failure(void **state)
{
	time_t now = 1000;
	struct dbgfetch *f = new_fetch(&now);
	struct dbgfetch_stats st;
	const char *path = NULL;

	(void)state;
	assert_int_equal(dbgfetch_get(f, ID_A, 20, &path), DBGFETCH_PENDING);
	assert_int_equal(dbgfetch_complete_one(f, 0, "/cache/a/debuginfo"), 0);
	assert_int_equal(dbgfetch_get(f, ID_A, 20, &path), DBGFETCH_READY);
	dbgfetch_unusable(f, ID_A, 20);
	dbgfetch_stats(f, &st);
	assert_int_equal(st.fetched, 0);
	assert_int_equal(st.failed, 1);
	assert_int_equal(dbgfetch_get(f, ID_A, 20, &path), DBGFETCH_MISSING);
	dbgfetch_free(f);
}

static void test_bad_ids_are_never_queued(void **state)
{
	time_t now = 1000;
	struct dbgfetch *f = new_fetch(&now);
	unsigned char big[DBGFETCH_MAX_ID + 1] = { 0 };
	struct dbgfetch_stats st;
	const char *path = NULL;

	(void)state;
	assert_int_equal(dbgfetch_get(f, ID_A, 0, &path), DBGFETCH_MISSING);
	assert_int_equal(dbgfetch_get(f, big, sizeof(big), &path), DBGFETCH_MISSING);
	dbgfetch_stats(f, &st);
	assert_int_equal(st.pending, 0);
	dbgfetch_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_new_id_is_queued_once_and_then_ready),
		cmocka_unit_test(test_a_miss_is_not_asked_again_until_retry),
		cmocka_unit_test(test_an_unusable_file_counts_as_a_failure),
		cmocka_unit_test(test_bad_ids_are_never_queued),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
