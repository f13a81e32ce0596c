/*
 * procmaps: parse /proc/PID/maps.
 *
 * A line reads "start-end perms offset major:minor inode   path". The
 * path is everything after the padding that follows the inode, so it may
 * hold spaces; the kernel appends " (deleted)" when the file was unlinked
 * (the process still runs the old file: we open it through map_files/),
 * and names special mappings "[vdso]", "[heap]", "[stack]". Anonymous
 * mappings, where JIT code lives, have no path at all.
 *
 * Reading maps is most of what a new process costs the profiler, so on
 * /proc we ask the kernel instead (the PROCMAP_QUERY ioctl, Linux 6.11)
 * for the executable mappings alone, as binary fields, and read the text
 * only where that ioctl is missing. Both give the same mappings.
 */
#include "bpf/grow.h"
#include "symbolizer/procmaps.h"
#include "symbolizer/procmaps_query.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/vfs.h>
#include <unistd.h>

#define DELETED_SUFFIX " (deleted)"
/* One read() of maps: many lines at once, and more than the longest line. */
#define READ_SIZE (64 * 1024)

struct procmaps {
	struct procmaps_mapping *mappings;
	size_t nr;
	size_t malformed;
	bool anon; /* a kept mapping is anonymous (see procmaps_is_anon) */
	char *pool; /* every kept path, NUL-terminated */
	size_t bytes; /* heap memory held: procmaps_bytes() */
	unsigned int refs; /* procmaps_ref(), less procmaps_free(); atomic */
};

/* Reads a hex number ending at the character stop; advances *s past stop. */
static int read_hex(const char **s, char stop, uint64_t *value)
{
	const char *p = *s;
	uint64_t v = 0;

	if (!*p || *p == stop)
		return -EINVAL;
	for (; *p && *p != stop; p++) {
		int digit;

		if (*p >= '0' && *p <= '9')
			digit = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			digit = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'F')
			digit = *p - 'A' + 10;
		else
			return -EINVAL;
		if (v >> 60)
			return -EINVAL;
		v = v << 4 | (uint64_t)digit;
	}
	if (*p != stop)
		return -EINVAL;
	*value = v;
	*s = p + 1;
	return 0;
}

static int read_dec(const char **s, uint64_t *value)
{
	const char *p = *s;
	uint64_t v = 0;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	*value = v;
	*s = p;
	return 0;
}

int procmaps_parse_line(const char *line, struct procmaps_mapping *m)
{
	const char *s = line;
	uint64_t major, minor;
	size_t len;

	memset(m, 0, sizeof(*m));
	if (read_hex(&s, '-', &m->start) || read_hex(&s, ' ', &m->end) || m->end <= m->start)
		return -EINVAL;
	if (strlen(s) < 5 || s[4] != ' ')
		return -EINVAL;
	m->exec = s[2] == 'x';
	s += 5;
	if (read_hex(&s, ' ', &m->pgoff) || read_hex(&s, ':', &major) ||
	    read_hex(&s, ' ', &minor) || read_dec(&s, &m->inode))
		return -EINVAL;
	if (major > UINT32_MAX || minor > UINT32_MAX)
		return -EINVAL;
	m->dev_major = (uint32_t)major;
	m->dev_minor = (uint32_t)minor;
	if (*s && *s != ' ' && *s != '\n')
		return -EINVAL;
	while (*s == ' ')
		s++;
	len = strcspn(s, "\n");
	if (len >= sizeof(DELETED_SUFFIX) - 1 &&
	    !memcmp(s + len - (sizeof(DELETED_SUFFIX) - 1), DELETED_SUFFIX,
		    sizeof(DELETED_SUFFIX) - 1)) {
		m->deleted = true;
		len -= sizeof(DELETED_SUFFIX) - 1;
	}
	m->path = s;
	m->path_len = len;
	return 0;
}

static int mapping_cmp(const void *a, const void *b)
{
	const struct procmaps_mapping *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * A list being loaded: room for mappings, and where each path sits in the
 * pool. Its arrays are scratch, freed once the list is packed (pack()).
 */
struct builder {
	struct procmaps_mapping *mappings;
	size_t nr, cap;
	size_t *path_offs;
	char *pool;
	size_t pool_len, pool_cap;
	size_t malformed;
	bool anon;
};

/* Keeps mapping m if it is executable; its path goes into the pool. */
static int keep(struct builder *b, const struct procmaps_mapping *m)
{
	size_t cap = b->cap;

	if (!m->exec)
		return 0;
	/* Two arrays of one capacity: b->cap moves only once both hold it. */
	if (GROW_ARRAY(&b->mappings, &cap, b->nr + 1, 32) ||
	    GROW_ARRAY(&b->path_offs, &b->cap, b->nr + 1, 32) ||
	    GROW_ARRAY(&b->pool, &b->pool_cap, b->pool_len + m->path_len + 1, 4096))
		return -ENOMEM;
	memcpy(b->pool + b->pool_len, m->path, m->path_len);
	b->pool[b->pool_len + m->path_len] = '\0';
	b->path_offs[b->nr] = b->pool_len;
	b->pool_len += m->path_len + 1;
	b->mappings[b->nr] = *m;
	if (procmaps_is_anon(m))
		b->anon = true;
	b->nr++;
	return 0;
}

/* Empties b for a second attempt, keeping its arrays. */
static void builder_reset(struct builder *b)
{
	b->nr = 0;
	b->pool_len = 0;
	b->malformed = 0;
	b->anon = false;
}

static void builder_free(struct builder *b)
{
	free(b->mappings);
	free(b->path_offs);
	free(b->pool);
}

/*
 * The loaded list in one block of its exact size: the header, the
 * mappings sorted by start, then their paths. A list is kept for as long
 * as its process lives, hundreds at once on a busy host: the builder's
 * capacities (6 KiB for a handful of mappings) would sit idle in each, and
 * every new process would take fresh pages, whose faults cost more than
 * the copy.
 */
static struct procmaps *pack(const struct builder *b)
{
	size_t head = sizeof(struct procmaps), list = b->nr * sizeof(*b->mappings);
	struct procmaps *maps = malloc(head + list + b->pool_len);

	if (!maps)
		return NULL;
	*maps = (struct procmaps){
	    .mappings = (struct procmaps_mapping *)(maps + 1),
	    .nr = b->nr,
	    .malformed = b->malformed,
	    .anon = b->anon,
	    .pool = (char *)(maps + 1) + list,
	    .bytes = head + list + b->pool_len,
	    .refs = 1,
	};
	if (b->pool_len)
		memcpy(maps->pool, b->pool, b->pool_len);
	for (size_t i = 0; i < b->nr; i++) {
		maps->mappings[i] = b->mappings[i];
		maps->mappings[i].path = maps->pool + b->path_offs[i];
	}
	if (maps->nr)
		qsort(maps->mappings, maps->nr, sizeof(*maps->mappings), mapping_cmp);
	return maps;
}

#define QUERY_NAME_MAX (PATH_MAX + 64)

/*
 * Writes name as maps would show it into out (4 * len + 1 bytes): a
 * newline in a path is "\012" there. Returns the length written.
 */
static size_t escape_name(const char *name, size_t len, char *out)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		if (name[i] == '\n') {
			memcpy(out + n, "\\012", 4);
			n += 4;
		} else {
			out[n++] = name[i];
		}
	}
	out[n] = '\0';
	return n;
}

/*
 * Asks the kernel for the executable mappings one at a time with the
 * PROCMAP_QUERY ioctl on the open maps file: no text to format and
 * parse, and the other mappings are skipped in the kernel. For a shell's
 * 44 mappings that measured 11 us against 33 us for reading the text,
 * and reading maps is most of what a new process costs us. The gate page
 * ([vsyscall]) is no VMA and is not reported: the kernel emulates calls
 * there, so no sample lands in it. Returns 0, or a negative errno (-ENOTTY
 * without the ioctl, a test's plain file included): the caller then
 * reads the text.
 */
static int load_queried(int fd, struct builder *b)
{
	/* The name as the kernel gives it, then as maps would show it (4 bytes a newline). */
	char *name = malloc(QUERY_NAME_MAX * 5 + 1), *escaped;
	uint64_t addr = 0;
	int err = 0;

	if (!name)
		return -ENOMEM;
	escaped = name + QUERY_NAME_MAX;
	for (;;) {
		struct maps_query q = {
		    .size = sizeof(q),
		    .query_flags = MAPS_QUERY_COVERING_OR_NEXT | MAPS_QUERY_EXECUTABLE,
		    .query_addr = addr,
		    .vma_name_size = QUERY_NAME_MAX,
		    .vma_name_addr = (uintptr_t)name,
		};
		struct procmaps_mapping m = {.exec = true};
		size_t len;

		if (ioctl(fd, MAPS_QUERY, &q)) {
			/* ENOENT: no mapping at or above addr, the end. */
			err = errno == ENOENT ? 0 : -errno;
			break;
		}
		len = q.vma_name_size ? strnlen(name, q.vma_name_size) : 0;
		if (len >= sizeof(DELETED_SUFFIX) - 1 &&
		    !memcmp(name + len - (sizeof(DELETED_SUFFIX) - 1), DELETED_SUFFIX,
			    sizeof(DELETED_SUFFIX) - 1)) {
			m.deleted = true;
			len -= sizeof(DELETED_SUFFIX) - 1;
		}
		m.start = q.vma_start;
		m.end = q.vma_end;
		m.pgoff = q.vma_offset;
		m.dev_major = q.dev_major;
		m.dev_minor = q.dev_minor;
		m.inode = q.inode;
		m.path = escaped;
		m.path_len = escape_name(name, len, escaped);
		err = keep(b, &m);
		if (err || q.vma_end <= addr)
			break;
		addr = q.vma_end;
	}
	free(name);
	return err;
}

/* Reads the text of maps from fd, keeping executable mappings and counting malformed lines. */
static int load_text(int fd, struct builder *b)
{
	char *buf = malloc(READ_SIZE);
	size_t len = 0;
	bool eof = false, skipping = false;
	int err = 0;

	if (!buf)
		return -ENOMEM;
	/*
	 * Big read()s straight into our buffer: the kernel fills as much of it
	 * as it can per call, where stdio would ask a page at a time. A line
	 * (its path up to PATH_MAX) always fits: READ_SIZE is bigger.
	 */
	while (!eof || len) {
		char *line = buf, *newline;
		ssize_t got;

		if (!eof) {
			do
				got = read(fd, buf + len, READ_SIZE - 1 - len);
			while (got < 0 && errno == EINTR);
			if (got < 0) {
				err = -errno;
				break;
			}
			eof = !got;
			len += (size_t)got;
		}
		buf[len] = '\0';
		while ((newline = memchr(line, '\n', len - (size_t)(line - buf))) ||
		       (eof && line < buf + len)) {
			struct procmaps_mapping m;

			if (newline)
				*newline = '\0';
			if (skipping) {
				skipping = false;
			} else if (procmaps_parse_line(line, &m)) {
				b->malformed++;
			} else {
				err = keep(b, &m);
				if (err)
					goto out;
			}
			line = newline ? newline + 1 : buf + len;
		}
		len -= (size_t)(line - buf);
		memmove(buf, line, len);
		if (!eof && len == READ_SIZE - 1) {
			/* A line longer than any the kernel writes: not maps. Skip to its end. */
			if (!skipping)
				b->malformed++;
			skipping = true;
			len = 0;
		}
	}
out:
	free(buf);
	return err;
}

int procmaps_load(const char *path, struct procmaps **out)
{
	return procmaps_load_opt(path, true, out);
}

/* Reads the maps file open at fd into *out (fd stays open): 0 or a negative errno. */
static int load_fd(int fd, bool query, struct procmaps **out)
{
	struct builder b = {0};
	struct statfs fs;
	int err;

	*out = NULL;
	/* Only /proc answers the ioctl: a test's copy of maps is never asked. */
	err = -ENOTTY;
	if (query && !fstatfs(fd, &fs) && fs.f_type == PROC_SUPER_MAGIC)
		err = load_queried(fd, &b);
	if (err && err != -ENOMEM) {
		/* No ioctl (or it failed part way): start again from the text. */
		builder_reset(&b);
		err = load_text(fd, &b);
	}
	if (!err) {
		*out = pack(&b);
		err = *out ? 0 : -ENOMEM;
	}
	builder_free(&b);
	return err;
}

int procmaps_load_opt(const char *path, bool query, struct procmaps **out)
{
	int fd, err;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = load_fd(fd, query, out);
	close(fd);
	return err;
}

int procmaps_load_pid(const char *proc_root, uint32_t tgid, bool query, struct procmaps **out)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%" PRIu32 "/maps", proc_root, tgid);
	return procmaps_load_opt(path, query, out);
}

struct procmaps *procmaps_ref(struct procmaps *maps)
{
	if (maps)
		__atomic_add_fetch(&maps->refs, 1, __ATOMIC_RELAXED);
	return maps;
}

void procmaps_free(struct procmaps *maps)
{
	/* Acquire-release: the last owner's free comes after every other's use. */
	if (maps && !__atomic_sub_fetch(&maps->refs, 1, __ATOMIC_ACQ_REL))
		free(maps);
}

size_t procmaps_bytes(const struct procmaps *maps)
{
	return maps ? maps->bytes : 0;
}

size_t procmaps_count(const struct procmaps *maps)
{
	return maps->nr;
}

const struct procmaps_mapping *procmaps_at(const struct procmaps *maps, size_t i)
{
	return i < maps->nr ? &maps->mappings[i] : NULL;
}

size_t procmaps_malformed(const struct procmaps *maps)
{
	return maps->malformed;
}

const struct procmaps_mapping *procmaps_find(const struct procmaps *maps, uint64_t addr,
					     size_t *index)
{
	size_t lo = 0, hi = maps->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (maps->mappings[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= maps->mappings[lo - 1].end)
		return NULL;
	if (index)
		*index = lo - 1;
	return &maps->mappings[lo - 1];
}

bool procmaps_is_special(const struct procmaps_mapping *m)
{
	return m->path_len && m->path[0] == '[';
}

/*
 * Memory no file backs with code: where only a JIT runtime can have put
 * instructions. Anonymous mappings, named ones ("[anon:V8 code]", set
 * with prctl(PR_SET_VMA_ANON_NAME), and "[anon_shmem:...]"), and the
 * file-like names of anonymous memory: memfd (double-mapping JITs),
 * /dev/zero, SysV shared memory and anonymous huge pages.
 */
bool procmaps_is_anon(const struct procmaps_mapping *m)
{
	static const char *const prefixes[] = {"[anon", "/memfd:", "/dev/zero", "/SYSV",
					       "/anon_hugepage"};

	if (!m->path_len)
		return true;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t n = strlen(prefixes[i]);

		if (m->path_len >= n && !memcmp(m->path, prefixes[i], n))
			return true;
	}
	return false;
}

bool procmaps_has_anon(const struct procmaps *maps)
{
	return maps->anon;
}
