/*
 * agent.c: `heureka agent`, a sidecar that keeps a non-C service
 * registered. It runs a libheureka client for the service's name and port,
 * probes the service's health URL every --health-interval seconds and
 * flips the instance UP or DOWN through the library's dirty path (so the
 * change reaches the server by the rate-limited on-demand update, or at the
 * latest by the next heartbeat's lastDirtyTimestamp), and cancels the
 * registration on SIGTERM/SIGINT before exiting 0.
 */
#include <getopt.h>
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
	int				 stopping;
};

static const char agent_usage[] =
"usage: heureka agent --app NAME --port PORT [options]\n"
"Register a service with Eureka, heartbeat for it, and cancel the\n"
"registration on SIGTERM/SIGINT.\n"
"  --app NAME             application name (eureka.instance.appname)\n"
"  --port PORT            the service's port\n"
"  --health-url URL       probe this URL: 2xx means UP, anything else DOWN\n"
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
"  -c FILE                .yml or .properties with eureka.* keys\n"
"  -D KEY=VALUE           any eureka.client.* / eureka.instance.* setting\n"
"  -v                     log debug lines\n"
"Environment variables (EUREKA_INSTANCE_APPNAME, ...) are read too.\n";

static void	probe_start(struct agent *);

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
	if (ok != ag->last_ok) {
		log_info("agent: health %s answered %d: %s", ag->health_url,
		    code, ok ? "UP" : "DOWN");
		heureka_client_set_status(ag->client, ok ? "UP" : "DOWN");
		ag->last_ok = ok;
	}
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
	heureka_client_stop(ag->client, agent_stopped_cb, ag);
}

/* Add "key=value" to the settings list. */
static void
add_setting(char **settings, int *n, const char *key, const char *value)
{
	if (*n >= AGENT_MAX_SETTINGS - 1)
		fatalx("agent: too many settings");
	if (key == NULL)
		settings[(*n)++] = xstrdup(value);
	else
		xasprintf(&settings[(*n)++], "%s=%s", key, value);
	settings[*n] = NULL;
}

/* heureka agent: keep a non-C service registered until SIGTERM/SIGINT. */
int
agent_main(int argc, char **argv)
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
		CLI_TLS_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	struct agent		 ag;
	struct heureka_options	 o;
	struct cli_tls		 tls;
	struct event		*sigint, *sigterm;
	char			*settings[AGENT_MAX_SETTINGS] = { NULL };
	char			*servers = NULL, *cause = NULL, *eq, *k;
	int			 ch, n = 0, i, rc = 0, verbose = 0, port = 0;
	const char		*scheme;

	memset(&ag, 0, sizeof ag);
	memset(&o, 0, sizeof o);
	memset(&tls, 0, sizeof tls);
	ag.health_interval = 10;
	ag.last_ok = -1;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "a:p:c:D:vh", longopts, NULL))
	    != -1) {
		if (cli_tls_opt(&tls, ch, optarg))
			continue;
		switch (ch) {
		case 'a':
			o.app_name = optarg;
			break;
		case 'p':
			port = atoi(optarg);
			if (port <= 0 || port > 65535) {
				fprintf(stderr, "heureka: bad --port\n");
				return (CLI_EXIT_USAGE);
			}
			o.port = port;
			break;
		case 'H':
			ag.health_url = optarg;
			break;
		case 'I':
			ag.health_interval = atoi(optarg);
			if (ag.health_interval < 1 ||
			    ag.health_interval > 3600) {
				fprintf(stderr, "heureka: bad "
				    "--health-interval\n");
				return (CLI_EXIT_USAGE);
			}
			break;
		case 'm':
			if ((eq = strchr(optarg, '=')) == NULL ||
			    eq == optarg) {
				fprintf(stderr, "heureka: --metadata wants "
				    "KEY=VALUE\n");
				return (CLI_EXIT_USAGE);
			}
			k = xstrndup(optarg, (size_t)(eq - optarg));
			xasprintf(&settings[n], "eureka.instance.metadata-map."
			    "%s=%s", k, eq + 1);
			free(k);
			if (++n >= AGENT_MAX_SETTINGS - 1)
				fatalx("agent: too many settings");
			break;
		case 's':
			cli_add_server(&servers, optarg);
			break;
		case 'n':
			o.host_name = optarg;
			break;
		case 'i':
			o.ip_addr = optarg;
			break;
		case 'x':
			o.instance_id = optarg;
			break;
		case 'r':
			add_setting(settings, &n, "eureka.instance.lease-"
			    "renewal-interval-in-seconds", optarg);
			break;
		case 'l':
			add_setting(settings, &n, "eureka.instance.lease-"
			    "expiration-duration-in-seconds", optarg);
			break;
		case 'c':
			o.config_file = optarg;
			break;
		case 'D':
			add_setting(settings, &n, NULL, optarg);
			break;
		case 'v':
			verbose = 1;
			break;
		case 'h':
			fputs(agent_usage, stdout);
			fputs(CLI_TLS_HELP, stdout);
			return (0);
		default:
			fputs(agent_usage, stderr);
			return (CLI_EXIT_USAGE);
		}
	}
	if (optind != argc) {
		fputs(agent_usage, stderr);
		return (CLI_EXIT_USAGE);
	}
	log_init("heureka", verbose ? LOG_LEVEL_DEBUG : LOG_LEVEL_INFO,
	    LOG_FORMAT_TEXT);
	heureka_set_log_level(verbose ? 3 : 2);

	o.use_env = 1;
	o.no_fetch = 1;		/* a sidecar registers; it does not look up */
	o.settings = (const char *const *)settings;
	cli_tls_apply(&tls, &o);
	if (servers != NULL || getenv("EUREKA_CLIENT_SERVICEURL_DEFAULTZONE")
	    == NULL)
		o.service_url = cli_servers(servers);
	if ((ag.client = heureka_client_new(&o, &cause)) == NULL) {
		fprintf(stderr, "heureka: %s\n", cause);
		free(cause);
		rc = CLI_EXIT_USAGE;
		goto out;
	}
	if (ag.health_url != NULL) {
		ag.huri = evhttp_uri_parse(ag.health_url);
		scheme = ag.huri != NULL ? evhttp_uri_get_scheme(ag.huri) :
		    NULL;
		if (scheme == NULL || strcasecmp(scheme, "http") != 0 ||
		    evhttp_uri_get_host(ag.huri) == NULL) {
			fprintf(stderr, "heureka: bad --health-url %s (http "
			    "only)\n", ag.health_url);
			heureka_client_free(ag.client);
			rc = CLI_EXIT_USAGE;
			goto out;
		}
	}
	ag.base = event_base_new();
	ag.dns = evdns_base_new(ag.base, EVDNS_BASE_INITIALIZE_NAMESERVERS);
	sigint = evsignal_new(ag.base, SIGINT, agent_signal_cb, &ag);
	sigterm = evsignal_new(ag.base, SIGTERM, agent_signal_cb, &ag);
	evsignal_add(sigint, NULL);
	evsignal_add(sigterm, NULL);
	if (heureka_client_start(ag.client, ag.base) != 0) {
		/* Freed below, with the rest: one exit path. */
		fprintf(stderr, "heureka: cannot start the client\n");
		rc = CLI_EXIT_UNREACHABLE;
	} else {
		log_info("agent: %s registering with %s",
		    heureka_client_instance_id(ag.client),
		    o.service_url != NULL ? o.service_url :
		    cli_servers(NULL));
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
	for (i = 0; i < n; i++)
		free(settings[i]);
	free(servers);
	return (rc);
}
