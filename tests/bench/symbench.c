/*
 * symbench: times ebprof's symbol path on its own, for the symbolization
 * rows of the benchmark. It links build/libebprof.a and calls the very
 * modules the profiler uses (elfsym for the symbol tables, demangle for
 * C++ names), without BPF, so the figures are the symbolizer's alone.
 *
 *   symbench load LIB REPS LOOKUPS
 *       Loads LIB's function symbols (with its separate debug file, if
 *       any, as the symbolizer does) REPS times from a warm page cache
 *       (the cold start of a profiler meeting LIB for the first time) and
 *       prints the median load time; then resolves LOOKUPS random
 *       addresses of LIB's executable segments (the steady state, table
 *       loaded) and prints lookups per second.
 *   symbench resolve ADDRS REPS [NAMES]
 *       ADDRS holds "OFFSET PATH" lines: file offsets of sampled frames
 *       (bench.py takes them from `perf script`, so perf and we resolve
 *       the same addresses). The first pass starts cold: it loads each
 *       file's table when an address first needs it, and names every
 *       address, demangled. Then REPS warm passes give addresses per
 *       second. NAMES, if given, gets one name per address, for checking
 *       that we and perf agree.
 *   symbench inline ADDRS REPS [NAMES]
 *       As resolve, and each address then expanded into the functions
 *       inlined there (symbolizer/inlines, from the file's DWARF or its
 *       debug file), as `ebprof record --inline` does; NAMES gets
 *       "function;inlined;..." per address. Set against `perf report
 *       --inline` on the same perf.data by bench.py.
 *
 *   symbench group ADDRS REPS [NAMES]
 *       As resolve, for stripped files: each table also gets its
 *       functions' bounds from .eh_frame (cfi_bound_functions(), as the
 *       symbolizer does), and an address no symbol names is named by the
 *       start of its function, "[file+0xSTART]" (elfsym_function_start()).
 *
 * Output is one line of KEY=VALUE pairs for bench.py.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "symbolizer/cfi.h"
#include "symbolizer/debuginfo.h"
#include "symbolizer/demangle.h"
#include "symbolizer/elfsym.h"
#include "symbolizer/inlines.h"

#define SYMBENCH_MAX_FILES 256
#define SYMBENCH_PATH_MAX 4096

struct symbench_addr {
	uint64_t offset;
	int file; /* index into the file table */
};

struct symbench_files {
	char *paths[SYMBENCH_MAX_FILES];
	struct elfsym *tables[SYMBENCH_MAX_FILES];
	int n;
	bool grouped; /* tables with function bounds, unnamed code grouped */
};

static double symbench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int symbench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* xorshift64: reproducible addresses without libc's rand() state. */
static uint64_t symbench_random(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

/* Separate debug files where the symbolizer looks by default (libc6-dbg...). */
static int symbench_open(const char *path, struct elfsym **out)
{
	struct debuginfo_paths paths = { .debug_root = "/usr/lib/debug", .path = path };

	return elfsym_open_debug(path, &paths, out);
}

static int symbench_load(const char *lib, int reps, long lookups)
{
	double *times = calloc((size_t)reps, sizeof(*times));
	uint64_t state = 0x2545f4914f6cdd1dULL, found = 0;
	struct elfsym *elf = NULL;
	double start, elapsed;
	int err;

	if (!times)
		return -ENOMEM;
	for (int i = 0; i < reps; i++) {
		elfsym_free(elf);
		start = symbench_now();
		err = symbench_open(lib, &elf);
		times[i] = symbench_now() - start;
		if (err) {
			fprintf(stderr, "symbench: %s: %s\n", lib, strerror(-err));
			free(times);
			return err;
		}
	}
	qsort(times, (size_t)reps, sizeof(*times), symbench_cmp_double);

	/* Random addresses inside the executable segments, as samples land. */
	size_t n_exec = 0;
	const struct elfsym_segment *exec[16];

	for (size_t i = 0; i < elfsym_segment_count(elf) && n_exec < 16; i++) {
		const struct elfsym_segment *seg = elfsym_segment_at(elf, i);

		if ((seg->flags & 1) && seg->memsz) /* PF_X */
			exec[n_exec++] = seg;
	}
	start = symbench_now();
	for (long i = 0; i < lookups && n_exec; i++) {
		const struct elfsym_segment *seg = exec[i % (long)n_exec];
		uint64_t vaddr = seg->vaddr + symbench_random(&state) % seg->memsz;

		found += elfsym_lookup(elf, vaddr, NULL) != NULL;
	}
	elapsed = symbench_now() - start;
	printf("symbols=%zu load_ms=%.3f lookups=%ld found=%" PRIu64 " lookups_per_s=%.0f\n",
	       elfsym_count(elf), times[reps / 2] * 1e3, lookups, found,
	       elapsed > 0 ? (double)lookups / elapsed : 0.0);
	elfsym_free(elf);
	free(times);
	return 0;
}

static int symbench_file(struct symbench_files *files, const char *path)
{
	for (int i = 0; i < files->n; i++)
		if (!strcmp(files->paths[i], path))
			return i;
	if (files->n == SYMBENCH_MAX_FILES)
		return -E2BIG;
	files->paths[files->n] = strdup(path);
	if (!files->paths[files->n])
		return -ENOMEM;
	return files->n++;
}

static int symbench_read_addrs(const char *name, struct symbench_files *files,
			       struct symbench_addr **out, size_t *n_out)
{
	char path[SYMBENCH_PATH_MAX], line[SYMBENCH_PATH_MAX + 64];
	struct symbench_addr *addrs = NULL;
	size_t n = 0, cap = 0;
	uint64_t offset;
	FILE *f = fopen(name, "r");
	int err = 0;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%" SCNx64 " %4095s", &offset, path) != 2)
			continue;
		if (n == cap) {
			struct symbench_addr *grown;

			cap = cap ? 2 * cap : 4096;
			grown = realloc(addrs, cap * sizeof(*addrs));
			if (!grown) {
				err = -ENOMEM;
				break;
			}
			addrs = grown;
		}
		addrs[n].offset = offset;
		addrs[n].file = symbench_file(files, path);
		if (addrs[n].file < 0) {
			err = addrs[n].file;
			break;
		}
		n++;
	}
	fclose(f);
	if (err) {
		free(addrs);
		return err;
	}
	*out = addrs;
	*n_out = n;
	return 0;
}

/* Opens path's table with its functions' bounds from .eh_frame. */
static int symbench_open_grouped(const char *path, struct elfsym **out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	err = elfsym_open_fd(fd, out);
	if (!err) {
		err = cfi_bound_functions(fd, *out);
		if (err) {
			elfsym_free(*out);
			*out = NULL;
		}
	}
	close(fd);
	return err;
}

/*
 * Names one address as the symbolizer would; NULL when no function holds
 * it. With files->grouped, an address no symbol names is named by the
 * start of its function, "[file+0xSTART]", written into line (cap bytes).
 */
static const char *symbench_name(struct symbench_files *files, struct demangle_cache *names,
				 const struct symbench_addr *addr, char *line, size_t cap)
{
	const char *path = files->paths[addr->file], *base = strrchr(path, '/');
	const struct elfsym_symbol *sym;
	const struct elfsym *elf;
	uint64_t vaddr, start;

	if (!files->tables[addr->file] &&
	    (files->grouped ? symbench_open_grouped : symbench_open)(path,
								  &files->tables[addr->file]))
		/* path is still files->paths[addr->file], freed by symbench_resolve(). */
		return NULL; /* NOLINT(clang-analyzer-unix.Malloc) */
	elf = files->tables[addr->file];
	if (elfsym_offset_to_vaddr(elf, addr->offset, &vaddr))
		return NULL;
	sym = elfsym_lookup(elf, vaddr, NULL);
	if (sym)
		return demangle_cache_get(names, sym->name);
	if (!files->grouped || elfsym_function_start(elf, vaddr, &start))
		return NULL;
	snprintf(line, cap, "[%s+0x%" PRIx64 "]", base ? base + 1 : path,
		 addr->offset - (vaddr - start));
	return line;
}

/* inlines_open_fn: the file itself if it has DWARF, else its debug file. */
static int symbench_open_dwarf(void *arg)
{
	const char *path = arg;
	struct debuginfo_paths paths = { .debug_root = "/usr/lib/debug", .path = path };
	int fd = open(path, O_RDONLY | O_CLOEXEC), debug;
	Elf *e;

	if (fd < 0)
		return -errno;
	e = elf_begin(fd, ELF_C_READ, NULL);
	debug = e ? debuginfo_open(e, &paths) : -ENOENT;
	elf_end(e);
	if (debug < 0)
		return fd; /* its own .debug_info, or none: inlines finds out */
	close(fd);
	return debug;
}

/* Names one address and the functions inlined there into line (cap bytes). */
static const char *symbench_inline_name(struct symbench_files *files, struct inlines *in,
					struct demangle_cache *names,
					const struct symbench_addr *addr, char *line, size_t cap)
{
	const char *name = symbench_name(files, names, addr, line, cap);
	const char *const *chain;
	const unsigned char *id;
	size_t n = 0, len, used;
	uint64_t vaddr;

	if (!name)
		return NULL;
	used = (size_t)snprintf(line, cap, "%s", name);
	id = elfsym_build_id(files->tables[addr->file], &len);
	if (!id || elfsym_offset_to_vaddr(files->tables[addr->file], addr->offset, &vaddr) ||
	    inlines_lookup(in, id, len, vaddr, symbench_open_dwarf, files->paths[addr->file],
			   &chain, &n))
		return line;
	for (size_t i = 0; i < n && used < cap; i++)
		used += (size_t)snprintf(line + used, cap - used, ";%s",
					 demangle_cache_get(names, chain[i]));
	return line;
}

enum symbench_mode { SYMBENCH_NAMES, SYMBENCH_INLINE, SYMBENCH_GROUP };

/* One address named in mode; NULL when nothing names it. */
static const char *symbench_one(enum symbench_mode mode, struct symbench_files *files,
				struct inlines *in, struct demangle_cache *names,
				const struct symbench_addr *addr, char *line, size_t cap)
{
	switch (mode) {
	case SYMBENCH_INLINE:
		return symbench_inline_name(files, in, names, addr, line, cap);
	default:
		return symbench_name(files, names, addr, line, cap);
	}
}

static int symbench_resolve(const char *addrs_name, int reps, const char *names_out,
			    enum symbench_mode mode)
{
	bool expand = mode == SYMBENCH_INLINE;
	struct inlines *in = expand ? inlines_new(NULL) : NULL;
	char line[8192];
	struct symbench_files files = { .grouped = mode == SYMBENCH_GROUP };
	struct demangle_cache *names = demangle_cache_new(0);
	struct symbench_addr *addrs = NULL;
	double start, cold, warm = 0;
	size_t n = 0, named = 0;
	FILE *out = NULL;
	int err;

	if (!names || (expand && !in)) {
		demangle_cache_free(names);
		return -ENOMEM;
	}
	err = symbench_read_addrs(addrs_name, &files, &addrs, &n);
	if (err)
		goto free_addrs; /* the paths read before the error */
	if (names_out && !(out = fopen(names_out, "w"))) {
		err = -errno;
		goto free_addrs;
	}
	start = symbench_now();
	for (size_t i = 0; i < n; i++) {
		const char *name = symbench_one(mode, &files, in, names, &addrs[i], line,
						sizeof(line));

		named += name != NULL;
		if (out)
			fprintf(out, "%s\n", name ? name : "[unknown]");
	}
	cold = symbench_now() - start;
	for (int r = 0; r < reps; r++) {
		start = symbench_now();
		for (size_t i = 0; i < n; i++)
			named += symbench_one(mode, &files, in, names, &addrs[i], line,
					      sizeof(line)) != NULL;
		warm += symbench_now() - start;
	}
	printf("addresses=%zu files=%d named=%zu cold_ms=%.3f warm_per_s=%.0f", n, files.n,
	       named / (size_t)(reps + 1), cold * 1e3,
	       warm > 0 ? (double)n * reps / warm : 0.0);
	if (in) {
		struct inlines_stats st;

		inlines_stats(in, &st);
		printf(" inline_walked=%" PRIu64 " inline_dwarf_files=%" PRIu64
		       " inline_bytes=%" PRIu64, st.misses, st.files_dwarf,
		       st.chain_bytes + st.dwarf_bytes);
	}
	printf("\n");
	if (out)
		fclose(out);
free_addrs:
	for (int i = 0; i < files.n; i++) {
		elfsym_free(files.tables[i]);
		free(files.paths[i]);
	}
	free(addrs);
	demangle_cache_free(names);
	inlines_free(in);
	return err;
}

int main(int argc, char **argv)
{
	int err;

	if (argc == 5 && !strcmp(argv[1], "load"))
		err = symbench_load(argv[2], atoi(argv[3]), atol(argv[4]));
	else if ((argc == 4 || argc == 5) && !strcmp(argv[1], "resolve"))
		err = symbench_resolve(argv[2], atoi(argv[3]), argc == 5 ? argv[4] : NULL,
				       SYMBENCH_NAMES);
	else if ((argc == 4 || argc == 5) && !strcmp(argv[1], "inline"))
		err = symbench_resolve(argv[2], atoi(argv[3]), argc == 5 ? argv[4] : NULL,
				       SYMBENCH_INLINE);
	else if ((argc == 4 || argc == 5) && !strcmp(argv[1], "group"))
		err = symbench_resolve(argv[2], atoi(argv[3]), argc == 5 ? argv[4] : NULL,
				       SYMBENCH_GROUP);
	else {
		fprintf(stderr, "usage: symbench load LIB REPS LOOKUPS\n"
				"       symbench resolve ADDRS REPS [NAMES]\n"
				"       symbench inline ADDRS REPS [NAMES]\n"
				"       symbench group ADDRS REPS [NAMES]\n");
		return 2;
	}
	if (err)
		fprintf(stderr, "symbench: %s\n", strerror(-err));
	return err ? 1 : 0;
}
