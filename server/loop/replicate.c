/*
 * replicate.c: replication to the cluster's peers (spec §6.2, §6.3) on
 * the server's event loop: the registry observer and the batches. The
 * peers and their connections are peers.c's, the start-up sync and
 * anti-entropy sync.c's.
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
 * connections, so a slow or dead peer only delays itself. A peer whose
 * certificate is refused (peers.c) is unreachable the same way: its
 * batches stay queued, back off and count as failures.
 *
 * The clock is read once where an event enters (the observer takes the
 * registry event's time, each timer and HTTP callback reads clock_now())
 * and passed down.
 */

#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>

#include "audit.h"
#include "buf.h"
#include "clock.h"
#include "config.h"
#include "instance.h"
#include "json.h"
#include "log.h"
#include "peerq.h"
#include "peers.h"
#include "registry.h"
#include "repl.h"
#include "replicate.h"
#include "xmalloc.h"

/* The batch in flight. */
struct repl_batch {
	struct repl_peer	*rp;
	struct peer_task	*tasks[PEER_BATCH_MAX];
	size_t			 n;
	int			 timed_out;
	int			 error_seen;
};

/* Replication's state of one peer (its slot). */
struct repl_peer {
	struct replicate	*r;
	struct peer		*p;
	struct peer_queue	*q;
	struct peer_backoff	 bo;
	struct event		*ev;		/* dispatch timer */
	int64_t			 ev_due;	/* mono ms, -1 idle */
	struct repl_batch	*inflight;
	uint64_t		 batches_sent;
	uint64_t		 items_sent;
	uint64_t		 failures;
	uint64_t		 failed_items;	/* dropped by permanent errors */
	uint64_t		 not_found;	/* heartbeat 404 -> register */
	uint64_t		 conflicts;	/* heartbeat 409 -> adopt */
};

struct replicate {
	struct event_base	*base;		/* replicate_deps, borrowed */
	const struct config	*conf;
	struct registry		*reg;
	struct peers		*peers;
	struct audit		*audit;		/* NULL: no origins */
	int			 slot;
	struct log_ratelim	 rl;
	uint64_t		 seq;		/* of the last change queued */
};

static void	repl_kick(struct repl_peer *, int64_t, int64_t);

/* Replication's state of p. */
static struct repl_peer *
repl_of(const struct replicate *r, const struct peer *p)
{
	return (p->slot[r->slot]);
}

/* ------------------------------------------------------------------ */
/* Enqueueing: the registry observer.                                   */

/* Queue a task for one peer and make sure its timer runs. */
static void
repl_enqueue(struct repl_peer *rp, struct peer_task *t, int64_t mono)
{
	if (t->seq == 0)
		t->seq = ++rp->r->seq;
	if (peer_queue_push(rp->q, t, mono) == PEER_PUSH_DROPPED)
		log_warnx_rl(&rp->r->rl, "peer %s: replication queue full, "
		    "oldest task dropped", rp->p->u.display);
	repl_kick(rp, PEER_DISPATCH_MS, mono);
}

/* Queue t for p (replicate.h). */
void
replicate_push(struct replicate *r, struct peer *p, struct peer_task *t,
    int64_t mono)
{
	repl_enqueue(repl_of(r, p), t, mono);
}

/*
 * The audit's record of who made the change travels with it to heureka
 * peers (repl.h); heartbeats carry none.
 */
static void
repl_origin(struct replicate *r, struct peer_task *t)
{
	const struct audit_who	*w;

	if (r->audit == NULL || t->item.action == REPL_HEARTBEAT)
		return;
	w = audit_who(r->audit);
	if (w->node == NULL || w->node[0] == '\0')
		return;
	t->item.origin_node = xstrdup(w->node);
	t->item.origin_user = xstrdup(w->user != NULL ? w->user : "");
	t->item.origin_addr = xstrdup(w->addr != NULL ? w->addr : "");
}

/* Registry observer: replicate every change that did not come from a peer. */
static void
repl_observe_cb(const struct registry_event *ev, void *arg)
{
	struct replicate	*r = arg;
	struct peer_task	*t;
	int64_t			 mono = ev->now.mono_ms;
	size_t			 i, n = peers_count(r->peers);

	if (ev->replicated || ev->type == REG_EV_EVICT)
		return;
	r->seq++;		/* also with no peer: the barrier reads it */
	for (i = 0; i < n; i++) {
		t = peer_task_from_event(ev, mono,
		    r->conf->max_time_for_replication);
		if (t == NULL)
			return;
		repl_origin(r, t);
		t->seq = r->seq;
		repl_enqueue(repl_of(r, peers_get(r->peers, i)), t, mono);
	}
}

/* Queue a Register of our copy of (app, id) for rp, if we have one. */
static void
repl_push_register(struct repl_peer *rp, const char *app, const char *id,
    int64_t mono)
{
	const struct instance	*in;

	in = registry_get(rp->r->reg, app, id, mono);
	if (in == NULL)
		return;
	repl_enqueue(rp, peer_task_register(app, id, in, mono), mono);
}

/* ------------------------------------------------------------------ */
/* Batches.                                                             */

/* Record why a request failed (called by libevent before the callback). */
static void
repl_batch_error_cb(enum evhttp_request_error err, void *arg)
{
	struct repl_batch	*b = arg;

	b->error_seen = 1;
	if (err == EVREQ_HTTP_TIMEOUT)
		b->timed_out = 1;
}

/* Free a finished batch's tasks and the batch. */
static void
repl_batch_free(struct repl_batch *b)
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
repl_batch_items(struct repl_peer *rp, struct repl_batch *b,
    struct repl_response *resp, struct hk_time now)
{
	struct replicate	*r = rp->r;
	struct repl_item	*it;
	struct instance		*dup;
	size_t			 i;
	int			 code;

	if (resp->n != b->n) {
		log_warnx_rl(&r->rl, "peer %s: %zu answers to %zu items, "
		    "ignored", rp->p->u.display, resp->n, b->n);
		return;
	}
	for (i = 0; i < b->n; i++) {
		it = &b->tasks[i]->item;
		code = resp->items[i].status_code;
		if (code >= 200 && code < 300)
			continue;
		if (it->action == REPL_HEARTBEAT && code == 404) {
			/* The peer lost it: send our copy. */
			rp->not_found++;
			repl_push_register(rp, it->app_name, it->id,
			    now.mono_ms);
		} else if (it->action == REPL_HEARTBEAT &&
		    resp->items[i].entity != NULL &&
		    r->conf->sync_when_timestamp_differs) {
			/* The peer has a newer copy: adopt it (§6.2). */
			rp->conflicts++;
			dup = resp->items[i].entity;
			resp->items[i].entity = NULL;
			if (dup->overridden_status != STATUS_UNKNOWN)
				registry_set_override(r->reg, instance_id(dup),
				    dup->overridden_status, now.mono_ms);
			registry_register(r->reg, dup, 1, now);
		} else
			log_debug("%s: %s %s/%s answered %d by %s", __func__,
			    repl_action_name(it->action), it->app_name, it->id,
			    code, rp->p->u.display);
	}
}

/* A batch answered 2xx: the per-item results. */
static void
repl_batch_ok(struct repl_peer *rp, struct repl_batch *b,
    struct evhttp_request *req, struct hk_time now)
{
	struct repl_response	 resp;
	struct buf		 body;
	char			*cause = NULL;

	rp->p->reachable = 1;
	rp->p->last_success_ms = now.wall_ms;
	peer_backoff_ok(&rp->bo);
	memset(&resp, 0, sizeof resp);
	buf_init(&body, PEER_REPL_BODY_MAX);
	if (peer_body(req, &body, PEER_REPL_BODY_MAX) != 0)
		log_warnx_rl(&rp->r->rl, "peer %s: bad batch answer",
		    rp->p->u.display);
	else if (json_decode_repl_response(body.data, body.len, &resp,
	    now.wall_ms, &cause) != 0) {
		log_warnx_rl(&rp->r->rl, "peer %s: batch answer: %s",
		    rp->p->u.display, cause);
		free(cause);
	} else
		repl_batch_items(rp, b, &resp, now);
	repl_response_clear(&resp);
	buf_free(&body);
	repl_batch_free(b);
	repl_kick(rp, 0, now.mono_ms);
}

/* A batch came back (or failed). */
static void
repl_batch_done_cb(struct evhttp_request *req, void *arg)
{
	struct repl_batch	*b = arg;
	struct repl_peer	*rp = b->rp;
	enum peer_failure	 kind;
	const char		*why;
	struct hk_time		 now = clock_now();
	int			 code = 0;
	int64_t			 mono = now.mono_ms, delay;

	rp->inflight = NULL;
	if (req != NULL)
		code = evhttp_request_get_response_code(req);
	rp->p->last_status = code != 0 ? code : -1;
	if (code != 0)
		peer_note_date(rp->p, req, now);
	if (code >= 200 && code < 300) {
		repl_batch_ok(rp, b, req, now);
		return;
	}
	rp->failures++;
	rp->p->reachable = 0;
	if (code == 503 || (code == 0 && b->timed_out))
		kind = PEER_FAIL_CONGESTION;
	else if (code == 0)
		kind = PEER_FAIL_TRANSIENT;
	else
		kind = PEER_FAIL_PERMANENT;
	delay = peer_backoff_fail(&rp->bo, kind, arc4random(), mono);
	if (kind == PEER_FAIL_PERMANENT) {
		/*
		 * Eureka drops the batch and does not pause; we drop it too
		 * but keep the (short) pause so a peer answering 500 to
		 * everything is not hit every 20 ms.
		 */
		log_warnx_rl(&rp->r->rl, "peer %s: batch answered %d, %zu "
		    "items dropped%s", rp->p->u.display, code, b->n,
		    code == 401 || code == 403 ? " (check the credentials in "
		    "its URL or the peer certificate)" : "");
		rp->failed_items += b->n;
		repl_batch_free(b);
	} else {
		why = peer_tls_error(rp->p, PEER_CONN_REPL);
		log_warnx_rl(&rp->r->rl, "peer %s: %s%s%s, retry in %lld ms",
		    rp->p->u.display, code == 503 ? "503 (congestion)" :
		    b->timed_out ? "timeout" : "unreachable",
		    why != NULL ? ": TLS: peer certificate refused: " : "",
		    why != NULL ? why : "", (long long)delay);
		peer_queue_requeue(rp->q, b->tasks, b->n, mono);
		b->n = 0;
		free(b);
	}
	repl_kick(rp, delay, mono);
}

/* Send one batch to rp's peer now. */
static void
repl_send_batch(struct repl_peer *rp, int64_t mono)
{
	struct repl_batch	*b;
	struct evhttp_request	*req;
	struct repl_list	 list;
	struct repl_item	 items[PEER_BATCH_MAX];
	struct buf		 body;
	char			*uri;
	size_t			 i;

	b = xcalloc(1, sizeof *b);
	b->rp = rp;
	b->n = peer_queue_take(rp->q, b->tasks, PEER_BATCH_MAX, mono);
	if (b->n == 0) {
		free(b);
		return;
	}
	for (i = 0; i < b->n; i++)
		items[i] = b->tasks[i]->item;	/* shallow: tasks own */
	list.items = items;
	list.n = list.cap = b->n;
	list.names = NULL;
	list.origin = rp->p->heureka;
	buf_init(&body, 0);
	json_encode_repl_list(&body, &list);

	req = evhttp_request_new(repl_batch_done_cb, b);
	evhttp_request_set_error_cb(req, repl_batch_error_cb);
	peer_headers(rp->p, req);
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "application/json");
	evbuffer_add(evhttp_request_get_output_buffer(req), body.data,
	    body.len);
	buf_free(&body);
	xasprintf(&uri, "%speerreplication/batch/", rp->p->u.path);
	rp->batches_sent++;
	rp->items_sent += b->n;
	/* Not in flight yet: an idle peer may move to new TLS first. */
	if (peer_request(rp->p, PEER_CONN_REPL, req, EVHTTP_REQ_POST, uri,
	    0) != 0) {
		/* Not sent: treat as a transient failure. */
		rp->failures++;
		peer_queue_requeue(rp->q, b->tasks, b->n, mono);
		free(b);
		repl_kick(rp, peer_backoff_fail(&rp->bo, PEER_FAIL_TRANSIENT,
		    arc4random(), mono), mono);
	} else
		rp->inflight = b;
	free(uri);
}

/* The per-peer dispatch timer. */
static void
repl_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct repl_peer	*rp = arg;
	int64_t			 mono = clock_mono_ms(), due;

	(void)fd;
	(void)what;
	rp->ev_due = -1;
	if (rp->inflight != NULL || rp->p->conn[PEER_CONN_REPL] == NULL)
		return;		/* the batch callback kicks again */
	if (!peer_backoff_ready(&rp->bo, mono)) {
		repl_kick(rp, rp->bo.until - mono, mono);
		return;
	}
	/*
	 * Changes go out within PEER_DISPATCH_MS; heartbeats alone wait up
	 * to Eureka's PEER_BATCH_AGE_MS (or a full batch), so a heartbeat
	 * storm costs one request per 250 renewals, not one per 20 ms.
	 */
	due = peer_queue_due(rp->q, mono, peer_queue_batch_delay(rp->q));
	if (due < 0)
		return;
	if (due > 0) {
		repl_kick(rp, due, mono);
		return;
	}
	repl_send_batch(rp, mono);
}

/* Run rp's timer within `delay` ms of mono (earlier deadlines are kept). */
static void
repl_kick(struct repl_peer *rp, int64_t delay, int64_t mono)
{
	struct timeval	tv;

	if (rp->ev == NULL)
		return;
	if (delay < 0)
		delay = 0;
	if (rp->ev_due >= 0 && rp->ev_due <= mono + delay)
		return;
	rp->ev_due = mono + delay;
	tv = clock_ms_tv(delay);
	evtimer_add(rp->ev, &tv);
}

/* ------------------------------------------------------------------ */
/* What sync.c asks.                                                    */

/* Tasks other than heartbeats waiting for p (replicate.h). */
size_t
replicate_urgent(const struct replicate *r, const struct peer *p)
{
	return (peer_queue_urgent(repl_of(r, p)->q));
}

/* The order of the last local change queued (replicate.h). */
uint64_t
replicate_seq(const struct replicate *r)
{
	return (r->seq);
}

/* Has p answered every task of change `seq` or before? */
int
replicate_acked(const struct replicate *r, const struct peer *p,
    uint64_t seq)
{
	const struct repl_peer	*rp = repl_of(r, p);
	size_t			 i;

	if (rp->inflight != NULL)
		for (i = 0; i < rp->inflight->n; i++)
			if (rp->inflight->tasks[i]->seq <= seq)
				return (0);
	return (!peer_queue_holds(rp->q, seq));
}

/* Is a batch in flight to p? */
int
replicate_inflight(const struct replicate *r, const struct peer *p)
{
	return (repl_of(r, p)->inflight != NULL);
}

/* p answered another request: end a replication pause now. */
void
replicate_answered(struct replicate *r, struct peer *p, int64_t mono)
{
	struct repl_peer	*rp = repl_of(r, p);

	if (rp->bo.failures > 0) {
		peer_backoff_ok(&rp->bo);
		repl_kick(rp, 0, mono);
	}
}

/* ------------------------------------------------------------------ */
/* The peer list's observer.                                            */

/* A peer joined: its queue and timer. */
static void *
repl_peer_added(struct peer *p, void *arg)
{
	struct replicate	*r = arg;
	struct repl_peer	*rp;
	int			 max;

	rp = xcalloc(1, sizeof *rp);
	rp->r = r;
	rp->p = p;
	max = r->conf->max_elements_in_peer_replication_pool;
	rp->q = peer_queue_new(max > 0 ? (size_t)max : 10000);
	rp->ev = evtimer_new(r->base, repl_timer_cb, rp);
	rp->ev_due = -1;
	return (rp);
}

/* p leaves the list: its queue, timer and batch go. */
static void
repl_peer_removed(struct peer *p, void *arg)
{
	struct replicate	*r = arg;
	struct repl_peer	*rp = repl_of(r, p);

	if (rp == NULL)
		return;
	repl_batch_free(rp->inflight);
	if (rp->ev != NULL)
		event_free(rp->ev);
	peer_queue_free(rp->q);
	free(rp);
}

/* Is a batch in flight to p (a TLS change waits)? */
static int
repl_peer_busy(const struct peer *p, void *arg)
{
	return (repl_of(arg, p)->inflight != NULL);
}

/* Replication's part of peer_info. */
static void
repl_peer_info(const struct peer *p, struct peer_info *pi, void *arg)
{
	const struct repl_peer		*rp = repl_of(arg, p);
	const struct peer_queue_stats	*st = peer_queue_stats(rp->q);

	pi->queue_depth = peer_queue_len(rp->q);
	pi->batches_sent = rp->batches_sent;
	pi->items_sent = rp->items_sent;
	pi->failures = rp->failures;
	pi->dropped = st->overflow + st->expired + rp->failed_items;
	pi->inflight = rp->inflight != NULL ? rp->inflight->n : 0;
	pi->overflow = st->overflow;
	pi->expired = st->expired;
	pi->coalesced = st->coalesced;
	pi->failed_items = rp->failed_items;
	pi->backoff_failures = rp->bo.failures;
	pi->not_found = rp->not_found;
	pi->conflicts = rp->conflicts;
}

static const struct peer_observer repl_observer = {
	repl_peer_added, repl_peer_removed, repl_peer_busy, repl_peer_info,
	NULL
};

/* Replicate local changes to the peers of d->peers. */
struct replicate *
replicate_new(const struct replicate_deps *d)
{
	struct replicate	*r;
	struct log_ratelim	 rl = LOG_RATELIM_INIT(10000, 5);

	r = xcalloc(1, sizeof *r);
	r->base = d->base;
	r->conf = d->conf;
	r->reg = d->reg;
	r->peers = d->peers;
	r->audit = d->audit;
	r->rl = rl;
	if ((r->slot = peers_observe(d->peers, &repl_observer, r)) < 0)
		fatalx("%s: no observer slot left", __func__);
	registry_add_observer(d->reg, repl_observe_cb, r);
	return (r);
}

/* Free it, after peers_free (which dropped every peer's state). */
void
replicate_free(struct replicate *r)
{
	free(r);
}
