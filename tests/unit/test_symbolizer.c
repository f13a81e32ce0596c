/*
 * symbolizer tests: whole stacks in, frames out. One test samples a real
 * running fixture through the real /proc; the others point the
 * symbolizer at a /proc, kallsyms and /tmp of their own, so they can
 * change a process's maps, start time or perf map between drains.
 */
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
#include <gelf.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "symbolizer/elfsym.h"
#include "symbolizer/procmaps.h"
#include "symbolizer/symbolizer.h"

#define FAKE_PID 4242
#define MAX_FRAMES 64

static const char KALLSYMS[] = "ffffffff81000000 T _stext\n"
			       "ffffffff81000100 T entry_SYSCALL_64\n"
			       "ffffffff81000200 T do_syscall_64\n"
			       "ffffffff81000300 T __x64_sys_write\n"
			       "ffffffff81000400 T _etext\n";

/* A directory standing for /proc, kallsyms and /tmp at once. */
struct world {
	char root[64];
	char kallsyms[128];
	struct symbolizer_config config;
};

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void world_new(struct world *w, const char *kallsyms)
{
	strcpy(w->root, "/tmp/test_symbolizer.XXXXXX");
	assert_non_null(mkdtemp(w->root));
	snprintf(w->kallsyms, sizeof(w->kallsyms), "%s/kallsyms", w->root);
	write_file(w->kallsyms, kallsyms);
	symbolizer_config_init(&w->config);
	w->config.proc_root = w->root;
	w->config.kallsyms = w->kallsyms;
	w->config.perfmap_dir = w->root;
}

static void world_path(const struct world *w, char *out, size_t size, const char *name)
{
	snprintf(out, size, "%s/%s", w->root, name);
}

/* Gives the fake process pid a start time and a maps file. */
static void fake_pid(const struct world *w, int pid, unsigned long long start_time,
		     const char *maps)
{
	char path[256], name[64], stat_line[512];

	snprintf(name, sizeof(name), "%d", pid);
	world_path(w, path, sizeof(path), name);
	mkdir(path, 0755);
	snprintf(stat_line, sizeof(stat_line),
		 "%d (we ird) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 %llu "
		 "1000000 100 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n",
		 pid, start_time);
	snprintf(name, sizeof(name), "%d/stat", pid);
	world_path(w, path, sizeof(path), name);
	write_file(path, stat_line);
	snprintf(name, sizeof(name), "%d/maps", pid);
	world_path(w, path, sizeof(path), name);
	write_file(path, maps);
}

static void fake_pid_exit(const struct world *w, int pid)
{
	char path[256], name[64];

	snprintf(name, sizeof(name), "%d/stat", pid);
	world_path(w, path, sizeof(path), name);
	unlink(path);
	snprintf(name, sizeof(name), "%d/maps", pid);
	world_path(w, path, sizeof(path), name);
	unlink(path);
	snprintf(name, sizeof(name), "%d", pid);
	world_path(w, path, sizeof(path), name);
	rmdir(path);
}

static void fake_process(const struct world *w, unsigned long long start_time, const char *maps)
{
	fake_pid(w, FAKE_PID, start_time, maps);
}

static void fake_process_exit(const struct world *w)
{
	fake_pid_exit(w, FAKE_PID);
}

static void world_free(struct world *w)
{
	char path[256];

	fake_process_exit(w);
	unlink(w->kallsyms);
	world_path(w, path, sizeof(path), "perf-4242.map");
	unlink(path);
	rmdir(w->root);
}

static void fixture_path(const char *name, char *out, size_t size)
{
	char exe[4096];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	assert_true(len > 0);
	exe[len] = '\0';
	*strrchr(exe, '/') = '\0';
	snprintf(out, size, "%s/../fixtures/%s", exe, name);
	assert_non_null(realpath(out, exe));
	snprintf(out, size, "%s", exe);
}

/* A maps line mapping the executable segment of file at start, with its real device and inode. */
static void maps_line(char *out, size_t size, const char *file, uint64_t start)
{
	struct elfsym *elf = NULL;
	const struct elfsym_segment *text = NULL;
	struct stat st;

	assert_int_equal(stat(file, &st), 0);
	assert_int_equal(elfsym_open(file, &elf), 0);
	for (size_t i = 0; i < elfsym_segment_count(elf); i++)
		if (elfsym_segment_at(elf, i)->flags & 1 /* PF_X */)
			text = elfsym_segment_at(elf, i);
	assert_non_null(text);
	snprintf(out, size, "%llx-%llx r-xp %08llx %02x:%02x %llu %s\n", (unsigned long long)start,
		 (unsigned long long)(start + 0x1000), (unsigned long long)text->offset,
		 major(st.st_dev), minor(st.st_dev), (unsigned long long)st.st_ino, file);
	elfsym_free(elf);
}

/* Where function name of file sits in a process that mapped it with maps_line(). */
static uint64_t mapped_addr(const char *file, uint64_t start, const char *name)
{
	struct elfsym *elf = NULL;
	const struct elfsym_segment *text = NULL;
	uint64_t result = 0;

	assert_int_equal(elfsym_open(file, &elf), 0);
	for (size_t i = 0; i < elfsym_segment_count(elf); i++)
		if (elfsym_segment_at(elf, i)->flags & 1)
			text = elfsym_segment_at(elf, i);
	assert_non_null(text);
	for (uint64_t v = text->vaddr; v < text->vaddr + text->filesz && !result; v++) {
		uint64_t offset;
		const struct elfsym_symbol *s = elfsym_lookup(elf, v, &offset);

		if (s && !offset && !strcmp(s->name, name))
			result = start + (v - text->vaddr);
	}
	elfsym_free(elf);
	assert_true(result != 0);
	return result;
}

/*
 * The fake process, started at tick 100, runs symfix-nopie at 0x401000:
 * the program's path into nopie, its maps line into maps. Returns where
 * fixture_alpha sits.
 */
static uint64_t fake_nopie_process(const struct world *w, char *nopie, size_t nopie_size,
				   char *maps, size_t maps_size)
{
	fixture_path("symfix-nopie", nopie, nopie_size);
	maps_line(maps, maps_size, nopie, 0x401000);
	fake_process(w, 100, maps);
	return mapped_addr(nopie, 0x401000, "fixture_alpha");
}

static size_t stack(struct symbolizer *sym, const uint64_t *uips, size_t n_uips,
		    const uint64_t *kips, size_t n_kips, struct frame *out)
{
	return symbolizer_stack(
	    sym, &(struct symbolizer_sample){FAKE_PID, 0, "worker", uips, n_uips, kips, n_kips},
	    out, MAX_FRAMES);
}

static const char *leaf_name(struct symbolizer *sym, uint64_t addr, enum frame_kind *kind)
{
	struct frame out[MAX_FRAMES];
	size_t n = stack(sym, &addr, 1, NULL, 0, out);

	assert_int_equal(n, 2);
	if (kind)
		*kind = out[1].kind;
	return out[1].name;
}

/* The group fixture of most tests: a fresh world with KALLSYMS, freed after. */
static int world_setup(void **state)
{
	struct world *w = calloc(1, sizeof(*w));

	if (!w)
		return -1;
	world_new(w, KALLSYMS);
	*state = w;
	return 0;
}

static int world_teardown(void **state)
{
	world_free(*state);
	free(*state);
	return 0;
}

static void test_real_process_stack_order_kinds_and_call_sites(void **state)
{
	struct symbolizer_config config;
	struct symbolizer *sym;
	struct frame out[MAX_FRAMES];
	struct world *w = *state;
	uint64_t alpha = 0, beta = 0, uips[3], kips[2];
	char path[4096], line[256];
	int to_child[2], from_child[2];
	FILE *in, *from;
	pid_t pid;
	size_t n;

	fixture_path("symfix-pie", path, sizeof(path));
	assert_int_equal(pipe2(to_child, O_CLOEXEC), 0);
	assert_int_equal(pipe2(from_child, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		dup2(to_child[0], 0);
		dup2(from_child[1], 1);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	close(to_child[0]);
	close(from_child[1]);
	in = fdopen(to_child[1], "w");
	from = fdopen(from_child[0], "r");
	while (fgets(line, sizeof(line), from) && strcmp(line, "ready\n")) {
		void *addr;

		if (sscanf(line, "fixture_alpha %p", &addr) == 1)
			alpha = (uint64_t)(uintptr_t)addr;
		if (sscanf(line, "fixture_beta %p", &addr) == 1)
			beta = (uint64_t)(uintptr_t)addr;
	}
	fclose(from);
	assert_true(alpha && beta);

	symbolizer_config_init(&config);
	config.kallsyms = w->kallsyms;
	sym = symbolizer_new(&config);
	assert_non_null(sym);
	/* Leaf first, as the kernel gives them: alpha called by beta, called from alpha's start. */
	uips[0] = alpha + 3;
	uips[1] = beta + 5;
	uips[2] = alpha; /* a return address at a function's first byte: the call was before it */
	kips[0] = 0xffffffff81000310;
	kips[1] = 0xffffffff81000110;
	n = symbolizer_stack(
	    sym, &(struct symbolizer_sample){(uint32_t)pid, 0, "symfix-pie", uips, 3, kips, 2}, out,
	    MAX_FRAMES);
	assert_int_equal(n, 6);
	assert_string_equal(out[0].name, "symfix-pie");
	assert_int_equal(out[0].kind, FRAME_PROCESS);
	assert_string_equal(out[1].name, "fixture_nosize");
	assert_string_equal(out[2].name, "fixture_beta");
	assert_string_equal(out[3].name, "fixture_alpha");
	for (int i = 1; i <= 3; i++)
		assert_int_equal(out[i].kind, FRAME_USER);
	assert_string_equal(out[4].name, "entry_SYSCALL_64");
	assert_string_equal(out[5].name, "__x64_sys_write");
	assert_int_equal(out[4].kind, FRAME_KERNEL);
	assert_int_equal(out[5].kind, FRAME_KERNEL);

	/* The same address as a leaf is the function it starts. */
	n = symbolizer_stack(
	    sym, &(struct symbolizer_sample){(uint32_t)pid, 0, "symfix-pie", &alpha, 1, NULL, 0},
	    out, MAX_FRAMES);
	assert_int_equal(n, 2);
	assert_string_equal(out[1].name, "fixture_alpha");

	/* cap bounds what is written, root first. */
	n = symbolizer_stack(
	    sym, &(struct symbolizer_sample){(uint32_t)pid, 0, "symfix-pie", uips, 3, kips, 2}, out,
	    2);
	assert_int_equal(n, 2);
	assert_string_equal(out[1].name, "fixture_nosize");

	symbolizer_free(sym);
	fclose(in);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
}

static void test_addresses_option_appends_offsets(void **state)
{
	struct world *w = *state;
	struct symbolizer *sym;
	struct frame out[MAX_FRAMES];
	char nopie[4096], maps[8192];
	uint64_t alpha, beta, uips[2], kip = 0xffffffff81000210;
	size_t n;

	alpha = fake_nopie_process(w, nopie, sizeof(nopie), maps, sizeof(maps));
	beta = mapped_addr(nopie, 0x401000, "fixture_beta");
	w->config.addresses = true;
	sym = symbolizer_new(&w->config);
	uips[0] = alpha + 3;
	uips[1] = beta + 9;
	n = stack(sym, uips, 2, &kip, 1, out);
	assert_int_equal(n, 4);
	/* The caller's offset is that of the return address, not of ip - 1. */
	assert_string_equal(out[1].name, "fixture_beta+0x9");
	assert_string_equal(out[2].name, "fixture_alpha+0x3");
	assert_string_equal(out[3].name, "do_syscall_64+0x10");
	symbolizer_free(sym);
}

static void test_unresolved_frames_are_named_and_counted(void **state)
{
	struct world *w = *state;
	struct symbolizer *sym;
	struct symbolizer_stats stats;
	char nopie[4096], maps[8192], expect[64];
	uint64_t sized;
	enum frame_kind kind;

	fixture_path("symfix-nopie", nopie, sizeof(nopie));
	maps_line(maps, sizeof(maps), nopie, 0x401000);
	strcat(maps, "7ffd5a3f0000-7ffd5a3f2000 r-xp 00000000 00:00 0 [vdso]\n");
	fake_process(w, 100, maps);
	sized = mapped_addr(nopie, 0x401000, "fixture_sized");
	sym = symbolizer_new(&w->config);

	/* In the padding after a 1-byte function: the file and its offset, never sized+0x8. */
	snprintf(expect, sizeof(expect), "[symfix-nopie+0x%llx]",
		 (unsigned long long)(sized + 8 - 0x400000));
	assert_string_equal(leaf_name(sym, sized + 8, &kind), expect);
	assert_int_equal(kind, FRAME_UNKNOWN);
	assert_string_equal(leaf_name(sym, 0x10, &kind), "[unknown]");
	assert_int_equal(kind, FRAME_UNKNOWN);
	assert_string_equal(leaf_name(sym, 0x7ffd5a3f0100, &kind), "[vdso]");
	assert_int_equal(kind, FRAME_UNKNOWN);
	{
		struct frame out[MAX_FRAMES];
		uint64_t kip = 0xffffffff81000500; /* past _etext */

		assert_int_equal(stack(sym, NULL, 0, &kip, 1, out), 2);
		assert_string_equal(out[1].name, "[unknown]");
		assert_int_equal(out[1].kind, FRAME_UNKNOWN);
	}
	symbolizer_stats(sym, &stats);
	assert_int_equal(stats.frames, 4);
	assert_int_equal(stats.unresolved, 4);
	assert_false(stats.kernel_hidden);
	symbolizer_free(sym);
}

/* The file's build-id as libelf reads it, for comparing with a frame's. */
static size_t file_build_id(const char *file, unsigned char *id)
{
	struct elfsym *elf = NULL;
	const unsigned char *bytes;
	size_t len;

	assert_int_equal(elfsym_open(file, &elf), 0);
	bytes = elfsym_build_id(elf, &len);
	assert_non_null(bytes);
	memcpy(id, bytes, len);
	elfsym_free(elf);
	return len;
}

/*
 * Where each frame's code is, for pprof: a named user frame gives its
 * mapping (file, build-id, range, offset) and its function's first byte
 * in the process; a frame in a file but in no function gives the mapping
 * and the sampled address; a kernel frame gives its function's address
 * and no mapping; the process name and "[unknown]" give nothing. With
 * `addresses` a named frame gives the sampled instruction instead, as
 * its "+0xoff" name does.
 */
static void test_frames_say_where_their_code_is(void **state)
{
	struct world *w = *state;
	struct symbolizer *sym;
	struct frame out[MAX_FRAMES];
	char nopie[4096], maps[8192];
	unsigned char id[64];
	uint64_t alpha, beta, sized, uips[3], kip = 0xffffffff81000210;
	size_t n, id_len;

	fixture_path("symfix-nopie", nopie, sizeof(nopie));
	id_len = file_build_id(nopie, id);
	assert_int_equal(id_len, 20); /* a SHA-1 build-id, as GNU ld writes */
	maps_line(maps, sizeof(maps), nopie, 0x401000);
	fake_process(w, 100, maps);
	alpha = mapped_addr(nopie, 0x401000, "fixture_alpha");
	beta = mapped_addr(nopie, 0x401000, "fixture_beta");
	sized = mapped_addr(nopie, 0x401000, "fixture_sized");
	sym = symbolizer_new(&w->config);

	uips[0] = sized + 8; /* past a 1-byte function: in the file, in no function */
	uips[1] = alpha + 3;
	uips[2] = beta + 9;
	n = stack(sym, uips, 3, &kip, 1, out);
	assert_int_equal(n, 5);
	assert_null(out[0].mapping);
	assert_int_equal(out[0].address, 0);
	assert_string_equal(out[1].name, "fixture_beta");
	assert_int_equal(out[1].address, beta);
	assert_string_equal(out[2].name, "fixture_alpha");
	assert_int_equal(out[2].address, alpha);
	assert_int_equal(out[3].kind, FRAME_UNKNOWN);
	assert_int_equal(out[3].address, sized + 8);
	for (int i = 1; i <= 3; i++) {
		const struct frame_mapping *m = out[i].mapping;

		assert_non_null(m);
		assert_string_equal(m->file, nopie);
		assert_int_equal(m->start, 0x401000);
		assert_int_equal(m->limit, 0x402000);
		assert_int_equal(m->offset, 0x1000); /* the text segment's, from maps_line() */
		assert_int_equal(m->build_id_len, id_len);
		assert_memory_equal(m->build_id, id, id_len);
	}
	assert_int_equal(out[4].kind, FRAME_KERNEL);
	assert_null(out[4].mapping);
	assert_int_equal(out[4].address, 0xffffffff81000200); /* do_syscall_64 */

	/* In no mapping: nothing to say. */
	uips[0] = 0x10;
	n = stack(sym, uips, 1, NULL, 0, out);
	assert_string_equal(out[1].name, "[unknown]");
	assert_null(out[1].mapping);
	assert_int_equal(out[1].address, 0);
	symbolizer_free(sym);

	/* With addresses: the sampled instruction, the caller's return address too. */
	w->config.addresses = true;
	sym = symbolizer_new(&w->config);
	uips[0] = alpha + 3;
	uips[1] = beta + 9;
	n = stack(sym, uips, 2, &kip, 1, out);
	assert_int_equal(n, 4);
	assert_string_equal(out[1].name, "fixture_beta+0x9");
	assert_int_equal(out[1].address, beta + 9);
	assert_int_equal(out[2].address, alpha + 3);
	assert_int_equal(out[3].address, kip);
	symbolizer_free(sym);
}

/*
 * /proc reads that fail: a maps "file" that cannot be read (a directory:
 * open works, read fails), a stat line without its fields, a status that
 * cannot be read, a mapped file that is gone, and no kallsyms at all. The
 * stack still comes out, named as far as it can be, and nothing crashes.
 */
static void test_failing_proc_reads_give_unknown_frames(void **state)
{
	struct world *w = *state;
	struct symbolizer *sym;
	struct symbolizer_stats stats;
	struct frame out[MAX_FRAMES];
	char path[256], name[64];
	uint64_t uip = 0x7f0000000100, kip = 0xffffffff81000100;
	size_t n;

	/* The mapped file does not exist: its frames are named by file and offset. */
	fake_process(w, 100, "7f0000000000-7f0000010000 r-xp 00000000 08:01 99 /gone/libx.so\n");
	snprintf(name, sizeof(name), "%d/status", FAKE_PID);
	world_path(w, path, sizeof(path), name);
	assert_int_equal(mkdir(path, 0755), 0);
	unlink(w->kallsyms);
	assert_int_equal(mkdir(w->kallsyms, 0755), 0);
	sym = symbolizer_new(&w->config);
	assert_non_null(sym);
	n = stack(sym, &uip, 1, &kip, 1, out);
	assert_int_equal(n, 3);
	assert_string_equal(out[0].name, "worker");
	assert_string_equal(out[1].name, "[libx.so+0x100]");
	assert_string_equal(out[2].name, "[unknown]");
	symbolizer_free(sym);
	rmdir(path);
	rmdir(w->kallsyms);
	write_file(w->kallsyms, KALLSYMS);

	/* maps unreadable, stat without fields: "[unknown]", counted. */
	snprintf(name, sizeof(name), "%d/maps", FAKE_PID);
	world_path(w, path, sizeof(path), name);
	unlink(path);
	assert_int_equal(mkdir(path, 0755), 0);
	sym = symbolizer_new(&w->config);
	assert_string_equal(leaf_name(sym, uip, NULL), "[unknown]");
	symbolizer_end_drain(sym);
	snprintf(name, sizeof(name), "%d/stat", FAKE_PID);
	world_path(w, path, sizeof(path), name);
	write_file(path, "4242 (worker\n");
	assert_string_equal(leaf_name(sym, uip, NULL), "[unknown]");
	symbolizer_stats(sym, &stats);
	assert_int_equal(stats.unresolved, 2);
	symbolizer_free(sym);
	snprintf(name, sizeof(name), "%d/maps", FAKE_PID);
	world_path(w, path, sizeof(path), name);
	rmdir(path);
}

static void test_hidden_kernel_gives_one_kernel_frame(void **state)
{
	struct world w;
	struct symbolizer *sym;
	struct symbolizer_stats stats;
	struct frame out[MAX_FRAMES];
	uint64_t kips[3] = {0xffffffff81000310, 0xffffffff81000210, 0xffffffff81000110};

	(void)state;
	world_new(&w, "0000000000000000 T _stext\n0000000000000000 T do_syscall_64\n");
	sym = symbolizer_new(&w.config);
	assert_int_equal(stack(sym, NULL, 0, kips, 3, out), 2);
	assert_string_equal(out[1].name, "[kernel]");
	assert_int_equal(out[1].kind, FRAME_KERNEL);
	symbolizer_stats(sym, &stats);
	assert_true(stats.kernel_hidden);
	assert_int_equal(stats.unresolved, 1);
	symbolizer_free(sym);
	world_free(&w);
}

static void test_pid_reuse_reads_the_new_process(void **state)
{
	struct world *w = *state;
	struct symbolizer *sym;
	char nopie[4096], lib[4096], maps[8192];
	uint64_t probe;
	const char *before;

	fixture_path("symfix-nopie", nopie, sizeof(nopie));
	fixture_path("libsymfix.so", lib, sizeof(lib));
	/* The second process maps the library where the first mapped the program. */
	probe = mapped_addr(lib, 0x401000, "fixture_alpha");
	maps_line(maps, sizeof(maps), nopie, 0x401000);
	fake_process(w, 100, maps);
	sym = symbolizer_new(&w->config);
	before = leaf_name(sym, probe, NULL);
	assert_string_not_equal(before, "fixture_alpha");
	symbolizer_end_drain(sym);

	maps_line(maps, sizeof(maps), lib, 0x401000);
	fake_process(w, 200, maps);
	assert_string_equal(leaf_name(sym, probe, NULL), "fixture_alpha");
	symbolizer_free(sym);
}

static void test_same_process_keeps_maps_until_a_miss(void **state)
{
	struct world *w = *state;
	struct symbolizer *sym;
	char nopie[4096], lib[4096], maps[8192], more[4096];
	uint64_t in_lib;
	enum frame_kind kind;

	fixture_path("symfix-nopie", nopie, sizeof(nopie));
	fixture_path("libsymfix.so", lib, sizeof(lib));
	maps_line(maps, sizeof(maps), nopie, 0x401000);
	fake_process(w, 100, maps);
	in_lib = mapped_addr(lib, 0x7f0000001000, "fixture_beta");
	sym = symbolizer_new(&w->config);
	assert_string_equal(leaf_name(sym, mapped_addr(nopie, 0x401000, "fixture_alpha"), NULL),
			    "fixture_alpha");
	/* dlopen after the first read: the same drain read maps already, so no name yet. */
	maps_line(more, sizeof(more), lib, 0x7f0000001000);
	strcat(maps, more);
	fake_process(w, 100, maps);
	assert_string_equal(leaf_name(sym, in_lib, &kind), "[unknown]");
	/* Next drain: the miss reads the maps again. */
	symbolizer_end_drain(sym);
	assert_string_equal(leaf_name(sym, in_lib, &kind), "fixture_beta");
	assert_int_equal(kind, FRAME_USER);
	symbolizer_free(sym);
}

/*
 * symbolizer_track_maps() lends the maps it read for the report, and
 * none when that read failed: the record's older maps are not passed off
 * as the process's mappings now (the Python check would examine them).
 */
static void test_track_lends_the_maps_read_now(void **state)
{
	struct world *w = *state;
	struct symbolizer *sym;
	const struct procmaps *maps = NULL;
	char path[256], name[64];

	fake_process(w, 100, "7f0000000000-7f0000010000 r-xp 00000000 08:01 99 /a/liba.so\n");
	sym = symbolizer_new(&w->config);
	assert_non_null(sym);
	assert_int_equal(symbolizer_track_maps(sym, FAKE_PID, 0, NULL, &maps), 0);
	assert_non_null(maps);
	assert_int_equal(procmaps_count(maps), 1);
	/* An exec: the same process, new mappings, read again and lent. */
	fake_process(w, 100, "7f0000000000-7f0000010000 r-xp 00000000 08:01 99 /a/liba.so\n"
			     "7f1000000000-7f1000010000 r-xp 00000000 08:01 98 /a/libb.so\n");
	assert_int_equal(symbolizer_track_maps(sym, FAKE_PID, 0, NULL, &maps), 0);
	assert_non_null(maps);
	assert_int_equal(procmaps_count(maps), 2);
	assert_string_equal(procmaps_at(maps, 1)->path, "/a/libb.so");
	/* Its maps cannot be read this time: the record keeps the old ones, none lent. */
	snprintf(name, sizeof(name), "%d/maps", FAKE_PID);
	world_path(w, path, sizeof(path), name);
	unlink(path);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(symbolizer_track_maps(sym, FAKE_PID, 0, NULL, &maps), 0);
	assert_null(maps);
	symbolizer_free(sym);
	rmdir(path);
}

/*
 * A miss re-reads the maps in the middle of a stack: the frames already
 * written keep their mapping's file (the old maps are freed by then; ASan
 * sees a dangling path).
 */
static void test_maps_read_again_mid_stack_keep_earlier_mappings(void **state)
{
	struct world *w = *state;
	struct symbolizer *sym;
	struct frame out[MAX_FRAMES];
	char nopie[4096], lib[4096], maps[8192], more[4096];
	uint64_t uips[2];
	size_t n;

	fixture_path("symfix-nopie", nopie, sizeof(nopie));
	fixture_path("libsymfix.so", lib, sizeof(lib));
	maps_line(maps, sizeof(maps), nopie, 0x401000);
	fake_process(w, 100, maps);
	sym = symbolizer_new(&w->config);
	assert_string_equal(leaf_name(sym, mapped_addr(nopie, 0x401000, "fixture_alpha"), NULL),
			    "fixture_alpha");
	symbolizer_end_drain(sym);
	maps_line(more, sizeof(more), lib, 0x7f0000001000);
	strcat(maps, more);
	fake_process(w, 100, maps);
	/* The caller hits the maps in hand, the leaf misses and reads them again. */
	uips[0] = mapped_addr(lib, 0x7f0000001000, "fixture_beta") + 2;
	uips[1] = mapped_addr(nopie, 0x401000, "fixture_alpha") + 3;
	n = stack(sym, uips, 2, NULL, 0, out);
	assert_int_equal(n, 3);
	assert_string_equal(out[1].name, "fixture_alpha");
	assert_non_null(out[1].mapping);
	assert_string_equal(out[1].mapping->file, nopie);
	assert_int_equal(out[1].mapping->build_id_len, 20);
	assert_string_equal(out[2].name, "fixture_beta");
	assert_non_null(out[2].mapping);
	assert_string_equal(out[2].mapping->file, lib);
	symbolizer_free(sym);
}

static void test_exited_process_resolves_until_end_of_drain(void **state)
{
	struct world *w = *state;
	struct symbolizer *sym;
	struct symbolizer_stats stats;
	char nopie[4096], maps[8192];
	uint64_t alpha;

	alpha = fake_nopie_process(w, nopie, sizeof(nopie), maps, sizeof(maps));
	sym = symbolizer_new(&w->config);
	assert_string_equal(leaf_name(sym, alpha, NULL), "fixture_alpha");
	symbolizer_end_drain(sym);
	symbolizer_stats(sym, &stats);
	assert_int_equal(stats.processes, 1);
	/* A fake /proc's PIDs are not ours to kill(): its stat file is read. */
	assert_int_equal(stats.end_checks, 1);
	assert_int_equal(stats.end_stat_reads, 1);

	/* It exits; samples it left in this drain and the next still resolve. */
	fake_process_exit(w);
	assert_string_equal(leaf_name(sym, alpha + 1, NULL), "fixture_alpha");
	symbolizer_end_drain(sym);
	symbolizer_stats(sym, &stats);
	assert_int_equal(stats.processes, 1);
	assert_string_equal(leaf_name(sym, alpha + 2, NULL), "fixture_alpha");
	symbolizer_end_drain(sym);
	/* A drain that used it keeps it one more; a drain without it lets it go. */
	symbolizer_stats(sym, &stats);
	assert_int_equal(stats.processes, 1);
	symbolizer_end_drain(sym);
	symbolizer_stats(sym, &stats);
	assert_int_equal(stats.processes, 0);
	symbolizer_free(sym);
}

/*
 * An idle record of a running process, under the real /proc: the ends of
 * drains ask kill() about it, and read its /proc/PID/stat (which tells a
 * PID taken by another process) at one drain in 64; once the process is
 * reaped, the next end of a drain lets the record go.
 */
static void test_idle_record_is_checked_by_signal(void **state)
{
	struct world *w = *state;
	struct symbolizer_config config;
	struct symbolizer *sym;
	struct symbolizer_stats stats;
	uint64_t reads;
	pid_t child;

	symbolizer_config_init(&config);
	config.kallsyms = w->kallsyms;
	sym = symbolizer_new(&config);
	assert_non_null(sym);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		/* Gone with us, should an assertion end this test first. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		pause();
		_exit(0);
	}
	assert_int_equal(symbolizer_track(sym, (uint32_t)child, 0), 0);
	for (int i = 0; i < 128; i++)
		symbolizer_end_drain(sym);
	symbolizer_stats(sym, &stats);
	assert_int_equal(stats.processes, 1);
	assert_int_equal(stats.exited, 0);
	assert_int_equal(stats.end_checks, 128);
	assert_int_equal(stats.end_stat_reads, 2);

	assert_int_equal(kill(child, SIGKILL), 0);
	assert_int_equal(waitpid(child, NULL, 0), child);
	symbolizer_end_drain(sym);
	symbolizer_stats(sym, &stats);
	assert_int_equal(stats.processes, 0);
	/* Found gone by kill(), unless this end of a drain was the record's read. */
	reads = (128 + (uint64_t)child) % 64 == 0 ? 3 : 2;
	assert_int_equal(stats.end_stat_reads, reads);
	symbolizer_free(sym);
}

static void test_jit_frames_from_perf_map_and_its_growth(void **state)
{
	struct world *w = *state;
	struct symbolizer *sym;
	char path[256];
	enum frame_kind kind;
	FILE *f;

	fake_process(w, 100, "7f0000000000-7f0000010000 rwxp 00000000 00:00 0\n");
	world_path(w, path, sizeof(path), "perf-4242.map");
	write_file(path, "7f0000000100 40 LazyCompile:~handler server.js:10\n");
	sym = symbolizer_new(&w->config);
	assert_string_equal(leaf_name(sym, 0x7f0000000120, &kind),
			    "LazyCompile:~handler server.js:10");
	assert_int_equal(kind, FRAME_JIT);
	/* JIT code not in the map yet: still named as JIT memory, not "[unknown]". */
	assert_string_equal(leaf_name(sym, 0x7f0000000900, &kind), "[jit]");
	assert_int_equal(kind, FRAME_UNKNOWN);

	/* The runtime compiles more; the next drain sees it. */
	f = fopen(path, "a");
	fputs("7f0000000900 80 LazyCompile:*fast server.js:20\n", f);
	fclose(f);
	symbolizer_end_drain(sym);
	assert_string_equal(leaf_name(sym, 0x7f0000000900, &kind),
			    "LazyCompile:*fast server.js:20");
	assert_int_equal(kind, FRAME_JIT);
	symbolizer_free(sym);
}

/*
 * Another user writes /tmp/perf-PID.map for a process that is not
 * theirs: its names must not reach the graph, and the refusal is counted
 * once, not once per drain. The process's own map (its effective uid,
 * from /proc/PID/status) is used.
 */
static void test_perf_map_of_another_user_is_refused_and_counted(void **state)
{
	struct world *w = *state;
	struct symbolizer *sym;
	struct symbolizer_stats st;
	char path[256], status[256];
	enum frame_kind kind;

	fake_process(w, 100, "7f0000000000-7f0000010000 rwxp 00000000 00:00 0\n");
	snprintf(path, sizeof(path), "%d/status", FAKE_PID);
	world_path(w, status, sizeof(status), path);
	write_file(status, "Name:\tnode\nUid:\t1000\t1001\t1001\t1001\nNSpid:\t4242\n");
	world_path(w, path, sizeof(path), "perf-4242.map");
	write_file(path, "7f0000000100 40 planted_name\n");
	assert_int_equal(chown(path, 1000, 1000), 0); /* the real uid, not the effective one */
	sym = symbolizer_new(&w->config);
	assert_string_equal(leaf_name(sym, 0x7f0000000120, &kind), "[anon]");
	symbolizer_end_drain(sym);
	assert_string_equal(leaf_name(sym, 0x7f0000000120, &kind), "[anon]");
	symbolizer_stats(sym, &st);
	assert_int_equal(st.perfmaps_refused, 1);

	/* Its own user's file, mode 0644: used from the next drain on. */
	assert_int_equal(chown(path, 1001, 1001), 0);
	assert_int_equal(chmod(path, 0644), 0);
	symbolizer_end_drain(sym);
	assert_string_equal(leaf_name(sym, 0x7f0000000120, &kind), "planted_name");
	assert_int_equal(kind, FRAME_JIT);
	symbolizer_stats(sym, &st);
	assert_int_equal(st.perfmaps_refused, 1);
	symbolizer_free(sym);
	unlink(status);
}

static void test_elf_cache_bound_and_counters(void **state)
{
	static const char *const files[] = {"symfix-nopie", "symfix-pie", "libsymfix.so"};
	struct world *w = *state;
	struct symbolizer *sym;
	struct symbolizer_stats stats;
	char maps[16384], line[4096], path[4096];
	uint64_t addrs[3];

	maps[0] = '\0';
	for (int i = 0; i < 3; i++) {
		uint64_t start = 0x10000000ull * (uint64_t)(i + 1);

		fixture_path(files[i], path, sizeof(path));
		maps_line(line, sizeof(line), path, start);
		strcat(maps, line);
		addrs[i] = mapped_addr(path, start, "fixture_beta");
	}
	fake_process(w, 100, maps);
	w->config.elf_cache_max = 2;
	sym = symbolizer_new(&w->config);
	for (int round = 0; round < 3; round++)
		for (int i = 0; i < 3; i++)
			assert_string_equal(leaf_name(sym, addrs[i], NULL), "fixture_beta");
	/*
	 * The process holds its three tables past the bound of two (it may
	 * exit, and then nothing could read them again); each file is read
	 * once and later samples go straight to the process's own table.
	 */
	symbolizer_stats(sym, &stats);
	assert_int_equal(stats.elf_cache_misses, 3);
	assert_int_equal(stats.elf_cached, 3);
	assert_int_equal(stats.elf_held, 3);
	/* Once it has exited and a drain passed without its samples, the cache
	 * is back within its bound. */
	fake_process_exit(w);
	symbolizer_end_drain(sym);
	symbolizer_end_drain(sym);
	symbolizer_stats(sym, &stats);
	assert_int_equal(stats.processes, 0);
	assert_int_equal(stats.elf_held, 0);
	assert_int_equal(stats.elf_cached, 2);
	symbolizer_free(sym);
}

/* The ELF cache's byte bound: the tables' bytes are counted, and once no
 * record holds them the least recently used go until the rest fit. */
static void test_elf_cache_byte_bound(void **state)
{
	static const char *const files[] = {"symfix-nopie", "symfix-pie", "libsymfix.so"};
	struct world w;
	struct symbolizer *sym;
	struct symbolizer_stats stats;
	char maps[16384], line[4096], path[4096];
	uint64_t addrs[3], bytes[3], sum = 0;

	(void)state;
	world_new(&w, KALLSYMS);
	maps[0] = '\0';
	for (int i = 0; i < 3; i++) {
		uint64_t start = 0x10000000ull * (uint64_t)(i + 1);
		struct elfsym *elf = NULL;

		fixture_path(files[i], path, sizeof(path));
		maps_line(line, sizeof(line), path, start);
		strcat(maps, line);
		addrs[i] = mapped_addr(path, start, "fixture_beta");
		assert_int_equal(elfsym_open(path, &elf), 0);
		bytes[i] = elfsym_bytes(elf);
		assert_true(bytes[i] > elfsym_count(elf) * sizeof(struct elfsym_symbol));
		sum += bytes[i];
		elfsym_free(elf);
	}
	fake_process(&w, 100, maps);
	/* Room for the last two tables used, not for all three. */
	w.config.elf_cache_bytes = bytes[1] + bytes[2];
	sym = symbolizer_new(&w.config);
	for (int i = 0; i < 3; i++)
		assert_string_equal(leaf_name(sym, addrs[i], NULL), "fixture_beta");
	/* Held by the process, all three stay, and are counted. */
	symbolizer_stats(sym, &stats);
	assert_int_equal(stats.elf_cached, 3);
	assert_int_equal(stats.elf_bytes, sum);
	assert_int_equal(stats.elf_held_bytes, sum);
	fake_process_exit(&w);
	symbolizer_end_drain(sym);
	symbolizer_end_drain(sym);
	symbolizer_stats(sym, &stats);
	assert_int_equal(stats.elf_held_bytes, 0);
	assert_int_equal(stats.elf_cached, 2);
	assert_int_equal(stats.elf_bytes, bytes[1] + bytes[2]);
	symbolizer_free(sym);
	world_free(&w);
}

static void test_comm_cut_inside_utf8_is_trimmed(void **state)
{
	struct world *w = *state;
	struct symbolizer *sym;
	struct frame out[MAX_FRAMES];

	sym = symbolizer_new(&w->config);
	/* 14 ASCII bytes then the first byte of a 2-byte sequence: the kernel's 15-byte cut. */
	assert_int_equal(symbolizer_stack(sym,
					  &(struct symbolizer_sample){1, 0, "abcdefghijklmn\xc3",
								      NULL, 0, NULL, 0},
					  out, MAX_FRAMES),
			 1);
	assert_string_equal(out[0].name, "abcdefghijklmn");
	assert_int_equal(
	    symbolizer_stack(sym,
			     &(struct symbolizer_sample){1, 0, "caf\xc3\xa9", NULL, 0, NULL, 0},
			     out, MAX_FRAMES),
	    1);
	assert_string_equal(out[0].name, "caf\xc3\xa9");
	/* Two of the three bytes of the euro sign. */
	assert_int_equal(
	    symbolizer_stack(sym, &(struct symbolizer_sample){1, 0, "ab\xe2\x82", NULL, 0, NULL, 0},
			     out, MAX_FRAMES),
	    1);
	assert_string_equal(out[0].name, "ab");
	symbolizer_free(sym);
}

/* Runs a copy of symfix-pie from dir; returns its PID and the addresses it prints. */
static pid_t run_copy(const char *dir, char *copy, size_t size, FILE **in, uint64_t *alpha,
		      uint64_t *beta)
{
	char fixture[4096], cmd[8192 + 64], line[256];
	int to_child[2], from_child[2];
	FILE *from;
	pid_t pid;

	fixture_path("symfix-pie", fixture, sizeof(fixture));
	snprintf(copy, size, "%s/short-lived", dir);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", fixture, copy);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(pipe2(to_child, O_CLOEXEC), 0);
	assert_int_equal(pipe2(from_child, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		dup2(to_child[0], 0);
		dup2(from_child[1], 1);
		execl(copy, copy, (char *)NULL);
		_exit(127);
	}
	close(to_child[0]);
	close(from_child[1]);
	*in = fdopen(to_child[1], "w");
	from = fdopen(from_child[0], "r");
	*alpha = *beta = 0;
	while (fgets(line, sizeof(line), from) && strcmp(line, "ready\n")) {
		void *addr;

		if (sscanf(line, "fixture_alpha %p", &addr) == 1)
			*alpha = (uint64_t)(uintptr_t)addr;
		if (sscanf(line, "fixture_beta %p", &addr) == 1)
			*beta = (uint64_t)(uintptr_t)addr;
	}
	fclose(from);
	assert_true(*alpha && *beta);
	return pid;
}

static void test_tracked_process_resolves_after_exit_and_deletion(void **state)
{
	struct symbolizer_config config;
	struct symbolizer *tracking, *late;
	struct symbolizer_stats stats;
	struct frame out[MAX_FRAMES];
	struct world *w = *state;
	char copy[4096];
	uint64_t alpha, beta, uips[2];
	FILE *in;
	pid_t pid;

	symbolizer_config_init(&config);
	config.kallsyms = w->kallsyms;
	tracking = symbolizer_new(&config);
	late = symbolizer_new(&config);
	assert_non_null(tracking);
	assert_non_null(late);
	pid = run_copy(w->root, copy, sizeof(copy), &in, &alpha, &beta);
	assert_int_equal(symbolizer_track(tracking, (uint32_t)pid, 0), 0);

	/* It exits and its binary is deleted before the drain, as a compiler in a build. */
	fclose(in);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	assert_int_equal(unlink(copy), 0);
	assert_int_equal(symbolizer_track(tracking, (uint32_t)pid, 0), -ESRCH);

	uips[0] = alpha + 3;
	uips[1] = beta + 5;
	assert_int_equal(symbolizer_stack(tracking,
					  &(struct symbolizer_sample){
					      (uint32_t)pid, 0, "short-lived", uips, 2, NULL, 0},
					  out, 8),
			 3);
	assert_string_equal(out[1].name, "fixture_beta");
	assert_string_equal(out[2].name, "fixture_alpha");
	assert_int_equal(out[2].kind, FRAME_USER);
	symbolizer_stats(tracking, &stats);
	assert_int_equal(stats.processes, 1);
	assert_int_equal(stats.exited, 1);
	assert_true(stats.elf_held >= 1);

	/* Without the snapshot, nothing is left to read. */
	assert_int_equal(symbolizer_stack(late,
					  &(struct symbolizer_sample){
					      (uint32_t)pid, 0, "short-lived", uips, 2, NULL, 0},
					  out, 8),
			 3);
	assert_string_equal(out[2].name, "[unknown]");

	/* Its samples drained, and a drain later with none of them, the record
	 * and its tables go. */
	symbolizer_end_drain(tracking);
	symbolizer_stats(tracking, &stats);
	assert_int_equal(stats.processes, 1);
	symbolizer_end_drain(tracking);
	symbolizer_stats(tracking, &stats);
	assert_int_equal(stats.processes, 0);
	assert_int_equal(stats.elf_held, 0);
	symbolizer_free(tracking);
	symbolizer_free(late);
}

static void test_tracked_exited_process_waits_one_drain_for_its_samples(void **state)
{
	struct world *w = *state;
	struct symbolizer *sym;
	struct symbolizer_stats stats;
	char nopie[4096], maps[8192];
	uint64_t alpha;

	alpha = fake_nopie_process(w, nopie, sizeof(nopie), maps, sizeof(maps));
	sym = symbolizer_new(&w->config);
	assert_int_equal(symbolizer_track(sym, FAKE_PID, 0), 0);
	fake_process_exit(w);
	/* Tracked just before a drain ended, gone before its samples were drained. */
	symbolizer_end_drain(sym);
	symbolizer_stats(sym, &stats);
	assert_int_equal(stats.processes, 1);
	assert_string_equal(leaf_name(sym, alpha, NULL), "fixture_alpha");
	symbolizer_end_drain(sym);
	/* Used in that drain: the rest of its samples may come in the next. */
	symbolizer_stats(sym, &stats);
	assert_int_equal(stats.processes, 1);
	assert_string_equal(leaf_name(sym, alpha, NULL), "fixture_alpha");
	symbolizer_end_drain(sym);
	symbolizer_stats(sym, &stats);
	assert_int_equal(stats.processes, 1);
	/* A whole drain without its samples: let go. */
	symbolizer_end_drain(sym);
	symbolizer_stats(sym, &stats);
	assert_int_equal(stats.processes, 0);

	/* One whose samples never come is let go after that next drain too. */
	fake_process(w, 300, maps);
	assert_int_equal(symbolizer_track(sym, FAKE_PID, 0), 0);
	fake_process_exit(w);
	symbolizer_end_drain(sym);
	symbolizer_end_drain(sym);
	symbolizer_stats(sym, &stats);
	assert_int_equal(stats.processes, 0);
	symbolizer_free(sym);
}

static void test_track_of_a_reused_pid_drops_the_old_symbols(void **state)
{
	struct world *w = *state;
	struct symbolizer *sym;
	char nopie[4096], lib[4096], maps[8192];
	uint64_t probe;

	fixture_path("symfix-nopie", nopie, sizeof(nopie));
	fixture_path("libsymfix.so", lib, sizeof(lib));
	probe = mapped_addr(nopie, 0x401000, "fixture_alpha");
	maps_line(maps, sizeof(maps), nopie, 0x401000);
	fake_process(w, 100, maps);
	sym = symbolizer_new(&w->config);
	assert_int_equal(symbolizer_track(sym, FAKE_PID, 0), 0);
	assert_string_equal(leaf_name(sym, probe, NULL), "fixture_alpha");

	/* Within the same drain the PID now names another process, mapping something else. */
	fake_process(w, 200, "7f0000000000-7f0000010000 r-xp 00000000 00:00 0 [heap]\n");
	assert_int_equal(symbolizer_track(sym, FAKE_PID, 0), 0);
	assert_string_equal(leaf_name(sym, probe, NULL), "[unknown]");
	assert_string_equal(leaf_name(sym, 0x7f0000000100, NULL), "[heap]");

	/* A reuse found at the end of a drain drops the record too. */
	maps_line(maps, sizeof(maps), lib, 0x401000);
	fake_process(w, 300, maps);
	symbolizer_end_drain(sym);
	{
		struct symbolizer_stats stats;

		symbolizer_stats(sym, &stats);
		assert_int_equal(stats.processes, 0);
	}
	assert_string_equal(leaf_name(sym, mapped_addr(lib, 0x401000, "fixture_beta"), NULL),
			    "fixture_beta");
	symbolizer_free(sym);
}

/* A start time in /proc/PID/stat's clock ticks as the sampler gives it: ns after boot. */
static uint64_t ticks_to_ns(unsigned long long ticks)
{
	return ticks * (1000000000ULL / (unsigned long long)sysconf(_SC_CLK_TCK));
}

static const char *leaf_name_started(struct symbolizer *sym, uint64_t start_time, uint64_t addr)
{
	struct frame out[MAX_FRAMES];

	assert_int_equal(symbolizer_stack(sym,
					  &(struct symbolizer_sample){FAKE_PID, start_time,
								      "worker", &addr, 1, NULL, 0},
					  out, MAX_FRAMES),
			 2);
	return out[1].name;
}

/*
 * Two processes hold one PID within a drain (the first exits, the PID is
 * reused): with the sampler's start times each sample gets its own
 * process's names, never the other's, whatever /proc shows by then.
 */
static void test_start_times_keep_processes_of_one_pid_apart(void **state)
{
	struct world *w = *state;
	struct symbolizer *sym;
	struct symbolizer_stats stats;
	char nopie[4096], lib[4096], maps[8192];
	uint64_t alpha, beta;

	fixture_path("symfix-nopie", nopie, sizeof(nopie));
	fixture_path("libsymfix.so", lib, sizeof(lib));
	alpha = mapped_addr(nopie, 0x401000, "fixture_alpha");
	beta = mapped_addr(lib, 0x401000, "fixture_beta");
	maps_line(maps, sizeof(maps), nopie, 0x401000);
	fake_process(w, 100, maps);
	sym = symbolizer_new(&w->config);
	assert_int_equal(symbolizer_track(sym, FAKE_PID, ticks_to_ns(100)), 0);

	/* It exits; a new process takes its PID before the drain. */
	maps_line(maps, sizeof(maps), lib, 0x401000);
	fake_process(w, 200, maps);
	assert_string_equal(leaf_name_started(sym, ticks_to_ns(100), alpha), "fixture_alpha");
	symbolizer_end_drain(sym);
	/* Its samples left for the next drain still resolve... */
	assert_string_equal(leaf_name_started(sym, ticks_to_ns(100), alpha + 1), "fixture_alpha");
	/* ...and the new process's are read from /proc: its own names. */
	assert_string_equal(leaf_name_started(sym, ticks_to_ns(200), beta), "fixture_beta");
	/* The first one's, once its record is the second's, get none. */
	assert_string_equal(leaf_name_started(sym, ticks_to_ns(100), beta), "[unknown]");
	/* A late report of the first process leaves the second's record alone. */
	assert_int_equal(symbolizer_track(sym, FAKE_PID, ticks_to_ns(100)), -ESRCH);
	assert_string_equal(leaf_name_started(sym, ticks_to_ns(200), beta + 1), "fixture_beta");
	symbolizer_stats(sym, &stats);
	assert_int_equal(stats.processes, 1);

	/*
	 * Gone before its report was handled: nothing to snapshot. Its record
	 * stays, so that naming its samples of this drain reads nothing, and
	 * goes at the end of the first drain that names none.
	 */
	fake_process_exit(w);
	symbolizer_end_drain(sym);
	symbolizer_end_drain(sym);
	assert_int_equal(symbolizer_track(sym, FAKE_PID, ticks_to_ns(300)), -ESRCH);
	symbolizer_stats(sym, &stats);
	assert_int_equal(stats.processes, 1);
	assert_int_equal(stats.exited, 1);
	assert_string_equal(leaf_name_started(sym, ticks_to_ns(300), alpha), "[unknown]");
	symbolizer_end_drain(sym);
	symbolizer_end_drain(sym);
	symbolizer_stats(sym, &stats);
	assert_int_equal(stats.processes, 0);
	symbolizer_free(sym);
}

/*
 * A report whose maps another reader found gone just now: its record is
 * made without a read of /proc (here its maps are still there, and would
 * name the sample), and its samples are named from it.
 */
static void test_track_gone_reads_nothing(void **state)
{
	struct world *w = *state;
	struct symbolizer *sym;
	struct symbolizer_stats stats;
	char nopie[4096], maps[8192];
	uint64_t alpha;

	alpha = fake_nopie_process(w, nopie, sizeof(nopie), maps, sizeof(maps));
	sym = symbolizer_new(&w->config);
	assert_int_equal(symbolizer_track_gone(sym, FAKE_PID, ticks_to_ns(100)), -ESRCH);
	symbolizer_stats(sym, &stats);
	assert_int_equal(stats.processes, 1);
	assert_int_equal(stats.exited, 1);
	assert_string_equal(leaf_name_started(sym, ticks_to_ns(100), alpha), "[unknown]");
	/* A report after it, read as usual, names its samples. */
	assert_int_equal(symbolizer_track(sym, FAKE_PID, ticks_to_ns(100)), 0);
	assert_string_equal(leaf_name_started(sym, ticks_to_ns(100), alpha), "fixture_alpha");
	/* What an earlier read found is kept by a report found gone. */
	assert_int_equal(symbolizer_track_gone(sym, FAKE_PID, ticks_to_ns(100)), -ESRCH);
	assert_string_equal(leaf_name_started(sym, ticks_to_ns(100), alpha + 1), "fixture_alpha");
	symbolizer_stats(sym, &stats);
	assert_int_equal(stats.processes, 1);
	assert_int_equal(stats.exited, 1);
	symbolizer_free(sym);
}

/*
 * A sample whose start time is the record's needs nothing from /proc:
 * a process whose /proc/PID/stat cannot be read is still named, and kept
 * while its samples come.
 */
static void test_sample_start_time_spares_proc_stat(void **state)
{
	struct world *w = *state;
	struct symbolizer *sym;
	struct symbolizer_stats stats;
	char nopie[4096], maps[8192], path[256], name[64];
	uint64_t alpha;

	alpha = fake_nopie_process(w, nopie, sizeof(nopie), maps, sizeof(maps));
	snprintf(name, sizeof(name), "%d/stat", FAKE_PID);
	world_path(w, path, sizeof(path), name);
	/* Its stat unreadable, its maps readable: only a start time given can name it. */
	unlink(path);
	sym = symbolizer_new(&w->config);
	assert_int_equal(symbolizer_track(sym, FAKE_PID, 0), -ESRCH);
	assert_int_equal(symbolizer_track(sym, FAKE_PID, ticks_to_ns(100)), 0);
	for (int drain = 0; drain < 3; drain++) {
		assert_string_equal(leaf_name_started(sym, ticks_to_ns(100), alpha + drain),
				    "fixture_alpha");
		symbolizer_end_drain(sym);
		symbolizer_stats(sym, &stats);
		assert_int_equal(stats.processes, 1);
	}
	/* Without samples, the end of a drain asks /proc, finds it gone, and lets it go. */
	symbolizer_end_drain(sym);
	symbolizer_end_drain(sym);
	symbolizer_stats(sym, &stats);
	assert_int_equal(stats.processes, 0);
	symbolizer_free(sym);
}

/*
 * Nearly no process runs JIT code, and looking for a perf map costs a
 * read of /proc/PID/status and an open() each drain: a process is looked
 * at only once it has anonymous executable memory. A perf map planted
 * for one that has none names nothing. One that starts to JIT code later
 * is looked at from then on.
 */
static void test_perf_map_is_read_only_with_anonymous_exec_memory(void **state)
{
	struct world *w = *state;
	struct symbolizer *sym;
	struct symbolizer_stats stats;
	char nopie[4096], maps[8192], path[256];
	uint64_t alpha;
	enum frame_kind kind;

	alpha = fake_nopie_process(w, nopie, sizeof(nopie), maps, sizeof(maps));
	world_path(w, path, sizeof(path), "perf-4242.map");
	write_file(path, "7f0000000100 40 LazyCompile:~handler server.js:10\n");
	sym = symbolizer_new(&w->config);
	assert_int_equal(symbolizer_track(sym, FAKE_PID, ticks_to_ns(100)), 0);
	for (int drain = 0; drain < 2; drain++) {
		assert_string_equal(leaf_name_started(sym, ticks_to_ns(100), alpha),
				    "fixture_alpha");
		assert_string_equal(leaf_name_started(sym, ticks_to_ns(100), 0x7f0000000120),
				    "[unknown]");
		symbolizer_end_drain(sym);
	}
	symbolizer_stats(sym, &stats);
	assert_int_equal(stats.perfmaps_opened, 0);

	/* It starts a JIT: anonymous executable memory, and its perf map, now count. */
	strcat(maps, "7f0000000000-7f0000010000 rwxp 00000000 00:00 0\n");
	fake_process(w, 100, maps);
	assert_string_equal(leaf_name(sym, 0x7f0000000120, &kind),
			    "LazyCompile:~handler server.js:10");
	assert_int_equal(kind, FRAME_JIT);
	symbolizer_end_drain(sym);
	assert_string_equal(leaf_name_started(sym, ticks_to_ns(100), 0x7f0000000130),
			    "LazyCompile:~handler server.js:10");
	symbolizer_stats(sym, &stats);
	assert_int_equal(stats.perfmaps_opened, 1);
	symbolizer_free(sym);

	/* Known from its first snapshot, too. */
	sym = symbolizer_new(&w->config);
	assert_int_equal(symbolizer_track(sym, FAKE_PID, ticks_to_ns(100)), 0);
	assert_string_equal(leaf_name_started(sym, ticks_to_ns(100), 0x7f0000000120),
			    "LazyCompile:~handler server.js:10");
	symbolizer_stats(sym, &stats);
	assert_int_equal(stats.perfmaps_opened, 1);
	symbolizer_free(sym);
}

static void test_process_records_are_bounded(void **state)
{
	struct world *w = *state;
	struct symbolizer *sym;
	struct symbolizer_stats stats;
	char nopie[4096], maps[8192];
	uint64_t alpha;

	fixture_path("symfix-nopie", nopie, sizeof(nopie));
	maps_line(maps, sizeof(maps), nopie, 0x401000);
	alpha = mapped_addr(nopie, 0x401000, "fixture_alpha");
	w->config.max_processes = 4;
	sym = symbolizer_new(&w->config);
	for (int pid = 100; pid < 120; pid++) {
		fake_pid(w, pid, 1000 + (unsigned long long)pid, maps);
		assert_int_equal(symbolizer_track(sym, (uint32_t)pid, 0), 0);
		symbolizer_stats(sym, &stats);
		assert_true(stats.processes <= 4);
	}
	assert_int_equal(stats.evicted, 16);
	/* The newest are kept, and resolve. */
	{
		struct frame out[MAX_FRAMES];

		assert_int_equal(
		    symbolizer_stack(
			sym, &(struct symbolizer_sample){119, 0, "p", &alpha, 1, NULL, 0}, out, 8),
		    2);
		assert_string_equal(out[1].name, "fixture_alpha");
	}
	for (int pid = 100; pid < 120; pid++)
		fake_pid_exit(w, pid);
	symbolizer_end_drain(sym);
	symbolizer_end_drain(sym);
	symbolizer_stats(sym, &stats);
	assert_int_equal(stats.processes, 0);
	symbolizer_free(sym);
}

/* Process records bounded in bytes: counted at the end of a drain, and the
 * least used dropped until the rest fit. */
static void test_process_records_are_bounded_in_bytes(void **state)
{
	struct world w;
	struct symbolizer *sym;
	struct symbolizer_stats stats;
	char nopie[4096], maps[8192];
	uint64_t one, alpha;

	(void)state;
	world_new(&w, KALLSYMS);
	fixture_path("symfix-nopie", nopie, sizeof(nopie));
	maps_line(maps, sizeof(maps), nopie, 0x401000);
	alpha = mapped_addr(nopie, 0x401000, "fixture_alpha");
	/* What one record costs. */
	sym = symbolizer_new(&w.config);
	fake_pid(&w, 100, 1100, maps);
	assert_int_equal(symbolizer_track(sym, 100, 0), 0);
	symbolizer_end_drain(sym);
	symbolizer_stats(sym, &stats);
	assert_int_equal(stats.processes, 1);
	one = stats.process_bytes;
	assert_true(one > 100 && one < 64 * 1024);
	symbolizer_free(sym);

	w.config.process_bytes = 4 * one;
	sym = symbolizer_new(&w.config);
	for (int pid = 100; pid < 120; pid++) {
		fake_pid(&w, pid, 1000 + (unsigned long long)pid, maps);
		assert_int_equal(symbolizer_track(sym, (uint32_t)pid, 0), 0);
	}
	symbolizer_stats(sym, &stats);
	assert_int_equal(stats.processes, 20); /* the byte bound waits for the drain's end */
	symbolizer_end_drain(sym);
	symbolizer_stats(sym, &stats);
	assert_int_equal(stats.processes, 4);
	assert_int_equal(stats.evicted_over_bytes, 16);
	assert_int_equal(stats.process_bytes, 4 * one);
	{
		struct frame out[MAX_FRAMES];

		assert_int_equal(symbolizer_stack(sym, &(struct symbolizer_sample){ 119, 0, "p", &alpha, 1, NULL, 0 }, out, 8), 2);
		assert_string_equal(out[1].name, "fixture_alpha");
	}
	for (int pid = 100; pid < 120; pid++)
		fake_pid_exit(&w, pid);
	symbolizer_end_drain(sym);
	symbolizer_end_drain(sym);
	symbolizer_stats(sym, &stats);
	assert_int_equal(stats.processes, 0);
	assert_int_equal(stats.process_bytes, 0);
	symbolizer_free(sym);
	world_free(&w);
}

static void test_special_mappings_are_named(void **state)
{
	struct world *w = *state;
	struct symbolizer *sym;
	struct symbolizer_stats stats;
	enum frame_kind kind;

	fake_process(w, 100,
		     "7f0000000000-7f0000010000 rwxp 00000000 00:00 0\n"
		     "7f1000000000-7f1000010000 rwxp 00000000 00:00 0 [heap]\n"
		     "7ffc00000000-7ffc00010000 rwxp 00000000 00:00 0 [stack]\n");
	sym = symbolizer_new(&w->config);
	assert_string_equal(leaf_name(sym, 0x7f0000000100, &kind), "[anon]");
	assert_int_equal(kind, FRAME_UNKNOWN);
	assert_string_equal(leaf_name(sym, 0x7f1000000100, &kind), "[heap]");
	assert_string_equal(leaf_name(sym, 0x7ffc00000100, &kind), "[stack]");
	assert_string_equal(leaf_name(sym, 0x10, &kind), "[unknown]");
	/* Still not functions: counted as unresolved. */
	symbolizer_stats(sym, &stats);
	assert_int_equal(stats.unresolved, 4);
	symbolizer_free(sym);
}

/* Where the vDSO's function name (looked up with libelf here) sits in this process. */
static uint64_t own_vdso_addr(const char *name)
{
	const char *image = (const char *)getauxval(AT_SYSINFO_EHDR);
	Elf_Scn *scn = NULL;
	uint64_t result = 0;
	Elf *e;

	assert_non_null(image);
	elf_version(EV_CURRENT);
	/* The image is mapped read-only and libelf reads it in place, writing nothing. */
	e = elf_memory((char *)image, 65536);
	assert_non_null(e);
	while ((scn = elf_nextscn(e, scn)) && !result) {
		GElf_Shdr sh;
		Elf_Data *data;

		gelf_getshdr(scn, &sh);
		if (sh.sh_type != SHT_DYNSYM)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;

			gelf_getsym(data, (int)i, &s);
			if (!strcmp(elf_strptr(e, sh.sh_link, s.st_name), name))
				result = (uint64_t)(uintptr_t)image + s.st_value;
		}
	}
	elf_end(e);
	assert_true(result != 0);
	return result;
}

static void test_vdso_frames_are_named(void **state)
{
	struct symbolizer_config config;
	struct symbolizer *sym;
	struct frame out[MAX_FRAMES];
	struct world *w = *state;
	uint64_t uips[1];

	symbolizer_config_init(&config);
	config.kallsyms = w->kallsyms;
	sym = symbolizer_new(&config);
	uips[0] = own_vdso_addr("__vdso_clock_gettime") + 4;
	assert_int_equal(symbolizer_stack(sym,
					  &(struct symbolizer_sample){(uint32_t)getpid(), 0, "self",
								      uips, 1, NULL, 0},
					  out, 8),
			 2);
	/* The vDSO exports clock_gettime and __vdso_clock_gettime at one address. */
	if (strcmp(out[1].name, "clock_gettime"))
		assert_string_equal(out[1].name, "__vdso_clock_gettime");
	assert_int_equal(out[1].kind, FRAME_USER);
	symbolizer_free(sym);
}

/* Output of a shell command's first line, newline stripped. */
static void command_line(const char *cmd, char *out, size_t size)
{
	FILE *f = popen(cmd, "r");

	assert_non_null(f);
	assert_non_null(fgets(out, (int)size, f));
	out[strcspn(out, "\n")] = '\0';
	assert_int_equal(pclose(f), 0);
}

static void test_cpp_template_frame_is_demangled_as_cxxfilt_prints(void **state)
{
	static const char source[] =
	    "#include <vector>\n"
	    "namespace fx {\n"
	    "template <typename T, int N> __attribute__((noinline)) T scale(const std::vector<T> "
	    "&v)\n"
	    "{ T s = 0; for (const T &x : v) s += x * N; return s; }\n"
	    "}\n"
	    "int main() { std::vector<double> v{1, 2}; return (int)fx::scale<double, 3>(v); }\n";
	static const char mangled[] = "_ZN2fx5scaleIdLi3EEET_RKSt6vectorIS1_SaIS1_EE";
	struct world *w = *state;
	struct symbolizer *sym;
	char src[256], bin[256], cmd[1024], maps[8192], want[512];
	uint64_t addr;

	world_path(w, src, sizeof(src), "cxxfix.cc");
	world_path(w, bin, sizeof(bin), "cxxfix");
	write_file(src, source);
	snprintf(cmd, sizeof(cmd), "g++ -O1 -g -fno-inline -fno-pie -no-pie -o '%s' '%s'", bin,
		 src);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "c++filt -i '%s'", mangled);
	command_line(cmd, want, sizeof(want));
	assert_string_not_equal(want, mangled);

	maps_line(maps, sizeof(maps), bin, 0x401000);
	fake_process(w, 100, maps);
	addr = mapped_addr(bin, 0x401000, mangled);
	sym = symbolizer_new(&w->config);
	assert_string_equal(leaf_name(sym, addr + 1, NULL), want);
	symbolizer_free(sym);

	/* raw_names keeps what the symbol table says. */
	w->config.raw_names = true;
	sym = symbolizer_new(&w->config);
	assert_string_equal(leaf_name(sym, addr + 1, NULL), mangled);
	symbolizer_free(sym);
	unlink(src);
	unlink(bin);
}

/*
 * Issue 20, finding 1: the library was unmapped (dlclose) and a FIFO put
 * at its path before the drain named its samples. Opening it used to
 * block the drain forever; the gate refuses it at once, the frame is
 * named by file and offset, and the refusal is counted by its cause.
 */
static void test_fifo_at_a_mapped_path_is_refused_and_counted(void **state)
{
	struct world *w = *state;
	struct symbolizer *sym;
	struct symbolizer_stats stats;
	struct timespec t0, t1;
	char path[256], maps[512];
	uint64_t uip = 0x7f0000000100;

	world_path(w, path, sizeof(path), "libgone.so");
	assert_int_equal(mkfifo(path, 0644), 0);
	snprintf(maps, sizeof(maps), "7f0000000000-7f0000010000 r-xp 00000000 08:01 99 %s\n", path);
	fake_process(w, 100, maps);
	sym = symbolizer_new(&w->config);
	assert_non_null(sym);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_string_equal(leaf_name(sym, uip, NULL), "[libgone.so+0x100]");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_true(t1.tv_sec - t0.tv_sec < 2);
	symbolizer_stats(sym, &stats);
	assert_int_equal(stats.refused[TARGET_NOT_REGULAR], 1);
	assert_int_equal(stats.unresolved, 1);
	/* Remembered as unreadable: the next sample does not open it again. */
	assert_string_equal(leaf_name(sym, uip + 1, NULL), "[libgone.so+0x101]");
	symbolizer_stats(sym, &stats);
	assert_int_equal(stats.refused[TARGET_NOT_REGULAR], 1);
	symbolizer_free(sym);
	unlink(path);
}

/*
 * Issue 18: a stripped library's internal functions have no name, but
 * each is one frame, named by the file offset of its start (its FDE);
 * --addresses keeps the exact address.
 */
static void test_unnamed_code_is_grouped_by_function(void **state)
{
	struct world *w = *state;
	struct symbolizer *sym;
	char full[4096], stripped[256], cmd[8400], maps[8192], forty_name[64], thirty_name[64];
	const uint64_t base = 0x7f0000000000;
	unsigned long long pgoff;
	uint64_t forty, thirty;
	enum frame_kind kind;

	fixture_path("libgroupfix.so", full, sizeof(full));
	world_path(w, stripped, sizeof(stripped), "libgroupfix.so");
	snprintf(cmd, sizeof(cmd), "strip --strip-all -o '%s' '%s'", stripped, full);
	assert_int_equal(system(cmd), 0);
	forty = mapped_addr(full, base, "group_forty");
	thirty = mapped_addr(full, base, "group_thirty");
	maps_line(maps, sizeof(maps), stripped, base);
	assert_int_equal(sscanf(maps, "%*x-%*x %*s %llx", &pgoff), 1);
	fake_process(w, 100, maps);
	snprintf(forty_name, sizeof(forty_name), "[libgroupfix.so+0x%llx]",
		 (unsigned long long)(forty - base + pgoff));
	snprintf(thirty_name, sizeof(thirty_name), "[libgroupfix.so+0x%llx]",
		 (unsigned long long)(thirty - base + pgoff));

	sym = symbolizer_new(&w->config);
	assert_non_null(sym);
	assert_string_equal(leaf_name(sym, forty + 3, &kind), forty_name);
	assert_int_equal(kind, FRAME_UNKNOWN);
	assert_string_equal(leaf_name(sym, forty + 9, NULL), forty_name);
	assert_string_equal(leaf_name(sym, thirty + 5, NULL), thirty_name);
	assert_string_equal(leaf_name(sym, mapped_addr(full, base, "groupfix_run") + 2, NULL),
			    "groupfix_run"); /* exported: .dynsym still names it */
	symbolizer_free(sym);

	w->config.addresses = true;
	sym = symbolizer_new(&w->config);
	assert_non_null(sym);
	snprintf(forty_name, sizeof(forty_name), "[libgroupfix.so+0x%llx]",
		 (unsigned long long)(forty + 3 - base + pgoff));
	assert_string_equal(leaf_name(sym, forty + 3, NULL), forty_name);
	symbolizer_free(sym);
	w->config.addresses = false;
	unlink(stripped);
}

/* The ELF bounds reach the symbolizer's files, and what they cut is counted. */
static void test_elf_bounds_are_applied_and_counted(void **state)
{
	struct world *w = *state;
	struct symbolizer *sym;
	struct symbolizer_stats stats;
	char lib[4096], maps[8192];
	uint64_t addr;

	fixture_path("libsymfix.so", lib, sizeof(lib));
	maps_line(maps, sizeof(maps), lib, 0x7f0000000000);
	addr = mapped_addr(lib, 0x7f0000000000, "fixture_alpha");
	fake_process(w, 100, maps);
	w->config.elf_bounds.max_table = 64;
	sym = symbolizer_new(&w->config);
	assert_non_null(sym);
	assert_int_equal(strncmp(leaf_name(sym, addr, NULL), "[libsymfix.so+0x", 16), 0);
	symbolizer_stats(sym, &stats);
	assert_int_equal(stats.elf_breaches.tables, 2); /* .symtab and .dynsym, once */
	symbolizer_free(sym);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_real_process_stack_order_kinds_and_call_sites,
					    world_setup, world_teardown),
	    cmocka_unit_test_setup_teardown(test_addresses_option_appends_offsets, world_setup,
					    world_teardown),
	    cmocka_unit_test_setup_teardown(test_unresolved_frames_are_named_and_counted,
					    world_setup, world_teardown),
	    cmocka_unit_test_setup_teardown(test_frames_say_where_their_code_is, world_setup,
					    world_teardown),
	    cmocka_unit_test(test_hidden_kernel_gives_one_kernel_frame),
	    cmocka_unit_test_setup_teardown(test_pid_reuse_reads_the_new_process, world_setup,
					    world_teardown),
	    cmocka_unit_test_setup_teardown(test_same_process_keeps_maps_until_a_miss, world_setup,
					    world_teardown),
	    cmocka_unit_test_setup_teardown(test_track_lends_the_maps_read_now, world_setup,
					    world_teardown),
	    cmocka_unit_test_setup_teardown(test_maps_read_again_mid_stack_keep_earlier_mappings,
					    world_setup, world_teardown),
	    cmocka_unit_test_setup_teardown(test_exited_process_resolves_until_end_of_drain,
					    world_setup, world_teardown),
	    cmocka_unit_test_setup_teardown(test_idle_record_is_checked_by_signal, world_setup,
					    world_teardown),
	    cmocka_unit_test_setup_teardown(test_jit_frames_from_perf_map_and_its_growth,
					    world_setup, world_teardown),
	    cmocka_unit_test_setup_teardown(test_failing_proc_reads_give_unknown_frames,
					    world_setup, world_teardown),
	    cmocka_unit_test_setup_teardown(test_perf_map_of_another_user_is_refused_and_counted,
					    world_setup, world_teardown),
	    cmocka_unit_test_setup_teardown(test_elf_cache_bound_and_counters, world_setup,
					    world_teardown),
	    cmocka_unit_test_setup_teardown(test_comm_cut_inside_utf8_is_trimmed, world_setup,
					    world_teardown),
	    cmocka_unit_test_setup_teardown(test_tracked_process_resolves_after_exit_and_deletion,
					    world_setup, world_teardown),
	    cmocka_unit_test_setup_teardown(
		test_tracked_exited_process_waits_one_drain_for_its_samples, world_setup,
		world_teardown),
	    cmocka_unit_test_setup_teardown(test_track_of_a_reused_pid_drops_the_old_symbols,
					    world_setup, world_teardown),
	    cmocka_unit_test_setup_teardown(test_start_times_keep_processes_of_one_pid_apart,
					    world_setup, world_teardown),
	    cmocka_unit_test_setup_teardown(test_track_gone_reads_nothing, world_setup,
					    world_teardown),
	    cmocka_unit_test_setup_teardown(test_sample_start_time_spares_proc_stat, world_setup,
					    world_teardown),
	    cmocka_unit_test_setup_teardown(test_perf_map_is_read_only_with_anonymous_exec_memory,
					    world_setup, world_teardown),
	    cmocka_unit_test_setup_teardown(test_process_records_are_bounded, world_setup,
					    world_teardown),
	    cmocka_unit_test_setup_teardown(test_special_mappings_are_named, world_setup,
					    world_teardown),
	    cmocka_unit_test_setup_teardown(test_vdso_frames_are_named, world_setup,
					    world_teardown),
	    cmocka_unit_test_setup_teardown(test_cpp_template_frame_is_demangled_as_cxxfilt_prints,
					    world_setup, world_teardown),
	    cmocka_unit_test_setup_teardown(test_fifo_at_a_mapped_path_is_refused_and_counted,
					    world_setup, world_teardown),
	    cmocka_unit_test_setup_teardown(test_unnamed_code_is_grouped_by_function, world_setup,
					    world_teardown),
	    cmocka_unit_test_setup_teardown(test_elf_bounds_are_applied_and_counted, world_setup,
					    world_teardown),
	    cmocka_unit_test(test_elf_cache_byte_bound),
	    cmocka_unit_test(test_process_records_are_bounded_in_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
