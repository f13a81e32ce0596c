// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * What bpf_find_vma() would cost the sampler: bench_find_vma, a
 * perf_event program for the same CPU-clock event as ebprof's, asks the
 * kernel for the mapping of every user pc it interrupts, and reads from it
 * what a table lookup by file would need (start, end, page offset, the
 * file's inode and device). findvma.py runs it beside the empty floor
 * program (floor.bpf.c) on the same ticks and compares their run times.
 *
 * The design it tests: finding a frame's unwind table by its file in the
 * kernel, with no per-process mappings sent from user space. The helper
 * takes the process's mmap lock; a program run from a timer interrupt
 * cannot release it there, so the kernel queues the release as irq work
 * (an interrupt of its own). The counters say how often each happened.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* Read by findvma.py from the object's .bss. */
__u64 calls;   /* ticks that landed in user code */
__u64 found;   /* of those, a mapping was found */
__u64 in_file; /* of those, a file's mapping */
__u64 busy;    /* the lock was taken (-EBUSY): no answer */

struct vma_seen {
	__u64 start, end, pgoff, ino, dev;
};

static long vma_read(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct vma_seen *v = data;
	struct file *file = vma->vm_file;

	v->start = vma->vm_start;
	v->end = vma->vm_end;
	v->pgoff = vma->vm_pgoff;
	if (file) {
		v->ino = file->f_inode->i_ino;
		v->dev = file->f_inode->i_sb->s_dev;
	}
	return 0;
}

SEC("perf_event")
int bench_find_vma(void *ctx)
{
	/* struct bpf_perf_event_data's regs: ip at word 16, cs at 17 (x86-64). */
	__u64 cs = ((volatile __u64 *)ctx)[17], ip = ((volatile __u64 *)ctx)[16];
	struct vma_seen v = {};
	long err;

	if ((cs & 3) != 3)
		return 0;
	__sync_fetch_and_add(&calls, 1);
	err = bpf_find_vma(bpf_get_current_task_btf(), ip, vma_read, &v, 0);
	if (err == -16 /* EBUSY */)
		__sync_fetch_and_add(&busy, 1);
	if (!err && v.end > v.start)
		__sync_fetch_and_add(&found, 1);
	if (!err && v.ino)
		__sync_fetch_and_add(&in_file, 1);
	return 0;
}
