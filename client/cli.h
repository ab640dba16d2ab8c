/*
 * cli.h: shared pieces of the heureka command-line tool: the subcommands
 * (cli.c dispatches, agent.c is the sidecar, cliopt.c holds the options
 * they share) and the server URL rule
 * (--server, else EUREKA_CLIENT_SERVICEURL_DEFAULTZONE, else localhost).
 */
#ifndef CLI_H
#define CLI_H

#include <stdint.h>

#define CLI_EXIT_FOUND		0
#define CLI_EXIT_NOT_FOUND	1
#define CLI_EXIT_UNREACHABLE	2
#define CLI_EXIT_USAGE		64

#include "defaults.h"

#define CLI_DEFAULT_SERVER	DEFAULT_SERVICE_URL

/* Append a --server argument (comma lists allowed) to *list. */
void		 cli_add_server(char **list, const char *url);
/* The URLs to use: *list, else the environment, else the default. */
const char	*cli_servers(const char *list);

/* --cacert, --cert, --key, --insecure: every command takes them. */
enum {
	CLI_OPT_CACERT = 1000,
	CLI_OPT_CERT,
	CLI_OPT_KEY,
	CLI_OPT_INSECURE,
};
#define CLI_TLS_LONGOPTS						\
	{ "cacert", required_argument, NULL, CLI_OPT_CACERT },		\
	{ "cert", required_argument, NULL, CLI_OPT_CERT },		\
	{ "key", required_argument, NULL, CLI_OPT_KEY },		\
	{ "insecure", no_argument, NULL, CLI_OPT_INSECURE }
#define CLI_TLS_HELP \
"  --cacert FILE          PEM CA bundle for https:// servers (default: the\n" \
"                         system's CAs); certificates must match the host\n" \
"  --cert FILE, --key FILE  PEM client certificate and key (mutual TLS)\n" \
"  --insecure             do not verify https:// servers (warns; tests only)\n"

struct heureka_options;
struct cli_tls {
	const char	*cacert;
	const char	*cert;
	const char	*key;
	int		 insecure;
};
/* Take one of the TLS options: 1 if ch was one, 0 if not. */
int		 cli_tls_opt(struct cli_tls *, int ch, const char *arg);
/* Copy the TLS options into client options. */
void		 cli_tls_apply(const struct cli_tls *,
		    struct heureka_options *);

int		 agent_main(int argc, char **argv);

/* clidrain.c: heureka drain, and the agent's drain on SIGTERM. */
struct cli_drain {
	const char	*servers;	/* NULL: the environment's, default */
	struct cli_tls	 tls;
	const char	*app;
	const char	*id;
	int64_t		 timeout_ms;
	int		 cancel;	/* cancel at the end (the agent's
					   client cancels itself) */
	int		 quiet;
};
int		 cli_drain_run(const struct cli_drain *);
int		 cmd_drain(int argc, char **argv);
/* "60s", "500ms", "2m" or seconds, in ms; -1 if not a duration. */
int64_t		 cli_duration_ms(const char *);

#endif
