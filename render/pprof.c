/*
 * pprof: profile.proto (github.com/google/pprof/proto/profile.proto),
 * encoded with our own protobuf writer and gzip-compressed with zlib.
 *
 * The profile tree becomes:
 * - one Sample per stack with self samples: location ids leaf first (the
 *   format's order, the reverse of folded's), values [samples, cpu ns];
 * - one Function per distinct (name, kind);
 * - one Location per distinct (function, mapping, address), with one Line.
 *   The tree aggregates by function, so a location's address is the
 *   function's first byte in its mapping (the sampled instruction for a
 *   frame the symbolizer could not name, "[libfoo.so+0x1234]"), which
 *   any tool that symbolizes by mapping and build-id resolves to the same
 *   function;
 * - one Mapping per mapped file range the frames came from (file, build-id
 *   as lower-case hex, start, limit, file offset), and "[kernel.kallsyms]"
 *   and "[jit]" for kernel and JIT frames, spanning their addresses.
 *   has_functions says every location of the mapping is named, so pprof
 *   leaves our names alone; a mapping with an unnamed frame leaves it
 *   false, for pprof to symbolize from the build-id. Frames read from
 *   folded text have no mapping (mapping_id 0, which the format allows)
 *   and address 0.
 * The process name stays the root frame, as in our folded output and SVG,
 * so pprof's flame graph matches ours and merged fleet graphs keep their
 * host roots. Ids are index + 1 (never 0); string 0 is "".
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "bpf/grow.h"
#include "render/intern.h"
#include "render/pprof.h"
#include "render/protobuf.h"
#include "render/stacks.h"

/* Field numbers of profile.proto. */
enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,
	VALUE_TYPE_TYPE = 1,
	VALUE_TYPE_UNIT = 2,
	SAMPLE_LOCATION_ID = 1,
	SAMPLE_VALUE = 2,
	MAPPING_ID = 1,
	MAPPING_MEMORY_START = 2,
	MAPPING_MEMORY_LIMIT = 3,
	MAPPING_FILE_OFFSET = 4,
	MAPPING_FILENAME = 5,
	MAPPING_BUILD_ID = 6,
	MAPPING_HAS_FUNCTIONS = 7,
	LOCATION_ID = 1,
	LOCATION_MAPPING_ID = 2,
	LOCATION_ADDRESS = 3,
	LOCATION_LINE = 4,
	LINE_FUNCTION_ID = 1,
	FUNCTION_ID = 1,
	FUNCTION_NAME = 2,
	FUNCTION_SYSTEM_NAME = 3,
};

/* What a mapping is, as the tag of its key in the mappings table. */
enum { MAP_FILE, MAP_KERNEL, MAP_JIT };

struct pprof_state {
	struct pb_buf profile, sub, line;
	struct intern *strings;	  /* string table; tag 0 */
	struct intern *functions; /* (name, kind) -> function id - 1 */
	struct intern *mappings;  /* (file, MAP_*, the profile's mapping) -> id - 1 */
	struct intern *locations; /* (name, kind, mapping id, address) -> id - 1 */
	uint64_t *ids;		  /* one stack's location ids, leaf first */
	size_t ids_cap;
	char *hex;		  /* build-ids as text, while the strings borrow them */
	uint64_t period; /* ns per sample; 0: no cpu value */
	uint64_t unit_ns; /* counts are time, this many ns each; 0: samples */
	int err;
};

static int pprof_string(struct pprof_state *st, const char *s, uint64_t *index)
{
	uint32_t i;
	int err = intern_add(st->strings, s, 0, &i, NULL);

	*index = i;
	return err;
}

static void pprof_value_type(struct pprof_state *st, uint32_t field, const char *type,
			     const char *unit)
{
	uint64_t t = 0, u = 0;

	if (pprof_string(st, type, &t) || pprof_string(st, unit, &u))
		st->err = -ENOMEM;
	pb_buf_reset(&st->sub);
	pb_put_varint(&st->sub, VALUE_TYPE_TYPE, t);
	pb_put_varint(&st->sub, VALUE_TYPE_UNIT, u);
	pb_put_message(&st->profile, field, &st->sub);
}

/*
 * The id of the mapping frame f's code is in (*id = 0: none). The profile
 * interns its mappings, so one pointer is one mapping; kernel and JIT
 * frames share one pseudo-mapping each.
 */
static int pprof_mapping_of(struct pprof_state *st, const struct frame *f, uint32_t *id)
{
	uint32_t index;
	int err;

	if (f->mapping)
		err = intern_add_pair(st->mappings, f->mapping->file, MAP_FILE,
				      (uint64_t)(uintptr_t)f->mapping, 0, &index, NULL);
	else if (f->kind == FRAME_KERNEL)
		err = intern_add(st->mappings, "[kernel.kallsyms]", MAP_KERNEL, &index, NULL);
	else if (f->kind == FRAME_JIT)
		err = intern_add(st->mappings, "[jit]", MAP_JIT, &index, NULL);
	else
		return 0;
	*id = index + 1;
	return err;
}

static int pprof_sample(const struct frame *frames, size_t n, uint64_t count, void *ctx)
{
	struct pprof_state *st = ctx;
	uint64_t values[2] = { count, 0 };

	if (GROW_ARRAY(&st->ids, &st->ids_cap, n, 64))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		uint32_t fn, map = 0, loc;

		if (intern_add(st->functions, frames[i].name, frames[i].kind, &fn, NULL) ||
		    pprof_mapping_of(st, &frames[i], &map) ||
		    intern_add_pair(st->locations, frames[i].name, frames[i].kind, map,
				    frames[i].address, &loc, NULL))
			return -ENOMEM;
		st->ids[n - 1 - i] = (uint64_t)loc + 1;
	}
	if (st->unit_ns) {
		if (count > (uint64_t)INT64_MAX / st->unit_ns)
			return -EOVERFLOW;
		values[0] = count * st->unit_ns;
	} else if (st->period) {
		if (count > (uint64_t)INT64_MAX / st->period)
			return -EOVERFLOW;
		values[1] = count * st->period;
	}
	pb_buf_reset(&st->sub);
	pb_put_packed(&st->sub, SAMPLE_LOCATION_ID, st->ids, n);
	pb_put_packed(&st->sub, SAMPLE_VALUE, values, st->period ? 2 : 1);
	pb_put_message(&st->profile, PROFILE_SAMPLE, &st->sub);
	return pb_buf_error(&st->profile);
}

static void pprof_functions(struct pprof_state *st)
{
	for (uint32_t i = 0; i < intern_count(st->functions); i++) {
		uint64_t name = 0;

		if (pprof_string(st, intern_string(st->functions, i), &name))
			st->err = -ENOMEM;
		pb_buf_reset(&st->sub);
		pb_put_varint(&st->sub, FUNCTION_ID, (uint64_t)i + 1);
		pb_put_varint(&st->sub, FUNCTION_NAME, name);
		pb_put_varint(&st->sub, FUNCTION_SYSTEM_NAME, name);
		pb_put_message(&st->profile, PROFILE_FUNCTION, &st->sub);
	}
}

/* What the locations tell of each mapping: the span of their addresses
 * (for the pseudo-mappings, which have no range of their own), and
 * whether one of them is a frame we could not name. */
struct pprof_span {
	uint64_t low, high;
	bool unnamed;
};

static void pprof_locations(struct pprof_state *st, struct pprof_span *spans)
{
	for (uint32_t i = 0; i < intern_count(st->locations); i++) {
		const char *name = intern_string(st->locations, i);
		enum frame_kind kind = (enum frame_kind)intern_tag(st->locations, i);
		uint64_t map, address;
		uint32_t fn = 0;

		intern_pair(st->locations, i, &map, &address);
		if (intern_add(st->functions, name, kind, &fn, NULL))
			st->err = -ENOMEM; /* cannot happen: every function is in */
		if (map) {
			struct pprof_span *sp = &spans[map - 1];

			if (address && (!sp->low || address < sp->low))
				sp->low = address;
			if (address >= sp->high)
				sp->high = address + 1;
			sp->unnamed |= kind == FRAME_UNKNOWN;
		}
		pb_buf_reset(&st->line);
		pb_put_varint(&st->line, LINE_FUNCTION_ID, (uint64_t)fn + 1);
		pb_buf_reset(&st->sub);
		pb_put_varint(&st->sub, LOCATION_ID, (uint64_t)i + 1);
		if (map)
			pb_put_varint(&st->sub, LOCATION_MAPPING_ID, map);
		if (address)
			pb_put_varint(&st->sub, LOCATION_ADDRESS, address);
		pb_put_message(&st->sub, LOCATION_LINE, &st->line);
		pb_put_message(&st->profile, PROFILE_LOCATION, &st->sub);
	}
}

/* A build-id as lower-case hex, as pprof and the debuginfod protocol spell
 * it, into out (2 * len + 1 bytes). */
static const char *pprof_hex(const unsigned char *id, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < len; i++) {
		out[2 * i] = digits[id[i] >> 4];
		out[2 * i + 1] = digits[id[i] & 15];
	}
	out[2 * len] = '\0';
	return out;
}

static void pprof_mappings(struct pprof_state *st, const struct pprof_span *spans)
{
	size_t n = intern_count(st->mappings), hex_len = 0;
	char *hex;

	for (uint32_t i = 0; i < n; i++) {
		uint64_t ptr, unused;

		intern_pair(st->mappings, i, &ptr, &unused);
		if (ptr)
			hex_len += 2 * ((const struct frame_mapping *)(uintptr_t)ptr)->build_id_len + 1;
	}
	hex = st->hex = malloc(hex_len ? hex_len : 1);
	if (!hex) {
		st->err = -ENOMEM;
		return;
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct frame_mapping *m;
		uint64_t ptr, unused, file = 0, build_id = 0;
		uint64_t start = spans[i].low, limit = spans[i].high, offset = 0;

		intern_pair(st->mappings, i, &ptr, &unused);
		m = (const struct frame_mapping *)(uintptr_t)ptr;
		if (pprof_string(st, intern_string(st->mappings, i), &file))
			st->err = -ENOMEM;
		if (m) {
			start = m->start;
			limit = m->limit;
			offset = m->offset;
			if (m->build_id_len &&
			    pprof_string(st, pprof_hex(m->build_id, m->build_id_len, hex), &build_id))
				st->err = -ENOMEM;
			hex += 2 * m->build_id_len + 1;
		}
		pb_buf_reset(&st->sub);
		pb_put_varint(&st->sub, MAPPING_ID, (uint64_t)i + 1);
		if (start)
			pb_put_varint(&st->sub, MAPPING_MEMORY_START, start);
		if (limit)
			pb_put_varint(&st->sub, MAPPING_MEMORY_LIMIT, limit);
		if (offset)
			pb_put_varint(&st->sub, MAPPING_FILE_OFFSET, offset);
		pb_put_varint(&st->sub, MAPPING_FILENAME, file);
		if (build_id)
			pb_put_varint(&st->sub, MAPPING_BUILD_ID, build_id);
		if (!spans[i].unnamed)
			pb_put_varint(&st->sub, MAPPING_HAS_FUNCTIONS, 1);
		pb_put_message(&st->profile, PROFILE_MAPPING, &st->sub);
	}
}

int pprof_encode(const struct profile *p, const struct pprof_options *opts, uint8_t **out,
		 size_t *len)
{
	struct pprof_options none = { 0 };
	struct pprof_state st = { 0 };
	struct pprof_span *spans = NULL;
	uint64_t index;
	int err;

	*out = NULL;
	*len = 0;
	if (!opts)
		opts = &none;
	pb_buf_init(&st.profile);
	pb_buf_init(&st.sub);
	pb_buf_init(&st.line);
	st.unit_ns = opts->unit_ns;
	st.period = opts->frequency && !st.unit_ns ? 1000000000ull / opts->frequency : 0;
	st.strings = intern_new();
	st.functions = intern_new();
	st.mappings = intern_new();
	st.locations = intern_new();
	err = -ENOMEM;
	if (!st.strings || !st.functions || !st.mappings || !st.locations ||
	    pprof_string(&st, "", &index))
		goto out_free;

	if (st.unit_ns)
		pprof_value_type(&st, PROFILE_SAMPLE_TYPE, "time", "nanoseconds");
	else
		pprof_value_type(&st, PROFILE_SAMPLE_TYPE, "samples", "count");
	if (st.period)
		pprof_value_type(&st, PROFILE_SAMPLE_TYPE, "cpu", "nanoseconds");
	err = stacks_for_each(p, 0, pprof_sample, &st);
	if (err)
		goto out_free;
	spans = calloc(intern_count(st.mappings) + 1, sizeof(*spans));
	if (!spans) {
		err = -ENOMEM;
		goto out_free;
	}
	pprof_functions(&st);
	pprof_locations(&st, spans);
	pprof_mappings(&st, spans);
	if (st.unit_ns) {
		pprof_value_type(&st, PROFILE_PERIOD_TYPE, "time", "nanoseconds");
		pb_put_varint(&st.profile, PROFILE_PERIOD, st.unit_ns);
		if (pprof_string(&st, "time", &index))
			st.err = -ENOMEM;
	} else if (st.period) {
		pprof_value_type(&st, PROFILE_PERIOD_TYPE, "cpu", "nanoseconds");
		pb_put_varint(&st.profile, PROFILE_PERIOD, st.period);
		if (pprof_string(&st, "cpu", &index))
			st.err = -ENOMEM;
	} else {
		pprof_value_type(&st, PROFILE_PERIOD_TYPE, "samples", "count");
		pb_put_varint(&st.profile, PROFILE_PERIOD, 1);
		if (pprof_string(&st, "samples", &index))
			st.err = -ENOMEM;
	}
	pb_put_varint(&st.profile, PROFILE_DEFAULT_SAMPLE_TYPE, index);
	if (opts->time_nanos)
		pb_put_varint(&st.profile, PROFILE_TIME_NANOS, (uint64_t)opts->time_nanos);
	if (opts->duration_nanos)
		pb_put_varint(&st.profile, PROFILE_DURATION_NANOS, (uint64_t)opts->duration_nanos);
	if (opts->comment) {
		if (pprof_string(&st, opts->comment, &index))
			st.err = -ENOMEM;
		pb_put_varint(&st.profile, PROFILE_COMMENT, index);
	}
	/* The string table last: everything above has added to it. */
	for (uint32_t i = 0; i < intern_count(st.strings); i++)
		pb_put_string(&st.profile, PROFILE_STRING_TABLE, intern_string(st.strings, i));
	err = st.err ? st.err : pb_buf_error(&st.profile);
	if (err)
		goto out_free;
	*out = st.profile.bytes;
	*len = st.profile.len;
	st.profile.bytes = NULL;
out_free:
	pb_buf_free(&st.profile);
	pb_buf_free(&st.sub);
	pb_buf_free(&st.line);
	intern_free(st.strings);
	intern_free(st.functions);
	intern_free(st.mappings);
	intern_free(st.locations);
	free(st.ids);
	free(st.hex);
	free(spans);
	return err;
}

/* gzip (windowBits 15 + 16) from memory to the stream, 64 KiB at a time. */
static int pprof_gzip(const uint8_t *bytes, size_t len, FILE *out)
{
	unsigned char chunk[65536];
	z_stream z;
	int zerr, err = 0;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = (unsigned char *)bytes;
	do {
		/* avail_in is 32 bits: feed very large profiles in pieces. */
		size_t feed = len - (size_t)(z.next_in - bytes);

		z.avail_in = feed > (1u << 30) ? (1u << 30) : (uInt)feed;
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		zerr = deflate(&z, z.avail_in == feed ? Z_FINISH : Z_NO_FLUSH);
		if (zerr == Z_STREAM_ERROR) {
			err = -EIO;
			break;
		}
		if (fwrite(chunk, 1, sizeof(chunk) - z.avail_out, out) !=
		    sizeof(chunk) - z.avail_out) {
			err = errno ? -errno : -EIO;
			break;
		}
	} while (zerr != Z_STREAM_END);
	deflateEnd(&z);
	return err;
}

int pprof_write(const struct profile *p, FILE *out, const struct pprof_options *opts)
{
	uint8_t *bytes;
	size_t len;
	int err = pprof_encode(p, opts, &bytes, &len);

	if (err)
		return err;
	errno = 0;
	err = pprof_gzip(bytes, len, out);
	free(bytes);
	if (!err && fflush(out))
		err = errno ? -errno : -EIO;
	return err;
}
