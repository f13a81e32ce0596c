/*
 * cpuevents: the CPU-clock events of a profile of every task, one on each
 * online CPU, each carrying the program, kept so while CPUs go and come.
 *
 * A CPU taken offline (CPU hotplug: chcpu, a hypervisor's vCPU unplug)
 * takes its events with it: the kernel detaches them, and does not
 * attach them again when the CPU comes back. Its samples would stop for
 * good, silently. cpuevents_look() closes the events of CPUs now offline,
 * and those of CPUs online whose program ran short of the ticks due since
 * the last look: a CPU-clock event fires on an idle CPU too, so one that
 * falls short was taken away (its CPU went, and maybe came back), or is
 * held (a hypervisor holding the vCPU, interrupts off, the kernel
 * throttling it). Its own clock tells which: the kernel counts the ns an
 * event has been enabled (PERF_FORMAT_TOTAL_TIME_ENABLED), throttled, held
 * or not, and stops when it takes the event away. The clock is read only
 * then: a read of an event at work costs an interrupt on its CPU, so none
 * is read while its program runs at the frequency. A closed event's grid
 * of ticks ends at its last run, taken as the time of its runs since the
 * last look, so that the time a CPU was away is not counted as ticks
 * missed, to within an eighth of a look (one that goes in a look's last
 * eighth is seen at the next); nor are those it missed in the look it
 * went in.
 * cpuevents_open() then opens an event on a CPU that came back, or came
 * for the first time, with a grid of its own.
 *
 * Not thread-safe: one caller at a time (the sampler's drain).
 */
#ifndef EBPROF_BPF_CPUEVENTS_H
#define EBPROF_BPF_CPUEVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/tickgrid.h"

struct bpf_program;
struct bpf_link;

/*
 * A CPU whose program ran fewer times than the ticks due since the last
 * look, by more than this many and this part of them, has its event's
 * clock read.
 */
#define CPUEVENTS_SHORT_TICKS 2
#define CPUEVENTS_SHORT_PART 8

struct cpuevents {
	struct bpf_program *prog;
	unsigned int frequency;
	int n_cpus;
	struct bpf_link **links; /* per CPU; NULL: no event there */
	int *fds;		 /* per CPU, the link's perf event (the link closes it) */
	uint64_t *look_ns;	 /* per CPU, CLOCK_MONOTONIC at the last look (or the open) */
	uint64_t *looked;	 /* per CPU, the program's runs there then */
	int n_open; /* events open; as it was at cpuevents_stop() after it */
	uint64_t detached; /* since the start: events closed, their CPU gone offline */
	uint64_t reopened; /* since the start: events opened after cpuevents_opened() */
	bool opened;	   /* the first events are all open: later ones are counted */
	struct tickgrid grid;
};

/* For n_cpus possible CPUs at frequency Hz. Returns 0, -EINVAL or -ENOMEM. */
int cpuevents_init(struct cpuevents *c, struct bpf_program *prog, int n_cpus,
		   unsigned int frequency);

/*
 * Opens cpu's event, attaches the program, and starts its grid, the
 * program having run ticks times there so far. Returns 0, -ENODEV (cpu is
 * offline), or another negative errno with a sentence in err: the event
 * (sampler_diag_perf_event()) or the attachment failed.
 */
int cpuevents_open(struct cpuevents *c, int cpu, uint64_t ticks, char *err, size_t errlen);

/* The first events are open: any opened after this is counted in reopened. */
void cpuevents_opened(struct cpuevents *c);

/* True if cpu has an event. */
bool cpuevents_has(const struct cpuevents *c, int cpu);

/*
 * At now_ns, the program having run ticks[cpu] times on each CPU (read
 * before this call): closes the events of the CPUs online (per CPU; NULL:
 * not known) says are offline, and of those whose program ran short
 * and whose enabled time stands still. Returns how many were closed.
 */
int cpuevents_look(struct cpuevents *c, uint64_t now_ns, const bool *online,
		   const uint64_t *ticks);

/* Closes every event; no tick falls due after now_ns. */
void cpuevents_stop(struct cpuevents *c, uint64_t now_ns);

void cpuevents_free(struct cpuevents *c);

#endif
