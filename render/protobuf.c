/*
 * protobuf: a hand-written subset of the protocol buffers wire format.
 *
 * pprof output is the only user: it needs varints, length-delimited
 * strings and messages, and packed repeated varints, nothing else. Nested
 * messages are built in their own buffer and then copied in with their
 * length, which costs one copy per message but needs no size pre-pass and
 * no schema compiler. The reader is the mirror image, strict about
 * truncation and wire types, so a test can check our bytes field by field.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/grow.h"
#include "render/protobuf.h"

void pb_buf_init(struct pb_buf *b)
{
	memset(b, 0, sizeof(*b));
}

void pb_buf_free(struct pb_buf *b)
{
	free(b->bytes);
	pb_buf_init(b);
}

void pb_buf_reset(struct pb_buf *b)
{
	b->len = 0;
}

int pb_buf_error(const struct pb_buf *b)
{
	return b->err;
}

static int pb_reserve(struct pb_buf *b, size_t more)
{
	if (!b->err && GROW_ARRAY(&b->bytes, &b->cap, b->len + more, 256))
		b->err = -ENOMEM;
	return b->err;
}

static size_t pb_varint_size(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static void pb_raw_varint(struct pb_buf *b, uint64_t v)
{
	if (pb_reserve(b, 10))
		return;
	while (v >= 0x80) {
		b->bytes[b->len++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b->bytes[b->len++] = (uint8_t)v;
}

static void pb_tag(struct pb_buf *b, uint32_t field, enum pb_wire wire)
{
	pb_raw_varint(b, (uint64_t)field << 3 | wire);
}

void pb_put_varint(struct pb_buf *b, uint32_t field, uint64_t v)
{
	pb_tag(b, field, PB_VARINT);
	pb_raw_varint(b, v);
}

void pb_put_bytes(struct pb_buf *b, uint32_t field, const void *bytes, size_t len)
{
	pb_tag(b, field, PB_LEN);
	pb_raw_varint(b, len);
	if (!len || pb_reserve(b, len))
		return;
	memcpy(b->bytes + b->len, bytes, len);
	b->len += len;
}

void pb_put_string(struct pb_buf *b, uint32_t field, const char *s)
{
	pb_put_bytes(b, field, s, strlen(s));
}

void pb_put_packed(struct pb_buf *b, uint32_t field, const uint64_t *v, size_t n)
{
	size_t len = 0;

	if (!n)
		return;
	for (size_t i = 0; i < n; i++)
		len += pb_varint_size(v[i]);
	pb_tag(b, field, PB_LEN);
	pb_raw_varint(b, len);
	for (size_t i = 0; i < n; i++)
		pb_raw_varint(b, v[i]);
}

void pb_put_message(struct pb_buf *b, uint32_t field, const struct pb_buf *sub)
{
	if (sub->err) {
		if (!b->err)
			b->err = sub->err;
		return;
	}
	pb_put_bytes(b, field, sub->bytes, sub->len);
}

/* --- reading ------------------------------------------------------------------ */

void pb_reader_init(struct pb_reader *r, const void *bytes, size_t len)
{
	r->at = bytes;
	r->end = r->at + len;
}

static int pb_read_varint(const uint8_t **at, const uint8_t *end, uint64_t *v)
{
	uint64_t x = 0;

	for (unsigned int shift = 0; shift < 64; shift += 7) {
		uint8_t byte;

		if (*at >= end)
			return -EBADMSG;
		byte = *(*at)++;
		x |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return -EBADMSG; /* more than ten bytes */
}

int pb_next(struct pb_reader *r, struct pb_field *f)
{
	uint64_t tag, len;

	if (r->at == r->end)
		return 0;
	if (pb_read_varint(&r->at, r->end, &tag) || (tag >> 3) == 0 || (tag >> 3) > UINT32_MAX)
		return -EBADMSG;
	memset(f, 0, sizeof(*f));
	f->number = (uint32_t)(tag >> 3);
	f->wire = (enum pb_wire)(tag & 7);
	switch (f->wire) {
	case PB_VARINT:
		return pb_read_varint(&r->at, r->end, &f->varint) ? -EBADMSG : 1;
	case PB_I64:
	case PB_I32:
		len = f->wire == PB_I64 ? 8 : 4;
		if ((size_t)(r->end - r->at) < len)
			return -EBADMSG;
		for (size_t i = 0; i < len; i++)
			f->varint |= (uint64_t)r->at[i] << (8 * i);
		r->at += len;
		return 1;
	case PB_LEN:
		if (pb_read_varint(&r->at, r->end, &len) || len > (size_t)(r->end - r->at))
			return -EBADMSG;
		f->bytes = r->at;
		f->len = (size_t)len;
		r->at += len;
		return 1;
	default:
		return -EBADMSG; /* groups (3, 4) are not used by any format we read */
	}
}

int pb_field_varint_at(const struct pb_field *f, size_t *pos, uint64_t *v)
{
	const uint8_t *at;

	if (f->wire == PB_VARINT) {
		if (*pos)
			return 0;
		*v = f->varint;
		*pos = 1;
		return 1;
	}
	if (f->wire != PB_LEN)
		return -EBADMSG;
	if (*pos >= f->len)
		return 0;
	at = f->bytes + *pos;
	if (pb_read_varint(&at, f->bytes + f->len, v))
		return -EBADMSG;
	*pos = (size_t)(at - f->bytes);
	return 1;
}
