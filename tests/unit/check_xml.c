/*
 * check_xml.c: the XML codec. Every XML fixture must come back byte for
 * byte after decode + encode (that is the XStream-compatibility contract);
 * stitched bodies must equal whole-document encodes; names and text must
 * be coded and escaped as XStream does; and every kind of hostile or
 * broken input must come back as NULL with a cause, without leaks (run
 * this binary under valgrind).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "buf.h"
#include "instance.h"
#include "json.h"
#include "xmalloc.h"
#include "xml.h"
#include "testutil.h"

#define NOW	1765000000000LL	/* the decode time every test injects */

/*
 * Assert that a buffer holds exactly the expected bytes; on a mismatch show
 * where (check's messages are short, so only a window around the spot).
 */
static void
assert_same(const struct buf *b, const char *want, size_t len)
{
	size_t	i, from;

	for (i = 0; i < b->len && i < len && b->data[i] == want[i]; i++)
		continue;
	if (i == len && i == b->len)
		return;
	from = i > 40 ? i - 40 : 0;
	ck_abort_msg("output differs at byte %zu (got %zu, want %zu bytes):\n"
	    "got:  %.80s\nwant: %.80s", i, b->len, len,
	    b->data != NULL ? b->data + from : "", want + from);
}

/* A small instance with every optional field set, for writer tests. */
static struct instance *
sample_instance(void)
{
	struct instance	*in = instance_new();

	in->instance_id = xstrdup("h1:svc:8080");
	in->host_name = xstrdup("h1");
	in->app = xstrdup("SVC");
	in->ip_addr = xstrdup("10.0.0.1");
	in->port = 8080;
	in->has_dc = 1;
	in->has_lease = 1;
	in->vip_address = xstrdup("svc");
	in->last_updated_ts = 1700000000001LL;
	in->last_dirty_ts = 1700000000000LL;
	in->action_type = ACTION_ADDED;
	return (in);
}

/* Decode, encode, compare: instance.xml. */
START_TEST(test_roundtrip_instance)
{
	size_t		 len;
	char		*data, *cause = NULL;
	struct instance	*in;
	struct buf	 b;

	data = read_fixture("instance.xml", &len);
	in = xml_decode_instance(data, len, NOW, &cause);
	ck_assert_msg(in != NULL, "decode: %s", cause);
	ck_assert_str_eq(in->instance_id,
	    "host-a.example.com:order-service:8080");
	ck_assert_int_eq(in->port, 8080);
	ck_assert_int_eq(in->secure_port, 443);
	ck_assert(in->port_enabled && !in->secure_port_enabled);
	ck_assert_int_eq(in->lease.registration_ts, 1700000000000LL);
	ck_assert_str_eq(kvlist_get(&in->metadata, "management.port"), "8080");
	ck_assert_int_eq(in->last_dirty_ts, 1699999995000LL);
	buf_init(&b, 0);
	xml_encode_instance(&b, in, CODEC_FULL, 0);
	assert_same(&b, data, len);
	buf_free(&b);
	instance_free(in);
	free(data);
}
END_TEST

/* Decode, encode, compare: application.xml. */
START_TEST(test_roundtrip_application)
{
	size_t			 len;
	char			*data, *cause = NULL;
	struct application	*a;
	struct buf		 b;

	data = read_fixture("application.xml", &len);
	a = xml_decode_application(data, len, NOW, &cause);
	ck_assert_msg(a != NULL, "decode: %s", cause);
	ck_assert_str_eq(a->name, "ORDER-SERVICE");
	ck_assert_uint_eq(a->n, 2);
	ck_assert_int_eq(a->instances[1]->status, STATUS_DOWN);
	ck_assert_uint_eq(a->instances[1]->metadata.n, 0);
	buf_init(&b, 0);
	xml_encode_application(&b, a, CODEC_FULL, 0);
	assert_same(&b, data, len);
	buf_free(&b);
	application_free(a);
	free(data);
}
END_TEST

/* Decode, encode, compare for each <applications> fixture. */
static const char *apps_fixtures[] = {
	"applications.xml", "applications-empty.xml", "delta.xml"
};

START_TEST(test_roundtrip_applications)
{
	size_t			 len;
	char			*data, *cause = NULL;
	struct applications	*as;
	struct buf		 b;

	data = read_fixture(apps_fixtures[_i], &len);
	as = xml_decode_applications(data, len, NOW, &cause);
	ck_assert_msg(as != NULL, "%s: %s", apps_fixtures[_i], cause);
	buf_init(&b, 0);
	xml_encode_applications(&b, as, CODEC_FULL);
	assert_same(&b, data, len);
	buf_free(&b);
	applications_free(as);
	free(data);
}
END_TEST

/* Details of the richest fixture survive decoding. */
START_TEST(test_decode_applications_fields)
{
	size_t			 len;
	char			*data, *cause = NULL;
	struct applications	*as;
	struct application	*a;
	struct instance		*in;

	data = read_fixture("applications.xml", &len);
	as = xml_decode_applications(data, len, NOW, &cause);
	ck_assert_msg(as != NULL, "decode: %s", cause);
	ck_assert_int_eq(as->versions_delta, 1);
	ck_assert_str_eq(as->apps_hashcode, "DOWN_1_UP_2_");
	ck_assert_uint_eq(as->n, 2);
	a = applications_find(as, "INVENTORY");
	ck_assert_ptr_nonnull(a);
	in = a->instances[0];
	ck_assert_int_eq(in->dc_name, DC_AMAZON);
	ck_assert_uint_eq(in->dc_metadata.n, 6);
	ck_assert_str_eq(kvlist_get(&in->dc_metadata, "instance-type"),
	    "m5.large");
	ck_assert_str_eq(in->app_group_name, "INVENTORY-GROUP");
	ck_assert_str_eq(in->asg_name, "inventory-v042");
	ck_assert_ptr_null(in->secure_vip_address);
	applications_free(as);

	as = xml_decode_applications("<applications/>", 15, NOW, &cause);
	ck_assert_ptr_nonnull(as);
	ck_assert_int_eq(as->versions_delta, -1);
	ck_assert_ptr_null(as->apps_hashcode);
	applications_free(as);
	free(data);
}
END_TEST

/* Stitching the pieces as xml.h says gives the whole-document bytes. */
START_TEST(test_stitch_equals_whole)
{
	size_t			 len, i, j;
	char			*data, *cause = NULL;
	struct applications	*as;
	struct buf		 whole, st;
	int			 flags;

	data = read_fixture("applications.xml", &len);
	as = xml_decode_applications(data, len, NOW, &cause);
	ck_assert_msg(as != NULL, "decode: %s", cause);
	for (flags = CODEC_FULL; flags <= CODEC_COMPACT; flags++) {
		buf_init(&whole, 0);
		buf_init(&st, 0);
		xml_encode_applications(&whole, as, flags);
		xml_apps_open(&st, flags, as->versions_delta,
		    as->apps_hashcode);
		for (i = 0; i < as->n; i++) {
			buf_addc(&st, '\n');
			xml_app_open(&st, as->apps[i]->name, 1);
			for (j = 0; j < as->apps[i]->n; j++) {
				buf_addc(&st, '\n');
				xml_encode_instance(&st,
				    as->apps[i]->instances[j], flags, 2);
			}
			buf_addc(&st, '\n');
			xml_app_close(&st, 1);
		}
		buf_addc(&st, '\n');
		xml_apps_close(&st, flags, as->versions_delta,
		    as->apps_hashcode);
		assert_same(&st, whole.data, whole.len);
		ck_assert(whole.data[whole.len - 1] == '>');
		buf_free(&whole);
		buf_free(&st);
	}
	applications_free(as);
	free(data);
}
END_TEST

/*
 * The XML and JSON fixtures describe the same registries: XML in, JSON out
 * must give the JSON fixture, and the other way round.
 */
static const char *twin_fixtures[] = {
	"applications", "applications-empty", "delta"
};

START_TEST(test_cross_codec)
{
	char			 name[64], *xml, *json, *cause = NULL;
	size_t			 xlen, jlen;
	struct applications	*as;
	struct buf		 b;

	snprintf(name, sizeof name, "%s.xml", twin_fixtures[_i]);
	xml = read_fixture(name, &xlen);
	snprintf(name, sizeof name, "%s.json", twin_fixtures[_i]);
	json = read_fixture(name, &jlen);
	while (jlen > 0 && json[jlen - 1] == '\n')
		json[--jlen] = '\0';
	buf_init(&b, 0);

	as = xml_decode_applications(xml, xlen, NOW, &cause);
	ck_assert_msg(as != NULL, "xml: %s", cause);
	json_encode_applications(&b, as, CODEC_FULL);
	assert_same(&b, json, jlen);
	applications_free(as);

	buf_reset(&b);
	as = json_decode_applications(json, jlen, NOW, &cause);
	ck_assert_msg(as != NULL, "json: %s", cause);
	xml_encode_applications(&b, as, CODEC_FULL);
	assert_same(&b, xml, xlen);
	applications_free(as);

	buf_free(&b);
	free(xml);
	free(json);
}
END_TEST

/* Same for the single instance and application fixtures. */
START_TEST(test_cross_codec_single)
{
	char			*xml, *json, *cause = NULL;
	size_t			 xlen, jlen;
	struct instance		*in;
	struct application	*a;
	struct buf		 b;

	buf_init(&b, 0);
	xml = read_fixture("instance.xml", &xlen);
	json = read_fixture("instance.json", &jlen);
	while (jlen > 0 && json[jlen - 1] == '\n')
		json[--jlen] = '\0';
	in = xml_decode_instance(xml, xlen, NOW, &cause);
	ck_assert_msg(in != NULL, "xml: %s", cause);
	json_encode_instance_root(&b, in);
	assert_same(&b, json, jlen);
	instance_free(in);
	free(xml);
	free(json);

	buf_reset(&b);
	xml = read_fixture("application.xml", &xlen);
	json = read_fixture("application.json", &jlen);
	while (jlen > 0 && json[jlen - 1] == '\n')
		json[--jlen] = '\0';
	a = json_decode_application(json, jlen, NOW, &cause);
	ck_assert_msg(a != NULL, "json: %s", cause);
	xml_encode_application(&b, a, CODEC_FULL, 0);
	assert_same(&b, xml, xlen);
	application_free(a);
	free(xml);
	free(json);
	buf_free(&b);
}
END_TEST

/* Empty registries, full and compact. */
START_TEST(test_empty_registry)
{
	struct applications	*as = applications_new();
	struct buf		 b;
	const char		*full = "<applications>\n"
	    "  <versions__delta>1</versions__delta>\n"
	    "  <apps__hashcode></apps__hashcode>\n"
	    "</applications>";
	const char		*compact = "<applications>\n"
	    "  <versions__delta>-1</versions__delta>\n"
	    "  <apps__hashcode></apps__hashcode>\n"
	    "</applications>";

	as->versions_delta = 1;
	buf_init(&b, 0);
	xml_encode_applications(&b, as, CODEC_FULL);
	assert_same(&b, full, strlen(full));
	buf_reset(&b);
	as->versions_delta = -1;
	xml_encode_applications(&b, as, CODEC_COMPACT);
	assert_same(&b, compact, strlen(compact));
	buf_free(&b);
	applications_free(as);
}
END_TEST

/* XStream's text escaping, byte by byte. */
START_TEST(test_escape)
{
	struct buf	 b;
	const char	*want;

	buf_init(&b, 0);
	xml_add_escaped(&b, "a&b<c>d\"e'f\rg\th\ni");
	want = "a&amp;b&lt;c&gt;d&quot;e&apos;f&#xd;g\th\ni";
	assert_same(&b, want, strlen(want));

	buf_reset(&b);
	xml_add_escaped(&b, "x\x01y\x1f\x7fz");
	want = "x&#x1;y&#x1f;&#x7f;z";
	assert_same(&b, want, strlen(want));

	/* UTF-8 passes through; C1 controls are referenced; junk is U+FFFD. */
	buf_reset(&b);
	xml_add_escaped(&b, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
	want = "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";
	assert_same(&b, want, strlen(want));
	buf_reset(&b);
	xml_add_escaped(&b, "\xc2\x85|\xff|\xc3|\xed\xa0\x80|\xc0\xaf");
	want = "&#x85;|\xef\xbf\xbd|\xef\xbf\xbd|\xef\xbf\xbd\xef\xbf\xbd"
	    "\xef\xbf\xbd|\xef\xbf\xbd\xef\xbf\xbd";
	assert_same(&b, want, strlen(want));

	buf_reset(&b);
	xml_add_escaped(&b, "");
	ck_assert_uint_eq(b.len, 0);
	buf_free(&b);
}
END_TEST

/* Special characters in values survive encode + decode. */
START_TEST(test_escape_roundtrip)
{
	struct instance	*in = sample_instance(), *out;
	struct buf	 b;
	char		*cause = NULL;
	const char	*nasty = "<a href=\"x\">&amp; 'q'\r\n\tend</a>";

	str_replace(&in->home_page_url, nasty);
	kvlist_set(&in->metadata, "k", nasty);
	buf_init(&b, 0);
	xml_encode_instance(&b, in, CODEC_FULL, 0);
	ck_assert_ptr_nonnull(strstr(b.data, "<homePageUrl>&lt;a href=&quot;"
	    "x&quot;&gt;&amp;amp; &apos;q&apos;&#xd;\n\tend&lt;/a&gt;"
	    "</homePageUrl>"));
	out = xml_decode_instance(b.data, b.len, NOW, &cause);
	ck_assert_msg(out != NULL, "decode: %s", cause);
	ck_assert_str_eq(out->home_page_url, nasty);
	ck_assert_str_eq(kvlist_get(&out->metadata, "k"), nasty);
	buf_free(&b);
	instance_free(in);
	instance_free(out);
}
END_TEST

/* Metadata keys: '_' and '$' are coded and come back; unsafe ones drop. */
START_TEST(test_metadata_names)
{
	struct instance	*in = sample_instance(), *out;
	struct buf	 b;
	char		*cause = NULL;

	kvlist_set(&in->metadata, "a_b", "1");
	kvlist_set(&in->metadata, "$x", "2");
	kvlist_set(&in->metadata, "c_-d$_", "3");
	kvlist_set(&in->metadata, "has space", "4");
	kvlist_set(&in->metadata, "1digit", "5");
	kvlist_set(&in->metadata, "", "6");
	kvlist_set(&in->metadata, "ns:key", "7");
	kvlist_set(&in->metadata, "caf\xc3\xa9", "8");
	kvlist_set(&in->metadata, "<evil>", "9");
	buf_init(&b, 0);
	xml_encode_instance(&b, in, CODEC_FULL, 0);
	ck_assert_ptr_nonnull(strstr(b.data, "<a__b>1</a__b>"));
	ck_assert_ptr_nonnull(strstr(b.data, "<_-x>2</_-x>"));
	ck_assert_ptr_nonnull(strstr(b.data, "<c__-d_-__>3</c__-d_-__>"));
	ck_assert_ptr_null(strstr(b.data, "space"));
	ck_assert_ptr_null(strstr(b.data, "evil"));
	out = xml_decode_instance(b.data, b.len, NOW, &cause);
	ck_assert_msg(out != NULL, "decode: %s", cause);
	ck_assert_uint_eq(out->metadata.n, 3);
	ck_assert_str_eq(out->metadata.v[0].key, "a_b");
	ck_assert_str_eq(out->metadata.v[1].key, "$x");
	ck_assert_str_eq(out->metadata.v[2].key, "c_-d$_");
	ck_assert_str_eq(kvlist_get(&out->metadata, "c_-d$_"), "3");
	buf_free(&b);
	instance_free(out);

	/* Only unsafe keys left: written as the empty map. */
	kvlist_clear(&in->metadata);
	kvlist_set(&in->metadata, "bad key", "x");
	buf_init(&b, 0);
	xml_encode_instance(&b, in, CODEC_FULL, 0);
	ck_assert_ptr_nonnull(strstr(b.data,
	    "\n  <metadata class=\"java.util.Collections$EmptyMap\"/>\n"));
	buf_free(&b);
	instance_free(in);
}
END_TEST

/* Full writer details not covered by the fixtures. */
START_TEST(test_encode_full_details)
{
	struct instance	*in = sample_instance();
	struct buf	 b;

	in->sid = xstrdup("na");
	in->is_coordinating = 1;
	in->action_type = ACTION_NONE;
	in->secure_port_enabled = 1;
	in->port_enabled = 0;
	in->overridden_status = STATUS_OUT_OF_SERVICE;
	in->dc_name = DC_AMAZON;
	in->has_lease = 0;
	buf_init(&b, 0);
	xml_encode_instance(&b, in, CODEC_FULL, 0);
	ck_assert_ptr_null(strstr(b.data, "<sid>"));
	ck_assert_ptr_null(strstr(b.data, "actionType"));
	ck_assert_ptr_null(strstr(b.data, "leaseInfo"));
	ck_assert_ptr_nonnull(strstr(b.data,
	    "<isCoordinatingDiscoveryServer>true<"));
	ck_assert_ptr_nonnull(strstr(b.data,
	    "<port enabled=\"false\">8080</port>\n"
	    "  <securePort enabled=\"true\">7002</securePort>"));
	ck_assert_ptr_nonnull(strstr(b.data,
	    "<overriddenstatus>OUT_OF_SERVICE</overriddenstatus>"));
	ck_assert_ptr_nonnull(strstr(b.data,
	    "  <dataCenterInfo class=\"com.netflix.appinfo.AmazonInfo\">\n"
	    "    <name>Amazon</name>\n"
	    "    <metadata class=\"java.util.Collections$EmptyMap\"/>\n"
	    "  </dataCenterInfo>\n"));
	buf_reset(&b);
	str_replace(&in->sid, "s-1");
	xml_encode_instance(&b, in, CODEC_FULL, 3);
	ck_assert_ptr_nonnull(strstr(b.data, "\n        <sid>s-1</sid>\n"));
	ck_assert(strncmp(b.data, "      <instance>\n", 17) == 0);
	ck_assert_str_eq(b.data + b.len - 18, "\n      </instance>");
	buf_free(&b);
	instance_free(in);
}
END_TEST

/* Compact: the reduced field set, ports last, Amazon keys filtered. */
START_TEST(test_encode_compact)
{
	struct instance	*in = sample_instance();
	struct buf	 b;
	const char	*want =
	    "<instance>\n"
	    "  <instanceId>h1:svc:8080</instanceId>\n"
	    "  <app>SVC</app>\n"
	    "  <ipAddr>10.0.0.1</ipAddr>\n"
	    "  <hostName>h1</hostName>\n"
	    "  <status>UP</status>\n"
	    "  <dataCenterInfo class=\"com.netflix.appinfo.AmazonInfo\">\n"
	    "    <name>Amazon</name>\n"
	    "    <metadata>\n"
	    "      <instance-id>i-1</instance-id>\n"
	    "      <availability-zone>z</availability-zone>\n"
	    "    </metadata>\n"
	    "  </dataCenterInfo>\n"
	    "  <vipAddress>svc</vipAddress>\n"
	    "  <lastUpdatedTimestamp>1700000000001</lastUpdatedTimestamp>\n"
	    "  <actionType>ADDED</actionType>\n"
	    "  <port enabled=\"true\">8080</port>\n"
	    "  <securePort enabled=\"false\">7002</securePort>\n"
	    "</instance>";

	in->dc_name = DC_AMAZON;
	kvlist_set(&in->dc_metadata, "instance-id", "i-1");
	kvlist_set(&in->dc_metadata, "ami-id", "ami-1");
	kvlist_set(&in->dc_metadata, "availability-zone", "z");
	kvlist_set(&in->metadata, "dropped", "yes");
	str_replace(&in->home_page_url, "http://dropped/");
	buf_init(&b, 0);
	xml_encode_instance(&b, in, CODEC_COMPACT, 0);
	assert_same(&b, want, strlen(want));
	buf_free(&b);
	instance_free(in);
}
END_TEST

/* Compact registry: version and hash code after the applications. */
START_TEST(test_encode_compact_apps)
{
	struct applications	*as = applications_new();
	struct application	*a = application_new("svc");
	struct buf		 b;
	const char		*p;

	application_add(a, sample_instance());
	applications_add(as, a);
	as->versions_delta = 3;
	as->apps_hashcode = xstrdup("UP_1_");
	buf_init(&b, 0);
	xml_encode_applications(&b, as, CODEC_COMPACT);
	p = "<applications>\n  <application>\n    <name>SVC</name>\n"
	    "    <instance>\n      <instanceId>";
	ck_assert(strncmp(b.data, p, strlen(p)) == 0);
	p = strstr(b.data, "  </application>\n"
	    "  <versions__delta>3</versions__delta>\n"
	    "  <apps__hashcode>UP_1_</apps__hashcode>\n"
	    "</applications>");
	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_null(strstr(b.data, "overriddenstatus"));
	ck_assert_ptr_null(strstr(b.data, "leaseInfo"));
	ck_assert_ptr_null(strstr(b.data, "lastDirtyTimestamp"));
	ck_assert_ptr_null(strstr(b.data, "countryId"));
	buf_free(&b);
	applications_free(as);
}
END_TEST

/* The reader's leniency rules (§4.2 "XML input rules"). */
START_TEST(test_decode_rules)
{
	const char	*doc =
	    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	    "<!-- a comment -->"
	    "<instance><app>order-service</app><hostName>h</hostName>"
	    "<unknownThing><deep><deeper>x</deeper></deep></unknownThing>"
	    "<status>down</status><overriddenStatus>Out_Of_Service"
	    "</overriddenStatus>"
	    "<port enabled=\"FALSE\">81</port><securePort enabled=\"TRUE\">"
	    "444</securePort>"
	    "<dataCenterInfo class=\"whatever\"><metadata><instance-id>i-9"
	    "</instance-id></metadata><name>amazon</name></dataCenterInfo>"
	    "<leaseInfo><renewalIntervalInSecs>abc</renewalIntervalInSecs>"
	    "<durationInSecs>0</durationInSecs><registrationTimestamp>x"
	    "</registrationTimestamp><evictionTimestamp>5</evictionTimestamp>"
	    "</leaseInfo>"
	    "<metadata class=\"java.util.Collections$EmptyMap\"><instanceId>"
	    "svc:1</instanceId><e/></metadata>"
	    "<appGroupName>grp</appGroupName>"
	    "<isCoordinatingDiscoveryServer>TRUE"
	    "</isCoordinatingDiscoveryServer>"
	    "<actionType>BOGUS</actionType>"
	    "<lastDirtyTimestamp> 42 </lastDirtyTimestamp>"
	    "</instance>";
	struct instance	*in;
	char		*cause = NULL;

	in = xml_decode_instance(doc, strlen(doc), NOW, &cause);
	ck_assert_msg(in != NULL, "decode: %s", cause);
	ck_assert_str_eq(in->app, "ORDER-SERVICE");
	ck_assert_str_eq(in->app_group_name, "GRP");
	ck_assert_int_eq(in->status, STATUS_DOWN);
	ck_assert_int_eq(in->overridden_status, STATUS_OUT_OF_SERVICE);
	ck_assert_int_eq(in->port, 81);
	ck_assert_int_eq(in->port_enabled, 1);	/* only "false" disables */
	ck_assert_int_eq(in->secure_port, 444);
	ck_assert_int_eq(in->secure_port_enabled, 0);	/* only "true" */
	ck_assert(in->has_dc);
	ck_assert_int_eq(in->dc_name, DC_AMAZON);
	ck_assert_str_eq(kvlist_get(&in->dc_metadata, "instance-id"), "i-9");
	ck_assert(in->has_lease);
	ck_assert_int_eq(in->lease.renewal_interval_secs, 30);
	ck_assert_int_eq(in->lease.duration_secs, 90);
	ck_assert_int_eq(in->lease.registration_ts, 0);
	ck_assert_int_eq(in->lease.eviction_ts, 5);
	ck_assert_str_eq(kvlist_get(&in->metadata, "e"), "");
	ck_assert_ptr_null(kvlist_get(&in->metadata, "class"));
	/* Spring rule: metadata.instanceId prefixed with the host name. */
	ck_assert_str_eq(in->instance_id, "h:svc:1");
	ck_assert_int_eq(in->is_coordinating, 1);
	ck_assert_int_eq(in->action_type, ACTION_NONE);
	ck_assert_int_eq(in->last_dirty_ts, 42);
	instance_free(in);
}
END_TEST

/* Smaller reader rules: defaults, unknown status, dc metadata, Spring. */
START_TEST(test_decode_defaults)
{
	struct instance	*in;
	char		*cause = NULL;
	const char	*d1 = "<instance><status>sleepy</status>"
	    "<dataCenterInfo><name>MyOwn</name><metadata><a>1</a></metadata>"
	    "</dataCenterInfo><metadata><instanceId>h:x</instanceId>"
	    "</metadata><hostName>h</hostName></instance>";
	const char	*d3 = "<instance><dataCenterInfo class=\"x\"/>"
	    "</instance>";
	const char	*d2 = "<instance><instanceId></instanceId><sid>na</sid>"
	    "<metadata><instanceId>x</instanceId></metadata></instance>";

	in = xml_decode_instance(d1, strlen(d1), NOW, &cause);
	ck_assert_msg(in != NULL, "decode: %s", cause);
	ck_assert_int_eq(in->status, STATUS_UNKNOWN);
	ck_assert_int_eq(in->overridden_status, STATUS_UNKNOWN);
	ck_assert_int_eq(in->port, 7001);
	ck_assert_int_eq(in->port_enabled, 1);
	ck_assert_int_eq(in->secure_port, 7002);
	ck_assert_int_eq(in->secure_port_enabled, 0);
	ck_assert_int_eq(in->dc_name, DC_MYOWN);
	ck_assert_uint_eq(in->dc_metadata.n, 0);	/* not Amazon */
	ck_assert(in->has_dc && in->has_dc_name);
	ck_assert(!in->has_lease);
	ck_assert_str_eq(in->instance_id, "h:x");	/* already prefixed */
	instance_free(in);

	/* No name: decoded, flagged, left to rest.c's 400. */
	in = xml_decode_instance(d3, strlen(d3), NOW, &cause);
	ck_assert_msg(in != NULL, "decode: %s", cause);
	ck_assert(in->has_dc && !in->has_dc_name);
	instance_free(in);

	in = xml_decode_instance(d2, strlen(d2), NOW, &cause);
	ck_assert_msg(in != NULL, "decode: %s", cause);
	ck_assert_str_eq(in->instance_id, "x");	/* empty counts as absent */
	ck_assert_ptr_null(in->sid);		/* "na" is NULL */
	/* Absent timestamps are the decode time, as injected. */
	ck_assert_int_eq(in->last_updated_ts, NOW);
	ck_assert_int_eq(in->last_dirty_ts, NOW);
	instance_free(in);
}
END_TEST

/* Bad documents: NULL, a cause, no crash and (under valgrind) no leak. */
static const char *bad_docs[] = {
	/* truncated */
	"<instance><hostName>h</hostName><app>A",
	/* billion laughs */
	"<?xml version=\"1.0\"?><!DOCTYPE lolz [<!ENTITY lol \"lol\">"
	"<!ENTITY lol2 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">"
	"<!ENTITY lol3 \"&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;\">"
	"]><instance><hostName>&lol3;</hostName></instance>",
	/* external entity */
	"<!DOCTYPE instance [<!ENTITY xxe SYSTEM \"file:///etc/passwd\">]>"
	"<instance><hostName>&xxe;</hostName></instance>",
	/* external DTD only */
	"<!DOCTYPE instance SYSTEM \"http://127.0.0.1:1/x.dtd\">"
	"<instance/>",
	/* undeclared entity */
	"<instance><hostName>&xxe;</hostName></instance>",
	/* invalid UTF-8 */
	"<instance><hostName>\xff\xfe</hostName></instance>",
	/* unknown data center */
	"<instance><dataCenterInfo><name>Moon</name></dataCenterInfo>"
	"</instance>",
	/* non-numeric timestamps, port, country */
	"<instance><lastDirtyTimestamp>yesterday</lastDirtyTimestamp>"
	"</instance>",
	"<instance><lastUpdatedTimestamp>12x</lastUpdatedTimestamp></instance>",
	"<instance><port enabled=\"true\">http</port></instance>",
	"<instance><countryId>99999999999</countryId></instance>",
	/* wrong root */
	"<application><name>X</name></application>",
	"<Instance/>",
	/* empty, blank, not XML */
	"",
	"   \n",
	"{\"instance\":{}}",
	/* two roots */
	"<instance/><instance/>",
	/* character reference to a control character */
	"<instance><hostName>&#x1;</hostName></instance>",
	/* ... and to a lone UTF-16 surrogate */
	"<instance><hostName>a&#xD800;</hostName></instance>",
	/* timestamps that are no time: negative, past year 9999, huge */
	"<instance><lastDirtyTimestamp>-1</lastDirtyTimestamp></instance>",
	"<instance><lastUpdatedTimestamp>253402300800000"
	"</lastUpdatedTimestamp></instance>",
	"<instance><lastDirtyTimestamp>99999999999999999999"
	"</lastDirtyTimestamp></instance>",
	"<instance><leaseInfo><registrationTimestamp>-7"
	"</registrationTimestamp></leaseInfo></instance>",
	/* a field, a structure or a metadata key given twice */
	"<instance><status>UP</status><status>DOWN</status></instance>",
	"<instance><hostName>a</hostName><hostName>b</hostName></instance>",
	"<instance><leaseInfo/><leaseInfo/></instance>",
	"<instance><port>1</port><port>2</port></instance>",
	"<instance><metadata><k>1</k><k>2</k></metadata></instance>",
};

START_TEST(test_bad_input)
{
	char		*cause = NULL;
	struct instance	*in;

	in = xml_decode_instance(bad_docs[_i], strlen(bad_docs[_i]), NOW,
	    &cause);
	ck_assert_msg(in == NULL, "accepted: %s", bad_docs[_i]);
	ck_assert_ptr_nonnull(cause);
	ck_assert(strlen(cause) > 0);
	free(cause);
}
END_TEST

/* Errors deep inside a registry free everything built so far. */
START_TEST(test_bad_registry)
{
	size_t			 len;
	char			*data, *cause = NULL, *p;
	struct applications	*as;

	data = read_fixture("applications.xml", &len);
	/* Break the last instance's lastDirtyTimestamp. */
	p = strstr(data, "<lastDirtyTimestamp>1699999890000");
	ck_assert_ptr_nonnull(p);
	memcpy(p + strlen("<lastDirtyTimestamp>"), "x", 1);
	as = xml_decode_applications(data, len, NOW, &cause);
	ck_assert_ptr_null(as);
	ck_assert_ptr_nonnull(strstr(cause, "lastDirtyTimestamp"));
	free(cause);
	cause = NULL;

	/* Truncated in the middle of the second application. */
	as = xml_decode_applications(data, len / 2 + 1000, NOW, &cause);
	ck_assert_ptr_null(as);
	ck_assert_ptr_nonnull(cause);
	free(cause);
	cause = NULL;

	/* Bad version. */
	p = "<applications><versions__delta>v2</versions__delta>"
	    "</applications>";
	as = xml_decode_applications(p, strlen(p), NOW, &cause);
	ck_assert_ptr_null(as);
	ck_assert_ptr_nonnull(cause);
	free(cause);
	cause = NULL;

	/* Wrong root for each decoder. */
	ck_assert_ptr_null(xml_decode_application(data, len, NOW, &cause));
	ck_assert_ptr_nonnull(strstr(cause, "root"));
	free(cause);
	cause = NULL;
	ck_assert_ptr_null(xml_decode_instance(data, len, NOW, &cause));
	free(cause);
	free(data);
}
END_TEST

/* Depth, text and metadata bounds. */
START_TEST(test_limits)
{
	struct buf	 b;
	char		*cause = NULL;
	struct instance	*in;
	int		 i;

	/* Depth bomb inside an ignored element. */
	buf_init(&b, 0);
	buf_adds(&b, "<instance>");
	for (i = 0; i < 10000; i++)
		buf_adds(&b, "<a>");
	for (i = 0; i < 10000; i++)
		buf_adds(&b, "</a>");
	buf_adds(&b, "</instance>");
	ck_assert_ptr_null(xml_decode_instance(b.data, b.len, NOW, &cause));
	ck_assert_ptr_nonnull(strstr(cause, "deeper"));
	free(cause);
	cause = NULL;

	/* Exactly at the depth limit is fine. */
	buf_reset(&b);
	buf_adds(&b, "<instance>");
	for (i = 0; i < XML_MAX_DEPTH - 1; i++)
		buf_adds(&b, "<a>");
	for (i = 0; i < XML_MAX_DEPTH - 1; i++)
		buf_adds(&b, "</a>");
	buf_adds(&b, "</instance>");
	in = xml_decode_instance(b.data, b.len, NOW, &cause);
	ck_assert_msg(in != NULL, "decode: %s", cause);
	instance_free(in);

	/* Huge text node. */
	buf_reset(&b);
	buf_adds(&b, "<instance><hostName>");
	for (i = 0; i < 100000; i++)
		buf_addc(&b, 'h');
	buf_adds(&b, "</hostName></instance>");
	ck_assert_ptr_null(xml_decode_instance(b.data, b.len, NOW, &cause));
	ck_assert_ptr_nonnull(strstr(cause, "longer"));
	free(cause);
	cause = NULL;

	/* The longest allowed string passes. */
	buf_reset(&b);
	buf_adds(&b, "<instance><hostName>");
	for (i = 0; i < INSTANCE_MAX_STRING; i++)
		buf_addc(&b, 'h');
	buf_adds(&b, "</hostName></instance>");
	in = xml_decode_instance(b.data, b.len, NOW, &cause);
	ck_assert_msg(in != NULL, "decode: %s", cause);
	ck_assert_uint_eq(strlen(in->host_name), INSTANCE_MAX_STRING);
	instance_free(in);

	/* Huge text inside an unknown element is skipped, not stored. */
	buf_reset(&b);
	buf_adds(&b, "<instance><junk>");
	for (i = 0; i < 100000; i++)
		buf_addc(&b, 'j');
	buf_adds(&b, "</junk></instance>");
	in = xml_decode_instance(b.data, b.len, NOW, &cause);
	ck_assert_msg(in != NULL, "decode: %s", cause);
	instance_free(in);

	/* Too many metadata entries. */
	buf_reset(&b);
	buf_adds(&b, "<instance><metadata>");
	for (i = 0; i <= INSTANCE_MAX_METADATA; i++)
		buf_addf(&b, "<k%d>v</k%d>", i, i);
	buf_adds(&b, "</metadata></instance>");
	ck_assert_ptr_null(xml_decode_instance(b.data, b.len, NOW, &cause));
	ck_assert_ptr_nonnull(strstr(cause, "metadata"));
	free(cause);
	buf_free(&b);
}
END_TEST

/* Repeated application names in one document merge. */
START_TEST(test_duplicate_apps_merge)
{
	const char		*doc = "<applications>"
	    "<application><name>a</name><instance><instanceId>1</instanceId>"
	    "</instance></application>"
	    "<application><instance><instanceId>2</instanceId></instance>"
	    "<name>A</name></application></applications>";
	struct applications	*as;
	char			*cause = NULL;

	as = xml_decode_applications(doc, strlen(doc), NOW, &cause);
	ck_assert_msg(as != NULL, "decode: %s", cause);
	ck_assert_uint_eq(as->n, 1);
	ck_assert_str_eq(as->apps[0]->name, "A");
	ck_assert_uint_eq(as->apps[0]->n, 2);
	applications_free(as);
}
END_TEST

/* All the cases above in one suite. */
static Suite *
xml_suite(void)
{
	Suite	*s = suite_create("xml");
	TCase	*tc;

	tc = tcase_create("roundtrip");
	tcase_add_test(tc, test_roundtrip_instance);
	tcase_add_test(tc, test_roundtrip_application);
	tcase_add_loop_test(tc, test_roundtrip_applications, 0,
	    sizeof apps_fixtures / sizeof *apps_fixtures);
	tcase_add_test(tc, test_decode_applications_fields);
	tcase_add_test(tc, test_stitch_equals_whole);
	tcase_add_loop_test(tc, test_cross_codec, 0,
	    sizeof twin_fixtures / sizeof *twin_fixtures);
	tcase_add_test(tc, test_cross_codec_single);
	suite_add_tcase(s, tc);

	tc = tcase_create("writer");
	tcase_add_test(tc, test_empty_registry);
	tcase_add_test(tc, test_escape);
	tcase_add_test(tc, test_escape_roundtrip);
	tcase_add_test(tc, test_metadata_names);
	tcase_add_test(tc, test_encode_full_details);
	tcase_add_test(tc, test_encode_compact);
	tcase_add_test(tc, test_encode_compact_apps);
	suite_add_tcase(s, tc);

	tc = tcase_create("reader");
	tcase_add_test(tc, test_decode_rules);
	tcase_add_test(tc, test_decode_defaults);
	tcase_add_loop_test(tc, test_bad_input, 0,
	    sizeof bad_docs / sizeof *bad_docs);
	tcase_add_test(tc, test_bad_registry);
	tcase_add_test(tc, test_limits);
	tcase_add_test(tc, test_duplicate_apps_merge);
	suite_add_tcase(s, tc);
	return (s);
}

/* Run the suite. */
int
main(void)
{
	return (check_run(xml_suite()));
}
