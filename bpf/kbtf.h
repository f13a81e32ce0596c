/*
 * kbtf: member offsets of a kernel struct, and the id of a typedef, read
 * from the kernel's BTF in bounded memory (see kbtf.c for why not
 * libbpf's CO-RE).
 */
#ifndef EBPROF_BPF_KBTF_H
#define EBPROF_BPF_KBTF_H

#include <stddef.h>
#include <stdint.h>

#define KBTF_VMLINUX "/sys/kernel/btf/vmlinux"
#define KBTF_MAX_MEMBERS 12
#define KBTF_MAX_NAME 63

/*
 * Sets offsets[i] to the byte offset of members[i] in struct struct_name,
 * as the BTF file at path describes it, for n (1 to KBTF_MAX_MEMBERS)
 * members; a member inside an anonymous struct or union counts as the
 * struct's own. Returns 0, or a negative errno with a message in err:
 * -ENOENT if the struct or a member is not there, -EPROTO if the file is
 * not BTF or is malformed, -EINVAL for a bad request.
 */
int kbtf_member_offsets(const char *path, const char *struct_name, const char *const *members,
			uint32_t *offsets, size_t n, char *err, size_t errlen);

#define KBTF_ABSENT UINT32_MAX

/*
 * As kbtf_member_offsets(), in bits, bitfields included, and a member
 * the struct does not have gets KBTF_ABSENT rather than failing the
 * call: for the members a kernel may lack. -ENOENT only if the struct
 * itself is not there.
 */
int kbtf_member_bits(const char *path, const char *struct_name, const char *const *members,
		     uint32_t *bits, size_t n, char *err, size_t errlen);

/*
 * Sets *id to the BTF type id of the typedef name in the BTF file at path
 * (a tp_btf program's attach point is the kernel's typedef
 * btf_trace_<tracepoint>). Returns 0, or a negative errno with a message
 * in err: -ENOENT if there is none, -EPROTO for a file that is not BTF.
 */
int kbtf_typedef_id(const char *path, const char *name, uint32_t *id, char *err, size_t errlen);

/*
 * As kbtf_typedef_id(), for the function name (a BPF iterator's attach
 * point is the kernel's function bpf_iter_<target>).
 */
int kbtf_func_id(const char *path, const char *name, uint32_t *id, char *err, size_t errlen);

#endif
