/*
 * xml_enc.c: Eureka's XML codec, the writing side; the reader is
 * xml_dec.c. The writer reproduces what XStream's PrettyPrintWriter emits
 * for Eureka's Converters (spec §4.2): no declaration, two-space
 * indentation, '\n' line breaks, no trailing newline, XmlFriendlyNameCoder
 * names ('_' -> "__", '$' -> "_-"). It writes straight into a struct buf
 * with no intermediate tree, because the server encodes whole registries
 * with it. Pieces never begin or end with '\n'; callers join them with one
 * '\n' (see xml.h), which is also how the whole-document encoders below
 * are built.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "codec.h"
#include "instance.h"
#include "xmalloc.h"
#include "xml.h"

#define XML_EMPTY_MAP	"<metadata class=\"java.util.Collections$EmptyMap\"/>"
#define XML_DC_DEFAULT	"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo"
#define XML_DC_AMAZON	"com.netflix.appinfo.AmazonInfo"

/* AmazonInfo metadata kept by the compact codec (§4.3). */
static const char *xml_compact_dc_keys[] = {
	"instance-id", "public-ipv4", "public-hostname", "local-ipv4",
	"availability-zone", NULL
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
