/*
 * rest_route.c: the route table (method, the role a caller needs,
 * pattern, handler, the body a route takes), the one resolution of a
 * request target (route_resolve: base, path split into URL-decoded
 * segments once, route, role) and query parsing. Pure: no server state, nothing but the request's text, so
 * the front's body caps (rest_route_lookup) and the router fuzz target
 * (tests/fuzz/fuzz_router.c) run it on any input.
 */


#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/http.h>

#include "http.h"
#include "instance.h"
#include "ops.h"
#include "rest_int.h"
#include "xmalloc.h"

#define M_GET	EVHTTP_REQ_GET
#define M_POST	EVHTTP_REQ_POST
#define M_PUT	EVHTTP_REQ_PUT
#define M_DEL	EVHTTP_REQ_DELETE
#define RD	ACCESS_READ
#define WR	ACCESS_WRITE
#define PEER	ACCESS_PEER

const struct route rest_routes[] = {
	{ M_GET, RD, { "apps" }, "apps", 0, h_apps },
	{ M_GET, RD, { "apps", "delta" }, "apps_delta", 0, h_delta },
	{ M_GET, RD, { "apps", "*" }, "app", 1, h_app },
	{ M_POST, WR, { "apps", "*" }, "register", 1, h_register,
	    REST_BODY_INSTANCE },
	{ M_GET, RD, { "apps", "*", "*" }, "instance", 2, h_instance },
	{ M_PUT, WR, { "apps", "*", "*" }, "renew", 2, h_renew },
	{ M_DEL, WR, { "apps", "*", "*" }, "cancel", 2, h_cancel },
	{ M_PUT, WR, { "apps", "*", "*", "status" }, "status", 2,
	    h_status_put },
	{ M_DEL, WR, { "apps", "*", "*", "status" }, "status", 2,
	    h_status_delete },
	{ M_PUT, WR, { "apps", "*", "*", "metadata" }, "metadata", 2,
	    h_metadata },
	{ M_GET, RD, { "instances", "*" }, "instance", 0, h_instance_by_id },
	{ M_GET, RD, { "vips", "*" }, "vips", 0, h_vip },
	{ M_GET, RD, { "svips", "*" }, "vips", 0, h_vip },
	{ M_POST, PEER, { "peerreplication", "batch" }, "batch", 0, h_batch,
	    REST_BODY_BATCH },
	{ M_PUT, WR, { "asg", "*", "status" }, "asg", 0, h_asg },
	{ M_GET, RD, { "status" }, "status_info", 0, h_status_info },
	{ M_GET, RD, { "serverinfo", "statusoverrides" }, "statusoverrides",
	    0, h_overrides },
	/* heureka's extension: the clients' watch and leader ... */
	{ M_GET, RD, { "heureka", "watch" }, "watch", 0, h_watch },
	{ M_GET, RD, { "heureka", "watch", "stats" }, "watch", 0, h_watch },
	{ M_GET, RD, { "heureka", "apps", "*", "leader" }, "leader", 0,
	    h_leader },
	{ M_PUT | M_DEL, WR, { "heureka", "apps", "*", "leader" }, "leader",
	    0, h_leader },
	/*
	 * ... the drain barrier, a read: `heureka drain` runs in a client's
	 * preStop hook with the client's own credentials (k8s) ...
	 */
	{ M_GET, RD, { "heureka", "apps", "*", "*", "drained" },
	    "heureka_drained", 0, h_drained },
	/* ... the operators' console (console.c), a read ... */
	{ M_GET, RD, { "heureka", "audit" }, "heureka", 0, h_console },
	{ M_GET, RD, { "heureka", "doctor" }, "heureka", 0, h_console },
	/* ... and what only peers read: anti-entropy and stats. */
	{ M_GET, PEER, { "heureka", "digest" }, "heureka", 0, h_ext },
	{ M_GET, PEER, { "heureka", "apps" }, "heureka", 0, h_ext },
	{ M_GET, PEER, { "heureka", "stats" }, "heureka", 0, h_ext },
	{ M_GET, RD, { "announcement", "static" }, "airlift_static", 0,
	    h_airlift },
	{ M_POST, WR, { "announcement", "static" }, "airlift_static", 0,
	    h_airlift, REST_BODY_INSTANCE },
	{ M_DEL, WR, { "announcement", "static", "*" }, "airlift_static", 0,
	    h_airlift },
	{ M_PUT, WR, { "announcement", "*" }, "airlift_announce", 0,
	    h_airlift, REST_BODY_INSTANCE },
	{ M_DEL, WR, { "announcement", "*" }, "airlift_announce", 0,
	    h_airlift },
	{ M_DEL, WR, { "announcement", "*", "*" }, "airlift_announce", 0,
	    h_airlift },
	{ M_GET, RD, { "service" }, "airlift_service", 0, h_airlift },
	{ M_GET, RD, { "service", "*" }, "airlift_service", 0, h_airlift },
	{ M_GET, RD, { "service", "*", "*" }, "airlift_service", 0,
	    h_airlift },
	{ M_GET, RD, { "catalog", "services" }, "consul", 0, h_consul },
	{ M_GET, RD, { "catalog", "service", "*" }, "consul", 0, h_consul },
	{ M_GET, RD, { "catalog", "nodes" }, "consul", 0, h_consul },
	{ M_GET, RD, { "health", "service", "*" }, "consul", 0, h_consul },
	{ M_GET, RD, { "status", "leader" }, "consul", 0, h_consul },
	{ M_GET, RD, { "status", "peers" }, "consul", 0, h_consul },
	{ M_GET, RD, { "agent", "self" }, "consul", 0, h_consul },
};

const size_t	rest_nroutes = sizeof rest_routes / sizeof rest_routes[0];

/* Whether a route's pattern matches the segments. */
int
route_match(const struct route *r, char **seg, int nseg)
{
	const char	*p;
	int		 i;

	for (i = 0; i < nseg; i++) {
		if ((p = r->pattern[i]) == NULL)
			return (0);
		/* "*", else the first bytes before the whole names. */
		if ((p[0] != '*' || p[1] != '\0') &&
		    (p[0] != seg[i][0] || strcmp(p, seg[i]) != 0))
			return (0);
	}
	return (i < 5 ? r->pattern[i] == NULL : 1);
}

/* The method a route table entry is looked up with (HEAD is GET's). */
int
route_method(int method)
{
	/* Jersey answers HEAD wherever GET is allowed. */
	return (method == EVHTTP_REQ_HEAD ? EVHTTP_REQ_GET : method);
}

/* "GET, HEAD, PUT" for a method mask, as the Allow header lists them. */
void
allow_string(int mask, char *out, size_t len)
{
	static const struct {
		int		 m;
		const char	*name;
	} names[] = {
		{ EVHTTP_REQ_GET, "GET, HEAD" },
		{ EVHTTP_REQ_POST, "POST" },
		{ EVHTTP_REQ_PUT, "PUT" },
		{ EVHTTP_REQ_DELETE, "DELETE" },
	};
	size_t	i, used = 0;
	int	n;

	if (len == 0)
		return;
	out[0] = '\0';
	for (i = 0; i < sizeof names / sizeof names[0]; i++) {
		if ((mask & names[i].m) == 0)
			continue;
		n = snprintf(out + used, len - used, "%s%s",
		    used > 0 ? ", " : "", names[i].name);
		if (n < 0 || (size_t)n >= len - used)
			return;
		used += (size_t)n;
	}
}

/*
 * Split a path into URL-decoded segments, NUL-terminated one after the
 * other in buf (buflen bytes) or, for a path too long for it, in one
 * allocation left in *heap for the caller to free: a decoded segment is
 * never longer than its text, so the path's length and a NUL a segment
 * is enough. -1 if too many or undecodable.
 */
int
split_path(char **seg, int *nseg, const char *path, char *buf,
    size_t buflen, char **heap)
{
	const char	*p = path, *e;
	char		*out = buf, *raw, *dec;
	size_t		 n, declen, plen = strlen(path);

	*heap = NULL;
	if (plen + MAX_SEGMENTS + 1 > buflen)
		out = *heap = xmalloc(plen + MAX_SEGMENTS + 1);
	while (*p != '\0') {
		while (*p == '/')
			p++;
		if (*p == '\0')
			break;
		e = strchr(p, '/');
		n = e != NULL ? (size_t)(e - p) : strlen(p);
		if (*nseg == MAX_SEGMENTS)
			return (-1);
		if (memchr(p, '%', n) == NULL) {
			/* Nothing to decode: the text itself. */
			memcpy(out, p, n);
			declen = n;
		} else {
			raw = xstrndup(p, n);
			dec = evhttp_uridecode(raw, 0, &declen);
			free(raw);
			if (dec == NULL)
				return (-1);
			/* "%00" would hide the rest of a name from C strings. */
			if (strlen(dec) != declen) {
				free(dec);
				return (-1);
			}
			memcpy(out, dec, declen);
			free(dec);
		}
		out[declen] = '\0';
		/* Names go into JSON and XML, which must stay valid UTF-8. */
		if (!utf8_valid_n(out, declen))
			return (-1);
		seg[(*nseg)++] = out;
		out += declen + 1;
		p += n;
	}
	return (0);
}

/* Length of the REST base at the start of path, 0 if none. */
size_t
rest_base(const char *path)
{
	size_t	n;

	if (strncmp(path, "/eureka/", 8) == 0) {
		n = 8;
		/* Netflix: any {version} segment (v1, v2) selects v2. */
		if ((path[n] == 'v' || path[n] == 'V') &&
		    (path[n + 1] == '1' || path[n + 1] == '2') &&
		    (path[n + 2] == '/' || path[n + 2] == '\0'))
			n += path[n + 2] == '/' ? 3 : 2;
		return (n);
	}
	if (strcmp(path, "/eureka") == 0)
		return (7);
	if (strncmp(path, "/v2/", 4) == 0)
		return (4);
	if (strncmp(path, "/v1/", 4) == 0)
		return (4);
	return (0);
}

/*
 * The one resolution of a request target, behind the dispatcher, the
 * front and the fuzz target alike: the base, the rest of the path split
 * and URL-decoded once (into seg, in buf of buflen bytes or in *heap for
 * the caller to free), the route those segments and method reach, and
 * from it the role and the body (see rest_route_resolve() in rest.h).
 * Returns the route, or NULL with t->status set (0 and t->outside for a
 * path outside the bases).
 */
const struct route *
route_resolve(const char *path, int method, char **seg, int *nseg,
    char *buf, size_t buflen, char **heap, struct rest_target *t)
{
	const struct route	*r;
	enum access_kind	 strict = ACCESS_OPEN;
	size_t			 base, i;
	int			 mask = 0;

	memset(t, 0, sizeof *t);
	t->route = -1;
	t->role = method == EVHTTP_REQ_GET || method == EVHTTP_REQ_HEAD ?
	    ACCESS_READ : ACCESS_WRITE;
	*nseg = 0;
	*heap = NULL;
	if ((base = rest_base(path)) == 0) {
		/* The probes ops.c answers are open; it reads the same path. */
		t->outside = 1;
		if (ops_is_probe(path))
			t->role = ACCESS_OPEN;
		return (NULL);
	}
	if (split_path(seg, nseg, path + base, buf, buflen, heap) != 0) {
		t->status = 400;
		return (NULL);
	}
	for (i = 0; i < rest_nroutes; i++) {
		r = &rest_routes[i];
		if (!route_match(r, seg, *nseg))
			continue;
		mask |= r->methods;
		if (r->role > strict)
			strict = r->role;
		if ((r->methods & route_method(method)) == 0)
			continue;
		t->route = (int)i;
		t->role = r->role;
		t->body = r->body;
		return (r);
	}
	if (mask != 0) {
		/* Only who may use a resource learns the methods it takes. */
		t->status = 405;
		if (strict > t->role)
			t->role = strict;
		allow_string(mask, t->allow, sizeof t->allow);
	} else
		t->status = 404;
	return (NULL);
}

/* Resolve a request target; see rest.h. */
int
rest_route_resolve(const char *path, int method, struct rest_target *t)
{
	char	*seg[MAX_SEGMENTS], segbuf[SEG_INLINE], *segheap;
	int	 nseg;

	(void)route_resolve(path, method, seg, &nseg, segbuf, sizeof segbuf,
	    &segheap, t);
	free(segheap);
	return (t->status);
}

/* What the route for method on path takes, for the front; see rest.h. */
int
rest_route_lookup(const char *path, int method, enum rest_body *body,
    char *allow, size_t allowlen)
{
	struct rest_target	t;
	size_t			 n;

	rest_route_resolve(path, method, &t);
	*body = t.body;
	if (allowlen > 0) {
		/* A copy, not a printf: every request with a body asks. */
		n = strnlen(t.allow, sizeof t.allow);
		if (n >= allowlen)
			n = allowlen - 1;
		memcpy(allow, t.allow, n);
		allow[n] = '\0';
	}
	return (t.status);
}

/* Route i of the table; see rest.h. */
int
rest_route_at(size_t i, int *methods, const char *const **pattern,
    enum access_kind *role)
{
	if (i >= rest_nroutes)
		return (-1);
	*methods = rest_routes[i].methods;
	*pattern = rest_routes[i].pattern;
	*role = rest_routes[i].role;
	return (0);
}

/* Whether n bytes of a query part are printable ASCII with no escape. */
static int
query_plain(const char *p, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (p[i] == '%' || p[i] == '+' || (unsigned char)p[i] >= 0x7f ||
		    (unsigned char)p[i] < 0x20)
			return (0);
	return (1);
}

/*
 * Parse a query string into out, decoding keys as well as values (into
 * the request's arena: nothing to free) and refusing a decoded NUL, CR
 * or LF, which would cut or split a value in C strings and headers, or
 * invalid UTF-8. -1 on a malformed query.
 */
int
parse_query(struct hreq *req, const char *q, struct hquery *out)
{
	const char	*part, *end, *eq;
	char		*k, *v;
	size_t		 n = 1, klen, vlen, plen;

	for (part = q; *part != '\0'; part++)
		n += *part == '&';
	out->kv = hreq_alloc(req, n * sizeof *out->kv);
	out->n = 0;
	for (part = q; *part != '\0'; part = *end != '\0' ? end + 1 : end) {
		end = part + strcspn(part, "&");
		if ((plen = (size_t)(end - part)) == 0)
			continue;
		if ((eq = memchr(part, '=', plen)) == NULL)
			eq = end;
		k = hreq_alloc(req, plen + 2);
		v = k + (eq - part) + 1;
		vlen = eq < end ? (size_t)(end - eq - 1) : 0;
		/*
		 * Plain ASCII with nothing to decode is itself (a target has
		 * no control characters): the usual case, a copy.
		 */
		if (query_plain(part, plen)) {
			memcpy(k, part, (size_t)(eq - part));
			k[eq - part] = '\0';
			memcpy(v, eq < end ? eq + 1 : "", vlen);
			v[vlen] = '\0';
		} else {
			klen = http_decode(part, (size_t)(eq - part), 1, k);
			vlen = http_decode(eq < end ? eq + 1 : "", vlen, 1, v);
			if (strlen(k) != klen || strlen(v) != vlen ||
			    strpbrk(k, "\r\n") != NULL ||
			    strpbrk(v, "\r\n") != NULL || !utf8_valid(k) ||
			    !utf8_valid(v))
				return (-1);
		}
		out->kv[out->n].key = k;
		out->kv[out->n].value = v;
		out->n++;
	}
	return (0);
}
