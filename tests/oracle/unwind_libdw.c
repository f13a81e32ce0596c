/*
 * unwind_libdw: the elfutils oracle for the BPF table unwinder. It samples
 * the processes named with the real sampler, unwinding by tables, and has
 * the program copy every Nth sample it walked whole (registers, the top
 * of the stack, and the frames it found: sampler_config.oracle_every).
 * Each copy is unwound again by elfutils' libdw (dwfl_attach_state over
 * the copy: its own CFI reader, its own interpreter, its own frame-pointer
 * fallback) and compared frame by frame with the program's walk.
 *
 * A frame agrees when both give the same address at the same depth. The
 * copy holds 16 KiB of stack, so libdw may stop where the stack copy ends
 * while the program read on: only the frames libdw gives are compared
 * (the program giving fewer counts against it).
 *
 *   unwind_libdw [-d SECONDS] [-e EVERY] [-v] PID...
 *   prints "unwind_libdw: N copies, F frames compared, A agree (P%)", and
 *   the first disagreements with -v. Exit 0 when at least 99.9% agree and
 *   at least 1000 frames were compared; 1 otherwise; 2 on a usage error.
 */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/sampler.h"
#include "symbolizer/unwinder.h"

#define MAX_PIDS 16
#define MAX_FRAMES 256

/* One process's libdw session: its modules, reported once. */
struct session {
	pid_t pid;
	Dwfl *dwfl;
	const struct sampler_copy *copy; /* the copy being unwound */
	bool attached;
};

struct oracle {
	struct session sessions[MAX_PIDS];
	size_t n_sessions;
	uint64_t copies, unwound, frames, agree, shorter;
	int verbose;
	uint64_t frames_out[MAX_FRAMES];
	int n_out;
};

static bool mem_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct session *s = arg;
	uint64_t base = s->copy->regs->r[7];

	(void)dwfl;
	if (addr < base || addr - base > s->copy->stack_len ||
	    s->copy->stack_len - (addr - base) < sizeof(*result))
		return false;
	memcpy(result, s->copy->stack + (addr - base), sizeof(*result));
	return true;
}

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct session *s = arg;

	(void)dwfl;
	if (*thread_argp)
		return 0;
	*thread_argp = s;
	return s->pid;
}

static bool initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct session *s = arg;
	Dwarf_Word regs[17];

	/* struct ebprof_regs is in DWARF order already: rax, rdx, ... r15, rip. */
	for (int i = 0; i < 17; i++)
		regs[i] = s->copy->regs->r[i];
	return dwfl_thread_state_registers(thread, 0, 17, regs);
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.memory_read = mem_read,
	.set_initial_registers = initial_registers,
};

static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

static struct session *session_for(struct oracle *o, pid_t pid)
{
	struct session *s;

	for (size_t i = 0; i < o->n_sessions; i++)
		if (o->sessions[i].pid == pid)
			return &o->sessions[i];
	if (o->n_sessions == MAX_PIDS)
		return NULL;
	s = &o->sessions[o->n_sessions];
	s->pid = pid;
	s->dwfl = dwfl_begin(&dwfl_callbacks);
	if (!s->dwfl)
		return NULL;
	if (dwfl_linux_proc_report(s->dwfl, pid) || dwfl_report_end(s->dwfl, NULL, NULL)) {
		dwfl_end(s->dwfl);
		return NULL;
	}
	if (!dwfl_attach_state(s->dwfl, NULL, pid, &thread_callbacks, s)) {
		fprintf(stderr, "unwind_libdw: dwfl_attach_state(%d): %s\n", pid, dwfl_errmsg(-1));
		dwfl_end(s->dwfl);
		return NULL;
	}
	o->n_sessions++;
	return s;
}

static int frame_cb(Dwfl_Frame *frame, void *arg)
{
	struct oracle *o = arg;
	Dwarf_Addr pc;

	if (!dwfl_frame_pc(frame, &pc, NULL) || o->n_out >= MAX_FRAMES)
		return DWARF_CB_ABORT;
	o->frames_out[o->n_out++] = pc;
	return DWARF_CB_OK;
}

static pthread_mutex_t oracle_lock = PTHREAD_MUTEX_INITIALIZER;

static void on_oracle(const struct sampler_copy *copy, const uint64_t *ips, uint32_t n, void *ctx)
{
	struct oracle *o = ctx;
	struct session *s;
	uint64_t agree = 0;

	pthread_mutex_lock(&oracle_lock);
	o->copies++;
	s = session_for(o, (pid_t)copy->tgid);
	if (!s)
		goto unlock;
	s->copy = copy;
	o->n_out = 0;
	/* libdw stops with an error where the copy ends: the frames so far count. */
	dwfl_getthread_frames(s->dwfl, s->pid, frame_cb, o);
	if (!o->n_out)
		goto unlock;
	o->unwound++;
	for (int i = 0; i < o->n_out && i < (int)(EBPROF_MAX_DEPTH + 1); i++) {
		bool same = (uint32_t)i < n && ips[i] == o->frames_out[i];

		o->frames++;
		agree += same;
		if (!same && o->verbose && o->frames - o->agree - agree < 20)
			printf("pid %u frame %d: libdw %#" PRIx64 ", ebprof %#" PRIx64 " (of %u)\n",
			       copy->tgid, i, o->frames_out[i], (uint32_t)i < n ? ips[i] : 0, n);
	}
	o->agree += agree;
	if ((uint32_t)o->n_out > n)
		o->shorter++;
unlock:
	pthread_mutex_unlock(&oracle_lock);
}

static struct unwinder *tracker;

static int track(const struct sampler_process *p, void *ctx)
{
	(void)ctx;
	unwinder_track(tracker, p->tgid, p->start_time);
	return 0;
}

int main(int argc, char **argv)
{
	struct sampler_config config;
	struct sampler *s = NULL;
	struct sampler_watch *watch = NULL;
	struct oracle *o = calloc(1, sizeof(*o));
	uint32_t pids[MAX_PIDS];
	unsigned int seconds = 5, every = 10;
	char err[512];
	int opt, rc = 1;

	while ((opt = getopt(argc, argv, "d:e:v")) != -1) {
		if (opt == 'd')
			seconds = (unsigned int)atoi(optarg);
		else if (opt == 'e')
			every = (unsigned int)atoi(optarg);
		else if (opt == 'v')
			o->verbose = 1;
		else
			return 2;
	}
	if (optind >= argc || argc - optind > MAX_PIDS || !o || !every)
		return 2;
	sampler_config_init(&config);
	for (int i = optind; i < argc; i++)
		pids[i - optind] = (uint32_t)atoi(argv[i]);
	config.tgids = pids;
	config.n_tgids = (size_t)(argc - optind);
	config.frequency = 999;
	config.unwind = SAMPLER_UNWIND_TABLES;
	config.report_processes = true;
	config.oracle_every = every;
	if (sampler_open(&config, &s, err, sizeof(err))) {
		fprintf(stderr, "unwind_libdw: %s\n", err);
		return 1;
	}
	if (unwinder_new(sampler_unwmaps(s), NULL, &tracker))
		goto out;
	sampler_set_copy_handler(s, unwinder_unwind_copy, tracker);
	sampler_set_oracle_handler(s, on_oracle, o);
	if (sampler_watch_start(s, track, NULL, NULL, &watch))
		goto out;
	for (unsigned int i = 0; i < seconds * 4; i++) {
		usleep(250000);
		sampler_drain(s, NULL, NULL, NULL);
		unwinder_end_drain(tracker);
	}
	sampler_watch_stop(watch);
	watch = NULL;
	printf("unwind_libdw: %" PRIu64 " copies, %" PRIu64 " unwound by libdw, %" PRIu64
	       " frames compared, %" PRIu64 " agree (%.3f%%), %" PRIu64
	       " walks where ebprof gave fewer frames\n",
	       o->copies, o->unwound, o->frames, o->agree,
	       o->frames ? 100.0 * (double)o->agree / (double)o->frames : 0.0, o->shorter);
	rc = o->frames >= 1000 && o->agree * 1000 >= o->frames * 999 ? 0 : 1;
out:
	sampler_watch_stop(watch);
	unwinder_free(tracker);
	sampler_free(s);
	for (size_t i = 0; i < o->n_sessions; i++)
		dwfl_end(o->sessions[i].dwfl);
	free(o);
	return rc;
}
