/*
 * proctab: the symbolizer's process records. One record per process
 * sampled or reported: its executable mappings, the symbol table of each
 * mapped file (held in the ELF cache, so it outlives the process), its
 * JIT perf map, and its start time (field 22 of /proc/PID/stat), which
 * tells a reused PID from the process we read before. A record is made
 * when the sampler first reports the process (proctab_track, early, while
 * /proc still shows it) or at its first sample. Records are checked once
 * per drain, maps are read again at most once per drain when an address
 * falls outside every mapping (the process mmapped something new), and
 * records of exited processes are dropped only at the end of a drain
 * that used them (or the one after they were tracked), so the samples
 * they left still resolve.
 *
 * This is one half of the symbolizer (symbolizer.c is the other: frames
 * named from these records); nothing outside symbolizer/ uses it.
 */
#ifndef EBPROF_SYMBOLIZER_PROCTAB_H
#define EBPROF_SYMBOLIZER_PROCTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct elfcache;
struct elfsym;
struct perfmap;
struct procmaps;
struct target;

#define NEVER UINT64_MAX

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
	bool maps_tracked;	 /* maps were read by the last proctab_track() of it */
	uint64_t seen_drain;	 /* drain in which it was made or last tracked */
	uint64_t used_drain;	 /* last drain whose samples it resolved; NEVER */
	uint64_t confirmed_drain; /* last drain whose caller gave its start time; NEVER */
	struct proc *next;
};

struct proctab_config {
	const char *proc_root;	 /* copied */
	const char *perfmap_dir; /* copied */
	struct target *gate;	 /* borrowed: every open of a process's file */
	struct elfcache *elfs;	 /* borrowed: records hold their tables there */
	uint64_t perfmap_max_bytes;
	size_t max_processes; /* 0: 4096 */
	uint64_t max_bytes;   /* the records with their maps and perf maps, enforced
			       * at the end of each drain; 0: no bound */
	bool maps_text_only;
};

/* NULL without memory. Free with proctab_free(), which frees every record. */
struct proctab *proctab_new(const struct proctab_config *config);
void proctab_free(struct proctab *t);

/* The drain now (counted by proctab_end_drain()), for the records' *_drain fields. */
uint64_t proctab_drain(const struct proctab *t);

/* A caller's start time (ns after boot, CLOCK_BOOTTIME) in /proc/PID/stat's ticks; 0: unknown. */
uint64_t proctab_ticks(const struct proctab *t, uint64_t start_ns);

/*
 * The record for tgid, created or checked for PID reuse. start: the
 * sample's start time in ticks, 0 when unknown. A sample whose start
 * time is the record's needs nothing from /proc. NULL without memory, or
 * when the sample's process is gone and nothing read belongs to it. The
 * record stays the table's.
 */
struct proc *proctab_get(struct proctab *t, uint32_t tgid, uint64_t start);

/*
 * symbolizer_track()'s record: made or read again now, *out set to it.
 * start_time in ns as proctab_ticks() takes it (0: read it from /proc).
 * given: its maps, read for the same report just now (NULL: read them
 * here), which t takes, on error too. Returns 0, -ESRCH (gone, or a
 * report older than the record) or -ENOMEM.
 */
int proctab_track(struct proctab *t, uint32_t tgid, uint64_t start_time, struct procmaps *given,
		  struct proc **out);

/*
 * proctab_track() of a process whose maps file the caller found gone just
 * now, for the same report: the record is made or kept as proctab_track()
 * keeps a process gone before its read, and its maps are not read again
 * (nor anything else of /proc, given its start time). Returns -ESRCH, or
 * -ENOMEM.
 */
int proctab_track_gone(struct proctab *t, uint32_t tgid, uint64_t start_time);

/*
 * Reads proc's maps again, verified to be still its process's (else it
 * is marked gone), and opens its perf map if it now has anonymous
 * executable memory. 0 or -ENOMEM.
 */
int proctab_reread(struct proctab *t, struct proc *proc);

/* The records' end of a drain: see symbolizer_end_drain(). It also
 * drops records of least use while they hold more than max_bytes. */
void proctab_end_drain(struct proctab *t);

struct proctab_stats {
	uint64_t processes, exited, evicted;
	uint64_t process_bytes, perfmap_bytes; /* as of the last end of a drain */
	uint64_t evicted_over_bytes;	       /* records dropped at max_bytes, ever */
	uint64_t perfmaps_refused, perfmaps_opened, perfmap_lines_too_long, perfmaps_truncated;
	/* Ends of drains, ever: idle records checked, and /proc/PID/stat reads for it. */
	uint64_t end_checks, end_stat_reads;
};

void proctab_stats(const struct proctab *t, struct proctab_stats *stats);

#endif
