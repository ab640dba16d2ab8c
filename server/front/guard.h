/*
 * guard.h: the header-time request guard. Every connection's bytes pass
 * through the guard, which reads each request's head before evhttp does, checks it strictly (framing, control characters, the body
 * the route takes and its size) and frames the body, so that a request
 * heurekad would refuse is refused before any of its body is buffered.
 *
 * evhttp 2.1 has no server-side hook between the headers and the body, so
 * a refused request reaches evhttp as a bodiless stand-in carrying the
 * verdict in GUARD_HEADER (a header no client request can carry: the
 * guard refuses it); guard_verdict() finds it and rest_reject() answers.
 */
#ifndef GUARD_H
#define GUARD_H

#include <stddef.h>
#include <stdint.h>

struct bufferevent;
struct evhttp_connection;
struct evhttp_request;
struct metrics;

#define GUARD_HEADER		"X-Heureka-Guard"
#define GUARD_HEAD_MAX		(64 * 1024)
/* What a route that takes no body reads and ignores (Java sends "{}"). */
#define GUARD_IGNORED_BODY_MAX	1024

/* What a request head says, as guard_parse_head() found it. */
struct guard_head {
	int		 method;	/* EVHTTP_REQ_*, 0 if unknown */
	const char	*target;	/* into the head, not terminated */
	size_t		 target_len;
	const char	*line;		/* the request line, without EOL */
	size_t		 line_len;
	int64_t		 content_length; /* -1 when absent */
	int		 chunked;
	int		 expect_continue;
};

/*
 * Check one request head (len bytes up to and including its empty line).
 * 0 when heurekad takes it, else the status to answer with *reason set
 * (a static string). Pure: no state, safe on any bytes.
 */
int	guard_parse_head(const char *, size_t, struct guard_head *,
	    const char **reason);

/*
 * What the guard needs: the body caps of the routes, the deadlines of a
 * TLS handshake and of a request head, the TLS module's "handshake done"
 * test, and where refusals and timeouts are counted.
 */
struct guard_conf {
	size_t		 max_body_bytes;	/* eureka.server.* */
	size_t		 max_batch_bytes;
	int64_t		 handshake_ms;		/* heureka.server.handshake- */
	int64_t		 head_ms;		/*   and head-timeout-ms */
	int		(*handshaken)(struct bufferevent *);
	struct metrics	*metrics;		/* NULL: not counted */
};

struct guard;

/* Set what every guarded connection uses (copied). */
void	guard_init(const struct guard_conf *);
/*
 * Guard a new connection's socket bufferevent (tls: it is a TLS one),
 * before evhttp uses it; its deadlines run from now. The guard lives
 * until guard_free(), which the connection's close callback calls.
 */
struct guard *guard_attach(struct bufferevent *, int tls);
void	guard_free(struct guard *);		/* NULL is fine */
/* Whether a whole request head of the connection has reached evhttp. */
int	guard_has_served(const struct guard *);

/*
 * How many connections are in the middle of a request: its head or body
 * partly received, or its reply not yet all written to the socket (a
 * draining shutdown waits for them).
 */
size_t	guard_busy(void);

/* 1 with *code and *reason (borrowed) when req is a guard's refusal. */
int	guard_verdict(struct evhttp_request *, int *code, const char **reason);

#endif
