/*
 * svg: a self-contained, interactive flame graph.
 *
 * The file needs no external script or style: click to zoom, reset, regex
 * search with "Matched: x%" computed from sample counts, and tooltips with
 * samples and percent. Frames narrower than min_width pixels are pruned.
 * Every name is escaped and stripped of control characters, and labels are
 * cut with ".." on UTF-8 boundaries, so a hostile symbol name can neither
 * break the XML nor inject script.
 */
#ifndef EBPROF_RENDER_SVG_H
#define EBPROF_RENDER_SVG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "render/profile.h"

struct svg_options {
	const char *title;    /* NULL: "Flame Graph" */
	const char *subtitle; /* NULL: none */
	unsigned int width;   /* pixels; 0: 1200 */
	unsigned int frame_height; /* pixels; 0: 16 */
	double min_width;     /* pixels; < 0: 0.1, as flamegraph.pl */
	const char *count_name; /* "samples" when NULL */
	/* Counts are time, unit_ns ns each (record --mode offcpu|wall):
	 * tooltips say the time ("2.01 s") instead of a count. 0: counts. */
	unsigned long long unit_ns;
	int inverted;	      /* icicle: root at the top */

	/* A writer's own frame style, for graphs coloured by something else
	 * than the name (render/diff.c). frame_fill writes "#rrggbb" and a
	 * NUL into rgb; frame_note returns extra tooltip text, shown after
	 * the count and percent (plain text, escaped by the writer; NULL or
	 * "": none). Both get the node, profile_root() for the "all" frame.
	 * NULL: the default colours and tooltips. */
	void (*frame_fill)(const struct profile_node *n, void *ctx, char rgb[8]);
	const char *(*frame_note)(const struct profile_node *n, void *ctx);
	void *frame_ctx;
};

/* Defaults for every field. Start from this rather than from zeros: a zero
 * min_width draws every frame, however narrow, and the file grows with it. */
void svg_options_init(struct svg_options *opts);

/*
 * Writes the graph; opts may be NULL for the defaults. A profile without
 * samples still gives a valid SVG that says "no samples". Returns 0,
 * -ENOMEM (before anything is written but for the tree walk's own buffer),
 * or a negative errno from the stream.
 */
int svg_write(const struct profile *p, FILE *out, const struct svg_options *opts);

/*
 * Whether svg_write() with opts (NULL: the defaults) draws a frame of
 * `samples` in a profile of `total`, by the very computation it uses.
 * A frame that is not drawn hides its whole subtree. For a fixed total,
 * true for some samples means true for every larger count; for fixed
 * samples, false at some total means false at every larger total.
 */
bool svg_frame_drawn(const struct svg_options *opts, uint64_t samples, uint64_t total);

#endif
