/*
 * perfmap tests: perf map files as node --perf-basic-prof writes them,
 * read once, then again as the runtime appends, with malformed lines;
 * and perf maps planted by someone other than the process's user refused.
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "symbolizer/perfmap.h"

struct map_file {
	char path[64];
};

static void map_file_new(struct map_file *mf)
{
	int fd;

	strcpy(mf->path, "/tmp/perf-test.XXXXXX");
	fd = mkstemp(mf->path);
	assert_true(fd >= 0);
	close(fd);
}

static void append(const struct map_file *mf, const char *text)
{
	FILE *f = fopen(mf->path, "a");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static const char *name_at(const struct perfmap *map, uint64_t addr)
{
	const struct perfmap_symbol *s = perfmap_lookup(map, addr, NULL);

	return s ? s->name : NULL;
}

static void test_parses_node_lines_with_spaces_in_names(void **state)
{
	struct map_file mf;
	struct perfmap *map;
	uint64_t offset = 0;
	const struct perfmap_symbol *s;

	(void)state;
	map_file_new(&mf);
	append(&mf, "3ef0b1c04000 1c LazyCompile:~hot /srv/app/main.js:12:20\n"
		    "3ef0b1c04100 40 Builtin:ArgumentsAdaptorTrampoline\n"
		    "0x3ef0b1c05000 0x10 Function:cold path.js:3\n");
	map = perfmap_new(NULL, mf.path, getuid());
	assert_non_null(map);
	assert_int_equal(perfmap_refresh(map), 0);
	assert_int_equal(perfmap_count(map), 3);
	assert_int_equal(perfmap_malformed(map), 0);
	s = perfmap_lookup(map, 0x3ef0b1c04010, &offset);
	assert_non_null(s);
	assert_string_equal(s->name, "LazyCompile:~hot /srv/app/main.js:12:20");
	assert_int_equal(offset, 0x10);
	assert_string_equal(name_at(map, 0x3ef0b1c0413f), "Builtin:ArgumentsAdaptorTrampoline");
	assert_string_equal(name_at(map, 0x3ef0b1c05000), "Function:cold path.js:3");
	perfmap_free(map);
	unlink(mf.path);
}

static void test_size_bounds_lookups(void **state)
{
	struct map_file mf;
	struct perfmap *map;

	(void)state;
	map_file_new(&mf);
	append(&mf, "1000 10 first\n2000 10 second\n");
	map = perfmap_new(NULL, mf.path, getuid());
	assert_int_equal(perfmap_refresh(map), 0);
	assert_null(name_at(map, 0xfff));
	assert_string_equal(name_at(map, 0x100f), "first");
	assert_null(name_at(map, 0x1010)); /* past first's size, before second */
	assert_null(name_at(map, 0x2010));
	perfmap_free(map);
	unlink(mf.path);
}

static void test_malformed_lines_skipped_and_counted(void **state)
{
	struct map_file mf;
	struct perfmap *map;

	(void)state;
	map_file_new(&mf);
	append(&mf, "not a line\n"
		    "1000 10\n"	 /* no name */
		    "1000 10 \n" /* empty name */
		    "zz00 10 bad_start\n"
		    "1000 zz bad_size\n"
		    "10000000000000000 10 too_big\n"
		    "ffffffffffffffff 10 wraps\n"
		    "\n"
		    "1000 10 good\n");
	map = perfmap_new(NULL, mf.path, getuid());
	assert_int_equal(perfmap_refresh(map), 0);
	assert_int_equal(perfmap_count(map), 1);
	assert_int_equal(perfmap_malformed(map), 8);
	assert_string_equal(name_at(map, 0x1000), "good");
	perfmap_free(map);
	unlink(mf.path);
}

static void test_rereads_appended_lines_and_newest_wins(void **state)
{
	struct map_file mf;
	struct perfmap *map;

	(void)state;
	map_file_new(&mf);
	append(&mf, "1000 10 old\n2000 10 kept\n3000 10 half");
	map = perfmap_new(NULL, mf.path, getuid());
	assert_int_equal(perfmap_refresh(map), 0);
	assert_int_equal(perfmap_count(map), 2);
	/* The writer had not finished its last line. */
	assert_null(name_at(map, 0x3000));

	append(&mf, "_written\n1000 20 new\n");
	assert_int_equal(perfmap_refresh(map), 0);
	assert_string_equal(name_at(map, 0x3000), "half_written");
	assert_string_equal(name_at(map, 0x1018), "new");
	assert_string_equal(name_at(map, 0x2000), "kept");
	assert_int_equal(perfmap_count(map), 3);
	/* Unchanged file: nothing read, nothing lost. */
	assert_int_equal(perfmap_refresh(map), 0);
	assert_int_equal(perfmap_count(map), 3);
	perfmap_free(map);
	unlink(mf.path);
}

static void test_replaced_file_is_read_whole_again(void **state)
{
	struct map_file mf;
	struct perfmap *map;
	FILE *f;

	(void)state;
	map_file_new(&mf);
	append(&mf, "1000 10 first_run_a\n2000 10 first_run_b\n");
	map = perfmap_new(NULL, mf.path, getuid());
	assert_int_equal(perfmap_refresh(map), 0);
	/* A new process with the same PID starts a shorter file. */
	f = fopen(mf.path, "w");
	fputs("5000 10 second_run\n", f);
	fclose(f);
	assert_int_equal(perfmap_refresh(map), 0);
	assert_int_equal(perfmap_count(map), 1);
	assert_null(name_at(map, 0x1000));
	assert_string_equal(name_at(map, 0x5000), "second_run");
	perfmap_free(map);
	unlink(mf.path);
}

static void test_missing_file_keeps_entries(void **state)
{
	struct map_file mf;
	struct perfmap *map;

	(void)state;
	map_file_new(&mf);
	append(&mf, "1000 10 jitted\n");
	map = perfmap_new(NULL, mf.path, getuid());
	assert_int_equal(perfmap_refresh(map), 0);
	unlink(mf.path);
	assert_int_equal(perfmap_refresh(map), -ENOENT);
	assert_string_equal(name_at(map, 0x1000), "jitted");
	perfmap_free(map);

	map = perfmap_new(NULL, "/nonexistent/perf-1.map", getuid());
	assert_int_equal(perfmap_refresh(map), -ENOENT);
	assert_int_equal(perfmap_count(map), 0);
	assert_null(name_at(map, 0x1000));
	perfmap_free(map);
}

/* The tests run as root; a planted file belongs to this other user. */
#define OWNER 4242
#define STRANGER 4343

static void test_map_of_another_user_is_refused_once(void **state)
{
	struct map_file mf;
	struct perfmap *map;

	(void)state;
	map_file_new(&mf);
	append(&mf, "1000 10 planted\n");
	assert_int_equal(chown(mf.path, STRANGER, STRANGER), 0);
	map = perfmap_new(NULL, mf.path, OWNER);
	assert_int_equal(perfmap_refresh(map), -EPERM);
	assert_int_equal(perfmap_refresh(map), -EPERM);
	assert_null(name_at(map, 0x1000));
	assert_int_equal(perfmap_count(map), 0);
	assert_int_equal(perfmap_refused(map), 1); /* looked at twice, counted once */

	/* The process's own user, or root: used. */
	assert_int_equal(chown(mf.path, OWNER, OWNER), 0);
	assert_int_equal(perfmap_refresh(map), 0);
	assert_string_equal(name_at(map, 0x1000), "planted");
	assert_int_equal(chown(mf.path, 0, 0), 0);
	assert_int_equal(perfmap_refresh(map), 0);
	assert_string_equal(name_at(map, 0x1000), "planted");
	assert_int_equal(perfmap_refused(map), 1);
	perfmap_free(map);
	unlink(mf.path);
}

static void test_map_writable_by_others_is_refused_and_dropped(void **state)
{
	struct map_file mf;
	struct perfmap *map;

	(void)state;
	map_file_new(&mf);
	append(&mf, "1000 10 jitted\n");
	assert_int_equal(chmod(mf.path, 0644), 0);
	map = perfmap_new(NULL, mf.path, getuid());
	assert_int_equal(perfmap_refresh(map), 0);
	assert_string_equal(name_at(map, 0x1000), "jitted");

	/* Once anyone may rewrite it, what it said is not kept either. */
	assert_int_equal(chmod(mf.path, 0666), 0);
	assert_int_equal(perfmap_refresh(map), -EPERM);
	assert_null(name_at(map, 0x1000));
	assert_int_equal(chmod(mf.path, 0664), 0);
	assert_int_equal(perfmap_refresh(map), -EPERM);
	assert_int_equal(perfmap_refused(map), 1); /* a mode change keeps mtime */

	assert_int_equal(chmod(mf.path, 0600), 0);
	assert_int_equal(perfmap_refresh(map), 0);
	assert_string_equal(name_at(map, 0x1000), "jitted");
	assert_int_equal(perfmap_count(map), 1);
	perfmap_free(map);
	unlink(mf.path);
}

static void test_symlink_fifo_and_hard_link_are_refused(void **state)
{
	char dir[] = "/tmp/perf-test-dir.XXXXXX";
	char target[128], link_path[128];
	struct perfmap *map;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(target, sizeof(target), "%s/target", dir);
	snprintf(link_path, sizeof(link_path), "%s/perf-1.map", dir);
	f = fopen(target, "w");
	assert_non_null(f);
	fputs("1000 10 secret\n", f);
	assert_int_equal(fclose(f), 0);

	/* A symlink, even to a root-owned file. */
	assert_int_equal(symlink(target, link_path), 0);
	map = perfmap_new(NULL, link_path, OWNER);
	assert_int_equal(perfmap_refresh(map), -EPERM);
	assert_null(name_at(map, 0x1000));
	assert_int_equal(perfmap_refused(map), 1);
	perfmap_free(map);
	unlink(link_path);

	/* A second name for someone else's file. */
	assert_int_equal(link(target, link_path), 0);
	map = perfmap_new(NULL, link_path, OWNER);
	assert_int_equal(perfmap_refresh(map), -EPERM);
	perfmap_free(map);
	unlink(link_path);

	/* A FIFO: refused at once, where reading it would block the drain. */
	assert_int_equal(mkfifo(link_path, 0600), 0);
	map = perfmap_new(NULL, link_path, getuid());
	assert_int_equal(perfmap_refresh(map), -EPERM);
	perfmap_free(map);
	unlink(link_path);

	unlink(target);
	rmdir(dir);
}

static void test_map_is_resolved_inside_the_process_root(void **state)
{
	char root[] = "/tmp/perf-test-root.XXXXXX";
	char path[160], outside[] = "/tmp/perf-test-outside.XXXXXX";
	struct perfmap *map;
	FILE *f;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/tmp", root);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/tmp/perf-7.map", root);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("2000 10 in_container\n", f);
	assert_int_equal(fclose(f), 0);
	map = perfmap_new(root, "/tmp/perf-7.map", getuid());
	assert_int_equal(perfmap_refresh(map), 0);
	assert_string_equal(name_at(map, 0x2000), "in_container");
	perfmap_free(map);

	/* The container's /tmp made a symlink to a directory of the host:
	 * resolved inside the root it leads nowhere, and nothing is read. */
	fd = mkstemp(outside);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "3000 10 host_file\n", 18), 18);
	close(fd);
	unlink(path);
	snprintf(path, sizeof(path), "%s/tmp", root);
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(symlink("/tmp", path), 0);
	/* outside is "/tmp/perf-test-outside.XXXXXX": the same name in the root. */
	map = perfmap_new(root, outside, getuid());
	assert_int_not_equal(perfmap_refresh(map), 0);
	assert_null(name_at(map, 0x3000));
	perfmap_free(map);
	unlink(path);
	rmdir(root);
	unlink(outside);
}

/* --- bounds: the process writes the file, so what we read of it is bounded --- */

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
 * Issue 20: a perf map of 3 GiB without a newline (a sparse file) was read
 * into one line. Now it is skipped PERFMAP_MAX_READ bytes at a time, and
 * counted once; memory stays flat.
 */
static void test_sparse_map_without_newline_is_bounded(void **state)
{
	struct map_file mf;
	struct perfmap *map;
	long before = peak_rss_kb();

	(void)state;
	map_file_new(&mf);
	assert_int_equal(truncate(mf.path, 3LL << 30), 0);
	map = perfmap_new(NULL, mf.path, getuid());
	for (int i = 0; i < 4; i++)
		assert_int_equal(perfmap_refresh(map), 0);
	assert_int_equal(perfmap_count(map), 0);
	assert_int_equal(perfmap_too_long(map), 1);
	assert_int_equal(perfmap_malformed(map), 1);
	assert_true(peak_rss_kb() - before < 64 * 1024);
	perfmap_free(map);
	unlink(mf.path);
}

static void test_long_line_is_skipped_to_its_newline(void **state)
{
	struct map_file mf;
	struct perfmap *map;
	char *line = malloc(PERFMAP_MAX_LINE * 3);

	(void)state;
	assert_non_null(line);
	memset(line, 'x', PERFMAP_MAX_LINE * 3 - 1);
	memcpy(line, "1000 10 ", 8);
	line[PERFMAP_MAX_LINE * 3 - 1] = '\0';
	map_file_new(&mf);
	append(&mf, "2000 10 before\n");
	append(&mf, line);
	map = perfmap_new(NULL, mf.path, getuid());
	assert_int_equal(perfmap_refresh(map), 0);
	assert_int_equal(perfmap_too_long(map), 1);
	/* The writer ends the long line, then writes a good one: only that is kept. */
	append(&mf, "\n3000 10 after\n");
	assert_int_equal(perfmap_refresh(map), 0);
	assert_string_equal(name_at(map, 0x2000), "before");
	assert_null(name_at(map, 0x1000));
	assert_string_equal(name_at(map, 0x3000), "after");
	assert_int_equal(perfmap_too_long(map), 1);
	assert_int_equal(perfmap_malformed(map), 1);
	/* A line just under the bound is a line. */
	memset(line, 'y', PERFMAP_MAX_LINE - 1);
	memcpy(line, "4000 10 ", 8);
	line[PERFMAP_MAX_LINE - 1] = '\n';
	line[PERFMAP_MAX_LINE] = '\0';
	append(&mf, line);
	assert_int_equal(perfmap_refresh(map), 0);
	assert_non_null(name_at(map, 0x4000));
	assert_int_equal(strlen(name_at(map, 0x4000)), PERFMAP_MAX_LINE - 1 - 8);
	free(line);
	perfmap_free(map);
	unlink(mf.path);
}

/* A big map is read PERFMAP_MAX_READ bytes per refresh, whole in the end. */
static void test_each_refresh_reads_a_bounded_part(void **state)
{
	const size_t lines = PERFMAP_MAX_READ / 32 + 1000;
	struct map_file mf;
	struct perfmap *map;
	FILE *f;

	(void)state;
	map_file_new(&mf);
	f = fopen(mf.path, "w");
	assert_non_null(f);
	for (size_t i = 0; i < lines; i++)
		fprintf(f, "%016zx 10 function_%09zu\n", 0x100000 + i * 16, i); /* 39 bytes */
	assert_int_equal(fclose(f), 0);
	map = perfmap_new(NULL, mf.path, getuid());
	assert_int_equal(perfmap_refresh(map), 0);
	assert_true(perfmap_count(map) > 0 && perfmap_count(map) <= PERFMAP_MAX_READ / 39);
	/* The file has not changed: the rest is read all the same. */
	assert_int_equal(perfmap_refresh(map), 0);
	assert_int_equal(perfmap_count(map), lines);
	assert_int_equal(perfmap_malformed(map), 0);
	assert_int_equal(perfmap_truncated(map), 0);
	perfmap_free(map);
	unlink(mf.path);
}

/* One file is read up to max_bytes, then no further until it is replaced. */
static void test_total_bytes_bound(void **state)
{
	struct perfmap_config config = { .owner = getuid(), .max_bytes = 30 };
	struct map_file mf;
	struct perfmap *map;

	(void)state;
	map_file_new(&mf);
	config.path = mf.path;
	append(&mf, "1000 10 first\n2000 10 second\n3000 10 third\n"); /* 14 + 15 + 14 */
	map = perfmap_new_with(&config);
	assert_int_equal(perfmap_refresh(map), 0);
	assert_string_equal(name_at(map, 0x1000), "first");
	assert_string_equal(name_at(map, 0x2000), "second");
	assert_null(name_at(map, 0x3000));
	assert_int_equal(perfmap_truncated(map), 1);
	append(&mf, "4000 10 fourth\n");
	assert_int_equal(perfmap_refresh(map), 0);
	assert_null(name_at(map, 0x4000));
	assert_int_equal(perfmap_truncated(map), 1);
	perfmap_free(map);
	unlink(mf.path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parses_node_lines_with_spaces_in_names),
	    cmocka_unit_test(test_size_bounds_lookups),
	    cmocka_unit_test(test_malformed_lines_skipped_and_counted),
	    cmocka_unit_test(test_rereads_appended_lines_and_newest_wins),
	    cmocka_unit_test(test_replaced_file_is_read_whole_again),
	    cmocka_unit_test(test_missing_file_keeps_entries),
	    cmocka_unit_test(test_map_of_another_user_is_refused_once),
	    cmocka_unit_test(test_map_writable_by_others_is_refused_and_dropped),
	    cmocka_unit_test(test_symlink_fifo_and_hard_link_are_refused),
	    cmocka_unit_test(test_map_is_resolved_inside_the_process_root),
	    cmocka_unit_test(test_sparse_map_without_newline_is_bounded),
	    cmocka_unit_test(test_long_line_is_skipped_to_its_newline),
	    cmocka_unit_test(test_each_refresh_reads_a_bounded_part),
	    cmocka_unit_test(test_total_bytes_bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
