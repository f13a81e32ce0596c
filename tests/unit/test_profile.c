/*
 * profile: the call tree's sums, its stable order, per-function metrics and
 * merging, as the writers and the plugin's metrics see them.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "render/profile.h"

/* Adds "a;b;c" style stacks of user frames; the first frame is a process. */
static void add_stack(struct profile *p, const char *stack, uint64_t count)
{
	struct frame frames[512];
	char buf[4096];
	size_t n = 0;

	snprintf(buf, sizeof(buf), "%s", stack);
	for (char *tok = strtok(buf, ";"); tok; tok = strtok(NULL, ";")) {
		frames[n] = (struct frame){ .name = tok, .kind = n ? FRAME_USER : FRAME_PROCESS };
		n++;
	}
	assert_int_equal(profile_add(p, frames, n, count), 0);
}

static const struct profile_node *child_named(const struct profile_node *n, const char *name)
{
	for (size_t i = 0; i < profile_node_child_count(n); i++)
		if (!strcmp(profile_node_name(profile_node_child(n, i)), name))
			return profile_node_child(n, i);
	return NULL;
}

static void test_same_stack_twice_is_one_node_with_summed_counts(void **state)
{
	struct profile *p = profile_new();
	const struct profile_node *proc, *main_fn, *work;

	(void)state;
	add_stack(p, "app;main;work", 3);
	add_stack(p, "app;main;work", 4);
	add_stack(p, "app;main", 2);

	assert_int_equal(profile_total(p), 9);
	assert_int_equal(profile_stack_count(p), 2);
	assert_int_equal(profile_max_depth(p), 3);
	assert_int_equal(profile_node_child_count(profile_root(p)), 1);
	proc = child_named(profile_root(p), "app");
	assert_non_null(proc);
	assert_int_equal(profile_node_kind(proc), FRAME_PROCESS);
	main_fn = child_named(proc, "main");
	assert_int_equal(profile_node_total(main_fn, 0), 9);
	assert_int_equal(profile_node_self(main_fn, 0), 2);
	assert_int_equal(profile_node_child_count(main_fn), 1);
	work = child_named(main_fn, "work");
	assert_int_equal(profile_node_total(work, 0), 7);
	assert_int_equal(profile_node_self(work, 0), 7);
	profile_free(p);
}

/* Names are copied: the caller's buffers may change after profile_add. */
static void test_names_are_copied(void **state)
{
	struct profile *p = profile_new();
	char name[] = "original";
	struct frame f = { name, FRAME_USER };

	(void)state;
	assert_int_equal(profile_add(p, &f, 1, 1), 0);
	strcpy(name, "changed!");
	assert_string_equal(profile_node_name(profile_node_child(profile_root(p), 0)), "original");
	profile_free(p);
}

static void collect_order(const struct profile_node *n, char *out, size_t size)
{
	for (size_t i = 0; i < profile_node_child_count(n); i++) {
		const struct profile_node *kid = profile_node_child(n, i);
		size_t len = strlen(out);

		snprintf(out + len, size - len, "%s/%d(", profile_node_name(kid),
			 (int)profile_node_kind(kid));
		collect_order(kid, out, size);
		len = strlen(out);
		snprintf(out + len, size - len, ")");
	}
}

static void test_children_order_does_not_depend_on_insertion_order(void **state)
{
	static const struct frame kids[] = {
		{ "zeta", FRAME_USER },	  { "alpha", FRAME_KERNEL }, { "alpha", FRAME_USER },
		{ "Mixed", FRAME_USER },  { "beta", FRAME_JIT },     { "alpha", FRAME_INLINED },
		{ "\xc3\xa9t\xc3\xa9", FRAME_USER }, { "", FRAME_USER },
	};
	const size_t n = sizeof(kids) / sizeof(kids[0]);
	char first[1024] = "", other[1024] = "";
	struct frame stack[2] = { { "proc", FRAME_PROCESS } };

	(void)state;
	srand(7);
	for (int round = 0; round < 20; round++) {
		struct profile *p = profile_new();
		size_t order[sizeof(kids) / sizeof(kids[0])];

		for (size_t i = 0; i < n; i++)
			order[i] = i;
		for (size_t i = n - 1; i > 0; i--) {
			size_t j = (size_t)rand() % (i + 1), t = order[i];

			order[i] = order[j];
			order[j] = t;
		}
		for (size_t i = 0; i < n; i++) {
			stack[1] = kids[order[i]];
			assert_int_equal(profile_add(p, stack, 2, 1), 0);
		}
		other[0] = '\0';
		collect_order(profile_root(p), other, sizeof(other));
		if (!round)
			memcpy(first, other, sizeof(first));
		assert_string_equal(other, first);
		profile_free(p);
	}
	/* Byte order of names, then kind order (user 1, kernel 2, inlined 4). */
	assert_string_equal(first, "proc/0(/1()Mixed/1()alpha/1()alpha/2()alpha/4()beta/3()"
				   "zeta/1()\xc3\xa9t\xc3\xa9/1())");
}

/* A node with thousands of children (unresolved addresses do this) keeps
 * them sorted and finds each one again. */
static void test_wide_fanout_stays_sorted_and_found(void **state)
{
	struct profile *p = profile_new();
	const struct profile_node *proc;
	struct frame stack[2] = { { "proc", FRAME_PROCESS }, { NULL, FRAME_UNKNOWN } };
	char name[32];

	(void)state;
	for (int round = 0; round < 2; round++) {
		for (unsigned int i = 0; i < 20000; i++) {
			snprintf(name, sizeof(name), "0x%08x", (i * 7919u) % 20000);
			stack[1].name = name;
			assert_int_equal(profile_add(p, stack, 2, 1), 0);
		}
	}
	proc = profile_node_child(profile_root(p), 0);
	assert_int_equal(profile_node_child_count(proc), 20000);
	for (size_t i = 0; i < 20000; i++) {
		const struct profile_node *kid = profile_node_child(proc, i);

		snprintf(name, sizeof(name), "0x%08zx", i);
		assert_string_equal(profile_node_name(kid), name);
		assert_int_equal(profile_node_self(kid, 0), 2);
	}
	assert_int_equal(profile_stack_count(p), 20000);
	profile_free(p);
}

/* profile_bytes() counts what the tree holds: it grows with new nodes and
 * names (at least a node and a name's bytes each), not with repeated
 * stacks, and a clear keeps the memory for reuse. */
static void test_bytes_follow_the_tree(void **state)
{
	struct profile *p = profile_new();
	struct frame stack[2] = { { "proc", FRAME_PROCESS }, { NULL, FRAME_UNKNOWN } };
	char name[32];
	size_t empty, full;

	(void)state;
	empty = profile_bytes(p);
	assert_true(empty >= sizeof(void *));
	for (unsigned int i = 0; i < 20000; i++) {
		snprintf(name, sizeof(name), "function_%08u", i);
		stack[1].name = name;
		assert_int_equal(profile_add(p, stack, 2, 1), 0);
	}
	full = profile_bytes(p);
	/* 20000 nodes of 56 bytes, names of 18 bytes, their child pointers */
	assert_true(full - empty >= 20000 * (56 + 18 + 8));
	assert_true(full - empty <= 20000 * 400);
	for (unsigned int i = 0; i < 20000; i++) {
		snprintf(name, sizeof(name), "function_%08u", i);
		stack[1].name = name;
		assert_int_equal(profile_add(p, stack, 2, 1), 0);
	}
	assert_int_equal(profile_bytes(p), full);
	profile_clear(p);
	assert_true(profile_bytes(p) < full);	 /* the child arrays and big names go */
	assert_true(profile_bytes(p) > empty); /* node chunks and arena blocks stay */
	profile_free(p);
}

/* Deeper than any path buffer: every level still gets its weight. */
static void test_very_deep_stack_counts_at_every_level(void **state)
{
	struct profile *p = profile_new();
	struct frame frames[600];
	char names[600][8];
	const struct profile_node *n;

	(void)state;
	for (int i = 0; i < 600; i++) {
		snprintf(names[i], sizeof(names[i]), "f%d", i % 7);
		frames[i] = (struct frame){ names[i], FRAME_USER };
	}
	assert_int_equal(profile_add(p, frames, 600, 2), 0);
	assert_int_equal(profile_add(p, frames, 600, 3), 0);
	assert_int_equal(profile_add(p, frames, 300, 1), 0);
	assert_int_equal(profile_max_depth(p), 600);
	n = profile_root(p);
	for (int i = 0; i < 600; i++) {
		n = profile_node_child(n, 0);
		assert_non_null(n);
		assert_int_equal(profile_node_total(n, 0), i < 300 ? 6 : 5);
	}
	assert_int_equal(profile_node_self(n, 0), 5);
	assert_int_equal(profile_node_child_count(n), 0);
	profile_free(p);
}

static void test_recursion_counts_once_in_total(void **state)
{
	struct profile *p = profile_new();
	struct profile_function *fns;
	size_t n;

	(void)state;
	add_stack(p, "app;a;b;a;b", 10);
	add_stack(p, "app;a", 5);
	add_stack(p, "app;c;a", 2);
	add_stack(p, "app2;a;a;a", 1);

	assert_int_equal(profile_functions(p, &fns, &n), 0);
	assert_int_equal(n, 3); /* process roots are not functions */
	assert_string_equal(fns[0].name, "b");
	assert_int_equal(fns[0].self, 10);
	assert_int_equal(fns[0].total, 10);
	assert_string_equal(fns[1].name, "a");
	assert_int_equal(fns[1].kind, FRAME_USER);
	assert_int_equal(fns[1].self, 5 + 2 + 1);
	assert_int_equal(fns[1].total, 10 + 5 + 2 + 1);
	assert_string_equal(fns[2].name, "c");
	assert_int_equal(fns[2].self, 0);
	assert_int_equal(fns[2].total, 2);
	free(fns);
	profile_free(p);
}

static void test_functions_sorted_by_self_then_total_then_name(void **state)
{
	struct profile *p = profile_new();
	struct profile_function *fns;
	size_t n;

	(void)state;
	add_stack(p, "app;zz", 4);
	add_stack(p, "app;yy;aa", 4);
	add_stack(p, "app;bb", 4);
	add_stack(p, "app;yy", 1);
	assert_int_equal(profile_functions(p, &fns, &n), 0);
	assert_int_equal(n, 4);
	assert_string_equal(fns[0].name, "aa"); /* self 4, total 4, name first */
	assert_string_equal(fns[1].name, "bb");
	assert_string_equal(fns[2].name, "zz");
	assert_string_equal(fns[3].name, "yy"); /* self 1 */
	assert_int_equal(fns[3].total, 5);
	free(fns);
	profile_free(p);
}

/* The same name as user code and as a kernel function are two functions. */
static void test_functions_keep_kinds_apart(void **state)
{
	struct profile *p = profile_new();
	struct frame user[] = { { "app", FRAME_PROCESS }, { "copy", FRAME_USER } };
	struct frame kernel[] = { { "app", FRAME_PROCESS }, { "copy", FRAME_KERNEL } };
	struct profile_function *fns;
	size_t n;

	(void)state;
	assert_int_equal(profile_add(p, user, 2, 3), 0);
	assert_int_equal(profile_add(p, kernel, 2, 5), 0);
	assert_int_equal(profile_functions(p, &fns, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(fns[0].kind, FRAME_KERNEL);
	assert_int_equal(fns[0].self, 5);
	assert_int_equal(fns[1].kind, FRAME_USER);
	assert_int_equal(fns[1].self, 3);
	free(fns);
	profile_free(p);
}

/* `ebprof top` shows the process beside each function: the one it was
 * sampled in most, and how many it was sampled in. */
static void test_functions_name_their_main_process(void **state)
{
	struct profile *p = profile_new();
	struct profile_function *fns;
	size_t n;

	(void)state;
	add_stack(p, "alpha;memcpy", 2);
	add_stack(p, "beta;main;memcpy", 5);
	add_stack(p, "beta;memcpy", 1);
	add_stack(p, "gamma;memcpy;memcpy", 4);
	add_stack(p, "gamma;only", 1);
	add_stack(p, "tie1;t", 3);
	add_stack(p, "tie0;t", 3);
	assert_int_equal(profile_functions(p, &fns, &n), 0);
	assert_int_equal(n, 4);
	assert_string_equal(fns[0].name, "memcpy");
	assert_int_equal(fns[0].total, 2 + 6 + 4);
	assert_string_equal(fns[0].process, "beta"); /* 6, recursion in gamma counts once */
	assert_int_equal(fns[0].processes, 3);
	assert_string_equal(fns[1].name, "t");
	assert_string_equal(fns[1].process, "tie0"); /* a tie goes to the first name */
	assert_int_equal(fns[1].processes, 2);
	assert_string_equal(fns[2].name, "only");
	assert_string_equal(fns[2].process, "gamma");
	assert_int_equal(fns[2].processes, 1);
	free(fns);
	profile_free(p);
}

static void test_cpu_percent_is_of_one_cpu(void **state)
{
	(void)state;
	assert_true(profile_cpu_percent(99, 99, 1.0) == 100.0);
	assert_true(profile_cpu_percent(396, 99, 2.0) == 200.0); /* two cores busy */
	assert_true(profile_cpu_percent(70, 100, 2.0) == 35.0);
	assert_true(profile_cpu_percent(5, 0, 1.0) == 0.0);
	assert_true(profile_cpu_percent(5, 99, 0) == 0.0);
}

/* Hiding kernel frames makes the kernel's time the caller's own, as if
 * kernel stacks were never taken; nothing is lost. */
static void test_add_without_kernel_frames(void **state)
{
	struct profile *src = profile_new(), *dst = profile_new();
	struct frame sys[] = { { "app", FRAME_PROCESS }, { "main", FRAME_USER },
			       { "write", FRAME_USER }, { "ksys_write", FRAME_KERNEL },
			       { "vfs_write", FRAME_KERNEL } };
	struct frame irq[] = { { "app", FRAME_PROCESS }, { "irq", FRAME_KERNEL } };
	struct frame user[] = { { "app", FRAME_PROCESS }, { "main", FRAME_USER },
				{ "write", FRAME_USER } };
	struct profile_function *fns;
	size_t n;

	(void)state;
	assert_int_equal(profile_add(src, sys, 5, 7), 0);
	assert_int_equal(profile_add(src, sys, 4, 2), 0);
	assert_int_equal(profile_add(src, irq, 2, 3), 0);
	assert_int_equal(profile_add(src, user, 3, 1), 0);
	assert_int_equal(profile_add_without(dst, src, FRAME_KERNEL), 0);
	assert_int_equal(profile_total(dst), profile_total(src));
	assert_int_equal(profile_functions(dst, &fns, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(fns[0].name, "write");
	assert_int_equal(fns[0].self, 7 + 2 + 1);
	assert_string_equal(fns[1].name, "main");
	free(fns);
	/* The irq stack kept its process frame: 3 samples of "app" itself. */
	assert_int_equal(profile_node_self(profile_node_child(profile_root(dst), 0), 0), 3);
	assert_int_equal(profile_add_without(dst, dst, FRAME_KERNEL), -EINVAL);
	assert_int_equal(profile_add_without(dst, src, FRAME_PROCESS), -EINVAL);
	assert_int_equal(profile_add_without(dst, src, FRAME_KIND_NR), -EINVAL);
	profile_free(src);
	profile_free(dst);
}

static void test_empty_profile_has_no_functions(void **state)
{
	struct profile *p = profile_new();
	struct profile_function *fns = (void *)1;
	size_t n = 99;

	(void)state;
	assert_int_equal(profile_functions(p, &fns, &n), 0);
	assert_null(fns);
	assert_int_equal(n, 0);
	assert_int_equal(profile_total(p), 0);
	assert_int_equal(profile_node_child_count(profile_root(p)), 0);
	profile_free(p);
}

static void test_second_weight_slot_is_separate(void **state)
{
	struct profile *p = profile_new();
	struct frame f[] = { { "app", FRAME_PROCESS }, { "work", FRAME_USER } };
	const struct profile_node *work;

	(void)state;
	assert_int_equal(profile_add_weight(p, 0, f, 2, 10), 0);
	assert_int_equal(profile_add_weight(p, 1, f, 2, 7), 0);
	assert_int_equal(profile_total(p), 10);
	work = profile_node_child(profile_node_child(profile_root(p), 0), 0);
	assert_int_equal(profile_node_self(work, 0), 10);
	assert_int_equal(profile_node_self(work, 1), 7);
	assert_int_equal(profile_node_total(work, 1), 7);
	assert_int_equal(profile_add_weight(p, PROFILE_WEIGHTS, f, 2, 1), -EINVAL);
	profile_free(p);
}

static void test_bad_stacks_are_rejected_and_change_nothing(void **state)
{
	struct profile *p = profile_new();
	struct frame f[] = { { "app", FRAME_PROCESS }, { NULL, FRAME_USER } };

	(void)state;
	assert_int_equal(profile_add(p, f, 0, 1), -EINVAL);
	assert_int_equal(profile_add(p, f, 2, 1), -EINVAL);
	assert_int_equal(profile_add(p, f, 1, 0), 0); /* zero samples: nothing */
	assert_int_equal(profile_total(p), 0);
	assert_int_equal(profile_node_child_count(profile_root(p)), 0);
	profile_free(p);
}

/* Compares two trees node by node: names, kinds, order, slot-0 weights. */
static void assert_same_tree(const struct profile_node *a, const struct profile_node *b)
{
	assert_string_equal(profile_node_name(a), profile_node_name(b));
	assert_int_equal(profile_node_kind(a), profile_node_kind(b));
	assert_int_equal(profile_node_total(a, 0), profile_node_total(b, 0));
	assert_int_equal(profile_node_self(a, 0), profile_node_self(b, 0));
	assert_int_equal(profile_node_child_count(a), profile_node_child_count(b));
	for (size_t i = 0; i < profile_node_child_count(a); i++)
		assert_same_tree(profile_node_child(a, i), profile_node_child(b, i));
}

static void random_stack(char *buf, size_t size, unsigned int *seed)
{
	int depth = 1 + rand_r(seed) % 12;
	size_t len = (size_t)snprintf(buf, size, "proc%d", rand_r(seed) % 3);

	for (int i = 0; i < depth; i++)
		len += (size_t)snprintf(buf + len, size - len, ";f%d", rand_r(seed) % 6);
}

static void test_merge_sums_exactly(void **state)
{
	struct profile *a = profile_new(), *b = profile_new(), *all = profile_new();
	struct profile *empty = profile_new();
	unsigned int seed = 42;
	char stack[256];

	(void)state;
	for (int i = 0; i < 3000; i++) {
		uint64_t count = 1 + (uint64_t)rand_r(&seed) % 100;

		random_stack(stack, sizeof(stack), &seed);
		add_stack(i % 3 ? a : b, stack, count);
		add_stack(all, stack, count);
	}
	assert_int_equal(profile_merge(a, b), 0);
	assert_int_equal(profile_total(a), profile_total(all));
	assert_int_equal(profile_stack_count(a), profile_stack_count(all));
	assert_int_equal(profile_max_depth(a), profile_max_depth(all));
	assert_same_tree(profile_root(a), profile_root(all));

	/* Into an empty profile, merge is a copy. */
	assert_int_equal(profile_merge(empty, all), 0);
	assert_same_tree(profile_root(empty), profile_root(all));
	assert_int_equal(profile_merge(all, all), -EINVAL);
	profile_free(a);
	profile_free(b);
	profile_free(all);
	profile_free(empty);
}

static void test_clear_forgets_stacks_and_profile_is_reusable(void **state)
{
	struct profile *p = profile_new();
	char name[64];

	(void)state;
	for (int i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "app;fn%d;leaf", i);
		add_stack(p, name, 1);
	}
	profile_clear(p);
	assert_int_equal(profile_total(p), 0);
	assert_int_equal(profile_stack_count(p), 0);
	assert_int_equal(profile_max_depth(p), 0);
	assert_int_equal(profile_node_child_count(profile_root(p)), 0);

	add_stack(p, "app;again", 2);
	assert_int_equal(profile_total(p), 2);
	assert_string_equal(
		profile_node_name(profile_node_child(profile_node_child(profile_root(p), 0), 0)),
		"again");
	profile_free(p);
}

/* The node at path (child indices from the root). */
static const struct profile_node *node_at(const struct profile *p, size_t depth,
					  const size_t *path)
{
	const struct profile_node *n = profile_root(p);

	for (size_t i = 0; i < depth; i++) {
		n = profile_node_child(n, path[i]);
		assert_non_null(n);
	}
	return n;
}

/*
 * Where a node's code is: the first frame that made the node says it
 * (later frames of the same function under that path add samples, not
 * addresses); mappings are copied and interned (equal content, one copy);
 * frames that say nothing give NULL and 0, a kernel frame an address only.
 */
static void test_nodes_keep_where_their_code_is(void **state)
{
	struct profile *p = profile_new();
	static const unsigned char id[] = { 0xde, 0xad, 0xbe, 0xef };
	char file[32] = "/usr/lib/libx.so";
	struct frame_mapping m1 = { 0x7f0000000000, 0x7f0000010000, 0x1000, file, id, sizeof(id) };
	struct frame_mapping m2 = m1; /* another copy, as the next drain hands out */
	struct frame a[] = { { "proc", FRAME_PROCESS },
			     { "main", FRAME_USER, &m1, 0x7f0000000100 },
			     { "work", FRAME_USER, &m1, 0x7f0000000200 },
			     { "do_syscall_64", FRAME_KERNEL, NULL, 0xffffffff81000200 } };
	struct frame b[] = { { "proc", FRAME_PROCESS },
			     { "main", FRAME_USER, &m2, 0x7f0000000180 },
			     { "rest", FRAME_USER, &m2, 0x7f0000000300 },
			     { "plain", FRAME_USER } };
	const struct profile_node *proc, *main_, *work, *rest, *kernel, *plain;
	const struct frame_mapping *m;

	(void)state;
	assert_int_equal(profile_add(p, a, 4, 1), 0);
	assert_int_equal(profile_add(p, b, 4, 1), 0);
	strcpy(file, "/changed"); /* the caller's buffers are its own again */
	proc = node_at(p, 1, (size_t[]){ 0 });
	main_ = node_at(p, 2, (size_t[]){ 0, 0 });
	rest = node_at(p, 3, (size_t[]){ 0, 0, 0 });
	plain = node_at(p, 4, (size_t[]){ 0, 0, 0, 0 });
	work = node_at(p, 3, (size_t[]){ 0, 0, 1 });
	kernel = node_at(p, 4, (size_t[]){ 0, 0, 1, 0 });
	assert_string_equal(profile_node_name(work), "work");
	assert_string_equal(profile_node_name(rest), "rest");

	assert_null(profile_node_mapping(p, proc));
	assert_int_equal(profile_node_address(p, proc), 0);
	assert_int_equal(profile_node_address(p, main_), 0x7f0000000100); /* a's, the first */
	assert_int_equal(profile_node_address(p, work), 0x7f0000000200);
	assert_int_equal(profile_node_address(p, rest), 0x7f0000000300);
	m = profile_node_mapping(p, main_);
	assert_non_null(m);
	assert_ptr_equal(profile_node_mapping(p, work), m);
	assert_ptr_equal(profile_node_mapping(p, rest), m); /* m2 is the same mapping */
	assert_ptr_not_equal(m, &m1);
	assert_string_equal(m->file, "/usr/lib/libx.so");
	assert_int_equal(m->start, 0x7f0000000000);
	assert_int_equal(m->limit, 0x7f0000010000);
	assert_int_equal(m->offset, 0x1000);
	assert_int_equal(m->build_id_len, sizeof(id));
	assert_memory_equal(m->build_id, id, sizeof(id));
	assert_null(profile_node_mapping(p, kernel));
	assert_int_equal(profile_node_address(p, kernel), 0xffffffff81000200);
	assert_null(profile_node_mapping(p, plain));
	assert_int_equal(profile_node_address(p, plain), 0);

	/* Another build of the file (another build-id) is another mapping. */
	{
		static const unsigned char other[] = { 1, 2, 3, 4 };
		struct frame_mapping m3 = { 0x7f0000000000, 0x7f0000010000, 0x1000,
					    "/usr/lib/libx.so", other, sizeof(other) };
		struct frame c[] = { { "proc2", FRAME_PROCESS },
				     { "main", FRAME_USER, &m3, 0x7f0000000100 } };

		assert_int_equal(profile_add(p, c, 2, 1), 0);
		main_ = node_at(p, 2, (size_t[]){ 1, 0 });
		assert_non_null(profile_node_mapping(p, main_));
		assert_ptr_not_equal(profile_node_mapping(p, main_), m);
		assert_memory_equal(profile_node_mapping(p, main_)->build_id, other, sizeof(other));
	}
	profile_free(p);
}

/* A merge copies locations into the destination, which owns its copies;
 * many mappings and a clear keep every one findable. */
static void test_locations_survive_merge_growth_and_clear(void **state)
{
	struct profile *src = profile_new(), *dst = profile_new();
	struct frame_mapping maps[3000];
	char names[3000][16];
	const struct profile_node *proc, *fn;

	(void)state;
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < 3000; i++) {
			maps[i] = (struct frame_mapping){ 0x10000ull * (uint64_t)(i + 1),
							  0x10000ull * (uint64_t)(i + 2), 0,
							  "/lib/libmany.so", NULL, 0 };
			snprintf(names[i], sizeof(names[i]), "f%04d", i);
			assert_int_equal(profile_add(src, (struct frame[]){
				{ "many", FRAME_PROCESS },
				{ names[i], FRAME_USER, &maps[i], maps[i].start + 0x10 } }, 2, 1), 0);
		}
		proc = node_at(src, 1, (size_t[]){ 0 });
		assert_int_equal(profile_node_child_count(proc), 3000);
		for (size_t i = 0; i < 3000; i++) {
			fn = profile_node_child(proc, i);
			assert_int_equal(profile_node_mapping(src, fn)->start, 0x10000ull * (i + 1));
			assert_int_equal(profile_node_address(src, fn), 0x10000ull * (i + 1) + 0x10);
		}
		if (!round)
			profile_clear(src);
	}
	assert_int_equal(profile_merge(dst, src), 0);
	proc = node_at(dst, 1, (size_t[]){ 0 });
	for (size_t i = 0; i < 3000; i++) {
		const struct profile_node *sfn = profile_node_child(node_at(src, 1, (size_t[]){ 0 }), i);

		fn = profile_node_child(proc, i);
		assert_ptr_not_equal(profile_node_mapping(dst, fn), profile_node_mapping(src, sfn));
		assert_int_equal(profile_node_mapping(dst, fn)->start, profile_node_mapping(src, sfn)->start);
		assert_string_equal(profile_node_mapping(dst, fn)->file, "/lib/libmany.so");
		assert_int_equal(profile_node_address(dst, fn), profile_node_address(src, sfn));
	}
	profile_free(src);
	assert_string_equal(profile_node_mapping(dst, profile_node_child(proc, 7))->file,
			    "/lib/libmany.so");
	profile_free(dst);
}

/* What a walk saw: "depth:name" per visit, "^name" per leave. */
struct walk_log {
	char text[512];
	const char *skip; /* a name whose children are passed over */
	const char *stop; /* a name that stops the walk with -EINTR */
};

static int log_visit(const struct profile_node *n, size_t depth, void *ctx)
{
	struct walk_log *w = ctx;
	size_t len = strlen(w->text);

	snprintf(w->text + len, sizeof(w->text) - len, "%zu:%s ", depth, profile_node_name(n));
	if (w->stop && !strcmp(profile_node_name(n), w->stop))
		return -EINTR;
	return w->skip && !strcmp(profile_node_name(n), w->skip) ? PROFILE_WALK_SKIP : 0;
}

static void log_leave(const struct profile_node *n, size_t depth, void *ctx)
{
	struct walk_log *w = ctx;
	size_t len = strlen(w->text);

	(void)depth;
	snprintf(w->text + len, sizeof(w->text) - len, "^%s ", profile_node_name(n));
}

static void test_walk_visits_depth_first_in_order_and_obeys_its_visitor(void **state)
{
	struct profile *p = profile_new();
	struct walk_log w = { "" };

	(void)state;
	add_stack(p, "app;main;work", 3);
	add_stack(p, "app;main;idle", 1);
	add_stack(p, "bee;go", 2);
	assert_int_equal(profile_walk(p, 0, log_visit, log_leave, &w), 0);
	assert_string_equal(w.text, "1:app 2:main 3:idle ^idle 3:work ^work ^main ^app "
				    "1:bee 2:go ^go ^bee ");

	w = (struct walk_log){ "", .skip = "main" };
	assert_int_equal(profile_walk(p, 0, log_visit, NULL, &w), 0);
	assert_string_equal(w.text, "1:app 2:main 1:bee 2:go ");

	w = (struct walk_log){ "", .stop = "work" };
	assert_int_equal(profile_walk(p, 0, log_visit, NULL, &w), -EINTR);
	assert_string_equal(w.text, "1:app 2:main 3:idle 3:work ");

	/* Slot 1 holds nothing here: every node has zero weight there. */
	w = (struct walk_log){ "" };
	assert_int_equal(profile_walk(p, 1, log_visit, NULL, &w), 0);
	assert_string_equal(w.text, "");
	profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_stack_twice_is_one_node_with_summed_counts),
		cmocka_unit_test(test_names_are_copied),
		cmocka_unit_test(test_children_order_does_not_depend_on_insertion_order),
		cmocka_unit_test(test_wide_fanout_stays_sorted_and_found),
		cmocka_unit_test(test_very_deep_stack_counts_at_every_level),
		cmocka_unit_test(test_recursion_counts_once_in_total),
		cmocka_unit_test(test_functions_sorted_by_self_then_total_then_name),
		cmocka_unit_test(test_functions_keep_kinds_apart),
		cmocka_unit_test(test_empty_profile_has_no_functions),
		cmocka_unit_test(test_second_weight_slot_is_separate),
		cmocka_unit_test(test_bad_stacks_are_rejected_and_change_nothing),
		cmocka_unit_test(test_merge_sums_exactly),
		cmocka_unit_test(test_functions_name_their_main_process),
		cmocka_unit_test(test_cpu_percent_is_of_one_cpu),
		cmocka_unit_test(test_add_without_kernel_frames),
		cmocka_unit_test(test_clear_forgets_stacks_and_profile_is_reusable),
		cmocka_unit_test(test_bytes_follow_the_tree),
		cmocka_unit_test(test_nodes_keep_where_their_code_is),
		cmocka_unit_test(test_locations_survive_merge_growth_and_clear),
		cmocka_unit_test(test_walk_visits_depth_first_in_order_and_obeys_its_visitor),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
