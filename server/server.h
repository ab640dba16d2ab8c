/*
 * server.h: the one object that ties heurekad together. One event loop owns
 * all of it (design.md): the registry, the response cache, the peers and
 * the metrics live on `base` and are touched only from loop callbacks, so
 * nothing on the hot path takes a lock.
 */
#ifndef SERVER_H
#define SERVER_H

#include <stdint.h>

#include <event2/event.h>

#include "config.h"
#include "looplag.h"
#include "registry.h"

struct access;
struct audit;
struct auditfile;
struct console;
struct csrf;
struct doctor;
struct airlift;
struct consul;
struct dnssrv;
struct cache;
struct conns;
struct dashboard;
struct ops;
struct peers;
struct replicate;
struct sync;
struct ext;
struct barrier;
struct drain;
struct metrics;
struct admit;
struct rest;
struct watch;
struct gate;
struct evconnlistener;
struct hfront_conf;
struct ssl_ctx_st;

struct server {
	struct event_base	*base;
	struct hfront_conf	*front;		/* the main port's requests */
	struct config		*conf;		/* owned by main */
	struct registry		*reg;
	struct cache		*cache;
	struct peers		*peers;		/* the list, connections */
	struct replicate	*repl;		/* batches to the peers */
	struct sync		*sync;		/* start-up sync, anti-entropy */
	struct ext		*ext;		/* {base}heureka/ */
	struct barrier		*barrier;	/* heureka/.../drained */
	struct metrics		*metrics;
	struct admit		*admit;		/* registration rate limit */
	struct access		*access;	/* who may do what */
	struct watch		*watch;		/* heureka/watch streams */
	struct reglog		*reglog;	/* registry changes logged */
	struct drain		*drain;		/* SIGTERM: the wait */
	struct airlift		*airlift;	/* /v1/ discovery */
	struct consul		*consul;	/* /v1/ Consul catalog */
	struct dnssrv		*dns;		/* NULL: DNS off */
	struct rest		*rest;		/* the route table */
	struct ops		*ops;		/* /health, /info, /metrics */
	struct dashboard	*dashboard;
	struct audit		*audit;		/* who changed what */
	struct auditfile	*auditfile;	/* heureka.audit.file */
	struct doctor		*doctor;	/* findings */
	struct console		*console;	/* the two wired in */
	struct csrf		*csrf;		/* dashboard action tokens */
	char			*node;		/* "host:port", once bound */
	struct event		*doctor_ev;	/* the doctor's scan */
	struct event		*doctor_step_ev; /* its next slice */
	size_t			 memory_budget;	/* resolved max-memory-bytes */
	uint64_t		 delta_dropped_seen;	/* logged up to here */

	int			 port;		/* bound port */
	char			*hostname;	/* gethostname() */
	struct gate		*gate;		/* readiness, read gate */
	unsigned		 open_connections;
	struct conns		*conns;		/* admission, conn.c */

	struct event		*evict_ev;
	struct event		*evict_step_ev;	/* a run's next slice */
	int			 evict_busy;	/* a run is under way */
	int			 evict_count;	/* evicted by it so far */
	struct event		*minute_ev;
	struct event		*delta_ev;
	struct event		*delta_step_ev;	/* a purge's next slice */
	struct event		*cache_ev;	/* read-only cache refresh */
	struct event		*cache_step_ev;	/* its next slice, next turn */
	int64_t			 cache_pass_ms;	/* when its pass began */
	uint64_t		 cache_pass_step0;	/* slices before it */
	struct event		*accept_ev;	/* resume accepting */
	struct event		*lag_ev;	/* loop-latency probe */
	struct event		*history_ev;	/* dashboard history sampler */
	int64_t			 lag_due_us;	/* when it should run */
	struct looplag		 looplag;
	struct evconnlistener	*listener;
	struct ssl_ctx_st	*tls_ctx;	/* server.ssl.enabled: for new
						   connections (SIGHUP swaps) */
	struct hfront_conf	*plain_front;	/* heureka.server.plain-port */
	struct evconnlistener	*plain_listener;
	int			 plain_port;
	struct conns		*plain_conns;	/* its admission (conn.c) */
	unsigned		 plain_open;	/* its connections */
};

struct server	*server_new(struct event_base *, struct config *);
void		 server_free(struct server *);
int		 server_listen(struct server *, char **cause);
void		 server_start(struct server *);	/* timers, peers, sync */
/*
 * Run the event loop until it is told to exit or break (or has nothing
 * left), timing each turn's CPU into the looplag statistics: -1 when the
 * loop failed.
 */
int		 server_run(struct server *);
void		 server_stop(struct server *);	/* /health 503, watches end */
void		 server_drain(struct server *,
		     void (*)(void *, size_t, int64_t), void *);
/*
 * The default of eureka.server.max-memory-bytes: half the physical RAM,
 * or half the cgroup's memory.max when that is lower.
 */
size_t		 server_default_memory_budget(void);
/*
 * Replace the TLS context for new connections with one built from cf's
 * server.ssl.* keys (SIGHUP); open connections keep theirs. -1 with
 * *cause, and nothing changed, on error.
 */
int		 server_tls_reload(struct server *, const struct config *,
		    char **cause);
/* Load server.ssl.* (when enabled) and heureka.peer.ssl.* to check them. */
int		 server_tls_check(const struct config *, char **cause);

#endif
