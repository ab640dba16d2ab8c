/*
 * httputil.c: small HTTP helpers. Kept free of server state so the CLI
 * and the tests can use them too. The evhttp request helpers (headers,
 * bodies, replies) went with evhttp's server side: server/front/http_*.c
 * has them for its own struct hreq.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/http.h>	/* evhttp_uridecode */
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "httputil.h"
#include "xmalloc.h"

/* ASCII lower case (header names compare so, whatever the locale). */
static inline unsigned char
http_lower(unsigned char c)
{
	return (c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
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
