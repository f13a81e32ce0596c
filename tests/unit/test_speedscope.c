/*
 * speedscope: files speedscope opens. Python's json module parses what we
 * write and a checker applies the rules of speedscope's published schema
 * (file-format-schema.json) for a file of sampled profiles: $schema,
 * shared.frames with a name each, profiles with type, name, unit,
 * startValue, endValue, samples and weights; as many weights as samples;
 * every frame index valid. Then the numbers: root-first stacks, integer
 * weights that add up to the profile's total, frames shared.
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

#include "render/speedscope.h"

/* Reads the file on argv[1]; prints "frames samples weight_sum", then each
 * sample as "weight name;name;..." (root first), or raises. */
static const char checker[] =
	"import json, sys\n"
	"raw = open(sys.argv[1], 'rb').read()\n"
	"doc = json.loads(raw.decode('utf-8'))  # strict: invalid UTF-8 raises\n"
	"assert doc['$schema'] == 'https://www.speedscope.app/file-format-schema.json'\n"
	"frames = doc['shared']['frames']\n"
	"assert isinstance(frames, list)\n"
	"for f in frames:\n"
	"    assert isinstance(f['name'], str)\n"
	"    assert set(f) <= {'name', 'file', 'line', 'col'}\n"
	"units = {'none','nanoseconds','microseconds','milliseconds','seconds','bytes'}\n"
	"assert len(doc['profiles']) >= 1\n"
	"if 'activeProfileIndex' in doc:\n"
	"    assert 0 <= doc['activeProfileIndex'] < len(doc['profiles'])\n"
	"out = []\n"
	"for p in doc['profiles']:\n"
	"    assert p['type'] == 'sampled'\n"
	"    assert isinstance(p['name'], str) and p['unit'] in units\n"
	"    assert isinstance(p['startValue'], (int, float))\n"
	"    assert isinstance(p['endValue'], (int, float))\n"
	"    assert len(p['samples']) == len(p['weights'])\n"
	"    for s, w in zip(p['samples'], p['weights']):\n"
	"        assert type(w) is int and w > 0\n"
	"        assert all(type(i) is int and 0 <= i < len(frames) for i in s)\n"
	"        out.append('%d %s' % (w, ';'.join(frames[i]['name'] for i in s)))\n"
	"    assert p['endValue'] - p['startValue'] == sum(p['weights'])\n"
	"print(len(frames), len(out), sum(p['weights']))\n"
	"print('\\n'.join(out))\n";

/* Writes p, runs the checker; returns its output (caller frees) or fails. */
static char *check(const struct profile *p, const struct speedscope_options *o)
{
	char dir[] = "/tmp/test_speedscope.XXXXXX", path[64], script[64], cmd[256];
	char *text = malloc(65536);
	size_t len;
	FILE *f, *pipe;
	int status;

	assert_non_null(text);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/p.json", dir);
	snprintf(script, sizeof(script), "%s/check.py", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(speedscope_write(p, f, o), 0);
	assert_int_equal(fclose(f), 0);
	f = fopen(script, "w");
	assert_non_null(f);
	fputs(checker, f);
	assert_int_equal(fclose(f), 0);
	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 %s %s 2>&1", script, path);
	pipe = popen(cmd, "r");
	assert_non_null(pipe);
	len = fread(text, 1, 65535, pipe);
	text[len] = '\0';
	status = pclose(pipe);
	if (status)
		fail_msg("the speedscope file breaks the schema rules:\n%s", text);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	return text;
}

static void add(struct profile *p, const char *const *names, size_t n, uint64_t count)
{
	struct frame f[16];

	for (size_t i = 0; i < n; i++)
		f[i] = (struct frame){ names[i], i ? FRAME_USER : FRAME_PROCESS };
	assert_int_equal(profile_add(p, f, n, count), 0);
}

static void test_stacks_are_root_first_with_integer_weights(void **state)
{
	static const char *const seventy[] = { "split7030", "main", "run_split", "burn_seventy" };
	static const char *const thirty[] = { "split7030", "main", "run_split", "burn_thirty" };
	static const char *const in_main[] = { "split7030", "main" };
	struct profile *p = profile_new();
	char *out;

	(void)state;
	add(p, seventy, 4, 700);
	add(p, thirty, 4, 300);
	add(p, in_main, 2, 2);
	out = check(p, NULL);
	/* 5 shared frames, 3 stacks, 1002 samples */
	assert_non_null(strstr(out, "5 3 1002\n"));
	assert_non_null(strstr(out, "\n700 split7030;main;run_split;burn_seventy\n"));
	assert_non_null(strstr(out, "\n300 split7030;main;run_split;burn_thirty\n"));
	assert_non_null(strstr(out, "\n2 split7030;main\n"));
	free(out);
	profile_free(p);
}

/* A profile of time in microseconds: weights in nanoseconds, and the unit says so. */
static void test_time_profiles_are_in_nanoseconds(void **state)
{
	static const char *const waits[] = { "app", "main", "[off-cpu: sleep]" };
	struct speedscope_options o = { .unit_ns = 1000 };
	struct profile *p = profile_new();
	char *out, *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	(void)state;
	add(p, waits, 3, 2040000);
	out = check(p, &o);
	assert_non_null(strstr(out, "3 1 2040000000\n"));
	assert_non_null(strstr(out, "\n2040000000 app;main;[off-cpu: sleep]\n"));
	assert_non_null(f);
	assert_int_equal(speedscope_write(p, f, &o), 0);
	assert_int_equal(fclose(f), 0);
	assert_non_null(strstr(text, "\"unit\":\"nanoseconds\""));
	free(text);
	free(out);
	profile_free(p);
}

static void test_hostile_names_stay_valid_json(void **state)
{
	static const char *const quote[] = { "app", "a\"b\\c", "tab\there" };
	static const char *const ctl[] = { "app", "ctl\001\037\177x" };
	static const char *const utf8[] = { "app", "bad\xff\xfeutf8", "caf\xc3\xa9" };
	static const char *const cut[] = { "app", "cut\xe2\x82" };
	struct profile *p = profile_new();
	struct speedscope_options o = { .name = "host \"web01\"" };
	char *out;

	(void)state;
	add(p, quote, 3, 1);
	add(p, ctl, 2, 1);
	add(p, utf8, 3, 1);
	add(p, cut, 2, 1);
	out = check(p, &o);
	assert_non_null(strstr(out, "a\"b\\c;tab\there"));
	assert_non_null(strstr(out, "ctl\001\037\177x"));
	assert_non_null(strstr(out, "bad\xef\xbf\xbd\xef\xbf\xbdutf8;caf\xc3\xa9"));
	assert_non_null(strstr(out, "cut\xef\xbf\xbd\xef\xbf\xbd\n"));
	free(out);
	profile_free(p);
}

static void test_a_kernel_and_a_user_function_of_one_name_are_two_frames(void **state)
{
	struct profile *p = profile_new();
	struct frame user[] = { { "app", FRAME_PROCESS }, { "write", FRAME_USER } };
	struct frame kernel[] = { { "app", FRAME_PROCESS }, { "write", FRAME_USER },
				  { "write", FRAME_KERNEL } };
	char *text = NULL, *out;
	size_t size;
	FILE *f = open_memstream(&text, &size);

	(void)state;
	assert_int_equal(profile_add(p, user, 2, 3), 0);
	assert_int_equal(profile_add(p, kernel, 3, 4), 0);
	out = check(p, NULL);
	assert_non_null(strstr(out, "3 2 7\n"));
	free(out);
	assert_int_equal(speedscope_write(p, f, NULL), 0);
	fclose(f);
	assert_non_null(strstr(text, "{\"name\":\"write\",\"file\":\"[kernel.kallsyms]\"}"));
	free(text);
	profile_free(p);
}

static void test_an_empty_profile_is_a_valid_file(void **state)
{
	struct profile *p = profile_new();
	char *out;

	(void)state;
	out = check(p, NULL);
	assert_non_null(strstr(out, "0 0 0\n"));
	free(out);
	profile_free(p);
}

static void test_a_full_disk_is_reported(void **state)
{
	static const char *const s[] = { "app", "main" };
	struct profile *p = profile_new();
	FILE *full = fopen("/dev/full", "w");

	(void)state;
	add(p, s, 2, 1);
	assert_non_null(full);
	assert_int_equal(speedscope_write(p, full, NULL), -ENOSPC);
	fclose(full);
	profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stacks_are_root_first_with_integer_weights),
		cmocka_unit_test(test_time_profiles_are_in_nanoseconds),
		cmocka_unit_test(test_hostile_names_stay_valid_json),
		cmocka_unit_test(test_a_kernel_and_a_user_function_of_one_name_are_two_frames),
		cmocka_unit_test(test_an_empty_profile_is_a_valid_file),
		cmocka_unit_test(test_a_full_disk_is_reported),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
