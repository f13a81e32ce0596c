/*
 * output: what record and render share at their ends. Argument parsing of
 * numbers and formats, and writing a profile to a file atomically: a
 * temporary file beside the target, then rename(2), so a half-written
 * flame graph never appears under the final name, even on Ctrl-C or a
 * full disk.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "render/folded.h"
#include "render/pprof.h"
#include "render/speedscope.h"
#include "render/svg.h"

/* stdio buffer for output files (its default is the 4 KiB block size). */
#define OUTPUT_BUFFER (256 * 1024)

int cli_parse_format(const char *s)
{
	if (!strcmp(s, "svg"))
		return CLI_FORMAT_SVG;
	if (!strcmp(s, "folded"))
		return CLI_FORMAT_FOLDED;
	if (!strcmp(s, "speedscope"))
		return CLI_FORMAT_SPEEDSCOPE;
	if (!strcmp(s, "pprof"))
		return CLI_FORMAT_PPROF;
	return -1;
}

const char *cli_format_ext(enum cli_format fmt)
{
	switch (fmt) {
	case CLI_FORMAT_FOLDED:
		return ".folded";
	case CLI_FORMAT_SPEEDSCOPE:
		return ".speedscope.json";
	case CLI_FORMAT_PPROF:
		return ".pb.gz";
	default:
		return ".svg";
	}
}

int cli_parse_uint(const char *s, unsigned long min, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* What a write takes besides the profile and the stream. */
struct write_args {
	enum cli_format fmt;
	const char *title, *subtitle;
	double min_width;
	unsigned int frequency;
	uint64_t unit_ns; /* ns per count; 0: counts are samples */
};

static int write_stream(const struct profile *p, FILE *out, const struct write_args *a)
{
	struct speedscope_options sso = { .name = a->title, .unit_ns = a->unit_ns };
	struct pprof_options po = { .frequency = a->frequency, .comment = a->subtitle,
				    .unit_ns = a->unit_ns };
	enum cli_format fmt = a->fmt;
	struct svg_options opts;
	int err;

	if (fmt == CLI_FORMAT_FOLDED)
		return folded_write(p, out);
	if (fmt == CLI_FORMAT_SPEEDSCOPE)
		return speedscope_write(p, out, &sso);
	if (fmt == CLI_FORMAT_PPROF)
		return pprof_write(p, out, &po);
	svg_options_init(&opts);
	opts.title = a->title;
	opts.subtitle = a->subtitle;
	opts.unit_ns = a->unit_ns;
	if (a->min_width >= 0)
		opts.min_width = a->min_width;
	err = svg_write(p, out, &opts);
	return err;
}

int cli_write_profile(const struct profile *p, enum cli_format fmt, const char *path,
		      const char *title, const char *subtitle, double min_width,
		      unsigned int frequency)
{
	return cli_write_timed_profile(p, fmt, path, title, subtitle, min_width, frequency, 0);
}

int cli_write_timed_profile(const struct profile *p, enum cli_format fmt, const char *path,
			    const char *title, const char *subtitle, double min_width,
			    unsigned int frequency, uint64_t unit_ns)
{
	struct write_args args = { fmt, title, subtitle, min_width, frequency, unit_ns };
	char tmp[PATH_MAX];
	FILE *out;
	int fd, err;

	if (!path || !strcmp(path, "-")) {
		err = write_stream(p, stdout, &args);
		if (!err && fflush(stdout))
			err = -errno;
		if (err)
			fprintf(stderr, "ebprof: writing to stdout: %s\n", strerror(-err));
		return err ? -1 : 0;
	}
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", path) >= (int)sizeof(tmp)) {
		fprintf(stderr, "ebprof: output path too long: %s\n", path);
		return -1;
	}
	fd = mkstemp(tmp);
	if (fd < 0) {
		fprintf(stderr, "ebprof: cannot create a file beside %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	out = fdopen(fd, "w");
	if (!out) {
		err = -errno;
		close(fd);
		goto unlink_tmp;
	}
	/* A flame graph is megabytes: write it in big pieces, not 4 KiB ones. */
	setvbuf(out, NULL, _IOFBF, OUTPUT_BUFFER);
	err = write_stream(p, out, &args);
	if (fflush(out) && !err)
		err = -errno;
	if (fsync(fileno(out)) && !err)
		err = -errno;
	if (fclose(out) && !err)
		err = -errno;
	if (err)
		goto unlink_tmp;
	if (chmod(tmp, 0644) || rename(tmp, path)) {
		err = -errno;
		goto unlink_tmp;
	}
	return 0;

unlink_tmp:
	fprintf(stderr, "ebprof: writing %s: %s (nothing was written under that name)\n", path,
		strerror(-err));
	unlink(tmp);
	return -1;
}
