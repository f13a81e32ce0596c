/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The off-CPU half of the kernel program: where tasks wait, weighted by
 * how long. Included at the end of ebprof.bpf.c, whose maps (counts,
 * stacks, filters, reports, scratch) and helpers it shares, so that an
 * off-CPU sample is drained, named and folded like an on-CPU one; only
 * its key's state (EBPROF_OFFCPU_*) tells them apart.
 *
 * One program on the scheduler's switch (tp_btf/sched_switch) sees both
 * ends of every wait:
 *   - the task leaving the CPU (prev, the current task there): the time,
 *     the state it leaves in (preempted and runnable, asleep, or
 *     uninterruptible), and its user stack, walked as the on-CPU sample
 *     walks it (frame pointers, or the table unwinder of unwind.h, in a
 *     tail-called program of its own), which only the current task's
 *     memory allows; a walk is kept per place the task leaves from, and
 *     not made again (offcpu_user_stack());
 *   - the task coming back (next): how long it was away; should the
 *     kernel switch a task in without running the program (it does, now
 *     and then), the task leaves again still stamped, and that wait is
 *     timed by the scheduler's own stamp of the switch-in (offcpu_unseen()).
 * A new task's first wait, from its wake-up after fork to its first run,
 * is stamped by a second program, on tp_btf/sched_wakeup_new (once per
 * fork, nothing per switch): without it a thread's on- and off-CPU time
 * would start at its first run, not at its creation.
 * Per-task state lives in task-local storage, so a task that migrates
 * finds its own stamp on any CPU, and a PID reused by a new task starts
 * with none (unlike a per-CPU or PID-keyed table: OpenTelemetry's
 * issue 1348, rezolus's 1192).
 *
 * Cost is bounded without bias. A task's off-CPU time is sampled as a
 * Poisson process over its accumulated off-CPU time: the gaps between
 * samples are drawn from an exponential distribution of mean P
 * (offcpu_period_ns), each sample stands for P of off-CPU time, and the
 * wait a sample falls in is the one it is charged to. The expected time
 * counted is the true time for any mix of long and short waits, and work
 * beyond the stamp and the walk is spent only on the waits that carry a
 * sample: their kernel stack is read then, from the waiting task
 * (bpf_get_task_stack of next, still stopped where it blocked). The
 * samples of one wait are counted with one map update. A token bucket
 * per CPU caps those updates at offcpu_max_rate a second; what it stops
 * is counted (OFFCPU_THROTTLED), never dropped silently.
 */
#include <bpf/bpf_tracing.h>

/* Set by user space before load (sampler.c): see struct sampler_config. */
const volatile __u64 offcpu_period_ns = 1000000;
const volatile __u64 offcpu_min_ns = 0;
const volatile __u64 offcpu_max_rate = 5000; /* sample updates per second per CPU */
/* -ln(u) for u uniform in (0, 1), as 1 << EBPROF_OFFCPU_EXP_SHIFT fixed point, mean 1. */
const volatile __u32 offcpu_exp[EBPROF_OFFCPU_EXP] = { 0 };
/* Byte offset of task_struct's state word (__state since 5.14, state before). */
const volatile __u32 off_state = 0;
/*
 * Off-CPU user stacks by the kernel's frame-pointer walk even where the
 * on-CPU ones use tables: set when the kernel's verifier refused the table
 * walk's program (ebprof_switch_walk; sampler.c), which is then not loaded.
 */
const volatile bool offcpu_fp_walk = false;
/*
 * The clock of the waits (offcpu_now()): the run queue's, read in place
 * through a task's se.cfs_rq->rq->clock, where user space found those
 * offsets and the scheduler's clock is stable across CPUs (sampler.c);
 * else bpf_ktime_get_ns(), a helper call that costs more than the rest
 * of a switch (tests/bench/README.md, "Off-CPU cost").
 */
const volatile bool offcpu_rq_clock = false;
const volatile __u32 off_se_cfs_rq = 0; /* task_struct.se.cfs_rq */
const volatile __u32 off_cfs_rq_rq = 0; /* cfs_rq.rq */
const volatile __u32 off_rq_clock = 0;	/* rq.clock */
/*
 * task_struct.sched_info.last_arrival: the run queue's clock when the
 * scheduler last switched the task in (CONFIG_SCHED_INFO); 0 when it is
 * not known or the waits are not timed by that clock (offcpu_unseen()).
 */
const volatile __u32 off_last_arrival = 0;
/*
 * task_struct.se.sum_exec_runtime: the task's time on a CPU, in ns, up to
 * date at each switch. What it grew by since the task left tells when a
 * switch-in the program missed was, where the stamp above is not there.
 */
const volatile __u32 off_sum_exec = 0;

/* The kernel's task states (include/linux/sched.h), stable since 2.6. */
#define OFFCPU_TASK_UNINTERRUPTIBLE 0x0002
#define OFFCPU_TASK_DEAD 0x0080 /* with EXIT_DEAD 0x0010 and EXIT_ZOMBIE 0x0020 */
#define OFFCPU_EXIT_MASK 0x00b0
#define OFFCPU_TASK_NOLOAD 0x0400 /* TASK_IDLE: an idle kernel thread's wait */
#define OFFCPU_NS_PER_S 1000000000ULL
/* The saved user registers that name where a thread waits (offcpu_place()). */
#define OFFCPU_PLACE_WORDS 5
#define OFFCPU_FRAME_REACH (1 << 20) /* bp at most this far above sp: a frame pointer */
#define OFFCPU_PLACE_SPAN 8 /* words at sp read at once when bp + 8 is among them */
/*
 * The places kept per task: a thread mostly leaves the CPU from one of two
 * (a ping-pong's write(), preempted by the wakeup it made, and its read()).
 */
#define OFFCPU_PLACES 2
/* Waits past this many samples are counted in one step (see offcpu_samples()). */
#define OFFCPU_DRAWS 16

/*
 * A user stack a task left the CPU with, leaf first, and the place it
 * left from (offcpu_place()); valid: a whole walk from that place.
 */
struct offcpu_stack {
	__u64 place[OFFCPU_PLACE_WORDS];
	__u32 n_uips;
	__u32 valid;
	__u64 uips[EBPROF_MAX_DEPTH + 1];
};

/*
 * One task's off-CPU state. key holds the process as described under
 * generation gen (as the per-CPU cache of ebprof.bpf.c does), with its
 * verdicts; t_out is 0 while the task is not being timed.
 */
struct offcpu_task {
	struct ebprof_key key;
	__u64 gen;
	__u64 mm;      /* its mm_struct when described: another one after its exec */
	__u64 t_out;   /* offcpu_now() when it left the CPU */
	__u64 rt_out;  /* its sum_exec_runtime then (off_sum_exec) */
	__u64 to_next; /* off-CPU ns before its next sample; 0: not drawn yet */
	__u8 described, user, wanted, reported;
	__u8 cur;      /* the wait's user stack: stacks[cur], unless copy_id */
	__u64 copy_id; /* not 0: the wait's user stack went to user space as this copy */
	struct offcpu_stack stacks[OFFCPU_PLACES];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct offcpu_task);
} offcpu_tasks SEC(".maps");

/* The cap's token bucket, per CPU: budget in ns of a second's allowance. */
struct offcpu_bucket {
	__u64 budget;
	__u64 last; /* offcpu_now() of the last refill; 0: never */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct offcpu_bucket);
} offcpu_buckets SEC(".maps");

/*
 * Now, in ns, on the CPU task t is queued on (at a switch, this CPU; at a
 * new task's wake-up, the CPU it will run on). The scheduler updated that
 * run queue's clock under the queue's lock just before either tracepoint
 * (__schedule(), wake_up_new_task()): the time of the switch as the
 * scheduler itself counts it, the clock of /proc/PID/schedstat's waits.
 * Three loads through BTF pointers; a NULL on the way reads 0 (untimed).
 */
static __always_inline __u64 offcpu_now(const struct task_struct *t)
{
	const char *q, *rq;

	if (!offcpu_rq_clock)
		return bpf_ktime_get_ns();
	q = *(const char *const *)((const char *)t + off_se_cfs_rq);
	rq = *(const char *const *)(q + off_cfs_rq_rq);
	return *(const __u64 *)(rq + off_rq_clock);
}

/* A gap to the next sample: P times an exponential draw of mean 1. */
static __always_inline __u64 offcpu_draw(void)
{
	__u32 i = bpf_get_prandom_u32() & (EBPROF_OFFCPU_EXP - 1);
	__u64 gap = (offcpu_period_ns * offcpu_exp[i]) >> EBPROF_OFFCPU_EXP_SHIFT;

	return gap ? gap : 1;
}

/*
 * The samples a wait of d ns holds, moving the task's gap on. The first
 * OFFCPU_DRAWS gaps are drawn one by one; the rest of a longer wait
 * counts its expected number of samples, r / P, with the fraction left
 * rounded up with probability fraction / P: still unbiased, and a wait
 * of an hour costs what one of a second does.
 */
static __always_inline __u64 offcpu_samples(struct offcpu_task *t, __u64 d)
{
	__u64 n = 0, r;

	if (!t->to_next)
		t->to_next = offcpu_draw();
	for (int i = 0; i < OFFCPU_DRAWS; i++) {
		if (d < t->to_next) {
			t->to_next -= d;
			return n;
		}
		d -= t->to_next;
		n++;
		t->to_next = offcpu_draw();
	}
	if (d < t->to_next) {
		t->to_next -= d;
		return n;
	}
	r = d - t->to_next;
	n += 1 + r / offcpu_period_ns;
	if (bpf_get_prandom_u32() % offcpu_period_ns < r % offcpu_period_ns)
		n++;
	t->to_next = offcpu_draw();
	return n;
}

/* Whether the CPU's bucket allows one more sample update now. */
static __always_inline bool offcpu_allowed(__u64 now)
{
	__u64 cost = OFFCPU_NS_PER_S / (offcpu_max_rate ? offcpu_max_rate : 1);
	struct offcpu_bucket *b;
	__u32 zero = 0;

	b = bpf_map_lookup_elem(&offcpu_buckets, &zero);
	if (!b)
		return false;
	if (b->last && now > b->last)
		b->budget += now - b->last;
	else
		b->budget = OFFCPU_NS_PER_S;
	b->last = now;
	/* A second's worth at most: bursts of up to offcpu_max_rate updates. */
	if (b->budget > OFFCPU_NS_PER_S)
		b->budget = OFFCPU_NS_PER_S;
	if (b->budget < cost)
		return false;
	b->budget -= cost;
	return true;
}

/*
 * The state prev leaves the CPU in; 0 when it leaves for good (exit).
 * prev is a BTF pointer: its state word is loaded in place, checked by the
 * verifier against the kernel's task_struct (no helper call).
 */
static __always_inline __u32 offcpu_state(bool preempt, const struct task_struct *prev)
{
	__u32 st = *(const __u32 *)((const char *)prev + off_state);

	if (st & OFFCPU_EXIT_MASK)
		return 0;
	if (preempt || st == 0)
		return EBPROF_OFFCPU_RUNNABLE;
	if ((st & OFFCPU_TASK_UNINTERRUPTIBLE) && !(st & OFFCPU_TASK_NOLOAD))
		return EBPROF_OFFCPU_IO;
	return EBPROF_OFFCPU_SLEEP;
}

/*
 * Where the current task (prev) leaves its user code, as the registers
 * the kernel saved say (read in place: pt_regs is a BTF pointer here): ip,
 * sp, the word at sp (a leaf's return address: which caller made the
 * call) and, where bp points into the stack, bp and the word above it (the
 * return address of a frame-pointer frame). A thread that leaves again
 * from a place it left from before has the same user stack. Not the other
 * registers a call keeps: loops keep their counters there; and not bp
 * where it is not a frame pointer, for the same reason (code built without
 * frame pointers uses it as one of those registers: a ping-pong's loop
 * counter made every other switch a new place, and walked it). Both words
 * come from one read of the top OFFCPU_PLACE_SPAN words of the stack when
 * bp's is among them (a leaf's wrapper called from a frame-pointer frame:
 * a read is most of the cost), else from two.
 */
static __always_inline void offcpu_place(struct task_struct *prev, __u64 *now)
{
	const __u64 *w = (const __u64 *)bpf_task_pt_regs(prev);
	__u64 sp = w[19], bp = w[4], top[OFFCPU_PLACE_SPAN], d = bp + 8 - sp;
	bool frame = bp >= sp && bp - sp < OFFCPU_FRAME_REACH && !(bp & 7);

	now[0] = w[16]; /* ip */
	now[1] = sp;
	now[2] = frame ? bp : 0;
	now[3] = 0;
	now[4] = 0;
	if (frame && d < sizeof(top) && !(d & 7) &&
	    !bpf_probe_read_user(top, sizeof(top), (const void *)sp)) {
		now[3] = top[0];
#pragma clang loop unroll(full)
		for (int i = 1; i < OFFCPU_PLACE_SPAN; i++)
			if (d == i * 8)
				now[4] = top[i];
		return;
	}
	bpf_probe_read_user(&now[3], sizeof(now[3]), (const void *)sp);
	if (frame)
		bpf_probe_read_user(&now[4], sizeof(now[4]), (const void *)(bp + 8));
}

static __always_inline bool offcpu_same_place(const struct offcpu_stack *st, const __u64 *now)
{
	bool same = st->valid;

#pragma clang loop unroll(full)
	for (int i = 0; i < OFFCPU_PLACE_WORDS; i++)
		same &= st->place[i] == now[i];
	return same;
}

/*
 * The table walk of a new place, for offcpu_user_stack(): the current
 * task's user stack into t->stacks[t->cur], from the registers the kernel
 * saved when it entered the kernel. Deeper stacks keep their innermost
 * EBPROF_MAX_DEPTH + 1 frames. A walk cut short (no table yet, a fault)
 * is not kept: the next switch walks again. A task whose tables are not
 * loaded yet has its stack copied to user space instead, as an on-CPU
 * sample would, under a new id (t->copy_id: this CPU's count of such
 * copies and the CPU); a copy is not kept either.
 *
 * It runs in a program of its own (ebprof_switch_walk), tail-called by
 * the switch program: inside it, Linux 6.1's verifier gave up on the
 * whole (1M instructions, E2BIG); apart, each verifies as the on-CPU
 * program does.
 */
static __always_inline void offcpu_walk_tables(struct ebprof_cpu *c, struct offcpu_task *t)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct offcpu_stack *st = &t->stacks[t->cur & (OFFCPU_PLACES - 1)];
	struct ebprof_scratch *sc;
	__u64 id, n, copy_id, py_frames = c->stats[EBPROF_STAT_PY_FRAMES];
	int walk;

	sc = bpf_map_lookup_elem(&scratch, &cpu);
	if (!sc)
		return; /* cannot happen: one slot per possible CPU */
	sc->kstack.nr = 0; /* the wait's is read when the task comes back */
	copy_id = EBPROF_COPY_ID | c->copy_ids << 16 | (cpu & 0xffff);
	walk = walk_user(NULL, c, &t->key, sc, &id, copy_id);
	if (walk == WALK_COPIED) {
		c->copy_ids++;
		t->copy_id = copy_id;
		return;
	}
	n = sc->ustack.nr;
	if (n > EBPROF_MAX_DEPTH + 1)
		n = EBPROF_MAX_DEPTH + 1;
	if (n && !bpf_probe_read_kernel(st->uips, n * sizeof(__u64), sc->ustack.ips))
		st->n_uips = (__u32)n;
	/*
	 * A stack with Python frames is not kept: the interpreter waits from
	 * the same native place (its registers, its C stack) whichever Python
	 * function at that depth made the call, so a kept walk would charge
	 * one function's waits to another (the walk counted frames emitted).
	 */
	st->valid = walk != WALK_PARTIAL && st->n_uips == n &&
		    c->stats[EBPROF_STAT_PY_FRAMES] == py_frames;
}

/* The table walk's program, in the switch program's tail-call slot 0. */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} offcpu_walker SEC(".maps");

/*
 * The user stack of the task leaving (the current task) into one of
 * t->stacks, which t->cur then names: the walk the on-CPU sample would
 * take. Most switches of a thread leave from a place it left from before
 * (a server's read(), a worker's futex wait): the stack walked from there
 * is kept, and no walk is made while the place is one of the last two.
 * A new place is walked by frame pointer here, or by the tables in
 * ebprof_switch_walk: a tail call, which does not come back, so this is
 * the switch program's last step. Should the call fail (no program in the
 * slot: cannot happen once sampler.c filled it, before attaching) the
 * frame-pointer walk stands in, counted with the frames walked so.
 */
static __always_inline void offcpu_user_stack(void *ctx, struct ebprof_cpu *c,
					      struct task_struct *prev, struct offcpu_task *t)
{
	__u64 now[OFFCPU_PLACE_WORDS];
	struct offcpu_stack *st;
	long bytes;
	__u32 k;

	t->copy_id = 0;
	st = &t->stacks[t->cur & (OFFCPU_PLACES - 1)];
	if (!user_stacks || !t->user) {
		st->n_uips = 0;
		st->valid = 0;
		return;
	}
	offcpu_place(prev, now);
	if (offcpu_same_place(&t->stacks[0], now)) {
		t->cur = 0;
		return;
	}
	if (offcpu_same_place(&t->stacks[1], now)) {
		t->cur = 1;
		return;
	}
	/* A new place: walk into the slot not used last. */
	stat_add(c, EBPROF_STAT_OFFCPU_WALKS);
	k = (t->cur + 1) & (OFFCPU_PLACES - 1);
	t->cur = k;
	st = &t->stacks[k];
	__builtin_memcpy(st->place, now, sizeof(now));
	st->valid = 0;
	st->n_uips = 0;
	if (!offcpu_fp_walk && unwind_mode == EBPROF_UNWIND_TABLES) {
		bpf_tail_call(ctx, &offcpu_walker, 0);
		stat_add(c, EBPROF_STAT_UNW_FP_FRAMES);
	}
	bytes = bpf_get_stack(ctx, st->uips, EBPROF_MAX_DEPTH * sizeof(__u64), BPF_F_USER_STACK);
	if (bytes < 0) {
		stat_add(c, EBPROF_STAT_USTACK_ERR);
		return;
	}
	st->n_uips = (__u32)((__u64)bytes / sizeof(__u64));
	st->valid = 1;
}

/*
 * Counts n samples of t's wait: its kernel stack is the task's, read now,
 * unless the task has run since (kstack false: none is known).
 */
static __always_inline void offcpu_record(struct ebprof_cpu *c, struct task_struct *task,
					  struct offcpu_task *t, __u64 n, bool kstack)
{
	struct ebprof_scratch *sc;
	__u32 cpu = bpf_get_smp_processor_id(), loss;
	struct offcpu_stack *st;
	long bytes;

	sc = bpf_map_lookup_elem(&scratch, &cpu);
	if (!sc)
		return; /* cannot happen: one slot per possible CPU */
	sc->kstack.nr = 0;
	if (kernel_stacks && kstack) {
		bytes = bpf_get_task_stack(task, sc->kstack.ips, EBPROF_MAX_DEPTH * sizeof(__u64),
					   0);
		if (bytes < 0) {
			stat_addn(c, EBPROF_STAT_KSTACK_ERR, n);
			return;
		}
		sc->kstack.nr = (__u64)bytes / sizeof(__u64);
	}
	st = &t->stacks[t->cur & (OFFCPU_PLACES - 1)];
	sc->ustack.nr = st->n_uips <= EBPROF_MAX_DEPTH + 1 ? st->n_uips : EBPROF_MAX_DEPTH + 1;
	if (sc->ustack.nr)
		bpf_probe_read_kernel(sc->ustack.ips, sc->ustack.nr * sizeof(__u64), st->uips);
	t->key.kstack = stack_id(sc->kstack.ips, sc->kstack.nr, EBPROF_MAX_DEPTH + 1);
	/* A copied stack is named by user space, under its id. */
	t->key.ustack = t->copy_id ? t->copy_id
				   : stack_id(sc->ustack.ips, sc->ustack.nr, EBPROF_MAX_FRAMES);
	loss = count_sample(&t->key, sc, n);
	stat_addn(c, loss ? loss : EBPROF_STAT_OFFCPU_RECORDED, n);
}

/*
 * The end of t's wait at now: the time it was away, and its samples if
 * any are due (kstack: the task has not run since, see offcpu_record()).
 */
static __always_inline void offcpu_end(struct ebprof_cpu *c, struct task_struct *task,
				       struct offcpu_task *t, __u64 now, bool kstack)
{
	__u64 away, n;

	away = now > t->t_out ? now - t->t_out : 0;
	t->t_out = 0;
	if (away < offcpu_min_ns) {
		stat_add(c, EBPROF_STAT_OFFCPU_SHORT);
		return;
	}
	n = offcpu_samples(t, away);
	if (!n)
		return;
	stat_addn(c, EBPROF_STAT_OFFCPU_SAMPLES, n);
	if (!offcpu_allowed(now)) {
		stat_addn(c, EBPROF_STAT_OFFCPU_THROTTLED, n);
		return;
	}
	offcpu_record(c, task, t, n, kstack);
}

/* next comes back: its wait ends. */
static __always_inline void offcpu_enter(struct ebprof_cpu *c, struct task_struct *next,
					 __u64 now)
{
	struct offcpu_task *t = bpf_task_storage_get(&offcpu_tasks, next, 0, 0);

	if (t && t->t_out)
		offcpu_end(c, next, t, now, true);
}

/*
 * prev leaves the CPU still stamped: the switch that ran it again did not
 * run this program for it. Linux 6.18 does that now and then (in a test
 * of three threads that sleep and spin, a few switch-ins in ~1,500 that
 * the kernel counted in the thread's own context switches), and the wait
 * would be lost whole. The scheduler stamped the switch-in itself, in the
 * run queue's clock: the wait is timed by that stamp, with the user stack
 * it left with and no kernel stack (the task has run since). Where that
 * stamp is not read (waits timed by bpf_ktime_get_ns()), the task's run
 * time since it left says how long ago it came back, as perf's mend of
 * its own missing switch events does. With neither, the wait is counted
 * untimed.
 */
static __always_inline void offcpu_unseen(struct ebprof_cpu *c, struct task_struct *prev,
					  struct offcpu_task *t, __u64 now)
{
	__u64 back = off_last_arrival ? task_word((__u64)prev, off_last_arrival) : 0;

	if (!back && off_sum_exec) {
		__u64 ran = task_word((__u64)prev, off_sum_exec) - t->rt_out;

		back = ran && ran < now - t->t_out ? now - ran : 0;
	}
	if (!back || back <= t->t_out || back > now) {
		stat_add(c, EBPROF_STAT_OFFCPU_UNTIMED); /* the caller drops the stamp */
		return;
	}
	stat_add(c, EBPROF_STAT_OFFCPU_UNSEEN);
	offcpu_end(c, prev, t, back, false);
}

/* prev leaves the CPU: stamp it, unless it is idle, unwanted or exiting. */
static __always_inline void offcpu_leave(void *ctx, struct ebprof_cpu *c, bool preempt,
					 struct task_struct *prev, __u64 now)
{
	/* prev is the current task: its ids read in place, as the helper would. */
	__u32 pid = *(const __u32 *)((const char *)prev + off_pid);
	__u64 pid_tgid = (__u64)*(const __u32 *)((const char *)prev + off_tgid) << 32 | pid;
	__u64 gen = cache_gen;
	struct offcpu_task *t;
	__u32 state;

	if (pid == 0)
		return; /* the idle task is never timed */
	/* A task the PID filter rejects costs no storage and no read. */
	if (tgid_rejected(pid_tgid >> 32))
		return;
	t = bpf_task_storage_get(&offcpu_tasks, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!t) {
		stat_add(c, EBPROF_STAT_OFFCPU_UNTIMED);
		return;
	}
	if (t->t_out && t->described && t->wanted)
		offcpu_unseen(c, prev, t, now);
	t->t_out = 0;
	if (!t->described || t->gen != gen) {
		struct task_view v = { &t->key, &t->user, &t->wanted, &t->reported };
		__u64 mm = task_word((__u64)prev, off_mm);

		/*
		 * Any exec or rename on the machine moves the generation on, and
		 * a busy host execs thousands of times a second: the description
		 * is read again (a leader may have been renamed, a filter changed),
		 * but the walks are kept unless this task's own exec replaced its
		 * memory (a new mm_struct: new mappings, perhaps new tables).
		 */
		if (!t->described || t->mm != mm) {
			t->stacks[0].valid = 0;
			t->stacks[1].valid = 0;
		}
		task_read(v, (__u64)prev, pid_tgid >> 32);
		t->mm = mm;
		t->gen = gen;
		t->described = 1;
	}
	if (!t->wanted)
		return;
	state = offcpu_state(preempt, prev);
	if (!state)
		return;
	if (!t->reported)
		t->reported = report_process(c, &t->key, (__u64)prev);
	t->key.state = state;
	t->t_out = now;
	t->rt_out = off_sum_exec ? task_word((__u64)prev, off_sum_exec) : 0;
	/* Last: it may end in a tail call. */
	offcpu_user_stack(ctx, c, prev, t);
}

/*
 * The switch itself. The arguments are those of the tracepoint since
 * Linux 4.x (preempt, prev, next); the state is read from prev, not from
 * the fourth argument, which kernels before 5.18 do not pass.
 *
 * A tp_btf program, under a section name of ours: libbpf would load and
 * index the whole kernel BTF to find the tracepoint's BTF id (several MiB
 * of peak RSS); sampler.c finds it with kbtf instead and hands it to the
 * load (see sampler_switch_prepare).
 */
SEC("ebprof_tp_btf")
int BPF_PROG(ebprof_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 now = offcpu_now(next);
	struct ebprof_cpu *c;
	__u32 zero = 0;

	c = bpf_map_lookup_elem(&cpus, &zero);
	if (!c)
		return 0; /* cannot happen: a one-slot per-CPU array */
	stat_add(c, EBPROF_STAT_OFFCPU_SWITCHES);
	if (!now) {
		/* No clock (a NULL on the way to it): next's wait and prev's are not timed. */
		stat_add(c, EBPROF_STAT_OFFCPU_UNTIMED);
		return 0;
	}
	offcpu_enter(c, next, now);
	/* Last: prev's walk may be a tail call, which does not come back. */
	offcpu_leave(ctx, c, preempt, prev, now);
	return 0;
}

/*
 * The table walk of prev's new place (offcpu_walk_tables()), tail-called
 * by ebprof_switch with its context: prev is still the current task, whose
 * registers and memory the walk reads. Under the switch program's section,
 * so that it loads as the same kind of program (a tail call's condition).
 */
SEC("ebprof_tp_btf")
int BPF_PROG(ebprof_switch_walk, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct offcpu_task *t;
	struct ebprof_cpu *c;
	__u32 zero = 0;

	c = bpf_map_lookup_elem(&cpus, &zero);
	if (!c)
		return 0; /* cannot happen: a one-slot per-CPU array */
	t = bpf_task_storage_get(&offcpu_tasks, prev, 0, 0);
	if (t)
		offcpu_walk_tables(c, t);
	return 0;
}

/*
 * A new task is woken for its first run (wake_up_new_task(), in the
 * parent, after fork or clone): it waits from now, runnable, until the
 * switch that first runs it counts the wait as any other. Its user stack
 * then is one frame, the address it will return to: the parent's saved
 * user ip (the child's registers are a copy of the parent's), clone3 for
 * a thread, fork's syscall for a process; the rest of a thread's stack
 * does not exist yet. No walk is kept: its first switch-out walks.
 */
SEC("ebprof_tp_btf_new")
int BPF_PROG(ebprof_wakeup_new, struct task_struct *p)
{
	__u64 now = offcpu_now(p), task = (__u64)p;
	struct offcpu_task *t;
	struct ebprof_cpu *c;
	struct offcpu_stack *st;
	__u32 zero = 0, tgid = 0;

	c = bpf_map_lookup_elem(&cpus, &zero);
	if (!c)
		return 0; /* cannot happen: a one-slot per-CPU array */
	if (!now) {
		stat_add(c, EBPROF_STAT_OFFCPU_UNTIMED);
		return 0;
	}
	bpf_probe_read_kernel(&tgid, sizeof(tgid), (const void *)(task + off_tgid));
	if (tgid_rejected(tgid))
		return 0;
	t = bpf_task_storage_get(&offcpu_tasks, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!t) {
		stat_add(c, EBPROF_STAT_OFFCPU_UNTIMED);
		return 0;
	}
	{
		struct task_view v = { &t->key, &t->user, &t->wanted, &t->reported };

		task_read(v, task, tgid);
	}
	t->gen = cache_gen;
	t->mm = task_word(task, off_mm);
	t->described = 1;
	t->t_out = 0;
	t->copy_id = 0;
	t->cur = 0;
	t->stacks[0].valid = 0;
	t->stacks[1].valid = 0;
	st = &t->stacks[0];
	st->n_uips = 0;
	if (!t->wanted)
		return 0;
	if (!t->reported)
		t->reported = report_process(c, &t->key, task);
	if (user_stacks && t->user) {
		const __u64 *w = (const __u64 *)bpf_task_pt_regs(bpf_get_current_task_btf());

		st->uips[0] = w[16]; /* ip */
		st->n_uips = 1;
	}
	t->key.state = EBPROF_OFFCPU_RUNNABLE;
	t->t_out = now;
	t->rt_out = off_sum_exec ? task_word(task, off_sum_exec) : 0;
	return 0;
}
