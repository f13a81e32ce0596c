/*
 * perfscript: `perf script` text in, a profile out, with no Perl: the
 * collapsing flamegraph.pl's stackcollapse-perf.pl does, done here, so
 * `ebprof render` turns a perf recording into our SVG or folded text.
 */
#ifndef EBPROF_RENDER_PERFSCRIPT_H
#define EBPROF_RENDER_PERFSCRIPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "render/lines.h"
#include "render/profile.h"

struct perfscript_read_stats {
	uint64_t samples; /* samples added (each counts 1) */
	uint64_t skipped; /* frame lines that could not be parsed, and: */
	uint64_t too_long; /* of those, lines over bounds->max_line */
	uint64_t too_deep; /* samples deeper than bounds->max_depth, skipped whole */
	uint64_t first_bad_line; /* 1-based, 0: none */
	uint64_t binary_at;	 /* after -EBADMSG: the offset of the NUL byte */
};

/*
 * Adds every sample of `perf script` output (with or without -g) to p,
 * one sample each, as stackcollapse-perf.pl does by default:
 * - the first frame is the process name (comm, spaces kept), then the
 *   frames caller first (perf prints the leaf first);
 * - "+0x1f" offsets are cut from symbols, so a function is one frame;
 * - frames at kernel addresses (the upper half), or whose object is the
 *   kernel ("[kernel.kallsyms]", "vmlinux", a "*.ko" module), are kernel
 *   frames ("_[k]" in folded text); frames from a "/tmp/perf-PID.map" are
 *   JIT frames ("_[j]");
 * - an "[unknown]" user symbol in a file is named as ebprof names it,
 *   "[libfoo.so+0xADDR]" with perf's file-relative address; any other
 *   unnamed frame is "[unknown]".
 * These are the rules of tests/accuracy/perf_collapse.py, so the two
 * collapses of one `perf script` agree (tests/e2e/54_formats_perf_collapse.sh).
 * Lines starting with '#' are perf's header. Lines longer than
 * bounds->max_line are skipped, and samples deeper than bounds->max_depth
 * (bounds may be NULL: the defaults of lines.h). Returns 0, -EBADMSG for
 * binary input, -EOVERFLOW past FOLDED_MAX_COUNT samples, -ENOMEM or -EIO.
 */
int perfscript_read_bounded(struct profile *p, FILE *in, const struct lines_bounds *bounds,
			    struct perfscript_read_stats *stats);

/* perfscript_read_bounded() with the default bounds. */
int perfscript_read(struct profile *p, FILE *in, struct perfscript_read_stats *stats);

/* Whether the start of a file (len bytes) looks like `perf script` output
 * rather than folded stacks: a sample header with a "SECONDS.MICROS:"
 * timestamp, or a tab-indented "ADDRESS SYMBOL (OBJECT)" frame line. */
bool perfscript_detect(const char *head, size_t len);

#endif
