/*
 * unwbench: what unwind tables cost to build and to hold, with the very
 * modules the profiler uses (cfi_* then unwtab_*). For each file named:
 * its .eh_frame/.debug_frame bytes, the rows and bytes of its table, and
 * the build time (best of REPS). Then the totals over all files, with one
 * shared rule array, as the profiler holds them.
 *
 *   unwbench [-r REPS] [-q] FILE...
 *   prints "file frame_bytes rows table_bytes bytes_per_row ms ms_per_MB"
 *   per file (not with -q), then a "total ..." line of the same columns
 *   and "rules N".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "symbolizer/cfi.h"
#include "symbolizer/unwtab.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	struct unwtab_rules *rules = unwtab_rules_new(0);
	double total_ms = 0, total_frame = 0, total_bytes = 0, total_rows = 0;
	int reps = 3, opt;
	bool quiet = false;
	uint32_t n_rules;

	while ((opt = getopt(argc, argv, "r:q")) != -1) {
		if (opt == 'r')
			reps = atoi(optarg) > 0 ? atoi(optarg) : 1;
		else if (opt == 'q')
			quiet = true;
		else
			return 2;
	}
	if (!rules)
		return 1;
	for (int i = optind; i < argc; i++) {
		double best = 1e18;
		struct cfi_stats st = { 0 };
		struct unwtab *kept = NULL;

		for (int r = 0; r < reps; r++) {
			double t0 = now_ms();
			struct cfi *cfi;
			struct unwtab *t;

			if (cfi_open(argv[i], NULL, &cfi))
				break;
			if (unwtab_build(cfi, rules, &t)) {
				cfi_free(cfi);
				break;
			}
			cfi_stats(cfi, &st);
			cfi_free(cfi);
			if (now_ms() - t0 < best)
				best = now_ms() - t0;
			unwtab_free(kept);
			kept = t;
		}
		if (!kept)
			continue;
		double frame = (double)(st.eh_frame_bytes + st.debug_frame_bytes);

		if (!quiet)
			printf("%s %.0f %u %zu %.2f %.3f %.1f\n", argv[i], frame, kept->n_rows,
			       unwtab_bytes(kept),
			       kept->n_rows ? (double)unwtab_bytes(kept) / kept->n_rows : 0, best,
			       frame ? best / (frame / 1048576) : 0);
		total_ms += best;
		total_frame += frame;
		total_rows += kept->n_rows;
		total_bytes += (double)unwtab_bytes(kept);
		unwtab_free(kept);
	}
	unwtab_rules_array(rules, &n_rules);
	printf("total %.0f %.0f %.0f %.3f %.1f %.1f\n", total_frame, total_rows, total_bytes,
	       total_rows ? total_bytes / total_rows : 0, total_ms,
	       total_frame ? total_ms / (total_frame / 1048576) : 0);
	printf("rules %u (%zu bytes)\n", n_rules, (size_t)n_rules * sizeof(struct ebprof_unw_rule));
	unwtab_rules_free(rules);
	return 0;
}
