/*
 * instance.h: Eureka's data model (InstanceInfo, LeaseInfo, DataCenterInfo,
 * Application, Applications), the status and action enums, and the apps
 * hash code. Shared by the server, the client library and the codecs.
 *
 * Ownership: every char * in these structs is owned by the struct and freed
 * by its _free function (a packed instance's live in its one block); NULL
 * means "absent" (Java null). instance_free, application_free and
 * applications_free accept NULL.
 *
 * Packed instances (in->packed): the struct, its maps' arrays and every
 * string in one allocation, as the JSON decoder builds them
 * (instance_pack) and the delta queue keeps DELETED records
 * (instance_dup_compact). The one rule: a packed instance's scalars may
 * be written and its strings changed in place (str_upper), but no string
 * or map of it may be replaced, freed or added to (str_replace, free,
 * kvlist_set/_clear/_copy). Code that does so takes
 * in = instance_unpack(in) first, and keeps the pointer it returns.
 */
#ifndef INSTANCE_H
#define INSTANCE_H

#include <stddef.h>
#include <stdint.h>

/* Exact Eureka spelling and ordinal order (InstanceStatus). */
enum instance_status {
	STATUS_UP = 0,
	STATUS_DOWN,
	STATUS_STARTING,
	STATUS_OUT_OF_SERVICE,
	STATUS_UNKNOWN,
};
#define STATUS_COUNT 5

enum action_type {
	ACTION_NONE = 0,	/* Java null: not emitted */
	ACTION_ADDED,
	ACTION_MODIFIED,
	ACTION_DELETED,
};

enum dc_name {
	DC_MYOWN = 0,
	DC_NETFLIX,
	DC_AMAZON,
};

/* An ordered string map (metadata keeps insertion order, as LinkedHashMap). */
struct kv {
	char	*key;
	char	*value;
};
struct kvlist {
	struct kv	*v;
	size_t		 n;
	size_t		 cap;
};

struct lease_info {
	int32_t	renewal_interval_secs;	/* LEASE_DEFAULT_RENEWAL_SECS */
	int32_t	duration_secs;		/* LEASE_DEFAULT_DURATION_SECS */
	int64_t	registration_ts;
	int64_t	last_renewal_ts;
	int64_t	eviction_ts;
	int64_t	service_up_ts;
};

struct instance {
	char			*instance_id;	/* may be NULL: see instance_id() */
	char			*host_name;
	char			*app;		/* upper case */
	char			*ip_addr;
	char			*sid;		/* NULL means "na" */
	enum instance_status	 status;
	enum instance_status	 overridden_status;
	int32_t			 port;
	int32_t			 secure_port;
	uint8_t			 port_enabled;
	uint8_t			 secure_port_enabled;
	uint8_t			 has_dc;	/* dataCenterInfo present */
	uint8_t			 has_dc_name;	/* ... and it had a name */
	uint8_t			 has_lease;	/* leaseInfo present */
	uint8_t			 is_coordinating;
	uint8_t			 packed;	/* one block: see above */
	int32_t			 country_id;
	enum dc_name		 dc_name;
	struct kvlist		 dc_metadata;	/* Amazon only */
	struct lease_info	 lease;
	struct kvlist		 metadata;
	char			*app_group_name;
	char			*home_page_url;
	char			*status_page_url;
	char			*health_check_url;
	char			*secure_health_check_url;
	char			*vip_address;
	char			*secure_vip_address;
	int64_t			 last_updated_ts;
	int64_t			 last_dirty_ts;
	enum action_type	 action_type;
	uint32_t		 packed_size;	/* the block's bytes, if packed */
	char			*asg_name;
};

/*
 * Lookup index by name over an array (private to instance.c): open
 * addressing on the keyed string hash, at most half full. Code that moves
 * array entries by hand may leave it stale: lookups notice and rebuild
 * it, so they stay correct and O(1) amortised. A name must not change
 * once looked up (decoders set it before anyone searches).
 */
struct name_index {
	struct name_slot	*slot;
	size_t			 cap;
	size_t			 indexed;	/* entries [0, indexed) are in it */
};

struct application {
	char		 *name;
	struct instance	**instances;
	size_t		  n;
	size_t		  cap;
	struct name_index index;	/* by instance id */
};

struct applications {
	int64_t			 versions_delta;	/* -1: absent */
	char			*apps_hashcode;		/* NULL: absent */
	struct application	**apps;
	size_t			  n;
	size_t			  cap;
	struct name_index	  index;		/* by app name */
};

/* Limits applied by the decoders (bad input gets a 4xx, never a crash). */
#define INSTANCE_MAX_STRING	4096	/* any single string value */
#define INSTANCE_MAX_NAME	256	/* app names and instance ids */
/*
 * Timestamps on the wire (ms since the epoch) must lie in 0 .. the end of
 * year 9999; the codecs refuse any other (a skew bound on top of this is
 * the registry's business).
 */
#define INSTANCE_TS_MAX		253402300799999LL
#define INSTANCE_TS_RULE	"a number of milliseconds from 0 to 253402300799999"
#define INSTANCE_MAX_METADATA	128	/* metadata entries */
#define INSTANCE_ALLOC_OVERHEAD	16	/* malloc's cost per allocation */

/* Enum names. */
const char	*instance_status_name(enum instance_status);
int		 instance_status_parse(const char *, enum instance_status *);
const char	*action_type_name(enum action_type);	/* NULL for NONE */
int		 action_type_parse(const char *, enum action_type *);
const char	*dc_name_str(enum dc_name);
int		 dc_name_parse(const char *, enum dc_name *);

/*
 * Eureka's defaults for what a document leaves out (InstanceInfo.Builder,
 * LeaseInfo.Builder): the one place these numbers are written.
 */
#define INSTANCE_DEFAULT_PORT		7001
#define INSTANCE_DEFAULT_SECURE_PORT	7002
#define INSTANCE_DEFAULT_COUNTRY_ID	1
#define LEASE_DEFAULT_RENEWAL_SECS	30
#define LEASE_DEFAULT_DURATION_SECS	90
/* A timestamp the document did not carry (decoders refuse negative ones). */
#define INSTANCE_TS_ABSENT		(-1)

/* Instance lifecycle. instance_new() fills Eureka's decoding defaults. */
struct instance	*instance_new(void);
/*
 * Decoding, shared by the JSON and XML readers: a decoder starts from
 * instance_decode_new() (instance_new() with lastUpdatedTimestamp and
 * lastDirtyTimestamp INSTANCE_TS_ABSENT), stores what the document says,
 * and calls instance_apply_defaults() once the object is complete. That
 * applies the defaults that depend on the whole object: absent timestamps
 * become now_ms (the wall clock, ms, read by the caller), a non-positive
 * lease interval or duration its default, and Spring Cloud's instanceId
 * rewrite (§4.1.7).
 */
struct instance	*instance_decode_new(void);
void		 instance_apply_defaults(struct instance *, int64_t now_ms);
/*
 * The same for a decoder that stores strings its own way: the scalar
 * defaults are applied, and Spring's rewritten id returned (a new string,
 * the caller's) or NULL when the id stays. instance_decode_init() is
 * instance_decode_new() over a caller's struct (a decoder's scratch, that
 * instance_pack() copies), instance_init() instance_new()'s.
 */
char		*instance_defaults(struct instance *, int64_t now_ms);
void		 instance_decode_init(struct instance *);
void		 instance_init(struct instance *);
void		 instance_free(struct instance *);
struct instance	*instance_dup(const struct instance *);
/*
 * A copy without metadata, URLs or data-center metadata (delta records),
 * packed: the struct and its strings in one allocation (the rule above
 * applies). instance_free() frees the block.
 */
struct instance	*instance_dup_compact(const struct instance *);
/* A full copy, packed: the struct, its maps and strings in one block. */
struct instance	*instance_pack(const struct instance *);

/*
 * A decoder's instance builder: one instance at a time is decoded into
 * in, whose strings the decoder puts in the builder's arena (an inline
 * buffer, then chunks, given back by the next begin) and whose maps'
 * arrays stay allocated across the instances of one document; pack
 * applies the decoding defaults (instance_defaults) and returns the
 * packed copy. So a decoded instance costs one allocation, whatever it
 * carries, and none of the small ones that would leave holes in the
 * heap. Nothing in in is owned: never instance_free it.
 */
#define INSTANCE_BUILDER_INLINE	2048	/* the arena's first bytes */
#define INSTANCE_BUILDER_CHUNK	4096	/* its further chunks, at least */
struct instance_chunk;
struct instance_builder {
	struct instance		 in;
	char			*cur;		/* the arena's free bytes */
	size_t			 left;
	struct instance_chunk	*more;		/* chunks past buf */
	char			 buf[INSTANCE_BUILDER_INLINE];
};
void		 instance_builder_init(struct instance_builder *);
void		 instance_builder_free(struct instance_builder *);
struct instance	*instance_builder_begin(struct instance_builder *);
char		*instance_builder_str(struct instance_builder *, const char *,
		    size_t);
/*
 * Append (key, value) to one of in's maps, the key copied into the
 * arena, the value already there (instance_builder_str); the caller
 * refuses repeated keys.
 */
void		 instance_builder_kv(struct instance_builder *, struct kvlist *,
		    const char *key, size_t keylen, char *value);
struct instance	*instance_builder_pack(struct instance_builder *,
		    int64_t now_ms);
/* See "Packed instances" above: in, or its unpacked copy (in is freed). */
struct instance	*instance_unpack(struct instance *);
/* Give back the maps' spare capacity (an instance about to be stored). */
void		 instance_trim(struct instance *);
/*
 * Heap bytes the instance holds, allocator overhead included: O(1) for a
 * packed one (its block's length, kept by whoever laid it out), O(fields)
 * otherwise.
 */
size_t		 instance_stored_size(const struct instance *);
const char	*instance_id(const struct instance *);	/* §0 fallback rule */
void		 str_upper(char *);
void		 str_replace(char **, const char *);	/* free old, dup new */

/* Ordered string maps. */
void		 kvlist_set(struct kvlist *, const char *, const char *);
const char	*kvlist_get(const struct kvlist *, const char *);
void		 kvlist_clear(struct kvlist *);
void		 kvlist_copy(struct kvlist *, const struct kvlist *);

/* Containers. The add functions take ownership of their argument. */
struct application	*application_new(const char *);
void			 application_free(struct application *);
void			 application_add(struct application *, struct instance *);
struct instance		*application_find(const struct application *,
			     const char *);
int			 application_remove(struct application *, const char *);
struct applications	*applications_new(void);
void			 applications_free(struct applications *);
void			 applications_add(struct applications *,
			     struct application *);
struct application	*applications_find(const struct applications *,
			     const char *);
struct application	*applications_get(struct applications *, const char *);
int			 applications_remove(struct applications *,
			     const char *);
size_t			 applications_count(const struct applications *);

/*
 * Reconcile hash code (§5.10): "<STATUS>_<count>_" for each status with a
 * non-zero count, in alphabetical order of status names; "" when empty.
 * counts[] is indexed by enum instance_status. Returns a new string.
 */
char	*instance_hashcode(const size_t counts[STATUS_COUNT]);
char	*applications_hashcode(const struct applications *);

/* Whether sid is written: Java omits its defaults "na" and "unknown". */
int	 instance_sid_shown(const char *);

/* Strict UTF-8 (no overlong forms, surrogates or code points > 0x10FFFF). */
int	 utf8_valid(const char *);
int	 utf8_valid_n(const char *, size_t);	/* n bytes, NUL is a byte */

/* Sane-charset check for app names and ids: printable, no '/', bounded. */
int	 instance_name_ok(const char *, size_t);

/*
 * The leader rule (docs/api.md, "Watch and leader"), shared by heurekad and
 * libheureka: a pinned instance (INSTANCE_LEADER_PIN_KEY holds the pin's
 * ms, "" once released) before an unpinned one, the newer pin first; else
 * the older lease.registrationTimestamp; the smaller instance id last.
 * Callers consider only UP instances.
 */
#define INSTANCE_LEADER_PIN_KEY	"heureka.leader.pinned"
int64_t	 instance_leader_pin(const struct instance *);	/* 0: none */
int	 instance_leader_before(const struct instance *,
	    const struct instance *);
/* The same with the two pins already known (a scan keeps the best's). */
int	 instance_leader_before_pinned(const struct instance *, int64_t,
	    const struct instance *, int64_t);

/*
 * Whether a comma-separated VIP list (vipAddress, secureVipAddress) holds
 * vip as one whole element, split on ',' as Eureka's String.split. The
 * two sides of Eureka differ on case, and heureka keeps both rules: the
 * server's vips/ and svips/ compare exactly (eureka-core registry/
 * ResponseCacheImpl.java, getApplicationsForVip: Arrays.binarySearch on
 * the raw strings), the client ignoring case (eureka-client shared/
 * Applications.java keys its VIP maps upper-cased). NULL list: no.
 */
#define INSTANCE_VIP_EXACT	0	/* heurekad: GET vips/{vip} */
#define INSTANCE_VIP_ICASE	1	/* libheureka's lookups */
int	 instance_has_vip(const char *list, const char *vip, int icase);

#endif
