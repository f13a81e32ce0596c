/*
 * target tests: the gate every open of a profiled process's file goes
 * through. Each test builds what a hostile process could leave at a path
 * (a FIFO, a symlink out of its root, a /proc magic link, another file
 * under the mapped name, a huge file) in a scratch directory, with a fake
 * /proc holding map_files/ links and a root directory, and checks the
 * gate opens only the file it should, never blocks, and counts each
 * refusal by its cause.
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
#include <sched.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "symbolizer/procmaps.h"
#include "symbolizer/target.h"

#define PID 42

struct scratch {
	char dir[64];
	struct target *gate;
};

static void path_of(const struct scratch *s, char *out, size_t size, const char *name)
{
	snprintf(out, size, "%s/%s", s->dir, name);
}

static void write_file(const struct scratch *s, const char *name, const char *text)
{
	char path[256];
	FILE *f;

	path_of(s, path, sizeof(path), name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void make_dir(const struct scratch *s, const char *name)
{
	char path[256];

	path_of(s, path, sizeof(path), name);
	assert_int_equal(mkdir(path, 0755), 0);
}

static void make_link(const struct scratch *s, const char *target, const char *name)
{
	char path[256];

	path_of(s, path, sizeof(path), name);
	assert_int_equal(symlink(target, path), 0);
}

static int setup(void **state)
{
	struct scratch *s = calloc(1, sizeof(*s));
	char proc[128];

	assert_non_null(s);
	strcpy(s->dir, "/tmp/test_target.XXXXXX");
	assert_non_null(mkdtemp(s->dir));
	path_of(s, proc, sizeof(proc), "proc");
	s->gate = target_new(&(struct target_config){ .proc_root = proc, .max_file_size = 4096 });
	assert_non_null(s->gate);
	make_dir(s, "proc");
	make_dir(s, "proc/42");
	make_dir(s, "proc/42/map_files");
	make_dir(s, "proc/42/root");
	make_dir(s, "proc/42/root/lib");
	make_dir(s, "host");
	*state = s;
	return 0;
}

static int teardown(void **state)
{
	struct scratch *s = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", s->dir);
	assert_int_equal(system(cmd), 0);
	target_free(s->gate);
	free(s);
	return 0;
}

static uint64_t refused(const struct scratch *s, enum target_cause cause)
{
	uint64_t counts[TARGET_CAUSES];

	target_stats(s->gate, counts);
	return counts[cause];
}

static uint64_t refused_total(const struct scratch *s)
{
	uint64_t counts[TARGET_CAUSES], sum = 0;

	target_stats(s->gate, counts);
	for (int i = 0; i < TARGET_CAUSES; i++)
		sum += counts[i];
	return sum;
}

static int open_path(struct scratch *s, const char *root, const char *path, unsigned int flags,
		     struct target_file *f)
{
	struct target_path p = { .root = root, .path = path, .flags = flags };

	return target_open(s->gate, &p, f);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void test_regular_file_opens_read_only(void **state)
{
	struct scratch *s = *state;
	struct target_file f;
	char path[256], buf[16];
	struct stat st;

	write_file(s, "host/lib.so", "ELF bytes");
	path_of(s, path, sizeof(path), "host/lib.so");
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(open_path(s, NULL, path, 0, &f), 0);
	assert_true(f.fd >= 0);
	assert_int_equal(f.st.st_ino, st.st_ino);
	assert_int_equal(read(f.fd, buf, sizeof(buf)), 9);
	assert_int_equal(write(f.fd, "x", 1), -1); /* read-only */
	assert_int_equal(fcntl(f.fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	target_file_close(&f);
	assert_int_equal(f.fd, -1);
	target_file_close(&f); /* twice is fine */
	assert_int_equal(refused_total(s), 0);
}

/* Opening a FIFO without a writer blocks forever; the gate never opens one. */
static void test_fifo_and_device_are_refused_without_blocking(void **state)
{
	struct scratch *s = *state;
	struct target_file f;
	char path[256];
	double start = now();

	path_of(s, path, sizeof(path), "host/fifo");
	assert_int_equal(mkfifo(path, 0644), 0);
	assert_int_equal(open_path(s, NULL, path, 0, &f), -EINVAL);
	assert_int_equal(f.fd, -1);
	assert_int_equal(open_path(s, NULL, "/dev/zero", 0, &f), -EINVAL);
	path_of(s, path, sizeof(path), "host");
	assert_int_equal(open_path(s, NULL, path, 0, &f), -EINVAL); /* a directory */
	assert_true(now() - start < 1.0);
	assert_int_equal(refused(s, TARGET_NOT_REGULAR), 3);
	assert_int_equal(target_cause_of(-EINVAL), TARGET_NOT_REGULAR);
	assert_string_equal(target_cause_name(TARGET_NOT_REGULAR), "not_regular");
}

static void test_final_symlink_refused_only_when_asked(void **state)
{
	struct scratch *s = *state;
	struct target_file f;
	char target[256], link[256];

	write_file(s, "host/real", "data");
	path_of(s, target, sizeof(target), "host/real");
	make_link(s, target, "host/link");
	path_of(s, link, sizeof(link), "host/link");
	assert_int_equal(open_path(s, NULL, link, 0, &f), 0);
	target_file_close(&f);
	assert_int_equal(open_path(s, NULL, link, TARGET_NOFOLLOW, &f), -EINVAL);
	assert_int_equal(refused(s, TARGET_NOT_REGULAR), 1);
}

/* Makes the directories of name (a path under the scratch directory) inside the fake root. */
static void root_dirs(const struct scratch *s, const char *abs_dir)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/proc/42/root%s'", s->dir, abs_dir);
	assert_int_equal(system(cmd), 0);
}

/*
 * A container's absolute symlink is resolved inside its root: it names
 * the container's file of that path, never the host's.
 */
static void test_absolute_symlink_stays_inside_the_root(void **state)
{
	struct scratch *s = *state;
	struct target_file f;
	char root[256], secret[256], inside[300], buf[32];
	ssize_t n;

	write_file(s, "host/secret.so", "host only");
	path_of(s, secret, sizeof(secret), "host/secret.so");
	make_link(s, secret, "proc/42/root/lib/app.so");
	path_of(s, root, sizeof(root), "proc/42/root");
	/* The target does not exist inside the root: no file, not the host's. */
	assert_int_equal(open_path(s, root, "/lib/app.so", 0, &f), -ENOENT);
	assert_int_equal(refused(s, TARGET_GONE), 1);
	assert_int_equal(open_path(s, root, "/lib/app.so", TARGET_QUIET, &f), -ENOENT);
	assert_int_equal(refused(s, TARGET_GONE), 1); /* quiet: an absent candidate */
	/* ".." stops at the root as well. */
	snprintf(inside, sizeof(inside), "/../../..%s", secret);
	assert_int_equal(open_path(s, root, inside, TARGET_QUIET, &f), -ENOENT);
	/* Where the container has a file of that path, that is the one opened. */
	snprintf(inside, sizeof(inside), "%s/host", s->dir);
	root_dirs(s, inside);
	snprintf(inside, sizeof(inside), "proc/42/root%s/host/secret.so", s->dir);
	write_file(s, inside, "container's");
	assert_int_equal(open_path(s, root, "/lib/app.so", 0, &f), 0);
	n = read(f.fd, buf, sizeof(buf) - 1);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_string_equal(buf, "container's");
	target_file_close(&f);
}

/*
 * A /proc magic link (/proc/self/root/...) would jump out of any root.
 * The container's /proc is a bind mount of ours, in a mount namespace of
 * the test's own that ends with it.
 */
static void test_magic_links_are_refused(void **state)
{
	struct scratch *s = *state;
	struct target_file f;
	char root[256], proc[256], target[300];
	pid_t pid;
	int status;

	write_file(s, "host/secret.so", "host only");
	snprintf(target, sizeof(target), "/proc/self/root%s/host/secret.so", s->dir);
	make_link(s, target, "proc/42/root/lib/magic.so");
	make_dir(s, "proc/42/root/proc");
	path_of(s, root, sizeof(root), "proc/42/root");
	path_of(s, proc, sizeof(proc), "proc/42/root/proc");
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		int err;

		if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    mount("/proc", proc, NULL, MS_BIND, NULL))
			_exit(2);
		err = open_path(s, root, "/lib/magic.so", 0, &f);
		_exit(err == -ELOOP && refused(s, TARGET_OUTSIDE_ROOT) == 1 ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* In our own namespace too: a path given to us never goes through /proc links. */
	assert_int_equal(open_path(s, NULL, target, 0, &f), -ELOOP);
	assert_int_equal(refused(s, TARGET_OUTSIDE_ROOT), 1);
}

static void test_size_bound(void **state)
{
	struct scratch *s = *state;
	struct target_file f;
	char path[256];
	int fd;

	path_of(s, path, sizeof(path), "host/big");
	fd = open(path, O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 4097), 0); /* one byte over this gate's bound */
	close(fd);
	assert_int_equal(open_path(s, NULL, path, 0, &f), -EFBIG);
	assert_int_equal(refused(s, TARGET_TOO_LARGE), 1);
	/* A caller that reads a bounded part of the file asks for any size. */
	assert_int_equal(open_path(s, NULL, path, TARGET_ANY_SIZE, &f), 0);
	target_file_close(&f);
	/* The default bound is 4 GiB. */
	assert_int_equal(target_open(NULL, &(struct target_path){ .path = path }, &f), 0);
	target_file_close(&f);
}

static void test_identity_must_match(void **state)
{
	struct scratch *s = *state;
	struct target_id id;
	struct target_file f;
	struct target_path p;
	char path[256];
	struct stat st;

	write_file(s, "host/lib.so", "one file");
	write_file(s, "host/other.so", "another");
	path_of(s, path, sizeof(path), "host/lib.so");
	assert_int_equal(stat(path, &st), 0);
	id = (struct target_id){ major(st.st_dev), minor(st.st_dev), st.st_ino };
	p = (struct target_path){ .path = path, .id = &id };
	assert_int_equal(target_open(s->gate, &p, &f), 0);
	target_file_close(&f);
	path_of(s, path, sizeof(path), "host/other.so");
	assert_int_equal(target_open(s->gate, &p, &f), -ESTALE);
	id.inode = st.st_ino;
	id.dev_minor++; /* the right inode number on another device */
	path_of(s, path, sizeof(path), "host/lib.so");
	assert_int_equal(target_open(s->gate, &p, &f), -ESTALE);
	assert_int_equal(refused(s, TARGET_MISMATCH), 2);
}

static struct procmaps_mapping mapping_of(const char *path, const struct stat *st)
{
	return (struct procmaps_mapping){
		.start = 0x1000,
		.end = 0x2000,
		.dev_major = major(st->st_dev),
		.dev_minor = minor(st->st_dev),
		.inode = st->st_ino,
		.exec = true,
		.path = path,
		.path_len = strlen(path),
	};
}

/* A file with text, linked as process 42's map_files/ entry; its mapping is named elsewhere. */
static struct procmaps_mapping mapped_file(struct scratch *s, const char *text, struct stat *st)
{
	char path[256];

	write_file(s, "host/lib.so", text);
	path_of(s, path, sizeof(path), "host/lib.so");
	assert_int_equal(stat(path, st), 0);
	make_link(s, path, "proc/42/map_files/1000-2000");
	return mapping_of("/usr/lib/not-here.so", st);
}

/* map_files/ first: the kernel's link to the mapped file, in any namespace. */
static void test_mapping_through_map_files(void **state)
{
	struct scratch *s = *state;
	struct procmaps_mapping m;
	struct target_file f;
	struct stat st;

	m = mapped_file(s, "mapped", &st);
	assert_int_equal(target_open_mapping(s->gate, PID, &m, &f), 0);
	assert_int_equal(f.st.st_ino, st.st_ino);
	target_file_close(&f);
	assert_int_equal(refused_total(s), 0);
}

/*
 * The FIFO after dlclose: map_files/ is gone with the mapping, and the
 * path (in the root, and in ours) is now a FIFO. Refused at once, and
 * counted once, by its most telling cause.
 */
static void test_mapping_path_swapped_for_a_fifo(void **state)
{
	struct scratch *s = *state;
	struct procmaps_mapping m;
	struct target_file f;
	char path[256], inside[512];
	struct stat st;
	double start = now();

	write_file(s, "host/lib.so", "mapped once");
	path_of(s, path, sizeof(path), "host/lib.so");
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkfifo(path, 0644), 0);
	/* The same path inside the process's root: a FIFO as well. */
	snprintf(inside, sizeof(inside), "%s/host", s->dir);
	root_dirs(s, inside);
	snprintf(inside, sizeof(inside), "%s/proc/42/root%s", s->dir, path);
	assert_int_equal(mkfifo(inside, 0644), 0);
	m = mapping_of(path, &st);
	assert_int_equal(target_open_mapping(s->gate, PID, &m, &f), -EINVAL);
	assert_true(now() - start < 1.0);
	assert_int_equal(refused(s, TARGET_NOT_REGULAR), 1);
	assert_int_equal(refused_total(s), 1);
}

/*
 * Checked without opening: the O_PATH descriptor names the file (it cannot
 * be read), the checks are the same (a FIFO is refused there), and the
 * reopen gives a readable descriptor on the very inode.
 */
static void test_mapping_checked_then_reopened(void **state)
{
	struct scratch *s = *state;
	struct procmaps_mapping m;
	struct target_file f;
	char path[256], buf[16];
	struct stat st;

	m = mapped_file(s, "checked", &st);
	assert_int_equal(target_check_mapping(s->gate, PID, &m, &f), 0);
	assert_int_equal(f.st.st_ino, st.st_ino);
	assert_int_equal(read(f.fd, buf, sizeof(buf)), -1);
	assert_int_equal(errno, EBADF);
	assert_int_equal(target_file_reopen(s->gate, &f), 0);
	assert_int_equal(read(f.fd, buf, sizeof(buf)), 7);
	assert_memory_equal(buf, "checked", 7);
	target_file_close(&f);
	assert_int_equal(refused_total(s), 0);
	/* The path swapped for a FIFO (map_files/ gone): refused by the check itself. */
	path_of(s, path, sizeof(path), "host/lib.so");
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkfifo(path, 0644), 0);
	m = mapping_of(path, &st);
	assert_int_equal(target_check_mapping(s->gate, 43, &m, &f), -EINVAL);
	assert_int_equal(f.fd, -1);
	assert_int_equal(refused(s, TARGET_NOT_REGULAR), 1);
}

/* Inside the root, by path, when map_files/ is gone: only the mapped inode. */
static void test_mapping_in_root_needs_the_mapped_inode(void **state)
{
	struct scratch *s = *state;
	struct procmaps_mapping m;
	struct target_file f;
	char path[256];
	struct stat st;

	write_file(s, "proc/42/root/lib/app.so", "container's");
	path_of(s, path, sizeof(path), "proc/42/root/lib/app.so");
	assert_int_equal(stat(path, &st), 0);
	m = mapping_of("/lib/app.so", &st);
	assert_int_equal(target_open_mapping(s->gate, PID, &m, &f), 0);
	target_file_close(&f);
	/* Replaced by another file since: refused, and so is our own /lib/app.so. */
	assert_int_equal(rename(path, "/tmp/test_target.kept"), 0); /* its inode stays taken */
	write_file(s, "proc/42/root/lib/app.so", "another");
	assert_int_equal(target_open_mapping(s->gate, PID, &m, &f), -ESTALE);
	assert_int_equal(refused(s, TARGET_MISMATCH), 1);
	unlink("/tmp/test_target.kept");
	/* The process is gone altogether: nothing of it is left to open. */
	m.path = "/nonexistent/app.so";
	m.path_len = strlen(m.path);
	assert_int_equal(target_open_mapping(s->gate, 43, &m, &f), -ENOENT);
	assert_int_equal(refused(s, TARGET_GONE), 1);
	/* A deleted file is reached through map_files/ or not at all. */
	m.deleted = true;
	assert_int_equal(target_open_mapping(s->gate, PID, &m, &f), -ENOENT);
}

/* A file in our own namespace is the last resort, with the same checks. */
static void test_mapping_in_our_namespace(void **state)
{
	struct scratch *s = *state;
	struct procmaps_mapping m;
	struct target_file f;
	char path[256];
	struct stat st;

	write_file(s, "host/lib.so", "ours");
	path_of(s, path, sizeof(path), "host/lib.so");
	assert_int_equal(stat(path, &st), 0);
	m = mapping_of(path, &st);
	assert_int_equal(target_open_mapping(s->gate, 43, &m, &f), 0);
	target_file_close(&f);
	m.inode++;
	assert_int_equal(target_open_mapping(s->gate, 43, &m, &f), -ESTALE);
}

/* Out of descriptors: said as such, so the user can raise ulimit -n. */
static void test_out_of_descriptors(void **state)
{
	struct scratch *s = *state;
	char path[256];
	pid_t pid;
	int status;

	write_file(s, "host/lib.so", "data");
	path_of(s, path, sizeof(path), "host/lib.so");
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		struct rlimit rl = { 0, 0 };
		struct target_file f;
		int err;

		/* Use up every descriptor the limit allows. */
		getrlimit(RLIMIT_NOFILE, &rl);
		rl.rlim_cur = 16;
		setrlimit(RLIMIT_NOFILE, &rl);
		while (dup(0) >= 0)
			;
		err = open_path(s, NULL, path, 0, &f);
		_exit(err == -EMFILE && refused(s, TARGET_NO_FDS) == 1 ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* Another user's 0600 file: the O_PATH name is free, the read is not. */
static void test_permission(void **state)
{
	struct scratch *s = *state;
	char path[256];
	pid_t pid;
	int status;

	write_file(s, "host/private", "root's");
	path_of(s, path, sizeof(path), "host/private");
	assert_int_equal(chmod(path, 0600), 0);
	assert_int_equal(chmod(s->dir, 0755), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		struct target_file f;
		int err;

		if (setgid(65534) || setuid(65534))
			_exit(2);
		err = open_path(s, NULL, path, 0, &f);
		_exit(err == -EACCES && refused(s, TARGET_PERMISSION) == 1 ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_progress_moves_with_every_open(void **state)
{
	struct scratch *s = *state;
	struct target_file f;
	uint64_t before = target_progress(s->gate);

	assert_int_equal(open_path(s, NULL, "/nonexistent", TARGET_QUIET, &f), -ENOENT);
	assert_true(target_progress(s->gate) > before);
	before = target_progress(s->gate);
	target_tick(s->gate);
	assert_int_equal(target_progress(s->gate), before + 1);
	assert_int_equal(refused_total(s), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_regular_file_opens_read_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fifo_and_device_are_refused_without_blocking,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_final_symlink_refused_only_when_asked, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_absolute_symlink_stays_inside_the_root, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_magic_links_are_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_size_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_identity_must_match, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mapping_through_map_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mapping_path_swapped_for_a_fifo, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_mapping_in_root_needs_the_mapped_inode, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_mapping_in_our_namespace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mapping_checked_then_reopened, setup, teardown),
		cmocka_unit_test_setup_teardown(test_out_of_descriptors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_permission, setup, teardown),
		cmocka_unit_test_setup_teardown(test_progress_moves_with_every_open, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
