/*
 * syscalls: spends most of its time in the kernel, reading /dev/zero into a
 * large buffer, so that a profile shows named kernel frames (the read path
 * and the page-clearing copy) under read_zero_loop().
 *
 * The read is issued with an inline `syscall` instruction rather than
 * libc's read(): Debian's libc is built without frame pointers, so a
 * frame-pointer walk from inside read() would skip read_zero_loop.
 *
 * Usage: syscalls [SECONDS]   (default 6)
 */
#include <fcntl.h>
#include <sys/syscall.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* clang has no noclone, and clones nothing that noinline keeps out */
#ifdef __clang__
#define NOCLEVER __attribute__((noinline, used))
#else
#define NOCLEVER __attribute__((noinline, noclone, used))
#endif

static char buf[1 << 20];

NOCLEVER long read_zero_loop(int fd, int n)
{
	long total = 0;

	for (int i = 0; i < n; i++) {
		long r;

		__asm__ volatile("syscall"
				 : "=a"(r)
				 : "0"((long)SYS_read), "D"((long)fd), "S"(buf), "d"(sizeof(buf))
				 : "rcx", "r11", "memory");

		if (r < 0)
			return -1;
		total += r;
	}
	return total;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 6.0;
	double end = now() + seconds;
	int fd = open("/dev/zero", O_RDONLY);
	long total = 0;

	if (fd < 0) {
		perror("/dev/zero");
		return 1;
	}
	while (now() < end)
		total += read_zero_loop(fd, 16);
	printf("%ld\n", total & 1);
	close(fd);
	return 0;
}
