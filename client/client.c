/*
 * client.c: the lifecycle and the registration side of libheureka, what
 * the Java DiscoveryClient does (spec §7): register, heartbeat with 404 ->
 * re-register, the dirty flag with its timestamp, the
 * InstanceInfoReplicator with its on-demand, rate-limited path, start-up
 * and shutdown (cancel), and building and freeing the client. It talks to
 * the world only through struct hk_transport and struct hk_sched
 * (internal.h), so the unit test drives it with a fake server and a
 * hand-moved clock; transport.c provides the real ones over libevent.
 *
 * The rest of the library, one concern per file: requests with failover
 * (ops.c), the local copy and its fetches (fetch.c), the watch stream
 * (watch.c), the public API (api.c); and the pure pieces: the token
 * bucket (ratelim.c), the supervisor back-off (backoff.c), the URL list
 * and its quarantine (endpoints.c), delta merging and diffing (merge.c),
 * the instance description from config (selfinfo.c), the event-stream
 * reader (sse.c) and the public instance copies (export.c).
 *
 * Every entry point from outside (public API, timer and transport
 * callbacks) takes the client's recursive mutex, which is uncontended on
 * the caller's loop and makes a threaded client's lookups safe.
 */
#include <sys/queue.h>

#include <errno.h>
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

static void	 register_now(struct heureka_client *);
static void	 final_step(struct heureka_client *);
static int	 client_tls(struct heureka_client *, const struct config *,
		     char **);

/* Arm a timer unless we are shutting down. */
void
hk_arm(struct heureka_client *c, void *t, int64_t ms)
{
	if (c->stopping || t == NULL)
		return;
	c->sc.timer_add(c->sc.ctx, t, ms);
}

/* Disarm a timer. NULL is fine. */
void
hk_disarm(struct heureka_client *c, void *t)
{
	if (t != NULL)
		c->sc.timer_del(c->sc.ctx, t);
}

/* Mark our instance dirty with a strictly newer timestamp. */
void
hk_mark_dirty(struct heureka_client *c)
{
	int64_t	now;

	if (!c->attached) {
		/* Before the start: hk_client_attach stamps the instance. */
		c->dirty = 1;
		return;
	}
	now = c->sc.now(c->sc.ctx);
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
	char			 sb[HK_STATUS_MAX];

	if (status == 204) {
		if (!c->registered)
			log_info("heureka: registered %s/%s", c->self->app,
			    instance_id(c->self));
		c->registered = 1;
		if (c->dirty && c->self->last_dirty_ts <= c->reg_dirty_ts)
			c->dirty = 0;
	} else
		log_warnx("heureka: registration of %s/%s failed: %s",
		    c->self->app, instance_id(c->self),
		    hk_status_str(status, sb, sizeof sb));
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
	hk_op_start(c, &c->reg_op, HK_REQ_REGISTER, "POST", path, b.data,
	    register_done, c);
	buf_free(&b);
}

/* InstanceInfoReplicator.run: register if dirty, then every interval. */
static void
replicator_run(struct heureka_client *c)
{
	if (c->dirty)
		register_now(c);
	hk_disarm(c, c->t_repl);
	hk_arm(c, c->t_repl, c->repl_ms);
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
	char			 sb[HK_STATUS_MAX];

	hk_disarm(c, c->t_hb_timeout);
	hk_arm(c, c->t_heartbeat, hk_backoff_done(&c->hb_bo));
	if (status == 404) {
		/* Eureka's "re-register now": unknown or older than ours. */
		log_info("heureka: heartbeat 404 for %s/%s, re-registering",
		    c->self->app, instance_id(c->self));
		hk_mark_dirty(c);
		register_now(c);
	} else if (status != 200)
		log_warnx("heureka: heartbeat of %s/%s failed: %s",
		    c->self->app, instance_id(c->self),
		    hk_status_str(status, sb, sizeof sb));
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
		hk_arm(c, c->t_hb_timeout, c->hb_bo.base_ms);
		hk_op_start(c, &c->hb_op, HK_REQ_HEARTBEAT, "PUT", path, NULL,
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
	hk_op_cancel(c, c->hb_op);
	hk_arm(c, c->t_heartbeat, hk_backoff_timeout(&c->hb_bo));
	UNLOCK(c);
}

/* Allocate a client from a config (no transport yet). */
struct heureka_client *
hk_client_alloc(const struct config *cf, char **cause)
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
		hk_client_free(c);
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
			hk_client_free(c);
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

/*
 * Give the client its transport and scheduler, and make its timers; -1
 * (errno ENOMEM) if the scheduler could not make one: the client is then
 * attached but unusable, for the caller to free.
 */
int
hk_client_attach(struct heureka_client *c, struct hk_transport *tr,
    struct hk_sched *sc)
{
	c->tr = *tr;
	c->sc = *sc;
	c->attached = 1;
	c->t_heartbeat = sc->timer_new(sc->ctx, heartbeat_cb, c);
	c->t_hb_timeout = sc->timer_new(sc->ctx, hb_timeout_cb, c);
	c->t_refresh = sc->timer_new(sc->ctx, hk_refresh_cb, c);
	c->t_rf_timeout = sc->timer_new(sc->ctx, hk_rf_timeout_cb, c);
	c->t_repl = sc->timer_new(sc->ctx, repl_cb, c);
	c->t_kick = sc->timer_new(sc->ctx, kick_cb, c);
	c->t_watch = sc->timer_new(sc->ctx, hk_watch_cb, c);
	if (c->self != NULL) {
		c->self->last_dirty_ts = sc->now(sc->ctx);
		c->self->last_updated_ts = c->self->last_dirty_ts;
	}
	if (c->t_heartbeat == NULL || c->t_hb_timeout == NULL ||
	    c->t_refresh == NULL || c->t_rf_timeout == NULL ||
	    c->t_repl == NULL || c->t_kick == NULL || c->t_watch == NULL) {
		errno = ENOMEM;
		return (-1);
	}
	return (0);
}

/* Build a client on a given transport and scheduler (tests, CLI). */
struct heureka_client *
hk_client_new_with(const struct config *cf, struct hk_transport *tr,
    struct hk_sched *sc, char **cause)
{
	struct heureka_client	*c;

	if ((c = hk_client_alloc(cf, cause)) == NULL) {
		tr->free(tr->ctx);
		sc->free(sc->ctx);
		return (NULL);
	}
	if (hk_client_attach(c, tr, sc) != 0) {
		xasprintf(cause, "cannot make the client's timers");
		hk_client_free(c);
		return (NULL);
	}
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
		errno = c->started ? EALREADY : EINVAL;
		return (-1);
	}
	c->started = 1;
	if (c->do_fetch) {
		hk_arm(c, c->t_rf_timeout, c->rf_bo.base_ms);
		hk_fetch_start(c, 1);
	}
	if (c->do_register) {
		c->dirty = 1;
		register_now(c);
		hk_arm(c, c->t_heartbeat, c->renew_ms);
		hk_arm(c, c->t_repl, c->repl_initial_ms);
	}
	UNLOCK(c);
	return (0);
}

/* The cancel was answered (or failed): finish the shutdown. */
static void
cancel_done(int status, const char *body, size_t len, void *arg)
{
	struct heureka_client	*c = arg;
	char			 sb[HK_STATUS_MAX];

	if (status >= 200 && status < 300)
		log_info("heureka: cancelled %s/%s", c->self->app,
		    instance_id(c->self));
	else
		log_warnx("heureka: cancel of %s/%s failed: %s",
		    c->self->app, instance_id(c->self),
		    hk_status_str(status, sb, sizeof sb));
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
	hk_disarm(c, c->t_heartbeat);
	hk_disarm(c, c->t_hb_timeout);
	hk_disarm(c, c->t_refresh);
	hk_disarm(c, c->t_rf_timeout);
	hk_disarm(c, c->t_repl);
	hk_disarm(c, c->t_kick);
	hk_watch_stop(c);
	while ((op = TAILQ_FIRST(&c->ops)) != NULL) {
		hk_op_cancel(c, op);
		/* hk_op_cancel unlinks (and frees) a listed op. */
		if (HK_BUG(TAILQ_FIRST(&c->ops) == op))
			TAILQ_REMOVE(&c->ops, op, entry);
	}
	if (c->started && c->do_register && c->unregister_on_shutdown) {
		c->self->status = STATUS_DOWN;
		/* hk_arm() is off now; the op itself needs no timer. */
		hk_op_start(c, &c->cancel_op, HK_REQ_CANCEL, "DELETE",
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

	hk_client_free(c);
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
void
hk_client_free(struct heureka_client *c)
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
			hk_op_cancel(c, op);
			if (HK_BUG(TAILQ_FIRST(&c->ops) == op))
				TAILQ_REMOVE(&c->ops, op, entry);
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
	hk_mark_dirty(c);
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
