/*
 * ops.c: what load balancers, orchestrators and scrapers ask heurekad,
 * outside the Eureka REST bases (ops.h).
 *
 * /health, /health/readiness and /actuator/health[/readiness] answer UP
 * once the start-up sync is over (or reads are allowed anyway, §6.4) and
 * until shutdown, DOWN with 503 otherwise; /health/liveness only says the
 * loop runs. /info is Spring's /actuator/info: build, start time, uptime.
 * /metrics and /actuator/prometheus are rendered by metrics.c.
 *
 * StatusInfo (GET {version}/status, §10.4) is Eureka's general and
 * application stats plus this server described as an instance; the
 * dashboard shows the same figures through ops_stats_fill() and
 * ops_self_instance(). Every answer carries the safety headers of
 * hreq_reply_safe().
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "buf.h"
#include "clock.h"
#include "config.h"
#include "gate.h"
#include "http.h"
#include "httputil.h"
#include "instance.h"
#include "json.h"
#include "xmalloc.h"
#include "xml.h"

#include "metrics.h"
#include "ops.h"
#include "peers.h"

/* PACKAGE_VERSION: autoconf's header, named so it cannot shadow ours. */
#include "heureka-config.h"
#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

/* Cap on the exposition (a huge registry truncates, not OOMs). */
#define OPS_MAX_BODY		(64u * 1024 * 1024)
/* StatusInfo's available-replicas, counted for isHealthy. */
#define OPS_STAT_AVAILABLE	6

#define OPS_TEXT	"text/plain; charset=utf-8"

/* The endpoints' state is all borrowed: ops only reads it. */
struct ops {
	struct ops_deps	 d;
};

/* What ops_route() tells apart. */
enum ops_endpoint {
	OPS_NONE = 0,
	OPS_HEALTH,			/* readiness */
	OPS_LIVENESS,
	OPS_METRICS,
	OPS_INFO,
};

static enum ops_endpoint ops_route(const char *);
static int	ops_is_up(struct ops *, struct hk_time);
static void	ops_health(struct ops *, struct hreq *, int,
		    struct hk_time);
static void	ops_metrics(struct ops *, struct hreq *,
		    struct hk_time);
static void	ops_info(struct ops *, struct hreq *,
		    struct hk_time);
static void	ops_format_uptime(int64_t, char *, size_t);
static void	ops_xml_stat(struct buf *, const char *, const char *);

/* Operations endpoints over the given dependencies. */
struct ops *
ops_new(const struct ops_deps *deps)
{
	struct ops	*o = xcalloc(1, sizeof *o);

	o->d = *deps;
	return (o);
}

/* Free o; NULL is fine. */
void
ops_free(struct ops *o)
{
	free(o);
}

/* Which endpoint path names, ignoring any query or fragment. */
static enum ops_endpoint
ops_route(const char *path)
{
	size_t	n = strcspn(path, "?#");

#define IS(lit)	(n == sizeof(lit) - 1 && strncmp(path, lit, n) == 0)
	if (IS("/health") || IS("/actuator/health") ||
	    IS("/health/readiness") || IS("/actuator/health/readiness"))
		return (OPS_HEALTH);
	if (IS("/health/liveness") || IS("/actuator/health/liveness"))
		return (OPS_LIVENESS);
	if (IS("/metrics") || IS("/actuator/prometheus"))
		return (OPS_METRICS);
	if (IS("/info") || IS("/actuator/info"))
		return (OPS_INFO);
#undef IS
	return (OPS_NONE);
}

/* Whether path is a health probe, as ops_handle() routes it. */
int
ops_is_probe(const char *path)
{
	enum ops_endpoint	which = ops_route(path);

	return (which == OPS_HEALTH || which == OPS_LIVENESS);
}

/* The operations endpoints; 1 when path was one of them (and answered). */
int
ops_handle(struct ops *o, struct hreq *req, const char *path,
    struct hk_time now)
{
	enum evhttp_cmd_type	cmd = hreq_method(req);
	enum ops_endpoint	which;

	if (path == NULL || (which = ops_route(path)) == OPS_NONE)
		return (0);
	if (cmd != EVHTTP_REQ_GET && cmd != EVHTTP_REQ_HEAD) {
		hhdrs_add(hreq_output_headers(req),
		    "Allow", "GET, HEAD");
		hreq_reply_safe(req, 405, OPS_TEXT, "method not allowed\n",
		    strlen("method not allowed\n"));
		return (1);
	}
	switch (which) {
	case OPS_HEALTH:
		ops_health(o, req, 0, now);
		break;
	case OPS_LIVENESS:
		ops_health(o, req, 1, now);
		break;
	case OPS_METRICS:
		ops_metrics(o, req, now);
		break;
	default:
		ops_info(o, req, now);
		break;
	}
	return (1);
}

/*
 * Ready to serve: start-up sync over (or reads allowed anyway, §6.4) and
 * not shutting down. A load balancer sends no traffic to a DOWN server.
 */
static int
ops_is_up(struct ops *o, struct hk_time now)
{
	if (gate_is_stopping(o->d.gate))
		return (0);
	return (gate_allow_read(o->d.gate, now.mono_ms));
}

/* /health and readiness (liveness != 0: only "is the loop running"). */
static void
ops_health(struct ops *o, struct hreq *req, int liveness,
    struct hk_time now)
{
	static const char	up[] = "{\"status\":\"UP\"}";
	static const char	down[] = "{\"status\":\"DOWN\"}";

	if (liveness || ops_is_up(o, now))
		hreq_reply_safe(req, 200, "application/json", up,
		    sizeof up - 1);
	else
		hreq_reply_safe(req, 503, "application/json", down,
		    sizeof down - 1);
}

/* /metrics: the Prometheus text exposition. */
static void
ops_metrics(struct ops *o, struct hreq *req, struct hk_time now)
{
	struct buf	b;

	buf_init(&b, OPS_MAX_BODY);
	metrics_render(o->d.metrics, &b, now);
	hreq_reply_safe(req, 200, "text/plain; version=0.0.4; charset=utf-8",
	    b.data, b.len);
	buf_free(&b);
}

/* /info: version, build time, start time, uptime (Spring's /actuator/info). */
static void
ops_info(struct ops *o, struct hreq *req, struct hk_time now)
{
	struct hk_time	start = gate_started(o->d.gate);
	struct buf	b;
	char		ts[64], up[64];

	buf_init(&b, 0);
	ops_time_iso(start.wall_ms, ts, sizeof ts);
	ops_uptime(o, now, up, sizeof up);
	buf_adds(&b, "{\"app\":{\"name\":\"heurekad\",\"description\":"
	    "\"Eureka-compatible service registry\"},\"build\":{\"name\":");
	json_add_string(&b, "heureka");
	buf_adds(&b, ",\"version\":");
	json_add_string(&b, PACKAGE_VERSION);
	buf_adds(&b, ",\"time\":");
	json_add_string(&b, __DATE__ " " __TIME__);
	buf_adds(&b, "},\"start\":{\"time\":");
	json_add_string(&b, ts);
	buf_addf(&b, ",\"epochMs\":%lld},\"uptime\":", (long long)start.wall_ms);
	json_add_string(&b, up);
	buf_addf(&b, ",\"ready\":%s,\"shuttingDown\":%s}",
	    gate_is_ready(o->d.gate) ? "true" : "false",
	    gate_is_stopping(o->d.gate) ? "true" : "false");
	hreq_reply_safe(req, 200, "application/json", b.data, b.len);
	buf_free(&b);
}

/* ms since the epoch as ISO 8601 UTC; "-" for 0 (never). */
void
ops_time_iso(int64_t ms, char *out, size_t len)
{
	time_t		t = (time_t)(ms / 1000);
	struct tm	tm;

	if (ms <= 0 || gmtime_r(&t, &tm) == NULL ||
	    strftime(out, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(out, len, "-");
}

/* Eureka's uptime layout for a duration in ms. */
static void
ops_format_uptime(int64_t ms, char *out, size_t len)
{
	int64_t	mins, days;

	if (ms < 0)
		ms = 0;
	mins = ms / 60000;
	days = mins / (24 * 60);
	mins %= 24 * 60;
	if (days > 0)
		snprintf(out, len, "%lld day%s %02lld:%02lld", (long long)days,
		    days == 1 ? "" : "s", (long long)(mins / 60),
		    (long long)(mins % 60));
	else
		snprintf(out, len, "%02lld:%02lld", (long long)(mins / 60),
		    (long long)(mins % 60));
}

/* Uptime at now, from the gate's start (monotonic). */
void
ops_uptime(struct ops *o, struct hk_time now, char *out, size_t len)
{
	ops_format_uptime(now.mono_ms - gate_started(o->d.gate).mono_ms, out,
	    len);
}

/*
 * StatusInfo's general and application stats (§10.4). Memory figures are
 * the machine's and our resident set (there is no JVM heap to report). A
 * replica is "available" when our last request to it succeeded: more
 * useful than Eureka's host-name guess.
 */
void
ops_stats_fill(struct ops *o, struct hk_time now, struct ops_stats *st)
{
	const struct config	*conf = o->d.conf;
	struct peers		*peers = *o->d.peers;
	struct peer_info	 pi;
	struct buf		 reg, av, unav;
	char			 tmp[64], *url;
	long			 cpus, pages, psize;
	unsigned long		 vsz, rss = 0;
	double			 total_mb, rss_mb;
	size_t			 i, npeers;
	FILE			*f;

	memset(st, 0, sizeof *st);
	cpus = sysconf(_SC_NPROCESSORS_ONLN);
	pages = sysconf(_SC_PHYS_PAGES);
	psize = sysconf(_SC_PAGESIZE);
	if ((f = fopen("/proc/self/statm", "r")) != NULL) {
		if (fscanf(f, "%lu %lu", &vsz, &rss) != 2)
			rss = 0;
		fclose(f);
	}
	total_mb = pages > 0 && psize > 0 ?
	    (double)pages * (double)psize / 1048576.0 : 0;
	rss_mb = psize > 0 ? (double)rss * (double)psize / 1048576.0 : 0;

	st->key[st->n] = "environment";
	st->value[st->n++] = xstrdup(conf != NULL &&
	    conf->environment != NULL ? conf->environment : "test");
	st->key[st->n] = "num-of-cpus";
	xasprintf(&st->value[st->n++], "%ld", cpus > 0 ? cpus : 1);
	st->key[st->n] = "total-avail-memory";
	xasprintf(&st->value[st->n++], "%.0fmb", total_mb);
	st->key[st->n] = "current-memory-usage";
	xasprintf(&st->value[st->n++], "%.0fmb (%.0f%%)", rss_mb,
	    total_mb > 0 ? rss_mb * 100.0 / total_mb : 0);
	ops_uptime(o, now, tmp, sizeof tmp);
	st->key[st->n] = "server-uptime";
	st->value[st->n++] = xstrdup(tmp);

	buf_init(&reg, 0);
	buf_init(&av, 0);
	buf_init(&unav, 0);
	npeers = peers != NULL ? peers_count(peers) : 0;
	for (i = 0; i < npeers; i++) {
		memset(&pi, 0, sizeof pi);
		peers_info(peers, i, &pi);
		url = http_url_scrub(pi.url != NULL ? pi.url : "");
		if (i > 0)
			buf_adds(&reg, ", ");
		buf_adds(&reg, url);
		buf_adds(pi.reachable ? &av : &unav, url);
		buf_addc(pi.reachable ? &av : &unav, ',');
		free(url);
	}
	st->key[st->n] = "registered-replicas";
	st->value[st->n++] = xstrdup(reg.data != NULL ? reg.data : "");
	st->key[st->n] = "available-replicas";
	st->value[st->n++] = xstrdup(av.data != NULL ? av.data : "");
	st->key[st->n] = "unavailable-replicas";
	st->value[st->n++] = xstrdup(unav.data != NULL ? unav.data : "");
	buf_free(&reg);
	buf_free(&av);
	buf_free(&unav);
}

/* Free the strings of an ops_stats. */
void
ops_stats_clear(struct ops_stats *st)
{
	size_t	i;

	for (i = 0; i < st->n; i++)
		free(st->value[i]);
	st->n = 0;
}

/*
 * This server as an instance (for StatusInfo and Instance Info). Spring's
 * server is its own client; ours is not, so this is made up from the
 * configuration: app from eureka.instance.appname (default HEUREKA).
 */
struct instance *
ops_self_instance(struct ops *o)
{
	const struct config	*conf = o->d.conf;
	const struct gate	*gate = o->d.gate;
	struct instance		*inst = instance_new();
	const char		*app = NULL, *host, *ip = NULL;
	char			*lower, *p;
	int64_t			 start = gate_started(gate).wall_ms;
	int			 port = *o->d.port;

	if (conf != NULL) {
		app = conf->instance_appname;
		ip = conf->instance_ip_address;
	}
	if (app == NULL || *app == '\0')
		app = "HEUREKA";
	host = o->d.hostname != NULL ? o->d.hostname : "localhost";
	if (ip == NULL || *ip == '\0')
		ip = "127.0.0.1";

	str_replace(&inst->app, app);
	str_upper(inst->app);
	str_replace(&inst->host_name, host);
	str_replace(&inst->ip_addr, ip);
	free(inst->instance_id);
	xasprintf(&inst->instance_id, "%s:%s:%d", host, app, port);
	lower = xstrdup(app);
	for (p = lower; *p != '\0'; p++) {
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	}
	str_replace(&inst->vip_address, lower);
	str_replace(&inst->secure_vip_address, lower);
	free(lower);
	free(inst->home_page_url);
	xasprintf(&inst->home_page_url, "http://%s:%d/", host, port);
	free(inst->status_page_url);
	xasprintf(&inst->status_page_url, "http://%s:%d/info", host, port);
	free(inst->health_check_url);
	xasprintf(&inst->health_check_url, "http://%s:%d/health", host, port);
	inst->port = port;
	inst->port_enabled = 1;
	inst->secure_port_enabled = 0;
	inst->has_dc = 1;
	inst->dc_name = DC_MYOWN;
	inst->has_lease = 1;
	inst->lease.registration_ts = start;
	inst->lease.last_renewal_ts = start;
	inst->lease.service_up_ts = gate_is_ready(gate) ? start : 0;
	inst->last_updated_ts = start;
	inst->last_dirty_ts = start;
	if (gate_is_stopping(gate))
		inst->status = STATUS_DOWN;
	else if (!gate_is_ready(gate))
		inst->status = STATUS_STARTING;
	else
		inst->status = STATUS_UP;
	inst->overridden_status = STATUS_UNKNOWN;
	return (inst);
}

/* <key>value</key> of StatusInfo's XML, on its own line. */
static void
ops_xml_stat(struct buf *b, const char *key, const char *value)
{
	buf_addf(b, "    <%s>", key);
	xml_add_escaped(b, value);
	buf_addf(b, "</%s>\n", key);
}

/*
 * GET {version}/status. XML mirrors XStream's reflection output (§10.4);
 * JSON is our own straightforward object, since Eureka only answers 500.
 */
void
ops_status_info(struct ops *o, struct hreq *req, int json,
    struct hk_time now)
{
	struct ops_stats	 st;
	struct instance		*self;
	struct buf		 b, ib;
	size_t			 i;
	int			 min, healthy = -1, avail = 0;
	const char		*p;

	ops_stats_fill(o, now, &st);
	self = ops_self_instance(o);
	min = o->d.conf != NULL ?
	    o->d.conf->min_available_instances_for_peer_replication : -1;
	if (min >= 0) {
		for (p = st.value[OPS_STAT_AVAILABLE]; *p != '\0'; p++)
			avail += *p == ',';
		healthy = avail >= min;
	}
	buf_init(&b, 0);
	buf_init(&ib, 0);
	if (json) {
		buf_adds(&b, "{\"generalStats\":{");
		for (i = 0; i < OPS_GENERAL_STATS; i++)
			json_add_member(&b, st.key[i], st.value[i], i > 0);
		buf_adds(&b, "},\"applicationStats\":{");
		for (i = OPS_GENERAL_STATS; i < st.n; i++)
			json_add_member(&b, st.key[i], st.value[i],
			    i > OPS_GENERAL_STATS);
		buf_adds(&b, "},\"instanceInfo\":");
		json_encode_instance(&b, self, CODEC_FULL);
		if (healthy >= 0)
			buf_addf(&b, ",\"isHealthy\":%s",
			    healthy ? "true" : "false");
		buf_adds(&b, "}");
		hreq_reply_safe(req, 200, "application/json", b.data, b.len);
		goto out;
	}

	buf_adds(&b, "<com.netflix.eureka.util.StatusInfo>\n  <generalStats>\n");
	for (i = 0; i < OPS_GENERAL_STATS; i++)
		ops_xml_stat(&b, st.key[i], st.value[i]);
	buf_adds(&b, "  </generalStats>\n  <applicationStats>\n");
	for (i = OPS_GENERAL_STATS; i < st.n; i++)
		ops_xml_stat(&b, st.key[i], st.value[i]);
	buf_adds(&b, "  </applicationStats>\n");
	/* The codec writes <instance>; StatusInfo names the field. */
	xml_encode_instance(&ib, self, CODEC_FULL, 1);
	if (ib.data != NULL && strncmp(ib.data, "  <instance>", 12) == 0 &&
	    ib.len >= 23 && strcmp(ib.data + ib.len - 11, "</instance>") == 0) {
		buf_adds(&b, "  <instanceInfo>");
		buf_add(&b, ib.data + 12, ib.len - 23);
		buf_adds(&b, "</instanceInfo>");
	} else
		buf_add(&b, ib.data != NULL ? ib.data : "", ib.len);
	if (healthy >= 0)
		buf_addf(&b, "\n  <isHeathly>%s</isHeathly>",
		    healthy ? "true" : "false");
	buf_adds(&b, "\n</com.netflix.eureka.util.StatusInfo>");
	hreq_reply_safe(req, 200, "application/xml", b.data, b.len);
out:
	buf_free(&ib);
	buf_free(&b);
	instance_free(self);
	ops_stats_clear(&st);
}
