/*
 * peers_int.h: the peer objects shared by replicate.c (the queue's
 * timer, batches, connections, the peer list) and sync.c (start-up sync
 * and anti-entropy requests on the same peers). Nothing else includes it:
 * the rest of the server sees replicate.h, sync.h and struct peer_info.
 */
#ifndef PEERS_INT_H
#define PEERS_INT_H

#include <stddef.h>
#include <stdint.h>

#include "clock.h"
#include "log.h"
#include "peerq.h"
#include "syncrule.h"
#include "tls.h"
#include "url.h"

struct evhttp_connection;
struct evhttp_request;
struct buf;
struct event;
struct event_base;
struct config;
struct registry;
struct gate;
struct digest;

/*
 * Bodies of control answers, set on the connection per request: a page
 * of a pull (at most eureka.server.sync-page-bytes, 64 MiB, plus one
 * instance), a digest, and a Java peer's whole GET apps/, which has no
 * pages (nor does a heureka peer of the previous version: its whole
 * registry must fit in one page's bound).
 */
#define PEER_PAGE_BODY_MAX	(80 * 1024 * 1024)
#define PEER_DIGEST_BODY_MAX	(64 * 1024)
#define PEER_CTL_BODY_MAX	(512 * 1024 * 1024)

struct peer;

/* One sync or anti-entropy request in flight. */
struct peer_ctl {
	struct peer		*p;
	enum sync_kind		 kind;
	int			 java;		/* fell back to GET apps/ */
	int			 timed_out;
	char			*query;		/* a page's query, or NULL */
};

/* The batch in flight. */
struct peer_batch {
	struct peer		*p;
	struct peer_task	*tasks[PEER_BATCH_MAX];
	size_t			 n;
	int			 timed_out;
	int			 error_seen;
};

struct peer {
	struct peers		*ps;
	char			*raw;		/* as configured */
	struct peer_url		 u;
	char			*auth;		/* "Basic ..." or NULL */
	char			*addr;		/* numeric host, NULL if not
						   resolved */
	char			*hosthdr;	/* Host: header */
	struct evhttp_connection *repl_conn;
	struct evhttp_connection *ctl_conn;
	struct peer_queue	*q;
	struct peer_backoff	 bo;
	struct event		*ev;		/* dispatch timer */
	int64_t			 ev_due;	/* mono ms, -1 idle */
	struct peer_batch	*inflight;
	struct peer_ctl		*ctl;
	unsigned		 tls_gen;	/* context of the connections */
	int			 no_ae;		/* peer lacks the extension */
	int			 ae_mismatch;	/* digest rounds that differed */
	uint64_t		 pull_buckets;	/* of the pull under way */
	unsigned		 pull_pages;	/* pages of it so far */
	size_t			 pull_adopted;	/* instances they gave */

	int			 reachable;
	int64_t			 last_success_ms;
	uint64_t		 batches_sent;
	uint64_t		 items_sent;
	uint64_t		 failures;
	uint64_t		 failed_items;	/* dropped by permanent errors */
	uint64_t		 ae_rounds;
	uint64_t		 ae_pulls;
	uint64_t		 ae_adopted;
	uint64_t		 ae_cancels;
	uint64_t		 ae_pages;	/* pages pulled */
	uint64_t		 ae_apps;	/* applications they held */
	uint64_t		 ae_instances;
	uint64_t		 ae_buckets;	/* buckets asked for */
	uint64_t		 sync_pages;	/* start-up sync pages */
	uint64_t		 not_found;	/* heartbeat 404 -> register */
	uint64_t		 conflicts;	/* heartbeat 409 -> adopt */
};

struct peers {
	struct event_base	 *base;		/* struct peers_deps, borrowed */
	const struct config	 *conf;
	struct registry		 *reg;
	struct gate		 *gate;
	const char		 *hostname;
	int			  port;
	struct peer		**v;
	size_t			  n;
	struct event		*ae_ev;
	struct event		*sync_ev;
	struct event		*dg_ev;		/* digest refresh */
	struct digest		*digest;
	int			  started;
	struct sync_state	  sync;
	int64_t			  sync_started_ms;
	int64_t			  sync_ms;	/* how long the sync took */
	struct log_ratelim	  rl;
	SSL_CTX			 *tls_ctx;	/* for https:// peers */
	unsigned		  tls_gen;	/* bumped on each new one */
};

/* replicate.c: the HTTP glue both sides use. */
void	peer_kick(struct peer *, int64_t delay, int64_t mono);
void	peer_enqueue(struct peer *, struct peer_task *, int64_t mono);
void	peer_tls_refresh(struct peer *);
void	peer_conn_nodelay(struct evhttp_connection *);
void	peer_headers(struct peer *, struct evhttp_request *);
int	peer_body(struct evhttp_request *, struct buf *, size_t max);

/* sync.c: its timers, made and freed with the peers. */
void	peers_sync_init(struct peers *);
void	peers_sync_clear(struct peers *);

#endif
