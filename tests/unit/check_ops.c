/*
 * tests/unit/check_ops.c: what the operations endpoints and StatusInfo
 * report, without HTTP: this server described as an instance follows the
 * gate (STARTING, UP, DOWN) and reads the port once it is bound; uptime is
 * measured on the monotonic clock from the gate's start, in Eureka's
 * layout; the stats come in StatusInfo's order. Time is passed by hand.
 */
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "config.h"
#include "gate.h"
#include "instance.h"
#include "ops.h"
#include "testutil.h"

#define T0	1700000000000LL
#define MINUTE	60000LL
#define HOUR	(60 * MINUTE)
#define DAY	(24 * HOUR)

static struct config	 conf;
static struct gate	*gate;
static struct peers	*peers;		/* none: not listening */
static int		 port;
static struct ops	*ops;

/* Ops over a gate started at wall T0, monotonic 5000; port not bound. */
static void
setup(void)
{
	config_defaults(&conf);
	gate = gate_new((struct hk_time){ .wall_ms = T0, .mono_ms = 5000 });
	peers = NULL;
	port = 0;
	ops = ops_new(&(struct ops_deps){ .gate = gate, .conf = &conf,
	    .peers = &peers, .hostname = "reg1.example", .port = &port });
}

/* Free what setup made. */
static void
teardown(void)
{
	ops_free(ops);
	gate_free(gate);
	config_free(&conf);
}

/* Uptime at monotonic 5000 + ms, with the wall clock left behind. */
static const char *
uptime_after(int64_t ms, char *out, size_t len)
{
	ops_uptime(ops, (struct hk_time){ .wall_ms = T0 - DAY,
	    .mono_ms = 5000 + ms }, out, len);
	return (out);
}

/* The self-description follows the gate and the port bound later. */
START_TEST(test_self_follows_gate)
{
	struct instance	*self;

	port = 8761;		/* server_listen binds after ops_new */
	self = ops_self_instance(ops);
	ck_assert_str_eq(self->instance_id, "reg1.example:HEUREKA:8761");
	ck_assert_str_eq(self->app, "HEUREKA");
	ck_assert_str_eq(self->vip_address, "heureka");
	ck_assert_str_eq(self->health_check_url,
	    "http://reg1.example:8761/health");
	ck_assert_int_eq(self->port, 8761);
	ck_assert_int_eq(self->status, STATUS_STARTING);
	ck_assert_int_eq(self->lease.registration_ts, T0);
	ck_assert_int_eq(self->lease.service_up_ts, 0);
	instance_free(self);

	gate_set_ready(gate, 0, TM(T0 + 1000));
	self = ops_self_instance(ops);
	ck_assert_int_eq(self->status, STATUS_UP);
	ck_assert_int_eq(self->lease.service_up_ts, T0);
	instance_free(self);

	gate_set_stopping(gate, TM(T0 + 2000));
	self = ops_self_instance(ops);
	ck_assert_int_eq(self->status, STATUS_DOWN);
	instance_free(self);
}
END_TEST

/* eureka.instance.appname names the self-instance, upper case. */
START_TEST(test_self_appname)
{
	struct instance	*self;

	ck_assert_int_eq(config_set(&conf, "eureka.instance.appname", "myreg",
	    NULL), 0);
	self = ops_self_instance(ops);
	ck_assert_str_eq(self->app, "MYREG");
	ck_assert_str_eq(self->vip_address, "myreg");
	ck_assert_str_eq(self->instance_id, "reg1.example:myreg:0");
	instance_free(self);
}
END_TEST

/* Uptime: monotonic, whole minutes, "N day(s) HH:MM" past a day. */
START_TEST(test_uptime)
{
	char	buf[64];

	ck_assert_str_eq(uptime_after(0, buf, sizeof buf), "00:00");
	ck_assert_str_eq(uptime_after(MINUTE - 1, buf, sizeof buf), "00:00");
	ck_assert_str_eq(uptime_after(2 * HOUR + 5 * MINUTE, buf, sizeof buf),
	    "02:05");
	ck_assert_str_eq(uptime_after(DAY + MINUTE, buf, sizeof buf),
	    "1 day 00:01");
	ck_assert_str_eq(uptime_after(3 * DAY + 23 * HOUR, buf, sizeof buf),
	    "3 days 23:00");
	/* Before the start (cannot happen on a monotonic clock): zero. */
	ck_assert_str_eq(uptime_after(-HOUR, buf, sizeof buf), "00:00");
}
END_TEST

/* StatusInfo's stats: Eureka's keys in order, from the config and time. */
START_TEST(test_stats)
{
	static const char	*keys[OPS_NSTATS] = { "environment",
	    "num-of-cpus", "total-avail-memory", "current-memory-usage",
	    "server-uptime", "registered-replicas", "available-replicas",
	    "unavailable-replicas" };
	struct ops_stats	 st;
	size_t			 i;

	ck_assert_int_eq(config_set(&conf, "eureka.environment", "prod",
	    NULL), 0);
	ops_stats_fill(ops, (struct hk_time){ .wall_ms = T0,
	    .mono_ms = 5000 + 90 * MINUTE }, &st);
	ck_assert_uint_eq(st.n, OPS_NSTATS);
	for (i = 0; i < OPS_NSTATS; i++)
		ck_assert_str_eq(st.key[i], keys[i]);
	ck_assert_str_eq(st.value[0], "prod");
	ck_assert_str_eq(st.value[4], "01:30");
	/* No peers yet: every replica list is empty. */
	ck_assert_str_eq(st.value[5], "");
	ck_assert_str_eq(st.value[6], "");
	ck_assert_str_eq(st.value[7], "");
	ops_stats_clear(&st);
	ck_assert_uint_eq(st.n, 0);
}
END_TEST

/* An ISO 8601 UTC stamp; "-" for never. */
START_TEST(test_time_iso)
{
	char	buf[32];

	ops_time_iso(T0, buf, sizeof buf);
	ck_assert_str_eq(buf, "2023-11-14T22:13:20Z");
	ops_time_iso(0, buf, sizeof buf);
	ck_assert_str_eq(buf, "-");
}
END_TEST

/* The suite. */
static Suite *
ops_suite(void)
{
	Suite	*s = suite_create("ops");
	TCase	*tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_self_follows_gate);
	tcase_add_test(tc, test_self_appname);
	tcase_add_test(tc, test_uptime);
	tcase_add_test(tc, test_stats);
	tcase_add_test(tc, test_time_iso);
	suite_add_tcase(s, tc);
	return (s);
}

/* Run the suite. */
int
main(void)
{
	SRunner	*sr = srunner_create(ops_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
