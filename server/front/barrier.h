/*
 * barrier.h: the drain barrier, GET {base}heureka/apps/{APP}/{ID}/drained
 * (docs/kubernetes.md): whether every client can have stopped sending
 * traffic to an instance that is no longer UP here.
 *
 * 200 {"drained":true,...} once the instance is not UP on this node
 * (OUT_OF_SERVICE, DOWN or cancelled) and, for the change that took it
 * out of UP:
 *  (a) every peer has answered a replication batch holding it (a change
 *      made here; one a peer made is that peer's to replicate);
 *  (b) every open watch stream covering the application has written the
 *      change's event out;
 *  (c) every client that fetched the registry (GET apps or apps/delta;
 *      told apart by address and DiscoveryIdentity-Name/-Version/-Id) in
 *      the heureka.drain.fetch-window-ms before the change has fetched
 *      again since (with the read-only response cache: since its next
 *      refresh), or that window has passed since the change.
 * 409 {"drained":false,"waiting":{...}} says what it still waits for;
 * 404 for an id this node has never seen. ?wait=30s holds the answer
 * until drained or the wait is over (at most 120 s; BARRIER_PARKED_MAX
 * such requests at once, 503 past that).
 *
 * Every table is bounded: the changes remembered (BARRIER_RECORDS_MAX,
 * oldest forgotten, and an instance not UP without a record counts from
 * when it is asked about) and the fetching clients (BARRIER_FETCHERS_MAX,
 * least recent forgotten; while one forgotten may have fetched inside a
 * change's window the answer waits for the window). Keys are hashed with
 * the process's SipHash key (hash.h), so a client cannot flood a chain.
 */
#ifndef BARRIER_H
#define BARRIER_H

struct hquery;
struct hreq;

#include <stddef.h>
#include <stdint.h>

#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "clock.h"

#define BARRIER_RECORDS_MAX	4096
#define BARRIER_FETCHERS_MAX	8192
#define BARRIER_PARKED_MAX	16
#define BARRIER_WAIT_MAX_MS	120000
#define BARRIER_POLL_MS		100	/* parked answers re-checked */

struct config;
struct event_base;
struct peers;
struct registry;
struct replicate;
struct watch;

/* What the barrier reads (borrowed; they outlive it). */
struct barrier_deps {
	struct event_base	*base;		/* the parked answers' timer */
	const struct config	*conf;		/* heureka.drain.* */
	struct registry		*reg;		/* observed */
	struct peers		*peers;
	struct replicate	*repl;		/* what each peer answered */
	struct watch		*watch;		/* what each stream wrote */
};

/*
 * Observe deps->reg (after the watch and replication, which the barrier
 * reads right after each change).
 */
struct barrier	*barrier_new(const struct barrier_deps *);
void		 barrier_free(struct barrier *);	/* NULL is fine */
/* A registry fetch (GET apps, apps/delta) from req's client. */
void		 barrier_fetched(struct barrier *, struct hreq *,
		    int64_t mono);
/*
 * Serve GET {base}heureka/apps/{APP}/{ID}/drained; app and id are the
 * path segments as the router decoded them (rest_route.c routes here).
 * Replies exactly once.
 */
void		 barrier_http(struct barrier *, struct hreq *,
		    const char *app, const char *id,
		    const struct hquery *query, struct hk_time now);

#endif
