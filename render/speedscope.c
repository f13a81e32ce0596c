/*
 * speedscope: one "sampled" profile in speedscope's file format.
 *
 * The schema's SampledProfile wants, per sample, the stack as indices into
 * a shared frame list, root first, and a parallel list of weights. Each
 * stack with self samples is one sample whose weight is its count, so the
 * file grows with distinct stacks, not with samples. Frames are shared by
 * (name, kind): a kernel and a user function of one name are two frames,
 * the kernel one with file "[kernel.kallsyms]" (JIT ones "[jit]"), which
 * speedscope shows beside the name. Three walks over the tree: frames,
 * samples, weights; only the frame index table is held in memory.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "render/format.h"
#include "render/intern.h"
#include "render/speedscope.h"
#include "render/stacks.h"
#include "symbolizer/utf8.h"

#define SPEEDSCOPE_SCHEMA "https://www.speedscope.app/file-format-schema.json"

static void speedscope_put_string(const char *str, FILE *out)
{
	const unsigned char *s = (const unsigned char *)str;

	putc_unlocked('"', out);
	while (*s) {
		uint32_t cp;
		size_t len = utf8_decode(s, &cp);

		if (!len) {
			fputs_unlocked("\\ufffd", out);
			s++;
		} else if (cp == '"' || cp == '\\') {
			putc_unlocked('\\', out);
			putc_unlocked((int)cp, out);
			s++;
		} else if (cp < 0x20 || cp == 0x7f) {
			fprintf(out, "\\u%04x", (unsigned int)cp);
			s++;
		} else {
			fwrite_unlocked(s, 1, len, out);
			s += len;
		}
	}
	putc_unlocked('"', out);
}

struct speedscope_walk {
	struct intern *frames;
	FILE *out;
	uint64_t samples; /* stacks written so far, for commas */
	int pass;	  /* 0: frames, 1: samples, 2: weights */
	uint64_t unit;	  /* a weight is count * unit */
};

static int speedscope_stack(const struct frame *frames, size_t n, uint64_t count, void *ctx)
{
	struct speedscope_walk *w = ctx;
	uint32_t index;
	int added;

	if (w->pass == 2) {
		fprintf(w->out, "%s%llu", w->samples++ ? "," : "",
			(unsigned long long)count * w->unit);
		return 0;
	}
	if (w->pass == 1)
		fputs_unlocked(w->samples++ ? ",[" : "[", w->out);
	for (size_t i = 0; i < n; i++) {
		if (intern_add(w->frames, frames[i].name, frames[i].kind, &index, &added))
			return -ENOMEM;
		if (w->pass == 1) {
			fprintf(w->out, "%s%u", i ? "," : "", index);
			continue;
		}
		if (!added)
			continue;
		fputs_unlocked(index ? ",\n{\"name\":" : "\n{\"name\":", w->out);
		speedscope_put_string(frames[i].name, w->out);
		if (frames[i].kind == FRAME_KERNEL)
			fputs_unlocked(",\"file\":\"[kernel.kallsyms]\"", w->out);
		else if (frames[i].kind == FRAME_JIT)
			fputs_unlocked(",\"file\":\"[jit]\"", w->out);
		putc_unlocked('}', w->out);
	}
	if (w->pass == 1)
		fputs_unlocked("]\n", w->out);
	return 0;
}

int speedscope_write(const struct profile *p, FILE *out, const struct speedscope_options *opts)
{
	const char *name = opts && opts->name ? opts->name : "ebprof";
	uint64_t unit_ns = opts ? opts->unit_ns : 0;
	struct speedscope_walk w = { .out = out, .unit = unit_ns ? unit_ns : 1 };
	int err;

	w.frames = intern_new();
	if (!w.frames)
		return -ENOMEM;
	errno = 0;
	fputs_unlocked("{\"$schema\":\"" SPEEDSCOPE_SCHEMA "\",\n\"exporter\":\"ebprof\",\n"
		       "\"name\":", out);
	speedscope_put_string(name, out);
	fputs_unlocked(",\n\"activeProfileIndex\":0,\n\"shared\":{\"frames\":[", out);
	for (w.pass = 0; w.pass < 3; w.pass++) {
		w.samples = 0;
		err = stacks_for_each(p, 0, speedscope_stack, &w);
		if (err)
			goto out_free;
		if (w.pass == 0) {
			fputs_unlocked("]},\n\"profiles\":[{\"type\":\"sampled\",\"name\":", out);
			speedscope_put_string(name, out);
			fprintf(out, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%llu,\n"
				     "\"samples\":[\n", unit_ns ? "nanoseconds" : "none",
				(unsigned long long)profile_total(p) * w.unit);
		} else if (w.pass == 1) {
			fputs_unlocked("],\n\"weights\":[", out);
		}
	}
	fputs_unlocked("]}]}\n", out);
	err = format_stream_error(out);
out_free:
	intern_free(w.frames);
	return err;
}
