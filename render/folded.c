/*
 * folded: profiles to and from flamegraph.pl's folded text.
 *
 * The writer is the spool's and the CLI's text output; the reader turns
 * ours, flamegraph.pl's and stackcollapse's files back into a profile for
 * `ebprof render`. One line is one stack: frames root first, joined by ';',
 * then one space and the sample count.
 *
 * Choices that keep the format unambiguous:
 * - The writer replaces ';' (it separates frames), every byte below 0x20
 *   (newline, carriage return, tab...) and 0x7f by '_', so a hostile
 *   symbol can neither split a line nor add frames. Spaces stay: the count
 *   is the last token, and perf's collapsed output has frames like
 *   "operator new(unsigned long)".
 * - The reader takes the count after the last space or tab and removes
 *   exactly that one separator, so a name ending in spaces survives a
 *   round trip. Trailing whitespace and "\r\n" ends are trimmed first.
 * - Counts are unsigned decimal integers. flamegraph.pl also accepts
 *   fractions ("12.5"); a profile counts whole samples, so such a line is
 *   counted as malformed rather than rounded in silence.
 * - What a line may hold is bounded (lines.h): its length, its depth, its
 *   count. Each bound is a property of the line alone, so a line is kept
 *   or skipped whatever comes before it: a count that would have wrapped
 *   the total used to make every later line malformed. Only the sum of
 *   every count decides the read as a whole (-EOVERFLOW).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/grow.h"
#include "render/folded.h"
#include "render/format.h"
#include "render/stacks.h"

static bool folded_bad_byte(unsigned char c)
{
	return c < 0x20 || c == 0x7f || c == ';';
}

static void folded_put_name(const char *name, FILE *out)
{
	const char *run = name;

	for (const char *s = name; *s; s++) {
		if (!folded_bad_byte((unsigned char)*s))
			continue;
		fwrite_unlocked(run, 1, (size_t)(s - run), out);
		putc_unlocked('_', out);
		run = s + 1;
	}
	fputs_unlocked(run, out);
}

static int folded_put_stack(const struct frame *frames, size_t n, uint64_t count, void *ctx)
{
	FILE *out = ctx;

	for (size_t i = 0; i < n; i++) {
		if (i)
			putc_unlocked(';', out);
		folded_put_name(frames[i].name, out);
		fputs_unlocked(frame_kind_suffix(frames[i].kind), out);
	}
	fprintf(out, " %llu\n", (unsigned long long)count);
	return 0;
}

/* One line per node with self samples, in the profile's stable order: a
 * node's own line comes before its children's. */
int folded_write(const struct profile *p, FILE *out)
{
	int err;

	errno = 0;
	err = stacks_for_each(p, 0, folded_put_stack, out);
	return err ? err : format_stream_error(out);
}

/* --- reader ------------------------------------------------------------------ */

static bool folded_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

/* Unsigned decimal, no sign, no fraction, at most FOLDED_MAX_COUNT. */
static bool folded_parse_count(const char *s, uint64_t *count)
{
	uint64_t v = 0;

	if (!*s)
		return false;
	for (; *s; s++) {
		unsigned int d = (unsigned int)(*s - '0');

		if (d > 9 || v > (FOLDED_MAX_COUNT - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*count = v;
	return true;
}

/* Strips a kind suffix in place and returns the kind. */
static enum frame_kind folded_frame_kind(char *name, size_t len)
{
	static const struct {
		char letter;
		enum frame_kind kind;
	} suffixes[] = { { 'k', FRAME_KERNEL }, { 'j', FRAME_JIT }, { 'i', FRAME_INLINED },
		       { 'p', FRAME_PYTHON } };

	if (len < 4 || memcmp(name + len - 4, "_[", 2) || name[len - 1] != ']')
		return FRAME_USER;
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		if (name[len - 2] == suffixes[i].letter) {
			name[len - 4] = '\0';
			return suffixes[i].kind;
		}
	}
	return FRAME_USER;
}

struct folded_frames {
	struct frame *frames;
	size_t n, cap;
	size_t max_depth;
};

/* Appends a frame; -E2BIG past max_depth, -ENOMEM. */
static int folded_push(struct folded_frames *f, char *name, size_t len)
{
	if (f->n == f->max_depth)
		return -E2BIG;
	if (GROW_ARRAY(&f->frames, &f->cap, f->n + 1, 128))
		return -ENOMEM;
	f->frames[f->n] = (struct frame){ .name = name, .kind = folded_frame_kind(name, len) };
	f->n++;
	return 0;
}

/*
 * Parses one line in place into f and *count. Returns 1 for a stack, 0 for
 * a blank line, -EINVAL for a malformed one, -E2BIG for one deeper than
 * f->max_depth, -ENOMEM.
 */
static int folded_parse_line(char *line, size_t len, struct folded_frames *f,
			     uint64_t *count)
{
	char *sep, *name;
	int err;

	if (memchr(line, '\0', len))
		return -EINVAL; /* a name cannot hold a NUL byte */
	while (len && folded_space(line[len - 1]))
		len--;
	line[len] = '\0';
	if (!len)
		return 0;
	for (sep = line + len; sep > line && !folded_space(sep[-1]); sep--)
		;
	if (sep == line || !folded_parse_count(sep, count))
		return -EINVAL;
	sep[-1] = '\0';
	if (sep - 1 == line)
		return -EINVAL; /* a count and no stack */

	f->n = 0;
	name = line;
	for (char *s = line;; s++) {
		bool last = !*s;

		if (*s != ';' && !last)
			continue;
		*s = '\0';
		err = folded_push(f, name, (size_t)(s - name));
		if (err)
			return err;
		if (last)
			return 1;
		name = s + 1;
	}
}

/* Counts a skipped line, and remembers the first. */
static void folded_skip(struct folded_read_stats *stats, uint64_t lineno)
{
	stats->skipped++;
	if (!stats->first_bad_line)
		stats->first_bad_line = lineno;
}

int folded_for_each(FILE *in, const struct lines_bounds *bounds, struct folded_read_stats *stats,
		    stacks_fn fn, void *ctx)
{
	struct folded_read_stats local = { 0 };
	struct folded_frames f = { .max_depth = bounds && bounds->max_depth
							? bounds->max_depth
							: LINES_DEFAULT_MAX_DEPTH };
	struct lines *r = lines_new(in, bounds ? bounds->max_line : 0);
	uint64_t count;
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
			folded_skip(stats, lines_number(r));
			continue;
		}
		if (err < 0)
			break;
		err = folded_parse_line(line, len, &f, &count);
		if (err == -EINVAL || err == -E2BIG) {
			stats->too_deep += err == -E2BIG;
			folded_skip(stats, lines_number(r));
			continue;
		}
		if (err < 0)
			break;
		if (err == 0)
			continue;
		err = fn(f.frames, f.n, count, ctx);
		if (err)
			break;
		stats->lines++;
	}
	if (err == -EBADMSG)
		stats->binary_at = lines_offset(r);
	lines_free(r);
	free(f.frames);
	return err;
}

/* Adds one stack to the profile in ctx, refusing to wrap its total. */
static int folded_add(const struct frame *frames, size_t n, uint64_t count, void *ctx)
{
	struct profile *p = ctx;

	if (count > FOLDED_MAX_COUNT - profile_total(p))
		return -EOVERFLOW;
	return profile_add(p, frames, n, count);
}

int folded_read_bounded(struct profile *p, FILE *in, const struct lines_bounds *bounds,
			struct folded_read_stats *stats)
{
	return folded_for_each(in, bounds, stats, folded_add, p);
}

int folded_read(struct profile *p, FILE *in, struct folded_read_stats *stats)
{
	return folded_read_bounded(p, in, NULL, stats);
}
