/* tickgrid: ticks a CPU-clock event's grid says fell due, against the program's runs. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bpf/tickgrid.h"

/* The kernel's floor on a software clock event's period (perf_swevent_start_hrtimer). */
#define TICKGRID_MIN_PERIOD_NS 10000

int tickgrid_init(struct tickgrid *g, int n_cpus, unsigned int frequency)
{
	memset(g, 0, sizeof(*g));
	if (!frequency || n_cpus <= 0)
		return -EINVAL;
	/* perf_event_open turns a clock event's frequency into this fixed period. */
	g->period_ns = 1000000000ull / frequency;
	if (g->period_ns < TICKGRID_MIN_PERIOD_NS)
		g->period_ns = TICKGRID_MIN_PERIOD_NS;
	g->start_ns = calloc((size_t)n_cpus, sizeof(*g->start_ns));
	g->base = calloc((size_t)n_cpus, sizeof(*g->base));
	g->missed = calloc((size_t)n_cpus, sizeof(*g->missed));
	g->ended = calloc((size_t)n_cpus, sizeof(*g->ended));
	if (!g->start_ns || !g->base || !g->missed || !g->ended) {
		tickgrid_free(g);
		return -ENOMEM;
	}
	g->n_cpus = n_cpus;
	return 0;
}

void tickgrid_start(struct tickgrid *g, int cpu, uint64_t now_ns, uint64_t ticks)
{
	if (cpu < 0 || cpu >= g->n_cpus)
		return;
	g->start_ns[cpu] = now_ns ? now_ns : 1;
	g->base[cpu] = ticks;
	g->started = true;
}

void tickgrid_end(struct tickgrid *g, int cpu, uint64_t at_ns, uint64_t ticks)
{
	if (cpu < 0 || cpu >= g->n_cpus || !g->start_ns[cpu])
		return;
	tickgrid_update(g, cpu, at_ns, ticks);
	g->ended[cpu] += g->missed[cpu];
	g->missed[cpu] = 0;
	g->start_ns[cpu] = 0;
}

void tickgrid_stop(struct tickgrid *g, uint64_t now_ns)
{
	if (!g->stop_ns)
		g->stop_ns = now_ns;
}

uint64_t tickgrid_update(struct tickgrid *g, int cpu, uint64_t now_ns, uint64_t ticks)
{
	uint64_t due;

	if (cpu < 0 || cpu >= g->n_cpus)
		return 0;
	if (!g->start_ns[cpu])
		return g->ended[cpu];
	if (g->stop_ns && now_ns > g->stop_ns)
		now_ns = g->stop_ns;
	/* The first tick falls due a period after the start. */
	due = now_ns > g->start_ns[cpu] ? (now_ns - g->start_ns[cpu]) / g->period_ns : 0;
	/* This event's runs (a late tick of the one before may land in them). */
	ticks = ticks > g->base[cpu] ? ticks - g->base[cpu] : 0;
	/* One left out: a tick in flight as the stats were read. */
	if (due > ticks + 1 && due - ticks - 1 > g->missed[cpu])
		g->missed[cpu] = due - ticks - 1;
	return g->ended[cpu] + g->missed[cpu];
}

uint64_t tickgrid_missed(const struct tickgrid *g)
{
	uint64_t sum = 0;

	for (int cpu = 0; cpu < g->n_cpus; cpu++)
		sum += g->ended[cpu] + g->missed[cpu];
	return sum;
}

bool tickgrid_active(const struct tickgrid *g)
{
	return g->started;
}

uint64_t tickgrid_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void tickgrid_free(struct tickgrid *g)
{
	free(g->start_ns);
	free(g->base);
	free(g->missed);
	free(g->ended);
	g->start_ns = NULL;
	g->base = NULL;
	g->missed = NULL;
	g->ended = NULL;
	g->n_cpus = 0;
}
