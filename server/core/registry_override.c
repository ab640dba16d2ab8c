/*
 * registry_override.c: the status override map (spec §5.6,
 * PUT/DELETE .../status). Keyed by instance id only, as Eureka's
 * overriddenInstanceStatusMap is, and expiring after access (Guava's
 * expireAfterAccess, checked lazily) with a least-recently-used list so
 * the map stays bounded by max_instances. Part of the registry module:
 * the lease table in registry.c consults it on register and renew;
 * the structures are in registry_int.h.
 */
#include <stdlib.h>
#include <string.h>

#include "registry_int.h"
#include "xmalloc.h"

/* The entry for id in the table, expired or not; NULL when none. */
static struct override *
override_lookup(struct registry *reg, const char *id)
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
		if (strcmp(o->id, id) == 0)
			return (o);
	}
	return (NULL);
}

/*
 * Override by id; an entry not accessed for override_ttl_ms is gone
 * (Guava expireAfterAccess, checked lazily). touch counts as an access.
 */
struct override *
override_find(struct registry *reg, const char *id, int64_t now, int touch)
{
	struct override	*o;

	if ((o = override_lookup(reg, id)) == NULL)
		return (NULL);
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

/* Put an override; bounded by max_instances, the least used goes first. */
void
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
int
override_del(struct registry *reg, const char *id)
{
	struct override	*o;

	if ((o = override_lookup(reg, id)) == NULL)
		return (0);
	htab_remove(&reg->override_tab, &o->node);
	TAILQ_REMOVE(&reg->override_lru, o, entry);
	reg->noverrides--;
	free(o->id);
	free(o);
	return (1);
}

/* Drop overrides not accessed within the TTL, oldest access first. */
void
override_purge(struct registry *reg, int64_t now)
{
	struct override	*o;

	while ((o = TAILQ_FIRST(&reg->override_lru)) != NULL &&
	    now - o->access_ts > reg->conf.override_ttl_ms)
		override_del(reg, o->id);
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
