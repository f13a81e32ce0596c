/*
 * vmaiter OBJECT [CHILDREN [SETTLE_MS]]: what reading a new process's
 * executable mappings costs, three ways, each on processes read for the
 * first time:
 *   proc      as the sampler reads them today: open /proc/PID/maps (the
 *             kernel makes the process's /proc entries at the first
 *             open), fstatfs, a PROCMAP_QUERY ioctl per executable
 *             mapping and one more (before Linux 6.11: the text), close;
 *   iterator  a task_vma BPF iterator (OBJECT: vmaiter.bpf.o) linked to
 *             the one process: link, iterator fd, read, close, unlink;
 *   loader    the dynamic loader's list of loaded objects, read from the
 *             process's memory with process_vm_readv(), each path
 *             stat()ed (the vDSO and the executable's own file are what
 *             the kernel would tell a profiler; see read_loader()).
 * Each child execs /bin/sleep; it is read after two sleeps of SETTLE_MS
 * (default 20) each, as the sampler's watch thread reads a process soon
 * after its first sample (an emulated guest needs longer for the exec to
 * have mapped its libraries). Between the two sleeps a loader child is
 * read through the iterator, untimed: where its executable is, and the
 * mappings its list must give. Children take the ways in turn; each
 * iterator child is then read through /proc, untimed, and compared. Prints
 * the median wall and CPU time of each way, in microseconds, the mappings
 * each found (the loader's: file-backed only), and how many reads the
 * checks contradicted.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elf.h>
#include <limits.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "symbolizer/procmaps_query.h"

#define MAX_CHILDREN 2000
#define MAX_MAPPINGS 64
#define WAYS 3
#define NAME_MAX_BYTES 255

struct vma_row {
	uint64_t start, end, pgoff, ino;
	uint32_t dev, name_len;
};

/* The iterator's last read, names included. */
static struct vma_row iter_rows[MAX_MAPPINGS];
static char iter_names[MAX_MAPPINGS][NAME_MAX_BYTES + 1];

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

/*
 * Executable mappings' starts through /proc, with the system calls
 * procmaps.c makes; -1 if it fails. Not procmaps_load() itself: what it
 * does besides (6-9 us of a cold read here: the list built, packed and
 * sorted, its name escaped) would be counted for this way and not for the
 * others, which keep only starts.
 */
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
	/*
	 * What LIBBPF_OPTS() makes, written out (cppcheck does not know the
	 * macro): libbpf refuses options whose padding is not zero.
	 */
	struct bpf_iter_attach_opts opts;
	struct bpf_link *link;
	size_t len = 0, off = 0;
	ssize_t got;
	int fd, n = 0;

	memset(&opts, 0, sizeof(opts));
	opts.sz = sizeof(opts);
	opts.link_info = &info;
	opts.link_info_len = sizeof(info);
	link = bpf_program__attach_iter(prog, &opts);
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
		if (n < MAX_MAPPINGS) {
			size_t name_len = r.name_len < NAME_MAX_BYTES ? r.name_len : NAME_MAX_BYTES;

			starts[n] = r.start;
			iter_rows[n] = r;
			memcpy(iter_names[n], buf + off + sizeof(r), name_len);
			iter_names[n][name_len] = '\0';
		}
		n++;
		off += sizeof(r) + r.name_len;
	}
	return n;
}

/* Where a file's executable segment starts (page-aligned), from its program headers. */
struct elf_text {
	char path[PATH_MAX];
	uint64_t text_vaddr, dyn_vaddr, dyn_size;
	bool has_text;
};

static struct elf_text texts[MAX_MAPPINGS];
static int n_texts;

/* The file's segments: looked up once a path, as a profiler would keep them. */
static const struct elf_text *elf_text(const char *path)
{
	struct elf_text *t;
	Elf64_Ehdr eh;
	int fd;

	for (int i = 0; i < n_texts; i++)
		if (!strcmp(texts[i].path, path))
			return &texts[i];
	if (n_texts == MAX_MAPPINGS)
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	t = &texts[n_texts];
	memset(t, 0, sizeof(*t));
	snprintf(t->path, sizeof(t->path), "%s", path);
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr)) {
		close(fd);
		return NULL;
	}
	for (int i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;

		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * sizeof(ph))) !=
		    sizeof(ph))
			break;
		if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) && !t->has_text) {
			t->text_vaddr = ph.p_vaddr & ~(uint64_t)4095;
			t->has_text = true;
		}
		if (ph.p_type == PT_DYNAMIC) {
			t->dyn_vaddr = ph.p_vaddr;
			t->dyn_size = ph.p_memsz;
		}
	}
	close(fd);
	if (!t->has_text)
		return NULL;
	n_texts++;
	return t;
}

static int remote_read(pid_t pid, uint64_t addr, void *dst, size_t len)
{
	struct iovec local = { dst, len }, remote = { (void *)(uintptr_t)addr, len };

	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

/* The first fields of glibc's struct link_map, the ones <link.h> documents. */
struct lm_head {
	uint64_t l_addr, l_name, l_ld, l_next, l_prev;
};

/*
 * The executable mappings' starts through the dynamic loader's list of
 * loaded objects, read from the process's memory (process_vm_readv):
 * the executable's DT_DEBUG gives r_debug, whose list gives each
 * object's load bias and path; a path is stat()ed, as a profiler would
 * to know the file, and its executable segment found in its (kept)
 * program headers. bias is the executable's load bias (a profiler would
 * have it from the kernel: the sampler can read the auxiliary vector's
 * AT_PHDR). Returns the objects found, -1 if the loader's list is not
 * there (yet).
 */
static int read_loader(pid_t pid, const struct elf_text *exe, uint64_t bias, uint64_t *starts)
{
	Elf64_Dyn dyn[64];
	size_t dyn_len = exe->dyn_size < sizeof(dyn) ? exe->dyn_size : sizeof(dyn);
	uint64_t r_debug = 0, r_map, addr;
	struct stat st;
	int n = 0;

	if (!exe->dyn_size || remote_read(pid, bias + exe->dyn_vaddr, dyn, dyn_len))
		return -1;
	for (size_t i = 0; i < dyn_len / sizeof(dyn[0]) && dyn[i].d_tag != DT_NULL; i++)
		if (dyn[i].d_tag == DT_DEBUG)
			r_debug = dyn[i].d_un.d_val;
	/* r_debug's r_map follows its int r_version, 8-aligned. */
	if (!r_debug || remote_read(pid, r_debug + 8, &r_map, sizeof(r_map)))
		return -1;
	for (addr = r_map; addr && n < MAX_MAPPINGS;) {
		struct lm_head lm = { 0 };
		char name[PATH_MAX];
		const struct elf_text *t;

		if (remote_read(pid, addr, &lm, sizeof(lm)))
			return -1;
		name[0] = '\0';
		/* A name ends within 256 bytes here; a longer one would be read on. */
		if (lm.l_name) {
			struct iovec local = { name, 256 }, remote = { (void *)(uintptr_t)lm.l_name, 256 };

			if (process_vm_readv(pid, &local, 1, &remote, 1, 0) <= 0)
				return -1;
			name[255] = '\0';
		}
		if (!name[0]) {
			/* The executable itself (its file known from the kernel). */
			starts[n++] = bias + exe->text_vaddr;
		} else if (!stat(name, &st) && (t = elf_text(name))) {
			starts[n++] = lm.l_addr + t->text_vaddr;
		}
		/* Else the vDSO ("linux-vdso.so.1", no file): the kernel says where it is. */
		addr = lm.l_next;
	}
	return n;
}

/* The first disagreement, for whoever reads the output. */
static void say_differ(const char *way, const uint64_t *got, int n_got, const uint64_t *check,
		       int n_check)
{
	fprintf(stderr, "vmaiter: %s found %d mappings, the check %d:", way, n_got, n_check);
	for (int i = 0; i < MAX_MAPPINGS && (i < n_got || i < n_check); i++)
		fprintf(stderr, " %" PRIx64 "/%" PRIx64, i < n_got ? got[i] : 0,
			i < n_check ? check[i] : 0);
	fprintf(stderr, "\n");
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double median_us(uint64_t *v, int n)
{
	uint64_t mid;

	if (!n)
		return 0;
	qsort(v, (size_t)n, sizeof(*v), cmp_u64);
	mid = v[n / 2];
	return (double)mid / 1000;
}

/* The iterator's file-backed mappings (the vDSO left out), sorted, into out; their count. */
static int iter_files(int n, uint64_t *out)
{
	int k = 0;

	for (int i = 0; i < n && i < MAX_MAPPINGS; i++)
		if (iter_rows[i].ino)
			out[k++] = iter_rows[i].start;
	qsort(out, (size_t)k, sizeof(*out), cmp_u64);
	return k;
}

int main(int argc, char **argv)
{
	static const char *const way_name[WAYS] = { "proc", "iterator", "loader" };
	static uint64_t wall[WAYS][MAX_CHILDREN], cpu[WAYS][MAX_CHILDREN];
	int children = argc > 2 ? atoi(argv[2]) : 200, n[WAYS] = { 0 }, found[WAYS] = { 0 };
	int settle_ms = argc > 3 ? atoi(argv[3]) : 20;
	int differ = 0, failed = 0;
	const struct elf_text *exe = elf_text("/bin/sleep");
	struct bpf_object *obj;
	struct bpf_program *prog;

	if (argc < 2 || children < WAYS || children > MAX_CHILDREN || settle_ms < 1 ||
	    settle_ms > 10000) {
		fprintf(stderr, "usage: vmaiter OBJECT [CHILDREN, %d..%d [SETTLE_MS, 1..10000]]\n",
			WAYS, MAX_CHILDREN);
		return 2;
	}
	if (!exe || !exe->dyn_size) {
		fprintf(stderr, "vmaiter: /bin/sleep: no dynamic section\n");
		return 1;
	}
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj || bpf_object__load(obj)) {
		fprintf(stderr, "vmaiter: %s: cannot load (%s)\n", argv[1], strerror(errno));
		return 1;
	}
	prog = bpf_object__find_program_by_name(obj, "bench_vmas");
	for (int i = 0; i < children && prog; i++) {
		uint64_t starts[MAX_MAPPINGS], check[MAX_MAPPINGS], bias = 0, w, c;
		int way = i % WAYS, got, again = -1;
		char *child_argv[] = { "sleep", "10", NULL };
		pid_t child;

		/*
		 * Not fork(): it would leave this process's pages copy-on-write,
		 * and each way would pay a fault for every page it then writes
		 * (its buffers, libbpf's heap), which the sampler never pays.
		 */
		if (posix_spawn(&child, "/bin/sleep", NULL, NULL, child_argv, environ))
			break;
		usleep((useconds_t)settle_ms * 1000);
		if (way == 2) {
			/* Untimed: where the executable is (the kernel would say), then cold again. */
			again = read_iter(prog, child, check);
			for (int k = 0; k < again && k < MAX_MAPPINGS; k++)
				if (!strcmp(iter_names[k], "sleep"))
					bias = iter_rows[k].start - exe->text_vaddr;
			again = iter_files(again, check);
		}
		usleep((useconds_t)settle_ms * 1000);
		w = clock_ns(CLOCK_MONOTONIC);
		c = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		got = way == 2 ? (bias ? read_loader(child, exe, bias, starts) : -1)
		      : way ? read_iter(prog, child, starts)
			    : read_proc(child, starts);
		cpu[way][n[way]] = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c;
		wall[way][n[way]] = clock_ns(CLOCK_MONOTONIC) - w;
		if (got < 0) {
			failed++;
		} else {
			n[way]++;
			found[way] = got;
			if (way == 1)
				again = read_proc(child, check);
			else if (way == 2)
				qsort(starts, (size_t)got, sizeof(*starts), cmp_u64);
			if (way && (again != got ||
			    memcmp(starts, check, sizeof(starts[0]) *
				   (size_t)(got < MAX_MAPPINGS ? got : MAX_MAPPINGS)))) {
				if (!differ++)
					say_differ(way_name[way], starts, got, check, again);
			}
		}
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	printf("way       wall_us  cpu_us  mappings  reads\n");
	for (int k = 0; k < WAYS; k++)
		printf("%-8s %8.2f %7.2f  %8d  %5d\n", way_name[k], median_us(wall[k], n[k]),
		       median_us(cpu[k], n[k]), found[k], n[k]);
	printf("failed %d, reads that the check contradicted %d\n", failed, differ);
	bpf_object__close(obj);
	return failed || differ || !n[0] || !n[1] || !n[2];
}
