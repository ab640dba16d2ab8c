/*
 * peer.c: the cluster (spec §6) on the server's event loop.
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
 * Start-up sync (§6.4) asks every peer for its registry at once and is
 * done when a ready peer answered (or every peer answered, ready or not:
 * a cluster starting together has nothing to copy), then the server is
 * told it is ready. With no peer answering, reads stay refused (403,
 * §6.4) until the gate allows reads (waitTimeInMsWhenSyncEmpty) or
 * until some peer answers: after the configured attempts (Spring: one) the
 * sync is retried every second, and a successful anti-entropy round counts
 * as well. A node with no peers is ready at once.
 *
 * Anti-entropy (a heureka extension; Java peers never call it): every
 * anti_entropy_interval_ms a node asks each peer for GET heureka/digest,
 * and when it differs from its own, pulls the peer's registry (GET
 * heureka/apps) and reconciles. The digest sums registry_copy_hash() of
 * every live lease, so it covers every field replication carries (status,
 * overriddenStatus, metadata, ...). The rule (registry_reconcile(), loop-
 * free) is one-sided so that running it on both ends of every pair
 * converges without ping-pong, and it compares only times the origin
 * stamped and replication carries:
 *
 *   for each instance R the peer holds (lease not expired):
 *   - we hold no copy: if our tombstone for it is at or after R's
 *     lastDirtyTimestamp, it was cancelled after R was written: push the
 *     peer a Cancel carrying the tombstone's time (no resurrection);
 *     otherwise adopt R as a replicated registration;
 *   - our copy loses to R (older lastDirtyTimestamp; or equal, different
 *     content and an older origin lastUpdatedTimestamp; or all equal and
 *     a smaller copy hash): adopt R, overrides included;
 *   - otherwise do nothing; the peer adopts ours when it runs the same
 *     rule against us.
 *
 * Instances we hold that the peer lacks are therefore not pushed: the peer
 * pulls them itself, or, if it has a newer tombstone, pushes us a Cancel.
 *
 * https:// peers: every connection (replication, sync, anti-entropy) is
 * made by peer_connect through tls_http_connection, with the one client
 * context built from heureka.peer.ssl.* (trust bundle, and a client
 * certificate for mutual TLS). The peer's certificate must verify and
 * match the URL's host; a peer that fails that is unreachable: its
 * batches stay queued, back off and count as failures. SIGHUP rebuilds
 * the context; a peer moves its connections to it the next time it has
 * nothing in flight (peer_tls_refresh), so no request is cut short.
 */

#include <sys/types.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
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
#include <yajl/yajl_tree.h>
#include <zlib.h>

#include "buf.h"
#include "clock.h"
#include "config.h"
#include "hash.h"
#include "httputil.h"
#include "instance.h"
#include "json.h"
#include "gate.h"
#include "log.h"
#include "peer.h"
#include "registry.h"
#include "rest.h"
#include "server.h"
#include "tls.h"
#include "xmalloc.h"

#define PEER_DROP_SCAN		64	/* tasks looked at for a heartbeat
					   to drop when a queue is full */
#define PEER_CTL_TIMEOUT_MIN_MS	2000	/* sync/anti-entropy requests */
#define PEER_REPL_BODY_MAX	(16 * 1024 * 1024)
#define PEER_CTL_BODY_MAX	(512 * 1024 * 1024)
#define PEER_DEFAULT_LEASE_MS	(LEASE_DEFAULT_DURATION_SECS * 1000LL)
#define PEER_LATE_SYNC_MS	1000	/* sync retry once attempts are used */
#define PEER_SINGLE_WRITE_MAX	(4 * 1024 * 1024)	/* a batch per write */

struct peer_queue {
	struct peer_task	 *head;		/* oldest */
	struct peer_task	 *tail;
	struct htab		  tab;		/* by key; grows with len */
	size_t			  len;
	size_t			  max;
	size_t			  urgent;	/* tasks other than heartbeats */
	struct peer_queue_stats	  stats;
};

enum peer_ctl_kind {
	PEER_CTL_SYNC = 0,	/* start-up sync: GET registry */
	PEER_CTL_DIGEST,	/* anti-entropy: GET heureka/digest */
	PEER_CTL_PULL,		/* anti-entropy: GET registry */
};

struct peer;

/* One sync or anti-entropy request in flight. */
struct peer_ctl {
	struct peer		*p;
	enum peer_ctl_kind	 kind;
	int			 java;		/* fell back to GET apps/ */
	int			 timed_out;
};

/* The batch in flight. */
struct peer_batch {
	struct peer		*p;
	struct peer_task	*tasks[PEER_BATCH_MAX];
	size_t			 n;
	int			 timed_out;
	int			 error_seen;
};

struct peer {
	struct peers		*ps;
	char			*raw;		/* as configured */
	struct peer_url		 u;
	char			*auth;		/* "Basic ..." or NULL */
	char			*addr;		/* numeric host, NULL if not
						   resolved */
	char			*hosthdr;	/* Host: header */
	struct evhttp_connection *repl_conn;
	struct evhttp_connection *ctl_conn;
	struct peer_queue	*q;
	struct peer_backoff	 bo;
	struct event		*ev;		/* dispatch timer */
	int64_t			 ev_due;	/* mono ms, -1 idle */
	struct peer_batch	*inflight;
	struct peer_ctl		*ctl;
	unsigned		 tls_gen;	/* context of the connections */
	int			 no_ae;		/* peer lacks the extension */
	int			 ae_mismatch;	/* digest rounds that differed */

	int			 reachable;
	int64_t			 last_success_ms;
	uint64_t		 batches_sent;
	uint64_t		 items_sent;
	uint64_t		 failures;
	uint64_t		 failed_items;	/* dropped by permanent errors */
	uint64_t		 ae_rounds;
	uint64_t		 ae_pulls;
	uint64_t		 ae_adopted;
	uint64_t		 ae_cancels;
	uint64_t		 not_found;	/* heartbeat 404 -> register */
	uint64_t		 conflicts;	/* heartbeat 409 -> adopt */
};

struct peers {
	struct server		*s;
	struct peer		**v;
	size_t			  n;
	struct event		*ae_ev;
	struct event		*sync_ev;
	int			  started;
	int			  sync_done;
	int			  sync_attempts;
	size_t			  sync_pending;
	int			  sync_answered;
	int			  sync_count;
	int64_t			  sync_started_ms;
	int64_t			  sync_ms;	/* how long the sync took */
	struct log_ratelim	  rl;
	SSL_CTX			 *tls_ctx;	/* for https:// peers */
	unsigned		  tls_gen;	/* bumped on each new one */
};

static void	peer_free(struct peer *);
static void	peer_kick(struct peer *, int64_t);
static void	peer_tls_refresh(struct peer *);
static void	peer_ctl_get(struct peer *, enum peer_ctl_kind, int);
static void	peers_sync_round(struct peers *);
static void	peers_set_ready(struct peers *, const char *);
static void	peer_conn_nodelay(struct evhttp_connection *);

/* ------------------------------------------------------------------ */
/* Tasks and the queue: no libevent, `now` passed in.                  */

/* Eureka's task-id prefix for an action. */
static const char *
peer_task_prefix(enum repl_action a)
{
	switch (a) {
	case REPL_HEARTBEAT:
		return ("heartbeat");
	case REPL_REGISTER:
		return ("register");
	case REPL_CANCEL:
		return ("cancel");
	case REPL_STATUS_UPDATE:
		return ("statusUpdate");
	case REPL_DELETE_STATUS_OVERRIDE:
		return ("deleteStatusOverride");
	}
	return ("unknown");
}

/* A new task with its key; the caller fills the rest of item. */
struct peer_task *
peer_task_new(enum repl_action a, const char *app, const char *id,
    int64_t expiry)
{
	struct peer_task	*t;

	t = xcalloc(1, sizeof *t);
	xasprintf(&t->key, "%s#%s/%s", peer_task_prefix(a), app, id);
	t->item.action = a;
	t->item.app_name = xstrdup(app);
	t->item.id = xstrdup(id);
	t->item.overridden_status = STATUS_UNKNOWN;
	t->item.status = STATUS_UNKNOWN;
	t->expiry = expiry;
	return (t);
}

/* Release a task and what its item owns. */
void
peer_task_free(struct peer_task *t)
{
	if (t == NULL)
		return;
	free(t->key);
	free(t->item.app_name);
	free(t->item.id);
	instance_free(t->item.info);
	free(t);
}

/* A queue holding at most max tasks (at least one). */
struct peer_queue *
peer_queue_new(size_t max)
{
	struct peer_queue	*q;

	q = xcalloc(1, sizeof *q);
	q->max = max > 0 ? max : 1;
	htab_init(&q->tab, 64);
	return (q);
}

/* Free the queue and every pending task. */
void
peer_queue_free(struct peer_queue *q)
{
	struct peer_task	*t, *next;

	if (q == NULL)
		return;
	for (t = q->head; t != NULL; t = next) {
		next = t->next;
		peer_task_free(t);
	}
	htab_clear(&q->tab);
	free(q);
}

/* The pending task with this key, or NULL. */
static struct peer_task *
peer_queue_find(const struct peer_queue *q, const char *key)
{
	struct htab_node	*n;
	struct peer_task	*t;
	uint64_t		 h = hash_str(key);

	for (n = htab_first(&q->tab, h); n != NULL; n = n->next) {
		t = (struct peer_task *)(void *)((char *)n -
		    offsetof(struct peer_task, hnode));
		if (n->hash == h && strcmp(t->key, key) == 0)
			return (t);
	}
	return (NULL);
}

/* Unlink t from the order list and its hash chain; does not free. */
static void
peer_queue_unlink(struct peer_queue *q, struct peer_task *t)
{
	if (t->prev != NULL)
		t->prev->next = t->next;
	else
		q->head = t->next;
	if (t->next != NULL)
		t->next->prev = t->prev;
	else
		q->tail = t->prev;
	htab_remove(&q->tab, &t->hnode);
	t->prev = t->next = NULL;
	q->len--;
	if (t->item.action != REPL_HEARTBEAT)
		q->urgent--;
}

/* Hash t (already linked in order). */
static void
peer_queue_hash(struct peer_queue *q, struct peer_task *t)
{
	htab_insert(&q->tab, &t->hnode, hash_str(t->key));
	q->len++;
	if (t->item.action != REPL_HEARTBEAT)
		q->urgent++;
}

/* Append a task, coalescing by key and dropping the oldest when full. */
enum peer_push
peer_queue_push(struct peer_queue *q, struct peer_task *t, int64_t now)
{
	struct peer_task	*old;
	enum peer_push		 rc = PEER_PUSH_ADDED;

	if ((old = peer_queue_find(q, t->key)) != NULL) {
		/* Newest wins, oldest position (and age) kept (Eureka). */
		t->queued_at = old->queued_at;
		t->prev = old->prev;
		t->next = old->next;
		if (t->prev != NULL)
			t->prev->next = t;
		else
			q->head = t;
		if (t->next != NULL)
			t->next->prev = t;
		else
			q->tail = t;
		old->prev = old->next = NULL;
		/* Swap in the hash table: unhash old, hash t. */
		htab_remove(&q->tab, &old->hnode);
		q->len--;
		if (old->item.action != REPL_HEARTBEAT)
			q->urgent--;
		peer_queue_hash(q, t);
		peer_task_free(old);
		q->stats.coalesced++;
		return (PEER_PUSH_REPLACED);
	}
	if (q->len >= q->max) {
		/*
		 * Full: drop the oldest heartbeat near the head rather than a
		 * registration or cancel (a lost heartbeat is repaired by the
		 * next one; a lost registration is not). The scan is bounded.
		 */
		size_t	 scan = 0;

		for (old = q->head; old != NULL && scan < PEER_DROP_SCAN &&
		    old->item.action != REPL_HEARTBEAT; old = old->next)
			scan++;
		if (old == NULL || old->item.action != REPL_HEARTBEAT)
			old = q->head;
		peer_queue_unlink(q, old);
		peer_task_free(old);
		q->stats.overflow++;
		rc = PEER_PUSH_DROPPED;
	}
	t->queued_at = now;
	t->next = NULL;
	t->prev = q->tail;
	if (q->tail != NULL)
		q->tail->next = t;
	else
		q->head = t;
	q->tail = t;
	peer_queue_hash(q, t);
	return (rc);
}

/* Number of pending tasks. */
size_t
peer_queue_len(const struct peer_queue *q)
{
	return (q->len);
}

/* Number of pending tasks that change what clients see (not heartbeats). */
size_t
peer_queue_urgent(const struct peer_queue *q)
{
	return (q->urgent);
}

/* Drop and overflow counters. */
const struct peer_queue_stats *
peer_queue_stats(const struct peer_queue *q)
{
	return (&q->stats);
}

/* 0 when a batch should go now, else ms to wait, -1 when empty. */
int64_t
peer_queue_due(const struct peer_queue *q, int64_t now, int64_t min_age)
{
	int64_t	age;

	if (q->head == NULL)
		return (-1);
	if (q->len >= PEER_BATCH_MAX || q->len >= q->max)
		return (0);
	age = now - q->head->queued_at;
	if (age >= min_age)
		return (0);
	return (min_age - age);
}

/* Take up to max live tasks in queue order; expired ones are dropped. */
size_t
peer_queue_take(struct peer_queue *q, struct peer_task **out, size_t max,
    int64_t now)
{
	struct peer_task	*t;
	size_t			 n = 0;

	while (n < max && (t = q->head) != NULL) {
		peer_queue_unlink(q, t);
		if (t->expiry <= now) {
			q->stats.expired++;
			peer_task_free(t);
			continue;
		}
		out[n++] = t;
	}
	return (n);
}

/* Return a failed batch to the front of the queue, order kept. */
void
peer_queue_requeue(struct peer_queue *q, struct peer_task **v, size_t n,
    int64_t now)
{
	struct peer_task	*t;
	size_t			 i;

	for (i = n; i-- > 0;) {
		t = v[i];
		v[i] = NULL;
		if (t->expiry <= now) {
			q->stats.expired++;
			peer_task_free(t);
			continue;
		}
		if (peer_queue_find(q, t->key) != NULL) {
			/* A newer task for the same id is pending. */
			q->stats.coalesced++;
			peer_task_free(t);
			continue;
		}
		if (q->len >= q->max) {
			q->stats.overflow++;
			peer_task_free(t);
			continue;
		}
		t->prev = NULL;
		t->next = q->head;
		if (q->head != NULL)
			q->head->prev = t;
		else
			q->tail = t;
		q->head = t;
		peer_queue_hash(q, t);
	}
}

/* ------------------------------------------------------------------ */
/* Back-off.                                                            */

/*
 * Pause after a failure: the nominal pause starts at Eureka's (1 s for
 * congestion, 100 ms otherwise), doubles per consecutive failure up to
 * 30 s, and the pause taken is uniformly in [nominal/2, nominal] so that
 * peers which failed together do not retry together.
 */
int64_t
peer_backoff_fail(struct peer_backoff *bo, enum peer_failure kind,
    uint32_t rnd, int64_t now)
{
	int64_t		nominal, half, delay;
	unsigned	shift;

	nominal = kind == PEER_FAIL_CONGESTION ? PEER_CONGESTION_MS :
	    PEER_TRANSIENT_MS;
	shift = bo->failures < 16 ? bo->failures : 16;
	nominal <<= shift;
	if (nominal > PEER_BACKOFF_CAP_MS)
		nominal = PEER_BACKOFF_CAP_MS;
	half = nominal / 2;
	delay = half + (int64_t)(rnd % (uint32_t)(nominal - half + 1));
	if (bo->failures < UINT32_MAX)
		bo->failures++;
	bo->until = now + delay;
	return (delay);
}

/* A request succeeded: no more pause. */
void
peer_backoff_ok(struct peer_backoff *bo)
{
	bo->failures = 0;
	bo->until = 0;
}

/* May we send now? */
int
peer_backoff_ready(const struct peer_backoff *bo, int64_t now)
{
	return (now >= bo->until);
}

/* ------------------------------------------------------------------ */
/* URLs and self detection.                                             */

/* Parse http[s]://[userinfo@]host[:port][/path]; path gets a final '/'. */
int
peer_url_parse(const char *url, struct peer_url *u, char **cause)
{
	const char	*p, *auth_end, *host_end, *path;
	const char	*hs, *he;
	char		*port = NULL, *end;
	long		 lport;
	size_t		 plen;
	char		*shown = http_url_scrub(url);	/* for messages */

	memset(u, 0, sizeof *u);
	if (strncasecmp(url, "http://", 7) == 0) {
		u->scheme = xstrdup("http");
		p = url + 7;
	} else if (strncasecmp(url, "https://", 8) == 0) {
		u->scheme = xstrdup("https");
		p = url + 8;
	} else {
		xasprintf(cause, "%s: not an http(s) URL", shown);
		goto fail;
	}
	path = p + strcspn(p, "/?#");
	auth_end = NULL;
	for (end = (char *)p; end < path; end++) {
		if (*end == '@')
			auth_end = end;
	}
	if (auth_end != NULL) {
		u->userinfo = xstrndup(p, auth_end - p);
		p = auth_end + 1;
	}
	if (*p == '[') {
		hs = p + 1;
		if ((he = memchr(hs, ']', path - hs)) == NULL) {
			xasprintf(cause, "%s: bad IPv6 address", shown);
			goto fail;
		}
		host_end = he + 1;
	} else {
		hs = p;
		he = memchr(p, ':', path - p);
		if (he == NULL)
			he = path;
		host_end = he;
	}
	if (he == hs) {
		xasprintf(cause, "%s: no host", shown);
		goto fail;
	}
	u->host = xstrndup(hs, he - hs);
	if (host_end < path && *host_end == ':') {
		port = xstrndup(host_end + 1, path - host_end - 1);
		errno = 0;
		lport = strtol(port, &end, 10);
		if (port[0] == '\0' || *end != '\0' || lport < 1 ||
		    lport > 65535) {
			xasprintf(cause, "%s: bad port", shown);
			goto fail;
		}
		u->port = (int)lport;
	} else if (host_end != path) {
		xasprintf(cause, "%s: bad host", shown);
		goto fail;
	} else
		u->port = strcmp(u->scheme, "https") == 0 ? 443 : 80;
	plen = strcspn(path, "?#");
	if (plen == 0)
		u->path = xstrdup("/");
	else if (path[plen - 1] == '/')
		u->path = xstrndup(path, plen);
	else
		xasprintf(&u->path, "%.*s/", (int)plen, path);
	if (strchr(u->host, ':') != NULL)
		xasprintf(&u->display, "%s://[%s]:%d%s", u->scheme, u->host,
		    u->port, u->path);
	else
		xasprintf(&u->display, "%s://%s:%d%s", u->scheme, u->host,
		    u->port, u->path);
	free(port);
	free(shown);
	return (0);
fail:
	free(port);
	free(shown);
	peer_url_clear(u);
	return (-1);
}

/* Free what a parsed URL holds. */
void
peer_url_clear(struct peer_url *u)
{
	free(u->scheme);
	free(u->userinfo);
	free(u->host);
	free(u->path);
	free(u->display);
	memset(u, 0, sizeof *u);
}

/* Compare two URLs ignoring one trailing '/'. */
static int
peer_url_same(const char *a, const char *b)
{
	size_t	la = strlen(a), lb = strlen(b);

	if (la > 0 && a[la - 1] == '/')
		la--;
	if (lb > 0 && b[lb - 1] == '/')
		lb--;
	return (la == lb && strncmp(a, b, la) == 0);
}

/* Is this configured peer URL our own? */
int
peer_url_is_self(const char *raw, const struct peer_url *u,
    const char *my_url, int my_port, int (*is_local)(const char *, void *),
    void *arg)
{
	if (my_url != NULL && my_url[0] != '\0')
		return (peer_url_same(raw, my_url));
	if (u->port != my_port)
		return (0);
	return (is_local(u->host, arg));
}

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
	struct server		*s = arg;
	struct addrinfo		 hints, *res, *ai;
	struct ifaddrs		*ifs = NULL;
	int			 local = 0;

	if (strcasecmp(host, "localhost") == 0)
		return (1);
	if (s->hostname != NULL && strcasecmp(host, s->hostname) == 0)
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

/* ------------------------------------------------------------------ */
/* Digest.                                                              */

/* A 64-bit finaliser (splitmix64) so each lane mixes differently. */
static uint64_t
peer_mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return (x);
}

/*
 * The digest of live leases: four 64-bit lanes, each the sum of a hash of
 * every lease's app name and registry_copy_hash() (every replicated field),
 * hashed with the fixed-key hash_fixed() because peers compare digests.
 * A sum is independent of order, so no sort and no formatting: O(n) with
 * no allocation, which matters because it runs on the loop every
 * anti-entropy round. Expiry is judged on the monotonic clock.
 */
void
peer_digest(struct registry *reg, int64_t mono, char hex[65], size_t *count)
{
	const struct instance	*in;
	struct reg_app		*a;
	const char		*name;
	uint64_t		 lane[4] = { 0, 0, 0, 0 }, h, ch;
	size_t			 n = 0, i, j;
	int			 k;

	for (i = 0; i < registry_app_count(reg); i++) {
		a = registry_app_at(reg, i);
		name = reg_app_name(a);
		for (j = 0; j < reg_app_size(a); j++) {
			in = reg_app_instance_at(a, j);
			if (in == NULL || reg_app_lease_expired(a, j, mono))
				continue;
			ch = registry_copy_hash(in);
			h = hash_fixed(1469598103934665603ULL, name,
			    strlen(name) + 1);
			h = hash_fixed(h, &ch, sizeof ch);
			for (k = 0; k < 4; k++)
				lane[k] += peer_mix(h + (uint64_t)k *
				    0x9e3779b97f4a7c15ULL);
			n++;
		}
	}
	for (k = 0; k < 4; k++)
		snprintf(hex + 16 * k, 17, "%016llx",
		    (unsigned long long)lane[k]);
	if (count != NULL)
		*count = n;
}

/* ------------------------------------------------------------------ */
/* Enqueueing: the registry observer.                                   */

/* Expiry of a Register/Heartbeat task (§6.2 table). */
static int64_t
peer_lease_expiry(const struct instance *in, int64_t now)
{
	if (in != NULL && in->has_lease && in->lease.renewal_interval_secs > 0)
		return (now + (int64_t)in->lease.renewal_interval_secs * 1000);
	return (now + PEER_DEFAULT_LEASE_MS);
}

/* Build the task for one registry event, NULL if nothing to send. */
static struct peer_task *
peer_task_from_event(const struct registry_event *ev, int64_t mono,
    int64_t max_time)
{
	struct peer_task	*t;
	const struct instance	*in = ev->inst;

	switch (ev->type) {
	case REG_EV_REGISTER:
	case REG_EV_METADATA:
		if (in == NULL)
			return (NULL);
		t = peer_task_new(REPL_REGISTER, ev->app, ev->id,
		    peer_lease_expiry(in, mono));
		t->item.info = instance_dup(in);
		break;
	case REG_EV_RENEW:
		if (in == NULL)
			return (NULL);
		t = peer_task_new(REPL_HEARTBEAT, ev->app, ev->id,
		    peer_lease_expiry(in, mono));
		if (ev->override != STATUS_UNKNOWN) {
			t->item.has_overridden = 1;
			t->item.overridden_status = ev->override;
		}
		break;
	case REG_EV_CANCEL:
		/* The tombstone's origin time travels as lastDirtyTimestamp. */
		t = peer_task_new(REPL_CANCEL, ev->app, ev->id,
		    mono + max_time);
		t->item.has_last_dirty = ev->cancel_ts > 0;
		t->item.last_dirty_ts = ev->cancel_ts;
		return (t);
	case REG_EV_STATUS_UPDATE:
	case REG_EV_DELETE_OVERRIDE:
		if (in == NULL)
			return (NULL);
		t = peer_task_new(ev->type == REG_EV_STATUS_UPDATE ?
		    REPL_STATUS_UPDATE : REPL_DELETE_STATUS_OVERRIDE,
		    ev->app, ev->id, mono + max_time);
		/* As Eureka: the copy rides along, with its origin stamp. */
		t->item.info = instance_dup(in);
		break;
	default:
		return (NULL);	/* evictions are never replicated */
	}
	t->item.has_last_dirty = 1;
	t->item.last_dirty_ts = in->last_dirty_ts;
	t->item.has_status = 1;
	t->item.status = in->status;
	return (t);
}

/* Queue a task for one peer and make sure its timer runs. */
static void
peer_enqueue(struct peer *p, struct peer_task *t, int64_t mono)
{
	if (peer_queue_push(p->q, t, mono) == PEER_PUSH_DROPPED)
		log_warnx_rl(&p->ps->rl, "peer %s: replication queue full, "
		    "oldest task dropped", p->u.display);
	peer_kick(p, PEER_DISPATCH_MS);
}

/* Registry observer: replicate every change that did not come from a peer. */
static void
peers_observe_cb(const struct registry_event *ev, void *arg)
{
	struct peers		*ps = arg;
	struct peer_task	*t;
	int64_t			 mono = clock_mono_ms();
	size_t			 i;

	if (ev->replicated || ev->type == REG_EV_EVICT || ps->n == 0)
		return;
	for (i = 0; i < ps->n; i++) {
		t = peer_task_from_event(ev, mono,
		    ps->s->conf->max_time_for_replication);
		if (t == NULL)
			return;
		peer_enqueue(ps->v[i], t, mono);
	}
}

/* Queue a Register of our copy of (app, id) for p, if we have one. */
static void
peer_push_register(struct peer *p, const char *app, const char *id)
{
	const struct instance	*in;
	struct peer_task	*t;
	int64_t			 mono = clock_mono_ms();

	in = registry_get(p->ps->s->reg, app, id, mono);
	if (in == NULL)
		return;
	t = peer_task_new(REPL_REGISTER, app, id, peer_lease_expiry(in, mono));
	t->item.info = instance_dup(in);
	t->item.has_last_dirty = 1;
	t->item.last_dirty_ts = in->last_dirty_ts;
	t->item.has_status = 1;
	t->item.status = in->status;
	peer_enqueue(p, t, mono);
}

/*
 * Queue a Cancel for p (anti-entropy found a copy we cancelled), carrying
 * our tombstone's time as its lastDirtyTimestamp.
 */
static void
peer_push_cancel(struct peer *p, const char *app, const char *id,
    int64_t cancel_ts)
{
	struct peer_task	*t;
	int64_t			 mono = clock_mono_ms();

	t = peer_task_new(REPL_CANCEL, app, id,
	    mono + p->ps->s->conf->max_time_for_replication);
	t->item.has_last_dirty = 1;
	t->item.last_dirty_ts = cancel_ts;
	peer_enqueue(p, t, mono);
}

/* ------------------------------------------------------------------ */
/* HTTP glue.                                                           */

/* Inflate a gzip body into out (bounded). */
static int
peer_gunzip(const unsigned char *in, size_t len, struct buf *out,
    size_t max)
{
	z_stream	z;
	unsigned char	chunk[16384];
	int		rc;

	memset(&z, 0, sizeof z);
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
		return (-1);
	z.next_in = (unsigned char *)in;
	z.avail_in = (uInt)len;
	do {
		z.next_out = chunk;
		z.avail_out = sizeof chunk;
		rc = inflate(&z, Z_NO_FLUSH);
		if (rc != Z_OK && rc != Z_STREAM_END) {
			inflateEnd(&z);
			return (-1);
		}
		buf_add(out, chunk, sizeof chunk - z.avail_out);
		if (out->len > max) {
			inflateEnd(&z);
			return (-1);
		}
	} while (rc != Z_STREAM_END && (z.avail_in > 0 || z.avail_out == 0));
	inflateEnd(&z);
	return (rc == Z_STREAM_END ? 0 : -1);
}

/* The response body, inflated if gzip; -1 on a bad body. */
static int
peer_body(struct evhttp_request *req, struct buf *out, size_t max)
{
	struct evbuffer	*eb = evhttp_request_get_input_buffer(req);
	const char	*enc;
	unsigned char	*data;
	size_t		 len = evbuffer_get_length(eb);

	data = evbuffer_pullup(eb, -1);
	enc = evhttp_find_header(evhttp_request_get_input_headers(req),
	    "Content-Encoding");
	if (enc != NULL && strcasecmp(enc, "gzip") == 0)
		return (peer_gunzip(data, len, out, max));
	if (len > max)
		return (-1);
	buf_add(out, data, len);
	return (0);
}

/* Common request headers. */
static void
peer_headers(struct peer *p, struct evhttp_request *req)
{
	struct evkeyvalq	*h = evhttp_request_get_output_headers(req);
	struct config		*conf = p->ps->s->conf;

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
    struct repl_response *resp)
{
	struct server		*s = p->ps->s;
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
			peer_push_register(p, it->app_name, it->id);
		} else if (it->action == REPL_HEARTBEAT &&
		    resp->items[i].entity != NULL &&
		    s->conf->sync_when_timestamp_differs) {
			/* The peer has a newer copy: adopt it (§6.2). */
			p->conflicts++;
			dup = resp->items[i].entity;
			resp->items[i].entity = NULL;
			if (dup->overridden_status != STATUS_UNKNOWN)
				registry_set_override(s->reg, instance_id(dup),
				    dup->overridden_status, clock_mono_ms());
			registry_register(s->reg, dup, 1, clock_now());
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
	int			 code = 0;
	int64_t			 mono = clock_mono_ms(), delay;

	p->inflight = NULL;
	if (req != NULL)
		code = evhttp_request_get_response_code(req);
	if (code >= 200 && code < 300) {
		p->reachable = 1;
		p->last_success_ms = clock_wall_ms();
		peer_backoff_ok(&p->bo);
		memset(&resp, 0, sizeof resp);
		buf_init(&body, PEER_REPL_BODY_MAX);
		if (peer_body(req, &body, PEER_REPL_BODY_MAX) != 0)
			log_warnx_rl(&p->ps->rl, "peer %s: bad batch answer",
			    p->u.display);
		else if (json_decode_repl_response(body.data, body.len, &resp,
		    clock_wall_ms(), &cause) != 0) {
			log_warnx_rl(&p->ps->rl, "peer %s: batch answer: %s",
			    p->u.display, cause);
			free(cause);
		} else
			peer_batch_items(p, b, &resp);
		repl_response_clear(&resp);
		buf_free(&body);
		peer_batch_free(b);
		peer_kick(p, 0);
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
	peer_kick(p, delay);
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
		    arc4random(), mono));
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
		peer_kick(p, p->bo.until - mono);
		return;
	}
	/*
	 * Changes go out within PEER_DISPATCH_MS; heartbeats alone wait up
	 * to Eureka's PEER_BATCH_AGE_MS (or a full batch), so a heartbeat
	 * storm costs one request per 250 renewals, not one per 20 ms.
	 */
	due = peer_queue_due(p->q, mono, peer_queue_urgent(p->q) > 0 ?
	    PEER_DISPATCH_MS : PEER_BATCH_AGE_MS);
	if (due < 0)
		return;
	if (due > 0) {
		peer_kick(p, due);
		return;
	}
	peer_send_batch(p, mono);
}

/* Run p's timer within `delay` ms (earlier deadlines are kept). */
static void
peer_kick(struct peer *p, int64_t delay)
{
	struct timeval	tv;
	int64_t		mono = clock_mono_ms();

	if (p->ev == NULL)
		return;
	if (delay < 0)
		delay = 0;
	if (p->ev_due >= 0 && p->ev_due <= mono + delay)
		return;
	p->ev_due = mono + delay;
	tv.tv_sec = delay / 1000;
	tv.tv_usec = (delay % 1000) * 1000;
	evtimer_add(p->ev, &tv);
}

/* ------------------------------------------------------------------ */
/* Sync and anti-entropy.                                               */

/*
 * Reconcile with a peer's registry (rule at the top of this file; the
 * decision is registry_reconcile()). Instances adopted are stolen from
 * `remote`. A Java peer's GET apps/ lists expired leases too, so there a
 * copy whose shown lease has run out is not adopted; a heureka peer lists
 * only live ones, judged on its own monotonic clock. Returns the number
 * adopted.
 */
static size_t
peer_reconcile(struct peer *p, struct applications *remote, int push,
    int java)
{
	struct registry		*reg = p->ps->s->reg;
	struct application	*a;
	struct instance		*r;
	struct hk_time		 now = clock_now();
	int64_t			 tomb;
	size_t			 i, j, adopted = 0;
	const char		*id;

	for (i = 0; i < remote->n; i++) {
		a = remote->apps[i];
		for (j = 0; j < a->n; j++) {
			if ((r = a->instances[j]) == NULL)
				continue;
			if (r->app == NULL && a->name != NULL)
				r->app = xstrdup(a->name);
			if (r->app == NULL || r->last_dirty_ts < 0)
				continue;
			id = instance_id(r);
			if (id[0] == '\0')
				continue;
			switch (registry_reconcile(reg, r, now.mono_ms,
			    &tomb)) {
			case RECON_CANCEL:
				if (push) {
					p->ae_cancels++;
					peer_push_cancel(p, r->app, id, tomb);
				}
				continue;
			case RECON_KEEP:
				continue;
			case RECON_ADOPT:
				break;
			}
			if (java && r->has_lease &&
			    registry_lease_expired(r, 0, now.wall_ms))
				continue;
			a->instances[j] = NULL;
			if (registry_adopt(reg, r, now) == REG_OK)
				adopted++;
		}
	}
	return (adopted);
}

/* Parse {"digest":"...","count":N}; 0 on success. */
static int
peer_parse_digest(const char *s, char hex[65])
{
	static const char	*dpath[] = { "digest", NULL };
	yajl_val		 t, d;
	const char		*v;
	char			 err[128];
	int			 rc = -1;

	if ((t = yajl_tree_parse(s, err, sizeof err)) == NULL)
		return (-1);
	d = yajl_tree_get(t, dpath, yajl_t_string);
	if (d != NULL && (v = YAJL_GET_STRING(d)) != NULL && strlen(v) == 64) {
		memcpy(hex, v, 65);
		rc = 0;
	}
	yajl_tree_free(t);
	return (rc);
}

/* Record a control-request failure (called before the callback). */
static void
peer_ctl_error_cb(enum evhttp_request_error err, void *arg)
{
	struct peer_ctl	*c = arg;

	if (err == EVREQ_HTTP_TIMEOUT)
		c->timed_out = 1;
}

/*
 * One peer's part of a start-up sync round finished. When no peer answered
 * and the configured attempts (Spring: 1) are used up, heureka keeps
 * asking once a second until some peer answers: otherwise the first node
 * of a cluster started one node at a time would refuse reads for the whole
 * waitTimeInMsWhenSyncEmpty (5 min) although its peers come up seconds
 * later.
 */
static void
peers_sync_one_done(struct peers *ps, int answered, int peer_ready)
{
	struct timeval	tv;
	int64_t		w;

	if (gate_is_ready(ps->s->gate))
		return;
	if (answered)
		ps->sync_answered = 1;
	if (ps->sync_pending > 0)
		ps->sync_pending--;
	if (peer_ready) {
		ps->sync_done = 1;
		peers_set_ready(ps, "synced from a ready peer");
		return;
	}
	if (ps->sync_pending > 0)
		return;
	if (ps->sync_answered) {
		ps->sync_done = 1;
		peers_set_ready(ps, "synced (no peer was ready yet)");
		return;
	}
	if (ps->sync_attempts <= ps->s->conf->registry_sync_retries)
		w = ps->s->conf->registry_sync_retry_wait_ms;
	else {
		if (!ps->sync_done)
			log_warnx("start-up sync: no peer answered; reads "
			    "refused until one does or "
			    "waitTimeInMsWhenSyncEmpty has passed");
		ps->sync_done = 1;
		w = PEER_LATE_SYNC_MS;
	}
	tv.tv_sec = w / 1000;
	tv.tv_usec = (w % 1000) * 1000;
	evtimer_add(ps->sync_ev, &tv);
}

/* A sync or anti-entropy GET came back. */
static void
peer_ctl_done_cb(struct evhttp_request *req, void *arg)
{
	struct peer_ctl		*c = arg;
	struct peer		*p = c->p;
	struct peers		*ps = p->ps;
	struct applications	*apps = NULL;
	struct buf		 body;
	const char		*rh;
	char			*cause = NULL, mine[65], theirs[65];
	enum peer_ctl_kind	 kind = c->kind;
	int			 code = 0, java = c->java, peer_ready = 0;
	size_t			 n;

	p->ctl = NULL;
	free(c);
	if (req != NULL)
		code = evhttp_request_get_response_code(req);
	buf_init(&body, PEER_CTL_BODY_MAX);
	if (code == 404 && !java && kind != PEER_CTL_DIGEST) {
		/* Not a heureka peer: the standard endpoint. */
		peer_ctl_get(p, kind, 1);
		goto out;
	}
	if (code == 404 && kind == PEER_CTL_DIGEST) {
		p->no_ae = 1;
		log_info("peer %s has no anti-entropy endpoint (not heureka?)",
		    p->u.display);
		goto out;
	}
	rh = req != NULL ? evhttp_find_header(
	    evhttp_request_get_input_headers(req), "X-Heureka-Ready") : NULL;
	if (code == 403 && !java && kind == PEER_CTL_SYNC && rh != NULL &&
	    strcmp(rh, "0") == 0) {
		/*
		 * A heureka peer still syncing itself: it answered, with
		 * nothing it may hand out yet. A cluster starting together
		 * opens once every peer said so.
		 */
		p->reachable = 1;
		log_info("start-up sync: %s is not ready either",
		    p->u.display);
		peers_sync_one_done(ps, 1, 0);
		goto out;
	}
	if (code == 401 || (code == 403 && !java && rh == NULL))
		log_warnx_rl(&ps->rl, "peer %s answered %d: check the "
		    "credentials in its URL (heureka.security.peer.*) or the "
		    "peer certificate", p->u.display, code);
	if (code != 200 || peer_body(req, &body, PEER_CTL_BODY_MAX) != 0) {
		if (code != 403)
			p->reachable = 0;
		if (kind == PEER_CTL_SYNC)
			peers_sync_one_done(ps, 0, 0);
		goto out;
	}
	p->reachable = 1;
	p->last_success_ms = clock_wall_ms();
	if (p->bo.failures > 0) {
		/*
		 * The peer answers again: end the replication pause now
		 * rather than up to 30 s later. This probe runs once per
		 * anti-entropy interval, so it cannot become a retry storm.
		 */
		peer_backoff_ok(&p->bo);
		peer_kick(p, 0);
	}
	switch (kind) {
	case PEER_CTL_DIGEST:
		p->ae_rounds++;
		if (peer_parse_digest(body.data, theirs) != 0) {
			log_warnx_rl(&ps->rl, "peer %s: bad digest",
			    p->u.display);
			break;
		}
		peer_digest(ps->s->reg, clock_mono_ms(), mine, &n);
		if (strcmp(mine, theirs) == 0) {
			p->ae_mismatch = 0;
			if (!gate_is_ready(ps->s->gate))
				peers_set_ready(ps, "in sync with a peer");
			break;
		}
		/*
		 * A pull decodes the peer's whole registry on the loop, so it
		 * is kept for differences replication will not fix: ones that
		 * outlive a round while nothing is queued for or in flight to
		 * that peer. Under churn the digests differ all the time and
		 * replication is already converging them.
		 */
		if (!gate_is_ready(ps->s->gate) || (++p->ae_mismatch >= 2 &&
		    peer_queue_urgent(p->q) == 0 && p->inflight == NULL)) {
			p->ae_mismatch = 0;
			p->ae_pulls++;
			peer_ctl_get(p, PEER_CTL_PULL, 0);
		}
		break;
	case PEER_CTL_SYNC:
	case PEER_CTL_PULL:
		apps = json_decode_applications(body.data, body.len,
		    clock_wall_ms(), &cause);
		if (apps == NULL) {
			log_warnx_rl(&ps->rl, "peer %s: bad registry: %s",
			    p->u.display, cause);
			free(cause);
			if (kind == PEER_CTL_SYNC)
				peers_sync_one_done(ps, 0, 0);
			break;
		}
		n = peer_reconcile(p, apps, kind == PEER_CTL_PULL, java);
		if (kind == PEER_CTL_PULL) {
			p->ae_adopted += n;
			if (n > 0)
				log_info("anti-entropy: adopted %zu "
				    "instance(s) from %s", n, p->u.display);
			if (!gate_is_ready(ps->s->gate))
				peers_set_ready(ps, "anti-entropy pull");
			break;
		}
		ps->sync_count += (int)n;
		/* Java peers only answer 200 once they are open (§6.4). */
		rh = evhttp_find_header(evhttp_request_get_input_headers(req),
		    "X-Heureka-Ready");
		peer_ready = java || (rh != NULL && strcmp(rh, "1") == 0);
		log_info("start-up sync: %zu instance(s) from %s%s", n,
		    p->u.display, peer_ready ? "" : " (not ready)");
		peers_sync_one_done(ps, 1, peer_ready);
		break;
	}
out:
	applications_free(apps);
	buf_free(&body);
}

/* Issue a sync/anti-entropy GET to p (one at a time per peer). */
static void
peer_ctl_get(struct peer *p, enum peer_ctl_kind kind, int java)
{
	struct evhttp_request	*req;
	struct peer_ctl		*c;
	char			*uri;
	const char		*what;

	peer_tls_refresh(p);
	if (p->ctl != NULL || p->ctl_conn == NULL) {
		if (kind == PEER_CTL_SYNC)
			peers_sync_one_done(p->ps, 0, 0);
		return;
	}
	c = xcalloc(1, sizeof *c);
	c->p = p;
	c->kind = kind;
	c->java = java;
	if (kind == PEER_CTL_DIGEST)
		what = "heureka/digest";
	else
		what = java ? "apps/" : "heureka/apps";
	req = evhttp_request_new(peer_ctl_done_cb, c);
	evhttp_request_set_error_cb(req, peer_ctl_error_cb);
	peer_headers(p, req);
	xasprintf(&uri, "%s%s", p->u.path, what);
	p->ctl = c;
	if (evhttp_make_request(p->ctl_conn, req, EVHTTP_REQ_GET, uri) != 0) {
		p->ctl = NULL;
		evhttp_request_free(req);
		free(c);
		if (kind == PEER_CTL_SYNC)
			peers_sync_one_done(p->ps, 0, 0);
	} else
		peer_conn_nodelay(p->ctl_conn);
	free(uri);
}

/* Tell the server reads may be served. */
static void
peers_set_ready(struct peers *ps, const char *why)
{
	struct hk_time	now;

	if (gate_is_ready(ps->s->gate))
		return;
	now = clock_now();
	ps->sync_ms = now.mono_ms - ps->sync_started_ms;
	log_info("registry ready (%s, %d instance(s) copied, %lld ms)", why,
	    ps->sync_count, (long long)ps->sync_ms);
	gate_set_ready(ps->s->gate, ps->sync_count, now);
}

/* One attempt of the start-up sync: ask every peer at once. */
static void
peers_sync_round(struct peers *ps)
{
	size_t	i;

	ps->sync_attempts++;
	ps->sync_pending = ps->n;
	ps->sync_answered = 0;
	for (i = 0; i < ps->n && !gate_is_ready(ps->s->gate); i++)
		peer_ctl_get(ps->v[i], PEER_CTL_SYNC, 0);
}

/* Retry timer of the start-up sync. */
static void
peers_sync_cb(evutil_socket_t fd, short what, void *arg)
{
	struct peers	*ps = arg;

	(void)fd;
	(void)what;
	if (!gate_is_ready(ps->s->gate))
		peers_sync_round(ps);
}

/* Anti-entropy timer: ask every idle peer for its digest. */
static void
peers_ae_cb(evutil_socket_t fd, short what, void *arg)
{
	struct peers	*ps = arg;
	struct peer	*p;
	size_t		 i;

	(void)fd;
	(void)what;
	if (!ps->sync_done)
		return;
	for (i = 0; i < ps->n; i++) {
		p = ps->v[i];
		if (!p->no_ae && p->ctl == NULL)
			peer_ctl_get(p, PEER_CTL_DIGEST, 0);
	}
}

/* ------------------------------------------------------------------ */
/* Peer list.                                                           */

/*
 * An outgoing connection writes a whole request at once: libevent's
 * default single write is 16 KiB, so a ~30 KB batch left as two writes and
 * the second one waited for the peer's delayed ACK (~40 ms).
 */
static void
peer_conn_tune(struct evhttp_connection *evcon)
{
	struct bufferevent	*bev = evhttp_connection_get_bufferevent(evcon);

	if (bev != NULL)
		bufferevent_set_max_single_write(bev, PEER_SINGLE_WRITE_MAX);
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

/* Create connections to p's resolved address. */
static void
peer_connect(struct peer *p)
{
	struct config	*conf = p->ps->s->conf;
	struct timeval	 tv;
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
	p->repl_conn = tls_http_connection(p->ps->s->base, NULL, ctx,
	    p->u.host, p->addr, (unsigned short)p->u.port);
	if (p->repl_conn == NULL)
		fatalx("peer %s: cannot make a connection", p->u.display);
	peer_conn_tune(p->repl_conn);
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evhttp_connection_set_timeout_tv(p->repl_conn, &tv);
	evhttp_connection_set_retries(p->repl_conn, 0);
	evhttp_connection_set_max_body_size(p->repl_conn, PEER_REPL_BODY_MAX);

	/* Registry pulls can be large: the client read timeout applies. */
	ms = (int64_t)conf->eureka_server_read_timeout_seconds * 1000;
	if (ms < PEER_CTL_TIMEOUT_MIN_MS)
		ms = PEER_CTL_TIMEOUT_MIN_MS;
	p->ctl_conn = tls_http_connection(p->ps->s->base, NULL, ctx,
	    p->u.host, p->addr, (unsigned short)p->u.port);
	if (p->ctl_conn == NULL)
		fatalx("peer %s: cannot make a connection", p->u.display);
	peer_conn_tune(p->ctl_conn);
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evhttp_connection_set_timeout_tv(p->ctl_conn, &tv);
	evhttp_connection_set_retries(p->ctl_conn, 0);
	evhttp_connection_set_max_body_size(p->ctl_conn, PEER_CTL_BODY_MAX);
}

/* Idle and still on an old TLS context: reconnect with the current one. */
static void
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
	max = ps->s->conf->max_elements_in_peer_replication_pool;
	p->q = peer_queue_new(max > 0 ? (size_t)max : 10000);
	p->ev = evtimer_new(ps->s->base, peer_timer_cb, p);
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
	struct server	*s = ps->s;
	struct peer	**v = NULL;
	struct peer_url	 u;
	char		**urls = NULL, *err = NULL, *addr;
	size_t		 n, i, j, k, nv = 0;
	int		 dup;

	(void)cause;
	n = config_service_urls(s->conf, &urls);
	v = xcalloc(n + 1, sizeof *v);
	for (i = 0; i < n; i++) {
		if (peer_url_parse(urls[i], &u, &err) != 0) {
			log_warnx("peer list: %s (ignored)", err);
			free(err);
			err = NULL;
			continue;
		}
		if (peer_url_is_self(urls[i], &u, s->conf->my_url, s->port,
		    peer_host_is_local, s)) {
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
peers_new(struct server *s, char **cause)
{
	struct peers	*ps;
	struct log_ratelim rl = LOG_RATELIM_INIT(10000, 5);

	ps = xcalloc(1, sizeof *ps);
	ps->s = s;
	ps->rl = rl;
	if ((ps->tls_ctx = peers_tls_ctx(s->conf, cause)) == NULL) {
		free(ps);
		return (NULL);
	}
	if (peers_build(ps, &ps->v, &ps->n, NULL, 0, cause) != 0) {
		tls_ctx_free(ps->tls_ctx);
		free(ps);
		return (NULL);
	}
	ps->ae_ev = event_new(s->base, -1, EV_PERSIST, peers_ae_cb, ps);
	ps->sync_ev = evtimer_new(s->base, peers_sync_cb, ps);
	registry_add_observer(s->reg, peers_observe_cb, ps);
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
	if (ps->ae_ev != NULL)
		event_free(ps->ae_ev);
	if (ps->sync_ev != NULL)
		event_free(ps->sync_ev);
	tls_ctx_free(ps->tls_ctx);
	free(ps);
}

/* Start-up sync, then anti-entropy. */
void
peers_start(struct peers *ps)
{
	struct timeval	tv;
	int64_t		ms = ps->s->conf->anti_entropy_interval_ms;

	if (ps->started)
		return;
	ps->started = 1;
	ps->sync_started_ms = clock_mono_ms();
	if (ms > 0) {
		tv.tv_sec = ms / 1000;
		tv.tv_usec = (ms % 1000) * 1000;
		event_add(ps->ae_ev, &tv);
	}
	if (ps->n == 0) {
		/* A one-node cluster has nobody to wait for. */
		ps->sync_done = 1;
		peers_set_ready(ps, "no peers");
		return;
	}
	peers_sync_round(ps);
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
	if ((ctx = peers_tls_ctx(ps->s->conf, &err)) == NULL) {
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
}

/* ------------------------------------------------------------------ */
/* The extension endpoints: {base}heureka/...                           */

/* Send a JSON body. */
static void
peers_reply(struct evhttp_request *req, int code, struct buf *b)
{
	struct evbuffer	*eb = evbuffer_new();

	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "application/json");
	evbuffer_add(eb, b->data, b->len);
	evhttp_send_reply(req, code, http_reason(code), eb);
	evbuffer_free(eb);
}

/* GET heureka/apps: the full registry (once ready, as GET apps). */
static void
peers_http_apps(struct peers *ps, struct evhttp_request *req)
{
	struct registry		*reg = ps->s->reg;
	struct reg_app		*a;
	const struct instance	*in;
	struct buf		 b;
	char			*hash;
	int64_t			 mono = clock_mono_ms();
	size_t			 i, j, napps = 0, ninst;

	buf_init(&b, 0);
	hash = registry_hashcode(reg);
	json_apps_open(&b, CODEC_FULL, (int64_t)registry_gen(reg), hash);
	for (i = 0; i < registry_app_count(reg); i++) {
		a = registry_app_at(reg, i);
		for (ninst = 0, j = 0; j < reg_app_size(a); j++) {
			in = reg_app_instance_at(a, j);
			if (in == NULL || reg_app_lease_expired(a, j, mono))
				continue;
			if (ninst == 0) {
				if (napps++ > 0)
					buf_addc(&b, ',');
				json_app_open(&b, reg_app_name(a));
			} else
				buf_addc(&b, ',');
			json_encode_instance(&b, in, CODEC_FULL);
			ninst++;
		}
		if (ninst > 0)
			json_app_close(&b);
	}
	json_apps_close(&b, CODEC_FULL, (int64_t)registry_gen(reg), hash);
	free(hash);
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "X-Heureka-Ready", gate_allow_read(ps->s->gate, mono) ? "1" : "0");
	peers_reply(req, 200, &b);
	buf_free(&b);
}

/* GET heureka/stats: replication counters (tests, operators). */
static void
peers_http_stats(struct peers *ps, struct evhttp_request *req)
{
	const struct peer		*p;
	const struct peer_queue_stats	*st;
	struct buf			 b;
	uint64_t			 items = 0, batches = 0;
	size_t				 i;

	buf_init(&b, 0);
	buf_addf(&b, "{\"ready\":%s,\"syncCount\":%d,\"syncMs\":%lld,"
	    "\"peers\":[", gate_is_ready(ps->s->gate) ? "true" : "false", ps->sync_count,
	    (long long)ps->sync_ms);
	for (i = 0; i < ps->n; i++) {
		p = ps->v[i];
		st = peer_queue_stats(p->q);
		items += p->items_sent;
		batches += p->batches_sent;
		if (i > 0)
			buf_addc(&b, ',');
		buf_adds(&b, "{\"url\":");
		json_add_string(&b, p->u.display);
		buf_addf(&b, ",\"resolved\":%s,\"reachable\":%s,"
		    "\"queue\":%zu,\"inflight\":%zu,\"batches\":%llu,"
		    "\"items\":%llu,\"failures\":%llu,\"overflow\":%llu,"
		    "\"expired\":%llu,\"coalesced\":%llu,\"failedItems\":%llu,"
		    "\"backoffFailures\":%u,\"lastSuccess\":%lld,"
		    "\"notFound\":%llu,\"conflicts\":%llu,"
		    "\"antiEntropy\":{\"rounds\":%llu,\"pulls\":%llu,"
		    "\"adopted\":%llu,\"cancels\":%llu,\"supported\":%s}}",
		    p->addr != NULL ? "true" : "false",
		    p->reachable ? "true" : "false", peer_queue_len(p->q),
		    p->inflight != NULL ? p->inflight->n : 0,
		    (unsigned long long)p->batches_sent,
		    (unsigned long long)p->items_sent,
		    (unsigned long long)p->failures,
		    (unsigned long long)st->overflow,
		    (unsigned long long)st->expired,
		    (unsigned long long)st->coalesced,
		    (unsigned long long)p->failed_items, p->bo.failures,
		    (long long)p->last_success_ms,
		    (unsigned long long)p->not_found,
		    (unsigned long long)p->conflicts,
		    (unsigned long long)p->ae_rounds,
		    (unsigned long long)p->ae_pulls,
		    (unsigned long long)p->ae_adopted,
		    (unsigned long long)p->ae_cancels,
		    p->no_ae ? "false" : "true");
	}
	buf_addf(&b, "],\"itemsSent\":%llu,\"batchesSent\":%llu}",
	    (unsigned long long)items, (unsigned long long)batches);
	peers_reply(req, 200, &b);
	buf_free(&b);
}

/* Dispatch {base}heureka/<rest>; unknown paths get 404. */
void
peers_http(struct peers *ps, struct evhttp_request *req, const char *rest)
{
	struct buf	 b;
	char		 hex[65];
	size_t		 n, len;

	buf_init(&b, 0);
	len = strcspn(rest, "?");
	if (len > 0 && rest[len - 1] == '/')
		len--;
	if (ps == NULL || evhttp_request_get_command(req) != EVHTTP_REQ_GET)
		goto notfound;
	if (((len == 6 && strncmp(rest, "digest", 6) == 0) ||
	    (len == 4 && strncmp(rest, "apps", 4) == 0)) &&
	    !gate_allow_read(ps->s->gate, clock_mono_ms())) {
		/*
		 * The registry is gated as GET apps is (§6.4), or anyone could
		 * read a half-synced one here. The header tells a syncing
		 * heureka peer that we answered but are not ready ourselves.
		 */
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "X-Heureka-Ready", "0");
		buf_adds(&b, "{\"error\":\"not ready: start-up sync "
		    "running\"}");
		peers_reply(req, 403, &b);
	} else if (len == 6 && strncmp(rest, "digest", 6) == 0) {
		peer_digest(ps->s->reg, clock_mono_ms(), hex, &n);
		buf_addf(&b, "{\"digest\":\"%s\",\"count\":%zu}", hex, n);
		peers_reply(req, 200, &b);
	} else if (len == 4 && strncmp(rest, "apps", 4) == 0)
		peers_http_apps(ps, req);
	else if (len == 5 && strncmp(rest, "stats", 5) == 0)
		peers_http_stats(ps, req);
	else
		goto notfound;
	buf_free(&b);
	return;
notfound:
	buf_adds(&b, "{\"error\":\"not found\"}");
	peers_reply(req, 404, &b);
	buf_free(&b);
}
