/*
 * pyproc tests: a real Debian /usr/bin/python3.11, started here, is
 * recognized with the 3.11 row, its evaluation function where its symbol
 * table says (and its unnamed .cold part found), and its thread state in the TSD slot the check found (the
 * row and the glibc slot checked against the running process); processes
 * that are not Python are not, and the TSD slot arithmetic.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "symbolizer/procmaps.h"
#include "symbolizer/pyproc.h"
#include "symbolizer/target.h"

#define PYTHON "/usr/bin/python3.11"

/* Starts argv with its stdout on a pipe, and waits for its first line. */
static pid_t start(char *const argv[])
{
	int fds[2];
	char line[64];
	FILE *f;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	return pid;
}

static void stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* The linked address of a dynamic symbol of PYTHON, by nm. */
static uint64_t nm_address(const char *name)
{
	char cmd[256], out[64] = "";
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm -D %s | awk '$3 == \"%s\" { print $1 }'", PYTHON, name);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_non_null(fgets(out, sizeof(out), p));
	pclose(p);
	return strtoull(out, NULL, 16);
}

static void test_debian_python311(void **state)
{
	char *argv[] = { PYTHON, "-c",
			 "import time, threading; print('ready', flush=True); time.sleep(60)",
			 NULL };
	struct ebprof_py_proc py;
	uint64_t tstate = 0, slot = 0, fsbase;
	char why[512];
	pid_t pid;
	int err;

	(void)state;
	assert_int_equal(access(PYTHON, X_OK), 0);
	pid = start(argv);
	err = pyproc_detect(NULL, NULL, "/proc", (uint32_t)pid, 42, &py, why, sizeof(why));
	if (err)
		fail_msg("pyproc_detect: %d: %s", err, why);
	assert_int_equal(py.start_time, 42);
	assert_int_equal(py.version, 0);
	assert_non_null(pyproc_layout(py.version));
	assert_int_equal(py.eval_start, nm_address("_PyEval_EvalFrameDefault"));
	assert_true(py.eval_end > py.eval_start + 4096);
	/* Debian's binary is stripped: no symbol names the .cold part, found by
	 * the function's jumps into one FDE (13.9 KB in 3.11.2), apart from it. */
	assert_true(py.cold_start != 0);
	assert_true(py.cold_end - py.cold_start > 4096);
	assert_true(py.cold_end <= py.eval_start || py.cold_start >= py.eval_end);
	assert_int_equal(py.tsd_offset, (uint64_t)pyproc_tsd_offset(0));
	assert_int_equal(py.code_bytecode, 184);
	assert_int_equal(py.code_window + py.code_qualname, 128);
	assert_int_equal(py.code_window + py.code_linetable, 136);
	/* The main thread's state is where the walk will read it: its pthread_t
	 * is its fsbase (PyThreadState.thread_id), read back through the slot. */
	const struct pyproc_layout *l = pyproc_layout(0);
	uint64_t runtime = nm_address("_PyRuntime"), interp;

	assert_int_equal(pyproc_read((uint32_t)pid, runtime + l->runtime_interp_head, &interp, 8), 0);
	assert_int_equal(pyproc_read((uint32_t)pid, interp + l->interp_threads_head, &tstate, 8), 0);
	assert_int_equal(pyproc_read((uint32_t)pid, tstate + l->tstate_thread_id, &fsbase, 8), 0);
	assert_int_equal(pyproc_read((uint32_t)pid, fsbase + py.tsd_offset, &slot, 8), 0);
	assert_int_equal(slot, tstate);
	stop(pid);
}

static void test_not_python(void **state)
{
	char *argv[] = { "/bin/sh", "-c", "echo ready; exec sleep 60", NULL };
	struct ebprof_py_proc py;
	char why[512];
	pid_t pid;

	(void)state;
	pid = start(argv);
	usleep(100 * 1000); /* the exec of sleep */
	assert_int_equal(pyproc_detect(NULL, NULL, "/proc", (uint32_t)pid, 1, &py, why, sizeof(why)), -ENOENT);
	assert_string_equal(why, "");
	stop(pid);
	assert_int_equal(pyproc_detect(NULL, NULL, "/proc", (uint32_t)pid, 1, &py, why, sizeof(why)), -ESRCH);
}

/*
 * Maps lent by the caller are the ones examined, not read again: under a
 * root that has the process's exe link but no maps file, detection with
 * the maps read from /proc finds the interpreter, and without them finds
 * the process gone (its maps unreadable).
 */
static void test_maps_lent(void **state)
{
	char *argv[] = { PYTHON, "-c", "import time; print('ready', flush=True); time.sleep(60)",
			 NULL };
	char root[] = "/tmp/ebprof-pyproc-root.XXXXXX", path[PATH_MAX], maps_path[64];
	struct ebprof_py_proc py;
	struct procmaps *maps;
	char why[512];
	pid_t pid;

	(void)state;
	assert_non_null(mkdtemp(root));
	pid = start(argv);
	snprintf(path, sizeof(path), "%s/%d", root, (int)pid);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/%d/exe", root, (int)pid);
	assert_int_equal(symlink(PYTHON, path), 0);
	snprintf(maps_path, sizeof(maps_path), "/proc/%d/maps", (int)pid);
	assert_int_equal(procmaps_load(maps_path, &maps), 0);
	assert_int_equal(pyproc_detect_maps(NULL, NULL, root, (uint32_t)pid, 5, maps, &py, why,
					    sizeof(why)), 0);
	assert_int_equal(py.start_time, 5);
	assert_int_equal(py.eval_start, nm_address("_PyEval_EvalFrameDefault"));
	assert_int_equal(pyproc_detect_maps(NULL, NULL, root, (uint32_t)pid, 5, NULL, &py, why,
					    sizeof(why)), -ESRCH);
	procmaps_free(maps);
	stop(pid);
	unlink(path);
	snprintf(path, sizeof(path), "%s/%d", root, (int)pid);
	rmdir(path);
	rmdir(root);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * A copy of PYTHON, run: detected (its symbol table read), detected again
 * (the verdict reused, nothing read), and once its file changes (a new
 * mtime: it may have been rewritten in place) read again.
 */
static void test_verdict_cached_per_file(void **state)
{
	char dir[] = "/tmp/test_pyproc.XXXXXX", copy[64], cmd[192];
	char *argv[] = { copy, "-c", "import time; print('ready', flush=True); time.sleep(60)",
			 NULL };
	struct pyproc_cache *cache = pyproc_cache_new(4);
	struct pyproc_cache_stats cs;
	struct ebprof_py_proc py, again;
	char why[512];
	pid_t pid, other;

	(void)state;
	assert_non_null(cache);
	assert_non_null(mkdtemp(dir));
	snprintf(copy, sizeof(copy), "%s/python3.11", dir);
	snprintf(cmd, sizeof(cmd), "cp %s %s", PYTHON, copy);
	assert_int_equal(system(cmd), 0);
	pid = start(argv);
	assert_int_equal(pyproc_detect(cache, NULL, "/proc", (uint32_t)pid, 1, &py, why,
				       sizeof(why)), 0);
	pyproc_cache_stats(cache, &cs);
	assert_int_equal(cs.read, 1);
	assert_int_equal(cs.misses, 1);
	assert_int_equal(cs.hits, 0);
	assert_int_equal(cs.entries, 1);
	assert_true(cs.bytes > 0 && cs.bytes <= PYPROC_CACHE_MAX_BYTES);
	/* Asked again (a Python still starting is), and another process of the file. */
	other = start(argv);
	assert_int_equal(pyproc_detect(cache, NULL, "/proc", (uint32_t)pid, 1, &again, why,
				       sizeof(why)), 0);
	assert_memory_equal(&py, &again, sizeof(py));
	assert_int_equal(pyproc_detect(cache, NULL, "/proc", (uint32_t)other, 1, &again, why,
				       sizeof(why)), 0);
	assert_int_equal(again.eval_end - again.eval_start, py.eval_end - py.eval_start);
	pyproc_cache_stats(cache, &cs);
	assert_int_equal(cs.read, 1);
	assert_int_equal(cs.hits, 2);
	/* The file changes: its old verdict is not trusted. */
	assert_int_equal(utimes(copy, (struct timeval[2]){ { 1000, 0 }, { 1000, 0 } }), 0);
	assert_int_equal(pyproc_detect(cache, NULL, "/proc", (uint32_t)pid, 1, &again, why,
				       sizeof(why)), 0);
	assert_memory_equal(&py, &again, sizeof(py));
	pyproc_cache_stats(cache, &cs);
	assert_int_equal(cs.read, 2);
	assert_int_equal(cs.entries, 2);
	stop(pid);
	stop(other);
	pyproc_cache_free(cache);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static sigjmp_buf hung;

static void on_alarm(int sig)
{
	(void)sig;
	siglongjmp(hung, 1);
}

/* Frees a test's gate and cache, and removes its directory dir. */
static void teardown(struct target *gate, struct pyproc_cache *cache, const char *dir)
{
	char cmd[256];

	target_free(gate);
	pyproc_cache_free(cache);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/*
 * A process (a /proc of the test's own) whose mapped "libpython" is, by
 * the time it is looked at, a FIFO nobody writes: an open() of it would
 * wait forever. Detection refuses it at once through the gate, counts it
 * (not_regular), and says the process is no Python.
 */
static void test_hostile_libpython_refused(void **state)
{
	char dir[] = "/tmp/test_pyproc.XXXXXX", path[256], proc[128], cmd[512];
	struct ebprof_py_proc py;
	uint64_t refused[TARGET_CAUSES];
	struct target *gate;
	struct stat st;
	char why[512];
	double t0;
	FILE *f;
	int err;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(proc, sizeof(proc), "%s/proc", dir);
	snprintf(path, sizeof(path), "%s/root/opt/py/lib", dir);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/4242' '%s'", proc, path);
	assert_int_equal(system(cmd), 0);
	snprintf(path, sizeof(path), "%s/root/opt/py/lib/libpython3.11.so.1.0", dir);
	assert_int_equal(mkfifo(path, 0644), 0);
	assert_int_equal(stat(path, &st), 0);
	snprintf(path, sizeof(path), "%s/4242/maps", proc);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "7f0000000000-7f0000100000 r-xp 00000000 %02x:%02x %lu "
		"/opt/py/lib/libpython3.11.so.1.0\n", major(st.st_dev), minor(st.st_dev),
		(unsigned long)st.st_ino);
	fclose(f);
	snprintf(path, sizeof(path), "%s/4242/exe", proc);
	assert_int_equal(symlink("/opt/py/bin/python3", path), 0);
	snprintf(path, sizeof(path), "%s/4242/root", proc);
	snprintf(cmd, sizeof(cmd), "%s/root", dir);
	assert_int_equal(symlink(cmd, path), 0);
	gate = target_new(&(struct target_config){ .proc_root = proc });
	assert_non_null(gate);

	signal(SIGALRM, on_alarm);
	if (sigsetjmp(hung, 1))
		fail_msg("pyproc_detect blocked on the FIFO");
	alarm(5);
	t0 = now();
	err = pyproc_detect(NULL, gate, proc, 4242, 1, &py, why, sizeof(why));
	alarm(0);
	assert_int_equal(err, -ENOENT);
	assert_true(now() - t0 < 1.0);
	target_stats(gate, refused);
	assert_int_equal(refused[TARGET_NOT_REGULAR], 1);
	teardown(gate, NULL, dir);
}

/* Writes a fake /proc's process 4242: one mapping of the file st (named name in maps), run as it. */
static void fake_process(const char *dir, const struct stat *st, const char *name)
{
	char path[256], root[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/proc/4242/maps", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "55d000000000-55d000010000 r-xp 00000000 %02x:%02x %lu %s\n", major(st->st_dev),
		minor(st->st_dev), (unsigned long)st->st_ino, name);
	fclose(f);
	snprintf(path, sizeof(path), "%s/proc/4242/exe", dir);
	unlink(path);
	assert_int_equal(symlink("/opt/bin/tool", path), 0);
	snprintf(path, sizeof(path), "%s/proc/4242/root", dir);
	snprintf(root, sizeof(root), "%s/root", dir);
	unlink(path);
	assert_int_equal(symlink(root, path), 0);
}

/* Makes dir (a mkdtemp template) a fake /proc with process 4242, and its root with /opt/bin. */
static void fake_root(char *dir, char *proc, size_t proclen)
{
	char cmd[512];

	assert_non_null(mkdtemp(dir));
	snprintf(proc, proclen, "%s/proc", dir);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/4242' '%s/root/opt/bin'", proc, dir);
	assert_int_equal(system(cmd), 0);
}

/*
 * Makes dir a fake /proc whose process 4242 runs a copy of /bin/true (at
 * tool, stat in *st) as /opt/bin/tool; returns a gate under it.
 */
static struct target *fake_tool(char *dir, char *proc, size_t proclen, char *tool, size_t toollen,
				struct stat *st)
{
	char cmd[512];
	struct target *gate;

	fake_root(dir, proc, proclen);
	snprintf(tool, toollen, "%s/root/opt/bin/tool", dir);
	snprintf(cmd, sizeof(cmd), "cp /bin/true '%s'", tool);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(stat(tool, st), 0);
	fake_process(dir, st, "/opt/bin/tool");
	gate = target_new(&(struct target_config){ .proc_root = proc });
	assert_non_null(gate);
	return gate;
}

/*
 * A file with no interpreter, once examined, is known by its mapping:
 * the next process that maps it is answered with no open, even when the
 * file could no longer be opened (here: removed). A mapping of a deleted
 * file is not known that way (its inode may be reused), nor is anything
 * without the cache: both try to open the file, and count it gone.
 */
static void test_plain_file_known_by_mapping(void **state)
{
	char dir[] = "/tmp/test_pyproc.XXXXXX", proc[128], tool[192];
	struct pyproc_cache *cache = pyproc_cache_new(0);
	struct pyproc_cache_stats cs;
	uint64_t refused[TARGET_CAUSES];
	struct ebprof_py_proc py;
	struct target *gate;
	struct stat st;
	char why[512];

	(void)state;
	assert_non_null(cache);
	gate = fake_tool(dir, proc, sizeof(proc), tool, sizeof(tool), &st);

	assert_int_equal(pyproc_detect(cache, gate, proc, 4242, 1, &py, why, sizeof(why)), -ENOENT);
	pyproc_cache_stats(cache, &cs);
	assert_int_equal(cs.read, 1);
	assert_int_equal(cs.hits, 0);
	assert_int_equal(unlink(tool), 0);
	/* Mapped as deleted: not answered by its mapping, so an open is tried. */
	fake_process(dir, &st, "/opt/bin/tool (deleted)");
	assert_int_equal(pyproc_detect(cache, gate, proc, 4242, 1, &py, why, sizeof(why)), -ENOENT);
	target_stats(gate, refused);
	assert_int_equal(refused[TARGET_GONE], 1);
	/* Mapped by its path: only the verdict by its mapping can answer, with no refusal. */
	fake_process(dir, &st, "/opt/bin/tool");
	assert_int_equal(pyproc_detect(cache, gate, proc, 4242, 1, &py, why, sizeof(why)), -ENOENT);
	pyproc_cache_stats(cache, &cs);
	assert_int_equal(cs.read, 1);
	assert_int_equal(cs.hits, 1);
	target_stats(gate, refused);
	assert_int_equal(refused[TARGET_GONE], 1);
	/* Without the cache, an open is tried. */
	assert_int_equal(pyproc_detect(NULL, gate, proc, 4242, 1, &py, why, sizeof(why)), -ENOENT);
	target_stats(gate, refused);
	assert_int_equal(refused[TARGET_GONE], 2);

	teardown(gate, cache, dir);
}

/*
 * CPython run through ld.so: /proc/PID/exe names ld.so, and the
 * interpreter is neither the executable nor a libpython by name. It is
 * found by what its file exports, like any other mapped file's. With the
 * cache, each file is read once: a second such process is answered
 * without reading any file again.
 */
static void test_python_through_ldso(void **state)
{
	char *argv[] = { "/lib64/ld-linux-x86-64.so.2", PYTHON, "-c",
			 "import time; print('ready', flush=True); time.sleep(60)", NULL };
	struct pyproc_cache *cache = pyproc_cache_new(0);
	struct pyproc_cache_stats cs;
	struct ebprof_py_proc py;
	char why[512], exe[PATH_MAX] = "", path[64];
	uint64_t read_once;
	pid_t pid, other;
	int err;

	(void)state;
	assert_non_null(cache);
	pid = start(argv);
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	assert_true(readlink(path, exe, sizeof(exe) - 1) > 0);
	assert_non_null(strstr(exe, "ld-linux"));
	err = pyproc_detect(cache, NULL, "/proc", (uint32_t)pid, 7, &py, why, sizeof(why));
	if (err)
		fail_msg("pyproc_detect: %d: %s", err, why);
	assert_int_equal(py.eval_start, nm_address("_PyEval_EvalFrameDefault"));
	pyproc_cache_stats(cache, &cs);
	read_once = cs.read;
	assert_true(read_once >= 1);
	other = start(argv);
	assert_int_equal(pyproc_detect(cache, NULL, "/proc", (uint32_t)other, 7, &py, why,
				       sizeof(why)), 0);
	pyproc_cache_stats(cache, &cs);
	assert_int_equal(cs.read, read_once);
	stop(pid);
	stop(other);
	pyproc_cache_free(cache);
}

/*
 * Every library of a process that is no Python is examined, and each
 * once: a second process of the same files is answered by their
 * mappings alone, one hit per distinct file and nothing read.
 */
static void test_libraries_known_by_mapping(void **state)
{
	char *argv[] = { "/bin/sh", "-c", "echo ready; exec sleep 60", NULL };
	struct pyproc_cache *cache = pyproc_cache_new(0);
	struct pyproc_cache_stats first, cs;
	struct ebprof_py_proc py;
	char why[512];
	pid_t pid, other;

	(void)state;
	assert_non_null(cache);
	pid = start(argv);
	usleep(100 * 1000); /* the exec of sleep */
	assert_int_equal(pyproc_detect(cache, NULL, "/proc", (uint32_t)pid, 1, &py, why,
				       sizeof(why)), -ENOENT);
	pyproc_cache_stats(cache, &first);
	/* sleep, libc and ld.so at least */
	assert_true(first.read >= 3);
	assert_int_equal(first.hits, 0);
	other = start(argv);
	usleep(100 * 1000);
	assert_int_equal(pyproc_detect(cache, NULL, "/proc", (uint32_t)other, 1, &py, why,
				       sizeof(why)), -ENOENT);
	pyproc_cache_stats(cache, &cs);
	assert_int_equal(cs.read, first.read);
	assert_int_equal(cs.hits, first.read);
	assert_int_equal(cs.entries, first.read);
	stop(pid);
	stop(other);
	pyproc_cache_free(cache);
}

/*
 * A ring of two verdicts, and three files examined in turn: the first
 * file's verdict is gone with its ring entry, so its mapping is no
 * longer known (read again), while the newest two still are; and so on
 * through enough verdicts that the index by mapping is rebuilt.
 */
static void test_evicted_verdict_not_known(void **state)
{
	char dir[] = "/tmp/test_pyproc.XXXXXX", proc[128], tool[3][192], cmd[800], name[32];
	struct pyproc_cache *cache = pyproc_cache_new(2);
	uint64_t refused[TARGET_CAUSES];
	struct pyproc_cache_stats cs;
	struct ebprof_py_proc py;
	struct target *gate;
	struct stat st[3];
	char why[512];

	(void)state;
	assert_non_null(cache);
	fake_root(dir, proc, sizeof(proc));
	for (int i = 0; i < 3; i++) {
		snprintf(tool[i], sizeof(tool[i]), "%s/root/opt/bin/tool%d", dir, i);
		snprintf(cmd, sizeof(cmd), "cp /bin/true '%s'", tool[i]);
		assert_int_equal(system(cmd), 0);
		assert_int_equal(stat(tool[i], &st[i]), 0);
	}
	gate = target_new(&(struct target_config){ .proc_root = proc });
	assert_non_null(gate);
	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "/opt/bin/tool%d", i);
		fake_process(dir, &st[i], name);
		assert_int_equal(pyproc_detect(cache, gate, proc, 4242, 1, &py, why, sizeof(why)),
				 -ENOENT);
	}
	pyproc_cache_stats(cache, &cs);
	assert_int_equal(cs.read, 3);
	assert_int_equal(cs.evicted, 1);
	for (int i = 2; i >= 0; i--) {
		snprintf(name, sizeof(name), "/opt/bin/tool%d", i);
		fake_process(dir, &st[i], name);
		assert_int_equal(pyproc_detect(cache, gate, proc, 4242, 1, &py, why, sizeof(why)),
				 -ENOENT);
	}
	pyproc_cache_stats(cache, &cs);
	assert_int_equal(cs.read, 4); /* tool0 again */
	assert_int_equal(cs.hits, 2);
	/* 1 is read again, evicting 2, and its index entry is one too many: the
	 * index is rebuilt, and 0, kept, is still known by it (by its mapping
	 * alone: its file is gone). Then 2 is read, evicting 0, and 1 and 2 are
	 * known. */
	for (int k = 0; k < 5; k++) {
		int i = "10212"[k] - '0';

		if (k == 1)
			assert_int_equal(unlink(tool[0]), 0);
		snprintf(name, sizeof(name), "/opt/bin/tool%d", i);
		fake_process(dir, &st[i], name);
		assert_int_equal(pyproc_detect(cache, gate, proc, 4242, 1, &py, why, sizeof(why)),
				 -ENOENT);
	}
	pyproc_cache_stats(cache, &cs);
	assert_int_equal(cs.read, 6);
	assert_int_equal(cs.hits, 5);
	assert_int_equal(cs.entries, 2);
	target_stats(gate, refused);
	assert_int_equal(refused[TARGET_GONE], 0);
	teardown(gate, cache, dir);
}

/*
 * A device mapped executable is refused by the gate, and counted, once:
 * the next process that maps it is answered by its mapping.
 */
static void test_refusal_known_by_mapping(void **state)
{
	char dir[] = "/tmp/test_pyproc.XXXXXX", proc[128], fifo[192];
	struct pyproc_cache *cache = pyproc_cache_new(0);
	uint64_t refused[TARGET_CAUSES];
	struct ebprof_py_proc py;
	struct target *gate;
	struct stat st;
	char why[512];

	(void)state;
	assert_non_null(cache);
	fake_root(dir, proc, sizeof(proc));
	snprintf(fifo, sizeof(fifo), "%s/root/opt/bin/tool", dir);
	assert_int_equal(mkfifo(fifo, 0644), 0);
	assert_int_equal(stat(fifo, &st), 0);
	fake_process(dir, &st, "/opt/bin/tool");
	gate = target_new(&(struct target_config){ .proc_root = proc });
	assert_non_null(gate);
	for (int i = 0; i < 3; i++)
		assert_int_equal(pyproc_detect(cache, gate, proc, 4242, 1, &py, why, sizeof(why)),
				 -ENOENT);
	target_stats(gate, refused);
	assert_int_equal(refused[TARGET_NOT_REGULAR], 1);
	teardown(gate, cache, dir);
}

/*
 * The bounds the symbolizer keeps hold here too, since every file mapped
 * executable is examined: a symbol table declaring more than the bound
 * is passed over, and a header announcing 40 million sections is not
 * handed to libelf at all. Each is counted once (the verdict is kept).
 */
static void test_declared_sizes_bounded(void **state)
{
	char dir[] = "/tmp/test_pyproc.XXXXXX", proc[128], tool[192];
	struct pyproc_cache *cache = pyproc_cache_new(0);
	struct pyproc_cache_stats cs;
	struct ebprof_py_proc py;
	struct target *gate;
	struct stat st;
	uint64_t shoff, sections = 40000000;
	uint16_t zero = 0;
	char why[512];
	int fd;

	(void)state;
	assert_non_null(cache);
	gate = fake_tool(dir, proc, sizeof(proc), tool, sizeof(tool), &st);

	/* /bin/true's .dynsym is over 64 bytes (and it has no .symtab). */
	pyproc_cache_bound_tables(cache, 64);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pyproc_detect(cache, gate, proc, 4242, 1, &py, why, sizeof(why)),
				 -ENOENT);
	pyproc_cache_stats(cache, &cs);
	assert_int_equal(cs.read, 1);
	assert_int_equal(cs.oversized, 1);
	pyproc_cache_free(cache);

	/* Within the default bound: read whole, nothing counted. */
	cache = pyproc_cache_new(0);
	assert_non_null(cache);
	assert_int_equal(pyproc_detect(cache, gate, proc, 4242, 1, &py, why, sizeof(why)), -ENOENT);
	pyproc_cache_stats(cache, &cs);
	assert_int_equal(cs.oversized, 0);
	pyproc_cache_free(cache);

	/* Extended numbering: e_shnum 0, the count in section 0's sh_size. */
	fd = open(tool, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &shoff, sizeof(shoff), 0x28), sizeof(shoff));
	assert_int_equal(pwrite(fd, &zero, sizeof(zero), 0x3c), sizeof(zero));
	assert_int_equal(pwrite(fd, &sections, sizeof(sections), (off_t)shoff + 0x20),
			 sizeof(sections));
	close(fd);
	assert_int_equal(stat(tool, &st), 0);
	fake_process(dir, &st, "/opt/bin/tool");
	cache = pyproc_cache_new(0);
	assert_non_null(cache);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pyproc_detect(cache, gate, proc, 4242, 1, &py, why, sizeof(why)),
				 -ENOENT);
	pyproc_cache_stats(cache, &cs);
	assert_int_equal(cs.read, 1);
	assert_int_equal(cs.oversized, 1);
	teardown(gate, cache, dir);
}

static void test_tsd_offset(void **state)
{
	(void)state;
	assert_int_equal(pyproc_tsd_offset(0), 0x318);
	assert_int_equal(pyproc_tsd_offset(31), 0x310 + 31 * 16 + 8);
	assert_int_equal(pyproc_tsd_offset(32), -1);
	assert_null(pyproc_layout(1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_debian_python311),
		cmocka_unit_test(test_not_python),
		cmocka_unit_test(test_maps_lent),
		cmocka_unit_test(test_tsd_offset),
		cmocka_unit_test(test_verdict_cached_per_file),
		cmocka_unit_test(test_hostile_libpython_refused),
		cmocka_unit_test(test_declared_sizes_bounded),
		cmocka_unit_test(test_plain_file_known_by_mapping),
		cmocka_unit_test(test_python_through_ldso),
		cmocka_unit_test(test_libraries_known_by_mapping),
		cmocka_unit_test(test_evicted_verdict_not_known),
		cmocka_unit_test(test_refusal_known_by_mapping),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
