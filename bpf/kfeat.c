/*
 * kfeat: the table of kernel features beyond ebprof's core and their
 * probes (see kfeat.h). Each probe asks the running kernel for the very
 * thing ebprof will use, the way ebprof will use it, and tells a refusal
 * that means "not here" (the kernel's own answer for an unknown request)
 * from one that means "not allowed" (unknown).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/utsname.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/kfeat.h"

/*
 * Before 6.1 the verifier refuses a perf_event program that uses a hash
 * map without BPF_F_NO_PREALLOC ("perf_event programs can only use
 * preallocated hash map", -EINVAL); 6.1 lifted it with the BPF memory
 * allocator. A program that only loads such a map's address asks that.
 */
static enum kfeat_state kfeat_probe_noprealloc(void)
{
	struct bpf_map_create_opts map_opts = { .sz = sizeof(map_opts),
						.map_flags = BPF_F_NO_PREALLOC };
	int map, prog, error;

	map = bpf_map_create(BPF_MAP_TYPE_HASH, "ebprof_probe", sizeof(uint32_t),
			     sizeof(uint64_t), 1, &map_opts);
	if (map < 0)
		return KFEAT_UNKNOWN;
	{
		struct bpf_insn insns[] = {
			/* r1 = the map (a two-slot ld_imm64) */
			{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = BPF_REG_1,
			  .src_reg = BPF_PSEUDO_MAP_FD, .imm = map },
			{ 0 },
			/* r0 = 0; exit */
			{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
			{ .code = BPF_JMP | BPF_EXIT },
		};

		prog = bpf_prog_load(BPF_PROG_TYPE_PERF_EVENT, "ebprof_probe", "Dual MIT/GPL",
				     insns, sizeof(insns) / sizeof(insns[0]), NULL);
		error = errno;
	}
	close(map);
	if (prog >= 0) {
		close(prog);
		return KFEAT_PRESENT;
	}
	return error == EINVAL ? KFEAT_ABSENT : KFEAT_UNKNOWN;
}

/*
 * PROCMAP_QUERY of <linux/fs.h> (6.11): _IOWR('f', 17, struct
 * procmap_query), a struct of 104 bytes whose first field is its size.
 * A size of 0 is refused with -EINVAL by a kernel that knows the ioctl,
 * and the ioctl itself with -ENOTTY by one that does not.
 */
#define KFEAT_PROCMAP_QUERY_CMD _IOWR(0x66, 17, uint64_t[13])

static enum kfeat_state kfeat_probe_procmap_query(void)
{
	uint64_t query[13] = { 0 };
	int fd, rc, error;

	fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return KFEAT_UNKNOWN;
	rc = ioctl(fd, KFEAT_PROCMAP_QUERY_CMD, query);
	error = errno;
	close(fd);
	if (rc == 0 || error == EINVAL)
		return KFEAT_PRESENT;
	return error == ENOTTY ? KFEAT_ABSENT : KFEAT_UNKNOWN;
}

/*
 * The table unwinder (bpf/ebprof.bpf.c) walks frames in bpf_loop() (5.17),
 * reads the user registers of a tick in the kernel through
 * bpf_task_pt_regs() (5.15) of bpf_get_current_task_btf() (5.11), and
 * checks the copy ring's room with bpf_ringbuf_query() (5.8): each asked
 * of the verifier for a perf_event program, as the unwinder uses them.
 */
static enum kfeat_state kfeat_probe_unwind_tables(void)
{
	static const enum bpf_func_id needed[] = { BPF_FUNC_loop, BPF_FUNC_task_pt_regs,
						   BPF_FUNC_get_current_task_btf,
						   BPF_FUNC_ringbuf_query };
	enum kfeat_state state = KFEAT_PRESENT;

	for (size_t i = 0; i < sizeof(needed) / sizeof(needed[0]); i++) {
		int rc = libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, needed[i], NULL);

		if (rc == 0)
			return KFEAT_ABSENT;
		if (rc < 0)
			state = KFEAT_UNKNOWN;
	}
	return state;
}

/*
 * The off-CPU program (bpf/offcpu.bpf.h) keeps each task's state in
 * task-local storage, which tracing programs may use since 5.11: a map of
 * that type is created, or refused as unknown (-EINVAL) by older kernels.
 */
static enum kfeat_state kfeat_probe_task_storage(void)
{
	int rc = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, NULL);

	if (rc < 0)
		return KFEAT_UNKNOWN;
	return rc ? KFEAT_PRESENT : KFEAT_ABSENT;
}

static const struct {
	struct kfeat_desc desc;
	enum kfeat_state (*probe)(void);
} kfeat_table[KFEAT_NR] = {
	[KFEAT_NOPREALLOC] = {
		{ "noprealloc", "6.1",
		  "hash maps without preallocation in perf_event programs",
		  "the stacks and counts maps are preallocated: 15 MiB of kernel memory held "
		  "from the start at the default MaxStacks (16384), where 1 MiB grows with use" },
		kfeat_probe_noprealloc },
	[KFEAT_PROCMAP_QUERY] = {
		{ "procmap_query", "6.11", "the PROCMAP_QUERY ioctl on /proc/PID/maps",
		  "process maps are read as text, about 3x the CPU per new process" },
		kfeat_probe_procmap_query },
	[KFEAT_UNWIND_TABLES] = {
		{ "unwind_tables", "5.17",
		  "bpf_loop(), bpf_task_pt_regs() and bpf_get_current_task_btf() in perf_event "
		  "programs",
		  "user stacks are walked by frame pointers (unwind auto), and unwind dwarf "
		  "refuses to start: code built without frame pointers loses its callers" },
		kfeat_probe_unwind_tables },
	[KFEAT_TASK_STORAGE] = {
		{ "task_storage", "5.11",
		  "task-local storage (BPF_MAP_TYPE_TASK_STORAGE) for the off-CPU program",
		  "off-CPU and wall profiles (--mode offcpu|wall, Mode) refuse to start; "
		  "on-CPU profiles work" },
		kfeat_probe_task_storage },
};

const struct kfeat_desc *kfeat_desc(enum kfeat_id id)
{
	return &kfeat_table[id].desc;
}

void kfeat_probe(struct kfeat *kf)
{
	for (int id = 0; id < KFEAT_NR; id++)
		kf->state[id] = kfeat_table[id].probe();
}

enum kfeat_state kfeat_state(const struct kfeat *kf, enum kfeat_id id)
{
	return kf && id < KFEAT_NR ? kf->state[id] : KFEAT_UNKNOWN;
}

int kfeat_missing_message(enum kfeat_id id, char *buf, size_t len)
{
	const struct kfeat_desc *d = kfeat_desc(id);
	struct utsname uts;

	return snprintf(buf, len, "this kernel (%s) lacks %s (%s, Linux %s and later): %s",
			uname(&uts) == 0 ? uts.release : "unknown", d->what, d->name, d->kernel,
			d->without);
}
