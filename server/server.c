/*
 * server.c: heurekad's assembly. Builds the registry, the response cache,
 * the metrics and the peers from the configuration, binds the HTTP
 * listener (TCP_NODELAY and a large single-write limit: stock evhttp stalls
 * ~40 ms per large response otherwise), and owns the periodic timers:
 * eviction, the renews-per-minute bucket, delta-queue retention, the
 * optional read-only cache refresh and the loop-latency probe (looplag.c);
 * it runs the loop a turn at a time to time each turn's CPU (server_run).
 *
 * With server.ssl.enabled the main port speaks TLS only: every accepted
 * connection gets an SSL bufferevent from the current context, which
 * SIGHUP replaces (server_tls_reload); connections already open keep the
 * context they were made with (SSL objects hold a reference). The optional
 * plaintext port (heureka.server.plain-port, loopback by default) answers
 * the health endpoints only, for local probes that cannot do TLS.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "access.h"
#include "accesslog.h"
#include "admit.h"
#include "airlift.h"
#include "audit.h"
#include "auditfile.h"
#include "barrier.h"
#include "cache.h"
#include "clock.h"
#include "conn.h"
#include "console.h"
#include "consul.h"
#include "csrf.h"
#include "dnssrv.h"
#include "dashboard.h"
#include "doctor.h"
#include "drain.h"
#include "ext.h"
#include "gate.h"
#include "http.h"
#include "httputil.h"
#include "log.h"
#include "metrics.h"
#include "ops.h"
#include "peers.h"
#include "ratelimit.h"
#include "registry.h"
#include "reglog.h"
#include "replicate.h"
#include "rest.h"
#include "sdnotify.h"
#include "server.h"
#include "sync.h"
#include "tls.h"
#include "watch.h"
#include "xmalloc.h"

#define SINGLE_WRITE_MAX	(4 * 1024 * 1024)
#define CGROUP_MEMORY_MAX	"/sys/fs/cgroup/memory.max"

static void	server_gate_cb(enum gate_state, int, struct hk_time, void *);

/* The server whose listener the accept error callback pauses (one). */
static struct server	*server_accept_owner;

/* The registry's settings, from the configuration. */
static void
server_registry_conf(const struct config *cf, struct registry_conf *rc)
{
	int64_t	tomb;

	registry_conf_defaults(rc);
	rc->self_preservation = cf->enable_self_preservation;
	rc->renewal_percent_threshold = cf->renewal_percent_threshold;
	rc->expected_client_renewal_interval_secs =
	    cf->expected_client_renewal_interval_seconds;
	rc->expected_initial = cf->expected_number_of_clients_sending_renews;
	rc->retention_ms = cf->retention_time_in_ms_in_delta_queue;
	/*
	 * A tombstone outlives every way the old copy can come back: a
	 * queued Register (max-time-for-replication), a peer's copy that
	 * nobody renews (two default lease durations) and the anti-entropy
	 * rounds that find it; at least twice the delta retention.
	 */
	rc->tombstone_ms = cf->retention_time_in_ms_in_delta_queue * 2;
	tomb = cf->max_time_for_replication + 3 * cf->anti_entropy_interval_ms +
	    2 * LEASE_DEFAULT_DURATION_SECS * 1000LL;
	if (rc->tombstone_ms < tomb)
		rc->tombstone_ms = tomb;
	rc->eviction_interval_ms = cf->eviction_interval_timer_in_ms;
	rc->max_instances = cf->max_instances;
	rc->sync_when_timestamp_differs = cf->sync_when_timestamp_differs;
	rc->max_instance_bytes = cf->max_instance_bytes;
	rc->max_bytes = cf->max_memory_bytes > 0 ? cf->max_memory_bytes :
	    server_default_memory_budget();
	rc->max_delta_bytes = cf->max_delta_queue_bytes;
	rc->max_skew_ms = cf->max_clock_skew_ms;
	rc->max_unheld_tombs = cf->max_unknown_tombstones;
}

/* Half the RAM, or half the cgroup v2 limit when lower (containers). */
size_t
server_default_memory_budget(void)
{
	unsigned long long	 lim;
	long			 pages, psize;
	size_t			 ram = 0;
	FILE			*f;

	pages = sysconf(_SC_PHYS_PAGES);
	psize = sysconf(_SC_PAGESIZE);
	if (pages > 0 && psize > 0)
		ram = (size_t)pages * (size_t)psize;
	if ((f = fopen(CGROUP_MEMORY_MAX, "r")) != NULL) {
		/* "max" (no limit) does not parse and leaves ram as is. */
		if (fscanf(f, "%llu", &lim) == 1 && lim > 0 &&
		    (ram == 0 || lim < ram))
			ram = (size_t)lim;
		fclose(f);
	}
	if (ram == 0)
		ram = (size_t)1 << 30;		/* unknown: assume 1 GiB */
	return (ram / 2);
}

/* A server with its registry, cache and metrics; not yet listening. */
struct server *
server_new(struct event_base *base, struct config *conf)
{
	struct server		*s = xcalloc(1, sizeof *s);
	struct registry_conf	 rc;
	struct doctor_conf	 dc;
	struct hk_time		 start;
	char			 host[256];

	s->base = base;
	s->conf = conf;
	start = clock_now();
	s->gate = gate_new(start);
	gate_observe(s->gate, &(struct gate_observer){ server_gate_cb, s });
	server_registry_conf(conf, &rc);
	/* The audit's ring is reserved out of the memory budget. */
	if (rc.max_bytes > conf->audit_max_bytes * 2)
		rc.max_bytes -= conf->audit_max_bytes;
	s->memory_budget = rc.max_bytes;
	s->reg = registry_new(&rc, start.wall_ms);
	s->cache = cache_new(s->reg, conf->use_read_only_response_cache ?
	    conf->response_cache_update_interval_ms : 0,
	    conf->response_cache_auto_expiration_in_seconds * 1000);
	cache_set_plain_idle(s->cache, conf->cache_plain_idle_ms);
	if (gethostname(host, sizeof host) != 0)
		snprintf(host, sizeof host, "localhost");
	host[sizeof host - 1] = '\0';
	s->hostname = xstrdup(host);
	/* The peers and the port exist once listening: pointed at. */
	s->metrics = metrics_new(&(struct metrics_deps){ .reg = s->reg,
	    .cache = s->cache, .gate = s->gate, .conf = conf,
	    .peers = &s->peers, .looplag = &s->looplag,
	    .open_connections = &s->open_connections,
	    .memory_budget = s->memory_budget, .doctor = &s->doctor,
	    .audit = &s->audit });
	s->admit = admit_new(conf, s->metrics);
	s->access = access_new(conf);
	s->watch = watch_new(&(struct watch_deps){ .base = base,
	    .reg = s->reg, .gate = s->gate, .conf = conf });
	s->airlift = airlift_new(s->reg, conf, s->admit);
	s->reglog = reglog_new(base, s->reg);
	s->audit = audit_new(conf->audit_max_bytes);
	doctor_conf_defaults(&dc);
	dc.window_ms = conf->doctor_window_ms;
	dc.storm_per_minute = conf->doctor_storm_per_minute;
	dc.skew_ms = conf->doctor_clock_skew_ms;
	s->doctor = doctor_new(&dc);
	s->csrf = csrf_new();
	s->consul = consul_new(&(struct consul_deps){ .base = base,
	    .reg = s->reg, .conf = conf, .hostname = s->hostname,
	    .port = &s->port });
	s->ops = ops_new(&(struct ops_deps){ .gate = s->gate, .conf = conf,
	    .metrics = s->metrics, .peers = &s->peers,
	    .hostname = s->hostname, .port = &s->port });
	s->dashboard = dashboard_new(&(struct dashboard_deps){
	    .reg = s->reg, .gate = s->gate, .conf = conf,
	    .peers = &s->peers, .ops = s->ops, .access = s->access,
	    .csrf = s->csrf, .doctor = s->doctor });
	/* A caller with a certificate from the peer CA is a peer. */
	access_set_cert_check(s->access, hreq_peer_verified);
	return (s);
}

/* Free everything the server owns (not the config, not the base). */
void
server_free(struct server *s)
{
	if (s == NULL)
		return;
	if (s->evict_ev != NULL)
		event_free(s->evict_ev);
	if (s->evict_step_ev != NULL)
		event_free(s->evict_step_ev);
	if (s->delta_step_ev != NULL)
		event_free(s->delta_step_ev);
	if (s->minute_ev != NULL)
		event_free(s->minute_ev);
	if (s->delta_ev != NULL)
		event_free(s->delta_ev);
	if (s->cache_ev != NULL)
		event_free(s->cache_ev);
	if (s->cache_step_ev != NULL)
		event_free(s->cache_step_ev);
	if (s->accept_ev != NULL)
		event_free(s->accept_ev);
	if (s->lag_ev != NULL)
		event_free(s->lag_ev);
	if (s->history_ev != NULL)
		event_free(s->history_ev);
	if (s->doctor_ev != NULL)
		event_free(s->doctor_ev);
	if (s->doctor_step_ev != NULL)
		event_free(s->doctor_step_ev);
	if (server_accept_owner == s)
		server_accept_owner = NULL;
	rest_free(s->rest);
	airlift_free(s->airlift);
	consul_free(s->consul);
	dnssrv_free(s->dns);
	ext_free(s->ext);
	barrier_free(s->barrier);
	peers_free(s->peers);	/* first: its observers drop their state */
	sync_free(s->sync);
	replicate_free(s->repl);
	if (s->listener != NULL)
		evconnlistener_free(s->listener);
	if (s->plain_listener != NULL)
		evconnlistener_free(s->plain_listener);
	conns_free(s->plain_conns);	/* closes every connection */
	conns_free(s->conns);
	free(s->front);
	free(s->plain_front);
	watch_free(s->watch);
	reglog_free(s->reglog);
	console_free(s->console);
	auditfile_close(s->auditfile);
	drain_free(s->drain);
	dashboard_free(s->dashboard);
	ops_free(s->ops);
	tls_ctx_free(s->tls_ctx);
	cache_free(s->cache);
	registry_free(s->reg);
	metrics_free(s->metrics);
	admit_free(s->admit);
	access_free(s->access);
	gate_free(s->gate);
	audit_free(s->audit);
	doctor_free(s->doctor);
	csrf_free(s->csrf);
	free(s->node);
	free(s->hostname);
	free(s);
}

/*
 * New connection on the main port: TLS when on, large writes, counted
 * and admitted (conn.c) as a connection of the HTTP front (http_conn.c).
 */
static void
server_accept_cb(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct server		*s = arg;
	struct bufferevent	*bev;

	(void)l;
	(void)sa;
	(void)salen;
	if (s->tls_ctx != NULL)
		bev = tls_bev_accept(s->base, s->tls_ctx);
	else
		bev = bufferevent_socket_new(s->base, -1, BEV_OPT_CLOSE_ON_FREE);
	if (bev == NULL || bufferevent_setfd(bev, fd) != 0) {
		if (bev != NULL)
			bufferevent_free(bev);
		evutil_closesocket(fd);
		return;
	}
	bufferevent_set_max_single_write(bev, SINGLE_WRITE_MAX);
	bufferevent_set_max_single_read(bev, SINGLE_WRITE_MAX);
	conns_accepted(s->conns, s->front, bev, s->tls_ctx != NULL);
}

/* New connection on the plaintext port (health probes). */
static void
server_plain_accept_cb(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct server		*s = arg;
	struct bufferevent	*bev;

	(void)l;
	(void)sa;
	(void)salen;
	if ((bev = bufferevent_socket_new(s->base, fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		evutil_closesocket(fd);
		return;
	}
	conns_accepted(s->plain_conns, s->plain_front, bev, 0);
}

/* Accept again after a pause (descriptors may have been freed). */
static void
server_accept_resume_cb(evutil_socket_t fd, short what, void *arg)
{
	struct server	*s = arg;

	if (s->listener != NULL)
		evconnlistener_enable(s->listener);
}

/*
 * accept() failed with EMFILE, ENFILE or ENOBUFS: the socket stays
 * readable, so without a pause the loop would spin on it. Stop accepting
 * for a second (tmux's back-off).
 */
static void
server_accept_error_cb(struct evconnlistener *l, void *arg)
{
	struct server	*s = arg;
	struct timeval	 tv = { 1, 0 };
	static struct log_ratelim rl = LOG_RATELIM_INIT(60000, 1);

	log_warnx_rl(&rl, "accept: %s; pausing new connections for 1 s",
	    evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
	evconnlistener_disable(l);
	evtimer_add(s->accept_ev, &tv);
}

/* A connection went away (conn.c passes its close on): the watch's too. */
static void
server_conn_close_cb(struct hconn *evcon, void *arg)
{
	struct server	*s = arg;

	watch_conn_closed(s->watch, evcon);
}

/* Wraps the REST dispatcher: draining, a reply closes its connection. */
static void
server_request_cb(struct hreq *req, void *arg)
{
	struct server	*s = arg;

	/* Draining: answer, then close, so the client goes elsewhere. */
	if (gate_is_stopping(s->gate))
		hhdrs_add(hreq_output_headers(req), "Connection", "close");
	rest_dispatch_cb(req, s->rest);
}

/* The body a request may bring: the route's (the router is made later). */
static int
server_body_cap(void *arg, const struct hhead *h, const char *path,
    uint64_t *cap, enum metrics_limit *limit, char *reason, size_t len)
{
	struct server	*s = arg;

	return (rest_body_cap(s->rest, h, path, cap, limit, reason, len));
}

/* A request the front refused before its body: the router answers. */
static void
server_reject_cb(struct hreq *req, int code, const char *reason, void *arg)
{
	struct server	*s = arg;

	rest_reject(req, s->rest, code, reason);
}

/* Write the bound port to --port-file (tests read it). */
static int
server_write_port(const char *path, int port, char **cause)
{
	FILE	*f;
	char	*tmp;

	xasprintf(&tmp, "%s.tmp", path);
	if ((f = fopen(tmp, "w")) == NULL) {
		xasprintf(cause, "%s: %s", tmp, strerror(errno));
		free(tmp);
		return (-1);
	}
	fprintf(f, "%d\n", port);
	fclose(f);
	if (rename(tmp, path) != 0) {
		xasprintf(cause, "%s: %s", path, strerror(errno));
		free(tmp);
		return (-1);
	}
	free(tmp);
	return (0);
}

/* The TLS settings of a configuration, for tls_server_ctx_new. */
static void
server_tls_conf(const struct config *cf, struct tls_conf *tc)
{
	memset(tc, 0, sizeof *tc);
	tc->prefix = "server.ssl";
	tc->certificate = cf->ssl_certificate;
	tc->private_key = cf->ssl_certificate_key;
	tc->trust = cf->ssl_trust_certificate;
	tc->protocols = cf->ssl_enabled_protocols;
	tc->ciphers = cf->ssl_ciphers;
	if (tls_parse_client_auth(cf->ssl_client_auth, &tc->client_auth) != 0)
		tc->client_auth = TLS_CLIENT_AUTH_NEED;	/* validated before */
}

/*
 * Build a context from cf's server.ssl.* keys and use it for new
 * connections; open ones keep theirs. On error nothing changes.
 */
int
server_tls_reload(struct server *s, const struct config *cf, char **cause)
{
	struct tls_conf	 tc;
	SSL_CTX		*ctx;

	server_tls_conf(cf, &tc);
	if ((ctx = tls_server_ctx_new(&tc, cause)) == NULL)
		return (-1);
	tls_ctx_free(s->tls_ctx);
	s->tls_ctx = ctx;
	return (0);
}

/* Would the TLS files load? (--check-config, before anything binds.) */
int
server_tls_check(const struct config *cf, char **cause)
{
	struct tls_conf	 tc;
	SSL_CTX		*ctx;

	if (cf->ssl_enabled) {
		server_tls_conf(cf, &tc);
		if ((ctx = tls_server_ctx_new(&tc, cause)) == NULL)
			return (-1);
		tls_ctx_free(ctx);
	}
	return (peers_tls_check(cf, cause));
}

/*
 * The plaintext port: health probes only, everything else 404 (a request
 * the front refused at its head gets its verdict from rest_reject).
 */
static void
server_plain_cb(struct hreq *req, void *arg)
{
	struct server		*s = arg;
	const char		*path = hreq_path(req);

	if (path != NULL && (strcmp(path, "/health") == 0 ||
	    strncmp(path, "/health/", 8) == 0 ||
	    strcmp(path, "/actuator/health") == 0 ||
	    strncmp(path, "/actuator/health/", 17) == 0)) {
		rest_dispatch_cb(req, s->rest);
		return;
	}
	hreq_error(req, 404, "the plaintext port serves /health "
	    "only; use TLS on the main port");
}

/* The port a listening socket got. */
static int
server_bound_port(struct evconnlistener *l)
{
	struct sockaddr_storage	 ss;
	socklen_t		 sl = sizeof ss;
	evutil_socket_t		 fd = evconnlistener_get_fd(l);

	memset(&ss, 0, sizeof ss);
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0)
		return (0);
	if (ss.ss_family == AF_INET)
		return (ntohs(((struct sockaddr_in *)&ss)->sin_port));
	if (ss.ss_family == AF_INET6)
		return (ntohs(((struct sockaddr_in6 *)&ss)->sin6_port));
	return (0);
}

/*
 * Listen on address:port (a name, or NULL for every interface, as
 * evhttp_bind_socket took them); NULL with errno set.
 */
static struct evconnlistener *
server_bind(struct server *s, const char *address, int port,
    evconnlistener_cb cb)
{
	struct evutil_addrinfo	 hints, *ai = NULL;
	struct evconnlistener	*l;
	char			 strport[16];

	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = EVUTIL_AI_PASSIVE | EVUTIL_AI_ADDRCONFIG;
	snprintf(strport, sizeof strport, "%d", port);
	if (evutil_getaddrinfo(address, strport, &hints, &ai) != 0) {
		errno = EADDRNOTAVAIL;
		return (NULL);
	}
	l = evconnlistener_new_bind(s->base, cb, s, LEV_OPT_CLOSE_ON_FREE |
	    LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_EXEC, 128, ai->ai_addr,
	    (int)ai->ai_addrlen);
	evutil_freeaddrinfo(ai);
	return (l);
}

/* Bind heureka.server.plain-port (TLS on and a port asked for). */
static int
server_listen_plain(struct server *s, char **cause)
{
	const struct config	*cf = s->conf;
	struct hfront_conf	*fc;

	fc = s->plain_front = xcalloc(1, sizeof *fc);
	fc->cb = server_plain_cb;
	fc->cbarg = s;
	fc->methods = EVHTTP_REQ_GET | EVHTTP_REQ_HEAD;
	fc->head_max = 16 * 1024;
	fc->idle_s = 10;
	fc->handshake_ms = cf->handshake_timeout_ms;
	fc->head_ms = cf->head_timeout_ms;
	fc->metrics = s->metrics;
	fc->reject = server_reject_cb;
	/*
	 * Its connections come out of the descriptor reserve (conn.c), so
	 * the main port's limits leave them room; the cap keeps them there.
	 */
	s->plain_conns = conns_new(&(struct conns_deps){ .base = s->base,
	    .max_connections = cf->plain_max_connections,
	    .descriptor_reserve = 0, .metrics = s->metrics,
	    .open = &s->plain_open, .reg = s->reg,
	    .memory_budget = s->memory_budget,
	    .cap_key = "heureka.server.plain-max-connections" });
	s->plain_listener = server_bind(s, cf->plain_address, cf->plain_port,
	    server_plain_accept_cb);
	if (s->plain_listener == NULL) {
		xasprintf(cause, "heureka.server.plain-port: cannot listen on "
		    "%s:%d: %s", cf->plain_address, cf->plain_port,
		    strerror(errno));
		return (-1);
	}
	conns_set_listener(s->plain_conns, s->plain_listener);
	s->plain_port = server_bound_port(s->plain_listener);
	if (cf->plain_port_file != NULL &&
	    server_write_port(cf->plain_port_file, s->plain_port, cause) != 0)
		return (-1);
	log_info("plaintext port (health only) on %s:%d", cf->plain_address,
	    s->plain_port);
	return (0);
}

/*
 * Every interface and no authentication is Eureka's default, and
 * heurekad keeps it; but anyone who reaches the port may then register,
 * cancel and take instances out of service, so say so once, with the
 * keys that change it.
 */
static void
server_warn_open(const struct server *s)
{
	const char	*a = s->conf->server_address;

	if (access_enabled(s->access))
		return;
	if (a != NULL && *a != '\0' && strcmp(a, "0.0.0.0") != 0 &&
	    strcmp(a, "::") != 0 && strcmp(a, "[::]") != 0)
		return;
	log_warnx("listening on all interfaces (%s) with authentication off: "
	    "anyone who reaches port %d may register, cancel and change "
	    "instances; set server.address (-b 127.0.0.1) or "
	    "spring.security.user.password", a != NULL && *a != '\0' ? a :
	    "0.0.0.0", s->port);
}

/* Bind the HTTP listener and create the peers (which need our port). */
int
server_listen(struct server *s, char **cause)
{
	struct hfront_conf	*fc;

	if (s->conf->ssl_enabled && server_tls_reload(s, s->conf, cause) != 0) {
		errno = EINVAL;		/* a configuration error: exit 78 */
		return (-1);
	}
	fc = s->front = xcalloc(1, sizeof *fc);
	fc->cb = server_request_cb;
	fc->cbarg = s;
	fc->reject = server_reject_cb;
	fc->body_cap = server_body_cap;
	fc->body_cap_arg = s;
	/* Every method there is: the route table answers 405 itself. */
	fc->methods = EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_PUT |
	    EVHTTP_REQ_DELETE | EVHTTP_REQ_HEAD | EVHTTP_REQ_OPTIONS |
	    EVHTTP_REQ_PATCH | EVHTTP_REQ_TRACE | EVHTTP_REQ_CONNECT;
	fc->head_max = HTTP_HEAD_MAX;
	fc->idle_s = 60;
	fc->handshake_ms = s->conf->handshake_timeout_ms;
	fc->head_ms = s->conf->head_timeout_ms;
	fc->handshaken = tls_bev_handshaken;
	fc->metrics = s->metrics;
	s->conns = conns_new(&(struct conns_deps){ .base = s->base,
	    .max_connections = s->conf->max_connections,
	    .descriptor_reserve = s->conf->descriptor_reserve,
	    .metrics = s->metrics, .open = &s->open_connections,
	    .reg = s->reg, .memory_budget = s->memory_budget,
	    .closecb = server_conn_close_cb, .closearg = s });
	s->listener = server_bind(s, s->conf->server_address,
	    s->conf->server_port, server_accept_cb);
	if (s->listener == NULL) {
		xasprintf(cause, "cannot listen on %s:%d: %s",
		    s->conf->server_address, s->conf->server_port,
		    strerror(errno));
		return (-1);
	}
	conns_set_listener(s->conns, s->listener);
	s->accept_ev = evtimer_new(s->base, server_accept_resume_cb, s);
	server_accept_owner = s;
	evconnlistener_set_error_cb(s->listener, server_accept_error_cb);
	s->port = server_bound_port(s->listener);
	if (!s->conf->ssl_enabled && s->conf->plain_port >= 0)
		log_warnx("heureka.server.plain-port is ignored without "
		    "server.ssl.enabled (server.port is plain already)");
	else if (s->conf->plain_port >= 0 &&
	    server_listen_plain(s, cause) != 0)
		return (-1);
	if ((s->peers = peers_new(&(struct peers_deps){ s->base, s->conf,
	    s->hostname, s->port }, cause)) == NULL) {
		errno = EINVAL;		/* heureka.peer.ssl.*: exit 78 */
		return (-1);
	}
	s->repl = replicate_new(&(struct replicate_deps){ s->base, s->conf,
	    s->reg, s->peers, s->audit });
	xasprintf(&s->node, "%s:%d", s->hostname, s->port);
	if (s->conf->audit_file != NULL && (s->auditfile = auditfile_open(
	    s->base, s->conf->audit_file, s->conf->audit_file_max_bytes,
	    s->conf->audit_file_keep, cause)) == NULL) {
		errno = EINVAL;
		return (-1);
	}
	s->console = console_new(&(struct console_deps){ .reg = s->reg,
	    .audit = s->audit, .doctor = s->doctor, .file = s->auditfile,
	    .peers = s->peers, .node = s->node,
	    .hostname = s->hostname,
	    .appname = s->conf->instance_appname });
	s->sync = sync_new(&(struct sync_deps){ s->base, s->conf, s->reg,
	    s->gate, s->peers, s->repl });
	s->ext = ext_new(&(struct ext_deps){ s->reg, s->gate, s->peers,
	    s->sync, s->conf, &s->looplag });
	/* After the watch and replication: it reads both after a change. */
	s->barrier = barrier_new(&(struct barrier_deps){ s->base, s->conf,
	    s->reg, s->peers, s->repl, s->watch });
	s->rest = rest_new(&(struct rest_deps){ .reg = s->reg,
	    .cache = s->cache, .gate = s->gate, .conf = s->conf,
	    .access = s->access, .admit = s->admit,
	    .memory_budget = s->memory_budget, .metrics = s->metrics,
	    .watch = s->watch, .airlift = s->airlift, .consul = s->consul,
	    .dashboard = s->dashboard, .ops = s->ops, .ext = s->ext,
	    .barrier = s->barrier, .console = s->console, .csrf = s->csrf,
	    .audit = s->audit });
	if (s->conf->dns_enabled) {
		s->dns = dnssrv_new(&(struct dnssrv_deps){ .base = s->base,
		    .reg = s->reg, .gate = s->gate, .conf = s->conf });
		if (dnssrv_start(s->dns, cause) != 0)
			return (-1);
	}
	if (s->conf->port_file != NULL &&
	    server_write_port(s->conf->port_file, s->port, cause) != 0)
		return (-1);
	(void)accesslog_open(s->conf->access_log);
	if (access_enabled(s->access))
		log_info("authentication on: HTTP Basic user %s%s",
		    s->conf->security_user_name,
		    s->conf->security_read_anonymous ?
		    ", anonymous reads allowed" : "");
	log_info("heurekad listening on %s:%d%s (%zu peer%s)",
	    s->conf->server_address, s->port, s->tls_ctx != NULL ?
	    " (TLS)" : "", peers_count(s->peers),
	    peers_count(s->peers) == 1 ? "" : "s");
	server_warn_open(s);
	return (0);
}

/*
 * One slice of an eviction run (registry_evict_step: REGISTRY_EVICT_SLICE
 * leases); while the run is not complete the next slice runs on the next
 * loop turn, so a walk of a million leases or a mass expiry never holds
 * the loop.
 */
static void
server_evict_step(struct server *s)
{
	static const struct timeval	 zero = { 0, 0 };
	int				 n;

	s->evict_busy = 1;
	if (!registry_evict_step(s->reg, clock_now(), REGISTRY_EVICT_SLICE,
	    &n)) {
		s->evict_count += n;
		evtimer_add(s->evict_step_ev, &zero);
		return;
	}
	n += s->evict_count;
	if (n > 0)
		log_info("evicted %d expired lease%s", n, n == 1 ? "" : "s");
	s->evict_busy = 0;
	s->evict_count = 0;
}

/* Eviction timer (§5.11): a run, unless the last one is under way. */
static void
server_evict_cb(evutil_socket_t fd, short what, void *arg)
{
	struct server	*s = arg;

	if (!s->evict_busy)
		server_evict_step(s);
}

/* The next slice of an eviction run. */
static void
server_evict_step_cb(evutil_socket_t fd, short what, void *arg)
{
	server_evict_step(arg);
}

/* Roll the renews-per-minute bucket. */
static void
server_minute_cb(evutil_socket_t fd, short what, void *arg)
{
	struct server	*s = arg;

	registry_tick_minute(s->reg, clock_mono_ms());
}

/*
 * Drop delta-queue entries past their retention, REGISTRY_PURGE_SLICE a
 * loop turn (after a preload a million may fall due at once).
 */
static void
server_delta_cb(evutil_socket_t fd, short what, void *arg)
{
	static const struct timeval	 zero = { 0, 0 };
	struct server			*s = arg;
	uint64_t			 dropped;

	if (!registry_purge_deltas_step(s->reg, clock_mono_ms(),
	    REGISTRY_PURGE_SLICE)) {
		evtimer_add(s->delta_step_ev, &zero);
		return;
	}
	/* Once per retention interval, not per record. */
	dropped = registry_stats(s->reg)->delta_dropped;
	if (dropped != s->delta_dropped_seen) {
		log_warnx("delta queue: %llu change records dropped before "
		    "their retention time (eureka.server."
		    "max-delta-queue-bytes %zu); clients fall back to full "
		    "fetches", (unsigned long long)(dropped -
		    s->delta_dropped_seen), s->conf->max_delta_queue_bytes);
		s->delta_dropped_seen = dropped;
	}
}

/*
 * One slice of the read-only cache layer's refresh (at most
 * heureka.cache.encode-slice-bytes of encoding); while the pass is not
 * complete the next slice runs on the next loop turn, so a whole-registry
 * re-encode never holds the loop. The refresh timer starts a pass (or,
 * if the last one is still under way, gives it one more slice).
 */
static void
server_cache_step(struct server *s)
{
	static const struct timeval	 zero = { 0, 0 };
	const struct cache_stats	*st = cache_stats(s->cache);
	int64_t				 now = clock_mono_ms();

	if (s->cache_pass_ms < 0) {
		s->cache_pass_ms = now;
		s->cache_pass_step0 = st->ro_steps;
	}
	if (!cache_refresh_step(s->cache, s->conf->cache_encode_slice_bytes,
	    now)) {
		evtimer_add(s->cache_step_ev, &zero);
		return;
	}
	log_debug("read-only cache refreshed (pass %llu: %llu slices, "
	    "%lld ms)", (unsigned long long)st->ro_refreshes,
	    (unsigned long long)(st->ro_steps - s->cache_pass_step0),
	    (long long)(now - s->cache_pass_ms));
	s->cache_pass_ms = -1;
}

/* Eureka's read-only cache layer refresh timer, when enabled. */
static void
server_cache_cb(evutil_socket_t fd, short what, void *arg)
{
	server_cache_step(arg);
}

/* The next slice of a read-only refresh under way. */
static void
server_cache_step_cb(evutil_socket_t fd, short what, void *arg)
{
	server_cache_step(arg);
}

/*
 * The loop-latency probe: due every LOOPLAG_PERIOD_MS, it records how late
 * it ran (the time the loop spent on something else) and re-arms itself
 * from now, so one stall counts once.
 */
static void
server_lag_cb(evutil_socket_t fd, short what, void *arg)
{
	struct server	*s = arg;
	struct timeval	 tv = { 0, LOOPLAG_PERIOD_MS * 1000 };
	int64_t		 now = clock_mono_us();

	looplag_sample(&s->looplag, now - s->lag_due_us, now);
	s->lag_due_us = now + LOOPLAG_PERIOD_MS * 1000;
	evtimer_add(s->lag_ev, &tv);
}

/* The dashboard history's sampler (heureka.dashboard.history-interval-ms). */
static void
server_history_cb(evutil_socket_t fd, short what, void *arg)
{
	struct server	*s = arg;

	(void)fd;
	(void)what;
	dashboard_history_tick(s->dashboard, clock_now());
}

/*
 * The doctor's scan (heureka.doctor.interval-ms), one slice a loop turn
 * until it is complete (console_scan_step).
 */
static void
server_doctor_cb(evutil_socket_t fd, short what, void *arg)
{
	struct server	*s = arg;

	static const struct timeval	 zero = { 0, 0 };

	(void)fd;
	(void)what;
	/* A scan still under way goes on instead (the timer's turn). */
	if (!console_scan_step(s->console, clock_now()))
		evtimer_add(s->doctor_step_ev, &zero);
}

/* A persistent timer every ms milliseconds. */
static struct event *
server_timer(struct server *s, int64_t ms, event_callback_fn cb)
{
	struct event	*ev = event_new(s->base, -1, EV_PERSIST, cb, s);
	struct timeval	 tv;

	tv = clock_ms_tv(ms);
	event_add(ev, &tv);
	return (ev);
}

/* Start the timers and the start-up sync. */
void
server_start(struct server *s)
{
	const struct config	*cf = s->conf;
	struct timeval		 lag_tv = { 0, LOOPLAG_PERIOD_MS * 1000 };

	gate_allow_reads_at(s->gate,
	    clock_mono_ms() + cf->wait_time_in_ms_when_sync_empty);
	s->evict_ev = server_timer(s, cf->eviction_interval_timer_in_ms,
	    server_evict_cb);
	s->evict_step_ev = evtimer_new(s->base, server_evict_step_cb, s);
	s->delta_step_ev = evtimer_new(s->base, server_delta_cb, s);
	s->minute_ev = server_timer(s, 60000, server_minute_cb);
	s->delta_ev = server_timer(s, cf->delta_retention_timer_interval_in_ms,
	    server_delta_cb);
	if (cf->use_read_only_response_cache) {
		s->cache_pass_ms = -1;
		s->cache_step_ev = evtimer_new(s->base, server_cache_step_cb,
		    s);
		s->cache_ev = server_timer(s,
		    cf->response_cache_update_interval_ms, server_cache_cb);
	}
	looplag_init(&s->looplag, clock_mono_us());
	s->lag_ev = evtimer_new(s->base, server_lag_cb, s);
	s->lag_due_us = clock_mono_us() + LOOPLAG_PERIOD_MS * 1000;
	evtimer_add(s->lag_ev, &lag_tv);
	s->history_ev = server_timer(s, cf->dashboard_history_interval_ms,
	    server_history_cb);
	dashboard_history_tick(s->dashboard, clock_now());
	s->doctor_ev = server_timer(s, cf->doctor_interval_ms,
	    server_doctor_cb);
	s->doctor_step_ev = evtimer_new(s->base, server_doctor_cb, s);
	sync_start(s->sync, clock_now());
}

/*
 * The loop, one turn (a poll and the callbacks it made active) per
 * event_base_loop(EVLOOP_ONCE): the loop thread's CPU clock is read once
 * per return, so each figure is one turn plus the poll before it, and a
 * turn preempted by another process counts only the CPU it got.
 */
int
server_run(struct server *s)
{
	int64_t	cpu0 = clock_thread_cpu_us(), cpu;
	int	rc;

	for (;;) {
		rc = event_base_loop(s->base, EVLOOP_ONCE);
		/* Big dead bodies go back a piece a turn (cache_reap). */
		(void)cache_reap(s->cache, CACHE_REAP_BYTES);
		cpu = clock_thread_cpu_us();
		looplag_turn(&s->looplag, cpu - cpu0);
		cpu0 = cpu;
		if (rc != 0 || event_base_got_exit(s->base) ||
		    event_base_got_break(s->base))
			return (rc < 0 ? -1 : 0);
	}
}

/*
 * The gate changed. Opened: the start-up sync finished, so open the
 * registry for traffic (§6.4) and tell systemd. Stopping: tell systemd.
 */
static void
server_gate_cb(enum gate_state st, int count, struct hk_time now, void *arg)
{
	struct server	*s = arg;
	int		 counted;

	if (st == GATE_STOPPING) {
		sdnotify_send("STOPPING=1");
		return;
	}
	if (st != GATE_READY)
		return;
	/*
	 * Spring substitutes defaultOpenForTrafficCount for an empty sync.
	 * Leases that renew on another protocol (airlift's) are not clients
	 * sending renews: a sync that copied only those is an empty one.
	 */
	counted = count - registry_uncounted(s->reg);
	registry_open_for_traffic(s->reg, counted > 0 ? counted :
	    s->conf->default_open_for_traffic_count, now.mono_ms);
	log_info("registry open for traffic (%d instance%s from peers)",
	    count, count == 1 ? "" : "s");
	sdnotify_send("READY=1");
}

/*
 * Shutting down: /health and readiness turn DOWN (503), every watch
 * stream gets its last event and a clean end, the timers stop. Requests
 * keep being served (with Connection: close) until server_drain's wait
 * is over.
 */
void
server_stop(struct server *s)
{
	gate_set_stopping(s->gate, clock_now());
	watch_drain(s->watch);
	peers_stop(s->peers);
	if (s->evict_ev != NULL)
		event_del(s->evict_ev);
	if (s->evict_step_ev != NULL)
		event_del(s->evict_step_ev);
	if (s->delta_step_ev != NULL)
		event_del(s->delta_step_ev);
	if (s->minute_ev != NULL)
		event_del(s->minute_ev);
	if (s->delta_ev != NULL)
		event_del(s->delta_ev);
	if (s->cache_ev != NULL)
		event_del(s->cache_ev);
	if (s->cache_step_ev != NULL)
		event_del(s->cache_step_ev);
	if (s->lag_ev != NULL)
		event_del(s->lag_ev);
	if (s->history_ev != NULL)
		event_del(s->history_ev);
}

/* What a draining shutdown waits for: see hconn_busy, rest_parked_count. */
static size_t
server_busy(void *arg)
{
	struct server	*s = arg;

	return (hconn_busy() + rest_parked_count(s->rest));
}

/*
 * After server_stop: let what is in flight finish, for at most
 * heureka.server.shutdown-grace-ms, then call done (which ends the loop).
 */
void
server_drain(struct server *s, void (*done)(void *, size_t, int64_t),
    void *arg)
{
	drain_free(s->drain);
	s->drain = drain_start(&(struct drain_deps){ .base = s->base,
	    .grace_ms = s->conf->shutdown_grace_ms, .busy = server_busy,
	    .done = done, .arg = arg });
}
