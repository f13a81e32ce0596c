/*
 * spool: flame graph files in a directory, written so that readers and
 * neighbours are safe.
 *
 * Every window the plugin hands spool_write() a profile; it becomes
 * ebprof-YYYYmmddTHHMMSSZ.svg, .folded, .speedscope.json or .pb.gz (UTC, "-1", "-2"... when two
 * land in one second), and latest.svg / latest.folded are hard links to
 * the newest (latest.svg, latest.folded, latest.speedscope.json, latest.pb.gz). A reader never sees half a file: each file is written under
 * a hidden temporary name (.ebprof-PID-SEQ.tmp), fsync'ed, then renamed
 * without replacing anything. The directory may be writable by others, so
 * nothing is followed (O_NOFOLLOW, no-replace renames, O_EXCL temps) and
 * nothing we did not create is replaced or deleted: retention and latest.*
 * only touch regular files with our names, owned by our user.
 *
 * The module knows nothing of collectd: errors come back as a negative
 * errno and a sentence; the caller decides how often to log them. After an
 * error the directory is opened afresh on the next write, so the spool
 * comes back by itself when the directory does.
 */
#ifndef EBPROF_PLUGIN_SPOOL_H
#define EBPROF_PLUGIN_SPOOL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "render/format.h"
#include "render/profile.h"

struct spool_config {
	const char *dir;	/* absolute path; copied. The last component is
				 * created (0755) if missing, never followed. */
	unsigned int formats;	/* FORMAT_BIT()s of render/format.h */
	uint64_t keep_files;	/* timestamped files kept per format; 0: by bytes */
	uint64_t keep_bytes;	/* bytes of timestamped files kept, all formats;
				 * the newest file of each format is always kept */
	unsigned int frequency; /* sampling Hz, for pprof's CPU time; 0: unknown */
};

struct spool;

/* Returns NULL when out of memory. Touches no file until spool_write(). */
struct spool *spool_new(const struct spool_config *config);

/*
 * Opens (creating the last component if missing) the directory now, so
 * that a bad SpoolDir shows at start-up; spool_write() does it too when
 * needed. Returns 0, or a negative errno with a sentence in err.
 */
int spool_open(struct spool *s, char *err, size_t errlen);

/*
 * Writes p as one file per format, stamped with `when` (UTC), points
 * latest.* at them and enforces retention. title and subtitle go into the
 * SVG (NULL: defaults). Returns 0, or a negative errno with a sentence in
 * err that names the path and the cause; no temporary file is left behind
 * either way.
 */
int spool_write(struct spool *s, const struct profile *p, time_t when, const char *title,
		const char *subtitle, char *err, size_t errlen);

/* The name (not the path) of the newest file of one format, or "". */
const char *spool_last_name(const struct spool *s, enum format format);

/* Closes the directory and frees s; NULL is fine. */
void spool_free(struct spool *s);

#endif
