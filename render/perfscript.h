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

#include "render/profile.h"

struct perfscript_read_stats {
	uint64_t samples; /* samples added (each counts 1) */
	uint64_t skipped; /* frame lines that could not be parsed */
	uint64_t first_bad_line; /* 1-based, 0: none */
};

/*
 * Adds every sample of `perf script` output (with or without -g) to p,
 * one sample each, as stackcollapse-perf.pl does by default:
 * - the first frame is the process name (comm, spaces kept), then the
 *   frames caller first (perf prints the leaf first);
 * - "+0x1f" offsets are cut from symbols, so a function is one frame;
 * - frames whose object is the kernel ("[kernel.kallsyms]", "[kernel.*]",
 *   or a "*.ko" module) are kernel frames ("_[k]" in folded text), and
 *   frames from a "/tmp/perf-PID.map" are JIT frames ("_[j]");
 * - an "[unknown]" symbol in a known object becomes "[object]" (its file
 *   name), else stays "[unknown]".
 * Lines starting with '#' are perf's header. Returns 0, -ENOMEM or -EIO.
 */
int perfscript_read(struct profile *p, FILE *in, struct perfscript_read_stats *stats);

/* Whether the start of a file (len bytes) looks like `perf script` output
 * rather than folded stacks: a sample header with a "SECONDS.MICROS:"
 * timestamp, or a tab-indented "ADDRESS SYMBOL (OBJECT)" frame line. */
bool perfscript_detect(const char *head, size_t len);

#endif
