/*
 * json_dec.c: Eureka's JSON wire format, the reading side (spec §4.1.8,
 * §4.1.9); the writing side is json_enc.c.
 *
 * The decoders drive yajl's callback parser through a small state machine:
 * a stack of frames, one per open JSON object or array, each saying what
 * that container is (an instance, its port, its lease, a metadata map, an
 * unknown value being skipped...). The active key is kept once, in the
 * parser context, since a key is always consumed by the very next value.
 * Every object being built is reachable from the frame stack or the result,
 * so an error at any point frees everything on one exit path.
 *
 * An instance's fields are read by the model's one rule per field
 * (instance_fields.h, shared with the XML decoder) into the context's
 * instance builder (its strings in an arena, its maps' arrays kept across
 * the items of one document) and packed into one block when its object
 * closes (instance.h, "Packed instances").
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <yajl/yajl_parse.h>

#include "buf.h"
#include "bug.h"
#include "codec.h"
#include "instance.h"
#include "instance_fields.h"
#include "json.h"
#include "json_keys.h"
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

static int	jctx_fail(struct jctx *, const char *, ...)
		    __attribute__((format(printf, 2, 3)));
static int	jctx_scalar(struct jctx *, const struct jv *);
static int	jctx_open(struct jctx *, int);
static int	jctx_open_root(struct jctx *, int);
static int	jctx_open_apps(struct jctx *, const struct frame *,
		    enum json_key, int, enum frame_kind *);
static int	jctx_open_repl(struct jctx *, const struct frame *,
		    enum json_key, int, enum frame_kind *);
static int	jctx_close(struct jctx *);
static int	json_parse(struct jctx *, const char *, size_t, char **);
static void	jctx_cleanup(struct jctx *);

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

/* A long from a JSON number or a numeric string (§4.1.8). */
static int
jv_i64(const struct jv *v, int64_t *out)
{
	if (v->type != JV_NUM && v->type != JV_STR)
		return (-1);
	return (ifield_parse_i64(v->s, v->len, 0, out));
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

static pthread_once_t	json_once = PTHREAD_ONCE_INIT;
static pthread_key_t	json_parser_key;	/* a thread's json_parser */

/* Free a thread's parser (the key's destructor, at thread exit). */
static void
json_parser_free(void *arg)
{
	struct json_parser	*p = arg;

	if (p->h != NULL)
		yajl_free(p->h);
	free(p);
}

/* pthread_once body: the key tables; the key of the threads' parsers. */
static void
json_init(void)
{
	json_keys_init();
	/* EAGAIN (the process's keys used up) or ENOMEM: wait in the library. */
	while (pthread_key_create(&json_parser_key, json_parser_free) != 0)
		xmalloc_recover("pthread_key_create");
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

/*
 * Store v as field fid of the instance being built, by the model's rule
 * for JSON (instance_fields.h); a refused value fails the decode as
 * "invalid <prefix><label>: <why>".
 */
static inline __attribute__((always_inline)) int
jctx_field(struct jctx *cx, enum ifield fid, const char *prefix,
    const char *label, const struct jv *v)
{
	struct ifield_val	 iv;
	const char		*why;

	iv.type = v->type == JV_BOOL ? IFV_BOOL :
	    v->type == JV_NUM ? IFV_NUM : IFV_TEXT;
	iv.b = v->b;
	iv.s = v->s;
	iv.len = v->len;
	if (ifield_set(&cx->ib, fid, IFMT_JSON, &iv, &why) != 0)
		return (jctx_fail(cx, "invalid %s%s: %s", prefix, label, why));
	return (1);
}

/* One scalar field of an instance object. */
static int
jctx_instance_field(struct jctx *cx, struct frame *f, const struct jv *v)
{
	enum ifield	fid = (enum ifield)json_key_field[cx->kid];

	switch (cx->kid) {
	case K_PORT:
	case K_SECURE_PORT:
	case K_DATA_CENTER_INFO:
	case K_LEASE_INFO:
	case K_METADATA:
		return (jctx_fail(cx, "invalid %s", cx->key));
	case K_INSTANCE:
		if (f->kind == F_ROOT_INSTANCE)
			return (jctx_fail(cx, "invalid instance"));
		return (1);
	default:
		break;
	}
	if (fid == IF_NONE || ifield_table[fid].parent != IFP_INSTANCE)
		return (1);
	if (!jctx_field(cx, fid, "", cx->key, v))
		return (0);
	/* A bare instance counts as found once it has a field we know. */
	if (f->kind == F_ROOT_INSTANCE)
		cx->found = 1;
	return (1);
}

/*
 * One scalar field of a leaseInfo object. The legacy renewalTimestamp
 * yields to lastRenewalTimestamp, whichever comes first (LeaseInfo's
 * @JsonCreator).
 */
static int
jctx_lease_field(struct jctx *cx, struct frame *f, const struct jv *v)
{
	enum ifield	fid = (enum ifield)json_key_field[cx->kid];

	if (fid == IF_NONE || ifield_table[fid].parent != IFP_LEASE)
		return (1);
	if (fid == IF_L_RENEWAL_TS &&
	    (f->seen & (uint64_t)1 << K_LAST_RENEWAL_TS))
		return (1);
	return (jctx_field(cx, fid, "leaseInfo.", cx->key, v));
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
	int		 rc = 1;

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
		if (cx->kid == K_DOLLAR)
			rc = jctx_field(cx, f->secure ? IF_SECURE_PORT : IF_PORT,
			    "", f->secure ? "securePort" : "port", v);
		else if (cx->kid == K_ENABLED)
			rc = jctx_field(cx, f->secure ? IF_SECURE_PORT_ENABLED :
			    IF_PORT_ENABLED, "", "@enabled", v);
		break;
	case F_DC:
		if (cx->kid == K_NAME)
			rc = jctx_field(cx, IF_DC_NAME, "", "dataCenterInfo name",
			    v);
		else if (cx->kid == K_METADATA)
			rc = jctx_fail(cx, "invalid dataCenterInfo metadata");
		break;
	case F_META:
		rc = jctx_meta_set(cx, f->kv, v);
		break;
	case F_LEASE:
		rc = jctx_lease_field(cx, f, v);
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

/* jctx_open_repl's answers. */
#define OPEN_KIND	0	/* push the kind it set (or left) */
#define OPEN_PUSHED	1
#define OPEN_BAD	2
#define OPEN_FAILED	3

/* Whether key kid names a field of parent (its value is a scalar). */
static int
jctx_scalar_key(enum json_key kid, enum ifield_parent parent)
{
	enum ifield	fid;

	if (kid == K_OTHER || (fid = (enum ifield)json_key_field[kid]) ==
	    IF_NONE)
		return (0);
	return (ifield_table[fid].parent == parent);
}

/* The document's own object opens: its frame says what it must be. */
static int
jctx_open_root(struct jctx *cx, int is_map)
{
	struct frame	*f;

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

/*
 * A container opens inside an applications or application document: as
 * jctx_open_repl answers.
 */
static int
jctx_open_apps(struct jctx *cx, const struct frame *p, enum json_key kid,
    int is_map, enum frame_kind *kind)
{
	struct frame	*f;

	if (p->kind == F_ROOT_APPS) {
		if (kid != K_APPLICATIONS)
			return (OPEN_KIND);
		if (!is_map || cx->found)
			return (OPEN_BAD);
		f = jctx_push(cx, F_APPS);
		f->apps = cx->apps;
		cx->found = 1;
		return (OPEN_PUSHED);
	}
	if (p->kind == F_APPS && kid == K_VERSIONS_DELTA)
		return (OPEN_BAD);
	if (p->kind != F_APP_ARRAY && kid != K_APPLICATION)
		return (OPEN_KIND);
	if (!is_map) {
		if (p->kind == F_APP_ARRAY || p->kind == F_ROOT_APP)
			return (OPEN_BAD);
		*kind = F_APP_ARRAY;
		return (OPEN_KIND);
	}
	if (p->kind == F_ROOT_APP && cx->app != NULL)
		return (OPEN_BAD);
	f = jctx_push(cx, F_APP);
	if (p->kind == F_ROOT_APP) {
		cx->app = application_new("");
		f->app = cx->app;
	} else
		applications_add(f->apps, (f->app = application_new("")));
	cx->found = 1;
	return (OPEN_PUSHED);
}

/*
 * A container opens inside a replication list or response: OPEN_PUSHED
 * (its frame pushed), OPEN_KIND (push *kind), OPEN_BAD or OPEN_FAILED.
 */
static int
jctx_open_repl(struct jctx *cx, const struct frame *p, enum json_key kid,
    int is_map, enum frame_kind *kind)
{
	struct frame	*f;

	switch (p->kind) {
	case F_ROOT_REPL:
	case F_ROOT_RESP:
		if (kid != (p->kind == F_ROOT_REPL ? K_REPLICATION_LIST :
		    K_RESPONSE_LIST))
			return (OPEN_KIND);
		if (is_map || cx->found)
			return (OPEN_BAD);
		cx->found = 1;
		*kind = p->kind == F_ROOT_REPL ? F_REPL_ARRAY : F_RESP_ARRAY;
		return (OPEN_KIND);
	case F_REPL_ARRAY:
	case F_RESP_ARRAY:
		if (!is_map)
			return (OPEN_BAD);
		if ((p->kind == F_REPL_ARRAY ? cx->rl->n : cx->rr->n) >=
		    REPL_MAX_ITEMS) {
			jctx_fail(cx, "too many replication items");
			return (OPEN_FAILED);
		}
		if (p->kind == F_REPL_ARRAY) {
			f = jctx_push(cx, F_REPL_ITEM);
			f->ri = repl_list_add(cx->rl);
			f->ri->decoded = 1;
		} else {
			f = jctx_push(cx, F_RESP_ITEM);
			f->rsi = repl_response_add(cx->rr);
		}
		return (OPEN_PUSHED);
	case F_REPL_ITEM:
	case F_RESP_ITEM:
		if (kid == (p->kind == F_REPL_ITEM ? K_INSTANCE_INFO :
		    K_RESPONSE_ENTITY)) {
			if (!is_map)
				return (OPEN_BAD);
			jctx_push_instance(cx);
			return (OPEN_PUSHED);
		}
		if (kid == K_ACTION || kid == K_APP_NAME || kid == K_ID ||
		    kid == K_LAST_DIRTY_TS || kid == K_STATUS_CODE)
			return (OPEN_BAD);
		return (OPEN_KIND);
	default:
		return (OPEN_KIND);
	}
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
	if (cx->depth == 0)
		return (jctx_open_root(cx, is_map));
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
		} else if (jctx_scalar_key(kid, IFP_INSTANCE))
			goto bad;	/* a field's value is no container */
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
		if (jctx_scalar_key(kid, IFP_DC))
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
		if (jctx_scalar_key(kid, IFP_LEASE))
			goto bad;
		break;
	case F_ROOT_APP:
	case F_APPS:
	case F_APP_ARRAY:
	case F_ROOT_APPS:
		switch (jctx_open_apps(cx, p, kid, is_map, &kind)) {
		case OPEN_PUSHED:
			goto done;
		case OPEN_BAD:
			goto bad;
		default:
			break;
		}
		break;
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
	case F_REPL_ARRAY:
	case F_REPL_ITEM:
	case F_ROOT_RESP:
	case F_RESP_ARRAY:
	case F_RESP_ITEM:
		switch (jctx_open_repl(cx, p, kid, is_map, &kind)) {
		case OPEN_PUSHED:
			goto done;
		case OPEN_BAD:
			goto bad;
		case OPEN_FAILED:
			rc = 0;
			goto out;
		default:
			break;
		}
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
		/* jctx_open pushes an F_INSTANCE under a parent only. */
		if (HK_BUG(p == NULL))
			return (jctx_fail(cx, "unbalanced JSON"));
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
		cx->kid = (int)kid;
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
			i = (size_t)(bs - p);
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
		while (pthread_setspecific(json_parser_key, p) != 0)
			xmalloc_recover("pthread_setspecific");
	}
	if (p->h == NULL) {
		while ((p->h = yajl_alloc(&json_callbacks, NULL, p)) == NULL)
			xmalloc_recover("yajl_alloc");
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
