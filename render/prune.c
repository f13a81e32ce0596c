/*
 * prune: two passes over a folded file, so that `ebprof render` of half a
 * million stacks holds the frames it draws rather than every frame (see
 * prune.h for the idea and why the SVG stays the same).
 *
 * The sketch: blocks of 16 saturating 32-bit counters (a cache line),
 * one block per prefix chosen by a 64-bit hash of the prefix (the frames
 * from the root down to one depth, names and kinds), and PRUNE_PROBES
 * counters in it chosen by other bits of that hash. A prefix's estimate is
 * the least of its counters: never below its true count, since every
 * sample that passed through it was added to each of them; above it only
 * by the samples of other prefixes that share all its counters. A counter
 * that saturates stands for "very many", which keeps the frame. One block
 * per prefix costs one cache miss where independent rows cost one each.
 *
 * How big: the counters share between them the samples of every prefix,
 * about the total times the mean depth times PRUNE_PROBES, so a prefix's
 * error is that over their number; a frame is drawn from 0.1 px of 1180,
 * a 1/11800th of the total. 2^22 counters (16 MB) keep the mean error
 * ~20 times under that for 20-frame stacks, for any number of lines;
 * smaller files get a smaller table, from their size.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "render/prune.h"

#define PRUNE_PROBES 3
#define PRUNE_BLOCK 16		/* counters in a block: 64 bytes */
#define PRUNE_MIN_BLOCKS_BITS 8
#define PRUNE_MAX_BLOCKS_BITS 18 /* block bits + 4 per probe must fit in 64 */
#define PRUNE_BYTES_PER_BLOCK 256 /* of input: sizes the table to the file */
#define PRUNE_RUN 16		  /* prefixes hashed before their blocks are counted */

struct prune {
	uint32_t (*blocks)[PRUNE_BLOCK];
	uint64_t mask; /* of a block number */
	unsigned int bits;
	uint64_t total; /* pass one's samples */
	uint64_t added; /* pass two's */
	uint64_t least; /* the fewest samples the SVG draws, of pass one's total */
	struct profile *p;
};

static uint64_t prune_mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

/* The hash of the prefix that ends in frame f, from its parent's: the
 * name eight bytes at a time, then the kind. */
static uint64_t prune_prefix(uint64_t parent, const struct frame *f)
{
	size_t len = strlen(f->name), i = 0;
	uint64_t h = parent ^ ((uint64_t)f->kind << 56 | len);

	for (; i + 8 <= len; i += 8) {
		uint64_t w;

		memcpy(&w, f->name + i, 8);
		h = prune_mix(h ^ w);
	}
	if (i < len) {
		uint64_t w = 0;

		memcpy(&w, f->name + i, len - i);
		h = prune_mix(h ^ w);
	}
	return prune_mix(h + 0x9e3779b97f4a7c15ULL);
}

static uint32_t *prune_block(const struct prune *pr, uint64_t h)
{
	return pr->blocks[h & pr->mask];
}

/* The probe'th counter of h in its block: four bits each, above the
 * block number's. */
static unsigned int prune_slot(const struct prune *pr, uint64_t h, unsigned int probe)
{
	return (unsigned int)(h >> (pr->bits + 4 * probe)) & (PRUNE_BLOCK - 1);
}

static uint32_t prune_estimate(const struct prune *pr, uint64_t h)
{
	const uint32_t *b = prune_block(pr, h);
	uint32_t est = UINT32_MAX;

	for (unsigned int i = 0; i < PRUNE_PROBES; i++) {
		uint32_t c = b[prune_slot(pr, h, i)];

		if (c < est)
			est = c;
	}
	return est;
}

/* Pass one: the total, and every prefix into the sketch. */
static int prune_count(const struct frame *frames, size_t n, uint64_t count, void *ctx)
{
	struct prune *pr = ctx;
	uint32_t add = count > UINT32_MAX ? UINT32_MAX : (uint32_t)count;
	uint64_t h = 0;

	if (count > FOLDED_MAX_COUNT - pr->total)
		return -EOVERFLOW;
	pr->total += count;
	/* Hash a run of prefixes and ask for their blocks, then count: the
	 * cache misses overlap rather than follow one another. */
	for (size_t at = 0; at < n; at += PRUNE_RUN) {
		size_t run = n - at < PRUNE_RUN ? n - at : PRUNE_RUN;
		uint64_t hs[PRUNE_RUN];

		for (size_t i = 0; i < run; i++) {
			h = prune_prefix(h, &frames[at + i]);
			hs[i] = h;
			__builtin_prefetch(prune_block(pr, h), 1);
		}
		for (size_t i = 0; i < run; i++) {
			uint32_t *b = prune_block(pr, hs[i]);

			for (unsigned int probe = 0; probe < PRUNE_PROBES; probe++) {
				uint32_t *c = &b[prune_slot(pr, hs[i], probe)];

				*c = *c > UINT32_MAX - add ? UINT32_MAX : *c + add;
			}
		}
	}
	return 0;
}

/* Pass two: the stack down to its first frame that cannot be drawn. */
static int prune_add(const struct frame *frames, size_t n, uint64_t count, void *ctx)
{
	struct prune *pr = ctx;
	uint64_t h = 0;
	size_t keep = 0;

	if (count > FOLDED_MAX_COUNT - pr->added)
		return -EOVERFLOW;
	while (keep < n) {
		uint32_t est;

		h = prune_prefix(h, &frames[keep++]);
		est = prune_estimate(pr, h);
		if (est != UINT32_MAX && est < pr->least)
			break; /* this frame is kept, with its count; nothing under it */
	}
	pr->added += count;
	return profile_add(pr->p, frames, keep, count);
}

/* Blocks for a file of `size` bytes, as a power of two. */
static unsigned int prune_bits(off_t size)
{
	unsigned int bits = PRUNE_MIN_BLOCKS_BITS;

	while (bits < PRUNE_MAX_BLOCKS_BITS && ((off_t)1 << bits) * PRUNE_BYTES_PER_BLOCK < size)
		bits++;
	return bits;
}

/* The fewest samples svg_frame_drawn() draws out of total (total + 1:
 * none), by bisection: drawing is monotonic in the samples. */
static uint64_t prune_least(const struct svg_options *opts, uint64_t total)
{
	uint64_t lo = 1, hi = total + 1;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (svg_frame_drawn(opts, mid, total))
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

int prune_read_folded(struct profile *p, FILE *in, const struct lines_bounds *bounds,
		      struct folded_read_stats *stats, const struct svg_options *opts)
{
	struct prune pr = { .p = p };
	struct folded_read_stats first = { 0 };
	struct stat st;
	int err;

	if (fileno(in) < 0 || fstat(fileno(in), &st) || !S_ISREG(st.st_mode) ||
	    fseeko(in, 0, SEEK_SET))
		return -ESPIPE;
	pr.bits = prune_bits(st.st_size);
	pr.mask = ((uint64_t)1 << pr.bits) - 1;
	pr.blocks = calloc((size_t)1 << pr.bits, sizeof(*pr.blocks));
	if (!pr.blocks)
		return -ENOMEM;

	err = folded_for_each(in, bounds, &first, prune_count, &pr);
	if (err) {
		if (stats)
			*stats = first;
		goto out;
	}
	if (fseeko(in, 0, SEEK_SET)) {
		err = -errno;
		goto out;
	}
	clearerr(in);
	pr.least = prune_least(opts, pr.total);
	err = folded_for_each(in, bounds, stats, prune_add, &pr);
	if (!err && pr.added != pr.total)
		err = -EAGAIN;
out:
	free(pr.blocks);
	return err;
}
