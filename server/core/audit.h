/*
 * audit.h: who changed what in the registry (docs/console.md). Every
 * change (register, re-register, cancel, eviction, status override, its
 * removal, metadata, airlift announcement) becomes one record: when, the
 * node where it entered the cluster, who (the authenticated user, "peer",
 * "anonymous", or "server" for an eviction) and the client's address. A
 * replicated change keeps the record of its origin when the item carries
 * it (repl.h's origin fields).
 *
 * The records live in a ring bounded in bytes (heureka.audit.max-bytes,
 * counted in the memory budget); the oldest go first. Pure: no clock, no
 * libevent; the caller passes the time in every record.
 *
 * Ownership: audit_new gives, audit_free releases (NULL is fine); the
 * strings of a who are copied into the record.
 */
#ifndef AUDIT_H
#define AUDIT_H

#include <stddef.h>
#include <stdint.h>

struct buf;

enum audit_what {
	AUDIT_REGISTER = 0,
	AUDIT_REREGISTER,
	AUDIT_CANCEL,
	AUDIT_EVICT,
	AUDIT_STATUS,		/* a status override set */
	AUDIT_OVERRIDE_REMOVED,
	AUDIT_METADATA,
	AUDIT_AIRLIFT,		/* an airlift announcement */
	AUDIT_NWHAT
};

/* Who made a change and where it entered the cluster; borrowed. */
struct audit_who {
	const char	*node;		/* "host:port" of the entry node */
	const char	*user;		/* name, "peer", "anonymous", "server" */
	const char	*addr;		/* the client's address, or "" */
};

/* One record as the ring lends it. */
struct audit_rec {
	uint64_t	 seq;		/* 1, 2, ... on this node */
	int64_t		 at_ms;		/* wall clock when recorded */
	enum audit_what	 what;
	const char	*app;
	const char	*id;
	const char	*detail;	/* status, "from a peer", ... or "" */
	const char	*node;
	const char	*user;
	const char	*addr;
	int		 replicated;	/* arrived from a peer */
};

struct audit;

/* A ring of at most max_bytes of records (>= 4096; smaller is raised). */
struct audit	*audit_new(size_t max_bytes);
void		 audit_free(struct audit *);
/* The bytes the ring holds now, for the memory budget and /metrics. */
size_t		 audit_bytes(const struct audit *);
size_t		 audit_count(const struct audit *);
uint64_t	 audit_dropped(const struct audit *);	/* ring overwrote */

/*
 * Record a change; who's NULL fields become "". Returns the record
 * (lent until the next audit_add) for a writer of the same line to disk.
 */
const struct audit_rec *audit_add(struct audit *, int64_t at_ms,
		     enum audit_what, const char *app, const char *id,
		     const char *detail, const struct audit_who *,
		     int replicated);

/*
 * Who is acting now. The front sets it for each request before any
 * handler runs (audit_set_who: copied, NULL clears it); a replication
 * batch sets each item's origin over it (audit_set_origin, NULL fields
 * of node: none) and clears it after the item. The registry's observer
 * reads audit_who, which is never NULL (an empty who outside requests:
 * the eviction timer, the start-up sync).
 */
void		 audit_set_who(struct audit *, const struct audit_who *);
/*
 * The same, worked out only if someone asks: fn(arg, &who) is called at
 * the first audit_who of the request (most requests, heartbeats, change
 * nothing and never pay for the copy). audit_set_who(NULL) ends it.
 */
void		 audit_set_who_lazy(struct audit *,
		     void (*)(void *, struct audit_who *), void *);
void		 audit_set_origin(struct audit *, const char *node,
		     const char *user, const char *addr);
const struct audit_who *audit_who(struct audit *);

/* The name a kind has in JSON ("register", "evict", ...). */
const char	*audit_what_name(enum audit_what);

/* One record as a JSON object (the line the file writer appends). */
void		 audit_rec_json(struct buf *, const struct audit_rec *);

/*
 * The records matching app and id (NULL: any; case-insensitive app) and
 * at or after since_ms (wall), newest first, at most limit (0: all), as
 * {"records":[...],"dropped":N}.
 */
void		 audit_json(const struct audit *, struct buf *,
		     const char *app, const char *id, int64_t since_ms,
		     size_t limit);

#endif
