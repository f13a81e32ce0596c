/*
 * procmaps tests: maps lines as the kernel writes them, including the
 * awkward ones (spaces in paths, deleted files, special and anonymous
 * mappings), malformed lines, and this process's own maps.
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "symbolizer/procmaps.h"

static char *path_of(const struct procmaps_mapping *m)
{
	static char buf[4096];

	snprintf(buf, sizeof(buf), "%.*s", (int)m->path_len, m->path);
	return buf;
}

static void test_parse_file_mapping(void **state)
{
	struct procmaps_mapping m;

	(void)state;
	assert_int_equal(procmaps_parse_line("7f1c2a400000-7f1c2a595000 r-xp 00028000 fd:01 "
					     "1835042                    /usr/lib/x86_64-linux-gnu/"
					     "libc.so.6\n",
					     &m),
			 0);
	assert_int_equal(m.start, 0x7f1c2a400000);
	assert_int_equal(m.end, 0x7f1c2a595000);
	assert_int_equal(m.pgoff, 0x28000);
	assert_int_equal(m.dev_major, 0xfd);
	assert_int_equal(m.dev_minor, 1);
	assert_int_equal(m.inode, 1835042);
	assert_true(m.exec);
	assert_false(m.deleted);
	assert_string_equal(path_of(&m), "/usr/lib/x86_64-linux-gnu/libc.so.6");
}

static void test_parse_path_with_spaces_and_deleted(void **state)
{
	struct procmaps_mapping m;

	(void)state;
	assert_int_equal(procmaps_parse_line("00400000-00401000 r-xp 00000000 08:01 42 "
					     "/opt/my app/bin/run me (deleted)\n",
					     &m),
			 0);
	assert_true(m.deleted);
	assert_string_equal(path_of(&m), "/opt/my app/bin/run me");

	/* "(deleted)" in the middle of a name is part of the name. */
	assert_int_equal(procmaps_parse_line("00400000-00401000 r-xp 00000000 08:01 42 "
					     "/tmp/x (deleted) y",
					     &m),
			 0);
	assert_false(m.deleted);
	assert_string_equal(path_of(&m), "/tmp/x (deleted) y");
}

static void test_parse_special_and_anonymous(void **state)
{
	struct procmaps_mapping m;

	(void)state;
	assert_int_equal(procmaps_parse_line("7ffd5a3f0000-7ffd5a3f2000 r-xp 00000000 00:00 0"
					     "                          [vdso]\n",
					     &m),
			 0);
	assert_true(m.exec);
	assert_int_equal(m.inode, 0);
	assert_true(procmaps_is_special(&m));
	assert_string_equal(path_of(&m), "[vdso]");

	assert_int_equal(
	    procmaps_parse_line("3ef0b1c00000-3ef0b1c40000 rwxp 00000000 00:00 0 \n", &m), 0);
	assert_int_equal(m.path_len, 0);
	assert_false(procmaps_is_special(&m));

	assert_int_equal(procmaps_parse_line("3ef0b1c00000-3ef0b1c40000 rw-p 00000000 00:00 0", &m),
			 0);
	assert_false(m.exec);
	assert_int_equal(m.path_len, 0);
}

static void test_parse_rejects_malformed(void **state)
{
	static const char *const bad[] = {
	    "",
	    "garbage\n",
	    "00400000 r-xp 00000000 08:01 42 /bin/x\n",
	    "00400000-00300000 r-xp 00000000 08:01 42 /bin/x\n", /* end before start */
	    "00400000-00401000 r-x 00000000 08:01 42 /bin/x\n",
	    "00400000-00401000 r-xp 0000zz00 08:01 42 /bin/x\n",
	    "00400000-00401000 r-xp 00000000 0801 42 /bin/x\n",
	    "00400000-00401000 r-xp 00000000 08:01 x42 /bin/x\n",
	    "00400000-00401000 r-xp 00000000 08:01 42x /bin/x\n",
	    "0040000000000000000-00401000 r-xp 00000000 08:01 42 /bin/x\n",
	};
	struct procmaps_mapping m;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(procmaps_parse_line(bad[i], &m), -EINVAL);
}

static void test_load_keeps_exec_sorted_and_counts_malformed(void **state)
{
	char path[] = "/tmp/test_procmaps.XXXXXX";
	const struct procmaps_mapping *m;
	struct procmaps *maps = NULL;
	size_t index = 99;
	int fd;
	FILE *f;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs("7f0000001000-7f0000002000 r-xp 00001000 08:01 7 /lib/libb.so\n"
	      "00400000-00401000 r--p 00000000 08:01 5 /bin/app\n"
	      "00401000-00402000 r-xp 00001000 08:01 5 /bin/app\n"
	      "this line is broken\n"
	      "01000000-01021000 rw-p 00000000 00:00 0 [heap]\n"
	      "3ef0b1c00000-3ef0b1c40000 rwxp 00000000 00:00 0\n"
	      "7ffd5a3f0000-7ffd5a3f2000 r-xp 00000000 00:00 0 [vdso]\n",
	      f);
	fclose(f);
	assert_int_equal(procmaps_load(path, &maps), 0);
	unlink(path);

	assert_int_equal(procmaps_count(maps), 4);
	assert_int_equal(procmaps_malformed(maps), 1);
	for (size_t i = 1; i < procmaps_count(maps); i++)
		assert_true(procmaps_at(maps, i - 1)->start < procmaps_at(maps, i)->start);

	m = procmaps_find(maps, 0x401abc, &index);
	assert_non_null(m);
	assert_string_equal(m->path, "/bin/app");
	assert_int_equal(index, 0);
	assert_string_equal(procmaps_find(maps, 0x7f0000001fff, NULL)->path, "/lib/libb.so");
	assert_string_equal(procmaps_find(maps, 0x7ffd5a3f0010, NULL)->path, "[vdso]");
	assert_string_equal(procmaps_find(maps, 0x3ef0b1c00100, NULL)->path, "");
	/* Not executable, or between mappings, or past the end: no mapping. */
	assert_null(procmaps_find(maps, 0x400010, NULL));
	assert_null(procmaps_find(maps, 0x01000010, NULL));
	assert_null(procmaps_find(maps, 0x7f0000002000, NULL));
	assert_null(procmaps_find(maps, 0x10, NULL));
	/*
	 * A list is kept for its process's life: it holds its mappings and
	 * their paths (13 + 9 + 7 + 1 bytes), not the room it was built in.
	 */
	assert_true(procmaps_bytes(maps) >= 4 * sizeof(*m) + 30);
	assert_true(procmaps_bytes(maps) <= 4 * sizeof(*m) + 30 + 128);
	procmaps_free(maps);
}

/* Writes text to a new temporary file; path gets its name. */
static void temp_file(char *path, const char *text)
{
	int fd = mkstemp(path);
	FILE *f;

	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/*
 * A process with thousands of mappings (a JVM, a browser) has maps far
 * bigger than one read: lines cut by a read's end are joined, and a last
 * line without its newline still counts.
 */
static void test_load_long_maps_and_unterminated_last_line(void **state)
{
	char path[] = "/tmp/test_procmaps.XXXXXX", line[256];
	struct procmaps *maps = NULL;
	size_t len = 0, cap = 4000 * 160;
	char *text = malloc(cap);

	(void)state;
	assert_non_null(text);
	for (int i = 0; i < 4000; i++) {
		/* Paths of varying length, so that lines straddle every read boundary. */
		snprintf(line, sizeof(line), "%x-%x r%cxp 00000000 08:01 %d /lib/lib%0*d.so%s",
			 0x10000000 + i * 0x2000, 0x10000000 + i * 0x2000 + 0x1000,
			 i % 2 ? 'w' : '-', 100 + i, 1 + i % 97, i, i == 3999 ? "" : "\n");
		assert_true(len + strlen(line) < cap);
		memcpy(text + len, line, strlen(line) + 1);
		len += strlen(line);
	}
	assert_true(len > 2 * 64 * 1024);
	temp_file(path, text);
	free(text);
	assert_int_equal(procmaps_load(path, &maps), 0);
	unlink(path);
	assert_int_equal(procmaps_count(maps), 4000);
	assert_int_equal(procmaps_malformed(maps), 0);
	assert_int_equal(procmaps_at(maps, 3999)->inode, 100 + 3999);
	snprintf(line, sizeof(line), "/lib/lib%0*d.so", 1 + 3999 % 97, 3999);
	assert_string_equal(procmaps_at(maps, 3999)->path, line);
	assert_false(procmaps_has_anon(maps));
	procmaps_free(maps);
}

/*
 * Only memory no file backs with code can hold JIT code: the symbolizer
 * looks for a perf map only for a process that has some.
 */
static void test_anonymous_exec_memory_is_told_apart(void **state)
{
	static const struct {
		const char *line;
		bool anon;
	} cases[] = {
	    {"3ef0b1c00000-3ef0b1c40000 rwxp 00000000 00:00 0\n", true},
	    {"3ef0b1c00000-3ef0b1c40000 r-xp 00000000 00:00 0 [anon:v8 code]\n", true},
	    {"7f0000000000-7f0000001000 r-xp 00000000 00:01 2051 /memfd:doublemapper (deleted)\n",
	     true},
	    {"7f0000000000-7f0000001000 r-xp 00000000 00:05 3 /dev/zero (deleted)\n", true},
	    {"7f0000001000-7f0000002000 r-xp 00001000 08:01 7 /lib/libb.so\n", false},
	    {"7ffd5a3f0000-7ffd5a3f2000 r-xp 00000000 00:00 0 [vdso]\n", false},
	    {"01000000-01021000 r-xp 00000000 00:00 0 [heap]\n", false},
	};
	struct procmaps_mapping m;
	struct procmaps *maps = NULL;
	char path[] = "/tmp/test_procmaps.XXXXXX";

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(procmaps_parse_line(cases[i].line, &m), 0);
		assert_int_equal(procmaps_is_anon(&m), cases[i].anon);
	}
	/* Anonymous but not executable: nothing runs there. */
	temp_file(path, "7f0000001000-7f0000002000 r-xp 00001000 08:01 7 /lib/libb.so\n"
			"01000000-01021000 rw-p 00000000 00:00 0 [heap]\n"
			"3ef0b1c00000-3ef0b1c40000 rw-p 00000000 00:00 0\n");
	assert_int_equal(procmaps_load(path, &maps), 0);
	assert_false(procmaps_has_anon(maps));
	procmaps_free(maps);
	unlink(path);
	strcpy(path, "/tmp/test_procmaps.XXXXXX");
	temp_file(path, "7f0000001000-7f0000002000 r-xp 00001000 08:01 7 /lib/libb.so\n"
			"3ef0b1c00000-3ef0b1c40000 rwxp 00000000 00:00 0\n");
	assert_int_equal(procmaps_load(path, &maps), 0);
	assert_true(procmaps_has_anon(maps));
	procmaps_free(maps);
	unlink(path);
}

/* True for the gate page, which only the text of maps lists. */
static bool is_vsyscall(const struct procmaps_mapping *m)
{
	return !strcmp(m->path, "[vsyscall]");
}

/*
 * /proc's own maps are asked with the PROCMAP_QUERY ioctl where the
 * kernel has it (6.11+); a copy of the same text is parsed. Both give the
 * same mappings, a path with a newline (shown "\012" in the text) and a
 * deleted file included.
 */
/* Copies this process's maps text to a new file named by mkstemp() from path. */
static void copy_own_maps(char *path)
{
	char buf[65536];
	int in, out;
	ssize_t n;

	in = open("/proc/self/maps", O_RDONLY);
	assert_true(in >= 0);
	out = mkstemp(path);
	assert_true(out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, (size_t)n), n);
	close(in);
	close(out);
}

static void test_proc_maps_match_their_text(void **state)
{
	char dir[4096], odd[4200], gone[4200], copy[] = "/tmp/test_procmaps.XXXXXX";
	struct procmaps *live = NULL, *text = NULL;
	void *odd_map, *gone_map;
	ssize_t len;
	size_t i, j;
	int fd;

	(void)state;
	/* Next to the test binary: a file system where files may be mapped executable. */
	len = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	assert_true(len > 0);
	dir[len] = '\0';
	*strrchr(dir, '/') = '\0';
	snprintf(odd, sizeof(odd), "%s/test_procmaps odd\nname.so", dir);
	snprintf(gone, sizeof(gone), "%s/test_procmaps_gone.so", dir);
	for (int k = 0; k < 2; k++) {
		fd = open(k ? gone : odd, O_RDWR | O_CREAT | O_TRUNC, 0644);
		assert_true(fd >= 0);
		assert_int_equal(ftruncate(fd, 8192), 0);
		*(k ? &gone_map : &odd_map) =
		    mmap(NULL, 8192, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 4096 * k);
		assert_true((k ? gone_map : odd_map) != MAP_FAILED);
		close(fd);
	}
	unlink(gone);

	copy_own_maps(copy);
	assert_int_equal(procmaps_load("/proc/self/maps", &live), 0);
	assert_int_equal(procmaps_load(copy, &text), 0);
	unlink(copy);

	for (i = 0, j = 0; i < procmaps_count(text); i++) {
		const struct procmaps_mapping *want = procmaps_at(text, i), *got;

		if (is_vsyscall(want))
			continue;
		got = procmaps_at(live, j++);
		assert_non_null(got);
		assert_int_equal(got->start, want->start);
		assert_int_equal(got->end, want->end);
		assert_int_equal(got->pgoff, want->pgoff);
		assert_int_equal(got->dev_major, want->dev_major);
		assert_int_equal(got->dev_minor, want->dev_minor);
		assert_int_equal(got->inode, want->inode);
		assert_int_equal(got->deleted, want->deleted);
		assert_string_equal(got->path, want->path);
		assert_int_equal(got->path_len, want->path_len);
	}
	/* One more only when the text was read: then the gate page is listed too. */
	assert_true(procmaps_count(live) == j || procmaps_count(live) == j + 1);
	assert_string_equal(procmaps_find(live, (uintptr_t)odd_map, NULL)->path + strlen(dir),
			    "/test_procmaps odd\\012name.so");
	assert_true(procmaps_find(live, (uintptr_t)gone_map, NULL)->deleted);
	assert_int_equal(procmaps_find(live, (uintptr_t)gone_map, NULL)->pgoff, 4096);
	procmaps_free(live);
	procmaps_free(text);
	munmap(odd_map, 8192);
	munmap(gone_map, 8192);
	unlink(odd);
}

static void test_load_missing_process(void **state)
{
	struct procmaps *maps = (struct procmaps *)1;

	(void)state;
	assert_int_equal(procmaps_load("/proc/999999999/maps", &maps), -ENOENT);
	assert_null(maps);
}

static void test_own_maps_find_own_code(void **state)
{
	struct procmaps *maps = NULL;
	const struct procmaps_mapping *m;
	char exe[4096];
	ssize_t len;

	(void)state;
	assert_int_equal(procmaps_load("/proc/self/maps", &maps), 0);
	m = procmaps_find(maps, (uint64_t)(uintptr_t)&test_own_maps_find_own_code, NULL);
	assert_non_null(m);
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(len > 0);
	exe[len] = '\0';
	assert_string_equal(m->path, exe);
	assert_true(m->inode != 0);
	procmaps_free(maps);
}

/*
 * A list with two owners outlives the first one's free: the second still
 * finds its code (ASan would report a use after free), and frees it last
 * (LeakSanitizer would report a leak if no free did).
 */
static void test_ref_keeps_the_list_for_its_last_owner(void **state)
{
	struct procmaps *maps = NULL, *second;
	const struct procmaps_mapping *m;

	(void)state;
	assert_int_equal(procmaps_load("/proc/self/maps", &maps), 0);
	second = procmaps_ref(maps);
	assert_ptr_equal(second, maps);
	assert_null(procmaps_ref(NULL));
	procmaps_free(maps);
	m = procmaps_find(second, (uint64_t)(uintptr_t)&test_ref_keeps_the_list_for_its_last_owner,
			  NULL);
	assert_non_null(m);
	assert_true(m->inode != 0);
	procmaps_free(second);
	procmaps_free(NULL);
}

/*
 * For a kernel without PROCMAP_QUERY (kfeat), the text of /proc's own
 * maps is read, never the ioctl: the gate page ([vsyscall]), which only
 * the text lists, is there whenever the text has it.
 */
static void test_text_only_reads_the_text_of_proc(void **state)
{
	struct procmaps *text, *copy;
	char path[] = "/tmp/ebprof-maps-XXXXXX";

	(void)state;
	copy_own_maps(path);
	assert_int_equal(procmaps_load_opt("/proc/self/maps", false, &text), 0);
	assert_int_equal(procmaps_load(path, &copy), 0);
	unlink(path);
	assert_int_equal(procmaps_count(text), procmaps_count(copy));
	for (size_t i = 0; i < procmaps_count(copy); i++) {
		assert_int_equal(procmaps_at(text, i)->start, procmaps_at(copy, i)->start);
		assert_string_equal(procmaps_at(text, i)->path, procmaps_at(copy, i)->path);
	}
	procmaps_free(text);
	procmaps_free(copy);
}

/* Open file descriptors of this process. */
static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* A load leaves no file open, whether it read the maps or failed to. */
static void test_load_leaves_no_file_open(void **state)
{
	int before = open_fds();

	(void)state;
	for (int query = 0; query < 2; query++) {
		struct procmaps *maps;

		assert_int_equal(procmaps_load_opt("/proc/self/maps", query, &maps), 0);
		assert_true(procmaps_count(maps) > 0);
		procmaps_free(maps);
		assert_int_equal(procmaps_load_opt("/proc/2147483647/maps", query, &maps), -ENOENT);
		assert_null(maps);
	}
	assert_int_equal(open_fds(), before);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_file_mapping),
	    cmocka_unit_test(test_parse_path_with_spaces_and_deleted),
	    cmocka_unit_test(test_parse_special_and_anonymous),
	    cmocka_unit_test(test_parse_rejects_malformed),
	    cmocka_unit_test(test_load_keeps_exec_sorted_and_counts_malformed),
	    cmocka_unit_test(test_load_long_maps_and_unterminated_last_line),
	    cmocka_unit_test(test_anonymous_exec_memory_is_told_apart),
	    cmocka_unit_test(test_proc_maps_match_their_text),
	    cmocka_unit_test(test_text_only_reads_the_text_of_proc),
	    cmocka_unit_test(test_load_missing_process),
	    cmocka_unit_test(test_own_maps_find_own_code),
	    cmocka_unit_test(test_ref_keeps_the_list_for_its_last_owner),
	    cmocka_unit_test(test_load_leaves_no_file_open),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
