/*
 * peer.h: the cluster (spec §6). Peer list, one bounded replication queue
 * per peer with heartbeat coalescing and batching (POST
 * peerreplication/batch/), per-item result handling, start-up registry
 * sync, and heureka's anti-entropy extension (digest exchange under
 * {base}/heureka/). All on the server's event loop; DNS is resolved before
 * the loop starts and on SIGHUP only.
 *
 * The queue, the back-off and the URL/self-detection helpers below are
 * plain data structures with `now` passed in, so check_peer drives them
 * without a network or a clock.
 */
#ifndef PEER_H
#define PEER_H

#include <stddef.h>
#include <stdint.h>

#include "hash.h"
#include "json.h"

struct config;
struct server;
struct evhttp_request;
struct buf;
struct registry;

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
/* Begin start-up sync; opens the gate when done or given up. */
void		 peers_start(struct peers *);
/* Re-read the peer list (SIGHUP). */
int		 peers_reload(struct peers *, char **cause);
/* Load heureka.peer.ssl.* as peers_new would (--check-config). */
int		 peers_tls_check(const struct config *, char **cause);
size_t		 peers_count(const struct peers *);
void		 peers_info(const struct peers *, size_t, struct peer_info *);
/* Handle GET/POST {base}/heureka/<rest> (anti-entropy); replies once. */
void		 peers_http(struct peers *, struct evhttp_request *,
		     const char *rest);

/* --- building blocks, exposed for tests ------------------------------- */

#define PEER_BATCH_MAX		250	/* items per batch (Eureka) */
#define PEER_BATCH_AGE_MS	500	/* Eureka's batching delay */
#define PEER_DISPATCH_MS	20	/* heureka's: see peer.c */
#define PEER_BACKOFF_CAP_MS	30000	/* both pauses are capped at 30 s */
#define PEER_CONGESTION_MS	1000	/* 503 or read timeout */
#define PEER_TRANSIENT_MS	100	/* other I/O errors */

/*
 * One pending replication action. `item` is what goes on the wire; its
 * strings and info belong to the task. `key` is Eureka's task id
 * ("heartbeat#APP/id"); a newer task with the same key replaces this one.
 */
struct peer_task {
	char			*key;
	struct repl_item	 item;
	int64_t			 queued_at;	/* first queued: position age */
	int64_t			 expiry;
	struct peer_task	*prev;		/* queue order */
	struct peer_task	*next;
	struct htab_node	 hnode;		/* in the queue's table */
};

/* A task for (action, app, id) expiring at `expiry`; fill item after. */
struct peer_task *peer_task_new(enum repl_action, const char *app,
		     const char *id, int64_t expiry);
void		 peer_task_free(struct peer_task *);	/* NULL is fine */

struct peer_queue;

enum peer_push {
	PEER_PUSH_ADDED = 0,
	PEER_PUSH_REPLACED,	/* same key pending: replaced in place */
	PEER_PUSH_DROPPED,	/* full: the oldest task was dropped */
};

struct peer_queue_stats {
	uint64_t	overflow;	/* dropped because the queue was full */
	uint64_t	expired;	/* dropped because too old to matter */
	uint64_t	coalesced;	/* replaced by a newer task */
};

struct peer_queue *peer_queue_new(size_t max);
void		 peer_queue_free(struct peer_queue *);	/* frees tasks */
/* Takes ownership of the task whatever happens. */
enum peer_push	 peer_queue_push(struct peer_queue *, struct peer_task *,
		     int64_t now);
size_t		 peer_queue_len(const struct peer_queue *);
/* Pending tasks other than heartbeats (they make a batch urgent). */
size_t		 peer_queue_urgent(const struct peer_queue *);
const struct peer_queue_stats *peer_queue_stats(const struct peer_queue *);
/*
 * Whether a batch should go now: the oldest task has waited `min_age` ms
 * or a full batch is pending. Returns 0 when due, else ms until due, -1
 * when empty.
 */
int64_t		 peer_queue_due(const struct peer_queue *, int64_t now,
		     int64_t min_age);
/* Up to max unexpired tasks, oldest first; expired ones are freed. */
size_t		 peer_queue_take(struct peer_queue *, struct peer_task **,
		     size_t max, int64_t now);
/*
 * Put a failed batch back at the front in its order, except tasks that
 * expired or were superseded meanwhile; what does not fit is dropped.
 */
void		 peer_queue_requeue(struct peer_queue *, struct peer_task **,
		     size_t n, int64_t now);

/* Exponential back-off with jitter (§6.2 congestion/transient pauses). */
enum peer_failure {
	PEER_FAIL_CONGESTION = 0,	/* 503, read timeout */
	PEER_FAIL_TRANSIENT,		/* connection refused, reset... */
	PEER_FAIL_PERMANENT,		/* other HTTP status: batch dropped */
};

struct peer_backoff {
	unsigned	failures;	/* consecutive */
	int64_t		until;		/* no request before this */
};

/* Record a failure; returns the pause chosen, in [nominal/2, nominal]. */
int64_t		 peer_backoff_fail(struct peer_backoff *, enum peer_failure,
		     uint32_t rnd, int64_t now);
void		 peer_backoff_ok(struct peer_backoff *);
int		 peer_backoff_ready(const struct peer_backoff *, int64_t now);

/* A parsed peer URL: http://[user:pass@]host[:port]/path/ */
struct peer_url {
	char	*scheme;	/* "http" or "https" */
	char	*userinfo;	/* "user:pass" or NULL */
	char	*host;		/* without [] for IPv6 */
	int	 port;
	char	*path;		/* always ends in '/' */
	char	*display;	/* the URL without userinfo */
};

int		 peer_url_parse(const char *, struct peer_url *, char **cause);
void		 peer_url_clear(struct peer_url *);
/*
 * Is this URL ourselves? With my_url set: exact match (a trailing '/'
 * ignored). Otherwise: is_local(host) and the port equals my_port.
 */
int		 peer_url_is_self(const char *raw, const struct peer_url *,
		     const char *my_url, int my_port,
		     int (*is_local)(const char *, void *), void *);

/*
 * The anti-entropy digest (64 hex digits): four lanes, each the sum of a
 * hash of (APP, id, lastDirtyTimestamp, status) over every unexpired
 * instance, so equal registries give equal digests in any order.
 */
void		 peer_digest(struct registry *, int64_t mono, char hex[65],
		     size_t *count);

#endif
