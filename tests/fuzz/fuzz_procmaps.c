/*
 * fuzz_procmaps: /proc/PID/maps lines, as procmaps_parse_line() and
 * procmaps_load() see them.
 *
 * The kernel writes these lines, but a path in them is whatever a process
 * named its file: spaces, " (deleted)" on purpose, newlines, 4 KiB paths.
 * The input is taken as a whole maps file: each line goes through the
 * line parser on its own, then the file through the loader, and every kept
 * mapping must be findable by its own start address.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolizer/procmaps.h"
#include "tests/fuzz/fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct procmaps_mapping m;
	struct procmaps *maps;
	char path[64];
	char *text;
	size_t i = 0;

	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	/* Line by line, each NUL-terminated as the loader hands them over. */
	while (i < size) {
		char *nl = memchr(text + i, '\n', size - i);
		size_t end = nl ? (size_t)(nl - text) : size;
		char saved = text[end];

		text[end] = '\0';
		if (!procmaps_parse_line(text + i, &m)) {
			if (m.path_len && !m.path)
				abort();
			if (m.path + m.path_len > text + end)
				abort(); /* the path must stay inside its line */
		}
		text[end] = saved;
		i = end + 1;
	}
	free(text);

	if (fuzz_file_write("maps", data, size, path, sizeof(path)))
		return 0;
	if (procmaps_load(path, &maps))
		return 0;
	for (i = 0; i < procmaps_count(maps); i++) {
		const struct procmaps_mapping *k = procmaps_at(maps, i);
		size_t index;

		if (k->end > k->start && procmaps_find(maps, k->start, &index) == NULL)
			abort();
		procmaps_is_special(k);
		if (strlen(k->path) != k->path_len)
			abort();
	}
	procmaps_find(maps, 0, NULL);
	procmaps_find(maps, UINT64_MAX, NULL);
	procmaps_free(maps);
	return 0;
}
