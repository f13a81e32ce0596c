/*
 * cfi: the call frame information of one ELF file, as unwind rows.
 *
 * A program built without frame pointers still tells how to find each
 * caller: its .eh_frame (kept in every binary, for C++ exceptions and
 * backtrace()) and its .debug_frame (debug builds, separate debug files)
 * hold, per function (FDE), a small program of DWARF call frame
 * instructions. Run to an address, the program says how to compute the
 * canonical frame address (CFA: the stack pointer just before the call
 * that entered the function) and where the caller's registers were saved.
 *
 * This module runs every program once and keeps the result as rows: from
 * row i's pc up to row i+1's, one rule says how to find the CFA, the
 * return address and the caller's rbp, which is all an x86-64 stack walk
 * needs. Rules are kept exact here (64-bit offsets, every register
 * number); the BPF table encoder (unwtab) narrows them. What we cannot
 * evaluate is an explicit "unsupported" rule, never a guess: an unwinder
 * stops there and counts it.
 *
 * The rows come from .eh_frame, then .debug_frame for code .eh_frame does
 * not cover; a binary with neither gets them from its separate debug file
 * or its MiniDebugInfo (debuginfo_*). The FDE ranges are also kept, as the
 * function ranges of the file (a stripped binary's functions still have
 * FDEs).
 *
 * The readelf oracle (tests/oracle/cfi_readelf.c) checks these rows
 * against `readelf --debug-dump=frames-interp` on every ELF file of the
 * system.
 */
#ifndef EBPROF_SYMBOLIZER_CFI_H
#define EBPROF_SYMBOLIZER_CFI_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cfi;
struct debuginfo_paths;
struct elfsym;

/* DWARF register numbers on x86-64 (System V psABI, figure 3.36). */
#define CFI_REG_RBP 6
#define CFI_REG_RSP 7
#define CFI_REG_RA 16 /* the return address column */
#define CFI_NR_REGS 17

enum cfi_cfa_kind {
	CFI_CFA_NONE,	     /* no FDE covers the address: between functions */
	CFI_CFA_REG,	     /* reg + off */
	CFI_CFA_DEREF,	     /* *(reg + off) + add: stack realignment (DW_OP_bregN; DW_OP_deref),
			      * or OpenSSL's assembly (then DW_OP_plus_uconst add) */
	CFI_CFA_PLT,	     /* rsp + 8, and 8 more when (pc & 15) >= off: a lazy PLT entry */
	CFI_CFA_UNSUPPORTED, /* an expression or a state we do not evaluate */
};

/* How one register of the caller (rbp, or the return address) is found. */
enum cfi_reg_kind {
	CFI_SAME,	 /* unchanged: still in the register (also when never mentioned) */
	CFI_UNDEFINED,	 /* lost; for the return address: the outermost frame */
	CFI_AT_CFA,	 /* saved at cfa + off */
	CFI_VAL_CFA,	 /* is cfa + off */
	CFI_AT_REG,	 /* saved at reg + off (an expression DW_OP_bregN off) */
	CFI_IN_REG,	 /* held in register reg */
	CFI_REG_UNSUPPORTED,
};

/* cfi_rule.flags */
#define CFI_SIGNAL (1u << 0)   /* a signal trampoline ('S'): its return address is exact */
#define CFI_CFA_EXPR (1u << 1) /* the CFA came from an expression (readelf: "exp") */
#define CFI_RBP_EXPR (1u << 2) /* rbp's rule came from an expression */
#define CFI_RA_EXPR (1u << 3)  /* the return address's rule came from an expression */

/* Offsets past 32 bits make a rule unsupported, so 32 bits hold every offset kept. */
struct cfi_rule {
	uint8_t cfa_kind, cfa_reg;
	uint8_t rbp_kind, rbp_reg;
	uint8_t ra_kind, ra_reg;
	uint8_t flags;
	int32_t cfa_off, rbp_off, ra_off;
	int32_t cfa_add; /* CFI_CFA_DEREF only */
};

/* rule holds from pc up to the next row's pc. */
struct cfi_row {
	uint64_t pc; /* an ELF virtual address */
	struct cfi_rule rule;
};

/* One FDE's code: a function, or a part of one (.cold). */
struct cfi_function {
	uint64_t start, end; /* [start, end), ELF virtual addresses */
};

enum cfi_source {
	CFI_FROM_NONE,
	CFI_FROM_FILE,	     /* the file's own .eh_frame / .debug_frame */
	CFI_FROM_DEBUG_FILE, /* its separate debug file */
	CFI_FROM_MINIDEBUG,  /* its .gnu_debugdata */
};

struct cfi_stats {
	uint64_t fdes;	      /* FDEs read */
	uint64_t bad_entries; /* CIEs or FDEs that did not parse: skipped */
	uint64_t overlaps;    /* FDEs dropped because an earlier one covers their start */
	uint64_t unsupported; /* rows with an unsupported CFA or register rule */
	uint64_t eh_frame_bytes, debug_frame_bytes;
	enum cfi_source source;
};

/*
 * Reads the call frame information of the ELF file open on fd (the fd
 * stays the caller's). Without tables of its own, the file's separate
 * debug file (paths; NULL: not looked for) and then its MiniDebugInfo
 * are tried. Returns 0 and sets *out (free it with cfi_free()), even
 * when no table was found (no rows); or -ENOEXEC for a file that is not
 * a usable ELF file, or -ENOMEM.
 */
int cfi_open_fd(int fd, const struct debuginfo_paths *paths, struct cfi **out);

/* As cfi_open_fd(), by path; -errno from open() when that fails. */
int cfi_open(const char *path, const struct debuginfo_paths *paths, struct cfi **out);

/* As cfi_open_fd(), from an ELF image in memory (the vDSO); the image stays the caller's. */
int cfi_open_mem(const void *image, size_t size, struct cfi **out);

void cfi_free(struct cfi *cfi);

/* The rows, sorted by pc, owned by cfi. A gap and the end of the last FDE are CFI_CFA_NONE rows. */
const struct cfi_row *cfi_rows(const struct cfi *cfi, size_t *n);

/* The function ranges (FDEs kept), sorted by start, owned by cfi. */
const struct cfi_function *cfi_functions(const struct cfi *cfi, size_t *n);

/*
 * Gives elf, the symbol table of the file open at fd, the bounds of that
 * file's functions from its own .eh_frame (elfsym_take_ranges()), when
 * its names come from .dynsym alone (elfsym_complete() false), so that an
 * unnamed address is grouped under its function's start. Returns 0 (a
 * file without CFI simply gets no ranges), or -ENOMEM.
 */
int cfi_bound_functions(int fd, struct elfsym *elf);

/* The rule at vaddr, or NULL where no row covers it (or a CFI_CFA_NONE row). */
const struct cfi_rule *cfi_lookup(const struct cfi *cfi, uint64_t vaddr);

/*
 * The file offset of vaddr, through the executable PT_LOAD segment that
 * holds it. Returns 0, or -ENOENT.
 */
int cfi_vaddr_to_offset(const struct cfi *cfi, uint64_t vaddr, uint64_t *offset);

void cfi_stats(const struct cfi *cfi, struct cfi_stats *stats);

/* Two rules unwind alike (flags that only say where a rule came from are ignored). */
bool cfi_rule_equal(const struct cfi_rule *a, const struct cfi_rule *b);

#endif
