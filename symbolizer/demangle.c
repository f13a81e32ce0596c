/*
 * demangle: the one entry point for mangled names, and the cache in front
 * of it. C++ goes through libstdc++, Rust to our own decoders
 * (rustdemangle.c).
 *
 * Why libstdc++'s __cxa_demangle for C++: it is GCC's cp-demangle.c, the
 * code c++filt itself runs, so the names match c++filt's to the byte,
 * and libstdc++ is on every system that has a C++ program to profile.
 * libiberty (binutils-dev) would add Rust too, but it is a static,
 * non-PIC archive we could not link into the collectd plugin, and a
 * package more to install.
 */
#include "symbolizer/demangle.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbolizer/rustdemangle.h"

/* libstdc++'s demangler (<cxxabi.h> is C++ only, so declared here). */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* --- entry points ------------------------------------------------------- */

char *demangle_name(const char *name)
{
	if (!strncmp(name, "_R", 2))
		return rustdemangle_v0(name);
	if (strncmp(name, "_Z", 2))
		return NULL;
	if (!strncmp(name, "_ZN", 3)) {
		char *rust = rustdemangle_legacy(name);

		if (rust)
			return rust;
	}
	return __cxa_demangle(name, NULL, NULL, &(int){0});
}

#define DEFAULT_CACHE_MAX 16384

struct demangle_entry {
	char *name;	 /* NULL: free slot */
	char *demangled; /* NULL: not mangled, show name */
	uint64_t hash;
};

/* Open addressing at most half full, so probes stay short. */
struct demangle_cache {
	struct demangle_entry *slots;
	size_t nr, max, nr_slots;
};

static uint64_t hash_name(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

struct demangle_cache *demangle_cache_new(size_t max)
{
	struct demangle_cache *cache = calloc(1, sizeof(*cache));

	if (!cache)
		return NULL;
	cache->max = max ? max : DEFAULT_CACHE_MAX;
	cache->nr_slots = 16;
	while (cache->nr_slots < cache->max * 2)
		cache->nr_slots *= 2;
	cache->slots = calloc(cache->nr_slots, sizeof(*cache->slots));
	if (!cache->slots) {
		free(cache);
		return NULL;
	}
	return cache;
}

static void cache_clear(struct demangle_cache *cache)
{
	for (size_t i = 0; i < cache->nr_slots; i++) {
		free(cache->slots[i].name);
		free(cache->slots[i].demangled);
	}
	memset(cache->slots, 0, cache->nr_slots * sizeof(*cache->slots));
	cache->nr = 0;
}

void demangle_cache_free(struct demangle_cache *cache)
{
	if (!cache)
		return;
	cache_clear(cache);
	free(cache->slots);
	free(cache);
}

const char *demangle_cache_get(struct demangle_cache *cache, const char *name)
{
	uint64_t hash;
	size_t i;
	struct demangle_entry *e;

	/* Most names (C) are not mangled at all: no need to remember them. */
	if (name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return name;
	hash = hash_name(name);
	for (i = hash & (cache->nr_slots - 1); cache->slots[i].name;
	     i = (i + 1) & (cache->nr_slots - 1)) {
		e = &cache->slots[i];
		if (e->hash == hash && !strcmp(e->name, name))
			return e->demangled ? e->demangled : name;
	}
	if (cache->nr == cache->max) {
		/* Full: start over rather than track recency; the hot names come back first. */
		cache_clear(cache);
		i = hash & (cache->nr_slots - 1);
	}
	e = &cache->slots[i];
	e->name = strdup(name);
	if (!e->name)
		return name;
	e->demangled = demangle_name(name);
	e->hash = hash;
	cache->nr++;
	return e->demangled ? e->demangled : name;
}
