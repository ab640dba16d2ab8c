/*
 * registry.c: the lease table (spec §5). Apps are found by name through
 * an intrusive chained hash table and leases by (app, id) through an
 * open-addressed index (common/hash.c: keyed, growing, resized in steps);
 * each app keeps its leases in a dense array (swap-remove) so
 * encoders iterate by index, and an id index maps an id to the list of its
 * leases in every app, for instances/{id} and the override map. One id in
 * many apps is one entry there, so removing a lease never walks the others.
 * Per-status counters make the apps hash code O(statuses).
 * Side structures, all bounded: the override map (expire after access,
 * LRU list), the recently-changed queue of refcounted lease references
 * (a cancelled lease lives on there with action DELETED), tombstones of
 * recent cancels, and the last-1000 registered/cancelled rings.
 *
 * heureka differs from Eureka on purpose in two places: a lease expires
 * duration after its last renewal (Eureka's renew() adds the duration
 * twice), and the renewal threshold follows every register and cancel,
 * also from zero, so no 15-minute recount timer is needed (evict.c keeps
 * the threshold and plans each eviction run; registry_evict removes).
 *
 * No libevent, no clock reads: time always comes in as a parameter. Every
 * duration (lease expiry, eviction compensation, delta, override and
 * tombstone retention) is measured on the monotonic clock; the wall clock
 * only stamps the values shown on the wire and the tombstones' origin
 * times. The rule for which copy wins is in registry.h.
 */
#include <sys/queue.h>

#include <ctype.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bug.h"
#include "evict.h"
#include "hash.h"
#include "instance.h"
#include "log.h"
#include "registry.h"
#include "xmalloc.h"

#define REGISTRY_DEFAULT_MAX		1000000
/* hash_fixed's starting value for the copy hash (peers compare it). */
#define REGISTRY_COPY_HASH_SEED		1469598103934665603ULL
#define REGISTRY_QUEUE_SLACK		4096	/* delta queue above 4 x max */
#define REGISTRY_DEFAULT_INSTANCE_BYTES	131072	/* 2 x the default body cap */
#define REGISTRY_DEFAULT_DELTA_BYTES	(64 * 1024 * 1024)

#define CONTAINER_OF(p, type, member) \
	((type *)(void *)((char *)(p) - offsetof(type, member)))

/*
 * A lease. Internal times (last_renew_mono, duration_secs) are kept apart
 * from the values shown in inst->lease (wall clock), which are refreshed
 * after each change. Its key is instance_id(inst) (lease_id()): no
 * stored string of an instance changes its id, and a replacing copy
 * carries the same id.
 * refs: one for the registry while registered, one per delta-queue entry.
 * The two large indexes (lease_idx by (app, id), id_idx by id) are
 * open-addressed (hash.h, struct hidx): their slots hold the hashes, so
 * a lookup at a million leases reads one run of slots and touches only
 * leases whose hash matches, and the lease carries no nodes. The id
 * index holds the newest registered lease of each id; the older ones
 * hang off it by id_next (one id in many apps is one index entry, and
 * each lease leaves it in O(1)).
 * Every lease costs this struct at 1M instances: keep it small.
 */
struct lease {
	struct lease	*id_next;	/* an older lease with this id */
	struct lease	*id_prev;	/* a newer one; NULL: the first */
	uint64_t	 app_hash;	/* hash_str_upper(app) */
	uint64_t	 id_hash;	/* hash_str(id) */
	struct instance	*inst;		/* owned */
	struct reg_app	*app;		/* NULL once cancelled */
	int64_t		 registration_ts;	/* wall, shown */
	int64_t		 last_renew_ts;	/* wall, shown */
	int64_t		 last_renew_mono;	/* expiry counts from it */
	int64_t		 eviction_ts;
	int64_t		 service_up_ts;
	size_t		 bytes;		/* accounted: in reg->bytes while
					   registered, then in reg->qbytes */
	uint32_t	 idx;		/* position in app->leases */
	int32_t		 duration_secs;	/* > 0 */
	unsigned	 refs;
	unsigned	 renewed:1;	/* renewed since registration */
	unsigned	 uncounted:1;	/* REGISTRY_UNCOUNTED_KEY: not in
					   self-preservation's figures (a
					   bit: the lease's size is budgeted) */
};

struct reg_app {
	struct htab_node	  node;
	char		 *name;		/* upper case */
	struct lease	**leases;
	size_t		  n;
	size_t		  cap;
	size_t		  idx;		/* position in registry->apps */
	uint64_t	  gen;
	size_t		  counts[STATUS_COUNT];	/* its leases by status */
};

/* Override map entry: keyed by id only, expires after last access. */
struct override {
	struct htab_node		 node;
	TAILQ_ENTRY(override)	 entry;		/* least recently used first */
	char			*id;
	enum instance_status	 status;
	int64_t			 access_ts;	/* mono */
};
TAILQ_HEAD(override_list, override);

/* A recently cancelled (app, id). */
struct tombstone {
	struct htab_node		 node;
	TAILQ_ENTRY(tombstone)	 entry;		/* oldest first */
	char			*app;
	char			*id;
	int64_t			 ts;		/* origin time (wall) */
	int64_t			 mono;		/* set at, for retention */
};
TAILQ_HEAD(tombstone_list, tombstone);

struct change {
	struct lease	*lease;
	int64_t		 ts;		/* mono */
};

struct recent {
	int64_t		 ts;
	char		*what;		/* "APP(id)" */
	size_t		 cap;		/* what's bytes, reused when enough */
};

struct recent_ring {
	struct recent	 v[REGISTRY_RECENT_MAX];
	size_t		 next;		/* slot written next */
	size_t		 n;
};

struct observer {
	registry_observer_cb	 cb;
	void			*arg;
};

/*
 * An eviction run in slices (registry_evict_step): a count of the
 * candidates, then the removal of a uniform random choice of them
 * (selection sampling, so nothing is held between slices but a place in
 * the walk: leases and apps are walked from the last, so a removal, which
 * moves the last lease or app into the hole, moves only what was seen).
 */
struct evict_slices {
	int		 busy;
	int		 phase;		/* 0 count, 1 remove */
	struct evict_run run;
	int64_t		 mono;		/* the run's time: expiry is of then */
	size_t		 size;		/* leases when it began */
	size_t		 ai, li;	/* the walk's next place, + 1 */
	size_t		 nexp, seen, limit, taken;
};

/* registry_foreach_live's callback and its argument. */
struct live_walk {
	registry_live_cb	 cb;
	void			*arg;
};

/*
 * An (app, id) with both keyed hashes, taken once per operation and
 * handed to every table it touches (leases, ids, tombstones, apps).
 */
struct reg_key {
	const char	*app;
	const char	*id;
	uint64_t	 ah;		/* hash_str_upper(app) */
	uint64_t	 ih;		/* hash_str(id) */
};

struct registry {
	struct registry_conf	 conf;

	struct htab		 app_tab;
	struct reg_app		**apps;
	size_t			  napps;
	size_t			  capapps;

	struct hidx		 lease_idx;	/* (app, id) */
	struct hidx		 id_idx;	/* id -> its newest lease */
	size_t			 size;
	size_t			 counts[STATUS_COUNT];
	uint64_t		 gen;

	struct htab		 override_tab;
	struct override_list	 override_lru;
	size_t			 noverrides;

	struct htab		 tomb_tab;
	struct tombstone_list	 tomb_fifo;
	size_t			 ntombs;

	struct change		*q;		/* recently-changed ring */
	size_t			 qhead;
	size_t			 qn;
	size_t			 qcap;
	size_t			 qmax;
	size_t			 qbytes;	/* cancelled leases it holds */
	int64_t			 qtrunc_ts;	/* newest early drop */

	size_t			 bytes;		/* registered leases */
	size_t			 ext_bytes;	/* the caller's encodings */

	struct recent_ring	 registered;
	struct recent_ring	 cancelled;

	struct reg_app		*last_app;	/* the last registered into */

	struct observer		*obs;
	size_t			 nobs;
	int			 notify_created;	/* for the next event */
	int			 notify_revived;	/* for the next event */

	struct evict		 ev;		/* evict.c: self-preservation */
	struct evict_slices	 evs;		/* the eviction run under way */
	struct htab_scan	 tscan[5];	/* registry_foreach_table's */

	struct registry_stats	 stats;
	uint64_t		 check_left;	/* operations to the next walk */
	unsigned		 op_depth;	/* public operations under way */
};

/*
 * After each public operation, in the tests: the walk (bug.h). Only the
 * outermost one's exit walks: an observer called in the middle of a
 * change may call back (registry_get), and sees it half done.
 */
#define REGISTRY_CHECKED(reg)						\
	HK_CHECK_AT_EXIT(struct registry, registry_self_check,		\
	    registry_enter(reg))

static uint64_t	registry_key_hash(uint64_t, uint64_t);
static void	reg_key_set(struct reg_key *, const char *, const char *);
static struct lease *id_first(const struct registry *, const char *,
		    uint64_t);
static void	id_link(struct registry *, struct lease *);
static void	id_unlink(struct registry *, struct lease *);
static struct lease *lease_find(const struct registry *,
		    const struct reg_key *);
static struct lease *registry_lookup(const struct registry *, const char *,
		    const char *);
static struct lease *registry_visible(struct registry *, const char *,
		    const char *, int64_t);
static struct reg_app *registry_app_get(struct registry *, const char *,
		    uint64_t);
static void	registry_app_drop(struct registry *, struct reg_app *);
static void	lease_unref(struct registry *, struct lease *);
static size_t	lease_cost(const struct lease *);
static void	registry_dequeue(struct registry *, int64_t, int);
static int	lease_is_expired(const struct lease *, int64_t, int64_t);
static size_t	lease_walk(const struct registry *, int64_t, int64_t, int,
		    void (*)(struct lease *, void *), void *);
static void	live_walk_cb(struct lease *, void *);
static void	lease_display(struct lease *);
static void	lease_renew(struct lease *, struct hk_time);
static void	registry_set_status(struct registry *, struct lease *,
		    enum instance_status);
static void	registry_touch(struct registry *, struct reg_app *);
static void	registry_enqueue(struct registry *, struct lease *, int64_t);
static void	registry_notify(struct registry *, enum registry_event_type,
		    const char *, uint64_t, const char *,
		    const struct instance *, int, int64_t, struct hk_time);
static struct override *override_find(struct registry *, const char *,
		    int64_t, int);
static void	override_put(struct registry *, const char *,
		    enum instance_status, int64_t);
static int	override_del(struct registry *, const char *);
static void	override_purge(struct registry *, int64_t);
static struct tombstone *tomb_find(struct registry *,
		    const struct reg_key *);
static struct tombstone *tomb_live(struct registry *,
		    const struct reg_key *, int64_t);
static void	tomb_set(struct registry *, const struct reg_key *, int64_t,
		    int64_t);
static void	tomb_del(struct registry *, struct tombstone *);
static void	recent_add(struct recent_ring *, int64_t, const char *,
		    const char *);
static void	recent_clear(struct recent_ring *);
static enum instance_status registry_rule_status(struct registry *,
		    const struct instance *, const char *, int,
		    enum instance_status, int, int64_t);
static enum registry_rc registry_do_register(struct registry *,
		    struct instance *, int, enum registry_event_type,
		    struct hk_time);
static void	registry_remove(struct registry *, struct lease *, int, int,
		    int64_t, struct hk_time);
static int	registry_is_future(const struct registry *, int64_t,
		    struct hk_time);
static int	registry_copy_cmp(const struct instance *,
		    const struct instance *);
static void	app_append(struct application *, struct instance *);
static int	rcheck_fail(char **, const char *, ...)
		    __attribute__((format(printf, 2, 3)));
static int	rcheck_ptr_cmp(const void *, const void *);
static size_t	rcheck_occurs(struct lease **, size_t, const struct lease *);
static int	rcheck_lease(const struct registry *, const struct reg_app *,
		    size_t, struct lease **, size_t, char **);
static int	rcheck_queue(const struct registry *, struct lease **,
		    char **);
static int	rcheck_side_tables(const struct registry *, char **);
static struct registry *registry_enter(struct registry *);
static void	registry_self_check(struct registry **);

/* Eureka's server defaults (§8.1) plus heureka's bounds. */
void
registry_conf_defaults(struct registry_conf *rc)
{
	memset(rc, 0, sizeof *rc);
	rc->self_preservation = 1;
	rc->renewal_percent_threshold = 0.85;
	rc->expected_client_renewal_interval_secs =
	    LEASE_DEFAULT_RENEWAL_SECS;
	rc->expected_initial = 1;
	rc->retention_ms = 180000;
	rc->override_ttl_ms = 3600000;
	rc->tombstone_ms = 180000;
	rc->eviction_interval_ms = 60000;
	rc->max_instances = REGISTRY_DEFAULT_MAX;
	rc->sync_when_timestamp_differs = 1;
	rc->max_instance_bytes = REGISTRY_DEFAULT_INSTANCE_BYTES;
	rc->max_delta_bytes = REGISTRY_DEFAULT_DELTA_BYTES;
	rc->max_skew_ms = 300000;
}

/*
 * The (app, id) key from the two keyed hashes, without a third SipHash:
 * both are already unpredictable outside the process, so an odd multiply
 * of one plus the other is as unpredictable, and it is not symmetric, so
 * (X, Y) and (Y, X) do not meet either.
 */
static uint64_t
registry_key_hash(uint64_t app_hash, uint64_t id_hash)
{
	return (app_hash * 0x9e3779b97f4a7c15ULL + id_hash);
}

/* The key of (app, id): both hashed here, once. */
static void
reg_key_set(struct reg_key *k, const char *app, const char *id)
{
	k->app = app;
	k->id = id;
	k->ah = hash_str_upper(app);
	k->ih = hash_str(id);
}

/* The lease index's hash of a lease (registered or not). */
static uint64_t
lease_key_hash(const struct lease *l)
{
	return (registry_key_hash(l->app_hash, l->id_hash));
}

/* A lease's key: its instance's id (not a copy of its own). */
static const char *
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
static struct lease *
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
		reg->conf.max_instances = REGISTRY_DEFAULT_MAX;
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
	while ((t = TAILQ_FIRST(&reg->tomb_fifo)) != NULL) {
		TAILQ_REMOVE(&reg->tomb_fifo, t, entry);
		free(t->app);
		free(t->id);
		free(t);
	}
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
static struct lease *
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
static void
lease_unref(struct registry *reg, struct lease *l)
{
	if (--l->refs > 0)
		return;
	if (l->app == NULL && reg->qbytes >= l->bytes)
		reg->qbytes -= l->bytes;
	instance_free(l->inst);
	free(l);
}

/*
 * heureka's expiry: duration after the last renewal (or registration),
 * on the monotonic clock. Eureka's isExpired adds the duration twice once
 * renewed; we do not.
 */
static int
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
static size_t
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

/* Change a registered lease's status, keeping the status counters exact. */
static void
registry_set_status(struct registry *reg, struct lease *l,
    enum instance_status st)
{
	if ((unsigned)l->inst->status < STATUS_COUNT) {
		reg->counts[l->inst->status]--;
		l->app->counts[l->inst->status]--;
	}
	l->inst->status = st;
	reg->counts[st]++;
	l->app->counts[st]++;
}

/* A change that invalidates encodings: new generation, app included. */
static void
registry_touch(struct registry *reg, struct reg_app *a)
{
	reg->gen++;
	if (a != NULL)
		a->gen = reg->gen;
}

/* What a lease costs on the heap: itself and its instance. */
static size_t
lease_cost(const struct lease *l)
{
	return (sizeof *l + INSTANCE_ALLOC_OVERHEAD +
	    instance_stored_size(l->inst));
}


/*
 * Drop the oldest queue record. early: it goes before its retention time
 * (a bound was hit), so deltas stay marked incomplete until it would have
 * expired anyway, and encodings are invalidated to carry the mark.
 */
static void
registry_dequeue(struct registry *reg, int64_t now, int early)
{
	struct change	*c = &reg->q[reg->qhead];

	if (early && c->ts >= now - reg->conf.retention_ms) {
		if (c->ts > reg->qtrunc_ts)
			reg->qtrunc_ts = c->ts;
		reg->stats.delta_dropped++;
		registry_touch(reg, NULL);
	}
	lease_unref(reg, c->lease);
	reg->qhead = (reg->qhead + 1) % reg->qcap;
	reg->qn--;
}

/*
 * Append to the recently-changed queue; past the count or the byte bound
 * the oldest records go (never the one just added).
 */
static void
registry_enqueue(struct registry *reg, struct lease *l, int64_t now)
{
	struct change	*nq;
	size_t		 i, ncap;

	if (reg->qn == reg->qmax)
		registry_dequeue(reg, now, 1);
	/* The ring itself takes at most half the byte bound. */
	if (reg->qn == reg->qcap && reg->qcap > 0 &&
	    reg->conf.max_delta_bytes > 0 && reg->qcap * 2 * sizeof *reg->q >
	    reg->conf.max_delta_bytes / 2)
		registry_dequeue(reg, now, 1);
	if (reg->qn == reg->qcap) {
		ncap = reg->qcap == 0 ? 64 : reg->qcap * 2;
		if (ncap > reg->qmax)
			ncap = reg->qmax;
		nq = xreallocarray(NULL, ncap, sizeof *nq);
		for (i = 0; i < reg->qn; i++)
			nq[i] = reg->q[(reg->qhead + i) % reg->qcap];
		free(reg->q);
		reg->q = nq;
		reg->qcap = ncap;
		reg->qhead = 0;
	}
	l->refs++;
	reg->q[(reg->qhead + reg->qn) % reg->qcap].lease = l;
	reg->q[(reg->qhead + reg->qn) % reg->qcap].ts = now;
	reg->qn++;
	while (reg->conf.max_delta_bytes > 0 && reg->qn > 1 &&
	    registry_delta_bytes(reg) > reg->conf.max_delta_bytes)
		registry_dequeue(reg, now, 1);
}

/*
 * Override by id; an entry not accessed for override_ttl_ms is gone
 * (Guava expireAfterAccess, checked lazily). touch counts as an access.
 */
static struct override *
override_find(struct registry *reg, const char *id, int64_t now, int touch)
{
	struct htab_node	*n;
	struct override	*o;
	uint64_t	 h;

	if (reg->noverrides == 0)
		return (NULL);	/* the usual case: no id to hash */
	h = hash_str(id);
	for (n = htab_first(&reg->override_tab, h); n != NULL; n = n->next) {
		if (n->hash != h)
			continue;
		o = CONTAINER_OF(n, struct override, node);
		if (strcmp(o->id, id) != 0)
			continue;
		if (now - o->access_ts > reg->conf.override_ttl_ms) {
			override_del(reg, id);
			return (NULL);
		}
		if (touch) {
			o->access_ts = now;
			TAILQ_REMOVE(&reg->override_lru, o, entry);
			TAILQ_INSERT_TAIL(&reg->override_lru, o, entry);
		}
		return (o);
	}
	return (NULL);
}

/* Put an override; bounded by max_instances, the least used goes first. */
static void
override_put(struct registry *reg, const char *id, enum instance_status st,
    int64_t now)
{
	struct override	*o;

	if ((o = override_find(reg, id, now, 1)) != NULL) {
		o->status = st;
		return;
	}
	if (reg->noverrides >= reg->conf.max_instances &&
	    (o = TAILQ_FIRST(&reg->override_lru)) != NULL)
		override_del(reg, o->id);
	o = xcalloc(1, sizeof *o);
	o->id = xstrdup(id);
	o->status = st;
	o->access_ts = now;
	htab_insert(&reg->override_tab, &o->node, hash_str(id));
	TAILQ_INSERT_TAIL(&reg->override_lru, o, entry);
	reg->noverrides++;
}

/* Remove the override for id; 1 if there was one. */
static int
override_del(struct registry *reg, const char *id)
{
	struct htab_node	*n;
	struct override	*o;
	uint64_t	 h;

	if (reg->noverrides == 0)
		return (0);
	h = hash_str(id);
	for (n = htab_first(&reg->override_tab, h); n != NULL; n = n->next) {
		if (n->hash != h)
			continue;
		o = CONTAINER_OF(n, struct override, node);
		if (strcmp(o->id, id) != 0)
			continue;
		htab_remove(&reg->override_tab, &o->node);
		TAILQ_REMOVE(&reg->override_lru, o, entry);
		reg->noverrides--;
		free(o->id);
		free(o);
		return (1);
	}
	return (0);
}

/* Drop overrides not accessed within the TTL, oldest access first. */
static void
override_purge(struct registry *reg, int64_t now)
{
	struct override	*o;

	while ((o = TAILQ_FIRST(&reg->override_lru)) != NULL &&
	    now - o->access_ts > reg->conf.override_ttl_ms)
		override_del(reg, o->id);
}

/* Tombstone for a key, or NULL. */
static struct tombstone *
tomb_find(struct registry *reg, const struct reg_key *k)
{
	struct htab_node		*n;
	struct tombstone	*t;
	uint64_t		 h;

	if (reg->ntombs == 0)
		return (NULL);
	h = registry_key_hash(k->ah, k->ih);
	for (n = htab_first(&reg->tomb_tab, h); n != NULL; n = n->next) {
		if (n->hash != h)
			continue;
		t = CONTAINER_OF(n, struct tombstone, node);
		if (strcmp(t->id, k->id) == 0 &&
		    strcasecmp(t->app, k->app) == 0)
			return (t);
	}
	return (NULL);
}

/* The tombstone for a key if it is within tombstone_ms of mono. */
static struct tombstone *
tomb_live(struct registry *reg, const struct reg_key *k, int64_t mono)
{
	struct tombstone	*t;

	if ((t = tomb_find(reg, k)) == NULL)
		return (NULL);
	if (mono - t->mono > reg->conf.tombstone_ms) {
		tomb_del(reg, t);
		return (NULL);
	}
	return (t);
}

/*
 * Remember that (app, id) was cancelled at origin time ts (a later one
 * never moves it back); bounded, the oldest goes. Retention restarts.
 */
static void
tomb_set(struct registry *reg, const struct reg_key *k, int64_t ts,
    int64_t mono)
{
	struct tombstone	*t;

	if ((t = tomb_find(reg, k)) != NULL) {
		if (t->ts > ts)
			ts = t->ts;
		tomb_del(reg, t);
	}
	if (reg->ntombs >= reg->conf.max_instances &&
	    (t = TAILQ_FIRST(&reg->tomb_fifo)) != NULL)
		tomb_del(reg, t);
	t = xcalloc(1, sizeof *t);
	t->app = xstrdup(k->app);
	t->id = xstrdup(k->id);
	t->ts = ts;
	t->mono = mono;
	htab_insert(&reg->tomb_tab, &t->node, registry_key_hash(k->ah,
	    k->ih));
	TAILQ_INSERT_TAIL(&reg->tomb_fifo, t, entry);
	reg->ntombs++;
}

/* Forget one tombstone. */
static void
tomb_del(struct registry *reg, struct tombstone *t)
{
	htab_remove(&reg->tomb_tab, &t->node);
	TAILQ_REMOVE(&reg->tomb_fifo, t, entry);
	reg->ntombs--;
	free(t->app);
	free(t->id);
	free(t);
}

/* Record "APP(id)" in a last-1000 ring, overwriting the oldest. */
static void
recent_add(struct recent_ring *r, int64_t ts, const char *app,
    const char *id)
{
	struct recent	*e = &r->v[r->next];
	size_t		 an = strlen(app), in = strlen(id);

	/* What xasprintf("%s(%s)") wrote, in the slot's bytes if they do. */
	if (e->cap < an + in + 3) {
		free(e->what);
		e->cap = an + in + 3;
		e->what = xmalloc(e->cap);
	}
	memcpy(e->what, app, an);
	e->what[an] = '(';
	memcpy(e->what + an + 1, id, in);
	memcpy(e->what + an + 1 + in, ")", 2);
	e->ts = ts;
	r->next = (r->next + 1) % REGISTRY_RECENT_MAX;
	if (r->n < REGISTRY_RECENT_MAX)
		r->n++;
}

/* Free a ring's strings. */
static void
recent_clear(struct recent_ring *r)
{
	size_t	i;

	for (i = 0; i < REGISTRY_RECENT_MAX; i++)
		free(r->v[i].what);
	memset(r, 0, sizeof *r);
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

/* Whether a lastDirtyTimestamp is further ahead than max_skew_ms. */
static int
registry_is_future(const struct registry *reg, int64_t dirty,
    struct hk_time now)
{
	return (reg->conf.max_skew_ms > 0 &&
	    dirty > now.wall_ms + reg->conf.max_skew_ms);
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
		if (registry_is_future(reg, in->last_dirty_ts, now)) {
			reg->stats.future_refused++;
			instance_free(in);
			return (REG_FUTURE);
		}
		t = l == NULL ? tomb_live(reg, &k, mono) : NULL;
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
				reg->counts[l->inst->status]--;
				l->app->counts[l->inst->status]--;
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
	 * peer orders leaders alike (README, "Watch and leader").
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
	recent_add(&reg->registered, now.wall_ms, a->name, id);

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
static void
registry_remove(struct registry *reg, struct lease *l, int evict,
    int replicated, int64_t cancel_ts, struct hk_time now)
{
	struct reg_app	*a = l->app;
	uint64_t	 app_hash = a->node.hash;	/* a may be dropped */
	struct lease	*last;
	struct instance	*r;
	struct reg_key	 k;

	recent_add(&reg->cancelled, now.wall_ms, a->name, lease_id(l));
	override_del(reg, lease_id(l));

	reg->counts[l->inst->status]--;
	a->counts[l->inst->status]--;
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
		tomb_set(reg, &k, cancel_ts, now.mono_ms);
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
		recent_add(&reg->cancelled, now.wall_ms, up, id);
		reg_key_set(&k, up, id);
		tomb_set(reg, &k, ts, now.mono_ms);
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
	if (registry_is_future(reg, last_dirty, now)) {
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
	if (registry_is_future(reg, last_dirty, now)) {
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

/*
 * storeOverriddenStatusIfRequired: remember a peer's override and show it
 * on every lease with that id. UNKNOWN means "none" and is ignored.
 */
void
registry_set_override(struct registry *reg, const char *id,
    enum instance_status st, int64_t now)
{
	struct lease	*l;
	REGISTRY_CHECKED(reg);

	if (id == NULL || st == STATUS_UNKNOWN || (unsigned)st >= STATUS_COUNT)
		return;
	override_put(reg, id, st, now);
	for (l = id_first(reg, id, hash_str(id)); l != NULL; l = l->id_next) {
		if (l->inst->overridden_status == st)
			continue;
		l->inst->overridden_status = st;
		registry_touch(reg, l->app);
	}
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

/* The override for id (counts as an access), STATUS_UNKNOWN if none. */
enum instance_status
registry_override(struct registry *reg, const char *id, int64_t now)
{
	struct override	*o;
	REGISTRY_CHECKED(reg);

	if (id == NULL || (o = override_find(reg, id, now, 1)) == NULL)
		return (STATUS_UNKNOWN);
	return (o->status);
}

/* Walk the live overrides, least recently used first; cb must not mutate. */
void
registry_foreach_override(struct registry *reg,
    void (*cb)(const char *, enum instance_status, void *), void *arg,
    int64_t now)
{
	struct override	*o;
	REGISTRY_CHECKED(reg);

	override_purge(reg, now);
	TAILQ_FOREACH(o, &reg->override_lru, entry) {
		if (now - o->access_ts <= reg->conf.override_ttl_ms)
			cb(o->id, o->status, arg);
	}
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
	/* buf_steal() leaves an empty buffer unterminated: avoid it. */
	if (reg->size == 0)
		return (xstrdup(""));
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
static void
app_append(struct application *a, struct instance *in)
{
	if (a->n == a->cap) {
		a->cap = a->cap == 0 ? 4 : a->cap * 2;
		a->instances = xreallocarray(a->instances, a->cap,
		    sizeof *a->instances);
	}
	a->instances[a->n++] = in;
}

/*
 * The delta (§5.9) in O(changes): a backward pass marks the last queue
 * entry of each (app, id), a forward pass groups apps by first appearance
 * and copies the marked leases' current state in queue order.
 */
struct applications *
registry_delta(struct registry *reg, int64_t now)
{
	struct applications	 *as = applications_new();
	struct application	**groups;
	struct lease		 *l, *o;
	size_t			 *heads, *next, *gheads, *gnext, nb, i, j, k;
	char			 *win;
	uint64_t		  h;
	REGISTRY_CHECKED(reg);

	(void)now;
	if (reg->qn == 0)
		return (as);
	for (nb = 16; nb < reg->qn * 2; nb *= 2)
		;
	heads = xreallocarray(NULL, nb, sizeof *heads);
	gheads = xreallocarray(NULL, nb, sizeof *gheads);
	for (i = 0; i < nb; i++)
		heads[i] = gheads[i] = SIZE_MAX;
	next = xreallocarray(NULL, reg->qn, sizeof *next);
	gnext = xreallocarray(NULL, reg->qn, sizeof *gnext);
	groups = xcalloc(reg->qn, sizeof *groups);
	win = xcalloc(reg->qn, 1);

	for (k = reg->qn; k-- > 0;) {
		l = reg->q[(reg->qhead + k) % reg->qcap].lease;
		h = lease_key_hash(l) & (nb - 1);
		for (j = heads[h]; j != SIZE_MAX; j = next[j]) {
			o = reg->q[(reg->qhead + j) % reg->qcap].lease;
			if (o == l || (strcmp(lease_id(o), lease_id(l)) == 0 &&
			    strcasecmp(o->inst->app, l->inst->app) == 0))
				break;
		}
		if (j != SIZE_MAX)
			continue;
		win[k] = 1;
		next[k] = heads[h];
		heads[h] = k;
	}

	for (k = 0; k < reg->qn; k++) {
		l = reg->q[(reg->qhead + k) % reg->qcap].lease;
		h = l->app_hash & (nb - 1);
		for (j = gheads[h]; j != SIZE_MAX; j = gnext[j]) {
			if (strcasecmp(groups[j]->name, l->inst->app) == 0)
				break;
		}
		if (j == SIZE_MAX) {
			j = k;
			groups[k] = application_new(l->inst->app);
			applications_add(as, groups[k]);
			gnext[k] = gheads[h];
			gheads[h] = k;
		}
		if (win[k])
			app_append(groups[j], instance_dup(l->inst));
	}

	free(heads);
	free(next);
	free(gheads);
	free(gnext);
	free(groups);
	free(win);
	return (as);
}

/*
 * A delta walk (registry.h): registry_delta()'s two passes over the
 * queue, then the emission, each resumable at a record index. Pass 1
 * (from the tail) marks each lease's last record, the winner; pass 2
 * (from the head) finds each record's group, the first record of its
 * application, and chains the winners of a group in queue order; the
 * emission follows the groups in order of first appearance.
 */
struct reg_dwalk {
	uint64_t	 gen;
	size_t		 qhead, qn;
	int		 phase;		/* 0 winners, 1 groups, 2 emit, 3 done */
	size_t		 k;		/* the next record of the phase */
	size_t		 nb;
	size_t		*heads, *next;	/* pass 1: by lease key */
	size_t		*gheads, *gnext;	/* pass 2: by app */
	size_t		*gfirst, *gtail;	/* a group's winners, */
	size_t		*link;		/* chained in queue order */
	size_t		*order;		/* the group heads, in order */
	size_t		 ng, gi;	/* groups; the next one to emit */
	size_t		 at;		/* its next winner, SIZE_MAX: first */
	uint8_t		*win;
};

/* The lease of queue record k (0 is the head). */
static struct lease *
dwalk_lease(const struct registry *reg, size_t k)
{
	return (reg->q[(reg->qhead + k) % reg->qcap].lease);
}

/* Begin a walk of the delta as the queue is now. */
struct reg_dwalk *
registry_dwalk_new(const struct registry *reg)
{
	struct reg_dwalk	*w = xcalloc(1, sizeof *w);
	size_t			 i, n = reg->qn;

	w->gen = reg->gen;
	w->qhead = reg->qhead;
	w->qn = n;
	if (n == 0) {
		w->phase = 3;
		return (w);
	}
	for (w->nb = 16; w->nb < n * 2; w->nb *= 2)
		;
	w->heads = xreallocarray(NULL, w->nb, sizeof *w->heads);
	w->gheads = xreallocarray(NULL, w->nb, sizeof *w->gheads);
	for (i = 0; i < w->nb; i++)
		w->heads[i] = w->gheads[i] = SIZE_MAX;
	w->next = xreallocarray(NULL, n, sizeof *w->next);
	w->gnext = xreallocarray(NULL, n, sizeof *w->gnext);
	w->gfirst = xreallocarray(NULL, n, sizeof *w->gfirst);
	w->gtail = xreallocarray(NULL, n, sizeof *w->gtail);
	w->link = xreallocarray(NULL, n, sizeof *w->link);
	w->order = xreallocarray(NULL, n, sizeof *w->order);
	w->win = xcalloc(n, 1);
	w->k = n;		/* pass 1 runs from the tail */
	return (w);
}

/* Free a walk. */
void
registry_dwalk_free(struct reg_dwalk *w)
{
	if (w == NULL)
		return;
	free(w->heads);
	free(w->next);
	free(w->gheads);
	free(w->gnext);
	free(w->gfirst);
	free(w->gtail);
	free(w->link);
	free(w->order);
	free(w->win);
	free(w);
}

/* Whether the queue is still the one the walk began on. */
int
registry_dwalk_valid(const struct registry *reg, const struct reg_dwalk *w)
{
	return (w->gen == reg->gen && w->qhead == reg->qhead &&
	    w->qn == reg->qn);
}

/* Up to max records of the walk; 1 when it is complete. */
int
registry_dwalk_step(const struct registry *reg, struct reg_dwalk *w,
    size_t max, size_t *donep, int (*emit)(const char *,
    const struct instance *, int, void *), void *arg)
{
	struct lease	*l, *o;
	size_t		 done = 0, h, j, k;
	int		 first;

	while (w->phase == 0 && done < max) {
		if (w->k == 0) {
			w->phase = 1;
			free(w->heads);
			free(w->next);
			w->heads = w->next = NULL;
			break;
		}
		k = --w->k;
		done++;
		l = dwalk_lease(reg, k);
		h = lease_key_hash(l) & (w->nb - 1);
		for (j = w->heads[h]; j != SIZE_MAX; j = w->next[j]) {
			o = dwalk_lease(reg, j);
			if (o == l || (strcmp(lease_id(o), lease_id(l)) == 0 &&
			    strcasecmp(o->inst->app, l->inst->app) == 0))
				break;
		}
		if (j != SIZE_MAX)
			continue;
		w->win[k] = 1;
		w->next[k] = w->heads[h];
		w->heads[h] = k;
	}
	while (w->phase == 1 && done < max) {
		if (w->k == w->qn) {
			w->phase = 2;
			w->at = SIZE_MAX;
			break;
		}
		k = w->k++;
		done++;
		l = dwalk_lease(reg, k);
		h = l->app_hash & (w->nb - 1);
		for (j = w->gheads[h]; j != SIZE_MAX; j = w->gnext[j]) {
			if (strcasecmp(dwalk_lease(reg, j)->inst->app,
			    l->inst->app) == 0)
				break;
		}
		if (j == SIZE_MAX) {
			j = k;
			w->gnext[k] = w->gheads[h];
			w->gheads[h] = k;
			w->gtail[k] = w->gfirst[k] = SIZE_MAX;
			w->order[w->ng++] = k;
		}
		if (!w->win[k])
			continue;
		w->link[k] = SIZE_MAX;
		if (w->gtail[j] == SIZE_MAX)
			w->gfirst[j] = k;
		else
			w->link[w->gtail[j]] = k;
		w->gtail[j] = k;
	}
	while (w->phase == 2 && done < max) {
		if (w->gi == w->ng) {
			w->phase = 3;
			break;
		}
		j = w->order[w->gi];
		k = w->at == SIZE_MAX ? w->gfirst[j] : w->link[w->at];
		if (k == SIZE_MAX) {
			w->gi++;
			w->at = SIZE_MAX;
			continue;
		}
		done++;
		l = dwalk_lease(reg, k);
		first = w->at == SIZE_MAX;
		w->at = k;
		if (emit(dwalk_lease(reg, j)->inst->app, l->inst, first, arg))
			break;
	}
	*donep = done;
	return (w->phase == 3);
}

/*
 * The retention timer's work: drop queue items older than retention_ms
 * from the head, and expired tombstones and overrides (monotonic ms).
 */
void
registry_purge_deltas(struct registry *reg, int64_t now)
{
	REGISTRY_CHECKED(reg);
	(void)registry_purge_deltas_step(reg, now, SIZE_MAX);
}

/*
 * The same, at most max queue records and tombstones a call (a million
 * records can fall past retention at once after a preload): 1 when all
 * that is due is gone, 0 when a later call must go on.
 */
int
registry_purge_deltas_step(struct registry *reg, int64_t now, size_t max)
{
	struct tombstone	*t;
	size_t			 done = 0;
	REGISTRY_CHECKED(reg);

	while (reg->qn > 0 &&
	    reg->q[reg->qhead].ts < now - reg->conf.retention_ms) {
		if (done++ == max)
			return (0);
		registry_dequeue(reg, now, 0);
	}
	while ((t = TAILQ_FIRST(&reg->tomb_fifo)) != NULL &&
	    now - t->mono > reg->conf.tombstone_ms) {
		if (done++ == max)
			return (0);
		tomb_del(reg, t);
	}
	override_purge(reg, now);
	return (1);
}

/* Entries in the recently-changed queue. */
size_t
registry_delta_size(const struct registry *reg)
{
	return (reg->qn);
}

/* 0 while a record younger than the retention time was dropped early. */
int
registry_delta_complete(const struct registry *reg, int64_t now)
{
	return (reg->qtrunc_ts == 0 ||
	    reg->qtrunc_ts < now - reg->conf.retention_ms);
}

/* Bytes of the delta queue: its ring and the cancelled leases it holds. */
size_t
registry_delta_bytes(const struct registry *reg)
{
	return (reg->qcap * sizeof *reg->q + reg->qbytes);
}

/* Bytes of the registered leases. */
size_t
registry_bytes(const struct registry *reg)
{
	return (reg->bytes);
}

/* The caller's bytes counted against max_bytes (the cache's encodings). */
void
registry_set_external_bytes(struct registry *reg, size_t n)
{
	REGISTRY_CHECKED(reg);
	reg->ext_bytes = n;
}

/* Everything max_bytes covers: leases, the delta queue, encodings. */
size_t
registry_memory_used(const struct registry *reg)
{
	return (reg->bytes + registry_delta_bytes(reg) + reg->ext_bytes);
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
	if (as->n == 0)
		as->apps_hashcode = xstrdup("");   /* see registry_hashcode */
	else
		as->apps_hashcode = applications_hashcode(as);
	return (as);
}

/*
 * Eviction and self-preservation: the policy is evict.c's; the registry
 * tells it about leases and renewals and forwards these calls.
 */

/* openForTraffic: expected := count, threshold recomputed. */
void
registry_open_for_traffic(struct registry *reg, int count, int64_t now)
{
	REGISTRY_CHECKED(reg);
	(void)now;
	evict_open_for_traffic(&reg->ev, count);
}

/* Whether the run may take lease l (expired at the run's time). */
static int
evict_candidate(const struct evict_slices *es, const struct lease *l)
{
	return (lease_is_expired(l, es->run.extra, es->mono) &&
	    (!es->run.only_uncounted || l->uncounted));
}

/*
 * The eviction task (§5.11) a slice at a time: evict.c plans the run
 * (grace for a late timer, which leases may go, how many); the first
 * walk counts the expired candidates, the second removes each with
 * probability (still to take) / (still to see), a uniform random choice
 * of the number evict.c allows. See registry.h.
 */
int
registry_evict_step(struct registry *reg, struct hk_time now, size_t max,
    int *evicted)
{
	struct evict_slices	*es = &reg->evs;
	struct reg_app		*a;
	struct lease		*l;
	size_t			 done = 0, left;
	REGISTRY_CHECKED(reg);

	*evicted = 0;
	if (!es->busy) {
		memset(es, 0, sizeof *es);
		if (!evict_run_begin(&reg->ev, now.mono_ms, reg->size,
		    &es->run))
			return (1);
		es->busy = 1;
		es->mono = now.mono_ms;
		es->size = reg->size;
		es->ai = reg->napps;
	}
	while (done < max) {
		/* The next place down; a removed app's place was seen. */
		if (es->ai > reg->napps)
			es->ai = reg->napps;
		if (es->ai == 0) {
			if (es->phase == 1)
				break;
			es->phase = 1;
			es->limit = evict_run_limit(&reg->ev, &es->run,
			    es->size, es->nexp);
			if (es->limit == 0)
				break;
			es->ai = reg->napps;
			es->li = 0;
			continue;
		}
		a = reg->apps[es->ai - 1];
		if (es->li == 0 || es->li > a->n)
			es->li = a->n;
		l = a->leases[--es->li];
		done++;
		if (es->li == 0)
			es->ai--;
		if (!evict_candidate(es, l))
			continue;
		if (es->phase == 0) {
			es->nexp++;
			continue;
		}
		left = es->nexp > es->seen ? es->nexp - es->seen : 1;
		es->seen++;
		if (es->taken < es->limit &&
		    evict_pick(0, left) < es->limit - es->taken) {
			registry_remove(reg, l, 1, 0, 0, now);
			es->taken++;
			(*evicted)++;
			done += REGISTRY_EVICT_REMOVE_WEIGHT;
		}
		if (es->taken == es->limit)
			break;
	}
	if (done >= max && !(es->phase == 1 && es->taken == es->limit))
		return (0);
	es->busy = 0;
	return (1);
}

/* A whole eviction run in one call: the number evicted. */
int
registry_evict(struct registry *reg, struct hk_time now)
{
	int	n;
	REGISTRY_CHECKED(reg);

	reg->evs.busy = 0;
	(void)registry_evict_step(reg, now, SIZE_MAX, &n);
	return (n);
}

/* Roll the renews-per-minute bucket; the caller ticks every 60 s. */
void
registry_tick_minute(struct registry *reg, int64_t now)
{
	REGISTRY_CHECKED(reg);
	(void)now;
	evict_tick_minute(&reg->ev);
}

/* isLeaseExpirationEnabled (§5.11): the self-preservation switch. */
int
registry_lease_expiration_enabled(const struct registry *reg)
{
	return (evict_expiration_enabled(&reg->ev));
}

/* isBelowRenewThreshold, minus the start-up wait (the caller's part). */
int
registry_is_below_threshold(const struct registry *reg)
{
	return (evict_is_below_threshold(&reg->ev));
}

/* Live leases left out of self-preservation (REGISTRY_UNCOUNTED_KEY). */
int
registry_uncounted(const struct registry *reg)
{
	return (reg->ev.uncounted);
}

/* expectedNumberOfClientsSendingRenews. */
int
registry_expected_clients(const struct registry *reg)
{
	return (reg->ev.expected);
}

/* numberOfRenewsPerMinThreshold. */
int
registry_renew_threshold(const struct registry *reg)
{
	return (reg->ev.threshold);
}

/* Renewals counted in the previous complete minute. */
long
registry_renews_last_min(const struct registry *reg)
{
	return (reg->ev.renews_last);
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

/* The origin time of (app, id)'s cancel, 0 if no tombstone lives. */
int64_t
registry_tombstone(struct registry *reg, const char *app, const char *id,
    int64_t mono)
{
	struct tombstone	*t;
	struct reg_key		 k;
	REGISTRY_CHECKED(reg);

	if (app == NULL || id == NULL)
		return (0);
	reg_key_set(&k, app, id);
	if ((t = tomb_live(reg, &k, mono)) == NULL)
		return (0);
	return (t->ts);
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

/* n bytes into the copy hash, continuing from h (fixed key: peers compare). */
static uint64_t
copy_hash_bytes(uint64_t h, const void *p, size_t n)
{
	return (hash_fixed(h, p, n));
}

/* A string (NULL apart from "") into the hash. */
static uint64_t
copy_hash_str(uint64_t h, const char *s)
{
	if (s == NULL)
		return (copy_hash_bytes(h, "\377", 1));
	return (copy_hash_bytes(h, s, strlen(s) + 1));
}

/* An integer into the hash. */
static uint64_t
copy_hash_i64(uint64_t h, int64_t v)
{
	return (copy_hash_bytes(h, &v, sizeof v));
}

/* A map into the hash, independent of its entries' order. */
static uint64_t
copy_hash_kv(uint64_t h, const struct kvlist *kv)
{
	uint64_t	sum = 0, e;
	size_t		i;

	for (i = 0; i < kv->n; i++) {
		e = copy_hash_str(REGISTRY_COPY_HASH_SEED, kv->v[i].key);
		e = copy_hash_str(e, kv->v[i].value);
		e ^= e >> 31;
		e *= 0xbf58476d1ce4e5b9ULL;
		sum += e ^ (e >> 29);
	}
	h = copy_hash_i64(h, (int64_t)kv->n);
	return (copy_hash_i64(h, (int64_t)sum));
}

/* Every field replication carries; see registry.h. */
uint64_t
registry_copy_hash(const struct instance *in)
{
	uint64_t	h = REGISTRY_COPY_HASH_SEED;

	h = copy_hash_str(h, in->app);
	h = copy_hash_str(h, instance_id(in));
	h = copy_hash_i64(h, in->last_dirty_ts);
	h = copy_hash_i64(h, in->status);
	h = copy_hash_i64(h, in->overridden_status);
	h = copy_hash_kv(h, &in->metadata);
	h = copy_hash_str(h, in->host_name);
	h = copy_hash_str(h, in->ip_addr);
	h = copy_hash_str(h, in->sid);
	h = copy_hash_i64(h, in->port);
	h = copy_hash_i64(h, in->secure_port);
	h = copy_hash_i64(h, in->port_enabled);
	h = copy_hash_i64(h, in->secure_port_enabled);
	h = copy_hash_i64(h, in->country_id);
	h = copy_hash_i64(h, in->has_dc ? (int64_t)in->dc_name : -1);
	h = copy_hash_kv(h, &in->dc_metadata);
	h = copy_hash_i64(h, in->has_lease ? in->lease.renewal_interval_secs :
	    -1);
	h = copy_hash_i64(h, in->has_lease ? in->lease.duration_secs : -1);
	h = copy_hash_str(h, in->app_group_name);
	h = copy_hash_str(h, in->home_page_url);
	h = copy_hash_str(h, in->status_page_url);
	h = copy_hash_str(h, in->health_check_url);
	h = copy_hash_str(h, in->secure_health_check_url);
	h = copy_hash_str(h, in->vip_address);
	h = copy_hash_str(h, in->secure_vip_address);
	h = copy_hash_str(h, in->asg_name);
	return (h);
}

/*
 * Order two copies of one instance by origin times (registry.h): -1, 0
 * (the same copy) or 1 when a beats b.
 */
static int
registry_copy_cmp(const struct instance *a, const struct instance *b)
{
	uint64_t	ha, hb;

	if (a->last_dirty_ts != b->last_dirty_ts)
		return (a->last_dirty_ts > b->last_dirty_ts ? 1 : -1);
	ha = registry_copy_hash(a);
	hb = registry_copy_hash(b);
	if (ha == hb)
		return (0);
	if (a->last_updated_ts != b->last_updated_ts)
		return (a->last_updated_ts > b->last_updated_ts ? 1 : -1);
	return (ha > hb ? 1 : -1);
}

/* What to do with a peer's copy r (registry.h); r is not changed. */
enum registry_recon
registry_reconcile(struct registry *reg, const struct instance *r,
    int64_t mono, int64_t *cancel_ts)
{
	struct lease		*l;
	struct tombstone	*t;
	struct reg_key		 k;
	REGISTRY_CHECKED(reg);

	if (cancel_ts != NULL)
		*cancel_ts = 0;
	if (r == NULL || r->app == NULL)
		return (RECON_KEEP);
	reg_key_set(&k, r->app, instance_id(r));
	if ((l = lease_find(reg, &k)) != NULL &&
	    (!registry_lease_expiration_enabled(reg) ||
	    !lease_is_expired(l, 0, mono)))
		return (registry_copy_cmp(r, l->inst) > 0 ? RECON_ADOPT :
		    RECON_KEEP);
	if ((t = tomb_live(reg, &k, mono)) != NULL &&
	    r->last_dirty_ts <= t->ts) {
		if (cancel_ts != NULL)
			*cancel_ts = t->ts;
		return (RECON_CANCEL);
	}
	return (RECON_ADOPT);
}

/*
 * Take a peer's copy as a replicated registration: its override state
 * first (a copy without one deletes ours), then the copy itself.
 */
enum registry_rc
registry_adopt(struct registry *reg, struct instance *r, struct hk_time now)
{
	const char	*id;
	REGISTRY_CHECKED(reg);

	if (r == NULL || r->app == NULL) {
		instance_free(r);
		return (REG_INVALID);
	}
	id = instance_id(r);
	if (r->overridden_status == STATUS_UNKNOWN)
		override_del(reg, id);
	else if ((unsigned)r->overridden_status < STATUS_COUNT)
		registry_set_override(reg, id, r->overridden_status,
		    now.mono_ms);
	return (registry_register(reg, r, 1, now));
}

/* Walk a last-1000 ring, newest first. */
void
registry_foreach_recent(const struct registry *reg, int cancelled,
    void (*cb)(int64_t, const char *, void *), void *arg)
{
	const struct recent_ring	*r;
	size_t				 i, k;

	r = cancelled ? &reg->cancelled : &reg->registered;
	for (i = 0; i < r->n; i++) {
		k = (r->next + REGISTRY_RECENT_MAX - 1 - i) %
		    REGISTRY_RECENT_MAX;
		cb(r->v[k].ts, r->v[k].what, arg);
	}
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

/* ------------------------------------------------------------------ */
/* The walker: every counter and index checked against the structures. */

/* Record the first breach the walk finds; -1. */
static int
rcheck_fail(char **cause, const char *fmt, ...)
{
	va_list	 ap;
	char	*msg;

	va_start(ap, fmt);
	xvasprintf(&msg, fmt, ap);
	va_end(ap);
	xasprintf(cause, "registry: %s", msg);
	free(msg);
	return (-1);
}

/* Order of lease pointers, for counting the queue's references. */
static int
rcheck_ptr_cmp(const void *a, const void *b)
{
	uintptr_t	x = (uintptr_t)*(struct lease *const *)a;
	uintptr_t	y = (uintptr_t)*(struct lease *const *)b;

	return (x < y ? -1 : x > y);
}

/* How many times l is in the sorted v[n]. */
static size_t
rcheck_occurs(struct lease **v, size_t n, const struct lease *l)
{
	size_t	lo = 0, hi = n, mid, k = 0;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if ((uintptr_t)v[mid] < (uintptr_t)l)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo + k < n && v[lo + k] == l)
		k++;
	return (k);
}

/* One registered lease of app a, at position j. */
static int
rcheck_lease(const struct registry *reg, const struct reg_app *a, size_t j,
    struct lease **qv, size_t qn, char **cause)
{
	const struct lease	*l = a->leases[j];
	const char		*id;
	struct reg_key		 k;

	if (l == NULL || l->inst == NULL)
		return (rcheck_fail(cause, "%s[%zu]: no lease or instance",
		    a->name, j));
	id = lease_id(l);
	if (l->idx != j)
		return (rcheck_fail(cause, "%s/%s: idx %u at position %zu",
		    a->name, id, l->idx, j));
	if (l->app != a)
		return (rcheck_fail(cause, "%s/%s: lease names another app",
		    a->name, id));
	if ((unsigned)l->inst->status >= STATUS_COUNT)
		return (rcheck_fail(cause, "%s/%s: status %d", a->name, id,
		    (int)l->inst->status));
	if (l->duration_secs <= 0)
		return (rcheck_fail(cause, "%s/%s: duration %d", a->name, id,
		    (int)l->duration_secs));
	if (l->app_hash != a->node.hash || l->id_hash != hash_str(id))
		return (rcheck_fail(cause, "%s/%s: stale key hashes", a->name,
		    id));
	if (l->refs != 1 + rcheck_occurs(qv, qn, l))
		return (rcheck_fail(cause, "%s/%s: refs %u, held %zu times",
		    a->name, id, l->refs, 1 + rcheck_occurs(qv, qn, l)));
	if (l->bytes != lease_cost(l))
		return (rcheck_fail(cause, "%s/%s: bytes %zu, costs %zu",
		    a->name, id, l->bytes, lease_cost(l)));
	k.app = a->name;
	k.id = id;
	k.ah = l->app_hash;
	k.ih = l->id_hash;
	if (lease_find(reg, &k) != l)
		return (rcheck_fail(cause, "%s/%s: the lease index does not "
		    "find it", a->name, id));
	/*
	 * The id index: l heads its id's chain (and the index finds it
	 * there) or follows a lease of the same id that links back to it.
	 * registry_check walks each chain once from its head.
	 */
	if (l->id_prev == NULL) {
		if (id_first(reg, id, l->id_hash) != l)
			return (rcheck_fail(cause, "%s/%s: heads no chain the id "
			    "index finds", a->name, id));
	} else if (l->id_prev->id_next != l ||
	    strcmp(lease_id(l->id_prev), id) != 0)
		return (rcheck_fail(cause, "%s/%s: id chain link broken",
		    a->name, id));
	if (l->id_next != NULL && l->id_next->id_prev != l)
		return (rcheck_fail(cause, "%s/%s: id chain back link broken",
		    a->name, id));
	return (0);
}

/* The delta queue: bounds, and what its cancelled leases hold. */
static int
rcheck_queue(const struct registry *reg, struct lease **qv, char **cause)
{
	const struct lease	*l;
	size_t			 i, qbytes = 0;

	if ((reg->q == NULL) != (reg->qcap == 0))
		return (rcheck_fail(cause, "queue array and qcap %zu disagree",
		    reg->qcap));
	if (reg->qn > reg->qcap || (reg->qcap > 0 && reg->qhead >= reg->qcap))
		return (rcheck_fail(cause, "queue qn %zu, qhead %zu, qcap %zu",
		    reg->qn, reg->qhead, reg->qcap));
	if (reg->qcap > reg->qmax)
		return (rcheck_fail(cause, "queue qcap %zu over qmax %zu",
		    reg->qcap, reg->qmax));
	for (i = 0; i < reg->qn; i++) {
		qv[i] = reg->q[(reg->qhead + i) % reg->qcap].lease;
		if (qv[i] == NULL || qv[i]->inst == NULL)
			return (rcheck_fail(cause, "queue entry %zu empty", i));
	}
	qsort(qv, reg->qn, sizeof *qv, rcheck_ptr_cmp);
	for (i = 0; i < reg->qn; i++) {
		l = qv[i];
		if (i > 0 && qv[i - 1] == l)
			continue;
		if (l->app != NULL)
			continue;	/* registered: rcheck_lease's */
		if (l->refs != rcheck_occurs(qv, reg->qn, l))
			return (rcheck_fail(cause, "cancelled %s: refs %u, "
			    "queued %zu times", lease_id(l), l->refs,
			    rcheck_occurs(qv, reg->qn, l)));
		qbytes += l->bytes;
	}
	if (qbytes != reg->qbytes)
		return (rcheck_fail(cause, "qbytes %zu, its cancelled leases "
		    "hold %zu", reg->qbytes, qbytes));
	return (0);
}

/* Overrides and tombstones: table, list and count agree. */
static int
rcheck_side_tables(const struct registry *reg, char **cause)
{
	const struct override	*o;
	const struct tombstone	*t;
	size_t			 n = 0;

	TAILQ_FOREACH(o, &reg->override_lru, entry) {
		if ((unsigned)o->status >= STATUS_COUNT ||
		    o->node.hash != hash_str(o->id))
			return (rcheck_fail(cause, "override %s: status %d or "
			    "hash", o->id, (int)o->status));
		n++;
	}
	if (n != reg->noverrides || htab_count(&reg->override_tab) != n)
		return (rcheck_fail(cause, "overrides: %zu listed, noverrides "
		    "%zu, table %zu", n, reg->noverrides,
		    htab_count(&reg->override_tab)));
	n = 0;
	TAILQ_FOREACH(t, &reg->tomb_fifo, entry) {
		if (t->node.hash != registry_key_hash(hash_str_upper(t->app),
		    hash_str(t->id)))
			return (rcheck_fail(cause, "tombstone %s/%s hashed "
			    "under another key", t->app, t->id));
		n++;
	}
	if (n != reg->ntombs || htab_count(&reg->tomb_tab) != n)
		return (rcheck_fail(cause, "tombstones: %zu listed, ntombs "
		    "%zu, table %zu", n, reg->ntombs,
		    htab_count(&reg->tomb_tab)));
	return (0);
}

/* Walk the registry; 0 when every counter and index holds (registry.h). */
int
registry_check(const struct registry *reg, char **cause)
{
	const struct reg_app	*a;
	const struct lease	*f;
	struct lease		**qv;
	size_t			 i, j, size = 0, bytes = 0, heads = 0;
	size_t			 chained = 0;
	size_t			 uncounted = 0;
	size_t			 counts[STATUS_COUNT] = { 0 };
	size_t			 acounts[STATUS_COUNT];
	int			 rc = -1, s;

	*cause = NULL;
	qv = xreallocarray(NULL, reg->qn + 1, sizeof *qv);
	if (rcheck_queue(reg, qv, cause) != 0)
		goto out;
	if (reg->napps > reg->capapps ||
	    htab_count(&reg->app_tab) != reg->napps) {
		rcheck_fail(cause, "napps %zu, capapps %zu, table %zu",
		    reg->napps, reg->capapps, htab_count(&reg->app_tab));
		goto out;
	}
	for (i = 0; i < reg->napps; i++) {
		a = reg->apps[i];
		if (a == NULL || a->idx != i || a->n == 0 || a->n > a->cap ||
		    registry_app_find_hashed(reg, a->name,
		    hash_str_upper(a->name)) != a) {
			rcheck_fail(cause, "app at %zu: idx, size or table "
			    "entry wrong", i);
			goto out;
		}
		memset(acounts, 0, sizeof acounts);
		for (j = 0; j < a->n; j++) {
			if (rcheck_lease(reg, a, j, qv, reg->qn, cause) != 0)
				goto out;
			acounts[a->leases[j]->inst->status]++;
			bytes += a->leases[j]->bytes;
			uncounted += a->leases[j]->uncounted;
			if (a->leases[j]->id_prev != NULL)
				continue;
			heads++;
			for (f = a->leases[j]; f != NULL &&
			    chained <= reg->size; f = f->id_next)
				chained++;
		}
		for (s = 0; s < STATUS_COUNT; s++) {
			if (acounts[s] != a->counts[s]) {
				rcheck_fail(cause, "%s: %zu %s counted, %zu "
				    "held", a->name, a->counts[s],
				    instance_status_name(s), acounts[s]);
				goto out;
			}
			counts[s] += acounts[s];
		}
		size += a->n;
	}
	if (size != reg->size || hidx_count(&reg->lease_idx) != size) {
		rcheck_fail(cause, "size %zu, leases %zu, lease index %zu",
		    reg->size, size, hidx_count(&reg->lease_idx));
		goto out;
	}
	for (s = 0; s < STATUS_COUNT; s++) {
		if (counts[s] != reg->counts[s]) {
			rcheck_fail(cause, "%zu %s counted, %zu held",
			    reg->counts[s], instance_status_name(s),
			    counts[s]);
			goto out;
		}
	}
	if (chained != size) {
		rcheck_fail(cause, "id chains hold %zu leases, %zu registered",
		    chained, size);
		goto out;
	}
	if (hidx_count(&reg->id_idx) != heads) {
		rcheck_fail(cause, "id index holds %zu, %zu ids registered",
		    hidx_count(&reg->id_idx), heads);
		goto out;
	}
	if (bytes != reg->bytes) {
		rcheck_fail(cause, "bytes %zu, its leases hold %zu",
		    reg->bytes, bytes);
		goto out;
	}
	if ((size_t)reg->ev.uncounted != uncounted) {
		rcheck_fail(cause, "evict counts %d uncounted leases, %zu "
		    "registered", reg->ev.uncounted, uncounted);
		goto out;
	}
	if (rcheck_side_tables(reg, cause) != 0)
		goto out;
	rc = 0;
out:
	free(qv);
	return (rc);
}

/* A public operation begins (REGISTRY_CHECKED). */
static struct registry *
registry_enter(struct registry *reg)
{
	reg->op_depth++;
	return (reg);
}

/*
 * A public operation ends: the outermost runs the walk when due; a breach
 * is fatal (the tests' mode).
 */
static void
registry_self_check(struct registry **regp)
{
	struct registry	*reg = *regp;
	char		*cause = NULL;

	if (--reg->op_depth > 0)
		return;
	if (!bug_check_due(&reg->check_left, reg->size + reg->qn))
		return;
	if (registry_check(reg, &cause) != 0)
		fatalx("%s: %s", __func__, cause);
}
