/*
 * ksyms tests: kallsyms files written by the test, with the cases a real
 * kernel gives (aliases, modules, data symbols, _etext) and the one
 * kptr_restrict gives (every address 0).
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

#include <cmocka.h>

#include "symbolizer/ksyms.h"

struct fixture_dir {
	char dir[64];
	char kallsyms[128];
	char modules[128];
};

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static void dir_make(struct fixture_dir *d, const char *kallsyms, const char *modules)
{
	strcpy(d->dir, "/tmp/test_ksyms.XXXXXX");
	assert_non_null(mkdtemp(d->dir));
	snprintf(d->kallsyms, sizeof(d->kallsyms), "%s/kallsyms", d->dir);
	snprintf(d->modules, sizeof(d->modules), "%s/modules", d->dir);
	write_file(d->kallsyms, kallsyms);
	if (modules)
		write_file(d->modules, modules);
}

static void dir_remove(struct fixture_dir *d)
{
	unlink(d->kallsyms);
	unlink(d->modules);
	rmdir(d->dir);
}

static struct ksyms *load(struct fixture_dir *d, const char *kallsyms, const char *modules)
{
	struct ksyms *ks = NULL;

	dir_make(d, kallsyms, modules);
	assert_int_equal(ksyms_load(d->kallsyms, &ks), 0);
	assert_non_null(ks);
	return ks;
}

static const char *name_at(const struct ksyms *ks, uint64_t addr)
{
	struct ksym k;

	return ksyms_lookup(ks, addr, &k, NULL) ? k.name : NULL;
}

/* Unsorted on purpose: kallsyms lists module symbols after vmlinux, not by address. */
static const char KALLSYMS[] = "ffffffff81000000 T _stext\n"
			       "ffffffff81000000 T _text\n"
			       "ffffffff81000000 t startup_64\n"
			       "ffffffff81000000 T srso_alias_untrain_ret\n"
			       "ffffffff81000100 T do_syscall_64\n"
			       "ffffffff81000200 W abort\n"
			       "ffffffff81000300 t local_helper\n"
			       "ffffffff81000400 T _etext\n"
			       "ffffffff81000800 D some_data\n"
			       "ffffffff81001000 T init_func\n"
			       "ffffffff81001100 T _einittext\n"
			       "ffffffffc0002000 t mod_b_fn\t[mod_b]\n"
			       "ffffffffc0001000 t mod_a_fn\t[mod_a]\n"
			       "ffffffffc0001080 T mod_a_other\t[mod_a]\n"
			       "ffffffffc0001200 d mod_a_data\t[mod_a]\n"
			       "ffffffffc0003000 t ftrace_trampoline\t[__builtin__ftrace]\n"
			       "0000000000000000 A fixed_percpu_data\n";

static const char MODULES[] = "mod_a 4096 0 - Live 0xffffffffc0001000\n"
			      "mod_b 512 1 mod_a, Live 0xffffffffc0002000 (O)\n";

static void test_resolves_nearest_symbol_below(void **state)
{
	struct fixture_dir d;
	struct ksyms *ks = load(&d, KALLSYMS, MODULES);
	uint64_t offset = 0;
	struct ksym k;

	(void)state;
	assert_true(ksyms_lookup(ks, 0xffffffff81000123, &k, &offset));
	assert_string_equal(k.name, "do_syscall_64");
	assert_null(k.module);
	assert_int_equal(offset, 0x23);
	assert_string_equal(name_at(ks, 0xffffffff81000200), "abort");
	assert_string_equal(name_at(ks, 0xffffffff810003ff), "local_helper");
	ksyms_free(ks);
	dir_remove(&d);
}

static void test_alias_prefers_global_without_underscore(void **state)
{
	struct fixture_dir d;
	struct ksyms *ks = load(&d, KALLSYMS, MODULES);

	(void)state;
	/* _stext, _text, startup_64 and srso_alias_untrain_ret share one address. */
	assert_string_equal(name_at(ks, 0xffffffff81000010), "srso_alias_untrain_ret");
	ksyms_free(ks);
	dir_remove(&d);
}

static void test_before_first_and_past_text_unresolved(void **state)
{
	struct fixture_dir d;
	struct ksyms *ks = load(&d, KALLSYMS, MODULES);

	(void)state;
	assert_null(name_at(ks, 0xffffffff80ffffff));
	assert_null(name_at(ks, 0x1000));
	/* After _etext: rodata, not local_helper+0x100. */
	assert_null(name_at(ks, 0xffffffff81000400));
	assert_null(name_at(ks, 0xffffffff81000900));
	/* Init text is text again, and ends at _einittext. */
	assert_string_equal(name_at(ks, 0xffffffff81001010), "init_func");
	assert_null(name_at(ks, 0xffffffff81001100));
	ksyms_free(ks);
	dir_remove(&d);
}

static void test_module_symbols_and_bounds(void **state)
{
	struct fixture_dir d;
	struct ksyms *ks = load(&d, KALLSYMS, MODULES);
	struct ksym k;

	(void)state;
	assert_true(ksyms_lookup(ks, 0xffffffffc0001010, &k, NULL));
	assert_string_equal(k.name, "mod_a_fn");
	assert_string_equal(k.module, "mod_a");
	assert_string_equal(name_at(ks, 0xffffffffc00011ff), "mod_a_other");
	/* A data symbol ends the text before it. */
	assert_null(name_at(ks, 0xffffffffc0001200));
	/* mod_b is 512 bytes long: its last function ends there, not at the trampoline. */
	assert_string_equal(name_at(ks, 0xffffffffc00021ff), "mod_b_fn");
	assert_null(name_at(ks, 0xffffffffc0002200));
	/* No modules entry for the trampoline: one page, then nothing. */
	assert_string_equal(name_at(ks, 0xffffffffc0003fff), "ftrace_trampoline");
	assert_null(name_at(ks, 0xffffffffc0004000));
	ksyms_free(ks);
	dir_remove(&d);
}

static void test_without_modules_file_next_symbol_bounds(void **state)
{
	struct fixture_dir d;
	struct ksyms *ks = load(&d, KALLSYMS, NULL);

	(void)state;
	/* Without sizes, mod_b_fn reaches up to the next symbol. */
	assert_string_equal(name_at(ks, 0xffffffffc0002fff), "mod_b_fn");
	ksyms_free(ks);
	dir_remove(&d);
}

static void test_counts_text_symbols_once_per_address(void **state)
{
	struct fixture_dir d;
	struct ksyms *ks = load(&d, KALLSYMS, MODULES);

	(void)state;
	/* startup_64 group, do_syscall_64, abort, local_helper, init_func,
	 * mod_a_fn, mod_a_other, mod_b_fn, ftrace_trampoline. */
	assert_int_equal(ksyms_count(ks), 9);
	assert_false(ksyms_hidden(ks));
	ksyms_free(ks);
	dir_remove(&d);
}

static void test_all_zero_addresses_are_hidden(void **state)
{
	struct fixture_dir d;
	struct ksyms *ks = load(&d,
				"0000000000000000 T _stext\n"
				"0000000000000000 T do_syscall_64\n"
				"0000000000000000 t mod_fn\t[mod]\n",
				NULL);

	(void)state;
	assert_true(ksyms_hidden(ks));
	assert_null(name_at(ks, 0));
	assert_null(name_at(ks, 0xffffffff81000000));
	ksyms_free(ks);
	dir_remove(&d);
}

static void test_malformed_lines_skipped_and_missing_file_errors(void **state)
{
	struct fixture_dir d;
	struct ksyms *ks = load(&d,
				"garbage\n"
				"ffffffff81000000 Tno_space\n"
				"zzzz T bad_addr\n"
				"ffffffff81000000 T good\n"
				"ffffffff81000100 T\n",
				NULL);

	(void)state;
	assert_int_equal(ksyms_count(ks), 1);
	assert_string_equal(name_at(ks, 0xffffffff81000010), "good");
	ksyms_free(ks);
	dir_remove(&d);

	ks = (struct ksyms *)1;
	assert_int_equal(ksyms_load("/nonexistent/kallsyms", &ks), -ENOENT);
	assert_null(ks);
}

static void test_empty_file_is_an_error(void **state)
{
	struct fixture_dir d;
	struct ksyms *ks = NULL;

	(void)state;
	dir_make(&d, "", NULL);
	assert_int_equal(ksyms_load(d.kallsyms, &ks), -EINVAL);
	assert_null(ks);
	dir_remove(&d);
}

/* Modules whose symbols interleave by address each keep their own name. */
static void test_interleaved_modules_keep_their_names(void **state)
{
	struct fixture_dir d;
	struct ksyms *ks = load(&d,
				"ffffffffc0001000 t a_one\t[mod_a]\n"
				"ffffffffc0002000 t b_one\t[mod_b]\n"
				"ffffffffc0003000 t a_two\t[mod_a]\n"
				"ffffffffc0004000 t c_one\t[mod_c]\n"
				"ffffffffc0005000 t b_two\t[mod_b]\n"
				"ffffffff81000000 T vm_fn\n"
				"ffffffff81000100 T _etext\n",
				NULL);
	static const struct {
		uint64_t addr;
		const char *name, *module;
	} want[] = {
		{ 0xffffffffc0001001, "a_one", "mod_a" }, { 0xffffffffc0002002, "b_one", "mod_b" },
		{ 0xffffffffc0003003, "a_two", "mod_a" }, { 0xffffffffc0004004, "c_one", "mod_c" },
		{ 0xffffffffc0005005, "b_two", "mod_b" }, { 0xffffffff81000010, "vm_fn", NULL },
	};
	struct ksym k;

	(void)state;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		assert_true(ksyms_lookup(ks, want[i].addr, &k, NULL));
		assert_string_equal(k.name, want[i].name);
		if (want[i].module)
			assert_string_equal(k.module, want[i].module);
		else
			assert_null(k.module);
	}
	ksyms_free(ks);
	dir_remove(&d);
}

/*
 * A symbol's end is stored as a 32-bit length: an address 4 GiB or more
 * past a symbol is not resolved, even with no symbol between.
 */
static void test_far_addresses_unresolved(void **state)
{
	struct fixture_dir d;
	struct ksyms *ks = load(&d,
				"0000000100000000 T low_fn\n"
				"0000000300000000 T high_fn\n"
				"ffffffffc0001000 t in_mod\t[mod_s]\n",
				"mod_s 1024 0 - Live 0xffffffffc0001000\n");
	uint64_t offset = 0;
	struct ksym k;

	(void)state;
	assert_true(ksyms_lookup(ks, 0x1fffffffeULL, &k, &offset));
	assert_string_equal(k.name, "low_fn");
	assert_true(offset == 0xfffffffeULL);
	assert_null(name_at(ks, 0x200000000ULL)); /* 4 GiB past low_fn, and high_fn not yet */
	assert_string_equal(name_at(ks, 0xffffffffc00013ff), "in_mod");
	assert_null(name_at(ks, 0xffffffffc0001400));
	ksyms_free(ks);
	dir_remove(&d);
}

/*
 * The table does not depend on the file's order. A file by address (the
 * sort moves names within an address only), one with late entries (as
 * BPF programs come after the modules) and one in reverse (the sort gives
 * up its cheap way part-way and sorts the rest) resolve alike.
 */
#define N_ORDERED 300
static void test_any_order_resolves_alike(void **state)
{
	static const char *const alias[] = { "t _local_alias", "T _underscored", "T g_alias" };
	char *lines[N_ORDERED + 4], text[(N_ORDERED + 4) * 48];
	size_t n = 0;

	(void)state;
	for (size_t k = 0; k < 3; k++) {
		lines[n] = malloc(48);
		assert_non_null(lines[n]);
		snprintf(lines[n++], 48, "ffffffff81000000 %s\n", alias[k]);
	}
	for (int i = 1; i <= N_ORDERED; i++) {
		lines[n] = malloc(48);
		assert_non_null(lines[n]);
		snprintf(lines[n++], 48, "%016llx T f%03d\n", 0xffffffff81000000ULL + 0x40ULL * i, i);
	}
	lines[n] = malloc(48);
	assert_non_null(lines[n]);
	snprintf(lines[n++], 48, "%016llx T _etext\n", 0xffffffff81000000ULL + 0x40ULL * (N_ORDERED + 1));
	for (int order = 0; order < 3; order++) {
		struct fixture_dir d;
		struct ksyms *ks;
		size_t len = 0;

		for (size_t k = 0; k < n; k++) {
			/* 0: as made; 1: _etext, then the 20 lines before it; 2: reversed. */
			size_t at = k;

			if (order == 2)
				at = n - 1 - k;
			else if (order == 1 && k == n - 21)
				at = n - 1;
			else if (order == 1 && k > n - 21)
				at = k - 1;
			len += (size_t)snprintf(text + len, sizeof(text) - len, "%s", lines[at]);
		}
		ks = load(&d, text, NULL);
		assert_int_equal(ksyms_count(ks), N_ORDERED + 1);
		assert_string_equal(name_at(ks, 0xffffffff81000010), "g_alias");
		for (int i = 1; i <= N_ORDERED; i++) {
			char want[16];

			snprintf(want, sizeof(want), "f%03d", i);
			assert_string_equal(name_at(ks, 0xffffffff81000000ULL + 0x40ULL * i + 5), want);
		}
		assert_null(name_at(ks, 0xffffffff81000000ULL + 0x40ULL * (N_ORDERED + 1)));
		ksyms_free(ks);
		dir_remove(&d);
	}
	for (size_t k = 0; k < n; k++)
		free(lines[k]);
}

/*
 * Since Linux 6.2 a function's padding has its own symbol, "__pfx_" and
 * the function's name, at the address below it: the function's name is
 * kept as the end of the padding's, not as a copy. Both resolve to their
 * own names, modules included (whose names the pool holds too), and the
 * table is smaller by the names shared than one whose names do not end
 * alike.
 */
static void test_padding_names_share_their_bytes(void **state)
{
	static const char *const fmt =
	    "ffffffff81000000 T __pfx_%s\n"
	    "ffffffff81000010 T %s\n"
	    "ffffffff81000040 t __pfx_%s\n"
	    "ffffffff81000050 t %s\n"
	    "ffffffff81000080 T _etext\n"
	    "ffffffffc0000000 t __pfx_%s\t[mod_a]\n"
	    "ffffffffc0000010 t %s\t[mod_a]\n"
	    "ffffffffc0001000 t __pfx_%s\t[mod_b]\n"
	    "ffffffffc0001010 t %s\t[mod_b]\n";
	static const char *const modules = "mod_a 4096 0 - Live 0xffffffffc0000000\n"
					   "mod_b 4096 0 - Live 0xffffffffc0001000\n";
	/* The padding's names, then the functions': sharing, then the same lengths not sharing. */
	static const char *const names[2][8] = {
		{ "alpha", "alpha", "beta", "beta", "gamma", "gamma", "delta", "delta" },
		{ "alphz", "alpha", "betz", "beta", "gammz", "gamma", "deltz", "delta" },
	};
	size_t bytes[2];

	(void)state;
	for (int k = 0; k < 2; k++) {
		const char *const *v = names[k];
		struct fixture_dir d;
		struct ksyms *ks;
		struct ksym sym;
		char text[1024];

		snprintf(text, sizeof(text), fmt, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]);
		ks = load(&d, text, modules);
		assert_int_equal(ksyms_count(ks), 8);
		assert_string_equal(name_at(ks, 0xffffffff81000004), k ? "__pfx_alphz" : "__pfx_alpha");
		assert_string_equal(name_at(ks, 0xffffffff81000014), "alpha");
		assert_string_equal(name_at(ks, 0xffffffff81000044), k ? "__pfx_betz" : "__pfx_beta");
		assert_string_equal(name_at(ks, 0xffffffff81000054), "beta");
		assert_true(ksyms_lookup(ks, 0xffffffffc0000014, &sym, NULL));
		assert_string_equal(sym.name, "gamma");
		assert_string_equal(sym.module, "mod_a");
		assert_true(ksyms_lookup(ks, 0xffffffffc0001004, &sym, NULL));
		assert_string_equal(sym.name, k ? "__pfx_deltz" : "__pfx_delta");
		assert_string_equal(sym.module, "mod_b");
		assert_true(ksyms_lookup(ks, 0xffffffffc0001014, &sym, NULL));
		assert_string_equal(sym.name, "delta");
		assert_string_equal(sym.module, "mod_b");
		bytes[k] = ksyms_bytes(ks);
		ksyms_free(ks);
		dir_remove(&d);
	}
	/*
	 * What sharing saves: each function's name and its NUL, and the
	 * padding's entry (its address's low half, and 16 bits each of its
	 * length and its name's offset, at least), which is folded into its
	 * function's.
	 */
	assert_true(bytes[1] - bytes[0] >= sizeof("alpha") + sizeof("beta") + sizeof("gamma") +
						sizeof("delta") +
						4 * (sizeof(uint32_t) + 2 * sizeof(uint16_t)));
}

/*
 * Lengths are kept in 16 bits, the few of 64 KiB or more in a list of
 * their own: each side of the line, and several long ones in a row.
 */
static void test_long_symbols_keep_their_length(void **state)
{
	static const char text[] = "ffffffff81000000 T short_a\n"
				   "ffffffff81000010 T long_b\n"	 /* 0x20000 */
				   "ffffffff81020010 T exact_c\n" /* 0xffff: the list's first */
				   "ffffffff8103000f T just_d\n"	 /* 0xfffe: not in it */
				   "ffffffff8104000d T long_e\n"	 /* 0x100000 */
				   "ffffffff8114000d T _etext\n";
	struct fixture_dir d;
	struct ksyms *ks;
	uint64_t off = 0;
	struct ksym k;

	(void)state;
	ks = load(&d, text, NULL);
	assert_string_equal(name_at(ks, 0xffffffff8100000f), "short_a");
	assert_string_equal(name_at(ks, 0xffffffff8102000f), "long_b");
	assert_true(ksyms_lookup(ks, 0xffffffff8102000f, &k, &off));
	assert_int_equal(off, 0x1ffff);
	assert_string_equal(name_at(ks, 0xffffffff81020010), "exact_c");
	assert_string_equal(name_at(ks, 0xffffffff8103000e), "exact_c");
	assert_string_equal(name_at(ks, 0xffffffff8103000f), "just_d");
	assert_string_equal(name_at(ks, 0xffffffff8104000c), "just_d");
	assert_string_equal(name_at(ks, 0xffffffff8114000c), "long_e");
	assert_null(name_at(ks, 0xffffffff8114000d)); /* _etext ends it */
	ksyms_free(ks);
	dir_remove(&d);
}

/*
 * A name longer than any kernel writes (511 bytes, 55 for a module) is
 * not kallsyms: its line is skipped, and the others stand.
 */
static void test_names_longer_than_the_kernels_are_skipped(void **state)
{
	static char text[4096], name511[512], name512[513], module[300];
	struct fixture_dir d;
	struct ksyms *ks;
	struct ksym k;

	(void)state;
	memset(name511, 'a', sizeof(name511) - 1);
	memset(name512, 'b', sizeof(name512) - 1);
	memset(module, 'm', sizeof(module) - 1);
	snprintf(text, sizeof(text),
		 "ffffffff81000000 T %s\n"
		 "ffffffff81000100 T %s\n"
		 "ffffffff81000200 T after\n"
		 "ffffffff81000300 T _etext\n"
		 "ffffffffc0000000 t in_mod\t[%s]\n"
		 "ffffffffc0000100 t in_mod_b\t[mod_b]\n",
		 name511, name512, module);
	ks = load(&d, text, "mod_b 4096 0 - Live 0xffffffffc0000100\n");
	assert_string_equal(name_at(ks, 0xffffffff81000000), name511);
	/* The skipped one's bytes belong to the name below it. */
	assert_string_equal(name_at(ks, 0xffffffff81000180), name511);
	assert_string_equal(name_at(ks, 0xffffffff81000200), "after");
	assert_null(name_at(ks, 0xffffffffc0000010));
	assert_true(ksyms_lookup(ks, 0xffffffffc0000110, &k, NULL));
	assert_string_equal(k.name, "in_mod_b");
	assert_string_equal(k.module, "mod_b");
	assert_int_equal(ksyms_count(ks), 3);
	ksyms_free(ks);
	dir_remove(&d);
}

/*
 * A padding's symbol is folded into the function's entry only when it is
 * that function's: its name with "__pfx_", in its module, ending where it
 * starts, and at most 255 bytes long. Otherwise it stays a symbol of its
 * own. Either way each address resolves to the same name, the count is
 * of every text symbol, and a padding below the first symbol or last in
 * the file resolves too.
 */
static void test_padding_folds_only_onto_its_function(void **state)
{
	static const char text[] = "ffffffff80fffff0 T __pfx_first\n"
				   "ffffffff81000000 T first\n"
				   "ffffffff81000040 T __pfx_other\n" /* another function's name */
				   "ffffffff81000050 T notother\n"
				   "ffffffff81000080 T __pfx_gap\n"
				   "ffffffff81000088 d between\n" /* data between: ends the padding */
				   "ffffffff81000090 T gap\n"
				   "ffffffff81000100 T __pfx_long\n" /* 256 bytes */
				   "ffffffff81000200 T long\n"
				   "ffffffff81000300 T _etext\n"
				   "ffffffffc0000000 t __pfx_modfn\t[mod_a]\n"
				   "ffffffffc0000010 t modfn\t[mod_b]\n" /* another module */
				   "ffffffffc0000100 t __pfx_\t[mod_b]\n"
				   "ffffffffc0000110 t __pfx_tail\t[mod_b]\n";
	static const char modules[] = "mod_a 16 0 - Live 0xffffffffc0000000\n"
				      "mod_b 4096 0 - Live 0xffffffffc0000010\n";
	static const struct {
		uint64_t addr;
		const char *name, *module;
		uint64_t offset;
	} want[] = {
		{ 0xffffffff80fffff0, "__pfx_first", NULL, 0 },
		{ 0xffffffff80ffffff, "__pfx_first", NULL, 15 },
		{ 0xffffffff81000000, "first", NULL, 0 },
		{ 0xffffffff81000048, "__pfx_other", NULL, 8 },
		{ 0xffffffff81000050, "notother", NULL, 0 },
		{ 0xffffffff81000084, "__pfx_gap", NULL, 4 },
		{ 0xffffffff81000094, "gap", NULL, 4 },
		{ 0xffffffff810001ff, "__pfx_long", NULL, 255 },
		{ 0xffffffff81000200, "long", NULL, 0 },
		{ 0xffffffffc0000004, "__pfx_modfn", "mod_a", 4 },
		{ 0xffffffffc0000010, "modfn", "mod_b", 0 },
		{ 0xffffffffc0000104, "__pfx_", "mod_b", 4 },
		{ 0xffffffffc0000112, "__pfx_tail", "mod_b", 2 },
	};
	struct fixture_dir d;
	struct ksyms *ks = load(&d, text, modules);
	struct ksym k;
	uint64_t offset;

	(void)state;
	assert_int_equal(ksyms_count(ks), 12);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		assert_true(ksyms_lookup(ks, want[i].addr, &k, &offset));
		assert_string_equal(k.name, want[i].name);
		if (want[i].module)
			assert_string_equal(k.module, want[i].module);
		else
			assert_null(k.module);
		assert_true(offset == want[i].offset);
		assert_true(k.addr == want[i].addr - want[i].offset);
	}
	assert_null(name_at(ks, 0xffffffff80ffffef)); /* below the first padding */
	assert_null(name_at(ks, 0xffffffff81000088)); /* the data symbol */
	assert_null(name_at(ks, 0xffffffff81000300)); /* past _etext */
	ksyms_free(ks);
	dir_remove(&d);
}

/*
 * Addresses are kept as their low 32 bits, in runs that share the high
 * ones: a symbol that crosses a 4 GiB line, a padding just below one and
 * an address in a 4 GiB with no symbol of its own resolve as if the
 * addresses were whole.
 */
static void test_symbols_across_4gib_lines(void **state)
{
	struct fixture_dir d;
	struct ksyms *ks = load(&d,
				"0000000100000000 T first_half\n"
				"00000001fffffff0 T cross\n"
				"0000000200000010 T after\n"
				"0000000200000020 D after_data\n"
				"00000002fffffff8 T __pfx_f2\n"
				"0000000300000008 T f2\n"
				"0000000300000100 D f2_data\n"
				"0000000500000000 T far\n",
				NULL);
	struct ksym k;
	uint64_t offset;

	(void)state;
	assert_int_equal(ksyms_count(ks), 6);
	assert_string_equal(name_at(ks, 0x1ffffffefULL), "first_half");
	assert_true(ksyms_lookup(ks, 0x200000004ULL, &k, &offset));
	assert_string_equal(k.name, "cross");
	assert_true(k.addr == 0x1fffffff0ULL && offset == 0x14);
	assert_string_equal(name_at(ks, 0x200000010ULL), "after");
	assert_null(name_at(ks, 0x200000020ULL));
	assert_true(ksyms_lookup(ks, 0x2fffffffcULL, &k, &offset));
	assert_string_equal(k.name, "__pfx_f2");
	assert_true(k.addr == 0x2fffffff8ULL && offset == 4);
	assert_true(ksyms_lookup(ks, 0x300000000ULL, &k, &offset));
	assert_string_equal(k.name, "__pfx_f2");
	assert_true(offset == 8);
	assert_string_equal(name_at(ks, 0x300000008ULL), "f2");
	assert_null(name_at(ks, 0x400000000ULL)); /* a 4 GiB with no symbol, after data */
	assert_string_equal(name_at(ks, 0x500000fffULL), "far");
	assert_null(name_at(ks, 0x500001000ULL));
	assert_null(name_at(ks, 0xffffffffULL));
	ksyms_free(ks);
	dir_remove(&d);
}

static void test_real_kallsyms_resolves_a_known_function(void **state)
{
	struct ksyms *ks = NULL;
	unsigned long long addr = 0;
	char line[512], type, name[256];
	FILE *f;

	(void)state;
	/* Take a real function's address from the file, then ask for an address inside it. */
	f = fopen("/proc/kallsyms", "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) == 3 &&
		    !strcmp(name, "schedule"))
			break;
	fclose(f);
	assert_int_equal(ksyms_load("/proc/kallsyms", &ks), 0);
	if (ksyms_hidden(ks)) {
		assert_int_equal(addr, 0);
	} else {
		assert_string_equal(name_at(ks, addr + 1), "schedule");
		assert_true(ksyms_count(ks) > 1000);
	}
	ksyms_free(ks);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_resolves_nearest_symbol_below),
	    cmocka_unit_test(test_alias_prefers_global_without_underscore),
	    cmocka_unit_test(test_before_first_and_past_text_unresolved),
	    cmocka_unit_test(test_module_symbols_and_bounds),
	    cmocka_unit_test(test_without_modules_file_next_symbol_bounds),
	    cmocka_unit_test(test_counts_text_symbols_once_per_address),
	    cmocka_unit_test(test_all_zero_addresses_are_hidden),
	    cmocka_unit_test(test_malformed_lines_skipped_and_missing_file_errors),
	    cmocka_unit_test(test_empty_file_is_an_error),
	    cmocka_unit_test(test_interleaved_modules_keep_their_names),
	    cmocka_unit_test(test_far_addresses_unresolved),
	    cmocka_unit_test(test_any_order_resolves_alike),
	    cmocka_unit_test(test_padding_names_share_their_bytes),
	    cmocka_unit_test(test_padding_folds_only_onto_its_function),
	    cmocka_unit_test(test_symbols_across_4gib_lines),
	    cmocka_unit_test(test_long_symbols_keep_their_length),
	    cmocka_unit_test(test_names_longer_than_the_kernels_are_skipped),
	    cmocka_unit_test(test_real_kallsyms_resolves_a_known_function),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
