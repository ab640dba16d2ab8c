/*
 * consul.c: Consul's read-only HTTP API on heureka (docs/dns-consul.md):
 * GET /v1/catalog/services, /v1/catalog/service/<name>,
 * /v1/health/service/<name> (?passing, ?tag=), /v1/catalog/nodes,
 * /v1/status/leader, /v1/status/peers and /v1/agent/self, in the shapes
 * of hashicorp/consul's api package (consul_json.c builds them).
 *
 * Blocking queries (Consul's "blocking queries" page): every answer
 * carries X-Consul-Index; a request with ?index=N is held while the
 * index of what it reads is at most N, until it moves (the registry
 * observer wakes the held requests on the next loop turn) or ?wait=
 * (a Go duration, default 5 min, at most heureka.consul.max-wait-ms,
 * plus up to 1/16 of it as jitter, as Consul adds) ends; then it gets
 * the answer of that moment. A held request costs a struct and two
 * events; there is at most one per connection (the front reads the next
 * request of a connection after the reply), so they are bounded by
 * eureka.server.max-connections, and past that count a request is
 * answered at once instead of held. A client that goes away is noticed
 * (its socket turns readable at end of file) and its request dropped.
 *
 * The headers the Go client requires on every answer are sent:
 * X-Consul-Index, X-Consul-KnownLeader (true: every heureka node answers
 * from its own copy) and X-Consul-LastContact (0). ?filter= is refused
 * (400): a filter ignored would answer something else than asked.
 * Registration (the agent API) is not served: heureka's leases come
 * from Eureka clients.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "buf.h"
#include "bug.h"
#include "config.h"
#include "consul.h"
#include "consul_int.h"
#include "hold.h"
#include "http.h"
#include "httputil.h"
#include "instance.h"
#include "log.h"
#include "registry.h"
#include "xmalloc.h"

#define CONSUL_DEFAULT_WAIT_MS	(5 * 60 * 1000)	/* Consul's */
#define CONSUL_HTTP_TIMEOUT	60	/* s: server.c's idle timeout */

/* A blocking query held until its index moves or its wait ends. */
struct consul_wait {
	TAILQ_ENTRY(consul_wait) entry;
	struct consul		*c;
	struct hreq		*req;
	struct consul_q		 q;
	uint64_t		 index;
	struct event		*timer;
	struct hold		*hold;		/* the client went away */
};
TAILQ_HEAD(consul_waitq, consul_wait);

/* The Consul routes: their dependencies and held requests. */
struct consul {
	struct consul_deps	 d;
	struct consul_waitq	 waits;
	size_t			 nwaits;
	struct event		*wake_ev;	/* checks the held, next turn */
	uint64_t		 seen_gen;	/* registry_gen at the last */
};

/* Free a query's strings. */
static void
consul_q_clear(struct consul_q *q)
{
	int	i;

	free(q->name);
	for (i = 0; i < q->ntags; i++)
		free(q->tags[i]);
	memset(q, 0, sizeof *q);
}

/* Encode what q reads now and send it with Consul's headers. */
static void
consul_reply(struct consul *c, struct hreq *req,
    const struct consul_q *q, int64_t mono)
{
	struct hhdrs		*h = hreq_output_headers(req);
	struct consul_view	 v = { c->d.reg, c->d.conf, c->d.hostname,
				    *c->d.port, mono };
	struct buf		 b;
	char			 idx[32];

	buf_init(&b, 0);
	consul_encode(&b, &v, q);
	snprintf(idx, sizeof idx, "%" PRIu64, consul_index(c->d.reg, q));
	hhdrs_add(h, "X-Consul-Index", idx);
	hhdrs_add(h, "X-Consul-KnownLeader", "true");
	hhdrs_add(h, "X-Consul-LastContact", "0");
	hreq_reply(req, 200, "application/json", b.data, b.len);
	buf_free(&b);
}

/* Forget a held request (answered, or its connection gone). */
static void
consul_wait_free(struct consul_wait *w)
{
	TAILQ_REMOVE(&w->c->waits, w, entry);
	w->c->nwaits--;
	if (w->timer != NULL)
		event_free(w->timer);
	hold_disarm(w->hold);
	consul_q_clear(&w->q);
	free(w);
}

/* Answer a held request now and forget it. */
static void
consul_wait_answer(struct consul_wait *w, int64_t mono)
{
	struct hconn	*evcon;

	/* Back to the timeouts every other request has. */
	if ((evcon = hreq_conn(w->req)) != NULL)
		hconn_set_timeout(evcon, CONSUL_HTTP_TIMEOUT);
	consul_reply(w->c, w->req, &w->q, mono);
	consul_wait_free(w);
}

/* A held request's wait ended: the answer as it is. */
static void
consul_wait_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	consul_wait_answer(arg, clock_now().mono_ms);
}

/* The client of a held request went away (hold.c): forget the request. */
static void
consul_wait_gone(void *arg)
{
	log_debug("%s: a client blocked on a Consul query went away",
	    __func__);
	consul_wait_free(arg);
}

/* The registry moved: answer every held request whose index moved. */
static void
consul_wake_cb(evutil_socket_t fd, short what, void *arg)
{
	struct consul		*c = arg;
	struct consul_wait	*w, *next;
	int64_t			 mono = clock_now().mono_ms;

	(void)fd;
	(void)what;
	c->seen_gen = registry_gen(c->d.reg);
	for (w = TAILQ_FIRST(&c->waits); w != NULL; w = next) {
		next = TAILQ_NEXT(w, entry);
		if (consul_index(c->d.reg, &w->q) > w->index)
			consul_wait_answer(w, mono);
	}
}

/*
 * Every registry change: when requests are held and the generation
 * moved, check them on the next loop turn (one check for a burst).
 */
static void
consul_observer_cb(const struct registry_event *ev, void *arg)
{
	struct consul			*c = arg;
	static const struct timeval	 zero = { 0, 0 };

	(void)ev;
	if (c->nwaits > 0 && registry_gen(c->d.reg) != c->seen_gen &&
	    !evtimer_pending(c->wake_ev, NULL))
		evtimer_add(c->wake_ev, &zero);
}

/* The Consul routes over deps (copied). */
struct consul *
consul_new(const struct consul_deps *deps)
{
	struct consul	*c = xcalloc(1, sizeof *c);

	c->d = *deps;
	TAILQ_INIT(&c->waits);
	c->wake_ev = evtimer_new(deps->base, consul_wake_cb, c);
	c->seen_gen = registry_gen(deps->reg);
	registry_add_observer(deps->reg, consul_observer_cb, c);
	return (c);
}

/* Free the routes; held requests go with their connections. */
void
consul_free(struct consul *c)
{
	struct consul_wait		*w;
	struct hconn			*evcon;

	if (c == NULL)
		return;
	while ((w = TAILQ_FIRST(&c->waits)) != NULL) {
		evcon = hreq_conn(w->req);
		consul_wait_free(w);
		/* consul_wait_free unlinked it from its consul, this one. */
		HK_ASSERT(TAILQ_FIRST(&c->waits) != w);
		if (evcon != NULL)
			hconn_free(evcon);
	}
	event_free(c->wake_ev);
	free(c);
}

/* Held requests now. */
size_t
consul_waiting(const struct consul *c)
{
	return (c->nwaits);
}

/*
 * A Go duration ("10s", "1m30s", "250ms", "1.5h") in ms; -1 if it is
 * not one. Consul parses ?wait= with time.ParseDuration.
 */
static int64_t
consul_parse_wait(const char *s)
{
	static const struct {
		const char	*unit;
		double		 ms;
	} units[] = {
		{ "ns", 1e-6 }, { "us", 1e-3 }, { "\xc2\xb5s", 1e-3 },
		{ "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 },
	};
	double		 total = 0, num;
	char		*end;
	size_t		 i, ul;

	if (*s == '\0')
		return (-1);
	if (strcmp(s, "0") == 0)
		return (0);
	while (*s != '\0') {
		if (!(*s >= '0' && *s <= '9') && *s != '.')
			return (-1);
		errno = 0;
		num = strtod(s, &end);
		if (end == s || errno != 0 || num < 0)
			return (-1);
		s = end;
		for (i = 0; i < sizeof units / sizeof units[0]; i++) {
			ul = strlen(units[i].unit);
			/* "m" is not "ms": the longer unit is listed first. */
			if (strncmp(s, units[i].unit, ul) == 0)
				break;
		}
		if (i == sizeof units / sizeof units[0])
			return (-1);
		total += num * units[i].ms;
		if (total > 1e12)
			return (-1);
		s += strlen(units[i].unit);
	}
	return ((int64_t)total);
}

/*
 * Read the filters of q from the query string; 400 with a reason, or 0.
 * index and wait go to *index (0: not blocking) and *wait_ms.
 */
static int
consul_parse_query(struct consul *c, const struct hquery *query,
    struct consul_q *q, uint64_t *index, int64_t *wait_ms,
    const char **why)
{
	const struct hkv	*e;
	char		*end;

	*index = 0;
	*wait_ms = CONSUL_DEFAULT_WAIT_MS;
	for (e = (query)->kv; e < (query)->kv + (query)->n; e++) {
		if (strcmp(e->key, "index") == 0) {
			errno = 0;
			*index = strtoull(e->value, &end, 10);
			if (e->value[0] < '0' || e->value[0] > '9' ||
			    errno != 0 || *end != '\0') {
				*why = "index must be a number";
				return (400);
			}
		} else if (strcmp(e->key, "wait") == 0) {
			if ((*wait_ms = consul_parse_wait(e->value)) < 0) {
				*why = "wait must be a duration (10s, 5m)";
				return (400);
			}
		} else if (strcmp(e->key, "passing") == 0) {
			q->passing = strcmp(e->value, "false") != 0 &&
			    strcmp(e->value, "0") != 0;
		} else if (strcmp(e->key, "tag") == 0) {
			if (q->ntags == CONSUL_MAX_TAGS) {
				*why = "too many tag filters";
				return (400);
			}
			q->tags[q->ntags++] = xstrdup(e->value);
		} else if (strcmp(e->key, "filter") == 0 && *e->value != '\0') {
			*why = "filter expressions are not supported";
			return (400);
		}
		/* dc, stale, consistent, near, node-meta, ns: one answer. */
	}
	if (*wait_ms > c->d.conf->consul_max_wait_ms)
		*wait_ms = c->d.conf->consul_max_wait_ms;
	return (0);
}

/* Which resource the segments name; -1 if none of ours. */
static int
consul_route(char **seg, int nseg, struct consul_q *q)
{
	if (nseg == 2 && strcmp(seg[0], "catalog") == 0 &&
	    strcmp(seg[1], "services") == 0)
		q->kind = CONSUL_SERVICES;
	else if (nseg == 2 && strcmp(seg[0], "catalog") == 0 &&
	    strcmp(seg[1], "nodes") == 0)
		q->kind = CONSUL_NODES;
	else if (nseg == 3 && strcmp(seg[0], "catalog") == 0 &&
	    strcmp(seg[1], "service") == 0)
		q->kind = CONSUL_SERVICE;
	else if (nseg == 3 && strcmp(seg[0], "health") == 0 &&
	    strcmp(seg[1], "service") == 0)
		q->kind = CONSUL_HEALTH;
	else if (nseg == 2 && strcmp(seg[0], "status") == 0 &&
	    strcmp(seg[1], "leader") == 0)
		q->kind = CONSUL_LEADER;
	else if (nseg == 2 && strcmp(seg[0], "status") == 0 &&
	    strcmp(seg[1], "peers") == 0)
		q->kind = CONSUL_PEERS;
	else if (nseg == 2 && strcmp(seg[0], "agent") == 0 &&
	    strcmp(seg[1], "self") == 0)
		q->kind = CONSUL_SELF;
	else
		return (-1);
	if (nseg == 3)
		q->name = xstrdup(seg[2]);
	return (0);
}

/* Hold a request until its index moves or wait_ms ends; -1 if it cannot. */
static int
consul_hold(struct consul *c, struct hreq *req,
    struct consul_q *q, uint64_t index, int64_t wait_ms)
{
	struct hconn			*evcon;
	struct bufferevent		*bev;
	struct consul_wait		*w;
	struct timeval			 tv;

	if (c->nwaits >= (size_t)c->d.conf->max_connections ||
	    (evcon = hreq_conn(req)) == NULL)
		return (-1);
	w = xcalloc(1, sizeof *w);
	w->c = c;
	w->req = req;
	w->q = *q;
	memset(q, 0, sizeof *q);	/* the strings are the wait's now */
	w->index = index;
	/* Consul's jitter: up to a sixteenth more, so waits spread. */
	wait_ms += wait_ms >= 16 ? (int64_t)(random() % (wait_ms / 16)) : 0;
	w->timer = evtimer_new(c->d.base, consul_wait_timer_cb, w);
	tv = clock_ms_tv(wait_ms);
	evtimer_add(w->timer, &tv);
	/* A held request is quiet for long, as a watch stream. */
	if ((bev = hconn_bufferevent(evcon)) != NULL)
		bufferevent_set_timeouts(bev, NULL, NULL);
	w->hold = hold_arm(c->d.base, req, consul_wait_gone, w);
	TAILQ_INSERT_TAIL(&c->waits, w, entry);
	c->nwaits++;
	c->seen_gen = registry_gen(c->d.reg);
	return (0);
}

/* Serve one Consul request; see consul.h. */
int
consul_http(struct consul *c, struct hreq *req, char **seg,
    int nseg, const struct hquery *query, struct hk_time now)
{
	struct consul_q	 q;
	const char	*why = NULL;
	uint64_t	 index;
	int64_t		 wait_ms;
	int		 code;

	memset(&q, 0, sizeof q);
	if (consul_route(seg, nseg, &q) != 0) {
		hreq_error(req, 404, "no such resource");
		return (404);
	}
	if ((code = consul_parse_query(c, query, &q, &index, &wait_ms,
	    &why)) != 0) {
		consul_q_clear(&q);
		hreq_error(req, code, why);
		return (code);
	}
	if (index > 0 && wait_ms > 0 && consul_index(c->d.reg, &q) <= index &&
	    consul_hold(c, req, &q, index, wait_ms) == 0)
		return (200);
	consul_reply(c, req, &q, now.mono_ms);
	consul_q_clear(&q);
	return (200);
}
