/*
 * registry_reconcile.c: which copy of an instance wins when two servers
 * disagree (the rule is in registry.h): the copy hash peers compare in
 * digests, the order of two copies, and registry_reconcile() /
 * registry_adopt() that the sync applies. Part of the registry module
 * (registry_int.h).
 */
#include <string.h>

#include "registry_int.h"

static int	registry_copy_cmp(const struct instance *,
		    const struct instance *);

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
