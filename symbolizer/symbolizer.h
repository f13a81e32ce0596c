/*
 * symbolizer: raw instruction pointers in, named frames out.
 *
 * This is the facade over the symbol sources: kallsyms (ksyms_*), a
 * process's mappings (procmaps_*), ELF symbol tables (elfsym_*, cached by
 * device and inode) and JIT perf maps (perfmap_*). It keeps a small record
 * per process seen, refreshed when the process's start time shows the PID
 * was reused. Nothing here knows about BPF or collectd.
 */
#ifndef EBPROF_SYMBOLIZER_SYMBOLIZER_H
#define EBPROF_SYMBOLIZER_SYMBOLIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolizer/frame.h"

struct symbolizer;

struct symbolizer_config {
	bool addresses;		 /* append "+0xoff" to resolved names */
	size_t elf_cache_max;	 /* ELF tables kept; 0: default (64) */
	const char *proc_root;	 /* "/proc" unless a test points elsewhere */
	const char *kallsyms;	 /* "/proc/kallsyms" unless a test points elsewhere */
	const char *perfmap_dir; /* "/tmp" unless a test points elsewhere */
};

void symbolizer_config_init(struct symbolizer_config *config);

/* Returns NULL when out of memory. The caller frees it with symbolizer_free(). */
struct symbolizer *symbolizer_new(const struct symbolizer_config *config);

void symbolizer_free(struct symbolizer *sym);

/*
 * Resolves one sample into frames, root first: the process name, then the
 * user frames from the outermost caller in, then the kernel frames from
 * the outermost in. uips and kips are leaf first, as the kernel gives them.
 * Writes at most cap frames and returns how many it wrote. Frame names are
 * owned by the symbolizer and stay valid until the next call on sym.
 *
 * Names: FRAME_USER and FRAME_KERNEL frames are function names, FRAME_JIT
 * the perf map's name. FRAME_UNKNOWN frames are "[file+0xoffset]" (an
 * address in a file but in no function; the offset is a file offset),
 * "[vdso]"-like special mappings, or "[unknown]". When kptr_restrict hides
 * kernel addresses (stats.kernel_hidden) the kernel part of every stack is
 * one FRAME_KERNEL frame named "[kernel]"; the caller should warn once.
 */
size_t symbolizer_stack(struct symbolizer *sym, uint32_t tgid, const char *comm,
			const uint64_t *uips, size_t n_uips, const uint64_t *kips, size_t n_kips,
			struct frame *out, size_t cap);

/*
 * Marks the end of a drain: forgets processes that have exited and trims
 * the caches to their bounds.
 */
void symbolizer_end_drain(struct symbolizer *sym);

struct symbolizer_stats {
	uint64_t frames;     /* frames resolved, process names excluded */
	uint64_t unresolved; /* of those, FRAME_UNKNOWN, and "[kernel]" when hidden */
	uint64_t elf_cache_hits;
	uint64_t elf_cache_misses;
	uint64_t elf_cached; /* ELF tables held now */
	uint64_t processes;  /* process records held now */
	bool kernel_hidden;  /* kptr_restrict hides kernel addresses */
};

void symbolizer_stats(const struct symbolizer *sym, struct symbolizer_stats *stats);

#endif
