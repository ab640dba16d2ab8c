/*
 * conn.c: admission of the main port's connections (see conn.h).
 *
 * Why at accept: max-connections used to count a connection once its
 * first request was complete, so connections that never finished a head
 * were not counted at all (issue 21: with a cap of 500, 2,000
 * connections sending unfinished 32 KiB heads held 2,000 descriptors and
 * 130 MiB; with the descriptor limit at 1024 and the cap at 900, 1,100
 * idle connections exhausted the descriptors, accept failed with EMFILE
 * and /health timed out). Now every connection is counted the moment
 * evhttp makes its bufferevent, and the newest past the cap is closed.
 *
 * evhttp 2.1 gives no hook between accepting a socket and reading from
 * it other than the bufferevent callback, which runs before the
 * connection object exists, and a NULL from it does not refuse (evhttp
 * then makes a bufferevent of its own). So the bufferevent is held (a
 * reference) and admitted by an event made active at once: it runs in
 * the same loop turn, after evhttp has set the connection up and before
 * any read of the new socket can be seen, takes evhttp's close callback
 * and checks the limits: the cap, and the descriptor reserve: at most
 * RLIMIT_NOFILE less descriptor-reserve less the descriptors open when
 * the port opened (the log, the listeners) are connections; the reserve
 * is for the peers' outgoing connections, the health port and files.
 * Past a limit, the oldest
 * connection that has not yet sent a whole request head is closed (it
 * holds nothing of evhttp's, and the head deadline would end it soon
 * anyway), so that a /health probe or a client still gets in while
 * idle or slow connections fill the cap; when every other connection
 * has been served, the newest is closed instead. An accept that fails
 * with EMFILE anyway is paused for a second by server.c (tmux's
 * back-off). libevent's listener accepts in a loop until the backlog is
 * empty, all before the admission runs; so the listener stops for the
 * rest of a turn once CONN_ACCEPT_BATCH connections are waiting or the
 * descriptors allow no more, and the admission starts it again.
 *
 * Unfinished heads in the memory budget (issue 21): the guard holds a
 * connection's bytes until its head is whole (up to GUARD_HEAD_MAX, 64
 * KiB), and max-memory-bytes did not see them. Until a connection's
 * first head is passed on, every byte read from it is held so (the
 * guard moves them out of the input buffer; nothing else consumes
 * them), so a callback on the input buffer, which runs before the
 * guard's, adds the bytes read to the registry's external bytes
 * (REG_EXT_HEADS, heureka_memory_bytes{part="heads"}) and gives them
 * back once guard_has_served() or the connection closes. Past the
 * budget, the connection whose bytes passed it is closed (in the next
 * turn: not from inside its buffer's callback) and counted
 * (limit="head-memory"). Later heads of a kept-alive connection are not
 * counted here; the guard alone knows those bytes.
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
#include <event2/http.h>
#include <event2/listener.h>

#include "conn.h"
#include "guard.h"
#include "log.h"
#include "metrics.h"
#include "registry.h"
#include "xmalloc.h"

/* One connection, from its accept to its close. */
struct conn {
	TAILQ_ENTRY(conn)	 entry;		/* pending, or fresh */
	int			 fresh;		/* on cs->fresh */
	struct conns		*cs;
	struct bufferevent	*bev;
	struct evhttp_connection *evcon;	/* once admitted */
	struct guard		*guard;
	struct evbuffer_cb_entry *head_cb;	/* counting its first head */
	size_t			 head_bytes;	/* counted */
	int			 shed;		/* to close: past the budget */
	TAILQ_ENTRY(conn)	 shed_entry;
};
TAILQ_HEAD(connq, conn);

struct conns {
	struct conns_deps	 d;
	struct connq		 pending;	/* accepted this turn */
	struct connq		 fresh;		/* admitted, no head yet
						   (oldest first; lazily
						   pruned of served ones) */
	struct event		*admit_ev;
	int64_t			 nofile;	/* 0: no limit */
	int64_t			 fd_cap;	/* connections the
						   descriptors allow */
	struct evconnlistener	*listener;	/* NULL: never paused */
	int			 paused;	/* by us, for this turn */
	unsigned		 npending;
	struct connq		 shedq;		/* past the budget */
	struct event		*shed_ev;
};

/* The first heads' bytes of every port's connections (one registry). */
static size_t	conn_heads_total;

#define CONN_ACCEPT_BATCH	64	/* accepted a turn, at most */

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
	TAILQ_INIT(&cs->pending);
	TAILQ_INIT(&cs->fresh);
	TAILQ_INIT(&cs->shedq);
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
		/* Still pending: the admission closes it (c->evcon unset). */
		if (c->evcon != NULL)
			evhttp_connection_free(c->evcon);	/* conn_gone */
		else
			c->shed = 2;
	}
}

/*
 * The input buffer's callback, before the guard's: bytes read while no
 * head of c was passed on are held by the guard, so they count.
 */
static void
conn_head_cb(struct evbuffer *in, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct conn	*c = arg;
	struct conns	*cs = c->cs;

	(void)in;
	if (guard_has_served(c->guard)) {
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

/* Forget a connection (counted down). */
static void
conn_gone(struct conn *c)
{
	if (c->shed == 1)
		TAILQ_REMOVE(&c->cs->shedq, c, shed_entry);
	conn_head_release(c);
	if (c->fresh)
		TAILQ_REMOVE(&c->cs->fresh, c, entry);
	guard_free(c->guard);
	if (*c->cs->d.open > 0)
		(*c->cs->d.open)--;
	free(c);
}

/* evhttp is freeing a connection: pass it on, then guard and count go. */
static void
conn_close_cb(struct evhttp_connection *evcon, void *arg)
{
	struct conn	*c = arg;

	if (c->cs->d.closecb != NULL)
		c->cs->d.closecb(evcon, c->cs->d.closearg);
	conn_gone(c);
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
		if (!guard_has_served(c->guard))
			return (c);
		TAILQ_REMOVE(&cs->fresh, c, entry);
		c->fresh = 0;
	}
	return (NULL);
}

/*
 * Admit the connections accepted this turn: each takes evhttp's close
 * callback; past a limit, the oldest unserved connection or the new one
 * is closed.
 */
static void
conns_admit_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conns			*cs = arg;
	struct conn			*c, *old;
	void				*evcon;
	evutil_socket_t			 sock;
	int				 one = 1;

	(void)fd;
	(void)what;
	while ((c = TAILQ_FIRST(&cs->pending)) != NULL) {
		TAILQ_REMOVE(&cs->pending, c, entry);
		cs->npending--;
		evcon = NULL;
		bufferevent_getcb(c->bev, NULL, NULL, NULL, &evcon);
		if (evcon == NULL) {
			/* evhttp gave up on it (bufferevent_free cleared it). */
			conn_head_release(c);	/* while bev is ours */
			bufferevent_decref(c->bev);
			conn_gone(c);
			continue;
		}
		c->evcon = evcon;
		evhttp_connection_set_closecb(evcon, conn_close_cb, c);
		bufferevent_decref(c->bev);
		sock = bufferevent_getfd(c->bev);
		if (c->shed != 0) {
			/* Its head passed the budget before it was admitted. */
			if (c->shed == 1) {
				TAILQ_REMOVE(&cs->shedq, c, shed_entry);
				c->shed = 0;
			}
			evhttp_connection_free(evcon);
			continue;
		}
		if (conn_over(cs, sock) != NULL) {
			/* No request of old reached evhttp: free it. */
			if ((old = conn_oldest_fresh(cs)) == NULL) {
				evhttp_connection_free(evcon);
				continue;
			}
			evhttp_connection_free(old->evcon);
		}
		setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		TAILQ_INSERT_TAIL(&cs->fresh, c, entry);
		c->fresh = 1;
	}
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

/* A new connection's bufferevent; see conn.h. */
void
conns_accepted(struct conns *cs, struct bufferevent *bev, int tls)
{
	struct conn	*c = xcalloc(1, sizeof *c);

	if (cs->admit_ev == NULL)
		cs->admit_ev = event_new(cs->d.base, -1, 0, conns_admit_cb, cs);
	c->cs = cs;
	c->bev = bev;
	c->guard = guard_attach(bev, tls);
	/* After the guard's: evbuffer callbacks run newest first. */
	if (cs->d.reg != NULL)
		c->head_cb = evbuffer_add_cb(bufferevent_get_input(bev),
		    conn_head_cb, c);
	(*cs->d.open)++;
	bufferevent_incref(bev);
	TAILQ_INSERT_TAIL(&cs->pending, c, entry);
	cs->npending++;
	event_active(cs->admit_ev, EV_TIMEOUT, 0);
	if (cs->listener != NULL && !cs->paused &&
	    (cs->npending >= CONN_ACCEPT_BATCH ||
	    (cs->nofile > 0 && (int64_t)*cs->d.open >= cs->fd_cap))) {
		cs->paused = 1;
		evconnlistener_disable(cs->listener);
	}
}

/* Free the admission state; see conn.h. */
void
conns_free(struct conns *cs)
{
	struct conn	*c;

	if (cs == NULL)
		return;
	while ((c = TAILQ_FIRST(&cs->pending)) != NULL) {
		TAILQ_REMOVE(&cs->pending, c, entry);
		if (c->shed == 1)
			TAILQ_REMOVE(&cs->shedq, c, shed_entry);
		conn_head_release(c);
		guard_free(c->guard);
		bufferevent_decref(c->bev);
		free(c);
	}
	if (cs->admit_ev != NULL)
		event_free(cs->admit_ev);
	if (cs->shed_ev != NULL)
		event_free(cs->shed_ev);
	free(cs);
}
