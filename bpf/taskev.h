/*
 * taskev: CPU-clock perf events on the threads of named processes, in place
 * of one event per CPU, for a PID filter fixed for the whole run.
 *
 * A per-CPU event interrupts every task on the machine, and the program
 * then rejects the ticks of the tasks it does not want: each costs the
 * interrupt and the program's first instructions. An event opened on a
 * thread (perf_event_open with pid = the thread, cpu = -1) runs its timer
 * only while that thread is on a CPU, so the other tasks are never
 * interrupted at all. With inherit set, the threads (and children) a
 * traced thread creates later get events of their own, carrying the same
 * program (the kernel copies a parent event's BPF program to its
 * inherited events). A child in another process is still rejected by the
 * program's PID filter, and counted as filtered.
 *
 * The threads are listed from /proc/PID/task until a pass finds none
 * without an event: a thread created during a pass by one that had no
 * event yet is found by the next pass, and one created after by a traced
 * thread inherits.
 */
#ifndef EBPROF_BPF_TASKEV_H
#define EBPROF_BPF_TASKEV_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct taskev_event {
	int fd;    /* -1 once the caller took it */
	pid_t tid; /* the thread it was opened on */
};

struct taskev {
	struct taskev_event *ev;
	size_t n, cap;
	size_t gone; /* threads that exited between listing and opening */
};

/*
 * The one CPU-clock sampling event at frequency Hz: on thread pid (any
 * CPU, cpu = -1; inherited by the threads and children it starts), or,
 * with pid = -1, on CPU cpu (every task there). Returns the fd (close on
 * exec) or a negative errno. A read() of it gives two u64: the count (ns
 * on the CPU) and the ns it has been enabled.
 */
int taskev_clock_open(pid_t pid, int cpu, unsigned int frequency);

/*
 * Opens a CPU-clock event at frequency Hz (inherited by new threads) on
 * every thread of the n_tgids processes, at most max_events in all.
 * A process that is gone is skipped. Returns 0, or a negative errno with
 * a message in err (-E2BIG: more threads than max_events; -EACCES and
 * -EPERM: not allowed to trace a process; others from perf_event_open),
 * every event opened so far closed. The caller takes the fds (setting
 * them to -1) and frees the rest with taskev_free().
 */
int taskev_open(struct taskev *t, const uint32_t *tgids, size_t n_tgids, unsigned int frequency,
		size_t max_events, char *err, size_t errlen);

/* Closes the events not taken (fd >= 0) and frees the array. */
void taskev_free(struct taskev *t);

#endif
