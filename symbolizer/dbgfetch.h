/*
 * dbgfetch: debug files fetched by build-id from debuginfod servers.
 *
 * A stripped library names only its exported functions (.dynsym); when
 * no local debug file names the rest (debuginfo.h), the symbolizer asks
 * this module for the file's build-id. Asking never blocks: a new
 * build-id is queued, and one background thread fetches the queue with
 * elfutils' libdebuginfod, which is loaded with dlopen() so that ebprof
 * runs without it (dbgfetch_new() then fails with -ENOENT). The servers
 * are the standard DEBUGINFOD_URLS; the client keeps the files in its
 * cache directory (DEBUGINFOD_CACHE_PATH, which it cleans by age).
 *
 * Each fetch is bounded in time (timeout_s, from its start, through the
 * client's progress callback). A build-id the server does not have, or a
 * fetch that failed (server down, timeout, a file that does not open),
 * is not asked again for retry_s seconds: the negative cache. Every
 * outcome is counted (dbgfetch_stats) for the CLI summary and the
 * plugin's health metrics.
 *
 * The caller owns the dbgfetch; its thread is stopped by dbgfetch_free(),
 * which interrupts a fetch in flight within about a second.
 */
#ifndef EBPROF_SYMBOLIZER_DBGFETCH_H
#define EBPROF_SYMBOLIZER_DBGFETCH_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define DBGFETCH_MAX_ID 64	   /* bytes of a build-id (GNU's are 20) */
#define DBGFETCH_MAX_ENTRIES 1024  /* build-ids remembered (~100 KiB); more are not fetched */
#define DBGFETCH_TIMEOUT_S 30	   /* default bound of one fetch */
#define DBGFETCH_RETRY_S 600	   /* default time a miss or failure is remembered */

struct dbgfetch;

struct dbgfetch_config {
	unsigned int timeout_s; /* 0: DBGFETCH_TIMEOUT_S */
	unsigned int retry_s;	/* 0: DBGFETCH_RETRY_S */
	/* The clock of the negative cache; NULL: CLOCK_MONOTONIC. For tests. */
	time_t (*now)(void *arg);
	void *now_arg;
	/* Do not start the thread nor load the library: tests of the cache only. */
	int no_thread;
};

enum dbgfetch_state {
	DBGFETCH_PENDING, /* queued or in flight: ask again later */
	DBGFETCH_READY,	  /* fetched: *path is the debug file */
	DBGFETCH_MISSING, /* not found, or failed: not asked again until retry_s */
};

/*
 * Points libdebuginfod's on-disk cache (DEBUGINFOD_CACHE_PATH) at a
 * private directory when the user has not chosen one, and makes it:
 * $XDG_CACHE_HOME or $HOME/.cache, else /var/cache, with
 * "/ebprof/debuginfod" appended. It writes the process's environment,
 * which other threads may be reading, so call it once at start-up before
 * any other thread runs (the CLI's main thread, collectd's config
 * callback). Returns 0 or a negative errno (the directory cannot be made).
 * Without it the library's own default directory is used, and a fetch we
 * interrupt leaves its "not found" marker there for the library's retry
 * time.
 */
int dbgfetch_prepare(void);

/*
 * Loads libdebuginfod and starts the thread. Returns 0 and *out, -ENOENT
 * when the library is not installed, -ENOMEM, or another negative errno.
 */
int dbgfetch_new(const struct dbgfetch_config *config, struct dbgfetch **out);

/* Stops the thread (interrupting a fetch) and frees f; NULL is fine. */
void dbgfetch_free(struct dbgfetch *f);

/*
 * The state of build-id id (len bytes); never blocks on a fetch. A new id,
 * or one whose miss is older than retry_s, is queued. On DBGFETCH_READY,
 * *path (owned by f, valid until dbgfetch_free) names the debug file.
 */
enum dbgfetch_state dbgfetch_get(struct dbgfetch *f, const unsigned char *id, size_t len,
				 const char **path);

/*
 * The caller could not use the fetched file of id (not an ELF file, no
 * symbols): counted as a failure and remembered as a miss.
 */
void dbgfetch_unusable(struct dbgfetch *f, const unsigned char *id, size_t len);

/* For tests with no_thread: completes the oldest queued fetch with err (0, or -errno). */
int dbgfetch_complete_one(struct dbgfetch *f, int err, const char *path);

struct dbgfetch_stats {
	uint64_t fetched;   /* debug files fetched, ever */
	uint64_t not_found; /* build-ids the servers do not have, ever */
	uint64_t failed;    /* fetches that failed: server down, timeout, unusable file */
	uint64_t skipped;   /* build-ids not queued: DBGFETCH_MAX_ENTRIES reached */
	uint64_t pending;   /* queued or in flight now */
};

/* Safe from any thread. */
void dbgfetch_stats(struct dbgfetch *f, struct dbgfetch_stats *stats);

#endif
