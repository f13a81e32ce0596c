/*
 * capture: a drain thread, a worker, and one lock between them.
 *
 * The drain thread (the caller's) copies each sample the sampler hands
 * out into a batch (the sampler's arrays are only valid during its
 * callback) and queues full batches for the worker, at most
 * CAPTURE_MAX_BATCHES at a time, so memory stays bounded when the worker
 * falls behind. The sampler's watch thread queues new processes to
 * snapshot. The worker takes snapshots first (a short-lived process must
 * be read before it exits), then samples, one at a time, and at the end
 * of a drain ends the symbolizer's drain and publishes its stats. A
 * Python still starting is asked again when pytrack says it is due (tens
 * to hundreds of milliseconds apart, whatever the drains' interval): the
 * worker's wait for work is then a timed one, and the ask one more step
 * under the watchdog, its process the one a stall quarantines. The
 * lock is never held across anything that touches a process's files: it
 * guards the queues, the profile being filled and the counters.
 *
 * The lock and its condition variables live in a core that every worker
 * holds a reference to, so that an abandoned worker can still take the
 * lock, see that it was abandoned, and leave, after the capture itself
 * is gone. A worker belongs to the capture until it is abandoned, then
 * to its own thread; either way its last reference frees it.
 *
 * Waiting is where the guarantee in capture.h is kept: a waiter wakes at
 * least every CAPTURE_POLL_MS, compares the worker's progress (its own
 * counter, and the gate's, which moves inside long reads) with what it
 * saw, and acts on a stall.
 */
#include "render/capture.h"
#include "render/forkmaps.h"
#include "render/pytrack.h"
#include "bpf/grow.h"
#include "symbolizer/procmaps.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define CAPTURE_BATCH_BYTES (256 * 1024)
#define CAPTURE_MAX_BATCHES 4 /* queued: 1 MiB of samples in flight */
#define CAPTURE_TRACK_QUEUE 4096
/* Queued reports that hold the unwinder's maps; beyond, the worker reads its own. */
#define CAPTURE_TRACK_KEPT 32
/*
 * How long a report with the unwinder's maps may wait for the worker, so
 * that one wake takes a batch (a wake is a context switch on each side,
 * and a busy host starts a hundred processes a second). The worker needs
 * no live process to take such a report: the maps are read, and a file
 * it does not know yet it opens through the process if it still can,
 * else by its path, if that is still the very file. What needs the
 * process alive is told at once: a report without maps (the worker reads
 * /proc), a file new to the unwinder (its table build wakes the worker,
 * which takes the reports first), and a backlog of maps held.
 * What is lost: a file the unwinder knows but the symbolizer's cache has
 * dropped, reachable only through a process (another mount namespace, or
 * deleted) that exits within the wait. The Python check of a new process
 * waits as long.
 */
#define CAPTURE_TRACK_DEFER_MS 50
/*
 * The process name, every user frame the unwinder may give, the kernel
 * frames, and room for the inlined frames the symbolizer adds.
 */
#define CAPTURE_MAX_FRAMES (1 + EBPROF_MAX_FRAMES + EBPROF_MAX_DEPTH + 1024)
#define CAPTURE_QUARANTINE 64	/* processes left unnamed after a stall, newest kept */
#define CAPTURE_POLL_MS 100
/*
 * How long a drain waits for the watch thread to read the copies left in
 * the ring: ~1 ms, unless a copy waits for its tables (up to a second).
 */
#define CAPTURE_FLUSH_MS 100
/* Snapshots of new processes race their exit: run ahead of the workload,
 * as the sampler's watch thread did (no effect without CAP_SYS_NICE). */
#define CAPTURE_WORKER_NICE -10

/* A sample as the worker gets it: ips are n_uips user, then n_kips kernel. */
struct capture_sample {
	uint32_t tgid;
	uint32_t n_uips, n_kips;
	uint32_t offcpu; /* as struct sampler_sample's */
	uint64_t start_time;
	uint64_t count;
	char comm[SAMPLER_COMM_LEN];
	uint64_t ips[];
};

struct capture_batch {
	struct capture_batch *next;
	size_t used, size; /* bytes of data */
	size_t pos;	   /* the worker's place in it */
	uint64_t weight;   /* samples it holds (the sum of counts) */
	uint64_t done;	   /* of those, added by the worker */
	uint64_t data[];
};

struct capture_process {
	uint32_t tgid;
	uint64_t start_time;
};

/*
 * A report for the worker: the process, and the maps the unwinder read
 * for it (NULL: none, the worker reads them). No file is held open for
 * them: whether the process has since exited or exec'd, they are its last
 * maps until the report an exec brings, which is queued after this one.
 */
struct capture_track {
	struct capture_process p;
	struct procmaps *maps;
	bool gone; /* the unwinder's read of its maps found them gone: not read again */
};

struct capture_core {
	pthread_mutex_t lock;
	pthread_cond_t work; /* a worker has something to do, or should stop */
	pthread_cond_t done; /* a worker finished something, or made room */
	unsigned int refs;   /* under lock */
};

/* What a worker counts besides its symbolizer. */
struct capture_counts {
	uint64_t lost_memory, unnamed_stalled, stalled_frames, tracked, gone;
};

struct capture_worker {
	struct capture_core *core;
	pthread_t thread;
	struct symbolizer *sym;
	struct target *gate;	    /* its opens for unwind tables */
	struct frame frames[CAPTURE_MAX_FRAMES + 2]; /* + "[stalled]", + the off-CPU leaf */
	uint64_t cpu_weight, offcpu_weight; /* the capture's (struct capture_config) */
	/* Processes not to name, fixed when the worker is made. */
	struct capture_process quarantine[CAPTURE_QUARANTINE];
	size_t n_quarantine;
	/* The rest under core->lock. */
	struct capture_batch *head, *tail, *current;
	unsigned int queued;
	struct capture_track tracks[CAPTURE_TRACK_QUEUE];
	size_t track_first, n_tracks, n_kept; /* n_kept: tracks holding maps */
	bool tracks_deferred;		      /* queued without a wake, due by tracks_due */
	struct timespec tracks_due;
	uint64_t end_asked, end_done;
	struct profile *into;
	struct profile *offcpu_into; /* NULL: off-CPU samples go into into */
	uint64_t progress;
	struct capture_process busy; /* what it is naming now; tgid 0: no process */
	struct unwinder *unwinder;   /* whose table builds it runs; NULL: none */
	uint64_t busy_build;	     /* the build it runs now (unwinder_job_ticket); 0: none */
	struct capture_counts counts;
	struct symbolizer_stats published; /* as of its last end of a drain */
	struct pytrack *py;		   /* NULL: no Python frames; used unlocked, by the worker */
	struct pytrack_stats py_published; /* as of its last end of a drain */
	bool stop, abandoned, exited;
	unsigned int refs;
};

struct capture {
	struct capture_config config;
	struct capture_core *core;
	struct sampler_watch *watch;
	struct sampler *sampler;
	struct unwinder *unwinder; /* NULL: user stacks by frame pointer */
	bool lend_maps;		    /* the unwinder and the symbolizer read the same /proc */
	struct forkmaps *forks;	    /* the watch thread's: maps forks borrow (NULL: none) */
	struct capture_batch *fill; /* the drain thread's batch being filled */
	int signal;		    /* 0: stalled workers are not interrupted */
	bool closing;		    /* no new worker replaces an abandoned one */
	/* The rest under core->lock. */
	struct capture_worker *worker; /* NULL once given up */
	struct profile *into;
	struct profile *offcpu_into; /* of the drain in progress */
	struct symbolizer_stats retired; /* counters of abandoned symbolizers */
	struct capture_counts retired_counts;
	struct pytrack_stats retired_py; /* counters of abandoned workers' Python trackers */
	/* An abandoned worker's Python processes, for the worker that replaces it. */
	struct pytrack *py_heir;
	struct capture_process quarantine[CAPTURE_QUARANTINE];
	size_t n_quarantine;
	uint64_t received, lost_stalled, stalls, interrupts, track_dropped;
	uint64_t borrowed, parent_reads; /* see struct capture_stats */
	uint64_t forks_bytes;		 /* forkmaps_bytes(forks), as of its last change */
	bool given_up;
};

/* Tracks one worker's progress for a waiter. */
struct capture_watchdog {
	const struct capture_worker *worker;
	uint64_t progress;
	struct timespec since;
	bool interrupted;
};

void capture_config_init(struct capture_config *config)
{
	memset(config, 0, sizeof(*config));
	symbolizer_config_init(&config->symbolizer);
	unwinder_config_init(&config->unwind);
	config->stall_ms = CAPTURE_DEFAULT_STALL_MS;
}

/* --- time ------------------------------------------------------------------ */

static struct timespec capture_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts;
}

static struct timespec capture_after(struct timespec t, unsigned int ms)
{
	t.tv_sec += ms / 1000;
	t.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	return t;
}

static bool capture_passed(struct timespec now, struct timespec t)
{
	return now.tv_sec > t.tv_sec || (now.tv_sec == t.tv_sec && now.tv_nsec >= t.tv_nsec);
}

/* --- core, batches, workers ------------------------------------------------ */

static struct capture_core *core_new(void)
{
	struct capture_core *core = calloc(1, sizeof(*core));
	pthread_condattr_t attr;

	if (!core)
		return NULL;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_mutex_init(&core->lock, NULL);
	pthread_cond_init(&core->work, &attr);
	pthread_cond_init(&core->done, &attr);
	pthread_condattr_destroy(&attr);
	core->refs = 1;
	return core;
}

/* Drops a reference; called with the lock held, returns with it released. */
static void core_put_unlock(struct capture_core *core)
{
	bool last = --core->refs == 0;

	pthread_mutex_unlock(&core->lock);
	if (!last)
		return;
	pthread_mutex_destroy(&core->lock);
	pthread_cond_destroy(&core->work);
	pthread_cond_destroy(&core->done);
	free(core);
}

static void batch_free_list(struct capture_batch *b)
{
	while (b) {
		struct capture_batch *next = b->next;

		free(b);
		b = next;
	}
}

/* Drops what a track holds. */
static void track_release(struct capture_track *t)
{
	procmaps_free(t->maps);
	t->maps = NULL;
}

/*
 * The maps a track lends (NULL: none, the worker reads them): taken as
 * the process's even if it has exited since (they are the last it had)
 * or exec'd (its next sample brings a new report, queued after this one,
 * whose maps replace these). The track keeps nothing.
 */
static struct procmaps *track_take_maps(struct capture_track *t)
{
	struct procmaps *maps = t->maps;

	t->maps = NULL;
	return maps;
}

/* Drops a worker's reference; lock held on entry, released on return. */
static void worker_put_unlock(struct capture_worker *w)
{
	struct capture_core *core = w->core;

	if (--w->refs) {
		pthread_mutex_unlock(&core->lock);
		return;
	}
	for (size_t i = 0; i < w->n_tracks; i++)
		track_release(&w->tracks[(w->track_first + i) % CAPTURE_TRACK_QUEUE]);
	batch_free_list(w->head);
	free(w->current);
	pytrack_free(w->py);
	free(w);
	core_put_unlock(core);
}

static bool worker_quarantined(const struct capture_worker *w, uint32_t tgid, uint64_t start)
{
	for (size_t i = 0; i < w->n_quarantine; i++)
		if (w->quarantine[i].tgid == tgid && w->quarantine[i].start_time == start)
			return true;
	return false;
}

/*
 * Names one sample into w->frames; returns how many. A process that
 * stalled a worker before gets its name, one "[stalled]" frame for its
 * user part, and its kernel frames: nothing of it is read again.
 */
static size_t worker_name(struct capture_worker *w, const struct capture_sample *s,
			  bool *stalled)
{
	struct symbolizer_sample ss = { s->tgid, s->start_time, s->comm, s->ips, s->n_uips,
					s->ips + s->n_uips, s->n_kips };
	size_t n;

	*stalled = s->n_uips && worker_quarantined(w, s->tgid, s->start_time);
	if (!*stalled)
		return symbolizer_stack(w->sym, &ss, w->frames, CAPTURE_MAX_FRAMES);
	ss.n_uips = 0;
	n = symbolizer_stack(w->sym, &ss, w->frames, CAPTURE_MAX_FRAMES);
	if (!n)
		return 0;
	memmove(w->frames + 2, w->frames + 1, (n - 1) * sizeof(w->frames[0]));
	w->frames[1] = (struct frame){ CAPTURE_STALLED_NAME, FRAME_UNKNOWN };
	return n + 1;
}

/* An off-CPU sample's leaf: the state it waited in, after its kernel frames. */
static size_t worker_offcpu_leaf(struct capture_worker *w, const struct capture_sample *s,
				 size_t n)
{
	const char *name = frame_offcpu_name(s->offcpu);

	if (!n || !name)
		return n;
	w->frames[n] = (struct frame){ name, FRAME_OFFCPU };
	return n + 1;
}

/* The profile a sample goes into (NULL: none, between drains). */
static struct profile *worker_into(const struct capture_worker *w, const struct capture_sample *s)
{
	return s->offcpu && w->offcpu_into ? w->offcpu_into : w->into;
}

/* What a sample weighs in the profile: time, or samples (see struct capture_config). */
static uint64_t worker_weight(const struct capture_worker *w, const struct capture_sample *s)
{
	uint64_t each = s->offcpu ? w->offcpu_weight : w->cpu_weight;

	return s->count * (each ? each : 1);
}

static size_t sample_size(uint32_t n_uips, uint32_t n_kips)
{
	return sizeof(struct capture_sample) + ((size_t)n_uips + n_kips) * sizeof(uint64_t);
}

static struct timespec worker_ns_timespec(uint64_t ns)
{
	return (struct timespec){ .tv_sec = (time_t)(ns / 1000000000ull),
				  .tv_nsec = (long)(ns % 1000000000ull) };
}

/* The next Python to ask again, if any (lock held), and the time now (CLOCK_MONOTONIC, pytrack's). */
static bool worker_py_due(const struct capture_worker *w, struct pytrack_due *due,
			  struct timespec *now)
{
	if (!pytrack_next_ask(w->py, due))
		return false;
	*now = capture_now();
	return true;
}

/* One step of the worker, lock held; false when it should end. */
static bool worker_step(struct capture_worker *w)
{
	struct capture_core *core = w->core;
	struct pytrack_due due;
	struct timespec now;

	if (w->n_tracks) {
		struct capture_track track = w->tracks[w->track_first];
		struct capture_process p = track.p;
		const struct procmaps *maps = NULL;
		int err = 0;

		w->track_first = (w->track_first + 1) % CAPTURE_TRACK_QUEUE;
		w->n_tracks--;
		w->n_kept -= track.maps != NULL;
		w->tracks_deferred = false; /* taken: the next report starts a new wait */
		if (worker_quarantined(w, p.tgid, p.start_time)) {
			track_release(&track);
			return true;
		}
		w->busy = p;
		pthread_mutex_unlock(&core->lock);
		/*
		 * One read of its maps, the unwinder's if it still holds: for
		 * its names, and lent to the Python check. None when the
		 * unwinder's found it gone.
		 */
		if (track.gone) {
			err = symbolizer_track_gone(w->sym, p.tgid, p.start_time);
		} else {
			err = symbolizer_track_maps(w->sym, p.tgid, p.start_time,
						    track_take_maps(&track), &maps);
		}
		if (!err && w->py)
			pytrack_process(w->py, p.tgid, p.start_time, maps);
		pthread_mutex_lock(&core->lock);
		if (w->abandoned)
			return false;
		w->busy.tgid = 0;
		w->counts.tracked += !err;
		w->counts.gone += err == -ESRCH;
		w->progress++;
		pthread_cond_broadcast(&core->done); /* capture_prepare() waits for tracks */
		return true;
	}
	if (w->unwinder && !w->stop) {
		struct unwinder_job *job;

		/*
		 * A table build: the file is read with no lock held, under the
		 * watchdog. Its process is the one a stall quarantines (its
		 * frames would stall the symbolizer next), and a quarantined
		 * process's files are not read for tables either.
		 */
		if (!unwinder_job_take(w->unwinder, &job)) {
			struct capture_process p;

			unwinder_job_process(job, &p.tgid, &p.start_time);
			if (worker_quarantined(w, p.tgid, p.start_time)) {
				unwinder_job_finish(w->unwinder, job);
				return true;
			}
			w->busy = p;
			w->busy_build = unwinder_job_ticket(job);
			pthread_mutex_unlock(&core->lock);
			unwinder_job_read(job, w->gate);
			pthread_mutex_lock(&core->lock);
			if (w->abandoned) {
				unwinder_job_free(job);
				return false;
			}
			w->busy.tgid = 0;
			w->busy_build = 0;
			/* CPU only (rows to words, into the maps): not abandoned meanwhile. */
			unwinder_job_finish(w->unwinder, job);
			w->progress++;
			pthread_cond_broadcast(&core->done); /* and for tables */
			return true;
		}
	}
	if (w->py && !w->stop && worker_py_due(w, &due, &now)) {
		/*
		 * A Python still starting, asked again on time (its files read
		 * with no lock held, under the watchdog: it is the process a
		 * stall quarantines, and a quarantined one is not read again).
		 * Before samples: a drain's worth of them may take a while.
		 */
		if (capture_passed(now, worker_ns_timespec(due.at))) {
			bool skip = worker_quarantined(w, due.tgid, due.start_time);

			w->busy = (struct capture_process){ due.tgid, due.start_time };
			pthread_mutex_unlock(&core->lock);
			pytrack_ask(w->py, &due, skip);
			pthread_mutex_lock(&core->lock);
			if (w->abandoned)
				return false;
			w->busy.tgid = 0;
			w->progress++;
			return true;
		}
	}
	if (!w->current && w->head) {
		w->current = w->head;
		w->head = w->head->next;
		if (!w->head)
			w->tail = NULL;
		w->queued--;
		pthread_cond_broadcast(&core->done); /* room for another batch */
	}
	if (w->current && w->current->pos < w->current->used) {
		const struct capture_sample *s =
			(const void *)((const char *)w->current->data + w->current->pos);
		bool stalled;
		size_t n;

		w->busy = (struct capture_process){ s->tgid, s->start_time };
		pthread_mutex_unlock(&core->lock);
		n = worker_offcpu_leaf(w, s, worker_name(w, s, &stalled));
		if (w->py && !stalled)
			pytrack_sample(w->py, s->tgid, s->start_time, s->ips, s->n_uips, s->count);
		pthread_mutex_lock(&core->lock);
		if (w->abandoned)
			return false;
		w->busy.tgid = 0;
		if (stalled) {
			w->counts.unnamed_stalled += s->count;
			w->counts.stalled_frames++;
		}
		if (!worker_into(w, s) ||
		    profile_add(worker_into(w, s), w->frames, n, worker_weight(w, s)))
			w->counts.lost_memory += s->count;
		w->current->pos += sample_size(s->n_uips, s->n_kips);
		w->current->done += s->count;
		w->progress++;
		return true;
	}
	if (w->current) {
		free(w->current);
		w->current = NULL;
		return true;
	}
	if (w->end_done < w->end_asked) {
		uint64_t asked = w->end_asked;
		struct symbolizer_stats st;
		struct pytrack_stats py = { 0 };

		pthread_mutex_unlock(&core->lock);
		symbolizer_end_drain(w->sym);
		symbolizer_stats(w->sym, &st);
		if (w->py) {
			pytrack_end_drain(w->py);
			pytrack_stats(w->py, &py);
		}
		pthread_mutex_lock(&core->lock);
		if (w->abandoned)
			return false;
		w->published = st;
		w->py_published = py;
		w->end_done = asked;
		w->progress++;
		pthread_cond_broadcast(&core->done);
		return true;
	}
	if (w->stop)
		return false;
	/* Nothing to do until more work, or the next Python to ask again. */
	if (w->py && worker_py_due(w, &due, &now)) {
		struct timespec at = worker_ns_timespec(due.at);

		pthread_cond_timedwait(&core->work, &core->lock, &at);
	} else {
		pthread_cond_wait(&core->work, &core->lock);
	}
	return true;
}

static void *worker_run(void *arg)
{
	struct capture_worker *w = arg;
	struct capture_core *core = w->core;
	struct symbolizer *sym = NULL;
	struct target *gate = NULL;
	bool abandoned;

	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), CAPTURE_WORKER_NICE);
	pthread_mutex_lock(&core->lock);
	while (!w->abandoned && worker_step(w))
		;
	abandoned = w->abandoned;
	w->exited = true;
	pthread_cond_broadcast(&core->done);
	if (abandoned) {
		/* Nobody else will: what it held is its own to free. */
		sym = w->sym;
		w->sym = NULL;
		gate = w->gate;
		w->gate = NULL;
	}
	worker_put_unlock(w);
	symbolizer_free(sym);
	target_free(gate);
	return NULL;
}

/*
 * The Python tracker's hooks: it touches the sampler only under the lock,
 * and not at all once its worker was abandoned (the sampler may be freed).
 */
static bool worker_py_enter(void *ctx)
{
	struct capture_worker *w = ctx;

	pthread_mutex_lock(&w->core->lock);
	if (!w->abandoned)
		return true;
	pthread_mutex_unlock(&w->core->lock);
	return false;
}

static void worker_py_leave(void *ctx)
{
	struct capture_worker *w = ctx;

	pthread_mutex_unlock(&w->core->lock);
}

/*
 * A Python tracker for worker w (lock held, w not started), when the
 * sampler walks Python frames; else NULL. It takes over the processes of
 * the worker w replaces, if any.
 */
static struct pytrack *capture_pytrack(struct capture *cap, struct capture_worker *w)
{
	struct pytrack *py;

	if (!cap->sampler || !sampler_python(cap->sampler))
		return NULL;
	py = pytrack_new(&(struct pytrack_config){
		.sampler = cap->sampler,
		.proc_root = cap->config.symbolizer.proc_root,
		.gate = w->gate,
		.max_table = cap->config.symbolizer.elf_bounds.max_table,
		.warn = cap->config.warn,
		.warn_ctx = cap->config.warn_ctx,
		.enter = worker_py_enter,
		.leave = worker_py_leave,
		.hook_ctx = w,
	});
	if (py && cap->py_heir) {
		pytrack_adopt(py, cap->py_heir);
		pytrack_free(cap->py_heir);
		cap->py_heir = NULL;
	}
	return py;
}

/* A new worker with a new symbolizer, started; NULL when that fails. */
static struct capture_worker *worker_new(struct capture *cap)
{
	struct capture_worker *w = calloc(1, sizeof(*w));
	sigset_t all, old;
	int err;

	if (!w)
		return NULL;
	w->sym = symbolizer_new(&cap->config.symbolizer);
	w->gate = target_new(&(struct target_config){
		.proc_root = cap->config.unwind.proc_root,
		.max_file_size = cap->config.unwind.max_file_size });
	if (!w->sym || !w->gate) {
		symbolizer_free(w->sym);
		target_free(w->gate);
		free(w);
		return NULL;
	}
	pthread_mutex_lock(&cap->core->lock);
	w->unwinder = cap->unwinder;
	w->core = cap->core;
	w->py = capture_pytrack(cap, w);
	memcpy(w->quarantine, cap->quarantine, sizeof(w->quarantine));
	w->n_quarantine = cap->n_quarantine;
	w->cpu_weight = cap->config.cpu_weight;
	w->offcpu_weight = cap->config.offcpu_weight;
	w->core->refs++;
	pthread_mutex_unlock(&cap->core->lock);
	w->refs = 2; /* the capture's and the thread's */
	/* The thread starts with every signal blocked but the interrupt. */
	sigfillset(&all);
	if (cap->signal)
		sigdelset(&all, cap->signal);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&w->thread, NULL, worker_run, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		symbolizer_free(w->sym);
		target_free(w->gate);
		pthread_mutex_lock(&cap->core->lock);
		/* What it took over from an abandoned worker goes from the map now:
		 * nobody else will forget those processes. */
		if (w->py)
			pytrack_forget_all(w->py);
		w->refs = 1;
		worker_put_unlock(w);
		return NULL;
	}
	return w;
}

/* --- the capture's side ------------------------------------------------------ */

static void counts_add(struct capture_counts *to, const struct capture_counts *from)
{
	to->lost_memory += from->lost_memory;
	to->unnamed_stalled += from->unnamed_stalled;
	to->stalled_frames += from->stalled_frames;
	to->tracked += from->tracked;
	to->gone += from->gone;
}

/* Adds the counters of from (not what it holds now) to to. */
static void symbolizer_counters_add(struct symbolizer_stats *to,
				    const struct symbolizer_stats *from)
{
	to->frames += from->frames;
	to->unresolved += from->unresolved;
	to->elf_cache_hits += from->elf_cache_hits;
	to->elf_cache_misses += from->elf_cache_misses;
	to->evicted += from->evicted;
	to->perfmaps_refused += from->perfmaps_refused;
	to->perfmaps_opened += from->perfmaps_opened;
	for (int i = 0; i < TARGET_CAUSES; i++)
		to->refused[i] += from->refused[i];
	to->elf_breaches.tables += from->elf_breaches.tables;
	to->elf_breaches.symbols += from->elf_breaches.symbols;
	to->elf_breaches.sections += from->elf_breaches.sections;
	to->perfmap_lines_too_long += from->perfmap_lines_too_long;
	to->perfmaps_truncated += from->perfmaps_truncated;
	to->python_hits += from->python_hits;
	to->python_reads += from->python_reads;
	to->python_stale += from->python_stale;
	to->python_faults += from->python_faults;
	to->debuginfod_fetched += from->debuginfod_fetched;
	to->debuginfod_not_found += from->debuginfod_not_found;
	to->debuginfod_failed += from->debuginfod_failed;
	to->inlined_frames += from->inlined_frames;
	to->inline_hits += from->inline_hits;
	to->inline_misses += from->inline_misses;
	to->inline_files += from->inline_files;
	to->inline_files_none += from->inline_files_none;
}

static void quarantine_add(struct capture *cap, struct capture_process p)
{
	if (!p.tgid)
		return;
	if (cap->n_quarantine == CAPTURE_QUARANTINE) {
		memmove(cap->quarantine, cap->quarantine + 1,
			(CAPTURE_QUARANTINE - 1) * sizeof(cap->quarantine[0]));
		cap->n_quarantine--;
	}
	cap->quarantine[cap->n_quarantine++] = p;
}

/*
 * Keeps an abandoned worker's Python processes (lock held: its tracker
 * changes its lists only under it, and no more once abandoned) for the
 * worker that replaces it, which forgets them from the sampler when they
 * exit. Without one the map would keep them until it is full.
 */
static void capture_py_handover(struct capture *cap, struct capture_worker *w)
{
	if (!w->py)
		return;
	if (!cap->py_heir)
		cap->py_heir = pytrack_new(&(struct pytrack_config){ .sampler = cap->sampler });
	if (cap->py_heir)
		pytrack_adopt(cap->py_heir, w->py);
	else
		pytrack_forget_all(w->py); /* no memory: forgotten now, walked natively */
}

/* No worker will replace the abandoned one (lock held): nobody would forget them later. */
static void capture_py_orphaned(struct capture *cap)
{
	if (!cap->py_heir)
		return;
	if (!cap->closing)
		pytrack_forget_all(cap->py_heir);
	pytrack_free(cap->py_heir);
	cap->py_heir = NULL;
}

/*
 * Gives up on the current worker (lock held): what it held is lost and
 * counted, the process it was naming quarantined, and a new worker takes
 * over unless the capture is closing or has had CAPTURE_MAX_STALLS.
 * Returns with the lock held; the worker may have changed.
 */
static void capture_abandon(struct capture *cap)
{
	struct capture_worker *w = cap->worker, *next = NULL;
	uint64_t lost = 0;

	w->abandoned = true;
	for (struct capture_batch *b = w->head; b; b = b->next)
		lost += b->weight;
	batch_free_list(w->head);
	w->head = w->tail = NULL;
	w->queued = 0;
	if (w->current)
		lost += w->current->weight - w->current->done;
	cap->lost_stalled += lost;
	quarantine_add(cap, w->busy);
	/* A table build it was stuck in: that file gets no table, and is not read again. */
	if (w->busy_build && w->unwinder)
		unwinder_job_stalled(w->unwinder, w->busy_build);
	symbolizer_counters_add(&cap->retired, &w->published);
	counts_add(&cap->retired_counts, &w->counts);
	pytrack_counters_add(&cap->retired_py, &w->py_published);
	capture_py_handover(cap, w);
	cap->stalls++;
	cap->worker = NULL;
	pthread_detach(w->thread);
	pthread_cond_broadcast(&cap->core->work);
	w->refs--; /* the capture's; the thread still holds its own */
	if (cap->closing || cap->stalls >= CAPTURE_MAX_STALLS) {
		cap->given_up = !cap->closing;
		capture_py_orphaned(cap);
		return;
	}
	pthread_mutex_unlock(&cap->core->lock);
	next = worker_new(cap);
	pthread_mutex_lock(&cap->core->lock);
	cap->worker = next;
	if (!next) {
		cap->given_up = true;
		capture_py_orphaned(cap);
		return;
	}
	next->into = cap->into;
	next->offcpu_into = cap->offcpu_into;
}

static uint64_t worker_progress(const struct capture_worker *w)
{
	return w->progress + symbolizer_progress(w->sym) + target_progress(w->gate);
}

/*
 * Waits a little for the current worker (lock held), and acts when it
 * has made no progress for stall_ms: the interrupt signal first, then,
 * stall_ms / 4 later, abandonment. Returns with the lock held.
 */
static void capture_wait(struct capture *cap, struct capture_watchdog *wd)
{
	struct capture_worker *w = cap->worker;
	unsigned int stall = cap->config.stall_ms;
	struct timespec now = capture_now(), limit, wake;
	uint64_t progress = worker_progress(w);

	if (wd->worker != w || progress != wd->progress) {
		*wd = (struct capture_watchdog){ .worker = w, .progress = progress, .since = now };
	}
	limit = capture_after(wd->since, wd->interrupted ? stall + stall / 4 : stall);
	if (capture_passed(now, limit)) {
		if (!wd->interrupted && cap->signal) {
			pthread_kill(w->thread, cap->signal);
			cap->interrupts++;
			wd->interrupted = true;
			return;
		}
		capture_abandon(cap);
		return;
	}
	wake = capture_after(now, CAPTURE_POLL_MS);
	if (capture_passed(wake, limit))
		wake = limit;
	pthread_cond_timedwait(&cap->core->done, &cap->core->lock, &wake);
}

/* Queues a batch for the worker, waiting for room (lock not held). */
static void capture_push(struct capture *cap, struct capture_batch *b)
{
	struct capture_watchdog wd = { 0 };
	bool wake = false;

	pthread_mutex_lock(&cap->core->lock);
	cap->received += b->weight;
	while (cap->worker && cap->worker->queued >= CAPTURE_MAX_BATCHES)
		capture_wait(cap, &wd);
	if (!cap->worker) {
		cap->lost_stalled += b->weight;
		free(b);
	} else {
		struct capture_worker *w = cap->worker;

		if (w->tail)
			w->tail->next = b;
		else
			w->head = b;
		w->tail = b;
		w->queued++;
		wake = true;
	}
	pthread_mutex_unlock(&cap->core->lock);
	/* Told with the lock let go: woken, the worker takes it without waiting for us. */
	if (wake)
		pthread_cond_broadcast(&cap->core->work);
}

static struct capture_batch *batch_new(size_t need)
{
	size_t size = need > CAPTURE_BATCH_BYTES ? need : CAPTURE_BATCH_BYTES;
	struct capture_batch *b = malloc(sizeof(*b) + size);

	if (b)
		*b = (struct capture_batch){ .size = size };
	return b;
}

/* The sampler's callback, on the drain thread: copy, queue, never name. */
static int capture_add(const struct sampler_sample *sample, void *ctx)
{
	struct capture *cap = ctx;
	size_t size = sample_size(sample->n_uips, sample->n_kips);
	struct capture_sample *s;

	if (cap->fill && cap->fill->used + size > cap->fill->size) {
		capture_push(cap, cap->fill);
		cap->fill = NULL;
	}
	if (!cap->fill)
		cap->fill = batch_new(size);
	if (!cap->fill) {
		pthread_mutex_lock(&cap->core->lock);
		cap->received += sample->count;
		cap->retired_counts.lost_memory += sample->count;
		pthread_mutex_unlock(&cap->core->lock);
		return 0;
	}
	s = (void *)((char *)cap->fill->data + cap->fill->used);
	*s = (struct capture_sample){
		.tgid = sample->tgid,
		.n_uips = sample->n_uips,
		.n_kips = sample->n_kips,
		.offcpu = sample->offcpu,
		.start_time = sample->start_time,
		.count = sample->count,
	};
	memcpy(s->comm, sample->comm, sizeof(s->comm));
	memcpy(s->ips, sample->uips, sample->n_uips * sizeof(uint64_t));
	memcpy(s->ips + sample->n_uips, sample->kips, sample->n_kips * sizeof(uint64_t));
	cap->fill->used += size;
	cap->fill->weight += sample->count;
	return 0;
}

/* A configured /proc: NULL is the real one. */
static const char *or_proc(const char *proc_root)
{
	return proc_root ? proc_root : "/proc";
}

/*
 * A fork's maps, borrowed from its parent (render/forkmaps.h): those kept
 * for an earlier fork, else the parent's read now. Tracked by the
 * unwinder, if any, and lent in track->maps. Returns whether the parent's
 * were read; false with no maps lent if it could not be (the caller reads
 * the process's own).
 */
static bool capture_borrow(struct capture *cap, const struct sampler_process *process,
			   struct capture_track *track)
{
	uint64_t now = sampler_boot_ns(), read_at;
	struct procmaps *maps;
	bool read = false;

	maps = forkmaps_get(cap->forks, process->parent_tgid, process->parent_start_time, now,
			    &read_at);
	if (!maps) {
		if (procmaps_load_pid(or_proc(cap->config.symbolizer.proc_root),
				      process->parent_tgid, !cap->config.symbolizer.maps_text_only,
				      &maps))
			return false;
		read_at = now;
		read = true;
		forkmaps_put(cap->forks, process->parent_tgid, process->parent_start_time, maps,
			     read_at);
	}
	if (cap->unwinder)
		unwinder_track_given(cap->unwinder, process->tgid, process->start_time, maps,
				     read_at);
	track->maps = maps;
	return read;
}

/*
 * The sampler's watch thread: the unwinder's read of the process's maps
 * (/proc only: the files of the tables it lacks are read by the worker,
 * which capture_wake() tells), done here, since a short-lived process
 * must be read before it exits, and the samples copied before its tables
 * wait behind this report on the ring buffer. Then the report is queued
 * for the worker's snapshot, with those maps lent: never taken here.
 */
static int capture_track(const struct sampler_process *process, void *ctx)
{
	struct capture *cap = ctx;
	struct capture_track track = { { process->tgid, process->start_time }, NULL, false };
	struct capture_worker *w;
	bool wake = false, parent_read = false, borrowed = false;
	size_t forks_bytes = 0;

	/* Where the unwinder and the symbolizer would read one /proc. */
	if (process->parent_tgid && cap->forks && (!cap->unwinder || cap->lend_maps)) {
		parent_read = capture_borrow(cap, process, &track);
		borrowed = track.maps && !parent_read;
		if (parent_read)
			forks_bytes = forkmaps_bytes(cap->forks);
	}
	if (cap->unwinder && !track.maps)
		track.gone = unwinder_track_kept(cap->unwinder, process->tgid, process->start_time,
						 cap->lend_maps ? &track.maps : NULL) == -ESRCH &&
			     cap->lend_maps;
	pthread_mutex_lock(&cap->core->lock);
	cap->borrowed += borrowed;
	cap->parent_reads += parent_read;
	if (parent_read) /* the only change to forks */
		cap->forks_bytes = forks_bytes;
	w = cap->worker;
	if (!w || w->n_tracks == CAPTURE_TRACK_QUEUE) {
		cap->track_dropped++;
	} else {
		if (track.maps && w->n_kept == CAPTURE_TRACK_KEPT)
			track_release(&track); /* a backlog: fewer maps held */
		w->n_kept += track.maps != NULL;
		/* To read its maps while it runs, or with many maps held: now. Else in a batch. */
		wake = (!track.maps && !track.gone) || w->n_kept >= CAPTURE_TRACK_KEPT / 2 ||
		       w->n_tracks >= CAPTURE_TRACK_QUEUE / 2;
		w->tracks[(w->track_first + w->n_tracks) % CAPTURE_TRACK_QUEUE] = track;
		w->n_tracks++;
		track = (struct capture_track){ .maps = NULL };
		if (wake) {
			w->tracks_deferred = false;
		} else if (!w->tracks_deferred) {
			w->tracks_deferred = true;
			w->tracks_due = capture_after(capture_now(), CAPTURE_TRACK_DEFER_MS);
		}
	}
	pthread_mutex_unlock(&cap->core->lock);
	if (wake) /* as in capture_push() */
		pthread_cond_broadcast(&cap->core->work);
	track_release(&track);
	return 0;
}

/*
 * The watch thread, after its reports: wakes the worker for the reports
 * put off once they are due, or tells the thread how long until then.
 */
static int capture_idle(void *ctx)
{
	struct capture *cap = ctx;
	struct capture_worker *w;
	struct timespec now = capture_now();
	bool wake = false;
	int ms = -1;

	pthread_mutex_lock(&cap->core->lock);
	w = cap->worker;
	if (w && w->tracks_deferred) {
		if (capture_passed(now, w->tracks_due)) {
			w->tracks_deferred = false;
			wake = true;
		} else {
			/* Rounded up: a wait that ends early only comes back here. */
			ms = (int)((w->tracks_due.tv_sec - now.tv_sec) * 1000 +
				   (w->tracks_due.tv_nsec - now.tv_nsec) / 1000000) + 1;
		}
	}
	pthread_mutex_unlock(&cap->core->lock);
	if (wake) /* as in capture_push() */
		pthread_cond_broadcast(&cap->core->work);
	return ms;
}

/* --- preparing known targets ------------------------------------------------ */

struct capture_targets {
	struct capture_process *procs;
	size_t n, cap;
};

static int capture_target_add(const struct sampler_process *process, void *ctx)
{
	struct capture_targets *t = ctx;

	if (GROW_ARRAY(&t->procs, &t->cap, t->n + 1, 16))
		return -ENOMEM;
	t->procs[t->n++] = (struct capture_process){ process->tgid, process->start_time };
	return 0;
}

/* How many targets have nothing left to wait for (lock held): tracked, tables built. */
static size_t capture_targets_ready(struct capture *cap, const struct capture_targets *t)
{
	const struct capture_worker *w = cap->worker;
	size_t ready = 0;

	if (w->n_tracks || w->busy.tgid)
		return 0; /* the worker is still taking their snapshots */
	for (size_t i = 0; i < t->n; i++)
		ready += !cap->unwinder ||
			 !unwinder_pending(cap->unwinder, t->procs[i].tgid, t->procs[i].start_time);
	return ready;
}

int capture_prepare(struct capture *cap, unsigned int timeout_ms, struct capture_prepared *out)
{
	struct capture_targets t = { 0 };
	struct timespec start = capture_now(), now, limit;
	int err;

	*out = (struct capture_prepared){ 0 };
	/*
	 * Shorter than the stall timeout: a worker that makes no progress is
	 * left to the watchdog of the drains, which abandon it; here it only
	 * means that sampling starts unprepared.
	 */
	if (timeout_ms > cap->config.stall_ms / 2)
		timeout_ms = cap->config.stall_ms / 2;
	limit = capture_after(start, timeout_ms);
	err = cap->sampler ? sampler_targets(cap->sampler, capture_target_add, &t) : -EINVAL;
	if (err < 0) {
		free(t.procs);
		return err;
	}
	out->targets = t.n;
	/* The path of a reported process: queued for the worker, tables asked for here. */
	for (size_t i = 0; i < t.n; i++)
		capture_track(&(struct sampler_process){ .tgid = t.procs[i].tgid,
							 .start_time = t.procs[i].start_time },
			      cap);
	pthread_mutex_lock(&cap->core->lock);
	/* Waited for here: not put off (the watch thread may not wake before the limit). */
	if (cap->worker)
		cap->worker->tracks_deferred = false;
	pthread_cond_broadcast(&cap->core->work);
	while (cap->worker) {
		out->ready = capture_targets_ready(cap, &t);
		if (out->ready == t.n || capture_passed(capture_now(), limit))
			break;
		/* The worker signals done after each snapshot and each table. */
		pthread_cond_timedwait(&cap->core->done, &cap->core->lock, &limit);
	}
	out->timed_out = out->ready < t.n;
	pthread_mutex_unlock(&cap->core->lock);
	now = capture_now();
	out->ms = (unsigned int)((now.tv_sec - start.tv_sec) * 1000 +
				 (now.tv_nsec - start.tv_nsec) / 1000000);
	free(t.procs);
	return 0;
}

/* Asks the worker to end the drain, and waits for it (lock held). */
static void capture_end_drain(struct capture *cap)
{
	struct capture_watchdog wd = { 0 };
	struct capture_worker *asked = NULL;
	uint64_t target = 0;

	while (cap->worker) {
		struct capture_worker *w = cap->worker;

		if (w != asked) {
			/* First, or a new worker after a stall: it ends its own drain. */
			asked = w;
			target = ++w->end_asked;
			pthread_cond_broadcast(&cap->core->work);
		}
		if (w->end_done >= target)
			break;
		capture_wait(cap, &wd);
	}
}

int capture_drain(struct capture *cap, struct profile *into, struct sampler_stats *delta)
{
	return capture_drain_split(cap, into, NULL, delta);
}

int capture_drain_split(struct capture *cap, struct profile *into, struct profile *offcpu_into,
			struct sampler_stats *delta)
{
	int err;

	pthread_mutex_lock(&cap->core->lock);
	cap->into = into;
	cap->offcpu_into = offcpu_into;
	if (cap->worker) {
		cap->worker->into = into;
		cap->worker->offcpu_into = offcpu_into;
	}
	pthread_mutex_unlock(&cap->core->lock);
	/* The copies waiting in the ring belong to this drain. Past the wait: to the next. */
	sampler_watch_flush(cap->watch, CAPTURE_FLUSH_MS);
	err = sampler_drain(cap->sampler, capture_add, cap, delta);
	if (cap->fill) {
		capture_push(cap, cap->fill);
		cap->fill = NULL;
	}
	pthread_mutex_lock(&cap->core->lock);
	capture_end_drain(cap);
	cap->into = NULL;
	cap->offcpu_into = NULL;
	if (cap->worker) {
		cap->worker->into = NULL;
		cap->worker->offcpu_into = NULL;
	}
	pthread_mutex_unlock(&cap->core->lock);
	if (cap->unwinder)
		unwinder_end_drain(cap->unwinder);
	return err;
}

int capture_finish(struct capture *cap, struct profile *into, struct sampler_stats *delta)
{
	return capture_finish_split(cap, into, NULL, delta);
}

int capture_finish_split(struct capture *cap, struct profile *into, struct profile *offcpu_into,
			 struct sampler_stats *delta)
{
	if (cap->sampler)
		sampler_stop(cap->sampler);
	sampler_watch_stop(cap->watch);
	cap->watch = NULL;
	if (cap->sampler)
		sampler_poll_processes(cap->sampler, capture_track, cap, 0);
	return capture_drain_split(cap, into, offcpu_into, delta);
}

/* The unwinder queued a table build: the worker runs it (unwinder_set_builder). */
static void capture_wake(void *ctx)
{
	struct capture_core *core = ctx;

	pthread_mutex_lock(&core->lock);
	pthread_cond_broadcast(&core->work);
	pthread_mutex_unlock(&core->lock);
}

static void capture_on_signal(int sig)
{
	(void)sig; /* its only job: to make a blocking system call return EINTR */
}

/* The interrupt signal, if it is ours to use; 0 if not. */
static int capture_claim_signal(int sig)
{
	struct sigaction old, sa = { .sa_handler = capture_on_signal };

	if (!sig || sigaction(sig, NULL, &old))
		return 0;
	if (old.sa_handler == capture_on_signal)
		return sig;
	if (old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO))
		return 0; /* someone else's: not to be taken over */
	sigemptyset(&sa.sa_mask);
	return sigaction(sig, &sa, NULL) ? 0 : sig;
}

int capture_new(const struct capture_config *config, struct capture **out)
{
	struct capture *cap = calloc(1, sizeof(*cap));

	*out = NULL;
	if (!cap)
		return -ENOMEM;
	if (config)
		cap->config = *config;
	else
		capture_config_init(&cap->config);
	if (!cap->config.stall_ms)
		cap->config.stall_ms = CAPTURE_DEFAULT_STALL_MS;
	/* One size bound for every open of a profiled process's file. */
	if (!cap->config.unwind.max_file_size)
		cap->config.unwind.max_file_size = cap->config.symbolizer.max_file_size;
	cap->signal = capture_claim_signal(cap->config.interrupt_signal);
	cap->core = core_new();
	if (!cap->core) {
		free(cap);
		return -ENOMEM;
	}
	cap->forks = forkmaps_new();
	cap->worker = worker_new(cap);
	if (!cap->forks || !cap->worker) {
		capture_free(cap);
		return -ENOMEM;
	}
	*out = cap;
	return 0;
}

int capture_attach(struct capture *cap, struct sampler *sampler)
{
	sigset_t all, old;
	int err;

	cap->sampler = sampler;
	if (sampler_unwmaps(sampler)) {
		err = unwinder_new(sampler_unwmaps(sampler), &cap->config.unwind, &cap->unwinder);
		if (err)
			return err;
		/* Its builds run on the worker, under the watchdog, never on the watch thread. */
		unwinder_set_builder(cap->unwinder, capture_wake, cap->core);
		cap->lend_maps = !strcmp(or_proc(cap->config.unwind.proc_root),
					 or_proc(cap->config.symbolizer.proc_root));
		pthread_mutex_lock(&cap->core->lock);
		if (cap->worker) {
			cap->worker->unwinder = cap->unwinder;
			/* Before the watch thread starts: nothing is tracked yet. */
			cap->worker->py = capture_pytrack(cap, cap->worker);
		}
		pthread_mutex_unlock(&cap->core->lock);
		sampler_set_copy_handler(sampler, unwinder_unwind_copy, cap->unwinder);
	}
	/* The watch thread takes none of the caller's signals either. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = sampler_watch_start(sampler, capture_track, capture_idle, cap, &cap->watch);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return err;
}

void capture_free(struct capture *cap)
{
	struct capture_watchdog wd = { 0 };
	struct capture_worker *w;

	if (!cap)
		return;
	/* Its callback only queues: it stops at once. */
	sampler_watch_stop(cap->watch);
	free(cap->fill);
	pthread_mutex_lock(&cap->core->lock);
	cap->closing = true;
	w = cap->worker;
	if (w) {
		w->stop = true;
		pthread_cond_broadcast(&cap->core->work);
		while (cap->worker == w && !w->exited)
			capture_wait(cap, &wd);
	}
	if (w && cap->worker == w) {
		/* It ended: join it and free what it held. */
		pthread_mutex_unlock(&cap->core->lock);
		pthread_join(w->thread, NULL);
		symbolizer_free(w->sym);
		w->sym = NULL;
		target_free(w->gate);
		w->gate = NULL;
		pthread_mutex_lock(&cap->core->lock);
		cap->worker = NULL;
		worker_put_unlock(w);
		pthread_mutex_lock(&cap->core->lock);
	}
	capture_py_orphaned(cap);
	core_put_unlock(cap->core);
	/* Its tables live in the sampler's maps: before sampler_free(). */
	unwinder_free(cap->unwinder);
	forkmaps_free(cap->forks); /* the watch thread's: stopped above */
	free(cap);
}

void capture_stats(struct capture *cap, struct capture_stats *stats)
{
	struct capture_counts counts;
	struct symbolizer_stats sym = { 0 };
	struct pytrack_stats py = { 0 };

	pthread_mutex_lock(&cap->core->lock);
	counts = cap->retired_counts;
	if (cap->worker) {
		sym = cap->worker->published;
		counts_add(&counts, &cap->worker->counts);
		py = cap->worker->py_published;
	}
	symbolizer_counters_add(&sym, &cap->retired);
	pytrack_counters_add(&py, &cap->retired_py);
	*stats = (struct capture_stats){
		.python = py,
		.received = cap->received,
		.lost_stalled = cap->lost_stalled,
		.lost_memory = counts.lost_memory,
		.unnamed_stalled = counts.unnamed_stalled,
		.stalls = cap->stalls,
		.interrupts = cap->interrupts,
		.tracked = counts.tracked,
		.gone = counts.gone,
		.track_dropped = cap->track_dropped,
		.borrowed = cap->borrowed,
		.parent_reads = cap->parent_reads,
		.forks_bytes = cap->forks_bytes,
		.given_up = cap->given_up,
	};
	pthread_mutex_unlock(&cap->core->lock);
	sym.frames += counts.stalled_frames;
	sym.unresolved += counts.stalled_frames;
	if (cap->unwinder) {
		stats->unwinding = true;
		unwinder_stats(cap->unwinder, &stats->unwind);
		/* Its gate's refusals are refusals like the symbolizer's. */
		for (int i = 0; i < TARGET_CAUSES; i++)
			sym.refused[i] += stats->unwind.refused_open[i];
	}
	/* So are the Python detection's (through the worker's gate too). */
	for (int i = 0; i < TARGET_CAUSES; i++)
		sym.refused[i] += py.refused_open[i];
	stats->symbolizer = sym;
}
