/*
 * tests/unit/check_agent.c: `heureka agent`'s exit paths (client/agent.c)
 * with the real libheureka client, linked with --wrap so that the test
 * decides whether heureka_client_start() succeeds and counts every
 * heureka_client_free() per client: each client the agent made must be
 * freed exactly once, whichever way agent_main() leaves. A second free is
 * counted, not passed on, so the failure is a clear assertion rather than
 * heap corruption (the ASan build would report it as a double free).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "cli.h"
#include "heureka.h"
#include "testutil.h"

#define AGENT_MAX_CLIENTS	4

int	__real_heureka_client_start(struct heureka_client *,
	    struct event_base *);
void	__real_heureka_client_free(struct heureka_client *);
int	__wrap_heureka_client_start(struct heureka_client *,
	    struct event_base *);
void	__wrap_heureka_client_free(struct heureka_client *);

static int			 start_fails;
static int			 nstarts;
static struct heureka_client	*seen[AGENT_MAX_CLIENTS];
static int			 frees[AGENT_MAX_CLIENTS];
static int			 nseen;

/* heureka_client_start, failing when the test says so. */
int
__wrap_heureka_client_start(struct heureka_client *c, struct event_base *b)
{
	nstarts++;
	if (start_fails)
		return (-1);
	return (__real_heureka_client_start(c, b));
}

/* heureka_client_free, counted per client; only the first free is real. */
void
__wrap_heureka_client_free(struct heureka_client *c)
{
	int	i;

	if (c == NULL)
		return;
	for (i = 0; i < nseen; i++) {
		if (seen[i] == c)
			break;
	}
	if (i == nseen) {
		ck_assert_int_lt(nseen, AGENT_MAX_CLIENTS);
		seen[nseen++] = c;
	}
	if (frees[i]++ == 0)
		__real_heureka_client_free(c);
}

/* Run agent_main on a NULL-terminated argument list. */
static int
run_agent(const char *const *args)
{
	char	*argv[32];
	int	 argc;

	for (argc = 0; args[argc] != NULL; argc++) {
		ck_assert_int_lt(argc, 31);
		argv[argc] = (char *)args[argc];
	}
	argv[argc] = NULL;
	return (agent_main(argc, argv));
}

/* Every client seen was freed exactly once. */
static void
assert_freed_once(void)
{
	int	i;

	ck_assert_int_eq(nseen, 1);
	for (i = 0; i < nseen; i++)
		ck_assert_msg(frees[i] == 1, "client %d freed %d times", i,
		    frees[i]);
}

/* Fresh counters, and no server list from the environment. */
static void
setup(void)
{
	unsetenv("EUREKA_CLIENT_SERVICEURL_DEFAULTZONE");
	start_fails = 0;
	nstarts = 0;
	nseen = 0;
	memset(seen, 0, sizeof seen);
	memset(frees, 0, sizeof frees);
}

/* The client cannot start: exit 2, the client freed once. */
START_TEST(test_start_failure_frees_once)
{
	static const char *const args[] = {
		"agent", "--app", "sidecar", "--port", "8080", "--server",
		"http://127.0.0.1:9/eureka/", "--hostname", "h.example",
		"--ip", "10.0.0.9", NULL
	};

	start_fails = 1;
	ck_assert_int_eq(run_agent(args), CLI_EXIT_UNREACHABLE);
	ck_assert_int_eq(nstarts, 1);
	assert_freed_once();
}
END_TEST

/* A bad --health-url is refused before the start: exit 64, freed once. */
START_TEST(test_bad_health_url_frees_once)
{
	static const char *const args[] = {
		"agent", "--app", "sidecar", "--port", "8080", "--server",
		"http://127.0.0.1:9/eureka/", "--hostname", "h.example",
		"--ip", "10.0.0.9", "--health-url", "ftp://h/x", NULL
	};

	ck_assert_int_eq(run_agent(args), CLI_EXIT_USAGE);
	ck_assert_int_eq(nstarts, 0);
	assert_freed_once();
}
END_TEST

static Suite *
agent_suite(void)
{
	Suite	*s = suite_create("agent");
	TCase	*tc = tcase_create("exit");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_start_failure_frees_once);
	tcase_add_test(tc, test_bad_health_url_frees_once);
	suite_add_tcase(s, tc);
	return (s);
}

/* Run the suite. */
int
main(void)
{
	return (check_run(agent_suite()));
}
