/*
 * prune: a flame graph of a big folded file without building its whole
 * tree.
 *
 * An SVG draws only the frames at least min_width pixels wide; the rest
 * hide their whole subtree. Half a million distinct stacks can make
 * millions of tree nodes of which a few thousand are drawn. This reader
 * reads a seekable folded file twice. The first pass sums the samples
 * and counts every stack prefix into a count-min sketch, a fixed table
 * whose estimates are never below the true counts. The second pass adds
 * each stack only down to its first prefix whose estimate cannot be
 * drawn: that frame is kept, with its exact count, so the frames beside
 * it keep their places, and everything under it is left out. Every frame
 * that svg_write() draws is then in the tree with the same count as in
 * the whole tree, so the SVG is the same, byte for byte; other writers
 * would see a cut tree, so this is for SVG output only.
 */
#ifndef EBPROF_RENDER_PRUNE_H
#define EBPROF_RENDER_PRUNE_H

#include <stdio.h>

#include "render/folded.h"
#include "render/svg.h"

/*
 * Reads the folded file in (rewound to its start for each pass) into p,
 * which must be empty, keeping what svg_write(p, out, opts) draws. Lines
 * are bounded, skipped and counted in *stats as folded_read_bounded()
 * does (stats of the second pass). Returns 0, -ESPIPE when in cannot be
 * rewound (nothing read: read it whole instead), -EAGAIN when the file
 * changed between the passes (p holds a partial read: clear it and read
 * it whole), or what folded_read_bounded() returns.
 */
int prune_read_folded(struct profile *p, FILE *in, const struct lines_bounds *bounds,
		      struct folded_read_stats *stats, const struct svg_options *opts);

#endif
