/*
 * spool: timestamped flame graph files, latest.* links and retention
 * (see spool.h for the guarantees).
 *
 * All file operations are relative to one directory descriptor, opened
 * with O_NOFOLLOW, so a path component swapped after the open cannot
 * redirect us. Creating uses O_CREAT|O_EXCL (which never follows a link
 * and never opens an existing file), publishing uses renameat2() with
 * RENAME_NOREPLACE (or link()+unlink(), which also refuses to replace, on
 * file systems without it), and latest.* is replaced by rename() only when
 * the current one is a regular file owned by us. rename() replaces the
 * directory entry and never writes through it, so even then nothing
 * outside the spool can change.
 */
#include "plugin/spool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpf/grow.h"

#define SPOOL_PREFIX "ebprof-"
#define SPOOL_STAMP_LEN 16  /* "YYYYmmddTHHMMSSZ" */
#define SPOOL_MAX_SEQ 99    /* files one second can hold per format */
#define SPOOL_TMP_TRIES 100 /* temporary names tried before giving up */

struct spool {
	char *dir;
	unsigned int formats;
	uint64_t keep_files;
	uint64_t keep_bytes;
	int dirfd; /* -1 until opened, and again after an error */
	unsigned int tmp_seq;
	unsigned int frequency;
	char last[FORMAT_NR][NAME_MAX + 1]; /* newest name per format */
};

/* One of our timestamped files, found while enforcing retention. */
struct spool_entry {
	char name[NAME_MAX + 1];
	char stamp[SPOOL_STAMP_LEN + 1];
	unsigned int seq;
	enum format format;
	uint64_t bytes;
};

static int spool_fail(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int spool_fail(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		/* clang-analyzer 14 misses the va_start above when it lints many files in one run. */
		vsnprintf(err, errlen, fmt, ap); /* NOLINT(clang-analyzer-valist.Uninitialized) */
		va_end(ap);
	}
	return rc;
}

struct spool *spool_new(const struct spool_config *config)
{
	struct spool *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->dir = strdup(config->dir);
	if (!s->dir) {
		free(s);
		return NULL;
	}
	s->formats = config->formats;
	s->keep_files = config->keep_files;
	s->keep_bytes = config->keep_bytes;
	s->frequency = config->frequency;
	s->dirfd = -1;
	return s;
}

void spool_free(struct spool *s)
{
	if (!s)
		return;
	if (s->dirfd >= 0)
		close(s->dirfd);
	free(s->dir);
	free(s);
}

const char *spool_last_name(const struct spool *s, enum format format)
{
	return (unsigned int)format < FORMAT_NR ? s->last[format] : "";
}

/* ".ebprof-PID-SEQ.tmp": hidden from directory listings and globs. */
static void spool_tmp_name(struct spool *s, char *buf, size_t len)
{
	snprintf(buf, len, "." SPOOL_PREFIX "%ld-%u.tmp", (long)getpid(), s->tmp_seq++);
}

/* Is name one of our temporary files, left by a process that is gone
 * (or by us)? Those are safe to remove. */
static bool spool_stale_tmp(const char *name)
{
	long pid;
	unsigned int seq;
	char tail[8];

	if (sscanf(name, "." SPOOL_PREFIX "%ld-%u%7s", &pid, &seq, tail) != 3 ||
	    strcmp(tail, ".tmp") != 0 || pid <= 0)
		return false;
	return pid == (long)getpid() || (kill((pid_t)pid, 0) < 0 && errno == ESRCH);
}

static bool spool_ours(int dirfd, const char *name, struct stat *st)
{
	return fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st->st_mode) &&
	       st->st_uid == geteuid();
}

/* Calls fn on every entry of the directory; fn returns false to stop. */
static int spool_scan(int dirfd, bool (*fn)(int dirfd, const char *name, void *ctx), void *ctx)
{
	struct dirent *de;
	DIR *d;
	int fd;

	fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		int rc = -errno;

		close(fd);
		return rc;
	}
	while ((de = readdir(d)) != NULL) {
		if (!fn(dirfd, de->d_name, ctx))
			break;
	}
	closedir(d);
	return 0;
}

static bool spool_clean_tmp(int dirfd, const char *name, void *ctx)
{
	struct stat st;

	(void)ctx;
	if (spool_stale_tmp(name) && spool_ours(dirfd, name, &st))
		unlinkat(dirfd, name, 0);
	return true;
}

static int spool_open_dir(struct spool *s, char *err, size_t errlen)
{
	char why[128];
	struct stat st;
	int fd;

	if (mkdir(s->dir, 0755) < 0 && errno != EEXIST)
		return spool_fail(err, errlen, -errno, "cannot create spool directory %s: %s",
				  s->dir, strerror_r(errno, why, sizeof(why)));
	fd = open(s->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	/* O_DIRECTORY|O_NOFOLLOW on a link says ENOTDIR or ELOOP: tell
	 * the operator which it really is. */
	if (fd < 0 && (errno == ELOOP || errno == ENOTDIR) && lstat(s->dir, &st) == 0 &&
	    S_ISLNK(st.st_mode))
		return spool_fail(err, errlen, -ELOOP,
				  "spool directory %s is a symbolic link, which the spool "
				  "does not follow; set SpoolDir to the real directory",
				  s->dir);
	if (fd < 0)
		return spool_fail(err, errlen, -errno, "cannot open spool directory %s: %s",
				  s->dir, strerror_r(errno, why, sizeof(why)));
	s->dirfd = fd;
	/* Temporary files of a collectd that was killed mid-write. */
	spool_scan(fd, spool_clean_tmp, NULL);
	return 0;
}

int spool_open(struct spool *s, char *err, size_t errlen)
{
	if (s->dirfd >= 0)
		return 0;
	return spool_open_dir(s, err, errlen);
}

static void spool_close_dir(struct spool *s)
{
	if (s->dirfd >= 0)
		close(s->dirfd);
	s->dirfd = -1;
}

/* Creates a fresh temporary file; its name goes to tmp. */
static int spool_create_tmp(struct spool *s, char *tmp, size_t len)
{
	for (int i = 0; i < SPOOL_TMP_TRIES; i++) {
		int fd;

		spool_tmp_name(s, tmp, len);
		fd = openat(s->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0644);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			return -errno;
		/* Someone put something at that name: leave it, try the next. */
	}
	return -EEXIST;
}

static int spool_render(int fd, const struct profile *p, enum format format,
			const struct format_options *opts)
{
	FILE *f;
	int rc, close_rc;

	f = fdopen(fd, "w");
	if (!f) {
		rc = -errno;
		close(fd);
		return rc;
	}
	rc = format_write(format, p, f, opts);
	if (!rc && fflush(f) != 0)
		rc = -errno;
	if (!rc && ferror(f))
		rc = -EIO;
	/* Durable before it is visible: a crash never leaves an empty file
	 * under a final name. */
	if (!rc && fsync(fd) < 0)
		rc = -errno;
	close_rc = fclose(f);
	if (!rc && close_rc != 0)
		rc = -errno;
	return rc;
}

/* Renames tmp to name without replacing anything. 0, -EEXIST or -errno. */
static int spool_publish(int dirfd, const char *tmp, const char *name)
{
	if (renameat2(dirfd, tmp, dirfd, name, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -errno;
	/* No RENAME_NOREPLACE here: link() refuses to replace too. */
	if (linkat(dirfd, tmp, dirfd, name, 0) < 0)
		return -errno;
	unlinkat(dirfd, tmp, 0);
	return 0;
}

/* Points latest.EXT at name: a hard link under a temporary name, renamed
 * over latest.EXT if that is ours (or missing). */
static int spool_latest(struct spool *s, const char *name, const char *ext, char *err,
			size_t errlen)
{
	char tmp[NAME_MAX + 1], latest[32], why[128];
	struct stat st;
	int rc = -EEXIST;

	snprintf(latest, sizeof(latest), "latest.%s", ext);
	if (fstatat(s->dirfd, latest, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    (!S_ISREG(st.st_mode) || st.st_uid != geteuid()))
		return spool_fail(err, errlen, -EPERM,
				  "%s/%s is not a regular file owned by uid %u (someone else "
				  "created it); not replacing it, latest.%s is not updated "
				  "until it is removed",
				  s->dir, latest, (unsigned int)geteuid(), ext);
	for (int i = 0; i < SPOOL_TMP_TRIES && rc == -EEXIST; i++) {
		spool_tmp_name(s, tmp, sizeof(tmp));
		rc = linkat(s->dirfd, name, s->dirfd, tmp, 0) < 0 ? -errno : 0;
	}
	if (rc)
		return spool_fail(err, errlen, rc, "cannot link %s/%s: %s", s->dir, name,
				  strerror_r(-rc, why, sizeof(why)));
	if (renameat(s->dirfd, tmp, s->dirfd, latest) < 0) {
		rc = -errno;
		unlinkat(s->dirfd, tmp, 0);
		return spool_fail(err, errlen, rc, "cannot replace %s/%s: %s", s->dir, latest,
				  strerror_r(-rc, why, sizeof(why)));
	}
	return 0;
}

static int spool_write_one(struct spool *s, const struct profile *p, enum format format,
			   const char *stamp, const char *title, const char *subtitle, char *err,
			   size_t errlen)
{
	const char *ext = format_ext(format);
	char tmp[NAME_MAX + 1], name[NAME_MAX + 1], why[128];
	int fd, rc;

	fd = spool_create_tmp(s, tmp, sizeof(tmp));
	if (fd < 0)
		return spool_fail(err, errlen, fd, "cannot create a file in %s: %s", s->dir,
				  strerror_r(-fd, why, sizeof(why)));
	rc = spool_render(fd, p, format,
			  &(struct format_options){ title, subtitle, -1, s->frequency });
	if (rc) {
		unlinkat(s->dirfd, tmp, 0);
		return spool_fail(err, errlen, rc, "cannot write %s file in %s: %s", ext, s->dir,
				  strerror_r(-rc, why, sizeof(why)));
	}
	rc = -EEXIST;
	for (unsigned int seq = 0; seq <= SPOOL_MAX_SEQ && rc == -EEXIST; seq++) {
		if (seq == 0)
			snprintf(name, sizeof(name), SPOOL_PREFIX "%s.%s", stamp, ext);
		else
			snprintf(name, sizeof(name), SPOOL_PREFIX "%s-%u.%s", stamp, seq, ext);
		rc = spool_publish(s->dirfd, tmp, name);
	}
	if (rc) {
		unlinkat(s->dirfd, tmp, 0);
		return spool_fail(err, errlen, rc, "cannot rename into %s/%s: %s", s->dir, name,
				  strerror_r(-rc, why, sizeof(why)));
	}
	snprintf(s->last[format], sizeof(s->last[format]), "%s", name);
	return spool_latest(s, name, ext, err, errlen);
}

/* "ebprof-YYYYmmddTHHMMSSZ[-SEQ].EXT" and nothing else. */
static bool spool_parse_name(const char *name, struct spool_entry *e)
{
	const char *p = name + strlen(SPOOL_PREFIX);

	if (strncmp(name, SPOOL_PREFIX, strlen(SPOOL_PREFIX)) != 0)
		return false;
	for (int i = 0; i < SPOOL_STAMP_LEN; i++) {
		bool ok = i == 8 ? p[i] == 'T' : i == 15 ? p[i] == 'Z' : (p[i] >= '0' && p[i] <= '9');

		if (!ok)
			return false;
	}
	memcpy(e->stamp, p, SPOOL_STAMP_LEN);
	e->stamp[SPOOL_STAMP_LEN] = '\0';
	p += SPOOL_STAMP_LEN;
	e->seq = 0;
	if (*p == '-') {
		char *end;
		unsigned long seq = strtoul(p + 1, &end, 10);

		if (end == p + 1 || end - (p + 1) > 2 || p[1] == '0' || seq > SPOOL_MAX_SEQ)
			return false;
		e->seq = (unsigned int)seq;
		p = end;
	}
	if (*p++ != '.')
		return false;
	for (int f = 0; f < FORMAT_NR; f++) {
		if (strcmp(p, format_ext(f)) == 0) {
			e->format = f;
			snprintf(e->name, sizeof(e->name), "%s", name);
			return true;
		}
	}
	return false;
}

struct spool_list {
	struct spool_entry *entries;
	size_t n, cap;
	int err;
};

static bool spool_collect(int dirfd, const char *name, void *ctx)
{
	struct spool_list *list = ctx;
	struct spool_entry e;
	struct stat st;

	if (!spool_parse_name(name, &e) || !spool_ours(dirfd, name, &st))
		return true;
	e.bytes = (uint64_t)st.st_size;
	if (GROW_ARRAY(&list->entries, &list->cap, list->n + 1, 64)) {
		list->err = -ENOMEM;
		return false;
	}
	list->entries[list->n++] = e;
	return true;
}

/* Oldest first: by stamp, then by sequence number. */
static int spool_cmp_age(const void *a, const void *b)
{
	const struct spool_entry *x = a, *y = b;
	int c = strcmp(x->stamp, y->stamp);

	if (c)
		return c;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

static int spool_retain(struct spool *s)
{
	struct spool_list list = { 0 };
	size_t count[FORMAT_NR] = { 0 }, newest[FORMAT_NR];
	uint64_t bytes = 0;
	int rc;

	for (int f = 0; f < FORMAT_NR; f++)
		newest[f] = SIZE_MAX;
	rc = spool_scan(s->dirfd, spool_collect, &list);
	if (!rc)
		rc = list.err;
	if (rc || list.n == 0)
		goto out;
	qsort(list.entries, list.n, sizeof(*list.entries), spool_cmp_age);
	for (size_t i = 0; i < list.n; i++) {
		count[list.entries[i].format]++;
		newest[list.entries[i].format] = i;
		bytes += list.entries[i].bytes;
	}
	for (size_t i = 0; i < list.n; i++) {
		const struct spool_entry *e = &list.entries[i];
		int f = e->format;

		if (i == newest[f] || strcmp(e->name, s->last[f]) == 0)
			continue;
		if (s->keep_files ? count[f] <= s->keep_files : bytes <= s->keep_bytes)
			continue;
		if (unlinkat(s->dirfd, e->name, 0) == 0 || errno == ENOENT) {
			count[f]--;
			bytes -= e->bytes;
		}
	}
out:
	free(list.entries);
	return rc;
}

int spool_write(struct spool *s, const struct profile *p, time_t when, const char *title,
		const char *subtitle, char *err, size_t errlen)
{
	char stamp[SPOOL_STAMP_LEN + 1], why[128];
	struct tm tm;
	int rc = 0, retain;

	if (err && errlen)
		err[0] = '\0';
	rc = spool_open(s, err, errlen);
	if (rc)
		return rc;
	if (!gmtime_r(&when, &tm) || strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm) == 0)
		return spool_fail(err, errlen, -EINVAL, "cannot format time %lld", (long long)when);
	for (int f = 0; f < FORMAT_NR; f++) {
		int one;

		if (!(s->formats & FORMAT_BIT(f)))
			continue;
		/* Keep going after a failure: the other format may still fit,
		 * but report the first error. */
		one = spool_write_one(s, p, f, stamp, title, subtitle, rc ? NULL : err,
				      rc ? 0 : errlen);
		if (!rc)
			rc = one;
	}
	/* Retention runs even after a failed write: a refused latest.* or a
	 * full disk must not let the spool grow without bound. */
	retain = spool_retain(s);
	if (!rc && retain)
		rc = spool_fail(err, errlen, retain, "cannot enforce retention in %s: %s", s->dir,
				strerror_r(-retain, why, sizeof(why)));
	/* Open the directory afresh next time: it may have been replaced. */
	if (rc)
		spool_close_dir(s);
	return rc;
}
