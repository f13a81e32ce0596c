/*
 * perfmap: names for JIT code, from /tmp/perf-PID.map.
 *
 * JIT runtimes (node --perf-basic-prof, the JVM with an agent, LuaJIT...)
 * write one line per compiled function, "START SIZE name" in hex, and keep
 * appending while they run. The symbolizer asks this module for addresses
 * in anonymous executable memory, where no ELF file can name them.
 *
 * The file sits in a world-writable directory, so anyone can write
 * /tmp/perf-PID.map for a PID they do not own and put their names on its
 * frames. As perf does, a file is read only when it is a regular file
 * owned by the process's user or by root and writable by no one else
 * (and, stricter than perf, with one link); it is opened without
 * following a final symlink, and inside the process's own root (a
 * container's /tmp) no symlink can lead out of that root.
 *
 * The file is the process's to write, so what is read of it is bounded:
 * a line longer than PERFMAP_MAX_LINE is skipped (a 3 GiB file without a
 * newline used to be read into one line), at most PERFMAP_MAX_READ bytes
 * are read per refresh (the rest at the next ones), and at most
 * max_bytes of one file in all (its entries are held in memory).
 */
#ifndef EBPROF_SYMBOLIZER_PERFMAP_H
#define EBPROF_SYMBOLIZER_PERFMAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct perfmap;
struct target;

/* A JIT's longest names (C++ templates in .NET maps) are a few KiB. */
#define PERFMAP_MAX_LINE (64 * 1024)
#define PERFMAP_MAX_READ (16u << 20)		 /* bytes read per refresh */
#define PERFMAP_DEFAULT_MAX_BYTES (256ULL << 20) /* bytes of one file read in all */

struct perfmap_config {
	const char *root; /* see perfmap_new() */
	const char *path;
	uid_t owner;
	struct target *gate; /* the gate (target.h) counts refusals by cause; NULL: none */
	uint64_t max_bytes;  /* 0: PERFMAP_DEFAULT_MAX_BYTES */
	size_t max_line;     /* bytes of one line; 0: PERFMAP_MAX_LINE, and at most that */
};

struct perfmap_symbol {
	uint64_t start, size;
	const char *name; /* owned by the map; valid until the next refresh */
};

/*
 * A map for the file at path, empty until perfmap_refresh() reads it.
 * root: NULL, or a directory (the process's "/proc/PID/root") that path
 * is resolved inside, as if it were "/". owner: the user the file must
 * belong to (the process's effective uid), root's files being accepted
 * too. Returns NULL when out of memory. The caller frees it with
 * perfmap_free().
 */
struct perfmap *perfmap_new(const char *root, const char *path, uid_t owner);

/* As perfmap_new(), with a gate and a bound of its own. */
struct perfmap *perfmap_new_with(const struct perfmap_config *config);

void perfmap_free(struct perfmap *map);

/*
 * Reads what the runtime appended since the last call, if the file's size
 * or mtime changed; reads it whole again if it was replaced or shrank.
 * A line not yet ended by a newline is left for the next call (the writer
 * may be in the middle of it). Returns 0, -ENOENT when there is no file
 * (the entries read before are kept), -EPERM when the file is not to be
 * trusted (see the top of this file: every entry is dropped, and the
 * refusal counted once until the file changes), or another negative errno.
 */
int perfmap_refresh(struct perfmap *map);

/*
 * The entry holding addr ([start, start + size)), or NULL. When entries
 * start at the same address the one written last wins: the runtime reused
 * that memory. *offset (if not NULL) gets addr - start.
 */
const struct perfmap_symbol *perfmap_lookup(const struct perfmap *map, uint64_t addr,
					    uint64_t *offset);

/* Entries held. */
size_t perfmap_count(const struct perfmap *map);
/* The heap memory map holds, in bytes (entries and names as allocated); 0 for NULL. */
size_t perfmap_bytes(const struct perfmap *map);

/* Lines skipped because they did not parse, since the map was created. */
size_t perfmap_malformed(const struct perfmap *map);

/* Of those, lines longer than max_line (PERFMAP_MAX_LINE). */
size_t perfmap_too_long(const struct perfmap *map);

/* Files read up to max_bytes and no further (counted once per file). */
size_t perfmap_truncated(const struct perfmap *map);

/*
 * Files refused since the map was created: a refused file counts once,
 * however often it is looked at, and again only once it has changed
 * (another owner, mode or file).
 */
size_t perfmap_refused(const struct perfmap *map);

#endif
