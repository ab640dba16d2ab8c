/*
 * check_airlift_codec.c: airlift's discovery JSON codec (common/
 * airlift_codec.c): announcements and static announcements decode with
 * every field checked, bad bodies are refused with a reason and leave
 * nothing allocated, the inventory encodes in airlift's key order without
 * the server's reserved keys.
 */
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "airlift_codec.h"
#include "buf.h"
#include "instance.h"
#include "testutil.h"

/* Decode s as an announcement; the reason on failure, NULL on success. */
static char *
decode_fails(const char *s)
{
	struct airlift_announcement	 a;
	char				*cause = NULL;

	if (airlift_decode_announcement(s, strlen(s), &a, &cause) == 0) {
		airlift_announcement_clear(&a);
		return (NULL);
	}
	ck_assert_ptr_nonnull(cause);
	ck_assert_ptr_null(a.services);
	return (cause);
}

START_TEST(test_decode_announcement)
{
	const char *s = "{\"environment\":\"prod\",\"nodeId\":\"n1\","
	    "\"pool\":\"general\",\"location\":\"/l\",\"extra\":[1,{}],"
	    "\"services\":[{\"id\":\"u1\",\"type\":\"trino\",\"properties\":"
	    "{\"http\":\"http://h:1\",\"coordinator\":\"true\"}},"
	    "{\"id\":\"u2\",\"type\":\"jmx\"}]}";
	struct airlift_announcement	 a;
	char				*cause = NULL;

	ck_assert_int_eq(airlift_decode_announcement(s, strlen(s), &a,
	    &cause), 0);
	ck_assert_str_eq(a.environment, "prod");
	ck_assert_str_eq(a.pool, "general");
	ck_assert_str_eq(a.location, "/l");
	ck_assert_uint_eq(a.n, 2);
	ck_assert_str_eq(a.services[0].id, "u1");
	ck_assert_str_eq(a.services[0].type, "trino");
	ck_assert_uint_eq(a.services[0].properties.n, 2);
	ck_assert_str_eq(kvlist_get(&a.services[0].properties, "http"),
	    "http://h:1");
	ck_assert_uint_eq(a.services[1].properties.n, 0);
	airlift_announcement_clear(&a);
}
END_TEST

START_TEST(test_decode_refused)
{
	static const struct {
		const char	*body;
		const char	*reason;
	} bad[] = {
		{ "", "malformed JSON" },
		{ "{\"environment\":", "malformed JSON" },
		{ "[]", "JSON object" },
		{ "{\"pool\":\"p\",\"services\":[]}",
		    "environment is required" },
		{ "{\"environment\":1,\"pool\":\"p\",\"services\":[]}",
		    "environment must be a string" },
		{ "{\"environment\":\"e\",\"services\":[]}",
		    "pool is required" },
		{ "{\"environment\":\"e\",\"pool\":\"p\"}",
		    "services must be" },
		{ "{\"environment\":\"e\",\"pool\":\"p\",\"services\":[1]}",
		    "services[0] must be an object" },
		{ "{\"environment\":\"e\",\"pool\":\"p\",\"services\":"
		    "[{\"id\":\"a:b\",\"type\":\"t\"}]}", "invalid id" },
		{ "{\"environment\":\"e\",\"pool\":\"p\",\"services\":"
		    "[{\"id\":\"a\",\"type\":\"t\",\"properties\":[]}]}",
		    "properties must be an object" },
		{ "{\"environment\":\"e\",\"pool\":\"p\",\"services\":"
		    "[{\"id\":\"a\",\"type\":\"t\",\"properties\":"
		    "{\"k\":null}}]}", "must be a string" },
		{ "{\"environment\":\"e\",\"pool\":\"p\",\"services\":"
		    "[{\"id\":\"a\",\"type\":\"t\",\"properties\":"
		    "{\"airlift.id\":\"x\"}}]}", "reserved" },
		{ "{\"environment\":\"e\",\"pool\":\"p\",\"services\":"
		    "[{\"id\":\"a\",\"type\":\"t\",\"properties\":"
		    "{\"k\":\"1\",\"k\":\"2\"}}]}", "given twice" },
		{ "{\"environment\":\"e\",\"pool\":\"p\",\"services\":"
		    "[{\"id\":\"a\",\"type\":\"t\"},{\"id\":\"a\",\"type\":"
		    "\"u\"}]}", "given twice" },
	};
	size_t	 i;
	char	*cause;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cause = decode_fails(bad[i].body);
		ck_assert_msg(cause != NULL, "accepted: %s", bad[i].body);
		ck_assert_msg(strstr(cause, bad[i].reason) != NULL,
		    "%s: reason \"%s\", wanted \"%s\"", bad[i].body, cause,
		    bad[i].reason);
		free(cause);
	}
}
END_TEST

START_TEST(test_decode_bounds)
{
	struct buf	 b;
	char		*cause;
	int		 i;

	buf_init(&b, 0);
	buf_adds(&b, "{\"environment\":\"e\",\"pool\":\"p\",\"services\":[");
	for (i = 0; i <= AIRLIFT_MAX_SERVICES; i++)
		buf_addf(&b, "%s{\"id\":\"s%d\",\"type\":\"t\"}", i ? "," : "",
		    i);
	buf_adds(&b, "]}");
	buf_addc(&b, '\0');
	cause = decode_fails(b.data);
	ck_assert_ptr_nonnull(strstr(cause, "more than 64 services"));
	free(cause);

	buf_reset(&b);
	buf_adds(&b, "{\"environment\":\"e\",\"pool\":\"p\",\"services\":"
	    "[{\"id\":\"a\",\"type\":\"t\",\"properties\":{");
	for (i = 0; i <= AIRLIFT_MAX_PROPERTIES; i++)
		buf_addf(&b, "%s\"k%d\":\"v\"", i ? "," : "", i);
	buf_adds(&b, "}}]}");
	buf_addc(&b, '\0');
	cause = decode_fails(b.data);
	ck_assert_ptr_nonnull(strstr(cause, "more than 100 properties"));
	free(cause);
	buf_free(&b);

	/* Deep nesting is refused before a tree is built. */
	cause = decode_fails("{\"environment\":\"e\",\"x\":[[[[[[[[[[[[[[[[[["
	    "]]]]]]]]]]]]]]]]]]}");
	ck_assert_ptr_nonnull(strstr(cause, "nested deeper"));
	free(cause);
	cause = decode_fails("{\"environment\":\"[[[[[[[[[[[[[[[[[[[[\",\"x\":"
	    "\"\\\"[[[[[[[[[[[[[[[[[[[[\"}");
	ck_assert_ptr_nonnull(strstr(cause, "pool is required"));
	free(cause);

	/* A NUL inside the body is refused, not truncated. */
	ck_assert_int_eq(airlift_decode_announcement("{}\0{}", 5,
	    &(struct airlift_announcement){ 0 }, &cause), -1);
	ck_assert_ptr_nonnull(strstr(cause, "NUL"));
	free(cause);
}
END_TEST

START_TEST(test_decode_static)
{
	const char *s = "{\"environment\":\"e\",\"type\":\"db\",\"pool\":"
	    "\"p\",\"properties\":{\"jdbc\":\"x\"}}";
	struct airlift_service	 svc;
	char			*env, *cause;

	ck_assert_int_eq(airlift_decode_static(s, strlen(s), &svc, &env,
	    &cause), 0);
	ck_assert_str_eq(env, "e");
	ck_assert_str_eq(svc.type, "db");
	ck_assert_str_eq(svc.pool, "p");
	ck_assert_ptr_null(svc.location);
	ck_assert_ptr_null(svc.id);
	ck_assert_str_eq(kvlist_get(&svc.properties, "jdbc"), "x");
	free(env);
	airlift_service_clear(&svc);

	s = "{\"environment\":\"e\",\"pool\":\"p\"}";
	ck_assert_int_eq(airlift_decode_static(s, strlen(s), &svc, &env,
	    &cause), -1);
	ck_assert_str_eq(cause, "type is required");
	ck_assert_ptr_null(env);
	free(cause);
}
END_TEST

START_TEST(test_encode_services)
{
	struct airlift_service	 svc;
	struct buf		 b;

	memset(&svc, 0, sizeof svc);
	svc.id = strdup("u1");
	svc.type = strdup("trino");
	svc.pool = strdup("general");
	svc.location = strdup("/l");
	kvlist_set(&svc.properties, AIRLIFT_RESERVED_PREFIX "type", "trino");
	kvlist_set(&svc.properties, "http", "http://h:1");
	kvlist_set(&svc.properties, "q", "a\"b");
	buf_init(&b, 0);
	airlift_encode_services_open(&b, "prod");
	airlift_encode_service(&b, &svc, 1);
	airlift_encode_service(&b, &svc, 0);
	airlift_encode_services_close(&b);
	buf_addc(&b, '\0');
	ck_assert_str_eq(b.data, "{\"environment\":\"prod\",\"services\":["
	    "{\"id\":\"u1\",\"nodeId\":null,\"type\":\"trino\",\"pool\":"
	    "\"general\",\"location\":\"/l\",\"properties\":{\"http\":"
	    "\"http://h:1\",\"q\":\"a\\\"b\"}},"
	    "{\"id\":\"u1\",\"nodeId\":null,\"type\":\"trino\",\"pool\":"
	    "\"general\",\"location\":\"/l\",\"properties\":{\"http\":"
	    "\"http://h:1\",\"q\":\"a\\\"b\"}}]}");
	buf_free(&b);
	airlift_service_clear(&svc);
}
END_TEST

/* The suite. */
static Suite *
airlift_codec_suite(void)
{
	Suite	*s = suite_create("airlift_codec");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, test_decode_announcement);
	tcase_add_test(tc, test_decode_refused);
	tcase_add_test(tc, test_decode_bounds);
	tcase_add_test(tc, test_decode_static);
	tcase_add_test(tc, test_encode_services);
	suite_add_tcase(s, tc);
	return (s);
}

/* Run the suite. */
int
main(void)
{
	return (check_run(airlift_codec_suite()));
}
