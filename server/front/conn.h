/*
 * conn.h: the connections of the main port, each counted from its accept
 * to its close (docs/security.md, "Limits"). When an accepted connection
 * goes past eureka.server.max-connections, or leaves fewer than
 * heureka.server.descriptor-reserve descriptors below the process's
 * limit, one connection is closed at once, before it reads a byte: the
 * oldest that has not sent a whole request head yet, else the new one.
 * Every connection is one of the HTTP front's (http_conn.c), with its
 * deadlines.
 */
#ifndef CONN_H
#define CONN_H

struct bufferevent;
struct conns;
struct event_base;
struct evconnlistener;
struct hconn;
struct hfront_conf;
struct metrics;
struct registry;

/* What the connections use (borrowed; they outlive the struct conns). */
struct conns_deps {
	struct event_base	*base;
	int			 max_connections;
	int			 descriptor_reserve;
	struct metrics		*metrics;	/* NULL: not counted */
	unsigned		*open;		/* the gauge /metrics shows */
	struct registry		*reg;		/* NULL: heads not counted */
	size_t			 memory_budget;	/* max-memory-bytes, 0: none */
	const char		*cap_key;	/* the cap's key in logs (NULL:
						   eureka.server.max-
						   connections) */
	/* Told of every close, with closearg (NULL: no one). */
	void			(*closecb)(struct hconn *, void *);
	void			*closearg;
};

/* The descriptor limit is read once, here (RLIMIT_NOFILE). */
struct conns	*conns_new(const struct conns_deps *);
/* Closes every connection (their closes count down). NULL is fine. */
void		 conns_free(struct conns *);
/*
 * A connection was accepted on bev (its socket set; tls: a TLS
 * bufferevent): counted, and admitted as a connection of the front conf
 * or closed at once, before it reads a byte.
 */
void		 conns_accepted(struct conns *, const struct hfront_conf *,
		     struct bufferevent *, int tls);
/* The listener: stopped for a second when accept() fails (server.c). */
void		 conns_set_listener(struct conns *, struct evconnlistener *);

#endif
