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
#define OFF(m)		offsetof(struct instance, m)

const struct ifield_def ifield_table[IF_COUNT] = {
	[IF_INSTANCE_ID] = { "instanceId", IFP_INSTANCE, IFT_STRING,
	    BOTH(0), OFF(instance_id) },
	[IF_HOST_NAME] = { "hostName", IFP_INSTANCE, IFT_STRING, BOTH(0),
	    OFF(host_name) },
	[IF_APP] = { "app", IFP_INSTANCE, IFT_STRING, BOTH(IFR_UPPER),
	    OFF(app) },
	[IF_IP_ADDR] = { "ipAddr", IFP_INSTANCE, IFT_STRING, BOTH(0),
	    OFF(ip_addr) },
	[IF_SID] = { "sid", IFP_INSTANCE, IFT_SID, BOTH(0),
	    OFF(sid) },
	[IF_STATUS] = { "status", IFP_INSTANCE, IFT_STATUS,
	    FMT(0, IFR_ICASE),
	    OFF(status) },
	[IF_OVERRIDDEN_STATUS] = { "overriddenStatus", IFP_INSTANCE,
	    IFT_STATUS, FMT(0, IFR_ICASE),
	    OFF(overridden_status) },
	[IF_OVERRIDDEN_STATUS_LC] = { "overriddenstatus", IFP_INSTANCE,
	    IFT_STATUS, FMT(0, IFR_ICASE),
	    OFF(overridden_status) },
	[IF_PORT] = { "port", IFP_INSTANCE, IFT_INT, BOTH(0),
	    OFF(port) },
	[IF_PORT_ENABLED] = { "@enabled", IFP_PORT, IFT_BOOL,
	    FMT(0, IFR_BOOL_NOT_FALSE),
	    OFF(port_enabled) },
	[IF_SECURE_PORT] = { "securePort", IFP_INSTANCE, IFT_INT, BOTH(0),
	    OFF(secure_port) },
	[IF_SECURE_PORT_ENABLED] = { "@enabled", IFP_PORT, IFT_BOOL,
	    FMT(0, IFR_BOOL_TRUE),
	    OFF(secure_port_enabled) },
	[IF_COUNTRY_ID] = { "countryId", IFP_INSTANCE, IFT_INT, BOTH(0),
	    OFF(country_id) },
	[IF_APP_GROUP_NAME] = { "appGroupName", IFP_INSTANCE, IFT_STRING,
	    BOTH(IFR_UPPER),
	    OFF(app_group_name) },
	[IF_HOME_PAGE_URL] = { "homePageUrl", IFP_INSTANCE, IFT_STRING,
	    BOTH(0),
	    OFF(home_page_url) },
	[IF_STATUS_PAGE_URL] = { "statusPageUrl", IFP_INSTANCE, IFT_STRING,
	    BOTH(0),
	    OFF(status_page_url) },
	[IF_HEALTH_CHECK_URL] = { "healthCheckUrl", IFP_INSTANCE, IFT_STRING,
	    BOTH(0),
	    OFF(health_check_url) },
	[IF_SECURE_HEALTH_CHECK_URL] = { "secureHealthCheckUrl", IFP_INSTANCE,
	    IFT_STRING, BOTH(0),
	    OFF(secure_health_check_url) },
	[IF_VIP_ADDRESS] = { "vipAddress", IFP_INSTANCE, IFT_STRING,
	    BOTH(0),
	    OFF(vip_address) },
	[IF_SECURE_VIP_ADDRESS] = { "secureVipAddress", IFP_INSTANCE,
	    IFT_STRING, BOTH(0),
	    OFF(secure_vip_address) },
	[IF_IS_COORDINATING] = { "isCoordinatingDiscoveryServer",
	    IFP_INSTANCE, IFT_BOOL, FMT(0, IFR_BOOL_LOOSE),
	    OFF(is_coordinating) },
	[IF_LAST_UPDATED_TS] = { "lastUpdatedTimestamp", IFP_INSTANCE, IFT_TS,
	    BOTH(0),
	    OFF(last_updated_ts) },
	[IF_LAST_DIRTY_TS] = { "lastDirtyTimestamp", IFP_INSTANCE, IFT_TS,
	    BOTH(0),
	    OFF(last_dirty_ts) },
	[IF_ACTION_TYPE] = { "actionType", IFP_INSTANCE, IFT_ACTION,
	    BOTH(0),
	    OFF(action_type) },
	[IF_ASG_NAME] = { "asgName", IFP_INSTANCE, IFT_STRING, BOTH(0),
	    OFF(asg_name) },
	[IF_DC_NAME] = { "name", IFP_DC, IFT_DC_NAME,
	    FMT(0, IFR_AMAZON_ICASE),
	    OFF(dc_name) },
	[IF_L_RENEWAL_INTERVAL] = { "renewalIntervalInSecs", IFP_LEASE,
	    IFT_INT, FMT(0, IFR_SKIP_BAD),
	    OFF(lease.renewal_interval_secs) },
	[IF_L_DURATION] = { "durationInSecs", IFP_LEASE, IFT_INT,
	    FMT(0, IFR_SKIP_BAD),
	    OFF(lease.duration_secs) },
	[IF_L_REGISTRATION_TS] = { "registrationTimestamp", IFP_LEASE, IFT_TS,
	    FMT(0, IFR_SKIP_BAD),
	    OFF(lease.registration_ts) },
	[IF_L_LAST_RENEWAL_TS] = { "lastRenewalTimestamp", IFP_LEASE, IFT_TS,
	    FMT(0, IFR_SKIP_BAD),
	    OFF(lease.last_renewal_ts) },
	[IF_L_RENEWAL_TS] = { "renewalTimestamp", IFP_LEASE, IFT_TS,
	    FMT(0, IFR_ABSENT),
	    OFF(lease.last_renewal_ts) },
	[IF_L_EVICTION_TS] = { "evictionTimestamp", IFP_LEASE, IFT_TS,
	    FMT(0, IFR_SKIP_BAD),
	    OFF(lease.eviction_ts) },
	[IF_L_SERVICE_UP_TS] = { "serviceUpTimestamp", IFP_LEASE, IFT_TS,
	    FMT(0, IFR_SKIP_BAD),
	    OFF(lease.service_up_ts) },
};

#define WHY_NAME	"a name expected"
#define WHY_NUMBER	"a number expected"
#define WHY_BOOL	"true or false expected"
#define WHY_DC		"MyOwn, Netflix or Amazon expected"

/* An enum's name and its length, for ifield_enum. */
struct ifield_name {
	const char	*s;
	size_t		 len;
};
#define NAME(x)		{ (x), sizeof(x) - 1 }

static int	ifield_enum(const struct ifield_val *, int,
		    const struct ifield_name *, size_t, int *);

/*
 * A value's name among names[n] (exactly, or in any ASCII case with
 * icase) as *out; -1 if it is none of them.
 */
static int
ifield_enum(const struct ifield_val *v, int icase,
    const struct ifield_name *names, size_t n, int *out)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		if (names[i].len != v->len)
			continue;
		if (icase ? strncasecmp(names[i].s, v->s, v->len) == 0 :
		    memcmp(names[i].s, v->s, v->len) == 0) {
			*out = (int)i;
			return (0);
		}
	}
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

/* Field d's member of the instance, as a T. */
#define IFIELD_AT(in, d, T)	((T *)(void *)((char *)(in) + (d)->off))

/*
 * Read v as field f by format fmt's rule and store it in ib->in: the
 * whole rule, for the cases ifield_set (instance_fields.h) does not take
 * inline.
 */
int
ifield_set_slow(struct instance_builder *ib, enum ifield f, enum ifield_fmt fmt,
    const struct ifield_val *v, const char **why)
{
	static const struct ifield_name action_names[] = {
		NAME(""), NAME("ADDED"), NAME("MODIFIED"), NAME("DELETED")
	};
	const struct ifield_def	*d = &ifield_table[f];
	struct instance		*in = &ib->in;
	uint8_t			 rule = d->rule[fmt];
	int64_t			 n;
	int			 e, b;
	enum instance_status	 st;
	char			 up[sizeof "OUT_OF_SERVICE" - 1];
	size_t			 i;

	*why = NULL;
	switch (d->type) {
	case IFT_STRING:
		*IFIELD_AT(in, d, char *) = ifield_text(ib, v, rule);
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
		if (!(rule & IFR_ICASE) || v->len > sizeof up)
			st = ifield_status(v->s, v->len);
		else {
			/* toEnum's upper-casing, then the exact names. */
			for (i = 0; i < v->len; i++)
				up[i] = v->s[i] >= 'a' && v->s[i] <= 'z' ?
				    (char)(v->s[i] - 'a' + 'A') : v->s[i];
			st = ifield_status(up, v->len);
		}
		*IFIELD_AT(in, d, enum instance_status) = st;
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
			*IFIELD_AT(in, d, int64_t) = n;
		} else {
			if (n < INT32_MIN || n > INT32_MAX) {
				if (rule & IFR_SKIP_BAD)
					return (0);
				*why = WHY_NUMBER;
				return (-1);
			}
			*IFIELD_AT(in, d, int32_t) = (int32_t)n;
		}
		return (0);
	case IFT_BOOL:
		if ((b = ifield_bool(v, rule)) < 0) {
			*why = WHY_BOOL;
			return (-1);
		}
		*IFIELD_AT(in, d, uint8_t) = (uint8_t)b;
		return (0);
	case IFT_DC_NAME:
		if (v->type != IFV_TEXT)
			break;
		if ((rule & IFR_AMAZON_ICASE) && v->len == 6 &&
		    strncasecmp(v->s, "Amazon", 6) == 0)
			e = DC_AMAZON;
		else if ((e = ifield_dc(v->s, v->len)) < 0) {
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
