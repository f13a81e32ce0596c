/*
 * pycode: naming Python frames from code objects (see pycode.h).
 *
 * The cache is an open-addressed table of max_entries * 2 slots (2.25
 * MiB by default), allocated at the first Python frame named, so that a
 * host with no Python holds none of it; when it
 * holds max_entries, or its names and location tables max_bytes, it is
 * emptied at once (counted): a host's hot code objects fill it again
 * within one drain, and emptying keeps it bounded without an LRU list
 * per entry. The byte bound may be passed by the one entry read last,
 * at most PYCODE_MAX_TABLE and two names.
 *
 * A code object that could not be read (gone, replaced, its address
 * nonsense) is kept too, as a negative entry with its error, so that
 * every frame of it does not read the process again; it is only trusted
 * during the drain it was read in (c->drain): the next drain reads that
 * address again, so a later good read is not hidden for long.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>

#include "bpf/ebprof.h"
#include "symbolizer/pycode.h"
#include "symbolizer/pyproc.h"

/* Longest qualified name or file name kept, and location table read. */
#define PYCODE_MAX_STR 512
#define PYCODE_MAX_TABLE (256u << 10)

struct pycode_entry {
	uint32_t tgid;
	uint32_t checksum;
	uint64_t start_time;
	uint64_t code; /* 0: empty slot */
	char *qualname, *file;
	uint8_t *table;
	uint32_t table_len;
	int firstlineno;
	int err;	/* 0, or why it could not be read (a negative entry) */
	uint64_t drain; /* the drain a negative entry was read in */
};

struct pycode_cache {
	struct pycode_entry *slots;
	size_t n_slots, max_entries;
	uint64_t bytes, max_bytes; /* of the entries' names and tables */
	uint64_t drain;
	struct pycode_stats stats;
};

struct pycode_cache *pycode_cache_new(size_t max_entries, uint64_t max_bytes)
{
	struct pycode_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->max_entries = max_entries ? max_entries : PYCODE_DEFAULT_ENTRIES;
	c->max_bytes = max_bytes ? max_bytes : PYCODE_DEFAULT_BYTES;
	c->n_slots = 1;
	while (c->n_slots < c->max_entries * 2)
		c->n_slots <<= 1;
	return c;
}

/* Heap bytes of an entry's names and location table. */
static uint64_t pycode_entry_bytes(const struct pycode_entry *e)
{
	return (e->qualname ? strlen(e->qualname) + 1 : 0) + (e->file ? strlen(e->file) + 1 : 0) +
	       e->table_len;
}

static void pycode_entry_clear(struct pycode_entry *e)
{
	free(e->qualname);
	free(e->file);
	free(e->table);
	memset(e, 0, sizeof(*e));
}

static void pycode_flush(struct pycode_cache *c)
{
	for (size_t i = 0; c->slots && i < c->n_slots; i++)
		if (c->slots[i].code)
			pycode_entry_clear(&c->slots[i]);
	c->stats.entries = 0;
	c->bytes = 0;
	c->stats.flushes++;
}

void pycode_cache_free(struct pycode_cache *c)
{
	if (!c)
		return;
	pycode_flush(c);
	free(c->slots);
	free(c);
}

/* --- the location table -------------------------------------------------- */

/* A varint of 6-bit groups, low first, bit 6 says another follows. */
static int pycode_varint(const uint8_t *t, size_t n, size_t *i, uint64_t *v)
{
	unsigned int shift = 0;
	uint8_t b;

	*v = 0;
	do {
		if (*i >= n || shift > 60)
			return -1;
		b = t[(*i)++];
		*v |= (uint64_t)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	return 0;
}

/* A signed varint: the sign in the lowest bit. */
static int pycode_svarint(const uint8_t *t, size_t n, size_t *i, int64_t *v)
{
	uint64_t u;

	if (pycode_varint(t, n, i, &u))
		return -1;
	*v = (u & 1) ? -(int64_t)(u >> 1) : (int64_t)(u >> 1);
	return 0;
}

/*
 * One entry: its first byte is 1, a 4-bit form, and the code units it
 * covers less one. Forms: 15 no location; 14 long (line delta, then end
 * line, column and end column as varints); 13 no column (line delta); 10
 * to 12 one line, delta form - 10 (two column bytes follow); 0 to 9 short,
 * same line (one column byte follows). Sets *delta and *known.
 */
static int pycode_entry_line(const uint8_t *t, size_t n, size_t *i, unsigned int form,
			     int64_t *delta, bool *known)
{
	uint64_t skip;

	*delta = 0;
	*known = true;
	switch (form) {
	case 15:
		*known = false;
		return 0;
	case 14:
		if (pycode_svarint(t, n, i, delta))
			return -1;
		for (int k = 0; k < 3; k++)
			if (pycode_varint(t, n, i, &skip))
				return -1;
		return 0;
	case 13:
		return pycode_svarint(t, n, i, delta);
	case 10:
	case 11:
	case 12:
		*delta = (int64_t)form - 10;
		*i += 2;
		return *i <= n ? 0 : -1;
	default:
		*i += 1;
		return *i <= n ? 0 : -1;
	}
}

int pycode_line(const uint8_t *t, size_t n, int firstlineno, uint32_t lasti)
{
	uint64_t addr = 0;
	int64_t line = firstlineno;
	size_t i = 0;

	while (i < n) {
		uint8_t b = t[i++];
		unsigned int form = (b >> 3) & 15, units = (b & 7) + 1;
		int64_t delta;
		bool known;

		if (!(b & 0x80) || pycode_entry_line(t, n, &i, form, &delta, &known))
			return -1;
		line += delta;
		if (lasti < addr + units)
			return known && line >= 0 && line <= INT32_MAX ? (int)line : -1;
		addr += units;
	}
	return -1;
}

/* --- reading a code object ------------------------------------------------ */

/* A str object's text as UTF-8 (ASCII, or compact Latin-1/UCS-2/UCS-4), malloc'd. */
static int pycode_read_str(uint32_t tgid, uint64_t obj, const struct pyproc_layout *l,
			   char **out)
{
	uint8_t head[80], raw[PYCODE_MAX_STR * 4];
	uint64_t length;
	uint32_t state, kind;
	char *s;
	size_t o = 0;

	if (!obj || pyproc_read(tgid, obj, head, l->str_compact_data))
		return -EFAULT;
	memcpy(&length, head + l->str_length, 8);
	memcpy(&state, head + l->str_state, 4);
	kind = (state >> 2) & 7;
	if (!((state >> 5) & 1) || (kind != 1 && kind != 2 && kind != 4))
		return -EFAULT; /* not compact: never the case for a code object's names */
	if (length > PYCODE_MAX_STR)
		length = PYCODE_MAX_STR;
	if (pyproc_read(tgid, obj + (((state >> 6) & 1) ? l->str_ascii_data : l->str_compact_data),
			raw, length * kind))
		return -EFAULT;
	s = malloc(length * 4 + 1);
	if (!s)
		return -ENOMEM;
	for (size_t k = 0; k < length; k++) {
		uint32_t cp = kind == 1 ? raw[k] : kind == 2 ? (uint32_t)raw[2 * k] | raw[2 * k + 1] << 8
					  : (uint32_t)raw[4 * k] | raw[4 * k + 1] << 8 |
						    raw[4 * k + 2] << 16 | (uint32_t)raw[4 * k + 3] << 24;

		if (cp < 0x20 || cp == 0x7f)
			cp = '?'; /* a control character in a label: not ours to pass on */
		if (cp < 0x80) {
			s[o++] = (char)cp;
		} else if (cp < 0x800) {
			s[o++] = (char)(0xc0 | cp >> 6);
			s[o++] = (char)(0x80 | (cp & 63));
		} else if (cp < 0x10000) {
			s[o++] = (char)(0xe0 | cp >> 12);
			s[o++] = (char)(0x80 | ((cp >> 6) & 63));
			s[o++] = (char)(0x80 | (cp & 63));
		} else {
			s[o++] = (char)(0xf0 | (cp >> 18 & 7));
			s[o++] = (char)(0x80 | ((cp >> 12) & 63));
			s[o++] = (char)(0x80 | ((cp >> 6) & 63));
			s[o++] = (char)(0x80 | (cp & 63));
		}
	}
	s[o] = '\0';
	/* Room was made for 4 bytes a character; names are mostly ASCII.
	 * Give the rest back: the cache counts strlen() + 1 of each name
	 * (pycode_entry_bytes), and must hold no more than it counts. */
	*out = realloc(s, o + 1);
	if (!*out)
		*out = s;
	return 0;
}

static int pycode_read_bytes(uint32_t tgid, uint64_t obj, const struct pyproc_layout *l,
			     uint8_t **out, uint32_t *len)
{
	uint64_t size;

	if (!obj || pyproc_read(tgid, obj + l->bytes_size, &size, sizeof(size)))
		return -EFAULT;
	if (size > PYCODE_MAX_TABLE)
		size = PYCODE_MAX_TABLE; /* the lines past it come out "?" */
	*out = malloc(size ? size : 1);
	if (!*out)
		return -ENOMEM;
	if (size && pyproc_read(tgid, obj + l->bytes_data, *out, size)) {
		free(*out);
		*out = NULL;
		return -EFAULT;
	}
	*len = (uint32_t)size;
	return 0;
}

static uint32_t pycode_field32(const uint8_t *code, uint16_t off)
{
	uint32_t v;

	memcpy(&v, code + off, sizeof(v));
	return v;
}

static uint64_t pycode_field64(const uint8_t *code, uint16_t off)
{
	uint64_t v;

	memcpy(&v, code + off, sizeof(v));
	return v;
}

/* Reads the code object at e->code into e, if it still has e->checksum. */
static int pycode_load(struct pycode_entry *e, const struct pyproc_layout *l)
{
	uint8_t code[256];
	uint32_t sum;
	char *base;
	int err;

	if (l->code_size > sizeof(code) || pyproc_read(e->tgid, e->code, code, l->code_size))
		return -EFAULT;
	sum = ebprof_py_checksum(pycode_field32(code, l->code_flags),
				 pycode_field32(code, l->code_argcount),
				 pycode_field32(code, l->code_kwonly),
				 pycode_field32(code, l->code_firstlineno),
				 pycode_field64(code, l->code_qualname),
				 pycode_field64(code, l->code_linetable));
	if (sum != e->checksum)
		return -ESTALE;
	e->firstlineno = (int)pycode_field32(code, l->code_firstlineno);
	err = pycode_read_str(e->tgid, pycode_field64(code, l->code_qualname), l, &e->qualname);
	if (!err)
		err = pycode_read_str(e->tgid, pycode_field64(code, l->code_filename), l, &e->file);
	if (!err)
		err = pycode_read_bytes(e->tgid, pycode_field64(code, l->code_linetable), l,
					&e->table, &e->table_len);
	if (err)
		return err;
	base = strrchr(e->file, '/');
	if (base)
		memmove(e->file, base + 1, strlen(base + 1) + 1);
	return 0;
}

static size_t pycode_slot(const struct pycode_cache *c, uint32_t tgid, uint64_t start_time,
			  uint64_t code, uint32_t checksum)
{
	uint64_t h = code * 0x9e3779b97f4a7c15ULL ^ (uint64_t)tgid * 0xc4ceb9fe1a85ec53ULL ^
		     start_time ^ checksum;

	h ^= h >> 31;
	return (size_t)h & (c->n_slots - 1);
}

/* Reads the code object into e (its key set), or makes it a negative entry. */
static int pycode_fill(struct pycode_cache *c, struct pycode_entry *e,
		       const struct pyproc_layout *l)
{
	int err;

	c->stats.misses++;
	c->bytes -= pycode_entry_bytes(e);
	err = pycode_load(e, l);
	if (err) {
		free(e->qualname);
		free(e->file);
		free(e->table);
		e->qualname = e->file = NULL;
		e->table = NULL;
		e->table_len = 0;
		e->err = err;
		e->drain = c->drain;
	} else {
		e->err = 0;
	}
	c->bytes += pycode_entry_bytes(e);
	return err;
}

static int pycode_refused(struct pycode_cache *c, int err)
{
	c->stats.stale += err == -ESTALE;
	c->stats.faults += err == -EFAULT;
	return err;
}

/* The entry of a code object: found, or read now. */
static int pycode_get(struct pycode_cache *c, uint32_t tgid, uint64_t start_time, uint64_t code,
		      uint32_t checksum, const struct pyproc_layout *l, struct pycode_entry **out)
{
	size_t i = pycode_slot(c, tgid, start_time, code, checksum);
	struct pycode_entry *e;
	int err;

	if (!c->slots) {
		c->slots = calloc(c->n_slots, sizeof(*c->slots));
		if (!c->slots)
			return -ENOMEM;
	}
	for (;; i = (i + 1) & (c->n_slots - 1)) {
		e = &c->slots[i];
		if (!e->code)
			break;
		if (e->code == code && e->tgid == tgid && e->start_time == start_time &&
		    e->checksum == checksum) {
			if (e->err && e->drain != c->drain)
				err = pycode_fill(c, e, l); /* a drain later: read again */
			else if (e->err)
				err = (c->stats.negative_hits++, e->err);
			else
				err = (c->stats.hits++, 0);
			*out = e;
			return err ? pycode_refused(c, err) : 0;
		}
	}
	if (c->stats.entries >= c->max_entries || c->bytes >= c->max_bytes) {
		pycode_flush(c);
		i = pycode_slot(c, tgid, start_time, code, checksum);
		e = &c->slots[i];
	}
	*e = (struct pycode_entry){ .tgid = tgid, .checksum = checksum, .start_time = start_time,
				    .code = code };
	err = pycode_fill(c, e, l);
	if (err == -ENOMEM) {
		c->bytes -= pycode_entry_bytes(e);
		pycode_entry_clear(e); /* not an answer about the code object */
		return err;
	}
	c->stats.entries++;
	*out = e;
	return err ? pycode_refused(c, err) : 0;
}

void pycode_end_drain(struct pycode_cache *c)
{
	c->drain++;
}

int pycode_name(struct pycode_cache *c, uint32_t tgid, uint64_t start_time, uint64_t first,
		uint64_t second, char *buf, size_t len)
{
	const struct pyproc_layout *l =
		pyproc_layout((unsigned int)((first & ~EBPROF_PY_FRAME) >> EBPROF_PY_VERSION_SHIFT));
	uint64_t code = first & EBPROF_PY_ADDR_MASK;
	struct pycode_entry *e;
	int err, line;

	if (!l)
		return -EPROTONOSUPPORT;
	if (!code)
		return -EFAULT;
	err = pycode_get(c, tgid, start_time, code, (uint32_t)(second >> 32), l, &e);
	if (err)
		return err;
	line = pycode_line(e->table, e->table_len, e->firstlineno, (uint32_t)second);
	if (line < 0)
		snprintf(buf, len, "%s (%s:?)", e->qualname, e->file);
	else
		snprintf(buf, len, "%s (%s:%d)", e->qualname, e->file, line);
	return 0;
}

void pycode_stats(const struct pycode_cache *c, struct pycode_stats *stats)
{
	*stats = c->stats;
	stats->bytes = c->bytes + (c->slots ? c->n_slots * sizeof(*c->slots) : 0);
}
