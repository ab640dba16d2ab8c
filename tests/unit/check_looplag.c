/*
 * tests/unit/check_looplag.c: the loop-latency probe's statistics. A
 * stall shows in the histogram at once and in the interval's max and p99
 * when the interval closes; an interval that overflows its sample array
 * closes early instead of writing past it. Time is passed by hand.
 */
#include <stdlib.h>

#include <check.h>

#include "looplag.h"
#include "testutil.h"

#define MS	1000LL

START_TEST(test_stall_reported)
{
	struct looplag	*ll = malloc(sizeof *ll);
	int64_t		 t = 0;
	int		 i;

	looplag_init(ll, t);
	/* 500 probes 1 ms late, then one 300 ms stall. */
	for (i = 0; i < 500; i++) {
		t += 11 * MS;
		looplag_sample(ll, 1 * MS, t);
	}
	t += 310 * MS;
	looplag_sample(ll, 300 * MS, t);
	ck_assert_int_eq(ll->max_us, 300 * MS);
	ck_assert_uint_eq(ll->count, 501);
	/* 1 ms bucket: 500; 300 ms bucket (index 15): 1. */
	ck_assert_uint_eq(ll->bucket[0], 500);
	ck_assert(looplag_bound(15) == 0.3);
	ck_assert_uint_eq(ll->bucket[15], 1);
	ck_assert_int_eq(ll->last_max_us, 0);	/* interval still open */
	/* Close it: the next interval's first probe. */
	t += LOOPLAG_INTERVAL_MS * MS;
	looplag_sample(ll, 2 * MS, t);
	ck_assert_int_eq(ll->last_max_us, 300 * MS);
	ck_assert_int_eq(ll->last_p99_us, 1 * MS);
	free(ll);
}
END_TEST

START_TEST(test_p99_and_overflow)
{
	struct looplag	*ll = malloc(sizeof *ll);
	int64_t		 t = 0;
	int		 i;

	looplag_init(ll, t);
	/* More samples than fit, all inside one interval's time. */
	for (i = 0; i < LOOPLAG_SAMPLES + 10; i++)
		looplag_sample(ll, (i % 100) * MS, ++t);
	/* The array filled: the first LOOPLAG_SAMPLES were closed. */
	ck_assert_uint_eq(ll->n, 10);
	ck_assert_int_eq(ll->last_max_us, 99 * MS);
	ck_assert_int_ge(ll->last_p99_us, 97 * MS);
	ck_assert_int_le(ll->last_p99_us, 99 * MS);
	/* Negative lateness (a clock in the past) counts as none. */
	looplag_sample(ll, -5, ++t);
	ck_assert_uint_eq(ll->bucket[0] > 0, 1);
	free(ll);
}
END_TEST

/* The suite. */
static Suite *
looplag_suite(void)
{
	Suite	*s = suite_create("looplag");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, test_stall_reported);
	tcase_add_test(tc, test_p99_and_overflow);
	suite_add_tcase(s, tc);
	return (s);
}

/* Run the suite. */
int
main(void)
{
	return (check_run(looplag_suite()));
}
