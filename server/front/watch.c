/*
 * watch.c: the watch stream (docs/api.md, "Watch and leader"; watch.h).
 *
 * One registry observer makes each event once, as the text of an SSE
 * frame, keeps it in a ring of the last heureka.watch.window frames and
 * copies it into the output of every watcher in scope. Per application it
 * keeps the leader it last announced (a leader_track, which ranks the
 * app's instances again only when an event could change its leader) and
 * the app generation it last saw, so a change that moves the leader makes
 * a LEADER event and a heartbeat (which leaves the generation alone) costs
 * one lookup. A watcher whose unsent output passes the bound gets RESET
 * and is closed once that is flushed or a grace period (the keep-alive
 * interval) ends.
 *
 * The ring is dormant (empty, no frame formatted; versions still count)
 * while no watcher is connected and the first event after the last one
 * left has also left the window: every id a watcher was ever given is then
 * out of the window, so a resume from it gets the snapshot as it would
 * from a full ring, and an id equal to the current version still resumes
 * with nothing missed. The first watcher to connect wakes it; from then on
 * the ring holds what a ring kept all along would hold after that
 * watcher's first id, which is all a resume from that id or a later one
 * reads.
 */
#include <sys/queue.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "buf.h"
#include "bug.h"
#include "clock.h"
#include "config.h"
#include "hash.h"
#include "httputil.h"
#include "instance.h"
#include "json.h"
#include "leader.h"
#include "gate.h"
#include "log.h"
#include "registry.h"
#include "watch.h"
#include "xmalloc.h"

/* One event as sent: its version, app and SSE frame. */
struct watch_frame {
	uint64_t	 version;
	char		*app;
	char		*text;
	size_t		 len;
};

/* One open stream. */
struct watcher {
	TAILQ_ENTRY(watcher)	 entry;
	struct watch		*w;
	struct evhttp_request	*req;
	struct evhttp_connection *evcon;
	char			*app;		/* NULL: every app */
	size_t			 allowance;	/* its snapshot's bytes */
	int			 closing;	/* RESET sent */
	struct event		*close_ev;
};

/* What the watch last announced for one app. */
struct watch_app {
	struct htab_node	 node;
	char			*name;
	struct leader_track	 track;		/* the leader announced */
	uint64_t		 gen;
};

struct watch {
	struct watch_deps	 d;		/* borrowed */
	TAILQ_HEAD(, watcher)	 watchers;
	struct watch_frame	*ring;
	size_t			 cap, head, n;	/* oldest at head */
	size_t			 bytes;		/* the ring's texts */
	int			 dormant;	/* no frames kept or made */
	uint64_t		 quiet;		/* version when the last
						   watcher left */
	struct htab		 apps;
	struct event		*keepalive_ev;
	struct evbuffer		*tmp;
	struct watch_stats	 stats;
};

static void	watcher_free(struct watcher *);

/*
 * The watch_app of name, created when create is set; h is
 * hash_str_upper(name), which the registry's app already holds.
 */
static struct watch_app *
watch_app_get(struct watch *w, const char *name, uint64_t h, int create)
{
	struct htab_node	*n;
	struct watch_app	*a;

	for (n = htab_first(&w->apps, h); n != NULL; n = n->next) {
		a = (struct watch_app *)n;
		if (n->hash == h && strcasecmp(a->name, name) == 0)
			return (a);
	}
	if (!create)
		return (NULL);
	a = xcalloc(1, sizeof *a);
	a->name = xstrdup(name);
	str_upper(a->name);
	htab_insert(&w->apps, &a->node, h);
	return (a);
}

/* Free one watch_app (htab_sweep callback: drop them all). */
static int
watch_app_drop(struct htab_node *n, void *arg)
{
	struct watch_app	*a = (struct watch_app *)n;

	(void)arg;
	free(a->name);
	leader_track_clear(&a->track);
	free(a);
	return (1);
}

/* Format one SSE frame into b. */
static void
watch_format(struct buf *b, const char *type, uint64_t version,
    const struct instance *in, const char *app)
{
	buf_adds(b, "event: ");
	buf_adds(b, type);
	buf_adds(b, "\nid: ");
	buf_add_i64(b, (int64_t)version);
	buf_adds(b, "\ndata: ");
	if (in != NULL)
		json_encode_instance_root(b, in);
	else if (app != NULL) {
		/* No instance: an empty one that names only its app. */
		struct instance	*stub = instance_new();

		stub->app = xstrdup(app);
		stub->status = STATUS_UNKNOWN;
		json_encode_instance_root(b, stub);
		instance_free(stub);
	} else
		buf_adds(b, "{}");
	buf_adds(b, "\n\n");
}

/* Whether a watcher's scope holds app. */
static int
watcher_wants(const struct watcher *wr, const char *app)
{
	return (wr->app == NULL || strcasecmp(wr->app, app) == 0);
}

/* Close a watcher's connection now (its close callback frees it). */
static void
watcher_close_cb(evutil_socket_t fd, short what, void *arg)
{
	struct watcher	*wr = arg;

	(void)fd;
	(void)what;
	evhttp_connection_free(wr->evcon);
}

/* RESET has been written out: close. */
static void
watcher_flushed_cb(struct evhttp_connection *evcon, void *arg)
{
	struct watcher	*wr = arg;

	(void)evcon;
	event_active(wr->close_ev, EV_TIMEOUT, 1);
}

/* Unsent bytes in a watcher's connection. */
static size_t
watcher_pending(const struct watcher *wr)
{
	struct bufferevent	*bev;

	bev = evhttp_connection_get_bufferevent(wr->evcon);
	return (bev != NULL ?
	    evbuffer_get_length(bufferevent_get_output(bev)) : 0);
}

/* Past its bound: send RESET and close once flushed or after a grace. */
static void
watcher_reset(struct watcher *wr)
{
	struct watch	*w = wr->w;
	struct timeval	 tv;
	int64_t		 ms = w->d.conf->watch_keepalive_ms;

	wr->closing = 1;
	w->stats.resets++;
	log_info("watch: reset a slow reader (%zu bytes unsent)",
	    watcher_pending(wr));
	evbuffer_add(w->tmp, "event: RESET\ndata: {}\n\n", 23);
	evhttp_send_reply_chunk_with_cb(wr->req, w->tmp, watcher_flushed_cb,
	    wr);
	evbuffer_drain(w->tmp, evbuffer_get_length(w->tmp));
	tv = clock_ms_tv(ms);
	evtimer_add(wr->close_ev, &tv);
}

/* Queue bytes for one watcher, unless that passes its bound. */
static void
watcher_send(struct watcher *wr, const char *text, size_t len)
{
	struct watch	*w = wr->w;

	if (wr->closing)
		return;
	if (watcher_pending(wr) + len > w->d.conf->watch_max_buffer_bytes +
	    wr->allowance) {
		watcher_reset(wr);
		return;
	}
	evbuffer_add(w->tmp, text, len);
	evhttp_send_reply_chunk(wr->req, w->tmp);
	evbuffer_drain(w->tmp, evbuffer_get_length(w->tmp));
}

/* Drop the oldest frame of the ring (there is one). */
static void
watch_ring_pop(struct watch *w)
{
	struct watch_frame	*f = &w->ring[w->head];

	w->bytes -= f->len;
	free(f->app);
	free(f->text);
	w->head = (w->head + 1) % w->cap;
	w->n--;
}

/*
 * Make one event: into the ring, then to every watcher in scope; while
 * the ring is dormant only its version (the watch file's head says why).
 */
static void
watch_emit(struct watch *w, const char *type, const struct instance *in,
    const char *app)
{
	struct watch_frame	*f;
	struct watcher		*wr, *next;
	struct buf		 b;

	w->stats.version++;
	w->stats.events++;
	if (w->dormant)
		return;		/* nobody can ever read this frame */
	w->stats.frames++;
	buf_init(&b, 0);
	watch_format(&b, type, w->stats.version, in, app);
	/* Bounded in count and in bytes (an event carries an instance). */
	while (w->n > 0 && (w->n == w->cap ||
	    w->bytes + b.len > w->d.conf->watch_window_bytes))
		watch_ring_pop(w);
	f = &w->ring[(w->head + w->n) % w->cap];
	w->n++;
	f->version = w->stats.version;
	f->app = xstrdup(app);
	f->text = buf_steal(&b, &f->len);	/* the formatted bytes, kept */
	w->bytes += f->len;
	for (wr = TAILQ_FIRST(&w->watchers); wr != NULL; wr = next) {
		next = TAILQ_NEXT(wr, entry);
		if (watcher_wants(wr, app))
			watcher_send(wr, f->text, f->len);
	}
	/*
	 * Nobody connected, and the first event after the last watcher left
	 * is out of the window: no id given out can resume any more.
	 */
	if (w->stats.watchers == 0 &&
	    w->ring[w->head].version > w->quiet + 1) {
		while (w->n > 0)
			watch_ring_pop(w);
		w->head = 0;
		w->dormant = 1;
	}
}

/*
 * Announce the app's leader if it is not the one last announced, and note
 * the app's generation (kept while the app exists, so that a heartbeat of
 * an app without a leader is still known for one). ra and a are the
 * event's app in the registry and here (NULL: none).
 */
static void
watch_leader_check(struct watch *w, const struct registry_event *ev,
    struct reg_app *ra, struct watch_app *a)
{
	if (a == NULL) {
		if (ra == NULL)
			return;
		a = watch_app_get(w, ev->app, ev->app_hash, 1);
	}
	/* The instance only for a frame: not while dormant. */
	if (leader_track_update(&a->track, w->d.reg, ra, ev))
		watch_emit(w, "LEADER", w->dormant ? NULL :
		    leader_track_leader(&a->track, w->d.reg, ev), ev->app);
	/* The emit changed nothing in the registry: ra is still the app. */
	a->gen = ra != NULL ? reg_app_gen(ra) : 0;
	if (ra == NULL && a->track.id == NULL) {
		htab_remove(&w->apps, &a->node);
		(void)watch_app_drop(&a->node, NULL);
	}
}

/*
 * Did the event leave its app where the last event saw it? A heartbeat
 * that did not rewrite the status, or a status update that changed
 * nothing (e.g. a replicated update arriving after anti-entropy adopted
 * it), leaves the app's generation alone: one event per change. True too
 * when the app is gone (nothing to say about it).
 */
static int
watch_app_unchanged(const struct reg_app *ra, const struct watch_app *a)
{
	return (ra == NULL || (a != NULL && a->gen == reg_app_gen(ra)));
}

/* The registry observer: one event per change, heartbeats none. */
static void
watch_observe_cb(const struct registry_event *ev, void *arg)
{
	struct watch		*w = arg;
	struct instance		*stub = NULL;
	struct reg_app		*ra;
	struct watch_app	*a;

	ra = registry_app_find_hashed(w->d.reg, ev->app, ev->app_hash);
	a = watch_app_get(w, ev->app, ev->app_hash, 0);
	switch (ev->type) {
	case REG_EV_RENEW:
	case REG_EV_STATUS_UPDATE:
	case REG_EV_DELETE_OVERRIDE:
		/*
		 * Only a heartbeat that rewrote the status moves the gen;
		 * the same status again changes nothing: no event. The
		 * leader may still need to hear of it (a revived lease).
		 */
		if (watch_app_unchanged(ra, a)) {
			if (a != NULL)
				leader_track_note(&a->track, ev);
			return;
		}
		if (ev->inst != NULL)
			watch_emit(w, "MODIFIED", ev->inst, ev->app);
		break;
	case REG_EV_REGISTER:
	case REG_EV_METADATA:
		if (ev->inst != NULL)
			watch_emit(w, ev->type == REG_EV_REGISTER &&
			    ev->created ? "ADDED" : "MODIFIED", ev->inst,
			    ev->app);
		break;
	case REG_EV_CANCEL:
	case REG_EV_EVICT:
		/* The copy is gone: the id and app say which. */
		if (!w->dormant) {
			stub = instance_new();
			stub->instance_id = xstrdup(ev->id);
			stub->app = xstrdup(ev->app);
			stub->status = STATUS_DOWN;
			stub->action_type = ACTION_DELETED;
			stub->last_updated_ts = ev->now.wall_ms;
		}
		watch_emit(w, "DELETED", stub, ev->app);
		instance_free(stub);
		break;
	}
	watch_leader_check(w, ev, ra, a);
}

/* Every keep-alive interval: a comment line to every watcher. */
static void
watch_keepalive_cb(evutil_socket_t fd, short what, void *arg)
{
	struct watch	*w = arg;
	struct watcher	*wr, *next;

	(void)fd;
	(void)what;
	for (wr = TAILQ_FIRST(&w->watchers); wr != NULL; wr = next) {
		next = TAILQ_NEXT(wr, entry);
		watcher_send(wr, ":\n\n", 3);
	}
}

/* A watch on deps->reg, with its keep-alive timer on deps->base. */
struct watch *
watch_new(const struct watch_deps *deps)
{
	struct watch		*w = xcalloc(1, sizeof *w);
	const struct watch_deps	*d = &w->d;
	struct timeval		 tv;
	int64_t			 ms = deps->conf->watch_keepalive_ms;

	w->d = *deps;
	TAILQ_INIT(&w->watchers);
	w->cap = d->conf->watch_window > 0 ? (size_t)d->conf->watch_window :
	    1;
	w->ring = xcalloc(w->cap, sizeof *w->ring);
	htab_init(&w->apps, 16);
	w->tmp = evbuffer_new();
	w->stats.version = (uint64_t)gate_started(d->gate).wall_ms * 1000;
	w->dormant = 1;		/* no watcher yet: no id given out */
	registry_add_observer(d->reg, watch_observe_cb, w);
	w->keepalive_ev = event_new(d->base, -1, EV_PERSIST,
	    watch_keepalive_cb, w);
	tv = clock_ms_tv(ms);
	event_add(w->keepalive_ev, &tv);
	return (w);
}

/* Forget a watcher (its connection is closing or gone). */
static void
watcher_free(struct watcher *wr)
{
	TAILQ_REMOVE(&wr->w->watchers, wr, entry);
	if (--wr->w->stats.watchers == 0)
		wr->w->quiet = wr->w->stats.version;
	event_free(wr->close_ev);
	free(wr->app);
	free(wr);
}

/*
 * A connection is being freed (the guard owns evhttp's close callback and
 * passes it on through server.c). If it held a watcher: if libevent
 * detached the request (the peer went away mid-stream) it is ours to
 * free, else the connection frees it. A scan of the watchers: they are
 * capped, and a connection closes once.
 */
void
watch_conn_closed(struct watch *w, struct evhttp_connection *evcon)
{
	struct watcher	*wr;

	if (w == NULL)
		return;
	TAILQ_FOREACH(wr, &w->watchers, entry) {
		if (wr->evcon != evcon)
			continue;
		if (evhttp_request_get_connection(wr->req) == NULL)
			evhttp_send_reply_end(wr->req);
		watcher_free(wr);
		return;
	}
}

/* End every stream: on shutdown, or before the watch goes. */
void
watch_close_all(struct watch *w)
{
	struct watcher	*wr;

	if (w == NULL)
		return;
	while ((wr = TAILQ_FIRST(&w->watchers)) != NULL) {
		evhttp_connection_free(wr->evcon);
		/* Its close callback forgets it; if none ran, do it here. */
		if (TAILQ_FIRST(&w->watchers) == wr)
			watcher_free(wr);
		/* Either way it is gone from the list (and freed). */
		HK_ASSERT(TAILQ_FIRST(&w->watchers) != wr);
	}
}

/* Close every stream and free the watch. */
void
watch_free(struct watch *w)
{
	if (w == NULL)
		return;
	watch_close_all(w);
	if (w->keepalive_ev != NULL)
		event_free(w->keepalive_ev);
	while (w->n > 0)
		watch_ring_pop(w);
	free(w->ring);
	htab_sweep(&w->apps, watch_app_drop, NULL);
	htab_clear(&w->apps);
	evbuffer_free(w->tmp);
	free(w);
}

/* Send the snapshot of wr's scope: ADDED per instance, LEADER, SYNCED. */
static void
watch_snapshot(struct watch *w, struct watcher *wr, int64_t mono)
{
	struct registry		*reg = w->d.reg;
	struct reg_app		*a;
	const struct instance	*in;
	struct evbuffer		*out = evbuffer_new();
	struct buf		 b;
	int			 hide = registry_lease_expiration_enabled(reg);
	size_t			 i, j, napps = registry_app_count(reg);

	buf_init(&b, 0);
	for (i = 0; i < napps; i++) {
		a = registry_app_at(reg, i);
		if (!watcher_wants(wr, reg_app_name(a)))
			continue;
		for (j = 0; j < reg_app_size(a); j++) {
			if (hide && reg_app_lease_expired(a, j, mono))
				continue;
			b.len = 0;
			watch_format(&b, "ADDED", w->stats.version,
			    reg_app_instance_at(a, j), NULL);
			evbuffer_add(out, b.data, b.len);
		}
		if ((in = leader_find(reg, reg_app_name(a), mono)) != NULL) {
			b.len = 0;
			watch_format(&b, "LEADER", w->stats.version, in, NULL);
			evbuffer_add(out, b.data, b.len);
		}
	}
	b.len = 0;
	watch_format(&b, "SYNCED", w->stats.version, NULL, NULL);
	evbuffer_add(out, b.data, b.len);
	buf_free(&b);
	wr->allowance = evbuffer_get_length(out);
	evhttp_send_reply_chunk(wr->req, out);
	evbuffer_free(out);
}

/*
 * Resume after Last-Event-ID v: the frames after v, if v is still in the
 * window (or is the current version). 0 done, -1 not in the window.
 */
static int
watch_resume(struct watch *w, struct watcher *wr, uint64_t v)
{
	struct evbuffer		*out;
	struct watch_frame	*f;
	size_t			 i;
	uint64_t		 oldest;

	if (v > w->stats.version)
		return (-1);
	oldest = w->n > 0 ? w->ring[w->head].version : w->stats.version + 1;
	if (v != w->stats.version && v + 1 < oldest)
		return (-1);
	out = evbuffer_new();
	for (i = 0; i < w->n; i++) {
		f = &w->ring[(w->head + i) % w->cap];
		if (f->version > v && watcher_wants(wr, f->app))
			evbuffer_add(out, f->text, f->len);
	}
	wr->allowance = evbuffer_get_length(out);
	if (wr->allowance > 0)
		evhttp_send_reply_chunk(wr->req, out);
	evbuffer_free(out);
	return (0);
}

/* The Last-Event-ID header as a number; 0 absent, -1 malformed. */
static int
watch_last_id(struct evhttp_request *req, uint64_t *v)
{
	const char		*h = http_header(req, "Last-Event-ID");
	char			*end;
	unsigned long long	 n;

	if (h == NULL || *h == '\0')
		return (0);
	n = strtoull(h, &end, 10);
	if (*end != '\0' || *h == '-')
		return (-1);
	*v = n;
	return (1);
}

/* First value of a query parameter. */
static const char *
watch_query(const struct evkeyvalq *q, const char *name)
{
	struct evkeyval	*e;

	TAILQ_FOREACH(e, q, next)
		if (strcmp(e->key, name) == 0)
			return (e->value);
	return (NULL);
}

/* GET heureka/watch[?app=APP]: open a stream. */
static void
watch_open(struct watch *w, struct evhttp_request *req,
    const struct evkeyvalq *query, struct hk_time now)
{
	const struct watch_deps	*d = &w->d;
	struct evhttp_connection *evcon = evhttp_request_get_connection(req);
	struct bufferevent	*bev;
	struct evkeyvalq	*h;
	struct watcher		*wr;
	const char		*app = watch_query(query, "app");
	uint64_t		 last = 0;
	int			 haslast;

	if (evhttp_request_get_command(req) != EVHTTP_REQ_GET) {
		http_error(req, 405, "method not allowed");
		return;
	}
	if (!gate_allow_read(d->gate, now.mono_ms)) {
		http_reply(req, 403, NULL, NULL, 0);
		return;
	}
	if (app != NULL && !instance_name_ok(app, INSTANCE_MAX_NAME)) {
		http_error(req, 400, "invalid application name");
		return;
	}
	if ((haslast = watch_last_id(req, &last)) < 0) {
		http_error(req, 400, "Last-Event-ID must be an event id");
		return;
	}
	if (gate_is_stopping(d->gate) || evcon == NULL ||
	    w->stats.watchers >= (size_t)d->conf->watch_max_watchers) {
		w->stats.refused++;
		http_error(req, 503, "too many watchers");
		return;
	}
	wr = xcalloc(1, sizeof *wr);
	wr->w = w;
	wr->req = req;
	wr->evcon = evcon;
	wr->app = app != NULL ? xstrdup(app) : NULL;
	if (wr->app != NULL)
		str_upper(wr->app);
	wr->close_ev = evtimer_new(d->base, watcher_close_cb, wr);
	TAILQ_INSERT_TAIL(&w->watchers, wr, entry);
	w->stats.watchers++;
	w->stats.streams++;
	w->dormant = 0;		/* its ids resume from here on */

	h = evhttp_request_get_output_headers(req);
	evhttp_add_header(h, "Content-Type", "text/event-stream");
	evhttp_add_header(h, "Cache-Control", "no-cache");
	evhttp_add_header(h, "X-Accel-Buffering", "no");
	evhttp_send_reply_start(req, 200, "OK");
	/* A stream is quiet for long: no read or write timeout. */
	if ((bev = evhttp_connection_get_bufferevent(evcon)) != NULL)
		bufferevent_set_timeouts(bev, NULL, NULL);
	if (haslast > 0 && watch_resume(w, wr, last) == 0)
		w->stats.resumed++;
	else
		watch_snapshot(w, wr, now.mono_ms);
}

/* GET heureka/watch/stats: the counters as JSON. */
static void
watch_reply_stats(struct watch *w, struct evhttp_request *req)
{
	struct buf	b;

	buf_init(&b, 0);
	buf_addf(&b, "{\"watchers\":%zu,\"streams\":%" PRIu64
	    ",\"resumed\":%" PRIu64 ",\"resets\":%" PRIu64
	    ",\"refused\":%" PRIu64 ",\"events\":%" PRIu64
	    ",\"frames\":%" PRIu64 ",\"version\":%" PRIu64 "}\n",
	    w->stats.watchers, w->stats.streams, w->stats.resumed,
	    w->stats.resets, w->stats.refused, w->stats.events,
	    w->stats.frames, w->stats.version);
	http_reply(req, 200, "application/json", b.data, b.len);
	buf_free(&b);
}

/* Serve heureka/watch and the leader paths; NULL when rel is not ours. */
const char *
watch_http(struct watch *w, struct evhttp_request *req, const char *rel,
    const struct evkeyvalq *query, struct hk_time now)
{
	if (strcmp(rel, "watch") == 0) {
		watch_open(w, req, query, now);
		return ("watch");
	}
	if (strcmp(rel, "watch/stats") == 0) {
		watch_reply_stats(w, req);
		return ("watch");
	}
	if (leader_http(w->d.reg, w->d.gate, req, rel, query, now))
		return ("leader");
	return (NULL);
}

/* Counters for heureka/stats and /metrics. */
const struct watch_stats *
watch_stats(const struct watch *w)
{
	return (&w->stats);
}
