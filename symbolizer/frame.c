/*
 * frame: names and folded suffixes of frame kinds. The suffixes follow
 * flamegraph.pl's convention, so its colour schemes read our files.
 */
#include <string.h>

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
	case FRAME_PYTHON:
		return "_[p]"; /* ours: flamegraph.pl shows it as part of the name */
	default:
		return "";
	}
}

#define FRAME_OFFCPU_PREFIX "[off-cpu: "

const char *frame_offcpu_name(unsigned int state)
{
	static const char *const names[] = { NULL, FRAME_OFFCPU_PREFIX "runnable]",
					     FRAME_OFFCPU_PREFIX "sleep]",
					     FRAME_OFFCPU_PREFIX "io]" };

	return state < sizeof(names) / sizeof(names[0]) ? names[state] : NULL;
}

int frame_is_offcpu_name(const char *name)
{
	return !strncmp(name, FRAME_OFFCPU_PREFIX, sizeof(FRAME_OFFCPU_PREFIX) - 1);
}

const char *frame_kind_name(enum frame_kind kind)
{
	static const char *const names[FRAME_KIND_NR] = {
		[FRAME_PROCESS] = "process", [FRAME_USER] = "user",
		[FRAME_KERNEL] = "kernel",   [FRAME_JIT] = "jit",
		[FRAME_INLINED] = "inlined", [FRAME_UNKNOWN] = "unknown",
		[FRAME_OFFCPU] = "off-cpu", [FRAME_PYTHON] = "python",
	};

	if ((unsigned int)kind >= FRAME_KIND_NR)
		return "unknown";
	return names[kind];
}
