/*
 * watch.c: the watch stream (docs/api.md, "Watch and leader"; watch.h).
 *
 * One registry observer makes each event once, as a blob of one SSE frame
 * (watch_int.h), keeps it in a ring of the last heureka.watch.window
 * frames and notes that watchers have something to send. Per application
 * it keeps the leader it last announced (a leader_track, which ranks the
 * app's instances again only when an event could change its leader) and
 * the app generation it last saw, so a change that moves the leader makes
 * a LEADER event and a heartbeat (which leaves the generation alone) costs
 * one lookup.
 *
 * Nothing is copied per watcher and nothing is sent from the observer: a
 * watcher is a cursor. While its snapshot is under way the cursor walks
 * the applications in the order the watch first saw them (a list kept
 * here, so an app dropped or added meanwhile never makes the walk skip
 * one) and hands out the shared pieces of watch_snap.c; after its SYNCED
 * it is the version of the next event to send, read from the ring. The
 * pump, a zero-delay timer, serves the watchers in turn with at most
 * heureka.watch.slice-bytes of work a loop turn (issue 21: 20 snapshots
 * of 50,000 instances made one turn of up to 2.4 s, a 200-item batch to
 * 500 watchers one of 1 s), and feeds a snapshot only while the watcher's
 * unsent bytes (its output and the kernel's unacknowledged bytes) are
 * under half its bound. An event that would pass the bound, or a cursor
 * that fell out of the ring, gets RESET and the connection is closed once
 * that is written or after a short grace; a watcher whose unsent bytes
 * are not read for heureka.watch.stall-timeout-ms gets the same. Every
 * blob alive, kept or in flight, is counted in the registry's memory
 * budget (part "watch"); snapshot pieces are kept for the next watcher
 * only while a snapshot is under way and the budget has room, and after
 * a wave of watchers has gone the heap is trimmed.
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
#include "http.h"
#include "httputil.h"
#include "instance.h"
#include "json.h"
#include "leader.h"
#include "gate.h"
#include "log.h"
#include "registry.h"
#include "watch.h"
#include "watch_int.h"
#include "xmalloc.h"

/* Work units of the pump (heureka.watch.slice-bytes counts bytes). */
#define WATCH_COST_SEND		256	/* a blob handed to a watcher */
#define WATCH_COST_LOOK		64	/* an app or a frame looked at */
#define WATCH_POLL_MS		10	/* recheck blocked watchers */
#define WATCH_TICK_MS		250	/* stall checks, accounting */
#define WATCH_GRACE_MS		2000	/* a RESET's flush, at most */
#define WATCH_SNAP_RESTARTS	3	/* then an app goes in one turn */
#define WATCH_TRIM_BYTES	(8 * 1024 * 1024)	/* freed: trim */
#define WATCH_DROP_SNAPS	1024	/* kept snapshots freed a turn */

/* One event as sent: its version, app and SSE frame. */
struct watch_frame {
	uint64_t		 version;
	char			*app;
	struct watch_blob	*blob;
};

/* What the watch last announced for one app. */
struct watch_app {
	struct htab_node	 node;
	TAILQ_ENTRY(watch_app)	 order;		/* first seen first */
	TAILQ_ENTRY(watch_app)	 snapped;	/* while snap is kept */
	char			*name;
	struct leader_track	 track;		/* the leader announced */
	uint64_t		 gen;
	struct watchsnap	*snap;		/* kept snapshot pieces */
};

/*
 * Where an event ended in a watcher's output: it has left heurekad (the
 * kernel took it, and its peer acknowledged what SIOCOUTQ no longer
 * counts) once the bytes delivered reach `at`. The drain barrier
 * (barrier.c) asks, through watch_unsent().
 */
#define WATCH_MARKS	8
struct watch_mark {
	uint64_t	 version;
	size_t		 at;		/* handed just after it */
};

/* One open stream. */
struct watcher {
	TAILQ_ENTRY(watcher)	 entry;
	struct watch		*w;
	struct hreq		*req;
	struct hconn		*evcon;
	char			*app;		/* NULL: every app */
	int			 closing;	/* RESET sent */
	int			 chunked;	/* the reply is chunked */
	struct event		*close_ev;
	/* The snapshot under way (snapping), then the events. */
	int			 snapping;
	uint64_t		 snapver;	/* the version it stands for */
	struct watch_app	*cur;		/* the app it is at */
	uint64_t		 cur_gen;
	size_t			 k, j;		/* piece, instance index */
	int			 restarts;	/* of this app */
	uint64_t		 next;		/* live: next version */
	/* Progress: bytes handed to its output, and seen delivered. */
	size_t			 handed;
	size_t			 delivered;
	int64_t			 progress_ms;
	/* Where recent events ended in its output (the drain barrier). */
	struct watch_mark	 marks[WATCH_MARKS];	/* oldest first */
	size_t			 nmarks;
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
	TAILQ_HEAD(, watch_app)	 order;
	size_t			 snapping;	/* watchers in a snapshot */
	TAILQ_HEAD(, watch_app)	 snapped;	/* apps with kept pieces */
	struct watch_acct	*acct;
	size_t			 trim_mark;	/* most bytes since a trim */
	struct event		*keepalive_ev;
	struct event		*pump_ev;
	struct event		*tick_ev;
	struct evbuffer		*tmp;
	struct watch_stats	 stats;
};

/* The pump's budget for one turn. */
struct watch_turn {
	size_t		 budget;
	int64_t		 mono;
	int		 blocked;	/* a watcher waits for its reader */
};

static void	watcher_free(struct watcher *);
static void	watch_pump_soon(struct watch *, int64_t ms);
static void	watcher_mark(struct watcher *, uint64_t);

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
	TAILQ_INSERT_TAIL(&w->order, a, order);
	return (a);
}

/* Free one watch_app (htab_sweep callback: drop them all). */
static int
watch_app_drop(struct htab_node *n, void *arg)
{
	struct watch_app	*a = (struct watch_app *)n;
	struct watch		*w = arg;

	TAILQ_REMOVE(&w->order, a, order);
	if (a->snap != NULL)
		TAILQ_REMOVE(&w->snapped, a, snapped);
	watchsnap_free(a->snap);
	free(a->name);
	leader_track_clear(&a->track);
	free(a);
	return (1);
}

/* Forget one app: a snapshot walk at it moves on to the next. */
static void
watch_app_remove(struct watch *w, struct watch_app *a)
{
	struct watcher	*wr;

	if (w->snapping > 0)
		TAILQ_FOREACH(wr, &w->watchers, entry)
			if (wr->snapping && wr->cur == a) {
				wr->cur = wr->app != NULL ? NULL :
				    TAILQ_NEXT(a, order);
				wr->k = wr->j = 0;
				wr->restarts = 0;
			}
	htab_remove(&w->apps, &a->node);
	(void)watch_app_drop(&a->node, w);
}

/*
 * No snapshot is under way: free the kept pieces, at most
 * WATCH_DROP_SNAPS applications' a call (the pump and the tick call it
 * until none is left; a wave at a million applications kept a million).
 * 1 while some remain.
 */
static int
watch_snaps_drop(struct watch *w)
{
	struct watch_app	*a;
	size_t			 n;

	for (n = 0; n < WATCH_DROP_SNAPS && w->snapping == 0 &&
	    (a = TAILQ_FIRST(&w->snapped)) != NULL; n++) {
		TAILQ_REMOVE(&w->snapped, a, snapped);
		watchsnap_free(a->snap);
		a->snap = NULL;
	}
	return (w->snapping == 0 && !TAILQ_EMPTY(&w->snapped));
}

/*
 * Report the blobs alive to the registry's budget; once no kept pieces
 * are left to free, trim the heap if the bytes fell far since the last.
 */
static void
watch_account(struct watch *w)
{
	size_t	bytes = w->acct->bytes;

	w->stats.bytes = bytes;
	registry_set_external_bytes(w->d.reg, REG_EXT_WATCH, bytes);
	if (bytes > w->trim_mark)
		w->trim_mark = bytes;
	else if (w->trim_mark - bytes >= WATCH_TRIM_BYTES &&
	    (w->snapping > 0 || TAILQ_EMPTY(&w->snapped))) {
		watch_trim();
		w->trim_mark = bytes;
	}
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
	hconn_free(wr->evcon);
}

/* RESET has been written out: close. */
static void
watcher_flushed_cb(struct hconn *evcon, void *arg)
{
	struct watcher	*wr = arg;

	(void)evcon;
	event_active(wr->close_ev, EV_TIMEOUT, 1);
}

/* Its snapshot is over (sent, or the watcher is going). */
static void
watcher_snap_end(struct watcher *wr)
{
	struct watch	*w = wr->w;

	if (!wr->snapping)
		return;
	wr->snapping = 0;
	wr->cur = NULL;
	if (--w->snapping == 0)
		watch_pump_soon(w, 0);	/* it frees the kept pieces */
}

/* Send RESET; close once it is written out or after a short grace. */
static void
watcher_reset(struct watcher *wr, const char *why)
{
	struct watch	*w = wr->w;
	struct timeval	 tv;
	int64_t		 ms = w->d.conf->watch_keepalive_ms;

	wr->closing = 1;
	watcher_snap_end(wr);
	w->stats.resets++;
	log_info("watch: reset a watcher: %s (%zu bytes unsent)", why,
	    watch_conn_pending(wr->evcon));
	evbuffer_add(w->tmp, "event: RESET\ndata: {}\n\n", 23);
	hreq_reply_chunk_with_cb(wr->req, w->tmp, watcher_flushed_cb,
	    wr);
	evbuffer_drain(w->tmp, evbuffer_get_length(w->tmp));
	tv = clock_ms_tv(ms < WATCH_GRACE_MS ? ms : WATCH_GRACE_MS);
	evtimer_add(wr->close_ev, &tv);
}

/* Hand one blob to a watcher; the bytes its output grew by. */
static size_t
watcher_put(struct watcher *wr, struct watch_blob *bl)
{
	size_t	n = watch_send_blob(wr->evcon, wr->chunked, bl);

	wr->handed += n;
	return (n);
}

/* A few bytes of text (a comment), copied, unless that passes the bound. */
static void
watcher_put_text(struct watcher *wr, const char *text, size_t len)
{
	struct watch	*w = wr->w;
	size_t		 before;

	if (wr->closing || watch_conn_pending(wr->evcon) + len >
	    w->d.conf->watch_max_buffer_bytes)
		return;		/* the stall check judges a full one */
	before = watch_conn_output(wr->evcon);
	evbuffer_add(w->tmp, text, len);
	hreq_reply_chunk(wr->req, w->tmp);
	evbuffer_drain(w->tmp, evbuffer_get_length(w->tmp));
	/* With the front's chunk framing (nothing is written meanwhile). */
	wr->handed += watch_conn_output(wr->evcon) - before;
}

/* Drop the oldest frame of the ring (there is one). */
static void
watch_ring_pop(struct watch *w)
{
	struct watch_frame	*f = &w->ring[w->head];

	w->bytes -= f->blob->len;
	free(f->app);
	watch_blob_unref(f->blob);
	w->head = (w->head + 1) % w->cap;
	w->n--;
}

/* The ring's frame of version v, NULL when it is not (or no longer) kept. */
static struct watch_frame *
watch_ring_at(struct watch *w, uint64_t v)
{
	uint64_t	oldest;

	if (w->n == 0)
		return (NULL);
	oldest = w->ring[w->head].version;
	if (v < oldest || v - oldest >= w->n)
		return (NULL);
	return (&w->ring[(w->head + (size_t)(v - oldest)) % w->cap]);
}

/*
 * Make one event: into the ring, for the pump to hand out; while the ring
 * is dormant only its version (the watch file's head says why).
 */
static void
watch_emit(struct watch *w, const char *type, const struct instance *in,
    const char *app)
{
	struct watch_frame	*f;
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
	f->blob = watch_blob_new(w->acct, &b);
	w->bytes += f->blob->len;
	if (w->stats.watchers > 0)
		watch_pump_soon(w, 0);
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
	if (ra == NULL && a->track.id == NULL)
		watch_app_remove(w, a);
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

/* The next app of a snapshot walk (a scoped watcher has only one). */
static void
watcher_next_app(struct watcher *wr)
{
	wr->cur = wr->app != NULL ? NULL : TAILQ_NEXT(wr->cur, order);
	wr->k = wr->j = 0;
	wr->restarts = 0;
}

/*
 * One step of a watcher's snapshot: a piece of its current app, or the
 * app's LEADER and on to the next, or at the end its SYNCED. After a few
 * new starts of one app (it changed under the walk) the rest of it goes
 * in this step, so a walk always ends.
 */
static void
watcher_snap_step(struct watch *w, struct watcher *wr, struct watch_turn *t)
{
	struct watchsnap_ctx	 c;
	struct watch_app	*a = wr->cur;
	struct watch_blob	*bl;
	struct reg_app		*ra;
	struct buf		 b;
	size_t			 end;
	int			 whole, had;

	t->budget -= t->budget < WATCH_COST_LOOK ? t->budget : WATCH_COST_LOOK;
	if (a == NULL) {
		buf_init(&b, 0);
		watch_format(&b, "SYNCED", wr->snapver, NULL, NULL);
		bl = watch_blob_new(w->acct, &b);
		(void)watcher_put(wr, bl);
		watch_blob_unref(bl);
		watcher_snap_end(wr);
		watcher_mark(wr, wr->snapver);
		wr->next = wr->snapver + 1;
		return;
	}
	ra = registry_app_find_hashed(w->d.reg, a->name, a->node.hash);
	if (ra == NULL) {
		watcher_next_app(wr);
		return;
	}
	if ((wr->k > 0 || wr->j > 0) && reg_app_gen(ra) != wr->cur_gen) {
		wr->k = wr->j = 0;	/* changed under the walk: again */
		wr->restarts++;
	}
	wr->cur_gen = reg_app_gen(ra);
	whole = wr->restarts >= WATCH_SNAP_RESTARTS;
	had = a->snap != NULL;
	memset(&c, 0, sizeof c);
	c.acct = w->acct;
	c.reg = w->d.reg;
	c.version = wr->snapver;
	c.mono = t->mono;
	c.retain = registry_memory_budget(w->d.reg) == 0 ||
	    registry_memory_used(w->d.reg) + 2 * WATCHSNAP_PIECE_BYTES <=
	    registry_memory_budget(w->d.reg);
	do {
		bl = watchsnap_piece(&a->snap, &c, ra, wr->k, wr->j, &end);
		if (bl == NULL)
			break;
		(void)watcher_put(wr, bl);
		watch_blob_unref(bl);
		wr->k++;
		wr->j = end;
	} while (whole);
	if (bl == NULL) {
		if ((bl = watchsnap_leader(&a->snap, &c, ra)) != NULL) {
			(void)watcher_put(wr, bl);
			watch_blob_unref(bl);
		}
		watcher_next_app(wr);
	}
	if (a->snap != NULL && a->snap->n == 0 && a->snap->leader == NULL) {
		watchsnap_free(a->snap);	/* nothing kept */
		a->snap = NULL;
	}
	if (had && a->snap == NULL)
		TAILQ_REMOVE(&w->snapped, a, snapped);
	else if (!had && a->snap != NULL)
		TAILQ_INSERT_TAIL(&w->snapped, a, snapped);
	c.encoded += WATCH_COST_SEND;
	t->budget -= t->budget < c.encoded ? t->budget : c.encoded;
}

/* Note that event `version` ends where wr's output ends now. */
static void
watcher_mark(struct watcher *wr, uint64_t version)
{
	if (wr->nmarks == WATCH_MARKS) {
		memmove(&wr->marks[0], &wr->marks[1],
		    (WATCH_MARKS - 1) * sizeof wr->marks[0]);
		wr->nmarks--;
	}
	wr->marks[wr->nmarks].version = version;
	wr->marks[wr->nmarks].at = wr->handed;
	wr->nmarks++;
}

/*
 * Has wr written out every event up to `version` it is to get? Not while
 * its snapshot is under way or the event is still ahead of its cursor;
 * after that, once the bytes delivered reach the first mark at or after
 * the event (conservative when the event is older than the marks kept).
 */
static int
watcher_written(const struct watcher *wr, uint64_t version)
{
	size_t	pending, delivered, i;

	if (wr->closing)
		return (1);	/* going: a reconnect gets a snapshot */
	if (wr->snapping || wr->next <= version)
		return (0);
	pending = watch_conn_pending(wr->evcon);
	delivered = wr->handed > pending ? wr->handed - pending : 0;
	for (i = 0; i < wr->nmarks; i++)
		if (wr->marks[i].version >= version)
			return (delivered >= wr->marks[i].at);
	return (wr->nmarks == 0 ||
	    delivered >= wr->marks[wr->nmarks - 1].at);
}

/* Streams covering app that have not yet written out event `version`. */
size_t
watch_unsent(const struct watch *w, const char *app, uint64_t version)
{
	const struct watcher	*wr;
	size_t			 n = 0;

	if (w == NULL)
		return (0);
	TAILQ_FOREACH(wr, &w->watchers, entry)
		if (watcher_wants(wr, app) && !watcher_written(wr, version))
			n++;
	return (n);
}

/*
 * Serve one watcher within the turn's budget: snapshot steps while its
 * unsent bytes are under half its bound, then the events after its
 * cursor; an event that would pass the bound, or one that left the ring
 * before it was sent, ends the watcher with RESET. Sets t->blocked when
 * the watcher has more to take but its reader has not made room.
 */
static void
watcher_feed(struct watch *w, struct watcher *wr, struct watch_turn *t)
{
	size_t			 bound = w->d.conf->watch_max_buffer_bytes;
	size_t			 pending, before;
	struct watch_frame	*f;

	if (wr->closing)
		return;
	pending = watch_conn_pending(wr->evcon);
	while (t->budget > 0 && wr->snapping) {
		if (pending >= bound / 2) {
			t->blocked = 1;
			return;
		}
		before = wr->handed;
		watcher_snap_step(w, wr, t);
		pending += wr->handed - before;
	}
	while (t->budget > 0 && !wr->snapping &&
	    wr->next <= w->stats.version) {
		if ((f = watch_ring_at(w, wr->next)) == NULL) {
			watcher_reset(wr, "events left the window unsent");
			return;
		}
		t->budget -= t->budget < WATCH_COST_LOOK ? t->budget :
		    WATCH_COST_LOOK;
		if (!watcher_wants(wr, f->app)) {
			wr->next++;
			continue;
		}
		if (pending + f->blob->size > bound) {
			watcher_reset(wr, "unsent bytes past the bound");
			return;
		}
		pending += watcher_put(wr, f->blob);
		watcher_mark(wr, f->version);
		wr->next++;
		t->budget -= t->budget < WATCH_COST_SEND ? t->budget :
		    WATCH_COST_SEND;
	}
}

/* Whether a watcher has more to take (for the pump's next turn). */
static int
watcher_wants_more(const struct watch *w, const struct watcher *wr)
{
	return (!wr->closing &&
	    (wr->snapping || wr->next <= w->stats.version));
}

/*
 * The pump: serve the watchers in turn, each once at most, within
 * heureka.watch.slice-bytes of work; those served go to the back of the
 * list, so the next turn begins with the others. Again at once if work
 * is left, soon if a watcher waits for its reader to make room.
 */
static void
watch_pump_cb(evutil_socket_t fd, short what, void *arg)
{
	struct watch		*w = arg;
	struct watcher		*wr;
	struct watch_turn	 t;
	size_t			 i, n = w->stats.watchers;
	int			 more = 0;

	(void)fd;
	(void)what;
	memset(&t, 0, sizeof t);
	t.budget = w->d.conf->watch_slice_bytes > 0 ?
	    w->d.conf->watch_slice_bytes : SIZE_MAX;
	t.mono = clock_now().mono_ms;
	for (i = 0; i < n && t.budget > 0; i++) {
		if ((wr = TAILQ_FIRST(&w->watchers)) == NULL)
			break;
		TAILQ_REMOVE(&w->watchers, wr, entry);
		TAILQ_INSERT_TAIL(&w->watchers, wr, entry);
		watcher_feed(w, wr, &t);
	}
	if (watch_snaps_drop(w))
		more = 1;
	watch_account(w);
	if (t.budget == 0)
		TAILQ_FOREACH(wr, &w->watchers, entry)
			if (watcher_wants_more(w, wr)) {
				more = 1;
				break;
			}
	if (more)
		watch_pump_soon(w, 0);
	else if (t.blocked)
		watch_pump_soon(w, WATCH_POLL_MS);
}

/* Run the pump in ms (0: on the next loop turn, after polling). */
static void
watch_pump_soon(struct watch *w, int64_t ms)
{
	struct timeval	tv = clock_ms_tv(ms);

	if (ms > 0 && evtimer_pending(w->pump_ev, NULL))
		return;		/* due already, as soon or sooner */
	evtimer_add(w->pump_ev, &tv);
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
		watcher_put_text(wr, ":\n\n", 3);
	}
}

/*
 * Every WATCH_TICK_MS: a watcher whose unsent bytes nobody read for
 * heureka.watch.stall-timeout-ms is cut off (RESET, close); the bytes
 * alive go to the budget, and the heap is trimmed after a fall.
 */
static void
watch_tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct watch	*w = arg;
	struct watcher	*wr, *next;
	int64_t		 now = clock_now().mono_ms;
	size_t		 pending, delivered;

	(void)fd;
	(void)what;
	for (wr = TAILQ_FIRST(&w->watchers); wr != NULL; wr = next) {
		next = TAILQ_NEXT(wr, entry);
		if (wr->closing)
			continue;
		pending = watch_conn_pending(wr->evcon);
		delivered = wr->handed > pending ? wr->handed - pending : 0;
		if (pending == 0 || delivered != wr->delivered) {
			wr->delivered = delivered;
			wr->progress_ms = now;
		} else if (now - wr->progress_ms >= w->d.conf->watch_stall_ms) {
			w->stats.stalls++;
			watcher_reset(wr, "its reader stopped reading");
		}
	}
	watch_account(w);
}

/* A watch on deps->reg, with its timers on deps->base. */
struct watch *
watch_new(const struct watch_deps *deps)
{
	struct watch		*w = xcalloc(1, sizeof *w);
	const struct watch_deps	*d = &w->d;
	struct timeval		 tv;
	int64_t			 ms = deps->conf->watch_keepalive_ms;

	w->d = *deps;
	TAILQ_INIT(&w->watchers);
	TAILQ_INIT(&w->order);
	TAILQ_INIT(&w->snapped);
	w->cap = d->conf->watch_window > 0 ? (size_t)d->conf->watch_window :
	    1;
	w->ring = xcalloc(w->cap, sizeof *w->ring);
	htab_init(&w->apps, 16);
	w->acct = watch_acct_new();
	w->tmp = evbuffer_new();
	w->stats.version = (uint64_t)gate_started(d->gate).wall_ms * 1000;
	w->dormant = 1;		/* no watcher yet: no id given out */
	registry_add_observer(d->reg, watch_observe_cb, w);
	w->keepalive_ev = event_new(d->base, -1, EV_PERSIST,
	    watch_keepalive_cb, w);
	tv = clock_ms_tv(ms);
	event_add(w->keepalive_ev, &tv);
	w->tick_ev = event_new(d->base, -1, EV_PERSIST, watch_tick_cb, w);
	tv = clock_ms_tv(WATCH_TICK_MS);
	event_add(w->tick_ev, &tv);
	w->pump_ev = evtimer_new(d->base, watch_pump_cb, w);
	return (w);
}

/* Forget a watcher (its connection is closing or gone). */
static void
watcher_free(struct watcher *wr)
{
	struct watch	*w = wr->w;

	watcher_snap_end(wr);
	TAILQ_REMOVE(&w->watchers, wr, entry);
	if (--w->stats.watchers == 0)
		w->quiet = w->stats.version;
	event_free(wr->close_ev);
	free(wr->app);
	free(wr);
}

/*
 * A connection is being freed (conn.c owns the front's close callback and
 * passes it on through server.c). If it held a watcher: if libevent
 * detached the request (the peer went away mid-stream) it is ours to
 * free, else the connection frees it. A scan of the watchers: they are
 * capped, and a connection closes once.
 */
void
watch_conn_closed(struct watch *w, struct hconn *evcon)
{
	struct watcher	*wr;

	if (w == NULL)
		return;
	TAILQ_FOREACH(wr, &w->watchers, entry) {
		if (wr->evcon != evcon)
			continue;
		if (hreq_conn(wr->req) == NULL)
			hreq_reply_end(wr->req);
		watcher_free(wr);
		return;
	}
}

/*
 * Shutting down: every stream gets a last event, SHUTDOWN with the current
 * version as its id (a client resumes from it on another node, or on this
 * one once it is back), and a clean end (the final empty chunk), so a
 * reader sees a complete response rather than a cut connection. A watcher
 * already being RESET closes as it was going to.
 */
void
watch_drain(struct watch *w)
{
	struct watcher	*wr, *next;
	char		 frame[96];
	int		 n;

	if (w == NULL)
		return;
	n = snprintf(frame, sizeof frame, "event: SHUTDOWN\nid: %" PRIu64
	    "\ndata: {}\n\n", w->stats.version);
	for (wr = TAILQ_FIRST(&w->watchers); wr != NULL; wr = next) {
		next = TAILQ_NEXT(wr, entry);
		if (wr->closing)
			continue;
		if (hreq_conn(wr->req) != NULL) {
			evbuffer_add(w->tmp, frame, (size_t)n);
			hreq_reply_chunk(wr->req, w->tmp);
			evbuffer_drain(w->tmp, evbuffer_get_length(w->tmp));
		}
		/* The request is the front's from here; forget the watcher. */
		hreq_reply_end(wr->req);
		watcher_free(wr);
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
		hconn_free(wr->evcon);
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
	if (w->tick_ev != NULL)
		event_free(w->tick_ev);
	if (w->pump_ev != NULL)
		event_free(w->pump_ev);
	while (w->n > 0)
		watch_ring_pop(w);
	free(w->ring);
	htab_sweep(&w->apps, watch_app_drop, w);
	htab_clear(&w->apps);
	evbuffer_free(w->tmp);
	watch_acct_unref(w->acct);	/* blobs in flight hold it on */
	free(w);
}

/*
 * Every app of the registry has its watch_app (the observer makes them);
 * should one be missing, the walk would skip it: make those missing.
 */
static void
watch_apps_sync(struct watch *w)
{
	struct registry	*reg = w->d.reg;
	struct reg_app	*ra;
	size_t		 i, n = registry_app_count(reg);

	if (htab_count(&w->apps) >= n)
		return;
	for (i = 0; i < n; i++) {
		ra = registry_app_at(reg, i);
		(void)watch_app_get(w, reg_app_name(ra), reg_app_hash(ra), 1);
	}
}

/* Start wr's snapshot: the pump walks it (ADDED, LEADER per app, SYNCED). */
static void
watch_snapshot(struct watch *w, struct watcher *wr)
{
	struct reg_app	*ra;

	watch_apps_sync(w);
	wr->snapping = 1;
	wr->snapver = w->stats.version;
	w->snapping++;
	if (wr->app == NULL)
		wr->cur = TAILQ_FIRST(&w->order);
	else if ((ra = registry_app_find(w->d.reg, wr->app)) != NULL)
		wr->cur = watch_app_get(w, reg_app_name(ra), reg_app_hash(ra),
		    1);
}

/*
 * Resume after Last-Event-ID v: the frames after v, if v is still in the
 * window (or is the current version). 0 done, -1 not in the window.
 */
static int
watch_resume(struct watch *w, struct watcher *wr, uint64_t v)
{
	if (v > w->stats.version)
		return (-1);
	if (v != w->stats.version && watch_ring_at(w, v + 1) == NULL)
		return (-1);
	wr->next = v + 1;
	return (0);
}

/* The Last-Event-ID header as a number; 0 absent, -1 malformed. */
static int
watch_last_id(struct hreq *req, uint64_t *v)
{
	const char		*h = hreq_header(req, "Last-Event-ID");
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
watch_query(const struct hquery *q, const char *name)
{

	return (hquery_get(q, name));
}

/* GET heureka/watch[?app=APP]: open a stream. */
static void
watch_open(struct watch *w, struct hreq *req,
    const struct hquery *query, struct hk_time now)
{
	const struct watch_deps	*d = &w->d;
	struct hconn		*evcon = hreq_conn(req);
	struct bufferevent	*bev;
	struct hhdrs		*h;
	struct watcher		*wr;
	const char		*app = watch_query(query, "app");
	const char		*te;
	uint64_t		 last = 0;
	int			 haslast;

	if (hreq_method(req) != EVHTTP_REQ_GET) {
		hreq_error(req, 405, "method not allowed");
		return;
	}
	if (!gate_allow_read(d->gate, now.mono_ms)) {
		hreq_reply(req, 403, NULL, NULL, 0);
		return;
	}
	if (app != NULL && !instance_name_ok(app, INSTANCE_MAX_NAME)) {
		hreq_error(req, 400, "invalid application name");
		return;
	}
	if ((haslast = watch_last_id(req, &last)) < 0) {
		hreq_error(req, 400, "Last-Event-ID must be an event id");
		return;
	}
	if (gate_is_stopping(d->gate) || evcon == NULL ||
	    w->stats.watchers >= (size_t)d->conf->watch_max_watchers) {
		w->stats.refused++;
		hreq_error(req, 503, "too many watchers");
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

	h = hreq_output_headers(req);
	hhdrs_add(h, "Content-Type", "text/event-stream");
	hhdrs_add(h, "Cache-Control", "no-cache");
	hhdrs_add(h, "X-Accel-Buffering", "no");
	hreq_reply_start(req, 200, "OK");
	wr->chunked = (te = hhdrs_find(h, "Transfer-Encoding")) !=
	    NULL && strcasecmp(te, "chunked") == 0;
	/* A stream is quiet for long: no read or write timeout. */
	if ((bev = hconn_bufferevent(evcon)) != NULL)
		bufferevent_set_timeouts(bev, NULL, NULL);
	watch_conn_cap(evcon, d->conf->watch_max_buffer_bytes);
	wr->handed = watch_conn_pending(evcon);	/* the head */
	wr->progress_ms = now.mono_ms;
	if (haslast > 0 && watch_resume(w, wr, last) == 0)
		w->stats.resumed++;
	else
		watch_snapshot(w, wr);
	watch_pump_soon(w, 0);
}

/* GET heureka/watch/stats: the counters as JSON. */
static void
watch_reply_stats(struct watch *w, struct hreq *req)
{
	struct buf	b;

	buf_init(&b, 0);
	buf_addf(&b, "{\"watchers\":%zu,\"streams\":%" PRIu64
	    ",\"resumed\":%" PRIu64 ",\"resets\":%" PRIu64
	    ",\"stalls\":%" PRIu64 ",\"snapshots\":%zu"
	    ",\"bytes\":%zu,\"refused\":%" PRIu64 ",\"events\":%" PRIu64
	    ",\"frames\":%" PRIu64 ",\"version\":%" PRIu64 "}\n",
	    w->stats.watchers, w->stats.streams, w->stats.resumed,
	    w->stats.resets, w->stats.stalls, w->snapping, w->acct->bytes,
	    w->stats.refused, w->stats.events, w->stats.frames,
	    w->stats.version);
	hreq_reply(req, 200, "application/json", b.data, b.len);
	buf_free(&b);
}

/* Serve heureka/watch and watch/stats; NULL when rel is not ours. */
const char *
watch_http(struct watch *w, struct hreq *req, const char *rel,
    const struct hquery *query, struct hk_time now)
{
	if (strcmp(rel, "watch") == 0) {
		watch_open(w, req, query, now);
		return ("watch");
	}
	if (strcmp(rel, "watch/stats") == 0) {
		watch_reply_stats(w, req);
		return ("watch");
	}
	return (NULL);
}

/* Counters for heureka/stats and /metrics. */
const struct watch_stats *
watch_stats(const struct watch *w)
{
	return (&w->stats);
}
