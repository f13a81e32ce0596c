/* cpuevents: one CPU-clock event on each online CPU, as CPUs go and come. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "bpf/cpuevents.h"
#include "bpf/sampler_diag.h"
#include "bpf/taskev.h"

int cpuevents_init(struct cpuevents *c, struct bpf_program *prog, int n_cpus,
		   unsigned int frequency)
{
	int ret;

	memset(c, 0, sizeof(*c));
	ret = tickgrid_init(&c->grid, n_cpus, frequency);
	if (ret)
		return ret;
	c->prog = prog;
	c->frequency = frequency;
	c->n_cpus = n_cpus;
	c->links = calloc((size_t)n_cpus, sizeof(*c->links));
	c->fds = calloc((size_t)n_cpus, sizeof(*c->fds));
	c->looked = calloc((size_t)n_cpus, sizeof(*c->looked));
	c->look_ns = calloc((size_t)n_cpus, sizeof(*c->look_ns));
	if (!c->links || !c->fds || !c->looked || !c->look_ns) {
		cpuevents_free(c);
		return -ENOMEM;
	}
	return 0;
}

int cpuevents_open(struct cpuevents *c, int cpu, uint64_t ticks, char *err, size_t errlen)
{
	struct bpf_link *link;
	uint64_t now;
	int fd, ret;

	if (cpu < 0 || cpu >= c->n_cpus || c->links[cpu])
		return -EINVAL;
	fd = taskev_clock_open(-1, cpu, c->frequency);
	if (fd == -ENODEV)
		return fd;
	now = tickgrid_now_ns();
	if (fd < 0) {
		sampler_diag_perf_event(fd, cpu, c->frequency, err, errlen);
		return fd;
	}
	link = bpf_program__attach_perf_event(c->prog, fd);
	if (!link) {
		char advice[64];

		ret = -errno;
		close(fd);
		snprintf(err, errlen, "attaching the BPF program to CPU %d: %s%s", cpu,
			 strerror(-ret), sampler_diag_advice(ret, advice, sizeof(advice)));
		return ret;
	}
	c->links[cpu] = link;
	c->fds[cpu] = fd;
	c->looked[cpu] = ticks;
	c->look_ns[cpu] = now;
	c->n_open++;
	c->reopened += c->opened;
	tickgrid_start(&c->grid, cpu, now, ticks);
	return 0;
}

void cpuevents_opened(struct cpuevents *c)
{
	c->opened = true;
}

bool cpuevents_has(const struct cpuevents *c, int cpu)
{
	return cpu >= 0 && cpu < c->n_cpus && c->links[cpu];
}

static void cpuevents_close(struct cpuevents *c, int cpu)
{
	bpf_link__destroy(c->links[cpu]); /* and its perf event */
	c->links[cpu] = NULL;
	c->fds[cpu] = -1;
}

/*
 * 1 if cpu's event is still enabled (its enabled time goes on over a
 * short wait), 0 if the kernel took it away (it stands still), -1 if its
 * clock cannot be read.
 */
static int cpuevents_enabled(const struct cpuevents *c, int cpu)
{
	const struct timespec wait = { .tv_nsec = 1000000 };
	uint64_t v1[2], v2[2]; /* the count, the ns enabled */

	if (read(c->fds[cpu], v1, sizeof(v1)) != (ssize_t)sizeof(v1))
		return -1;
	nanosleep(&wait, NULL);
	if (read(c->fds[cpu], v2, sizeof(v2)) != (ssize_t)sizeof(v2))
		return -1;
	return v2[1] != v1[1];
}

int cpuevents_look(struct cpuevents *c, uint64_t now_ns, const bool *online,
		   const uint64_t *ticks)
{
	uint64_t period = c->grid.period_ns;
	int dropped = 0;

	for (int cpu = 0; cpu < c->n_cpus; cpu++) {
		uint64_t due, ran;

		if (!c->links[cpu])
			continue;
		due = now_ns > c->look_ns[cpu] ? (now_ns - c->look_ns[cpu]) / period : 0;
		ran = ticks[cpu] > c->looked[cpu] ? ticks[cpu] - c->looked[cpu] : 0;
		if ((!online || online[cpu]) &&
		    (ran + CPUEVENTS_SHORT_TICKS + due / CPUEVENTS_SHORT_PART >= due ||
		     cpuevents_enabled(c, cpu) != 0)) {
			/* Ran at the frequency, or held: the grid counts its misses. */
			c->look_ns[cpu] = now_ns;
			c->looked[cpu] = ticks[cpu];
			continue;
		}
		/*
		 * Taken away with its CPU, after its last run: at the time of its
		 * runs since the last look, the ticks missed before it had been
		 * counted, and none after it are.
		 */
		tickgrid_end(&c->grid, cpu, c->look_ns[cpu] + ran * period, ticks[cpu]);
		cpuevents_close(c, cpu);
		c->n_open--;
		c->detached++;
		dropped++;
	}
	return dropped;
}

void cpuevents_stop(struct cpuevents *c, uint64_t now_ns)
{
	tickgrid_stop(&c->grid, now_ns);
	for (int cpu = 0; cpu < c->n_cpus; cpu++)
		if (c->links && c->links[cpu])
			cpuevents_close(c, cpu);
}

void cpuevents_free(struct cpuevents *c)
{
	if (c->links)
		for (int cpu = 0; cpu < c->n_cpus; cpu++)
			bpf_link__destroy(c->links[cpu]);
	free(c->links);
	free(c->fds);
	free(c->looked);
	free(c->look_ns);
	tickgrid_free(&c->grid);
	memset(c, 0, sizeof(*c));
}
