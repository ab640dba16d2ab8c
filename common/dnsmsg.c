/*
 * dnsmsg.c: parse one DNS query's question and build its answer (RFC 1035
 * §4.1, RFC 2782, RFC 3596, RFC 6891). Only what an authoritative server
 * for one zone needs: a query has exactly one question, no answer or
 * authority records, and at most DNSMSG_MAX_ADDITIONAL additional ones
 * (an OPT among them gives the sender's UDP size); a compression pointer
 * in the question is refused (FORMERR) since no resolver sends one there.
 * Answers compress their owner names to the question (offset 12) and an
 * additional record's owner to the SRV target it names, so an A record
 * costs 16 bytes: 28 of them fit in 512 bytes after a 40-byte question.
 * Truncation cuts whole answer records and sets TC (RFC 2181 §9); the
 * client then asks over TCP, where the budget is DNS_TCP_MAX.
 */
#include <stdint.h>
#include <string.h>

#include "dnsmsg.h"

#define DNSMSG_MAX_ADDITIONAL	8	/* OPT, TSIG, cookies: few */
#define DNS_FLAG_QR		0x8000
#define DNS_FLAG_AA		0x0400
#define DNS_FLAG_TC		0x0200
#define DNS_FLAG_RD		0x0100
#define DNS_OPT_LEN		11	/* root name, type, class, ttl, rdlen */

/* A big-endian 16-bit value at p. */
static uint16_t
get16(const uint8_t *p)
{
	return ((uint16_t)(p[0] << 8 | p[1]));
}

/* Store a big-endian 16-bit value at p. */
static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

/* Store a big-endian 32-bit value at p. */
static void
put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v & 0xffff);
}

/*
 * Read the question's name at *off into name (dotted, lower case): -1 on
 * a pointer, a label past the end, a name over DNS_NAME_MAX bytes or a
 * byte a name of ours cannot hold.
 */
static int
parse_qname(const uint8_t *pkt, size_t len, size_t *off, char *name)
{
	size_t	o = *off, out = 0, wire = 0, i;
	uint8_t	l, c;

	for (;;) {
		if (o >= len)
			return (-1);
		l = pkt[o++];
		wire += 1 + (size_t)l;
		if (wire > DNS_NAME_MAX)
			return (-1);
		if (l == 0)
			break;
		if ((l & 0xc0) != 0 || o + l > len)
			return (-1);
		if (out > 0)
			name[out++] = '.';
		for (i = 0; i < l; i++) {
			c = pkt[o + i];
			if (c <= 0x20 || c >= 0x7f || c == '.')
				return (-1);
			if (c >= 'A' && c <= 'Z')
				c += 'a' - 'A';
			name[out++] = (char)c;
		}
		o += l;
	}
	name[out] = '\0';
	*off = o;
	return (0);
}

/* Skip a name in a record (pointers allowed): -1 past the end. */
static int
skip_name(const uint8_t *pkt, size_t len, size_t *off)
{
	size_t	o = *off;
	uint8_t	l;

	for (;;) {
		if (o >= len)
			return (-1);
		l = pkt[o++];
		if (l == 0)
			break;
		if ((l & 0xc0) == 0xc0) {
			if (o >= len)
				return (-1);
			o++;
			break;
		}
		if ((l & 0xc0) != 0 || o + l > len)
			return (-1);
		o += l;
	}
	*off = o;
	return (0);
}

/* Parse a query; see dnsmsg.h. */
enum dnsmsg_parse
dnsmsg_parse(const uint8_t *pkt, size_t len, struct dnsmsg_query *q)
{
	size_t		off = DNS_HEADER_LEN, rdlen;
	uint16_t	qd, an, ns, ar, type, i;

	memset(q, 0, sizeof *q);
	q->udp_size = DNS_UDP_MIN;
	if (len < DNS_HEADER_LEN)
		return (DNSMSG_DROP);
	q->id = get16(pkt);
	q->flags = get16(pkt + 2);
	if (q->flags & DNS_FLAG_QR)
		return (DNSMSG_DROP);
	if (((q->flags >> 11) & 0xf) != 0)
		return (DNSMSG_NOTIMP);
	qd = get16(pkt + 4);
	an = get16(pkt + 6);
	ns = get16(pkt + 8);
	ar = get16(pkt + 10);
	if (qd != 1 || an != 0 || ns != 0 || ar > DNSMSG_MAX_ADDITIONAL)
		return (DNSMSG_FORMERR);
	if (parse_qname(pkt, len, &off, q->name) != 0 || off + 4 > len)
		return (DNSMSG_FORMERR);
	q->qtype = get16(pkt + off);
	q->qclass = get16(pkt + off + 2);
	off += 4;
	for (i = 0; i < ar; i++) {
		if (skip_name(pkt, len, &off) != 0 || off + 10 > len)
			return (DNSMSG_FORMERR);
		type = get16(pkt + off);
		rdlen = get16(pkt + off + 8);
		if (type == DNS_TYPE_OPT) {
			/* RFC 6891 §6.1.1: one OPT at most. */
			if (q->edns)
				return (DNSMSG_FORMERR);
			q->edns = 1;
			q->udp_size = get16(pkt + off + 2);
		}
		off += 10;
		if (off + rdlen > len)
			return (DNSMSG_FORMERR);
		off += rdlen;
	}
	return (DNSMSG_OK);
}

/* The UDP budget of the query's sender. */
size_t
dnsmsg_udp_limit(const struct dnsmsg_query *q)
{
	if (!q->edns || q->udp_size < DNS_UDP_MIN)
		return (DNS_UDP_MIN);
	if (q->udp_size > DNS_UDP_MAX)
		return (DNS_UDP_MAX);
	return (q->udp_size);
}

/* Whether s is a name we put on the wire: labels of 1..63 of [a-z0-9-_]. */
int
dnsmsg_name_ok(const char *s)
{
	size_t	label = 0, total = 0;

	if (*s == '\0')
		return (0);
	for (; *s != '\0'; s++) {
		total++;
		if (*s == '.') {
			if (label == 0)
				return (0);
			label = 0;
			continue;
		}
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || *s == '-' || *s == '_'))
			return (0);
		if (++label > 63)
			return (0);
	}
	/* The wire adds a length byte before the first label and a root. */
	return (label > 0 && total + 2 <= DNS_NAME_MAX);
}

/* Encode a dotted name at out (room bytes): its length, 0 if no room. */
static size_t
put_name(uint8_t *out, size_t room, const char *name)
{
	size_t		 used = 0, l;
	const char	*e;

	while (*name != '\0') {
		e = strchr(name, '.');
		l = e != NULL ? (size_t)(e - name) : strlen(name);
		if (l == 0 || l > 63 || used + 1 + l > room)
			return (0);
		out[used] = (uint8_t)l;
		memcpy(out + used + 1, name, l);
		used += 1 + l;
		name += l;
		if (*name == '.')
			name++;
	}
	if (used + 1 > room || used + 1 > DNS_NAME_MAX)
		return (0);
	out[used++] = 0;
	return (used);
}

/*
 * Append one record at out + *len (max bytes in all): 0, or -1 when it
 * does not fit. srvoff[k] is where an[k]'s target was written (0: not).
 */
static int
put_rr(uint8_t *out, size_t *len, size_t max, const struct dnsmsg_rr *rr,
    uint32_t ttl, const uint16_t *srvoff, uint16_t *target_at)
{
	size_t		o = *len, n, rdlen;
	uint16_t	ptr = DNS_HEADER_LEN;

	if (rr->owner_srv > 0 && srvoff != NULL &&
	    srvoff[rr->owner_srv - 1] != 0)
		ptr = srvoff[rr->owner_srv - 1];
	if (rr->owner != NULL && ptr == DNS_HEADER_LEN) {
		if ((n = put_name(out + o, max - o, rr->owner)) == 0)
			return (-1);
		o += n;
	} else {
		if (o + 2 > max)
			return (-1);
		put16(out + o, 0xc000 | ptr);
		o += 2;
	}
	if (o + 10 > max)
		return (-1);
	put16(out + o, rr->type);
	put16(out + o + 2, DNS_CLASS_IN);
	put32(out + o + 4, ttl);
	o += 10;
	switch (rr->type) {
	case DNS_TYPE_A:
	case DNS_TYPE_AAAA:
		rdlen = rr->type == DNS_TYPE_A ? 4 : 16;
		if (o + rdlen > max)
			return (-1);
		memcpy(out + o, rr->addr, rdlen);
		break;
	case DNS_TYPE_SRV:
		if (o + 6 > max)
			return (-1);
		put16(out + o, rr->priority);
		put16(out + o + 2, rr->weight);
		put16(out + o + 4, rr->port);
		if ((n = put_name(out + o + 6, max - o - 6, rr->target)) == 0)
			return (-1);
		if (target_at != NULL && o + 6 < 0x4000)
			*target_at = (uint16_t)(o + 6);
		rdlen = 6 + n;
		break;
	default:
		return (-1);
	}
	put16(out + o - 2, (uint16_t)rdlen);
	*len = o + rdlen;
	return (0);
}

/* Build the answer; see dnsmsg.h. */
size_t
dnsmsg_build(const struct dnsmsg_query *q, const struct dnsmsg_answer *a,
    uint8_t *out, size_t max)
{
	uint16_t	 flags, srvoff[256];
	uint16_t	 nan = 0, nad = 0;
	size_t		 len = DNS_HEADER_LEN, n, i, budget;
	int		 tc = 0;

	if (max < DNS_HEADER_LEN)
		return (0);
	if (max > DNS_TCP_MAX)
		max = DNS_TCP_MAX;
	budget = max;
	if (q->edns) {
		if (budget < DNS_HEADER_LEN + DNS_OPT_LEN)
			return (0);
		budget -= DNS_OPT_LEN;
	}
	if (q->name[0] == '\0') {
		if (len + 1 > budget)
			return (0);
		out[len++] = 0;
	} else {
		if ((n = put_name(out + len, budget - len, q->name)) == 0)
			return (0);
		len += n;
	}
	if (len + 4 > budget)
		return (0);
	put16(out + len, q->qtype);
	put16(out + len + 2, q->qclass);
	len += 4;
	memset(srvoff, 0, sizeof srvoff);
	for (i = 0; i < a->nan; i++) {
		if (put_rr(out, &len, budget, &a->an[i], a->ttl, NULL,
		    i < 256 ? &srvoff[i] : NULL) != 0) {
			tc = 1;
			break;
		}
		nan++;
	}
	for (i = 0; !tc && i < a->nad; i++) {
		/* Compression only to targets we know the place of. */
		struct dnsmsg_rr rr = a->ad[i];

		if (rr.owner_srv > 256)
			rr.owner_srv = 0;
		if (put_rr(out, &len, budget, &rr, a->ttl, srvoff, NULL) != 0)
			break;
		nad++;
	}
	if (q->edns) {
		/* Root owner, OPT, our UDP size, no extended rcode, no data. */
		out[len] = 0;
		put16(out + len + 1, DNS_TYPE_OPT);
		put16(out + len + 3, DNS_UDP_MAX);
		put32(out + len + 5, 0);
		put16(out + len + 9, 0);
		len += DNS_OPT_LEN;
		nad++;
	}
	flags = DNS_FLAG_QR | DNS_FLAG_AA | (q->flags & DNS_FLAG_RD) |
	    (tc ? DNS_FLAG_TC : 0) | (a->rcode & 0xf);
	put16(out, q->id);
	put16(out + 2, flags);
	put16(out + 4, 1);
	put16(out + 6, nan);
	put16(out + 8, 0);
	put16(out + 10, nad);
	return (len);
}

/* The header alone, for a query that did not parse. */
size_t
dnsmsg_build_error(const uint8_t *query, size_t len, int rcode, uint8_t *out,
    size_t max)
{
	uint16_t	flags;

	if (len < 4 || max < DNS_HEADER_LEN)
		return (0);
	flags = DNS_FLAG_QR | (get16(query + 2) & (0xf << 11 | DNS_FLAG_RD)) |
	    (rcode & 0xf);
	memset(out, 0, DNS_HEADER_LEN);
	memcpy(out, query, 2);
	put16(out + 2, flags);
	return (DNS_HEADER_LEN);
}
