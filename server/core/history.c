/*
 * history.c: the dashboard's charts' data, kept by the server so a page
 * opened now shows the last hour. Every interval (one minute by default,
 * heureka.dashboard.history-interval-ms) the server hands over the
 * counters it already keeps; the sampler turns the cumulative ones into
 * per-interval counts and records the gauges (renews in the last minute,
 * the self-preservation threshold, each peer's queue depth and how long
 * since its last successful replication). The ring is a fixed array of
 * HISTORY_SAMPLES: the oldest sample is overwritten, nothing grows. Time
 * is a parameter, so the unit test drives it by hand.
 */
#include <stdint.h>
#include <string.h>

#include "buf.h"
#include "history.h"

/* An empty ring sampling every interval_ms. */
void
history_init(struct history *h, int64_t interval_ms)
{
	memset(h, 0, sizeof *h);
	h->interval_ms = interval_ms > 0 ? interval_ms : 60000;
}

/* b - a for counters, 0 if one went backwards (a restart of the source). */
static uint64_t
history_delta(uint64_t b, uint64_t a)
{
	return (b >= a ? b - a : 0);
}

/* Take a sample if one is due at now; 1 when one was taken. */
int
history_tick(struct history *h, const struct history_input *in, int64_t now)
{
	struct history_sample	*s;
	size_t			 i;

	if (h->due_ms != 0 && now < h->due_ms)
		return (0);
	s = &h->ring[h->head];
	memset(s, 0, sizeof *s);
	s->at_ms = now;
	s->registrations = history_delta(in->registrations, h->prev_reg);
	s->renewals = history_delta(in->renewals, h->prev_ren);
	s->cancels = history_delta(in->cancels, h->prev_can);
	s->registrations_total = in->registrations;
	s->cancels_total = in->cancels;
	s->renews_last_min = in->renews_last_min;
	s->threshold = in->threshold;
	s->npeers = in->npeers < HISTORY_MAX_PEERS ? in->npeers :
	    HISTORY_MAX_PEERS;
	for (i = 0; i < s->npeers; i++) {
		s->queue_depth[i] = in->queue_depth[i];
		s->lag_ms[i] = in->last_success_ms[i] <= 0 ? -1 :
		    (now > in->last_success_ms[i] ?
		    now - in->last_success_ms[i] : 0);
	}
	h->prev_reg = in->registrations;
	h->prev_ren = in->renewals;
	h->prev_can = in->cancels;
	h->head = (h->head + 1) % HISTORY_SAMPLES;
	if (h->len < HISTORY_SAMPLES)
		h->len++;
	/* A late timer or a clock step: the next one is due from now. */
	if (h->due_ms == 0 || now - h->due_ms >= h->interval_ms ||
	    now < h->due_ms)
		h->due_ms = now + h->interval_ms;
	else
		h->due_ms += h->interval_ms;
	return (1);
}

/* Sample i, 0 the oldest; NULL past the end. */
const struct history_sample *
history_get(const struct history *h, size_t i)
{
	if (i >= h->len)
		return (NULL);
	return (&h->ring[(h->head + HISTORY_SAMPLES - h->len + i) %
	    HISTORY_SAMPLES]);
}

/* The samples as a JSON array, oldest first. */
void
history_json(const struct history *h, struct buf *b)
{
	const struct history_sample	*s;
	size_t				 i, j;

	buf_addc(b, '[');
	for (i = 0; (s = history_get(h, i)) != NULL; i++) {
		if (i > 0)
			buf_addc(b, ',');
		buf_addf(b, "{\"at\":%lld,\"registrations\":%llu,"
		    "\"renewals\":%llu,\"cancels\":%llu,"
		    "\"registrationsTotal\":%llu,\"cancelsTotal\":%llu,"
		    "\"renewsLastMin\":%ld,\"threshold\":%d,\"peers\":[",
		    (long long)s->at_ms, (unsigned long long)s->registrations,
		    (unsigned long long)s->renewals,
		    (unsigned long long)s->cancels,
		    (unsigned long long)s->registrations_total,
		    (unsigned long long)s->cancels_total,
		    s->renews_last_min, s->threshold);
		for (j = 0; j < s->npeers; j++)
			buf_addf(b, "%s{\"queueDepth\":%zu,\"lagMs\":%lld}",
			    j > 0 ? "," : "", s->queue_depth[j],
			    (long long)s->lag_ms[j]);
		buf_adds(b, "]}");
	}
	buf_addc(b, ']');
}
