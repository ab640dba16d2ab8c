/*
 * sync.h: the start-up registry sync (spec §6.4) and heureka's
 * anti-entropy rounds, on the peers of replicate.h. The start-up sync opens
 * the gate (gate_set_ready) when done or given up; anti-entropy compares
 * digests with every peer each anti_entropy_interval_ms and pulls the
 * buckets of a differing peer's registry that differ. Both pull page
 * after page (syncpage.h), one request in flight per peer. The decisions
 * are server/core/syncrule.h's.
 */
#ifndef SYNC_H
#define SYNC_H

#include <stdint.h>

#include "clock.h"

struct peers;

/* Begin start-up sync at `now`; opens the gate when done or given up. */
void	peers_start(struct peers *, struct hk_time now);
/* What the start-up sync copied and how long it took (heureka/stats). */
void	peers_sync_result(const struct peers *, int *count, int64_t *ms);

/* One peer's paged pulls so far (heureka/stats). */
struct sync_peer_stats {
	uint64_t	sync_pages;	/* start-up sync pages */
	uint64_t	ae_pages;	/* anti-entropy pull pages */
	uint64_t	ae_apps;	/* applications those pages held */
	uint64_t	ae_instances;	/* instances they held */
	uint64_t	ae_buckets;	/* buckets pulled, summed over pulls */
};
void	peers_sync_stats(const struct peers *, size_t,
	    struct sync_peer_stats *);
/*
 * GET heureka/digest's answer from the digest cache (digest.h): 1 and the
 * digests when it is current after a bounded refresh; else 0, and the
 * refresh timer is running (also with anti-entropy off here), so asking
 * again soon succeeds.
 */
int	peers_digest_current(const struct peers *, int64_t mono,
	    char hex[65], char *buckets, size_t *count);

#endif
