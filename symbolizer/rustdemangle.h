/*
 * rustdemangle: the decoders of Rust's two manglings, for demangle_name()
 * (symbolizer/demangle.h), which picks the decoder by the name's prefix.
 * Output is what `c++filt -i` and rustc-demangle's alternate form print:
 * no hashes, no crate disambiguators.
 */
#ifndef EBPROF_SYMBOLIZER_RUSTDEMANGLE_H
#define EBPROF_SYMBOLIZER_RUSTDEMANGLE_H

/* A legacy name ("_ZN...17h<16 hex digits>E"): the demangled form, or NULL
 * when it is not one (a C++ name, say), is malformed or memory ran out.
 * The caller frees the result. */
char *rustdemangle_legacy(const char *name);

/* A v0 name ("_R..."): the demangled form, or NULL as above. */
char *rustdemangle_v0(const char *name);

#endif
