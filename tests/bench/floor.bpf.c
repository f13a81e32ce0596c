// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The benchmark floors: programs that do nothing. bench_floor, a
 * perf_event program, attached by floor.c to the same CPU-clock event, on
 * every CPU, at the same frequency as ebprof's sampler, costs exactly the
 * sampling interrupt and one BPF dispatch. No profiler can cost less, so
 * the benchmark reports every profiler's slowdown above this one.
 * bench_switch_floor, on the scheduler's switch (tp_btf/sched_switch, as
 * ebprof's off-CPU program), costs the tracepoint's call into BPF and the
 * kernel's run-time accounting: the off-CPU section states ebprof's cost
 * per switch above it, both measured in the same ping-pong.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual MIT/GPL";

SEC("perf_event")
int bench_floor(void *ctx)
{
	return 0;
}

SEC("tp_btf/sched_switch")
int bench_switch_floor(void *ctx)
{
	return 0;
}
