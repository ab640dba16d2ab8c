/*
 * sync.h: the start-up registry sync (spec §6.4) and heureka's
 * anti-entropy rounds, on the peers of peers.h. The start-up sync opens
 * the gate (gate_set_ready) when done or given up; anti-entropy compares
 * digests with every peer each anti_entropy_interval_ms and pulls the
 * buckets of a differing peer's registry that differ. Both pull page
 * after page (syncpage.h), one request in flight per peer; a cancel a
 * pull finds is replicated (replicate.h). The decisions are
 * server/core/syncrule.h's.
 */
#ifndef SYNC_H
#define SYNC_H

#include <stddef.h>
#include <stdint.h>

#include "clock.h"

struct config;
struct event_base;
struct gate;
struct peers;
struct registry;
struct replicate;

struct sync;

/* What the sync uses, borrowed for its lifetime. */
struct sync_deps {
	struct event_base	*base;
	const struct config	*conf;
	struct registry		*reg;
	struct gate		*gate;		/* opened by the start-up sync */
	struct peers		*peers;		/* observed */
	struct replicate	*repl;		/* cancels, back-off */
};

struct sync	*sync_new(const struct sync_deps *);
/* Free it after peers_free. */
void		 sync_free(struct sync *);
/* Begin start-up sync at `now`; opens the gate when done or given up. */
void		 sync_start(struct sync *, struct hk_time now);
/* What the start-up sync copied and how long it took (heureka/stats). */
void		 sync_result(const struct sync *, int *count, int64_t *ms);

/* One peer's paged pulls so far (heureka/stats). */
struct sync_peer_stats {
	uint64_t	sync_pages;	/* start-up sync pages */
	uint64_t	ae_pages;	/* anti-entropy pull pages */
	uint64_t	ae_apps;	/* applications those pages held */
	uint64_t	ae_instances;	/* instances they held */
	uint64_t	ae_buckets;	/* buckets pulled, summed over pulls */
};
void		 sync_stats(const struct sync *, size_t,
		    struct sync_peer_stats *);
/*
 * GET heureka/digest's answer from the digest cache (digest.h): 1 and the
 * digests when it is current after a bounded refresh; else 0, and the
 * refresh timer is running (also with anti-entropy off here), so asking
 * again soon succeeds.
 */
int		 sync_digest_current(const struct sync *, int64_t mono,
		    char hex[65], char *buckets, size_t *count);

#endif
