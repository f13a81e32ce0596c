/* taskev: CPU-clock perf events on the threads of named processes; see taskev.h. */
#include "bpf/taskev.h"

#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpf/grow.h"

/* Passes over a process's threads before giving up on it settling. */
#define TASKEV_MAX_PASSES 16

int taskev_clock_open(pid_t pid, int cpu, unsigned int frequency)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_freq = frequency,
		.freq = 1,
		.inherit = pid >= 0,
		/* read(): the count, then the ns it was enabled (bpf/cpuevents.h). */
		.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED,
	};
	long fd = syscall(__NR_perf_event_open, &attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : (int)fd;
}

static bool taskev_has(const struct taskev *t, pid_t tid)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->ev[i].tid == tid)
			return true;
	return false;
}

static void taskev_error(int ret, pid_t tgid, pid_t tid, size_t max_events, char *err,
			 size_t errlen)
{
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory for the perf events of process %d's threads",
			 (int)tgid);
	else if (ret == -E2BIG)
		snprintf(err, errlen, "process %d has more threads than the %zu perf events "
			 "allowed for them", (int)tgid, max_events);
	else
		snprintf(err, errlen, "perf_event_open on thread %d of process %d: %s%s", (int)tid,
			 (int)tgid, strerror(-ret),
			 ret == -EMFILE ? " (an event per thread: raise `ulimit -n`)" : "");
}

/* One pass over tgid's threads; *opened counts the events it added. */
static int taskev_pass(struct taskev *t, pid_t tgid, unsigned int frequency, size_t max_events,
		       size_t *opened, char *err, size_t errlen)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)tgid);
	dir = opendir(path);
	if (!dir)
		return 0; /* the process is gone: nothing to trace */
	while ((d = readdir(dir))) {
		char *end;
		long tid = strtol(d->d_name, &end, 10);
		int fd;

		if (*end || tid <= 0 || taskev_has(t, (pid_t)tid))
			continue;
		if (t->n >= max_events) {
			ret = -E2BIG;
		} else if (GROW_ARRAY(&t->ev, &t->cap, t->n + 1, 16)) {
			ret = -ENOMEM;
		} else {
			fd = taskev_clock_open((pid_t)tid, -1, frequency);
			if (fd == -ESRCH) {
				t->gone++; /* exited since the listing */
				continue;
			}
			ret = fd < 0 ? fd : 0;
		}
		if (ret) {
			taskev_error(ret, tgid, (pid_t)tid, max_events, err, errlen);
			break;
		}
		t->ev[t->n++] = (struct taskev_event){ .fd = fd, .tid = (pid_t)tid };
		(*opened)++;
	}
	closedir(dir);
	return ret;
}

int taskev_open(struct taskev *t, const uint32_t *tgids, size_t n_tgids, unsigned int frequency,
		size_t max_events, char *err, size_t errlen)
{
	int ret = 0;

	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < n_tgids && !ret; i++) {
		size_t opened = 1;

		for (int pass = 0; opened && pass < TASKEV_MAX_PASSES && !ret; pass++) {
			opened = 0;
			ret = taskev_pass(t, (pid_t)tgids[i], frequency, max_events, &opened, err,
					  errlen);
		}
		if (!ret && opened) {
			ret = -EAGAIN;
			snprintf(err, errlen, "process %u kept starting threads through %d listings "
				 "of them", tgids[i], TASKEV_MAX_PASSES);
		}
	}
	if (ret)
		taskev_free(t);
	return ret;
}

void taskev_free(struct taskev *t)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->ev[i].fd >= 0)
			close(t->ev[i].fd);
	free(t->ev);
	t->ev = NULL;
	t->n = t->cap = 0;
}
