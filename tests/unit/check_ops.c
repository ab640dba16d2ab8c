/*
 * tests/unit/check_ops.c: what the operations endpoints, StatusInfo and
 * the dashboard's feeds report. Without HTTP: this server described as an
 * instance follows the gate (STARTING, UP, DOWN) and reads the port once
 * it is bound; uptime is measured on the monotonic clock from the gate's
 * start, in Eureka's layout; the stats come in StatusInfo's order. Over
 * HTTP on 127.0.0.1 (a loopback evhttp in this process): /health answers
 * by the time each request is given, /info and StatusInfo report it, and
 * the dashboard's feed is JSON inert as HTML. Time is passed by hand.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>

#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>
#include <event2/keyvalq_struct.h>

#include "buf.h"
#include "config.h"
#include "conn.h"
#include "dashboard.h"
#include "gate.h"
#include "http.h"
#include "httputil.h"
#include "fixture.h"
#include "instance.h"
#include "looplag.h"
#include "metrics.h"
#include "ops.h"
#include "registry.h"
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

/*
 * The HTTP fixture: a registry, metrics, ops and a dashboard over the
 * gate of setup(), served by the HTTP front on 127.0.0.1:0; every request
 * is handled at req_now, whatever the clocks say.
 */
static struct event_base	*hbase;
static struct evconnlistener	*hlistener;
static struct conns		*hcs;
static struct hfront_conf	 hfc;
static int			 hport;
static struct registry		*hreg;
static struct metrics		*hmetrics;
static struct ops		*hops;
static struct dashboard		*hdash;
static struct looplag		 hlag;
static unsigned			 hconns;
static struct hk_time		 req_now;

/* One answer as the client saw it. */
struct answer {
	int	 code;
	char	*body;		/* NUL-terminated */
	char	*ctype, *allow, *csp;
};

/* The server side: what rest.c does with a path outside the bases. */
static void
serve_cb(struct hreq *req, void *arg)
{
	const char	*path = hreq_path(req);

	(void)arg;
	if (strcmp(path, "/status") == 0)
		ops_status_info(hops, req, hreq_wants_json(req), req_now);
	else if (!ops_handle(hops, req, path, req_now) &&
	    !dashboard_handle(hdash, req, path, req_now))
		hreq_error(req, 404, "not ours");
}

/* A new connection joins the front. */
static void
accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
    int salen, void *arg)
{
	(void)l;
	(void)sa;
	(void)salen;
	(void)arg;
	conns_accepted(hcs, &hfc, bufferevent_socket_new(hbase, fd,
	    BEV_OPT_CLOSE_ON_FREE), 0);
}

/* A copy of header name of req's answer, or NULL. */
static char *
answer_header(struct evhttp_request *req, const char *name)
{
	const char	*v = evhttp_find_header(
			    evhttp_request_get_input_headers(req), name);

	return (v != NULL ? strdup(v) : NULL);
}

/* The client side: keep the answer and stop the loop. */
static void
answer_cb(struct evhttp_request *req, void *arg)
{
	struct answer	*a = arg;
	struct evbuffer	*in;
	size_t		 n;

	event_base_loopexit(hbase, NULL);
	if (req == NULL || evhttp_request_get_response_code(req) == 0)
		return;
	a->code = evhttp_request_get_response_code(req);
	in = evhttp_request_get_input_buffer(req);
	n = evbuffer_get_length(in);
	a->body = malloc(n + 1);
	evbuffer_remove(in, a->body, n);
	a->body[n] = '\0';
	a->ctype = answer_header(req, "Content-Type");
	a->allow = answer_header(req, "Allow");
	a->csp = answer_header(req, "Content-Security-Policy");
}

/* Send method path (Accept: accept unless NULL) and wait for the answer. */
static struct answer *
fetch(enum evhttp_cmd_type method, const char *path, const char *accept)
{
	struct answer			*a = calloc(1, sizeof *a);
	struct evhttp_connection	*conn;
	struct evhttp_request		*req;

	conn = evhttp_connection_base_new(hbase, NULL, "127.0.0.1",
	    (ev_uint16_t)hport);
	req = evhttp_request_new(answer_cb, a);
	evhttp_add_header(evhttp_request_get_output_headers(req), "Host",
	    "127.0.0.1");
	if (accept != NULL)
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Accept", accept);
	ck_assert_int_eq(evhttp_make_request(conn, req, method, path), 0);
	event_base_dispatch(hbase);
	evhttp_connection_free(conn);
	ck_assert_msg(a->code != 0, "no answer to %s", path);
	return (a);
}

/* Free an answer. */
static void
answer_free(struct answer *a)
{
	free(a->body);
	free(a->ctype);
	free(a->allow);
	free(a->csp);
	free(a);
}

/* setup() plus the modules and the loopback server. */
static void
http_setup(void)
{
	struct registry_conf		 rc;
	struct sockaddr_in		 sin;
	socklen_t			 sl = sizeof sin;

	setup();
	registry_conf_defaults(&rc);
	hreg = registry_new(&rc, T0);
	looplag_init(&hlag, 0);
	hconns = 0;
	hmetrics = metrics_new(&(struct metrics_deps){ .reg = hreg,
	    .gate = gate, .conf = &conf, .peers = &peers, .looplag = &hlag,
	    .open_connections = &hconns, .memory_budget = 1 << 20 });
	hops = ops_new(&(struct ops_deps){ .gate = gate, .conf = &conf,
	    .metrics = hmetrics, .peers = &peers, .hostname = "reg1.example",
	    .port = &port });
	hdash = dashboard_new(&(struct dashboard_deps){ .reg = hreg,
	    .gate = gate, .conf = &conf, .peers = &peers, .ops = hops });
	hbase = event_base_new();
	memset(&hfc, 0, sizeof hfc);
	hfc.cb = serve_cb;
	hfc.methods = EVHTTP_REQ_GET | EVHTTP_REQ_HEAD | EVHTTP_REQ_POST;
	hfc.head_max = HTTP_HEAD_MAX;
	hfc.idle_s = 60;
	hfc.head_ms = hfc.handshake_ms = 10000;
	hcs = conns_new(&(struct conns_deps){ .base = hbase,
	    .max_connections = 100, .open = &hconns });
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	hlistener = evconnlistener_new_bind(hbase, accept_cb, NULL,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE, 16,
	    (struct sockaddr *)&sin, sizeof sin);
	ck_assert_ptr_nonnull(hlistener);
	ck_assert_int_eq(getsockname(evconnlistener_get_fd(hlistener),
	    (struct sockaddr *)&sin, &sl), 0);
	hport = ntohs(sin.sin_port);
	port = hport;
}

/* Free what http_setup made. */
static void
http_teardown(void)
{
	evconnlistener_free(hlistener);
	conns_free(hcs);
	event_base_free(hbase);
	dashboard_free(hdash);
	ops_free(hops);
	metrics_free(hmetrics);
	registry_free(hreg);
	teardown();
}

/*
 * /health is UP once reads are allowed at the request's time and DOWN
 * again once stopping; liveness is always UP; only GET and HEAD. The
 * clocks of this machine say something else entirely, so an endpoint that
 * read them would answer wrongly here.
 */
START_TEST(test_http_health)
{
	struct answer	*a;

	gate_allow_reads_at(gate, 5000 + 30000);
	req_now = (struct hk_time){ .wall_ms = T0, .mono_ms = 5000 + 29999 };
	a = fetch(EVHTTP_REQ_GET, "/health", NULL);
	ck_assert_int_eq(a->code, 503);
	ck_assert_str_eq(a->body, "{\"status\":\"DOWN\"}");
	ck_assert_str_eq(a->ctype, "application/json");
	ck_assert_ptr_nonnull(a->csp);
	answer_free(a);
	a = fetch(EVHTTP_REQ_GET, "/health/liveness", NULL);
	ck_assert_int_eq(a->code, 200);
	answer_free(a);

	req_now.mono_ms = 5000 + 30000;
	a = fetch(EVHTTP_REQ_GET, "/actuator/health/readiness", NULL);
	ck_assert_int_eq(a->code, 200);
	ck_assert_str_eq(a->body, "{\"status\":\"UP\"}");
	answer_free(a);
	a = fetch(EVHTTP_REQ_POST, "/health", NULL);
	ck_assert_int_eq(a->code, 405);
	ck_assert_str_eq(a->allow, "GET, HEAD");
	answer_free(a);

	gate_set_stopping(gate, req_now);
	a = fetch(EVHTTP_REQ_GET, "/health", NULL);
	ck_assert_int_eq(a->code, 503);
	answer_free(a);
	a = fetch(EVHTTP_REQ_GET, "/health/liveness", NULL);
	ck_assert_int_eq(a->code, 200);
	answer_free(a);
}
END_TEST

/* /info, StatusInfo and /metrics report the gate's start and the time given. */
START_TEST(test_http_info_status)
{
	struct answer	*a;

	req_now = (struct hk_time){ .wall_ms = T0 + 1,
	    .mono_ms = 5000 + 90 * MINUTE };
	a = fetch(EVHTTP_REQ_GET, "/info", NULL);
	ck_assert_int_eq(a->code, 200);
	ck_assert_ptr_nonnull(strstr(a->body, "\"start\":{\"time\":"
	    "\"2023-11-14T22:13:20Z\",\"epochMs\":1700000000000}"));
	ck_assert_ptr_nonnull(strstr(a->body, "\"uptime\":\"01:30\","
	    "\"ready\":false,\"shuttingDown\":false}"));
	answer_free(a);

	gate_set_ready(gate, 0, req_now);
	a = fetch(EVHTTP_REQ_GET, "/status", "application/json");
	ck_assert_int_eq(a->code, 200);
	ck_assert_ptr_nonnull(strstr(a->body, "{\"generalStats\":"
	    "{\"environment\":\"test\","));
	ck_assert_ptr_nonnull(strstr(a->body,
	    "\"server-uptime\":\"01:30\"},\"applicationStats\":"
	    "{\"registered-replicas\":\"\","));
	ck_assert_ptr_nonnull(strstr(a->body, "\"status\":\"UP\""));
	answer_free(a);
	a = fetch(EVHTTP_REQ_GET, "/status", NULL);
	ck_assert_int_eq(a->code, 200);
	ck_assert_str_eq(a->ctype, "application/xml");
	ck_assert_ptr_nonnull(strstr(a->body,
	    "<server-uptime>01:30</server-uptime>\n  </generalStats>"));
	ck_assert_ptr_nonnull(strstr(a->body, "  <instanceInfo>"));
	answer_free(a);

	a = fetch(EVHTTP_REQ_GET, "/actuator/prometheus", NULL);
	ck_assert_int_eq(a->code, 200);
	ck_assert_ptr_nonnull(strstr(a->body, "\nheureka_ready 1\n"));
	ck_assert_ptr_nonnull(strstr(a->body,
	    "\nheureka_start_time_seconds 1700000000.000\n"));
	answer_free(a);
}
END_TEST

/*
 * The dashboard's feed: the request's time, null for what is unset, and
 * markup from clients as \u003c-escapes (no raw <, > or &); the page
 * escapes it as HTML; only GET and HEAD.
 */
START_TEST(test_http_dashboard)
{
	struct instance	*in = fixture_instance("APP", "i1", STATUS_UP, 1);
	struct answer	*a;

	kvlist_set(&in->metadata, "note", "<b>x&y</b>");
	ck_assert_int_eq(registry_register(hreg, in, 0, TM(T0)), REG_OK);

	req_now = (struct hk_time){ .wall_ms = T0 + 4242,
	    .mono_ms = 5000 + MINUTE };
	a = fetch(EVHTTP_REQ_GET, "/heureka-assets/status.json", NULL);
	ck_assert_int_eq(a->code, 200);
	ck_assert_ptr_nonnull(strstr(a->body, "\"now\":1700000004242,"
	    "\"startTime\":1700000000000,"));
	ck_assert_ptr_nonnull(strstr(a->body, "\"uptime\":\"00:01\""));
	ck_assert_ptr_nonnull(strstr(a->body, "\"override\":null"));
	ck_assert_ptr_nonnull(strstr(a->body,
	    "[\"note\",\"\\u003cb\\u003ex\\u0026y\\u003c/b\\u003e\"]"));
	ck_assert_ptr_null(strpbrk(a->body, "<>&"));
	answer_free(a);

	a = fetch(EVHTTP_REQ_GET, "/", NULL);
	ck_assert_int_eq(a->code, 200);
	ck_assert_str_eq(a->ctype, "text/html; charset=utf-8");
	ck_assert_ptr_nonnull(strstr(a->body, "&lt;b&gt;x&amp;y&lt;/b&gt;"));
	ck_assert_ptr_null(strstr(a->body, "<b>x"));
	answer_free(a);
	a = fetch(EVHTTP_REQ_POST, "/", NULL);
	ck_assert_int_eq(a->code, 405);
	ck_assert_str_eq(a->allow, "GET, HEAD");
	answer_free(a);
	a = fetch(EVHTTP_REQ_GET, "/heureka-assets/index.html", NULL);
	ck_assert_int_eq(a->code, 404);
	answer_free(a);
}
END_TEST

/* The suite. */
static Suite *
ops_suite(void)
{
	Suite	*s = suite_create("ops");
	TCase	*tc = tcase_create("core");
	TCase	*th = tcase_create("http");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_self_follows_gate);
	tcase_add_test(tc, test_self_appname);
	tcase_add_test(tc, test_uptime);
	tcase_add_test(tc, test_stats);
	tcase_add_test(tc, test_time_iso);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(th, http_setup, http_teardown);
	tcase_add_test(th, test_http_health);
	tcase_add_test(th, test_http_info_status);
	tcase_add_test(th, test_http_dashboard);
	suite_add_tcase(s, th);
	return (s);
}

/* Run the suite. */
int
main(void)
{
	return (check_run(ops_suite()));
}
