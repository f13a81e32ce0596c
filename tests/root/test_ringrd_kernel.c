/*
 * ringrd on a real ring buffer: a one-page BPF ring buffer, filled by a
 * small program run through BPF_PROG_TEST_RUN (each run writes one 40-byte
 * record: the time, then four known words), so that records wrap past the
 * end of the ring over and over. Needs CAP_BPF.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <bpf/bpf.h>
#include <linux/bpf.h>

#include "bpf/ringrd.h"

#define RECORD 40

struct kring {
	int map_fd;
	int prog_fd;
	size_t page;
};

static struct bpf_insn insn(__u8 code, __u8 dst, __u8 src, __s16 off, __s32 imm)
{
	return (struct bpf_insn){ .code = code, .dst_reg = dst, .src_reg = src, .off = off,
				  .imm = imm };
}

/* One record a run: {ktime, 0x11111111, 0x22222222, 0x33333333, 0x44444444}. */
static int kring_prog(int map_fd)
{
	struct bpf_insn p[] = {
		insn(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_ktime_get_ns),
		insn(BPF_STX | BPF_MEM | BPF_DW, BPF_REG_10, BPF_REG_0, -40, 0),
		insn(BPF_ST | BPF_MEM | BPF_DW, BPF_REG_10, 0, -32, 0x11111111),
		insn(BPF_ST | BPF_MEM | BPF_DW, BPF_REG_10, 0, -24, 0x22222222),
		insn(BPF_ST | BPF_MEM | BPF_DW, BPF_REG_10, 0, -16, 0x33333333),
		insn(BPF_ST | BPF_MEM | BPF_DW, BPF_REG_10, 0, -8, 0x44444444),
		insn(BPF_LD | BPF_IMM | BPF_DW, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, map_fd),
		insn(0, 0, 0, 0, 0),
		insn(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0),
		insn(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -40),
		insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_3, 0, 0, RECORD),
		insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_4, 0, 0, 0),
		insn(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_ringbuf_output),
		insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0),
		insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};

	return bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "ringrd_test", "GPL", p,
			     sizeof(p) / sizeof(p[0]), NULL);
}

static int kring_setup(void **state)
{
	static struct kring k;

	k.page = (size_t)sysconf(_SC_PAGESIZE);
	k.map_fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "ringrd_test", 0, 0, (__u32)k.page, NULL);
	if (k.map_fd < 0) {
		fprintf(stderr, "creating a ring buffer: %s\n", strerror(errno));
		return -1;
	}
	k.prog_fd = kring_prog(k.map_fd);
	if (k.prog_fd < 0) {
		fprintf(stderr, "loading the writer: %s\n", strerror(errno));
		return -1;
	}
	*state = &k;
	return 0;
}

static int kring_teardown(void **state)
{
	struct kring *k = *state;

	close(k->prog_fd);
	close(k->map_fd);
	return 0;
}

/* Runs the writer n times in one call: n records, or fewer if the ring fills. */
static void kring_write(const struct kring *k, uint32_t n)
{
	unsigned char pkt[64] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = sizeof(pkt),
		    .repeat = n);

	assert_int_equal(bpf_prog_test_run_opts(k->prog_fd, &o), 0);
}

struct got {
	uint32_t n;
	uint64_t last_time;
};

static int check_record(void *ctx, void *data, size_t size)
{
	struct got *g = ctx;
	uint64_t w[5];

	assert_int_equal(size, RECORD);
	memcpy(w, data, sizeof(w));
	assert_true(w[0] >= g->last_time);
	assert_int_equal(w[1], 0x11111111);
	assert_int_equal(w[2], 0x22222222);
	assert_int_equal(w[3], 0x33333333);
	assert_int_equal(w[4], 0x44444444);
	g->last_time = w[0];
	g->n++;
	return 0;
}

static void test_records_wrap_around_a_real_ring(void **state)
{
	const struct kring *k = *state;
	struct ringrd *r;
	struct got g = { 0 };
	uint32_t written = 0;

	assert_int_equal(ringrd_open(k->map_fd, &r), 0);
	assert_int_equal(ringrd_size(r), k->page);
	/* 48 bytes a record with its header: the ring's end falls inside records. */
	for (uint32_t round = 0; round < 400; round++) {
		uint32_t n = 1 + round * 7 % 60, before = g.n;

		kring_write(k, n);
		written += n;
		assert_int_equal(ringrd_consume(r, check_record, &g), (int)n);
		assert_int_equal(g.n - before, n);
	}
	assert_int_equal(g.n, written);
	assert_true((uint64_t)written * 48 > 100 * k->page);
	ringrd_free(r);
}

static void test_a_full_ring_keeps_what_it_holds(void **state)
{
	const struct kring *k = *state;
	struct ringrd *r;
	struct got g = { 0 };
	uint32_t fits = (uint32_t)(k->page / 48);

	assert_int_equal(ringrd_open(k->map_fd, &r), 0);
	kring_write(k, fits + 20); /* the last 20 find no room */
	assert_int_equal(ringrd_consume(r, check_record, &g), (int)fits);
	kring_write(k, 3);
	assert_int_equal(ringrd_consume(r, check_record, &g), 3);
	ringrd_free(r);
}

static void test_a_poll_wakes_for_a_record(void **state)
{
	const struct kring *k = *state;
	struct ringrd *r;
	struct got g = { 0 };

	assert_int_equal(ringrd_open(k->map_fd, &r), 0);
	assert_int_equal(ringrd_consume(r, check_record, &g), 0);
	assert_int_equal(ringrd_poll(r, 10, check_record, &g), 0);
	kring_write(k, 1);
	assert_int_equal(ringrd_poll(r, 10000, check_record, &g), 1);
	ringrd_free(r);
}

/* Bytes of the process's mappings of BPF maps, from /proc/self/maps. */
static size_t bpf_map_bytes(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	size_t total = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (strstr(line, "anon_inode:bpf-map") && sscanf(line, "%lx-%lx", &lo, &hi) == 2)
			total += hi - lo;
	}
	fclose(f);
	return total;
}

static void test_the_data_is_mapped_once(void **state)
{
	const struct kring *k = *state;
	struct ringrd *r;
	size_t before = bpf_map_bytes();

	assert_int_equal(ringrd_open(k->map_fd, &r), 0);
	/* The consumer's page, the producer's, the data: not the data twice. */
	assert_int_equal(bpf_map_bytes() - before, 2 * k->page + ringrd_size(r));
	ringrd_free(r);
	assert_int_equal(bpf_map_bytes(), before);
}

static void test_other_maps_are_refused(void **state)
{
	struct ringrd *r;
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "ringrd_not", 4, 8, 1, NULL);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(ringrd_open(fd, &r), -EINVAL);
	assert_null(r);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_records_wrap_around_a_real_ring),
		cmocka_unit_test(test_a_full_ring_keeps_what_it_holds),
		cmocka_unit_test(test_a_poll_wakes_for_a_record),
		cmocka_unit_test(test_the_data_is_mapped_once),
		cmocka_unit_test(test_other_maps_are_refused),
	};

	return cmocka_run_group_tests(tests, kring_setup, kring_teardown);
}
