/*
 * perfscript: `perf script` text collapsed as stackcollapse-perf.pl does,
 * checked on a fixed sample of perf's output (the shapes perf 6.x prints:
 * with and without [cpu] and tid, kernel and JIT frames, C++ names,
 * unknown symbols) against the folded text a user would get; and the
 * check that tells perf script from folded stacks.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "render/folded.h"
#include "render/perfscript.h"

static const char sample_text[] =
	"# ========\n"
	"# captured on    : Sun Nov 29 11:08:00 2026\n"
	"# ========\n"
	"#\n"
	"split7030-leaff 30161  2266.769195:    2004008 cpu-clock:ppp: \n"
	"\t            1184 burn_seventy+0x24 (/work/build/examples/split7030-leaffp)\n"
	"\t            120a run_split+0x2a (/work/build/examples/split7030-leaffp)\n"
	"\t            12ea main+0xaa (/work/build/examples/split7030-leaffp)\n"
	"\t           2724a __libc_start_call_main+0x7a (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
	"\n"
	"split7030-leaff 30161  2266.783203:    2004008 cpu-clock:ppp: \n"
	"\t            1184 burn_seventy+0x30 (/work/build/examples/split7030-leaffp)\n"
	"\t            120a run_split+0x2a (/work/build/examples/split7030-leaffp)\n"
	"\t            12ea main+0xaa (/work/build/examples/split7030-leaffp)\n"
	"\t           2724a __libc_start_call_main+0x7a (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
	"\n"
	"split7030-leaff 30161  2266.796759:    2004008 cpu-clock:ppp: \n"
	"\tffffffff821f5b65 irqentry_exit_to_user_mode+0x105 ([kernel.kallsyms])\n"
	"\tffffffff81000e06 asm_sysvec_apic_timer_interrupt+0x16 ([kernel.kallsyms])\n"
	"\t            1184 burn_thirty+0x24 (/work/build/examples/split7030-leaffp)\n"
	"\t            12ea main+0xaa (/work/build/examples/split7030-leaffp)\n"
	"\n"
	/* a comm with a space, pid/tid, a CPU column, C++ and unknown frames */
	"Web Content  4242/4250 [001]  2267.000001:     250000 cycles:u: \n"
	"\t    7f00deadbeef std::vector<int, std::allocator<int> >::push_back(int const&)+0x1f "
	"(/usr/lib/libxul.so)\n"
	"\t    7f00deadbe00 operator()(int) const (/usr/lib/libxul.so)\n"
	"\t    7f00deadb000 [unknown] (/usr/lib/libxul.so)\n"
	"\t            dead [unknown] ([unknown])\n"
	"\tffffffff81000000 [unknown] ([unknown])\n"
	"\n"
	/* a JIT frame from a perf map, a kernel module frame */
	"node 777/777 [000] 2267.5: 1 cpu-clock: \n"
	"\tffffffffc0a01234 nf_hook_slow+0x44 (/lib/modules/6.18/kernel/net/nf.ko)\n"
	"\t    3e8a0c0 LazyCompile:*fib /app/fib.js:3+0x40 (/tmp/perf-777.map)\n"
	"\t    55550000 main+0x10 (/usr/bin/node)\n"
	"\n"
	/* perf script without -g: a header and no frames */
	"sleep 99 [002] 2268.1: 1 cpu-clock: ffffffff81234567 schedule+0x10 ([kernel.kallsyms])\n"
	"\n"
	/* junk where a frame should be */
	"split7030-leaff 30161  2266.900000:    2004008 cpu-clock:ppp: \n"
	"\tnot a frame line\n"
	"\t            1184 burn_thirty+0x24 (/work/build/examples/split7030-leaffp)\n";

static const char want_folded[] =
	"Web Content;[unknown]_[k];[unknown];[libxul.so+0x7f00deadb000];operator()(int) const;"
	"std::vector<int, std::allocator<int> >::push_back(int const&) 1\n"
	"node;main;LazyCompile:*fib /app/fib.js:3_[j];nf_hook_slow_[k] 1\n"
	"sleep 1\n"
	"split7030-leaff;__libc_start_call_main;main;run_split;burn_seventy 2\n"
	"split7030-leaff;burn_thirty 1\n"
	"split7030-leaff;main;burn_thirty;asm_sysvec_apic_timer_interrupt_[k];"
	"irqentry_exit_to_user_mode_[k] 1\n";

static char *folded_of(const struct profile *p)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	assert_non_null(f);
	assert_int_equal(folded_write(p, f), 0);
	assert_int_equal(fclose(f), 0);
	return text;
}

static void test_collapses_like_stackcollapse_perf(void **state)
{
	struct profile *p = profile_new();
	struct perfscript_read_stats st = { 0 };
	FILE *in = fmemopen((void *)sample_text, strlen(sample_text), "r");
	char *text;

	(void)state;
	assert_int_equal(perfscript_read(p, in, &st), 0);
	fclose(in);
	text = folded_of(p);
	assert_string_equal(text, want_folded);
	assert_int_equal(st.samples, 7);
	assert_int_equal(profile_total(p), 7);
	assert_int_equal(st.skipped, 1);
	assert_int_equal(st.first_bad_line, 38); /* "\tnot a frame line" */
	free(text);
	profile_free(p);
}

/* The same processes from folded text and from perf script are one node:
 * both readers make the first frame a user frame. */
static void test_merges_with_folded_input(void **state)
{
	static const char folded[] = "split7030-leaff;burn_thirty 4\n";
	struct profile *p = profile_new();
	FILE *in = fmemopen((void *)sample_text, strlen(sample_text), "r");
	FILE *f = fmemopen((void *)folded, strlen(folded), "r");
	char *text;

	(void)state;
	assert_int_equal(perfscript_read(p, in, NULL), 0);
	assert_int_equal(folded_read(p, f, NULL), 0);
	fclose(in);
	fclose(f);
	text = folded_of(p);
	assert_non_null(strstr(text, "\nsplit7030-leaff;burn_thirty 5\n"));
	assert_int_equal(profile_total(p), 11);
	free(text);
	profile_free(p);
}

static void test_windows_line_ends_and_a_missing_last_newline(void **state)
{
	static const char crlf[] = "app 1 1.5: 1 cpu-clock: \r\n"
				   "\t 10 leaf+0x1 (/bin/app)\r\n"
				   "\t 20 main (/bin/app)\r\n"
				   "\r\n"
				   "app 1 1.6: 1 cpu-clock: \n"
				   "\t 10 leaf+0x1 (/bin/app)";
	struct profile *p = profile_new();
	FILE *in = fmemopen((void *)crlf, strlen(crlf), "r");
	char *text;

	(void)state;
	assert_int_equal(perfscript_read(p, in, NULL), 0);
	fclose(in);
	text = folded_of(p);
	assert_string_equal(text, "app;leaf 1\napp;main;leaf 1\n");
	free(text);
	profile_free(p);
}

static void test_detects_perf_script_and_not_folded(void **state)
{
	static const char folded[] = "app;main;work 70\napp;main;rest 30\n";
	static const char flamegraph[] = "java;Lfoo;::bar_[j] 12\n";
	static const char stack_only[] = "# header\n\n\t ffffffff81000e06 f ([kernel.kallsyms])\n";
	static const char header_only[] = "sleep 99 [002] 2268.123456: 1 cpu-clock: \n";

	(void)state;
	assert_true(perfscript_detect(sample_text, strlen(sample_text)));
	assert_true(perfscript_detect(stack_only, strlen(stack_only)));
	assert_true(perfscript_detect(header_only, strlen(header_only)));
	assert_false(perfscript_detect(folded, strlen(folded)));
	assert_false(perfscript_detect(flamegraph, strlen(flamegraph)));
	assert_false(perfscript_detect("", 0));
	/* a head cut in the middle of a line still decides */
	assert_true(perfscript_detect(sample_text, 200));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_collapses_like_stackcollapse_perf),
		cmocka_unit_test(test_merges_with_folded_input),
		cmocka_unit_test(test_windows_line_ends_and_a_missing_last_newline),
		cmocka_unit_test(test_detects_perf_script_and_not_folded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
