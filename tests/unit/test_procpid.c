/*
 * procpid tests: a PID in use or free, under the real /proc (by signal),
 * under a fake root and under a /proc of another PID namespace (by
 * directory), and the PIDs kill() must not be asked about.
 */
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "symbolizer/procpid.h"

static void test_only_the_real_proc_is_asked_by_signal(void **state)
{
	(void)state;
	assert_true(procpid_by_signal("/proc"));
	assert_false(procpid_by_signal("/proc/"));
	assert_false(procpid_by_signal("/tmp/fakeproc"));
}

/*
 * In a PID namespace of its own with the host's /proc still on /proc (a
 * container run so), /proc shows host PIDs that kill() would not find:
 * procpid_by_signal() says no, and the parent, which runs, is found by
 * its directory. The grandchild answers by its exit status.
 */
static void test_a_proc_of_another_pid_namespace_is_read_by_directory(void **state)
{
	pid_t parent = getpid(), child;
	int status;

	(void)state;
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		pid_t inner;
		int code;

		if (unshare(CLONE_NEWPID))
			_exit(10);
		inner = fork();
		if (inner < 0)
			_exit(11);
		if (inner == 0) {
			/* PID 1 here; /proc/self names our host PID. */
			if (getpid() != 1)
				_exit(12);
			if (procpid_by_signal("/proc"))
				_exit(13);
			if (!procpid_exists("/proc", false, (uint32_t)parent))
				_exit(14);
			/* Asked by signal, the host PID is not found here. */
			if (procpid_exists("/proc", true, (uint32_t)parent))
				_exit(15);
			_exit(0);
		}
		if (waitpid(inner, &code, 0) != inner || !WIFEXITED(code))
			_exit(16);
		_exit(WEXITSTATUS(code));
	}
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* A child while it runs, as a zombie, and once reaped. */
static void test_a_child_until_it_is_reaped(void **state)
{
	pid_t child = fork();

	(void)state;
	assert_true(child >= 0);
	if (child == 0) {
		/* Gone with us, should an assertion end this test first. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		pause();
		_exit(0);
	}
	assert_true(procpid_exists("/proc", true, (uint32_t)getpid()));
	assert_true(procpid_exists("/proc", true, (uint32_t)child));
	assert_int_equal(kill(child, SIGKILL), 0);
	/* Not reaped yet: a zombie still holds its PID, as /proc/PID shows. */
	for (;; usleep(1000)) {
		char path[64];
		FILE *f;
		char state_char = 0;

		snprintf(path, sizeof(path), "/proc/%d/stat", child);
		f = fopen(path, "r");
		assert_non_null(f);
		assert_int_equal(fscanf(f, "%*d (%*[^)]) %c", &state_char), 1);
		fclose(f);
		if (state_char == 'Z')
			break;
	}
	assert_true(procpid_exists("/proc", true, (uint32_t)child));
	assert_int_equal(waitpid(child, NULL, 0), child);
	assert_false(procpid_exists("/proc", true, (uint32_t)child));
}

/* Init is another process, root's: in use whether kill() says 0 or EPERM. */
static void test_init_is_in_use(void **state)
{
	(void)state;
	assert_true(procpid_exists("/proc", true, 1));
}

/*
 * PID 0 and PIDs above INT_MAX would be a process group to kill(): they
 * are looked for in /proc instead, where there are none. Were kill()
 * asked, 0 would be our own group (in use) and 0xffffffff every process.
 */
static void test_group_pids_are_looked_for_in_proc(void **state)
{
	(void)state;
	assert_false(procpid_exists("/proc", true, 0));
	assert_false(procpid_exists("/proc", true, 0xffffffffu));
	assert_false(procpid_exists("/proc", true, 0x80000001u));
}

/* Under a fake root, its directories decide, whatever runs on the host. */
static void test_a_fake_root_is_read_by_directory(void **state)
{
	char root[] = "/tmp/procpid-XXXXXX", path[64];

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/4242", root);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_true(procpid_exists(root, false, 4242));
	assert_false(procpid_exists(root, false, 4243));
	/* Our own PID runs, but the fake root has no directory for it. */
	assert_false(procpid_exists(root, false, (uint32_t)getpid()));
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(rmdir(root), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_only_the_real_proc_is_asked_by_signal),
	    cmocka_unit_test(test_a_proc_of_another_pid_namespace_is_read_by_directory),
	    cmocka_unit_test(test_a_child_until_it_is_reaped),
	    cmocka_unit_test(test_init_is_in_use),
	    cmocka_unit_test(test_group_pids_are_looked_for_in_proc),
	    cmocka_unit_test(test_a_fake_root_is_read_by_directory),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
