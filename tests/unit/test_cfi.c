/*
 * cfi tests: the rows read from the cfifix fixture (hand-written CFI, one
 * function per kind of rule; tests/fixtures/cfifix.c), from its PIE,
 * non-PIE and shared builds, from a .debug_frame-only copy and from a
 * stripped copy whose tables live in a separate debug file.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "symbolizer/cfi.h"
#include "symbolizer/debuginfo.h"

struct fixture {
	char path[4096];
	char dir[64];
	struct cfi *cfi;
};

static void fixture_path(const char *name, char *out, size_t size)
{
	char exe[4096];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	assert_true(len > 0);
	exe[len] = '\0';
	*strrchr(exe, '/') = '\0';
	snprintf(out, size, "%s/../fixtures/%s", exe, name);
}

static void run(const char *fmt, ...)
{
	char cmd[16384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (system(cmd))
		fail_msg("command failed: %s", cmd);
}

/* A symbol's address in the file at path, by libelf (the .symtab is kept). */
static uint64_t symbol(const char *path, const char *name)
{
	FILE *nm;
	char cmd[8192], line[512];
	uint64_t addr = 0;

	snprintf(cmd, sizeof(cmd), "nm --defined-only '%s'", path);
	nm = popen(cmd, "r");
	assert_non_null(nm);
	while (fgets(line, sizeof(line), nm)) {
		char type, sym[256];
		unsigned long long v;

		if (sscanf(line, "%llx %c %255s", &v, &type, sym) == 3 && !strcmp(sym, name))
			addr = v;
	}
	pclose(nm);
	if (!addr)
		fail_msg("%s has no symbol %s", path, name);
	return addr;
}

static const struct cfi_rule *at(const struct fixture *f, const char *fn, uint64_t off)
{
	return cfi_lookup(f->cfi, symbol(f->path, fn) + off);
}

static int open_named(void **state, const char *name)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	fixture_path(name, f->path, sizeof(f->path));
	assert_int_equal(cfi_open(f->path, NULL, &f->cfi), 0);
	*state = f;
	return 0;
}

static int setup_pie(void **state)
{
	return open_named(state, "cfifix-pie");
}

static int setup_nopie(void **state)
{
	return open_named(state, "cfifix-nopie");
}

static int setup_so(void **state)
{
	return open_named(state, "libcfifix.so");
}

static int setup_debugframe(void **state)
{
	return open_named(state, "cfifix-debugframe");
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	cfi_free(f->cfi);
	if (f->dir[0])
		run("rm -rf %s", f->dir);
	free(f);
	return 0;
}

static void test_push_mov_pop_frame(void **state)
{
	const struct fixture *f = *state;
	const struct cfi_rule *r;

	r = at(f, "cfix_frame", 0);
	assert_non_null(r);
	assert_int_equal(r->cfa_kind, CFI_CFA_REG);
	assert_int_equal(r->cfa_reg, CFI_REG_RSP);
	assert_int_equal(r->cfa_off, 8);
	assert_int_equal(r->ra_kind, CFI_AT_CFA);
	assert_int_equal(r->ra_off, -8);
	assert_int_equal(r->rbp_kind, CFI_SAME);
	r = at(f, "cfix_frame", 1); /* after push %rbp */
	assert_int_equal(r->cfa_off, 16);
	assert_int_equal(r->rbp_kind, CFI_AT_CFA);
	assert_int_equal(r->rbp_off, -16);
	r = at(f, "cfix_frame", 4); /* after mov %rsp, %rbp */
	assert_int_equal(r->cfa_reg, CFI_REG_RBP);
	assert_int_equal(r->cfa_off, 16);
	r = at(f, "cfix_frame", 9); /* after pop %rbp */
	assert_int_equal(r->cfa_reg, CFI_REG_RSP);
	assert_int_equal(r->cfa_off, 8);
	assert_int_equal(r->rbp_kind, CFI_AT_CFA); /* the directive left it: as the CFI says */
}

static void test_expressions_the_compilers_write(void **state)
{
	const struct fixture *f = *state;
	const struct cfi_rule *r;

	r = at(f, "cfix_realign", 1);
	assert_int_equal(r->cfa_kind, CFI_CFA_DEREF);
	assert_int_equal(r->cfa_reg, CFI_REG_RBP);
	assert_int_equal(r->cfa_off, -8);
	assert_int_equal(r->cfa_add, 0);
	assert_int_equal(r->rbp_kind, CFI_AT_REG);
	assert_int_equal(r->rbp_reg, CFI_REG_RBP);
	assert_int_equal(r->rbp_off, 0);
	assert_true(r->flags & CFI_CFA_EXPR);
	r = at(f, "cfix_deref_add", 1);
	assert_int_equal(r->cfa_kind, CFI_CFA_DEREF);
	assert_int_equal(r->cfa_reg, CFI_REG_RSP);
	assert_int_equal(r->cfa_off, 24);
	assert_int_equal(r->cfa_add, 8);
	r = at(f, "cfix_plt", 1);
	assert_int_equal(r->cfa_kind, CFI_CFA_PLT);
	assert_int_equal(r->cfa_off, 11);
	r = at(f, "cfix_plt", 0);
	assert_int_equal(r->cfa_kind, CFI_CFA_REG); /* before the expression */
}

static void test_signal_end_and_register_rules(void **state)
{
	const struct fixture *f = *state;
	const struct cfi_rule *r;

	r = at(f, "cfix_signal", 1);
	assert_true(r->flags & CFI_SIGNAL);
	assert_int_equal(r->cfa_off, 160);
	assert_false(at(f, "cfix_frame", 0)->flags & CFI_SIGNAL);
	r = at(f, "cfix_outermost", 0);
	assert_int_equal(r->ra_kind, CFI_UNDEFINED);
	r = at(f, "cfix_inreg", 1);
	assert_int_equal(r->ra_kind, CFI_IN_REG);
	assert_int_equal(r->ra_reg, 5); /* rdi */
}

static void test_remember_and_restore_state(void **state)
{
	const struct fixture *f = *state;

	assert_int_equal(at(f, "cfix_remember", 1)->cfa_off, 16);
	assert_int_equal(at(f, "cfix_remember", 2)->cfa_off, 8);  /* after pop */
	assert_int_equal(at(f, "cfix_remember", 3)->cfa_off, 16); /* restored after ret */
}

static void test_what_we_cannot_evaluate_is_unsupported(void **state)
{
	const struct fixture *f = *state;
	struct cfi_stats st;

	assert_int_equal(at(f, "cfix_unsupported", 1)->cfa_kind, CFI_CFA_UNSUPPORTED);
	assert_int_equal(at(f, "cfix_unsupported", 0)->cfa_kind, CFI_CFA_REG);
	assert_int_equal(at(f, "cfix_big", 1)->cfa_kind, CFI_CFA_UNSUPPORTED);
	cfi_stats(f->cfi, &st);
	assert_true(st.unsupported >= 2);
	assert_int_equal(st.bad_entries, 0);
}

static void test_functions_and_gaps(void **state)
{
	const struct fixture *f = *state;
	const struct cfi_function *fn;
	size_t n, i;
	uint64_t start = symbol(f->path, "cfix_frame");

	fn = cfi_functions(f->cfi, &n);
	for (i = 0; i < n && fn[i].start != start; i++)
		;
	assert_true(i < n);
	assert_int_equal(fn[i].end - fn[i].start, 10); /* push 1, mov 3, 4 nops, pop 1, ret 1 */
	/* The padding after it belongs to no FDE. */
	assert_null(cfi_lookup(f->cfi, start + 12));
	for (i = 1; i < n; i++)
		assert_true(fn[i].start >= fn[i - 1].end);
}

static void test_vaddr_to_offset(void **state)
{
	const struct fixture *f = *state;
	uint64_t off, vaddr = symbol(f->path, "cfix_frame");

	assert_int_equal(cfi_vaddr_to_offset(f->cfi, vaddr, &off), 0);
	assert_true(off <= vaddr);
	assert_int_equal(cfi_vaddr_to_offset(f->cfi, 0x7fffffff0000, &off), -ENOENT);
}

/* The same CFI in .debug_frame (cfifix-debugframe) gives the same rules. */
static void test_debug_frame(void **state)
{
	struct fixture *f = *state;
	struct cfi_stats st;

	/* Only the C runtime's start files bring .eh_frame; cfix_* are in .debug_frame only. */
	cfi_stats(f->cfi, &st);
	assert_true(st.debug_frame_bytes > 0);
	assert_int_equal(st.source, CFI_FROM_FILE);
	test_push_mov_pop_frame(state);
	test_expressions_the_compilers_write(state);
	test_signal_end_and_register_rules(state);
}

/* Stripped of .debug_frame, the file finds it in its debug file, by build-id. */
static void test_tables_from_the_debug_file(void **state)
{
	struct fixture *f = *state;
	char stripped[4200], root[4200], debug[8400];
	struct debuginfo_paths paths = { .debug_root = root };
	unsigned char id[64];
	char hex[130];
	struct cfi *cfi;
	struct cfi_stats st;
	int fd, len;
	Elf *e;

	snprintf(f->dir, sizeof(f->dir), "/tmp/test_cfi.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(stripped, sizeof(stripped), "%s/stripped", f->dir);
	snprintf(root, sizeof(root), "%s/debug", f->dir);
	fd = open(f->path, O_RDONLY);
	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	len = debuginfo_build_id(e, id, sizeof(id));
	elf_end(e);
	close(fd);
	assert_true(len > 1);
	for (int i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	snprintf(debug, sizeof(debug), "%s/.build-id/%.2s/%s.debug", root, hex, hex + 2);
	run("mkdir -p %s/.build-id/%.2s", root, hex);
	run("objcopy --only-keep-debug '%s' %s", f->path, debug);
	run("strip -o %s '%s'", stripped, f->path);
	assert_int_equal(cfi_open(stripped, NULL, &cfi), 0);
	cfi_stats(cfi, &st);
	/* Stripped: only the start files' .eh_frame is left, cfix_frame has no row. */
	assert_null(cfi_lookup(cfi, symbol(f->path, "cfix_frame")));
	cfi_free(cfi);
	assert_int_equal(cfi_open(stripped, &paths, &cfi), 0);
	cfi_stats(cfi, &st);
	assert_int_equal(st.source, CFI_FROM_DEBUG_FILE);
	cfi_free(f->cfi);
	f->cfi = cfi; /* the stripped file has the same addresses */
	test_push_mov_pop_frame(state);
	test_signal_end_and_register_rules(state);
}

static void test_garbage_is_refused(void **state)
{
	static const char junk[] = "\177ELF this is not really an ELF file at all";
	struct cfi *cfi;

	(void)state;
	assert_int_equal(cfi_open_mem(junk, sizeof(junk), &cfi), -ENOEXEC);
	assert_null(cfi);
	assert_int_equal(cfi_open("/nonexistent/file", NULL, &cfi), -ENOENT);
}

#define ON_EVERY_BUILD(t)                                                   \
	cmocka_unit_test_setup_teardown(t, setup_pie, teardown),            \
	cmocka_unit_test_setup_teardown(t, setup_nopie, teardown),          \
	cmocka_unit_test_setup_teardown(t, setup_so, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		ON_EVERY_BUILD(test_push_mov_pop_frame),
		ON_EVERY_BUILD(test_expressions_the_compilers_write),
		ON_EVERY_BUILD(test_signal_end_and_register_rules),
		ON_EVERY_BUILD(test_remember_and_restore_state),
		ON_EVERY_BUILD(test_what_we_cannot_evaluate_is_unsupported),
		ON_EVERY_BUILD(test_functions_and_gaps),
		ON_EVERY_BUILD(test_vaddr_to_offset),
		cmocka_unit_test_setup_teardown(test_debug_frame, setup_debugframe, teardown),
		cmocka_unit_test_setup_teardown(test_tables_from_the_debug_file, setup_debugframe,
						teardown),
		cmocka_unit_test(test_garbage_is_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
