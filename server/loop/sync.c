/*
 * sync.c: start-up sync and anti-entropy on the server's event loop
 * (sync.h); every decision is taken by server/core/syncrule.c, this file
 * makes the requests and acts on the answers.
 *
 * Start-up sync (§6.4) asks every peer for its registry at once, a page
 * at a time (syncpage.h; a Java peer's GET apps/ is one page), and is
 * done when a ready peer answered all of it (or every peer answered,
 * ready or not: a cluster starting together has nothing to copy), then
 * the server is told it is ready. With no peer answering, reads stay
 * refused (403, §6.4) until the gate allows reads
 * (waitTimeInMsWhenSyncEmpty) or until some peer answers: after the
 * configured attempts (Spring: one) the sync is retried every second, and
 * a successful anti-entropy round counts as well. A node with no peers is
 * ready at once.
 *
 * Anti-entropy (a heureka extension; Java peers never call it): every
 * anti_entropy_interval_ms a node asks each peer for GET heureka/digest,
 * and when it differs from its own, pulls the peer's applications in the
 * buckets whose digests differ (GET heureka/apps?after=...&buckets=...,
 * page after page) and reconciles. The digest sums registry_copy_hash() of
 * every live lease, so it covers every field replication carries (status,
 * overriddenStatus, metadata, ...); per bucket it comes from a cache
 * (digest.h) that a timer keeps current a budget at a time, so neither
 * side walks a large registry in one turn. The rule
 * (registry_reconcile(), loop-free) is one-sided so that running it on
 * both ends of every pair converges without ping-pong, and it compares
 * only times the origin stamped and replication carries:
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
 * The clock is read once as each timer or answer arrives and passed down.
 */

#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "buf.h"
#include "clock.h"
#include "config.h"
#include "digest.h"
#include "gate.h"
#include "instance.h"
#include "json.h"
#include "log.h"
#include "peers_int.h"
#include "registry.h"
#include "sync.h"
#include "syncpage.h"
#include "syncrule.h"
#include "xmalloc.h"

static void	peers_dg_arm(struct event *, int64_t);
static void	peer_ctl_get(struct peer *, enum sync_kind, int,
		    const char *, struct hk_time);

/* Tell the gate reads may be served. */
static void
peers_set_ready(struct peers *ps, const char *why, struct hk_time now)
{
	if (gate_is_ready(ps->gate))
		return;
	ps->sync_ms = now.mono_ms - ps->sync_started_ms;
	log_info("registry ready (%s, %d instance(s) copied, %lld ms)", why,
	    ps->sync.count, (long long)ps->sync_ms);
	gate_set_ready(ps->gate, ps->sync.count, now);
}

/* One peer's part of a start-up sync round finished (syncrule.c). */
static void
peers_sync_one_done(struct peers *ps, int answered, int peer_ready,
    struct hk_time now)
{
	struct sync_next	nx;
	struct timeval		tv;

	if (gate_is_ready(ps->gate))
		return;
	nx = sync_peer_done(&ps->sync, answered, peer_ready,
	    ps->conf->registry_sync_retries,
	    ps->conf->registry_sync_retry_wait_ms);
	switch (nx.step) {
	case SYNC_WAIT:
		return;
	case SYNC_READY:
		peers_set_ready(ps, nx.why, now);
		return;
	case SYNC_RETRY:
		break;
	}
	if (nx.gave_up)
		log_warnx("start-up sync: no peer answered; reads refused "
		    "until one does or waitTimeInMsWhenSyncEmpty has passed");
	tv = clock_ms_tv(nx.wait_ms);
	evtimer_add(ps->sync_ev, &tv);
}

/* A pull's peer and time, for peer_cancel_cb. */
struct peer_pull {
	struct peer	*p;
	int64_t		 mono;
};

/* Anti-entropy found a copy we cancelled: push the peer a Cancel. */
static void
peer_cancel_cb(const char *app, const char *id, int64_t cancel_ts,
    void *arg)
{
	struct peer_pull	*pl = arg;
	struct peer		*p = pl->p;

	p->ae_cancels++;
	peer_enqueue(p, peer_task_cancel(app, id, cancel_ts, pl->mono,
	    p->ps->conf->max_time_for_replication), pl->mono);
}

/* Record a control-request failure (called before the callback). */
static void
peer_ctl_error_cb(enum evhttp_request_error err, void *arg)
{
	struct peer_ctl	*c = arg;

	if (err == EVREQ_HTTP_TIMEOUT)
		c->timed_out = 1;
}

/* How many buckets a mask names. */
static unsigned
sync_bucket_count(uint64_t mask)
{
	unsigned	n = 0;

	for (; mask != 0; mask &= mask - 1)
		n++;
	return (n);
}

/* A digest came back: equal, pull, or let replication converge. */
static void
peer_ctl_digest(struct peer *p, const struct buf *body, struct hk_time now)
{
	struct peers	*ps = p->ps;
	char		 mine[65], theirs[65];
	char		 mine_b[DIGEST_BUCKETS_HEX + 1];
	char		 theirs_b[DIGEST_BUCKETS_HEX + 1];
	size_t		 n;

	p->ae_rounds++;
	if (peer_parse_digest_buckets(body->data, theirs, theirs_b) != 0) {
		log_warnx_rl(&ps->rl, "peer %s: bad digest", p->u.display);
		return;
	}
	/* Ours, from the cache; still being computed: next round. */
	if (!digest_refresh(ps->digest, ps->reg, now.mono_ms,
	    DIGEST_REFRESH_BUDGET)) {
		if (!evtimer_pending(ps->dg_ev, NULL))
			peers_dg_arm(ps->dg_ev, 0);
		return;
	}
	digest_hex(ps->digest, mine, mine_b, &n);
	switch (sync_digest_step(mine, theirs, gate_is_ready(ps->gate),
	    peer_queue_urgent(p->q), p->inflight != NULL, &p->ae_mismatch)) {
	case SYNC_DIGEST_EQUAL:
		peers_set_ready(ps, "in sync with a peer", now);
		break;
	case SYNC_DIGEST_PULL:
		/* Only the buckets that differ (all, from an older peer). */
		p->pull_buckets = digest_differing(mine_b, theirs_b);
		if (p->pull_buckets == 0)
			p->pull_buckets = SYNC_BUCKETS_ALL;
		p->ae_pulls++;
		p->ae_buckets += sync_bucket_count(p->pull_buckets);
		peer_ctl_get(p, SYNC_KIND_PULL, 0, NULL, now);
		break;
	case SYNC_DIGEST_WAIT:
		break;
	}
}

/*
 * A page of a registry came back (start-up sync or anti-entropy pull; a
 * Java peer's or an older heureka peer's whole registry is one last
 * page). It is reconciled at once, before the next page is asked for,
 * so the loop decodes at most one page per turn. An application may
 * change on the peer between two pages, and the pages are not one
 * snapshot; that is safe because registry_reconcile() judges each copy
 * alone, by the times its origin stamped: a copy a page carries that is
 * older than what replication already brought us is kept out (ours has
 * the later lastDirtyTimestamp or origin lastUpdatedTimestamp), a copy
 * cancelled since is covered by our tombstone once the cancel is
 * replicated to us (and a copy we adopt before that cancel arrives is
 * removed by it), and an instance that moves past the cursor while we
 * pull (a new registration, a new application) is a change the peer
 * replicates to us anyway. The pull order itself never reshuffles
 * (syncpage.h), so an instance that does not change is seen exactly
 * once.
 */
static void
peer_ctl_registry(struct peer *p, struct evhttp_request *req,
    enum sync_kind kind, int java, const char *query, const struct buf *body,
    struct hk_time now)
{
	struct peers		*ps = p->ps;
	struct evkeyvalq	*ih = evhttp_request_get_input_headers(req);
	struct applications	*apps;
	struct peer_pull	 pl = { p, now.mono_ms };
	const char		*rh, *next;
	char			*cause = NULL;
	int			 peer_ready;
	size_t			 n, i, ninst = 0, napps;
	enum sync_page_step	 step;

	apps = json_decode_applications(body->data, body->len, now.wall_ms,
	    &cause);
	if (apps == NULL) {
		log_warnx_rl(&ps->rl, "peer %s: bad registry: %s",
		    p->u.display, cause);
		free(cause);
		if (kind == SYNC_KIND_SYNC)
			peers_sync_one_done(ps, 0, 0, now);
		return;
	}
	napps = apps->n;
	for (i = 0; i < napps; i++)
		ninst += apps->apps[i]->n;
	n = sync_reconcile(ps->reg, apps, now, java,
	    kind == SYNC_KIND_PULL ? peer_cancel_cb : NULL, &pl);
	applications_free(apps);
	p->pull_adopted += n;
	if (kind == SYNC_KIND_PULL) {
		p->ae_pages++;
		p->ae_apps += napps;
		p->ae_instances += ninst;
		p->ae_adopted += n;
	} else {
		p->sync_pages++;
		ps->sync.count += (int)n;
	}
	next = evhttp_find_header(ih, "X-Heureka-Next");
	step = java ? SYNC_PAGE_LAST : sync_page_step(evhttp_find_header(ih,
	    "X-Heureka-Page"), next, query, p->pull_pages);
	p->pull_pages++;
	if (step == SYNC_PAGE_MORE) {
		peer_ctl_get(p, kind, 0, next, now);
		return;
	}
	if (step == SYNC_PAGE_BAD) {
		log_warnx_rl(&ps->rl, "peer %s: bad page of its registry "
		    "(X-Heureka-Page/Next); pull abandoned", p->u.display);
		if (kind == SYNC_KIND_SYNC)
			peers_sync_one_done(ps, 0, 0, now);
		return;
	}
	if (kind == SYNC_KIND_PULL) {
		if (p->pull_adopted > 0)
			log_info("anti-entropy: adopted %zu instance(s) from %s "
			    "(%u page(s))", p->pull_adopted, p->u.display,
			    p->pull_pages);
		peers_set_ready(ps, "anti-entropy pull", now);
		return;
	}
	rh = evhttp_find_header(ih, "X-Heureka-Ready");
	peer_ready = sync_peer_ready(java, rh);
	log_info("start-up sync: %zu instance(s) from %s in %u page(s)%s",
	    p->pull_adopted, p->u.display, p->pull_pages,
	    peer_ready ? "" : " (not ready)");
	peers_sync_one_done(ps, 1, peer_ready, now);
}

/* A sync or anti-entropy GET came back. */
static void
peer_ctl_done_cb(struct evhttp_request *req, void *arg)
{
	struct peer_ctl		*c = arg;
	struct peer		*p = c->p;
	struct peers		*ps = p->ps;
	struct buf		 body;
	struct hk_time		 now = clock_now();
	const char		*rh = NULL;
	enum sync_kind		 kind = c->kind;
	char			*query = c->query;
	int			 code = 0, java = c->java, credentials;
	size_t			 max;

	p->ctl = NULL;
	free(c);
	if (req != NULL) {
		code = evhttp_request_get_response_code(req);
		rh = evhttp_find_header(evhttp_request_get_input_headers(req),
		    "X-Heureka-Ready");
	}
	max = kind == SYNC_KIND_DIGEST ? PEER_DIGEST_BODY_MAX :
	    java ? PEER_CTL_BODY_MAX : PEER_PAGE_BODY_MAX;
	buf_init(&body, max);
	switch (sync_answer(kind, code, java, rh, &credentials)) {
	case SYNC_ANS_JAVA:
		/* Not a heureka peer: the standard endpoint. */
		peer_ctl_get(p, kind, 1, NULL, now);
		goto out;
	case SYNC_ANS_BUSY:
		/* Its digest is still being computed: ask next round. */
		p->reachable = 1;
		goto out;
	case SYNC_ANS_NO_AE:
		p->no_ae = 1;
		log_info("peer %s has no anti-entropy endpoint (not heureka?)",
		    p->u.display);
		goto out;
	case SYNC_ANS_NOT_READY:
		/*
		 * A heureka peer still syncing itself: it answered, with
		 * nothing it may hand out yet. A cluster starting together
		 * opens once every peer said so.
		 */
		p->reachable = 1;
		log_info("start-up sync: %s is not ready either",
		    p->u.display);
		peers_sync_one_done(ps, 1, 0, now);
		goto out;
	case SYNC_ANS_OK:
	case SYNC_ANS_FAILED:
		break;
	}
	if (credentials)
		log_warnx_rl(&ps->rl, "peer %s answered %d: check the "
		    "credentials in its URL (heureka.security.peer.*) or the "
		    "peer certificate", p->u.display, code);
	if (code != 200 || peer_body(req, &body, max) != 0) {
		if (code != 403)
			p->reachable = 0;
		if (kind == SYNC_KIND_SYNC)
			peers_sync_one_done(ps, 0, 0, now);
		goto out;
	}
	p->reachable = 1;
	p->last_success_ms = now.wall_ms;
	if (p->bo.failures > 0) {
		/*
		 * The peer answers again: end the replication pause now
		 * rather than up to 30 s later. This probe runs once per
		 * anti-entropy interval, so it cannot become a retry storm.
		 */
		peer_backoff_ok(&p->bo);
		peer_kick(p, 0, now.mono_ms);
	}
	if (kind == SYNC_KIND_DIGEST)
		peer_ctl_digest(p, &body, now);
	else
		peer_ctl_registry(p, req, kind, java, query, &body, now);
out:
	free(query);
	buf_free(&body);
}

/*
 * Issue a sync/anti-entropy GET to p (one at a time per peer). A pull's
 * first page has query NULL; the next ones pass the X-Heureka-Next the
 * page before said.
 */
static void
peer_ctl_get(struct peer *p, enum sync_kind kind, int java,
    const char *query, struct hk_time now)
{
	struct evhttp_request	*req;
	struct peer_ctl		*c;
	char			*uri, *first = NULL;
	const char		*what;
	size_t			 max;

	peer_tls_refresh(p);
	if (p->ctl != NULL || p->ctl_conn == NULL) {
		if (kind == SYNC_KIND_SYNC)
			peers_sync_one_done(p->ps, 0, 0, now);
		return;
	}
	c = xcalloc(1, sizeof *c);
	c->p = p;
	c->kind = kind;
	c->java = java;
	if (kind == SYNC_KIND_DIGEST) {
		what = "heureka/digest";
		max = PEER_DIGEST_BODY_MAX;
	} else if (java) {
		what = "apps/";
		max = PEER_CTL_BODY_MAX;
	} else {
		if (query == NULL) {
			/* A new pull: its first page. */
			p->pull_pages = 0;
			p->pull_adopted = 0;
			if (kind == SYNC_KIND_PULL &&
			    p->pull_buckets != SYNC_BUCKETS_ALL)
				xasprintf(&first, "after=&buckets=%016llx",
				    (unsigned long long)p->pull_buckets);
			else
				first = xstrdup("after=");
			query = first;
		}
		c->query = xstrdup(query);
		what = "heureka/apps?";
		max = PEER_PAGE_BODY_MAX;
	}
	req = evhttp_request_new(peer_ctl_done_cb, c);
	evhttp_request_set_error_cb(req, peer_ctl_error_cb);
	peer_headers(p, req);
	xasprintf(&uri, "%s%s%s", p->u.path, what,
	    c->query != NULL ? c->query : "");
	free(first);
	evhttp_connection_set_max_body_size(p->ctl_conn, max);
	p->ctl = c;
	if (evhttp_make_request(p->ctl_conn, req, EVHTTP_REQ_GET, uri) != 0) {
		p->ctl = NULL;
		evhttp_request_free(req);
		free(c->query);
		free(c);
		if (kind == SYNC_KIND_SYNC)
			peers_sync_one_done(p->ps, 0, 0, now);
	} else
		peer_conn_nodelay(p->ctl_conn);
	free(uri);
}

/* One attempt of the start-up sync: ask every peer at once. */
static void
peers_sync_round(struct peers *ps, struct hk_time now)
{
	size_t	i;

	sync_round_begin(&ps->sync, ps->n);
	for (i = 0; i < ps->n && !gate_is_ready(ps->gate); i++)
		peer_ctl_get(ps->v[i], SYNC_KIND_SYNC, 0, NULL, now);
}

/* Retry timer of the start-up sync. */
static void
peers_sync_cb(evutil_socket_t fd, short what, void *arg)
{
	struct peers	*ps = arg;

	(void)fd;
	(void)what;
	if (!gate_is_ready(ps->gate))
		peers_sync_round(ps, clock_now());
}

/* Anti-entropy timer: ask every idle peer for its digest. */
static void
peers_ae_cb(evutil_socket_t fd, short what, void *arg)
{
	struct peers	*ps = arg;
	struct peer	*p;
	struct hk_time	 now = clock_now();
	size_t		 i;

	(void)fd;
	(void)what;
	if (!ps->sync.done)
		return;
	for (i = 0; i < ps->n; i++) {
		p = ps->v[i];
		if (!p->no_ae && p->ctl == NULL)
			peer_ctl_get(p, SYNC_KIND_DIGEST, 0, NULL, now);
	}
}

/* Arm the digest refresh timer `ms` from now. */
static void
peers_dg_arm(struct event *ev, int64_t ms)
{
	struct timeval	tv;

	tv = clock_ms_tv(ms);
	evtimer_add(ev, &tv);
}

/*
 * Digest refresh timer: keep the per-application digest cache current a
 * budget at a time, soon again while it is behind (the first computation
 * at a million instances), else once a second, so that a digest round
 * finds it current and never walks the registry in one turn.
 */
static void
peers_dg_cb(evutil_socket_t fd, short what, void *arg)
{
	struct peers	*ps = arg;

	(void)fd;
	(void)what;
	if (!digest_refresh(ps->digest, ps->reg, clock_now().mono_ms,
	    DIGEST_REFRESH_BUDGET))
		peers_dg_arm(ps->dg_ev, 10);
	else if (ps->n > 0)
		peers_dg_arm(ps->dg_ev, 1000);
	/*
	 * A node with no peers of its own stops here: nobody compares its
	 * digest unless someone asks for it, and asking re-arms the timer
	 * (peers_digest_current), so an idle standalone node does no work.
	 */
}

/* Make the sync's and anti-entropy's timers (from peers_new). */
void
peers_sync_init(struct peers *ps)
{
	ps->ae_ev = event_new(ps->base, -1, EV_PERSIST, peers_ae_cb, ps);
	ps->sync_ev = evtimer_new(ps->base, peers_sync_cb, ps);
	ps->dg_ev = evtimer_new(ps->base, peers_dg_cb, ps);
	ps->digest = digest_new();
}

/* Free them (from peers_free). */
void
peers_sync_clear(struct peers *ps)
{
	if (ps->ae_ev != NULL)
		event_free(ps->ae_ev);
	if (ps->sync_ev != NULL)
		event_free(ps->sync_ev);
	if (ps->dg_ev != NULL)
		event_free(ps->dg_ev);
	ps->ae_ev = ps->sync_ev = ps->dg_ev = NULL;
	digest_free(ps->digest);
	ps->digest = NULL;
}

/* Start-up sync, then anti-entropy. */
void
peers_start(struct peers *ps, struct hk_time now)
{
	struct timeval	tv;
	int64_t		ms = ps->conf->anti_entropy_interval_ms;

	if (ps->started)
		return;
	ps->started = 1;
	ps->sync_started_ms = now.mono_ms;
	if (ms > 0) {
		tv = clock_ms_tv(ms);
		event_add(ps->ae_ev, &tv);
		peers_dg_arm(ps->dg_ev, 0);
	}
	if (ps->n == 0) {
		/* A one-node cluster has nobody to wait for. */
		ps->sync.done = 1;
		peers_set_ready(ps, "no peers", now);
		return;
	}
	peers_sync_round(ps, now);
}

/* The start-up sync's result so far. */
void
peers_sync_result(const struct peers *ps, int *count, int64_t *ms)
{
	*count = ps->sync.count;
	*ms = ps->sync_ms;
}

/* One peer's paged pulls so far. */
void
peers_sync_stats(const struct peers *ps, size_t i,
    struct sync_peer_stats *st)
{
	const struct peer	*p = ps->v[i];

	st->sync_pages = p->sync_pages;
	st->ae_pages = p->ae_pages;
	st->ae_apps = p->ae_apps;
	st->ae_instances = p->ae_instances;
	st->ae_buckets = p->ae_buckets;
}

/* The digests GET heureka/digest answers (sync.h). */
int
peers_digest_current(const struct peers *ps, int64_t mono, char hex[65],
    char *buckets, size_t *count)
{
	if (!digest_refresh(ps->digest, ps->reg, mono,
	    DIGEST_REFRESH_BUDGET)) {
		if (!evtimer_pending(ps->dg_ev, NULL))
			peers_dg_arm(ps->dg_ev, 0);
		return (0);
	}
	digest_hex(ps->digest, hex, buckets, count);
	return (1);
}
