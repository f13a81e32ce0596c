/*
 * format: the output formats, in one place. The CLI's --format, the
 * plugin's SpoolFormat and the spool's file names all come from this
 * list; adding a format means adding it here (enum, name, file ending,
 * writer) and nowhere else.
 *
 * It is also where a writer's end is judged: format_stream_error() is how
 * every text writer turns the state of its stream into one return value.
 */
#ifndef EBPROF_RENDER_FORMAT_H
#define EBPROF_RENDER_FORMAT_H

#include <stdio.h>

#include "render/profile.h"

enum format { FORMAT_SVG, FORMAT_FOLDED, FORMAT_SPEEDSCOPE, FORMAT_PPROF, FORMAT_NR };

/* A set of formats is a mask of these bits (the plugin's SpoolFormat). */
#define FORMAT_BIT(f) (1u << (f))

/* For help and error texts. */
#define FORMAT_NAMES "svg, folded, speedscope or pprof"

/* "svg", "folded", "speedscope" or "pprof" (as written) to its format; -1 otherwise. */
int format_parse(const char *name);

/* The file name ending without its dot: "svg", "folded", "speedscope.json", "pb.gz". */
const char *format_ext(enum format f);

/* What the writers take; a zeroed struct is the defaults but min_width (0 draws all). */
struct format_options {
	const char *title;	/* svg title, speedscope name; NULL: each writer's default */
	const char *subtitle;	/* svg subtitle, pprof comment; NULL: none */
	double min_width;	/* svg frames narrower are pruned; < 0: the svg default */
	unsigned int frequency; /* Hz, pprof's period and CPU time; 0: unknown */
	uint64_t unit_ns;	/* ns of time per count (offcpu, wall); 0: counts are samples */
};

/* Writes p as f onto out. Returns 0 or the writer's negative errno. */
int format_write(enum format f, const struct profile *p, FILE *out,
		 const struct format_options *opts);

/*
 * The end of a text writer: flushes f and returns 0, or the stream's
 * error as a negative errno (what the failing call left in errno when it
 * says something, -EIO otherwise). The writer zeroes errno before it
 * starts writing, so that an errno found here came from the stream.
 */
int format_stream_error(FILE *f);

#endif
