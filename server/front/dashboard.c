/*
 * dashboard.c: the operator's page ({path}, default /), {path}lastn and
 * the feeds behind them.
 *
 * The page and /lastn are rendered on the server from the embedded
 * templates in server/front/dashboard/, so they are useful without
 * JavaScript; app.js then refreshes the page in place from the JSON feed
 * {path}heureka-assets/status.json and the watch stream, and draws its
 * charts from {path}heureka-assets/history.json (the ring of history.c,
 * fed here by dashboard_history_tick()). Every value shown comes from
 * clients or peers and is attacker-controlled: the HTML is escaped here,
 * the feeds are made inert as HTML, the script only ever uses textContent,
 * only http(s) URLs become links, credentials are cut out of peer URLs,
 * and a strict CSP forbids inline script in case anything slips through.
 *
 * The operations endpoints and StatusInfo are ops.c's; the page shows
 * StatusInfo's figures and this server's own description through it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "access.h"
#include "buf.h"
#include "clock.h"
#include "config.h"
#include "gate.h"
#include "http.h"
#include "httputil.h"
#include "instance.h"
#include "json.h"
#include "xmalloc.h"

#include "airlift.h"
#include "csrf.h"
#include "dashboard.h"
#include "doctor.h"
#include "dashboard_assets.h"
#include "history.h"
#include "leader.h"
#include "ops.h"
#include "peers.h"
#include "registry.h"

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

#define DASH_TEXT	"text/plain; charset=utf-8"

/* What the page shows (borrowed) and the history it owns. */
struct dashboard {
	struct registry		*reg;
	const struct gate	*gate;
	const struct config	*conf;
	struct peers *const	*peers;		/* *peers: NULL until listening */
	struct ops		*ops;
	const struct access	*access;	/* dashboard_deps */
	const struct csrf	*csrf;
	const struct doctor	*doctor;
	struct history		 history;	/* the charts' ring */
};

/* One red or yellow box at the top of the page, with a plain explanation. */
struct dash_banner {
	const char	*kind;		/* "emergency", "warning", "info" */
	const char	*title;
	const char	*text;
};
#define DASH_MAX_BANNERS	6

/* Distinct zone names with their instance counts. */
struct dash_zones {
	const char	*name[DASH_MAX_ZONES];
	size_t		 count[DASH_MAX_ZONES];
	size_t		 n;
	int		 more;
};

/* State passed through the template expansion and the lastn callbacks. */
struct dash_ctx {
	struct dashboard	*d;
	struct hk_time		 now;		/* the request's */
	const char		*base;		/* normalised, ends with '/' */
	struct buf		*b;
	size_t			 rows;
	int			 lastn_cancelled;	/* the table has "How" */
};

static char	*dash_base(const char *);
static void	dash_html(struct buf *, const char *);
static void	dash_json_str(struct buf *, const char *);
static void	dash_json_inert(struct buf *);
static int	dash_is_http(const char *);
static void	dash_time_java(int64_t, char *, size_t);
static void	dash_time_date(int64_t, char *, size_t);
static int	dash_below_threshold(const struct dashboard *, int64_t);
static size_t	dash_banners(struct dashboard *, struct hk_time,
		    struct dash_banner *);
static struct reg_app **dash_sorted_apps(struct dashboard *, size_t *);
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
static int64_t	dash_last_renewal(const struct instance *);
static void	dash_json_console(struct dashboard *, struct hreq *,
		    struct buf *);
static void	dash_html_general(struct dash_ctx *);
static void	dash_html_self(struct dash_ctx *);
static void	dash_html_row(struct buf *, const char *, const char *);
static void	dash_html_lastn(struct dash_ctx *, int);
static void	dash_lastn_cb(int64_t, const char *, int, void *);
static void	dash_page(struct dashboard *, struct hreq *,
		    const char *, const char *, struct hk_time);
static void	dash_feed(struct dashboard *, struct hreq *,
		    struct hk_time);
static void	dash_history(struct dashboard *, struct hreq *);
static void	dash_json_instance(struct buf *, struct dashboard *,
		    const struct instance *, struct hk_time);

/* A dashboard over deps, with an empty history ring. */
struct dashboard *
dashboard_new(const struct dashboard_deps *deps)
{
	struct dashboard	*d = xcalloc(1, sizeof *d);

	d->reg = deps->reg;
	d->gate = deps->gate;
	d->conf = deps->conf;
	d->peers = deps->peers;
	d->ops = deps->ops;
	d->access = deps->access;
	d->csrf = deps->csrf;
	d->doctor = deps->doctor;
	history_init(&d->history, deps->conf->dashboard_history_interval_ms);
	return (d);
}

/* Free d; NULL is fine. */
void
dashboard_free(struct dashboard *d)
{
	free(d);
}

/* Feed the history ring from the registry's counters and the peers. */
void
dashboard_history_tick(struct dashboard *d, struct hk_time now)
{
	const struct registry_stats	*st;
	struct history_input		 in;
	struct peer_info		 pi;
	struct peers			*peers = *d->peers;
	size_t				 i;

	if (d->reg == NULL)
		return;
	memset(&in, 0, sizeof in);
	st = registry_stats(d->reg);
	if (st != NULL) {
		in.registrations = st->registrations;
		in.renewals = st->renewals;
		in.cancels = st->cancels;
	}
	in.renews_last_min = registry_renews_last_min(d->reg);
	in.threshold = registry_renew_threshold(d->reg);
	in.npeers = peers != NULL ? peers_count(peers) : 0;
	if (in.npeers > HISTORY_MAX_PEERS)
		in.npeers = HISTORY_MAX_PEERS;
	for (i = 0; i < in.npeers; i++) {
		memset(&pi, 0, sizeof pi);
		peers_info(peers, i, &pi);
		in.queue_depth[i] = pi.queue_depth;
		in.last_success_ms[i] = pi.last_success_ms;
	}
	history_tick(&d->history, &in, now.wall_ms);
}

/* The history ring, read-only. */
const struct history *
dashboard_history(const struct dashboard *d)
{
	return (&d->history);
}

/*
 * The charts' data: the history ring, with the peers named as the DS
 * Replicas table names them (after a SIGHUP changed the peer list, older
 * samples' peers are matched by position).
 */
static void
dash_history(struct dashboard *d, struct hreq *req)
{
	struct peer_info	 pi;
	struct peers		*peers = *d->peers;
	struct buf		 b;
	size_t			 i, n;
	char			*url;

	buf_init(&b, 0);
	n = peers != NULL ? peers_count(peers) : 0;
	if (n > HISTORY_MAX_PEERS)
		n = HISTORY_MAX_PEERS;
	buf_addf(&b, "{\"intervalMs\":%lld,\"capacity\":%d,\"peers\":[",
	    (long long)d->history.interval_ms, HISTORY_SAMPLES);
	for (i = 0; i < n; i++) {
		memset(&pi, 0, sizeof pi);
		peers_info(peers, i, &pi);
		url = http_url_scrub(pi.url != NULL ? pi.url : "");
		if (i > 0)
			buf_addc(&b, ',');
		dash_json_str(&b, url);
		free(url);
	}
	buf_adds(&b, "],\"samples\":");
	history_json(&d->history, &b);
	buf_adds(&b, "}\n");
	dash_json_inert(&b);
	hreq_reply_safe(req, 200, "application/json; charset=utf-8", b.data,
	    b.len);
	buf_free(&b);
}

/* Route path to the page, /lastn or an asset; 0: not ours. */
int
dashboard_handle(struct dashboard *d, struct hreq *req,
    const char *path, struct hk_time now)
{
	const struct dashboard_asset	*a;
	char				*p, *q, *base = NULL;
	const char			*rest, *ctype;
	size_t				 blen;
	int				 rc = 0;
	enum evhttp_cmd_type		 cmd;

	if (path == NULL)
		return (0);
	p = xstrdup(path);
	if ((q = strpbrk(p, "?#")) != NULL)
		*q = '\0';

	cmd = hreq_method(req);
	if (d->conf == NULL || !d->conf->dashboard_enabled)
		goto out;

	base = dash_base(d->conf->dashboard_path);
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
		hhdrs_add(hreq_output_headers(req),
		    "Allow", "GET, HEAD");
		hreq_reply_safe(req, 405, DASH_TEXT, "method not allowed\n",
		    strlen("method not allowed\n"));
		goto out;
	}

	if (strcmp(rest, "") == 0)
		dash_page(d, req, base, "index.html", now);
	else if (strcmp(rest, "lastn") == 0)
		dash_page(d, req, base, "lastn.html", now);
	else if (strcmp(rest, "heureka-assets/status.json") == 0)
		dash_feed(d, req, now);
	else if (strcmp(rest, "heureka-assets/history.json") == 0)
		dash_history(d, req);
	else {
		rest += 15;
		a = NULL;
		if (strcmp(rest, "app.js") == 0 || strcmp(rest, "app.css") == 0)
			a = dash_asset(rest);
		if (a == NULL) {
			hreq_reply_safe(req, 404, DASH_TEXT, "not found\n",
			    strlen("not found\n"));
			goto out;
		}
		ctype = strcmp(rest, "app.js") == 0 ?
		    "text/javascript; charset=utf-8" :
		    "text/css; charset=utf-8";
		evbuffer_add_reference(hreq_output_buffer(req),
		    a->data, a->len, NULL, NULL);
		hreq_reply_safe(req, 200, ctype, NULL, 0);
	}
out:
	free(base);
	free(p);
	return (rc);
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

/* Append s as a JSON string (json.c's), or null when s is NULL. */
static void
dash_json_str(struct buf *b, const char *s)
{
	if (s == NULL)
		buf_adds(b, "null");
	else
		json_add_string(b, s);
}

/*
 * Make a finished JSON document inert as HTML: <, > and & (which JSON has
 * only inside strings) become \u003c, \u003e and \u0026, so a feed stays
 * harmless even if something ever sniffs it as a page. The cap of b holds.
 */
static void
dash_json_inert(struct buf *b)
{
	struct buf	 out;
	const char	*p, *end;
	size_t		 run;

	if (b->data == NULL || strpbrk(b->data, "<>&") == NULL)
		return;
	buf_init(&out, b->cap);
	out.overflow = b->overflow;
	for (p = b->data, end = b->data + b->len; p < end; p += run) {
		run = strcspn(p, "<>&");
		buf_add(&out, p, run);
		if (p + run == end)
			break;
		buf_addf(&out, "\\u%04x", (unsigned char)p[run]);
		run++;
	}
	buf_free(b);
	*b = out;
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

/*
 * Eureka's isBelowRenewThreshold (§5.11): renewals at or under the
 * threshold, counted only once the server has been up longer than the
 * empty-sync wait, so a freshly started server shows no EMERGENCY.
 */
static int
dash_below_threshold(const struct dashboard *d, int64_t mono)
{
	if (d->reg == NULL || !registry_is_below_threshold(d->reg))
		return (0);
	return (mono - gate_started(d->gate).mono_ms >
	    d->conf->wait_time_in_ms_when_sync_empty);
}

/*
 * The banners of §10.5 (Eureka's own wording, kept so operators and search
 * engines recognise it) plus a plain-language explanation of each.
 */
static size_t
dash_banners(struct dashboard *d, struct hk_time now, struct dash_banner *bn)
{
	size_t	n = 0;
	int	self_pres, below;

	self_pres = d->conf != NULL ? d->conf->enable_self_preservation : 1;
	below = dash_below_threshold(d, now.mono_ms);

	if (gate_is_stopping(d->gate)) {
		bn[n].kind = "warning";
		bn[n].title = "This server is shutting down.";
		bn[n++].text = "It no longer reports itself healthy; clients "
		    "and peers should move to another server.";
	}
	if (!gate_is_ready(d->gate) && !gate_is_stopping(d->gate)) {
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
	if (!gate_allow_read(d->gate, now.mono_ms)) {
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
dash_sorted_apps(struct dashboard *d, size_t *np)
{
	struct reg_app	**v;
	size_t		  i, n;

	n = d->reg != NULL ? registry_app_count(d->reg) : 0;
	v = xreallocarray(NULL, n + 1, sizeof *v);
	for (i = 0; i < n; i++)
		v[i] = registry_app_at(d->reg, i);
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
		/* open and close lie in [t, end): the lengths are >= 0. */
		open = memmem(t, (size_t)(end - t), "{{", 2);
		if (open == NULL) {
			buf_add(c->b, t, (size_t)(end - t));
			break;
		}
		buf_add(c->b, t, (size_t)(open - t));
		close = memmem(open + 2, (size_t)(end - open - 2), "}}", 2);
		if (close == NULL)
			break;
		dash_section(c, open + 2, (size_t)(close - open - 2));
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
		dash_time_java(c->now.wall_ms, tmp, sizeof tmp);
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

	n = dash_banners(c->d, c->now, bn);
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
	struct dashboard	*d = c->d;
	char			 tmp[64];

	dash_html_row(c->b, "Environment", d->conf != NULL &&
	    d->conf->environment != NULL ? d->conf->environment : "test");
	dash_html_row(c->b, "Data center", d->conf != NULL &&
	    d->conf->datacenter != NULL ? d->conf->datacenter : "default");
	dash_time_java(c->now.wall_ms, tmp, sizeof tmp);
	dash_html_row(c->b, "Current time", tmp);
	ops_uptime(d->ops, c->now, tmp, sizeof tmp);
	dash_html_row(c->b, "Uptime", tmp);
	dash_html_row(c->b, "Lease expiration enabled", d->reg != NULL &&
	    registry_lease_expiration_enabled(d->reg) ? "true" : "false");
	snprintf(tmp, sizeof tmp, "%d",
	    d->reg != NULL ? registry_renew_threshold(d->reg) : 0);
	dash_html_row(c->b, "Renews threshold", tmp);
	snprintf(tmp, sizeof tmp, "%ld",
	    d->reg != NULL ? registry_renews_last_min(d->reg) : 0);
	dash_html_row(c->b, "Renews (last min)", tmp);
	dash_html_row(c->b, "Self-preservation", d->conf != NULL &&
	    !d->conf->enable_self_preservation ? "disabled" :
	    (d->reg != NULL && !registry_lease_expiration_enabled(d->reg) ?
	    "enabled, active (eviction suspended)" : "enabled, not active"));
}

/* DS Replicas: one row per peer with its replication health. */
static void
dash_html_replicas(struct dash_ctx *c)
{
	struct peer_info	 pi;
	struct peers		*peers = *c->d->peers;
	size_t			 i, n;
	char			*url, ts[64];

	n = peers != NULL ? peers_count(peers) : 0;
	if (n == 0) {
		buf_adds(c->b, "<tr class=\"empty\"><td colspan=\"6\">"
		    "No replicas (standalone server)</td></tr>\n");
		return;
	}
	for (i = 0; i < n; i++) {
		memset(&pi, 0, sizeof pi);
		peers_info(peers, i, &pi);
		url = http_url_scrub(pi.url != NULL ? pi.url : "");
		ops_time_iso(pi.last_success_ms, ts, sizeof ts);
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
	char			 tmp[96];
	const char		*urls[3][2];
	size_t			 i, used;
	int64_t			 last;

	buf_adds(b, "<div class=\"inst\"><h4>");
	dash_html(b, instance_id(inst));
	buf_adds(b, "</h4><table class=\"kv\">\n");
	dash_html_row(b, "Status", instance_status_name(inst->status));
	dash_html_row(b, "Overridden status",
	    instance_status_name(inst->overridden_status));
	ov = c->d->reg != NULL ? registry_override(c->d->reg,
	    instance_id(inst), c->now.mono_ms) : STATUS_UNKNOWN;
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
	ops_time_iso(inst->lease.registration_ts, tmp, sizeof tmp);
	dash_html_row(b, "Registered", tmp);
	last = dash_last_renewal(inst);
	ops_time_iso(last, tmp, sizeof tmp);
	if (last > 0 && c->now.wall_ms >= last) {
		used = strlen(tmp);
		snprintf(tmp + used, sizeof tmp - used, " (%lld s ago)",
		    (long long)((c->now.wall_ms - last) / 1000));
	}
	dash_html_row(b, "Last renewal", tmp);
	ops_time_iso(inst->lease.service_up_ts, tmp, sizeof tmp);
	dash_html_row(b, "Service up", tmp);
	snprintf(tmp, sizeof tmp, "%d s (renew every %d s)",
	    inst->lease.duration_secs, inst->lease.renewal_interval_secs);
	dash_html_row(b, "Lease duration", tmp);
	ops_time_iso(inst->last_updated_ts, tmp, sizeof tmp);
	dash_html_row(b, "Last updated", tmp);
	ops_time_iso(inst->last_dirty_ts, tmp, sizeof tmp);
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
	enum instance_status	  st;

	apps = dash_sorted_apps(c->d, &napps);
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
		if ((inst = leader_find(c->d->reg, reg_app_name(app),
		    c->now.mono_ms)) != NULL) {
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
				if (inst == NULL || inst->status != st)
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

	apps = dash_sorted_apps(c->d, &napps);
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
	struct ops_stats	st;
	size_t			i;

	ops_stats_fill(c->d->ops, c->now, &st);
	for (i = 0; i < st.n; i++)
		dash_html_row(c->b, st.key[i], st.value[i]);
	ops_stats_clear(&st);
}

/* Instance Info: this server itself. */
static void
dash_html_self(struct dash_ctx *c)
{
	struct instance	*self = ops_self_instance(c->d->ops);
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

/* One /lastn row; the cancelled table says which were evictions. */
static void
dash_lastn_cb(int64_t ts, const char *lease, int evicted, void *arg)
{
	struct dash_ctx	*c = arg;
	char		 tmp[64];

	dash_time_date(ts, tmp, sizeof tmp);
	buf_adds(c->b, evicted ? "<tr class=\"evicted\"><td>" : "<tr><td>");
	dash_html(c->b, tmp);
	buf_adds(c->b, "</td><td>");
	dash_html(c->b, lease);
	if (c->lastn_cancelled)
		buf_adds(c->b, evicted ? "</td><td>evicted (lease expired)" :
		    "</td><td>cancelled");
	buf_adds(c->b, "</td></tr>\n");
	c->rows++;
}

/* The last 1000 cancelled (or registered) leases, newest first. */
static void
dash_html_lastn(struct dash_ctx *c, int cancelled)
{
	c->rows = 0;
	c->lastn_cancelled = cancelled;
	if (c->d->reg != NULL)
		registry_foreach_recent_how(c->d->reg, cancelled,
		    dash_lastn_cb, c);
	if (c->rows == 0)
		buf_addf(c->b, "<tr class=\"empty\"><td colspan=\"%d\">"
		    "No results available</td></tr>\n", cancelled ? 3 : 2);
}

/* Render an embedded page template for this request. */
static void
dash_page(struct dashboard *d, struct hreq *req, const char *base,
    const char *name, struct hk_time now)
{
	const struct dashboard_asset	*a;
	struct dash_ctx			 c;
	struct buf			 b;

	if ((a = dash_asset(name)) == NULL) {
		hreq_reply_safe(req, 500, DASH_TEXT, "dashboard not built in\n",
		    strlen("dashboard not built in\n"));
		return;
	}
	buf_init(&b, DASH_MAX_BODY);
	memset(&c, 0, sizeof c);
	c.d = d;
	c.now = now;
	c.base = base;
	c.b = &b;
	dash_expand(&c, (const char *)a->data, a->len);
	if (b.overflow) {
		buf_free(&b);
		hreq_reply_safe(req, 503, DASH_TEXT,
		    "registry too large to show\n",
		    strlen("registry too large to show\n"));
		return;
	}
	hreq_reply_safe(req, 200, "text/html; charset=utf-8", b.data, b.len);
	buf_free(&b);
}

/*
 * The console's part of the feed: whether actions are offered (the user
 * is authenticated, or heureka.dashboard.actions says so with
 * authentication off), the token bound to this page's credentials
 * (csrf.h; the feed is same-origin JSON another site cannot read), and
 * the doctor's findings; then the feed's closing brace.
 */
static void
dash_json_console(struct dashboard *d, struct hreq *req,
    struct buf *b)
{
	char	tok[CSRF_TOKEN_LEN + 1];
	int	actions;

	actions = d->csrf != NULL && ((d->access != NULL &&
	    access_enabled(d->access)) || d->conf->dashboard_actions);
	buf_addf(b, ",\"actions\":%s", actions ? "true" : "false");
	if (actions) {
		csrf_token(d->csrf, req, tok);
		buf_adds(b, ",\"token\":");
		dash_json_str(b, tok);
	}
	if (d->doctor != NULL) {
		buf_adds(b, ",\"doctor\":");
		doctor_json(d->doctor, b);
	}
	buf_addc(b, '}');
}

/*
 * When the last heartbeat came (wall ms). leaseInfo.lastRenewalTimestamp
 * is Eureka's "last renewal + duration" once renewed (registry.c's
 * lease_display, as Eureka reports it, and what the page showed before),
 * the registration time before the first renewal.
 */
static int64_t
dash_last_renewal(const struct instance *inst)
{
	int64_t	last = inst->lease.last_renewal_ts;

	if (last > 0 && last != inst->lease.registration_ts)
		last -= (int64_t)inst->lease.duration_secs * 1000;
	return (last);
}

/* One instance in the JSON feed. */
static void
dash_json_instance(struct buf *b, struct dashboard *d,
    const struct instance *inst, struct hk_time now)
{
	enum instance_status	ov;
	size_t			i;
	int64_t			last;

	ov = d->reg != NULL ? registry_override(d->reg, instance_id(inst),
	    now.mono_ms) : STATUS_UNKNOWN;
	buf_addc(b, '{');
	json_add_member(b, "id", instance_id(inst), 0);
	json_add_member(b, "status", instance_status_name(inst->status), 1);
	json_add_member(b, "overriddenStatus",
	    instance_status_name(inst->overridden_status), 1);
	json_add_member(b, "override", ov == STATUS_UNKNOWN ? NULL :
	    instance_status_name(ov), 1);
	json_add_member(b, "hostName", inst->host_name, 1);
	json_add_member(b, "ipAddr", inst->ip_addr, 1);
	buf_addf(b, ",\"port\":%d,\"portEnabled\":%s,\"securePort\":%d,"
	    "\"securePortEnabled\":%s", inst->port,
	    inst->port_enabled ? "true" : "false", inst->secure_port,
	    inst->secure_port_enabled ? "true" : "false");
	json_add_member(b, "zone", dash_zone(inst), 1);
	json_add_member(b, "vipAddress", inst->vip_address, 1);
	json_add_member(b, "secureVipAddress", inst->secure_vip_address, 1);
	json_add_member(b, "homePageUrl", inst->home_page_url, 1);
	json_add_member(b, "statusPageUrl", inst->status_page_url, 1);
	json_add_member(b, "healthCheckUrl", inst->health_check_url, 1);
	last = dash_last_renewal(inst);
	buf_addf(b, ",\"registered\":%lld,\"lastRenewal\":%lld,"
	    "\"serviceUp\":%lld,\"duration\":%d,\"renewalInterval\":%d,"
	    "\"lastUpdated\":%lld,\"lastDirty\":%lld,\"metadata\":[",
	    (long long)inst->lease.registration_ts,
	    (long long)last,
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
dash_feed(struct dashboard *d, struct hreq *req, struct hk_time now)
{
	struct dash_banner	 bn[DASH_MAX_BANNERS];
	struct ops_stats	 st;
	struct dash_zones	 z;
	struct peer_info	 pi;
	struct peers		*peers = *d->peers;
	struct reg_app		**apps;
	const struct instance	*inst, *leader;
	struct instance		*self;
	struct buf		 b;
	size_t			 i, j, n, napps, listed = 0;
	char			 tmp[64], *url;
	int			 truncated = 0, first;

	buf_init(&b, DASH_MAX_BODY);
	buf_adds(&b, "{");
	json_add_member(&b, "version", PACKAGE_VERSION, 0);
	json_add_member(&b, "environment", d->conf != NULL &&
	    d->conf->environment != NULL ? d->conf->environment : "test", 1);
	json_add_member(&b, "datacenter", d->conf != NULL &&
	    d->conf->datacenter != NULL ? d->conf->datacenter : "default", 1);
	dash_time_java(now.wall_ms, tmp, sizeof tmp);
	json_add_member(&b, "currentTime", tmp, 1);
	ops_uptime(d->ops, now, tmp, sizeof tmp);
	json_add_member(&b, "uptime", tmp, 1);
	buf_addf(&b, ",\"now\":%lld,\"startTime\":%lld,"
	    "\"leaseExpirationEnabled\":%s,\"renewsThreshold\":%d,"
	    "\"renewsLastMin\":%ld,\"selfPreservation\":%s,"
	    "\"belowThreshold\":%s,\"allowAccess\":%s,\"ready\":%s,"
	    "\"shuttingDown\":%s,\"banners\":[", (long long)now.wall_ms,
	    (long long)gate_started(d->gate).wall_ms,
	    d->reg != NULL && registry_lease_expiration_enabled(d->reg) ?
	    "true" : "false",
	    d->reg != NULL ? registry_renew_threshold(d->reg) : 0,
	    d->reg != NULL ? registry_renews_last_min(d->reg) : 0,
	    d->conf == NULL || d->conf->enable_self_preservation ?
	    "true" : "false",
	    dash_below_threshold(d, now.mono_ms) ? "true" : "false",
	    gate_allow_read(d->gate, now.mono_ms) ? "true" : "false",
	    gate_is_ready(d->gate) ? "true" : "false",
	    gate_is_stopping(d->gate) ? "true" : "false");

	n = dash_banners(d, now, bn);
	for (i = 0; i < n; i++) {
		buf_adds(&b, i > 0 ? ",{" : "{");
		json_add_member(&b, "kind", bn[i].kind, 0);
		json_add_member(&b, "title", bn[i].title, 1);
		json_add_member(&b, "text", bn[i].text, 1);
		buf_addc(&b, '}');
	}

	buf_adds(&b, "],\"replicas\":[");
	n = peers != NULL ? peers_count(peers) : 0;
	for (i = 0; i < n; i++) {
		memset(&pi, 0, sizeof pi);
		peers_info(peers, i, &pi);
		url = http_url_scrub(pi.url != NULL ? pi.url : "");
		buf_adds(&b, i > 0 ? ",{" : "{");
		json_add_member(&b, "url", url, 0);
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
	ops_stats_fill(d->ops, now, &st);
	for (i = 0; i < st.n; i++) {
		buf_adds(&b, i > 0 ? ",[" : "[");
		dash_json_str(&b, st.key[i]);
		buf_addc(&b, ',');
		dash_json_str(&b, st.value[i]);
		buf_addc(&b, ']');
	}
	ops_stats_clear(&st);

	self = ops_self_instance(d->ops);
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
	apps = dash_sorted_apps(d, &napps);
	for (i = 0; i < napps; i++) {
		n = reg_app_size(apps[i]);
		buf_adds(&b, i > 0 ? ",{" : "{");
		json_add_member(&b, "name", reg_app_name(apps[i]), 0);
		/* The leader (server/leader.c), null when none. */
		leader = leader_find(d->reg, reg_app_name(apps[i]),
		    now.mono_ms);
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
			dash_json_instance(&b, d, inst, now);
		}
		buf_adds(&b, "]}");
	}
	free(apps);
	buf_addf(&b, "],\"truncated\":%s", truncated ? "true" : "false");
	dash_json_console(d, req, &b);		/* and the closing brace */
	dash_json_inert(&b);

	if (b.overflow) {
		buf_free(&b);
		hreq_reply_safe(req, 503, "application/json",
		    "{\"error\":\"registry too large\"}",
		    strlen("{\"error\":\"registry too large\"}"));
		return;
	}
	hreq_reply_safe(req, 200, "application/json", b.data, b.len);
	buf_free(&b);
}
