/*
 * digest.c: the anti-entropy digest over the registry's live leases, its
 * per-bucket sums kept current by a per-application cache, and the
 * parser of a peer's answer to GET heureka/digest (digest.h).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_tree.h>

#include "digest.h"
#include "hash.h"
#include "instance.h"
#include "registry.h"
#include "xmalloc.h"

/* The lanes' hash seed (FNV-1a's offset basis; peers must agree). */
#define DIGEST_SEED	1469598103934665603ULL

/* A 64-bit finaliser (splitmix64) so each lane mixes differently. */
static uint64_t
peer_mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return (x);
}

/* The key of an application: its bucket and its place in a pull. */
uint64_t
digest_app_key(const char *name)
{
	return (hash_fixed(DIGEST_SEED, name, strlen(name) + 1));
}

/* One lease's share of the lanes, from its application's key. */
static void
digest_lanes_add(uint64_t lane[4], uint64_t key, const struct instance *in)
{
	uint64_t	h, ch;
	int		k;

	ch = registry_copy_hash(in);
	h = hash_fixed(key, &ch, sizeof ch);
	for (k = 0; k < 4; k++)
		lane[k] += peer_mix(h + (uint64_t)k * 0x9e3779b97f4a7c15ULL);
}

/* The running sums of one digest. */
struct digest_walk {
	uint64_t	lane[4];
	size_t		n;
};

/* One live lease into the lanes (registry_foreach_live callback). */
static void
digest_add(const struct reg_app *a, const struct instance *in, void *arg)
{
	struct digest_walk	*w = arg;

	if (in == NULL)
		return;
	digest_lanes_add(w->lane, digest_app_key(reg_app_name(a)), in);
	w->n++;
}

/*
 * The digest of live leases: four 64-bit lanes, each the sum of a hash of
 * every lease's app name and registry_copy_hash() (every replicated field),
 * hashed with the fixed-key hash_fixed() because peers compare digests.
 * A sum is independent of order, so no sort and no formatting: O(n) with
 * no allocation, which matters because it runs on the loop every
 * anti-entropy round. Expiry is judged on the monotonic clock, whatever
 * self-preservation says (registry_foreach_live).
 */
void
peer_digest(struct registry *reg, int64_t mono, char hex[65], size_t *count)
{
	struct digest_walk	w;
	int			k;

	memset(&w, 0, sizeof w);
	registry_foreach_live(reg, mono, digest_add, &w);
	for (k = 0; k < 4; k++)
		snprintf(hex + 16 * k, 17, "%016llx",
		    (unsigned long long)w.lane[k]);
	if (count != NULL)
		*count = w.n;
}

/* Parse {"digest":"...","count":N}; 0 on success. */
int
peer_parse_digest(const char *s, char hex[65])
{
	static const char	*dpath[] = { "digest", NULL };
	yajl_val		 t, d;
	const char		*v;
	char			 err[128];
	int			 rc = -1;

	if ((t = yajl_tree_parse(s, err, sizeof err)) == NULL)
		return (-1);
	d = yajl_tree_get(t, dpath, yajl_t_string);
	if (d != NULL && (v = YAJL_GET_STRING(d)) != NULL && strlen(v) == 64) {
		memcpy(hex, v, 65);
		rc = 0;
	}
	yajl_tree_free(t);
	return (rc);
}

/* Parse {"digest":"...","buckets":"..."}; see digest.h. */
int
peer_parse_digest_buckets(const char *s, char hex[65],
    char buckets[DIGEST_BUCKETS_HEX + 1])
{
	static const char	*dpath[] = { "digest", NULL };
	static const char	*bpath[] = { "buckets", NULL };
	yajl_val		 t, d;
	const char		*v;
	char			 err[128];
	int			 rc = -1;

	buckets[0] = '\0';
	if ((t = yajl_tree_parse(s, err, sizeof err)) == NULL)
		return (-1);
	d = yajl_tree_get(t, dpath, yajl_t_string);
	if (d != NULL && (v = YAJL_GET_STRING(d)) != NULL && strlen(v) == 64) {
		memcpy(hex, v, 65);
		rc = 0;
	}
	d = yajl_tree_get(t, bpath, yajl_t_string);
	if (rc == 0 && d != NULL && (v = YAJL_GET_STRING(d)) != NULL &&
	    strlen(v) == DIGEST_BUCKETS_HEX)
		memcpy(buckets, v, DIGEST_BUCKETS_HEX + 1);
	yajl_tree_free(t);
	return (rc);
}

/* The buckets whose 16 hex digits differ; all without both sides'. */
uint64_t
digest_differing(const char *mine, const char *theirs)
{
	uint64_t	mask = 0;
	unsigned	b;

	if (strlen(mine) != DIGEST_BUCKETS_HEX ||
	    strlen(theirs) != DIGEST_BUCKETS_HEX)
		return (UINT64_MAX);
	for (b = 0; b < DIGEST_BUCKETS; b++)
		if (memcmp(mine + 16 * b, theirs + 16 * b, 16) != 0)
			mask |= 1ULL << b;
	return (mask);
}

/* What one application adds to its bucket, as of its last recompute. */
struct dg_app {
	struct htab_node	 node;		/* by reg_app_hash() */
	char			*name;
	uint64_t		 key;		/* digest_app_key(name) */
	uint64_t		 gen;		/* reg_app_gen() when computed */
	int			 valid;
	uint64_t		 lane[4];	/* over its live leases */
	size_t			 n;
	size_t			 ndead;		/* expired leases left out */
	uint64_t		 deadsig;	/* which ones (by index) */
	int64_t			 min_deadline;	/* of the live ones */
	unsigned		 epoch;		/* refresh that saw it */
};

struct digest {
	struct htab		 apps;
	uint64_t		 lane[DIGEST_BUCKETS][4];
	size_t			 n;
	unsigned		 epoch;
	uint64_t		 hashed;
};

/* An empty digest cache. */
struct digest *
digest_new(void)
{
	struct digest	*d = xcalloc(1, sizeof *d);

	htab_init(&d->apps, 16);
	return (d);
}

/* htab_sweep callback: drop every record. */
static int
dg_drop_all(struct htab_node *nd, void *arg)
{
	struct dg_app	*r = (struct dg_app *)nd;

	(void)arg;
	free(r->name);
	free(r);
	return (1);
}

/* Free the cache. */
void
digest_free(struct digest *d)
{
	if (d == NULL)
		return;
	htab_sweep(&d->apps, dg_drop_all, NULL);
	htab_clear(&d->apps);
	free(d);
}

/* Add (sign 1) or take away (-1) a record's share of its bucket. */
static void
dg_account(struct digest *d, const struct dg_app *r, int sign)
{
	uint64_t	*l = d->lane[DIGEST_BUCKET(r->key)];
	int		 k;

	if (!r->valid)
		return;
	for (k = 0; k < 4; k++)
		l[k] = sign > 0 ? l[k] + r->lane[k] : l[k] - r->lane[k];
	d->n = sign > 0 ? d->n + r->n : d->n - r->n;
}

/* The record of an application, made if new. */
static struct dg_app *
dg_find(struct digest *d, const struct reg_app *a)
{
	struct htab_node	*nd;
	struct dg_app		*r;
	uint64_t		 h = reg_app_hash(a);
	const char		*name = reg_app_name(a);

	for (nd = htab_first(&d->apps, h); nd != NULL; nd = nd->next) {
		r = (struct dg_app *)nd;
		if (nd->hash == h && strcmp(r->name, name) == 0)
			return (r);
	}
	r = xcalloc(1, sizeof *r);
	r->name = xstrdup(name);
	r->key = digest_app_key(name);
	htab_insert(&d->apps, &r->node, h);
	return (r);
}

/*
 * Which leases of a are expired at mono: their count, a signature of
 * their indexes (stable while the generation is) and the first deadline
 * of the live ones.
 */
static void
dg_scan(const struct reg_app *a, int64_t mono, size_t *ndead,
    uint64_t *sig, int64_t *min_deadline)
{
	size_t	i;
	int64_t	dl;

	*ndead = 0;
	*sig = 0;
	*min_deadline = INT64_MAX;
	for (i = 0; i < reg_app_size(a); i++) {
		dl = reg_app_lease_deadline(a, i);
		if (mono > dl) {
			(*ndead)++;
			*sig += peer_mix(i + 1);
		} else if (dl < *min_deadline)
			*min_deadline = dl;
	}
}

/* Recompute a record from its application's live leases. */
static void
dg_recompute(struct digest *d, struct dg_app *r, const struct reg_app *a,
    int64_t mono)
{
	size_t	i;

	dg_account(d, r, -1);
	memset(r->lane, 0, sizeof r->lane);
	r->n = 0;
	for (i = 0; i < reg_app_size(a); i++) {
		if (reg_app_lease_expired(a, i, mono))
			continue;
		digest_lanes_add(r->lane, r->key, reg_app_instance_at(a, i));
		r->n++;
	}
	d->hashed += r->n;
	dg_scan(a, mono, &r->ndead, &r->deadsig, &r->min_deadline);
	r->gen = reg_app_gen(a);
	r->valid = 1;
	dg_account(d, r, 1);
}

/* htab_sweep callback: drop the records of applications gone. */
static int
dg_drop_gone(struct htab_node *nd, void *arg)
{
	struct digest	*d = arg;
	struct dg_app	*r = (struct dg_app *)nd;

	if (r->epoch == d->epoch)
		return (0);
	dg_account(d, r, -1);
	free(r->name);
	free(r);
	return (1);
}

/*
 * Bring the sums up to date (digest.h). A record is current while its
 * application's generation is the one it was computed at (every change
 * to a field the copy hash covers bumps it) and no lease it counted has
 * passed its deadline; an expired lease it left out comes back only by
 * a renewal, which bumps nothing, so an application holding one is
 * rescanned (deadlines only, no hashing) every refresh. A scan costs an
 * eighth of a recompute against the budget.
 */
int
digest_refresh(struct digest *d, struct registry *reg, int64_t mono,
    size_t budget)
{
	const struct reg_app	*a;
	struct dg_app		*r;
	size_t			 i, n, spent = 0, cost, ndead;
	uint64_t		 sig;
	int64_t			 mind;

	d->epoch++;
	n = registry_app_count(reg);
	for (i = 0; i < n; i++) {
		a = registry_app_at(reg, i);
		r = dg_find(d, a);
		r->epoch = d->epoch;
		if (r->valid && r->gen == reg_app_gen(a)) {
			if (mono <= r->min_deadline && r->ndead == 0)
				continue;
			cost = reg_app_size(a) / 8 + 1;
			if (spent > 0 && spent + cost > budget)
				return (0);
			spent += cost;
			dg_scan(a, mono, &ndead, &sig, &mind);
			if (ndead == r->ndead && sig == r->deadsig) {
				r->min_deadline = mind;
				continue;
			}
		}
		cost = reg_app_size(a) + 1;
		if (spent > 0 && spent + cost > budget)
			return (0);
		spent += cost;
		dg_recompute(d, r, a, mono);
	}
	htab_sweep(&d->apps, dg_drop_gone, d);
	return (1);
}

/* Format the sums: the whole digest and 16 hex digits per bucket. */
void
digest_hex(const struct digest *d, char hex[65],
    char buckets[DIGEST_BUCKETS_HEX + 1], size_t *count)
{
	uint64_t	all[4] = { 0, 0, 0, 0 };
	unsigned	b;
	int		k;

	for (b = 0; b < DIGEST_BUCKETS; b++) {
		for (k = 0; k < 4; k++)
			all[k] += d->lane[b][k];
		if (buckets != NULL)
			snprintf(buckets + 16 * b, 17, "%016llx",
			    (unsigned long long)hash_fixed(DIGEST_SEED,
			    d->lane[b], sizeof d->lane[b]));
	}
	for (k = 0; k < 4; k++)
		snprintf(hex + 16 * k, 17, "%016llx",
		    (unsigned long long)all[k]);
	if (count != NULL)
		*count = d->n;
}

/* Leases hashed by recomputes so far. */
uint64_t
digest_hashed(const struct digest *d)
{
	return (d->hashed);
}
