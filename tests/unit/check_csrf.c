/*
 * tests/unit/check_csrf.c: the dashboard's protection against cross-site
 * writes (csrf.h). The token is bound to the page's credentials and to
 * the process (a restart changes it); a write from a browser (Origin,
 * Sec-Fetch-Site, Referer or the token's header) needs the right token
 * and this server's origin, else it is refused with its reason (rest.c
 * answers 403 with it); reads and writes with none of those headers
 * (curl, Eureka clients, peers: heartbeats) are not judged.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <event2/http.h>

#include "buf.h"
#include "csrf.h"
#include "http.h"
#include "testutil.h"

#define HOST	"reg.example:8761"

/*
 * A request of method with headers given as name, value pairs (NULL
 * ends them).
 */
static struct hreq *
mkreq(enum evhttp_cmd_type method, ...)
{
	struct hreq	*r;
	struct buf	 b;
	const char	*k, *v;
	va_list		 ap;

	buf_init(&b, 0);
	buf_addf(&b, "%s / HTTP/1.1\r\n", method == EVHTTP_REQ_GET ? "GET" :
	    method == EVHTTP_REQ_HEAD ? "HEAD" : method == EVHTTP_REQ_PUT ?
	    "PUT" : method == EVHTTP_REQ_POST ? "POST" : method ==
	    EVHTTP_REQ_DELETE ? "DELETE" : method == EVHTTP_REQ_OPTIONS ?
	    "OPTIONS" : "PATCH");
	va_start(ap, method);
	while ((k = va_arg(ap, const char *)) != NULL) {
		v = va_arg(ap, const char *);
		buf_addf(&b, "%s: %s\r\n", k, v);
	}
	va_end(ap);
	buf_adds(&b, "\r\n");
	r = hreq_new_head(b.data, b.len);
	buf_free(&b);
	ck_assert_ptr_nonnull(r);
	return (r);
}

/* csrf_check's verdict on r (freed), *why its reason or NULL. */
static int
judge(struct csrf *c, struct hreq *r, int actions,
    const char **why)
{
	int	rc;

	*why = NULL;
	rc = csrf_check(c, r, actions, why);
	hreq_free(r);
	return (rc);
}

/* The token of a page served to auth (NULL: none). */
static void
token_for(struct csrf *c, const char *auth, char *out)
{
	struct hreq		*r = auth != NULL ?
	    mkreq(EVHTTP_REQ_GET, "Authorization", auth, NULL) :
	    mkreq(EVHTTP_REQ_GET, NULL);

	csrf_token(c, r, out);
	hreq_free(r);
}

START_TEST(test_token_bound)
{
	struct csrf	*c = csrf_new(), *c2 = csrf_new();
	char		 a[CSRF_TOKEN_LEN + 1], a2[CSRF_TOKEN_LEN + 1];
	char		 b[CSRF_TOKEN_LEN + 1], none[CSRF_TOKEN_LEN + 1];
	char		 other[CSRF_TOKEN_LEN + 1];

	token_for(c, "Basic YWxpY2U6cHc=", a);
	token_for(c, "Basic YWxpY2U6cHc=", a2);
	token_for(c, "Basic Ym9iOnB3", b);
	token_for(c, NULL, none);
	token_for(c2, "Basic YWxpY2U6cHc=", other);
	ck_assert_uint_eq(strlen(a), CSRF_TOKEN_LEN);
	ck_assert_uint_eq(strspn(a, "0123456789abcdef"), CSRF_TOKEN_LEN);
	ck_assert_str_eq(a, a2);		/* the same page's */
	ck_assert_str_ne(a, b);			/* other credentials */
	ck_assert_str_ne(a, none);
	ck_assert_str_ne(a, other);		/* another process */
	csrf_free(c);
	csrf_free(c2);
	csrf_free(NULL);
}
END_TEST

START_TEST(test_not_judged)
{
	struct csrf	*c = csrf_new();
	const char	*why;

	/* A heartbeat, a curl write: none of a browser's headers. */
	ck_assert_int_eq(judge(c, mkreq(EVHTTP_REQ_PUT, "Host", HOST,
	    "Accept", "application/json", "DiscoveryIdentity-Name",
	    "DefaultClient", NULL), 0, &why), 0);
	ck_assert_int_eq(judge(c, mkreq(EVHTTP_REQ_DELETE,
	    "Authorization", "Basic eDp5", NULL), 1, &why), 0);
	/* A read from anywhere is not a write. */
	ck_assert_int_eq(judge(c, mkreq(EVHTTP_REQ_GET, "Origin",
	    "http://evil.example", "Host", HOST, NULL), 1, &why), 0);
	ck_assert_int_eq(judge(c, mkreq(EVHTTP_REQ_HEAD, "Sec-Fetch-Site",
	    "cross-site", NULL), 1, &why), 0);
	/* csrf_is_browser says the same. */
	{
		struct hreq *r = mkreq(EVHTTP_REQ_PUT, "Host", HOST,
		    NULL);

		ck_assert_int_eq(csrf_is_browser(r), 0);
		hreq_free(r);
		r = mkreq(EVHTTP_REQ_PUT, "referer", "http://x/", NULL);
		ck_assert_int_eq(csrf_is_browser(r), 1);
		hreq_free(r);
	}
	csrf_free(c);
}
END_TEST

START_TEST(test_same_origin_accepted)
{
	struct csrf	*c = csrf_new();
	char		 tok[CSRF_TOKEN_LEN + 1];
	const char	*why;

	token_for(c, "Basic YWxpY2U6cHc=", tok);
	ck_assert_int_eq(judge(c, mkreq(EVHTTP_REQ_PUT, "Host", HOST,
	    "Authorization", "Basic YWxpY2U6cHc=", "Origin",
	    "http://" HOST, "Sec-Fetch-Site", "same-origin",
	    "X-Heureka-Token", tok, NULL), 1, &why), 0);
	/* Header names in any case; the host in any case. */
	ck_assert_int_eq(judge(c, mkreq(EVHTTP_REQ_DELETE, "host", HOST,
	    "authorization", "Basic YWxpY2U6cHc=", "ORIGIN",
	    "https://REG.example:8761", "x-heureka-token", tok, NULL), 1,
	    &why), 0);
	/* An old browser: a Referer of this server and the token. */
	ck_assert_int_eq(judge(c, mkreq(EVHTTP_REQ_POST, "Host", HOST,
	    "Authorization", "Basic YWxpY2U6cHc=", "Referer",
	    "http://" HOST "/#/instance/A/1", "X-Heureka-Token", tok, NULL),
	    1, &why), 0);
	csrf_free(c);
}
END_TEST

START_TEST(test_cross_origin_refused)
{
	struct csrf	*c = csrf_new();
	char		 tok[CSRF_TOKEN_LEN + 1];
	const char	*why;

	token_for(c, "Basic YWxpY2U6cHc=", tok);
	/* Another origin, even with a token stolen somehow. */
	ck_assert_int_eq(judge(c, mkreq(EVHTTP_REQ_PUT, "Host", HOST,
	    "Authorization", "Basic YWxpY2U6cHc=", "Origin",
	    "http://evil.example", "X-Heureka-Token", tok, NULL), 1, &why),
	    -1);
	ck_assert_ptr_nonnull(strstr(why, "cross-origin request refused"));
	/* Another port is another origin. */
	ck_assert_int_eq(judge(c, mkreq(EVHTTP_REQ_PUT, "Host", HOST,
	    "Origin", "http://reg.example:9999", "X-Heureka-Token", tok,
	    NULL), 1, &why), -1);
	/* "null" (a sandboxed page) names no origin. */
	ck_assert_int_eq(judge(c, mkreq(EVHTTP_REQ_PUT, "Host", HOST,
	    "Origin", "null", "X-Heureka-Token", tok, NULL), 1, &why), -1);
	/* Sec-Fetch-Site other than same-origin. */
	ck_assert_int_eq(judge(c, mkreq(EVHTTP_REQ_POST, "Host", HOST,
	    "Sec-Fetch-Site", "cross-site", NULL), 1, &why), -1);
	ck_assert_ptr_nonnull(strstr(why, "Sec-Fetch-Site"));
	ck_assert_int_eq(judge(c, mkreq(EVHTTP_REQ_POST, "Host", HOST,
	    "Sec-Fetch-Site", "same-site", "Origin", "http://" HOST,
	    "X-Heureka-Token", tok, NULL), 1, &why), -1);
	/* An old browser's form: only a Referer from elsewhere. */
	ck_assert_int_eq(judge(c, mkreq(EVHTTP_REQ_POST, "Host", HOST,
	    "Authorization", "Basic YWxpY2U6cHc=", "Referer",
	    "http://evil.example/form.html", NULL), 1, &why), -1);
	ck_assert_ptr_nonnull(strstr(why, "cross-origin"));
	/* Without Host nothing is same-origin. */
	ck_assert_int_eq(judge(c, mkreq(EVHTTP_REQ_PUT, "Origin",
	    "http://" HOST, "X-Heureka-Token", tok, NULL), 1, &why), -1);
	csrf_free(c);
}
END_TEST

START_TEST(test_token_missing_or_wrong)
{
	struct csrf	*c = csrf_new();
	char		 tok[CSRF_TOKEN_LEN + 1], bob[CSRF_TOKEN_LEN + 1];
	const char	*why;

	token_for(c, "Basic YWxpY2U6cHc=", tok);
	token_for(c, "Basic Ym9iOnB3", bob);
	/* Same origin, no token. */
	ck_assert_int_eq(judge(c, mkreq(EVHTTP_REQ_PUT, "Host", HOST,
	    "Authorization", "Basic YWxpY2U6cHc=", "Origin", "http://" HOST,
	    NULL), 1, &why), -1);
	ck_assert_ptr_nonnull(strstr(why, "missing or wrong X-Heureka-Token"));
	/* Another user's page's token. */
	ck_assert_int_eq(judge(c, mkreq(EVHTTP_REQ_PUT, "Host", HOST,
	    "Authorization", "Basic YWxpY2U6cHc=", "Origin", "http://" HOST,
	    "X-Heureka-Token", bob, NULL), 1, &why), -1);
	/* A prefix of the right one, and an empty one. */
	tok[CSRF_TOKEN_LEN - 1] = '\0';
	ck_assert_int_eq(judge(c, mkreq(EVHTTP_REQ_PUT, "Host", HOST,
	    "Authorization", "Basic YWxpY2U6cHc=", "Origin", "http://" HOST,
	    "X-Heureka-Token", tok, NULL), 1, &why), -1);
	ck_assert_int_eq(judge(c, mkreq(EVHTTP_REQ_PUT, "Host", HOST,
	    "X-Heureka-Token", "", NULL), 1, &why), -1);
	/* Actions off: a browser's write is refused whatever it carries. */
	token_for(c, NULL, tok);
	ck_assert_int_eq(judge(c, mkreq(EVHTTP_REQ_PUT, "Host", HOST,
	    "Origin", "http://" HOST, "X-Heureka-Token", tok, NULL), 0, &why),
	    -1);
	ck_assert_ptr_nonnull(strstr(why, "dashboard actions are off"));
	ck_assert_int_eq(judge(c, mkreq(EVHTTP_REQ_PUT, "Host", HOST,
	    "Origin", "http://" HOST, "X-Heureka-Token", tok, NULL), 1, &why),
	    0);
	csrf_free(c);
}
END_TEST

/* The suite. */
static Suite *
csrf_suite(void)
{
	Suite	*s = suite_create("csrf");
	TCase	*tc = tcase_create("front");

	tcase_add_test(tc, test_token_bound);
	tcase_add_test(tc, test_not_judged);
	tcase_add_test(tc, test_same_origin_accepted);
	tcase_add_test(tc, test_cross_origin_refused);
	tcase_add_test(tc, test_token_missing_or_wrong);
	suite_add_tcase(s, tc);
	return (s);
}

/* Run the suite. */
int
main(void)
{
	return (check_run(csrf_suite()));
}
