/*
 * xml_dec.c: Eureka's XML codec, the reading side; the writer is
 * xml_enc.c. The reader is a streaming state machine over expat: a stack
 * of frames, one per open element, each saying what the element is (an
 * instance, its lease, a text field, something to skip). Model objects
 * are built while parsing, so memory stays proportional to the result,
 * not to the number of XML nodes; an instance in an instance builder,
 * packed into one block when its element closes (instance.h, "Packed
 * instances"), its fields found and read by the model's one rule per
 * field (instance_fields.h, shared with the JSON decoder). DOCTYPEs and
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
#include "instance_fields.h"
#include "log.h"
#include "xmalloc.h"
#include "xml.h"

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

/* Which value a K_TEXT element carries (F_FIELD: an instance field). */
enum xml_field {
	F_NONE = 0,
	F_VERSION,
	F_HASHCODE,
	F_APP_NAME,
	F_FIELD,
	F_META,
	F_DCMETA,
};

/*
 * Known children that are not instance fields: inside `parent`, element
 * `name` is a `kind`/`field`. The fields (instance, dataCenterInfo and
 * leaseInfo leaves) are instance_fields.c's table.
 */
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
	{ K_INST, "dataCenterInfo", K_DC, F_NONE },
	{ K_INST, "leaseInfo", K_LEASE, F_NONE },
	{ K_INST, "metadata", K_META, F_NONE },
	{ K_DC, "metadata", K_DCMETA, F_NONE },
};
#define XML_NCHILDREN	(sizeof xml_children / sizeof *xml_children)

/* A frame's seen bits: xml_children by index, then the fields by id. */
_Static_assert(XML_NCHILDREN + IF_COUNT <= 64, "seen is 64 bits");

struct xml_frame {
	enum xml_kind	 kind;
	enum xml_field	 field;
	enum ifield	 ifield;	/* F_FIELD */
	uint64_t	 seen;		/* children met (see above) */
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

static void	xml_fail(struct xml_ctx *, const char *, ...)
		    __attribute__((format(printf, 2, 3)));
static void	xml_field(struct xml_ctx *, enum ifield, const char *,
		    const char *);
static int	xml_seen_twice(struct xml_ctx *, size_t, const char *);
static int	xml_child(struct xml_ctx *, enum xml_kind, const char *,
		    struct xml_frame *);
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

/*
 * Store text t of element name as instance field f by the model's rule
 * for XML (instance_fields.h); a refused value fails the parse.
 */
static void
xml_field(struct xml_ctx *ctx, enum ifield f, const char *name,
    const char *t)
{
	struct ifield_val	 v;
	const char		*why;

	v.type = IFV_TEXT;
	v.b = 0;
	v.s = t;
	v.len = strlen(t);
	if (ifield_set(&ctx->ib, f, IFMT_XML, &v, &why) != 0)
		xml_fail(ctx, "invalid %s: %s", name, why);
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

	switch (f->field) {
	case F_VERSION:
		if (ifield_parse_i64(t, strlen(t), 1,
		    &ctx->apps->versions_delta) != 0)
			xml_fail(ctx, "versions__delta is not a number");
		return;
	case F_HASHCODE:
		str_replace(&ctx->apps->apps_hashcode, t);
		return;
	case F_APP_NAME:
		str_replace(&ctx->app->name, t);
		str_upper(ctx->app->name);
		return;
	case F_FIELD:
		xml_field(ctx, f->ifield, name, t);
		return;
	case F_META:
	case F_DCMETA:
		break;
	default:
		return;
	}
	l = f->field == F_META ? &in->metadata : &in->dc_metadata;
	if (strlen(name) > INSTANCE_MAX_STRING) {
		xml_fail(ctx, "metadata key too long");
		return;
	}
	key = xml_decode_name(name);
	if (kvlist_get(l, key) != NULL) {
		xml_fail(ctx, "metadata key <%.64s> repeated", name);
		free(key);
		return;
	}
	instance_builder_kv(&ctx->ib, l, key, strlen(key), xml_str(ctx, t));
	free(key);
	if (l->n > INSTANCE_MAX_METADATA)
		xml_fail(ctx, "more than %d metadata entries",
		    INSTANCE_MAX_METADATA);
}

/*
 * Whether the open element, child number bit of its parent's seen bits,
 * already appeared in its parent (failing then): a repeated field would
 * be read as the first value by one parser and the last by another.
 * Applications and instances repeat by design (the caller skips them).
 */
static int
xml_seen_twice(struct xml_ctx *ctx, size_t i, const char *name)
{
	struct xml_frame	*p = &ctx->stack[ctx->depth - 1];
	uint64_t		 bit = (uint64_t)1 << i;

	if (p->seen & bit) {
		xml_fail(ctx, "<%s> repeated", name);
		return (1);
	}
	p->seen |= bit;
	return (0);
}

/*
 * What the element name inside a parent of kind parent is: a known
 * child or an instance field (instance_fields.c's table), in *f; anything
 * else stays K_IGNORE. -1 when it repeats (the parse has failed).
 */
static int
xml_child(struct xml_ctx *ctx, enum xml_kind parent, const char *name,
    struct xml_frame *f)
{
	enum ifield	fid = IF_NONE;
	size_t		i;

	for (i = 0; i < XML_NCHILDREN; i++) {
		if (xml_children[i].parent != parent ||
		    strcmp(xml_children[i].name, name) != 0)
			continue;
		f->kind = xml_children[i].kind;
		f->field = xml_children[i].field;
		if (f->kind == K_APP ||
		    (f->kind == K_INST && parent == K_APP))
			return (0);
		return (xml_seen_twice(ctx, i, name) ? -1 : 0);
	}
	if (parent == K_INST)
		fid = ifield_find(IFP_INSTANCE, IFMT_XML, name, strlen(name));
	else if (parent == K_LEASE)
		fid = ifield_find(IFP_LEASE, IFMT_XML, name, strlen(name));
	else if (parent == K_DC)
		fid = ifield_find(IFP_DC, IFMT_XML, name, strlen(name));
	if (fid == IF_NONE)
		return (0);
	f->kind = K_TEXT;
	f->field = F_FIELD;
	f->ifield = fid;
	return (xml_seen_twice(ctx, XML_NCHILDREN + fid, name) ? -1 : 0);
}

/* An element opens: decide what it is and push a frame for it. */
static void
xml_start_cb(void *arg, const XML_Char *name, const XML_Char **atts)
{
	struct xml_ctx		*ctx = arg;
	struct xml_frame	 f = { K_IGNORE, F_NONE, IF_NONE, 0 };
	enum xml_kind		 parent;
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
		if (xml_child(ctx, parent, name, &f) != 0)
			return;
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
		if (f.field != F_FIELD ||
		    (f.ifield != IF_PORT && f.ifield != IF_SECURE_PORT))
			break;
		/* The attribute's rule is the table's (absent: the default). */
		for (i = 0; atts[i] != NULL; i += 2) {
			if (strcmp(atts[i], "enabled") == 0)
				xml_field(ctx, f.ifield == IF_PORT ?
				    IF_PORT_ENABLED : IF_SECURE_PORT_ENABLED,
				    atts[i], atts[i + 1]);
		}
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
	while ((p = XML_ParserCreate(NULL)) == NULL)
		xmalloc_recover("XML_ParserCreate");
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

/*
 * Decode one document whose root is of kind root (K_INST, K_APP or
 * K_APPS) and hand over what it built; NULL with *cause on bad input.
 */
static void *
xml_decode_root(enum xml_kind root, const char *data, size_t len, int64_t now,
    char **cause)
{
	struct xml_ctx	 ctx;
	void		*out = NULL;

	if (xml_run(&ctx, root, data, len, now, cause) == 0) {
		switch (root) {
		case K_INST:
			out = ctx.done;
			ctx.done = NULL;
			break;
		case K_APP:
			out = ctx.app;
			ctx.app = NULL;
			break;
		default:
			out = ctx.apps;
			ctx.apps = NULL;
			break;
		}
	}
	xml_ctx_free(&ctx);
	return (out);
}

/* <instance> document; NULL with *cause on bad input. */
struct instance *
xml_decode_instance(const char *data, size_t len, int64_t now,
    char **cause)
{
	return (xml_decode_root(K_INST, data, len, now, cause));
}

/* <application> document; NULL with *cause on bad input. */
struct application *
xml_decode_application(const char *data, size_t len, int64_t now,
    char **cause)
{
	return (xml_decode_root(K_APP, data, len, now, cause));
}

/* <applications> document (full or delta); NULL with *cause on bad input. */
struct applications *
xml_decode_applications(const char *data, size_t len, int64_t now,
    char **cause)
{
	return (xml_decode_root(K_APPS, data, len, now, cause));
}
