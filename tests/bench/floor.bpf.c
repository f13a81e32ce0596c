// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The benchmark floor: a perf_event program that does nothing. Attached by
 * floor.c to the same CPU-clock event, on every CPU, at the same frequency
 * as ebprof's sampler, it costs exactly the sampling interrupt and one BPF
 * dispatch. No profiler can cost less, so the benchmark reports every
 * profiler's slowdown above this one.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual MIT/GPL";

SEC("perf_event")
int bench_floor(void *ctx)
{
	return 0;
}
