/*
 * evict.c: the self-preservation figures and the eviction run's plan
 * (evict.h). Eureka's formulas (§5.11, eureka-core registry/
 * PeerAwareInstanceRegistryImpl.java and AbstractInstanceRegistry.java):
 * threshold = (int)(expected x 60 / renewal interval x percent), lease
 * expiration enabled only while the last minute's renewals pass a
 * positive threshold, at most size - (int)(size x percent) leases evicted
 * per run, the run's expiry test given the time its timer overslept.
 */
#include <stdlib.h>
#include <string.h>

#include "evict.h"
#include "instance.h"

static void	evict_update_threshold(struct evict *);

/* numberOfRenewsPerMinThreshold, truncated toward zero. */
static void
evict_update_threshold(struct evict *ev)
{
	double	per_min;

	per_min = 60.0 / ev->conf.expected_client_renewal_interval_secs;
	ev->threshold = (int)(ev->expected * per_min *
	    ev->conf.renewal_percent_threshold);
}

/* Start from the configured expected clients, nothing renewed yet. */
void
evict_init(struct evict *ev, const struct evict_conf *conf)
{
	memset(ev, 0, sizeof *ev);
	ev->conf = *conf;
	if (ev->conf.expected_client_renewal_interval_secs <= 0)
		ev->conf.expected_client_renewal_interval_secs =
		    LEASE_DEFAULT_RENEWAL_SECS;
	ev->expected = ev->conf.expected_initial;
	evict_update_threshold(ev);
}

/* A new lease: one more expected client, unless it is uncounted. */
void
evict_lease_added(struct evict *ev, int uncounted)
{
	if (uncounted) {
		ev->uncounted++;
		return;
	}
	ev->expected++;
	evict_update_threshold(ev);
}

/* A lease gone (cancel or eviction): one client fewer, never below 0. */
void
evict_lease_removed(struct evict *ev, int uncounted)
{
	if (uncounted) {
		if (ev->uncounted > 0)
			ev->uncounted--;
		return;
	}
	if (ev->expected > 0) {
		ev->expected--;
		evict_update_threshold(ev);
	}
}

/* Count a renewal in this minute's bucket. */
void
evict_renewed(struct evict *ev, int uncounted)
{
	if (!uncounted)
		ev->renews_cur++;
}

/* openForTraffic: expected := count, threshold recomputed. */
void
evict_open_for_traffic(struct evict *ev, int count)
{
	ev->expected = count < 0 ? 0 : count;
	evict_update_threshold(ev);
}

/* The minute is over: its renewals are what the switch looks at. */
void
evict_tick_minute(struct evict *ev)
{
	ev->renews_last = ev->renews_cur;
	ev->renews_cur = 0;
}

/* isLeaseExpirationEnabled (§5.11). */
int
evict_expiration_enabled(const struct evict *ev)
{
	if (!ev->conf.self_preservation)
		return (1);
	return (ev->threshold > 0 && ev->renews_last > ev->threshold);
}

/* isBelowRenewThreshold. */
int
evict_is_below_threshold(const struct evict *ev)
{
	return (ev->renews_last <= ev->threshold);
}

/*
 * Plan a run. A late timer is compensated by the time it overslept past
 * eviction_interval_ms. Self-preservation protects the leases it counts;
 * uncounted ones expire on their own protocol's terms.
 */
int
evict_run_begin(struct evict *ev, int64_t mono, size_t size,
    struct evict_run *run)
{
	memset(run, 0, sizeof *run);
	if (ev->ran) {
		run->extra = mono - ev->last_run -
		    ev->conf.eviction_interval_ms;
		if (run->extra < 0)
			run->extra = 0;
	}
	ev->ran = 1;
	ev->last_run = mono;
	run->only_uncounted = !evict_expiration_enabled(ev);
	if (size == 0 || (run->only_uncounted && ev->uncounted == 0))
		return (0);
	return (1);
}

/* The per-run cap (§5.11). */
size_t
evict_run_limit(const struct evict *ev, const struct evict_run *run,
    size_t size, size_t nexp)
{
	size_t	limit;

	if (run->only_uncounted)
		return (nexp);
	limit = size - (size_t)((double)size *
	    ev->conf.renewal_percent_threshold);
	return (nexp < limit ? nexp : limit);
}

/* Uniform in [i, n), from random(). */
size_t
evict_pick(size_t i, size_t n)
{
	return (i + (size_t)random() % (n - i));
}
