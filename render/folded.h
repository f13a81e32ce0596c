/*
 * folded: the one-line-per-stack text format of flamegraph.pl
 * ("proc;main;work;spin_[k] 42"). The writer emits a profile in it; the
 * reader accepts ours, flamegraph.pl-style input and stackcollapse output.
 */
#ifndef EBPROF_RENDER_FOLDED_H
#define EBPROF_RENDER_FOLDED_H

#include <stdint.h>
#include <stdio.h>

#include "render/lines.h"
#include "render/profile.h"
#include "render/stacks.h"

/*
 * The most samples one line may count, and the most a profile read from
 * text may hold in all: 2^53, where doubles (diff's normalized counts,
 * pprof's CPU time) stop being exact, and about 285 years of 1,000 CPUs
 * sampled at 1,000 Hz.
 */
#define FOLDED_MAX_COUNT (1ULL << 53)

/*
 * Writes every stack with self samples, one per line, in the profile's
 * stable order. Kernel frames get "_[k]", JIT "_[j]", inlined "_[i]".
 * A ';', newline or control character inside a name is replaced by '_'
 * (bytes below 0x20 and 0x7f), so a stack always stays one line.
 * Returns 0 or a negative errno from the stream (-EIO, -ENOSPC...).
 */
int folded_write(const struct profile *p, FILE *out);

struct folded_read_stats {
	uint64_t lines;	  /* stack lines added */
	uint64_t skipped; /* malformed lines: no count, bad count, empty stack, and: */
	uint64_t too_long; /* of those, lines over bounds->max_line */
	uint64_t too_deep; /* of those, stacks over bounds->max_depth */
	uint64_t first_bad_line; /* 1-based number of the first skipped line, 0: none */
	uint64_t binary_at;	 /* after -EBADMSG: the offset of the NUL byte */
};

/*
 * Adds every "frame;frame;... COUNT" line of in to p. COUNT is the token
 * after the last space or tab, an unsigned decimal integer of at most
 * FOLDED_MAX_COUNT (fractional counts such as flamegraph.pl's "1.5" are
 * malformed, and so are larger ones); everything before that one
 * separator is the stack, so frames may hold spaces. A frame ending in
 * "_[k]", "_[j]" or "_[i]" gets that kind, with the suffix removed; other
 * frames, the first included, are FRAME_USER. Blank lines are ignored;
 * malformed lines, lines longer than bounds->max_line and stacks deeper
 * than bounds->max_depth are counted in *stats (may be NULL) and skipped,
 * so what is kept never depends on the order of the lines. Returns 0,
 * -EBADMSG for binary input (lines.h), -EOVERFLOW when the counts add up
 * past FOLDED_MAX_COUNT, -ENOMEM, or -EIO. bounds may be NULL: the
 * defaults (lines.h).
 */
int folded_read_bounded(struct profile *p, FILE *in, const struct lines_bounds *bounds,
			struct folded_read_stats *stats);

/*
 * The reader without a profile: calls fn(frames, n, count, ctx) for each
 * stack line of in, in file order, with what folded_read_bounded() would
 * add (the frames and their names live until the next call). A non-zero
 * return from fn stops the read and is returned. Lines are bounded,
 * skipped and counted in *stats as folded_read_bounded() does; the sum of
 * the counts is fn's to check.
 */
int folded_for_each(FILE *in, const struct lines_bounds *bounds, struct folded_read_stats *stats,
		    stacks_fn fn, void *ctx);

/* folded_read_bounded() with the default bounds. */
int folded_read(struct profile *p, FILE *in, struct folded_read_stats *stats);

#endif
