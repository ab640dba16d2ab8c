/*
 * tests/unit/check_looplag.c: the loop-latency probe's statistics. A
 * stall shows in the histogram at once and in the interval's max and p99
 * when the interval closes; an interval that overflows its sample array
 * closes early instead of writing past it. Loop turns are counted by
 * their CPU time, passed in by hand: a long turn shows in the histogram,
 * the maxima and the quantile, and the interval's maximum moves with the
 * probe's interval.
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

START_TEST(test_turns)
{
	struct looplag	*ll = malloc(sizeof *ll);
	int64_t		 t = 0;
	uint64_t	 sum = 0;
	int		 i;

	looplag_init(ll, t);
	ck_assert_int_eq(looplag_turn_quantile(ll, 0.99), 0);
	/* 1,000 turns of 80 us, then one of 42 ms and one of 20 s. */
	for (i = 0; i < 1000; i++)
		looplag_turn(ll, 80);
	looplag_turn(ll, 42 * MS);
	ck_assert_uint_eq(ll->turns, 1001);
	ck_assert_int_eq(ll->turn_max_us, 42 * MS);
	ck_assert_int_eq(ll->turn_cur_max_us, 42 * MS);
	ck_assert_uint_eq(ll->turn_bucket[0], 1000);	/* <= 0.1 ms */
	/* 42 ms lands in the 45 ms bucket, under the 50 ms bound. */
	ck_assert(looplag_turn_bound(15) == 0.045);
	ck_assert_uint_eq(ll->turn_bucket[15], 1);
	ck_assert(looplag_turn_bound(16) == 0.05);
	ck_assert_uint_eq(ll->turn_bucket[16], 0);
	ck_assert_int_eq(looplag_turn_quantile(ll, 0.99), 100);
	ck_assert_int_eq(looplag_turn_quantile(ll, 1.0), 45 * MS);
	looplag_turn(ll, 20000 * MS);	/* past the last bucket */
	for (i = 0; i < LOOPLAG_TURN_NBUCKETS; i++)
		sum += ll->turn_bucket[i];
	ck_assert_uint_eq(sum, 1001);	/* counted in +Inf only */
	ck_assert_int_eq(looplag_turn_quantile(ll, 1.0), 20000 * MS);
	looplag_turn(ll, -3);		/* a clock that went back */
	ck_assert_uint_eq(ll->turn_bucket[0], 1001);
	/* The probe's interval closes: the turn maximum moves with it. */
	ck_assert_int_eq(ll->turn_last_max_us, 0);
	t += LOOPLAG_INTERVAL_MS * MS;
	looplag_sample(ll, 0, t);
	ck_assert_int_eq(ll->turn_last_max_us, 20000 * MS);
	ck_assert_int_eq(ll->turn_cur_max_us, 0);
	looplag_turn(ll, 3 * MS);
	t += LOOPLAG_INTERVAL_MS * MS;
	looplag_sample(ll, 0, t);
	ck_assert_int_eq(ll->turn_last_max_us, 3 * MS);
	ck_assert_int_eq(ll->turn_max_us, 20000 * MS);
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
	tcase_add_test(tc, test_turns);
	suite_add_tcase(s, tc);
	return (s);
}

/* Run the suite. */
int
main(void)
{
	return (check_run(looplag_suite()));
}
