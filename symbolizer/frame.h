/*
 * frame: one symbolized stack frame, the unit the symbolizer hands to the
 * renderer. A frame knows its kind, so that writers can mark kernel and JIT
 * frames (folded "_[k]", "_[j]") and colour them, and so that later
 * unwinders (inlined frames from DWARF) fit without a new type.
 */
#ifndef EBPROF_SYMBOLIZER_FRAME_H
#define EBPROF_SYMBOLIZER_FRAME_H

enum frame_kind {
	FRAME_PROCESS, /* the root: the process name */
	FRAME_USER,    /* a function in an ELF file */
	FRAME_KERNEL,  /* a kernel or module function */
	FRAME_JIT,     /* named by a JIT perf map */
	FRAME_INLINED, /* inlined into its caller */
	FRAME_UNKNOWN, /* not resolved: "[unknown]" or "[module+0xoff]" */
	FRAME_KIND_NR,
};

struct frame {
	const char *name; /* borrowed; see who hands the frame out */
	enum frame_kind kind;
};

/* The folded-text suffix of a kind ("_[k]", "_[j]", "_[i]"), or "". */
const char *frame_kind_suffix(enum frame_kind kind);

/* A short lower-case name of a kind, for tooltips and logs. */
const char *frame_kind_name(enum frame_kind kind);

#endif
