/*
 * csrf.c: the token and the same-origin rule (csrf.h). The token is the
 * first 16 bytes of HMAC-SHA256(secret, credentials), hex: a page served
 * to one set of credentials cannot be replayed with another, a restart
 * (a new secret) makes pages reload their token, and nothing is stored
 * per session. Compared in constant time (CRYPTO_memcmp).
 *
 * The Origin and Sec-Fetch-Site checks follow the Fetch standard's
 * headers (browsers send Origin on every cross-origin request and on
 * same-origin ones other than GET/HEAD; Sec-Fetch-Site says
 * "same-origin", "same-site", "cross-site" or "none"). A plain HTML form
 * posted from another site carries Origin (or, in old browsers, Referer)
 * and no token: refused either way.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/http.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "csrf.h"
#include "http.h"
#include "httputil.h"
#include "xmalloc.h"

struct csrf {
	unsigned char	 secret[32];
};

/* A secret for this process. */
struct csrf *
csrf_new(void)
{
	struct csrf	*c = xcalloc(1, sizeof *c);

	if (RAND_bytes(c->secret, sizeof c->secret) != 1)
		arc4random_buf(c->secret, sizeof c->secret);
	return (c);
}

/* Forget the secret. */
void
csrf_free(struct csrf *c)
{
	if (c == NULL)
		return;
	OPENSSL_cleanse(c->secret, sizeof c->secret);
	free(c);
}

/* The token for req's credentials (csrf.h). */
void
csrf_token(const struct csrf *c, struct hreq *req, char *out)
{
	const char	*cred = hreq_header(req, "Authorization");
	unsigned char	 mac[EVP_MAX_MD_SIZE];
	unsigned int	 len = 0;
	size_t		 i;

	if (cred == NULL)
		cred = "-";
	HMAC(EVP_sha256(), c->secret, sizeof c->secret,
	    (const unsigned char *)cred, strlen(cred), mac, &len);
	for (i = 0; i < CSRF_TOKEN_LEN / 2 && i < len; i++)
		snprintf(out + 2 * i, 3, "%02x", mac[i]);
	out[CSRF_TOKEN_LEN] = '\0';
}

/* Whether req comes from a browser (csrf.h). */
int
csrf_is_browser(struct hreq *req)
{
	return (hreq_header(req, "Origin") != NULL ||
	    hreq_header(req, "Sec-Fetch-Site") != NULL ||
	    hreq_header(req, "X-Heureka-Token") != NULL);
}

/*
 * Whether url ("scheme://host[:port]/...") names host (the Host header:
 * "host[:port]"). Origin "null" (sandboxed, file:) names nothing.
 */
static int
csrf_same_host(const char *url, const char *host)
{
	const char	*p;
	size_t		 n;

	if (host == NULL || (p = strstr(url, "://")) == NULL)
		return (0);
	p += 3;
	n = strcspn(p, "/?#");
	return (n == strlen(host) && strncasecmp(p, host, n) == 0);
}

/* Judge a write (csrf.h). */
int
csrf_check(const struct csrf *c, struct hreq *req, int actions,
    const char **reason)
{
	const char	*origin, *site, *token, *host;
	char		 want[CSRF_TOKEN_LEN + 1];

	switch (hreq_method(req)) {
	case EVHTTP_REQ_GET:
	case EVHTTP_REQ_HEAD:
	case EVHTTP_REQ_OPTIONS:
		return (0);
	default:
		break;
	}
	if (!csrf_is_browser(req))
		return (0);
	if (!actions) {
		*reason = "dashboard actions are off: authentication is off "
		    "and heureka.dashboard.actions is false";
		return (-1);
	}
	host = hreq_header(req, "Host");
	site = hreq_header(req, "Sec-Fetch-Site");
	if (site != NULL && strcmp(site, "same-origin") != 0) {
		*reason = "cross-site request refused (Sec-Fetch-Site is not "
		    "same-origin)";
		return (-1);
	}
	if ((origin = hreq_header(req, "Origin")) == NULL)
		origin = hreq_header(req, "Referer");
	if (origin != NULL && !csrf_same_host(origin, host)) {
		*reason = "cross-origin request refused (its Origin is not "
		    "this server)";
		return (-1);
	}
	csrf_token(c, req, want);
	token = hreq_header(req, "X-Heureka-Token");
	if (token == NULL || strlen(token) != CSRF_TOKEN_LEN ||
	    CRYPTO_memcmp(token, want, CSRF_TOKEN_LEN) != 0) {
		*reason = "missing or wrong X-Heureka-Token (reload the "
		    "dashboard: the token belongs to the page and its "
		    "credentials)";
		return (-1);
	}
	return (0);
}
