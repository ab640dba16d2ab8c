/*
 * cli.h: shared pieces of the heureka command-line tool: the subcommands
 * (cli.c dispatches, agent.c is the sidecar) and the server URL rule
 * (--server, else EUREKA_CLIENT_SERVICEURL_DEFAULTZONE, else localhost).
 */
#ifndef CLI_H
#define CLI_H

#define CLI_EXIT_FOUND		0
#define CLI_EXIT_NOT_FOUND	1
#define CLI_EXIT_UNREACHABLE	2
#define CLI_EXIT_USAGE		64

#define CLI_DEFAULT_SERVER	"http://localhost:8761/eureka/"

/* Append a --server argument (comma lists allowed) to *list. */
void		 cli_add_server(char **list, const char *url);
/* The URLs to use: *list, else the environment, else the default. */
const char	*cli_servers(const char *list);

int		 agent_main(int argc, char **argv);

#endif
