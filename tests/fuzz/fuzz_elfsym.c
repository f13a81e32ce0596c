/*
 * fuzz_elfsym: ELF files, as the symbolizer reads every binary a sampled
 * process has mapped.
 *
 * Any user can map a crafted file, so its section headers, symbol tables,
 * string tables, program headers and compressed MiniDebugInfo are all
 * outside input. elfsym_open_mem() reads the image as elfsym_open_fd()
 * reads a file (the same code after libelf). Every symbol and segment of
 * a table that loads must then answer lookups without faulting.
 */
#include <stdint.h>
#include <stdlib.h>

#include "symbolizer/elfsym.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elfsym *elf;

	if (elfsym_open_mem(data, size, &elf))
		return 0;
	for (size_t i = 0; i < elfsym_segment_count(elf); i++) {
		const struct elfsym_segment *seg = elfsym_segment_at(elf, i);
		uint64_t probes[] = { seg->offset, seg->offset + seg->filesz / 2,
				      seg->offset + seg->filesz - 1, seg->offset + seg->filesz };

		for (size_t j = 0; j < sizeof(probes) / sizeof(probes[0]); j++) {
			uint64_t vaddr, off;
			const struct elfsym_symbol *s;

			if (elfsym_offset_to_vaddr(elf, probes[j], &vaddr))
				continue;
			s = elfsym_lookup(elf, vaddr, &off);
			if (s && (s->value > vaddr || off != vaddr - s->value || !s->name))
				abort();
		}
	}
	elfsym_lookup(elf, 0, NULL);
	elfsym_lookup(elf, UINT64_MAX, NULL);
	elfsym_count(elf);
	elfsym_free(elf);
	return 0;
}
