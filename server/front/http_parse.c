/*
 * http_parse.c: the one parser of incoming request heads (http.h).
 *
 * Why one: requests used to be parsed twice, by the header-time guard
 * (guard.c, which checked a head strictly before evhttp saw it) and then
 * by evhttp, which copied every header into a list of its own; two
 * parsers of one request must agree on every byte (a disagreement on
 * where a body ends is request smuggling), and evhttp's copies were a
 * third of a heartbeat's CPU samples (issue 27). This is guard.c's parser
 * grown into the only one: it checks the head in place and points into
 * it, with no allocation (the headers go into the caller's array): about
 * 1,500 instructions for a heartbeat's five-line head under callgrind,
 * where evhttp's parse and header lists and the guard's second parse
 * were most of a heartbeat's 36.7k.
 *
 * The checks, all before any body byte is read: a request line and
 * header lines of the RFC 9110/9112 shapes (no control characters, so no
 * NUL that would cut a value in a C string; no obsolete line folding),
 * one Content-Length of plain digits (two different values, "+586" or
 * "5, 5" are refused), Transfer-Encoding only "chunked" and never with
 * Content-Length, and no X-Heureka-Guard (the old guard's verdict
 * header). Values are trimmed as evhttp trimmed them (spaces in front,
 * spaces and tabs behind), so that handlers see what they saw before;
 * the differential test (tests/diff) holds the two to the same answers.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http.h"

static const struct {
	const char	*name;
	size_t		 len;
	int		 method;
} http_methods[] = {
	{ "GET", 3, EVHTTP_REQ_GET },
	{ "POST", 4, EVHTTP_REQ_POST },
	{ "HEAD", 4, EVHTTP_REQ_HEAD },
	{ "PUT", 3, EVHTTP_REQ_PUT },
	{ "DELETE", 6, EVHTTP_REQ_DELETE },
	{ "OPTIONS", 7, EVHTTP_REQ_OPTIONS },
	{ "TRACE", 5, EVHTTP_REQ_TRACE },
	{ "CONNECT", 7, EVHTTP_REQ_CONNECT },
	{ "PATCH", 5, EVHTTP_REQ_PATCH },
};

/* The RFC 9110 token characters, by byte. */
static const unsigned char http_tchars[256] = {
	['0' ... '9'] = 1, ['A' ... 'Z'] = 1, ['a' ... 'z'] = 1,
	['!'] = 1, ['#'] = 1, ['$'] = 1, ['%'] = 1, ['&'] = 1, ['\''] = 1,
	['*'] = 1, ['+'] = 1, ['-'] = 1, ['.'] = 1, ['^'] = 1, ['_'] = 1,
	['`'] = 1, ['|'] = 1, ['~'] = 1,
};

/* Whether the n bytes at p are the literal name, ignoring case. */
#define http_is(p, n, name)						\
	((n) == sizeof(name) - 1 && strncasecmp((p), (name), (n)) == 0)

/*
 * Whether the vn bytes at v hold a control character other than a tab
 * (or DEL), eight at a time: a word with no byte below 0x20 (borrow test)
 * and none equal to 0x7f (zero test of the word xor 0x7f) is clean; one
 * that is not is looked at byte by byte (tabs are allowed).
 */
static int
http_has_ctl(const char *v, size_t vn)
{
	const uint64_t	ones = 0x0101010101010101ULL, high = ones << 7;
	uint64_t	w, d;
	size_t		i = 0, j;
	unsigned char	c;

	for (; i + 8 <= vn; i += 8) {
		memcpy(&w, v + i, sizeof w);
		d = w ^ (ones * 0x7f);
		if (!((((w - ones * 0x20) & ~w) | ((d - ones) & ~d)) & high))
			continue;
		for (j = i; j < i + 8; j++) {
			c = (unsigned char)v[j];
			if ((c < 0x20 && c != '\t') || c == 0x7f)
				return (1);
		}
	}
	for (; i < vn; i++) {
		c = (unsigned char)v[i];
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return (1);
	}
	return (0);
}

/* The request line: METHOD SP target SP HTTP/1.x; 0 or 400. */
static int
http_request_line(char *p, size_t n, struct hhead *h, const char **reason)
{
	size_t	i = 0, m, t, k;

	*reason = "malformed request line";
	while (i < n && http_tchars[(unsigned char)p[i]])
		i++;
	m = i;
	if (m == 0 || m > 16 || i == n || p[i] != ' ')
		return (400);
	t = ++i;
	/* Raw UTF-8 is left to the router, which checks it decoded. */
	while (i < n && (unsigned char)p[i] > 0x20 && (unsigned char)p[i] != 0x7f)
		i++;
	if (i == t || i == n || p[i] != ' ')
		return (400);
	h->target = p + t;
	h->target_len = i - t;
	i++;
	if (n - i != 8 || (memcmp(p + i, "HTTP/1.0", 8) != 0 &&
	    memcmp(p + i, "HTTP/1.1", 8) != 0)) {
		*reason = "unsupported HTTP version (HTTP/1.0 or 1.1 only)";
		return (400);
	}
	h->minor = p[i + 7] - '0';
	for (k = 0; k < sizeof http_methods / sizeof http_methods[0]; k++) {
		if (http_methods[k].len == m &&
		    memcmp(p, http_methods[k].name, m) == 0)
			h->method = http_methods[k].method;
	}
	p[m] = '\0';
	p[t + h->target_len] = '\0';
	h->method_name = p;
	return (0);
}

/* The framing headers and Expect; 0 or 400. */
static int
http_framing(const char *p, size_t n, const char *v, size_t vn,
    struct hhead *h, const char **reason)
{
	int64_t	cl;
	size_t	i;

	if (http_is(p, n, "Content-Length")) {
		for (cl = 0, i = 0; i < vn && vn <= 18; i++) {
			if (v[i] < '0' || v[i] > '9')
				break;
			cl = cl * 10 + (v[i] - '0');
		}
		if (vn == 0 || vn > 18 || i < vn) {
			*reason = "invalid Content-Length (digits only)";
			return (400);
		}
		if (h->content_length >= 0 && h->content_length != cl) {
			*reason = "conflicting Content-Length headers";
			return (400);
		}
		h->content_length = cl;
	} else if (http_is(p, n, "Transfer-Encoding")) {
		if (h->chunked || !http_is(v, vn, "chunked")) {
			*reason = "unsupported Transfer-Encoding (chunked only, "
			    "once)";
			return (400);
		}
		h->chunked = 1;
	} else if (http_is(p, n, "Expect")) {
		/* evhttp judged the first Expect only. */
		if (h->expect == 0)
			h->expect = http_is(v, vn, "100-continue") ? 1 : 2;
	} else if (http_is(p, n, HTTP_RESERVED_HEADER)) {
		*reason = "reserved header " HTTP_RESERVED_HEADER;
		return (400);
	}
	return (0);
}

/* One header line (without its EOL); 0 or 400. */
static int
http_header_line(char *p, size_t n, struct hhead *h, size_t maxhdrs,
    const char **reason)
{
	char	*v;
	size_t	 i = 0, vn, nn;
	int	 rc;

	if (p[0] == ' ' || p[0] == '\t') {
		*reason = "obsolete line folding in the headers";
		return (400);
	}
	while (i < n && http_tchars[(unsigned char)p[i]])
		i++;
	if (i == 0 || i == n || p[i] != ':') {
		*reason = "malformed header line";
		return (400);
	}
	nn = i;
	v = p + i + 1;
	vn = n - i - 1;
	if (http_has_ctl(v, vn)) {
		*reason = "control character in a header value";
		return (400);
	}
	/* evhttp trimmed spaces, not tabs, in front: never let them differ. */
	if ((http_is(p, nn, "Content-Length") ||
	    http_is(p, nn, "Transfer-Encoding")) && memchr(v, '\t', vn) != NULL) {
		*reason = "tab in a framing header";
		return (400);
	}
	while (vn > 0 && *v == ' ') {
		v++;
		vn--;
	}
	while (vn > 0 && (v[vn - 1] == ' ' || v[vn - 1] == '\t'))
		vn--;
	if ((rc = http_framing(p, nn, v, vn, h, reason)) != 0)
		return (rc);
	if (h->nhdrs >= maxhdrs) {
		*reason = "too many header fields";
		return (431);
	}
	/* There is at least the EOL after the value: room for the NUL. */
	p[nn] = '\0';
	v[vn] = '\0';
	h->hdrs[h->nhdrs].name = p;
	h->hdrs[h->nhdrs].name_len = nn;
	h->hdrs[h->nhdrs].value = v;
	h->nhdrs++;
	return (0);
}

/* Lines in a head; see http.h. */
size_t
http_head_lines(const char *p, size_t len)
{
	const char	*end = p + len, *q;
	size_t		 n = 0;

	for (; p < end && (q = memchr(p, '\n', (size_t)(end - p))) != NULL;
	    p = q + 1)
		n++;
	return (n);
}

/* Parse one request head in place; see http.h. */
int
http_parse_head(char *p, size_t len, struct hhead *h, struct hhdr *hdrs,
    size_t maxhdrs, const char **reason)
{
	char	*end = p + len, *q, *eol;
	size_t	 n;
	int	 rc, first = 1;

	memset(h, 0, sizeof *h);
	h->content_length = -1;
	h->hdrs = hdrs;
	for (q = p; q < end; q = eol + 1) {
		if ((eol = memchr(q, '\n', (size_t)(end - q))) == NULL)
			break;
		n = (size_t)(eol - q);
		if (n > 0 && q[n - 1] == '\r')
			n--;
		if (first) {
			if ((rc = http_request_line(q, n, h, reason)) != 0)
				return (rc);
			first = 0;
			continue;
		}
		if (n == 0) {
			if (eol + 1 != end)
				break;
			if (h->chunked && h->content_length >= 0) {
				*reason = "both Content-Length and "
				    "Transfer-Encoding";
				return (400);
			}
			return (0);
		}
		if ((rc = http_header_line(q, n, h, maxhdrs, reason)) != 0)
			return (rc);
	}
	*reason = "malformed request head";
	return (400);
}

/*
 * The path of a target, as evhttp's non-conformant URI parse read it:
 * origin-form ("/p?q#f"): what is before '?' or '#'; absolute-form
 * ("http://host:1/p?q"): the same after the authority; "//host/p" has an
 * authority too; anything else ("*", "p") is all path up to '?' or '#'.
 */
int
http_target_split(const char *t, size_t n, char *out, const char **query,
    size_t *querylen)
{
	size_t	i = 0, s, e, q;

	/* A scheme: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":". */
	if (n > 0 && ((t[0] | 0x20) >= 'a' && (t[0] | 0x20) <= 'z')) {
		for (s = 1; s < n && (((t[s] | 0x20) >= 'a' &&
		    (t[s] | 0x20) <= 'z') || (t[s] >= '0' && t[s] <= '9') ||
		    t[s] == '+' || t[s] == '-' || t[s] == '.'); s++)
			;
		if (s < n && t[s] == ':')
			i = s + 1;
	}
	if (n - i >= 2 && t[i] == '/' && t[i + 1] == '/') {
		/* The authority ends at the path, query or fragment. */
		for (i += 2; i < n && t[i] != '/' && t[i] != '?' &&
		    t[i] != '#'; i++)
			;
	}
	for (e = i; e < n && t[e] != '?' && t[e] != '#'; e++)
		;
	memcpy(out, t + i, e - i);
	out[e - i] = '\0';
	*query = NULL;
	*querylen = 0;
	if (e < n && t[e] == '?') {
		for (q = e + 1; q < n && t[q] != '#'; q++)
			;
		*query = t + e + 1;
		*querylen = q - e - 1;
	}
	return (0);
}

/* A hex digit's value, -1 if it is none. */
static inline int
http_hex(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return (c - '0');
	c |= 0x20;
	if (c >= 'a' && c <= 'f')
		return (c - 'a' + 10);
	return (-1);
}

/* Decode %XX (and '+'); see http.h. */
size_t
http_decode(const char *s, size_t n, int plus, char *out)
{
	size_t	i, o = 0;
	int	hi, lo;

	for (i = 0; i < n; i++) {
		if (plus && s[i] == '+')
			out[o++] = ' ';
		else if (s[i] == '%' && i + 2 < n &&
		    (hi = http_hex((unsigned char)s[i + 1])) >= 0 &&
		    (lo = http_hex((unsigned char)s[i + 2])) >= 0) {
			out[o++] = (char)(hi * 16 + lo);
			i += 2;
		} else
			out[o++] = s[i];
	}
	out[o] = '\0';
	return (o);
}

/* The first value of a query parameter; see http.h. */
const char *
hquery_get(const struct hquery *q, const char *name)
{
	size_t	i;

	for (i = 0; i < q->n; i++)
		if (strcmp(q->kv[i].key, name) == 0)
			return (q->kv[i].value);
	return (NULL);
}

/* A decimal int64 query parameter; see http.h. */
int
hquery_i64(const struct hquery *q, const char *name, int64_t *out)
{
	const char	*v = hquery_get(q, name);
	char		*end;
	long long	 n;

	if (v == NULL || *v == '\0')
		return (0);
	errno = 0;
	n = strtoll(v, &end, 10);
	if (errno != 0 || *end != '\0')
		return (-1);
	*out = n;
	return (1);
}
