/*
 * check_instance_fields.c: the one field table both decoders follow
 * (common/instance_fields.c). Every field goes through both formats and
 * back; each rule is tried with the same text in JSON and in XML, and the
 * two answers must be what Eureka's own codecs give (EurekaJacksonCodec
 * for JSON, XStream's Converters for XML: the sources are cited in
 * instance_fields.c), the same unless the table flags the format.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "codec.h"
#include "instance.h"
#include "instance_fields.h"
#include "instdump.h"
#include "json.h"
#include "testutil.h"
#include "xmalloc.h"
#include "xml.h"

#define NOW	1700000000000LL
#define REFUSED	"!"		/* the decode fails */

/* The stored value of field f, as text ("(null)" for an absent string). */
static void
field_text(const struct instance *in, enum ifield f, char *out, size_t sz)
{
	const char	*s = NULL;
	long long	 n = 0;
	int		 is_str = 1;

	switch (f) {
	case IF_INSTANCE_ID: s = in->instance_id; break;
	case IF_HOST_NAME: s = in->host_name; break;
	case IF_APP: s = in->app; break;
	case IF_IP_ADDR: s = in->ip_addr; break;
	case IF_SID: s = in->sid; break;
	case IF_APP_GROUP_NAME: s = in->app_group_name; break;
	case IF_HOME_PAGE_URL: s = in->home_page_url; break;
	case IF_STATUS_PAGE_URL: s = in->status_page_url; break;
	case IF_HEALTH_CHECK_URL: s = in->health_check_url; break;
	case IF_SECURE_HEALTH_CHECK_URL: s = in->secure_health_check_url; break;
	case IF_VIP_ADDRESS: s = in->vip_address; break;
	case IF_SECURE_VIP_ADDRESS: s = in->secure_vip_address; break;
	case IF_ASG_NAME: s = in->asg_name; break;
	case IF_STATUS:
		s = instance_status_name(in->status);
		break;
	case IF_OVERRIDDEN_STATUS:
	case IF_OVERRIDDEN_STATUS_LC:
		s = instance_status_name(in->overridden_status);
		break;
	case IF_ACTION_TYPE:
		s = in->action_type == ACTION_NONE ? "NONE" :
		    action_type_name(in->action_type);
		break;
	case IF_DC_NAME:
		s = dc_name_str(in->dc_name);
		break;
	default:
		is_str = 0;
		break;
	}
	switch (f) {
	case IF_PORT: n = in->port; break;
	case IF_PORT_ENABLED: n = in->port_enabled; break;
	case IF_SECURE_PORT: n = in->secure_port; break;
	case IF_SECURE_PORT_ENABLED: n = in->secure_port_enabled; break;
	case IF_COUNTRY_ID: n = in->country_id; break;
	case IF_IS_COORDINATING: n = in->is_coordinating; break;
	case IF_LAST_UPDATED_TS: n = in->last_updated_ts; break;
	case IF_LAST_DIRTY_TS: n = in->last_dirty_ts; break;
	case IF_L_RENEWAL_INTERVAL: n = in->lease.renewal_interval_secs; break;
	case IF_L_DURATION: n = in->lease.duration_secs; break;
	case IF_L_REGISTRATION_TS: n = in->lease.registration_ts; break;
	case IF_L_LAST_RENEWAL_TS:
	case IF_L_RENEWAL_TS:
		n = in->lease.last_renewal_ts;
		break;
	case IF_L_EVICTION_TS: n = in->lease.eviction_ts; break;
	case IF_L_SERVICE_UP_TS: n = in->lease.service_up_ts; break;
	default: break;
	}
	if (is_str)
		snprintf(out, sz, "%s", s != NULL ? s : "(null)");
	else
		snprintf(out, sz, "%lld", n);
}

/*
 * A one-field document in each format: the field's text where its
 * parent puts it (JSON gets it as a string unless json_raw is given).
 */
static void
field_docs(enum ifield f, const char *text, const char *json_raw,
    struct buf *j, struct buf *x)
{
	const struct ifield_def	*d = &ifield_table[f];
	char			 jv[512];

	if (json_raw != NULL)
		snprintf(jv, sizeof jv, "%s", json_raw);
	else
		snprintf(jv, sizeof jv, "\"%s\"", text);
	buf_adds(j, "{\"instance\":{\"hostName\":\"h\",");
	buf_adds(x, "<instance><hostName>h</hostName>");
	switch (d->parent) {
	case IFP_INSTANCE:
		if (f == IF_PORT || f == IF_SECURE_PORT) {
			buf_addf(j, "\"%s\":{\"$\":%s}", d->name, jv);
			buf_addf(x, "<%s>%s</%s>", d->name, text, d->name);
			break;
		}
		buf_addf(j, "\"%s\":%s", d->name, jv);
		buf_addf(x, "<%s>%s</%s>", d->name, text, d->name);
		break;
	case IFP_PORT:
		buf_addf(j, "\"%s\":{\"$\":80,\"@enabled\":%s}",
		    f == IF_PORT_ENABLED ? "port" : "securePort", jv);
		buf_addf(x, "<%s enabled=\"%s\">80</%s>",
		    f == IF_PORT_ENABLED ? "port" : "securePort", text,
		    f == IF_PORT_ENABLED ? "port" : "securePort");
		break;
	case IFP_DC:
		buf_addf(j, "\"dataCenterInfo\":{\"@class\":"
		    "\"com.netflix.appinfo.MyDataCenterInfo\",\"name\":%s}", jv);
		buf_addf(x, "<dataCenterInfo class=\"x\"><name>%s</name>"
		    "</dataCenterInfo>", text);
		break;
	case IFP_LEASE:
		buf_addf(j, "\"leaseInfo\":{\"%s\":%s}", d->name, jv);
		buf_addf(x, "<leaseInfo><%s>%s</%s></leaseInfo>", d->name, text,
		    d->name);
		break;
	}
	buf_adds(j, "}}");
	buf_adds(x, "</instance>");
}

/* Decode a one-field document in both formats; the field's two values. */
static void
decode_both(enum ifield f, const char *text, const char *json_raw,
    char *jout, char *xout, size_t sz)
{
	struct buf	 j, x;
	struct instance	*in;
	char		*cause = NULL;

	buf_init(&j, 0);
	buf_init(&x, 0);
	field_docs(f, text, json_raw, &j, &x);
	if ((in = json_decode_instance(j.data, j.len, NOW, &cause)) == NULL) {
		snprintf(jout, sz, REFUSED);
		free(cause);
		cause = NULL;
	} else {
		field_text(in, f, jout, sz);
		instance_free(in);
	}
	if ((in = xml_decode_instance(x.data, x.len, NOW, &cause)) == NULL) {
		snprintf(xout, sz, REFUSED);
		free(cause);
	} else {
		field_text(in, f, xout, sz);
		instance_free(in);
	}
	buf_free(&j);
	buf_free(&x);
}

/*
 * The status disagreement named in issue 23: the same "up" is UNKNOWN
 * from JSON and UP from XML. That is Eureka: InstanceInfoDeserializer
 * looks the name up exactly (EnumLookup), XStream's converter calls
 * InstanceStatus.toEnum, which upper-cases it. The table's XML column
 * says IFR_ICASE, and only there.
 */
START_TEST(test_status_per_format)
{
	char	j[64], x[64];

	decode_both(IF_STATUS, "up", NULL, j, x, sizeof j);
	ck_assert_str_eq(j, "UNKNOWN");
	ck_assert_str_eq(x, "UP");
	decode_both(IF_OVERRIDDEN_STATUS_LC, "out_of_service", NULL, j, x,
	    sizeof j);
	ck_assert_str_eq(j, "UNKNOWN");
	ck_assert_str_eq(x, "OUT_OF_SERVICE");
	ck_assert(!(ifield_table[IF_STATUS].rule[IFMT_JSON] & IFR_ICASE));
	ck_assert(ifield_table[IF_STATUS].rule[IFMT_XML] & IFR_ICASE);
}
END_TEST

/* One rule, one text: what each format reads. */
static const struct {
	enum ifield	 f;
	const char	*text;
	const char	*json_raw;	/* NULL: the text as a JSON string */
	const char	*json;		/* expected, or REFUSED */
	const char	*xml;
} rules[] = {
	/* The same in both formats. */
	{ IF_STATUS, "DOWN", NULL, "DOWN", "DOWN" },
	{ IF_STATUS, "Bogus", NULL, "UNKNOWN", "UNKNOWN" },
	{ IF_OVERRIDDEN_STATUS, "STARTING", NULL, "STARTING", "STARTING" },
	{ IF_APP, "order-svc", NULL, "ORDER-SVC", "ORDER-SVC" },
	{ IF_APP_GROUP_NAME, "grp", NULL, "GRP", "GRP" },
	{ IF_SID, "na", NULL, "(null)", "(null)" },
	{ IF_SID, "s-1", NULL, "s-1", "s-1" },
	{ IF_ACTION_TYPE, "ADDED", NULL, "ADDED", "ADDED" },
	{ IF_ACTION_TYPE, "added", NULL, "NONE", "NONE" },
	{ IF_COUNTRY_ID, "3", NULL, "3", "3" },
	{ IF_COUNTRY_ID, "three", NULL, REFUSED, REFUSED },
	{ IF_COUNTRY_ID, "99999999999", NULL, REFUSED, REFUSED },
	{ IF_PORT, "81", NULL, "81", "81" },
	{ IF_PORT, "http", NULL, REFUSED, REFUSED },
	{ IF_SECURE_PORT, "444", "444", "444", "444" },
	{ IF_LAST_DIRTY_TS, "12", NULL, "12", "12" },
	{ IF_LAST_DIRTY_TS, "-1", NULL, REFUSED, REFUSED },
	{ IF_LAST_UPDATED_TS, "yesterday", NULL, REFUSED, REFUSED },
	{ IF_IS_COORDINATING, "true", NULL, "1", "1" },
	{ IF_IS_COORDINATING, "TRUE", NULL, "1", "1" },
	{ IF_DC_NAME, "Netflix", NULL, "Netflix", "Netflix" },
	{ IF_DC_NAME, "Moon", NULL, REFUSED, REFUSED },
	{ IF_L_DURATION, "45", NULL, "45", "45" },
	{ IF_L_REGISTRATION_TS, "-7", NULL, REFUSED, REFUSED },
	{ IF_PORT_ENABLED, "false", NULL, "0", "0" },
	{ IF_SECURE_PORT_ENABLED, "true", NULL, "1", "1" },
	{ IF_HOME_PAGE_URL, "http://h/", NULL, "http://h/", "http://h/" },
	/* Where Eureka's two codecs differ, and the table says so. */
	{ IF_STATUS, "up", NULL, "UNKNOWN", "UP" },
	{ IF_DC_NAME, "amazon", NULL, REFUSED, "Amazon" },
	{ IF_L_DURATION, "abc", NULL, REFUSED, "90" },
	{ IF_L_EVICTION_TS, "x", NULL, REFUSED, "0" },
	{ IF_L_RENEWAL_TS, "77", NULL, "77", "0" },
	{ IF_IS_COORDINATING, "yes", NULL, REFUSED, "0" },
	{ IF_PORT_ENABLED, "FALSE", NULL, "0", "1" },
	{ IF_SECURE_PORT_ENABLED, "TRUE", NULL, "1", "0" },
	/* JSON's own types: a number or a boolean is no name. */
	{ IF_STATUS, "1", "1", REFUSED, "UNKNOWN" },
	{ IF_ACTION_TYPE, "3", "3", REFUSED, "NONE" },
	{ IF_IP_ADDR, "true", "true", "true", "true" },
};

/* Each case of rules[] in both formats. */
START_TEST(test_rules)
{
	char	j[256], x[256];

	decode_both(rules[_i].f, rules[_i].text, rules[_i].json_raw, j, x,
	    sizeof j);
	ck_assert_msg(strcmp(j, rules[_i].json) == 0,
	    "%s \"%s\" from JSON: %s, want %s",
	    ifield_table[rules[_i].f].name, rules[_i].text, j,
	    rules[_i].json);
	ck_assert_msg(strcmp(x, rules[_i].xml) == 0,
	    "%s \"%s\" from XML: %s, want %s",
	    ifield_table[rules[_i].f].name, rules[_i].text, x,
	    rules[_i].xml);
}
END_TEST

/*
 * LeaseInfo's @JsonCreator: the legacy renewalTimestamp only counts
 * when lastRenewalTimestamp is not there, in either order.
 */
START_TEST(test_renewal_legacy)
{
	static const char *docs[] = {
	    "{\"instance\":{\"hostName\":\"h\",\"leaseInfo\":{"
	    "\"lastRenewalTimestamp\":7,\"renewalTimestamp\":5}}}",
	    "{\"instance\":{\"hostName\":\"h\",\"leaseInfo\":{"
	    "\"renewalTimestamp\":5,\"lastRenewalTimestamp\":7}}}",
	};
	struct instance	*in;
	char		*cause = NULL;
	size_t		 i;

	for (i = 0; i < 2; i++) {
		in = json_decode_instance(docs[i], strlen(docs[i]), NOW,
		    &cause);
		ck_assert_msg(in != NULL, "%s", cause);
		ck_assert_int_eq(in->lease.last_renewal_ts, 7);
		instance_free(in);
	}
}
END_TEST

/* An instance whose every field differs from its decoding default. */
static struct instance *
every_field(void)
{
	struct instance	*in = instance_new();

	in->instance_id = xstrdup("i-1");
	in->host_name = xstrdup("host.example");
	in->app = xstrdup("ORDER");
	in->ip_addr = xstrdup("10.0.0.1");
	in->sid = xstrdup("s-1");
	in->status = STATUS_STARTING;
	in->overridden_status = STATUS_OUT_OF_SERVICE;
	in->port = 8080;
	in->port_enabled = 0;
	in->secure_port = 8443;
	in->secure_port_enabled = 1;
	in->country_id = 7;
	in->app_group_name = xstrdup("GRP");
	in->home_page_url = xstrdup("http://h/");
	in->status_page_url = xstrdup("http://h/status");
	in->health_check_url = xstrdup("http://h/health");
	in->secure_health_check_url = xstrdup("https://h/health");
	in->vip_address = xstrdup("order,order-v2");
	in->secure_vip_address = xstrdup("order-s");
	in->is_coordinating = 1;
	in->last_updated_ts = 1700000000001LL;
	in->last_dirty_ts = 1700000000002LL;
	in->action_type = ACTION_MODIFIED;
	in->asg_name = xstrdup("asg-1");
	in->has_dc = 1;
	in->has_dc_name = 1;
	in->dc_name = DC_AMAZON;
	kvlist_set(&in->dc_metadata, "instance-id", "i-9");
	kvlist_set(&in->dc_metadata, "availability-zone", "az-1");
	in->has_lease = 1;
	in->lease.renewal_interval_secs = 11;
	in->lease.duration_secs = 33;
	in->lease.registration_ts = 1700000000003LL;
	in->lease.last_renewal_ts = 1700000000004LL;
	in->lease.eviction_ts = 1700000000005LL;
	in->lease.service_up_ts = 1700000000006LL;
	kvlist_set(&in->metadata, "zone", "a");
	kvlist_set(&in->metadata, "k_$", "v");
	return (in);
}

/*
 * Every field of the table through both formats: encoded in full,
 * decoded, and the same instance back from each (so from both alike).
 * The instance is checked to set each field away from its default, so
 * a field the encoders or decoders dropped would show.
 */
START_TEST(test_roundtrip_every_field)
{
	struct instance	*in = every_field(), *dflt, *out[2];
	struct buf	 enc, want, got;
	char		*cause = NULL, a[256], b[256];
	size_t		 f;
	int		 fmt;

	dflt = instance_decode_new();
	for (f = 0; f < IF_COUNT; f++) {
		if (f == IF_OVERRIDDEN_STATUS_LC || f == IF_L_RENEWAL_TS)
			continue;	/* another spelling of a field */
		field_text(in, (enum ifield)f, a, sizeof a);
		field_text(dflt, (enum ifield)f, b, sizeof b);
		ck_assert_msg(strcmp(a, b) != 0, "%s is its default",
		    ifield_table[f].name);
	}
	instance_free(dflt);

	buf_init(&want, 0);
	instance_dump(&want, in);
	for (fmt = 0; fmt < IFMT_COUNT; fmt++) {
		buf_init(&enc, 0);
		if (fmt == IFMT_JSON) {
			json_encode_instance_root(&enc, in);
			out[fmt] = json_decode_instance(enc.data, enc.len, NOW,
			    &cause);
		} else {
			xml_encode_instance(&enc, in, CODEC_FULL, 0);
			out[fmt] = xml_decode_instance(enc.data, enc.len, NOW,
			    &cause);
		}
		ck_assert_msg(out[fmt] != NULL, "%s: %s", fmt == IFMT_JSON ?
		    "json" : "xml", cause);
		buf_init(&got, 0);
		instance_dump(&got, out[fmt]);
		buf_addc(&got, '\0');
		buf_addc(&want, '\0');
		ck_assert_msg(strcmp(got.data, want.data) == 0,
		    "%s round trip:\n%s\nwant:\n%s",
		    fmt == IFMT_JSON ? "json" : "xml", got.data, want.data);
		want.len--;
		for (f = 0; f < IF_COUNT; f++) {
			field_text(in, (enum ifield)f, a, sizeof a);
			field_text(out[fmt], (enum ifield)f, b, sizeof b);
			ck_assert_msg(strcmp(a, b) == 0, "%s: %s, want %s",
			    ifield_table[f].name, b, a);
		}
		buf_free(&got);
		buf_free(&enc);
		instance_free(out[fmt]);
	}
	buf_free(&want);
	instance_free(in);
}
END_TEST

/*
 * A reference for ifield_parse_i64: strtoll on a NUL-terminated copy,
 * refusing what Long.parseLong refuses (empty, a sign alone, any other
 * byte, overflow, leading space unless trimmed).
 */
static int
ref_parse(const char *s, size_t len, int trim, int64_t *out)
{
	char		 b[64], *end;
	long long	 v;
	size_t		 i = 0, j = len;

	if (trim) {
		while (i < j && strchr(" \t\r\n", s[i]) != NULL)
			i++;
		while (j > i && strchr(" \t\r\n", s[j - 1]) != NULL)
			j--;
	}
	if (j - i >= sizeof b || i == j)
		return (-1);
	memcpy(b, s + i, j - i);
	b[j - i] = '\0';
	if (b[0] != '-' && b[0] != '+' && (b[0] < '0' || b[0] > '9'))
		return (-1);
	if ((b[0] == '-' || b[0] == '+') && (b[1] < '0' || b[1] > '9'))
		return (-1);
	errno = 0;
	v = strtoll(b, &end, 10);
	if (errno != 0 || *end != '\0')
		return (-1);
	*out = v;
	return (0);
}

/*
 * Every length from 1 to 21 digits (the eight-at-once steps, the byte
 * loop and the overflow check), with a sign, with a bad byte at every
 * position (one in each eight-byte block too), around the limits, in both
 * trims: the same answer as the reference.
 */
START_TEST(test_parse_i64)
{
	static const char *fixed[] = { "9223372036854775807",
	    "9223372036854775808", "-9223372036854775808",
	    "-9223372036854775809", "+9223372036854775807", "00000000",
	    "000000000000000000000000001", "99999999", "999999999999999999",
	    "1999999999999999999", "12345678/", "1234567:8", "-", "+", "",
	    " 42 ", "\t1700000000000\n", "1 2", "--1", "0x10", "1700000000000",
	    "12345678 ", " 12345678" };
	const char	*bad = "/:a -.\xff\x80";
	char		 s[40];
	int64_t		 a, b;
	size_t		 len, pos, k;
	int		 trim, sign, ra, rb;

	for (trim = 0; trim < 2; trim++) {
		for (k = 0; k < sizeof fixed / sizeof fixed[0]; k++) {
			len = strlen(fixed[k]);
			a = b = -7;
			ra = ifield_parse_i64(fixed[k], len, trim, &a);
			rb = ref_parse(fixed[k], len, trim, &b);
			ck_assert_msg(ra == rb && a == b, "%s (trim %d): %d %lld, "
			    "expected %d %lld", fixed[k], trim, ra, (long long)a,
			    rb, (long long)b);
		}
		for (sign = 0; sign < 3; sign++) {
			for (len = 1; len <= 21; len++) {
				s[0] = "x-+"[sign];
				for (pos = 0; pos < len; pos++)
					s[1 + pos] = (char)('1' + (pos * 7) % 9);
				for (pos = 0; pos <= len; pos++) {
					char	*p = sign ? s : s + 1;
					size_t	 n = sign ? len + 1 : len;

					if (pos < len)
						s[1 + pos] = bad[(pos + len) %
						    strlen(bad)];
					a = b = -7;
					ra = ifield_parse_i64(p, n, trim, &a);
					rb = ref_parse(p, n, trim, &b);
					ck_assert_msg(ra == rb && a == b,
					    "%.*s (trim %d): %d %lld, expected "
					    "%d %lld", (int)n, p, trim, ra,
					    (long long)a, rb, (long long)b);
					if (pos < len)
						s[1 + pos] = (char)('1' +
						    (pos * 7) % 9);
				}
			}
		}
	}
}
END_TEST

/* Every field is found under its name by its format, and only there. */
START_TEST(test_table_lookup)
{
	const struct ifield_def	*d;
	size_t			 f;
	int			 fmt;

	for (f = 0; f < IF_COUNT; f++) {
		d = &ifield_table[f];
		ck_assert_ptr_nonnull(d->name);
		if (d->parent == IFP_PORT)
			continue;	/* the port's own member or attribute */
		for (fmt = 0; fmt < IFMT_COUNT; fmt++) {
			if (d->rule[fmt] & IFR_ABSENT)
				ck_assert_int_eq(ifield_find(d->parent, fmt,
				    d->name, strlen(d->name)), IF_NONE);
			else
				ck_assert_int_eq(ifield_find(d->parent, fmt,
				    d->name, strlen(d->name)), f);
		}
	}
	ck_assert_int_eq(ifield_find(IFP_INSTANCE, IFMT_XML, "nope", 4),
	    IF_NONE);
}
END_TEST

/* The suite. */
static Suite *
fields_suite(void)
{
	Suite	*s = suite_create("instance_fields");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, test_status_per_format);
	tcase_add_loop_test(tc, test_rules, 0,
	    (int)(sizeof rules / sizeof rules[0]));
	tcase_add_test(tc, test_renewal_legacy);
	tcase_add_test(tc, test_roundtrip_every_field);
	tcase_add_test(tc, test_table_lookup);
	tcase_add_test(tc, test_parse_i64);
	suite_add_tcase(s, tc);
	return (s);
}

/* Run the suite. */
int
main(void)
{
	return (check_run(fields_suite()));
}
