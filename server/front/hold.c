/*
 * hold.c: notice that the client of a request held open for its reply
 * has gone away.
 *
 * Some requests are answered later than they arrive: a fetch parked while
 * the cache builds its body a slice per loop turn (rest_park.c), the
 * drain barrier's ?wait= (barrier.c), a Consul blocking query
 * (consul.c). Until the reply is written, minutes later for a blocking
 * query, the request and the owner's state stay, unless the owner hears
 * that the client closed its socket. The front (http_conn.c) keeps
 * reading a connection whose reply is pending and, at end of file or an
 * error, calls the request's close callback: a hold is that callback.
 * The owner forgets its state (and disarms the hold); the front then
 * frees the connection, the request with it. (With evhttp's server a
 * hold watched the socket itself with a MSG_PEEK recv, which could not
 * tell a TLS close from bytes.)
 */
#include <stdlib.h>

#include <event2/event.h>

#include "hold.h"
#include "http.h"
#include "xmalloc.h"

/* A watch on a held request's connection. */
struct hold {
	struct hreq	*req;
	void		(*gone)(void *);
	void		*arg;
};

/* The client of a held request went away: the owner forgets it. */
static void
hold_gone_cb(void *arg)
{
	struct hold	*h = arg;

	h->gone(h->arg);	/* disarms h */
}

/*
 * Watch req's connection; gone(arg) is called when its client has gone,
 * and must forget req and call hold_disarm. NULL when the connection is
 * gone already (nothing is called back then).
 */
struct hold *
hold_arm(struct event_base *base, struct hreq *req,
    void (*gone)(void *), void *arg)
{
	struct hold	*h;

	(void)base;
	if (hreq_conn(req) == NULL)
		return (NULL);
	h = xcalloc(1, sizeof *h);
	h->req = req;
	h->gone = gone;
	h->arg = arg;
	hreq_set_closecb(req, hold_gone_cb, h);
	hconn_quiet(hreq_conn(req));	/* a wait may outlast the idle time */
	return (h);
}

/*
 * Stop watching (the request is answered or gone); NULL is nothing. An
 * answered request has dropped its close callback already.
 */
void
hold_disarm(struct hold *h)
{
	if (h == NULL)
		return;
	hreq_clear_closecb(h->req, hold_gone_cb, h);
	free(h);
}
