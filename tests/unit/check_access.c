/*
 * tests/unit/check_access.c: the access rules without a network. The role
 * of a request is its route's (rest.c's router, every spelling of a path
 * alike); Basic credentials decode
 * strictly; the verdict matrix (anonymous, wrong, user, peer by password,
 * peer by certificate) for every kind, with and without read-anonymous
 * and with authentication off, where every caller is trusted as before.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <event2/http.h>

#include "access.h"
#include "config.h"
#include "http.h"
#include "rest.h"
#include "testutil.h"

/* A request carrying an Authorization header (NULL: none). */
static struct hreq *
mkreq(const char *auth)
{
	char		 head[512];
	struct hreq	*r;
	int		 n;

	n = snprintf(head, sizeof head, "GET / HTTP/1.1\r\n%s%s%s\r\n",
	    auth != NULL ? "Authorization: " : "", auth != NULL ? auth : "",
	    auth != NULL ? "\r\n" : "");
	ck_assert_ptr_nonnull(r = hreq_new_head(head, (size_t)n));
	return (r);
}

/* The verdict for one header and kind; *peer as access_check sets it. */
static enum access_verdict
judge(struct access *a, const char *auth, enum access_kind k, int *peer)
{
	struct hreq		*r = mkreq(auth);
	enum access_verdict	 v;
	int64_t			 retry;

	v = access_check(a, r, k, 1000, peer, &retry);
	hreq_free(r);
	return (v);
}

/* Rules for user alice:apw and peer hk:ppw, read-anonymous as given. */
static struct access *
mkaccess(int read_anonymous, int peer_own)
{
	struct config	 cf;
	struct access	*a;
	char		*cause = NULL;

	config_defaults(&cf);
	ck_assert_int_eq(config_set(&cf, "spring.security.user.name", "alice",
	    &cause), 0);
	ck_assert_int_eq(config_set(&cf, "spring.security.user.password",
	    "apw", &cause), 0);
	if (peer_own) {
		ck_assert_int_eq(config_set(&cf, "heureka.security.peer.name",
		    "hk", &cause), 0);
		ck_assert_int_eq(config_set(&cf,
		    "heureka.security.peer.password", "ppw", &cause), 0);
	}
	cf.security_read_anonymous = read_anonymous;
	a = access_new(&cf);
	config_free(&cf);
	return (a);
}

/* "Basic base64(alice:apw)" and friends. */
#define ALICE	"Basic YWxpY2U6YXB3"		/* alice:apw */
#define PEER	"Basic aGs6cHB3"		/* hk:ppw */
#define WRONG	"Basic YWxpY2U6eA=="		/* alice:x */
#define ALICEP	"Basic YWxpY2U6cHB3"		/* alice:ppw */

/* The role rest.c's router gives method on path. */
static enum access_kind
role_of(int method, const char *path)
{
	struct rest_target	t;

	rest_route_resolve(path, method, &t);
	return (t.role);
}

START_TEST(test_classify)
{
	ck_assert_int_eq(role_of(EVHTTP_REQ_GET, "/eureka/apps"), ACCESS_READ);
	ck_assert_int_eq(role_of(EVHTTP_REQ_HEAD, "/eureka/apps/X"),
	    ACCESS_READ);
	ck_assert_int_eq(role_of(EVHTTP_REQ_POST, "/eureka/apps/X"),
	    ACCESS_WRITE);
	ck_assert_int_eq(role_of(EVHTTP_REQ_PUT, "/eureka/v2/apps/X/i"),
	    ACCESS_WRITE);
	ck_assert_int_eq(role_of(EVHTTP_REQ_DELETE, "/v2/apps/X/i"),
	    ACCESS_WRITE);
	ck_assert_int_eq(role_of(EVHTTP_REQ_POST,
	    "/eureka/v2/peerreplication/batch"), ACCESS_PEER);
	ck_assert_int_eq(role_of(EVHTTP_REQ_POST,
	    "/eureka/v2/peerreplication/batch/"), ACCESS_PEER);
	/* Issue 21: every spelling the router routes is the peer's. */
	ck_assert_int_eq(role_of(EVHTTP_REQ_POST,
	    "/eureka/v2/%70eerreplication/batch"), ACCESS_PEER);
	ck_assert_int_eq(role_of(EVHTTP_REQ_POST,
	    "/eureka/v2//peerreplication//%62atch"), ACCESS_PEER);
	ck_assert_int_eq(role_of(EVHTTP_REQ_POST, "/v1/%70eerreplication/batch"),
	    ACCESS_PEER);
	/* A method the route does not take: the resource's role still. */
	ck_assert_int_eq(role_of(EVHTTP_REQ_GET,
	    "/eureka/%70eerreplication/batch"), ACCESS_PEER);
	ck_assert_int_eq(role_of(EVHTTP_REQ_GET, "/eureka/heureka/apps"),
	    ACCESS_PEER);
	ck_assert_int_eq(role_of(EVHTTP_REQ_GET, "/eureka/%68eureka/%61pps"),
	    ACCESS_PEER);
	ck_assert_int_eq(role_of(EVHTTP_REQ_GET, "/eureka/heureka/stats/"),
	    ACCESS_PEER);
	/* The watch and the leader are the clients' (server/watch.c). */
	ck_assert_int_eq(role_of(EVHTTP_REQ_GET, "/eureka/heureka/watch"),
	    ACCESS_READ);
	ck_assert_int_eq(role_of(EVHTTP_REQ_GET,
	    "/eureka/heureka/apps/SVC/leader"), ACCESS_READ);
	ck_assert_int_eq(role_of(EVHTTP_REQ_PUT,
	    "/eureka/heureka/apps/SVC/leader"), ACCESS_WRITE);
	ck_assert_int_eq(role_of(EVHTTP_REQ_DELETE,
	    "/eureka/heureka/apps/S%56C/%6ceader"), ACCESS_WRITE);
	/* What no route takes is a read or a write; no handler runs. */
	ck_assert_int_eq(role_of(EVHTTP_REQ_GET, "/eureka/heureka/watch/x"),
	    ACCESS_READ);
	ck_assert_int_eq(role_of(EVHTTP_REQ_POST,
	    "/eureka/peerreplication%2Fbatch"), ACCESS_WRITE);
	ck_assert_int_eq(role_of(EVHTTP_REQ_GET, "/eureka/heurekax"),
	    ACCESS_READ);
	/* Outside the bases: open exactly where ops.c answers a probe. */
	ck_assert_int_eq(role_of(EVHTTP_REQ_GET, "/health"), ACCESS_OPEN);
	ck_assert_int_eq(role_of(EVHTTP_REQ_GET, "/actuator/health/liveness"),
	    ACCESS_OPEN);
	ck_assert_int_eq(role_of(EVHTTP_REQ_GET, "/healthx"), ACCESS_READ);
	ck_assert_int_eq(role_of(EVHTTP_REQ_GET, "/%68ealth"), ACCESS_READ);
	ck_assert_int_eq(role_of(EVHTTP_REQ_GET, "/metrics"), ACCESS_READ);
	ck_assert_int_eq(role_of(EVHTTP_REQ_GET, "/"), ACCESS_READ);
	ck_assert_int_eq(role_of(EVHTTP_REQ_POST, "/"), ACCESS_WRITE);
}
END_TEST

START_TEST(test_client_key)
{
	char	k[64];

	access_client_key("192.0.2.7", k, sizeof k);
	ck_assert_str_eq(k, "192.0.2.7");
	access_client_key("::ffff:192.0.2.7", k, sizeof k);
	ck_assert_str_eq(k, "192.0.2.7");
	/* A host holds a /64: every address in it is one client. */
	access_client_key("2001:db8:1:2:aaaa:bbbb:cccc:dddd", k, sizeof k);
	ck_assert_str_eq(k, "2001:db8:1:2::/64");
	access_client_key("2001:db8:1:2::1", k, sizeof k);
	ck_assert_str_eq(k, "2001:db8:1:2::/64");
	access_client_key("2001:db8:1:3::1", k, sizeof k);
	ck_assert_str_eq(k, "2001:db8:1:3::/64");
}
END_TEST

START_TEST(test_parse_basic)
{
	char		 out[256];
	const char	*n, *p;

	ck_assert_int_eq(access_parse_basic(ALICE, out, sizeof out, &n, &p),
	    0);
	ck_assert_str_eq(n, "alice");
	ck_assert_str_eq(p, "apw");
	/* Scheme case-insensitive; a ':' in the password is the password's. */
	ck_assert_int_eq(access_parse_basic("basic YTpiOmM=", out, sizeof out,
	    &n, &p), 0);
	ck_assert_str_eq(n, "a");
	ck_assert_str_eq(p, "b:c");
	ck_assert_int_eq(access_parse_basic("Basic Og==", out, sizeof out,
	    &n, &p), 0);
	ck_assert_str_eq(n, "");
	ck_assert_str_eq(p, "");
	ck_assert_int_eq(access_parse_basic("Bearer YWxpY2U6YXB3", out,
	    sizeof out, &n, &p), -1);
	ck_assert_int_eq(access_parse_basic("Basic", out, sizeof out, &n, &p),
	    -1);
	ck_assert_int_eq(access_parse_basic("BasicYWxpY2U6YXB3", out,
	    sizeof out, &n, &p), -1);
	ck_assert_int_eq(access_parse_basic("Basic !!!!", out, sizeof out,
	    &n, &p), -1);
	ck_assert_int_eq(access_parse_basic("Basic YWxpY2U", out, sizeof out,
	    &n, &p), -1);			/* not a multiple of 4 */
	ck_assert_int_eq(access_parse_basic("Basic YWxpY2U=", out, sizeof out,
	    &n, &p), -1);			/* "alice": no ':' */
	ck_assert_int_eq(access_parse_basic("Basic YQBiOmM=", out, sizeof out,
	    &n, &p), -1);			/* "a\0b:c" */
	/* Too long for the buffer. */
	ck_assert_int_eq(access_parse_basic(ALICE, out, 8, &n, &p), -1);
}
END_TEST

START_TEST(test_matrix)
{
	struct access	*a = mkaccess(0, 1);
	int		 peer;

	ck_assert(access_enabled(a));
	/* Open: nothing asked, even wrong credentials pass. */
	ck_assert_int_eq(judge(a, NULL, ACCESS_OPEN, &peer), ACCESS_OK);
	ck_assert_int_eq(judge(a, WRONG, ACCESS_OPEN, &peer), ACCESS_OK);
	ck_assert_int_eq(peer, 0);
	/* Anonymous and wrong: 401 everywhere else. */
	ck_assert_int_eq(judge(a, NULL, ACCESS_READ, &peer), ACCESS_DENIED_401);
	ck_assert_int_eq(judge(a, NULL, ACCESS_WRITE, &peer),
	    ACCESS_DENIED_401);
	ck_assert_int_eq(judge(a, NULL, ACCESS_PEER, &peer), ACCESS_DENIED_401);
	ck_assert_int_eq(judge(a, WRONG, ACCESS_READ, &peer),
	    ACCESS_DENIED_401);
	ck_assert_int_eq(judge(a, ALICEP, ACCESS_READ, &peer),
	    ACCESS_DENIED_401);
	ck_assert_int_eq(judge(a, "Basic !", ACCESS_READ, &peer),
	    ACCESS_DENIED_401);
	/* The user reads and writes, is no peer. */
	ck_assert_int_eq(judge(a, ALICE, ACCESS_READ, &peer), ACCESS_OK);
	ck_assert_int_eq(peer, 0);
	ck_assert_int_eq(judge(a, ALICE, ACCESS_WRITE, &peer), ACCESS_OK);
	ck_assert_int_eq(peer, 0);
	ck_assert_int_eq(judge(a, ALICE, ACCESS_PEER, &peer),
	    ACCESS_DENIED_403);
	/* The peer may do everything. */
	ck_assert_int_eq(judge(a, PEER, ACCESS_READ, &peer), ACCESS_OK);
	ck_assert_int_eq(peer, 1);
	ck_assert_int_eq(judge(a, PEER, ACCESS_WRITE, &peer), ACCESS_OK);
	ck_assert_int_eq(peer, 1);
	ck_assert_int_eq(judge(a, PEER, ACCESS_PEER, &peer), ACCESS_OK);
	ck_assert_int_eq(peer, 1);
	access_free(a);
}
END_TEST

/* The TLS module's answer, faked: every request "has" a peer certificate. */
static int
cert_yes(struct hreq *r)
{
	return (1);
}

START_TEST(test_cert_peer)
{
	struct access	*a = mkaccess(0, 1);
	int		 peer;

	access_set_cert_check(a, cert_yes);
	ck_assert_int_eq(judge(a, NULL, ACCESS_PEER, &peer), ACCESS_OK);
	ck_assert_int_eq(peer, 1);
	access_free(a);
}
END_TEST

START_TEST(test_read_anonymous)
{
	struct access	*a = mkaccess(1, 1);
	int		 peer;

	ck_assert_int_eq(judge(a, NULL, ACCESS_READ, &peer), ACCESS_OK);
	ck_assert_int_eq(peer, 0);
	ck_assert_int_eq(judge(a, NULL, ACCESS_WRITE, &peer),
	    ACCESS_DENIED_401);
	ck_assert_int_eq(judge(a, NULL, ACCESS_PEER, &peer), ACCESS_DENIED_401);
	/* Wrong credentials are refused even where none are needed. */
	ck_assert_int_eq(judge(a, WRONG, ACCESS_READ, &peer),
	    ACCESS_DENIED_401);
	access_free(a);
}
END_TEST

START_TEST(test_peer_defaults_to_user)
{
	struct access	*a = mkaccess(0, 0);
	int		 peer;

	ck_assert_int_eq(judge(a, ALICE, ACCESS_PEER, &peer), ACCESS_OK);
	ck_assert_int_eq(peer, 1);
	ck_assert_int_eq(judge(a, PEER, ACCESS_PEER, &peer),
	    ACCESS_DENIED_401);
	access_free(a);
}
END_TEST

START_TEST(test_off)
{
	struct config	 cf;
	struct access	*a;
	int		 peer;

	config_defaults(&cf);
	a = access_new(&cf);
	config_free(&cf);
	ck_assert(!access_enabled(a));
	ck_assert_int_eq(judge(a, NULL, ACCESS_PEER, &peer), ACCESS_OK);
	ck_assert_int_eq(peer, 1);
	ck_assert_int_eq(judge(a, WRONG, ACCESS_WRITE, &peer), ACCESS_OK);
	access_free(a);
	access_free(NULL);
}
END_TEST

static Suite *
access_suite(void)
{
	Suite	*s = suite_create("access");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, test_classify);
	tcase_add_test(tc, test_client_key);
	tcase_add_test(tc, test_parse_basic);
	tcase_add_test(tc, test_matrix);
	tcase_add_test(tc, test_cert_peer);
	tcase_add_test(tc, test_read_anonymous);
	tcase_add_test(tc, test_peer_defaults_to_user);
	tcase_add_test(tc, test_off);
	suite_add_tcase(s, tc);
	return (s);
}

/* Run the suite. */
int
main(void)
{
	return (check_run(access_suite()));
}
