/*
 * looplag.c: statistics of the event loop's latency probe (looplag.h).
 * Every sample lands in a fixed histogram; the samples of the current
 * interval are kept (a bounded array: one probe per LOOPLAG_PERIOD_MS, so
 * an interval holds at most LOOPLAG_SAMPLES) and sorted once when the
 * interval closes, for its p99. Loop turns (their CPU time) land in a
 * histogram of their own, finer around the 50 ms stall bound.
 */
#include <stdlib.h>
#include <string.h>

#include "looplag.h"

/* Bucket bounds, seconds: 1 ms to 10 s, about two per octave. */
static const double looplag_bounds[LOOPLAG_NBUCKETS] = {
	0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.03, 0.04,
	0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10,
};

/* Turn bounds, seconds: 0.1 ms to 10 s, 5 ms steps from 10 to 50 ms. */
static const double looplag_turn_bounds[LOOPLAG_TURN_NBUCKETS] = {
	0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.003, 0.005, 0.0075, 0.01,
	0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.045, 0.05, 0.06, 0.075, 0.1,
	0.15, 0.2, 0.3, 0.5, 0.75, 1, 2, 5, 10,
};

/* Start the probe's statistics at now_us. */
void
looplag_init(struct looplag *ll, int64_t now_us)
{
	memset(ll, 0, sizeof *ll);
	ll->start_us = now_us;
}

/* Bucket i's upper bound in seconds. */
double
looplag_bound(int i)
{
	return (looplag_bounds[i]);
}

/* qsort order of int64_t. */
static int
looplag_cmp(const void *a, const void *b)
{
	int64_t	x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x < y ? -1 : x > y);
}

/* Close the current interval: its max and p99 become the reported ones. */
static void
looplag_close(struct looplag *ll, int64_t now_us)
{
	ll->last_max_us = ll->cur_max_us;
	ll->last_p99_us = 0;
	if (ll->n > 0) {
		qsort(ll->samples, ll->n, sizeof ll->samples[0], looplag_cmp);
		ll->last_p99_us = ll->samples[(ll->n * 99) / 100];
	}
	ll->n = 0;
	ll->cur_max_us = 0;
	ll->turn_last_max_us = ll->turn_cur_max_us;
	ll->turn_cur_max_us = 0;
	ll->start_us = now_us;
}

/* Record one probe that ran late_us late at now_us. */
void
looplag_sample(struct looplag *ll, int64_t late_us, int64_t now_us)
{
	int	i;

	if (late_us < 0)
		late_us = 0;
	/* A stall that spans the interval's end belongs to the next one. */
	if (now_us - ll->start_us >= (int64_t)LOOPLAG_INTERVAL_MS * 1000 ||
	    ll->n == LOOPLAG_SAMPLES)
		looplag_close(ll, now_us);
	ll->samples[ll->n++] = late_us;
	if (late_us > ll->cur_max_us)
		ll->cur_max_us = late_us;
	if (late_us > ll->max_us)
		ll->max_us = late_us;
	ll->count++;
	ll->sum_us += late_us;
	for (i = 0; i < LOOPLAG_NBUCKETS; i++) {
		if ((double)late_us <= looplag_bounds[i] * 1e6) {
			ll->bucket[i]++;
			break;
		}
	}
}

/* Turn bucket i's upper bound in seconds. */
double
looplag_turn_bound(int i)
{
	return (looplag_turn_bounds[i]);
}

/* Record one loop turn of cpu_us CPU time. */
void
looplag_turn(struct looplag *ll, int64_t cpu_us)
{
	int	i;

	if (cpu_us < 0)
		cpu_us = 0;
	if (cpu_us > ll->turn_cur_max_us)
		ll->turn_cur_max_us = cpu_us;
	if (cpu_us > ll->turn_max_us)
		ll->turn_max_us = cpu_us;
	ll->turns++;
	ll->turn_sum_us += cpu_us;
	for (i = 0; i < LOOPLAG_TURN_NBUCKETS; i++) {
		if ((double)cpu_us <= looplag_turn_bounds[i] * 1e6) {
			ll->turn_bucket[i]++;
			break;
		}
	}
}

/*
 * The turn histogram's q-quantile, as its bucket's bound in us (the
 * longest turn when it lies past the last bucket).
 */
int64_t
looplag_turn_quantile(const struct looplag *ll, double q)
{
	uint64_t	cum = 0;
	int		i;

	if (ll->turns == 0)
		return (0);
	for (i = 0; i < LOOPLAG_TURN_NBUCKETS; i++) {
		cum += ll->turn_bucket[i];
		if ((double)cum >= q * (double)ll->turns)
			return ((int64_t)(looplag_turn_bounds[i] * 1e6 + 0.5));
	}
	return (ll->turn_max_us);
}
