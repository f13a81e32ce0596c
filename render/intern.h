/*
 * intern: dense indices for (string, tag) keys, in order of first sight,
 * optionally with a pair of numbers in the key. speedscope's shared frame
 * list and pprof's string, function, mapping and location tables are each
 * such a numbering (a location is a function's name and kind, its mapping
 * and its address).
 */
#ifndef EBPROF_RENDER_INTERN_H
#define EBPROF_RENDER_INTERN_H

#include <stddef.h>
#include <stdint.h>

struct intern;

/* NULL when out of memory. Free with intern_free(). */
struct intern *intern_new(void);
void intern_free(struct intern *t);

/*
 * The index of (s, tag), adding it as the next index when new; *added
 * (may be NULL) says which. s is borrowed, not copied: it must outlive t.
 * Returns 0 or -ENOMEM.
 */
int intern_add(struct intern *t, const char *s, unsigned int tag, uint32_t *index,
	       int *added);

/* intern_add() with the numbers (a, b) in the key too; intern_add() is
 * this with (0, 0). */
int intern_add_pair(struct intern *t, const char *s, unsigned int tag, uint64_t a, uint64_t b,
		    uint32_t *index, int *added);

size_t intern_count(const struct intern *t);
const char *intern_string(const struct intern *t, uint32_t index); /* borrowed */
unsigned int intern_tag(const struct intern *t, uint32_t index);
void intern_pair(const struct intern *t, uint32_t index, uint64_t *a, uint64_t *b);

#endif
