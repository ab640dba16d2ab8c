/*
 * json_keys.h: the JSON decoder's vocabulary (private to json_dec.c and
 * json_keys.c): every key it gives a meaning to, the instance field each
 * names (instance_fields.h), and the lookup of a key's bytes, kept inline
 * here because the decoder calls it once per member of every document.
 */
#ifndef JSON_KEYS_H
#define JSON_KEYS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "instance_fields.h"

/*
 * Every key the decoder gives a meaning to, so that a repeated one can be
 * refused (a parser that kept the first and one that kept the last would
 * read two different instances from the same bytes). Keys it ignores may
 * repeat. At most 64 (a bit each in struct frame's seen). The key of each
 * member is looked up once, when yajl hands it over (json_key_find), and
 * everything after dispatches on its index.
 */
#define JSON_KEYS(X)							\
	X(K_INSTANCE_ID, "instanceId", IF_INSTANCE_ID)			\
	X(K_HOST_NAME, "hostName", IF_HOST_NAME)			\
	X(K_APP, "app", IF_APP)						\
	X(K_IP_ADDR, "ipAddr", IF_IP_ADDR)				\
	X(K_SID, "sid", IF_SID)						\
	X(K_STATUS, "status", IF_STATUS)				\
	X(K_OVERRIDDEN_STATUS, "overriddenStatus", IF_OVERRIDDEN_STATUS) \
	X(K_OVERRIDDEN_STATUS_LC, "overriddenstatus", IF_OVERRIDDEN_STATUS_LC) \
	X(K_COUNTRY_ID, "countryId", IF_COUNTRY_ID)			\
	X(K_APP_GROUP_NAME, "appGroupName", IF_APP_GROUP_NAME)		\
	X(K_HOME_PAGE_URL, "homePageUrl", IF_HOME_PAGE_URL)		\
	X(K_STATUS_PAGE_URL, "statusPageUrl", IF_STATUS_PAGE_URL)	\
	X(K_HEALTH_CHECK_URL, "healthCheckUrl", IF_HEALTH_CHECK_URL)	\
	X(K_SECURE_HEALTH_CHECK_URL, "secureHealthCheckUrl",		\
	    IF_SECURE_HEALTH_CHECK_URL)					\
	X(K_VIP_ADDRESS, "vipAddress", IF_VIP_ADDRESS)			\
	X(K_SECURE_VIP_ADDRESS, "secureVipAddress", IF_SECURE_VIP_ADDRESS) \
	X(K_IS_COORDINATING, "isCoordinatingDiscoveryServer", IF_IS_COORDINATING) \
	X(K_LAST_UPDATED_TS, "lastUpdatedTimestamp", IF_LAST_UPDATED_TS) \
	X(K_LAST_DIRTY_TS, "lastDirtyTimestamp", IF_LAST_DIRTY_TS)	\
	X(K_ACTION_TYPE, "actionType", IF_ACTION_TYPE)			\
	X(K_ASG_NAME, "asgName", IF_ASG_NAME)				\
	X(K_PORT, "port", IF_NONE)					\
	X(K_SECURE_PORT, "securePort", IF_NONE)				\
	X(K_DATA_CENTER_INFO, "dataCenterInfo", IF_NONE)		\
	X(K_LEASE_INFO, "leaseInfo", IF_NONE)				\
	X(K_METADATA, "metadata", IF_NONE)				\
	X(K_INSTANCE, "instance", IF_NONE)				\
	X(K_DOLLAR, "$", IF_NONE)					\
	X(K_ENABLED, "@enabled", IF_NONE)				\
	X(K_NAME, "name", IF_NONE)					\
	X(K_RENEWAL_INTERVAL, "renewalIntervalInSecs", IF_L_RENEWAL_INTERVAL) \
	X(K_DURATION, "durationInSecs", IF_L_DURATION)			\
	X(K_REGISTRATION_TS, "registrationTimestamp", IF_L_REGISTRATION_TS) \
	X(K_LAST_RENEWAL_TS, "lastRenewalTimestamp", IF_L_LAST_RENEWAL_TS) \
	X(K_RENEWAL_TS, "renewalTimestamp", IF_L_RENEWAL_TS)		\
	X(K_EVICTION_TS, "evictionTimestamp", IF_L_EVICTION_TS)		\
	X(K_SERVICE_UP_TS, "serviceUpTimestamp", IF_L_SERVICE_UP_TS)	\
	X(K_VERSIONS_DELTA, "versions__delta", IF_NONE)			\
	X(K_APPS_HASHCODE, "apps__hashcode", IF_NONE)			\
	X(K_APPLICATION, "application", IF_NONE)			\
	X(K_APPLICATIONS, "applications", IF_NONE)			\
	X(K_APP_NAME, "appName", IF_NONE)				\
	X(K_ID, "id", IF_NONE)						\
	X(K_ACTION, "action", IF_NONE)					\
	X(K_INSTANCE_INFO, "instanceInfo", IF_NONE)			\
	X(K_REPLICATION_LIST, "replicationList", IF_NONE)		\
	X(K_STATUS_CODE, "statusCode", IF_NONE)				\
	X(K_RESPONSE_ENTITY, "responseEntity", IF_NONE)			\
	X(K_RESPONSE_LIST, "responseList", IF_NONE)			\
	X(K_ORIGIN_NODE, "heurekaOriginNode", IF_NONE)			\
	X(K_ORIGIN_USER, "heurekaOriginUser", IF_NONE)			\
	X(K_ORIGIN_ADDR, "heurekaOriginAddress", IF_NONE)

#define JSON_KEY_ENUM(id, text, field)	id,
enum json_key {
	JSON_KEYS(JSON_KEY_ENUM)
	K_OTHER			/* a key we give no meaning, or none */
};
#undef JSON_KEY_ENUM

/* Each key's text, and the instance field it names or IF_NONE. */
extern const char *const json_known_keys[];
extern const uint8_t json_key_field[];

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
extern uint8_t		json_key_head[JSON_KEY_SLOTS];
extern uint8_t		json_key_next[JSON_NKNOWN];
extern uint8_t		json_key_len[JSON_NKNOWN];
extern uint64_t	json_key_w[JSON_NKNOWN][4];

/* Build the tables above (once, before the first lookup). */
void	json_keys_init(void);

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

/*
 * The index of the len bytes at k among the known keys, or K_OTHER
 * (json_keys_init has built the tables).
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

#endif
