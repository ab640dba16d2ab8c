/*
 * registry_evict.c: the eviction walk (spec §5.11) a slice at a time,
 * and the self-preservation figures forwarded to evict.c, which holds
 * the policy (threshold, how many a run may take, grace for a late
 * timer). The walk counts the expired candidates, then removes a
 * uniform random choice of them by selection sampling. Part of the
 * registry module (registry_int.h).
 */
#include <string.h>

#include "registry_int.h"

/*
 * Eviction and self-preservation: the policy is evict.c's; the registry
 * tells it about leases and renewals and forwards these calls.
 */

/* openForTraffic: expected := count, threshold recomputed. */
void
registry_open_for_traffic(struct registry *reg, int count, int64_t now)
{
	REGISTRY_CHECKED(reg);
	(void)now;
	evict_open_for_traffic(&reg->ev, count);
}

/* Whether the run may take lease l (expired at the run's time). */
static int
evict_candidate(const struct evict_slices *es, const struct lease *l)
{
	return (lease_is_expired(l, es->run.extra, es->mono) &&
	    (!es->run.only_uncounted || l->uncounted));
}

/*
 * The eviction task (§5.11) a slice at a time: evict.c plans the run
 * (grace for a late timer, which leases may go, how many); the first
 * walk counts the expired candidates, the second removes each with
 * probability (still to take) / (still to see), a uniform random choice
 * of the number evict.c allows. See registry.h.
 */
int
registry_evict_step(struct registry *reg, struct hk_time now, size_t max,
    int *evicted)
{
	struct evict_slices	*es = &reg->evs;
	struct reg_app		*a;
	struct lease		*l;
	size_t			 done = 0, left;
	REGISTRY_CHECKED(reg);

	*evicted = 0;
	if (!es->busy) {
		memset(es, 0, sizeof *es);
		if (!evict_run_begin(&reg->ev, now.mono_ms, reg->size,
		    &es->run))
			return (1);
		es->busy = 1;
		es->mono = now.mono_ms;
		es->size = reg->size;
		es->ai = reg->napps;
	}
	while (done < max) {
		/* The next place down; a removed app's place was seen. */
		if (es->ai > reg->napps)
			es->ai = reg->napps;
		if (es->ai == 0) {
			if (es->phase == 1)
				break;
			es->phase = 1;
			es->limit = evict_run_limit(&reg->ev, &es->run,
			    es->size, es->nexp);
			if (es->limit == 0)
				break;
			es->ai = reg->napps;
			es->li = 0;
			continue;
		}
		a = reg->apps[es->ai - 1];
		if (es->li == 0 || es->li > a->n)
			es->li = a->n;
		l = a->leases[--es->li];
		done++;
		if (es->li == 0)
			es->ai--;
		if (!evict_candidate(es, l))
			continue;
		if (es->phase == 0) {
			es->nexp++;
			continue;
		}
		left = es->nexp > es->seen ? es->nexp - es->seen : 1;
		es->seen++;
		if (es->taken < es->limit &&
		    evict_pick(0, left) < es->limit - es->taken) {
			registry_remove(reg, l, 1, 0, 0, now);
			es->taken++;
			(*evicted)++;
			done += REGISTRY_EVICT_REMOVE_WEIGHT;
		}
		if (es->taken == es->limit)
			break;
	}
	if (done >= max && !(es->phase == 1 && es->taken == es->limit))
		return (0);
	es->busy = 0;
	return (1);
}

/* A whole eviction run in one call: the number evicted. */
int
registry_evict(struct registry *reg, struct hk_time now)
{
	int	n;
	REGISTRY_CHECKED(reg);

	reg->evs.busy = 0;
	(void)registry_evict_step(reg, now, SIZE_MAX, &n);
	return (n);
}

/* Roll the renews-per-minute bucket; the caller ticks every 60 s. */
void
registry_tick_minute(struct registry *reg, int64_t now)
{
	REGISTRY_CHECKED(reg);
	(void)now;
	evict_tick_minute(&reg->ev);
}

/* isLeaseExpirationEnabled (§5.11): the self-preservation switch. */
int
registry_lease_expiration_enabled(const struct registry *reg)
{
	return (evict_expiration_enabled(&reg->ev));
}

/* isBelowRenewThreshold, minus the start-up wait (the caller's part). */
int
registry_is_below_threshold(const struct registry *reg)
{
	return (evict_is_below_threshold(&reg->ev));
}

/* Live leases left out of self-preservation (REGISTRY_UNCOUNTED_KEY). */
int
registry_uncounted(const struct registry *reg)
{
	return (reg->ev.uncounted);
}

/* expectedNumberOfClientsSendingRenews. */
int
registry_expected_clients(const struct registry *reg)
{
	return (reg->ev.expected);
}

/* numberOfRenewsPerMinThreshold. */
int
registry_renew_threshold(const struct registry *reg)
{
	return (reg->ev.threshold);
}

/* Renewals counted in the previous complete minute. */
long
registry_renews_last_min(const struct registry *reg)
{
	return (reg->ev.renews_last);
}
