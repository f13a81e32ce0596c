/*
 * perfscript: collapses `perf script` text into the profile tree.
 *
 * perf prints each sample as a header line (comm, pid[/tid], maybe
 * [cpu], timestamp, period, event), then with -g one indented line per
 * frame, leaf first ("\t  5555555551a9 burn+0x19 (/usr/bin/app)"), then a
 * blank line. Each sample counts 1, whatever its period, as
 * stackcollapse-perf.pl does; perf's own header ('#' lines) is skipped.
 * Frames are collected leaf first into one buffer of names and reversed
 * when the sample ends, so a sample costs no allocation once the buffers
 * have grown to the deepest stack.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/grow.h"
#include "render/folded.h"
#include "render/perfscript.h"

struct perfscript_sample {
	char *names; /* the comm and the frame names, each NUL-terminated */
	size_t len, cap;
	size_t *offsets; /* where each name starts: [0] the comm, then leaf first */
	enum frame_kind *kinds;
	size_t n, ncap;
	struct frame *frames; /* root first, built at the end of a sample */
	size_t fcap;
	size_t max_frames; /* the comm and max_depth frames */
	bool open;
	bool too_deep; /* frames past max_frames came: the sample is skipped */
};

static int perfscript_push(struct perfscript_sample *s, const char *name, size_t len,
			   enum frame_kind kind)
{
	if (s->n == s->max_frames) {
		s->too_deep = true;
		return 0;
	}
	size_t ncap = s->ncap;

	/* offsets[] and kinds[] share one capacity: ncap moves once both hold it. */
	if (GROW_ARRAY(&s->names, &s->cap, s->len + len + 1, 4096) ||
	    GROW_ARRAY(&s->offsets, &ncap, s->n + 1, 128) ||
	    GROW_ARRAY(&s->kinds, &s->ncap, s->n + 1, 128))
		return -ENOMEM;
	memcpy(s->names + s->len, name, len);
	s->names[s->len + len] = '\0';
	s->offsets[s->n] = s->len;
	s->kinds[s->n++] = kind;
	s->len += len + 1;
	return 0;
}

/* Adds the open sample to p: the comm, then the frames caller first. */
static int perfscript_flush(struct profile *p, struct perfscript_sample *s,
			    struct perfscript_read_stats *stats)
{
	int err;

	if (!s->open)
		return 0;
	s->open = false;
	if (s->too_deep) {
		stats->too_deep++;
		return 0;
	}
	if (profile_total(p) >= FOLDED_MAX_COUNT)
		return -EOVERFLOW;
	if (GROW_ARRAY(&s->frames, &s->fcap, s->n, 64))
		return -ENOMEM;
	/* The comm is FRAME_USER, as the folded reader makes every first
	 * frame: the same process read from either format is one node. */
	s->frames[0] = (struct frame){ s->names, FRAME_USER };
	for (size_t i = 1; i < s->n; i++)
		s->frames[s->n - i] = (struct frame){ s->names + s->offsets[i], s->kinds[i] };
	err = profile_add(p, s->frames, s->n, 1);
	if (!err)
		stats->samples++;
	return err;
}

static bool perfscript_is_hex(const char *s, size_t len)
{
	if (!len)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* "123" or "123/456" */
static bool perfscript_is_pid(const char *s, size_t len)
{
	size_t i = 0, digits = 0;

	while (i < len && isdigit((unsigned char)s[i]))
		i++, digits++;
	if (!digits)
		return false;
	if (i == len)
		return true;
	if (s[i++] != '/' || i == len)
		return false;
	while (i < len && isdigit((unsigned char)s[i]))
		i++;
	return i == len;
}

/*
 * A header line: the comm is everything before the first pid-looking
 * token after the first word (a comm may hold spaces: "Web Content").
 * Returns the comm's length, 0 when the line is not a header.
 */
static size_t perfscript_comm(const char *line)
{
	const char *s = line, *word;

	while (*s && !isspace((unsigned char)*s))
		s++; /* the comm's first word, whatever it holds */
	while (*s) {
		while (*s && isspace((unsigned char)*s))
			s++;
		word = s;
		while (*s && !isspace((unsigned char)*s))
			s++;
		if (s > word && perfscript_is_pid(word, (size_t)(s - word))) {
			const char *end = word;

			while (end > line && isspace((unsigned char)end[-1]))
				end--;
			return (size_t)(end - line);
		}
	}
	return 0;
}

static bool perfscript_ends_with(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len >= n && !memcmp(s + len - n, suffix, n);
}

static enum frame_kind perfscript_kind(const char *dso, size_t len)
{
	if ((len > 8 && !memcmp(dso, "[kernel.", 8)) || perfscript_ends_with(dso, len, "vmlinux") ||
	    perfscript_ends_with(dso, len, ".ko") || perfscript_ends_with(dso, len, ".ko.xz") ||
	    perfscript_ends_with(dso, len, ".ko.zst") || perfscript_ends_with(dso, len, ".ko.gz"))
		return FRAME_KERNEL;
	if (len > 10 && !memcmp(dso, "/tmp/perf-", 10) && perfscript_ends_with(dso, len, ".map"))
		return FRAME_JIT;
	return FRAME_USER;
}

/*
 * A frame line, "ADDRESS SYMBOL[+0xOFF] (OBJECT)", into the sample.
 * Returns 0, -EINVAL when it is not one, -ENOMEM.
 */
static int perfscript_frame(struct perfscript_sample *s, char *line, size_t len)
{
	char *at = line, *end = line + len, *sym, *dso = NULL, *plus, *base;
	size_t sym_len, dso_len = 0;
	unsigned long long addr;
	enum frame_kind kind = FRAME_USER;
	char unknown[300];

	while (at < end && isspace((unsigned char)*at))
		at++;
	sym = at;
	while (sym < end && !isspace((unsigned char)*sym))
		sym++;
	if (!perfscript_is_hex(at, (size_t)(sym - at)) || sym - at > 16)
		return -EINVAL;
	addr = strtoull(at, NULL, 16);
	while (sym < end && isspace((unsigned char)*sym))
		sym++;
	/* The object is the last parenthesised group; symbols may hold
	 * parentheses too ("f(int)"), so search from the end. */
	if (end > sym && end[-1] == ')') {
		for (char *o = end - 1; o > sym; o--) {
			if (*o == '(' && isspace((unsigned char)o[-1])) {
				dso = o + 1;
				dso_len = (size_t)(end - 1 - dso);
				end = o - 1;
				while (end > sym && isspace((unsigned char)end[-1]))
					end--;
				break;
			}
		}
	}
	sym_len = (size_t)(end - sym);
	/* "+0x1f": one function, one frame. */
	plus = sym_len > 3 ? memmem(sym, sym_len, "+0x", 3) : NULL;
	while (plus) {
		char *next = memmem(plus + 1, (size_t)(sym + sym_len - plus - 1), "+0x", 3);

		if (!next && perfscript_is_hex(plus + 3, (size_t)(sym + sym_len - plus - 3)))
			sym_len = (size_t)(plus - sym);
		plus = next;
	}
	if (dso)
		kind = perfscript_kind(dso, dso_len);
	/* x86-64 and arm64 kernels live in the upper half: a kernel frame
	 * whose object perf could not name is still a kernel frame. */
	if (addr >= 0xffff800000000000ull)
		kind = FRAME_KERNEL;
	if (!sym_len || (sym_len == 9 && !memcmp(sym, "[unknown]", 9))) {
		if (kind == FRAME_USER && dso && dso_len && dso[0] == '/') {
			/* "[libfoo.so+0x1234]", as the symbolizer names a frame
			 * past every symbol; perf's address is file-relative. */
			base = dso + dso_len;
			while (base > dso && base[-1] != '/')
				base--;
			snprintf(unknown, sizeof(unknown), "[%.*s+0x%llx]",
				 (int)(dso + dso_len - base), base, addr);
		} else {
			snprintf(unknown, sizeof(unknown), "[unknown]");
		}
		return perfscript_push(s, unknown, strlen(unknown), kind);
	}
	return perfscript_push(s, sym, sym_len, kind);
}

/*
 * One line: a header opens a sample, a frame line adds to it, a blank or
 * '#' line ends it. Returns 0, -EINVAL for a line that is none of these,
 * or an error of perfscript_flush().
 */
static int perfscript_line(struct profile *p, struct perfscript_sample *s,
			   struct perfscript_read_stats *stats, char *line, size_t len)
{
	size_t i = 0, comm;
	int err;

	while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		line[--len] = '\0';
	if (!len || line[0] == '#')
		return perfscript_flush(p, s, stats);
	if (isspace((unsigned char)line[0])) {
		while (i < len && isspace((unsigned char)line[i]))
			i++;
		if (i == len)
			return perfscript_flush(p, s, stats);
		return s->open ? perfscript_frame(s, line, len) : -EINVAL;
	}
	err = perfscript_flush(p, s, stats);
	if (err)
		return err;
	comm = perfscript_comm(line);
	if (!comm)
		return -EINVAL;
	s->n = 0;
	s->len = 0;
	s->open = true;
	s->too_deep = false;
	return perfscript_push(s, line, comm, FRAME_USER);
}

int perfscript_read_bounded(struct profile *p, FILE *in, const struct lines_bounds *bounds,
			    struct perfscript_read_stats *stats)
{
	struct perfscript_read_stats local = { 0 };
	struct perfscript_sample s = {
		.max_frames = 1 + (bounds && bounds->max_depth ? bounds->max_depth
							       : LINES_DEFAULT_MAX_DEPTH),
	};
	struct lines *r = lines_new(in, bounds ? bounds->max_line : 0);
	size_t len;
	char *line;
	int err;

	if (!stats)
		stats = &local;
	if (!r)
		return -ENOMEM;
	while ((err = lines_next(r, &line, &len)) != 0) {
		if (err == -E2BIG) {
			stats->too_long++;
			err = -EINVAL;
		} else if (err < 0) {
			break;
		} else {
			err = perfscript_line(p, &s, stats, line, len);
		}
		if (err == -EINVAL) {
			stats->skipped++;
			if (!stats->first_bad_line)
				stats->first_bad_line = lines_number(r);
			err = 0;
		}
		if (err)
			break;
	}
	if (!err)
		err = perfscript_flush(p, &s, stats);
	if (err == -EBADMSG)
		stats->binary_at = lines_offset(r);
	lines_free(r);
	free(s.names);
	free(s.offsets);
	free(s.kinds);
	free(s.frames);
	return err;
}

int perfscript_read(struct profile *p, FILE *in, struct perfscript_read_stats *stats)
{
	return perfscript_read_bounded(p, in, NULL, stats);
}

/* "12345.678901:" */
static bool perfscript_is_timestamp(const char *s, size_t len)
{
	size_t i = 0, digits = 0;

	while (i < len && isdigit((unsigned char)s[i]))
		i++;
	if (!i || i == len || s[i++] != '.')
		return false;
	while (i < len && isdigit((unsigned char)s[i]))
		i++, digits++;
	return digits && i + 1 == len && s[i] == ':';
}

bool perfscript_detect(const char *head, size_t len)
{
	const char *line = head, *end = head + len;

	while (line < end) {
		const char *eol = memchr(line, '\n', (size_t)(end - line));
		const char *s = line, *word;

		if (!eol)
			eol = end;
		if (s < eol && (*s == ' ' || *s == '\t')) {
			while (s < eol && (*s == ' ' || *s == '\t'))
				s++;
			word = s;
			while (s < eol && isxdigit((unsigned char)*s))
				s++;
			if (s > word && s < eol && (*s == ' ' || *s == '\t'))
				return true;
		} else if (s < eol && *s != '#') {
			while (s < eol) {
				while (s < eol && isspace((unsigned char)*s))
					s++;
				word = s;
				while (s < eol && !isspace((unsigned char)*s))
					s++;
				if (perfscript_is_timestamp(word, (size_t)(s - word)))
					return true;
			}
		}
		line = eol + 1;
	}
	return false;
}
