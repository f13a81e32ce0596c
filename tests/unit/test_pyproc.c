/*
 * pyproc tests: a real Debian /usr/bin/python3.11, started here, is
 * recognized with the 3.11 row, its evaluation function where its symbol
 * table says (and its unnamed .cold part found), and its thread state in the TSD slot the check found (the
 * row and the glibc slot checked against the running process); processes
 * that are not Python are not, and the TSD slot arithmetic.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "symbolizer/pyproc.h"

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
	err = pyproc_detect("/proc", (uint32_t)pid, 42, &py, why, sizeof(why));
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
	assert_int_equal(pyproc_detect("/proc", (uint32_t)pid, 1, &py, why, sizeof(why)), -ENOENT);
	assert_string_equal(why, "");
	stop(pid);
	assert_int_equal(pyproc_detect("/proc", (uint32_t)pid, 1, &py, why, sizeof(why)), -ESRCH);
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
		cmocka_unit_test(test_tsd_offset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
