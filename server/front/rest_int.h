/*
 * rest_int.h: what the REST front's files share: one request in flight
 * (struct rctx), a parked fetch, the router, the route table's row, the
 * replies and helpers every handler uses, and the handlers the table
 * names. Included only by rest.c and rest_*.c (tests/layers enforces
 * it): everything else uses rest.h.
 */
#ifndef REST_INT_H
#define REST_INT_H

struct hquery;
struct hreq;

#include <sys/queue.h>

#include <stdint.h>

#include <event2/http.h>

#include "access.h"
#include "cache.h"
#include "clock.h"
#include "http.h"
#include "rest.h"

#define MAX_SEGMENTS	8
#define SEG_INLINE	256	/* decoded segments of a usual path */
#define BAD_STATUS	"value must be one of UP, DOWN, STARTING, " \
			"OUT_OF_SERVICE, UNKNOWN"

/* One request in flight: what the handlers need, and what metrics record. */
struct rctx {
	const struct rest_deps	*d;		/* the router's */
	struct hreq	*req;
	enum evhttp_cmd_type	 method;
	const char		*route;
	int64_t			 start_us;
	struct hk_time		 now;		/* read once per request */
	struct hquery		 query;
	int			 replicated;
	char			*seg[MAX_SEGMENTS];	/* in segbuf or segheap */
	int			 nseg;
	char			*segheap;	/* a path longer than segbuf */
	char			 segbuf[SEG_INLINE];	/* last: not cleared */
};

/*
 * A fetch waiting for its body while the cache builds it a slice per loop
 * turn (cache_step): the full registry, the delta, one application or a
 * VIP (res, and name for the last two). Served in arrival order; at most
 * one per
 * connection (the front reads a connection's next request only after this
 * one's reply), so their number is bounded by eureka.server.
 * max-connections. A client that goes away meanwhile is noticed by its
 * hold (hold.c) and its connection freed.
 */
struct parked {
	TAILQ_ENTRY(parked)	 entry;
	struct rest		*rest;
	struct rctx		 x;		/* no segments, no query */
	enum cache_res		 res;
	struct cache_key	 k;
	char			*name;		/* app or VIP, else NULL */
	struct hold		*hold;		/* the client went away */
};
TAILQ_HEAD(parkedq, parked);

/* The router: its dependencies, copied at rest_new(), and parked fetches. */
struct rest {
	struct rest_deps	 d;
	struct parkedq		 parked;
	struct event		*slice_ev;	/* the next slice, next turn */
};

/*
 * A route: method mask, the role a caller needs for it (access.h), the
 * pattern ("*" is any one segment), handler, and the body it takes (the
 * front refuses any other body at the head). The role is the route's:
 * whoever reaches a handler, under whatever spelling of its path, was
 * judged on this entry (docs/security.md).
 */
struct route {
	int		 methods;
	enum access_kind role;
	const char	*pattern[5];
	const char	*label;
	int		 app_id;	/* 1: seg[1] app, 2: + seg[2] id */
	void		(*fn)(struct rctx *);
	enum rest_body	 body;
};

/* rest.c */
void		rest_record(struct rctx *, int);
void		reply(struct rctx *, int, const char *, const char *, size_t);
void		reply_error(struct rctx *, int, const char *);
void		reply_body(struct rctx *, struct cache_body *,
		     const struct cache_key *);
void		request_key(struct rctx *, struct cache_key *, int);
void		reply_instance(struct rctx *, int, const struct instance *);
int		query_status(struct rctx *, const char *,
		     enum instance_status *);
int		query_dirty(struct rctx *, int64_t *);
int		check_access(struct rctx *);

/* rest_route.c */
int		route_match(const struct route *, char **, int);
int		route_method(int);
void		allow_string(int, char *, size_t);
int		split_path(char **, int *, const char *, char *, size_t,
		     char **);
size_t		rest_base(const char *);
const struct route *route_resolve(const char *, int, char **, int *, char *,
		     size_t, char **, struct rest_target *);
int		parse_query(struct hreq *, const char *, struct hquery *);
extern const struct route rest_routes[];
extern const size_t rest_nroutes;

/* rest_park.c */
void		parked_free(struct parked *);
void		h_apps(struct rctx *);
void		h_delta(struct rctx *);
void		h_app(struct rctx *);
void		h_vip(struct rctx *);

/* rest_handlers.c */
void		h_register(struct rctx *);
void		h_instance(struct rctx *);
void		h_instance_by_id(struct rctx *);
void		h_renew(struct rctx *);
void		h_cancel(struct rctx *);
void		h_status_put(struct rctx *);
void		h_status_delete(struct rctx *);
void		h_metadata(struct rctx *);
void		h_overrides(struct rctx *);
void		h_asg(struct rctx *);
void		h_status_info(struct rctx *);
void		h_batch(struct rctx *);
void		h_airlift(struct rctx *);
void		h_watch(struct rctx *);
void		h_leader(struct rctx *);
void		h_ext(struct rctx *);
void		h_console(struct rctx *);
void		h_drained(struct rctx *);
void		h_consul(struct rctx *);

#endif /* REST_INT_H */
