/*
 * perfmap: read a JIT perf map incrementally.
 *
 * node keeps appending to its map as it compiles, so the file is read
 * from where the last read stopped, and only when stat() says it changed:
 * a drain costs one stat() per JIT process when nothing was compiled.
 * After each read the entries are sorted again by start address; an entry
 * written later replaces an earlier one at the same start.
 *
 * Trust is checked on the open file (fstat of the descriptor read), so
 * the file cannot be swapped between the check and the read. The open
 * never blocks: a FIFO planted under the name would otherwise hang the
 * drain forever. Inside a process's root, openat2(RESOLVE_IN_ROOT) keeps
 * "..", absolute symlinks and /proc magic links within that root.
 */
#include "symbolizer/perfmap.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

struct pentry {
	struct perfmap_symbol sym;
	size_t name_off;
	uint64_t seq; /* order written, so the newest wins at one start */
};

struct perfmap {
	char *root; /* NULL: path is resolved as usual */
	char *path;
	uid_t owner;
	struct pentry *entries;
	size_t nr, cap;
	char *pool;
	size_t pool_len, pool_cap;
	size_t malformed;
	size_t refused;
	bool refusing; /* the file as last seen was refused */
	uint64_t seq;
	/* What was read: the file's identity, and how far. */
	dev_t dev;
	ino_t ino;
	off_t consumed; /* bytes of complete lines read */
	off_t size;
	struct timespec mtime;
};

struct perfmap *perfmap_new(const char *root, const char *path, uid_t owner)
{
	struct perfmap *map = calloc(1, sizeof(*map));

	if (!map)
		return NULL;
	map->owner = owner;
	map->path = strdup(path);
	if (root)
		map->root = strdup(root);
	if (!map->path || (root && !map->root)) {
		perfmap_free(map);
		return NULL;
	}
	return map;
}

void perfmap_free(struct perfmap *map)
{
	if (!map)
		return;
	free(map->root);
	free(map->path);
	free(map->entries);
	free(map->pool);
	free(map);
}

static void reset(struct perfmap *map)
{
	map->nr = 0;
	map->pool_len = 0;
	map->consumed = 0;
}

static bool parse_hex(const char **s, uint64_t *value)
{
	const char *p = *s;
	uint64_t v = 0;
	int digits = 0;

	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	for (;; p++, digits++) {
		int d;

		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'F')
			d = *p - 'A' + 10;
		else
			break;
		if (digits == 16)
			return false;
		v = v << 4 | (uint64_t)d;
	}
	if (!digits)
		return false;
	*value = v;
	*s = p;
	return true;
}

/* Adds one line (without its newline); a malformed line is counted. */
static int add_line(struct perfmap *map, const char *line, size_t len)
{
	const char *s = line;
	uint64_t start, size;
	struct pentry *e;

	/* Each && stops at the first bad field, so s never passes the line's end. */
	if (!parse_hex(&s, &start) || *s++ != ' ' || !parse_hex(&s, &size) || *s++ != ' ' ||
	    s >= line + len || size > UINT64_MAX - start) {
		map->malformed++;
		return 0;
	}
	len -= (size_t)(s - line);
	if (len && s[len - 1] == '\r')
		len--;
	if (map->nr == map->cap) {
		size_t cap = map->cap ? map->cap * 2 : 256;
		struct pentry *entries = realloc(map->entries, cap * sizeof(*entries));

		if (!entries)
			return -ENOMEM;
		map->entries = entries;
		map->cap = cap;
	}
	if (map->pool_len + len + 1 > map->pool_cap) {
		size_t cap = map->pool_cap ? map->pool_cap * 2 : 4096;
		char *pool;

		while (cap < map->pool_len + len + 1)
			cap *= 2;
		pool = realloc(map->pool, cap);
		if (!pool)
			return -ENOMEM;
		map->pool = pool;
		map->pool_cap = cap;
	}
	e = &map->entries[map->nr++];
	e->sym.start = start;
	e->sym.size = size;
	e->name_off = map->pool_len;
	e->seq = map->seq++;
	memcpy(map->pool + map->pool_len, s, len);
	map->pool[map->pool_len + len] = '\0';
	map->pool_len += len + 1;
	return 0;
}

static int pentry_cmp(const void *a, const void *b)
{
	const struct pentry *x = a, *y = b;

	if (x->sym.start != y->sym.start)
		return x->sym.start < y->sym.start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Sorts, keeps the newest entry per start, and points names into the pool. */
static void finish(struct perfmap *map)
{
	size_t kept = 0;

	if (map->nr)
		qsort(map->entries, map->nr, sizeof(*map->entries), pentry_cmp);
	for (size_t i = 0; i < map->nr; i++) {
		if (i + 1 < map->nr && map->entries[i + 1].sym.start == map->entries[i].sym.start)
			continue;
		map->entries[kept] = map->entries[i];
		map->entries[kept].sym.name = map->pool + map->entries[kept].name_off;
		kept++;
	}
	map->nr = kept;
}

/*
 * Reads complete lines from map->consumed on. The pool keeps the names of
 * dropped duplicates until the next full re-read; that waste is bounded by
 * the file's size.
 */
static int read_from(struct perfmap *map, FILE *f)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int err = 0;

	if (fseeko(f, map->consumed, SEEK_SET))
		return -errno;
	while ((len = getline(&line, &cap, f)) > 0) {
		if (line[len - 1] != '\n')
			break; /* the writer is mid-line: read it next time */
		err = add_line(map, line, (size_t)len - 1);
		if (err)
			break;
		map->consumed += len;
	}
	free(line);
	finish(map);
	return err;
}

/* Opens the file read-only, never through a final symlink, never blocking. */
static int perfmap_open(const struct perfmap *map)
{
	const int flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
	struct open_how how = { .flags = flags,
				.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
	char path[8192];
	int dir, fd;

	if (!map->root)
		return open(map->path, flags);
	dir = open(map->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return -1;
	fd = (int)syscall(SYS_openat2, dir, map->path, &how, sizeof(how));
	close(dir);
	if (fd >= 0 || errno != ENOSYS)
		return fd;
	/* Kernels before 5.6: the final component is still not followed. */
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", map->root, map->path) >= sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return open(path, flags);
}

/*
 * perf's rule: a regular file of the process's user or root, writable by
 * no one else. A second hard link is refused too: no JIT makes one, and
 * it is how another user's (or root's) file would get this name.
 */
static bool perfmap_trusted(const struct perfmap *map, const struct stat *st)
{
	return S_ISREG(st->st_mode) && (st->st_uid == map->owner || st->st_uid == 0) &&
	       !(st->st_mode & (S_IWGRP | S_IWOTH)) && st->st_nlink == 1;
}

/* Drops what an untrusted file said; counts the refusal once per file state. */
static int perfmap_refuse(struct perfmap *map, const struct stat *st)
{
	bool same = st->st_dev == map->dev && st->st_ino == map->ino &&
		    st->st_mtim.tv_sec == map->mtime.tv_sec &&
		    st->st_mtim.tv_nsec == map->mtime.tv_nsec && st->st_size == map->size;

	if (!map->refusing || !same)
		map->refused++;
	map->refusing = true;
	reset(map);
	map->dev = st->st_dev;
	map->ino = st->st_ino;
	map->size = st->st_size;
	map->mtime = st->st_mtim;
	return -EPERM;
}

int perfmap_refresh(struct perfmap *map)
{
	struct stat st;
	FILE *f;
	int fd, err;

	fd = perfmap_open(map);
	if (fd < 0 && errno == ELOOP) {
		/* A symlink, or a path leaving the root: refused, counted once. */
		memset(&st, 0, sizeof(st));
		st.st_mode = S_IFLNK;
		return perfmap_refuse(map, &st);
	}
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return err;
	}
	if (!perfmap_trusted(map, &st)) {
		close(fd);
		return perfmap_refuse(map, &st);
	}
	f = fdopen(fd, "r");
	if (!f) {
		err = -errno;
		close(fd);
		return err;
	}
	err = 0;
	if (map->refusing) {
		/* Trusted now (fixed by its owner): read it whole. */
		map->refusing = false;
		map->ino = 0;
		map->dev = 0;
	}
	if (st.st_dev == map->dev && st.st_ino == map->ino && st.st_size == map->size &&
	    st.st_mtim.tv_sec == map->mtime.tv_sec && st.st_mtim.tv_nsec == map->mtime.tv_nsec)
		goto out;
	if (st.st_dev != map->dev || st.st_ino != map->ino || st.st_size < map->consumed)
		reset(map);
	map->dev = st.st_dev;
	map->ino = st.st_ino;
	map->size = st.st_size;
	map->mtime = st.st_mtim;
	err = read_from(map, f);
out:
	fclose(f);
	return err;
}

const struct perfmap_symbol *perfmap_lookup(const struct perfmap *map, uint64_t addr,
					    uint64_t *offset)
{
	size_t lo = 0, hi = map->nr;
	const struct perfmap_symbol *sym;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (map->entries[mid].sym.start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	sym = &map->entries[lo - 1].sym;
	if (addr - sym->start >= sym->size)
		return NULL;
	if (offset)
		*offset = addr - sym->start;
	return sym;
}

size_t perfmap_count(const struct perfmap *map)
{
	return map->nr;
}

size_t perfmap_malformed(const struct perfmap *map)
{
	return map->malformed;
}

size_t perfmap_refused(const struct perfmap *map)
{
	return map->refused;
}
