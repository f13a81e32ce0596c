// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The kernel half of the sampler: a perf_event program that runs on every
 * CPU-clock tick of every CPU and counts what the CPU was doing.
 *
 * Each run decides whether the task is wanted (idle, self, PID and name
 * filters, all set before load), copies its kernel and user stacks into a
 * per-CPU scratch buffer, names each stack by a 64-bit hash of its frames,
 * and adds one to the count of the (process, kernel stack, user stack)
 * key. Only a key the counts map has not seen yet stores its stacks (once
 * each, under their hashes) in the stacks map. User space reads the counts
 * and stacks maps after swapping them out (see ebprof.h), turns the
 * addresses into names, and folds them into profiles.
 *
 * A sample costs what it touches, and in a guest every cold cache line is
 * dear, so the common case touches little: the process's name, start time
 * and filter verdict are kept per CPU for the task that ran last (a busy
 * CPU mostly sees the same task again), and a stack pair counted before in
 * this drain costs one counts-map lookup.
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
/*
 * Byte offsets in struct task_struct, read by user space from the kernel's
 * BTF (bpf/kbtf.c) and fixed at load. Not CO-RE relocations: for those
 * libbpf would load the whole kernel BTF into user space's memory.
 */
const volatile __u32 off_group_leader = 0;
const volatile __u32 off_comm = 0;
const volatile __u32 off_start_boottime = 0;
const volatile __u32 off_mm = 0;

/*
 * Bumped whenever a cached task may have changed under the cache: by a
 * rename or an exec (new name, new mappings), and by user space when it
 * changes the PID filter. Read without ordering: a sample that misses a bump by a few
 * ns uses the old name once.
 */
__u64 cache_gen = 0;

/* One slot per CPU: see struct ebprof_cpu. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ebprof_cpu);
} cpus SEC(".maps");

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

/* Per-CPU, and perf_event programs do not nest on one CPU: no atomic. */
static __always_inline void stat_add(struct ebprof_cpu *c, __u32 index)
{
	if (index < EBPROF_STAT_NR)
		c->stats[index] += 1;
}

/*
 * A multiply-xorshift mix over the frames actually returned, seeded with
 * their number: two lanes over even and odd frames, so that the CPU runs
 * two multiply chains at once, joined at the end. Not cryptographic: a
 * collision is caught (roughly) by the check in stack_store() and counted.
 */
static __always_inline __u64 stack_hash(const struct ebprof_stack *stack)
{
	__u64 a = 0x9e3779b97f4a7c15ULL ^ stack->nr, b = 0x6a09e667f3bcc909ULL;
	__u32 nr = (__u32)stack->nr;

	for (__u32 i = 0; i + 1 < EBPROF_MAX_DEPTH; i += 2) {
		if (i >= nr)
			break;
		a ^= stack->ips[i];
		a *= 0xff51afd7ed558ccdULL;
		a ^= a >> 32;
		if (i + 1 >= nr)
			break;
		b ^= stack->ips[i + 1];
		b *= 0xc4ceb9fe1a85ec53ULL;
		b ^= b >> 32;
	}
	/* EBPROF_MAX_DEPTH is odd: the loop stops before the last frame. */
	if (nr == EBPROF_MAX_DEPTH)
		b ^= stack->ips[EBPROF_MAX_DEPTH - 1];
	a ^= b * 0x9e3779b97f4a7c15ULL;
	a ^= a >> 29;
	a *= 0xc4ceb9fe1a85ec53ULL;
	a ^= a >> 32;
	return a ? a : 1;
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

/* The stack's hash, 0 for an empty stack. */
static __always_inline __u64 stack_id(const struct ebprof_stack *stack)
{
	if (stack->nr == 0 || stack->nr > EBPROF_MAX_DEPTH)
		return 0;
	return stack_hash(stack);
}

/*
 * Stores the stack under its hash (id, not 0) unless it is already there.
 * Returns 0, or the stats index of the loss.
 */
static __always_inline __u32 stack_store(void *map, const struct ebprof_stack *stack, __u64 id)
{
	const struct ebprof_stack *seen;
	__u64 last = stack->nr - 1;
	long err;

	if (id == 0 || last >= EBPROF_MAX_DEPTH)
		return 0;
	seen = bpf_map_lookup_elem(map, &id);
	if (!seen) {
		err = bpf_map_update_elem(map, &id, stack, BPF_NOEXIST);
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

/*
 * Whether the tick interrupted user code. Where the registers do not say
 * it cheaply, "no": bpf_get_stack() then finds no kernel frames itself.
 */
static __always_inline bool in_user_mode(const struct bpf_perf_event_data *ctx)
{
#if defined(__TARGET_ARCH_x86)
	/*
	 * The CPL is the low two bits of cs, the 18th word of x86-64's user
	 * ABI struct pt_regs (asm/ptrace.h), which is what the context holds;
	 * any CPL above 0 is user mode, as the kernel's user_mode() says. The
	 * kernel's own pt_regs declares cs as 16 bits, and the verifier only
	 * allows whole words of the context: read the word.
	 */
	const __u64 *regs = (const __u64 *)ctx;

	return (regs[17] & 3) != 0;
#else
	return false;
#endif
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
 * Reports the process unless it was reported under this start time, and
 * returns whether it now stands reported. It is marked as reported only
 * once the report is in the ring buffer, so a full buffer delays the
 * report to the next sample rather than losing it.
 */
static __always_inline bool report_process(struct ebprof_cpu *s)
{
	__u32 tgid = s->key.tgid;
	__u64 start_time = s->key.start_time;
	struct ebprof_process_event *event;
	__u64 *seen = bpf_map_lookup_elem(&reported, &tgid);

	if (seen && *seen == start_time)
		return true;
	event = bpf_ringbuf_reserve(&process_events, sizeof(*event), 0);
	if (!event) {
		stat_add(s, EBPROF_STAT_PROCESS_EVENTS_LOST);
		return false;
	}
	event->tgid = tgid;
	event->pad = 0;
	event->start_time = start_time;
	event->sampled_at = bpf_ktime_get_boot_ns();
	__builtin_memcpy(event->comm, s->key.comm, EBPROF_COMM_LEN);
	bpf_ringbuf_submit(event, 0);
	bpf_map_update_elem(&reported, &tgid, &start_time, BPF_ANY);
	stat_add(s, EBPROF_STAT_PROCESS_EVENTS);
	return true;
}

/*
 * Fills the per-CPU cache for the current task: the process's name (a
 * thread's own comm may be renamed, "worker-3"), its start time, whether
 * it has user memory, and the filter verdict.
 */
static __always_inline __u64 task_word(__u64 task, __u32 offset)
{
	__u64 word = 0;

	bpf_probe_read_kernel(&word, sizeof(word), (const void *)(task + offset));
	return word;
}

static __always_inline void task_describe(struct ebprof_cpu *s, __u64 task, __u64 pid_tgid,
					  __u64 gen)
{
	__u64 leader = task_word(task, off_group_leader);
	__u32 tgid = pid_tgid >> 32;

	s->task_addr = task;
	s->pid_tgid = pid_tgid;
	s->gen = gen;
	s->key.tgid = tgid;
	s->key.pad = 0;
	__builtin_memset(s->key.comm, 0, sizeof(s->key.comm));
	bpf_probe_read_kernel_str(s->key.comm, sizeof(s->key.comm),
				  (const void *)(leader + off_comm));
	s->key.start_time = task_word(leader, off_start_boottime);
	s->user = task_word(task, off_mm) != 0;
	s->wanted = task_wanted(tgid, s->key.comm);
	/* Kernel threads have no mappings to read. */
	s->reported = !(report_processes && s->wanted && s->user);
}

/* Adds one to the key's count. Returns 0 if it was there, 1 if it is new. */
static __always_inline int count_add(void *map, const struct ebprof_key *key)
{
	__u64 *count = bpf_map_lookup_elem(map, key);

	if (!count)
		return 1;
	__sync_fetch_and_add(count, 1);
	return 0;
}

/* Inserts a new key with a count of one. Returns 0, or the stats index. */
static __always_inline __u32 count_insert(void *map, const struct ebprof_key *key)
{
	__u64 one = 1;
	long err;

	err = bpf_map_update_elem(map, key, &one, BPF_NOEXIST);
	if (!err)
		return 0;
	/* -EEXIST: another CPU inserted the key since our lookup. */
	if (err == -EBPROF_EEXIST && count_add(map, key) == 0)
		return 0;
	return EBPROF_STAT_COUNTS_FULL;
}

SEC("perf_event")
int ebprof_sample(struct bpf_perf_event_data *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), gen = cache_gen;
	__u64 task = bpf_get_current_task();
	void *stack_map, *count_map;
	__u32 zero = 0, loss = 0;
	struct ebprof_cpu *s;

	s = bpf_map_lookup_elem(&cpus, &zero);
	if (!s)
		return 0; /* cannot happen: a one-slot per-CPU array */
	stat_add(s, EBPROF_STAT_SAMPLES);
	if ((__u32)pid_tgid == 0 && !include_idle) {
		/* Whatever task runs next here, it is read afresh. */
		s->task_addr = 0;
		stat_add(s, EBPROF_STAT_IDLE);
		return 0;
	}
	if (s->task_addr != task || s->pid_tgid != pid_tgid || s->gen != gen)
		task_describe(s, task, pid_tgid, gen);
	if (!s->wanted) {
		stat_add(s, EBPROF_STAT_FILTERED);
		return 0;
	}
	if (!s->reported)
		s->reported = report_process(s);

	s->kstack.nr = 0;
	s->ustack.nr = 0;
	/* A tick that interrupted user code has no kernel stack: skip the call. */
	if (kernel_stacks && !in_user_mode(ctx) && stack_read(ctx, &s->kstack, 0)) {
		stat_add(s, EBPROF_STAT_KSTACK_ERR);
		return 0;
	}
	/* Kernel threads have no user stack, and that is not an error. */
	if (user_stacks && s->user && stack_read(ctx, &s->ustack, BPF_F_USER_STACK)) {
		stat_add(s, EBPROF_STAT_USTACK_ERR);
		return 0;
	}
	s->key.kstack = stack_id(&s->kstack);
	s->key.ustack = stack_id(&s->ustack);

	count_map = bpf_map_lookup_elem(&counts, &zero);
	if (!count_map)
		return 0; /* cannot happen: the slot always holds a map */
	/*
	 * A key already counted in this counts map had its stacks stored in the
	 * stacks map of the same drain: the slots are swapped stacks first, each
	 * swap waiting for running programs, so a program that sees the new
	 * counts map also sees the new stacks map.
	 */
	if (count_add(count_map, &s->key)) {
		stack_map = bpf_map_lookup_elem(&stacks, &zero);
		if (!stack_map)
			return 0; /* cannot happen */
		loss = stack_store(stack_map, &s->kstack, s->key.kstack);
		if (!loss)
			loss = stack_store(stack_map, &s->ustack, s->key.ustack);
		if (!loss)
			loss = count_insert(count_map, &s->key);
	}
	stat_add(s, loss ? loss : EBPROF_STAT_RECORDED);
	return 0;
}

/*
 * After an exec the process has a new name and new mappings: drop every
 * CPU's cached task, and forget that the process was reported, so that its
 * next sample reports it again. A raw tracepoint needs no tracefs mount.
 */
SEC("raw_tp/sched_process_exec")
int ebprof_exec(void *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	__sync_fetch_and_add(&cache_gen, 1);
	if (report_processes)
		bpf_map_delete_elem(&reported, &tgid);
	return 0;
}

/*
 * A renamed task (prctl(PR_SET_NAME), a write to /proc/PID/comm, an exec)
 * may be cached on some CPU under its old name: drop every CPU's cache.
 */
SEC("raw_tp/task_rename")
int ebprof_rename(void *ctx)
{
	__sync_fetch_and_add(&cache_gen, 1);
	return 0;
}
