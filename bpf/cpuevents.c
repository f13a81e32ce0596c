/* cpuevents: one CPU-clock event on each online CPU, as CPUs go and come. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
	c->look_ns = calloc((size_t)n_cpus, sizeof(*c->look_ns));
	c->enabled = calloc((size_t)n_cpus, sizeof(*c->enabled));
	if (!c->links || !c->fds || !c->look_ns || !c->enabled) {
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
	c->look_ns[cpu] = now;
	c->enabled[cpu] = 0;
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
 * An event's enabled time and the monotonic clock drift apart by a few
 * ppm, and the kernel's time of a read lags a little: within this much of
 * the time between two looks, an event ran throughout.
 */
static uint64_t cpuevents_slack(const struct cpuevents *c, uint64_t elapsed)
{
	return elapsed / 128 + 2 * c->grid.period_ns;
}

int cpuevents_look(struct cpuevents *c, uint64_t now_ns, const bool *online,
		   const uint64_t *ticks)
{
	int dropped = 0;

	for (int cpu = 0; cpu < c->n_cpus; cpu++) {
		uint64_t v[2], elapsed, ran, until;

		if (!c->links[cpu])
			continue;
		elapsed = now_ns > c->look_ns[cpu] ? now_ns - c->look_ns[cpu] : 0;
		if (read(c->fds[cpu], v, sizeof(v)) != (ssize_t)sizeof(v)) {
			if (!online || online[cpu])
				continue; /* says nothing: looked at again next time */
			v[1] = c->enabled[cpu];
		}
		ran = v[1] > c->enabled[cpu] ? v[1] - c->enabled[cpu] : 0;
		if ((!online || online[cpu]) && ran + cpuevents_slack(c, elapsed) >= elapsed) {
			c->look_ns[cpu] = now_ns;
			c->enabled[cpu] = v[1];
			continue;
		}
		/* Taken away with its CPU: it ran until its enabled time stopped. */
		until = c->look_ns[cpu] + (ran < elapsed ? ran : elapsed);
		tickgrid_end(&c->grid, cpu, until, ticks[cpu]);
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
	free(c->look_ns);
	free(c->enabled);
	tickgrid_free(&c->grid);
	memset(c, 0, sizeof(*c));
}
