/*
 * cli.c: the heureka command-line tool. Dispatches subcommands: `agent`
 * (agent.c, the sidecar), the one-shot queries `apps`, `get`, `vip`, the
 * operator `status` override, and `watch`, which keeps a libheureka copy
 * of the registry and prints each change. Queries use libheureka's
 * failover; exit codes are stable for scripts: 0 found, 1 not found,
 * 2 unreachable (or a server error), 64 usage.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "buf.h"
#include "clock.h"
#include "config.h"
#include "instance.h"
#include "json.h"
#include "log.h"
#include "url.h"
#include "xmalloc.h"

#include "cli.h"
#include "heureka.h"
#include "internal.h"

struct answer {
	struct event_base	*base;
	int			 status;
	char			*body;
	size_t			 len;
};

static int	cmd_apps(int, char **);
static int	cmd_get(int, char **);
static int	cmd_vip(int, char **);
static int	cmd_status(int, char **);
static int	cmd_watch(int, char **);

static const struct {
	const char	*name;
	int		(*fn)(int, char **);
	const char	*usage;
} cmds[] = {
	{ "agent", agent_main, "agent --app NAME --port PORT [options]" },
	{ "apps", cmd_apps, "apps [--json] [--server URL]" },
	{ "get", cmd_get, "get APP [ID] [--json] [--server URL]" },
	{ "vip", cmd_vip, "vip VIP [--json] [--server URL]" },
	{ "status", cmd_status, "status APP ID VALUE | status --delete APP ID"
	    " [--server URL]" },
	{ "watch", cmd_watch, "watch [APP] [--interval SECS] [--server URL]" },
	{ "drain", cmd_drain, "drain APP ID [--timeout 60s] [--server URL]" },
};

/* Usage of every command. */
static void
usage(FILE *f)
{
	size_t	i;

	fprintf(f, "usage: heureka COMMAND [options]   (heureka COMMAND "
	    "--help for details)\n");
	for (i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
		fprintf(f, "       heureka %s\n", cmds[i].usage);
}

/* Common options of the query commands. */
struct qopts {
	char	*servers;
	int	 json;
	int	 del;
	int	 interval;
	struct cli_tls tls;
};

/* Parse --server/--json/--delete/--interval/--help; returns optind or -1. */
static int
parse_qopts(int argc, char **argv, struct qopts *q, const char *use,
    const char *help)
{
	static const struct option longopts[] = {
		{ "server", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "delete", no_argument, NULL, 'd' },
		{ "interval", required_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		CLI_TLS_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	int	ch;

	memset(q, 0, sizeof *q);
	q->interval = 30;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "s:jdi:h", longopts, NULL))
	    != -1) {
		if (cli_tls_opt(&q->tls, ch, optarg))
			continue;
		switch (ch) {
		case 's':
			cli_add_server(&q->servers, optarg);
			break;
		case 'j':
			q->json = 1;
			break;
		case 'd':
			q->del = 1;
			break;
		case 'i':
			q->interval = atoi(optarg);
			if (q->interval < 1 || q->interval > 86400) {
				fprintf(stderr, "heureka: bad --interval\n");
				return (-1);
			}
			break;
		case 'h':
			printf("usage: heureka %s\n%s%s", use, help,
			    CLI_TLS_HELP);
			free(q->servers);
			exit(0);
		default:
			fprintf(stderr, "usage: heureka %s\n", use);
			return (-1);
		}
	}
	return (optind);
}

/* A query answered: keep the answer and leave the loop. */
static void
answer_cb(int status, const char *body, size_t len, void *arg)
{
	struct answer	*a = arg;

	a->status = status;
	a->body = xmalloc(len + 1);
	memcpy(a->body, body, len);
	a->body[len] = '\0';
	a->len = len;
	event_base_loopbreak(a->base);
}

/* Run one request with failover; returns the HTTP status (0: no answer). */
static int
query(const struct qopts *q, enum hk_req_kind kind, const char *method,
    const char *path, struct answer *a)
{
	const char		*servers = q->servers;
	struct heureka_options	 o;
	struct heureka_client	*c;
	char			*cause = NULL;

	memset(&o, 0, sizeof o);
	memset(a, 0, sizeof *a);
	o.service_url = cli_servers(servers);
	o.no_register = 1;
	o.no_fetch = 1;
	cli_tls_apply(&q->tls, &o);
	if ((c = heureka_client_new(&o, &cause)) == NULL) {
		fprintf(stderr, "heureka: %s\n", cause);
		free(cause);
		return (-1);
	}
	a->base = event_base_new();
	if (heureka_client_start(c, a->base) != 0) {
		fprintf(stderr, "heureka: cannot start client\n");
		heureka_client_free(c);
		event_base_free(a->base);
		return (-1);
	}
	hk_client_request(c, kind, method, path, NULL, answer_cb, a);
	event_base_dispatch(a->base);
	heureka_client_free(c);
	event_base_free(a->base);
	return (a->status);
}

/* Map an HTTP answer to the exit code, with a message when unreachable. */
static int
exit_code(const struct answer *a, const char *servers)
{
	if (a->status == 200 || a->status == 204)
		return (CLI_EXIT_FOUND);
	if (a->status == 404)
		return (CLI_EXIT_NOT_FOUND);
	if (a->status == 0) {
		char	*shown = config_redact(cli_servers(servers));

		fprintf(stderr, "heureka: no server answered (%s)\n", shown);
		free(shown);
	} else if (a->status == 401)
		fprintf(stderr, "heureka: server answered 401: it wants "
		    "credentials (http://user:password@host:port/eureka/)\n");
	else
		fprintf(stderr, "heureka: server answered %d\n", a->status);
	return (CLI_EXIT_UNREACHABLE);
}

/* Column widths of the instance table. */
#define NCOLS	5
static const char *col_names[NCOLS] = { "APPLICATION", "INSTANCE-ID",
    "STATUS", "IP", "PORT" };

/* The cells of one table row. */
static void
row_cells(const struct instance *in, char cells[NCOLS][512])
{
	snprintf(cells[0], 512, "%s", in->app != NULL ? in->app : "-");
	snprintf(cells[1], 512, "%s", instance_id(in));
	snprintf(cells[2], 512, "%s", instance_status_name(in->status));
	snprintf(cells[3], 512, "%s", in->ip_addr != NULL ? in->ip_addr : "-");
	if (in->port_enabled)
		snprintf(cells[4], 512, "%d", in->port);
	else
		snprintf(cells[4], 512, "-");
}

/* Print instances as an aligned table. */
static void
print_table(const struct instance *const *list, size_t n)
{
	char	cells[NCOLS][512];
	size_t	w[NCOLS], i, k;

	for (k = 0; k < NCOLS; k++)
		w[k] = strlen(col_names[k]);
	for (i = 0; i < n; i++) {
		row_cells(list[i], cells);
		for (k = 0; k < NCOLS; k++) {
			if (strlen(cells[k]) > w[k])
				w[k] = strlen(cells[k]);
		}
	}
	for (k = 0; k < NCOLS; k++)
		printf("%-*s%s", k + 1 < NCOLS ? (int)w[k] : 0, col_names[k],
		    k + 1 < NCOLS ? "  " : "\n");
	for (i = 0; i < n; i++) {
		row_cells(list[i], cells);
		for (k = 0; k < NCOLS; k++)
			printf("%-*s%s", k + 1 < NCOLS ? (int)w[k] : 0,
			    cells[k], k + 1 < NCOLS ? "  " : "\n");
	}
}

/* Flatten a registry into an instance list. */
static size_t
flatten(const struct applications *as, const struct instance ***out)
{
	size_t	i, j, n = 0;

	*out = xcalloc(applications_count(as) + 1, sizeof **out);
	for (i = 0; i < as->n; i++) {
		for (j = 0; j < as->apps[i]->n; j++)
			(*out)[n++] = as->apps[i]->instances[j];
	}
	return (n);
}

/* Print a registry answer (table or raw JSON); returns instances seen. */
static long
print_apps(const struct answer *a, int json)
{
	struct applications	 *as;
	const struct instance	**list;
	char			 *cause = NULL;
	size_t			  n;

	if ((as = json_decode_applications(a->body, a->len, clock_wall_ms(),
	    &cause)) == NULL) {
		fprintf(stderr, "heureka: bad answer from server: %s\n", cause);
		free(cause);
		return (-1);
	}
	n = flatten(as, &list);
	if (json)
		printf("%s\n", a->body);
	else
		print_table(list, n);
	free(list);
	applications_free(as);
	return ((long)n);
}

/* heureka apps: every instance of every application. */
static int
cmd_apps(int argc, char **argv)
{
	struct qopts	q;
	struct answer	a;
	int		i, rc;

	if ((i = parse_qopts(argc, argv, &q, cmds[1].usage,
	    "List every registered instance.\n"
	    "  --json        print the server's JSON document\n"
	    "  --server URL  Eureka server (repeatable, or a comma list)\n"))
	    < 0)
		return (CLI_EXIT_USAGE);
	if (i != argc) {
		fprintf(stderr, "usage: heureka %s\n", cmds[1].usage);
		return (CLI_EXIT_USAGE);
	}
	query(&q, HK_REQ_FULL, "GET", "apps/", &a);
	if ((rc = exit_code(&a, q.servers)) == CLI_EXIT_FOUND &&
	    print_apps(&a, q.json) < 0)
		rc = CLI_EXIT_UNREACHABLE;
	free(a.body);
	free(q.servers);
	return (rc);
}

/* heureka get APP [ID]: one application or one instance. */
static int
cmd_get(int argc, char **argv)
{
	struct qopts		 q;
	struct answer		 a;
	struct buf		 b;
	struct application	*app = NULL;
	struct instance		*in = NULL;
	char			*cause = NULL;
	int			 i, rc;

	if ((i = parse_qopts(argc, argv, &q, cmds[2].usage,
	    "Show one application's instances, or one instance.\n"
	    "Exit status: 0 found, 1 not found, 2 unreachable.\n"
	    "  --json        print the server's JSON document\n"
	    "  --server URL  Eureka server (repeatable, or a comma list)\n"))
	    < 0)
		return (CLI_EXIT_USAGE);
	if (argc - i < 1 || argc - i > 2) {
		fprintf(stderr, "usage: heureka %s\n", cmds[2].usage);
		free(q.servers);
		return (CLI_EXIT_USAGE);
	}
	buf_init(&b, 0);
	buf_adds(&b, "apps/");
	url_add_segment(&b, argv[i]);
	if (argc - i == 2) {
		buf_addc(&b, '/');
		url_add_segment(&b, argv[i + 1]);
	}
	query(&q, HK_REQ_QUERY, "GET", b.data, &a);
	buf_free(&b);
	if ((rc = exit_code(&a, q.servers)) != CLI_EXIT_FOUND)
		goto out;
	if (q.json) {
		printf("%s\n", a.body);
		goto out;
	}
	if (argc - i == 2) {
		if ((in = json_decode_instance(a.body, a.len, clock_wall_ms(),
		    &cause)) != NULL)
			print_table((const struct instance *const *)&in, 1);
	} else {
		if ((app = json_decode_application(a.body, a.len,
		    clock_wall_ms(), &cause)) != NULL)
			print_table((const struct instance *const *)
			    app->instances, app->n);
	}
	if (in == NULL && app == NULL) {
		fprintf(stderr, "heureka: bad answer from server: %s\n", cause);
		free(cause);
		rc = CLI_EXIT_UNREACHABLE;
	}
	instance_free(in);
	application_free(app);
out:
	free(a.body);
	free(q.servers);
	return (rc);
}

/* heureka vip VIP: instances behind a VIP address (1 if none). */
static int
cmd_vip(int argc, char **argv)
{
	struct qopts	q;
	struct answer	a;
	struct buf	b;
	long		n;
	int		i, rc;

	if ((i = parse_qopts(argc, argv, &q, cmds[3].usage,
	    "Show the instances whose vipAddress lists VIP.\n"
	    "Exit status: 0 found, 1 none, 2 unreachable.\n"
	    "  --json        print the server's JSON document\n"
	    "  --server URL  Eureka server (repeatable, or a comma list)\n"))
	    < 0)
		return (CLI_EXIT_USAGE);
	if (argc - i != 1) {
		fprintf(stderr, "usage: heureka %s\n", cmds[3].usage);
		free(q.servers);
		return (CLI_EXIT_USAGE);
	}
	buf_init(&b, 0);
	buf_adds(&b, "vips/");
	url_add_segment(&b, argv[i]);
	query(&q, HK_REQ_QUERY, "GET", b.data, &a);
	buf_free(&b);
	if ((rc = exit_code(&a, q.servers)) == CLI_EXIT_FOUND) {
		n = print_apps(&a, q.json);
		if (n < 0)
			rc = CLI_EXIT_UNREACHABLE;
		else if (n == 0)
			rc = CLI_EXIT_NOT_FOUND;
	}
	free(a.body);
	free(q.servers);
	return (rc);
}

/* heureka status APP ID VALUE | --delete APP ID: operator overrides. */
static int
cmd_status(int argc, char **argv)
{
	struct qopts		q;
	struct answer		a;
	struct buf		b;
	enum instance_status	st;
	int			i, rc;

	if ((i = parse_qopts(argc, argv, &q, cmds[4].usage,
	    "Set (PUT) or remove (--delete) an operator status override.\n"
	    "VALUE is UP, DOWN, STARTING, OUT_OF_SERVICE or UNKNOWN.\n"
	    "Exit status: 0 done, 1 no such instance, 2 unreachable.\n"
	    "  --server URL  Eureka server (repeatable, or a comma list)\n"))
	    < 0)
		return (CLI_EXIT_USAGE);
	if (argc - i != (q.del ? 2 : 3) || (!q.del &&
	    instance_status_parse(argv[i + 2], &st) != 0)) {
		fprintf(stderr, "usage: heureka %s\n", cmds[4].usage);
		free(q.servers);
		return (CLI_EXIT_USAGE);
	}
	buf_init(&b, 0);
	buf_adds(&b, "apps/");
	url_add_segment(&b, argv[i]);
	buf_addc(&b, '/');
	url_add_segment(&b, argv[i + 1]);
	buf_adds(&b, "/status");
	if (!q.del)
		buf_addf(&b, "?value=%s", instance_status_name(st));
	query(&q, HK_REQ_QUERY, q.del ? "DELETE" : "PUT", b.data, &a);
	buf_free(&b);
	rc = exit_code(&a, q.servers);
	free(a.body);
	free(q.servers);
	return (rc);
}

struct watch {
	struct event_base	*base;
	const char		*app;
};

/* One line per change. */
static void
watch_change_cb(struct heureka_client *c, enum heureka_change kind,
    const struct heureka_instance *hi, void *arg)
{
	struct watch	*w = arg;

	if (w->app != NULL && strcasecmp(w->app, hi->app) != 0)
		return;
	printf("%s %s %s %s\n", kind == HEUREKA_ADDED ? "ADDED" :
	    kind == HEUREKA_MODIFIED ? "MODIFIED" : "DELETED", hi->app,
	    hi->instance_id, hi->status);
	fflush(stdout);
}

/* SIGINT/SIGTERM: leave the loop. */
static void
watch_signal_cb(evutil_socket_t sig, short what, void *arg)
{
	event_base_loopbreak(arg);
}

/*
 * heureka watch [APP]: full fetch, then the server's watch stream (deltas
 * every --interval as the safety net, and alone on a server without the
 * watch); print each change.
 */
static int
cmd_watch(int argc, char **argv)
{
	struct qopts		 q;
	struct heureka_options	 o;
	struct heureka_client	*c;
	struct watch		 w;
	struct event		*sigint, *sigterm;
	char			*cause = NULL, setting[128];
	const char		*settings[3];
	int			 i;

	if ((i = parse_qopts(argc, argv, &q, cmds[5].usage,
	    "Print one line per registry change, as it arrives:\n"
	    "  ADDED|MODIFIED|DELETED APP INSTANCE-ID STATUS\n"
	    "The first fetch lists the current instances as ADDED; later\n"
	    "changes are pushed by the server's watch stream when it has one.\n"
	    "  --interval S   delta polling period (default 30): the safety\n"
	    "                 net, or the only source without a watch\n"
	    "  --server URL   Eureka server (repeatable, or a comma list)\n"))
	    < 0)
		return (CLI_EXIT_USAGE);
	if (argc - i > 1) {
		fprintf(stderr, "usage: heureka %s\n", cmds[5].usage);
		free(q.servers);
		return (CLI_EXIT_USAGE);
	}
	w.app = argc - i == 1 ? argv[i] : NULL;
	snprintf(setting, sizeof setting,
	    "eureka.client.registry-fetch-interval-seconds=%d", q.interval);
	settings[0] = setting;
	settings[1] = "eureka.client.filter-only-up-instances=false";
	settings[2] = NULL;
	memset(&o, 0, sizeof o);
	o.service_url = cli_servers(q.servers);
	o.no_register = 1;
	o.settings = settings;
	cli_tls_apply(&q.tls, &o);
	if ((c = heureka_client_new(&o, &cause)) == NULL) {
		fprintf(stderr, "heureka: %s\n", cause);
		free(cause);
		free(q.servers);
		return (CLI_EXIT_USAGE);
	}
	w.base = event_base_new();
	heureka_client_on_change(c, watch_change_cb, &w);
	sigint = evsignal_new(w.base, SIGINT, watch_signal_cb, w.base);
	sigterm = evsignal_new(w.base, SIGTERM, watch_signal_cb, w.base);
	evsignal_add(sigint, NULL);
	evsignal_add(sigterm, NULL);
	heureka_client_start(c, w.base);
	event_base_dispatch(w.base);
	heureka_client_free(c);
	event_free(sigint);
	event_free(sigterm);
	event_base_free(w.base);
	free(q.servers);
	return (0);
}

/* Dispatch to the subcommand named by argv[1]. */
int
main(int argc, char **argv)
{
	size_t	i;

	log_init("heureka", LOG_LEVEL_WARN, LOG_FORMAT_TEXT);
	heureka_set_log_level(LOG_LEVEL_WARN);
	signal(SIGPIPE, SIG_IGN);
	if (argc < 2) {
		usage(stderr);
		return (CLI_EXIT_USAGE);
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return (0);
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("heureka 0.1.0\n");
		return (0);
	}
	for (i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
		if (strcmp(argv[1], cmds[i].name) == 0)
			return (cmds[i].fn(argc - 1, argv + 1));
	}
	fprintf(stderr, "heureka: unknown command %s\n", argv[1]);
	usage(stderr);
	return (CLI_EXIT_USAGE);
}
