/*
 * httputil.h: evhttp helpers shared by the server (and the CLI): content
 * negotiation as Eureka does it (§3.2: JSON only when Accept contains
 * "json"), bounded body reading (with gzip request bodies inflated), and
 * replies that always set a content type.
 */
#ifndef HTTPUTIL_H
#define HTTPUTIL_H

#include <stddef.h>
#include <stdint.h>

#include <event2/http.h>

#include "buf.h"

int	 http_wants_json(struct evhttp_request *);
int	 http_wants_gzip(struct evhttp_request *);
int	 http_wants_compact(struct evhttp_request *);	/* X-Eureka-Accept */
int	 http_is_replication(struct evhttp_request *);
const char *http_header(struct evhttp_request *, const char *);
/* Where a lower-case word starts in s, ignoring ASCII case, or NULL. */
const char *http_find_word(const char *s, const char *word);

/*
 * Copy the request body into out (NUL-terminated), inflating a gzip
 * Content-Encoding, refusing more than max bytes. Returns 0, or the HTTP
 * status to answer (413, 400) with *cause set.
 */
int	 http_read_body(struct evhttp_request *, size_t max, struct buf *out,
	    const char **cause);
/*
 * The same bytes without the copy, for a decoder that reads them once: a
 * gzip body is inflated into scratch (empty on entry), any other is lent
 * from the request's input buffer, made contiguous (valid while the
 * request is, not NUL-terminated). Same bounds and returns.
 */
int	 http_body_view(struct evhttp_request *, size_t max,
	    struct buf *scratch, const char **data, size_t *len,
	    const char **cause);

/* Reply with a body (copied) and a content type; NULL body = empty. */
void	 http_reply(struct evhttp_request *, int code, const char *ctype,
	    const char *body, size_t len);
/*
 * http_reply() with the headers every operator-facing answer carries (the
 * dashboard, /health, /info, /metrics, StatusInfo): nosniff, a strict CSP,
 * no framing, no referrer, no caching.
 */
void	 http_reply_safe(struct evhttp_request *, int code, const char *ctype,
	    const char *body, size_t len);
/* Reply with a short plain-text reason (error paths). */
void	 http_error(struct evhttp_request *, int code, const char *reason);
const char *http_reason(int code);

/*
 * The Authorization header value ("Basic base64(user:password)") for a
 * URL's userinfo, percent-decoded first as Java's URI.getUserInfo() and
 * node's url module do; a new string, NULL if it does not decode.
 */
char	*http_basic_auth(const char *userinfo);

/* Remove "user:pass@" from a URL for display; returns a new string. */
char	*http_url_scrub(const char *);

/*
 * An HTTP-date in the IMF-fixdate form ("Sun, 06 Nov 1994 08:49:37 GMT",
 * RFC 9110 §5.6.7, the only form a sender may generate) as epoch ms into
 * *ms: 0, or -1 when s is not one.
 */
int	 http_date_parse(const char *s, int64_t *ms);

#endif
