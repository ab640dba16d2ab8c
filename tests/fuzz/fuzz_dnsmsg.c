/*
 * fuzz_dnsmsg.c: libFuzzer target for the DNS front's query parser and
 * answer builder (common/dnsmsg.c) and the zone's name parsing and record
 * choice (server/front/dnszone.c) on a registry of 40 instances of WEB
 * (IPv4 and IPv6 addresses, DNS and literal host names, a VIP), so that
 * A, AAAA and SRV answers truncate at 512 bytes. The input is the query;
 * its first byte also picks the answer's budget. Every answer must fit
 * its budget, carry the query's id and be a response.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "dnsmsg.h"
#include "dnszone.h"
#include "instance.h"
#include "log.h"
#include "registry.h"
#include "xmalloc.h"

#define FUZZ_INSTANCES	40

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static struct registry	*fuzz_reg;

/* The registry every input is answered from, built once. */
static void
fuzz_setup(void)
{
	struct registry_conf	 rc;
	struct hk_time		 t = { 1700000000000LL, 1000 };
	struct instance		*in;
	char			 s[64];
	int			 i;

	registry_conf_defaults(&rc);
	fuzz_reg = registry_new(&rc, t.wall_ms);
	for (i = 0; i < FUZZ_INSTANCES; i++) {
		in = instance_new();
		in->app = xstrdup("WEB");
		snprintf(s, sizeof s, "web-%d", i);
		in->instance_id = xstrdup(s);
		if (i % 2 == 0)
			snprintf(s, sizeof s, "10.0.%d.%d", i / 250, i % 250);
		else
			snprintf(s, sizeof s, "fd00::%x", i);
		in->ip_addr = xstrdup(s);
		if (i % 3 != 0)
			snprintf(s, sizeof s, "host-%d.example", i);
		in->host_name = xstrdup(s);
		in->status = i % 5 == 4 ? STATUS_DOWN : STATUS_UP;
		in->port = 8000 + i;
		in->port_enabled = i % 7 != 0;
		in->secure_port = 9000 + i;
		in->secure_port_enabled = 1;
		in->vip_address = xstrdup("web-vip,other");
		instance_apply_defaults(in, t.wall_ms);
		if (registry_register(fuzz_reg, in, 0, t) != REG_OK)
			fatalx("fuzz_setup: register %d", i);
	}
}

/* One input. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	static uint8_t		 out[DNS_TCP_MAX];
	struct dnsmsg_query	 q;
	struct dnszone_result	 r;
	size_t			 max, n;

	if (fuzz_reg == NULL)
		fuzz_setup();
	max = len > 0 ? DNS_UDP_MIN + (size_t)data[0] * 256 : DNS_UDP_MIN;
	if (max > sizeof out)
		max = sizeof out;
	switch (dnsmsg_parse(data, len, &q)) {
	case DNSMSG_DROP:
		return (0);
	case DNSMSG_FORMERR:
	case DNSMSG_NOTIMP:
		n = dnsmsg_build_error(data, len, DNS_RCODE_FORMERR, out, max);
		if (n != DNS_HEADER_LEN || memcmp(out, data, 2) != 0)
			fatalx("dnsmsg_build_error: %zu", n);
		return (0);
	case DNSMSG_OK:
		break;
	}
	if (strlen(q.name) > DNS_NAME_MAX)
		fatalx("dnsmsg_parse: name of %zu bytes", strlen(q.name));
	if (dnsmsg_udp_limit(&q) < DNS_UDP_MIN ||
	    dnsmsg_udp_limit(&q) > DNS_UDP_MAX)
		fatalx("dnsmsg_udp_limit: %zu", dnsmsg_udp_limit(&q));
	dnszone_lookup(fuzz_reg, "heureka", 5, &q, 2000, &r);
	n = dnsmsg_build(&q, &r.a, out, max);
	if (n > max)
		fatalx("dnsmsg_build: %zu bytes over a budget of %zu", n, max);
	if (n > 0 && (n < DNS_HEADER_LEN || memcmp(out, data, 2) != 0 ||
	    (out[2] & 0x80) == 0))
		fatalx("dnsmsg_build: bad header");
	if (n > 0 && (size_t)(out[6] << 8 | out[7]) > r.nan)
		fatalx("dnsmsg_build: more answers than records");
	dnszone_result_free(&r);
	return (0);
}
