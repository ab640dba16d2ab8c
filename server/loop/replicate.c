/*
 * replicate.c: replication to the cluster's peers (spec §6.2, §6.3) on
 * the server's event loop, and the peers themselves: list, connections,
 * TLS. The start-up sync and anti-entropy are sync.c's.
 *
 * Each peer has one bounded queue of replication tasks keyed by Eureka's
 * task id, so repeated heartbeats coalesce, and one batch in flight at a
 * time: POST {peer}peerreplication/batch/ with a ReplicationList of up to
 * 250 items (§6.3). Eureka releases a batch when the oldest task has waited
 * 500 ms; heureka releases one PEER_DISPATCH_MS (20 ms) after the first
 * task arrives, because "one batch in flight per peer" already batches
 * under load (whatever arrives while a batch is out goes in the next one)
 * and a short delay makes a register visible on the peers in tens of
 * milliseconds instead of half a second.
 *
 * Failures follow §6.2: 503 or a read timeout is congestion, other I/O
 * errors are transient; both put the batch back at the front and pause the
 * peer with exponential back-off and jitter (never an immediate retry after
 * a timeout, which is how Eureka floods a struggling peer). Any other HTTP
 * status drops the batch. Every peer has its own timer and its own
 * connections, so a slow or dead peer only delays itself.
 *
 * https:// peers: every connection (replication, sync, anti-entropy) is
 * made by peer_connect through tls_http_connection, with the one client
 * context built from heureka.peer.ssl.* (trust bundle, and a client
 * certificate for mutual TLS). The peer's certificate must verify and
 * match the URL's host; a peer that fails that is unreachable: its
 * batches stay queued, back off and count as failures. SIGHUP rebuilds
 * the context; a peer moves its connections to it the next time it has
 * nothing in flight (peer_tls_refresh), so no request is cut short.
 *
 * The clock is read once where an event enters (the observer takes the
 * registry event's time, each timer and HTTP callback reads clock_now())
 * and passed down.
 */

#include <sys/types.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "buf.h"
#include "clock.h"
#include "config.h"
#include "gzip.h"
#include "httputil.h"
#include "instance.h"
#include "json.h"
#include "log.h"
#include "peers_int.h"
#include "registry.h"
#include "replicate.h"
#include "tls.h"
#include "xmalloc.h"

#define PEER_CTL_TIMEOUT_MIN_MS	2000	/* sync/anti-entropy requests */
#define PEER_REPL_BODY_MAX	(16 * 1024 * 1024)
#define PEER_SINGLE_WRITE_MAX	(4 * 1024 * 1024)	/* a batch per write */

/* ------------------------------------------------------------------ */
/* Enqueueing: the registry observer.                                   */

/* Queue a task for one peer and make sure its timer runs. */
void
peer_enqueue(struct peer *p, struct peer_task *t, int64_t mono)
{
	if (peer_queue_push(p->q, t, mono) == PEER_PUSH_DROPPED)
		log_warnx_rl(&p->ps->rl, "peer %s: replication queue full, "
		    "oldest task dropped", p->u.display);
	peer_kick(p, PEER_DISPATCH_MS, mono);
}

/* Registry observer: replicate every change that did not come from a peer. */
static void
peers_observe_cb(const struct registry_event *ev, void *arg)
{
	struct peers		*ps = arg;
	struct peer_task	*t;
	int64_t			 mono = ev->now.mono_ms;
	size_t			 i;

	if (ev->replicated || ev->type == REG_EV_EVICT || ps->n == 0)
		return;
	for (i = 0; i < ps->n; i++) {
		t = peer_task_from_event(ev, mono,
		    ps->conf->max_time_for_replication);
		if (t == NULL)
			return;
		peer_enqueue(ps->v[i], t, mono);
	}
}

/* Queue a Register of our copy of (app, id) for p, if we have one. */
static void
peer_push_register(struct peer *p, const char *app, const char *id,
    int64_t mono)
{
	const struct instance	*in;

	in = registry_get(p->ps->reg, app, id, mono);
	if (in == NULL)
		return;
	peer_enqueue(p, peer_task_register(app, id, in, mono), mono);
}

/* ------------------------------------------------------------------ */
/* HTTP glue.                                                           */

/* The response body, inflated if gzip; -1 on a bad body or over max. */
int
peer_body(struct evhttp_request *req, struct buf *out, size_t max)
{
	struct evbuffer	*eb = evhttp_request_get_input_buffer(req);
	const char	*enc;
	const char	*data;
	size_t		 len = evbuffer_get_length(eb);

	data = (const char *)evbuffer_pullup(eb, -1);
	enc = evhttp_find_header(evhttp_request_get_input_headers(req),
	    "Content-Encoding");
	if (enc != NULL && strcasecmp(enc, "gzip") == 0)
		return (gzip_inflate(data, len, out, max));
	if (len > max)
		return (-1);
	buf_add(out, data, len);
	return (0);
}

/* Common request headers. */
void
peer_headers(struct peer *p, struct evhttp_request *req)
{
	struct evkeyvalq	*h = evhttp_request_get_output_headers(req);
	const struct config	*conf = p->ps->conf;

	evhttp_add_header(h, "Host", p->hosthdr);
	evhttp_add_header(h, "Accept", "application/json");
	evhttp_add_header(h, "Accept-Encoding", "gzip");
	evhttp_add_header(h, "DiscoveryIdentity-Name", "DefaultServer");
	evhttp_add_header(h, "DiscoveryIdentity-Version", "1.0");
	evhttp_add_header(h, "DiscoveryIdentity-Id",
	    conf->instance_ip_address != NULL ? conf->instance_ip_address :
	    "127.0.0.1");
	if (p->auth != NULL)
		evhttp_add_header(h, "Authorization", p->auth);
}

/* Record why a request failed (called by libevent before the callback). */
static void
peer_batch_error_cb(enum evhttp_request_error err, void *arg)
{
	struct peer_batch	*b = arg;

	b->error_seen = 1;
	if (err == EVREQ_HTTP_TIMEOUT)
		b->timed_out = 1;
}

/* Free a finished batch's tasks and the batch. */
static void
peer_batch_free(struct peer_batch *b)
{
	size_t	i;

	if (b == NULL)
		return;
	for (i = 0; i < b->n; i++)
		peer_task_free(b->tasks[i]);
	free(b);
}

/* Per-item results of a successful batch (§6.2). */
static void
peer_batch_items(struct peer *p, struct peer_batch *b,
    struct repl_response *resp, struct hk_time now)
{
	struct peers		*ps = p->ps;
	struct repl_item	*it;
	struct instance		*dup;
	size_t			 i;
	int			 code;

	if (resp->n != b->n) {
		log_warnx_rl(&p->ps->rl, "peer %s: %zu answers to %zu items, "
		    "ignored", p->u.display, resp->n, b->n);
		return;
	}
	for (i = 0; i < b->n; i++) {
		it = &b->tasks[i]->item;
		code = resp->items[i].status_code;
		if (code >= 200 && code < 300)
			continue;
		if (it->action == REPL_HEARTBEAT && code == 404) {
			/* The peer lost it: send our copy. */
			p->not_found++;
			peer_push_register(p, it->app_name, it->id,
			    now.mono_ms);
		} else if (it->action == REPL_HEARTBEAT &&
		    resp->items[i].entity != NULL &&
		    ps->conf->sync_when_timestamp_differs) {
			/* The peer has a newer copy: adopt it (§6.2). */
			p->conflicts++;
			dup = resp->items[i].entity;
			resp->items[i].entity = NULL;
			if (dup->overridden_status != STATUS_UNKNOWN)
				registry_set_override(ps->reg, instance_id(dup),
				    dup->overridden_status, now.mono_ms);
			registry_register(ps->reg, dup, 1, now);
		} else
			log_debug("%s: %s %s/%s answered %d by %s", __func__,
			    repl_action_name(it->action), it->app_name, it->id,
			    code, p->u.display);
	}
}

/* A batch came back (or failed). */
static void
peer_batch_done_cb(struct evhttp_request *req, void *arg)
{
	struct peer_batch	*b = arg;
	struct peer		*p = b->p;
	struct repl_response	 resp;
	struct buf		 body;
	enum peer_failure	 kind;
	char			*cause = NULL;
	const char		*why;
	struct hk_time		 now = clock_now();
	int			 code = 0;
	int64_t			 mono = now.mono_ms, delay;

	p->inflight = NULL;
	if (req != NULL)
		code = evhttp_request_get_response_code(req);
	if (code >= 200 && code < 300) {
		p->reachable = 1;
		p->last_success_ms = now.wall_ms;
		peer_backoff_ok(&p->bo);
		memset(&resp, 0, sizeof resp);
		buf_init(&body, PEER_REPL_BODY_MAX);
		if (peer_body(req, &body, PEER_REPL_BODY_MAX) != 0)
			log_warnx_rl(&p->ps->rl, "peer %s: bad batch answer",
			    p->u.display);
		else if (json_decode_repl_response(body.data, body.len, &resp,
		    now.wall_ms, &cause) != 0) {
			log_warnx_rl(&p->ps->rl, "peer %s: batch answer: %s",
			    p->u.display, cause);
			free(cause);
		} else
			peer_batch_items(p, b, &resp, now);
		repl_response_clear(&resp);
		buf_free(&body);
		peer_batch_free(b);
		peer_kick(p, 0, mono);
		return;
	}
	p->failures++;
	p->reachable = 0;
	if (code == 503 || (code == 0 && b->timed_out))
		kind = PEER_FAIL_CONGESTION;
	else if (code == 0)
		kind = PEER_FAIL_TRANSIENT;
	else
		kind = PEER_FAIL_PERMANENT;
	delay = peer_backoff_fail(&p->bo, kind, arc4random(), mono);
	if (kind == PEER_FAIL_PERMANENT) {
		/*
		 * Eureka drops the batch and does not pause; we drop it too
		 * but keep the (short) pause so a peer answering 500 to
		 * everything is not hit every 20 ms.
		 */
		log_warnx_rl(&p->ps->rl, "peer %s: batch answered %d, %zu "
		    "items dropped%s", p->u.display, code, b->n,
		    code == 401 || code == 403 ? " (check the credentials in "
		    "its URL or the peer certificate)" : "");
		p->failed_items += b->n;
		peer_batch_free(b);
	} else {
		why = tls_connection_verify_error(p->repl_conn);
		log_warnx_rl(&p->ps->rl, "peer %s: %s%s%s, retry in %lld ms",
		    p->u.display, code == 503 ? "503 (congestion)" :
		    b->timed_out ? "timeout" : "unreachable",
		    why != NULL ? ": TLS: peer certificate refused: " : "",
		    why != NULL ? why : "", (long long)delay);
		peer_queue_requeue(p->q, b->tasks, b->n, mono);
		b->n = 0;
		free(b);
	}
	peer_kick(p, delay, mono);
}

/* Send one batch to p now. */
static void
peer_send_batch(struct peer *p, int64_t mono)
{
	struct peer_batch	*b;
	struct evhttp_request	*req;
	struct repl_list	 list;
	struct repl_item	 items[PEER_BATCH_MAX];
	struct buf		 body;
	char			*uri;
	size_t			 i;

	peer_tls_refresh(p);
	b = xcalloc(1, sizeof *b);
	b->p = p;
	b->n = peer_queue_take(p->q, b->tasks, PEER_BATCH_MAX, mono);
	if (b->n == 0) {
		free(b);
		return;
	}
	for (i = 0; i < b->n; i++)
		items[i] = b->tasks[i]->item;	/* shallow: tasks own */
	list.items = items;
	list.n = list.cap = b->n;
	buf_init(&body, 0);
	json_encode_repl_list(&body, &list);

	req = evhttp_request_new(peer_batch_done_cb, b);
	evhttp_request_set_error_cb(req, peer_batch_error_cb);
	peer_headers(p, req);
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "application/json");
	evbuffer_add(evhttp_request_get_output_buffer(req), body.data,
	    body.len);
	buf_free(&body);
	xasprintf(&uri, "%speerreplication/batch/", p->u.path);
	p->inflight = b;
	p->batches_sent++;
	p->items_sent += b->n;
	if (evhttp_make_request(p->repl_conn, req, EVHTTP_REQ_POST, uri) != 0) {
		/* Not sent: treat as a transient failure. */
		p->inflight = NULL;
		evhttp_request_free(req);
		p->failures++;
		peer_queue_requeue(p->q, b->tasks, b->n, mono);
		free(b);
		peer_kick(p, peer_backoff_fail(&p->bo, PEER_FAIL_TRANSIENT,
		    arc4random(), mono), mono);
	} else
		peer_conn_nodelay(p->repl_conn);
	free(uri);
}

/* The per-peer dispatch timer. */
static void
peer_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct peer	*p = arg;
	int64_t		 mono = clock_mono_ms(), due;

	(void)fd;
	(void)what;
	p->ev_due = -1;
	if (p->inflight != NULL || p->repl_conn == NULL)
		return;		/* the batch callback kicks again */
	if (!peer_backoff_ready(&p->bo, mono)) {
		peer_kick(p, p->bo.until - mono, mono);
		return;
	}
	/*
	 * Changes go out within PEER_DISPATCH_MS; heartbeats alone wait up
	 * to Eureka's PEER_BATCH_AGE_MS (or a full batch), so a heartbeat
	 * storm costs one request per 250 renewals, not one per 20 ms.
	 */
	due = peer_queue_due(p->q, mono, peer_queue_batch_delay(p->q));
	if (due < 0)
		return;
	if (due > 0) {
		peer_kick(p, due, mono);
		return;
	}
	peer_send_batch(p, mono);
}

/* Run p's timer within `delay` ms of mono (earlier deadlines are kept). */
void
peer_kick(struct peer *p, int64_t delay, int64_t mono)
{
	struct timeval	tv;

	if (p->ev == NULL)
		return;
	if (delay < 0)
		delay = 0;
	if (p->ev_due >= 0 && p->ev_due <= mono + delay)
		return;
	p->ev_due = mono + delay;
	tv = clock_ms_tv(delay);
	evtimer_add(p->ev, &tv);
}

/* ------------------------------------------------------------------ */
/* Peer list.                                                           */

/* Does this sockaddr belong to one of our interfaces (or loopback)? */
static int
peer_addr_is_local(const struct sockaddr *sa, struct ifaddrs *ifs)
{
	struct ifaddrs			*i;
	const struct sockaddr_in	*a4, *b4;
	const struct sockaddr_in6	*a6, *b6;

	if (sa->sa_family == AF_INET) {
		a4 = (const struct sockaddr_in *)sa;
		if ((ntohl(a4->sin_addr.s_addr) >> 24) == 127)
			return (1);
		for (i = ifs; i != NULL; i = i->ifa_next) {
			if (i->ifa_addr == NULL ||
			    i->ifa_addr->sa_family != AF_INET)
				continue;
			b4 = (const struct sockaddr_in *)i->ifa_addr;
			if (a4->sin_addr.s_addr == b4->sin_addr.s_addr)
				return (1);
		}
	} else if (sa->sa_family == AF_INET6) {
		a6 = (const struct sockaddr_in6 *)sa;
		if (IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr))
			return (1);
		for (i = ifs; i != NULL; i = i->ifa_next) {
			if (i->ifa_addr == NULL ||
			    i->ifa_addr->sa_family != AF_INET6)
				continue;
			b6 = (const struct sockaddr_in6 *)i->ifa_addr;
			if (memcmp(&a6->sin6_addr, &b6->sin6_addr,
			    sizeof a6->sin6_addr) == 0)
				return (1);
		}
	}
	return (0);
}

/* is_local for the real server: our host name, or resolves to us. */
static int
peer_host_is_local(const char *host, void *arg)
{
	const struct peers	*ps = arg;
	struct addrinfo		 hints, *res, *ai;
	struct ifaddrs		*ifs = NULL;
	int			 local = 0;

	if (strcasecmp(host, "localhost") == 0)
		return (1);
	if (ps->hostname != NULL && strcasecmp(host, ps->hostname) == 0)
		return (1);
	memset(&hints, 0, sizeof hints);
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host, NULL, &hints, &res) != 0)
		return (0);
	if (getifaddrs(&ifs) != 0)
		ifs = NULL;
	for (ai = res; ai != NULL && !local; ai = ai->ai_next)
		local = peer_addr_is_local(ai->ai_addr, ifs);
	if (ifs != NULL)
		freeifaddrs(ifs);
	freeaddrinfo(res);
	return (local);
}

/* Resolve host to a numeric address string (blocking). */
static char *
peer_resolve(const char *host, char **cause)
{
	struct addrinfo	 hints, *res;
	char		 num[INET6_ADDRSTRLEN];
	int		 error;
	void		*a;

	memset(&hints, 0, sizeof hints);
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_family = AF_UNSPEC;
	if ((error = getaddrinfo(host, NULL, &hints, &res)) != 0) {
		xasprintf(cause, "%s: %s", host, gai_strerror(error));
		return (NULL);
	}
	if (res->ai_family == AF_INET)
		a = &((struct sockaddr_in *)res->ai_addr)->sin_addr;
	else
		a = &((struct sockaddr_in6 *)res->ai_addr)->sin6_addr;
	if (inet_ntop(res->ai_family, a, num, sizeof num) == NULL) {
		xasprintf(cause, "%s: inet_ntop failed", host);
		freeaddrinfo(res);
		return (NULL);
	}
	freeaddrinfo(res);
	return (xstrdup(num));
}

/*
 * A connection to p's resolved address with timeout ms and a body bound.
 * It writes a whole request at once: libevent's default single write is
 * 16 KiB, so a ~30 KB batch left as two writes and the second one waited
 * for the peer's delayed ACK (~40 ms).
 */
static struct evhttp_connection *
peer_conn_open(struct peer *p, SSL_CTX *ctx, int64_t ms, size_t max_body)
{
	struct evhttp_connection	*evcon;
	struct bufferevent		*bev;
	struct timeval			 tv;

	evcon = tls_http_connection(p->ps->base, NULL, ctx, p->u.host,
	    p->addr, (unsigned short)p->u.port);
	if (evcon == NULL)
		fatalx("peer %s: cannot make a connection", p->u.display);
	if ((bev = evhttp_connection_get_bufferevent(evcon)) != NULL)
		bufferevent_set_max_single_write(bev, PEER_SINGLE_WRITE_MAX);
	tv = clock_ms_tv(ms);
	evhttp_connection_set_timeout_tv(evcon, &tv);
	evhttp_connection_set_retries(evcon, 0);
	evhttp_connection_set_max_body_size(evcon, max_body);
	return (evcon);
}

/*
 * TCP_NODELAY on a connection's socket, after evhttp_make_request (which
 * creates the socket of a new connection before anything is written): no
 * request waits behind Nagle for the ACK of the previous one.
 */
void
peer_conn_nodelay(struct evhttp_connection *evcon)
{
	struct bufferevent	*bev = evhttp_connection_get_bufferevent(evcon);
	evutil_socket_t		 fd;
	int			 one = 1;

	if (bev != NULL && (fd = bufferevent_getfd(bev)) != -1)
		(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
		    sizeof one);
}

/* Create connections to p's resolved address. */
static void
peer_connect(struct peer *p)
{
	const struct config *conf = p->ps->conf;
	int64_t		 ms;
	SSL_CTX		*ctx;

	if (p->repl_conn != NULL)
		evhttp_connection_free(p->repl_conn);
	if (p->ctl_conn != NULL)
		evhttp_connection_free(p->ctl_conn);
	p->repl_conn = p->ctl_conn = NULL;
	if (p->addr == NULL)
		return;
	/*
	 * libevent 2.1 has one timeout for connect and read: use the larger
	 * of peerNodeConnectTimeoutMs and peerNodeReadTimeoutMs (Spring:
	 * 200 ms each).
	 */
	ms = conf->peer_node_read_timeout_ms;
	if (conf->peer_node_connect_timeout_ms > ms)
		ms = conf->peer_node_connect_timeout_ms;
	ctx = strcmp(p->u.scheme, "https") == 0 ? p->ps->tls_ctx : NULL;
	p->tls_gen = p->ps->tls_gen;
	p->repl_conn = peer_conn_open(p, ctx, ms, PEER_REPL_BODY_MAX);
	/* Registry pulls can be large: the client read timeout applies. */
	ms = (int64_t)conf->eureka_server_read_timeout_seconds * 1000;
	if (ms < PEER_CTL_TIMEOUT_MIN_MS)
		ms = PEER_CTL_TIMEOUT_MIN_MS;
	p->ctl_conn = peer_conn_open(p, ctx, ms, PEER_CTL_BODY_MAX);
}

/* Idle and still on an old TLS context: reconnect with the current one. */
void
peer_tls_refresh(struct peer *p)
{
	if (p->tls_gen != p->ps->tls_gen && p->inflight == NULL &&
	    p->ctl == NULL && p->addr != NULL &&
	    strcmp(p->u.scheme, "https") == 0)
		peer_connect(p);
}

/* A peer for a parsed URL (u is taken). */
static struct peer *
peer_new(struct peers *ps, const char *raw, struct peer_url *u, char *addr)
{
	struct peer	*p;
	int		 max;

	p = xcalloc(1, sizeof *p);
	p->ps = ps;
	p->raw = xstrdup(raw);
	p->u = *u;
	memset(u, 0, sizeof *u);
	p->addr = addr;
	if (p->u.userinfo != NULL)
		p->auth = http_basic_auth(p->u.userinfo);
	if (strchr(p->u.host, ':') != NULL)
		xasprintf(&p->hosthdr, "[%s]:%d", p->u.host, p->u.port);
	else
		xasprintf(&p->hosthdr, "%s:%d", p->u.host, p->u.port);
	max = ps->conf->max_elements_in_peer_replication_pool;
	p->q = peer_queue_new(max > 0 ? (size_t)max : 10000);
	p->ev = evtimer_new(ps->base, peer_timer_cb, p);
	p->ev_due = -1;
	peer_connect(p);
	return (p);
}

/* Free a peer, its queue, its connections and whatever is in flight. */
static void
peer_free(struct peer *p)
{
	if (p == NULL)
		return;
	/* libevent frees pending requests without calling back. */
	if (p->repl_conn != NULL)
		evhttp_connection_free(p->repl_conn);
	if (p->ctl_conn != NULL)
		evhttp_connection_free(p->ctl_conn);
	peer_batch_free(p->inflight);
	free(p->ctl);
	if (p->ev != NULL)
		event_free(p->ev);
	peer_queue_free(p->q);
	peer_url_clear(&p->u);
	free(p->raw);
	free(p->auth);
	free(p->addr);
	free(p->hosthdr);
	free(p);
}

/* Parse, filter and resolve the configured list into ps->v. */
static int
peers_build(struct peers *ps, struct peer ***out, size_t *nout,
    struct peer **old, size_t nold, char **cause)
{
	struct peer	**v = NULL;
	struct peer_url	 u;
	char		**urls = NULL, *err = NULL, *addr;
	size_t		 n, i, j, k, nv = 0;
	int		 dup;

	(void)cause;
	n = config_service_urls(ps->conf, &urls);
	v = xcalloc(n + 1, sizeof *v);
	for (i = 0; i < n; i++) {
		if (peer_url_parse(urls[i], &u, &err) != 0) {
			log_warnx("peer list: %s (ignored)", err);
			free(err);
			err = NULL;
			continue;
		}
		if (peer_url_is_self(urls[i], &u, ps->conf->my_url, ps->port,
		    peer_host_is_local, ps)) {
			log_info("peer list: %s is this node", u.display);
			peer_url_clear(&u);
			continue;
		}
		for (dup = 0, j = 0; j < nv && !dup; j++)
			dup = strcmp(v[j]->u.display, u.display) == 0;
		if (dup) {
			peer_url_clear(&u);
			continue;
		}
		/* Keep an existing peer (and its queue) when unchanged. */
		for (k = 0; k < nold; k++) {
			if (old[k] != NULL && strcmp(old[k]->raw, urls[i]) == 0)
				break;
		}
		if ((addr = peer_resolve(u.host, &err)) == NULL) {
			log_warnx("peer list: %s (will retry on reload)", err);
			free(err);
			err = NULL;
		}
		if (k < nold) {
			v[nv] = old[k];
			old[k] = NULL;
			if (addr == NULL || v[nv]->addr == NULL ||
			    strcmp(addr, v[nv]->addr) != 0) {
				free(v[nv]->addr);
				v[nv]->addr = addr;
				peer_batch_free(v[nv]->inflight);
				v[nv]->inflight = NULL;
				free(v[nv]->ctl);
				v[nv]->ctl = NULL;
				peer_connect(v[nv]);
			} else
				free(addr);
			peer_url_clear(&u);
			nv++;
		} else
			v[nv++] = peer_new(ps, urls[i], &u, addr);
	}
	for (i = 0; i < n; i++)
		free(urls[i]);
	free(urls);
	*out = v;
	*nout = nv;
	return (0);
}

/* The client context for https:// peers, from heureka.peer.ssl.*. */
static SSL_CTX *
peers_tls_ctx(const struct config *cf, char **cause)
{
	struct tls_conf	 tc;

	memset(&tc, 0, sizeof tc);
	tc.prefix = "heureka.peer.ssl";
	tc.certificate = cf->peer_ssl_certificate;
	tc.private_key = cf->peer_ssl_key;
	tc.trust = cf->peer_ssl_trust;
	tc.protocols = cf->ssl_enabled_protocols;
	return (tls_client_ctx_new(&tc, cause));
}

/* Can the peers' TLS files be loaded? */
int
peers_tls_check(const struct config *cf, char **cause)
{
	SSL_CTX	*ctx;

	if ((ctx = peers_tls_ctx(cf, cause)) == NULL)
		return (-1);
	tls_ctx_free(ctx);
	return (0);
}

/* Build the cluster from the configuration. */
struct peers *
peers_new(const struct peers_deps *d, char **cause)
{
	struct peers	*ps;
	struct log_ratelim rl = LOG_RATELIM_INIT(10000, 5);

	ps = xcalloc(1, sizeof *ps);
	ps->base = d->base;
	ps->conf = d->conf;
	ps->reg = d->reg;
	ps->gate = d->gate;
	ps->hostname = d->hostname;
	ps->port = d->port;
	ps->rl = rl;
	if ((ps->tls_ctx = peers_tls_ctx(d->conf, cause)) == NULL) {
		free(ps);
		return (NULL);
	}
	if (peers_build(ps, &ps->v, &ps->n, NULL, 0, cause) != 0) {
		tls_ctx_free(ps->tls_ctx);
		free(ps);
		return (NULL);
	}
	peers_sync_init(ps);
	registry_add_observer(d->reg, peers_observe_cb, ps);
	log_info("cluster: %zu peer(s)", ps->n);
	return (ps);
}

/* Tear everything down (at exit). */
void
peers_free(struct peers *ps)
{
	size_t	i;

	if (ps == NULL)
		return;
	for (i = 0; i < ps->n; i++)
		peer_free(ps->v[i]);
	free(ps->v);
	peers_sync_clear(ps);
	tls_ctx_free(ps->tls_ctx);
	free(ps);
}

/* SIGHUP: re-read and re-resolve the peer list; queues of kept peers stay. */
int
peers_reload(struct peers *ps, char **cause)
{
	struct peer	**v;
	size_t		 n, i;
	SSL_CTX		*ctx;
	char		*err = NULL;

	/* New peer certificates: peers move to them once idle. */
	if ((ctx = peers_tls_ctx(ps->conf, &err)) == NULL) {
		log_warnx("SIGHUP: peer TLS settings not reloaded: %s", err);
		free(err);
	} else {
		tls_ctx_free(ps->tls_ctx);
		ps->tls_ctx = ctx;
		ps->tls_gen++;
	}
	if (peers_build(ps, &v, &n, ps->v, ps->n, cause) != 0)
		return (-1);
	if (n == 0 && ps->n > 0) {
		/* Eureka ignores an empty resolution: keep the old list. */
		log_warnx("peer list resolved empty; keeping %zu peer(s)",
		    ps->n);
		free(v);
		return (0);
	}
	for (i = 0; i < ps->n; i++)
		peer_free(ps->v[i]);	/* those not kept */
	free(ps->v);
	ps->v = v;
	ps->n = n;
	log_info("cluster: %zu peer(s) after reload", n);
	return (0);
}

/* Number of peers (not counting ourselves). */
size_t
peers_count(const struct peers *ps)
{
	return (ps == NULL ? 0 : ps->n);
}

/* State of peer i for the dashboard and /metrics. */
void
peers_info(const struct peers *ps, size_t i, struct peer_info *pi)
{
	const struct peer		*p;
	const struct peer_queue_stats	*st;

	memset(pi, 0, sizeof *pi);
	if (ps == NULL || i >= ps->n)
		return;
	p = ps->v[i];
	st = peer_queue_stats(p->q);
	pi->url = p->u.display;
	pi->reachable = p->reachable;
	pi->queue_depth = peer_queue_len(p->q);
	pi->last_success_ms = p->last_success_ms;
	pi->batches_sent = p->batches_sent;
	pi->items_sent = p->items_sent;
	pi->failures = p->failures;
	pi->dropped = st->overflow + st->expired + p->failed_items;
	pi->resolved = p->addr != NULL;
	pi->inflight = p->inflight != NULL ? p->inflight->n : 0;
	pi->overflow = st->overflow;
	pi->expired = st->expired;
	pi->coalesced = st->coalesced;
	pi->failed_items = p->failed_items;
	pi->backoff_failures = p->bo.failures;
	pi->not_found = p->not_found;
	pi->conflicts = p->conflicts;
	pi->ae_rounds = p->ae_rounds;
	pi->ae_pulls = p->ae_pulls;
	pi->ae_adopted = p->ae_adopted;
	pi->ae_cancels = p->ae_cancels;
	pi->ae_supported = !p->no_ae;
}
