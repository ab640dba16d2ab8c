/*
 * guard.c: the header-time request guard (see guard.h). A callback on
 * each connection's socket input buffer, which runs before the
 * bufferevent hands the bytes to evhttp, takes them out of evhttp's sight
 * and holds a request's bytes until its whole head has arrived (at most
 * GUARD_HEAD_MAX), checks the head, and then either hands head and body
 * on to evhttp unchanged, framing the body itself (Content-Length or
 * chunked) so that it finds the next head, or refuses the request: evhttp
 * then gets a bodiless stand-in with the verdict, answers it through
 * rest_reject() and closes the connection, and the refused body is never
 * read from the socket.
 *
 * The checks, all before any body byte is buffered: a request line and
 * header lines of the RFC 9110/9112 shapes (no control characters, so no
 * NUL that evhttp's C strings would cut a value at; no obsolete line
 * folding), one Content-Length of plain digits (two different values,
 * "+586" or "5, 5" are refused: each would let two parsers disagree on
 * where the body ends), Transfer-Encoding only "chunked" and never with
 * Content-Length, and a body only where a route takes one and no larger
 * than that route's cap (eureka.server.max-body-bytes for a registration,
 * eureka.server.max-batch-bytes for a replication batch; everything else
 * takes none). Expect: 100-continue is answered by that verdict too, so a
 * client told 413 never sends the body. A chunked body that outgrows its
 * cap is cut with a framing error, which evhttp answers 413.
 *
 * Everything the guard lets through, evhttp parses the same way: it never
 * passes a head whose framing evhttp could read differently.
 *
 * Deadlines (issue 21: one byte every 20 s kept a TLS or plain
 * connection open for minutes, since evhttp's timeout restarts on every
 * read): a TLS handshake must finish within heureka.server.handshake-
 * timeout-ms of the accept, and a request head must arrive whole within
 * heureka.server.head-timeout-ms, the first from the accept, a later one
 * from its first byte. One timer per connection. A connection that
 * misses its deadline before any request reached evhttp is closed at
 * once; one with requests behind it gets a 408 stand-in, which evhttp
 * answers after them before closing. Each is counted in /metrics.
 *
 * Why an input-buffer callback and not a bufferevent filter: libevent
 * 2.1's filter calls evhttp's write callback once a reply has moved into
 * the socket's buffer, not once it is written, so evhttp would close a
 * "Connection: close" connection (every refusal) with the reply unsent;
 * and it does not flush a reply queued while writing was disabled.
 */
#include <sys/queue.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>

#include "clock.h"
#include "guard.h"
#include "log.h"
#include "httputil.h"
#include "metrics.h"
#include "rest.h"
#include "xmalloc.h"

#define CHUNK_LINE_MAX	256
#define GUARD_PATH_INLINE 1024	/* a target's path decided without a parse */

/* Where a connection's byte stream is. */
enum guard_state {
	G_HEAD,			/* waiting for a whole request head */
	G_BODY,			/* Content-Length bytes left to pass */
	G_CHUNK_SIZE,		/* a chunk-size line */
	G_CHUNK_DATA,		/* chunk bytes left to pass */
	G_CHUNK_END,		/* the CRLF after a chunk's data */
	G_TRAILER,		/* the empty line after the last chunk */
	G_CLOSED,		/* refused: drop everything */
};

/* One connection's guard. */
struct guard {
	enum guard_state	 state;
	size_t			 scanned;	/* G_HEAD: bytes searched */
	size_t			 line_start;	/* G_HEAD: current line */
	uint64_t		 left;		/* G_BODY, G_CHUNK_DATA */
	uint64_t		 total;		/* chunked: body so far */
	uint64_t		 cap;		/* chunked: this body's cap */
	enum rest_body		 body;		/* chunked: what it is */
	char			 reason[160];
	struct evbuffer		*held;		/* read, not yet passed on */
	struct evbuffer_cb_entry *ent;
	int			 busy;
	struct bufferevent	*bev;
	struct event		*timer;		/* the deadline */
	int64_t			 accepted;	/* monotonic ms */
	int64_t			 head_since;	/* a head pending since; -1 */
	uint64_t		 heads;		/* passed on to evhttp */
	int			 tls;
	int			 handshaken;
	LIST_ENTRY(guard)	 entry;		/* guard_all */
};

/* Every guarded connection, for guard_busy() (at most max-connections). */
static LIST_HEAD(, guard) guard_all = LIST_HEAD_INITIALIZER(guard_all);

/*
 * What the guard checks against (one listener per process, as for the
 * accept pause in server.c).
 */
static struct guard_conf	guard_conf;
static struct log_ratelim	guard_timeout_rl = LOG_RATELIM_INIT(60000, 1);

static const struct {
	const char	*name;
	size_t		 len;
	int		 method;
} guard_methods[] = {
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

/* The RFC 9110 token characters, by byte (a lookup a byte of a name). */
static const unsigned char guard_tchars[256] = {
	['0' ... '9'] = 1, ['A' ... 'Z'] = 1, ['a' ... 'z'] = 1,
	['!'] = 1, ['#'] = 1, ['$'] = 1, ['%'] = 1, ['&'] = 1, ['\''] = 1,
	['*'] = 1, ['+'] = 1, ['-'] = 1, ['.'] = 1, ['^'] = 1, ['_'] = 1,
	['`'] = 1, ['|'] = 1, ['~'] = 1,
};

/* An RFC 9110 token character. */
static inline int
guard_tchar(unsigned char c)
{
	return (guard_tchars[c]);
}

/* Whether the n bytes at p are the literal name, ignoring case. */
#define guard_is(p, n, name)						\
	((n) == sizeof(name) - 1 && strncasecmp((p), (name), (n)) == 0)

/*
 * Whether the vn bytes at v hold a control character other than a tab
 * (or DEL), eight at a time: a word with no byte below 0x20 (borrow test)
 * and none equal to 0x7f (zero test of the word xor 0x7f) is clean; one
 * that is not is looked at byte by byte (tabs are allowed).
 */
static int
guard_has_ctl(const char *v, size_t vn)
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
guard_request_line(const char *p, size_t n, struct guard_head *h,
    const char **reason)
{
	size_t	i = 0, m, t, k;

	*reason = "malformed request line";
	while (i < n && guard_tchar((unsigned char)p[i]))
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
	for (k = 0; k < sizeof guard_methods / sizeof guard_methods[0]; k++) {
		if (guard_methods[k].len == m &&
		    memcmp(p, guard_methods[k].name, m) == 0)
			h->method = guard_methods[k].method;
	}
	h->line = p;
	h->line_len = n;
	return (0);
}

/* One header line (without its EOL); 0 or 400. */
static int
guard_header_line(const char *p, size_t n, struct guard_head *h,
    const char **reason)
{
	const char	*v;
	size_t		 i = 0, vn;
	int64_t		 cl;

	if (p[0] == ' ' || p[0] == '\t') {
		*reason = "obsolete line folding in the headers";
		return (400);
	}
	while (i < n && guard_tchar((unsigned char)p[i]))
		i++;
	if (i == 0 || i == n || p[i] != ':') {
		*reason = "malformed header line";
		return (400);
	}
	v = p + i + 1;
	vn = n - i - 1;
	if (guard_has_ctl(v, vn)) {
		*reason = "control character in a header value";
		return (400);
	}
	n = (size_t)(v - 1 - p);
	/* evhttp trims spaces, not tabs, in front: never let them differ. */
	if (guard_is(p, n, "Content-Length") ||
	    guard_is(p, n, "Transfer-Encoding")) {
		if (memchr(v, '\t', vn) != NULL) {
			*reason = "tab in a framing header";
			return (400);
		}
	}
	while (vn > 0 && (*v == ' ' || *v == '\t')) {
		v++;
		vn--;
	}
	while (vn > 0 && (v[vn - 1] == ' ' || v[vn - 1] == '\t'))
		vn--;
	if (guard_is(p, n, "Content-Length")) {
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
	} else if (guard_is(p, n, "Transfer-Encoding")) {
		if (h->chunked || !guard_is(v, vn, "chunked")) {
			*reason = "unsupported Transfer-Encoding (chunked only, "
			    "once)";
			return (400);
		}
		h->chunked = 1;
	} else if (guard_is(p, n, "Expect")) {
		if (guard_is(v, vn, "100-continue"))
			h->expect_continue = 1;
	} else if (guard_is(p, n, GUARD_HEADER)) {
		*reason = "reserved header " GUARD_HEADER;
		return (400);
	}
	return (0);
}

/* Check one request head; see guard.h. */
int
guard_parse_head(const char *p, size_t len, struct guard_head *h,
    const char **reason)
{
	const char	*end = p + len, *q, *eol;
	size_t		 n;
	int		 rc, first = 1;

	memset(h, 0, sizeof *h);
	h->content_length = -1;
	for (q = p; q < end; q = eol + 1) {
		if ((eol = memchr(q, '\n', (size_t)(end - q))) == NULL)
			break;
		n = (size_t)(eol - q);
		if (n > 0 && q[n - 1] == '\r')
			n--;
		if (first) {
			if ((rc = guard_request_line(q, n, h, reason)) != 0)
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
		if ((rc = guard_header_line(q, n, h, reason)) != 0)
			return (rc);
	}
	*reason = "malformed request head";
	return (400);
}

/* Count a body refused by its route's cap in /metrics. */
static void
guard_count(struct guard *g, enum rest_body body)
{
	if (guard_conf.metrics != NULL)
		metrics_limit(guard_conf.metrics, body == REST_BODY_BATCH ?
		    METRICS_LIMIT_BATCH : METRICS_LIMIT_BODY, 1);
}

/*
 * Whether the route takes the body the head declares: 0 (with g->cap set
 * for a chunked body), else the status, with the reason in g->reason.
 */
static int
guard_decide(struct guard *g, const struct guard_head *h)
{
	struct evhttp_uri	*uri = NULL;
	const char		*path;
	char			*t, allow[64], pbuf[GUARD_PATH_INLINE];
	enum rest_body		 body;
	uint64_t		 cap;
	size_t			 n;
	int			 rc;

	if (!h->chunked && h->content_length <= 0)
		return (0);
	if (h->method == 0) {
		snprintf(g->reason, sizeof g->reason, "unknown method");
		return (501);
	}
	/*
	 * An origin-form target ("/path?query"; "//" would start an
	 * authority) has for path what is before its '?' or '#', as
	 * evhttp's non-conformant parse reads it: no parse, no allocation.
	 */
	for (n = 0; n < h->target_len && h->target[n] != '?' &&
	    h->target[n] != '#'; n++)
		;
	if (h->target[0] == '/' && (h->target_len < 2 ||
	    h->target[1] != '/') && n < sizeof pbuf) {
		memcpy(pbuf, h->target, n);
		pbuf[n] = '\0';
		path = pbuf;
	} else {
		t = xstrndup(h->target, h->target_len);
		uri = evhttp_uri_parse_with_flags(t, EVHTTP_URI_NONCONFORMANT);
		free(t);
		if (uri == NULL) {
			snprintf(g->reason, sizeof g->reason, "malformed "
			    "request target");
			return (400);
		}
		path = evhttp_uri_get_path(uri);
	}
	rc = rest_route_lookup(path != NULL && *path != '\0' ? path : "/",
	    h->method, &body, allow, sizeof allow);
	if (uri != NULL)
		evhttp_uri_free(uri);
	if (rc != 0) {
		snprintf(g->reason, sizeof g->reason, "%s", rc == 405 ?
		    "method not allowed" : rc == 404 ? "no such resource" :
		    "malformed path");
		return (rc);
	}
	switch (body) {
	case REST_BODY_INSTANCE:
		cap = guard_conf.max_body_bytes;
		break;
	case REST_BODY_BATCH:
		cap = guard_conf.max_batch_bytes;
		break;
	default:
		/*
		 * No body is used here, but clients send small ones by habit
		 * (the Netflix Jersey 3 client PUTs "{}" with every heartbeat,
		 * some send an empty chunked body): read and ignore up to
		 * GUARD_IGNORED_BODY_MAX bytes, refuse more at the head.
		 */
		if (h->chunked || h->content_length <= GUARD_IGNORED_BODY_MAX) {
			g->cap = GUARD_IGNORED_BODY_MAX;
			g->body = body;
			return (0);
		}
		snprintf(g->reason, sizeof g->reason, "this resource takes "
		    "no request body (at most %d bytes are read and ignored)",
		    GUARD_IGNORED_BODY_MAX);
		guard_count(g, body);
		return (413);
	}
	if (h->content_length > 0 && (uint64_t)h->content_length > cap) {
		snprintf(g->reason, sizeof g->reason, "request body too large "
		    "(%lld bytes declared, at most %llu here)",
		    (long long)h->content_length, (unsigned long long)cap);
		guard_count(g, body);
		return (413);
	}
	g->cap = cap;
	g->body = body;
	return (0);
}

/*
 * Refuse: evhttp gets a bodiless stand-in that carries the verdict (the
 * original request line when it was sound, so the answer is logged and
 * counted under it) and asks for the connection to close; the rest of
 * the client's bytes are dropped.
 */
static void
guard_refuse(struct guard *g, struct evbuffer *src, struct evbuffer *dst,
    const struct guard_head *h, int code, const char *reason)
{
	if (h != NULL && h->line != NULL && h->method != 0)
		evbuffer_add(dst, h->line, h->line_len);
	else
		evbuffer_add_printf(dst, "GET / HTTP/1.1");
	evbuffer_add_printf(dst, "\r\nConnection: close\r\nContent-Length: 0"
	    "\r\n%s: %d %s\r\n\r\n", GUARD_HEADER, code, reason);
	evbuffer_drain(src, evbuffer_get_length(src));
	g->state = G_CLOSED;
}

/* A chunked body broke its framing or its cap: evhttp answers 413. */
static void
guard_cut(struct guard *g, struct evbuffer *src, struct evbuffer *dst)
{
	/* Not a chunk size, nor a trailer: evhttp fails the request. */
	evbuffer_add(dst, "x\r\n", 3);
	evbuffer_drain(src, evbuffer_get_length(src));
	g->state = G_CLOSED;
}

/* Find the end of the head in src; its length, or 0 if not there yet. */
static size_t
guard_head_end(struct guard *g, struct evbuffer *src)
{
	struct evbuffer_ptr	 ptr;
	struct evbuffer_iovec	 v;
	const char		*p, *nl;
	char			 c;
	size_t			 len = evbuffer_get_length(src), at;

	/* Usually the bytes are one chain: memchr there, no evbuffer_ptr. */
	if (evbuffer_peek(src, -1, NULL, &v, 1) == 1 && v.iov_len == len) {
		p = v.iov_base;
		while (g->scanned < len) {
			nl = memchr(p + g->scanned, '\n', len - g->scanned);
			if (nl == NULL) {
				g->scanned = len;
				return (0);
			}
			at = (size_t)(nl - p);
			g->scanned = at + 1;
			if (at == g->line_start || (at == g->line_start + 1 &&
			    p[g->line_start] == '\r'))
				return (at + 1);
			g->line_start = at + 1;
		}
		return (0);
	}
	while (g->scanned < len) {
		if (evbuffer_ptr_set(src, &ptr, g->scanned,
		    EVBUFFER_PTR_SET) != 0)
			return (0);
		ptr = evbuffer_search(src, "\n", 1, &ptr);
		if (ptr.pos < 0) {
			g->scanned = len;
			return (0);
		}
		at = (size_t)ptr.pos;
		g->scanned = at + 1;
		if (at == g->line_start)
			return (at + 1);
		if (at == g->line_start + 1) {
			evbuffer_ptr_set(src, &ptr, g->line_start,
			    EVBUFFER_PTR_SET);
			if (evbuffer_copyout_from(src, &ptr, &c, 1) == 1 &&
			    c == '\r')
				return (at + 1);
		}
		g->line_start = at + 1;
	}
	return (0);
}

/* G_HEAD: check a whole head and pass it on; 0 when waiting for more. */
static int
guard_head(struct guard *g, struct evbuffer *src, struct evbuffer *dst)
{
	struct guard_head	 h;
	const char		*reason, *head;
	size_t			 n;
	uint64_t		 rest, body;
	int			 code;

	if ((n = guard_head_end(g, src)) == 0 || n > GUARD_HEAD_MAX) {
		if (n == 0 && evbuffer_get_length(src) <= GUARD_HEAD_MAX)
			return (0);
		guard_refuse(g, src, dst, NULL, 431, "request head too large");
		return (1);
	}
	g->scanned = g->line_start = 0;
	/* In place: src is the guard's own buffer (one copy at most). */
	head = (const char *)evbuffer_pullup(src, (ssize_t)n);
	if ((code = guard_parse_head(head, n, &h, &reason)) == 0 &&
	    (code = guard_decide(g, &h)) != 0)
		reason = g->reason;
	if (code != 0) {
		guard_refuse(g, src, dst, &h, code, reason);
		return (1);
	}
	g->heads++;
	rest = evbuffer_get_length(src) - n;
	body = h.content_length > 0 ? (uint64_t)h.content_length : 0;
	if (!h.chunked && rest <= body) {
		/*
		 * The head and no more than its own body's bytes: all of src
		 * goes on in one move of its chains (no copy of the part of
		 * a chain that the head ends in).
		 */
		evbuffer_add_buffer(dst, src);
		if (body > rest) {
			g->state = G_BODY;
			g->left = body - rest;
		}
		return (1);
	}
	evbuffer_remove_buffer(src, dst, n);
	if (h.chunked) {
		g->state = G_CHUNK_SIZE;
		g->total = 0;
	} else if (h.content_length > 0) {
		g->state = G_BODY;
		g->left = (uint64_t)h.content_length;
	}
	return (1);
}

/* G_CHUNK_SIZE: one chunk-size line (hex digits only); 0 to wait. */
static int
guard_chunk_size(struct guard *g, struct evbuffer *src, struct evbuffer *dst)
{
	struct evbuffer_ptr	 ptr;
	char			 line[CHUNK_LINE_MAX + 1];
	size_t			 n, i;
	uint64_t		 size = 0;

	ptr = evbuffer_search(src, "\n", 1, NULL);
	if (ptr.pos < 0) {
		if (evbuffer_get_length(src) > CHUNK_LINE_MAX)
			guard_cut(g, src, dst);
		return (evbuffer_get_length(src) > CHUNK_LINE_MAX);
	}
	n = (size_t)ptr.pos;
	if (n > CHUNK_LINE_MAX) {
		guard_cut(g, src, dst);
		return (1);
	}
	evbuffer_copyout(src, line, n);
	if (n > 0 && line[n - 1] == '\r')
		n--;
	line[n] = '\0';
	if (n == 0 || n > 15 || strspn(line, "0123456789abcdefABCDEF") < n) {
		guard_cut(g, src, dst);
		return (1);
	}
	for (i = 0; i < n; i++) {
		char c = line[i];

		size = size * 16 + (uint64_t)(c <= '9' ? c - '0' :
		    (c | 0x20) - 'a' + 10);
	}
	if (size > g->cap - g->total) {
		guard_count(g, g->body);
		guard_cut(g, src, dst);
		return (1);
	}
	g->total += size;
	evbuffer_remove_buffer(src, dst, (size_t)ptr.pos + 1);
	g->left = size;
	g->state = size > 0 ? G_CHUNK_DATA : G_TRAILER;
	return (1);
}

/* G_CHUNK_END and G_TRAILER: exactly an empty line; 0 to wait. */
static int
guard_empty_line(struct guard *g, struct evbuffer *src, struct evbuffer *dst)
{
	unsigned char	c[2];
	ev_ssize_t	got = evbuffer_copyout(src, c, 2);
	size_t		n;

	/* -1 (a frozen buffer) read nothing: c is not to be looked at. */
	if (got <= 0)
		return (0);
	n = (size_t)got;
	if (c[0] == '\n')
		n = 1;
	else if (n == 2 && c[0] == '\r' && c[1] == '\n')
		n = 2;
	else if (n == 1 && c[0] == '\r')
		return (0);
	else {
		guard_cut(g, src, dst);
		return (1);
	}
	evbuffer_remove_buffer(src, dst, n);
	g->state = g->state == G_TRAILER ? G_HEAD : G_CHUNK_SIZE;
	return (1);
}

/* Move what the guard lets through from src (held) to dst (evhttp's). */
static void
guard_feed(struct guard *g, struct evbuffer *src, struct evbuffer *dst)
{
	size_t	n;
	int	step;

	while (evbuffer_get_length(src) > 0) {
		switch (g->state) {
		case G_HEAD:
			step = guard_head(g, src, dst);
			break;
		case G_BODY:
		case G_CHUNK_DATA:
			n = evbuffer_get_length(src);
			if (n > g->left)
				n = (size_t)g->left;
			evbuffer_remove_buffer(src, dst, n);
			if ((g->left -= n) == 0)
				g->state = g->state == G_BODY ? G_HEAD :
				    G_CHUNK_END;
			step = 1;
			break;
		case G_CHUNK_SIZE:
			step = guard_chunk_size(g, src, dst);
			break;
		case G_CHUNK_END:
		case G_TRAILER:
			step = guard_empty_line(g, src, dst);
			break;
		default:
			evbuffer_drain(src, evbuffer_get_length(src));
			step = 1;
			break;
		}
		if (!step)
			break;
	}
}

/* Arm the deadline timer to fire at mono ms 'at'. */
static void
guard_arm(struct guard *g, int64_t at, int64_t now)
{
	struct timeval	tv;

	tv = clock_ms_tv(at > now ? at - now : 0);
	evtimer_add(g->timer, &tv);
}

/*
 * After bytes were fed: a head is pending while the guard waits in G_HEAD
 * with bytes held, or before the first head at all (from the accept); in
 * a body, or idle between requests (evhttp's own timeout), none is.
 */
static void
guard_deadline_update(struct guard *g, int64_t now)
{
	int	pending;

	pending = g->state == G_HEAD && (g->heads == 0 ||
	    evbuffer_get_length(g->held) > 0);
	if (!pending) {
		g->head_since = -1;
		if (!g->tls || g->handshaken)
			evtimer_del(g->timer);
		return;
	}
	if (g->head_since >= 0)
		return;
	g->head_since = now;
	if (!g->tls || g->handshaken)
		guard_arm(g, now + guard_conf.head_ms, now);
}

/*
 * Bytes arrived on the socket (evbuffer callbacks run before the
 * bufferevent calls evhttp): take the new ones into g->held, out of
 * evhttp's sight, and give back what the guard lets through.
 */
static void
guard_input_cb(struct evbuffer *in, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct guard	*g = arg;
	struct evbuffer	*tmp;
	size_t		 keep;

	/* Our own moves call back too. */
	if (g->busy || info->n_added == 0)
		return;
	/* Decrypted bytes: the handshake is done. */
	g->handshaken = 1;
	/*
	 * Body bytes with nothing held before them: taking them out and
	 * giving them back would leave in as it is, so they stay there (a
	 * large body arrives in many reads, each copied twice otherwise).
	 */
	if (g->state == G_BODY && evbuffer_get_length(g->held) == 0 &&
	    info->n_added <= g->left) {
		if ((g->left -= info->n_added) == 0)
			g->state = G_HEAD;
		return;
	}
	g->busy = 1;
	keep = evbuffer_get_length(in) - info->n_added;
	if (keep == 0)
		evbuffer_add_buffer(g->held, in);
	else {
		/* evhttp has not read all the older bytes yet: keep those. */
		tmp = evbuffer_new();
		evbuffer_add_buffer(tmp, in);
		evbuffer_remove_buffer(tmp, in, keep);
		evbuffer_add_buffer(g->held, tmp);
		evbuffer_free(tmp);
	}
	guard_feed(g, g->held, in);
	guard_deadline_update(g, clock_mono_ms());
	g->busy = 0;
}

/* Close the connection now: no request of it has reached evhttp yet. */
static void
guard_close_now(struct guard *g)
{
	void	*evcon = NULL;

	bufferevent_getcb(g->bev, NULL, NULL, NULL, &evcon);
	if (evcon != NULL)
		evhttp_connection_free(evcon);	/* guard_free() runs */
}

/*
 * A deadline: a TLS handshake not done in time closes the connection; a
 * head not whole in time closes it too, or, with requests of it before
 * evhttp, ends it with a 408 stand-in answered after them.
 */
static void
guard_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct guard		*g = arg;
	bufferevent_data_cb	 readcb = NULL;
	int64_t			 now = clock_mono_ms();

	(void)fd;
	(void)what;
	if (g->tls && !g->handshaken) {
		if (guard_conf.handshaken != NULL &&
		    guard_conf.handshaken(g->bev))
			g->handshaken = 1;
		else if (now - g->accepted < guard_conf.handshake_ms) {
			guard_arm(g, g->accepted + guard_conf.handshake_ms, now);
			return;
		} else {
			metrics_limit(guard_conf.metrics,
			    METRICS_LIMIT_HANDSHAKE_TIMEOUT, 1);
			log_warnx_rl(&guard_timeout_rl, "limit: a connection "
			    "closed: no TLS handshake within heureka.server."
			    "handshake-timeout-ms (%lld ms; logged once a "
			    "minute)", (long long)guard_conf.handshake_ms);
			guard_close_now(g);
			return;
		}
	}
	if (g->head_since < 0 || g->state != G_HEAD)
		return;
	if (now - g->head_since < guard_conf.head_ms) {
		guard_arm(g, g->head_since + guard_conf.head_ms, now);
		return;
	}
	metrics_limit(guard_conf.metrics, METRICS_LIMIT_HEAD_TIMEOUT, 1);
	log_warnx_rl(&guard_timeout_rl, "limit: a connection closed: no whole "
	    "request head within heureka.server.head-timeout-ms (%lld ms; "
	    "logged once a minute)", (long long)guard_conf.head_ms);
	if (g->heads == 0) {
		guard_close_now(g);
		return;
	}
	g->busy = 1;
	guard_refuse(g, g->held, bufferevent_get_input(g->bev), NULL, 408,
	    "request head not complete within heureka.server."
	    "head-timeout-ms");
	g->head_since = -1;
	g->busy = 0;
	/*
	 * evhttp reads the stand-in now if it is reading (its read callback
	 * set and reading on); while it writes or a handler holds a request
	 * it finds the stand-in when it next starts reading. Triggering it
	 * in any other state would make evhttp abort.
	 */
	bufferevent_getcb(g->bev, &readcb, NULL, NULL, NULL);
	if (readcb != NULL && (bufferevent_get_enabled(g->bev) & EV_READ))
		bufferevent_trigger(g->bev, EV_READ,
		    BEV_TRIG_IGNORE_WATERMARKS);
}

/* What the guard checks against; see guard.h. */
void
guard_init(const struct guard_conf *gc)
{
	guard_conf = *gc;
}

/* Guard a new connection's socket bufferevent; see guard.h. */
struct guard *
guard_attach(struct bufferevent *bev, int tls)
{
	struct guard	*g = xcalloc(1, sizeof *g);
	int64_t		 now = clock_mono_ms();

	g->state = G_HEAD;
	g->held = evbuffer_new();
	g->bev = bev;
	g->tls = tls;
	g->accepted = g->head_since = now;
	g->timer = evtimer_new(bufferevent_get_base(bev), guard_timer_cb, g);
	g->ent = evbuffer_add_cb(bufferevent_get_input(bev), guard_input_cb,
	    g);
	LIST_INSERT_HEAD(&guard_all, g, entry);
	guard_arm(g, now + (tls ? guard_conf.handshake_ms :
	    guard_conf.head_ms), now);
	return (g);
}

/* Whether a head has been passed on; see guard.h. */
int
guard_has_served(const struct guard *g)
{
	return (g->heads > 0);
}

/* The connection is being freed: release its guard; see guard.h. */
void
guard_free(struct guard *g)
{
	if (g == NULL)
		return;
	evbuffer_remove_cb_entry(bufferevent_get_input(g->bev), g->ent);
	LIST_REMOVE(g, entry);
	event_free(g->timer);
	evbuffer_free(g->held);
	free(g);
}

/*
 * Connections in the middle of something: a request head or body partly
 * received, or reply bytes not yet written to the socket; see guard.h.
 */
size_t
guard_busy(void)
{
	struct guard	*g;
	size_t		 n = 0;

	LIST_FOREACH(g, &guard_all, entry) {
		if ((g->state != G_HEAD && g->state != G_CLOSED) ||
		    evbuffer_get_length(g->held) > 0 ||
		    evbuffer_get_length(bufferevent_get_output(g->bev)) > 0)
			n++;
	}
	return (n);
}

/* Whether req is the stand-in for a refused request; see guard.h. */
int
guard_verdict(struct evhttp_request *req, int *code, const char **reason)
{
	const char	*v = http_header(req, GUARD_HEADER);

	if (v == NULL || strlen(v) < 4 || v[0] < '1' || v[0] > '5' ||
	    v[1] < '0' || v[1] > '9' || v[2] < '0' || v[2] > '9' ||
	    v[3] != ' ')
		return (0);
	*code = (v[0] - '0') * 100 + (v[1] - '0') * 10 + (v[2] - '0');
	*reason = v + 4;
	return (1);
}
