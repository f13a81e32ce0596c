/*
 * frame: names and folded suffixes of frame kinds. The suffixes follow
 * flamegraph.pl's convention, so its colour schemes read our files.
 */
#include "symbolizer/frame.h"

const char *frame_kind_suffix(enum frame_kind kind)
{
	switch (kind) {
	case FRAME_KERNEL:
		return "_[k]";
	case FRAME_JIT:
		return "_[j]";
	case FRAME_INLINED:
		return "_[i]";
	default:
		return "";
	}
}

const char *frame_kind_name(enum frame_kind kind)
{
	static const char *const names[FRAME_KIND_NR] = {
		[FRAME_PROCESS] = "process", [FRAME_USER] = "user",
		[FRAME_KERNEL] = "kernel",   [FRAME_JIT] = "jit",
		[FRAME_INLINED] = "inlined", [FRAME_UNKNOWN] = "unknown",
	};

	if ((unsigned int)kind >= FRAME_KIND_NR)
		return "unknown";
	return names[kind];
}
