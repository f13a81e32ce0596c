/*
 * symbolizer: the facade that turns a sampled stack into named frames.
 *
 * The sampler hands over (tgid, comm, user ips, kernel ips) per distinct
 * stack at each drain. For the process we keep a record: its executable
 * mappings, the symbol table of each mapped file (held in the ELF cache,
 * so it outlives the process), its JIT perf map, and its start time
 * (field 22 of /proc/PID/stat), which tells a reused PID from the process
 * we read before. A record is made when the sampler first reports the
 * process (symbolizer_track, early, while /proc still shows it) or at
 * its first sample. Records are checked once per drain, maps are read
 * again at most once per drain when an address falls outside every
 * mapping (the process mmapped something new), and records of exited
 * processes are dropped only at the end of a drain that used them (or the
 * one after they were tracked), so the samples they left still resolve.
 *
 * /proc reads are most of what this costs on a busy machine (a shell
 * loop starts hundreds of processes a second), so they are spared where
 * something cheaper answers. The sampler knows each process's start time
 * (the _started calls): a sample or report that gives the record's own
 * needs no /proc/PID/stat, and the end of a drain asks /proc only about
 * records none confirmed in that drain. The perf map is looked for only
 * once the maps show anonymous executable memory, the only place JIT
 * code can run. Small /proc files are read with one read(), not stdio.
 *
 * Files are opened where the process sees them, and only through the
 * gate (target_*), which never blocks, resolves inside the process's root
 * and checks what it opens: /proc/PID/map_files/ (deleted files, other
 * mount namespaces), then PATH inside /proc/PID/root, and only then our
 * own PATH, each accepted only if its device and inode are the mapping's.
 * Perf maps are read from /proc/PID/root/tmp/perf-NSPID.map, NSPID being
 * the process's PID in its own namespace. PIDs themselves are the host's,
 * as the kernel reports them. What the files declare is bounded (section
 * sizes, symbol counts, perf-map lines and bytes); what the gate refuses
 * and the bounds hit are counted in the stats.
 *
 * A user address goes mapping -> ELF table (cached by file, elfcache_*)
 * -> symbol; then the JIT perf map; then "[file+0xoffset]" or "[unknown]".
 * Every frame but the leaf holds a return address, which may be the first
 * byte of the next function when a call ends its caller (noreturn calls
 * do), so those are looked up at ip - 1, the call instruction, as perf
 * does.
 *
 * When kptr_restrict hides kernel addresses, the kernel part of a stack
 * becomes one FRAME_KERNEL frame named "[kernel]": the time stays visible
 * and coloured as kernel time, and it is counted as unresolved.
 */
#include "symbolizer/symbolizer.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "symbolizer/debuginfo.h"
#include "symbolizer/demangle.h"
#include "symbolizer/elfcache.h"
#include "symbolizer/elfsym.h"
#include "symbolizer/ksyms.h"
#include "symbolizer/perfmap.h"
#include "symbolizer/procmaps.h"
#include "symbolizer/target.h"

#define PROC_BUCKETS 1024
#define DEFAULT_MAX_PROCESSES 4096
#define NEVER UINT64_MAX
#define UNKNOWN_NAME "[unknown]"

/* The symbol table of one mapping, loaded on first use and held in the ELF cache. */
struct proc_elf {
	const struct elfsym *elf; /* NULL: unreadable, or not tried yet */
	bool tried;
};

struct proc {
	uint32_t tgid;
	uint64_t start_time;	 /* clock ticks after boot; 0 when unread */
	struct procmaps *maps;	 /* NULL when they could not be read */
	struct proc_elf *elfs;	 /* one per mapping of maps */
	struct perfmap *perfmap; /* NULL: no anonymous executable memory (yet) */
	bool gone;		 /* seen exited (or its PID taken by another) */
	uint64_t checked_drain;	 /* drain in which start time and perf map were checked */
	uint64_t maps_drain;	 /* drain in which maps were last read */
	uint64_t seen_drain;	 /* drain in which it was made or last tracked */
	uint64_t used_drain;	 /* last drain whose samples it resolved; NEVER */
	uint64_t confirmed_drain; /* last drain whose caller gave its start time; NEVER */
	struct proc *next;
};

struct symbolizer {
	bool addresses;
	bool maps_text_only;
	char *proc_root;
	char *perfmap_dir;
	char *debug_root;
	struct ksyms *ksyms; /* NULL when kallsyms could not be read */
	struct target *gate; /* every open of a process's file */
	struct elfsym_bounds elf_bounds;
	struct elfsym_breaches elf_breaches;
	uint64_t perfmap_max_bytes;
	struct elfcache *elfs;
	struct demangle_cache *demangled; /* NULL: raw_names */
	struct elfsym *vdso;		  /* our own vDSO's table; NULL when unreadable */
	bool vdso_tried;
	struct proc *procs[PROC_BUCKETS];
	size_t nr_procs, max_procs;
	uint64_t max_proc_bytes;
	uint64_t proc_bytes, perfmap_bytes; /* as of the last end of a drain */
	uint64_t evicted, evicted_over_bytes;
	uint64_t drain;
	/* The names of the frames of the last call, where each starts, and
	 * the mapping each frame's code is in (frame.mapping points here).
	 * A mapping's path and build-id are copied into names too (map_offs
	 * says where): the maps and ELF tables they come from may be re-read
	 * or evicted by a later frame of the same stack. */
	char *names;
	size_t names_len, names_cap;
	size_t *name_offs;
	struct frame_mapping *mappings;
	struct mapping_offs {
		size_t file, build_id; /* in names; build_id SIZE_MAX: none */
	} *map_offs;
	size_t name_offs_cap;
	uint64_t frames, unresolved;
	uint64_t perfmaps_refused;
	uint64_t perfmaps_opened;
	uint64_t perfmap_lines_too_long;
	uint64_t perfmaps_truncated;
	uint64_t ns_per_tick; /* /proc/PID/stat's clock tick; 0: start times in ns unusable */
	int64_t boottime_offset; /* ns our time namespace adds to boot times in /proc */
};

void symbolizer_config_init(struct symbolizer_config *config)
{
	*config = (struct symbolizer_config){
	    .addresses = false,
	    .elf_cache_max = 0,
	    .proc_root = "/proc",
	    .kallsyms = "/proc/kallsyms",
	    .perfmap_dir = "/tmp",
	    .raw_names = false,
	    .debug_root = "/usr/lib/debug",
	    .max_processes = 0,
	    .elf_cache_bytes = 0,
	    .process_bytes = 0,
	    .names_bytes = 0,
	    .max_file_size = 0,
	    .elf_bounds = {0},
	    .perfmap_max_bytes = 0,
	    .maps_text_only = false,
	};
}

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
static void count_fds(struct symbolizer *sym, long err)
{
	if (err == -EMFILE || err == -ENFILE)
		target_count(sym->gate, TARGET_NO_FDS);
}

/* read_small() of a process's /proc file. */
static ssize_t proc_read(struct symbolizer *sym, const char *path, char *buf, size_t size)
{
	ssize_t n = read_small(path, buf, size);

	count_fds(sym, n);
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

/* A caller's start time (ns after boot) as /proc/PID/stat gives it; 0: unknown. */
static uint64_t start_ticks(const struct symbolizer *sym, uint64_t start_ns)
{
	int64_t shifted = (int64_t)start_ns + sym->boottime_offset;

	if (!sym->ns_per_tick || !start_ns || shifted < 0)
		return 0;
	return (uint64_t)shifted / sym->ns_per_tick;
}

struct symbolizer *symbolizer_new(const struct symbolizer_config *config)
{
	struct symbolizer_config defaults;
	struct symbolizer *sym;
	int err;

	symbolizer_config_init(&defaults);
	if (!config)
		config = &defaults;
	sym = calloc(1, sizeof(*sym));
	if (!sym)
		return NULL;
	sym->addresses = config->addresses;
	sym->maps_text_only = config->maps_text_only;
	sym->ns_per_tick = ns_per_tick();
	sym->max_procs = config->max_processes ? config->max_processes : DEFAULT_MAX_PROCESSES;
	sym->proc_root = strdup(config->proc_root ? config->proc_root : defaults.proc_root);
	sym->perfmap_dir = strdup(config->perfmap_dir ? config->perfmap_dir : defaults.perfmap_dir);
	sym->max_proc_bytes = config->process_bytes ? config->process_bytes
						    : SYMBOLIZER_DEFAULT_PROCESS_BYTES;
	sym->elfs = elfcache_new(config->elf_cache_max, config->elf_cache_bytes);
	sym->debug_root = strdup(config->debug_root ? config->debug_root : "");
	sym->gate = target_new(&(struct target_config){ .proc_root = sym->proc_root,
							.max_file_size = config->max_file_size });
	sym->elf_bounds = config->elf_bounds;
	sym->perfmap_max_bytes = config->perfmap_max_bytes;
	if (!sym->proc_root || !sym->perfmap_dir || !sym->elfs || !sym->debug_root || !sym->gate)
		goto err_free;
	sym->boottime_offset = boottime_offset(sym->proc_root);
	if (!config->raw_names) {
		sym->demangled = demangle_cache_new(0);
		if (!sym->demangled)
			goto err_free;
		demangle_cache_set_max_bytes(sym->demangled, config->names_bytes);
	}
	/* Without kallsyms kernel frames come out "[unknown]"; user frames still work. */
	err = ksyms_load(config->kallsyms ? config->kallsyms : defaults.kallsyms, &sym->ksyms);
	if (err == -ENOMEM)
		goto err_free;
	count_fds(sym, err);
	return sym;

err_free:
	symbolizer_free(sym);
	return NULL;
}

/* Lets go of the maps and the tables their mappings held. */
static void proc_drop_maps(struct symbolizer *sym, struct proc *proc)
{
	if (proc->maps && proc->elfs)
		for (size_t i = 0; i < procmaps_count(proc->maps); i++)
			elfcache_release(sym->elfs, proc->elfs[i].elf);
	free(proc->elfs);
	proc->elfs = NULL;
	procmaps_free(proc->maps);
	proc->maps = NULL;
}

static void proc_free(struct symbolizer *sym, struct proc *proc)
{
	proc_drop_maps(sym, proc);
	perfmap_free(proc->perfmap);
	free(proc);
}

void symbolizer_free(struct symbolizer *sym)
{
	if (!sym)
		return;
	for (size_t i = 0; i < PROC_BUCKETS; i++) {
		struct proc *proc = sym->procs[i], *next;

		for (; proc; proc = next) {
			next = proc->next;
			proc_free(sym, proc);
		}
	}
	ksyms_free(sym->ksyms);
	elfcache_free(sym->elfs);
	elfsym_free(sym->vdso);
	demangle_cache_free(sym->demangled);
	free(sym->proc_root);
	free(sym->perfmap_dir);
	free(sym->debug_root);
	target_free(sym->gate);
	free(sym->names);
	free(sym->name_offs);
	free(sym->mappings);
	free(sym->map_offs);
	free(sym);
}

/* Field 22 of /proc/PID/stat, after the comm, which may hold ')' itself; 0: unreadable. */
static uint64_t read_start_time(struct symbolizer *sym, uint32_t tgid)
{
	char path[4096], buf[1024];
	uint64_t start = 0;
	const char *s;

	snprintf(path, sizeof(path), "%s/%" PRIu32 "/stat", sym->proc_root, tgid);
	if (proc_read(sym, path, buf, sizeof(buf)) <= 0)
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
static void read_status(struct symbolizer *sym, uint32_t tgid, struct proc_status *status)
{
	char path[4096], buf[8192];
	const char *line, *next;

	status->nspid = tgid;
	status->euid = 0;
	snprintf(path, sizeof(path), "%s/%" PRIu32 "/status", sym->proc_root, tgid);
	if (proc_read(sym, path, buf, sizeof(buf)) <= 0)
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
static struct perfmap *proc_perfmap_new(struct symbolizer *sym, uint32_t tgid)
{
	char root[4096], path[4096 + 64];
	struct proc_status status;
	struct perfmap_config config = { .path = path, .gate = sym->gate,
					 .max_bytes = sym->perfmap_max_bytes };
	struct stat st;

	read_status(sym, tgid, &status);
	config.owner = status.euid;
	snprintf(root, sizeof(root), "%s/%" PRIu32 "/root", sym->proc_root, tgid);
	if (!stat(root, &st) && S_ISDIR(st.st_mode)) {
		snprintf(path, sizeof(path), "%s/perf-%" PRIu32 ".map", sym->perfmap_dir,
			 status.nspid);
		config.root = root;
	} else {
		snprintf(path, sizeof(path), "%s/perf-%" PRIu32 ".map", sym->perfmap_dir, tgid);
	}
	return perfmap_new_with(&config);
}

/* Reads what the runtime appended; counts a refused (planted) file and the bounds hit. */
static void proc_refresh_perfmap(struct symbolizer *sym, struct proc *proc)
{
	size_t refused, too_long, truncated;

	if (!proc->perfmap)
		return;
	refused = perfmap_refused(proc->perfmap);
	too_long = perfmap_too_long(proc->perfmap);
	truncated = perfmap_truncated(proc->perfmap);
	perfmap_refresh(proc->perfmap);
	sym->perfmaps_refused += perfmap_refused(proc->perfmap) - refused;
	sym->perfmap_lines_too_long += perfmap_too_long(proc->perfmap) - too_long;
	sym->perfmaps_truncated += perfmap_truncated(proc->perfmap) - truncated;
}

/*
 * Starts reading the process's perf map, once: only a process with
 * anonymous executable memory can have JIT code to name, so for every
 * other one (nearly all) we never look, where looking costs a read of
 * /proc/PID/status and an open() per drain. Without maps we cannot tell,
 * and look. Returns 0 or -ENOMEM.
 */
static int proc_open_perfmap(struct symbolizer *sym, struct proc *proc)
{
	if (proc->perfmap || (proc->maps && !procmaps_has_anon(proc->maps)))
		return 0;
	proc->perfmap = proc_perfmap_new(sym, proc->tgid);
	if (!proc->perfmap)
		return -ENOMEM;
	sym->perfmaps_opened++;
	proc_refresh_perfmap(sym, proc);
	return 0;
}

/*
 * Reads the process's maps (again). When verify, they are kept only if
 * the PID still names the process of the record (a re-read long after
 * the record was made). Returns 0 or a negative errno (-ENOENT: the
 * process is gone).
 */
static int proc_read_maps(struct symbolizer *sym, struct proc *proc, bool verify)
{
	char path[4096];
	struct procmaps *maps;
	struct proc_elf *elfs;
	int err;

	snprintf(path, sizeof(path), "%s/%" PRIu32 "/maps", sym->proc_root, proc->tgid);
	proc->maps_drain = sym->drain;
	/* A process gone before its first read keeps no maps; one read before keeps them. */
	err = procmaps_load_opt(path, !sym->maps_text_only, &maps);
	count_fds(sym, err);
	if (err)
		return err;
	if (verify && read_start_time(sym, proc->tgid) != proc->start_time) {
		procmaps_free(maps);
		return -ENOENT;
	}
	elfs = calloc(procmaps_count(maps) ? procmaps_count(maps) : 1, sizeof(*elfs));
	if (!elfs) {
		procmaps_free(maps);
		return -ENOMEM;
	}
	proc_drop_maps(sym, proc);
	proc->maps = maps;
	proc->elfs = elfs;
	return 0;
}

/*
 * Reads (again) what a record holds: a new process, or a reused PID.
 * Returns what reading its maps returned, or -ENOMEM.
 */
static int proc_fill(struct symbolizer *sym, struct proc *proc, uint64_t start_time)
{
	int err;

	proc_drop_maps(sym, proc);
	perfmap_free(proc->perfmap);
	proc->perfmap = NULL;
	proc->start_time = start_time;
	proc->gone = !start_time;
	proc->checked_drain = sym->drain;
	proc->seen_drain = sym->drain;
	err = proc_read_maps(sym, proc, false);
	/* Gone before its maps could be read: its root and /tmp are gone with it. */
	if (err != -ENOENT && proc_open_perfmap(sym, proc))
		return -ENOMEM;
	return err;
}

static struct proc *proc_find(struct symbolizer *sym, uint32_t tgid)
{
	struct proc *proc;

	for (proc = sym->procs[tgid % PROC_BUCKETS]; proc; proc = proc->next)
		if (proc->tgid == tgid)
			return proc;
	return NULL;
}

static void proc_unlink(struct symbolizer *sym, struct proc *victim)
{
	struct proc **link = &sym->procs[victim->tgid % PROC_BUCKETS];

	while (*link != victim)
		link = &(*link)->next;
	*link = victim->next;
	proc_free(sym, victim);
	sym->nr_procs--;
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
static struct proc *proc_victim(struct symbolizer *sym)
{
	struct proc *victim = NULL;

	for (size_t i = 0; i < PROC_BUCKETS; i++)
		for (struct proc *proc = sym->procs[i]; proc; proc = proc->next) {
			if (!victim || (victim->gone && !proc->gone) ||
			    (victim->gone == proc->gone &&
			     proc_last_use(proc) < proc_last_use(victim)))
				victim = proc;
		}
	return victim;
}

static void proc_make_room(struct symbolizer *sym)
{
	struct proc *victim;

	if (sym->nr_procs < sym->max_procs)
		return;
	victim = proc_victim(sym);
	if (victim) {
		proc_unlink(sym, victim);
		sym->evicted++;
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
static void proc_trim_bytes(struct symbolizer *sym)
{
	uint64_t total = 0, perfmaps = 0;

	for (size_t i = 0; i < PROC_BUCKETS; i++)
		for (const struct proc *proc = sym->procs[i]; proc; proc = proc->next) {
			total += proc_bytes(proc);
			perfmaps += perfmap_bytes(proc->perfmap);
		}
	while (total > sym->max_proc_bytes && sym->nr_procs > 1) {
		struct proc *victim = proc_victim(sym);

		if (!victim)
			break;
		total -= proc_bytes(victim);
		perfmaps -= perfmap_bytes(victim->perfmap);
		proc_unlink(sym, victim);
		sym->evicted_over_bytes++;
	}
	sym->proc_bytes = total;
	sym->perfmap_bytes = perfmaps;
}

/* A new record; *err gets what reading its maps returned. NULL without memory. */
static struct proc *proc_create(struct symbolizer *sym, uint32_t tgid, uint64_t start_time,
				int *err)
{
	struct proc **bucket = &sym->procs[tgid % PROC_BUCKETS];
	struct proc *proc;

	proc_make_room(sym);
	proc = calloc(1, sizeof(*proc));
	if (!proc)
		return NULL;
	proc->tgid = tgid;
	proc->used_drain = NEVER;
	proc->confirmed_drain = NEVER;
	*err = proc_fill(sym, proc, start_time);
	if (*err == -ENOMEM) {
		proc_free(sym, proc);
		return NULL;
	}
	proc->next = *bucket;
	*bucket = proc;
	sym->nr_procs++;
	return proc;
}

/*
 * The record for tgid, created or checked for PID reuse. start: the
 * sample's start time in ticks, 0 when unknown. A sample whose start
 * time is the record's needs nothing from /proc. NULL without memory, or
 * when the sample's process is gone and nothing read belongs to it.
 */
static struct proc *proc_get(struct symbolizer *sym, uint32_t tgid, uint64_t start)
{
	struct proc *proc = proc_find(sym, tgid);
	uint64_t start_time;
	int err;

	if (proc && start && start == proc->start_time) {
		proc->confirmed_drain = sym->drain;
		if (proc->checked_drain != sym->drain) {
			proc->checked_drain = sym->drain;
			proc_refresh_perfmap(sym, proc);
		}
		return proc;
	}
	if (proc && proc->checked_drain == sym->drain && (!start || !proc->start_time))
		return proc;
	start_time = read_start_time(sym, tgid);
	/* Another process's symbols would be wrong names: none is better. */
	if (start && start_time && start_time != start)
		return NULL;
	if (start && !start_time && proc && proc->start_time && proc->start_time != start)
		return NULL;
	if (!proc) {
		proc = proc_create(sym, tgid, start_time, &err);
		if (proc && start && start_time)
			proc->confirmed_drain = sym->drain;
		return proc;
	}
	proc->checked_drain = sym->drain;
	if (!start_time) {
		/* Gone: keep what we read while it ran. */
		proc->gone = true;
	} else if (start_time != proc->start_time) {
		/* A new process under an old PID: nothing of the old one carries over. */
		if (proc_fill(sym, proc, start_time) == -ENOMEM)
			return NULL;
		proc->used_drain = NEVER;
	} else {
		proc_refresh_perfmap(sym, proc);
	}
	if (start && start_time)
		proc->confirmed_drain = sym->drain;
	return proc;
}

/* Loads and holds the symbol table of mapping i of proc, once. */
static const struct elfsym *proc_elf(struct symbolizer *sym, struct proc *proc, size_t i);

int symbolizer_track(struct symbolizer *sym, uint32_t tgid)
{
	return symbolizer_track_started(sym, tgid, 0);
}

/*
 * With the start time from the caller, a new process costs one read of
 * its maps: no /proc/PID/stat, and no perf map unless it has anonymous
 * executable memory. The PID cannot have been reused since the sampler
 * saw it: that takes pid_max new processes, and the report is
 * milliseconds old.
 */
int symbolizer_track_started(struct symbolizer *sym, uint32_t tgid, uint64_t start_time)
{
	uint64_t start = start_ticks(sym, start_time);
	bool confirmed = start != 0;
	struct proc *proc = proc_find(sym, tgid);
	int err;

	if (!start)
		start = read_start_time(sym, tgid);
	if (!start) {
		if (proc)
			proc->gone = true;
		return -ESRCH;
	}
	if (proc && start < proc->start_time)
		return -ESRCH; /* a late report: the PID is a newer process's already */
	if (!proc) {
		proc = proc_create(sym, tgid, start, &err);
		if (!proc)
			return -ENOMEM;
	} else if (proc->start_time != start) {
		/* A new process under an old PID: nothing of the old one carries over. */
		err = proc_fill(sym, proc, start);
		if (err == -ENOMEM)
			return -ENOMEM;
		proc->used_drain = NEVER;
		proc->confirmed_drain = NEVER;
	} else {
		/* The same process, perhaps after an exec: its mappings now. */
		proc->seen_drain = sym->drain;
		proc->checked_drain = sym->drain;
		err = proc_read_maps(sym, proc, false);
		if (proc->perfmap)
			proc_refresh_perfmap(sym, proc);
		else if (err != -ENOENT && proc_open_perfmap(sym, proc))
			return -ENOMEM;
	}
	if (err == -ENOENT) {
		/* Exited before we could read it: nothing to keep. */
		proc->gone = true;
		if (!proc->maps)
			proc_unlink(sym, proc);
		return -ESRCH;
	}
	if (confirmed)
		proc->confirmed_drain = sym->drain;
	if (proc->maps)
		for (size_t i = 0; i < procmaps_count(proc->maps); i++)
			proc_elf(sym, proc, i);
	return 0;
}

/* Makes room for len more bytes in the per-call buffer: 0 or -ENOMEM. */
static int names_room(struct symbolizer *sym, size_t len)
{
	size_t cap = sym->names_cap ? sym->names_cap * 2 : 4096;
	char *names;

	if (sym->names_len + len <= sym->names_cap)
		return 0;
	while (cap < sym->names_len + len)
		cap *= 2;
	names = realloc(sym->names, cap);
	if (!names)
		return -ENOMEM;
	sym->names = names;
	sym->names_cap = cap;
	return 0;
}

/* Appends len bytes to the per-call buffer; returns their offset or SIZE_MAX. */
static size_t names_put(struct symbolizer *sym, const void *bytes, size_t len)
{
	size_t off = sym->names_len;

	if (names_room(sym, len) < 0)
		return SIZE_MAX;
	memcpy(sym->names + off, bytes, len);
	sym->names_len += len;
	return off;
}

/* Appends a formatted name to the per-call buffer; returns its offset or SIZE_MAX. */
static size_t names_add(struct symbolizer *sym, const char *fmt, ...)
{
	va_list ap;
	size_t off = sym->names_len;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (len < 0 || names_room(sym, (size_t)len + 1) < 0)
		return SIZE_MAX;
	va_start(ap, fmt);
	vsnprintf(sym->names + off, (size_t)len + 1, fmt, ap);
	va_end(ap);
	sym->names_len += (size_t)len + 1;
	return off;
}

/* Where out[] is filled: frames written, and the cap. */
struct stack_out {
	struct frame *frames;
	size_t nr, cap;
};

static void emit(struct symbolizer *sym, struct stack_out *out, enum frame_kind kind, size_t off)
{
	if (out->nr >= out->cap || off == SIZE_MAX)
		return;
	out->frames[out->nr].kind = kind;
	out->frames[out->nr].mapping = NULL;
	out->frames[out->nr].address = 0;
	sym->name_offs[out->nr] = off;
	out->nr++;
	if (kind == FRAME_PROCESS)
		return;
	sym->frames++;
	if (kind == FRAME_UNKNOWN)
		sym->unresolved++;
}

/*
 * Says where the frame emit() just wrote (if it did: nr is out->nr before
 * the call) has its code: at address, in mapping m of the process (NULL:
 * none), whose file's table elf (NULL: unread) gives the build-id.
 */
static void locate(struct symbolizer *sym, struct stack_out *out, size_t nr,
		   const struct procmaps_mapping *m, const struct elfsym *elf, uint64_t address)
{
	struct frame_mapping *fm = &sym->mappings[nr];
	const struct frame_mapping *prev = nr ? out->frames[nr - 1].mapping : NULL;
	struct mapping_offs *offs = &sym->map_offs[nr];
	const unsigned char *id = NULL;
	size_t id_len = 0;

	if (out->nr == nr)
		return;
	out->frames[nr].address = address;
	if (!m)
		return;
	if (elf)
		id = elfsym_build_id(elf, &id_len);
	/* Callers in the same file, the common case, share the copy. */
	if (prev && prev->start == m->start && prev->limit == m->end &&
	    !strcmp(sym->names + sym->map_offs[nr - 1].file, m->path)) {
		*offs = sym->map_offs[nr - 1];
		id_len = prev->build_id_len;
	} else {
		offs->file = names_add(sym, "%s", m->path);
		offs->build_id = id ? names_put(sym, id, id_len) : SIZE_MAX;
		if (offs->file == SIZE_MAX)
			return; /* no memory: the frame keeps its name, not its mapping */
		if (offs->build_id == SIZE_MAX)
			id_len = 0;
	}
	/* file and build_id are set when the buffer has stopped moving. */
	*fm = (struct frame_mapping){
		.start = m->start,
		.limit = m->end,
		.offset = m->pgoff,
		.build_id_len = id_len,
	};
	out->frames[nr].mapping = fm;
}

/*
 * A named frame, demangled unless raw_names, with "+0xoff" when the user
 * asked for addresses. Rust in the kernel mangles too, so kernel names
 * are demangled as well; JIT runtimes write perf maps demangled already.
 */
static void emit_symbol(struct symbolizer *sym, struct stack_out *out, enum frame_kind kind,
			const char *name, uint64_t offset)
{
	size_t off;

	if (sym->demangled && kind != FRAME_JIT)
		name = demangle_cache_get(sym->demangled, name);
	if (sym->addresses)
		off = names_add(sym, "%s+0x%" PRIx64, name, offset);
	else
		off = names_add(sym, "%s", name);
	emit(sym, out, kind, off);
}

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/*
 * Reads the symbol table of a mapping's file, opened through the gate
 * where the process sees it; -errno of the gate, or of elfsym. A
 * stripped file's debug file is looked for in the process's root, then
 * in ours, through the gate too.
 */
static int open_elf(struct symbolizer *sym, uint32_t tgid, const struct procmaps_mapping *m,
		    struct elfsym **elf)
{
	char root[4096];
	struct debuginfo_paths paths = {
		.debug_root = sym->debug_root, .root = root, .gate = sym->gate
	};
	struct elfsym_options options = {
		.debug = &paths, .bounds = sym->elf_bounds, .breaches = &sym->elf_breaches
	};
	struct target_file f;
	int err;

	snprintf(root, sizeof(root), "%s/%" PRIu32 "/root", sym->proc_root, tgid);
	if (m->path[0] == '/' && !m->deleted)
		paths.path = m->path;
	err = target_open_mapping(sym->gate, tgid, m, &f);
	if (err)
		return err;
	err = elfsym_open_fd_with(f.fd, &options, elf);
	target_file_close(&f);
	return err;
}

/* Errors that say nothing about the file: it is tried again at its next use. */
static bool transient(int err)
{
	enum target_cause cause = target_cause_of(err);

	return err == -ENOMEM || cause == TARGET_NO_FDS || cause == TARGET_STALLED;
}

static const struct elfsym *elf_for(struct symbolizer *sym, uint32_t tgid,
				    const struct procmaps_mapping *m)
{
	struct elfcache_key key = {
	    .dev_major = m->dev_major,
	    .dev_minor = m->dev_minor,
	    .inode = m->inode,
	    .path = m->path,
	    .deleted = m->deleted,
	};
	const struct elfsym *cached;
	struct elfsym *elf = NULL;
	int err;

	if (elfcache_get(sym->elfs, &key, &cached))
		return cached;
	err = open_elf(sym, tgid, m, &elf);
	if (err && transient(err))
		return NULL;
	if (err)
		elf = NULL;
	if (elfcache_put(sym->elfs, &key, elf))
		return NULL;
	return elf;
}

static const struct elfsym *proc_elf(struct symbolizer *sym, struct proc *proc, size_t i)
{
	const struct procmaps_mapping *m = procmaps_at(proc->maps, i);
	struct proc_elf *pe = &proc->elfs[i];

	if (pe->tried)
		return pe->elf;
	pe->tried = true;
	if (!m->path_len || procmaps_is_special(m))
		return NULL;
	pe->elf = elf_for(sym, proc->tgid, m);
	if (elfcache_hold(sym->elfs, pe->elf))
		pe->elf = NULL;
	return pe->elf;
}

/*
 * Our own vDSO, which is the one every process on this kernel maps (the
 * kernel has one image per ABI). Its size is where its section headers
 * or its last segment end, whichever is further.
 */
static const struct elfsym *vdso_elf(struct symbolizer *sym)
{
	const Elf64_Ehdr *eh;
	uint64_t size;

	if (sym->vdso_tried)
		return sym->vdso;
	sym->vdso_tried = true;
	eh = (const Elf64_Ehdr *)getauxval(AT_SYSINFO_EHDR);
	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64)
		return NULL;
	size = eh->e_shoff + (uint64_t)eh->e_shnum * eh->e_shentsize;
	for (unsigned int i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph =
		    (const Elf64_Phdr *)((const char *)eh + eh->e_phoff + i * eh->e_phentsize);

		if (ph->p_offset + ph->p_filesz > size)
			size = ph->p_offset + ph->p_filesz;
	}
	if (elfsym_open_mem(eh, size, &sym->vdso))
		sym->vdso = NULL;
	return sym->vdso;
}

/* Tries the JIT perf map; true when it named the address. */
static bool emit_jit(struct symbolizer *sym, struct stack_out *out, const struct proc *proc,
		     uint64_t addr, uint64_t adjust)
{
	const struct perfmap_symbol *jit;
	uint64_t offset;
	size_t nr = out->nr;

	if (!proc->perfmap)
		return false;
	jit = perfmap_lookup(proc->perfmap, addr, &offset);
	if (!jit)
		return false;
	emit_symbol(sym, out, FRAME_JIT, jit->name, offset + adjust);
	locate(sym, out, nr, NULL, NULL, sym->addresses ? addr + adjust : jit->start);
	return true;
}

/*
 * One user frame. addr is the address looked up (ip - 1 for callers),
 * adjust what was taken off, so "+0xoff" shows the address sampled.
 */
static void user_frame(struct symbolizer *sym, struct stack_out *out, struct proc *proc,
		       uint64_t addr, uint64_t adjust)
{
	const struct procmaps_mapping *m = NULL;
	const struct elfsym_symbol *s;
	const struct elfsym *elf;
	uint64_t file_offset, vaddr, offset;
	size_t index = 0, nr = out->nr;

	if (proc->maps)
		m = procmaps_find(proc->maps, addr, &index);
	if (!m && !proc->gone && proc->maps_drain != sym->drain) {
		/* Verified: the record may be drains old, and its PID another's by now. */
		if (proc_read_maps(sym, proc, true) == -ENOENT)
			proc->gone = true;
		/* It may have started to JIT code since we last looked. */
		proc_open_perfmap(sym, proc);
		if (proc->maps)
			m = procmaps_find(proc->maps, addr, &index);
	}
	if (!m) {
		if (!emit_jit(sym, out, proc, addr, adjust))
			emit(sym, out, FRAME_UNKNOWN, names_add(sym, UNKNOWN_NAME));
		return;
	}
	file_offset = addr - m->start + m->pgoff;
	if (!strcmp(m->path, "[vdso]"))
		elf = vdso_elf(sym);
	else
		elf = proc_elf(sym, proc, index);
	if (elf && !elfsym_offset_to_vaddr(elf, file_offset, &vaddr)) {
		s = elfsym_lookup(elf, vaddr, &offset);
		if (s) {
			emit_symbol(sym, out, FRAME_USER, s->name, offset + adjust);
			locate(sym, out, nr, m, elf, sym->addresses ? addr + adjust : addr - offset);
			return;
		}
	}
	if (emit_jit(sym, out, proc, addr, adjust))
		return;
	if (!m->path_len)
		/* JIT code the runtime has not (yet) written to its perf map, or none. */
		emit(sym, out, FRAME_UNKNOWN,
		     names_add(sym, proc->perfmap && perfmap_count(proc->perfmap) ? "[jit]"
										    : "[anon]"));
	else if (procmaps_is_special(m))
		emit(sym, out, FRAME_UNKNOWN, names_add(sym, "%s", m->path));
	else {
		/* Not named here, but a tool with the file's debug info can:
		 * the mapping and build-id say which file, the address where. */
		emit(sym, out, FRAME_UNKNOWN,
		     names_add(sym, "[%s+0x%" PRIx64 "]", basename_of(m->path),
			       file_offset + adjust));
		locate(sym, out, nr, m, elf, addr + adjust);
	}
}

static void kernel_frame(struct symbolizer *sym, struct stack_out *out, uint64_t addr,
			 uint64_t adjust)
{
	const struct ksym *k = NULL;
	uint64_t offset;
	size_t nr = out->nr;

	if (sym->ksyms)
		k = ksyms_lookup(sym->ksyms, addr, &offset);
	if (k) {
		emit_symbol(sym, out, FRAME_KERNEL, k->name, offset + adjust);
		locate(sym, out, nr, NULL, NULL, sym->addresses ? addr + adjust : k->addr);
	} else
		emit(sym, out, FRAME_UNKNOWN, names_add(sym, UNKNOWN_NAME));
}

/*
 * The kernel's comm is cut at 15 bytes, possibly inside a UTF-8 sequence;
 * returns the length without an incomplete sequence at the end.
 */
static size_t comm_length(const char *comm)
{
	size_t len = strnlen(comm, 255), lead = len, need;
	unsigned char c;

	/* Step back over continuation bytes (10xxxxxx) to the sequence's lead byte. */
	while (lead > 0 && len - lead < 3 && ((unsigned char)comm[lead - 1] & 0xc0) == 0x80)
		lead--;
	if (lead == 0)
		return len;
	c = (unsigned char)comm[lead - 1];
	if (c < 0xc0)
		return len; /* ASCII, or stray continuation bytes: not ours to judge */
	need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
	return len - (lead - 1) < need ? lead - 1 : len;
}

size_t symbolizer_stack(struct symbolizer *sym, uint32_t tgid, const char *comm,
			const uint64_t *uips, size_t n_uips, const uint64_t *kips, size_t n_kips,
			struct frame *out, size_t cap)
{
	return symbolizer_stack_started(sym, tgid, 0, comm, uips, n_uips, kips, n_kips, out, cap);
}

size_t symbolizer_stack_started(struct symbolizer *sym, uint32_t tgid, uint64_t start_time,
				const char *comm, const uint64_t *uips, size_t n_uips,
				const uint64_t *kips, size_t n_kips, struct frame *out, size_t cap)
{
	struct stack_out stack = {.frames = out, .cap = cap};
	size_t comm_len = comm ? comm_length(comm) : 0;

	sym->names_len = 0;
	if (cap > sym->name_offs_cap) {
		size_t *offs = realloc(sym->name_offs, cap * sizeof(*offs));
		struct frame_mapping *maps;
		struct mapping_offs *map_offs;

		if (!offs)
			return 0;
		sym->name_offs = offs;
		maps = realloc(sym->mappings, cap * sizeof(*maps));
		if (!maps)
			return 0;
		sym->mappings = maps;
		map_offs = realloc(sym->map_offs, cap * sizeof(*map_offs));
		if (!map_offs)
			return 0;
		sym->map_offs = map_offs;
		sym->name_offs_cap = cap;
	}
	if (comm_len)
		emit(sym, &stack, FRAME_PROCESS, names_add(sym, "%.*s", (int)comm_len, comm));
	else
		emit(sym, &stack, FRAME_PROCESS, names_add(sym, UNKNOWN_NAME));

	if (n_uips) {
		struct proc *proc = proc_get(sym, tgid, start_ticks(sym, start_time));

		if (proc)
			proc->used_drain = sym->drain;
		for (size_t i = n_uips; i-- > 0;) {
			uint64_t adjust = i > 0 && uips[i] ? 1 : 0;

			if (proc)
				user_frame(sym, &stack, proc, uips[i] - adjust, adjust);
			else
				emit(sym, &stack, FRAME_UNKNOWN, names_add(sym, UNKNOWN_NAME));
		}
	}
	if (n_kips && sym->ksyms && ksyms_hidden(sym->ksyms)) {
		size_t before = stack.nr;

		emit(sym, &stack, FRAME_KERNEL, names_add(sym, "[kernel]"));
		if (stack.nr > before)
			sym->unresolved++;
	} else {
		for (size_t i = n_kips; i-- > 0;) {
			uint64_t adjust = i > 0 && kips[i] ? 1 : 0;

			kernel_frame(sym, &stack, kips[i] - adjust, adjust);
		}
	}
	/* The buffer has stopped moving: point the frames into it. */
	for (size_t i = 0; i < stack.nr; i++) {
		struct frame_mapping *fm = &sym->mappings[i];

		out[i].name = sym->names + sym->name_offs[i];
		if (!out[i].mapping)
			continue;
		fm->file = sym->names + sym->map_offs[i].file;
		fm->build_id = fm->build_id_len ?
			(const unsigned char *)sym->names + sym->map_offs[i].build_id : NULL;
	}
	return stack.nr;
}

void symbolizer_end_drain(struct symbolizer *sym)
{
	for (size_t i = 0; i < PROC_BUCKETS; i++) {
		struct proc *proc = sym->procs[i], *next;

		for (; proc; proc = next) {
			uint64_t start_time;

			next = proc->next;
			/*
			 * Its own samples or report in this drain said it ran, and
			 * it is kept for one drain more whatever /proc says now:
			 * check it at the first drain without them.
			 */
			if (proc->confirmed_drain == sym->drain)
				continue;
			start_time = read_start_time(sym, proc->tgid);
			if (start_time && start_time != proc->start_time) {
				/* Its PID is another process's now, which must not get its symbols.
				 */
				proc_unlink(sym, proc);
				continue;
			}
			proc->gone = !start_time;
			/*
			 * An exited process's samples can straddle a drain: some
			 * in the drain that saw it, the rest in the next one. So
			 * keep its record until a whole drain has passed without
			 * using it (or since it was tracked), then let it go.
			 */
			if (proc->gone && proc->used_drain != sym->drain &&
			    proc->seen_drain != sym->drain)
				proc_unlink(sym, proc);
		}
	}
	proc_trim_bytes(sym);
	elfcache_trim(sym->elfs);
	sym->drain++;
}

void symbolizer_stats(const struct symbolizer *sym, struct symbolizer_stats *stats)
{
	struct elfcache_stats cache;

	uint64_t exited = 0;

	for (size_t i = 0; i < PROC_BUCKETS; i++)
		for (const struct proc *proc = sym->procs[i]; proc; proc = proc->next)
			exited += proc->gone;
	elfcache_stats(sym->elfs, &cache);
	*stats = (struct symbolizer_stats){
	    .frames = sym->frames,
	    .unresolved = sym->unresolved,
	    .elf_cache_hits = cache.hits,
	    .elf_cache_misses = cache.misses,
	    .elf_cached = cache.cached,
	    .processes = sym->nr_procs,
	    .kernel_hidden = sym->ksyms && ksyms_hidden(sym->ksyms),
	    .exited = exited,
	    .evicted = sym->evicted,
	    .elf_held = cache.held,
	    .perfmaps_refused = sym->perfmaps_refused,
	    .perfmaps_opened = sym->perfmaps_opened,
	    .elf_breaches = sym->elf_breaches,
	    .perfmap_lines_too_long = sym->perfmap_lines_too_long,
	    .perfmaps_truncated = sym->perfmaps_truncated,
	    .elf_bytes = cache.bytes,
	    .elf_held_bytes = cache.held_bytes,
	    .process_bytes = sym->proc_bytes,
	    .perfmap_bytes = sym->perfmap_bytes,
	    .names_bytes = (sym->demangled ? demangle_cache_bytes(sym->demangled) : 0) +
			   sym->names_cap +
			   sym->name_offs_cap * (sizeof(*sym->name_offs) + sizeof(*sym->mappings) +
						 sizeof(*sym->map_offs)),
	    .evicted_over_bytes = sym->evicted_over_bytes,
	};
	target_stats(sym->gate, stats->refused);
}

uint64_t symbolizer_progress(const struct symbolizer *sym)
{
	return target_progress(sym->gate);
}
