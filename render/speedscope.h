/*
 * speedscope: a profile as speedscope's JSON file format
 * (https://www.speedscope.app/file-format-schema.json), one "sampled"
 * profile, for https://www.speedscope.app and its offline build.
 */
#ifndef EBPROF_RENDER_SPEEDSCOPE_H
#define EBPROF_RENDER_SPEEDSCOPE_H

#include <stdio.h>

#include "render/profile.h"

struct speedscope_options {
	const char *name; /* the profile's and the file's name; NULL: "ebprof" */
	/* Counts are time, unit_ns ns each: weights are written in
	 * nanoseconds, unit "nanoseconds". 0: counts are samples, unit "none". */
	uint64_t unit_ns;
};

/*
 * Writes the file: shared frames, one sample per stack (frame indices root
 * first) and integer weights (sample counts), unit "none". opts may be
 * NULL. Names are written as valid JSON strings: invalid UTF-8 becomes
 * U+FFFD and control characters are escaped. Returns 0, -ENOMEM, or a
 * negative errno from the stream.
 */
int speedscope_write(const struct profile *p, FILE *out, const struct speedscope_options *opts);

#endif
