/*
 * airlift.h: airlift's discovery protocol (Trino's) on heureka's lease
 * table. Each announced service is an instance of the Eureka application
 * AIRLIFT-<TYPE>, so it expires, replicates, syncs and shows like any
 * lease; see airlift.c for the mapping.
 */
#ifndef AIRLIFT_H
#define AIRLIFT_H

struct hreq;

#include <event2/http.h>

#include "clock.h"

struct admit;
struct airlift;
struct config;
struct registry;

/* Eureka application names of airlift services start with this. */
#define AIRLIFT_APP_PREFIX	"AIRLIFT-"
/* The reserved metadata keys each airlift lease carries (airlift.c). */
#define AIRLIFT_META_TYPE	"airlift.type"
#define AIRLIFT_META_ID		"airlift.id"
#define AIRLIFT_META_POOL	"airlift.pool"
#define AIRLIFT_META_LOCATION	"airlift.location"
#define AIRLIFT_META_ENV	"airlift.environment"
#define AIRLIFT_META_NODE	"airlift.nodeId"	/* dynamic ones */
#define AIRLIFT_META_STATIC	"airlift.static"	/* static ones */

/*
 * The routes over the lease table, the configuration and the registration
 * rate limit (borrowed; a new or changed service takes a token, admit.h).
 */
struct airlift	*airlift_new(struct registry *, const struct config *,
		     struct admit *);
void		 airlift_free(struct airlift *);	/* NULL is fine */

/*
 * Serve one request under /v1/ whose URL-decoded segments are seg[0..n)
 * (seg[0] is "announcement" or "service"). Replies exactly once and
 * returns the status code sent.
 */
int		 airlift_http(struct airlift *, struct hreq *,
		    enum evhttp_cmd_type, char **seg, int nseg,
		    struct hk_time now);

#endif
