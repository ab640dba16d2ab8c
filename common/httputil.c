/*
 * httputil.c: small evhttp helpers. Kept free of server state so the CLI
 * and the tests can use them too.
 */
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "clock.h"
#include "gzip.h"
#include "httputil.h"
#include "xmalloc.h"

/* ASCII lower case (evhttp's header names compare so, whatever the locale). */
static inline unsigned char
http_lower(unsigned char c)
{
	return (c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
}

/*
 * A request header, or NULL: the first of that name, ignoring ASCII case,
 * as evhttp_find_header answers, but a name's first byte and length are
 * compared before its bytes (evhttp lowers both names a byte at a time
 * through a call per byte, some 90 instructions a header, and the
 * Content-* names share eight bytes).
 */
const char *
http_header(struct evhttp_request *req, const char *name)
{
	struct evkeyvalq	*h = evhttp_request_get_input_headers(req);
	struct evkeyval		*e;
	const unsigned char	*a, *b = (const unsigned char *)name;
	unsigned char		 c0 = http_lower(b[0]);
	size_t			 n = strlen(name), i;

	TAILQ_FOREACH(e, h, next) {
		a = (const unsigned char *)e->key;
		if (http_lower(a[0]) != c0 || strlen(e->key) != n)
			continue;
		for (i = 1; i < n && http_lower(a[i]) == http_lower(b[i]); i++)
			;
		if (i >= n)
			return (e->value);
	}
	return (NULL);
}

/*
 * Where word (lower case, not empty) first starts in s, ignoring ASCII
 * case; NULL if nowhere. For header values: strcasestr's set-up costs
 * more than such a short search.
 */
const char *
http_find_word(const char *s, const char *word)
{
	size_t	i;

	for (; *s != '\0'; s++) {
		if (http_lower((unsigned char)*s) != (unsigned char)word[0])
			continue;
		for (i = 1; word[i] != '\0' &&
		    http_lower((unsigned char)s[i]) == (unsigned char)word[i]; i++)
			;
		if (word[i] == '\0')
			return (s);
	}
	return (NULL);
}

/* Eureka's rule: JSON when Accept contains "json", XML otherwise. */
int
http_wants_json(struct evhttp_request *req)
{
	const char	*a = http_header(req, "Accept");

	return (a != NULL && http_find_word(a, "json") != NULL);
}

/* Accept-Encoding mentions gzip. */
int
http_wants_gzip(struct evhttp_request *req)
{
	const char	*a = http_header(req, "Accept-Encoding");

	return (a != NULL && http_find_word(a, "gzip") != NULL);
}

/* X-Eureka-Accept: compact (case-insensitive; anything else is full). */
int
http_wants_compact(struct evhttp_request *req)
{
	const char	*a = http_header(req, "X-Eureka-Accept");

	return (a != NULL && strcasecmp(a, "compact") == 0);
}

/* Exactly "true" in x-netflix-discovery-replication marks a peer's call. */
int
http_is_replication(struct evhttp_request *req)
{
	const char	*a = http_header(req, "x-netflix-discovery-replication");

	return (a != NULL && strcmp(a, "true") == 0);
}

/* The body's bytes, inflated into scratch or lent, bounded by max. */
int
http_body_view(struct evhttp_request *req, size_t max, struct buf *scratch,
    const char **data, size_t *datalen, const char **cause)
{
	struct evbuffer	*in = evhttp_request_get_input_buffer(req);
	size_t		 len = evbuffer_get_length(in);
	const char	*enc = http_header(req, "Content-Encoding");
	unsigned char	*p;
	int		 rc;

	if (len > max) {
		*cause = "request body too large";
		return (413);
	}
	p = evbuffer_pullup(in, -1);
	if (enc != NULL && strcasecmp(enc, "gzip") == 0) {
		if ((rc = gzip_inflate((const char *)p, len, scratch,
		    max)) != 0) {
			*cause = rc == GZIP_ERR_TOO_BIG ?
			    "request body too large" :
			    "cannot inflate gzip request body";
			return (rc == GZIP_ERR_TOO_BIG ? 413 : 400);
		}
		*data = scratch->data;
		*datalen = scratch->len;
		return (0);
	}
	if (enc != NULL && strcasecmp(enc, "identity") != 0) {
		*cause = "unsupported Content-Encoding";
		return (415);
	}
	*data = (const char *)p;
	*datalen = len;
	return (0);
}

/* Read the body into out, inflating gzip, bounded by max. */
int
http_read_body(struct evhttp_request *req, size_t max, struct buf *out,
    const char **cause)
{
	const char	*data;
	size_t		 len;
	int		 rc;

	if ((rc = http_body_view(req, max, out, &data, &len, cause)) != 0)
		return (rc);
	/* An inflated body is in out already; a lent one is copied. */
	if (data != out->data || len == 0)
		buf_add(out, data, len);
	return (0);
}

/*
 * The Date header's value for this second (RFC 9110 IMF-fixdate, the
 * text evhttp would write), formatted once per second and thread rather
 * than by evhttp for every reply.
 */
static const char *
http_date(void)
{
	static const char *const	 wday[] = { "Sun", "Mon", "Tue", "Wed",
	    "Thu", "Fri", "Sat" };
	static const char *const	 mon[] = { "Jan", "Feb", "Mar", "Apr",
	    "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
	static _Thread_local char	 buf[32];
	static _Thread_local time_t	 last = -1;
	struct tm			 tm;
	time_t				 t = (time_t)(clock_wall_ms() / 1000);

	if (t != last && gmtime_r(&t, &tm) != NULL) {
		snprintf(buf, sizeof buf, "%s, %02d %s %d %02d:%02d:%02d GMT",
		    wday[tm.tm_wday], tm.tm_mday, mon[tm.tm_mon],
		    tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
		last = t;
	}
	return (buf[0] != '\0' ? buf : NULL);
}

/* Send a complete reply. */
void
http_reply(struct evhttp_request *req, int code, const char *ctype,
    const char *body, size_t len)
{
	struct evkeyvalq	*h = evhttp_request_get_output_headers(req);
	struct evbuffer		*b = NULL;
	const char		*date;

	if ((date = http_date()) != NULL &&
	    evhttp_find_header(h, "Date") == NULL)
		evhttp_add_header(h, "Date", date);
	if (ctype != NULL)
		evhttp_add_header(h, "Content-Type", ctype);
	if (body != NULL && len > 0) {
		b = evbuffer_new();
		evbuffer_add(b, body, len);
	}
	evhttp_send_reply(req, code, http_reason(code), b);
	if (b != NULL)
		evbuffer_free(b);
}

/*
 * The dashboard's policy: its own script, styles and feeds only, no
 * inline script, no plugins, never framed.
 */
#define HTTP_SAFE_CSP	"default-src 'self'; script-src 'self'; " \
	"style-src 'self'; img-src 'self' data:; connect-src 'self'; " \
	"object-src 'none'; base-uri 'none'; form-action 'self'; " \
	"frame-ancestors 'none'"

/* A complete reply with the safety headers of operator-facing pages. */
void
http_reply_safe(struct evhttp_request *req, int code, const char *ctype,
    const char *body, size_t len)
{
	struct evkeyvalq	*h = evhttp_request_get_output_headers(req);

	evhttp_add_header(h, "X-Content-Type-Options", "nosniff");
	evhttp_add_header(h, "Content-Security-Policy", HTTP_SAFE_CSP);
	evhttp_add_header(h, "X-Frame-Options", "DENY");
	evhttp_add_header(h, "Referrer-Policy", "no-referrer");
	evhttp_add_header(h, "Cache-Control", "no-store");
	http_reply(req, code, ctype, body, len);
}

/* Plain-text error with a short reason on its own line. */
void
http_error(struct evhttp_request *req, int code, const char *reason)
{
	char	*s;
	int	 n;

	n = xasprintf(&s, "%s\n", reason);
	http_reply(req, code, "text/plain; charset=utf-8", s, (size_t)n);
	free(s);
}

/* Reason phrase for the codes heureka sends. */
const char *
http_reason(int code)
{
	switch (code) {
	case 200: return ("OK");
	case 204: return ("No Content");
	case 307: return ("Temporary Redirect");
	case 400: return ("Bad Request");
	case 403: return ("Forbidden");
	case 404: return ("Not Found");
	case 405: return ("Method Not Allowed");
	case 406: return ("Not Acceptable");
	case 409: return ("Conflict");
	case 413: return ("Payload Too Large");
	case 415: return ("Unsupported Media Type");
	case 429: return ("Too Many Requests");
	case 500: return ("Internal Server Error");
	case 503: return ("Service Unavailable");
	default: return ("Unknown");
	}
}

/* "http://u:p@h:1/x" -> "http://h:1/x": never show credentials. */
char *
http_url_scrub(const char *url)
{
	const char	*scheme, *at = NULL, *p, *end;
	char		*out;

	if ((scheme = strstr(url, "://")) == NULL)
		return (xstrdup(url));
	scheme += 3;
	/* The last '@' of the authority: a password may hold '@'. */
	end = scheme + strcspn(scheme, "/?#");
	for (p = scheme; p < end; p++)
		if (*p == '@')
			at = p;
	if (at == NULL)
		return (xstrdup(url));
	xasprintf(&out, "%.*s%s", (int)(scheme - url), url, at + 1);
	return (out);
}

/* "Basic base64(percent-decoded userinfo)"; NULL if undecodable. */
char *
http_basic_auth(const char *userinfo)
{
	char		*dec, *s;
	unsigned char	*out;
	size_t		 len = 0;

	if ((dec = evhttp_uridecode(userinfo, 0, &len)) == NULL)
		return (NULL);
	if (strlen(dec) != len) {
		free(dec);
		return (NULL);
	}
	out = xmalloc(4 * ((len + 2) / 3) + 1);
	EVP_EncodeBlock(out, (const unsigned char *)dec, (int)len);
	xasprintf(&s, "Basic %s", out);
	OPENSSL_cleanse(dec, len);
	free(dec);
	free(out);
	return (s);
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian, m 1..12). */
static int64_t
http_days_from_civil(int64_t y, int m, int d)
{
	int64_t		era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return (era * 146097 + doe - 719468);
}

/* An IMF-fixdate (httputil.h). */
int
http_date_parse(const char *s, int64_t *ms)
{
	static const char	 mons[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
	char			 wd[4], mon[4], zone[4];
	const char		*p;
	int			 d, y, hh, mm, ss, n = 0;

	if (s == NULL || sscanf(s, "%3[A-Za-z], %2d %3[A-Za-z] %4d "
	    "%2d:%2d:%2d %3s%n", wd, &d, mon, &y, &hh, &mm, &ss, zone,
	    &n) != 8 || s[n] != '\0' || strcmp(zone, "GMT") != 0 ||
	    strlen(mon) != 3 || (p = strstr(mons, mon)) == NULL ||
	    (p - mons) % 3 != 0 || d < 1 || d > 31 || y < 1970 ||
	    hh > 23 || mm > 59 || ss > 60 || hh < 0 || mm < 0 || ss < 0)
		return (-1);
	*ms = ((http_days_from_civil(y, (int)(p - mons) / 3 + 1, d) * 24 +
	    hh) * 60 + mm) * 60000 + (int64_t)ss * 1000;
	return (0);
}
