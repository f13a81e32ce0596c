/*
 * pprof: a profile as the gzip-compressed profile.proto that `go tool
 * pprof`, Pyroscope, Parca and Google Cloud Profiler read.
 */
#ifndef EBPROF_RENDER_PPROF_H
#define EBPROF_RENDER_PPROF_H

#include <stdint.h>
#include <stdio.h>

#include "render/profile.h"

struct pprof_options {
	/* Sampling frequency (Hz). It sets the period (1e9 / Hz ns) and with
	 * it the second sample type, cpu/nanoseconds. 0: unknown (folded
	 * input says nothing about it): only samples/count is written, rather
	 * than a CPU time made up from a guessed frequency. */
	unsigned int frequency;
	int64_t time_nanos;	/* start of the recording, ns since the epoch; 0: unset */
	int64_t duration_nanos; /* 0: unset */
	const char *comment;	/* NULL: none */
	/* Counts are time, unit_ns ns each (ebprof record --mode offcpu|wall):
	 * the one sample type is then time/nanoseconds, and frequency is not
	 * used. 0: counts are samples. */
	uint64_t unit_ns;
};

/*
 * Encodes p as an uncompressed Profile message into *out (*len bytes),
 * which the caller frees with free(). opts may be NULL. Returns 0, -ENOMEM,
 * or -EOVERFLOW when a count times the period does not fit an int64.
 */
int pprof_encode(const struct profile *p, const struct pprof_options *opts, uint8_t **out,
		 size_t *len);

/* pprof_encode(), gzip-compressed onto out. Returns 0, an error of
 * pprof_encode(), -EIO from zlib, or a negative errno from the stream. */
int pprof_write(const struct profile *p, FILE *out, const struct pprof_options *opts);

#endif
