/*
 * xml.c: Eureka's XML codec. The writer reproduces what XStream's
 * PrettyPrintWriter emits for Eureka's Converters (spec §4.2): no
 * declaration, two-space indentation, '\n' line breaks, no trailing
 * newline, XmlFriendlyNameCoder names ('_' -> "__", '$' -> "_-"). It writes
 * straight into a struct buf with no intermediate tree, because the server
 * encodes whole registries with it. Pieces never begin or end with '\n';
 * callers join them with one '\n' (see xml.h), which is also how the
 * whole-document encoders below are built.
 *
 * The reader is a streaming state machine over expat: a stack of frames,
 * one per open element, each saying what the element is (an instance, its
 * lease, a text field, something to skip). Model objects are built while
 * parsing, so memory stays proportional to the result, not to the number
 * of XML nodes; an instance in an instance builder, packed into one block
 * when its element closes (instance.h, "Packed instances"). DOCTYPEs and
 * entity declarations are refused outright (no billion laughs, no
 * external entities), depth is capped at XML_MAX_DEPTH and every text
 * value at INSTANCE_MAX_STRING.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <expat.h>

#include "buf.h"
#include "codec.h"
#include "instance.h"
#include "log.h"
#include "xmalloc.h"
#include "xml.h"

#define XML_EMPTY_MAP	"<metadata class=\"java.util.Collections$EmptyMap\"/>"
#define XML_DC_DEFAULT	"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo"
#define XML_DC_AMAZON	"com.netflix.appinfo.AmazonInfo"
#define XML_CHUNK	(1024 * 1024)	/* expat takes int lengths */

/* What an open element is, for the reader. */
enum xml_kind {
	K_ROOT = 0,	/* outside the document element */
	K_APPS,
	K_APP,
	K_INST,
	K_DC,
	K_DCMETA,
	K_LEASE,
	K_META,
	K_TEXT,		/* a leaf whose text we keep */
	K_IGNORE,	/* unknown: skipped with everything inside */
};

/* Which value a K_TEXT element carries. */
enum xml_field {
	F_NONE = 0,
	F_VERSION,
	F_HASHCODE,
	F_APP_NAME,
	F_INSTANCE_ID,
	F_HOST_NAME,
	F_APP,
	F_IP_ADDR,
	F_SID,
	F_STATUS,
	F_OVERRIDDEN,
	F_PORT,
	F_SECURE_PORT,
	F_COUNTRY_ID,
	F_APP_GROUP,
	F_HOME_PAGE,
	F_STATUS_PAGE,
	F_HEALTH,
	F_SECURE_HEALTH,
	F_VIP,
	F_SECURE_VIP,
	F_COORDINATING,
	F_LAST_UPDATED,
	F_LAST_DIRTY,
	F_ACTION,
	F_ASG,
	F_DC_NAME,
	F_L_RENEWAL,
	F_L_DURATION,
	F_L_REGISTRATION,
	F_L_LAST_RENEWAL,
	F_L_EVICTION,
	F_L_SERVICE_UP,
	F_META,
	F_DCMETA,
};

/* Known children: inside `parent`, element `name` is a `kind`/`field`. */
struct xml_child {
	enum xml_kind	 parent;
	const char	*name;
	enum xml_kind	 kind;
	enum xml_field	 field;
};

static const struct xml_child xml_children[] = {
	{ K_APPS, "versions__delta", K_TEXT, F_VERSION },
	{ K_APPS, "apps__hashcode", K_TEXT, F_HASHCODE },
	{ K_APPS, "application", K_APP, F_NONE },
	{ K_APP, "name", K_TEXT, F_APP_NAME },
	{ K_APP, "instance", K_INST, F_NONE },
	{ K_INST, "instanceId", K_TEXT, F_INSTANCE_ID },
	{ K_INST, "hostName", K_TEXT, F_HOST_NAME },
	{ K_INST, "app", K_TEXT, F_APP },
	{ K_INST, "ipAddr", K_TEXT, F_IP_ADDR },
	{ K_INST, "sid", K_TEXT, F_SID },
	{ K_INST, "status", K_TEXT, F_STATUS },
	{ K_INST, "overriddenstatus", K_TEXT, F_OVERRIDDEN },
	{ K_INST, "overriddenStatus", K_TEXT, F_OVERRIDDEN },
	{ K_INST, "port", K_TEXT, F_PORT },
	{ K_INST, "securePort", K_TEXT, F_SECURE_PORT },
	{ K_INST, "countryId", K_TEXT, F_COUNTRY_ID },
	{ K_INST, "dataCenterInfo", K_DC, F_NONE },
	{ K_INST, "leaseInfo", K_LEASE, F_NONE },
	{ K_INST, "metadata", K_META, F_NONE },
	{ K_INST, "appGroupName", K_TEXT, F_APP_GROUP },
	{ K_INST, "homePageUrl", K_TEXT, F_HOME_PAGE },
	{ K_INST, "statusPageUrl", K_TEXT, F_STATUS_PAGE },
	{ K_INST, "healthCheckUrl", K_TEXT, F_HEALTH },
	{ K_INST, "secureHealthCheckUrl", K_TEXT, F_SECURE_HEALTH },
	{ K_INST, "vipAddress", K_TEXT, F_VIP },
	{ K_INST, "secureVipAddress", K_TEXT, F_SECURE_VIP },
	{ K_INST, "isCoordinatingDiscoveryServer", K_TEXT, F_COORDINATING },
	{ K_INST, "lastUpdatedTimestamp", K_TEXT, F_LAST_UPDATED },
	{ K_INST, "lastDirtyTimestamp", K_TEXT, F_LAST_DIRTY },
	{ K_INST, "actionType", K_TEXT, F_ACTION },
	{ K_INST, "asgName", K_TEXT, F_ASG },
	{ K_DC, "name", K_TEXT, F_DC_NAME },
	{ K_DC, "metadata", K_DCMETA, F_NONE },
	{ K_LEASE, "renewalIntervalInSecs", K_TEXT, F_L_RENEWAL },
	{ K_LEASE, "durationInSecs", K_TEXT, F_L_DURATION },
	{ K_LEASE, "registrationTimestamp", K_TEXT, F_L_REGISTRATION },
	{ K_LEASE, "lastRenewalTimestamp", K_TEXT, F_L_LAST_RENEWAL },
	{ K_LEASE, "evictionTimestamp", K_TEXT, F_L_EVICTION },
	{ K_LEASE, "serviceUpTimestamp", K_TEXT, F_L_SERVICE_UP },
};

/* AmazonInfo metadata kept by the compact codec (§4.3). */
static const char *xml_compact_dc_keys[] = {
	"instance-id", "public-ipv4", "public-hostname", "local-ipv4",
	"availability-zone", NULL
};

struct xml_frame {
	enum xml_kind	 kind;
	enum xml_field	 field;
	int		 enabled;	/* port/securePort attribute */
	uint64_t	 seen;		/* xml_children met, by index */
};

struct xml_ctx {
	XML_Parser		 parser;
	enum xml_kind		 root;		/* expected document element */
	struct xml_frame	 stack[XML_MAX_DEPTH];
	int			 depth;
	struct buf		 text;		/* current K_TEXT value */
	char			*err;
	int64_t			 now;		/* wall ms, for the defaults */
	struct applications	*apps;
	struct application	*app;
	struct instance		*inst;		/* &ib.in while one is open */
	struct instance		*done;		/* an <instance> document's */
	struct instance_builder	 ib;
};

static void	xml_indent(struct buf *, int);
static void	xml_nl(struct buf *, int);
static void	xml_elem(struct buf *, int, const char *, const char *);
static void	xml_elem_i64(struct buf *, int, const char *, int64_t);
static void	xml_port(struct buf *, int, const char *, int32_t, int);
static int	xml_map_shows(const struct kvlist *, size_t, const char **);
static void	xml_map(struct buf *, int, const struct kvlist *,
		    const char **);
static void	xml_dc(struct buf *, int, const struct instance *, int);
static void	xml_instance_full(struct buf *, const struct instance *, int);
static void	xml_instance_compact(struct buf *, const struct instance *,
		    int);
static int	xml_name_ok(const char *);
static size_t	xml_utf8_len(const unsigned char *, uint32_t *);
static void	xml_fail(struct xml_ctx *, const char *, ...)
		    __attribute__((format(printf, 2, 3)));
static int	xml_parse_i64(const char *, int64_t *);
static int	xml_parse_i32(const char *, int32_t *);
static int	xml_parse_ts(const char *, int64_t *);
static int	xml_ts_check(struct xml_ctx *, const char *, int64_t);
static int	xml_seen_twice(struct xml_ctx *, size_t);
static enum instance_status xml_status(const char *);
static char	*xml_decode_name(const char *);
static void	xml_apps_take(struct applications *, struct application *);
static void	xml_set_text(struct xml_ctx *, const struct xml_frame *,
		    const char *);
static void	xml_start_cb(void *, const XML_Char *, const XML_Char **);
static void	xml_end_cb(void *, const XML_Char *);
static void	xml_text_cb(void *, const XML_Char *, int);
static void	xml_doctype_cb(void *, const XML_Char *, const XML_Char *,
		    const XML_Char *, int);
static void	xml_entity_cb(void *, const XML_Char *, int, const XML_Char *,
		    int, const XML_Char *, const XML_Char *, const XML_Char *,
		    const XML_Char *);
static int	xml_external_cb(XML_Parser, const XML_Char *, const XML_Char *,
		    const XML_Char *, const XML_Char *);
static int	xml_run(struct xml_ctx *, enum xml_kind, const char *, size_t,
		    int64_t, char **);
static void	xml_ctx_free(struct xml_ctx *);

/*
 * The encoder appends through buf_add's inline path: a line start is one
 * append of a newline and its spaces, a character one store, rather than
 * a call per piece (callgrind: an application of 100 instances cost 1.9M
 * instructions, a third of it in buf_addc and the indent loop).
 */
static const char	xml_spaces[] = "\n                                ";

/* One character. */
static inline void
xml_addc(struct buf *b, char c)
{
	buf_add(b, &c, 1);
}

/* Two spaces per level, as PrettyPrintWriter's default line indenter. */
static void
xml_indent(struct buf *b, int indent)
{
	size_t	n = indent > 0 ? (size_t)indent * 2 : 0;

	while (n > 0) {
		size_t	k = n < sizeof xml_spaces - 2 ? n :
			    sizeof xml_spaces - 2;

		buf_add(b, xml_spaces + 1, k);
		n -= k;
	}
}

/* Start a new line at the given level. */
static void
xml_nl(struct buf *b, int indent)
{
	size_t	n = indent > 0 ? (size_t)indent * 2 : 0;

	if (n + 1 < sizeof xml_spaces) {
		buf_add(b, xml_spaces, n + 1);
		return;
	}
	xml_addc(b, '\n');
	xml_indent(b, indent);
}

/* "</name>" */
static void
xml_end_tag(struct buf *b, const char *name, size_t len)
{
	buf_add(b, "</", 2);
	buf_add(b, name, len);
	xml_addc(b, '>');
}

/* A text leaf on its own line; NULL is written like "" (<x></x>). */
static void
xml_elem(struct buf *b, int indent, const char *name, const char *value)
{
	size_t	len = strlen(name);

	xml_nl(b, indent);
	xml_addc(b, '<');
	buf_add(b, name, len);
	xml_addc(b, '>');
	if (value != NULL)
		xml_add_escaped(b, value);
	xml_end_tag(b, name, len);
}

/* A decimal leaf: XStream writes String.valueOf(long). */
static void
xml_elem_i64(struct buf *b, int indent, const char *name, int64_t v)
{
	size_t	len = strlen(name);

	xml_nl(b, indent);
	xml_addc(b, '<');
	buf_add(b, name, len);
	xml_addc(b, '>');
	buf_add_i64(b, v);
	xml_end_tag(b, name, len);
}

/* <port enabled="true">8080</port> */
static void
xml_port(struct buf *b, int indent, const char *name, int32_t port,
    int enabled)
{
	size_t	len = strlen(name);

	xml_nl(b, indent);
	xml_addc(b, '<');
	buf_add(b, name, len);
	buf_adds(b, enabled ? " enabled=\"true\">" : " enabled=\"false\">");
	buf_add_i64(b, port);
	xml_end_tag(b, name, len);
}

/*
 * Is name, once coded, a safe XML element name? We accept only the ASCII
 * subset of XML names: a letter, '_' or '$' first, then letters, digits,
 * '.', '-', '_' and '$' ('$' and '_' become "_-" and "__"). Anything else
 * (spaces, ':', '/', '@', non-ASCII, empty) is not written at all: XStream
 * would have hex-coded it, but a key that no XML reader could give back to
 * us is better dropped than turned into a document nobody can parse. The
 * JSON form still carries such keys.
 */
static int
xml_name_ok(const char *name)
{
	const unsigned char	*p = (const unsigned char *)name;

	if (p == NULL || *p == '\0')
		return (0);
	if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
	    *p == '_' || *p == '$'))
		return (0);
	for (; *p != '\0'; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '.' || *p == '-' ||
		    *p == '_' || *p == '$')
			continue;
		return (0);
	}
	return (1);
}

/* XmlFriendlyNameCoder.encodeNode with Eureka's replacements. */
int
xml_add_name(struct buf *b, const char *name)
{
	const char	*p, *run;

	if (!xml_name_ok(name))
		return (-1);
	for (p = run = name; *p != '\0'; p++) {
		if (*p != '_' && *p != '$')
			continue;
		buf_add(b, run, (size_t)(p - run));
		buf_adds(b, *p == '_' ? "__" : "_-");
		run = p + 1;
	}
	buf_add(b, run, (size_t)(p - run));
	return (0);
}

/*
 * Length of the valid UTF-8 sequence at p (2 to 4) and its code point, or
 * 0 if the bytes are not well-formed UTF-8 (overlong, surrogate, too big,
 * truncated).
 */
static size_t
xml_utf8_len(const unsigned char *p, uint32_t *cp)
{
	unsigned char	c = p[0];
	unsigned char	lo = 0x80, hi = 0xbf;
	size_t		n, i;

	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		*cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		*cp = c & 0x0f;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		*cp = c & 0x07;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else
		return (0);
	for (i = 1; i < n; i++) {
		if (p[i] < (i == 1 ? lo : 0x80) || p[i] > (i == 1 ? hi : 0xbf))
			return (0);
		*cp = (*cp << 6) | (p[i] & 0x3f);
	}
	return (n);
}

/*
 * Bytes xml_add_escaped() writes as they are: printable ASCII but for the
 * five XStream escapes, tab and newline. It skips over them a byte at a
 * time with one load and test, and looks closer only at the others.
 */
static const unsigned char xml_as_is[256] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	1, 1, 0, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

/*
 * PrettyPrintWriter.writeText in its default (quirks) mode, for element
 * text: & < > " ' become entities, CR becomes &#xd;, tab and LF stay,
 * other ISO control characters (C0, DEL, C1) and the non-characters
 * U+FFFE/U+FFFF become &#x<hex>;. Note that C0 references are not
 * well-formed XML 1.0; they are what Java Eureka sends, and they can only
 * reach us through JSON, never through our XML reader. Bytes that are not
 * UTF-8 become U+FFFD, which is what the Java server would have stored.
 */
void
xml_add_escaped(struct buf *b, const char *s)
{
	const unsigned char	*p = (const unsigned char *)s, *run = p;
	const char		*rep;
	char			 tmp[16];
	uint32_t		 cp;
	size_t			 n;

	for (;;) {
		while (xml_as_is[*p])
			p++;
		if (*p == '\0')
			break;
		if (*p >= 0x80) {
			n = xml_utf8_len(p, &cp);
			if (n != 0 && (cp < 0x80 || cp > 0x9f) &&
			    cp != 0xfffe && cp != 0xffff) {
				p += n;
				continue;
			}
			buf_add(b, run, (size_t)(p - run));
			if (n == 0) {
				buf_adds(b, "\xef\xbf\xbd");
				p++;
			} else {
				snprintf(tmp, sizeof tmp, "&#x%x;", cp);
				buf_adds(b, tmp);
				p += n;
			}
			run = p;
			continue;
		}
		switch (*p) {
		case '&':
			rep = "&amp;";
			break;
		case '<':
			rep = "&lt;";
			break;
		case '>':
			rep = "&gt;";
			break;
		case '"':
			rep = "&quot;";
			break;
		case '\'':
			rep = "&apos;";
			break;
		case '\r':
			rep = "&#xd;";
			break;
		case '\t':
		case '\n':
			rep = NULL;
			break;
		default:
			if (*p >= 0x20 && *p != 0x7f)
				rep = NULL;
			else {
				snprintf(tmp, sizeof tmp, "&#x%x;", *p);
				rep = tmp;
			}
			break;
		}
		if (rep == NULL) {
			p++;
			continue;
		}
		buf_add(b, run, (size_t)(p - run));
		buf_adds(b, rep);
		run = ++p;
	}
	buf_add(b, run, (size_t)(p - run));
}

/* Is entry i of l written: a safe name, and in keep if keep is given? */
static int
xml_map_shows(const struct kvlist *l, size_t i, const char **keep)
{
	size_t	j;

	if (!xml_name_ok(l->v[i].key))
		return (0);
	if (keep == NULL)
		return (1);
	for (j = 0; keep[j] != NULL; j++) {
		if (strcmp(keep[j], l->v[i].key) == 0)
			return (1);
	}
	return (0);
}

/*
 * <metadata> with one child per entry, or the EmptyMap form. keep, if not
 * NULL, is the list of keys to write (compact AmazonInfo). Keys that are
 * not safe element names are skipped (xml_name_ok); if none is left the
 * map is written as empty.
 */
static void
xml_map(struct buf *b, int indent, const struct kvlist *l, const char **keep)
{
	size_t	i, first, name, len;
	char	tag[64];

	for (i = 0; i < l->n; i++) {
		if (xml_map_shows(l, i, keep))
			break;
	}
	xml_nl(b, indent);
	if (i == l->n) {
		buf_adds(b, XML_EMPTY_MAP);
		return;
	}
	buf_adds(b, "<metadata>");
	for (first = i; i < l->n; i++) {
		if (i != first && !xml_map_shows(l, i, keep))
			continue;
		xml_nl(b, indent + 1);
		xml_addc(b, '<');
		name = b->len;
		xml_add_name(b, l->v[i].key);
		/* The end tag's name: the start tag's (checked once). */
		len = b->len - name;
		if (b->overflow || len > sizeof tag)
			len = SIZE_MAX;
		else
			memcpy(tag, b->data + name, len);
		xml_addc(b, '>');
		xml_add_escaped(b, l->v[i].value != NULL ? l->v[i].value : "");
		buf_add(b, "</", 2);
		if (len != SIZE_MAX)
			buf_add(b, tag, len);
		else
			xml_add_name(b, l->v[i].key);
		xml_addc(b, '>');
	}
	xml_nl(b, indent);
	buf_adds(b, "</metadata>");
}

/* <dataCenterInfo class="..."> with name (and Amazon metadata). */
static void
xml_dc(struct buf *b, int indent, const struct instance *in, int compact)
{
	int	amazon = in->dc_name == DC_AMAZON;

	xml_nl(b, indent);
	buf_adds(b, "<dataCenterInfo class=\"");
	buf_adds(b, amazon ? XML_DC_AMAZON : XML_DC_DEFAULT);
	buf_adds(b, "\">");
	xml_elem(b, indent + 1, "name", dc_name_str(in->dc_name));
	if (amazon)
		xml_map(b, indent + 1, &in->dc_metadata,
		    compact ? xml_compact_dc_keys : NULL);
	xml_nl(b, indent);
	buf_adds(b, "</dataCenterInfo>");
}

/* InstanceInfoConverter.marshal's children, in its order (§4.2). */
static void
xml_instance_full(struct buf *b, const struct instance *in, int i)
{
	const char	*action;

	if (in->instance_id != NULL)
		xml_elem(b, i, "instanceId", in->instance_id);
	xml_elem(b, i, "hostName", in->host_name);
	xml_elem(b, i, "app", in->app);
	xml_elem(b, i, "ipAddr", in->ip_addr);
	if (instance_sid_shown(in->sid))
		xml_elem(b, i, "sid", in->sid);
	xml_elem(b, i, "status", instance_status_name(in->status));
	xml_elem(b, i, "overriddenstatus",
	    instance_status_name(in->overridden_status));
	xml_port(b, i, "port", in->port, in->port_enabled);
	xml_port(b, i, "securePort", in->secure_port, in->secure_port_enabled);
	xml_elem_i64(b, i, "countryId", in->country_id);
	if (in->has_dc)
		xml_dc(b, i, in, 0);
	if (in->has_lease) {
		xml_nl(b, i);
		buf_adds(b, "<leaseInfo>");
		xml_elem_i64(b, i + 1, "renewalIntervalInSecs",
		    in->lease.renewal_interval_secs);
		xml_elem_i64(b, i + 1, "durationInSecs",
		    in->lease.duration_secs);
		xml_elem_i64(b, i + 1, "registrationTimestamp",
		    in->lease.registration_ts);
		xml_elem_i64(b, i + 1, "lastRenewalTimestamp",
		    in->lease.last_renewal_ts);
		xml_elem_i64(b, i + 1, "evictionTimestamp",
		    in->lease.eviction_ts);
		xml_elem_i64(b, i + 1, "serviceUpTimestamp",
		    in->lease.service_up_ts);
		xml_nl(b, i);
		buf_adds(b, "</leaseInfo>");
	}
	xml_map(b, i, &in->metadata, NULL);
	/* The @Auto fields, as JSON items 14-25, all as text. */
	if (in->app_group_name != NULL)
		xml_elem(b, i, "appGroupName", in->app_group_name);
	if (in->home_page_url != NULL)
		xml_elem(b, i, "homePageUrl", in->home_page_url);
	if (in->status_page_url != NULL)
		xml_elem(b, i, "statusPageUrl", in->status_page_url);
	if (in->health_check_url != NULL)
		xml_elem(b, i, "healthCheckUrl", in->health_check_url);
	if (in->secure_health_check_url != NULL)
		xml_elem(b, i, "secureHealthCheckUrl",
		    in->secure_health_check_url);
	if (in->vip_address != NULL)
		xml_elem(b, i, "vipAddress", in->vip_address);
	if (in->secure_vip_address != NULL)
		xml_elem(b, i, "secureVipAddress", in->secure_vip_address);
	xml_elem(b, i, "isCoordinatingDiscoveryServer",
	    in->is_coordinating ? "true" : "false");
	xml_elem_i64(b, i, "lastUpdatedTimestamp", in->last_updated_ts);
	xml_elem_i64(b, i, "lastDirtyTimestamp", in->last_dirty_ts);
	if ((action = action_type_name(in->action_type)) != NULL)
		xml_elem(b, i, "actionType", action);
	if (in->asg_name != NULL)
		xml_elem(b, i, "asgName", in->asg_name);
}

/*
 * The mini field set (§4.3, MiniInstanceInfoMixIn), nulls omitted, ports
 * last. Jackson's exact XML order was not verified against Eureka; this is
 * the spec's order, the same as the JSON codec's.
 */
static void
xml_instance_compact(struct buf *b, const struct instance *in, int i)
{
	const char	*action;

	if (in->instance_id != NULL)
		xml_elem(b, i, "instanceId", in->instance_id);
	if (in->app != NULL)
		xml_elem(b, i, "app", in->app);
	if (in->app_group_name != NULL)
		xml_elem(b, i, "appGroupName", in->app_group_name);
	if (in->ip_addr != NULL)
		xml_elem(b, i, "ipAddr", in->ip_addr);
	if (in->host_name != NULL)
		xml_elem(b, i, "hostName", in->host_name);
	xml_elem(b, i, "status", instance_status_name(in->status));
	if (in->has_dc)
		xml_dc(b, i, in, 1);
	if (in->vip_address != NULL)
		xml_elem(b, i, "vipAddress", in->vip_address);
	if (in->secure_vip_address != NULL)
		xml_elem(b, i, "secureVipAddress", in->secure_vip_address);
	xml_elem_i64(b, i, "lastUpdatedTimestamp", in->last_updated_ts);
	if ((action = action_type_name(in->action_type)) != NULL)
		xml_elem(b, i, "actionType", action);
	if (in->asg_name != NULL)
		xml_elem(b, i, "asgName", in->asg_name);
	xml_port(b, i, "port", in->port, in->port_enabled);
	xml_port(b, i, "securePort", in->secure_port, in->secure_port_enabled);
}

/* One <instance> element; starts with its indentation, no newlines around. */
void
xml_encode_instance(struct buf *b, const struct instance *in, int flags,
    int indent)
{
	xml_indent(b, indent);
	buf_adds(b, "<instance>");
	if (flags & CODEC_COMPACT)
		xml_instance_compact(b, in, indent + 1);
	else
		xml_instance_full(b, in, indent + 1);
	xml_nl(b, indent);
	buf_adds(b, "</instance>");
}

/* "<application>\n  <name>X</name>", without a trailing newline. */
void
xml_app_open(struct buf *b, const char *name, int indent)
{
	xml_indent(b, indent);
	buf_adds(b, "<application>");
	xml_elem(b, indent + 1, "name", name);
}

/* "</application>" at its indentation. */
void
xml_app_close(struct buf *b, int indent)
{
	xml_indent(b, indent);
	buf_adds(b, "</application>");
}

/*
 * Start of <applications>. Full: the version and hash code come first
 * (ApplicationsConverter); compact: they come last, see xml_apps_close.
 */
void
xml_apps_open(struct buf *b, int flags, int64_t version, const char *hashcode)
{
	buf_adds(b, "<applications>");
	if (flags & CODEC_COMPACT)
		return;
	xml_elem_i64(b, 1, "versions__delta", version);
	xml_elem(b, 1, "apps__hashcode", hashcode != NULL ? hashcode : "");
}

/* End of <applications>; compact form writes version and hash code here. */
void
xml_apps_close(struct buf *b, int flags, int64_t version,
    const char *hashcode)
{
	if (flags & CODEC_COMPACT) {
		xml_indent(b, 1);
		buf_adds(b, "<versions__delta>");
		buf_add_i64(b, version);
		buf_adds(b, "</versions__delta>");
		xml_elem(b, 1, "apps__hashcode", hashcode != NULL ? hashcode :
		    "");
		xml_addc(b, '\n');
	}
	buf_adds(b, "</applications>");
}

/* An application fragment (or a document at indent 0), stitched as xml.h. */
void
xml_encode_application(struct buf *b, const struct application *a, int flags,
    int indent)
{
	size_t	i;

	xml_app_open(b, a->name, indent);
	for (i = 0; i < a->n; i++) {
		xml_addc(b, '\n');
		xml_encode_instance(b, a->instances[i], flags, indent + 1);
	}
	xml_addc(b, '\n');
	xml_app_close(b, indent);
}

/* A whole registry, stitched from the same pieces the cache uses. */
void
xml_encode_applications(struct buf *b, const struct applications *as,
    int flags)
{
	size_t	i;

	xml_apps_open(b, flags, as->versions_delta, as->apps_hashcode);
	for (i = 0; i < as->n; i++) {
		xml_addc(b, '\n');
		xml_encode_application(b, as->apps[i], flags, 1);
	}
	xml_addc(b, '\n');
	xml_apps_close(b, flags, as->versions_delta, as->apps_hashcode);
}

const struct codec xml_codec = {
	.sep = "\n",
	.sep_around = 1,
	.app_doc_open = "",
	.app_doc_close = "",
	.apps_open = xml_apps_open,
	.apps_close = xml_apps_close,
	.app_open = xml_app_open,
	.app_close = xml_app_close,
	.encode_instance = xml_encode_instance,
	.encode_applications = xml_encode_applications,
};

/* Record the first error and stop expat; later callbacks are no-ops. */
static void
xml_fail(struct xml_ctx *ctx, const char *fmt, ...)
{
	va_list	 ap;
	char	*msg;

	if (ctx->err != NULL)
		return;
	va_start(ap, fmt);
	xvasprintf(&msg, fmt, ap);
	va_end(ap);
	xasprintf(&ctx->err, "xml line %lu: %s",
	    (unsigned long)XML_GetCurrentLineNumber(ctx->parser), msg);
	free(msg);
	XML_StopParser(ctx->parser, XML_FALSE);
}

/* Long.valueOf, tolerating surrounding white space; -1 if not a number. */
static int
xml_parse_i64(const char *s, int64_t *out)
{
	char		*end;
	long long	 v;

	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	if (*s == '\0' || !(*s == '-' || *s == '+' || (*s >= '0' && *s <= '9')))
		return (-1);
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || end == s || !(end[-1] >= '0' && end[-1] <= '9'))
		return (-1);
	while (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r')
		end++;
	if (*end != '\0')
		return (-1);
	*out = v;
	return (0);
}

/* Integer.valueOf; -1 if not a number or out of int range. */
static int
xml_parse_i32(const char *s, int32_t *out)
{
	int64_t	v;

	if (xml_parse_i64(s, &v) != 0 || v < INT32_MIN || v > INT32_MAX)
		return (-1);
	*out = (int32_t)v;
	return (0);
}

/* A timestamp: a long in 0 .. INSTANCE_TS_MAX; -1 otherwise. */
static int
xml_parse_ts(const char *s, int64_t *out)
{
	int64_t	v;

	if (xml_parse_i64(s, &v) != 0 || v < 0 || v > INSTANCE_TS_MAX)
		return (-1);
	*out = v;
	return (0);
}

/* Fail unless v is a timestamp (element name for the reason); 0 if it is. */
static int
xml_ts_check(struct xml_ctx *ctx, const char *name, int64_t v)
{
	if (v >= 0 && v <= INSTANCE_TS_MAX)
		return (0);
	xml_fail(ctx, "%s is not " INSTANCE_TS_RULE, name);
	return (-1);
}

/* InstanceStatus.toEnum: case-insensitive, UNKNOWN when not a status. */
static enum instance_status
xml_status(const char *s)
{
	enum instance_status	 st;
	char			*up = xstrdup(s);

	str_upper(up);
	if (instance_status_parse(up, &st) != 0)
		st = STATUS_UNKNOWN;
	free(up);
	return (st);
}

/* XmlFriendlyNameCoder.decodeNode: "__" -> '_', "_-" -> '$'. */
static char *
xml_decode_name(const char *name)
{
	char	*out = xmalloc(strlen(name) + 1), *o = out;

	while (*name != '\0') {
		if (name[0] == '_' && name[1] == '_') {
			*o++ = '_';
			name += 2;
		} else if (name[0] == '_' && name[1] == '-') {
			*o++ = '$';
			name += 2;
		} else
			*o++ = *name++;
	}
	*o = '\0';
	return (out);
}

/* Add a parsed application; a repeated name merges into the first one. */
static void
xml_apps_take(struct applications *as, struct application *a)
{
	struct application	*old;
	size_t			 i;

	if ((old = applications_find(as, a->name)) == NULL) {
		applications_add(as, a);
		return;
	}
	for (i = 0; i < a->n; i++)
		application_add(old, a->instances[i]);
	a->n = 0;
	application_free(a);
}

/* A leaf's text in the instance builder's arena. */
static char *
xml_str(struct xml_ctx *ctx, const char *t)
{
	return (instance_builder_str(&ctx->ib, t, strlen(t)));
}

/* Store the text of a finished leaf element where it belongs. */
static void
xml_set_text(struct xml_ctx *ctx, const struct xml_frame *f, const char *name)
{
	struct instance	*in = ctx->inst;
	const char	*t = ctx->text.data != NULL ? ctx->text.data : "";
	struct kvlist	*l;
	char		*key;
	int64_t		 v64;
	int32_t		 v32;

	switch (f->field) {
	case F_VERSION:
		if (xml_parse_i64(t, &ctx->apps->versions_delta) != 0)
			xml_fail(ctx, "versions__delta is not a number");
		return;
	case F_HASHCODE:
		str_replace(&ctx->apps->apps_hashcode, t);
		return;
	case F_APP_NAME:
		str_replace(&ctx->app->name, t);
		str_upper(ctx->app->name);
		return;
	case F_NONE:
		return;
	default:
		break;
	}

	switch (f->field) {
	case F_INSTANCE_ID:
		in->instance_id = xml_str(ctx, t);
		break;
	case F_HOST_NAME:
		in->host_name = xml_str(ctx, t);
		break;
	case F_APP:
		in->app = xml_str(ctx, t);
		str_upper(in->app);
		break;
	case F_IP_ADDR:
		in->ip_addr = xml_str(ctx, t);
		break;
	case F_SID:
		/* NULL is the model's "na". */
		in->sid = strcmp(t, "na") == 0 ? NULL : xml_str(ctx, t);
		break;
	case F_STATUS:
		in->status = xml_status(t);
		break;
	case F_OVERRIDDEN:
		in->overridden_status = xml_status(t);
		break;
	case F_PORT:
	case F_SECURE_PORT:
		if (xml_parse_i32(t, &v32) != 0) {
			xml_fail(ctx, "<%s> is not a number", name);
			break;
		}
		if (f->field == F_PORT) {
			in->port = v32;
			in->port_enabled = f->enabled;
		} else {
			in->secure_port = v32;
			in->secure_port_enabled = f->enabled;
		}
		break;
	case F_COUNTRY_ID:
		if (xml_parse_i32(t, &in->country_id) != 0)
			xml_fail(ctx, "countryId is not a number");
		break;
	case F_APP_GROUP:
		in->app_group_name = xml_str(ctx, t);
		str_upper(in->app_group_name);
		break;
	case F_HOME_PAGE:
		in->home_page_url = xml_str(ctx, t);
		break;
	case F_STATUS_PAGE:
		in->status_page_url = xml_str(ctx, t);
		break;
	case F_HEALTH:
		in->health_check_url = xml_str(ctx, t);
		break;
	case F_SECURE_HEALTH:
		in->secure_health_check_url = xml_str(ctx, t);
		break;
	case F_VIP:
		in->vip_address = xml_str(ctx, t);
		break;
	case F_SECURE_VIP:
		in->secure_vip_address = xml_str(ctx, t);
		break;
	case F_COORDINATING:
		/* Boolean.valueOf: anything but "true" is false. */
		in->is_coordinating = strcasecmp(t, "true") == 0;
		break;
	case F_LAST_UPDATED:
		if (xml_parse_ts(t, &in->last_updated_ts) != 0)
			xml_fail(ctx, "lastUpdatedTimestamp is not "
			    INSTANCE_TS_RULE);
		break;
	case F_LAST_DIRTY:
		if (xml_parse_ts(t, &in->last_dirty_ts) != 0)
			xml_fail(ctx, "lastDirtyTimestamp is not "
			    INSTANCE_TS_RULE);
		break;
	case F_ACTION:
		/* Lenient as the JSON reader: unknown is "no action". */
		if (action_type_parse(t, &in->action_type) != 0)
			in->action_type = ACTION_NONE;
		break;
	case F_ASG:
		in->asg_name = xml_str(ctx, t);
		break;
	case F_DC_NAME:
		in->has_dc_name = 1;
		if (strcasecmp(t, "Amazon") == 0)
			in->dc_name = DC_AMAZON;
		else if (dc_name_parse(t, &in->dc_name) != 0)
			xml_fail(ctx, "unknown dataCenterInfo name \"%.64s\"",
			    t);
		break;
	/*
	 * LeaseInfoConverter skips numbers it cannot parse; a number that
	 * is no time is refused as everywhere.
	 */
	case F_L_RENEWAL:
		if (xml_parse_i32(t, &v32) == 0)
			in->lease.renewal_interval_secs = v32;
		break;
	case F_L_DURATION:
		if (xml_parse_i32(t, &v32) == 0)
			in->lease.duration_secs = v32;
		break;
	case F_L_REGISTRATION:
		if (xml_parse_i64(t, &v64) == 0 &&
		    xml_ts_check(ctx, name, v64) == 0)
			in->lease.registration_ts = v64;
		break;
	case F_L_LAST_RENEWAL:
		if (xml_parse_i64(t, &v64) == 0 &&
		    xml_ts_check(ctx, name, v64) == 0)
			in->lease.last_renewal_ts = v64;
		break;
	case F_L_EVICTION:
		if (xml_parse_i64(t, &v64) == 0 &&
		    xml_ts_check(ctx, name, v64) == 0)
			in->lease.eviction_ts = v64;
		break;
	case F_L_SERVICE_UP:
		if (xml_parse_i64(t, &v64) == 0 &&
		    xml_ts_check(ctx, name, v64) == 0)
			in->lease.service_up_ts = v64;
		break;
	case F_META:
	case F_DCMETA:
		l = f->field == F_META ? &in->metadata : &in->dc_metadata;
		if (strlen(name) > INSTANCE_MAX_STRING) {
			xml_fail(ctx, "metadata key too long");
			break;
		}
		key = xml_decode_name(name);
		if (kvlist_get(l, key) != NULL) {
			xml_fail(ctx, "metadata key <%.64s> repeated", name);
			free(key);
			break;
		}
		instance_builder_kv(&ctx->ib, l, key, strlen(key),
		    xml_str(ctx, t));
		free(key);
		if (l->n > INSTANCE_MAX_METADATA)
			xml_fail(ctx, "more than %d metadata entries",
			    INSTANCE_MAX_METADATA);
		break;
	default:
		break;
	}
}

/*
 * Whether the open element, xml_children[i], already appeared in its
 * parent (failing then): a repeated field would be read as the first
 * value by one parser and the last by another. Applications and
 * instances repeat by design.
 */
static int
xml_seen_twice(struct xml_ctx *ctx, size_t i)
{
	struct xml_frame	*p = &ctx->stack[ctx->depth - 1];
	uint64_t		 bit = (uint64_t)1 << i;

	if (xml_children[i].kind == K_APP || (xml_children[i].kind == K_INST &&
	    xml_children[i].parent == K_APP))
		return (0);
	if (p->seen & bit) {
		xml_fail(ctx, "<%s> repeated", xml_children[i].name);
		return (1);
	}
	p->seen |= bit;
	return (0);
}

/* An element opens: decide what it is and push a frame for it. */
static void
xml_start_cb(void *arg, const XML_Char *name, const XML_Char **atts)
{
	struct xml_ctx		*ctx = arg;
	struct xml_frame	 f = { K_IGNORE, F_NONE, 0, 0 };
	enum xml_kind		 parent;
	const char		*enabled = NULL;
	size_t			 i;

	if (ctx->err != NULL)
		return;
	if (ctx->depth >= XML_MAX_DEPTH) {
		xml_fail(ctx, "elements nested deeper than %d", XML_MAX_DEPTH);
		return;
	}
	parent = ctx->depth == 0 ? K_ROOT : ctx->stack[ctx->depth - 1].kind;
	switch (parent) {
	case K_ROOT:
		if ((ctx->root == K_APPS &&
		    strcmp(name, "applications") == 0) ||
		    (ctx->root == K_APP && strcmp(name, "application") == 0) ||
		    (ctx->root == K_INST && strcmp(name, "instance") == 0))
			f.kind = ctx->root;
		else {
			xml_fail(ctx, "unexpected root element <%.64s>", name);
			return;
		}
		break;
	case K_TEXT:
	case K_IGNORE:
		break;
	case K_META:
		f.kind = K_TEXT;
		f.field = F_META;
		break;
	case K_DCMETA:
		f.kind = K_TEXT;
		f.field = F_DCMETA;
		break;
	default:
		for (i = 0; i < sizeof xml_children / sizeof *xml_children;
		    i++) {
			if (xml_children[i].parent == parent &&
			    strcmp(xml_children[i].name, name) == 0) {
				f.kind = xml_children[i].kind;
				f.field = xml_children[i].field;
				if (xml_seen_twice(ctx, i))
					return;
				break;
			}
		}
		break;
	}

	switch (f.kind) {
	case K_APPS:
		ctx->apps = applications_new();
		break;
	case K_APP:
		ctx->app = application_new("");
		break;
	case K_INST:
		ctx->inst = instance_builder_begin(&ctx->ib);
		break;
	case K_DC:
		ctx->inst->has_dc = 1;
		ctx->inst->has_dc_name = 0;
		ctx->inst->dc_metadata.n = 0;	/* the arena keeps the text */
		break;
	case K_LEASE:
		ctx->inst->has_lease = 1;
		break;
	case K_META:
		ctx->inst->metadata.n = 0;	/* `class` ignored */
		break;
	case K_TEXT:
		buf_reset(&ctx->text);
		for (i = 0; atts[i] != NULL; i += 2) {
			if (strcmp(atts[i], "enabled") == 0)
				enabled = atts[i + 1];
		}
		/* <port> is on unless "false"; <securePort> needs "true". */
		if (f.field == F_PORT)
			f.enabled = enabled == NULL || strcmp(enabled, "false");
		else if (f.field == F_SECURE_PORT)
			f.enabled = enabled != NULL &&
			    strcmp(enabled, "true") == 0;
		break;
	default:
		break;
	}
	ctx->stack[ctx->depth++] = f;
}

/* An element closes: store its value or hand the finished object up. */
static void
xml_end_cb(void *arg, const XML_Char *name)
{
	struct xml_ctx		*ctx = arg;
	struct xml_frame	 f;

	if (ctx->err != NULL || ctx->depth == 0)
		return;
	f = ctx->stack[--ctx->depth];
	switch (f.kind) {
	case K_TEXT:
		xml_set_text(ctx, &f, name);
		break;
	case K_DC:
		/*
		 * A nameless dataCenterInfo decodes (has_dc_name = 0) so that
		 * rest.c can answer Eureka's own 400 message for it.
		 */
		if (ctx->inst->dc_name != DC_AMAZON)
			ctx->inst->dc_metadata.n = 0;
		break;
	case K_INST:
		if (ctx->depth > 0)
			application_add(ctx->app,
			    instance_builder_pack(&ctx->ib, ctx->now));
		else
			ctx->done = instance_builder_pack(&ctx->ib, ctx->now);
		ctx->inst = NULL;
		break;
	case K_APP:
		if (ctx->depth > 0) {
			xml_apps_take(ctx->apps, ctx->app);
			ctx->app = NULL;
		}
		break;
	default:
		break;
	}
}

/* Text: kept only inside leaves we store, and bounded there. */
static void
xml_text_cb(void *arg, const XML_Char *s, int len)
{
	struct xml_ctx	*ctx = arg;

	if (ctx->err != NULL || ctx->depth == 0 ||
	    ctx->stack[ctx->depth - 1].kind != K_TEXT)
		return;
	buf_add(&ctx->text, s, (size_t)len);
	if (ctx->text.overflow)
		xml_fail(ctx, "text longer than %d bytes", INSTANCE_MAX_STRING);
}

/* No DTDs at all: they are where entity expansion attacks live. */
static void
xml_doctype_cb(void *arg, const XML_Char *name, const XML_Char *sysid,
    const XML_Char *pubid, int has_internal)
{
	(void)name;
	(void)sysid;
	(void)pubid;
	(void)has_internal;
	xml_fail(arg, "DOCTYPE not allowed");
}

/* Belt and braces: an entity declaration stops the parse too. */
static void
xml_entity_cb(void *arg, const XML_Char *name, int is_param,
    const XML_Char *value, int value_len, const XML_Char *base,
    const XML_Char *sysid, const XML_Char *pubid, const XML_Char *notation)
{
	(void)name;
	(void)is_param;
	(void)value;
	(void)value_len;
	(void)base;
	(void)sysid;
	(void)pubid;
	(void)notation;
	xml_fail(arg, "entity declarations not allowed");
}

/* External entities are never fetched; referring to one is an error. */
static int
xml_external_cb(XML_Parser p, const XML_Char *context, const XML_Char *base,
    const XML_Char *sysid, const XML_Char *pubid)
{
	(void)p;
	(void)context;
	(void)base;
	(void)sysid;
	(void)pubid;
	return (XML_STATUS_ERROR);
}

/* Free whatever a parse left behind (all of it, after an error). */
static void
xml_ctx_free(struct xml_ctx *ctx)
{
	instance_free(ctx->done);
	instance_builder_free(&ctx->ib);
	application_free(ctx->app);
	applications_free(ctx->apps);
	buf_free(&ctx->text);
	free(ctx->err);
}

/* Parse data expecting the given root; 0 or -1 with *cause. */
static int
xml_run(struct xml_ctx *ctx, enum xml_kind root, const char *data, size_t len,
    int64_t now, char **cause)
{
	XML_Parser	p;
	size_t		n;
	int		last, rc = -1;

	memset(ctx, 0, sizeof *ctx);
	instance_builder_init(&ctx->ib);
	ctx->root = root;
	ctx->now = now;
	buf_init(&ctx->text, INSTANCE_MAX_STRING);
	if ((p = XML_ParserCreate(NULL)) == NULL)
		fatalx("%s: out of memory", __func__);
	ctx->parser = p;
	XML_SetUserData(p, ctx);
	XML_SetElementHandler(p, xml_start_cb, xml_end_cb);
	XML_SetCharacterDataHandler(p, xml_text_cb);
	XML_SetStartDoctypeDeclHandler(p, xml_doctype_cb);
	XML_SetEntityDeclHandler(p, xml_entity_cb);
	XML_SetExternalEntityRefHandler(p, xml_external_cb);
	XML_SetParamEntityParsing(p, XML_PARAM_ENTITY_PARSING_NEVER);

	do {
		n = len > XML_CHUNK ? XML_CHUNK : len;
		last = n == len;
		if (XML_Parse(p, data, (int)n, last) != XML_STATUS_OK) {
			if (ctx->err != NULL) {
				*cause = ctx->err;
				ctx->err = NULL;
			} else
				xasprintf(cause, "xml line %lu: %s",
				    (unsigned long)XML_GetCurrentLineNumber(p),
				    XML_ErrorString(XML_GetErrorCode(p)));
			goto out;
		}
		data += n;
		len -= n;
	} while (!last);
	rc = 0;
out:
	XML_ParserFree(p);
	ctx->parser = NULL;
	return (rc);
}

/* <instance> document; NULL with *cause on bad input. */
struct instance *
xml_decode_instance(const char *data, size_t len, int64_t now,
    char **cause)
{
	struct xml_ctx	 ctx;
	struct instance	*in = NULL;

	if (xml_run(&ctx, K_INST, data, len, now, cause) == 0) {
		in = ctx.done;
		ctx.done = NULL;
	}
	xml_ctx_free(&ctx);
	return (in);
}

/* <application> document; NULL with *cause on bad input. */
struct application *
xml_decode_application(const char *data, size_t len, int64_t now,
    char **cause)
{
	struct xml_ctx		 ctx;
	struct application	*a = NULL;

	if (xml_run(&ctx, K_APP, data, len, now, cause) == 0) {
		a = ctx.app;
		ctx.app = NULL;
	}
	xml_ctx_free(&ctx);
	return (a);
}

/* <applications> document (full or delta); NULL with *cause on bad input. */
struct applications *
xml_decode_applications(const char *data, size_t len, int64_t now,
    char **cause)
{
	struct xml_ctx		 ctx;
	struct applications	*as = NULL;

	if (xml_run(&ctx, K_APPS, data, len, now, cause) == 0) {
		as = ctx.apps;
		ctx.apps = NULL;
	}
	xml_ctx_free(&ctx);
	return (as);
}
