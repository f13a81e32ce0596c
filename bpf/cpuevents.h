/*
 * cpuevents: the CPU-clock events of a profile of every task, one on each
 * online CPU, each carrying the program, kept so while CPUs go and come.
 *
 * A CPU taken offline (CPU hotplug: chcpu, a hypervisor's vCPU unplug)
 * takes its events with it: the kernel detaches them, and does not
 * attach them again when the CPU comes back. Its samples would stop for
 * good, silently. An event's own clock tells: the kernel counts the ns an
 * event has been enabled (PERF_FORMAT_TOTAL_TIME_ENABLED), throttled or
 * not, and stops when it takes the event away. cpuevents_look() closes
 * the events of CPUs now offline, and those whose enabled time fell
 * behind the time between two looks (their CPU went and came back in
 * between). Their ticks' grid ends where their enabled time stopped, so
 * that the time a CPU was away is not counted as ticks missed.
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

struct cpuevents {
	struct bpf_program *prog;
	unsigned int frequency;
	int n_cpus;
	struct bpf_link **links; /* per CPU; NULL: no event there */
	int *fds;		 /* per CPU, the link's perf event (the link closes it) */
	uint64_t *look_ns;	 /* per CPU, CLOCK_MONOTONIC at the last look (or the open) */
	uint64_t *enabled;	 /* per CPU, the ns its event had been enabled then */
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
 * Reads every event's enabled time at now_ns, and closes those of the
 * CPUs online (per CPU; NULL: not known) says are offline, and those
 * whose enabled time fell behind since the last look. A closed event's
 * grid ends where its enabled time stopped, the program having run
 * ticks[cpu] times there (ticks: per CPU, read before this call).
 * Returns how many were closed.
 */
int cpuevents_look(struct cpuevents *c, uint64_t now_ns, const bool *online,
		   const uint64_t *ticks);

/* Closes every event; no tick falls due after now_ns. */
void cpuevents_stop(struct cpuevents *c, uint64_t now_ns);

void cpuevents_free(struct cpuevents *c);

#endif
