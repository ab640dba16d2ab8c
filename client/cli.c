/*
 * cli.c: the heureka command-line tool. Dispatches subcommands: `agent`
 * (agent.c, the sidecar), the one-shot queries `apps`, `get`, `vip`, the
 * operator `status` override, the console's `audit` and `doctor`
 * (docs/console.md), and `watch`, which keeps a libheureka copy
 * of the registry and prints each change. Queries use libheureka's
 * failover; exit codes are stable for scripts: 0 found, 1 not found,
 * 2 unreachable (or a server error), 64 usage (EX_USAGE). Every failure
 * is said on stderr with what happened: the connection error (refused,
 * timed out, DNS, TLS) or the HTTP status in words with what it usually
 * means (a 404 from a URL that is not a Eureka API, told apart from "no
 * such application" by asking for the delta; 401/403: credentials), and
 * a lookup that finds nothing says what it did not find.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "heureka-config.h"

#include <event2/event.h>
#include <yajl/yajl_tree.h>

#include "buf.h"
#include "bug.h"
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
static int	cmd_audit(int, char **);
static int	cmd_doctor(int, char **);

static const struct {
	const char	*name;
	int		(*fn)(int, char **);
	const char	*usage;
} cmds[] = {
	{ "agent", agent_main, "agent --app NAME --port PORT [options]" },
	{ "apps", cmd_apps, "apps [--json] [--server URL] [--timeout S]" },
	{ "get", cmd_get, "get APP [ID] [--json] [--server URL] [--timeout S]" },
	{ "vip", cmd_vip, "vip VIP [--json] [--server URL] [--timeout S]" },
	{ "status", cmd_status, "status APP ID VALUE | status --delete APP ID"
	    " [--server URL]" },
	{ "watch", cmd_watch, "watch [APP] [--interval S] [--server URL]" },
	{ "drain", cmd_drain, "drain APP ID [--timeout 60s] [--server URL]" },
	{ "audit", cmd_audit, "audit [APP [ID]] [--json] [--server URL]"
	    " [--timeout S]" },
	{ "doctor", cmd_doctor, "doctor [--json] [--server URL] [--timeout S]" },
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
	const char	*cmd;		/* "apps", "get", ... for messages */
	const char	*usage;
	char		*servers;
	int		 json;
	int		 del;
	int		 interval;
	int		 timeout;	/* s; 0: the library's default */
	struct cli_tls	 tls;
};

/* A usage error: say what is wrong, then the command's usage; 64. */
static int
usage_error(const struct qopts *q, const char *fmt, ...)
{
	va_list	ap;

	fprintf(stderr, "heureka %s: ", q->cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nusage: heureka %s\n", q->usage);
	return (CLI_EXIT_USAGE);
}

/* A number of seconds in [min, max] for option opt, or -1 (said why). */
static int
parse_secs(const struct qopts *q, const char *opt, const char *arg, int min,
    int max)
{
	const char	*errstr = NULL;
	long long	 v;
	char		*end;

	v = strtoll(arg, &end, 10);
	if (*arg == '\0' || *end != '\0')
		errstr = "not a number";
	else if (v < min || v > max)
		errstr = "out of range";
	if (errstr != NULL) {
		usage_error(q, "%s %s: %s (seconds, %d to %d)", opt, arg,
		    errstr, min, max);
		return (-1);
	}
	return ((int)v);
}

/*
 * Parse --server/--json/--delete/--interval/--timeout/--help; returns
 * optind, or -1 after saying what is wrong.
 */
static int
parse_qopts(int argc, char **argv, struct qopts *q, int which,
    const char *help)
{
	static const struct option longopts[] = {
		{ "server", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "delete", no_argument, NULL, 'd' },
		{ "interval", required_argument, NULL, 'i' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		CLI_TLS_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	int	ch;

	memset(q, 0, sizeof *q);
	q->cmd = cmds[which].name;
	q->usage = cmds[which].usage;
	q->interval = 30;
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":s:jdi:t:h", longopts, NULL))
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
			if ((q->interval = parse_secs(q, "--interval", optarg,
			    1, 86400)) < 0)
				goto bad;
			break;
		case 't':
			if ((q->timeout = parse_secs(q, "--timeout", optarg,
			    1, 3600)) < 0)
				goto bad;
			break;
		case 'h':
			printf("usage: heureka %s\n%s%s", q->usage, help,
			    CLI_TLS_HELP);
			free(q->servers);
			exit(0);
		case ':':
			usage_error(q, "%s needs a value", argv[optind - 1]);
			goto bad;
		default:
			usage_error(q, "unknown option %s", argv[optind - 1]);
			goto bad;
		}
	}
	return (optind);
bad:
	free(q->servers);
	q->servers = NULL;
	return (-1);
}

/* Options every query command's --help lists. */
#define QOPTS_HELP \
"  --server URL   Eureka server (repeatable, or a comma list; default\n" \
"                 $EUREKA_CLIENT_SERVICEURL_DEFAULTZONE, else\n" \
"                 " CLI_DEFAULT_SERVER ")\n" \
"  --timeout S    seconds to wait for an answer (default 8)\n"

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

/*
 * Run one request with failover; returns the HTTP status, <= 0 for no
 * answer (hk_status_str says why), or CLI_QUERY_SETUP after saying why
 * the client could not be made.
 */
#define CLI_QUERY_SETUP	(-1000)
static int
query(const struct qopts *q, enum hk_req_kind kind, const char *method,
    const char *path, struct answer *a)
{
	struct heureka_options	 o = HEUREKA_OPTIONS_INIT;
	struct heureka_client	*c;
	char			*cause = NULL, tmo[96];
	const char		*settings[3];

	memset(a, 0, sizeof *a);
	a->status = CLI_QUERY_SETUP;
	o.service_url = cli_servers(q->servers);
	o.no_register = 1;
	o.no_fetch = 1;
	if (q->timeout > 0) {
		snprintf(tmo, sizeof tmo, "eureka.client.eureka-server-read-"
		    "timeout-seconds=%d", q->timeout);
		settings[0] = tmo;
		settings[1] = NULL;
		o.settings = settings;
	}
	cli_tls_apply(&q->tls, &o);
	if ((c = heureka_client_new(&o, &cause)) == NULL) {
		fprintf(stderr, "heureka %s: %s\n", q->cmd, cause);
		free(cause);
		return (a->status);
	}
	if ((a->base = event_base_new()) == NULL) {
		fprintf(stderr, "heureka %s: no event loop\n", q->cmd);
		heureka_client_free(c);
		return (a->status);
	}
	if (heureka_client_start(c, a->base) != 0) {
		fprintf(stderr, "heureka %s: cannot start the client: %s\n",
		    q->cmd, strerror(errno));
		heureka_client_free(c);
		event_base_free(a->base);
		return (a->status);
	}
	hk_client_request(c, kind, method, path, NULL, answer_cb, a);
	event_base_dispatch(a->base);
	heureka_client_free(c);
	event_base_free(a->base);
	return (a->status);
}

/* The server's own reason, when its body is one short line of text. */
static void
print_reason(const struct answer *a)
{
	size_t	i, n = a->len;

	while (n > 0 && (a->body[n - 1] == '\n' || a->body[n - 1] == '\r' ||
	    a->body[n - 1] == ' '))
		n--;
	if (n == 0 || n > 200)
		return;
	for (i = 0; i < n; i++) {
		if ((unsigned char)a->body[i] < 0x20 || a->body[i] == '<' ||
		    a->body[i] == '{')
			return;		/* not a plain sentence */
	}
	fprintf(stderr, " (the server says: %.*s)", (int)n, a->body);
}

/* What to do about an answer, after the status in words. */
static const char *
status_hint(int status)
{
	switch (status) {
	case HK_NET_STATUS(HK_NET_REFUSED):
		return (": is the server running, on that host and port?");
	case HK_NET_STATUS(HK_NET_TIMEOUT):
		return (": the server or the network is too slow, a "
		    "firewall drops the packets, or it is https:// against a "
		    "plain http port (--timeout S waits longer)");
	case HK_NET_STATUS(HK_NET_DNS):
		return (": check the host name in the URL");
	case HK_NET_STATUS(HK_NET_HANDSHAKE):
		return (": is it https:// against a plain http port?");
	case HK_NET_STATUS(HK_NET_CLOSED):
		return (": is it http:// against a TLS port, or did "
		    "something in between drop it?");
	case HK_NET_STATUS(HK_NET_TLS):
		return (": the reason is above; --cacert FILE trusts the CA "
		    "that signed the server's certificate");
	case 401:
	case 403:
		return (": wrong or missing credentials (give them in the "
		    "URL: http://USER:PASSWORD@host:port/eureka/)");
	case 404:
		return (": nothing Eureka at this URL; the URL must end in "
		    "/eureka/ (e.g. " CLI_DEFAULT_SERVER ")");
	case 503:
		return (": the server is not ready (starting, syncing with "
		    "its peers, or stopping)");
	}
	return ("");
}

/* Say why a query failed (no answer, or an answer refused); returns 2. */
static int
query_failed(const struct qopts *q, const struct answer *a)
{
	char		 sb[HK_STATUS_MAX];
	char		*shown;
	const char	*list = cli_servers(q->servers);

	if (a->status == CLI_QUERY_SETUP)
		return (CLI_EXIT_UNREACHABLE);	/* said already */
	shown = config_redact(list);
	if (strchr(list, ',') != NULL)
		fprintf(stderr, "heureka %s: no server took the request (%s); "
		    "the last: %s%s", q->cmd, shown,
		    hk_status_str(a->status, sb, sizeof sb),
		    status_hint(a->status));
	else if (a->status <= 0)
		fprintf(stderr, "heureka %s: %s: %s%s", q->cmd, shown,
		    hk_status_str(a->status, sb, sizeof sb),
		    status_hint(a->status));
	else
		fprintf(stderr, "heureka %s: %s answered %s%s", q->cmd, shown,
		    hk_status_str(a->status, sb, sizeof sb),
		    status_hint(a->status));
	if (a->status > 0)
		print_reason(a);
	fputc('\n', stderr);
	free(shown);
	return (CLI_EXIT_UNREACHABLE);
}

/*
 * A lookup answered 404: is that "no such application" or a service URL
 * that is not a Eureka API at all? Ask for the delta, which every Eureka
 * server has (200, or 403 when it is turned off) and which is small.
 * Returns 1 when the URL looks right.
 */
static int
eureka_here(const struct qopts *q)
{
	struct answer	a;
	int		st;

	st = query(q, HK_REQ_DELTA, "GET", "apps/delta", &a);
	free(a.body);
	return (st != 404);
}

/*
 * Map a lookup's answer to the exit code: 0 found; 1 not found, said
 * with what (a 404 from a URL that is no Eureka API is an error, 2);
 * 2 with the reason otherwise.
 */
static int
lookup_result(const struct qopts *q, const struct answer *a,
    const char *fmt, ...)
{
	va_list	 ap;
	char	*shown;

	if (a->status == 200 || a->status == 204)
		return (CLI_EXIT_FOUND);
	if (a->status != 404 || !eureka_here(q))
		return (query_failed(q, a));
	shown = config_redact(cli_servers(q->servers));
	fprintf(stderr, "heureka %s: ", q->cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " on %s\n", shown);
	free(shown);
	return (CLI_EXIT_NOT_FOUND);
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

	if ((i = parse_qopts(argc, argv, &q, 1,
	    "List every registered instance.\n"
	    "Exit status: 0 listed, 2 unreachable or refused, 64 usage.\n"
	    "  --json         print the server's JSON document\n"
	    QOPTS_HELP)) < 0)
		return (CLI_EXIT_USAGE);
	if (i != argc) {
		rc = usage_error(&q, "unexpected argument %s", argv[i]);
		free(q.servers);
		return (rc);
	}
	query(&q, HK_REQ_FULL, "GET", "apps/", &a);
	if (a.status != 200)
		rc = query_failed(&q, &a);
	else if (print_apps(&a, q.json) < 0)
		rc = CLI_EXIT_UNREACHABLE;
	else
		rc = CLI_EXIT_FOUND;
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

	if ((i = parse_qopts(argc, argv, &q, 2,
	    "Show one application's instances, or one instance.\n"
	    "Exit status: 0 found, 1 not found, 2 unreachable or refused,\n"
	    "64 usage.\n"
	    "  --json         print the server's JSON document\n"
	    QOPTS_HELP)) < 0)
		return (CLI_EXIT_USAGE);
	if (argc - i < 1 || argc - i > 2) {
		if (argc - i < 1)
			rc = usage_error(&q, "which application?");
		else
			rc = usage_error(&q, "unexpected argument %s",
			    argv[i + 2]);
		free(q.servers);
		return (rc);
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
	if (argc - i == 2)
		rc = lookup_result(&q, &a, "no instance %s of application %s",
		    argv[i + 1], argv[i]);
	else
		rc = lookup_result(&q, &a, "no application %s", argv[i]);
	if (rc != CLI_EXIT_FOUND)
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
		fprintf(stderr, "heureka get: bad answer from server: %s\n",
		    cause);
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
	struct qopts		 q;
	struct answer		 a;
	struct applications	*as;
	struct buf		 b;
	char			*cause = NULL, *shown;
	int			 i, rc;

	if ((i = parse_qopts(argc, argv, &q, 3,
	    "Show the instances whose vipAddress lists VIP.\n"
	    "Exit status: 0 found, 1 none, 2 unreachable or refused,\n"
	    "64 usage.\n"
	    "  --json         print the server's JSON document\n"
	    QOPTS_HELP)) < 0)
		return (CLI_EXIT_USAGE);
	if (argc - i != 1) {
		if (argc - i < 1)
			rc = usage_error(&q, "which VIP address?");
		else
			rc = usage_error(&q, "unexpected argument %s",
			    argv[i + 1]);
		free(q.servers);
		return (rc);
	}
	buf_init(&b, 0);
	buf_adds(&b, "vips/");
	url_add_segment(&b, argv[i]);
	query(&q, HK_REQ_QUERY, "GET", b.data, &a);
	buf_free(&b);
	rc = lookup_result(&q, &a, "no instance has VIP address %s", argv[i]);
	if (rc != CLI_EXIT_FOUND)
		goto out;
	/* Eureka answers an unknown VIP with an empty list. */
	if ((as = json_decode_applications(a.body, a.len, clock_wall_ms(),
	    &cause)) == NULL) {
		fprintf(stderr, "heureka vip: bad answer from server: %s\n",
		    cause);
		free(cause);
		rc = CLI_EXIT_UNREACHABLE;
	} else if (applications_count(as) == 0) {
		shown = config_redact(cli_servers(q.servers));
		fprintf(stderr, "heureka vip: no instance has VIP address %s "
		    "on %s\n", argv[i], shown);
		free(shown);
		rc = CLI_EXIT_NOT_FOUND;
	} else
		print_apps(&a, q.json);
	applications_free(as);
out:
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
	int			i, rc, want;

	if ((i = parse_qopts(argc, argv, &q, 4,
	    "Set (PUT) or remove (--delete) an operator status override.\n"
	    "VALUE is UP, DOWN, STARTING, OUT_OF_SERVICE or UNKNOWN; the\n"
	    "override wins over what the instance reports until removed.\n"
	    "--delete removes it: Eureka marks the instance UNKNOWN, answers\n"
	    "its next heartbeat 404, and the instance registers again with\n"
	    "its own status (within one renewal interval, 30 s by default).\n"
	    "Exit status: 0 done, 1 no such instance, 2 unreachable or\n"
	    "refused, 64 usage.\n"
	    "  --delete       remove the override (see above)\n"
	    QOPTS_HELP)) < 0)
		return (CLI_EXIT_USAGE);
	want = q.del ? 2 : 3;
	if (argc - i != want) {
		rc = usage_error(&q, "expected %s, got %d argument%s",
		    q.del ? "APP ID (with --delete)" : "APP ID VALUE",
		    argc - i, argc - i == 1 ? "" : "s");
		free(q.servers);
		return (rc);
	}
	if (!q.del && instance_status_parse(argv[i + 2], &st) != 0) {
		rc = usage_error(&q, "%s is not a status (UP, DOWN, STARTING, "
		    "OUT_OF_SERVICE or UNKNOWN)", argv[i + 2]);
		free(q.servers);
		return (rc);
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
	rc = lookup_result(&q, &a, "no instance %s of application %s",
	    argv[i + 1], argv[i]);
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
	char			*cause = NULL, setting[128], tmo[96];
	const char		*settings[4];
	int			 i, rc;

	if ((i = parse_qopts(argc, argv, &q, 5,
	    "Print one line per registry change, as it arrives:\n"
	    "  ADDED|MODIFIED|DELETED APP INSTANCE-ID STATUS\n"
	    "The first fetch lists the current instances as ADDED; later\n"
	    "changes are pushed by the server's watch stream when it has one.\n"
	    "Runs until SIGINT/SIGTERM (exit 0); failed fetches are retried\n"
	    "and said on stderr.\n"
	    "  --interval S   delta polling period (default 30): the safety\n"
	    "                 net, or the only source without a watch\n"
	    QOPTS_HELP)) < 0)
		return (CLI_EXIT_USAGE);
	if (argc - i > 1) {
		rc = usage_error(&q, "unexpected argument %s", argv[i + 1]);
		free(q.servers);
		return (rc);
	}
	w.app = argc - i == 1 ? argv[i] : NULL;
	snprintf(setting, sizeof setting,
	    "eureka.client.registry-fetch-interval-seconds=%d", q.interval);
	settings[0] = setting;
	settings[1] = "eureka.client.filter-only-up-instances=false";
	settings[2] = NULL;
	if (q.timeout > 0) {
		snprintf(tmo, sizeof tmo, "eureka.client.eureka-server-read-"
		    "timeout-seconds=%d", q.timeout);
		settings[2] = tmo;
	}
	settings[3] = NULL;
	o = (struct heureka_options)HEUREKA_OPTIONS_INIT;
	o.service_url = cli_servers(q.servers);
	o.no_register = 1;
	o.settings = settings;
	cli_tls_apply(&q.tls, &o);
	if ((c = heureka_client_new(&o, &cause)) == NULL) {
		fprintf(stderr, "heureka watch: %s\n", cause);
		free(cause);
		free(q.servers);
		return (CLI_EXIT_USAGE);
	}
	if ((w.base = event_base_new()) == NULL) {
		fprintf(stderr, "heureka watch: no event loop\n");
		heureka_client_free(c);
		free(q.servers);
		return (CLI_EXIT_UNREACHABLE);
	}
	heureka_client_on_change(c, watch_change_cb, &w);
	sigint = evsignal_new(w.base, SIGINT, watch_signal_cb, w.base);
	sigterm = evsignal_new(w.base, SIGTERM, watch_signal_cb, w.base);
	evsignal_add(sigint, NULL);
	evsignal_add(sigterm, NULL);
	rc = 0;
	if (heureka_client_start(c, w.base) != 0) {
		fprintf(stderr, "heureka watch: cannot start the client: %s\n",
		    strerror(errno));
		rc = CLI_EXIT_UNREACHABLE;
	} else
		event_base_dispatch(w.base);
	heureka_client_free(c);
	event_free(sigint);
	event_free(sigterm);
	event_base_free(w.base);
	free(q.servers);
	return (rc);
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
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
		printf("heureka %s (revision %s)\n", PACKAGE_VERSION,
		    HK_REVISION);
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

/* A string member of a yajl object, "" when absent or not a string. */
static const char *
tree_str(yajl_val v, const char *key)
{
	const char	*path[] = { key, NULL };
	yajl_val	 m = yajl_tree_get(v, path, yajl_t_string);

	return (m != NULL ? YAJL_GET_STRING(m) : "");
}

/* An integer member, 0 when absent. */
static long long
tree_int(yajl_val v, const char *key)
{
	const char	*path[] = { key, NULL };
	yajl_val	 m = yajl_tree_get(v, path, yajl_t_number);

	return (m != NULL && YAJL_IS_INTEGER(m) ? YAJL_GET_INTEGER(m) : 0);
}

/* Epoch ms as "2026-12-07 07:23:43Z" into out. */
static void
cli_time(long long ms, char *out, size_t len)
{
	time_t		t = (time_t)(ms / 1000);
	struct tm	tm;

	if (ms <= 0 || gmtime_r(&t, &tm) == NULL)
		snprintf(out, len, "-");
	else
		strftime(out, len, "%Y-%m-%d %H:%M:%SZ", &tm);
}

/*
 * GET path (a heureka/ JSON document) and find its array member key.
 * Returns the array, with the parsed document in *root for the caller to
 * free and the answer in *a; or NULL with *rc set to the exit status,
 * the failure already said (refused, unreachable, or a body that is not
 * heureka's list: an older heurekad, or not heureka at all).
 */
static yajl_val
query_list(struct qopts *q, const char *cmd, const char *path,
    const char *key, struct answer *a, yajl_val *root, int *rc)
{
	const char	*member[] = { key, NULL };
	yajl_val	 arr = NULL;
	char		 err[128];

	*root = NULL;
	query(q, HK_REQ_QUERY, "GET", path, a);
	if (a->status != 200) {
		*rc = query_failed(q, a);
		return (NULL);
	}
	*root = yajl_tree_parse(a->body != NULL ? a->body : "", err,
	    sizeof err);
	if (*root != NULL)
		arr = yajl_tree_get(*root, member, yajl_t_array);
	/* Asked for yajl_t_array, yajl_tree_get finds an array or nothing. */
	HK_ASSERT(arr == NULL || YAJL_IS_ARRAY(arr));
	if (arr == NULL) {
		fprintf(stderr, "heureka %s: bad answer from server (not "
		    "heureka's %s list: an older heurekad, or not heureka?)\n",
		    cmd, key);
		*rc = CLI_EXIT_UNREACHABLE;
	}
	return (arr);
}

/* heureka audit [APP [ID]]: who changed what, newest first. */
static int
cmd_audit(int argc, char **argv)
{
	struct qopts	 q;
	struct answer	 a;
	struct buf	 b;
	yajl_val	 root = NULL, arr, r, *recs;
	size_t		 k, n;
	char		 when[32];
	int		 i, rc;

	if ((i = parse_qopts(argc, argv, &q, 7,
	    "Show the audit: every change to the registry with when, what,\n"
	    "who (user, \"peer\", \"anonymous\" or \"server\"), from which\n"
	    "address and the node where it entered the cluster; newest\n"
	    "first, of one application or one instance if named.\n"
	    "Exit status: 0 shown (also none), 2 unreachable or refused,\n"
	    "64 usage.\n"
	    "  --json         print the server's JSON document\n"
	    QOPTS_HELP)) < 0)
		return (CLI_EXIT_USAGE);
	if (argc - i > 2) {
		rc = usage_error(&q, "unexpected argument %s", argv[i + 2]);
		free(q.servers);
		return (rc);
	}
	buf_init(&b, 0);
	buf_adds(&b, "heureka/audit");
	if (argc - i >= 1) {
		buf_adds(&b, "?app=");
		url_add_segment(&b, argv[i]);
	}
	if (argc - i == 2) {
		buf_adds(&b, "&id=");
		url_add_segment(&b, argv[i + 1]);
	}
	arr = query_list(&q, "audit", b.data, "records", &a, &root, &rc);
	buf_free(&b);
	if (arr == NULL)
		goto out;
	rc = CLI_EXIT_FOUND;
	if (q.json) {
		printf("%s\n", a.body);
		goto out;
	}
	/*
	 * Still query_list's array: nothing since has touched the tree
	 * (the analyzer assumes the calls between could have).
	 */
	HK_ASSERT(YAJL_IS_ARRAY(arr));
	n = YAJL_GET_ARRAY(arr)->len;
	recs = YAJL_GET_ARRAY(arr)->values;
	if (n == 0)
		printf("no changes recorded%s\n", argc - i > 0 ?
		    " for it (the ring keeps the most recent ones)" : "");
	for (k = 0; k < n; k++) {
		r = recs[k];
		cli_time(tree_int(r, "time"), when, sizeof when);
		printf("%s  %-16s %s/%s  %s\n    by %s%s%s, entered at %s%s\n",
		    when, tree_str(r, "what"), tree_str(r, "app"),
		    tree_str(r, "id"), tree_str(r, "detail"),
		    tree_str(r, "user"), *tree_str(r, "address") != '\0' ?
		    " from " : "", tree_str(r, "address"),
		    tree_str(r, "node"), YAJL_IS_TRUE(yajl_tree_get(r,
		    (const char *[]){ "replicated", NULL }, yajl_t_true)) ?
		    " (replicated here)" : "");
	}
out:
	yajl_tree_free(root);
	free(a.body);
	free(q.servers);
	return (rc);
}

/* heureka doctor: the server's findings; 1 when there are any. */
static int
cmd_doctor(int argc, char **argv)
{
	struct qopts	 q;
	struct answer	 a;
	yajl_val	 root = NULL, arr, f;
	size_t		 k, n = 0;
	char		 when[32];
	const char	*app, *id;
	int		 i, rc;

	if ((i = parse_qopts(argc, argv, &q, 8,
	    "Show what the server sees going wrong (renew-interval,\n"
	    "id-conflict, reregister-storm, peer, clock-skew,\n"
	    "self-preservation), in plain words.\n"
	    "Exit status: 0 nothing found, 1 findings, 2 unreachable or\n"
	    "refused, 64 usage.\n"
	    "  --json         print the server's JSON document\n"
	    QOPTS_HELP)) < 0)
		return (CLI_EXIT_USAGE);
	if (i != argc) {
		rc = usage_error(&q, "unexpected argument %s", argv[i]);
		free(q.servers);
		return (rc);
	}
	if ((arr = query_list(&q, "doctor", "heureka/doctor", "findings", &a,
	    &root, &rc)) == NULL)
		goto out;
	n = YAJL_GET_ARRAY(arr)->len;
	rc = n > 0 ? CLI_EXIT_NOT_FOUND : CLI_EXIT_FOUND;
	if (q.json) {
		printf("%s\n", a.body);
		goto out;
	}
	if (n == 0)
		printf("nothing wrong seen\n");
	for (k = 0; k < n; k++) {
		f = YAJL_GET_ARRAY(arr)->values[k];
		app = tree_str(f, "app");
		id = tree_str(f, "id");
		cli_time(tree_int(f, "since"), when, sizeof when);
		printf("%-18s %s%s%s  (since %s)\n    %s\n",
		    tree_str(f, "kind"), app, *app != '\0' && *id != '\0' ?
		    "/" : "", *app == '\0' && *id == '\0' ? "this node" : id,
		    when, tree_str(f, "detail"));
	}
out:
	yajl_tree_free(root);
	free(a.body);
	free(q.servers);
	return (rc);
}
