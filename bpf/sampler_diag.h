/*
 * sampler_diag: what this host lets the sampler do, and, when it refuses,
 * a sentence that tells the user what to change. Internal to bpf/: the
 * sampler calls it while opening; tests call it directly.
 */
#ifndef EBPROF_BPF_SAMPLER_DIAG_H
#define EBPROF_BPF_SAMPLER_DIAG_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Parses a kernel CPU list ("0-3,5,8-9") into cpus[0..n_cpus): true for
 * each CPU named, false otherwise; CPUs at n_cpus or above are ignored.
 * Returns the number of CPUs set, or -EINVAL for a malformed list.
 */
int sampler_diag_parse_cpus(const char *list, bool *cpus, int n_cpus);

/* The same, from /sys/devices/system/cpu/online. Returns -errno if unreadable. */
int sampler_diag_online_cpus(bool *cpus, int n_cpus);

/* 0 if the kernel exposes its BTF; else -EOPNOTSUPP and advice in err. */
int sampler_diag_btf(char *err, size_t errlen);

/*
 * Explains a failed BPF object load (error is a negative errno). Out of
 * file descriptors is said as such even when libbpf's own probes, failing
 * for want of one, left another errno (it used to blame the kernel).
 */
void sampler_diag_load(int error, char *err, size_t errlen);

/* ": raise `ulimit -n` (now N)" after an EMFILE or ENFILE error, "" otherwise. */
const char *sampler_diag_advice(int error, char *buf, size_t len);
/* What the kernel weighs when it refuses a perf event to this process. */
struct sampler_diag_privileges {
	int paranoid;	/* kernel.perf_event_paranoid */
	bool perfmon;	/* CAP_PERFMON in the effective set */
	bool sys_admin; /* CAP_SYS_ADMIN in the effective set */
};

/* Reads them for this process. */
void sampler_diag_privileges(struct sampler_diag_privileges *priv);

/*
 * Explains a failed CPU-wide perf_event_open() on one CPU at frequency Hz
 * (error is a negative errno) for a process holding priv: a refusal names
 * what is missing, never a capability that is held.
 */
void sampler_diag_perf_event_as(int error, int cpu, unsigned int frequency,
				const struct sampler_diag_privileges *priv, char *err,
				size_t errlen);

/* The same for this process, as sampler_diag_privileges() reads it. */
void sampler_diag_perf_event(int error, int cpu, unsigned int frequency, char *err,
			     size_t errlen);

#endif
