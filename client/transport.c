/*
 * transport.c: the real I/O behind libheureka's protocol logic: an evhttp
 * transport (two keep-alive connections per service URL, one for
 * registration traffic and one for queries as the Java client keeps
 * separate registration and query clients, so a slow registry fetch never
 * delays a heartbeat) and a scheduler over libevent timers. Responses sent
 * with Content-Encoding: gzip are inflated by common/gzip.c, with a cap.
 * Names are resolved with evdns so nothing blocks the loop. https:// URLs
 * go through tls_http_connection (common/tls.c) with the client's context:
 * the server's certificate is verified and must match the URL's host.
 * The watch stream gets a third connection per URL with a timeout longer
 * than the server's keep-alive comments, its body handed on chunk by chunk.
 */
#include <sys/queue.h>
#include <sys/time.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "heureka-config.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/dns.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "buf.h"
#include "bug.h"
#include "clock.h"
#include "gzip.h"
#include "httputil.h"
#include "log.h"
#include "tls.h"
#include "url.h"
#include "xmalloc.h"

#include "internal.h"

#define EV_MAX_BODY	(64 * 1024 * 1024)	/* inflated or not */
#define EV_MAX_CONNS	HK_MAX_URLS
#define EV_STREAM_TIMEOUT 45		/* s: 3 keep-alives of the watch */

struct ev_conn {
	char			*url;
	char			*host;
	int			 port;
	char			*prefix;	/* URL path, ends in '/' */
	char			*auth;		/* "Basic ..." from the URL's
						   userinfo, or NULL */
	char			 hostport[300];	/* Host: header, [v6]:port */
	struct evhttp_connection *evc[3];	/* 0 registration, 1 query,
						   2 stream */
};

struct ev_req;
TAILQ_HEAD(ev_reqs, ev_req);

struct ev_tr {
	struct event_base	*base;
	struct evdns_base	*dns;
	char			*my_ip;
	int			 timeout_s;
	SSL_CTX			*tls_ctx;	/* a reference, or NULL */
	struct ev_conn		 conns[EV_MAX_CONNS];
	size_t			 nconns;
	struct ev_reqs		 reqs;
};

struct ev_req {
	struct ev_tr		*t;
	struct evhttp_connection *evc;		/* the one it went out on */
	struct evhttp_request	*req;
	hk_done_cb		 done;
	hk_chunk_cb		 chunk;		/* a stream, or NULL */
	hk_end_cb		 end;
	int			 sse;		/* 200 text/event-stream */
	int			 in_chunk;	/* inside chunk(): free later */
	int			 cancelled;	/* ... because it was */
	int			 err;		/* evhttp's error, -1: none */
	int64_t			 sent_ms;	/* monotonic, when queued */
	const char		*hostport;	/* the connection's, borrowed */
	void			*arg;
	TAILQ_ENTRY(ev_req)	 entry;
};

struct ev_timer {
	struct event	*ev;
	void		(*cb)(void *);
	void		*arg;
};

/* Free what one URL's connection set holds. */
static void
ev_conn_clear(struct ev_conn *cn)
{
	int	j;

	for (j = 0; j < 3; j++) {
		if (cn->evc[j] != NULL)
			evhttp_connection_free(cn->evc[j]);
	}
	free(cn->url);
	free(cn->host);
	free(cn->prefix);
	free(cn->auth);
	memset(cn, 0, sizeof *cn);
}

/*
 * Find or set up the connections for one service URL; NULL with errno
 * EINVAL for a URL that cannot be used (said in the log), ENOMEM when
 * libevent or OpenSSL could not make a connection. The URL is parsed by
 * common/url.c, which takes IPv6 literals ("http://[::1]:8761/eureka/":
 * the host is connected to without its brackets, which the Host header
 * keeps).
 */
static struct ev_conn *
ev_conn_get(struct ev_tr *t, const char *url)
{
	struct ev_conn		*cn;
	struct peer_url		 u;
	char			*cause = NULL;
	size_t			 i;
	int			 j, https;

	for (i = 0; i < t->nconns; i++) {
		if (strcmp(t->conns[i].url, url) == 0)
			return (&t->conns[i]);
	}
	if (t->nconns == EV_MAX_CONNS) {
		errno = ENOMEM;
		return (NULL);
	}
	if (peer_url_parse(url, &u, &cause) != 0) {
		log_warnx("heureka: bad service URL: %s", cause);
		free(cause);
		errno = EINVAL;
		return (NULL);
	}
	https = strcmp(u.scheme, "https") == 0;
	if (https && t->tls_ctx == NULL) {
		log_warnx("heureka: %s: no TLS context", u.display);
		peer_url_clear(&u);
		errno = EINVAL;
		return (NULL);
	}
	cn = &t->conns[t->nconns];
	memset(cn, 0, sizeof *cn);
	cn->url = xstrdup(url);
	cn->host = xstrdup(u.host);
	cn->port = u.port;
	cn->prefix = xstrdup(u.path);
	/* Spring's way: credentials ride in the service URL. */
	if (u.userinfo != NULL)
		cn->auth = http_basic_auth(u.userinfo);
	if (strchr(cn->host, ':') != NULL)
		snprintf(cn->hostport, sizeof cn->hostport, "[%s]:%d",
		    cn->host, cn->port);
	else
		snprintf(cn->hostport, sizeof cn->hostport, "%s:%d",
		    cn->host, cn->port);
	peer_url_clear(&u);
	for (j = 0; j < 3; j++) {
		cn->evc[j] = tls_http_connection(t->base, t->dns,
		    https ? t->tls_ctx : NULL, cn->host, NULL,
		    (unsigned short)cn->port);
		if (cn->evc[j] == NULL) {
			log_warnx("heureka: cannot make a connection to %s",
			    cn->hostport);
			ev_conn_clear(cn);
			errno = ENOMEM;
			return (NULL);
		}
		evhttp_connection_set_retries(cn->evc[j], 0);
		if (j == 2) {
			/* Unbounded body: the client bounds its lines. */
			evhttp_connection_set_timeout(cn->evc[j],
			    t->timeout_s > EV_STREAM_TIMEOUT ? t->timeout_s :
			    EV_STREAM_TIMEOUT);
			continue;
		}
		evhttp_connection_set_timeout(cn->evc[j], t->timeout_s);
		evhttp_connection_set_max_body_size(cn->evc[j], EV_MAX_BODY);
	}
	t->nconns++;
	return (cn);
}

/* evhttp says why a request failed (before ev_req_cb runs). */
static void
ev_req_err_cb(enum evhttp_request_error err, void *arg)
{
	struct ev_req	*r = arg;

	r->err = (int)err;
}

/*
 * Why a request got no answer. libevent 2.1 tells a timeout, an early
 * close or an oversized body through the error callback, a name that did
 * not resolve through the bufferevent's DNS error, a TLS handshake that
 * failed through the OpenSSL error; a connection that could not be made
 * (evhttp_connection_cb: refused, or a connect timeout) comes back with a
 * request and none of them: the time it took tells the two apart.
 */
static int
ev_req_failure(struct ev_req *r, struct evhttp_request *req)
{
	struct bufferevent	*bev;
	const char		*why;
	char			 eb[256];
	int			 dnserr;

	if ((why = tls_connection_verify_error(r->evc)) != NULL) {
		log_warnx("heureka: TLS: server certificate refused: %s", why);
		return (HK_NET_STATUS(HK_NET_TLS));
	}
	if ((why = tls_connection_error(r->evc, eb, sizeof eb)) != NULL) {
		log_warnx("heureka: TLS handshake with %s failed: %s",
		    r->hostport, why);
		return (HK_NET_STATUS(HK_NET_HANDSHAKE));
	}
	bev = evhttp_connection_get_bufferevent(r->evc);
	if (bev != NULL && (dnserr = bufferevent_socket_get_dns_error(bev))
	    != 0) {
		log_debug("heureka: %s: %s", r->hostport,
		    evutil_gai_strerror(dnserr));
		return (HK_NET_STATUS(HK_NET_DNS));
	}
	switch (r->err) {
	case EVREQ_HTTP_TIMEOUT:
		return (HK_NET_STATUS(HK_NET_TIMEOUT));
	case EVREQ_HTTP_EOF:
	case EVREQ_HTTP_BUFFER_ERROR:
		return (HK_NET_STATUS(HK_NET_CLOSED));
	case EVREQ_HTTP_INVALID_HEADER:
		return (HK_NET_STATUS(HK_NET_PROTO));
	case EVREQ_HTTP_DATA_TOO_LONG:
		return (HK_NET_STATUS(HK_NET_TOOBIG));
	case -1:
		if (req == NULL)
			break;
		if (clock_mono_ms() - r->sent_ms >=
		    (int64_t)r->t->timeout_s * 1000 - 100)
			return (HK_NET_STATUS(HK_NET_TIMEOUT));
		return (HK_NET_STATUS(HK_NET_REFUSED));
	}
	return (HK_NET_STATUS(HK_NET_UNKNOWN));
}

/* evhttp finished a request (req NULL or code 0: no answer). */
static void
ev_req_cb(struct evhttp_request *req, void *arg)
{
	struct ev_req		*r = arg;
	struct evbuffer		*in;
	struct buf		 plain;
	const char		*enc;
	char			*body = NULL;
	size_t			 len = 0;
	int			 status = 0, zrc;

	r->req = NULL;
	TAILQ_REMOVE(&r->t->reqs, r, entry);
	if (req != NULL)
		status = evhttp_request_get_response_code(req);
	if (status <= 0)
		status = ev_req_failure(r, req);
	if (r->end != NULL) {
		if (r->sse)
			status = 200;
		else if (status >= 200 && status < 300)
			status = HK_STREAM_NOT_SSE;
		r->end(status, r->arg);
		free(r);
		return;
	}
	if (status > 0) {
		in = evhttp_request_get_input_buffer(req);
		len = evbuffer_get_length(in);
		body = xmalloc(len + 1);
		evbuffer_remove(in, body, len);
		body[len] = '\0';
		enc = evhttp_find_header(evhttp_request_get_input_headers(req),
		    "Content-Encoding");
		if (enc != NULL && strcasecmp(enc, "gzip") == 0 && len > 0) {
			buf_init(&plain, 0);
			if ((zrc = gzip_inflate(body, len, &plain,
			    EV_MAX_BODY)) != 0) {
				log_warnx("heureka: bad gzip body: %s",
				    gzip_strerror(zrc));
				status = HK_NET_STATUS(HK_NET_BADBODY);
				buf_reset(&plain);
			}
			free(body);
			body = buf_steal(&plain, &len);
		}
	}
	r->done(status, body != NULL ? body : "", len, r->arg);
	free(body);
	free(r);
}

/*
 * A request record for arg on cn and its evhttp request, the error
 * callback set (the caller sets the rest); NULL with errno ENOMEM.
 */
static struct evhttp_request *
ev_req_new(struct ev_tr *t, struct ev_conn *cn, void *arg,
    struct ev_req **rp)
{
	struct ev_req		*r;
	struct evhttp_request	*req;

	r = xcalloc(1, sizeof *r);
	r->t = t;
	r->arg = arg;
	r->err = -1;
	r->sent_ms = clock_mono_ms();
	r->hostport = cn->hostport;
	if ((req = evhttp_request_new(ev_req_cb, r)) == NULL) {
		free(r);
		errno = ENOMEM;
		return (NULL);
	}
	evhttp_request_set_error_cb(req, ev_req_err_cb);
	*rp = r;
	return (req);
}

/*
 * Send r's request as cmd to cn's prefix and path on conn j of cn: r
 * queued and returned, or NULL with errno EIO (evhttp freed the request,
 * r is freed here).
 */
static void *
ev_req_make(struct ev_tr *t, struct ev_conn *cn, int j, struct ev_req *r,
    struct evhttp_request *req, enum evhttp_cmd_type cmd, const char *path)
{
	char	*uri;

	xasprintf(&uri, "%s%s", cn->prefix, path);
	if (evhttp_make_request(cn->evc[j], req, cmd, uri) != 0) {
		free(uri);
		free(r);
		errno = EIO;
		return (NULL);
	}
	free(uri);
	r->req = req;
	r->evc = cn->evc[j];
	TAILQ_INSERT_TAIL(&t->reqs, r, entry);
	return (r);
}

/* Send one request; NULL if it could not even be queued. */
static void *
ev_send(void *ctx, const char *url, const char *method, const char *path,
    const char *body, size_t len, hk_done_cb done, void *arg)
{
	struct ev_tr			*t = ctx;
	struct ev_conn			*cn;
	struct ev_req			*r;
	struct evhttp_request		*req;
	struct evkeyvalq		*h;
	enum evhttp_cmd_type		 cmd;
	int				 query;

	if ((cn = ev_conn_get(t, url)) == NULL)
		return (NULL);
	if (strcmp(method, "GET") == 0)
		cmd = EVHTTP_REQ_GET;
	else if (strcmp(method, "POST") == 0)
		cmd = EVHTTP_REQ_POST;
	else if (strcmp(method, "PUT") == 0)
		cmd = EVHTTP_REQ_PUT;
	else if (strcmp(method, "DELETE") == 0)
		cmd = EVHTTP_REQ_DELETE;
	else {
		errno = EINVAL;
		return (NULL);
	}
	query = cmd == EVHTTP_REQ_GET;
	if ((req = ev_req_new(t, cn, arg, &r)) == NULL)
		return (NULL);
	r->done = done;
	h = evhttp_request_get_output_headers(req);
	evhttp_add_header(h, "Host", cn->hostport);
	evhttp_add_header(h, "Accept", "application/json");
	evhttp_add_header(h, "Accept-Encoding", "gzip");
	evhttp_add_header(h, "User-Agent", "heureka-client/" PACKAGE_VERSION);
	evhttp_add_header(h, "DiscoveryIdentity-Name", "DefaultClient");
	evhttp_add_header(h, "DiscoveryIdentity-Version", "1.4");
	if (t->my_ip != NULL)
		evhttp_add_header(h, "DiscoveryIdentity-Id", t->my_ip);
	if (cn->auth != NULL)
		evhttp_add_header(h, "Authorization", cn->auth);
	if (body != NULL) {
		evhttp_add_header(h, "Content-Type", "application/json");
		evbuffer_add(evhttp_request_get_output_buffer(req), body, len);
	}
	return (ev_req_make(t, cn, query, r, req, cmd, path));
}

/* A stream's headers came: is it a 200 event stream? */
static int
ev_stream_header_cb(struct evhttp_request *req, void *arg)
{
	struct ev_req	*r = arg;
	const char	*ct;

	ct = evhttp_find_header(evhttp_request_get_input_headers(req),
	    "Content-Type");
	r->sse = evhttp_request_get_response_code(req) == 200 && ct != NULL &&
	    strncasecmp(ct, "text/event-stream", 17) == 0;
	return (0);
}

/* A piece of a stream's body: hand it on (only from an event stream). */
static void
ev_stream_chunk_cb(struct evhttp_request *req, void *arg)
{
	struct ev_req	*r = arg;
	struct evbuffer	*in = evhttp_request_get_input_buffer(req);
	size_t		 len;
	char		*p;

	if (!r->sse) {
		evbuffer_drain(in, evbuffer_get_length(in));
		return;
	}
	while ((len = evbuffer_get_contiguous_space(in)) > 0) {
		p = (char *)evbuffer_pullup(in, (ev_ssize_t)len);
		r->in_chunk = 1;
		r->chunk(p, len, r->arg);
		r->in_chunk = 0;
		if (r->cancelled) {
			/* Cancelled from chunk(): evhttp defers req's free. */
			free(r);
			return;
		}
		evbuffer_drain(in, len);
	}
}

/* Open a streamed GET on the stream connection; NULL if not queued. */
static void *
ev_stream(void *ctx, const char *url, const char *path, const char *last_id,
    hk_chunk_cb chunk, hk_end_cb end, void *arg)
{
	struct ev_tr		*t = ctx;
	struct ev_conn		*cn;
	struct ev_req		*r;
	struct evhttp_request	*req;
	struct evkeyvalq	*h;

	if ((cn = ev_conn_get(t, url)) == NULL)
		return (NULL);
	if ((req = ev_req_new(t, cn, arg, &r)) == NULL)
		return (NULL);
	r->chunk = chunk;
	r->end = end;
	evhttp_request_set_header_cb(req, ev_stream_header_cb);
	evhttp_request_set_chunked_cb(req, ev_stream_chunk_cb);
	h = evhttp_request_get_output_headers(req);
	evhttp_add_header(h, "Host", cn->hostport);
	evhttp_add_header(h, "Accept", "text/event-stream");
	evhttp_add_header(h, "User-Agent", "heureka-client/" PACKAGE_VERSION);
	if (last_id != NULL)
		evhttp_add_header(h, "Last-Event-ID", last_id);
	if (cn->auth != NULL)
		evhttp_add_header(h, "Authorization", cn->auth);
	return (ev_req_make(t, cn, 2, r, req, EVHTTP_REQ_GET, path));
}

/* Drop a pending request; its callback will not run. */
static void
ev_cancel(void *ctx, void *handle)
{
	struct ev_tr	*t = ctx;
	struct ev_req	*r = handle;

	if (r->req != NULL)
		evhttp_cancel_request(r->req);
	TAILQ_REMOVE(&t->reqs, r, entry);
	if (r->in_chunk)
		r->cancelled = 1;	/* ev_stream_chunk_cb frees it */
	else
		free(r);
}

/* Free the transport, cancelling whatever is still pending. */
static void
ev_free(void *ctx)
{
	struct ev_tr	*t = ctx;
	struct ev_req	*r;
	size_t		 i;

	while ((r = TAILQ_FIRST(&t->reqs)) != NULL) {
		ev_cancel(t, r);
		/*
		 * ev_cancel unlinked it, whether it freed it or not. If it
		 * did not, r may be freed all the same: leave the rest
		 * (leaked) rather than unlink r (a write into freed memory)
		 * or loop on it.
		 */
		if (HK_BUG(TAILQ_FIRST(&t->reqs) == r))
			break;
	}
	for (i = 0; i < t->nconns; i++)
		ev_conn_clear(&t->conns[i]);
	if (t->dns != NULL)
		evdns_base_free(t->dns, 0);
	tls_ctx_free(t->tls_ctx);
	free(t->my_ip);
	free(t);
}

/* Fill in the evhttp transport for a base. */
int
hk_transport_evhttp(struct hk_transport *tr, struct event_base *base,
    const char *my_ip, int connect_timeout_s, int read_timeout_s,
    SSL_CTX *tls_ctx)
{
	struct ev_tr	*t = xcalloc(1, sizeof *t);

	if (tls_ctx != NULL && SSL_CTX_up_ref(tls_ctx) == 1)
		t->tls_ctx = tls_ctx;

	t->base = base;
	t->dns = evdns_base_new(base, EVDNS_BASE_INITIALIZE_NAMESERVERS);
	if (t->dns == NULL)		/* no resolv.conf: still try */
		t->dns = evdns_base_new(base, 0);
	t->my_ip = my_ip != NULL ? xstrdup(my_ip) : NULL;
	/* libevent 2.1 has one timeout for connect and read: the larger. */
	t->timeout_s = read_timeout_s > connect_timeout_s ? read_timeout_s :
	    connect_timeout_s;
	if (t->timeout_s <= 0)
		t->timeout_s = 8;
	TAILQ_INIT(&t->reqs);
	tr->send = ev_send;
	tr->cancel = ev_cancel;
	tr->stream = ev_stream;
	tr->free = ev_free;
	tr->ctx = t;
	return (0);
}

/* libevent timer trampoline. */
static void
ev_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ev_timer	*tm = arg;

	tm->cb(tm->arg);
}

/* New (unarmed) timer; NULL with errno ENOMEM if libevent has none. */
static void *
ev_timer_new(void *ctx, void (*cb)(void *), void *arg)
{
	struct ev_timer	*tm = xcalloc(1, sizeof *tm);

	tm->cb = cb;
	tm->arg = arg;
	if ((tm->ev = evtimer_new(ctx, ev_timer_cb, tm)) == NULL) {
		free(tm);
		errno = ENOMEM;
		return (NULL);
	}
	return (tm);
}

/* (Re)arm a timer ms from now. */
static void
ev_timer_add(void *ctx, void *timer, int64_t ms)
{
	struct ev_timer	*tm = timer;
	struct timeval	 tv;

	tv = clock_ms_tv(ms);
	evtimer_add(tm->ev, &tv);
}

/* Disarm a timer. */
static void
ev_timer_del(void *ctx, void *timer)
{
	struct ev_timer	*tm = timer;

	evtimer_del(tm->ev);
}

/* Free a timer (may be called from its own callback). */
static void
ev_timer_free(void *ctx, void *timer)
{
	struct ev_timer	*tm = timer;

	event_free(tm->ev);
	free(tm);
}

/* Wall clock. */
static int64_t
ev_now(void *ctx)
{
	return (clock_wall_ms());
}

/* Nothing to free: the base belongs to the caller. */
static void
ev_sched_free(void *ctx)
{
}

/* Fill in the libevent scheduler. */
void
hk_sched_libevent(struct hk_sched *sc, struct event_base *base)
{
	sc->timer_new = ev_timer_new;
	sc->timer_add = ev_timer_add;
	sc->timer_del = ev_timer_del;
	sc->timer_free = ev_timer_free;
	sc->now = ev_now;
	sc->free = ev_sched_free;
	sc->ctx = base;
}
