/*
 * http.h: heurekad's HTTP/1.1 front, the one parser and the one request
 * type of every incoming request (issue 27). A connection (struct hconn)
 * reads request heads on a libevent bufferevent (plain or OpenSSL), parses
 * each head once (http_parse.c: strict framing, no control characters, no
 * allocation per header), frames its body, calls the front's callback
 * with a struct hreq and writes its reply; one request at a time, so
 * pipelined requests are answered in order. http_conn.c says why this
 * replaced evhttp's server side, with the measurements.
 *
 * A request's strings (method, target, path, header names and values,
 * decoded query parameters) live in its connection's arena, a block
 * reused from request to request: they are valid until the reply is
 * sent or the connection goes.
 */
#ifndef HTTP_H
#define HTTP_H

#include <stddef.h>
#include <stdint.h>

#include <event2/http.h>	/* enum evhttp_cmd_type: the method bits */
#include <event2/util.h>

#include "buf.h"
#include "metrics.h"	/* enum metrics_limit: body_cap's counter */

struct bufferevent;
struct event_base;
struct evbuffer;
struct hconn;
struct hreq;

#define HTTP_HEAD_MAX		(64 * 1024)
/* What a route that takes no body reads and ignores (Java sends "{}"). */
#define HTTP_IGNORED_BODY_MAX	1024
/* The header no client may send (it carried the old guard's verdicts). */
#define HTTP_RESERVED_HEADER	"X-Heureka-Guard"

/* One header of a parsed head: NUL-terminated, in place. */
struct hhdr {
	const char	*name;
	const char	*value;		/* trimmed as evhttp trimmed */
	size_t		 name_len;
};

/* What a request head says, as http_parse_head() found it. */
struct hhead {
	int		 method;	/* EVHTTP_REQ_*, 0 if unknown */
	const char	*method_name;	/* NUL-terminated in place */
	const char	*target;	/* NUL-terminated in place */
	size_t		 target_len;
	int		 minor;		/* HTTP/1.minor */
	int64_t		 content_length; /* -1 when absent */
	int		 chunked;
	int		 expect;	/* 1: 100-continue, 2: another */
	struct hhdr	*hdrs;		/* the caller's array */
	size_t		 nhdrs;
};

/*
 * Parse one request head in place (len bytes up to and including its
 * empty line; the bytes are modified: names, values, method and target
 * end in NUL), its headers into hdrs (at most maxhdrs: one per line of
 * the head is enough). 0 when heurekad takes it, else the status to
 * answer with *reason set (a static string). Pure: safe on any bytes.
 */
int	http_parse_head(char *, size_t, struct hhead *, struct hhdr *hdrs,
	    size_t maxhdrs, const char **reason);
/* Lines in a head of len bytes (a bound on its headers). */
size_t	http_head_lines(const char *, size_t);
/*
 * The path of a request target as evhttp's lenient URI parse gave it,
 * into out (NUL-terminated; out holds len + 1), and where its query
 * starts (NULL: none). -1 for a target that has no path (bad authority).
 */
int	http_target_split(const char *, size_t, char *out,
	    const char **query, size_t *querylen);
/*
 * Decode %XX (and '+' as a space when plus) of n bytes at s into out
 * (n + 1 bytes); malformed escapes stay as they are. The length.
 */
size_t	http_decode(const char *, size_t, int plus, char *out);

/* A decoded query: parameters in order, in the request's arena. */
struct hkv {
	const char	*key;
	const char	*value;
};
struct hquery {
	struct hkv	*kv;
	size_t		 n;
};
/* The first value of name (case-sensitive), or NULL. */
const char	*hquery_get(const struct hquery *, const char *);
/* name's value as a decimal int64 into *out: 1, 0 absent or empty, -1 bad. */
int		 hquery_i64(const struct hquery *, const char *, int64_t *);

/*
 * What a front (one listening port) does with requests: the callback
 * gets each request and must reply exactly once (now or later), and the
 * body a request may bring, decided on its head.
 */
struct hfront_conf {
	void		(*cb)(struct hreq *, void *);
	void		*cbarg;
	/*
	 * The cap on the body of a request: 0 with *cap set and *limit the
	 * limit a body past *cap counts under in /metrics, else the status
	 * with reason filled in; NULL: no request takes a body.
	 */
	int		(*body_cap)(void *, const struct hhead *, const char *path,
			    uint64_t *cap, enum metrics_limit *limit,
			    char *reason, size_t);
	void		*body_cap_arg;
	/*
	 * Answer a request refused before its body (code, reason; the
	 * connection closes after it): a route's 4xx with its headers.
	 */
	void		(*reject)(struct hreq *, int, const char *, void *);
	int		 methods;	/* allowed EVHTTP_REQ_* bits; else 501 */
	size_t		 head_max;	/* <= HTTP_HEAD_MAX */
	int		 idle_s;	/* keep-alive idle timeout */
	int64_t		 handshake_ms;	/* TLS handshake deadline */
	int64_t		 head_ms;	/* request head deadline */
	int		(*handshaken)(struct bufferevent *);
	struct metrics	*metrics;	/* NULL: not counted */
};

/* http_conn.c: connections. */
/*
 * A connection on bev (a socket bufferevent with its fd set; tls: an
 * OpenSSL one), reading from now; its deadlines run from now. conf is
 * borrowed and outlives it.
 */
struct hconn	*hconn_new(const struct hfront_conf *, struct bufferevent *,
		    int tls);
/* Close now: close callbacks run, a pending request goes with it. */
void		 hconn_free(struct hconn *);
/* Told when the connection is freed (one callback). */
void		 hconn_set_closecb(struct hconn *,
		    void (*)(struct hconn *, void *), void *);
struct bufferevent *hconn_bufferevent(struct hconn *);
struct event_base *hconn_base(struct hconn *);
/* The client's address (borrowed) and port. */
void		 hconn_peer(struct hconn *, char **, ev_uint16_t *);
/* The idle timeout after this request, in seconds. */
void		 hconn_set_timeout(struct hconn *, int);
/*
 * No read timeout until the reply (a request held for long: the socket
 * is still read, for its close); the timeouts come back after it.
 */
void		 hconn_quiet(struct hconn *);
/* Whether a whole request head has arrived on it yet. */
int		 hconn_has_served(const struct hconn *);
/* Connections in the middle of a request (a draining shutdown waits). */
size_t		 hconn_busy(void);

/* http_req.c: the request. */
/*
 * A request of no connection, from a whole head (tests and tools): its
 * replies are kept (code, headers, body) and sent nowhere. NULL when the
 * head does not parse.
 */
struct hreq	*hreq_new_head(const char *, size_t);
void		 hreq_free(struct hreq *);		/* NULL is fine */
enum evhttp_cmd_type hreq_method(struct hreq *);	/* 0: unknown */
const char	*hreq_method_name(struct hreq *);
const char	*hreq_uri(struct hreq *);	/* the target as sent */
const char	*hreq_path(struct hreq *);	/* not decoded; "/" at least */
const char	*hreq_query_string(struct hreq *);	/* NULL: none */
struct hquery	*hreq_query(struct hreq *);	/* set by the router */
const char	*hreq_header(struct hreq *, const char *);
/* Header i of the request, in order: 1 with name and value, 0 past. */
int		 hreq_header_at(struct hreq *, size_t, const char **,
		    const char **);
int		 hreq_wants_json(struct hreq *);
int		 hreq_wants_gzip(struct hreq *);
int		 hreq_wants_compact(struct hreq *);	/* X-Eureka-Accept */
int		 hreq_is_replication(struct hreq *);
/* The connection, NULL once it is gone (a stream's end). */
struct hconn	*hreq_conn(struct hreq *);
/* Whether the TLS client sent a certificate that verified. */
int		 hreq_peer_verified(struct hreq *);
/* n bytes of the request's arena (freed with the request). */
void		*hreq_alloc(struct hreq *, size_t);
/*
 * Called when the connection goes away with the reply still pending
 * (the owner forgets req; its connection is then freed); NULL clears.
 */
void		 hreq_set_closecb(struct hreq *, void (*)(void *), void *);
/* Clear it if it is still cb with arg (the request may be a new one). */
void		 hreq_clear_closecb(struct hreq *, void (*)(void *), void *);

/*
 * The body, bounded by max, a gzip Content-Encoding inflated: copied into
 * out (read_body) or lent (body_view, inflated into scratch); 0, or the
 * status to answer (413, 400, 415) with *cause set.
 */
int		 hreq_read_body(struct hreq *, size_t max, struct buf *out,
		    const char **cause);
int		 hreq_body_view(struct hreq *, size_t max, struct buf *scratch,
		    const char **data, size_t *len, const char **cause);

/* Reply headers (copied); the first of a name, or NULL. */
struct hhdrs;
struct hhdrs	*hreq_output_headers(struct hreq *);
void		 hhdrs_add(struct hhdrs *, const char *, const char *);
const char	*hhdrs_find(struct hhdrs *, const char *);
struct evbuffer	*hreq_output_buffer(struct hreq *);
int		 hreq_response_code(struct hreq *);
/* The reply: body (NULL: the output buffer's) is taken. */
void		 hreq_send_reply(struct hreq *, int, const char *,
		    struct evbuffer *);
void		 hreq_reply(struct hreq *, int code, const char *ctype,
		    const char *body, size_t len);
void		 hreq_reply_safe(struct hreq *, int code, const char *ctype,
		    const char *body, size_t len);
void		 hreq_error(struct hreq *, int code, const char *reason);
/* A streamed reply: chunked on HTTP/1.1, to the close on 1.0. */
void		 hreq_reply_start(struct hreq *, int, const char *);
void		 hreq_reply_chunk(struct hreq *, struct evbuffer *);
void		 hreq_reply_chunk_with_cb(struct hreq *, struct evbuffer *,
		    void (*)(struct hconn *, void *), void *);
void		 hreq_reply_end(struct hreq *);

#endif /* HTTP_H */
