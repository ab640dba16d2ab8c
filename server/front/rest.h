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

struct access;
struct airlift;
struct cache;
struct audit;
struct config;
struct console;
struct csrf;
struct dashboard;
struct evhttp_request;
struct ext;
struct gate;
struct metrics;
struct ops;
struct ratelimit;
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
	struct ratelimit	*register_rl;	/* per client address */
	size_t			 memory_budget;	/* max-memory-bytes */
	struct metrics		*metrics;	/* NULL: not recorded */
	struct watch		*watch;		/* heureka/watch */
	struct airlift		*airlift;	/* /v1/ routes */
	struct dashboard	*dashboard;	/* outside the bases */
	struct ops		*ops;		/* /health, /info, /metrics,
						   {version}/status */
	struct ext		*ext;		/* heureka/ digest, apps, stats;
						   NULL: 404 */
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

/* The evhttp generic callback; arg is the struct rest. */
void		 rest_dispatch_cb(struct evhttp_request *, void *);

/*
 * The route for method (an EVHTTP_REQ_* value) on path (a URI path, not
 * yet decoded): 0 with *body set when one takes it (paths outside the REST
 * bases included: they take no body), else the status the dispatcher
 * answers: 400 (malformed path), 404, or 405 with allow set ("GET, HEAD").
 * Pure: no server state, safe on any input (a fuzz target).
 */
int		 rest_route_lookup(const char *path, int method,
		     enum rest_body *, char *allow, size_t allowlen);
/* Answer a request the header-time guard refused; the connection closes. */
void		 rest_reject(struct evhttp_request *, struct rest *,
		     int code, const char *reason);
/* Fetches waiting for a body built in slices (struct parked). */
size_t		 rest_parked_count(const struct rest *);

#endif
