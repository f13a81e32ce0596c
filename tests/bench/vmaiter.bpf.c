// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A process's executable mappings without /proc: bench_vmas, a task_vma
 * iterator, writes one row per executable mapping of the process its
 * link names (start, end, page offset, inode, device, the name's length)
 * followed by the file's name. Only its last component: bpf_d_path()
 * needs a trusted path, and 6.18's verifier does not trust a mapping's
 * file. vmaiter.c prices a read of a new process's mappings this way
 * against the way the sampler reads them (open /proc/PID/maps, query,
 * close), whose first open makes the process's /proc entries.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#define VM_EXEC 0x4
#define NAME_BYTES 256

struct vma_row {
	__u64 start, end, pgoff, ino;
	__u32 dev, name_len;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, char[NAME_BYTES]);
} name_buf SEC(".maps");

SEC("iter/task_vma")
int bench_vmas(struct bpf_iter__task_vma *ctx)
{
	struct vm_area_struct *vma = ctx->vma;
	struct vma_row row = {};
	struct file *file;
	__u32 zero = 0;
	char *name;
	long len = 0;

	if (!vma || !(vma->vm_flags & VM_EXEC))
		return 0;
	name = bpf_map_lookup_elem(&name_buf, &zero);
	if (!name)
		return 0;
	row.start = vma->vm_start;
	row.end = vma->vm_end;
	row.pgoff = vma->vm_pgoff;
	file = vma->vm_file;
	if (file) {
		row.ino = file->f_inode->i_ino;
		row.dev = file->f_inode->i_sb->s_dev;
		len = bpf_probe_read_kernel_str(name, NAME_BYTES,
						BPF_CORE_READ(file, f_path.dentry, d_name.name));
		if (len < 0)
			len = 0;
	}
	row.name_len = (__u32)len;
	bpf_seq_write(ctx->meta->seq, &row, sizeof(row));
	if (len > 0 && len <= NAME_BYTES)
		bpf_seq_write(ctx->meta->seq, name, (__u32)len);
	return 0;
}
