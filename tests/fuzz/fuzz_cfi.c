/*
 * fuzz_cfi: ELF files with crafted .eh_frame and .debug_frame, as the
 * unwind table builder reads every binary a sampled process maps.
 *
 * Any user can map a crafted file, so its CIEs, FDEs, augmentation
 * strings, pointer encodings, call frame programs and DWARF expressions
 * are all outside input. cfi_open_mem() reads the image as cfi_open_fd()
 * reads a file. What loads must keep its promises: rows sorted by pc,
 * function ranges sorted and disjoint, and lookups that never fault.
 */
#include <stdint.h>
#include <stdlib.h>

#include "symbolizer/cfi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct cfi_function *fn;
	const struct cfi_row *rows;
	struct cfi *cfi;
	size_t n_rows, n_fn;

	if (cfi_open_mem(data, size, &cfi))
		return 0;
	rows = cfi_rows(cfi, &n_rows);
	fn = cfi_functions(cfi, &n_fn);
	for (size_t i = 1; i < n_rows; i++)
		if (rows[i].pc <= rows[i - 1].pc || cfi_rule_equal(&rows[i].rule, &rows[i - 1].rule))
			abort();
	for (size_t i = 0; i < n_fn; i++) {
		uint64_t off;

		if (fn[i].end <= fn[i].start || (i && fn[i].start < fn[i - 1].end))
			abort();
		cfi_lookup(cfi, fn[i].start);
		cfi_lookup(cfi, fn[i].end - 1);
		cfi_vaddr_to_offset(cfi, fn[i].start, &off);
	}
	cfi_lookup(cfi, 0);
	cfi_lookup(cfi, UINT64_MAX);
	cfi_free(cfi);
	return 0;
}
