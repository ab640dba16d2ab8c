/*
 * peer.h: the cluster (spec §6). Peer list, one bounded replication queue
 * per peer with heartbeat coalescing and batching (POST
 * peerreplication/batch/), per-item result handling, start-up registry
 * sync, and heureka's anti-entropy extension (digest exchange under
 * {base}/heureka/). All on the server's event loop; DNS is resolved before
 * the loop starts and on SIGHUP only.
 */
#ifndef PEER_H
#define PEER_H

#include <stddef.h>
#include <stdint.h>

struct server;
struct evhttp_request;
struct buf;

struct peers;

/* Per-peer state, read by the dashboard and /metrics. */
struct peer_info {
	const char	*url;		/* credentials already removed */
	int		 reachable;	/* last request succeeded */
	size_t		 queue_depth;
	int64_t		 last_success_ms;	/* wall clock, 0 never */
	uint64_t	 batches_sent;
	uint64_t	 items_sent;
	uint64_t	 failures;
	uint64_t	 dropped;
};

/*
 * Build the peer list from conf (service_url_default_zone, my_url),
 * dropping our own URL; resolves host names (blocking: call before the loop
 * or from the SIGHUP path only). Registers a registry observer that
 * enqueues every non-replicated change.
 */
struct peers	*peers_new(struct server *, char **cause);
void		 peers_free(struct peers *);
/* Begin start-up sync; calls server_set_ready() when done or given up. */
void		 peers_start(struct peers *);
/* Re-read the peer list (SIGHUP). */
int		 peers_reload(struct peers *, char **cause);
size_t		 peers_count(const struct peers *);
void		 peers_info(const struct peers *, size_t, struct peer_info *);
/* Handle GET/POST {base}/heureka/<rest> (anti-entropy); replies once. */
void		 peers_http(struct peers *, struct evhttp_request *,
		     const char *rest);

#endif
