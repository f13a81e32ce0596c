/*
 * ringrd over memory laid out as the kernel lays out a ring buffer: the
 * order of records, the ones skipped or not yet written, those that wrap
 * past the end, and a reader's errors. tests/root/test_ringrd_kernel.c
 * reads a real ring buffer.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <linux/bpf.h>

#include "bpf/ringrd.h"

#define PAGE 4096
#define SIZE 256 /* small, so that records wrap often */

struct fake {
	uint64_t consumer;
	unsigned char ro[PAGE + SIZE] __attribute__((aligned(8))); /* producer page, then data */
	uint64_t prod;
	struct ringrd *r;
};

static struct fake *fake_new(void)
{
	struct fake *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(ringrd_over(&f->consumer, f->ro, PAGE, SIZE, &f->r), 0);
	return f;
}

static void fake_free(struct fake *f)
{
	ringrd_free(f->r);
	free(f);
}

/* Writes a record of len bytes, each (seed + i), with flags in its header, as the kernel would. */
static void fake_put(struct fake *f, uint32_t len, unsigned char seed, uint32_t flags)
{
	unsigned char *data = f->ro + PAGE;
	uint32_t head = len | flags;
	uint64_t at = f->prod;

	assert_true(at + 8 + len - f->consumer <= SIZE);
	memcpy(data + (at % SIZE), &head, sizeof(head));
	memset(data + (at % SIZE) + 4, 0, 4);
	for (uint32_t i = 0; i < len; i++)
		data[(at + 8 + i) % SIZE] = (unsigned char)(seed + i);
	f->prod = at + ((8 + len + 7) & ~7u);
	memcpy(f->ro, &f->prod, sizeof(f->prod));
}

struct seen {
	int n;
	uint32_t lens[64];
	unsigned char seeds[64];
	int fail_at; /* 1-based; 0: never */
};

static int take(void *ctx, void *data, size_t size)
{
	struct seen *s = ctx;
	const unsigned char *b = data;

	for (size_t i = 0; i < size; i++)
		assert_int_equal(b[i], (unsigned char)(b[0] + i));
	s->lens[s->n] = (uint32_t)size;
	s->seeds[s->n] = size ? b[0] : 0;
	s->n++;
	return s->n == s->fail_at ? -EIO : 0;
}

static void test_records_come_in_order_and_free_their_room(void **state)
{
	struct fake *f = fake_new();
	struct seen s = { 0 };

	(void)state;
	fake_put(f, 5, 10, 0);
	fake_put(f, 16, 20, 0);
	fake_put(f, 0, 0, 0);
	assert_int_equal(ringrd_consume(f->r, take, &s), 3);
	assert_int_equal(s.lens[0], 5);
	assert_int_equal(s.seeds[0], 10);
	assert_int_equal(s.lens[1], 16);
	assert_int_equal(s.seeds[1], 20);
	assert_int_equal(s.lens[2], 0);
	/* 8 + 5 rounded to 16, then 24, then 8. */
	assert_int_equal(f->consumer, 48);
	assert_int_equal(ringrd_consume(f->r, take, &s), 0);
	fake_free(f);
}

static void test_discarded_records_are_skipped_and_busy_ones_wait(void **state)
{
	struct fake *f = fake_new();
	struct seen s = { 0 };
	unsigned char *busy_head;

	(void)state;
	fake_put(f, 8, 1, BPF_RINGBUF_DISCARD_BIT);
	fake_put(f, 8, 2, 0);
	busy_head = f->ro + PAGE + f->prod % SIZE;
	fake_put(f, 8, 3, BPF_RINGBUF_BUSY_BIT);
	fake_put(f, 8, 4, 0);
	assert_int_equal(ringrd_consume(f->r, take, &s), 1);
	assert_int_equal(s.seeds[0], 2);
	/* The consumer stops before the record still being written. */
	assert_int_equal(f->consumer, 32);
	/* Its commit clears the busy bit: it and the one after come, in order. */
	busy_head[3] &= (unsigned char)~(BPF_RINGBUF_BUSY_BIT >> 24);
	assert_int_equal(ringrd_consume(f->r, take, &s), 2);
	assert_int_equal(s.seeds[1], 3);
	assert_int_equal(s.seeds[2], 4);
	assert_int_equal(f->consumer, f->prod);
	fake_free(f);
}

static void test_records_that_wrap_come_whole(void **state)
{
	struct fake *f = fake_new();
	struct seen s = { 0 };
	int total = 0;

	(void)state;
	/* Lengths that do not divide the ring: records wrap at every offset in turn. */
	for (int round = 0; round < 200; round++) {
		uint32_t len = 1 + (uint32_t)(round * 37) % 120;

		s.n = 0;
		fake_put(f, len, (unsigned char)round, 0);
		fake_put(f, 7, (unsigned char)(round + 100), 0);
		assert_int_equal(ringrd_consume(f->r, take, &s), 2);
		assert_int_equal(s.lens[0], len);
		assert_int_equal(s.seeds[0], (unsigned char)round);
		assert_int_equal(s.seeds[1], (unsigned char)(round + 100));
		total += 2;
	}
	assert_true(f->prod > 50 * SIZE); /* around the ring many times */
	assert_int_equal(total, 400);
	fake_free(f);
}

static void test_a_whole_ring_of_one_record(void **state)
{
	struct fake *f = fake_new();
	struct seen s = { 0 };

	(void)state;
	fake_put(f, 100, 5, 0);
	assert_int_equal(ringrd_consume(f->r, take, &s), 1);
	/* Starts past the middle: the biggest record the ring holds wraps. */
	fake_put(f, SIZE - 8, 9, 0);
	assert_int_equal(ringrd_consume(f->r, take, &s), 1);
	assert_int_equal(s.lens[1], SIZE - 8);
	assert_int_equal(s.seeds[1], 9);
	fake_free(f);
}

static void test_a_readers_error_consumes_its_record_and_stops(void **state)
{
	struct fake *f = fake_new();
	struct seen s = { .fail_at = 2 };

	(void)state;
	fake_put(f, 8, 1, 0);
	fake_put(f, 8, 2, 0);
	fake_put(f, 8, 3, 0);
	assert_int_equal(ringrd_consume(f->r, take, &s), -EIO);
	assert_int_equal(s.n, 2);
	assert_int_equal(f->consumer, 32);
	assert_int_equal(ringrd_consume(f->r, take, &s), 1);
	assert_int_equal(s.seeds[2], 3);
	fake_free(f);
}

static void test_a_header_longer_than_the_ring_is_refused(void **state)
{
	struct fake *f = fake_new();
	struct seen s = { 0 };
	uint32_t head = SIZE;

	(void)state;
	memcpy(f->ro + PAGE, &head, sizeof(head));
	f->prod = 8 + SIZE;
	memcpy(f->ro, &f->prod, sizeof(f->prod));
	assert_int_equal(ringrd_consume(f->r, take, &s), -EBADMSG);
	assert_int_equal(s.n, 0);
	/* Dropped, so that a poll does not wake for it again and again; what comes next is read. */
	assert_int_equal(f->consumer, f->prod);
	fake_put(f, 8, 7, 0);
	assert_int_equal(ringrd_consume(f->r, take, &s), 1);
	assert_int_equal(s.seeds[0], 7);
	fake_free(f);
}

static void test_bad_layouts_are_refused(void **state)
{
	uint64_t c = 0;
	static unsigned char ro[PAGE + 512];
	struct ringrd *r = (struct ringrd *)1;

	(void)state;
	assert_int_equal(ringrd_over(&c, ro, PAGE, 384, &r), -EINVAL); /* not a power of 2 */
	assert_null(r);
	assert_int_equal(ringrd_over(&c, ro, PAGE, 4, &r), -EINVAL); /* smaller than a header */
	assert_int_equal(ringrd_over(NULL, ro, PAGE, 512, &r), -EINVAL);
	assert_true(ringrd_open(-1, &r) < 0); /* the kernel says -EBADFD */
	assert_null(r);
	ringrd_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_records_come_in_order_and_free_their_room),
		cmocka_unit_test(test_discarded_records_are_skipped_and_busy_ones_wait),
		cmocka_unit_test(test_records_that_wrap_come_whole),
		cmocka_unit_test(test_a_whole_ring_of_one_record),
		cmocka_unit_test(test_a_readers_error_consumes_its_record_and_stops),
		cmocka_unit_test(test_a_header_longer_than_the_ring_is_refused),
		cmocka_unit_test(test_bad_layouts_are_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
