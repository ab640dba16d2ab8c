/*
 * tests/unit/check_gate.c: the readiness gate. It opens once, closes for
 * good, lets reads through after the empty-sync wait, and tells its
 * observers of each transition exactly once. Time is passed by hand.
 */
#include <stdlib.h>

#include <check.h>

#include "gate.h"
#include "testutil.h"

#define T(ms)	((struct hk_time){ .wall_ms = 1700000000000LL + (ms), \
		    .mono_ms = (ms) })

struct seen {
	int		n;
	enum gate_state	last;
	int		count;
	int64_t		mono;
};

/* Observer: remember what was said. */
static void
seen_cb(enum gate_state st, int count, struct hk_time now, void *arg)
{
	struct seen	*s = arg;

	s->n++;
	s->last = st;
	s->count = count;
	s->mono = now.mono_ms;
}

START_TEST(test_opens_once)
{
	struct gate		*g = gate_new(T(5));
	struct seen		 s = { 0 };
	struct gate_observer	 o = { seen_cb, &s };

	gate_observe(g, &o);
	ck_assert_int_eq(gate_state(g), GATE_STARTING);
	ck_assert(!gate_is_ready(g));
	ck_assert_int_eq(gate_started(g).mono_ms, 5);
	gate_set_ready(g, 7, T(100));
	ck_assert(gate_is_ready(g));
	ck_assert_int_eq(s.n, 1);
	ck_assert_int_eq(s.last, GATE_READY);
	ck_assert_int_eq(s.count, 7);
	ck_assert_int_eq(s.mono, 100);
	gate_set_ready(g, 9, T(200));		/* ignored */
	ck_assert_int_eq(s.n, 1);
	ck_assert_int_eq(gate_sync_count(g), 7);
	gate_free(g);
}
END_TEST

START_TEST(test_read_wait)
{
	struct gate	*g = gate_new(T(0));

	ck_assert(!gate_allow_read(g, 1000000));	/* no deadline yet */
	gate_allow_reads_at(g, 300000);
	ck_assert(!gate_allow_read(g, 299999));
	ck_assert(gate_allow_read(g, 300000));
	gate_allow_reads_at(g, 900000);
	ck_assert(!gate_allow_read(g, 300000));
	gate_set_ready(g, 0, T(1));
	ck_assert(gate_allow_read(g, 1));
	gate_free(g);
}
END_TEST

START_TEST(test_stopping_is_final)
{
	struct gate		*g = gate_new(T(0));
	struct seen		 s = { 0 };
	struct gate_observer	 o = { seen_cb, &s };

	gate_observe(g, &o);
	gate_set_ready(g, 1, T(10));
	gate_set_stopping(g, T(20));
	ck_assert(gate_is_stopping(g));
	ck_assert(gate_is_ready(g));		/* it did open */
	ck_assert_int_eq(s.n, 2);
	ck_assert_int_eq(s.last, GATE_STOPPING);
	gate_set_stopping(g, T(30));		/* once */
	ck_assert_int_eq(s.n, 2);
	gate_free(g);

	/* Stopping before the sync finished: a late sync does not reopen. */
	g = gate_new(T(0));
	s.n = 0;
	gate_observe(g, &o);
	gate_set_stopping(g, T(5));
	gate_set_ready(g, 3, T(6));
	ck_assert_int_eq(gate_state(g), GATE_STOPPING);
	ck_assert(!gate_is_ready(g));
	ck_assert_int_eq(s.n, 1);
	gate_free(g);
}
END_TEST

/* The suite. */
static Suite *
gate_suite(void)
{
	Suite	*s = suite_create("gate");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, test_opens_once);
	tcase_add_test(tc, test_read_wait);
	tcase_add_test(tc, test_stopping_is_final);
	suite_add_tcase(s, tc);
	return (s);
}

/* Run the suite. */
int
main(void)
{
	return (check_run(gate_suite()));
}
