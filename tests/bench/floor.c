/*
 * floor: loads floor.bpf.o (an empty perf_event program) and attaches it to
 * a CPU-clock perf event on every online CPU, configured as bpf/sampler.c
 * configures ebprof's: software CPU clock, frequency mode, all tasks. It
 * then waits for SIGINT or SIGTERM. bench.py runs it as the floor that every
 * profiler's overhead is measured above. With "switch" for HZ it attaches
 * only the empty program on the scheduler's switch instead (the off-CPU
 * section's floor). With PROG, it attaches that perf_event program of the
 * object instead of bench_floor (findvma.py's probe).
 *
 * Usage: floor FLOOR.BPF.O HZ|switch [PROG]
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#define FLOOR_MAX_CPUS 1024

static int floor_event_open(int cpu, unsigned int frequency)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_freq = frequency,
		.freq = 1,
	};
	long fd = syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : (int)fd;
}

/* Waits for SIGINT or SIGTERM (blocked by the caller). */
static void floor_wait(void)
{
	sigset_t stop;
	int sig;

	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigwait(&stop, &sig);
}

/*
 * Opens the object at path and loads only its program name (the others
 * may want what this kernel lacks). Returns the object and sets *prog, or
 * NULL after saying why.
 */
static struct bpf_object *floor_load(const char *path, const char *name, struct bpf_program **prog)
{
	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	struct bpf_program *p;

	if (!obj) {
		fprintf(stderr, "floor: opening %s: %s\n", path, strerror(errno));
		return NULL;
	}
	for (p = bpf_object__next_program(obj, NULL); p; p = bpf_object__next_program(obj, p))
		bpf_program__set_autoload(p, !strcmp(bpf_program__name(p), name));
	*prog = bpf_object__find_program_by_name(obj, name);
	if (!*prog || bpf_object__load(obj)) {
		fprintf(stderr, "floor: loading %s from %s: %s\n", name, path,
			*prog ? strerror(errno) : "no such program");
		bpf_object__close(obj);
		return NULL;
	}
	return obj;
}

/* The switch floor: the empty tp_btf program on sched_switch, alone. */
static int floor_switch(const char *path)
{
	struct bpf_program *prog;
	struct bpf_object *obj = floor_load(path, "bench_switch_floor", &prog);
	struct bpf_link *link = NULL;
	int ret = 1;

	if (!obj)
		return 1;
	link = bpf_program__attach(prog);
	if (!link) {
		fprintf(stderr, "floor: attaching to sched_switch: %s\n", strerror(errno));
		goto close_obj;
	}
	printf("floor: attached to sched_switch\n");
	fflush(stdout);
	floor_wait();
	ret = 0;
	bpf_link__destroy(link);
close_obj:
	bpf_object__close(obj);
	return ret;
}

int main(int argc, char **argv)
{
	struct bpf_link *links[FLOOR_MAX_CPUS];
	struct bpf_program *prog;
	struct bpf_object *obj;
	int n_links = 0, n_cpus, ret = 1;
	const char *name = "bench_floor";
	unsigned int frequency;
	sigset_t stop;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: floor FLOOR.BPF.O HZ|switch [PROG]\n");
		return 2;
	}
	/* Block the stop signals first, so that one sent early is not lost. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigprocmask(SIG_BLOCK, &stop, NULL);
	if (!strcmp(argv[2], "switch"))
		return floor_switch(argv[1]);
	frequency = (unsigned int)strtoul(argv[2], NULL, 10);
	if (argc == 4)
		name = argv[3];

	obj = floor_load(argv[1], name, &prog);
	if (!obj)
		return 1;
	n_cpus = libbpf_num_possible_cpus();
	if (n_cpus <= 0 || n_cpus > FLOOR_MAX_CPUS)
		goto close_obj;
	for (int cpu = 0; cpu < n_cpus; cpu++) {
		int fd = floor_event_open(cpu, frequency);

		if (fd == -ENODEV)
			continue; /* offline */
		if (fd < 0) {
			fprintf(stderr, "floor: perf_event_open on CPU %d: %s\n", cpu,
				strerror(-fd));
			goto detach;
		}
		links[n_links] = bpf_program__attach_perf_event(prog, fd);
		if (!links[n_links]) {
			fprintf(stderr, "floor: attaching on CPU %d: %s\n", cpu, strerror(errno));
			close(fd);
			goto detach;
		}
		n_links++;
	}
	printf("floor: attached on %d CPUs at %u Hz\n", n_links, frequency);
	fflush(stdout);
	floor_wait();
	ret = 0;
detach:
	while (n_links > 0)
		bpf_link__destroy(links[--n_links]);
close_obj:
	bpf_object__close(obj);
	return ret;
}
