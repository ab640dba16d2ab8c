/*
 * json_enc.c: Eureka's JSON wire format, the writing side (spec §4.1,
 * §4.3, §4.1.9); the reading side is json_dec.c.
 *
 * The encoders write bytes by hand into a struct buf, in exactly the key
 * order and with exactly the value types of the Java legacy codec
 * (EurekaJacksonCodec), so that our output is byte-for-byte what a Java
 * server would send; json_encode_applications is built from the same
 * open/close pieces the server cache stitches with, so both agree.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "codec.h"
#include "instance.h"
#include "json.h"
#include "repl.h"
#include "xmalloc.h"

static void	json_add_instance_full(struct buf *, const struct instance *);
static void	json_add_instance_compact(struct buf *,
		    const struct instance *);
static void	json_add_port(struct buf *, const char *, int32_t, int);
static void	json_add_dc(struct buf *, const struct instance *, int);
static void	json_add_map(struct buf *, const struct kvlist *, int);
static void	json_add_app_body(struct buf *, const struct application *,
		    int);

/* Jackson's short escapes for the control characters that have one. */
static const char json_short_esc[32] = {
	['\b'] = 'b', ['\t'] = 't', ['\n'] = 'n', ['\f'] = 'f', ['\r'] = 'r',
};

/*
 * Bytes at the start of s (len of them) that need no escape, found eight
 * at a time: a word holds none of '"', '\\' or a control byte when no
 * byte of it is below 0x20 (borrow test) and none equals either quote
 * character (zero-byte test of the word xor the character).
 */
static size_t
json_plain_prefix(const char *s, size_t len)
{
	const uint64_t	ones = 0x0101010101010101ULL, high = ones << 7;
	uint64_t	w, q, bs;
	size_t		i;

	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&w, s + i, sizeof w);
		q = w ^ (ones * '"');
		bs = w ^ (ones * '\\');
		if ((((w - ones * 0x20) & ~w) | ((q - ones) & ~q) |
		    ((bs - ones) & ~bs)) & high)
			break;
	}
	return (i);
}

/* Append s as a JSON string literal with Jackson's escaping. */
void
json_add_string(struct buf *b, const char *s)
{
	static const char	 hex[] = "0123456789ABCDEF";
	const char		*run;
	unsigned char		 c;
	char			 esc[6];
	size_t			 len;

	buf_addc(b, '"');
	if (s == NULL)
		s = "";
	run = s;
	len = strlen(s);
	s += json_plain_prefix(s, len);
	for (; (c = (unsigned char)*s) != '\0'; s++) {
		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		/* Copy the plain run before this byte in one go. */
		if (s > run)
			buf_add(b, run, (size_t)(s - run));
		run = s + 1;
		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			buf_add(b, esc, 2);
		} else if (json_short_esc[c] != '\0') {
			esc[0] = '\\';
			esc[1] = json_short_esc[c];
			buf_add(b, esc, 2);
		} else {
			buf_add(b, "\\u00", 4);
			esc[0] = hex[c >> 4];
			esc[1] = hex[c & 0xf];
			buf_add(b, esc, 2);
		}
	}
	if (s > run)
		buf_add(b, run, (size_t)(s - run));
	buf_addc(b, '"');
}

/* A member of an object being written: "key":"value", or "key":null. */
void
json_add_member(struct buf *b, const char *key, const char *value,
    int comma)
{
	if (comma)
		buf_addc(b, ',');
	json_add_string(b, key);
	buf_addc(b, ':');
	if (value == NULL)
		buf_adds(b, "null");
	else
		json_add_string(b, value);
}

/* key (a literal with its quotes, colon and any comma) and a string. */
static void
json_add_kv(struct buf *b, const char *key, const char *value)
{
	buf_adds(b, key);
	json_add_string(b, value);
}

/* A port object: "$" is a number, "@enabled" a string (§4.1.4 item 8). */
static void
json_add_port(struct buf *b, const char *key, int32_t port, int enabled)
{
	buf_adds(b, key);
	buf_adds(b, "{\"$\":");
	buf_add_i64(b, port);
	buf_adds(b, enabled ? ",\"@enabled\":\"true\"}" :
	    ",\"@enabled\":\"false\"}");
}

/* Is key one of the AmazonInfo entries the compact codec keeps (§4.3)? */
static int
json_compact_dc_key(const char *key)
{
	static const char	*keep[] = { "instance-id", "public-ipv4",
	    "public-hostname", "local-ipv4", "availability-zone" };
	size_t			 i;

	for (i = 0; i < sizeof keep / sizeof keep[0]; i++) {
		if (strcmp(key, keep[i]) == 0)
			return (1);
	}
	return (0);
}

/* A string map; compact != 0 filters to the compact Amazon keys. */
static void
json_add_map(struct buf *b, const struct kvlist *kv, int compact)
{
	size_t	i;
	int	first = 1;

	buf_addc(b, '{');
	for (i = 0; i < kv->n; i++) {
		if (compact && !json_compact_dc_key(kv->v[i].key))
			continue;
		if (!first)
			buf_addc(b, ',');
		first = 0;
		json_add_string(b, kv->v[i].key);
		buf_addc(b, ':');
		json_add_string(b, kv->v[i].value);
	}
	buf_addc(b, '}');
}

/* "dataCenterInfo" with its Jackson type id (§4.1.5). */
static void
json_add_dc(struct buf *b, const struct instance *in, int compact)
{
	buf_adds(b, ",\"dataCenterInfo\":{\"@class\":");
	if (in->dc_name == DC_AMAZON) {
		buf_adds(b, "\"com.netflix.appinfo.AmazonInfo\",\"name\":"
		    "\"Amazon\",\"metadata\":");
		json_add_map(b, &in->dc_metadata, compact);
		buf_addc(b, '}');
		return;
	}
	buf_adds(b, "\"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo\""
	    ",\"name\":");
	json_add_string(b, dc_name_str(in->dc_name));
	buf_addc(b, '}');
}

/* The legacy codec's instance object, keys in §4.1.4 order. */
static void
json_add_instance_full(struct buf *b, const struct instance *in)
{
	const struct lease_info	*l = &in->lease;
	const char		*at;

	buf_addc(b, '{');
	if (in->instance_id != NULL) {
		json_add_kv(b, "\"instanceId\":", in->instance_id);
		buf_addc(b, ',');
	}
	json_add_kv(b, "\"hostName\":", in->host_name);
	json_add_kv(b, ",\"app\":", in->app);
	json_add_kv(b, ",\"ipAddr\":", in->ip_addr);
	if (instance_sid_shown(in->sid))
		json_add_kv(b, ",\"sid\":", in->sid);
	json_add_kv(b, ",\"status\":", instance_status_name(in->status));
	json_add_kv(b, ",\"overriddenStatus\":",
	    instance_status_name(in->overridden_status));
	json_add_port(b, ",\"port\":", in->port, in->port_enabled);
	json_add_port(b, ",\"securePort\":", in->secure_port,
	    in->secure_port_enabled);
	buf_adds(b, ",\"countryId\":");
	buf_add_i64(b, in->country_id);
	if (in->has_dc)
		json_add_dc(b, in, 0);
	if (in->has_lease) {
		buf_adds(b, ",\"leaseInfo\":{\"renewalIntervalInSecs\":");
		buf_add_i64(b, l->renewal_interval_secs);
		buf_adds(b, ",\"durationInSecs\":");
		buf_add_i64(b, l->duration_secs);
		buf_adds(b, ",\"registrationTimestamp\":");
		buf_add_i64(b, l->registration_ts);
		buf_adds(b, ",\"lastRenewalTimestamp\":");
		buf_add_i64(b, l->last_renewal_ts);
		buf_adds(b, ",\"evictionTimestamp\":");
		buf_add_i64(b, l->eviction_ts);
		buf_adds(b, ",\"serviceUpTimestamp\":");
		buf_add_i64(b, l->service_up_ts);
		buf_addc(b, '}');
	}
	buf_adds(b, ",\"metadata\":");
	if (in->metadata.n == 0)
		buf_adds(b, "{\"@class\":\"java.util.Collections$EmptyMap\"}");
	else
		json_add_map(b, &in->metadata, 0);
	/* The @Auto fields: String.valueOf() of each, so all strings. */
	if (in->app_group_name != NULL)
		json_add_kv(b, ",\"appGroupName\":", in->app_group_name);
	if (in->home_page_url != NULL)
		json_add_kv(b, ",\"homePageUrl\":", in->home_page_url);
	if (in->status_page_url != NULL)
		json_add_kv(b, ",\"statusPageUrl\":", in->status_page_url);
	if (in->health_check_url != NULL)
		json_add_kv(b, ",\"healthCheckUrl\":", in->health_check_url);
	if (in->secure_health_check_url != NULL)
		json_add_kv(b, ",\"secureHealthCheckUrl\":",
		    in->secure_health_check_url);
	if (in->vip_address != NULL)
		json_add_kv(b, ",\"vipAddress\":", in->vip_address);
	if (in->secure_vip_address != NULL)
		json_add_kv(b, ",\"secureVipAddress\":",
		    in->secure_vip_address);
	buf_adds(b, in->is_coordinating ?
	    ",\"isCoordinatingDiscoveryServer\":\"true\"" :
	    ",\"isCoordinatingDiscoveryServer\":\"false\"");
	buf_adds(b, ",\"lastUpdatedTimestamp\":\"");
	buf_add_i64(b, in->last_updated_ts);
	buf_adds(b, "\",\"lastDirtyTimestamp\":\"");
	buf_add_i64(b, in->last_dirty_ts);
	buf_addc(b, '"');
	if ((at = action_type_name(in->action_type)) != NULL)
		json_add_kv(b, ",\"actionType\":", at);
	if (in->asg_name != NULL)
		json_add_kv(b, ",\"asgName\":", in->asg_name);
	buf_addc(b, '}');
}

/*
 * The compact ("mini") instance of §4.3: the bean codec's reduced field
 * set, lastUpdatedTimestamp as a number, port and securePort last.
 */
static void
json_add_instance_compact(struct buf *b, const struct instance *in)
{
	const char	*at;

	buf_addc(b, '{');
	if (in->instance_id != NULL) {
		json_add_kv(b, "\"instanceId\":", in->instance_id);
		buf_addc(b, ',');
	}
	json_add_kv(b, "\"app\":", in->app);
	if (in->app_group_name != NULL)
		json_add_kv(b, ",\"appGroupName\":", in->app_group_name);
	json_add_kv(b, ",\"ipAddr\":", in->ip_addr);
	json_add_kv(b, ",\"hostName\":", in->host_name);
	json_add_kv(b, ",\"status\":", instance_status_name(in->status));
	if (in->has_dc)
		json_add_dc(b, in, 1);
	if (in->vip_address != NULL)
		json_add_kv(b, ",\"vipAddress\":", in->vip_address);
	if (in->secure_vip_address != NULL)
		json_add_kv(b, ",\"secureVipAddress\":",
		    in->secure_vip_address);
	buf_adds(b, ",\"lastUpdatedTimestamp\":");
	buf_add_i64(b, in->last_updated_ts);
	if ((at = action_type_name(in->action_type)) != NULL)
		json_add_kv(b, ",\"actionType\":", at);
	if (in->asg_name != NULL)
		json_add_kv(b, ",\"asgName\":", in->asg_name);
	json_add_port(b, ",\"port\":", in->port, in->port_enabled);
	json_add_port(b, ",\"securePort\":", in->secure_port,
	    in->secure_port_enabled);
	buf_addc(b, '}');
}

/* One instance object, not root-wrapped. */
void
json_encode_instance(struct buf *b, const struct instance *in, int flags)
{
	if (flags & CODEC_COMPACT)
		json_add_instance_compact(b, in);
	else
		json_add_instance_full(b, in);
}

/* {"instance":{...}}: entities returned directly are always full. */
void
json_encode_instance_root(struct buf *b, const struct instance *in)
{
	buf_adds(b, "{\"instance\":");
	json_add_instance_full(b, in);
	buf_addc(b, '}');
}

/* Start an application object: {"name":"X","instance":[ */
void
json_app_open(struct buf *b, const char *name)
{
	json_add_kv(b, "{\"name\":", name);
	buf_adds(b, ",\"instance\":[");
}

/* End an application object. */
void
json_app_close(struct buf *b)
{
	buf_adds(b, "]}");
}

/* versions__delta and apps__hashcode, both strings (§4.1.2). */
static void
json_add_apps_header(struct buf *b, int64_t version, const char *hashcode)
{
	buf_adds(b, "\"versions__delta\":\"");
	buf_add_i64(b, version);
	buf_adds(b, "\",\"apps__hashcode\":");
	json_add_string(b, hashcode != NULL ? hashcode : "");
}

/*
 * Start a registry document. The legacy codec writes version and hash
 * first; the compact bean codec writes them after the application array.
 */
void
json_apps_open(struct buf *b, int flags, int64_t version,
    const char *hashcode)
{
	buf_adds(b, "{\"applications\":{");
	if (!(flags & CODEC_COMPACT)) {
		json_add_apps_header(b, version, hashcode);
		buf_addc(b, ',');
	}
	buf_adds(b, "\"application\":[");
}

/* End a registry document. */
void
json_apps_close(struct buf *b, int flags, int64_t version,
    const char *hashcode)
{
	buf_addc(b, ']');
	if (flags & CODEC_COMPACT) {
		buf_addc(b, ',');
		json_add_apps_header(b, version, hashcode);
	}
	buf_adds(b, "}}");
}

/* An application object's bytes, with its instances. */
static void
json_add_app_body(struct buf *b, const struct application *a, int flags)
{
	size_t	i;

	json_app_open(b, a->name);
	for (i = 0; i < a->n; i++) {
		if (i > 0)
			buf_addc(b, ',');
		json_encode_instance(b, a->instances[i], flags);
	}
	json_app_close(b);
}

/* An application; {"application":{...}} when root != 0. */
void
json_encode_application(struct buf *b, const struct application *a,
    int flags, int root)
{
	if (root)
		buf_adds(b, "{\"application\":");
	json_add_app_body(b, a, flags);
	if (root)
		buf_addc(b, '}');
}

/* A whole registry, stitched exactly as the server cache does it. */
void
json_encode_applications(struct buf *b, const struct applications *as,
    int flags)
{
	size_t	i;

	json_apps_open(b, flags, as->versions_delta, as->apps_hashcode);
	for (i = 0; i < as->n; i++) {
		if (i > 0)
			buf_addc(b, ',');
		json_add_app_body(b, as->apps[i], flags);
	}
	json_apps_close(b, flags, as->versions_delta, as->apps_hashcode);
}

/* json_app_open for the codec interface (JSON has no indentation). */
static void
json_codec_app_open(struct buf *b, const char *name, int indent)
{
	(void)indent;
	json_app_open(b, name);
}

/* json_app_close for the codec interface. */
static void
json_codec_app_close(struct buf *b, int indent)
{
	(void)indent;
	json_app_close(b);
}

/* json_encode_instance for the codec interface. */
static void
json_codec_instance(struct buf *b, const struct instance *in, int flags,
    int indent)
{
	(void)indent;
	json_encode_instance(b, in, flags);
}

const struct codec json_codec = {
	.sep = ",",
	.sep_around = 0,
	.app_doc_open = "{\"application\":",
	.app_doc_close = "}",
	.apps_open = json_apps_open,
	.apps_close = json_apps_close,
	.app_open = json_codec_app_open,
	.app_close = json_codec_app_close,
	.encode_instance = json_codec_instance,
	.encode_applications = json_encode_applications,
};

/* ReplicationList: bean order, nulls omitted, timestamp a number. */
void
json_encode_repl_list(struct buf *b, const struct repl_list *l)
{
	const struct repl_item	*ri;
	size_t			 i;
	int			 first;

	buf_adds(b, "{\"replicationList\":[");
	for (i = 0; i < l->n; i++) {
		ri = &l->items[i];
		if (i > 0)
			buf_addc(b, ',');
		buf_addc(b, '{');
		first = 1;
		if (ri->app_name != NULL) {
			json_add_kv(b, "\"appName\":", ri->app_name);
			first = 0;
		}
		if (ri->id != NULL) {
			json_add_kv(b, first ? "\"id\":" : ",\"id\":", ri->id);
			first = 0;
		}
		if (ri->has_last_dirty) {
			buf_adds(b, first ? "\"lastDirtyTimestamp\":" :
			    ",\"lastDirtyTimestamp\":");
			buf_add_i64(b, ri->last_dirty_ts);
			first = 0;
		}
		if (ri->has_overridden) {
			json_add_kv(b, first ? "\"overriddenStatus\":" :
			    ",\"overriddenStatus\":",
			    instance_status_name(ri->overridden_status));
			first = 0;
		}
		if (ri->has_status) {
			json_add_kv(b, first ? "\"status\":" : ",\"status\":",
			    instance_status_name(ri->status));
			first = 0;
		}
		if (ri->info != NULL) {
			buf_adds(b, first ? "\"instanceInfo\":" :
			    ",\"instanceInfo\":");
			json_add_instance_full(b, ri->info);
			first = 0;
		}
		json_add_kv(b, first ? "\"action\":" : ",\"action\":",
		    repl_action_name(ri->action));
		/* heureka peers only: Java Eureka's bean has no such fields. */
		if (l->origin && ri->origin_node != NULL) {
			json_add_kv(b, ",\"heurekaOriginNode\":",
			    ri->origin_node);
			json_add_kv(b, ",\"heurekaOriginUser\":",
			    ri->origin_user != NULL ? ri->origin_user : "");
			json_add_kv(b, ",\"heurekaOriginAddress\":",
			    ri->origin_addr != NULL ? ri->origin_addr : "");
		}
		buf_addc(b, '}');
	}
	buf_adds(b, "]}");
}

/* ReplicationListResponse: one element per request item, in order. */
void
json_encode_repl_response(struct buf *b, const struct repl_response *r)
{
	size_t	i;

	buf_adds(b, "{\"responseList\":[");
	for (i = 0; i < r->n; i++) {
		if (i > 0)
			buf_addc(b, ',');
		/* Most answers of a batch are a bare 200: one append. */
		if (r->items[i].status_code == 200 &&
		    r->items[i].entity == NULL) {
			buf_adds(b, "{\"statusCode\":200}");
			continue;
		}
		buf_adds(b, "{\"statusCode\":");
		buf_add_i64(b, r->items[i].status_code);
		if (r->items[i].entity != NULL) {
			buf_adds(b, ",\"responseEntity\":");
			json_add_instance_full(b, r->items[i].entity);
		}
		buf_addc(b, '}');
	}
	buf_adds(b, "]}");
}
