/*
 * hostcost [ROUNDS]: what this host charges for the kernel work a
 * profiler's user space does per new process, so that figures from
 * different hosts can be read side by side. Prints the median of ROUNDS
 * (default 5) of each, in microseconds:
 *   syscall       a system call that does nothing (getppid)
 *   maps_open     open and close of /proc/self/maps
 *   maps_open_new the same of a new process's maps, opened for the first
 *                 time: the kernel makes its /proc entries then, once for
 *                 each process, and a profiler that reads the maps of
 *                 each new process pays that at every one
 *   maps_query    one PROCMAP_QUERY ioctl on it (Linux 6.11 and later; else -)
 *   page_fault    the first write to a page of fresh anonymous memory
 * A guest whose page tables the hypervisor shadows pays far more for a
 * fault than one with nested paging; that moves every figure that
 * allocates.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "symbolizer/procmaps_query.h"

#define MAX_ROUNDS 101
#define PAGES 4096

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	return v[n / 2];
}

static double syscall_us(void)
{
	double t = now_us();

	for (int i = 0; i < 100000; i++)
		syscall(SYS_getppid);
	return (now_us() - t) / 100000;
}

static double maps_open_us(void)
{
	double t = now_us();

	for (int i = 0; i < 10000; i++) {
		int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			return -1;
		close(fd);
	}
	return (now_us() - t) / 10000;
}

static double maps_open_new_us(void)
{
	double sum = 0;
	char path[64];

	for (int i = 0; i < 200; i++) {
		pid_t child = fork();
		double t;
		int fd;

		if (child < 0)
			return -1;
		if (child == 0) {
			pause();
			_exit(0);
		}
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)child);
		t = now_us();
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			close(fd);
		sum += now_us() - t;
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		if (fd < 0)
			return -1;
	}
	return sum / 200;
}

static double maps_query_us(void)
{
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	double t;

	if (fd < 0)
		return -1;
	t = now_us();
	for (int i = 0; i < 10000; i++) {
		struct maps_query q = { .size = sizeof(q), .query_flags = MAPS_QUERY_COVERING_OR_NEXT };

		if (ioctl(fd, MAPS_QUERY, &q)) {
			close(fd);
			return -1;
		}
	}
	t = (now_us() - t) / 10000;
	close(fd);
	return t;
}

static double page_fault_us(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	volatile char *p = mmap(NULL, PAGES * page, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	double t;

	if (p == MAP_FAILED)
		return -1;
	/* Huge pages would fault once for 512 pages. */
	madvise((void *)p, PAGES * page, MADV_NOHUGEPAGE);
	t = now_us();
	for (size_t i = 0; i < PAGES; i++)
		p[i * page] = 1;
	t = (now_us() - t) / PAGES;
	munmap((void *)p, PAGES * page);
	return t;
}

int main(int argc, char **argv)
{
	static double (*const probe[])(void) = { syscall_us, maps_open_us, maps_open_new_us,
						 maps_query_us, page_fault_us };
	static const char *const name[] = { "syscall", "maps_open", "maps_open_new",
					       "maps_query", "page_fault" };
	int rounds = argc > 1 ? atoi(argv[1]) : 5;
	double v[MAX_ROUNDS];

	if (rounds < 1 || rounds > MAX_ROUNDS) {
		fprintf(stderr, "usage: hostcost [ROUNDS, 1..%d]\n", MAX_ROUNDS);
		return 2;
	}
	for (size_t k = 0; k < sizeof(probe) / sizeof(probe[0]); k++) {
		int n = 0;

		for (int r = 0; r < rounds; r++) {
			double x = probe[k]();

			if (x < 0)
				break;
			v[n++] = x;
		}
		if (n == rounds)
			printf("%-13s %.2f us\n", name[k], median(v, n));
		else
			printf("%-13s -\n", name[k]);
	}
	return 0;
}
