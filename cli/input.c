/*
 * input: what render and diff share at their start. Opening an input
 * (a directory is said to be one, not read into "Input/output error"),
 * the bounds on what its lines may hold (--max-line, --max-depth), and
 * one wording for what went wrong or was skipped, so that a user reads
 * the same sentence from both commands.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"

/* Big reads, not 4 KiB ones: inputs run to hundreds of megabytes. */
#define INPUT_READ_BUFFER (256 * 1024)

FILE *cli_open_input(const char *cmd, const char *path)
{
	struct stat st;
	FILE *in = fopen(path, "r");

	if (!in) {
		fprintf(stderr, "ebprof %s: cannot open %s: %s\n", cmd, path, strerror(errno));
		return NULL;
	}
	if (!fstat(fileno(in), &st) && S_ISDIR(st.st_mode)) {
		fprintf(stderr, "ebprof %s: cannot read %s: %s\n", cmd, path, strerror(EISDIR));
		fclose(in);
		return NULL;
	}
	setvbuf(in, NULL, _IOFBF, INPUT_READ_BUFFER);
	return in;
}

int cli_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long v;
	char digits[32];
	size_t len = strspn(s, "0123456789");
	unsigned int shift = 0;

	if (!len || len >= sizeof(digits))
		return -1;
	if (s[len]) {
		const char *units = "KMGT", *u = strchr(units, s[len]);

		if (!u || (s[len + 1] && strcmp(s + len + 1, "iB") && strcmp(s + len + 1, "B")))
			return -1;
		shift = 10 * (unsigned int)(u - units + 1);
	}
	memcpy(digits, s, len);
	digits[len] = '\0';
	if (cli_parse_uint(digits, 0, ~0UL, &v) || (shift && v > (~0ULL >> shift)))
		return -1;
	*out = (uint64_t)v << shift;
	return *out < min || *out > max ? -1 : 0;
}

int cli_parse_bound(const char *cmd, int opt, const char *arg, struct lines_bounds *bounds)
{
	uint64_t v;

	if (opt == CLI_OPT_MAX_LINE) {
		if (cli_parse_size(arg, 1024, 1ULL << 32, &v)) {
			fprintf(stderr, "ebprof %s: invalid --max-line '%s': expected 1KiB to 4GiB "
					"(bytes, or with K, M or G)\n", cmd, arg);
			return -1;
		}
		bounds->max_line = (size_t)v;
		return 0;
	}
	if (cli_parse_size(arg, 1, 1ULL << 28, &v)) {
		fprintf(stderr, "ebprof %s: invalid --max-depth '%s': expected 1 to 268435456 "
				"frames\n", cmd, arg);
		return -1;
	}
	bounds->max_depth = (size_t)v;
	return 0;
}

void cli_bounds_note(char *buf, size_t len, uint64_t too_long, uint64_t too_deep,
		     const struct lines_bounds *bounds)
{
	size_t max_line = bounds && bounds->max_line ? bounds->max_line : LINES_DEFAULT_MAX_LINE;
	size_t max_depth = bounds && bounds->max_depth ? bounds->max_depth
						       : LINES_DEFAULT_MAX_DEPTH;
	char line_part[96] = "", depth_part[96] = "";

	buf[0] = '\0';
	if (!too_long && !too_deep)
		return;
	if (too_long)
		snprintf(line_part, sizeof(line_part), "%llu longer than %zu bytes (--max-line)",
			 (unsigned long long)too_long, max_line);
	if (too_deep)
		snprintf(depth_part, sizeof(depth_part), "%llu deeper than %zu frames (--max-depth)",
			 (unsigned long long)too_deep, max_depth);
	snprintf(buf, len, ": %s%s%s", line_part, too_long && too_deep ? ", " : "", depth_part);
}

void cli_report_read_error(const char *cmd, const char *path, int err, uint64_t binary_at)
{
	if (err == -EBADMSG)
		fprintf(stderr,
			"ebprof %s: %s: binary input (a NUL byte at offset %llu): expected folded "
			"stacks or perf script text\n",
			cmd, path, (unsigned long long)binary_at);
	else if (err == -EOVERFLOW)
		fprintf(stderr,
			"ebprof %s: %s: the sample counts add up to more than 2^53: not a "
			"profile\n", cmd, path);
	else
		fprintf(stderr, "ebprof %s: reading %s: %s\n", cmd, path, strerror(-err));
}
