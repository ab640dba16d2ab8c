/*
 * http_req.c: the request of heurekad's HTTP front (http.h): what the
 * handlers read (method, target, headers, query, body) and the replies
 * they send, written straight into the connection's output buffer.
 *
 * Why: every handler used evhttp's request, whose header lists and
 * query copies were allocated and freed for each request (issue 27).
 * Here a request's strings are slices of its head, copied once into its
 * connection's arena, and whatever else it needs (the header index, the
 * path, decoded query parameters) is cut from the same arena, which is
 * reused from one request to the next: of a heartbeat's allocations
 * only libevent's remain, two evbuffer chains for its reply (callgrind).
 * Reply headers go into one buffer per connection, also reused, and the
 * status line and headers are copied out in one block (written with a
 * printf each, they were 6.1k of a heartbeat's 19.7k instructions under
 * callgrind; 0.2k now). The
 * reply is framed as evhttp framed it (Date on HTTP/1.1, Content-Length
 * when the connection stays open, "Connection: keep-alive" to an
 * HTTP/1.0 client that asked, no body for HEAD, 204 and 304).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "bug.h"
#include "clock.h"
#include "gzip.h"
#include "http_int.h"
#include "httputil.h"
#include "xmalloc.h"

#define HTTP_ALIGN(n)	(((n) + 7) & ~(size_t)7)

/* ASCII lower case. */
static inline unsigned char
hreq_lower(unsigned char c)
{
	return (c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
}

/* Whether a and b (n bytes of b) are equal ignoring ASCII case. */
static int
hreq_name_eq(const char *a, const char *b, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (hreq_lower((unsigned char)a[i]) !=
		    hreq_lower((unsigned char)b[i]))
			return (0);
	return (1);
}

/* Make the first block hold a head of n bytes; -1 past the cap. */
int
hreq_arena_init(struct hreq *r, size_t n)
{
	size_t	need = HTTP_ALIGN(n) + 1024;

	if (n > HTTP_HEAD_MAX)
		return (-1);
	/* Headers (one per line) and the target fit in twice the head. */
	need += HTTP_ALIGN(n) + (n / 2 + 2) * sizeof(struct hhdr);
	if (r->arena_cap < need) {
		free(r->arena);
		r->arena_cap = need < 4096 ? 4096 : need;
		r->arena = xmalloc(r->arena_cap);
	}
	r->arena_used = 0;
	return (0);
}

/* n bytes of the request's arena; see http.h. */
void *
hreq_alloc(struct hreq *r, size_t n)
{
	struct harena_extra	*x;
	void			*p;

	n = HTTP_ALIGN(n);
	r->arena_used = HTTP_ALIGN(r->arena_used);	/* the head's end */
	if (r->arena != NULL && r->arena_cap >= r->arena_used &&
	    r->arena_cap - r->arena_used >= n) {
		p = r->arena + r->arena_used;
		r->arena_used += n;
		return (p);
	}
	/* Larger than the block: a block of its own, freed at reset. */
	x = xmalloc(sizeof *x + HTTP_ALIGN(1) + n);
	x->next = r->extra;
	r->extra = x;
	return ((char *)(x + 1) + HTTP_ALIGN(1));
}

/* Forget the request: the arena is kept (up to a size), the rest reset. */
void
hreq_reset(struct hreq *r)
{
	struct harena_extra	*x;

	while ((x = r->extra) != NULL) {
		r->extra = x->next;
		free(x);
	}
	if (r->arena_cap > HTTP_ARENA_KEEP) {
		free(r->arena);
		r->arena = NULL;
		r->arena_cap = 0;
	}
	r->arena_used = 0;
	memset(&r->head, 0, sizeof r->head);
	r->head.content_length = -1;
	r->path = r->query_str = NULL;
	r->query.kv = NULL;
	r->query.n = 0;
	evbuffer_drain(r->body, evbuffer_get_length(r->body));
	evbuffer_drain(r->out, evbuffer_get_length(r->out));
	r->hdrs.n = 0;
	r->hdrs.b.len = 0;
	r->code = 0;
	r->state = HR_NONE;
	r->keepalive = 0;
	r->stream_chunked = 0;
	r->closecb = NULL;
	r->closearg = NULL;
	r->flushcb = NULL;
	r->flusharg = NULL;
}

/* Free what the request holds (its connection is going). */
void
hreq_release(struct hreq *r)
{
	hreq_reset(r);
	free(r->arena);
	evbuffer_free(r->body);
	evbuffer_free(r->out);
	buf_free(&r->hdrs.b);
	r->conn = NULL;
}

/* A request of no connection, from a head; see http.h. */
struct hreq *
hreq_new_head(const char *head, size_t n)
{
	struct hreq	*r = xcalloc(1, sizeof *r);
	const char	*reason, *q;
	size_t		 lines = http_head_lines(head, n), qlen;
	char		*path;

	r->body = evbuffer_new();
	r->out = evbuffer_new();
	buf_init(&r->hdrs.b, 0);
	if (hreq_arena_init(r, n) != 0)
		goto fail;
	memcpy(r->arena, head, n);
	r->arena_used = n;
	r->head.hdrs = hreq_alloc(r, lines * sizeof *r->head.hdrs);
	if (http_parse_head(r->arena, n, &r->head, r->head.hdrs, lines,
	    &reason) != 0)
		goto fail;
	path = hreq_alloc(r, r->head.target_len + 1);
	http_target_split(r->head.target, r->head.target_len, path, &q, &qlen);
	r->path = *path != '\0' ? path : "/";
	if (q != NULL) {
		r->query_str = hreq_alloc(r, qlen + 1);
		memcpy((char *)r->query_str, q, qlen);
		((char *)r->query_str)[qlen] = '\0';
	}
	r->state = HR_PENDING;
	return (r);
fail:
	hreq_free(r);
	return (NULL);
}

/* Free a request of no connection; see http.h. */
void
hreq_free(struct hreq *r)
{
	if (r == NULL)
		return;
	hreq_release(r);
	free(r);
}

/*
 * The method; see http.h. head.method is an int because it doubles as a
 * bit for hfront_conf's methods mask, but it only ever holds one
 * EVHTTP_REQ_* value or 0 (http_parse.c's table).
 */
enum evhttp_cmd_type
hreq_method(struct hreq *r)
{
	return ((enum evhttp_cmd_type)r->head.method);
}

/* The method's name; see http.h. */
const char *
hreq_method_name(struct hreq *r)
{
	return (r->head.method_name != NULL ? r->head.method_name : "GET");
}

/* The target as sent; see http.h. */
const char *
hreq_uri(struct hreq *r)
{
	return (r->head.target != NULL ? r->head.target : "/");
}

/* The path, not decoded; see http.h. */
const char *
hreq_path(struct hreq *r)
{
	return (r->path != NULL ? r->path : "/");
}

/* The raw query; see http.h. */
const char *
hreq_query_string(struct hreq *r)
{
	return (r->query_str);
}

/* The decoded query (the router fills it); see http.h. */
struct hquery *
hreq_query(struct hreq *r)
{
	return (&r->query);
}

/*
 * A request header, or NULL: the first of that name, ignoring ASCII
 * case; a name's length and first byte are compared before its bytes.
 */
const char *
hreq_header(struct hreq *r, const char *name)
{
	const struct hhdr	*h = r->head.hdrs;
	size_t			 n = strlen(name), i;
	unsigned char		 c0 = hreq_lower((unsigned char)name[0]);

	for (i = 0; i < r->head.nhdrs; i++) {
		if (h[i].name_len != n ||
		    hreq_lower((unsigned char)h[i].name[0]) != c0)
			continue;
		if (hreq_name_eq(h[i].name, name, n))
			return (h[i].value);
	}
	return (NULL);
}

/* Header i, in order; see http.h. */
int
hreq_header_at(struct hreq *r, size_t i, const char **name,
    const char **value)
{
	if (i >= r->head.nhdrs)
		return (0);
	*name = r->head.hdrs[i].name;
	*value = r->head.hdrs[i].value;
	return (1);
}

/* Eureka's rule: JSON when Accept contains "json", XML otherwise. */
int
hreq_wants_json(struct hreq *r)
{
	const char	*a = hreq_header(r, "Accept");

	return (a != NULL && http_find_word(a, "json") != NULL);
}

/* Accept-Encoding mentions gzip. */
int
hreq_wants_gzip(struct hreq *r)
{
	const char	*a = hreq_header(r, "Accept-Encoding");

	return (a != NULL && http_find_word(a, "gzip") != NULL);
}

/* X-Eureka-Accept: compact (case-insensitive; anything else is full). */
int
hreq_wants_compact(struct hreq *r)
{
	const char	*a = hreq_header(r, "X-Eureka-Accept");

	return (a != NULL && strcasecmp(a, "compact") == 0);
}

/* Exactly "true" in x-netflix-discovery-replication marks a peer's call. */
int
hreq_is_replication(struct hreq *r)
{
	const char	*a = hreq_header(r, "x-netflix-discovery-replication");

	return (a != NULL && strcmp(a, "true") == 0);
}

/* The connection; see http.h. */
struct hconn *
hreq_conn(struct hreq *r)
{
	return (r->conn);
}

/* Whether the TLS client's certificate verified; see http.h. */
int
hreq_peer_verified(struct hreq *r)
{
	SSL	*ssl;

	if (r->conn == NULL ||
	    (ssl = bufferevent_openssl_get_ssl(r->conn->bev)) == NULL)
		return (0);
	return (SSL_get0_peer_certificate(ssl) != NULL &&
	    SSL_get_verify_result(ssl) == X509_V_OK);
}

/* The close callback of a pending reply; see http.h. */
void
hreq_set_closecb(struct hreq *r, void (*cb)(void *), void *arg)
{
	r->closecb = cb;
	r->closearg = arg;
}

/* Clear the close callback if it is still cb with arg; see http.h. */
void
hreq_clear_closecb(struct hreq *r, void (*cb)(void *), void *arg)
{
	if (r->closecb == cb && r->closearg == arg) {
		r->closecb = NULL;
		r->closearg = NULL;
	}
}

/* The body's bytes, inflated into scratch or lent, bounded by max. */
int
hreq_body_view(struct hreq *r, size_t max, struct buf *scratch,
    const char **data, size_t *datalen, const char **cause)
{
	size_t		 len = evbuffer_get_length(r->body);
	const char	*enc = hreq_header(r, "Content-Encoding");
	unsigned char	*p;
	int		 rc;

	if (len > max) {
		*cause = "request body too large";
		return (413);
	}
	p = evbuffer_pullup(r->body, -1);
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
hreq_read_body(struct hreq *r, size_t max, struct buf *out,
    const char **cause)
{
	const char	*data;
	size_t		 len;
	int		 rc;

	if ((rc = hreq_body_view(r, max, out, &data, &len, cause)) != 0)
		return (rc);
	if (data != out->data || len == 0)
		buf_add(out, data, len);
	return (0);
}

/* The reply headers; see http.h. */
struct hhdrs *
hreq_output_headers(struct hreq *r)
{
	return (&r->hdrs);
}

/*
 * Add a reply header (copied). No handler adds more than about ten, so
 * HTTP_OUT_HDRS (24) is a rule of ours, not of the client's: passing it
 * is a bug (fatal in the tests; logged, counted and dropped in a release
 * build).
 */
void
hhdrs_add(struct hhdrs *h, const char *name, const char *value)
{
	size_t	nl = strlen(name), vl = strlen(value);

	if (HK_BUG(h->n >= HTTP_OUT_HDRS))
		return;
	h->off[h->n][0] = (uint32_t)h->b.len;
	buf_add(&h->b, name, nl + 1);
	h->off[h->n][1] = (uint32_t)h->b.len;
	buf_add(&h->b, value, vl + 1);
	h->n++;
}

/* The first reply header of a name, or NULL. */
const char *
hhdrs_find(struct hhdrs *h, const char *name)
{
	size_t	i;

	for (i = 0; i < h->n; i++)
		if (strcasecmp(h->b.data + h->off[i][0], name) == 0)
			return (h->b.data + h->off[i][1]);
	return (NULL);
}

/* The reply body's buffer; see http.h. */
struct evbuffer *
hreq_output_buffer(struct hreq *r)
{
	return (r->out);
}

/* The status sent (0 before). */
int
hreq_response_code(struct hreq *r)
{
	return (r->code);
}

/* The Date header's value for this second (RFC 9110 IMF-fixdate). */
static const char *
hreq_date(void)
{
	static const char *const	 wday[] = { "Sun", "Mon", "Tue", "Wed",
	    "Thu", "Fri", "Sat" };
	static const char *const	 mon[] = { "Jan", "Feb", "Mar", "Apr",
	    "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
	static char			 buf[32];
	static time_t			 last = -1;
	struct tm			 tm;
	time_t				 t = (time_t)(clock_wall_ms() / 1000);

	if (t != last && gmtime_r(&t, &tm) != NULL) {
		snprintf(buf, sizeof buf, "%s, %02d %s %d %02d:%02d:%02d GMT",
		    wday[tm.tm_wday], tm.tm_mday, mon[tm.tm_mon],
		    tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
		last = t;
	}
	return (buf);
}

/* Whether a reply with this code to this request carries a body. */
static int
hreq_needs_body(const struct hreq *r, int code)
{
	return (code != 204 && code != 304 && (code < 100 || code >= 200) &&
	    r->head.method != EVHTTP_REQ_HEAD);
}

/* A Connection header's value is exactly "close" (ASCII case aside). */
static int
hreq_is_close(const char *v)
{
	return (v != NULL && strcasecmp(v, "close") == 0);
}

/* The reason phrase of a status (evhttp's and RFC 9110's). */
static const char *
hreq_reason(int code)
{
	switch (code) {
	case 100: return ("Continue");
	case 201: return ("Created");
	case 202: return ("Accepted");
	case 304: return ("Not Modified");
	case 401: return ("Unauthorized");
	case 408: return ("Request Timeout");
	case 411: return ("Length Required");
	case 417: return ("Expectation Failed");
	case 431: return ("Request Header Fields Too Large");
	case 501: return ("Not Implemented");
	case 502: return ("Bad Gateway");
	case 504: return ("Gateway Timeout");
	default: return (http_reason(code));
	}
}

/* n in decimal, ending at end (NUL-terminated); where it starts. */
static char *
hreq_utoa(char *end, size_t n)
{
	char	*p = end - 1;

	*p = '\0';
	do {
		*--p = (char)('0' + n % 10);
		n /= 10;
	} while (n > 0);
	return (p);
}

/*
 * The status line and the headers into out, copied into one block (a
 * printf a header cost more than the rest of a heartbeat's reply).
 */
static void
hreq_put_head(struct hreq *r, struct evbuffer *out)
{
	char		 blk[2048], num[16], *p;
	const char	*why = hreq_reason(r->code), *k, *v;
	size_t		 n = 0, kl, vl, i;

	memcpy(blk, "HTTP/1.", 7);
	blk[7] = r->head.minor == 0 ? '0' : '1';
	blk[8] = ' ';
	p = hreq_utoa(num + sizeof num, (size_t)r->code);
	n = 9 + strlen(p);
	memcpy(blk + 9, p, n - 9);
	blk[n++] = ' ';
	memcpy(blk + n, why, strlen(why));
	n += strlen(why);
	blk[n++] = '\r';
	blk[n++] = '\n';
	for (i = 0; i < r->hdrs.n; i++) {
		k = r->hdrs.b.data + r->hdrs.off[i][0];
		v = r->hdrs.b.data + r->hdrs.off[i][1];
		kl = strlen(k);
		vl = strlen(v);
		if (n + kl + vl + 6 > sizeof blk) {
			evbuffer_add(out, blk, n);
			n = 0;
		}
		if (kl + vl + 6 > sizeof blk) {
			evbuffer_add_printf(out, "%s: %s\r\n", k, v);
			continue;
		}
		memcpy(blk + n, k, kl);
		n += kl;
		blk[n++] = ':';
		blk[n++] = ' ';
		memcpy(blk + n, v, vl);
		n += vl;
		blk[n++] = '\r';
		blk[n++] = '\n';
	}
	blk[n++] = '\r';
	blk[n++] = '\n';
	evbuffer_add(out, blk, n);
}

/*
 * The status line and headers into out, with evhttp's additions; len is
 * the body's length (stream: a streamed reply, no length). Decides
 * whether the connection stays open.
 */
void
hreq_write_head(struct hreq *r, struct evbuffer *out, size_t len, int stream)
{
	const char	*in_conn = hreq_header(r, "Connection");
	int		 in_keep, close_, body = hreq_needs_body(r, r->code);
	char		 num[32];

	in_keep = in_conn != NULL && strncasecmp(in_conn, "keep-alive",
	    10) == 0;
	close_ = (r->head.minor == 0 && !in_keep) || hreq_is_close(in_conn) ||
	    hreq_is_close(hhdrs_find(&r->hdrs, "Connection"));
	if (r->head.method == EVHTTP_REQ_CONNECT)
		close_ = r->head.minor == 0 && !in_keep;
	if (r->head.minor >= 1 && hhdrs_find(&r->hdrs, "Date") == NULL)
		hhdrs_add(&r->hdrs, "Date", hreq_date());
	if (stream) {
		r->stream_chunked = r->head.minor >= 1 && body &&
		    hhdrs_find(&r->hdrs, "Content-Length") == NULL;
		if (r->stream_chunked)
			hhdrs_add(&r->hdrs, "Transfer-Encoding", "chunked");
		else
			close_ = 1;	/* the end is the close */
	} else if ((r->head.minor >= 1 || in_keep) && body &&
	    hhdrs_find(&r->hdrs, "Content-Length") == NULL) {
		hhdrs_add(&r->hdrs, "Content-Length", hreq_utoa(num +
		    sizeof num, len));
	}
	/* An HTTP/1.0 client expects the close unless it asked otherwise. */
	if (close_ && (r->head.minor >= 1 || hreq_is_close(in_conn)) &&
	    !hreq_is_close(hhdrs_find(&r->hdrs, "Connection")))
		hhdrs_add(&r->hdrs, "Connection", "close");
	else if (!close_ && r->head.minor == 0)
		hhdrs_add(&r->hdrs, "Connection", "keep-alive");
	r->keepalive = !close_;
	hreq_put_head(r, out);
}

/* The reply; see http.h. */
void
hreq_send_reply(struct hreq *r, int code, const char *reason,
    struct evbuffer *body)
{
	struct hconn	*c = r->conn;
	struct evbuffer	*out;

	(void)reason;	/* the phrase is the code's (hreq_reason) */
	if (r->state != HR_PENDING)
		return;
	if (c == NULL) {		/* hreq_new_head's: kept */
		if (body != NULL)
			evbuffer_add_buffer(r->out, body);
		r->code = code;
		r->state = HR_DONE;
		return;
	}
	if (body != NULL)
		evbuffer_add_buffer(r->out, body);
	r->code = code;
	r->state = HR_DONE;
	if (c->broken) {
		hconn_replied(c);
		return;
	}
	out = bufferevent_get_output(c->bev);
	/*
	 * A plain socket with nothing queued is written to directly, once
	 * whoever replied has returned (hconn_replied's kick: what it does
	 * after the reply, the access log line, comes first, as with
	 * evhttp): a reply that fits the socket's buffer (a heartbeat's
	 * always does) never arms and disarms the write event, two
	 * epoll_ctl calls a request; what is left goes through the output.
	 */
	if (!c->tls && evbuffer_get_length(out) == 0) {
		hreq_write_head(r, c->wbuf, evbuffer_get_length(r->out), 0);
		if (hreq_needs_body(r, code))
			evbuffer_add_buffer(c->wbuf, r->out);
		hconn_replied(c);
		return;
	}
	hreq_write_head(r, out, evbuffer_get_length(r->out), 0);
	if (hreq_needs_body(r, code))
		evbuffer_add_buffer(out, r->out);
	hconn_replied(c);
}

/* A complete reply with a content type and a copied body. */
void
hreq_reply(struct hreq *r, int code, const char *ctype, const char *body,
    size_t len)
{
	if (hhdrs_find(&r->hdrs, "Date") == NULL)
		hhdrs_add(&r->hdrs, "Date", hreq_date());
	if (ctype != NULL)
		hhdrs_add(&r->hdrs, "Content-Type", ctype);
	if (body != NULL && len > 0)
		evbuffer_add(r->out, body, len);
	hreq_send_reply(r, code, NULL, NULL);
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
hreq_reply_safe(struct hreq *r, int code, const char *ctype,
    const char *body, size_t len)
{
	hhdrs_add(&r->hdrs, "X-Content-Type-Options", "nosniff");
	hhdrs_add(&r->hdrs, "Content-Security-Policy", HTTP_SAFE_CSP);
	hhdrs_add(&r->hdrs, "X-Frame-Options", "DENY");
	hhdrs_add(&r->hdrs, "Referrer-Policy", "no-referrer");
	hhdrs_add(&r->hdrs, "Cache-Control", "no-store");
	hreq_reply(r, code, ctype, body, len);
}

/* Plain-text error with a short reason on its own line. */
void
hreq_error(struct hreq *r, int code, const char *reason)
{
	if (hhdrs_find(&r->hdrs, "Date") == NULL)
		hhdrs_add(&r->hdrs, "Date", hreq_date());
	hhdrs_add(&r->hdrs, "Content-Type", "text/plain; charset=utf-8");
	evbuffer_add_printf(r->out, "%s\n", reason);
	hreq_send_reply(r, code, NULL, NULL);
}

/* Start a streamed reply; see http.h. */
void
hreq_reply_start(struct hreq *r, int code, const char *reason)
{
	struct hconn	*c = r->conn;

	(void)reason;
	if (r->state != HR_PENDING || c == NULL)
		return;
	r->code = code;
	r->state = HR_STREAM;
	c->quiet = 1;		/* a stream sets its own timeouts */
	hreq_write_head(r, bufferevent_get_output(c->bev), 0, 1);
}

/* One piece of a streamed reply (taken from buf). */
void
hreq_reply_chunk(struct hreq *r, struct evbuffer *buf)
{
	struct evbuffer	*out;
	size_t		 n = evbuffer_get_length(buf);

	if (r->state != HR_STREAM || r->conn == NULL || n == 0)
		return;
	out = bufferevent_get_output(r->conn->bev);
	if (r->stream_chunked)
		evbuffer_add_printf(out, "%zx\r\n", n);
	evbuffer_add_buffer(out, buf);
	if (r->stream_chunked)
		evbuffer_add(out, "\r\n", 2);
}

/* A piece, and cb once the output is written out. */
void
hreq_reply_chunk_with_cb(struct hreq *r, struct evbuffer *buf,
    void (*cb)(struct hconn *, void *), void *arg)
{
	hreq_reply_chunk(r, buf);
	if (r->state == HR_STREAM && r->conn != NULL) {
		r->flushcb = cb;
		r->flusharg = arg;
	}
}

/* End a streamed reply; see http.h. */
void
hreq_reply_end(struct hreq *r)
{
	struct hconn	*c = r->conn;

	if (r->state != HR_STREAM || c == NULL)
		return;
	if (r->stream_chunked && !c->broken)
		evbuffer_add(bufferevent_get_output(c->bev), "0\r\n\r\n", 5);
	r->state = HR_DONE;
	hconn_replied(c);
}
