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
 * User stacks come from the kernel's frame-pointer walk (bpf_get_stack),
 * or, with unwind tables (unwind_mode), from our own walk (bpf/unwind.h),
 * a bpf_loop() over frames: find the pc's mapping among the process's
 * (sent by user space, sorted, binary search), its table (a map in the
 * tables array), the row at the pc, and apply the row's rule. Files with
 * no table are walked by frame pointer. A process whose tables are not
 * ready has its registers and the top of its stack copied to the ring
 * buffer for user space to unwind later, so that no sample of a
 * short-lived process is cut short.
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

/* bpf/unwind.h's accessors: user memory, table words, rules. */
#define UNW_INLINE static __always_inline
#define UNW_READ(env, dst, addr) unw_read((env), (dst), (addr))
#define UNW_WORD(table, i, dst) unw_word((table), (i), (dst))
#define UNW_RULE(env, i) bpf_map_lookup_elem(&unw_rules, &(i))
/*
 * x, masked by a word the verifier cannot know (a writable global's),
 * which leaves x's value as it was and the verifier knowing only its
 * width: states that differed only in what was known of x are then
 * one state. The asm keeps the mask where it is written, at the end of a
 * loop's round.
 */
volatile __u64 unw_all_ones = ~0ULL;
#define UNW_FORGET(x) asm volatile("%0 &= %1" : "+r"(x) : "r"((__typeof__(x))unw_all_ones))

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
const volatile __u32 unwind_mode = EBPROF_UNWIND_FP;
const volatile __u32 max_frames = EBPROF_DEFAULT_FRAMES; /* table unwinder, <= EBPROF_MAX_FRAMES */
const volatile bool copy_samples = false; /* copy samples of processes without tables */
/* A copy is sent only while the ring buffer holds less than this: room stays for reports. */
const volatile __u64 copy_ring_limit = 0;
/* Tests only: copy every Nth walked sample with its frames, for an independent unwinder. */
const volatile __u32 oracle_every = 0;
/*
 * Byte offsets in struct task_struct, read by user space from the kernel's
 * BTF (bpf/kbtf.c) and fixed at load. Not CO-RE relocations: for those
 * libbpf would load the whole kernel BTF into user space's memory.
 */
const volatile __u32 off_group_leader = 0;
const volatile __u32 off_comm = 0;
const volatile __u32 off_start_boottime = 0;
const volatile __u32 off_mm = 0;
/* task_struct's tgid and pid: read in place, no helper call. */
const volatile __u32 off_tgid = 0;
const volatile __u32 off_pid = 0;
/*
 * Whether a new process is a fork that has not exec'd, so that user space
 * can lend it its parent's maps rather than read them (report_parent()):
 * task_struct's real_parent, parent_exec_id and self_exec_id (u64 since
 * 5.7, older than any kernel this program loads on), and mm_struct's
 * exe_file. off_real_parent 0: this kernel's BTF lacks one of them.
 */
const volatile __u32 off_real_parent = 0;
const volatile __u32 off_parent_exec_id = 0;
const volatile __u32 off_self_exec_id = 0;
const volatile __u32 off_exe_file = 0;
/*
 * task_struct.in_execve, a bitfield: its byte, and its bit in that byte
 * (0: this kernel has none). Set while an exec replaces the memory.
 */
const volatile __u32 off_in_execve = 0;
const volatile __u8 in_execve_mask = 0;
/* In struct mm_struct: where the main thread's stack began (its argc, at exec). */
const volatile __u32 off_start_stack = 0;
/* task_struct.thread.fsbase, for the Python walk's thread state (0: no Python walk). */
const volatile __u32 off_fsbase = 0;
/* Walk CPython frames of the processes in py_procs (bpf/python.bpf.h). */
const volatile bool python_frames = false;

/*
 * A PID filter that cannot change while sampling (sampler_config's
 * tgids_fixed), when it has up to EBPROF_FAST_TGIDS PIDs: their number,
 * and the PIDs, unused slots repeating the first. 0: see fast_filter.
 */
const volatile __u32 n_fixed_tgids = 0;
const volatile __u32 fixed_tgids[EBPROF_FAST_TGIDS] = { 0 };

/*
 * Bumped whenever a cached task may have changed under the cache: by a
 * rename or an exec (new name, new mappings), and by user space when it
 * changes the PID filter. Read without ordering: a sample that misses a bump by a few
 * ns uses the old name once.
 */
__u64 cache_gen = 0;

/*
 * Bumped by user space after every change to unw_procs or py_procs: each
 * CPU keeps what it last looked up there (struct ebprof_cpu's walk_*)
 * until the process it walks or this number changes.
 */
__u64 unw_gen = 0;

/*
 * The generation samples count in: its low bit is the pair of counts and
 * stacks maps they go to (the slot of both outer maps below), and the
 * CPUs' pending slots of it are tagged active_gen + 1. User space moves it
 * on by one at every drain, then waits once for the programs still
 * running (see sampler_swap()). A program reads it once, so that its
 * count and its stacks go to the same pair.
 */
__u64 active_gen = 0;

/*
 * The PID filter as an array, for the check every sample makes first
 * (tgid_rejected()). Written by user space before load and when the filter
 * changes; a section of its own, so that cache_gen's writes (on every exec
 * of the machine) do not evict it from the CPUs' caches.
 */
struct ebprof_fast_filter fast_filter SEC(".data.filter") = { 0 };

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

/* One slot per possible CPU (size set by user space): see struct ebprof_scratch. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ebprof_scratch);
} scratch SEC(".maps");

/*
 * The unwind tables (bpf/ebprof.h), filled by user space
 * (symbolizer/unwinder.c through bpf/unwmaps.c): per process its
 * mappings, per file a table (an array of words of its own size: no
 * padding), and the rules all tables share. Sizes are set by user space.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct ebprof_unw_proc);
} unw_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE); /* written by user space with memcpy (unwmaps.c) */
	__type(key, __u32);
	__type(value, struct ebprof_unw_mapping);
} unw_mappings SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, EBPROF_UNW_MAX_RULES);
	__type(key, __u32);
	__type(value, struct ebprof_unw_rule);
} unw_rules SEC(".maps");

/* Per process, its CPython layout (struct ebprof_py_proc), loaded by user space. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct ebprof_py_proc);
} py_procs SEC(".maps");

/* See struct ebprof_rule_cache. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ebprof_rule_cache);
} rule_cache SEC(".maps");

/* The template of every table: the same type, flags and element size, any length. */
struct unw_table_map {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_INNER_MAP | BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u64); /* two words: see unw_word() */
};

struct unw_table_map unw_table_template SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct unw_table_map);
} unw_tables SEC(".maps") = {
	.values = { &unw_table_template },
};

/*
 * The inner maps: two of each, A and B, so that user space always has an
 * empty pair to swap in: slot 0 of each outer map below holds A, slot 1
 * B, for the whole run, and active_gen says which pair samples go to.
 * User space sets their sizes and flags before load; A must match B in
 * type, key and value size and flags (the kernel's bpf_map_meta_equal()),
 * not in size.
 */
struct counts_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct ebprof_key);
	__type(value, __u64);
};

/* Stacks, in chunks of EBPROF_CHUNK_FRAMES frames (struct ebprof_chunk). */
struct stacks_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct ebprof_chunk_key);
	__type(value, struct ebprof_chunk);
};

struct counts_map counts_a SEC(".maps");
struct counts_map counts_b SEC(".maps");
struct stacks_map stacks_a SEC(".maps");
struct stacks_map stacks_b SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 2);
	__type(key, __u32);
	__array(values, struct counts_map);
} counts SEC(".maps") = {
	.values = { &counts_a, &counts_b },
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 2);
	__type(key, __u32);
	__array(values, struct stacks_map);
} stacks SEC(".maps") = {
	.values = { &stacks_a, &stacks_b },
};

/*
 * Each CPU's last keys and their counts (struct ebprof_pending): slots
 * [0, EBPROF_PENDING_SLOTS) for pair A, the rest for pair B. Written
 * without atomics, like the stats: the programs that count (the
 * CPU-clock one, and the off-CPU ones, which run with interrupts off) do
 * not nest on one CPU.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2 * EBPROF_PENDING_SLOTS);
	__type(key, __u32);
	__type(value, struct ebprof_pending);
} pending SEC(".maps");

/* Per-CPU, and perf_event programs do not nest on one CPU: no atomic. */
static __always_inline void stat_add(struct ebprof_cpu *c, __u32 index)
{
	/*
	 * The barrier makes clang bound-check the very register it indexes
	 * with; 64 bits wide, so that no zero-extension after it makes a
	 * second copy the verifier cannot tie to the checked one.
	 */
	__u64 i = index;

	asm volatile("" : "+r"(i));
	if (i < EBPROF_STAT_NR)
		c->stats[i] += 1;
}

/* stat_add() by n: off-CPU samples come several at a time. */
static __always_inline void stat_addn(struct ebprof_cpu *c, __u32 index, __u64 n)
{
	__u64 i = index;

	asm volatile("" : "+r"(i));
	if (i < EBPROF_STAT_NR)
		c->stats[i] += n;
}

/*
 * A multiply-xorshift mix of one frame into a running hash: two lanes,
 * for even and odd frames, joined at the end (stack_hash_end), so that
 * the CPU runs two multiply chains at once. Not cryptographic: a
 * collision is caught (roughly) by the check in stack_store() and
 * counted.
 */
static __always_inline void stack_hash_add(struct ebprof_hash *h, __u64 i, __u64 ip)
{
	if (i & 1) {
		h->b ^= ip;
		h->b *= 0xc4ceb9fe1a85ec53ULL;
		h->b ^= h->b >> 32;
	} else {
		h->a ^= ip;
		h->a *= 0xff51afd7ed558ccdULL;
		h->a ^= h->a >> 32;
	}
}

static __always_inline __u64 stack_hash_end(struct ebprof_hash *h)
{
	__u64 a = h->a ^ h->b * 0x9e3779b97f4a7c15ULL;

	a ^= a >> 29;
	a *= 0xc4ceb9fe1a85ec53ULL;
	a ^= a >> 32;
	a &= ~EBPROF_COPY_ID; /* that bit marks an off-CPU copy's id (ebprof.h) */
	return a ? a : 1;
}

struct hash_ctx {
	const __u64 *ips; /* in the scratch space, which has room past it for the mask below */
	__u32 nr;	  /* frames: at most ips' entries */
	struct ebprof_hash h;
};

/* Frames hashed a bpf_loop() round: each round is a call, which costs more than a frame. */
#define HASH_PER_ROUND 4

static long hash_frames(__u32 k, void *arg)
{
	struct hash_ctx *c = arg;
	__u32 i = k * HASH_PER_ROUND;

#pragma clang loop unroll(full)
	for (int j = 0; j < HASH_PER_ROUND; j++, i++) {
		if (i >= c->nr)
			return 1;
		stack_hash_add(&c->h, i, c->ips[i & (EBPROF_MAX_FRAMES - 1)]);
	}
	return 0;
}

/* The hash of nr frames of ips (of cap entries), seeded with nr; 0 for none. */
static __always_inline __u64 stack_id(const __u64 *ips, __u64 nr, __u32 cap)
{
	struct hash_ctx c = {
		.ips = ips,
		.nr = (__u32)nr,
		.h = { 0x9e3779b97f4a7c15ULL ^ nr, 0x6a09e667f3bcc909ULL },
	};

	if (nr == 0 || nr > cap)
		return 0;
	bpf_loop(((__u32)nr + HASH_PER_ROUND - 1) / HASH_PER_ROUND, hash_frames, &c, 0);
	return stack_hash_end(&c.h);
}

/*
 * Fills stack->nr from bpf_get_stack(). Returns 0, or a negative error that
 * the caller counts as a loss.
 */
static __always_inline int stack_read(void *ctx, __u64 *ips, __u64 *nr, __u32 size,
				      __u64 flags)
{
	long bytes = bpf_get_stack(ctx, ips, size, flags);

	if (bytes < 0)
		return (int)bytes;
	*nr = (__u64)bytes / sizeof(ips[0]);
	return 0;
}

struct store_ctx {
	void *map;
	struct ebprof_chunk *chunk; /* the CPU's scratch chunk */
	const __u64 *ips; /* EBPROF_MAX_FRAMES entries, or more */
	__u64 id;
	__u32 nr;
	__u32 n_chunks;
	__u32 loss;
};

/*
 * Stores the stack's chunks last first, so that chunk 0, which says the
 * stack is stored, goes in only when all the others did; stops on a loss.
 */
static long store_chunk(__u32 k, void *arg)
{
	struct store_ctx *c = arg;
	__u32 i = c->n_chunks - 1 - k;
	struct ebprof_chunk_key key = { .id = c->id, .index = i };
	struct ebprof_chunk *chunk = c->chunk;
	__u32 at = (i & (EBPROF_MAX_CHUNKS - 1)) * EBPROF_CHUNK_FRAMES;
	long err;

	chunk->nr = c->nr;
	chunk->pad = 0;
	__builtin_memcpy(chunk->ips, &c->ips[at], sizeof(chunk->ips));
	err = bpf_map_update_elem(c->map, &key, chunk, BPF_NOEXIST);
	/* -EEXIST: another CPU stored the same stack first. */
	if (err && err != -EBPROF_EEXIST) {
		c->loss = EBPROF_STAT_STACKS_FULL;
		return 1;
	}
	return 0;
}

/*
 * Stores the stack of nr frames under its id (not 0) unless it is already
 * there, through the scratch chunk. ips has room for EBPROF_MAX_FRAMES.
 * Returns 0, or the stats index of the loss.
 */
static __always_inline __u32 stack_store(void *map, struct ebprof_chunk *chunk, const __u64 *ips,
					 __u64 nr, __u64 id)
{
	struct ebprof_chunk_key key = { .id = id };
	struct store_ctx c = { .map = map, .chunk = chunk, .ips = ips, .id = id,
			       .nr = (__u32)nr };
	const struct ebprof_chunk *seen;
	__u32 last;

	if (id == 0 || nr == 0 || nr > EBPROF_MAX_FRAMES)
		return 0;
	seen = bpf_map_lookup_elem(map, &key);
	if (!seen) {
		c.n_chunks = (__u32)((nr + EBPROF_CHUNK_FRAMES - 1) / EBPROF_CHUNK_FRAMES);
		bpf_loop(c.n_chunks, store_chunk, &c, 0);
		return c.loss;
	}
	/* Not a full compare: three loads catch nearly every collision. */
	last = nr < EBPROF_CHUNK_FRAMES ? (__u32)nr - 1 : EBPROF_CHUNK_FRAMES - 1;
	if (seen->nr != nr || seen->ips[0] != ips[0] ||
	    seen->ips[last & (EBPROF_CHUNK_FRAMES - 1)] != ips[last & (EBPROF_CHUNK_FRAMES - 1)])
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
 * Whether a PID filter (and no name filter, which needs the task's name)
 * surely rejects the task: a few compares of its tgid, or one lookup when
 * the filter is long, and no read of the task. What it lets through is
 * decided by task_wanted() as before. tgid 0 is never in a filter.
 */
static __always_inline bool tgid_rejected(__u32 tgid)
{
	bool hit = false;

	if (filter_flags != EBPROF_FILTER_TGID)
		return false;
	if (n_fixed_tgids) {
		/* Constants to the verifier: compares with immediates, no read of the filter. */
#pragma clang loop unroll(full)
		for (__u32 i = 0; i < EBPROF_FAST_TGIDS; i++)
			hit |= fixed_tgids[i] == tgid;
		return !hit;
	}
	if (fast_filter.n > EBPROF_FAST_TGIDS)
		return !bpf_map_lookup_elem(&tgids, &tgid);
	/* Unused slots repeat a PID of the filter: every slot is compared, no branch. */
#pragma clang loop unroll(full)
	for (__u32 i = 0; i < EBPROF_FAST_TGIDS; i++)
		hit |= fast_filter.tgids[i] == tgid;
	return !hit;
}

/* The word at task + offset (of any kernel struct); 0 if it cannot be read. */
static __always_inline __u64 task_word(__u64 task, __u32 offset)
{
	__u64 word = 0;

	bpf_probe_read_kernel(&word, sizeof(word), (const void *)(task + offset));
	return word;
}

/*
 * Fills the event's parent when task's process is a fork that has not
 * exec'd, of a parent that has not exec'd since either: its mappings began
 * as a copy of the parent's present program. The exec counts say so (the
 * kernel's own test for a parent that exec'd, in exit_notify()), and the
 * executable file must be the parent's too: a process whose parent exited
 * was handed to another (init, a subreaper), which runs another program
 * and whose count may match by chance. Left 0 otherwise. Read at a report
 * only, never on a sample's path.
 */
static __always_inline void report_parent(struct ebprof_process_event *event, __u64 task)
{
	__u64 parent, mm, parent_mm, exe, exec_id;

	event->parent_tgid = 0;
	event->parent_start_time = 0;
	if (!off_real_parent)
		return;
	exec_id = task_word(task, off_parent_exec_id);
	if (task_word(task, off_self_exec_id) != exec_id)
		return; /* it exec'd */
	parent = task_word(task, off_real_parent);
	if (!parent || task_word(parent, off_self_exec_id) != exec_id)
		return; /* the parent exec'd, or is another */
	mm = task_word(task, off_mm);
	parent_mm = task_word(parent, off_mm);
	if (!mm || !parent_mm)
		return; /* the parent is a kernel thread, or exiting */
	exe = task_word(mm, off_exe_file);
	if (!exe || exe != task_word(parent_mm, off_exe_file))
		return;
	bpf_probe_read_kernel(&event->parent_tgid, sizeof(event->parent_tgid),
			      (const void *)(parent + off_tgid));
	event->parent_start_time =
		task_word(task_word(parent, off_group_leader), off_start_boottime);
}

/*
 * Reports the process unless it was reported under this start time, and
 * returns whether it now stands reported. It is marked as reported only
 * once the report is in the ring buffer, so a full buffer delays the
 * report to the next sample rather than losing it.
 *
 * Not while task is in an exec: its memory is being replaced (the maps
 * user space would read are half built), and the exec's end forgets the
 * report (ebprof_exec()), so a report made then would be made twice. The
 * next sample after the exec reports the new program once.
 */
static __always_inline bool report_process(struct ebprof_cpu *s, const struct ebprof_key *key,
					   __u64 task)
{
	__u32 tgid = key->tgid;
	__u64 start_time = key->start_time;
	struct ebprof_process_event *event;
	__u64 *seen = bpf_map_lookup_elem(&reported, &tgid);
	__u8 exec_bits = 0;

	if (seen && *seen == start_time)
		return true;
	if (in_execve_mask) {
		bpf_probe_read_kernel(&exec_bits, 1, (const void *)(task + off_in_execve));
		if (exec_bits & in_execve_mask) {
			stat_add(s, EBPROF_STAT_PROCESS_IN_EXEC);
			return false;
		}
	}
	event = bpf_ringbuf_reserve(&process_events, sizeof(*event), 0);
	if (!event) {
		stat_add(s, EBPROF_STAT_PROCESS_EVENTS_LOST);
		return false;
	}
	event->type = EBPROF_EVENT_PROCESS;
	event->tgid = tgid;
	event->start_time = start_time;
	event->sampled_at = bpf_ktime_get_boot_ns();
	__builtin_memcpy(event->comm, key->comm, EBPROF_COMM_LEN);
	report_parent(event, task);
	/* Forced: copies left in the ring (send_copy()) keep the adaptive wake-up from firing. */
	bpf_ringbuf_submit(event, BPF_RB_FORCE_WAKEUP);
	bpf_map_update_elem(&reported, &tgid, &start_time, BPF_ANY);
	stat_add(s, EBPROF_STAT_PROCESS_EVENTS);
	return true;
}

/*
 * What a sample's key says of a task's process, and the task's verdicts:
 * shared by the per-CPU cache here and the off-CPU task storage.
 */
struct task_view {
	struct ebprof_key *key; /* tgid, state, comm and start_time are set */
	__u8 *user, *wanted, *reported;
};

static __always_inline void task_read(struct task_view v, __u64 task, __u32 tgid)
{
	__u64 leader = task_word(task, off_group_leader);

	v.key->tgid = tgid;
	v.key->state = EBPROF_OFFCPU_NONE;
	__builtin_memset(v.key->comm, 0, sizeof(v.key->comm));
	bpf_probe_read_kernel_str(v.key->comm, sizeof(v.key->comm),
				  (const void *)(leader + off_comm));
	v.key->start_time = task_word(leader, off_start_boottime);
	*v.user = task_word(task, off_mm) != 0;
	*v.wanted = task_wanted(tgid, v.key->comm);
	/* Kernel threads have no mappings to read. */
	*v.reported = !(report_processes && *v.wanted && *v.user);
}

/*
 * Fills the per-CPU cache for the current task: the process's name (a
 * thread's own comm may be renamed, "worker-3"), its start time, whether
 * it has user memory, and the filter verdict.
 */
static __always_inline void task_describe(struct ebprof_cpu *s, __u64 task, __u64 pid_tgid,
					  __u64 gen)
{
	struct task_view v = { &s->key, &s->user, &s->wanted, &s->reported };

	s->task_addr = task;
	s->pid_tgid = pid_tgid;
	s->gen = gen;
	task_read(v, task, pid_tgid >> 32);
}

/* Adds n to the key's count. Returns 0 if it was there, 1 if it is new. */
static __always_inline int count_add(void *map, const struct ebprof_key *key, __u64 n)
{
	__u64 *count = bpf_map_lookup_elem(map, key);

	if (!count)
		return 1;
	__sync_fetch_and_add(count, n);
	return 0;
}

/* Inserts a new key with a count of n. Returns 0, or the stats index. */
static __always_inline __u32 count_insert(void *map, const struct ebprof_key *key, __u64 n)
{
	long err;

	err = bpf_map_update_elem(map, key, &n, BPF_NOEXIST);
	if (!err)
		return 0;
	/* -EEXIST: another CPU inserted the key since our lookup. */
	if (err == -EBPROF_EEXIST && count_add(map, key, n) == 0)
		return 0;
	return EBPROF_STAT_COUNTS_FULL;
}

/* The key's pending slot within its pair's: its two stack ids and process, mixed. */
static __always_inline __u32 pending_slot(const struct ebprof_key *key)
{
	__u64 h = key->kstack ^ (key->ustack * 0xff51afd7ed558ccdULL) ^
		  ((__u64)key->tgid << 32 | key->state);

	return (__u32)((h * 0x9e3779b97f4a7c15ULL) >> EBPROF_PENDING_SHIFT);
}

static __always_inline bool key_equal(const struct ebprof_key *a, const struct ebprof_key *b)
{
	const __u64 *x = (const __u64 *)a, *y = (const __u64 *)b;

	_Static_assert(sizeof(*a) == 6 * sizeof(__u64), "struct ebprof_key is six words");
	return x[0] == y[0] && x[1] == y[1] && x[2] == y[2] && x[3] == y[3] && x[4] == y[4] &&
	       x[5] == y[5];
}

/*
 * Counts n samples of key, storing its stacks (kips and uips of the
 * CPU's scratch) with a new key. Returns 0, or the stats index of a loss.
 * A key already counted in this counts map had its stacks stored in the
 * stacks map of the same pair: both come from one read of active_gen.
 * The CPU's pending slot for the key comes first: a key counted there
 * last needs no hash lookup (struct ebprof_pending).
 */
static __always_inline __u32 count_sample(const struct ebprof_key *key, struct ebprof_scratch *sc,
					  __u64 n)
{
	__u64 gen = *(volatile __u64 *)&active_gen;
	__u32 pair = gen & 1, slot, loss;
	struct ebprof_pending *p;
	void *stack_map, *count_map;

	slot = pair * EBPROF_PENDING_SLOTS + pending_slot(key);
	p = bpf_map_lookup_elem(&pending, &slot);
	if (p && p->tag == gen + 1 && key_equal(&p->key, key)) {
		p->count += n;
		return 0;
	}
	count_map = bpf_map_lookup_elem(&counts, &pair);
	if (!count_map)
		return EBPROF_STAT_COUNTS_FULL; /* cannot happen: both slots always hold a map */
	/*
	 * The slot's key gives way: its count goes to the counts map, which
	 * has had the key since before the slot took it, and keeps it until
	 * user space drains this generation.
	 */
	if (p && p->tag == gen + 1 && p->count) {
		count_add(count_map, &p->key, p->count);
		p->count = 0;
	}
	if (count_add(count_map, key, n)) {
		stack_map = bpf_map_lookup_elem(&stacks, &pair);
		if (!stack_map)
			return EBPROF_STAT_STACKS_FULL; /* cannot happen */
		loss = stack_store(stack_map, &sc->chunk, sc->kstack.ips, sc->kstack.nr,
				   key->kstack);
		if (!loss)
			loss = stack_store(stack_map, &sc->chunk, sc->ustack.ips, sc->ustack.nr,
					   key->ustack);
		if (!loss)
			loss = count_insert(count_map, key, n);
		if (loss)
			return loss;
	}
	if (p) {
		p->key = *key;
		p->count = 0;
		p->tag = gen + 1;
	}
	return 0;
}

/* --- the table unwinder ---------------------------------------------------- */

/*
 * The 8 bytes of user memory at addr into *dst; 0, or 1 on a fault, when
 * the walk's window of the stack does not hold them (see unw_read()): the
 * walk's reads go up the stack a frame at a time (a return address, the
 * saved rbp below it, then the next frame's above), so each read that
 * misses the window reads the next s->win_cap bytes from 16 bytes below
 * it at once, never past the end of its page (whose mapping decides the
 * read alone), and the frames above are read from there: one
 * bpf_probe_read_user() for several frames where each frame made one or
 * two. A walk's first read is the smaller one (EBPROF_WIN_FIRST): most
 * stacks end within it, and a read costs more by its call than by its
 * bytes. s is the walk's scratch space (the unwinder's env), passed
 * rather than looked up per read; NULL reads directly. A global function:
 * the verifier checks it once, on its own.
 */
__noinline int unw_read_user(struct ebprof_scratch *s, __u64 *dst, __u64 addr)
{
	__u64 start, len;

	if (!dst)
		return 1;
	/* A stack's words are 8-byte aligned; any other read is made on its own. */
	if (!s || (addr & 7))
		return bpf_probe_read_user(dst, 8, (const void *)addr) ? 1 : 0;
	start = addr - 16;
	if ((start ^ addr) >> 12)
		start = addr & ~4095ULL; /* the window stays in addr's page */
	len = 4096 - (start & 4095);
	if (len > s->win_cap)
		len = s->win_cap;
	s->win_len = 0; /* an aligned word never straddles two pages */
	/* The clamp again, as a mask the verifier keeps (1 to EBPROF_WIN_BYTES). */
	asm volatile("" : "+r"(len));
	len = ((len - 1) & (EBPROF_WIN_BYTES - 1)) + 1;
	if (bpf_probe_read_user(s->win, (__u32)len, (const void *)start))
		return 1; /* addr's page is not there: nor is addr */
	s->win_start = start;
	s->win_len = (__u32)len;
	s->win_cap = EBPROF_WIN_BYTES;
	/* addr, and so start, are multiples of 8. */
	*dst = s->win[((addr - start) >> 3) & (EBPROF_WIN_BYTES / 8 - 1)];
	return 0;
}

/*
 * UNW_READ: from the window when it holds addr's word, in line, the
 * common case (most frames' reads); else by unw_read_user(), called.
 */
static __always_inline int unw_read(struct ebprof_scratch *s, __u64 *dst, __u64 addr)
{
	__u64 off = addr - s->win_start;

	if (!(addr & 7) && addr >= s->win_start && off < s->win_len && s->win_len - off >= 8) {
		*dst = s->win[(off >> 3) & (EBPROF_WIN_BYTES / 8 - 1)];
		return 0;
	}
	return unw_read_user(s, dst, addr);
}

/*
 * A table's word i. Tables are arrays of 64-bit elements holding two words
 * each: the kernel rounds an array's elements up to 8 bytes, and 32-bit
 * elements would double a table's size.
 */
static __always_inline int unw_word(void *table, __u32 i, __u32 *dst)
{
	__u32 k = i >> 1;
	__u64 *w = bpf_map_lookup_elem(table, &k);

	if (!w)
		return 1;
	*dst = (i & 1) ? (__u32)(*w >> 32) : (__u32)*w;
	return 0;
}

#include "bpf/unwind.h"

#define PT_REGS_CS 17

/*
 * struct pt_regs's words (x86-64 user ABI: r15 r14 r13 r12 bp bx r11 r10
 * r9 r8 ax cx dx si di orig_ax ip cs flags sp ss) in DWARF order, each at
 * a constant offset, as the verifier wants for the context.
 */
static __always_inline void regs_from_pt_regs(struct ebprof_regs *r, const __u64 *w)
{
	r->r[0] = w[10];  /* rax */
	r->r[1] = w[12];  /* rdx */
	r->r[2] = w[11];  /* rcx */
	r->r[3] = w[5];   /* rbx */
	r->r[4] = w[13];  /* rsi */
	r->r[5] = w[14];  /* rdi */
	r->r[6] = w[4];   /* rbp */
	r->r[7] = w[19];  /* rsp */
	r->r[8] = w[9];
	r->r[9] = w[8];
	r->r[10] = w[7];
	r->r[11] = w[6];
	r->r[12] = w[3];
	r->r[13] = w[2];
	r->r[14] = w[1];
	r->r[15] = w[0];
	r->r[16] = w[16]; /* rip */
	r->valid = (1u << EBPROF_NR_REGS) - 1;
	r->exact = 1;
}

/*
 * Sets s->regs to the interrupted task's user registers: the sample's
 * own when the tick hit user code, else those the kernel saved at the top
 * of the task's kernel stack when it entered the kernel
 * (bpf_task_pt_regs). Returns 0, or -1 when there are none (a kernel
 * thread's, or unreadable). The words go through the scratch space: the
 * program's stack is kept small, since Linux 6.1 counts it together with
 * each bpf_loop() callback's against 512 bytes.
 */
static __always_inline int user_regs(struct bpf_perf_event_data *ctx, struct ebprof_scratch *s)
{
	const __u64 *ctx_words = (const __u64 *)ctx;
	__u64 *words = s->pt_regs;

	/* No context: a task in the kernel (off-CPU), whose saved registers are read. */
	if (ctx && in_user_mode(ctx)) {
		/* Word by word at constant offsets: the verifier rewrites each context load. */
#pragma clang loop unroll(full)
		for (int i = 0; i < EBPROF_PT_REGS_WORDS; i++)
			words[i] = ctx_words[i];
	} else if (bpf_probe_read_kernel(words, sizeof(s->pt_regs),
					 (const void *)bpf_task_pt_regs(bpf_get_current_task_btf())) ||
		   (words[PT_REGS_CS] & 3) != 3) {
		return -1;
	}
	regs_from_pt_regs(&s->regs, words);
	return 0;
}

/*
 * One walk: where its state is. The pointers stay on the program's stack
 * (a map value cannot hold them); the state is in the CPU's scratch
 * space (struct ebprof_walk_state), which the verifier does not track
 * value by value: flags set to constants on the stack multiplied the
 * states it explored.
 */
struct walk {
	struct ebprof_scratch *s;
	struct ebprof_cpu *c;
	struct ebprof_rule_cache *cache;
	struct ebprof_walk_state *st; /* &s->walk */
};

#include "bpf/python.bpf.h"

/*
 * Where the walk finds the process's mappings, and its Python layout: as
 * this CPU last looked them up, unless the process or unw_gen changed
 * since. Each is a hash lookup whose lines a tick finds cold: timed in
 * the program on a PVM guest, 120 and 50 ns of a 1.5 to 2 us sample.
 */
static __always_inline void walk_process(struct walk *w, const struct ebprof_key *key)
{
	__u64 gen = *(volatile __u64 *)&unw_gen + 1;
	const struct ebprof_unw_proc *proc;
	struct ebprof_cpu *c = w->c;

	if (c->walk_gen != gen || c->walk_tgid != key->tgid || c->walk_start != key->start_time) {
		proc = bpf_map_lookup_elem(&unw_procs, &key->tgid);
		c->walk_have_proc = proc && proc->start_time == key->start_time;
		c->walk_first = c->walk_have_proc ? proc->first : 0;
		c->walk_n = c->walk_have_proc ? proc->n : 0;
		c->walk_py = py_lookup(w->s, key);
		c->walk_gen = gen;
		c->walk_tgid = key->tgid;
		c->walk_start = key->start_time;
	}
	w->st->have_proc = c->walk_have_proc;
	w->st->first = c->walk_first;
	w->st->n_maps = c->walk_n;
	py_walk_init(w, c->walk_py);
}

/* Finds the mapping holding pc among the process's: the last one found, or a binary search. */
static __always_inline bool walk_mapping(struct walk *w, __u64 pc)
{
	const struct ebprof_unw_mapping *m;
	__u32 lo = 0, hi = w->st->n_maps, idx;

	if (w->st->m_valid && pc >= w->st->m_start && pc < w->st->m_end)
		return true;
	/* UNW_FORGET: see unw_find_rule(); the comparison narrows a copy of pc. */
	for (int k = 0; k < 17 && lo < hi; k++) {
		__u32 mid = lo + (hi - lo) / 2;
		__u64 at = pc;

		idx = w->st->first + mid;
		m = bpf_map_lookup_elem(&unw_mappings, &idx);
		if (!m)
			return false;
		UNW_FORGET(at);
		if (m->start <= at)
			lo = mid + 1;
		else
			hi = mid;
		UNW_FORGET(lo);
		UNW_FORGET(hi);
	}
	if (lo == 0)
		return false;
	idx = w->st->first + lo - 1;
	m = bpf_map_lookup_elem(&unw_mappings, &idx);
	if (!m || pc >= m->end)
		return false;
	w->st->m_valid = true;
	w->st->m_start = m->start;
	w->st->m_end = m->end;
	w->st->m_adjust = m->adjust;
	w->st->m_table = m->table;
	w->st->m_table_id = m->table_id;
	return true;
}

/*
 * Code its file's table has no row for (assembly written without CFI):
 * its frame pointer, as for a file without a table; a walk that cannot go
 * on from there stopped for want of a row.
 */
static __always_inline int walk_no_row(struct walk *w, struct ebprof_regs *regs)
{
	int ret;

	stat_add(w->c, EBPROF_STAT_UNW_FP_FRAMES);
	ret = unw_step_fp(w->s, regs);
	return ret == UNW_NEXT || ret == UNW_END ? ret : UNW_NO_ROW;
}

/*
 * The rule index for file offset off in the table at slot `slot` of
 * unw_tables (0: no row), or UNW_RULE_NO_TABLE. A global function: the
 * verifier checks it once, on its own, with both arguments unknown,
 * rather than again for every state of every walk that calls it (its
 * binary search is most of what a walk costs the verifier).
 */
#define UNW_RULE_NO_TABLE 0xffffffffu
__noinline __u32 unw_rule_at(__u32 slot, __u64 off)
{
	void *table = bpf_map_lookup_elem(&unw_tables, &slot);

	return table ? unw_find_rule(table, off) : UNW_RULE_NO_TABLE;
}

/* One frame: its pc's table row, or the frame pointer where its file has no table. */
static __always_inline int walk_step(struct walk *w, struct ebprof_regs *regs)
{
	const struct ebprof_unw_rule *rule;
	__u64 pc = regs->r[UNW_RIP];
	__u32 index;

	struct ebprof_rule_cache_entry *e;
	__u64 off;

	if (!w->st->have_proc)
		return UNW_NO_TABLE;
	if (!walk_mapping(w, pc)) {
		w->st->unmapped = true; /* mapped since user space read the maps */
		return UNW_NO_TABLE;
	}
	if (!w->st->m_table) {
		stat_add(w->c, EBPROF_STAT_UNW_FP_FRAMES);
		return unw_step_fp(w->s, regs);
	}
	/* A return address is the instruction after the call: look up the call. */
	off = pc + w->st->m_adjust - (regs->exact ? 0 : 1);
	e = &w->cache->e[(off ^ (__u64)w->st->m_table_id * 0x9e3779b1) & (EBPROF_RULE_CACHE - 1)];
	if (e->table_id == w->st->m_table_id && e->offset == off) {
		index = e->rule;
	} else {
		index = unw_rule_at(w->st->m_table, off);
		if (index == UNW_RULE_NO_TABLE)
			return UNW_NO_TABLE;
		e->offset = off;
		e->table_id = w->st->m_table_id;
		e->rule = index;
	}
	rule = UNW_RULE(NULL, index);
	if (!rule)
		return UNW_UNSUPPORTED;
	if (rule->cfa_kind == EBPROF_CFA_NONE)
		return walk_no_row(w, regs);
	return unw_step_rule(w->s, rule, regs);
}

static __always_inline __u32 walk_stat(int result)
{
	switch (result) {
	case UNW_NO_TABLE:
		return EBPROF_STAT_UNW_NO_TABLE;
	case UNW_NO_ROW:
		return EBPROF_STAT_UNW_NO_ROW;
	case UNW_UNSUPPORTED:
		return EBPROF_STAT_UNW_UNSUPPORTED;
	case UNW_DEPTH_CAP:
		return EBPROF_STAT_UNW_DEPTH_CAP;
	default:
		return EBPROF_STAT_UNW_READ_FAULT;
	}
}

/* One frame of the walk: records its pc, then steps to its caller; 1 at the walk's end. */
static __always_inline long walk_one(struct walk *w)
{
	struct ebprof_scratch *s = w->s;
	__u64 n = s->ustack.nr, pc;
	int ret;

	if (n >= max_frames || n >= EBPROF_MAX_FRAMES) {
		w->st->stop = EBPROF_STAT_UNW_DEPTH_CAP;
		return 1;
	}
	if (s->py_emitting || py_frame_begin(w, &s->regs))
		return py_frame_step(w);
	pc = s->regs.r[UNW_RIP];
	s->ustack.ips[n & (EBPROF_MAX_FRAMES - 1)] = pc;
	s->ustack.nr = n + 1;
	ret = walk_step(w, &s->regs);
	if (ret == UNW_NO_TABLE && w->st->may_copy) {
		/* Stop here: the caller copies the whole sample for user space. */
		w->st->want_copy = true;
		s->ustack.nr = n;
		return 1;
	}
	stack_hash_add(&w->st->h, n, pc);
	if (ret == UNW_NO_TABLE) {
		w->st->no_table = true;
		stat_add(w->c, EBPROF_STAT_UNW_FP_FRAMES);
		ret = unw_step_fp(s, &s->regs);
	}
	if (ret == UNW_NEXT)
		return 0;
	if (ret != UNW_END)
		w->st->stop = walk_stat(ret);
	return 1;
}

/*
 * bpf_loop's callback: two frames a round. Each round is a call, which
 * costs a good part of a frame's step (tests/bench/README.md: a 20-frame
 * walk took 6% less with two a round than with one); the verifier checks
 * the body once, at twice the instructions.
 */
static long walk_frame(__u32 i, void *arg)
{
	struct walk *w = arg;

	if (walk_one(w))
		return 1;
	return walk_one(w);
}

/* Rounds of walk_frame() for the frame cap: one more frame than the cap, which finds it. */
#define WALK_ROUNDS (max_frames / 2 + 1)

/* Bytes a copy keeps above the start of the main thread's stack. */
#define COPY_MARGIN 256

/*
 * The bytes of user stack from sp that a copy needs. On the main thread's
 * stack, those up to where it began at exec (mm->start_stack, the word
 * holding argc: _start's frame, where every walk ends, is below it) and a
 * margin; a few hundred bytes for most samples, which leaves the ring
 * buffer room for many more copies. Elsewhere (a thread's or a signal
 * stack, or a stack deeper than a copy holds): EBPROF_COPY_BYTES.
 */
static __always_inline __u32 copy_need(__u64 sp)
{
	__u64 mm = task_word(bpf_get_current_task(), off_mm);
	__u64 top = mm ? task_word(mm, off_start_stack) : 0;

	if (top > sp && top - sp <= EBPROF_COPY_BYTES - COPY_MARGIN)
		return (__u32)(top - sp) + COPY_MARGIN;
	return EBPROF_COPY_BYTES;
}

#define COPY_CHUNKS (EBPROF_COPY_BYTES / 1024)

/*
 * bpf_loop's callback for send_copy(): the next KiB of the stack (less at
 * the end of what is needed), into the copy; stops at the first read that
 * faults. A callback, not an unrolled loop: the verifier checks it once,
 * where each round of a loop with an exact byte count was checked apart
 * (30,000 of the 48,600 instructions it processed for the program).
 */
static long copy_chunk(__u32 k, void *arg)
{
	struct walk *w = arg;
	struct ebprof_walk_state *st = w->st;
	__u32 bytes = st->copy_bytes, len;

	if (k >= COPY_CHUNKS || bytes >= st->copy_need)
		return 1;
	len = st->copy_need - bytes;
	if (len > 1024)
		len = 1024;
	/* The clamp again, as a mask the verifier keeps (1 to 1,024). */
	asm volatile("" : "+r"(len));
	len = ((len - 1) & 1023) + 1;
	if (bpf_probe_read_user(&w->s->copy.stack[(k & (COPY_CHUNKS - 1)) * 1024], len,
				(const void *)(st->copy_sp + k * 1024)))
		return 1;
	st->copy_bytes = bytes + len;
	return 0;
}

/*
 * Sends the sample to user space: the first frame's registers (in
 * s->copy.regs), its kernel stack, and the user stack copy_need() asks
 * for, read 1 KiB at a time up to the first read that faults (the top of
 * the stack). Only while the ring buffer has room to spare for process
 * reports. key is the sampled process's, id the copy's (struct
 * ebprof_copy_event). Returns whether it was sent.
 *
 * A sample's copy wakes no one while the ring is less than half way to
 * the copies' limit: it waits for the next report's wake-up or the
 * drain's flush (sampler_watch_flush()), which reads the ring before each
 * drain, so user space does not wake for each copy: most copies follow a
 * new process's report, and the thread that reads reports woke for that.
 * That holds for a process whose report is put off (sampled in an exec,
 * whose copies are of a stack being replaced): waking for those took
 * back the whole saving. Off-CPU copies and, for tests, oracle copies
 * wake it. So does a copy whose sampled pc is in none of the mappings
 * user space sent (a dlopen() since it read them; a fork lent its
 * parent's): its maps must be read again while it runs, and a process
 * that lives milliseconds would be gone by the next wake. At most one
 * such wake a CPU every EBPROF_UNMAPPED_WAKE_NS, for a pc no read finds.
 */
static __always_inline bool send_copy(struct walk *w, const struct ebprof_key *key, __u32 type,
				      __u64 id)
{
	struct ebprof_scratch *s = w->s;
	struct ebprof_copy_event *e = &s->copy;
	__u64 sp = e->regs.r[UNW_RSP];
	__u64 held = bpf_ringbuf_query(&process_events, BPF_RB_AVAIL_DATA);
	__u64 flags = BPF_RB_FORCE_WAKEUP;
	__u32 bytes;

	if (held > copy_ring_limit)
		return false;
	e->type = type;
	e->id = id;
	e->sampled_at = bpf_ktime_get_boot_ns();
	e->n_uips = 0;
	if (type == EBPROF_EVENT_ORACLE) {
		e->n_uips = s->ustack.nr > EBPROF_MAX_DEPTH + 1 ? EBPROF_MAX_DEPTH + 1
							      : (__u32)s->ustack.nr;
		bpf_probe_read_kernel(e->uips, sizeof(e->uips), s->ustack.ips);
	}
	e->tgid = key->tgid;
	e->start_time = key->start_time;
	__builtin_memcpy(e->comm, key->comm, EBPROF_COMM_LEN);
	e->n_kips = (__u32)s->kstack.nr;
	if (e->n_kips && bpf_probe_read_kernel(e->kips, sizeof(e->kips), s->kstack.ips))
		e->n_kips = 0;
	w->st->copy_sp = sp;
	w->st->copy_need = copy_need(sp);
	w->st->copy_bytes = 0;
	bpf_loop(COPY_CHUNKS, copy_chunk, w, 0);
	bytes = w->st->copy_bytes;
	e->stack_bytes = bytes;
	if (bytes > EBPROF_COPY_BYTES)
		bytes = EBPROF_COPY_BYTES;
	if (type == EBPROF_EVENT_COPY && !id && held < copy_ring_limit / 2) {
		flags = BPF_RB_NO_WAKEUP;
		if (w->st->unmapped && !s->ustack.nr &&
		    e->sampled_at - w->c->unmapped_wake_at >= EBPROF_UNMAPPED_WAKE_NS) {
			w->c->unmapped_wake_at = e->sampled_at;
			flags = BPF_RB_FORCE_WAKEUP;
		}
	}
	return bpf_ringbuf_output(&process_events, e,
				  __builtin_offsetof(struct ebprof_copy_event, stack) + bytes,
				  flags) == 0;
}

#define WALK_COPIED 1
#define WALK_PARTIAL 2

/*
 * Walks the user stack into s->ustack by the tables, and sets *id to its
 * hash (0: no frames). Returns WALK_COPIED when the sample went to user
 * space instead, WALK_PARTIAL when the stack is there but truncated or
 * partly walked by frame pointer for want of a table (the cause is
 * counted; a file whose table may come later counts too), else 0.
 * Off-CPU (no ctx) a copy is sent under copy_id, if not 0, and is counted
 * by the caller.
 */
static __always_inline int walk_user(struct bpf_perf_event_data *ctx, struct ebprof_cpu *c,
				     const struct ebprof_key *key, struct ebprof_scratch *s,
				     __u64 *id, __u64 copy_id)
{
	struct walk w = { .s = s, .c = c, .st = &s->walk };
	__u64 fp_frames;
	__u32 zero = 0;

	s->walk = (struct ebprof_walk_state){
		.may_copy = copy_samples && (ctx || copy_id),
		.h = { 0x9e3779b97f4a7c15ULL, 0x6a09e667f3bcc909ULL } };
	s->ustack.nr = 0;
	s->win_len = 0; /* the window is of the last walk's stack */
	s->win_cap = EBPROF_WIN_FIRST;
	*id = 0;
	w.cache = bpf_map_lookup_elem(&rule_cache, &zero);
	if (!w.cache)
		return 0; /* cannot happen: a one-slot per-CPU array */
	if (user_regs(ctx, s)) {
		stat_add(c, EBPROF_STAT_UNW_READ_FAULT);
		return WALK_PARTIAL;
	}
	s->copy.regs = s->regs;
	/*
	 * Whether a file with no table (yet?) was walked by frame pointer:
	 * that counter moved. Read from the map, not a flag in w, so that
	 * the verifier has no more walk states to tell apart.
	 */
	fp_frames = c->stats[EBPROF_STAT_UNW_FP_FRAMES];
	walk_process(&w, key);
	bpf_loop(WALK_ROUNDS, walk_frame, &w, 0);
	if (s->walk.want_copy) {
		if (send_copy(&w, key, EBPROF_EVENT_COPY, ctx ? 0 : copy_id)) {
			if (ctx)
				stat_add(c, EBPROF_STAT_COPIED);
			return WALK_COPIED;
		}
		/* No room: go on from the frame that stopped, by frame pointer. */
		s->walk.may_copy = false;
		s->walk.want_copy = false;
		bpf_loop(WALK_ROUNDS, walk_frame, &w, 0);
	}
	/*
	 * One cause a sample: a walk that met a file without its table yet
	 * and went on by frame pointer usually ends in a read fault, which
	 * is that missing table's doing, not a second truncation.
	 */
	if (s->walk.no_table)
		stat_add(c, EBPROF_STAT_UNW_NO_TABLE);
	else if (s->walk.stop)
		stat_add(c, s->walk.stop);
	if (ctx && !s->walk.stop && !s->walk.no_table && oracle_every && s->walk.have_proc &&
	    c->stats[EBPROF_STAT_SAMPLES] % oracle_every == 0)
		send_copy(&w, key, EBPROF_EVENT_ORACLE, 0);
	if (s->ustack.nr) {
		s->walk.h.a ^= s->ustack.nr * 0xff51afd7ed558ccdULL;
		*id = stack_hash_end(&s->walk.h);
	}
	return s->walk.no_table || s->walk.stop || c->stats[EBPROF_STAT_UNW_FP_FRAMES] != fp_frames ?
		       WALK_PARTIAL : 0;
}

/* --- the sample ------------------------------------------------------------ */

static __noinline int sample_task(struct bpf_perf_event_data *ctx, struct ebprof_cpu *s,
				  __u64 pid_tgid);

SEC("perf_event")
int ebprof_sample(struct bpf_perf_event_data *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 zero = 0;
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
	/*
	 * Before the task cache: a rejected tick touches one line of s and,
	 * with a fixed filter, only .rodata (not mmapable: kmalloc'd memory).
	 */
	if (tgid_rejected(pid_tgid >> 32)) {
		stat_add(s, EBPROF_STAT_FILTERED);
		return 0;
	}
	return sample_task(ctx, s, pid_tgid);
}

/*
 * All but the rejection, in a function of its own: the program's entry
 * stays a few instructions with a tiny stack frame (no private stack on
 * 6.13+ kernels), and a rejected tick runs none of what follows.
 */
static __noinline int sample_task(struct bpf_perf_event_data *ctx, struct ebprof_cpu *s,
				  __u64 pid_tgid)
{
	__u64 gen, task;
	__u32 loss, cpu;
	struct ebprof_scratch *sc;

	gen = cache_gen;
	task = bpf_get_current_task();
	if (s->task_addr != task || s->pid_tgid != pid_tgid || s->gen != gen)
		task_describe(s, task, pid_tgid, gen);
	if (!s->wanted) {
		stat_add(s, EBPROF_STAT_FILTERED);
		return 0;
	}
	if (!s->reported)
		s->reported = report_process(s, &s->key, task);
	cpu = bpf_get_smp_processor_id();
	sc = bpf_map_lookup_elem(&scratch, &cpu);
	if (!sc)
		return 0; /* cannot happen: one slot per possible CPU */

	sc->kstack.nr = 0;
	sc->ustack.nr = 0;
	/* A tick that interrupted user code has no kernel stack: skip the call. */
	if (kernel_stacks && !in_user_mode(ctx) &&
	    stack_read(ctx, sc->kstack.ips, &sc->kstack.nr, EBPROF_MAX_DEPTH * sizeof(__u64), 0)) {
		stat_add(s, EBPROF_STAT_KSTACK_ERR);
		return 0;
	}
	/* Kernel threads have no user stack, and that is not an error. */
	s->key.ustack = 0;
	if (user_stacks && s->user) {
		if (unwind_mode == EBPROF_UNWIND_TABLES) {
			/* The walk hashes the frames as it finds them. */
			if (walk_user(ctx, s, &s->key, sc, &s->key.ustack, 0) == WALK_COPIED)
				return 0; /* user space records it */
		} else if (stack_read(ctx, sc->ustack.ips, &sc->ustack.nr,
				      EBPROF_MAX_DEPTH * sizeof(__u64), BPF_F_USER_STACK)) {
			stat_add(s, EBPROF_STAT_USTACK_ERR);
			return 0;
		} else {
			s->key.ustack = stack_id(sc->ustack.ips, sc->ustack.nr, EBPROF_MAX_FRAMES);
		}
	}
	s->key.kstack = stack_id(sc->kstack.ips, sc->kstack.nr, EBPROF_MAX_DEPTH + 1);
	loss = count_sample(&s->key, sc, 1);
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

/* The off-CPU programs: a section of their own, sharing this file's maps and helpers. */
#include "bpf/offcpu.bpf.h"

/*
 * The processes a PID or name filter wants that run already, one struct
 * ebprof_target each, with the start time their samples' keys will carry:
 * user space reads them before it attaches the perf events, and prepares
 * each (its unwind tables, its Python layout) so that even its first
 * samples are walked whole; each is marked reported, as its first sample
 * would have, since user space tracks it now. An iterator over tasks (sampler_targets());
 * registered as a raw tracepoint program, made the task iterator at load
 * (sampler.c), so that libbpf need not load the kernel's BTF. Leaders
 * only, with user memory, as the sample path reads them (task_read()).
 */
SEC("ebprof_iter_task")
int ebprof_targets(void *ctx)
{
	/* struct bpf_iter__task: the seq_file's meta, then the task (NULL at the end). */
	void *meta = ((void **)ctx)[0];
	void *task = ((void **)ctx)[1];
	struct ebprof_target t = { 0 };
	char comm[EBPROF_COMM_LEN] = { 0 };
	__u64 addr, leader;

	if (!task || !filter_flags)
		return 0;
	addr = (__u64)task;
	leader = task_word(addr, off_group_leader);
	if (leader != addr || !task_word(addr, off_mm))
		return 0;
	bpf_probe_read_kernel(&t.tgid, sizeof(t.tgid), (const void *)(addr + off_tgid));
	bpf_probe_read_kernel_str(comm, sizeof(comm), (const void *)(addr + off_comm));
	if (!task_wanted(t.tgid, comm))
		return 0;
	t.start_time = task_word(addr, off_start_boottime);
	if (report_processes)
		bpf_map_update_elem(&reported, &t.tgid, &t.start_time, BPF_ANY);
	/* meta's first member is its seq_file (no member access: no CO-RE). */
	bpf_seq_write(((struct seq_file **)meta)[0], &t, sizeof(t));
	return 0;
}
