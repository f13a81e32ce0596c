/*
 * diff: differential flame graphs from one tree with two weights.
 *
 * diff_overlay() lays BEFORE over AFTER as weight slot 1, so one walk of
 * the tree sees both counts of every frame. The SVG writer draws AFTER
 * (svg_write() lays out by slot 0) and this module supplies the colour and
 * the tooltip through the writer's frame hooks.
 *
 * flamegraph.pl's difffolded.pl compares stacks, so only a stack's leaf
 * carries the change, and a caller whose callees shifted looks unchanged.
 * Here the change is measured on every frame, by default in total
 * (inclusive) samples, so that each caller on the path of a change shows
 * it too; colouring by self samples, as difffolded.pl does, is an option.
 * With normalize, BEFORE's counts are multiplied by AFTER's total over
 * BEFORE's, kept as doubles: rounding each stack would make small frames
 * look changed. The product is taken in 128-bit integers and divided
 * once, so a frame that holds all of BEFORE comes out as exactly AFTER's
 * total (a double factor printed totals above 2^64), and counts within
 * 2^53 (the readers' bound) stay exact.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "render/diff.h"
#include "render/stacks.h"
#include "render/svg.h"

void diff_options_init(struct diff_options *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->min_width = -1;
	opts->by = DIFF_BY_TOTAL;
}

static int diff_add_before(const struct frame *frames, size_t n, uint64_t count, void *ctx)
{
	return profile_add_weight(ctx, 1, frames, n, count);
}

int diff_overlay(struct profile *after, const struct profile *before)
{
	if (after == before)
		return -EINVAL;
	return stacks_for_each(before, 0, diff_add_before, after);
}

/* BEFORE's counts are multiplied by num / den: AFTER's total over BEFORE's. */
struct diff_scale {
	uint64_t num, den;
};

static struct diff_scale diff_scale_of(const struct profile *p, const struct diff_options *opts)
{
	uint64_t before = profile_node_total(profile_root(p), 1);

	if (!opts->normalize || !before)
		return (struct diff_scale){ 1, 1 };
	return (struct diff_scale){ profile_total(p), before };
}

/* count * num / den, rounded once. */
static double diff_scaled(uint64_t count, struct diff_scale scale)
{
	unsigned __int128 product = (unsigned __int128)count * scale.num;
	unsigned __int128 whole = product / scale.den;

	return (double)whole + (double)(uint64_t)(product % scale.den) / (double)scale.den;
}

static void diff_change_scaled(const struct profile_node *n, struct diff_scale scale,
			       enum diff_by by, struct diff_change *c)
{
	bool self = by == DIFF_BY_SELF;

	c->after = (double)(self ? profile_node_self(n, 0) : profile_node_total(n, 0));
	c->before = diff_scaled(self ? profile_node_self(n, 1) : profile_node_total(n, 1), scale);
	c->delta = c->after - c->before;
	if (c->before > 0)
		c->pct = 100.0 * c->delta / c->before;
	else
		c->pct = c->after > 0 ? INFINITY : 0.0;
}

void diff_change_of(const struct profile *p, const struct profile_node *n,
		    const struct diff_options *opts, enum diff_by by, struct diff_change *out)
{
	diff_change_scaled(n, diff_scale_of(p, opts), by, out);
}

struct diff_ctx {
	const struct diff_options *opts;
	struct diff_scale scale;
	double max_delta; /* largest |delta| of a drawn frame, by opts->by */
	char note[256];
};

/* The largest change among frames AFTER has (the ones with a width). */
static int diff_measure(const struct profile_node *kid, size_t depth, void *ctx)
{
	struct diff_ctx *d = ctx;
	struct diff_change c;

	(void)depth;
	diff_change_scaled(kid, d->scale, d->opts->by, &c);
	if (fabs(c.delta) > d->max_delta)
		d->max_delta = fabs(c.delta);
	return 0;
}

/* White for no change; towards red (grew) or blue (shrank), with the
 * strongest colour kept light enough for black labels. */
static void diff_fill(const struct profile_node *n, void *ctx, char rgb[8])
{
	struct diff_ctx *d = ctx;
	struct diff_change c;
	double s;
	unsigned int light;

	diff_change_scaled(n, d->scale, d->opts->by, &c);
	s = d->max_delta > 0 ? fabs(c.delta) / d->max_delta : 0;
	if (s > 1)
		s = 1;
	light = 255 - (unsigned int)(200 * s + 0.5);
	if (c.delta > 0)
		snprintf(rgb, 8, "#ff%02x%02x", light, light);
	else if (c.delta < 0)
		snprintf(rgb, 8, "#%02x%02xff", light, light);
	else
		snprintf(rgb, 8, "#ffffff");
}

static int diff_put_change(char *buf, size_t len, const char *what, const struct diff_change *c)
{
	if (isinf(c->pct))
		return snprintf(buf, len, "%sbefore %.0f, after %.0f, new", what, c->before,
				c->after);
	return snprintf(buf, len, "%sbefore %.0f, after %.0f, %+.2f%%", what, c->before,
			c->after, c->pct);
}

/* "before B, after A, +P%; self before b, after a, +p%" with BEFORE as
 * scaled; the name is parsed out of the tooltip by the SVG's script, which
 * looks for " (N " before it, so the note holds no parenthesis. */
static const char *diff_note(const struct profile_node *n, void *ctx)
{
	struct diff_ctx *d = ctx;
	struct diff_change total, self;
	int len;

	diff_change_scaled(n, d->scale, DIFF_BY_TOTAL, &total);
	diff_change_scaled(n, d->scale, DIFF_BY_SELF, &self);
	len = diff_put_change(d->note, sizeof(d->note), "", &total);
	if (len > 0 && (size_t)len < sizeof(d->note))
		diff_put_change(d->note + len, sizeof(d->note) - (size_t)len, "; self ", &self);
	return d->note;
}

int diff_write_svg(const struct profile *p, FILE *out, const struct diff_options *opts)
{
	struct diff_options defaults;
	struct svg_options so;
	struct diff_ctx d = { 0 };
	char subtitle[256];
	int err;

	if (!opts) {
		diff_options_init(&defaults);
		opts = &defaults;
	}
	d.opts = opts;
	d.scale = diff_scale_of(p, opts);
	err = profile_walk(p, 0, diff_measure, NULL, &d);
	if (err)
		return err;
	snprintf(subtitle, sizeof(subtitle),
		 "widths: after. Red grew, blue shrank, in %s; before %s",
		 opts->by == DIFF_BY_SELF ? "self samples (where stacks end)"
					  : "total samples (a change shows on every caller)",
		 opts->normalize ? "normalized to after's total" : "as recorded");
	svg_options_init(&so);
	so.title = opts->title ? opts->title : "Differential Flame Graph";
	so.subtitle = subtitle;
	so.width = opts->width;
	so.min_width = opts->min_width;
	so.frame_fill = diff_fill;
	so.frame_note = diff_note;
	so.frame_ctx = &d;
	return svg_write(p, out, &so);
}
