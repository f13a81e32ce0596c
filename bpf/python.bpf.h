/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * CPython frames inside the table unwinder (included by ebprof.bpf.c).
 *
 * A CPython thread runs Python code in the interpreter's evaluation
 * function (_PyEval_EvalFrameDefault), one native call of it per entry
 * from C, each running a chain of Python frames that call one another
 * without a native call between them. The frames of a thread are linked
 * from the innermost out (_PyInterpreterFrame.previous), and the first
 * frame a native call of the evaluation function ran is marked is_entry.
 * So when the native walk meets a frame whose pc is in the evaluation
 * function, the Python frames that native frame runs are the next ones of
 * the thread's chain, up to and including the next entry frame: they are
 * emitted there, leaf first, before the native frame itself, and the
 * walk goes on natively. Python -> C -> Python comes out in order, the C
 * frames between the two evaluation calls in place.
 *
 * The chain starts at the thread's state, which CPython keeps in a
 * pthread key (its TSD slot: fsbase + py.tsd_offset, user space found and
 * checked it), then tstate->cframe->current_frame. Every offset comes from
 * struct ebprof_py_proc (bpf/ebprof.h), which user space fills from its
 * per-version table; a read that fails stops the Python part of the walk
 * (counted), never the native part.
 *
 * One Python frame per bpf_loop() round of the walk: walk_frame() calls
 * py_frame_step() while py_emitting, so a deep Python stack costs rounds,
 * not verifier states; the walk's Python state lives in the CPU's scratch
 * space (struct ebprof_scratch), which the verifier does not track slot by
 * slot as it does the stack.
 */
#ifndef EBPROF_BPF_PYTHON_BPF_H
#define EBPROF_BPF_PYTHON_BPF_H

/* Where the current task's registers say its thread's memory starts (x86-64 fs). */
static __always_inline __u64 py_fsbase(void)
{
	return task_word(bpf_get_current_task(), off_fsbase);
}

/* A 64-bit field of a buffer of size bytes at a checked offset (0 past its end). */
static __always_inline __u64 py_u64(const __u8 *buf, __u32 off, __u32 size)
{
	__u64 v;

	if (off > size - 8)
		return 0;
	__builtin_memcpy(&v, buf + off, 8);
	return v;
}

/* A 32-bit one (little-endian: the low half of the 8 bytes there). */
static __always_inline __u32 py_u32(const __u8 *buf, __u32 off, __u32 size)
{
	return (__u32)py_u64(buf, off, size);
}

static __always_inline __u8 py_u8(const __u8 *buf, __u32 off)
{
	__u64 i = off;

	asm volatile("" : "+r"(i)); /* bound-check the very register that indexes */
	return i < EBPROF_PY_FRAME_BYTES ? buf[i] : 0;
}

/*
 * The thread's innermost Python frame, or 0 (not a Python thread, or
 * between frames): fsbase's TSD slot -> tstate -> cframe -> current_frame.
 */
static __always_inline __u64 py_current_frame(const struct ebprof_py_proc *py)
{
	__u64 tstate = 0, cframe = 0, frame = 0;
	__u64 fsbase = py_fsbase();

	if (!fsbase || bpf_probe_read_user(&tstate, 8, (const void *)(fsbase + py->tsd_offset)) ||
	    !tstate)
		return 0;
	if (bpf_probe_read_user(&cframe, 8, (const void *)(tstate + py->tstate_cframe)) || !cframe)
		return 0;
	if (bpf_probe_read_user(&frame, 8, (const void *)(cframe + py->cframe_frame)))
		return 0;
	return frame;
}

/* Whether a native frame's pc is in the evaluation function. */
static __always_inline bool py_in_eval(const struct ebprof_py_proc *py, __u64 pc, bool exact)
{
	__u64 at = exact ? pc : pc - 1; /* a return address: the call is before it */

	return (at >= py->eval_start && at < py->eval_end) ||
	       (at >= py->cold_start && at < py->cold_end);
}

/*
 * Emits the Python frame at s->py_next into the stack (two slots), and
 * moves on to the one it was called from; ends the run at an entry frame.
 * Returns 0, or 1 when the walk has no room left (the frame cap).
 */
static __always_inline int py_frame_step(struct walk *w)
{
	struct ebprof_scratch *s = w->s;
	const struct ebprof_py_proc *py = &s->py;
	__u64 n = s->ustack.nr, code, prev_instr, lasti, first, second;
	__u32 sum, win = py->code_window;
	const __u8 *c = s->py_code;

	if (n + 2 > max_frames || n + 2 > EBPROF_MAX_FRAMES) {
		w->st->stop = EBPROF_STAT_UNW_DEPTH_CAP;
		return 1;
	}
	if (bpf_probe_read_user(s->py_frame, sizeof(s->py_frame), (const void *)s->py_next))
		goto fault;
	code = py_u64(s->py_frame, py->frame_code, EBPROF_PY_FRAME_BYTES);
	if (!code || code > EBPROF_PY_ADDR_MASK ||
	    bpf_probe_read_user(s->py_code, sizeof(s->py_code), (const void *)(code + win)))
		goto fault;
	sum = ebprof_py_checksum(py_u32(c, py->code_flags, EBPROF_PY_CODE_BYTES),
				 py_u32(c, py->code_argcount, EBPROF_PY_CODE_BYTES),
				 py_u32(c, py->code_kwonly, EBPROF_PY_CODE_BYTES),
				 py_u32(c, py->code_firstlineno, EBPROF_PY_CODE_BYTES),
				 py_u64(c, py->code_qualname, EBPROF_PY_CODE_BYTES),
				 py_u64(c, py->code_linetable, EBPROF_PY_CODE_BYTES));
	prev_instr = py_u64(s->py_frame, py->frame_prev_instr, EBPROF_PY_FRAME_BYTES);
	/* A frame that has not run an instruction yet points just before its first. */
	lasti = prev_instr >= code + py->code_bytecode ? (prev_instr - code - py->code_bytecode) / 2
						       : 0;
	if (lasti > 0xffffffffULL)
		lasti = 0xffffffffULL;
	first = EBPROF_PY_FRAME | (__u64)(py->version & 0x7fff) << EBPROF_PY_VERSION_SHIFT | code;
	second = (__u64)sum << 32 | lasti;
	s->ustack.ips[n & (EBPROF_MAX_FRAMES - 1)] = first;
	s->ustack.ips[(n + 1) & (EBPROF_MAX_FRAMES - 1)] = second;
	s->ustack.nr = n + 2;
	stack_hash_add(&w->st->h, n, first);
	stack_hash_add(&w->st->h, n + 1, second);
	stat_add(w->c, EBPROF_STAT_PY_FRAMES);
	s->py_next = py_u64(s->py_frame, py->frame_previous, EBPROF_PY_FRAME_BYTES);
	if (py_u8(s->py_frame, py->frame_is_entry) || !s->py_next)
		s->py_emitting = false;
	return 0;
fault:
	stat_add(w->c, EBPROF_STAT_PY_FAULTS);
	s->py_next = 0;
	s->py_emitting = false;
	s->py_off = true; /* the chain made no sense: no more Python in this walk */
	return 0;
}

/*
 * Called for each native frame before it is recorded: whether the frame
 * runs Python frames not emitted yet (then the walk emits them first,
 * py_emitting, and comes back to the same native frame).
 */
static __always_inline bool py_frame_begin(struct walk *w, const struct ebprof_regs *regs)
{
	struct ebprof_scratch *s = w->s;
	const struct ebprof_py_proc *py = &s->py;
	__u64 sp = regs->r[UNW_RSP];

	if (!s->py_on || s->py_off || sp == s->py_done_sp ||
	    !py_in_eval(py, regs->r[UNW_RIP], regs->exact))
		return false;
	s->py_done_sp = sp;
	if (!s->py_started) {
		s->py_started = true;
		s->py_next = py_current_frame(py);
	}
	if (!s->py_next)
		return false;
	s->py_emitting = true;
	return true;
}

/* Whether the process runs a known Python, its layout then copied into s->py. */
static __always_inline bool py_lookup(struct ebprof_scratch *s, const struct ebprof_key *key)
{
	const struct ebprof_py_proc *py;

	if (!python_frames)
		return false;
	py = bpf_map_lookup_elem(&py_procs, &key->tgid);
	if (!py || py->start_time != key->start_time)
		return false;
	s->py = *py;
	return true;
}

/* At the start of a walk; on: s->py holds the process's layout (py_lookup()). */
static __always_inline void py_walk_init(struct walk *w, bool on)
{
	struct ebprof_scratch *s = w->s;

	s->py_on = on;
	s->py_off = false;
	s->py_started = false;
	s->py_emitting = false;
	s->py_next = 0;
	s->py_done_sp = 0;
}

#endif
