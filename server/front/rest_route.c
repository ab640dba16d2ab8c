/*
 * rest_route.c: the route table (method, pattern, handler, the body a
 * route takes), path splitting into URL-decoded segments and query
 * parsing. Pure: no server state, nothing but the request's text, so
 * the header-time guard (rest_route_lookup) and the router fuzz target
 * (tests/fuzz/fuzz_router.c) run it on any input.
 */


#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/http.h>

#include "instance.h"
#include "rest_int.h"
#include "xmalloc.h"

#define M_GET	EVHTTP_REQ_GET
#define M_POST	EVHTTP_REQ_POST
#define M_PUT	EVHTTP_REQ_PUT
#define M_DEL	EVHTTP_REQ_DELETE

const struct route rest_routes[] = {
	{ M_GET, { "apps" }, "apps", 0, h_apps },
	{ M_GET, { "apps", "delta" }, "apps_delta", 0, h_delta },
	{ M_GET, { "apps", "*" }, "app", 1, h_app },
	{ M_POST, { "apps", "*" }, "register", 1, h_register,
	    REST_BODY_INSTANCE },
	{ M_GET, { "apps", "*", "*" }, "instance", 2, h_instance },
	{ M_PUT, { "apps", "*", "*" }, "renew", 2, h_renew },
	{ M_DEL, { "apps", "*", "*" }, "cancel", 2, h_cancel },
	{ M_PUT, { "apps", "*", "*", "status" }, "status", 2, h_status_put },
	{ M_DEL, { "apps", "*", "*", "status" }, "status", 2,
	    h_status_delete },
	{ M_PUT, { "apps", "*", "*", "metadata" }, "metadata", 2,
	    h_metadata },
	{ M_GET, { "instances", "*" }, "instance", 0, h_instance_by_id },
	{ M_GET, { "vips", "*" }, "vips", 0, h_vip },
	{ M_GET, { "svips", "*" }, "vips", 0, h_vip },
	{ M_POST, { "peerreplication", "batch" }, "batch", 0, h_batch,
	    REST_BODY_BATCH },
	{ M_PUT, { "asg", "*", "status" }, "asg", 0, h_asg },
	{ M_GET, { "status" }, "status_info", 0, h_status_info },
	{ M_GET, { "serverinfo", "statusoverrides" }, "statusoverrides", 0,
	    h_overrides },
	{ M_GET, { "announcement", "static" }, "airlift_static", 0,
	    h_airlift },
	{ M_POST, { "announcement", "static" }, "airlift_static", 0,
	    h_airlift, REST_BODY_INSTANCE },
	{ M_DEL, { "announcement", "static", "*" }, "airlift_static", 0,
	    h_airlift },
	{ M_PUT, { "announcement", "*" }, "airlift_announce", 0, h_airlift,
	    REST_BODY_INSTANCE },
	{ M_DEL, { "announcement", "*" }, "airlift_announce", 0, h_airlift },
	{ M_DEL, { "announcement", "*", "*" }, "airlift_announce", 0,
	    h_airlift },
	{ M_GET, { "service" }, "airlift_service", 0, h_airlift },
	{ M_GET, { "service", "*" }, "airlift_service", 0, h_airlift },
	{ M_GET, { "service", "*", "*" }, "airlift_service", 0, h_airlift },
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
 * What the route for method on path (a request URI's path, not decoded)
 * takes, for the header-time guard: 0 with *body set when a route takes
 * it (paths outside the REST bases, which take no body, included), else
 * the status the dispatcher will answer (400 malformed path, 404 no such
 * resource, 405 with allow set to the methods the path takes).
 */
int
rest_route_lookup(const char *path, int method, enum rest_body *body,
    char *allow, size_t allowlen)
{
	char		*seg[MAX_SEGMENTS], segbuf[SEG_INLINE], *segheap = NULL;
	const char	*rel;
	size_t		 base, i;
	int		 nseg = 0, mask = 0, rc = 404;

	*body = REST_BODY_NONE;
	if (allowlen > 0)
		allow[0] = '\0';
	if ((base = rest_base(path)) == 0)
		return (0);
	rel = path + base;
	if (strncmp(rel, "heureka/", 8) == 0 || strcmp(rel, "heureka") == 0)
		return (0);
	if (split_path(seg, &nseg, rel, segbuf, sizeof segbuf, &segheap) != 0)
		rc = 400;
	for (i = 0; rc != 400 && i < rest_nroutes; i++) {
		if (!route_match(&rest_routes[i], seg, nseg))
			continue;
		mask |= rest_routes[i].methods;
		if ((rest_routes[i].methods & route_method(method)) != 0) {
			*body = rest_routes[i].body;
			rc = 0;
			break;
		}
	}
	if (rc == 404 && mask != 0) {
		allow_string(mask, allow, allowlen);
		rc = 405;
	}
	free(segheap);
	return (rc);
}

/*
 * Parse a query string into headers, decoding keys as well as values
 * (evhttp_parse_query_str decodes only values) and refusing a decoded
 * NUL, CR or LF, which would cut or split a value in C strings and
 * headers, or invalid UTF-8. -1 on a malformed query.
 */
int
parse_query(const char *q, struct evkeyvalq *out)
{
	char	*copy, *p, *part, *eq, *k, *v;
	size_t	 klen, vlen;
	int	 rc = 0;

	copy = p = xstrdup(q);
	while (rc == 0 && (part = strsep(&p, "&")) != NULL) {
		if (*part == '\0')
			continue;
		if ((eq = strchr(part, '=')) != NULL)
			*eq++ = '\0';
		k = evhttp_uridecode(part, 1, &klen);
		v = evhttp_uridecode(eq != NULL ? eq : "", 1, &vlen);
		if (k == NULL || v == NULL || strlen(k) != klen ||
		    strlen(v) != vlen || strpbrk(k, "\r\n") != NULL ||
		    strpbrk(v, "\r\n") != NULL || !utf8_valid(k) ||
		    !utf8_valid(v) ||
		    evhttp_add_header(out, k, v) != 0)
			rc = -1;
		free(k);
		free(v);
	}
	free(copy);
	return (rc);
}
