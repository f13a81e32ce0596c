/*
 * perfmap: read a JIT perf map incrementally.
 *
 * node keeps appending to its map as it compiles, so the file is read
 * from where the last read stopped, and only when stat() says it changed:
 * a drain costs one stat() per JIT process when nothing was compiled.
 * After each read the entries are sorted again by start address; an entry
 * written later replaces an earlier one at the same start.
 */
#include "symbolizer/perfmap.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct pentry {
	struct perfmap_symbol sym;
	size_t name_off;
	uint64_t seq; /* order written, so the newest wins at one start */
};

struct perfmap {
	char *path;
	struct pentry *entries;
	size_t nr, cap;
	char *pool;
	size_t pool_len, pool_cap;
	size_t malformed;
	uint64_t seq;
	/* What was read: the file's identity, and how far. */
	dev_t dev;
	ino_t ino;
	off_t consumed; /* bytes of complete lines read */
	off_t size;
	struct timespec mtime;
};

struct perfmap *perfmap_new(const char *path)
{
	struct perfmap *map = calloc(1, sizeof(*map));

	if (!map)
		return NULL;
	map->path = strdup(path);
	if (!map->path) {
		free(map);
		return NULL;
	}
	return map;
}

void perfmap_free(struct perfmap *map)
{
	if (!map)
		return;
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

int perfmap_refresh(struct perfmap *map)
{
	struct stat st;
	FILE *f;
	int err;

	f = fopen(map->path, "re");
	if (!f)
		return -errno;
	if (fstat(fileno(f), &st)) {
		err = -errno;
		goto out;
	}
	err = 0;
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
