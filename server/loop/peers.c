/*
 * peers.c: the cluster's peers as a list of connections (peers.h). What
 * is sent on them is replicate.c's (batches) and sync.c's (start-up sync
 * and anti-entropy); both observe the list, so this file knows neither.
 *
 * https:// peers: every connection is made by peer_connect through
 * tls_http_connection, with the one client context built from
 * heureka.peer.ssl.* (trust bundle, and a client certificate for mutual
 * TLS). The peer's certificate must verify and match the URL's host; a
 * peer that fails that is unreachable. SIGHUP rebuilds the context; a
 * peer moves its connections to it the next time no observer has a
 * request in flight on it (peer_tls_refresh), so no request is cut short.
 *
 * Connections write a whole request at once and without Nagle: libevent's
 * default single write is 16 KiB, so a ~30 KB batch left as two writes and
 * the second one waited for the peer's delayed ACK (~40 ms).
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
#include <event2/dns.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/util.h>

#include "buf.h"
#include "clock.h"
#include "config.h"
#include "gzip.h"
#include "httputil.h"
#include "log.h"
#include "peers.h"
#include "tls.h"
#include "xmalloc.h"

#define PEER_CTL_TIMEOUT_MIN_MS	2000	/* sync/anti-entropy requests */
#define PEER_SINGLE_WRITE_MAX	(4 * 1024 * 1024)	/* a batch per write */
#define PEER_ADDRS_MAX		64	/* peers taken from one name */
#define PEER_RESOLVE_RETRY_MS	1000	/* first retry of a failed lookup */

struct peers_obs {
	const struct peer_observer	*o;
	void				*arg;
};

/* One lookup in flight; outlives its source when cancelled. */
struct peer_lookup {
	struct peer_source		*src;	/* NULL: orphaned */
	struct evdns_getaddrinfo_request *req;
};

/* A configured URL: one peer per address its host name has. */
struct peer_source {
	struct peers		*ps;
	char			*raw;		/* as configured */
	struct peer_url		 u;
	int			 numeric;	/* an IP literal: no DNS */
	int			 answered;	/* a first answer (or failure) */
	unsigned		 failures;	/* consecutive failed lookups */
	struct peer_lookup	*lookup;	/* in flight, or NULL */
	struct event		*ev;		/* the next lookup */
};

struct peers {
	struct event_base	 *base;		/* struct peers_deps, borrowed */
	const struct config	 *conf;
	const char		 *hostname;
	int			  port;
	struct peer		**v;
	size_t			  n;
	struct peer_source	**src;
	size_t			  nsrc;
	char			**selfs;	/* URLs naming this node */
	size_t			  nselfs;
	struct evdns_base	 *dns;
	int			  settled;	/* every source answered once */
	int			  stopped;	/* no more lookups */
	struct peers_obs	  obs[PEER_SLOTS];
	size_t			  nobs;
	SSL_CTX			 *tls_ctx;	/* for https:// peers */
	unsigned		  tls_gen;	/* bumped on each new one */
	struct log_ratelim	  rl;
	uint64_t		  dns_lookups;
	uint64_t		  dns_failures;
	uint64_t		  added;
	uint64_t		  removed;
	uint64_t		  removed_dropped;	/* their queued tasks */
};

static size_t	source_peers(const struct peer_source *);

/* ------------------------------------------------------------------ */
/* Request glue.                                                        */

/*
 * The Date of p's answer against our clock when it came (peers.h). The
 * header has whole seconds, truncated: half a second is added so the
 * estimate is centred; the round trip adds its own error, in the
 * direction of a peer behind.
 */
void
peer_note_date(struct peer *p, struct evhttp_request *req, struct hk_time now)
{
	const char	*v;
	int64_t		 ms;

	if (req == NULL || (v = evhttp_find_header(
	    evhttp_request_get_input_headers(req), "Date")) == NULL ||
	    http_date_parse(v, &ms) != 0)
		return;
	p->date_skew_ms = ms + 500 - now.wall_ms;
	p->date_mono = now.mono_ms > 0 ? now.mono_ms : 1;
}

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

/* Why p's connection failed TLS verification, or NULL. */
const char *
peer_tls_error(const struct peer *p, enum peer_conn which)
{
	return (tls_connection_verify_error(p->conn[which]));
}

/*
 * TCP_NODELAY on a connection's socket, after evhttp_make_request (which
 * creates the socket of a new connection before anything is written): no
 * request waits behind Nagle for the ACK of the previous one.
 */
static void
peer_conn_nodelay(struct evhttp_connection *evcon)
{
	struct bufferevent	*bev = evhttp_connection_get_bufferevent(evcon);
	evutil_socket_t		 fd;
	int			 one = 1;

	if (bev != NULL && (fd = bufferevent_getfd(bev)) != -1)
		(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
		    sizeof one);
}

/*
 * Set evcon's body bound to max bytes. libevent takes an ev_ssize_t; a
 * bound past its range (no configured size is one) means no bound there,
 * as a negative one does, so it is clamped rather than wrapped.
 */
static void
peer_conn_max_body(struct evhttp_connection *evcon, size_t max)
{
	evhttp_connection_set_max_body_size(evcon,
	    max > (size_t)EV_SSIZE_MAX ? EV_SSIZE_MAX : (ev_ssize_t)max);
}

/* A connection to p's resolved address with timeout ms and a body bound. */
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
	peer_conn_max_body(evcon, max_body);
	return (evcon);
}

/* Free p's connections (their pending requests without callbacks). */
static void
peer_disconnect(struct peer *p)
{
	size_t	i;

	for (i = 0; i < 2; i++) {
		if (p->conn[i] != NULL)
			evhttp_connection_free(p->conn[i]);
		p->conn[i] = NULL;
	}
}

/* Create connections to p's resolved address. */
static void
peer_connect(struct peer *p)
{
	const struct config *conf = p->ps->conf;
	int64_t		 ms;
	SSL_CTX		*ctx;

	peer_disconnect(p);
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
	p->conn[PEER_CONN_REPL] = peer_conn_open(p, ctx, ms,
	    PEER_REPL_BODY_MAX);
	/* Registry pulls can be large: the client read timeout applies. */
	ms = (int64_t)conf->eureka_server_read_timeout_seconds * 1000;
	if (ms < PEER_CTL_TIMEOUT_MIN_MS)
		ms = PEER_CTL_TIMEOUT_MIN_MS;
	p->conn[PEER_CONN_CTL] = peer_conn_open(p, ctx, ms, PEER_CTL_BODY_MAX);
}

/* Does any observer have a request in flight on p? */
static int
peer_busy(const struct peer *p)
{
	const struct peers	*ps = p->ps;
	size_t			 i;

	for (i = 0; i < ps->nobs; i++) {
		if (ps->obs[i].o->busy != NULL &&
		    ps->obs[i].o->busy(p, ps->obs[i].arg))
			return (1);
	}
	return (0);
}

/* Idle and still on an old TLS context: reconnect with the current one. */
static void
peer_tls_refresh(struct peer *p)
{
	if (p->tls_gen != p->ps->tls_gen && p->addr != NULL &&
	    strcmp(p->u.scheme, "https") == 0 && !peer_busy(p))
		peer_connect(p);
}

/* Send req on p's connection `which` (peers.h). */
int
peer_request(struct peer *p, enum peer_conn which, struct evhttp_request *req,
    int method, const char *uri, size_t max_body)
{
	struct evhttp_connection	*evcon;

	peer_tls_refresh(p);
	if ((evcon = p->conn[which]) == NULL) {
		evhttp_request_free(req);
		return (-1);
	}
	if (max_body > 0)
		peer_conn_max_body(evcon, max_body);
	if (evhttp_make_request(evcon, req, (enum evhttp_cmd_type)method,
	    uri) != 0) {
		/* libevent 2.1 leaves a refused request to its caller. */
		evhttp_request_free(req);
		return (-1);
	}
	peer_conn_nodelay(evcon);
	return (0);
}

/* ------------------------------------------------------------------ */
/* Observers.                                                           */

/* Tell every observer that p joined. */
static void
peers_tell_added(struct peers *ps, struct peer *p)
{
	size_t	i;

	for (i = 0; i < ps->nobs; i++)
		if (ps->obs[i].o->added != NULL)
			p->slot[i] = ps->obs[i].o->added(p, ps->obs[i].arg);
}

/* Observe the list (peers.h). */
int
peers_observe(struct peers *ps, const struct peer_observer *o, void *arg)
{
	size_t	i;
	int	slot;

	if (ps->nobs == PEER_SLOTS)
		return (-1);
	slot = (int)ps->nobs;
	ps->obs[ps->nobs].o = o;
	ps->obs[ps->nobs].arg = arg;
	ps->nobs++;
	if (o->added != NULL)
		for (i = 0; i < ps->n; i++)
			ps->v[i]->slot[slot] = o->added(ps->v[i], arg);
	return (slot);
}

/* ------------------------------------------------------------------ */
/* Peer list: sources (configured URLs) and their addresses.            */

/* Is this sockaddr one of our interfaces' addresses (or loopback)? */
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

/*
 * Is addr:port this node? Only on our port. Bound to one address
 * (server.address): that address alone, so nodes on 127.0.0.2 and
 * 127.0.0.3 with one port are two nodes. Bound to every address
 * (0.0.0.0, ::): any address of ours, loopback included.
 */
static int
peers_addr_is_self(const struct peers *ps, const struct sockaddr *sa,
    int port)
{
	const char		*bound = ps->conf->server_address;
	struct in_addr		 b4;
	struct in6_addr		 b6;
	struct ifaddrs		*ifs = NULL;
	int			 local;

	if (port != ps->port)
		return (0);
	if (bound != NULL && inet_pton(AF_INET, bound, &b4) == 1 &&
	    b4.s_addr != htonl(INADDR_ANY))
		return (sa->sa_family == AF_INET &&
		    ((const struct sockaddr_in *)sa)->sin_addr.s_addr ==
		    b4.s_addr);
	if (bound != NULL && inet_pton(AF_INET6, bound, &b6) == 1 &&
	    !IN6_IS_ADDR_UNSPECIFIED(&b6))
		return (sa->sa_family == AF_INET6 &&
		    memcmp(&((const struct sockaddr_in6 *)sa)->sin6_addr,
		    &b6, sizeof b6) == 0);
	if (getifaddrs(&ifs) != 0)
		ifs = NULL;
	local = peer_addr_is_local(sa, ifs);
	if (ifs != NULL)
		freeifaddrs(ifs);
	return (local);
}

/* p's address and source equal these? */
static int
peer_is(const struct peer *p, const struct peer_source *src, const char *addr)
{
	return (p->src == src && p->addr != NULL && strcmp(p->addr, addr) == 0);
}

/* A peer of src at addr; observers are told by the caller. */
static struct peer *
peer_new(struct peers *ps, struct peer_source *src, const char *addr)
{
	struct peer	*p;
	char		*err = NULL;

	p = xcalloc(1, sizeof *p);
	p->ps = ps;
	p->src = src;
	if (peer_url_parse(src->raw, &p->u, &err) != 0)
		fatalx("%s: %s", __func__, err);	/* parsed before */
	if (!src->numeric) {
		/* One name, several peers: the address tells them apart. */
		free(p->u.display);
		xasprintf(&p->u.display, "%s (%s)", src->u.display, addr);
	}
	p->addr = xstrdup(addr);
	if (p->u.userinfo != NULL)
		p->auth = http_basic_auth(p->u.userinfo);
	if (strchr(p->u.host, ':') != NULL)
		xasprintf(&p->hosthdr, "[%s]:%d", p->u.host, p->u.port);
	else
		xasprintf(&p->hosthdr, "%s:%d", p->u.host, p->u.port);
	peer_connect(p);
	return (p);
}

/*
 * Free a peer: its connections first (libevent frees pending requests
 * without calling back), then the observers drop their state.
 */
static void
peer_free(struct peer *p)
{
	struct peers	*ps;
	size_t		 i;

	if (p == NULL)
		return;
	ps = p->ps;
	peer_disconnect(p);
	for (i = 0; i < ps->nobs; i++)
		if (ps->obs[i].o->removed != NULL)
			ps->obs[i].o->removed(p, ps->obs[i].arg);
	memset(p->slot, 0, sizeof p->slot);
	peer_url_clear(&p->u);
	free(p->auth);
	free(p->addr);
	free(p->hosthdr);
	free(p);
}

/* Add a peer of src at addr to the list and tell the observers. */
static void
peers_add(struct peers *ps, struct peer_source *src, const char *addr)
{
	struct peer	*p;

	p = peer_new(ps, src, addr);
	ps->v = xreallocarray(ps->v, ps->n + 1, sizeof *ps->v);
	ps->v[ps->n++] = p;
	ps->added++;
	peers_tell_added(ps, p);
	log_info("peer list: %s joined (%zu peer(s))", p->u.display, ps->n);
}

/*
 * Take peer i off the list: what its queue held (and the batch in
 * flight) is dropped and counted, the observers drop their state.
 */
static void
peers_remove(struct peers *ps, size_t i)
{
	struct peer	*p = ps->v[i];
	struct peer_info pi;

	peers_info(ps, i, &pi);
	ps->removed_dropped += pi.queue_depth + pi.inflight;
	memmove(&ps->v[i], &ps->v[i + 1], (ps->n - i - 1) * sizeof *ps->v);
	ps->n--;
	ps->removed++;
	log_info("peer list: %s left (%zu replication task(s) dropped, "
	    "%zu peer(s))", p->u.display, pi.queue_depth + pi.inflight, ps->n);
	peer_free(p);
}

/*
 * A source's new address set (self already left out): peers at
 * addresses that went are removed, new addresses become peers.
 */
static void
source_apply(struct peer_source *src, char **addrs, size_t n)
{
	struct peers	*ps = src->ps;
	size_t		 i, k;
	int		 found;

	for (i = ps->n; i-- > 0;) {
		if (ps->v[i]->src != src)
			continue;
		for (found = 0, k = 0; k < n && !found; k++)
			found = strcmp(ps->v[i]->addr, addrs[k]) == 0;
		if (!found)
			peers_remove(ps, i);
	}
	for (k = 0; k < n; k++) {
		for (found = 0, i = 0; i < ps->n && !found; i++)
			found = peer_is(ps->v[i], src, addrs[k]);
		if (!found)
			peers_add(ps, src, addrs[k]);
	}
}

/* Every source has had its first answer: tell the observers, once. */
static void
peers_check_settled(struct peers *ps)
{
	size_t	i;

	if (ps->settled)
		return;
	for (i = 0; i < ps->nsrc; i++)
		if (!ps->src[i]->answered)
			return;
	ps->settled = 1;
	for (i = 0; i < ps->nobs; i++)
		if (ps->obs[i].o->settled != NULL)
			ps->obs[i].o->settled(ps->obs[i].arg);
}

/* Look src up again in ms (earlier if already due sooner). */
static void
source_schedule(struct peer_source *src, int64_t ms)
{
	struct timeval	tv;

	if (src->numeric || src->ps->stopped)
		return;
	tv = clock_ms_tv(ms);
	evtimer_add(src->ev, &tv);
}

/*
 * An answer for src: the addresses of the preferred family (IPv4 when
 * there is any, so a dual-stack name is not every node twice), ours
 * left out. No address at all, or a failed lookup, keeps the peers it
 * had (Eureka ignores an empty resolution too) and retries with
 * back-off: 1 s, 2 s, 4 s ... up to the resolve interval.
 */
static void
source_answer(struct peer_source *src, int result, struct evutil_addrinfo *res)
{
	struct peers		*ps = src->ps;
	struct evutil_addrinfo	*ai;
	char			*addrs[PEER_ADDRS_MAX], num[INET6_ADDRSTRLEN];
	size_t			 n = 0, all = 0, i;
	int64_t			 ms, interval = ps->conf->peer_resolve_interval_ms;
	int			 family = AF_INET6, dup;
	const void		*a;

	for (ai = res; result == 0 && ai != NULL; ai = ai->ai_next)
		if (ai->ai_family == AF_INET)
			family = AF_INET;
	for (ai = res; result == 0 && ai != NULL; ai = ai->ai_next) {
		if (ai->ai_family != family)
			continue;
		all++;
		if (peers_addr_is_self(ps, ai->ai_addr, src->u.port))
			continue;
		a = family == AF_INET ?
		    (const void *)&((struct sockaddr_in *)ai->ai_addr)->sin_addr :
		    (const void *)&((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr;
		if (inet_ntop(family, a, num, sizeof num) == NULL)
			continue;
		for (dup = 0, i = 0; i < n && !dup; i++)
			dup = strcmp(addrs[i], num) == 0;
		if (dup)
			continue;
		if (n == PEER_ADDRS_MAX) {
			log_warnx_rl(&ps->rl, "peer list: %s has more than %d "
			    "addresses; the rest are ignored", src->u.display,
			    PEER_ADDRS_MAX);
			break;
		}
		addrs[n++] = xstrdup(num);
	}
	src->answered = 1;
	if (result != 0 || all == 0) {
		src->failures++;
		ps->dns_failures++;
		ms = PEER_RESOLVE_RETRY_MS << (src->failures < 16 ?
		    src->failures - 1 : 15);
		if (ms > interval)
			ms = interval;
		ms += (int64_t)(arc4random_uniform((uint32_t)(ms / 4 + 1)));
		log_warnx_rl(&ps->rl, "peer list: %s: %s (keeping its %zu "
		    "peer(s); retry in %lld ms)", src->u.host, result != 0 ?
		    evutil_gai_strerror(result) : "no address",
		    source_peers(src), (long long)ms);
		source_schedule(src, ms);
	} else {
		if (src->failures > 0)
			log_info("peer list: %s resolves again", src->u.host);
		src->failures = 0;
		source_apply(src, addrs, n);
		source_schedule(src, interval);
	}
	for (i = 0; i < n; i++)
		free(addrs[i]);
	peers_check_settled(ps);
}

/* evdns answered (or gave up on) a lookup. */
static void
source_lookup_cb(int result, struct evutil_addrinfo *res, void *arg)
{
	struct peer_lookup	*lk = arg;
	struct peer_source	*src = lk->src;

	free(lk);
	if (src != NULL) {
		src->lookup = NULL;
		source_answer(src, result, res);
	}
	if (res != NULL)
		evutil_freeaddrinfo(res);
}

/* Start a lookup of src's host name (never blocks: evdns). */
static void
source_resolve(struct peer_source *src)
{
	struct peers			*ps = src->ps;
	struct peer_lookup		*lk;
	struct evdns_getaddrinfo_request *req;
	struct evutil_addrinfo		 hints;

	if (src->lookup != NULL || ps->stopped)
		return;
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	lk = xcalloc(1, sizeof *lk);
	lk->src = src;
	src->lookup = lk;
	ps->dns_lookups++;
	/* A hosts-file name is answered at once, lk freed: keep hands off. */
	req = evdns_getaddrinfo(ps->dns, src->u.host, NULL, &hints,
	    source_lookup_cb, lk);
	if (req != NULL)
		lk->req = req;
}

/* The re-resolve (or retry) timer. */
static void
source_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	source_resolve(arg);
}

/* How many peers src has now. */
static size_t
source_peers(const struct peer_source *src)
{
	size_t	i, n = 0;

	for (i = 0; i < src->ps->n; i++)
		if (src->ps->v[i]->src == src)
			n++;
	return (n);
}

/* Cancel src's lookup in flight: its callback comes later, orphaned. */
static void
source_cancel(struct peer_source *src)
{
	struct peer_lookup	*lk = src->lookup;

	if (lk == NULL)
		return;
	src->lookup = NULL;
	lk->src = NULL;
	if (lk->req != NULL)
		evdns_getaddrinfo_cancel(lk->req);
}

/* Remember a URL of the list that names this node, for the doctor. */
static void
peers_self_add(struct peers *ps, const char *display)
{
	if (ps->nselfs >= PEERS_MAX_SELFS)
		return;
	ps->selfs = xreallocarray(ps->selfs, ps->nselfs + 1,
	    sizeof *ps->selfs);
	ps->selfs[ps->nselfs++] = xstrdup(display);
}

/* Forget the URLs that named this node (a rebuild finds them again). */
static void
peers_selfs_clear(struct peers *ps)
{
	size_t	i;

	for (i = 0; i < ps->nselfs; i++)
		free(ps->selfs[i]);
	free(ps->selfs);
	ps->selfs = NULL;
	ps->nselfs = 0;
}

/* A source for a parsed URL (u is taken); resolving starts at once. */
static struct peer_source *
source_new(struct peers *ps, const char *raw, struct peer_url *u)
{
	struct peer_source	*src;
	struct sockaddr_storage	 ss;
	char			 num[INET6_ADDRSTRLEN], *one[1];
	int			 len = sizeof ss;

	src = xcalloc(1, sizeof *src);
	src->ps = ps;
	src->raw = xstrdup(raw);
	src->u = *u;
	memset(u, 0, sizeof *u);
	src->ev = evtimer_new(ps->base, source_timer_cb, src);
	memset(&ss, 0, sizeof ss);
	if (evutil_parse_sockaddr_port(src->u.host, (struct sockaddr *)&ss,
	    &len) == 0) {
		/* An address: no DNS, one peer (unless it is us). */
		src->numeric = 1;
		src->answered = 1;
		if (peers_addr_is_self(ps, (struct sockaddr *)&ss,
		    src->u.port)) {
			log_info("peer list: %s is this node", src->u.display);
			peers_self_add(ps, src->u.display);
			return (src);
		}
		if (evutil_inet_ntop(ss.ss_family, ss.ss_family == AF_INET ?
		    (void *)&((struct sockaddr_in *)&ss)->sin_addr :
		    (void *)&((struct sockaddr_in6 *)&ss)->sin6_addr, num,
		    sizeof num) == NULL)
			fatalx("%s: inet_ntop", __func__);
		one[0] = num;
		source_apply(src, one, 1);
		return (src);
	}
	return (src);
}

/* Remove src's peers and free it. */
static void
source_free(struct peer_source *src)
{
	struct peers	*ps;
	size_t		 i;

	if (src == NULL)
		return;
	ps = src->ps;
	for (i = ps->n; i-- > 0;)
		if (ps->v[i]->src == src)
			peers_remove(ps, i);
	source_cancel(src);
	if (src->ev != NULL)
		event_free(src->ev);
	peer_url_clear(&src->u);
	free(src->raw);
	free(src);
}

/* Our host name (no lookup: addresses are checked once resolved). */
static int
peers_host_is_ours(const char *host, void *arg)
{
	const struct peers	*ps = arg;

	return (ps->hostname != NULL && strcasecmp(host, ps->hostname) == 0);
}

/*
 * Parse and filter the configured list into sources. Those of old with
 * the same URL move over (old[k] = NULL) with their peers; a URL that is
 * this node (eureka.server.my-url, or our host name and port) is left
 * out here, an address of ours when it is resolved.
 */
static void
peers_sources(struct peers *ps, struct peer_source ***out, size_t *nout,
    struct peer_source **old, size_t nold)
{
	struct peer_source	**v;
	struct peer_url		  u;
	char			**urls = NULL, *err = NULL;
	size_t			  n, i, j, k, nv = 0;
	int			  dup;

	peers_selfs_clear(ps);
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
		    peers_host_is_ours, ps)) {
			log_info("peer list: %s is this node", u.display);
			peers_self_add(ps, u.display);
			peer_url_clear(&u);
			continue;
		}
		for (dup = 0, j = 0; j < nv && !dup; j++)
			dup = strcmp(v[j]->u.display, u.display) == 0;
		if (dup) {
			peer_url_clear(&u);
			continue;
		}
		for (k = 0; k < nold; k++)
			if (old[k] != NULL && strcmp(old[k]->raw, urls[i]) == 0)
				break;
		if (k < nold) {
			v[nv++] = old[k];
			old[k] = NULL;
			peer_url_clear(&u);
		} else
			v[nv++] = source_new(ps, urls[i], &u);
	}
	for (i = 0; i < n; i++)
		free(urls[i]);
	free(urls);
	*out = v;
	*nout = nv;
}

/*
 * The resolver: heureka.dns.nameservers (IP[:port], comma-separated)
 * with /etc/hosts, or the system's resolv.conf (its search list, ndots
 * and timeouts, as a pod's resolv.conf sets them).
 */
static struct evdns_base *
peers_dns_new(struct event_base *base, const char *list, char **cause)
{
	struct evdns_base	*dns;
	char			*copy, *tok, *next;

	if (list == NULL || list[strspn(list, " ,")] == '\0') {
		if ((dns = evdns_base_new(base,
		    EVDNS_BASE_INITIALIZE_NAMESERVERS)) == NULL)
			xasprintf(cause, "cannot set up the DNS resolver");
		return (dns);
	}
	if ((dns = evdns_base_new(base, 0)) == NULL) {
		xasprintf(cause, "cannot set up the DNS resolver");
		return (NULL);
	}
	copy = xstrdup(list);
	for (next = copy; (tok = str_list_next(&next)) != NULL;) {
		if (evdns_base_nameserver_ip_add(dns, tok) != 0) {
			xasprintf(cause, "heureka.dns.nameservers: '%s' is not "
			    "an IP address with an optional port", tok);
			free(copy);
			evdns_base_free(dns, 0);
			return (NULL);
		}
	}
	free(copy);
	(void)evdns_base_load_hosts(dns, NULL);
	return (dns);
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

/* Build the cluster from the configuration; names resolve later. */
struct peers *
peers_new(const struct peers_deps *d, char **cause)
{
	struct peers		*ps;
	struct log_ratelim	 rl = LOG_RATELIM_INIT(10000, 5);
	size_t			 i;

	ps = xcalloc(1, sizeof *ps);
	ps->base = d->base;
	ps->conf = d->conf;
	ps->hostname = d->hostname;
	ps->port = d->port;
	ps->rl = rl;
	if ((ps->tls_ctx = peers_tls_ctx(d->conf, cause)) == NULL) {
		free(ps);
		return (NULL);
	}
	if ((ps->dns = peers_dns_new(d->base, d->conf->dns_nameservers,
	    cause)) == NULL) {
		tls_ctx_free(ps->tls_ctx);
		free(ps);
		return (NULL);
	}
	peers_sources(ps, &ps->src, &ps->nsrc, NULL, 0);
	for (i = 0; i < ps->nsrc; i++)
		if (!ps->src[i]->numeric)
			source_resolve(ps->src[i]);
	peers_check_settled(ps);
	log_info("cluster: %zu peer(s)%s", ps->n, ps->settled ? "" :
	    ", more as their names resolve");
	return (ps);
}

/*
 * Stop looking names up (SIGTERM, while the loop still runs, so that
 * the lookups cancelled here are freed by their callbacks).
 */
void
peers_stop(struct peers *ps)
{
	size_t	i;

	if (ps == NULL)
		return;
	ps->stopped = 1;
	for (i = 0; i < ps->nsrc; i++) {
		source_cancel(ps->src[i]);
		evtimer_del(ps->src[i]->ev);
	}
}

/* Tear everything down (at exit; the observers are still there). */
void
peers_free(struct peers *ps)
{
	size_t	i;

	if (ps == NULL)
		return;
	ps->stopped = 1;
	for (i = 0; i < ps->nsrc; i++)
		source_free(ps->src[i]);
	free(ps->src);
	free(ps->v);
	peers_selfs_clear(ps);
	evdns_base_free(ps->dns, 0);
	tls_ctx_free(ps->tls_ctx);
	free(ps);
}

/*
 * SIGHUP: re-read the peer list; sources whose URL is unchanged keep
 * their peers (and queues) and are looked up again now.
 */
int
peers_reload(struct peers *ps, char **cause)
{
	struct peer_source	**v;
	size_t			  n, i;
	SSL_CTX			 *ctx;
	char			 *err = NULL;

	(void)cause;
	/* New peer certificates: peers move to them once idle. */
	if ((ctx = peers_tls_ctx(ps->conf, &err)) == NULL) {
		log_warnx("SIGHUP: peer TLS settings not reloaded: %s", err);
		free(err);
	} else {
		tls_ctx_free(ps->tls_ctx);
		ps->tls_ctx = ctx;
		ps->tls_gen++;
	}
	peers_sources(ps, &v, &n, ps->src, ps->nsrc);
	if (n == 0 && ps->n > 0) {
		/* Eureka ignores an empty list: keep the old one. */
		log_warnx("peer list empty; keeping %zu peer(s)", ps->n);
		free(v);
		return (0);
	}
	for (i = 0; i < ps->nsrc; i++)
		source_free(ps->src[i]);	/* those not kept */
	free(ps->src);
	ps->src = v;
	ps->nsrc = n;
	for (i = 0; i < n; i++)
		if (!v[i]->numeric) {
			evtimer_del(v[i]->ev);
			source_resolve(v[i]);
		}
	log_info("cluster: %zu peer(s) after reload", ps->n);
	return (0);
}

/* Every source has answered once (sync.c waits for it). */
int
peers_settled(const struct peers *ps)
{
	return (ps->settled);
}

/* The list's own counters (/metrics). */
void
peers_totals(const struct peers *ps, struct peers_totals *t)
{
	size_t	i;

	memset(t, 0, sizeof *t);
	if (ps == NULL)
		return;
	t->sources = ps->nsrc;
	for (i = 0; i < ps->nsrc; i++)
		if (ps->src[i]->failures > 0 || !ps->src[i]->answered)
			t->unresolved++;
	t->dns_lookups = ps->dns_lookups;
	t->dns_failures = ps->dns_failures;
	t->added = ps->added;
	t->removed = ps->removed;
	t->removed_dropped = ps->removed_dropped;
}

/* Number of peers (not counting ourselves). */
size_t
peers_count(const struct peers *ps)
{
	return (ps == NULL ? 0 : ps->n);
}

/* Peer i, or NULL. */
struct peer *
peers_get(const struct peers *ps, size_t i)
{
	return (ps == NULL || i >= ps->n ? NULL : ps->v[i]);
}

/* A URL of the list that named this node (peers.h). */
const char *
peers_self_url(const struct peers *ps, size_t i)
{
	return (ps == NULL || i >= ps->nselfs ? NULL : ps->selfs[i]);
}

/* State of peer i for the dashboard and /metrics. */
void
peers_info(const struct peers *ps, size_t i, struct peer_info *pi)
{
	const struct peer	*p;
	size_t			 k;

	memset(pi, 0, sizeof *pi);
	if (ps == NULL || i >= ps->n)
		return;
	p = ps->v[i];
	pi->url = p->u.display;
	pi->reachable = p->reachable;
	pi->heureka = p->heureka;
	pi->last_success_ms = p->last_success_ms;
	pi->resolved = p->addr != NULL;
	for (k = 0; k < ps->nobs; k++)
		if (ps->obs[k].o->info != NULL)
			ps->obs[k].o->info(p, pi, ps->obs[k].arg);
}
