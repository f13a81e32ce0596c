/*
 * fuzz_folded: folded stacks, the input of `ebprof render`.
 *
 * Folded files come from anywhere (ours, perf script collapsed, a
 * colleague's mail), so every byte of them is outside input. The input
 * is read into a profile, drawn as an SVG, written back as folded text
 * and read again. What must hold:
 * - the SVG has at most the one <script> element of its template, no
 *   control character and only valid UTF-8 (names cannot inject markup
 *   or break the XML);
 * - the folded output is one line per stack, and reading it back gives
 *   the same sample total and, written again, the very same text.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/folded.h"
#include "render/profile.h"
#include "render/svg.h"

static size_t count_of(const char *hay, size_t len, const char *needle)
{
	size_t n = 0, nlen = strlen(needle);

	for (size_t i = 0; i + nlen <= len; i++)
		if (!memcmp(hay + i, needle, nlen))
			n++;
	return n;
}

/* Length of the valid UTF-8 sequence at s (at most len bytes), or 0. */
static size_t utf8_len(const unsigned char *s, size_t len)
{
	size_t n;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (n > len)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

static void check_svg(const struct profile *p)
{
	char *svg = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&svg, &len);

	if (!out)
		return;
	if (svg_write(p, out, NULL)) {
		fclose(out);
		free(svg);
		return;
	}
	fclose(out);
	if (count_of(svg, len, "<script") > 1) /* none when there are no samples */
		abort();
	for (size_t i = 0; i < len;) {
		const unsigned char *c = (const unsigned char *)svg + i;
		size_t n = utf8_len(c, len - i);

		if (!n)
			abort(); /* an XML parser refuses the whole file */
		if ((c[0] < 0x20 && c[0] != '\n' && c[0] != '\t') || c[0] == 0x7f)
			abort();
		i += n;
	}
	free(svg);
}

/* Writes p as folded text; returns it (malloc'd) or NULL. */
static char *folded_text(const struct profile *p, size_t *len)
{
	char *text = NULL;
	FILE *out = open_memstream(&text, len);

	if (!out)
		return NULL;
	if (folded_write(p, out)) {
		fclose(out);
		free(text);
		return NULL;
	}
	fclose(out);
	return text;
}

static struct profile *read_text(const char *text, size_t len)
{
	struct profile *p = profile_new();
	FILE *in;

	if (!p)
		return NULL;
	in = fmemopen((void *)text, len, "r");
	if (!in || folded_read(p, in, NULL)) {
		if (in)
			fclose(in);
		profile_free(p);
		return NULL;
	}
	fclose(in);
	return p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile *first, *second = NULL, *third = NULL;
	char *text1 = NULL, *text2 = NULL;
	size_t len1 = 0, len2 = 0;

	if (!size)
		return 0;
	first = read_text((const char *)data, size);
	if (!first)
		return 0;
	check_svg(first);
	text1 = folded_text(first, &len1);
	if (!text1)
		goto out;
	if (count_of(text1, len1, "\n") != profile_stack_count(first))
		abort();
	second = read_text(text1, len1);
	if (!second)
		goto out;
	if (profile_total(second) != profile_total(first))
		abort();
	text2 = folded_text(second, &len2);
	if (!text2)
		goto out;
	third = read_text(text2, len2);
	if (!third)
		goto out;
	if (profile_total(third) != profile_total(first))
		abort();
	if (len2 != len1 || memcmp(text1, text2, len1)) {
		/* Sanitizing may merge stacks once; after that it is a fixed point. */
		char *text3;
		size_t len3 = 0;

		text3 = folded_text(third, &len3);
		if (text3 && (len3 != len2 || memcmp(text2, text3, len2)))
			abort();
		free(text3);
	}
out:
	free(text1);
	free(text2);
	profile_free(first);
	profile_free(second);
	profile_free(third);
	return 0;
}
