/*
 * instance_fields.c: one rule per instance field for both wire decoders
 * (instance_fields.h). The JSON decoder (json_dec.c) and the XML decoder
 * (xml_dec.c) find a field here and store its value with ifield_set; what
 * they do with it is the same unless the table's column for their format
 * says otherwise.
 *
 * Where the formats differ, and why (Netflix/eureka at 61acc83d,
 * eureka-client/src/main/java/com/netflix/...):
 *
 * - status, overriddenStatus: the JSON codec (discovery/converters/
 *   EurekaJacksonCodec.java, InstanceInfoDeserializer) looks the name up
 *   with EnumLookup, which compares characters exactly, so "up" is
 *   UNKNOWN; XStream's InstanceInfoConverter (discovery/converters/
 *   Converters.java) calls InstanceStatus.toEnum (appinfo/
 *   InstanceInfo.java), which upper-cases first, so "up" is UP. Both keep
 *   an unknown name as UNKNOWN. IFR_ICASE in the XML column.
 * - dataCenterInfo name: XStream's DataCenterInfoConverter takes "Amazon"
 *   in any case (equalsIgnoreCase) and the other names by valueOf (exact);
 *   Jackson binds the enum exactly. IFR_AMAZON_ICASE for XML.
 * - leaseInfo numbers: LeaseInfoConverter skips a child it cannot parse
 *   (NumberFormatException: continue); IFR_SKIP_BAD for XML. The JSON
 *   codec's getValueAsInt/getValueAsLong read such a value as 0; heureka
 *   refuses it instead (a 400 with a reason, issue 9), as for every other
 *   JSON number.
 * - renewalTimestamp: LeaseInfo's @JsonCreator (appinfo/LeaseInfo.java)
 *   takes it as the legacy name of lastRenewalTimestamp, which wins when
 *   both are given; XML has no such child (IFR_ABSENT).
 * - isCoordinatingDiscoveryServer: an @Auto field, which XStream sets
 *   with Boolean.valueOf ("true" in any case is true, anything else
 *   false): IFR_BOOL_LOOSE. JSON takes true/false or their strings
 *   (heureka refuses anything else, issue 9).
 * - port and securePort enabled: XML's attribute enables <port> unless
 *   it is exactly "false" and <securePort> only if exactly "true"
 *   (InstanceInfoConverter); JSON's "@enabled" is a boolean.
 *
 * The same in both formats: app and appGroupName upper-cased (the JSON
 * codec's toUpperCase; spec §10.1 -- XStream's @Auto path would keep
 * appGroupName as sent, but heureka has always upper-cased it in both
 * formats and a client cannot tell), sid "na" meaning absent, actionType
 * exact with an unknown name meaning none, countryId and ports as ints,
 * the two instance timestamps refused outside 0 .. INSTANCE_TS_MAX.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "instance.h"
#include "instance_fields.h"

/* Rule shorthands for the table's columns. */
#define BOTH(r)		{ (r), (r) }
#define FMT(j, x)	{ (j), (x) }

const struct ifield_def ifield_table[IF_COUNT] = {
	[IF_INSTANCE_ID] = { "instanceId", IFP_INSTANCE, IFT_STRING,
	    BOTH(0) },
	[IF_HOST_NAME] = { "hostName", IFP_INSTANCE, IFT_STRING, BOTH(0) },
	[IF_APP] = { "app", IFP_INSTANCE, IFT_STRING, BOTH(IFR_UPPER) },
	[IF_IP_ADDR] = { "ipAddr", IFP_INSTANCE, IFT_STRING, BOTH(0) },
	[IF_SID] = { "sid", IFP_INSTANCE, IFT_SID, BOTH(0) },
	[IF_STATUS] = { "status", IFP_INSTANCE, IFT_STATUS,
	    FMT(0, IFR_ICASE) },
	[IF_OVERRIDDEN_STATUS] = { "overriddenStatus", IFP_INSTANCE,
	    IFT_STATUS, FMT(0, IFR_ICASE) },
	[IF_OVERRIDDEN_STATUS_LC] = { "overriddenstatus", IFP_INSTANCE,
	    IFT_STATUS, FMT(0, IFR_ICASE) },
	[IF_PORT] = { "port", IFP_INSTANCE, IFT_INT, BOTH(0) },
	[IF_PORT_ENABLED] = { "@enabled", IFP_PORT, IFT_BOOL,
	    FMT(0, IFR_BOOL_NOT_FALSE) },
	[IF_SECURE_PORT] = { "securePort", IFP_INSTANCE, IFT_INT, BOTH(0) },
	[IF_SECURE_PORT_ENABLED] = { "@enabled", IFP_PORT, IFT_BOOL,
	    FMT(0, IFR_BOOL_TRUE) },
	[IF_COUNTRY_ID] = { "countryId", IFP_INSTANCE, IFT_INT, BOTH(0) },
	[IF_APP_GROUP_NAME] = { "appGroupName", IFP_INSTANCE, IFT_STRING,
	    BOTH(IFR_UPPER) },
	[IF_HOME_PAGE_URL] = { "homePageUrl", IFP_INSTANCE, IFT_STRING,
	    BOTH(0) },
	[IF_STATUS_PAGE_URL] = { "statusPageUrl", IFP_INSTANCE, IFT_STRING,
	    BOTH(0) },
	[IF_HEALTH_CHECK_URL] = { "healthCheckUrl", IFP_INSTANCE, IFT_STRING,
	    BOTH(0) },
	[IF_SECURE_HEALTH_CHECK_URL] = { "secureHealthCheckUrl", IFP_INSTANCE,
	    IFT_STRING, BOTH(0) },
	[IF_VIP_ADDRESS] = { "vipAddress", IFP_INSTANCE, IFT_STRING,
	    BOTH(0) },
	[IF_SECURE_VIP_ADDRESS] = { "secureVipAddress", IFP_INSTANCE,
	    IFT_STRING, BOTH(0) },
	[IF_IS_COORDINATING] = { "isCoordinatingDiscoveryServer",
	    IFP_INSTANCE, IFT_BOOL, FMT(0, IFR_BOOL_LOOSE) },
	[IF_LAST_UPDATED_TS] = { "lastUpdatedTimestamp", IFP_INSTANCE, IFT_TS,
	    BOTH(0) },
	[IF_LAST_DIRTY_TS] = { "lastDirtyTimestamp", IFP_INSTANCE, IFT_TS,
	    BOTH(0) },
	[IF_ACTION_TYPE] = { "actionType", IFP_INSTANCE, IFT_ACTION,
	    BOTH(0) },
	[IF_ASG_NAME] = { "asgName", IFP_INSTANCE, IFT_STRING, BOTH(0) },
	[IF_DC_NAME] = { "name", IFP_DC, IFT_DC_NAME,
	    FMT(0, IFR_AMAZON_ICASE) },
	[IF_L_RENEWAL_INTERVAL] = { "renewalIntervalInSecs", IFP_LEASE,
	    IFT_INT, FMT(0, IFR_SKIP_BAD) },
	[IF_L_DURATION] = { "durationInSecs", IFP_LEASE, IFT_INT,
	    FMT(0, IFR_SKIP_BAD) },
	[IF_L_REGISTRATION_TS] = { "registrationTimestamp", IFP_LEASE, IFT_TS,
	    FMT(0, IFR_SKIP_BAD) },
	[IF_L_LAST_RENEWAL_TS] = { "lastRenewalTimestamp", IFP_LEASE, IFT_TS,
	    FMT(0, IFR_SKIP_BAD) },
	[IF_L_RENEWAL_TS] = { "renewalTimestamp", IFP_LEASE, IFT_TS,
	    FMT(0, IFR_ABSENT) },
	[IF_L_EVICTION_TS] = { "evictionTimestamp", IFP_LEASE, IFT_TS,
	    FMT(0, IFR_SKIP_BAD) },
	[IF_L_SERVICE_UP_TS] = { "serviceUpTimestamp", IFP_LEASE, IFT_TS,
	    FMT(0, IFR_SKIP_BAD) },
};

#define WHY_NAME	"a name expected"
#define WHY_NUMBER	"a number expected"
#define WHY_BOOL	"true or false expected"
#define WHY_DC		"MyOwn, Netflix or Amazon expected"

static int	ifield_enum(const struct ifield_val *, int, const char *const *,
		    size_t, int *);

/* Is c white space as XML text has it around a number? */
static inline int
ifield_space(char c)
{
	return (c == ' ' || c == '\t' || c == '\n' || c == '\r');
}

/*
 * Parse a whole decimal long as Long.parseLong does. Up to 18 digits
 * cannot overflow; past them each digit is checked against the limit's
 * tenth and last digit.
 */
int
ifield_parse_i64(const char *s, size_t len, int trim, int64_t *out)
{
	const char	*end = s + len, *fast;
	uint64_t	 v = 0, lim = (uint64_t)INT64_MAX, d;
	int		 neg = 0;

	if (trim) {
		while (s < end && ifield_space(*s))
			s++;
		while (end > s && ifield_space(end[-1]))
			end--;
	}
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

/*
 * A value's name among names[n] (exactly, or in any ASCII case with
 * icase) as *out; -1 if it is none of them.
 */
static int
ifield_enum(const struct ifield_val *v, int icase, const char *const *names,
    size_t n, int *out)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		if (strlen(names[i]) != v->len)
			continue;
		if (icase ? strncasecmp(names[i], v->s, v->len) == 0 :
		    memcmp(names[i], v->s, v->len) == 0) {
			*out = (int)i;
			return (0);
		}
	}
	return (-1);
}

/*
 * A boolean: JSON's true/false or their strings in any case (the Java
 * clients write both), else -1; with one of the XML rules, the rule.
 */
static int
ifield_bool(const struct ifield_val *v, uint8_t rule)
{
	if (rule & IFR_BOOL_LOOSE)
		return (v->len == 4 && strncasecmp(v->s, "true", 4) == 0);
	if (rule & IFR_BOOL_NOT_FALSE)
		return (!(v->len == 5 && memcmp(v->s, "false", 5) == 0));
	if (rule & IFR_BOOL_TRUE)
		return (v->len == 4 && memcmp(v->s, "true", 4) == 0);
	if (v->type == IFV_BOOL)
		return (v->b);
	if (v->type != IFV_TEXT)
		return (-1);
	if (v->len == 4 && strncasecmp(v->s, "true", 4) == 0)
		return (1);
	if (v->len == 5 && strncasecmp(v->s, "false", 5) == 0)
		return (0);
	return (-1);
}

/* A string field's text in the builder's arena (a boolean as its word). */
static char *
ifield_text(struct instance_builder *ib, const struct ifield_val *v,
    uint8_t rule)
{
	char	*s;

	if (v->type == IFV_BOOL)
		s = v->b ? instance_builder_str(ib, "true", 4) :
		    instance_builder_str(ib, "false", 5);
	else
		s = instance_builder_str(ib, v->s, v->len);
	if (rule & IFR_UPPER)
		str_upper(s);
	return (s);
}

/* Where a string field is kept in the instance. */
static char **
ifield_str_slot(struct instance *in, enum ifield f)
{
	switch (f) {
	case IF_INSTANCE_ID:
		return (&in->instance_id);
	case IF_HOST_NAME:
		return (&in->host_name);
	case IF_APP:
		return (&in->app);
	case IF_IP_ADDR:
		return (&in->ip_addr);
	case IF_APP_GROUP_NAME:
		return (&in->app_group_name);
	case IF_HOME_PAGE_URL:
		return (&in->home_page_url);
	case IF_STATUS_PAGE_URL:
		return (&in->status_page_url);
	case IF_HEALTH_CHECK_URL:
		return (&in->health_check_url);
	case IF_SECURE_HEALTH_CHECK_URL:
		return (&in->secure_health_check_url);
	case IF_VIP_ADDRESS:
		return (&in->vip_address);
	case IF_SECURE_VIP_ADDRESS:
		return (&in->secure_vip_address);
	case IF_ASG_NAME:
		return (&in->asg_name);
	default:
		return (NULL);
	}
}

/* Store an int field's value. */
static void
ifield_put_int(struct instance *in, enum ifield f, int32_t n)
{
	switch (f) {
	case IF_PORT:
		in->port = n;
		break;
	case IF_SECURE_PORT:
		in->secure_port = n;
		break;
	case IF_COUNTRY_ID:
		in->country_id = n;
		break;
	case IF_L_RENEWAL_INTERVAL:
		/* <= 0 is "the default": instance_defaults() (§4.1.6). */
		in->lease.renewal_interval_secs = n;
		break;
	case IF_L_DURATION:
		in->lease.duration_secs = n;
		break;
	default:
		break;
	}
}

/*
 * Store a timestamp field's value. renewalTimestamp only fills
 * lastRenewalTimestamp while that has not been given (LeaseInfo's
 * @JsonCreator); the decoder tracks which by has_last_renewal.
 */
static void
ifield_put_ts(struct instance *in, enum ifield f, int64_t n)
{
	switch (f) {
	case IF_LAST_UPDATED_TS:
		in->last_updated_ts = n;
		break;
	case IF_LAST_DIRTY_TS:
		in->last_dirty_ts = n;
		break;
	case IF_L_REGISTRATION_TS:
		in->lease.registration_ts = n;
		break;
	case IF_L_LAST_RENEWAL_TS:
	case IF_L_RENEWAL_TS:
		in->lease.last_renewal_ts = n;
		break;
	case IF_L_EVICTION_TS:
		in->lease.eviction_ts = n;
		break;
	case IF_L_SERVICE_UP_TS:
		in->lease.service_up_ts = n;
		break;
	default:
		break;
	}
}

/* Store a boolean field's value. */
static void
ifield_put_bool(struct instance *in, enum ifield f, int b)
{
	if (f == IF_PORT_ENABLED)
		in->port_enabled = (uint8_t)b;
	else if (f == IF_SECURE_PORT_ENABLED)
		in->secure_port_enabled = (uint8_t)b;
	else if (f == IF_IS_COORDINATING)
		in->is_coordinating = (uint8_t)b;
}

/* Read v as field f by format fmt's rule and store it in ib->in. */
int
ifield_set(struct instance_builder *ib, enum ifield f, enum ifield_fmt fmt,
    const struct ifield_val *v, const char **why)
{
	static const char *const status_names[STATUS_COUNT] = {
		"UP", "DOWN", "STARTING", "OUT_OF_SERVICE", "UNKNOWN"
	};
	static const char *const action_names[] = {
		"", "ADDED", "MODIFIED", "DELETED"
	};
	static const char *const dc_names[] = {
		"MyOwn", "Netflix", "Amazon"
	};
	const struct ifield_def	*d = &ifield_table[f];
	struct instance		*in = &ib->in;
	uint8_t			 rule = d->rule[fmt];
	int64_t			 n;
	int			 e, b;

	*why = NULL;
	switch (d->type) {
	case IFT_STRING:
		*ifield_str_slot(in, f) = ifield_text(ib, v, rule);
		return (0);
	case IFT_SID:
		if (v->type == IFV_TEXT && v->len == 2 &&
		    memcmp(v->s, "na", 2) == 0)
			in->sid = NULL;
		else
			in->sid = ifield_text(ib, v, rule);
		return (0);
	case IFT_STATUS:
		/* A number or a boolean is no name at all. */
		if (v->type != IFV_TEXT)
			break;
		if (ifield_enum(v, rule & IFR_ICASE, status_names,
		    STATUS_COUNT, &e) != 0)
			e = STATUS_UNKNOWN;
		if (f == IF_STATUS)
			in->status = (enum instance_status)e;
		else
			in->overridden_status = (enum instance_status)e;
		return (0);
	case IFT_ACTION:
		if (v->type != IFV_TEXT)
			break;
		if (ifield_enum(v, 0, action_names + 1, 3, &e) == 0)
			in->action_type = (enum action_type)(e + 1);
		else
			in->action_type = ACTION_NONE;
		return (0);
	case IFT_INT:
	case IFT_TS:
		if (v->type == IFV_BOOL ||
		    ifield_parse_i64(v->s, v->len, fmt == IFMT_XML, &n) != 0) {
			if (rule & IFR_SKIP_BAD)
				return (0);
			*why = d->type == IFT_TS ? INSTANCE_TS_RULE :
			    WHY_NUMBER;
			return (-1);
		}
		if (d->type == IFT_TS) {
			if (n < 0 || n > INSTANCE_TS_MAX) {
				*why = INSTANCE_TS_RULE;
				return (-1);
			}
			ifield_put_ts(in, f, n);
		} else {
			if (n < INT32_MIN || n > INT32_MAX) {
				if (rule & IFR_SKIP_BAD)
					return (0);
				*why = WHY_NUMBER;
				return (-1);
			}
			ifield_put_int(in, f, (int32_t)n);
		}
		return (0);
	case IFT_BOOL:
		if ((b = ifield_bool(v, rule)) < 0) {
			*why = WHY_BOOL;
			return (-1);
		}
		ifield_put_bool(in, f, b);
		return (0);
	case IFT_DC_NAME:
		if (v->type != IFV_TEXT)
			break;
		if ((rule & IFR_AMAZON_ICASE) && v->len == 6 &&
		    strncasecmp(v->s, "Amazon", 6) == 0)
			e = DC_AMAZON;
		else if (ifield_enum(v, 0, dc_names, 3, &e) != 0) {
			*why = WHY_DC;
			return (-1);
		}
		in->dc_name = (enum dc_name)e;
		in->has_dc_name = 1;
		return (0);
	}
	*why = d->type == IFT_DC_NAME ? WHY_DC : WHY_NAME;
	return (-1);
}

/* The field a parent's child of this name is in fmt, or IF_NONE. */
enum ifield
ifield_find(enum ifield_parent parent, enum ifield_fmt fmt, const char *name,
    size_t len)
{
	size_t	i;

	for (i = 0; i < IF_COUNT; i++) {
		if (ifield_table[i].parent != parent ||
		    (ifield_table[i].rule[fmt] & IFR_ABSENT))
			continue;
		if (strlen(ifield_table[i].name) == len &&
		    memcmp(ifield_table[i].name, name, len) == 0)
			return ((enum ifield)i);
	}
	return (IF_NONE);
}
