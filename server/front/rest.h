/*
 * rest.h: the HTTP front door. One route table maps /eureka/v2/...,
 * /eureka/... and /v2/... onto the Eureka REST handlers (spec §2), hands
 * {base}/heureka/... to the watch streams and the extension (ext.c),
 * airlift's /v1/ routes to airlift.c and everything else to the
 * dashboard. Every handler replies exactly once; bad input gets a 4xx
 * with a short reason. A replication batch is decoded here and applied
 * by batch.c.
 */
#ifndef REST_H
#define REST_H

#include <stddef.h>
#include <stdint.h>

#include "access.h"
#include "metrics.h"	/* enum metrics_limit: rest_body_cap */

struct access;
struct admit;
struct airlift;
struct cache;
struct audit;
struct config;
struct barrier;
struct consul;
struct console;
struct csrf;
struct dashboard;
struct hhead;
struct hreq;
struct ext;
struct gate;
struct metrics;
struct ops;
struct registry;
struct rest;
struct watch;

/* The body a route takes (anything else is refused at header time). */
enum rest_body {
	REST_BODY_NONE = 0,
	REST_BODY_INSTANCE,		/* eureka.server.max-body-bytes */
	REST_BODY_BATCH,		/* eureka.server.max-batch-bytes */
};

/*
 * What the routes use and route to, all borrowed: they must outlive the
 * struct rest. NULL where noted.
 */
struct rest_deps {
	struct registry		*reg;
	struct cache		*cache;
	struct gate		*gate;		/* start-up read gate */
	const struct config	*conf;
	struct access		*access;	/* who may do what */
	struct admit		*admit;		/* registration rate limit */
	size_t			 memory_budget;	/* max-memory-bytes */
	struct metrics		*metrics;	/* NULL: not recorded */
	struct watch		*watch;		/* heureka/watch */
	struct airlift		*airlift;	/* /v1/ routes */
	struct consul		*consul;	/* /v1/ Consul catalog */
	struct dashboard	*dashboard;	/* outside the bases */
	struct ops		*ops;		/* /health, /info, /metrics,
						   {version}/status */
	struct ext		*ext;		/* heureka/ digest, apps, stats;
						   NULL: 404 */
	struct barrier		*barrier;	/* heureka/apps/A/I/drained,
						   told of fetches; NULL */
	struct console		*console;	/* heureka/audit, doctor, who
						   acts; NULL: none */
	struct csrf		*csrf;		/* browser writes (csrf.h);
						   NULL: not checked */
	struct audit		*audit;		/* batches set each item's
						   origin; NULL: none */
};

/* A router over deps (copied; what they point to is borrowed). */
struct rest	*rest_new(const struct rest_deps *);
void		 rest_free(struct rest *);		/* NULL is fine */

/* The front's callback for every request; arg is the struct rest. */
void		 rest_dispatch_cb(struct hreq *, void *);
/* The front's body_cap (http.h); arg is the struct rest. */
int		 rest_body_cap(void *, const struct hhead *, const char *,
		     uint64_t *, enum metrics_limit *, char *, size_t);

/*
 * What the router makes of a request target, decided once: the route it
 * reaches and, from that route, the role the caller needs. The dispatcher
 * judges access on role, the front caps the body on body,
 * and both come from the same decoding of the same path (README
 * "Security": the role is a property of the route, never a second
 * reading of the raw path).
 */
struct rest_target {
	int		 status;	/* 0: routed; else 400, 404 or 405 */
	int		 route;		/* index in the table, -1 if none */
	int		 outside;	/* outside the REST bases (ops, dashboard) */
	enum access_kind role;		/* what the caller must be */
	enum rest_body	 body;		/* the body the route takes */
	char		 allow[64];	/* 405: "GET, HEAD, PUT" */
};

/*
 * Resolve method (an EVHTTP_REQ_* value) on path (a URI path as evhttp
 * gives it, not yet decoded) into t; returns t->status. A path outside
 * the bases is status 0, route -1, outside 1: its role is open for the
 * probes ops.c answers, else read (GET, HEAD) or write. A path under a
 * base that no route takes is 400 (malformed: undecodable, NUL, invalid
 * UTF-8, too many segments), 404 or 405; its role is the strictest of
 * the routes of that path (405), else read or write by method. Pure: no
 * server state, safe on any input (a fuzz target).
 */
int		 rest_route_resolve(const char *path, int method,
		     struct rest_target *t);
/*
 * rest_route_resolve() for the front's body caps: 0 with *body set when a route (or
 * a path outside the bases) takes it, else the status, with allow set
 * for a 405.
 */
int		 rest_route_lookup(const char *path, int method,
		     enum rest_body *, char *allow, size_t allowlen);
/*
 * Route i of the table (the fuzz target's oracle matches decoded
 * segments against it on its own): its method mask, its pattern (up to
 * 5 segments, "*" any one, NULL-terminated when shorter) and its role.
 * -1 past the end.
 */
int		 rest_route_at(size_t i, int *methods,
		     const char *const **pattern, enum access_kind *role);
/* Answer a request the front refused at its head; the connection closes. */
void		 rest_reject(struct hreq *, struct rest *,
		     int code, const char *reason);
/* Fetches waiting for a body built in slices (struct parked). */
size_t		 rest_parked_count(const struct rest *);

#endif
