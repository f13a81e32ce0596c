/*
 * ebprof: the command-line face of the profiler. `record` samples with the
 * BPF sampler and writes a flame graph or folded stacks; `render` turns
 * folded stacks (ours, flamegraph.pl's or stackcollapse output) or
 * `perf script` text into any of the formats; `diff` draws what changed
 * between two profiles; `features` lists what the kernel offers beyond
 * the core. All are built from the same modules as the collectd plugin.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static void usage(FILE *out)
{
	fputs("usage: ebprof record [-p PID]... [-c COMM]... [-d SECONDS] [-F HZ]\n"
	      "                     [--format svg|folded|speedscope|pprof] [-o FILE] [options]\n"
	      "       ebprof render [FILE.folded|FILE.perf-script]... [-o FILE.svg] [options]\n"
	      "       ebprof diff BEFORE.folded AFTER.folded [-o diff.svg] [--normalize]\n"
	      "       ebprof features [-v]     what this kernel offers beyond the core\n"
	      "\n"
	      "Run `ebprof COMMAND --help` for the options.\n",
	      out);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "record"))
		return cli_record(argc - 1, argv + 1);
	if (!strcmp(argv[1], "render"))
		return cli_render(argc - 1, argv + 1);
	if (!strcmp(argv[1], "diff"))
		return cli_diff(argc - 1, argv + 1);
	if (!strcmp(argv[1], "features"))
		return cli_features(argc - 1, argv + 1);
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "ebprof: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
