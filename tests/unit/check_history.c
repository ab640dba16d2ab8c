/*
 * tests/unit/check_history.c: the dashboard history ring. Samples are
 * taken only when due, turn cumulative counters into per-interval counts,
 * compute each peer's replication lag from its last success, and the ring
 * never holds more than HISTORY_SAMPLES (the oldest goes first); the
 * dashboard's sampler feeds it from the registry's counters. Time is
 * passed by hand.
 */
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "buf.h"
#include "config.h"
#include "dashboard.h"
#include "gate.h"
#include "fixture.h"
#include "history.h"
#include "instance.h"
#include "registry.h"
#include "testutil.h"

#define MIN	60000LL

START_TEST(test_due_and_deltas)
{
	struct history		*h = malloc(sizeof *h);
	struct history_input	 in;
	const struct history_sample *s;
	int64_t			 t = 1000000;

	history_init(h, MIN);
	memset(&in, 0, sizeof in);
	in.registrations = 3;
	in.cancels = 1;
	in.renewals = 10;
	in.threshold = 7;
	in.renews_last_min = 9;
	in.npeers = 2;
	in.queue_depth[0] = 4;
	in.last_success_ms[0] = t - 1500;
	in.last_success_ms[1] = 0;
	ck_assert_int_eq(history_tick(h, &in, t), 1);
	/* Not due again until a whole interval passed. */
	ck_assert_int_eq(history_tick(h, &in, t + MIN - 1), 0);
	ck_assert_uint_eq(h->len, 1);
	s = history_get(h, 0);
	ck_assert_uint_eq(s->registrations, 3);
	ck_assert_uint_eq(s->cancels, 1);
	ck_assert_uint_eq(s->renewals, 10);
	ck_assert_int_eq(s->threshold, 7);
	ck_assert_int_eq(s->renews_last_min, 9);
	ck_assert_uint_eq(s->npeers, 2);
	ck_assert_uint_eq(s->queue_depth[0], 4);
	ck_assert_int_eq(s->lag_ms[0], 1500);
	ck_assert_int_eq(s->lag_ms[1], -1);
	/* The next interval counts only what happened in it. */
	in.registrations = 5;
	in.renewals = 40;
	ck_assert_int_eq(history_tick(h, &in, t + MIN), 1);
	s = history_get(h, 1);
	ck_assert_uint_eq(s->registrations, 2);
	ck_assert_uint_eq(s->renewals, 30);
	ck_assert_uint_eq(s->cancels, 0);
	ck_assert_uint_eq(s->registrations_total, 5);
	ck_assert_uint_eq(s->cancels_total, 1);
	ck_assert_int_eq(s->lag_ms[0], MIN + 1500);
	ck_assert_ptr_null(history_get(h, 2));
	/* A counter going backwards counts as 0, not 2^64. */
	in.registrations = 1;
	ck_assert_int_eq(history_tick(h, &in, t + 2 * MIN), 1);
	ck_assert_uint_eq(history_get(h, 2)->registrations, 0);
	free(h);
}
END_TEST

START_TEST(test_bounded)
{
	struct history		*h = malloc(sizeof *h);
	struct history_input	 in;
	struct buf		 b;
	int64_t			 t = 5000;
	size_t			 i, n;

	history_init(h, 10000);
	memset(&in, 0, sizeof in);
	/* More peers than the bound: only HISTORY_MAX_PEERS are kept. */
	in.npeers = HISTORY_MAX_PEERS + 5;
	for (i = 0; i < 3 * HISTORY_SAMPLES; i++) {
		in.registrations = i;
		ck_assert_int_eq(history_tick(h, &in, t), 1);
		t += 10000;
	}
	ck_assert_uint_eq(h->len, HISTORY_SAMPLES);
	ck_assert_uint_eq(history_get(h, 0)->npeers, HISTORY_MAX_PEERS);
	/* Oldest first: the last HISTORY_SAMPLES samples, in order. */
	ck_assert_uint_eq(history_get(h, 0)->registrations_total,
	    2 * HISTORY_SAMPLES);
	ck_assert_uint_eq(history_get(h, HISTORY_SAMPLES - 1)->
	    registrations_total, 3 * HISTORY_SAMPLES - 1);
	ck_assert_ptr_null(history_get(h, HISTORY_SAMPLES));
	/* A late timer does not make a burst of catch-up samples. */
	t += 10 * 10000;
	ck_assert_int_eq(history_tick(h, &in, t), 1);
	ck_assert_int_eq(history_tick(h, &in, t + 1), 0);
	ck_assert_int_eq(history_tick(h, &in, t + 10000), 1);
	buf_init(&b, 0);
	history_json(h, &b);
	buf_addc(&b, '\0');
	for (i = 0, n = 0; b.data[i] != '\0'; i++)
		if (strncmp(b.data + i, "\"at\":", 5) == 0)
			n++;
	ck_assert_uint_eq(n, HISTORY_SAMPLES);
	ck_assert(b.data[0] == '[');
	buf_free(&b);
	free(h);
}
END_TEST

/* A registrable UP instance of APP. */
static struct instance *
mkinst(const char *id)
{
	return (fixture_instance("APP", id, STATUS_UP, 1));
}

/*
 * dashboard_history_tick() samples the registry's totals at the time it is
 * given, once per heureka.dashboard.history-interval-ms, with no peers
 * before the server listens (*peers NULL).
 */
START_TEST(test_dashboard_tick)
{
	struct registry_conf	 rc;
	struct registry		*reg;
	struct config		 conf;
	struct gate		*gate;
	struct dashboard	*d;
	struct peers		*peers = NULL;
	const struct history	*h;
	const struct history_sample *sm;
	int64_t			 t = 1700000000000LL;

	config_defaults(&conf);
	ck_assert_int_eq(config_set(&conf,
	    "heureka.dashboard.history-interval-ms", "10000", NULL), 0);
	registry_conf_defaults(&rc);
	reg = registry_new(&rc, t);
	gate = gate_new(TM(t));
	d = dashboard_new(&(struct dashboard_deps){ .reg = reg, .gate = gate,
	    .conf = &conf, .peers = &peers });
	ck_assert_int_eq(registry_register(reg, mkinst("i1"), 0, TM(t)),
	    REG_OK);
	ck_assert_int_eq(registry_register(reg, mkinst("i2"), 0, TM(t)),
	    REG_OK);
	ck_assert_int_eq(registry_cancel(reg, "APP", "i1", 0, TM(t), 0),
	    REG_OK);
	/*
	 * The first tick samples; the next only an interval later, as the
	 * time given says (no clock is read).
	 */
	dashboard_history_tick(d, TM(t));
	dashboard_history_tick(d, TM(t + 9999));
	h = dashboard_history(d);
	ck_assert_int_eq(h->interval_ms, 10000);
	ck_assert_uint_eq(h->len, 1);
	sm = history_get(h, 0);
	ck_assert_int_eq(sm->at_ms, t);
	ck_assert_uint_eq(sm->registrations, 2);
	ck_assert_uint_eq(sm->cancels, 1);
	ck_assert_uint_eq(sm->npeers, 0);
	ck_assert_int_eq(registry_register(reg, mkinst("i3"), 0, TM(t)),
	    REG_OK);
	dashboard_history_tick(d, TM(t + 10000));
	ck_assert_uint_eq(h->len, 2);
	sm = history_get(h, 1);
	ck_assert_int_eq(sm->at_ms, t + 10000);
	ck_assert_uint_eq(sm->registrations, 1);
	ck_assert_uint_eq(sm->registrations_total, 3);
	ck_assert_uint_eq(sm->cancels, 0);
	dashboard_free(d);
	gate_free(gate);
	registry_free(reg);
	config_free(&conf);
}
END_TEST

/* The suite. */
static Suite *
history_suite(void)
{
	Suite	*s = suite_create("history");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, test_due_and_deltas);
	tcase_add_test(tc, test_bounded);
	tcase_add_test(tc, test_dashboard_tick);
	suite_add_tcase(s, tc);
	return (s);
}

/* Run the suite. */
int
main(void)
{
	return (check_run(history_suite()));
}
