/*
 * rest.c: the front door of heurekad's Eureka REST API (spec §2): the
 * dispatcher the HTTP front (http_conn.c) calls, which reads the clock once per request, picks
 * the route the path reaches (rest_route.c's one resolution: base,
 * decoded segments, route, and the role a caller needs for it), makes
 * the one access check on that role and calls the route's handler; and
 * the replies every handler sends exactly once, the query helpers, the
 * gate check and the access log. Bad input gets a 4xx with a short reason and changes nothing.
 * The handlers are in rest_handlers.c, the fetches that wait for a body
 * built in slices in rest_park.c; all of them share rest_int.h.
 */


#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>

#include "access.h"
#include "accesslog.h"
#include "buf.h"
#include "cache.h"
#include "config.h"
#include "console.h"
#include "csrf.h"
#include "dashboard.h"
#include "gate.h"
#include "http.h"
#include "httputil.h"
#include "instance.h"
#include "json.h"
#include "log.h"
#include "metrics.h"
#include "ops.h"
#include "rest_int.h"
#include "xmalloc.h"
#include "xml.h"


/* Method name for logs. */
static const char *
method_name(enum evhttp_cmd_type m)
{
	switch (m) {
	case EVHTTP_REQ_GET: return ("GET");
	case EVHTTP_REQ_POST: return ("POST");
	case EVHTTP_REQ_PUT: return ("PUT");
	case EVHTTP_REQ_DELETE: return ("DELETE");
	case EVHTTP_REQ_HEAD: return ("HEAD");
	case EVHTTP_REQ_OPTIONS: return ("OPTIONS");
	case EVHTTP_REQ_PATCH: return ("PATCH");
	case EVHTTP_REQ_TRACE: return ("TRACE");
	case EVHTTP_REQ_CONNECT: return ("CONNECT");
	default: return ("OTHER");
	}
}

/* Record the outcome of a request (metrics and the optional access log). */
void
rest_record(struct rctx *x, int code)
{
	int64_t	 us = clock_mono_us() - x->start_us;

	if (x->d->metrics != NULL)
		metrics_http(x->d->metrics, x->route, code, us);
	if (accesslog_enabled())
		accesslog_write(x->req, method_name(x->method), code, us,
		    x->now.wall_ms);
}

/* Reply with a body and record it. */
void
reply(struct rctx *x, int code, const char *ctype, const char *body,
    size_t len)
{
	hreq_reply(x->req, code, ctype, body, len);
	rest_record(x, code);
}

/* Reply with a short plain-text reason. */
void
reply_error(struct rctx *x, int code, const char *reason)
{
	hreq_error(x->req, code, reason);
	rest_record(x, code);
	if (code >= 400 && code != 404 && code != 403)
		log_debug("%s: %s %s -> %d %s", __func__,
		    method_name(x->method), hreq_uri(x->req),
		    code, reason);
}

/* evbuffer cleanup: the bytes of a cached segment are sent. */
static void
body_seg_sent_cb(const void *data, size_t len, void *seg)
{
	cache_seg_unref(seg);
}

/* Append one cached segment to the reply by reference (a copy if refused). */
static void
body_seg_add_cb(struct cache_seg *seg, const char *data, size_t len,
    void *out)
{
	if (evbuffer_add_reference(out, data, len, body_seg_sent_cb,
	    seg) != 0) {
		evbuffer_add(out, data, len);
		cache_seg_unref(seg);
	}
}

/* Reply with a cached body, by reference. */
void
reply_body(struct rctx *x, struct cache_body *b, const struct cache_key *k)
{
	struct hhdrs		*h = hreq_output_headers(x->req);
	struct evbuffer		*out = evbuffer_new();

	hhdrs_add(h, "Content-Type", k->format == CACHE_JSON ?
	    "application/json" : "application/xml");
	if (k->gzip)
		hhdrs_add(h, "Content-Encoding", "gzip");
	cache_body_foreach_seg(b, body_seg_add_cb, out);
	cache_body_unref(b);
	hreq_send_reply(x->req, 200, "OK", out);
	evbuffer_free(out);
	rest_record(x, 200);
}

/* The cache key this request asks for. */
void
request_key(struct rctx *x, struct cache_key *k, int allow_gzip)
{
	k->format = hreq_wants_json(x->req) ? CACHE_JSON : CACHE_XML;
	k->compact = hreq_wants_compact(x->req);
	k->gzip = allow_gzip && hreq_wants_gzip(x->req);
}

/* Encode one instance (root-wrapped) in the requested format and send it. */
void
reply_instance(struct rctx *x, int code, const struct instance *in)
{
	struct buf	b;
	int		json = hreq_wants_json(x->req);

	buf_init(&b, 0);
	if (json)
		json_encode_instance_root(&b, in);
	else
		xml_encode_instance(&b, in, CODEC_FULL, 0);
	reply(x, code, json ? "application/json" : "application/xml",
	    b.data, b.len);
	buf_free(&b);
}

/* First value of a query parameter; names are case-sensitive as in Jersey. */
static const char *
query_get(struct rctx *x, const char *name)
{
	return (hquery_get(&x->query, name));
}


/* Parse a status query parameter; 0 absent, 1 ok, -1 invalid. */
int
query_status(struct rctx *x, const char *name, enum instance_status *out)
{
	const char	*v = query_get(x, name);

	if (v == NULL)
		return (0);
	if (instance_status_parse(v, out) != 0)
		return (-1);
	return (1);
}

/* The optional lastDirtyTimestamp parameter; -1 after a 400 was sent. */
int
query_dirty(struct rctx *x, int64_t *out)
{
	int	rc = hquery_i64(&x->query, "lastDirtyTimestamp", out);

	if (rc == 0 || (rc > 0 && *out >= 0 && *out <= INSTANCE_TS_MAX))
		return (0);
	reply_error(x, 400, "lastDirtyTimestamp must be " INSTANCE_TS_RULE);
	return (-1);
}

/* App and id from the path, with the sanity checks on both. */
static int
path_app_id(struct rctx *x, int want_id)
{
	if (!instance_name_ok(x->seg[1], INSTANCE_MAX_NAME)) {
		reply_error(x, 400, "invalid application name");
		return (-1);
	}
	str_upper(x->seg[1]);
	if (want_id && !instance_name_ok(x->seg[2], INSTANCE_MAX_NAME)) {
		reply_error(x, 400, "invalid instance id");
		return (-1);
	}
	return (0);
}

/* Reads of the registry are refused while the start-up sync runs (§6.4). */
int
check_access(struct rctx *x)
{
	if (gate_allow_read(x->d->gate, x->now.mono_ms))
		return (0);
	reply(x, 403, NULL, NULL, 0);
	return (-1);
}

/* A router over deps; see rest.h. */
struct rest *
rest_new(const struct rest_deps *deps)
{
	struct rest	*rest = xcalloc(1, sizeof *rest);

	rest->d = *deps;
	TAILQ_INIT(&rest->parked);
	return (rest);
}

/*
 * Free the router (not what it points to). Fetches still parked go with
 * their connections (the loop has stopped: there is no one to answer).
 */
void
rest_free(struct rest *rest)
{
	struct parked			*p;
	struct hconn			*evcon;

	if (rest == NULL)
		return;
	if (!TAILQ_EMPTY(&rest->parked))
		log_info("full fetches still waiting for their body at exit: "
		    "their connections close");
	while ((p = TAILQ_FIRST(&rest->parked)) != NULL) {
		evcon = hreq_conn(p->x.req);
		parked_free(p);
		if (evcon != NULL)
			hconn_free(evcon);
	}
	if (rest->slice_ev != NULL)
		event_free(rest->slice_ev);
	free(rest);
}

/*
 * A fresh request context: its clock, start time and empty query (all
 * zero but the segments' buffer, which split_path writes before use).
 */
static void
rctx_init(struct rctx *x, struct hreq *req, struct rest *rest)
{
	memset(x, 0, offsetof(struct rctx, segbuf));
	x->d = &rest->d;
	x->req = req;
	x->method = hreq_method(req);
	x->start_us = clock_mono_us();
	x->now = clock_now();
	x->route = "other";
}

/* A client past its failed-authentication burst: count it, log it. */
static void
rest_auth_throttled(struct rctx *x)
{
	static struct log_ratelim	 rl = LOG_RATELIM_INIT(60000, 1);
	struct hconn			*conn;
	char				*addr = NULL;
	ev_uint16_t			 port = 0;

	metrics_limit(x->d->metrics, METRICS_LIMIT_AUTH_RATE, 1);
	if ((conn = hreq_conn(x->req)) != NULL)
		hconn_peer(conn, &addr, &port);
	log_warnx_rl(&rl, "limit: failed authentications from %s above "
	    "heureka.security.auth-failures-per-second (%g/s, burst %d): "
	    "429 (logged once a minute)", addr != NULL ? addr : "?",
	    x->d->conf->security_auth_failures_per_second,
	    x->d->conf->security_auth_failure_burst);
}

/* The front's callback: every request lands here. */
void
rest_dispatch_cb(struct hreq *req, void *arg)
{
	struct rest		*rest = arg;
	struct rctx		 x;
	struct rest_target	 t;
	const struct route	*r;
	const char		*path, *q;
	enum access_verdict	 v;
	int64_t			 retry;
	const char		*why;
	char			 user[128];
	int			 peer;

	rctx_init(&x, req, rest);
	path = hreq_path(req);
	q = hreq_query_string(req);
	if (q != NULL && parse_query(req, q, &x.query) != 0) {
		reply_error(&x, 400, "malformed query string");
		goto out;
	}
	*hreq_query(req) = x.query;	/* for the handlers given req only */
	/*
	 * The one resolution and the one access check, on the role of the
	 * route the path reaches: nothing below runs for a refused caller.
	 */
	r = route_resolve(path, (int)x.method, x.seg, &x.nseg, x.segbuf,
	    sizeof x.segbuf, &x.segheap, &t);
	v = access_check_user(x.d->access, req, t.role, x.now.mono_ms, &peer,
	    &retry, user, sizeof user);
	if (v != ACCESS_OK) {
		if (v == ACCESS_THROTTLED)
			rest_auth_throttled(&x);
		access_reply(req, v, retry);
		rest_record(&x, v == ACCESS_DENIED_401 ? 401 :
		    v == ACCESS_THROTTLED ? 429 : 403);
		goto out;
	}
	/*
	 * A browser's write needs the dashboard's token and this origin
	 * (csrf.h); curl and Eureka clients send none of its headers.
	 */
	if (x.d->csrf != NULL && csrf_check(x.d->csrf, req,
	    access_enabled(x.d->access) || x.d->conf->dashboard_actions,
	    &why) != 0) {
		reply_error(&x, 403, why);
		goto out;
	}
	/* Only a peer's replication header counts (§6: not replicated on). */
	x.replicated = peer && hreq_is_replication(req);
	console_enter(x.d->console, req, user, x.replicated);
	if (t.outside) {
		x.route = "dashboard";
		if (ops_handle(x.d->ops, req, path, x.now) ||
		    dashboard_handle(x.d->dashboard, req, path, x.now)) {
			rest_record(&x, hreq_response_code(req));
			goto out;
		}
		reply_error(&x, 404, "no such resource");
		goto out;
	}
	if (r == NULL) {
		if (t.status == 405) {
			/* Jersey's answer: the methods the resource takes. */
			hhdrs_add(hreq_output_headers(req),
			    "Allow", t.allow);
			reply_error(&x, 405, "method not allowed");
		} else if (t.status == 400)
			reply_error(&x, 400, "malformed path");
		else
			reply_error(&x, 404, "no such resource");
		goto out;
	}
	x.route = r->label;
	if (r->app_id > 0 && path_app_id(&x, r->app_id == 2) != 0)
		goto out;
	r->fn(&x);
out:
	console_leave(x.d->console);
	free(x.segheap);
}

/*
 * Answer a request the front refused at its head: its code and reason, and
 * the connection closes (the unread body, if any, is never read). A 405
 * lists the methods the path takes.
 */
void
rest_reject(struct hreq *req, struct rest *rest, int code,
    const char *reason)
{
	struct rctx		 x;
	struct hhdrs		*out = hreq_output_headers(req);
	const char		*path;
	enum rest_body		 body;
	char			 allow[64];
	static struct log_ratelim rl = LOG_RATELIM_INIT(60000, 1);

	rctx_init(&x, req, rest);
	path = hreq_path(req);
	if (hhdrs_find(out, "Connection") == NULL)
		hhdrs_add(out, "Connection", "close");
	if (code == 405 && path != NULL && rest_route_lookup(path,
	    (int)x.method, &body, allow, sizeof allow) == 405)
		hhdrs_add(out, "Allow", allow);
	log_warnx_rl(&rl, "%s refused at header time: %d %s (logged once "
	    "a minute)", method_name(x.method), code, reason);
	reply_error(&x, code, reason);
}

/*
 * The cap on a request's body, decided on its head (the front's
 * body_cap): the route the path reaches says which body it takes (the
 * same lookup as the dispatcher's); a refusal is counted in /metrics.
 */
int
rest_body_cap(void *arg, const struct hhead *h, const char *path,
    uint64_t *cap, enum metrics_limit *limit, char *reason, size_t len)
{
	struct rest	*rest = arg;
	enum rest_body	 body;
	char		 allow[64];
	int		 rc;

	rc = rest_route_lookup(path, h->method, &body, allow, sizeof allow);
	if (rc != 0) {
		snprintf(reason, len, "%s", rc == 405 ? "method not allowed" :
		    rc == 404 ? "no such resource" : "malformed path");
		return (rc);
	}
	*limit = body == REST_BODY_BATCH ? METRICS_LIMIT_BATCH :
	    METRICS_LIMIT_BODY;
	switch (body) {
	case REST_BODY_INSTANCE:
		*cap = rest->d.conf->max_body_bytes;
		break;
	case REST_BODY_BATCH:
		*cap = rest->d.conf->max_batch_bytes;
		break;
	default:
		/*
		 * No body is used here, but clients send small ones by habit
		 * (the Netflix Jersey 3 client PUTs "{}" with every heartbeat,
		 * some send an empty chunked body): read and ignore up to
		 * HTTP_IGNORED_BODY_MAX bytes, refuse more at the head.
		 */
		*cap = HTTP_IGNORED_BODY_MAX;
		if (h->chunked || h->content_length <= HTTP_IGNORED_BODY_MAX)
			return (0);
		snprintf(reason, len, "this resource takes no request body "
		    "(at most %d bytes are read and ignored)",
		    HTTP_IGNORED_BODY_MAX);
		metrics_limit(rest->d.metrics, *limit, 1);
		return (413);
	}
	if (h->content_length > 0 && (uint64_t)h->content_length > *cap) {
		snprintf(reason, len, "request body too large (%lld bytes "
		    "declared, at most %llu here)",
		    (long long)h->content_length, (unsigned long long)*cap);
		metrics_limit(rest->d.metrics, *limit, 1);
		return (413);
	}
	return (0);
}
