/*
 * dashboard.c: everything heurekad serves outside the Eureka REST bases.
 *
 * The operator's page ({path}, default /) and {path}lastn are rendered on
 * the server from the embedded templates in server/dashboard/, so they are
 * useful without JavaScript; app.js then refreshes the page in place from
 * the JSON feed {path}heureka-assets/status.json and the watch stream, and
 * draws its charts from {path}heureka-assets/history.json (the ring of
 * history.c, fed here by dashboard_history_tick()). Every value shown comes
 * from clients or peers and is attacker-controlled: the HTML is escaped
 * here, the script only ever uses textContent, only http(s) URLs become
 * links, credentials are cut out of peer URLs, and a strict CSP forbids
 * inline script in case anything slips through.
 *
 * Also here: the operations endpoints (/health, /health/liveness,
 * /health/readiness, /actuator/health, /metrics, /actuator/prometheus,
 * /info) and Eureka's StatusInfo for GET {version}/status (§10.4).
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "config.h"
#include "buf.h"
#include "clock.h"
#include "instance.h"
#include "json.h"
#include "gate.h"
#include "log.h"
#include "xmalloc.h"
#include "xml.h"

#include "airlift.h"
#include "dashboard.h"
#include "dashboard_assets.h"
#include "history.h"
#include "leader.h"
#include "metrics.h"
#include "peer.h"
#include "registry.h"
#include "server.h"

/* PACKAGE_VERSION: autoconf's header, named so it cannot shadow ours. */
#include "heureka-config.h"
#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

/* Instances shown one by one (ids and details); beyond, counts only. */
#define DASH_MAX_LISTED		5000
/* Distinct zones listed per application. */
#define DASH_MAX_ZONES		16
/* Cap on any page or feed we build (a huge registry truncates, not OOMs). */
#define DASH_MAX_BODY		(64u * 1024 * 1024)

#define DASH_CSP	"default-src 'self'; script-src 'self'; " \
	"style-src 'self'; img-src 'self' data:; connect-src 'self'; " \
	"object-src 'none'; base-uri 'none'; form-action 'self'; " \
	"frame-ancestors 'none'"

/* One red or yellow box at the top of the page, with a plain explanation. */
struct dash_banner {
	const char	*kind;		/* "emergency", "warning", "info" */
	const char	*title;
	const char	*text;
};
#define DASH_MAX_BANNERS	6

/* The general and application stats of StatusInfo (§10.4), as strings. */
#define DASH_NSTATS		8
struct dash_stats {
	const char	*key[DASH_NSTATS];
	char		*value[DASH_NSTATS];
	size_t		 n;
};

/* Distinct zone names with their instance counts. */
struct dash_zones {
	const char	*name[DASH_MAX_ZONES];
	size_t		 count[DASH_MAX_ZONES];
	size_t		 n;
	int		 more;
};

/* State passed through the template expansion and the lastn callbacks. */
struct dash_ctx {
	struct server	*s;
	int64_t		 now;
	const char	*base;		/* normalised, ends with '/' */
	struct buf	*b;
	size_t		 rows;
};

static void	dash_send(struct evhttp_request *, int, const char *,
		    const char *, struct buf *);
static void	dash_send_str(struct evhttp_request *, int, const char *,
		    const char *, const char *);
static int	dash_ops(struct server *, struct evhttp_request *,
		    const char *, int64_t);
static void	dash_health(struct server *, struct evhttp_request *, int,
		    int64_t);
static void	dash_info(struct server *, struct evhttp_request *, int64_t);
static void	dash_metrics(struct server *, struct evhttp_request *);
static int	dash_is_up(struct server *, int64_t);
static char	*dash_base(const char *);
static void	dash_html(struct buf *, const char *);
static void	dash_json_str(struct buf *, const char *);
static void	dash_json_kv(struct buf *, const char *, const char *, int);
static int	dash_is_http(const char *);
static char	*dash_scrub_url(const char *);
static void	dash_time_iso(int64_t, char *, size_t);
static void	dash_time_java(int64_t, char *, size_t);
static void	dash_time_date(int64_t, char *, size_t);
static void	dash_uptime(int64_t, char *, size_t);
static size_t	dash_banners(struct server *, int64_t, struct dash_banner *);
static void	dash_stats_fill(struct server *, int64_t, struct dash_stats *);
static void	dash_stats_clear(struct dash_stats *);
static struct reg_app **dash_sorted_apps(struct server *, size_t *);
static int	dash_app_cmp(const void *, const void *);
static const char *dash_zone(const struct instance *);
static void	dash_zones(const struct reg_app *, struct dash_zones *);
static const struct dashboard_asset *dash_asset(const char *);
static void	dash_expand(struct dash_ctx *, const char *, size_t);
static void	dash_section(struct dash_ctx *, const char *, size_t);
static void	dash_html_banners(struct dash_ctx *);
static void	dash_html_system(struct dash_ctx *);
static void	dash_html_replicas(struct dash_ctx *);
static void	dash_html_apps(struct dash_ctx *);
static void	dash_html_airlift(struct dash_ctx *);
static void	dash_html_instance(struct dash_ctx *, const struct instance *);
static void	dash_html_general(struct dash_ctx *);
static void	dash_html_self(struct dash_ctx *);
static void	dash_html_row(struct buf *, const char *, const char *);
static void	dash_html_lastn(struct dash_ctx *, int);
static void	dash_lastn_cb(int64_t, const char *, void *);
static void	dash_page(struct server *, struct evhttp_request *,
		    const char *, const char *, int64_t);
static void	dash_feed(struct server *, struct evhttp_request *, int64_t);
static void	dash_history(struct server *, struct evhttp_request *);
static void	dash_json_instance(struct buf *, struct server *,
		    const struct instance *, int64_t);
static struct instance *dash_self_instance(struct server *);

/* Feed the history ring from the registry's counters and the peers. */
void
dashboard_history_tick(struct server *s, int64_t now)
{
	const struct registry_stats	*st;
	struct history_input		 in;
	struct peer_info		 pi;
	size_t				 i;

	if (s->history == NULL || s->reg == NULL)
		return;
	memset(&in, 0, sizeof in);
	st = registry_stats(s->reg);
	if (st != NULL) {
		in.registrations = st->registrations;
		in.renewals = st->renewals;
		in.cancels = st->cancels;
	}
	in.renews_last_min = registry_renews_last_min(s->reg);
	in.threshold = registry_renew_threshold(s->reg);
	in.npeers = s->peers != NULL ? peers_count(s->peers) : 0;
	if (in.npeers > HISTORY_MAX_PEERS)
		in.npeers = HISTORY_MAX_PEERS;
	for (i = 0; i < in.npeers; i++) {
		memset(&pi, 0, sizeof pi);
		peers_info(s->peers, i, &pi);
		in.queue_depth[i] = pi.queue_depth;
		in.last_success_ms[i] = pi.last_success_ms;
	}
	history_tick(s->history, &in, now);
}

/*
 * The charts' data: the history ring, with the peers named as the DS
 * Replicas table names them (after a SIGHUP changed the peer list, older
 * samples' peers are matched by position).
 */
static void
dash_history(struct server *s, struct evhttp_request *req)
{
	struct peer_info	 pi;
	struct buf		 b;
	size_t			 i, n;
	char			*url;

	buf_init(&b, 0);
	n = s->peers != NULL ? peers_count(s->peers) : 0;
	if (n > HISTORY_MAX_PEERS)
		n = HISTORY_MAX_PEERS;
	buf_addf(&b, "{\"intervalMs\":%lld,\"capacity\":%d,\"peers\":[",
	    (long long)(s->history != NULL ? s->history->interval_ms : 0),
	    HISTORY_SAMPLES);
	for (i = 0; i < n; i++) {
		memset(&pi, 0, sizeof pi);
		peers_info(s->peers, i, &pi);
		url = dash_scrub_url(pi.url);
		if (i > 0)
			buf_addc(&b, ',');
		dash_json_str(&b, url);
		free(url);
	}
	buf_adds(&b, "],\"samples\":");
	if (s->history != NULL)
		history_json(s->history, &b);
	else
		buf_adds(&b, "[]");
	buf_adds(&b, "}\n");
	dash_send(req, 200, "OK", "application/json; charset=utf-8", &b);
	buf_free(&b);
}

/*
 * Send buf (or nothing) with status code, content type and the safety
 * headers every answer of ours carries.
 */
static void
dash_send(struct evhttp_request *req, int code, const char *reason,
    const char *ctype, struct buf *b)
{
	struct evkeyvalq	*h = evhttp_request_get_output_headers(req);

	if (ctype != NULL)
		evhttp_add_header(h, "Content-Type", ctype);
	evhttp_add_header(h, "X-Content-Type-Options", "nosniff");
	evhttp_add_header(h, "Content-Security-Policy", DASH_CSP);
	evhttp_add_header(h, "X-Frame-Options", "DENY");
	evhttp_add_header(h, "Referrer-Policy", "no-referrer");
	evhttp_add_header(h, "Cache-Control", "no-store");
	if (b != NULL && b->len > 0)
		evbuffer_add(evhttp_request_get_output_buffer(req), b->data,
		    b->len);
	evhttp_send_reply(req, code, reason, NULL);
}

/* dash_send() for a constant string body. */
static void
dash_send_str(struct evhttp_request *req, int code, const char *reason,
    const char *ctype, const char *s)
{
	struct buf	b;

	buf_init(&b, 0);
	buf_adds(&b, s);
	dash_send(req, code, reason, ctype, &b);
	buf_free(&b);
}

/* Route path to an operations endpoint or the dashboard; 0: not ours. */
int
dashboard_handle(struct server *s, struct evhttp_request *req,
    const char *path)
{
	const struct dashboard_asset	*a;
	char				*p, *q, *base = NULL;
	const char			*rest, *ctype;
	size_t				 blen;
	int64_t				 now = clock_wall_ms();
	int				 rc = 0;
	enum evhttp_cmd_type		 cmd;

	if (path == NULL)
		return (0);
	p = xstrdup(path);
	if ((q = strpbrk(p, "?#")) != NULL)
		*q = '\0';

	cmd = evhttp_request_get_command(req);
	if (dash_ops(s, req, p, now)) {
		rc = 1;
		goto out;
	}
	if (s->conf == NULL || !s->conf->dashboard_enabled)
		goto out;

	base = dash_base(s->conf->dashboard_path);
	blen = strlen(base);
	/* "/dash" is the page too, not only "/dash/". */
	if (blen > 1 && strlen(p) == blen - 1 && strncmp(p, base, blen - 1) == 0)
		rest = "";
	else if (strncmp(p, base, blen) == 0)
		rest = p + blen;
	else
		goto out;

	if (strcmp(rest, "") != 0 && strcmp(rest, "lastn") != 0 &&
	    strncmp(rest, "heureka-assets/", 15) != 0)
		goto out;
	rc = 1;
	if (cmd != EVHTTP_REQ_GET && cmd != EVHTTP_REQ_HEAD) {
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Allow", "GET, HEAD");
		dash_send_str(req, 405, "Method Not Allowed",
		    "text/plain; charset=utf-8", "method not allowed\n");
		goto out;
	}

	if (strcmp(rest, "") == 0)
		dash_page(s, req, base, "index.html", now);
	else if (strcmp(rest, "lastn") == 0)
		dash_page(s, req, base, "lastn.html", now);
	else if (strcmp(rest, "heureka-assets/status.json") == 0)
		dash_feed(s, req, now);
	else if (strcmp(rest, "heureka-assets/history.json") == 0)
		dash_history(s, req);
	else {
		rest += 15;
		a = NULL;
		if (strcmp(rest, "app.js") == 0 || strcmp(rest, "app.css") == 0)
			a = dash_asset(rest);
		if (a == NULL) {
			dash_send_str(req, 404, "Not Found",
			    "text/plain; charset=utf-8", "not found\n");
			goto out;
		}
		ctype = strcmp(rest, "app.js") == 0 ?
		    "text/javascript; charset=utf-8" :
		    "text/css; charset=utf-8";
		evbuffer_add_reference(evhttp_request_get_output_buffer(req),
		    a->data, a->len, NULL, NULL);
		dash_send(req, 200, "OK", ctype, NULL);
	}
out:
	free(base);
	free(p);
	return (rc);
}

/* The operations endpoints; 1 when path was one of them (and answered). */
static int
dash_ops(struct server *s, struct evhttp_request *req, const char *p,
    int64_t now)
{
	enum evhttp_cmd_type	cmd = evhttp_request_get_command(req);
	int			which;

	if (strcmp(p, "/health") == 0 || strcmp(p, "/actuator/health") == 0 ||
	    strcmp(p, "/health/readiness") == 0 ||
	    strcmp(p, "/actuator/health/readiness") == 0)
		which = 0;
	else if (strcmp(p, "/health/liveness") == 0 ||
	    strcmp(p, "/actuator/health/liveness") == 0)
		which = 1;
	else if (strcmp(p, "/metrics") == 0 ||
	    strcmp(p, "/actuator/prometheus") == 0)
		which = 2;
	else if (strcmp(p, "/info") == 0 || strcmp(p, "/actuator/info") == 0)
		which = 3;
	else
		return (0);

	if (cmd != EVHTTP_REQ_GET && cmd != EVHTTP_REQ_HEAD) {
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Allow", "GET, HEAD");
		dash_send_str(req, 405, "Method Not Allowed",
		    "text/plain; charset=utf-8", "method not allowed\n");
		return (1);
	}
	switch (which) {
	case 0:
		dash_health(s, req, 0, now);
		break;
	case 1:
		dash_health(s, req, 1, now);
		break;
	case 2:
		dash_metrics(s, req);
		break;
	default:
		dash_info(s, req, now);
		break;
	}
	return (1);
}

/*
 * Ready to serve: start-up sync over (or reads allowed anyway, §6.4) and
 * not shutting down. A load balancer sends no traffic to a DOWN server.
 */
static int
dash_is_up(struct server *s, int64_t now)
{
	if (gate_is_stopping(s->gate))
		return (0);
	(void)now;
	return (gate_allow_read(s->gate, clock_mono_ms()));
}

/* /health and readiness (liveness != 0: only "is the loop running"). */
static void
dash_health(struct server *s, struct evhttp_request *req, int liveness,
    int64_t now)
{
	if (liveness || dash_is_up(s, now))
		dash_send_str(req, 200, "OK", "application/json",
		    "{\"status\":\"UP\"}");
	else
		dash_send_str(req, 503, "Service Unavailable",
		    "application/json", "{\"status\":\"DOWN\"}");
}

/* /metrics: the Prometheus text exposition. */
static void
dash_metrics(struct server *s, struct evhttp_request *req)
{
	struct buf	b;

	buf_init(&b, DASH_MAX_BODY);
	metrics_render(s->metrics, s, &b);
	dash_send(req, 200, "OK", "text/plain; version=0.0.4; charset=utf-8",
	    &b);
	buf_free(&b);
}

/* /info: version, build time, start time, uptime (Spring's /actuator/info). */
static void
dash_info(struct server *s, struct evhttp_request *req, int64_t now)
{
	struct buf	b;
	char		ts[64], up[64];

	buf_init(&b, 0);
	dash_time_iso(s->start_ms, ts, sizeof ts);
	dash_uptime(clock_mono_ms() - s->start_mono, up, sizeof up);
	buf_adds(&b, "{\"app\":{\"name\":\"heurekad\",\"description\":"
	    "\"Eureka-compatible service registry\"},\"build\":{");
	dash_json_kv(&b, "name", "heureka", 0);
	dash_json_kv(&b, "version", PACKAGE_VERSION, 1);
	dash_json_kv(&b, "time", __DATE__ " " __TIME__, 1);
	buf_adds(&b, "},\"start\":{");
	dash_json_kv(&b, "time", ts, 0);
	buf_addf(&b, ",\"epochMs\":%lld},", (long long)s->start_ms);
	dash_json_kv(&b, "uptime", up, 0);
	buf_addf(&b, ",\"ready\":%s,\"shuttingDown\":%s}",
	    gate_is_ready(s->gate) ? "true" : "false",
	    gate_is_stopping(s->gate) ? "true" : "false");
	dash_send(req, 200, "OK", "application/json", &b);
	buf_free(&b);
}

/* The dashboard prefix with a trailing '/', always starting with '/'. */
static char *
dash_base(const char *path)
{
	char	*b;
	size_t	 n;

	if (path == NULL || *path == '\0')
		return (xstrdup("/"));
	n = strlen(path);
	xasprintf(&b, "%s%s%s", path[0] == '/' ? "" : "/", path,
	    path[n - 1] == '/' ? "" : "/");
	return (b);
}

/* Look an embedded asset up by file name. */
static const struct dashboard_asset *
dash_asset(const char *name)
{
	const struct dashboard_asset	*a;

	for (a = dashboard_assets; a->name != NULL; a++) {
		if (strcmp(a->name, name) == 0)
			return (a);
	}
	return (NULL);
}

/* Append s escaped for HTML text and quoted attribute values. */
static void
dash_html(struct buf *b, const char *s)
{
	for (; s != NULL && *s != '\0'; s++) {
		switch (*s) {
		case '&':
			buf_adds(b, "&amp;");
			break;
		case '<':
			buf_adds(b, "&lt;");
			break;
		case '>':
			buf_adds(b, "&gt;");
			break;
		case '"':
			buf_adds(b, "&quot;");
			break;
		case '\'':
			buf_adds(b, "&#39;");
			break;
		default:
			buf_addc(b, *s);
			break;
		}
	}
}

/*
 * Append s as a JSON string. <, > and & are escaped too, so the feed stays
 * inert even if something ever sniffs it as HTML.
 */
static void
dash_json_str(struct buf *b, const char *s)
{
	unsigned char	c;

	if (s == NULL) {
		buf_adds(b, "null");
		return;
	}
	buf_addc(b, '"');
	for (; *s != '\0'; s++) {
		c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			buf_addc(b, '\\');
			buf_addc(b, (char)c);
		} else if (c < 0x20 || c == '<' || c == '>' || c == '&' ||
		    c == 0x7f)
			buf_addf(b, "\\u%04x", c);
		else
			buf_addc(b, (char)c);
	}
	buf_addc(b, '"');
}

/* Append "key":"value", preceded by a comma unless first is 0. */
static void
dash_json_kv(struct buf *b, const char *key, const char *value, int comma)
{
	if (comma)
		buf_addc(b, ',');
	dash_json_str(b, key);
	buf_addc(b, ':');
	dash_json_str(b, value);
}

/* Only http:// and https:// URLs may become links (no javascript:). */
static int
dash_is_http(const char *url)
{
	if (url == NULL)
		return (0);
	return (strncasecmp(url, "http://", 7) == 0 ||
	    strncasecmp(url, "https://", 8) == 0);
}

/*
 * A copy of url without "user:password@" in its authority: peer URLs may
 * carry basic-auth credentials, which must never reach a web page.
 */
static char *
dash_scrub_url(const char *url)
{
	const char	*auth, *end, *at;
	char		*out;

	if (url == NULL)
		return (xstrdup(""));
	if ((auth = strstr(url, "://")) == NULL)
		auth = url;
	else
		auth += 3;
	end = auth + strcspn(auth, "/?#");
	at = NULL;
	for (const char *p = auth; p < end; p++) {
		if (*p == '@')
			at = p;
	}
	if (at == NULL)
		return (xstrdup(url));
	xasprintf(&out, "%.*s%s", (int)(auth - url), url, at + 1);
	return (out);
}

/* ms since the epoch as ISO 8601 UTC; "-" for 0 (never). */
static void
dash_time_iso(int64_t ms, char *out, size_t len)
{
	time_t		t = (time_t)(ms / 1000);
	struct tm	tm;

	if (ms <= 0 || gmtime_r(&t, &tm) == NULL ||
	    strftime(out, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(out, len, "-");
}

/* Eureka's "current time" format: yyyy-MM-dd'T'HH:mm:ss Z, local time. */
static void
dash_time_java(int64_t ms, char *out, size_t len)
{
	time_t		t = (time_t)(ms / 1000);
	struct tm	tm;

	if (localtime_r(&t, &tm) == NULL ||
	    strftime(out, len, "%Y-%m-%dT%H:%M:%S %z", &tm) == 0)
		snprintf(out, len, "-");
}

/* Java's Date.toString() layout, as /lastn shows timestamps. */
static void
dash_time_date(int64_t ms, char *out, size_t len)
{
	time_t		t = (time_t)(ms / 1000);
	struct tm	tm;

	if (localtime_r(&t, &tm) == NULL ||
	    strftime(out, len, "%a %b %d %H:%M:%S %Z %Y", &tm) == 0)
		snprintf(out, len, "-");
}

/* Eureka's uptime: "[N day|N days ]HH:MM". */
static void
dash_uptime(int64_t ms, char *out, size_t len)
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

/*
 * Eureka's isBelowRenewThreshold (§5.11): renewals at or under the
 * threshold, counted only once the server has been up longer than the
 * empty-sync wait, so a freshly started server shows no EMERGENCY.
 */
static int
dashboard_below_threshold(const struct server *s, int64_t mono)
{
	if (s->reg == NULL || !registry_is_below_threshold(s->reg))
		return (0);
	return (mono - s->start_mono >
	    s->conf->wait_time_in_ms_when_sync_empty);
}

/*
 * The banners of §10.5 (Eureka's own wording, kept so operators and search
 * engines recognise it) plus a plain-language explanation of each.
 */
static size_t
dash_banners(struct server *s, int64_t now, struct dash_banner *bn)
{
	size_t	n = 0;
	int	self_pres, below;

	self_pres = s->conf != NULL ? s->conf->enable_self_preservation : 1;
	below = dashboard_below_threshold(s, clock_mono_ms());

	if (gate_is_stopping(s->gate)) {
		bn[n].kind = "warning";
		bn[n].title = "This server is shutting down.";
		bn[n++].text = "It no longer reports itself healthy; clients "
		    "and peers should move to another server.";
	}
	if (!gate_is_ready(s->gate) && !gate_is_stopping(s->gate)) {
		bn[n].kind = "info";
		bn[n].title = "Start-up registry sync in progress.";
		bn[n++].text = "This server is still copying the registry "
		    "from its peers; what it shows may be incomplete.";
	}
	if (below && self_pres) {
		bn[n].kind = "emergency";
		bn[n].title = "EMERGENCY! EUREKA MAY BE INCORRECTLY CLAIMING "
		    "INSTANCES ARE UP WHEN THEY'RE NOT. RENEWALS ARE LESSER "
		    "THAN THRESHOLD AND HENCE THE INSTANCES ARE NOT BEING "
		    "EXPIRED JUST TO BE SAFE.";
		bn[n++].text = "Self-preservation is active: fewer heartbeats "
		    "arrived in the last minute than the threshold expects, "
		    "so this server assumes a network problem rather than "
		    "many instances dying at once, and stops expiring leases. "
		    "Instances shown as UP may in fact be gone until renewals "
		    "recover.";
	} else if (below) {
		bn[n].kind = "emergency";
		bn[n].title = "RENEWALS ARE LESSER THAN THE THRESHOLD. THE SELF "
		    "PRESERVATION MODE IS TURNED OFF. THIS MAY NOT PROTECT "
		    "INSTANCE EXPIRY IN CASE OF NETWORK/OTHER PROBLEMS.";
		bn[n++].text = "Fewer heartbeats than expected arrived in the "
		    "last minute, and because self-preservation is disabled "
		    "the leases that stopped renewing are expired as usual. "
		    "If the cause is a network partition, healthy instances "
		    "are being removed from the registry.";
	} else if (!self_pres) {
		bn[n].kind = "warning";
		bn[n].title = "THE SELF PRESERVATION MODE IS TURNED OFF. THIS "
		    "MAY NOT PROTECT INSTANCE EXPIRY IN CASE OF NETWORK/OTHER "
		    "PROBLEMS.";
		bn[n++].text = "Leases that stop renewing are always expired, "
		    "even when many stop at once as during a network "
		    "partition.";
	}
	if (!gate_allow_read(s->gate, clock_mono_ms())) {
		bn[n].kind = "warning";
		bn[n].title = "This server is not allowing registry fetch for "
		    "local registry.";
		bn[n++].text = "It started with an empty registry and waits "
		    "(wait-time-in-ms-when-sync-empty) for instances to "
		    "register again before it serves registry reads, so that "
		    "clients never fetch an empty registry. Registrations and "
		    "heartbeats are accepted meanwhile.";
	}
	return (n);
}

/*
 * StatusInfo's general and application stats (§10.4). Memory figures are
 * the machine's and our resident set (there is no JVM heap to report). A
 * replica is "available" when our last request to it succeeded: more
 * useful than Eureka's host-name guess.
 */
static void
dash_stats_fill(struct server *s, int64_t now, struct dash_stats *st)
{
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
	st->value[st->n++] = xstrdup(s->conf != NULL &&
	    s->conf->environment != NULL ? s->conf->environment : "test");
	st->key[st->n] = "num-of-cpus";
	xasprintf(&st->value[st->n++], "%ld", cpus > 0 ? cpus : 1);
	st->key[st->n] = "total-avail-memory";
	xasprintf(&st->value[st->n++], "%.0fmb", total_mb);
	st->key[st->n] = "current-memory-usage";
	xasprintf(&st->value[st->n++], "%.0fmb (%.0f%%)", rss_mb,
	    total_mb > 0 ? rss_mb * 100.0 / total_mb : 0);
	dash_uptime(clock_mono_ms() - s->start_mono, tmp, sizeof tmp);
	st->key[st->n] = "server-uptime";
	st->value[st->n++] = xstrdup(tmp);

	buf_init(&reg, 0);
	buf_init(&av, 0);
	buf_init(&unav, 0);
	npeers = s->peers != NULL ? peers_count(s->peers) : 0;
	for (i = 0; i < npeers; i++) {
		memset(&pi, 0, sizeof pi);
		peers_info(s->peers, i, &pi);
		url = dash_scrub_url(pi.url);
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

/* Free the strings of a dash_stats. */
static void
dash_stats_clear(struct dash_stats *st)
{
	size_t	i;

	for (i = 0; i < st->n; i++)
		free(st->value[i]);
	st->n = 0;
}

/* qsort comparator: applications by name. */
static int
dash_app_cmp(const void *a, const void *b)
{
	const struct reg_app	*x = *(struct reg_app * const *)a;
	const struct reg_app	*y = *(struct reg_app * const *)b;

	return (strcmp(reg_app_name(x), reg_app_name(y)));
}

/* The registry's applications sorted by name (Eureka's pages do the same). */
static struct reg_app **
dash_sorted_apps(struct server *s, size_t *np)
{
	struct reg_app	**v;
	size_t		  i, n;

	n = s->reg != NULL ? registry_app_count(s->reg) : 0;
	v = xreallocarray(NULL, n + 1, sizeof *v);
	for (i = 0; i < n; i++)
		v[i] = registry_app_at(s->reg, i);
	qsort(v, n, sizeof *v, dash_app_cmp);
	*np = n;
	return (v);
}

/* An instance's zone: AWS availability zone, else the "zone" metadata. */
static const char *
dash_zone(const struct instance *inst)
{
	const char	*z = NULL;

	if (inst->dc_name == DC_AMAZON)
		z = kvlist_get(&inst->dc_metadata, "availability-zone");
	if (z == NULL)
		z = kvlist_get(&inst->metadata, "zone");
	return (z);
}

/* Count an application's instances per zone. */
static void
dash_zones(const struct reg_app *app, struct dash_zones *z)
{
	const struct instance	*inst;
	const char		*name;
	size_t			 i, j, n = reg_app_size(app);

	memset(z, 0, sizeof *z);
	for (i = 0; i < n; i++) {
		if ((inst = reg_app_instance_at(app, i)) == NULL)
			continue;
		if ((name = dash_zone(inst)) == NULL)
			continue;
		for (j = 0; j < z->n; j++) {
			if (strcmp(z->name[j], name) == 0)
				break;
		}
		if (j < z->n)
			z->count[j]++;
		else if (z->n < DASH_MAX_ZONES) {
			z->name[z->n] = name;
			z->count[z->n++] = 1;
		} else
			z->more = 1;
	}
}

/*
 * Copy a template to the output, replacing each {{name}} by its section.
 * Templates are our own embedded files, so a bad marker is our bug: it is
 * left out.
 */
static void
dash_expand(struct dash_ctx *c, const char *t, size_t len)
{
	const char	*end = t + len, *open, *close;

	while (t < end) {
		open = memmem(t, end - t, "{{", 2);
		if (open == NULL) {
			buf_add(c->b, t, end - t);
			break;
		}
		buf_add(c->b, t, open - t);
		close = memmem(open + 2, end - open - 2, "}}", 2);
		if (close == NULL)
			break;
		dash_section(c, open + 2, close - open - 2);
		t = close + 2;
	}
}

/* Render the section named by a template marker. */
static void
dash_section(struct dash_ctx *c, const char *name, size_t len)
{
	char	tmp[64];

#define IS(s)	(len == sizeof(s) - 1 && memcmp(name, s, len) == 0)
	if (IS("base"))
		dash_html(c->b, c->base);
	else if (IS("version"))
		dash_html(c->b, PACKAGE_VERSION);
	else if (IS("updated")) {
		dash_time_java(c->now, tmp, sizeof tmp);
		dash_html(c->b, tmp);
	} else if (IS("banners"))
		dash_html_banners(c);
	else if (IS("system"))
		dash_html_system(c);
	else if (IS("replicas"))
		dash_html_replicas(c);
	else if (IS("apps"))
		dash_html_apps(c);
	else if (IS("airlift"))
		dash_html_airlift(c);
	else if (IS("general"))
		dash_html_general(c);
	else if (IS("instance"))
		dash_html_self(c);
	else if (IS("cancelled"))
		dash_html_lastn(c, 1);
	else if (IS("registered"))
		dash_html_lastn(c, 0);
#undef IS
}

/* <tr><th>key</th><td>value</td></tr>, escaped. */
static void
dash_html_row(struct buf *b, const char *k, const char *v)
{
	buf_adds(b, "<tr><th>");
	dash_html(b, k);
	buf_adds(b, "</th><td>");
	dash_html(b, v);
	buf_adds(b, "</td></tr>\n");
}

/* The banners as <div class="banner KIND">. */
static void
dash_html_banners(struct dash_ctx *c)
{
	struct dash_banner	bn[DASH_MAX_BANNERS];
	size_t			i, n;

	n = dash_banners(c->s, c->now, bn);
	for (i = 0; i < n; i++) {
		buf_addf(c->b, "<div class=\"banner %s\"><p class=\"title\">",
		    bn[i].kind);
		dash_html(c->b, bn[i].title);
		buf_adds(c->b, "</p><p>");
		dash_html(c->b, bn[i].text);
		buf_adds(c->b, "</p></div>\n");
	}
}

/* System Status rows (§10.5). */
static void
dash_html_system(struct dash_ctx *c)
{
	struct server	*s = c->s;
	char		 tmp[64];

	dash_html_row(c->b, "Environment", s->conf != NULL &&
	    s->conf->environment != NULL ? s->conf->environment : "test");
	dash_html_row(c->b, "Data center", s->conf != NULL &&
	    s->conf->datacenter != NULL ? s->conf->datacenter : "default");
	dash_time_java(c->now, tmp, sizeof tmp);
	dash_html_row(c->b, "Current time", tmp);
	dash_uptime(clock_mono_ms() - s->start_mono, tmp, sizeof tmp);
	dash_html_row(c->b, "Uptime", tmp);
	dash_html_row(c->b, "Lease expiration enabled", s->reg != NULL &&
	    registry_lease_expiration_enabled(s->reg) ? "true" : "false");
	snprintf(tmp, sizeof tmp, "%d",
	    s->reg != NULL ? registry_renew_threshold(s->reg) : 0);
	dash_html_row(c->b, "Renews threshold", tmp);
	snprintf(tmp, sizeof tmp, "%ld",
	    s->reg != NULL ? registry_renews_last_min(s->reg) : 0);
	dash_html_row(c->b, "Renews (last min)", tmp);
	dash_html_row(c->b, "Self-preservation", s->conf != NULL &&
	    !s->conf->enable_self_preservation ? "disabled" :
	    (s->reg != NULL && !registry_lease_expiration_enabled(s->reg) ?
	    "enabled, active (eviction suspended)" : "enabled, not active"));
}

/* DS Replicas: one row per peer with its replication health. */
static void
dash_html_replicas(struct dash_ctx *c)
{
	struct peer_info	 pi;
	size_t			 i, n;
	char			*url, ts[64];

	n = c->s->peers != NULL ? peers_count(c->s->peers) : 0;
	if (n == 0) {
		buf_adds(c->b, "<tr class=\"empty\"><td colspan=\"6\">"
		    "No replicas (standalone server)</td></tr>\n");
		return;
	}
	for (i = 0; i < n; i++) {
		memset(&pi, 0, sizeof pi);
		peers_info(c->s->peers, i, &pi);
		url = dash_scrub_url(pi.url);
		dash_time_iso(pi.last_success_ms, ts, sizeof ts);
		buf_addf(c->b, "<tr class=\"%s\"><td class=\"url\">",
		    pi.reachable ? "ok" : "bad");
		dash_html(c->b, url);
		buf_addf(c->b, "</td><td>%s</td><td>%zu</td><td>",
		    pi.reachable ? "reachable" : "unreachable",
		    pi.queue_depth);
		dash_html(c->b, ts);
		buf_addf(c->b, "</td><td>%llu</td><td>%llu</td></tr>\n",
		    (unsigned long long)pi.failures,
		    (unsigned long long)pi.dropped);
		free(url);
	}
}

/* One instance's detail block: status, lease, URLs, metadata. */
static void
dash_html_instance(struct dash_ctx *c, const struct instance *inst)
{
	struct buf		*b = c->b;
	enum instance_status	 ov;
	char			 tmp[64];
	const char		*urls[3][2];
	size_t			 i;

	buf_adds(b, "<div class=\"inst\"><h4>");
	dash_html(b, instance_id(inst));
	buf_adds(b, "</h4><table class=\"kv\">\n");
	dash_html_row(b, "Status", instance_status_name(inst->status));
	dash_html_row(b, "Overridden status",
	    instance_status_name(inst->overridden_status));
	ov = c->s->reg != NULL ? registry_override(c->s->reg,
	    instance_id(inst), clock_mono_ms()) : STATUS_UNKNOWN;
	dash_html_row(b, "Override in force", ov == STATUS_UNKNOWN ? "none" :
	    instance_status_name(ov));
	dash_html_row(b, "Host", inst->host_name);
	dash_html_row(b, "IP address", inst->ip_addr);
	snprintf(tmp, sizeof tmp, "%d%s", inst->port,
	    inst->port_enabled ? "" : " (disabled)");
	dash_html_row(b, "Port", tmp);
	snprintf(tmp, sizeof tmp, "%d%s", inst->secure_port,
	    inst->secure_port_enabled ? "" : " (disabled)");
	dash_html_row(b, "Secure port", tmp);
	dash_html_row(b, "Zone", dash_zone(inst) != NULL ? dash_zone(inst) :
	    "-");
	dash_html_row(b, "VIP address", inst->vip_address);
	dash_html_row(b, "Secure VIP address", inst->secure_vip_address);
	urls[0][0] = "Home page";
	urls[0][1] = inst->home_page_url;
	urls[1][0] = "Status page";
	urls[1][1] = inst->status_page_url;
	urls[2][0] = "Health check";
	urls[2][1] = inst->health_check_url;
	for (i = 0; i < 3; i++) {
		buf_adds(b, "<tr><th>");
		dash_html(b, urls[i][0]);
		buf_adds(b, "</th><td>");
		if (dash_is_http(urls[i][1])) {
			buf_adds(b, "<a rel=\"noopener noreferrer\" href=\"");
			dash_html(b, urls[i][1]);
			buf_adds(b, "\">");
			dash_html(b, urls[i][1]);
			buf_adds(b, "</a>");
		} else
			dash_html(b, urls[i][1] != NULL ? urls[i][1] : "-");
		buf_adds(b, "</td></tr>\n");
	}
	dash_time_iso(inst->lease.registration_ts, tmp, sizeof tmp);
	dash_html_row(b, "Registered", tmp);
	dash_time_iso(inst->lease.last_renewal_ts, tmp, sizeof tmp);
	dash_html_row(b, "Last renewal", tmp);
	dash_time_iso(inst->lease.service_up_ts, tmp, sizeof tmp);
	dash_html_row(b, "Service up", tmp);
	snprintf(tmp, sizeof tmp, "%d s (renew every %d s)",
	    inst->lease.duration_secs, inst->lease.renewal_interval_secs);
	dash_html_row(b, "Lease duration", tmp);
	dash_time_iso(inst->last_updated_ts, tmp, sizeof tmp);
	dash_html_row(b, "Last updated", tmp);
	dash_time_iso(inst->last_dirty_ts, tmp, sizeof tmp);
	dash_html_row(b, "Last dirty", tmp);
	buf_adds(b, "</table>\n");
	if (inst->metadata.n > 0) {
		buf_adds(b, "<table class=\"kv meta\"><caption>Metadata"
		    "</caption>\n");
		for (i = 0; i < inst->metadata.n; i++)
			dash_html_row(b, inst->metadata.v[i].key,
			    inst->metadata.v[i].value);
		buf_adds(b, "</table>\n");
	}
	buf_adds(b, "</div>\n");
}

/*
 * Instances currently registered: one row per application with zones and
 * "STATUS (n) - id, id" groups (ids linked to their http(s) status page),
 * and a collapsed detail block per instance.
 */
static void
dash_html_apps(struct dash_ctx *c)
{
	static const enum instance_status order[] = { STATUS_UP, STATUS_DOWN,
	    STATUS_STARTING, STATUS_OUT_OF_SERVICE, STATUS_UNKNOWN };
	struct reg_app		**apps, *app;
	const struct instance	*inst;
	struct dash_zones	  z;
	size_t			  napps, i, j, k, n, counts[STATUS_COUNT];
	size_t			  listed = 0, detailed = 0;
	int			  st;

	apps = dash_sorted_apps(c->s, &napps);
	if (napps == 0)
		buf_adds(c->b, "<tr class=\"empty\"><td colspan=\"4\">"
		    "No instances available</td></tr>\n");
	for (i = 0; i < napps; i++) {
		app = apps[i];
		n = reg_app_size(app);
		memset(counts, 0, sizeof counts);
		for (j = 0; j < n; j++) {
			inst = reg_app_instance_at(app, j);
			if (inst != NULL && inst->status < STATUS_COUNT)
				counts[inst->status]++;
		}
		buf_adds(c->b, "<tr class=\"app\" data-app=\"");
		dash_html(c->b, reg_app_name(app));
		buf_adds(c->b, "\"><td class=\"app-name\">");
		dash_html(c->b, reg_app_name(app));
		if ((inst = leader_find(c->s->reg, reg_app_name(app),
		    clock_mono_ms())) != NULL) {
			buf_adds(c->b, "<div class=\"leader\">leader: ");
			dash_html(c->b, instance_id(inst));
			buf_adds(c->b, "</div>");
		}
		buf_addf(c->b, "</td><td>n/a (%zu)</td><td>", n);
		dash_zones(app, &z);
		for (k = 0; k < z.n; k++) {
			if (k > 0)
				buf_adds(c->b, ", ");
			dash_html(c->b, z.name[k]);
			buf_addf(c->b, " (%zu)", z.count[k]);
		}
		if (z.more)
			buf_adds(c->b, ", &hellip;");
		buf_adds(c->b, "</td><td class=\"status\">");
		for (k = 0; k < STATUS_COUNT; k++) {
			st = order[k];
			if (counts[st] == 0)
				continue;
			buf_addf(c->b, "<div class=\"group st-%s\"><b>%s (%zu)"
			    "</b> - ", st == STATUS_UP ? "up" : "notup",
			    instance_status_name(st), counts[st]);
			for (j = 0; j < n; j++) {
				inst = reg_app_instance_at(app, j);
				if (inst == NULL || (int)inst->status != st)
					continue;
				if (listed++ >= DASH_MAX_LISTED) {
					buf_adds(c->b, "&hellip;");
					break;
				}
				if (dash_is_http(inst->status_page_url)) {
					buf_adds(c->b, "<a rel=\"noopener "
					    "noreferrer\" href=\"");
					dash_html(c->b, inst->status_page_url);
					buf_adds(c->b, "\">");
					dash_html(c->b, instance_id(inst));
					buf_adds(c->b, "</a>");
				} else {
					buf_adds(c->b, "<span>");
					dash_html(c->b, instance_id(inst));
					buf_adds(c->b, "</span>");
				}
				buf_adds(c->b, ", ");
			}
			if (c->b->len >= 2 && memcmp(c->b->data + c->b->len - 2,
			    ", ", 2) == 0)
				c->b->len -= 2;
			buf_adds(c->b, "</div>\n");
		}
		if (detailed < DASH_MAX_LISTED) {
			buf_addf(c->b, "<details class=\"inst-details\">"
			    "<summary>Details (%zu)</summary>\n", n);
			for (j = 0; j < n && detailed < DASH_MAX_LISTED; j++) {
				if ((inst = reg_app_instance_at(app, j)) == NULL)
					continue;
				dash_html_instance(c, inst);
				detailed++;
			}
			buf_adds(c->b, "</details>");
		}
		buf_adds(c->b, "</td></tr>\n");
	}
	free(apps);
}

/* One <td>, escaped ("-" for NULL). */
static void
dash_html_td(struct buf *b, const char *v)
{
	buf_adds(b, "<td>");
	dash_html(b, v != NULL ? v : "-");
	buf_adds(b, "</td>");
}

/*
 * airlift services (server/airlift.c): one row per announced service of
 * the AIRLIFT-* applications, from its reserved metadata keys.
 */
static void
dash_html_airlift(struct dash_ctx *c)
{
	struct reg_app		**apps, *app;
	const struct instance	*inst;
	const struct kvlist	*md;
	size_t			  napps, i, j, rows = 0;

	apps = dash_sorted_apps(c->s, &napps);
	for (i = 0; i < napps && rows < DASH_MAX_LISTED; i++) {
		app = apps[i];
		if (strncmp(reg_app_name(app), AIRLIFT_APP_PREFIX,
		    strlen(AIRLIFT_APP_PREFIX)) != 0)
			continue;
		for (j = 0; j < reg_app_size(app) && rows < DASH_MAX_LISTED;
		    j++) {
			inst = reg_app_instance_at(app, j);
			if (inst == NULL || kvlist_get(&inst->metadata,
			    AIRLIFT_META_TYPE) == NULL)
				continue;
			md = &inst->metadata;
			buf_adds(c->b, "<tr class=\"airlift\">");
			dash_html_td(c->b, kvlist_get(md, AIRLIFT_META_TYPE));
			dash_html_td(c->b, kvlist_get(md, AIRLIFT_META_POOL));
			dash_html_td(c->b, kvlist_get(md, AIRLIFT_META_NODE) !=
			    NULL ? kvlist_get(md, AIRLIFT_META_NODE) :
			    "(static)");
			dash_html_td(c->b, kvlist_get(md, AIRLIFT_META_ID));
			dash_html_td(c->b, kvlist_get(md,
			    AIRLIFT_META_LOCATION));
			dash_html_td(c->b, instance_status_name(inst->status));
			buf_adds(c->b, "</tr>\n");
			rows++;
		}
	}
	if (rows == 0)
		buf_adds(c->b, "<tr class=\"empty\"><td colspan=\"6\">"
		    "No airlift announcements</td></tr>\n");
	free(apps);
}

/* General Info: the StatusInfo stats. */
static void
dash_html_general(struct dash_ctx *c)
{
	struct dash_stats	st;
	size_t			i;

	dash_stats_fill(c->s, c->now, &st);
	for (i = 0; i < st.n; i++)
		dash_html_row(c->b, st.key[i], st.value[i]);
	dash_stats_clear(&st);
}

/* Instance Info: this server itself. */
static void
dash_html_self(struct dash_ctx *c)
{
	struct instance	*self = dash_self_instance(c->s);
	char		 tmp[32];

	dash_html_row(c->b, "instanceId", instance_id(self));
	dash_html_row(c->b, "hostName", self->host_name);
	dash_html_row(c->b, "ipAddr", self->ip_addr);
	snprintf(tmp, sizeof tmp, "%d", self->port);
	dash_html_row(c->b, "port", tmp);
	dash_html_row(c->b, "status", instance_status_name(self->status));
	dash_html_row(c->b, "version", PACKAGE_VERSION);
	instance_free(self);
}

/* One /lastn row. */
static void
dash_lastn_cb(int64_t ts, const char *lease, void *arg)
{
	struct dash_ctx	*c = arg;
	char		 tmp[64];

	dash_time_date(ts, tmp, sizeof tmp);
	buf_adds(c->b, "<tr><td>");
	dash_html(c->b, tmp);
	buf_adds(c->b, "</td><td>");
	dash_html(c->b, lease);
	buf_adds(c->b, "</td></tr>\n");
	c->rows++;
}

/* The last 1000 cancelled (or registered) leases, newest first. */
static void
dash_html_lastn(struct dash_ctx *c, int cancelled)
{
	c->rows = 0;
	if (c->s->reg != NULL)
		registry_foreach_recent(c->s->reg, cancelled, dash_lastn_cb, c);
	if (c->rows == 0)
		buf_adds(c->b, "<tr class=\"empty\"><td colspan=\"2\">"
		    "No results available</td></tr>\n");
}

/* Render an embedded page template for this request. */
static void
dash_page(struct server *s, struct evhttp_request *req, const char *base,
    const char *name, int64_t now)
{
	const struct dashboard_asset	*a;
	struct dash_ctx			 c;
	struct buf			 b;

	if ((a = dash_asset(name)) == NULL) {
		dash_send_str(req, 500, "Internal Server Error",
		    "text/plain; charset=utf-8", "dashboard not built in\n");
		return;
	}
	buf_init(&b, DASH_MAX_BODY);
	memset(&c, 0, sizeof c);
	c.s = s;
	c.now = now;
	c.base = base;
	c.b = &b;
	dash_expand(&c, (const char *)a->data, a->len);
	if (b.overflow) {
		buf_free(&b);
		dash_send_str(req, 503, "Service Unavailable",
		    "text/plain; charset=utf-8", "registry too large to show\n");
		return;
	}
	dash_send(req, 200, "OK", "text/html; charset=utf-8", &b);
	buf_free(&b);
}

/* One instance in the JSON feed. */
static void
dash_json_instance(struct buf *b, struct server *s,
    const struct instance *inst, int64_t now)
{
	enum instance_status	ov;
	size_t			i;

	(void)now;
	ov = s->reg != NULL ? registry_override(s->reg, instance_id(inst),
	    clock_mono_ms()) : STATUS_UNKNOWN;
	buf_addc(b, '{');
	dash_json_kv(b, "id", instance_id(inst), 0);
	dash_json_kv(b, "status", instance_status_name(inst->status), 1);
	dash_json_kv(b, "overriddenStatus",
	    instance_status_name(inst->overridden_status), 1);
	dash_json_kv(b, "override", ov == STATUS_UNKNOWN ? NULL :
	    instance_status_name(ov), 1);
	dash_json_kv(b, "hostName", inst->host_name, 1);
	dash_json_kv(b, "ipAddr", inst->ip_addr, 1);
	buf_addf(b, ",\"port\":%d,\"portEnabled\":%s,\"securePort\":%d,"
	    "\"securePortEnabled\":%s", inst->port,
	    inst->port_enabled ? "true" : "false", inst->secure_port,
	    inst->secure_port_enabled ? "true" : "false");
	dash_json_kv(b, "zone", dash_zone(inst), 1);
	dash_json_kv(b, "vipAddress", inst->vip_address, 1);
	dash_json_kv(b, "secureVipAddress", inst->secure_vip_address, 1);
	dash_json_kv(b, "homePageUrl", inst->home_page_url, 1);
	dash_json_kv(b, "statusPageUrl", inst->status_page_url, 1);
	dash_json_kv(b, "healthCheckUrl", inst->health_check_url, 1);
	buf_addf(b, ",\"registered\":%lld,\"lastRenewal\":%lld,"
	    "\"serviceUp\":%lld,\"duration\":%d,\"renewalInterval\":%d,"
	    "\"lastUpdated\":%lld,\"lastDirty\":%lld,\"metadata\":[",
	    (long long)inst->lease.registration_ts,
	    (long long)inst->lease.last_renewal_ts,
	    (long long)inst->lease.service_up_ts, inst->lease.duration_secs,
	    inst->lease.renewal_interval_secs,
	    (long long)inst->last_updated_ts, (long long)inst->last_dirty_ts);
	for (i = 0; i < inst->metadata.n; i++) {
		buf_adds(b, i > 0 ? ",[" : "[");
		dash_json_str(b, inst->metadata.v[i].key);
		buf_addc(b, ',');
		dash_json_str(b, inst->metadata.v[i].value);
		buf_addc(b, ']');
	}
	buf_adds(b, "]}");
}

/*
 * The JSON feed app.js polls: everything the page shows. Metadata is sent
 * as [key, value] pairs to keep its order. At most DASH_MAX_LISTED
 * instances are detailed; "truncated" says when some were left out.
 */
static void
dash_feed(struct server *s, struct evhttp_request *req, int64_t now)
{
	struct dash_banner	 bn[DASH_MAX_BANNERS];
	struct dash_stats	 st;
	struct dash_zones	 z;
	struct peer_info	 pi;
	struct reg_app		**apps;
	const struct instance	*inst, *leader;
	struct instance		*self;
	struct buf		 b;
	size_t			 i, j, n, napps, listed = 0;
	char			 tmp[64], *url;
	int			 truncated = 0, first;

	buf_init(&b, DASH_MAX_BODY);
	buf_adds(&b, "{");
	dash_json_kv(&b, "version", PACKAGE_VERSION, 0);
	dash_json_kv(&b, "environment", s->conf != NULL &&
	    s->conf->environment != NULL ? s->conf->environment : "test", 1);
	dash_json_kv(&b, "datacenter", s->conf != NULL &&
	    s->conf->datacenter != NULL ? s->conf->datacenter : "default", 1);
	dash_time_java(now, tmp, sizeof tmp);
	dash_json_kv(&b, "currentTime", tmp, 1);
	dash_uptime(clock_mono_ms() - s->start_mono, tmp, sizeof tmp);
	dash_json_kv(&b, "uptime", tmp, 1);
	buf_addf(&b, ",\"now\":%lld,\"startTime\":%lld,"
	    "\"leaseExpirationEnabled\":%s,\"renewsThreshold\":%d,"
	    "\"renewsLastMin\":%ld,\"selfPreservation\":%s,"
	    "\"belowThreshold\":%s,\"allowAccess\":%s,\"ready\":%s,"
	    "\"shuttingDown\":%s,\"banners\":[", (long long)now,
	    (long long)s->start_ms,
	    s->reg != NULL && registry_lease_expiration_enabled(s->reg) ?
	    "true" : "false",
	    s->reg != NULL ? registry_renew_threshold(s->reg) : 0,
	    s->reg != NULL ? registry_renews_last_min(s->reg) : 0,
	    s->conf == NULL || s->conf->enable_self_preservation ?
	    "true" : "false",
	    dashboard_below_threshold(s, clock_mono_ms()) ? "true" : "false",
	    gate_allow_read(s->gate, clock_mono_ms()) ? "true" : "false",
	    gate_is_ready(s->gate) ? "true" : "false",
	    gate_is_stopping(s->gate) ? "true" : "false");

	n = dash_banners(s, now, bn);
	for (i = 0; i < n; i++) {
		buf_adds(&b, i > 0 ? ",{" : "{");
		dash_json_kv(&b, "kind", bn[i].kind, 0);
		dash_json_kv(&b, "title", bn[i].title, 1);
		dash_json_kv(&b, "text", bn[i].text, 1);
		buf_addc(&b, '}');
	}

	buf_adds(&b, "],\"replicas\":[");
	n = s->peers != NULL ? peers_count(s->peers) : 0;
	for (i = 0; i < n; i++) {
		memset(&pi, 0, sizeof pi);
		peers_info(s->peers, i, &pi);
		url = dash_scrub_url(pi.url);
		buf_adds(&b, i > 0 ? ",{" : "{");
		dash_json_kv(&b, "url", url, 0);
		buf_addf(&b, ",\"reachable\":%s,\"queueDepth\":%zu,"
		    "\"lastSuccess\":%lld,\"batches\":%llu,\"items\":%llu,"
		    "\"failures\":%llu,\"dropped\":%llu}",
		    pi.reachable ? "true" : "false", pi.queue_depth,
		    (long long)pi.last_success_ms,
		    (unsigned long long)pi.batches_sent,
		    (unsigned long long)pi.items_sent,
		    (unsigned long long)pi.failures,
		    (unsigned long long)pi.dropped);
		free(url);
	}

	buf_adds(&b, "],\"general\":[");
	dash_stats_fill(s, now, &st);
	for (i = 0; i < st.n; i++) {
		buf_adds(&b, i > 0 ? ",[" : "[");
		dash_json_str(&b, st.key[i]);
		buf_addc(&b, ',');
		dash_json_str(&b, st.value[i]);
		buf_addc(&b, ']');
	}
	dash_stats_clear(&st);

	self = dash_self_instance(s);
	buf_adds(&b, "],\"instance\":[");
	buf_adds(&b, "[\"instanceId\",");
	dash_json_str(&b, instance_id(self));
	buf_adds(&b, "],[\"hostName\",");
	dash_json_str(&b, self->host_name);
	buf_adds(&b, "],[\"ipAddr\",");
	dash_json_str(&b, self->ip_addr);
	buf_addf(&b, "],[\"port\",\"%d\"],[\"status\",\"%s\"],"
	    "[\"version\",", self->port, instance_status_name(self->status));
	dash_json_str(&b, PACKAGE_VERSION);
	buf_adds(&b, "]]");
	instance_free(self);

	buf_adds(&b, ",\"apps\":[");
	apps = dash_sorted_apps(s, &napps);
	for (i = 0; i < napps; i++) {
		n = reg_app_size(apps[i]);
		buf_adds(&b, i > 0 ? ",{" : "{");
		dash_json_kv(&b, "name", reg_app_name(apps[i]), 0);
		/* The leader (server/leader.c), null when none. */
		leader = leader_find(s->reg, reg_app_name(apps[i]),
		    clock_mono_ms());
		buf_adds(&b, ",\"leader\":");
		if (leader != NULL)
			dash_json_str(&b, instance_id(leader));
		else
			buf_adds(&b, "null");
		buf_addf(&b, ",\"size\":%zu,\"zones\":[", n);
		dash_zones(apps[i], &z);
		for (j = 0; j < z.n; j++) {
			buf_adds(&b, j > 0 ? ",[" : "[");
			dash_json_str(&b, z.name[j]);
			buf_addf(&b, ",%zu]", z.count[j]);
		}
		buf_adds(&b, "],\"instances\":[");
		first = 1;
		for (j = 0; j < n; j++) {
			if ((inst = reg_app_instance_at(apps[i], j)) == NULL)
				continue;
			if (listed >= DASH_MAX_LISTED) {
				truncated = 1;
				break;
			}
			listed++;
			if (!first)
				buf_addc(&b, ',');
			first = 0;
			dash_json_instance(&b, s, inst, now);
		}
		buf_adds(&b, "]}");
	}
	free(apps);
	buf_addf(&b, "],\"truncated\":%s}", truncated ? "true" : "false");

	if (b.overflow) {
		buf_free(&b);
		dash_send_str(req, 503, "Service Unavailable",
		    "application/json", "{\"error\":\"registry too large\"}");
		return;
	}
	dash_send(req, 200, "OK", "application/json", &b);
	buf_free(&b);
}

/*
 * This server as an instance (for StatusInfo and Instance Info). Spring's
 * server is its own client; ours is not, so this is made up from the
 * configuration: app from eureka.instance.appname (default HEUREKA).
 */
static struct instance *
dash_self_instance(struct server *s)
{
	struct instance	*inst = instance_new();
	const char	*app = NULL, *host, *ip = NULL;
	char		*lower, *p;

	if (s->conf != NULL) {
		app = s->conf->instance_appname;
		ip = s->conf->instance_ip_address;
	}
	if (app == NULL || *app == '\0')
		app = "HEUREKA";
	host = s->hostname != NULL ? s->hostname : "localhost";
	if (ip == NULL || *ip == '\0')
		ip = "127.0.0.1";

	str_replace(&inst->app, app);
	str_upper(inst->app);
	str_replace(&inst->host_name, host);
	str_replace(&inst->ip_addr, ip);
	free(inst->instance_id);
	xasprintf(&inst->instance_id, "%s:%s:%d", host, app, s->port);
	lower = xstrdup(app);
	for (p = lower; *p != '\0'; p++) {
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	}
	str_replace(&inst->vip_address, lower);
	str_replace(&inst->secure_vip_address, lower);
	free(lower);
	free(inst->home_page_url);
	xasprintf(&inst->home_page_url, "http://%s:%d/", host, s->port);
	free(inst->status_page_url);
	xasprintf(&inst->status_page_url, "http://%s:%d/info", host, s->port);
	free(inst->health_check_url);
	xasprintf(&inst->health_check_url, "http://%s:%d/health", host,
	    s->port);
	inst->port = s->port;
	inst->port_enabled = 1;
	inst->secure_port_enabled = 0;
	inst->has_dc = 1;
	inst->dc_name = DC_MYOWN;
	inst->has_lease = 1;
	inst->lease.registration_ts = s->start_ms;
	inst->lease.last_renewal_ts = s->start_ms;
	inst->lease.service_up_ts = gate_is_ready(s->gate) ? s->start_ms : 0;
	inst->last_updated_ts = s->start_ms;
	inst->last_dirty_ts = s->start_ms;
	if (gate_is_stopping(s->gate))
		inst->status = STATUS_DOWN;
	else if (!gate_is_ready(s->gate))
		inst->status = STATUS_STARTING;
	else
		inst->status = STATUS_UP;
	inst->overridden_status = STATUS_UNKNOWN;
	return (inst);
}

/*
 * GET {version}/status. XML mirrors XStream's reflection output (§10.4);
 * JSON is our own straightforward object, since Eureka only answers 500.
 */
void
dashboard_status_info(struct server *s, struct evhttp_request *req, int json)
{
	struct dash_stats	 st;
	struct instance		*self;
	struct buf		 b, ib;
	size_t			 i, app_first = 5;
	int			 min, healthy = -1, avail = 0;
	int64_t			 now = clock_wall_ms();
	const char		*p;

	dash_stats_fill(s, now, &st);
	self = dash_self_instance(s);
	min = s->conf != NULL ?
	    s->conf->min_available_instances_for_peer_replication : -1;
	if (min >= 0) {
		for (p = st.value[6]; *p != '\0'; p++)
			avail += *p == ',';
		healthy = avail >= min;
	}
	buf_init(&b, 0);
	buf_init(&ib, 0);
	if (json) {
		buf_adds(&b, "{\"generalStats\":{");
		for (i = 0; i < app_first; i++)
			dash_json_kv(&b, st.key[i], st.value[i], i > 0);
		buf_adds(&b, "},\"applicationStats\":{");
		for (i = app_first; i < st.n; i++)
			dash_json_kv(&b, st.key[i], st.value[i],
			    i > app_first);
		buf_adds(&b, "},\"instanceInfo\":");
		json_encode_instance(&b, self, CODEC_FULL);
		if (healthy >= 0)
			buf_addf(&b, ",\"isHealthy\":%s",
			    healthy ? "true" : "false");
		buf_adds(&b, "}");
		dash_send(req, 200, "OK", "application/json", &b);
		goto out;
	}

	buf_adds(&b, "<com.netflix.eureka.util.StatusInfo>\n  <generalStats>\n");
	for (i = 0; i < app_first; i++) {
		buf_addf(&b, "    <%s>", st.key[i]);
		xml_add_escaped(&b, st.value[i]);
		buf_addf(&b, "</%s>\n", st.key[i]);
	}
	buf_adds(&b, "  </generalStats>\n  <applicationStats>\n");
	for (i = app_first; i < st.n; i++) {
		buf_addf(&b, "    <%s>", st.key[i]);
		xml_add_escaped(&b, st.value[i]);
		buf_addf(&b, "</%s>\n", st.key[i]);
	}
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
	dash_send(req, 200, "OK", "application/xml", &b);
out:
	buf_free(&ib);
	buf_free(&b);
	instance_free(self);
	dash_stats_clear(&st);
}
