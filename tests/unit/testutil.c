/*
 * testutil.c: the runner every check binary's main() calls, and fixture
 * loading. Failures are test failures (ck_assert), never silent.
 */
#include <stdio.h>
#include <stdlib.h>

#include <check.h>

#include "bug.h"
#include "testutil.h"
#include "xmalloc.h"

/* Whole fixture file, NUL-terminated; *len without the NUL. */
char *
read_fixture(const char *name, size_t *len)
{
	char	 path[1024];
	FILE	*f;
	char	*data;
	long	 n;

	snprintf(path, sizeof path, "%s/%s", TEST_DATA_DIR, name);
	f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	ck_assert_int_ge(n, 0);
	rewind(f);
	data = xmalloc((size_t)n + 1);
	ck_assert_uint_eq(fread(data, 1, (size_t)n, f), (size_t)n);
	data[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return (data);
}

/*
 * Run the suite; success only if every test passed and one at least ran.
 * A broken invariant (HK_BUG) aborts the test that broke it, and the
 * structure walkers (registry_check, cache_check, peerq_check) run after
 * every operation (bug.h).
 */
int
check_run(Suite *s)
{
	SRunner	*sr;
	int	 ran, failed;

	bug_set_fatal(1);
	bug_set_self_check(1);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	ran = srunner_ntests_run(sr);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 && ran > 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
