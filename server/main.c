/*
 * main.c: heurekad's entry point. Reads the configuration (defaults, then
 * the file, then the environment, then the command line: strongest last),
 * validates it before anything starts (exit 78 on any error; 64 for a
 * malformed command line), binds,
 * starts the timers and the start-up sync, and runs the event loop until
 * SIGTERM or SIGINT. SIGHUP re-reads the file for what can change safely
 * (log level, peers, credentials, TLS certificates).
 */
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include <event2/event.h>

#include "heureka-config.h"

#include "access.h"
#include "accesslog.h"
#include "clock.h"
#include "config.h"
#include "hash.h"
#include "gate.h"
#include "log.h"
#include "peers.h"
#include "reload.h"
#include "server.h"
#include "xmalloc.h"

extern char **environ;

/* A -D or --key=value setting, kept to apply after the file. */
struct setting {
	char	*key;
	char	*value;
};

struct options {
	const char	*file;
	struct setting	*set;
	size_t		 nset;
	int		 check_only;
};

static struct server	*main_server;
static volatile int	 main_exit_status;
static struct options	 main_opts;

/* Usage text. */
static void
usage(FILE *f)
{
	fprintf(f,
"usage: heurekad [-c FILE] [-p PORT] [-b ADDR] [-D key=value ...]\n"
"                [--port-file FILE] [--peers URL,URL,...] [--my-url URL]\n"
"                [--log-format text|json] [--log-level LEVEL]\n"
"                [--KEY=VALUE ...] [--check-config] [--help] [--version]\n"
"\n"
"A Eureka-compatible service registry. Configuration comes from built-in\n"
"defaults, then FILE (.yml or .properties), then environment variables\n"
"(EUREKA_SERVER_..., SERVER_PORT), then the command line.\n"
"\n"
"  -c FILE            configuration file (.yml, .yaml or .properties)\n"
"  -p PORT            listen port (server.port, default 8761; 0 = any)\n"
"  -b ADDR            listen address (server.address, default 0.0.0.0)\n"
"  -D key=value       set any configuration key (Spring or Netflix name)\n"
"  --port-file FILE   write the bound port to FILE once listening\n"
"  --peers URLS       peer service URLs (eureka.client.service-url.defaultZone)\n"
"  --my-url URL       this node's own URL in that list (eureka.server.my-url)\n"
"  --log-format F     text (default) or json\n"
"  --log-level L      error, warn, info (default) or debug\n"
"  --check-config     validate the configuration, print it and exit\n"
"  --version          print the version and exit\n");
}

/* Remember a key=value for later. */
static void
opt_add(struct options *o, const char *key, const char *value)
{
	o->set = xreallocarray(o->set, o->nset + 1, sizeof *o->set);
	o->set[o->nset].key = xstrdup(key);
	o->set[o->nset].value = xstrdup(value);
	o->nset++;
}

/* Split "key=value" and remember it; -1 if there is no '='. */
static int
opt_add_kv(struct options *o, const char *kv)
{
	const char	*eq = strchr(kv, '=');
	char		*key;

	if (eq == NULL || eq == kv)
		return (-1);
	key = xstrndup(kv, (size_t)(eq - kv));
	opt_add(o, key, eq + 1);
	free(key);
	return (0);
}

/* Free remembered settings. */
static void
opt_free(struct options *o)
{
	size_t	i;

	for (i = 0; i < o->nset; i++) {
		free(o->set[i].key);
		free(o->set[i].value);
	}
	free(o->set);
	o->set = NULL;
	o->nset = 0;
}

/*
 * Parse argv into o; exits on --help and --version (0) and on usage
 * errors (EX_USAGE, 64: an unknown option, a missing value). A key or
 * value the configuration refuses is EX_CONFIG (78), later.
 */
static void
parse_args(int argc, char **argv, struct options *o)
{
	int	i;

	for (i = 1; i < argc; i++) {
		const char	*a = argv[i];
		const char	*next = i + 1 < argc ? argv[i + 1] : NULL;

#define NEED_ARG() do {							\
	if (next == NULL) {						\
		fprintf(stderr, "heurekad: %s needs a value\n", a);	\
		exit(EX_USAGE);						\
	}								\
	i++;								\
} while (0)
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout);
			exit(0);
		} else if (strcmp(a, "-V") == 0 || strcmp(a, "--version") == 0) {
			printf("heurekad %s (revision %s)\n", PACKAGE_VERSION,
			    HK_REVISION);
			exit(0);
		} else if (strcmp(a, "-c") == 0) {
			NEED_ARG();
			o->file = next;
		} else if (strcmp(a, "-p") == 0) {
			NEED_ARG();
			opt_add(o, "server.port", next);
		} else if (strcmp(a, "-b") == 0) {
			NEED_ARG();
			opt_add(o, "server.address", next);
		} else if (strcmp(a, "-D") == 0) {
			NEED_ARG();
			if (opt_add_kv(o, next) != 0) {
				fprintf(stderr, "heurekad: -D %s: expected "
				    "key=value\n", next);
				exit(EX_USAGE);
			}
		} else if (strncmp(a, "-D", 2) == 0 && a[2] != '\0') {
			if (opt_add_kv(o, a + 2) != 0) {
				fprintf(stderr, "heurekad: %s: expected "
				    "-Dkey=value\n", a);
				exit(EX_USAGE);
			}
		} else if (strcmp(a, "--port-file") == 0) {
			NEED_ARG();
			opt_add(o, "heureka.port-file", next);
		} else if (strcmp(a, "--peers") == 0) {
			NEED_ARG();
			opt_add(o, "eureka.client.service-url.defaultZone", next);
		} else if (strcmp(a, "--my-url") == 0) {
			NEED_ARG();
			opt_add(o, "eureka.server.my-url", next);
		} else if (strcmp(a, "--log-format") == 0) {
			NEED_ARG();
			opt_add(o, "heureka.log.format", next);
		} else if (strcmp(a, "--log-level") == 0) {
			NEED_ARG();
			opt_add(o, "logging.level.root", next);
		} else if (strcmp(a, "--check-config") == 0) {
			o->check_only = 1;
		} else if (strncmp(a, "--", 2) == 0 && strchr(a, '=') != NULL) {
			/* --log-format=json, --eureka.server.x=1 */
			const char *kv = a + 2;

			if (strncmp(kv, "port-file=", 10) == 0)
				opt_add(o, "heureka.port-file", kv + 10);
			else if (strncmp(kv, "peers=", 6) == 0)
				opt_add(o, "eureka.client.service-url."
				    "defaultZone", kv + 6);
			else if (strncmp(kv, "my-url=", 7) == 0)
				opt_add(o, "eureka.server.my-url", kv + 7);
			else if (strncmp(kv, "log-format=", 11) == 0)
				opt_add(o, "heureka.log.format", kv + 11);
			else if (strncmp(kv, "log-level=", 10) == 0)
				opt_add(o, "logging.level.root", kv + 10);
			else
				opt_add_kv(o, kv);
		} else {
			fprintf(stderr, "heurekad: unknown argument '%s'\n", a);
			usage(stderr);
			exit(EX_USAGE);
		}
#undef NEED_ARG
	}
}

/*
 * The log format the command line asks for, applied before the file and
 * the environment are read, so that what loading them logs (an ignored
 * key, an unknown environment variable) is already in that format.
 */
static void
early_log_format(const struct options *o)
{
	enum log_format	fmt;
	size_t		i;

	for (i = o->nset; i > 0; i--) {
		if (strcmp(o->set[i - 1].key, "heureka.log.format") == 0) {
			if (log_parse_format(o->set[i - 1].value, &fmt) == 0)
				log_init("heurekad", LOG_LEVEL_INFO, fmt);
			return;
		}
	}
}

/* Build a configuration from o: defaults, file, environment, arguments. */
static int
load_config(const struct options *o, struct config *cf, char **cause)
{
	size_t	i;

	config_defaults(cf);
	/*
	 * The table's default service URL is the client's (Spring's
	 * localhost:8761). A server has no peers unless it is given some.
	 */
	free(cf->service_url_default_zone);
	cf->service_url_default_zone = NULL;
	if (o->file != NULL && config_load_file(cf, o->file, cause) != 0)
		return (-1);
	if (config_load_env(cf, environ, cause) != 0)
		return (-1);
	for (i = 0; i < o->nset; i++) {
		if (config_set(cf, o->set[i].key, o->set[i].value,
		    cause) != 0)
			return (-1);
	}
	return (config_validate(cf, cause));
}

/* Apply the logging settings of a configuration. */
static int
apply_logging(const struct config *cf, char **cause)
{
	enum log_level	lvl;
	enum log_format	fmt;

	if (log_parse_level(cf->log_level, &lvl) != 0) {
		xasprintf(cause, "unknown log level '%s'", cf->log_level);
		return (-1);
	}
	if (log_parse_format(cf->log_format, &fmt) != 0) {
		xasprintf(cause, "unknown log format '%s'", cf->log_format);
		return (-1);
	}
	log_init("heurekad", lvl, fmt);
	return (0);
}

/*
 * The loop is done and every reply has gone out; what is left only frees
 * memory. Should that ever stall, say so and end with the status the loop
 * earned rather than hang a service manager's stop.
 */
static void
cleanup_stalled(int sig)
{
	static const char msg[] = "heurekad: cleanup after the event loop "
	    "stalled for 5 s; exiting\n";

	(void)sig;
	(void)!write(STDERR_FILENO, msg, sizeof msg - 1);
	_exit(main_exit_status);
}

/*
 * The drain is over (left: requests still unfinished at the end of the
 * grace period): end the loop, which closes the port.
 */
static void
main_drained_cb(void *arg, size_t left, int64_t ms)
{
	struct event_base	*base = arg;
	struct timeval		 tv = { 0, 200000 };

	if (left > 0)
		log_warnx("shutdown: %zu connection%s still busy after %lld ms "
		    "(heureka.server.shutdown-grace-ms); closing", left,
		    left == 1 ? "" : "s", (long long)ms);
	else
		log_info("shutdown: drained in %lld ms", (long long)ms);
	/* A short grace lets queued replication go out. */
	event_base_loopexit(base, peers_count(main_server->peers) > 0 ?
	    &tv : NULL);
}

/*
 * SIGTERM/SIGINT: a draining stop (exit status 0). /health and readiness
 * answer 503 and the watch streams end at once; requests in flight finish
 * (server_drain) while the port stays open; then the loop ends. A second
 * signal ends it at once.
 */
static void
signal_stop_cb(evutil_socket_t sig, short what, void *arg)
{
	struct event_base	*base = arg;

	if (gate_is_stopping(main_server->gate)) {
		event_base_loopbreak(base);
		return;
	}
	log_info("received %s, shutting down (draining for up to %lld ms)",
	    sig == SIGINT ? "SIGINT" : "SIGTERM",
	    (long long)main_server->conf->shutdown_grace_ms);
	server_stop(main_server);
	server_drain(main_server, main_drained_cb, base);
}

/*
 * SIGHUP: re-read the configuration. Only what can change safely on a
 * running server is applied: logging (level, format, the access log,
 * reopened so a rotated file is let go), the peer list, the credentials
 * and the TLS certificate, key and trust bundle (server.ssl.*). Which
 * changed keys are applied and which need a restart is logged
 * (reload.c).
 */
static void
signal_hup_cb(evutil_socket_t sig, short what, void *arg)
{
	struct config	 cf;
	char		*cause = NULL;

	if (load_config(&main_opts, &cf, &cause) != 0) {
		log_warnx("SIGHUP: configuration not reloaded: %s", cause);
		free(cause);
		config_free(&cf);
		return;
	}
	if (apply_logging(&cf, &cause) != 0) {
		log_warnx("SIGHUP: %s", cause);
		free(cause);
		config_free(&cf);
		return;
	}
	reload_report(main_server->conf, &cf);
	(void)accesslog_open(cf.access_log);
	/*
	 * Swap the peer list and the peers' TLS files in the live
	 * configuration, then re-resolve and reconnect.
	 */
#define SWAP(f) do {							\
	char *tmp = main_server->conf->f;				\
									\
	main_server->conf->f = cf.f;					\
	cf.f = tmp;							\
} while (0)
	SWAP(service_url_default_zone);
	SWAP(peer_ssl_certificate);
	SWAP(peer_ssl_key);
	SWAP(peer_ssl_trust);
#undef SWAP
	if (peers_reload(main_server->peers, &cause) != 0) {
		log_warnx("SIGHUP: peers not reloaded: %s", cause);
		free(cause);
	}
	/* Credentials (a rotated password file) count from the next request. */
	access_reload(main_server->access, &cf);
	/* New connections get the new certificate; open ones keep theirs. */
	if (cf.ssl_enabled != main_server->conf->ssl_enabled)
		log_warnx("SIGHUP: server.ssl.enabled changes on restart only");
	else if (cf.ssl_enabled) {
		if (server_tls_reload(main_server, &cf, &cause) != 0) {
			log_warnx("SIGHUP: TLS certificate not reloaded: %s",
			    cause);
			free(cause);
			cause = NULL;
		} else
			log_info("TLS certificate reloaded from %s",
			    cf.ssl_certificate);
	}
	log_info("configuration reloaded (authentication %s)",
	    access_enabled(main_server->access) ? "on" : "off");
	config_free(&cf);
}

/* Parse the configuration, bind, run the loop until a stop signal. */
/*
 * Big blocks (the encodings' 4 MiB runs, bodies, table arrays) from their
 * own mappings: glibc's default threshold grows with the blocks freed,
 * so they end up in the heap, and freeing a gigabyte of them at once (a
 * plain encoding dropped when idle, cache_reap) made the heap's top trim
 * one 150 ms loop turn at a million instances; unmapped one by one,
 * 64 MiB a turn, it is 20 ms. MALLOC_MMAP_THRESHOLD_ set by the operator
 * wins.
 */
static void
malloc_setup(void)
{
#ifdef M_MMAP_THRESHOLD
	if (getenv("MALLOC_MMAP_THRESHOLD_") == NULL)
		(void)mallopt(M_MMAP_THRESHOLD, 1024 * 1024);
#endif
}

int
main(int argc, char **argv)
{
	struct config		 cf;
	struct event_base	*base;
	struct event		*ev_term, *ev_int, *ev_hup;
	char			*cause = NULL;
	int			 rc = 0;

	malloc_setup();
	log_init("heurekad", LOG_LEVEL_INFO, LOG_FORMAT_TEXT);
	parse_args(argc, argv, &main_opts);
	early_log_format(&main_opts);
	if (load_config(&main_opts, &cf, &cause) != 0 ||
	    apply_logging(&cf, &cause) != 0) {
		fprintf(stderr, "heurekad: configuration error: %s\n", cause);
		free(cause);
		config_free(&cf);
		opt_free(&main_opts);
		return (CONFIG_EX_CONFIG);
	}
	if (main_opts.check_only) {
		if (server_tls_check(&cf, &cause) != 0) {
			fprintf(stderr, "heurekad: configuration error: %s\n",
			    cause);
			free(cause);
			config_free(&cf);
			opt_free(&main_opts);
			return (CONFIG_EX_CONFIG);
		}
		config_dump(&cf, stdout);
		config_free(&cf);
		opt_free(&main_opts);
		return (0);
	}
	signal(SIGPIPE, SIG_IGN);
	/* Eviction picks leases with random(); peers jitter their back-off. */
	srandom((unsigned)(getpid() ^ clock_wall_ms()));
	/* The key of every name-keyed table: drawn once, before any table. */
	hash_init();
	log_take_libevent();
	if ((base = event_base_new()) == NULL)
		fatalx("event_base_new failed");
	main_server = server_new(base, &cf);
	/*
	 * Every handler before the port opens: a SIGHUP sent the moment it
	 * accepts (a reload racing a restart) would otherwise find the
	 * default action and kill the process.
	 */
	ev_term = evsignal_new(base, SIGTERM, signal_stop_cb, base);
	ev_int = evsignal_new(base, SIGINT, signal_stop_cb, base);
	ev_hup = evsignal_new(base, SIGHUP, signal_hup_cb, base);
	event_add(ev_term, NULL);
	event_add(ev_int, NULL);
	event_add(ev_hup, NULL);
	if (server_listen(main_server, &cause) != 0) {
		log_error("%s", cause);
		free(cause);
		event_free(ev_term);
		event_free(ev_int);
		event_free(ev_hup);
		server_free(main_server);
		event_base_free(base);
		config_free(&cf);
		opt_free(&main_opts);
		return (errno == EADDRINUSE || errno == EACCES ? 1 :
		    CONFIG_EX_CONFIG);
	}
	server_start(main_server);
	if (server_run(main_server) < 0) {
		log_error("event loop failed");
		rc = 1;
	}
	log_info("heurekad stopped");
	main_exit_status = rc;
	signal(SIGALRM, cleanup_stalled);
	alarm(5);
	event_free(ev_term);
	event_free(ev_int);
	event_free(ev_hup);
	server_free(main_server);
	event_base_free(base);
	config_free(&cf);
	opt_free(&main_opts);
	reload_free();
	(void)accesslog_open(NULL);
	libevent_global_shutdown();
	return (rc);
}
