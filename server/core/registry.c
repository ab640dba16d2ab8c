/*
 * registry.c: the lease table (spec §5). Apps are found by name through
 * an intrusive chained hash table and leases by (app, id) through an
 * open-addressed index (common/hash.c: keyed, growing, resized in steps);
 * each app keeps its leases in a dense array (swap-remove) so
 * encoders iterate by index, and an id index maps an id to the list of its
 * leases in every app, for instances/{id} and the override map. One id in
 * many apps is one entry there, so removing a lease never walks the others.
 * Per-status counters make the apps hash code O(statuses).
 * Side structures, all bounded, each in a file of its own behind
 * registry_int.h: the override map (registry_override.c), the
 * recently-changed queue of refcounted lease references, where a
 * cancelled lease lives on with action DELETED (registry_delta.c),
 * tombstones of recent cancels (registry_tomb.c), the last-1000
 * registered/cancelled rings (registry_recent.c), the eviction walk
 * (registry_evict.c) and which copy wins (registry_reconcile.c).
 *
 * heureka differs from Eureka on purpose in two places: a lease expires
 * duration after its last renewal (Eureka's renew() adds the duration
 * twice), and the renewal threshold follows every register and cancel,
 * also from zero, so no 15-minute recount timer is needed (evict.c keeps
 * the threshold and plans each eviction run; registry_evict.c removes).
 *
 * No libevent, no clock reads: time always comes in as a parameter. Every
 * duration (lease expiry, eviction compensation, delta, override and
 * tombstone retention) is measured on the monotonic clock; the wall clock
 * only stamps the values shown on the wire and the tombstones' origin
 * times. The rule for which copy wins is in registry.h.
 */
#include <sys/queue.h>

#include <ctype.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "evict.h"
#include "hash.h"
#include "instance.h"
#include "registry.h"
#include "registry_int.h"
#include "xmalloc.h"

static void	id_link(struct registry *, struct lease *);
static void	id_unlink(struct registry *, struct lease *);
static struct lease *registry_lookup(const struct registry *, const char *,
		    const char *);
static struct lease *registry_visible(struct registry *, const char *,
		    const char *, int64_t);
static struct reg_app *registry_app_get(struct registry *, const char *,
		    uint64_t);
static void	registry_app_drop(struct registry *, struct reg_app *);
static void	live_walk_cb(struct lease *, void *);
static void	lease_display(struct lease *);
static void	lease_renew(struct lease *, struct hk_time);
static void	registry_uncount(struct registry *, struct reg_app *,
		    enum instance_status);
static void	registry_set_status(struct registry *, struct lease *,
		    enum instance_status);
static void	registry_notify(struct registry *, enum registry_event_type,
		    const char *, uint64_t, const char *,
		    const struct instance *, int, int64_t, struct hk_time);
static enum instance_status registry_rule_status(struct registry *,
		    const struct instance *, const char *, int,
		    enum instance_status, int, int64_t);
static enum registry_rc registry_do_register(struct registry *,
		    struct instance *, int, enum registry_event_type,
		    struct hk_time);
static int	registry_is_future(const struct registry *, int64_t,
		    struct hk_time);

/* Eureka's server defaults (§8.1) plus heureka's bounds. */
void
registry_conf_defaults(struct registry_conf *rc)
{
	memset(rc, 0, sizeof *rc);
	rc->self_preservation = 1;
	rc->renewal_percent_threshold = DEFAULT_RENEWAL_PERCENT_THRESHOLD;
	rc->expected_client_renewal_interval_secs =
	    LEASE_DEFAULT_RENEWAL_SECS;
	rc->expected_initial = 1;
	rc->retention_ms = DEFAULT_DELTA_RETENTION_MS;
	rc->override_ttl_ms = 3600000;
	/* heurekad derives its own from the configuration (server.c). */
	rc->tombstone_ms = DEFAULT_DELTA_RETENTION_MS;
	rc->eviction_interval_ms = DEFAULT_EVICTION_INTERVAL_MS;
	rc->max_instances = DEFAULT_MAX_INSTANCES;
	rc->sync_when_timestamp_differs = 1;
	rc->max_instance_bytes = DEFAULT_MAX_INSTANCE_BYTES;
	rc->max_delta_bytes = DEFAULT_MAX_DELTA_QUEUE_BYTES;
	rc->max_skew_ms = DEFAULT_MAX_CLOCK_SKEW_MS;
}

/*
 * The (app, id) key from the two keyed hashes, without a third SipHash:
 * both are already unpredictable outside the process, so an odd multiply
 * of one plus the other is as unpredictable, and it is not symmetric, so
 * (X, Y) and (Y, X) do not meet either.
 */
uint64_t
registry_key_hash(uint64_t app_hash, uint64_t id_hash)
{
	return (app_hash * 0x9e3779b97f4a7c15ULL + id_hash);
}

/* The key of (app, id): both hashed here, once. */
void
reg_key_set(struct reg_key *k, const char *app, const char *id)
{
	k->app = app;
	k->id = id;
	k->ah = hash_str_upper(app);
	k->ih = hash_str(id);
}

/* The lease index's hash of a lease (registered or not). */
uint64_t
lease_key_hash(const struct lease *l)
{
	return (registry_key_hash(l->app_hash, l->id_hash));
}

/* A lease's key: its instance's id (not a copy of its own). */
const char *
lease_id(const struct lease *l)
{
	return (instance_id(l->inst));
}

/* A lease's duration in ms (expiry counts it from the last renewal). */
static int64_t
lease_duration_ms(const struct lease *l)
{
	return (l->duration_secs * 1000LL);
}

/* The newest registered lease with id (h: hash_str(id)), or NULL. */
struct lease *
id_first(const struct registry *reg, const char *id, uint64_t h)
{
	struct hidx_iter	 it;
	struct lease		*l;

	for (l = hidx_first(&reg->id_idx, h, &it); l != NULL;
	    l = hidx_next(&it))
		if (strcmp(lease_id(l), id) == 0)
			return (l);
	return (NULL);
}

/* Put a new lease first among its id's leases (it takes the index slot). */
static void
id_link(struct registry *reg, struct lease *l)
{
	struct lease	*f;

	l->id_prev = NULL;
	if ((f = id_first(reg, lease_id(l), l->id_hash)) == NULL) {
		l->id_next = NULL;
		hidx_insert(&reg->id_idx, l->id_hash, l);
	} else {
		hidx_replace(&reg->id_idx, l->id_hash, f, l);
		f->id_prev = l;
		l->id_next = f;
	}
}

/* Take a lease out of the id index in O(1); the next one moves up. */
static void
id_unlink(struct registry *reg, struct lease *l)
{
	struct lease	*next = l->id_next;

	if (l->id_prev != NULL) {
		l->id_prev->id_next = next;
		if (next != NULL)
			next->id_prev = l->id_prev;
	} else if (next != NULL) {
		next->id_prev = NULL;
		hidx_replace(&reg->id_idx, l->id_hash, l, next);
	} else
		hidx_remove(&reg->id_idx, l->id_hash, l);
	l->id_next = l->id_prev = NULL;
}

/* A new, empty registry. */
struct registry *
registry_new(const struct registry_conf *rc, int64_t now)
{
	struct registry		*reg = xcalloc(1, sizeof *reg);
	struct evict_conf	 ec;

	(void)now;
	if (rc != NULL)
		reg->conf = *rc;
	else
		registry_conf_defaults(&reg->conf);
	if (reg->conf.max_instances == 0)
		reg->conf.max_instances = DEFAULT_MAX_INSTANCES;
	if (reg->conf.expected_client_renewal_interval_secs <= 0)
		reg->conf.expected_client_renewal_interval_secs =
		    LEASE_DEFAULT_RENEWAL_SECS;
	reg->qmax = reg->conf.max_instances * 4 + REGISTRY_QUEUE_SLACK;

	htab_init(&reg->app_tab, 64);
	hidx_init(&reg->lease_idx, 2048);
	hidx_init(&reg->id_idx, 2048);
	htab_init(&reg->override_tab, 64);
	htab_init(&reg->tomb_tab, 64);
	TAILQ_INIT(&reg->override_lru);
	TAILQ_INIT(&reg->tomb_fifo);
	TAILQ_INIT(&reg->tomb_unheld);

	memset(&ec, 0, sizeof ec);
	ec.self_preservation = reg->conf.self_preservation;
	ec.renewal_percent_threshold = reg->conf.renewal_percent_threshold;
	ec.expected_client_renewal_interval_secs =
	    reg->conf.expected_client_renewal_interval_secs;
	ec.expected_initial = reg->conf.expected_initial;
	ec.eviction_interval_ms = reg->conf.eviction_interval_ms;
	evict_init(&reg->ev, &ec);
	return (reg);
}

/* Free everything; NULL is fine. */
void
registry_free(struct registry *reg)
{
	struct override		*o;
	struct tombstone	*t;
	struct reg_app		*a;
	size_t			 i, j;

	if (reg == NULL)
		return;
	for (i = 0; i < reg->napps; i++) {
		a = reg->apps[i];
		for (j = 0; j < a->n; j++) {
			/*
			 * As a cancel: the lease leaves its app, its bytes
			 * go to the queue's count, which lease_unref takes
			 * them from (the queue may still hold it).
			 */
			reg->qbytes += a->leases[j]->bytes;
			a->leases[j]->app = NULL;
			lease_unref(reg, a->leases[j]);
		}
		free(a->leases);
		free(a->name);
		free(a);
	}
	free(reg->apps);
	for (i = 0; i < reg->qn; i++)
		lease_unref(reg, reg->q[(reg->qhead + i) % reg->qcap].lease);
	free(reg->q);
	while ((o = TAILQ_FIRST(&reg->override_lru)) != NULL) {
		TAILQ_REMOVE(&reg->override_lru, o, entry);
		free(o->id);
		free(o);
	}
	while ((t = TAILQ_FIRST(&reg->tomb_fifo)) != NULL)
		tomb_del(reg, t);
	while ((t = TAILQ_FIRST(&reg->tomb_unheld)) != NULL)
		tomb_del(reg, t);
	recent_clear(&reg->registered);
	recent_clear(&reg->cancelled);
	htab_clear(&reg->app_tab);
	hidx_clear(&reg->lease_idx);
	hidx_clear(&reg->id_idx);
	htab_clear(&reg->override_tab);
	htab_clear(&reg->tomb_tab);
	free(reg->obs);
	free(reg);
}

/* Observers are called after every successful operation, in order. */
void
registry_add_observer(struct registry *reg, registry_observer_cb cb,
    void *arg)
{
	reg->obs = xreallocarray(reg->obs, reg->nobs + 1, sizeof *reg->obs);
	reg->obs[reg->nobs].cb = cb;
	reg->obs[reg->nobs].arg = arg;
	reg->nobs++;
}

/* Tell every observer about one change; app_hash is app's (see .h). */
static void
registry_notify(struct registry *reg, enum registry_event_type type,
    const char *app, uint64_t app_hash, const char *id,
    const struct instance *inst, int replicated, int64_t cancel_ts,
    struct hk_time now)
{
	struct registry_event	 ev;
	struct override		*o;
	size_t			 i;

	if (reg->nobs == 0)
		return;
	memset(&ev, 0, sizeof ev);
	ev.type = type;
	ev.app = app;
	ev.app_hash = app_hash;
	ev.id = id;
	ev.inst = inst;
	ev.replicated = replicated;
	o = override_find(reg, id, now.mono_ms, 0);
	ev.override = o != NULL ? o->status : STATUS_UNKNOWN;
	ev.cancel_ts = cancel_ts;
	ev.created = reg->notify_created;
	ev.revived = reg->notify_revived;
	ev.now = now;
	for (i = 0; i < reg->nobs; i++)
		reg->obs[i].cb(&ev, reg->obs[i].arg);
}

/* Lease by key, expired or not; the app is matched ignoring case. */
struct lease *
lease_find(const struct registry *reg, const struct reg_key *k)
{
	struct hidx_iter	 it;
	struct lease		*l;

	for (l = hidx_first(&reg->lease_idx, registry_key_hash(k->ah, k->ih),
	    &it); l != NULL; l = hidx_next(&it))
		if (strcmp(lease_id(l), k->id) == 0 &&
		    strcasecmp(l->app->name, k->app) == 0)
			return (l);
	return (NULL);
}

/* Lease by (app, id), expired or not; app is matched ignoring case. */
static struct lease *
registry_lookup(const struct registry *reg, const char *app, const char *id)
{
	struct reg_key	k;

	if (app == NULL || id == NULL)
		return (NULL);
	reg_key_set(&k, app, id);
	return (lease_find(reg, &k));
}

/* Whether (app, id) has a lease here, expired or not (registry.h). */
int
registry_holds(const struct registry *reg, const char *app, const char *id)
{
	return (registry_lookup(reg, app, id) != NULL);
}

/*
 * Lease as getInstanceByAppAndId sees it: hidden when expired while lease
 * expiration is enabled (§2.6).
 */
static struct lease *
registry_visible(struct registry *reg, const char *app, const char *id,
    int64_t now)
{
	struct lease	*l;

	if ((l = registry_lookup(reg, app, id)) == NULL)
		return (NULL);
	if (registry_lease_expiration_enabled(reg) &&
	    lease_is_expired(l, 0, now))
		return (NULL);
	return (l);
}

/* Find or create the app called name (h: hash_str_upper(name)). */
static struct reg_app *
registry_app_get(struct registry *reg, const char *name, uint64_t h)
{
	struct reg_app	*a;

	if ((a = registry_app_find_hashed(reg, name, h)) != NULL)
		return (a);
	a = xcalloc(1, sizeof *a);
	a->name = xstrdup(name);
	str_upper(a->name);
	htab_insert(&reg->app_tab, &a->node, h);
	if (reg->napps == reg->capapps) {
		reg->capapps = reg->capapps == 0 ? 16 : reg->capapps * 2;
		reg->apps = xreallocarray(reg->apps, reg->capapps,
		    sizeof *reg->apps);
	}
	a->idx = reg->napps;
	reg->apps[reg->napps++] = a;
	return (a);
}

/*
 * Forget an app that has no leases left. Eureka keeps the empty map but
 * never emits it; dropping it bounds memory under app-name churn.
 */
static void
registry_app_drop(struct registry *reg, struct reg_app *a)
{
	struct reg_app	*last;

	if (reg->last_app == a)
		reg->last_app = NULL;
	htab_remove(&reg->app_tab, &a->node);
	last = reg->apps[reg->napps - 1];
	reg->apps[a->idx] = last;
	last->idx = a->idx;
	reg->napps--;
	free(a->leases);
	free(a->name);
	free(a);
}

/*
 * Drop one reference; the last one frees the lease and its instance. A
 * cancelled lease (app NULL) was held by the delta queue: its bytes leave
 * the queue's count.
 */
void
lease_unref(struct registry *reg, struct lease *l)
{
	/* A reference too few would free what a holder still uses. */
	HK_ASSERT(l->refs > 0);
	if (--l->refs > 0)
		return;
	/* qbytes holds every queued cancelled lease's bytes: never short. */
	if (l->app == NULL && !HK_BUG(reg->qbytes < l->bytes))
		reg->qbytes -= l->bytes;
	instance_free(l->inst);
	free(l);
}

/*
 * heureka's expiry: duration after the last renewal (or registration),
 * on the monotonic clock. Eureka's isExpired adds the duration twice once
 * renewed; we do not.
 */
int
lease_is_expired(const struct lease *l, int64_t extra, int64_t mono)
{
	return (l->eviction_ts > 0 ||
	    mono > l->last_renew_mono + lease_duration_ms(l) + extra);
}

/*
 * The one walk over every registered lease, app by app: cb for each one
 * whose expiry at mono (with extra ms of grace) is `expired`. Returns how
 * many were passed. cb must not add or remove leases.
 */
size_t
lease_walk(const struct registry *reg, int64_t mono, int64_t extra,
    int expired, void (*cb)(struct lease *, void *), void *arg)
{
	struct reg_app	*a;
	size_t		 i, j, n = 0;

	for (i = 0; i < reg->napps; i++) {
		a = reg->apps[i];
		for (j = 0; j < a->n; j++) {
			if (lease_is_expired(a->leases[j], extra, mono) !=
			    expired)
				continue;
			cb(a->leases[j], arg);
			n++;
		}
	}
	return (n);
}

/* lease_walk callback of registry_foreach_live. */
static void
live_walk_cb(struct lease *l, void *arg)
{
	struct live_walk	*w = arg;

	w->cb(l->app, l->inst, w->arg);
}

/* Every unexpired lease (registry.h), whatever self-preservation says. */
size_t
registry_foreach_live(const struct registry *reg, int64_t mono,
    registry_live_cb cb, void *arg)
{
	struct live_walk	w = { cb, arg };

	return (lease_walk(reg, mono, 0, 0, live_walk_cb, &w));
}

/*
 * Refresh the leaseInfo shown for the stored instance (decorateInstanceInfo):
 * lastRenewalTimestamp is the registration time until the first renewal,
 * then last renewal + duration, exactly as Eureka reports it.
 */
static void
lease_display(struct lease *l)
{
	struct instance	*in = l->inst;

	in->has_lease = 1;
	if (in->lease.renewal_interval_secs <= 0)
		in->lease.renewal_interval_secs = LEASE_DEFAULT_RENEWAL_SECS;
	if (in->lease.duration_secs <= 0)
		in->lease.duration_secs = LEASE_DEFAULT_DURATION_SECS;
	in->lease.registration_ts = l->registration_ts;
	in->lease.last_renewal_ts = l->renewed ?
	    l->last_renew_ts + lease_duration_ms(l) : l->registration_ts;
	in->lease.eviction_ts = l->eviction_ts;
	in->lease.service_up_ts = l->service_up_ts;
	in->is_coordinating = 0;
}

/* Lease.renew(): push the expiry out (no renews-per-minute count here). */
static void
lease_renew(struct lease *l, struct hk_time now)
{
	l->last_renew_ts = now.wall_ms;
	l->last_renew_mono = now.mono_ms;
	l->renewed = 1;
	lease_display(l);
}

/*
 * A registered lease of status st leaves the status counters (its app's
 * and the registry's), which count it: neither can be 0.
 */
static void
registry_uncount(struct registry *reg, struct reg_app *a,
    enum instance_status st)
{
	if (HK_BUG(reg->counts[st] == 0 || a->counts[st] == 0))
		return;
	reg->counts[st]--;
	a->counts[st]--;
}

/* Change a registered lease's status, keeping the status counters exact. */
static void
registry_set_status(struct registry *reg, struct lease *l,
    enum instance_status st)
{
	if ((unsigned)l->inst->status < STATUS_COUNT)
		registry_uncount(reg, l->app, l->inst->status);
	l->inst->status = st;
	reg->counts[st]++;
	l->app->counts[st]++;
}

/* A change that invalidates encodings: new generation, app included. */
void
registry_touch(struct registry *reg, struct reg_app *a)
{
	reg->gen++;
	if (a != NULL)
		a->gen = reg->gen;
}

/* What a lease costs on the heap: itself and its instance. */
size_t
lease_cost(const struct lease *l)
{
	return (sizeof *l + INSTANCE_ALLOC_OVERHEAD +
	    instance_stored_size(l->inst));
}

/*
 * The effective-status rule chain (§5.8), first match wins. has_existing
 * and existing describe the lease already stored (LeaseExistsRule). No
 * ASG rule: heureka has no AWS registry.
 */
static enum instance_status
registry_rule_status(struct registry *reg, const struct instance *r,
    const char *id, int has_existing, enum instance_status existing,
    int replicated, int64_t mono)
{
	struct override	*o;

	if (r->status != STATUS_UP && r->status != STATUS_OUT_OF_SERVICE)
		return (r->status);
	if ((o = override_find(reg, id, mono, 1)) != NULL)
		return (o->status);
	if (!replicated && has_existing &&
	    (existing == STATUS_UP || existing == STATUS_OUT_OF_SERVICE))
		return (existing);
	return (r->status);
}

/*
 * The skew rule (registry.h): whether an origin timestamp is further
 * ahead of this node's wall clock than max_skew_ms. Every timestamp that
 * can decide which copy wins passes it, wherever it came from (REST,
 * batch, anti-entropy): a register's lastDirtyTimestamp and carried
 * lastUpdatedTimestamp, a Cancel's time, a status change's or override
 * removal's, and a tombstone before a client's registration is raised
 * past it. Counted in future_refused when refused.
 */
static int
registry_is_future(const struct registry *reg, int64_t ts,
    struct hk_time now)
{
	return (reg->conf.max_skew_ms > 0 &&
	    ts > now.wall_ms + reg->conf.max_skew_ms);
}

/*
 * register (§5.3). in may be the stored instance itself (metadata update).
 * An existing lease is renewed in place as a fresh lease: older delta
 * entries for it are always superseded by the new one, so the output is
 * the same as Eureka's new Lease object. A replicated copy keeps the
 * lastUpdatedTimestamp its origin stamped; a client's gets ours.
 */
static enum registry_rc
registry_do_register(struct registry *reg, struct instance *in,
    int replicated, enum registry_event_type type, struct hk_time now)
{
	struct lease		*l;
	struct reg_app		*a, *hint = NULL;
	struct instance		*r;
	struct tombstone	*t;
	struct override		*o;
	struct reg_key		 k;
	enum instance_status	 existing = STATUS_UNKNOWN, st;
	const char		*id;
	int64_t			 mono = now.mono_ms;
	int64_t			 carried_reg_ts;
	int32_t			 duration_secs;
	size_t			 size;
	int			 has_existing = 0, taken = 1, inplace;

	if (in->app == NULL || !instance_name_ok(in->app, INSTANCE_MAX_NAME) ||
	    !instance_name_ok(instance_id(in), INSTANCE_MAX_NAME) ||
	    (unsigned)in->status >= STATUS_COUNT ||
	    (unsigned)in->overridden_status >= STATUS_COUNT) {
		instance_free(in);
		return (REG_INVALID);
	}
	str_upper(in->app);
	id = instance_id(in);
	/*
	 * The key's hashes once for every table. Registrations come in
	 * runs of one app (a client's fleet, a peer's batch), so the app
	 * registered into last is compared first: its hash is kept. The
	 * id index's slots are asked for now, while the lease index's are
	 * read: at a million leases both are misses, and a new lease
	 * needs both.
	 */
	k.app = in->app;
	k.id = id;
	if (reg->last_app != NULL && strcmp(reg->last_app->name,
	    in->app) == 0) {
		hint = reg->last_app;
		k.ah = hint->node.hash;
	} else
		k.ah = hash_str(in->app);	/* upper: hash_str_upper's */
	k.ih = hash_str(id);
	hidx_prefetch(&reg->id_idx, k.ih);
	/* Stored without spare map capacity; the bounds see it so. */
	instance_trim(in);
	size = instance_stored_size(in);
	l = lease_find(reg, &k);
	inplace = l != NULL && in == l->inst;
	carried_reg_ts = replicated && in->has_lease ?
	    in->lease.registration_ts : 0;
	if (reg->conf.max_instance_bytes > 0 &&
	    size > reg->conf.max_instance_bytes) {
		reg->stats.refused_too_large++;
		if (l == NULL || l->inst != in)
			instance_free(in);
		return (REG_TOO_LARGE);
	}
	if (l == NULL || in != l->inst) {
		if (registry_is_future(reg, in->last_dirty_ts, now) ||
		    (replicated && registry_is_future(reg,
		    in->last_updated_ts, now))) {
			reg->stats.future_refused++;
			instance_free(in);
			return (REG_FUTURE);
		}
		t = l == NULL ? tomb_live(reg, &k, mono) : NULL;
		if (t != NULL && !replicated &&
		    registry_is_future(reg, t->ts + 1, now)) {
			/*
			 * A tombstone from the future (this clock stepped
			 * back since): raising past it would make the
			 * client's copy one every peer refuses. It goes.
			 */
			reg->stats.future_refused++;
			tomb_del(reg, t);
			t = NULL;
		}
		if (t != NULL && in->last_dirty_ts <= t->ts) {
			if (replicated) {
				/* Written before the cancel: stays out. */
				reg->stats.stale_refused++;
				instance_free(in);
				return (REG_STALE);
			}
			/* The client is back: its copy must win. */
			in->last_dirty_ts = t->ts + 1;
		}
		if (t != NULL)
			tomb_del(reg, t);
	}
	duration_secs = in->has_lease && in->lease.duration_secs > 0 ?
	    in->lease.duration_secs : LEASE_DEFAULT_DURATION_SECS;

	if (l != NULL) {
		has_existing = 1;
		existing = l->inst->status;
		if (in != l->inst && reg->conf.max_bytes > 0 &&
		    size > instance_stored_size(l->inst) &&
		    registry_memory_used(reg) + size >
		    reg->conf.max_bytes) {
			/* Growing an existing lease is a new allocation. */
			reg->stats.refused_memory++;
			instance_free(in);
			return (REG_NO_MEMORY);
		}
		if (in != l->inst) {
			if (l->inst->last_dirty_ts > in->last_dirty_ts) {
				/* Eureka keeps the stored InstanceInfo. */
				instance_free(in);
				taken = 0;
			} else {
				registry_uncount(reg, l->app, l->inst->status);
				instance_free(l->inst);
				l->inst = in;
				reg->counts[in->status]++;
				l->app->counts[in->status]++;
			}
		}
		a = l->app;
	} else {
		if (reg->size >= reg->conf.max_instances) {
			instance_free(in);
			return (REG_FULL);
		}
		if (reg->conf.max_bytes > 0 && registry_memory_used(reg) +
		    size > reg->conf.max_bytes) {
			reg->stats.refused_memory++;
			instance_free(in);
			return (REG_NO_MEMORY);
		}
		a = hint != NULL ? hint : registry_app_get(reg, in->app, k.ah);
		l = xcalloc(1, sizeof *l);
		l->refs = 1;
		l->inst = in;
		l->app = a;
		l->app_hash = k.ah;
		l->id_hash = k.ih;
		hidx_insert(&reg->lease_idx, lease_key_hash(l), l);
		id_link(reg, l);
		if (a->n == a->cap) {
			a->cap = a->cap == 0 ? 4 : a->cap * 2;
			a->leases = xreallocarray(a->leases, a->cap,
			    sizeof *a->leases);
		}
		l->idx = (uint32_t)a->n;
		a->leases[a->n++] = l;
		reg->size++;
		reg->counts[in->status]++;
		a->counts[in->status]++;
		/* heureka: also from zero, so no recount timer is needed. */
		l->uncounted = kvlist_get(&in->metadata,
		    REGISTRY_UNCOUNTED_KEY) != NULL ? 1 : 0;
		evict_lease_added(&reg->ev, l->uncounted);
	}
	reg->last_app = a;
	r = l->inst;
	id = lease_id(l);
	reg->bytes -= l->bytes;
	l->bytes = lease_cost(l);
	reg->bytes += l->bytes;

	/*
	 * A fresh lease; serviceUpTimestamp survives re-registration. heureka:
	 * registrationTimestamp is the origin's (a replicated copy keeps the
	 * one it carries, an in-place re-registration keeps ours), so every
	 * peer orders leaders alike (docs/api.md, "Watch and leader").
	 */
	if (carried_reg_ts > 0 && taken)
		l->registration_ts = carried_reg_ts;
	else if (!has_existing || (!inplace && taken) ||
	    l->registration_ts == 0)
		l->registration_ts = now.wall_ms;
	l->last_renew_ts = now.wall_ms;
	l->last_renew_mono = mono;
	l->renewed = 0;
	l->eviction_ts = 0;
	l->duration_secs = duration_secs;
	recent_add(&reg->registered, now.wall_ms, a->name, id, 0);

	if (r->overridden_status != STATUS_UNKNOWN &&
	    override_find(reg, id, mono, 0) == NULL)
		override_put(reg, id, r->overridden_status, mono);
	if ((o = override_find(reg, id, mono, 1)) != NULL)
		r->overridden_status = o->status;
	st = registry_rule_status(reg, r, id, has_existing, existing,
	    replicated, mono);
	registry_set_status(reg, l, st);
	if (st == STATUS_UP && l->service_up_ts == 0)
		l->service_up_ts = now.wall_ms;
	r->action_type = ACTION_ADDED;
	if (!replicated || (taken && r->last_updated_ts <= 0))
		r->last_updated_ts = now.wall_ms;
	lease_display(l);
	registry_enqueue(reg, l, mono);

	registry_touch(reg, a);
	reg->stats.registrations++;
	reg->notify_created = !has_existing;
	registry_notify(reg, type, a->name, a->node.hash, id, r, replicated,
	    0, now);
	reg->notify_created = 0;
	return (REG_OK);
}

/* Register or re-register an instance; owns in from the call on. */
enum registry_rc
registry_register(struct registry *reg, struct instance *in, int replicated,
    struct hk_time now)
{
	REGISTRY_CHECKED(reg);
	if (in == NULL)
		return (REG_INVALID);
	return (registry_do_register(reg, in, replicated, REG_EV_REGISTER,
	    now));
}

/*
 * Heartbeat (§5.4, §2.7). The lease is renewed and observers told before
 * the lastDirtyTimestamp comparison, as Eureka replicates first.
 */
enum registry_rc
registry_renew(struct registry *reg, const char *app, const char *id,
    int64_t last_dirty, enum instance_status override, int replicated,
    struct hk_time now, const struct instance **conflict)
{
	struct lease		*l;
	enum instance_status	 st;
	int64_t			 stored;
	REGISTRY_CHECKED(reg);

	if (conflict != NULL)
		*conflict = NULL;
	if (app == NULL || id == NULL)
		return (REG_INVALID);
	if ((l = registry_lookup(reg, app, id)) == NULL) {
		reg->stats.renewals_not_found++;
		return (REG_NOT_FOUND);
	}
	st = registry_rule_status(reg, l->inst, lease_id(l), 1, l->inst->status,
	    replicated, now.mono_ms);
	if (st == STATUS_UNKNOWN) {
		/* The deliberate 404 that makes a client re-register. */
		reg->stats.renewals_not_found++;
		return (REG_NOT_FOUND);
	}
	if (st != l->inst->status) {
		/*
		 * Eureka rewrites silently (no delta, no invalidation). Our
		 * caches never expire by time, so bump the generation or the
		 * hash code would stay stale until the next real change.
		 */
		registry_set_status(reg, l, st);
		registry_touch(reg, l->app);
	}
	evict_renewed(&reg->ev, l->uncounted);
	reg->notify_revived = lease_is_expired(l, 0, now.mono_ms);
	/* The doctor's one integer on this path (doctor.h). */
	l->renew_gap_ms = !l->renewed ? -1 :
	    now.mono_ms - l->last_renew_mono > INT32_MAX ? INT32_MAX :
	    (int32_t)(now.mono_ms - l->last_renew_mono);
	lease_renew(l, now);
	reg->stats.renewals++;
	registry_notify(reg, REG_EV_RENEW, l->app->name, l->app->node.hash,
	    lease_id(l), l->inst, replicated, 0, now);
	reg->notify_revived = 0;

	if (last_dirty < 0 || !reg->conf.sync_when_timestamp_differs)
		return (REG_OK);
	/* registry_visible() of the same key: l itself, not looked up again. */
	if (registry_lease_expiration_enabled(reg) &&
	    lease_is_expired(l, 0, now.mono_ms))
		return (REG_OK);	/* no stored instance: 200 */
	stored = l->inst->last_dirty_ts;
	if (last_dirty > stored) {
		if (replicated && override != STATUS_UNKNOWN &&
		    (unsigned)override < STATUS_COUNT &&
		    !registry_is_future(reg, last_dirty, now))
			registry_set_override(reg, id, override, now.mono_ms);
		return (REG_NOT_FOUND);
	}
	if (last_dirty < stored && replicated) {
		if (conflict != NULL)
			*conflict = l->inst;
		return (REG_CONFLICT);
	}
	return (REG_OK);
}

/*
 * internalCancel (§5.5) for a lease known to be registered: detach it,
 * keep it alive in the delta queue as DELETED, tell observers. A cancel
 * (not an eviction) leaves a tombstone at cancel_ts.
 */
void
registry_remove(struct registry *reg, struct lease *l, int evict,
    int replicated, int64_t cancel_ts, struct hk_time now)
{
	struct reg_app	*a = l->app;
	uint64_t	 app_hash = a->node.hash;	/* a may be dropped */
	struct lease	*last;
	struct instance	*r;
	struct reg_key	 k;

	recent_add(&reg->cancelled, now.wall_ms, a->name, lease_id(l),
	    evict);
	override_del(reg, lease_id(l));

	registry_uncount(reg, a, l->inst->status);
	if (!HK_BUG(reg->size == 0))
		reg->size--;
	hidx_remove(&reg->lease_idx, lease_key_hash(l), l);
	id_unlink(reg, l);
	last = a->leases[a->n - 1];
	a->leases[l->idx] = last;
	last->idx = l->idx;
	a->n--;
	l->app = NULL;

	/*
	 * The queue keeps a compact copy: a DELETED record needs no
	 * metadata, so churn of large instances cannot pile up there.
	 */
	reg->bytes -= l->bytes;
	r = instance_dup_compact(l->inst);
	instance_free(l->inst);
	l->inst = r;
	l->bytes = lease_cost(l);
	reg->qbytes += l->bytes;

	l->eviction_ts = now.wall_ms;
	l->inst->action_type = ACTION_DELETED;
	l->inst->last_updated_ts = now.wall_ms;
	lease_display(l);
	registry_enqueue(reg, l, now.mono_ms);

	if (a->n == 0) {
		registry_app_drop(reg, a);
		registry_touch(reg, NULL);
	} else
		registry_touch(reg, a);
	evict_lease_removed(&reg->ev, l->uncounted);
	if (evict)
		reg->stats.evictions++;
	else {
		reg->stats.cancels++;
		k.app = l->inst->app;
		k.id = lease_id(l);
		k.ah = app_hash;
		k.ih = l->id_hash;
		tomb_set(reg, &k, 1, cancel_ts, now.mono_ms);
	}
	/* inst is NULL: the instance is gone from the registry. */
	registry_notify(reg, evict ? REG_EV_EVICT : REG_EV_CANCEL,
	    l->inst->app, app_hash, lease_id(l), NULL, evict ? 0 : replicated,
	    cancel_ts, now);
	lease_unref(reg, l);	/* the registry's; the queue keeps one */
}

/*
 * Cancel (§5.5): 404 when absent, yet the tombstone is left and the cancel
 * is replicated, since a peer may hold the copy this node never saw. The
 * tombstone's time: a replicated cancel's own (what its origin stamped),
 * else max(the stored copy's lastDirtyTimestamp, the wall clock).
 */
enum registry_rc
registry_cancel(struct registry *reg, const char *app, const char *id,
    int replicated, struct hk_time now, int64_t cancel_ts)
{
	struct lease	*l;
	struct reg_key	 k;
	char		*up;
	int64_t		 ts;
	REGISTRY_CHECKED(reg);

	if (app == NULL || id == NULL)
		return (REG_INVALID);
	if (replicated && registry_is_future(reg, cancel_ts, now)) {
		/* Its tombstone would outrank the client's next register. */
		reg->stats.future_refused++;
		return (REG_FUTURE);
	}
	l = registry_lookup(reg, app, id);
	if (replicated && cancel_ts > 0) {
		if (l != NULL && l->inst->last_dirty_ts > cancel_ts) {
			/* Registered again after that cancel: keep it. */
			reg->stats.stale_refused++;
			return (REG_STALE);
		}
		ts = cancel_ts;
	} else {
		ts = now.wall_ms;
		if (l != NULL && l->inst->last_dirty_ts > ts)
			ts = l->inst->last_dirty_ts;
	}
	if (l == NULL) {
		up = xstrdup(app);
		str_upper(up);
		recent_add(&reg->cancelled, now.wall_ms, up, id, 0);
		reg_key_set(&k, up, id);
		tomb_set(reg, &k, 0, ts, now.mono_ms);
		override_del(reg, id);
		reg->stats.cancels_not_found++;
		registry_notify(reg, REG_EV_CANCEL, up, k.ah, id, NULL,
		    replicated, ts, now);
		free(up);
		return (REG_NOT_FOUND);
	}
	registry_remove(reg, l, 0, replicated, ts, now);
	return (REG_OK);
}

/*
 * Operator override (§5.6). Changes only when the status differs, but
 * answers REG_OK and notifies either way, as Eureka replicates regardless.
 */
enum registry_rc
registry_status_update(struct registry *reg, const char *app, const char *id,
    enum instance_status st, int64_t last_dirty, int replicated,
    struct hk_time now, int64_t updated_ts)
{
	struct lease	*l;
	struct instance	*in;
	REGISTRY_CHECKED(reg);

	if (app == NULL || id == NULL || (unsigned)st >= STATUS_COUNT)
		return (REG_INVALID);
	if (registry_is_future(reg, last_dirty, now) || (replicated &&
	    registry_is_future(reg, updated_ts, now))) {
		reg->stats.future_refused++;
		return (REG_FUTURE);
	}
	if ((l = registry_visible(reg, app, id, now.mono_ms)) == NULL)
		return (REG_NOT_FOUND);
	in = l->inst;
	lease_renew(l, now);
	if (in->status != st) {
		if (st == STATUS_UP && l->service_up_ts == 0)
			l->service_up_ts = now.wall_ms;
		override_put(reg, lease_id(l), st, now.mono_ms);
		in->overridden_status = st;
		registry_set_status(reg, l, st);
		if (last_dirty > in->last_dirty_ts)
			in->last_dirty_ts = last_dirty;
		in->action_type = ACTION_MODIFIED;
		in->last_updated_ts = replicated && updated_ts > 0 ?
		    updated_ts : now.wall_ms;
		lease_display(l);
		registry_enqueue(reg, l, now.mono_ms);
		registry_touch(reg, l->app);
	}
	reg->stats.status_updates++;
	registry_notify(reg, REG_EV_STATUS_UPDATE, l->app->name,
	    l->app->node.hash, lease_id(l), in, replicated, 0, now);
	return (REG_OK);
}

/*
 * Delete the override (§5.7); the instance is left in st (UNKNOWN by
 * default, so its next heartbeat gets the 404 that makes it re-register).
 */
enum registry_rc
registry_delete_override(struct registry *reg, const char *app,
    const char *id, enum instance_status st, int64_t last_dirty,
    int replicated, struct hk_time now, int64_t updated_ts)
{
	struct lease	*l;
	struct instance	*in;
	REGISTRY_CHECKED(reg);

	if (app == NULL || id == NULL || (unsigned)st >= STATUS_COUNT)
		return (REG_INVALID);
	if (registry_is_future(reg, last_dirty, now) || (replicated &&
	    registry_is_future(reg, updated_ts, now))) {
		reg->stats.future_refused++;
		return (REG_FUTURE);
	}
	if ((l = registry_visible(reg, app, id, now.mono_ms)) == NULL)
		return (REG_NOT_FOUND);
	in = l->inst;
	lease_renew(l, now);
	if (override_del(reg, lease_id(l))) {
		in->overridden_status = STATUS_UNKNOWN;
		registry_set_status(reg, l, st);
		if (last_dirty > in->last_dirty_ts)
			in->last_dirty_ts = last_dirty;
		in->action_type = ACTION_MODIFIED;
		in->last_updated_ts = replicated && updated_ts > 0 ?
		    updated_ts : now.wall_ms;
		lease_display(l);
		registry_enqueue(reg, l, now.mono_ms);
		registry_touch(reg, l->app);
	}
	registry_notify(reg, REG_EV_DELETE_OVERRIDE, l->app->name,
	    l->app->node.hash, lease_id(l), in, replicated, 0, now);
	return (REG_OK);
}

/*
 * Metadata update (§2.11): merge, then re-register the stored instance as
 * a non-replicated registration (delta action ADDED, lastDirty unchanged).
 * REG_INVALID, REG_TOO_LARGE or REG_NO_MEMORY, with nothing changed, if
 * the merge would pass a bound.
 */
enum registry_rc
registry_update_metadata(struct registry *reg, const char *app,
    const char *id, const struct kvlist *kv, struct hk_time now)
{
	struct lease	*l;
	struct instance	*tmp, *merged;
	size_t		 i, added = 0, size, old;
	REGISTRY_CHECKED(reg);

	if (app == NULL || id == NULL || kv == NULL)
		return (REG_INVALID);
	if ((l = registry_visible(reg, app, id, now.mono_ms)) == NULL)
		return (REG_NOT_FOUND);
	for (i = 0; i < kv->n; i++) {
		if (kv->v[i].key == NULL)
			return (REG_INVALID);
		if (kvlist_get(&l->inst->metadata, kv->v[i].key) == NULL)
			added++;
	}
	if (l->inst->metadata.n + added > INSTANCE_MAX_METADATA)
		return (REG_INVALID);
	/*
	 * The merge is made on a copy and packed as it will be stored
	 * (instance.h: a stored instance is not written to), so the bounds
	 * judge the bytes the merged copy will hold, as a registration's.
	 */
	tmp = instance_dup(l->inst);
	for (i = 0; i < kv->n; i++)
		kvlist_set(&tmp->metadata, kv->v[i].key, kv->v[i].value);
	merged = instance_pack(tmp);
	instance_free(tmp);
	size = instance_stored_size(merged);
	old = instance_stored_size(l->inst);
	if (reg->conf.max_instance_bytes > 0 &&
	    size > reg->conf.max_instance_bytes) {
		reg->stats.refused_too_large++;
		instance_free(merged);
		return (REG_TOO_LARGE);
	}
	if (reg->conf.max_bytes > 0 && size > old &&
	    registry_memory_used(reg) + (size - old) > reg->conf.max_bytes) {
		reg->stats.refused_memory++;
		instance_free(merged);
		return (REG_NO_MEMORY);
	}
	/* The same status: the counts stand; do_register costs the lease. */
	instance_free(l->inst);
	l->inst = merged;
	return (registry_do_register(reg, l->inst, 0, REG_EV_METADATA, now));
}

/* GET apps/{app}/{id}: borrowed, NULL if absent or hidden as expired. */
const struct instance *
registry_get(struct registry *reg, const char *app, const char *id,
    int64_t now)
{
	struct lease	*l;
	REGISTRY_CHECKED(reg);

	if ((l = registry_visible(reg, app, id, now)) == NULL)
		return (NULL);
	return (l->inst);
}

/* GET instances/{id}: the first visible lease with that id in any app. */
const struct instance *
registry_find_id(struct registry *reg, const char *id, int64_t now)
{
	struct lease	*l;
	int		 hide;
	REGISTRY_CHECKED(reg);

	if (id == NULL)
		return (NULL);
	hide = registry_lease_expiration_enabled(reg);
	for (l = id_first(reg, id, hash_str(id)); l != NULL; l = l->id_next) {
		if (hide && lease_is_expired(l, 0, now))
			continue;
		return (l->inst);
	}
	return (NULL);
}

/* Number of (non-empty) apps. */
size_t
registry_app_count(const struct registry *reg)
{
	return (reg->napps);
}

/* App by index, NULL when out of range. */
struct reg_app *
registry_app_at(const struct registry *reg, size_t i)
{
	return (i < reg->napps ? reg->apps[i] : NULL);
}

/* App by name (case-insensitive, names are stored upper case), or NULL. */
struct reg_app *
registry_app_find(const struct registry *reg, const char *name)
{
	if (name == NULL)
		return (NULL);
	return (registry_app_find_hashed(reg, name, hash_str_upper(name)));
}

/* The same with h = hash_str_upper(name) already known. */
struct reg_app *
registry_app_find_hashed(const struct registry *reg, const char *name,
    uint64_t h)
{
	struct htab_node	*n;
	struct reg_app	*a;

	if (name == NULL)
		return (NULL);
	for (n = htab_first(&reg->app_tab, h); n != NULL; n = n->next) {
		if (n->hash != h)
			continue;
		a = CONTAINER_OF(n, struct reg_app, node);
		if (strcasecmp(a->name, name) == 0)
			return (a);
	}
	return (NULL);
}

/* The app's upper-case name. */
const char *
reg_app_name(const struct reg_app *a)
{
	return (a->name);
}

/* Number of leases in the app (expired ones included, as Eureka's). */
size_t
reg_app_size(const struct reg_app *a)
{
	return (a->n);
}

/* The application's leases by status, kept on every change (no walk). */
void
reg_app_status_counts(const struct reg_app *a, size_t counts[STATUS_COUNT])
{
	memcpy(counts, a->counts, sizeof a->counts);
}

/* Instance by index, NULL when out of range. */
const struct instance *
reg_app_instance_at(const struct reg_app *a, size_t i)
{
	return (i < a->n ? a->leases[i]->inst : NULL);
}

/* Drawn from the registry-wide counter, so never reused for a name. */
uint64_t
reg_app_gen(const struct reg_app *a)
{
	return (a->gen);
}

/* The name's keyed hash (hash_str_upper of an upper-case name). */
uint64_t
reg_app_hash(const struct reg_app *a)
{
	return (a->node.hash);
}

/* Registry-wide generation; heartbeats do not move it. */
uint64_t
registry_gen(const struct registry *reg)
{
	return (reg->gen);
}

/* Number of registered leases. */
size_t
registry_size(const struct registry *reg)
{
	return (reg->size);
}

/* Reconcile hash code of the whole registry (§5.10), from the counters. */
char *
registry_hashcode(const struct registry *reg)
{
	return (instance_hashcode(reg->counts));
}

/* Per-status instance counts. */
void
registry_status_counts(const struct registry *reg,
    size_t counts[STATUS_COUNT])
{
	memcpy(counts, reg->counts, sizeof reg->counts);
}

/* Append without application_add's linear duplicate scan. */
void
app_append(struct application *a, struct instance *in)
{
	if (a->n == a->cap) {
		a->cap = a->cap == 0 ? 4 : a->cap * 2;
		a->instances = xreallocarray(a->instances, a->cap,
		    sizeof *a->instances);
	}
	a->instances[a->n++] = in;
}

/* Bytes of the registered leases. */
size_t
registry_bytes(const struct registry *reg)
{
	return (reg->bytes);
}

/* One part of the bytes counted against max_bytes (encodings, watch). */
void
registry_set_external_bytes(struct registry *reg, enum registry_ext part,
    size_t n)
{
	REGISTRY_CHECKED(reg);
	reg->ext_bytes[part] = n;
}

/* One external part as last set. */
size_t
registry_external_bytes(const struct registry *reg, enum registry_ext part)
{
	return (reg->ext_bytes[part]);
}

/*
 * Everything max_bytes covers: leases, the delta queue, tombstones and
 * the external parts (encodings, watch).
 */
size_t
registry_memory_used(const struct registry *reg)
{
	size_t	n = reg->bytes + registry_delta_bytes(reg) + reg->tomb_bytes;
	int	i;

	for (i = 0; i < REG_EXT_COUNT; i++)
		n += reg->ext_bytes[i];
	return (n);
}

/* The budget as configured. */
size_t
registry_memory_budget(const struct registry *reg)
{
	return (reg->conf.max_bytes);
}

/* VIP / SVIP snapshot (§2.13): exact, case-sensitive (instance.h). */
struct applications *
registry_vip(struct registry *reg, const char *vip, int secure)
{
	struct applications	*as = applications_new();
	struct application	*out;
	struct reg_app		*a;
	const struct instance	*in;
	const char		*list;
	size_t			 i, j;
	REGISTRY_CHECKED(reg);

	if (vip == NULL)
		goto out;
	for (i = 0; i < reg->napps; i++) {
		a = reg->apps[i];
		out = NULL;
		for (j = 0; j < a->n; j++) {
			in = a->leases[j]->inst;
			list = secure ? in->secure_vip_address :
			    in->vip_address;
			if (!instance_has_vip(list, vip, INSTANCE_VIP_EXACT))
				continue;
			if (out == NULL) {
				out = application_new(a->name);
				applications_add(as, out);
			}
			app_append(out, instance_dup(in));
		}
	}
out:
	as->versions_delta = -1;
	as->apps_hashcode = applications_hashcode(as);
	return (as);
}

/* Operation counters. */
const struct registry_stats *
registry_stats(const struct registry *reg)
{
	return (&reg->stats);
}

/* Report the apps, (app, id), id, override and tombstone tables. */
void
registry_foreach_table(struct registry *reg,
    void (*cb)(const char *, const struct htab_stats *, void *), void *arg)
{
	static const char	*names[] = {
		"registry_apps", "registry_leases", "registry_ids",
		"registry_overrides", "registry_tombstones",
	};
	const struct htab	*t[] = {
		&reg->app_tab, NULL, NULL, &reg->override_tab, &reg->tomb_tab,
	};
	const struct hidx	*x[] = {
		NULL, &reg->lease_idx, &reg->id_idx, NULL, NULL,
	};
	struct htab_stats	 st;
	size_t			 i;

	for (i = 0; i < sizeof t / sizeof t[0]; i++) {
		if (t[i] != NULL)
			htab_stats_scan(t[i], &reg->tscan[i],
			    HTAB_SCAN_BUCKETS, &st);
		else
			hidx_stats_scan(x[i], &reg->tscan[i],
			    HTAB_SCAN_BUCKETS, &st);
		cb(names[i], &st, arg);
	}
}

/* Whether the i-th lease of a has expired at mono (out of range: yes). */
int
reg_app_lease_expired(const struct reg_app *a, size_t i, int64_t mono)
{
	return (i >= a->n || lease_is_expired(a->leases[i], 0, mono));
}

/* The time lease_is_expired() turns true for the i-th lease of a. */
int64_t
reg_app_lease_deadline(const struct reg_app *a, size_t i)
{
	if (i >= a->n || a->leases[i]->eviction_ts > 0)
		return (INT64_MIN);
	return (a->leases[i]->last_renew_mono +
	    lease_duration_ms(a->leases[i]));
}

/*
 * Expiry from an instance's shown leaseInfo (stored copies and deltas):
 * recovers the real last renewal from lastRenewalTimestamp, which is the
 * registration time until the first renewal and renewal + duration after.
 */
int
registry_lease_expired(const struct instance *in, int64_t extra, int64_t now)
{
	const struct lease_info	*li = &in->lease;
	int64_t			 dur, last;

	if (li->eviction_ts > 0)
		return (1);
	dur = (li->duration_secs > 0 ? li->duration_secs :
	    LEASE_DEFAULT_DURATION_SECS) * 1000LL;
	last = li->last_renewal_ts == li->registration_ts ?
	    li->registration_ts : li->last_renewal_ts - dur;
	return (now > last + dur + extra);
}
