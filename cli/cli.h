/*
 * cli: the standalone `ebprof` command. main.c dispatches to one file per
 * subcommand; this header is what they share.
 */
#ifndef EBPROF_CLI_CLI_H
#define EBPROF_CLI_CLI_H

#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>

#include "render/lines.h"
#include "render/profile.h"

enum cli_format { CLI_FORMAT_SVG, CLI_FORMAT_FOLDED, CLI_FORMAT_SPEEDSCOPE, CLI_FORMAT_PPROF };

/* "svg|folded|speedscope|pprof", for help and error texts. */
#define CLI_FORMATS "svg, folded, speedscope or pprof"

int cli_record(int argc, char **argv);
int cli_render(int argc, char **argv);
int cli_diff(int argc, char **argv);
int cli_features(int argc, char **argv);

/* Parses "svg", "folded", "speedscope" or "pprof"; -1 otherwise. */
int cli_parse_format(const char *s);

/* The usual file name ending of a format: ".svg", ".folded", ".speedscope.json", ".pb.gz". */
const char *cli_format_ext(enum cli_format fmt);

/* Parses a whole decimal number in [min, max]; -1 on anything else. */
int cli_parse_uint(const char *s, unsigned long min, unsigned long max, unsigned long *out);

/*
 * Parses a size in bytes, "4096" or with a unit ("64M", "64MiB", "64MB";
 * K, M, G, T are powers of 1024, as collectd.conf's sizes), in [min,
 * max]; -1 on anything else.
 */
int cli_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* --- input: what render and diff share (cli/input.c) --- */

/* The long options of the line bounds, and their getopt values. */
enum { CLI_OPT_MAX_LINE = 512, CLI_OPT_MAX_DEPTH };
#define CLI_BOUND_OPTIONS                                                    \
	{ "max-line", required_argument, NULL, CLI_OPT_MAX_LINE },           \
	{ "max-depth", required_argument, NULL, CLI_OPT_MAX_DEPTH }
#define CLI_BOUND_USAGE                                                                 \
	"      --max-line SIZE   skip lines longer than this (default 64MiB)\n"        \
	"      --max-depth N     skip stacks deeper than this (default 524288 frames)\n"

/* Sets bounds from --max-line or --max-depth (opt); -1 after saying why on stderr. */
int cli_parse_bound(const char *cmd, int opt, const char *arg, struct lines_bounds *bounds);

/*
 * Opens an input file for reading with a big buffer; NULL after saying
 * why on stderr ("Is a directory" for a directory).
 */
FILE *cli_open_input(const char *cmd, const char *path);

/* Prints why reading path failed: binary input, counts past 2^53, or errno. */
void cli_report_read_error(const char *cmd, const char *path, int err, uint64_t binary_at);

/* ": N longer than B bytes (--max-line), M deeper than D frames (--max-depth)", or "". */
void cli_bounds_note(char *buf, size_t len, uint64_t too_long, uint64_t too_deep,
		     const struct lines_bounds *bounds);

/*
 * Writes p as fmt to path ("-" or NULL: stdout). frequency (Hz, 0:
 * unknown) sets pprof's period and CPU time. A file is written to a
 * temporary name beside it and renamed, so a reader never sees half of it.
 * Returns 0, or prints why on stderr and returns -1.
 */
int cli_write_profile(const struct profile *p, enum cli_format fmt, const char *path,
		      const char *title, const char *subtitle, double min_width,
		      unsigned int frequency);

#endif
