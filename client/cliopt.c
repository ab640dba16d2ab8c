/*
 * cliopt.c: the option handling every heureka subcommand shares (cli.c's
 * queries and agent.c's sidecar): the --server list and its fallbacks,
 * and the TLS options handed on to libheureka. Apart from cli.c so that
 * a test can link agent.c without the tool's main().
 */
#include <stdlib.h>

#include "xmalloc.h"

#include "cli.h"
#include "heureka.h"

/* Append a --server value to a comma list. */
void
cli_add_server(char **list, const char *url)
{
	char	*n;

	if (*list == NULL)
		*list = xstrdup(url);
	else {
		xasprintf(&n, "%s,%s", *list, url);
		free(*list);
		*list = n;
	}
}

/* --server, else EUREKA_CLIENT_SERVICEURL_DEFAULTZONE, else localhost. */
const char *
cli_servers(const char *list)
{
	const char	*e;

	if (list != NULL)
		return (list);
	if ((e = getenv("EUREKA_CLIENT_SERVICEURL_DEFAULTZONE")) != NULL &&
	    *e != '\0')
		return (e);
	return (CLI_DEFAULT_SERVER);
}

/* Take --cacert, --cert, --key or --insecure. */
int
cli_tls_opt(struct cli_tls *t, int ch, const char *arg)
{
	switch (ch) {
	case CLI_OPT_CACERT:
		t->cacert = arg;
		return (1);
	case CLI_OPT_CERT:
		t->cert = arg;
		return (1);
	case CLI_OPT_KEY:
		t->key = arg;
		return (1);
	case CLI_OPT_INSECURE:
		t->insecure = 1;
		return (1);
	}
	return (0);
}

/* Hand the TLS options to libheureka. */
void
cli_tls_apply(const struct cli_tls *t, struct heureka_options *o)
{
	o->cacert = t->cacert;
	o->client_cert = t->cert;
	o->client_key = t->key;
	o->insecure = t->insecure;
}
