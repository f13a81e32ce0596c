/*
 * cli: the standalone `ebprof` command. main.c dispatches to one file per
 * subcommand; this header is what they share.
 */
#ifndef EBPROF_CLI_CLI_H
#define EBPROF_CLI_CLI_H

#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>

#include "bpf/kfeat.h"
#include "bpf/sampler.h"
#include "render/capture.h"
#include "render/format.h"
#include "render/lines.h"
#include "render/profile.h"

int cli_record(int argc, char **argv);
int cli_render(int argc, char **argv);
int cli_diff(int argc, char **argv);
int cli_features(int argc, char **argv);
int cli_top(int argc, char **argv);

/* Parses a whole decimal number in [min, max]; -1 on anything else. */
int cli_parse_uint(const char *s, unsigned long min, unsigned long max, unsigned long *out);

/* Parses -d SECONDS of record and top (1 s to 31 days); -1 after saying why. */
int cli_parse_duration(const char *cmd, const char *s, unsigned long *out);

/*
 * Parses a size in bytes, "4096" or with a unit ("64M", "64MiB", "64MB";
 * K, M, G, T are powers of 1024, as collectd.conf's sizes), in [min,
 * max]; -1 on anything else.
 */
int cli_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* --- sampling: what record and top share (cli/sampling.c) --- */

#define CLI_MAX_TARGETS 1024

struct cli_sampling {
	struct sampler_config sampler; /* tgids and comms point into this struct */
	uint32_t tgids[CLI_MAX_TARGETS];
	const char *comms[CLI_MAX_TARGETS]; /* borrowed from argv */
	unsigned long drain_ms;
	bool addresses;
	bool inlines; /* FRAME_INLINED frames where DWARF is (--inline) */
	unsigned long stall_s;
	uint64_t max_symbol_table, max_perf_map;
	unsigned long unwind_mib; /* table memory bound; 0: the unwinder's default */
	struct kfeat features; /* probed by cli_sampling_start() */
};

/* The getopt values of the shared long options, after the line bounds'. */
enum { CLI_OPT_DRAIN = 600, CLI_OPT_NO_KERNEL, CLI_OPT_NO_USER, CLI_OPT_IDLE, CLI_OPT_SELF,
       CLI_OPT_ADDRESSES, CLI_OPT_STALL, CLI_OPT_MAX_SYMTAB, CLI_OPT_MAX_PERFMAP,
       CLI_OPT_UNWIND, CLI_OPT_MAX_FRAMES, CLI_OPT_UNWIND_MEMORY, CLI_OPT_MODE,
       CLI_OPT_OFFCPU_PERIOD, CLI_OPT_OFFCPU_MIN, CLI_OPT_OFFCPU_RATE, CLI_OPT_PYTHON,
       CLI_OPT_NO_PYTHON, CLI_OPT_INLINE, CLI_OPT_NO_INLINE, CLI_OPT_SAMPLING_END };
#define CLI_SAMPLING_SHORTOPTS "p:c:F:"
#define CLI_SAMPLING_OPTIONS                                                     \
	{ "pid", required_argument, NULL, 'p' },                                 \
	{ "comm", required_argument, NULL, 'c' },                                \
	{ "frequency", required_argument, NULL, 'F' },                           \
	{ "drain-interval-ms", required_argument, NULL, CLI_OPT_DRAIN },         \
	{ "no-kernel", no_argument, NULL, CLI_OPT_NO_KERNEL },                   \
	{ "no-user", no_argument, NULL, CLI_OPT_NO_USER },                       \
	{ "include-idle", no_argument, NULL, CLI_OPT_IDLE },                     \
	{ "include-self", no_argument, NULL, CLI_OPT_SELF },                     \
	{ "addresses", no_argument, NULL, CLI_OPT_ADDRESSES },                   \
	{ "stall-timeout", required_argument, NULL, CLI_OPT_STALL },             \
	{ "max-symbol-table", required_argument, NULL, CLI_OPT_MAX_SYMTAB },     \
	{ "max-perf-map", required_argument, NULL, CLI_OPT_MAX_PERFMAP },       \
	{ "unwind", required_argument, NULL, CLI_OPT_UNWIND },                   \
	{ "max-frames", required_argument, NULL, CLI_OPT_MAX_FRAMES },           \
	{ "unwind-memory", required_argument, NULL, CLI_OPT_UNWIND_MEMORY },     \
	{ "mode", required_argument, NULL, CLI_OPT_MODE },                       \
	{ "offcpu-period-us", required_argument, NULL, CLI_OPT_OFFCPU_PERIOD },  \
	{ "offcpu-min-us", required_argument, NULL, CLI_OPT_OFFCPU_MIN },        \
	{ "offcpu-max-rate", required_argument, NULL, CLI_OPT_OFFCPU_RATE },     \
	{ "python", no_argument, NULL, CLI_OPT_PYTHON },                         \
	{ "no-python", no_argument, NULL, CLI_OPT_NO_PYTHON },                   \
	{ "inline", no_argument, NULL, CLI_OPT_INLINE },                         \
	{ "no-inline", no_argument, NULL, CLI_OPT_NO_INLINE }
#define CLI_SAMPLING_USAGE                                                                   \
	"  -p, --pid PID          profile this process (repeatable); default: all\n"          \
	"  -c, --comm NAME        profile processes with this exact name (repeatable)\n"      \
	"  -F, --frequency HZ     samples per second per CPU (default 99)\n"                  \
	"      --mode MODE        cpu (on-CPU stacks, the default), offcpu (where\n"        \
	"                         threads wait, and how long) or wall (both: on-CPU\n"      \
	"                         plus off-CPU time is each thread's wall time)\n"          \
	"      --offcpu-period-us US  mean off-CPU time between two off-CPU samples\n"      \
	"                         (each worth that much; default 1000)\n"                   \
	"      --offcpu-min-us US don't count waits shorter than this (default 0)\n"        \
	"      --offcpu-max-rate N  off-CPU sample updates a second per CPU, at most\n"     \
	"                         (default 5000; the rest are counted as throttled)\n"      \
	"      --drain-interval-ms MS  how often to empty the kernel maps (default 1000)\n"   \
	"      --unwind MODE      user stacks by fp (frame pointers, as the kernel\n"          \
	"                         walks them, 127 frames), dwarf (.eh_frame tables,\n"        \
	"                         frame pointers where a file has none) or auto\n"            \
	"                         (dwarf where the kernel can, else fp; the default)\n"       \
	"      --max-frames N     deepest user stack with tables (1-4096, default 1024)\n"    \
	"      --unwind-memory MIB  bound on unwind tables' memory (default 64)\n"            \
	"      --no-python        no Python functions: CPython 3.11's frames show as\n"      \
	"                         the interpreter's (--python, the default, names\n"         \
	"                         them \"qualname (file.py:line)\"; needs dwarf)\n"          \
	"      --no-kernel        leave kernel stacks out\n"                                  \
	"      --no-user          leave user stacks out\n"                                    \
	"      --include-idle     sample the idle task too\n"                                 \
	"      --include-self     sample ebprof itself too\n"                                 \
	"      --addresses        add +0xOFFSET to every resolved frame; unnamed code\n"      \
	"                         keeps its exact address (default: its function's)\n"       \
	"      --inline           show functions inlined into a frame as frames of\n"         \
	"                         their own, NAME_[i], where the file has DWARF (its\n"    \
	"                         own, a debug file, or debuginfod's); --no-inline,\n"      \
	"                         the default, charges them to the real function\n"         \
	"      --stall-timeout S  give up on a symbolizer making no progress for S\n"         \
	"                         seconds (default 5; see README, Reliability)\n"             \
	"      --max-symbol-table SIZE  skip ELF symbol tables larger than this\n"            \
	"                         (default 256MiB)\n"                                         \
	"      --max-perf-map SIZE  read at most this much of a JIT perf map\n"               \
	"                         (default 256MiB)\n"

/* Defaults: 99 Hz, both stacks, everything, drained every second. */
void cli_sampling_init(struct cli_sampling *o);

/*
 * What one count of the profile is, in ns of time: 0 in cpu mode (the
 * profile counts CPU-clock samples), 1000 in offcpu and wall modes (it
 * counts microseconds).
 */
uint64_t cli_sampling_unit_ns(const struct cli_sampling *o);

/*
 * Takes one option getopt_long() returned (opt, with its argument arg):
 * 1 if it was a sampling option and is set, 0 if it is not one, -1 after
 * saying on stderr why the value is wrong. cmd names the command.
 */
int cli_sampling_option(const char *cmd, struct cli_sampling *o, int opt, const char *arg);

/*
 * After getopt_long() is done with argv: -1 (said why) for an argument
 * left over (argv[optind]) or when nothing would be sampled.
 */
int cli_sampling_finish(const char *cmd, struct cli_sampling *o, int argc, char **argv);

/*
 * Probes the kernel (saying what it lacks unless quiet), makes the
 * capture, opens the sampler and attaches them. Returns 0 with *cap and
 * *s set (free with capture_free(), then sampler_free()), or -1 after
 * saying why on stderr, with both NULL.
 */
int cli_sampling_start(const char *cmd, struct cli_sampling *o, bool quiet,
		       struct capture **cap, struct sampler **s);

/* From now on SIGINT and SIGTERM only set the flag cli_stop_signal() returns. */
void cli_stop_on_signals(void);
int cli_stop_signal(void); /* the signal that asked to stop, or 0 */

double cli_now(void); /* CLOCK_MONOTONIC, in seconds */
/* Sleeps until cli_now() reaches deadline, or a stop signal arrives. */
void cli_sleep_until(double deadline);

/* True while at least one traced PID still runs (always true system-wide). */
bool cli_sampling_targets_alive(const struct cli_sampling *o);

/*
 * Returns the samples lost so far, by every cause, and writes into buf
 * the causes in the words record's summary uses ("kernel stack 3,
 * stacks map full 1"): all of them, or only those with losses.
 */
uint64_t cli_losses(char *buf, size_t len, const struct sampler_stats *t,
		    const struct capture_stats *cs, bool all);

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
 * Writes p as fmt to path ("-" or NULL: stdout), with opts (see
 * render/format.h). A file is written to a temporary name beside it and
 * renamed, so a reader never sees half of it. Returns 0, or prints why on
 * stderr and returns -1.
 */
int cli_write_profile(const struct profile *p, enum format fmt, const char *path,
		      const struct format_options *opts);

#endif
