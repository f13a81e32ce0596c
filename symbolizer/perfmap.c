/*
 * perfmap: read a JIT perf map incrementally.
 *
 * node keeps appending to its map as it compiles, so the file is read
 * from where the last read stopped, and only when stat() says it changed:
 * a drain costs one stat() per JIT process when nothing was compiled.
 * After each read the entries are sorted again by start address; an entry
 * written later replaces an earlier one at the same start.
 *
 * The file is opened through the gate (target_open): never blocking (a
 * FIFO planted under the name would otherwise hang the drain forever), a
 * regular file only, resolved inside the process's root. Trust is then
 * checked on the open file (its fstat), so the file cannot be swapped
 * between the check and the read.
 *
 * Reading is bounded, with pread() into a buffer of its own: a line
 * longer than max_line (PERFMAP_MAX_LINE) is skipped to its newline (in later
 * refreshes if need be) and counted; each refresh reads at most
 * PERFMAP_MAX_READ bytes and leaves the rest for the next; a file is read
 * up to max_bytes in all, then no further until it is replaced.
 */
#include "bpf/grow.h"
#include "symbolizer/perfmap.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolizer/target.h"

#define PERFMAP_CHUNK (64 * 1024)

struct pentry {
	struct perfmap_symbol sym;
	size_t name_off;
	uint64_t seq; /* order written, so the newest wins at one start */
};

struct perfmap {
	char *root; /* NULL: path is resolved as usual */
	char *path;
	uid_t owner;
	struct target *gate;
	uint64_t max_bytes;
	size_t max_line;
	struct pentry *entries;
	size_t nr, cap;
	char *pool;
	size_t pool_len, pool_cap;
	size_t malformed;
	size_t too_long;
	size_t truncated;
	size_t refused;
	bool refusing; /* the file as last seen was refused */
	bool skipping; /* inside a line too long to keep, until its newline */
	bool pending;  /* the last refresh stopped at PERFMAP_MAX_READ */
	bool full;     /* max_bytes read: nothing more of this file */
	uint64_t seq;
	/* What was read: the file's identity, and how far. */
	dev_t dev;
	ino_t ino;
	off_t consumed; /* bytes of complete lines read */
	off_t size;
	struct timespec mtime;
};

struct perfmap *perfmap_new_with(const struct perfmap_config *config)
{
	struct perfmap *map = calloc(1, sizeof(*map));

	if (!map)
		return NULL;
	map->owner = config->owner;
	map->gate = config->gate;
	map->max_bytes = config->max_bytes ? config->max_bytes : PERFMAP_DEFAULT_MAX_BYTES;
	map->max_line = config->max_line && config->max_line < PERFMAP_MAX_LINE ? config->max_line
										: PERFMAP_MAX_LINE;
	map->path = strdup(config->path);
	if (config->root)
		map->root = strdup(config->root);
	if (!map->path || (config->root && !map->root)) {
		perfmap_free(map);
		return NULL;
	}
	return map;
}

struct perfmap *perfmap_new(const char *root, const char *path, uid_t owner)
{
	struct perfmap_config config = { .root = root, .path = path, .owner = owner };

	return perfmap_new_with(&config);
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
	map->skipping = false;
	map->pending = false;
	map->full = false;
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
	if (GROW_ARRAY(&map->entries, &map->cap, map->nr + 1, 256) ||
	    GROW_ARRAY(&map->pool, &map->pool_cap, map->pool_len + len + 1, 4096))
		return -ENOMEM;
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
 * Adds the complete lines at the start of buf (len bytes); returns how
 * many bytes they took (the rest is a line not ended yet), or -ENOMEM.
 */
static ssize_t add_lines(struct perfmap *map, const char *buf, size_t len)
{
	size_t used = 0;
	const char *nl;
	int err;

	while ((nl = memchr(buf + used, '\n', len - used))) {
		size_t line = (size_t)(nl - (buf + used));

		if (map->skipping) {
			map->skipping = false; /* the end of a line too long to keep */
		} else if (line > map->max_line) {
			map->too_long++;
			map->malformed++;
		} else {
			err = add_line(map, buf + used, line);
			if (err)
				return err;
		}
		used += line + 1;
	}
	return (ssize_t)used;
}

/* Reads no further in this file, counted once. */
static void read_no_further(struct perfmap *map)
{
	map->full = true;
	map->truncated++;
}

/*
 * Reads complete lines from map->consumed on, within the bounds (see the
 * top of this file). The pool keeps the names of dropped duplicates until
 * the next full re-read; that waste is bounded by max_bytes.
 */
static int read_from(struct perfmap *map, int fd)
{
	const size_t cap = map->max_line + PERFMAP_CHUNK;
	uint64_t budget = PERFMAP_MAX_READ;
	size_t len = 0;
	ssize_t got, used;
	char *buf;
	int err = 0;

	if (map->full)
		return 0;
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	map->pending = false;
	for (;;) {
		uint64_t left = map->max_bytes - ((uint64_t)map->consumed + len);
		size_t want = cap - len;

		if (!left) {
			read_no_further(map);
			break;
		}
		if (!budget) {
			map->pending = true;
			break;
		}
		want = want < left ? want : (size_t)left;
		want = want < budget ? want : (size_t)budget;
		got = pread(fd, buf + len, want, map->consumed + (off_t)len);
		if (got <= 0) {
			err = got < 0 ? -errno : 0;
			break;
		}
		target_tick(map->gate);
		budget -= (uint64_t)got;
		len += (size_t)got;
		used = add_lines(map, buf, len);
		if (used < 0) {
			err = (int)used;
			break;
		}
		if (!used && len > map->max_line) {
			/* No newline in a whole line's worth: skip to the next one. */
			if (!map->skipping) {
				map->too_long++;
				map->malformed++;
			}
			map->skipping = true;
			used = (ssize_t)len;
		}
		map->consumed += used;
		memmove(buf, buf + used, len - (size_t)used);
		len -= (size_t)used;
	}
	free(buf);
	finish(map);
	return err;
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

/*
 * Drops what an untrusted file said; counts the refusal once per file
 * state, by the cause the gate gives it.
 */
static int perfmap_refuse(struct perfmap *map, const struct stat *st, enum target_cause cause)
{
	bool same = st->st_dev == map->dev && st->st_ino == map->ino &&
		    st->st_mtim.tv_sec == map->mtime.tv_sec &&
		    st->st_mtim.tv_nsec == map->mtime.tv_nsec && st->st_size == map->size;

	if (!map->refusing || !same) {
		map->refused++;
		target_count(map->gate, cause);
	}
	map->refusing = true;
	reset(map);
	map->dev = st->st_dev;
	map->ino = st->st_ino;
	map->size = st->st_size;
	map->mtime = st->st_mtim;
	return -EPERM;
}

/*
 * Opens the file through the gate: never through a final symlink, never
 * blocking, inside the process's root. Returns 0, -ENOENT (no file) or
 * another error of the gate's, or -EPERM (refused: a symlink, a FIFO, a
 * path out of the root; counted as perfmap_refuse() does).
 */
static int perfmap_open(struct perfmap *map, struct target_file *f)
{
	struct target_path p = {
		.root = map->root,
		.path = map->path,
		.flags = TARGET_NOFOLLOW | TARGET_ANY_SIZE | TARGET_UNCOUNTED,
	};
	enum target_cause cause;
	struct stat st;
	int err = target_open(map->gate, &p, f);

	if (!err)
		return 0;
	cause = target_cause_of(err);
	switch (cause) {
	case TARGET_GONE:
	case TARGET_OTHER:
		return err;
	case TARGET_NO_FDS:
	case TARGET_STALLED:
		target_count(map->gate, cause);
		return err;
	default:
		/* Remembered by cause, so a file that stays refused counts once. */
		memset(&st, 0, sizeof(st));
		st.st_ino = (ino_t)cause + 1;
		return perfmap_refuse(map, &st, cause);
	}
}

int perfmap_refresh(struct perfmap *map)
{
	struct target_file f;
	const struct stat *st = &f.st;
	int err;

	err = perfmap_open(map, &f);
	if (err)
		return err;
	if (!perfmap_trusted(map, st)) {
		target_file_close(&f);
		return perfmap_refuse(map, &f.st, TARGET_PERMISSION);
	}
	if (map->refusing) {
		/* Trusted now (fixed by its owner): read it whole. */
		map->refusing = false;
		map->ino = 0;
		map->dev = 0;
	}
	err = 0;
	if (st->st_dev == map->dev && st->st_ino == map->ino && st->st_size == map->size &&
	    st->st_mtim.tv_sec == map->mtime.tv_sec &&
	    st->st_mtim.tv_nsec == map->mtime.tv_nsec && !map->pending)
		goto out;
	if (st->st_dev != map->dev || st->st_ino != map->ino || st->st_size < map->consumed)
		reset(map);
	map->dev = st->st_dev;
	map->ino = st->st_ino;
	map->size = st->st_size;
	map->mtime = st->st_mtim;
	err = read_from(map, f.fd);
out:
	target_file_close(&f);
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

size_t perfmap_bytes(const struct perfmap *map)
{
	if (!map)
		return 0;
	return sizeof(*map) + map->cap * sizeof(*map->entries) + map->pool_cap +
	       (map->root ? strlen(map->root) + 1 : 0) + (map->path ? strlen(map->path) + 1 : 0);
}

size_t perfmap_count(const struct perfmap *map)
{
	return map->nr;
}

size_t perfmap_malformed(const struct perfmap *map)
{
	return map->malformed;
}

size_t perfmap_too_long(const struct perfmap *map)
{
	return map->too_long;
}

size_t perfmap_truncated(const struct perfmap *map)
{
	return map->truncated;
}

size_t perfmap_refused(const struct perfmap *map)
{
	return map->refused;
}
