/*
 * target: the one door to the files of a profiled process.
 *
 * Every file the profiler opens on behalf of a process it samples is one
 * that process may control: its executable and libraries (the mapping's
 * path can be a symlink, a FIFO or a device by the time we look), their
 * separate debug files, its JIT perf map, and (next) the .eh_frame of the
 * same ELF files. The profiler runs as root, usually inside collectd, so
 * such an open must never block, never follow a path out of the
 * process's root, and never read more than a bound. This module does
 * every such open, the same way:
 *
 *   1. resolve without opening: O_PATH, inside the process's root
 *      (openat2 RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS), or through
 *      /proc/PID/map_files/ (the kernel's own link to the mapped file);
 *   2. fstat: a regular file only, no bigger than the size bound, and
 *      the device and inode the mapping names, when known;
 *   3. only then open it read-only, through /proc/self/fd/N.
 *
 * What it refuses is counted by cause, for the CLI's summary and the
 * plugin's health metrics. A struct target belongs to one symbolizer and
 * is used by one thread at a time; only target_progress() may be called
 * from another thread.
 */
#ifndef EBPROF_SYMBOLIZER_TARGET_H
#define EBPROF_SYMBOLIZER_TARGET_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

struct procmaps_mapping;

/*
 * Files above this size are not opened for a symbol table: the largest
 * ELF file on our Debian 12 test host is 517 MiB (a CUDA library), and a
 * sparse file that claims gigabytes costs time to read even when its
 * sections are bounded.
 */
#define TARGET_DEFAULT_MAX_FILE_SIZE (4ULL << 30)

/* Why a file was not opened. The return value of target_open*() says it too. */
enum target_cause {
	TARGET_NOT_REGULAR,  /* a FIFO, device, socket, directory or symlink: -EINVAL */
	TARGET_MISMATCH,     /* not the device and inode the mapping names: -ESTALE */
	TARGET_OUTSIDE_ROOT, /* the path leads out of the process's root: -EXDEV */
	TARGET_TOO_LARGE,    /* bigger than the size bound: -EFBIG */
	TARGET_NO_FDS,	     /* out of file descriptors: -EMFILE or -ENFILE */
	TARGET_PERMISSION,   /* -EACCES or -EPERM */
	TARGET_GONE,	     /* the file or its process no longer exists: -ENOENT */
	TARGET_STALLED,	     /* interrupted because it stalled the profiler: -EINTR */
	TARGET_OTHER,	     /* any other error (-EIO, -ENAMETOOLONG...) */
	TARGET_CAUSES,
};

struct target_config {
	const char *proc_root;	/* "/proc" unless a test points elsewhere */
	uint64_t max_file_size; /* bytes; 0: TARGET_DEFAULT_MAX_FILE_SIZE */
};

struct target;

/* Returns NULL when out of memory. The caller frees it with target_free(). */
struct target *target_new(const struct target_config *config);

void target_free(struct target *t);

/* An open file: fd is read-only and close-on-exec, st is its fstat. */
struct target_file {
	int fd;
	struct stat st;
};

/* Closes f->fd (if open) and marks f closed. */
void target_file_close(struct target_file *f);

/* A file's identity as /proc/PID/maps gives it. */
struct target_id {
	uint32_t dev_major, dev_minor;
	uint64_t inode;
};

/* target_path.flags */
#define TARGET_QUIET 1u	    /* a missing file is an answer, not a refusal: not counted */
#define TARGET_NOFOLLOW 2u  /* a symlink as the last component is refused (not regular) */
#define TARGET_ANY_SIZE 4u  /* no size bound: the caller reads a bounded part */
#define TARGET_UNCOUNTED 8u /* the caller counts refusals itself (target_count) */
#define TARGET_PATH_ONLY 16u /* checked, not opened: fd is the O_PATH descriptor */

struct target_path {
	/*
	 * The directory the path is resolved in as if it were "/": the
	 * process's "/proc/PID/root". NULL: our own root, for a path in our
	 * own mount namespace (then magic links are still refused).
	 */
	const char *root;
	const char *path;
	const struct target_id *id; /* NULL: any regular file */
	unsigned int flags;
};

/*
 * Opens p->path as the top of this file says. Returns 0 and fills *out
 * (the caller closes it with target_file_close()), or a negative errno
 * that target_cause_of() maps to its cause; the refusal is counted unless
 * flags say otherwise. t may be NULL: nothing is counted, the default size
 * bound applies.
 */
int target_open(struct target *t, const struct target_path *p, struct target_file *out);

/*
 * Opens the file of mapping m of process tgid: through
 * /proc/PID/map_files/ (deleted files, other mount namespaces), else its
 * path inside /proc/PID/root, else its path in our own namespace; the
 * device and inode must be the mapping's every time. One refusal is
 * counted per call, for the most telling cause of the three tries.
 * Returns 0 or a negative errno as target_open().
 */
int target_open_mapping(struct target *t, uint32_t tgid, const struct procmaps_mapping *m,
			struct target_file *out);

/*
 * target_open_mapping() up to the check: *out holds the O_PATH descriptor
 * of the very file and its fstat, for a caller that may know the file by
 * its identity already and then need not open it (an open through
 * /proc/self/fd costs a path walk). target_file_reopen() opens it for
 * reading; target_file_close() drops it.
 */
int target_check_mapping(struct target *t, uint32_t tgid, const struct procmaps_mapping *m,
			 struct target_file *out);

/*
 * Replaces the O_PATH descriptor in f (from target_check_mapping()) by a
 * read-only one on the same inode. Returns 0, or a negative errno counted
 * as a refusal, f then closed.
 */
int target_file_reopen(struct target *t, struct target_file *f);

/* The cause of a return value of target_open*(); TARGET_OTHER for 0. */
enum target_cause target_cause_of(int err);

/* "not_regular", "mismatch", ...: the names of the health metrics. */
const char *target_cause_name(enum target_cause cause);

/* Counts one refusal, for a caller that opened with TARGET_UNCOUNTED. */
void target_count(struct target *t, enum target_cause cause);

/* Refusals by cause since target_new(). */
void target_stats(const struct target *t, uint64_t refused[TARGET_CAUSES]);

/*
 * A counter that moves while the holder of t works on files: every open,
 * and every chunk a long reader reports with target_tick(). Safe to read
 * from any thread: a watchdog tells a slow reader from a stuck one by it.
 */
uint64_t target_progress(const struct target *t);
void target_tick(struct target *t);

#endif
