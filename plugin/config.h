/*
 * pconf: the <Plugin ebprof> block of collectd.conf, as a plain struct.
 *
 * collectd hands the block to the config callback as a tree of
 * oconfig items; pconf_parse() walks it once, checks every value and
 * fills struct pconf. Nothing else in the plugin reads oconfig items.
 * Checks that need the running daemon (the read interval, the kernel's
 * sample-rate cap) happen later, in pconf_finish(), called from init.
 * Every error is logged with the key and the offending value, because a
 * config error stops collectd and the log line is all the operator sees.
 */
#ifndef EBPROF_PLUGIN_CONFIG_H
#define EBPROF_PLUGIN_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collectd/core/daemon/collectd.h"
#include "collectd/core/daemon/plugin.h"
#include "render/format.h"

/* The start of every line the plugin logs, in every file of plugin/. */
#define PLUGIN_LOG "ebprof plugin: "

#define PCONF_DEFAULT_FREQUENCY 99
#define PCONF_DEFAULT_TOP 20
#define PCONF_MAX_TOP 1000
#define PCONF_MAX_FILTERS 64	   /* PID and Process entries, each */
#define PCONF_DEFAULT_SPOOL_INTERVAL 60.0 /* seconds, rounded up to a read multiple */
#define PCONF_MAX_SPOOL_INTERVAL 86400.0  /* a day; a longer window is a mistake */
#define PCONF_DEFAULT_KEEP_FILES 60	  /* per format: an hour at the default */
#define PCONF_MAX_KEEP_FILES 100000
#define PCONF_MIN_KEEP_BYTES 1024ULL
#define PCONF_MAX_KEEP_BYTES (1ULL << 40) /* 1 TiB */
#define PCONF_MIN_MAX_STACKS 64
#define PCONF_MAX_MAX_STACKS 262144 /* ~1 KiB per stack entry: 256 MiB of map */
#define PCONF_PID_MAX 4194304	    /* PID_MAX_LIMIT on 64-bit kernels */
#define PCONF_COMM_MAX 15	    /* TASK_COMM_LEN - 1 */
#define PCONF_MAX_STALL_TIMEOUT 3600 /* seconds */
#define PCONF_MIN_BOUND 1024ULL	     /* MaxSymbolTable, MaxPerfMap: bytes */
#define PCONF_MAX_BOUND (1ULL << 40)
#define PCONF_MIN_UNWIND_BYTES (1ULL << 20)
#define PCONF_MIN_CACHE_BYTES (64ULL << 10) /* SymbolCacheMemory and the like */

/* Mode: what is sampled (sampler_config.mode). */
enum pconf_mode { PCONF_MODE_CPU, PCONF_MODE_OFFCPU, PCONF_MODE_WALL };

/* Unwind: how user stacks are walked (sampler_config.unwind). */
enum pconf_unwind { PCONF_UNWIND_AUTO, PCONF_UNWIND_FP, PCONF_UNWIND_DWARF };


struct pconf {
	unsigned int frequency;	     /* Hz */
	uint32_t *pids;		     /* owned; n_pids entries */
	size_t n_pids;
	char **processes;	     /* owned; exact comm names */
	size_t n_processes;
	bool kernel_stacks;
	bool user_stacks;
	bool python;		     /* CPython frames (sampler_config.python) */
	bool include_idle;
	bool include_self;	     /* profile collectd itself too */
	bool addresses;		     /* "func+0x1f" instead of "func" */
	bool inlines;		     /* Inline: inlined functions as frames (DWARF) */
	bool debuginfod;	     /* DebuginfodURLs given: fetch stripped files' debug files */
	unsigned int top_functions;
	unsigned int max_stacks;     /* 0: the sampler's default */
	char *spool_dir;	     /* owned; NULL: no spool */
	double spool_interval;	     /* seconds; 0 until set (see pconf_finish) */
	unsigned int spool_formats;  /* FORMAT_BIT()s (render/format.h); 0 until set */
	uint64_t keep_files;	     /* per format; 0 when keep_bytes rules */
	uint64_t keep_bytes;	     /* across formats; 0 when keep_files rules */
	enum pconf_unwind unwind;
	uint64_t unwind_bytes;	     /* table memory bound; 0: the unwinder's default */
	unsigned int max_frames;     /* 0: the sampler's default */
	unsigned int stall_ms;	     /* StallTimeout; 0: capture's default */
	uint64_t max_symbol_table;   /* bytes; 0: elfsym's default */
	uint64_t max_perf_map;	     /* bytes; 0: perfmap's default */
	enum pconf_mode mode;
	uint64_t offcpu_period_us;   /* OffCPUPeriod; 0: the sampler's default */
	uint64_t offcpu_min_us;	     /* OffCPUMinimum */
	/* Cache bounds in bytes; 0: the module's default. */
	uint64_t symbol_cache_bytes; /* SymbolCacheMemory: ELF tables kept (elfcache) */
	uint64_t process_bytes;	     /* ProcessMemory: process records (symbolizer) */
	uint64_t name_cache_bytes;   /* NameCacheMemory: demangled names (demangle) */
	uint64_t window_bytes;	     /* SpoolWindowMemory: the spool window's profile */
	bool malloc_trim;	     /* MallocTrim: give freed heap back after each read */
};

/* The spool window's profile, by default: ~1 M nodes of a busy host's
 * 10-minute window, with their names. */
#define PCONF_DEFAULT_WINDOW_BYTES (64ULL << 20)

/* The defaults, as the README documents them. Holds no memory yet. */
void pconf_init(struct pconf *c);

/*
 * Reads one <Plugin ebprof> block into c (a second block adds to the
 * first). Returns 0, or -EINVAL after logging which key and value are
 * wrong, or -ENOMEM. On error c keeps what it had and must still be freed.
 */
int pconf_parse(struct pconf *c, const oconfig_item_t *ci);

/*
 * The checks that need the daemon: Frequency against the kernel's
 * perf_event_max_sample_rate (kernel_max_rate; 0 skips the check) and
 * SpoolInterval against the read interval in seconds. Fills in the
 * defaults that depend on them. Returns 0 or -EINVAL after logging.
 */
int pconf_finish(struct pconf *c, double read_interval, unsigned int kernel_max_rate);

/* /proc/sys/kernel/perf_event_max_sample_rate, or 0 if unreadable. */
unsigned int pconf_kernel_max_rate(const char *path);

/* Frees what c owns and resets it to the defaults. */
void pconf_free(struct pconf *c);

#endif
