/*
 * clidrain.c: `heureka drain APP ID [--timeout 60s]` and the drain the
 * agent does on SIGTERM with --drain (docs/kubernetes.md). A graceful
 * exit in three steps:
 *
 *  1. PUT apps/APP/ID/status?value=OUT_OF_SERVICE on the first server of
 *     the list that answers (the origin of the change);
 *  2. GET heureka/apps/APP/ID/drained?wait=... on the origin, then on
 *     every other server of the list, each until it answers 200 (the
 *     barrier: its peers answered, its watch streams wrote the change
 *     out, its fetching clients fetched again), within the timeout. List
 *     every heurekad (a StatefulSet's pods) so that each one's clients
 *     are waited for, not only the origin's;
 *  3. DELETE apps/APP/ID on the origin (the cancel replicates), also
 *     after a timeout: the instance is leaving either way.
 *
 * Every request goes to one server (a client of one URL), so the
 * barrier is asked of the node it is about. Exit: 0 drained and
 * cancelled, 1 not drained in time (what was pending is printed) or no
 * such instance, 2 no server answered.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "buf.h"
#include "clock.h"
#include "config.h"
#include "duration.h"
#include "url.h"
#include "xmalloc.h"

#include "cli.h"
#include "heureka.h"
#include "internal.h"

#define DRAIN_HOLD_MAX_MS	30000	/* one held answer's wait */
#define DRAIN_RETRY_MS		500	/* after an answer that held nothing */
#define CLI_DURATION_MAX	86400000 /* a --timeout, a day at most */

/* One answer. */
struct drain_answer {
	struct event_base	*base;
	int			 status;
	char			*body;
};

/* A request answered (any status): keep it, leave the loop. */
static void
drain_answer_cb(int status, const char *body, size_t len, void *arg)
{
	struct drain_answer	*a = arg;

	a->status = status;
	a->body = xstrndup(body != NULL ? body : "", body != NULL ? len : 0);
	event_base_loopbreak(a->base);
}

/*
 * One request to exactly one server, waiting up to read_s seconds for
 * the answer; returns the HTTP status (0: no answer), the body in *body
 * (caller frees).
 */
static int
drain_request(const struct cli_drain *d, const char *server,
    const char *method, const char *path, int read_s, char **body)
{
	struct heureka_options	 o;
	struct heureka_client	*c;
	struct drain_answer	 a;
	char			*cause = NULL, *setting;
	const char		*settings[2];

	o = (struct heureka_options)HEUREKA_OPTIONS_INIT;
	memset(&a, 0, sizeof a);
	xasprintf(&setting, "eureka.client.eureka-server-read-timeout-seconds"
	    "=%d", read_s);
	settings[0] = setting;
	settings[1] = NULL;
	o.service_url = server;
	o.no_register = 1;
	o.no_fetch = 1;
	o.settings = settings;
	cli_tls_apply(&d->tls, &o);
	*body = NULL;
	if ((c = heureka_client_new(&o, &cause)) == NULL) {
		fprintf(stderr, "heureka: %s\n", cause);
		free(cause);
		free(setting);
		return (0);
	}
	a.base = event_base_new();
	if (heureka_client_start(c, a.base) == 0) {
		/* CANCEL's rule: every HTTP status is an answer (409 too). */
		hk_client_request(c, HK_REQ_CANCEL, method, path, NULL,
		    drain_answer_cb, &a);
		event_base_dispatch(a.base);
	}
	heureka_client_free(c);
	event_base_free(a.base);
	free(setting);
	*body = a.body;
	return (a.status);
}

/* Sleep ms (between answers that held nothing). */
static void
drain_pause(int64_t ms)
{
	struct timespec	ts;

	ts.tv_sec = (time_t)(ms / 1000);
	ts.tv_nsec = (long)(ms % 1000) * 1000000L;
	(void)nanosleep(&ts, NULL);
}

/* "apps/APP/ID" + rest, segments encoded. */
static char *
drain_path(const char *pre, const struct cli_drain *d, const char *rest)
{
	struct buf	b;

	buf_init(&b, 0);
	buf_adds(&b, pre);
	buf_adds(&b, "apps/");
	url_add_segment(&b, d->app);
	buf_addc(&b, '/');
	url_add_segment(&b, d->id);
	buf_adds(&b, rest);
	buf_addc(&b, '\0');
	return (b.data);
}

/* The servers of the list, split (caller frees the vector and strings). */
static size_t
drain_servers(const char *list, char ***out)
{
	char	**v = NULL, *copy, *tok, *next;
	size_t	  n = 0;

	copy = xstrdup(list);
	for (next = copy; (tok = str_list_next(&next)) != NULL;) {
		v = xreallocarray(v, n + 1, sizeof *v);
		v[n++] = xstrdup(tok);
	}
	free(copy);
	*out = v;
	return (n);
}

/*
 * Wait until server answers drained (1), or the deadline passes (0, the
 * last answer in *last), or it says the id is unknown to it and is the
 * origin (-1).
 */
static int
drain_wait_one(const struct cli_drain *d, const char *server, int origin,
    int64_t deadline, char **last)
{
	char		*path, *body, *q;
	int64_t		 left, hold;
	int		 code;

	path = drain_path("heureka/", d, "/drained");
	for (;;) {
		left = deadline - clock_mono_ms();
		if (left <= 0)
			break;
		hold = left < DRAIN_HOLD_MAX_MS ? left : DRAIN_HOLD_MAX_MS;
		xasprintf(&q, "%s?wait=%lldms", path, (long long)hold);
		code = drain_request(d, server, "GET", q,
		    (int)(hold / 1000) + 10, &body);
		free(q);
		free(*last);
		if (code == 200) {
			*last = body;
			free(path);
			return (1);
		}
		if (code == 404 && origin) {
			*last = body;
			free(path);
			return (-1);
		}
		if (code == 409) {
			/* Held for `hold`: what it still waits for. */
			*last = body;
			continue;
		}
		/* A node the change has not reached yet (404), or none. */
		if (code == 0)
			xasprintf(last, "no answer");
		else
			xasprintf(last, "answered %d: %s", code, body);
		free(body);
		drain_pause(DRAIN_RETRY_MS);
	}
	free(path);
	return (0);
}

/* The drain (cli.h); returns the exit status. */
int
cli_drain_run(const struct cli_drain *d)
{
	char	**servers, *path, *body = NULL, *last = NULL;
	size_t	  n, i, origin;
	int64_t	  deadline;
	int	  code = 0, rc = CLI_EXIT_FOUND, r;

	n = drain_servers(cli_servers(d->servers), &servers);
	path = drain_path("", d, "/status?value=OUT_OF_SERVICE");
	for (origin = 0; origin < n; origin++) {
		code = drain_request(d, servers[origin], "PUT", path, 8, &body);
		free(body);
		body = NULL;
		if (code != 0)
			break;
	}
	free(path);
	if (code == 0 || origin == n) {
		char	*shown = config_redact(cli_servers(d->servers));

		fprintf(stderr, "heureka: no server answered (%s)\n", shown);
		free(shown);
		rc = CLI_EXIT_UNREACHABLE;
		goto out;
	}
	if (code == 404) {
		fprintf(stderr, "heureka: %s/%s: no such instance\n", d->app,
		    d->id);
		rc = CLI_EXIT_NOT_FOUND;
		goto out;
	}
	if (code < 200 || code > 299) {
		fprintf(stderr, "heureka: %s answered %d to OUT_OF_SERVICE\n",
		    servers[origin], code);
		rc = CLI_EXIT_UNREACHABLE;
		goto out;
	}
	if (!d->quiet)
		fprintf(stderr, "heureka: %s/%s is OUT_OF_SERVICE (at %s); "
		    "waiting for the barrier\n", d->app, d->id,
		    servers[origin]);
	deadline = clock_mono_ms() + d->timeout_ms;
	for (i = 0; i < n && rc == CLI_EXIT_FOUND; i++) {
		/* The origin first, then every other server. */
		size_t	k = i == 0 ? origin : (i <= origin ? i - 1 : i);

		r = drain_wait_one(d, servers[k], k == origin, deadline, &last);
		if (r == 1)
			continue;
		if (r < 0)
			fprintf(stderr, "heureka: %s/%s: no such instance\n",
			    d->app, d->id);
		else
			fprintf(stderr, "heureka: not drained within %lld ms; "
			    "%s is waiting for: %s\n",
			    (long long)d->timeout_ms, servers[k],
			    last != NULL ? last : "?");
		rc = CLI_EXIT_NOT_FOUND;
	}
	if (rc == CLI_EXIT_FOUND && !d->quiet)
		fprintf(stderr, "heureka: %s/%s drained on %zu server(s)\n",
		    d->app, d->id, n);
	if (d->cancel) {
		path = drain_path("", d, "");
		code = drain_request(d, servers[origin], "DELETE", path, 8,
		    &body);
		free(body);
		free(path);
		if (code != 200 && code != 404) {
			fprintf(stderr, "heureka: cancel answered %d\n", code);
			if (rc == CLI_EXIT_FOUND)
				rc = CLI_EXIT_UNREACHABLE;
		}
	}
out:
	for (i = 0; i < n; i++)
		free(servers[i]);
	free(servers);
	free(last);
	return (rc);
}

/* A duration: "60s", "500ms", "2m", or seconds; -1 if not one. */
int64_t
cli_duration_ms(const char *v)
{
	return (duration_parse_ms(v, CLI_DURATION_MAX));
}

static const char drain_usage[] =
"usage: heureka drain APP ID [--timeout 60s] [--server URL]\n"
"Take an instance out of traffic and wait until every client can have\n"
"stopped calling it: set it OUT_OF_SERVICE, wait for the drain barrier\n"
"(heureka/apps/APP/ID/drained) on every server, then cancel it.\n"
"Exit status: 0 drained and cancelled, 1 not drained in time (what was\n"
"pending is printed; the instance is cancelled anyway) or no such\n"
"instance, 2 no server answered.\n"
"  --timeout D   give up after D (60s; 500ms, 2m, or seconds)\n"
"  --server URL  Eureka server (repeatable, or a comma list): list every\n"
"                heurekad, so that each one's clients are waited for\n";

/* heureka drain APP ID [--timeout D] [--server URL]. */
int
cmd_drain(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "server", required_argument, NULL, 's' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		CLI_TLS_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	struct cli_drain	 d;
	char			*servers = NULL;
	int			 ch, rc;

	memset(&d, 0, sizeof d);
	d.timeout_ms = 60000;
	d.cancel = 1;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "s:t:h", longopts, NULL)) != -1) {
		if (cli_tls_opt(&d.tls, ch, optarg))
			continue;
		switch (ch) {
		case 's':
			cli_add_server(&servers, optarg);
			break;
		case 't':
			if ((d.timeout_ms = cli_duration_ms(optarg)) <= 0) {
				fprintf(stderr, "heureka: bad --timeout "
				    "(60s, 500ms, 2m)\n");
				free(servers);
				return (CLI_EXIT_USAGE);
			}
			break;
		case 'h':
			printf("%s%s", drain_usage, CLI_TLS_HELP);
			free(servers);
			return (0);
		default:
			fprintf(stderr, "%s", drain_usage);
			free(servers);
			return (CLI_EXIT_USAGE);
		}
	}
	if (argc - optind != 2) {
		fprintf(stderr, "%s", drain_usage);
		free(servers);
		return (CLI_EXIT_USAGE);
	}
	d.servers = servers;
	d.app = argv[optind];
	d.id = argv[optind + 1];
	rc = cli_drain_run(&d);
	free(servers);
	return (rc);
}
