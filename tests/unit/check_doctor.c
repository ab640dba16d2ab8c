/*
 * tests/unit/check_doctor.c: the doctor's findings (doctor.h), each kind
 * provoked by hand and cleared by stepping struct hk_time: renew-interval
 * from a lease's heartbeat gap, id-conflict from an address flipping
 * back, reregister-storm from registrations a period, a client's and a
 * peer's clock-skew, the peer findings (a problem the glue states, and
 * Eureka's replica host check over a real registry), self-preservation
 * with the leases it keeps. A finding keeps its since while it holds;
 * at most DOCTOR_MAX_FINDINGS are kept and the rest counted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "buf.h"
#include "doctor.h"
#include "fixture.h"
#include "instance.h"
#include "registry.h"
#include "testutil.h"

#define WIN	3000		/* the window of these tests */
#define T0	1000000LL

/* A doctor with a 3 s window, 4 registrations a period, 5 s skew. */
static struct doctor *
mkdoctor(void)
{
	struct doctor_conf	c;

	doctor_conf_defaults(&c);
	c.window_ms = WIN;
	c.storm_per_minute = 4;
	c.skew_ms = 5000;
	return (doctor_new(&c));
}

/* The finding of kind k about app/id, or NULL. */
static const struct doctor_finding *
find(const struct doctor *d, enum doctor_kind k, const char *app,
    const char *id)
{
	const struct doctor_finding	*f;
	size_t				 i;

	for (i = 0; (f = doctor_get(d, i)) != NULL; i++)
		if (f->kind == k && strcmp(f->app, app) == 0 &&
		    strcmp(f->id, id) == 0)
			return (f);
	return (NULL);
}

/* An empty scan at ms (the table's findings only). */
static void
scan(struct doctor *d, int64_t ms)
{
	doctor_scan_begin(d, TM(ms));
	doctor_scan_end(d);
}

START_TEST(test_renew_interval)
{
	struct doctor		*d = mkdoctor();
	struct instance		*in = fixture_instance("APP", "i1", STATUS_UP, 1);
	struct registry_timing	 t;
	const struct doctor_finding *f;

	in->lease.renewal_interval_secs = 30;
	memset(&t, 0, sizeof t);
	t.app = "APP";
	t.inst = in;
	t.last_renew_ts = T0;
	t.last_renew_mono = T0;
	/* Renewing every 90 s while declaring 30: reported. */
	t.gap_ms = 90000;
	doctor_scan_begin(d, TM(T0 + 1000));
	doctor_scan_lease(d, &t);
	doctor_scan_end(d);
	f = find(d, DOCTOR_RENEW_INTERVAL, "APP", "i1");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(strstr(f->detail, "renews every 90.0 s"));
	ck_assert_ptr_nonnull(strstr(f->detail,
	    "renewalIntervalInSecs 30"));
	ck_assert_int_eq(f->since_ms, T0 + 1000);
	/* Still so a scan later: the same finding, the same since. */
	doctor_scan_begin(d, TM(T0 + 2000));
	doctor_scan_lease(d, &t);
	doctor_scan_end(d);
	f = find(d, DOCTOR_RENEW_INTERVAL, "APP", "i1");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(f->since_ms, T0 + 1000);
	ck_assert_uint_eq(doctor_count_kind(d, DOCTOR_RENEW_INTERVAL), 1);
	/* Too fast is reported too (5 s against 30). */
	t.gap_ms = 5000;
	doctor_scan_begin(d, TM(T0 + 3000));
	doctor_scan_lease(d, &t);
	doctor_scan_end(d);
	ck_assert_ptr_nonnull(find(d, DOCTOR_RENEW_INTERVAL, "APP", "i1"));
	/* At the declared rate: cleared. */
	t.gap_ms = 30000;
	t.last_renew_mono = T0 + 4000;
	doctor_scan_begin(d, TM(T0 + 4000));
	doctor_scan_lease(d, &t);
	doctor_scan_end(d);
	ck_assert_uint_eq(doctor_count(d), 0);
	/* Never renewed since it registered: nothing to judge. */
	t.last_renew_ts = 0;
	t.gap_ms = 90000;
	doctor_scan_begin(d, TM(T0 + 5000));
	doctor_scan_lease(d, &t);
	doctor_scan_end(d);
	ck_assert_uint_eq(doctor_count(d), 0);
	instance_free(in);
	doctor_free(d);
}
END_TEST

START_TEST(test_id_conflict)
{
	struct doctor			*d = mkdoctor();
	const struct doctor_finding	*f;

	doctor_register(d, "TWIN", "t1", "a/10.0.0.1:80", 1, 0, TM(T0));
	doctor_register(d, "TWIN", "t1", "b/10.0.0.2:80", 0, 0, TM(T0 + 100));
	scan(d, T0 + 150);
	/* One change of address is a move, not a conflict. */
	ck_assert_ptr_null(find(d, DOCTOR_ID_CONFLICT, "TWIN", "t1"));
	doctor_register(d, "TWIN", "t1", "a/10.0.0.1:80", 0, 0, TM(T0 + 200));
	scan(d, T0 + 250);
	f = find(d, DOCTOR_ID_CONFLICT, "TWIN", "t1");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(strstr(f->detail, "a/10.0.0.1:80"));
	ck_assert_ptr_nonnull(strstr(f->detail, "b/10.0.0.2:80"));
	/* A window without a flip: cleared. */
	scan(d, T0 + 200 + WIN);
	ck_assert_ptr_nonnull(find(d, DOCTOR_ID_CONFLICT, "TWIN", "t1"));
	scan(d, T0 + 201 + WIN);
	ck_assert_ptr_null(find(d, DOCTOR_ID_CONFLICT, "TWIN", "t1"));
	doctor_free(d);
}
END_TEST

START_TEST(test_reregister_storm)
{
	struct doctor	*d = mkdoctor();
	int		 i;

	for (i = 0; i < 3; i++)
		doctor_register(d, "LOOP", "l1", "h/1:1", i == 0, 0,
		    TM(T0 + i * 100));
	scan(d, T0 + 400);
	ck_assert_ptr_null(find(d, DOCTOR_REREGISTER_STORM, "LOOP", "l1"));
	doctor_register(d, "LOOP", "l1", "h/1:1", 0, 0, TM(T0 + 400));
	scan(d, T0 + 500);
	ck_assert_ptr_nonnull(find(d, DOCTOR_REREGISTER_STORM, "LOOP", "l1"));
	/* The period (the 3 s window here) after: still counted. */
	scan(d, T0 + WIN + 500);
	ck_assert_ptr_nonnull(find(d, DOCTOR_REREGISTER_STORM, "LOOP", "l1"));
	/* Two periods on with no registration: cleared. */
	scan(d, T0 + 2 * WIN + 1);
	ck_assert_ptr_null(find(d, DOCTOR_REREGISTER_STORM, "LOOP", "l1"));
	doctor_free(d);
}
END_TEST

START_TEST(test_client_clock_skew)
{
	struct doctor			*d = mkdoctor();
	const struct doctor_finding	*f;

	/* 4 s ahead: under the 5 s bound. */
	doctor_register(d, "SKEW", "s1", "h/1:1", 1, T0 + 4000, TM(T0));
	scan(d, T0 + 10);
	ck_assert_ptr_null(find(d, DOCTOR_CLOCK_SKEW, "SKEW", "s1"));
	/* A minute ahead: reported. */
	doctor_register(d, "SKEW", "s1", "h/1:1", 0, T0 + 100 + 60000,
	    TM(T0 + 100));
	scan(d, T0 + 200);
	f = find(d, DOCTOR_CLOCK_SKEW, "SKEW", "s1");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(strstr(f->detail, "60.0 s ahead"));
	/* A window later without another: cleared. */
	scan(d, T0 + 101 + WIN);
	ck_assert_ptr_null(find(d, DOCTOR_CLOCK_SKEW, "SKEW", "s1"));
	doctor_free(d);
}
END_TEST

START_TEST(test_peer_clock_skew)
{
	struct doctor			*d = mkdoctor();
	const struct doctor_finding	*f;
	const char			*u = "http://b:8761/eureka/";

	/* An hour ahead, seen now. */
	doctor_scan_begin(d, TM(T0));
	doctor_scan_peer_clock(d, u, 3600000, T0);
	doctor_scan_end(d);
	f = find(d, DOCTOR_CLOCK_SKEW, "", u);
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(strstr(f->detail, "3600 s ahead of this"));
	/* Behind says so. */
	doctor_scan_begin(d, TM(T0 + 100));
	doctor_scan_peer_clock(d, u, -3600000, T0 + 100);
	doctor_scan_end(d);
	f = find(d, DOCTOR_CLOCK_SKEW, "", u);
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(strstr(f->detail, "3600 s behind this"));
	ck_assert_int_eq(f->since_ms, T0);
	/* Within the bound either way: cleared. */
	doctor_scan_begin(d, TM(T0 + 200));
	doctor_scan_peer_clock(d, u, -4999, T0 + 200);
	doctor_scan_end(d);
	ck_assert_uint_eq(doctor_count(d), 0);
	/* Never seen, or seen longer than a window ago: nothing. */
	doctor_scan_begin(d, TM(T0 + 300));
	doctor_scan_peer_clock(d, u, 3600000, 0);
	doctor_scan_peer_clock(d, "http://c/", 3600000, T0 + 299 - WIN);
	doctor_scan_end(d);
	ck_assert_uint_eq(doctor_count(d), 0);
	doctor_free(d);
}
END_TEST

/* Register an instance of app with host name and address into reg. */
static void
reg_host(struct registry *reg, const char *app, const char *id,
    const char *host, const char *ip)
{
	struct instance	*in = fixture_instance(app, id, STATUS_UP, 1);

	str_replace(&in->host_name, host);
	str_replace(&in->ip_addr, ip);
	ck_assert_int_eq(registry_register(reg, in, 0, TM(T0)), REG_OK);
}

START_TEST(test_peer_replica_host)
{
	struct doctor			*d = mkdoctor();
	struct registry_conf		 rc;
	struct registry			*reg;
	const struct doctor_finding	*f;
	const char			*u = "http://127.0.0.1:8762/eureka/";

	registry_conf_defaults(&rc);
	reg = registry_new(&rc, T0);
	/* The own application not registered here: not judged. */
	doctor_scan_begin(d, TM(T0));
	doctor_scan_replica(d, reg, "HEUREKA", u, "127.0.0.1");
	doctor_scan_end(d);
	ck_assert_uint_eq(doctor_count(d), 0);
	/* The peer registered as localhost at 127.0.0.1: by its ipAddr. */
	reg_host(reg, "HEUREKA", "b", "localhost", "127.0.0.1");
	doctor_scan_begin(d, TM(T0 + 1));
	doctor_scan_replica(d, reg, "HEUREKA", u, "127.0.0.1");
	doctor_scan_end(d);
	f = find(d, DOCTOR_PEER, "", u);
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(strstr(f->detail, "its host 127.0.0.1 is the "
	    "ipAddr of HEUREKA instance b, registered with hostName "
	    "localhost"));
	ck_assert_ptr_nonnull(strstr(f->detail, "unavailable-replicas"));
	/* A host no instance has at all. */
	doctor_scan_begin(d, TM(T0 + 2));
	doctor_scan_replica(d, reg, "HEUREKA", u, "10.1.1.1");
	doctor_scan_end(d);
	f = find(d, DOCTOR_PEER, "", u);
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(strstr(f->detail, "no instance of HEUREKA "
	    "registered here has its host 10.1.1.1 as hostName (1 "
	    "registered: localhost)"));
	ck_assert_int_eq(f->since_ms, T0 + 1);
	/* The host name, in any case: no finding. */
	doctor_scan_begin(d, TM(T0 + 3));
	doctor_scan_replica(d, reg, "HEUREKA", u, "LocalHost");
	doctor_scan_end(d);
	ck_assert_uint_eq(doctor_count(d), 0);
	/* Another app's instance with that host does not count. */
	reg_host(reg, "OTHER", "o", "10.2.2.2", "10.2.2.2");
	doctor_scan_begin(d, TM(T0 + 4));
	doctor_scan_replica(d, reg, "HEUREKA", u, "10.2.2.2");
	doctor_scan_end(d);
	ck_assert_ptr_nonnull(find(d, DOCTOR_PEER, "", u));
	registry_free(reg);
	doctor_free(d);
}
END_TEST

START_TEST(test_peer_problem_and_selfpres)
{
	struct doctor			*d = mkdoctor();
	struct instance			*in = fixture_instance("HELD", "h1",
					    STATUS_UP, 1);
	struct registry_timing		 t;
	const struct doctor_finding	*f;

	doctor_scan_begin(d, TM(T0));
	doctor_scan_peer(d, "http://x/", "unreachable: no answer");
	doctor_scan_peer(d, "http://y/", NULL);
	memset(&t, 0, sizeof t);
	t.app = "HELD";
	t.inst = in;
	t.expired = 1;
	doctor_scan_lease(d, &t);
	doctor_scan_selfpres(d, 1, 10, 2);
	doctor_scan_end(d);
	ck_assert_uint_eq(doctor_count(d), 2);
	ck_assert_ptr_nonnull(find(d, DOCTOR_PEER, "", "http://x/"));
	f = find(d, DOCTOR_SELF_PRESERVATION, "", "");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(strstr(f->detail, "2 renewals"));
	ck_assert_ptr_nonnull(strstr(f->detail, "10 expected"));
	ck_assert_ptr_nonnull(strstr(f->detail, "HELD/h1"));
	/* Causes gone: both cleared at the next scan. */
	doctor_scan_begin(d, TM(T0 + 1));
	doctor_scan_peer(d, "http://x/", NULL);
	doctor_scan_selfpres(d, 1, 10, 2);	/* on, but keeps nothing */
	doctor_scan_end(d);
	ck_assert_uint_eq(doctor_count(d), 0);
	instance_free(in);
	doctor_free(d);
}
END_TEST

START_TEST(test_bounded)
{
	struct doctor	*d = mkdoctor();
	struct buf	 b;
	char		 url[64], id[32];
	int		 i;

	doctor_scan_begin(d, TM(T0));
	for (i = 0; i < DOCTOR_MAX_FINDINGS + 44; i++) {
		snprintf(url, sizeof url, "http://p%d/", i);
		doctor_scan_peer(d, url, "unreachable");
	}
	doctor_scan_end(d);
	ck_assert_uint_eq(doctor_count(d), DOCTOR_MAX_FINDINGS);
	ck_assert_uint_eq(doctor_suppressed(d), 44);
	buf_init(&b, 0);
	doctor_json(d, &b);
	ck_assert_ptr_nonnull(strstr(b.data, "\"suppressed\":44"));
	buf_free(&b);
	/* The registration table is bounded too: many ids, no growth. */
	for (i = 0; i < 3 * DOCTOR_MAX_TRACK; i++) {
		snprintf(id, sizeof id, "i%d", i);
		doctor_register(d, "MANY", id, "h/1:1", 1, 0, TM(T0 + i));
	}
	scan(d, T0 + 3 * DOCTOR_MAX_TRACK);
	ck_assert_uint_eq(doctor_count(d), 0);
	ck_assert_uint_eq(doctor_suppressed(d), 0);
	doctor_free(d);
	doctor_free(NULL);
	ck_assert_uint_eq(doctor_count(NULL), 0);
}
END_TEST

/* The suite. */
static Suite *
doctor_suite(void)
{
	Suite	*s = suite_create("doctor");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, test_renew_interval);
	tcase_add_test(tc, test_id_conflict);
	tcase_add_test(tc, test_reregister_storm);
	tcase_add_test(tc, test_client_clock_skew);
	tcase_add_test(tc, test_peer_clock_skew);
	tcase_add_test(tc, test_peer_replica_host);
	tcase_add_test(tc, test_peer_problem_and_selfpres);
	tcase_add_test(tc, test_bounded);
	suite_add_tcase(s, tc);
	return (s);
}

/* Run the suite. */
int
main(void)
{
	return (check_run(doctor_suite()));
}
