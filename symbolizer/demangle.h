/*
 * demangle: the names people write, from the names compilers emit.
 *
 * Symbol tables of C++ and Rust programs hold mangled names
 * ("_ZN3foo3barIiEEvT_", "_RNvCs1234_5crate4main"); a flame graph should
 * show "void foo::bar<int>(int)" and "crate::main". The output is what
 * `c++filt -i` prints: C++ (Itanium ABI) through libstdc++'s
 * __cxa_demangle, which is the very code c++filt runs (GCC's
 * cp-demangle.c); Rust legacy names ("_ZN...17h<hash>E") and Rust v0
 * names ("_R...") through our own decoders, without the hashes and crate
 * disambiguators that only tell builds apart. Anything else (C names) is
 * left alone.
 *
 * The symbolizer asks for the same few names over and over, drain after
 * drain; demangle_cache keeps the answers.
 */
#ifndef EBPROF_SYMBOLIZER_DEMANGLE_H
#define EBPROF_SYMBOLIZER_DEMANGLE_H

#include <stddef.h>

/*
 * The demangled form of name, or NULL when name is not a mangled C++ or
 * Rust name, is malformed, or memory ran out, or (C++) libstdc++ could
 * not be opened. The caller frees the result.
 */
char *demangle_name(const char *name);

struct demangle_cache;

/* Bytes of names (mangled and demangled) a cache keeps by default: C++
 * names of a big program average ~150 bytes in both forms. */
#define DEMANGLE_DEFAULT_MAX_BYTES (8ULL << 20)

/* Keeps at most max names (0: 16384), and at most DEMANGLE_DEFAULT_MAX_BYTES
 * in all (demangle_cache_bytes(): its slots, 24 bytes per name it may keep,
 * and the names), then starts over. NULL without memory. */
struct demangle_cache *demangle_cache_new(size_t max);

/* Sets the byte bound (0: the default); the next name past it starts the
 * cache over. A bound below the slots alone keeps one name at a time. */
void demangle_cache_set_max_bytes(struct demangle_cache *cache, size_t max_bytes);

/* The heap memory the cache holds now: its slots and the names in them. */
size_t demangle_cache_bytes(const struct demangle_cache *cache);

void demangle_cache_free(struct demangle_cache *cache);

/*
 * name demangled, or name itself when it is not mangled (or without
 * memory). The result is owned by the cache, or is name; it stays valid
 * until the next call on cache.
 */
const char *demangle_cache_get(struct demangle_cache *cache, const char *name);

#endif
