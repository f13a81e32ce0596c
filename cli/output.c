/*
 * output: what record and render share at their ends. Argument parsing of
 * numbers, and writing a profile to a file atomically: a
 * temporary file beside the target, then rename(2), so a half-written
 * flame graph never appears under the final name, even on Ctrl-C or a
 * full disk. A target that exists and is not a regular file (/dev/null,
 * a FIFO, a terminal) is written in place: renaming over it would
 * replace the device or the pipe with a file.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"

/* stdio buffer for output files (its default is the 4 KiB block size). */
#define OUTPUT_BUFFER (256 * 1024)

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

int cli_parse_duration(const char *cmd, const char *s, unsigned long *out)
{
	if (!cli_parse_uint(s, 1, 31 * 24 * 3600UL, out))
		return 0;
	fprintf(stderr, "ebprof %s: invalid duration '%s': expected 1 to 2678400 seconds\n", cmd, s);
	return -1;
}

/* Writes p to out, an open stream, and flushes it; 0 or -errno. */
static int write_stream(const struct profile *p, enum format fmt, FILE *out,
			const struct format_options *opts)
{
	int err = format_write(fmt, p, out, opts);

	if (fflush(out) && !err)
		err = -errno;
	return err;
}

int cli_write_profile(const struct profile *p, enum format fmt, const char *path,
		      const struct format_options *opts)
{
	char tmp[PATH_MAX];
	struct stat st;
	FILE *out;
	int fd, err;

	if (!path || !strcmp(path, "-")) {
		err = write_stream(p, fmt, stdout, opts);
		if (err)
			fprintf(stderr, "ebprof: writing to stdout: %s\n", strerror(-err));
		return err ? -1 : 0;
	}
	if (!stat(path, &st) && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		out = fopen(path, "w");
		if (!out) {
			fprintf(stderr, "ebprof: cannot open %s: %s\n", path, strerror(errno));
			return -1;
		}
		err = write_stream(p, fmt, out, opts);
		if (fclose(out) && !err)
			err = -errno;
		if (err)
			fprintf(stderr, "ebprof: writing %s: %s\n", path, strerror(-err));
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
	err = write_stream(p, fmt, out, opts);
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
