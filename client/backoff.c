/*
 * backoff.c: the TimedSupervisorTask back-off of the heartbeat, fetch and
 * watch tasks (internal.h): a task that timed out waits twice as long next
 * time, up to base * bound; one that completed, whatever the HTTP outcome,
 * goes back to the base interval.
 */
#include "internal.h"

/* Start a supervisor back-off at the base interval, bounded by base * bound. */
void
hk_backoff_init(struct hk_backoff *bo, int64_t base_ms, int bound)
{
	bo->base_ms = base_ms;
	bo->max_ms = base_ms * (bound < 1 ? 1 : bound);
	bo->delay_ms = base_ms;
}

/* The task timed out: double the delay, up to the cap. */
int64_t
hk_backoff_timeout(struct hk_backoff *bo)
{
	bo->delay_ms *= 2;
	if (bo->delay_ms > bo->max_ms)
		bo->delay_ms = bo->max_ms;
	return (bo->delay_ms);
}

/* The task completed (whatever the HTTP outcome): back to the base delay. */
int64_t
hk_backoff_done(struct hk_backoff *bo)
{
	bo->delay_ms = bo->base_ms;
	return (bo->delay_ms);
}
