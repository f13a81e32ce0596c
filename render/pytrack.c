/*
 * pytrack: the Python processes loaded into the sampler (see pytrack.h).
 *
 * Two small arrays: the loaded processes, checked against /proc at each
 * end of a drain, and the ones still starting (asked again at most
 * PYTRACK_RETRIES ends of drains, and meanwhile when their next timed ask
 * comes, for PYTRACK_SOON_MS after the first: a Python's interpreter is
 * up tens of milliseconds after its exec, and the drains may be 10 s
 * apart). Warnings are told apart by a hash of their text.
 * A detection is done with no hook held; its verdict is applied (the
 * sampler's map, the lists, the counters, the warned ring) inside one.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bpf/grow.h"
#include "bpf/sampler.h"
#include "render/pytrack.h"
#include "symbolizer/procpid.h"
#include "symbolizer/pyproc.h"

#define PYTRACK_RETRIES 20 /* ends of drains a starting Python is asked again */
#define PYTRACK_MAX_PENDING 256
#define PYTRACK_MAX_WARNED 64

struct pytrack_process {
	uint32_t tgid;
	uint32_t tries;	   /* ends of drains it was asked at (starting ones) */
	uint32_t delay_ms; /* before its next timed ask */
	uint64_t start_time;
	/* Its timed asks (ns, the config's clock): since; the next, 0 for none left. */
	uint64_t first_ask, next_ask;
	/* Where its interpreter's evaluation function is (loaded ones). */
	uint64_t eval_start, eval_end, cold_start, cold_end;
};

struct pytrack {
	struct pytrack_config config;
	char *proc_root;
	bool pids_ours; /* procpid_by_signal(proc_root) */
	struct pyproc_cache *cache;
	bool cut_off; /* enter said no: the owner is gone */
	/* The rest is changed only inside the hooks. */
	struct pytrack_process *loaded;
	size_t n_loaded, cap_loaded;
	struct pytrack_process pending[PYTRACK_MAX_PENDING];
	size_t n_pending;
	uint64_t warned[PYTRACK_MAX_WARNED];
	size_t n_warned;   /* slots in use */
	size_t next_warned; /* the slot the next reason takes, oldest first once full */
	struct pytrack_stats stats;
};

/* One detection's outcome, to be applied inside the hooks. */
struct pytrack_verdict {
	uint32_t tgid;
	uint64_t start_time;
	int err;
	struct ebprof_py_proc py;
	uint64_t refused_open[TARGET_CAUSES];
	char why[768];
};

struct pytrack *pytrack_new(const struct pytrack_config *config)
{
	struct pytrack *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->config = *config;
	t->proc_root = strdup(config->proc_root ? config->proc_root : "/proc");
	t->cache = pyproc_cache_new(0);
	if (!t->proc_root || !t->cache) {
		pytrack_free(t);
		return NULL;
	}
	t->config.proc_root = t->proc_root;
	t->pids_ours = procpid_by_signal(t->proc_root);
	pyproc_cache_bound_tables(t->cache, config->max_table);
	return t;
}

void pytrack_free(struct pytrack *t)
{
	if (!t)
		return;
	pyproc_cache_free(t->cache);
	free(t->loaded);
	free(t->proc_root);
	free(t);
}

static bool pytrack_enter(struct pytrack *t)
{
	if (t->cut_off)
		return false;
	if (t->config.enter && !t->config.enter(t->config.hook_ctx)) {
		t->cut_off = true;
		return false;
	}
	return true;
}

static void pytrack_leave(struct pytrack *t)
{
	if (t->config.leave)
		t->config.leave(t->config.hook_ctx);
}

static uint64_t pytrack_now(const struct pytrack *t)
{
	struct timespec ts;

	if (t->config.now)
		return t->config.now(t->config.now_ctx);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The starting process's index, or -1. */
static long pytrack_pending_find(const struct pytrack *t, uint32_t tgid, uint64_t start_time)
{
	for (size_t i = 0; i < t->n_pending; i++)
		if (t->pending[i].tgid == tgid && t->pending[i].start_time == start_time)
			return (long)i;
	return -1;
}

static void pytrack_pending_drop(struct pytrack *t, size_t i)
{
	memmove(t->pending + i, t->pending + i + 1,
		(t->n_pending - i - 1) * sizeof(t->pending[0]));
	t->n_pending--;
}

/* After a timed ask at now that found it still starting (inside the hooks): when the next is. */
static void pytrack_schedule(struct pytrack_process *p, uint64_t now)
{
	uint64_t delay = (uint64_t)p->delay_ms * 1000000ull;

	if (now - p->first_ask + delay > (uint64_t)PYTRACK_SOON_MS * 1000000ull) {
		p->next_ask = 0; /* the ends of drains only, from now on */
		return;
	}
	p->next_ask = now + delay;
	p->delay_ms = p->delay_ms * 2 > PYTRACK_SOON_MAX_MS ? PYTRACK_SOON_MAX_MS : p->delay_ms * 2;
}

static uint64_t pytrack_hash(const char *why)
{
	uint64_t h = 14695981039346656037ull;

	for (const unsigned char *s = (const unsigned char *)why; *s; s++)
		h = (h ^ *s) * 1099511628211ull;
	return h;
}

/* Whether a reason is new (inside the hooks): FNV-1a of its text among the last said. */
static bool pytrack_first_time(struct pytrack *t, const char *why)
{
	uint64_t h = pytrack_hash(why);

	for (size_t i = 0; i < t->n_warned; i++)
		if (t->warned[i] == h)
			return false;
	t->warned[t->next_warned] = h;
	t->next_warned = (t->next_warned + 1) % PYTRACK_MAX_WARNED;
	if (t->n_warned < PYTRACK_MAX_WARNED)
		t->n_warned++;
	return true;
}

/* The loaded process tgid's index, or where it would go (the list is sorted by tgid). */
static size_t pytrack_find(const struct pytrack *t, uint32_t tgid)
{
	size_t lo = 0, hi = t->n_loaded;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->loaded[mid].tgid < tgid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Puts p on the loaded list (its entry replaced if there); -ENOMEM when the
 * list cannot grow. Every layout in the sampler's map is on a list: the
 * callers forget the ones that find no room.
 */
static int pytrack_remember(struct pytrack *t, const struct pytrack_process *p)
{
	size_t i = pytrack_find(t, p->tgid);

	if (i < t->n_loaded && t->loaded[i].tgid == p->tgid) {
		t->loaded[i] = *p;
		return 0;
	}
	if (GROW_ARRAY(&t->loaded, &t->cap_loaded, t->n_loaded + 1, 16))
		return -ENOMEM;
	memmove(t->loaded + i + 1, t->loaded + i, (t->n_loaded - i) * sizeof(t->loaded[0]));
	t->loaded[i] = *p;
	t->n_loaded++;
	return 0;
}

/* Forgets tgid's layout, from the sampler and the list, if it is on the list. */
static void pytrack_unremember(struct pytrack *t, uint32_t tgid)
{
	size_t i = pytrack_find(t, tgid);

	if (i == t->n_loaded || t->loaded[i].tgid != tgid)
		return;
	sampler_python_forget(t->config.sampler, tgid);
	memmove(t->loaded + i, t->loaded + i + 1, (t->n_loaded - i - 1) * sizeof(t->loaded[0]));
	t->n_loaded--;
}

/* Asks pyproc about the process, no hook held; the gate's refusals meanwhile go in v. */
static void pytrack_detect(struct pytrack *t, uint32_t tgid, uint64_t start_time,
			   const struct procmaps *maps, struct pytrack_verdict *v)
{
	uint64_t before[TARGET_CAUSES] = { 0 };

	v->tgid = tgid;
	v->start_time = start_time;
	if (t->config.gate)
		target_stats(t->config.gate, before);
	v->err = pyproc_detect_maps(t->cache, t->config.gate, t->proc_root, tgid, start_time, maps,
				    &v->py, v->why, sizeof(v->why));
	memset(v->refused_open, 0, sizeof(v->refused_open));
	if (t->config.gate) {
		target_stats(t->config.gate, v->refused_open);
		for (int i = 0; i < TARGET_CAUSES; i++)
			v->refused_open[i] -= before[i];
	}
}

/*
 * Applies a verdict (inside the hooks): the layout loaded or forgotten,
 * the counters. Returns its error (-EAGAIN: ask again); *say is set when
 * v->why is a reason said for the first time.
 */
static int pytrack_apply(struct pytrack *t, struct pytrack_verdict *v, bool *say)
{
	int err = v->err;

	*say = false;
	for (int i = 0; i < TARGET_CAUSES; i++)
		t->stats.refused_open[i] += v->refused_open[i];
	if (err == -EPROTONOSUPPORT) {
		t->stats.unsupported++;
		*say = pytrack_first_time(t, v->why);
	}
	if (err) {
		/* An exec keeps the start time: a Python that became something else
		 * must not keep its old layout (reported again after each exec).
		 * Only one on the list has a layout: every other new process, no
		 * Python, costs the sampler no system call. */
		pytrack_unremember(t, v->tgid);
		return err;
	}
	err = sampler_python_set(t->config.sampler, v->tgid, &v->py);
	if (err) {
		t->stats.refused++;
		snprintf(v->why, sizeof(v->why), "Python process %u: its layout could not be "
			 "loaded (%s); profiled without Python frames", v->tgid, strerror(-err));
		*say = pytrack_first_time(t, v->why);
		return err;
	}
	err = pytrack_remember(t, &(struct pytrack_process){
		.tgid = v->tgid, .start_time = v->start_time,
		.eval_start = v->py.eval_start, .eval_end = v->py.eval_end,
		.cold_start = v->py.cold_start, .cold_end = v->py.cold_end });
	if (err) {
		/* Off the list it would never be forgotten: profiled natively. */
		sampler_python_forget(t->config.sampler, v->tgid);
		t->stats.refused++;
		snprintf(v->why, sizeof(v->why), "Python process %u: no memory to track it; "
			 "profiled without Python frames", v->tgid);
		*say = pytrack_first_time(t, v->why);
	}
	return err;
}

static void pytrack_say(struct pytrack *t, const struct pytrack_verdict *v, bool say)
{
	if (say && t->config.warn)
		t->config.warn(v->why, t->config.warn_ctx);
}

void pytrack_process(struct pytrack *t, uint32_t tgid, uint64_t start_time,
		     const struct procmaps *maps)
{
	struct pytrack_verdict v;
	bool say;

	if (t->cut_off)
		return;
	pytrack_detect(t, tgid, start_time, maps, &v);
	if (!pytrack_enter(t))
		return;
	if (pytrack_apply(t, &v, &say) == -EAGAIN) {
		/* Reported again while starting (an exec keeps the start time): one entry, asked anew. */
		long i = pytrack_pending_find(t, tgid, start_time);
		uint64_t now = pytrack_now(t);

		if (i < 0 && t->n_pending < PYTRACK_MAX_PENDING)
			i = (long)t->n_pending++;
		if (i >= 0)
			t->pending[i] = (struct pytrack_process){
				.tgid = tgid, .start_time = start_time,
				.delay_ms = PYTRACK_SOON_FIRST_MS, .first_ask = now,
				.eval_start = v.py.eval_start, .eval_end = v.py.eval_end,
				.cold_start = v.py.cold_start, .cold_end = v.py.cold_end };
		if (i >= 0)
			pytrack_schedule(&t->pending[i], now);
	} else {
		/* Answered (or gone, or now something else): asked no more. */
		long i = pytrack_pending_find(t, tgid, start_time);

		if (i >= 0)
			pytrack_pending_drop(t, (size_t)i);
	}
	pytrack_leave(t);
	pytrack_say(t, &v, say);
}

bool pytrack_next_ask(const struct pytrack *t, struct pytrack_due *due)
{
	const struct pytrack_process *first = NULL;

	if (t->cut_off)
		return false;
	for (size_t i = 0; i < t->n_pending; i++)
		if (t->pending[i].next_ask && (!first || t->pending[i].next_ask < first->next_ask))
			first = &t->pending[i];
	if (!first)
		return false;
	*due = (struct pytrack_due){ first->tgid, first->start_time, first->next_ask };
	return true;
}

void pytrack_ask(struct pytrack *t, const struct pytrack_due *due, bool skip)
{
	struct pytrack_verdict v;
	long i;
	bool say;

	/* Only this thread changes the lists: reading them here needs no hook. */
	i = t->cut_off ? -1 : pytrack_pending_find(t, due->tgid, due->start_time);
	if (i < 0 || !t->pending[i].next_ask)
		return;
	if (skip) {
		if (!pytrack_enter(t))
			return;
		pytrack_pending_drop(t, (size_t)i);
		pytrack_leave(t);
		return;
	}
	pytrack_detect(t, due->tgid, due->start_time, NULL, &v);
	if (!pytrack_enter(t))
		return;
	i = pytrack_pending_find(t, due->tgid, due->start_time);
	if (pytrack_apply(t, &v, &say) != -EAGAIN) {
		if (i >= 0)
			pytrack_pending_drop(t, (size_t)i);
	} else if (i >= 0) {
		pytrack_schedule(&t->pending[i], pytrack_now(t));
	}
	pytrack_leave(t);
	pytrack_say(t, &v, say);
}

void pytrack_end_drain(struct pytrack *t)
{
	struct pytrack_verdict v;
	bool *gone = NULL;
	size_t kept = 0, n;
	bool say;

	/* The starting ones: each asked with no hook held, its answer applied in one. */
	for (size_t i = 0; i < t->n_pending && !t->cut_off; i++) {
		struct pytrack_process p = t->pending[i];

		if (p.tries >= PYTRACK_RETRIES)
			continue;
		pytrack_detect(t, p.tgid, p.start_time, NULL, &v);
		if (!pytrack_enter(t))
			return;
		t->pending[i].tries++;
		if (pytrack_apply(t, &v, &say) != -EAGAIN) {
			t->pending[i].tries = PYTRACK_RETRIES; /* answered */
			t->pending[i].next_ask = 0;
		}
		pytrack_leave(t);
		pytrack_say(t, &v, say);
	}
	/* The loaded ones that exited, found with no hook held. */
	n = t->n_loaded;
	if (n) {
		gone = calloc(n, sizeof(*gone));
		if (!gone)
			return; /* asked again at the next end of a drain */
		for (size_t i = 0; i < n; i++)
			gone[i] = !procpid_exists(t->proc_root, t->pids_ours, t->loaded[i].tgid);
	}
	if (!pytrack_enter(t)) {
		free(gone);
		return;
	}
	for (size_t i = 0; i < t->n_pending; i++)
		if (t->pending[i].tries < PYTRACK_RETRIES || t->pending[i].next_ask)
			t->pending[kept++] = t->pending[i];
	t->n_pending = kept;
	kept = 0;
	/* Only this thread appends, inside the hooks: the first n are the ones checked. */
	for (size_t i = 0; i < t->n_loaded; i++) {
		if (i < n && gone[i])
			sampler_python_forget(t->config.sampler, t->loaded[i].tgid);
		else
			t->loaded[kept++] = t->loaded[i];
	}
	t->n_loaded = kept;
	pytrack_leave(t);
	free(gone);
}

/* Whether any of the n ips is in p's evaluation function. */
static bool pytrack_in_eval(const struct pytrack_process *p, const uint64_t *ips, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((ips[i] >= p->eval_start && ips[i] < p->eval_end) ||
		    (ips[i] >= p->cold_start && ips[i] < p->cold_end))
			return true;
	return false;
}

void pytrack_sample(struct pytrack *t, uint32_t tgid, uint64_t start_time, const uint64_t *ips,
		    size_t n, uint64_t count)
{
	const struct pytrack_process *p = NULL;
	size_t i;

	for (i = 0; i < n; i++)
		if (ips[i] & EBPROF_PY_FRAME)
			return; /* it has Python frames */
	i = pytrack_find(t, tgid);
	if (i < t->n_loaded && t->loaded[i].tgid == tgid && t->loaded[i].start_time == start_time)
		p = &t->loaded[i];
	/* A Python still starting (asked again later): its interpreter's samples count too. */
	for (i = 0; !p && i < t->n_pending; i++)
		if (t->pending[i].tgid == tgid && t->pending[i].start_time == start_time &&
		    t->pending[i].eval_end)
			p = &t->pending[i];
	if (p && pytrack_in_eval(p, ips, n))
		t->stats.native_only += count;
}

int pytrack_adopt(struct pytrack *to, const struct pytrack *from)
{
	int err = 0;

	for (size_t i = 0; i < from->n_loaded; i++) {
		if (pytrack_remember(to, &from->loaded[i])) {
			sampler_python_forget(to->config.sampler, from->loaded[i].tgid);
			err = -ENOMEM;
		}
	}
	for (size_t i = 0; i < from->n_pending && to->n_pending < PYTRACK_MAX_PENDING; i++)
		to->pending[to->n_pending++] = from->pending[i];
	for (size_t i = 0; i < from->n_warned; i++) {
		/* In the order they were said, so that the oldest still goes first. */
		size_t k = (from->next_warned + PYTRACK_MAX_WARNED - from->n_warned + i) %
			   PYTRACK_MAX_WARNED;

		to->warned[to->next_warned] = from->warned[k];
		to->next_warned = (to->next_warned + 1) % PYTRACK_MAX_WARNED;
		if (to->n_warned < PYTRACK_MAX_WARNED)
			to->n_warned++;
	}
	return err;
}

void pytrack_forget_all(struct pytrack *t)
{
	for (size_t i = 0; i < t->n_loaded; i++)
		sampler_python_forget(t->config.sampler, t->loaded[i].tgid);
	t->n_loaded = 0;
	t->n_pending = 0;
}

void pytrack_stats(const struct pytrack *t, struct pytrack_stats *stats)
{
	struct pyproc_cache_stats c;

	pyproc_cache_stats(t->cache, &c);
	*stats = t->stats;
	stats->loaded = t->n_loaded;
	stats->examined = c.read;
	stats->reused = c.hits;
	stats->oversized = c.oversized;
	stats->cache_entries = c.entries;
	stats->cache_bytes = c.bytes;
}

void pytrack_counters_add(struct pytrack_stats *to, const struct pytrack_stats *from)
{
	to->unsupported += from->unsupported;
	to->refused += from->refused;
	for (int i = 0; i < TARGET_CAUSES; i++)
		to->refused_open[i] += from->refused_open[i];
	to->examined += from->examined;
	to->oversized += from->oversized;
	to->reused += from->reused;
	to->native_only += from->native_only;
}
