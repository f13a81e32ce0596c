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
 * Whether procpid_exists() may ask kill() about PIDs under proc_root: it
 * is "/proc", and that /proc is of our own PID namespace (its "self" is
 * our PID). Asked once, when a reader is made.
 */
bool procpid_by_signal(const char *proc_root);

/*
 * Whether tgid is in use under proc_root (a zombie counts; a PID taken
 * since by another process counts too: the callers that must tell compare
 * start times). With by_signal (procpid_by_signal() of the same root),
 * kill(tgid, 0) answers with no file opened or path walked; else (a
 * test's fake /proc, a /proc of another PID namespace) the directory
 * proc_root/tgid is looked for.
 */
bool procpid_exists(const char *proc_root, bool by_signal, uint32_t tgid);

#endif
