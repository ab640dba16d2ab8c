/*
 * rest.c: the route table of heurekad (spec §2). Requests under the three
 * REST bases (/eureka/v2/, /eureka/, /v2/; a Netflix {version} segment is
 * skipped) are split into URL-decoded segments and matched against one
 * table; each handler replies exactly once. Bad input gets a 4xx with a
 * short reason and changes nothing. Reads of the registry come from the
 * response cache; writes go to the registry, whose observers (cache,
 * replication) react. A replication batch is decoded here, applied by
 * batch.c and its answer encoded here. The clock is read once per
 * request, at the dispatch entry.
 */
#include <sys/socket.h>
#include <sys/time.h>

#include <sys/queue.h>

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "access.h"
#include "airlift.h"
#include "batch.h"
#include "buf.h"
#include "cache.h"
#include "clock.h"
#include "config.h"
#include "dashboard.h"
#include "httputil.h"
#include "json.h"
#include "gate.h"
#include "log.h"
#include "metrics.h"
#include "ext.h"
#include "ops.h"
#include "ratelimit.h"
#include "registry.h"
#include "rest.h"
#include "watch.h"
#include "xml.h"
#include "xmalloc.h"

#define MAX_SEGMENTS	8
#define SEG_INLINE	256	/* decoded segments of a usual path */
#define BAD_STATUS	"value must be one of UP, DOWN, STARTING, " \
			"OUT_OF_SERVICE, UNKNOWN"

/* One request in flight: what the handlers need, and what metrics record. */
struct rctx {
	const struct rest_deps	*d;		/* the router's */
	struct evhttp_request	*req;
	enum evhttp_cmd_type	 method;
	const char		*route;
	int64_t			 start_us;
	struct hk_time		 now;		/* read once per request */
	struct evkeyvalq	 query;
	int			 replicated;
	char			*seg[MAX_SEGMENTS];	/* in segbuf or segheap */
	int			 nseg;
	char			*segheap;	/* a path longer than segbuf */
	char			 segbuf[SEG_INLINE];	/* last: not cleared */
};

/*
 * A fetch waiting for its body while the cache builds it a slice per loop
 * turn (cache_step): the full registry, the delta, one application or a
 * VIP (res, and name for the last two). Served in arrival order; at most
 * one per
 * connection (evhttp reads a connection's next request only after this
 * one's reply), so their number is bounded by eureka.server.
 * max-connections. A client that goes away meanwhile is noticed by eof_ev
 * and its connection freed.
 */
struct parked {
	TAILQ_ENTRY(parked)	 entry;
	struct rest		*rest;
	struct rctx		 x;		/* no segments, no query */
	enum cache_res		 res;
	struct cache_key	 k;
	char			*name;		/* app or VIP, else NULL */
	struct event		*eof_ev;
};
TAILQ_HEAD(parkedq, parked);

/* The router: its dependencies, copied at rest_new(), and parked fetches. */
struct rest {
	struct rest_deps	 d;
	struct parkedq		 parked;
	struct event		*slice_ev;	/* the next slice, next turn */
};

static struct log_ratelim rest_rl = LOG_RATELIM_INIT(10000, 10);
/* Limits are logged once a minute each, whatever the request rate. */
static struct log_ratelim limit_rate_rl = LOG_RATELIM_INIT(60000, 1);
static struct log_ratelim limit_size_rl = LOG_RATELIM_INIT(60000, 1);
static struct log_ratelim limit_memory_rl = LOG_RATELIM_INIT(60000, 1);
static struct log_ratelim limit_meta_rl = LOG_RATELIM_INIT(60000, 1);
static struct log_ratelim limit_full_rl = LOG_RATELIM_INIT(60000, 1);
static FILE *rest_access_log;

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
static void
rest_record(struct rctx *x, int code)
{
	int64_t	 us = clock_mono_us() - x->start_us;

	if (x->d->metrics != NULL)
		metrics_http(x->d->metrics, x->route, code, us);
	if (rest_access_log != NULL) {
		const char *uri = evhttp_request_get_uri(x->req);
		char *scrub;

		/* URIs are client-controlled: keep them on one line. */
		scrub = xstrdup(uri != NULL ? uri : "-");
		for (char *p = scrub; *p != '\0'; p++) {
			if ((unsigned char)*p < 0x20)
				*p = '?';
		}
		fprintf(rest_access_log, "%lld %s %s %d %lldus\n",
		    (long long)x->now.wall_ms, method_name(x->method), scrub,
		    code,
		    (long long)us);
		fflush(rest_access_log);
		free(scrub);
	}
}

/* Reply with a body and record it. */
static void
reply(struct rctx *x, int code, const char *ctype, const char *body,
    size_t len)
{
	http_reply(x->req, code, ctype, body, len);
	rest_record(x, code);
}

/* Reply with a short plain-text reason. */
static void
reply_error(struct rctx *x, int code, const char *reason)
{
	http_error(x->req, code, reason);
	rest_record(x, code);
	if (code >= 400 && code != 404 && code != 403)
		log_debug("%s: %s %s -> %d %s", __func__,
		    method_name(x->method), evhttp_request_get_uri(x->req),
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
static void
reply_body(struct rctx *x, struct cache_body *b, const struct cache_key *k)
{
	struct evkeyvalq	*h = evhttp_request_get_output_headers(x->req);
	struct evbuffer		*out = evbuffer_new();

	evhttp_add_header(h, "Content-Type", k->format == CACHE_JSON ?
	    "application/json" : "application/xml");
	if (k->gzip)
		evhttp_add_header(h, "Content-Encoding", "gzip");
	cache_body_foreach_seg(b, body_seg_add_cb, out);
	cache_body_unref(b);
	evhttp_send_reply(x->req, 200, "OK", out);
	evbuffer_free(out);
	rest_record(x, 200);
}

/* The cache key this request asks for. */
static void
request_key(struct rctx *x, struct cache_key *k, int allow_gzip)
{
	k->format = http_wants_json(x->req) ? CACHE_JSON : CACHE_XML;
	k->compact = http_wants_compact(x->req);
	k->gzip = allow_gzip && http_wants_gzip(x->req);
}

/* Encode one instance (root-wrapped) in the requested format and send it. */
static void
reply_instance(struct rctx *x, int code, const struct instance *in)
{
	struct buf	b;
	int		json = http_wants_json(x->req);

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
	struct evkeyval	*e;

	TAILQ_FOREACH(e, &x->query, next)
		if (strcmp(e->key, name) == 0)
			return (e->value);
	return (NULL);
}

/* Parse a decimal int64 query parameter; 0 absent, 1 ok, -1 invalid. */
static int
query_i64(struct rctx *x, const char *name, int64_t *out)
{
	const char	*v = query_get(x, name);
	char		*end;
	long long	 n;

	if (v == NULL || *v == '\0')
		return (0);
	errno = 0;
	n = strtoll(v, &end, 10);
	if (errno != 0 || *end != '\0')
		return (-1);
	*out = n;
	return (1);
}

/* Parse a status query parameter; 0 absent, 1 ok, -1 invalid. */
static int
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
static int
query_dirty(struct rctx *x, int64_t *out)
{
	int	rc = query_i64(x, "lastDirtyTimestamp", out);

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
static int
check_access(struct rctx *x)
{
	if (gate_allow_read(x->d->gate, x->now.mono_ms))
		return (0);
	reply(x, 403, NULL, NULL, 0);
	return (-1);
}

/* Forget a parked fetch (its request is answered or gone). */
static void
parked_free(struct parked *p)
{
	TAILQ_REMOVE(&p->rest->parked, p, entry);
	if (p->eof_ev != NULL)
		event_free(p->eof_ev);
	free(p->name);
	free(p);
}

/*
 * The socket of a parked fetch is readable: the client closed it (end of
 * file or an error), so its connection goes, the request with it. Bytes
 * (a pipelined request, TLS records) leave it to the reply to find out.
 */
static void
parked_eof_cb(evutil_socket_t fd, short what, void *arg)
{
	struct parked			*p = arg;
	struct evhttp_connection	*evcon;
	char				 c;
	ssize_t				 n;

	(void)what;
	n = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
	if (n > 0)
		return;
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK ||
	    errno == EINTR)) {
		event_add(p->eof_ev, NULL);
		return;
	}
	log_debug("%s: a client waiting for a full fetch went away",
	    __func__);
	evcon = evhttp_request_get_connection(p->x.req);
	parked_free(p);
	if (evcon != NULL)
		evhttp_connection_free(evcon);
}

/* Arm the next slice for the next loop turn. */
static void
rest_slice_arm(struct rest *rest)
{
	static const struct timeval	zero = { 0, 0 };

	if (!TAILQ_EMPTY(&rest->parked))
		evtimer_add(rest->slice_ev, &zero);
}

/* Reply with resource res's body; an application with none is 404. */
static void
reply_res(struct rctx *x, enum cache_res res, const struct cache_key *k,
    const char *name, int64_t now)
{
	struct cache_body	*b;

	if ((b = cache_res_body(x->d->cache, res, k, name, now)) == NULL)
		reply(x, 404, NULL, NULL, 0);
	else
		reply_body(x, b, k);
}

/* Whether two parked fetches wait for the same body. */
static int
parked_same(const struct parked *a, const struct parked *b)
{
	return (a->res == b->res && memcmp(&a->k, &b->k, sizeof a->k) == 0 &&
	    ((a->name == NULL && b->name == NULL) || (a->name != NULL &&
	    b->name != NULL && strcmp(a->name, b->name) == 0)));
}

/*
 * One loop turn of the parked fetches: a slice of the build for the
 * oldest one's body; when it is done, every fetch parked on that body
 * gets it, in arrival order.
 */
static void
rest_slice_cb(evutil_socket_t fd, short what, void *arg)
{
	struct rest		*rest = arg;
	struct parked		*p, *next, want;
	struct rctx		 x;
	struct hk_time		 now = clock_now();

	(void)fd;
	(void)what;
	if ((p = TAILQ_FIRST(&rest->parked)) == NULL)
		return;
	want = *p;
	if (cache_step(rest->d.cache, want.res, &want.k, want.name,
	    rest->d.conf->cache_encode_slice_bytes, now.mono_ms)) {
		want.name = p->name != NULL ? xstrdup(p->name) : NULL;
		for (; p != NULL; p = next) {
			next = TAILQ_NEXT(p, entry);
			if (!parked_same(p, &want))
				continue;
			x = p->x;
			TAILQ_INIT(&x.query);
			parked_free(p);
			reply_res(&x, want.res, &want.k, want.name,
			    now.mono_ms);
		}
		free(want.name);
	}
	rest_slice_arm(rest);
}

/*
 * Park a fetch until its body is built (see struct parked); -1 when it
 * cannot wait (no connection), and the caller builds it at once.
 */
static int
fetch_park(struct rctx *x, enum cache_res res, const struct cache_key *k,
    const char *name)
{
	struct rest			*rest = (struct rest *)(void *)
					    ((char *)(void *)x->d -
					    offsetof(struct rest, d));
	struct evhttp_connection	*evcon;
	struct event_base		*base;
	struct bufferevent		*bev;
	struct parked			*p;

	if ((evcon = evhttp_request_get_connection(x->req)) == NULL ||
	    (base = evhttp_connection_get_base(evcon)) == NULL)
		return (-1);
	if (rest->slice_ev == NULL)
		rest->slice_ev = evtimer_new(base, rest_slice_cb, rest);
	p = xcalloc(1, sizeof *p);
	p->rest = rest;
	p->x = *x;
	p->x.nseg = 0;
	p->x.segheap = NULL;
	TAILQ_INIT(&p->x.query);
	p->res = res;
	p->k = *k;
	p->name = name != NULL ? xstrdup(name) : NULL;
	if ((bev = evhttp_connection_get_bufferevent(evcon)) != NULL &&
	    bufferevent_getfd(bev) >= 0) {
		p->eof_ev = event_new(base, bufferevent_getfd(bev), EV_READ,
		    parked_eof_cb, p);
		event_add(p->eof_ev, NULL);
	}
	TAILQ_INSERT_TAIL(&rest->parked, p, entry);
	rest_slice_arm(rest);
	return (0);
}

/*
 * A fetch of resource res: a slice of its body's build in this turn; if
 * the body is not done, the request waits for the next turns' slices
 * (struct parked).
 */
static void
fetch_sliced(struct rctx *x, enum cache_res res, const struct cache_key *k,
    const char *name)
{
	if (!cache_step(x->d->cache, res, k, name,
	    x->d->conf->cache_encode_slice_bytes, x->now.mono_ms) &&
	    fetch_park(x, res, k, name) == 0)
		return;
	reply_res(x, res, k, name, x->now.mono_ms);
}

/* GET apps */
static void
h_apps(struct rctx *x)
{
	struct cache_key	 k;

	if (check_access(x) != 0)
		return;
	request_key(x, &k, 1);
	fetch_sliced(x, CACHE_RES_APPS, &k, NULL);
}

/* GET apps/delta */
static void
h_delta(struct rctx *x)
{
	struct cache_key	 k;

	if (x->d->conf->disable_delta) {
		reply(x, 403, NULL, NULL, 0);
		return;
	}
	if (check_access(x) != 0)
		return;
	request_key(x, &k, 1);
	fetch_sliced(x, CACHE_RES_DELTA, &k, NULL);
}

/* GET apps/{app} */
static void
h_app(struct rctx *x)
{
	struct cache_key	 k;

	if (check_access(x) != 0)
		return;
	request_key(x, &k, 1);
	fetch_sliced(x, CACHE_RES_APP, &k, x->seg[1]);
}

/* GET vips/{vip} and svips/{svip}: 200 with an empty list when unknown. */
static void
h_vip(struct rctx *x)
{
	struct cache_key	 k;

	if (check_access(x) != 0)
		return;
	request_key(x, &k, 1);
	fetch_sliced(x, x->seg[0][0] == 's' ? CACHE_RES_SVIP : CACHE_RES_VIP,
	    &k, x->seg[1]);
}

/* Which codec a request body (len bytes) uses: 0 JSON, 1 XML, -1 none. */
static int
body_format(struct rctx *x, const char *body, size_t len)
{
	const char	*ct = http_header(x->req, "Content-Type");
	const char	*p;
	size_t		 i;

	if (ct == NULL || *ct == '\0') {
		/* No type given: sniff, as lenient as a client could want. */
		for (i = 0; i < len && (body[i] == ' ' || body[i] == '\t' ||
		    body[i] == '\r' || body[i] == '\n'); i++)
			;
		if (i == len)
			return (-1);
		return (body[i] == '{' ? 0 : body[i] == '<' ? 1 : -1);
	}
	/* Eureka decodes UTF-8 and ISO-8859-1 only (§2, Content-Type). */
	if ((p = http_find_word(ct, "charset=")) != NULL) {
		p += 8;
		if (*p == '"')
			p++;
		if (strncasecmp(p, "utf-8", 5) != 0 &&
		    strncasecmp(p, "iso-8859-1", 10) != 0)
			return (-1);
	}
	if (http_find_word(ct, "json") != NULL)
		return (0);
	if (http_find_word(ct, "xml") != NULL || strncasecmp(ct, "*/*", 3) == 0)
		return (1);
	return (-1);
}

/* The bounds batch.c checks writes against, from the configuration. */
static void
rest_limits(const struct rest_deps *d, struct batch_limits *lim)
{
	memset(lim, 0, sizeof *lim);
	lim->max_metadata_entries = d->conf->max_metadata_entries;
	lim->max_metadata_key_bytes = d->conf->max_metadata_key_bytes;
	lim->max_metadata_value_bytes = d->conf->max_metadata_value_bytes;
	lim->max_instance_bytes = d->conf->max_instance_bytes;
	lim->memory_budget = d->memory_budget;
	lim->max_instances = d->conf->max_instances;
	lim->max_clock_skew_ms = d->conf->max_clock_skew_ms;
}

/*
 * Record what batch.c found: the limits hit in /metrics, and each kind of
 * refusal in the log, once a minute per kind.
 */
static void
rest_note(const struct rest_deps *d, const struct batch_result *r)
{
	static struct log_ratelim *const rl[BATCH_NNOTES] = {
		[BATCH_NOTE_METADATA] = &limit_meta_rl,
		[BATCH_NOTE_SIZE] = &limit_size_rl,
		[BATCH_NOTE_MEMORY] = &limit_memory_rl,
		[BATCH_NOTE_FULL] = &limit_full_rl,
		[BATCH_NOTE_FUTURE] = &rest_rl,
	};
	int	i;

	if (r->limit_metadata > 0)
		metrics_limit(d->metrics, METRICS_LIMIT_METADATA,
		    r->limit_metadata);
	if (r->limit_metadata_entries > 0)
		metrics_limit(d->metrics, METRICS_LIMIT_METADATA_ENTRIES,
		    r->limit_metadata_entries);
	if (r->limit_instances > 0)
		metrics_limit(d->metrics, METRICS_LIMIT_INSTANCES,
		    r->limit_instances);
	for (i = 0; i < BATCH_NNOTES; i++) {
		if (r->note[i][0] != '\0')
			log_warnx_rl(rl[i], "%s", r->note[i]);
	}
}

/*
 * The per-address registration limit (token bucket): 1, with the 429 and
 * its Retry-After sent, when hit. Peers' replication is never limited.
 */
static int
register_rate_limited(struct rctx *x)
{
	struct evhttp_connection	*conn;
	char				*addr = NULL, ra[32], msg[160];
	ev_uint16_t			 port = 0;
	int64_t				 wait;

	if (x->replicated ||
	    (conn = evhttp_request_get_connection(x->req)) == NULL)
		return (0);
	evhttp_connection_get_peer(conn, &addr, &port);
	if (addr == NULL || (wait = ratelimit_take(x->d->register_rl, addr,
	    x->now.mono_ms)) == 0)
		return (0);
	metrics_limit(x->d->metrics, METRICS_LIMIT_REGISTER_RATE, 1);
	log_warnx_rl(&limit_rate_rl, "limit: registrations from %s above "
	    "eureka.server.register-rate-per-second (%g/s, burst %d): 429",
	    addr, x->d->conf->register_rate_per_second,
	    x->d->conf->register_rate_burst);
	snprintf(ra, sizeof ra, "%lld", (long long)((wait + 999) / 1000));
	evhttp_add_header(evhttp_request_get_output_headers(x->req),
	    "Retry-After", ra);
	snprintf(msg, sizeof msg, "too many registrations from this address "
	    "(eureka.server.register-rate-per-second); retry after %s s", ra);
	reply_error(x, 429, msg);
	return (1);
}

/*
 * Eureka's unparsable-body answer (§2.5) in the body's own format, with
 * heureka's reason added so a developer sees what was wrong.
 */
static void
reply_parse_error(struct rctx *x, int json, const char *cause)
{
	struct buf	e;

	if (cause == NULL)
		cause = "cannot parse request body";
	buf_init(&e, 0);
	if (json) {
		buf_adds(&e, "{\"error\":\"cannot parse request body\","
		    "\"reason\":");
		json_add_string(&e, cause);
		buf_addc(&e, '}');
	} else {
		buf_adds(&e, "<error><message>cannot parse request body"
		    "</message><reason>");
		xml_add_escaped(&e, cause);
		buf_adds(&e, "</reason></error>");
	}
	reply(x, 400, json ? "application/json" : "application/xml", e.data,
	    e.len);
	buf_free(&e);
}

/* POST apps/{app}: register; 204 on success as Java clients require. */
static void
h_register(struct rctx *x)
{
	struct buf	 body;
	const char	*cause = NULL, *bad, *data;
	char		*dcause = NULL, msg[512];
	struct instance	*in;
	size_t		 len, idlen;
	int		 code, fmt;
	enum registry_rc rc;
	struct batch_limits lim;
	struct batch_result res;

	buf_init(&body, 0);
	rest_limits(x->d, &lim);
	memset(&res, 0, sizeof res);
	if (register_rate_limited(x))
		goto out;
	/* The decoders read the request's own bytes: no copy. */
	if ((code = http_body_view(x->req, x->d->conf->max_body_bytes, &body,
	    &data, &len, &cause)) != 0) {
		reply_error(x, code, cause);
		goto out;
	}
	if ((fmt = body_format(x, data, len)) < 0) {
		reply_error(x, 415, "unsupported Content-Type: send "
		    "application/json or application/xml in UTF-8");
		goto out;
	}
	in = fmt == 0 ? json_decode_instance(data, len, x->now.wall_ms,
	    &dcause) : xml_decode_instance(data, len, x->now.wall_ms, &dcause);
	if (in == NULL) {
		log_warnx_rl(&rest_rl, "register %s: %s", x->seg[1],
		    dcause != NULL ? dcause : "cannot parse request body");
		reply_parse_error(x, fmt == 0, dcause);
		free(dcause);
		goto out;
	}
	if ((bad = batch_check_instance(&lim, in, x->seg[1], msg,
	    sizeof msg, &res)) != NULL) {
		reply_error(x, 400, bad);
		instance_free(in);
		goto out;
	}
	in = batch_fill_amazon_id(in);
	/* The id for the refusal's reason (in may be freed by then). */
	if ((idlen = strlen(instance_id(in))) >= sizeof msg)
		idlen = sizeof msg - 1;
	memcpy(msg, instance_id(in), idlen);
	msg[idlen] = '\0';
	registry_set_external_bytes(x->d->reg, cache_bytes(x->d->cache));
	rc = registry_register(x->d->reg, in, x->replicated, x->now);
	if (rc != REG_OK) {
		char	reason[256];

		code = batch_refusal(&lim, rc, x->seg[1], msg, reason,
		    sizeof reason, &res);
		reply_error(x, code, reason);
	} else
		reply(x, 204, NULL, NULL, 0);
out:
	rest_note(x->d, &res);
	buf_free(&body);
}

/* GET apps/{app}/{id}: hidden when expired (§2.6). */
static void
h_instance(struct rctx *x)
{
	const struct instance	*in;

	if ((in = registry_get(x->d->reg, x->seg[1], x->seg[2],
	    x->now.mono_ms)) == NULL) {
		reply(x, 404, NULL, NULL, 0);
		return;
	}
	reply_instance(x, 200, in);
}

/* GET instances/{id}: the first non-expired lease with that id. */
static void
h_instance_by_id(struct rctx *x)
{
	const struct instance	*in;

	if (!instance_name_ok(x->seg[1], INSTANCE_MAX_NAME)) {
		reply_error(x, 400, "invalid instance id");
		return;
	}
	if ((in = registry_find_id(x->d->reg, x->seg[1], x->now.mono_ms)) ==
	    NULL) {
		reply(x, 404, NULL, NULL, 0);
		return;
	}
	reply_instance(x, 200, in);
}

/*
 * PUT apps/{app}/{id}: heartbeat (§2.7). Eureka answers 404 for an
 * unknown instance so the client re-registers, and 409 with its copy to a
 * peer holding an older one. Do not "fix" either.
 */
static void
h_renew(struct rctx *x)
{
	int64_t			 dirty = -1;
	enum instance_status	 ov = STATUS_UNKNOWN;
	const struct instance	*conflict = NULL;
	enum registry_rc	 rc;

	if (query_dirty(x, &dirty) != 0)
		return;
	if (query_status(x, "overriddenstatus", &ov) < 0) {
		reply_error(x, 400, "invalid overriddenstatus");
		return;
	}
	rc = registry_renew(x->d->reg, x->seg[1], x->seg[2], dirty, ov,
	    x->replicated, x->now, &conflict);
	switch (rc) {
	case REG_OK:
		reply(x, 200, NULL, NULL, 0);
		break;
	case REG_CONFLICT:
		if (conflict != NULL)
			reply_instance(x, 409, conflict);
		else
			reply(x, 409, NULL, NULL, 0);
		break;
	default:
		reply(x, 404, NULL, NULL, 0);
		break;
	}
}

/* DELETE apps/{app}/{id}: cancel. */
static void
h_cancel(struct rctx *x)
{
	if (registry_cancel(x->d->reg, x->seg[1], x->seg[2], x->replicated,
	    x->now, -1) != REG_OK) {
		reply(x, 404, NULL, NULL, 0);
		return;
	}
	reply(x, 200, NULL, NULL, 0);
}

/*
 * The answer to a status override or its removal: 200, 404 for an unknown
 * instance, 400 when the request's lastDirtyTimestamp is in the future.
 */
static void
reply_override_rc(struct rctx *x, enum registry_rc rc)
{
	if (rc == REG_FUTURE)
		reply_error(x, 400, "lastDirtyTimestamp is ahead of this "
		    "server's clock by more than eureka.server."
		    "max-clock-skew-ms");
	else
		reply(x, rc == REG_OK ? 200 : 404, NULL, NULL, 0);
}

/* PUT apps/{app}/{id}/status?value=S: operator override (§2.9). */
static void
h_status_put(struct rctx *x)
{
	enum instance_status	 st;
	enum registry_rc	 rc;
	int64_t			 dirty = 0;

	if (query_status(x, "value", &st) <= 0) {
		reply_error(x, 400, BAD_STATUS);
		return;
	}
	if (query_dirty(x, &dirty) != 0)
		return;
	rc = registry_status_update(x->d->reg, x->seg[1], x->seg[2], st, dirty,
	    x->replicated, x->now, -1);
	reply_override_rc(x, rc);
}

/* DELETE apps/{app}/{id}/status[?value=S]: remove the override (§2.10). */
static void
h_status_delete(struct rctx *x)
{
	enum instance_status	 st = STATUS_UNKNOWN;
	enum registry_rc	 rc;
	int64_t			 dirty = 0;

	if (query_status(x, "value", &st) < 0) {
		reply_error(x, 400, BAD_STATUS);
		return;
	}
	if (query_dirty(x, &dirty) != 0)
		return;
	rc = registry_delete_override(x->d->reg, x->seg[1], x->seg[2], st,
	    dirty, x->replicated, x->now, -1);
	reply_override_rc(x, rc);
}

/* PUT apps/{app}/{id}/metadata?k=v...: merge and re-register (§2.11). */
static void
h_metadata(struct rctx *x)
{
	struct kvlist		 kv;
	struct evkeyval		*e;
	const struct instance	*cur;
	size_t			 max = (size_t)x->d->conf->max_metadata_entries;
	size_t			 fresh = 0;
	enum registry_rc	 rc;
	char			 msg[256];
	int			 code;
	struct batch_limits	 lim;
	struct batch_result	 res;

	memset(&kv, 0, sizeof kv);
	memset(&res, 0, sizeof res);
	rest_limits(x->d, &lim);
	if ((cur = registry_get(x->d->reg, x->seg[1], x->seg[2],
	    x->now.mono_ms)) == NULL) {
		reply(x, 404, NULL, NULL, 0);
		return;
	}
	TAILQ_FOREACH(e, &x->query, next) {
		if (e->key[0] == '\0' || strlen(e->key) > INSTANCE_MAX_NAME ||
		    strlen(e->value) > INSTANCE_MAX_STRING) {
			kvlist_clear(&kv);
			reply_error(x, 400, "invalid metadata key or value");
			return;
		}
		if (strlen(e->key) >
		    (size_t)x->d->conf->max_metadata_key_bytes ||
		    strlen(e->value) >
		    (size_t)x->d->conf->max_metadata_value_bytes) {
			kvlist_set(&kv, e->key, e->value);
			reply_error(x, 400, batch_check_metadata(&lim, &kv, msg,
			    sizeof msg, &res));
			rest_note(x->d, &res);
			kvlist_clear(&kv);
			return;
		}
		/* Eureka takes the first value of a repeated parameter. */
		if (kvlist_get(&kv, e->key) != NULL)
			continue;
		/* Stop at the bound: the merged map must stay within it. */
		if (kvlist_get(&cur->metadata, e->key) == NULL &&
		    cur->metadata.n + ++fresh > max) {
			kvlist_clear(&kv);
			metrics_limit(x->d->metrics,
			    METRICS_LIMIT_METADATA_ENTRIES, 1);
			log_warnx_rl(&limit_meta_rl, "limit: %s/%s: more than "
			    "eureka.server.max-metadata-entries (%zu)",
			    x->seg[1], x->seg[2], max);
			reply_error(x, 400, "too many metadata entries");
			return;
		}
		kvlist_set(&kv, e->key, e->value);
	}
	registry_set_external_bytes(x->d->reg, cache_bytes(x->d->cache));
	rc = registry_update_metadata(x->d->reg, x->seg[1], x->seg[2], &kv,
	    x->now);
	if (rc == REG_INVALID)
		reply_error(x, 400, "too many metadata entries");
	else if (rc == REG_TOO_LARGE || rc == REG_NO_MEMORY) {
		code = batch_refusal(&lim, rc, x->seg[1], x->seg[2], msg,
		    sizeof msg, &res);
		rest_note(x->d, &res);
		reply_error(x, code, msg);
	} else if (rc != REG_OK)
		reply(x, 404, NULL, NULL, 0);
	else
		reply(x, 200, NULL, NULL, 0);
	kvlist_clear(&kv);
}

/* Append one override to the JSON map. */
static void
override_cb(const char *id, enum instance_status st, void *arg)
{
	struct buf	*b = arg;

	if (b->len > 1)
		buf_addc(b, ',');
	json_add_string(b, id);
	buf_addc(b, ':');
	json_add_string(b, instance_status_name(st));
}

/* GET serverinfo/statusoverrides: id -> overridden status (§2.16). */
static void
h_overrides(struct rctx *x)
{
	struct buf	b;

	buf_init(&b, 0);
	buf_addc(&b, '{');
	registry_foreach_override(x->d->reg, override_cb, &b, x->now.mono_ms);
	buf_addc(&b, '}');
	reply(x, 200, "application/json", b.data, b.len);
	buf_free(&b);
}

/* PUT asg/{name}/status: heureka is not an AWS registry (§2.15). */
static void
h_asg(struct rctx *x)
{
	reply_error(x, 400, "ASG status is only supported by an AWS registry");
}

/* GET status: StatusInfo (§10.4), rendered by ops.c. */
static void
h_status_info(struct rctx *x)
{
	ops_status_info(x->d->ops, x->req, http_wants_json(x->req), x->now);
	rest_record(x, 200);
}

/* POST peerreplication/batch: a peer's ReplicationList (§6.3). */
static void
h_batch(struct rctx *x)
{
	struct buf		 body, out;
	struct repl_list	 l;
	struct repl_response	 r;
	struct batch_limits	 lim;
	struct batch_result	 res;
	const char		*cause = NULL, *data;
	char			*dcause = NULL;
	size_t			 len;
	int			 code;

	memset(&l, 0, sizeof l);
	memset(&r, 0, sizeof r);
	buf_init(&body, 0);
	buf_init(&out, 0);
	/* The decoder reads the request's own bytes: no copy. */
	if ((code = http_body_view(x->req, x->d->conf->max_batch_bytes, &body,
	    &data, &len, &cause)) != 0) {
		reply_error(x, code, cause);
		goto out;
	}
	if (json_decode_repl_list(data, len, &l, x->now.wall_ms,
	    &dcause) != 0) {
		log_warnx_rl(&rest_rl, "replication batch refused: %s",
		    dcause != NULL ? dcause : "?");
		reply_error(x, 400, dcause != NULL ? dcause :
		    "cannot parse replication batch");
		free(dcause);
		goto out;
	}
	rest_limits(x->d, &lim);
	memset(&res, 0, sizeof res);
	batch_apply(x->d->reg, x->d->cache, &lim, &l, &r, x->now, &res);
	rest_note(x->d, &res);
	json_encode_repl_response(&out, &r);
	reply(x, 200, "application/json", out.data, out.len);
out:
	repl_list_clear(&l);
	repl_response_clear(&r);
	buf_free(&body);
	buf_free(&out);
}

/*
 * airlift's discovery protocol (server/airlift.c): under /v1/ only, and
 * only while heureka.airlift.enabled. Inventory reads wait for the
 * start-up sync as Eureka's do.
 */
static void
h_airlift(struct rctx *x)
{
	const struct evhttp_uri	*u;
	const char		*path;

	u = evhttp_request_get_evhttp_uri(x->req);
	path = u != NULL ? evhttp_uri_get_path(u) : NULL;
	if (!x->d->conf->airlift_enabled || path == NULL ||
	    strncmp(path, "/v1/", 4) != 0) {
		reply_error(x, 404, "no such resource");
		return;
	}
	if ((x->method == EVHTTP_REQ_GET || x->method == EVHTTP_REQ_HEAD) &&
	    check_access(x) != 0)
		return;
	rest_record(x, airlift_http(x->d->airlift, x->req, x->method, x->seg,
	    x->nseg, x->now));
}

/*
 * A route: method mask, pattern ("*" is any one segment), handler, and
 * the body it takes (the header-time guard refuses any other body).
 */
struct route {
	int		 methods;
	const char	*pattern[5];
	const char	*label;
	int		 app_id;	/* 1: seg[1] app, 2: + seg[2] id */
	void		(*fn)(struct rctx *);
	enum rest_body	 body;
};

#define M_GET	EVHTTP_REQ_GET
#define M_POST	EVHTTP_REQ_POST
#define M_PUT	EVHTTP_REQ_PUT
#define M_DEL	EVHTTP_REQ_DELETE

static const struct route routes[] = {
	{ M_GET, { "apps" }, "apps", 0, h_apps },
	{ M_GET, { "apps", "delta" }, "apps_delta", 0, h_delta },
	{ M_GET, { "apps", "*" }, "app", 1, h_app },
	{ M_POST, { "apps", "*" }, "register", 1, h_register,
	    REST_BODY_INSTANCE },
	{ M_GET, { "apps", "*", "*" }, "instance", 2, h_instance },
	{ M_PUT, { "apps", "*", "*" }, "renew", 2, h_renew },
	{ M_DEL, { "apps", "*", "*" }, "cancel", 2, h_cancel },
	{ M_PUT, { "apps", "*", "*", "status" }, "status", 2, h_status_put },
	{ M_DEL, { "apps", "*", "*", "status" }, "status", 2,
	    h_status_delete },
	{ M_PUT, { "apps", "*", "*", "metadata" }, "metadata", 2,
	    h_metadata },
	{ M_GET, { "instances", "*" }, "instance", 0, h_instance_by_id },
	{ M_GET, { "vips", "*" }, "vips", 0, h_vip },
	{ M_GET, { "svips", "*" }, "vips", 0, h_vip },
	{ M_POST, { "peerreplication", "batch" }, "batch", 0, h_batch,
	    REST_BODY_BATCH },
	{ M_PUT, { "asg", "*", "status" }, "asg", 0, h_asg },
	{ M_GET, { "status" }, "status_info", 0, h_status_info },
	{ M_GET, { "serverinfo", "statusoverrides" }, "statusoverrides", 0,
	    h_overrides },
	{ M_GET, { "announcement", "static" }, "airlift_static", 0,
	    h_airlift },
	{ M_POST, { "announcement", "static" }, "airlift_static", 0,
	    h_airlift, REST_BODY_INSTANCE },
	{ M_DEL, { "announcement", "static", "*" }, "airlift_static", 0,
	    h_airlift },
	{ M_PUT, { "announcement", "*" }, "airlift_announce", 0, h_airlift,
	    REST_BODY_INSTANCE },
	{ M_DEL, { "announcement", "*" }, "airlift_announce", 0, h_airlift },
	{ M_DEL, { "announcement", "*", "*" }, "airlift_announce", 0,
	    h_airlift },
	{ M_GET, { "service" }, "airlift_service", 0, h_airlift },
	{ M_GET, { "service", "*" }, "airlift_service", 0, h_airlift },
	{ M_GET, { "service", "*", "*" }, "airlift_service", 0, h_airlift },
};

/* Whether a route's pattern matches the segments. */
static int
route_match(const struct route *r, char **seg, int nseg)
{
	const char	*p;
	int		 i;

	for (i = 0; i < nseg; i++) {
		if ((p = r->pattern[i]) == NULL)
			return (0);
		/* "*", else the first bytes before the whole names. */
		if ((p[0] != '*' || p[1] != '\0') &&
		    (p[0] != seg[i][0] || strcmp(p, seg[i]) != 0))
			return (0);
	}
	return (i < 5 ? r->pattern[i] == NULL : 1);
}

/* The method a route table entry is looked up with (HEAD is GET's). */
static int
route_method(int method)
{
	/* Jersey answers HEAD wherever GET is allowed. */
	return (method == EVHTTP_REQ_HEAD ? EVHTTP_REQ_GET : method);
}

/* "GET, HEAD, PUT" for a method mask, as the Allow header lists them. */
static void
allow_string(int mask, char *out, size_t len)
{
	static const struct {
		int		 m;
		const char	*name;
	} names[] = {
		{ EVHTTP_REQ_GET, "GET, HEAD" },
		{ EVHTTP_REQ_POST, "POST" },
		{ EVHTTP_REQ_PUT, "PUT" },
		{ EVHTTP_REQ_DELETE, "DELETE" },
	};
	size_t	i, used = 0;
	int	n;

	if (len == 0)
		return;
	out[0] = '\0';
	for (i = 0; i < sizeof names / sizeof names[0]; i++) {
		if ((mask & names[i].m) == 0)
			continue;
		n = snprintf(out + used, len - used, "%s%s",
		    used > 0 ? ", " : "", names[i].name);
		if (n < 0 || (size_t)n >= len - used)
			return;
		used += (size_t)n;
	}
}

/*
 * Split a path into URL-decoded segments, NUL-terminated one after the
 * other in buf (buflen bytes) or, for a path too long for it, in one
 * allocation left in *heap for the caller to free: a decoded segment is
 * never longer than its text, so the path's length and a NUL a segment
 * is enough. -1 if too many or undecodable.
 */
static int
split_path(char **seg, int *nseg, const char *path, char *buf,
    size_t buflen, char **heap)
{
	const char	*p = path, *e;
	char		*out = buf, *raw, *dec;
	size_t		 n, declen, plen = strlen(path);

	*heap = NULL;
	if (plen + MAX_SEGMENTS + 1 > buflen)
		out = *heap = xmalloc(plen + MAX_SEGMENTS + 1);
	while (*p != '\0') {
		while (*p == '/')
			p++;
		if (*p == '\0')
			break;
		e = strchr(p, '/');
		n = e != NULL ? (size_t)(e - p) : strlen(p);
		if (*nseg == MAX_SEGMENTS)
			return (-1);
		if (memchr(p, '%', n) == NULL) {
			/* Nothing to decode: the text itself. */
			memcpy(out, p, n);
			declen = n;
		} else {
			raw = xstrndup(p, n);
			dec = evhttp_uridecode(raw, 0, &declen);
			free(raw);
			if (dec == NULL)
				return (-1);
			/* "%00" would hide the rest of a name from C strings. */
			if (strlen(dec) != declen) {
				free(dec);
				return (-1);
			}
			memcpy(out, dec, declen);
			free(dec);
		}
		out[declen] = '\0';
		/* Names go into JSON and XML, which must stay valid UTF-8. */
		if (!utf8_valid_n(out, declen))
			return (-1);
		seg[(*nseg)++] = out;
		out += declen + 1;
		p += n;
	}
	return (0);
}

/* Length of the REST base at the start of path, 0 if none. */
static size_t
rest_base(const char *path)
{
	size_t	n;

	if (strncmp(path, "/eureka/", 8) == 0) {
		n = 8;
		/* Netflix: any {version} segment (v1, v2) selects v2. */
		if ((path[n] == 'v' || path[n] == 'V') &&
		    (path[n + 1] == '1' || path[n + 1] == '2') &&
		    (path[n + 2] == '/' || path[n + 2] == '\0'))
			n += path[n + 2] == '/' ? 3 : 2;
		return (n);
	}
	if (strcmp(path, "/eureka") == 0)
		return (7);
	if (strncmp(path, "/v2/", 4) == 0)
		return (4);
	if (strncmp(path, "/v1/", 4) == 0)
		return (4);
	return (0);
}

/* Route one REST request (path is relative to the base). */
static void
rest_route(struct rctx *x, const char *rel)
{
	const struct route	*r;
	size_t			 i;
	int			 mask = 0;
	char			 allow[64];

	if (strncmp(rel, "heureka/", 8) == 0 || strcmp(rel, "heureka") == 0) {
		x->route = "heureka";
		if ((x->route = watch_http(x->d->watch, x->req,
		    rel[7] == '/' ? rel + 8 : "", &x->query, x->now)) != NULL) {
			rest_record(x, evhttp_request_get_response_code(x->req));
			return;
		}
		x->route = "heureka";
		if (x->d->ext == NULL) {
			reply(x, 404, NULL, NULL, 0);
			return;
		}
		ext_http(x->d->ext, x->req, rel[7] == '/' ? rel + 8 : "");
		rest_record(x, evhttp_request_get_response_code(x->req));
		return;
	}
	if (split_path(x->seg, &x->nseg, rel, x->segbuf, sizeof x->segbuf,
	    &x->segheap) != 0) {
		x->route = "other";
		reply_error(x, 400, "malformed path");
		return;
	}
	for (i = 0; i < sizeof routes / sizeof routes[0]; i++) {
		r = &routes[i];
		if (!route_match(r, x->seg, x->nseg))
			continue;
		mask |= r->methods;
		if ((r->methods & route_method((int)x->method)) == 0)
			continue;
		x->route = r->label;
		if (r->app_id > 0 && path_app_id(x, r->app_id == 2) != 0)
			return;
		r->fn(x);
		return;
	}
	x->route = "other";
	if (mask != 0) {
		/* Jersey's answer: 405 with the methods the resource takes. */
		allow_string(mask, allow, sizeof allow);
		evhttp_add_header(evhttp_request_get_output_headers(x->req),
		    "Allow", allow);
		reply_error(x, 405, "method not allowed");
	} else
		reply_error(x, 404, "no such resource");
}

/*
 * What the route for method on path (a request URI's path, not decoded)
 * takes, for the header-time guard: 0 with *body set when a route takes
 * it (paths outside the REST bases, which take no body, included), else
 * the status the dispatcher will answer (400 malformed path, 404 no such
 * resource, 405 with allow set to the methods the path takes).
 */
int
rest_route_lookup(const char *path, int method, enum rest_body *body,
    char *allow, size_t allowlen)
{
	char		*seg[MAX_SEGMENTS], segbuf[SEG_INLINE], *segheap = NULL;
	const char	*rel;
	size_t		 base, i;
	int		 nseg = 0, mask = 0, rc = 404;

	*body = REST_BODY_NONE;
	if (allowlen > 0)
		allow[0] = '\0';
	if ((base = rest_base(path)) == 0)
		return (0);
	rel = path + base;
	if (strncmp(rel, "heureka/", 8) == 0 || strcmp(rel, "heureka") == 0)
		return (0);
	if (split_path(seg, &nseg, rel, segbuf, sizeof segbuf, &segheap) != 0)
		rc = 400;
	for (i = 0; rc != 400 && i < sizeof routes / sizeof routes[0]; i++) {
		if (!route_match(&routes[i], seg, nseg))
			continue;
		mask |= routes[i].methods;
		if ((routes[i].methods & route_method(method)) != 0) {
			*body = routes[i].body;
			rc = 0;
			break;
		}
	}
	if (rc == 404 && mask != 0) {
		allow_string(mask, allow, allowlen);
		rc = 405;
	}
	free(segheap);
	return (rc);
}

/*
 * Parse a query string into headers, decoding keys as well as values
 * (evhttp_parse_query_str decodes only values) and refusing a decoded
 * NUL, CR or LF, which would cut or split a value in C strings and
 * headers, or invalid UTF-8. -1 on a malformed query.
 */
static int
parse_query(const char *q, struct evkeyvalq *out)
{
	char	*copy, *p, *part, *eq, *k, *v;
	size_t	 klen, vlen;
	int	 rc = 0;

	copy = p = xstrdup(q);
	while (rc == 0 && (part = strsep(&p, "&")) != NULL) {
		if (*part == '\0')
			continue;
		if ((eq = strchr(part, '=')) != NULL)
			*eq++ = '\0';
		k = evhttp_uridecode(part, 1, &klen);
		v = evhttp_uridecode(eq != NULL ? eq : "", 1, &vlen);
		if (k == NULL || v == NULL || strlen(k) != klen ||
		    strlen(v) != vlen || strpbrk(k, "\r\n") != NULL ||
		    strpbrk(v, "\r\n") != NULL || !utf8_valid(k) ||
		    !utf8_valid(v) ||
		    evhttp_add_header(out, k, v) != 0)
			rc = -1;
		free(k);
		free(v);
	}
	free(copy);
	return (rc);
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
	struct evhttp_connection	*evcon;

	if (rest == NULL)
		return;
	if (!TAILQ_EMPTY(&rest->parked))
		log_info("full fetches still waiting for their body at exit: "
		    "their connections close");
	while ((p = TAILQ_FIRST(&rest->parked)) != NULL) {
		evcon = evhttp_request_get_connection(p->x.req);
		parked_free(p);
		if (evcon != NULL)
			evhttp_connection_free(evcon);
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
rctx_init(struct rctx *x, struct evhttp_request *req, struct rest *rest)
{
	memset(x, 0, offsetof(struct rctx, segbuf));
	x->d = &rest->d;
	x->req = req;
	x->method = evhttp_request_get_command(req);
	x->start_us = clock_mono_us();
	x->now = clock_now();
	x->route = "other";
	TAILQ_INIT(&x->query);
}

/* evhttp's generic callback: every request lands here. */
void
rest_dispatch_cb(struct evhttp_request *req, void *arg)
{
	struct rest		*rest = arg;
	struct rctx		 x;
	const struct evhttp_uri	*uri = evhttp_request_get_evhttp_uri(req);
	const char		*path, *q;
	size_t			 base;
	enum access_verdict	 v;
	int			 peer;

	rctx_init(&x, req, rest);
	path = uri != NULL ? evhttp_uri_get_path(uri) : NULL;
	if (path == NULL || *path == '\0')
		path = "/";
	q = uri != NULL ? evhttp_uri_get_query(uri) : NULL;
	if (q != NULL && parse_query(q, &x.query) != 0) {
		reply_error(&x, 400, "malformed query string");
		goto out;
	}
	/* The one access check: nothing below runs for a refused caller. */
	base = rest_base(path);
	v = access_check(x.d->access, req, access_classify(x.method, base > 0 ?
	    path + base : NULL, path), &peer);
	if (v != ACCESS_OK) {
		access_reply(req, v);
		rest_record(&x, v == ACCESS_DENIED_401 ? 401 : 403);
		goto out;
	}
	/* Only a peer's replication header counts (§6: not replicated on). */
	x.replicated = peer && http_is_replication(req);
	if (base == 0) {
		x.route = "dashboard";
		if (ops_handle(x.d->ops, req, path, x.now) ||
		    dashboard_handle(x.d->dashboard, req, path, x.now)) {
			rest_record(&x, evhttp_request_get_response_code(req));
			goto out;
		}
		reply_error(&x, 404, "no such resource");
		goto out;
	}
	rest_route(&x, path + base);
out:
	free(x.segheap);
	evhttp_clear_headers(&x.query);
}

/*
 * Answer a request the header-time guard refused: its code and reason, and
 * the connection closes (the unread body, if any, is never read). A 405
 * lists the methods the path takes.
 */
void
rest_reject(struct evhttp_request *req, struct rest *rest, int code,
    const char *reason)
{
	struct rctx		 x;
	const struct evhttp_uri	*uri = evhttp_request_get_evhttp_uri(req);
	struct evkeyvalq	*out = evhttp_request_get_output_headers(req);
	const char		*path;
	enum rest_body		 body;
	char			 allow[64];
	static struct log_ratelim rl = LOG_RATELIM_INIT(60000, 1);

	rctx_init(&x, req, rest);
	path = uri != NULL ? evhttp_uri_get_path(uri) : NULL;
	evhttp_add_header(out, "Connection", "close");
	if (code == 405 && path != NULL && rest_route_lookup(path,
	    (int)x.method, &body, allow, sizeof allow) == 405)
		evhttp_add_header(out, "Allow", allow);
	log_warnx_rl(&rl, "%s refused at header time: %d %s (logged once "
	    "a minute)", method_name(x.method), code, reason);
	reply_error(&x, code, reason);
}

/* Open (or close, with NULL) the access log: a path or "-" for stderr. */
void
rest_set_access_log(const char *path)
{
	if (rest_access_log != NULL && rest_access_log != stderr)
		fclose(rest_access_log);
	rest_access_log = NULL;
	if (path == NULL || *path == '\0')
		return;
	if (strcmp(path, "-") == 0)
		rest_access_log = stderr;
	else if ((rest_access_log = fopen(path, "a")) == NULL)
		log_warn("access log %s", path);
}
