/*
 * The one header the kernel program and the user-space sampler share.
 *
 * The BPF program keys every sample by (process, kernel stack, user stack)
 * and counts it in a hash map. Stacks are not stored with
 * bpf_get_stackid(): its table is direct-mapped, so two stacks that hash
 * to one bucket collide and one is lost (-EEXIST). Instead the program copies
 * each stack with bpf_get_stack(), hashes it itself, and stores it once in
 * a hash map keyed by that 64-bit hash. A hash map only refuses a stack when
 * it is full, and that is counted.
 *
 * Both maps sit behind one-slot map-in-map arrays. To drain, user space
 * puts a fresh pair of inner maps in the slots. The kernel waits for every
 * running BPF program to finish before that update returns
 * (synchronize_rcu() in maybe_wait_bpf_programs(), kernel/bpf/syscall.c),
 * so after it no program can write the old pair, and user space reads and
 * clears it without racing any increment.
 *
 * New processes are also reported as they are first sampled, through a
 * ring buffer of struct ebprof_process_event, so that user space can read
 * a short-lived process's mappings before it exits rather than at the
 * next drain, when /proc no longer shows it.
 */
#ifndef EBPROF_BPF_EBPROF_H
#define EBPROF_BPF_EBPROF_H

/* The kernel's own cap is sysctl kernel.perf_event_max_stack (127). */
#define EBPROF_MAX_DEPTH 127
#define EBPROF_COMM_LEN 16

/*
 * Kept in a hash map: one entry per process and distinct sampled stack
 * pair. The start time keeps two processes that had one PID within a drain
 * apart.
 */
struct ebprof_key {
	__u32 tgid;
	__u32 pad;
	__u64 kstack; /* key in the stacks map; 0 = no kernel stack */
	__u64 ustack; /* key in the stacks map; 0 = no user stack */
	__u64 start_time; /* the process's start, ns after boot (CLOCK_BOOTTIME) */
	char comm[EBPROF_COMM_LEN]; /* the process (group leader) name */
};

/*
 * A process sampled for the first time: its first sample, or its first
 * after an exec, or a new process under a PID seen before.
 */
struct ebprof_process_event {
	__u32 tgid;
	__u32 pad;
	__u64 start_time; /* as in struct ebprof_key */
	__u64 sampled_at; /* the sample's time, ns after boot */
	char comm[EBPROF_COMM_LEN];
};

struct ebprof_stack {
	__u64 nr; /* valid entries in ips[], leaf first */
	__u64 ips[EBPROF_MAX_DEPTH];
};

/*
 * Per-CPU counters, indexes into struct ebprof_cpu's stats. They only grow; user
 * space keeps the last totals and reports differences, so reading them
 * never races the program.
 */
enum ebprof_stat {
	EBPROF_STAT_SAMPLES,	 /* every time the program ran */
	EBPROF_STAT_RECORDED,	 /* samples counted in the counts map */
	EBPROF_STAT_FILTERED,	 /* not a loss: outside the PID/process filter */
	EBPROF_STAT_IDLE,	 /* not a loss: the idle task, when excluded */
	EBPROF_STAT_KSTACK_ERR,	 /* bpf_get_stack() failed on the kernel stack */
	EBPROF_STAT_USTACK_ERR,	 /* bpf_get_stack() failed on the user stack */
	EBPROF_STAT_COLLISION,	 /* two different stacks with one hash */
	EBPROF_STAT_STACKS_FULL, /* the stacks map refused a new stack (full,
				  * or its allocator was empty: sampler.c) */
	EBPROF_STAT_COUNTS_FULL, /* the counts map refused a new key */
	/*
	 * Not ways a sample ends: the sample is counted either way. A new
	 * process is reported once per start (or exec), and again at its
	 * next sample when the report found the ring buffer full.
	 */
	EBPROF_STAT_PROCESS_EVENTS,	 /* new processes reported */
	EBPROF_STAT_PROCESS_EVENTS_LOST, /* not reported: ring buffer full */
	EBPROF_STAT_NR,
};

/*
 * The program's per-CPU state, in one slot of a per-CPU array, so that a
 * sample finds all of it with one lookup and the small, hot fields share
 * the first cache lines.
 *
 * key's tgid, start_time and comm describe the task at task_addr as seen
 * under generation gen (cache_gen in ebprof.bpf.c), and stay between
 * samples: the next sample of the same task reuses them, and its filter
 * verdict, without reading the task again. The stacks are scratch space.
 * User space only reads stats.
 */
struct ebprof_cpu {
	struct ebprof_key key;
	__u64 task_addr; /* 0: nothing cached */
	__u64 pid_tgid;
	__u64 gen;
	__u8 wanted;   /* passes the filters */
	__u8 user;     /* has a user address space (not a kernel thread) */
	__u8 reported; /* its report is in the ring buffer, or none is due */
	__u8 pad[5];
	__u64 stats[EBPROF_STAT_NR];
	struct ebprof_stack kstack;
	struct ebprof_stack ustack;
};

/*
 * Unwind tables, as symbolizer/unwtab builds them from a file's CFI and
 * the BPF unwinder reads them (see ebprof.bpf.c).
 *
 * A table is one array of 32-bit words, keyed by file offset (what a
 * sampled pc gives through its mapping, pc - start + pgoff, with no ELF
 * segment arithmetic in BPF):
 *
 *   words[0]              n_pages: 64 KiB pages of file offsets spanned
 *   words[1]              first_page: the first one's number (offset >> 16)
 *   words[2 + i]          for i in 0..n_pages: the index of page i's first
 *                         row in rows[]; words[2 + n_pages] is the row count
 *   rows[] (the rest)     one word per row: the offset's low 16 bits << 16
 *                         | the index of its rule in the shared rule array
 *
 * A row's rule holds from its offset to the next row's; every page that
 * has rows starts with a row at its offset 0, so a lookup never leaves its
 * page: one index read and a binary search of at most 16 steps. Rule 0 is
 * "no row here" (gaps between functions). Rules are deduplicated across
 * all tables (a whole system has a few thousand distinct ones), so a row
 * costs 4 bytes.
 */
#define EBPROF_UNW_PAGE_SHIFT 16
#define EBPROF_UNW_HEADER_WORDS 2
#define EBPROF_UNW_MAX_RULES 65536 /* a row's rule index is 16 bits */

/* CFA kinds (symbolizer/cfi.h's enum cfi_cfa_kind, same values). */
#define EBPROF_CFA_NONE 0	 /* no row: no FDE covers the address */
#define EBPROF_CFA_REG 1	 /* reg + cfa_off */
#define EBPROF_CFA_DEREF 2	 /* *(reg + cfa_off) + cfa_add */
#define EBPROF_CFA_PLT 3	 /* rsp + 8, + 8 when (pc & 15) >= cfa_off */
#define EBPROF_CFA_UNSUPPORTED 4

/* Register kinds, for rbp and the return address (enum cfi_reg_kind). */
#define EBPROF_REG_SAME 0	  /* still in the register */
#define EBPROF_REG_UNDEFINED 1	  /* for the return address: the outermost frame */
#define EBPROF_REG_AT_CFA 2	  /* saved at cfa + off */
#define EBPROF_REG_VAL_CFA 3	  /* is cfa + off */
#define EBPROF_REG_AT_REG 4	  /* saved at reg + off */
#define EBPROF_REG_IN_REG 5	  /* held in register reg */
#define EBPROF_REG_UNSUPPORTED 6

#define EBPROF_RULE_SIGNAL 1 /* a signal trampoline: the next pc is exact, not a return address */

struct ebprof_unw_rule {
	__u8 cfa_kind, cfa_reg;
	__u8 rbp_kind, rbp_reg;
	__u8 ra_kind, ra_reg;
	__u8 flags;
	__s8 cfa_add; /* EBPROF_CFA_DEREF only */
	__s32 cfa_off;
	__s16 rbp_off;
	__s16 ra_off;
};

/* Filter flags, set in .rodata before load. */
#define EBPROF_FILTER_TGID (1u << 0)
#define EBPROF_FILTER_COMM (1u << 1)

#endif
