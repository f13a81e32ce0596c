/*
 * folded: the one-line-per-stack text format of flamegraph.pl
 * ("proc;main;work;spin_[k] 42"). The writer emits a profile in it; the
 * reader accepts ours, flamegraph.pl-style input and stackcollapse output.
 */
#ifndef EBPROF_RENDER_FOLDED_H
#define EBPROF_RENDER_FOLDED_H

#include <stdint.h>
#include <stdio.h>

#include "render/profile.h"

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
	uint64_t skipped; /* malformed lines: no count, bad count, empty stack */
	uint64_t first_bad_line; /* 1-based number of the first skipped line, 0: none */
};

/*
 * Adds every "frame;frame;... COUNT" line of in to p. COUNT is the token
 * after the last space or tab, an unsigned decimal integer (fractional
 * counts such as flamegraph.pl's "1.5" are malformed, and so is a count that
 * would take the profile's total past UINT64_MAX); everything before
 * that one separator is the stack, so frames may hold spaces. A frame
 * ending in "_[k]", "_[j]" or "_[i]" gets that kind, with the suffix
 * removed; other frames, the first included, are FRAME_USER. Lines of any
 * length are read. Blank lines are ignored; malformed lines are counted in
 * *stats (may be NULL) and skipped. Returns 0, -ENOMEM, or -EIO.
 */
int folded_read(struct profile *p, FILE *in, struct folded_read_stats *stats);

#endif
