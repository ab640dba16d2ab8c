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

/*
 * The digest of live leases: four 64-bit lanes, each the sum of a hash of
 * every lease's app name and registry_copy_hash() (every replicated field),
 * hashed with the fixed-key hash_fixed() because peers compare digests.
 * A sum is independent of order, so no sort and no formatting: O(n) with
 * no allocation, which matters because it runs on the loop every
 * anti-entropy round. Expiry is judged on the monotonic clock.
 */
void
peer_digest(struct registry *reg, int64_t mono, char hex[65], size_t *count)
{
	const struct instance	*in;
	struct reg_app		*a;
	const char		*name;
	uint64_t		 lane[4] = { 0, 0, 0, 0 }, h, ch;
	size_t			 n = 0, i, j;
	int			 k;

	for (i = 0; i < registry_app_count(reg); i++) {
		a = registry_app_at(reg, i);
		name = reg_app_name(a);
		for (j = 0; j < reg_app_size(a); j++) {
			in = reg_app_instance_at(a, j);
			if (in == NULL || reg_app_lease_expired(a, j, mono))
				continue;
			ch = registry_copy_hash(in);
			h = hash_fixed(1469598103934665603ULL, name,
			    strlen(name) + 1);
			h = hash_fixed(h, &ch, sizeof ch);
			for (k = 0; k < 4; k++)
				lane[k] += peer_mix(h + (uint64_t)k *
				    0x9e3779b97f4a7c15ULL);
			n++;
		}
	}
	for (k = 0; k < 4; k++)
		snprintf(hex + 16 * k, 17, "%016llx",
		    (unsigned long long)lane[k]);
	if (count != NULL)
		*count = n;
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
