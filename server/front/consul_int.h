/*
 * consul_int.h: what consul.c (routes, blocking queries) and
 * consul_json.c (Consul's JSON shapes from the lease table) share.
 * Included by those two only.
 */
#ifndef CONSUL_INT_H
#define CONSUL_INT_H

#include <stdint.h>

struct buf;
struct config;
struct registry;

#define CONSUL_MAX_TAGS		16	/* ?tag= filters of one query */
#define CONSUL_MAX_APP_TAGS	256	/* distinct tags one service lists */

/* The resource a request reads. */
enum consul_kind {
	CONSUL_SERVICES = 0,	/* catalog/services */
	CONSUL_SERVICE,		/* catalog/service/<name> */
	CONSUL_HEALTH,		/* health/service/<name> */
	CONSUL_NODES,		/* catalog/nodes */
	CONSUL_LEADER,		/* status/leader */
	CONSUL_PEERS,		/* status/peers */
	CONSUL_SELF,		/* agent/self */
};

/* One read: the resource and its filters (strings owned). */
struct consul_q {
	enum consul_kind	 kind;
	char			*name;		/* SERVICE, HEALTH */
	int			 passing;	/* HEALTH: UP only */
	char			*tags[CONSUL_MAX_TAGS];	/* all must match */
	int			 ntags;
};

/* What the encoders read besides the registry. */
struct consul_view {
	struct registry		*reg;
	const struct config	*conf;
	const char		*hostname;
	int			 port;
	int64_t			 mono;
};

/* consul_json.c */
uint64_t	consul_index(struct registry *, const struct consul_q *);
void		consul_encode(struct buf *, const struct consul_view *,
		    const struct consul_q *);

#endif
