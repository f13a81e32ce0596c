/*
 * kbtf: finds where a few members of a kernel struct sit, by reading the
 * kernel's BTF (/sys/kernel/btf/vmlinux) as a stream.
 *
 * The sampler's program reads three fields of the current task_struct
 * (its group leader, and the leader's name, start time and mm). Field
 * offsets change from one kernel build to the next, so they must come
 * from the running kernel's BTF. libbpf's CO-RE would find them, but to do
 * so it loads the whole 5-6 MiB BTF into memory and indexes every type:
 * that was most of ebprof's peak RSS. This module reads the file in small
 * chunks instead, holding a few hundred bytes of state, and hands the
 * offsets to the program as load-time constants.
 *
 * BTF is a header, a type section and a string section; a type's name is
 * an offset into the strings. So the strings come first: one pass over
 * the string section notes the offset of each name we look for. Then one
 * pass over the types finds the struct by name and its members by name.
 * A member inside an anonymous struct or union (a randomized task_struct
 * keeps its fields in one) is found by further passes over the types, one
 * per level of nesting, each looking for the anonymous types the last one
 * named.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/kbtf.h"

#define KBTF_MAGIC 0xeB9F
#define KBTF_CHUNK (64 * 1024)
/* Anonymous members followed per pass, and levels of nesting followed. */
#define KBTF_MAX_ANON 32
#define KBTF_MAX_DEPTH 4
/* Offsets noted per wanted name (BTF deduplicates names: one, normally). */
#define KBTF_MAX_NAME_OFFS 4

/* The BTF kinds, as in the kernel's include/uapi/linux/btf.h. */
enum {
	KBTF_KIND_INT = 1,
	KBTF_KIND_PTR,
	KBTF_KIND_ARRAY,
	KBTF_KIND_STRUCT,
	KBTF_KIND_UNION,
	KBTF_KIND_ENUM,
	KBTF_KIND_FWD,
	KBTF_KIND_TYPEDEF,
	KBTF_KIND_VOLATILE,
	KBTF_KIND_CONST,
	KBTF_KIND_RESTRICT,
	KBTF_KIND_FUNC,
	KBTF_KIND_FUNC_PROTO,
	KBTF_KIND_VAR,
	KBTF_KIND_DATASEC,
	KBTF_KIND_FLOAT,
	KBTF_KIND_DECL_TAG,
	KBTF_KIND_TYPE_TAG,
	KBTF_KIND_ENUM64,
};

struct kbtf_header {
	uint16_t magic;
	uint8_t version;
	uint8_t flags;
	uint32_t hdr_len;
	uint32_t type_off;
	uint32_t type_len;
	uint32_t str_off;
	uint32_t str_len;
};

struct kbtf_type {
	uint32_t name_off;
	uint32_t info; /* vlen: bits 0-15, kind: bits 24-28, kind_flag: bit 31 */
	uint32_t size_or_type;
};

struct kbtf_member {
	uint32_t name_off;
	uint32_t type;
	uint32_t offset; /* in bits; with kind_flag, bitfield size << 24 | bits */
};

/* A buffered reader over one section of the file. */
struct kbtf_reader {
	int fd;
	off_t pos; /* file offset of buf[0] */
	off_t end; /* file offset where the section ends */
	size_t len, at;
	unsigned char *buf;
};

/* An anonymous struct or union to look into, and where it sits. */
struct kbtf_anon {
	uint32_t type_id;
	uint32_t base; /* its offset in the outer struct, in bits */
};

struct kbtf_search {
	const char *const *members;
	uint32_t *offsets;
	bool in_bits; /* offsets in bits, bitfields allowed (kbtf_member_bits()) */
	bool *found;
	size_t n;
	uint32_t struct_name_off[KBTF_MAX_NAME_OFFS];
	uint32_t member_name_off[KBTF_MAX_MEMBERS][KBTF_MAX_NAME_OFFS];
	/* The anonymous members to look into in the next pass, and this one's. */
	struct kbtf_anon next[KBTF_MAX_ANON], now[KBTF_MAX_ANON];
	size_t n_next, n_now;
	bool struct_seen;
	char *err;
	size_t errlen;
};

static void kbtf_reader_init(struct kbtf_reader *r, int fd, unsigned char *buf, off_t start,
			     off_t len)
{
	r->fd = fd;
	r->pos = start;
	r->end = start + len;
	r->len = 0;
	r->at = 0;
	r->buf = buf;
}

/*
 * Makes sure the buffer holds at least one unread byte of the section.
 * Returns 0 or -errno (-EPROTO past the section's end).
 */
static int kbtf_fill(struct kbtf_reader *r)
{
	off_t left = r->end - (r->pos + (off_t)r->len);
	ssize_t got;

	if (r->at < r->len)
		return 0;
	if (left <= 0)
		return -EPROTO; /* the section ends mid-record */
	r->pos += (off_t)r->len;
	got = pread(r->fd, r->buf, left < KBTF_CHUNK ? (size_t)left : KBTF_CHUNK, r->pos);
	if (got < 0)
		return -errno;
	if (got == 0)
		return -EPROTO; /* the file is shorter than its header says */
	r->len = (size_t)got;
	r->at = 0;
	return 0;
}

/* Copies the next n bytes of the section into out. Returns 0 or -errno. */
static int kbtf_read(struct kbtf_reader *r, void *out, size_t n)
{
	unsigned char *dst = out;

	while (n) {
		size_t take;
		int err = kbtf_fill(r);

		if (err)
			return err;
		take = r->len - r->at < n ? r->len - r->at : n;
		memcpy(dst, r->buf + r->at, take);
		r->at += take;
		dst += take;
		n -= take;
	}
	return 0;
}

static bool kbtf_at_end(const struct kbtf_reader *r)
{
	return r->at == r->len && r->pos + (off_t)r->len >= r->end;
}

static void kbtf_note_name(uint32_t *offs, uint32_t off)
{
	for (int i = 0; i < KBTF_MAX_NAME_OFFS; i++) {
		if (offs[i] == 0) {
			offs[i] = off;
			return;
		}
	}
}

static bool kbtf_is_name(const uint32_t *offs, uint32_t off)
{
	for (int i = 0; i < KBTF_MAX_NAME_OFFS && offs[i]; i++)
		if (offs[i] == off)
			return true;
	return false;
}

/*
 * One pass over the strings: notes where the struct's and the members'
 * names start. The buffer is scanned a string at a time (memchr for the
 * NUL); a string cut by the end of a chunk is carried over in name[], and
 * one longer than any wanted name is skipped whole.
 */
static int kbtf_scan_strings(struct kbtf_reader *r, struct kbtf_search *q,
			     const char *struct_name)
{
	char name[KBTF_MAX_NAME + 1];
	uint32_t off = 0, start = 0;
	size_t len = 0;
	bool too_long = false;
	int err;

	while (!kbtf_at_end(r)) {
		const unsigned char *p, *nul;
		size_t n;

		err = kbtf_fill(r);
		if (err)
			return err;
		p = r->buf + r->at;
		nul = memchr(p, '\0', r->len - r->at);
		n = (size_t)((nul ? nul : r->buf + r->len) - p);
		if (!too_long && len + n <= KBTF_MAX_NAME)
			memcpy(name + len, p, n);
		else
			too_long = true;
		len += n;
		r->at += n;
		off += (uint32_t)n;
		if (!nul)
			continue;
		r->at++;
		off++;
		name[too_long ? 0 : len] = '\0';
		/* Offset 0 is the empty name of every anonymous type. */
		if (!too_long && start != 0) {
			if (strcmp(name, struct_name) == 0)
				kbtf_note_name(q->struct_name_off, start);
			for (size_t i = 0; i < q->n; i++)
				if (strcmp(name, q->members[i]) == 0)
					kbtf_note_name(q->member_name_off[i], start);
		}
		start = off;
		len = 0;
		too_long = false;
	}
	return 0;
}

/* The bytes that follow a type's header, by kind; -1 for a kind we do not know. */
static long kbtf_trailer(const struct kbtf_type *t)
{
	uint32_t vlen = t->info & 0xffff;

	switch ((t->info >> 24) & 0x1f) {
	case KBTF_KIND_INT:
	case KBTF_KIND_VAR:
	case KBTF_KIND_DECL_TAG:
		return 4;
	case KBTF_KIND_ARRAY:
		return 12;
	case KBTF_KIND_STRUCT:
	case KBTF_KIND_UNION:
	case KBTF_KIND_DATASEC:
	case KBTF_KIND_ENUM64:
		return 12L * vlen;
	case KBTF_KIND_ENUM:
	case KBTF_KIND_FUNC_PROTO:
		return 8L * vlen;
	case KBTF_KIND_PTR:
	case KBTF_KIND_FWD:
	case KBTF_KIND_TYPEDEF:
	case KBTF_KIND_VOLATILE:
	case KBTF_KIND_CONST:
	case KBTF_KIND_RESTRICT:
	case KBTF_KIND_FUNC:
	case KBTF_KIND_FLOAT:
	case KBTF_KIND_TYPE_TAG:
		return 0;
	default:
		return -1;
	}
}

/*
 * Reads the members of a struct or union that sits at base bits in the
 * outer struct: a wanted one gets its offset, an anonymous struct or union
 * is queued for the next pass.
 */
static int kbtf_read_members(struct kbtf_reader *r, struct kbtf_search *q,
			     const struct kbtf_type *t, uint32_t base)
{
	bool kind_flag = t->info >> 31;
	uint32_t vlen = t->info & 0xffff;
	struct kbtf_member m;
	int err;

	for (uint32_t i = 0; i < vlen; i++) {
		uint32_t bits;

		err = kbtf_read(r, &m, sizeof(m));
		if (err)
			return err;
		bits = base + (kind_flag ? m.offset & 0xffffff : m.offset);
		if (m.name_off == 0) {
			if (q->n_next < KBTF_MAX_ANON)
				q->next[q->n_next++] = (struct kbtf_anon){ m.type, bits };
			continue;
		}
		for (size_t j = 0; j < q->n; j++) {
			if (q->found[j] || !kbtf_is_name(q->member_name_off[j], m.name_off))
				continue;
			if (bits % 8 && !q->in_bits) {
				snprintf(q->err, q->errlen, "kernel BTF: member %s is a bitfield",
					 q->members[j]);
				return -EPROTO;
			}
			q->offsets[j] = q->in_bits ? bits : bits / 8;
			q->found[j] = true;
		}
	}
	return 0;
}

/* Reads past n bytes of the section (a type's trailer). Returns 0 or -errno. */
static int kbtf_skip(struct kbtf_reader *r, long n)
{
	unsigned char sink[256];

	while (n > 0) {
		size_t len = n < (long)sizeof(sink) ? (size_t)n : sizeof(sink);
		int err = kbtf_read(r, sink, len);

		if (err)
			return err;
		n -= (long)len;
	}
	return 0;
}

/*
 * One pass over the types. The first pass reads the struct named by the
 * search; later ones read the anonymous members the previous pass queued.
 */
static int kbtf_scan_types(struct kbtf_reader *r, struct kbtf_search *q, bool first)
{
	struct kbtf_type t;
	uint32_t id = 0;
	int err;

	while (!kbtf_at_end(r)) {
		long skip;
		int kind;
		bool read = false;

		err = kbtf_read(r, &t, sizeof(t));
		if (err)
			return err;
		id++; /* type ids start at 1; 0 is void */
		kind = (t.info >> 24) & 0x1f;
		skip = kbtf_trailer(&t);
		if (skip < 0) {
			snprintf(q->err, q->errlen, "kernel BTF: type %u has unknown kind %d", id,
				 kind);
			return -EPROTO;
		}
		if (kind == KBTF_KIND_STRUCT || kind == KBTF_KIND_UNION) {
			if (first && kind == KBTF_KIND_STRUCT &&
			    kbtf_is_name(q->struct_name_off, t.name_off) &&
			    (t.info & 0xffff) > 0 && !q->struct_seen) {
				q->struct_seen = true;
				err = kbtf_read_members(r, q, &t, 0);
				read = true;
			}
			for (size_t i = 0; !first && !read && i < q->n_now; i++) {
				if (q->now[i].type_id == id) {
					err = kbtf_read_members(r, q, &t, q->now[i].base);
					read = true;
				}
			}
			if (err)
				return err;
		}
		if (!read) {
			err = kbtf_skip(r, skip);
			if (err)
				return err;
		}
	}
	return 0;
}

static bool kbtf_all_found(const struct kbtf_search *q)
{
	for (size_t i = 0; i < q->n; i++)
		if (!q->found[i])
			return false;
	return true;
}

/*
 * Opens the BTF file at path, reads its header, and allocates the read
 * buffer and a zeroed search (its err and errlen set). Returns 0 or
 * -errno with a message in err; on success free with kbtf_close().
 */
static int kbtf_open(const char *path, int *fd_out, struct kbtf_header *h, unsigned char **buf,
		     struct kbtf_search **q, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "reading the kernel's BTF (%s): %s", path, strerror(-ret));
		return ret;
	}
	ret = pread(fd, h, sizeof(*h), 0) == (ssize_t)sizeof(*h) ? 0 : -EPROTO;
	if (!ret && (h->magic != KBTF_MAGIC || h->hdr_len < sizeof(*h)))
		ret = -EPROTO; /* another byte order, or not BTF */
	if (ret) {
		snprintf(err, errlen, "%s is not BTF in this machine's byte order", path);
		close(fd);
		return ret;
	}
	*buf = malloc(KBTF_CHUNK);
	*q = calloc(1, sizeof(**q));
	if (!*buf || !*q) {
		free(*buf);
		free(*q);
		close(fd);
		snprintf(err, errlen, "kbtf: out of memory");
		return -ENOMEM;
	}
	(*q)->err = err;
	(*q)->errlen = errlen;
	*fd_out = fd;
	return 0;
}

static void kbtf_close(int fd, unsigned char *buf, struct kbtf_search *q)
{
	free(q);
	free(buf);
	close(fd);
}

/* One pass over the types: the id of the type of kind the search's name names, or 0. */
static int kbtf_scan_kind(struct kbtf_reader *r, struct kbtf_search *q, int kind,
			  uint32_t *found)
{
	struct kbtf_type t;
	uint32_t id = 0;
	int err;

	while (!kbtf_at_end(r) && !*found) {
		long skip;

		err = kbtf_read(r, &t, sizeof(t));
		if (err)
			return err;
		id++;
		skip = kbtf_trailer(&t);
		if (skip < 0) {
			snprintf(q->err, q->errlen, "kernel BTF: type %u has unknown kind %d", id,
				 (int)((t.info >> 24) & 0x1f));
			return -EPROTO;
		}
		if ((int)((t.info >> 24) & 0x1f) == kind &&
		    kbtf_is_name(q->struct_name_off, t.name_off))
			*found = id;
		err = kbtf_skip(r, skip);
		if (err)
			return err;
	}
	return 0;
}

/* The id of the type of kind (a typedef, a function) called name; what="typedef", "function". */
static int kbtf_kind_id(const char *path, int kind, const char *what, const char *name,
			uint32_t *id, char *err, size_t errlen)
{
	struct kbtf_search *q = NULL;
	struct kbtf_header h = { 0 };
	struct kbtf_reader r;
	unsigned char *buf = NULL;
	int fd = -1, ret;

	*id = 0;
	if (errlen)
		err[0] = '\0';
	if (strlen(name) > KBTF_MAX_NAME) {
		snprintf(err, errlen, "kbtf: bad request");
		return -EINVAL;
	}
	ret = kbtf_open(path, &fd, &h, &buf, &q, err, errlen);
	if (ret)
		return ret;
	kbtf_reader_init(&r, fd, buf, (off_t)h.hdr_len + h.str_off, h.str_len);
	ret = kbtf_scan_strings(&r, q, name);
	if (!ret) {
		kbtf_reader_init(&r, fd, buf, (off_t)h.hdr_len + h.type_off, h.type_len);
		ret = kbtf_scan_kind(&r, q, kind, id);
	}
	if (ret && !err[0])
		snprintf(err, errlen, "%s is truncated or malformed", path);
	else if (!ret && !*id) {
		ret = -ENOENT;
		snprintf(err, errlen, "the kernel's BTF has no %s %s", what, name);
	}
	kbtf_close(fd, buf, q);
	return ret;
}

int kbtf_typedef_id(const char *path, const char *name, uint32_t *id, char *err, size_t errlen)
{
	return kbtf_kind_id(path, KBTF_KIND_TYPEDEF, "typedef", name, id, err, errlen);
}

int kbtf_func_id(const char *path, const char *name, uint32_t *id, char *err, size_t errlen)
{
	return kbtf_kind_id(path, KBTF_KIND_FUNC, "function", name, id, err, errlen);
}

/* kbtf_member_offsets(), or in_bits: kbtf_member_bits(). */
static int kbtf_members(const char *path, const char *struct_name, const char *const *members,
			uint32_t *offsets, size_t n, bool in_bits, char *err, size_t errlen)
{
	struct kbtf_search *q = NULL;
	struct kbtf_header h = { 0 };
	struct kbtf_reader r;
	unsigned char *buf = NULL;
	bool found[KBTF_MAX_MEMBERS] = { false };
	off_t base;
	int fd = -1, ret;

	if (errlen)
		err[0] = '\0';
	if (n == 0 || n > KBTF_MAX_MEMBERS || strlen(struct_name) > KBTF_MAX_NAME) {
		snprintf(err, errlen, "kbtf: bad request");
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++) {
		if (strlen(members[i]) > KBTF_MAX_NAME) {
			snprintf(err, errlen, "kbtf: bad request");
			return -EINVAL;
		}
	}
	ret = kbtf_open(path, &fd, &h, &buf, &q, err, errlen);
	if (ret)
		return ret;
	/* kbtf_open() sets q whenever it returns 0; clang-analyzer takes -errno for 0. */
	q->members = members; /* NOLINT(clang-analyzer-core.NullDereference) */
	q->offsets = offsets;
	q->in_bits = in_bits;
	q->found = found;
	q->n = n;

	base = (off_t)h.hdr_len;
	kbtf_reader_init(&r, fd, buf, base + h.str_off, h.str_len);
	ret = kbtf_scan_strings(&r, q, struct_name);
	for (int depth = 0; !ret && depth < KBTF_MAX_DEPTH && !kbtf_all_found(q); depth++) {
		if (depth > 0 && q->n_next == 0)
			break;
		memcpy(q->now, q->next, sizeof(q->next));
		q->n_now = q->n_next;
		q->n_next = 0;
		kbtf_reader_init(&r, fd, buf, base + h.type_off, h.type_len);
		ret = kbtf_scan_types(&r, q, depth == 0);
	}
	if (ret == -EPROTO && !err[0])
		snprintf(err, errlen, "%s is truncated or malformed", path);
	else if (ret && !err[0])
		snprintf(err, errlen, "reading %s: %s", path, strerror(-ret));
	if (ret)
		goto free_bufs;
	if (in_bits && !q->struct_seen) {
		ret = -ENOENT;
		snprintf(err, errlen, "the kernel's BTF has no struct %s", struct_name);
	}
	for (size_t i = 0; !ret && i < n; i++) {
		if (in_bits && !found[i]) {
			offsets[i] = KBTF_ABSENT;
		} else if (!found[i]) {
			ret = -ENOENT;
			snprintf(err, errlen, "the kernel's BTF has no %s.%s", struct_name,
				 members[i]);
			break;
		}
	}
free_bufs:
	kbtf_close(fd, buf, q);
	return ret;
}

int kbtf_member_offsets(const char *path, const char *struct_name, const char *const *members,
			uint32_t *offsets, size_t n, char *err, size_t errlen)
{
	return kbtf_members(path, struct_name, members, offsets, n, false, err, errlen);
}

int kbtf_member_bits(const char *path, const char *struct_name, const char *const *members,
		     uint32_t *bits, size_t n, char *err, size_t errlen)
{
	return kbtf_members(path, struct_name, members, bits, n, true, err, errlen);
}
