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
 * Two pairs of these maps sit in two-slot map-in-map arrays, and a
 * generation in .bss (active_gen, whose low bit is the pair) says which
 * pair samples go to; each CPU also counts its last keys in slots of its
 * own before they reach the pair (struct ebprof_pending). To drain, user
 * space moves to the next generation, then updates a slot of a map-in-map array: the
 * kernel waits for every running BPF program to finish before that update
 * returns (synchronize_rcu() in maybe_wait_bpf_programs(),
 * kernel/bpf/syscall.c), so after it no program can write the old pair,
 * and user space reads and clears it, and the CPUs' slots of its
 * generation, without racing any increment.
 *
 * New processes are also reported as they are first sampled, through a
 * ring buffer of struct ebprof_process_event, so that user space can read
 * a short-lived process's mappings before it exits rather than at the
 * next drain, when /proc no longer shows it.
 *
 * User stacks are walked either by the kernel's frame-pointer walk
 * (bpf_get_stack(), at most 127 frames) or by the program's own unwinder
 * (bpf/unwind.h) through unwind tables user space loads (layout below),
 * up to EBPROF_MAX_FRAMES. Stacks of any depth are stored in chunks of
 * EBPROF_CHUNK_FRAMES frames, so a deep stack costs its depth, not every
 * stack the deepest's size. A sample of a process whose tables are not
 * loaded yet is sent to user space whole (registers, kernel stack, the top
 * of the user stack: struct ebprof_copy_event) on the same ring buffer,
 * and user space unwinds it with the same tables once they are built.
 */
#ifndef EBPROF_BPF_EBPROF_H
#define EBPROF_BPF_EBPROF_H

/* The kernel's own cap is sysctl kernel.perf_event_max_stack (127). */
#define EBPROF_MAX_DEPTH 127
#define EBPROF_COMM_LEN 16
/* The table unwinder's most user frames (the cap is set at load, up to this). */
#define EBPROF_MAX_FRAMES 4096
#define EBPROF_DEFAULT_FRAMES 1024
/* Frames per stored chunk: a 25-frame stack is one chunk of 264 bytes. */
#define EBPROF_CHUNK_FRAMES 32
#define EBPROF_MAX_CHUNKS (EBPROF_MAX_FRAMES / EBPROF_CHUNK_FRAMES)
/* Bytes of user stack a copy carries, from the stack pointer up. */
#define EBPROF_COPY_BYTES 16384
/*
 * A copy of a sample whose pc is in none of its process's mappings wakes
 * user space, to read them again, at most once a CPU in this time (ns):
 * a pc no read finds would otherwise wake it at every sample.
 */
#define EBPROF_UNMAPPED_WAKE_NS 20000000ull

/* How user stacks are walked (rodata unwind_mode). */
#define EBPROF_UNWIND_FP 0     /* bpf_get_stack(): the kernel's frame-pointer walk */
#define EBPROF_UNWIND_TABLES 1 /* bpf/unwind.h: tables, frame pointers where a file has none */

/*
 * Kept in a hash map: one entry per process and distinct sampled stack
 * pair. The start time keeps two processes that had one PID within a drain
 * apart.
 */
struct ebprof_key {
	__u32 tgid;
	__u32 state; /* EBPROF_OFFCPU_*: 0 on-CPU, else why the task was off the CPU */
	__u64 kstack; /* id in the chunks map; 0 = no kernel stack */
	__u64 ustack; /* id in the chunks map; 0 = no user stack */
	__u64 start_time; /* the process's start, ns after boot (CLOCK_BOOTTIME) */
	char comm[EBPROF_COMM_LEN]; /* the process (group leader) name */
};

/*
 * Off-CPU samples (bpf/offcpu.bpf.h): the state a task left the CPU in.
 * A key with a state other than EBPROF_OFFCPU_NONE counts off-CPU
 * samples, each worth the mean sampling period of off-CPU time
 * (rodata offcpu_period_ns), not a CPU-clock tick.
 */
#define EBPROF_OFFCPU_NONE 0	 /* an on-CPU sample */
#define EBPROF_OFFCPU_RUNNABLE 1 /* preempted: runnable, waiting for a CPU */
#define EBPROF_OFFCPU_SLEEP 2	 /* asleep (interruptible, or idle-waiting) */
#define EBPROF_OFFCPU_IO 3	 /* uninterruptible: disk I/O, some locks */
#define EBPROF_OFFCPU_STATES 4

/* Entries of the exponential table (rodata offcpu_exp): a power of two. */
#define EBPROF_OFFCPU_EXP 256
/* The table's fixed point: an entry of 1 << 16 is one mean period. */
#define EBPROF_OFFCPU_EXP_SHIFT 16

/* What a ring buffer record is: its first word. */
#define EBPROF_EVENT_PROCESS 1
#define EBPROF_EVENT_COPY 2
/* A copy of a sample the program also unwound (oracle_every): for tests. */
#define EBPROF_EVENT_ORACLE 3

/*
 * A process sampled for the first time: its first sample, or its first
 * after an exec, or a new process under a PID seen before.
 */
/*
 * A process the filter wants that runs already, as the targets iterator
 * (SEC ebprof_iter_task) writes it, so that user space can load its
 * tables and its Python layout before sampling starts.
 */
struct ebprof_target {
	__u32 tgid;
	__u32 pad;
	__u64 start_time; /* as in struct ebprof_key */
};

struct ebprof_process_event {
	__u32 type; /* EBPROF_EVENT_PROCESS */
	__u32 tgid;
	__u64 start_time; /* as in struct ebprof_key */
	__u64 sampled_at; /* the sample's time, ns after boot */
	/*
	 * A fork that has not exec'd: its parent (tgid, and start time as in
	 * struct ebprof_key), whose mappings its own began as. 0: not one.
	 */
	__u32 parent_tgid;
	__u32 pad;
	__u64 parent_start_time;
	char comm[EBPROF_COMM_LEN];
};

/*
 * A CPU's last keys, counted there before the counts map sees them: slot
 * pending_slot(key) of the pair's EBPROF_PENDING_SLOTS (per CPU) holds a
 * key that is in the pair's counts map already, and the samples of it
 * counted since. A sample whose key is in its slot adds to the slot and
 * touches no hash map; another key takes the slot over, and the count it
 * held goes to the counts map first. tag is the generation it counts for
 * plus one (active_gen in ebprof.bpf.c; 0: empty): user space reads the
 * old generation's slots at a drain, after the swap's wait, and slots of
 * older generations are empty by their tag, never cleared.
 */
#define EBPROF_PENDING_SLOTS 128 /* a power of two */
#define EBPROF_PENDING_SHIFT 57	 /* 64 - log2(EBPROF_PENDING_SLOTS) */

struct ebprof_pending {
	struct ebprof_key key;
	__u64 count;
	__u64 tag;
};

/* One stored piece of a stack: frames [index * 32, index * 32 + 32) of stack id. */
struct ebprof_chunk_key {
	__u64 id;
	__u32 index;
	__u32 pad;
};

struct ebprof_chunk {
	__u32 nr; /* frames in the whole stack */
	__u32 pad;
	__u64 ips[EBPROF_CHUNK_FRAMES];
};

/* A kernel stack being read, or a user stack being walked (leaf first). */
struct ebprof_stack {
	__u64 nr;
	__u64 ips[EBPROF_MAX_DEPTH + 1]; /* + 1: a whole number of chunks */
};

struct ebprof_ustack {
	__u64 nr;
	__u64 ips[EBPROF_MAX_FRAMES];
};

/* Registers in DWARF order (rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8-r15, rip). */
#define EBPROF_NR_REGS 17

struct ebprof_regs {
	__u64 r[EBPROF_NR_REGS];
	__u32 valid; /* bit i: r[i] is known */
	__u32 exact; /* r[16] is where the frame was interrupted, not a return address */
};

/*
 * A sample of a process whose tables were not loaded: user space unwinds
 * stack[] (stack_bytes bytes of the user stack from address regs.r[7]) from
 * regs, and counts the sample with kips. Sent up to stack[stack_bytes]
 * only.
 *
 * Off-CPU, the user stack is taken when a task leaves the CPU, but its
 * samples are known only when it comes back: that copy has an id (with
 * EBPROF_COPY_ID set) and no kernel stack, and the samples of its wait
 * are counted in the maps with the id as their user stack's (key.ustack).
 * User space keeps the unwound copy under its id until a drain hands them
 * out. The ids the program hashes stacks to never have that bit set.
 */
#define EBPROF_COPY_ID (1ULL << 63)

struct ebprof_copy_event {
	__u32 type; /* EBPROF_EVENT_COPY */
	__u32 tgid;
	__u64 start_time;
	__u64 id; /* 0: a sample of its own; else an off-CPU stack's, EBPROF_COPY_ID set */
	__u64 sampled_at; /* when its stack was taken, ns after boot */
	char comm[EBPROF_COMM_LEN];
	struct ebprof_regs regs;
	__u32 n_kips;
	__u32 stack_bytes;
	__u64 kips[EBPROF_MAX_DEPTH + 1];
	/* EBPROF_EVENT_ORACLE: the program's own walk, its first EBPROF_MAX_DEPTH + 1 frames */
	__u32 n_uips;
	__u32 pad;
	__u64 uips[EBPROF_MAX_DEPTH + 1];
	__u8 stack[EBPROF_COPY_BYTES];
};

/*
 * Where a process's code is, for the unwinder: its executable mappings,
 * sorted by start, in the mappings array at [first, first + n).
 */
struct ebprof_unw_proc {
	__u64 start_time; /* the process these mappings are of */
	__u32 first, n;
};

struct ebprof_unw_mapping {
	__u64 start, end;
	__u64 adjust;	/* a pc's file offset is pc + adjust (pgoff - start) */
	__u32 table;	/* slot in the tables map; 0: none, walk by frame pointer */
	__u32 table_id; /* the table's own number, never reused (a slot is) */
};

/*
 * The rules a CPU looked up last, direct-mapped by (table, file offset):
 * a hot stack's frames find their rule without searching their table.
 * 1024 entries of 16 bytes, one set per CPU.
 */
#define EBPROF_RULE_CACHE 1024

struct ebprof_rule_cache_entry {
	__u64 offset;
	__u32 table_id; /* 0: empty */
	__u32 rule;
};

struct ebprof_rule_cache {
	struct ebprof_rule_cache_entry e[EBPROF_RULE_CACHE];
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
	 * next sample when the report found the ring buffer full, or the
	 * process in an exec.
	 */
	EBPROF_STAT_PROCESS_EVENTS,	 /* new processes reported */
	EBPROF_STAT_PROCESS_EVENTS_LOST, /* not reported: ring buffer full */
	EBPROF_STAT_PROCESS_IN_EXEC,	 /* not reported yet: sampled in an exec */
	/*
	 * The table unwinder. A copied sample is not recorded here: user
	 * space unwinds and records it (samples = recorded + copied +
	 * filtered + idle + losses). The others are stacks recorded
	 * truncated, by why the walk stopped early; a walk that ran into a
	 * file whose table was not ready and could not copy the sample goes
	 * on by frame pointer and counts UNW_NO_TABLE.
	 */
	EBPROF_STAT_COPIED,	     /* sent to user space with its stack copy */
	EBPROF_STAT_UNW_NO_TABLE,    /* no table yet, and no room to copy the sample */
	EBPROF_STAT_UNW_NO_ROW,	     /* the pc's table has no row there */
	EBPROF_STAT_UNW_UNSUPPORTED, /* a rule the unwinder does not follow */
	EBPROF_STAT_UNW_READ_FAULT,  /* the stack could not be read, or made no sense */
	EBPROF_STAT_UNW_DEPTH_CAP,   /* deeper than the frame cap */
	EBPROF_STAT_UNW_FP_FRAMES,   /* not a stop: frames walked by frame pointer */
	/*
	 * Off-CPU (bpf/offcpu.bpf.h). OFFCPU_SAMPLES are samples due (each
	 * worth one mean period); they end recorded (OFFCPU_RECORDED),
	 * throttled by the per-CPU cap (OFFCPU_THROTTLED, a loss), or lost
	 * to one of the stack or map losses above, which then count the
	 * samples. SWITCHES counts the program's runs; SHORT the blocks
	 * under the minimum (by choice); UNTIMED the blocks that found no
	 * task storage, or whose end went unseen with nothing to time it by (a
	 * loss of unknown time); WALKS, not a stop, the user stacks walked at
	 * a switch (a new place; the others reuse a walk); UNSEEN, not a
	 * stop, the waits whose end (the task's switch-in) the program did
	 * not see, found when the task next left the CPU and timed then by
	 * the scheduler's own stamp of its last arrival (offcpu_unseen()).
	 */
	EBPROF_STAT_OFFCPU_SWITCHES,
	EBPROF_STAT_OFFCPU_SAMPLES,
	EBPROF_STAT_OFFCPU_RECORDED,
	EBPROF_STAT_OFFCPU_THROTTLED,
	EBPROF_STAT_OFFCPU_SHORT,
	EBPROF_STAT_OFFCPU_UNTIMED,
	EBPROF_STAT_OFFCPU_WALKS, /* not a stop: user stacks walked at a new place */
	EBPROF_STAT_OFFCPU_UNSEEN, /* not a stop: waits timed after their end went unseen */
	/*
	 * Python (bpf/python.bpf.h). Not ways a sample ends: PY_FRAMES
	 * counts Python frames emitted; PY_FAULTS the walks of a thread's
	 * Python frames cut short by a read that failed or made no sense
	 * (its native frames go on).
	 */
	EBPROF_STAT_PY_FRAMES,
	EBPROF_STAT_PY_FAULTS,
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
	__u64 copy_ids; /* off-CPU copies sent from this CPU: the next one's id */
	/*
	 * The process this CPU walked last, as unw_procs and py_procs gave it
	 * when unw_gen was walk_gen - 1 (0: none): those two hash lookups,
	 * made once per process and change rather than at every sample.
	 */
	__u64 walk_gen;
	__u64 walk_start; /* its start time */
	__u32 walk_tgid;
	__u32 walk_first, walk_n; /* its mappings in unw_mappings, when walk_have_proc */
	__u8 walk_have_proc;
	__u8 walk_py; /* the scratch space's py holds its Python layout */
	__u8 walk_pad[2];
	__u64 unmapped_wake_at; /* the last copy of an unmapped pc that woke user space (send_copy()) */
	__u64 stats[EBPROF_STAT_NR];
};

/*
 * CPython frames (bpf/python.bpf.h). User space (symbolizer/pyproc)
 * recognizes a process's interpreter and loads one struct ebprof_py_proc
 * per process into the py_procs map: where the evaluation function is,
 * where a thread finds its thread state, and the byte offsets of the few
 * fields the walk reads, taken from a per-version table that user space
 * checked against the running binary. The program itself knows no version.
 *
 * A Python frame takes two slots of a user stack, leaf first like native
 * frames: EBPROF_PY_FRAME | version << 48 | the code object's address,
 * then checksum << 32 | the instruction index (code units from the start
 * of the bytecode). The checksum (ebprof_py_checksum) mixes fields of the
 * code object read at sample time, so that user space never names a frame
 * after a code object that was freed and its memory reused since. A user
 * address is below 2^47, so a native frame never has bit 63 set.
 */
#define EBPROF_PY_FRAME (1ull << 63)
#define EBPROF_PY_VERSION_SHIFT 48
#define EBPROF_PY_ADDR_MASK ((1ull << EBPROF_PY_VERSION_SHIFT) - 1)
/* Bytes of a frame and of a code object the walk reads (from code_window). */
#define EBPROF_PY_FRAME_BYTES 80
#define EBPROF_PY_CODE_BYTES 128
/*
 * The table walk's window of the user stack: a walk's first read takes
 * EBPROF_WIN_FIRST bytes (most stacks end within them), and each read
 * after it the rest of its page, up to EBPROF_WIN_BYTES (a power of two,
 * at most a page): a stack that went past the first window is a deep one.
 */
#define EBPROF_WIN_BYTES 4096
#define EBPROF_WIN_FIRST 1024

struct ebprof_py_proc {
	__u64 start_time;	      /* the process this is of (struct ebprof_key's) */
	__u64 eval_start, eval_end;   /* the evaluation function, [start, end) */
	__u64 cold_start, cold_end;   /* its .cold part; 0, 0: none */
	__u64 tsd_offset;	      /* the thread state's pointer is at fsbase + this */
	__u32 version;		      /* index in symbolizer/pyproc's table (frame tag) */
	__u16 tstate_cframe;	      /* PyThreadState.cframe */
	__u16 cframe_frame;	      /* _PyCFrame.current_frame */
	__u16 frame_code;	      /* _PyInterpreterFrame.f_code */
	__u16 frame_previous;	      /* .previous */
	__u16 frame_prev_instr;	      /* .prev_instr */
	__u16 frame_is_entry;	      /* .is_entry (a byte) */
	__u16 code_bytecode;	      /* where the bytecode starts: sizeof(PyCodeObject) */
	__u16 code_window;	      /* code bytes read from here, EBPROF_PY_CODE_BYTES */
	/* In that window (each + 8 <= EBPROF_PY_CODE_BYTES): */
	__u8 code_flags, code_argcount, code_kwonly, code_firstlineno; /* 32-bit */
	__u8 code_qualname, code_linetable, pad[2];		       /* pointers */
};

/* The checksum of a code object's fields (both sides compute it). */
static inline __u32 ebprof_py_checksum(__u32 flags, __u32 argcount, __u32 kwonly,
				       __u32 firstlineno, __u64 qualname, __u64 linetable)
{
	__u64 x = (__u64)firstlineno | (__u64)argcount << 32;

	x ^= ((__u64)flags | (__u64)kwonly << 32) * 0x9e3779b97f4a7c15ULL;
	x ^= qualname * 0xc4ceb9fe1a85ec53ULL;
	x ^= linetable * 0xff51afd7ed558ccdULL;
	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 32;
	return (__u32)x & 0x7fffffff; /* a second slot never has bit 63 set */
}

/* Words of x86-64's user ABI struct pt_regs (asm/ptrace.h). */
#define EBPROF_PT_REGS_WORDS 21

/* A stack's hash as its frames are mixed in (ebprof.bpf.c). */
struct ebprof_hash {
	__u64 a, b;
};

/*
 * A table walk's state (ebprof.bpf.c's struct walk holds its pointers).
 * In the scratch space, not on the program's stack: the verifier tracks
 * stack slots precisely, and these flags, set there to constants, made it
 * explore 9 times the instructions (450,774 against 48,597 on Linux 6.18:
 * 1.0 s of CPU at every load, against 0.1 s). copy_* are send_copy()'s.
 */
struct ebprof_walk_state {
	struct ebprof_hash h; /* of the frames so far, mixed as they are found */
	__u32 first, n_maps; /* the process's mappings in unw_mappings */
	__u32 stop;	     /* the stats index of an early stop; 0: none */
	__u8 have_proc;	     /* its mappings are loaded */
	__u8 may_copy;	     /* a missing table asks for a copy of the sample */
	__u8 want_copy;
	__u8 no_table;	     /* a missing table was walked by frame pointer */
	__u8 m_valid;	     /* the last mapping found, below */
	__u8 unmapped;	     /* a pc was in none of the process's mappings */
	__u8 pad[2];
	__u64 m_start, m_end, m_adjust;
	__u32 m_table, m_table_id;
	__u64 copy_sp;		     /* a copy's stack pointer (send_copy()) */
	__u32 copy_need, copy_bytes; /* the bytes it wants, and has read */
};

/*
 * A CPU's scratch space, too big for the BPF stack and for a per-CPU
 * array (32 KiB at most): one slot per CPU of a plain array, indexed by
 * the CPU the program runs on (perf_event programs do not nest on a CPU).
 */
struct ebprof_scratch {
	/*
	 * What each frame of a walk reads and writes comes first: a BPF load
	 * or store reaches 32 KiB past its pointer, so these take one
	 * instruction each, where past the large arrays below they took three.
	 */
	struct ebprof_regs regs; /* the walk's current frame */
	struct ebprof_walk_state walk;
	/*
	 * The table walk's window of the user stack (unw_read_user()): the
	 * win_len bytes at win_start, read at once, which serve the reads of
	 * the next frames up (0: none, at the start of every walk). In words,
	 * so that a read from it is one load, not eight of a byte each.
	 */
	__u64 win_start;
	__u32 win_len;
	__u32 win_cap; /* the most the next read takes: EBPROF_WIN_FIRST, then _BYTES */
	/*
	 * The walk's Python state, here rather than in the walk's own struct
	 * on the stack: the verifier tracks stack slots precisely, and these
	 * would multiply its states past its limit.
	 */
	__u64 py_next;	  /* the next Python frame to emit (0: none) */
	__u64 py_done_sp; /* the native frame whose Python frames were emitted */
	__u8 py_on;	  /* the process runs a known Python: its layout is in py */
	__u8 py_off;	  /* its chain made no sense: native frames only from here */
	__u8 py_started;  /* py_next was read from the thread state */
	__u8 py_emitting; /* the rounds emit Python frames, from py_next */
	__u8 py_pad[4];
	/* The Python walk (bpf/python.bpf.h): the process's layout, a frame, a code object. */
	struct ebprof_py_proc py;
	__u8 py_frame[EBPROF_PY_FRAME_BYTES];
	__u8 py_code[EBPROF_PY_CODE_BYTES];
	__u64 pt_regs[EBPROF_PT_REGS_WORDS]; /* the user registers as the kernel saved them */
	/* store_chunk() reads either stack by a mask as wide as the user stack's frames. */
	struct ebprof_stack kstack;
	struct ebprof_ustack ustack;
	__u64 win[EBPROF_WIN_BYTES / 8 + 1];
	struct ebprof_copy_event copy; /* the sample's first frame, and the copy if sent */
	/*
	 * The chunk being stored: 264 bytes that would not fit on the stack
	 * of a bpf_loop() callback next to the program's own (Linux 6.1
	 * counts them together against 512 bytes).
	 */
	struct ebprof_chunk chunk;
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

/*
 * A PID filter of up to this many PIDs is also kept in an array
 * (fast_tgids in ebprof.bpf.c) that a sample compares its tgid with before
 * any other work; a longer one is looked up in the tgids map.
 */
#define EBPROF_FAST_TGIDS 8

/* The section of the fast PID filter: .data, apart from cache_gen's writes. */
struct ebprof_fast_filter {
	__u32 n; /* PIDs in the filter; > EBPROF_FAST_TGIDS: see the tgids map */
	__u32 tgids[EBPROF_FAST_TGIDS]; /* slots past n repeat tgids[0] */
};

#endif
