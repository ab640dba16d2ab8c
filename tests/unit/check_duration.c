/*
 * tests/unit/check_duration.c: common/duration.c, the words of the drain
 * barrier's ?wait= and of heureka drain --timeout. The bound is on the
 * time the words mean, after the unit: "3m" is over a 120 s bound and
 * "120000s" is not 120 s (both were accepted when the bound was checked
 * on the number before its unit).
 */
#include <check.h>

#include "duration.h"
#include "testutil.h"

/* The units and a bare number (seconds). */
START_TEST(test_units)
{
	ck_assert_int_eq(duration_parse_ms("250ms", 120000), 250);
	ck_assert_int_eq(duration_parse_ms("30s", 120000), 30000);
	ck_assert_int_eq(duration_parse_ms("30", 120000), 30000);
	ck_assert_int_eq(duration_parse_ms("2m", 120000), 120000);
	ck_assert_int_eq(duration_parse_ms("0", 120000), 0);
}
END_TEST

/* Not a duration: no digits first, an unknown unit, a sign. */
START_TEST(test_not_durations)
{
	ck_assert_int_lt(duration_parse_ms(NULL, 120000), 0);
	ck_assert_int_lt(duration_parse_ms("", 120000), 0);
	ck_assert_int_lt(duration_parse_ms("s", 120000), 0);
	ck_assert_int_lt(duration_parse_ms("-5s", 120000), 0);
	ck_assert_int_lt(duration_parse_ms("5h", 120000), 0);
	ck_assert_int_lt(duration_parse_ms("5 s", 120000), 0);
}
END_TEST

/* The bound applies to the milliseconds the words mean. */
START_TEST(test_bound_after_unit)
{
	ck_assert_int_lt(duration_parse_ms("3m", 120000), 0);
	ck_assert_int_lt(duration_parse_ms("121s", 120000), 0);
	ck_assert_int_lt(duration_parse_ms("120000s", 120000), 0);
	ck_assert_int_eq(duration_parse_ms("120000ms", 120000), 120000);
	ck_assert_int_lt(duration_parse_ms("120001ms", 120000), 0);
	/* No overflow on the way to the bound. */
	ck_assert_int_lt(duration_parse_ms("9223372036854775807m", 120000),
	    0);
	ck_assert_int_lt(duration_parse_ms("99999999999999999999s", 120000),
	    0);
}
END_TEST

/* The suite. */
static Suite *
duration_suite(void)
{
	Suite	*s = suite_create("duration");
	TCase	*tc = tcase_create("duration");

	tcase_add_test(tc, test_units);
	tcase_add_test(tc, test_not_durations);
	tcase_add_test(tc, test_bound_after_unit);
	suite_add_tcase(s, tc);
	return (s);
}

/* Run the suite. */
int
main(void)
{
	return (check_run(duration_suite()));
}
