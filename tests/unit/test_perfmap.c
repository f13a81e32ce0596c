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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
