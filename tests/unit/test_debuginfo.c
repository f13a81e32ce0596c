/*
 * debuginfo tests: the symfix fixture is stripped at test time with
 * objcopy, its symbols moved to a separate debug file found by build-id
 * or by .gnu_debuglink, or packed into .gnu_debugdata (MiniDebugInfo).
 * fixture_alpha is not exported, so only the debug symbols can name it.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <gelf.h>

#include "symbolizer/debuginfo.h"
#include "symbolizer/elfsym.h"
#include "symbolizer/target.h"

struct scratch {
	char dir[64];
	char fixture[4096];
	uint64_t alpha; /* fixture_alpha's address in the unstripped file */
};

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

static uint64_t find_alpha(const char *path)
{
	struct elfsym *elf = NULL;
	uint64_t result = 0;

	assert_int_equal(elfsym_open(path, &elf), 0);
	for (uint64_t v = 0x401000; v < 0x402000 && !result; v++) {
		uint64_t offset;
		const struct elfsym_symbol *s = elfsym_lookup(elf, v, &offset);

		if (s && !offset && !strcmp(s->name, "fixture_alpha"))
			result = v;
	}
	elfsym_free(elf);
	return result;
}

static int setup(void **state)
{
	struct scratch *s = calloc(1, sizeof(*s));
	char exe[2048];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	assert_true(len > 0);
	exe[len] = '\0';
	*strrchr(exe, '/') = '\0';
	snprintf(s->fixture, sizeof(s->fixture), "%s/../fixtures/symfix-nopie", exe);
	strcpy(s->dir, "/tmp/test_debuginfo.XXXXXX");
	assert_non_null(mkdtemp(s->dir));
	s->alpha = find_alpha(s->fixture);
	assert_true(s->alpha != 0);
	*state = s;
	return 0;
}

static int teardown(void **state)
{
	struct scratch *s = *state;

	run("rm -rf '%s'", s->dir);
	free(s);
	return 0;
}

/* The name elfsym gives the unstripped file's fixture_alpha address, or NULL. */
static const char *name_at(const char *path, const struct debuginfo_paths *paths, uint64_t addr,
			   struct elfsym **elf)
{
	const struct elfsym_symbol *sym;

	assert_int_equal(elfsym_open_debug(path, paths, elf), 0);
	sym = elfsym_lookup(*elf, addr, NULL);
	return sym ? sym->name : NULL;
}

static void build_id_hex(const char *path, char *hex)
{
	unsigned char id[64];
	int fd = open(path, O_RDONLY), len;
	Elf *e;

	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	len = debuginfo_build_id(e, id, sizeof(id));
	assert_true(len >= 2);
	for (int i = 0; i < len; i++)
		sprintf(hex + 2 * i, "%02x", id[i]);
	elf_end(e);
	close(fd);
}

static void test_stripped_binary_named_through_build_id(void **state)
{
	struct scratch *s = *state;
	struct debuginfo_paths paths = {0};
	struct elfsym *elf = NULL;
	char root[128], hex[130], bin[128];
	const char *name;

	snprintf(bin, sizeof(bin), "%s/stripped", s->dir);
	snprintf(root, sizeof(root), "%s/debug", s->dir);
	run("objcopy --only-keep-debug '%s' '%s/full.debug'", s->fixture, s->dir);
	run("objcopy --strip-debug --strip-unneeded '%s' '%s'", s->fixture, bin);
	build_id_hex(bin, hex);
	run("mkdir -p '%s/.build-id/%.2s' && cp '%s/full.debug' '%s/.build-id/%.2s/%s.debug'", root,
	    hex, s->dir, root, hex, hex + 2);

	/* Stripped and on its own: the function is not named. */
	name = name_at(bin, NULL, s->alpha, &elf);
	assert_true(!name || strcmp(name, "fixture_alpha"));
	elfsym_free(elf);

	paths.debug_root = root;
	name = name_at(bin, &paths, s->alpha, &elf);
	assert_non_null(name);
	assert_string_equal(name, "fixture_alpha");
	elfsym_free(elf);

	/* A process's root is searched first, ours after: both find it. */
	paths.root = s->dir; /* a root holding no debug tree */
	name = name_at(bin, &paths, s->alpha, &elf);
	assert_string_equal(name, "fixture_alpha");
	elfsym_free(elf);
}

static void test_debuglink_found_beside_and_crc_checked(void **state)
{
	struct scratch *s = *state;
	struct debuginfo_paths paths = {.debug_root = "/nonexistent"};
	struct elfsym *elf = NULL;
	char bin[128];
	const char *name;

	/* No build-id: only the debuglink can lead to the symbols. */
	run("mkdir -p '%s/bin/.debug' && objcopy --only-keep-debug "
	    "--remove-section=.note.gnu.build-id '%s' '%s/bin/.debug/symfix.debug'",
	    s->dir, s->fixture, s->dir);
	snprintf(bin, sizeof(bin), "%s/bin/linked", s->dir);
	run("cd '%s/bin/.debug' && objcopy --strip-all --remove-section=.note.gnu.build-id "
	    "--add-gnu-debuglink=symfix.debug '%s' '%s'",
	    s->dir, s->fixture, bin);
	paths.path = bin;
	name = name_at(bin, &paths, s->alpha, &elf);
	assert_non_null(name);
	assert_string_equal(name, "fixture_alpha");
	elfsym_free(elf);

	/* A debug file of another build (its CRC differs) is not used. */
	run("printf x >> '%s/bin/.debug/symfix.debug'", s->dir);
	name = name_at(bin, &paths, s->alpha, &elf);
	assert_true(!name || strcmp(name, "fixture_alpha"));
	elfsym_free(elf);
}

static void test_minidebuginfo_is_read(void **state)
{
	struct scratch *s = *state;
	struct elfsym *elf = NULL;
	char bin[128];
	const char *name;

	snprintf(bin, sizeof(bin), "%s/mini", s->dir);
	run("objcopy --only-keep-debug '%s' '%s/mini.debug' && objcopy --strip-debug "
	    "'%s/mini.debug' '%s/mini.syms' && xz -f '%s/mini.syms'",
	    s->fixture, s->dir, s->dir, s->dir, s->dir);
	run("objcopy --strip-all --add-section .gnu_debugdata='%s/mini.syms.xz' '%s' '%s'", s->dir,
	    s->fixture, bin);
	/* Self-contained: no paths needed. */
	name = name_at(bin, NULL, s->alpha, &elf);
	assert_non_null(name);
	assert_string_equal(name, "fixture_alpha");
	elfsym_free(elf);

	/* Garbage in .gnu_debugdata is refused, and the file still loads. */
	run("head -c 100 /dev/urandom > '%s/junk.xz' && objcopy --strip-all --add-section "
	    ".gnu_debugdata='%s/junk.xz' '%s' '%s'",
	    s->dir, s->dir, s->fixture, bin);
	name = name_at(bin, NULL, s->alpha, &elf);
	assert_true(!name || strcmp(name, "fixture_alpha"));
	elfsym_free(elf);
}

/*
 * Debug files are looked for inside the process's root first, where the
 * process decides what a path holds. A FIFO at its build-id path used to
 * block the open; now the gate refuses it at once (and counts it), and
 * the debug file in our own tree is found after it.
 */
static void test_debug_candidates_go_through_the_gate(void **state)
{
	struct scratch *s = *state;
	struct target *gate = target_new(NULL);
	struct debuginfo_paths paths = { 0 };
	struct elfsym *elf = NULL;
	uint64_t refused[TARGET_CAUSES];
	char root[128], ctr[128], hex[130], bin[128];
	struct timespec t0, t1;
	const char *name;

	assert_non_null(gate);
	snprintf(bin, sizeof(bin), "%s/stripped", s->dir);
	snprintf(root, sizeof(root), "%s/debug", s->dir);
	snprintf(ctr, sizeof(ctr), "%s/ctr", s->dir);
	run("objcopy --only-keep-debug '%s' '%s/full.debug'", s->fixture, s->dir);
	run("objcopy --strip-debug --strip-unneeded '%s' '%s'", s->fixture, bin);
	build_id_hex(bin, hex);
	run("mkdir -p '%s/.build-id/%.2s' && cp '%s/full.debug' '%s/.build-id/%.2s/%s.debug'", root,
	    hex, s->dir, root, hex, hex + 2);
	/* The container's tree: the same path is a FIFO there. */
	run("mkdir -p '%s%s/.build-id/%.2s' && mkfifo '%s%s/.build-id/%.2s/%s.debug'", ctr, root,
	    hex, ctr, root, hex, hex + 2);
	paths.debug_root = root;
	paths.root = ctr;
	paths.gate = gate;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	name = name_at(bin, &paths, s->alpha, &elf);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_true(t1.tv_sec - t0.tv_sec < 2);
	assert_non_null(name);
	assert_string_equal(name, "fixture_alpha");
	elfsym_free(elf);
	target_stats(gate, refused);
	assert_int_equal(refused[TARGET_NOT_REGULAR], 1);
	assert_int_equal(refused[TARGET_GONE], 0); /* absent candidates are no refusal */
	target_free(gate);
}

/* A .gnu_debuglink section is a name and a CRC; one of 2 MiB is not read. */
static void test_oversized_debuglink_is_not_read(void **state)
{
	struct scratch *s = *state;
	struct debuginfo_paths paths = { .debug_root = "/nonexistent" };
	struct elfsym_breaches breaches = { 0 };
	struct elfsym_options options = { .debug = &paths, .breaches = &breaches };
	struct elfsym *elf = NULL;
	char bin[128];
	int fd;

	run("mkdir -p '%s/bin' && head -c 2097152 /dev/zero | tr '\\\\0' a > '%s/big.link'", s->dir,
	    s->dir);
	snprintf(bin, sizeof(bin), "%s/bin/linked", s->dir);
	run("objcopy --strip-all --add-section .gnu_debuglink='%s/big.link' '%s' '%s'", s->dir,
	    s->fixture, bin);
	paths.path = bin;
	fd = open(bin, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(elfsym_open_fd_with(fd, &options, &elf), 0);
	assert_int_equal(breaches.sections, 1);
	elfsym_free(elf);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_stripped_binary_named_through_build_id, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_debuglink_found_beside_and_crc_checked, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_minidebuginfo_is_read, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_debug_candidates_go_through_the_gate, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_oversized_debuglink_is_not_read, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
