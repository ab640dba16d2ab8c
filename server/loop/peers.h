/*
 * peers.h: the cluster's peers as connections (spec §6): the peer list
 * from the configuration, one replication and one control connection per
 * peer, TLS for https:// peers, and the request glue (headers, bodies).
 * A configured URL whose host is a name is one peer per address the name
 * has (a Kubernetes headless Service), this node's own left out; names
 * are looked up with evdns, never blocking the loop, again every
 * heureka.peer.resolve-interval-ms, and with back-off while they fail,
 * so peers join and leave the list as the name's addresses change.
 * It knows neither replication nor sync: replicate.c and sync.c observe
 * the list (a peer added, its connections replaced, a peer removed) and
 * keep their own per-peer state in a slot of each peer; server.c wires
 * the three. The rest of the server reads the list through peers_count
 * and peers_info.
 */
#ifndef PEERS_H
#define PEERS_H

#include <stddef.h>
#include <stdint.h>

#include "clock.h"
#include "log.h"
#include "tls.h"
#include "url.h"

struct buf;
struct config;
struct event_base;
struct evhttp_connection;
struct evhttp_request;

/*
 * Bodies of control answers, set on the connection per request: a page
 * of a pull (at most eureka.server.sync-page-bytes, 64 MiB, plus one
 * instance), a digest, and a Java peer's whole GET apps/, which has no
 * pages (nor does a heureka peer of the previous version: its whole
 * registry must fit in one page's bound). A replication batch's answer
 * is bounded by PEER_REPL_BODY_MAX.
 */
#define PEER_PAGE_BODY_MAX	(80 * 1024 * 1024)
#define PEER_DIGEST_BODY_MAX	(64 * 1024)
#define PEER_CTL_BODY_MAX	(512 * 1024 * 1024)
#define PEER_REPL_BODY_MAX	(16 * 1024 * 1024)

/* Observers of the list: replicate.c and sync.c (and room to spare). */
#define PEER_SLOTS		4
#define PEERS_MAX_SELFS		8	/* self URLs remembered */

/* What the peer list uses, borrowed for its lifetime. */
struct peers_deps {
	struct event_base	*base;
	const struct config	*conf;		/* live: SIGHUP swaps in it */
	const char		*hostname;	/* ours: self detection */
	int			 port;		/* ours: bound port */
};

/* A peer's two connections: batches, and sync/anti-entropy pulls. */
enum peer_conn {
	PEER_CONN_REPL,
	PEER_CONN_CTL
};

struct peers;
struct peer_source;

/*
 * One peer. Only the loop's modules read the fields; each keeps its own
 * state in slot[] under the index peers_observe gave it.
 */
struct peer {
	struct peers		*ps;
	struct peer_source	*src;		/* the configured URL */
	struct peer_url		 u;		/* display: "URL (addr)" for a
						   name */
	char			*auth;		/* "Basic ..." or NULL */
	char			*addr;		/* numeric host to connect to */
	char			*hosthdr;	/* Host: header */
	struct evhttp_connection *conn[2];	/* enum peer_conn */
	unsigned		 tls_gen;	/* context of the connections */
	int			 reachable;	/* last request succeeded */
	int			 last_status;	/* its last HTTP answer; -1:
						   no answer; 0: not asked */
	int			 heureka;	/* it answered with heureka's
						   X-Heureka-Ready header:
						   batches carry the origin
						   fields (repl.h) */
	int64_t			 last_success_ms;	/* wall */
	int64_t			 date_skew_ms;	/* its last answer's Date less
						   our clock (the doctor) */
	int64_t			 date_mono;	/* when; 0 never */
	void			*slot[PEER_SLOTS];
};

/* Per-peer state, read by the dashboard, /metrics and heureka/stats. */
struct peer_info {
	const char	*url;		/* credentials already removed */
	int		 reachable;	/* last request succeeded */
	int		 heureka;	/* known to be heureka (origins
					   replicated to it) */
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
 * An observer of the list. added: p joined (also called, for every peer
 * already there, when the observer registers); it returns the
 * observer's state of p, kept in p->slot[] under the observer's index;
 * removed: p is about to be freed, after its connections, whose pending
 * requests libevent frees without their callbacks, and the observer
 * frees its state (a peer whose address changes is one removed and one
 * added); busy: does the
 * observer have a request in flight on p (a TLS context change waits for
 * none); info: fill the observer's part of peer_info; settled: every
 * configured name has had its first answer (or failure), called once.
 * Any may be NULL.
 */
struct peer_observer {
	void	*(*added)(struct peer *, void *);
	void	(*removed)(struct peer *, void *);
	int	(*busy)(const struct peer *, void *);
	void	(*info)(const struct peer *, struct peer_info *, void *);
	void	(*settled)(void *);
};

/* The list's own counters (/metrics). */
struct peers_totals {
	size_t		sources;	/* configured URLs (not ours) */
	size_t		unresolved;	/* names not answering now */
	uint64_t	dns_lookups;
	uint64_t	dns_failures;	/* failed, or no address */
	uint64_t	added;		/* peers that joined */
	uint64_t	removed;	/* peers that left */
	uint64_t	removed_dropped; /* their tasks, dropped */
};

/*
 * Build the peer list from conf (service_url_default_zone, my_url,
 * heureka.dns.nameservers): addresses at once, names as they resolve.
 */
struct peers	*peers_new(const struct peers_deps *, char **cause);
/* Stop the lookups (shutdown, while the loop runs). */
void		 peers_stop(struct peers *);
void		 peers_free(struct peers *);
/* Re-read the peer list (SIGHUP); kept URLs keep their peers. */
int		 peers_reload(struct peers *, char **cause);
/* Has every configured name had its first answer? */
int		 peers_settled(const struct peers *);
void		 peers_totals(const struct peers *, struct peers_totals *);
/* Load heureka.peer.ssl.* as peers_new would (--check-config). */
int		 peers_tls_check(const struct config *, char **cause);
/* Observe the list; returns the observer's slot, -1 if all are taken. */
int		 peers_observe(struct peers *, const struct peer_observer *,
		    void *);
size_t		 peers_count(const struct peers *);
/*
 * The i-th URL of the configured list that named this node itself
 * (dropped from the list), NULL past the last; for the doctor.
 */
const char	*peers_self_url(const struct peers *, size_t);
struct peer	*peers_get(const struct peers *, size_t);
void		 peers_info(const struct peers *, size_t, struct peer_info *);

/*
 * Send req on p's connection `which` (max_body: the answer's bound, 0 to
 * keep): moves an idle peer to a new TLS context first, writes without
 * Nagle. 0 sent; -1 not (no connection, or libevent refused), req freed.
 */
int	peer_request(struct peer *, enum peer_conn, struct evhttp_request *,
	    int method, const char *uri, size_t max_body);
/* Common request headers (Host, Accept, DiscoveryIdentity-*, auth). */
void	peer_headers(struct peer *, struct evhttp_request *);
/* Note the Date header of p's answer req against now (the doctor). */
void	peer_note_date(struct peer *, struct evhttp_request *, struct hk_time);
/* The response body, inflated if gzip; -1 on a bad body or over max. */
int	peer_body(struct evhttp_request *, struct buf *, size_t max);
/* Why p's connection `which` failed TLS verification, or NULL. */
const char *peer_tls_error(const struct peer *, enum peer_conn);

#endif
