/*
 * unwinder: tables for the processes the sampler sees, and the user-space
 * walk of copied stacks (see unwinder.h).
 *
 * A process is its executable mappings, each with the table of its file
 * (or none: anonymous JIT memory, a file with no CFI, a table refused at
 * the memory bound). A table is loaded in a BPF slot and read back from
 * there for copies; it counts its users and remembers when one last took
 * it up or let it go (the cache's LRU order and grace). Tables are found
 * by (device, inode) first, which costs no open (a hash: symbolizer/
 * fileidx, since every mapping of every new process is looked up), then
 * by build-id once read, which catches the same build at two paths (a
 * container's copy of libc): the second is merged into the first.
 *
 * A table not built yet is in the list too, queued or building, keyed by
 * its file: a second process mapping it waits for the same build. The
 * queued ones are also chained oldest first, the order builders take them. The
 * build's job carries copies of what its read needs, so that a builder
 * stuck in the read holds nothing of the unwinder; its ticket says, when
 * it finishes, whether the table still waits for it.
 *
 * The copy walk is bpf/unwind.h's, with memory read from the copy and
 * words from the table's map (mapped read-only), so it gives the frames
 * the BPF program would have given had the tables been there.
 */
#include "bpf/grow.h"
#include "symbolizer/unwinder.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libelf.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <linux/types.h>

#include "bpf/ebprof.h"
#include "bpf/sampler.h"
#include "bpf/unwmaps.h"
#include "symbolizer/cfi.h"
#include "symbolizer/debuginfo.h"
#include "symbolizer/elfhdr.h"
#include "symbolizer/fileidx.h"
#include "symbolizer/procmaps.h"
#include "symbolizer/procpid.h"
#include "symbolizer/target.h"
#include "symbolizer/unwtab.h"

#define PROC_BUCKETS 1024
#define MAX_BUILD_ID 64
/* Tables of more rows than this are followed by a malloc_trim(): see table_load(). */
#define UNWINDER_TRIM_ROWS 16384

/* A table is built in three steps (unwinder.h): queued, read by a builder, installed. */
enum utable_state {
	UTABLE_READY,	 /* built (loaded in a slot, or none to have) */
	UTABLE_QUEUED,	 /* waiting for a builder */
	UTABLE_BUILDING, /* a builder reads its file */
};

struct utable {
	unsigned char build_id[MAX_BUILD_ID];
	int id_len;
	struct fileidx_key *keys; /* the files known to hold this build */
	size_t n_keys, cap_keys;
	uint32_t slot; /* 0: none loaded (no CFI, or refused): frame pointers */
	uint32_t id;   /* unwmaps' number for it */
	uint64_t bytes, kernel_bytes, rows;
	uint32_t users;
	uint64_t used_drain; /* the last drain a process held it */
	uint64_t used_seq;   /* u->seq when a process last took or let it go: LRU order */
	uint64_t used_ms;    /* and when, for the grace period */
	bool fresh;	     /* built, and no process took it up yet */
	bool stalled;	     /* its build stalled and was given up: never read again */
	enum utable_state state;
	/* Queued or building: the mapping to read it from, and until when copies wait. */
	uint32_t src_tgid;
	uint64_t src_start;
	struct procmaps_mapping src;
	char *src_path; /* src.path, owned */
	uint64_t due_ms;
	uint64_t ticket; /* its build, while building */
	struct utable *queue_next; /* queued: the next queued after it, oldest first */
	struct utable *next;
};

struct uproc {
	uint32_t tgid;
	uint64_t start_time;
	struct ebprof_unw_mapping *maps;
	struct utable **tables; /* per mapping; NULL: none */
	uint32_t n;
	uint32_t waiting; /* of its tables, not built yet: its samples are copied meanwhile */
	uint64_t read_at;    /* when the read of its maps began, ns after boot */
	uint64_t reread_vain; /* read_at of a read a copy asked for that missed its pc too */
	/*
	 * Its maps could not be read, as it had exited: no copy asks for a
	 * read again. What an earlier read found (n mappings, maybe none)
	 * still walks the copies taken while it ran, until the drain's end.
	 */
	bool gone;
	struct uproc *next;
};

struct unwinder {
	pthread_mutex_t lock;
	struct unwmaps *maps;
	struct unwtab_rules *rules;
	struct utable *tables;
	struct fileidx *by_key; /* every key of every table in the list, to its table */
	struct utable *queue_head, *queue_tail; /* the queued tables, oldest first */
	struct uproc *procs[PROC_BUCKETS];
	char *proc_root, *debug_root;
	bool pids_ours; /* procpid_by_signal(proc_root) */
	struct target *gate; /* every open of a file when there is no builder; under lock */
	void (*wake)(void *ctx); /* the builder: told when a build is queued; NULL: none */
	void *wake_ctx;
	pthread_cond_t built;	 /* a build ended (tables installed or given up) */
	uint32_t wait_ms;
	uint64_t tickets;
	uint64_t max_bytes;
	uint32_t max_frames;
	uint32_t keep_tables, keep_ms;
	uint64_t (*now_ms)(void);
	uint64_t drain, seq;
	uint64_t kernel_bytes; /* of the tables loaded */
	struct unwinder_stats totals;
};

void unwinder_config_init(struct unwinder_config *config)
{
	*config = (struct unwinder_config){
		.max_bytes = 0,
		.max_frames = 0,
		.proc_root = "/proc",
		.debug_root = "/usr/lib/debug",
		.keep_tables = UNWINDER_DEFAULT_KEEP_TABLES,
		.keep_ms = UNWINDER_DEFAULT_KEEP_MS,
	};
}

static uint64_t monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int unwinder_new(struct unwmaps *maps, const struct unwinder_config *config,
		 struct unwinder **out)
{
	struct unwinder_config defaults;
	struct unwinder *u;

	*out = NULL;
	unwinder_config_init(&defaults);
	if (!config)
		config = &defaults;
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->maps = maps;
	u->max_bytes = config->max_bytes ? config->max_bytes : UNWINDER_DEFAULT_MAX_BYTES;
	u->max_frames = config->max_frames ? config->max_frames : EBPROF_DEFAULT_FRAMES;
	u->keep_tables = config->keep_tables;
	u->keep_ms = config->keep_ms;
	u->now_ms = config->now_ms ? config->now_ms : monotonic_ms;
	u->wait_ms = config->wait_ms ? config->wait_ms : UNWINDER_DEFAULT_WAIT_MS;
	u->rules = unwtab_rules_new(0);
	u->by_key = fileidx_new();
	u->proc_root = strdup(config->proc_root ? config->proc_root : "/proc");
	u->debug_root = strdup(config->debug_root ? config->debug_root : "");
	u->gate = target_new(&(struct target_config){ .proc_root = u->proc_root,
						      .max_file_size = config->max_file_size });
	if (!u->rules || !u->by_key || !u->proc_root || !u->debug_root || !u->gate) {
		unwinder_free(u);
		return -ENOMEM;
	}
	u->pids_ours = procpid_by_signal(u->proc_root);
	pthread_mutex_init(&u->lock, NULL);
	{
		pthread_condattr_t attr;

		pthread_condattr_init(&attr);
		pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
		pthread_cond_init(&u->built, &attr);
		pthread_condattr_destroy(&attr);
	}
	*out = u;
	return 0;
}

/* --- tables -------------------------------------------------------------- */

static void table_unload(struct unwinder *u, struct utable *t)
{
	if (t->slot) {
		unwmaps_table_remove(u->maps, t->slot);
		u->kernel_bytes -= t->kernel_bytes;
		t->slot = 0;
	}
}

/* Takes t off the build queue (a queued table dropped: only when all is freed). */
static void queue_unlink(struct unwinder *u, struct utable *t)
{
	struct utable *prev = NULL;

	for (struct utable **p = &u->queue_head; *p; prev = *p, p = &(*p)->queue_next) {
		if (*p == t) {
			*p = t->queue_next;
			if (u->queue_tail == t)
				u->queue_tail = prev;
			t->queue_next = NULL;
			return;
		}
	}
}

static void table_free(struct unwinder *u, struct utable *t)
{
	for (size_t i = 0; i < t->n_keys; i++)
		fileidx_remove(u->by_key, &t->keys[i], t);
	if (t->state == UTABLE_QUEUED)
		queue_unlink(u, t);
	table_unload(u, t);
	free(t->keys);
	free(t->src_path);
	free(t);
}

/* Unlinks and frees t from the table list. */
static void table_drop(struct unwinder *u, struct utable *t)
{
	for (struct utable **p = &u->tables; *p; p = &(*p)->next) {
		if (*p == t) {
			*p = t->next;
			table_free(u, t);
			return;
		}
	}
}

static struct utable *table_by_key(struct unwinder *u, const struct fileidx_key *key)
{
	return fileidx_find(u->by_key, key);
}

static struct utable *table_by_build_id(struct unwinder *u, const unsigned char *id, int len)
{
	for (struct utable *t = u->tables; t; t = t->next)
		if (len > 0 && t->state == UTABLE_READY && t->id_len == len &&
		    !memcmp(t->build_id, id, (size_t)len))
			return t;
	return NULL;
}

/* Files t under one more key (its list and the index): 0, or -ENOMEM with neither changed. */
static int table_add_key(struct unwinder *u, struct utable *t, const struct fileidx_key *key)
{
	if (GROW_ARRAY(&t->keys, &t->cap_keys, t->n_keys + 1, 2) ||
	    fileidx_add(u->by_key, key, t))
		return -ENOMEM;
	t->keys[t->n_keys++] = *key;
	return 0;
}

/*
 * Drops the least recently used table no process holds that has a slot
 * (kept by the cache). Returns false when there is none.
 */
static bool evict_oldest(struct unwinder *u)
{
	struct utable *oldest = NULL;

	for (struct utable *t = u->tables; t; t = t->next)
		if (!t->users && t->slot && (!oldest || t->used_seq < oldest->used_seq))
			oldest = t;
	if (!oldest)
		return false;
	u->totals.evicted++;
	table_drop(u, oldest);
	return true;
}

/*
 * Makes room for bytes more under the bound, dropping the least recently
 * used tables no process holds. Returns whether they fit.
 */
static bool make_room(struct unwinder *u, uint64_t bytes)
{
	while (u->kernel_bytes + bytes > u->max_bytes)
		if (!evict_oldest(u))
			return false;
	return true;
}

/* Marks t used now (taken up or let go by a process), for the LRU order and the grace. */
static void table_touch(struct unwinder *u, struct utable *t)
{
	t->used_drain = u->drain;
	t->used_seq = ++u->seq;
	t->used_ms = u->now_ms();
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* Builds cfi's table and loads it into t's slot (left 0 when it cannot be). */
static int table_load(struct unwinder *u, struct utable *t, const struct cfi *cfi)
{
	struct cfi_stats cs;
	struct unwtab *tab;
	const struct ebprof_unw_rule *rules;
	uint32_t n_rules;
	uint64_t kernel_bytes;
	long page = sysconf(_SC_PAGESIZE);
	bool big;
	int err;

	cfi_stats(cfi, &cs);
	if (cs.source == CFI_FROM_NONE) {
		u->totals.no_cfi++;
		return 0;
	}
	err = unwtab_build(cfi, u->rules, &tab);
	if (err)
		return err;
	kernel_bytes = (unwtab_bytes(tab) + (uint64_t)page - 1) & ~((uint64_t)page - 1);
	u->totals.built++;
	u->totals.frame_bytes += cs.eh_frame_bytes + cs.debug_frame_bytes;
	rules = unwtab_rules_array(u->rules, &n_rules);
	err = make_room(u, kernel_bytes) ? unwmaps_rules_sync(u->maps, rules, n_rules) : -E2BIG;
	/* Every slot taken: a table kept with no user gives its slot up. */
	while (!err && (err = unwmaps_table_add(u->maps, tab->words, tab->n_words, &t->slot,
						&t->id)) == -ENOSPC && evict_oldest(u))
		;
	if (err) {
		t->slot = 0;
		u->totals.refused++;
	} else {
		t->bytes = unwtab_bytes(tab);
		t->kernel_bytes = kernel_bytes;
		t->rows = tab->n_rows;
		u->kernel_bytes += kernel_bytes;
	}
	/*
	 * A big file's rows took tens of MB for a moment (libLLVM: ~1M rows);
	 * glibc keeps freed memory that large in the heap (its mmap threshold
	 * grows with each big free): give it back, or RSS stays at the peak.
	 */
	big = tab->n_rows > UNWINDER_TRIM_ROWS;
	unwtab_free(tab);
	if (big)
		malloc_trim(0);
	return 0;
}

/* A new table, not built yet, for the file of mapping m of process tgid. */
static struct utable *table_queue(struct unwinder *u, const struct fileidx_key *key, uint32_t tgid,
				  uint64_t start_time, const struct procmaps_mapping *m)
{
	struct utable *t = calloc(1, sizeof(*t));

	if (!t || !(t->src_path = strndup(m->path, m->path_len)) || table_add_key(u, t, key)) {
		if (t) {
			free(t->src_path);
			free(t->keys);
		}
		free(t);
		return NULL;
	}
	t->state = UTABLE_QUEUED;
	if (u->queue_tail)
		u->queue_tail->queue_next = t;
	else
		u->queue_head = t;
	u->queue_tail = t;
	t->src_tgid = tgid;
	t->src_start = start_time;
	t->src = *m;
	t->src.path = t->src_path;
	t->due_ms = monotonic_ms() + u->wait_ms;
	t->fresh = true;
	table_touch(u, t);
	t->next = u->tables;
	u->tables = t;
	return t;
}

struct unwinder_job {
	uint64_t ticket;
	uint32_t tgid;
	uint64_t start_time;
	struct procmaps_mapping m;
	char *path, *proc_root, *debug_root;
	/* What the read found. */
	bool opened;
	unsigned char build_id[MAX_BUILD_ID];
	int id_len;
	struct cfi *cfi; /* NULL: no usable ELF file, or not opened */
	uint64_t read_us;
	uint64_t refused[TARGET_CAUSES]; /* the gate's refusals during the read */
};

void unwinder_job_free(struct unwinder_job *job)
{
	if (!job)
		return;
	cfi_free(job->cfi);
	free(job->path);
	free(job->proc_root);
	free(job->debug_root);
	free(job);
}

/* The oldest queued table's build, now building; NULL for none (or no memory). */
static struct unwinder_job *job_take_locked(struct unwinder *u)
{
	struct utable *oldest = u->queue_head;
	struct unwinder_job *job;

	if (!oldest)
		return NULL;
	job = calloc(1, sizeof(*job));
	if (!job || !(job->path = strdup(oldest->src_path)) ||
	    !(job->proc_root = strdup(u->proc_root)) || !(job->debug_root = strdup(u->debug_root))) {
		unwinder_job_free(job);
		return NULL;
	}
	job->ticket = ++u->tickets;
	job->tgid = oldest->src_tgid;
	job->start_time = oldest->src_start;
	job->m = oldest->src;
	job->m.path = job->path;
	u->queue_head = oldest->queue_next;
	if (!u->queue_head)
		u->queue_tail = NULL;
	oldest->queue_next = NULL;
	oldest->state = UTABLE_BUILDING;
	oldest->ticket = job->ticket;
	return job;
}

int unwinder_job_take(struct unwinder *u, struct unwinder_job **out)
{
	pthread_mutex_lock(&u->lock);
	*out = job_take_locked(u);
	pthread_mutex_unlock(&u->lock);
	return *out ? 0 : -ENOENT;
}

void unwinder_job_read(struct unwinder_job *job, struct target *gate)
{
	char root[4096];
	struct debuginfo_paths paths = { .debug_root = job->debug_root, .root = root,
					 .gate = gate };
	uint64_t before[TARGET_CAUSES], after[TARGET_CAUSES];
	uint64_t t0 = now_us();
	struct target_file f;
	Elf *e;

	target_stats(gate, before);
	snprintf(root, sizeof(root), "%s/%" PRIu32 "/root", job->proc_root, job->tgid);
	paths.path = job->m.path[0] == '/' && !job->m.deleted ? job->m.path : NULL;
	/*
	 * Through the gate, as the symbolizer opens the same file: the very
	 * file the kernel mapped, a regular one within the size bound, never
	 * a FIFO or device that could block us; refusals counted by cause.
	 */
	if (elf_version(EV_CURRENT) == EV_NONE || target_open_mapping(gate, job->tgid, &job->m, &f))
		goto out;
	job->opened = true;
	job->id_len = -1;
	/* libelf allocates by the header's counts: a file announcing millions is not read. */
	if (!elfhdr_check(f.fd, NULL, 0)) {
		e = elf_begin(f.fd, ELF_C_READ, NULL);
		if (e) {
			job->id_len = debuginfo_build_id(e, job->build_id, sizeof(job->build_id));
			elf_end(e);
		}
		if (cfi_open_fd(f.fd, &paths, &job->cfi))
			job->cfi = NULL;
	}
	target_file_close(&f);
out:
	target_stats(gate, after);
	for (int i = 0; i < TARGET_CAUSES; i++)
		job->refused[i] = after[i] - before[i];
	job->read_us = now_us() - t0;
}

/* The table being built by ticket; NULL when it was given up or freed meanwhile. */
static struct utable *table_by_ticket(struct unwinder *u, uint64_t ticket)
{
	for (struct utable *t = u->tables; t; t = t->next)
		if (t->state == UTABLE_BUILDING && t->ticket == ticket)
			return t;
	return NULL;
}

static void procs_resolve(struct unwinder *u);

/*
 * The table a build found is the same build as one already there (a
 * container's copy of libc): processes that wait for t take that one (or
 * none, into NULL), and t goes.
 */
static void table_merge(struct unwinder *u, struct utable *t, struct utable *into)
{
	for (size_t b = 0; b < PROC_BUCKETS; b++) {
		for (struct uproc *p = u->procs[b]; p; p = p->next) {
			for (uint32_t i = 0; i < p->n; i++) {
				if (p->tables[i] != t)
					continue;
				p->tables[i] = into;
				if (into)
					into->users++;
				t->users--;
			}
		}
	}
	if (into) {
		for (size_t i = 0; i < t->n_keys; i++)
			table_add_key(u, into, &t->keys[i]); /* no memory: found by build-id later */
		table_touch(u, into);
	}
	table_drop(u, t);
}

/* Installs what a build read (lock held), and frees the job. */
static void job_finish_locked(struct unwinder *u, struct unwinder_job *job)
{
	struct utable *t = table_by_ticket(u, job->ticket), *same;
	uint64_t t0 = now_us();

	for (int i = 0; i < TARGET_CAUSES; i++)
		u->totals.refused_open[i] += job->refused[i];
	if (!t)
		goto out;
	same = job->cfi ? table_by_build_id(u, job->build_id, job->id_len) : NULL;
	if (!job->opened) {
		/* Refused, or gone: not remembered, so that the next process tries again. */
		table_merge(u, t, NULL);
	} else if (same) {
		table_merge(u, t, same);
	} else {
		if (job->id_len > 0) {
			memcpy(t->build_id, job->build_id, (size_t)job->id_len);
			t->id_len = job->id_len;
		}
		if (job->cfi)
			table_load(u, t, job->cfi);
		u->totals.build_us += job->read_us + now_us() - t0;
		t->state = UTABLE_READY;
		free(t->src_path);
		t->src_path = NULL;
		t->src.path = "";
	}
	procs_resolve(u);
	pthread_cond_broadcast(&u->built);
out:
	unwinder_job_free(job);
}

void unwinder_job_finish(struct unwinder *u, struct unwinder_job *job)
{
	pthread_mutex_lock(&u->lock);
	job_finish_locked(u, job);
	pthread_mutex_unlock(&u->lock);
}

uint64_t unwinder_job_ticket(const struct unwinder_job *job)
{
	return job->ticket;
}

void unwinder_job_process(const struct unwinder_job *job, uint32_t *tgid, uint64_t *start_time)
{
	*tgid = job->tgid;
	*start_time = job->start_time;
}

void unwinder_job_stalled(struct unwinder *u, uint64_t ticket)
{
	struct utable *t;

	pthread_mutex_lock(&u->lock);
	t = table_by_ticket(u, ticket);
	if (t) {
		/* Kept by its key with no table: that file is not read again. */
		t->state = UTABLE_READY;
		t->stalled = true;
		u->totals.build_stalled++;
		procs_resolve(u);
		pthread_cond_broadcast(&u->built);
	}
	pthread_mutex_unlock(&u->lock);
}

void unwinder_set_builder(struct unwinder *u, void (*wake)(void *ctx), void *ctx)
{
	pthread_mutex_lock(&u->lock);
	u->wake = wake;
	u->wake_ctx = ctx;
	pthread_mutex_unlock(&u->lock);
}

/* Without a builder: every queued build, here and now, with our own gate (lock held). */
static void jobs_run_locked(struct unwinder *u)
{
	struct unwinder_job *job;

	while ((job = job_take_locked(u))) {
		unwinder_job_read(job, u->gate);
		job_finish_locked(u, job);
	}
}

/* Our own vDSO image: the one every process on this kernel maps. */
static struct utable *table_for_vdso(struct unwinder *u)
{
	static const struct fileidx_key vdso_key = { 0, 0, 0 };
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)getauxval(AT_SYSINFO_EHDR);
	struct utable *t = table_by_key(u, &vdso_key);
	struct cfi *cfi;
	uint64_t size;

	if (t || !eh || memcmp(eh->e_ident, ELFMAG, SELFMAG))
		return t;
	size = eh->e_shoff + (uint64_t)eh->e_shnum * eh->e_shentsize;
	t = calloc(1, sizeof(*t));
	if (!t || table_add_key(u, t, &vdso_key)) {
		if (t)
			free(t->keys);
		free(t);
		return NULL;
	}
	if (!cfi_open_mem(eh, size, &cfi)) {
		table_load(u, t, cfi);
		cfi_free(cfi);
	}
	t->fresh = true;
	table_touch(u, t);
	t->next = u->tables;
	u->tables = t;
	return t;
}

/*
 * Devices of file systems whose reads can block without end, of one
 * process. Read only once a mapping of it needs a table not built yet:
 * most new processes map only files whose tables are known, and their
 * mountinfo (kilobytes the kernel formats on each read) is not read.
 */
struct remote_devs {
	struct target_id *ids; /* inode unused */
	size_t n;
	bool read;
};

/*
 * Whether fstype names a file system whose server may never answer: FUSE
 * (a container's, or a hostile one) and the network ones. The unwinder
 * runs on the sampler's watch thread, which no watchdog covers (see
 * render/capture.h): it does not read such files at all.
 */
static bool fstype_may_block(const char *fstype)
{
	static const char *const prefixes[] = { "fuse", "nfs", "cifs", "smb", "9p", "ceph", "afs",
						"glusterfs", "lustre" };

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(fstype, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

/*
 * Reads /proc/PID/mountinfo (procfs: it never waits on a file system's
 * server) for the devices of such file systems. Out of memory or
 * unreadable: none found, and the gate still refuses FIFOs and devices.
 */
static void remote_devs_read(const struct unwinder *u, uint32_t tgid, struct remote_devs *r)
{
	char path[4096], line[8192];
	size_t cap = 0;
	FILE *f;

	r->read = true;
	snprintf(path, sizeof(path), "%s/%" PRIu32 "/mountinfo", u->proc_root, tgid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned int major, minor;
		const char *sep = strstr(line, " - ");
		char fstype[64];

		if (!sep || sscanf(line, "%*u %*u %u:%u", &major, &minor) != 2 ||
		    sscanf(sep + 3, "%63s", fstype) != 1 || !fstype_may_block(fstype))
			continue;
		if (GROW_ARRAY(&r->ids, &cap, r->n + 1, 8))
			break;
		r->ids[r->n++] = (struct target_id){ major, minor, 0 };
	}
	fclose(f);
}

static bool remote_devs_has(const struct unwinder *u, uint32_t tgid, struct remote_devs *r,
			    const struct procmaps_mapping *m)
{
	if (!r->read)
		remote_devs_read(u, tgid, r);
	for (size_t i = 0; i < r->n; i++)
		if (r->ids[i].dev_major == m->dev_major && r->ids[i].dev_minor == m->dev_minor)
			return true;
	return false;
}

/* The table of one mapping, found or built; NULL when there is none to have. */
static struct utable *table_for_mapping(struct unwinder *u, uint32_t tgid, uint64_t start_time,
					const struct procmaps_mapping *m,
					struct remote_devs *remote)
{
	struct fileidx_key key = { m->dev_major, m->dev_minor, m->inode };
	struct utable *t;

	if (!strcmp(m->path, "[vdso]"))
		return table_for_vdso(u);
	if (!m->inode || procmaps_is_special(m) || procmaps_is_anon(m))
		return NULL;
	t = table_by_key(u, &key);
	if (t)
		return t;
	if (remote_devs_has(u, tgid, remote, m)) {
		u->totals.remote++;
		return NULL; /* walked by frame pointer */
	}
	/* Read by a builder, off this thread (unwinder.h). */
	return table_queue(u, &key, tgid, start_time, m);
}

/* --- processes ------------------------------------------------------------ */

static struct uproc **proc_slot(struct unwinder *u, uint32_t tgid)
{
	struct uproc **p = &u->procs[tgid % PROC_BUCKETS];

	while (*p && (*p)->tgid != tgid)
		p = &(*p)->next;
	return p;
}

/* Lets go of the tables of n mappings. */
static void tables_release(struct unwinder *u, struct utable **tables, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		if (tables[i]) {
			tables[i]->users--;
			table_touch(u, tables[i]);
		}
	}
}

static void proc_release(struct unwinder *u, struct uproc *p)
{
	tables_release(u, p->tables, p->n);
	free(p->maps);
	free(p->tables);
	p->maps = NULL;
	p->tables = NULL;
	p->n = 0;
	p->waiting = 0;
}

/* A process takes t up: a table the cache kept with no user is reused. */
static void table_take(struct unwinder *u, struct utable *t)
{
	if (!t->users && !t->fresh)
		u->totals.reused++;
	t->fresh = false;
	t->users++;
	table_touch(u, t);
}

/*
 * Takes the process's mappings from pm (borrowed) into p, with a table per
 * mapping. The tables it held are let go only after, so that a re-read
 * keeps them.
 */
static int proc_read(struct unwinder *u, struct uproc *p, const struct procmaps *pm)
{
	struct ebprof_unw_mapping *old_maps = p->maps;
	struct utable **old_tables = p->tables;
	uint32_t old_n = p->n;
	struct remote_devs remote = { 0 };
	size_t n;

	n = procmaps_count(pm);
	p->maps = calloc(n ? n : 1, sizeof(*p->maps));
	p->tables = calloc(n ? n : 1, sizeof(*p->tables));
	p->n = 0;
	p->waiting = 0;
	if (!p->maps || !p->tables) {
		tables_release(u, old_tables, old_n);
		free(old_maps);
		free(old_tables);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		const struct procmaps_mapping *m = procmaps_at(pm, i);
		struct utable *t = table_for_mapping(u, p->tgid, p->start_time, m, &remote);

		p->maps[i] = (struct ebprof_unw_mapping){
			.start = m->start,
			.end = m->end,
			.adjust = m->pgoff - m->start,
			.table = t ? t->slot : 0,
			.table_id = t ? t->id : 0,
		};
		p->tables[i] = t;
		if (t)
			table_take(u, t);
		p->waiting += t && t->state != UTABLE_READY;
	}
	p->n = (uint32_t)n;
	tables_release(u, old_tables, old_n);
	free(old_maps);
	free(old_tables);
	free(remote.ids);
	return 0;
}

/* Points p's mappings at the slots of its tables built so far. */
static void proc_refresh(struct uproc *p)
{
	p->waiting = 0;
	for (uint32_t i = 0; i < p->n; i++) {
		const struct utable *t = p->tables[i];

		p->maps[i].table = t && t->state == UTABLE_READY ? t->slot : 0;
		p->maps[i].table_id = t && t->state == UTABLE_READY ? t->id : 0;
		p->waiting += t && t->state != UTABLE_READY;
	}
}

/* Unlinks and frees process p (lock held). */
static void proc_forget(struct unwinder *u, struct uproc *p)
{
	unwmaps_process_drop(u->maps, p->tgid);
	proc_release(u, p);
	*proc_slot(u, p->tgid) = p->next;
	free(p);
}

/*
 * Loads p's mappings into the program's maps, once every table they need
 * is built: until then its samples are copied (it has no entry). Returns
 * 0 or -errno (then p is forgotten).
 */
static int proc_load(struct unwinder *u, struct uproc *p)
{
	int err;

	proc_refresh(p);
	if (p->waiting) {
		unwmaps_process_drop(u->maps, p->tgid);
		return 0;
	}
	err = unwmaps_process_set(u->maps, p->tgid, p->start_time, p->maps, p->n);
	if (err == -ENOSPC)
		err = 0; /* no room in the mapping array: its samples are copied or walked by fp */
	if (err)
		proc_forget(u, p);
	return err;
}

/* After a build: loads every process that waited for it and has all its tables now. */
static void procs_resolve(struct unwinder *u)
{
	for (size_t b = 0; b < PROC_BUCKETS; b++) {
		struct uproc *p = u->procs[b];

		while (p) {
			struct uproc *next = p->next;

			if (p->waiting)
				proc_load(u, p);
			p = next;
		}
	}
}

/* Whether a table is queued for a builder. */
static bool jobs_queued(const struct unwinder *u)
{
	return u->queue_head != NULL;
}

static int track_locked(struct unwinder *u, uint32_t tgid, uint64_t start_time,
			const struct procmaps *pm, uint64_t read_at)
{
	struct uproc **slot = proc_slot(u, tgid), *p = *slot;
	int err;

	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p)
			return -ENOMEM;
		p->tgid = tgid;
		p->next = NULL;
		*slot = p;
	}
	p->start_time = start_time;
	p->read_at = read_at;
	p->gone = false;
	err = proc_read(u, p, pm);
	if (err) {
		proc_forget(u, p);
		return err;
	}
	if (p->waiting && !u->wake) {
		jobs_run_locked(u); /* loads p once its tables are there */
		return *proc_slot(u, tgid) ? 0 : -ENOMEM;
	}
	return proc_load(u, p);
}

/* Tells the builder, if a build is queued (lock not held: the builder's lock comes first). */
static void wake_builder(struct unwinder *u, bool queued)
{
	if (queued && u->wake)
		u->wake(u->wake_ctx);
}

/*
 * A process whose maps could not be read since it exited: the one held
 * under that start time is kept, marked gone (its copies walk on with
 * what was read), else a record with no mapping takes the PID's place,
 * so that the copies still in the ring do not each try /proc again.
 */
static void track_gone(struct unwinder *u, uint32_t tgid, uint64_t start_time)
{
	struct uproc **slot = proc_slot(u, tgid), *p = *slot;

	if (p && p->start_time == start_time) {
		p->gone = true;
		return;
	}
	if (p)
		proc_forget(u, p);
	p = calloc(1, sizeof(*p));
	if (!p)
		return; /* its copies only ask again */
	*p = (struct uproc){ .tgid = tgid, .start_time = start_time, .gone = true };
	*proc_slot(u, tgid) = p;
}

/*
 * unwinder_track() of maps read from read_at on (NULL: unreadable, so the
 * process is forgotten; if it exited, as track_gone() says).
 */
static int track_maps(struct unwinder *u, uint32_t tgid, uint64_t start_time,
		      const struct procmaps *maps, uint64_t read_at, bool exited)
{
	struct uproc *gone;
	bool queued;
	int err;

	pthread_mutex_lock(&u->lock);
	if (!maps) {
		if (exited) {
			track_gone(u, tgid, start_time);
		} else {
			/* Unreadable: what was loaded for the PID is not its. */
			gone = *proc_slot(u, tgid);
			if (gone)
				proc_forget(u, gone);
		}
		pthread_mutex_unlock(&u->lock);
		return -ESRCH;
	}
	err = track_locked(u, tgid, start_time, maps, read_at);
	queued = jobs_queued(u);
	pthread_mutex_unlock(&u->lock);
	wake_builder(u, queued);
	return err;
}

int unwinder_track_kept(struct unwinder *u, uint32_t tgid, uint64_t start_time,
			struct procmaps **maps)
{
	struct procmaps *pm;
	uint64_t read_at = sampler_boot_ns();
	int err;

	if (maps)
		*maps = NULL;
	/* Read before the lock: the copy walk and the builder need not wait for /proc. */
	err = procmaps_load_pid(u->proc_root, tgid, true, &pm);
	if (err) {
		bool exited = err == -ENOENT || err == -ESRCH;

		track_maps(u, tgid, start_time, NULL, read_at, exited);
		return exited ? -ESRCH : err;
	}
	err = track_maps(u, tgid, start_time, pm, read_at, false);
	if (maps)
		*maps = pm;
	else
		procmaps_free(pm);
	return err;
}

int unwinder_track_given(struct unwinder *u, uint32_t tgid, uint64_t start_time,
			 const struct procmaps *maps, uint64_t read_at)
{
	return maps ? track_maps(u, tgid, start_time, maps, read_at, false) : -EINVAL;
}

int unwinder_track(struct unwinder *u, uint32_t tgid, uint64_t start_time)
{
	return unwinder_track_kept(u, tgid, start_time, NULL);
}

bool unwinder_pending(struct unwinder *u, uint32_t tgid, uint64_t start_time)
{
	const struct uproc *p;
	bool pending;

	pthread_mutex_lock(&u->lock);
	p = *proc_slot(u, tgid);
	pending = p && p->start_time == start_time && p->waiting;
	pthread_mutex_unlock(&u->lock);
	return pending;
}

/* --- the walk of a copy ---------------------------------------------------- */

struct copy_env {
	const struct sampler_copy *copy;
	struct unwinder *u;
	bool unbuilt, stalled; /* a frame met a table still building, or given up */
};

struct table_words {
	struct unwmaps *maps;
	uint32_t slot;
	struct unwmaps_pair pair;
};

static int copy_read(const struct copy_env *env, __u64 *dst, __u64 addr)
{
	uint64_t base = env->copy->regs->r[7];

	if (addr < base || addr - base > env->copy->stack_len ||
	    env->copy->stack_len - (addr - base) < sizeof(*dst))
		return -1;
	memcpy(dst, env->copy->stack + (addr - base), sizeof(*dst));
	return 0;
}

static int table_word(struct table_words *t, __u32 i, __u32 *dst)
{
	uint32_t w;

	if (unwmaps_table_word(t->maps, t->slot, i, &w, &t->pair))
		return -1;
	*dst = w;
	return 0;
}

static const struct ebprof_unw_rule *rule_at(const struct copy_env *env, __u32 i)
{
	uint32_t n;
	const struct ebprof_unw_rule *rules = unwtab_rules_array(env->u->rules, &n);

	return i < n ? &rules[i] : NULL;
}

#define UNW_READ(env, dst, addr) copy_read((env), (dst), (addr))
#define UNW_WORD(table, i, dst) table_word((table), (i), (dst))
#define UNW_RULE(env, i) rule_at((env), (i))
#include "bpf/unwind.h"

static const struct ebprof_unw_mapping *find_mapping(const struct uproc *p, uint64_t pc)
{
	uint32_t lo = 0, hi = p->n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (p->maps[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || pc >= p->maps[lo - 1].end)
		return NULL;
	return &p->maps[lo - 1];
}

/* What copy_step says of a pc in none of the process's known mappings. */
#define COPY_STALE (-1)
/* After a read a copy asked for that missed its pc as well, how long no copy asks again. */
#define COPY_REREAD_HOLD_NS 1000000000ull

/*
 * Whether reading p's maps again may find a copy's pc that they lack:
 * only when the copy was taken after the read began. Taken before it, its
 * code was unmapped since, or the process exec'd (a shell's child, sampled
 * in the shell's code, read as the program it became): a read finds the
 * process as it is now, never the code that is gone. A pc no read finds
 * (a walk gone astray through a bad return address) asks at most once
 * every COPY_REREAD_HOLD_NS.
 */
static bool copy_may_reread(const struct uproc *p, const struct sampler_copy *copy)
{
	if (p->gone && p->start_time == copy->start_time)
		return false; /* exited: no read finds anything */
	if (!copy->sampled_at || p->start_time != copy->start_time)
		return true; /* not known: as asked */
	if (copy->sampled_at < p->read_at)
		return false;
	return p->reread_vain != p->read_at || copy->sampled_at >= p->read_at + COPY_REREAD_HOLD_NS;
}

/* One frame of a copy, as walk_step in ebprof.bpf.c. */
static int copy_step(struct copy_env *env, struct uproc *p, struct ebprof_regs *regs)
{
	uint64_t pc = regs->r[UNW_RIP];
	const struct ebprof_unw_mapping *m = p ? find_mapping(p, pc) : NULL;
	const struct ebprof_unw_rule *rule;
	struct table_words t;
	int ret;

	if (!m)
		return p ? COPY_STALE : UNW_NO_TABLE;
	if (!m->table) {
		const struct utable *owner = p->tables[m - p->maps];

		env->unbuilt |= owner && owner->state != UTABLE_READY;
		env->stalled |= owner && owner->stalled;
		return unw_step_fp(env, regs);
	}
	t = (struct table_words){ .maps = env->u->maps, .slot = m->table };
	rule = rule_at(env, unw_find_rule(&t, pc + m->adjust - (regs->exact ? 0 : 1)));
	if (!rule) /* an index past the rules: as the BPF walk answers it */
		return UNW_UNSUPPORTED;
	if (rule->cfa_kind == EBPROF_CFA_NONE) {
		/* No row (assembly without CFI): its frame pointer, as walk_no_row(). */
		ret = unw_step_fp(env, regs);
		return ret == UNW_NEXT || ret == UNW_END ? ret : UNW_NO_ROW;
	}
	return unw_step_rule(env, rule, regs);
}

/*
 * Waits (lock held) until the tables of process tgid are built, or until
 * the latest time its unbuilt tables were due (queued + wait_ms): a build
 * that takes longer, or stalls, holds each copy no longer than that.
 * Returns the process, NULL when it is not tracked.
 */
static struct uproc *copy_wait(struct unwinder *u, uint32_t tgid, uint64_t start_time)
{
	bool waited = false;

	for (;;) {
		struct uproc *p = *proc_slot(u, tgid);
		uint64_t until = 0;
		struct timespec ts;

		if (!p || p->start_time != start_time || !p->waiting) {
			u->totals.copy_waits += waited;
			return p;
		}
		for (uint32_t i = 0; i < p->n; i++)
			if (p->tables[i] && p->tables[i]->state != UTABLE_READY &&
			    p->tables[i]->due_ms > until)
				until = p->tables[i]->due_ms;
		if (monotonic_ms() >= until) {
			u->totals.copy_waits += waited;
			return p;
		}
		waited = true;
		ts.tv_sec = (time_t)(until / 1000);
		ts.tv_nsec = (long)(until % 1000) * 1000000L;
		pthread_cond_timedwait(&u->built, &u->lock, &ts);
	}
}

/* p, unless it is a process found gone before any read of it: nothing to walk with. */
static struct uproc *copy_walkable(struct uproc *p)
{
	return p && p->gone && !p->n ? NULL : p;
}

uint32_t unwinder_unwind_copy(const struct sampler_copy *copy, uint64_t *ips, uint32_t cap,
			      int *stop, bool *stale, void *ctx)
{
	struct unwinder *u = ctx;
	struct copy_env env = { .copy = copy, .u = u };
	struct ebprof_regs regs = *copy->regs;
	struct uproc *p;
	uint32_t n = 0;
	int ret = UNW_NEXT;
	bool unmapped = false;

	if (cap > u->max_frames)
		cap = u->max_frames;
	pthread_mutex_lock(&u->lock);
	p = *proc_slot(u, copy->tgid);
	if (!p || p->start_time != copy->start_time) {
		pthread_mutex_unlock(&u->lock);
		unwinder_track(u, copy->tgid, copy->start_time);
		pthread_mutex_lock(&u->lock);
	}
	p = copy_walkable(copy_wait(u, copy->tgid, copy->start_time));
	if (!p || p->start_time != copy->start_time)
		u->totals.copy_gone++;
	while (ret == UNW_NEXT) {
		if (n >= cap) {
			ret = UNW_DEPTH_CAP;
			break;
		}
		ips[n++] = regs.r[UNW_RIP];
		ret = copy_step(&env, p, &regs);
		if (ret == COPY_STALE && !*stale && copy_may_reread(p, copy)) {
			/* Mapped since we read its maps: the sampler has it tracked again. */
			*stale = true;
			u->totals.copy_rereads++;
			ret = UNW_NO_TABLE;
			break;
		}
		if (ret == COPY_STALE && !unmapped) {
			unmapped = true;
			u->totals.copy_unmapped++;
			if (*stale) /* read again for this copy, and still not there */
				p->reread_vain = p->read_at;
		}
		if (ret == COPY_STALE || ret == UNW_NO_TABLE) {
			/* As the program does when it cannot copy: the frame pointer. */
			ret = unw_step_fp(&env, &regs);
			if (ret != UNW_NEXT && ret != UNW_END)
				ret = UNW_NO_TABLE;
		}
		if (ret == UNW_NEXT) /* a re-read may have moved it */
			p = copy_walkable(*proc_slot(u, copy->tgid));
	}
	if (env.unbuilt)
		u->totals.wait_timeout++;
	else if (env.stalled)
		u->totals.wait_stalled++;
	pthread_mutex_unlock(&u->lock);
	*stop = ret == UNW_NEXT ? UNW_END : ret;
	return n;
}

/* --- drains, stats, free --------------------------------------------------- */

static int seq_newest_first(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/*
 * The LRU order of the keep_tables-th table no process holds, let go
 * last: those at or after it are kept. 0 when there are not that many (or
 * no memory to sort them: every one is kept, the byte bound still holds).
 */
static uint64_t keep_threshold(const struct unwinder *u)
{
	uint64_t *seqs, threshold = 0;
	size_t n = 0, i = 0;

	if (!u->keep_tables)
		return UINT64_MAX;
	for (const struct utable *t = u->tables; t; t = t->next)
		n += !t->users;
	if (n <= u->keep_tables)
		return 0;
	seqs = malloc(n * sizeof(*seqs));
	if (!seqs)
		return 0;
	for (const struct utable *t = u->tables; t; t = t->next)
		if (!t->users)
			seqs[i++] = t->used_seq;
	qsort(seqs, n, sizeof(*seqs), seq_newest_first);
	threshold = seqs[u->keep_tables - 1];
	free(seqs);
	return threshold;
}

/*
 * Frees the tables nobody held for a whole drain that the cache does not
 * keep. A table with no user is kept while it is among the keep_tables
 * let go last, or was let go less than keep_ms ago: a binary that starts
 * again and again (a compiler, an interpreter on a CI host) finds its
 * table still loaded instead of having it built anew each time. Either
 * way the byte bound holds: make_room() drops kept tables first.
 */
static void tables_expire(struct unwinder *u)
{
	uint64_t now = u->now_ms(), threshold = keep_threshold(u);

	for (struct utable **tp = &u->tables; *tp;) {
		struct utable *t = *tp;

		if (!t->users && t->state == UTABLE_READY && t->used_drain < u->drain &&
		    t->used_seq < threshold &&
		    now - t->used_ms >= u->keep_ms) {
			*tp = t->next;
			u->totals.expired += t->slot != 0;
			table_free(u, t);
		} else {
			tp = &t->next;
		}
	}
}

void unwinder_end_drain(struct unwinder *u)
{
	pthread_mutex_lock(&u->lock);
	for (size_t b = 0; b < PROC_BUCKETS; b++) {
		struct uproc **pp = &u->procs[b];

		while (*pp) {
			struct uproc *p = *pp;

			if (procpid_exists(u->proc_root, u->pids_ours, p->tgid)) {
				pp = &p->next;
				continue;
			}
			unwmaps_process_drop(u->maps, p->tgid);
			proc_release(u, p);
			*pp = p->next;
			free(p);
		}
	}
	tables_expire(u);
	u->drain++;
	pthread_mutex_unlock(&u->lock);
}

void unwinder_stats(struct unwinder *u, struct unwinder_stats *stats)
{
	struct unwmaps_stats ms;
	uint32_t n_rules;

	pthread_mutex_lock(&u->lock);
	unwmaps_stats(u->maps, &ms);
	*stats = u->totals;
	stats->tables = 0;
	stats->rows = 0;
	stats->table_bytes = 0;
	stats->kept = 0;
	for (const struct utable *t = u->tables; t; t = t->next) {
		if (!t->slot)
			continue;
		stats->kept += !t->users;
		stats->tables++;
		stats->rows += t->rows;
		stats->table_bytes += t->bytes;
	}
	stats->table_kernel_bytes = u->kernel_bytes;
	stats->max_bytes = u->max_bytes;
	stats->processes = ms.processes;
	unwtab_rules_array(u->rules, &n_rules);
	stats->rules = n_rules;
	stats->rules_bytes = ms.rules_bytes;
	stats->mappings_bytes = ms.mappings_bytes;
	pthread_mutex_unlock(&u->lock);
}

void unwinder_free(struct unwinder *u)
{
	if (!u)
		return;
	for (size_t b = 0; b < PROC_BUCKETS; b++) {
		while (u->procs[b]) {
			struct uproc *p = u->procs[b];

			u->procs[b] = p->next;
			if (u->maps)
				unwmaps_process_drop(u->maps, p->tgid);
			proc_release(u, p);
			free(p);
		}
	}
	while (u->tables) {
		struct utable *t = u->tables;

		u->tables = t->next;
		table_free(u, t);
	}
	unwtab_rules_free(u->rules);
	fileidx_free(u->by_key);
	free(u->proc_root);
	free(u->debug_root);
	target_free(u->gate);
	pthread_cond_destroy(&u->built);
	pthread_mutex_destroy(&u->lock);
	free(u);
}
