/*
 * unwinder: user space's half of unwinding by tables. It keeps the unwind
 * table of every file the sampled processes map, loads it into the BPF
 * program's maps (bpf/unwmaps), tells the program where each process's
 * code is, and unwinds the stacks the program copied out before a
 * process's tables were there, with the very same tables.
 *
 * Tables are built once per file (cfi_* then unwtab_*), keyed by build-id
 * (or by device and inode when a file has none), and shared by every
 * process that maps the file: a hundred shells share one libc table.
 * Their memory is bounded in bytes (what the kernel holds for them); past
 * the bound, tables no process uses go first, least recently used, and a
 * new one that still does not fit is not loaded (its frames are walked by
 * frame pointer, and counted). A table no process uses any more is kept,
 * loaded, while it is among the keep_tables let go last or for keep_ms
 * after its last user left, so that a binary that starts again and again
 * (a compiler, an interpreter) is built once; past both it is freed at the
 * end of a drain. Builds, reuses of kept tables and evictions are counted.
 *
 * Reading a process's files can block (a file on a hung disk or a FUSE
 * server that stopped answering, reached through a loop device or an
 * overlay), so the thread that tracks processes never reads one. Tracking
 * reads /proc only; a file with no table yet gets a queued build, which a
 * builder (render/capture's worker, under its stall watchdog) runs in
 * three steps: unwinder_job_take(), unwinder_job_read() (the only step
 * that touches the file, holding no lock and nothing of the unwinder, so
 * that a builder stuck in it can be abandoned), unwinder_job_finish().
 * A build whose builder was abandoned is given up (unwinder_job_stalled):
 * that file has no table (frame pointers) and is not read again. A
 * process is loaded into the program's maps once all its tables are
 * built; until then its samples are copied, and the copies' walk waits
 * for the tables, at most until wait_ms after they were queued, counted
 * by cause when it goes on without one. Without a builder
 * (unwinder_set_builder not called: tests, tools) builds run in place.
 *
 * Files are opened through the gate (symbolizer/target.h), as the
 * symbolizer opens them: /proc/PID/map_files/ (deleted files, other mount
 * namespaces), then /proc/PID/root/PATH, a regular file within the size
 * bound and the very one the mapping names, else refused and counted by
 * cause (unwinder_stats.refused_open). Separate debug files go through the
 * same gate. Files on FUSE and network file systems (whose server may
 * never answer a read) are not read at all: found by their device in
 * /proc/PID/mountinfo, walked by frame pointer, counted
 * (unwinder_stats.remote). The vDSO's table comes from our own vDSO
 * image, which is every process's.
 *
 * Thread-safe: the sampler's watch thread tracks processes and unwinds
 * copies while the builder builds and the drain thread ends drains. The
 * unwinder's lock is never held across a read of a process's file (but in
 * place, without a builder).
 */
#ifndef EBPROF_SYMBOLIZER_UNWINDER_H
#define EBPROF_SYMBOLIZER_UNWINDER_H

#include <stdbool.h>
#include <stdint.h>

#include "symbolizer/target.h"

struct procmaps;
struct unwinder;
struct unwmaps;
struct sampler_copy;

#define UNWINDER_DEFAULT_MAX_BYTES (64ull << 20)
#define UNWINDER_DEFAULT_KEEP_TABLES 32
#define UNWINDER_DEFAULT_KEEP_MS (10 * 60 * 1000)
#define UNWINDER_DEFAULT_WAIT_MS 1000

struct unwinder_config {
	uint64_t max_bytes;	/* table memory bound; 0: UNWINDER_DEFAULT_MAX_BYTES */
	uint32_t max_frames;	/* frames a copy is unwound to; 0: EBPROF_DEFAULT_FRAMES */
	const char *proc_root;	/* "/proc" unless a test points elsewhere */
	const char *debug_root; /* separate debug files: "/usr/lib/debug"; "" for none */
	uint64_t max_file_size; /* the gate's size bound; 0: TARGET_DEFAULT_MAX_FILE_SIZE */
	/* Tables no process uses kept (within max_bytes): the last this many let go... */
	uint32_t keep_tables;	/* unwinder_config_init(): UNWINDER_DEFAULT_KEEP_TABLES */
	uint32_t keep_ms;	/* ...and any let go less than this ago; _DEFAULT_KEEP_MS */
	uint64_t (*now_ms)(void); /* a monotonic clock in ms; NULL: CLOCK_MONOTONIC (tests) */
	uint32_t wait_ms;	/* how long a copy waits for a table; 0: UNWINDER_DEFAULT_WAIT_MS */
};

void unwinder_config_init(struct unwinder_config *config);

/*
 * Makes an unwinder that loads into maps (the sampler's; it must outlive
 * the unwinder). Returns 0 and sets *out (free it with unwinder_free()),
 * or -ENOMEM.
 */
int unwinder_new(struct unwmaps *maps, const struct unwinder_config *config,
		 struct unwinder **out);

/* Unloads every process and table it loaded, and frees; NULL is fine. */
void unwinder_free(struct unwinder *u);

/*
 * Reads process tgid's executable mappings (start_time: its start, ns after
 * boot, as the sampler reports it), finds the table of each mapped file or
 * queues its build, and loads the process's mappings once all are built
 * (now, when none is queued, or without a builder). Call it when the
 * sampler reports the process (again after an exec). Reads nothing but
 * /proc with a builder. Returns 0, -ESRCH when the process is gone (its
 * maps file no longer there), or the read's error (-ENOMEM, -EMFILE...).
 */
int unwinder_track(struct unwinder *u, uint32_t tgid, uint64_t start_time);

/*
 * unwinder_track() that hands over what it read in *maps (the caller
 * frees it with procmaps_free(); NULL when the read failed), so that
 * another reader of the same report needs no read of its own. Returns as
 * unwinder_track().
 */
int unwinder_track_kept(struct unwinder *u, uint32_t tgid, uint64_t start_time,
			struct procmaps **maps);

/*
 * unwinder_track() of maps the caller has (a fork's, lent by its parent),
 * as they were from read_at on (ns after boot): reads nothing. A copy
 * sampled after read_at whose pc they lack asks for a read of the
 * process's own, as after any read. Returns 0 or a negative errno.
 */
int unwinder_track_given(struct unwinder *u, uint32_t tgid, uint64_t start_time,
			 const struct procmaps *maps, uint64_t read_at);

/*
 * Whether process tgid, tracked under start_time, still waits for a table
 * being built (its samples are copied meanwhile); false when it is loaded,
 * or not tracked (gone, or never).
 */
bool unwinder_pending(struct unwinder *u, uint32_t tgid, uint64_t start_time);

/*
 * Makes builds queued from now on wait for a builder, which wake(ctx) is
 * called for (on the thread that queued, with no lock of the unwinder
 * held; the builder may call unwinder_job_* under a lock of its own).
 * Call it before the first track.
 */
void unwinder_set_builder(struct unwinder *u, void (*wake)(void *ctx), void *ctx);

/* One queued build, owned by the builder between take and finish. */
struct unwinder_job;

/* Takes the oldest queued build: 0 and *out, or -ENOENT when none is queued. */
int unwinder_job_take(struct unwinder *u, struct unwinder_job **out);

/*
 * Opens and reads the job's file through gate (the caller's, used by one
 * thread at a time; its refusals are counted to the unwinder at finish).
 * May block as long as the file does; touches nothing of the unwinder.
 */
void unwinder_job_read(struct unwinder_job *job, struct target *gate);

/*
 * Installs what the job read (the table, and the processes waiting for it),
 * and frees it. A job not read (its process's files are not to be read)
 * leaves the file without a table, not remembered: the next process that
 * maps it queues it again.
 */
void unwinder_job_finish(struct unwinder *u, struct unwinder_job *job);

/* A number for the job, for unwinder_job_stalled(). */
uint64_t unwinder_job_ticket(const struct unwinder_job *job);

/* The process whose mapping the job reads the file of (tgid, start as tracked). */
void unwinder_job_process(const struct unwinder_job *job, uint32_t *tgid, uint64_t *start_time);

/*
 * The builder of job ticket was abandoned: its file gets no table (frame
 * pointers) and is not read again; the processes waiting for it are loaded.
 */
void unwinder_job_stalled(struct unwinder *u, uint64_t ticket);

/* Frees a job without installing it (an abandoned builder's); NULL is fine. */
void unwinder_job_free(struct unwinder_job *job);

/*
 * Unwinds a copied sample into ips (leaf first, at most cap frames), by the
 * tables (tracking the process first if needed, and waiting for its
 * tables as long as unwinder.h's top says): the sampler's copy handler
 * (sampler_copy_fn; ctx is the unwinder). *stop gets how the walk
 * ended (enum unw_result). A pc in none of the process's mappings stops
 * the walk and sets *stale, unless *stale is set already (the retry after
 * the process was tracked again): then that frame is walked by frame
 * pointer. Returns the number of frames.
 */
uint32_t unwinder_unwind_copy(const struct sampler_copy *copy, uint64_t *ips, uint32_t cap,
			      int *stop, bool *stale, void *ctx);

/*
 * Marks the end of a drain: forgets processes that have exited, and frees
 * tables no process used during the whole drain that are not kept.
 */
void unwinder_end_drain(struct unwinder *u);

struct unwinder_stats {
	uint64_t processes;	     /* tracked now */
	uint64_t tables;	     /* loaded now */
	uint64_t table_bytes;	     /* their rows and indexes */
	uint64_t table_kernel_bytes; /* what the kernel holds for them (whole pages) */
	uint64_t rows;		     /* rows in them */
	uint64_t max_bytes;
	uint64_t rules, rules_bytes, mappings_bytes; /* the fixed arrays, allocated at load */
	uint64_t built;		     /* tables built, ever */
	uint64_t build_us;	     /* time spent building them, ever */
	uint64_t frame_bytes;	     /* .eh_frame and .debug_frame bytes they were built from */
	uint64_t refused;	     /* tables not loaded, ever: over the bound, or no slot */
	uint64_t kept;		     /* of the tables loaded now, those no process uses */
	uint64_t reused;	     /* kept tables a new process took up again, ever */
	uint64_t evicted;	     /* tables dropped at the bound (bytes or slots), ever */
	uint64_t expired;	     /* kept tables freed, past keep_tables and keep_ms, ever */
	uint64_t no_cfi;	     /* files mapped with no unwind info at all, ever */
	uint64_t refused_open[TARGET_CAUSES]; /* files the gate did not open, by cause */
	uint64_t remote;	     /* mappings on FUSE or network file systems, not read, ever */
	uint64_t build_stalled;	     /* builds given up: their builder stalled, ever */
	uint64_t copy_waits;	     /* copies that waited for a table being built, ever */
	/* Copies unwound by frame pointer through a file whose table they waited for: */
	uint64_t wait_timeout;	     /* still being built at wait_ms */
	uint64_t wait_stalled;	     /* its build stalled */
	/*
	 * Copies of a process whose mappings could not be read, ever: it had
	 * exited before its report was handled. Walked by frame pointer.
	 */
	uint64_t copy_gone;
	/* Copies with a pc in none of the process's mappings as last read, ever: */
	uint64_t copy_rereads;	/* taken after that read: its maps read again */
	/*
	 * not read again, walked by frame pointer from there: taken before
	 * that read (the code was unmapped since, or the process exec'd), or
	 * a pc the read a copy asked for in the last second missed as well
	 */
	uint64_t copy_unmapped;
};

void unwinder_stats(struct unwinder *u, struct unwinder_stats *stats);

#endif
