/*
 * conn.c: admission of the main port's connections (see conn.h).
 *
 * Why at accept: max-connections used to count a connection once its
 * first request was complete, so connections that never finished a head
 * were not counted at all (issue 21: with a cap of 500, 2,000
 * connections sending unfinished 32 KiB heads held 2,000 descriptors and
 * 130 MiB; with the descriptor limit at 1024 and the cap at 900, 1,100
 * idle connections exhausted the descriptors, accept failed with EMFILE
 * and /health timed out). Every connection is counted the moment it is
 * accepted, and checked against the limits before it reads a byte: the
 * cap, and the descriptor reserve: at most RLIMIT_NOFILE less
 * descriptor-reserve less the descriptors open when the port opened (the
 * log, the listeners) are connections; the reserve is for the peers'
 * outgoing connections, the health port and files. Past a limit, the
 * oldest connection that has not yet sent a whole request head is closed
 * (it holds no request, and the head deadline would end it soon anyway),
 * so that a /health probe or a client still gets in while idle or slow
 * connections fill the cap; when every other connection has been
 * served, the newest is closed instead. An accept that fails with EMFILE
 * anyway is paused for a second by server.c (tmux's back-off). (With
 * evhttp's server the admission ran a turn after the accept, from an
 * event, since evhttp had no hook between the two; the front accepts
 * itself.)
 *
 * Unfinished heads in the memory budget (issue 21): the front holds a
 * connection's bytes in its input buffer until its head is whole (up to
 * HTTP_HEAD_MAX, 64 KiB), and max-memory-bytes did not see them. Until
 * a connection's first head is read, every byte read from it is held
 * so, so a callback on the input buffer adds the bytes read to the
 * registry's external bytes (REG_EXT_HEADS, heureka_memory_bytes
 * {part="heads"}) and gives them back once hconn_has_served() or the
 * connection closes. Past the budget, and only while the heads
 * themselves hold more than their share of it (CONN_HEADS_SHARE, an
 * eighth), the connection whose bytes passed it is closed (in the next
 * turn: not from inside its buffer's callback) and counted
 * (limit="head-memory"). The share keeps a registry filled to its budget
 * (which refuses new registrations, not requests) from making every new
 * request's first bytes close its connection: heartbeats, /health and
 * fetches go on at a full budget. Later heads of a kept-alive
 * connection are not counted here.
 */
#include <sys/queue.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "conn.h"
#include "http.h"
#include "log.h"
#include "metrics.h"
#include "registry.h"
#include "xmalloc.h"

/* One connection, from its accept to its close. */
struct conn {
	TAILQ_ENTRY(conn)	 entry;		/* fresh */
	int			 fresh;		/* on cs->fresh */
	struct conns		*cs;
	struct hconn		*hc;
	LIST_ENTRY(conn)	 all;
	struct bufferevent	*bev;
	struct evbuffer_cb_entry *head_cb;	/* counting its first head */
	size_t			 head_bytes;	/* counted */
	int			 shed;		/* to close: past the budget */
	TAILQ_ENTRY(conn)	 shed_entry;
};
TAILQ_HEAD(connq, conn);

struct conns {
	struct conns_deps	 d;
	struct connq		 fresh;		/* admitted, no head yet
						   (oldest first; lazily
						   pruned of served ones) */
	int64_t			 nofile;	/* 0: no limit */
	int64_t			 fd_cap;	/* connections the
						   descriptors allow */
	struct evconnlistener	*listener;
	struct event		*resume_ev;	/* accept again, next turn */
	int			 paused;	/* by us, for this turn */
	unsigned		 nturn;		/* accepted this turn */
	LIST_HEAD(, conn)	 all;
	struct connq		 shedq;		/* past the budget */
	struct event		*shed_ev;
};

/* The first heads' bytes of every port's connections (one registry). */
static size_t	conn_heads_total;

#define CONN_ACCEPT_BATCH	64	/* accepted a turn, at most */
#define CONN_HEADS_SHARE	8	/* heads may hold 1/8 of a full budget */

static void	conns_resume_cb(evutil_socket_t, short, void *);

static struct log_ratelim conn_cap_rl = LOG_RATELIM_INIT(60000, 1);
static struct log_ratelim conn_mem_rl = LOG_RATELIM_INIT(60000, 1);

/* Connections with their descriptor limit; see conn.h. */
struct conns *
conns_new(const struct conns_deps *deps)
{
	struct conns	*cs = xcalloc(1, sizeof *cs);
	struct rlimit	 rl;
	int		 fd;

	cs->d = *deps;
	TAILQ_INIT(&cs->fresh);
	TAILQ_INIT(&cs->shedq);
	LIST_INIT(&cs->all);
	cs->resume_ev = event_new(deps->base, -1, 0, conns_resume_cb, cs);
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		cs->nofile = (int64_t)rl.rlim_cur;
	/* The lowest free descriptor: how many are in use before any. */
	if ((fd = fcntl(0, F_DUPFD, 0)) >= 0)
		close(fd);
	cs->fd_cap = cs->nofile - cs->d.descriptor_reserve - (fd > 0 ? fd : 0);
	if (cs->nofile > 0 && cs->fd_cap < 1)
		cs->fd_cap = 1;
	return (cs);
}

/*
 * Stop counting c's first head: its bytes come out of the budget's
 * external bytes, and the callback goes.
 */
static void
conn_head_release(struct conn *c)
{
	if (c->head_cb == NULL)
		return;
	evbuffer_remove_cb_entry(bufferevent_get_input(c->bev), c->head_cb);
	c->head_cb = NULL;
	conn_heads_total -= c->head_bytes;
	c->head_bytes = 0;
	registry_set_external_bytes(c->cs->d.reg, REG_EXT_HEADS,
	    conn_heads_total);
}

/* Close the connections found past the budget (a turn of their own). */
static void
conns_shed_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conns	*cs = arg;
	struct conn	*c;

	(void)fd;
	(void)what;
	while ((c = TAILQ_FIRST(&cs->shedq)) != NULL) {
		TAILQ_REMOVE(&cs->shedq, c, shed_entry);
		c->shed = 0;
		hconn_free(c->hc);	/* conn_close_cb */
	}
}

/*
 * The input buffer's callback: bytes read while no head of c was read
 * whole wait in the buffer, so they count.
 */
static void
conn_head_cb(struct evbuffer *in, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct conn	*c = arg;
	struct conns	*cs = c->cs;

	(void)in;
	if (hconn_has_served(c->hc)) {
		conn_head_release(c);
		return;
	}
	if (info->n_added == 0 || c->shed)
		return;
	c->head_bytes += info->n_added;
	conn_heads_total += info->n_added;
	registry_set_external_bytes(cs->d.reg, REG_EXT_HEADS,
	    conn_heads_total);
	if (cs->d.memory_budget == 0 ||
	    conn_heads_total <= cs->d.memory_budget / CONN_HEADS_SHARE ||
	    registry_memory_used(cs->d.reg) <= cs->d.memory_budget)
		return;
	metrics_limit(cs->d.metrics, METRICS_LIMIT_HEAD_MEMORY, 1);
	log_warnx_rl(&conn_mem_rl, "limit: max-memory-bytes: unfinished "
	    "request heads hold %zu bytes, %zu used of %zu: a connection "
	    "is closed (logged once a minute)", conn_heads_total,
	    registry_memory_used(cs->d.reg), cs->d.memory_budget);
	c->shed = 1;
	TAILQ_INSERT_TAIL(&cs->shedq, c, shed_entry);
	if (cs->shed_ev == NULL)
		cs->shed_ev = event_new(cs->d.base, -1, 0, conns_shed_cb, cs);
	event_active(cs->shed_ev, EV_TIMEOUT, 0);
}

/* The front is freeing a connection: pass it on, then count it down. */
static void
conn_close_cb(struct hconn *hc, void *arg)
{
	struct conn	*c = arg;

	if (c->cs->d.closecb != NULL)
		c->cs->d.closecb(hc, c->cs->d.closearg);
	if (c->shed == 1)
		TAILQ_REMOVE(&c->cs->shedq, c, shed_entry);
	conn_head_release(c);
	if (c->fresh)
		TAILQ_REMOVE(&c->cs->fresh, c, entry);
	if (*c->cs->d.open > 0)
		(*c->cs->d.open)--;
	LIST_REMOVE(c, all);
	free(c);
}

/* The limit that fd's connection is past, or NULL; counted and logged. */
static const char *
conn_over(struct conns *cs, evutil_socket_t fd)
{
	const char	*why = NULL;

	if (*cs->d.open > (unsigned)cs->d.max_connections) {
		metrics_limit(cs->d.metrics, METRICS_LIMIT_CONNECTIONS, 1);
		why = cs->d.cap_key != NULL ? cs->d.cap_key :
		    "eureka.server.max-connections";
	} else if (cs->nofile > 0 && (int64_t)*cs->d.open > cs->fd_cap) {
		metrics_limit(cs->d.metrics, METRICS_LIMIT_DESCRIPTORS, 1);
		why = "heureka.server.descriptor-reserve";
	}
	if (why != NULL)
		log_warnx_rl(&conn_cap_rl, "limit: %u connections open, "
		    "descriptor %d of %lld (%s): one is closed, the oldest "
		    "that sent no whole request yet, else the newest (logged "
		    "once a minute)", *cs->d.open - 1, (int)fd,
		    (long long)cs->nofile, why);
	return (why);
}

/*
 * The oldest admitted connection that has not sent a whole head yet, or
 * NULL; served ones found on the way leave the queue.
 */
static struct conn *
conn_oldest_fresh(struct conns *cs)
{
	struct conn	*c;

	while ((c = TAILQ_FIRST(&cs->fresh)) != NULL) {
		if (!hconn_has_served(c->hc))
			return (c);
		TAILQ_REMOVE(&cs->fresh, c, entry);
		c->fresh = 0;
	}
	return (NULL);
}

/* The next loop turn: accept again. */
static void
conns_resume_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conns	*cs = arg;

	(void)fd;
	(void)what;
	cs->nturn = 0;
	if (cs->paused) {
		cs->paused = 0;
		evconnlistener_enable(cs->listener);
	}
}

/* The listener to stop for a turn when accepts pile up; see conn.h. */
void
conns_set_listener(struct conns *cs, struct evconnlistener *l)
{
	cs->listener = l;
}

/*
 * libevent's listener accepts until the backlog is empty, all in one
 * turn, and a closed connection's descriptor is released a turn later
 * (its bufferevent is finalised then): so the listener stops for the
 * rest of the turn once CONN_ACCEPT_BATCH connections came in or the
 * descriptors allow no more.
 */
static void
conns_throttle(struct conns *cs)
{
	if (cs->listener == NULL)
		return;
	if (cs->nturn++ == 0)
		event_active(cs->resume_ev, EV_TIMEOUT, 0);
	if (!cs->paused && (cs->nturn >= CONN_ACCEPT_BATCH ||
	    (cs->nofile > 0 && (int64_t)*cs->d.open >= cs->fd_cap))) {
		cs->paused = 1;
		evconnlistener_disable(cs->listener);
	}
}

/*
 * A new connection: counted, and past a limit the oldest unserved
 * connection or this one is closed; see conn.h.
 */
void
conns_accepted(struct conns *cs, const struct hfront_conf *fc,
    struct bufferevent *bev, int tls)
{
	struct conn	*c, *old = NULL;
	evutil_socket_t	 sock = bufferevent_getfd(bev);
	int		 one = 1;

	(*cs->d.open)++;
	conns_throttle(cs);
	if (conn_over(cs, sock) != NULL &&
	    (old = conn_oldest_fresh(cs)) == NULL) {
		/* Every other one is served: the new one goes. */
		bufferevent_free(bev);
		(*cs->d.open)--;
		return;
	}
	c = xcalloc(1, sizeof *c);
	c->cs = cs;
	c->hc = hconn_new(fc, bev, tls);
	c->bev = bev;
	LIST_INSERT_HEAD(&cs->all, c, all);
	if (cs->d.reg != NULL)
		c->head_cb = evbuffer_add_cb(bufferevent_get_input(bev),
		    conn_head_cb, c);
	hconn_set_closecb(c->hc, conn_close_cb, c);
	setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	TAILQ_INSERT_TAIL(&cs->fresh, c, entry);
	c->fresh = 1;
	if (old != NULL)
		hconn_free(old->hc);	/* no request of it arrived */
}

/* Free the admission state; see conn.h. */
void
conns_free(struct conns *cs)
{
	struct conn	*c;

	if (cs == NULL)
		return;
	while ((c = LIST_FIRST(&cs->all)) != NULL)
		hconn_free(c->hc);	/* its close callback unlinks it */
	event_free(cs->resume_ev);
	if (cs->shed_ev != NULL)
		event_free(cs->shed_ev);
	free(cs);
}
