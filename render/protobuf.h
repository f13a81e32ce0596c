/*
 * protobuf: the few pieces of the protocol buffers wire format that pprof
 * output needs, written by hand (README.md, "Own encoder, not protobuf-c", says why
 * not protobuf-c): varints, length-delimited fields and packed repeated
 * varints into a growable buffer, and a reader that walks the fields of
 * one message, for our tests and any later importer.
 */
#ifndef EBPROF_RENDER_PROTOBUF_H
#define EBPROF_RENDER_PROTOBUF_H

#include <stddef.h>
#include <stdint.h>

enum pb_wire { PB_VARINT = 0, PB_I64 = 1, PB_LEN = 2, PB_I32 = 5 };

/*
 * A growable message. The error is sticky: after a failed allocation
 * every later put is a no-op and pb_buf_error() says -ENOMEM, so callers
 * can write a whole message and check once.
 */
struct pb_buf {
	uint8_t *bytes; /* owned; free with pb_buf_free() */
	size_t len, cap;
	int err;
};

void pb_buf_init(struct pb_buf *b);
void pb_buf_free(struct pb_buf *b);
void pb_buf_reset(struct pb_buf *b); /* empties b, keeps its memory, clears no error */
int pb_buf_error(const struct pb_buf *b);

/* One field each. int64 fields are written as varints, as protobuf does. */
void pb_put_varint(struct pb_buf *b, uint32_t field, uint64_t v);
void pb_put_bytes(struct pb_buf *b, uint32_t field, const void *bytes, size_t len);
void pb_put_string(struct pb_buf *b, uint32_t field, const char *s);
/* A repeated varint field in packed form; nothing when n is 0. */
void pb_put_packed(struct pb_buf *b, uint32_t field, const uint64_t *v, size_t n);
/* An embedded message: sub's bytes as one length-delimited field. */
void pb_put_message(struct pb_buf *b, uint32_t field, const struct pb_buf *sub);

/* --- reading ---------------------------------------------------------------- */

struct pb_reader {
	const uint8_t *at, *end; /* borrowed */
};

struct pb_field {
	uint32_t number;
	enum pb_wire wire;
	uint64_t varint;      /* PB_VARINT, PB_I64, PB_I32 */
	const uint8_t *bytes; /* PB_LEN: points into the reader's buffer */
	size_t len;
};

void pb_reader_init(struct pb_reader *r, const void *bytes, size_t len);

/* The next field: 1, 0 at the end of the message, -EBADMSG when the bytes
 * are not a valid message (truncated, bad wire type, field number 0). */
int pb_next(struct pb_reader *r, struct pb_field *f);

/*
 * The next varint of a repeated field, packed (PB_LEN) or not: iterate
 * with *pos starting at 0. 1 with *v, 0 at the end, -EBADMSG.
 */
int pb_field_varint_at(const struct pb_field *f, size_t *pos, uint64_t *v);

#endif
