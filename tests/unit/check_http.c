/*
 * check_http.c: unit tests for the front's parser (server/front/
 * http_parse.c): what a head that passes gives the handlers (method,
 * version, target, every header in order, trimmed as evhttp trimmed,
 * NUL-terminated in place, no copy), the framing it reads, the bound on
 * headers, and the target split and %-decoding the router is given. The
 * refusals are check_guard's (the same parser); the agreement with the
 * old path on whole request streams is tests/diff's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "http.h"
#include "testutil.h"

/* A mutable copy of a head, parsed; its status. */
static int
parse(char *buf, const char *head, struct hhead *h, struct hhdr *hdrs,
    size_t max, const char **reason)
{
	size_t	n = strlen(head);

	memcpy(buf, head, n + 1);
	return (http_parse_head(buf, n, h, hdrs, max, reason));
}

/* What a head gives: slices of the head itself, NUL-terminated. */
START_TEST(test_head_slices)
{
	char		 buf[512];
	struct hhead	 h;
	struct hhdr	 hdrs[8];
	const char	*reason;

	ck_assert_int_eq(parse(buf, "PUT /eureka/apps/A/i?status=UP HTTP/1.1"
	    "\r\nHost: h:1\r\nAccept:  application/json \t\r\nX-A:\tv\r\n"
	    "x-empty:\r\n\r\n", &h, hdrs, 8, &reason), 0);
	ck_assert_int_eq(h.method, EVHTTP_REQ_PUT);
	ck_assert_str_eq(h.method_name, "PUT");
	ck_assert_str_eq(h.target, "/eureka/apps/A/i?status=UP");
	ck_assert_uint_eq(h.target_len, 26);
	ck_assert_int_eq(h.minor, 1);
	ck_assert_int_eq(h.content_length, -1);
	ck_assert_uint_eq(h.nhdrs, 4);
	/* In place: the pointers are into buf. */
	ck_assert(h.target > buf && h.target < buf + sizeof buf);
	ck_assert(hdrs[0].name > buf && hdrs[0].value < buf + sizeof buf);
	ck_assert_str_eq(hdrs[0].name, "Host");
	ck_assert_uint_eq(hdrs[0].name_len, 4);
	ck_assert_str_eq(hdrs[0].value, "h:1");
	/* Spaces in front, spaces and tabs behind (evhttp's trim). */
	ck_assert_str_eq(hdrs[1].value, "application/json");
	ck_assert_str_eq(hdrs[2].value, "\tv");
	ck_assert_str_eq(hdrs[3].name, "x-empty");
	ck_assert_str_eq(hdrs[3].value, "");
}
END_TEST

/* Framing: Content-Length, chunked, Expect, HTTP/1.0, bare LF. */
START_TEST(test_head_framing)
{
	char		 buf[512];
	struct hhead	 h;
	struct hhdr	 hdrs[8];
	const char	*reason;

	ck_assert_int_eq(parse(buf, "POST /a HTTP/1.0\nContent-Length: 007\n"
	    "Expect: 100-continue\n\n", &h, hdrs, 8, &reason), 0);
	ck_assert_int_eq(h.minor, 0);
	ck_assert_int_eq(h.content_length, 7);
	ck_assert_int_eq(h.expect, 1);
	ck_assert_int_eq(parse(buf, "POST /a HTTP/1.1\r\nExpect: other\r\n"
	    "Transfer-Encoding: Chunked\r\n\r\n", &h, hdrs, 8, &reason), 0);
	ck_assert_int_eq(h.chunked, 1);
	ck_assert_int_eq(h.expect, 2);
	ck_assert_int_eq(parse(buf, "POST /a HTTP/1.1\r\nContent-Length: 5\r\n"
	    "Content-Length: 6\r\n\r\n", &h, hdrs, 8, &reason), 400);
	ck_assert_ptr_nonnull(strstr(reason, "conflicting"));
}
END_TEST

/* Headers past the caller's array: 431, never past it. */
START_TEST(test_head_bound)
{
	char		 buf[512];
	struct hhead	 h;
	struct hhdr	 hdrs[3];
	const char	*reason;

	ck_assert_int_eq(parse(buf, "GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\n"
	    "\r\n", &h, hdrs, 3, &reason), 0);
	ck_assert_int_eq(parse(buf, "GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\n"
	    "D: 4\r\n\r\n", &h, hdrs, 3, &reason), 431);
	ck_assert_uint_eq(http_head_lines("a\nb\r\n\r\n", 7), 3);
}
END_TEST

/* The path and query the router gets, as evhttp's URI parse gave them. */
START_TEST(test_target_split)
{
	static const struct {
		const char	*target, *path, *query;
	} t[] = {
		{ "/eureka/apps?x=1#f", "/eureka/apps", "x=1" },
		{ "/eureka/apps#f?x", "/eureka/apps", NULL },
		{ "/a?", "/a", "" },
		{ "http://h:8080/eureka/apps?q", "/eureka/apps", "q" },
		{ "https://[::1]/x", "/x", NULL },
		{ "//h/x", "/x", NULL },
		{ "//h", "", NULL },
		{ "*", "*", NULL },
		{ "/a:b", "/a:b", NULL },
	};
	char		 out[64];
	const char	*q;
	size_t		 i, qn;

	for (i = 0; i < sizeof t / sizeof t[0]; i++) {
		http_target_split(t[i].target, strlen(t[i].target), out, &q,
		    &qn);
		ck_assert_str_eq(out, t[i].path);
		if (t[i].query == NULL)
			ck_assert_ptr_null(q);
		else {
			ck_assert_uint_eq(qn, strlen(t[i].query));
			ck_assert(strncmp(q, t[i].query, qn) == 0);
		}
	}
}
END_TEST

/* %-decoding as evhttp_uridecode: malformed escapes stay. */
START_TEST(test_decode)
{
	char	out[64];

	ck_assert_uint_eq(http_decode("a%41+b", 6, 1, out), 4);
	ck_assert_str_eq(out, "aA b");
	ck_assert_uint_eq(http_decode("a%41+b", 6, 0, out), 4);
	ck_assert_str_eq(out, "aA+b");
	ck_assert_uint_eq(http_decode("%zz%4%", 6, 1, out), 6);
	ck_assert_str_eq(out, "%zz%4%");
	ck_assert_uint_eq(http_decode("%00x", 4, 0, out), 2);
	ck_assert_int_eq(out[0], '\0');
	ck_assert_int_eq(out[1], 'x');
}
END_TEST

/* The query lookup: the first of a name, case-sensitive. */
START_TEST(test_query_get)
{
	struct hkv	kv[] = { { "a", "1" }, { "B", "2" }, { "a", "3" } };
	struct hquery	q = { kv, 3 };

	ck_assert_str_eq(hquery_get(&q, "a"), "1");
	ck_assert_str_eq(hquery_get(&q, "B"), "2");
	ck_assert_ptr_null(hquery_get(&q, "b"));
}
END_TEST

/* A decimal int64 parameter: 1 with it, 0 absent or empty, -1 bad. */
START_TEST(test_query_i64)
{
	struct hkv	kv[] = { { "a", "-12" }, { "e", "" }, { "x", "1x" },
	    { "big", "9223372036854775808" }, { "max", "9223372036854775807" } };
	struct hquery	q = { kv, 5 };
	int64_t		n = 7;

	ck_assert_int_eq(hquery_i64(&q, "a", &n), 1);
	ck_assert_int_eq(n, -12);
	n = 7;
	ck_assert_int_eq(hquery_i64(&q, "none", &n), 0);
	ck_assert_int_eq(hquery_i64(&q, "e", &n), 0);
	ck_assert_int_eq(hquery_i64(&q, "x", &n), -1);
	ck_assert_int_eq(hquery_i64(&q, "big", &n), -1);
	ck_assert_int_eq(n, 7);
	ck_assert_int_eq(hquery_i64(&q, "max", &n), 1);
	ck_assert_int_eq(n, INT64_MAX);
}
END_TEST

/* The parser's suite. */
static Suite *
http_suite(void)
{
	Suite	*s = suite_create("http");
	TCase	*tc = tcase_create("parse");

	tcase_add_test(tc, test_head_slices);
	tcase_add_test(tc, test_head_framing);
	tcase_add_test(tc, test_head_bound);
	tcase_add_test(tc, test_target_split);
	tcase_add_test(tc, test_decode);
	tcase_add_test(tc, test_query_get);
	tcase_add_test(tc, test_query_i64);
	suite_add_tcase(s, tc);
	return (s);
}

/* Run the suite. */
int
main(void)
{
	return (check_run(http_suite()));
}
