/*
 * dnsmsg.h: the DNS wire format heureka's DNS interface speaks (RFC 1035
 * §4, RFC 2782 SRV, RFC 3596 AAAA, RFC 6891 EDNS0's OPT): one query's
 * question parsed, one answer built to a byte budget. Pure: no socket,
 * no clock, no libevent, so the fuzz target (tests/fuzz/fuzz_dnsmsg.c)
 * runs it on any bytes. server/front/dnssrv.c decides what to answer.
 */
#ifndef DNSMSG_H
#define DNSMSG_H

#include <stddef.h>
#include <stdint.h>

#define DNS_HEADER_LEN		12
#define DNS_NAME_MAX		255	/* wire bytes of a name */
#define DNS_UDP_MIN		512	/* RFC 1035 §4.2.1 */
#define DNS_UDP_MAX		4096	/* the largest EDNS0 size we use */
#define DNS_TCP_MAX		65535	/* a TCP message's length field */

#define DNS_TYPE_A		1
#define DNS_TYPE_AAAA		28
#define DNS_TYPE_SRV		33
#define DNS_TYPE_OPT		41
#define DNS_TYPE_ANY		255
#define DNS_CLASS_IN		1

#define DNS_RCODE_NOERROR	0
#define DNS_RCODE_FORMERR	1
#define DNS_RCODE_SERVFAIL	2
#define DNS_RCODE_NXDOMAIN	3
#define DNS_RCODE_NOTIMP	4
#define DNS_RCODE_REFUSED	5

/* What parsing a query found. */
enum dnsmsg_parse {
	DNSMSG_OK = 0,		/* one question, name readable */
	DNSMSG_DROP,		/* no header or a response: no answer */
	DNSMSG_FORMERR,		/* answer FORMERR (the header's id) */
	DNSMSG_NOTIMP,		/* an opcode other than QUERY */
};

/*
 * One query's question. name is lower case, labels joined by dots,
 * without the root's trailing dot ("" for the root); a label holding a
 * dot or a byte outside printable ASCII makes the query FORMERR.
 */
struct dnsmsg_query {
	uint16_t	 id;
	uint16_t	 flags;		/* the header's, as received */
	uint16_t	 qtype;
	uint16_t	 qclass;
	int		 edns;		/* an OPT record came with it */
	uint16_t	 udp_size;	/* EDNS0's size, else DNS_UDP_MIN */
	char		 name[DNS_NAME_MAX + 1];
};

/* One resource record of an answer. */
struct dnsmsg_rr {
	uint16_t	 type;		/* A, AAAA or SRV */
	const char	*owner;		/* dotted; NULL: the question's name */
	uint8_t		 addr[16];	/* A: 4 bytes, AAAA: 16 */
	uint16_t	 priority;	/* SRV */
	uint16_t	 weight;
	uint16_t	 port;
	const char	*target;	/* SRV: dotted, no trailing dot */
	size_t		 owner_srv;	/* k > 0: owner is an[k - 1]'s
					   target (compressed to it) */
};

/*
 * An answer: its code, the answer and additional records, their TTL. The
 * records are lent for the duration of dnsmsg_build.
 */
struct dnsmsg_answer {
	int			 rcode;
	uint32_t		 ttl;
	const struct dnsmsg_rr	*an;
	size_t			 nan;
	const struct dnsmsg_rr	*ad;
	size_t			 nad;
};

/* Parse a query of len bytes. */
enum dnsmsg_parse dnsmsg_parse(const uint8_t *, size_t, struct dnsmsg_query *);
/*
 * The largest answer the query's sender takes over UDP: its EDNS0 size
 * within [DNS_UDP_MIN, DNS_UDP_MAX], else DNS_UDP_MIN.
 */
size_t		 dnsmsg_udp_limit(const struct dnsmsg_query *);
/*
 * Build the answer to q in out, at most max bytes (at least
 * DNS_HEADER_LEN): header (authoritative, no recursion), the question
 * echoed, then as many answer records as fit in order, then as many
 * additional ones. When an answer record does not fit the truncation bit
 * is set and the rest are left out (additional records are left out
 * silently, RFC 2181 §9). An OPT record answers one the query carried.
 * Returns the bytes written; 0 when max is too small for the header and
 * question (or a name does not encode: the caller checks them first).
 */
size_t		 dnsmsg_build(const struct dnsmsg_query *,
		    const struct dnsmsg_answer *, uint8_t *out, size_t max);
/* The header alone with rcode, for a query that did not parse. */
size_t		 dnsmsg_build_error(const uint8_t *query, size_t len, int rcode,
		    uint8_t *out, size_t max);
/* Whether s is a host name a DNS name can carry (letters, digits, - _ .). */
int		 dnsmsg_name_ok(const char *);

#endif
