/*
 * dnszone.c: the records of heureka's DNS zone, read from the lease table
 * on each question so an answer follows every change at once. The names
 * (docs/dns-consul.md; Consul's DNS interface is the model):
 *
 *   <app>.service.<domain>, _<app>._tcp.service.<domain>
 *	A / AAAA: the addresses of the visible UP instances (ipAddr, else a
 *	host name that is an address literal), each address once, shuffled;
 *	SRV: one record per instance, its host name (or <hex>.addr.<domain>
 *	when that is not a DNS name) and port (the secure port when only it
 *	is enabled), with the target's address in the additional section.
 *   leader.<app>.service.<domain>	the application's leader (leader.c)
 *   <vip>.vip.<domain>			UP instances whose VIP or secure
 *					VIP list holds <vip> (any case)
 *   <hex>.addr.<domain>		the address the hex spells (8 digits
 *					IPv4, 32 IPv6), as SRV targets use
 *
 * An unknown application or VIP is NXDOMAIN; a known one with nothing UP
 * (or nothing of the asked family, or a type we do not hold) is NOERROR
 * with no records (NODATA); a name outside the domain is REFUSED (no
 * recursion). "Visible" is leader.c's rule: UP, and the lease not expired
 * while expiration is on.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dnsmsg.h"
#include "dnszone.h"
#include "instance.h"
#include "leader.h"
#include "registry.h"
#include "xmalloc.h"

/* What a question names inside the zone. */
enum zone_kind {
	ZONE_NONE = 0,		/* NXDOMAIN */
	ZONE_EMPTY,		/* an existing name without records */
	ZONE_APP,
	ZONE_LEADER,
	ZONE_VIP,
	ZONE_ADDR,
};

/* An instance's address: family 0 when it has none. */
struct zone_addr {
	int	family;		/* AF_INET, AF_INET6 */
	uint8_t	b[16];
};

/* Append a record to an (or ad) growing it; returns the new record. */
static struct dnsmsg_rr *
zone_push(struct dnsmsg_rr **v, size_t *n, size_t *cap)
{
	if (*n == *cap) {
		*cap = *cap == 0 ? 16 : *cap * 2;
		*v = xreallocarray(*v, *cap, sizeof **v);
	}
	memset(&(*v)[*n], 0, sizeof **v);
	return (&(*v)[(*n)++]);
}

/* Keep s (owned from here) until the result is freed; returns it. */
static char *
zone_keep(struct dnszone_result *r, char *s)
{
	if (r->nnames == r->cap_names) {
		r->cap_names = r->cap_names == 0 ? 16 : r->cap_names * 2;
		r->names = xreallocarray(r->names, r->cap_names,
		    sizeof *r->names);
	}
	r->names[r->nnames++] = s;
	return (s);
}

/* Parse an address literal; 0 when s is one. */
static int
zone_parse_addr(const char *s, struct zone_addr *a)
{
	a->family = 0;
	if (s == NULL)
		return (-1);
	if (inet_pton(AF_INET, s, a->b) == 1)
		a->family = AF_INET;
	else if (inet_pton(AF_INET6, s, a->b) == 1)
		a->family = AF_INET6;
	return (a->family != 0 ? 0 : -1);
}

/* An instance's address: ipAddr, else a host name that is a literal. */
static void
zone_instance_addr(const struct instance *in, struct zone_addr *a)
{
	if (zone_parse_addr(in->ip_addr, a) != 0)
		zone_parse_addr(in->host_name, a);
}

/* Whether the i-th instance of a is visible and UP (leader.c's rule). */
static int
zone_visible(struct registry *reg, const struct reg_app *a, size_t i,
    int64_t mono)
{
	const struct instance	*in = reg_app_instance_at(a, i);

	return (in->status == STATUS_UP &&
	    !(registry_lease_expiration_enabled(reg) &&
	    reg_app_lease_expired(a, i, mono)));
}

/* Add the address records the query type asks for. */
static void
zone_add_addr(struct dnszone_result *r, uint16_t qtype,
    const struct zone_addr *ad)
{
	struct dnsmsg_rr	*rr;

	if (ad->family == AF_INET && (qtype == DNS_TYPE_A ||
	    qtype == DNS_TYPE_ANY)) {
		rr = zone_push(&r->an, &r->nan, &r->cap_an);
		rr->type = DNS_TYPE_A;
		memcpy(rr->addr, ad->b, 4);
	} else if (ad->family == AF_INET6 && (qtype == DNS_TYPE_AAAA ||
	    qtype == DNS_TYPE_ANY)) {
		rr = zone_push(&r->an, &r->nan, &r->cap_an);
		rr->type = DNS_TYPE_AAAA;
		memcpy(rr->addr, ad->b, 16);
	}
}

/* <hex>.addr.<domain> for an address (kept by r). */
static char *
zone_addr_name(struct dnszone_result *r, const struct zone_addr *ad,
    const char *domain)
{
	char	hex[33], *s;
	size_t	i, n = ad->family == AF_INET ? 4 : 16;

	for (i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", ad->b[i]);
	xasprintf(&s, "%s.addr.%s", hex, domain);
	return (zone_keep(r, s));
}

/* Add an instance's SRV record and its target's address. */
static void
zone_add_srv(struct dnszone_result *r, const struct instance *in,
    const char *domain)
{
	struct zone_addr	 ad, lit;
	struct dnsmsg_rr	*rr;
	const char		*target;
	char			*t;
	int			 port;

	zone_instance_addr(in, &ad);
	if (in->host_name != NULL && dnsmsg_name_ok(in->host_name) &&
	    zone_parse_addr(in->host_name, &lit) != 0) {
		t = zone_keep(r, xstrdup(in->host_name));
		for (char *p = t; *p != '\0'; p++)
			if (*p >= 'A' && *p <= 'Z')
				*p += 'a' - 'A';
		target = t;
	} else if (ad.family != 0 &&
	    strlen(domain) + sizeof ".addr." + 32 <= DNS_NAME_MAX)
		target = zone_addr_name(r, &ad, domain);
	else
		return;
	port = !in->port_enabled && in->secure_port_enabled ?
	    in->secure_port : in->port;
	rr = zone_push(&r->an, &r->nan, &r->cap_an);
	rr->type = DNS_TYPE_SRV;
	rr->priority = 1;
	rr->weight = 1;
	rr->port = (uint16_t)(port > 0 && port <= 65535 ? port : 0);
	rr->target = target;
	if (ad.family == 0)
		return;
	rr = zone_push(&r->ad, &r->nad, &r->cap_ad);
	rr->type = ad.family == AF_INET ? DNS_TYPE_A : DNS_TYPE_AAAA;
	memcpy(rr->addr, ad.b, ad.family == AF_INET ? 4 : 16);
	rr->owner = target;
	rr->owner_srv = r->nan;
}

/* Add an instance's records for the query type. */
static void
zone_add_instance(struct dnszone_result *r, uint16_t qtype,
    const struct instance *in, const char *domain)
{
	struct zone_addr	ad;

	if (qtype == DNS_TYPE_SRV) {
		zone_add_srv(r, in, domain);
		return;
	}
	zone_instance_addr(in, &ad);
	zone_add_addr(r, qtype, &ad);
}

/* Order of address records (type, then bytes), for deduplication. */
static int
zone_rr_cmp(const void *a, const void *b)
{
	const struct dnsmsg_rr	*x = a, *y = b;

	if (x->type != y->type)
		return (x->type < y->type ? -1 : 1);
	return (memcmp(x->addr, y->addr, sizeof x->addr));
}

/* Shuffle n records (Fisher-Yates over random(3), seeded in main.c). */
static void
zone_shuffle(struct dnsmsg_rr *v, size_t n)
{
	struct dnsmsg_rr	t;
	size_t			i, j;

	for (i = n; i > 1; i--) {
		j = (size_t)random() % i;
		t = v[i - 1];
		v[i - 1] = v[j];
		v[j] = t;
	}
}

/*
 * Address answers: each address once, then shuffled. SRV answers keep
 * their additional records' indexes, so they were shuffled as instances.
 */
static void
zone_finish(struct dnszone_result *r, uint16_t qtype)
{
	size_t	i, k;

	if (qtype == DNS_TYPE_SRV || r->nan < 2)
		return;
	qsort(r->an, r->nan, sizeof *r->an, zone_rr_cmp);
	for (i = 1, k = 1; i < r->nan; i++)
		if (zone_rr_cmp(&r->an[i], &r->an[k - 1]) != 0)
			r->an[k++] = r->an[i];
	r->nan = k;
	zone_shuffle(r->an, r->nan);
}

/* Instances to answer with, before they are shuffled. */
struct zone_cands {
	const struct instance	**v;
	size_t			  n, cap;
};

/* Add one candidate. */
static void
zone_cand(struct zone_cands *c, const struct instance *in)
{
	if (c->n == c->cap) {
		c->cap = c->cap == 0 ? 16 : c->cap * 2;
		c->v = xreallocarray(c->v, c->cap, sizeof *c->v);
	}
	c->v[c->n++] = in;
}

/* The visible UP instances of an app. */
static void
zone_app(struct zone_cands *c, struct registry *reg, struct reg_app *a,
    int64_t mono)
{
	size_t	i, n = reg_app_size(a);

	for (i = 0; i < n; i++)
		if (zone_visible(reg, a, i, mono))
			zone_cand(c, reg_app_instance_at(a, i));
}

/*
 * The visible UP instances of a VIP: a walk of every application.
 * Returns whether any instance (UP or not) carries the VIP.
 */
static int
zone_vip(struct zone_cands *c, struct registry *reg, const char *vip,
    int64_t mono)
{
	struct reg_app		*a;
	const struct instance	*in;
	size_t			 i, j, n, na = registry_app_count(reg);
	int			 known = 0;

	for (i = 0; i < na; i++) {
		a = registry_app_at(reg, i);
		for (j = 0, n = reg_app_size(a); j < n; j++) {
			in = reg_app_instance_at(a, j);
			if (!instance_has_vip(in->vip_address, vip,
			    INSTANCE_VIP_ICASE) &&
			    !instance_has_vip(in->secure_vip_address, vip,
			    INSTANCE_VIP_ICASE))
				continue;
			known = 1;
			if (zone_visible(reg, a, j, mono))
				zone_cand(c, in);
		}
	}
	return (known);
}

/* The candidates' records in a random order. */
static void
zone_emit(struct dnszone_result *r, struct zone_cands *c, uint16_t qtype,
    const char *domain)
{
	const struct instance	*t;
	size_t			 i, j;

	for (i = c->n; i > 1; i--) {
		j = (size_t)random() % i;
		t = c->v[i - 1];
		c->v[i - 1] = c->v[j];
		c->v[j] = t;
	}
	for (i = 0; i < c->n; i++)
		zone_add_instance(r, qtype, c->v[i], domain);
	zone_finish(r, qtype);
}

/* <hex>.addr: the address the hex spells; -1 if it spells none. */
static int
zone_hex_addr(const char *hex, size_t len, struct zone_addr *ad)
{
	size_t		i;
	unsigned int	v;
	char		two[3];

	if (len != 8 && len != 32)
		return (-1);
	for (i = 0; i < len; i += 2) {
		two[0] = hex[i];
		two[1] = hex[i + 1];
		two[2] = '\0';
		if (strspn(two, "0123456789abcdef") != 2 ||
		    sscanf(two, "%2x", &v) != 1)
			return (-1);
		ad->b[i / 2] = (uint8_t)v;
	}
	ad->family = len == 8 ? AF_INET : AF_INET6;
	return (0);
}

/* Whether name ends with "." suffix; *rest_len is what comes before it. */
static int
zone_suffix(const char *name, size_t len, const char *suffix,
    size_t *rest_len)
{
	size_t	sl = strlen(suffix);

	if (len <= sl + 1 || name[len - sl - 1] != '.' ||
	    memcmp(name + len - sl, suffix, sl) != 0)
		return (0);
	*rest_len = len - sl - 1;
	return (1);
}

/*
 * What rel (the name without ".<domain>", len bytes) names: its kind and
 * the application, VIP or hex in key (keylen bytes at most).
 */
static enum zone_kind
zone_parse(const char *rel, size_t len, char *key, size_t keylen)
{
	size_t		 n;
	enum zone_kind	 k;

	if ((len == 7 && memcmp(rel, "service", 7) == 0) ||
	    (len == 3 && memcmp(rel, "vip", 3) == 0) ||
	    (len == 4 && memcmp(rel, "addr", 4) == 0))
		return (ZONE_EMPTY);
	if (zone_suffix(rel, len, "service", &n)) {
		k = ZONE_APP;
		if (n > 7 && memcmp(rel, "leader.", 7) == 0) {
			k = ZONE_LEADER;
			rel += 7;
			n -= 7;
		} else if (n > 6 && rel[0] == '_' &&
		    (memcmp(rel + n - 5, "._tcp", 5) == 0 ||
		    memcmp(rel + n - 5, "._udp", 5) == 0)) {
			/* RFC 2782's _<service>._<proto> form. */
			rel++;
			n -= 6;
		}
	} else if (zone_suffix(rel, len, "vip", &n))
		k = ZONE_VIP;
	else if (zone_suffix(rel, len, "addr", &n))
		k = ZONE_ADDR;
	else
		return (ZONE_NONE);
	if (n == 0 || n >= keylen || (k != ZONE_VIP &&
	    memchr(rel, '.', n) != NULL))
		return (ZONE_NONE);
	memcpy(key, rel, n);
	key[n] = '\0';
	return (k);
}

/* The answer for a name inside the zone (rel: without ".<domain>"). */
static void
zone_answer(struct dnszone_result *r, struct registry *reg,
    const char *domain, const char *rel, size_t len, uint16_t qtype,
    int64_t mono)
{
	struct zone_cands	 c = { NULL, 0, 0 };
	struct zone_addr	 ad;
	struct reg_app		*a;
	const struct instance	*lead;
	char			 key[DNS_NAME_MAX + 1];
	enum zone_kind		 kind = zone_parse(rel, len, key, sizeof key);

	switch (kind) {
	case ZONE_NONE:
		r->a.rcode = DNS_RCODE_NXDOMAIN;
		return;
	case ZONE_EMPTY:
		return;
	case ZONE_APP:
	case ZONE_LEADER:
		if ((a = registry_app_find(reg, key)) == NULL) {
			r->a.rcode = DNS_RCODE_NXDOMAIN;
			return;
		}
		if (kind == ZONE_APP)
			zone_app(&c, reg, a, mono);
		else if ((lead = leader_find_app(reg, a, mono)) != NULL)
			zone_cand(&c, lead);
		break;
	case ZONE_VIP:
		if (!zone_vip(&c, reg, key, mono)) {
			r->a.rcode = DNS_RCODE_NXDOMAIN;
			free(c.v);
			return;
		}
		break;
	case ZONE_ADDR:
		if (zone_hex_addr(key, strlen(key), &ad) != 0)
			r->a.rcode = DNS_RCODE_NXDOMAIN;
		else
			zone_add_addr(r, qtype, &ad);
		return;
	}
	if (qtype == DNS_TYPE_A || qtype == DNS_TYPE_AAAA ||
	    qtype == DNS_TYPE_ANY || qtype == DNS_TYPE_SRV)
		zone_emit(r, &c, qtype, domain);
	free(c.v);
}

/* The answer to q; see dnszone.h. */
void
dnszone_lookup(struct registry *reg, const char *domain, uint32_t ttl,
    const struct dnsmsg_query *q, int64_t mono, struct dnszone_result *r)
{
	size_t	len = strlen(q->name), rest;

	memset(r, 0, sizeof *r);
	r->a.ttl = ttl;
	if (q->qclass != DNS_CLASS_IN && q->qclass != DNS_TYPE_ANY)
		r->a.rcode = DNS_RCODE_REFUSED;
	else if (strcmp(q->name, domain) == 0)
		r->a.rcode = DNS_RCODE_NOERROR;		/* the apex: NODATA */
	else if (!zone_suffix(q->name, len, domain, &rest))
		r->a.rcode = DNS_RCODE_REFUSED;
	else
		zone_answer(r, reg, domain, q->name, rest, q->qtype, mono);
	r->a.an = r->an;
	r->a.nan = r->nan;
	r->a.ad = r->ad;
	r->a.nad = r->nad;
}

/* Free what a lookup kept. */
void
dnszone_result_free(struct dnszone_result *r)
{
	size_t	i;

	for (i = 0; i < r->nnames; i++)
		free(r->names[i]);
	free(r->names);
	free(r->an);
	free(r->ad);
	memset(r, 0, sizeof *r);
}
