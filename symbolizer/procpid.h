/*
 * procpid: whether a PID names a process now, asked at the end of each
 * drain for every process record the profiler holds (proctab, the
 * unwinder's, pytrack's), so it must cost little: a host keeps hundreds
 * of processes that were sampled once and have been idle since.
 */
#ifndef EBPROF_SYMBOLIZER_PROCPID_H
#define EBPROF_SYMBOLIZER_PROCPID_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Whether tgid is in use under proc_root (a zombie counts; a PID taken
 * since by another process counts too: the callers that must tell compare
 * start times). Under the real /proc, kill(tgid, 0) answers with no file
 * opened or path walked; under any other root (a test's fake /proc) the
 * directory proc_root/tgid is looked for.
 */
bool procpid_exists(const char *proc_root, uint32_t tgid);

/* Whether procpid_exists() asks kill() under proc_root: it is the real /proc. */
bool procpid_by_signal(const char *proc_root);

#endif
