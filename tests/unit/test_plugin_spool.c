/*
 * Tests for spool: the files an operator (or a web server) finds in the
 * spool directory, and what a hostile neighbour in that directory can and
 * cannot make the plugin do. The tests run as root, for which permission
 * bits mean nothing, so failures are provoked with real file systems: a
 * read-only and a tiny tmpfs, mounted in a private mount namespace.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugin/spool.h"
#include "render/folded.h"
#include "render/profile.h"

#define T0 1700000000 /* 2023-11-14T22:13:20Z */

struct fixture {
	char dir[64];
	struct profile *profile;
};

static void add(struct profile *p, const char *leaf, uint64_t count)
{
	struct frame frames[] = {
		{ "app", FRAME_PROCESS },
		{ "main", FRAME_USER },
		{ leaf, FRAME_USER },
	};

	assert_int_equal(profile_add(p, frames, 3, count), 0);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	snprintf(f->dir, sizeof(f->dir), "/tmp/ebprof-spool.XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	f->profile = profile_new();
	add(f->profile, "burn_seventy", 70);
	add(f->profile, "burn_thirty", 30);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd) != 0)
		return -1;
	profile_free(f->profile);
	free(f);
	return 0;
}

static struct spool *spool_in(const char *dir, unsigned int formats, uint64_t files,
			      uint64_t bytes)
{
	struct spool_config c = {
		.dir = dir, .formats = formats, .keep_files = files, .keep_bytes = bytes
	};
	struct spool *s = spool_new(&c);

	assert_non_null(s);
	return s;
}

static void path_of(const struct fixture *f, const char *name, char *out, size_t len)
{
	snprintf(out, len, "%s/%s", f->dir, name);
}

static bool exists(const struct fixture *f, const char *name)
{
	char path[256];
	struct stat st;

	path_of(f, name, path, sizeof(path));
	return lstat(path, &st) == 0;
}

static ino_t inode_of(const struct fixture *f, const char *name)
{
	char path[256];
	struct stat st;

	path_of(f, name, path, sizeof(path));
	assert_int_equal(lstat(path, &st), 0);
	return st.st_ino;
}

/* Counts entries whose names start with prefix and end with suffix. */
static int count(const char *dir, const char *prefix, const char *suffix)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)) != NULL) {
		size_t len = strlen(de->d_name), sl = strlen(suffix);

		if (strncmp(de->d_name, prefix, strlen(prefix)) == 0 && len >= sl &&
		    strcmp(de->d_name + len - sl, suffix) == 0)
			n++;
	}
	closedir(d);
	return n;
}

static void read_file(const struct fixture *f, const char *name, char *buf, size_t len)
{
	char path[256];
	FILE *in;
	size_t n;

	path_of(f, name, path, sizeof(path));
	in = fopen(path, "r");
	assert_non_null(in);
	n = fread(buf, 1, len - 1, in);
	buf[n] = '\0';
	fclose(in);
}

static void write_file(const char *path, const char *text)
{
	FILE *out = fopen(path, "w");

	assert_non_null(out);
	fputs(text, out);
	fclose(out);
}

static void test_writes_both_formats_and_latest(void **state)
{
	struct fixture *f = *state;
	struct spool *s = spool_in(f->dir, FORMAT_BIT(FORMAT_SVG) | FORMAT_BIT(FORMAT_FOLDED), 10, 0);
	char err[512], text[4096];

	assert_int_equal(spool_write(s, f->profile, T0, "t", "sub", err, sizeof(err)), 0);
	assert_true(exists(f, "ebprof-20231114T221320Z.svg"));
	assert_true(exists(f, "ebprof-20231114T221320Z.folded"));
	assert_string_equal(spool_last_name(s, FORMAT_SVG), "ebprof-20231114T221320Z.svg");
	/* latest.* are the same files, not copies or links that can dangle. */
	assert_int_equal(inode_of(f, "latest.svg"), inode_of(f, "ebprof-20231114T221320Z.svg"));
	assert_int_equal(inode_of(f, "latest.folded"),
			 inode_of(f, "ebprof-20231114T221320Z.folded"));
	read_file(f, "latest.folded", text, sizeof(text));
	assert_non_null(strstr(text, "app;main;burn_seventy 70\n"));
	assert_non_null(strstr(text, "app;main;burn_thirty 30\n"));
	read_file(f, "latest.svg", text, sizeof(text));
	assert_non_null(strstr(text, "<svg"));
	/* Nothing half-written or temporary is left. */
	assert_int_equal(count(f->dir, ".", ".tmp"), 0);
	assert_int_equal(count(f->dir, "", ""), 2 + 4);
	spool_free(s);
}

static void test_one_format_only(void **state)
{
	struct fixture *f = *state;
	struct spool *s = spool_in(f->dir, FORMAT_BIT(FORMAT_FOLDED), 10, 0);
	char err[512];

	assert_int_equal(spool_write(s, f->profile, T0, NULL, NULL, err, sizeof(err)), 0);
	assert_int_equal(count(f->dir, "ebprof-", ".folded"), 1);
	assert_int_equal(count(f->dir, "ebprof-", ".svg"), 0);
	assert_false(exists(f, "latest.svg"));
	spool_free(s);
}

static void test_two_in_one_second_get_a_suffix(void **state)
{
	struct fixture *f = *state;
	struct spool *s = spool_in(f->dir, FORMAT_BIT(FORMAT_SVG) | FORMAT_BIT(FORMAT_FOLDED), 10, 0);
	char err[512];

	for (int i = 0; i < 3; i++)
		assert_int_equal(spool_write(s, f->profile, T0, NULL, NULL, err, sizeof(err)), 0);
	assert_true(exists(f, "ebprof-20231114T221320Z.svg"));
	assert_true(exists(f, "ebprof-20231114T221320Z-1.svg"));
	assert_true(exists(f, "ebprof-20231114T221320Z-2.folded"));
	assert_int_equal(inode_of(f, "latest.svg"), inode_of(f, "ebprof-20231114T221320Z-2.svg"));
	spool_free(s);
}

static void test_retention_by_count(void **state)
{
	struct fixture *f = *state;
	struct spool *s = spool_in(f->dir, FORMAT_BIT(FORMAT_SVG) | FORMAT_BIT(FORMAT_FOLDED), 3, 0);
	char err[512];

	for (int i = 0; i < 7; i++)
		assert_int_equal(spool_write(s, f->profile, T0 + 60 * i, NULL, NULL, err,
					     sizeof(err)),
				 0);
	assert_int_equal(count(f->dir, "ebprof-", ".svg"), 3);
	assert_int_equal(count(f->dir, "ebprof-", ".folded"), 3);
	/* The newest three: 22:17:20, 22:18:20, 22:19:20. */
	assert_false(exists(f, "ebprof-20231114T221620Z.svg"));
	assert_true(exists(f, "ebprof-20231114T221720Z.svg"));
	assert_true(exists(f, "ebprof-20231114T221920Z.folded"));
	assert_int_equal(inode_of(f, "latest.svg"), inode_of(f, "ebprof-20231114T221920Z.svg"));
	spool_free(s);
}

/* Suffixed files of one second are ordered by their suffix, not by name. */
static void test_retention_orders_suffixes_by_age(void **state)
{
	struct fixture *f = *state;
	struct spool *s = spool_in(f->dir, FORMAT_BIT(FORMAT_FOLDED), 2, 0);
	char err[512];

	for (int i = 0; i < 3; i++)
		assert_int_equal(spool_write(s, f->profile, T0, NULL, NULL, err, sizeof(err)), 0);
	assert_false(exists(f, "ebprof-20231114T221320Z.folded"));
	assert_true(exists(f, "ebprof-20231114T221320Z-1.folded"));
	assert_true(exists(f, "ebprof-20231114T221320Z-2.folded"));
	spool_free(s);
}

static void test_retention_by_bytes(void **state)
{
	struct fixture *f = *state;
	struct spool *s;
	char err[512], path[256];
	struct stat st;
	uint64_t one;

	/* Learn the size of one folded file, then keep room for 2.5 of them. */
	s = spool_in(f->dir, FORMAT_BIT(FORMAT_FOLDED), 100, 0);
	assert_int_equal(spool_write(s, f->profile, T0, NULL, NULL, err, sizeof(err)), 0);
	path_of(f, "latest.folded", path, sizeof(path));
	assert_int_equal(stat(path, &st), 0);
	one = (uint64_t)st.st_size;
	spool_free(s);

	s = spool_in(f->dir, FORMAT_BIT(FORMAT_FOLDED), 0, one * 5 / 2);
	for (int i = 1; i < 6; i++)
		assert_int_equal(spool_write(s, f->profile, T0 + i, NULL, NULL, err, sizeof(err)),
				 0);
	assert_int_equal(count(f->dir, "ebprof-", ".folded"), 2);
	assert_true(exists(f, "ebprof-20231114T221325Z.folded"));
	assert_true(exists(f, "ebprof-20231114T221324Z.folded"));
	spool_free(s);

	/* A budget smaller than one file still keeps the newest of each. */
	s = spool_in(f->dir, FORMAT_BIT(FORMAT_SVG) | FORMAT_BIT(FORMAT_FOLDED), 0, 1);
	assert_int_equal(spool_write(s, f->profile, T0 + 10, NULL, NULL, err, sizeof(err)), 0);
	assert_int_equal(count(f->dir, "ebprof-", ".folded"), 1);
	assert_int_equal(count(f->dir, "ebprof-", ".svg"), 1);
	assert_true(exists(f, "ebprof-20231114T221330Z.svg"));
	spool_free(s);
}

/* Retention deletes only regular files with our names that we own. */
static void test_retention_spares_foreign_files(void **state)
{
	struct fixture *f = *state;
	struct spool *s = spool_in(f->dir, FORMAT_BIT(FORMAT_FOLDED), 1, 0);
	char err[512], path[256], victim[256], text[64];
	FILE *in;

	path_of(f, "ebprof-20000101T000000Z.folded", path, sizeof(path));
	write_file(path, "not ours\n");
	assert_int_equal(chown(path, 65534, 65534), 0);
	path_of(f, "ebprof-20000101T000001Z.folded", path, sizeof(path));
	snprintf(victim, sizeof(victim), "%s.victim", f->dir);
	write_file(victim, "precious\n");
	assert_int_equal(symlink(victim, path), 0);
	path_of(f, "ebprof-notes.folded", path, sizeof(path));
	write_file(path, "notes\n");
	path_of(f, "ebprof-20000101T000002Z.folded.bak", path, sizeof(path));
	write_file(path, "backup\n");

	for (int i = 0; i < 3; i++)
		assert_int_equal(spool_write(s, f->profile, T0 + i, NULL, NULL, err, sizeof(err)),
				 0);
	assert_true(exists(f, "ebprof-20000101T000000Z.folded"));
	assert_true(exists(f, "ebprof-20000101T000001Z.folded"));
	assert_true(exists(f, "ebprof-notes.folded"));
	assert_true(exists(f, "ebprof-20000101T000002Z.folded.bak"));
	assert_false(exists(f, "ebprof-20231114T221320Z.folded"));
	assert_true(exists(f, "ebprof-20231114T221322Z.folded"));
	/* The link's target, next to the directory, is untouched. */
	in = fopen(victim, "r");
	assert_non_null(in);
	assert_non_null(fgets(text, sizeof(text), in));
	fclose(in);
	assert_string_equal(text, "precious\n");
	unlink(victim);
	spool_free(s);
}

/* A foreign file at the name we want is left alone; we take the next. */
static void test_foreign_file_at_our_name_is_not_clobbered(void **state)
{
	struct fixture *f = *state;
	struct spool *s = spool_in(f->dir, FORMAT_BIT(FORMAT_FOLDED), 10, 0);
	char err[512], path[256], text[64];

	path_of(f, "ebprof-20231114T221320Z.folded", path, sizeof(path));
	write_file(path, "someone else's\n");
	assert_int_equal(chown(path, 65534, 65534), 0);
	assert_int_equal(spool_write(s, f->profile, T0, NULL, NULL, err, sizeof(err)), 0);
	read_file(f, "ebprof-20231114T221320Z.folded", text, sizeof(text));
	assert_string_equal(text, "someone else's\n");
	assert_int_equal(inode_of(f, "latest.folded"),
			 inode_of(f, "ebprof-20231114T221320Z-1.folded"));
	spool_free(s);
}

/* A symlink at latest.svg is neither followed nor replaced. */
static void test_symlink_at_latest_is_not_followed(void **state)
{
	struct fixture *f = *state;
	struct spool *s = spool_in(f->dir, FORMAT_BIT(FORMAT_SVG) | FORMAT_BIT(FORMAT_FOLDED), 10, 0);
	char err[512], path[256], victim[256], text[64];
	FILE *in;

	snprintf(victim, sizeof(victim), "%s.victim", f->dir);
	write_file(victim, "precious\n");
	path_of(f, "latest.svg", path, sizeof(path));
	assert_int_equal(symlink(victim, path), 0);

	assert_int_equal(spool_write(s, f->profile, T0, NULL, NULL, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "latest.svg"));
	assert_non_null(strstr(err, "not a regular file"));
	in = fopen(victim, "r");
	assert_non_null(fgets(text, sizeof(text), in));
	fclose(in);
	assert_string_equal(text, "precious\n");
	/* Still a symlink, still ours to leave; the rest of the spool works. */
	assert_true(readlink(path, text, sizeof(text)) > 0);
	assert_true(exists(f, "ebprof-20231114T221320Z.svg"));
	assert_int_equal(inode_of(f, "latest.folded"),
			 inode_of(f, "ebprof-20231114T221320Z.folded"));
	assert_int_equal(count(f->dir, ".", ".tmp"), 0);
	unlink(victim);
	spool_free(s);
}

/* A latest.svg someone else owns is not replaced either. */
static void test_foreign_latest_is_not_replaced(void **state)
{
	struct fixture *f = *state;
	struct spool *s = spool_in(f->dir, FORMAT_BIT(FORMAT_SVG), 10, 0);
	char err[512], path[256], text[64];

	path_of(f, "latest.svg", path, sizeof(path));
	write_file(path, "theirs\n");
	assert_int_equal(chown(path, 65534, 65534), 0);
	assert_int_equal(spool_write(s, f->profile, T0, NULL, NULL, err, sizeof(err)), -EPERM);
	read_file(f, "latest.svg", text, sizeof(text));
	assert_string_equal(text, "theirs\n");
	spool_free(s);
}

/* Symlinks planted at the temporary names we will use are skipped. */
static void test_symlink_at_temp_name_is_not_followed(void **state)
{
	struct fixture *f = *state;
	struct spool *s = spool_in(f->dir, FORMAT_BIT(FORMAT_SVG) | FORMAT_BIT(FORMAT_FOLDED), 10, 0);
	char err[512], path[256], victim[256], name[64], text[64];
	FILE *in;

	snprintf(victim, sizeof(victim), "%s.victim", f->dir);
	write_file(victim, "precious\n");
	/* The first temporary names this spool would pick. */
	for (int i = 0; i < 6; i++) {
		snprintf(name, sizeof(name), ".ebprof-%ld-%d.tmp", (long)getpid(), i);
		path_of(f, name, path, sizeof(path));
		assert_int_equal(symlink(victim, path), 0);
	}
	assert_int_equal(spool_write(s, f->profile, T0, NULL, NULL, err, sizeof(err)), 0);
	in = fopen(victim, "r");
	assert_non_null(fgets(text, sizeof(text), in));
	fclose(in);
	assert_string_equal(text, "precious\n");
	/* The planted links are not ours to delete. */
	assert_int_equal(count(f->dir, ".ebprof-", ".tmp"), 6);
	assert_true(exists(f, "latest.svg"));
	assert_true(exists(f, "latest.folded"));
	unlink(victim);
	spool_free(s);
}

/* Temporary files of a writer that died are cleaned up; others are not. */
static void test_stale_temp_files_are_removed(void **state)
{
	struct fixture *f = *state;
	struct spool *s = spool_in(f->dir, FORMAT_BIT(FORMAT_FOLDED), 10, 0);
	char err[512], path[256];

	/* PID 4194305 is above PID_MAX_LIMIT: no such process, ever. */
	path_of(f, ".ebprof-4194305-7.tmp", path, sizeof(path));
	write_file(path, "half");
	path_of(f, ".ebprof-1-7.tmp", path, sizeof(path)); /* init is alive */
	write_file(path, "half");
	assert_int_equal(spool_write(s, f->profile, T0, NULL, NULL, err, sizeof(err)), 0);
	assert_false(exists(f, ".ebprof-4194305-7.tmp"));
	assert_true(exists(f, ".ebprof-1-7.tmp"));
	spool_free(s);
}

static void test_spool_dir_is_created_but_never_followed(void **state)
{
	struct fixture *f = *state;
	struct spool *s;
	char err[512], sub[256], link[256];

	path_of(f, "new", sub, sizeof(sub));
	s = spool_in(sub, FORMAT_BIT(FORMAT_FOLDED), 10, 0);
	assert_int_equal(spool_write(s, f->profile, T0, NULL, NULL, err, sizeof(err)), 0);
	assert_int_equal(count(sub, "ebprof-", ".folded"), 1);
	spool_free(s);

	path_of(f, "link", link, sizeof(link));
	assert_int_equal(symlink(sub, link), 0);
	s = spool_in(link, FORMAT_BIT(FORMAT_FOLDED), 10, 0);
	assert_int_equal(spool_write(s, f->profile, T0 + 1, NULL, NULL, err, sizeof(err)),
			 -ELOOP);
	assert_non_null(strstr(err, link));
	assert_non_null(strstr(err, "symbolic link"));
	assert_int_equal(count(sub, "ebprof-", ".folded"), 1);
	spool_free(s);
}

static void test_dir_that_is_a_file_errors_cleanly(void **state)
{
	struct fixture *f = *state;
	struct spool *s;
	char err[512], file[256], below[300];

	path_of(f, "file", file, sizeof(file));
	write_file(file, "x");
	snprintf(below, sizeof(below), "%s/spool", file);
	s = spool_in(below, FORMAT_BIT(FORMAT_SVG), 10, 0);
	assert_int_equal(spool_write(s, f->profile, T0, NULL, NULL, err, sizeof(err)), -ENOTDIR);
	assert_non_null(strstr(err, below));
	assert_non_null(strstr(err, "Not a directory"));
	spool_free(s);
	s = spool_in(file, FORMAT_BIT(FORMAT_SVG), 10, 0);
	assert_int_equal(spool_write(s, f->profile, T0, NULL, NULL, err, sizeof(err)), -ENOTDIR);
	spool_free(s);
}

/* A private mount namespace, so the tmpfs mounts below touch nothing else. */
static void private_mounts(void)
{
	static bool done;

	if (done)
		return;
	assert_int_equal(unshare(CLONE_NEWNS), 0);
	assert_int_equal(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
	done = true;
}

/* Read-only: a clean error naming the directory, no temporary file, and
 * the spool works again once the file system is writable. */
static void test_read_only_dir_errors_and_recovers(void **state)
{
	struct fixture *f = *state;
	struct spool *s = spool_in(f->dir, FORMAT_BIT(FORMAT_SVG) | FORMAT_BIT(FORMAT_FOLDED), 10, 0);
	char err[512];

	private_mounts();
	assert_int_equal(mount("tmpfs", f->dir, "tmpfs", MS_RDONLY, "size=1m"), 0);
	assert_int_equal(spool_write(s, f->profile, T0, NULL, NULL, err, sizeof(err)), -EROFS);
	assert_non_null(strstr(err, f->dir));
	assert_non_null(strstr(err, "Read-only file system"));
	assert_int_equal(mount(NULL, f->dir, NULL, MS_REMOUNT, "size=1m"), 0);
	assert_int_equal(spool_write(s, f->profile, T0 + 1, NULL, NULL, err, sizeof(err)), 0);
	assert_int_equal(count(f->dir, "ebprof-", ".svg"), 1);
	assert_int_equal(count(f->dir, ".", ".tmp"), 0);
	spool_free(s);
	assert_int_equal(umount(f->dir), 0);
}

/* A full disk: ENOSPC reported, the partial file is removed. */
static void test_full_disk_leaves_no_temp_file(void **state)
{
	struct fixture *f = *state;
	struct spool *s = spool_in(f->dir, FORMAT_BIT(FORMAT_SVG) | FORMAT_BIT(FORMAT_FOLDED), 10, 0);
	struct profile *big = profile_new();
	char err[512], name[64];

	for (int i = 0; i < 3000; i++) {
		snprintf(name, sizeof(name), "function_with_a_long_name_%d", i);
		add(big, name, (uint64_t)i + 1);
	}
	private_mounts();
	assert_int_equal(mount("tmpfs", f->dir, "tmpfs", 0, "size=16k"), 0);
	assert_int_equal(spool_write(s, big, T0, NULL, NULL, err, sizeof(err)), -ENOSPC);
	assert_non_null(strstr(err, "No space left on device"));
	assert_int_equal(count(f->dir, ".", ".tmp"), 0);
	assert_int_equal(count(f->dir, "ebprof-", ".svg"), 0);
	/* A small profile fits again. */
	assert_int_equal(spool_write(s, f->profile, T0 + 1, NULL, NULL, err, sizeof(err)), 0);
	assert_true(exists(f, "latest.svg"));
	spool_free(s);
	profile_free(big);
	assert_int_equal(umount(f->dir), 0);
}

/* The directory removed and made again: the spool follows it. */
static void test_recreated_dir_is_picked_up(void **state)
{
	struct fixture *f = *state;
	struct spool *s;
	char err[512], sub[256], cmd[300];

	path_of(f, "spool", sub, sizeof(sub));
	s = spool_in(sub, FORMAT_BIT(FORMAT_FOLDED), 10, 0);
	assert_int_equal(spool_write(s, f->profile, T0, NULL, NULL, err, sizeof(err)), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", sub);
	assert_int_equal(system(cmd), 0);
	/* The old descriptor points at a deleted directory: that write fails... */
	assert_true(spool_write(s, f->profile, T0 + 1, NULL, NULL, err, sizeof(err)) < 0);
	/* ...and the next one opens (creates) the directory afresh. */
	assert_int_equal(spool_write(s, f->profile, T0 + 2, NULL, NULL, err, sizeof(err)), 0);
	assert_int_equal(count(sub, "ebprof-", ".folded"), 1);
	spool_free(s);
}

/* speedscope and pprof files beside the others, with their own latest.*
 * and their own retention count. */
static void test_speedscope_and_pprof_files(void **state)
{
	struct fixture *f = *state;
	struct spool_config c = { .dir = f->dir, .formats = FORMAT_BIT(FORMAT_SPEEDSCOPE) | FORMAT_BIT(FORMAT_PPROF),
				  .keep_files = 2, .frequency = 99 };
	struct spool *s = spool_new(&c);
	char err[512], text[4096], path[256], cmd[512];
	FILE *decoded;
	int cpu = 0;

	assert_non_null(s);
	for (int i = 0; i < 3; i++)
		assert_int_equal(spool_write(s, f->profile, T0 + i, "t", NULL, err, sizeof(err)),
				 0);
	assert_string_equal(spool_last_name(s, FORMAT_SPEEDSCOPE),
			    "ebprof-20231114T221322Z.speedscope.json");
	assert_string_equal(spool_last_name(s, FORMAT_PPROF), "ebprof-20231114T221322Z.pb.gz");
	assert_int_equal(count(f->dir, "ebprof-", ".speedscope.json"), 2);
	assert_int_equal(count(f->dir, "ebprof-", ".pb.gz"), 2);
	assert_true(exists(f, "latest.pb.gz"));
	read_file(f, "latest.speedscope.json", text, sizeof(text));
	assert_non_null(strstr(text, "\"type\":\"sampled\""));
	assert_non_null(strstr(text, "\"weights\":["));
	/* gzip'ed, and the spool's frequency gives pprof its CPU time */
	path_of(f, "latest.pb.gz", path, sizeof(path));
	snprintf(cmd, sizeof(cmd),
		 "gzip -dc '%s' | protoc --decode perftools.profiles.Profile -I tests/pprof "
		 "profile.proto", path);
	decoded = popen(cmd, "r");
	assert_non_null(decoded);
	while (fgets(text, sizeof(text), decoded))
		cpu += strstr(text, "period: 10101010") != NULL;
	assert_int_equal(pclose(decoded), 0);
	assert_int_equal(cpu, 1);
	spool_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_writes_both_formats_and_latest, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_one_format_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_speedscope_and_pprof_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_in_one_second_get_a_suffix, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_retention_by_count, setup, teardown),
		cmocka_unit_test_setup_teardown(test_retention_orders_suffixes_by_age, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_retention_by_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_retention_spares_foreign_files, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_foreign_file_at_our_name_is_not_clobbered,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_symlink_at_latest_is_not_followed, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_foreign_latest_is_not_replaced, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_symlink_at_temp_name_is_not_followed, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_stale_temp_files_are_removed, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_spool_dir_is_created_but_never_followed,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_dir_that_is_a_file_errors_cleanly, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_read_only_dir_errors_and_recovers, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_full_disk_leaves_no_temp_file, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_recreated_dir_is_picked_up, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
