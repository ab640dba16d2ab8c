/*
 * console.c: the audit and the doctor wired in (console.h). The audit
 * hook sits beside reglog's, on the registry's observer, so every path
 * that changes the registry (REST handlers, batches, airlift, the
 * eviction timer, the start-up sync) is recorded without a line in each
 * handler. Who acted is what rest.c set for the request in flight; a
 * replicated item carrying its origin (repl.h) overrides it, and a change
 * outside any request is the server's (an eviction) or a peer's (a sync).
 *
 * Heartbeats are neither audited nor seen here: the observer returns at
 * its first test for them, and the doctor reads heartbeat timing from
 * the lease on its own timer (doctor.h).
 */
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "audit.h"
#include "auditfile.h"
#include "buf.h"
#include "console.h"
#include "doctor.h"
#include "http.h"
#include "httputil.h"
#include "instance.h"
#include "peers.h"
#include "registry.h"
#include "xmalloc.h"

#define CONSOLE_AUDIT_LIMIT	1000	/* records one answer holds */

struct console {
	struct console_deps	 d;
	struct hreq		*req;		/* the request in flight */
	const char		*user;		/* as access_check_user said:
						   the caller's, until leave */
	int			 replicated;
	char			 addr[64];	/* the request's client */
	int			 scanning;	/* a doctor scan under way */
	struct hk_time		 scan_now;	/* when it began */
	struct reg_timing_cursor scan_cur;
	char			*appname;	/* upper case (the registry's) */
};

/*
 * Leases the doctor's scan looks at in one loop turn: about 2 ms of CPU
 * (the whole walk at 1M instances was 55 ms, one turn; issue 21).
 */
#define CONSOLE_SCAN_SLICE	40000

/* A registration's "host/ip:port" for the doctor's id-conflict. */
static void
console_where(const struct instance *in, char *out, size_t len)
{
	size_t	at = 0;

	if (len > 0)
		out[0] = '\0';
	str_lcat(out, len, &at, in->host_name != NULL ? in->host_name : "?");
	str_lcat(out, len, &at, "/");
	str_lcat(out, len, &at, in->ip_addr != NULL ? in->ip_addr : "?");
	str_lcat(out, len, &at, ":");
	str_lcat_i64(out, len, &at, (int)in->port);
}

/* The audit kind and detail of a registry event; -1: not audited. */
static int
console_what(const struct registry_event *ev, char *detail, size_t len)
{
	const struct instance	*in = ev->inst;
	size_t			 at = 0;

	detail[0] = '\0';
	switch (ev->type) {
	case REG_EV_REGISTER:
		/* "status %s, %s:%d" without printf (every registration). */
		if (in != NULL) {
			str_lcat(detail, len, &at, "status ");
			str_lcat(detail, len, &at,
			    instance_status_name(in->status));
			str_lcat(detail, len, &at, ", ");
			str_lcat(detail, len, &at, in->host_name != NULL ?
			    in->host_name : "?");
			str_lcat(detail, len, &at, ":");
			str_lcat_i64(detail, len, &at, (int)in->port);
		}
		if (in != NULL && kvlist_get(&in->metadata,
		    REGISTRY_UNCOUNTED_KEY) != NULL)
			return (AUDIT_AIRLIFT);
		return (ev->created ? AUDIT_REGISTER : AUDIT_REREGISTER);
	case REG_EV_CANCEL:
		return (AUDIT_CANCEL);
	case REG_EV_EVICT:
		snprintf(detail, len, "lease expired");
		return (AUDIT_EVICT);
	case REG_EV_STATUS_UPDATE:
		snprintf(detail, len, "%s", instance_status_name(ev->override));
		return (AUDIT_STATUS);
	case REG_EV_DELETE_OVERRIDE:
		if (in != NULL)
			snprintf(detail, len, "status %s",
			    instance_status_name(in->status));
		return (AUDIT_OVERRIDE_REMOVED);
	case REG_EV_METADATA:
		if (in != NULL)
			snprintf(detail, len, "%zu metadata entries",
			    in->metadata.n);
		return (AUDIT_METADATA);
	default:
		return (-1);
	}
}

/* The registry observer: one audit record per change. */
static void
console_observe_cb(const struct registry_event *ev, void *arg)
{
	struct console		*c = arg;
	const struct audit_who	*cur;
	const struct audit_rec	*r;
	struct audit_who	 who;
	char			 detail[160], where[320];
	int			 what;

	if (ev->type == REG_EV_RENEW)
		return;
	if ((what = console_what(ev, detail, sizeof detail)) < 0)
		return;
	cur = audit_who(c->d.audit);
	who = *cur;
	if (ev->type == REG_EV_EVICT) {
		who.node = c->d.node;
		who.user = "server";
		who.addr = "";
	}
	if (who.user == NULL || who.user[0] == '\0')
		who.user = ev->replicated ? "peer" : "server";
	if (who.node == NULL || who.node[0] == '\0')
		who.node = ev->replicated ? "(a peer)" : c->d.node;
	r = audit_add(c->d.audit, ev->now.wall_ms, (enum audit_what)what,
	    ev->app, ev->id, detail, &who, ev->replicated);
	auditfile_write(c->d.file, r);
	if (ev->type == REG_EV_REGISTER && !ev->replicated &&
	    ev->inst != NULL) {
		console_where(ev->inst, where, sizeof where);
		doctor_register(c->d.doctor, ev->app, ev->id, where,
		    ev->created, ev->inst->last_dirty_ts, ev->now);
	}
}

/* A console over deps; observes the registry. */
struct console *
console_new(const struct console_deps *d)
{
	struct console	*c = xcalloc(1, sizeof *c);
	char		*p;

	c->d = *d;
	c->appname = xstrdup(d->appname != NULL && d->appname[0] != '\0' ?
	    d->appname : "HEUREKA");
	for (p = c->appname; *p != '\0'; p++)
		if (*p >= 'a' && *p <= 'z')
			*p = (char)(*p - 'a' + 'A');
	c->d.appname = c->appname;
	registry_add_observer(d->reg, console_observe_cb, c);
	return (c);
}

/* Free it. */
void
console_free(struct console *c)
{
	if (c == NULL)
		return;
	free(c->appname);
	free(c);
}

/* Work out who is acting, when the audit first asks (audit.h). */
static void
console_who_cb(void *arg, struct audit_who *w)
{
	struct console			*c = arg;
	struct hconn			*evcon;
	char				*host = NULL;
	ev_uint16_t			 port = 0;

	c->addr[0] = '\0';
	if (c->req != NULL &&
	    (evcon = hreq_conn(c->req)) != NULL) {
		hconn_peer(evcon, &host, &port);
		if (host != NULL)
			str_lcpy(c->addr, host, sizeof c->addr);
	}
	w->addr = c->addr;
	if (c->replicated) {
		/* A Java peer's item names no origin: the sender is all. */
		w->node = c->addr;
		w->user = "peer";
	} else {
		w->node = c->d.node;
		w->user = c->user;
	}
}

/*
 * Who is acting for this request (console.h): remembered, worked out only
 * if the request changes something (a heartbeat never asks).
 */
void
console_enter(struct console *c, struct hreq *req,
    const char *user, int replicated)
{
	if (c == NULL)
		return;
	c->req = req;
	c->user = user != NULL ? user : "anonymous";
	c->replicated = replicated;
	audit_set_who_lazy(c->d.audit, console_who_cb, c);
}

/* The request is over. */
void
console_leave(struct console *c)
{
	if (c == NULL)
		return;
	audit_set_who(c->d.audit, NULL);
	c->req = NULL;
}

/* A query parameter, NULL if absent. */
static const char *
console_query(const struct hquery *q, const char *name)
{
	if (q == NULL)
		return (NULL);
	return (hquery_get(q, name));
}

/* A non-negative decimal query parameter; -1 when malformed. */
static int
console_query_i64(const struct hquery *q, const char *name,
    int64_t *out)
{
	int64_t	n;
	int	rc;

	if (q == NULL || (rc = hquery_i64(q, name, &n)) == 0)
		return (0);
	if (rc < 0 || n < 0)
		return (-1);
	*out = n;
	return (0);
}

/* GET heureka/audit. */
static void
console_audit(struct console *c, struct hreq *req,
    const struct hquery *q)
{
	struct buf	 b;
	int64_t		 since = 0, limit = CONSOLE_AUDIT_LIMIT;

	if (console_query_i64(q, "since", &since) != 0 ||
	    console_query_i64(q, "limit", &limit) != 0) {
		hreq_error(req, 400, "since (epoch ms) and limit must be "
		    "non-negative integers");
		return;
	}
	if (limit == 0 || limit > CONSOLE_AUDIT_LIMIT)
		limit = CONSOLE_AUDIT_LIMIT;
	buf_init(&b, 0);
	audit_json(c->d.audit, &b, console_query(q, "app"),
	    console_query(q, "id"), since, (size_t)limit);
	hreq_reply(req, 200, "application/json", b.data, b.len);
	buf_free(&b);
}

/* GET heureka/audit and heureka/doctor (console.h). */
int
console_http(struct console *c, struct hreq *req,
    const char *rest, const struct hquery *q, struct hk_time now)
{
	struct buf	 b;
	size_t		 len = strcspn(rest, "?");

	(void)now;
	if (c == NULL)
		return (0);
	if (len > 0 && rest[len - 1] == '/')
		len--;
	if (!((len == 5 && strncmp(rest, "audit", 5) == 0) ||
	    (len == 6 && strncmp(rest, "doctor", 6) == 0)))
		return (0);
	if (hreq_method(req) != EVHTTP_REQ_GET &&
	    hreq_method(req) != EVHTTP_REQ_HEAD) {
		hhdrs_add(hreq_output_headers(req),
		    "Allow", "GET, HEAD");
		hreq_error(req, 405, "method not allowed");
		return (1);
	}
	if (len == 5) {
		console_audit(c, req, q);
		return (1);
	}
	buf_init(&b, 0);
	doctor_json(c->d.doctor, &b);
	hreq_reply(req, 200, "application/json", b.data, b.len);
	buf_free(&b);
	return (1);
}

/* registry_foreach_timing callback: one lease to the doctor. */
static void
console_scan_lease_cb(const struct registry_timing *t, void *arg)
{
	doctor_scan_lease(arg, t);
}

/* Whether a URL's host is name (case-insensitive). */
static int
console_host_is(const char *url, const char *name)
{
	const char	*h = strstr(url, "://"), *at;
	size_t		 n;

	if (h == NULL || name == NULL)
		return (0);
	h += 3;
	n = strcspn(h, "/");
	if ((at = memchr(h, '@', n)) != NULL)
		h = at + 1;	/* the host is after any user info */
	if (*h == '[')
		return (0);	/* an IPv6 address is never a host name */
	n = strcspn(h, ":/");
	return (strlen(name) == n && strncasecmp(h, name, n) == 0);
}

/* The peer list's problems to the doctor. */
static void
console_scan_peers(struct console *c)
{
	struct peer_info	 pi;
	struct peer		*p;
	const char		*self;
	char			 why[320];
	size_t			 i, n;

	if (c->d.peers == NULL)
		return;
	for (i = 0; (self = peers_self_url(c->d.peers, i)) != NULL; i++) {
		if (console_host_is(self, c->d.hostname))
			continue;
		snprintf(why, sizeof why, "names this node itself, but not by "
		    "its host name %s: heureka drops it, while Java Eureka "
		    "nodes, which compare host names, would replicate to "
		    "themselves and list it under unavailable-replicas; name "
		    "each node by its host name", c->d.hostname);
		doctor_scan_peer(c->d.doctor, self, why);
	}
	n = peers_count(c->d.peers);
	for (i = 0; i < n; i++) {
		p = peers_get(c->d.peers, i);
		peers_info(c->d.peers, i, &pi);
		why[0] = '\0';
		if (p->last_status == 401 || p->last_status == 403)
			snprintf(why, sizeof why, "refuses our credentials "
			    "(answered %d): set the peer's user and password "
			    "in its URL or heureka.security.peer.*",
			    p->last_status);
		else if (!pi.resolved)
			snprintf(why, sizeof why, "its host name does not "
			    "resolve");
		else if (!pi.reachable && p->last_status == -1)
			snprintf(why, sizeof why, "unreachable: no answer (%s)",
			    pi.last_success_ms > 0 ? "it answered before" :
			    "it never answered");
		if (why[0] != '\0')
			doctor_scan_peer(c->d.doctor, pi.url, why);
		else
			doctor_scan_replica(c->d.doctor, c->d.reg,
			    c->appname, pi.url, p->u.host);
		doctor_scan_peer_clock(c->d.doctor, pi.url, p->date_skew_ms,
		    p->date_mono);
	}
}

/* A registration refused for its clock (console.h). */
void
console_refused_future(struct console *c, const char *app, const char *id,
    int64_t client_ts, struct hk_time now)
{
	if (c != NULL)
		doctor_register(c->d.doctor, app, id, NULL, 0, client_ts, now);
}

/*
 * A slice of the doctor's scan (console.h): the leases a slice at a time,
 * judged at the time the scan began, then peers and self-preservation.
 */
int
console_scan_step(struct console *c, struct hk_time now)
{
	int	active;

	if (c == NULL)
		return (1);
	if (!c->scanning) {
		c->scanning = 1;
		c->scan_now = now;
		memset(&c->scan_cur, 0, sizeof c->scan_cur);
		doctor_scan_begin(c->d.doctor, now);
	}
	if (!registry_timing_step(c->d.reg, c->scan_now.mono_ms, &c->scan_cur,
	    CONSOLE_SCAN_SLICE, console_scan_lease_cb, c->d.doctor))
		return (0);
	c->scanning = 0;
	console_scan_peers(c);
	active = !registry_lease_expiration_enabled(c->d.reg);
	doctor_scan_selfpres(c->d.doctor, active,
	    (long)registry_renew_threshold(c->d.reg),
	    registry_renews_last_min(c->d.reg));
	doctor_scan_end(c->d.doctor);
	return (1);
}

/* One whole doctor scan (console.h). */
void
console_scan(struct console *c, struct hk_time now)
{
	while (!console_scan_step(c, now))
		;
}
