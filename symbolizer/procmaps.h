/*
 * procmaps: a process's executable mappings, from /proc/PID/maps.
 *
 * The symbolizer needs, for a user address, the file it came from and the
 * file offset of the mapping, to find the ELF symbol table and translate
 * the address. Only executable mappings are kept, since sampled
 * instruction pointers only land there; they are sorted by start address.
 */
#ifndef EBPROF_SYMBOLIZER_PROCMAPS_H
#define EBPROF_SYMBOLIZER_PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct procmaps;

struct procmaps_mapping {
	uint64_t start, end; /* [start, end) in the process */
	uint64_t pgoff;	     /* file offset of start */
	uint32_t dev_major, dev_minor;
	uint64_t inode; /* 0: anonymous or special ([vdso], [heap]) */
	bool exec;
	bool deleted;	  /* the path ended in " (deleted)", now stripped */
	const char *path; /* "" when anonymous; "[vdso]" etc. as given */
	size_t path_len;
};

/*
 * Parses one maps line (with or without its newline) into *m. m->path
 * points into line and is not NUL-terminated there: use m->path_len.
 * Returns 0, or -EINVAL for a malformed line.
 */
int procmaps_parse_line(const char *line, struct procmaps_mapping *m);

/*
 * Reads a maps file ("/proc/PID/maps" or a test's copy) into *out, keeping
 * executable mappings: on /proc through the PROCMAP_QUERY ioctl when the
 * kernel has it (then the gate page, "[vsyscall]", is not listed; no
 * sample lands there), else its text. Returns 0 or a negative errno
 * (-ENOENT when the process is gone). The caller frees the result with
 * procmaps_free().
 */
int procmaps_load(const char *path, struct procmaps **out);

/*
 * procmaps_load() that never asks the ioctl when query is false: for a
 * kernel known to lack it (kfeat's KFEAT_PROCMAP_QUERY).
 */
int procmaps_load_opt(const char *path, bool query, struct procmaps **out);

/* procmaps_load_opt() of PROC_ROOT/TGID/maps ("/proc" or a test's copy of it). */
int procmaps_load_pid(const char *proc_root, uint32_t tgid, bool query, struct procmaps **out);

/*
 * One more owner of maps, which is never changed once loaded: each owner,
 * on any thread, lets go of it with procmaps_free(), and the last one
 * frees it. Returns maps (NULL stays NULL).
 */
struct procmaps *procmaps_ref(struct procmaps *maps);
/* Lets go of maps (NULL is fine): freed once no owner is left. */
void procmaps_free(struct procmaps *maps);

/* Mappings kept, sorted by start. */
size_t procmaps_count(const struct procmaps *maps);
/* The heap memory maps holds, in bytes; 0 for NULL. */
size_t procmaps_bytes(const struct procmaps *maps);

/* The i-th kept mapping; owned by maps (paths NUL-terminated here). */
const struct procmaps_mapping *procmaps_at(const struct procmaps *maps, size_t i);

/* Lines that did not parse. */
size_t procmaps_malformed(const struct procmaps *maps);

/*
 * The kept mapping holding addr, or NULL. *index (if not NULL) gets its
 * position, for callers that keep data per mapping.
 */
const struct procmaps_mapping *procmaps_find(const struct procmaps *maps, uint64_t addr,
					     size_t *index);

/* True for "[vdso]", "[heap]" and the like: not a file to open. */
bool procmaps_is_special(const struct procmaps_mapping *m);

/*
 * True for memory no file backs with code, where only a JIT runtime puts
 * instructions: anonymous mappings, named anonymous ones ("[anon:...]"),
 * memfd, /dev/zero, SysV shared memory and anonymous huge pages.
 */
bool procmaps_is_anon(const struct procmaps_mapping *m);

/*
 * True when a kept (so executable) mapping is anonymous in the sense of
 * procmaps_is_anon(): the process may run JIT code, and only then has a
 * JIT perf map anything to name.
 */
bool procmaps_has_anon(const struct procmaps *maps);

#endif
