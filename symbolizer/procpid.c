/*
 * procpid: is a PID in use (see procpid.h).
 *
 * kill() with signal 0 checks the PID and the permission and sends
 * nothing: ESRCH is a free PID, EPERM another user's process. It costs a
 * PID lookup, where stat("/proc/PID") walks a path and builds an inode
 * and /proc/PID/stat formats a page. PIDs kill() would read as a process
 * group (0, and above INT_MAX as negative) are looked for in /proc.
 */
#include "symbolizer/procpid.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

bool procpid_by_signal(const char *proc_root)
{
	return !strcmp(proc_root, "/proc");
}

bool procpid_exists(const char *proc_root, uint32_t tgid)
{
	char path[PATH_MAX];
	struct stat st;

	if (tgid && tgid <= (uint32_t)INT_MAX && procpid_by_signal(proc_root)) {
		if (!kill((pid_t)tgid, 0) || errno == EPERM)
			return true;
		if (errno == ESRCH)
			return false;
	}
	snprintf(path, sizeof(path), "%s/%" PRIu32, proc_root, tgid);
	return stat(path, &st) == 0;
}
