/*
 * tests/unit/check_tls.c: the TLS module's checks that need no
 * certificate: protocol lists (TLS 1.0/1.1 refused, 1.2 the floor),
 * client-auth values, errors that name the key, and
 * tls_request_peer_verified on a request with no TLS connection. The
 * handshakes themselves are tested with real processes (44-47).
 */
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <event2/http.h>

#include "testutil.h"
#include "tls.h"

/* A server configuration with a certificate path that does not exist. */
static void
conf_missing(struct tls_conf *tc)
{
	memset(tc, 0, sizeof *tc);
	tc->prefix = "server.ssl";
	tc->certificate = "/nonexistent/cert.pem";
	tc->private_key = "/nonexistent/key.pem";
}

START_TEST(test_protocols)
{
	struct tls_conf	 tc;
	SSL_CTX		*ctx;
	char		*cause = NULL;
	const char	*bad[] = { "TLSv1.1", "TLSv1", "TLSv1.2,TLSv1.0",
			    "SSLv3", "TLSv9", ",", NULL };
	int		 i;

	for (i = 0; bad[i] != NULL; i++) {
		conf_missing(&tc);
		tc.protocols = bad[i];
		ck_assert_ptr_null(tls_server_ctx_new(&tc, &cause));
		ck_assert_msg(strstr(cause, "server.ssl.enabled-protocols")
		    != NULL, "%s: %s", bad[i], cause);
		free(cause);
		cause = NULL;
	}
	/* The default, and TLS 1.3 alone, are fine. */
	memset(&tc, 0, sizeof tc);
	tc.prefix = "heureka.client.ssl";
	ctx = tls_client_ctx_new(&tc, &cause);
	ck_assert_ptr_nonnull(ctx);
	ck_assert_int_eq(SSL_CTX_get_min_proto_version(ctx), TLS1_2_VERSION);
	ck_assert_int_eq(SSL_CTX_get_max_proto_version(ctx), TLS1_3_VERSION);
	ck_assert_int_eq(SSL_CTX_get_verify_mode(ctx), SSL_VERIFY_PEER);
	tls_ctx_free(ctx);
	tc.protocols = "tlsv1.3";
	tc.insecure = 1;
	ctx = tls_client_ctx_new(&tc, &cause);
	ck_assert_ptr_nonnull(ctx);
	ck_assert_int_eq(SSL_CTX_get_min_proto_version(ctx), TLS1_3_VERSION);
	ck_assert_int_eq(SSL_CTX_get_verify_mode(ctx), SSL_VERIFY_NONE);
	tls_ctx_free(ctx);
	tls_ctx_free(NULL);
}
END_TEST

START_TEST(test_client_auth)
{
	enum tls_client_auth	a;

	ck_assert_int_eq(tls_parse_client_auth("none", &a), 0);
	ck_assert_int_eq(a, TLS_CLIENT_AUTH_NONE);
	ck_assert_int_eq(tls_parse_client_auth(NULL, &a), 0);
	ck_assert_int_eq(a, TLS_CLIENT_AUTH_NONE);
	ck_assert_int_eq(tls_parse_client_auth("WANT", &a), 0);
	ck_assert_int_eq(a, TLS_CLIENT_AUTH_WANT);
	ck_assert_int_eq(tls_parse_client_auth("need", &a), 0);
	ck_assert_int_eq(a, TLS_CLIENT_AUTH_NEED);
	ck_assert_int_eq(tls_parse_client_auth("maybe", &a), -1);
}
END_TEST

START_TEST(test_errors_name_the_key)
{
	struct tls_conf	 tc;
	char		*cause = NULL;

	conf_missing(&tc);
	tc.certificate = NULL;
	ck_assert_ptr_null(tls_server_ctx_new(&tc, &cause));
	ck_assert_str_eq(cause, "server.ssl.certificate: not set (needed "
	    "with server.ssl.enabled)");
	free(cause);
	conf_missing(&tc);
	ck_assert_ptr_null(tls_server_ctx_new(&tc, &cause));
	ck_assert_str_eq(cause, "server.ssl.certificate: "
	    "/nonexistent/cert.pem: No such file or directory");
	free(cause);
	memset(&tc, 0, sizeof tc);
	tc.prefix = "heureka.peer.ssl";
	tc.trust = "/nonexistent/ca.pem";
	ck_assert_ptr_null(tls_client_ctx_new(&tc, &cause));
	ck_assert_str_eq(cause, "heureka.peer.ssl.trust-certificate: "
	    "/nonexistent/ca.pem: No such file or directory");
	free(cause);
	memset(&tc, 0, sizeof tc);
	tc.prefix = "heureka.peer.ssl";
	tc.ciphers = "NO-SUCH-CIPHER";
	ck_assert_ptr_null(tls_client_ctx_new(&tc, &cause));
	ck_assert(strstr(cause, "heureka.peer.ssl.ciphers") != NULL);
	free(cause);
}
END_TEST

START_TEST(test_peer_verified_plain)
{
	struct evhttp_request	*req = evhttp_request_new(NULL, NULL);

	/* No connection at all: not a verified peer. */
	ck_assert_int_eq(tls_request_peer_verified(req), 0);
	evhttp_request_free(req);
}
END_TEST

static Suite *
tls_suite(void)
{
	Suite	*s = suite_create("tls");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, test_protocols);
	tcase_add_test(tc, test_client_auth);
	tcase_add_test(tc, test_errors_name_the_key);
	tcase_add_test(tc, test_peer_verified_plain);
	suite_add_tcase(s, tc);
	return (s);
}

/* Run the suite. */
int
main(void)
{
	return (check_run(tls_suite()));
}
