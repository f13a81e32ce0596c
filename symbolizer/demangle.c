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
 *
 * libstdc++ is opened at the first C++ name, not linked: on a host whose
 * profiled programs are all C it stays out of the process, where linking
 * it cost collectd 0.7 MB of VmRSS (its pages and relocations). Without
 * it (no libstdc++.so.6 on the system; the Debian package depends on
 * it) C++ names stay mangled: still unique, still searchable.
 */
#include "symbolizer/demangle.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbolizer/rustdemangle.h"

/* libstdc++'s demangler, as <cxxabi.h> declares it (C++ only). */
typedef char *(*cxa_demangle_fn)(const char *mangled, char *buf, size_t *len, int *status);

static pthread_once_t cxx_once = PTHREAD_ONCE_INIT;
static cxa_demangle_fn cxx_demangle;

/* Kept open for the process's life: its demangler is called until the end. */
static void cxx_open(void)
{
	void *lib = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);

	if (lib)
		cxx_demangle = (cxa_demangle_fn)dlsym(lib, "__cxa_demangle");
}

/* libstdc++'s demangler, opened on the first call; NULL without it. */
static cxa_demangle_fn cxx_demangler(void)
{
	pthread_once(&cxx_once, cxx_open);
	return cxx_demangle;
}

/* --- entry points ------------------------------------------------------- */

char *demangle_name(const char *name)
{
	cxa_demangle_fn cxx;

	if (!strncmp(name, "_R", 2))
		return rustdemangle_v0(name);
	if (strncmp(name, "_Z", 2))
		return NULL;
	if (!strncmp(name, "_ZN", 3)) {
		char *rust = rustdemangle_legacy(name);

		if (rust)
			return rust;
	}
	cxx = cxx_demangler();
	return cxx ? cxx(name, NULL, NULL, &(int){0}) : NULL;
}

#define DEFAULT_CACHE_MAX 16384

struct demangle_entry {
	char *name;	 /* NULL: free slot */
	char *demangled; /* NULL: not mangled, show name */
	uint64_t hash;
};

/*
 * Open addressing at most half full, so probes stay short. The slots
 * grow with the names kept, up to twice max: a host with few mangled
 * names holds few slots.
 */
#define FIRST_SLOTS 64

struct demangle_cache {
	struct demangle_entry *slots;
	size_t nr, max, nr_slots, max_slots;
	size_t names_bytes, max_bytes; /* of the strings kept (both forms), and their bound */
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
	cache->max_bytes = DEMANGLE_DEFAULT_MAX_BYTES;
	cache->max_slots = FIRST_SLOTS;
	while (cache->max_slots < cache->max * 2)
		cache->max_slots *= 2;
	cache->nr_slots = FIRST_SLOTS;
	cache->slots = calloc(cache->nr_slots, sizeof(*cache->slots));
	if (!cache->slots) {
		free(cache);
		return NULL;
	}
	return cache;
}

/* Doubles the slots, keeping every name; false if memory is short. */
static bool cache_grow(struct demangle_cache *cache)
{
	size_t n = cache->nr_slots * 2;
	struct demangle_entry *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return false;
	for (size_t i = 0; i < cache->nr_slots; i++) {
		size_t j;

		if (!cache->slots[i].name)
			continue;
		for (j = cache->slots[i].hash & (n - 1); slots[j].name; j = (j + 1) & (n - 1))
			;
		slots[j] = cache->slots[i];
	}
	free(cache->slots);
	cache->slots = slots;
	cache->nr_slots = n;
	return true;
}

static void cache_clear(struct demangle_cache *cache)
{
	for (size_t i = 0; i < cache->nr_slots; i++) {
		free(cache->slots[i].name);
		free(cache->slots[i].demangled);
	}
	memset(cache->slots, 0, cache->nr_slots * sizeof(*cache->slots));
	cache->nr = 0;
	cache->names_bytes = 0;
}

void demangle_cache_set_max_bytes(struct demangle_cache *cache, size_t max_bytes)
{
	cache->max_bytes = max_bytes ? max_bytes : DEMANGLE_DEFAULT_MAX_BYTES;
}

size_t demangle_cache_bytes(const struct demangle_cache *cache)
{
	return sizeof(*cache) + cache->nr_slots * sizeof(*cache->slots) + cache->names_bytes;
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
	size_t i, bytes;
	struct demangle_entry *e;
	char *demangled;

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
	demangled = demangle_name(name);
	bytes = strlen(name) + 1 + (demangled ? strlen(demangled) + 1 : 0);
	if ((cache->nr + 1) * 2 > cache->nr_slots) {
		/* Half full: more slots, unless past a bound or out of memory. */
		bool grown = cache->nr_slots < cache->max_slots &&
			     demangle_cache_bytes(cache) + bytes +
				     cache->nr_slots * sizeof(*cache->slots) <= cache->max_bytes &&
			     cache_grow(cache);

		if (grown) {
			for (i = hash & (cache->nr_slots - 1); cache->slots[i].name;
			     i = (i + 1) & (cache->nr_slots - 1))
				;
		} else
			cache_clear(cache);
	}
	if (cache->nr == cache->max || demangle_cache_bytes(cache) + bytes > cache->max_bytes)
		cache_clear(cache);
	if (!cache->nr)
		i = hash & (cache->nr_slots - 1); /* started over */
	e = &cache->slots[i];
	e->name = strdup(name);
	if (!e->name) {
		free(demangled);
		return name;
	}
	e->demangled = demangled;
	e->hash = hash;
	cache->nr++;
	cache->names_bytes += bytes;
	return e->demangled ? e->demangled : name;
}
