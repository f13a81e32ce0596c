// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The kernel half of the sampler: a perf_event program that runs on every
 * CPU-clock tick of every CPU and counts what the CPU was doing.
 *
 * Each run decides whether the task is wanted (idle, self, PID and name
 * filters, all set before load), copies its kernel and user stacks into a
 * per-CPU scratch buffer, names each stack by a 64-bit hash of its frames,
 * stores the stack once under that hash, and adds one to the count of the
 * (process, thread, kernel stack, user stack) key. User space reads the
 * counts and stacks maps after swapping them out (see ebprof.h), turns the
 * addresses into names, and folds them into profiles.
 *
 * Every way a sample can end is counted in the per-CPU stats array, so
 * samples = recorded + filtered + idle + each loss.
 *
 * When user space asks for it, a process sampled for the first time is
 * also reported at once through a ring buffer, so that user space reads
 * its mappings while it still runs: a compiler in a build may exit long
 * before the next drain. An LRU map of the processes already reported
 * (by tgid, with the start time that tells a reused PID apart) keeps that
 * to one report per process; an exec forgets the process, so its next
 * sample reports it again with its new mappings.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "bpf/ebprof.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* errno values are #defines, which vmlinux.h cannot carry. */
#define EBPROF_EEXIST 17

/* Set by user space before load; the verifier prunes what they disable. */
const volatile __u32 filter_flags = 0;
const volatile __u32 self_tgid = 0; /* 0: do not exclude any process */
const volatile bool include_idle = false;
const volatile bool kernel_stacks = true;
const volatile bool user_stacks = true;
const volatile bool report_processes = false;

struct scratch {
	struct ebprof_stack kstack;
	struct ebprof_stack ustack;
	struct ebprof_key key;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, EBPROF_STAT_NR);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/* Filters: present in the map means wanted. Sizes are set by user space. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u8);
} tgids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, char[EBPROF_COMM_LEN]);
	__type(value, __u8);
} comms SEC(".maps");

/* Processes already reported: tgid -> start time. Sizes set by user space. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} reported SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} process_events SEC(".maps");

/*
 * The inner maps: two of each, A and B, so that user space always has an
 * empty pair to swap in. User space sets their sizes and flags before load;
 * the template in each outer map below must match them in type, key and
 * value size and flags (the kernel's bpf_map_meta_equal()), not in size.
 */
struct counts_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct ebprof_key);
	__type(value, __u64);
};

struct stacks_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);
	__type(value, struct ebprof_stack);
};

struct counts_map counts_a SEC(".maps");
struct counts_map counts_b SEC(".maps");
struct stacks_map stacks_a SEC(".maps");
struct stacks_map stacks_b SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct counts_map);
} counts SEC(".maps") = {
	.values = { &counts_a },
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct stacks_map);
} stacks SEC(".maps") = {
	.values = { &stacks_a },
};

static __always_inline void stat_add(__u32 index)
{
	__u64 *value = bpf_map_lookup_elem(&stats, &index);

	/* Per-CPU, and perf_event programs do not nest on one CPU: no atomic. */
	if (value)
		*value += 1;
}

/*
 * A multiply-xorshift mix over the frames actually returned, seeded with
 * their number. Not cryptographic: a collision is caught (roughly) by the
 * check in stack_store() and counted.
 */
static __always_inline __u64 stack_hash(const struct ebprof_stack *stack)
{
	__u64 h = 0x9e3779b97f4a7c15ULL ^ stack->nr;

	for (__u32 i = 0; i < EBPROF_MAX_DEPTH; i++) {
		if (i >= stack->nr)
			break;
		h ^= stack->ips[i];
		h *= 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	h ^= h >> 29;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 32;
	return h ? h : 1;
}

/*
 * Fills stack->nr from bpf_get_stack(). Returns 0, or a negative error that
 * the caller counts as a loss.
 */
static __always_inline int stack_read(void *ctx, struct ebprof_stack *stack, __u64 flags)
{
	long bytes = bpf_get_stack(ctx, stack->ips, sizeof(stack->ips), flags);

	if (bytes < 0)
		return (int)bytes;
	stack->nr = (__u64)bytes / sizeof(stack->ips[0]);
	return 0;
}

/*
 * Stores the stack under its hash unless it is already there, and sets
 * *hash (0 for an empty stack). Returns 0, or the stats index of the loss.
 */
static __always_inline __u32 stack_store(void *map, const struct ebprof_stack *stack, __u64 *hash)
{
	const struct ebprof_stack *seen;
	__u64 last;
	long err;

	*hash = 0;
	if (stack->nr == 0)
		return 0;
	last = stack->nr - 1;
	if (last >= EBPROF_MAX_DEPTH)
		return 0;
	*hash = stack_hash(stack);
	seen = bpf_map_lookup_elem(map, hash);
	if (!seen) {
		err = bpf_map_update_elem(map, hash, stack, BPF_NOEXIST);
		/* -EEXIST: another CPU stored the same stack first. */
		if (err && err != -EBPROF_EEXIST)
			return EBPROF_STAT_STACKS_FULL;
		return 0;
	}
	/* Not a full compare: three loads catch nearly every collision. */
	if (seen->nr != stack->nr || seen->ips[0] != stack->ips[0] ||
	    seen->ips[last] != stack->ips[last])
		return EBPROF_STAT_COLLISION;
	return 0;
}

static __always_inline bool task_wanted(__u32 tgid, const char *comm)
{
	if (self_tgid && tgid == self_tgid)
		return false;
	if (!filter_flags)
		return true;
	if ((filter_flags & EBPROF_FILTER_TGID) && bpf_map_lookup_elem(&tgids, &tgid))
		return true;
	if ((filter_flags & EBPROF_FILTER_COMM) && bpf_map_lookup_elem(&comms, comm))
		return true;
	return false;
}

/*
 * Reports the process unless it was reported under this start time. It is
 * marked as reported only once the report is in the ring buffer, so a full
 * buffer delays the report to the next sample rather than losing it.
 */
static __always_inline void report_process(__u32 tgid, __u64 start_time, const char *comm)
{
	struct ebprof_process_event *event;
	__u64 *seen = bpf_map_lookup_elem(&reported, &tgid);

	if (seen && *seen == start_time)
		return;
	event = bpf_ringbuf_reserve(&process_events, sizeof(*event), 0);
	if (!event) {
		stat_add(EBPROF_STAT_PROCESS_EVENTS_LOST);
		return;
	}
	event->tgid = tgid;
	event->pad = 0;
	event->start_time = start_time;
	event->sampled_at = bpf_ktime_get_boot_ns();
	__builtin_memcpy(event->comm, comm, EBPROF_COMM_LEN);
	bpf_ringbuf_submit(event, 0);
	bpf_map_update_elem(&reported, &tgid, &start_time, BPF_ANY);
	stat_add(EBPROF_STAT_PROCESS_EVENTS);
}

static __always_inline int count_key(void *map, const struct ebprof_key *key)
{
	__u64 one = 1, *count;
	long err;

	count = bpf_map_lookup_elem(map, key);
	if (count) {
		__sync_fetch_and_add(count, 1);
		return 0;
	}
	err = bpf_map_update_elem(map, key, &one, BPF_NOEXIST);
	if (!err)
		return 0;
	if (err != -EBPROF_EEXIST)
		return -EBPROF_STAT_COUNTS_FULL;
	/* Another CPU inserted the key between our lookup and update. */
	count = bpf_map_lookup_elem(map, key);
	if (!count)
		return -EBPROF_STAT_COUNTS_FULL;
	__sync_fetch_and_add(count, 1);
	return 0;
}

SEC("perf_event")
int ebprof_sample(struct bpf_perf_event_data *ctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u64 id = bpf_get_current_pid_tgid();
	__u32 zero = 0, tgid = id >> 32, pid = (__u32)id;
	void *stack_map, *count_map;
	struct scratch *s;
	__u32 loss;

	stat_add(EBPROF_STAT_SAMPLES);
	if (pid == 0 && !include_idle) {
		stat_add(EBPROF_STAT_IDLE);
		return 0;
	}
	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return 0;
	__builtin_memset(&s->key, 0, sizeof(s->key));
	/* The process name: a thread's own comm may be renamed ("worker-3"). */
	BPF_CORE_READ_STR_INTO(&s->key.comm, task, group_leader, comm);
	if (!task_wanted(tgid, s->key.comm)) {
		stat_add(EBPROF_STAT_FILTERED);
		return 0;
	}
	s->key.tgid = tgid;
	s->key.pid = pid;
	s->key.start_time = BPF_CORE_READ(task, group_leader, start_boottime);
	/* Kernel threads have no mappings to read. */
	if (report_processes && BPF_CORE_READ(task, mm))
		report_process(tgid, s->key.start_time, s->key.comm);

	s->kstack.nr = 0;
	s->ustack.nr = 0;
	if (kernel_stacks && stack_read(ctx, &s->kstack, 0)) {
		stat_add(EBPROF_STAT_KSTACK_ERR);
		return 0;
	}
	/* Kernel threads have no user stack, and that is not an error. */
	if (user_stacks && BPF_CORE_READ(task, mm) &&
	    stack_read(ctx, &s->ustack, BPF_F_USER_STACK)) {
		stat_add(EBPROF_STAT_USTACK_ERR);
		return 0;
	}

	stack_map = bpf_map_lookup_elem(&stacks, &zero);
	count_map = bpf_map_lookup_elem(&counts, &zero);
	if (!stack_map || !count_map)
		return 0;
	loss = stack_store(stack_map, &s->kstack, &s->key.kstack);
	if (!loss)
		loss = stack_store(stack_map, &s->ustack, &s->key.ustack);
	if (!loss && count_key(count_map, &s->key))
		loss = EBPROF_STAT_COUNTS_FULL;
	stat_add(loss ? loss : EBPROF_STAT_RECORDED);
	return 0;
}

/*
 * After an exec the process has new mappings: forget that it was reported,
 * so that its next sample reports it again. A raw tracepoint needs no
 * tracefs mount.
 */
SEC("raw_tp/sched_process_exec")
int ebprof_exec(void *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	if (report_processes)
		bpf_map_delete_elem(&reported, &tgid);
	return 0;
}
