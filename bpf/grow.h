/*
 * grow: the one way an array grows in ebprof. Every module that appends to
 * a heap array (frames of a drain, symbols of an ELF file, rows of a CFI
 * table, nodes of a profile) makes room through grow_array(): capacity
 * doubles, so n appends cost O(n) copies in all, and an overflowing size
 * is an error, not a short allocation.
 *
 * It lives in bpf/, the lowest layer, because every layer above may
 * include bpf/ headers (data flows bpf -> symbolizer -> render -> plugin |
 * cli) and none below render may include render/.
 */
#ifndef EBPROF_BPF_GROW_H
#define EBPROF_BPF_GROW_H

#include <stddef.h>

/*
 * Makes room for at least need elements of elem bytes in the array whose
 * pointer is at *array (any object pointer type, passed as its address),
 * of capacity *cap elements. When need > *cap, the capacity doubles from
 * *cap (or starts at first when *cap is 0) until it holds need, and the
 * array is reallocated. Returns 0, or -ENOMEM (no memory, or a size that
 * overflows) or -EINVAL (elem 0) with the array and *cap untouched. The array stays the
 * caller's; elements past the old capacity are uninitialized.
 */
int grow_array(void *array, size_t *cap, size_t need, size_t elem, size_t first);

/* grow_array() with the element size taken from the array's type. */
#define GROW_ARRAY(array_ptr, cap_ptr, need, first) \
	grow_array((array_ptr), (cap_ptr), (need), sizeof(**(array_ptr)), (first))

#endif
