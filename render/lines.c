/*
 * lines: one buffer, filled with fread() in 256 KiB chunks and scanned
 * with memchr(); a line is handed out in place. The buffer grows to the
 * longest line seen, at most max_line plus one chunk; a line that
 * outgrows max_line is dropped from it as it comes in, so skipping a
 * gigabyte-long line costs no memory.
 */
#include "render/lines.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define LINES_CHUNK (256 * 1024)

struct lines {
	FILE *in;
	char *buf;
	size_t cap, start, end; /* unread bytes: buf[start, end) */
	size_t max_line;
	uint64_t seen;	 /* bytes read from in so far */
	uint64_t number; /* of the last line handed out */
	uint64_t nul_at;
	bool eof;
	bool skipping; /* the line being read is over max_line */
};

struct lines *lines_new(FILE *in, size_t max_line)
{
	struct lines *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->in = in;
	r->max_line = max_line ? max_line : LINES_DEFAULT_MAX_LINE;
	return r;
}

void lines_free(struct lines *r)
{
	if (!r)
		return;
	free(r->buf);
	free(r);
}

uint64_t lines_number(const struct lines *r)
{
	return r->number;
}

uint64_t lines_offset(const struct lines *r)
{
	return r->nul_at;
}

/* Makes room for a chunk (and a NUL) after the unread bytes; -ENOMEM. */
static int lines_room(struct lines *r)
{
	size_t need = r->end - r->start + LINES_CHUNK + 1;
	char *buf;

	if (r->start) {
		memmove(r->buf, r->buf + r->start, r->end - r->start);
		r->end -= r->start;
		r->start = 0;
	}
	if (need <= r->cap)
		return 0;
	buf = realloc(r->buf, need);
	if (!buf)
		return -ENOMEM;
	r->buf = buf;
	r->cap = need;
	return 0;
}

/* Reads a chunk; 0, -EBADMSG (a NUL early on), -EIO or -ENOMEM. */
static int lines_fill(struct lines *r)
{
	size_t got;
	const char *nul;
	int err = lines_room(r);

	if (err)
		return err;
	got = fread(r->buf + r->end, 1, LINES_CHUNK, r->in);
	if (!got) {
		if (ferror(r->in))
			return -EIO;
		r->eof = true;
		return 0;
	}
	if (r->seen < LINES_SNIFF) {
		size_t look = LINES_SNIFF - r->seen < got ? LINES_SNIFF - r->seen : got;

		nul = memchr(r->buf + r->end, '\0', look);
		if (nul) {
			r->nul_at = r->seen + (uint64_t)(nul - (r->buf + r->end));
			return -EBADMSG;
		}
	}
	r->seen += got;
	r->end += got;
	return 0;
}

/* Hands out buf[start, start + len) and moves past it and its newline. */
static int lines_take(struct lines *r, size_t len, size_t skip, char **line, size_t *out)
{
	bool skipped = r->skipping;

	*line = r->buf + r->start;
	*out = len;
	r->buf[r->start + len] = '\0';
	r->start += len + skip;
	r->number++;
	r->skipping = false;
	return skipped ? -E2BIG : 1;
}

int lines_next(struct lines *r, char **line, size_t *len)
{
	size_t scanned = 0; /* unread bytes known to hold no newline */
	int err;

	for (;;) {
		size_t avail = r->end - r->start;
		const char *nl = avail > scanned ? memchr(r->buf + r->start + scanned, '\n',
							  avail - scanned)
						 : NULL;

		if (nl) {
			size_t n = (size_t)(nl - (r->buf + r->start));

			if (n > r->max_line)
				r->skipping = true;
			return lines_take(r, n, 1, line, len);
		}
		scanned = avail;
		if (avail > r->max_line) {
			/* Too long to keep: drop what we have, and the rest as it comes. */
			r->skipping = true;
			r->start = r->end;
			scanned = 0;
		}
		if (r->eof)
			return r->end > r->start || r->skipping ? lines_take(r, r->end - r->start, 0,
									      line, len)
								   : 0;
		err = lines_fill(r);
		if (err)
			return err;
	}
}
