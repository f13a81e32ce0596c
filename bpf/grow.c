/*
 * grow: doubling growth of heap arrays (see grow.h). The array pointer is
 * read and written with memcpy so that one function serves arrays of any
 * element type without breaking C's aliasing rules.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/grow.h"

int grow_array(void *array, size_t *cap, size_t need, size_t elem, size_t first)
{
	size_t new_cap = *cap ? *cap : (first ? first : 1);
	void *old, *grown;

	if (need <= *cap)
		return 0;
	if (!elem)
		return -EINVAL; /* an element has a size; realloc(p, 0) would free */
	while (new_cap < need) {
		if (new_cap > SIZE_MAX / 2)
			return -ENOMEM;
		new_cap *= 2;
	}
	if (new_cap > SIZE_MAX / elem)
		return -ENOMEM;
	memcpy(&old, array, sizeof(old));
	grown = realloc(old, new_cap * elem);
	if (!grown)
		return -ENOMEM;
	memcpy(array, &grown, sizeof(grown));
	*cap = new_cap;
	return 0;
}
