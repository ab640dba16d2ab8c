/*
 * http_conn.c: the connections of heurekad's HTTP/1.1 front (http.h).
 *
 * Why our own: incoming requests were parsed twice, by the header-time
 * guard (an input-buffer callback that checked each head strictly before
 * evhttp saw it) and by evhttp's server, which then allocated per header
 * and per query parameter (its header lists, query copies,
 * evhttp_clear_headers, evhttp_request_free): a profile of heartbeats had
 * the C library's allocator at a third of the samples, mostly
 * malloc_consolidate sweeping the small blocks each request freed
 * (issue 27). `tests/bench/run callgrind`, N = 10k: a heartbeat took
 * 36,713 instructions before this front, 11,611 after (evhttp alone
 * answering 204 takes 27,125); a registration 90,364 before, 52,592
 * after (docs/performance.md).
 * Here a connection reads a head once: its end is found in the input
 * buffer, the head (at most heureka's 64 KiB cap) is moved into the
 * connection's arena in one copy, parsed in place (http_parse.c) and
 * handed on; the body is framed here (Content-Length or chunked) into one
 * evbuffer per connection, reused. The head is copied rather than read
 * where it lies because libevent may move the bytes of an input buffer's
 * last chain when a read appends to it, and a request's strings must
 * stay put while its reply is pending.
 *
 * What the guard enforced is enforced here, before any body byte is
 * read: the parser's checks, the body a route takes and its cap
 * (body_cap, answered with the route's status; Expect: 100-continue is
 * answered by that verdict too, so a client told 413 never sends the
 * body), a chunked body cut at its cap (413). One request at a time: the
 * next head is read once the reply is written, so pipelined requests are
 * answered in order and a client that does not read its replies stops
 * being read. HTTP/1.0 closes after the reply unless it asked for
 * keep-alive; "Connection: close" either way closes.
 *
 * Deadlines (issue 21: one byte every 20 s kept a connection open for
 * minutes): a TLS handshake must finish within handshake_ms of the
 * accept and a request head must arrive whole within head_ms, the first
 * from the accept, a later one from its first byte; one timer per
 * connection. A connection that misses its deadline before any request
 * is closed at once; one with requests behind it gets a 408 and closes.
 * Idle keep-alive connections close after idle_s (evhttp's timeout).
 *
 * A request whose reply is pending keeps its socket read (the bytes of a
 * next request wait in the input buffer, bounded by the head cap), so a
 * client that goes away is seen at once: the request's close callback
 * (hreq_set_closecb: a parked fetch, a held drain answer, a blocking
 * query) forgets it and the connection is freed.
 */
#include <sys/queue.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "bug.h"
#include "clock.h"
#include "http_int.h"
#include "log.h"
#include "metrics.h"
#include "xmalloc.h"

#define CHUNK_LINE_MAX	256
#define HTTP_FLUSH_MAX	(256 * 1024)	/* written before the next head */

/* Every connection, for hconn_busy() (at most max-connections). */
static LIST_HEAD(, hconn) hconn_all = LIST_HEAD_INITIALIZER(hconn_all);
static struct log_ratelim	hconn_timeout_rl = LOG_RATELIM_INIT(60000, 1);

static void	hconn_input(struct hconn *);
static void	hconn_deadline_update(struct hconn *, int64_t);

/* Free now, or once our callbacks on the stack have returned. */
static void
hconn_release(struct hconn *c)
{
	if (c->depth > 0) {
		c->dead = 1;
		return;
	}
	hconn_free(c);
}

/* Set the idle timeouts: reading (idle_s) only between requests. */
static void
hconn_timeouts(struct hconn *c, int reading)
{
	struct timeval	tv = { c->idle_s, 0 };

	bufferevent_set_timeouts(c->bev, reading ? &tv : NULL, &tv);
}

/* Find the end of the head in the input; its length, or 0. */
static size_t
hconn_head_end(struct hconn *c, struct evbuffer *in)
{
	struct evbuffer_ptr	 ptr;
	struct evbuffer_iovec	 v;
	const char		*p, *nl;
	char			 ch;
	size_t			 len = evbuffer_get_length(in), at;

	/* Usually the bytes are one chain: memchr there, no evbuffer_ptr. */
	if (evbuffer_peek(in, -1, NULL, &v, 1) == 1 && v.iov_len == len) {
		p = v.iov_base;
		while (c->scanned < len) {
			nl = memchr(p + c->scanned, '\n', len - c->scanned);
			if (nl == NULL) {
				c->scanned = len;
				return (0);
			}
			at = (size_t)(nl - p);
			c->scanned = at + 1;
			if (at == c->line_start || (at == c->line_start + 1 &&
			    p[c->line_start] == '\r'))
				return (at + 1);
			c->line_start = at + 1;
		}
		return (0);
	}
	while (c->scanned < len) {
		if (evbuffer_ptr_set(in, &ptr, c->scanned,
		    EVBUFFER_PTR_SET) != 0)
			return (0);
		ptr = evbuffer_search(in, "\n", 1, &ptr);
		if (ptr.pos < 0) {
			c->scanned = len;
			return (0);
		}
		at = (size_t)ptr.pos;
		c->scanned = at + 1;
		if (at == c->line_start)
			return (at + 1);
		if (at == c->line_start + 1) {
			evbuffer_ptr_set(in, &ptr, c->line_start,
			    EVBUFFER_PTR_SET);
			if (evbuffer_copyout_from(in, &ptr, &ch, 1) == 1 &&
			    ch == '\r')
				return (at + 1);
		}
		c->line_start = at + 1;
	}
	return (0);
}

/*
 * Refuse the request (its head, when sound, else a stand-in "GET /"):
 * the front's reject callback answers it, the connection closes after,
 * and nothing more is read from it.
 */
static void
hconn_refuse(struct hconn *c, int code, const char *reason)
{
	struct hreq	*r = &c->req;
	struct evbuffer	*in = bufferevent_get_input(c->bev);

	if (r->head.method_name == NULL || r->head.method == 0) {
		r->head.method = EVHTTP_REQ_GET;
		r->head.method_name = "GET";
		r->head.target = "/";
		r->head.target_len = 1;
		r->path = "/";
		r->query_str = NULL;
		r->head.nhdrs = 0;
		r->head.minor = 1;
	}
	evbuffer_drain(in, evbuffer_get_length(in));
	bufferevent_disable(c->bev, EV_READ);
	hconn_timeouts(c, 0);
	hhdrs_add(&r->hdrs, "Connection", "close");
	r->keepalive = 0;
	r->state = HR_PENDING;
	c->state = HC_HANDLER;
	if (c->conf->reject != NULL)
		c->conf->reject(r, code, reason, c->conf->cbarg);
	else
		hreq_error(r, code, reason);
}

/* Hand the request (head and body read) to the front's callback. */
static void
hconn_dispatch(struct hconn *c)
{
	c->state = HC_HANDLER;
	c->req.state = HR_PENDING;
	c->conf->cb(&c->req, c->conf->cbarg);
}

/* What the route makes of the body the head declares; 0 or a status. */
static int
hconn_body_decide(struct hconn *c, char *reason, size_t len)
{
	struct hreq	*r = &c->req;
	enum metrics_limit limit = METRICS_LIMIT_BODY;
	int		 rc;

	c->counted = 0;
	c->ignore_body = r->head.method == EVHTTP_REQ_HEAD ||
	    r->head.method == EVHTTP_REQ_TRACE;
	if (!r->head.chunked && r->head.content_length <= 0)
		return (0);
	if (r->head.method == 0) {
		snprintf(reason, len, "unknown method");
		return (501);
	}
	if (c->conf->body_cap == NULL) {
		snprintf(reason, len, "this resource takes no request body");
		return (413);
	}
	rc = c->conf->body_cap(c->conf->body_cap_arg, &r->head, r->path,
	    &c->cap, &limit, reason, len);
	/* Only a cap (rc 0) can be outgrown later: its limit counts it. */
	c->counted = rc == 0;
	c->limit = limit;
	return (rc);
}

/* A whole head of n bytes is in the input: read, check and frame it. */
static void
hconn_head(struct hconn *c, struct evbuffer *in, size_t n)
{
	struct hreq	*r = &c->req;
	const char	*reason, *q;
	char		*path, why[160];
	size_t		 lines, qlen;
	int		 code;

	c->scanned = c->line_start = 0;
	c->heads++;
	c->head_since = -1;
	if (hreq_arena_init(r, n) != 0) {
		hconn_refuse(c, 431, "request head too large");
		return;
	}
	evbuffer_remove(in, r->arena, n);
	lines = http_head_lines(r->arena, n);
	r->arena_used = n;
	r->head.hdrs = hreq_alloc(r, lines * sizeof *r->head.hdrs);
	code = http_parse_head(r->arena, n, &r->head, r->head.hdrs, lines,
	    &reason);
	if (code != 0) {
		/* The request line, when sound, names the refusal. */
		if (r->head.target == NULL || r->head.method_name == NULL ||
		    r->head.method_name[0] == '\0')
			r->head.method_name = NULL;
		else {
			path = hreq_alloc(r, r->head.target_len + 1);
			http_target_split(r->head.target, r->head.target_len,
			    path, &q, &qlen);
			r->path = *path != '\0' ? path : "/";
		}
		hconn_refuse(c, code, reason);
		return;
	}
	path = hreq_alloc(r, r->head.target_len + 1);
	http_target_split(r->head.target, r->head.target_len, path, &q, &qlen);
	r->path = *path != '\0' ? path : "/";
	/* CONNECT's target is an authority: no path, no query. */
	if (r->head.method == EVHTTP_REQ_CONNECT) {
		r->path = "/";
		q = NULL;
	}
	if (q != NULL) {
		r->query_str = hreq_alloc(r, qlen + 1);
		memcpy((char *)r->query_str, q, qlen);
		((char *)r->query_str)[qlen] = '\0';
	}
	r->keepalive = 1;
	if ((r->head.method & c->conf->methods) == 0) {
		hconn_refuse(c, 501, "method not implemented");
		return;
	}
	if ((code = hconn_body_decide(c, why, sizeof why)) != 0) {
		hconn_refuse(c, code, why);
		return;
	}
	if (!r->head.chunked && r->head.content_length <= 0) {
		hconn_dispatch(c);
		return;
	}
	if (r->head.minor >= 1 && r->head.expect == 2) {
		hconn_refuse(c, 417, "expectation failed");
		return;
	}
	/* Told to go on only once the body is welcome (evhttp's rule). */
	if (r->head.minor >= 1 && r->head.expect == 1 &&
	    evbuffer_get_length(in) == 0)
		bufferevent_write(c->bev, "HTTP/1.1 100 Continue\r\n\r\n", 25);
	if (r->head.chunked) {
		c->state = HC_CHUNK_SIZE;
		c->total = 0;
	} else {
		c->state = HC_BODY;
		c->left = (uint64_t)r->head.content_length;
	}
}

/* A chunked body broke its framing or outgrew its cap: 413, closed. */
static void
hconn_cut(struct hconn *c, int over)
{
	if (over && c->counted)
		metrics_limit(c->conf->metrics, c->limit, 1);
	hconn_refuse(c, 413, over ? "request body too large" :
	    "malformed chunked request body");
}

/* HC_CHUNK_SIZE: one chunk-size line (hex digits only); 0 to wait. */
static int
hconn_chunk_size(struct hconn *c, struct evbuffer *in)
{
	struct evbuffer_ptr	 ptr;
	char			 line[CHUNK_LINE_MAX + 1];
	size_t			 n, i;
	uint64_t		 size = 0;

	ptr = evbuffer_search(in, "\n", 1, NULL);
	if (ptr.pos < 0) {
		if (evbuffer_get_length(in) > CHUNK_LINE_MAX)
			hconn_cut(c, 0);
		return (evbuffer_get_length(in) > CHUNK_LINE_MAX);
	}
	n = (size_t)ptr.pos;
	if (n > CHUNK_LINE_MAX) {
		hconn_cut(c, 0);
		return (1);
	}
	evbuffer_copyout(in, line, n);
	if (n > 0 && line[n - 1] == '\r')
		n--;
	line[n] = '\0';
	if (n == 0 || n > 15 || strspn(line, "0123456789abcdefABCDEF") < n) {
		hconn_cut(c, 0);
		return (1);
	}
	for (i = 0; i < n; i++) {
		char ch = line[i];

		size = size * 16 + (uint64_t)(ch <= '9' ? ch - '0' :
		    (ch | 0x20) - 'a' + 10);
	}
	if (size > c->cap - c->total) {
		hconn_cut(c, 1);
		return (1);
	}
	c->total += size;
	evbuffer_drain(in, (size_t)ptr.pos + 1);
	c->left = size;
	c->state = size > 0 ? HC_CHUNK_DATA : HC_TRAILER;
	return (1);
}

/* HC_CHUNK_END and HC_TRAILER: exactly an empty line; 0 to wait. */
static int
hconn_empty_line(struct hconn *c, struct evbuffer *in)
{
	unsigned char	ch[2];
	ev_ssize_t	got = evbuffer_copyout(in, ch, 2);
	size_t		n;

	if (got <= 0)
		return (0);
	n = (size_t)got;
	if (ch[0] == '\n')
		n = 1;
	else if (n == 2 && ch[0] == '\r' && ch[1] == '\n')
		n = 2;
	else if (n == 1 && ch[0] == '\r')
		return (0);
	else {
		hconn_cut(c, 0);
		return (1);
	}
	evbuffer_drain(in, n);
	if (c->state == HC_TRAILER)
		hconn_dispatch(c);
	else
		c->state = HC_CHUNK_SIZE;
	return (1);
}

/* Body bytes: into the request's body (dropped for HEAD, TRACE). */
static void
hconn_body_bytes(struct hconn *c, struct evbuffer *in)
{
	size_t	n = evbuffer_get_length(in);

	if (n > c->left)
		n = (size_t)c->left;
	if (c->ignore_body)
		evbuffer_drain(in, n);
	else
		evbuffer_remove_buffer(in, c->req.body, n);
	if ((c->left -= n) > 0)
		return;
	if (c->state == HC_BODY)
		hconn_dispatch(c);
	else
		c->state = HC_CHUNK_END;
}

/* One step on the input; 0 when it needs more bytes (or is not ours). */
static int
hconn_step(struct hconn *c, struct evbuffer *in)
{
	size_t	n;

	switch (c->state) {
	case HC_HEAD:
		n = hconn_head_end(c, in);
		if (n == 0 && evbuffer_get_length(in) <= c->conf->head_max)
			return (0);
		if (n == 0 || n > c->conf->head_max) {
			c->req.head.method_name = NULL;
			hconn_refuse(c, 431, "request head too large");
			return (1);
		}
		hconn_head(c, in, n);
		return (1);
	case HC_BODY:
	case HC_CHUNK_DATA:
		hconn_body_bytes(c, in);
		return (1);
	case HC_CHUNK_SIZE:
		return (hconn_chunk_size(c, in));
	case HC_CHUNK_END:
	case HC_TRAILER:
		return (hconn_empty_line(c, in));
	default:
		return (0);
	}
}

/*
 * Read what the input holds, a request at a time; a connection found
 * dead is left to the caller to free.
 */
static void
hconn_input_steps(struct hconn *c)
{
	struct evbuffer	*in = bufferevent_get_input(c->bev);

	c->depth++;
	while (!c->dead && evbuffer_get_length(in) > 0 && hconn_step(c, in))
		;
	if (!c->dead && c->state == HC_HANDLER &&
	    evbuffer_get_length(in) > c->conf->head_max)
		bufferevent_disable(c->bev, EV_READ);	/* enough waits */
	if (!c->dead)
		hconn_deadline_update(c, clock_mono_ms());
	c->depth--;
}

/* Read what the input holds; free the connection if it died meanwhile. */
static void
hconn_input(struct hconn *c)
{
	hconn_input_steps(c);
	if (c->dead && c->depth == 0)
		hconn_free(c);
}

/* Bytes arrived (decrypted ones: the handshake is done). */
static void
hconn_read_cb(struct bufferevent *bev, void *arg)
{
	struct hconn	*c = arg;

	(void)bev;
	c->handshaken = 1;
	hconn_input(c);
}


/*
 * After a reply (from the kick, once whoever replied has returned: the
 * handler may still read the request): close after it, or read the next
 * request once enough of it is written. The kick holds a depth around
 * this, so a connection that dies here is only marked: the kick frees it.
 */
static void
hconn_after_reply(struct hconn *c)
{
	struct evbuffer	*out = bufferevent_get_output(c->bev);
	struct evbuffer	*in = bufferevent_get_input(c->bev);

	if (c->eof || !c->req.keepalive) {
		c->state = HC_CLOSING;
		bufferevent_disable(c->bev, EV_READ);
		evbuffer_drain(in, evbuffer_get_length(in));
		if (evbuffer_get_length(out) == 0 || c->broken)
			hconn_release(c);
		return;
	}
	hreq_reset(&c->req);
	if (evbuffer_get_length(out) > HTTP_FLUSH_MAX) {
		c->state = HC_FLUSH;
		bufferevent_disable(c->bev, EV_READ);
		return;
	}
	c->state = HC_HEAD;
	if (c->quiet) {
		c->quiet = 0;
		hconn_timeouts(c, 1);
	}
	/* Enabling again would re-arm the read event: only when off. */
	if (!(bufferevent_get_enabled(c->bev) & EV_READ))
		bufferevent_enable(c->bev, EV_READ);
	hconn_input_steps(c);
}

/*
 * The next request's bytes, or the end of a reply: see to them now. The
 * kick is an event: the loop runs it, never one of our callbacks, so no
 * callback of this connection is under way (depth 0) and the free after
 * hconn_after_reply is the only one (the analyzer cannot know that).
 */
static void
hconn_kick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct hconn	*c = arg;

	(void)fd;
	(void)what;
	HK_ASSERT(c->depth == 0);
	if (c->replied) {
		c->replied = 0;
		if (evbuffer_get_length(c->wbuf) > 0) {
			(void)evbuffer_write(c->wbuf, bufferevent_getfd(c->bev));
			if (evbuffer_get_length(c->wbuf) > 0)
				evbuffer_add_buffer(bufferevent_get_output(
				    c->bev), c->wbuf);
		}
		c->depth++;
		hconn_after_reply(c);
		c->depth--;
		if (c->dead)
			hconn_free(c);
		return;
	}
	hconn_input(c);
}

/* The reply is complete (hreq_send_reply, hreq_reply_end); see above. */
void
hconn_replied(struct hconn *c)
{
	c->replied = 1;
	event_active(c->kick, EV_TIMEOUT, 0);
}

/* The output was written (down to its low watermark, 0). */
static void
hconn_write_cb(struct bufferevent *bev, void *arg)
{
	struct hconn	*c = arg;
	void		(*cb)(struct hconn *, void *) = c->req.flushcb;

	(void)bev;
	if (cb != NULL) {
		c->req.flushcb = NULL;
		c->depth++;
		cb(c, c->req.flusharg);
		c->depth--;
		if (c->dead) {
			if (c->depth == 0)
				hconn_free(c);
			return;
		}
	}
	if (c->state == HC_CLOSING)
		hconn_release(c);
	else if (c->state == HC_FLUSH) {
		c->state = HC_HEAD;
		if (c->quiet) {
			c->quiet = 0;
			hconn_timeouts(c, 1);
		}
		bufferevent_enable(c->bev, EV_READ);
		hconn_input(c);
	}
}

/*
 * End of file, an error or an idle timeout. A reply still pending: its
 * close callback forgets the request and the connection goes; without
 * one, the connection stays until the reply (evhttp's way), which is
 * still written after an end of file (a client may shut down its side
 * of the socket and wait for the answer). A stream ends with its
 * connection. Replies already queued are written before the close.
 */
static void
hconn_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct hconn	*c = arg;
	void		(*cb)(void *);

	(void)bev;
	if (what & BEV_EVENT_CONNECTED)
		return;
	c->eof = 1;
	if (what & (BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT))
		c->broken = 1;
	bufferevent_disable(c->bev, EV_READ);
	if (c->state == HC_HANDLER && c->req.state == HR_PENDING) {
		if ((cb = c->req.closecb) == NULL)
			return;
		c->req.closecb = NULL;
		c->depth++;
		cb(c->req.closearg);
		c->depth--;
		hconn_release(c);
		return;
	}
	if (c->state == HC_HANDLER && c->req.state == HR_DONE && !c->broken)
		return;		/* the kick closes after the reply */
	if (!c->broken && c->state != HC_HANDLER &&
	    evbuffer_get_length(bufferevent_get_output(c->bev)) > 0) {
		c->state = HC_CLOSING;	/* the write callback frees it */
		return;
	}
	hconn_release(c);
}

/* Arm the deadline timer to fire at mono ms 'at'. */
static void
hconn_arm(struct hconn *c, int64_t at, int64_t now)
{
	struct timeval	tv;

	tv = clock_ms_tv(at > now ? at - now : 0);
	evtimer_add(c->timer, &tv);
}

/*
 * A head is pending while the connection waits in HC_HEAD with bytes in,
 * or before its first head at all (from the accept).
 */
static void
hconn_deadline_update(struct hconn *c, int64_t now)
{
	int	pending;

	pending = c->state == HC_HEAD && (c->heads == 0 ||
	    evbuffer_get_length(bufferevent_get_input(c->bev)) > 0);
	if (!pending) {
		c->head_since = -1;
		if (!c->tls || c->handshaken)
			evtimer_del(c->timer);
		return;
	}
	if (c->head_since >= 0)
		return;
	c->head_since = c->heads == 0 ? c->accepted : now;
	if (!c->tls || c->handshaken)
		hconn_arm(c, c->head_since + c->conf->head_ms, now);
}

/*
 * A deadline: a TLS handshake not done in time closes the connection; a
 * head not whole in time closes it too, or, after requests, with a 408.
 */
static void
hconn_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct hconn	*c = arg;
	int64_t		 now = clock_mono_ms();

	(void)fd;
	(void)what;
	if (c->tls && !c->handshaken) {
		if (c->conf->handshaken != NULL && c->conf->handshaken(c->bev))
			c->handshaken = 1;
		else if (now - c->accepted < c->conf->handshake_ms) {
			hconn_arm(c, c->accepted + c->conf->handshake_ms, now);
			return;
		} else {
			metrics_limit(c->conf->metrics,
			    METRICS_LIMIT_HANDSHAKE_TIMEOUT, 1);
			log_warnx_rl(&hconn_timeout_rl, "limit: a connection "
			    "closed: no TLS handshake within heureka.server."
			    "handshake-timeout-ms (%lld ms; logged once a "
			    "minute)", (long long)c->conf->handshake_ms);
			hconn_free(c);
			return;
		}
	}
	if (c->head_since < 0 || c->state != HC_HEAD)
		return;
	if (now - c->head_since < c->conf->head_ms) {
		hconn_arm(c, c->head_since + c->conf->head_ms, now);
		return;
	}
	metrics_limit(c->conf->metrics, METRICS_LIMIT_HEAD_TIMEOUT, 1);
	log_warnx_rl(&hconn_timeout_rl, "limit: a connection closed: no whole "
	    "request head within heureka.server.head-timeout-ms (%lld ms; "
	    "logged once a minute)", (long long)c->conf->head_ms);
	if (c->heads == 0) {
		hconn_free(c);
		return;
	}
	c->head_since = -1;
	c->req.head.method_name = NULL;
	c->depth++;
	hconn_refuse(c, 408, "request head not complete within "
	    "heureka.server.head-timeout-ms");
	c->depth--;
	if (c->dead)
		hconn_free(c);
}

/* A connection on bev; see http.h. */
struct hconn *
hconn_new(const struct hfront_conf *conf, struct bufferevent *bev, int tls)
{
	struct hconn		*c = xcalloc(1, sizeof *c);
	struct sockaddr_storage	 ss;
	socklen_t		 sl = sizeof ss;
	int64_t			 now = clock_mono_ms();

	c->conf = conf;
	c->bev = bev;
	c->tls = tls;
	c->idle_s = conf->idle_s;
	c->state = HC_HEAD;
	c->accepted = now;
	c->head_since = -1;
	c->req.conn = c;
	c->req.body = evbuffer_new();
	c->wbuf = evbuffer_new();
	c->req.out = evbuffer_new();
	buf_init(&c->req.hdrs.b, 0);
	c->timer = evtimer_new(bufferevent_get_base(bev), hconn_timer_cb, c);
	c->kick = event_new(bufferevent_get_base(bev), -1, 0, hconn_kick_cb,
	    c);
	memset(&ss, 0, sizeof ss);
	if (getpeername(bufferevent_getfd(bev), (struct sockaddr *)&ss,
	    &sl) == 0) {
		if (ss.ss_family == AF_INET) {
			inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->
			    sin_addr, c->addr, sizeof c->addr);
			c->port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
		} else if (ss.ss_family == AF_INET6) {
			inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->
			    sin6_addr, c->addr, sizeof c->addr);
			c->port = ntohs(((struct sockaddr_in6 *)&ss)->
			    sin6_port);
		}
	}
	LIST_INSERT_HEAD(&hconn_all, c, entry);
	bufferevent_setcb(bev, hconn_read_cb, hconn_write_cb, hconn_event_cb,
	    c);
	hconn_timeouts(c, 1);
	bufferevent_enable(bev, EV_READ | EV_WRITE);
	c->head_since = now;
	hconn_arm(c, now + (tls ? conf->handshake_ms : conf->head_ms), now);
	return (c);
}

/* Told when it is freed; see http.h. */
void
hconn_set_closecb(struct hconn *c, void (*cb)(struct hconn *, void *),
    void *arg)
{
	c->closecb = cb;
	c->closearg = arg;
}

/* Close now; see http.h. */
void
hconn_free(struct hconn *c)
{
	void	(*cb)(struct hconn *, void *);
	void	(*rcb)(void *);

	if (c == NULL)
		return;
	if (c->depth > 0) {
		c->dead = 1;
		return;
	}
	c->depth++;	/* a close callback freeing it again is nothing */
	/* A reply still pending: its owner forgets the request first. */
	if (c->req.state == HR_PENDING && (rcb = c->req.closecb) != NULL) {
		c->req.closecb = NULL;
		rcb(c->req.closearg);
	}
	if ((cb = c->closecb) != NULL) {
		c->closecb = NULL;
		cb(c, c->closearg);
	}
	LIST_REMOVE(c, entry);
	event_free(c->timer);
	event_free(c->kick);
	evbuffer_free(c->wbuf);
	bufferevent_free(c->bev);
	hreq_release(&c->req);
	free(c);
}

/* The bufferevent; see http.h. */
struct bufferevent *
hconn_bufferevent(struct hconn *c)
{
	return (c->bev);
}

/* The loop; see http.h. */
struct event_base *
hconn_base(struct hconn *c)
{
	return (bufferevent_get_base(c->bev));
}

/* The client's address; see http.h. */
void
hconn_peer(struct hconn *c, char **addr, ev_uint16_t *port)
{
	*addr = c->addr;
	*port = c->port;
}

/* The idle timeout; see http.h. */
void
hconn_set_timeout(struct hconn *c, int secs)
{
	c->idle_s = secs;
	c->quiet = 1;		/* set again after the reply */
}

/* No read timeout while a reply is held; see http.h. */
void
hconn_quiet(struct hconn *c)
{
	c->quiet = 1;
	hconn_timeouts(c, 0);
}

/* Whether a whole head has arrived; see http.h. */
int
hconn_has_served(const struct hconn *c)
{
	return (c->heads > 0);
}

/*
 * Connections in the middle of something: a request head or body partly
 * received, or reply bytes not yet written; see http.h.
 */
size_t
hconn_busy(void)
{
	struct hconn	*c;
	size_t		 n = 0;

	LIST_FOREACH(c, &hconn_all, entry) {
		if ((c->state != HC_HEAD && c->state != HC_HANDLER &&
		    c->state != HC_CLOSING) ||
		    (c->state == HC_HEAD && evbuffer_get_length(
		    bufferevent_get_input(c->bev)) > 0) ||
		    evbuffer_get_length(bufferevent_get_output(c->bev)) > 0)
			n++;
	}
	return (n);
}
