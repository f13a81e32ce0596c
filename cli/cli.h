/*
 * cli: the standalone `ebprof` command. main.c dispatches to one file per
 * subcommand; this header is what they share.
 */
#ifndef EBPROF_CLI_CLI_H
#define EBPROF_CLI_CLI_H

#include <stdio.h>

#include "render/profile.h"

enum cli_format { CLI_FORMAT_SVG, CLI_FORMAT_FOLDED };

int cli_record(int argc, char **argv);
int cli_render(int argc, char **argv);

/* Parses "svg" or "folded"; -1 otherwise. */
int cli_parse_format(const char *s);

/* Parses a whole decimal number in [min, max]; -1 on anything else. */
int cli_parse_uint(const char *s, unsigned long min, unsigned long max, unsigned long *out);

/*
 * Writes p as fmt to path ("-" or NULL: stdout). A file is written to a
 * temporary name beside it and renamed, so a reader never sees half of it.
 * Returns 0, or prints why on stderr and returns -1.
 */
int cli_write_profile(const struct profile *p, enum cli_format fmt, const char *path,
		      const char *title, const char *subtitle, double min_width);

#endif
