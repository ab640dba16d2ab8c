/*
 * dnszone.h: what heureka's DNS zone holds (docs/dns-consul.md): the
 * records for one parsed question, read from the lease table when it is
 * asked (O(instances of the application); a VIP's walk is O(instances)).
 * No socket: dnssrv.c carries the bytes.
 */
#ifndef DNSZONE_H
#define DNSZONE_H

#include <stddef.h>
#include <stdint.h>

#include "dnsmsg.h"

struct registry;

/* The answer to one question, and the storage its records point into. */
struct dnszone_result {
	struct dnsmsg_answer	 a;		/* points into an, ad */
	struct dnsmsg_rr	*an;
	size_t			 nan, cap_an;
	struct dnsmsg_rr	*ad;
	size_t			 nad, cap_ad;
	char			**names;	/* SRV targets, owned */
	size_t			 nnames, cap_names;
};

/*
 * Fill r with the answer to q for the zone domain (lower case, no trailing
 * dot) at mono (monotonic ms): its code, TTL and records, shuffled.
 * Free r with dnszone_result_free whatever the outcome.
 */
void		 dnszone_lookup(struct registry *, const char *domain,
		     uint32_t ttl, const struct dnsmsg_query *, int64_t mono,
		     struct dnszone_result *);
void		 dnszone_result_free(struct dnszone_result *);

#endif
