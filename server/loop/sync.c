/*
 * sync.c: start-up sync and anti-entropy on the server's event loop
 * (sync.h); every decision is taken by server/core/syncrule.c, this file
 * makes the requests (on the peers' control connections, peers.h) and
 * acts on the answers; a cancel it finds goes out through replicate.h.
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
#include "peerq.h"
#include "peers.h"
#include "registry.h"
#include "replicate.h"
#include "sync.h"
#include "syncpage.h"
#include "syncrule.h"
#include "xmalloc.h"

/* One sync or anti-entropy request in flight. */
struct sync_ctl {
	struct sync_peer	*sp;
	enum sync_kind		 kind;
	int			 java;		/* fell back to GET apps/ */
	int			 timed_out;
	char			*query;		/* a page's query, or NULL */
};

/* The sync's state of one peer (its slot). */
struct sync_peer {
	struct sync		*s;
	struct peer		*p;
	struct sync_ctl		*ctl;
	int			 no_ae;		/* peer lacks the extension */
	int			 ae_mismatch;	/* digest rounds that differed */
	uint64_t		 pull_buckets;	/* of the pull under way */
	unsigned		 pull_pages;	/* pages of it so far */
	size_t			 pull_adopted;	/* instances they gave */
	uint64_t		 ae_rounds;
	uint64_t		 ae_pulls;
	uint64_t		 ae_adopted;
	uint64_t		 ae_cancels;
	uint64_t		 ae_pages;	/* pages pulled */
	uint64_t		 ae_apps;	/* applications they held */
	uint64_t		 ae_instances;
	uint64_t		 ae_buckets;	/* buckets asked for */
	uint64_t		 sync_pages;	/* start-up sync pages */
};

struct sync {
	struct event_base	*base;		/* sync_deps, borrowed */
	const struct config	*conf;
	struct registry		*reg;
	struct gate		*gate;
	struct peers		*peers;
	struct replicate	*repl;
	int			 slot;
	struct event		*ae_ev;
	struct event		*sync_ev;
	struct event		*dg_ev;		/* digest refresh */
	struct event		*join_ev;	/* a peer joined: its digest */
	struct digest		*digest;
	int			 started;
	int			 waiting;	/* for the peer names */
	struct sync_state	 state;
	int64_t			 started_ms;
	int64_t			 sync_ms;	/* how long the sync took */
	struct log_ratelim	 rl;
};

static void	sync_dg_arm(struct event *, int64_t);
static void	sync_begin(struct sync *, struct hk_time);
static void	sync_ctl_get(struct sync_peer *, enum sync_kind, int,
		    const char *, struct hk_time);

/* The sync's state of p. */
static struct sync_peer *
sync_of(const struct sync *s, const struct peer *p)
{
	return (p->slot[s->slot]);
}

/* Tell the gate reads may be served. */
static void
sync_set_ready(struct sync *s, const char *why, struct hk_time now)
{
	if (gate_is_ready(s->gate))
		return;
	s->sync_ms = now.mono_ms - s->started_ms;
	log_info("registry ready (%s, %d instance(s) copied, %lld ms)", why,
	    s->state.count, (long long)s->sync_ms);
	gate_set_ready(s->gate, s->state.count, now);
}

/* One peer's part of a start-up sync round finished (syncrule.c). */
static void
sync_one_done(struct sync *s, int answered, int peer_ready,
    struct hk_time now)
{
	struct sync_next	nx;
	struct timeval		tv;

	if (gate_is_ready(s->gate))
		return;
	nx = sync_peer_done(&s->state, answered, peer_ready,
	    s->conf->registry_sync_retries,
	    s->conf->registry_sync_retry_wait_ms);
	switch (nx.step) {
	case SYNC_WAIT:
		return;
	case SYNC_READY:
		sync_set_ready(s, nx.why, now);
		return;
	case SYNC_RETRY:
		break;
	}
	if (nx.gave_up)
		log_warnx("start-up sync: no peer answered; reads refused "
		    "until one does or waitTimeInMsWhenSyncEmpty has passed");
	tv = clock_ms_tv(nx.wait_ms);
	evtimer_add(s->sync_ev, &tv);
}

/* A pull's peer and time, for sync_cancel_found. */
struct sync_pull {
	struct sync_peer	*sp;
	int64_t			 mono;
};

/* Anti-entropy found a copy we cancelled: push the peer a Cancel. */
static void
sync_cancel_found(const char *app, const char *id, int64_t cancel_ts,
    void *arg)
{
	struct sync_pull	*pl = arg;
	struct sync_peer	*sp = pl->sp;

	sp->ae_cancels++;
	replicate_push(sp->s->repl, sp->p, peer_task_cancel(app, id,
	    cancel_ts, pl->mono, sp->s->conf->max_time_for_replication),
	    pl->mono);
}

/* Record a control-request failure (called before the callback). */
static void
sync_ctl_error_cb(enum evhttp_request_error err, void *arg)
{
	struct sync_ctl	*c = arg;

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
sync_ctl_digest(struct sync_peer *sp, const struct buf *body,
    struct hk_time now)
{
	struct sync	*s = sp->s;
	char		 mine[65], theirs[65];
	char		 mine_b[DIGEST_BUCKETS_HEX + 1];
	char		 theirs_b[DIGEST_BUCKETS_HEX + 1];
	size_t		 n;

	sp->ae_rounds++;
	if (peer_parse_digest_buckets(body->data, theirs, theirs_b) != 0) {
		log_warnx_rl(&s->rl, "peer %s: bad digest", sp->p->u.display);
		return;
	}
	/* Ours, from the cache; still being computed: next round. */
	if (!digest_refresh(s->digest, s->reg, now.mono_ms,
	    DIGEST_REFRESH_BUDGET)) {
		if (!evtimer_pending(s->dg_ev, NULL))
			sync_dg_arm(s->dg_ev, 0);
		return;
	}
	digest_hex(s->digest, mine, mine_b, &n);
	switch (sync_digest_step(mine, theirs, gate_is_ready(s->gate),
	    replicate_urgent(s->repl, sp->p),
	    replicate_inflight(s->repl, sp->p), &sp->ae_mismatch)) {
	case SYNC_DIGEST_EQUAL:
		sync_set_ready(s, "in sync with a peer", now);
		break;
	case SYNC_DIGEST_PULL:
		/* Only the buckets that differ (all, from an older peer). */
		sp->pull_buckets = digest_differing(mine_b, theirs_b);
		if (sp->pull_buckets == 0)
			sp->pull_buckets = SYNC_BUCKETS_ALL;
		sp->ae_pulls++;
		sp->ae_buckets += sync_bucket_count(sp->pull_buckets);
		sync_ctl_get(sp, SYNC_KIND_PULL, 0, NULL, now);
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
sync_ctl_registry(struct sync_peer *sp, struct evhttp_request *req,
    enum sync_kind kind, int java, const char *query, const struct buf *body,
    struct hk_time now)
{
	struct sync		*s = sp->s;
	struct evkeyvalq	*ih = evhttp_request_get_input_headers(req);
	struct applications	*apps;
	struct sync_pull	 pl = { sp, now.mono_ms };
	const char		*rh, *next;
	char			*cause = NULL;
	int			 peer_ready;
	size_t			 n, i, ninst = 0, napps;
	enum sync_page_step	 step;

	apps = json_decode_applications(body->data, body->len, now.wall_ms,
	    &cause);
	if (apps == NULL) {
		log_warnx_rl(&s->rl, "peer %s: bad registry: %s",
		    sp->p->u.display, cause);
		free(cause);
		if (kind == SYNC_KIND_SYNC)
			sync_one_done(s, 0, 0, now);
		return;
	}
	napps = apps->n;
	for (i = 0; i < napps; i++)
		ninst += apps->apps[i]->n;
	n = sync_reconcile(s->reg, apps, now, java,
	    kind == SYNC_KIND_PULL ? sync_cancel_found : NULL, &pl);
	applications_free(apps);
	sp->pull_adopted += n;
	if (kind == SYNC_KIND_PULL) {
		sp->ae_pages++;
		sp->ae_apps += napps;
		sp->ae_instances += ninst;
		sp->ae_adopted += n;
	} else {
		sp->sync_pages++;
		s->state.count += (int)n;
	}
	next = evhttp_find_header(ih, "X-Heureka-Next");
	step = java ? SYNC_PAGE_LAST : sync_page_step(evhttp_find_header(ih,
	    "X-Heureka-Page"), next, query, sp->pull_pages);
	sp->pull_pages++;
	if (step == SYNC_PAGE_MORE) {
		sync_ctl_get(sp, kind, 0, next, now);
		return;
	}
	if (step == SYNC_PAGE_BAD) {
		log_warnx_rl(&s->rl, "peer %s: bad page of its registry "
		    "(X-Heureka-Page/Next); pull abandoned", sp->p->u.display);
		if (kind == SYNC_KIND_SYNC)
			sync_one_done(s, 0, 0, now);
		return;
	}
	if (kind == SYNC_KIND_PULL) {
		if (sp->pull_adopted > 0)
			log_info("anti-entropy: adopted %zu instance(s) from %s "
			    "(%u page(s))", sp->pull_adopted, sp->p->u.display,
			    sp->pull_pages);
		sync_set_ready(s, "anti-entropy pull", now);
		return;
	}
	rh = evhttp_find_header(ih, "X-Heureka-Ready");
	peer_ready = sync_peer_ready(java, rh);
	log_info("start-up sync: %zu instance(s) from %s in %u page(s)%s",
	    sp->pull_adopted, sp->p->u.display, sp->pull_pages,
	    peer_ready ? "" : " (not ready)");
	sync_one_done(s, 1, peer_ready, now);
}

/* A sync or anti-entropy GET came back. */
static void
sync_ctl_done_cb(struct evhttp_request *req, void *arg)
{
	struct sync_ctl		*c = arg;
	struct sync_peer	*sp = c->sp;
	struct sync		*s = sp->s;
	struct peer		*p = sp->p;
	struct buf		 body;
	struct hk_time		 now = clock_now();
	const char		*rh = NULL;
	enum sync_kind		 kind = c->kind;
	char			*query = c->query;
	int			 code = 0, java = c->java, credentials;
	size_t			 max;

	sp->ctl = NULL;
	free(c);
	if (req != NULL) {
		code = evhttp_request_get_response_code(req);
		rh = evhttp_find_header(evhttp_request_get_input_headers(req),
		    "X-Heureka-Ready");
		/* For the audit's origin. */
		if (rh != NULL || (kind == SYNC_KIND_DIGEST && code == 200))
			p->heureka = 1;
	}
	/* For the doctor: its answer, or -1 for none. */
	p->last_status = code != 0 ? code : -1;
	if (code != 0)
		peer_note_date(p, req, now);
	max = kind == SYNC_KIND_DIGEST ? PEER_DIGEST_BODY_MAX :
	    java ? PEER_CTL_BODY_MAX : PEER_PAGE_BODY_MAX;
	buf_init(&body, max);
	switch (sync_answer(kind, code, java, rh, &credentials)) {
	case SYNC_ANS_JAVA:
		/* Not a heureka peer: the standard endpoint. */
		sync_ctl_get(sp, kind, 1, NULL, now);
		goto out;
	case SYNC_ANS_BUSY:
		/* Its digest is still being computed: ask next round. */
		p->reachable = 1;
		goto out;
	case SYNC_ANS_NO_AE:
		sp->no_ae = 1;
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
		sync_one_done(s, 1, 0, now);
		goto out;
	case SYNC_ANS_OK:
	case SYNC_ANS_FAILED:
		break;
	}
	if (credentials)
		log_warnx_rl(&s->rl, "peer %s answered %d: check the "
		    "credentials in its URL (heureka.security.peer.*) or the "
		    "peer certificate", p->u.display, code);
	if (code != 200 || peer_body(req, &body, max) != 0) {
		if (code != 403)
			p->reachable = 0;
		if (kind == SYNC_KIND_SYNC)
			sync_one_done(s, 0, 0, now);
		goto out;
	}
	p->reachable = 1;
	p->last_success_ms = now.wall_ms;
	/*
	 * The peer answers again: end a replication pause now rather than
	 * up to 30 s later. This probe runs once per anti-entropy interval,
	 * so it cannot become a retry storm.
	 */
	replicate_answered(s->repl, p, now.mono_ms);
	if (kind == SYNC_KIND_DIGEST)
		sync_ctl_digest(sp, &body, now);
	else
		sync_ctl_registry(sp, req, kind, java, query, &body, now);
out:
	free(query);
	buf_free(&body);
}

/*
 * Issue a sync/anti-entropy GET to sp's peer (one at a time per peer). A
 * pull's first page has query NULL; the next ones pass the
 * X-Heureka-Next the page before said.
 */
static void
sync_ctl_get(struct sync_peer *sp, enum sync_kind kind, int java,
    const char *query, struct hk_time now)
{
	struct evhttp_request	*req;
	struct sync_ctl		*c;
	char			*uri, *first = NULL;
	const char		*what;
	size_t			 max;

	if (sp->ctl != NULL || sp->p->conn[PEER_CONN_CTL] == NULL) {
		if (kind == SYNC_KIND_SYNC)
			sync_one_done(sp->s, 0, 0, now);
		return;
	}
	c = xcalloc(1, sizeof *c);
	c->sp = sp;
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
			sp->pull_pages = 0;
			sp->pull_adopted = 0;
			if (kind == SYNC_KIND_PULL &&
			    sp->pull_buckets != SYNC_BUCKETS_ALL)
				xasprintf(&first, "after=&buckets=%016llx",
				    (unsigned long long)sp->pull_buckets);
			else
				first = xstrdup("after=");
			query = first;
		}
		c->query = xstrdup(query);
		what = "heureka/apps?";
		max = PEER_PAGE_BODY_MAX;
	}
	req = evhttp_request_new(sync_ctl_done_cb, c);
	evhttp_request_set_error_cb(req, sync_ctl_error_cb);
	peer_headers(sp->p, req);
	xasprintf(&uri, "%s%s%s", sp->p->u.path, what,
	    c->query != NULL ? c->query : "");
	free(first);
	/* Not in flight yet: an idle peer may move to new TLS first. */
	if (peer_request(sp->p, PEER_CONN_CTL, req, EVHTTP_REQ_GET, uri,
	    max) != 0) {
		free(c->query);
		free(c);
		if (kind == SYNC_KIND_SYNC)
			sync_one_done(sp->s, 0, 0, now);
	} else
		sp->ctl = c;
	free(uri);
}

/* One attempt of the start-up sync: ask every peer at once. */
static void
sync_round(struct sync *s, struct hk_time now)
{
	size_t	i, n = peers_count(s->peers);

	sync_round_begin(&s->state, n);
	for (i = 0; i < n && !gate_is_ready(s->gate); i++)
		sync_ctl_get(sync_of(s, peers_get(s->peers, i)),
		    SYNC_KIND_SYNC, 0, NULL, now);
}

/* Retry timer of the start-up sync. */
static void
sync_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sync	*s = arg;

	(void)fd;
	(void)what;
	if (!gate_is_ready(s->gate))
		sync_round(s, clock_now());
}

/* Ask every idle peer for its digest. */
static void
sync_ae_round(struct sync *s, struct hk_time now)
{
	struct sync_peer	*sp;
	size_t			 i, n = peers_count(s->peers);

	for (i = 0; i < n; i++) {
		sp = sync_of(s, peers_get(s->peers, i));
		if (!sp->no_ae && sp->ctl == NULL && sp->ae_rounds == 0 &&
		    sp->ae_pulls == 0)
			sync_ctl_get(sp, SYNC_KIND_DIGEST, 0, NULL, now);
	}
}

/* A peer joined after the start-up sync: ask those never asked. */
static void
sync_join_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	sync_ae_round(arg, clock_now());
}

/* Anti-entropy timer: ask every idle peer for its digest. */
static void
sync_ae_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sync		*s = arg;
	struct sync_peer	*sp;
	struct hk_time		 now = clock_now();
	size_t			 i, n = peers_count(s->peers);

	(void)fd;
	(void)what;
	if (!s->state.done)
		return;
	for (i = 0; i < n; i++) {
		sp = sync_of(s, peers_get(s->peers, i));
		if (!sp->no_ae && sp->ctl == NULL)
			sync_ctl_get(sp, SYNC_KIND_DIGEST, 0, NULL, now);
	}
}

/* Arm the digest refresh timer `ms` from now. */
static void
sync_dg_arm(struct event *ev, int64_t ms)
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
sync_dg_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sync	*s = arg;

	(void)fd;
	(void)what;
	if (!digest_refresh(s->digest, s->reg, clock_now().mono_ms,
	    DIGEST_REFRESH_BUDGET))
		sync_dg_arm(s->dg_ev, 10);
	else if (peers_count(s->peers) > 0)
		sync_dg_arm(s->dg_ev, 1000);
	/*
	 * A node with no peers of its own stops here: nobody compares its
	 * digest unless someone asks for it, and asking re-arms the timer
	 * (sync_digest_current), so an idle standalone node does no work.
	 */
}

/* ------------------------------------------------------------------ */
/* The peer list's observer.                                            */

/*
 * A peer joined. Once the start-up sync is done, a peer that joins
 * later (a new address of a peer name) takes part in anti-entropy at
 * once: its digest is asked for on the next loop turn, not a whole
 * interval later.
 */
static void *
sync_peer_added(struct peer *p, void *arg)
{
	struct sync		*s = arg;
	struct sync_peer	*sp;
	static const struct timeval zero = { 0, 0 };

	sp = xcalloc(1, sizeof *sp);
	sp->s = s;
	sp->p = p;
	if (s->state.done && s->conf->anti_entropy_interval_ms > 0)
		evtimer_add(s->join_ev, &zero);
	return (sp);
}

/*
 * p leaves the list; its request in flight went with its connection. A
 * start-up sync counting on its answer counts it as not answering.
 */
static void
sync_peer_removed(struct peer *p, void *arg)
{
	struct sync		*s = arg;
	struct sync_peer	*sp = sync_of(s, p);
	int			 was_sync;

	if (sp == NULL)
		return;
	was_sync = sp->ctl != NULL && sp->ctl->kind == SYNC_KIND_SYNC;
	if (sp->ctl != NULL)
		free(sp->ctl->query);
	free(sp->ctl);
	free(sp);
	if (was_sync && !gate_is_stopping(s->gate))
		sync_one_done(s, 0, 0, clock_now());
}

/* Is a sync request in flight to p (a TLS change waits)? */
static int
sync_peer_busy(const struct peer *p, void *arg)
{
	return (sync_of(arg, p)->ctl != NULL);
}

/* The sync's part of peer_info. */
static void
sync_peer_info(const struct peer *p, struct peer_info *pi, void *arg)
{
	const struct sync_peer	*sp = sync_of(arg, p);

	pi->ae_rounds = sp->ae_rounds;
	pi->ae_pulls = sp->ae_pulls;
	pi->ae_adopted = sp->ae_adopted;
	pi->ae_cancels = sp->ae_cancels;
	pi->ae_supported = !sp->no_ae;
}

/* Every configured name answered once: a start-up sync waiting begins. */
static void
sync_peers_settled(void *arg)
{
	struct sync	*s = arg;

	if (s->started && s->waiting) {
		s->waiting = 0;
		sync_begin(s, clock_now());
	}
}

static const struct peer_observer sync_observer = {
	sync_peer_added, sync_peer_removed, sync_peer_busy, sync_peer_info,
	sync_peers_settled
};

/* The sync's timers and the digest cache; observes the peers. */
struct sync *
sync_new(const struct sync_deps *d)
{
	struct sync		*s;
	struct log_ratelim	 rl = LOG_RATELIM_INIT(10000, 5);

	s = xcalloc(1, sizeof *s);
	s->base = d->base;
	s->conf = d->conf;
	s->reg = d->reg;
	s->gate = d->gate;
	s->peers = d->peers;
	s->repl = d->repl;
	s->rl = rl;
	s->ae_ev = event_new(s->base, -1, EV_PERSIST, sync_ae_cb, s);
	s->sync_ev = evtimer_new(s->base, sync_retry_cb, s);
	s->dg_ev = evtimer_new(s->base, sync_dg_cb, s);
	s->join_ev = evtimer_new(s->base, sync_join_cb, s);
	s->digest = digest_new();
	if ((s->slot = peers_observe(d->peers, &sync_observer, s)) < 0)
		fatalx("%s: no observer slot left", __func__);
	return (s);
}

/* Free it, after peers_free (which dropped every peer's state). */
void
sync_free(struct sync *s)
{
	if (s == NULL)
		return;
	if (s->ae_ev != NULL)
		event_free(s->ae_ev);
	if (s->sync_ev != NULL)
		event_free(s->sync_ev);
	if (s->dg_ev != NULL)
		event_free(s->dg_ev);
	if (s->join_ev != NULL)
		event_free(s->join_ev);
	digest_free(s->digest);
	free(s);
}

/* Start-up sync, then anti-entropy. */
void
sync_start(struct sync *s, struct hk_time now)
{
	struct timeval	tv;
	int64_t		ms = s->conf->anti_entropy_interval_ms;

	if (s->started)
		return;
	s->started = 1;
	s->started_ms = now.mono_ms;
	if (ms > 0) {
		tv = clock_ms_tv(ms);
		event_add(s->ae_ev, &tv);
		sync_dg_arm(s->dg_ev, 0);
	}
	if (!peers_settled(s->peers)) {
		/* Peer names still resolving: begin when they have. */
		s->waiting = 1;
		return;
	}
	sync_begin(s, now);
}

/* The start-up sync proper, once the peer list is known. */
static void
sync_begin(struct sync *s, struct hk_time now)
{
	if (peers_count(s->peers) == 0) {
		/* A one-node cluster has nobody to wait for. */
		s->state.done = 1;
		sync_set_ready(s, "no peers", now);
		return;
	}
	sync_round(s, now);
}

/* The start-up sync's result so far. */
void
sync_result(const struct sync *s, int *count, int64_t *ms)
{
	*count = s->state.count;
	*ms = s->sync_ms;
}

/* Peer i's paged pulls so far. */
void
sync_stats(const struct sync *s, size_t i, struct sync_peer_stats *st)
{
	const struct sync_peer	*sp;

	memset(st, 0, sizeof *st);
	if (i >= peers_count(s->peers))
		return;
	sp = sync_of(s, peers_get(s->peers, i));
	st->sync_pages = sp->sync_pages;
	st->ae_pages = sp->ae_pages;
	st->ae_apps = sp->ae_apps;
	st->ae_instances = sp->ae_instances;
	st->ae_buckets = sp->ae_buckets;
}

/* The digests GET heureka/digest answers (sync.h). */
int
sync_digest_current(const struct sync *s, int64_t mono, char hex[65],
    char *buckets, size_t *count)
{
	if (!digest_refresh(s->digest, s->reg, mono,
	    DIGEST_REFRESH_BUDGET)) {
		if (!evtimer_pending(s->dg_ev, NULL))
			sync_dg_arm(s->dg_ev, 0);
		return (0);
	}
	digest_hex(s->digest, hex, buckets, count);
	return (1);
}
