/*
 * instance.c: the Eureka data model's constructors, destructors, enum
 * spellings, containers and the reconcile hash code. No I/O here.
 */
#include <sys/types.h>

#include <ctype.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "bug.h"
#include "hash.h"
#include "instance.h"
#include "xmalloc.h"

static const char *status_names[STATUS_COUNT] = {
	"UP", "DOWN", "STARTING", "OUT_OF_SERVICE", "UNKNOWN"
};

/* Alphabetical order of the names above, as the hash code sorts them. */
static const enum instance_status status_alpha[STATUS_COUNT] = {
	STATUS_DOWN, STATUS_OUT_OF_SERVICE, STATUS_STARTING, STATUS_UNKNOWN,
	STATUS_UP
};

/* The enum's exact Java name. */
const char *
instance_status_name(enum instance_status s)
{
	if ((unsigned)s >= STATUS_COUNT)
		return ("UNKNOWN");
	return (status_names[s]);
}

/* Case-sensitive parse, as InstanceStatus.valueOf; -1 if unknown. */
int
instance_status_parse(const char *s, enum instance_status *out)
{
	enum instance_status	st;

	/* The first byte picks the one name it can be (UP and UNKNOWN: two). */
	switch (s[0]) {
	case 'U':
		st = s[1] == 'P' ? STATUS_UP : STATUS_UNKNOWN;
		break;
	case 'D':
		st = STATUS_DOWN;
		break;
	case 'S':
		st = STATUS_STARTING;
		break;
	case 'O':
		st = STATUS_OUT_OF_SERVICE;
		break;
	default:
		return (-1);
	}
	if (strcmp(s, status_names[st]) != 0)
		return (-1);
	*out = st;
	return (0);
}

/* ActionType name, NULL for "no action" (Java null). */
const char *
action_type_name(enum action_type a)
{
	switch (a) {
	case ACTION_ADDED:
		return ("ADDED");
	case ACTION_MODIFIED:
		return ("MODIFIED");
	case ACTION_DELETED:
		return ("DELETED");
	default:
		return (NULL);
	}
}

/* Parse an ActionType; -1 if unknown. */
int
action_type_parse(const char *s, enum action_type *out)
{
	if (strcmp(s, "ADDED") == 0)
		*out = ACTION_ADDED;
	else if (strcmp(s, "MODIFIED") == 0)
		*out = ACTION_MODIFIED;
	else if (strcmp(s, "DELETED") == 0)
		*out = ACTION_DELETED;
	else
		return (-1);
	return (0);
}

/* DataCenterInfo.Name spelling. */
const char *
dc_name_str(enum dc_name d)
{
	switch (d) {
	case DC_NETFLIX:
		return ("Netflix");
	case DC_AMAZON:
		return ("Amazon");
	default:
		return ("MyOwn");
	}
}

/* Parse a data-center name (exact enum names); -1 if unknown. */
int
dc_name_parse(const char *s, enum dc_name *out)
{
	if (strcmp(s, "MyOwn") == 0)
		*out = DC_MYOWN;
	else if (strcmp(s, "Netflix") == 0)
		*out = DC_NETFLIX;
	else if (strcmp(s, "Amazon") == 0)
		*out = DC_AMAZON;
	else
		return (-1);
	return (0);
}

/* A new instance with the Java decoder's defaults for absent fields. */
struct instance *
instance_new(void)
{
	struct instance	*in = xmalloc(sizeof *in);

	instance_init(in);
	return (in);
}

/* Those defaults written over a caller's struct (which it owns nothing). */
void
instance_init(struct instance *in)
{
	memset(in, 0, sizeof *in);
	in->status = STATUS_UP;
	in->overridden_status = STATUS_UNKNOWN;
	in->port = INSTANCE_DEFAULT_PORT;
	in->port_enabled = 1;
	in->secure_port = INSTANCE_DEFAULT_SECURE_PORT;
	in->secure_port_enabled = 0;
	in->country_id = INSTANCE_DEFAULT_COUNTRY_ID;
	in->dc_name = DC_MYOWN;
	in->lease.renewal_interval_secs = LEASE_DEFAULT_RENEWAL_SECS;
	in->lease.duration_secs = LEASE_DEFAULT_DURATION_SECS;
	in->action_type = ACTION_NONE;
}

/* A decoder's starting point: both wire timestamps marked absent. */
struct instance *
instance_decode_new(void)
{
	struct instance	*in = instance_new();

	in->last_updated_ts = INSTANCE_TS_ABSENT;
	in->last_dirty_ts = INSTANCE_TS_ABSENT;
	return (in);
}

/* The same over a decoder's scratch struct (see instance_pack). */
void
instance_decode_init(struct instance *in)
{
	instance_init(in);
	in->last_updated_ts = INSTANCE_TS_ABSENT;
	in->last_dirty_ts = INSTANCE_TS_ABSENT;
}

/*
 * A decoded object is complete. Absent timestamps mean "now", as the Java
 * builder's defaults; a lease interval or duration <= 0 means the default
 * (§4.1.6). Then Spring Cloud's rewrite (§4.1.7): no instanceId (null or
 * empty, as instance_id() treats it) but a metadata.instanceId means the
 * id is that value, prefixed "<hostName>:" unless it already starts with
 * the host name.
 */
void
instance_apply_defaults(struct instance *in, int64_t now_ms)
{
	char	*id;

	if ((id = instance_defaults(in, now_ms)) != NULL) {
		free(in->instance_id);
		in->instance_id = id;
	}
}

/*
 * instance_apply_defaults' work but the id's store: the scalars are set,
 * and the rewritten id is returned (a new string) or NULL if it stays.
 */
char *
instance_defaults(struct instance *in, int64_t now_ms)
{
	struct lease_info	*l = &in->lease;
	const char		*mid;
	char			*id;
	size_t			 hl;

	if (in->last_updated_ts == INSTANCE_TS_ABSENT)
		in->last_updated_ts = now_ms;
	if (in->last_dirty_ts == INSTANCE_TS_ABSENT)
		in->last_dirty_ts = now_ms;
	if (l->renewal_interval_secs <= 0)
		l->renewal_interval_secs = LEASE_DEFAULT_RENEWAL_SECS;
	if (l->duration_secs <= 0)
		l->duration_secs = LEASE_DEFAULT_DURATION_SECS;
	if (in->instance_id != NULL && in->instance_id[0] != '\0')
		return (NULL);
	mid = kvlist_get(&in->metadata, "instanceId");
	if (mid == NULL || mid[0] == '\0')
		return (NULL);
	hl = in->host_name != NULL ? strlen(in->host_name) : 0;
	if (hl == 0 || strncmp(mid, in->host_name, hl) == 0)
		id = xstrdup(mid);
	else
		xasprintf(&id, "%s:%s", in->host_name, mid);
	return (id);
}

/* Free an instance and everything it owns (a packed one is one block). */
void
instance_free(struct instance *in)
{
	if (in == NULL)
		return;
	if (in->packed) {
		free(in);
		return;
	}
	free(in->instance_id);
	free(in->host_name);
	free(in->app);
	free(in->ip_addr);
	free(in->sid);
	kvlist_clear(&in->dc_metadata);
	kvlist_clear(&in->metadata);
	free(in->app_group_name);
	free(in->home_page_url);
	free(in->status_page_url);
	free(in->health_check_url);
	free(in->secure_health_check_url);
	free(in->vip_address);
	free(in->secure_vip_address);
	free(in->asg_name);
	free(in);
}

/* strdup that keeps NULL. */
static char *
dup_or_null(const char *s)
{
	return (s == NULL ? NULL : xstrdup(s));
}

/* Deep copy. */
struct instance *
instance_dup(const struct instance *src)
{
	struct instance	*in = xmalloc(sizeof *in);

	*in = *src;
	in->packed = 0;
	in->packed_size = 0;
	in->instance_id = dup_or_null(src->instance_id);
	in->host_name = dup_or_null(src->host_name);
	in->app = dup_or_null(src->app);
	in->ip_addr = dup_or_null(src->ip_addr);
	in->sid = dup_or_null(src->sid);
	memset(&in->dc_metadata, 0, sizeof in->dc_metadata);
	kvlist_copy(&in->dc_metadata, &src->dc_metadata);
	memset(&in->metadata, 0, sizeof in->metadata);
	kvlist_copy(&in->metadata, &src->metadata);
	in->app_group_name = dup_or_null(src->app_group_name);
	in->home_page_url = dup_or_null(src->home_page_url);
	in->status_page_url = dup_or_null(src->status_page_url);
	in->health_check_url = dup_or_null(src->health_check_url);
	in->secure_health_check_url = dup_or_null(src->secure_health_check_url);
	in->vip_address = dup_or_null(src->vip_address);
	in->secure_vip_address = dup_or_null(src->secure_vip_address);
	in->asg_name = dup_or_null(src->asg_name);
	return (in);
}

/*
 * The string fields a packed block holds after its maps' strings, in the
 * block's order; a compact copy (a DELETED delta record: who, where,
 * which status, when) holds the first PACK_COMPACT of them, the id fixed
 * explicitly (instance_id(), so the Amazon fallback still names the same
 * lease). A secureVipAddress equal to the vipAddress shares its bytes.
 */
static const size_t pack_fields[] = {
	offsetof(struct instance, instance_id),
	offsetof(struct instance, host_name),
	offsetof(struct instance, app),
	offsetof(struct instance, ip_addr),
	offsetof(struct instance, sid),
	offsetof(struct instance, vip_address),
	offsetof(struct instance, secure_vip_address),
	offsetof(struct instance, app_group_name),
	offsetof(struct instance, home_page_url),
	offsetof(struct instance, status_page_url),
	offsetof(struct instance, health_check_url),
	offsetof(struct instance, secure_health_check_url),
	offsetof(struct instance, asg_name),
};
#define PACK_FIELDS	(sizeof pack_fields / sizeof pack_fields[0])
#define PACK_COMPACT	7	/* id .. secureVipAddress */
#define PACK_SVIP	6

/* The string field at offset off of an instance. */
#define PACK_FIELD(in, off)	(*(char **)(void *)((char *)(in) + (off)))

/*
 * The fields' strings of one block, measured once: what the copy takes
 * from the count, so no string is measured twice.
 */
struct pack_plan {
	const char	*s[PACK_FIELDS];	/* NULL: none (or shared) */
	size_t		 len[PACK_FIELDS];	/* strlen + 1, 0 for none */
	size_t		 nf;			/* fields laid out */
	int		 svip_shared;
};

/* Bytes of a map's strings (their array is counted apart). */
static size_t
pack_map_bytes(const struct kvlist *kv)
{
	size_t	i, n = 0;

	for (i = 0; i < kv->n; i++)
		n += (kv->v[i].key != NULL ? strlen(kv->v[i].key) + 1 : 0) +
		    (kv->v[i].value != NULL ? strlen(kv->v[i].value) + 1 : 0);
	return (n);
}

/*
 * The length of src laid out as one block (the struct, its maps' arrays,
 * 8-aligned after the struct, then every string), full or compact, with
 * the fields' strings noted in pl for pack_copy.
 */
static size_t
pack_count(const struct instance *src, int full, struct pack_plan *pl)
{
	size_t	i, n = sizeof *src;

	pl->nf = full ? PACK_FIELDS : PACK_COMPACT;
	pl->svip_shared = src->secure_vip_address != NULL &&
	    src->vip_address != NULL &&
	    strcmp(src->secure_vip_address, src->vip_address) == 0;
	for (i = 0; i < pl->nf; i++) {
		pl->s[i] = i == 0 && !full ? instance_id(src) :
		    PACK_FIELD(src, pack_fields[i]);
		if (i == PACK_SVIP && pl->svip_shared)
			pl->s[i] = NULL;
		pl->len[i] = pl->s[i] != NULL ? strlen(pl->s[i]) + 1 : 0;
		n += pl->len[i];
	}
	if (full)
		n += (src->metadata.n + src->dc_metadata.n) *
		    sizeof(struct kv) + pack_map_bytes(&src->metadata) +
		    pack_map_bytes(&src->dc_metadata);
	return (n);
}

/* A copy of s (n bytes with its NUL) at *p, which moves past it. */
static char *
pack_put(char **p, const char *s, size_t n)
{
	char	*d = *p;

	memcpy(d, s, n);
	*p += n;
	return (d);
}

/* A map's entries into the array v, their strings at *p. */
static void
pack_map(char **p, struct kvlist *dst, struct kv *v,
    const struct kvlist *src)
{
	size_t	i;

	for (i = 0; i < src->n; i++) {
		v[i].key = src->v[i].key == NULL ? NULL : pack_put(p,
		    src->v[i].key, strlen(src->v[i].key) + 1);
		v[i].value = src->v[i].value == NULL ? NULL : pack_put(p,
		    src->v[i].value, strlen(src->v[i].value) + 1);
	}
	dst->v = src->n > 0 ? v : NULL;
	dst->n = dst->cap = src->n;
}

/*
 * src laid out at base as pack_count planned (len bytes): the struct,
 * the maps' arrays and strings (full only), then the fields' strings.
 * The block keeps its length (packed_size), what instance_stored_size
 * answers.
 */
static void
pack_copy(const struct instance *src, char *base, size_t len, int full,
    const struct pack_plan *pl)
{
	struct instance	*in = (struct instance *)(void *)base;
	struct kv	*mv, *dv;
	char		*p = base + sizeof *in;
	size_t		 i;

	*in = *src;
	in->packed = 1;
	in->packed_size = len <= UINT32_MAX ? (uint32_t)len : 0;
	memset(&in->metadata, 0, sizeof in->metadata);
	memset(&in->dc_metadata, 0, sizeof in->dc_metadata);
	if (full) {
		mv = (struct kv *)(void *)p;
		dv = mv + src->metadata.n;
		p = (char *)(dv + src->dc_metadata.n);
		pack_map(&p, &in->metadata, mv, &src->metadata);
		pack_map(&p, &in->dc_metadata, dv, &src->dc_metadata);
	}
	for (i = 0; i < PACK_FIELDS; i++)
		PACK_FIELD(in, pack_fields[i]) = i < pl->nf &&
		    pl->s[i] != NULL ? pack_put(&p, pl->s[i], pl->len[i]) :
		    NULL;
	if (pl->svip_shared)
		in->secure_vip_address = in->vip_address;
}

/* src as one block, full or compact (above): counted once, copied once. */
static struct instance *
pack_block(const struct instance *src, int full)
{
	struct pack_plan	 pl;
	size_t			 n;
	char			*base;

	n = pack_count(src, full, &pl);
	base = xmalloc(n);
	pack_copy(src, base, n, full, &pl);
	return ((struct instance *)(void *)base);
}

/* A DELETED record's copy for the registry's recently-changed queue. */
struct instance *
instance_dup_compact(const struct instance *src)
{
	return (pack_block(src, 0));
}

/* A full copy as one block: a decoder's result (instance.h). */
struct instance *
instance_pack(const struct instance *src)
{
	return (pack_block(src, 1));
}

/* A further chunk of a builder's arena. */
struct instance_chunk {
	struct instance_chunk	*next;
	char			 data[];
};

/* An empty builder: no instance begun, nothing allocated. */
void
instance_builder_init(struct instance_builder *b)
{
	memset(&b->in, 0, sizeof b->in);
	b->more = NULL;
	b->cur = b->buf;
	b->left = sizeof b->buf;
}

/* Give back the arena's chunks; the inline bytes are free again. */
static void
builder_arena_reset(struct instance_builder *b)
{
	struct instance_chunk	*c;

	while ((c = b->more) != NULL) {
		b->more = c->next;
		free(c);
	}
	b->cur = b->buf;
	b->left = sizeof b->buf;
}

/* Everything the builder holds (what it packed is the caller's). */
void
instance_builder_free(struct instance_builder *b)
{
	builder_arena_reset(b);
	free(b->in.metadata.v);
	free(b->in.dc_metadata.v);
	memset(&b->in, 0, sizeof b->in);
}

/* A new instance starts, decoding defaults set, its maps' arrays kept. */
struct instance *
instance_builder_begin(struct instance_builder *b)
{
	struct kvlist	md = b->in.metadata, dm = b->in.dc_metadata;

	builder_arena_reset(b);
	instance_decode_init(&b->in);
	md.n = dm.n = 0;
	b->in.metadata = md;
	b->in.dc_metadata = dm;
	return (&b->in);
}

/* A copy of n bytes at s, NUL-terminated, in the arena. */
char *
instance_builder_str(struct instance_builder *b, const char *s, size_t n)
{
	struct instance_chunk	*c;
	size_t			 sz;
	char			*d;

	if (n + 1 > b->left) {
		sz = n + 1 > INSTANCE_BUILDER_CHUNK ? n + 1 :
		    INSTANCE_BUILDER_CHUNK;
		c = xmalloc(sizeof *c + sz);
		c->next = b->more;
		b->more = c;
		b->cur = c->data;
		b->left = sz;
	}
	d = b->cur;
	memcpy(d, s, n);
	d[n] = '\0';
	b->cur += n + 1;
	b->left -= n + 1;
	return (d);
}

/* One entry more in a map of b->in: the key copied, value in the arena. */
void
instance_builder_kv(struct instance_builder *b, struct kvlist *l,
    const char *key, size_t keylen, char *value)
{
	if (l->n == l->cap) {
		l->cap = l->cap == 0 ? 8 : l->cap * 2;
		l->v = xreallocarray(l->v, l->cap, sizeof *l->v);
	}
	l->v[l->n].key = instance_builder_str(b, key, keylen);
	l->v[l->n].value = value;
	l->n++;
}

/* The instance is complete: its defaults, then its one block. */
struct instance *
instance_builder_pack(struct instance_builder *b, int64_t now_ms)
{
	struct instance	*in;
	char		*id;

	if ((id = instance_defaults(&b->in, now_ms)) != NULL)
		b->in.instance_id = id;
	in = instance_pack(&b->in);
	free(id);
	b->in.instance_id = NULL;
	return (in);
}

/* An instance a writer may change: in itself, or in's unpacked copy. */
struct instance *
instance_unpack(struct instance *in)
{
	struct instance	*d;

	if (in == NULL || !in->packed)
		return (in);
	d = instance_dup(in);
	instance_free(in);
	return (d);
}

/* A map's array cut to its entries (realloc gives the tail back). */
static void
kvlist_trim(struct kvlist *kv)
{
	if (kv->cap == kv->n)
		return;
	if (kv->n == 0) {
		free(kv->v);
		kv->v = NULL;
	} else
		kv->v = xreallocarray(kv->v, kv->n, sizeof *kv->v);
	kv->cap = kv->n;
}

/* No spare map capacity: what a stored instance keeps (instance.h). */
void
instance_trim(struct instance *in)
{
	if (in == NULL || in->packed)
		return;
	kvlist_trim(&in->metadata);
	kvlist_trim(&in->dc_metadata);
}

/* Heap bytes of one string, with the allocator's per-chunk overhead. */
static size_t
str_bytes(const char *s)
{
	return (s != NULL ? strlen(s) + 1 + INSTANCE_ALLOC_OVERHEAD : 0);
}

/* Heap bytes of a string map: its array and every key and value. */
static size_t
kvlist_bytes(const struct kvlist *kv)
{
	size_t	i, n = 0;

	if (kv->cap > 0)
		n += kv->cap * sizeof *kv->v + INSTANCE_ALLOC_OVERHEAD;
	for (i = 0; i < kv->n; i++)
		n += str_bytes(kv->v[i].key) + str_bytes(kv->v[i].value);
	return (n);
}

/*
 * What an instance costs on the heap, in O(fields): the struct, every
 * string and both maps, each allocation with the allocator's overhead
 * (a packed one, instance_pack's or instance_dup_compact's, is one
 * allocation).
 * The registry keeps running totals of this, so nothing walks to count.
 */
size_t
instance_stored_size(const struct instance *in)
{
	struct pack_plan	pl;

	if (in == NULL)
		return (0);
	if (in->packed && in->packed_size > 0)
		return (in->packed_size + INSTANCE_ALLOC_OVERHEAD);
	if (in->packed)
		return (pack_count(in, 1, &pl) + INSTANCE_ALLOC_OVERHEAD);
	return (sizeof *in + INSTANCE_ALLOC_OVERHEAD +
	    str_bytes(in->instance_id) + str_bytes(in->host_name) +
	    str_bytes(in->app) + str_bytes(in->ip_addr) + str_bytes(in->sid) +
	    kvlist_bytes(&in->dc_metadata) + kvlist_bytes(&in->metadata) +
	    str_bytes(in->app_group_name) + str_bytes(in->home_page_url) +
	    str_bytes(in->status_page_url) + str_bytes(in->health_check_url) +
	    str_bytes(in->secure_health_check_url) +
	    str_bytes(in->vip_address) + str_bytes(in->secure_vip_address) +
	    str_bytes(in->asg_name));
}

/*
 * The registry key (§0): instanceId if set, else the Amazon instance-id,
 * else the host name. May return "" but never NULL.
 */
const char *
instance_id(const struct instance *in)
{
	const char	*s;

	if (in->instance_id != NULL && in->instance_id[0] != '\0')
		return (in->instance_id);
	if (in->dc_name == DC_AMAZON &&
	    (s = kvlist_get(&in->dc_metadata, "instance-id")) != NULL &&
	    s[0] != '\0')
		return (s);
	return (in->host_name != NULL ? in->host_name : "");
}

/* Upper-case ASCII in place (Java's toUpperCase on app names). */
void
str_upper(char *s)
{
	for (; s != NULL && *s != '\0'; s++)
		*s = (char)toupper((unsigned char)*s);
}

/* Replace an owned string with a copy of another (NULL allowed). */
void
str_replace(char **dst, const char *src)
{
	char	*n = dup_or_null(src);

	free(*dst);
	*dst = n;
}

/* Set key to value, replacing an existing key in place. */
void
kvlist_set(struct kvlist *l, const char *key, const char *value)
{
	size_t	i;

	for (i = 0; i < l->n; i++) {
		if (strcmp(l->v[i].key, key) == 0) {
			str_replace(&l->v[i].value, value);
			return;
		}
	}
	if (l->n == l->cap) {
		l->cap = l->cap == 0 ? 4 : l->cap * 2;
		l->v = xreallocarray(l->v, l->cap, sizeof *l->v);
	}
	l->v[l->n].key = xstrdup(key);
	l->v[l->n].value = xstrdup(value != NULL ? value : "");
	l->n++;
}

/* Borrowed value for key, or NULL. */
const char *
kvlist_get(const struct kvlist *l, const char *key)
{
	size_t	i;

	for (i = 0; i < l->n; i++) {
		if (strcmp(l->v[i].key, key) == 0)
			return (l->v[i].value);
	}
	return (NULL);
}

/* Free all entries. */
void
kvlist_clear(struct kvlist *l)
{
	size_t	i;

	for (i = 0; i < l->n; i++) {
		free(l->v[i].key);
		free(l->v[i].value);
	}
	free(l->v);
	memset(l, 0, sizeof *l);
}

/* Append copies of src's entries to dst. */
void
kvlist_copy(struct kvlist *dst, const struct kvlist *src)
{
	size_t	i;

	for (i = 0; i < src->n; i++)
		kvlist_set(dst, src->v[i].key, src->v[i].value);
}

/* One slot of a name index: the name's hash and a position. */
struct name_slot {
	uint32_t	hash;
	uint32_t	pos;	/* UINT32_MAX: empty */
};

#define INDEX_MIN	16	/* below this a linear scan is cheaper */

/*
 * What a name index covers: key(owner, i) is the name of entry i (NULL
 * for a hole); fold: names match ignoring case (application names).
 */
struct index_ops {
	const char	*(*key)(const void *, size_t);
	int		  fold;
};

static const char *app_key(const void *, size_t);
static const char *apps_key(const void *, size_t);
static uint32_t	index_hash(const struct index_ops *, const char *);
static int	index_match(const struct index_ops *, const char *,
		    const char *);
static void	index_put(struct name_index *, uint32_t, size_t);
static void	index_rebuild(struct name_index *, const struct index_ops *,
		    const void *, size_t);
static ssize_t	index_lookup(struct name_index *, const struct index_ops *,
		    const void *, size_t, const char *);
static void	index_appended(struct name_index *, const struct index_ops *,
		    const void *, size_t);

static const struct index_ops app_ops = { app_key, 0 };
static const struct index_ops apps_ops = { apps_key, 1 };

/* Whether a sid is written: Java omits its defaults "na" and "unknown". */
int
instance_sid_shown(const char *sid)
{
	return (sid != NULL && strcmp(sid, "na") != 0 &&
	    strcmp(sid, "unknown") != 0);
}

/*
 * Strict UTF-8 check of n bytes. Names and values reach the JSON and XML
 * encoders from URL paths and queries too, where nothing else validated
 * them. ASCII, nearly every byte we see, is skipped eight bytes at a time.
 */
int
utf8_valid_n(const char *s, size_t len)
{
	const unsigned char	*p = (const unsigned char *)s;
	const unsigned char	*end = p + len;
	uint64_t		 w;
	uint32_t		 cp;
	int			 n, i;

	while (p < end) {
		if (end - p >= 8) {
			memcpy(&w, p, sizeof w);
			if ((w & 0x8080808080808080ULL) == 0) {
				p += 8;
				continue;
			}
		}
		if (*p < 0x80) {
			p++;
			continue;
		}
		if ((*p & 0xe0) == 0xc0) {
			n = 1;
			cp = *p & 0x1f;
		} else if ((*p & 0xf0) == 0xe0) {
			n = 2;
			cp = *p & 0x0f;
		} else if ((*p & 0xf8) == 0xf0) {
			n = 3;
			cp = *p & 0x07;
		} else
			return (0);
		if (end - p <= n)
			return (0);
		for (i = 1; i <= n; i++) {
			if ((p[i] & 0xc0) != 0x80)
				return (0);
			cp = (cp << 6) | (p[i] & 0x3f);
		}
		if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) ||
		    (n == 3 && cp < 0x10000) || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return (0);
		p += n + 1;
	}
	return (1);
}

/* Strict UTF-8 check of a C string (utf8_valid_n up to its NUL). */
int
utf8_valid(const char *s)
{
	return (utf8_valid_n(s, strlen(s)));
}

/* A new, empty application called name (stored upper-cased). */
struct application *
application_new(const char *name)
{
	struct application	*a = xcalloc(1, sizeof *a);

	a->name = xstrdup(name != NULL ? name : "");
	str_upper(a->name);
	return (a);
}

/* Free an application and its instances. */
void
application_free(struct application *a)
{
	size_t	i;

	if (a == NULL)
		return;
	for (i = 0; i < a->n; i++)
		instance_free(a->instances[i]);
	free(a->instances);
	free(a->index.slot);
	free(a->name);
	free(a);
}

/* Instance id of an application's entry i. */
static const char *
app_key(const void *owner, size_t i)
{
	const struct application	*a = owner;

	return (a->instances[i] != NULL ? instance_id(a->instances[i]) : NULL);
}

/* Name of a registry copy's application i. */
static const char *
apps_key(const void *owner, size_t i)
{
	const struct applications	*as = owner;

	return (as->apps[i] != NULL ? as->apps[i]->name : NULL);
}

/* A name's slot hash: the keyed string hash (common/hash.c), folded. */
static uint32_t
index_hash(const struct index_ops *ops, const char *s)
{
	uint64_t	h = ops->fold ? hash_str_upper(s) : hash_str(s);

	return ((uint32_t)(h ^ (h >> 32)));
}

/* Whether two names are the same for this index. */
static int
index_match(const struct index_ops *ops, const char *a, const char *b)
{
	return ((ops->fold ? strcasecmp(a, b) : strcmp(a, b)) == 0);
}

/* Put position pos (with its name's hash) into the index. */
static void
index_put(struct name_index *x, uint32_t h, size_t pos)
{
	size_t	i = h & (x->cap - 1);

	while (x->slot[i].pos != UINT32_MAX)
		i = (i + 1) & (x->cap - 1);
	x->slot[i].hash = h;
	x->slot[i].pos = (uint32_t)pos;
}

/* Rebuild the index over n entries, sized for growth (load <= 1/2). */
static void
index_rebuild(struct name_index *x, const struct index_ops *ops,
    const void *owner, size_t n)
{
	const char	*k;
	size_t		 i, cap = 64;

	/* The rule the reuse below relies on: no slots, no capacity. */
	if (HK_BUG((x->slot == NULL) != (x->cap == 0))) {
		free(x->slot);
		x->slot = NULL;
		x->cap = 0;
	}
	while (cap < n * 2 + 2)
		cap *= 2;
	if (cap != x->cap) {
		free(x->slot);
		x->slot = xreallocarray(NULL, cap, sizeof *x->slot);
		x->cap = cap;
	}
	for (i = 0; i < cap; i++)
		x->slot[i].pos = UINT32_MAX;
	for (i = 0; i < n; i++) {
		if ((k = ops->key(owner, i)) != NULL)
			index_put(x, index_hash(ops, k), i);
	}
	x->indexed = n;
}

/*
 * Position of name among n entries, or -1. Uses the index once there are
 * many; a slot whose entry no longer hashes to what it recorded means
 * someone moved entries by hand, so the index is rebuilt and the probe
 * repeated.
 */
static ssize_t
index_lookup(struct name_index *x, const struct index_ops *ops,
    const void *owner, size_t n, const char *name)
{
	const char	*k;
	uint32_t	 h;
	size_t		 i, tries, pos;

	if (n < INDEX_MIN) {
		for (i = 0; i < n; i++) {
			if ((k = ops->key(owner, i)) != NULL &&
			    index_match(ops, k, name))
				return ((ssize_t)i);
		}
		return (-1);
	}
	h = index_hash(ops, name);
	for (tries = 0; tries < 2; tries++) {
		int	stale = 0;

		if (x->slot == NULL || x->indexed != n || x->cap < n * 2 + 2)
			index_rebuild(x, ops, owner, n);
		for (i = h & (x->cap - 1); x->slot[i].pos != UINT32_MAX;
		    i = (i + 1) & (x->cap - 1)) {
			if (x->slot[i].hash != h)
				continue;
			pos = x->slot[i].pos;
			if (pos >= n || (k = ops->key(owner, pos)) == NULL ||
			    index_hash(ops, k) != h) {
				stale = 1;
				break;
			}
			if (index_match(ops, k, name))
				return ((ssize_t)pos);
		}
		if (!stale)
			return (-1);
		x->indexed = 0;		/* force a rebuild */
	}
	return (-1);
}

/* Entry n - 1 was just appended: index it if the index is current. */
static void
index_appended(struct name_index *x, const struct index_ops *ops,
    const void *owner, size_t n)
{
	const char	*k;

	if (x->slot != NULL && x->indexed == n - 1 && x->cap >= n * 2 + 2) {
		if ((k = ops->key(owner, n - 1)) != NULL)
			index_put(x, index_hash(ops, k), n - 1);
		x->indexed = n;
	}
}

/* Add or replace (by id) an instance; takes ownership. */
void
application_add(struct application *a, struct instance *in)
{
	ssize_t	pos = index_lookup(&a->index, &app_ops, a, a->n,
		    instance_id(in));

	if (pos >= 0) {
		instance_free(a->instances[pos]);
		a->instances[pos] = in;
		return;
	}
	if (a->n == a->cap) {
		a->cap = a->cap == 0 ? 4 : a->cap * 2;
		a->instances = xreallocarray(a->instances, a->cap,
		    sizeof *a->instances);
	}
	a->instances[a->n++] = in;
	index_appended(&a->index, &app_ops, a, a->n);
}

/* Borrowed instance with that id, or NULL. */
struct instance *
application_find(const struct application *a, const char *id)
{
	/* The index is a cache: updating it does not change the contents. */
	struct application	*w = (struct application *)(uintptr_t)a;
	ssize_t			 pos = index_lookup(&w->index, &app_ops, w,
				     w->n, id);

	return (pos >= 0 ? a->instances[pos] : NULL);
}

/* Remove and free the instance with that id; 0 if found, -1 if not. */
int
application_remove(struct application *a, const char *id)
{
	ssize_t	pos = index_lookup(&a->index, &app_ops, a, a->n, id);

	if (pos < 0)
		return (-1);
	instance_free(a->instances[pos]);
	memmove(&a->instances[pos], &a->instances[pos + 1],
	    (a->n - (size_t)pos - 1) * sizeof *a->instances);
	a->n--;
	a->index.indexed = 0;	/* positions moved: rebuild on next lookup */
	return (0);
}

/* A new, empty registry copy (version -1: never fetched). */
struct applications *
applications_new(void)
{
	struct applications	*as = xcalloc(1, sizeof *as);

	as->versions_delta = -1;
	return (as);
}

/* Free the whole tree. */
void
applications_free(struct applications *as)
{
	size_t	i;

	if (as == NULL)
		return;
	for (i = 0; i < as->n; i++)
		application_free(as->apps[i]);
	free(as->apps);
	free(as->index.slot);
	free(as->apps_hashcode);
	free(as);
}

/* Append an application; takes ownership. */
void
applications_add(struct applications *as, struct application *a)
{
	if (as->n == as->cap) {
		as->cap = as->cap == 0 ? 8 : as->cap * 2;
		as->apps = xreallocarray(as->apps, as->cap, sizeof *as->apps);
	}
	as->apps[as->n++] = a;
	index_appended(&as->index, &apps_ops, as, as->n);
}

/* Borrowed application by (upper-case) name, or NULL. */
struct application *
applications_find(const struct applications *as, const char *name)
{
	/* The index is a cache: updating it does not change the contents. */
	struct applications	*w = (struct applications *)(uintptr_t)as;
	ssize_t			 pos = index_lookup(&w->index, &apps_ops, w,
				     w->n, name);

	return (pos >= 0 ? as->apps[pos] : NULL);
}

/* Remove and free the application called name; 0 if found, -1 if not. */
int
applications_remove(struct applications *as, const char *name)
{
	ssize_t	pos = index_lookup(&as->index, &apps_ops, as, as->n, name);

	if (pos < 0)
		return (-1);
	application_free(as->apps[pos]);
	memmove(&as->apps[pos], &as->apps[pos + 1],
	    (as->n - (size_t)pos - 1) * sizeof *as->apps);
	as->n--;
	as->index.indexed = 0;	/* positions moved: rebuild on next lookup */
	return (0);
}

/* Find or create the application called name. */
struct application *
applications_get(struct applications *as, const char *name)
{
	struct application	*a;

	if ((a = applications_find(as, name)) == NULL) {
		a = application_new(name);
		applications_add(as, a);
	}
	return (a);
}

/* Total number of instances. */
size_t
applications_count(const struct applications *as)
{
	size_t	i, n = 0;

	for (i = 0; i < as->n; i++)
		n += as->apps[i]->n;
	return (n);
}

/* Build the hash code string from per-status counts. */
char *
instance_hashcode(const size_t counts[STATUS_COUNT])
{
	struct buf	b;
	int		i;

	buf_init(&b, 0);
	for (i = 0; i < STATUS_COUNT; i++) {
		enum instance_status s = status_alpha[i];

		if (counts[s] == 0)
			continue;
		buf_adds(&b, status_names[s]);
		buf_addc(&b, '_');
		buf_add_i64(&b, (int64_t)counts[s]);
		buf_addc(&b, '_');
	}
	return (buf_steal(&b, NULL));
}

/* Hash code over every instance of a registry copy (all statuses). */
char *
applications_hashcode(const struct applications *as)
{
	size_t	counts[STATUS_COUNT] = { 0 };
	size_t	i, j;

	for (i = 0; i < as->n; i++) {
		for (j = 0; j < as->apps[i]->n; j++) {
			enum instance_status s = as->apps[i]->instances[j]->status;

			if ((unsigned)s < STATUS_COUNT)
				counts[s]++;
		}
	}
	return (instance_hashcode(counts));
}

/*
 * Names come from URL paths and bodies: printable, no '/', '?', '#' or
 * white space, not empty, and bounded, so they are safe as path segments.
 */
int
instance_name_ok(const char *s, size_t max)
{
	/* 1: a byte a name may not hold (controls, space, DEL, / ? #). */
	static const uint8_t	bad[256] = {
		[0x00] = 1, [0x01] = 1, [0x02] = 1, [0x03] = 1, [0x04] = 1,
		[0x05] = 1, [0x06] = 1, [0x07] = 1, [0x08] = 1, [0x09] = 1,
		[0x0a] = 1, [0x0b] = 1, [0x0c] = 1, [0x0d] = 1, [0x0e] = 1,
		[0x0f] = 1, [0x10] = 1, [0x11] = 1, [0x12] = 1, [0x13] = 1,
		[0x14] = 1, [0x15] = 1, [0x16] = 1, [0x17] = 1, [0x18] = 1,
		[0x19] = 1, [0x1a] = 1, [0x1b] = 1, [0x1c] = 1, [0x1d] = 1,
		[0x1e] = 1, [0x1f] = 1, [' '] = 1, [0x7f] = 1, ['/'] = 1,
		['?'] = 1, ['#'] = 1,
	};
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 n;

	if (s == NULL || *s == '\0')
		return (0);
	/* NUL is "bad" too, so the walk ends at the end or the first bad. */
	for (n = 0; !bad[p[n]]; n++)
		if (n >= max)
			return (0);
	return (p[n] == '\0' && n <= max);
}

/* The pin stamp of an instance (the leader rule), 0 if not pinned. */
int64_t
instance_leader_pin(const struct instance *in)
{
	const char	*v = NULL, *k;
	char		*end;
	long long	 n;
	size_t		 i;

	/*
	 * kvlist_get, with the first byte compared inline: the leader rule
	 * asks this of every UP instance of an app on each change.
	 */
	for (i = 0; i < in->metadata.n; i++) {
		k = in->metadata.v[i].key;
		if (k[0] == INSTANCE_LEADER_PIN_KEY[0] &&
		    strcmp(k, INSTANCE_LEADER_PIN_KEY) == 0) {
			v = in->metadata.v[i].value;
			break;
		}
	}
	if (v == NULL || *v == '\0')
		return (0);
	n = strtoll(v, &end, 10);
	return (*end == '\0' && n > 0 ? (int64_t)n : 0);
}

/* Whether a ranks before b as leader (see instance.h). */
int
instance_leader_before(const struct instance *a, const struct instance *b)
{
	return (instance_leader_before_pinned(a, instance_leader_pin(a), b,
	    instance_leader_pin(b)));
}

/* The same with both pins known (instance_leader_pin of each). */
int
instance_leader_before_pinned(const struct instance *a, int64_t pa,
    const struct instance *b, int64_t pb)
{
	if ((pa > 0) != (pb > 0))
		return (pa > 0);
	if (pa != pb)
		return (pa > pb);		/* the newest pin */
	if (pa == 0 && a->lease.registration_ts != b->lease.registration_ts)
		return (a->lease.registration_ts < b->lease.registration_ts);
	return (strcmp(instance_id(a), instance_id(b)) < 0);
}

/* One element of a comma-separated VIP list equals vip (see instance.h). */
int
instance_has_vip(const char *list, const char *vip, int icase)
{
	const char	*p, *e;
	size_t		 len;

	if (list == NULL || vip == NULL)
		return (0);
	len = strlen(vip);
	for (p = list;; p = e + 1) {
		if ((e = strchr(p, ',')) == NULL)
			e = p + strlen(p);
		if ((size_t)(e - p) == len && (icase ?
		    strncasecmp(p, vip, len) : strncmp(p, vip, len)) == 0)
			return (1);
		if (*e == '\0')
			return (0);
	}
}
