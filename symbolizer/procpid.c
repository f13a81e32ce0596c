/*
 * procpid: is a PID in use (see procpid.h).
 *
 * kill() with signal 0 checks the PID and the permission and sends
 * nothing: ESRCH is a free PID, EPERM another user's process. It costs a
 * PID lookup, where stat("/proc/PID") walks a path and builds an inode
 * and /proc/PID/stat formats a page. PIDs kill() would read as a process
 * group (0, and above INT_MAX as negative) are looked for in /proc, and
 * so is every PID when /proc is not of our PID namespace.
 */
#include "symbolizer/procpid.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Only "/proc", and only when it shows our PID namespace, where kill()
 * looks: its "self" names our own PID. A container with a PID namespace
 * of its own and the host's /proc mounted on /proc sees host PIDs there
 * (the sampler's) that kill() would not find.
 */
bool procpid_by_signal(const char *proc_root)
{
	char link[32];
	ssize_t n;

	if (strcmp(proc_root, "/proc"))
		return false;
	n = readlink("/proc/self", link, sizeof(link) - 1);
	if (n <= 0)
		return false;
	link[n] = '\0';
	return strtol(link, NULL, 10) == (long)getpid();
}

bool procpid_exists(const char *proc_root, bool by_signal, uint32_t tgid)
{
	char path[PATH_MAX];
	struct stat st;

	if (by_signal && tgid && tgid <= (uint32_t)INT_MAX) {
		if (!kill((pid_t)tgid, 0) || errno == EPERM)
			return true;
		if (errno == ESRCH)
			return false;
	}
	snprintf(path, sizeof(path), "%s/%" PRIu32, proc_root, tgid);
	return stat(path, &st) == 0;
}
