/*
 * replicate.h: the cluster's peers (spec §6). Peer list, one bounded
 * replication queue per peer with heartbeat coalescing and batching (POST
 * peerreplication/batch/), per-item result handling, and the HTTP glue
 * (connections, TLS). All on the server's event loop; DNS is resolved
 * before the loop starts and on SIGHUP only. The start-up sync and
 * anti-entropy on the same peers are sync.h's.
 *
 * The queue and the back-off are server/core/peerq.h, the URL parsing
 * common/url.h, the digest server/core/digest.h: loop-free, tested alone.
 */
#ifndef REPLICATE_H
#define REPLICATE_H

#include <stddef.h>
#include <stdint.h>

struct config;
struct event_base;
struct gate;
struct registry;

struct peers;

/*
 * What the peers use, borrowed for their lifetime. conf is the live
 * configuration: SIGHUP swaps the peer list and heureka.peer.ssl.* in it
 * before peers_reload.
 */
struct peers_deps {
	struct event_base	*base;
	const struct config	*conf;
	struct registry		*reg;
	struct gate		*gate;		/* opened by the start-up sync */
	const char		*hostname;	/* ours: self detection */
	int			 port;		/* ours: bound port */
};

/* Per-peer state, read by the dashboard, /metrics and heureka/stats. */
struct peer_info {
	const char	*url;		/* credentials already removed */
	int		 reachable;	/* last request succeeded */
	size_t		 queue_depth;
	int64_t		 last_success_ms;	/* wall clock, 0 never */
	uint64_t	 batches_sent;
	uint64_t	 items_sent;
	uint64_t	 failures;
	uint64_t	 dropped;
	/* The detail heureka/stats shows. */
	int		 resolved;	/* the host name resolved */
	size_t		 inflight;	/* items of the batch in flight */
	uint64_t	 overflow;	/* dropped: queue full */
	uint64_t	 expired;	/* dropped: too old */
	uint64_t	 coalesced;	/* replaced by a newer task */
	uint64_t	 failed_items;	/* dropped by permanent errors */
	unsigned	 backoff_failures;	/* consecutive */
	uint64_t	 not_found;	/* heartbeat 404 -> register */
	uint64_t	 conflicts;	/* heartbeat 409 -> adopt */
	uint64_t	 ae_rounds;
	uint64_t	 ae_pulls;
	uint64_t	 ae_adopted;
	uint64_t	 ae_cancels;
	int		 ae_supported;	/* the peer has heureka/digest */
};

/*
 * Build the peer list from conf (service_url_default_zone, my_url),
 * dropping our own URL; resolves host names (blocking: call before the loop
 * or from the SIGHUP path only). Registers a registry observer that
 * enqueues every non-replicated change.
 */
struct peers	*peers_new(const struct peers_deps *, char **cause);
void		 peers_free(struct peers *);
/* Re-read the peer list (SIGHUP). */
int		 peers_reload(struct peers *, char **cause);
/* Load heureka.peer.ssl.* as peers_new would (--check-config). */
int		 peers_tls_check(const struct config *, char **cause);
size_t		 peers_count(const struct peers *);
void		 peers_info(const struct peers *, size_t, struct peer_info *);

#endif
