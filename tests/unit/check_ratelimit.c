/*
 * tests/unit/check_ratelimit.c: the per-address token buckets, with time
 * driven by hand: the burst, the refill rate and the wait it reports,
 * independent keys, the bound on the table and the dropping of idle keys.
 */
#include <stdio.h>
#include <stdlib.h>

#include <check.h>

#include "ratelimit.h"
#include "testutil.h"

#define T0	1000000LL

START_TEST(test_burst_then_rate)
{
	struct ratelimit	*rl = ratelimit_new(2, 5, 16);
	int			 i;

	for (i = 0; i < 5; i++)
		ck_assert_int_eq(ratelimit_take(rl, "10.0.0.1", T0), 0);
	/* Empty: one token comes back in 500 ms at 2/s. */
	ck_assert_int_ge(ratelimit_take(rl, "10.0.0.1", T0), 500);
	ck_assert_int_le(ratelimit_take(rl, "10.0.0.1", T0), 501);
	ck_assert_int_gt(ratelimit_take(rl, "10.0.0.1", T0 + 499), 0);
	ck_assert_int_eq(ratelimit_take(rl, "10.0.0.1", T0 + 500), 0);
	ck_assert_int_gt(ratelimit_take(rl, "10.0.0.1", T0 + 500), 0);
	/* Another address has its own bucket. */
	ck_assert_int_eq(ratelimit_take(rl, "10.0.0.2", T0 + 500), 0);
	/* A long pause refills to the burst, not beyond. */
	for (i = 0; i < 5; i++)
		ck_assert_int_eq(ratelimit_take(rl, "10.0.0.1", T0 + 600000 +
		    i), 0);
	ck_assert_int_gt(ratelimit_take(rl, "10.0.0.1", T0 + 600005), 0);
	ratelimit_free(rl);
}
END_TEST

START_TEST(test_wait_takes_nothing)
{
	struct ratelimit	*rl = ratelimit_new(1, 3, 16);
	int			 i;

	/* Unknown key: a full bucket, nothing to wait for, nothing made. */
	ck_assert_int_eq(ratelimit_wait(rl, "10.0.0.1", T0), 0);
	ck_assert_uint_eq(ratelimit_size(rl), 0);
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(ratelimit_wait(rl, "10.0.0.1", T0), 0);
		ck_assert_int_eq(ratelimit_take(rl, "10.0.0.1", T0), 0);
	}
	/* Empty: the wait is reported however often it is asked. */
	for (i = 0; i < 10; i++) {
		ck_assert_int_ge(ratelimit_wait(rl, "10.0.0.1", T0), 1000);
		ck_assert_int_le(ratelimit_wait(rl, "10.0.0.1", T0), 1001);
	}
	ck_assert_int_gt(ratelimit_wait(rl, "10.0.0.1", T0 + 999), 0);
	ck_assert_int_eq(ratelimit_wait(rl, "10.0.0.1", T0 + 1000), 0);
	ratelimit_free(rl);
}
END_TEST

START_TEST(test_off)
{
	struct ratelimit	*rl = ratelimit_new(0, 1, 4);
	int			 i;

	for (i = 0; i < 1000; i++)
		ck_assert_int_eq(ratelimit_take(rl, "10.0.0.1", T0), 0);
	ck_assert_uint_eq(ratelimit_size(rl), 0);
	ratelimit_free(rl);
}
END_TEST

START_TEST(test_table_bounded)
{
	struct ratelimit	*rl = ratelimit_new(1, 2, 4);
	char			 key[32];
	int			 i;

	for (i = 0; i < 1000; i++) {
		snprintf(key, sizeof key, "10.1.%d.%d", i / 256, i % 256);
		ck_assert_int_eq(ratelimit_take(rl, key, T0 + i / 10), 0);
		ck_assert_uint_le(ratelimit_size(rl), 4);
	}
	/* Keys idle long enough to be full again are forgotten. */
	ck_assert_int_eq(ratelimit_take(rl, "10.9.9.9", T0 + 100000), 0);
	ck_assert_uint_eq(ratelimit_size(rl), 1);
	ratelimit_free(rl);
}
END_TEST

static Suite *
ratelimit_suite(void)
{
	Suite	*s = suite_create("ratelimit");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, test_burst_then_rate);
	tcase_add_test(tc, test_wait_takes_nothing);
	tcase_add_test(tc, test_off);
	tcase_add_test(tc, test_table_bounded);
	suite_add_tcase(s, tc);
	return (s);
}

/* Run the suite. */
int
main(void)
{
	return (check_run(ratelimit_suite()));
}
