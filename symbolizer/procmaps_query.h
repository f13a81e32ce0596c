/*
 * procmaps_query: struct procmap_query and PROCMAP_QUERY of <linux/fs.h>
 * (Linux 6.11), newer than the headers we build with. One copy of the
 * kernel's layout, for procmaps.c and for the benchmark's hostcost.c.
 */
#ifndef EBPROF_SYMBOLIZER_PROCMAPS_QUERY_H
#define EBPROF_SYMBOLIZER_PROCMAPS_QUERY_H

#include <stdint.h>
#include <sys/ioctl.h>

struct maps_query {
	uint64_t size;
	uint64_t query_flags;
	uint64_t query_addr;
	uint64_t vma_start, vma_end;
	uint64_t vma_flags;
	uint64_t vma_page_size;
	uint64_t vma_offset;
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	uint32_t vma_name_size; /* in: room at vma_name_addr; out: length with the NUL */
	uint32_t build_id_size;
	uint64_t vma_name_addr;
	uint64_t build_id_addr;
};

_Static_assert(sizeof(struct maps_query) == 104, "struct procmap_query is 104 bytes (6.11)");
#define MAPS_QUERY _IOWR(0x66, 17, struct maps_query)
#define MAPS_QUERY_EXECUTABLE 0x04
#define MAPS_QUERY_COVERING_OR_NEXT 0x10

#endif
