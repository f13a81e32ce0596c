/*
 * unwind: one step of a user stack walk, from a frame's registers to its
 * caller's, by the unwind tables (bpf/ebprof.h's layout) or by the frame
 * pointer. The BPF program (ebprof.bpf.c) walks sampled stacks with it;
 * user space (symbolizer/unwinder.c) walks the stacks the program copied
 * out when a process's tables were not loaded yet, with the same code, so
 * both give the same frames by construction.
 *
 * The includer says how to reach memory and tables, by defining:
 *
 *   UNW_READ(env, dst, addr)   8 bytes of the process's memory at addr
 *                              into *dst (a __u64 *); 0, or non-zero on a fault
 *   UNW_WORD(table, i, dst)    word i of a table into *dst (a __u32 *); 0, or
 *                              non-zero past its end
 *   UNW_RULE(env, i)           a const struct ebprof_unw_rule * for rule i, or NULL
 *
 * and may define UNW_FORGET(x), which keeps the integer lvalue x's value
 * but leaves the BPF verifier knowing nothing of it but its width (see
 * unw_find_rule()).
 *
 * Without them only the register names and results are defined (for the
 * sampler, which counts results). Everything here is bounded loops and
 * plain arithmetic, as the BPF verifier wants it.
 */
#ifndef EBPROF_BPF_UNWIND_H
#define EBPROF_BPF_UNWIND_H

#ifndef UNW_INLINE
#define UNW_INLINE static inline
#endif
#ifndef UNW_FORGET
#define UNW_FORGET(x) ((void)0)
#endif

/* DWARF register numbers (x86-64 psABI) of struct ebprof_regs (bpf/ebprof.h). */
#define UNW_NR_REGS EBPROF_NR_REGS
#define UNW_RBP 6
#define UNW_RSP 7
#define UNW_RIP 16
#define UNW_REG(r) (1u << (r))

/* What a step says; the ones from UNW_NO_TABLE on stop the walk early (bpf/ebprof.h). */
enum unw_result {
	UNW_NEXT,	  /* the caller's registers are in place */
	UNW_END,	  /* the outermost frame: a normal end */
	UNW_NO_TABLE,	  /* the pc's file has no table loaded yet */
	UNW_NO_ROW,	  /* its table has no row at the pc */
	UNW_UNSUPPORTED,  /* the row's rule is one we do not follow */
	UNW_READ_FAULT,	  /* the stack could not be read, or made no sense */
	UNW_DEPTH_CAP,	  /* the frame cap was reached */
};

/* The steps, for an includer that said how to reach memory and tables. */
#if defined(UNW_READ) && defined(UNW_WORD) && defined(UNW_RULE)

/*
 * The rule index at file offset off of a table (0: no row): the page's
 * first and last row from the index, then a binary search of at most 16
 * steps (a page holds at most 2^16 rows, one per byte).
 */
UNW_INLINE __u32 unw_find_rule(void *table, __u64 off)
{
	__u32 n_pages, first_page, lo, hi, rows_at, w;
	__u64 page = off >> EBPROF_UNW_PAGE_SHIFT;
	__u32 low = (__u32)(off & ((1u << EBPROF_UNW_PAGE_SHIFT) - 1));

	if (UNW_WORD(table, 0, &n_pages) || UNW_WORD(table, 1, &first_page))
		return 0;
	if (page < first_page || page - first_page >= n_pages)
		return 0;
	page -= first_page;
	if (UNW_WORD(table, EBPROF_UNW_HEADER_WORDS + (__u32)page, &lo) ||
	    UNW_WORD(table, EBPROF_UNW_HEADER_WORDS + (__u32)page + 1, &hi) || lo >= hi)
		return 0;
	rows_at = EBPROF_UNW_HEADER_WORDS + n_pages + 1;
	/* Invariant: row lo starts at or before low (the page's first row is at offset 0
	 * when a rule runs into the page); find the last such row. */
	/*
	 * Each step ends by forgetting what the verifier learnt of lo and hi:
	 * a kernel that checks the states of a loop's rounds value by value
	 * (6.18's, with its loops found as strongly connected components)
	 * would otherwise see each of the 2^16 paths through the search as
	 * its own state, every bound narrowed differently, and give up.
	 */
	for (int i = 0; i < 17 && hi - lo > 1; i++) {
		__u32 mid = lo + (hi - lo) / 2;

		if (UNW_WORD(table, rows_at + mid, &w))
			return 0;
		if ((w >> 16) <= low)
			lo = mid;
		else
			hi = mid;
		UNW_FORGET(lo);
		UNW_FORGET(hi);
	}
	if (UNW_WORD(table, rows_at + lo, &w) || (w >> 16) > low)
		return 0;
	return w & 0xffff;
}

UNW_INLINE int unw_reg(const struct ebprof_regs *regs, __u32 reg, __u64 *value)
{
	if (reg >= UNW_NR_REGS || !(regs->valid & UNW_REG(reg)))
		return -1;
	*value = regs->r[reg];
	return 0;
}

/* The canonical frame address by the rule; UNW_NEXT or why not. */
UNW_INLINE int unw_cfa(void *env, const struct ebprof_unw_rule *rule,
		       const struct ebprof_regs *regs, __u64 *cfa)
{
	__u64 base;

	switch (rule->cfa_kind) {
	case EBPROF_CFA_REG:
		if (unw_reg(regs, rule->cfa_reg, &base))
			return UNW_UNSUPPORTED; /* a register this frame does not know */
		*cfa = base + (__s64)rule->cfa_off;
		return UNW_NEXT;
	case EBPROF_CFA_DEREF:
		if (unw_reg(regs, rule->cfa_reg, &base))
			return UNW_UNSUPPORTED;
		if (UNW_READ(env, cfa, base + (__s64)rule->cfa_off))
			return UNW_READ_FAULT;
		*cfa += (__s64)rule->cfa_add;
		return UNW_NEXT;
	case EBPROF_CFA_PLT:
		/* ld's lazy PLT entry: rsp + 8, 8 more after its push (at cfa_off). */
		if (unw_reg(regs, UNW_RSP, &base) || unw_reg(regs, UNW_RIP, cfa))
			return UNW_UNSUPPORTED;
		*cfa = base + 8 + (((*cfa & 15) >= (__u64)rule->cfa_off) ? 8 : 0);
		return UNW_NEXT;
	case EBPROF_CFA_NONE:
		return UNW_NO_ROW;
	default:
		return UNW_UNSUPPORTED;
	}
}

/*
 * A saved register (rbp, or the return address) by its rule. Sets *known
 * to whether the caller's value is known; UNW_NEXT, or why not.
 */
UNW_INLINE int unw_saved(void *env, __u8 kind, __u8 reg, __s16 off, __u64 cfa,
			 const struct ebprof_regs *regs, __u32 self, __u64 *value, int *known)
{
	__u64 base;

	*known = 1;
	switch (kind) {
	case EBPROF_REG_SAME:
		if (unw_reg(regs, self, value))
			*known = 0;
		return UNW_NEXT;
	case EBPROF_REG_UNDEFINED:
		*known = 0;
		return UNW_NEXT;
	case EBPROF_REG_AT_CFA:
		return UNW_READ(env, value, cfa + off) ? UNW_READ_FAULT : UNW_NEXT;
	case EBPROF_REG_VAL_CFA:
		*value = cfa + off;
		return UNW_NEXT;
	case EBPROF_REG_AT_REG:
		if (unw_reg(regs, reg, &base))
			return UNW_UNSUPPORTED;
		return UNW_READ(env, value, base + off) ? UNW_READ_FAULT : UNW_NEXT;
	case EBPROF_REG_IN_REG:
		if (unw_reg(regs, reg, value))
			return UNW_UNSUPPORTED;
		return UNW_NEXT;
	default:
		return UNW_UNSUPPORTED;
	}
}

/*
 * One frame by its table row: regs become the caller's (rsp = CFA, the
 * return address as rip, rbp when the row says where it is).
 */
UNW_INLINE int unw_step_rule(void *env, const struct ebprof_unw_rule *rule,
			     struct ebprof_regs *regs)
{
	__u64 cfa = 0, ra = 0, rbp = 0, sp = regs->r[UNW_RSP];
	int ra_known, rbp_known, ret;

	ret = unw_cfa(env, rule, regs, &cfa);
	if (ret != UNW_NEXT)
		return ret;
	if (rule->ra_kind == EBPROF_REG_UNDEFINED)
		return UNW_END; /* _start, a thread's entry: nothing called this */
	ret = unw_saved(env, rule->ra_kind, rule->ra_reg, rule->ra_off, cfa, regs, UNW_RIP, &ra,
			&ra_known);
	if (ret != UNW_NEXT)
		return ret;
	if (!ra_known || rule->ra_kind == EBPROF_REG_SAME)
		return UNW_UNSUPPORTED;
	ret = unw_saved(env, rule->rbp_kind, rule->rbp_reg, rule->rbp_off, cfa, regs, UNW_RBP,
			&rbp, &rbp_known);
	if (ret != UNW_NEXT)
		rbp_known = 0; /* the walk goes on; only a frame-pointer step would need it */
	/* The stack grows down: a caller's frame is above its callee's. */
	if (cfa <= sp && !(rule->flags & EBPROF_RULE_SIGNAL))
		return UNW_READ_FAULT;
	regs->r[UNW_RSP] = cfa;
	regs->r[UNW_RIP] = ra;
	regs->r[UNW_RBP] = rbp;
	regs->valid = UNW_REG(UNW_RSP) | UNW_REG(UNW_RIP) | (rbp_known ? UNW_REG(UNW_RBP) : 0);
	regs->exact = (rule->flags & EBPROF_RULE_SIGNAL) != 0;
	return ra ? UNW_NEXT : UNW_END;
}

/*
 * One frame by the frame pointer, for code without a table (JIT, files
 * with no CFI): the caller's rbp at [rbp], its return address at [rbp+8].
 * Like any frame-pointer walk it cannot see a frameless leaf's caller.
 */
UNW_INLINE int unw_step_fp(void *env, struct ebprof_regs *regs)
{
	__u64 bp, ra, next_bp;

	if (unw_reg(regs, UNW_RBP, &bp))
		return UNW_UNSUPPORTED;
	if (bp == 0)
		return UNW_END; /* the outermost frame clears rbp (the psABI's _start does) */
	if (bp <= regs->r[UNW_RSP] - 16 && (regs->valid & UNW_REG(UNW_RSP)))
		return UNW_READ_FAULT; /* a frame below the stack pointer: not a frame */
	if (UNW_READ(env, &next_bp, bp) || UNW_READ(env, &ra, bp + 8))
		return UNW_READ_FAULT;
	regs->r[UNW_RSP] = bp + 16;
	regs->r[UNW_RIP] = ra;
	regs->r[UNW_RBP] = next_bp;
	regs->valid = UNW_REG(UNW_RSP) | UNW_REG(UNW_RIP) | UNW_REG(UNW_RBP);
	regs->exact = 0;
	return ra ? UNW_NEXT : UNW_END;
}

#endif /* UNW_READ && UNW_WORD && UNW_RULE */

#endif
