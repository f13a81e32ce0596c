/*
 * diff: differential flame graphs. Two profiles of one workload, BEFORE
 * and AFTER, in one tree: AFTER in weight slot 0 (it sets the widths),
 * BEFORE in slot 1; each frame is coloured by how much it changed.
 */
#ifndef EBPROF_RENDER_DIFF_H
#define EBPROF_RENDER_DIFF_H

#include <stdbool.h>
#include <stdio.h>

#include "render/profile.h"

/* Which change colours a frame. Both are in every tooltip. */
enum diff_by {
	DIFF_BY_TOTAL, /* samples through the frame: a change anywhere below a
			* frame shows on it and on every caller on the path */
	DIFF_BY_SELF,  /* samples ending in the frame, as difffolded.pl */
};

struct diff_options {
	const char *title;     /* NULL: "Differential Flame Graph" */
	unsigned int width;    /* pixels; 0: 1200 */
	double min_width;      /* pixels; < 0: 0.1 */
	bool normalize;	       /* scale BEFORE to AFTER's total first */
	enum diff_by by;
};

/* Defaults: by total, not normalized, default width and pruning. */
void diff_options_init(struct diff_options *opts);

/*
 * Adds every stack of before into after's weight slot 1. Frames only
 * BEFORE has are added with no AFTER weight: they have no width, so they
 * are not drawn, but their callers' BEFORE counts include them. Returns 0,
 * -EINVAL when after == before, or -ENOMEM.
 */
int diff_overlay(struct profile *after, const struct profile *before);

/*
 * One frame's change, BEFORE scaled as opts says. pct is the change in
 * percent of BEFORE; when BEFORE is 0 and AFTER is not, pct is +INFINITY.
 */
struct diff_change {
	double before, after, delta, pct; /* for DIFF_BY_TOTAL or _SELF */
};
void diff_change_of(const struct profile *p, const struct profile_node *n,
		    const struct diff_options *opts, enum diff_by by, struct diff_change *out);

/*
 * Writes the differential SVG of a profile built with diff_overlay():
 * widths from AFTER; red where a frame grew, blue where it shrank, the
 * saturation proportional to the change over the largest change of any
 * frame (white: unchanged). Tooltips show BEFORE and AFTER counts, total
 * and self, and the change in percent; the subtitle says what the colour
 * measures and whether BEFORE was normalized. opts may be NULL. Returns 0,
 * -ENOMEM, or a negative errno from the stream.
 */
int diff_write_svg(const struct profile *p, FILE *out, const struct diff_options *opts);

#endif
