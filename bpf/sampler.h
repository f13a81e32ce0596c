/*
 * sampler: the user-space half of the BPF sampler.
 *
 * It loads the embedded BPF program (a libbpf skeleton), attaches it to a
 * CPU-clock perf event on every online CPU, and drains the maps on request.
 * Each drain hands every distinct (process, thread, kernel stack, user
 * stack) with its count to a callback, as raw instruction pointers; turning
 * them into names is the symbolizer's job. The sampler holds no global
 * state, so a process may run several.
 *
 * On request it also reports each process the moment it is first sampled
 * (sampler_poll_processes), so that the caller can snapshot a short-lived
 * process's mappings before it exits, rather than at the drain.
 */
#ifndef EBPROF_BPF_SAMPLER_H
#define EBPROF_BPF_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/kfeat.h"

#define SAMPLER_DEFAULT_FREQUENCY 99
#define SAMPLER_MAX_FREQUENCY 100000
#define SAMPLER_COMM_LEN 16

struct sampler;

struct sampler_config {
	unsigned int frequency; /* Hz; 0 means SAMPLER_DEFAULT_FREQUENCY */
	const uint32_t *tgids;	/* profile only these processes; NULL: all */
	size_t n_tgids;
	const char *const *comms; /* or these process names (first 15 chars) */
	size_t n_comms;
	bool kernel_stacks;
	bool user_stacks;
	bool include_idle; /* sample the idle task (pid 0) too */
	bool include_self; /* sample the process that runs the sampler */
	uint32_t max_stacks; /* entries per stacks map; 0: default */
	uint32_t max_keys;   /* entries per counts map; 0: default */
	uint32_t drain_chunk; /* entries read per batch call; 0: default (4096) */
	/*
	 * Report new processes to sampler_poll_processes(). The caller must
	 * then poll: reports that find the ring buffer full are retried at
	 * the process's next sample and counted in process_events_lost.
	 */
	bool report_processes;
	/*
	 * The kernel's features, from kfeat_probe() (not owned); NULL: the
	 * sampler probes them itself. Without KFEAT_NOPREALLOC its maps are
	 * preallocated.
	 */
	const struct kfeat *features;
};

/*
 * Fills *config with the defaults: 99 Hz, both stacks, no idle, no self,
 * no process reports.
 */
void sampler_config_init(struct sampler_config *config);

/*
 * One distinct stack pair and how often it was sampled since the last
 * drain. kips and uips point into the sampler: valid only during the
 * callback that receives them.
 */
struct sampler_sample {
	uint32_t tgid; /* 0: the idle task */
	/*
	 * When the process started, in ns after boot (CLOCK_BOOTTIME, the
	 * kernel's start_boottime; /proc/PID/stat's field 22 is this in clock
	 * ticks): two processes that held one PID in one drain come as two
	 * samples.
	 */
	uint64_t start_time;
	char comm[SAMPLER_COMM_LEN]; /* process name, NUL-terminated */
	const uint64_t *kips;	     /* kernel stack, leaf first */
	uint32_t n_kips;
	const uint64_t *uips; /* user stack, leaf first */
	uint32_t n_uips;
	uint64_t count;
};

/*
 * Counters. In a drain's result they cover that drain's window; from
 * sampler_totals() they cover the whole run. Only the error and full
 * counters are losses.
 */
struct sampler_stats {
	uint64_t samples;	   /* the program ran */
	uint64_t recorded;	   /* counted into a stack pair */
	uint64_t filtered;	   /* outside the PID or process filter */
	uint64_t idle;		   /* idle task, excluded */
	uint64_t kstack_errors;	   /* lost: kernel stack could not be read */
	uint64_t ustack_errors;	   /* lost: user stack could not be read */
	uint64_t stack_collisions; /* lost: two stacks shared one hash */
	uint64_t stacks_full;	   /* lost: stacks map full */
	uint64_t counts_full;	   /* lost: counts map full */
	uint64_t missing_stacks;   /* lost: samples whose stack was not found */
	uint64_t unique_stacks;	   /* distinct stack pairs handed out */
	uint64_t drains;
	/* Not samples: new processes reported, and reports the ring buffer
	 * had no room for (each retried at the process's next sample). */
	uint64_t process_events;
	uint64_t process_events_lost;
};

/* Sum of every counter that is a lost sample (process_events_lost is not). */
uint64_t sampler_stats_lost(const struct sampler_stats *stats);

/* Return 0 to go on; a non-zero value stops the drain and is returned. */
typedef int (*sampler_sample_fn)(const struct sampler_sample *sample, void *ctx);

/*
 * Loads, configures and attaches the program. Returns 0 and sets *out, or
 * a negative errno and writes into err a sentence that says what to fix
 * (capabilities, perf_event_paranoid, BTF, kernel version).
 * config may be NULL for the defaults. The caller owns *out and frees it
 * with sampler_free(). It installs a libbpf print callback (libbpf_set_print()
 * is process-wide) that keeps only libbpf's warnings, on stderr; a caller
 * that wants its own sets it after this call.
 */
int sampler_open(const struct sampler_config *config, struct sampler **out, char *err,
		 size_t errlen);

/*
 * Swaps in empty maps, then hands every sample of the old ones to fn (may
 * be NULL: discard) and clears them. No increment that races the drain is
 * lost. Fills *delta (may be NULL) with this window's counters. Returns 0,
 * a negative errno, or fn's non-zero return; when fn stops the drain, the
 * rest of the window is dropped. Waits for two kernel RCU grace periods
 * (15-100 ms measured); call it from one thread at a time.
 */
int sampler_drain(struct sampler *s, sampler_sample_fn fn, void *ctx,
		  struct sampler_stats *delta);

/*
 * Replaces the PID filter while sampling: processes not in tgids stop
 * being sampled at once, new ones start. Only for a sampler opened with a
 * PID filter (else -EINVAL); returns 0 or a negative errno (-E2BIG: more
 * PIDs than the filter map holds, max(initial n_tgids, 1024)).
 */
int sampler_set_tgids(struct sampler *s, const uint32_t *tgids, size_t n_tgids);

/* A process sampled for the first time (or for the first time since an exec). */
struct sampler_process {
	uint32_t tgid;
	uint64_t start_time; /* as in struct sampler_sample */
	uint64_t sampled_at; /* its first sample, ns after boot (CLOCK_BOOTTIME) */
	char comm[SAMPLER_COMM_LEN];
};

/* Return 0 to go on; a negative errno stops the poll and is returned. */
typedef int (*sampler_process_fn)(const struct sampler_process *process, void *ctx);

/*
 * Hands fn every process reported since the last call, waiting up to
 * timeout_ms (0: not at all; -1: until one comes) for the first. Each
 * process is reported once, at its first sample, then again after an exec
 * or when its PID is taken by a new process. Returns the number handed
 * out, -EINTR when a signal cut the wait short, fn's negative return, or
 * -EINVAL for a sampler opened without report_processes.
 *
 * It touches nothing sampler_drain() does: one thread may poll while
 * another drains. Two threads must not poll at once.
 */
int sampler_poll_processes(struct sampler *s, sampler_process_fn fn, void *ctx, int timeout_ms);

/*
 * A file descriptor that polls readable (epoll, poll) when reports wait,
 * for callers with an event loop of their own; -EINVAL without
 * report_processes. The sampler owns it.
 */
int sampler_process_fd(const struct sampler *s);

/*
 * A thread of the sampler's own that calls sampler_poll_processes() in a
 * loop, so that processes are handed out even while the caller's thread
 * waits in sampler_drain() (its RCU waits take up to ~100 ms, in which a
 * short-lived process can start and exit). fn runs on that thread: the
 * caller locks whatever fn shares with its other threads.
 */
struct sampler_watch;

/*
 * Starts the thread. Returns 0 and sets *out (the caller stops it with
 * sampler_watch_stop() before sampler_free()), or a negative errno
 * (-EINVAL without report_processes).
 */
int sampler_watch_start(struct sampler *s, sampler_process_fn fn, void *ctx,
			struct sampler_watch **out);

/* Wakes the thread, waits for it to end and frees it; NULL is fine. */
void sampler_watch_stop(struct sampler_watch *w);

/* The counters since sampler_open(). */
void sampler_totals(const struct sampler *s, struct sampler_stats *total);

/* CPUs the event is attached to. */
int sampler_cpu_count(const struct sampler *s);

/* Detaches and frees; NULL is fine. */
void sampler_free(struct sampler *s);

#endif
