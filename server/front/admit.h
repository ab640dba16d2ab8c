/*
 * admit.h: the one rate limit on what a client brings into the registry
 * (issue 21): a REST registration, each new or changed service of an
 * airlift announcement, and a cancel that leaves a tombstone for an
 * instance this node does not hold all take tokens from the same bucket
 * per client address (eureka.server.register-rate-per-second and
 * -burst). Peers' replication is never limited here (the node a change
 * entered through limited it).
 */
#ifndef ADMIT_H
#define ADMIT_H

struct hreq;

#include <stddef.h>
#include <stdint.h>

#include <event2/http.h>

struct admit;
struct config;
struct metrics;

/* The limiter from the configuration; metrics counts refusals (borrowed). */
struct admit	*admit_new(const struct config *, struct metrics *);
void		 admit_free(struct admit *);	/* NULL is fine */

/*
 * n entries (instances or tombstones; n >= 1) are about to enter for the
 * client of req: 0 when admitted. Otherwise -1: the Retry-After header is
 * set on req, the refusal counted (heureka_limit_rejections_total
 * {limit="register-rate"}) and logged once a minute, and why holds the
 * reason for the caller's 429 body (in its own format).
 */
int		 admit_take(struct admit *, struct hreq *, size_t n,
		     const char *what, int64_t mono, char *why, size_t whylen);

#endif
