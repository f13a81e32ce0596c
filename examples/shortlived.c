/*
 * shortlived: a workload of processes that exit before a profiler drains.
 *
 *   shortlived [--fork] [COUNT [MS]]      (defaults: 200 processes, 30 ms each)
 *
 * The parent, renamed "shortlived-loop", starts COUNT children one after
 * the other. Each child is a new process image (fork, then exec of this
 * binary), so its name is the binary's and its mappings are its own; it
 * burns MS milliseconds of CPU time in burn_NNN, NNN being its index
 * modulo 200, and exits. A profiler that reads a process's symbols only
 * when it drains finds every child gone and names none of them; the known
 * answer is that nearly every sample of the children is in a burn_NNN.
 *
 * With --fork, each child is a fork that does not exec, named
 * "shortlived-fork": its mappings are its parent's, which a profiler may
 * take rather than read them (ebprof's render/forkmaps). One child in
 * four maps a library its parent never had (zlib, by dlopen) and burns
 * its MS in zlib's crc32() instead: a fork whose mappings grew since.
 *
 * CPU time, not wall time: on a loaded host a child still burns its MS.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef uint64_t burn_fn(long ms);

static long cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/*
 * One function per index. The loop is in each function itself, so the
 * sampled instruction is in burn_NNN, not in a helper it calls. The
 * index's own constant makes every body different, so that GCC's
 * identical-code folding cannot merge them under one name. The clock is
 * read once per ~2 ms of work, so its own share of samples is tiny (and
 * those samples miss burn_NNN: libc's clock_gettime sets up no frame, so
 * a frame-pointer walk skips its caller).
 */
#define BURN_FN(n)                                                              \
	__attribute__((noinline)) static uint64_t burn_##n(long ms)             \
	{                                                                       \
		long end = cpu_ms() + ms;                                       \
		uint64_t x = 1##n;                                              \
		do {                                                            \
			for (int i = 0; i < 1000000; i++) {                     \
				x = x * 6364136223846793005ULL + 1##n##ULL;     \
				__asm__ volatile("" : "+r"(x));                 \
			}                                                       \
		} while (cpu_ms() < end);                                       \
		return x;                                                       \
	}
#define BURN_PTR(n) burn_##n,

#define TENS(F, p) F(p##0) F(p##1) F(p##2) F(p##3) F(p##4) F(p##5) F(p##6) F(p##7) F(p##8) F(p##9)
#define HUNDREDS(F, p)                                                          \
	TENS(F, p##0) TENS(F, p##1) TENS(F, p##2) TENS(F, p##3) TENS(F, p##4)   \
	TENS(F, p##5) TENS(F, p##6) TENS(F, p##7) TENS(F, p##8) TENS(F, p##9)

HUNDREDS(BURN_FN, 0)
HUNDREDS(BURN_FN, 1)

static burn_fn *const burners[] = { HUNDREDS(BURN_PTR, 0) HUNDREDS(BURN_PTR, 1) };
#define N_BURNERS (sizeof(burners) / sizeof(burners[0]))

static int parse(const char *s, long max, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(s, &end, 10);
	return errno || *end || end == s || *out < 0 || *out > max ? -1 : 0;
}

/* A --fork child's burn in a library mapped after the fork: in zlib's crc32(). */
static int burn_zlib(long ms)
{
	typedef unsigned long crc32_fn(unsigned long crc, const unsigned char *buf, unsigned int len);
	static unsigned char buf[65536];
	void *lib = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
	crc32_fn *crc32;
	unsigned long crc = 0;
	long end = cpu_ms() + ms;

	if (!lib) {
		fprintf(stderr, "shortlived: %s\n", dlerror());
		return 1;
	}
	*(void **)&crc32 = dlsym(lib, "crc32");
	if (!crc32) {
		fprintf(stderr, "shortlived: no crc32 in zlib\n");
		return 1;
	}
	memset(buf, 0x5a, sizeof(buf));
	do {
		/* 1 MiB a clock read, so that the clock's system call is a small share. */
		for (int i = 0; i < 16; i++)
			crc = crc32(crc, buf, sizeof(buf));
	} while (cpu_ms() < end);
	return crc == 1; /* 0: the result is used */
}

static int child(const char *index, const char *ms)
{
	long i, n;

	if (parse(index, LONG_MAX, &i) || parse(ms, 600000, &n))
		return 2;
	return burners[i % N_BURNERS](n) == 0; /* 0: the result is used */
}

int main(int argc, char **argv)
{
	char self[PATH_MAX], index[32];
	bool forks = argc > 1 && strcmp(argv[1], "--fork") == 0;
	const char *ms;
	long count = 200, n_ms;
	ssize_t len;

	if (argc == 4 && strcmp(argv[1], "--child") == 0)
		return child(argv[2], argv[3]);
	argc -= forks;
	argv += forks;
	ms = argc > 2 ? argv[2] : "30";
	if (argc > 3 || (argc > 1 && parse(argv[1], 1000000, &count)) ||
	    parse(ms, 600000, &n_ms)) {
		fprintf(stderr, "usage: shortlived [--fork] [COUNT [MS]]\n");
		return 2;
	}
	/* exec("/proc/self/exe") would name every child "exe": exec the file. */
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len < 0) {
		perror("shortlived: /proc/self/exe");
		return 1;
	}
	self[len] = '\0';
	prctl(PR_SET_NAME, "shortlived-loop");
	for (long i = 0; i < count; i++) {
		pid_t pid;
		int status;

		snprintf(index, sizeof(index), "%ld", i);
		pid = fork();
		if (pid < 0) {
			perror("shortlived: fork");
			return 1;
		}
		if (pid == 0 && forks) {
			prctl(PR_SET_NAME, "shortlived-fork");
			_exit(i % 4 == 3 ? burn_zlib(n_ms) : burners[i % N_BURNERS](n_ms) == 0);
		}
		if (pid == 0) {
			execl(self, argv[0], "--child", index, ms, (char *)NULL);
			_exit(127);
		}
		if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0) {
			fprintf(stderr, "shortlived: child %ld failed\n", i);
			return 1;
		}
	}
	return 0;
}
