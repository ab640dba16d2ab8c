/*
 * evict.h: eviction and self-preservation (spec §5.11), the policy half.
 * The registry owns one struct evict and tells it about every lease that
 * comes and goes and every counted renewal; this file keeps the expected
 * clients, the renews-per-minute threshold and the two renewal buckets,
 * decides whether lease expiration is enabled, and plans each eviction
 * run: the grace for a late timer, which leases may go (only those left
 * out of the count while self-preservation holds), how many at most, and
 * which ones, picked at random. The registry collects the expired leases
 * and removes the chosen ones (registry_evict).
 *
 * Core layer: no libevent, no I/O, no clock reads; every call that needs
 * the time takes `mono`, monotonic ms. The struct is plain data owned by
 * its embedder; nothing here allocates.
 *
 * heureka differs from Eureka on purpose: the threshold follows every
 * added and removed lease, also from zero, so no 15-minute recount timer
 * is needed (Eureka's updateRenewsPerMinThreshold on a timer).
 */
#ifndef EVICT_H
#define EVICT_H

#include <stddef.h>
#include <stdint.h>

struct evict_conf {
	int	 self_preservation;		/* enableSelfPreservation */
	double	 renewal_percent_threshold;	/* 0.85 */
	int	 expected_client_renewal_interval_secs;	/* <= 0: 30 */
	int	 expected_initial;		/* Spring: 1 */
	int64_t	 eviction_interval_ms;		/* compensation baseline */
};

struct evict {
	struct evict_conf	 conf;
	int			 expected;	/* expectedNumberOfClients-
						   SendingRenews */
	int			 uncounted;	/* live leases not in it */
	int			 threshold;	/* numberOfRenewsPerMin-
						   Threshold */
	long			 renews_cur;	/* this minute */
	long			 renews_last;	/* the last complete one */
	int64_t			 last_run;	/* mono */
	int			 ran;		/* last_run is set */
};

/* One eviction run's plan (evict_run_begin). */
struct evict_run {
	int64_t	 extra;		/* ms of grace: how late the timer is */
	int	 only_uncounted;	/* self-preservation holds the rest */
};

void	 evict_init(struct evict *, const struct evict_conf *);

/* A lease was added or removed; uncounted: left out of the count. */
void	 evict_lease_added(struct evict *, int uncounted);
void	 evict_lease_removed(struct evict *, int uncounted);
/* A renewal of a lease; uncounted ones are not counted. */
void	 evict_renewed(struct evict *, int uncounted);
/* openForTraffic: expected := count (< 0: 0), threshold recomputed. */
void	 evict_open_for_traffic(struct evict *, int count);
/* Roll the renews-per-minute bucket; the caller ticks every 60 s. */
void	 evict_tick_minute(struct evict *);

/* isLeaseExpirationEnabled: the self-preservation switch. */
int	 evict_expiration_enabled(const struct evict *);
/* isBelowRenewThreshold, minus the start-up wait (the caller's part). */
int	 evict_is_below_threshold(const struct evict *);

/*
 * Start a run at mono over size leases: fills run and answers 1 if any
 * lease may go (0: nothing to scan). The run's time is kept, so the next
 * one can tell how late its timer fired.
 */
int	 evict_run_begin(struct evict *, int64_t mono, size_t size,
	    struct evict_run *);
/*
 * How many of nexp expired candidates may go out of size leases: all of
 * them when only uncounted ones are candidates, else at most
 * size - (int)(size x renewal_percent_threshold).
 */
size_t	 evict_run_limit(const struct evict *, const struct evict_run *,
	    size_t size, size_t nexp);
/*
 * The i-th pick of a partial Fisher-Yates shuffle over n candidates: an
 * index in [i, n), uniformly at random, to swap into place i.
 */
size_t	 evict_pick(size_t i, size_t n);

#endif
