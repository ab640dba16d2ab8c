/*
 * peerq.h: what a peer's replication is made of, without a network or a
 * clock (spec §6.2, §6.3). A task is one pending replication action keyed
 * by Eureka's task id; a peer's queue is bounded, coalesces a newer task
 * into an older one with the same key, and tells when a batch is due; the
 * back-off paces a peer after failures. Every time is passed in (monotonic
 * ms), so check_peer drives all of it by hand.
 */
#ifndef PEERQ_H
#define PEERQ_H

#include <stddef.h>
#include <stdint.h>

#include "hash.h"
#include "repl.h"

struct instance;
struct registry_event;

#define PEER_BATCH_MAX		250	/* items per batch (Eureka) */
#define PEER_BATCH_AGE_MS	500	/* Eureka's batching delay */
#define PEER_DISPATCH_MS	20	/* heureka's: see replicate.c */
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
	uint64_t		 seq;		/* the caller's order of changes
						   (the drain barrier), 0 none */
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


/*
 * Walk the queue and verify every link, counter and the key index: the
 * order list runs head to tail with matching back links, len is its
 * length and at most max, urgent counts its non-heartbeats, the table
 * holds len tasks and finds each by its key under its key's hash. 0 when
 * all holds; -1 and *cause (caller frees) at the first breach. The unit
 * tests and fuzz targets run it after every operation (bug.h).
 */
int		 peerq_check(const struct peer_queue *, char **cause);

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

#ifdef PEERQ_PRIVATE
/*
 * The queue's insides, for peerq.c and the tests that break them on
 * purpose (Tor's *_PRIVATE pattern); nobody else defines PEERQ_PRIVATE.
 */
struct peer_queue {
	struct peer_task	 *head;		/* oldest */
	struct peer_task	 *tail;
	struct htab		  tab;		/* by key; grows with len */
	size_t			  len;
	size_t			  max;
	size_t			  urgent;	/* tasks other than heartbeats */
	struct peer_queue_stats	  stats;
	uint64_t		  check_left;	/* operations to the next walk */
};
#endif

struct peer_queue *peer_queue_new(size_t max);
void		 peer_queue_free(struct peer_queue *);	/* frees tasks */
/* Takes ownership of the task whatever happens. */
enum peer_push	 peer_queue_push(struct peer_queue *, struct peer_task *,
		     int64_t now);
size_t		 peer_queue_len(const struct peer_queue *);
/* Pending tasks other than heartbeats (they make a batch urgent). */
size_t		 peer_queue_urgent(const struct peer_queue *);
const struct peer_queue_stats *peer_queue_stats(const struct peer_queue *);
/* Is a task with 0 < seq <= `seq` still queued? (a walk of the queue) */
int		 peer_queue_holds(const struct peer_queue *, uint64_t seq);
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


/*
 * The batching delay (see replicate.c): a queue holding changes other
 * than heartbeats is due PEER_DISPATCH_MS after its oldest task, one of
 * heartbeats alone after Eureka's PEER_BATCH_AGE_MS.
 */
int64_t		 peer_queue_batch_delay(const struct peer_queue *);

/* Expiry of a Register/Heartbeat task for this copy (§6.2 table). */
int64_t		 peer_lease_expiry(const struct instance *, int64_t now);
/*
 * The task for one registry event, NULL if nothing to send (evictions are
 * never replicated). Status and cancel tasks expire `max_time` ms after
 * `now`.
 */
struct peer_task *peer_task_from_event(const struct registry_event *,
		     int64_t now, int64_t max_time);
/* A Register of this copy (a 404 to a heartbeat: the peer lost it). */
struct peer_task *peer_task_register(const char *app, const char *id,
		     const struct instance *, int64_t now);
/* A Cancel carrying our tombstone's time, expiring now + max_time. */
struct peer_task *peer_task_cancel(const char *app, const char *id,
		     int64_t cancel_ts, int64_t now, int64_t max_time);

#endif
