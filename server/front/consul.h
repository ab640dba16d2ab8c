/*
 * consul.h: a read-only subset of Consul's HTTP API (catalog, health,
 * status, agent/self) over heureka's lease table, with Consul's blocking
 * queries, so that tools with Consul support and none for Eureka
 * (Prometheus consul_sd_configs, the Go and Java Consul clients, Traefik)
 * discover heureka's services. The mapping is in consul.c and
 * docs/dns-consul.md.
 */
#ifndef CONSUL_H
#define CONSUL_H

struct hquery;
struct hreq;

#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "clock.h"

struct config;
struct consul;
struct event_base;
struct registry;

/* What the Consul routes read, all borrowed. */
struct consul_deps {
	struct event_base	*base;
	struct registry		*reg;
	const struct config	*conf;		/* heureka.consul.* */
	const char		*hostname;	/* agent/self, status/leader */
	const int		*port;		/* bound once listening */
};

struct consul	*consul_new(const struct consul_deps *);
/* Free; requests still blocked lose their connections. NULL is fine. */
void		 consul_free(struct consul *);

/*
 * Serve GET /v1/<seg[0]>/... (seg[0..n) URL-decoded: catalog, health,
 * status, agent). Replies exactly once, now or, for a blocking query
 * whose index has not moved, when it moves or its wait ends; returns
 * the status code sent or to be sent.
 */
int		 consul_http(struct consul *, struct hreq *,
		     char **seg, int nseg, const struct hquery *query,
		     struct hk_time now);
/* Requests blocked right now (tests, /metrics). */
size_t		 consul_waiting(const struct consul *);

#endif
