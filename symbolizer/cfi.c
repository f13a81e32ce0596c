/*
 * cfi: parse .eh_frame and .debug_frame and run their call frame programs
 * into unwind rows (see cfi.h).
 *
 * Three passes over a section's bytes. The first walks the entries,
 * parses each CIE (kept in offset order, the order they come in) and
 * notes each FDE's range and program. The FDEs of both sections are then
 * sorted by address; where two overlap, the first kept wins (.eh_frame
 * before .debug_frame). Last, each FDE's program runs after its CIE's
 * initial program, and every change of the rule at an advance becomes a
 * row. Consecutive rows with the same rule merge, so a row is a real
 * change of rule.
 *
 * Every read is bounds-checked against its entry: a malformed entry is
 * skipped and counted, never read past. Expressions are matched against
 * the few shapes compilers and linkers emit on x86-64 (a register plus an
 * offset, its dereference for stack realignment, the lazy PLT's
 * computation); any other expression, a remember/restore stack deeper
 * than CFI_MAX_REMEMBER, or an offset beyond 32 bits gives an unsupported
 * rule.
 */
#include "bpf/grow.h"
#include "symbolizer/cfi.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolizer/debuginfo.h"
#include "symbolizer/elfhdr.h"
#include "symbolizer/elfsym.h"

#define CFI_MAX_REMEMBER 32

/* Pointer encodings (DW_EH_PE_*, LSB 4.1 "Exception Frames"). */
#define PE_OMIT 0xff
#define PE_FORMAT 0x0f
#define PE_APPLY 0x70
#define PE_PCREL 0x10
#define PE_DATAREL 0x30
#define PE_INDIRECT 0x80

/* Call frame instructions (DWARF 5, 6.4.2), the GNU ones included. */
enum {
	CFA_nop = 0x00,
	CFA_set_loc = 0x01,
	CFA_advance_loc1 = 0x02,
	CFA_advance_loc2 = 0x03,
	CFA_advance_loc4 = 0x04,
	CFA_offset_extended = 0x05,
	CFA_restore_extended = 0x06,
	CFA_undefined = 0x07,
	CFA_same_value = 0x08,
	CFA_register = 0x09,
	CFA_remember_state = 0x0a,
	CFA_restore_state = 0x0b,
	CFA_def_cfa = 0x0c,
	CFA_def_cfa_register = 0x0d,
	CFA_def_cfa_offset = 0x0e,
	CFA_def_cfa_expression = 0x0f,
	CFA_expression = 0x10,
	CFA_offset_extended_sf = 0x11,
	CFA_def_cfa_sf = 0x12,
	CFA_def_cfa_offset_sf = 0x13,
	CFA_val_offset = 0x14,
	CFA_val_offset_sf = 0x15,
	CFA_val_expression = 0x16,
	CFA_GNU_window_save = 0x2d,
	CFA_GNU_args_size = 0x2e,
	CFA_GNU_negative_offset_extended = 0x2f,
	CFA_advance_loc = 0x40, /* the high two bits; the low six are the operand */
	CFA_offset = 0x80,
	CFA_restore = 0xc0,
};

/* The DWARF expression operations we recognise. */
enum {
	OP_deref = 0x06,
	OP_and = 0x1a,
	OP_plus = 0x22,
	OP_plus_uconst = 0x23,
	OP_shl = 0x24,
	OP_ge = 0x2a,
	OP_lit0 = 0x30,
	OP_breg0 = 0x70,
	OP_bregx = 0x92,
};

struct cursor {
	const uint8_t *p, *end;
	bool bad;
};

/* Where a section's bytes are and what address its first byte has. */
struct section {
	const uint8_t *bytes;
	size_t size;
	uint64_t addr;
	bool eh; /* .eh_frame (else .debug_frame) */
};

struct cie {
	size_t offset; /* in its section */
	uint64_t code_align;
	int64_t data_align;
	uint32_t ra_reg;
	uint8_t fde_enc;
	uint8_t addr_size;
	bool has_aug_data; /* 'z': FDEs carry an augmentation length */
	bool signal;	   /* 'S' */
	const uint8_t *insns, *insns_end;
};

struct fde {
	uint64_t start, end;
	const struct cie *cie;
	const uint8_t *insns, *insns_end;
	const struct section *sec;
	uint32_t order; /* sources first, then position: ties keep .eh_frame */
};

struct cfi {
	struct cfi_row *rows;
	size_t n_rows, cap_rows;
	struct cfi_function *funcs;
	size_t n_funcs;
	struct elfsym_segment *segs; /* the file's PT_LOAD segments */
	size_t n_segs;
	struct cfi_stats stats;
};

/* What the parse of one file collects before the programs run. */
/* .eh_frame and .debug_frame, of the file and of one fallback image. */
#define CFI_MAX_SECTIONS 4

struct collect {
	struct cie *cies[CFI_MAX_SECTIONS]; /* per section: each has its own CIE offsets */
	size_t n_cies[CFI_MAX_SECTIONS], cap_cies[CFI_MAX_SECTIONS];
	struct fde *fdes;
	size_t n_fdes, cap_fdes;
	struct section secs[CFI_MAX_SECTIONS];
	size_t n_secs;
	struct cfi_stats *stats;
};

/* --- reading bytes ------------------------------------------------------ */

static bool need(struct cursor *c, size_t n)
{
	if (c->bad || (size_t)(c->end - c->p) < n) {
		c->bad = true;
		return false;
	}
	return true;
}

static uint64_t read_le(struct cursor *c, size_t n)
{
	uint64_t v = 0;

	if (!need(c, n))
		return 0;
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)c->p[i] << (8 * i);
	c->p += n;
	return v;
}

static uint64_t read_uleb(struct cursor *c)
{
	uint64_t v = 0;
	unsigned int shift = 0;

	for (;;) {
		uint8_t b;

		if (!need(c, 1))
			return 0;
		b = *c->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return v;
	}
}

static int64_t read_sleb(struct cursor *c)
{
	uint64_t v = 0;
	unsigned int shift = 0;
	uint8_t b;

	do {
		if (!need(c, 1))
			return 0;
		b = *c->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift;
	return (int64_t)v;
}

/*
 * A factored offset: n times the CIE's data alignment. A product that
 * does not fit in 64 bits (only a corrupt program asks for one) makes
 * the program unreadable from here on.
 */
static int64_t scaled(struct cursor *c, int64_t n, int64_t align)
{
	int64_t v;

	if (__builtin_mul_overflow(n, align, &v)) {
		c->bad = true;
		return 0;
	}
	return v;
}

/* An unsigned LEB128 operand as a signed one; over INT64_MAX is unreadable. */
static int64_t read_uleb_signed(struct cursor *c)
{
	uint64_t v = read_uleb(c);

	if (v > INT64_MAX) {
		c->bad = true;
		return 0;
	}
	return (int64_t)v;
}

/* A value of a DW_EH_PE format, without its application (pcrel...). */
static uint64_t read_format(struct cursor *c, uint8_t enc)
{
	switch (enc & PE_FORMAT) {
	case 0x00:
		return read_le(c, 8);
	case 0x01:
		return read_uleb(c);
	case 0x02:
		return read_le(c, 2);
	case 0x03:
		return read_le(c, 4);
	case 0x04:
		return read_le(c, 8);
	case 0x09:
		return (uint64_t)read_sleb(c);
	case 0x0a:
		return (uint64_t)(int64_t)(int16_t)read_le(c, 2);
	case 0x0b:
		return (uint64_t)(int64_t)(int32_t)read_le(c, 4);
	case 0x0c:
		return read_le(c, 8);
	default:
		c->bad = true;
		return 0;
	}
}

/*
 * An encoded address in section s. Only absolute and pc-relative ones
 * name code on x86-64; anything else makes the cursor bad. An indirect
 * one (personality routines) is read but not followed: no caller uses it.
 */
static uint64_t read_encoded(struct cursor *c, uint8_t enc, const struct section *s)
{
	uint64_t here = s->addr + (uint64_t)(c->p - s->bytes);
	uint64_t v = read_format(c, enc);

	switch (enc & PE_APPLY) {
	case 0:
		return v;
	case PE_PCREL:
		return v + here;
	default:
		if (!(enc & PE_INDIRECT))
			c->bad = true;
		return 0;
	}
}

/* --- rules -------------------------------------------------------------- */

/* Clears the fields a kind does not use, so that equal rules compare equal. */
static void rule_normalize(struct cfi_rule *r)
{
	if (r->cfa_kind == CFI_CFA_NONE) {
		*r = (struct cfi_rule){ .cfa_kind = r->cfa_kind };
		return;
	}
	if (r->cfa_kind == CFI_CFA_UNSUPPORTED)
		r->cfa_reg = 0, r->cfa_off = 0;
	if (r->cfa_kind == CFI_CFA_PLT)
		r->cfa_reg = CFI_REG_RSP;
	if (r->cfa_kind != CFI_CFA_DEREF)
		r->cfa_add = 0;
	if (r->rbp_kind == CFI_SAME || r->rbp_kind == CFI_UNDEFINED ||
	    r->rbp_kind == CFI_REG_UNSUPPORTED)
		r->rbp_reg = 0, r->rbp_off = 0;
	if (r->rbp_kind == CFI_AT_CFA || r->rbp_kind == CFI_VAL_CFA)
		r->rbp_reg = 0;
	if (r->rbp_kind == CFI_IN_REG)
		r->rbp_off = 0;
	if (r->ra_kind == CFI_SAME || r->ra_kind == CFI_UNDEFINED ||
	    r->ra_kind == CFI_REG_UNSUPPORTED)
		r->ra_reg = 0, r->ra_off = 0;
	if (r->ra_kind == CFI_AT_CFA || r->ra_kind == CFI_VAL_CFA)
		r->ra_reg = 0;
	if (r->ra_kind == CFI_IN_REG)
		r->ra_off = 0;
}

bool cfi_rule_equal(const struct cfi_rule *a, const struct cfi_rule *b)
{
	return a->cfa_kind == b->cfa_kind && a->cfa_reg == b->cfa_reg && a->cfa_off == b->cfa_off &&
	       a->cfa_add == b->cfa_add &&
	       a->rbp_kind == b->rbp_kind && a->rbp_reg == b->rbp_reg && a->rbp_off == b->rbp_off &&
	       a->ra_kind == b->ra_kind && a->ra_reg == b->ra_reg && a->ra_off == b->ra_off &&
	       (a->flags & CFI_SIGNAL) == (b->flags & CFI_SIGNAL);
}

static bool rule_unsupported(const struct cfi_rule *r)
{
	return r->cfa_kind == CFI_CFA_UNSUPPORTED || r->rbp_kind == CFI_REG_UNSUPPORTED ||
	       r->ra_kind == CFI_REG_UNSUPPORTED;
}

/* --- expressions -------------------------------------------------------- */

/* DW_OP_bregN off or DW_OP_bregx N off at the cursor; false if neither. */
static bool read_breg(struct cursor *c, uint8_t *reg, int64_t *off)
{
	uint8_t op;
	uint64_t r;

	if (!need(c, 1))
		return false;
	op = *c->p++;
	if (op >= OP_breg0 && op < OP_breg0 + 32) {
		r = op - OP_breg0;
	} else if (op == OP_bregx) {
		r = read_uleb(c);
	} else {
		return false;
	}
	*off = read_sleb(c);
	if (c->bad || r >= CFI_NR_REGS)
		return false;
	*reg = (uint8_t)r;
	return true;
}

static bool fits32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

/*
 * The lazy PLT entry's CFA, as ld writes it for .plt: rsp + 8, plus 8
 * once the entry has pushed its relocation index (at offset 11 of the
 * 16-byte entry; 10 in some linkers' layouts).
 */
static bool expr_plt(const uint8_t *p, size_t len, uint8_t *limit)
{
	static const uint8_t head[] = { OP_breg0 + CFI_REG_RSP, 8, OP_breg0 + 16, 0,
					OP_lit0 + 15, OP_and };
	static const uint8_t tail[] = { OP_ge, OP_lit0 + 3, OP_shl, OP_plus };

	if (len != sizeof(head) + 1 + sizeof(tail) || memcmp(p, head, sizeof(head)) ||
	    memcmp(p + sizeof(head) + 1, tail, sizeof(tail)))
		return false;
	if (p[sizeof(head)] < OP_lit0 || p[sizeof(head)] > OP_lit0 + 15)
		return false;
	*limit = p[sizeof(head)] - OP_lit0;
	return true;
}

static void expr_cfa(struct cfi_rule *r, const uint8_t *p, size_t len)
{
	struct cursor c = { p, p + len, false };
	uint8_t reg, limit;
	int64_t off;

	r->flags |= CFI_CFA_EXPR;
	r->cfa_kind = CFI_CFA_UNSUPPORTED;
	if (expr_plt(p, len, &limit)) {
		r->cfa_kind = CFI_CFA_PLT;
		r->cfa_reg = CFI_REG_RSP;
		r->cfa_off = (int32_t)limit;
		return;
	}
	if (!read_breg(&c, &reg, &off) || !fits32(off))
		return;
	if (c.p == c.end) {
		r->cfa_kind = CFI_CFA_REG;
	} else if (*c.p == OP_deref) {
		uint64_t add = 0;

		c.p++;
		if (c.p < c.end && *c.p == OP_plus_uconst) {
			c.p++;
			add = read_uleb(&c);
		}
		if (c.bad || c.p != c.end || add > INT32_MAX)
			return;
		r->cfa_kind = CFI_CFA_DEREF;
		r->cfa_add = (int32_t)add;
	} else {
		return;
	}
	r->cfa_reg = reg;
	r->cfa_off = (int32_t)off;
}

/* DW_CFA_expression: the expression gives the address the register is saved at. */
static void expr_reg(uint8_t *kind, uint8_t *reg_out, int64_t *off_out, const uint8_t *p,
		     size_t len)
{
	struct cursor c = { p, p + len, false };
	uint8_t reg;
	int64_t off;

	*kind = CFI_REG_UNSUPPORTED;
	if (!read_breg(&c, &reg, &off) || c.p != c.end || !fits32(off))
		return;
	*kind = CFI_AT_REG;
	*reg_out = reg;
	*off_out = off;
}

/* --- the interpreter ---------------------------------------------------- */

struct interp {
	const struct cie *cie;
	struct cfi_rule init; /* after the CIE's program: what DW_CFA_restore goes back to */
	struct cfi_rule cur;
	int64_t reg_off; /* the register form's offset, kept under an expression (readelf does) */
	struct cfi_rule stack[CFI_MAX_REMEMBER];
	int64_t stack_off[CFI_MAX_REMEMBER];
	size_t depth;
	bool lost; /* restore_state after a remember that did not fit */
	uint64_t loc, end;
	struct cfi *out; /* NULL while running the CIE's program */
};

/* A register's rule, for the two registers we keep; others are ignored. */
static void set_reg(struct interp *in, uint64_t reg, uint8_t kind, uint64_t reg2, int64_t off,
		    uint8_t expr_flag)
{
	bool rbp = reg == CFI_REG_RBP, ra = reg == in->cie->ra_reg;

	if (!rbp && !ra)
		return;
	if (!fits32(off) || reg2 >= CFI_NR_REGS) {
		kind = CFI_REG_UNSUPPORTED;
		off = 0;
	}
	if (rbp) {
		in->cur.rbp_kind = kind;
		in->cur.rbp_reg = (uint8_t)reg2;
		in->cur.rbp_off = (int32_t)off;
		in->cur.flags = (in->cur.flags & ~CFI_RBP_EXPR) | (expr_flag ? CFI_RBP_EXPR : 0);
	}
	if (ra) {
		in->cur.ra_kind = kind;
		in->cur.ra_reg = (uint8_t)reg2;
		in->cur.ra_off = (int32_t)off;
		in->cur.flags = (in->cur.flags & ~CFI_RA_EXPR) | (expr_flag ? CFI_RA_EXPR : 0);
	}
}

static void restore_reg(struct interp *in, uint64_t reg)
{
	const struct cfi_rule *i = &in->init;

	if (reg == CFI_REG_RBP) {
		in->cur.rbp_kind = i->rbp_kind;
		in->cur.rbp_reg = i->rbp_reg;
		in->cur.rbp_off = i->rbp_off;
		in->cur.flags = (in->cur.flags & ~CFI_RBP_EXPR) | (i->flags & CFI_RBP_EXPR);
	}
	if (reg == in->cie->ra_reg) {
		in->cur.ra_kind = i->ra_kind;
		in->cur.ra_reg = i->ra_reg;
		in->cur.ra_off = i->ra_off;
		in->cur.flags = (in->cur.flags & ~CFI_RA_EXPR) | (i->flags & CFI_RA_EXPR);
	}
}

static int rows_grow(struct cfi *cfi)
{
	return GROW_ARRAY(&cfi->rows, &cfi->cap_rows, cfi->n_rows + 1, 256);
}

/*
 * Appends the rule that holds from pc on. A row at the last row's pc
 * replaces it; a rule equal to the last one adds nothing.
 */
static int rows_push(struct cfi *cfi, uint64_t pc, const struct cfi_rule *rule)
{
	struct cfi_rule r = *rule;

	rule_normalize(&r);
	while (cfi->n_rows && cfi->rows[cfi->n_rows - 1].pc >= pc)
		cfi->n_rows--;
	if (cfi->n_rows && cfi_rule_equal(&cfi->rows[cfi->n_rows - 1].rule, &r))
		return 0;
	if (rows_grow(cfi))
		return -ENOMEM;
	cfi->rows[cfi->n_rows++] = (struct cfi_row){ .pc = pc, .rule = r };
	return 0;
}

/* The state so far holds up to new_loc: emit it, and move on. */
static int advance(struct interp *in, uint64_t new_loc)
{
	int err;

	if (!in->out)
		return 0; /* advances in a CIE's program mean nothing */
	if (new_loc <= in->loc)
		return 0;
	if (in->loc < in->end) {
		err = rows_push(in->out, in->loc, &in->cur);
		if (err)
			return err;
	}
	in->loc = new_loc;
	return 0;
}

static void def_cfa(struct interp *in, uint64_t reg, int64_t off)
{
	in->reg_off = off;
	in->cur.flags &= ~CFI_CFA_EXPR;
	if (reg >= CFI_NR_REGS || !fits32(off)) {
		in->cur.cfa_kind = CFI_CFA_UNSUPPORTED;
		return;
	}
	in->cur.cfa_kind = CFI_CFA_REG;
	in->cur.cfa_reg = (uint8_t)reg;
	in->cur.cfa_off = (int32_t)off;
}

static void def_cfa_offset(struct interp *in, int64_t off)
{
	in->reg_off = off;
	if (in->cur.cfa_kind != CFI_CFA_REG || (in->cur.flags & CFI_CFA_EXPR))
		return; /* only the register form has an offset to change */
	if (!fits32(off)) {
		in->cur.cfa_kind = CFI_CFA_UNSUPPORTED;
		return;
	}
	in->cur.cfa_off = (int32_t)off;
}

static void remember(struct interp *in)
{
	if (in->depth >= CFI_MAX_REMEMBER) {
		in->depth++;
		return;
	}
	in->stack[in->depth] = in->cur;
	in->stack_off[in->depth] = in->reg_off;
	in->depth++;
}

static void restore_state(struct interp *in)
{
	if (in->depth == 0)
		return; /* nothing remembered: as readelf, keep the state */
	in->depth--;
	if (in->depth >= CFI_MAX_REMEMBER) {
		in->lost = true;
		in->cur.cfa_kind = CFI_CFA_UNSUPPORTED;
		return;
	}
	in->cur = in->stack[in->depth];
	in->reg_off = in->stack_off[in->depth];
}

/* Reads a block (ULEB length, bytes); NULL when it does not fit. */
static const uint8_t *read_block(struct cursor *c, size_t *len)
{
	uint64_t n = read_uleb(c);
	const uint8_t *p = c->p;

	if (c->bad || !p || n > (uint64_t)(c->end - c->p)) {
		c->bad = true;
		return NULL;
	}
	c->p += n;
	*len = (size_t)n;
	return p;
}

/* One instruction with an extended opcode (not advance_loc, offset or restore). */
static int run_extended(struct interp *in, struct cursor *c, uint8_t op, const struct section *s)
{
	const struct cie *cie = in->cie;
	const uint8_t *block;
	uint64_t reg, reg2;
	size_t len;

	switch (op) {
	case CFA_nop:
	case CFA_GNU_window_save:
		return 0;
	case CFA_set_loc:
		reg = read_encoded(c, cie->fde_enc, s);
		return c->bad ? 0 : advance(in, reg);
	case CFA_advance_loc1:
		return advance(in, in->loc + read_le(c, 1) * cie->code_align);
	case CFA_advance_loc2:
		return advance(in, in->loc + read_le(c, 2) * cie->code_align);
	case CFA_advance_loc4:
		return advance(in, in->loc + read_le(c, 4) * cie->code_align);
	case CFA_offset_extended:
		reg = read_uleb(c);
		set_reg(in, reg, CFI_AT_CFA, 0, scaled(c, read_uleb_signed(c), cie->data_align), 0);
		return 0;
	case CFA_offset_extended_sf:
		reg = read_uleb(c);
		set_reg(in, reg, CFI_AT_CFA, 0, scaled(c, read_sleb(c), cie->data_align), 0);
		return 0;
	case CFA_GNU_negative_offset_extended:
		reg = read_uleb(c);
		set_reg(in, reg, CFI_AT_CFA, 0, scaled(c, -read_uleb_signed(c), cie->data_align), 0);
		return 0;
	case CFA_val_offset:
		reg = read_uleb(c);
		set_reg(in, reg, CFI_VAL_CFA, 0, scaled(c, read_uleb_signed(c), cie->data_align), 0);
		return 0;
	case CFA_val_offset_sf:
		reg = read_uleb(c);
		set_reg(in, reg, CFI_VAL_CFA, 0, scaled(c, read_sleb(c), cie->data_align), 0);
		return 0;
	case CFA_restore_extended:
		restore_reg(in, read_uleb(c));
		return 0;
	case CFA_undefined:
		set_reg(in, read_uleb(c), CFI_UNDEFINED, 0, 0, 0);
		return 0;
	case CFA_same_value:
		set_reg(in, read_uleb(c), CFI_SAME, 0, 0, 0);
		return 0;
	case CFA_register:
		reg = read_uleb(c);
		reg2 = read_uleb(c);
		set_reg(in, reg, CFI_IN_REG, reg2, 0, 0);
		return 0;
	case CFA_remember_state:
		remember(in);
		return 0;
	case CFA_restore_state:
		restore_state(in);
		return 0;
	case CFA_def_cfa:
		reg = read_uleb(c);
		def_cfa(in, reg, read_uleb_signed(c));
		return 0;
	case CFA_def_cfa_sf:
		reg = read_uleb(c);
		def_cfa(in, reg, scaled(c, read_sleb(c), cie->data_align));
		return 0;
	case CFA_def_cfa_register:
		/* readelf and GCC: back to the register form, with the last offset */
		def_cfa(in, read_uleb(c), in->reg_off);
		return 0;
	case CFA_def_cfa_offset:
		def_cfa_offset(in, read_uleb_signed(c));
		return 0;
	case CFA_def_cfa_offset_sf:
		def_cfa_offset(in, scaled(c, read_sleb(c), cie->data_align));
		return 0;
	case CFA_def_cfa_expression:
		block = read_block(c, &len);
		if (block)
			expr_cfa(&in->cur, block, len);
		return 0;
	case CFA_expression: {
		uint8_t kind = CFI_REG_UNSUPPORTED, r2 = 0;
		int64_t off = 0;

		reg = read_uleb(c);
		block = read_block(c, &len);
		if (block)
			expr_reg(&kind, &r2, &off, block, len);
		set_reg(in, reg, kind, r2, off, 1);
		return 0;
	}
	case CFA_val_expression:
		reg = read_uleb(c);
		if (read_block(c, &len))
			set_reg(in, reg, CFI_REG_UNSUPPORTED, 0, 0, 1);
		return 0;
	case CFA_GNU_args_size:
		read_uleb(c); /* stack adjustments at call sites: no effect on the rules */
		return 0;
	default:
		c->bad = true; /* an opcode we cannot even skip */
		return 0;
	}
}

/* Runs a program; stops at its end, at a bad byte, or past the FDE's end. */
static int run(struct interp *in, const uint8_t *p, const uint8_t *end, const struct section *s)
{
	struct cursor c = { p, end, false };
	int err = 0;

	while (!err && c.p < c.end && !c.bad && (!in->out || in->loc < in->end)) {
		uint8_t op = *c.p++;

		switch (op & 0xc0) {
		case CFA_advance_loc:
			err = advance(in, in->loc + (uint64_t)(op & 0x3f) * in->cie->code_align);
			break;
		case CFA_offset:
			set_reg(in, op & 0x3f, CFI_AT_CFA, 0,
				scaled(&c, read_uleb_signed(&c), in->cie->data_align), 0);
			break;
		case CFA_restore:
			restore_reg(in, op & 0x3f);
			break;
		default:
			err = run_extended(in, &c, op, s);
		}
	}
	if (!err && c.bad && in->out) {
		/* The rest of the program is unreadable: say so from here to the end. */
		in->cur.cfa_kind = CFI_CFA_UNSUPPORTED;
	}
	return err;
}

static int run_fde(struct cfi *cfi, const struct fde *f)
{
	struct interp in = {
		.cie = f->cie,
		.cur = { .cfa_kind = CFI_CFA_UNSUPPORTED },
		.end = f->end,
	};
	int err;

	/* Registers start "same value"; a CIE that sets no CFA leaves it unsupported. */
	if (f->cie->signal)
		in.cur.flags |= CFI_SIGNAL;
	run(&in, f->cie->insns, f->cie->insns_end, f->sec);
	in.init = in.cur;
	in.depth = 0;
	in.out = cfi;
	in.loc = f->start;
	err = run(&in, f->insns, f->insns_end, f->sec);
	if (!err && in.loc < in.end)
		err = rows_push(cfi, in.loc, &in.cur);
	return err;
}

/* --- entries ------------------------------------------------------------ */

/* CIEs come in offset order, so each section's array is sorted. */
static const struct cie *find_cie(const struct collect *col, size_t sec, size_t offset)
{
	const struct cie *cies = col->cies[sec];
	size_t lo = 0, hi = col->n_cies[sec];

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cies[mid].offset < offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < col->n_cies[sec] && cies[lo].offset == offset ? &cies[lo] : NULL;
}

/*
 * Parses a CIE's header after its id. Returns 0, or -EINVAL for one we
 * cannot read (an unknown augmentation without 'z' to skip it by).
 */
static int parse_cie(struct cursor *c, const struct section *s, struct cie *cie)
{
	uint8_t version = (uint8_t)read_le(c, 1);
	const char *aug = (const char *)c->p;
	const char *nul = memchr(c->p, '\0', (size_t)(c->end - c->p));

	if (!nul || (version != 1 && version != 3 && version != 4))
		return -EINVAL;
	c->p = (const uint8_t *)nul + 1;
	cie->fde_enc = s->eh ? 0 : PE_OMIT; /* .debug_frame: plain addresses */
	cie->addr_size = 8;
	if (aug[0] == 'e' && aug[1] == 'h') {
		read_le(c, 8); /* GCC 2's EH data pointer */
		aug += 2;
	}
	if (version == 4) {
		cie->addr_size = (uint8_t)read_le(c, 1);
		read_le(c, 1); /* segment selector size */
		if (cie->addr_size != 4 && cie->addr_size != 8)
			return -EINVAL;
	}
	cie->code_align = read_uleb(c);
	cie->data_align = read_sleb(c);
	cie->ra_reg = version == 1 ? (uint32_t)read_le(c, 1) : (uint32_t)read_uleb(c);
	if (*aug == 'z') {
		uint64_t len = read_uleb(c);
		const uint8_t *data_end = c->p + len;

		if (c->bad || len > (uint64_t)(c->end - c->p))
			return -EINVAL;
		cie->has_aug_data = true;
		for (aug++; *aug && !c->bad; aug++) {
			uint8_t enc;

			switch (*aug) {
			case 'R':
				cie->fde_enc = (uint8_t)read_le(c, 1);
				break;
			case 'P':
				enc = (uint8_t)read_le(c, 1);
				read_format(c, enc); /* the personality routine: not ours */
				break;
			case 'L':
				read_le(c, 1);
				break;
			case 'S':
				cie->signal = true;
				break;
			default:
				c->p = data_end; /* 'z' lets us skip what we do not know */
				aug = " "; /* stop at the next step */
			}
		}
		c->p = data_end;
	} else {
		/* Without 'z' only data-less letters can be skipped: 'S' (.debug_frame has it). */
		for (; *aug; aug++) {
			if (*aug != 'S')
				return -EINVAL;
			cie->signal = true;
		}
	}
	if (c->bad || cie->code_align == 0)
		return -EINVAL;
	cie->insns = c->p;
	cie->insns_end = c->end;
	return 0;
}

static int collect_cie(struct collect *col, size_t sec, struct cursor *c, size_t offset)
{
	struct cie cie = { .offset = offset };

	if (parse_cie(c, &col->secs[sec], &cie)) {
		col->stats->bad_entries++;
		return 0;
	}
	if (GROW_ARRAY(&col->cies[sec], &col->cap_cies[sec], col->n_cies[sec] + 1, 16))
		return -ENOMEM;
	col->cies[sec][col->n_cies[sec]++] = cie;
	return 0;
}

static int collect_fde(struct collect *col, struct cursor *c, const struct section *s,
		       const struct cie *cie)
{
	uint64_t start, range;
	struct fde *f;

	if (s->eh) {
		start = read_encoded(c, cie->fde_enc, s);
		range = read_format(c, cie->fde_enc & PE_FORMAT);
	} else {
		start = read_le(c, cie->addr_size);
		range = read_le(c, cie->addr_size);
	}
	if (cie->has_aug_data) {
		uint64_t len = read_uleb(c);

		if (len > (uint64_t)(c->end - c->p))
			c->bad = true;
		else
			c->p += len;
	}
	if (c->bad || start + range < start) {
		col->stats->bad_entries++;
		return 0;
	}
	col->stats->fdes++;
	if (range == 0 || start == 0)
		return 0; /* empty, or discarded by the linker */
	if (GROW_ARRAY(&col->fdes, &col->cap_fdes, col->n_fdes + 1, 256))
		return -ENOMEM;
	f = &col->fdes[col->n_fdes];
	*f = (struct fde){ .start = start, .end = start + range, .cie = NULL, .insns = c->p,
			   .insns_end = c->end, .sec = s, .order = (uint32_t)col->n_fdes };
	/* The CIE pointer is resolved after all CIEs are in: keep its offset for now. */
	f->cie = cie;
	col->n_fdes++;
	return 0;
}

/*
 * Walks the entries of one section. pass 0 collects CIEs, pass 1 FDEs
 * (whose CIEs may come after them in .debug_frame).
 */
static int walk_section(struct collect *col, size_t sec, int pass)
{
	const struct section *s = &col->secs[sec];
	size_t off = 0;

	while (off + 4 <= s->size) {
		struct cursor c = { s->bytes + off, s->bytes + s->size, false };
		uint64_t len = read_le(&c, 4), id, cie_ptr;
		size_t id_size = 4, id_at, next;
		bool is_cie;

		if (len == 0) {
			if (s->eh)
				break; /* the terminator */
			off += 4;
			continue;
		}
		if (len == 0xffffffff) {
			len = read_le(&c, 8);
			id_size = 8;
		}
		id_at = (size_t)(c.p - s->bytes);
		if (c.bad || len > s->size - id_at || len < id_size)
			break; /* the rest of the section cannot be framed */
		next = id_at + (size_t)len;
		c.end = s->bytes + next;
		id = read_le(&c, id_size);
		if (s->eh)
			is_cie = id == 0;
		else
			is_cie = id_size == 4 ? id == 0xffffffff : id == UINT64_MAX;
		if (pass == 0 && is_cie) {
			int err = collect_cie(col, sec, &c, off);

			if (err)
				return err;
		} else if (pass == 1 && !is_cie) {
			const struct cie *cie;
			int err;

			cie_ptr = s->eh ? (id <= id_at ? id_at - id : UINT64_MAX) : id;
			cie = cie_ptr < s->size ? find_cie(col, sec, (size_t)cie_ptr) : NULL;
			if (!cie) {
				col->stats->bad_entries++;
			} else {
				err = collect_fde(col, &c, s, cie);
				if (err)
					return err;
			}
		}
		off = next;
	}
	return 0;
}

static int fde_cmp(const void *a, const void *b)
{
	const struct fde *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Sorts the FDEs, drops the overlapping ones, and runs the rest into rows. */
static int build_rows(struct cfi *cfi, struct collect *col)
{
	uint64_t covered = 0;
	size_t kept = 0;
	int err;

	if (col->n_fdes)
		qsort(col->fdes, col->n_fdes, sizeof(*col->fdes), fde_cmp);
	for (size_t i = 0; i < col->n_fdes; i++) {
		const struct fde *f = &col->fdes[i];

		if (f->start < covered) {
			cfi->stats.overlaps++;
			continue;
		}
		col->fdes[kept++] = *f;
		covered = f->end;
	}
	col->n_fdes = kept;
	cfi->funcs = calloc(kept ? kept : 1, sizeof(*cfi->funcs));
	if (!cfi->funcs)
		return -ENOMEM;
	for (size_t i = 0; i < kept; i++) {
		const struct fde *f = &col->fdes[i];
		static const struct cfi_rule none = { .cfa_kind = CFI_CFA_NONE };

		cfi->funcs[cfi->n_funcs++] = (struct cfi_function){ f->start, f->end };
		err = run_fde(cfi, f);
		if (!err)
			err = rows_push(cfi, f->end, &none);
		if (err)
			return err;
	}
	for (size_t i = 0; i < cfi->n_rows; i++)
		cfi->stats.unsupported += rule_unsupported(&cfi->rows[i].rule);
	return 0;
}

/* --- sections ----------------------------------------------------------- */

/* The section called name, with its data (decompressed if it needs to be). */
static Elf_Scn *find_section(Elf *e, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(e, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(e, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, sh) || sh->sh_type == SHT_NOBITS)
			continue;
		n = elf_strptr(e, shstrndx, sh->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

/*
 * The most of one .eh_frame or .debug_frame read: 10x the largest on our
 * Debian 12 host, and a sparse file claiming gigabytes is not read.
 */
#define CFI_MAX_SECTION (512ULL << 20)

static bool add_section(struct collect *col, Elf *e, const char *name, bool eh)
{
	GElf_Shdr sh;
	Elf_Scn *scn = find_section(e, name, &sh);
	Elf_Data *data;

	if (!scn || sh.sh_size > CFI_MAX_SECTION)
		return false;
	if ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
		return false;
	data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf || !data->d_size)
		return false;
	col->secs[col->n_secs++] = (struct section){ data->d_buf, data->d_size, sh.sh_addr, eh };
	if (eh)
		col->stats->eh_frame_bytes += data->d_size;
	else
		col->stats->debug_frame_bytes += data->d_size;
	return true;
}

/*
 * A file whose section headers are gone still has its .eh_frame: the
 * PT_GNU_EH_FRAME segment (.eh_frame_hdr) points at it. Its size is not
 * recorded there; the terminator or the end of its segment ends it.
 */
static bool add_eh_frame_from_hdr(struct collect *col, Elf *e, const struct cfi *cfi)
{
	size_t phnum, raw_size;
	const uint8_t *raw = (const uint8_t *)elf_rawfile(e, &raw_size);
	GElf_Phdr ph;

	if (!raw || elf_getphdrnum(e, &phnum))
		return false;
	for (size_t i = 0; i < phnum; i++) {
		struct section hdr;
		struct cursor c;
		uint64_t eh_vaddr;
		uint8_t enc;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_GNU_EH_FRAME)
			continue;
		if (ph.p_offset >= raw_size || ph.p_filesz > raw_size - ph.p_offset || ph.p_filesz < 4)
			return false;
		hdr = (struct section){ raw + ph.p_offset, ph.p_filesz, ph.p_vaddr, true };
		c = (struct cursor){ hdr.bytes, hdr.bytes + hdr.size, false };
		if (read_le(&c, 1) != 1)
			return false;
		enc = (uint8_t)read_le(&c, 1);
		read_le(&c, 2); /* the FDE count's and the table's encodings */
		eh_vaddr = read_encoded(&c, enc, &hdr);
		if (c.bad)
			return false;
		for (size_t j = 0; j < cfi->n_segs; j++) {
			const struct elfsym_segment *seg = &cfi->segs[j];
			uint64_t off;

			if (eh_vaddr < seg->vaddr || eh_vaddr - seg->vaddr >= seg->filesz)
				continue;
			off = eh_vaddr - seg->vaddr + seg->offset;
			if (off >= raw_size)
				return false;
			col->secs[col->n_secs++] = (struct section){
				raw + off, seg->filesz - (eh_vaddr - seg->vaddr), eh_vaddr, true
			};
			if (col->secs[col->n_secs - 1].size > raw_size - off)
				col->secs[col->n_secs - 1].size = raw_size - off;
			col->stats->eh_frame_bytes += col->secs[col->n_secs - 1].size;
			return true;
		}
		return false;
	}
	return false;
}

/*
 * Adds the frame sections of image e to col and parses their entries.
 * own: e is the file itself (else a debug file, whose .eh_frame is gone).
 */
static int collect_image(struct collect *col, Elf *e, const struct cfi *cfi, bool own)
{
	size_t first = col->n_secs;
	int err = 0;

	if (!add_section(col, e, ".eh_frame", true) && own)
		add_eh_frame_from_hdr(col, e, cfi);
	add_section(col, e, ".debug_frame", false);
	for (int pass = 0; pass < 2 && !err; pass++)
		for (size_t i = first; i < col->n_secs && !err; i++)
			err = walk_section(col, i, pass);
	return err;
}

/*
 * Whether the FDEs read so far leave most executable bytes uncovered: a
 * stripped binary, or one built without unwind tables but for the C
 * runtime's start files, whose real tables are in its debug file.
 */
static bool mostly_uncovered(const struct cfi *cfi, const struct collect *col)
{
	uint64_t exec = 0, covered = 0;

	for (size_t i = 0; i < cfi->n_segs; i++)
		if (cfi->segs[i].flags & PF_X)
			exec += cfi->segs[i].filesz;
	for (size_t i = 0; i < col->n_fdes; i++)
		covered += col->fdes[i].end - col->fdes[i].start;
	return covered < exec / 2;
}

/* The images a fallback opened, kept until the rows are built. */
struct fallback {
	int fd;
	Elf *debug, *mini;
	void *image;
};

/*
 * Fills what the file's own tables leave out from its separate debug
 * file (paths; NULL: not looked for), else from its MiniDebugInfo.
 */
static int collect_fallback(struct collect *col, Elf *e, const struct debuginfo_paths *paths,
			    struct cfi *cfi, struct fallback *fb)
{
	size_t before = col->n_fdes, size;
	int err;

	if (paths) {
		fb->fd = debuginfo_open(e, paths);
		/* Header counts first, as elfsym does: libelf allocates by them. */
		if (fb->fd >= 0 && !elfhdr_check(fb->fd, NULL, 0))
			fb->debug = elf_begin(fb->fd, ELF_C_READ, NULL);
		if (fb->debug && elf_kind(fb->debug) == ELF_K_ELF) {
			err = collect_image(col, fb->debug, cfi, false);
			if (err)
				return err;
			if (col->n_fdes > 2 * before) {
				cfi->stats.source = CFI_FROM_DEBUG_FILE;
				return 0;
			}
		}
	}
	err = debuginfo_minidebug(e, &fb->image, &size);
	if (err == -ENOMEM)
		return err;
	if (err)
		return 0;
	if (elfhdr_check(-1, fb->image, size))
		return 0;
	fb->mini = elf_memory(fb->image, size);
	if (!fb->mini || elf_kind(fb->mini) != ELF_K_ELF)
		return 0;
	err = collect_image(col, fb->mini, cfi, false);
	if (!err && col->n_fdes > 2 * before)
		cfi->stats.source = CFI_FROM_MINIDEBUG;
	return err;
}

/* Reads everything from e, which it ends. */
static int open_elf(Elf *e, const struct debuginfo_paths *paths, struct cfi **out)
{
	struct collect col = { 0 };
	struct fallback fb = { .fd = -1 };
	struct cfi *cfi;
	int err;

	*out = NULL;
	if (!e)
		return -ENOEXEC;
	cfi = calloc(1, sizeof(*cfi));
	if (!cfi) {
		elf_end(e);
		return -ENOMEM;
	}
	col.stats = &cfi->stats;
	err = elf_kind(e) == ELF_K_ELF && gelf_getclass(e) == ELFCLASS64 ? 0 : -ENOEXEC;
	if (!err)
		err = elfsym_read_segments(e, &cfi->segs, &cfi->n_segs);
	if (!err)
		err = collect_image(&col, e, cfi, true);
	if (!err && col.n_fdes)
		cfi->stats.source = CFI_FROM_FILE;
	if (!err && mostly_uncovered(cfi, &col))
		err = collect_fallback(&col, e, paths, cfi, &fb);
	if (!err)
		err = build_rows(cfi, &col);
	for (size_t i = 0; i < CFI_MAX_SECTIONS; i++)
		free(col.cies[i]);
	free(col.fdes);
	elf_end(fb.mini);
	free(fb.image);
	elf_end(fb.debug);
	if (fb.fd >= 0)
		close(fb.fd);
	elf_end(e);
	if (err) {
		cfi_free(cfi);
		return err;
	}
	*out = cfi;
	return 0;
}

int cfi_open_fd(int fd, const struct debuginfo_paths *paths, struct cfi **out)
{
	int err;

	*out = NULL;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOEXEC;
	err = elfhdr_check(fd, NULL, 0);
	if (err)
		return err;
	return open_elf(elf_begin(fd, ELF_C_READ, NULL), paths, out);
}

int cfi_open(const char *path, const struct debuginfo_paths *paths, struct cfi **out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	*out = NULL;
	if (fd < 0)
		return -errno;
	err = cfi_open_fd(fd, paths, out);
	close(fd);
	return err;
}

int cfi_open_mem(const void *image, size_t size, struct cfi **out)
{
	char *copy;
	int err;

	*out = NULL;
	if (elfhdr_check(-1, image, size))
		return -EFBIG;
	/* The rows keep nothing of the copy. */
	err = open_elf(elfsym_memory(image, size, &copy), NULL, out);
	free(copy);
	return err;
}

void cfi_free(struct cfi *cfi)
{
	if (!cfi)
		return;
	free(cfi->rows);
	free(cfi->funcs);
	free(cfi->segs);
	free(cfi);
}

const struct cfi_row *cfi_rows(const struct cfi *cfi, size_t *n)
{
	*n = cfi->n_rows;
	return cfi->rows;
}

const struct cfi_function *cfi_functions(const struct cfi *cfi, size_t *n)
{
	*n = cfi->n_funcs;
	return cfi->funcs;
}

const struct cfi_rule *cfi_lookup(const struct cfi *cfi, uint64_t vaddr)
{
	size_t lo = 0, hi = cfi->n_rows;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cfi->rows[mid].pc <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || cfi->rows[lo - 1].rule.cfa_kind == CFI_CFA_NONE)
		return NULL;
	return &cfi->rows[lo - 1].rule;
}

int cfi_vaddr_to_offset(const struct cfi *cfi, uint64_t vaddr, uint64_t *offset)
{
	for (size_t i = 0; i < cfi->n_segs; i++) {
		const struct elfsym_segment *seg = &cfi->segs[i];

		if ((seg->flags & PF_X) && vaddr >= seg->vaddr && vaddr - seg->vaddr < seg->filesz) {
			*offset = vaddr - seg->vaddr + seg->offset;
			return 0;
		}
	}
	return -ENOENT;
}

void cfi_stats(const struct cfi *cfi, struct cfi_stats *stats)
{
	*stats = cfi->stats;
}

/*
 * A stripped file names few of its functions (.dynsym: the exported
 * ones), but its .eh_frame still bounds every function with an FDE. Only
 * the file's own CFI is read (no debug file: one with a symbol table
 * would have named the functions).
 */
int cfi_bound_functions(int fd, struct elfsym *elf)
{
	const struct cfi_function *fn;
	struct elfsym_range *ranges;
	struct cfi *cfi;
	size_t n;
	int err;

	if (elfsym_complete(elf))
		return 0;
	err = cfi_open_fd(fd, NULL, &cfi);
	if (err)
		return err == -ENOMEM ? err : 0;
	fn = cfi_functions(cfi, &n);
	ranges = calloc(n ? n : 1, sizeof(*ranges));
	if (!ranges) {
		cfi_free(cfi);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		ranges[i] = (struct elfsym_range){ .start = fn[i].start, .end = fn[i].end };
	elfsym_take_ranges(elf, ranges, n);
	cfi_free(cfi);
	return 0;
}
