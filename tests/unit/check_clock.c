/*
 * tests/unit/check_clock.c: common/clock.c's pure part, the ms-to-timeval
 * conversion every timer goes through (whole seconds, the remainder in
 * microseconds, a negative duration as zero), and that the monotonic
 * readings never go backwards.
 */
#include <check.h>

#include "clock.h"
#include "testutil.h"

/* Seconds and microseconds split exactly. */
START_TEST(test_ms_tv_splits)
{
	struct timeval	tv;

	tv = clock_ms_tv(0);
	ck_assert_int_eq(tv.tv_sec, 0);
	ck_assert_int_eq(tv.tv_usec, 0);
	tv = clock_ms_tv(999);
	ck_assert_int_eq(tv.tv_sec, 0);
	ck_assert_int_eq(tv.tv_usec, 999000);
	tv = clock_ms_tv(1000);
	ck_assert_int_eq(tv.tv_sec, 1);
	ck_assert_int_eq(tv.tv_usec, 0);
	tv = clock_ms_tv(90061);
	ck_assert_int_eq(tv.tv_sec, 90);
	ck_assert_int_eq(tv.tv_usec, 61000);
	/* A day of ms in 64 bits: no 32-bit overflow on the way. */
	tv = clock_ms_tv(86400000LL * 30 + 7);
	ck_assert_int_eq(tv.tv_sec, 86400 * 30);
	ck_assert_int_eq(tv.tv_usec, 7000);
}
END_TEST

/* A deadline already passed arms the timer for now, not for garbage. */
START_TEST(test_ms_tv_negative_is_zero)
{
	struct timeval	tv;

	tv = clock_ms_tv(-1);
	ck_assert_int_eq(tv.tv_sec, 0);
	ck_assert_int_eq(tv.tv_usec, 0);
	tv = clock_ms_tv(-1500);
	ck_assert_int_eq(tv.tv_sec, 0);
	ck_assert_int_eq(tv.tv_usec, 0);
}
END_TEST

/* Monotonic ms and us agree and do not go backwards. */
START_TEST(test_mono_forward)
{
	int64_t	a = clock_mono_ms(), b = clock_mono_us(), c = clock_mono_ms();

	ck_assert_int_le(a, c);
	ck_assert_int_ge(b / 1000, a);
	ck_assert_int_le(b / 1000, c);
}
END_TEST

/* The suite. */
static Suite *
clock_suite(void)
{
	Suite	*s = suite_create("clock");
	TCase	*tc = tcase_create("clock");

	tcase_add_test(tc, test_ms_tv_splits);
	tcase_add_test(tc, test_ms_tv_negative_is_zero);
	tcase_add_test(tc, test_mono_forward);
	suite_add_tcase(s, tc);
	return (s);
}

/* Run the suite. */
int
main(void)
{
	return (check_run(clock_suite()));
}
