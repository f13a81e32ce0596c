/*
 * fuzz_perfmap: JIT perf maps, /tmp/perf-PID.map.
 *
 * Any process may write such a file, and the profiler reads it while the
 * writer is still appending. The input is split in two at a point chosen
 * by its first byte: the first part is written and read, then the rest is
 * appended and read incrementally (a line cut in the middle is finished by
 * the second write). Its second byte chooses the bounds (line length and
 * bytes in all), small enough for an input of 64 KiB to cross them: lines
 * skipped across refreshes, files read up to their bound. Every entry
 * found must hold the address it was looked up by.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolizer/perfmap.h"
#include "tests/fuzz/fuzz_file.h"

static void check(const struct perfmap *map, uint64_t addr)
{
	uint64_t offset;
	const struct perfmap_symbol *s = perfmap_lookup(map, addr, &offset);

	if (!s)
		return;
	if (addr < s->start || addr - s->start >= s->size || offset != addr - s->start || !s->name)
		abort();
	(void)strlen(s->name);
}

static void check_all(const uint8_t *data, size_t size, const struct perfmap *map)
{
	uint64_t probes[] = { 0, 1, UINT64_MAX };

	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
		check(map, probes[i]);
	/* Each line's first field, and its neighbours. */
	for (size_t i = 0; i < size && i < 8192; i++) {
		if (i && data[i - 1] != '\n')
			continue;
		uint64_t addr = 0;

		for (size_t j = i; j < size && j < i + 16; j++) {
			uint8_t c = data[j];
			int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;

			if (d < 0)
				break;
			addr = addr << 4 | (uint64_t)d;
		}
		check(map, addr - 1);
		check(map, addr);
		check(map, addr + 1);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfmap_config config = { .owner = getuid() };
	struct perfmap *map;
	char path[64];
	size_t cut;

	if (size < 2)
		return 0;
	cut = (size_t)data[0] * (size - 2) / 255;
	/* 0: the defaults; else lines of 16 to 2048 bytes, 64 B to 64 KiB in all. */
	if (data[1]) {
		config.max_line = (size_t)16 << (data[1] % 8);
		config.max_bytes = (uint64_t)64 << (data[1] / 8 % 11);
	}
	data += 2;
	size -= 2;
	if (fuzz_file_write("perf.map", data, cut, path, sizeof(path)))
		return 0;
	config.path = path;
	map = perfmap_new_with(&config);
	if (!map)
		return 0;
	if (perfmap_refresh(map) == 0)
		check_all(data, cut, map);
	if (fuzz_file_append("perf.map", data + cut, size - cut) == 0 &&
	    perfmap_refresh(map) == 0)
		check_all(data, size, map);
	perfmap_count(map);
	perfmap_malformed(map);
	perfmap_too_long(map);
	perfmap_truncated(map);
	perfmap_free(map);
	return 0;
}
