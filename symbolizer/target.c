/*
 * target: resolve, check, then open; never the other way round.
 *
 * open() of a FIFO without a writer blocks until one comes, and so does
 * open() of some devices; a process that swaps its library for a FIFO
 * (after dlclose, while the drain still has samples from it) used to
 * hang the profiler that way. An O_PATH descriptor names the file without
 * opening it, so nothing can block, and its fstat() says what it is
 * before anything reads it. The read-only descriptor then comes from
 * /proc/self/fd/N, which reopens that very inode: the check and the read
 * are about the same file, whatever the path says by then.
 *
 * A path the process gave us is resolved inside its root with openat2():
 * RESOLVE_IN_ROOT keeps "..", and absolute symlinks, inside
 * /proc/PID/root (a container's absolute symlink to a host path used to
 * open the host's file), and RESOLVE_NO_MAGICLINKS refuses the /proc
 * links (/proc/self/root/...) that would jump out anyway. The two magic
 * links we do follow are our own choice: /proc/PID/root itself, and
 * /proc/PID/map_files/START-END, which the kernel resolves to the mapped
 * file. Linux 5.6 has openat2; ebprof needs 5.8.
 *
 * The device and inode come from /proc/PID/maps. On btrfs and overlayfs
 * /proc/PID/maps and stat() give different devices for one file (btrfs
 * subvolumes have their own anonymous device; overlayfs before Linux 6.8
 * shows the layer's), so on those only the inode is compared.
 */
#include "symbolizer/target.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "symbolizer/procmaps.h"

struct target {
	char *proc_root;
	uint64_t max_file_size;
	uint64_t refused[TARGET_CAUSES];
	uint64_t progress; /* read with __atomic builtins from other threads */
};

struct target *target_new(const struct target_config *config)
{
	struct target *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->max_file_size = config && config->max_file_size ? config->max_file_size
							   : TARGET_DEFAULT_MAX_FILE_SIZE;
	t->proc_root = strdup(config && config->proc_root ? config->proc_root : "/proc");
	if (!t->proc_root) {
		free(t);
		return NULL;
	}
	return t;
}

void target_free(struct target *t)
{
	if (!t)
		return;
	free(t->proc_root);
	free(t);
}

void target_file_close(struct target_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
}

enum target_cause target_cause_of(int err)
{
	switch (-err) {
	case EINVAL:
		return TARGET_NOT_REGULAR;
	case ESTALE:
		return TARGET_MISMATCH;
	case EXDEV:
	case ELOOP:
	case EAGAIN:
		return TARGET_OUTSIDE_ROOT;
	case EFBIG:
		return TARGET_TOO_LARGE;
	case EMFILE:
	case ENFILE:
		return TARGET_NO_FDS;
	case EACCES:
	case EPERM:
		return TARGET_PERMISSION;
	case ENOENT:
	case ESRCH:
	case ENOTDIR:
		return TARGET_GONE;
	case EINTR:
		return TARGET_STALLED;
	default:
		return TARGET_OTHER;
	}
}

const char *target_cause_name(enum target_cause cause)
{
	static const char *const names[TARGET_CAUSES] = {
		[TARGET_NOT_REGULAR] = "not_regular", [TARGET_MISMATCH] = "mismatch",
		[TARGET_OUTSIDE_ROOT] = "outside_root", [TARGET_TOO_LARGE] = "too_large",
		[TARGET_NO_FDS] = "no_fds",		[TARGET_PERMISSION] = "permission",
		[TARGET_GONE] = "gone",			[TARGET_STALLED] = "stalled",
		[TARGET_OTHER] = "other",
	};

	return cause < TARGET_CAUSES ? names[cause] : "other";
}

void target_count(struct target *t, enum target_cause cause)
{
	if (t && cause < TARGET_CAUSES)
		t->refused[cause]++;
}

void target_stats(const struct target *t, uint64_t refused[TARGET_CAUSES])
{
	memcpy(refused, t->refused, sizeof(t->refused));
}

uint64_t target_progress(const struct target *t)
{
	return __atomic_load_n(&t->progress, __ATOMIC_RELAXED);
}

void target_tick(struct target *t)
{
	if (t)
		__atomic_fetch_add(&t->progress, 1, __ATOMIC_RELAXED);
}

/*
 * Resolves p without opening the file: an O_PATH descriptor, or -errno.
 * ELOOP is what RESOLVE_NO_MAGICLINKS (and a symlink loop) gives.
 */
static int target_resolve(const struct target_path *p)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC | (p->flags & TARGET_NOFOLLOW ? O_NOFOLLOW : 0),
		.resolve = RESOLVE_NO_MAGICLINKS,
	};
	int dir = AT_FDCWD, fd, err;

	if (p->root) {
		/* The root is a magic link we mean to follow: /proc/PID/root. */
		dir = open(p->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (dir < 0)
			return -errno;
		how.resolve |= RESOLVE_IN_ROOT;
	}
	fd = (int)syscall(SYS_openat2, dir, p->path, &how, sizeof(how));
	err = fd < 0 ? -errno : fd;
	if (dir >= 0)
		close(dir);
	return err;
}

/* True when /proc/PID/maps and stat() may name fd's device differently. */
static bool target_devices_differ(int fd)
{
	struct statfs sfs;

	if (fstatfs(fd, &sfs))
		return false;
	return (unsigned long)sfs.f_type == BTRFS_SUPER_MAGIC ||
	       (unsigned long)sfs.f_type == OVERLAYFS_SUPER_MAGIC;
}

static bool target_is(int fd, const struct stat *st, const struct target_id *id)
{
	if (st->st_ino != id->inode)
		return false;
	if (major(st->st_dev) == id->dev_major && minor(st->st_dev) == id->dev_minor)
		return true;
	return target_devices_differ(fd);
}

/*
 * The same inode as the O_PATH descriptor pathfd (which it closes), now
 * opened for reading: a regular file cannot block here. Returns the
 * descriptor or -errno.
 */
static int target_reopen_read(int pathfd)
{
	char self[64];
	int fd, err;

	snprintf(self, sizeof(self), "/proc/self/fd/%d", pathfd);
	fd = open(self, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	err = fd < 0 ? -errno : fd;
	close(pathfd);
	return err;
}

/*
 * Checks the file behind the O_PATH descriptor pathfd (which it closes)
 * and opens it read-only into *out. Returns 0 or -errno as target_open().
 */
static int target_admit(const struct target *t, int pathfd, const struct target_id *id,
			unsigned int flags, struct target_file *out)
{
	struct stat st;
	uint64_t max = t ? t->max_file_size : TARGET_DEFAULT_MAX_FILE_SIZE;
	int fd, err = 0;

	if (fstat(pathfd, &st))
		err = -errno;
	else if (!S_ISREG(st.st_mode))
		err = -EINVAL;
	else if (id && !target_is(pathfd, &st, id))
		err = -ESTALE;
	else if (!(flags & TARGET_ANY_SIZE) && (uint64_t)st.st_size > max)
		err = -EFBIG;
	if (err) {
		close(pathfd);
		return err;
	}
	if (flags & TARGET_PATH_ONLY) {
		/* Checked, not opened: target_file_reopen() opens it if the caller wants it read. */
		out->fd = pathfd;
		out->st = st;
		return 0;
	}
	fd = target_reopen_read(pathfd);
	if (fd < 0)
		return fd;
	out->fd = fd;
	out->st = st;
	return 0;
}

/* Counts a refusal as flags say; returns err. */
static int target_refuse(struct target *t, int err, unsigned int flags)
{
	enum target_cause cause = target_cause_of(err);

	if (flags & TARGET_UNCOUNTED)
		return err;
	if ((flags & TARGET_QUIET) && cause == TARGET_GONE)
		return err;
	target_count(t, cause);
	return err;
}

/* target_open() without counting. */
static int target_try(struct target *t, const struct target_path *p, struct target_file *out)
{
	int fd;

	target_tick(t);
	fd = target_resolve(p);
	if (fd < 0)
		return fd;
	return target_admit(t, fd, p->id, p->flags, out);
}

int target_open(struct target *t, const struct target_path *p, struct target_file *out)
{
	int err;

	out->fd = -1;
	err = target_try(t, p, out);
	return err ? target_refuse(t, err, p->flags) : 0;
}

/* Higher is more telling: a mapping's refusal is counted by the worst of its tries. */
static int target_rank(int err)
{
	static const int ranks[TARGET_CAUSES] = {
		[TARGET_GONE] = 0,	   [TARGET_OTHER] = 1,	    [TARGET_PERMISSION] = 2,
		[TARGET_NO_FDS] = 3,	   [TARGET_STALLED] = 4,    [TARGET_MISMATCH] = 5,
		[TARGET_TOO_LARGE] = 6,	   [TARGET_NOT_REGULAR] = 7, [TARGET_OUTSIDE_ROOT] = 8,
	};

	return ranks[target_cause_of(err)];
}

static int target_worse(int a, int b)
{
	return target_rank(b) > target_rank(a) ? b : a;
}

/* target_open_mapping() and target_check_mapping(): flags 0 or TARGET_PATH_ONLY. */
static int target_mapping(struct target *t, uint32_t tgid, const struct procmaps_mapping *m,
			  unsigned int flags, struct target_file *out)
{
	const char *proc = t ? t->proc_root : "/proc";
	char path[4096], root[4096];
	struct target_id id = {
		.dev_major = m->dev_major, .dev_minor = m->dev_minor, .inode = m->inode
	};
	struct target_path in_root = { .root = root, .path = m->path, .id = &id, .flags = flags };
	struct target_path ours = { .path = m->path, .id = &id, .flags = flags };
	int fd, err;

	out->fd = -1;
	target_tick(t);
	/* map_files/ reaches deleted files and files in other mount namespaces. */
	snprintf(path, sizeof(path), "%s/%" PRIu32 "/map_files/%" PRIx64 "-%" PRIx64, proc, tgid,
		 m->start, m->end);
	fd = open(path, O_PATH | O_CLOEXEC);
	err = fd < 0 ? -errno : target_admit(t, fd, m->inode ? &id : NULL, flags, out);
	if (!err)
		return 0;
	/*
	 * Gone from the process (unmapped, or it exited), or map_files/ is
	 * not ours to read. Its path inside the process's root, then in
	 * ours; a path can name another file than the one mapped, so only
	 * the very file (its inode) will do, and a deleted one has no path.
	 */
	if (m->path[0] != '/' || m->deleted || !m->inode)
		return target_refuse(t, err, 0);
	snprintf(root, sizeof(root), "%s/%" PRIu32 "/root", proc, tgid);
	err = target_worse(err, target_try(t, &in_root, out));
	if (out->fd >= 0)
		return 0;
	err = target_worse(err, target_try(t, &ours, out));
	if (out->fd >= 0)
		return 0;
	return target_refuse(t, err, 0);
}

int target_open_mapping(struct target *t, uint32_t tgid, const struct procmaps_mapping *m,
			struct target_file *out)
{
	return target_mapping(t, tgid, m, 0, out);
}

int target_check_mapping(struct target *t, uint32_t tgid, const struct procmaps_mapping *m,
			 struct target_file *out)
{
	return target_mapping(t, tgid, m, TARGET_PATH_ONLY, out);
}

int target_file_reopen(struct target *t, struct target_file *f)
{
	int fd = target_reopen_read(f->fd);

	f->fd = fd < 0 ? -1 : fd;
	return fd < 0 ? target_refuse(t, fd, 0) : 0;
}
