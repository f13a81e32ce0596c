/* tickgrid: the ticks a CPU-clock event's grid says fell due, against those that ran. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "bpf/tickgrid.h"

#define MS 1000000ull

static void test_the_period_is_the_kernels(void **state)
{
	struct tickgrid g;

	(void)state;
	assert_int_equal(tickgrid_init(&g, 2, 999), 0);
	assert_int_equal(g.period_ns, 1001001); /* NSEC_PER_SEC / 999, truncated */
	tickgrid_free(&g);
	assert_int_equal(tickgrid_init(&g, 1, 1000000), 0);
	assert_int_equal(g.period_ns, 10000); /* the kernel's floor */
	tickgrid_free(&g);
	assert_int_equal(tickgrid_init(&g, 1, 0), -EINVAL);
	assert_int_equal(tickgrid_init(&g, 0, 99), -EINVAL);
}

static void test_every_tick_ran_none_missed(void **state)
{
	struct tickgrid g;

	(void)state;
	assert_int_equal(tickgrid_init(&g, 2, 1000), 0);
	assert_false(tickgrid_active(&g));
	tickgrid_start(&g, 0, 5 * MS, 0);
	assert_true(tickgrid_active(&g));
	/* 1000 ticks due by 1005 ms; 999 ran, one in flight: not counted. */
	assert_int_equal(tickgrid_update(&g, 0, 1005 * MS, 1000), 0);
	assert_int_equal(tickgrid_update(&g, 0, 1005 * MS + MS / 2, 999), 0);
	/* A CPU without an event counts nothing, whatever it is told. */
	assert_int_equal(tickgrid_update(&g, 1, 1005 * MS, 0), 0);
	assert_int_equal(tickgrid_update(&g, 7, 1005 * MS, 0), 0);
	assert_int_equal(tickgrid_missed(&g), 0);
	tickgrid_free(&g);
}

static void test_a_held_cpu_misses_its_ticks(void **state)
{
	struct tickgrid g;

	(void)state;
	assert_int_equal(tickgrid_init(&g, 2, 1000), 0);
	tickgrid_start(&g, 0, 1 * MS, 0);
	tickgrid_start(&g, 1, 2 * MS, 0);
	/* CPU 0 held 50 ms in its first second: 950 ran of 1000 due. */
	assert_int_equal(tickgrid_update(&g, 0, 1001 * MS, 950), 49);
	/* CPU 1 ran all of its 998. */
	assert_int_equal(tickgrid_update(&g, 1, 1000 * MS, 998), 0);
	assert_int_equal(tickgrid_missed(&g), 49);
	/* Read again in flight (one tick short of the last read): never less. */
	assert_int_equal(tickgrid_update(&g, 0, 1002 * MS, 950), 50);
	assert_int_equal(tickgrid_update(&g, 0, 1003 * MS, 952), 50);
	assert_int_equal(tickgrid_missed(&g), 50);
	tickgrid_free(&g);
	/* A start at 0 ns is a start (kept as 1 ns). */
	assert_int_equal(tickgrid_init(&g, 1, 1000), 0);
	tickgrid_start(&g, 0, 0, 0);
	assert_true(tickgrid_active(&g));
	assert_int_equal(tickgrid_update(&g, 0, 1001 * MS, 900), 99);
	tickgrid_free(&g);
}

static void test_nothing_falls_due_after_the_stop(void **state)
{
	struct tickgrid g;

	(void)state;
	assert_int_equal(tickgrid_init(&g, 1, 100), 0);
	tickgrid_start(&g, 0, 1000 * MS, 0);
	tickgrid_stop(&g, 2000 * MS); /* 100 due */
	tickgrid_stop(&g, 3000 * MS); /* the first stop holds */
	assert_int_equal(tickgrid_update(&g, 0, 60000 * MS, 99), 0);
	assert_int_equal(tickgrid_update(&g, 0, 60000 * MS, 90), 9);
	/* A read before the start (a clock read out of order) counts nothing. */
	tickgrid_start(&g, 0, 70000 * MS, 0);
	tickgrid_free(&g);
	assert_int_equal(tickgrid_init(&g, 1, 100), 0);
	tickgrid_start(&g, 0, 1000 * MS, 0);
	assert_int_equal(tickgrid_update(&g, 0, 900 * MS, 0), 0);
	tickgrid_free(&g);
}

/*
 * A CPU that went offline (its event ended) and came back (a new event):
 * nothing falls due while it was away, the new event's ticks count from
 * the program's runs at its start, and what the first event missed stays.
 */
static void test_a_cpu_away_misses_nothing_while_away(void **state)
{
	struct tickgrid g;

	(void)state;
	assert_int_equal(tickgrid_init(&g, 2, 1000), 0);
	tickgrid_start(&g, 1, 1000 * MS, 0);
	/* 1000 due by its end at 2000 ms; 980 ran: 19 missed (one in flight). */
	tickgrid_end(&g, 1, 2000 * MS, 980);
	assert_int_equal(tickgrid_missed(&g), 19);
	/* Away: the updates change nothing, however long. */
	assert_int_equal(tickgrid_update(&g, 1, 5000 * MS, 980), 19);
	tickgrid_end(&g, 1, 6000 * MS, 980); /* no event: nothing to end */
	assert_int_equal(tickgrid_missed(&g), 19);
	/* Back at 9000 ms: a second later, 1000 due, all ran but the one in flight. */
	tickgrid_start(&g, 1, 9000 * MS, 980);
	assert_int_equal(tickgrid_update(&g, 1, 10000 * MS, 1979), 19);
	/* Then 10 held (one of them in flight): they add to the first event's. */
	assert_int_equal(tickgrid_update(&g, 1, 11000 * MS, 2970), 19 + 9);
	assert_int_equal(tickgrid_missed(&g), 28);
	/* Ended and started again at once: the count never goes down. */
	tickgrid_end(&g, 1, 11000 * MS, 2970);
	tickgrid_start(&g, 1, 11000 * MS, 2970);
	assert_int_equal(tickgrid_update(&g, 1, 11000 * MS, 2970), 28);
	assert_true(tickgrid_active(&g));
	tickgrid_free(&g);
}

static void test_the_clock_moves(void **state)
{
	uint64_t a, b;

	(void)state;
	a = tickgrid_now_ns();
	b = tickgrid_now_ns();
	assert_true(a > 0);
	assert_true(b >= a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_the_period_is_the_kernels),
		cmocka_unit_test(test_every_tick_ran_none_missed),
		cmocka_unit_test(test_a_held_cpu_misses_its_ticks),
		cmocka_unit_test(test_nothing_falls_due_after_the_stop),
		cmocka_unit_test(test_a_cpu_away_misses_nothing_while_away),
		cmocka_unit_test(test_the_clock_moves),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
