/*
 * url.h: peer URLs (serviceUrl entries, spec §6.1), self detection and the
 * percent-encoding of a path segment.
 * Pure functions: no network, no resolution; deciding whether a host name
 * is local is the caller's (a callback), so tests need no interfaces.
 */
#ifndef URL_H
#define URL_H

struct buf;

/* A parsed peer URL: http://[user:pass@]host[:port]/path/ */
struct peer_url {
	char	*scheme;	/* "http" or "https" */
	char	*userinfo;	/* "user:pass" or NULL */
	char	*host;		/* without [] for IPv6 */
	int	 port;
	char	*path;		/* always ends in '/' */
	char	*display;	/* the URL without userinfo */
};

int		 peer_url_parse(const char *, struct peer_url *, char **cause);
void		 peer_url_clear(struct peer_url *);
/*
 * Is this URL ourselves? With my_url set: exact match (a trailing '/'
 * ignored). Otherwise: is_local(host) and the port equals my_port.
 */
int		 peer_url_is_self(const char *raw, const struct peer_url *,
		     const char *my_url, int my_port,
		     int (*is_local)(const char *, void *), void *);

/* Append s percent-encoded as one path segment (unreserved, ':' and '@' kept). */
void		 url_add_segment(struct buf *, const char *s);

#endif
