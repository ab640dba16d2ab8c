/*
 * tests/unit/check_dnssrv.c: how the DNS front binds its two sockets.
 * With heureka.dns.port 0 it binds UDP on a port the kernel picks and
 * then TCP on the same number, which another process may hold: 94-dns.sh
 * failed at start-up now and then with "Address already in use". The
 * kernel's choice cannot be steered, so the test takes the port itself,
 * for real, between the two binds (dnssrv_deps' udp_bound): a listening
 * TCP socket on 127.0.0.1 and that port, as another process would hold
 * it. A configured port is never swapped for another.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <event2/event.h>

#include "config.h"
#include "dnssrv.h"
#include "testutil.h"

#define HOLD_MAX	16

/* The TCP ports the hook took, and how many more it is to take. */
struct hold {
	int	fds[HOLD_MAX];
	int	ports[HOLD_MAX];
	int	n;		/* calls so far */
	int	take;		/* take the port on the first take calls */
};

static struct config	 conf;
static struct event_base *base;
static struct hold	 hold;

/*
 * Listen on TCP 127.0.0.1:port, as another process; the fd, or -1 when
 * another process already holds it (the port is taken either way, which
 * is what the hook is for: a parallel test's connection or listener may
 * have it).
 */
static int
hold_port(int port)
{
	struct sockaddr_in	sin;
	int			fd, one = 1;

	fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(fd, 0);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sin, sizeof sin) != 0) {
		ck_assert_int_eq(errno, EADDRINUSE);
		close(fd);
		return (-1);
	}
	ck_assert_int_eq(listen(fd, 1), 0);
	return (fd);
}

/* dnssrv_deps' udp_bound: take the TCP port the first hold.take times. */
static void
hold_udp_bound(int port, void *arg)
{
	struct hold	*h = arg;

	ck_assert_int_lt(h->n, HOLD_MAX);
	h->ports[h->n] = port;
	h->fds[h->n] = h->n < h->take ? hold_port(port) : -1;
	h->n++;
}

/* A DNS front on 127.0.0.1 with the hook. */
static struct dnssrv *
front_new(void)
{
	return (dnssrv_new(&(struct dnssrv_deps){ .base = base,
	    .conf = &conf, .udp_bound = hold_udp_bound,
	    .udp_bound_arg = &hold }));
}

/* Fresh config (127.0.0.1, port 0), loop and hold for each test. */
static void
setup(void)
{
	config_defaults(&conf);
	conf.dns_port = 0;
	conf.dns_bind = strdup("127.0.0.1");
	base = event_base_new();
	memset(&hold, 0, sizeof hold);
}

/* Close what the hook held. */
static void
teardown(void)
{
	int	i;

	for (i = 0; i < hold.n; i++)
		if (hold.fds[i] >= 0)
			close(hold.fds[i]);
	event_base_free(base);
	config_free(&conf);
}

/* Port 0, the TCP number taken twice: the third UDP port serves both. */
START_TEST(test_port0_taken_retries)
{
	struct dnssrv	*srv = front_new();
	char		*cause = NULL;
	int		 rc;

	hold.take = 2;
	rc = dnssrv_start(srv, &cause);
	ck_assert_msg(rc == 0, "dnssrv_start: %s", cause ? cause : "?");
	ck_assert_ptr_null(cause);
	ck_assert_int_eq(hold.n, 3);
	ck_assert_int_eq(dnssrv_port(srv), hold.ports[2]);
	ck_assert_int_ne(dnssrv_port(srv), hold.ports[0]);
	ck_assert_int_ne(dnssrv_port(srv), hold.ports[1]);
	dnssrv_free(srv);
}
END_TEST

/* Port 0, taken every time: a bounded number of tries, then the cause. */
START_TEST(test_port0_taken_gives_up)
{
	struct dnssrv	*srv = front_new();
	char		*cause = NULL;

	hold.take = HOLD_MAX;
	ck_assert_int_eq(dnssrv_start(srv, &cause), -1);
	ck_assert_ptr_nonnull(cause);
	ck_assert_ptr_nonnull(strstr(cause, "(tcp)"));
	ck_assert_ptr_nonnull(strstr(cause, strerror(EADDRINUSE)));
	ck_assert_int_gt(hold.n, 1);
	ck_assert_int_lt(hold.n, HOLD_MAX);
	free(cause);
	dnssrv_free(srv);
}
END_TEST

/* A configured port taken for TCP: refused at once, no other port. */
START_TEST(test_fixed_port_taken_fails)
{
	struct dnssrv	*srv;
	char		*cause = NULL;
	int		 fd, port;

	/* A free UDP port number, then the test's own TCP on it. */
	fd = hold_port(0);
	{
		struct sockaddr_in	sin;
		socklen_t		len = sizeof sin;

		ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sin,
		    &len), 0);
		port = ntohs(sin.sin_port);
	}
	conf.dns_port = port;
	srv = front_new();
	ck_assert_int_eq(dnssrv_start(srv, &cause), -1);
	ck_assert_ptr_nonnull(cause);
	ck_assert_int_eq(hold.n, 1);
	ck_assert_int_eq(hold.ports[0], port);
	free(cause);
	dnssrv_free(srv);
	close(fd);
}
END_TEST

/* The suite. */
static Suite *
dnssrv_suite(void)
{
	Suite	*s = suite_create("dnssrv");
	TCase	*tc = tcase_create("bind");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_port0_taken_retries);
	tcase_add_test(tc, test_port0_taken_gives_up);
	tcase_add_test(tc, test_fixed_port_taken_fails);
	suite_add_tcase(s, tc);
	return (s);
}

/* Run the suite. */
int
main(void)
{
	return (check_run(dnssrv_suite()));
}
