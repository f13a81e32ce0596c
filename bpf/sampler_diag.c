/*
 * sampler_diag: what this host lets the sampler do, and advice when it
 * refuses.
 *
 * Opening the sampler fails for a handful of reasons a user can fix: no
 * privileges, a paranoid perf_event setting, a kernel without BTF, a kernel
 * too old for the program. The errno alone says little ("Permission
 * denied" comes both from missing capabilities and from the verifier), so
 * these functions look at the host (capabilities, sysctls, uname) and
 * write one sentence that names the cause and the fix.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/utsname.h>

#include "bpf/sampler_diag.h"

/*
 * Descriptors the sampler and symbolizer need at once, measured: loading
 * the program and its maps takes ~20, the ring buffer and the watch
 * thread a few more, naming a file 2 or 3; plus one perf event per CPU.
 */
#define DIAG_FDS_NEEDED 40

/* Capability numbers from linux/capability.h (CAP_BPF, CAP_PERFMON: 5.8). */
#define DIAG_CAP_SYS_ADMIN 21
#define DIAG_CAP_PERFMON 38
#define DIAG_CAP_BPF 39

int sampler_diag_parse_cpus(const char *list, bool *cpus, int n_cpus)
{
	const char *p = list;
	int set = 0;

	memset(cpus, 0, (size_t)n_cpus * sizeof(*cpus));
	while (*p && *p != '\n') {
		char *end;
		unsigned long first, last;

		first = strtoul(p, &end, 10);
		if (end == p)
			return -EINVAL;
		last = first;
		p = end;
		if (*p == '-') {
			last = strtoul(++p, &end, 10);
			if (end == p || last < first)
				return -EINVAL;
			p = end;
		}
		for (unsigned long cpu = first; cpu <= last && cpu < (unsigned long)n_cpus; cpu++) {
			set += !cpus[cpu];
			cpus[cpu] = true;
		}
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -EINVAL;
	}
	return set;
}

int sampler_diag_online_cpus(bool *cpus, int n_cpus)
{
	char list[4096];
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	int ret;

	if (!f)
		return -errno;
	ret = fgets(list, sizeof(list), f) ? sampler_diag_parse_cpus(list, cpus, n_cpus) : -EIO;
	fclose(f);
	return ret;
}

int sampler_diag_btf(char *err, size_t errlen)
{
	if (access("/sys/kernel/btf/vmlinux", R_OK) == 0)
		return 0;
	snprintf(err, errlen,
		 "kernel has no BTF (/sys/kernel/btf/vmlinux): ebprof needs a kernel built with "
		 "CONFIG_DEBUG_INFO_BTF=y");
	return -EOPNOTSUPP;
}

/* True if the effective capability set has cap, read from /proc/self/status. */
static bool diag_has_cap(int cap)
{
	char line[256];
	uint64_t caps = 0;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return geteuid() == 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "CapEff: %" SCNx64, &caps) == 1)
			break;
	}
	fclose(f);
	return caps & (1ULL << cap);
}

static bool diag_may_trace(void)
{
	return diag_has_cap(DIAG_CAP_SYS_ADMIN) ||
	       (diag_has_cap(DIAG_CAP_BPF) && diag_has_cap(DIAG_CAP_PERFMON));
}

static const char *diag_kernel_release(struct utsname *uts)
{
	return uname(uts) == 0 ? uts->release : "unknown";
}

static unsigned long long diag_fd_limit(void)
{
	struct rlimit rl;

	return getrlimit(RLIMIT_NOFILE, &rl) ? 0 : (unsigned long long)rl.rlim_cur;
}

/* Descriptors open now; -1 when even /proc/self/fd cannot be opened. */
static long diag_fds_open(void)
{
	DIR *dir = opendir("/proc/self/fd");
	long n = 0;

	if (!dir)
		return -1;
	while (readdir(dir))
		n++;
	closedir(dir);
	return n - 3; /* ".", ".." and the directory's own */
}

/* Fewer descriptors left than the sampler needs (libbpf's probes fail quietly then). */
static bool diag_fds_short(void)
{
	long open_now = diag_fds_open();
	unsigned long long limit = diag_fd_limit();
	long cpus = sysconf(_SC_NPROCESSORS_CONF);

	if (open_now < 0)
		return true;
	return limit < (unsigned long long)open_now + DIAG_FDS_NEEDED + (cpus > 0 ? cpus : 1);
}

const char *sampler_diag_advice(int error, char *buf, size_t len)
{
	if (error != -EMFILE && error != -ENFILE)
		return "";
	snprintf(buf, len, ": raise `ulimit -n` (now %llu)", diag_fd_limit());
	return buf;
}

void sampler_diag_load(int error, char *err, size_t errlen)
{
	struct utsname uts;

	if (error == -EMFILE || error == -ENFILE || diag_fds_short()) {
		long cpus = sysconf(_SC_NPROCESSORS_CONF);

		snprintf(err, errlen,
			 "loading the BPF program: %s: raise `ulimit -n` (now %llu; ebprof needs "
			 "about %ld here)",
			 strerror(error == -ENFILE ? ENFILE : EMFILE), diag_fd_limit(),
			 DIAG_FDS_NEEDED + (cpus > 0 ? cpus : 1));
		return;
	}
	if ((error == -EPERM || error == -EACCES) && !diag_may_trace()) {
		snprintf(err, errlen,
			 "loading the BPF program: %s: needs CAP_BPF and CAP_PERFMON (or root)",
			 strerror(-error));
		return;
	}
	switch (-error) {
	case EACCES:
	case EINVAL:
	case ENOSYS:
	case EOPNOTSUPP:
	case E2BIG:
		snprintf(err, errlen,
			 "the kernel (%s) refused the BPF program: %s: ebprof needs Linux 5.8 or "
			 "newer (bounded loops, bpf_get_stack() of user stacks, map-in-map, "
			 "CAP_BPF); libbpf's message above says which check failed",
			 diag_kernel_release(&uts), strerror(-error));
		break;
	case ESRCH:
	case ENOENT:
		snprintf(err, errlen,
			 "the kernel's BTF (%s) lacks a field the program reads "
			 "(task_struct.group_leader, comm or mm): %s",
			 diag_kernel_release(&uts), strerror(-error));
		break;
	case ENOMEM:
		snprintf(err, errlen,
			 "loading the BPF program: out of memory: lower max_stacks/max_keys, or "
			 "raise the locked-memory limit (ulimit -l) on kernels before 5.11");
		break;
	default:
		snprintf(err, errlen, "loading the BPF program: %s", strerror(-error));
	}
}

/* An integer sysctl under /proc/sys/kernel, or fallback if unreadable. */
static int diag_sysctl(const char *name, int fallback)
{
	char path[128];
	int value;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/sys/kernel/%s", name);
	f = fopen(path, "re");
	if (!f)
		return fallback;
	if (fscanf(f, "%d", &value) != 1)
		value = fallback;
	fclose(f);
	return value;
}

void sampler_diag_privileges(struct sampler_diag_privileges *priv)
{
	priv->paranoid = diag_sysctl("perf_event_paranoid", 2);
	priv->perfmon = diag_has_cap(DIAG_CAP_PERFMON);
	priv->sys_admin = diag_has_cap(DIAG_CAP_SYS_ADMIN);
}

/*
 * A refused CPU-wide perf event, explained from what the kernel checks
 * (kernel/events/core.c): an event that counts in the kernel needs
 * CAP_PERFMON or perf_event_paranoid <= 1, a CPU-wide one CAP_PERFMON or
 * <= 0, and CAP_SYS_ADMIN implies CAP_PERFMON. Above 2 upstream adds
 * nothing, but Debian's kernels (and Android's) read 3 as "perf_event_open
 * for CAP_SYS_ADMIN only" and Debian ships 3 as the default; so a refusal
 * at 3 with CAP_PERFMON held is that patch. With what the kernel asks
 * held, only a security module or lockdown is left to blame.
 */
static void diag_perf_event_denied(int error, int cpu,
				   const struct sampler_diag_privileges *priv, char *err,
				   size_t errlen)
{
	const char *why = strerror(-error);

	if (!priv->perfmon && !priv->sys_admin && priv->paranoid <= 2) {
		snprintf(err, errlen,
			 "perf_event_open on CPU %d: %s: needs CAP_PERFMON (or root); "
			 "kernel.perf_event_paranoid is %d, and CPU-wide events without "
			 "CAP_PERFMON need 0 or less",
			 cpu, why, priv->paranoid);
	} else if (!priv->perfmon && !priv->sys_admin) {
		snprintf(err, errlen,
			 "perf_event_open on CPU %d: %s: needs CAP_PERFMON (or root); and "
			 "kernel.perf_event_paranoid is %d, which Debian's kernels reserve "
			 "to CAP_SYS_ADMIN: also set kernel.perf_event_paranoid=2 or grant "
			 "CAP_SYS_ADMIN (see contrib/systemd/ebprof.conf)",
			 cpu, why, priv->paranoid);
	} else if (!priv->sys_admin && priv->paranoid >= 3) {
		snprintf(err, errlen,
			 "perf_event_open on CPU %d: %s although CAP_PERFMON is held: "
			 "kernel.perf_event_paranoid is %d, and this kernel (Debian's do) "
			 "then allows perf_event_open only with CAP_SYS_ADMIN: set "
			 "kernel.perf_event_paranoid=2 (contrib/systemd/ebprof.conf does, for "
			 "collectd) or grant CAP_SYS_ADMIN",
			 cpu, why, priv->paranoid);
	} else {
		snprintf(err, errlen,
			 "perf_event_open on CPU %d: %s although %s is held and "
			 "kernel.perf_event_paranoid is %d: a security module (SELinux, "
			 "AppArmor) or kernel lockdown refuses perf events; the kernel or "
			 "audit log says which",
			 cpu, why, priv->sys_admin ? "CAP_SYS_ADMIN" : "CAP_PERFMON",
			 priv->paranoid);
	}
}

void sampler_diag_perf_event_as(int error, int cpu, unsigned int frequency,
				const struct sampler_diag_privileges *priv, char *err,
				size_t errlen)
{
	int max_rate = diag_sysctl("perf_event_max_sample_rate", 100000);

	/* The kernel lowers this sysctl itself when perf interrupts run long. */
	if (error == -EINVAL && max_rate >= 0 && frequency > (unsigned int)max_rate) {
		snprintf(err, errlen,
			 "perf_event_open on CPU %d: sampling frequency %u Hz is above "
			 "kernel.perf_event_max_sample_rate (%d): lower the frequency",
			 cpu, frequency, max_rate);
		return;
	}
	switch (-error) {
	case EACCES:
	case EPERM:
		diag_perf_event_denied(error, cpu, priv, err, errlen);
		break;
	case ENOENT:
	case EOPNOTSUPP:
		snprintf(err, errlen,
			 "perf_event_open on CPU %d: %s: this kernel has no software CPU-clock "
			 "event (CONFIG_PERF_EVENTS)",
			 cpu, strerror(-error));
		break;
	case EMFILE:
	case ENFILE:
		snprintf(err, errlen,
			 "perf_event_open on CPU %d: %s: raise `ulimit -n` (now %llu): ebprof "
			 "needs one descriptor per CPU",
			 cpu, strerror(-error), diag_fd_limit());
		break;
	default:
		snprintf(err, errlen, "perf_event_open on CPU %d: %s", cpu, strerror(-error));
	}
}

void sampler_diag_perf_event(int error, int cpu, unsigned int frequency, char *err, size_t errlen)
{
	struct sampler_diag_privileges priv;

	sampler_diag_privileges(&priv);
	sampler_diag_perf_event_as(error, cpu, frequency, &priv, err, errlen);
}
