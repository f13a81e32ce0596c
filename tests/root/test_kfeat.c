/*
 * kfeat: the table of kernel features is complete, its probes answer as
 * root (never "unknown"), what they find on this kernel agrees with its
 * release, and the one message for a missing feature names the feature,
 * the release and what is done without it. (What each answer changes is
 * tested where it is used: test_sampler, test_procmaps; and on Debian's
 * 6.1 by tests/e2e/68_kernel_features.sh inside the guest.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <cmocka.h>

#include "bpf/kfeat.h"

/* major * 1000 + minor of a "6.11" or of uname's "6.1.0-57-amd64". */
static int release_number(const char *release)
{
	int major = 0, minor = 0;

	sscanf(release, "%d.%d", &major, &minor);
	return major * 1000 + minor;
}

static void test_every_row_is_complete_and_unique(void **state)
{
	(void)state;
	for (int id = 0; id < KFEAT_NR; id++) {
		const struct kfeat_desc *d = kfeat_desc(id);

		assert_non_null(d->name);
		assert_non_null(d->what);
		assert_non_null(d->without);
		assert_true(release_number(d->kernel) > 5008); /* above the core's 5.8 */
		assert_true(strspn(d->name, "abcdefghijklmnopqrstuvwxyz0123456789_") ==
			    strlen(d->name));
		for (int other = 0; other < id; other++)
			assert_string_not_equal(kfeat_desc(other)->name, d->name);
	}
}

static void test_probes_agree_with_this_kernel(void **state)
{
	struct kfeat kf;
	struct utsname uts;

	(void)state;
	assert_int_equal(uname(&uts), 0);
	kfeat_probe(&kf);
	for (int id = 0; id < KFEAT_NR; id++) {
		const struct kfeat_desc *d = kfeat_desc(id);
		enum kfeat_state want = release_number(uts.release) >= release_number(d->kernel)
						? KFEAT_PRESENT
						: KFEAT_ABSENT;

		print_message("%s (Linux %s) on %s: %d\n", d->name, d->kernel, uts.release,
			      kf.state[id]);
		assert_int_equal(kfeat_state(&kf, id), want);
	}
	assert_int_equal(kfeat_state(NULL, KFEAT_PROCMAP_QUERY), KFEAT_UNKNOWN);
}

static void test_missing_message_says_what_and_since_when(void **state)
{
	char line[512];

	(void)state;
	for (int id = 0; id < KFEAT_NR; id++) {
		const struct kfeat_desc *d = kfeat_desc(id);
		char since[64];

		kfeat_missing_message(id, line, sizeof(line));
		snprintf(since, sizeof(since), "(%s, Linux %s and later)", d->name, d->kernel);
		assert_non_null(strstr(line, "lacks"));
		assert_non_null(strstr(line, since));
		assert_non_null(strstr(line, d->without));
		assert_null(strchr(line, '\n'));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_row_is_complete_and_unique),
		cmocka_unit_test(test_probes_agree_with_this_kernel),
		cmocka_unit_test(test_missing_message_says_what_and_since_when),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
