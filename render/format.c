/*
 * format: the list of output formats and the choice of writer (see
 * format.h). The table below is the only list; everything else asks it.
 */
#include <errno.h>
#include <string.h>

#include "render/folded.h"
#include "render/format.h"
#include "render/pprof.h"
#include "render/speedscope.h"
#include "render/svg.h"

static const struct {
	const char *name, *ext;
} formats[FORMAT_NR] = {
	[FORMAT_SVG] = { "svg", "svg" },
	[FORMAT_FOLDED] = { "folded", "folded" },
	[FORMAT_SPEEDSCOPE] = { "speedscope", "speedscope.json" },
	[FORMAT_PPROF] = { "pprof", "pb.gz" },
};

int format_parse(const char *name)
{
	for (int f = 0; f < FORMAT_NR; f++)
		if (!strcmp(name, formats[f].name))
			return f;
	return -1;
}

const char *format_ext(enum format f)
{
	return (unsigned int)f < FORMAT_NR ? formats[f].ext : formats[FORMAT_SVG].ext;
}

int format_write(enum format f, const struct profile *p, FILE *out,
		 const struct format_options *opts)
{
	struct speedscope_options sso = { .name = opts->title, .unit_ns = opts->unit_ns };
	struct pprof_options po = { .frequency = opts->frequency, .comment = opts->subtitle,
				    .unit_ns = opts->unit_ns };
	struct svg_options so;

	switch (f) {
	case FORMAT_FOLDED:
		return folded_write(p, out);
	case FORMAT_SPEEDSCOPE:
		return speedscope_write(p, out, &sso);
	case FORMAT_PPROF:
		return pprof_write(p, out, &po);
	default:
		svg_options_init(&so);
		so.title = opts->title;
		so.subtitle = opts->subtitle;
		so.unit_ns = opts->unit_ns;
		if (opts->min_width >= 0)
			so.min_width = opts->min_width;
		return svg_write(p, out, &so);
	}
}

int format_stream_error(FILE *f)
{
	int earlier = errno; /* the writer zeroed errno before writing */

	errno = 0;
	if (fflush(f) && errno)
		return -errno;
	if (!ferror(f))
		return 0;
	return earlier ? -earlier : -EIO;
}
