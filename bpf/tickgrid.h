/*
 * tickgrid: CPU-clock ticks that fell due and never ran the program.
 *
 * A per-CPU CPU-clock event fires on a fixed grid, one tick a period from
 * its start (the kernel moves a late timer forward by whole periods, so a
 * late tick does not shift the ones after it). A tick that falls due while
 * the CPU cannot take it -- its virtual CPU held back by a hypervisor that
 * may not report the steal, interrupts off for longer than a period, the
 * kernel throttling the event, another BPF program running there -- fires
 * once, late, or not at all, and the periods in between have no sample.
 * No profiler sees them; this one counts them: the ticks the grid says
 * fell due on a CPU, against the program's runs there (its samples stat).
 *
 * One tick either side is noise (a tick in flight as the stats are read,
 * the start known to within the open call), so a CPU's count leaves one
 * out, and never goes down. Per-thread events have no grid (they stop
 * while their thread is off the CPU): the sampler does not use this then.
 *
 * A CPU's event can end before the others and a new one start there
 * later (the CPU went offline, and came back: bpf/cpuevents.h): no tick
 * falls due between the two, and each event's grid is its own, its ticks
 * counted from the program's runs at its start.
 */
#ifndef EBPROF_BPF_TICKGRID_H
#define EBPROF_BPF_TICKGRID_H

#include <stdbool.h>
#include <stdint.h>

struct tickgrid {
	uint64_t period_ns; /* as the kernel sets it from the frequency */
	int n_cpus;
	uint64_t *start_ns; /* per CPU, CLOCK_MONOTONIC; 0: no event there */
	uint64_t *base;	    /* per CPU, the program's runs there at its event's start */
	uint64_t *missed;   /* per CPU, the most counted so far for its event */
	uint64_t *ended;    /* per CPU, counted for its events that ended */
	uint64_t stop_ns;   /* 0 while the events run */
	bool started;	    /* a CPU has had an event */
};

/* For n_cpus CPUs at frequency Hz. Returns 0 or -ENOMEM (-EINVAL: no frequency). */
int tickgrid_init(struct tickgrid *g, int n_cpus, unsigned int frequency);

/*
 * cpu's event was opened, and started, just before now_ns, when the
 * program had run ticks times there (0 for the first event).
 */
void tickgrid_start(struct tickgrid *g, int cpu, uint64_t now_ns, uint64_t ticks);

/*
 * cpu's event ran until at_ns, and the program ran ticks times there: its
 * last update, after which no tick falls due on cpu until a new start.
 */
void tickgrid_end(struct tickgrid *g, int cpu, uint64_t at_ns, uint64_t ticks);

/* Every event was closed at now_ns: no tick falls due after it. */
void tickgrid_stop(struct tickgrid *g, uint64_t now_ns);

/*
 * cpu's program ran ticks times (from the start of its first event) by
 * now_ns: updates and returns the ticks missed there so far, by its
 * events that ended too (0 for a CPU that never had one).
 */
uint64_t tickgrid_update(struct tickgrid *g, int cpu, uint64_t now_ns, uint64_t ticks);

/* The sum over the CPUs of what tickgrid_update() last returned. */
uint64_t tickgrid_missed(const struct tickgrid *g);

/* True once a CPU has had an event. */
bool tickgrid_active(const struct tickgrid *g);

/* CLOCK_MONOTONIC now, in ns: the clock the events' timers run on. */
uint64_t tickgrid_now_ns(void);

void tickgrid_free(struct tickgrid *g);

#endif
