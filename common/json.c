/*
 * json.c: Eureka's JSON wire format (spec §4.1, §4.3, §4.1.9).
 *
 * The encoders write bytes by hand into a struct buf, in exactly the key
 * order and with exactly the value types of the Java legacy codec
 * (EurekaJacksonCodec), so that our output is byte-for-byte what a Java
 * server would send; json_encode_applications is built from the same
 * open/close pieces the server cache stitches with, so both agree.
 *
 * The decoders drive yajl's callback parser through a small state machine:
 * a stack of frames, one per open JSON object or array, each saying what
 * that container is (an instance, its port, its lease, a metadata map, an
 * unknown value being skipped...). The active key is kept once, in the
 * parser context, since a key is always consumed by the very next value.
 * Every object being built is reachable from the frame stack or the result,
 * so an error at any point frees everything on one exit path.
 *
 * An instance is decoded into the context's instance builder (its
 * strings in an arena, its maps' arrays kept across the items of one
 * document) and packed into one block when its object closes (instance.h,
 * "Packed instances").
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <yajl/yajl_parse.h>

#include "buf.h"
#include "codec.h"
#include "instance.h"
#include "json.h"
#include "log.h"
#include "repl.h"
#include "xmalloc.h"

/* What an open container on the parse stack is. */
enum frame_kind {
	F_SKIP = 0,		/* unknown value: ignore everything inside */
	F_ROOT_INSTANCE,	/* {"instance":{...}} or a bare instance */
	F_ROOT_APP,		/* {"application":{...}} */
	F_ROOT_APPS,		/* {"applications":{...}} */
	F_ROOT_REPL,		/* {"replicationList":[...]} */
	F_ROOT_RESP,		/* {"responseList":[...]} */
	F_INSTANCE,
	F_PORT,
	F_DC,
	F_META,			/* instance or Amazon metadata map */
	F_LEASE,
	F_APPS,
	F_APP_ARRAY,
	F_APP,
	F_INST_ARRAY,
	F_REPL_ARRAY,
	F_REPL_ITEM,
	F_RESP_ARRAY,
	F_RESP_ITEM,
};

/* What the document's top level must be. */
enum json_doc {
	DOC_INSTANCE,
	DOC_APPLICATION,
	DOC_APPLICATIONS,
	DOC_REPL_LIST,
	DOC_REPL_RESPONSE,
};

struct frame {
	enum frame_kind			 kind;
	int				 secure;	/* F_PORT */
	struct instance			*in;	/* &jctx.ib.in, or NULL */
	struct kvlist			*kv;		/* F_META */
	struct application		*app;		/* owned if F_APP */
	struct applications		*apps;		/* F_APPS */
	struct repl_item		*ri;		/* F_REPL_ITEM */
	struct repl_response_item	*rsi;		/* F_RESP_ITEM */
	int				 has_action;	/* F_REPL_ITEM */
	uint64_t			 seen;	/* known keys met, by index */
};

/* One scalar value as yajl hands it over. */
enum jv_type {
	JV_NULL,
	JV_BOOL,
	JV_NUM,
	JV_STR,
};

struct jv {
	enum jv_type	 type;
	int		 b;
	const char	*s;		/* NUM and STR: yajl's text, len bytes */
	size_t		 len;		/* (checked, not NUL-terminated) */
};

/* One decode's state: jctx_init() sets all but st[] and the buffers. */
struct jctx {
	enum json_doc		 doc;
	struct frame		 st[JSON_MAX_DEPTH + 1];
	int			 depth;		/* frames in use */
	const char		*key;		/* pending key or NULL */
	char			*key_owned;	/* key's allocation, if any */
	int			 kid;		/* its enum json_key */
	char			*err;		/* our own cause */
	int			 found;		/* the wanted object was seen */
	int			 done;		/* the root object has closed */
	size_t			 root_end;	/* input offset past its close */
	int64_t			 now;		/* wall ms, for the defaults */
	char			 scratch[256];	/* short text for jv_text */
	char			 keybuf[64];	/* a short key's text */

	struct instance		*inst;		/* DOC_INSTANCE result */
	struct application	*app;		/* DOC_APPLICATION result */
	struct applications	*apps;		/* DOC_APPLICATIONS result */
	struct repl_list	*rl;
	struct repl_response	*rr;

	struct instance_builder	 ib;		/* the instance being decoded */
};

/*
 * A thread's yajl handle, kept from one document to the next (allocating,
 * configuring and freeing one is some 1.5k instructions, as much as
 * decoding a replicated heartbeat's item); the callbacks' context is
 * this, and cx the decode being served. yajl 2.1 has no reset: the handle
 * parses documents one after the other as yajl_allow_multiple_values
 * lets it, the decoder refusing anything after the root object itself
 * (JSON_TRAILING), and it is freed after a failed parse (its state is an
 * error) and after a document over JSON_PARSER_KEEP bytes (its buffers
 * may have grown with it).
 */
struct json_parser {
	yajl_handle	 h;
	struct jctx	*cx;
};

#define JSON_TRAILING	"trailing garbage after the JSON document"
#define JSON_PARSER_KEEP	(64 * 1024)

static void	json_add_instance_full(struct buf *, const struct instance *);
static void	json_add_instance_compact(struct buf *,
		    const struct instance *);
static void	json_add_port(struct buf *, const char *, int32_t, int);
static void	json_add_dc(struct buf *, const struct instance *, int);
static void	json_add_map(struct buf *, const struct kvlist *, int);
static void	json_add_app_body(struct buf *, const struct application *,
		    int);
static int	jctx_fail(struct jctx *, const char *, ...)
		    __attribute__((format(printf, 2, 3)));
static int	jctx_scalar(struct jctx *, const struct jv *);
static int	jctx_open(struct jctx *, int);
static int	jctx_close(struct jctx *);
static int	json_parse(struct jctx *, const char *, size_t, char **);
static void	jctx_cleanup(struct jctx *);

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

/* --- decoding ---------------------------------------------------------- */

/* Record the first error and stop the parser (callbacks return this). */
static int
jctx_fail(struct jctx *cx, const char *fmt, ...)
{
	va_list	ap;

	if (cx->err == NULL) {
		va_start(ap, fmt);
		xvasprintf(&cx->err, fmt, ap);
		va_end(ap);
	}
	return (0);
}

/*
 * Parse the len bytes at s as one whole decimal long, as Long.parseLong
 * does; -1 if they are not one. Up to 18 digits cannot overflow; past
 * them each digit is checked against the limit's tenth and last digit.
 */
static int
json_parse_i64(const char *s, size_t len, int64_t *out)
{
	const char	*end = s + len, *fast;
	uint64_t	 v = 0, lim = (uint64_t)INT64_MAX, d;
	int		 neg = 0;

	if (s < end && (*s == '-' || *s == '+')) {
		neg = *s == '-';
		if (neg)
			lim++;
		s++;
	}
	if (s == end)
		return (-1);
	fast = end - s > 18 ? s + 18 : end;
	for (; s < fast; s++) {
		if ((d = (uint64_t)(unsigned char)*s - '0') > 9)
			return (-1);
		v = v * 10 + d;
	}
	for (; s < end; s++) {
		if ((d = (uint64_t)(unsigned char)*s - '0') > 9)
			return (-1);
		if (v > lim / 10 || (v == lim / 10 && d > lim % 10))
			return (-1);
		v = v * 10 + d;
	}
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return (0);
}

/* A long from a JSON number or a numeric string (§4.1.8). */
static int
jv_i64(const struct jv *v, int64_t *out)
{
	if (v->type != JV_NUM && v->type != JV_STR)
		return (-1);
	return (json_parse_i64(v->s, v->len, out));
}

/* An int from a JSON number or a numeric string. */
static int
jv_i32(const struct jv *v, int32_t *out)
{
	int64_t	n;

	if (jv_i64(v, &n) != 0 || n < INT32_MIN || n > INT32_MAX)
		return (-1);
	*out = (int32_t)n;
	return (0);
}

/*
 * A timestamp (ms since the epoch): a long from 0 to the end of year 9999.
 * A negative or larger one is no time any client sent; Java's own codec
 * would store it and every later comparison would go wrong.
 */
static int
jv_ts(const struct jv *v, int64_t *out)
{
	int64_t	n;

	if (jv_i64(v, &n) != 0 || n < 0 || n > INSTANCE_TS_MAX)
		return (-1);
	*out = n;
	return (0);
}

/*
 * A boolean from true/false or the strings "true"/"false" (any case): the
 * Java codecs write both. Anything else is -1.
 */
static int
jv_bool(const struct jv *v)
{
	uint32_t	w;

	if (v->type == JV_BOOL)
		return (v->b);
	if (v->type != JV_STR || (v->len != 4 && v->len != 5))
		return (-1);
	/*
	 * Letters only: a byte ORed with 0x20 is the lower-case letter c
	 * just when it is c or its capital, so this is strncasecmp's answer.
	 */
	memcpy(&w, v->s, 4);
	w |= 0x20202020;
	if (v->len == 4 && memcmp(&w, "true", 4) == 0)
		return (1);
	if (v->len == 5 && memcmp(&w, "fals", 4) == 0 &&
	    (v->s[4] | 0x20) == 'e')
		return (0);
	return (-1);
}

/*
 * Store a scalar as an owned string (numbers and booleans as text),
 * copied once from yajl's text; a value already there is replaced.
 */
static void
jv_store(char **dst, const struct jv *v)
{
	char	*s;

	if (v->type == JV_BOOL)
		s = xstrdup(v->b ? "true" : "false");
	else {
		s = xmalloc(v->len + 1);
		memcpy(s, v->s, v->len);
		s[v->len] = '\0';
	}
	if (*dst != NULL)
		free(*dst);
	*dst = s;
}

/*
 * Store a replication item's name (appName, id) in its list's name
 * blocks; the decoder never sees one twice (jctx_key_once).
 */
static void
jv_store_name(struct repl_list *l, char **dst, const struct jv *v)
{
	if (v->type == JV_BOOL)
		*dst = repl_list_name(l, v->b ? "true" : "false",
		    v->b ? 4 : 5);
	else
		*dst = repl_list_name(l, v->s, v->len);
}

/* A scalar's text in the builder's arena, as jv_store would write it. */
static char *
jctx_text(struct jctx *cx, const struct jv *v)
{
	if (v->type == JV_BOOL)
		return (v->b ? instance_builder_str(&cx->ib, "true", 4) :
		    instance_builder_str(&cx->ib, "false", 5));
	return (instance_builder_str(&cx->ib, v->s, v->len));
}

/*
 * A short value's text NUL-terminated in cx->scratch, for the enum
 * parsers; NULL when it does not fit (no enum name is that long).
 */
static const char *
jv_text(struct jctx *cx, const struct jv *v)
{
	if (v->len >= sizeof cx->scratch)
		return (NULL);
	memcpy(cx->scratch, v->s, v->len);
	cx->scratch[v->len] = '\0';
	return (cx->scratch);
}

/*
 * A status name; an unknown name is UNKNOWN as in Eureka (§4.1.8), but a
 * number or a boolean is no name at all: -1.
 */
static int
jv_status(struct jctx *cx, const struct jv *v, enum instance_status *out)
{
	const char	*name;

	if (v->type != JV_STR)
		return (-1);
	if ((name = jv_text(cx, v)) == NULL ||
	    instance_status_parse(name, out) != 0)
		*out = STATUS_UNKNOWN;
	return (0);
}

/*
 * Every key the decoder gives a meaning to, so that a repeated one can be
 * refused (a parser that kept the first and one that kept the last would
 * read two different instances from the same bytes). Keys it ignores may
 * repeat. At most 64 (a bit each in struct frame's seen). The key of each
 * member is looked up once, when yajl hands it over (json_key_find), and
 * everything after dispatches on its index.
 */
#define JSON_KEYS(X)							\
	X(K_INSTANCE_ID, "instanceId")					\
	X(K_HOST_NAME, "hostName")					\
	X(K_APP, "app")							\
	X(K_IP_ADDR, "ipAddr")						\
	X(K_SID, "sid")							\
	X(K_STATUS, "status")						\
	X(K_OVERRIDDEN_STATUS, "overriddenStatus")			\
	X(K_OVERRIDDEN_STATUS_LC, "overriddenstatus")			\
	X(K_COUNTRY_ID, "countryId")					\
	X(K_APP_GROUP_NAME, "appGroupName")				\
	X(K_HOME_PAGE_URL, "homePageUrl")				\
	X(K_STATUS_PAGE_URL, "statusPageUrl")				\
	X(K_HEALTH_CHECK_URL, "healthCheckUrl")				\
	X(K_SECURE_HEALTH_CHECK_URL, "secureHealthCheckUrl")		\
	X(K_VIP_ADDRESS, "vipAddress")					\
	X(K_SECURE_VIP_ADDRESS, "secureVipAddress")			\
	X(K_IS_COORDINATING, "isCoordinatingDiscoveryServer")		\
	X(K_LAST_UPDATED_TS, "lastUpdatedTimestamp")			\
	X(K_LAST_DIRTY_TS, "lastDirtyTimestamp")			\
	X(K_ACTION_TYPE, "actionType")					\
	X(K_ASG_NAME, "asgName")					\
	X(K_PORT, "port")						\
	X(K_SECURE_PORT, "securePort")					\
	X(K_DATA_CENTER_INFO, "dataCenterInfo")				\
	X(K_LEASE_INFO, "leaseInfo")					\
	X(K_METADATA, "metadata")					\
	X(K_INSTANCE, "instance")					\
	X(K_DOLLAR, "$")						\
	X(K_ENABLED, "@enabled")					\
	X(K_NAME, "name")						\
	X(K_RENEWAL_INTERVAL, "renewalIntervalInSecs")			\
	X(K_DURATION, "durationInSecs")					\
	X(K_REGISTRATION_TS, "registrationTimestamp")			\
	X(K_LAST_RENEWAL_TS, "lastRenewalTimestamp")			\
	X(K_RENEWAL_TS, "renewalTimestamp")				\
	X(K_EVICTION_TS, "evictionTimestamp")				\
	X(K_SERVICE_UP_TS, "serviceUpTimestamp")			\
	X(K_VERSIONS_DELTA, "versions__delta")				\
	X(K_APPS_HASHCODE, "apps__hashcode")				\
	X(K_APPLICATION, "application")					\
	X(K_APPLICATIONS, "applications")				\
	X(K_APP_NAME, "appName")					\
	X(K_ID, "id")							\
	X(K_ACTION, "action")						\
	X(K_INSTANCE_INFO, "instanceInfo")				\
	X(K_REPLICATION_LIST, "replicationList")			\
	X(K_STATUS_CODE, "statusCode")					\
	X(K_RESPONSE_ENTITY, "responseEntity")				\
	X(K_RESPONSE_LIST, "responseList")				\
	X(K_ORIGIN_NODE, "heurekaOriginNode")				\
	X(K_ORIGIN_USER, "heurekaOriginUser")				\
	X(K_ORIGIN_ADDR, "heurekaOriginAddress")

#define JSON_KEY_ENUM(id, text)	id,
enum json_key {
	JSON_KEYS(JSON_KEY_ENUM)
	K_OTHER			/* a key we give no meaning, or none */
};
#undef JSON_KEY_ENUM

#define JSON_KEY_TEXT(id, text)	text,
static const char *const json_known_keys[] = { JSON_KEYS(JSON_KEY_TEXT) };
#undef JSON_KEY_TEXT

#define JSON_NKNOWN	((size_t)K_OTHER)
#define JSON_KEY_MAXLEN	31
#define JSON_KEY_SLOT_BITS 7
#define JSON_KEY_SLOTS	(1 << JSON_KEY_SLOT_BITS)

/*
 * json_known_keys by a hash of the length and the first bytes: the
 * first index per slot and the next index of the same slot, each +1 (0
 * ends a chain), each key's length and its bytes as up to four words
 * (json_key_words). Built once per process (pthread_once: the client
 * library decodes from its own threads); a key then costs the hash and,
 * almost always, one comparison of one to four words: no known key
 * shares its slot with more than one other (six pairs do).
 */
static uint8_t		json_key_head[JSON_KEY_SLOTS];
static uint8_t		json_key_next[JSON_NKNOWN];
static uint8_t		json_key_len[JSON_NKNOWN];
static uint64_t		json_key_w[JSON_NKNOWN][4];
static pthread_once_t	json_once = PTHREAD_ONCE_INIT;
static pthread_key_t	json_parser_key;	/* a thread's json_parser */

/*
 * The slot of a key of len bytes whose first word (json_key_words) is w0:
 * a multiplicative hash of the two, its top JSON_KEY_SLOT_BITS bits.
 */
static inline size_t
json_key_slot(uint64_t w0, size_t len)
{
	return (((w0 ^ ((uint64_t)len << 56)) * 0x9e3779b97f4a7c15ULL) >>
	    (64 - JSON_KEY_SLOT_BITS));
}

/* The 8 bytes at p as a word. */
static inline uint64_t
json_load8(const char *p)
{
	uint64_t	w;

	memcpy(&w, p, sizeof w);
	return (w);
}

/*
 * The len bytes at k (1 to JSON_KEY_MAXLEN) as words that, with the
 * length, say which bytes they are, reading none past k + len: the first
 * eight and the last eight bytes (or, under eight, two overlapping
 * halves in w[0]), then the bytes at 8 and at 16 where the first and the
 * last eight leave a gap. Unused words are 0.
 */
static inline void
json_key_words(const char *k, size_t len, uint64_t w[4])
{
	uint32_t	a, b;
	uint16_t	c, d;

	w[1] = w[2] = w[3] = 0;
	if (len >= 8) {
		w[0] = json_load8(k);
		w[1] = json_load8(k + len - 8);
		if (len > 16)
			w[2] = json_load8(k + 8);
		if (len > 24)
			w[3] = json_load8(k + 16);
	} else if (len >= 4) {
		memcpy(&a, k, 4);
		memcpy(&b, k + len - 4, 4);
		w[0] = a | (uint64_t)b << 32;
	} else if (len >= 2) {
		memcpy(&c, k, 2);
		memcpy(&d, k + len - 2, 2);
		w[0] = c | (uint64_t)d << 16;
	} else
		w[0] = (unsigned char)k[0];
}

/* Free a thread's parser (the key's destructor, at thread exit). */
static void
json_parser_free(void *arg)
{
	struct json_parser	*p = arg;

	if (p->h != NULL)
		yajl_free(p->h);
	free(p);
}

/*
 * pthread_once body: chain every known key under its slot; the key of
 * the threads' parsers.
 */
static void
json_init(void)
{
	size_t	i, len, h;

	for (i = JSON_NKNOWN; i-- > 0;) {
		len = strlen(json_known_keys[i]);
		if (len == 0 || len > JSON_KEY_MAXLEN)
			fatalx("%s: key %s too long", __func__,
			    json_known_keys[i]);
		json_key_len[i] = (uint8_t)len;
		json_key_words(json_known_keys[i], len, json_key_w[i]);
		h = json_key_slot(json_key_w[i][0], len);
		json_key_next[i] = json_key_head[h];
		json_key_head[h] = (uint8_t)(i + 1);
	}
	if (pthread_key_create(&json_parser_key, json_parser_free) != 0)
		fatalx("%s: pthread_key_create failed", __func__);
}

/*
 * The index of the len bytes at k among the known keys, or K_OTHER
 * (json_parse has built the table).
 */
static inline enum json_key
json_key_find(const char *k, size_t len)
{
	const uint64_t	*kw;
	uint64_t	 w[4];
	size_t		 i;

	if (len == 0 || len > JSON_KEY_MAXLEN)
		return (K_OTHER);
	json_key_words(k, len, w);
	for (i = json_key_head[json_key_slot(w[0], len)]; i != 0;
	    i = json_key_next[i - 1]) {
		kw = json_key_w[i - 1];
		if (json_key_len[i - 1] == len && kw[0] == w[0] &&
		    kw[1] == w[1] && kw[2] == w[2] && kw[3] == w[3])
			return ((enum json_key)(i - 1));
	}
	return (K_OTHER);
}

/* Forget the pending key (known, in cx->keybuf or allocated). */
static inline void
jctx_key_drop(struct jctx *cx)
{
	if (cx->key_owned != NULL) {
		free(cx->key_owned);
		cx->key_owned = NULL;
	}
	cx->key = NULL;
	cx->kid = K_OTHER;
}

/* Refuse the pending key if frame f has had it already; 0 then. */
static inline int
jctx_key_once(struct jctx *cx, struct frame *f)
{
	uint64_t	bit;

	if (cx->key == NULL || cx->kid == K_OTHER || f->kind == F_SKIP ||
	    f->kind == F_META)
		return (1);
	bit = (uint64_t)1 << cx->kid;
	if (f->seen & bit)
		return (jctx_fail(cx, "duplicate key %s", cx->key));
	f->seen |= bit;
	return (1);
}

/* Add a metadata entry, dropping Jackson's @class and capping the count. */
static int
jctx_meta_set(struct jctx *cx, struct kvlist *kv, const struct jv *v)
{
	if (strcmp(cx->key, "@class") == 0)
		return (1);
	if (kvlist_get(kv, cx->key) != NULL)
		return (jctx_fail(cx, "duplicate metadata key %s", cx->key));
	if (kv->n >= INSTANCE_MAX_METADATA)
		return (jctx_fail(cx, "too many metadata entries"));
	instance_builder_kv(&cx->ib, kv, cx->key, strlen(cx->key),
	    jctx_text(cx, v));
	return (1);
}

/* One scalar field of an instance object. */
static int
jctx_instance_field(struct jctx *cx, struct frame *f, const struct jv *v)
{
	struct instance	*in = f->in;
	const char	*k = cx->key, *name;
	int64_t		 n;
	enum action_type at;
	int		 known = 1, b;

	switch (cx->kid) {
	case K_INSTANCE_ID:
		in->instance_id = jctx_text(cx, v);
		break;
	case K_HOST_NAME:
		in->host_name = jctx_text(cx, v);
		break;
	case K_APP:
		in->app = jctx_text(cx, v);
		str_upper(in->app);
		break;
	case K_IP_ADDR:
		in->ip_addr = jctx_text(cx, v);
		break;
	case K_SID:
		in->sid = jctx_text(cx, v);
		if (strcmp(in->sid, "na") == 0)
			in->sid = NULL;
		break;
	case K_STATUS:
		if (jv_status(cx, v, &in->status) != 0)
			return (jctx_fail(cx, "invalid status: a name expected"));
		break;
	case K_OVERRIDDEN_STATUS:
	case K_OVERRIDDEN_STATUS_LC:
		if (jv_status(cx, v, &in->overridden_status) != 0)
			return (jctx_fail(cx, "invalid %s: a name expected", k));
		break;
	case K_COUNTRY_ID:
		if (jv_i32(v, &in->country_id) != 0)
			return (jctx_fail(cx, "invalid countryId"));
		break;
	case K_APP_GROUP_NAME:
		in->app_group_name = jctx_text(cx, v);
		str_upper(in->app_group_name);
		break;
	case K_HOME_PAGE_URL:
		in->home_page_url = jctx_text(cx, v);
		break;
	case K_STATUS_PAGE_URL:
		in->status_page_url = jctx_text(cx, v);
		break;
	case K_HEALTH_CHECK_URL:
		in->health_check_url = jctx_text(cx, v);
		break;
	case K_SECURE_HEALTH_CHECK_URL:
		in->secure_health_check_url = jctx_text(cx, v);
		break;
	case K_VIP_ADDRESS:
		in->vip_address = jctx_text(cx, v);
		break;
	case K_SECURE_VIP_ADDRESS:
		in->secure_vip_address = jctx_text(cx, v);
		break;
	case K_IS_COORDINATING:
		if ((b = jv_bool(v)) < 0)
			return (jctx_fail(cx, "invalid %s: true or false "
			    "expected", k));
		in->is_coordinating = (uint8_t)b;
		break;
	case K_LAST_UPDATED_TS:
		if (jv_ts(v, &n) != 0)
			return (jctx_fail(cx, "invalid lastUpdatedTimestamp: "
			    INSTANCE_TS_RULE));
		in->last_updated_ts = n;
		break;
	case K_LAST_DIRTY_TS:
		if (jv_ts(v, &n) != 0)
			return (jctx_fail(cx, "invalid lastDirtyTimestamp: "
			    INSTANCE_TS_RULE));
		in->last_dirty_ts = n;
		break;
	case K_ACTION_TYPE:
		if (v->type != JV_STR)
			return (jctx_fail(cx, "invalid actionType"));
		if ((name = jv_text(cx, v)) != NULL &&
		    action_type_parse(name, &at) == 0)
			in->action_type = at;
		else
			in->action_type = ACTION_NONE;
		break;
	case K_ASG_NAME:
		in->asg_name = jctx_text(cx, v);
		break;
	case K_PORT:
	case K_SECURE_PORT:
	case K_DATA_CENTER_INFO:
	case K_LEASE_INFO:
	case K_METADATA:
		return (jctx_fail(cx, "invalid %s", k));
	case K_INSTANCE:
		if (f->kind == F_ROOT_INSTANCE)
			return (jctx_fail(cx, "invalid instance"));
		known = 0;
		break;
	default:
		known = 0;
		break;
	}
	/* A bare instance counts as found once it has a field we know. */
	if (known && f->kind == F_ROOT_INSTANCE)
		cx->found = 1;
	return (1);
}

/* One scalar field of a leaseInfo object. */
static int
jctx_lease_field(struct jctx *cx, struct lease_info *l, const struct jv *v)
{
	int64_t		 n;
	int32_t		 i;

	switch (cx->kid) {
	case K_RENEWAL_INTERVAL:
	case K_DURATION:
		if (jv_i32(v, &i) != 0)
			return (jctx_fail(cx, "invalid leaseInfo.%s", cx->key));
		/* <= 0 is "the default": instance_apply_defaults() (§4.1.6). */
		if (cx->kid == K_RENEWAL_INTERVAL)
			l->renewal_interval_secs = i;
		else
			l->duration_secs = i;
		return (1);
	case K_REGISTRATION_TS:
	case K_LAST_RENEWAL_TS:
	case K_RENEWAL_TS:
	case K_EVICTION_TS:
	case K_SERVICE_UP_TS:
		break;
	default:
		return (1);
	}
	if (jv_ts(v, &n) != 0)
		return (jctx_fail(cx, "invalid leaseInfo.%s: " INSTANCE_TS_RULE,
		    cx->key));
	if (cx->kid == K_REGISTRATION_TS)
		l->registration_ts = n;
	else if (cx->kid == K_EVICTION_TS)
		l->eviction_ts = n;
	else if (cx->kid == K_SERVICE_UP_TS)
		l->service_up_ts = n;
	else
		l->last_renewal_ts = n;
	return (1);
}

/* One scalar field of a ReplicationInstance. */
static int
jctx_repl_field(struct jctx *cx, struct frame *f, const struct jv *v)
{
	struct repl_item	*ri = f->ri;
	const char		*name;

	switch (cx->kid) {
	case K_APP_NAME:
		jv_store_name(cx->rl, &ri->app_name, v);
		str_upper(ri->app_name);
		break;
	case K_ID:
		jv_store_name(cx->rl, &ri->id, v);
		break;
	case K_LAST_DIRTY_TS:
		if (jv_ts(v, &ri->last_dirty_ts) != 0)
			return (jctx_fail(cx, "invalid lastDirtyTimestamp: "
			    INSTANCE_TS_RULE));
		ri->has_last_dirty = 1;
		break;
	case K_OVERRIDDEN_STATUS:
	case K_OVERRIDDEN_STATUS_LC:
		if (jv_status(cx, v, &ri->overridden_status) != 0)
			return (jctx_fail(cx, "invalid %s: a name expected",
			    cx->key));
		ri->has_overridden = 1;
		break;
	case K_STATUS:
		if (jv_status(cx, v, &ri->status) != 0)
			return (jctx_fail(cx, "invalid status: a name expected"));
		ri->has_status = 1;
		break;
	case K_ACTION:
		if (v->type != JV_STR ||
		    (name = jv_text(cx, v)) == NULL ||
		    repl_action_parse(name, &ri->action) != 0)
			return (jctx_fail(cx, "invalid action"));
		f->has_action = 1;
		break;
	case K_INSTANCE_INFO:
		return (jctx_fail(cx, "invalid instanceInfo"));
	case K_ORIGIN_NODE:
	case K_ORIGIN_USER:
	case K_ORIGIN_ADDR:
		if (v->type != JV_STR)
			return (jctx_fail(cx, "invalid %s", cx->key));
		jv_store_name(cx->rl, cx->kid == K_ORIGIN_NODE ?
		    &ri->origin_node : cx->kid == K_ORIGIN_USER ?
		    &ri->origin_user : &ri->origin_addr, v);
		break;
	default:
		break;
	}
	return (1);
}

/* A scalar value arrived: store it where the top frame says. */
static int
jctx_scalar(struct jctx *cx, const struct jv *v)
{
	struct frame	*f;
	const char	*name;
	int		 rc = 1, b;
	enum dc_name	 dc;

	if (cx->depth == 0)
		return (jctx_fail(cx, cx->done ? JSON_TRAILING :
		    "expected a JSON object"));
	f = &cx->st[cx->depth - 1];
	if (!(rc = jctx_key_once(cx, f)))
		goto out;
	/* JSON null means "absent" everywhere (§4.1.8). */
	if (v->type == JV_NULL || f->kind == F_SKIP)
		goto out;
	switch (f->kind) {
	case F_ROOT_INSTANCE:
	case F_INSTANCE:
		rc = jctx_instance_field(cx, f, v);
		break;
	case F_PORT:
		if (cx->kid == K_DOLLAR) {
			if (jv_i32(v, f->secure ? &f->in->secure_port :
			    &f->in->port) != 0)
				rc = jctx_fail(cx, "invalid %s",
				    f->secure ? "securePort" : "port");
		} else if (cx->kid == K_ENABLED) {
			if ((b = jv_bool(v)) < 0)
				rc = jctx_fail(cx, "invalid @enabled: true or "
				    "false expected");
			else if (f->secure)
				f->in->secure_port_enabled = b;
			else
				f->in->port_enabled = b;
		}
		break;
	case F_DC:
		if (cx->kid == K_NAME) {
			if (v->type != JV_STR ||
			    (name = jv_text(cx, v)) == NULL ||
			    dc_name_parse(name, &dc) != 0)
				rc = jctx_fail(cx,
				    "invalid dataCenterInfo name");
			else {
				f->in->dc_name = dc;
				f->in->has_dc_name = 1;
			}
		} else if (cx->kid == K_METADATA)
			rc = jctx_fail(cx, "invalid dataCenterInfo metadata");
		break;
	case F_META:
		rc = jctx_meta_set(cx, f->kv, v);
		break;
	case F_LEASE:
		rc = jctx_lease_field(cx, &f->in->lease, v);
		break;
	case F_APPS:
		if (cx->kid == K_VERSIONS_DELTA) {
			if (jv_i64(v, &f->apps->versions_delta) != 0)
				rc = jctx_fail(cx, "invalid versions__delta");
		} else if (cx->kid == K_APPS_HASHCODE)
			jv_store(&f->apps->apps_hashcode, v);
		else if (cx->kid == K_APPLICATION)
			rc = jctx_fail(cx, "invalid application");
		break;
	case F_APP:
		if (cx->kid == K_NAME) {
			jv_store(&f->app->name, v);
			str_upper(f->app->name);
		} else if (cx->kid == K_INSTANCE)
			rc = jctx_fail(cx, "invalid instance");
		break;
	case F_REPL_ITEM:
		rc = jctx_repl_field(cx, f, v);
		break;
	case F_RESP_ITEM:
		if (cx->kid == K_STATUS_CODE) {
			if (jv_i32(v, &f->rsi->status_code) != 0)
				rc = jctx_fail(cx, "invalid statusCode");
		} else if (cx->kid == K_RESPONSE_ENTITY)
			rc = jctx_fail(cx, "invalid responseEntity");
		break;
	case F_APP_ARRAY:
		rc = jctx_fail(cx, "invalid application");
		break;
	case F_INST_ARRAY:
		rc = jctx_fail(cx, "invalid instance");
		break;
	case F_REPL_ARRAY:
		rc = jctx_fail(cx, "invalid replicationList");
		break;
	case F_RESP_ARRAY:
		rc = jctx_fail(cx, "invalid responseList");
		break;
	case F_ROOT_REPL:
		if (cx->kid == K_REPLICATION_LIST)
			rc = jctx_fail(cx, "invalid replicationList");
		break;
	case F_ROOT_RESP:
		if (cx->kid == K_RESPONSE_LIST)
			rc = jctx_fail(cx, "invalid responseList");
		break;
	default:
		break;
	}
out:
	jctx_key_drop(cx);
	return (rc);
}

/* Push a frame of the given kind, copying the parent's targets. */
static struct frame *
jctx_push(struct jctx *cx, enum frame_kind kind)
{
	struct frame	*f = &cx->st[cx->depth];

	if (cx->depth > 0)
		*f = cx->st[cx->depth - 1];
	else
		memset(f, 0, sizeof *f);
	f->kind = kind;
	f->has_action = 0;
	f->seen = 0;
	cx->depth++;
	return (f);
}

/* A new instance object starts (in the scratch until it closes). */
static void
jctx_push_instance(struct jctx *cx)
{
	struct frame	*f = jctx_push(cx, F_INSTANCE);

	f->in = instance_builder_begin(&cx->ib);
	f->kv = NULL;
}

/* Which frame a new container gets, given the parent frame and key. */
static int
jctx_open(struct jctx *cx, int is_map)
{
	struct frame	*p, *f;
	const char	*k;
	enum frame_kind	 kind = F_SKIP;
	enum json_key	 kid;
	int		 rc = 1;

	if (cx->depth >= JSON_MAX_DEPTH)
		return (jctx_fail(cx, "nesting too deep"));
	if (cx->depth == 0) {
		if (cx->done)
			return (jctx_fail(cx, JSON_TRAILING));
		if (!is_map)
			return (jctx_fail(cx, "expected a JSON object"));
		f = jctx_push(cx, F_SKIP);
		switch (cx->doc) {
		case DOC_INSTANCE:
			f->kind = F_ROOT_INSTANCE;
			f->in = instance_builder_begin(&cx->ib);
			break;
		case DOC_APPLICATION:
			f->kind = F_ROOT_APP;
			break;
		case DOC_APPLICATIONS:
			f->kind = F_ROOT_APPS;
			break;
		case DOC_REPL_LIST:
			f->kind = F_ROOT_REPL;
			break;
		case DOC_REPL_RESPONSE:
			f->kind = F_ROOT_RESP;
			break;
		}
		return (1);
	}
	p = &cx->st[cx->depth - 1];
	k = cx->key != NULL ? cx->key : "";
	kid = cx->key != NULL ? (enum json_key)cx->kid : K_OTHER;
	if (!(rc = jctx_key_once(cx, p)))
		goto out;
	switch (p->kind) {
	case F_SKIP:
		break;
	case F_ROOT_INSTANCE:
	case F_INSTANCE:
		if (p->kind == F_ROOT_INSTANCE && kid == K_INSTANCE) {
			if (!is_map)
				goto bad;
			cx->found = 1;
			kind = F_INSTANCE;	/* same target, not owned */
			break;
		}
		if (p->kind == F_ROOT_INSTANCE && (kid == K_PORT ||
		    kid == K_SECURE_PORT || kid == K_DATA_CENTER_INFO ||
		    kid == K_LEASE_INFO || kid == K_METADATA))
			cx->found = 1;
		if (kid == K_PORT || kid == K_SECURE_PORT) {
			if (!is_map)
				goto bad;
			f = jctx_push(cx, F_PORT);
			f->secure = kid == K_SECURE_PORT;
			goto done;
		} else if (kid == K_DATA_CENTER_INFO) {
			if (!is_map)
				goto bad;
			p->in->has_dc = 1;
			kind = F_DC;
		} else if (kid == K_LEASE_INFO) {
			if (!is_map)
				goto bad;
			p->in->has_lease = 1;
			kind = F_LEASE;
		} else if (kid == K_METADATA) {
			if (!is_map)
				goto bad;
			p->in->metadata.n = 0;	/* the arena keeps the text */
			f = jctx_push(cx, F_META);
			f->kv = &f->in->metadata;
			goto done;
		} else if (kid == K_INSTANCE_ID || kid == K_HOST_NAME ||
		    kid == K_APP || kid == K_STATUS || kid == K_IP_ADDR ||
		    kid == K_LAST_DIRTY_TS || kid == K_LAST_UPDATED_TS ||
		    kid == K_COUNTRY_ID)
			goto bad;
		break;
	case F_DC:
		if (kid == K_METADATA) {
			if (!is_map)
				goto bad;
			p->in->dc_metadata.n = 0;
			f = jctx_push(cx, F_META);
			f->kv = &f->in->dc_metadata;
			goto done;
		}
		if (kid == K_NAME)
			goto bad;
		break;
	case F_META:
		if (strcmp(k, "@class") != 0)
			goto bad;
		break;
	case F_PORT:
		if (kid == K_DOLLAR)
			goto bad;
		break;
	case F_LEASE:
		if (strstr(k, "Timestamp") != NULL ||
		    strstr(k, "InSecs") != NULL)
			goto bad;
		break;
	case F_ROOT_APP:
	case F_APPS:
	case F_APP_ARRAY:
		if (p->kind == F_APPS && kid == K_VERSIONS_DELTA)
			goto bad;
		if (p->kind != F_APP_ARRAY && kid != K_APPLICATION)
			break;
		if (!is_map) {
			if (p->kind == F_APP_ARRAY || p->kind == F_ROOT_APP)
				goto bad;
			kind = F_APP_ARRAY;
			break;
		}
		f = jctx_push(cx, F_APP);
		if (p->kind == F_ROOT_APP) {
			if (cx->app != NULL)
				goto bad;
			cx->app = application_new("");
			f->app = cx->app;
		} else
			applications_add(f->apps,
			    (f->app = application_new("")));
		cx->found = 1;
		goto done;
	case F_ROOT_APPS:
		if (kid != K_APPLICATIONS)
			break;
		if (!is_map || cx->found)
			goto bad;
		f = jctx_push(cx, F_APPS);
		f->apps = cx->apps;
		cx->found = 1;
		goto done;
	case F_APP:
	case F_INST_ARRAY:
		if (p->kind == F_APP && kid != K_INSTANCE) {
			if (kid == K_NAME)
				goto bad;
			break;
		}
		if (!is_map) {
			if (p->kind == F_INST_ARRAY)
				goto bad;
			kind = F_INST_ARRAY;
			break;
		}
		jctx_push_instance(cx);
		goto done;
	case F_ROOT_REPL:
		if (kid != K_REPLICATION_LIST)
			break;
		if (is_map || cx->found)
			goto bad;
		cx->found = 1;
		kind = F_REPL_ARRAY;
		break;
	case F_REPL_ARRAY:
		if (!is_map)
			goto bad;
		if (cx->rl->n >= REPL_MAX_ITEMS) {
			rc = jctx_fail(cx, "too many replication items");
			goto out;
		}
		f = jctx_push(cx, F_REPL_ITEM);
		f->ri = repl_list_add(cx->rl);
		f->ri->decoded = 1;
		goto done;
	case F_REPL_ITEM:
		if (kid == K_INSTANCE_INFO) {
			if (!is_map)
				goto bad;
			jctx_push_instance(cx);
			goto done;
		}
		if (kid == K_ACTION || kid == K_APP_NAME || kid == K_ID ||
		    kid == K_LAST_DIRTY_TS)
			goto bad;
		break;
	case F_ROOT_RESP:
		if (kid != K_RESPONSE_LIST)
			break;
		if (is_map || cx->found)
			goto bad;
		cx->found = 1;
		kind = F_RESP_ARRAY;
		break;
	case F_RESP_ARRAY:
		if (!is_map)
			goto bad;
		if (cx->rr->n >= REPL_MAX_ITEMS) {
			rc = jctx_fail(cx, "too many replication items");
			goto out;
		}
		f = jctx_push(cx, F_RESP_ITEM);
		f->rsi = repl_response_add(cx->rr);
		goto done;
	case F_RESP_ITEM:
		if (kid == K_RESPONSE_ENTITY) {
			if (!is_map)
				goto bad;
			jctx_push_instance(cx);
			goto done;
		}
		if (kid == K_STATUS_CODE)
			goto bad;
		break;
	}
	jctx_push(cx, kind);
done:
	rc = 1;
	goto out;
bad:
	rc = jctx_fail(cx, "invalid %s", k[0] != '\0' ? k : "value");
out:
	jctx_key_drop(cx);
	return (rc);
}

/* A container ends: hand what it built to its parent. */
static int
jctx_close(struct jctx *cx)
{
	struct frame	*f, *p;

	if (cx->depth == 0)
		return (jctx_fail(cx, "unbalanced JSON"));
	f = &cx->st[cx->depth - 1];
	p = cx->depth > 1 ? &cx->st[cx->depth - 2] : NULL;
	switch (f->kind) {
	case F_ROOT_INSTANCE:
		if (cx->found)
			cx->inst = instance_builder_pack(&cx->ib, cx->now);
		break;
	case F_INSTANCE:
		/* {"instance":{...}}: the root's own object, finished there. */
		if (p->kind == F_ROOT_INSTANCE)
			break;
		if (p->kind == F_REPL_ITEM) {
			instance_free(p->ri->info);
			p->ri->info = instance_builder_pack(&cx->ib,
			    cx->now);
		} else if (p->kind == F_RESP_ITEM) {
			instance_free(p->rsi->entity);
			p->rsi->entity = instance_builder_pack(&cx->ib,
			    cx->now);
		} else
			application_add(p->app,
			    instance_builder_pack(&cx->ib, cx->now));
		f->in = NULL;
		break;
	case F_REPL_ITEM:
		if (!f->has_action) {
			cx->depth--;
			return (jctx_fail(cx, "missing action"));
		}
		break;
	default:
		break;
	}
	if (--cx->depth == 0)
		cx->done = 1;
	return (1);
}

/*
 * yajl callbacks: each converts its event and calls the state machine of
 * the decode its thread's handle serves (arg is the struct json_parser).
 */
#define JCTX(arg)	(((struct json_parser *)(arg))->cx)

/* JSON null. */
static int
json_null_cb(void *arg)
{
	struct jv	v = { .type = JV_NULL };

	return (jctx_scalar(JCTX(arg), &v));
}

/* true or false. */
static int
json_boolean_cb(void *arg, int b)
{
	struct jv	v = { .type = JV_BOOL, .b = b };

	return (jctx_scalar(JCTX(arg), &v));
}

/*
 * Whether n bytes are all ASCII without a NUL, eight at a time: then
 * neither the NUL nor the UTF-8 check of jctx_copy can fail. A byte of 0
 * borrows into its high bit, a byte of 0x80 or more has it.
 */
static inline int
json_text_plain(const unsigned char *s, size_t len)
{
	const uint64_t	ones = 0x0101010101010101ULL;
	uint64_t	w;
	size_t		i;

	if (len < 8) {
		for (i = 0; i < len; i++)
			if (s[i] == 0 || s[i] >= 0x80)
				return (0);
		return (1);
	}
	/* Whole words, then the last eight bytes (overlapping). */
	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&w, s + i, sizeof w);
		if (((w - ones) | w) & (ones << 7))
			return (0);
	}
	memcpy(&w, s + len - 8, sizeof w);
	return (!(((w - ones) | w) & (ones << 7)));
}

/*
 * Check a yajl string or key, refusing oversize ones, embedded NULs and
 * invalid UTF-8; 0 (and the parse stops) when it is refused. This is the
 * one UTF-8 check of a JSON body: yajl's own is off (json_parse), since it
 * checks only the byte structure and would let overlong forms such as
 * C0 AF and surrogates reach our output.
 */
static inline int
jctx_check(struct jctx *cx, const unsigned char *s, size_t len)
{
	if (len > INSTANCE_MAX_STRING)
		return (jctx_fail(cx, "string too long (over %d bytes)",
		    INSTANCE_MAX_STRING));
	if (!json_text_plain(s, len)) {
		if (memchr(s, '\0', len) != NULL)
			return (jctx_fail(cx, "string contains NUL"));
		if (!utf8_valid_n((const char *)s, len))
			return (jctx_fail(cx, "string is not valid UTF-8"));
	}
	return (1);
}

/*
 * A checked scalar to jctx_scalar, as yajl's own text: whatever keeps it
 * copies it once (jctx_text, jv_store), since it lives only until the
 * callback returns. A number's text is what yajl's lexer let through (sign,
 * digits, '.', exponent): only its length can be refused.
 */
static inline int
jctx_text_scalar(struct jctx *cx, enum jv_type type, const unsigned char *s,
    size_t len)
{
	struct jv	 v = { .type = type, .s = (const char *)s, .len = len };

	if ((type == JV_STR || len > INSTANCE_MAX_STRING) &&
	    !jctx_check(cx, s, len))
		return (0);
	return (jctx_scalar(cx, &v));
}

/* Any number, as its raw text, so longs are parsed without a double. */
static int
json_number_cb(void *arg, const char *s, size_t len)
{
	return (jctx_text_scalar(JCTX(arg), JV_NUM, (const unsigned char *)s,
	    len));
}

/* A string value (jctx_copy checks its UTF-8). */
static int
json_string_cb(void *arg, const unsigned char *s, size_t len)
{
	return (jctx_text_scalar(JCTX(arg), JV_STR, s, len));
}

/*
 * A key the decoder gives no meaning to (metadata names, unknown fields):
 * checked and copied, apart from the known keys' path so that it stays
 * short.
 */
static __attribute__((noinline)) int
jctx_other_key(struct jctx *cx, const unsigned char *s, size_t len)
{
	char	*copy;

	if (!jctx_check(cx, s, len))
		return (0);
	if (len < sizeof cx->keybuf) {
		memcpy(cx->keybuf, s, len);
		cx->keybuf[len] = '\0';
		copy = cx->keybuf;
	} else
		copy = cx->key_owned = xstrndup((const char *)s, len);
	cx->key = copy;
	return (1);
}

/* An object key: kept until the value that follows consumes it. */
static int
json_map_key_cb(void *arg, const unsigned char *s, size_t len)
{
	struct jctx	*cx = JCTX(arg);
	enum json_key	 kid;

	jctx_key_drop(cx);
	/* A known key is plain ASCII: its own text, no copy or check. */
	if ((kid = json_key_find((const char *)s, len)) != K_OTHER) {
		cx->key = json_known_keys[kid];
		cx->kid = kid;
		return (1);
	}
	return (jctx_other_key(cx, s, len));
}

/* '{' */
static int
json_start_map_cb(void *arg)
{
	return (jctx_open(JCTX(arg), 1));
}

/* '[' */
static int
json_start_array_cb(void *arg)
{
	return (jctx_open(JCTX(arg), 0));
}

/*
 * '}' or ']': both just pop a frame. The root's close records where it
 * ended in the input (yajl's offset is past the token being handed over),
 * so that json_parse can refuse what follows it even when yajl holds it
 * as a token not yet ended.
 */
static int
json_end_cb(void *arg)
{
	struct json_parser	*p = arg;
	int			 rc = jctx_close(p->cx);

	if (rc && p->cx->done && p->cx->root_end == 0)
		p->cx->root_end = yajl_get_bytes_consumed(p->h);
	return (rc);
}

static const yajl_callbacks json_callbacks = {
	json_null_cb,
	json_boolean_cb,
	NULL,			/* integers and doubles come as raw numbers */
	NULL,
	json_number_cb,
	json_string_cb,
	json_start_map_cb,
	json_map_key_cb,
	json_end_cb,
	json_start_array_cb,
	json_end_cb,
};

/* After a failed parse: the frames own nothing (the scratch is cx's). */
static void
jctx_cleanup(struct jctx *cx)
{
	cx->depth = 0;
	jctx_key_drop(cx);
}

/* The value of 4 hex digits, or -1. */
static long
json_hex4(const char *p)
{
	long	v = 0;
	int	i;

	for (i = 0; i < 4; i++) {
		if (p[i] >= '0' && p[i] <= '9')
			v = v * 16 + (p[i] - '0');
		else if ((p[i] | 0x20) >= 'a' && (p[i] | 0x20) <= 'f')
			v = v * 16 + ((p[i] | 0x20) - 'a' + 10);
		else
			return (-1);
	}
	return (v);
}

/*
 * Whether every UTF-16 surrogate escape comes in a pair, \uD8xx then
 * \uDCxx: yajl turns a lone one into '?' or into a wrong character
 * without a word. A backslash can only start an escape inside a string
 * (anywhere else yajl refuses the document), so a flat scan is enough.
 */
static int
json_surrogates_paired(const char *p, size_t len)
{
	const char	*bs;
	size_t		 i = 0;
	long		 cp;
	int		 want_low = 0;

	/* Jump from backslash to backslash: most bodies have none. */
	while (i < len) {
		if (want_low) {
			if (p[i] != '\\')
				return (0);
		} else {
			if ((bs = memchr(p + i, '\\', len - i)) == NULL)
				break;
			i = bs - p;
		}
		if (i + 1 >= len || p[i + 1] != 'u' || len - i < 6 ||
		    (cp = json_hex4(p + i + 2)) < 0) {
			if (want_low)
				return (0);
			i += 2;
			continue;
		}
		if (cp >= 0xdc00 && cp <= 0xdfff) {
			if (!want_low)
				return (0);
			want_low = 0;
		} else if (want_low)
			return (0);
		else if (cp >= 0xd800 && cp <= 0xdbff)
			want_low = 1;
		i += 6;
	}
	return (!want_low);
}

/*
 * A context for one document. The frames and text buffers are not
 * cleared (a frame is set when it is pushed, jctx_push): the whole
 * struct is some 3 KiB, more than a small document's decode writes.
 */
static void
jctx_init(struct jctx *cx, enum json_doc doc, int64_t now)
{
	cx->doc = doc;
	cx->depth = 0;
	cx->key = NULL;
	cx->key_owned = NULL;
	cx->kid = K_OTHER;
	cx->err = NULL;
	cx->found = 0;
	cx->done = 0;
	cx->root_end = 0;
	cx->now = now;
	cx->inst = NULL;
	cx->app = NULL;
	cx->apps = NULL;
	cx->rl = NULL;
	cx->rr = NULL;
	instance_builder_init(&cx->ib);
}

/* This thread's parser, its handle allocated if it has none. */
static struct json_parser *
json_parser_get(void)
{
	struct json_parser	*p;

	if ((p = pthread_getspecific(json_parser_key)) == NULL) {
		p = xcalloc(1, sizeof *p);
		if (pthread_setspecific(json_parser_key, p) != 0)
			fatalx("%s: pthread_setspecific failed", __func__);
	}
	if (p->h == NULL) {
		if ((p->h = yajl_alloc(&json_callbacks, NULL, p)) == NULL)
			fatalx("%s: out of memory", __func__);
		/* jctx_check checks every string strictly: once is enough. */
		yajl_config(p->h, yajl_dont_validate_strings, 1);
		yajl_config(p->h, yajl_allow_multiple_values, 1);
	}
	return (p);
}

/* Run yajl over the whole input; 0 on success, -1 with *cause set. */
static int
json_parse(struct jctx *cx, const char *data, size_t len, char **cause)
{
	struct json_parser	*p;
	yajl_handle		 h;
	yajl_status		 st;
	unsigned char		*msg;
	size_t			 n;
	int			 rc = -1;

	cx->kid = K_OTHER;
	pthread_once(&json_once, json_init);
	if (!json_surrogates_paired(data, len)) {
		xasprintf(cause, "cannot parse request body: lone UTF-16 "
		    "surrogate escape");
		return (-1);
	}
	p = json_parser_get();
	p->cx = cx;
	h = p->h;
	st = yajl_parse(h, (const unsigned char *)data, len);
	if (st == yajl_status_ok)
		st = yajl_complete_parse(h);
	if (st != yajl_status_ok) {
		if (cx->err != NULL) {
			xasprintf(cause, "cannot parse request body: %s",
			    cx->err);
		} else {
			msg = yajl_get_error(h, 0, (const unsigned char *)data,
			    len);
			n = msg != NULL ? strlen((char *)msg) : 0;
			while (n > 0 && (msg[n - 1] == '\n' ||
			    msg[n - 1] == ' '))
				msg[--n] = '\0';
			xasprintf(cause, "cannot parse request body: %s",
			    msg != NULL ? (char *)msg : "error");
			if (msg != NULL)
				yajl_free_error(h, msg);
		}
		goto out;
	}
	/* No root object at all (an empty body) is as truncated as half of one. */
	if (cx->depth != 0 || !cx->done) {
		xasprintf(cause, "cannot parse request body: premature EOF");
		goto out;
	}
	/*
	 * A value begun after the root and never ended (a string left open:
	 * yajl_complete_parse lets it be with multiple values allowed) is
	 * refused here, and the handle holding it goes with the failure.
	 */
	for (n = cx->root_end; n < len; n++) {
		if (data[n] != ' ' && data[n] != '\t' && data[n] != '\n' &&
		    data[n] != '\r') {
			xasprintf(cause, "cannot parse request body: %s",
			    JSON_TRAILING);
			goto out;
		}
	}
	rc = 0;
out:
	p->cx = NULL;
	if (rc != 0 || len > JSON_PARSER_KEEP) {
		yajl_free(h);
		p->h = NULL;
	}
	if (rc != 0)
		jctx_cleanup(cx);
	instance_builder_free(&cx->ib);
	free(cx->err);
	cx->err = NULL;
	jctx_key_drop(cx);
	return (rc);
}

/* Decode {"instance":{...}} or a bare instance object. */
struct instance *
json_decode_instance(const char *data, size_t len, int64_t now,
    char **cause)
{
	struct jctx	cx;

	jctx_init(&cx, DOC_INSTANCE, now);
	if (json_parse(&cx, data, len, cause) != 0)
		goto fail;
	if (!cx.found) {
		xasprintf(cause, "missing instance");
		goto fail;
	}
	return (cx.inst);
fail:
	instance_free(cx.inst);
	return (NULL);
}

/* Decode {"application":{...}}. */
struct application *
json_decode_application(const char *data, size_t len, int64_t now,
    char **cause)
{
	struct jctx	cx;

	jctx_init(&cx, DOC_APPLICATION, now);
	if (json_parse(&cx, data, len, cause) != 0)
		goto fail;
	if (cx.app == NULL) {
		xasprintf(cause, "missing application");
		goto fail;
	}
	return (cx.app);
fail:
	application_free(cx.app);
	return (NULL);
}

/* Decode {"applications":{...}} (full or delta). */
struct applications *
json_decode_applications(const char *data, size_t len, int64_t now,
    char **cause)
{
	struct jctx	cx;

	jctx_init(&cx, DOC_APPLICATIONS, now);
	cx.apps = applications_new();
	if (json_parse(&cx, data, len, cause) != 0)
		goto fail;
	if (!cx.found) {
		xasprintf(cause, "missing applications");
		goto fail;
	}
	return (cx.apps);
fail:
	applications_free(cx.apps);
	return (NULL);
}

/* Decode a ReplicationList, appending to l; on error l is cleared. */
int
json_decode_repl_list(const char *data, size_t len, struct repl_list *l,
    int64_t now, char **cause)
{
	struct jctx	cx;

	jctx_init(&cx, DOC_REPL_LIST, now);
	cx.rl = l;
	if (json_parse(&cx, data, len, cause) != 0)
		goto fail;
	if (!cx.found) {
		xasprintf(cause, "missing replicationList");
		goto fail;
	}
	return (0);
fail:
	repl_list_clear(l);
	return (-1);
}

/* Decode a ReplicationListResponse, appending to r; on error r is cleared. */
int
json_decode_repl_response(const char *data, size_t len,
    struct repl_response *r, int64_t now, char **cause)
{
	struct jctx	cx;

	jctx_init(&cx, DOC_REPL_RESPONSE, now);
	cx.rr = r;
	if (json_parse(&cx, data, len, cause) != 0)
		goto fail;
	if (!cx.found) {
		xasprintf(cause, "missing responseList");
		goto fail;
	}
	return (0);
fail:
	repl_response_clear(r);
	return (-1);
}
