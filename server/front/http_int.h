/*
 * http_int.h: what the front's files share (http_conn.c, http_req.c):
 * the connection, its request and the request's arena. Included by them
 * only; everything else uses http.h.
 */
#ifndef HTTP_INT_H
#define HTTP_INT_H

#include <sys/queue.h>

#include <stdint.h>

#include "http.h"

#define HTTP_OUT_HDRS	24	/* reply headers of one request, at most */
#define HTTP_ARENA_KEEP	(16 * 1024)	/* kept between requests */

/* Reply headers: name/value offsets into a buffer reused per request. */
struct hhdrs {
	struct buf	 b;
	uint32_t	 off[HTTP_OUT_HDRS][2];
	size_t		 n;
};

/* A block of arena beyond the first (a large request; rare). */
struct harena_extra {
	struct harena_extra	*next;
	/* the bytes follow */
};

/* Where a request is. */
enum hreq_state {
	HR_NONE,		/* no request */
	HR_PENDING,		/* handed to the callback, no reply yet */
	HR_STREAM,		/* a streamed reply under way */
	HR_DONE,		/* replied */
};

/* One request (one at a time per connection). */
struct hreq {
	struct hconn		*conn;		/* NULL: detached */
	enum hreq_state		 state;
	struct hhead		 head;
	const char		*path;
	const char		*query_str;
	struct hquery		 query;
	struct evbuffer		*body;		/* the connection's */
	struct evbuffer		*out;		/* the reply body */
	struct hhdrs		 hdrs;
	int			 code;
	int			 keepalive;	/* after this request */
	int			 stream_chunked;
	void			(*closecb)(void *);
	void			*closearg;
	void			(*flushcb)(struct hconn *, void *);
	void			*flusharg;
	/* The arena: one block reused, extra blocks freed per request. */
	char			*arena;
	size_t			 arena_cap;
	size_t			 arena_used;
	struct harena_extra	*extra;
};

/* Where a connection's byte stream is. */
enum hconn_state {
	HC_HEAD,		/* waiting for a whole request head */
	HC_BODY,		/* Content-Length bytes left */
	HC_CHUNK_SIZE,		/* a chunk-size line */
	HC_CHUNK_DATA,		/* chunk bytes left */
	HC_CHUNK_END,		/* the CRLF after a chunk's data */
	HC_TRAILER,		/* the empty line after the last chunk */
	HC_HANDLER,		/* the request is the callback's */
	HC_FLUSH,		/* waiting for a reply to be written */
	HC_CLOSING,		/* writing the last reply, then close */
};

/* One connection. */
struct hconn {
	const struct hfront_conf *conf;
	struct bufferevent	*bev;
	enum hconn_state	 state;
	struct hreq		 req;
	size_t			 scanned;	/* HC_HEAD: bytes searched */
	size_t			 line_start;	/* HC_HEAD: current line */
	uint64_t		 left;		/* body, chunk */
	uint64_t		 total;		/* chunked: body so far */
	uint64_t		 cap;		/* this body's cap */
	int			 counted;	/* a cap refusal is counted */
	enum metrics_limit	 limit;		/* ... under this limit */
	int			 ignore_body;	/* HEAD, TRACE: read, drop */
	struct event		*timer;		/* head/handshake deadline */
	struct event		*kick;		/* the next request, later */
	struct evbuffer		*wbuf;		/* a reply written at once */
	int64_t			 accepted;	/* monotonic ms */
	int64_t			 head_since;	/* -1: no head pending */
	uint64_t		 heads;		/* whole heads read */
	int			 tls;
	int			 handshaken;
	int			 idle_s;
	int			 depth;		/* in our callbacks */
	int			 dead;		/* free when depth is 0 */
	int			 eof;		/* nothing more to read */
	int			 broken;	/* nothing more to write either */
	int			 replied;	/* the kick sees to it */
	int			 quiet;		/* timeouts to set again */
	char			 addr[64];
	ev_uint16_t		 port;
	void			(*closecb)(struct hconn *, void *);
	void			*closearg;
	LIST_ENTRY(hconn)	 entry;
};

/* http_req.c */
void	hreq_reset(struct hreq *);
void	hreq_release(struct hreq *);
int	hreq_arena_init(struct hreq *, size_t);
void	hreq_write_head(struct hreq *, struct evbuffer *, size_t, int);

/* http_conn.c */
void	hconn_replied(struct hconn *);

#endif /* HTTP_INT_H */
