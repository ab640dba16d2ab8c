/*
 * floor.c: the benchmark floor. A minimal libevent HTTP server that does
 * as little as an HTTP server on this machine can: it answers 204 to any
 * request, except a GET when a body file was given, which it answers with
 * that preloaded buffer (the gzip one, with Content-Encoding, when the
 * client accepts gzip and a gzip file was given). It uses the same evhttp
 * settings as heurekad (TCP_NODELAY, a large single-write limit) and sends
 * by reference, so the ratio heurekad/floor measures heurekad's own work,
 * not libevent's or the kernel's.
 *
 * usage: floor PORTFILE [PLAIN [GZIP]]
 * Binds 127.0.0.1 on an ephemeral port and writes it to PORTFILE.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#define SINGLE_WRITE_MAX	(4 * 1024 * 1024)

struct body {
	char	*data;
	size_t	 len;
};

static struct body	plain, gz;

/* Read a whole file into b; exit on failure (a benchmark tool). */
static void
load(const char *path, struct body *b)
{
	FILE		*f;
	struct stat	 st;

	if ((f = fopen(path, "rb")) == NULL || fstat(fileno(f), &st) != 0) {
		perror(path);
		exit(1);
	}
	b->len = st.st_size;
	if ((b->data = malloc(b->len + 1)) == NULL ||
	    fread(b->data, 1, b->len, f) != b->len) {
		fprintf(stderr, "%s: short read\n", path);
		exit(1);
	}
	fclose(f);
}

/* Nothing to free: the buffers live as long as the process. */
static void
noop_cleanup(const void *data, size_t len, void *arg)
{
}

/* New connection: the same large-write limit heurekad sets. */
static struct bufferevent *
bev_cb(struct event_base *base, void *arg)
{
	struct bufferevent	*bev;

	bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
	if (bev != NULL)
		bufferevent_set_max_single_write(bev, SINGLE_WRITE_MAX);
	return (bev);
}

/* Every request: 204, or the preloaded body for a GET. */
static void
request_cb(struct evhttp_request *req, void *arg)
{
	struct evhttp_connection	*evcon;
	struct bufferevent		*bev;
	struct evkeyvalq		*in, *out;
	struct evbuffer			*buf;
	const char			*ae;
	struct body			*b = &plain;
	int				 one = 1;

	/* TCP_NODELAY once per connection, as heurekad does. */
	evcon = evhttp_request_get_connection(req);
	if (evcon != NULL &&
	    (bev = evhttp_connection_get_bufferevent(evcon)) != NULL &&
	    bufferevent_get_max_single_read(bev) != SINGLE_WRITE_MAX) {
		bufferevent_set_max_single_read(bev, SINGLE_WRITE_MAX);
		setsockopt(bufferevent_getfd(bev), IPPROTO_TCP, TCP_NODELAY,
		    &one, sizeof one);
	}
	if (evhttp_request_get_command(req) != EVHTTP_REQ_GET ||
	    plain.data == NULL) {
		evhttp_send_reply(req, 204, "No Content", NULL);
		return;
	}
	in = evhttp_request_get_input_headers(req);
	out = evhttp_request_get_output_headers(req);
	ae = evhttp_find_header(in, "Accept-Encoding");
	if (gz.data != NULL && ae != NULL && strstr(ae, "gzip") != NULL) {
		b = &gz;
		evhttp_add_header(out, "Content-Encoding", "gzip");
	}
	evhttp_add_header(out, "Content-Type", "application/json");
	buf = evbuffer_new();
	evbuffer_add_reference(buf, b->data, b->len, noop_cleanup, NULL);
	evhttp_send_reply(req, 200, "OK", buf);
	evbuffer_free(buf);
}

/* SIGTERM: leave the loop. */
static void
term_cb(evutil_socket_t fd, short ev, void *arg)
{
	event_base_loopbreak(arg);
}

/* Serve 204s and the preloaded body until killed. */
int
main(int argc, char **argv)
{
	struct event_base		*base;
	struct evhttp			*http;
	struct evhttp_bound_socket	*bound;
	struct event			*term;
	struct sockaddr_in		 sin;
	socklen_t			 sl = sizeof sin;
	FILE				*f;
	char				 tmp[4096];

	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: floor PORTFILE [PLAIN [GZIP]]\n");
		return (2);
	}
	if (argc > 2)
		load(argv[2], &plain);
	if (argc > 3)
		load(argv[3], &gz);
	signal(SIGPIPE, SIG_IGN);
	base = event_base_new();
	http = evhttp_new(base);
	evhttp_set_gencb(http, request_cb, NULL);
	evhttp_set_bevcb(http, bev_cb, NULL);
	evhttp_set_allowed_methods(http, EVHTTP_REQ_GET | EVHTTP_REQ_POST |
	    EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE | EVHTTP_REQ_HEAD);
	evhttp_set_max_body_size(http, 8 * 1024 * 1024);
	if ((bound = evhttp_bind_socket_with_handle(http, "127.0.0.1",
	    0)) == NULL) {
		perror("bind");
		return (1);
	}
	if (getsockname(evhttp_bound_socket_get_fd(bound),
	    (struct sockaddr *)&sin, &sl) != 0) {
		perror("getsockname");
		return (1);
	}
	snprintf(tmp, sizeof tmp, "%s.tmp", argv[1]);
	if ((f = fopen(tmp, "w")) == NULL) {
		perror(tmp);
		return (1);
	}
	fprintf(f, "%d\n", ntohs(sin.sin_port));
	fclose(f);
	rename(tmp, argv[1]);
	term = evsignal_new(base, SIGTERM, term_cb, base);
	event_add(term, NULL);
	event_base_dispatch(base);
	event_free(term);
	evhttp_free(http);
	event_base_free(base);
	free(plain.data);
	free(gz.data);
	return (0);
}
