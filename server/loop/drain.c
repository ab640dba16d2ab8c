/*
 * drain.c: the wait of a draining shutdown. On SIGTERM heurekad first
 * turns /health and readiness to 503 and ends the watch streams; requests
 * in flight (a body still arriving, a fetch waiting for its body, a reply
 * not yet written out) may then finish while the port stays open, for at
 * most heureka.server.shutdown-grace-ms; only then does the loop end and
 * the port close. This module is the wait: it asks the server what is
 * busy every DRAIN_POLL_MS and reports once, when nothing is or the grace
 * period is over. Polling rather than counting every way a request can
 * end keeps the server's paths unchanged; the poll walks the open
 * connections (hconn_busy), at most max-connections, 20 times a second
 * and only while draining.
 */
#include <stdlib.h>

#include <event2/event.h>

#include "clock.h"
#include "drain.h"
#include "xmalloc.h"

#define DRAIN_POLL_MS	50

struct drain {
	struct drain_deps	 d;
	struct event		*ev;
	int64_t			 start_ms;	/* monotonic */
	int			 over;
};

/* Drained, or out of time: report once. */
static void
drain_check(struct drain *dr)
{
	struct timeval	tv = { 0, DRAIN_POLL_MS * 1000 };
	int64_t		now = clock_mono_ms();
	size_t		busy;

	if (dr->over)
		return;
	busy = dr->d.busy(dr->d.arg);
	if (busy == 0 || now - dr->start_ms >= dr->d.grace_ms) {
		dr->over = 1;
		dr->d.done(dr->d.arg, busy, now - dr->start_ms);
		return;
	}
	evtimer_add(dr->ev, &tv);
}

/* The poll timer. */
static void
drain_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	drain_check(arg);
}

/* See drain.h. */
struct drain *
drain_start(const struct drain_deps *d)
{
	struct drain	*dr = xcalloc(1, sizeof *dr);

	dr->d = *d;
	dr->ev = evtimer_new(d->base, drain_cb, dr);
	dr->start_ms = clock_mono_ms();
	drain_check(dr);
	return (dr);
}

/* See drain.h. */
void
drain_free(struct drain *dr)
{
	if (dr == NULL)
		return;
	event_free(dr->ev);
	free(dr);
}
