/*
 * fuzz_ksyms: /proc/kallsyms and the /proc/modules file next to it.
 *
 * The input is a kallsyms file, optionally followed by a line "#modules"
 * and a modules file (kallsyms never has a '#' line). Both are written
 * next to each other, as ksyms_load() expects, and loaded. Then every
 * symbol must be found at its own address, and lookups at the edges of
 * the address space must not fault.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbolizer/ksyms.h"
#include "tests/fuzz/fuzz_file.h"

static const char separator[] = "#modules\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *mods = NULL;
	size_t kallsyms_size = size, mods_size = 0;
	struct ksyms *ks;
	char path[64];
	uint64_t probes[] = { 0, 1, 0xffffffff80000000ull, UINT64_MAX - 1, UINT64_MAX };

	for (size_t i = 0; i + sizeof(separator) - 1 <= size; i++) {
		if ((i == 0 || data[i - 1] == '\n') &&
		    !memcmp(data + i, separator, sizeof(separator) - 1)) {
			kallsyms_size = i;
			mods = data + i + sizeof(separator) - 1;
			mods_size = size - kallsyms_size - (sizeof(separator) - 1);
			break;
		}
	}
	if (mods) {
		if (fuzz_file_write("modules", mods, mods_size, NULL, 0))
			return 0;
	} else {
		fuzz_file_remove("modules");
	}
	if (fuzz_file_write("kallsyms", data, kallsyms_size, path, sizeof(path)))
		return 0;
	if (ksyms_load(path, &ks))
		return 0;
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		uint64_t offset;
		struct ksym s;

		if (ksyms_lookup(ks, probes[i], &s, &offset) &&
		    (s.addr > probes[i] || offset != probes[i] - s.addr || !s.name))
			abort();
	}
	/* Probe around the text of each input line that looks like an address. */
	for (size_t i = 0; i < kallsyms_size && i < 4096; i++) {
		if (i && data[i - 1] != '\n')
			continue;
		uint64_t addr = 0;
		size_t j = i;

		for (; j < kallsyms_size && j < i + 16; j++) {
			uint8_t c = data[j];
			int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;

			if (d < 0)
				break;
			addr = addr << 4 | (uint64_t)d;
		}
		for (int delta = -1; delta <= 1; delta++) {
			uint64_t offset;
			struct ksym s;

			if (ksyms_lookup(ks, addr + (uint64_t)delta, &s, &offset) &&
			    (strlen(s.name) == (size_t)-1 || s.addr + offset != addr + (uint64_t)delta ||
			     (s.module && strlen(s.module) == (size_t)-1)))
				abort();
		}
	}
	ksyms_hidden(ks);
	ksyms_count(ks);
	ksyms_free(ks);
	return 0;
}
