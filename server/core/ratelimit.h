/*
 * ratelimit.h: token buckets per key (a client's source address), in a
 * table bounded by a fixed entry count. Used for the per-address
 * registration limit. A plain data structure: time comes in as `now`
 * (monotonic ms), so tests drive it by hand.
 */
#ifndef RATELIMIT_H
#define RATELIMIT_H

#include <stddef.h>
#include <stdint.h>

struct ratelimit;

/*
 * rate tokens per second refill each bucket up to burst; at most
 * max_entries keys are tracked. rate <= 0 turns the limiter off.
 */
struct ratelimit *ratelimit_new(double rate, double burst,
		     size_t max_entries);
void		 ratelimit_free(struct ratelimit *);	/* NULL is fine */
/*
 * Take one token for key: 0 if allowed, else how many ms until the
 * bucket holds a token again (at least 1).
 */
int64_t		 ratelimit_take(struct ratelimit *, const char *key,
		     int64_t now);
/*
 * How many ms until key's bucket holds a token, without taking one: 0
 * when it holds one now (or key has no bucket: a full one).
 */
int64_t		 ratelimit_wait(const struct ratelimit *, const char *key,
		     int64_t now);

/*
 * Take n tokens at once (n >= 1): allowed when the bucket holds n, or is
 * full when n is more than the burst; the bucket then goes into debt
 * (negative), which the rate pays back, so over time no key gets more
 * than rate a second however it groups its takes. 0 if allowed, else
 * ms until it would be.
 */
int64_t		 ratelimit_take_n(struct ratelimit *, const char *key,
		     double n, int64_t now);
size_t		 ratelimit_size(const struct ratelimit *);	/* keys held */

#endif
