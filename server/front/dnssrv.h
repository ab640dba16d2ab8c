/*
 * dnssrv.h: heureka's DNS interface (docs/dns-consul.md), in the manner of
 * Consul's: <app>.service.<domain> (A, AAAA, SRV), leader.<app>.service.
 * <domain>, <vip>.vip.<domain> and <hex>.addr.<domain>, answered from the
 * lease table on every query, over UDP and TCP on one port. The wire
 * format is common/dnsmsg.c's.
 */
#ifndef DNSSRV_H
#define DNSSRV_H

#include <stddef.h>
#include <stdint.h>

#include "clock.h"

struct config;
struct event_base;
struct gate;
struct registry;

struct dnssrv;

/* What the DNS front reads, all borrowed: they outlive the struct dnssrv. */
struct dnssrv_deps {
	struct event_base	*base;
	struct registry		*reg;
	const struct gate	*gate;		/* SERVFAIL until reads open */
	const struct config	*conf;		/* heureka.dns.* */
	/*
	 * NULL in the server. Tests: called with the UDP port just bound,
	 * before TCP is bound on its number (check_dnssrv takes it).
	 */
	void			(*udp_bound)(int, void *);
	void			*udp_bound_arg;
};

/* Counters for /metrics and the tests. */
struct dnssrv_stats {
	uint64_t	udp_queries;
	uint64_t	tcp_queries;
	uint64_t	truncated;	/* UDP answers with TC set */
	uint64_t	formerr;	/* FORMERR answered */
	uint64_t	dropped;	/* datagrams left unanswered */
	uint64_t	tcp_refused;	/* connections past the cap */
};

struct dnssrv	*dnssrv_new(const struct dnssrv_deps *);
void		 dnssrv_free(struct dnssrv *);		/* NULL is fine */
/*
 * Bind UDP and TCP on heureka.dns.bind (else server.address) and
 * heureka.dns.port (0: a free port, the same for both) and serve them on
 * the base. -1 with *cause set when either cannot be bound.
 */
int		 dnssrv_start(struct dnssrv *, char **cause);
int		 dnssrv_port(const struct dnssrv *);	/* bound, else 0 */
const struct dnssrv_stats *dnssrv_stats(const struct dnssrv *);
/*
 * Answer one query of len bytes into out (max bytes: the transport's
 * budget); returns the answer's length, 0 to send nothing.
 */
size_t		 dnssrv_answer(struct dnssrv *, const uint8_t *query,
		     size_t len, uint8_t *out, size_t max, int tcp,
		     struct hk_time now);

#endif
