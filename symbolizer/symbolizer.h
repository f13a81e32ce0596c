/*
 * symbolizer: raw instruction pointers in, named frames out.
 *
 * This is the facade over the symbol sources: kallsyms (ksyms_*), a
 * process's mappings (procmaps_*), ELF symbol tables (elfsym_*, cached by
 * device and inode) and JIT perf maps (perfmap_*), with separate debug
 * files (debuginfo_*) and demangling (demangle_*). It keeps a small record
 * per process seen or tracked, refreshed when the process's start time
 * shows the PID was reused. Nothing here knows about BPF or collectd.
 */
#ifndef EBPROF_SYMBOLIZER_SYMBOLIZER_H
#define EBPROF_SYMBOLIZER_SYMBOLIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolizer/elfsym.h"
#include "symbolizer/frame.h"
#include "symbolizer/target.h"

struct procmaps;
struct symbolizer;

/* Process records (maps, perf maps) kept by default: a record is ~5 kB
 * without a perf map, so 4096 of them fit; a JIT's perf map can be MBs. */
#define SYMBOLIZER_DEFAULT_PROCESS_BYTES (32ULL << 20)

struct symbolizer_config {
	bool addresses;		 /* append "+0xoff" to resolved names */
	size_t elf_cache_max;	 /* ELF tables kept; 0: default (256) */
	const char *proc_root;	 /* "/proc" unless a test points elsewhere */
	const char *kallsyms;	 /* "/proc/kallsyms" unless a test points elsewhere */
	const char *perfmap_dir; /* "/tmp" unless a test points elsewhere */
	bool raw_names;		 /* keep mangled C++ and Rust names as the files give them */
	const char *debug_root;	 /* separate debug files: "/usr/lib/debug"; "" for none */
	size_t max_processes;	 /* process records kept; 0: default (4096) */
	/* Memory bounds in bytes (0: defaults). elf_cache_bytes: the ELF tables
	 * kept (ELFCACHE_DEFAULT_MAX_BYTES); process_bytes: the process records
	 * with their maps and perf maps (SYMBOLIZER_DEFAULT_PROCESS_BYTES),
	 * enforced at the end of each drain; names_bytes: the demangled names
	 * (DEMANGLE_DEFAULT_MAX_BYTES). */
	uint64_t elf_cache_bytes;
	uint64_t process_bytes;
	uint64_t names_bytes;
	/* Bounds on what a profiled process's files make us read (0: defaults). */
	uint64_t max_file_size;		 /* an ELF or debug file: TARGET_DEFAULT_MAX_FILE_SIZE */
	struct elfsym_bounds elf_bounds; /* one symbol table: elfsym.h */
	uint64_t perfmap_max_bytes;	 /* one perf map: PERFMAP_DEFAULT_MAX_BYTES */
	bool maps_text_only;	 /* never ask PROCMAP_QUERY (kfeat: the kernel lacks it) */
	/*
	 * Fetch the debug file of a file named by .dynsym alone, with no local
	 * debug file, from the DEBUGINFOD_URLS servers (dbgfetch.h), in the
	 * background: its frames are grouped until it arrives, named after.
	 */
	bool debuginfod;
	/*
	 * Expand a named user frame into the functions inlined at its address
	 * (FRAME_INLINED frames, caller first), where its file has DWARF: its
	 * own, a local debug file, or one debuginfod fetched (inlines.h).
	 * inline_bytes bounds the chains kept (0: INLINES_DEFAULT_CHAIN_BYTES).
	 */
	bool inlines;
	uint64_t inline_bytes;
};

void symbolizer_config_init(struct symbolizer_config *config);

/* Returns NULL when out of memory. The caller frees it with symbolizer_free(). */
struct symbolizer *symbolizer_new(const struct symbolizer_config *config);

void symbolizer_free(struct symbolizer *sym);

/*
 * One sample to name: its process (tgid, and start_time in ns after boot,
 * CLOCK_BOOTTIME, the kernel's start_boottime, as struct sampler_sample
 * gives it, 0 when unknown), its name, and its stacks, leaf first as the
 * kernel gives them. All borrowed for the call.
 */
struct symbolizer_sample {
	uint32_t tgid;
	uint64_t start_time;
	const char *comm;
	const uint64_t *uips;
	size_t n_uips;
	const uint64_t *kips;
	size_t n_kips;
};

/*
 * Resolves one sample into frames, root first: the process name, then the
 * user frames from the outermost caller in, then the kernel frames from
 * the outermost in. Writes at most cap frames and returns how many it
 * wrote. Frame names are owned by the symbolizer and stay valid until the
 * next call on sym.
 *
 * Names: FRAME_USER and FRAME_KERNEL frames are function names (C++ and
 * Rust names demangled as c++filt prints them, unless raw_names),
 * FRAME_JIT the perf map's name; vDSO functions are FRAME_USER frames.
 * With config.inlines, a FRAME_USER frame is followed by the functions
 * inlined at its address, FRAME_INLINED, outermost first, so a stack
 * reads caller, inlined callee, its inlined callee, and on to the next
 * real frame; they carry the real frame's mapping and the sampled address.
 * FRAME_UNKNOWN frames are "[file+0xoffset]" (an address in a file but in
 * no named function; the offset is a file offset: in a file named by
 * .dynsym alone (stripped), of the first byte of the function that holds
 * it, from the file's .eh_frame FDEs or the gap between its symbols, so
 * that one unnamed function is one frame; else, or with `addresses`, of
 * the sampled address itself), "[heap]", "[stack]" and
 * other special mappings by their names, "[jit]" for anonymous executable
 * memory of a process with a perf map that does not name the address,
 * "[anon]" for anonymous executable memory of one without, or
 * "[unknown]" (an address in no mapping). When kptr_restrict hides
 * kernel addresses (stats.kernel_hidden) the kernel part of every stack is
 * one FRAME_KERNEL frame named "[kernel]"; the caller should warn once.
 *
 * Where the code is: a named user frame (vDSO included) and a
 * "[file+0xoffset]" frame carry their mapping (file, build-id, range,
 * offset) and address; kernel and JIT frames an address only (the
 * function's first byte, or the sampled instruction with `addresses` or
 * when no function is found). Mappings are owned by the symbolizer and
 * stay valid until the next call on sym, as the names do.
 *
 * A sample that gives its start time and is of the process a record
 * holds needs no read of /proc; one of a process whose PID another has
 * taken since gets "[unknown]" user frames rather than the other's names.
 */
size_t symbolizer_stack(struct symbolizer *sym, const struct symbolizer_sample *sample,
			struct frame *out, size_t cap);

/*
 * Snapshots process tgid now, for a process that may exit before its
 * samples are drained (compilers in a build, shell pipelines): reads its
 * start time and mappings, and loads the symbol table of every mapped
 * file while /proc/PID/map_files/ still reaches it. Frames of that
 * process then resolve after it has exited, until a whole drain has
 * passed without any of them (samples of one process can straddle a
 * drain, so one drain is not enough). Calling it again for a live
 * process re-reads its mappings (call it after an exec); for a reused PID
 * (another start time) it replaces the old record, so the new process
 * never gets the old one's symbols.
 *
 * start_time is as in struct symbolizer_sample; 0: read it from /proc.
 * When the caller knows it, the snapshot is one read of the maps, and a
 * report older than the record held for tgid gives -ESRCH.
 *
 * Memory is bounded by max_processes records, and by process_bytes at
 * the end of each drain; beyond them the record used least recently is
 * dropped (a live process is simply read again when
 * next sampled). Returns 0, -ESRCH when the process is already gone, or
 * -ENOMEM.
 */
int symbolizer_track(struct symbolizer *sym, uint32_t tgid, uint64_t start_time);

/*
 * symbolizer_track(), and *maps set to the executable mappings it read
 * for the process just now (NULL when that read failed: gone, or out of
 * descriptors), owned by sym and valid until the next call into sym, so
 * that whatever else looks at the newly reported process at once (the
 * Python detector, on the same worker) needs no read of its own. given:
 * the mappings another reader of the same report read just now (NULL:
 * read them here), which sym takes, on error too.
 */
int symbolizer_track_maps(struct symbolizer *sym, uint32_t tgid, uint64_t start_time,
			  struct procmaps *given, const struct procmaps **maps);

/*
 * symbolizer_track() of a process whose /proc/PID/maps another reader of
 * the same report found gone just now: its record is kept as for any
 * process gone before its read (the kernel's part of its samples is still
 * named), and its maps are not read again. Returns -ESRCH, or -ENOMEM.
 */
int symbolizer_track_gone(struct symbolizer *sym, uint32_t tgid, uint64_t start_time);

/*
 * Marks the end of a drain: forgets processes that have exited and whose
 * samples had their chance (see symbolizer_track), and trims the caches
 * to their bounds. Only records of processes that neither
 * symbolizer_stack() nor symbolizer_track() confirmed with a start time in
 * this drain are checked against /proc.
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
	uint64_t exited;     /* of processes, those that have exited (kept for their samples) */
	uint64_t evicted;    /* records dropped at the max_processes bound, ever */
	uint64_t elf_held;   /* ELF tables held by process records now */
	uint64_t perfmaps_refused; /* perf maps not read, ever: another user's,
				    * writable by others, or not a regular file */
	uint64_t perfmaps_opened; /* processes whose perf map was looked for, ever: those
				   * with anonymous executable memory, or unreadable maps */
	/* Files of profiled processes the gate refused, ever, by cause (target.h):
	 * their frames come out as "[file+0xoff]" (JIT frames "[anon]"). */
	uint64_t refused[TARGET_CAUSES];
	struct elfsym_breaches elf_breaches; /* ELF bounds hit, ever: tables skipped */
	uint64_t perfmap_lines_too_long;     /* perf-map lines over PERFMAP_MAX_LINE, skipped */
	uint64_t perfmaps_truncated;	     /* perf maps read up to their byte bound only */
	/* Memory held now, in bytes, by cache (the bounds in the config). */
	uint64_t elf_bytes;	/* ELF tables kept, held ones included */
	uint64_t elf_held_bytes; /* of those, held by process records */
	uint64_t process_bytes; /* process records, their maps and perf maps */
	uint64_t perfmap_bytes; /* of those, perf maps */
	uint64_t names_bytes;	/* demangled names, and the names of the last stack */
	uint64_t evicted_over_bytes; /* records dropped at the process_bytes bound, ever */
	/* Ends of drains, ever: records without samples in their drain checked for
	 * their process, and /proc/PID/stat reads that took (the rest: kill(PID, 0)). */
	uint64_t end_checks, end_stat_reads;
	/* Python frames (symbolizer/pycode), ever: named from the cache or read; in
	 * unresolved, those whose code object was replaced since the sample
	 * ("[python: code replaced]") or could not be read ("[python]"). */
	uint64_t python_hits, python_reads, python_stale, python_faults;
	uint64_t python_bytes; /* the code-object cache's heap now */
	uint64_t kernel_bytes; /* the kernel's symbol table (ksyms) */
	/* debuginfod (config.debuginfod), ever but pending (now): dbgfetch.h.
	 * debuginfod_error: it was asked for but could not start (-errno). */
	uint64_t debuginfod_fetched, debuginfod_not_found, debuginfod_failed;
	uint64_t debuginfod_pending;
	int debuginfod_error;
	/* Inlined frames (config.inlines): frames added, ever; look-ups answered
	 * from the cache or walked in DWARF; files with DWARF opened and files
	 * found without, ever; memory held now by the chains (inline_bytes) and
	 * by the open files' debug sections (inline_dwarf_bytes). */
	uint64_t inlined_frames, inline_hits, inline_misses;
	uint64_t inline_files, inline_files_none;
	uint64_t inline_bytes, inline_dwarf_bytes;
};

void symbolizer_stats(const struct symbolizer *sym, struct symbolizer_stats *stats);

/*
 * A counter that moves while sym works on a process's files (every open,
 * every chunk of a long read: target_progress()). The one call that is
 * safe from another thread while sym is in use: a watchdog tells a slow
 * symbolizer from a stuck one by it.
 */
uint64_t symbolizer_progress(const struct symbolizer *sym);

#endif
