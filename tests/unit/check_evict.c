/*
 * tests/unit/check_evict.c: eviction and self-preservation's policy
 * (server/core/evict.c) on its own, time driven by hand: the threshold
 * following every added and removed lease, uncounted leases left out,
 * openForTraffic, the renews-per-minute buckets and the switch, the run's
 * grace for a late timer, which leases a run may take and the per-run
 * cap, and the random pick's range. check_registry drives the same
 * policy through the lease table (registry_evict).
 */
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "evict.h"
#include "testutil.h"

#define T0	1700000000000LL

/* Eureka's defaults with the Spring seed of one expected client. */
static void
mkconf(struct evict_conf *c)
{
	memset(c, 0, sizeof *c);
	c->self_preservation = 1;
	c->renewal_percent_threshold = 0.85;
	c->expected_client_renewal_interval_secs = 30;
	c->expected_initial = 1;
	c->eviction_interval_ms = 60000;
}

START_TEST(test_threshold_follows_leases)
{
	struct evict_conf	c;
	struct evict		ev;

	mkconf(&c);
	evict_init(&ev, &c);
	ck_assert_int_eq(ev.expected, 1);
	ck_assert_int_eq(ev.threshold, 1);		/* (int)(1*2*.85) */
	evict_lease_added(&ev, 0);
	ck_assert_int_eq(ev.expected, 2);
	ck_assert_int_eq(ev.threshold, 3);		/* (int)3.4 */
	evict_lease_added(&ev, 1);			/* uncounted */
	ck_assert_int_eq(ev.expected, 2);
	ck_assert_int_eq(ev.uncounted, 1);
	evict_lease_removed(&ev, 1);
	ck_assert_int_eq(ev.uncounted, 0);
	evict_lease_removed(&ev, 0);
	evict_lease_removed(&ev, 0);
	ck_assert_int_eq(ev.expected, 0);
	ck_assert_int_eq(ev.threshold, 0);
	/* Never below zero. */
	evict_lease_removed(&ev, 0);
	ck_assert_int_eq(ev.expected, 0);
	evict_open_for_traffic(&ev, 10);
	ck_assert_int_eq(ev.expected, 10);
	ck_assert_int_eq(ev.threshold, 17);
	evict_open_for_traffic(&ev, -3);
	ck_assert_int_eq(ev.expected, 0);

	c.expected_client_renewal_interval_secs = 10;
	c.renewal_percent_threshold = 0.5;
	evict_init(&ev, &c);
	evict_open_for_traffic(&ev, 7);
	ck_assert_int_eq(ev.threshold, 21);		/* 7*6*.5 */
	/* A renewal interval <= 0 means Eureka's 30 s. */
	c.expected_client_renewal_interval_secs = 0;
	c.renewal_percent_threshold = 0.85;
	evict_init(&ev, &c);
	evict_open_for_traffic(&ev, 10);
	ck_assert_int_eq(ev.threshold, 17);
}
END_TEST

START_TEST(test_switch_follows_last_minute)
{
	struct evict_conf	c;
	struct evict		ev;
	int			i;

	mkconf(&c);
	evict_init(&ev, &c);
	evict_open_for_traffic(&ev, 20);		/* threshold 34 */
	ck_assert(!evict_expiration_enabled(&ev));
	ck_assert(evict_is_below_threshold(&ev));
	for (i = 0; i < 35; i++)
		evict_renewed(&ev, 0);
	for (i = 0; i < 10; i++)
		evict_renewed(&ev, 1);			/* not counted */
	/* This minute's renewals count once the minute is over. */
	ck_assert(!evict_expiration_enabled(&ev));
	evict_tick_minute(&ev);
	ck_assert_int_eq(ev.renews_last, 35);
	ck_assert(evict_expiration_enabled(&ev));
	ck_assert(!evict_is_below_threshold(&ev));
	/* Exactly at the threshold is below it. */
	for (i = 0; i < 34; i++)
		evict_renewed(&ev, 0);
	evict_tick_minute(&ev);
	ck_assert(!evict_expiration_enabled(&ev));
	ck_assert(evict_is_below_threshold(&ev));
	/* A quiet minute. */
	evict_tick_minute(&ev);
	ck_assert_int_eq(ev.renews_last, 0);
	/* A zero threshold never enables expiry... */
	evict_open_for_traffic(&ev, 0);
	evict_renewed(&ev, 0);
	evict_tick_minute(&ev);
	ck_assert(!evict_expiration_enabled(&ev));
	/* ... unless self-preservation is off. */
	c.self_preservation = 0;
	evict_init(&ev, &c);
	ck_assert(evict_expiration_enabled(&ev));
}
END_TEST

START_TEST(test_run_grace_for_late_timer)
{
	struct evict_conf	c;
	struct evict		ev;
	struct evict_run	run;

	mkconf(&c);
	c.self_preservation = 0;
	evict_init(&ev, &c);
	/* The first run has no baseline. */
	ck_assert(evict_run_begin(&ev, T0, 5, &run));
	ck_assert_int_eq(run.extra, 0);
	ck_assert(!run.only_uncounted);
	/* On time, then early: no grace. */
	ck_assert(evict_run_begin(&ev, T0 + 60000, 5, &run));
	ck_assert_int_eq(run.extra, 0);
	ck_assert(evict_run_begin(&ev, T0 + 90000, 5, &run));
	ck_assert_int_eq(run.extra, 0);
	/* 100 s after the last run: 40 s late. */
	ck_assert(evict_run_begin(&ev, T0 + 190000, 5, &run));
	ck_assert_int_eq(run.extra, 40000);
	/* An empty registry: nothing to scan, but the run counts. */
	ck_assert(!evict_run_begin(&ev, T0 + 250000, 0, &run));
	ck_assert(evict_run_begin(&ev, T0 + 310000, 5, &run));
	ck_assert_int_eq(run.extra, 0);
}
END_TEST

START_TEST(test_run_limits)
{
	struct evict_conf	c;
	struct evict		ev;
	struct evict_run	run;

	mkconf(&c);
	c.self_preservation = 0;
	evict_init(&ev, &c);
	ck_assert(evict_run_begin(&ev, T0, 100, &run));
	/* 100 - (int)85.0 = 15 at most per run. */
	ck_assert_uint_eq(evict_run_limit(&ev, &run, 100, 100), 15);
	ck_assert_uint_eq(evict_run_limit(&ev, &run, 100, 7), 7);
	ck_assert_uint_eq(evict_run_limit(&ev, &run, 85, 85), 13);
	ck_assert_uint_eq(evict_run_limit(&ev, &run, 20, 10), 3);

	/* Self-preservation holds: only uncounted leases, all of them. */
	c.self_preservation = 1;
	evict_init(&ev, &c);
	ck_assert(!evict_expiration_enabled(&ev));
	ck_assert(!evict_run_begin(&ev, T0, 100, &run));
	ck_assert(run.only_uncounted);
	evict_lease_added(&ev, 1);
	evict_lease_added(&ev, 1);
	ck_assert(evict_run_begin(&ev, T0 + 60000, 100, &run));
	ck_assert(run.only_uncounted);
	ck_assert_uint_eq(evict_run_limit(&ev, &run, 100, 2), 2);
}
END_TEST

START_TEST(test_pick_in_range)
{
	size_t	i, j, n = 10, hits[10];

	memset(hits, 0, sizeof hits);
	srandom(1);
	for (j = 0; j < 2000; j++) {
		for (i = 0; i < n; i++) {
			size_t	k = evict_pick(i, n);

			ck_assert_uint_ge(k, i);
			ck_assert_uint_lt(k, n);
			if (i == 0)
				hits[k]++;
		}
	}
	/* Every candidate can be the first pick. */
	for (i = 0; i < n; i++)
		ck_assert_uint_gt(hits[i], 0);
	ck_assert_uint_eq(evict_pick(9, 10), 9);
}
END_TEST

static Suite *
evict_suite(void)
{
	Suite	*s = suite_create("evict");
	TCase	*tc = tcase_create("policy");

	tcase_add_test(tc, test_threshold_follows_leases);
	tcase_add_test(tc, test_switch_follows_last_minute);
	tcase_add_test(tc, test_run_grace_for_late_timer);
	tcase_add_test(tc, test_run_limits);
	tcase_add_test(tc, test_pick_in_range);
	suite_add_tcase(s, tc);
	return (s);
}

/* Run the suite. */
int
main(void)
{
	return (check_run(evict_suite()));
}
