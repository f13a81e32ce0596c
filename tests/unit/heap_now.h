/*
 * heap_now: the bytes this process has allocated and not freed, as asked
 * for (the unit tests run under ASan, whose allocator counts them). A test
 * takes it before and after a cache fills to check that the cache holds
 * no more heap than it reports. Single-threaded tests only: it counts
 * every thread's allocations.
 */
#ifndef EBPROF_TESTS_HEAP_NOW_H
#define EBPROF_TESTS_HEAP_NOW_H

#include <stddef.h>

/* ASan's allocator interface (its header is not installed with gcc here). */
size_t __sanitizer_get_current_allocated_bytes(void);

static inline size_t heap_now(void)
{
	return __sanitizer_get_current_allocated_bytes();
}

#endif
