/*
 * agent.c: `heureka agent`, a sidecar that keeps a non-C service
 * registered. It runs a libheureka client for the service's name and port,
 * probes the service's health URL every --health-interval seconds and
 * flips the instance UP or DOWN through the library's dirty path (so the
 * change reaches the server by the rate-limited on-demand update, which
 * says in the log when it holds one back, or at the latest by the next
 * replicator run), and cancels the registration on SIGTERM/SIGINT before
 * exiting 0. With a health URL the instance registers STARTING and turns
 * UP only when a probe first passes (a failing service is never announced
 * UP); it refuses to start without a port (flag, config or environment).
 * With --drain it first takes the instance out of traffic and waits for
 * the drain barrier (clidrain.c), as `heureka drain` does, within
 * --drain-timeout.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/dns.h>
#include <event2/event.h>
#include <event2/http.h>

#include "log.h"
#include "xmalloc.h"

#include "cli.h"
#include "heureka.h"
#include "internal.h"

#define AGENT_MAX_SETTINGS	256

struct agent {
	struct event_base		*base;
	struct evdns_base		*dns;
	struct heureka_client		*client;
	char				*health_url;
	int				 health_interval;
	struct evhttp_connection	*hconn;
	struct evhttp_uri		*huri;
	struct evhttp_request		*hreq;
	struct event			*probe_ev;
	int				 last_ok;	/* -1 unknown */
	int				 passed;	/* a probe passed once */
	int				 stopping;
	struct cli_drain		 drain;		/* --drain */
	int				 draining;
};

static const char agent_usage[] =
"usage: heureka agent --app NAME --port PORT [options]\n"
"Register a service with Eureka, heartbeat for it, and cancel the\n"
"registration on SIGTERM/SIGINT.\n"
"  --app NAME             application name (eureka.instance.appname)\n"
"  --port PORT            the service's port (required, here or as\n"
"                         eureka.instance.non-secure-port in -c/-D/env)\n"
"  --health-url URL       probe this URL: 2xx means UP, anything else DOWN;\n"
"                         registered STARTING until a probe first passes\n"
"  --health-interval S    seconds between probes (default 10)\n"
"  --metadata K=V         metadata entry (repeatable)\n"
"  --server URL           Eureka server (repeatable, or a comma list;\n"
"                         default $EUREKA_CLIENT_SERVICEURL_DEFAULTZONE,\n"
"                         else " CLI_DEFAULT_SERVER ")\n"
"  --hostname H           host name to register (default gethostname)\n"
"  --ip IP                IP address to register (default first non-loopback)\n"
"  --instance-id ID       instance id (default HOST:APP:PORT)\n"
"  --renewal-interval S   heartbeat period (default 30)\n"
"  --lease-duration S     lease expiry the server applies (default 90)\n"
"  --drain                on SIGTERM/SIGINT: OUT_OF_SERVICE, wait for the\n"
"                         drain barrier on every server, then cancel\n"
"  --drain-timeout D      give the barrier up after D (default 60s)\n"
"  -c FILE                .yml or .properties with eureka.* keys\n"
"  -D KEY=VALUE           any eureka.client.* / eureka.instance.* setting\n"
"  -v                     log debug lines\n"
"Environment variables (EUREKA_INSTANCE_APPNAME, ...) are read too.\n";

static void	probe_start(struct agent *);

/* A probe's outcome in words: "answered 200", "no answer". */
static const char *
probe_what(int code, struct evhttp_request *req)
{
	static char	buf[64];

	if (req == NULL || code == 0)
		return ("no answer (connection refused or timed out)");
	snprintf(buf, sizeof buf, "answered %d", code);
	return (buf);
}

/* The health probe answered. */
static void
probe_done_cb(struct evhttp_request *req, void *arg)
{
	struct agent	*ag = arg;
	int		 code = req != NULL ?
			    evhttp_request_get_response_code(req) : 0;
	int		 ok = code >= 200 && code < 300;

	ag->hreq = NULL;
	if (ag->stopping)
		return;
	if (!ok && !ag->passed) {
		/* Never healthy yet: it stays STARTING, not DOWN. */
		if (ag->last_ok != 0)
			log_info("agent: health %s: %s: still STARTING",
			    ag->health_url, probe_what(code, req));
		ag->last_ok = 0;
		return;
	}
	if (ok != ag->last_ok) {
		log_info("agent: health %s: %s: %s", ag->health_url,
		    probe_what(code, req), ok ? "UP" : "DOWN");
		heureka_client_set_status(ag->client, ok ? "UP" : "DOWN");
		ag->last_ok = ok;
	}
	if (ok)
		ag->passed = 1;
}

/* Probe timer. */
static void
probe_cb(evutil_socket_t fd, short what, void *arg)
{
	probe_start(arg);
}

/* GET the health URL (one at a time), then arm the next probe. */
static void
probe_start(struct agent *ag)
{
	struct evhttp_request	*req;
	struct timeval		 tv = { ag->health_interval, 0 };
	const char		*path, *q, *host;
	char			*uri;
	int			 port;

	evtimer_add(ag->probe_ev, &tv);
	if (ag->hreq != NULL)
		return;			/* the last one is still out */
	host = evhttp_uri_get_host(ag->huri);
	port = evhttp_uri_get_port(ag->huri);
	if (port <= 0)
		port = 80;
	if (ag->hconn == NULL) {
		ag->hconn = evhttp_connection_base_new(ag->base, ag->dns, host,
		    (unsigned short)port);
		evhttp_connection_set_timeout(ag->hconn,
		    ag->health_interval < 5 ? ag->health_interval : 5);
		evhttp_connection_set_retries(ag->hconn, 0);
	}
	path = evhttp_uri_get_path(ag->huri);
	q = evhttp_uri_get_query(ag->huri);
	xasprintf(&uri, "%s%s%s", path != NULL && *path != '\0' ? path : "/",
	    q != NULL ? "?" : "", q != NULL ? q : "");
	req = evhttp_request_new(probe_done_cb, ag);
	evhttp_add_header(evhttp_request_get_output_headers(req), "Host",
	    host);
	if (evhttp_make_request(ag->hconn, req, EVHTTP_REQ_GET, uri) == 0)
		ag->hreq = req;
	free(uri);
}

/* The registration is cancelled and the client freed: leave the loop. */
static void
agent_stopped_cb(void *arg)
{
	struct agent	*ag = arg;

	ag->client = NULL;
	event_base_loopbreak(ag->base);
}

/* SIGTERM/SIGINT: cancel, then exit. */
static void
agent_signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct agent	*ag = arg;

	if (ag->stopping)
		return;
	ag->stopping = 1;
	log_info("agent: signal %d, cancelling the registration", (int)sig);
	if (ag->probe_ev != NULL)
		evtimer_del(ag->probe_ev);
	if (ag->hreq != NULL) {
		evhttp_cancel_request(ag->hreq);
		ag->hreq = NULL;
	}
	if (ag->draining) {
		/* Blocks this loop (no heartbeat) for at most the timeout. */
		ag->drain.id = heureka_client_instance_id(ag->client);
		if (cli_drain_run(&ag->drain) == CLI_EXIT_FOUND)
			log_info("agent: drained");
		else
			log_warnx("agent: not drained; cancelling anyway");
	}
	heureka_client_stop(ag->client, agent_stopped_cb, ag);
}

/* Add "key=value" to the settings list; -1 (said) when it is full. */
static int
add_setting(char **settings, int *n, const char *key, const char *value)
{
	if (*n >= AGENT_MAX_SETTINGS - 1) {
		fprintf(stderr, "heureka agent: more than %d settings\n",
		    AGENT_MAX_SETTINGS - 1);
		return (-1);
	}
	if (key == NULL)
		settings[(*n)++] = xstrdup(value);
	else
		xasprintf(&settings[(*n)++], "%s=%s", key, value);
	settings[*n] = NULL;
	return (0);
}

/* What the command line asked for. */
struct agent_args {
	struct heureka_options	 o;
	struct cli_tls		 tls;
	char			*settings[AGENT_MAX_SETTINGS];
	int			 n;
	char			*servers;
	int			 verbose;
};

/* A usage error: say what is wrong, then how to ask for help; 64. */
static int
agent_usage_error(const char *fmt, ...)
{
	va_list	ap;

	fprintf(stderr, "heureka agent: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nusage: heureka agent --app NAME --port PORT "
	    "[options] (heureka agent --help)\n");
	return (CLI_EXIT_USAGE);
}

/* A whole number in [min, max] for option opt, or -1 (said why). */
static int
agent_number(const char *opt, const char *arg, int min, int max)
{
	char		*end;
	long long	 v;

	v = strtoll(arg, &end, 10);
	if (*arg == '\0' || *end != '\0' || v < min || v > max) {
		agent_usage_error("%s %s: expected a number from %d to %d",
		    opt, arg, min, max);
		return (-1);
	}
	return ((int)v);
}

/*
 * Parse the command line into args and ag; 0 to run, else the exit code
 * (0 after --help, 64 after saying what is wrong).
 */
static int
agent_parse(int argc, char **argv, struct agent *ag, struct agent_args *aa)
{
	static const struct option longopts[] = {
		{ "app", required_argument, NULL, 'a' },
		{ "port", required_argument, NULL, 'p' },
		{ "health-url", required_argument, NULL, 'H' },
		{ "health-interval", required_argument, NULL, 'I' },
		{ "metadata", required_argument, NULL, 'm' },
		{ "server", required_argument, NULL, 's' },
		{ "hostname", required_argument, NULL, 'n' },
		{ "ip", required_argument, NULL, 'i' },
		{ "instance-id", required_argument, NULL, 'x' },
		{ "renewal-interval", required_argument, NULL, 'r' },
		{ "lease-duration", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ "drain", no_argument, NULL, 'N' },
		{ "drain-timeout", required_argument, NULL, 'T' },
		CLI_TLS_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	char	*eq, *k;
	int	 ch, rc = 0;

	optind = 1;
	opterr = 0;
	while (rc == 0 && (ch = getopt_long(argc, argv, ":a:p:c:D:vh",
	    longopts, NULL)) != -1) {
		if (cli_tls_opt(&aa->tls, ch, optarg))
			continue;
		switch (ch) {
		case 'a':
			aa->o.app_name = optarg;
			break;
		case 'p':
			if ((aa->o.port = agent_number("--port", optarg, 1,
			    65535)) < 0)
				rc = CLI_EXIT_USAGE;
			break;
		case 'H':
			ag->health_url = optarg;
			break;
		case 'I':
			if ((ag->health_interval = agent_number(
			    "--health-interval", optarg, 1, 3600)) < 0)
				rc = CLI_EXIT_USAGE;
			break;
		case 'm':
			if ((eq = strchr(optarg, '=')) == NULL ||
			    eq == optarg) {
				rc = agent_usage_error("--metadata %s: "
				    "expected KEY=VALUE", optarg);
				break;
			}
			xasprintf(&k, "eureka.instance.metadata-map.%.*s",
			    (int)(eq - optarg), optarg);
			if (add_setting(aa->settings, &aa->n, k, eq + 1) != 0)
				rc = CLI_EXIT_USAGE;
			free(k);
			break;
		case 's':
			cli_add_server(&aa->servers, optarg);
			break;
		case 'n':
			aa->o.host_name = optarg;
			break;
		case 'i':
			aa->o.ip_addr = optarg;
			break;
		case 'x':
			aa->o.instance_id = optarg;
			break;
		case 'r':
			if (add_setting(aa->settings, &aa->n, "eureka.instance."
			    "lease-renewal-interval-in-seconds", optarg) != 0)
				rc = CLI_EXIT_USAGE;
			break;
		case 'l':
			if (add_setting(aa->settings, &aa->n, "eureka.instance."
			    "lease-expiration-duration-in-seconds", optarg) != 0)
				rc = CLI_EXIT_USAGE;
			break;
		case 'c':
			aa->o.config_file = optarg;
			break;
		case 'N':
			ag->draining = 1;
			break;
		case 'T':
			if ((ag->drain.timeout_ms = cli_duration_ms(optarg)) <= 0)
				rc = agent_usage_error("--drain-timeout %s: "
				    "expected a duration (60s, 500ms, 2m)",
				    optarg);
			break;
		case 'D':
			if (add_setting(aa->settings, &aa->n, NULL, optarg) != 0)
				rc = CLI_EXIT_USAGE;
			break;
		case 'v':
			aa->verbose = 1;
			break;
		case 'h':
			fputs(agent_usage, stdout);
			fputs(CLI_TLS_HELP, stdout);
			return (-1);
		case ':':
			rc = agent_usage_error("%s needs a value",
			    argv[optind - 1]);
			break;
		default:
			rc = agent_usage_error("unknown option %s",
			    argv[optind - 1]);
			break;
		}
	}
	if (rc == 0 && optind != argc)
		rc = agent_usage_error("unexpected argument %s", argv[optind]);
	if (rc == 0 && ag->draining && aa->o.app_name == NULL)
		rc = agent_usage_error("--drain needs --app");
	return (rc);
}

/*
 * Make the client from the arguments; 0, or the exit code after saying
 * why not. The port may come from a flag, -c, -D or the environment; a
 * service without one is refused rather than registered as port 0.
 */
static int
agent_client(struct agent *ag, struct agent_args *aa)
{
	const char	*scheme;
	char		*cause = NULL;

	ag->drain.servers = aa->servers;
	ag->drain.tls = aa->tls;
	ag->drain.app = aa->o.app_name;
	if (ag->drain.timeout_ms == 0)
		ag->drain.timeout_ms = 60000;
	aa->o.use_env = 1;
	aa->o.no_fetch = 1;	/* a sidecar registers; it does not look up */
	aa->o.settings = (const char *const *)aa->settings;
	cli_tls_apply(&aa->tls, &aa->o);
	if (aa->servers != NULL ||
	    getenv("EUREKA_CLIENT_SERVICEURL_DEFAULTZONE") == NULL)
		aa->o.service_url = cli_servers(aa->servers);
	if ((ag->client = heureka_client_new(&aa->o, &cause)) == NULL) {
		agent_usage_error("%s", cause);
		free(cause);
		return (CLI_EXIT_USAGE);
	}
	if (hk_client_self(ag->client)->port <= 0) {
		heureka_client_free(ag->client);
		ag->client = NULL;
		return (agent_usage_error("--port is required: the port your "
		    "service listens on (or eureka.instance.non-secure-port)"));
	}
	if (ag->health_url != NULL) {
		ag->huri = evhttp_uri_parse(ag->health_url);
		scheme = ag->huri != NULL ? evhttp_uri_get_scheme(ag->huri) :
		    NULL;
		if (scheme == NULL || strcasecmp(scheme, "http") != 0 ||
		    evhttp_uri_get_host(ag->huri) == NULL) {
			heureka_client_free(ag->client);
			ag->client = NULL;
			return (agent_usage_error("--health-url %s: expected "
			    "http://host[:port]/path", ag->health_url));
		}
		/* Not UP before the service says so (Spring's STARTING). */
		heureka_client_set_status(ag->client, "STARTING");
	}
	return (0);
}

/* heureka agent: keep a non-C service registered until SIGTERM/SIGINT. */
int
agent_main(int argc, char **argv)
{
	struct agent		 ag;
	struct agent_args	 aa;
	struct event		*sigint, *sigterm;
	int			 i, rc;

	memset(&ag, 0, sizeof ag);
	memset(&aa, 0, sizeof aa);
	aa.o = (struct heureka_options)HEUREKA_OPTIONS_INIT;
	ag.health_interval = 10;
	ag.last_ok = -1;
	if ((rc = agent_parse(argc, argv, &ag, &aa)) != 0) {
		if (rc < 0)
			rc = 0;		/* --help */
		goto out;
	}
	log_init("heureka", aa.verbose ? LOG_LEVEL_DEBUG : LOG_LEVEL_INFO,
	    LOG_FORMAT_TEXT);
	heureka_set_log_level(aa.verbose ? HEUREKA_LOG_DEBUG :
	    HEUREKA_LOG_INFO);
	if ((rc = agent_client(&ag, &aa)) != 0)
		goto out;
	if ((ag.base = event_base_new()) == NULL) {
		fprintf(stderr, "heureka agent: no event loop\n");
		heureka_client_free(ag.client);
		rc = CLI_EXIT_UNREACHABLE;
		goto out;
	}
	ag.dns = evdns_base_new(ag.base, EVDNS_BASE_INITIALIZE_NAMESERVERS);
	sigint = evsignal_new(ag.base, SIGINT, agent_signal_cb, &ag);
	sigterm = evsignal_new(ag.base, SIGTERM, agent_signal_cb, &ag);
	evsignal_add(sigint, NULL);
	evsignal_add(sigterm, NULL);
	if (heureka_client_start(ag.client, ag.base) != 0) {
		/* Freed below, with the rest: one exit path. */
		fprintf(stderr, "heureka agent: cannot start the client: %s\n",
		    strerror(errno));
		rc = CLI_EXIT_UNREACHABLE;
	} else {
		log_info("agent: %s registering %s with %s",
		    heureka_client_instance_id(ag.client),
		    ag.huri != NULL ? "STARTING (UP once the health URL "
		    "answers 2xx)" : "UP", aa.o.service_url != NULL ?
		    aa.o.service_url : cli_servers(NULL));
		if (ag.huri != NULL) {
			ag.probe_ev = evtimer_new(ag.base, probe_cb, &ag);
			probe_start(&ag);
		}
		event_base_dispatch(ag.base);
	}
	/* The only free after the start; a completed stop cleared ag.client. */
	if (ag.client != NULL && !ag.stopping)
		heureka_client_free(ag.client);
	ag.client = NULL;
	if (ag.hreq != NULL)
		evhttp_cancel_request(ag.hreq);
	if (ag.hconn != NULL)
		evhttp_connection_free(ag.hconn);
	if (ag.probe_ev != NULL)
		event_free(ag.probe_ev);
	event_free(sigint);
	event_free(sigterm);
	if (ag.dns != NULL)
		evdns_base_free(ag.dns, 0);
	event_base_free(ag.base);
out:
	if (ag.huri != NULL)
		evhttp_uri_free(ag.huri);
	for (i = 0; i < aa.n; i++)
		free(aa.settings[i]);
	free(aa.servers);
	return (rc);
}
