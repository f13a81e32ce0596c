/*
 * pprof: what `go tool pprof` and other consumers read. The profile is
 * decoded here with our own protobuf reader and checked against the
 * format's rules (string 0 empty, ids non-zero and unique, every
 * reference resolves, one value per sample type), its totals and top
 * functions against the profile, and protoc decodes the gzip'ed file with
 * the published schema (tests/pprof/profile.proto).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "render/pprof.h"
#include "render/protobuf.h"

#define MAXN 64

/* The decoded profile, as small fixed tables: the tests' profiles are small. */
struct decoded {
	char *strings[MAXN];
	size_t nstrings;
	uint64_t fn_id[MAXN], fn_name[MAXN];
	size_t nfn;
	uint64_t loc_id[MAXN], loc_fn[MAXN], loc_map[MAXN], loc_addr[MAXN];
	size_t nloc;
	uint64_t map_id[MAXN], map_file[MAXN], map_start[MAXN], map_limit[MAXN];
	uint64_t map_offset[MAXN], map_build_id[MAXN], map_has_functions[MAXN];
	size_t nmap;
	uint64_t sample_locs[MAXN][MAXN];
	size_t sample_nlocs[MAXN];
	uint64_t sample_values[MAXN][4];
	size_t sample_nvalues[MAXN];
	size_t nsamples;
	uint64_t type_name[4], type_unit[4];
	size_t ntypes;
	uint64_t period, period_type, default_type;
};

static void read_value_type(const struct pb_field *f, uint64_t *type, uint64_t *unit)
{
	struct pb_reader r;
	struct pb_field g;

	pb_reader_init(&r, f->bytes, f->len);
	while (pb_next(&r, &g) == 1) {
		if (g.number == 1)
			*type = g.varint;
		else if (g.number == 2)
			*unit = g.varint;
	}
}

static void read_submessage(struct decoded *d, const struct pb_field *f)
{
	struct pb_reader r;
	struct pb_field g;
	size_t pos;
	uint64_t v;
	int rc;

	pb_reader_init(&r, f->bytes, f->len);
	while ((rc = pb_next(&r, &g)) == 1) {
		switch (f->number) {
		case 2: /* Sample */
			pos = 0;
			while (pb_field_varint_at(&g, &pos, &v) == 1) {
				if (g.number == 1)
					d->sample_locs[d->nsamples][d->sample_nlocs[d->nsamples]++] = v;
				else if (g.number == 2)
					d->sample_values[d->nsamples][d->sample_nvalues[d->nsamples]++] = v;
			}
			break;
		case 3: /* Mapping */
			if (g.number == 1)
				d->map_id[d->nmap] = g.varint;
			else if (g.number == 2)
				d->map_start[d->nmap] = g.varint;
			else if (g.number == 3)
				d->map_limit[d->nmap] = g.varint;
			else if (g.number == 4)
				d->map_offset[d->nmap] = g.varint;
			else if (g.number == 5)
				d->map_file[d->nmap] = g.varint;
			else if (g.number == 6)
				d->map_build_id[d->nmap] = g.varint;
			else if (g.number == 7)
				d->map_has_functions[d->nmap] = g.varint;
			break;
		case 4: /* Location */
			if (g.number == 1)
				d->loc_id[d->nloc] = g.varint;
			else if (g.number == 2)
				d->loc_map[d->nloc] = g.varint;
			else if (g.number == 3)
				d->loc_addr[d->nloc] = g.varint;
			else if (g.number == 4) {
				struct pb_reader lr;
				struct pb_field l;

				pb_reader_init(&lr, g.bytes, g.len);
				while (pb_next(&lr, &l) == 1)
					if (l.number == 1)
						d->loc_fn[d->nloc] = l.varint;
			}
			break;
		case 5: /* Function */
			if (g.number == 1)
				d->fn_id[d->nfn] = g.varint;
			else if (g.number == 2)
				d->fn_name[d->nfn] = g.varint;
			break;
		}
	}
	assert_int_equal(rc, 0);
	if (f->number == 2)
		d->nsamples++;
	else if (f->number == 3)
		d->nmap++;
	else if (f->number == 4)
		d->nloc++;
	else if (f->number == 5)
		d->nfn++;
}

static void decode(const uint8_t *bytes, size_t len, struct decoded *d)
{
	struct pb_reader r;
	struct pb_field f;
	uint64_t period_unit = 0;
	int rc;

	memset(d, 0, sizeof(*d));
	pb_reader_init(&r, bytes, len);
	while ((rc = pb_next(&r, &f)) == 1) {
		assert_true(d->nsamples < MAXN && d->nfn < MAXN && d->nloc < MAXN &&
			    d->nstrings < MAXN);
		switch (f.number) {
		case 1:
			assert_int_equal(f.wire, PB_LEN);
			read_value_type(&f, &d->type_name[d->ntypes], &d->type_unit[d->ntypes]);
			d->ntypes++;
			break;
		case 2:
		case 3:
		case 4:
		case 5:
			assert_int_equal(f.wire, PB_LEN);
			read_submessage(d, &f);
			break;
		case 6:
			assert_int_equal(f.wire, PB_LEN);
			d->strings[d->nstrings] = strndup((const char *)f.bytes, f.len);
			d->nstrings++;
			break;
		case 11:
			read_value_type(&f, &d->period_type, &period_unit);
			break;
		case 12:
			d->period = f.varint;
			break;
		case 14:
			d->default_type = f.varint;
			break;
		}
	}
	assert_int_equal(rc, 0);
}

static void decoded_free(struct decoded *d)
{
	for (size_t i = 0; i < d->nstrings; i++)
		free(d->strings[i]);
}

static const char *str(const struct decoded *d, uint64_t i)
{
	assert_true(i < d->nstrings);
	return d->strings[i];
}

static size_t find_id(const uint64_t *ids, size_t n, uint64_t id)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] == id)
			return i;
	fail_msg("id %llu is referenced but not defined", (unsigned long long)id);
	return 0;
}

/* The rules of profile.proto that any consumer relies on. */
static void check_rules(const struct decoded *d)
{
	assert_true(d->nstrings > 0);
	assert_string_equal(d->strings[0], "");
	for (size_t i = 0; i < d->nfn; i++) {
		assert_true(d->fn_id[i] != 0);
		assert_true(d->fn_name[i] < d->nstrings);
		for (size_t j = 0; j < i; j++)
			assert_true(d->fn_id[i] != d->fn_id[j]);
	}
	for (size_t i = 0; i < d->nloc; i++) {
		assert_true(d->loc_id[i] != 0);
		find_id(d->fn_id, d->nfn, d->loc_fn[i]);
		if (d->loc_map[i])
			find_id(d->map_id, d->nmap, d->loc_map[i]);
		for (size_t j = 0; j < i; j++)
			assert_true(d->loc_id[i] != d->loc_id[j]);
	}
	for (size_t i = 0; i < d->nmap; i++) {
		assert_true(d->map_id[i] != 0);
		assert_true(d->map_file[i] < d->nstrings);
		assert_true(d->map_build_id[i] < d->nstrings);
		for (size_t j = 0; j < i; j++)
			assert_true(d->map_id[i] != d->map_id[j]);
	}
	/* A location with an address lies in its mapping's range. */
	for (size_t i = 0; i < d->nloc; i++) {
		size_t m;

		if (!d->loc_map[i] || !d->loc_addr[i])
			continue;
		m = find_id(d->map_id, d->nmap, d->loc_map[i]);
		assert_true(d->loc_addr[i] >= d->map_start[m]);
		assert_true(d->loc_addr[i] < d->map_limit[m]);
	}
	for (size_t i = 0; i < d->nsamples; i++) {
		assert_int_equal(d->sample_nvalues[i], d->ntypes);
		assert_true(d->sample_nlocs[i] > 0);
		for (size_t j = 0; j < d->sample_nlocs[i]; j++)
			find_id(d->loc_id, d->nloc, d->sample_locs[i][j]);
	}
	for (size_t i = 0; i < d->ntypes; i++)
		assert_true(d->type_name[i] < d->nstrings && d->type_unit[i] < d->nstrings);
}

/* The name of a sample's frame j, root first. */
static const char *frame_name(const struct decoded *d, size_t sample, size_t j)
{
	size_t n = d->sample_nlocs[sample];
	size_t loc = find_id(d->loc_id, d->nloc, d->sample_locs[sample][n - 1 - j]);
	size_t fn = find_id(d->fn_id, d->nfn, d->loc_fn[loc]);

	return str(d, d->fn_name[fn]);
}

static struct profile *split_profile(void)
{
	struct profile *p = profile_new();
	struct frame seventy[] = { { "split7030", FRAME_PROCESS }, { "main", FRAME_USER },
				   { "burn_seventy", FRAME_USER } };
	struct frame thirty[] = { { "split7030", FRAME_PROCESS }, { "main", FRAME_USER },
				  { "burn_thirty", FRAME_USER } };
	struct frame sys[] = { { "split7030", FRAME_PROCESS }, { "main", FRAME_USER },
			       { "write", FRAME_USER }, { "ksys_write", FRAME_KERNEL },
			       { "write", FRAME_KERNEL } };

	assert_non_null(p);
	assert_int_equal(profile_add(p, seventy, 3, 700), 0);
	assert_int_equal(profile_add(p, thirty, 3, 300), 0);
	assert_int_equal(profile_add(p, sys, 5, 5), 0);
	return p;
}

/*
 * The group fixture: the profile a test encodes and what it decodes are
 * freed after it, even when it fails.
 */
struct pprof_test {
	struct profile *p;
	struct decoded d;
};

static int pprof_setup(void **state)
{
	*state = calloc(1, sizeof(struct pprof_test));
	return *state ? 0 : -1;
}

static int pprof_teardown(void **state)
{
	struct pprof_test *t = *state;

	decoded_free(&t->d);
	profile_free(t->p);
	free(t);
	return 0;
}

/* Encodes p (t owns it from now) with opts, decodes it into t and checks
 * the format's rules. */
static struct decoded *encode_checked(struct pprof_test *t, struct profile *p,
				      const struct pprof_options *opts)
{
	uint8_t *bytes;
	size_t len;

	t->p = p;
	assert_int_equal(pprof_encode(p, opts, &bytes, &len), 0);
	decode(bytes, len, &t->d);
	free(bytes);
	check_rules(&t->d);
	return &t->d;
}

static void test_profile_follows_the_format_rules_and_keeps_the_counts(void **state)
{
	struct profile *p = split_profile();
	struct pprof_options o = { .frequency = 99 };
	struct pprof_test *t = *state;
	struct decoded *d;
	uint64_t total = 0, cpu = 0, seventy = 0;

	d = encode_checked(t, p, &o);
	assert_int_equal(d->ntypes, 2);
	assert_string_equal(str(d, d->type_name[0]), "samples");
	assert_string_equal(str(d, d->type_unit[0]), "count");
	assert_string_equal(str(d, d->type_name[1]), "cpu");
	assert_string_equal(str(d, d->type_unit[1]), "nanoseconds");
	assert_int_equal(d->period, 1000000000 / 99);
	assert_string_equal(str(d, d->period_type), "cpu");
	assert_string_equal(str(d, d->default_type), "cpu");
	assert_int_equal(d->nsamples, 3);
	for (size_t i = 0; i < d->nsamples; i++) {
		total += d->sample_values[i][0];
		cpu += d->sample_values[i][1];
		assert_int_equal(d->sample_values[i][1], d->sample_values[i][0] * d->period);
		/* leaf is location_id[0]: the last frame of the stack */
		if (!strcmp(frame_name(d, i, d->sample_nlocs[i] - 1), "burn_seventy")) {
			assert_string_equal(frame_name(d, i, 0), "split7030");
			assert_string_equal(frame_name(d, i, 1), "main");
			seventy += d->sample_values[i][0];
		}
	}
	assert_int_equal(total, profile_total(p));
	assert_int_equal(seventy, 700);
	assert_int_equal(cpu, 1005ull * (1000000000 / 99));
}

/* A profile of time (us): one sample type, time/nanoseconds, whatever the frequency. */
static void test_time_profiles_carry_nanoseconds(void **state)
{
	struct profile *p = split_profile();
	struct pprof_options o = { .frequency = 99, .unit_ns = 1000 };
	struct decoded d;
	uint8_t *bytes;
	size_t len;
	uint64_t total = 0;

	(void)state;
	assert_int_equal(pprof_encode(p, &o, &bytes, &len), 0);
	decode(bytes, len, &d);
	check_rules(&d);
	assert_int_equal(d.ntypes, 1);
	assert_string_equal(str(&d, d.type_name[0]), "time");
	assert_string_equal(str(&d, d.type_unit[0]), "nanoseconds");
	assert_string_equal(str(&d, d.period_type), "time");
	assert_int_equal(d.period, 1000);
	assert_string_equal(str(&d, d.default_type), "time");
	for (size_t i = 0; i < d.nsamples; i++) {
		assert_int_equal(d.sample_nvalues[i], 1);
		total += d.sample_values[i][0];
	}
	assert_int_equal(total, profile_total(p) * 1000);
	free(bytes);
	decoded_free(&d);
	profile_free(p);
}

static void test_functions_and_locations_are_deduplicated_by_name_and_kind(void **state)
{
	struct profile *p = split_profile();
	struct pprof_test *t = *state;
	struct decoded *d;
	size_t kernel_write = 0, user_write = 0;

	d = encode_checked(t, p, NULL);
	/* split7030, main, burn_seventy, burn_thirty, write (user),
	 * ksys_write, write (kernel): main is shared by all three stacks */
	assert_int_equal(d->nfn, 7);
	assert_int_equal(d->nloc, 7);
	for (size_t i = 0; i < d->nloc; i++) {
		size_t fn = find_id(d->fn_id, d->nfn, d->loc_fn[i]);

		if (strcmp(str(d, d->fn_name[fn]), "write"))
			continue;
		if (d->loc_map[i]) {
			size_t m = find_id(d->map_id, d->nmap, d->loc_map[i]);

			assert_string_equal(str(d, d->map_file[m]), "[kernel.kallsyms]");
			kernel_write++;
		} else {
			user_write++;
		}
	}
	assert_int_equal(kernel_write, 1);
	assert_int_equal(user_write, 1);
	/* each string once */
	for (size_t i = 0; i < d->nstrings; i++)
		for (size_t j = 0; j < i; j++)
			assert_string_not_equal(d->strings[i], d->strings[j]);
}

static const unsigned char EXE_ID[] = { 0x64, 0x31, 0x4f, 0xf0, 0x16, 0x1d, 0x36, 0x0d, 0x0f, 0xe9,
					0x0b, 0xfc, 0x3a, 0xb1, 0xe1, 0xf3, 0x8c, 0xba, 0x91, 0xf8 };
static const struct frame_mapping EXE = { 0x555555554000 + 0x1000, 0x555555554000 + 0x2000,
					  0x1000, "/usr/bin/split7030", EXE_ID,
					  sizeof(EXE_ID) };
static const struct frame_mapping LIBC = { 0x7ffff7dab000, 0x7ffff7f00000, 0x26000,
					   "/usr/lib/x86_64-linux-gnu/libc.so.6", NULL, 0 };

/* The 70/30 split as the symbolizer hands it out: user frames in two
 * files (one of them with a frame it could not name), kernel and JIT
 * frames with addresses. */
static struct profile *located_profile(void)
{
	struct profile *p = profile_new();
	struct frame seventy[] = { { "split7030", FRAME_PROCESS },
				   { "main", FRAME_USER, &EXE, 0x555555555100 },
				   { "burn_seventy", FRAME_USER, &EXE, 0x555555555240 } };
	struct frame thirty[] = { { "split7030", FRAME_PROCESS },
				  { "main", FRAME_USER, &EXE, 0x555555555100 },
				  { "burn_thirty", FRAME_USER, &EXE, 0x555555555280 } };
	struct frame sys[] = { { "split7030", FRAME_PROCESS },
			       { "main", FRAME_USER, &EXE, 0x555555555100 },
			       { "[libc.so.6+0x27234]", FRAME_UNKNOWN, &LIBC, 0x7ffff7dac234 },
			       { "entry_SYSCALL_64", FRAME_KERNEL, NULL, 0xffffffff81000100 },
			       { "ksys_write", FRAME_KERNEL, NULL, 0xffffffff81000300 } };
	struct frame jit[] = { { "node", FRAME_PROCESS },
			       { "LazyCompile:~hot", FRAME_JIT, NULL, 0x3f1200001000 } };

	assert_non_null(p);
	assert_int_equal(profile_add(p, seventy, 3, 700), 0);
	assert_int_equal(profile_add(p, thirty, 3, 300), 0);
	assert_int_equal(profile_add(p, sys, 5, 5), 0);
	assert_int_equal(profile_add(p, jit, 2, 9), 0);
	return p;
}

static size_t mapping_named(const struct decoded *d, const char *file)
{
	for (size_t i = 0; i < d->nmap; i++)
		if (!strcmp(str(d, d->map_file[i]), file))
			return i;
	fail_msg("no mapping of %s", file);
	return 0;
}

static size_t location_of(const struct decoded *d, const char *function)
{
	for (size_t i = 0; i < d->nloc; i++) {
		size_t fn = find_id(d->fn_id, d->nfn, d->loc_fn[i]);

		if (!strcmp(str(d, d->fn_name[fn]), function))
			return i;
	}
	fail_msg("no location of %s", function);
	return 0;
}

/*
 * Mappings and addresses, for tools that symbolize or match binaries by
 * build-id: each file's mapping has its range, offset and build-id (hex),
 * each location its mapping and address; a mapping with a frame we could
 * not name says has_functions false, so pprof symbolizes it; kernel and
 * JIT frames get pseudo-mappings that span their addresses.
 */
static void test_locations_carry_mappings_build_ids_and_addresses(void **state)
{
	struct profile *p = located_profile();
	struct pprof_test *t = *state;
	struct decoded *d;
	size_t exe, libc, kernel, jit, loc;

	d = encode_checked(t, p, NULL);
	assert_int_equal(d->nmap, 4);
	exe = mapping_named(d, "/usr/bin/split7030");
	assert_int_equal(d->map_start[exe], EXE.start);
	assert_int_equal(d->map_limit[exe], EXE.limit);
	assert_int_equal(d->map_offset[exe], 0x1000);
	assert_string_equal(str(d, d->map_build_id[exe]),
			    "64314ff0161d360d0fe90bfc3ab1e1f38cba91f8");
	assert_int_equal(d->map_has_functions[exe], 1);
	libc = mapping_named(d, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	assert_int_equal(d->map_build_id[libc], 0); /* none known: string 0, "" */
	assert_int_equal(d->map_has_functions[libc], 0);
	kernel = mapping_named(d, "[kernel.kallsyms]");
	assert_int_equal(d->map_start[kernel], 0xffffffff81000100);
	assert_int_equal(d->map_limit[kernel], 0xffffffff81000301);
	assert_int_equal(d->map_has_functions[kernel], 1);
	jit = mapping_named(d, "[jit]");

	loc = location_of(d, "burn_seventy");
	assert_int_equal(d->loc_addr[loc], 0x555555555240);
	assert_int_equal(d->loc_map[loc], d->map_id[exe]);
	loc = location_of(d, "[libc.so.6+0x27234]");
	assert_int_equal(d->loc_addr[loc], 0x7ffff7dac234);
	assert_int_equal(d->loc_map[loc], d->map_id[libc]);
	loc = location_of(d, "ksys_write");
	assert_int_equal(d->loc_addr[loc], 0xffffffff81000300);
	assert_int_equal(d->loc_map[loc], d->map_id[kernel]);
	loc = location_of(d, "LazyCompile:~hot");
	assert_int_equal(d->loc_map[loc], d->map_id[jit]);
	loc = location_of(d, "split7030");
	assert_int_equal(d->loc_map[loc], 0);
	assert_int_equal(d->loc_addr[loc], 0);
	/* main is one location, shared by the three stacks */
	assert_int_equal(d->nloc, 9);
}

/* One function at two addresses (two processes, or `--addresses`) is two
 * locations of one function. */
static void test_one_function_at_two_addresses_is_two_locations(void **state)
{
	struct profile *p = profile_new();
	struct frame a[] = { { "one", FRAME_PROCESS }, { "work", FRAME_USER, &EXE, 0x555555555100 } };
	struct frame b[] = { { "two", FRAME_PROCESS }, { "work", FRAME_USER, &EXE, 0x555555555180 } };
	struct pprof_test *t = *state;
	struct decoded *d;
	size_t work = 0;

	assert_int_equal(profile_add(p, a, 2, 1), 0);
	assert_int_equal(profile_add(p, b, 2, 1), 0);
	d = encode_checked(t, p, NULL);
	assert_int_equal(d->nfn, 3);
	assert_int_equal(d->nloc, 4);
	for (size_t i = 0; i < d->nloc; i++)
		work +=
		    !strcmp(str(d, d->fn_name[find_id(d->fn_id, d->nfn, d->loc_fn[i])]), "work");
	assert_int_equal(work, 2);
}

static void test_without_a_frequency_only_sample_counts_are_written(void **state)
{
	struct profile *p = split_profile();
	struct pprof_test *t = *state;
	struct decoded *d;

	d = encode_checked(t, p, NULL);
	assert_int_equal(d->ntypes, 1);
	assert_string_equal(str(d, d->type_name[0]), "samples");
	for (size_t i = 0; i < d->nsamples; i++)
		assert_int_equal(d->sample_nvalues[i], 1);
}

static void test_an_empty_profile_is_a_valid_profile(void **state)
{
	struct profile *p = profile_new();
	struct pprof_test *t = *state;
	struct decoded *d;

	d = encode_checked(t, p, NULL);
	assert_int_equal(d->nsamples, 0);
}

/* The gzip'ed file as a consumer gets it: it inflates to pprof_encode()'s
 * bytes, and protoc decodes it with the published schema. */
static void test_file_is_gzip_and_protoc_decodes_it(void **state)
{
	struct profile *p = split_profile();
	struct pprof_options o = { .frequency = 99, .comment = "ebprof test" };
	char dir[] = "/tmp/test_pprof.XXXXXX", gz[64], cmd[512], line[256];
	uint8_t *bytes, plain[65536];
	size_t len;
	gzFile in;
	FILE *out, *decoded;
	int n, samples = 0, kernel = 0;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(gz, sizeof(gz), "%s/p.pb.gz", dir);
	out = fopen(gz, "w");
	assert_non_null(out);
	assert_int_equal(pprof_write(p, out, &o), 0);
	assert_int_equal(fclose(out), 0);

	in = gzopen(gz, "r");
	assert_non_null(in);
	assert_int_equal(gzdirect(in), 0); /* compressed, not stored */
	n = gzread(in, plain, sizeof(plain));
	gzclose(in);
	assert_int_equal(pprof_encode(p, &o, &bytes, &len), 0);
	assert_int_equal((size_t)n, len);
	assert_memory_equal(plain, bytes, len);
	free(bytes);

	snprintf(cmd, sizeof(cmd),
		 "gzip -dc %s | protoc --decode perftools.profiles.Profile "
		 "-I tests/pprof profile.proto 2>&1; echo exit=$?", gz);
	decoded = popen(cmd, "r");
	assert_non_null(decoded);
	while (fgets(line, sizeof(line), decoded)) {
		samples += !strcmp(line, "sample {\n");
		kernel += strstr(line, "\"[kernel.kallsyms]\"") != NULL;
		if (!strncmp(line, "exit=", 5))
			assert_string_equal(line, "exit=0\n");
	}
	pclose(decoded);
	assert_int_equal(samples, 3);
	assert_int_equal(kernel, 1);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	profile_free(p);
}

/* protoc reads the mappings and addresses with the published schema. */
static void test_protoc_decodes_mappings_and_addresses(void **state)
{
	struct profile *p = located_profile();
	char dir[] = "/tmp/test_pprof.XXXXXX", pb[64], cmd[512], line[256];
	uint8_t *bytes;
	size_t len;
	FILE *out, *decoded;
	int mappings = 0, addresses = 0, build_ids = 0, hex = 0;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(pb, sizeof(pb), "%s/p.pb", dir);
	assert_int_equal(pprof_encode(p, NULL, &bytes, &len), 0);
	out = fopen(pb, "w");
	assert_non_null(out);
	assert_int_equal(fwrite(bytes, 1, len, out), len);
	assert_int_equal(fclose(out), 0);
	free(bytes);
	snprintf(cmd, sizeof(cmd),
		 "protoc --decode perftools.profiles.Profile -I tests/pprof profile.proto "
		 "< %s 2>&1; echo exit=$?", pb);
	decoded = popen(cmd, "r");
	assert_non_null(decoded);
	while (fgets(line, sizeof(line), decoded)) {
		mappings += !strcmp(line, "mapping {\n");
		addresses += !strncmp(line, "  address: ", 11);
		build_ids += !strncmp(line, "  build_id: ", 12);
		hex += !strcmp(line, "string_table: \"64314ff0161d360d0fe90bfc3ab1e1f38cba91f8\"\n");
		if (!strncmp(line, "exit=", 5))
			assert_string_equal(line, "exit=0\n");
	}
	pclose(decoded);
	assert_int_equal(mappings, 4);
	assert_int_equal(addresses, 7); /* every location but the two process names */
	assert_int_equal(build_ids, 1);
	assert_int_equal(hex, 1);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	profile_free(p);
}

static void test_a_full_disk_is_reported(void **state)
{
	struct profile *p = split_profile();
	FILE *full = fopen("/dev/full", "w");

	(void)state;
	assert_non_null(full);
	assert_int_equal(pprof_write(p, full, NULL), -ENOSPC);
	fclose(full);
	profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
		test_profile_follows_the_format_rules_and_keeps_the_counts, pprof_setup,
		pprof_teardown),
	    cmocka_unit_test_setup_teardown(
		test_functions_and_locations_are_deduplicated_by_name_and_kind, pprof_setup,
		pprof_teardown),
	    cmocka_unit_test_setup_teardown(test_locations_carry_mappings_build_ids_and_addresses,
					    pprof_setup, pprof_teardown),
	    cmocka_unit_test_setup_teardown(test_one_function_at_two_addresses_is_two_locations,
					    pprof_setup, pprof_teardown),
	    cmocka_unit_test_setup_teardown(test_without_a_frequency_only_sample_counts_are_written,
					    pprof_setup, pprof_teardown),
	    cmocka_unit_test_setup_teardown(test_an_empty_profile_is_a_valid_profile, pprof_setup,
					    pprof_teardown),
	    cmocka_unit_test(test_file_is_gzip_and_protoc_decodes_it),
	    cmocka_unit_test(test_protoc_decodes_mappings_and_addresses),
	    cmocka_unit_test(test_a_full_disk_is_reported),
		cmocka_unit_test(test_time_profiles_carry_nanoseconds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
