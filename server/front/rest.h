/*
 * rest.h: the HTTP front door. One route table maps /eureka/v2/...,
 * /eureka/... and /v2/... onto the Eureka REST handlers (spec §2), hands
 * {base}/heureka/... to peer.c and everything else to dashboard.c. Every
 * handler replies exactly once; bad input gets a 4xx with a short reason.
 */
#ifndef REST_H
#define REST_H

#include <stddef.h>

struct server;
struct evhttp_request;
struct repl_list;
struct repl_response;

/* The body a route takes (anything else is refused at header time). */
enum rest_body {
	REST_BODY_NONE = 0,
	REST_BODY_INSTANCE,		/* eureka.server.max-body-bytes */
	REST_BODY_BATCH,		/* eureka.server.max-batch-bytes */
};

/* The evhttp generic callback; arg is the struct server. */
void	rest_dispatch_cb(struct evhttp_request *, void *);
/*
 * Apply a replication batch item by item (§6.3), as the HTTP handlers do.
 * A register item's instance is taken over (its info is NULL after).
 */
void	rest_apply_batch(struct server *, struct repl_list *,
	    struct repl_response *);

/*
 * The route for method (an EVHTTP_REQ_* value) on path (a URI path, not
 * yet decoded): 0 with *body set when one takes it (paths outside the REST
 * bases included: they take no body), else the status the dispatcher
 * answers: 400 (malformed path), 404, or 405 with allow set ("GET, HEAD").
 * Pure: no server state, safe on any input (a fuzz target).
 */
int	rest_route_lookup(const char *path, int method, enum rest_body *,
	    char *allow, size_t allowlen);
/* Answer a request the header-time guard refused; the connection closes. */
void	rest_reject(struct evhttp_request *, struct server *, int code,
	    const char *reason);

/* Open the access log: a path, "-" for stderr, NULL to close. */
void	rest_set_access_log(const char *);

#endif
