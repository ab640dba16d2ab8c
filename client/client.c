/*
 * client.c: the protocol logic of libheureka, what the Java DiscoveryClient
 * does (spec §7): register, heartbeat with 404 -> re-register, the dirty
 * flag with its timestamp, the InstanceInfoReplicator with its on-demand,
 * rate-limited path, full and delta registry fetches merged and reconciled
 * by hash code, each request walking the service URLs with failover, and
 * the lookups over the local copy. It talks to the world only through
 * struct hk_transport and struct hk_sched (internal.h), so the unit test
 * drives it with a fake server and a hand-moved clock; transport.c provides
 * the real ones over libevent. When the server offers the watch stream
 * (docs/api.md, "Watch and leader") the client follows it after its first full
 * fetch and applies each event to its copy at once; the polls stay as the
 * safety net.
 *
 * The pure pieces live beside it, each in its file: the token bucket
 * (ratelim.c), the supervisor back-off (backoff.c), the URL list and its
 * quarantine (endpoints.c), delta merging and diffing (merge.c), the
 * instance description from config (selfinfo.c), the event-stream reader
 * (sse.c) and the public instance copies (export.c).
 *
 * Every entry point from outside (public API, timer and transport
 * callbacks) takes the client's recursive mutex, which is uncontended on the
 * caller's loop and makes a threaded client's lookups safe.
 */
#include <sys/queue.h>

#include <stddef.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/thread.h>

#include "buf.h"
#include "bug.h"
#include "clock.h"
#include "config.h"
#include "defaults.h"
#include "hash.h"
#include "httputil.h"
#include "instance.h"
#include "json.h"
#include "log.h"
#include "tls.h"
#include "url.h"
#include "xmalloc.h"

#include "heureka.h"
#include "internal.h"

/* One logical request walking the endpoint list (RetryableEurekaHttpClient). */
struct hk_op {
	struct heureka_client	*c;
	enum hk_req_kind	 kind;
	char			*method;
	char			*path;
	char			*body;
	int			 cand[HK_MAX_URLS];
	size_t			 ncand;
	int			 have_cand;
	size_t			 idx;
	int			 attempt;
	int			 cur;
	void			*handle;
	hk_done_cb		 cb;
	void			*arg;
	TAILQ_ENTRY(hk_op)	 entry;
};
TAILQ_HEAD(hk_ops, hk_op);

/* Round-robin position of one app, in c->rr by its upper-cased name. */
struct hk_rr {
	struct htab_node	 node;
	char			*app;
	unsigned		 next;
};

#define CONTAINER_OF(p, type, member) \
	((type *)(void *)((char *)(p) - offsetof(type, member)))

struct heureka_client {
	pthread_mutex_t		 mu;
	int			 attached;
	int			 started;
	int			 stopping;
	struct hk_transport	 tr;
	struct hk_sched		 sc;
	struct hk_endpoints	 ep;
	struct hk_ops		 ops;

	/* Settings (from struct config). */
	int			 do_register;
	int			 do_fetch;
	int			 unregister_on_shutdown;
	int			 on_demand;
	int			 filter_up;
	int			 disable_delta;
	int64_t			 renew_ms;
	int64_t			 fetch_ms;
	int64_t			 repl_initial_ms;
	int64_t			 repl_ms;
	int			 connect_timeout_s;
	int			 read_timeout_s;
	SSL_CTX			*tls_ctx;	/* https:// URLs, or NULL */

	/* Our instance and its dirty flag (ApplicationInfoManager). */
	struct instance		*self;
	char			*self_path;	/* apps/APP/ID, encoded */
	int			 dirty;
	int			 registered;
	struct hk_op		*reg_op;
	int64_t			 reg_dirty_ts;
	int			 reg_again;
	struct hk_ratelim	 rl;

	/* Tasks. */
	void			*t_heartbeat;
	void			*t_hb_timeout;
	void			*t_refresh;
	void			*t_rf_timeout;
	void			*t_repl;
	void			*t_kick;
	void			*t_final;
	void			*t_stop;
	struct hk_backoff	 hb_bo;
	struct hk_backoff	 rf_bo;
	struct hk_op		*hb_op;
	struct hk_op		*rf_op;
	struct hk_op		*cancel_op;

	/* The local copy of the registry (unfiltered; lookups filter). */
	struct applications	*apps;
	int			 fetched;
	struct htab		 rr;		/* struct hk_rr */
	uint64_t		 rnd;
	heureka_change_cb	 change_cb;
	void			*change_arg;
	heureka_leader_cb	 leader_cb;
	void			*leader_arg;
	char			**leaders;	/* "APP\0id" per app last told */
	size_t			 nleaders;

	/* The watch stream (SSE): its handle, parse state and retry. */
	void			*w_handle;
	int			 w_none;	/* server has no watch */
	int64_t			 w_none_at;	/* when it said so */
	int			 w_wait;	/* reconnect timer armed */
	int			 w_up;		/* an event came since open */
	char			*w_last_id;	/* Last-Event-ID to resume */
	struct hk_sse		 w_sse;		/* the stream's reader */
	void			*t_watch;
	struct hk_backoff	 w_bo;

	/* Threading and shutdown. */
	struct event_base	*own_base;
	pthread_t		 thread;
	int			 threaded;
	heureka_done_cb		 stop_cb;
	void			*stop_arg;
};

#define LOCK(c)		pthread_mutex_lock(&(c)->mu)
#define UNLOCK(c)	pthread_mutex_unlock(&(c)->mu)

static int	 op_send(struct hk_op *);
static void	 op_cancel(struct heureka_client *, struct hk_op *);
static struct hk_op *op_start(struct heureka_client *, enum hk_req_kind,
		     const char *, const char *, const char *, hk_done_cb,
		     void *);
static void	 register_now(struct heureka_client *);
static void	 fetch_start(struct heureka_client *, int);
static void	 final_step(struct heureka_client *);
static void	 client_free(struct heureka_client *);
static int	 client_tls(struct heureka_client *, const struct config *,
		     char **);
static void	 watch_open(struct heureka_client *);

#define HK_WATCH_REDETECT_MS	(5 * 60 * 1000)	/* no watch: ask again */

/* htab_sweep callback: free one round-robin entry. */
static int
hk_rr_free_cb(struct htab_node *n, void *arg)
{
	struct hk_rr	*rr = CONTAINER_OF(n, struct hk_rr, node);

	(void)arg;
	free(rr->app);
	free(rr);
	return (1);
}

/* Free an operation that is no longer in the list. */
static void
op_free(struct hk_op *op)
{
	free(op->method);
	free(op->path);
	free(op->body);
	free(op);
}

/* Hand the final answer of an operation to its owner. */
static void
op_finish(struct hk_op *op, int status, const char *body, size_t len)
{
	struct heureka_client	*c = op->c;

	TAILQ_REMOVE(&c->ops, op, entry);
	if (op->cb != NULL)
		op->cb(status, body != NULL ? body : "", len, op->arg);
	op_free(op);
}

/* The transport answered one attempt. */
static void
op_done_cb(int status, const char *body, size_t len, void *arg)
{
	struct hk_op		*op = arg;
	struct heureka_client	*c = op->c;

	LOCK(c);
	op->handle = NULL;
	if (hk_req_accepted(op->kind, status)) {
		c->ep.pinned = op->cur;
		op_finish(op, status, body, len);
	} else {
		char	*shown = http_url_scrub(c->ep.urls[op->cur]);

		log_debug("%s: %s %s%s: %d, trying the next server", __func__,
		    op->method, shown, op->path, status);
		free(shown);
		hk_endpoints_failed(&c->ep, op->cur);
		op->attempt++;
		(void)op_send(op);
	}
	UNLOCK(c);
}

/*
 * Send the next attempt of an operation, or fail it (status 0): 0 while
 * it is pending, -1 when it has finished (and op is freed).
 */
static int
op_send(struct hk_op *op)
{
	struct heureka_client	*c = op->c;

	if (op->attempt >= HK_RETRIES || c->ep.n == 0)
		goto fail;
	if (c->ep.pinned >= 0 && (size_t)c->ep.pinned < c->ep.n)
		op->cur = c->ep.pinned;
	else {
		if (!op->have_cand) {
			op->ncand = hk_endpoints_candidates(&c->ep, op->cand);
			op->have_cand = 1;
		}
		if (op->idx >= op->ncand)
			goto fail;
		op->cur = op->cand[op->idx++];
	}
	op->handle = c->tr.send(c->tr.ctx, c->ep.urls[op->cur], op->method,
	    op->path, op->body, op->body != NULL ? strlen(op->body) : 0,
	    op_done_cb, op);
	if (op->handle != NULL)
		return (0);
	hk_endpoints_failed(&c->ep, op->cur);
	op->attempt++;
	return (op_send(op));
fail:
	op_finish(op, 0, NULL, 0);
	return (-1);
}

/*
 * Start a request on the first acceptable endpoint. NULL when it has
 * finished already (no endpoint took it: its callback has run, and the
 * op is gone), so the caller never keeps a freed op, which a later op
 * could be allocated over (scan-build's use after free).
 */
static struct hk_op *
op_start(struct heureka_client *c, enum hk_req_kind kind, const char *method,
    const char *path, const char *body, hk_done_cb cb, void *arg)
{
	struct hk_op	*op = xcalloc(1, sizeof *op);

	op->c = c;
	op->kind = kind;
	op->method = xstrdup(method);
	op->path = xstrdup(path);
	op->body = body != NULL ? xstrdup(body) : NULL;
	op->cb = cb;
	op->arg = arg;
	op->cur = -1;
	TAILQ_INSERT_TAIL(&c->ops, op, entry);
	if (op_send(op) != 0)
		return (NULL);
	return (op);
}

/* Drop an operation without calling its owner. NULL is fine. */
static void
op_cancel(struct heureka_client *c, struct hk_op *op)
{
	struct hk_op	*o;

	if (op == NULL)
		return;
	TAILQ_FOREACH(o, &c->ops, entry) {
		if (o == op)
			break;
	}
	if (o == NULL)
		return;		/* already finished */
	if (op->handle != NULL)
		c->tr.cancel(c->tr.ctx, op->handle);
	TAILQ_REMOVE(&c->ops, op, entry);
	op_free(op);
}

/* Public-to-the-CLI one-off request. */
void
hk_client_request(struct heureka_client *c, enum hk_req_kind kind,
    const char *method, const char *path, const char *body, hk_done_cb cb,
    void *arg)
{
	LOCK(c);
	op_start(c, kind, method, path, body, cb, arg);
	UNLOCK(c);
}

/* Arm a timer unless we are shutting down. */
static void
arm(struct heureka_client *c, void *t, int64_t ms)
{
	if (c->stopping || t == NULL)
		return;
	c->sc.timer_add(c->sc.ctx, t, ms);
}

/* Disarm a timer. NULL is fine. */
static void
disarm(struct heureka_client *c, void *t)
{
	if (t != NULL)
		c->sc.timer_del(c->sc.ctx, t);
}

/* Mark our instance dirty with a strictly newer timestamp. */
static void
mark_dirty(struct heureka_client *c)
{
	int64_t	now = c->sc.now(c->sc.ctx);

	if (now <= c->self->last_dirty_ts)
		now = c->self->last_dirty_ts + 1;
	c->self->last_dirty_ts = now;
	c->self->last_updated_ts = now;
	c->dirty = 1;
}

/*
 * A registration was answered. Only 204 is success; the dirty flag is
 * cleared only if nobody dirtied the instance again while it was in flight
 * (InstanceInfo.unsetIsDirty(timestamp)).
 */
static void
register_done(int status, const char *body, size_t len, void *arg)
{
	struct heureka_client	*c = arg;

	c->reg_op = NULL;
	if (status == 204) {
		if (!c->registered)
			log_info("heureka: registered %s/%s", c->self->app,
			    instance_id(c->self));
		c->registered = 1;
		if (c->dirty && c->self->last_dirty_ts <= c->reg_dirty_ts)
			c->dirty = 0;
	} else
		log_warnx("heureka: registration of %s/%s failed (%d)",
		    c->self->app, instance_id(c->self), status);
	if (c->reg_again && !c->stopping) {
		c->reg_again = 0;
		if (c->dirty)
			register_now(c);
	}
}

/* POST apps/{APP} with our instance, unless one is already in flight. */
static void
register_now(struct heureka_client *c)
{
	struct buf	b;
	char		path[INSTANCE_MAX_NAME + 16];

	if (c->stopping || !c->do_register)
		return;
	if (c->reg_op != NULL) {
		c->reg_again = 1;
		return;
	}
	buf_init(&b, 0);
	json_encode_instance_root(&b, c->self);
	c->reg_dirty_ts = c->self->last_dirty_ts;
	snprintf(path, sizeof path, "apps/%s", c->self->app);
	c->reg_op = op_start(c, HK_REQ_REGISTER, "POST", path, b.data,
	    register_done, c);
	buf_free(&b);
}

/* InstanceInfoReplicator.run: register if dirty, then every interval. */
static void
replicator_run(struct heureka_client *c)
{
	if (c->dirty)
		register_now(c);
	disarm(c, c->t_repl);
	arm(c, c->t_repl, c->repl_ms);
}

/* Periodic replicator timer. */
static void
repl_cb(void *arg)
{
	struct heureka_client	*c = arg;

	LOCK(c);
	replicator_run(c);
	UNLOCK(c);
}

/* On-demand update: cancel the pending periodic run and run now. */
static void
kick_cb(void *arg)
{
	struct heureka_client	*c = arg;

	LOCK(c);
	if (!c->stopping)
		replicator_run(c);
	UNLOCK(c);
}

/* The heartbeat was answered (or every server failed). */
static void
heartbeat_done(int status, const char *body, size_t len, void *arg)
{
	struct heureka_client	*c = arg;

	c->hb_op = NULL;
	disarm(c, c->t_hb_timeout);
	arm(c, c->t_heartbeat, hk_backoff_done(&c->hb_bo));
	if (status == 404) {
		/* Eureka's "re-register now": unknown or older than ours. */
		log_info("heureka: heartbeat 404 for %s/%s, re-registering",
		    c->self->app, instance_id(c->self));
		mark_dirty(c);
		register_now(c);
	} else if (status != 200)
		log_warnx("heureka: heartbeat of %s/%s failed (%d)",
		    c->self->app, instance_id(c->self), status);
}

/* Heartbeat timer: PUT apps/{APP}/{id}?status=&lastDirtyTimestamp=. */
static void
heartbeat_cb(void *arg)
{
	struct heureka_client	*c = arg;
	char			 path[INSTANCE_MAX_NAME * 4 + 128];

	LOCK(c);
	if (!c->stopping && c->hb_op == NULL) {
		snprintf(path, sizeof path, "%s?status=%s&lastDirtyTimestamp="
		    "%lld", c->self_path, instance_status_name(c->self->status),
		    (long long)c->self->last_dirty_ts);
		arm(c, c->t_hb_timeout, c->hb_bo.base_ms);
		c->hb_op = op_start(c, HK_REQ_HEARTBEAT, "PUT", path, NULL,
		    heartbeat_done, c);
	}
	UNLOCK(c);
}

/* The heartbeat took longer than its interval: back off. */
static void
hb_timeout_cb(void *arg)
{
	struct heureka_client	*c = arg;

	LOCK(c);
	op_cancel(c, c->hb_op);
	c->hb_op = NULL;
	arm(c, c->t_heartbeat, hk_backoff_timeout(&c->hb_bo));
	UNLOCK(c);
}

/* Bridge a model change to the user's callback. */
static void
change_cb(enum action_type at, const struct instance *in, void *arg)
{
	struct heureka_client	*c = arg;
	struct heureka_instance	*hi;
	enum heureka_change	 kind;

	if (c->change_cb == NULL)
		return;
	kind = at == ACTION_ADDED ? HEUREKA_ADDED : at == ACTION_MODIFIED ?
	    HEUREKA_MODIFIED : HEUREKA_DELETED;
	hi = hk_instance_export(in);
	c->change_cb(c, kind, hi, c->change_arg);
	heureka_instance_free(hi);
}

/* The leader of one application of the local copy (the server's rule). */
static struct instance *
app_leader(const struct application *a)
{
	struct instance	*best = NULL;
	size_t		 i;

	for (i = 0; i < a->n; i++) {
		if (a->instances[i]->status == STATUS_UP && (best == NULL ||
		    instance_leader_before(a->instances[i], best)))
			best = a->instances[i];
	}
	return (best);
}

/* The stored "APP\0id" entry of app, or NULL. */
static char **
leader_slot(struct heureka_client *c, const char *app)
{
	size_t	i;

	for (i = 0; i < c->nleaders; i++)
		if (strcasecmp(c->leaders[i], app) == 0)
			return (&c->leaders[i]);
	return (NULL);
}

/*
 * After a fetch: tell the leader callback of every application whose
 * leader differs from the one last told (NULL: it has none any more).
 * O(apps^2) name matches per fetch, only with a callback set.
 */
static void
leaders_check(struct heureka_client *c)
{
	struct application	*a;
	struct instance		*in;
	struct heureka_instance	*hi;
	char			**slot, *e;
	size_t			 i, alen;

	if (c->leader_cb == NULL)
		return;
	for (i = 0; i < c->apps->n; i++) {
		a = c->apps->apps[i];
		in = app_leader(a);
		slot = leader_slot(c, a->name);
		alen = strlen(a->name);
		if (in == NULL ? slot == NULL : slot != NULL &&
		    strcmp(*slot + alen + 1, instance_id(in)) == 0)
			continue;
		if (in == NULL) {
			free(*slot);
			*slot = c->leaders[--c->nleaders];
		} else {
			e = xmalloc(alen + strlen(instance_id(in)) + 2);
			memcpy(e, a->name, alen + 1);
			strcpy(e + alen + 1, instance_id(in));
			if (slot != NULL) {
				free(*slot);
				*slot = e;
			} else {
				c->leaders = xreallocarray(c->leaders,
				    c->nleaders + 1, sizeof *c->leaders);
				c->leaders[c->nleaders++] = e;
			}
		}
		hi = in != NULL ? hk_instance_export(in) : NULL;
		c->leader_cb(c, a->name, hi, c->leader_arg);
		heureka_instance_free(hi);
	}
	/* Applications gone from the copy: no leader. */
	for (i = 0; i < c->nleaders; ) {
		if (applications_find(c->apps, c->leaders[i]) != NULL) {
			i++;
			continue;
		}
		e = c->leaders[i];
		c->leaders[i] = c->leaders[--c->nleaders];
		c->leader_cb(c, e, NULL, c->leader_arg);
		free(e);
	}
}

/* Shuffle each application's instances (§7.6; lookups filter UP). */
static void
shuffle(struct heureka_client *c)
{
	struct application	*a;
	struct instance		*t;
	size_t			 i, j, k;

	for (i = 0; i < c->apps->n; i++) {
		a = c->apps->apps[i];
		for (j = a->n; j > 1; j--) {
			c->rnd ^= c->rnd << 13;
			c->rnd ^= c->rnd >> 7;
			c->rnd ^= c->rnd << 17;
			k = c->rnd % j;
			t = a->instances[j - 1];
			a->instances[j - 1] = a->instances[k];
			a->instances[k] = t;
		}
	}
}

/* A fetch cycle ended: reset the back-off and schedule the next one. */
static void
refresh_finish(struct heureka_client *c)
{
	c->rf_op = NULL;
	disarm(c, c->t_rf_timeout);
	arm(c, c->t_refresh, hk_backoff_done(&c->rf_bo));
}

/* GET apps/ answered: replace the local copy. */
static void
full_done(int status, const char *body, size_t len, void *arg)
{
	struct heureka_client	*c = arg;
	struct applications	*as, *old;
	char			*cause = NULL;

	c->rf_op = NULL;
	if (status != 200) {
		log_warnx("heureka: full registry fetch failed (%d)", status);
		goto out;
	}
	if ((as = json_decode_applications(body, len, c->sc.now(c->sc.ctx),
	    &cause)) == NULL) {
		log_warnx("heureka: bad registry from server: %s", cause);
		free(cause);
		goto out;
	}
	old = c->apps;
	c->apps = as;
	shuffle(c);
	c->fetched = 1;
	hk_diff(old, as, change_cb, c);
	applications_free(old);
	leaders_check(c);
	/*
	 * Detect the watch now, and again at a later full fetch (an empty
	 * copy makes every fetch full: not more than every 5 minutes).
	 */
	if (c->w_handle == NULL && !c->w_wait && (!c->w_none ||
	    c->sc.now(c->sc.ctx) - c->w_none_at >= HK_WATCH_REDETECT_MS))
		watch_open(c);
out:
	refresh_finish(c);
}

/* GET apps/delta answered: merge, then reconcile by hash code. */
static void
delta_done(int status, const char *body, size_t len, void *arg)
{
	struct heureka_client	*c = arg;
	struct applications	*d;
	char			*cause = NULL, *hash;
	int			 mismatch;

	c->rf_op = NULL;
	if (status != 200) {
		log_debug("%s: delta answered %d, full fetch", __func__,
		    status);
		fetch_start(c, 1);
		return;
	}
	if ((d = json_decode_applications(body, len, c->sc.now(c->sc.ctx),
	    &cause)) == NULL) {
		log_warnx("heureka: bad delta from server: %s", cause);
		free(cause);
		fetch_start(c, 1);
		return;
	}
	hk_merge_delta(c->apps, d, change_cb, c);
	c->apps->versions_delta = d->versions_delta;
	leaders_check(c);
	shuffle(c);
	hash = applications_hashcode(c->apps);
	mismatch = d->apps_hashcode != NULL &&
	    strcmp(hash, d->apps_hashcode) != 0;
	if (mismatch)
		log_debug("%s: hash %s, server %s: full fetch", __func__,
		    hash, d->apps_hashcode);
	free(hash);
	applications_free(d);
	if (mismatch && !c->stopping)
		fetch_start(c, 1);
	else
		refresh_finish(c);
}

/* fetchRegistry(forceFull): full when asked, disabled delta or empty copy. */
static void
fetch_start(struct heureka_client *c, int force_full)
{
	if (c->stopping)
		return;
	if (force_full || c->disable_delta || !c->fetched ||
	    c->apps->n == 0 || c->apps->versions_delta == -1)
		c->rf_op = op_start(c, HK_REQ_FULL, "GET", "apps/", NULL,
		    full_done, c);
	else
		c->rf_op = op_start(c, HK_REQ_DELTA, "GET", "apps/delta",
		    NULL, delta_done, c);
}

/* Cache refresh timer. */
static void
refresh_cb(void *arg)
{
	struct heureka_client	*c = arg;

	LOCK(c);
	if (!c->stopping && c->rf_op == NULL) {
		arm(c, c->t_rf_timeout, c->rf_bo.base_ms);
		fetch_start(c, 0);
	}
	UNLOCK(c);
}

/* The fetch took longer than its interval: back off. */
static void
rf_timeout_cb(void *arg)
{
	struct heureka_client	*c = arg;

	LOCK(c);
	op_cancel(c, c->rf_op);
	c->rf_op = NULL;
	arm(c, c->t_refresh, hk_backoff_timeout(&c->rf_bo));
	UNLOCK(c);
}

#define HK_WATCH_BO_MS		500		/* first reconnect delay */
#define HK_WATCH_BO_BOUND	60		/* up to 30 s */

/* A whole frame came: apply it to the local copy; nonzero: read no more. */
static int
watch_event(const char *event, const char *id, const char *data, size_t len,
    void *arg)
{
	struct heureka_client	*c = arg;
	struct instance		*in;
	char			*cause = NULL;
	const char		*ev = event != NULL ? event : "message";
	enum action_type	 at;

	if (c->stopping)
		return (1);
	if (strcmp(ev, "RESET") == 0) {
		/* The server drops us: resume from a clean stack. */
		if (!c->w_wait) {
			c->w_wait = 1;
			arm(c, c->t_watch, 0);
		}
		return (1);
	}
	if (id != NULL) {
		free(c->w_last_id);
		c->w_last_id = xstrdup(id);
	}
	c->w_up = 1;
	hk_backoff_done(&c->w_bo);
	if (strcmp(ev, "ADDED") == 0)
		at = ACTION_ADDED;
	else if (strcmp(ev, "MODIFIED") == 0)
		at = ACTION_MODIFIED;
	else if (strcmp(ev, "DELETED") == 0)
		at = ACTION_DELETED;
	else
		return (0);	/* SYNCED, LEADER (computed here), others */
	in = json_decode_instance(data, len, c->sc.now(c->sc.ctx), &cause);
	if (in == NULL) {
		log_warnx("heureka: bad watch event %s: %s", ev, cause);
		free(cause);
		return (0);
	}
	if (in->app != NULL && instance_id(in) != NULL) {
		in->action_type = at;
		hk_merge_one(c->apps, in->app, in, change_cb, c);
		leaders_check(c);
	}
	instance_free(in);
	return (0);
}

/* A piece of the stream, for the reader. */
static void
watch_chunk(const char *p, size_t len, void *arg)
{
	struct heureka_client	*c = arg;

	LOCK(c);
	if (!c->stopping)
		hk_sse_feed(&c->w_sse, p, len, watch_event, c);
	UNLOCK(c);
}

/* Clear the per-stream state. */
static void
watch_clear(struct heureka_client *c)
{
	c->w_handle = NULL;
	c->w_up = 0;
	hk_sse_reset(&c->w_sse);
}

/* The stream ended: no watch here (poll only), or reconnect later. */
static void
watch_end(int status, void *arg)
{
	struct heureka_client	*c = arg;

	LOCK(c);
	watch_clear(c);
	if (c->stopping) {
		UNLOCK(c);
		return;
	}
	if (status == 403 || status == 404 || status == 405 ||
	    status == HK_STREAM_NOT_SSE) {
		log_info("heureka: the server has no watch (%d): polling",
		    status);
		c->w_none = 1;
		c->w_none_at = c->sc.now(c->sc.ctx);
	} else if (!c->w_wait) {
		c->w_wait = 1;
		arm(c, c->t_watch, hk_backoff_timeout(&c->w_bo));
	}
	UNLOCK(c);
}

/* Open the stream on the server we last talked to. */
static void
watch_open(struct heureka_client *c)
{
	int	i;

	if (c->tr.stream == NULL || c->stopping || c->ep.n == 0)
		return;
	i = c->ep.pinned >= 0 && (size_t)c->ep.pinned < c->ep.n ?
	    c->ep.pinned : 0;
	c->w_none = 0;
	watch_clear(c);
	c->w_handle = c->tr.stream(c->tr.ctx, c->ep.urls[i], "heureka/watch",
	    c->w_last_id, watch_chunk, watch_end, c);
	if (c->w_handle == NULL && !c->w_wait) {
		c->w_wait = 1;
		arm(c, c->t_watch, hk_backoff_timeout(&c->w_bo));
	}
}

/* Reconnect timer (also closes a stream the server RESET). */
static void
watch_cb(void *arg)
{
	struct heureka_client	*c = arg;

	LOCK(c);
	c->w_wait = 0;
	if (c->w_handle != NULL) {
		c->tr.cancel(c->tr.ctx, c->w_handle);
		watch_clear(c);
	}
	if (!c->stopping)
		watch_open(c);
	UNLOCK(c);
}

/* Drop the stream and its timer (shutdown). */
static void
watch_stop(struct heureka_client *c)
{
	disarm(c, c->t_watch);
	c->w_wait = 0;
	if (c->w_handle != NULL) {
		c->tr.cancel(c->tr.ctx, c->w_handle);
		watch_clear(c);
	}
}

/* Allocate a client from a config (no transport yet). */
static struct heureka_client *
client_alloc(const struct config *cf, char **cause)
{
	struct heureka_client	*c;
	pthread_mutexattr_t	 ma;
	struct buf		 b;

	c = xcalloc(1, sizeof *c);
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&c->mu, &ma);
	pthread_mutexattr_destroy(&ma);
	TAILQ_INIT(&c->ops);
	c->do_register = cf->register_with_eureka;
	c->do_fetch = cf->fetch_registry;
	c->unregister_on_shutdown = cf->should_unregister_on_shutdown;
	c->on_demand = cf->on_demand_update_status_change;
	c->filter_up = cf->filter_only_up_instances;
	c->disable_delta = cf->client_disable_delta;
	c->renew_ms = (int64_t)cf->instance_lease_renewal_interval_in_seconds *
	    1000;
	c->fetch_ms = (int64_t)cf->registry_fetch_interval_seconds * 1000;
	c->repl_ms = (int64_t)cf->instance_info_replication_interval_seconds *
	    1000;
	c->repl_initial_ms =
	    (int64_t)cf->initial_instance_info_replication_interval_seconds *
	    1000;
	c->connect_timeout_s = cf->eureka_server_connect_timeout_seconds;
	c->read_timeout_s = cf->eureka_server_read_timeout_seconds;
	if (client_tls(c, cf, cause) != 0) {
		client_free(c);
		return (NULL);
	}
	if (c->renew_ms <= 0)
		c->renew_ms = LEASE_DEFAULT_RENEWAL_SECS * 1000LL;
	if (c->fetch_ms <= 0)
		c->fetch_ms = DEFAULT_FETCH_INTERVAL_SECS * 1000LL;
	if (c->repl_ms <= 0)
		c->repl_ms = DEFAULT_REPLICATION_INTERVAL_SECS * 1000LL;
	if (c->repl_initial_ms < 0)
		c->repl_initial_ms = DEFAULT_INITIAL_REPLICATION_SECS * 1000LL;
	hk_backoff_init(&c->hb_bo, c->renew_ms,
	    cf->heartbeat_executor_exponential_back_off_bound);
	hk_backoff_init(&c->rf_bo, c->fetch_ms,
	    cf->cache_refresh_executor_exponential_back_off_bound);
	/* Burst 2, 60 * 2 / replication interval per minute (§7.4). */
	hk_ratelim_init(&c->rl, 2, (int)(120000 / c->repl_ms));
	hk_endpoints_init(&c->ep, cf->service_url_default_zone != NULL ?
	    cf->service_url_default_zone : DEFAULT_SERVICE_URL);
	c->apps = applications_new();
	hk_sse_init(&c->w_sse);
	hk_backoff_init(&c->w_bo, HK_WATCH_BO_MS, HK_WATCH_BO_BOUND);
	htab_init(&c->rr, 16);
	c->rnd = (uint64_t)clock_mono_ms() * 2654435761u ^ (uint64_t)getpid();
	if (c->rnd == 0)
		c->rnd = 88172645463325252ULL;
	if (c->do_register) {
		c->self = hk_instance_from_config(cf, clock_wall_ms(), cause);
		if (c->self == NULL) {
			client_free(c);
			return (NULL);
		}
		buf_init(&b, 0);
		buf_adds(&b, "apps/");
		url_add_segment(&b, c->self->app);
		buf_addc(&b, '/');
		url_add_segment(&b, instance_id(c->self));
		c->self_path = buf_steal(&b, NULL);
	}
	return (c);
}

/*
 * The TLS context for https:// service URLs (none without one): verify
 * the servers unless heureka.client.ssl.insecure, which is said loudly.
 */
static int
client_tls(struct heureka_client *c, const struct config *cf, char **cause)
{
	struct tls_conf	tc;

	if (cf->service_url_default_zone == NULL ||
	    strcasestr(cf->service_url_default_zone, "https://") == NULL)
		return (0);
	memset(&tc, 0, sizeof tc);
	tc.prefix = "heureka.client.ssl";
	tc.trust = cf->client_ssl_trust;
	tc.certificate = cf->client_ssl_certificate;
	tc.private_key = cf->client_ssl_key;
	tc.insecure = cf->client_ssl_insecure;
	if ((c->tls_ctx = tls_client_ctx_new(&tc, cause)) == NULL)
		return (-1);
	if (tc.insecure)
		log_warnx("heureka: TLS verification is OFF (insecure): "
		    "https:// servers are not authenticated");
	return (0);
}

/* Give the client its transport and scheduler, and make its timers. */
static void
client_attach(struct heureka_client *c, struct hk_transport *tr,
    struct hk_sched *sc)
{
	c->tr = *tr;
	c->sc = *sc;
	c->attached = 1;
	c->t_heartbeat = sc->timer_new(sc->ctx, heartbeat_cb, c);
	c->t_hb_timeout = sc->timer_new(sc->ctx, hb_timeout_cb, c);
	c->t_refresh = sc->timer_new(sc->ctx, refresh_cb, c);
	c->t_rf_timeout = sc->timer_new(sc->ctx, rf_timeout_cb, c);
	c->t_repl = sc->timer_new(sc->ctx, repl_cb, c);
	c->t_kick = sc->timer_new(sc->ctx, kick_cb, c);
	c->t_watch = sc->timer_new(sc->ctx, watch_cb, c);
	if (c->self != NULL) {
		c->self->last_dirty_ts = sc->now(sc->ctx);
		c->self->last_updated_ts = c->self->last_dirty_ts;
	}
}

/* Build a client on a given transport and scheduler (tests, CLI). */
struct heureka_client *
hk_client_new_with(const struct config *cf, struct hk_transport *tr,
    struct hk_sched *sc, char **cause)
{
	struct heureka_client	*c;

	if ((c = client_alloc(cf, cause)) == NULL) {
		tr->free(tr->ctx);
		sc->free(sc->ctx);
		return (NULL);
	}
	client_attach(c, tr, sc);
	return (c);
}

/*
 * Start-up (§7.2): a full fetch at once, then the refresh task; register
 * at once (Spring registers on start rather than waiting 40 s), heartbeat
 * after one renewal interval, replicator after its initial delay.
 */
int
hk_client_start(struct heureka_client *c)
{
	LOCK(c);
	if (c->started || !c->attached) {
		UNLOCK(c);
		return (-1);
	}
	c->started = 1;
	if (c->do_fetch) {
		arm(c, c->t_rf_timeout, c->rf_bo.base_ms);
		fetch_start(c, 1);
	}
	if (c->do_register) {
		c->dirty = 1;
		register_now(c);
		arm(c, c->t_heartbeat, c->renew_ms);
		arm(c, c->t_repl, c->repl_initial_ms);
	}
	UNLOCK(c);
	return (0);
}

/* The cancel was answered (or failed): finish the shutdown. */
static void
cancel_done(int status, const char *body, size_t len, void *arg)
{
	struct heureka_client	*c = arg;

	c->cancel_op = NULL;
	if (status >= 200 && status < 300)
		log_info("heureka: cancelled %s/%s", c->self->app,
		    instance_id(c->self));
	else
		log_warnx("heureka: cancel of %s/%s answered %d",
		    c->self->app, instance_id(c->self), status);
	final_step(c);
}

/*
 * Shutdown (§7.8): stop all tasks; if we registered, set the local status
 * DOWN (not pushed) and DELETE our registration; then the final step.
 */
void
hk_client_shutdown(struct heureka_client *c)
{
	struct hk_op	*op;

	LOCK(c);
	if (c->stopping) {
		UNLOCK(c);
		return;
	}
	c->stopping = 1;
	disarm(c, c->t_heartbeat);
	disarm(c, c->t_hb_timeout);
	disarm(c, c->t_refresh);
	disarm(c, c->t_rf_timeout);
	disarm(c, c->t_repl);
	disarm(c, c->t_kick);
	watch_stop(c);
	while ((op = TAILQ_FIRST(&c->ops)) != NULL) {
		op_cancel(c, op);
		/* op_cancel unlinks (and frees) a listed op. */
		HK_ASSERT(TAILQ_FIRST(&c->ops) != op);
	}
	c->hb_op = c->rf_op = c->reg_op = NULL;
	if (c->started && c->do_register && c->unregister_on_shutdown) {
		c->self->status = STATUS_DOWN;
		/* arm() is off now; the op itself needs no timer. */
		c->cancel_op = op_start(c, HK_REQ_CANCEL, "DELETE",
		    c->self_path, NULL, cancel_done, c);
	} else
		final_step(c);
	UNLOCK(c);
}

/* Last timer of a client on the caller's loop: free it, tell the owner. */
static void
final_cb(void *arg)
{
	struct heureka_client	*c = arg;
	heureka_done_cb		 cb = c->stop_cb;
	void			*cbarg = c->stop_arg;

	client_free(c);
	if (cb != NULL)
		cb(cbarg);
}

/*
 * Everything is stopped. Never free from here: we may be inside a
 * transport callback. A threaded client's loop just exits (the stopping
 * thread frees); otherwise a zero timer frees the client from a clean
 * stack.
 */
static void
final_step(struct heureka_client *c)
{
	if (c->threaded) {
		event_base_loopexit(c->own_base, NULL);
		return;
	}
	if (c->t_final == NULL)
		c->t_final = c->sc.timer_new(c->sc.ctx, final_cb, c);
	c->sc.timer_add(c->sc.ctx, c->t_final, 0);
}

/* Release everything. Not from inside a client callback. */
static void
client_free(struct heureka_client *c)
{
	struct hk_op	*op;
	size_t		 i;
	void		**timers[] = { &c->t_heartbeat, &c->t_hb_timeout,
			    &c->t_refresh, &c->t_rf_timeout, &c->t_repl,
			    &c->t_kick, &c->t_final, &c->t_stop, &c->t_watch };

	if (c->attached) {
		if (c->w_handle != NULL)
			c->tr.cancel(c->tr.ctx, c->w_handle);
		while ((op = TAILQ_FIRST(&c->ops)) != NULL) {
			op_cancel(c, op);
			HK_ASSERT(TAILQ_FIRST(&c->ops) != op);
		}
		for (i = 0; i < sizeof timers / sizeof timers[0]; i++) {
			if (*timers[i] != NULL) {
				c->sc.timer_del(c->sc.ctx, *timers[i]);
				c->sc.timer_free(c->sc.ctx, *timers[i]);
			}
		}
		c->tr.free(c->tr.ctx);
		c->sc.free(c->sc.ctx);
	}
	if (c->own_base != NULL)
		event_base_free(c->own_base);
	tls_ctx_free(c->tls_ctx);
	hk_endpoints_clear(&c->ep);
	applications_free(c->apps);
	for (size_t li = 0; li < c->nleaders; li++)
		free(c->leaders[li]);
	free(c->leaders);
	hk_sse_free(&c->w_sse);
	free(c->w_last_id);
	instance_free(c->self);
	free(c->self_path);
	htab_sweep(&c->rr, hk_rr_free_cb, NULL);
	htab_clear(&c->rr);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

/* Whether the watch stream is up (an event came since it opened). */
int
hk_client_watching(struct heureka_client *c)
{
	int	up;

	LOCK(c);
	up = c->w_handle != NULL && c->w_up;
	UNLOCK(c);
	return (up);
}

/* Our instance (borrowed). */
struct instance *
hk_client_self(struct heureka_client *c)
{
	return (c->self);
}

/* The unfiltered local copy (borrowed). */
const struct applications *
hk_client_apps(struct heureka_client *c)
{
	return (c->apps);
}

/* Dirty flag and its timestamp. */
int
hk_client_is_dirty(struct heureka_client *c, int64_t *ts)
{
	if (ts != NULL && c->self != NULL)
		*ts = c->self->last_dirty_ts;
	return (c->dirty);
}

/* Mark the instance dirty (as a config change would). */
void
hk_client_mark_dirty(struct heureka_client *c)
{
	LOCK(c);
	mark_dirty(c);
	UNLOCK(c);
}

/* Current heartbeat supervisor delay. */
int64_t
hk_client_heartbeat_delay(struct heureka_client *c)
{
	return (c->hb_bo.delay_ms);
}

/* Current cache-refresh supervisor delay. */
int64_t
hk_client_refresh_delay(struct heureka_client *c)
{
	return (c->rf_bo.delay_ms);
}

/* Whether an instance shows up in lookups (shouldFilterOnlyUpInstances). */
static int
visible(struct heureka_client *c, const struct instance *in)
{
	return (!c->filter_up || in->status == STATUS_UP);
}

/* Copies of the (UP) instances of an application. */
size_t
heureka_client_get_app(struct heureka_client *c, const char *app,
    struct heureka_instance **list)
{
	struct application	*a;
	size_t			 i, n = 0;

	*list = NULL;
	if (app == NULL)
		return (0);
	LOCK(c);
	if ((a = applications_find(c->apps, app)) != NULL) {
		for (i = 0; i < a->n; i++) {
			if (visible(c, a->instances[i]))
				hk_instance_list_add(list, &n, a->instances[i]);
		}
	}
	UNLOCK(c);
	return (n);
}

/* Copies of the (UP) instances whose vipAddress lists vip. */
size_t
heureka_client_get_vip(struct heureka_client *c, const char *vip,
    struct heureka_instance **list)
{
	struct instance	*in;
	size_t		 i, j, n = 0;

	*list = NULL;
	if (vip == NULL)
		return (0);
	LOCK(c);
	for (i = 0; i < c->apps->n; i++) {
		for (j = 0; j < c->apps->apps[i]->n; j++) {
			in = c->apps->apps[i]->instances[j];
			if (visible(c, in) && instance_has_vip(
			    in->vip_address, vip, INSTANCE_VIP_ICASE))
				hk_instance_list_add(list, &n, in);
		}
	}
	UNLOCK(c);
	return (n);
}

/* A copy of the instance with that id (any status), or NULL. */
struct heureka_instance *
heureka_client_get_instance(struct heureka_client *c, const char *id)
{
	struct instance		*in = NULL;
	struct heureka_instance	*hi = NULL;
	size_t			 i;

	if (id == NULL)
		return (NULL);
	LOCK(c);
	for (i = 0; i < c->apps->n && in == NULL; i++)
		in = application_find(c->apps->apps[i], id);
	if (in != NULL)
		hi = hk_instance_export(in);
	UNLOCK(c);
	return (hi);
}

/* The leader of app in the local copy, by the server's rule. */
struct heureka_instance *
heureka_client_leader(struct heureka_client *c, const char *app)
{
	struct application	*a;
	struct instance		*best = NULL;
	struct heureka_instance	*hi = NULL;

	if (app == NULL)
		return (NULL);
	LOCK(c);
	if ((a = applications_find(c->apps, app)) != NULL)
		best = app_leader(a);
	if (best != NULL)
		hi = hk_instance_export(best);
	UNLOCK(c);
	return (hi);
}

/* Round robin over the UP instances of app. */
struct heureka_instance *
heureka_client_next_up(struct heureka_client *c, const char *app)
{
	struct application	*a;
	struct heureka_instance	*hi = NULL;
	struct hk_rr		*rr = NULL;
	struct htab_node	*hn;
	uint64_t		 h;
	size_t			 i, n = 0, k;

	if (app == NULL)
		return (NULL);
	LOCK(c);
	if ((a = applications_find(c->apps, app)) == NULL)
		goto out;
	for (i = 0; i < a->n; i++)
		n += a->instances[i]->status == STATUS_UP;
	if (n == 0)
		goto out;
	h = hash_str_upper(app);
	for (hn = htab_first(&c->rr, h); hn != NULL; hn = hn->next) {
		rr = CONTAINER_OF(hn, struct hk_rr, node);
		if (hn->hash == h && strcasecmp(rr->app, app) == 0)
			break;
		rr = NULL;
	}
	if (rr == NULL) {
		rr = xcalloc(1, sizeof *rr);
		rr->app = xstrdup(app);
		htab_insert(&c->rr, &rr->node, h);
	}
	k = rr->next++ % n;
	for (i = 0; i < a->n; i++) {
		if (a->instances[i]->status != STATUS_UP)
			continue;
		if (k-- == 0) {
			hi = hk_instance_export(a->instances[i]);
			break;
		}
	}
out:
	UNLOCK(c);
	return (hi);
}

/* Instances in the local copy, -1 before the first fetch. */
long
heureka_client_count(struct heureka_client *c)
{
	long	n;

	LOCK(c);
	n = c->fetched ? (long)applications_count(c->apps) : -1;
	UNLOCK(c);
	return (n);
}

/* Register the leader-change callback. */
void
heureka_client_on_leader_change(struct heureka_client *c,
    heureka_leader_cb cb, void *arg)
{
	LOCK(c);
	c->leader_cb = cb;
	c->leader_arg = arg;
	UNLOCK(c);
}

/* Register the change callback. */
void
heureka_client_on_change(struct heureka_client *c, heureka_change_cb cb,
    void *arg)
{
	LOCK(c);
	c->change_cb = cb;
	c->change_arg = arg;
	UNLOCK(c);
}

/* Our instance id. */
const char *
heureka_client_instance_id(struct heureka_client *c)
{
	return (c->self != NULL ? instance_id(c->self) : NULL);
}

/* Change our status: dirty, and an on-demand update if the limiter allows. */
int
heureka_client_set_status(struct heureka_client *c, const char *status)
{
	enum instance_status	st;

	if (status == NULL || instance_status_parse(status, &st) != 0)
		return (-1);
	LOCK(c);
	if (c->self == NULL) {
		UNLOCK(c);
		return (-1);
	}
	if (c->self->status != st) {
		c->self->status = st;
		mark_dirty(c);
		if (c->on_demand && c->started && !c->stopping) {
			if (hk_ratelim_acquire(&c->rl, c->sc.now(c->sc.ctx)))
				arm(c, c->t_kick, 0);
			else
				log_debug("%s: on-demand update rate limited",
				    __func__);
		}
	}
	UNLOCK(c);
	return (0);
}

/* Set one metadata entry; the replicator pushes it. */
int
heureka_client_set_metadata(struct heureka_client *c, const char *key,
    const char *value)
{
	const char	*old;

	if (key == NULL || value == NULL || *key == '\0')
		return (-1);
	LOCK(c);
	if (c->self == NULL || (c->self->metadata.n >= INSTANCE_MAX_METADATA &&
	    kvlist_get(&c->self->metadata, key) == NULL)) {
		UNLOCK(c);
		return (-1);
	}
	old = kvlist_get(&c->self->metadata, key);
	if (old == NULL || strcmp(old, value) != 0) {
		kvlist_set(&c->self->metadata, key, value);
		mark_dirty(c);
	}
	UNLOCK(c);
	return (0);
}

/* Build a struct config from options (weakest first) and make a client. */
struct heureka_client *
heureka_client_new(const struct heureka_options *o, char **cause)
{
	struct config		 cf;
	struct heureka_client	*c = NULL;
	extern char		**environ;
	const char *const	*s;
	char			*k, *v, buf[32];

	*cause = NULL;
	config_defaults(&cf);
	if (o->config_file != NULL &&
	    config_load_file(&cf, o->config_file, cause) != 0)
		goto out;
	if (o->use_env && config_load_env(&cf, environ, cause) != 0)
		goto out;
	for (s = o->settings; s != NULL && *s != NULL; s++) {
		k = xstrdup(*s);
		if ((v = strchr(k, '=')) == NULL) {
			xasprintf(cause, "%s: expected key=value", *s);
			free(k);
			goto out;
		}
		*v++ = '\0';
		if (config_set(&cf, k, v, cause) != 0) {
			free(k);
			goto out;
		}
		free(k);
	}
#define SET(key, val) do {						\
	if ((val) != NULL && config_set(&cf, key, val, cause) != 0)	\
		goto out;						\
} while (0)
	SET("eureka.instance.appname", o->app_name);
	SET("eureka.client.service-url.defaultZone", o->service_url);
	SET("eureka.instance.hostname", o->host_name);
	SET("eureka.instance.ip-address", o->ip_addr);
	SET("eureka.instance.instance-id", o->instance_id);
	if (o->port != 0) {
		snprintf(buf, sizeof buf, "%d", o->port);
		SET("eureka.instance.non-secure-port", buf);
	}
	if (o->no_register)
		SET("eureka.client.register-with-eureka", "false");
	if (o->no_fetch)
		SET("eureka.client.fetch-registry", "false");
	SET("heureka.client.ssl.trust-certificate", o->cacert);
	SET("heureka.client.ssl.certificate", o->client_cert);
	SET("heureka.client.ssl.certificate-private-key", o->client_key);
	if (o->insecure)
		SET("heureka.client.ssl.insecure", "true");
#undef SET
	c = client_alloc(&cf, cause);
out:
	config_free(&cf);
	return (c);
}

/* Run on the caller's loop. */
int
heureka_client_start(struct heureka_client *c, struct event_base *base)
{
	struct hk_transport	tr;
	struct hk_sched		sc;

	if (c->attached || base == NULL)
		return (-1);
	if (hk_transport_evhttp(&tr, base, c->self != NULL ?
	    c->self->ip_addr : NULL, c->connect_timeout_s,
	    c->read_timeout_s, c->tls_ctx) != 0)
		return (-1);
	hk_sched_libevent(&sc, base);
	client_attach(c, &tr, &sc);
	return (hk_client_start(c));
}

/* Thread body: run the client's own loop until it is told to exit. */
static void *
loop_thread(void *arg)
{
	struct heureka_client	*c = arg;

	event_base_loop(c->own_base, EVLOOP_NO_EXIT_ON_EMPTY);
	return (NULL);
}

/* A threaded client is asked to stop: shut down on the loop thread. */
static void
stop_cb(void *arg)
{
	hk_client_shutdown(arg);
}

/* Run on a new thread with its own loop. */
int
heureka_client_start_thread(struct heureka_client *c)
{
	if (c->attached)
		return (-1);
	evthread_use_pthreads();
	if ((c->own_base = event_base_new()) == NULL)
		return (-1);
	c->threaded = 1;
	if (heureka_client_start(c, c->own_base) != 0)
		return (-1);
	c->t_stop = c->sc.timer_new(c->sc.ctx, stop_cb, c);
	if (pthread_create(&c->thread, NULL, loop_thread, c) != 0) {
		c->threaded = 0;
		return (-1);
	}
	return (0);
}

/* Cancel, stop and free; see heureka.h for threaded vs loop. */
void
heureka_client_stop(struct heureka_client *c, heureka_done_cb cb, void *arg)
{
	if (c == NULL)
		return;
	if (!c->started) {
		client_free(c);
		if (cb != NULL)
			cb(arg);
		return;
	}
	LOCK(c);
	c->stop_cb = cb;
	c->stop_arg = arg;
	if (c->threaded) {
		c->sc.timer_add(c->sc.ctx, c->t_stop, 0);
		UNLOCK(c);
		pthread_join(c->thread, NULL);
		client_free(c);
		if (cb != NULL)
			cb(arg);
		return;
	}
	UNLOCK(c);
	hk_client_shutdown(c);
}

/* Free at once, without cancelling. */
void
heureka_client_free(struct heureka_client *c)
{
	if (c == NULL)
		return;
	if (c->threaded) {
		event_base_loopexit(c->own_base, NULL);
		pthread_join(c->thread, NULL);
	}
	client_free(c);
}

/* Library log level. */
void
heureka_set_log_level(int level)
{
	if (level < LOG_LEVEL_ERROR)
		level = LOG_LEVEL_ERROR;
	if (level > LOG_LEVEL_DEBUG)
		level = LOG_LEVEL_DEBUG;
	log_set_level((enum log_level)level);
}
