/*
 * fuzz_router.c: libFuzzer target for the URL router with its
 * percent-decoding (rest_route_resolve: base, segments, routes, Allow,
 * role) and for the front's request head parser (http_parse_head).
 * The first byte picks the method; the rest is the path (as given, and
 * as the front's target split hands it to the dispatcher), and also the
 * head.
 *
 * The role check (issue 21: a user reached the peers' batch through
 * /eureka/v2/%70eerreplication/batch because the access check read the
 * raw path and the router the decoded one): an oracle written here,
 * sharing none of the router's code, finds the base, splits and decodes
 * the segments the way rest.h documents and matches them against the
 * route table (rest_route_at). The role the router judged must be the
 * role of the route the oracle reaches, the route the same one; and
 * whatever the table says, a target whose decoded segments name the
 * replication batch or the peers' heureka/ resources is the peer's, and
 * only a health probe is open.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/http.h>

#include "bug.h"
#include "http.h"
#include "instance.h"
#include "log.h"
#include "rest.h"
#include "xmalloc.h"

#define ORACLE_SEGMENTS	8	/* rest.c's bound: more is a 400 */

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* What the oracle expects of a path. */
struct oracle {
	int		 outside;
	int		 status;	/* 0, 400, 404, 405 */
	int		 route;
	enum access_kind role;
	char		*seg[ORACLE_SEGMENTS];
	int		 nseg;
};

/* A hex digit's value, or -1. */
static int
oracle_hex(char c)
{
	if (c >= '0' && c <= '9')
		return (c - '0');
	if (c >= 'a' && c <= 'f')
		return (c - 'a' + 10);
	if (c >= 'A' && c <= 'F')
		return (c - 'A' + 10);
	return (-1);
}

/*
 * Decode n bytes at p as a path segment: %XX is a byte, a '%' not
 * followed by two hex digits stays itself, '+' stays '+'. NULL when the
 * result holds a NUL or is not UTF-8 (the router refuses those).
 */
static char *
oracle_decode(const char *p, size_t n)
{
	char	*out = xmalloc(n + 1);
	size_t	 i, o = 0;
	int	 hi, lo;

	for (i = 0; i < n; i++) {
		if (p[i] == '%' && i + 2 < n &&
		    (hi = oracle_hex(p[i + 1])) >= 0 &&
		    (lo = oracle_hex(p[i + 2])) >= 0) {
			out[o++] = (char)(hi * 16 + lo);
			i += 2;
		} else
			out[o++] = p[i];
	}
	out[o] = '\0';
	if (strlen(out) != o || !utf8_valid_n(out, o)) {
		free(out);
		return (NULL);
	}
	return (out);
}

/* The path after a REST base, NULL outside the bases (rest.h's list). */
static const char *
oracle_base(const char *path)
{
	const char	*r;

	if (strcmp(path, "/eureka") == 0)
		return ("");
	if (strncmp(path, "/v1/", 4) == 0 || strncmp(path, "/v2/", 4) == 0)
		return (path + 4);
	if (strncmp(path, "/eureka/", 8) != 0)
		return (NULL);
	r = path + 8;
	/* A Netflix {version} segment: v1, v2, V1 or V2, then / or the end. */
	if ((r[0] == 'v' || r[0] == 'V') && (r[1] == '1' || r[1] == '2')) {
		if (r[2] == '\0')
			return (r + 2);
		if (r[2] == '/')
			return (r + 3);
	}
	return (r);
}

/* Is path (up to a '?' or '#') one of the health probes? */
static int
oracle_probe(const char *path)
{
	static const char *const probes[] = {
		"/health", "/health/liveness", "/health/readiness",
		"/actuator/health", "/actuator/health/liveness",
		"/actuator/health/readiness",
	};
	size_t	n = strcspn(path, "?#"), i;

	for (i = 0; i < sizeof probes / sizeof probes[0]; i++) {
		if (strlen(probes[i]) == n && strncmp(path, probes[i], n) == 0)
			return (1);
	}
	return (0);
}

/* Does route i's pattern match the oracle's segments? */
static int
oracle_match(const char *const *pattern, struct oracle *o)
{
	int	k;

	for (k = 0; k < o->nseg; k++) {
		if (k >= 5 || pattern[k] == NULL)
			return (0);
		if (strcmp(pattern[k], "*") != 0 &&
		    strcmp(pattern[k], o->seg[k]) != 0)
			return (0);
	}
	return (k >= 5 || pattern[k] == NULL);
}

/* What the router must make of method on path, found independently. */
static void
oracle_run(const char *path, int method, struct oracle *o)
{
	const char *const	*pattern;
	const char		*rel, *p, *e;
	enum access_kind	 role, strict = ACCESS_OPEN;
	size_t			 i;
	int			 methods, m, mask = 0;

	memset(o, 0, sizeof *o);
	o->route = -1;
	o->role = method == EVHTTP_REQ_GET || method == EVHTTP_REQ_HEAD ?
	    ACCESS_READ : ACCESS_WRITE;
	if ((rel = oracle_base(path)) == NULL) {
		o->outside = 1;
		if (oracle_probe(path))
			o->role = ACCESS_OPEN;
		return;
	}
	for (p = rel; *p != '\0'; p = e) {
		if (*p == '/') {
			e = p + 1;
			continue;
		}
		if ((e = strchr(p, '/')) == NULL)
			e = p + strlen(p);
		if (o->nseg == ORACLE_SEGMENTS ||
		    (o->seg[o->nseg] = oracle_decode(p, (size_t)(e - p))) ==
		    NULL) {
			o->status = 400;
			return;
		}
		o->nseg++;
	}
	m = method == EVHTTP_REQ_HEAD ? EVHTTP_REQ_GET : method;
	for (i = 0; rest_route_at(i, &methods, &pattern, &role) == 0; i++) {
		if (!oracle_match(pattern, o))
			continue;
		mask |= methods;
		if (role > strict)
			strict = role;
		if ((methods & m) != 0) {
			o->route = (int)i;
			o->role = role;
			return;
		}
	}
	o->status = mask != 0 ? 405 : 404;
	if (mask != 0 && strict > o->role)
		o->role = strict;
}

/* Free the oracle's segments. */
static void
oracle_clear(struct oracle *o)
{
	int	k;

	for (k = 0; k < o->nseg; k++)
		free(o->seg[k]);
}

/* Whether the decoded segments are exactly the n names given. */
static int
oracle_is(const struct oracle *o, int n, const char *a, const char *b)
{
	return (o->nseg == n && strcmp(o->seg[0], a) == 0 &&
	    (n < 2 || strcmp(o->seg[1], b) == 0));
}

/* Check the router's judgement of method on path against the oracle. */
static void
check_role(const char *path, int method)
{
	struct rest_target	t;
	struct oracle		o;
	int			rc;

	rc = rest_route_resolve(path, method, &t);
	if (rc != t.status || (rc != 0 && rc != 400 && rc != 404 && rc != 405))
		fatalx("rest_route_resolve: %d", rc);
	if (rc == 405 && t.allow[0] == '\0')
		fatalx("405 without Allow");
	oracle_run(path, method, &o);
	if (t.outside != o.outside || t.status != o.status ||
	    t.route != o.route || t.role != o.role)
		fatalx("router and oracle differ on [%s] method %d: outside "
		    "%d/%d status %d/%d route %d/%d role %d/%d", path, method,
		    t.outside, o.outside, t.status, o.status, t.route, o.route,
		    (int)t.role, (int)o.role);
	/* Whatever the table says: the peers' resources are the peers'. */
	if (!o.outside && o.status != 400 &&
	    (oracle_is(&o, 2, "peerreplication", "batch") ||
	    oracle_is(&o, 2, "heureka", "digest") ||
	    oracle_is(&o, 2, "heureka", "apps") ||
	    oracle_is(&o, 2, "heureka", "stats")) && t.role != ACCESS_PEER)
		fatalx("a peer resource [%s] judged role %d", path,
		    (int)t.role);
	if (t.body == REST_BODY_BATCH && t.role != ACCESS_PEER)
		fatalx("the batch's body on a non-peer route [%s]", path);
	if (t.role == ACCESS_OPEN && !(t.outside && oracle_probe(path)))
		fatalx("[%s] open without being a probe", path);
	oracle_clear(&o);
}

/* One input. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct hhead		 h;
	struct hhdr		*hdrs;
	enum rest_body		 body;
	const char		*reason, *q;
	char			*path, *head, *p, allow[64];
	size_t			 qlen, n;
	int			 method, rc;

	/* A broken invariant aborts; walkers run after each operation. */
	bug_set_fatal(1);
	bug_set_self_check(1);
	if (len < 1)
		return (0);
	method = 1 << (data[0] % 10);
	path = xstrndup((const char *)data + 1, len - 1);
	rc = rest_route_lookup(path, method, &body, allow, sizeof allow);
	if (rc != 0 && rc != 400 && rc != 404 && rc != 405)
		fatalx("rest_route_lookup: %d", rc);
	if (rc == 405 && allow[0] == '\0')
		fatalx("405 without Allow");
	check_role(path, method);
	/* The path as the front hands it to the dispatcher. */
	p = xmalloc(strlen(path) + 1);
	http_target_split(path, strlen(path), p, &q, &qlen);
	if (*p != '\0')
		check_role(p, method);
	free(p);
	free(path);
	/* The head, parsed in place in a copy. */
	n = len - 1;
	head = xmalloc(n + 1);
	memcpy(head, data + 1, n);
	hdrs = xcalloc(http_head_lines(head, n) + 1, sizeof *hdrs);
	rc = http_parse_head(head, n, &h, hdrs, http_head_lines(head, n),
	    &reason);
	if (rc == 0 && (h.target == NULL || h.method_name == NULL ||
	    h.target + h.target_len > head + n))
		fatalx("http_parse_head: bad target");
	if (rc != 0 && (reason == NULL || *reason == '\0'))
		fatalx("http_parse_head: %d without a reason", rc);
	free(hdrs);
	free(head);
	return (0);
}
