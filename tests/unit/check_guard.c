/*
 * check_guard.c: unit tests for the header-time guard's request head
 * parser (guard_parse_head) and the router lookup it decides with
 * (rest_route_lookup): what is refused with which status, what passes
 * and what it reads from a head that passes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <event2/http.h>

#include "guard.h"
#include "rest.h"

/* Parse a NUL-terminated head. */
static int
parse(const char *head, struct guard_head *h, const char **reason)
{
	return (guard_parse_head(head, strlen(head), h, reason));
}

static const struct {
	const char	*head;
	int		 code;
	const char	*reason;
} bad_heads[] = {
	{ "POST /eureka/apps/A HTTP/1.1\r\nContent-Length: 5\r\n"
	    "Content-Length: 6\r\n\r\n", 400, "conflicting Content-Length" },
	{ "POST /eureka/apps/A HTTP/1.1\r\nContent-Length: +586\r\n\r\n", 400,
	    "invalid Content-Length" },
	{ "POST /eureka/apps/A HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\n", 400,
	    "invalid Content-Length" },
	{ "POST /eureka/apps/A HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400,
	    "invalid Content-Length" },
	{ "POST /eureka/apps/A HTTP/1.1\r\nContent-Length: "
	    "99999999999999999999999\r\n\r\n", 400, "invalid Content-Length" },
	{ "POST /eureka/apps/A HTTP/1.1\r\nContent-Length:\t5\r\n\r\n", 400,
	    "tab" },
	{ "POST /eureka/apps/A HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
	    400, "Transfer-Encoding" },
	{ "POST /eureka/apps/A HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n", 400, "Transfer-Encoding" },
	{ "POST /eureka/apps/A HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
	    "Content-Length: 5\r\n\r\n", 400, "both" },
	{ "PUT /eureka/apps/A/b HTTP/1.1\r\nX-A: b\r\n c\r\n\r\n", 400,
	    "folding" },
	{ "PUT /eureka/apps/A/b HTTP/1.1\r\nContent-Length : 5\r\n\r\n", 400,
	    "malformed header" },
	{ "PUT /eureka/apps/A/b HTTP/1.1\r\nX-Heureka-Guard: 200 x\r\n\r\n",
	    400, "reserved" },
	{ "GET  /eureka/apps HTTP/1.1\r\n\r\n", 400, "request line" },
	{ "GET /eureka/apps HTTP/2.0\r\n\r\n", 400, "version" },
	{ "GET /eureka/apps\r\n\r\n", 400, "request line" },
	{ "\r\nGET /eureka/apps HTTP/1.1\r\n\r\n", 400, "request line" },
	{ "GET /eureka/apps HTTP/1.1\r\nHost: a\r\n", 400, "malformed" },
};

START_TEST(test_bad_heads)
{
	struct guard_head	 h;
	const char		*reason = NULL;

	ck_assert_int_eq(parse(bad_heads[_i].head, &h, &reason),
	    bad_heads[_i].code);
	ck_assert_msg(reason != NULL && strstr(reason, bad_heads[_i].reason),
	    "reason \"%s\" lacks \"%s\"", reason ? reason : "(null)",
	    bad_heads[_i].reason);
}
END_TEST

/* A NUL or another control character in a value is refused. */
START_TEST(test_control_characters)
{
	static const char head[] = "POST /eureka/apps/A HTTP/1.1\r\n"
	    "x-netflix-discovery-replication: true\0\r\n\r\n";
	struct guard_head	 h;
	const char		*reason;

	ck_assert_int_eq(guard_parse_head(head, sizeof head - 1, &h, &reason),
	    400);
	ck_assert_ptr_nonnull(strstr(reason, "control character"));
	ck_assert_int_eq(parse("GET / HTTP/1.1\r\nA: b\x7f\r\n\r\n", &h,
	    &reason), 400);
	ck_assert_int_eq(parse("GET / HTTP/1.1\r\nA: b\rc\r\n\r\n", &h,
	    &reason), 400);
}
END_TEST

/* What a head that passes says. */
START_TEST(test_good_heads)
{
	struct guard_head	 h;
	const char		*reason;

	ck_assert_int_eq(parse("POST /eureka/apps/A?x=1 HTTP/1.1\r\nHost: a\r\n"
	    "Content-Length: 12\r\nContent-Length: 12\r\n"
	    "Expect: 100-Continue\r\nX-Raw: caf\xc3\xa9\t!\r\n\r\n", &h, &reason),
	    0);
	ck_assert_int_eq(h.method, EVHTTP_REQ_POST);
	ck_assert_int_eq(h.content_length, 12);
	ck_assert_int_eq(h.chunked, 0);
	ck_assert_int_eq(h.expect_continue, 1);
	ck_assert_int_eq((int)h.target_len, 18);
	ck_assert(strncmp(h.target, "/eureka/apps/A?x=1", 18) == 0);
	ck_assert_int_eq(parse("PUT /v2/apps/A/b HTTP/1.0\n"
	    "transfer-encoding: CHUNKED\n\n", &h, &reason), 0);
	ck_assert_int_eq(h.method, EVHTTP_REQ_PUT);
	ck_assert_int_eq(h.chunked, 1);
	ck_assert_int_eq(h.content_length, -1);
	ck_assert_int_eq(parse("BREW /pot HTTP/1.1\r\n\r\n", &h, &reason), 0);
	ck_assert_int_eq(h.method, 0);
}
END_TEST

/* The router lookup the guard decides with. */
START_TEST(test_route_lookup)
{
	enum rest_body	body;
	char		allow[64];

	ck_assert_int_eq(rest_route_lookup("/eureka/apps/A", EVHTTP_REQ_POST,
	    &body, allow, sizeof allow), 0);
	ck_assert_int_eq(body, REST_BODY_INSTANCE);
	ck_assert_int_eq(rest_route_lookup("/eureka/v2/peerreplication/batch",
	    EVHTTP_REQ_POST, &body, allow, sizeof allow), 0);
	ck_assert_int_eq(body, REST_BODY_BATCH);
	ck_assert_int_eq(rest_route_lookup("/eureka/apps/A/b", EVHTTP_REQ_PUT,
	    &body, allow, sizeof allow), 0);
	ck_assert_int_eq(body, REST_BODY_NONE);
	ck_assert_int_eq(rest_route_lookup("/eureka/apps/A/b",
	    EVHTTP_REQ_PATCH, &body, allow, sizeof allow), 405);
	ck_assert_str_eq(allow, "GET, HEAD, PUT, DELETE");
	ck_assert_int_eq(rest_route_lookup("/eureka/apps/A",
	    EVHTTP_REQ_OPTIONS, &body, allow, sizeof allow), 405);
	ck_assert_str_eq(allow, "GET, HEAD, POST");
	ck_assert_int_eq(rest_route_lookup("/eureka/nothing", EVHTTP_REQ_GET,
	    &body, allow, sizeof allow), 404);
	ck_assert_int_eq(rest_route_lookup("/eureka/apps/A%00B",
	    EVHTTP_REQ_GET, &body, allow, sizeof allow), 400);
	ck_assert_int_eq(rest_route_lookup("/metrics", EVHTTP_REQ_GET, &body,
	    allow, sizeof allow), 0);
	ck_assert_int_eq(body, REST_BODY_NONE);
}
END_TEST

/* The guard's suite. */
static Suite *
guard_suite(void)
{
	Suite	*s = suite_create("guard");
	TCase	*tc = tcase_create("head");

	tcase_add_loop_test(tc, test_bad_heads, 0,
	    (int)(sizeof bad_heads / sizeof bad_heads[0]));
	tcase_add_test(tc, test_control_characters);
	tcase_add_test(tc, test_good_heads);
	tcase_add_test(tc, test_route_lookup);
	suite_add_tcase(s, tc);
	return (s);
}

/* Run the suite. */
int
main(void)
{
	SRunner	*sr = srunner_create(guard_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
