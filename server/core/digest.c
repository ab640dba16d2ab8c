/*
 * digest.c: the anti-entropy digest over the registry's live leases and
 * the parser of a peer's answer to GET heureka/digest (digest.h).
 */

#include <stdio.h>
#include <string.h>

#include <yajl/yajl_tree.h>

#include "digest.h"
#include "hash.h"
#include "instance.h"
#include "registry.h"

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
	const char		*name = reg_app_name(a);
	uint64_t		 h, ch;
	int			 k;

	if (in == NULL)
		return;
	ch = registry_copy_hash(in);
	h = hash_fixed(DIGEST_SEED, name, strlen(name) + 1);
	h = hash_fixed(h, &ch, sizeof ch);
	for (k = 0; k < 4; k++)
		w->lane[k] += peer_mix(h + (uint64_t)k * 0x9e3779b97f4a7c15ULL);
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
