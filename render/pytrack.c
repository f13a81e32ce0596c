/*
 * pytrack: the Python processes loaded into the sampler (see pytrack.h).
 *
 * Two small arrays: the loaded processes, checked against /proc at each
 * end of a drain, and the ones still starting (asked again at most
 * PYTRACK_RETRIES times). Warnings are told apart by a hash of their text.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/grow.h"
#include "bpf/sampler.h"
#include "render/pytrack.h"
#include "symbolizer/pyproc.h"

#define PYTRACK_RETRIES 20 /* ends of drains a starting Python is asked again */
#define PYTRACK_MAX_PENDING 256
#define PYTRACK_MAX_WARNED 64

struct pytrack_process {
	uint32_t tgid;
	uint32_t tries;
	uint64_t start_time;
};

struct pytrack {
	struct sampler *sampler;
	char *proc_root;
	pytrack_warn_fn warn;
	void *warn_ctx;
	struct pytrack_process *loaded;
	size_t n_loaded, cap_loaded;
	struct pytrack_process pending[PYTRACK_MAX_PENDING];
	size_t n_pending;
	uint64_t warned[PYTRACK_MAX_WARNED];
	size_t n_warned;   /* slots in use */
	size_t next_warned; /* the slot the next reason takes, oldest first once full */
	struct pytrack_stats stats;
};

struct pytrack *pytrack_new(struct sampler *sampler, const char *proc_root, pytrack_warn_fn warn,
			    void *warn_ctx)
{
	struct pytrack *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->proc_root = strdup(proc_root ? proc_root : "/proc");
	if (!t->proc_root) {
		free(t);
		return NULL;
	}
	t->sampler = sampler;
	t->warn = warn;
	t->warn_ctx = warn_ctx;
	return t;
}

void pytrack_free(struct pytrack *t)
{
	if (!t)
		return;
	free(t->loaded);
	free(t->proc_root);
	free(t);
}

/* Says a reason once: FNV-1a of its text among the last PYTRACK_MAX_WARNED said. */
static void pytrack_warn_once(struct pytrack *t, const char *why)
{
	uint64_t h = 14695981039346656037ull;

	for (const unsigned char *s = (const unsigned char *)why; *s; s++)
		h = (h ^ *s) * 1099511628211ull;
	for (size_t i = 0; i < t->n_warned; i++)
		if (t->warned[i] == h)
			return;
	t->warned[t->next_warned] = h;
	t->next_warned = (t->next_warned + 1) % PYTRACK_MAX_WARNED;
	if (t->n_warned < PYTRACK_MAX_WARNED)
		t->n_warned++;
	if (t->warn)
		t->warn(why, t->warn_ctx);
}

static void pytrack_remember(struct pytrack *t, uint32_t tgid, uint64_t start_time)
{
	for (size_t i = 0; i < t->n_loaded; i++) {
		if (t->loaded[i].tgid == tgid) {
			t->loaded[i].start_time = start_time;
			return;
		}
	}
	if (GROW_ARRAY(&t->loaded, &t->cap_loaded, t->n_loaded + 1, 16))
		return; /* only its forgetting is lost: the map's start time guards it */
	t->loaded[t->n_loaded++] = (struct pytrack_process){ tgid, 0, start_time };
}

/* Asks pyproc about the process; returns -EAGAIN when it should be asked again. */
static int pytrack_try(struct pytrack *t, uint32_t tgid, uint64_t start_time)
{
	struct ebprof_py_proc py;
	char why[768];
	int err;

	err = pyproc_detect(t->proc_root, tgid, start_time, &py, why, sizeof(why));
	if (err == -EPROTONOSUPPORT) {
		t->stats.unsupported++;
		pytrack_warn_once(t, why);
	}
	if (err) {
		/* An exec keeps the start time: a Python that became something else
		 * must not keep its old layout (reported again after each exec). */
		sampler_python_forget(t->sampler, tgid);
		return err;
	}
	err = sampler_python_set(t->sampler, tgid, &py);
	if (err) {
		t->stats.refused++;
		snprintf(why, sizeof(why), "Python process %u: its layout could not be loaded "
			 "(%s); profiled without Python frames", tgid, strerror(-err));
		pytrack_warn_once(t, why);
		return err;
	}
	pytrack_remember(t, tgid, start_time);
	return 0;
}

void pytrack_process(struct pytrack *t, uint32_t tgid, uint64_t start_time)
{
	if (pytrack_try(t, tgid, start_time) == -EAGAIN && t->n_pending < PYTRACK_MAX_PENDING)
		t->pending[t->n_pending++] = (struct pytrack_process){ tgid, 0, start_time };
}

static bool pytrack_alive(const struct pytrack *t, uint32_t tgid)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%u", t->proc_root, tgid);
	return access(path, F_OK) == 0;
}

void pytrack_end_drain(struct pytrack *t)
{
	size_t kept = 0;

	for (size_t i = 0; i < t->n_pending; i++) {
		struct pytrack_process p = t->pending[i];

		if (++p.tries <= PYTRACK_RETRIES && pytrack_try(t, p.tgid, p.start_time) == -EAGAIN)
			t->pending[kept++] = p;
	}
	t->n_pending = kept;
	kept = 0;
	for (size_t i = 0; i < t->n_loaded; i++) {
		if (pytrack_alive(t, t->loaded[i].tgid))
			t->loaded[kept++] = t->loaded[i];
		else
			sampler_python_forget(t->sampler, t->loaded[i].tgid);
	}
	t->n_loaded = kept;
}

void pytrack_stats(const struct pytrack *t, struct pytrack_stats *stats)
{
	*stats = t->stats;
	stats->loaded = t->n_loaded;
}
