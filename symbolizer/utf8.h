/*
 * utf8: one strict UTF-8 decoder for every place that must not pass on
 * bytes a reader would refuse. Symbol names come from any process on the
 * host and may hold anything; the SVG (XML), speedscope (JSON) and collectd
 * identifiers (Prometheus labels) each need valid UTF-8, and each reader
 * rejects a whole file or scrape for one bad byte.
 */
#ifndef EBPROF_SYMBOLIZER_UTF8_H
#define EBPROF_SYMBOLIZER_UTF8_H

#include <stddef.h>
#include <stdint.h>

/*
 * Decodes the code point at s (a NUL-terminated string). Returns its
 * length in bytes (1 to 4) and sets *cp, or returns 0 for a malformed
 * sequence: a stray continuation byte, a truncated sequence, an overlong
 * form, a surrogate, or a value above U+10FFFF. *cp is untouched then.
 */
size_t utf8_decode(const unsigned char *s, uint32_t *cp);

#endif
