/*
 * `ebprof features`: the kernel features beyond ebprof's core (bpf/kfeat),
 * as the running kernel answers their probes, one a line:
 *
 *   FEATURE        KERNEL  HERE
 *   procmap_query  6.11    no
 *
 * HERE is yes, no, or unknown (the probe needs CAP_BPF and CAP_PERFMON).
 * With -v each missing feature is followed by what ebprof does without it.
 */
#include <stdio.h>
#include <string.h>

#include "bpf/kfeat.h"
#include "cli/cli.h"

static const char *features_here(enum kfeat_state state)
{
	switch (state) {
	case KFEAT_PRESENT:
		return "yes";
	case KFEAT_ABSENT:
		return "no";
	default:
		return "unknown";
	}
}

int cli_features(int argc, char **argv)
{
	bool verbose = argc == 2 && !strcmp(argv[1], "-v");
	struct kfeat kf;
	char line[512];

	if (argc > 1 && !verbose) {
		fprintf(stderr, "usage: ebprof features [-v]\n");
		return 2;
	}
	kfeat_probe(&kf);
	printf("%-16s %-7s %s\n", "FEATURE", "KERNEL", "HERE");
	for (int id = 0; id < KFEAT_NR; id++) {
		const struct kfeat_desc *d = kfeat_desc(id);

		printf("%-16s %-7s %s\n", d->name, d->kernel, features_here(kfeat_state(&kf, id)));
		if (verbose && kfeat_state(&kf, id) == KFEAT_ABSENT) {
			kfeat_missing_message(id, line, sizeof(line));
			printf("  %s\n", line);
		}
	}
	return 0;
}
