/*
 * httputil.h: HTTP helpers shared by the server and the CLI: a word in a
 * header value, reason phrases, Basic credentials from a URL, URLs
 * scrubbed for display, HTTP-dates.
 */
#ifndef HTTPUTIL_H
#define HTTPUTIL_H

#include <stddef.h>
#include <stdint.h>

/* Where a lower-case word starts in s, ignoring ASCII case, or NULL. */
const char *http_find_word(const char *s, const char *word);

/* The reason phrase of a status heureka sends ("OK", ...). */
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
