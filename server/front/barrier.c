/*
 * barrier.c: the drain barrier (barrier.h). Kubernetes' usual answer to
 * "clients keep calling a pod for up to 90 s after it left" is a fixed
 * sleep in a preStop hook (Spring Cloud Gateway #2416, #2312, #738;
 * spring-cloud-netflix #2071): too long when every client has moved on,
 * too short when one has not. This barrier waits exactly as long as the
 * three ways a client learns of the change take:
 *
 *  - replication: a registry observer notes, for each change taking an
 *    instance out of UP, the order replicate.c gave it; a peer has it
 *    once no task of that order or earlier is queued or in flight to it
 *    (replicate_acked);
 *  - watch streams: the watch version after the change; a stream has it
 *    once its output has drained past that event (watch_unsent);
 *  - fetching clients: a table of who fetched when (one entry per address
 *    and DiscoveryIdentity-* headers, least recently fetched first); the
 *    clients still to hear of it are those whose last fetch falls in the
 *    window before the change (a fetch after it moves them out of it).
 *
 * Everything is evaluated when asked, from state kept up to date at O(1)
 * per registry event and per fetch; only an answer walks (the peers, the
 * watchers, the fetchers whose last fetch is in the window).
 */
#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "buf.h"
#include "bug.h"
#include "clock.h"
#include "config.h"
#include "duration.h"
#include "barrier.h"
#include "hash.h"
#include "hold.h"
#include "http.h"
#include "httputil.h"
#include "instance.h"
#include "json.h"
#include "log.h"
#include "peers.h"
#include "registry.h"
#include "replicate.h"
#include "watch.h"
#include "xmalloc.h"

#define BARRIER_HEADER_MAX	128	/* of each identity header kept */
#define BARRIER_PEERS_LISTED	16	/* peers named in a 409 */

/* The change that took one instance out of UP. */
struct barrier_rec {
	struct htab_node	 node;
	TAILQ_ENTRY(barrier_rec)	 lru;		/* oldest change first */
	char			*app;		/* upper case */
	char			*id;
	int64_t			 mono;
	int64_t			 wall;
	uint64_t		 seq;		/* replicate_seq after it */
	uint64_t		 wver;		/* watch version after it */
	int			 local;		/* made here, not replicated */
};
TAILQ_HEAD(barrier_recq, barrier_rec);

/* One client that fetched the registry. */
struct barrier_fetcher {
	struct htab_node	 node;
	TAILQ_ENTRY(barrier_fetcher) lru;		/* least recent fetch first */
	char			*key;
	int64_t			 last;		/* mono */
};
TAILQ_HEAD(barrier_fetcherq, barrier_fetcher);

/* A ?wait answer held until drained or its deadline. */
struct barrier_wait {
	TAILQ_ENTRY(barrier_wait)	 entry;
	struct barrier		*dr;
	struct hreq		*req;
	char			*app;
	char			*id;
	int64_t			 deadline;	/* mono */
	struct hold		*hold;		/* the client went away */
};
TAILQ_HEAD(barrier_waitq, barrier_wait);

struct barrier {
	struct barrier_deps	 d;
	struct htab		 recs;
	struct barrier_recq	 recq;
	size_t			 nrecs;
	struct htab		 fetchers;
	struct barrier_fetcherq	 fetcherq;
	size_t			 nfetchers;
	int64_t			 forgotten_last; /* latest fetch evicted */
	struct barrier_waitq	 waits;
	size_t			 nwaits;
	struct event		*poll_ev;
};

/* What one instance's barrier still waits for. */
struct barrier_state {
	int		 known;		/* seen here at all */
	int		 up;		/* still UP here */
	const char	*status;	/* as served, or "CANCELLED" */
	const struct barrier_rec *rec;
	size_t		 peers;		/* not answered */
	const char	*peer_urls[BARRIER_PEERS_LISTED];
	size_t		 watchers;	/* not written out */
	size_t		 fetchers;	/* not fetched again */
	int		 fetchers_forgotten;	/* some may be unknown */
	int64_t		 window_ms;	/* left of the fetch window */
	int		 drained;
};

/* ------------------------------------------------------------------ */
/* Changes.                                                             */

/* The table hash of (app, id), keyed per process. */
static uint64_t
barrier_rec_hash(const char *app, const char *id)
{
	return (hash_str(app) ^ (hash_str(id) * 0x9e3779b97f4a7c15ULL));
}

/* The record of (app, id), or NULL. */
static struct barrier_rec *
barrier_rec_find(const struct barrier *dr, const char *app, const char *id)
{
	struct htab_node	*n;
	struct barrier_rec	*r;
	uint64_t		 h = barrier_rec_hash(app, id);

	for (n = htab_first(&dr->recs, h); n != NULL; n = n->next) {
		r = (struct barrier_rec *)(void *)n;
		if (n->hash == h && strcmp(r->app, app) == 0 &&
		    strcmp(r->id, id) == 0)
			return (r);
	}
	return (NULL);
}

/* Forget a record. */
static void
barrier_rec_drop(struct barrier *dr, struct barrier_rec *r)
{
	htab_remove(&dr->recs, &r->node);
	TAILQ_REMOVE(&dr->recq, r, lru);
	dr->nrecs--;
	free(r->app);
	free(r->id);
	free(r);
}

/* Remember a change of (app, id) out of UP, at now; the oldest may go. */
static struct barrier_rec *
barrier_rec_add(struct barrier *dr, const char *app, const char *id, int local,
    struct hk_time now)
{
	struct barrier_rec	*r;

	if (dr->nrecs == BARRIER_RECORDS_MAX)
		barrier_rec_drop(dr, TAILQ_FIRST(&dr->recq));
	r = xcalloc(1, sizeof *r);
	r->app = xstrdup(app);
	str_upper(r->app);
	r->id = xstrdup(id);
	r->mono = now.mono_ms;
	r->wall = now.wall_ms;
	r->local = local;
	r->seq = local ? replicate_seq(dr->d.repl) : 0;
	r->wver = dr->d.watch != NULL ? watch_stats(dr->d.watch)->version : 0;
	htab_insert(&dr->recs, &r->node, barrier_rec_hash(r->app, r->id));
	TAILQ_INSERT_TAIL(&dr->recq, r, lru);
	dr->nrecs++;
	return (r);
}

/*
 * Registry observer: a change to DOWN or OUT_OF_SERVICE, a cancel or an
 * eviction starts a record (unless one runs: the first change out of UP
 * is the one clients must hear of); back to UP ends it. Heartbeats only
 * look when some record exists.
 */
static void
barrier_observe_cb(const struct registry_event *ev, void *arg)
{
	struct barrier		*dr = arg;
	struct barrier_rec	*r;
	int			 down, up;

	if (ev->type == REG_EV_RENEW && dr->nrecs == 0)
		return;
	down = ev->type == REG_EV_CANCEL || ev->type == REG_EV_EVICT ||
	    (ev->inst != NULL && (ev->inst->status == STATUS_DOWN ||
	    ev->inst->status == STATUS_OUT_OF_SERVICE));
	up = ev->inst != NULL && ev->inst->status == STATUS_UP &&
	    ev->type != REG_EV_CANCEL && ev->type != REG_EV_EVICT;
	if (!down && !up)
		return;
	r = barrier_rec_find(dr, ev->app, ev->id);
	if (up && r != NULL)
		barrier_rec_drop(dr, r);
	else if (down && r == NULL)
		barrier_rec_add(dr, ev->app, ev->id, !ev->replicated &&
		    ev->type != REG_EV_EVICT, ev->now);
}

/* ------------------------------------------------------------------ */
/* Fetching clients.                                                    */

/* Append header h of req to b (bounded), "" if absent. */
static void
barrier_key_header(struct buf *b, struct hreq *req, const char *h)
{
	const char	*v = hreq_header(req, h);
	size_t		 n = v != NULL ? strnlen(v, BARRIER_HEADER_MAX) : 0;

	buf_addc(b, '\n');
	if (n > 0)
		buf_add(b, v, n);
}

/* A registry fetch from req's client: it is now the most recent. */
void
barrier_fetched(struct barrier *dr, struct hreq *req, int64_t mono)
{
	struct hconn			*evcon;
	struct htab_node		*n;
	struct barrier_fetcher		*f = NULL;
	struct buf			 b;
	char				*addr = NULL;
	ev_uint16_t			 port;
	uint64_t			 h;

	if (dr == NULL)
		return;
	buf_init(&b, 0);
	if ((evcon = hreq_conn(req)) != NULL)
		hconn_peer(evcon, &addr, &port);
	buf_adds(&b, addr != NULL ? addr : "?");
	barrier_key_header(&b, req, "DiscoveryIdentity-Name");
	barrier_key_header(&b, req, "DiscoveryIdentity-Version");
	barrier_key_header(&b, req, "DiscoveryIdentity-Id");
	buf_addc(&b, '\0');
	h = hash_bytes(b.data, b.len - 1);
	for (n = htab_first(&dr->fetchers, h); n != NULL; n = n->next) {
		f = (struct barrier_fetcher *)(void *)n;
		if (n->hash == h && strcmp(f->key, b.data) == 0)
			break;
		f = NULL;
	}
	if (f != NULL)
		TAILQ_REMOVE(&dr->fetcherq, f, lru);
	else {
		if (dr->nfetchers == BARRIER_FETCHERS_MAX) {
			/* Forget the least recent; remember how recent. */
			f = TAILQ_FIRST(&dr->fetcherq);
			TAILQ_REMOVE(&dr->fetcherq, f, lru);
			htab_remove(&dr->fetchers, &f->node);
			if (f->last > dr->forgotten_last)
				dr->forgotten_last = f->last;
			free(f->key);
			free(f);
			dr->nfetchers--;
		}
		f = xcalloc(1, sizeof *f);
		f->key = xstrdup(b.data);
		htab_insert(&dr->fetchers, &f->node, h);
		dr->nfetchers++;
	}
	f->last = mono;
	TAILQ_INSERT_TAIL(&dr->fetcherq, f, lru);
	buf_free(&b);
}

/* ------------------------------------------------------------------ */
/* The barrier.                                                         */

/*
 * How late a fetch may come and still show the state before a change:
 * with Eureka's read-only response cache, until its next refresh.
 */
static int64_t
barrier_visible_after(const struct barrier *dr)
{
	const struct config	*cf = dr->d.conf;

	return (cf->use_read_only_response_cache ?
	    cf->response_cache_update_interval_ms : 0);
}

/* What (app, id)'s barrier waits for at now. */
static void
barrier_evaluate(struct barrier *dr, const char *app, const char *id,
    struct hk_time now, struct barrier_state *st)
{
	const struct instance		*in;
	const struct barrier_rec		*r;
	const struct barrier_fetcher	*f;
	struct peer			*p;
	int64_t				 window, from, to;
	size_t				 i, n;

	memset(st, 0, sizeof *st);
	in = registry_get(dr->d.reg, app, id, now.mono_ms);
	r = barrier_rec_find(dr, app, id);
	st->known = in != NULL || r != NULL ||
	    registry_tombstone(dr->d.reg, app, id, now.mono_ms) != 0;
	if (!st->known)
		return;
	st->status = in != NULL ? instance_status_name(in->status) :
	    "CANCELLED";
	if (in != NULL && in->status == STATUS_UP) {
		st->up = 1;
		return;
	}
	/* Not UP and no record (forgotten, or never UP): count from now. */
	if (r == NULL)
		r = barrier_rec_add(dr, app, id, 1, now);
	st->rec = r;
	if (r->local) {
		n = peers_count(dr->d.peers);
		for (i = 0; i < n; i++) {
			p = peers_get(dr->d.peers, i);
			if (replicate_acked(dr->d.repl, p, r->seq))
				continue;
			if (st->peers < BARRIER_PEERS_LISTED)
				st->peer_urls[st->peers] = p->u.display;
			st->peers++;
		}
	}
	st->watchers = watch_unsent(dr->d.watch, app, r->wver);
	window = dr->d.conf->drain_fetch_window_ms;
	from = r->mono - window;
	to = r->mono + barrier_visible_after(dr);
	st->window_ms = to + window - now.mono_ms;
	if (st->window_ms > 0) {
		TAILQ_FOREACH(f, &dr->fetcherq, lru) {
			if (f->last > to)
				break;
			if (f->last >= from)
				st->fetchers++;
		}
		st->fetchers_forgotten = dr->forgotten_last >= from;
	} else
		st->window_ms = 0;
	st->drained = st->peers == 0 && st->watchers == 0 &&
	    (st->window_ms == 0 || (st->fetchers == 0 &&
	    !st->fetchers_forgotten));
}

/* Send the answer for st (200, 404 or 409). */
static void
barrier_reply(struct hreq *req, const char *app,
    const char *id, const struct barrier_state *st, struct hk_time now)
{
	struct buf	b;
	size_t		i;
	int		code;

	buf_init(&b, 0);
	if (!st->known) {
		buf_adds(&b, "{\"error\":\"unknown instance\",\"app\":");
		json_add_string(&b, app);
		buf_adds(&b, ",\"id\":");
		json_add_string(&b, id);
		buf_adds(&b, "}");
		hreq_reply(req, 404, "application/json", b.data, b.len);
		buf_free(&b);
		return;
	}
	buf_addf(&b, "{\"drained\":%s,\"app\":", st->drained ? "true" :
	    "false");
	json_add_string(&b, app);
	buf_adds(&b, ",\"id\":");
	json_add_string(&b, id);
	buf_adds(&b, ",\"status\":");
	json_add_string(&b, st->status);
	if (st->rec != NULL)
		buf_addf(&b, ",\"since\":%lld,\"elapsedMs\":%lld,"
		    "\"origin\":\"%s\"", (long long)st->rec->wall,
		    (long long)(now.mono_ms - st->rec->mono),
		    st->rec->local ? "here" : "replicated");
	if (st->drained) {
		buf_adds(&b, "}");
		code = 200;
	} else if (st->up) {
		buf_adds(&b, ",\"waiting\":{\"status\":\"UP\"}}");
		code = 409;
	} else {
		buf_addf(&b, ",\"waiting\":{\"peers\":[");
		for (i = 0; i < st->peers && i < BARRIER_PEERS_LISTED; i++) {
			if (i > 0)
				buf_addc(&b, ',');
			json_add_string(&b, st->peer_urls[i]);
		}
		buf_addf(&b, "],\"peerCount\":%zu,\"watchers\":%zu,"
		    "\"fetchers\":%zu,\"fetchersForgotten\":%s,"
		    "\"fetchWindowLeftMs\":%lld}}", st->peers, st->watchers,
		    st->window_ms == 0 ? 0 : st->fetchers,
		    st->window_ms > 0 && st->fetchers_forgotten ? "true" :
		    "false", (long long)st->window_ms);
		code = 409;
	}
	hreq_reply(req, code, "application/json", b.data, b.len);
	buf_free(&b);
}

/* ------------------------------------------------------------------ */
/* Held answers (?wait=).                                               */

/* Forget a held answer (answered or gone). */
static void
barrier_wait_free(struct barrier_wait *w)
{
	TAILQ_REMOVE(&w->dr->waits, w, entry);
	w->dr->nwaits--;
	hold_disarm(w->hold);
	free(w->app);
	free(w->id);
	free(w);
}

/* The client of a held answer went away (hold.c): forget the answer. */
static void
barrier_wait_gone(void *arg)
{
	barrier_wait_free(arg);
}

/* Every BARRIER_POLL_MS while answers are held: answer those now due. */
static void
barrier_poll_cb(evutil_socket_t fd, short what, void *arg)
{
	struct barrier		*dr = arg;
	struct barrier_wait	*w, *next;
	struct barrier_state	 st;
	struct hk_time		 now = clock_now();
	struct timeval		 tv;

	(void)fd;
	(void)what;
	for (w = TAILQ_FIRST(&dr->waits); w != NULL; w = next) {
		next = TAILQ_NEXT(w, entry);
		barrier_evaluate(dr, w->app, w->id, now, &st);
		if (st.drained || !st.known || now.mono_ms >= w->deadline) {
			barrier_reply(w->req, w->app, w->id, &st, now);
			barrier_wait_free(w);
		}
	}
	if (!TAILQ_EMPTY(&dr->waits)) {
		tv = clock_ms_tv(BARRIER_POLL_MS);
		evtimer_add(dr->poll_ev, &tv);
	}
}

/* Hold req's answer until drained or ms from now; -1 when it cannot. */
static int
barrier_hold(struct barrier *dr, struct hreq *req, const char *app,
    const char *id, int64_t ms, struct hk_time now)
{
	struct barrier_wait		*w;
	struct timeval			 tv;

	if (hreq_conn(req) == NULL)
		return (-1);
	w = xcalloc(1, sizeof *w);
	w->dr = dr;
	w->req = req;
	w->app = xstrdup(app);
	w->id = xstrdup(id);
	w->deadline = now.mono_ms + ms;
	w->hold = hold_arm(dr->d.base, req, barrier_wait_gone, w);
	TAILQ_INSERT_TAIL(&dr->waits, w, entry);
	dr->nwaits++;
	if (!evtimer_pending(dr->poll_ev, NULL)) {
		tv = clock_ms_tv(BARRIER_POLL_MS);
		evtimer_add(dr->poll_ev, &tv);
	}
	return (0);
}

/* First value of query parameter name. */
static const char *
barrier_query(const struct hquery *q, const char *name)
{
	if (q == NULL)
		return (NULL);
	return (hquery_get(q, name));
}

/* GET heureka/apps/{APP}/{ID}/drained (barrier.h). */
void
barrier_http(struct barrier *dr, struct hreq *req,
    const char *dapp, const char *did, const struct hquery *query,
    struct hk_time now)
{
	struct barrier_state	 st;
	const char		*wv;
	char			*app, *id;
	int64_t			 ms = 0;

	if (dr == NULL) {
		hreq_error(req, 404, "no such resource");
		return;
	}
	app = xstrdup(dapp);
	id = xstrdup(did);
	if (
	    !instance_name_ok(app, INSTANCE_MAX_NAME) ||
	    !instance_name_ok(id, INSTANCE_MAX_NAME) ||
	    strchr(id, '/') != NULL) {
		hreq_error(req, 400, "invalid application name or instance id");
		goto out;
	}
	str_upper(app);
	if ((wv = barrier_query(query, "wait")) != NULL &&
	    (ms = duration_parse_ms(wv, BARRIER_WAIT_MAX_MS)) < 0) {
		hreq_error(req, 400, "wait must be a duration of at most 120s "
		    "(30s, 500ms, 2m)");
		goto out;
	}
	barrier_evaluate(dr, app, id, now, &st);
	if (st.drained || !st.known || ms == 0) {
		barrier_reply(req, app, id, &st, now);
		goto out;
	}
	if (dr->nwaits >= BARRIER_PARKED_MAX) {
		hhdrs_add(hreq_output_headers(req),
		    "Retry-After", "1");
		hreq_error(req, 503, "too many drain answers held; ask again "
		    "without wait or later");
		goto out;
	}
	if (barrier_hold(dr, req, app, id, ms, now) != 0)
		barrier_reply(req, app, id, &st, now);
out:
	free(app);
	free(id);
}

/* ------------------------------------------------------------------ */

/* The barrier over deps. */
struct barrier *
barrier_new(const struct barrier_deps *d)
{
	struct barrier	*dr;

	dr = xcalloc(1, sizeof *dr);
	dr->d = *d;
	htab_init(&dr->recs, 64);
	TAILQ_INIT(&dr->recq);
	htab_init(&dr->fetchers, 64);
	TAILQ_INIT(&dr->fetcherq);
	TAILQ_INIT(&dr->waits);
	dr->forgotten_last = INT64_MIN;
	dr->poll_ev = evtimer_new(d->base, barrier_poll_cb, dr);
	registry_add_observer(d->reg, barrier_observe_cb, dr);
	return (dr);
}

/* Free it; held answers are dropped with their connections' requests. */
void
barrier_free(struct barrier *dr)
{
	struct barrier_fetcher	*f;
	struct barrier_wait	*w;

	if (dr == NULL)
		return;
	while ((w = TAILQ_FIRST(&dr->waits)) != NULL) {
		barrier_wait_free(w);
		/* barrier_wait_free unlinked it from its barrier, this one. */
		HK_ASSERT(TAILQ_FIRST(&dr->waits) != w);
	}
	while (!TAILQ_EMPTY(&dr->recq))
		barrier_rec_drop(dr, TAILQ_FIRST(&dr->recq));
	while ((f = TAILQ_FIRST(&dr->fetcherq)) != NULL) {
		TAILQ_REMOVE(&dr->fetcherq, f, lru);
		htab_remove(&dr->fetchers, &f->node);
		free(f->key);
		free(f);
	}
	htab_clear(&dr->recs);
	htab_clear(&dr->fetchers);
	if (dr->poll_ev != NULL)
		event_free(dr->poll_ev);
	free(dr);
}
