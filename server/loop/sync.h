/*
 * sync.h: the start-up registry sync (spec §6.4) and heureka's
 * anti-entropy rounds, on the peers of replicate.h. The start-up sync opens
 * the gate (gate_set_ready) when done or given up; anti-entropy compares
 * digests with every peer each anti_entropy_interval_ms and pulls a
 * differing peer's registry. The decisions are server/core/syncrule.h's.
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

#endif
