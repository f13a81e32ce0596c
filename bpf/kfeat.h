/*
 * kfeat: what the running kernel offers beyond ebprof's core, probed once
 * at start-up.
 *
 * The core (the BPF program, its maps, the CPU-clock event) needs Linux
 * 5.8. Newer kernels offer more: each such feature is a row of the table
 * in kfeat.c, with the first upstream release that has it, a probe that
 * asks the running kernel (not its version: distributions backport), and
 * what ebprof does without it. The composition roots (cli/, plugin/)
 * probe once, say in one line per missing feature what is turned off,
 * and hand the result to the modules that use it (sampler_config.features,
 * symbolizer_config.maps_text_only). `ebprof features` prints the table.
 *
 * To add a feature: an id below, a row with its probe in kfeat.c, a row
 * in the README's "Kernels" table (tests/e2e/68_kernel_features.sh holds
 * the two to each other on every kernel the tests boot), and the module
 * that uses it reads kfeat_state().
 */
#ifndef EBPROF_BPF_KFEAT_H
#define EBPROF_BPF_KFEAT_H

#include <stddef.h>

enum kfeat_id {
	KFEAT_NOPREALLOC,    /* hash maps without preallocation in perf_event programs */
	KFEAT_PROCMAP_QUERY, /* the PROCMAP_QUERY ioctl on /proc/PID/maps */
	KFEAT_UNWIND_TABLES, /* the helpers the BPF table unwinder calls */
	KFEAT_TASK_STORAGE,  /* task-local storage: the off-CPU program's per-task state */
	KFEAT_NR
};

enum kfeat_state {
	KFEAT_UNKNOWN = 0, /* not probed, or the probe was refused (no privilege) */
	KFEAT_ABSENT,
	KFEAT_PRESENT,
};

/* A row of the table: static strings. */
struct kfeat_desc {
	const char *name;    /* short and stable, as `ebprof features` and the README give it */
	const char *kernel;  /* first upstream release with it: "6.11" */
	const char *what;    /* what the kernel offers */
	const char *without; /* what ebprof does without it */
};

/* The features of one probe; zeroed means every one KFEAT_UNKNOWN. */
struct kfeat {
	enum kfeat_state state[KFEAT_NR];
};

/* The row of id (never NULL for id < KFEAT_NR). */
const struct kfeat_desc *kfeat_desc(enum kfeat_id id);

/*
 * Probes every feature of the running kernel. The BPF probes load a tiny
 * program and need what the sampler needs (CAP_BPF and CAP_PERFMON);
 * without it their state stays KFEAT_UNKNOWN and the user tries and falls
 * back as it can.
 */
void kfeat_probe(struct kfeat *kf);

/* The state of id in kf; KFEAT_UNKNOWN for a NULL kf. */
enum kfeat_state kfeat_state(const struct kfeat *kf, enum kfeat_id id);

/*
 * The one message for a missing feature, into buf: what this kernel
 * lacks, since which release, and what ebprof does instead. Returns the
 * length snprintf() would write.
 */
int kfeat_missing_message(enum kfeat_id id, char *buf, size_t len);

#endif
