/*
 * dnssrv.c: heureka's DNS interface on the event loop: one UDP socket and
 * one TCP listener on the same port (heureka.dns.port, 8600 like
 * Consul's), the question parsed by common/dnsmsg.c, the records found by
 * dnszone.c on the lease table at the moment of the query.
 *
 * Why not libevent's evdns server (evdns_add_server_port_with_base): it
 * serves UDP only, builds answers to a fixed 512 bytes without EDNS0, and
 * its parser is not reachable for a fuzz target. RFC 7766 requires TCP of
 * an authoritative server and a truncated UDP answer is only useful with
 * it, so both transports share one codec of ours: the same bytes are
 * fuzzed (tests/fuzz/fuzz_dnsmsg.c) that both sockets see. No new
 * dependency: plain libevent events, an evconnlistener and bufferevents.
 *
 * Bounds: a UDP read callback answers at most DNSSRV_UDP_BURST datagrams
 * (the rest wait for the next loop turn); a datagram's answer is never
 * larger than the query's EDNS0 size (512 bytes without one), a TCP one
 * never larger than 65535; at most heureka.dns.max-tcp-connections TCP
 * connections (past it a new one is closed at once), each closed after
 * heureka.dns.tcp-idle-ms without a byte either way, or when it leaves
 * more than DNSSRV_TCP_OUT_MAX of answers unread. Malformed queries get
 * FORMERR (a header at least) or nothing; neither costs more than the
 * parse.
 *
 * Port 0 (the tests) binds UDP on a free port the kernel picks, then TCP
 * on the same number, which another process may hold already (94-dns.sh
 * failed at start-up now and then with "Address already in use"): then a
 * new UDP port is picked, at most DNSSRV_BIND_TRIES times in all.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <netinet/in.h>

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <event2/util.h>

#include "bug.h"
#include "config.h"
#include "dnsmsg.h"
#include "dnssrv.h"
#include "dnszone.h"
#include "gate.h"
#include "log.h"
#include "xmalloc.h"

#define DNSSRV_UDP_BURST	64		/* datagrams per callback */
#define DNSSRV_TCP_OUT_MAX	(256 * 1024)	/* unread answers */
#define DNSSRV_BIND_TRIES	8		/* port 0: UDP ports tried */

/* One TCP connection. */
struct dnssrv_tcp {
	TAILQ_ENTRY(dnssrv_tcp)	 entry;
	struct dnssrv		*srv;
	struct bufferevent	*bev;
};
TAILQ_HEAD(dnssrv_tcpq, dnssrv_tcp);

/* The DNS front: its sockets, connections and counters. */
struct dnssrv {
	struct dnssrv_deps	 d;
	evutil_socket_t		 udp_fd;
	struct event		*udp_ev;
	struct evconnlistener	*tcp;
	struct dnssrv_tcpq	 conns;
	int			 nconns;
	int			 port;
	struct dnssrv_stats	 st;
	uint8_t			 out[DNS_TCP_MAX];	/* one answer */
};

/* A DNS front over deps (copied); not yet bound. */
struct dnssrv *
dnssrv_new(const struct dnssrv_deps *deps)
{
	struct dnssrv	*srv = xcalloc(1, sizeof *srv);

	srv->d = *deps;
	srv->udp_fd = -1;
	TAILQ_INIT(&srv->conns);
	return (srv);
}

/* Close one TCP connection. */
static void
dnssrv_tcp_free(struct dnssrv_tcp *c)
{
	TAILQ_REMOVE(&c->srv->conns, c, entry);
	c->srv->nconns--;
	bufferevent_free(c->bev);
	free(c);
}

/* Close everything. */
void
dnssrv_free(struct dnssrv *srv)
{
	struct dnssrv_tcp	*c;

	if (srv == NULL)
		return;
	while ((c = TAILQ_FIRST(&srv->conns)) != NULL) {
		dnssrv_tcp_free(c);
		/* dnssrv_tcp_free unlinked it from its server, this one. */
		HK_ASSERT(TAILQ_FIRST(&srv->conns) != c);
	}
	if (srv->tcp != NULL)
		evconnlistener_free(srv->tcp);
	if (srv->udp_ev != NULL)
		event_free(srv->udp_ev);
	if (srv->udp_fd >= 0)
		evutil_closesocket(srv->udp_fd);
	free(srv);
}

/* The bound port (0 before dnssrv_start). */
int
dnssrv_port(const struct dnssrv *srv)
{
	return (srv->port);
}

/* The counters. */
const struct dnssrv_stats *
dnssrv_stats(const struct dnssrv *srv)
{
	return (&srv->st);
}

/* Answer one query; see dnssrv.h. */
size_t
dnssrv_answer(struct dnssrv *srv, const uint8_t *query, size_t len,
    uint8_t *out, size_t max, int tcp, struct hk_time now)
{
	struct dnsmsg_query	 q;
	struct dnszone_result	 r;
	struct dnsmsg_answer	 fail;
	size_t			 n;

	switch (dnsmsg_parse(query, len, &q)) {
	case DNSMSG_OK:
		break;
	case DNSMSG_DROP:
		srv->st.dropped++;
		return (0);
	case DNSMSG_FORMERR:
		srv->st.formerr++;
		return (dnsmsg_build_error(query, len, DNS_RCODE_FORMERR, out,
		    max));
	case DNSMSG_NOTIMP:
		return (dnsmsg_build_error(query, len, DNS_RCODE_NOTIMP, out,
		    max));
	}
	if (!tcp && max > dnsmsg_udp_limit(&q))
		max = dnsmsg_udp_limit(&q);
	/* Reads wait for the start-up sync, as the HTTP API's do (§6.4). */
	if (!gate_allow_read(srv->d.gate, now.mono_ms)) {
		memset(&fail, 0, sizeof fail);
		fail.rcode = DNS_RCODE_SERVFAIL;
		return (dnsmsg_build(&q, &fail, out, max));
	}
	dnszone_lookup(srv->d.reg, srv->d.conf->dns_domain,
	    (uint32_t)srv->d.conf->dns_ttl, &q, now.mono_ms, &r);
	n = dnsmsg_build(&q, &r.a, out, max);
	dnszone_result_free(&r);
	if (n == 0) {
		/* Only a question too large for the budget: say so. */
		return (dnsmsg_build_error(query, len, DNS_RCODE_SERVFAIL, out,
		    max));
	}
	if (!tcp && n >= 3 && (out[2] & 0x02))
		srv->st.truncated++;
	return (n);
}

/* Datagrams arrived: answer up to DNSSRV_UDP_BURST of them. */
static void
dnssrv_udp_cb(evutil_socket_t fd, short what, void *arg)
{
	struct dnssrv		*srv = arg;
	struct sockaddr_storage	 from;
	socklen_t		 fromlen;
	uint8_t			 in[DNS_UDP_MAX];
	ssize_t			 got;
	size_t			 n;
	struct hk_time		 now = clock_now();
	int			 i;

	(void)what;
	for (i = 0; i < DNSSRV_UDP_BURST; i++) {
		fromlen = sizeof from;
		got = recvfrom(fd, in, sizeof in, MSG_DONTWAIT,
		    (struct sockaddr *)&from, &fromlen);
		if (got < 0)
			return;		/* EAGAIN: drained */
		srv->st.udp_queries++;
		n = dnssrv_answer(srv, in, (size_t)got, srv->out,
		    DNS_UDP_MAX, 0, now);
		if (n == 0)
			continue;
		/* A full socket buffer drops the answer: UDP's contract. */
		if (sendto(fd, srv->out, n, MSG_DONTWAIT,
		    (struct sockaddr *)&from, fromlen) < 0)
			srv->st.dropped++;
	}
}

/* Bytes on a TCP connection: answer each complete length-framed query. */
static void
dnssrv_tcp_read_cb(struct bufferevent *bev, void *arg)
{
	struct dnssrv_tcp	*c = arg;
	struct dnssrv		*srv = c->srv;
	struct evbuffer		*in = bufferevent_get_input(bev);
	struct evbuffer		*out = bufferevent_get_output(bev);
	struct hk_time		 now = clock_now();
	uint8_t			 lenb[2];
	const uint8_t		*q;
	size_t			 qlen, n;

	while (evbuffer_get_length(in) >= 2) {
		evbuffer_copyout(in, lenb, 2);
		qlen = (size_t)lenb[0] << 8 | lenb[1];
		if (evbuffer_get_length(in) < 2 + qlen)
			return;
		q = evbuffer_pullup(in, (ev_ssize_t)(2 + qlen));
		srv->st.tcp_queries++;
		n = dnssrv_answer(srv, q + 2, qlen, srv->out + 2,
		    sizeof srv->out - 2, 1, now);
		evbuffer_drain(in, 2 + qlen);
		if (n == 0) {
			/* Nothing to say to it (a response, a stub): close. */
			dnssrv_tcp_free(c);
			return;
		}
		srv->out[0] = (uint8_t)(n >> 8);
		srv->out[1] = (uint8_t)(n & 0xff);
		evbuffer_add(out, srv->out, n + 2);
		if (evbuffer_get_length(out) > DNSSRV_TCP_OUT_MAX) {
			log_debug("%s: a DNS client does not read its "
			    "answers: closed", __func__);
			dnssrv_tcp_free(c);
			return;
		}
	}
}

/* End of file, an error or the idle deadline: the connection goes. */
static void
dnssrv_tcp_event_cb(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT))
		dnssrv_tcp_free(arg);
}

/* A new TCP connection, unless the cap is reached. */
static void
dnssrv_accept_cb(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct dnssrv		*srv = arg;
	struct dnssrv_tcp	*c;
	struct timeval		 idle;

	(void)l;
	(void)sa;
	(void)salen;
	if (srv->nconns >= srv->d.conf->dns_max_tcp) {
		srv->st.tcp_refused++;
		evutil_closesocket(fd);
		return;
	}
	c = xcalloc(1, sizeof *c);
	c->srv = srv;
	c->bev = bufferevent_socket_new(srv->d.base, fd,
	    BEV_OPT_CLOSE_ON_FREE);
	if (c->bev == NULL) {
		evutil_closesocket(fd);
		free(c);
		return;
	}
	TAILQ_INSERT_TAIL(&srv->conns, c, entry);
	srv->nconns++;
	idle = clock_ms_tv(srv->d.conf->dns_tcp_idle_ms);
	bufferevent_set_timeouts(c->bev, &idle, &idle);
	/* One whole query at most waits in the input. */
	bufferevent_setwatermark(c->bev, EV_READ, 0, 2 + DNS_TCP_MAX);
	bufferevent_setcb(c->bev, dnssrv_tcp_read_cb, NULL,
	    dnssrv_tcp_event_cb, c);
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
}

/*
 * A socket of type bound to ai's address and port; -1 with *cause and
 * errno the failed call's.
 */
static evutil_socket_t
dnssrv_bind(const struct addrinfo *ai, int type, int port, char **cause)
{
	struct sockaddr_storage	 ss;
	evutil_socket_t		 fd;
	int			 one = 1, saved;

	memcpy(&ss, ai->ai_addr, ai->ai_addrlen);
	if (ss.ss_family == AF_INET)
		((struct sockaddr_in *)&ss)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)&ss)->sin6_port = htons(port);
	if ((fd = socket(ss.ss_family, type, 0)) < 0) {
		xasprintf(cause, "DNS socket: %s", strerror(errno));
		return (-1);
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(fd, (struct sockaddr *)&ss, ai->ai_addrlen) != 0 ||
	    (type == SOCK_STREAM && listen(fd, 128) != 0)) {
		saved = errno;
		xasprintf(cause, "cannot listen for DNS on port %d (%s): %s",
		    port, type == SOCK_STREAM ? "tcp" : "udp",
		    strerror(saved));
		evutil_closesocket(fd);
		errno = saved;
		return (-1);
	}
	evutil_make_socket_nonblocking(fd);
	evutil_make_socket_closeonexec(fd);
	return (fd);
}

/* The port a socket is bound to. */
static int
dnssrv_bound_port(evutil_socket_t fd)
{
	struct sockaddr_storage	ss;
	socklen_t		len = sizeof ss;

	memset(&ss, 0, sizeof ss);	/* a family even if none was written */
	if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0)
		return (0);
	if (ss.ss_family == AF_INET)
		return (ntohs(((struct sockaddr_in *)&ss)->sin_port));
	return (ntohs(((struct sockaddr_in6 *)&ss)->sin6_port));
}

/*
 * Bind UDP (srv->udp_fd, srv->port) and TCP (*tfd) on the same port: the
 * configured one, or with 0 a free UDP port, another one while its
 * number is taken for TCP (see the head). 0, or -1 with *cause.
 */
static int
dnssrv_bind_both(struct dnssrv *srv, const struct addrinfo *ai,
    evutil_socket_t *tfd, char **cause)
{
	int	port = srv->d.conf->dns_port, tries;

	for (tries = 1;; tries++) {
		srv->udp_fd = dnssrv_bind(ai, SOCK_DGRAM, port, cause);
		if (srv->udp_fd < 0)
			return (-1);
		srv->port = dnssrv_bound_port(srv->udp_fd);
		if (srv->d.udp_bound != NULL)
			srv->d.udp_bound(srv->port, srv->d.udp_bound_arg);
		*tfd = dnssrv_bind(ai, SOCK_STREAM, srv->port, cause);
		if (*tfd >= 0)
			return (0);
		if (port != 0 || errno != EADDRINUSE ||
		    tries == DNSSRV_BIND_TRIES)
			return (-1);
		log_info("DNS: port %d is taken for tcp, trying another",
		    srv->port);
		free(*cause);
		*cause = NULL;
		evutil_closesocket(srv->udp_fd);
		srv->udp_fd = -1;
		srv->port = 0;
	}
}

/* Bind both transports and serve; see dnssrv.h. */
int
dnssrv_start(struct dnssrv *srv, char **cause)
{
	const struct config	*cf = srv->d.conf;
	const char		*host = cf->dns_bind != NULL ?
				    cf->dns_bind : cf->server_address;
	struct addrinfo		 hints, *ai = NULL;
	evutil_socket_t		 tfd;
	int			 rc;

	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_DGRAM;
	hints.ai_flags = AI_PASSIVE;
	if ((rc = getaddrinfo(host, NULL, &hints, &ai)) != 0) {
		xasprintf(cause, "heureka.dns.bind: %s: %s", host,
		    gai_strerror(rc));
		return (-1);
	}
	if (dnssrv_bind_both(srv, ai, &tfd, cause) != 0)
		goto fail;
	srv->tcp = evconnlistener_new(srv->d.base, dnssrv_accept_cb, srv,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 0, tfd);
	if (srv->tcp == NULL) {
		evutil_closesocket(tfd);
		xasprintf(cause, "DNS listener: %s", strerror(errno));
		goto fail;
	}
	srv->udp_ev = event_new(srv->d.base, srv->udp_fd,
	    EV_READ | EV_PERSIST, dnssrv_udp_cb, srv);
	event_add(srv->udp_ev, NULL);
	freeaddrinfo(ai);
	log_info("DNS listening on %s:%d (udp, tcp) for %s.", host,
	    srv->port, cf->dns_domain);
	return (0);
fail:
	freeaddrinfo(ai);
	return (-1);
}
