/*
 * hold.c: notice that the client of a request held open for its reply
 * has gone away, and free its connection.
 *
 * Some requests are answered later than they arrive: a fetch parked while
 * the cache builds its body a slice per loop turn (rest_park.c), the
 * drain barrier's ?wait= (barrier.c), a Consul blocking query
 * (consul.c). The evhttp server does not tell a handler that the client
 * of a request still waiting for its reply closed its socket (it has no
 * callback for that), so until the reply is written, minutes later for a
 * blocking query, the connection, its request and the owner's state
 * stay. A hold watches the socket itself (EV_READ): when it
 * turns readable, a MSG_PEEK recv tells end of file (or an error) from
 * bytes without taking any. At end of file the owner is called back to
 * forget its state (and disarm the hold), then the connection is freed,
 * the request with it. Bytes (a pipelined request, TLS records) are left
 * for evhttp; the watch ends there and the reply finds out.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdlib.h>

#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>

#include "hold.h"
#include "xmalloc.h"

/* A watch on a held request's socket. */
struct hold {
	struct evhttp_request	*req;
	struct event		*ev;
	void			(*gone)(void *);
	void			*arg;
};

/*
 * The socket of a held request is readable: at end of file or an error
 * the owner forgets the request, then its connection goes.
 */
static void
hold_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct hold			*h = arg;
	struct evhttp_connection	*evcon;
	char				 c;
	ssize_t				 n;

	(void)what;
	n = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
	if (n > 0)
		return;
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK ||
	    errno == EINTR)) {
		event_add(h->ev, NULL);
		return;
	}
	evcon = evhttp_request_get_connection(h->req);
	h->gone(h->arg);	/* disarms h */
	if (evcon != NULL)
		evhttp_connection_free(evcon);
}

/*
 * Watch the socket of req's connection; gone(arg) is called when its
 * client has gone, and must forget req and call hold_disarm. NULL when
 * the connection has no socket to watch (nothing is called back then).
 */
struct hold *
hold_arm(struct event_base *base, struct evhttp_request *req,
    void (*gone)(void *), void *arg)
{
	struct evhttp_connection	*evcon;
	struct bufferevent		*bev;
	struct hold			*h;

	if ((evcon = evhttp_request_get_connection(req)) == NULL ||
	    (bev = evhttp_connection_get_bufferevent(evcon)) == NULL ||
	    bufferevent_getfd(bev) < 0)
		return (NULL);
	h = xcalloc(1, sizeof *h);
	h->req = req;
	h->gone = gone;
	h->arg = arg;
	h->ev = event_new(base, bufferevent_getfd(bev), EV_READ, hold_read_cb,
	    h);
	event_add(h->ev, NULL);
	return (h);
}

/* Stop watching (the request is answered or gone); NULL is nothing. */
void
hold_disarm(struct hold *h)
{
	if (h == NULL)
		return;
	event_free(h->ev);
	free(h);
}
