/*
 * fuzz_file: the parsers that read files by path (kallsyms, maps, perf
 * maps) get the fuzz input through a real file. Each fuzzer process
 * writes into its own directory under /dev/shm (tmpfs: no disk I/O per
 * execution), made on first use and removed at exit.
 */
#ifndef EBPROF_TESTS_FUZZ_FILE_H
#define EBPROF_TESTS_FUZZ_FILE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Writes size bytes of data to the file called name in this process's
 * directory, replacing it, and puts its path in path (cap bytes). With
 * append set, adds to the end instead. Returns 0 or a negative errno.
 */
int fuzz_file_write(const char *name, const uint8_t *data, size_t size, char *path, size_t cap);
int fuzz_file_append(const char *name, const uint8_t *data, size_t size);

/* Removes the file called name, if there is one. */
void fuzz_file_remove(const char *name);

#endif
