/*
 * front_diff.c: the differential test of heurekad's HTTP front (issue 27).
 * Built twice from this one file: with -DFRONT_OLD against the tree at
 * the last commit that had the old path (the header-time guard, guard.c,
 * in front of evhttp's server; tests/diff/regen-old.sh builds it there
 * and records its output as tests/diff/expected), and without, against
 * today's front (http_conn.c), in make check (tests/diff/diff.sh).
 *
 * Each file of the corpus (tests/diff/heads/) is sent as it is over one
 * loopback connection to a server of the kind under test, followed by a
 * last request that asks for the close ("GET /__end", so every exchange
 * ends in a close whatever the case left unfinished: an unfinished head
 * or body takes the last request's bytes into itself). The server's
 * callback prints what it was given: method, target, path and query as
 * the router gets them, every header, the body; a refused request prints
 * its status. The client prints the status of every response it read,
 * and whether it asked for the close. Both sides use the same body caps
 * (64 bytes for a registration, 128 for a batch, 1 KiB read and ignored
 * elsewhere). The two builds must print the same, case by case, but for
 * the cases tests/diff/intended names (a difference on purpose, with
 * its reason, and the new output in tests/diff/expected-new).
 */
#include <sys/queue.h>
#include <sys/socket.h>

#include <netinet/in.h>

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>

#include "config.h"
#include "conn.h"
#include "metrics.h"
#include "rest.h"
#ifdef FRONT_OLD
#include "guard.h"
#else
#include "http.h"
#endif

#define DIFF_END	"GET /__end HTTP/1.1\r\nHost: e\r\nConnection: close" \
			"\r\n\r\n"

static struct event_base	*diff_base;
static struct evbuffer		*diff_got;	/* the client's bytes */
static int			 diff_done;

/* Print n bytes, escaping what is not printable ASCII. */
static void
diff_print(const char *p, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];

		if (c >= 0x20 && c < 0x7f && c != '\\')
			putchar(c);
		else
			printf("\\x%02x", c);
	}
}

/* A method's name. */
static const char *
diff_method(int m)
{
	switch (m) {
	case EVHTTP_REQ_GET: return ("GET");
	case EVHTTP_REQ_POST: return ("POST");
	case EVHTTP_REQ_HEAD: return ("HEAD");
	case EVHTTP_REQ_PUT: return ("PUT");
	case EVHTTP_REQ_DELETE: return ("DELETE");
	case EVHTTP_REQ_OPTIONS: return ("OPTIONS");
	case EVHTTP_REQ_TRACE: return ("TRACE");
	case EVHTTP_REQ_CONNECT: return ("CONNECT");
	case EVHTTP_REQ_PATCH: return ("PATCH");
	default: return ("?");
	}
}

/* The request line's parts, as the router gets them. */
static void
diff_print_target(int method, const char *target, const char *path,
    const char *query)
{
	printf("req %s ", diff_method(method));
	diff_print(target, strlen(target));
	printf(" path=");
	if (path == NULL || *path == '\0')
		path = "/";
	diff_print(path, strlen(path));
	printf(" query=");
	if (query == NULL)
		printf("-");
	else
		diff_print(query, strlen(query));
	printf("\n");
}

/* One header. */
static void
diff_print_header(const char *name, const char *value)
{
	printf("  ");
	diff_print(name, strlen(name));
	printf(": ");
	diff_print(value, strlen(value));
	printf("\n");
}

#ifdef FRONT_OLD
/* The old server's callback: a guard verdict, or what evhttp parsed. */
static void
diff_request_cb(struct evhttp_request *req, void *arg)
{
	const struct evhttp_uri	*u = evhttp_request_get_evhttp_uri(req);
	struct evkeyvalq	*h = evhttp_request_get_input_headers(req);
	struct evbuffer		*body = evhttp_request_get_input_buffer(req);
	struct evkeyval		*e;
	const char		*reason;
	int			 code;

	(void)arg;
	if (guard_verdict(req, &code, &reason)) {
		printf("reject %d\n", code);
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Connection", "close");
		evhttp_send_reply(req, code, "No", NULL);
		return;
	}
	diff_print_target(evhttp_request_get_command(req),
	    evhttp_request_get_uri(req), u != NULL ? evhttp_uri_get_path(u) :
	    NULL, u != NULL ? evhttp_uri_get_query(u) : NULL);
	TAILQ_FOREACH(e, h, next)
		diff_print_header(e->key, e->value);
	printf("  body=%zu:", evbuffer_get_length(body));
	diff_print((const char *)evbuffer_pullup(body, -1),
	    evbuffer_get_length(body));
	printf("\n");
	evhttp_send_reply(req, 200, "OK", NULL);
}

/* Every accepted connection is counted and guarded, as server.c did. */
static struct bufferevent *
diff_bev_cb(struct event_base *base, void *arg)
{
	struct bufferevent	*bev;

	bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
	conns_accepted(arg, bev, 0);
	return (bev);
}

/* The old server on 127.0.0.1; its port. */
static int
diff_server(struct metrics *m)
{
	static unsigned			 open;
	struct evhttp			*http = evhttp_new(diff_base);
	struct evhttp_bound_socket	*bound;
	struct sockaddr_in		 sin;
	socklen_t			 sl = sizeof sin;
	struct conns			*cs;

	evhttp_set_gencb(http, diff_request_cb, NULL);
	evhttp_set_default_content_type(http, NULL);
	cs = conns_new(&(struct conns_deps){ .base = diff_base,
	    .max_connections = 100, .metrics = m, .open = &open });
	evhttp_set_bevcb(http, diff_bev_cb, cs);
	evhttp_set_allowed_methods(http, 0x1ff);
	evhttp_set_max_body_size(http, 128);
	evhttp_set_max_headers_size(http, GUARD_HEAD_MAX);
	guard_init(&(struct guard_conf){ .max_body_bytes = 64,
	    .max_batch_bytes = 128, .head_ms = 10000, .handshake_ms = 10000,
	    .metrics = m });
	bound = evhttp_bind_socket_with_handle(http, "127.0.0.1", 0);
	if (bound == NULL || getsockname(evhttp_bound_socket_get_fd(bound),
	    (struct sockaddr *)&sin, &sl) != 0)
		exit(2);
	return (ntohs(sin.sin_port));
}
#else
/* The front's callback: what it parsed. */
static void
diff_request_cb(struct hreq *req, void *arg)
{
	struct buf	 b;
	const char	*cause, *name, *value;
	size_t		 i;

	(void)arg;
	diff_print_target(hreq_method(req), hreq_uri(req), hreq_path(req),
	    hreq_query_string(req));
	for (i = 0; hreq_header_at(req, i, &name, &value); i++)
		diff_print_header(name, value);
	buf_init(&b, 0);
	hreq_read_body(req, 1 << 20, &b, &cause);
	printf("  body=%zu:", b.len);
	diff_print(b.data, b.len);
	printf("\n");
	buf_free(&b);
	hreq_send_reply(req, 200, "OK", NULL);
}

/* The front's refusal. */
static void
diff_reject_cb(struct hreq *req, int code, const char *reason, void *arg)
{
	(void)arg;
	printf("reject %d\n", code);
	hreq_error(req, code, reason);
}

/* New connections join the front, as server.c does. */
static void
diff_accept_cb(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct bufferevent	*bev;
	void			**a = arg;

	(void)l;
	(void)sa;
	(void)salen;
	bev = bufferevent_socket_new(diff_base, fd, BEV_OPT_CLOSE_ON_FREE);
	conns_accepted(a[0], a[1], bev, 0);
}

static struct evconnlistener	*diff_listener;
static struct hfront_conf	 diff_fc;
static void			*diff_arg[2];

/* Close the front and what it holds. */
static void
diff_server_free(void)
{
	evconnlistener_free(diff_listener);
	conns_free(diff_arg[0]);
	rest_free(diff_fc.body_cap_arg);
}

/* The front on 127.0.0.1; its port. */
static int
diff_server(struct metrics *m)
{
	static unsigned			 open;
	static struct config		 conf;
	struct hfront_conf		*fc_ = &diff_fc;
	void				**arg = diff_arg;
	struct evconnlistener		*l;
	struct sockaddr_in		 sin;
	socklen_t			 sl = sizeof sin;

	conf.max_body_bytes = 64;
	conf.max_batch_bytes = 128;
	fc_->cb = diff_request_cb;
	fc_->reject = diff_reject_cb;
	fc_->body_cap = rest_body_cap;
	fc_->body_cap_arg = rest_new(&(struct rest_deps){ .conf = &conf,
	    .metrics = m });
	fc_->methods = 0x1ff;
	fc_->head_max = HTTP_HEAD_MAX;
	fc_->idle_s = 60;
	fc_->head_ms = fc_->handshake_ms = 10000;
	fc_->metrics = m;
	arg[0] = conns_new(&(struct conns_deps){ .base = diff_base,
	    .max_connections = 100, .metrics = m, .open = &open });
	arg[1] = fc_;
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = evconnlistener_new_bind(diff_base, diff_accept_cb, arg,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE, 16,
	    (struct sockaddr *)&sin, sizeof sin);
	if (l == NULL || getsockname(evconnlistener_get_fd(l),
	    (struct sockaddr *)&sin, &sl) != 0)
		exit(2);
	diff_listener = l;
	return (ntohs(sin.sin_port));
}
#endif

/* The client's bytes. */
static void
diff_read_cb(struct bufferevent *bev, void *arg)
{
	(void)arg;
	evbuffer_add_buffer(diff_got, bufferevent_get_input(bev));
}

/* The server closed (or the deadline passed): the exchange is over. */
static void
diff_event_cb(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	(void)arg;
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT)) {
		if (what & BEV_EVENT_TIMEOUT)
			printf("timeout\n");
		diff_done = 1;
		event_base_loopbreak(diff_base);
	}
}

/* The statuses of the responses in the client's bytes. */
static void
diff_responses(void)
{
	size_t		 len = evbuffer_get_length(diff_got), off = 0, cl;
	const char	*p = (const char *)evbuffer_pullup(diff_got, -1);
	const char	*end, *h;
	int		 code, close_;

	while (off + 12 <= len && memcmp(p + off, "HTTP/1.", 7) == 0) {
		code = atoi(p + off + 9);
		for (end = p + off; end + 4 <= p + len &&
		    memcmp(end, "\r\n\r\n", 4) != 0; end++)
			;
		if (end + 4 > p + len)
			break;
		cl = 0;
		close_ = 0;
		for (h = p + off; h < end; h++) {
			if (h[0] != '\n')
				continue;
			if (strncasecmp(h + 1, "Content-Length:", 15) == 0)
				cl = strtoul(h + 16, NULL, 10);
			if (strncasecmp(h + 1, "Connection: close", 17) == 0)
				close_ = 1;
		}
		printf("status %d%s\n", code, close_ ? " close" : "");
		off = (size_t)(end + 4 - p) + (code == 100 ? 0 : cl);
	}
	if (off < len)
		printf("trailing %zu bytes\n", len - off);
}

/* One case: its bytes, then the last request, over one connection. */
static void
diff_case(int port, const char *dir, const char *name)
{
	struct bufferevent	*bev;
	struct sockaddr_in	 sin;
	struct timeval		 tv = { 5, 0 };
	char			 path[1024], data[70000];
	size_t			 n;
	FILE			*f;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	if ((f = fopen(path, "rb")) == NULL)
		exit(2);
	n = fread(data, 1, sizeof data, f);
	fclose(f);
	printf("== %s\n", name);
	fflush(stdout);
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons((uint16_t)port);
	diff_got = evbuffer_new();
	diff_done = 0;
	bev = bufferevent_socket_new(diff_base, -1, BEV_OPT_CLOSE_ON_FREE);
	bufferevent_setcb(bev, diff_read_cb, NULL, diff_event_cb, NULL);
	bufferevent_set_timeouts(bev, &tv, NULL);
	bufferevent_enable(bev, EV_READ | EV_WRITE);
	if (bufferevent_socket_connect(bev, (struct sockaddr *)&sin,
	    sizeof sin) != 0)
		exit(2);
	bufferevent_write(bev, data, n);
	bufferevent_write(bev, DIFF_END, sizeof DIFF_END - 1);
	while (!diff_done)
		event_base_loop(diff_base, EVLOOP_ONCE);
	fflush(stdout);
	diff_responses();
	bufferevent_free(bev);
	evbuffer_free(diff_got);
	/* Let the server see the close before the next case. */
	event_base_loop(diff_base, EVLOOP_NONBLOCK);
	fflush(stdout);
}

/* Sort names. */
static int
diff_cmp(const void *a, const void *b)
{
	return (strcmp(*(char *const *)a, *(char *const *)b));
}

/* front_diff DIR: every case of DIR, in name order. */
int
main(int argc, char **argv)
{
	struct metrics_deps	 md = { 0 };
	struct metrics		*m;
	struct dirent		*de;
	DIR			*d;
	char			*names[1024];
	size_t			 n = 0, i;
	int			 port;

	if (argc != 2 || (d = opendir(argv[1])) == NULL) {
		fprintf(stderr, "usage: front_diff DIR\n");
		return (2);
	}
	while ((de = readdir(d)) != NULL && n < 1024)
		if (de->d_name[0] != '.')
			names[n++] = strdup(de->d_name);
	closedir(d);
	qsort(names, n, sizeof names[0], diff_cmp);
	setvbuf(stdout, NULL, _IOLBF, 0);
	diff_base = event_base_new();
	port = diff_server(m = metrics_new(&md));
	for (i = 0; i < n; i++) {
		diff_case(port, argv[1], names[i]);
		free(names[i]);
	}
#ifndef FRONT_OLD
	diff_server_free();
	event_base_free(diff_base);
	metrics_free(m);
#endif
	return (0);
}
