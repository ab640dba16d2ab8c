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
 *
 * Which requests are judged. The dashboard authenticates with HTTP Basic,
 * not a cookie, and a browser attaches cached Basic credentials to every
 * request to that origin, a form posted from another site included: the
 * absence of a Cookie header proves nothing, so "judge only requests
 * with a cookie" would let exactly the attack through. What a browser
 * cannot leave out is its own headers: a cross-site write carries Origin
 * (form POSTs in every current browser; CORS requests always),
 * Sec-Fetch-Site (current browsers), or in older browsers at least
 * Referer, unless the page suppressed it (then it looks like curl and
 * nothing on the server can tell it apart). So a write with any of
 * Origin, Sec-Fetch-Site, Referer or X-Heureka-Token is a browser's and
 * is judged; one with none of them (curl, Eureka clients, peers) is not.
 *
 * Cost. Every write passes here, heartbeats included, so the headers are
 * read in one pass (csrf_scan) that compares a name only when its first
 * letter is one of the five the rule reads, where three
 * evhttp_find_header calls walked the list three times with strcasecmp
 * (tests/bench/run callgrind, N=10k: the figures are in NEWS).
 */
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/http.h>
#include <event2/keyvalq_struct.h>
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

/* The headers the rule reads, found in one pass (csrf_scan). */
struct csrf_hdrs {
	const char	*origin;
	const char	*site;		/* Sec-Fetch-Site */
	const char	*referer;
	const char	*token;		/* X-Heureka-Token */
	const char	*host;
};

/*
 * One pass over req's headers: each name is compared only when its first
 * letter is one of the five's. The first of each wins, as
 * hreq_header's would. Whether any browser header was seen.
 */
static int
csrf_scan(struct hreq *req, struct csrf_hdrs *h)
{
	const char		*key, *value;
	const char		**slot;
	size_t			 i;

	memset(h, 0, sizeof *h);
	for (i = 0; hreq_header_at(req, i, &key, &value); i++) {
		switch (key[0]) {
		case 'O': case 'o':
			slot = strcasecmp(key, "Origin") == 0 ?
			    &h->origin : NULL;
			break;
		case 'S': case 's':
			slot = strcasecmp(key, "Sec-Fetch-Site") == 0 ?
			    &h->site : NULL;
			break;
		case 'R': case 'r':
			slot = strcasecmp(key, "Referer") == 0 ?
			    &h->referer : NULL;
			break;
		case 'X': case 'x':
			slot = strcasecmp(key, "X-Heureka-Token") == 0 ?
			    &h->token : NULL;
			break;
		case 'H': case 'h':
			slot = strcasecmp(key, "Host") == 0 ?
			    &h->host : NULL;
			break;
		default:
			slot = NULL;
			break;
		}
		if (slot != NULL && *slot == NULL)
			*slot = value;
	}
	return (h->origin != NULL || h->site != NULL || h->referer != NULL ||
	    h->token != NULL);
}

/* Whether req comes from a browser (csrf.h). */
int
csrf_is_browser(struct hreq *req)
{
	struct csrf_hdrs	h;

	return (csrf_scan(req, &h));
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
	struct csrf_hdrs	 h;
	const char		*origin;
	char			 want[CSRF_TOKEN_LEN + 1];

	switch (hreq_method(req)) {
	case EVHTTP_REQ_GET:
	case EVHTTP_REQ_HEAD:
	case EVHTTP_REQ_OPTIONS:
		return (0);
	default:
		break;
	}
	if (!csrf_scan(req, &h))
		return (0);
	if (!actions) {
		*reason = "dashboard actions are off: authentication is off "
		    "and heureka.dashboard.actions is false";
		return (-1);
	}
	if (h.site != NULL && strcmp(h.site, "same-origin") != 0) {
		*reason = "cross-site request refused (Sec-Fetch-Site is not "
		    "same-origin)";
		return (-1);
	}
	if ((origin = h.origin) == NULL)
		origin = h.referer;
	if (origin != NULL && !csrf_same_host(origin, h.host)) {
		*reason = "cross-origin request refused (its Origin is not "
		    "this server)";
		return (-1);
	}
	csrf_token(c, req, want);
	if (h.token == NULL || strlen(h.token) != CSRF_TOKEN_LEN ||
	    CRYPTO_memcmp(h.token, want, CSRF_TOKEN_LEN) != 0) {
		*reason = "missing or wrong X-Heureka-Token (reload the "
		    "dashboard: the token belongs to the page and its "
		    "credentials)";
		return (-1);
	}
	return (0);
}
