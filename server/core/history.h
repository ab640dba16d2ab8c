/*
 * history.h: the dashboard's last hour, a bounded ring of samples taken
 * from counters the server already keeps (history.c).
 */
#ifndef HEUREKA_HISTORY_H
#define HEUREKA_HISTORY_H

#include <stddef.h>
#include <stdint.h>

struct buf;

#define HISTORY_SAMPLES		60	/* ring length: an hour at 1/min */
#define HISTORY_MAX_PEERS	16	/* peers charted per sample */

/* What the sampler is given: cumulative counters and current gauges. */
struct history_input {
	uint64_t	 registrations;	/* totals since start */
	uint64_t	 renewals;
	uint64_t	 cancels;
	long		 renews_last_min;
	int		 threshold;
	size_t		 npeers;
	size_t		 queue_depth[HISTORY_MAX_PEERS];
	int64_t		 last_success_ms[HISTORY_MAX_PEERS];	/* 0 never */
};

/* One sample: what happened during the interval that ended at at_ms. */
struct history_sample {
	int64_t		 at_ms;		/* wall clock */
	uint64_t	 registrations;	/* during the interval */
	uint64_t	 renewals;
	uint64_t	 cancels;
	uint64_t	 registrations_total;
	uint64_t	 cancels_total;
	long		 renews_last_min;
	int		 threshold;
	size_t		 npeers;
	size_t		 queue_depth[HISTORY_MAX_PEERS];
	int64_t		 lag_ms[HISTORY_MAX_PEERS];	/* -1: never replicated */
};

struct history {
	struct history_sample	 ring[HISTORY_SAMPLES];
	size_t			 head;		/* next slot written */
	size_t			 len;
	int64_t			 interval_ms;
	int64_t			 due_ms;	/* next sample; 0: first call */
	uint64_t		 prev_reg, prev_ren, prev_can;
};

void	history_init(struct history *, int64_t interval_ms);
/* Take a sample if one is due at now (wall ms); 1 when one was taken. */
int	history_tick(struct history *, const struct history_input *,
	    int64_t now);
/* Sample i, 0 the oldest; NULL past the end. */
const struct history_sample *history_get(const struct history *, size_t);
/* The samples as a JSON array, oldest first (names are the caller's). */
void	history_json(const struct history *, struct buf *);

#endif
