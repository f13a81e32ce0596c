/*
 * cli: the standalone `ebprof` command. main.c dispatches to one file per
 * subcommand; this header is what they share.
 */
#ifndef EBPROF_CLI_CLI_H
#define EBPROF_CLI_CLI_H

#include <stdbool.h>
#include <stdio.h>

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
 * Writes p as fmt to path ("-" or NULL: stdout). frequency (Hz, 0:
 * unknown) sets pprof's period and CPU time. A file is written to a
 * temporary name beside it and renamed, so a reader never sees half of it.
 * Returns 0, or prints why on stderr and returns -1.
 */
int cli_write_profile(const struct profile *p, enum cli_format fmt, const char *path,
		      const char *title, const char *subtitle, double min_width,
		      unsigned int frequency);

#endif
