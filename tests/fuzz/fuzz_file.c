/*
 * fuzz_file: see fuzz_file.h. The directory name holds the PID, so that
 * parallel fuzzers (-jobs=N) and the smoke test never share a file.
 */
#include "tests/fuzz/fuzz_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char fuzz_dir[64];

static void fuzz_dir_remove(void)
{
	static const char *const names[] = { "kallsyms", "modules", "maps", "perf.map" };
	char path[128];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", fuzz_dir, names[i]);
		unlink(path);
	}
	rmdir(fuzz_dir);
}

static int fuzz_dir_get(void)
{
	if (fuzz_dir[0])
		return 0;
	snprintf(fuzz_dir, sizeof(fuzz_dir), "/dev/shm/ebprof-fuzz.%d", (int)getpid());
	if (mkdir(fuzz_dir, 0700) && errno != EEXIST) {
		fuzz_dir[0] = '\0';
		return -errno;
	}
	atexit(fuzz_dir_remove);
	return 0;
}

static int write_all(int fd, const uint8_t *data, size_t size)
{
	while (size) {
		ssize_t n = write(fd, data, size);

		if (n < 0)
			return -errno;
		data += n;
		size -= (size_t)n;
	}
	return 0;
}

static int put(const char *name, const uint8_t *data, size_t size, int flags, char *path,
	       size_t cap)
{
	char local[128];
	int fd, err;

	err = fuzz_dir_get();
	if (err)
		return err;
	if (!path) {
		path = local;
		cap = sizeof(local);
	}
	if ((size_t)snprintf(path, cap, "%s/%s", fuzz_dir, name) >= cap)
		return -ENAMETOOLONG;
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | flags, 0600);
	if (fd < 0)
		return -errno;
	err = write_all(fd, data, size);
	close(fd);
	return err;
}

int fuzz_file_write(const char *name, const uint8_t *data, size_t size, char *path, size_t cap)
{
	return put(name, data, size, O_TRUNC, path, cap);
}

int fuzz_file_append(const char *name, const uint8_t *data, size_t size)
{
	return put(name, data, size, O_APPEND, NULL, 0);
}

void fuzz_file_remove(const char *name)
{
	char path[128];

	if (fuzz_dir_get())
		return;
	snprintf(path, sizeof(path), "%s/%s", fuzz_dir, name);
	unlink(path);
}
