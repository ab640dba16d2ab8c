/*
 * endpoints.c: the service URL list the client fails over across, as
 * RetryableEurekaHttpClient keeps it (internal.h): URLs in order, a
 * quarantine of those that failed, cleared once it holds two thirds of
 * them, and which answers of each kind of request end the retry loop
 * (ServerStatusEvaluators), and what each answer or failure means in words
 * (hk_status_str: messages never show a bare status 0).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "xmalloc.h"

#include "internal.h"

/* Split a comma-separated URL list; each URL gets a trailing '/'. */
void
hk_endpoints_init(struct hk_endpoints *ep, const char *list)
{
	char	*copy, *p, *tok, *s;
	size_t	 len;

	memset(ep, 0, sizeof *ep);
	ep->pinned = -1;
	if (list == NULL)
		return;
	copy = xstrdup(list);
	for (p = copy; (tok = strsep(&p, ",")) != NULL;) {
		while (isspace((unsigned char)*tok))
			tok++;
		len = strlen(tok);
		while (len > 0 && isspace((unsigned char)tok[len - 1]))
			tok[--len] = '\0';
		if (len == 0)
			continue;
		if (ep->n == HK_MAX_URLS) {
			log_warnx("heureka: more than %d service URLs, "
			    "ignoring %s", HK_MAX_URLS, tok);
			continue;
		}
		if (tok[len - 1] == '/')
			s = xstrdup(tok);
		else
			xasprintf(&s, "%s/", tok);
		ep->urls[ep->n++] = s;
	}
	free(copy);
}

/* Free the URL strings. */
void
hk_endpoints_clear(struct hk_endpoints *ep)
{
	size_t	i;

	for (i = 0; i < ep->n; i++)
		free(ep->urls[i]);
	memset(ep, 0, sizeof *ep);
	ep->pinned = -1;
}

/*
 * Endpoints to try, in order, skipping quarantined ones; once the quarantine
 * reaches floor(n * 0.66) it is cleared and every endpoint is a candidate
 * again (retryableClientQuarantineRefreshPercentage).
 */
size_t
hk_endpoints_candidates(struct hk_endpoints *ep, int *out)
{
	size_t	i, q = 0, n = 0, threshold;

	for (i = 0; i < ep->n; i++)
		q += ep->quarantined[i];
	threshold = (ep->n * 66) / 100;
	if (q > 0 && q >= threshold) {
		memset(ep->quarantined, 0, sizeof ep->quarantined);
	}
	for (i = 0; i < ep->n; i++) {
		if (!ep->quarantined[i])
			out[n++] = (int)i;
	}
	return (n);
}

/* Quarantine an endpoint that failed; drop it as the pinned one. */
void
hk_endpoints_failed(struct hk_endpoints *ep, int i)
{
	if (i < 0 || (size_t)i >= ep->n)
		return;
	ep->quarantined[i] = 1;
	if (ep->pinned == i)
		ep->pinned = -1;
}

/* ServerStatusEvaluators: which answers end the retry loop. */
int
hk_req_accepted(enum hk_req_kind kind, int status)
{
	if (status <= 0)
		return (0);
	if ((status >= 200 && status < 300) || status == 302)
		return (1);
	switch (kind) {
	case HK_REQ_REGISTER:
	case HK_REQ_HEARTBEAT:
	case HK_REQ_QUERY:
		return (status == 404);
	case HK_REQ_CANCEL:
		return (1);
	case HK_REQ_DELTA:
		return (status == 403 || status == 404);
	case HK_REQ_FULL:
		break;
	}
	return (0);
}

/* Words for the answers a Eureka server gives, and for no answer. */
static const struct {
	int		 status;
	const char	*text;
} hk_status_names[] = {
	{ HK_NET_STATUS(HK_NET_UNKNOWN), "no answer" },
	{ HK_NET_STATUS(HK_NET_REFUSED), "connection refused" },
	{ HK_NET_STATUS(HK_NET_TIMEOUT), "timed out" },
	{ HK_NET_STATUS(HK_NET_DNS), "host name not found (DNS)" },
	{ HK_NET_STATUS(HK_NET_TLS), "TLS verification failed" },
	{ HK_NET_STATUS(HK_NET_HANDSHAKE), "TLS handshake failed" },
	{ HK_NET_STATUS(HK_NET_CLOSED), "connection closed before an answer" },
	{ HK_NET_STATUS(HK_NET_BADURL), "not a usable http(s) URL" },
	{ HK_NET_STATUS(HK_NET_PROTO), "not an HTTP answer" },
	{ HK_NET_STATUS(HK_NET_TOOBIG), "answer too large" },
	{ HK_NET_STATUS(HK_NET_BADBODY), "bad compressed body" },
	{ HK_NET_STATUS(HK_NET_LOCAL), "could not send the request" },
	{ HK_NET_STATUS(HK_NET_NOMEM), "out of memory (not sent; the next "
	    "run retries)" },
	{ 200, "200 OK" },
	{ 204, "204 No Content" },
	{ 302, "302 Found" },
	{ 400, "400 Bad Request" },
	{ 401, "401 Unauthorized" },
	{ 403, "403 Forbidden" },
	{ 404, "404 Not Found" },
	{ 405, "405 Method Not Allowed" },
	{ 409, "409 Conflict" },
	{ 413, "413 Payload Too Large" },
	{ 415, "415 Unsupported Media Type" },
	{ 429, "429 Too Many Requests" },
	{ 500, "500 Internal Server Error" },
	{ 502, "502 Bad Gateway" },
	{ 503, "503 Service Unavailable" },
	{ 504, "504 Gateway Timeout" },
};

/* A request's status in words, never a bare number 0. */
const char *
hk_status_str(int status, char *buf, size_t len)
{
	size_t	i;

	for (i = 0; i < sizeof hk_status_names / sizeof hk_status_names[0];
	    i++) {
		if (hk_status_names[i].status == status)
			return (hk_status_names[i].text);
	}
	if (status > 0)
		snprintf(buf, len, "HTTP %d", status);
	else
		snprintf(buf, len, "no answer (error %d)", -status);
	return (buf);
}
