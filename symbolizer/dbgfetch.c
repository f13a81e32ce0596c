/*
 * dbgfetch: the queue of build-ids, its background thread and the
 * negative cache (dbgfetch.h). The symbolizer's worker asks, under the
 * lock, and never waits for a fetch; the thread takes the oldest queued
 * build-id, fetches it with the lock released, and records the outcome.
 * libdebuginfod is loaded with dlopen() and its four functions looked up
 * by name, so that the binary does not depend on it.
 */
#include "symbolizer/dbgfetch.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* libdebuginfod's client, as its header declares it (elfutils 0.179+). */
typedef struct debuginfod_client debuginfod_client;
typedef int (*progressfn_t)(debuginfod_client *c, long a, long b);

struct client_api {
	debuginfod_client *(*begin)(void);
	void (*end)(debuginfod_client *c);
	int (*find_debuginfo)(debuginfod_client *c, const unsigned char *id, int len, char **path);
	void (*set_progressfn)(debuginfod_client *c, progressfn_t fn);
	void (*set_user_data)(debuginfod_client *c, void *data);
};

enum entry_state { QUEUED, FETCHING, READY, MISSING };

struct entry {
	unsigned char id[DBGFETCH_MAX_ID];
	size_t len;
	enum entry_state state;
	uint64_t seq;	/* queue order */
	time_t missed;	/* when it became MISSING */
	char *path;	/* READY: the debug file */
};

struct dbgfetch {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t thread;
	bool started, stop;
	void *lib;
	struct client_api api;
	unsigned int timeout_s, retry_s;
	time_t (*now)(void *arg);
	void *now_arg;
	struct entry *entries;
	size_t n;
	uint64_t seq;
	struct dbgfetch_stats stats;
	time_t fetch_started; /* of the fetch in flight (CLOCK_MONOTONIC) */
	bool aborted;	      /* progress_cb ended the fetch in flight */
};

static time_t monotonic(void *arg)
{
	struct timespec ts;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

static struct entry *find(struct dbgfetch *f, const unsigned char *id, size_t len)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->entries[i].len == len && !memcmp(f->entries[i].id, id, len))
			return &f->entries[i];
	return NULL;
}

static void queue(struct dbgfetch *f, struct entry *e)
{
	e->state = QUEUED;
	e->seq = ++f->seq;
	f->stats.pending++;
	pthread_cond_signal(&f->wake);
}

enum dbgfetch_state dbgfetch_get(struct dbgfetch *f, const unsigned char *id, size_t len,
				 const char **path)
{
	enum dbgfetch_state st = DBGFETCH_PENDING;
	struct entry *e;

	if (!len || len > DBGFETCH_MAX_ID)
		return DBGFETCH_MISSING;
	pthread_mutex_lock(&f->lock);
	e = find(f, id, len);
	if (!e) {
		if (f->n == DBGFETCH_MAX_ENTRIES) {
			f->stats.skipped++;
			st = DBGFETCH_MISSING;
			goto out;
		}
		e = &f->entries[f->n++];
		memset(e, 0, sizeof(*e));
		memcpy(e->id, id, len);
		e->len = len;
		queue(f, e);
	} else if (e->state == READY) {
		*path = e->path;
		st = DBGFETCH_READY;
	} else if (e->state == MISSING) {
		if (f->now(f->now_arg) - e->missed >= (time_t)f->retry_s)
			queue(f, e);
		else
			st = DBGFETCH_MISSING;
	}
out:
	pthread_mutex_unlock(&f->lock);
	return st;
}

/* Records the outcome of e's fetch (lock held): path is taken on success. */
static void record(struct dbgfetch *f, struct entry *e, int err, char *path)
{
	f->stats.pending--;
	if (!err && path) {
		e->state = READY;
		e->path = path;
		f->stats.fetched++;
		return;
	}
	free(path);
	e->state = MISSING;
	e->missed = f->now(f->now_arg);
	if (err == -ENOENT)
		f->stats.not_found++;
	else
		f->stats.failed++;
}

void dbgfetch_unusable(struct dbgfetch *f, const unsigned char *id, size_t len)
{
	struct entry *e;

	pthread_mutex_lock(&f->lock);
	e = find(f, id, len);
	if (e && e->state == READY) {
		free(e->path);
		e->path = NULL;
		e->state = MISSING;
		e->missed = f->now(f->now_arg);
		f->stats.fetched--;
		f->stats.failed++;
	}
	pthread_mutex_unlock(&f->lock);
}

/* The oldest queued entry (lock held), or NULL. */
static struct entry *oldest(struct dbgfetch *f)
{
	struct entry *best = NULL;

	for (size_t i = 0; i < f->n; i++)
		if (f->entries[i].state == QUEUED && (!best || f->entries[i].seq < best->seq))
			best = &f->entries[i];
	return best;
}

int dbgfetch_complete_one(struct dbgfetch *f, int err, const char *path)
{
	struct entry *e;
	char *copy = NULL;

	pthread_mutex_lock(&f->lock);
	e = oldest(f);
	if (e && path)
		copy = strdup(path);
	if (e)
		record(f, e, path && !copy ? -ENOMEM : err, copy);
	pthread_mutex_unlock(&f->lock);
	return e ? 0 : -ENOENT;
}

#define LIBNAME "libdebuginfod.so.1"

/*
 * The dbgfetch whose thread runs client c: its user data. The callback
 * has only c, so the getter is looked up again in the library already
 * loaded (RTLD_NOLOAD), about once a second.
 */
static struct dbgfetch *fetch_owner(debuginfod_client *c)
{
	void *(*get)(debuginfod_client *c);
	void *lib = dlopen(LIBNAME, RTLD_NOW | RTLD_NOLOAD);
	struct dbgfetch *f = NULL;

	if (!lib)
		return NULL;
	*(void **)&get = dlsym(lib, "debuginfod_get_user_data");
	if (get)
		f = get(c);
	dlclose(lib);
	return f;
}

/*
 * The client calls this about once a second while it waits for a server:
 * a nonzero return ends the fetch (-EINTR), at the time bound or when f
 * is being freed.
 */
static int progress_cb(debuginfod_client *c, long a, long b)
{
	struct dbgfetch *f = NULL;
	bool end;

	(void)a;
	(void)b;
	f = c ? fetch_owner(c) : NULL;
	if (!f)
		return 1;
	pthread_mutex_lock(&f->lock);
	end = f->stop || monotonic(NULL) - f->fetch_started >= (time_t)f->timeout_s;
	f->aborted |= end;
	pthread_mutex_unlock(&f->lock);
	return end;
}

/*
 * libdebuginfod (0.188) reports a fetch its progress callback ended as
 * -ENOENT and leaves an empty file in its cache, which it then takes for
 * the server's "not found" for its cache_miss_s. Ours was a time-out or
 * a shutdown, not a miss: the marker goes (only an empty one), so that
 * the next run asks again.
 */
static void forget_abort(const unsigned char *id, size_t len)
{
	const char *cache = getenv("DEBUGINFOD_CACHE_PATH");
	char path[4096], hex[2 * DBGFETCH_MAX_ID + 1];
	struct stat st;

	if (!cache || !*cache)
		return;
	for (size_t i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	hex[2 * len] = 0;
	snprintf(path, sizeof(path), "%s/%s/debuginfo", cache, hex);
	if (!lstat(path, &st) && S_ISREG(st.st_mode) && st.st_size == 0)
		unlink(path);
}

static void *fetch_thread(void *arg)
{
	struct dbgfetch *f = arg;
	debuginfod_client *c;
	struct entry *e;

	c = f->api.begin();
	pthread_mutex_lock(&f->lock);
	if (!c) {
		/* no client: every request fails, and is counted */
		while (!f->stop) {
			while ((e = oldest(f)))
				record(f, e, -ENOMEM, NULL);
			pthread_cond_wait(&f->wake, &f->lock);
		}
		pthread_mutex_unlock(&f->lock);
		return NULL;
	}
	f->api.set_user_data(c, f);
	f->api.set_progressfn(c, progress_cb);
	while (!f->stop) {
		unsigned char id[DBGFETCH_MAX_ID];
		char *path = NULL;
		size_t len;
		int fd;

		e = oldest(f);
		if (!e) {
			pthread_cond_wait(&f->wake, &f->lock);
			continue;
		}
		e->state = FETCHING;
		memcpy(id, e->id, e->len);
		len = e->len;
		f->fetch_started = monotonic(NULL);
		f->aborted = false;
		pthread_mutex_unlock(&f->lock);
		fd = f->api.find_debuginfo(c, id, (int)len, &path);
		if (fd >= 0)
			close(fd);
		pthread_mutex_lock(&f->lock);
		if (fd < 0 && f->aborted) {
			forget_abort(id, len);
			fd = -ETIMEDOUT;
		}
		/* entries only grow (never move: allocated once), so e is still id's */
		record(f, e, fd < 0 ? fd : 0, fd < 0 ? NULL : path);
		if (fd < 0)
			free(path);
	}
	pthread_mutex_unlock(&f->lock);
	f->api.end(c);
	return NULL;
}

/* Looks the client's functions up in the library (loaded into f->lib). */
static int load(struct dbgfetch *f)
{
	static const char *const names[] = {
		"debuginfod_begin", "debuginfod_end", "debuginfod_find_debuginfo",
		"debuginfod_set_progressfn", "debuginfod_set_user_data",
	};
	void **slots[] = {
		(void **)&f->api.begin, (void **)&f->api.end, (void **)&f->api.find_debuginfo,
		(void **)&f->api.set_progressfn, (void **)&f->api.set_user_data,
	};

	f->lib = dlopen(LIBNAME, RTLD_NOW | RTLD_LOCAL);
	if (!f->lib)
		return -ENOENT;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		*slots[i] = dlsym(f->lib, names[i]);
		if (!*slots[i])
			return -ENOENT;
	}
	return 0;
}

/* mkdir -p of path; 0 or -errno. */
static int make_dirs(const char *path)
{
	char buf[4096];
	size_t len = strlen(path);

	if (len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, len + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, 0700) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

int dbgfetch_prepare(void)
{
	const char *base, *env = getenv("DEBUGINFOD_CACHE_PATH");
	char dir[4096];
	int err;

	if (env && *env)
		return 0;
	if ((base = getenv("XDG_CACHE_HOME")) && *base)
		snprintf(dir, sizeof(dir), "%s/ebprof/debuginfod", base);
	else if ((base = getenv("HOME")) && *base && strcmp(base, "/"))
		snprintf(dir, sizeof(dir), "%s/.cache/ebprof/debuginfod", base);
	else
		snprintf(dir, sizeof(dir), "/var/cache/ebprof/debuginfod");
	err = make_dirs(dir);
	if (err)
		return err;
	return setenv("DEBUGINFOD_CACHE_PATH", dir, 1) ? -errno : 0;
}

int dbgfetch_new(const struct dbgfetch_config *config, struct dbgfetch **out)
{
	struct dbgfetch_config none = { 0 };
	struct dbgfetch *f;
	int err;

	if (!config)
		config = &none;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->entries = calloc(DBGFETCH_MAX_ENTRIES, sizeof(*f->entries));
	if (!f->entries) {
		free(f);
		return -ENOMEM;
	}
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->wake, NULL);
	f->timeout_s = config->timeout_s ? config->timeout_s : DBGFETCH_TIMEOUT_S;
	f->retry_s = config->retry_s ? config->retry_s : DBGFETCH_RETRY_S;
	f->now = config->now ? config->now : monotonic;
	f->now_arg = config->now_arg;
	if (!config->no_thread) {
		err = load(f);
		if (!err)
			err = -pthread_create(&f->thread, NULL, fetch_thread, f);
		if (err) {
			dbgfetch_free(f);
			return err;
		}
		f->started = true;
	}
	*out = f;
	return 0;
}

void dbgfetch_free(struct dbgfetch *f)
{
	if (!f)
		return;
	if (f->started) {
		pthread_mutex_lock(&f->lock);
		f->stop = true;
		pthread_cond_signal(&f->wake);
		pthread_mutex_unlock(&f->lock);
		pthread_join(f->thread, NULL);
	}
	for (size_t i = 0; i < f->n; i++)
		free(f->entries[i].path);
	free(f->entries);
	if (f->lib)
		dlclose(f->lib);
	pthread_mutex_destroy(&f->lock);
	pthread_cond_destroy(&f->wake);
	free(f);
}

void dbgfetch_stats(struct dbgfetch *f, struct dbgfetch_stats *stats)
{
	pthread_mutex_lock(&f->lock);
	*stats = f->stats;
	pthread_mutex_unlock(&f->lock);
}
