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
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

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

struct peers_obs {
	const struct peer_observer	*o;
	void				*arg;
};

struct peers {
	struct event_base	 *base;		/* struct peers_deps, borrowed */
	const struct config	 *conf;
	const char		 *hostname;
	int			  port;
	struct peer		**v;
	size_t			  n;
	char			**selfs;	/* URLs naming this node */
	size_t			  nselfs;
	struct peers_obs	  obs[PEER_SLOTS];
	size_t			  nobs;
	SSL_CTX			 *tls_ctx;	/* for https:// peers */
	unsigned		  tls_gen;	/* bumped on each new one */
};

/* ------------------------------------------------------------------ */
/* Request glue.                                                        */

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
	evhttp_connection_set_max_body_size(evcon, max_body);
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
		evhttp_connection_set_max_body_size(evcon, max_body);
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

/* Tell every observer that p's requests in flight are gone. */
static void
peers_tell_reset(struct peers *ps, struct peer *p)
{
	size_t	i;

	for (i = 0; i < ps->nobs; i++)
		if (ps->obs[i].o->reset != NULL)
			ps->obs[i].o->reset(p, ps->obs[i].arg);
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

/* A peer for a parsed URL (u is taken); observers are told by the caller. */
static struct peer *
peer_new(struct peers *ps, const char *raw, struct peer_url *u, char *addr)
{
	struct peer	*p;

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
	free(p->raw);
	free(p->auth);
	free(p->addr);
	free(p->hosthdr);
	free(p);
}

/*
 * Parse, filter and resolve the configured list into *out. Peers of old
 * whose URL is unchanged move over (old[k] = NULL) with their state; new
 * ones are announced to the observers.
 */
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

static int
peers_build(struct peers *ps, struct peer ***out, size_t *nout,
    struct peer **old, size_t nold, char **cause)
{
	struct peer	**v = NULL, *p;
	struct peer_url	 u;
	char		**urls = NULL, *err = NULL, *addr;
	size_t		 n, i, j, k, nv = 0;
	int		 dup;

	(void)cause;
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
		    peer_host_is_local, ps)) {
			log_info("peer list: %s is this node", u.display);
			if (ps->nselfs < PEERS_MAX_SELFS) {
				ps->selfs = xreallocarray(ps->selfs,
				    ps->nselfs + 1, sizeof *ps->selfs);
				ps->selfs[ps->nselfs++] = xstrdup(u.display);
			}
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
			p = v[nv++] = old[k];
			old[k] = NULL;
			if (addr == NULL || p->addr == NULL ||
			    strcmp(addr, p->addr) != 0) {
				free(p->addr);
				p->addr = addr;
				peer_connect(p);
				peers_tell_reset(ps, p);
			} else
				free(addr);
			peer_url_clear(&u);
		} else {
			p = v[nv++] = peer_new(ps, urls[i], &u, addr);
			peers_tell_added(ps, p);
		}
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

	ps = xcalloc(1, sizeof *ps);
	ps->base = d->base;
	ps->conf = d->conf;
	ps->hostname = d->hostname;
	ps->port = d->port;
	if ((ps->tls_ctx = peers_tls_ctx(d->conf, cause)) == NULL) {
		free(ps);
		return (NULL);
	}
	if (peers_build(ps, &ps->v, &ps->n, NULL, 0, cause) != 0) {
		tls_ctx_free(ps->tls_ctx);
		free(ps);
		return (NULL);
	}
	log_info("cluster: %zu peer(s)", ps->n);
	return (ps);
}

/* Tear everything down (at exit; the observers are still there). */
void
peers_free(struct peers *ps)
{
	size_t	i;

	if (ps == NULL)
		return;
	for (i = 0; i < ps->n; i++)
		peer_free(ps->v[i]);
	free(ps->v);
	peers_selfs_clear(ps);
	tls_ctx_free(ps->tls_ctx);
	free(ps);
}

/* SIGHUP: re-read and re-resolve the peer list; kept peers keep state. */
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

/* A URL of the list that named this node (peers.h). */
const char *
peers_self_url(const struct peers *ps, size_t i)
{
	return (ps == NULL || i >= ps->nselfs ? NULL : ps->selfs[i]);
}

/* Peer i, or NULL. */
struct peer *
peers_get(const struct peers *ps, size_t i)
{
	return (ps == NULL || i >= ps->n ? NULL : ps->v[i]);
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
