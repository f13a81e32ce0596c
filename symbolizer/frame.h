/*
 * frame: one symbolized stack frame, the unit the symbolizer hands to the
 * renderer. A frame knows its kind, so that writers can mark kernel and JIT
 * frames (folded "_[k]", "_[j]") and colour them, and so that later
 * unwinders (inlined frames from DWARF) fit without a new type. It may
 * also say where its code is (a mapping of a file, and an address), for
 * formats that let other tools match binaries by build-id (pprof).
 */
#ifndef EBPROF_SYMBOLIZER_FRAME_H
#define EBPROF_SYMBOLIZER_FRAME_H

#include <stddef.h>
#include <stdint.h>

enum frame_kind {
	FRAME_PROCESS, /* the root: the process name */
	FRAME_USER,    /* a function in an ELF file */
	FRAME_KERNEL,  /* a kernel or module function */
	FRAME_JIT,     /* named by a JIT perf map */
	FRAME_INLINED, /* inlined into its caller */
	FRAME_UNKNOWN, /* not resolved: "[unknown]" or "[module+0xoff]" */
	FRAME_OFFCPU,  /* the leaf of an off-CPU stack: "[off-cpu: sleep]" (frame_offcpu_name) */
	FRAME_PYTHON,  /* a CPython function: "qualname (file.py:line)" (symbolizer/pycode) */
	FRAME_KIND_NR,
};

/* A file mapped into the sampled process, as /proc/PID/maps gives it. */
struct frame_mapping {
	uint64_t start, limit;		/* [start, limit) in the process */
	uint64_t offset;		/* file offset of start */
	const char *file;		/* the path the process mapped */
	const unsigned char *build_id;	/* the file's GNU build-id; NULL: none */
	size_t build_id_len;
};

struct frame {
	const char *name; /* borrowed; see who hands the frame out */
	enum frame_kind kind;
	/* Where the code is, when known (both borrowed like name): the
	 * mapping (NULL for kernel and JIT frames, frames read from text, and
	 * addresses in no file), and the address in the process of the
	 * function's first byte, or of the sampled instruction when the frame
	 * names no function or carries its offset ("+0x1f"); 0: unknown. */
	const struct frame_mapping *mapping;
	uint64_t address;
};

/* The folded-text suffix of a kind ("_[k]", "_[j]", "_[i]", "_[p]"), or "". */
const char *frame_kind_suffix(enum frame_kind kind);

/*
 * The leaf frame's name for an off-CPU state (EBPROF_OFFCPU_RUNNABLE,
 * _SLEEP, _IO of bpf/ebprof.h: 1, 2, 3), a static string; NULL for 0
 * (on-CPU) or anything else.
 */
const char *frame_offcpu_name(unsigned int state);

/* Whether a name read from text is an off-CPU leaf ("[off-cpu: ...]"). */
int frame_is_offcpu_name(const char *name);

/* A short lower-case name of a kind, for tooltips and logs. */
const char *frame_kind_name(enum frame_kind kind);

#endif
