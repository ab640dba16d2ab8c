/*
 * digest.h: heureka's anti-entropy digest of a registry (64 hex digits):
 * four lanes, each the sum of a hash of (APP, registry_copy_hash()) over
 * every unexpired instance, so equal registries give equal digests in any
 * order. Loop-free: the monotonic `now` judging expiry is passed in.
 *
 * The same sums are kept per bucket: an application's bucket is the top
 * six bits of digest_app_key(name), a fixed-key hash every node computes
 * alike, so two nodes can say which of DIGEST_BUCKETS buckets differ and
 * pull only those (syncpage.h orders a pull by the same key, so a bucket
 * is one range of it). The whole digest is the sum of the buckets', as
 * peer_digest() computes it in one walk.
 *
 * struct digest keeps those sums up to date without a walk over every
 * lease: a cache per application, valid while the application's
 * generation (reg_app_gen) is unchanged and none of its leases has
 * reached its expiry since; digest_refresh() recomputes the stale ones
 * within a budget of leases per call, so a loop can spread the first
 * computation at a million instances over many turns.
 */
#ifndef DIGEST_H
#define DIGEST_H

#include <stddef.h>
#include <stdint.h>

struct registry;

#define DIGEST_BUCKETS		64
#define DIGEST_BUCKET(k)	((unsigned)((uint64_t)(k) >> 58))
#define DIGEST_HEX		64	/* the whole digest */
#define DIGEST_BUCKETS_HEX	(DIGEST_BUCKETS * 16)	/* 16 per bucket */
#define DIGEST_REFRESH_BUDGET	5000	/* leases hashed per loop turn, at
					   most: ~5-15 ms */

/* An application name's place in the buckets and in a pull's order. */
uint64_t	 digest_app_key(const char *name);

/* The whole digest in one walk over every live lease (tests, compare). */
void	peer_digest(struct registry *, int64_t mono, char hex[65],
	    size_t *count);
/* Parse a peer's {"digest":"<64 hex>",...}; 0 on success. */
int	peer_parse_digest(const char *, char hex[65]);
/*
 * The same, and the per-bucket digests if the answer has them
 * ("buckets":"<1024 hex>"); buckets[0] is '\0' if not (a heureka peer of
 * the previous version). 0 on success.
 */
int	peer_parse_digest_buckets(const char *, char hex[65],
	    char buckets[DIGEST_BUCKETS_HEX + 1]);
/*
 * The buckets whose digests differ (bit b: bucket b); every bucket when
 * either side has none.
 */
uint64_t digest_differing(const char *mine, const char *theirs);

struct digest;

struct digest	*digest_new(void);
void		 digest_free(struct digest *);	/* NULL is fine */
/*
 * Bring the sums up to date at mono, recomputing at most about `budget`
 * leases (always at least one application). 1 when they are current,
 * 0 when the budget ran out first (call again).
 */
int		 digest_refresh(struct digest *, struct registry *,
		     int64_t mono, size_t budget);
/* The sums; current only right after digest_refresh() returned 1. */
void		 digest_hex(const struct digest *, char hex[65],
		     char buckets[DIGEST_BUCKETS_HEX + 1], size_t *count);
/* Leases recomputed (hashed) so far, for the tests. */
uint64_t	 digest_hashed(const struct digest *);

#endif
