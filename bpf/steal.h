/*
 * steal: the time a hypervisor ran something else on this guest's CPUs
 * ("steal" in /proc/stat). A CPU-clock tick that falls due while the
 * virtual CPU is held back fires once, late, when it runs again, and the
 * periods in between have no sample: the task that was running loses
 * that wall time from its on-CPU samples. The sampler reads the total at
 * its start so that a recording can say how much it lost so (0 on bare
 * metal, or on a hypervisor that does not report it).
 */
#ifndef EBPROF_BPF_STEAL_H
#define EBPROF_BPF_STEAL_H

#include <stdint.h>

/*
 * Reads the steal of all CPUs, in clock ticks (USER_HZ), from the text of
 * /proc/stat (its "cpu " line, the eighth value). Returns 0 and sets
 * *ticks, or -EINVAL when the text has no such line or the value is not a
 * number. A kernel older than 2.6.11 has no eighth value: that is 0.
 */
int steal_parse(const char *text, uint64_t *ticks);

/* The same from /proc/stat, in ns. Returns 0, or -errno (-EINVAL: unreadable text). */
int steal_read_ns(uint64_t *ns);

#endif
