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

/*
 * A take of many tokens (an airlift announcement of 64 services): past
 * the burst it waits for a full bucket and leaves it in debt, which the
 * rate pays back before anything else is let in; a debtor is not
 * forgotten as idle.
 */
START_TEST(test_take_n_debt)
{
	struct ratelimit	*rl = ratelimit_new(2, 10, 16);

	ck_assert_int_eq(ratelimit_take_n(rl, "a", 64, T0), 0);
	/* 54 in debt: 55 tokens to one, 27.5 s at 2/s. */
	ck_assert_int_ge(ratelimit_take(rl, "a", T0), 27500);
	ck_assert_int_gt(ratelimit_take_n(rl, "a", 64, T0 + 27000), 0);
	ck_assert_int_eq(ratelimit_take(rl, "a", T0 + 27500), 0);
	/* Taken again only once full again: 10 tokens, 5 s later. */
	ck_assert_int_gt(ratelimit_take_n(rl, "a", 64, T0 + 32000), 0);
	ck_assert_int_eq(ratelimit_take_n(rl, "a", 64, T0 + 32501), 0);
	/* Another key's take does not drop "a" while it owes. */
	ck_assert_int_eq(ratelimit_take(rl, "b", T0 + 40000), 0);
	ck_assert_uint_eq(ratelimit_size(rl), 2);
	ck_assert_int_gt(ratelimit_take(rl, "a", T0 + 40000), 0);
	/* Within the burst, n at once as n single takes. */
	ck_assert_int_eq(ratelimit_take_n(rl, "c", 4, T0), 0);
	ck_assert_int_eq(ratelimit_take_n(rl, "c", 6, T0), 0);
	ck_assert_int_gt(ratelimit_take(rl, "c", T0), 0);
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
	tcase_add_test(tc, test_take_n_debt);
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
