/*
 * proctab: the symbolizer's process records, and the /proc readers that
 * fill them (see proctab.h).
 *
 * /proc reads are most of what this costs on a busy machine (a shell
 * loop starts hundreds of processes a second), so they are spared where
 * something cheaper answers. The sampler knows each process's start time,
 * and proctab_get() and proctab_track() take it: a sample or report that
 * gives the record's own needs no /proc/PID/stat, and the end of a drain
 * asks /proc only about records none confirmed in that drain. The perf
 * map is looked for only once the maps show anonymous executable memory,
 * the only place JIT code can run. Small /proc files are read with one
 * read(), not stdio. Under the real /proc, the end of a drain asks
 * procpid (kill(PID, 0)) whether an idle record's process still runs,
 * and reads its /proc/PID/stat only once every PROC_VERIFY_DRAINS drains:
 * a host keeps hundreds of processes sampled once and idle since, and a
 * stat read each per drain was most of what the profiler spent there.
 *
 * Perf maps are read from /proc/PID/root/tmp/perf-NSPID.map, NSPID being
 * the process's PID in its own namespace, through the gate (target_*).
 */
#include "symbolizer/proctab.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolizer/elfcache.h"
#include "symbolizer/perfmap.h"
#include "symbolizer/procmaps.h"
#include "symbolizer/procpid.h"
#include "symbolizer/target.h"

#define PROC_BUCKETS 1024
#define DEFAULT_MAX_PROCESSES 4096
/*
 * An idle record's /proc/PID/stat is read at one end of a drain in this
 * many, to let go of a record whose PID another process took (lookups
 * that give a start time find that out themselves, at once).
 */
#define PROC_VERIFY_DRAINS 64

struct proctab {
	char *proc_root;
	char *perfmap_dir;
	struct target *gate;   /* borrowed */
	struct elfcache *elfs; /* borrowed: the tables the records hold */
	uint64_t perfmap_max_bytes;
	bool maps_text_only;
	/* Within proctab_track_gone(): the caller's read found the maps file gone. */
	bool maps_known_gone;
	bool pids_ours; /* procpid_by_signal(): the end of a drain reads stat files less */
	struct proc *procs[PROC_BUCKETS];
	size_t nr_procs, max_procs;
	uint64_t max_bytes;
	uint64_t proc_bytes, perfmap_bytes; /* as of the last end of a drain */
	uint64_t evicted, evicted_over_bytes;
	uint64_t drain;
	uint64_t perfmaps_refused;
	uint64_t perfmaps_opened;
	uint64_t perfmap_lines_too_long;
	uint64_t perfmaps_truncated;
	uint64_t end_checks, end_stat_reads; /* at the ends of drains (proctab_stats) */
	uint64_t ns_per_tick; /* /proc/PID/stat's clock tick; 0: start times in ns unusable */
	int64_t boottime_offset; /* ns our time namespace adds to boot times in /proc */
};

/*
 * Reads a small /proc file whole into buf (NUL-terminated) with one
 * open() and read(): no stdio buffer to allocate, and the kernel makes
 * these files in one go. Returns its length, or -errno.
 */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
	size_t len = 0;
	ssize_t got;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while (len < size - 1) {
		got = read(fd, buf + len, size - 1 - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		len += (size_t)got;
	}
	close(fd);
	buf[len] = '\0';
	return (ssize_t)len;
}

/*
 * Out of descriptors is the one failure of a /proc read that is ours, not
 * the process's: counted with the gate's refusals, so the user hears of it.
 */
static void count_fds(struct proctab *t, long err)
{
	if (err == -EMFILE || err == -ENFILE)
		target_count(t->gate, TARGET_NO_FDS);
}

/* read_small() of a process's /proc file. */
static ssize_t proc_read(struct proctab *t, const char *path, char *buf, size_t size)
{
	ssize_t n = read_small(path, buf, size);

	count_fds(t, n);
	return n;
}

/*
 * The kernel writes a start time into /proc/PID/stat as start_boottime
 * (ns) divided by NSEC_PER_SEC / USER_HZ (nsec_to_clock_t, exact when
 * USER_HZ divides a second, as 100 does); _SC_CLK_TCK is USER_HZ.
 */
static uint64_t ns_per_tick(void)
{
	long hz = sysconf(_SC_CLK_TCK);

	if (hz <= 0 || 1000000000L % hz)
		return 0;
	return (uint64_t)(1000000000L / hz);
}

/*
 * In a time namespace /proc shows start times shifted by the namespace's
 * boot time offset (timens_add_boottime_ns); the sampler's are the
 * kernel's own. "boottime SECS NSECS" in /proc/self/timens_offsets.
 */
static int64_t boottime_offset(const char *proc_root)
{
	char path[4096], buf[256];
	const char *line;
	long long secs, nsecs;

	snprintf(path, sizeof(path), "%s/self/timens_offsets", proc_root);
	if (read_small(path, buf, sizeof(buf)) <= 0)
		return 0;
	line = strstr(buf, "boottime");
	if (!line || sscanf(line + 8, "%lld %lld", &secs, &nsecs) != 2)
		return 0;
	return (int64_t)secs * 1000000000 + nsecs;
}

uint64_t proctab_ticks(const struct proctab *t, uint64_t start_ns)
{
	int64_t shifted = (int64_t)start_ns + t->boottime_offset;

	if (!t->ns_per_tick || !start_ns || shifted < 0)
		return 0;
	return (uint64_t)shifted / t->ns_per_tick;
}

struct proctab *proctab_new(const struct proctab_config *config)
{
	struct proctab *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->proc_root = strdup(config->proc_root);
	t->perfmap_dir = strdup(config->perfmap_dir);
	if (!t->proc_root || !t->perfmap_dir) {
		proctab_free(t);
		return NULL;
	}
	t->gate = config->gate;
	t->elfs = config->elfs;
	t->perfmap_max_bytes = config->perfmap_max_bytes;
	t->maps_text_only = config->maps_text_only;
	t->pids_ours = procpid_by_signal(t->proc_root);
	t->max_procs = config->max_processes ? config->max_processes : DEFAULT_MAX_PROCESSES;
	t->max_bytes = config->max_bytes ? config->max_bytes : UINT64_MAX;
	t->ns_per_tick = ns_per_tick();
	t->boottime_offset = boottime_offset(t->proc_root);
	return t;
}

/* Lets go of the maps and the tables their mappings held. */
static void proc_drop_maps(struct proctab *t, struct proc *proc)
{
	if (proc->maps && proc->elfs)
		for (size_t i = 0; i < procmaps_count(proc->maps); i++)
			elfcache_release(t->elfs, proc->elfs[i].elf);
	free(proc->elfs);
	proc->elfs = NULL;
	procmaps_free(proc->maps);
	proc->maps = NULL;
}

static void proc_free(struct proctab *t, struct proc *proc)
{
	proc_drop_maps(t, proc);
	perfmap_free(proc->perfmap);
	free(proc);
}

void proctab_free(struct proctab *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < PROC_BUCKETS; i++) {
		struct proc *proc = t->procs[i], *next;

		for (; proc; proc = next) {
			next = proc->next;
			proc_free(t, proc);
		}
	}
	free(t->proc_root);
	free(t->perfmap_dir);
	free(t);
}

uint64_t proctab_drain(const struct proctab *t)
{
	return t->drain;
}

/* Field 22 of /proc/PID/stat, after the comm, which may hold ')' itself; 0: unreadable. */
static uint64_t read_start_time(struct proctab *t, uint32_t tgid)
{
	char path[4096], buf[1024];
	uint64_t start = 0;
	const char *s;

	snprintf(path, sizeof(path), "%s/%" PRIu32 "/stat", t->proc_root, tgid);
	if (proc_read(t, path, buf, sizeof(buf)) <= 0)
		return 0;
	s = strrchr(buf, ')');
	if (!s)
		return 0;
	/* ") S ppid ...": field 3 is the state; skip fields 3 to 21. */
	s++;
	for (int field = 3; field <= 21; field++) {
		s = strchr(s + 1, ' ');
		if (!s)
			return 0;
	}
	for (s++; *s >= '0' && *s <= '9'; s++) {
		if (start > (UINT64_MAX - 9) / 10)
			return 0;
		start = start * 10 + (uint64_t)(*s - '0');
	}
	return start;
}

struct proc_status {
	uint32_t nspid; /* its PID in its own PID namespace */
	uid_t euid;
};

/*
 * From /proc/PID/status: the process's PID in its own PID namespace (the
 * last NSpid field), which names its perf map, and its effective uid
 * (the second Uid field), who must own that map. When unreadable: tgid,
 * and root, so that only root's files are trusted then.
 */
static void read_status(struct proctab *t, uint32_t tgid, struct proc_status *status)
{
	char path[4096], buf[8192];
	const char *line, *next;

	status->nspid = tgid;
	status->euid = 0;
	snprintf(path, sizeof(path), "%s/%" PRIu32 "/status", t->proc_root, tgid);
	if (proc_read(t, path, buf, sizeof(buf)) <= 0)
		return;
	for (line = buf; line; line = next) {
		const char *last, *end = strchr(line, '\n');
		unsigned long v, real, effective;

		next = end ? end + 1 : NULL;
		if (!strncmp(line, "Uid:", 4)) {
			if (sscanf(line + 4, "%lu %lu", &real, &effective) == 2 &&
			    effective < UINT32_MAX)
				status->euid = (uid_t)effective;
		} else if (!strncmp(line, "NSpid:", 6)) {
			/* The last field of this line: strrchr would run into the next. */
			for (last = end ? end : line + strlen(line); last > line && last[-1] != '\t';)
				last--;
			if (last > line && sscanf(last, "%lu", &v) == 1 && v && v <= UINT32_MAX)
				status->nspid = (uint32_t)v;
		}
	}
}

/*
 * The process's perf map: inside its root (a container writes its own
 * /tmp) under its own PID, when /proc shows us that root; else in
 * perfmap_dir under the host PID (a test's fake /proc has no root). Only
 * a file of the process's user or root is read (perfmap.h says why).
 */
static struct perfmap *proc_perfmap_new(struct proctab *t, uint32_t tgid)
{
	char root[4096], path[4096 + 64];
	struct proc_status status;
	struct perfmap_config config = { .path = path, .gate = t->gate,
					 .max_bytes = t->perfmap_max_bytes };
	struct stat st;

	read_status(t, tgid, &status);
	config.owner = status.euid;
	snprintf(root, sizeof(root), "%s/%" PRIu32 "/root", t->proc_root, tgid);
	if (!stat(root, &st) && S_ISDIR(st.st_mode)) {
		snprintf(path, sizeof(path), "%s/perf-%" PRIu32 ".map", t->perfmap_dir,
			 status.nspid);
		config.root = root;
	} else {
		snprintf(path, sizeof(path), "%s/perf-%" PRIu32 ".map", t->perfmap_dir, tgid);
	}
	return perfmap_new_with(&config);
}

/* Reads what the runtime appended; counts a refused (planted) file and the bounds hit. */
static void proc_refresh_perfmap(struct proctab *t, struct proc *proc)
{
	size_t refused, too_long, truncated;

	if (!proc->perfmap)
		return;
	refused = perfmap_refused(proc->perfmap);
	too_long = perfmap_too_long(proc->perfmap);
	truncated = perfmap_truncated(proc->perfmap);
	perfmap_refresh(proc->perfmap);
	t->perfmaps_refused += perfmap_refused(proc->perfmap) - refused;
	t->perfmap_lines_too_long += perfmap_too_long(proc->perfmap) - too_long;
	t->perfmaps_truncated += perfmap_truncated(proc->perfmap) - truncated;
}

/*
 * Starts reading the process's perf map, once: only a process with
 * anonymous executable memory can have JIT code to name, so for every
 * other one (nearly all) we never look, where looking costs a read of
 * /proc/PID/status and an open() per drain. Without maps we cannot tell,
 * and look. Returns 0 or -ENOMEM.
 */
static int proc_open_perfmap(struct proctab *t, struct proc *proc)
{
	if (proc->perfmap || (proc->maps && !procmaps_has_anon(proc->maps)))
		return 0;
	proc->perfmap = proc_perfmap_new(t, proc->tgid);
	if (!proc->perfmap)
		return -ENOMEM;
	t->perfmaps_opened++;
	proc_refresh_perfmap(t, proc);
	return 0;
}

/*
 * Reads the process's maps (again), or takes given ones, read by another
 * reader of the same report just now. When verify, they are kept only if
 * the PID still names the process of the record (a re-read long after
 * the record was made). Returns 0 or a negative errno (-ENOENT: the
 * process is gone).
 */
static int proc_read_maps(struct proctab *t, struct proc *proc, bool verify,
			  struct procmaps *given)
{
	struct procmaps *maps = given;
	struct proc_elf *elfs;
	int err;

	proc->maps_drain = t->drain;
	if (!maps && t->maps_known_gone)
		return -ENOENT; /* read just now by the caller: not tried again */
	if (!maps) {
		/* A process gone before its first read keeps no maps; one read before keeps them. */
		err = procmaps_load_pid(t->proc_root, proc->tgid, !t->maps_text_only, &maps);
		count_fds(t, err);
		if (err)
			return err;
	}
	if (verify && read_start_time(t, proc->tgid) != proc->start_time) {
		procmaps_free(maps);
		return -ENOENT;
	}
	elfs = calloc(procmaps_count(maps) ? procmaps_count(maps) : 1, sizeof(*elfs));
	if (!elfs) {
		procmaps_free(maps);
		return -ENOMEM;
	}
	proc_drop_maps(t, proc);
	proc->maps = maps;
	proc->elfs = elfs;
	proc->maps_tracked = true;
	return 0;
}

/*
 * Reads (again) what a record holds: a new process, or a reused PID.
 * Returns what reading its maps returned, or -ENOMEM.
 */
static int proc_fill(struct proctab *t, struct proc *proc, uint64_t start_time,
		     struct procmaps *given)
{
	int err;

	proc_drop_maps(t, proc);
	perfmap_free(proc->perfmap);
	proc->perfmap = NULL;
	proc->start_time = start_time;
	proc->gone = !start_time;
	proc->checked_drain = t->drain;
	proc->seen_drain = t->drain;
	err = proc_read_maps(t, proc, false, given);
	/* Gone before its maps could be read: its root and /tmp are gone with it. */
	if (err != -ENOENT && proc_open_perfmap(t, proc))
		return -ENOMEM;
	return err;
}

static struct proc *proc_find(struct proctab *t, uint32_t tgid)
{
	struct proc *proc;

	for (proc = t->procs[tgid % PROC_BUCKETS]; proc; proc = proc->next)
		if (proc->tgid == tgid)
			return proc;
	return NULL;
}

static void proc_unlink(struct proctab *t, struct proc *victim)
{
	struct proc **link = &t->procs[victim->tgid % PROC_BUCKETS];

	while (*link != victim)
		link = &(*link)->next;
	*link = victim->next;
	proc_free(t, victim);
	t->nr_procs--;
}

/* The drain a record was last of use in: made, tracked or sampled. */
static uint64_t proc_last_use(const struct proc *proc)
{
	if (proc->used_drain != NEVER && proc->used_drain > proc->seen_drain)
		return proc->used_drain;
	return proc->seen_drain;
}

/*
 * The record to drop at a bound: the one of least use, a live process
 * first (it can be read again) and an exited one only when all are exited.
 */
static struct proc *proc_victim(struct proctab *t)
{
	struct proc *victim = NULL;

	for (size_t i = 0; i < PROC_BUCKETS; i++)
		for (struct proc *proc = t->procs[i]; proc; proc = proc->next) {
			if (!victim || (victim->gone && !proc->gone) ||
			    (victim->gone == proc->gone &&
			     proc_last_use(proc) < proc_last_use(victim)))
				victim = proc;
		}
	return victim;
}

static void proc_make_room(struct proctab *t)
{
	struct proc *victim;

	if (t->nr_procs < t->max_procs)
		return;
	victim = proc_victim(t);
	if (victim) {
		proc_unlink(t, victim);
		t->evicted++;
	}
}

/* The heap memory a record holds: itself, its maps, their table slots and its perf map. */
static size_t proc_bytes(const struct proc *proc)
{
	return sizeof(*proc) + procmaps_bytes(proc->maps) +
	       (proc->elfs ? procmaps_count(proc->maps) * sizeof(*proc->elfs) : 0) +
	       perfmap_bytes(proc->perfmap);
}

/*
 * Sums the records' memory, and drops records of least use while it is
 * over the byte bound. Once per drain: maps and perf maps grow between
 * drains, and a walk of every record per new process would cost more
 * than the bound saves.
 */
static void proc_trim_bytes(struct proctab *t)
{
	uint64_t total = 0, perfmaps = 0;

	for (size_t i = 0; i < PROC_BUCKETS; i++)
		for (const struct proc *proc = t->procs[i]; proc; proc = proc->next) {
			total += proc_bytes(proc);
			perfmaps += perfmap_bytes(proc->perfmap);
		}
	while (total > t->max_bytes && t->nr_procs > 1) {
		struct proc *victim = proc_victim(t);

		if (!victim)
			break;
		total -= proc_bytes(victim);
		perfmaps -= perfmap_bytes(victim->perfmap);
		proc_unlink(t, victim);
		t->evicted_over_bytes++;
	}
	t->proc_bytes = total;
	t->perfmap_bytes = perfmaps;
}

/* A new record; *err gets what reading its maps returned. NULL without memory. */
static struct proc *proc_create(struct proctab *t, uint32_t tgid, uint64_t start_time,
				struct procmaps *given, int *err)
{
	struct proc **bucket = &t->procs[tgid % PROC_BUCKETS];
	struct proc *proc;

	proc_make_room(t);
	proc = calloc(1, sizeof(*proc));
	if (!proc) {
		procmaps_free(given);
		return NULL;
	}
	proc->tgid = tgid;
	proc->used_drain = NEVER;
	proc->confirmed_drain = NEVER;
	*err = proc_fill(t, proc, start_time, given);
	if (*err == -ENOMEM) {
		proc_free(t, proc);
		return NULL;
	}
	proc->next = *bucket;
	*bucket = proc;
	t->nr_procs++;
	return proc;
}

struct proc *proctab_get(struct proctab *t, uint32_t tgid, uint64_t start)
{
	struct proc *proc = proc_find(t, tgid);
	uint64_t start_time;
	int err;

	if (proc && start && start == proc->start_time) {
		proc->confirmed_drain = t->drain;
		if (proc->checked_drain != t->drain) {
			proc->checked_drain = t->drain;
			proc_refresh_perfmap(t, proc);
		}
		return proc;
	}
	if (proc && proc->checked_drain == t->drain && (!start || !proc->start_time))
		return proc;
	start_time = read_start_time(t, tgid);
	/* Another process's symbols would be wrong names: none is better. */
	if (start && start_time && start_time != start)
		return NULL;
	if (start && !start_time && proc && proc->start_time && proc->start_time != start)
		return NULL;
	if (!proc) {
		proc = proc_create(t, tgid, start_time, NULL, &err);
		if (proc && start && start_time)
			proc->confirmed_drain = t->drain;
		return proc;
	}
	proc->checked_drain = t->drain;
	if (!start_time) {
		/* Gone: keep what we read while it ran. */
		proc->gone = true;
	} else if (start_time != proc->start_time) {
		/* A new process under an old PID: nothing of the old one carries over. */
		if (proc_fill(t, proc, start_time, NULL) == -ENOMEM)
			return NULL;
		proc->used_drain = NEVER;
	} else {
		proc_refresh_perfmap(t, proc);
	}
	if (start && start_time)
		proc->confirmed_drain = t->drain;
	return proc;
}

/*
 * With the start time from the caller, a new process costs one read of
 * its maps: no /proc/PID/stat, and no perf map unless it has anonymous
 * executable memory. The PID cannot have been reused since the sampler
 * saw it: that takes pid_max new processes, and the report is
 * milliseconds old.
 */
int proctab_track(struct proctab *t, uint32_t tgid, uint64_t start_time, struct procmaps *given,
		  struct proc **out)
{
	uint64_t start = proctab_ticks(t, start_time);
	bool confirmed = start != 0;
	struct proc *proc = proc_find(t, tgid);
	int err;

	*out = NULL;
	if (!start)
		start = read_start_time(t, tgid);
	if (!start || (proc && start < proc->start_time)) {
		/* Gone, or a late report: the PID is a newer process's already. */
		if (proc && !start)
			proc->gone = true;
		procmaps_free(given);
		return -ESRCH;
	}
	if (proc)
		proc->maps_tracked = false; /* set again by this call's read */
	if (!proc) {
		proc = proc_create(t, tgid, start, given, &err);
		if (!proc)
			return -ENOMEM;
	} else if (proc->start_time != start) {
		/* A new process under an old PID: nothing of the old one carries over. */
		err = proc_fill(t, proc, start, given);
		if (err == -ENOMEM)
			return -ENOMEM;
		proc->used_drain = NEVER;
		proc->confirmed_drain = NEVER;
	} else {
		/* The same process, perhaps after an exec: its mappings now. */
		proc->seen_drain = t->drain;
		proc->checked_drain = t->drain;
		err = proc_read_maps(t, proc, false, given);
		if (proc->perfmap)
			proc_refresh_perfmap(t, proc);
		else if (err != -ENOENT && proc_open_perfmap(t, proc))
			return -ENOMEM;
	}
	if (err == -ENOENT) {
		/*
		 * Exited before we could read it. The record stays, with what an
		 * earlier read found if any, so that naming its samples (drained
		 * after this) asks /proc nothing more: it goes at the end of a
		 * drain that brings none.
		 */
		proc->gone = true;
		if (confirmed)
			proc->confirmed_drain = t->drain;
		return -ESRCH;
	}
	if (confirmed)
		proc->confirmed_drain = t->drain;
	*out = proc;
	return 0;
}

int proctab_track_gone(struct proctab *t, uint32_t tgid, uint64_t start_time)
{
	struct proc *proc;
	int err;

	t->maps_known_gone = true;
	err = proctab_track(t, tgid, start_time, NULL, &proc);
	t->maps_known_gone = false;
	return err;
}

int proctab_reread(struct proctab *t, struct proc *proc)
{
	int err = 0;

	/* Verified: the record may be drains old, and its PID another's by now. */
	if (proc_read_maps(t, proc, true, NULL) == -ENOENT)
		proc->gone = true;
	/* It may have started to JIT code since we last looked. */
	if (proc_open_perfmap(t, proc))
		err = -ENOMEM;
	return err;
}

/*
 * The start time of an idle record's PID at the end of a drain; 0: gone.
 * Under the real /proc, procpid_exists() answers whether the PID is in
 * use and the record's own start time is taken for the answer; the stat
 * file is read at one drain in PROC_VERIFY_DRAINS, spread over the
 * records by PID, and every time for a record without a start time.
 */
static uint64_t end_start_time(struct proctab *t, const struct proc *proc)
{
	t->end_checks++;
	if (t->pids_ours && proc->start_time && (t->drain + proc->tgid) % PROC_VERIFY_DRAINS)
		return procpid_exists(t->proc_root, true, proc->tgid) ? proc->start_time : 0;
	t->end_stat_reads++;
	return read_start_time(t, proc->tgid);
}

void proctab_end_drain(struct proctab *t)
{
	for (size_t i = 0; i < PROC_BUCKETS; i++) {
		struct proc *proc = t->procs[i], *next;

		for (; proc; proc = next) {
			uint64_t start_time;

			next = proc->next;
			/*
			 * Its own samples or report in this drain said it ran, and
			 * it is kept for one drain more whatever /proc says now:
			 * check it at the first drain without them.
			 */
			if (proc->confirmed_drain == t->drain)
				continue;
			start_time = end_start_time(t, proc);
			if (start_time && start_time != proc->start_time) {
				/* Its PID is another process's now, which must not get its symbols.
				 */
				proc_unlink(t, proc);
				continue;
			}
			proc->gone = !start_time;
			/*
			 * An exited process's samples can straddle a drain: some
			 * in the drain that saw it, the rest in the next one. So
			 * keep its record until a whole drain has passed without
			 * using it (or since it was tracked), then let it go.
			 */
			if (proc->gone && proc->used_drain != t->drain &&
			    proc->seen_drain != t->drain)
				proc_unlink(t, proc);
		}
	}
	proc_trim_bytes(t);
	t->drain++;
}

void proctab_stats(const struct proctab *t, struct proctab_stats *stats)
{
	uint64_t exited = 0;

	for (size_t i = 0; i < PROC_BUCKETS; i++)
		for (const struct proc *proc = t->procs[i]; proc; proc = proc->next)
			exited += proc->gone;
	*stats = (struct proctab_stats){
		.processes = t->nr_procs,
		.exited = exited,
		.evicted = t->evicted,
		.process_bytes = t->proc_bytes,
		.perfmap_bytes = t->perfmap_bytes,
		.evicted_over_bytes = t->evicted_over_bytes,
		.perfmaps_refused = t->perfmaps_refused,
		.perfmaps_opened = t->perfmaps_opened,
		.perfmap_lines_too_long = t->perfmap_lines_too_long,
		.perfmaps_truncated = t->perfmaps_truncated,
		.end_checks = t->end_checks,
		.end_stat_reads = t->end_stat_reads,
	};
}
