/*
 * pyproc: is this process a CPython we can walk, and where are its parts?
 *
 * When the sampler reports a process, the capture's worker asks pyproc
 * whether it runs CPython: whether a file it maps executable (its
 * executable, a libpython3.x, or any other) exports Py_Version and
 * _PyEval_EvalFrameDefault. The version comes from
 * Py_Version in the process's memory, and picks a row of the per-version
 * layout table below (struct offsets that differ from version to
 * version); a version without a row is reported (one warning, the caller
 * prints it) and the process is profiled natively. The row is never
 * trusted blindly: PyCode_Type's tp_basicsize and its member table
 * (co_flags, co_firstlineno, co_qualname, ...) as the process itself
 * holds them must agree with it, and so must the thread state: the key of
 * CPython's thread-state TSD slot (_PyRuntime's autoTSSkey), the slot
 * where glibc keeps it (fsbase-relative, what the BPF walk reads), and
 * the main thread's state found there. What passes becomes a
 * struct ebprof_py_proc for the program's py_procs map (bpf/python.bpf.h).
 *
 * The same table tells the symbolizer (symbolizer/pycode) how to read a
 * code object: a Python frame carries its row's index (bpf/ebprof.h).
 */
#ifndef EBPROF_SYMBOLIZER_PYPROC_H
#define EBPROF_SYMBOLIZER_PYPROC_H

#include <stddef.h>
#include <stdint.h>

#include <linux/types.h>

#include "bpf/ebprof.h"

/* One CPython version's layout: byte offsets, from its headers, checked at attach. */
struct pyproc_layout {
	unsigned int major, minor;
	/* _PyRuntimeState: autoTSSkey (a Py_tss_t: int initialized, then the key), the
	 * interpreters' list head; PyInterpreterState's first thread state;
	 * PyThreadState's pthread_t. */
	uint16_t runtime_tss, runtime_interp_head, interp_threads_head, tstate_thread_id;
	uint16_t tstate_cframe, cframe_frame;
	uint16_t frame_code, frame_previous, frame_prev_instr, frame_is_entry;
	/* PyCodeObject: its size (where the bytecode starts) and fields. */
	uint16_t code_size, code_flags, code_argcount, code_kwonly, code_firstlineno;
	uint16_t code_filename, code_name, code_qualname, code_linetable;
	/* str (PyASCIIObject: length, state; data after it, or after
	 * PyCompactUnicodeObject when not ASCII) and bytes (size, data). */
	uint16_t str_length, str_state, str_ascii_data, str_compact_data;
	uint16_t bytes_size, bytes_data;
};

/* The row for a version tag of a Python frame (struct ebprof_py_proc.version), or NULL. */
const struct pyproc_layout *pyproc_layout(unsigned int version);

/*
 * glibc's TSD slot of pthread key `key` from the thread's fsbase (struct
 * pthread's specific_1stblock, glibc 2.36 on x86-64: 0x310, 16 bytes a
 * key, the value 8 in), for keys below 32; -1 for others. The attach check
 * (the main thread's state found there) rejects a glibc laid out otherwise.
 */
int64_t pyproc_tsd_offset(uint32_t key);

/*
 * The verdicts on the files examined (every file mapped executable, by
 * device, inode, size and mtime): what each exports, or that it is no
 * interpreter. Each distinct file's symbol table is read once, however
 * many processes run it and however often a starting Python is asked
 * again. A file with no interpreter (or one the gate refused as a device
 * or as too large) is also known for a few seconds by its mapping's
 * device and inode alone, with no open (pyproc.c, PYPROC_SEEN_NS). A ring: the oldest verdict goes first. Not
 * thread-safe.
 */
struct pyproc_cache;

#define PYPROC_CACHE_DEFAULT_ENTRIES 1024
#define PYPROC_CACHE_MAX_BYTES (1u << 20) /* entries are fixed-size: the entries' bound */

/* 0 entries: PYPROC_CACHE_DEFAULT_ENTRIES. NULL when out of memory. */
struct pyproc_cache *pyproc_cache_new(size_t max_entries);
void pyproc_cache_free(struct pyproc_cache *c);

/*
 * The most bytes of one symbol or string table read from a file (0:
 * ELFSYM_DEFAULT_MAX_TABLE, also the bound without a cache); a larger
 * table is passed over, as the symbolizer does (elfsym.h).
 */
void pyproc_cache_bound_tables(struct pyproc_cache *c, uint64_t max_table);

struct pyproc_cache_stats {
	uint64_t entries; /* verdicts held */
	uint64_t bytes;	  /* the cache's memory, allocated up front */
	uint64_t hits, misses, evicted;
	uint64_t read; /* files whose symbol table was read */
	/* Files read in part or not at all for the sizes they declare: too many
	 * headers (elfhdr.h), or a symbol table over the bound. */
	uint64_t oversized;
};

void pyproc_cache_stats(const struct pyproc_cache *c, struct pyproc_cache_stats *stats);

struct target;

/*
 * Examines process tgid (start_time: as struct ebprof_key's, copied into
 * *out) under proc_root ("/proc" unless a test points elsewhere). The
 * files it maps executable are opened through gate (symbolizer/target.h;
 * NULL: uncounted, under "/proc"), never otherwise: a file it refuses is
 * counted there and taken for no interpreter. cache may be NULL (every
 * file is read). Returns
 * 0 with *out filled; -ENOENT when it is no CPython (nothing to say);
 * -EAGAIN when it is one that has not started its main thread yet (ask
 * again later; *out has where its evaluation function is, and no more); -EPROTONOSUPPORT when it looks like one we cannot walk
 * (a version without a row, a layout or thread-state check that failed),
 * with why in why (a sentence naming the file and the value; say it
 * once); -ESRCH when the process is gone.
 */
int pyproc_detect(struct pyproc_cache *cache, struct target *gate, const char *proc_root,
		  uint32_t tgid, uint64_t start_time, struct ebprof_py_proc *out, char *why,
		  size_t whylen);

struct procmaps;

/*
 * pyproc_detect() with the process's executable mappings read by the
 * caller just now (borrowed; NULL: read them here), so that a process
 * whose maps the symbolizer has just read costs no second read of them.
 */
int pyproc_detect_maps(struct pyproc_cache *cache, struct target *gate, const char *proc_root,
		       uint32_t tgid, uint64_t start_time, const struct procmaps *maps,
		       struct ebprof_py_proc *out, char *why, size_t whylen);

/* Reads len bytes at addr of process tgid. Returns 0, or a negative errno (-EFAULT). */
int pyproc_read(uint32_t tgid, uint64_t addr, void *buf, size_t len);

#endif
