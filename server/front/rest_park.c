/*
 * rest_park.c: the fetches of a body the cache builds a slice per loop
 * turn (cache_step): GET apps, apps/delta, apps/{app} and vips/{vip}
 * are answered at once when the body is ready, else parked in arrival
 * order (at most one per connection, so bounded by max-connections) and
 * answered by the slice timer when it is; a client that goes away
 * meanwhile is noticed and its connection freed.
 *
 * The memory budget (max-memory-bytes) covers the encodings as well as
 * the registry: issue 21 filled the registry to a 128 MiB budget and one
 * GET each of apps and apps/delta, JSON and XML, took RSS to 660 MiB. A
 * build goes on a slice at a time only while the registry, the delta
 * queue, the watch and every encoding, cached, in flight or being built
 * (cache_bytes), stay within the budget; past it the build is given up
 * and its fetches get 503 with the reason, and past it no slice is
 * begun, so the growth stops within one slice
 * (heureka.cache.encode-slice-bytes) of the budget. A body already built
 * is always served.
 */


#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <event2/http.h>

#include "http.h"
#include "barrier.h"
#include "cache.h"
#include "clock.h"
#include "config.h"
#include "hold.h"
#include "log.h"
#include "metrics.h"
#include "registry.h"
#include "rest_int.h"
#include "xmalloc.h"

/* Forget a parked fetch (its request is answered or gone). */
void
parked_free(struct parked *p)
{
	TAILQ_REMOVE(&p->rest->parked, p, entry);
	hold_disarm(p->hold);
	free(p->name);
	free(p);
}

/* The client of a parked fetch went away (hold.c): forget the fetch. */
static void
parked_gone(void *arg)
{
	log_debug("%s: a client waiting for a full fetch went away",
	    __func__);
	parked_free(arg);
}

/* Arm the next slice for the next loop turn. */
static void
rest_slice_arm(struct rest *rest)
{
	static const struct timeval	zero = { 0, 0 };

	if (!TAILQ_EMPTY(&rest->parked))
		evtimer_add(rest->slice_ev, &zero);
}

/* Reply with resource res's body; an application with none is 404. */
static void
reply_res(struct rctx *x, enum cache_res res, const struct cache_key *k,
    const char *name, int64_t now)
{
	struct cache_body	*b;

	if ((b = cache_res_body(x->d->cache, res, k, name, now)) == NULL)
		reply(x, 404, NULL, NULL, 0);
	else
		reply_body(x, b, k);
}

/* Whether two parked fetches wait for the same body. */
static int
parked_same(const struct parked *a, const struct parked *b)
{
	return (a->res == b->res && memcmp(&a->k, &b->k, sizeof a->k) == 0 &&
	    ((a->name == NULL && b->name == NULL) || (a->name != NULL &&
	    b->name != NULL && strcmp(a->name, b->name) == 0)));
}

static struct log_ratelim fetch_memory_rl = LOG_RATELIM_INIT(60000, 1);

/* Is everything the budget covers, encodings included, past it? */
static int
fetch_over_budget(const struct rest_deps *d)
{
	registry_set_external_bytes(d->reg, REG_EXT_ENCODINGS,
	    cache_bytes(d->cache));
	return (d->memory_budget > 0 &&
	    registry_memory_used(d->reg) > d->memory_budget);
}

/* The 503 of a fetch whose body the budget has no room to build. */
static void
fetch_refuse(struct rctx *x)
{
	const struct rest_deps	*d = x->d;

	metrics_limit(d->metrics, METRICS_LIMIT_FETCH_MEMORY, 1);
	if (log_ratelim_allow(&fetch_memory_rl))
		log_warn("max-memory-bytes: a fetch's encoding would pass "
		    "the memory budget (%zu bytes used of %zu): 503",
		    registry_memory_used(d->reg), d->memory_budget);
	reply_error(x, 503, "max-memory-bytes: encoding this response "
	    "would pass the memory budget");
}

/*
 * Answer every parked fetch of p's body, p's included: with the body, or
 * (refuse) with the 503 of fetch_refuse after giving its build up.
 */
static void
parked_answer(struct rest *rest, struct parked *p, int refuse,
    struct hk_time now)
{
	struct parked	*next, want = *p;
	struct rctx	 x;

	if (refuse)
		cache_abandon(rest->d.cache, want.res, &want.k, want.name);
	want.name = p->name != NULL ? xstrdup(p->name) : NULL;
	for (; p != NULL; p = next) {
		next = TAILQ_NEXT(p, entry);
		if (!parked_same(p, &want))
			continue;
		x = p->x;
		x.query.kv = NULL;
		x.query.n = 0;
		parked_free(p);
		if (refuse)
			fetch_refuse(&x);
		else
			reply_res(&x, want.res, &want.k, want.name,
			    now.mono_ms);
	}
	free(want.name);
	if (refuse)
		registry_set_external_bytes(rest->d.reg, REG_EXT_ENCODINGS,
		    cache_bytes(rest->d.cache));
}

/*
 * One loop turn of the parked fetches: a slice of the build for the
 * oldest one's body; when it is done, every fetch parked on that body
 * gets it, in arrival order. A slice is encoded only while the memory
 * budget has room; without, every fetch of that body gets 503.
 */
static void
rest_slice_cb(evutil_socket_t fd, short what, void *arg)
{
	struct rest		*rest = arg;
	struct parked		*p;
	struct hk_time		 now = clock_now();

	(void)fd;
	(void)what;
	if ((p = TAILQ_FIRST(&rest->parked)) == NULL)
		return;
	if (fetch_over_budget(&rest->d) && !cache_ready(rest->d.cache,
	    p->res, &p->k, p->name, now.mono_ms))
		parked_answer(rest, p, 1, now);
	else if (cache_step(rest->d.cache, p->res, &p->k, p->name,
	    rest->d.conf->cache_encode_slice_bytes, now.mono_ms))
		parked_answer(rest, p, 0, now);
	else if (fetch_over_budget(&rest->d))
		parked_answer(rest, p, 1, now);
	rest_slice_arm(rest);
}

/*
 * Park a fetch until its body is built (see struct parked); -1 when it
 * cannot wait (no connection), and the caller builds it at once.
 */
static int
fetch_park(struct rctx *x, enum cache_res res, const struct cache_key *k,
    const char *name)
{
	struct rest			*rest = (struct rest *)(void *)
					    ((char *)(void *)x->d -
					    offsetof(struct rest, d));
	struct hconn			*evcon;
	struct event_base		*base;
	struct parked			*p;

	if ((evcon = hreq_conn(x->req)) == NULL ||
	    (base = hconn_base(evcon)) == NULL)
		return (-1);
	if (rest->slice_ev == NULL)
		rest->slice_ev = evtimer_new(base, rest_slice_cb, rest);
	p = xcalloc(1, sizeof *p);
	p->rest = rest;
	p->x = *x;
	p->x.nseg = 0;
	p->x.segheap = NULL;
	p->x.query.kv = NULL;
	p->x.query.n = 0;
	p->res = res;
	p->k = *k;
	p->name = name != NULL ? xstrdup(name) : NULL;
	p->hold = hold_arm(base, x->req, parked_gone, p);
	TAILQ_INSERT_TAIL(&rest->parked, p, entry);
	rest_slice_arm(rest);
	return (0);
}

/*
 * A fetch of resource res: a slice of its body's build in this turn; if
 * the body is not done, the request waits for the next turns' slices
 * (struct parked).
 */
static void
fetch_sliced(struct rctx *x, enum cache_res res, const struct cache_key *k,
    const char *name)
{
	/* No slice at all past the budget: only a body that is ready. */
	if (fetch_over_budget(x->d) && !cache_ready(x->d->cache, res, k, name,
	    x->now.mono_ms)) {
		fetch_refuse(x);
		return;
	}
	if (!cache_step(x->d->cache, res, k, name,
	    x->d->conf->cache_encode_slice_bytes, x->now.mono_ms)) {
		if (fetch_over_budget(x->d)) {
			cache_abandon(x->d->cache, res, k, name);
			registry_set_external_bytes(x->d->reg,
			    REG_EXT_ENCODINGS, cache_bytes(x->d->cache));
			fetch_refuse(x);
			return;
		}
		if (fetch_park(x, res, k, name) == 0)
			return;
	}
	reply_res(x, res, k, name, x->now.mono_ms);
}

/* GET apps */
void
h_apps(struct rctx *x)
{
	struct cache_key	 k;

	if (check_access(x) != 0)
		return;
	barrier_fetched(x->d->barrier, x->req, x->now.mono_ms);
	request_key(x, &k, 1);
	fetch_sliced(x, CACHE_RES_APPS, &k, NULL);
}

/* GET apps/delta */
void
h_delta(struct rctx *x)
{
	struct cache_key	 k;

	if (x->d->conf->disable_delta) {
		reply(x, 403, NULL, NULL, 0);
		return;
	}
	if (check_access(x) != 0)
		return;
	barrier_fetched(x->d->barrier, x->req, x->now.mono_ms);
	request_key(x, &k, 1);
	fetch_sliced(x, CACHE_RES_DELTA, &k, NULL);
}

/* GET apps/{app} */
void
h_app(struct rctx *x)
{
	struct cache_key	 k;

	if (check_access(x) != 0)
		return;
	request_key(x, &k, 1);
	fetch_sliced(x, CACHE_RES_APP, &k, x->seg[1]);
}

/* GET vips/{vip} and svips/{svip}: 200 with an empty list when unknown. */
void
h_vip(struct rctx *x)
{
	struct cache_key	 k;

	if (check_access(x) != 0)
		return;
	request_key(x, &k, 1);
	fetch_sliced(x, x->seg[0][0] == 's' ? CACHE_RES_SVIP : CACHE_RES_VIP,
	    &k, x->seg[1]);
}

/* Fetches waiting for their body (a draining shutdown waits for them). */
size_t
rest_parked_count(const struct rest *rest)
{
	const struct parked	*p;
	size_t			 n = 0;

	if (rest == NULL)
		return (0);
	TAILQ_FOREACH(p, &rest->parked, entry)
		n++;
	return (n);
}
