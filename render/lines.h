/*
 * lines: the bounded line reader under `ebprof render` and `ebprof diff`.
 *
 * Their input is text anyone may hand them (a fleet's spool, perf script
 * output, stdin), so a line may be any length and the input endless:
 * getline() grew without bound on `render /dev/zero` (6.8 GB in 20 s),
 * and one 50 MB line of 25 million frames took 2.4 GB. This reader keeps
 * at most max_line bytes of a line: a longer one is skipped to its newline
 * and reported, so memory stays bounded whatever comes in. Input with a
 * NUL byte in its first LINES_SNIFF bytes is binary, not text, and is
 * refused at once rather than read to its (perhaps never coming) end.
 */
#ifndef EBPROF_RENDER_LINES_H
#define EBPROF_RENDER_LINES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * The bounds on what a text profile may make us hold. The defaults are
 * far above real profiles and far below what hurts: no stack is deeper
 * than 524,288 frames (a thread's default 8 MiB stack holds at most that
 * many of the smallest frame, 16 bytes: a return address and a saved
 * frame pointer), and 64 MiB holds such a stack with names of 128 bytes.
 */
#define LINES_DEFAULT_MAX_LINE (64u << 20)
#define LINES_DEFAULT_MAX_DEPTH (512u * 1024)
#define LINES_SNIFF 65536

struct lines_bounds {
	size_t max_line;  /* bytes of one line, without its newline; 0: default */
	size_t max_depth; /* frames of one stack; 0: default (the readers use it) */
};

struct lines;

/*
 * A reader of in (which stays the caller's), within max_line (0: the
 * default). Returns NULL when out of memory; free it with lines_free().
 */
struct lines *lines_new(FILE *in, size_t max_line);

void lines_free(struct lines *r);

/*
 * The next line, without its newline and NUL-terminated, in *line (*len
 * bytes, writable, owned by r and valid until the next call). Returns 1
 * for a line, 0 at the end of the input, -E2BIG for a line longer than
 * max_line (skipped; the next call goes on after it), -EBADMSG for binary
 * input (a NUL byte in the first LINES_SNIFF bytes; see lines_offset()),
 * -EIO for a read error, or -ENOMEM.
 */
int lines_next(struct lines *r, char **line, size_t *len);

/* The 1-based number of the line lines_next() returned last, skipped ones included. */
uint64_t lines_number(const struct lines *r);

/* After -EBADMSG: the offset of the first NUL byte. */
uint64_t lines_offset(const struct lines *r);

#endif
