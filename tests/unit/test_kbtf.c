/*
 * kbtf: member offsets from a streamed BTF file. The running kernel's
 * answers are checked against libbpf's own BTF parser; the corner cases
 * (nesting, bitfields, damage) against small BTF files written here with
 * libbpf's BTF writer.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <bpf/btf.h>

#include "bpf/kbtf.h"

#define ERRLEN 256

/* libbpf's answer: the byte offset of a direct member of the struct. */
/* A member's offset in bits, as libbpf reads it; -1 if absent. */
static long libbpf_bit_offset(const struct btf *btf, const char *struct_name, const char *member)
{
	int id = btf__find_by_name_kind(btf, struct_name, BTF_KIND_STRUCT);
	const struct btf_type *t;
	const struct btf_member *m;

	if (id < 0)
		return -1;
	t = btf__type_by_id(btf, (__u32)id);
	m = btf_members(t);
	for (int i = 0; i < btf_vlen(t); i++, m++)
		if (strcmp(btf__name_by_offset(btf, m->name_off), member) == 0)
			return (long)btf_member_bit_offset(t, (__u32)i);
	return -1;
}

static long libbpf_offset(const struct btf *btf, const char *struct_name, const char *member)
{
	long bits = libbpf_bit_offset(btf, struct_name, member);

	return bits < 0 ? -1 : bits / 8;
}

static void test_running_kernel_matches_libbpf(void **state)
{
	static const char *const members[] = { "group_leader", "comm", "start_boottime", "mm",
					       "pid", "tgid", "flags" };
	uint32_t got[7];
	char err[ERRLEN];
	struct btf *btf = btf__load_vmlinux_btf();

	(void)state;
	assert_non_null(btf);
	assert_int_equal(kbtf_member_offsets(KBTF_VMLINUX, "task_struct", members, got, 7, err,
					     sizeof(err)),
			 0);
	for (int i = 0; i < 7; i++) {
		long want = libbpf_offset(btf, "task_struct", members[i]);

		print_message("task_struct.%s at %u (libbpf: %ld)\n", members[i], got[i], want);
		assert_true(want > 0);
		assert_int_equal(got[i], want);
	}
	btf__free(btf);
}

/* The id of a tracepoint's typedef, as a tp_btf load names it: libbpf's, and -ENOENT for none. */
static void test_typedef_id_matches_libbpf(void **state)
{
	struct btf *btf = btf__load_vmlinux_btf();
	char err[ERRLEN];
	uint32_t id;
	int want;

	(void)state;
	assert_non_null(btf);
	want = btf__find_by_name_kind(btf, "btf_trace_sched_switch", BTF_KIND_TYPEDEF);
	assert_true(want > 0);
	assert_int_equal(kbtf_typedef_id(KBTF_VMLINUX, "btf_trace_sched_switch", &id, err,
					 sizeof(err)),
			 0);
	assert_int_equal(id, (uint32_t)want);
	/* task_struct is a struct, not a typedef. */
	assert_int_equal(kbtf_typedef_id(KBTF_VMLINUX, "task_struct", &id, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "no typedef task_struct"));
	btf__free(btf);
}

/* The id of an iterator's function, as an iter load names it: libbpf's; a typedef is not one. */
static void test_func_id_matches_libbpf(void **state)
{
	struct btf *btf = btf__load_vmlinux_btf();
	char err[ERRLEN];
	uint32_t id;
	int want;

	(void)state;
	assert_non_null(btf);
	want = btf__find_by_name_kind(btf, "bpf_iter_task", BTF_KIND_FUNC);
	assert_true(want > 0);
	assert_int_equal(kbtf_func_id(KBTF_VMLINUX, "bpf_iter_task", &id, err, sizeof(err)), 0);
	assert_int_equal(id, (uint32_t)want);
	assert_int_equal(kbtf_func_id(KBTF_VMLINUX, "btf_trace_sched_switch", &id, err,
				      sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "no function btf_trace_sched_switch"));
	btf__free(btf);
}

/* Writes btf to a temporary file; returns its path (static buffer). */
static const char *write_btf(const struct btf *btf, size_t truncate_to)
{
	static char path[] = "/tmp/ebprof-test-kbtf.XXXXXX";
	__u32 size;
	const void *raw = btf__raw_data(btf, &size);
	int fd;

	strcpy(path, "/tmp/ebprof-test-kbtf.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_non_null(raw);
	if (truncate_to && truncate_to < size)
		size = (__u32)truncate_to;
	assert_int_equal(write(fd, raw, size), (ssize_t)size);
	close(fd);
	return path;
}

/*
 * struct outer {			offset
 *	long a;				0
 *	union {				8
 *		int b;			8
 *		struct {
 *			int c;		8
 *			long target;	16
 *		};
 *	};
 *	int bits : 3;			24
 * };
 * struct decoy { long target; }	(not the one asked for)
 */
static struct btf *nested_btf(void)
{
	struct btf *btf = btf__new_empty();
	int i32, i64, inner, anon_union, outer, decoy;

	assert_non_null(btf);
	i32 = btf__add_int(btf, "int", 4, BTF_INT_SIGNED);
	i64 = btf__add_int(btf, "long", 8, BTF_INT_SIGNED);
	decoy = btf__add_struct(btf, "decoy", 8);
	assert_int_equal(btf__add_field(btf, "target", i64, 0, 0), 0);
	inner = btf__add_struct(btf, NULL, 16);
	assert_int_equal(btf__add_field(btf, "c", i32, 0, 0), 0);
	assert_int_equal(btf__add_field(btf, "target", i64, 64, 0), 0);
	anon_union = btf__add_union(btf, NULL, 16);
	assert_int_equal(btf__add_field(btf, "b", i32, 0, 0), 0);
	assert_int_equal(btf__add_field(btf, NULL, inner, 0, 0), 0);
	outer = btf__add_struct(btf, "outer", 32);
	assert_int_equal(btf__add_field(btf, "a", i64, 0, 0), 0);
	assert_int_equal(btf__add_field(btf, NULL, anon_union, 64, 0), 0);
	assert_int_equal(btf__add_field(btf, "bits", i32, 192, 3), 0);
	assert_int_equal(btf__add_field(btf, "odd", i32, 197, 3), 0);
	assert_true(decoy > 0 && outer > 0);
	return btf;
}

static void test_members_inside_anonymous_types(void **state)
{
	static const char *const members[] = { "target", "a", "b", "c", "bits" };
	struct btf *btf = nested_btf();
	const char *path = write_btf(btf, 0);
	uint32_t got[5];
	char err[ERRLEN];

	(void)state;
	assert_int_equal(kbtf_member_offsets(path, "outer", members, got, 5, err, sizeof(err)), 0);
	assert_int_equal(got[0], 16);
	assert_int_equal(got[1], 0);
	assert_int_equal(got[2], 8);
	assert_int_equal(got[3], 8);
	assert_int_equal(got[4], 24); /* a bitfield on a byte boundary is fine */
	unlink(path);
	btf__free(btf);
}

static void test_refusals_name_the_problem(void **state)
{
	static const char *const missing[] = { "a", "nothere" };
	static const char *const odd[] = { "odd" };
	static const char *const a[] = { "a" };
	struct btf *btf = nested_btf();
	const char *path = write_btf(btf, 0);
	uint32_t got[2];
	char err[ERRLEN];

	(void)state;
	assert_int_equal(kbtf_member_offsets(path, "outer", missing, got, 2, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "outer.nothere"));
	assert_int_equal(kbtf_member_offsets(path, "nosuch", a, got, 1, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "nosuch.a"));
	assert_int_equal(kbtf_member_offsets(path, "outer", odd, got, 1, err, sizeof(err)),
			 -EPROTO);
	assert_non_null(strstr(err, "bitfield"));
	unlink(path);

	/* Cut anywhere past the header: refused, never read past the end. */
	for (size_t cut = 30; cut < 200; cut += 7) {
		path = write_btf(btf, cut);
		assert_int_equal(kbtf_member_offsets(path, "outer", a, got, 1, err, sizeof(err)),
				 -EPROTO);
		assert_non_null(strstr(err, "malformed"));
		unlink(path);
	}
	btf__free(btf);

	assert_int_equal(kbtf_member_offsets("/etc/hostname", "outer", a, got, 1, err,
					     sizeof(err)),
			 -EPROTO);
	assert_non_null(strstr(err, "not BTF"));
	assert_int_equal(kbtf_member_offsets("/nonexistent/btf", "outer", a, got, 1, err,
					     sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/btf"));
}

/* In bits: a bitfield anywhere, a member not there marked absent, no struct refused. */
static void test_member_bits(void **state)
{
	static const char *const members[] = { "target", "bits", "odd", "nothere" };
	static const char *const a[] = { "a" };
	struct btf *btf = nested_btf();
	const char *path = write_btf(btf, 0);
	uint32_t got[4];
	char err[ERRLEN];

	(void)state;
	assert_int_equal(kbtf_member_bits(path, "outer", members, got, 4, err, sizeof(err)), 0);
	assert_int_equal(got[0], 128);
	assert_int_equal(got[1], 192);
	assert_int_equal(got[2], 197);
	assert_int_equal(got[3], KBTF_ABSENT);
	assert_int_equal(kbtf_member_bits(path, "nosuch", a, got, 1, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "struct nosuch"));
	unlink(path);
	btf__free(btf);
}

/* The running kernel's in_execve, as libbpf reads it: the bit the sampler tests in an exec. */
static void test_running_kernel_in_execve_bit(void **state)
{
	static const char *const members[] = { "in_execve", "mm" };
	struct btf *btf = btf__load_vmlinux_btf();
	uint32_t got[2];
	char err[ERRLEN];
	long want;

	(void)state;
	assert_non_null(btf);
	want = libbpf_bit_offset(btf, "task_struct", "in_execve");
	assert_int_equal(kbtf_member_bits(KBTF_VMLINUX, "task_struct", members, got, 2, err,
					  sizeof(err)),
			 0);
	print_message("task_struct.in_execve at bit %u (libbpf: %ld)\n", got[0], want);
	assert_true(want > 0);
	assert_int_equal(got[0], want);
	assert_int_equal(got[1], 8 * libbpf_offset(btf, "task_struct", "mm"));
	btf__free(btf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_running_kernel_matches_libbpf),
		cmocka_unit_test(test_typedef_id_matches_libbpf),
		cmocka_unit_test(test_func_id_matches_libbpf),
		cmocka_unit_test(test_members_inside_anonymous_types),
		cmocka_unit_test(test_refusals_name_the_problem),
		cmocka_unit_test(test_member_bits),
		cmocka_unit_test(test_running_kernel_in_execve_bit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
