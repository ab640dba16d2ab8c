/*
 * url.c: parse http[s]://[user:pass@]host[:port][/path] into its parts
 * (url.h), tell whether a configured peer URL is this node, and
 * percent-encode a path segment for the requests that name an instance.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "httputil.h"
#include "url.h"
#include "xmalloc.h"

/* Parse http[s]://[userinfo@]host[:port][/path]; path gets a final '/'. */
int
peer_url_parse(const char *url, struct peer_url *u, char **cause)
{
	const char	*p, *auth_end, *host_end, *path;
	const char	*hs, *he;
	char		*port = NULL, *end;
	long		 lport;
	size_t		 plen;
	char		*shown = http_url_scrub(url);	/* for messages */

	memset(u, 0, sizeof *u);
	if (strncasecmp(url, "http://", 7) == 0) {
		u->scheme = xstrdup("http");
		p = url + 7;
	} else if (strncasecmp(url, "https://", 8) == 0) {
		u->scheme = xstrdup("https");
		p = url + 8;
	} else {
		xasprintf(cause, "%s: not an http(s) URL", shown);
		goto fail;
	}
	path = p + strcspn(p, "/?#");
	auth_end = NULL;
	for (end = (char *)p; end < path; end++) {
		if (*end == '@')
			auth_end = end;
	}
	if (auth_end != NULL) {
		u->userinfo = xstrndup(p, (size_t)(auth_end - p));
		p = auth_end + 1;
	}
	if (*p == '[') {
		hs = p + 1;
		if ((he = memchr(hs, ']', (size_t)(path - hs))) == NULL) {
			xasprintf(cause, "%s: bad IPv6 address", shown);
			goto fail;
		}
		host_end = he + 1;
	} else {
		hs = p;
		he = memchr(p, ':', (size_t)(path - p));
		if (he == NULL)
			he = path;
		host_end = he;
	}
	if (he == hs) {
		xasprintf(cause, "%s: no host", shown);
		goto fail;
	}
	u->host = xstrndup(hs, (size_t)(he - hs));
	if (host_end < path && *host_end == ':') {
		port = xstrndup(host_end + 1, (size_t)(path - host_end - 1));
		errno = 0;
		lport = strtol(port, &end, 10);
		if (port[0] == '\0' || *end != '\0' || lport < 1 ||
		    lport > 65535) {
			xasprintf(cause, "%s: bad port", shown);
			goto fail;
		}
		u->port = (int)lport;
	} else if (host_end != path) {
		xasprintf(cause, "%s: bad host", shown);
		goto fail;
	} else
		u->port = strcmp(u->scheme, "https") == 0 ? 443 : 80;
	plen = strcspn(path, "?#");
	if (plen == 0)
		u->path = xstrdup("/");
	else if (path[plen - 1] == '/')
		u->path = xstrndup(path, plen);
	else
		xasprintf(&u->path, "%.*s/", (int)plen, path);
	if (strchr(u->host, ':') != NULL)
		xasprintf(&u->display, "%s://[%s]:%d%s", u->scheme, u->host,
		    u->port, u->path);
	else
		xasprintf(&u->display, "%s://%s:%d%s", u->scheme, u->host,
		    u->port, u->path);
	free(port);
	free(shown);
	return (0);
fail:
	free(port);
	free(shown);
	peer_url_clear(u);
	return (-1);
}

/* Free what a parsed URL holds. */
void
peer_url_clear(struct peer_url *u)
{
	free(u->scheme);
	free(u->userinfo);
	free(u->host);
	free(u->path);
	free(u->display);
	memset(u, 0, sizeof *u);
}

/* Compare two URLs ignoring one trailing '/'. */
static int
peer_url_same(const char *a, const char *b)
{
	size_t	la = strlen(a), lb = strlen(b);

	if (la > 0 && a[la - 1] == '/')
		la--;
	if (lb > 0 && b[lb - 1] == '/')
		lb--;
	return (la == lb && strncmp(a, b, la) == 0);
}

/* Is this configured peer URL our own? */
int
peer_url_is_self(const char *raw, const struct peer_url *u,
    const char *my_url, int my_port, int (*is_local)(const char *, void *),
    void *arg)
{
	if (my_url != NULL && my_url[0] != '\0')
		return (peer_url_same(raw, my_url));
	if (u->port != my_port)
		return (0);
	return (is_local(u->host, arg));
}

/* One path segment, percent-encoded (instance ids keep their ':'). */
void
url_add_segment(struct buf *b, const char *s)
{
	for (; *s != '\0'; s++) {
		if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || strchr("-._~:@", *s) != NULL)
			buf_addc(b, *s);
		else
			buf_addf(b, "%%%02X", (unsigned char)*s);
	}
}
