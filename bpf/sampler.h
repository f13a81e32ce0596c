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
 *
 * User stacks are walked by frame pointer (the kernel's walk), or by unwind
 * tables the caller loads through sampler_unwmaps() (symbolizer/unwinder).
 * With tables, a sample of a process whose tables are not loaded yet comes
 * to user space as a copy (registers and the top of its stack); the
 * caller's copy handler unwinds it, and the next drain hands it out with
 * the others (off-CPU: the samples of the wait the copied stack began).
 */
#ifndef EBPROF_BPF_SAMPLER_H
#define EBPROF_BPF_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <linux/types.h>

#include "bpf/ebprof.h"
#include "bpf/kfeat.h"

#define SAMPLER_DEFAULT_FREQUENCY 99
#define SAMPLER_MAX_FREQUENCY 100000
#define SAMPLER_COMM_LEN 16

struct sampler;
struct unwmaps;

/*
 * What is sampled: on-CPU stacks (a CPU-clock tick), off-CPU stacks (the
 * scheduler's switch: where tasks wait, and how long), or both.
 */
enum sampler_mode {
	SAMPLER_MODE_CPU,
	SAMPLER_MODE_OFFCPU,
	SAMPLER_MODE_WALL, /* both: on-CPU plus off-CPU time is each thread's wall time */
};

#define SAMPLER_DEFAULT_OFFCPU_PERIOD_NS 1000000ULL /* 1 ms of off-CPU time a sample */
#define SAMPLER_MIN_OFFCPU_PERIOD_NS 1000ULL
#define SAMPLER_MAX_OFFCPU_PERIOD_NS 10000000000ULL
#define SAMPLER_DEFAULT_OFFCPU_RATE 5000 /* off-CPU sample updates a second per CPU */

enum sampler_unwind {
	SAMPLER_UNWIND_AUTO, /* tables if this kernel can run the unwinder, else frame pointers */
	SAMPLER_UNWIND_FP,   /* the kernel's frame-pointer walk (bpf_get_stack), 127 frames */
	SAMPLER_UNWIND_TABLES, /* tables, frame pointers where a file has none; refused
				* where the kernel cannot run it */
};

struct sampler_config {
	unsigned int frequency; /* Hz; 0 means SAMPLER_DEFAULT_FREQUENCY */
	const uint32_t *tgids;	/* profile only these processes; NULL: all */
	size_t n_tgids;
	/*
	 * The PID filter never changes while sampling (sampler_set_tgids()
	 * then refuses): up to EBPROF_FAST_TGIDS PIDs become constants of the
	 * program, the cheapest rejection of other processes' ticks.
	 */
	bool tgids_fixed;
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
	 * Load and hook everything but attach no sampling event (the perf
	 * events, the off-CPU switch) until sampler_start(), so that the
	 * caller can prepare the processes it knows it will sample
	 * (sampler_targets()) before their first sample.
	 */
	bool start_later;
	enum sampler_unwind unwind;
	uint32_t max_frames;	  /* user frames with tables, 1 to 4096; 0: 1024 */
	uint32_t max_mappings;	  /* executable mappings of all processes; 0: 32768 */
	uint32_t max_tables;	  /* unwind tables (files) loaded at once; 0: 8192 */
	uint32_t max_rules;	  /* distinct unwind rules; 0: 16384 */
	/*
	 * Tests only: every oracle_every-th sample walked by tables whole is
	 * also copied out with its frames, to sampler_set_oracle_handler()'s
	 * handler (tests/oracle/unwind_libdw.c checks them with elfutils).
	 */
	uint32_t oracle_every;
	/*
	 * The kernel's features, from kfeat_probe() (not owned); NULL: the
	 * sampler probes them itself. Without KFEAT_NOPREALLOC its maps are
	 * preallocated.
	 */
	const struct kfeat *features;
	/*
	 * Off-CPU (modes offcpu and wall). A task's off-CPU time is sampled
	 * at random points (exponential gaps) of mean offcpu_period_ns, each
	 * sample worth that much time; waits shorter than offcpu_min_ns are
	 * not counted; at most offcpu_max_rate sample updates (one per wait
	 * that holds samples) a second per CPU, the rest counted in
	 * offcpu_throttled. 0: the defaults above.
	 */
	enum sampler_mode mode;
	uint64_t offcpu_period_ns;
	uint64_t offcpu_min_ns;
	uint32_t offcpu_max_rate;
	/*
	 * Walk CPython frames (with tables only) of the processes loaded
	 * with sampler_python_set(); see bpf/python.bpf.h.
	 */
	bool python;
};

/*
 * Fills *config with the defaults: 99 Hz, both stacks, no idle, no self,
 * no process reports, unwind auto, Python frames.
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
	/*
	 * EBPROF_OFFCPU_NONE (0): count CPU-clock ticks. Else the state the
	 * task waited in (EBPROF_OFFCPU_RUNNABLE, _SLEEP, _IO), the kernel
	 * stack is where it blocked, and each of count samples stands for
	 * sampler_offcpu_period_ns() of off-CPU time.
	 */
	uint32_t offcpu;
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
	uint64_t process_in_exec; /* reports put off: sampled in an exec (not lost) */
	/*
	 * The table unwinder. copied: samples sent to user space with a copy
	 * of their stack (not in recorded: samples = recorded + copied +
	 * filtered + idle + losses); copies_recorded: those handed out since,
	 * unwound in user space. The unw_* counters are stacks recorded
	 * truncated, by why the walk stopped early (in the kernel or, for
	 * copies, in user space); fp_frames counts frames walked by frame
	 * pointer (files without a table), not a stop.
	 */
	uint64_t copied;
	uint64_t copies_recorded;
	uint64_t unw_no_table;
	uint64_t unw_no_row;
	uint64_t unw_unsupported;
	uint64_t unw_read_fault;
	uint64_t unw_depth_cap;
	uint64_t unw_fp_frames;
	/*
	 * Off-CPU. offcpu_samples (samples due, each worth one period) are
	 * also in samples, offcpu_recorded in recorded; offcpu_throttled
	 * is a loss (the per-CPU cap), and the stack and map losses above
	 * count off-CPU samples too. offcpu_switches: context switches seen;
	 * offcpu_short: waits under the minimum (by choice); offcpu_untimed:
	 * waits that found no task storage, or whose end went unseen with no
	 * stamp to time it by (a loss of unknown length);
	 * offcpu_walks: user stacks walked because a task left from a place
	 * it had not just left from (the rest reuse a kept walk);
	 * offcpu_unseen: waits whose end the switch program did not see,
	 * timed when the task next left by the scheduler's stamp of its last
	 * switch-in (without that stamp, they are in offcpu_untimed).
	 */
	uint64_t offcpu_switches;
	uint64_t offcpu_samples;
	uint64_t offcpu_recorded;
	uint64_t offcpu_throttled;
	uint64_t offcpu_short;
	uint64_t offcpu_untimed;
	uint64_t offcpu_walks;
	uint64_t offcpu_unseen;
	/*
	 * Python: frames emitted (not samples), and walks of a thread's
	 * Python frames cut short by a failed read (the native frames go
	 * on: a truncation, not a loss).
	 */
	uint64_t py_frames;
	uint64_t py_faults;
	/*
	 * CPU-clock ticks that fell due on a CPU and never ran the program
	 * (bpf/tickgrid.h): their time is in no sample. Not samples, so in
	 * no term of the accounting above; measured only with per-CPU
	 * events (sampler_ticks_measured()).
	 */
	uint64_t ticks_missed;
	/*
	 * Per-CPU events closed because their CPU went offline (the kernel
	 * detaches them for good), and opened on a CPU that came online after
	 * the start (bpf/cpuevents.h). A CPU's time away is in neither the
	 * samples nor ticks_missed.
	 */
	uint64_t cpus_detached;
	uint64_t cpus_reopened;
	/*
	 * Of the samples handed out, those a CPU counted in its pending
	 * slots (struct ebprof_pending), without a hash map lookup.
	 */
	uint64_t slot_counted;
};

/* Every early stop of the table unwinder (a truncated stack), summed. */
uint64_t sampler_stats_truncated(const struct sampler_stats *stats);

/*
 * Samples in the profile: those the program counted and the copies user
 * space unwound since. With the sampler stopped and drained, samples =
 * this + filtered + idle + sampler_stats_lost(), exactly.
 */
uint64_t sampler_stats_recorded(const struct sampler_stats *stats);

/* Sum of every counter that is a lost sample (process_events_lost, copied and unw_* are not). */
uint64_t sampler_stats_lost(const struct sampler_stats *stats);

/* Return 0 to go on; a non-zero value stops the drain and is returned. */
typedef int (*sampler_sample_fn)(const struct sampler_sample *sample, void *ctx);

/*
 * Loads, configures and attaches the program (but its sampling events with
 * start_later: see sampler_start()). Returns 0 and sets *out, or
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
 * Attaches the sampling events of a sampler opened with start_later;
 * 0 at once when they are attached already. Returns 0 or a negative
 * errno, with err as sampler_open() writes it.
 */
int sampler_start(struct sampler *s, char *err, size_t errlen);

/*
 * Swaps in empty maps, then hands every sample of the old ones to fn (may
 * be NULL: discard) and clears them. No increment that races the drain is
 * lost. Fills *delta (may be NULL) with this window's counters. Returns 0,
 * a negative errno, or fn's non-zero return; when fn stops the drain, the
 * rest of the window is dropped. Waits for one kernel RCU grace period
 * (an expedited one on 6.18, 40-270 us measured; 6.1's are longer); call
 * it from one thread at a time.
 */
int sampler_drain(struct sampler *s, sampler_sample_fn fn, void *ctx,
		  struct sampler_stats *delta);

/*
 * Replaces the PID filter while sampling: processes not in tgids stop
 * being sampled at once, new ones start. Only for a sampler opened with a
 * PID filter that is not tgids_fixed (else -EINVAL); returns 0 or a negative errno (-E2BIG: more
 * PIDs than the filter map holds, max(initial n_tgids, 1024)).
 */
int sampler_set_tgids(struct sampler *s, const uint32_t *tgids, size_t n_tgids);

/* A process sampled for the first time (or for the first time since an exec). */
struct sampler_process {
	uint32_t tgid;
	uint64_t start_time; /* as in struct sampler_sample */
	uint64_t sampled_at; /* its first sample, ns after boot (CLOCK_BOOTTIME) */
	/*
	 * A fork of this process (tgid and start time) that had not exec'd at
	 * its report: its mappings began as a copy of the parent's, same
	 * executable. 0: not one, or not known (a kernel whose BTF lacks what
	 * tells, a copy's re-report, sampler_targets()).
	 */
	uint32_t parent_tgid;
	uint64_t parent_start_time;
	char comm[SAMPLER_COMM_LEN];
};

/* Return 0 to go on; a negative errno stops the poll and is returned. */
typedef int (*sampler_process_fn)(const struct sampler_process *process, void *ctx);

/*
 * Hands fn each running process that the PID or name filter wants (its
 * tgid and the start time its samples will carry; sampled_at and comm are
 * not set), from the kernel's list of tasks: for a sampler opened with
 * start_later and a filter, before sampler_start(). Returns how many fn
 * took, fn's negative return, -EOPNOTSUPP when the sampler cannot list
 * them (no filter, not start_later, or a kernel without the task
 * iterator), or another negative errno.
 */
int sampler_targets(struct sampler *s, sampler_process_fn fn, void *ctx);

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
 * Called on the watch thread after each round of reports, and when the
 * time it gave last has passed: returns how long the thread may wait for
 * the next report before calling it again, in ms, or -1 for as long as
 * it takes. For work fn puts off, to do it in batches.
 */
typedef int (*sampler_idle_fn)(void *ctx);

/*
 * Starts the thread; idle may be NULL. Returns 0 and sets *out (the
 * caller stops it with sampler_watch_stop() before sampler_free()), or a
 * negative errno (-EINVAL without report_processes).
 */
int sampler_watch_start(struct sampler *s, sampler_process_fn fn, sampler_idle_fn idle, void *ctx,
			struct sampler_watch **out);

/*
 * Has the thread read what the ring buffer holds now, and waits for it at
 * most timeout_ms. A sample's copy does not wake the thread (the program
 * leaves it for the next report's wake-up, unless the ring is filling):
 * call this before sampler_drain() so that the drain hands out every copy
 * made before it. Returns 0, or -ETIMEDOUT when the thread is still busy
 * (what it has not read yet goes to a later drain). NULL is fine.
 */
int sampler_watch_flush(struct sampler_watch *w, unsigned int timeout_ms);

/* Wakes the thread, waits for it to end and frees it; NULL is fine. */
void sampler_watch_stop(struct sampler_watch *w);

/* The counters since sampler_open(). */
void sampler_totals(const struct sampler *s, struct sampler_stats *total);

/*
 * Now on the sampler's clock (the program's bpf_ktime_get_boot_ns(), and
 * the kernel's start times of processes): ns after boot, CLOCK_BOOTTIME.
 */
static inline uint64_t sampler_boot_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * A sample of a process whose tables were not loaded, as the program
 * copied it: regs at the interrupted frame, stack_len bytes of its user
 * stack from regs->r[7] (rsp) up. Valid during the handler's call only.
 */
struct sampler_copy {
	uint32_t tgid;
	uint64_t start_time;
	const char *comm; /* NUL-terminated */
	uint64_t sampled_at; /* its stack's time, ns after boot (CLOCK_BOOTTIME); 0: not known */
	const struct ebprof_regs *regs;
	const uint8_t *stack;
	uint32_t stack_len;
};

/*
 * Unwinds a copy into ips (leaf first, at most cap) and returns the
 * number of frames; *stop gets why it ended (enum unw_result of
 * bpf/unwind.h: UNW_END, or an early stop). Runs on the thread that polls
 * the reports, after the process's own report. A handler that meets a pc
 * in none of the process's known mappings (it mapped something since its
 * report: at its first sample the dynamic loader may not have mapped libc
 * yet) may set *stale and stop: the sampler then reports the process again
 * to the poll's callback, so that the caller reads its mappings anew, and
 * calls the handler once more with *stale already true. (The unwinder
 * does so only when sampled_at is after its last read of the maps.)
 */
typedef uint32_t (*sampler_copy_fn)(const struct sampler_copy *copy, uint64_t *ips, uint32_t cap,
				    int *stop, bool *stale, void *ctx);

/*
 * Sets the copy handler. Without one, copies are handed out with their
 * first frame only, counted as no table. Call before the first poll.
 */
void sampler_set_copy_handler(struct sampler *s, sampler_copy_fn fn, void *ctx);

/* Gets a copied sample with the frames the program found: ips, n of them. */
typedef void (*sampler_oracle_fn)(const struct sampler_copy *copy, const uint64_t *ips,
				  uint32_t n, void *ctx);

/* Sets the handler of oracle copies (see oracle_every). */
void sampler_set_oracle_handler(struct sampler *s, sampler_oracle_fn fn, void *ctx);

/* How user stacks are walked: SAMPLER_UNWIND_FP or SAMPLER_UNWIND_TABLES. */
enum sampler_unwind sampler_unwind_mode(const struct sampler *s);

/*
 * Whether off-CPU user stacks are walked by frame pointer although
 * sampler_unwind_mode() is tables: --unwind auto on a kernel whose
 * verifier refused the off-CPU table walk (ebprof_switch_walk).
 */
bool sampler_offcpu_fp(const struct sampler *s);

/*
 * What loading the programs cost: returns the seconds it took (every load
 * tried, a fallback's included), and sets *verified_insns to the
 * instructions the kernel's verifier processed for the programs loaded
 * (0 on a kernel that does not say: before 5.16). The table walk is most
 * of both; tests/e2e/68_kernel_features.sh bounds the second.
 */
double sampler_load_cost(const struct sampler *s, uint64_t *verified_insns);

/*
 * Whether off-CPU waits are timed by the run queue's clock, read in place
 * at the switch; false: by bpf_ktime_get_ns() (an unstable scheduler
 * clock, a kernel without the group scheduler's pointers, or
 * EBPROF_OFFCPU_CLOCK=ktime). Either is in ns; the first costs less.
 */
bool sampler_offcpu_rq_clock(const struct sampler *s);

/*
 * The unwind maps, for the caller that loads tables into them
 * (bpf/unwmaps.h); NULL when stacks are walked by frame pointer. Owned by
 * the sampler.
 */
struct unwmaps *sampler_unwmaps(struct sampler *s);

/* Whether the program walks Python frames (config python, tables, the kernel's fsbase). */
bool sampler_python(const struct sampler *s);

/*
 * Loads process tgid's CPython layout (symbolizer/pyproc fills it), so that
 * its samples get Python frames; replaces any earlier one. Returns 0,
 * -EOPNOTSUPP when the program walks no Python frames, or -errno (-E2BIG:
 * the map is full).
 */
int sampler_python_set(struct sampler *s, uint32_t tgid, const struct ebprof_py_proc *py);

/* Forgets process tgid's layout (it exited, or was not Python after an exec). */
void sampler_python_forget(struct sampler *s, uint32_t tgid);

/*
 * The time the hypervisor took from this guest's CPUs since the sampler
 * started (bpf/steal.h), in ns: on-CPU samples are missing for it, so a
 * wall-clock profile is short by up to that much. Returns 0, -EOPNOTSUPP
 * when /proc/stat could not be read at the start, or -errno.
 */
int sampler_steal_ns(const struct sampler *s, uint64_t *ns);

/*
 * Seconds the events sampled: from their attachment to sampler_stop(), or
 * to now while they run; 0 before sampler_start(). The span the stats and
 * ticks_missed cover, which a caller's own clock overstates by whatever
 * it does after the stop (naming the last samples, joining threads).
 */
double sampler_sampled_s(const struct sampler *s);

/*
 * The size of the ring that carries process reports and, with unwind
 * tables, copies of samples: sampler_copy_ring_bytes() of the sampler's
 * frequency and online CPUs, 64 KiB with frame pointers, a page without
 * reports.
 */
size_t sampler_ring_bytes(const struct sampler *s);

/*
 * The copy ring's size for frequency Hz on cpus CPUs: 1 KiB for each
 * sample a second, a power of two from 256 KiB to 2 MiB; 2 MiB when
 * off-CPU walks send copies too (mode offcpu or wall).
 */
uint32_t sampler_copy_ring_bytes(unsigned int frequency, int cpus, enum sampler_mode mode);

/* The off-CPU time one off-CPU sample stands for, in ns (as configured). */
uint64_t sampler_offcpu_period_ns(const struct sampler *s);

/* What the sampler samples, as opened. */
enum sampler_mode sampler_mode(const struct sampler *s);

/* "cpu", "offcpu" or "wall"; and back (-1 for anything else). */
const char *sampler_mode_name(enum sampler_mode mode);
int sampler_parse_mode(const char *name);

/*
 * CPUs sampled: those the CPU-clock event is attached to (the online ones
 * in offcpu mode, and with per-thread events).
 */
int sampler_cpu_count(const struct sampler *s);

/*
 * How many threads carry a sampling event of their own (bpf/taskev.h):
 * with a fixed PID filter and no name filter, the filter's processes'
 * threads, and no other task is interrupted; 0: one event per CPU. When a
 * fixed PID filter still got per-CPU events, *why (if why) says why (too
 * many threads, no permission to trace a process, ...); else NULL.
 */
size_t sampler_task_events(const struct sampler *s, const char **why);

/*
 * Stops sampling for good: the sampling events and the off-CPU programs
 * are detached, so that a drain after it finds every sample whole (its
 * stats all counted: samples = recorded + filtered + idle + losses,
 * exactly). The counts of CPUs and threads stay as they were.
 */
void sampler_stop(struct sampler *s);

/* True when ticks_missed is measured: per-CPU events, on-CPU sampling. */
bool sampler_ticks_measured(const struct sampler *s);

/* Detaches and frees; NULL is fine. */
void sampler_free(struct sampler *s);

#endif
