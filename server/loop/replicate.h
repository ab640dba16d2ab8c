/*
 * replicate.h: replication to the cluster's peers (spec §6.2, §6.3). A
 * registry observer puts every local change in one bounded queue per peer
 * with heartbeat coalescing, and a timer per peer sends them in batches
 * (POST peerreplication/batch/) with per-item result handling and
 * back-off. The peers and their connections are peers.h's; the start-up
 * sync and anti-entropy on the same peers are sync.h's.
 *
 * The queue and the back-off are server/core/peerq.h: loop-free, tested
 * alone.
 */
#ifndef REPLICATE_H
#define REPLICATE_H

#include <stddef.h>
#include <stdint.h>

struct config;
struct event_base;
struct peer;
struct peer_task;
struct audit;
struct peers;
struct registry;

struct replicate;

/* What replication uses, borrowed for its lifetime. */
struct replicate_deps {
	struct event_base	*base;
	const struct config	*conf;
	struct registry		*reg;
	struct peers		*peers;		/* observed */
	struct audit		*audit;		/* who acts: the origin a
						   change carries; NULL: none */
};

/*
 * Observe the peer list (a queue per peer, also for peers that join
 * later) and the registry (every change not from a peer is queued).
 */
struct replicate *replicate_new(const struct replicate_deps *);
/* Free it after peers_free. */
void		 replicate_free(struct replicate *);
/* Queue t (taken) for p. */
void		 replicate_push(struct replicate *, struct peer *,
		    struct peer_task *, int64_t mono);
/* Tasks other than heartbeats waiting for p. */
size_t		 replicate_urgent(const struct replicate *,
		    const struct peer *);
/* Is a batch to p in flight? */
int		 replicate_inflight(const struct replicate *,
		    const struct peer *);
/*
 * The drain barrier: the order of the last local change queued (every
 * change not from a peer, heartbeats too), and whether p has answered a
 * batch holding each task of that change or an earlier one (a task
 * dropped from a full or expired queue counts as done: anti-entropy
 * repairs what it carried).
 */
uint64_t	 replicate_seq(const struct replicate *);
int		 replicate_acked(const struct replicate *, const struct peer *,
		    uint64_t seq);
/* p answered another request: end its back-off now. */
void		 replicate_answered(struct replicate *, struct peer *,
		    int64_t mono);

#endif
