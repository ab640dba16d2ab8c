/*
 * hello.c: the smallest useful libheureka program. It registers itself as
 * application HELLO on the port given on the command line, looks up
 * another application every few seconds and prints the instance it would
 * call (round robin over the UP ones), and deregisters on SIGINT/SIGTERM.
 * The library's log lines go through a callback into the program's own
 * output, at info level (the default is warn) so the registration and the
 * cancel show.
 *
 * Build it against the installed library:
 *
 *	cc hello.c $(pkg-config --cflags --libs heureka) -o hello
 *
 * Run it (the server URL can also come from
 * EUREKA_CLIENT_SERVICEURL_DEFAULTZONE):
 *
 *	./hello 8080 OTHER-APP http://localhost:8761/eureka/
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include <heureka.h>

struct hello {
	struct event_base	*base;
	struct heureka_client	*client;
	const char		*other;
};

/* Every few seconds: which OTHER instance would we call now? */
static void
lookup_cb(evutil_socket_t fd, short what, void *arg)
{
	struct hello		*h = arg;
	struct heureka_instance	*in;

	if (h->client == NULL)		/* stopping */
		return;
	if ((in = heureka_client_next_up(h->client, h->other)) == NULL) {
		printf("hello: no UP instance of %s yet\n", h->other);
	} else {
		printf("hello: %s is at %s:%d (%s)\n", h->other, in->ip_addr,
		    in->port, in->instance_id);
		heureka_instance_free(in);
	}
	fflush(stdout);
}

/* The cancel went out and the client is freed: leave the loop. */
static void
stopped_cb(void *arg)
{
	struct hello	*h = arg;

	h->client = NULL;
	event_base_loopbreak(h->base);
}

/* SIGINT/SIGTERM: deregister (DELETE), then stop. */
static void
signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct hello	*h = arg;

	if (h->client != NULL)
		heureka_client_stop(h->client, stopped_cb, h);
	h->client = NULL;
}

/* The library's log lines, into our output. */
static void
log_cb(int level, const char *message, void *arg)
{
	static const char	*names[] = { "error", "warn", "info", "debug" };

	(void)arg;
	printf("hello: [%s] %s\n", level >= 0 && level < 4 ? names[level] :
	    "?", message);
	fflush(stdout);
}

/* Register, look up OTHER periodically, deregister on a signal. */
int
main(int argc, char **argv)
{
	struct hello		 h;
	struct heureka_options	 o = HEUREKA_OPTIONS_INIT;
	struct event		*tick, *sint, *sterm;
	struct timeval		 tv = { 3, 0 };
	char			*cause;

	if (argc < 2) {
		fprintf(stderr, "usage: hello PORT [OTHER-APP [SERVER-URL]]\n");
		return (64);
	}
	heureka_set_log_callback(log_cb, NULL);
	heureka_set_log_level(HEUREKA_LOG_INFO);
	o.app_name = "HELLO";
	o.port = atoi(argv[1]);
	o.use_env = 1;			/* EUREKA_* variables */
	if (argc > 3)
		o.service_url = argv[3];
	h.other = argc > 2 ? argv[2] : "HELLO";
	if ((h.client = heureka_client_new(&o, &cause)) == NULL) {
		fprintf(stderr, "hello: %s\n", cause);
		free(cause);
		return (78);
	}
	h.base = event_base_new();
	if (heureka_client_start(h.client, h.base) != 0) {
		perror("hello: heureka_client_start");
		heureka_client_free(h.client);
		return (1);
	}
	printf("hello: registering %s\n", heureka_client_instance_id(h.client));
	fflush(stdout);

	tick = event_new(h.base, -1, EV_PERSIST, lookup_cb, &h);
	event_add(tick, &tv);
	sint = evsignal_new(h.base, SIGINT, signal_cb, &h);
	sterm = evsignal_new(h.base, SIGTERM, signal_cb, &h);
	event_add(sint, NULL);
	event_add(sterm, NULL);

	event_base_dispatch(h.base);	/* until stopped_cb */

	event_free(tick);
	event_free(sint);
	event_free(sterm);
	event_base_free(h.base);
	return (0);
}
