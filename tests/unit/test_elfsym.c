/*
 * elfsym tests against the symfix fixture built three ways (PIE, non-PIE,
 * shared object). Addresses come from the running fixture itself and are
 * translated through its real /proc/PID/maps, the way the symbolizer sees
 * a sampled address.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "symbolizer/elfsym.h"
#include "symbolizer/procmaps.h"

#define NR_FUNCS 4
static const char *const FUNCS[NR_FUNCS] = {"fixture_alpha", "fixture_beta", "fixture_sized",
					    "fixture_nosize"};

struct child {
	pid_t pid;
	FILE *in; /* the child's stdin: closing it ends the child */
	uint64_t addrs[NR_FUNCS];
};

/* build/fixtures/NAME, found from this test's path (build/tests/test_elfsym). */
static void fixture_path(const char *name, char *out, size_t size)
{
	char exe[4096];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	assert_true(len > 0);
	exe[len] = '\0';
	slash = strrchr(exe, '/');
	assert_non_null(slash);
	*slash = '\0';
	snprintf(out, size, "%s/../fixtures/%s", exe, name);
}

static void child_start(struct child *c, const char *name)
{
	int to_child[2], from_child[2];
	char path[4096], line[256];
	FILE *out;

	fixture_path(name, path, sizeof(path));
	assert_int_equal(pipe2(to_child, O_CLOEXEC), 0);
	assert_int_equal(pipe2(from_child, O_CLOEXEC), 0);
	c->pid = fork();
	assert_true(c->pid >= 0);
	if (!c->pid) {
		dup2(to_child[0], 0);
		dup2(from_child[1], 1);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	close(to_child[0]);
	close(from_child[1]);
	c->in = fdopen(to_child[1], "w");
	out = fdopen(from_child[0], "r");
	assert_non_null(c->in);
	assert_non_null(out);
	memset(c->addrs, 0, sizeof(c->addrs));
	while (fgets(line, sizeof(line), out) && strcmp(line, "ready\n")) {
		char fn[64];
		void *addr;

		assert_int_equal(sscanf(line, "%63s %p", fn, &addr), 2);
		for (int i = 0; i < NR_FUNCS; i++)
			if (!strcmp(fn, FUNCS[i]))
				c->addrs[i] = (uint64_t)(uintptr_t)addr;
	}
	fclose(out);
	for (int i = 0; i < NR_FUNCS; i++)
		assert_true(c->addrs[i] != 0);
}

static void child_stop(struct child *c)
{
	int status;

	fclose(c->in);
	assert_int_equal(waitpid(c->pid, &status, 0), c->pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* Resolves a process address as the symbolizer does: maps, file offset, segment, symbol. */
static const char *resolve(pid_t pid, uint64_t addr, uint64_t *offset, char *module,
			   size_t module_size)
{
	static char name[256];
	const struct procmaps_mapping *m;
	const struct elfsym_symbol *s;
	struct procmaps *maps = NULL;
	struct elfsym *elf = NULL;
	char path[64];
	uint64_t file_offset, vaddr;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	assert_int_equal(procmaps_load(path, &maps), 0);
	m = procmaps_find(maps, addr, NULL);
	assert_non_null(m);
	assert_int_equal(elfsym_open(m->path, &elf), 0);
	file_offset = addr - m->start + m->pgoff;
	assert_int_equal(elfsym_offset_to_vaddr(elf, file_offset, &vaddr), 0);
	s = elfsym_lookup(elf, vaddr, offset);
	if (s) {
		snprintf(name, sizeof(name), "%s", s->name);
	} else {
		const char *base = strrchr(m->path, '/');

		snprintf(name, sizeof(name), "[%s+0x%llx]", base ? base + 1 : m->path,
			 (unsigned long long)file_offset);
	}
	if (module)
		snprintf(module, module_size, "%s", m->path);
	elfsym_free(elf);
	procmaps_free(maps);
	return name;
}

static void check_executable(const char *fixture)
{
	struct child c;
	uint64_t offset = 99;

	child_start(&c, fixture);
	for (int i = 0; i < NR_FUNCS; i++) {
		assert_string_equal(resolve(c.pid, c.addrs[i], &offset, NULL, 0), FUNCS[i]);
		assert_int_equal(offset, 0);
	}
	/* Inside a function: its name, and the offset in it. */
	assert_string_equal(resolve(c.pid, c.addrs[0] + 5, &offset, NULL, 0), "fixture_alpha");
	assert_int_equal(offset, 5);
	child_stop(&c);
}

static void test_pie_executable(void **state)
{
	(void)state;
	check_executable("symfix-pie");
}

static void test_non_pie_executable(void **state)
{
	(void)state;
	check_executable("symfix-nopie");
}

static void *open_library(void)
{
	char path[4096];
	void *lib;

	fixture_path("libsymfix.so", path, sizeof(path));
	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(lib);
	return lib;
}

static uint64_t lib_addr(void *lib, const char *name)
{
	void *addr = dlsym(lib, name);

	assert_non_null(addr);
	return (uint64_t)(uintptr_t)addr;
}

static void test_shared_object(void **state)
{
	void *lib = open_library();
	uint64_t offset = 99;

	(void)state;
	for (int i = 0; i < NR_FUNCS; i++) {
		/* One byte in, except in fixture_sized, which is one byte long. */
		uint64_t in = strcmp(FUNCS[i], "fixture_sized") ? 1 : 0;

		assert_string_equal(
		    resolve(getpid(), lib_addr(lib, FUNCS[i]) + in, &offset, NULL, 0), FUNCS[i]);
		assert_int_equal(offset, in);
	}
	dlclose(lib);
}

static void test_address_past_symbol_size_is_not_that_symbol(void **state)
{
	void *lib = open_library();
	uint64_t sized = lib_addr(lib, "fixture_sized");
	char module[4096], expect[4096];
	const char *name;

	(void)state;
	/* fixture_sized is 1 byte long, then 32 bytes of padding. */
	assert_string_equal(resolve(getpid(), sized, NULL, NULL, 0), "fixture_sized");
	name = resolve(getpid(), sized + 8, NULL, module, sizeof(module));
	assert_memory_equal(name, "[libsymfix.so+0x", 16);
	/* The offset named is the file offset of the address. */
	{
		struct elfsym *elf = NULL;
		const struct elfsym_symbol *s;
		uint64_t vaddr_sized = 0;

		assert_int_equal(elfsym_open(module, &elf), 0);
		for (uint64_t off = 0; off < 0x100000 && !vaddr_sized; off++) {
			uint64_t v;

			if (elfsym_offset_to_vaddr(elf, off, &v))
				continue;
			s = elfsym_lookup(elf, v, NULL);
			if (s && !strcmp(s->name, "fixture_sized")) {
				vaddr_sized = v;
				snprintf(expect, sizeof(expect), "[libsymfix.so+0x%llx]",
					 (unsigned long long)(off + 8));
			}
		}
		assert_true(vaddr_sized != 0);
		assert_string_equal(name, expect);
		elfsym_free(elf);
	}
	dlclose(lib);
}

static void test_zero_size_symbol_reaches_next_symbol(void **state)
{
	void *lib = open_library();
	uint64_t nosize = lib_addr(lib, "fixture_nosize");
	uint64_t alpha = lib_addr(lib, "fixture_alpha");
	uint64_t offset;

	(void)state;
	assert_true(alpha > nosize);
	assert_string_equal(resolve(getpid(), alpha - 1, &offset, NULL, 0), "fixture_nosize");
	assert_int_equal(offset, alpha - 1 - nosize);
	assert_string_equal(resolve(getpid(), alpha, NULL, NULL, 0), "fixture_alpha");
	dlclose(lib);
}

static void test_alias_prefers_the_public_name(void **state)
{
	/* libc exports __sched_yield (global) and sched_yield (weak) at one address. */
	uint64_t addr = (uint64_t)(uintptr_t)dlsym(RTLD_DEFAULT, "sched_yield");

	(void)state;
	assert_true(addr != 0);
	assert_string_equal(resolve(getpid(), addr + 1, NULL, NULL, 0), "sched_yield");
}

static void test_segments_recorded(void **state)
{
	char path[4096];
	struct elfsym *elf = NULL;
	bool exec = false;

	(void)state;
	fixture_path("symfix-nopie", path, sizeof(path));
	assert_int_equal(elfsym_open(path, &elf), 0);
	assert_true(elfsym_segment_count(elf) >= 2);
	for (size_t i = 0; i < elfsym_segment_count(elf); i++) {
		const struct elfsym_segment *seg = elfsym_segment_at(elf, i);

		assert_true(seg->memsz >= seg->filesz);
		if (seg->flags & 1 /* PF_X */) {
			exec = true;
			/* Non-PIE: linked at 0x400000 and up, not at 0. */
			assert_true(seg->vaddr >= 0x400000);
		}
	}
	assert_true(exec);
	/* An offset no segment holds. */
	{
		uint64_t v;

		assert_int_equal(elfsym_offset_to_vaddr(elf, 0x7fffffff, &v), -ENOENT);
	}
	elfsym_free(elf);
}

static void copy_prefix(const char *from, const char *to, off_t len)
{
	char buf[4096];
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	assert_true(in >= 0 && out >= 0);
	while (len > 0) {
		ssize_t n = read(in, buf, len < (off_t)sizeof(buf) ? (size_t)len : sizeof(buf));

		assert_true(n > 0);
		assert_int_equal(write(out, buf, (size_t)n), n);
		len -= n;
	}
	close(in);
	close(out);
}

/* The build-id is the file's own, as readelf prints it; a file without
 * one (linked with --build-id=none) has none. */
static void test_build_id_is_the_files(void **state)
{
	char path[4096], cmd[4200 + 64], want[128] = "", got[129] = "", plain[] = "/tmp/test_elfsym.XXXXXX";
	struct elfsym *elf = NULL;
	const unsigned char *id;
	size_t len;
	FILE *readelf;

	(void)state;
	fixture_path("libsymfix.so", path, sizeof(path));
	snprintf(cmd, sizeof(cmd), "readelf -n %s | sed -n 's/.*Build ID: //p'", path);
	readelf = popen(cmd, "r");
	assert_non_null(readelf);
	assert_non_null(fgets(want, sizeof(want), readelf));
	pclose(readelf);
	want[strcspn(want, "\n")] = '\0';
	assert_int_equal(elfsym_open(path, &elf), 0);
	id = elfsym_build_id(elf, &len);
	assert_non_null(id);
	for (size_t i = 0; i < len; i++)
		snprintf(got + 2 * i, 3, "%02x", id[i]);
	assert_string_equal(got, want);
	elfsym_free(elf);

	close(mkstemp(plain));
	snprintf(cmd, sizeof(cmd), "objcopy --remove-section .note.gnu.build-id %s %s", path, plain);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(elfsym_open(plain, &elf), 0);
	assert_null(elfsym_build_id(elf, &len));
	assert_int_equal(len, 0);
	elfsym_free(elf);
	unlink(plain);
}

static void test_truncated_and_garbage_files_fail_cleanly(void **state)
{
	char lib[4096], tmp[] = "/tmp/test_elfsym.XXXXXX";
	struct elfsym *elf = (struct elfsym *)1;
	struct stat st;
	int fd;

	(void)state;
	fd = mkstemp(tmp);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(elfsym_open(tmp, &elf), -ENOEXEC); /* empty */
	assert_null(elf);

	fd = open(tmp, O_WRONLY | O_TRUNC);
	for (int i = 0; i < 4096; i++) {
		unsigned char b = (unsigned char)(i * 131 + 7);

		assert_int_equal(write(fd, &b, 1), 1);
	}
	close(fd);
	assert_int_equal(elfsym_open(tmp, &elf), -ENOEXEC);

	fixture_path("libsymfix.so", lib, sizeof(lib));
	assert_int_equal(stat(lib, &st), 0);
	/* Cut inside the program headers: not usable. */
	copy_prefix(lib, tmp, 100);
	assert_int_equal(elfsym_open(tmp, &elf), -ENOEXEC);
	/* Every cut must load or fail cleanly; ASan watches the reads. */
	for (off_t len = 0; len < st.st_size; len += 97) {
		int err;

		copy_prefix(lib, tmp, len);
		err = elfsym_open(tmp, &elf);
		assert_true(err == 0 || err == -ENOEXEC);
		if (!err) {
			/* A table that loads still answers lookups safely. */
			elfsym_lookup(elf, 0x1000, NULL);
			elfsym_free(elf);
		}
	}
	/* The headers say ELF, the section table points past the end. */
	copy_prefix(lib, tmp, st.st_size - 1);
	assert_int_equal(elfsym_open(tmp, &elf), -ENOEXEC);
	unlink(tmp);

	assert_int_equal(elfsym_open("/nonexistent/lib.so", &elf), -ENOENT);
}

/* Strips a copy of build/fixtures/NAME with strip ARGS into tmp ("/tmp/test_elfsym.XXXXXX"). */
static void stripped_copy(const char *name, const char *args, char *tmp)
{
	char lib[4096], cmd[8400];
	int fd;

	fixture_path(name, lib, sizeof(lib));
	fd = mkstemp(tmp);
	assert_true(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "strip %s -o '%s' '%s'", args, tmp, lib);
	assert_int_equal(system(cmd), 0);
}

static void test_stripped_file_uses_dynsym(void **state)
{
	char lib[4096], tmp[] = "/tmp/test_elfsym.XXXXXX";
	struct elfsym *full = NULL, *stripped = NULL;
	const struct elfsym_symbol *s;
	uint64_t value = 0;

	(void)state;
	fixture_path("libsymfix.so", lib, sizeof(lib));
	stripped_copy("libsymfix.so", "", tmp);

	assert_int_equal(elfsym_open(lib, &full), 0);
	assert_int_equal(elfsym_open(tmp, &stripped), 0);
	unlink(tmp);
	/* The exported function is still found, from .dynsym. */
	for (size_t off = 0; off < 0x4000 && !value; off++) {
		uint64_t v;

		if (elfsym_offset_to_vaddr(full, off, &v))
			continue;
		s = elfsym_lookup(full, v, NULL);
		if (s && !strcmp(s->name, "fixture_beta"))
			value = s->value;
	}
	assert_true(value != 0);
	s = elfsym_lookup(stripped, value + 2, NULL);
	assert_non_null(s);
	assert_string_equal(s->name, "fixture_beta");
	/* Local symbols (crt helpers) are gone with .symtab. */
	assert_true(elfsym_count(stripped) < elfsym_count(full));
	elfsym_free(full);
	elfsym_free(stripped);
}

/*
 * Issue 18: a stripped file knows its functions' bounds but not their
 * names. An address in a range is grouped under the range's start; one
 * between ranges under the end of what comes before it.
 */
static void test_unnamed_address_is_grouped_by_function(void **state)
{
	char lib[4096], tmp[] = "/tmp/test_elfsym.XXXXXX";
	struct elfsym *full = NULL, *stripped = NULL;
	const struct elfsym_segment *text = NULL;
	struct elfsym_range *range;
	uint64_t value = 0, start;

	(void)state;
	fixture_path("libgroupfix.so", lib, sizeof(lib));
	stripped_copy("libgroupfix.so", "--strip-all", tmp);
	assert_int_equal(elfsym_open(lib, &full), 0);
	assert_int_equal(elfsym_open(tmp, &stripped), 0);
	unlink(tmp);
	assert_true(elfsym_complete(full));
	assert_false(elfsym_complete(stripped));
	for (size_t i = 0; i < elfsym_segment_count(full); i++)
		if (elfsym_segment_at(full, i)->flags & PF_X)
			text = elfsym_segment_at(full, i);
	assert_non_null(text);
	for (uint64_t v = text->vaddr; v < text->vaddr + text->filesz && !value; v++) {
		uint64_t off;
		const struct elfsym_symbol *s = elfsym_lookup(full, v, &off);

		if (s && !off && !strcmp(s->name, "group_thirty"))
			value = v;
	}
	assert_true(value != 0);
	assert_null(elfsym_lookup(stripped, value + 4, NULL));

	/* No ranges: the gap after the symbol or segment start before it. */
	assert_int_equal(elfsym_function_start(stripped, value + 4, &start), 0);
	assert_true(start < value);
	range = malloc(sizeof(*range));
	assert_non_null(range);
	*range = (struct elfsym_range){ .start = value, .end = value + 0x10 };
	elfsym_take_ranges(stripped, range, 1);
	assert_int_equal(elfsym_function_start(stripped, value + 4, &start), 0);
	assert_int_equal(start, value);
	assert_int_equal(elfsym_function_start(stripped, value + 0xf, &start), 0);
	assert_int_equal(start, value);
	/* Past the range, in no symbol: the gap starts where the range ends. */
	assert_int_equal(elfsym_function_start(stripped, value + 0x12, &start), 0);
	assert_int_equal(start, value + 0x10);
	/* Not in the file at all. */
	assert_int_equal(elfsym_function_start(stripped, 0x7fffffff0000ULL, &start), -ENOENT);
	elfsym_free(full);
	elfsym_free(stripped);
}

/* --- bounds: what a file declares is not what we read --------------------- */

/* A copy of build/fixtures/NAME in a temporary file, whose path goes to tmp. */
static void fixture_copy(const char *name, char *tmp)
{
	char lib[4096], cmd[8300];
	int fd;

	fixture_path(name, lib, sizeof(lib));
	strcpy(tmp, "/tmp/test_elfsym.XXXXXX");
	fd = mkstemp(tmp);
	assert_true(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", lib, tmp);
	assert_int_equal(system(cmd), 0);
}

/* The Elf64_Shdr of section name in the file at path, at *at. */
static Elf64_Shdr section_header(const char *path, const char *name, off_t *at)
{
	Elf64_Ehdr eh;
	Elf64_Shdr sh, names;
	char found[64];
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &eh, sizeof(eh), 0), sizeof(eh));
	assert_int_equal(pread(fd, &names, sizeof(names),
			       (off_t)(eh.e_shoff + eh.e_shstrndx * sizeof(names))),
			 sizeof(names));
	for (int i = 0; i < eh.e_shnum; i++) {
		*at = (off_t)(eh.e_shoff + (uint64_t)i * sizeof(sh));
		assert_int_equal(pread(fd, &sh, sizeof(sh), *at), sizeof(sh));
		memset(found, 0, sizeof(found));
		assert_true(pread(fd, found, sizeof(found) - 1, (off_t)(names.sh_offset + sh.sh_name)) >
			    0);
		if (!strcmp(found, name)) {
			close(fd);
			return sh;
		}
	}
	fail_msg("no section %s in %s", name, path);
	return sh;
}

/*
 * Rewrites section name's header to claim size bytes at the end of the
 * file, and makes the file that long (sparse: nothing is written).
 */
static void claim_section_size(const char *path, const char *name, uint64_t size)
{
	struct stat st;
	off_t at;
	Elf64_Shdr sh = section_header(path, name, &at);
	int fd = open(path, O_RDWR);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	sh.sh_offset = ((uint64_t)st.st_size + 4095) & ~4095ULL;
	sh.sh_size = size;
	assert_int_equal(pwrite(fd, &sh, sizeof(sh), at), sizeof(sh));
	assert_int_equal(ftruncate(fd, (off_t)(sh.sh_offset + size)), 0);
	close(fd);
}

static long peak_rss_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/*
 * The hostile library of issue 20: its .symtab header claims 3 GiB of a
 * sparse file. libelf would allocate and read all of it; the table is
 * skipped and counted, and .dynsym still names the exported functions.
 */
static void test_symtab_claiming_3_gib_is_skipped(void **state)
{
	struct elfsym_breaches breaches = { 0 };
	struct elfsym_options options = { .breaches = &breaches };
	char tmp[64];
	struct elfsym *elf = NULL;
	long before = peak_rss_kb();
	int fd;

	(void)state;
	fixture_copy("libsymfix.so", tmp);
	claim_section_size(tmp, ".symtab", 3ULL << 30);
	fd = open(tmp, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(elfsym_open_fd_with(fd, &options, &elf), 0);
	close(fd);
	assert_int_equal(breaches.tables, 1);
	assert_true(elfsym_count(elf) > 0); /* from .dynsym */
	assert_true(peak_rss_kb() - before < 100 * 1024);
	elfsym_free(elf);
	/* The string table of a table over the bound counts the same. */
	fixture_copy("libsymfix.so", tmp);
	claim_section_size(tmp, ".strtab", 3ULL << 30);
	fd = open(tmp, O_RDONLY);
	assert_int_equal(elfsym_open_fd_with(fd, &options, &elf), 0);
	close(fd);
	assert_int_equal(breaches.tables, 2);
	elfsym_free(elf);
	unlink(tmp);
}

static void test_table_and_symbol_bounds_are_configurable(void **state)
{
	struct elfsym_breaches breaches = { 0 };
	struct elfsym_options options = { .breaches = &breaches };
	char lib[4096];
	struct elfsym *elf = NULL, *full = NULL;
	int fd;

	(void)state;
	fixture_path("libsymfix.so", lib, sizeof(lib));
	assert_int_equal(elfsym_open(lib, &full), 0);
	fd = open(lib, O_RDONLY);
	assert_true(fd >= 0);
	/* Tables of any real size are over 64 bytes: no names, the file still loads. */
	options.bounds.max_table = 64;
	assert_int_equal(elfsym_open_fd_with(fd, &options, &elf), 0);
	assert_int_equal(elfsym_count(elf), 0);
	assert_int_equal(breaches.tables, 2); /* .symtab, then .dynsym */
	assert_true(elfsym_segment_count(elf) > 0);
	elfsym_free(elf);
	/* One function too many: a part of a table would name wrongly, so none. */
	options.bounds.max_table = 0;
	options.bounds.max_symbols = elfsym_count(full) - 1;
	assert_int_equal(elfsym_open_fd_with(fd, &options, &elf), 0);
	assert_int_equal(breaches.symbols, 1);
	assert_true(elfsym_count(elf) > 0 && elfsym_count(elf) < elfsym_count(full));
	elfsym_free(elf);
	/* Exactly enough. */
	options.bounds.max_symbols = elfsym_count(full);
	assert_int_equal(elfsym_open_fd_with(fd, &options, &elf), 0);
	assert_int_equal(elfsym_count(elf), elfsym_count(full));
	assert_int_equal(breaches.symbols, 1);
	elfsym_free(elf);
	close(fd);
	elfsym_free(full);
}

/*
 * 40 million section headers (extended numbering: e_shnum 0, the count in
 * section 0) made libelf's elf_begin() take 8 GB. The count is checked
 * first, in the file and in memory images alike.
 */
static void test_too_many_section_headers_are_refused(void **state)
{
	struct elfsym_breaches breaches = { 0 };
	struct elfsym_options options = { .breaches = &breaches };
	char tmp[64];
	struct elfsym *elf = NULL;
	Elf64_Ehdr eh;
	uint64_t count = 40000000;
	unsigned char *image;
	struct stat st;
	int fd;

	(void)state;
	fixture_copy("libsymfix.so", tmp);
	fd = open(tmp, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &eh, sizeof(eh), 0), sizeof(eh));
	eh.e_shnum = 0;
	assert_int_equal(pwrite(fd, &eh, sizeof(eh), 0), sizeof(eh));
	assert_int_equal(pwrite(fd, &count, sizeof(count), (off_t)eh.e_shoff + 0x20),
			 sizeof(count));
	assert_int_equal(elfsym_open_fd_with(fd, &options, &elf), -ENOEXEC);
	assert_null(elf);
	assert_int_equal(breaches.sections, 1);
	assert_int_equal(fstat(fd, &st), 0);
	image = malloc((size_t)st.st_size);
	assert_non_null(image);
	assert_int_equal(pread(fd, image, (size_t)st.st_size, 0), st.st_size);
	assert_int_equal(elfsym_open_mem_with(image, (size_t)st.st_size, &options, &elf),
			 -ENOEXEC);
	assert_int_equal(breaches.sections, 2);
	free(image);
	close(fd);
	unlink(tmp);
}

/* A FIFO where a library was: refused at once, never opened. */
static void test_fifo_path_is_refused(void **state)
{
	char dir[] = "/tmp/test_elfsym_fifo.XXXXXX", path[64];
	struct elfsym *elf = NULL;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/lib.so", dir);
	assert_int_equal(mkfifo(path, 0644), 0);
	assert_int_equal(elfsym_open(path, &elf), -EINVAL);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_build_id_is_the_files),
	    cmocka_unit_test(test_pie_executable),
	    cmocka_unit_test(test_non_pie_executable),
	    cmocka_unit_test(test_shared_object),
	    cmocka_unit_test(test_address_past_symbol_size_is_not_that_symbol),
	    cmocka_unit_test(test_zero_size_symbol_reaches_next_symbol),
	    cmocka_unit_test(test_alias_prefers_the_public_name),
	    cmocka_unit_test(test_segments_recorded),
	    cmocka_unit_test(test_truncated_and_garbage_files_fail_cleanly),
	    cmocka_unit_test(test_stripped_file_uses_dynsym),
	    cmocka_unit_test(test_unnamed_address_is_grouped_by_function),
	    cmocka_unit_test(test_symtab_claiming_3_gib_is_skipped),
	    cmocka_unit_test(test_table_and_symbol_bounds_are_configurable),
	    cmocka_unit_test(test_too_many_section_headers_are_refused),
	    cmocka_unit_test(test_fifo_path_is_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
