/*
 * rest.h: the HTTP front door. One route table maps /eureka/v2/...,
 * /eureka/... and /v2/... onto the Eureka REST handlers (spec §2), hands
 * {base}/heureka/... to peer.c and everything else to dashboard.c. Every
 * handler replies exactly once; bad input gets a 4xx with a short reason.
 */
#ifndef REST_H
#define REST_H

struct server;
struct evhttp_request;
struct repl_list;
struct repl_response;

/* The evhttp generic callback; arg is the struct server. */
void	rest_dispatch_cb(struct evhttp_request *, void *);
/* Apply a replication batch item by item (§6.3), as the HTTP handlers do. */
void	rest_apply_batch(struct server *, const struct repl_list *,
	    struct repl_response *);

/* Open the access log: a path, "-" for stderr, NULL to close. */
void	rest_set_access_log(const char *);

#endif
