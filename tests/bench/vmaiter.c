/*
 * vmaiter OBJECT [CHILDREN [SETTLE_MS]]: what reading a new process's executable
 * mappings costs two ways, each on processes read for the first time:
 *   proc      as the sampler reads them today: open /proc/PID/maps (the
 *             kernel makes the process's /proc entries at the first
 *             open), fstatfs, a PROCMAP_QUERY ioctl per executable
 *             mapping and one more (before Linux 6.11: the text), close;
 *   iterator  a task_vma BPF iterator (OBJECT: vmaiter.bpf.o) linked to
 *             the one process: link, iterator fd, read, close, unlink.
 * Each child execs /bin/sleep and is read SETTLE_MS (default 20) later,
 * as the sampler's watch thread reads a process soon after its first
 * sample (an emulated guest needs longer for the exec to have mapped its
 * libraries). Children
 * alternate between the two ways; each iterator child's mappings are
 * then read through /proc (untimed) and compared, so that both ways are
 * seen to find the same mappings. Prints the median wall and CPU time of
 * each way, in microseconds, and the mappings each found.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "symbolizer/procmaps_query.h"

#define MAX_CHILDREN 2000
#define MAX_MAPPINGS 64

struct vma_row {
	uint64_t start, end, pgoff, ino;
	uint32_t dev, name_len;
};

static uint64_t clock_ns(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Without PROCMAP_QUERY (before 6.11): the text, as procmaps.c reads it then. */
static int read_text(int fd, uint64_t *starts)
{
	static char buf[1 << 16];
	size_t len = 0;
	ssize_t got;
	int n = 0;

	if (lseek(fd, 0, SEEK_SET))
		return -1;
	while ((got = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)got;
	if (got < 0)
		return -1;
	buf[len] = '\0';
	for (char *line = buf; *line;) {
		char *end = strchr(line, '\n'), perms[5];
		unsigned long long start;

		if (sscanf(line, "%llx-%*x %4s", &start, perms) == 2 && perms[2] == 'x') {
			if (n < MAX_MAPPINGS)
				starts[n] = start;
			n++;
		}
		if (!end)
			break;
		line = end + 1;
	}
	return n;
}

/* Executable mappings' starts through /proc, as procmaps.c asks; -1 if it fails. */
static int read_proc(pid_t pid, uint64_t *starts)
{
	char path[64], name[4096];
	struct statfs fs;
	uint64_t addr = 0;
	int fd, n = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstatfs(fd, &fs))
		return -1;
	for (;;) {
		struct maps_query q = {
		    .size = sizeof(q),
		    .query_flags = MAPS_QUERY_COVERING_OR_NEXT | MAPS_QUERY_EXECUTABLE,
		    .query_addr = addr,
		    .vma_name_size = sizeof(name),
		    .vma_name_addr = (uintptr_t)name,
		};

		if (ioctl(fd, MAPS_QUERY, &q))
			break;
		if (n < MAX_MAPPINGS)
			starts[n] = q.vma_start;
		n++;
		addr = q.vma_end;
	}
	if (errno == ENOTTY && !n)
		n = read_text(fd, starts);
	else if (errno != ENOENT)
		n = -1;
	close(fd);
	return n;
}

/* The same through the iterator linked to pid; -1 if it fails. */
static int read_iter(struct bpf_program *prog, pid_t pid, uint64_t *starts)
{
	static char buf[1 << 16];
	union bpf_iter_link_info info = { .task.pid = (uint32_t)pid };
	LIBBPF_OPTS(bpf_iter_attach_opts, opts, .link_info = &info,
		    .link_info_len = sizeof(info));
	struct bpf_link *link = bpf_program__attach_iter(prog, &opts);
	size_t len = 0, off = 0;
	ssize_t got;
	int fd, n = 0;

	if (!link)
		return -1;
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0) {
		bpf_link__destroy(link);
		return -1;
	}
	while ((got = read(fd, buf + len, sizeof(buf) - len)) > 0)
		len += (size_t)got;
	close(fd);
	bpf_link__destroy(link);
	if (got < 0)
		return -1;
	while (off + sizeof(struct vma_row) <= len) {
		struct vma_row r;

		memcpy(&r, buf + off, sizeof(r));
		if (n < MAX_MAPPINGS)
			starts[n] = r.start;
		n++;
		off += sizeof(r) + r.name_len;
	}
	return n;
}

/* The first disagreement, for whoever reads the output. */
static void say_differ(const uint64_t *iter, int n_iter, const uint64_t *proc, int n_proc)
{
	fprintf(stderr, "vmaiter: the iterator found %d mappings, /proc %d:", n_iter, n_proc);
	for (int i = 0; i < MAX_MAPPINGS && (i < n_iter || i < n_proc); i++)
		fprintf(stderr, " %" PRIx64 "/%" PRIx64, i < n_iter ? iter[i] : 0,
			i < n_proc ? proc[i] : 0);
	fprintf(stderr, "\n");
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double median_us(uint64_t *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_u64);
	return n ? (double)v[n / 2] / 1000 : 0;
}

int main(int argc, char **argv)
{
	static uint64_t wall[2][MAX_CHILDREN], cpu[2][MAX_CHILDREN];
	int children = argc > 2 ? atoi(argv[2]) : 200, n[2] = { 0, 0 }, found[2] = { 0, 0 };
	int settle_ms = argc > 3 ? atoi(argv[3]) : 20;
	int differ = 0, failed = 0;
	struct bpf_object *obj;
	struct bpf_program *prog;

	if (argc < 2 || children < 2 || children > MAX_CHILDREN || settle_ms < 1 || settle_ms > 10000) {
		fprintf(stderr, "usage: vmaiter OBJECT [CHILDREN, 2..%d [SETTLE_MS, 1..10000]]\n",
			MAX_CHILDREN);
		return 2;
	}
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj || bpf_object__load(obj)) {
		fprintf(stderr, "vmaiter: %s: cannot load (%s)\n", argv[1], strerror(errno));
		return 1;
	}
	prog = bpf_object__find_program_by_name(obj, "bench_vmas");
	for (int i = 0; i < children && prog; i++) {
		uint64_t starts[MAX_MAPPINGS], check[MAX_MAPPINGS], w, c;
		int way = i % 2, got;
		pid_t child = fork();

		if (child < 0)
			break;
		if (child == 0) {
			execl("/bin/sleep", "sleep", "10", (char *)NULL);
			_exit(127);
		}
		usleep((useconds_t)settle_ms * 1000);
		w = clock_ns(CLOCK_MONOTONIC);
		c = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		got = way ? read_iter(prog, child, starts) : read_proc(child, starts);
		cpu[way][n[way]] = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c;
		wall[way][n[way]] = clock_ns(CLOCK_MONOTONIC) - w;
		if (got < 0) {
			failed++;
		} else {
			n[way]++;
			found[way] = got;
			int again = way ? read_proc(child, check) : got;

			if (again != got || (way && memcmp(starts, check, sizeof(starts[0]) *
							   (size_t)(got < MAX_MAPPINGS ? got :
								    MAX_MAPPINGS)))) {
				if (!differ++)
					say_differ(starts, got, check, again);
			}
		}
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	printf("way       wall_us  cpu_us  mappings  reads\n");
	printf("proc     %8.2f %7.2f  %8d  %5d\n", median_us(wall[0], n[0]), median_us(cpu[0], n[0]),
	       found[0], n[0]);
	printf("iterator %8.2f %7.2f  %8d  %5d\n", median_us(wall[1], n[1]), median_us(cpu[1], n[1]),
	       found[1], n[1]);
	printf("failed %d, iterator reads that /proc contradicted %d\n", failed, differ);
	bpf_object__close(obj);
	return failed || differ || !n[0] || !n[1];
}
