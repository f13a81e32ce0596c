/*
 * demangle tests: fixed vectors. Every expected string is what
 * `c++filt -i` (binutils 2.40) prints for the input; the Rust v0 inputs
 * were emitted by rustc 1.95 with -C symbol-mangling-version=v0, the
 * legacy ones by rustc's default mangling. A name that is not mangled, or
 * is malformed, comes back NULL (the symbolizer then shows it raw).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "symbolizer/demangle.h"

struct vector {
	const char *mangled, *demangled;
};

static void check(const struct vector *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char *got = demangle_name(v[i].mangled);

		if (!got)
			fail_msg("%s: not demangled", v[i].mangled);
		if (strcmp(got, v[i].demangled))
			fail_msg("%s:\n  got  %s\n  want %s", v[i].mangled, got, v[i].demangled);
		free(got);
	}
}

static void test_cpp_matches_cxxfilt(void **state)
{
	static const struct vector v[] = {
	    {"_ZN3foo3barIiEEvT_", "void foo::bar<int>(int)"},
	    {"_ZNSs4sizeEv", "std::string::size()"},
	    {"_ZNKSt6vectorIiSaIiEE4sizeEv",
	     "std::vector<int, std::allocator<int> >::size() const"},
	    {"_ZN3foo3barE", "foo::bar"},
	    {"_Z3fooPFviEz", "foo(void (*)(int), ...)"},
	    {"_ZN12_GLOBAL__N_14workEv.cold", "(anonymous namespace)::work() [clone .cold]"},
	    {"_ZZ4mainENKUlvE_clEv", "main::{lambda()#1}::operator()() const"},
	};

	(void)state;
	check(v, sizeof(v) / sizeof(v[0]));
}

static void test_rust_legacy_drops_the_hash_and_unescapes(void **state)
{
	static const struct vector v[] = {
	    {"_ZN1v4main17h9754cc73d0c13a82E", "v::main"},
	    {"_ZN1v15Circle$LT$T$GT$4show17hb142a89a733e69e9E", "v::Circle<T>::show"},
	    {"_ZN3std2rt10lang_start28_$u7b$$u7b$closure$u7d$$u7d$17ha79c75e163657c33E",
	     "std::rt::lang_start::{{closure}}"},
	    {"_ZN4core3ptr85drop_in_place$LT$std..rt..lang_start$LT$$LP$$RP$$GT$..$u7b$$u7b$"
	     "closure$u7d$$u7d$$GT$17h0123456789abcdefE",
	     "core::ptr::drop_in_place<std::rt::lang_start<()>::{{closure}}>"},
	    {"_ZN71_$LT$Test$u20$$u2b$$u20$$u27$static$u20$as$u20$foo..Bar$LT$Test$GT$$GT$"
	     "3bar17h930b740aa94f1d3aE",
	     "<Test + 'static as foo::Bar<Test>>::bar"},
	    {"_ZN3foo3bar17h05af221e174051e9E.llvm.123", "foo::bar"},
	};

	(void)state;
	check(v, sizeof(v) / sizeof(v[0]));
}

static void test_rust_v0(void **state)
{
	static const struct vector v[] = {
	    {"_RNvCs4Jz2Mtfmu5I_1v4main", "v::main"},
	    /* const generic */
	    {"_RINvCs4Jz2Mtfmu5I_1v3arrKj3_EB2_", "v::arr::<3>"},
	    /* inherent and trait impls, back-references */
	    {"_RNvMs_Cs4Jz2Mtfmu5I_1vINtB4_6CircleReE4showB4_", "<v::Circle<&str>>::show"},
	    {"_RNvXCs4Jz2Mtfmu5I_1vINtB2_6CircledENtB2_5Shape4area",
	     "<v::Circle<f64> as v::Shape>::area"},
	    {"_RNvXs1G_NtCsgEmfK2I1SDS_4core3fmtTlcENtB6_5Debug3fmtCs4Jz2Mtfmu5I_1v",
	     "<(i32, char) as core::fmt::Debug>::fmt"},
	    /* closures, shims, trait definitions */
	    {"_RNCINvNtCsjrHSEGnQ3l9_3std2rt10lang_startuE0Cs4Jz2Mtfmu5I_1v",
	     "std::rt::lang_start::<()>::{closure#0}"},
	    {"_RNSNvYNCINvNtCsjrHSEGnQ3l9_3std2rt10lang_startuE0INtNtNtCsgEmfK2I1SDS_4core3ops8"
	     "function6FnOnceuE9call_once6vtableCs4Jz2Mtfmu5I_1v",
	     "<std::rt::lang_start<()>::{closure#0} as "
	     "core::ops::function::FnOnce<()>>::call_once::"
	     "{shim:vtable#0}"},
	    /* dyn with a binder and an associated type, fn pointers, tuples, arrays, pointers */
	    {"_RINvCs4Jz2Mtfmu5I_1v3genDG_INtNtNtCsgEmfK2I1SDS_4core3ops8function2FnTRL0_"
	     "aEEp6Output"
	     "RL0_aEL_EB2_",
	     "v::gen::<dyn for<'a> core::ops::function::Fn<(&'a i8,), Output = &'a i8>>"},
	    {"_RINvCs4Jz2Mtfmu5I_1v3genDNtNtNtNtCsgEmfK2I1SDS_4core4iter6traits8iterator8Iterator"
	     "p4ItemTyfENtNtBv_6marker4SendEL_EB2_",
	     "v::gen::<dyn core::iter::traits::iterator::Iterator<Item = (u64, f32)> + "
	     "core::marker::Send>"},
	    {"_RINvCs4Jz2Mtfmu5I_1v3genFG_RL0_hRL0_eERL0_hEB2_",
	     "v::gen::<for<'a> fn(&'a u8, &'a str) -> &'a u8>"},
	    {"_RINvCs4Jz2Mtfmu5I_1v3genFUKClEuEB2_", "v::gen::<unsafe extern \"C\" fn(i32)>"},
	    {"_RINvCs4Jz2Mtfmu5I_1v3genFK6systemvEuEB2_", "v::gen::<extern \"system\" fn(...)>"},
	    {"_RINvCs4Jz2Mtfmu5I_1v3genThEEB2_", "v::gen::<(u8,)>"},
	    {"_RINvCs4Jz2Mtfmu5I_1v3genATstEj2_EB2_", "v::gen::<[(i16, u16); 2]>"},
	    {"_RINvCs4Jz2Mtfmu5I_1v3genOSQeEB2_", "v::gen::<*mut [&mut str]>"},
	    /* char, bool and negative constants */
	    {"_RINvCs4Jz2Mtfmu5I_1v5charsKce4_Kb1_Kln5_EB2_", "v::chars::<'\\u{e4}', true, -5>"},
	    {"_RINvCs4Jz2Mtfmu5I_1v5charsKc78_Kb0_Kl7_EB2_", "v::chars::<'x', false, 7>"},
	    {"_RINvCs4Jz2Mtfmu5I_1v5charsKca_Kb1_Kl0_EB2_", "v::chars::<'\\n', true, 0>"},
	    /* Punycode identifiers */
	    {"_RNvNtCs4Jz2Mtfmu5I_1vu10nicode_2yau9gre_6ka8i", "v::ünicode::größe"},
	    /* an LLVM suffix and the instantiating crate are not printed */
	    {"_RINvMs6_NtCsgvbsrvnw3yD_9hashbrown3rawINtB6_8RawTableTlReEE14reserve_"
	     "rehashNCINvNtB8_3"
	     "map11make_hasherlBR_NtNtNtCsjrHSEGnQ3l9_"
	     "3std4hash6random11RandomStateE0ECs4Jz2Mtfmu5I_"
	     "1v.llvm.15891011684138006957",
	     "<hashbrown::raw::RawTable<(i32, "
	     "&str)>>::reserve_rehash::<hashbrown::map::make_hasher<"
	     "i32, &str, std::hash::random::RandomState>::{closure#0}>"},
	};

	(void)state;
	check(v, sizeof(v) / sizeof(v[0]));
}

static void test_plain_and_malformed_names_are_left_alone(void **state)
{
	static const char *const names[] = {
	    "main",
	    "fixture_alpha",
	    "_start",
	    "__libc_start_main",
	    "i",
	    "_R",
	    "_RNv",
	    "_RC",
	    /* a back-reference to itself, and one forward */
	    "_RNvB0_4main",
	    "_RNvB9_4main",
	    /* a length past the end */
	    "_RNvCs1_1v99main",
	    "_ZN3foo3bar17h05af221e174051e9",
	};
	char deep[4096];
	size_t n = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (demangle_name(names[i]))
			fail_msg("%s was demangled", names[i]);
	/* Deep nesting is refused, not followed down the stack. */
	n += (size_t)snprintf(deep, sizeof(deep), "_RINvC1v3gen");
	for (int i = 0; i < 1000; i++)
		deep[n++] = 'R';
	strcpy(deep + n, "hEB2_");
	assert_null(demangle_name(deep));
}

static void test_cache_returns_the_same_answers(void **state)
{
	struct demangle_cache *cache = demangle_cache_new(2);
	const char *a = "_RNvCs4Jz2Mtfmu5I_1v4main";

	(void)state;
	assert_non_null(cache);
	assert_string_equal(demangle_cache_get(cache, a), "v::main");
	assert_string_equal(demangle_cache_get(cache, a), "v::main");
	/* Not mangled: the very same string back. */
	assert_ptr_equal(demangle_cache_get(cache, "main"), "main");
	/* Past its bound it starts over and still answers. */
	assert_string_equal(demangle_cache_get(cache, "_ZN3foo3barE"), "foo::bar");
	assert_string_equal(demangle_cache_get(cache, "_ZNSs4sizeEv"), "std::string::size()");
	assert_string_equal(demangle_cache_get(cache, a), "v::main");
	assert_string_equal(demangle_cache_get(cache, "_RNv"), "_RNv");
	demangle_cache_free(cache);
}

/* The byte bound counts the slots and both forms of each name kept: past
 * it the cache starts over, and never holds more. */
static void test_cache_is_bounded_in_bytes(void **state)
{
	struct demangle_cache *cache = demangle_cache_new(1024);
	size_t empty, bound;
	char name[64];

	(void)state;
	assert_non_null(cache);
	empty = demangle_cache_bytes(cache);
	assert_true(empty < 2048 * sizeof(void *)); /* the slots grow with the names */
	assert_string_equal(demangle_cache_get(cache, "_ZN3foo3barE"), "foo::bar");
	/* "_ZN3foo3barE" and "foo::bar", with their NULs */
	assert_int_equal(demangle_cache_bytes(cache), empty + 13 + 9);
	bound = empty + 10 * 22;
	demangle_cache_set_max_bytes(cache, bound);
	for (int i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "_ZN3foo3b%02dE", i);
		assert_non_null(demangle_cache_get(cache, name));
		assert_true(demangle_cache_bytes(cache) <= bound);
	}
	/* It still answers right after starting over. */
	assert_string_equal(demangle_cache_get(cache, "_ZN3foo3b99E"), "foo::b99");
	assert_true(demangle_cache_bytes(cache) > empty);
	demangle_cache_free(cache);
}

/*
 * The slots grow with the names kept: a cache of up to 16,384 names that
 * holds a few has a few hundred slots, and after a thousand it has made
 * room for them all without starting over, each still answered.
 */
static void test_slots_grow_with_the_names(void **state)
{
	struct demangle_cache *cache = demangle_cache_new(16384);
	static const char *kept[1000];
	size_t empty, names = 0;
	char name[64], want[64];

	(void)state;
	assert_non_null(cache);
	empty = demangle_cache_bytes(cache);
	assert_true(empty < 16384 * sizeof(void *));
	for (int i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "_ZN3foo4b%03dE", i);
		snprintf(want, sizeof(want), "foo::b%03d", i);
		kept[i] = demangle_cache_get(cache, name);
		assert_string_equal(kept[i], want);
		names += strlen(name) + 1 + strlen(want) + 1;
	}
	/* Nothing dropped: every name's bytes are counted. */
	assert_true(demangle_cache_bytes(cache) >= empty + names);
	/* 2048 slots hold 1000 names at most half full; 32,768 would be the bound's. */
	assert_true(demangle_cache_bytes(cache) <= empty + names + 2048 * 3 * sizeof(void *));
	/* Found again where they were kept, not demangled anew. */
	for (int i = 999; i >= 0; i--) {
		snprintf(name, sizeof(name), "_ZN3foo4b%03dE", i);
		assert_ptr_equal(demangle_cache_get(cache, name), kept[i]);
	}
	demangle_cache_free(cache);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cpp_matches_cxxfilt),
	    cmocka_unit_test(test_rust_legacy_drops_the_hash_and_unescapes),
	    cmocka_unit_test(test_rust_v0),
	    cmocka_unit_test(test_plain_and_malformed_names_are_left_alone),
	    cmocka_unit_test(test_cache_returns_the_same_answers),
	    cmocka_unit_test(test_cache_is_bounded_in_bytes),
	    cmocka_unit_test(test_slots_grow_with_the_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
