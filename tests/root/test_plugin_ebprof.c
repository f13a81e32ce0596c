/*
 * Tests for the plugin's callbacks, driven the way collectd drives them
 * (module_register, config, init, read, shutdown) against the stubs, with
 * the real sampler on real eBPF profiling a child process that spins.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <limits.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/unit/stub_collectd.h"

__attribute__((noinline)) static void spin_child(void)
{
	volatile unsigned long x = 0;

	for (;;)
		x++;
}

static pid_t start_spinner(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		/* A failed assertion ends the test before stop(): the spinner
		 * must not outlive it, burning a CPU the next runs need. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		spin_child();
	}
	return pid;
}

/* A loop of forks, none exec'd, each spinning for 20 ms of its own. */
static pid_t start_forker(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;) {
			pid_t child = fork();

			if (child == 0) {
				struct timespec t0, t;

				clock_gettime(CLOCK_MONOTONIC, &t0);
				do
					clock_gettime(CLOCK_MONOTONIC, &t);
				while ((t.tv_sec - t0.tv_sec) * 1000000000L + t.tv_nsec - t0.tv_nsec <
				       20000000L);
				_exit(0);
			}
			if (child > 0)
				waitpid(child, NULL, 0);
		}
	}
	return pid;
}

static void stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static int count_entries(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)) != NULL)
		n += strncmp(de->d_name, prefix, strlen(prefix)) == 0;
	closedir(d);
	return n;
}

static int setup(void **state)
{
	(void)state;
	stub_reset();
	module_register();
	return 0;
}

/* Calls the config callback on a block built by the caller. */
static int configure(oconfig_item_t *root)
{
	int rc = stub.config(root);

	stub_ci_free(root);
	return rc;
}

/*
 * Configures root, starts the plugin at a read interval of interval_s,
 * and reads 3 times, every_ms apart (a read sooner than half an interval
 * after the last is skipped).
 */
static void start_and_read_thrice(oconfig_item_t *root, double interval_s, long every_ms)
{
	assert_int_equal(configure(root), 0);
	stub.interval = DOUBLE_TO_CDTIME_T(interval_s);
	assert_int_equal(stub.init(), 0);
	for (int i = 0; i < 3; i++) {
		sleep_ms(every_ms);
		assert_int_equal(stub.read(NULL), 0);
	}
}

static void remove_dir(const char *dir)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_registers_config_init_shutdown_but_no_read(void **state)
{
	(void)state;
	assert_non_null(stub.config);
	assert_non_null(stub.init);
	assert_non_null(stub.shutdown);
	/* The read callback comes from init, once sampling works. */
	assert_null(stub.read);
	assert_int_equal(stub.shutdown(), 0);
}

static void test_bad_config_is_refused(void **state)
{
	oconfig_item_t *root = stub_ci_block("Plugin");

	(void)state;
	stub_ci_string(root, "ebprof");
	stub_ci_number(stub_ci_child(root, "TopFunction"), 5);
	assert_true(configure(root) != 0);
	assert_true(stub_log_has("ebprof plugin: ", "\"TopFunction\"", NULL));
	assert_int_equal(stub.shutdown(), 0);
}

static void test_init_checks_spool_interval(void **state)
{
	oconfig_item_t *root = stub_ci_block("Plugin");

	(void)state;
	stub_ci_string(stub_ci_child(root, "SpoolDir"), "/tmp/ebprof-never-created");
	stub_ci_number(stub_ci_child(root, "SpoolInterval"), 15);
	assert_int_equal(configure(root), 0);
	stub.interval = TIME_T_TO_CDTIME_T_STATIC(10);
	assert_true(stub.init() != 0);
	assert_null(stub.read);
	assert_true(stub_log_has("ebprof plugin: ", "SpoolInterval 15", "10", NULL));
	assert_int_equal(stub.shutdown(), 0);
}

/* Without CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN, init fails and says why. */
static void test_init_without_capabilities_says_what_to_fix(void **state)
{
	pid_t pid;
	int status;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
		struct __user_cap_data_struct data[2];
		const int drop[] = { CAP_SYS_ADMIN, CAP_PERFMON, CAP_BPF };

		if (syscall(SYS_capget, &hdr, data))
			_exit(10);
		for (size_t i = 0; i < sizeof(drop) / sizeof(drop[0]); i++) {
			data[drop[i] / 32].effective &= ~(1u << (drop[i] % 32));
			data[drop[i] / 32].permitted &= ~(1u << (drop[i] % 32));
		}
		if (syscall(SYS_capset, &hdr, data))
			_exit(11);
		if (stub.init() == 0)
			_exit(12);
		if (stub.read)
			_exit(13);
		if (!stub_log_has("ebprof plugin: cannot start sampling:", NULL))
			_exit(14);
		if (!stub_log_has("CAP_", NULL))
			_exit(15);
		_exit(stub.shutdown() == 0 ? 0 : 16);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* The whole life: init, reads that dispatch metrics and fill the spool,
 * shutdown that writes the last partial window and frees everything. */
static void test_reads_dispatch_metrics_and_spool(void **state)
{
	char dir[] = "/tmp/ebprof-plugin.XXXXXX", pid_text[16];
	oconfig_item_t *root = stub_ci_block("Plugin");
	const value_list_t *vl;
	pid_t child;
	double spin = 0, sum = 0;
	uint64_t files_before;

	(void)state;
	assert_non_null(mkdtemp(dir));
	child = start_spinner();
	snprintf(pid_text, sizeof(pid_text), "%d", (int)child);
	stub_ci_number(stub_ci_child(root, "Frequency"), 999);
	stub_ci_number(stub_ci_child(root, "PID"), child);
	stub_ci_number(stub_ci_child(root, "TopFunctions"), 3);
	stub_ci_string(stub_ci_child(root, "SpoolDir"), dir);
	stub_ci_number(stub_ci_child(root, "SpoolInterval"), 1);
	stub_ci_number(stub_ci_child(root, "SpoolRetention"), 2);
	assert_int_equal(configure(root), 0);
	stub.interval = DOUBLE_TO_CDTIME_T_STATIC(0.5);

	assert_int_equal(stub.init(), 0);
	assert_non_null(stub.read);
	assert_string_equal(stub.read_name, "ebprof");

	sleep_ms(500);
	assert_int_equal(stub.read(NULL), 0);
	/* One read is half a window: nothing in the spool yet. */
	assert_int_equal(count_entries(dir, "ebprof-"), 0);
	vl = stub_dispatched("self", "spin_child");
	if (!vl)
		fail_msg("no self value for spin_child; log:\n%s", stub.log ? stub.log : "");
	spin = vl->values[0].gauge;
	for (size_t i = 0; i < stub.n_dispatched; i++) {
		if (strcmp(stub.dispatched[i].plugin_instance, "self") == 0)
			sum += stub.dispatched[i].values[0].gauge;
	}
	/* The child spins on one CPU: near 100% of one CPU, nearly all of it
	 * in spin_child (the machine may be busy, so a wide margin). */
	assert_true(sum > 20 && sum < 130);
	assert_true(spin > 0.8 * sum);
	vl = stub_dispatched("health", "samples");
	assert_non_null(vl);
	assert_true(vl->values[0].gauge > 100);
	assert_non_null(stub_dispatched("health", "lost-collision"));
	assert_non_null(stub_dispatched("health", "drain"));
	vl = stub_dispatched("health", "");
	assert_string_equal(vl->type, "ps_cputime");
	assert_true(vl->values[0].derive + vl->values[1].derive > 0);

	sleep_ms(500);
	assert_int_equal(stub.read(NULL), 0);
	/* A full window: one SVG, one folded, latest.* of each. */
	assert_int_equal(count_entries(dir, "ebprof-"), 2);
	assert_int_equal(count_entries(dir, "latest."), 2);
	files_before = (uint64_t)count_entries(dir, "ebprof-");

	sleep_ms(300);
	assert_int_equal(stub.read(NULL), 0);
	stop(child);
	assert_int_equal(stub.shutdown(), 0);
	/* The partial window was written at shutdown; nothing temporary left. */
	assert_int_equal(count_entries(dir, "ebprof-"), (int)files_before + 2);
	assert_int_equal(count_entries(dir, "."), 2 + 0); /* "." and ".." only */
	assert_int_equal(stub_log_count(LOG_ERR), 0);
	remove_dir(dir);
}

/*
 * SpoolWindowMemory: once the window's tree holds that many bytes, the
 * next reads' samples stay out of it and are counted (lost-window, and in
 * lost-memory); the heap and every cache's size are health metrics.
 */
static void test_window_bound_and_memory_metrics(void **state)
{
	char dir[] = "/tmp/ebprof-plugin.XXXXXX";
	oconfig_item_t *root = stub_ci_block("Plugin");
	const value_list_t *vl;
	pid_t child;

	(void)state;
	assert_non_null(mkdtemp(dir));
	child = start_spinner();
	stub_ci_number(stub_ci_child(root, "Frequency"), 999);
	stub_ci_number(stub_ci_child(root, "PID"), child);
	stub_ci_string(stub_ci_child(root, "SpoolDir"), dir);
	stub_ci_number(stub_ci_child(root, "SpoolInterval"), 2);
	stub_ci_string(stub_ci_child(root, "SpoolWindowMemory"), "64KiB");
	start_and_read_thrice(root, 0.5, 500);
	/* The first read's tree (a node chunk and an arena block: ~0.5 MB)
	 * took the window past 64 KiB: the next two reads' samples are out. */
	vl = stub_dispatched("health", "cache_window");
	assert_non_null(vl);
	assert_true(vl->values[0].gauge > 64 * 1024);
	vl = stub_dispatched("health", "lost-window");
	assert_non_null(vl);
	assert_true(vl->values[0].derive > 0); /* a busy host may give the spinner little CPU */
	assert_true(stub_dispatched("health", "lost-memory")->values[0].derive >=
		    vl->values[0].derive);
	/* Under ASan glibc's heap is not the one in use: only the series. */
	vl = stub_dispatched("health", "heap_in_use");
	assert_non_null(vl);
	assert_true(stub_dispatched("health", "heap_mapped")->values[0].gauge >=
		    vl->values[0].gauge);
	assert_true(stub_dispatched("health", "cache_symbols")->values[0].gauge > 0);
	assert_true(stub_dispatched("health", "cache_processes")->values[0].gauge > 0);
	stop(child);
	assert_int_equal(stub.shutdown(), 0);
	remove_dir(dir);
}

/*
 * Forks sampled before an exec borrow their parent's maps, kept for the
 * next forks: a cache of its own, reported as cache_forks.
 */
static void test_forks_parents_maps_are_a_memory_metric(void **state)
{
	char dir[] = "/tmp/ebprof-plugin.XXXXXX";
	oconfig_item_t *root = stub_ci_block("Plugin");
	const value_list_t *vl;
	pid_t child;

	(void)state;
	assert_non_null(mkdtemp(dir));
	child = start_forker();
	stub_ci_number(stub_ci_child(root, "Frequency"), 999);
	stub_ci_string(stub_ci_child(root, "SpoolDir"), dir);
	start_and_read_thrice(root, 0.5, 500);
	vl = stub_dispatched("health", "cache_forks");
	assert_non_null(vl);
	/* ~40 forks of 20 ms, each sampled ~20 times: the loop's maps are kept. */
	assert_true(vl->values[0].gauge > 0);
	stop(child);
	assert_int_equal(stub.shutdown(), 0);
	remove_dir(dir);
}

/* collectd reads right after init; that read waits for a real window. */
static void test_read_right_after_init_is_skipped(void **state)
{
	oconfig_item_t *root = stub_ci_block("Plugin");

	(void)state;
	stub_ci_number(stub_ci_child(root, "PID"), 1);
	assert_int_equal(configure(root), 0);
	stub.interval = TIME_T_TO_CDTIME_T_STATIC(1);
	assert_int_equal(stub.init(), 0);
	assert_int_equal(stub.read(NULL), 0);
	assert_int_equal(stub.n_dispatched, 0);
	sleep_ms(600);
	assert_int_equal(stub.read(NULL), 0);
	assert_non_null(stub_dispatched("self", "[other]"));
	assert_int_equal(stub.shutdown(), 0);
}

/* A spool that cannot be written is logged once, and metrics still flow. */
static void test_spool_failure_logged_once_metrics_flow(void **state)
{
	char dir[] = "/tmp/ebprof-plugin.XXXXXX", file[64], cmd[64];
	oconfig_item_t *root = stub_ci_block("Plugin");
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/file", dir);
	f = fopen(file, "w");
	assert_non_null(f);
	fclose(f);
	strcat(file, "/spool"); /* below a regular file: ENOTDIR, even for root */
	stub_ci_number(stub_ci_child(root, "PID"), 1);
	stub_ci_string(stub_ci_child(root, "SpoolDir"), file);
	stub_ci_number(stub_ci_child(root, "SpoolInterval"), 1);
	start_and_read_thrice(root, 1, 600); /* three windows */
	assert_int_equal(stub_log_count(LOG_ERR), 1);
	assert_true(stub_log_has("ebprof plugin: spool:", file, "Not a directory", NULL));
	assert_non_null(stub_dispatched("self", "[other]"));
	assert_non_null(stub_dispatched("health", "samples"));

	/* The problem goes away: the spool resumes, and says so once. */
	snprintf(cmd, sizeof(cmd), "%s/file", dir);
	assert_int_equal(unlink(cmd), 0);
	assert_int_equal(mkdir(cmd, 0755), 0);
	sleep_ms(600);
	assert_int_equal(stub.read(NULL), 0);
	assert_true(stub_log_has("ebprof plugin: spool: writing to", file, "again", NULL));
	assert_int_equal(count_entries(file, "ebprof-"), 2);
	assert_int_equal(stub.shutdown(), 0);
	remove_dir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_registers_config_init_shutdown_but_no_read, setup),
		cmocka_unit_test_setup(test_bad_config_is_refused, setup),
		cmocka_unit_test_setup(test_init_checks_spool_interval, setup),
		cmocka_unit_test_setup(test_init_without_capabilities_says_what_to_fix, setup),
		cmocka_unit_test_setup(test_reads_dispatch_metrics_and_spool, setup),
		cmocka_unit_test_setup(test_read_right_after_init_is_skipped, setup),
		cmocka_unit_test_setup(test_window_bound_and_memory_metrics, setup),
		cmocka_unit_test_setup(test_forks_parents_maps_are_a_memory_metric, setup),
		cmocka_unit_test_setup(test_spool_failure_logged_once_metrics_flow, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
