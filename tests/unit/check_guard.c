/*
 * check_guard.c: unit tests for the front's request head parser
 * (http_parse_head, which grew from the header-time guard's) and the
 * router lookup the body caps are decided with (rest_route_lookup): what
 * is refused with which status, what passes and what it reads from a
 * head that passes; and, over loopback (an evhttp client, the front's
 * connections), that a connection uses what its front was given: the
 * body caps, the metrics it counts refusals in, and the close callback
 * with its argument.
 */
#include <sys/socket.h>

#include <netinet/in.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>

#include "config.h"
#include "conn.h"
#include "http.h"
#include "metrics.h"
#include "rest.h"
#include "testutil.h"

/* One loopback exchange: what the client got and the server saw. */
struct loop {
	struct event_base	*base;
	int			 code;		/* client got */
	int			 answered;
	int			 closes;	/* close callbacks seen */
	void			*closearg;	/* their arg */
	int			 want_close;
};

/* Parse len bytes of a head (a copy: the parser writes into it). */
static int
parse_n(const char *head, size_t len, struct hhead *h, const char **reason)
{
	static char		buf[1024];
	static struct hhdr	hdrs[32];

	ck_assert_uint_lt(len, sizeof buf);
	memcpy(buf, head, len);
	return (http_parse_head(buf, len, h, hdrs, 32, reason));
}

/* Parse a NUL-terminated head. */
static int
parse(const char *head, struct hhead *h, const char **reason)
{
	return (parse_n(head, strlen(head), h, reason));
}

static const struct {
	const char	*head;
	int		 code;
	const char	*reason;
} bad_heads[] = {
	{ "POST /eureka/apps/A HTTP/1.1\r\nContent-Length: 5\r\n"
	    "Content-Length: 6\r\n\r\n", 400, "conflicting Content-Length" },
	{ "POST /eureka/apps/A HTTP/1.1\r\nContent-Length: +586\r\n\r\n", 400,
	    "invalid Content-Length" },
	{ "POST /eureka/apps/A HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\n", 400,
	    "invalid Content-Length" },
	{ "POST /eureka/apps/A HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400,
	    "invalid Content-Length" },
	{ "POST /eureka/apps/A HTTP/1.1\r\nContent-Length: "
	    "99999999999999999999999\r\n\r\n", 400, "invalid Content-Length" },
	{ "POST /eureka/apps/A HTTP/1.1\r\nContent-Length:\t5\r\n\r\n", 400,
	    "tab" },
	{ "POST /eureka/apps/A HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
	    400, "Transfer-Encoding" },
	{ "POST /eureka/apps/A HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n", 400, "Transfer-Encoding" },
	{ "POST /eureka/apps/A HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
	    "Content-Length: 5\r\n\r\n", 400, "both" },
	{ "PUT /eureka/apps/A/b HTTP/1.1\r\nX-A: b\r\n c\r\n\r\n", 400,
	    "folding" },
	{ "PUT /eureka/apps/A/b HTTP/1.1\r\nContent-Length : 5\r\n\r\n", 400,
	    "malformed header" },
	{ "PUT /eureka/apps/A/b HTTP/1.1\r\nX-Heureka-Guard: 200 x\r\n\r\n",
	    400, "reserved" },
	{ "GET  /eureka/apps HTTP/1.1\r\n\r\n", 400, "request line" },
	{ "GET /eureka/apps HTTP/2.0\r\n\r\n", 400, "version" },
	{ "GET /eureka/apps\r\n\r\n", 400, "request line" },
	{ "\r\nGET /eureka/apps HTTP/1.1\r\n\r\n", 400, "request line" },
	{ "GET /eureka/apps HTTP/1.1\r\nHost: a\r\n", 400, "malformed" },
};

START_TEST(test_bad_heads)
{
	struct hhead	 h;
	const char		*reason = NULL;

	ck_assert_int_eq(parse(bad_heads[_i].head, &h, &reason),
	    bad_heads[_i].code);
	ck_assert_msg(reason != NULL && strstr(reason, bad_heads[_i].reason),
	    "reason \"%s\" lacks \"%s\"", reason ? reason : "(null)",
	    bad_heads[_i].reason);
}
END_TEST

/* A NUL or another control character in a value is refused. */
START_TEST(test_control_characters)
{
	static const char head[] = "POST /eureka/apps/A HTTP/1.1\r\n"
	    "x-netflix-discovery-replication: true\0\r\n\r\n";
	struct hhead	 h;
	const char		*reason;

	ck_assert_int_eq(parse_n(head, sizeof head - 1, &h, &reason),
	    400);
	ck_assert_ptr_nonnull(strstr(reason, "control character"));
	ck_assert_int_eq(parse("GET / HTTP/1.1\r\nA: b\x7f\r\n\r\n", &h,
	    &reason), 400);
	ck_assert_int_eq(parse("GET / HTTP/1.1\r\nA: b\rc\r\n\r\n", &h,
	    &reason), 400);
}
END_TEST

/* What a head that passes says. */
START_TEST(test_good_heads)
{
	struct hhead	 h;
	const char		*reason;

	ck_assert_int_eq(parse("POST /eureka/apps/A?x=1 HTTP/1.1\r\nHost: a\r\n"
	    "Content-Length: 12\r\nContent-Length: 12\r\n"
	    "Expect: 100-Continue\r\nX-Raw: caf\xc3\xa9\t!\r\n\r\n", &h, &reason),
	    0);
	ck_assert_int_eq(h.method, EVHTTP_REQ_POST);
	ck_assert_int_eq(h.content_length, 12);
	ck_assert_int_eq(h.chunked, 0);
	ck_assert_int_eq(h.expect, 1);
	ck_assert_int_eq((int)h.target_len, 18);
	ck_assert(strncmp(h.target, "/eureka/apps/A?x=1", 18) == 0);
	ck_assert_int_eq(parse("PUT /v2/apps/A/b HTTP/1.0\n"
	    "transfer-encoding: CHUNKED\n\n", &h, &reason), 0);
	ck_assert_int_eq(h.method, EVHTTP_REQ_PUT);
	ck_assert_int_eq(h.chunked, 1);
	ck_assert_int_eq(h.content_length, -1);
	ck_assert_int_eq(parse("BREW /pot HTTP/1.1\r\n\r\n", &h, &reason), 0);
	ck_assert_int_eq(h.method, 0);
}
END_TEST

/* The router lookup the guard decides with. */
START_TEST(test_route_lookup)
{
	enum rest_body	body;
	char		allow[64];

	ck_assert_int_eq(rest_route_lookup("/eureka/apps/A", EVHTTP_REQ_POST,
	    &body, allow, sizeof allow), 0);
	ck_assert_int_eq(body, REST_BODY_INSTANCE);
	ck_assert_int_eq(rest_route_lookup("/eureka/v2/peerreplication/batch",
	    EVHTTP_REQ_POST, &body, allow, sizeof allow), 0);
	ck_assert_int_eq(body, REST_BODY_BATCH);
	ck_assert_int_eq(rest_route_lookup("/eureka/apps/A/b", EVHTTP_REQ_PUT,
	    &body, allow, sizeof allow), 0);
	ck_assert_int_eq(body, REST_BODY_NONE);
	ck_assert_int_eq(rest_route_lookup("/eureka/apps/A/b",
	    EVHTTP_REQ_PATCH, &body, allow, sizeof allow), 405);
	ck_assert_str_eq(allow, "GET, HEAD, PUT, DELETE");
	ck_assert_int_eq(rest_route_lookup("/eureka/apps/A",
	    EVHTTP_REQ_OPTIONS, &body, allow, sizeof allow), 405);
	ck_assert_str_eq(allow, "GET, HEAD, POST");
	ck_assert_int_eq(rest_route_lookup("/eureka/nothing", EVHTTP_REQ_GET,
	    &body, allow, sizeof allow), 404);
	ck_assert_int_eq(rest_route_lookup("/eureka/apps/A%00B",
	    EVHTTP_REQ_GET, &body, allow, sizeof allow), 400);
	ck_assert_int_eq(rest_route_lookup("/metrics", EVHTTP_REQ_GET, &body,
	    allow, sizeof allow), 0);
	ck_assert_int_eq(body, REST_BODY_NONE);
	/* Decoded segments: escapes, raw UTF-8, too many, past 256 bytes. */
	ck_assert_int_eq(rest_route_lookup("/eureka/%61pps/A%2fb",
	    EVHTTP_REQ_POST, &body, allow, sizeof allow), 0);
	ck_assert_int_eq(body, REST_BODY_INSTANCE);
	ck_assert_int_eq(rest_route_lookup("/eureka/apps/%C3%A9/i",
	    EVHTTP_REQ_PUT, &body, allow, sizeof allow), 0);
	ck_assert_int_eq(rest_route_lookup("/eureka/apps/%C3/i",
	    EVHTTP_REQ_PUT, &body, allow, sizeof allow), 400);
	ck_assert_int_eq(rest_route_lookup("/eureka/apps/\xc3/i",
	    EVHTTP_REQ_PUT, &body, allow, sizeof allow), 400);
	ck_assert_int_eq(rest_route_lookup("/eureka/a/b/c/d/e/f/g/h",
	    EVHTTP_REQ_GET, &body, allow, sizeof allow), 404);
	ck_assert_int_eq(rest_route_lookup("/eureka/a/b/c/d/e/f/g/h/i",
	    EVHTTP_REQ_GET, &body, allow, sizeof allow), 400);
	{
		char	path[700];

		snprintf(path, sizeof path, "/eureka/apps/%0300d/%0300d", 1, 2);
		ck_assert_int_eq(rest_route_lookup(path, EVHTTP_REQ_PUT, &body,
		    allow, sizeof allow), 0);
		ck_assert_int_eq(rest_route_lookup(path, EVHTTP_REQ_POST,
		    &body, allow, sizeof allow), 405);
		ck_assert_str_eq(allow, "GET, HEAD, PUT, DELETE");
		snprintf(path, sizeof path, "/eureka/apps/%0300d%%00", 1);
		ck_assert_int_eq(rest_route_lookup(path, EVHTTP_REQ_GET, &body,
		    allow, sizeof allow), 400);
	}
}
END_TEST

/* The server's request callback: 200 (refusals are the front's). */
static void
loop_request_cb(struct hreq *req, void *arg)
{
	(void)arg;
	hreq_send_reply(req, 200, "OK", NULL);
}

static void	loop_close_cb(struct hconn *, void *);

/* What the tests' front is given (the listener's argument). */
struct loop_server {
	struct conns		*cs;
	struct hfront_conf	 fc;
	struct rest		*rest;
	struct config		 conf;
	struct evconnlistener	*l;
	int			 port;
};

/* Every accepted connection is counted and admitted, as server.c does. */
static void
loop_accept_cb(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct loop_server	*ls = arg;
	struct bufferevent	*bev;

	(void)sa;
	(void)salen;
	bev = bufferevent_socket_new(evconnlistener_get_base(l), fd,
	    BEV_OPT_CLOSE_ON_FREE);
	conns_accepted(ls->cs, &ls->fc, bev, 0);
}

/*
 * A front on 127.0.0.1 with the server's body caps (10 and 40 bytes)
 * and head deadline, counting in m.
 */
static void
loop_server_start(struct loop_server *ls, struct loop *lp, unsigned *open,
    struct metrics *m, int64_t head_ms)
{
	struct sockaddr_in	sin;
	socklen_t		sl = sizeof sin;

	memset(ls, 0, sizeof *ls);
	ls->conf.max_body_bytes = 10;
	ls->conf.max_batch_bytes = 40;
	ls->rest = rest_new(&(struct rest_deps){ .conf = &ls->conf,
	    .metrics = m });
	ls->fc.cb = loop_request_cb;
	ls->fc.body_cap = rest_body_cap;
	ls->fc.body_cap_arg = ls->rest;
	ls->fc.methods = 0x1ff;
	ls->fc.head_max = HTTP_HEAD_MAX;
	ls->fc.idle_s = 60;
	ls->fc.head_ms = head_ms;
	ls->fc.handshake_ms = head_ms;
	ls->fc.metrics = m;
	ls->cs = conns_new(&(struct conns_deps){ .base = lp->base,
	    .max_connections = 100, .metrics = m, .open = open,
	    .closecb = loop_close_cb, .closearg = lp });
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ls->l = evconnlistener_new_bind(lp->base, loop_accept_cb, ls,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE, 16,
	    (struct sockaddr *)&sin, sizeof sin);
	ck_assert_ptr_nonnull(ls->l);
	ck_assert_int_eq(getsockname(evconnlistener_get_fd(ls->l),
	    (struct sockaddr *)&sin, &sl), 0);
	ls->port = ntohs(sin.sin_port);
}

/* Close the front and every connection of it. */
static void
loop_server_stop(struct loop_server *ls)
{
	evconnlistener_free(ls->l);
	conns_free(ls->cs);
	rest_free(ls->rest);
}

/* Stop the loop once the answer (and the close, if awaited) is in. */
static void
loop_maybe_done(struct loop *lp)
{
	if (lp->answered && (!lp->want_close || lp->closes > 0))
		event_base_loopexit(lp->base, NULL);
}

/* The exchange under way (the close callback's argument is checked). */
static struct loop	*loop_cur;

/* conn.c passed a connection's close on. */
static void
loop_close_cb(struct hconn *evcon, void *arg)
{
	(void)evcon;
	loop_cur->closes++;
	loop_cur->closearg = arg;
	loop_maybe_done(loop_cur);
}

/* The client's answer. */
static void
loop_done_cb(struct evhttp_request *req, void *arg)
{
	struct loop	*lp = arg;

	lp->code = req != NULL ? evhttp_request_get_response_code(req) : -1;
	lp->answered = 1;
	loop_maybe_done(lp);
}

/* Send method path with len bytes of body on c; the status the client got. */
static int
loop_request(struct loop *lp, struct evhttp_connection *c,
    enum evhttp_cmd_type method, const char *path, size_t len,
    int want_close)
{
	struct evhttp_request		*req;
	struct timeval			 limit = { 10, 0 };
	char				 body[256];

	ck_assert_uint_le(len, sizeof body);
	memset(body, 'x', len);
	lp->answered = lp->closes = 0;
	lp->code = 0;
	lp->want_close = want_close;
	req = evhttp_request_new(loop_done_cb, lp);
	evhttp_add_header(evhttp_request_get_output_headers(req), "Host",
	    "127.0.0.1");
	if (len > 0)
		evbuffer_add(evhttp_request_get_output_buffer(req), body, len);
	ck_assert_int_eq(evhttp_make_request(c, req, method, path), 0);
	/* A bound on a broken run, not a wait: the loop exits on the events. */
	event_base_loopexit(lp->base, &limit);
	event_base_dispatch(lp->base);
	ck_assert(lp->answered);
	return (lp->code);
}

/* POST len bytes to path on port over a new connection; the status. */
static int
loop_post(struct loop *lp, int port, const char *path, size_t len,
    int want_close)
{
	struct evhttp_connection	*c;
	int				 code;

	c = evhttp_connection_base_new(lp->base, NULL, "127.0.0.1",
	    (ev_uint16_t)port);
	code = loop_request(lp, c, EVHTTP_REQ_POST, path, len, want_close);
	evhttp_connection_free(c);
	return (code);
}

START_TEST(test_guard_uses_its_conf)
{
	struct loop			 lp = { 0 };
	unsigned			 open = 0;
	struct metrics_deps		 md = { 0 };	/* counts only */
	struct metrics			*m = metrics_new(&md);
	struct loop_server		 ls;
	int				 port;

	loop_cur = &lp;
	lp.base = event_base_new();
	loop_server_start(&ls, &lp, &open, m, 10000);
	port = ls.port;

	/* Within each route's cap: passed on. */
	ck_assert_int_eq(loop_post(&lp, port, "/eureka/v2/apps/A", 10, 0),
	    200);
	ck_assert_int_eq(loop_post(&lp, port,
	    "/eureka/v2/peerreplication/batch", 40, 0), 200);
	/* Past them: refused at the head, counted, and the close passed on. */
	ck_assert_int_eq(loop_post(&lp, port, "/eureka/v2/apps/A", 11, 1),
	    413);
	ck_assert_int_eq(metrics_limit_count(m, METRICS_LIMIT_BODY), 1);
	ck_assert_int_eq(loop_post(&lp, port,
	    "/eureka/v2/peerreplication/batch", 41, 1), 413);
	ck_assert_int_eq(metrics_limit_count(m, METRICS_LIMIT_BATCH), 1);
	ck_assert_int_ge(lp.closes, 1);
	ck_assert_ptr_eq(lp.closearg, &lp);

	loop_server_stop(&ls);
	ck_assert_uint_eq(open, 0);
	event_base_free(lp.base);
	metrics_free(m);
}
END_TEST

/*
 * One keep-alive connection: every request's head is checked, whether
 * the one before it had no body (no Content-Length), an empty one or
 * one of exactly the cap, which the guard passes on in one move.
 */
START_TEST(test_guard_keepalive)
{
	struct loop			 lp = { 0 };
	unsigned			 open = 0;
	struct loop_server		 ls;
	struct evhttp_connection	*c;
	int				 port;

	loop_cur = &lp;
	lp.base = event_base_new();
	loop_server_start(&ls, &lp, &open, NULL, 10000);
	port = ls.port;

	c = evhttp_connection_base_new(lp.base, NULL, "127.0.0.1",
	    (ev_uint16_t)port);
	ck_assert_int_eq(loop_request(&lp, c, EVHTTP_REQ_GET,
	    "/eureka/v2/apps/A", 0, 0), 200);
	ck_assert_int_eq(loop_request(&lp, c, EVHTTP_REQ_PUT,
	    "/eureka/v2/apps/A/i", 0, 0), 200);
	ck_assert_int_eq(loop_request(&lp, c, EVHTTP_REQ_POST,
	    "/eureka/v2/apps/A", 10, 0), 200);
	ck_assert_int_eq(loop_request(&lp, c, EVHTTP_REQ_POST,
	    "/eureka/v2/peerreplication/batch", 40, 0), 200);
	ck_assert_int_eq(loop_request(&lp, c, EVHTTP_REQ_GET,
	    "/eureka/v2/apps", 0, 0), 200);
	/* After all of those, a body over the cap is still refused. */
	ck_assert_int_eq(loop_request(&lp, c, EVHTTP_REQ_POST,
	    "/eureka/v2/apps/A", 11, 1), 413);
	ck_assert_int_eq(lp.closes, 1);
	evhttp_connection_free(c);

	loop_server_stop(&ls);
	ck_assert_uint_eq(open, 0);
	event_base_free(lp.base);
}
END_TEST

/*
 * A head that never ends: the head deadline closes the connection (no
 * request of it reached evhttp), counts it, and conn.c counts it down;
 * a connection over the cap is closed at its accept and counted.
 */
START_TEST(test_guard_head_deadline)
{
	struct loop			 lp = { 0 };
	struct metrics_deps		 md = { 0 };
	struct metrics			*m = metrics_new(&md);
	struct loop_server		 ls;
	struct sockaddr_in		 sin;
	struct timeval			 limit = { 10, 0 };
	unsigned			 open = 0;
	static const char		 head[] = "GET /eureka/apps HTTP/1.1\r\n"
					     "Host: x\r\n";
	char				 c;
	int				 fd;

	loop_cur = &lp;
	lp.base = event_base_new();
	loop_server_start(&ls, &lp, &open, m, 200);
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons((uint16_t)ls.port);
	ck_assert_int_ge(fd = socket(AF_INET, SOCK_STREAM, 0), 0);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sin, sizeof sin), 0);
	ck_assert_int_eq(write(fd, head, sizeof head - 1),
	    (ssize_t)(sizeof head - 1));
	/* Nothing is answered: only the close ends the loop. */
	lp.answered = 1;
	lp.want_close = 1;
	event_base_loopexit(lp.base, &limit);
	event_base_dispatch(lp.base);
	ck_assert_int_eq(lp.closes, 1);
	ck_assert_uint_eq(metrics_limit_count(m, METRICS_LIMIT_HEAD_TIMEOUT),
	    1);
	ck_assert_uint_eq(open, 0);
	ck_assert_int_eq(read(fd, &c, 1), 0);
	close(fd);

	loop_server_stop(&ls);
	event_base_free(lp.base);
	metrics_free(m);
}
END_TEST

/* The guard's suite. */
static Suite *
guard_suite(void)
{
	Suite	*s = suite_create("guard");
	TCase	*tc = tcase_create("head");

	tcase_add_loop_test(tc, test_bad_heads, 0,
	    (int)(sizeof bad_heads / sizeof bad_heads[0]));
	tcase_add_test(tc, test_control_characters);
	tcase_add_test(tc, test_good_heads);
	tcase_add_test(tc, test_route_lookup);
	suite_add_tcase(s, tc);
	tc = tcase_create("conf");
	tcase_add_test(tc, test_guard_uses_its_conf);
	tcase_add_test(tc, test_guard_keepalive);
	tcase_add_test(tc, test_guard_head_deadline);
	suite_add_tcase(s, tc);
	return (s);
}

/* Run the suite. */
int
main(void)
{
	return (check_run(guard_suite()));
}
