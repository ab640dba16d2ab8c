/*
 * check_json.c: unit tests for the JSON codec. Every fixture in tests/data
 * must survive decode + encode byte for byte (that is our proof of wire
 * compatibility with the Java legacy codec); the lenient input rules of
 * §4.1.8, the compact variant, replication objects and a catalogue of
 * hostile inputs are checked one by one. Every decoded instance is packed
 * (one block): its fields are compared with what the decoder before the
 * packing read (tests/data/decoded, instdump.c) and its pointers with the
 * block's bounds.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "buf.h"
#include "instance.h"
#include "instdump.h"
#include "json.h"
#include "repl.h"
#include "testutil.h"
#include "xml.h"
#include "xmalloc.h"

#define ID_A	"host-a.example.com:order-service:8080"
#define NOW	1765000000000LL	/* the decode time every test injects */


/* Decode an instance from a C string; the test fails if it does not parse. */
static struct instance *
decode_ok(const char *s)
{
	struct instance	*in;
	char		*cause = NULL;

	in = json_decode_instance(s, strlen(s), NOW, &cause);
	ck_assert_msg(in != NULL, "decode failed: %s", cause);
	return (in);
}

/* Decode must fail; returns the cause for the caller to inspect and free. */
static char *
decode_bad(const char *s, size_t len)
{
	struct instance	*in;
	char		*cause = NULL;

	in = json_decode_instance(s, len, NOW, &cause);
	ck_assert_msg(in == NULL, "decode of bad input succeeded: %.80s", s);
	ck_assert_ptr_nonnull(cause);
	return (cause);
}

/* Assert that bad input fails with a cause containing want. */
static void
assert_bad(const char *s, const char *want)
{
	char	*cause = decode_bad(s, strlen(s));

	ck_assert_msg(strstr(cause, want) != NULL, "cause \"%s\" lacks \"%s\"",
	    cause, want);
	free(cause);
}

START_TEST(test_roundtrip_instance)
{
	size_t		 len;
	char		*data, *cause = NULL;
	struct instance	*in;
	struct buf	 b;

	data = read_fixture("instance.json", &len);
	in = json_decode_instance(data, len, NOW, &cause);
	ck_assert_msg(in != NULL, "%s", cause);
	buf_init(&b, 0);
	json_encode_instance_root(&b, in);
	ck_assert_str_eq(b.data, data);
	instance_free(in);
	buf_free(&b);
	free(data);
}
END_TEST

START_TEST(test_roundtrip_application)
{
	size_t			 len;
	char			*data, *cause = NULL;
	struct application	*a;
	struct buf		 b;

	data = read_fixture("application.json", &len);
	a = json_decode_application(data, len, NOW, &cause);
	ck_assert_msg(a != NULL, "%s", cause);
	ck_assert_str_eq(a->name, "ORDER-SERVICE");
	ck_assert_uint_eq(a->n, 2);
	buf_init(&b, 0);
	json_encode_application(&b, a, CODEC_FULL, 1);
	ck_assert_str_eq(b.data, data);
	application_free(a);
	buf_free(&b);
	free(data);
}
END_TEST

/* Decode a registry fixture and re-encode it byte for byte. */
static void
roundtrip_apps(const char *name)
{
	size_t			 len;
	char			*data, *cause = NULL;
	struct applications	*as;
	struct buf		 b;

	data = read_fixture(name, &len);
	as = json_decode_applications(data, len, NOW, &cause);
	ck_assert_msg(as != NULL, "%s: %s", name, cause);
	buf_init(&b, 0);
	json_encode_applications(&b, as, CODEC_FULL);
	ck_assert_str_eq(b.data, data);
	applications_free(as);
	buf_free(&b);
	free(data);
}

START_TEST(test_roundtrip_applications)
{
	roundtrip_apps("applications.json");
	roundtrip_apps("applications-empty.json");
	roundtrip_apps("delta.json");
}
END_TEST

START_TEST(test_applications_fields)
{
	size_t			 len;
	char			*data, *cause = NULL;
	struct applications	*as;
	struct application	*a;
	struct instance		*in;

	data = read_fixture("applications.json", &len);
	as = json_decode_applications(data, len, NOW, &cause);
	ck_assert_ptr_nonnull(as);
	ck_assert_int_eq(as->versions_delta, 1);
	ck_assert_str_eq(as->apps_hashcode, "DOWN_1_UP_2_");
	ck_assert_uint_eq(as->n, 2);
	ck_assert_uint_eq(applications_count(as), 3);
	a = applications_find(as, "INVENTORY");
	ck_assert_ptr_nonnull(a);
	in = application_find(a, "i-0a1b2c3d4e5f67890");
	ck_assert_ptr_nonnull(in);
	ck_assert_int_eq(in->dc_name, DC_AMAZON);
	ck_assert_uint_eq(in->dc_metadata.n, 6);
	ck_assert_str_eq(kvlist_get(&in->dc_metadata, "availability-zone"),
	    "us-east-1c");
	ck_assert_str_eq(in->app_group_name, "INVENTORY-GROUP");
	ck_assert_str_eq(in->asg_name, "inventory-v042");
	ck_assert_ptr_null(in->secure_vip_address);
	ck_assert_uint_eq(in->metadata.n, 0);
	ck_assert_int_eq(in->lease.registration_ts, 1699999900000LL);
	ck_assert_int_eq(in->action_type, ACTION_ADDED);
	applications_free(as);
	free(data);
}
END_TEST

START_TEST(test_roundtrip_repl_list)
{
	size_t			 len;
	char			*data, *cause = NULL;
	struct repl_list	 l = { 0 };
	struct buf		 b;

	data = read_fixture("replication-batch-request.json", &len);
	ck_assert_int_eq(json_decode_repl_list(data, len, &l, NOW, &cause), 0);
	ck_assert_uint_eq(l.n, 5);
	ck_assert_int_eq(l.items[0].action, REPL_REGISTER);
	ck_assert_ptr_nonnull(l.items[0].info);
	ck_assert_str_eq(l.items[0].info->host_name, "host-a.example.com");
	ck_assert_int_eq(l.items[0].last_dirty_ts, 1699999995000LL);
	ck_assert_int_eq(l.items[1].action, REPL_HEARTBEAT);
	ck_assert(l.items[1].has_overridden);
	ck_assert_int_eq(l.items[1].overridden_status, STATUS_OUT_OF_SERVICE);
	ck_assert_int_eq(l.items[2].action, REPL_STATUS_UPDATE);
	ck_assert(!l.items[2].has_overridden);
	ck_assert_int_eq(l.items[3].action, REPL_CANCEL);
	ck_assert(!l.items[3].has_last_dirty);
	ck_assert(!l.items[3].has_status);
	ck_assert_str_eq(l.items[3].app_name, "PAYMENT");
	ck_assert_int_eq(l.items[4].action, REPL_DELETE_STATUS_OVERRIDE);
	ck_assert_int_eq(l.items[4].status, STATUS_UNKNOWN);
	buf_init(&b, 0);
	json_encode_repl_list(&b, &l);
	ck_assert_str_eq(b.data, data);
	repl_list_clear(&l);
	ck_assert_uint_eq(l.n, 0);
	buf_free(&b);
	free(data);
}
END_TEST

START_TEST(test_roundtrip_repl_response)
{
	size_t			 len;
	char			*data, *cause = NULL;
	struct repl_response	 r = { 0 };
	struct buf		 b;

	data = read_fixture("replication-batch-response.json", &len);
	ck_assert_int_eq(json_decode_repl_response(data, len, &r, NOW, &cause),
	    0);
	ck_assert_uint_eq(r.n, 5);
	ck_assert_int_eq(r.items[0].status_code, 200);
	ck_assert_ptr_null(r.items[0].entity);
	ck_assert_int_eq(r.items[1].status_code, 409);
	ck_assert_ptr_nonnull(r.items[1].entity);
	ck_assert_int_eq(r.items[1].entity->last_dirty_ts, 1700000140000LL);
	ck_assert_int_eq(r.items[3].status_code, 404);
	buf_init(&b, 0);
	json_encode_repl_response(&b, &r);
	ck_assert_str_eq(b.data, data);
	repl_response_clear(&r);
	buf_free(&b);
	free(data);
}
END_TEST

START_TEST(test_repl_actions)
{
	enum repl_action	a;

	ck_assert_str_eq(repl_action_name(REPL_DELETE_STATUS_OVERRIDE),
	    "DeleteStatusOverride");
	ck_assert_int_eq(repl_action_parse("StatusUpdate", &a), 0);
	ck_assert_int_eq(a, REPL_STATUS_UPDATE);
	ck_assert_int_eq(repl_action_parse("heartbeat", &a), -1);
	ck_assert_int_eq(repl_action_parse("", &a), -1);
}
END_TEST

START_TEST(test_repl_bad)
{
	struct repl_list	 l = { 0 };
	struct buf		 b;
	char			*cause = NULL;
	const char		*s;
	int			 i;

	s = "{\"replicationList\":[{\"appName\":\"A\",\"action\":\"Nope\"}]}";
	ck_assert_int_eq(json_decode_repl_list(s, strlen(s), &l, NOW, &cause),
	    -1);
	ck_assert_ptr_nonnull(strstr(cause, "invalid action"));
	ck_assert_uint_eq(l.n, 0);
	free(cause);
	cause = NULL;

	s = "{\"replicationList\":[{\"appName\":\"A\",\"instanceInfo\":"
	    "{\"hostName\":\"h\"}}]}";
	ck_assert_int_eq(json_decode_repl_list(s, strlen(s), &l, NOW, &cause),
	    -1);
	ck_assert_ptr_nonnull(strstr(cause, "missing action"));
	free(cause);
	cause = NULL;

	/* Truncated inside an item's instanceInfo: no leak. */
	s = "{\"replicationList\":[{\"instanceInfo\":{\"hostName\":\"h\"";
	ck_assert_int_eq(json_decode_repl_list(s, strlen(s), &l, NOW, &cause),
	    -1);
	free(cause);
	cause = NULL;

	s = "{\"foo\":1}";
	ck_assert_int_eq(json_decode_repl_list(s, strlen(s), &l, NOW, &cause),
	    -1);
	ck_assert_str_eq(cause, "missing replicationList");
	free(cause);
	cause = NULL;

	/* More than REPL_MAX_ITEMS items is refused. */
	buf_init(&b, 0);
	buf_adds(&b, "{\"replicationList\":[");
	for (i = 0; i <= REPL_MAX_ITEMS; i++)
		buf_addf(&b, "%s{\"id\":\"x\",\"action\":\"Cancel\"}",
		    i > 0 ? "," : "");
	buf_adds(&b, "]}");
	ck_assert_int_eq(json_decode_repl_list(b.data, b.len, &l, NOW, &cause),
	    -1);
	ck_assert_ptr_nonnull(strstr(cause, "too many"));
	ck_assert_uint_eq(l.n, 0);
	free(cause);
	buf_free(&b);
}
END_TEST

START_TEST(test_register_java)
{
	size_t		 len;
	char		*data, *cause = NULL;
	struct instance	*in;

	data = read_fixture("register-request-java-client.json", &len);
	in = json_decode_instance(data, len, NOW, &cause);
	ck_assert_msg(in != NULL, "%s", cause);
	ck_assert_str_eq(in->instance_id, ID_A);
	ck_assert_str_eq(in->host_name, "host-a.example.com");
	ck_assert_str_eq(in->app, "ORDER-SERVICE");
	ck_assert_str_eq(in->ip_addr, "10.0.0.11");
	ck_assert_ptr_null(in->sid);
	ck_assert_int_eq(in->status, STATUS_UP);
	ck_assert_int_eq(in->overridden_status, STATUS_UNKNOWN);
	ck_assert_int_eq(in->port, 8080);
	ck_assert_int_eq(in->port_enabled, 1);
	ck_assert_int_eq(in->secure_port, 443);
	ck_assert_int_eq(in->secure_port_enabled, 0);
	ck_assert_int_eq(in->country_id, 1);
	ck_assert(in->has_dc);
	ck_assert_int_eq(in->dc_name, DC_MYOWN);
	ck_assert(in->has_lease);
	ck_assert_int_eq(in->lease.renewal_interval_secs, 30);
	ck_assert_int_eq(in->lease.duration_secs, 90);
	ck_assert_int_eq(in->lease.registration_ts, 0);
	ck_assert_uint_eq(in->metadata.n, 1);
	ck_assert_str_eq(kvlist_get(&in->metadata, "management.port"), "8080");
	ck_assert_str_eq(in->vip_address, "order-service");
	ck_assert_ptr_null(in->secure_health_check_url);
	ck_assert_int_eq(in->is_coordinating, 0);
	ck_assert_int_eq(in->last_updated_ts, 1699999995000LL);
	ck_assert_int_eq(in->last_dirty_ts, 1699999995000LL);
	ck_assert_int_eq(in->action_type, ACTION_NONE);
	instance_free(in);
	free(data);
}
END_TEST

START_TEST(test_register_spring)
{
	size_t		 len;
	char		*data, *cause = NULL;
	struct instance	*in;
	struct buf	 b, b2;

	data = read_fixture("register-request-spring-cloud-client.json", &len);
	in = json_decode_instance(data, len, NOW, &cause);
	ck_assert_msg(in != NULL, "%s", cause);
	ck_assert_str_eq(in->instance_id, ID_A);
	ck_assert_str_eq(in->host_name, "host-a.example.com");
	ck_assert_ptr_null(in->app_group_name);
	ck_assert_ptr_null(in->sid);
	ck_assert_ptr_null(in->asg_name);
	ck_assert_ptr_null(in->secure_health_check_url);
	ck_assert_int_eq(in->action_type, ACTION_NONE);
	ck_assert_int_eq(in->port, 8080);
	ck_assert_int_eq(in->port_enabled, 1);
	ck_assert_int_eq(in->secure_port, 443);
	ck_assert_int_eq(in->secure_port_enabled, 0);
	ck_assert_int_eq(in->is_coordinating, 0);
	ck_assert_int_eq(in->last_updated_ts, 1699999995000LL);
	ck_assert_int_eq(in->last_dirty_ts, 1699999995000LL);
	ck_assert_str_eq(kvlist_get(&in->metadata, "management.port"), "8080");

	/* Both client flavours describe the same registration. */
	buf_init(&b, 0);
	json_encode_instance(&b, in, CODEC_FULL);
	instance_free(in);
	free(data);
	data = read_fixture("register-request-java-client.json", &len);
	in = json_decode_instance(data, len, NOW, &cause);
	ck_assert_ptr_nonnull(in);
	buf_init(&b2, 0);
	json_encode_instance(&b2, in, CODEC_FULL);
	ck_assert_str_eq(b.data, b2.data);
	instance_free(in);
	buf_free(&b);
	buf_free(&b2);
	free(data);
}
END_TEST

START_TEST(test_spring_instance_id)
{
	struct instance	*in;

	in = decode_ok("{\"instance\":{\"hostName\":\"h1\",\"app\":\"a\","
	    "\"metadata\":{\"instanceId\":\"a:8080\"}}}");
	ck_assert_str_eq(in->instance_id, "h1:a:8080");
	instance_free(in);

	in = decode_ok("{\"instance\":{\"instanceId\":\"\",\"hostName\":\"h1\","
	    "\"metadata\":{\"instanceId\":\"h1-x:1\"}}}");
	ck_assert_str_eq(in->instance_id, "h1-x:1");
	instance_free(in);

	/* An explicit instanceId wins. */
	in = decode_ok("{\"instance\":{\"instanceId\":\"keep\","
	    "\"hostName\":\"h1\",\"metadata\":{\"instanceId\":\"x\"}}}");
	ck_assert_str_eq(in->instance_id, "keep");
	instance_free(in);

	/* Metadata may come before hostName. */
	in = decode_ok("{\"metadata\":{\"instanceId\":\"x\"},"
	    "\"hostName\":\"h2\"}");
	ck_assert_str_eq(in->instance_id, "h2:x");
	instance_free(in);

	in = decode_ok("{\"instance\":{\"hostName\":\"h1\","
	    "\"metadata\":{\"instanceId\":\"\"}}}");
	ck_assert_ptr_null(in->instance_id);
	ck_assert_str_eq(instance_id(in), "h1");
	instance_free(in);
}
END_TEST

START_TEST(test_lenient)
{
	struct instance		*in;
	struct application	*a;
	struct applications	*as;
	char			*cause = NULL;
	const char		*s;

	in = decode_ok("{\"instance\":{\"unknown\":{\"deep\":[1,{\"x\":[]}]},"
	    "\"app\":\"order-service\",\"appGroupName\":\"grp\","
	    "\"overriddenstatus\":\"OUT_OF_SERVICE\",\"status\":\"up\","
	    "\"port\":{\"@enabled\":false,\"$\":\"81\"},"
	    "\"securePort\":{\"$\":444,\"@enabled\":true},"
	    "\"countryId\":\"3\",\"other\":[[],{}],"
	    "\"isCoordinatingDiscoveryServer\":\"true\","
	    "\"lastDirtyTimestamp\":\"12\",\"lastUpdatedTimestamp\":13,"
	    "\"metadata\":{\"@class\":\"java.util.Collections$EmptyMap\"},"
	    "\"leaseInfo\":{\"durationInSecs\":0,\"renewalIntervalInSecs\":-1,"
	    "\"renewalTimestamp\":\"77\",\"x\":{}},"
	    "\"actionType\":\"WHATEVER\",\"sid\":\"s-1\",\"hostName\":\"h\"},"
	    "\"trailer\":{\"a\":[1]}}");
	ck_assert_str_eq(in->app, "ORDER-SERVICE");
	ck_assert_str_eq(in->app_group_name, "GRP");
	ck_assert_int_eq(in->status, STATUS_UNKNOWN);	/* case-sensitive */
	ck_assert_int_eq(in->overridden_status, STATUS_OUT_OF_SERVICE);
	ck_assert_int_eq(in->port, 81);
	ck_assert_int_eq(in->port_enabled, 0);
	ck_assert_int_eq(in->secure_port, 444);
	ck_assert_int_eq(in->secure_port_enabled, 1);
	ck_assert_int_eq(in->country_id, 3);
	ck_assert_int_eq(in->is_coordinating, 1);
	ck_assert_int_eq(in->last_dirty_ts, 12);
	ck_assert_int_eq(in->last_updated_ts, 13);
	ck_assert_uint_eq(in->metadata.n, 0);
	ck_assert_int_eq(in->lease.duration_secs, 90);
	ck_assert_int_eq(in->lease.renewal_interval_secs, 30);
	ck_assert_int_eq(in->lease.last_renewal_ts, 77);
	ck_assert_int_eq(in->action_type, ACTION_NONE);
	ck_assert_str_eq(in->sid, "s-1");
	ck_assert_str_eq(in->host_name, "h");
	instance_free(in);

	/* Defaults for absent fields (§4.1.8). */
	in = decode_ok("{\"hostName\":\"bare\"}");
	ck_assert_str_eq(in->host_name, "bare");
	ck_assert_int_eq(in->status, STATUS_UP);
	ck_assert_int_eq(in->port, 7001);
	ck_assert_int_eq(in->port_enabled, 1);
	ck_assert_int_eq(in->secure_port, 7002);
	ck_assert_int_eq(in->secure_port_enabled, 0);
	ck_assert(!in->has_lease);
	ck_assert(!in->has_dc);
	ck_assert_int_eq(in->last_updated_ts, NOW);	/* the injected time */
	ck_assert_int_eq(in->last_dirty_ts, NOW);
	instance_free(in);

	/* A single object where an array is usual. */
	s = "{\"application\":{\"instance\":{\"hostName\":\"h\",\"app\":\"x\"},"
	    "\"name\":\"x\"}}";
	a = json_decode_application(s, strlen(s), NOW, &cause);
	ck_assert_msg(a != NULL, "%s", cause);
	ck_assert_str_eq(a->name, "X");
	ck_assert_uint_eq(a->n, 1);
	application_free(a);

	s = "{\"applications\":{\"application\":{\"name\":\"y\",\"instance\":"
	    "[{\"hostName\":\"h1\"},{\"hostName\":\"h2\"}]},"
	    "\"versions__delta\":5,\"apps__hashcode\":\"UP_2_\"}}";
	as = json_decode_applications(s, strlen(s), NOW, &cause);
	ck_assert_msg(as != NULL, "%s", cause);
	ck_assert_int_eq(as->versions_delta, 5);
	ck_assert_uint_eq(as->n, 1);
	ck_assert_uint_eq(applications_count(as), 2);
	applications_free(as);

	/* Absent version stays -1. */
	s = "{\"applications\":{\"application\":[]}}";
	as = json_decode_applications(s, strlen(s), NOW, &cause);
	ck_assert_ptr_nonnull(as);
	ck_assert_int_eq(as->versions_delta, -1);
	ck_assert_ptr_null(as->apps_hashcode);
	applications_free(as);
}
END_TEST

START_TEST(test_bad_inputs)
{
	char		*big, *cause;
	struct buf	 b;
	size_t		 i, n;

	/* Truncated in many places: every prefix of a fixture must fail. */
	{
		size_t	 len;
		char	*data = read_fixture("instance.json", &len);

		for (n = 0; n < len; n += 7) {
			cause = decode_bad(data, n);
			free(cause);
		}
		free(data);
	}
	assert_bad("", "cannot parse request body");
	assert_bad("{\"instance\":{\"hostName\":\"h\"", "premature EOF");
	assert_bad("{\"instance\":{\"hostName\":\"\xff\xfe\"}}",
	    "cannot parse request body");
	/* Well-formed bytes, invalid UTF-8: overlong '/', a surrogate. */
	assert_bad("{\"instance\":{\"hostName\":\"fz\xc0\xaf" "m\"}}",
	    "not valid UTF-8");
	assert_bad("{\"instance\":{\"\xed\xa0\x80\":\"x\"}}",
	    "not valid UTF-8");
	assert_bad("[1,2]", "expected a JSON object");
	assert_bad("\"str\"", "expected a JSON object");
	assert_bad("42", "expected a JSON object");
	assert_bad("{}", "missing instance");
	assert_bad("{\"x\":1}", "missing instance");
	assert_bad("{\"instance\":{\"port\":[8080]}}", "invalid port");
	assert_bad("{\"instance\":{\"port\":8080}}", "invalid port");
	assert_bad("{\"instance\":{\"port\":{\"$\":\"eighty\"}}}",
	    "invalid port");
	assert_bad("{\"instance\":{\"lastDirtyTimestamp\":\"abc\"}}",
	    "invalid lastDirtyTimestamp");
	assert_bad("{\"instance\":{\"lastDirtyTimestamp\":1.5}}",
	    "invalid lastDirtyTimestamp");
	assert_bad("{\"instance\":{\"lastUpdatedTimestamp\":"
	    "\"99999999999999999999\"}}", "invalid lastUpdatedTimestamp");
	assert_bad("{\"instance\":{\"countryId\":true}}", "invalid countryId");
	assert_bad("{\"instance\":{\"dataCenterInfo\":{\"@class\":"
	    "\"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo\","
	    "\"name\":\"myown\"}}}", "invalid dataCenterInfo name");
	assert_bad("{\"instance\":{\"metadata\":[]}}", "invalid metadata");
	assert_bad("{\"instance\":{\"metadata\":{\"a\":{\"b\":1}}}}",
	    "invalid a");
	assert_bad("{\"instance\":{\"hostName\":\"a\\u0000b\"}}", "NUL");
	/* Past the first eight bytes too (the plain-ASCII scan's words). */
	assert_bad("{\"instance\":{\"hostName\":\"abcdefghij\\u0000b\"}}",
	    "NUL");
	assert_bad("{\"instance\":{\"hostName\":\"abcdefghij\xc0\xaf" "m\"}}",
	    "not valid UTF-8");
	assert_bad("{\"instance\":{\"abcdefghij\\u0000\":\"x\"}}", "NUL");
	assert_bad("{\"instance\":{\"hostName\":\"h\"}} {}",
	    "cannot parse request body");
	assert_bad("{\"instance\":{\"hostName\":\"h\"}}}",
	    "cannot parse request body");
	assert_bad("{\"instance\":{\"leaseInfo\":{\"durationInSecs\":\"x\"}}}",
	    "invalid leaseInfo");
	assert_bad("{\"instance\":{\"leaseInfo\":{\"evictionTimestamp\":[]}}}",
	    "invalid evictionTimestamp");
	/* Metadata with a failing later field: everything is freed. */
	assert_bad("{\"instance\":{\"metadata\":{\"a\":\"1\",\"b\":\"2\"},"
	    "\"dataCenterInfo\":{\"name\":\"Mars\"}}}", "dataCenterInfo");

	/* Depth bomb, both as arrays and objects. */
	buf_init(&b, 0);
	for (i = 0; i < 100000; i++)
		buf_addc(&b, '[');
	assert_bad(b.data, "expected a JSON object");
	buf_reset(&b);
	buf_adds(&b, "{\"instance\":");
	for (i = 0; i < 100000; i++)
		buf_adds(&b, "{\"x\":[");
	assert_bad(b.data, "nesting too deep");
	buf_free(&b);

	/* A 10 MB string. */
	n = 10 * 1024 * 1024;
	big = xmalloc(n + 64);
	strcpy(big, "{\"instance\":{\"hostName\":\"");
	i = strlen(big);
	memset(big + i, 'a', n);
	strcpy(big + i + n, "\"}}");
	assert_bad(big, "string too long");
	/* Same size as a key. */
	strcpy(big, "{\"instance\":{\"");
	i = strlen(big);
	memset(big + i, 'k', n);
	strcpy(big + i + n, "\":1}}");
	assert_bad(big, "string too long");
	free(big);

	/* Too many metadata entries. */
	buf_init(&b, 0);
	buf_adds(&b, "{\"instance\":{\"metadata\":{");
	for (i = 0; i <= INSTANCE_MAX_METADATA; i++)
		buf_addf(&b, "%s\"k%zu\":\"v\"", i > 0 ? "," : "", i);
	buf_adds(&b, "}}}");
	assert_bad(b.data, "too many metadata entries");
	buf_free(&b);

	/* Exactly the maximum is fine; a repeated key is refused. */
	buf_init(&b, 0);
	buf_adds(&b, "{\"instance\":{\"metadata\":{");
	for (i = 0; i < INSTANCE_MAX_METADATA; i++)
		buf_addf(&b, "%s\"k%zu\":\"v\"", i > 0 ? "," : "", i);
	{
		struct buf	 b2;
		struct instance	*in;

		buf_init(&b2, 0);
		buf_add(&b2, b.data, b.len);
		buf_adds(&b2, ",\"k0\":\"again\"}}}");
		assert_bad(b2.data, "duplicate metadata key k0");
		buf_free(&b2);
		buf_adds(&b, "}}}");
		in = decode_ok(b.data);
		ck_assert_uint_eq(in->metadata.n, INSTANCE_MAX_METADATA);
		instance_free(in);
	}
	buf_free(&b);
}
END_TEST

/* Decode a NUL-terminated replication list. */
static int
decode_repl_str(const char *s, struct repl_list *l, char **cause)
{
	return (json_decode_repl_list(s, strlen(s), l, NOW, cause));
}

/*
 * Typed fields take their type (or the numeric and boolean strings the
 * Java codecs write), keys are not repeated, surrogates come in pairs and
 * timestamps are times: anything else is refused with a reason.
 */
START_TEST(test_strict_types)
{
	static const struct {
		const char	*doc;
		const char	*want;
	} bad[] = {
		{ "{\"instance\":{\"status\":1}}", "invalid status" },
		{ "{\"instance\":{\"status\":true}}", "invalid status" },
		{ "{\"instance\":{\"overriddenStatus\":0}}",
		    "invalid overriddenStatus" },
		{ "{\"instance\":{\"countryId\":\"one\"}}", "invalid countryId" },
		{ "{\"instance\":{\"port\":{\"$\":\"http\"}}}", "invalid port" },
		{ "{\"instance\":{\"port\":{\"$\":80,\"@enabled\":1}}}",
		    "invalid @enabled" },
		{ "{\"instance\":{\"port\":{\"$\":80,\"@enabled\":\"yes\"}}}",
		    "invalid @enabled" },
		{ "{\"instance\":{\"port\":{\"$\":80,\"@enabled\":\"tru\"}}}",
		    "invalid @enabled" },
		{ "{\"instance\":{\"port\":{\"$\":80,\"@enabled\":\"truE \"}}}",
		    "invalid @enabled" },
		{ "{\"instance\":{\"port\":{\"$\":80,\"@enabled\":\"f@lse\"}}}",
		    "invalid @enabled" },
		{ "{\"instance\":{\"port\":{\"$\":80,\"@enabled\":\"falsE1\"}}}",
		    "invalid @enabled" },
		{ "{\"instance\":{\"port\":{\"$\":80,\"@enabled\":\"t\\u0012ue\"}}}",
		    "invalid @enabled" },
		{ "{\"instance\":{\"isCoordinatingDiscoveryServer\":\"fals\\u0005\"}}",
		    "invalid isCoordinatingDiscoveryServer" },
		{ "{\"instance\":{\"isCoordinatingDiscoveryServer\":0}}",
		    "invalid isCoordinatingDiscoveryServer" },
		{ "{\"instance\":{\"actionType\":3}}", "invalid actionType" },
		{ "{\"instance\":{\"lastDirtyTimestamp\":-1}}",
		    "invalid lastDirtyTimestamp" },
		{ "{\"instance\":{\"lastDirtyTimestamp\":\"-5\"}}",
		    "invalid lastDirtyTimestamp" },
		{ "{\"instance\":{\"lastDirtyTimestamp\":253402300800000}}",
		    "invalid lastDirtyTimestamp" },
		{ "{\"instance\":{\"lastUpdatedTimestamp\":"
		    "\"99999999999999999999\"}}", "invalid lastUpdatedTimestamp" },
		{ "{\"instance\":{\"leaseInfo\":{\"registrationTimestamp\":-7}}}",
		    "invalid leaseInfo.registrationTimestamp" },
		{ "{\"instance\":{\"status\":\"UP\",\"status\":\"DOWN\"}}",
		    "duplicate key status" },
		{ "{\"instance\":{\"hostName\":\"a\"},\"instance\":"
		    "{\"hostName\":\"b\"}}", "duplicate key instance" },
		{ "{\"instance\":{\"port\":{\"$\":1,\"$\":2}}}",
		    "duplicate key $" },
		{ "{\"instance\":{\"metadata\":{\"a\":\"1\",\"a\":\"2\"}}}",
		    "duplicate metadata key a" },
		{ "{\"instance\":{\"hostName\":\"a\\ud800\"}}", "surrogate" },
		{ "{\"instance\":{\"hostName\":\"a\\udc00b\"}}", "surrogate" },
		{ "{\"instance\":{\"hostName\":\"a\\ud800\\u0041\"}}",
		    "surrogate" },
		{ "{\"instance\":{\"hostName\":\"\\ud800\\ud800\\udc00\"}}",
		    "surrogate" },
	};
	struct instance	*in;
	struct repl_list l;
	char		*cause = NULL;
	size_t		 i;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_bad(bad[i].doc, bad[i].want);

	/* What real clients send still decodes. */
	in = decode_ok("{\"instance\":{\"hostName\":\"h\\ud83d\\ude00\","
	    "\"status\":\"STRANGE\",\"port\":{\"$\":\"8080\","
	    "\"@enabled\":\"TRUE\"},\"isCoordinatingDiscoveryServer\":"
	    "\"false\",\"lastDirtyTimestamp\":\"0\",\"unknown\":1,"
	    "\"unknown\":2,\"metadata\":{\"@class\":\"x\",\"@class\":\"y\"}}}");
	ck_assert_str_eq(in->host_name, "h\xf0\x9f\x98\x80");
	ck_assert_int_eq(in->status, STATUS_UNKNOWN);
	ck_assert_int_eq(in->port, 8080);
	ck_assert_int_eq(in->port_enabled, 1);
	ck_assert_int_eq(in->last_dirty_ts, 0);
	instance_free(in);
	/* Booleans as strings in any case. */
	in = decode_ok("{\"instance\":{\"port\":{\"$\":1,\"@enabled\":"
	    "\"fAlSe\"},\"securePort\":{\"$\":2,\"@enabled\":\"tRuE\"},"
	    "\"isCoordinatingDiscoveryServer\":\"TRUE\"}}");
	ck_assert_int_eq(in->port_enabled, 0);
	ck_assert_int_eq(in->secure_port_enabled, 1);
	ck_assert_int_eq(in->is_coordinating, 1);
	instance_free(in);
	/* An escaped backslash before a u is no escape. */
	in = decode_ok("{\"instance\":{\"hostName\":\"a\\\\ud800\"}}");
	ck_assert_str_eq(in->host_name, "a\\ud800");
	instance_free(in);

	/* The replication batch decoder holds to the same rules. */
	memset(&l, 0, sizeof l);
	ck_assert_int_ne(decode_repl_str("{\"replicationList\":[{"
	    "\"action\":\"Heartbeat\",\"appName\":\"A\",\"id\":\"i\","
	    "\"status\":7}]}", &l, &cause), 0);
	ck_assert_ptr_nonnull(strstr(cause, "invalid status"));
	free(cause);
	cause = NULL;
	repl_list_clear(&l);
	memset(&l, 0, sizeof l);
	ck_assert_int_ne(decode_repl_str("{\"replicationList\":[{"
	    "\"action\":\"Cancel\",\"action\":\"Register\",\"appName\":"
	    "\"A\",\"id\":\"i\",\"lastDirtyTimestamp\":-3}]}", &l,
	    &cause), 0);
	ck_assert_ptr_nonnull(strstr(cause, "duplicate key action"));
	free(cause);
	cause = NULL;
	repl_list_clear(&l);
	memset(&l, 0, sizeof l);
	ck_assert_int_ne(decode_repl_str("{\"replicationList\":[{"
	    "\"action\":\"Cancel\",\"appName\":\"A\",\"id\":\"i\","
	    "\"lastDirtyTimestamp\":-3}]}", &l, &cause), 0);
	ck_assert_ptr_nonnull(strstr(cause, "invalid lastDirtyTimestamp"));
	free(cause);
	repl_list_clear(&l);
}
END_TEST

START_TEST(test_bad_containers)
{
	struct applications	*as;
	struct application	*a;
	char			*cause = NULL;
	const char		*s;

	s = "{\"applications\":{\"application\":[{\"name\":\"A\",\"instance\":"
	    "[{\"hostName\":\"h\",\"port\":[]}]}]}}";
	as = json_decode_applications(s, strlen(s), NOW, &cause);
	ck_assert_ptr_null(as);
	ck_assert_ptr_nonnull(strstr(cause, "invalid port"));
	free(cause);
	cause = NULL;

	s = "{\"applications\":{\"application\":[1]}}";
	as = json_decode_applications(s, strlen(s), NOW, &cause);
	ck_assert_ptr_null(as);
	free(cause);
	cause = NULL;

	s = "{\"applications\":{\"versions__delta\":\"x\"}}";
	as = json_decode_applications(s, strlen(s), NOW, &cause);
	ck_assert_ptr_null(as);
	ck_assert_ptr_nonnull(strstr(cause, "versions__delta"));
	free(cause);
	cause = NULL;

	s = "{\"apps\":{}}";
	as = json_decode_applications(s, strlen(s), NOW, &cause);
	ck_assert_ptr_null(as);
	ck_assert_str_eq(cause, "missing applications");
	free(cause);
	cause = NULL;

	/* Truncated mid-instance of a registry: no leak. */
	s = "{\"applications\":{\"application\":[{\"name\":\"A\",\"instance\":"
	    "[{\"hostName\":\"h\",\"metadata\":{\"a\":\"b\"";
	as = json_decode_applications(s, strlen(s), NOW, &cause);
	ck_assert_ptr_null(as);
	free(cause);
	cause = NULL;

	s = "{\"application\":{\"name\":\"A\",\"instance\":[{\"hostName\":";
	a = json_decode_application(s, strlen(s), NOW, &cause);
	ck_assert_ptr_null(a);
	free(cause);
	cause = NULL;

	s = "{\"app\":{}}";
	a = json_decode_application(s, strlen(s), NOW, &cause);
	ck_assert_ptr_null(a);
	ck_assert_str_eq(cause, "missing application");
	free(cause);
}
END_TEST

START_TEST(test_escaping)
{
	struct buf	 b;
	struct instance	*in, *in2;
	char		*cause = NULL;

	buf_init(&b, 0);
	json_add_string(&b, "a\"b\\c/d\n\r\t\b\f\x01\x1f\x7f\xc3\xa9");
	ck_assert_str_eq(b.data,
	    "\"a\\\"b\\\\c/d\\n\\r\\t\\b\\f\\u0001\\u001F\x7f\xc3\xa9\"");
	buf_reset(&b);
	json_add_string(&b, "");
	ck_assert_str_eq(b.data, "\"\"");
	/* Each escape at every offset of the eight-byte plain scan. */
	{
		static const char	*esc[] = { "\"", "\\", "\n", "\x01" };
		static const char	*out[] = { "\\\"", "\\\\", "\\n",
		    "\\u0001" };
		char			 in_s[32], want[64];
		size_t			 i, j;

		for (j = 0; j < 4; j++) {
			for (i = 0; i < 20; i++) {
				memset(in_s, 'x', 20);
				in_s[20] = '\0';
				in_s[i] = esc[j][0];
				snprintf(want, sizeof want, "\"%.*s%s%s\"",
				    (int)i, in_s, out[j], in_s + i + 1);
				buf_reset(&b);
				json_add_string(&b, in_s);
				ck_assert_str_eq(b.data, want);
			}
		}
	}

	/* Escaped values decode back to the same bytes. */
	in = instance_new();
	in->host_name = xstrdup("h\"1\\\n");
	in->app = xstrdup("APP");
	in->ip_addr = xstrdup("1.2.3.4");
	kvlist_set(&in->metadata, "k\"ey", "v\x02lue\xe2\x82\xac");
	buf_reset(&b);
	json_encode_instance_root(&b, in);
	in2 = json_decode_instance(b.data, b.len, NOW, &cause);
	ck_assert_msg(in2 != NULL, "%s", cause);
	ck_assert_str_eq(in2->host_name, in->host_name);
	ck_assert_str_eq(kvlist_get(&in2->metadata, "k\"ey"),
	    "v\x02lue\xe2\x82\xac");
	instance_free(in);
	instance_free(in2);
	buf_free(&b);
}
END_TEST

/* A small instance for the encoder tests. */
static struct instance *
make_instance(const char *host, enum instance_status st)
{
	struct instance	*in = instance_new();

	in->instance_id = xstrdup(host);
	in->host_name = xstrdup(host);
	in->app = xstrdup("APP");
	in->ip_addr = xstrdup("10.0.0.1");
	in->status = st;
	in->port = 8080;
	in->has_dc = 1;
	in->last_updated_ts = 5;
	in->last_dirty_ts = 4;
	in->action_type = ACTION_ADDED;
	return (in);
}

START_TEST(test_encode_full_shapes)
{
	struct instance	*in = make_instance("h", STATUS_UP);
	struct buf	 b;

	buf_init(&b, 0);
	free(in->instance_id);
	in->instance_id = NULL;
	in->sid = xstrdup("unknown");
	in->action_type = ACTION_NONE;
	in->is_coordinating = 1;
	json_encode_instance(&b, in, CODEC_FULL);
	ck_assert_str_eq(b.data, "{\"hostName\":\"h\",\"app\":\"APP\","
	    "\"ipAddr\":\"10.0.0.1\",\"status\":\"UP\","
	    "\"overriddenStatus\":\"UNKNOWN\","
	    "\"port\":{\"$\":8080,\"@enabled\":\"true\"},"
	    "\"securePort\":{\"$\":7002,\"@enabled\":\"false\"},"
	    "\"countryId\":1,\"dataCenterInfo\":{\"@class\":"
	    "\"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo\","
	    "\"name\":\"MyOwn\"},"
	    "\"metadata\":{\"@class\":\"java.util.Collections$EmptyMap\"},"
	    "\"isCoordinatingDiscoveryServer\":\"true\","
	    "\"lastUpdatedTimestamp\":\"5\",\"lastDirtyTimestamp\":\"4\"}");

	/* A real sid is shown; Amazon with empty metadata gives {}. */
	free(in->sid);
	in->sid = xstrdup("s1");
	in->dc_name = DC_AMAZON;
	buf_reset(&b);
	json_encode_instance(&b, in, CODEC_FULL);
	ck_assert_ptr_nonnull(strstr(b.data, ",\"sid\":\"s1\",\"status\""));
	ck_assert_ptr_nonnull(strstr(b.data, "\"dataCenterInfo\":{\"@class\":"
	    "\"com.netflix.appinfo.AmazonInfo\",\"name\":\"Amazon\","
	    "\"metadata\":{}},"));
	instance_free(in);
	buf_free(&b);
}
END_TEST

START_TEST(test_encode_compact)
{
	struct instance		*in = make_instance("h", STATUS_DOWN);
	struct applications	*as;
	struct application	*a;
	struct buf		 b;

	in->dc_name = DC_AMAZON;
	kvlist_set(&in->dc_metadata, "ami-id", "ami-1");
	kvlist_set(&in->dc_metadata, "instance-id", "i-1");
	kvlist_set(&in->dc_metadata, "availability-zone", "az");
	kvlist_set(&in->metadata, "k", "v");
	in->vip_address = xstrdup("vip");
	in->home_page_url = xstrdup("http://x/");
	in->has_lease = 1;
	buf_init(&b, 0);
	json_encode_instance(&b, in, CODEC_COMPACT);
	ck_assert_str_eq(b.data, "{\"instanceId\":\"h\",\"app\":\"APP\","
	    "\"ipAddr\":\"10.0.0.1\",\"hostName\":\"h\",\"status\":\"DOWN\","
	    "\"dataCenterInfo\":{\"@class\":\"com.netflix.appinfo.AmazonInfo\","
	    "\"name\":\"Amazon\",\"metadata\":{\"instance-id\":\"i-1\","
	    "\"availability-zone\":\"az\"}},\"vipAddress\":\"vip\","
	    "\"lastUpdatedTimestamp\":5,\"actionType\":\"ADDED\","
	    "\"port\":{\"$\":8080,\"@enabled\":\"true\"},"
	    "\"securePort\":{\"$\":7002,\"@enabled\":\"false\"}}");

	as = applications_new();
	as->versions_delta = 3;
	as->apps_hashcode = xstrdup("DOWN_1_");
	a = application_new("app");
	application_add(a, in);
	applications_add(as, a);
	buf_reset(&b);
	json_encode_applications(&b, as, CODEC_COMPACT);
	ck_assert_ptr_nonnull(strstr(b.data, "{\"applications\":{\"application"
	    "\":[{\"name\":\"APP\",\"instance\":[{\"instanceId\":\"h\""));
	ck_assert_ptr_nonnull(strstr(b.data, "}]}],\"versions__delta\":\"3\","
	    "\"apps__hashcode\":\"DOWN_1_\"}}"));
	ck_assert_uint_eq(b.data[b.len - 1], '}');
	ck_assert_ptr_null(strstr(b.data, "overriddenStatus"));
	ck_assert_ptr_null(strstr(b.data, "leaseInfo"));
	ck_assert_ptr_null(strstr(b.data, "homePageUrl"));
	ck_assert_ptr_null(strstr(b.data, "ami-id"));
	applications_free(as);
	buf_free(&b);
}
END_TEST

START_TEST(test_stitching)
{
	struct applications	*as = applications_new();
	struct application	*a1, *a2;
	struct buf		 whole, st;
	size_t			 i, j;
	int			 flags;

	a1 = application_new("one");
	application_add(a1, make_instance("h1", STATUS_UP));
	application_add(a1, make_instance("h2", STATUS_DOWN));
	a2 = application_new("two");
	applications_add(as, a1);
	applications_add(as, a2);
	as->versions_delta = 9;		/* hash code stays NULL: "" */
	buf_init(&whole, 0);
	buf_init(&st, 0);
	for (flags = CODEC_FULL; flags <= CODEC_COMPACT; flags++) {
		buf_reset(&whole);
		buf_reset(&st);
		json_encode_applications(&whole, as, flags);
		json_apps_open(&st, flags, 9, "");
		for (i = 0; i < as->n; i++) {
			if (i > 0)
				buf_addc(&st, ',');
			json_app_open(&st, as->apps[i]->name);
			for (j = 0; j < as->apps[i]->n; j++) {
				if (j > 0)
					buf_addc(&st, ',');
				json_encode_instance(&st,
				    as->apps[i]->instances[j], flags);
			}
			json_app_close(&st);
		}
		json_apps_close(&st, flags, 9, "");
		ck_assert_str_eq(whole.data, st.data);
		ck_assert_ptr_nonnull(strstr(whole.data,
		    "\"apps__hashcode\":\"\""));
		ck_assert_ptr_nonnull(strstr(whole.data,
		    "{\"name\":\"TWO\",\"instance\":[]}"));
	}
	applications_free(as);
	buf_free(&whole);
	buf_free(&st);
}
END_TEST

/*
 * Items of one batch are decoded apart: a field the first item had is
 * absent from a second that lacks it, and every name lands intact in the
 * list's name blocks, across block boundaries and in a block of its own
 * for a name longer than one; a cleared list decodes a batch again.
 */
START_TEST(test_repl_items_apart)
{
	struct repl_list	 l = { 0 };
	struct buf		 b;
	char			*cause = NULL, *longid, name[64];
	int			 i, round;

	ck_assert_int_eq(decode_repl_str("{\"replicationList\":[{"
	    "\"appName\":\"order\",\"id\":\"i-1\",\"lastDirtyTimestamp\":7,"
	    "\"status\":\"DOWN\",\"overriddenStatus\":\"OUT_OF_SERVICE\","
	    "\"instanceInfo\":{\"hostName\":\"h\",\"app\":\"ORDER\"},"
	    "\"action\":\"Register\"},{\"appName\":\"pay\",\"id\":\"i-2\","
	    "\"action\":\"Heartbeat\"}]}", &l, &cause), 0);
	ck_assert_uint_eq(l.n, 2);
	ck_assert_str_eq(l.items[0].app_name, "ORDER");
	ck_assert_str_eq(l.items[0].id, "i-1");
	ck_assert(l.items[0].has_last_dirty && l.items[0].has_status &&
	    l.items[0].has_overridden);
	ck_assert_int_eq(l.items[0].status, STATUS_DOWN);
	ck_assert_ptr_nonnull(l.items[0].info);
	ck_assert_str_eq(l.items[1].app_name, "PAY");
	ck_assert_str_eq(l.items[1].id, "i-2");
	ck_assert(!l.items[1].has_last_dirty);
	ck_assert(!l.items[1].has_status);
	ck_assert(!l.items[1].has_overridden);
	ck_assert_ptr_null(l.items[1].info);
	ck_assert(l.items[0].decoded && l.items[1].decoded);
	repl_list_clear(&l);

	/* 400 items, names over several blocks, one id over a block. */
	longid = malloc(INSTANCE_MAX_STRING + 1);
	memset(longid, 'x', INSTANCE_MAX_STRING);
	longid[INSTANCE_MAX_STRING] = '\0';
	for (round = 0; round < 2; round++) {
		buf_init(&b, 0);
		buf_adds(&b, "{\"replicationList\":[");
		for (i = 0; i < 400; i++) {
			buf_addf(&b, "%s{\"appName\":\"app-%d-%d\",\"id\":\"%s\","
			    "\"action\":\"Cancel\"}", i > 0 ? "," : "", round,
			    i, i == 200 ? longid : "inst-with-a-longer-id");
		}
		buf_adds(&b, "]}");
		ck_assert_int_eq(json_decode_repl_list(b.data, b.len, &l, NOW,
		    &cause), 0);
		ck_assert_uint_eq(l.n, 400);
		for (i = 0; i < 400; i++) {
			snprintf(name, sizeof name, "APP-%d-%d", round, i);
			ck_assert_str_eq(l.items[i].app_name, name);
			ck_assert_str_eq(l.items[i].id, i == 200 ? longid :
			    "inst-with-a-longer-id");
		}
		buf_free(&b);
		repl_list_clear(&l);
		ck_assert_ptr_null(l.names);
	}
	free(longid);
}
END_TEST

/*
 * Longs parse as Long.parseLong does, from any number of digits: leading
 * zeros past 18 digits, both bounds of a long, one past either refused.
 */
START_TEST(test_long_bounds)
{
	static const struct {
		const char	*text;
		int		 ok;
		int64_t		 want;
	} cases[] = {
		{ "5", 1, 5 },
		{ "\"+5\"", 1, 5 },
		{ "\"0000000000000000000000000000042\"", 1, 42 },
		{ "999999999999999999", 1, 999999999999999999LL },
		{ "1000000000000000000", 1, 1000000000000000000LL },
		{ "9223372036854775807", 1, INT64_MAX },
		{ "-9223372036854775808", 1, INT64_MIN },
		{ "\"-0000000000000000000009223372036854775808\"", 1,
		    INT64_MIN },
		{ "9223372036854775808", 0, 0 },
		{ "-9223372036854775809", 0, 0 },
		{ "99999999999999999999", 0, 0 },
		{ "\"-\"", 0, 0 },
		{ "\"\"", 0, 0 },
		{ "\"12345678901234567x\"", 0, 0 },
		{ "\"1234567890123456789x\"", 0, 0 },
		{ "1.5", 0, 0 },
	};
	struct applications	*as;
	char			 doc[160], *cause;
	size_t			 i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		snprintf(doc, sizeof doc, "{\"applications\":{"
		    "\"versions__delta\":%s,\"application\":[]}}",
		    cases[i].text);
		cause = NULL;
		as = json_decode_applications(doc, strlen(doc), NOW, &cause);
		if (cases[i].ok) {
			ck_assert_msg(as != NULL, "%s: %s", cases[i].text,
			    cause);
			ck_assert_msg(as->versions_delta == cases[i].want,
			    "%s: got %lld", cases[i].text,
			    (long long)as->versions_delta);
		} else {
			ck_assert_msg(as == NULL, "%s accepted", cases[i].text);
			ck_assert_ptr_nonnull(strstr(cause, "versions__delta"));
		}
		applications_free(as);
		free(cause);
	}
}
END_TEST

/*
 * The UTF-8 and NUL check sees every byte of a value or a key, the last
 * few of a string longer than eight bytes too.
 */
START_TEST(test_text_tail)
{
	struct instance	*in;
	char		 doc[128];
	int		 n;

	for (n = 1; n <= 17; n++) {
		/* n-1 plain bytes, then a lone continuation byte. */
		snprintf(doc, sizeof doc, "{\"instance\":{\"hostName\":"
		    "\"%.*s\x80\"}}", n - 1, "abcdefghijklmnopq");
		assert_bad(doc, "not valid UTF-8");
		snprintf(doc, sizeof doc, "{\"instance\":{\"%.*s\xff\":1,"
		    "\"hostName\":\"h\"}}", n - 1, "abcdefghijklmnopq");
		assert_bad(doc, "not valid UTF-8");
		snprintf(doc, sizeof doc, "{\"instance\":{\"hostName\":"
		    "\"%.*s\\u0000\"}}", n - 1, "abcdefghijklmnopq");
		assert_bad(doc, "NUL");
		/* The same length ending in a two-byte character is fine. */
		snprintf(doc, sizeof doc, "{\"instance\":{\"hostName\":"
		    "\"%.*s\xc3\xa9\"}}", n - 1, "abcdefghijklmnopq");
		in = decode_ok(doc);
		ck_assert_uint_eq(strlen(in->host_name), (size_t)n + 1);
		instance_free(in);
	}
}
END_TEST

/* The codec suite. */
/* Whether s is NULL or lies, NUL and all, in the block [b, b + n). */
static int
in_block(const void *b, size_t n, const char *s)
{
	const char	*lo = b, *hi = lo + n;

	return (s == NULL || (s >= lo && s + strlen(s) < hi));
}

/*
 * in is one block, every pointer into it, and its size what
 * instance_stored_size says (allocator overhead aside); an unpacked copy
 * packed again costs the same and holds the same fields.
 */
static void
check_packed(const struct instance *in)
{
	const char		*f[] = { in->instance_id, in->host_name,
				    in->app, in->ip_addr, in->sid,
				    in->app_group_name, in->home_page_url,
				    in->status_page_url, in->health_check_url,
				    in->secure_health_check_url,
				    in->vip_address, in->secure_vip_address,
				    in->asg_name };
	const struct kvlist	*m[] = { &in->metadata, &in->dc_metadata };
	struct instance		*d, *p;
	struct buf		 a, b;
	size_t			 n, i, j;

	ck_assert(in->packed);
	n = instance_stored_size(in) - INSTANCE_ALLOC_OVERHEAD;
	ck_assert_uint_ge(n, sizeof *in);
	for (i = 0; i < sizeof f / sizeof f[0]; i++)
		ck_assert_msg(in_block(in, n, f[i]), "field %zu outside", i);
	for (j = 0; j < 2; j++) {
		ck_assert_uint_eq(m[j]->n, m[j]->cap);
		if (m[j]->n == 0)
			continue;
		ck_assert((const char *)m[j]->v >= (const char *)(in + 1));
		ck_assert_msg((uintptr_t)m[j]->v % _Alignof(struct kv) == 0,
		    "map %zu's array misaligned", j);
		ck_assert((const char *)(m[j]->v + m[j]->n) <=
		    (const char *)in + n);
		for (i = 0; i < m[j]->n; i++) {
			ck_assert(in_block(in, n, m[j]->v[i].key));
			ck_assert(in_block(in, n, m[j]->v[i].value));
		}
	}
	d = instance_dup(in);
	ck_assert(!d->packed);
	ck_assert_uint_gt(instance_stored_size(d), instance_stored_size(in));
	p = instance_pack(d);
	ck_assert_uint_eq(instance_stored_size(p), instance_stored_size(in));
	buf_init(&a, 0);
	buf_init(&b, 0);
	instance_dump(&a, in);
	instance_dump(&b, p);
	buf_addc(&a, '\0');
	buf_addc(&b, '\0');
	ck_assert_str_eq(a.data, b.data);
	buf_free(&a);
	buf_free(&b);
	instance_free(p);
	instance_free(d);
}

/* Every instance a fixture decodes to is checked by check_packed. */
static void
check_packed_doc(const char *name, const char *data, size_t len)
{
	struct applications	*as;
	struct instance		*in;
	struct repl_list	 rl;
	struct repl_response	 rr;
	size_t			 i, j, seen = 0, n = strlen(name);
	int			 xml;

	xml = n > 4 && strcmp(name + n - 4, ".xml") == 0;

	if (strstr(name, "batch-request") != NULL) {
		memset(&rl, 0, sizeof rl);
		ck_assert_int_eq(json_decode_repl_list(data, len, &rl, 1, NULL),
		    0);
		for (i = 0; i < rl.n; i++)
			if (rl.items[i].info != NULL) {
				check_packed(rl.items[i].info);
				seen++;
			}
		repl_list_clear(&rl);
	} else if (strstr(name, "batch-response") != NULL) {
		memset(&rr, 0, sizeof rr);
		ck_assert_int_eq(json_decode_repl_response(data, len, &rr, 1,
		    NULL), 0);
		for (i = 0; i < rr.n; i++)
			if (rr.items[i].entity != NULL) {
				check_packed(rr.items[i].entity);
				seen++;
			}
		repl_response_clear(&rr);
	} else if (strncmp(name, "applications", 12) == 0 ||
	    strncmp(name, "delta", 5) == 0) {
		ck_assert_ptr_nonnull(as = xml ? xml_decode_applications(data,
		    len, 1, NULL) : json_decode_applications(data, len, 1,
		    NULL));
		for (i = 0; i < as->n; i++)
			for (j = 0; j < as->apps[i]->n; j++) {
				check_packed(as->apps[i]->instances[j]);
				seen++;
			}
		applications_free(as);
		return;		/* applications-empty has none */
	} else if (strncmp(name, "application.", 12) == 0) {
		ck_assert_ptr_nonnull(as = applications_new());
		applications_add(as, xml ? xml_decode_application(data, len,
		    1, NULL) : json_decode_application(data, len, 1, NULL));
		ck_assert_ptr_nonnull(as->apps[0]);
		for (j = 0; j < as->apps[0]->n; j++, seen++)
			check_packed(as->apps[0]->instances[j]);
		applications_free(as);
	} else {
		ck_assert_ptr_nonnull(in = xml ? xml_decode_instance(data, len,
		    1, NULL) : json_decode_instance(data, len, 1, NULL));
		check_packed(in);
		instance_free(in);
		seen++;
	}
	ck_assert_msg(seen > 0, "%s: no instance", name);
}

/*
 * The packed decode, JSON and XML, reads every fixture (tests/data, the
 * Eureka payloads, and tests/data/decoded's edge cases: Spring's id
 * rewrite, an Amazon instance, strings longer than the arena's inline
 * bytes, 20 metadata entries, an instance object given twice) field for
 * field as the decoders before it did: instdump's text of both, the
 * older one kept as the golden file.
 */
START_TEST(test_packed_decode_golden)
{
	static const char *const names[] = {
		"application.json", "applications.json",
		"applications-empty.json", "delta.json", "instance.json",
		"register-request-java-client.json",
		"register-request-spring-cloud-client.json",
		"replication-batch-request.json",
		"replication-batch-response.json",
		"decoded/edges-spring-instance.json",
		"decoded/edges-amazon-instance.json",
		"decoded/edges-bare-instance.json",
		"decoded/edges-twice-instance.json",
		"decoded/edges-replication-batch-request.json",
		"application.xml", "applications.xml",
		"applications-empty.xml", "delta.xml", "instance.xml",
		"decoded/edges-amazon-instance.xml",
	};
	struct buf	 b;
	char		 golden[256];
	const char	*base;
	char		*data, *want;
	size_t		 i, len, wlen;

	for (i = 0; i < sizeof names / sizeof names[0]; i++) {
		base = strrchr(names[i], '/');
		base = base != NULL ? base + 1 : names[i];
		data = read_fixture(names[i], &len);
		snprintf(golden, sizeof golden, "decoded/%s.txt", base);
		want = read_fixture(golden, &wlen);
		buf_init(&b, 0);
		ck_assert_int_eq(fixture_dump(&b, base, data, len,
		    1234567890123LL), 0);
		buf_addc(&b, '\0');
		ck_assert_msg(strcmp(b.data, want) == 0, "%s: decoded "
		    "differently:\n%s", names[i], b.data);
		if (strstr(base, "empty") == NULL)
			check_packed_doc(base, data, len);
		buf_free(&b);
		free(want);
		free(data);
	}
}
END_TEST

/*
 * A packed instance is written through instance_unpack (instance.h): a
 * copy with its own allocations every mutator may change; freed, nothing
 * leaks and nothing inside the old block is freed (ASan's build checks).
 */
START_TEST(test_packed_unpack)
{
	static const char	*doc = "{\"instance\":{\"hostName\":\"h\","
	    "\"app\":\"a\",\"vipAddress\":\"v\",\"secureVipAddress\":\"v\","
	    "\"metadata\":{\"k\":\"1\",\"j\":\"2\"},\"dataCenterInfo\":"
	    "{\"name\":\"Amazon\",\"metadata\":{\"instance-id\":\"\"}}}}";
	struct instance		*in, *u;
	struct kvlist		 kv;

	ck_assert_ptr_nonnull(in = json_decode_instance(doc, strlen(doc), 1,
	    NULL));
	ck_assert(in->packed);
	/* The two equal VIPs share their bytes in the block. */
	ck_assert_ptr_eq(in->vip_address, in->secure_vip_address);
	ck_assert_ptr_eq(instance_unpack(NULL), NULL);
	u = instance_unpack(in);	/* in is freed */
	ck_assert(!u->packed);
	ck_assert_ptr_ne(u->vip_address, u->secure_vip_address);
	ck_assert_ptr_eq(instance_unpack(u), u);
	str_replace(&u->host_name, "h2");
	str_replace(&u->vip_address, NULL);
	str_replace(&u->secure_vip_address, "s");
	kvlist_set(&u->metadata, "k", "changed");
	kvlist_set(&u->dc_metadata, "instance-id", "i-1");
	memset(&kv, 0, sizeof kv);
	kvlist_copy(&kv, &u->metadata);
	kvlist_clear(&u->metadata);
	kvlist_copy(&u->metadata, &kv);
	kvlist_clear(&kv);
	instance_apply_defaults(u, 2);
	ck_assert_str_eq(u->host_name, "h2");
	ck_assert_str_eq(kvlist_get(&u->metadata, "k"), "changed");
	ck_assert_str_eq(kvlist_get(&u->metadata, "j"), "2");
	ck_assert_str_eq(instance_id(u), "i-1");	/* the Amazon id */
	instance_free(u);
}
END_TEST

/* Decode a replication list of one heartbeat; 0 or -1 with *cause set. */
static int
decode_repl_hb(const char *s, char **cause)
{
	struct repl_list	l = { 0 };
	int			rc;

	rc = json_decode_repl_list(s, strlen(s), &l, NOW, cause);
	ck_assert_int_eq(l.n, rc == 0 ? 1 : 0);
	repl_list_clear(&l);
	return (rc);
}

/* A thread decoding on its own handle, freed when the thread ends. */
static void *
parser_thread(void *arg)
{
	struct instance	*in = decode_ok(arg);

	instance_free(in);
	return (NULL);
}

/*
 * The thread's yajl handle is kept between documents: whatever the last
 * document was (good, truncated, empty, followed by another value,
 * larger than the handle is kept for, another kind of document), the
 * next one decodes as on a fresh handle, and an empty body or a second
 * value after the root is still refused.
 */
START_TEST(test_parser_reuse)
{
	static const char	*hb = "{\"replicationList\":[{\"appName\":\"A\","
	    "\"id\":\"i\",\"action\":\"Heartbeat\"}]}";
	const char		*good = "{\"instance\":{\"hostName\":\"h\","
	    "\"app\":\"a\",\"ipAddr\":\"1.2.3.4\"}}";
	struct instance		*in;
	struct buf		 big;
	pthread_t		 t;
	char			*cause = NULL;
	int			 i, n;

	for (i = 0; i < 3; i++) {
		in = decode_ok(good);
		ck_assert_str_eq(in->host_name, "h");
		instance_free(in);
	}
	assert_bad("", "premature EOF");
	assert_bad("  \n", "premature EOF");
	instance_free(decode_ok(good));
	assert_bad("{\"instance\":{\"hostName\":\"h\"}}{}",
	    "trailing garbage after the JSON document");
	assert_bad("{\"instance\":{\"hostName\":\"h\"}} 1",
	    "trailing garbage after the JSON document");
	assert_bad("{\"instance\":{\"hostName\":\"h\"}}[]",
	    "trailing garbage after the JSON document");
	assert_bad("{\"instance\":{\"hostName\":\"h\"}}}", "parse error");
	in = decode_ok(good);
	ck_assert_str_eq(in->app, "A");
	instance_free(in);
	assert_bad("{\"instance\":{\"hostName\":\"h\"", "premature EOF");
	instance_free(decode_ok(good));
	/*
	 * A string opened after the root and never closed is trailing too
	 * (yajl keeps it as a token not yet ended), and leaves nothing in
	 * the handle for the next document (fuzz_json_instance found it).
	 */
	assert_bad("{\"instance\":{\"hostName\":\"h\"}}\"",
	    "trailing garbage after the JSON document");
	instance_free(decode_ok(good));
	assert_bad("{\"instance\":{\"hostName\":\"h\"}} \"x}",
	    "trailing garbage after the JSON document");
	instance_free(decode_ok(good));
	in = decode_ok("{\"instance\":{\"hostName\":\"h\"}} \r\n\t");
	instance_free(in);
	instance_free(decode_ok(good));
	/* Another kind of document on the same handle, and back. */
	ck_assert_int_eq(decode_repl_hb(hb, &cause), 0);
	ck_assert_int_eq(decode_repl_hb(hb, &cause), 0);
	instance_free(decode_ok(good));
	ck_assert_int_eq(decode_repl_hb("", &cause), -1);
	ck_assert_ptr_nonnull(strstr(cause, "premature EOF"));
	free(cause);
	/* Documents over the kept size (their handle is not kept). */
	buf_init(&big, 0);
	buf_adds(&big, "{\"instance\":{\"hostName\":\"h\"");
	for (i = 0; i < 24; i++) {
		buf_adds(&big, ",\"pad\":\"");
		for (n = 0; n < 3000; n++)
			buf_addc(&big, 'x');
		buf_addc(&big, '"');
	}
	buf_adds(&big, "}}");
	in = json_decode_instance(big.data, big.len, NOW, &cause);
	ck_assert_msg(in != NULL, "decode failed: %s", cause);
	instance_free(in);
	instance_free(decode_ok(good));
	big.len--;
	in = json_decode_instance(big.data, big.len, NOW, &cause);
	ck_assert_msg(in == NULL && strstr(cause, "premature EOF") != NULL,
	    "a 70 KiB document cut short");
	free(cause);
	buf_free(&big);
	instance_free(decode_ok(good));
	/* Other threads get their own handle, freed when they end. */
	ck_assert_int_eq(pthread_create(&t, NULL, parser_thread,
	    (void *)good), 0);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	instance_free(decode_ok(good));
}
END_TEST

static Suite *
json_suite(void)
{
	Suite	*s = suite_create("json");
	TCase	*tc;

	tc = tcase_create("roundtrip");
	tcase_add_test(tc, test_roundtrip_instance);
	tcase_add_test(tc, test_roundtrip_application);
	tcase_add_test(tc, test_roundtrip_applications);
	tcase_add_test(tc, test_applications_fields);
	tcase_add_test(tc, test_roundtrip_repl_list);
	tcase_add_test(tc, test_roundtrip_repl_response);
	suite_add_tcase(s, tc);

	tc = tcase_create("decode");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_register_java);
	tcase_add_test(tc, test_register_spring);
	tcase_add_test(tc, test_spring_instance_id);
	tcase_add_test(tc, test_lenient);
	tcase_add_test(tc, test_bad_inputs);
	tcase_add_test(tc, test_strict_types);
	tcase_add_test(tc, test_bad_containers);
	tcase_add_test(tc, test_repl_actions);
	tcase_add_test(tc, test_repl_bad);
	tcase_add_test(tc, test_repl_items_apart);
	tcase_add_test(tc, test_long_bounds);
	tcase_add_test(tc, test_text_tail);
	tcase_add_test(tc, test_packed_decode_golden);
	tcase_add_test(tc, test_packed_unpack);
	tcase_add_test(tc, test_parser_reuse);
	suite_add_tcase(s, tc);

	tc = tcase_create("encode");
	tcase_add_test(tc, test_escaping);
	tcase_add_test(tc, test_encode_full_shapes);
	tcase_add_test(tc, test_encode_compact);
	tcase_add_test(tc, test_stitching);
	suite_add_tcase(s, tc);
	return (s);
}

/* Run the suite. */
int
main(void)
{
	return (check_run(json_suite()));
}
