/*
 * airlift_codec.c: JSON codec of airlift's discovery protocol. Bodies are small
 * (the caller caps them) so the decoders parse with yajl's tree API and
 * then walk the tree, checking every field's type and bound; anything
 * else is refused with a reason, never half-decoded. Unknown keys are
 * ignored, as Jackson's lenient mapping in airlift's server does.
 *
 * The encoder writes the inventory by hand in the key order airlift's
 * server uses: id, nodeId, type, pool, location, properties.
 */
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_tree.h>

#include "airlift_codec.h"
#include "buf.h"
#include "instance.h"
#include "json.h"
#include "xmalloc.h"

static const char *airlift_str(yajl_val, const char *, int, char **, int);
static int	airlift_props(yajl_val, struct kvlist *, char **);
static yajl_val	airlift_parse(const char *, size_t, char **);
static int	airlift_depth_ok(const char *, size_t);

/* Nesting deeper than this is refused before yajl builds a tree of it. */
#define AIRLIFT_MAX_DEPTH	16

/* Free a service's fields and zero it. */
void
airlift_service_clear(struct airlift_service *s)
{
	if (s == NULL)
		return;
	free(s->id);
	free(s->node_id);
	free(s->type);
	free(s->pool);
	free(s->location);
	kvlist_clear(&s->properties);
	memset(s, 0, sizeof *s);
}

/* Free an announcement's fields and zero it. */
void
airlift_announcement_clear(struct airlift_announcement *a)
{
	size_t	i;

	if (a == NULL)
		return;
	free(a->environment);
	free(a->pool);
	free(a->location);
	for (i = 0; i < a->n; i++)
		airlift_service_clear(&a->services[i]);
	free(a->services);
	memset(a, 0, sizeof *a);
}

/* Printable, no '/', '?', '#', ':' or space, at most AIRLIFT_MAX_NAME. */
int
airlift_name_ok(const char *s)
{
	/* ':' is kept out: it joins node id and service id (server). */
	if (s == NULL || strchr(s, ':') != NULL)
		return (0);
	return (instance_name_ok(s, AIRLIFT_MAX_NAME));
}

/*
 * Whether no object or array nests deeper than AIRLIFT_MAX_DEPTH (strings
 * skipped): the tree, and freeing it, recurse once per level.
 */
static int
airlift_depth_ok(const char *p, size_t len)
{
	size_t	i;
	int	depth = 0, in_str = 0;

	for (i = 0; i < len; i++) {
		if (in_str) {
			if (p[i] == '\\')
				i++;
			else if (p[i] == '"')
				in_str = 0;
		} else if (p[i] == '"')
			in_str = 1;
		else if (p[i] == '{' || p[i] == '[') {
			if (++depth > AIRLIFT_MAX_DEPTH)
				return (0);
		} else if (p[i] == '}' || p[i] == ']')
			depth--;
	}
	return (1);
}

/* Parse a body into a tree; NULL with *cause. */
static yajl_val
airlift_parse(const char *body, size_t len, char **cause)
{
	yajl_val	 t;
	char		*copy, err[256];

	/* yajl_tree_parse wants a C string: a NUL inside is refused. */
	if (memchr(body, '\0', len) != NULL) {
		*cause = xstrdup("body contains a NUL byte");
		return (NULL);
	}
	if (!airlift_depth_ok(body, len)) {
		xasprintf(cause, "JSON nested deeper than %d levels",
		    AIRLIFT_MAX_DEPTH);
		return (NULL);
	}
	copy = xstrndup(body, len);
	err[0] = '\0';
	t = yajl_tree_parse(copy, err, sizeof err);
	free(copy);
	if (t == NULL) {
		/* yajl's message spans lines; the first says enough. */
		err[strcspn(err, "\r\n")] = '\0';
		xasprintf(cause, "malformed JSON: %s", err[0] != '\0' ? err :
		    "parse error");
		return (NULL);
	}
	if (!YAJL_IS_OBJECT(t)) {
		yajl_tree_free(t);
		*cause = xstrdup("body must be a JSON object");
		return (NULL);
	}
	return (t);
}

/* Field `key` of object o (NULL if absent). */
static yajl_val
airlift_get(yajl_val o, const char *key)
{
	size_t	i;

	for (i = 0; i < o->u.object.len; i++) {
		if (strcmp(o->u.object.keys[i], key) == 0)
			return (o->u.object.values[i]);
	}
	return (NULL);
}

/*
 * A string field: NULL and *cause when it has the wrong type, is missing
 * while required, or fails the name check (name) or length bound.
 */
static const char *
airlift_str(yajl_val o, const char *key, int required, char **cause,
    int name)
{
	yajl_val	v = airlift_get(o, key);

	if (v == NULL || YAJL_IS_NULL(v)) {
		if (required)
			xasprintf(cause, "%s is required", key);
		return (NULL);
	}
	if (!YAJL_IS_STRING(v)) {
		xasprintf(cause, "%s must be a string", key);
		return (NULL);
	}
	if (name && !airlift_name_ok(v->u.string)) {
		xasprintf(cause, "invalid %s: printable characters without "
		    "'/', '?', '#', ':' or spaces, at most %d bytes", key,
		    AIRLIFT_MAX_NAME);
		return (NULL);
	}
	if (strlen(v->u.string) > INSTANCE_MAX_STRING) {
		xasprintf(cause, "%s longer than %d bytes", key,
		    INSTANCE_MAX_STRING);
		return (NULL);
	}
	return (v->u.string);
}

/* A properties object of string values into kv; -1 with *cause. */
static int
airlift_props(yajl_val v, struct kvlist *kv, char **cause)
{
	size_t		i;
	const char	*k;
	yajl_val	 e;

	if (v == NULL || YAJL_IS_NULL(v))
		return (0);
	if (!YAJL_IS_OBJECT(v)) {
		*cause = xstrdup("properties must be an object");
		return (-1);
	}
	if (v->u.object.len > AIRLIFT_MAX_PROPERTIES) {
		xasprintf(cause, "more than %d properties",
		    AIRLIFT_MAX_PROPERTIES);
		return (-1);
	}
	for (i = 0; i < v->u.object.len; i++) {
		k = v->u.object.keys[i];
		e = v->u.object.values[i];
		if (*k == '\0' || strlen(k) > INSTANCE_MAX_NAME) {
			xasprintf(cause, "property names must be 1 to %d bytes",
			    INSTANCE_MAX_NAME);
			return (-1);
		}
		if (strncmp(k, AIRLIFT_RESERVED_PREFIX,
		    strlen(AIRLIFT_RESERVED_PREFIX)) == 0) {
			xasprintf(cause, "property %s: names starting with "
			    "\"%s\" are reserved", k, AIRLIFT_RESERVED_PREFIX);
			return (-1);
		}
		if (kvlist_get(kv, k) != NULL) {
			xasprintf(cause, "property %s given twice", k);
			return (-1);
		}
		if (!YAJL_IS_STRING(e)) {
			xasprintf(cause, "property %s must be a string", k);
			return (-1);
		}
		if (strlen(e->u.string) > INSTANCE_MAX_STRING) {
			xasprintf(cause, "property %s longer than %d bytes", k,
			    INSTANCE_MAX_STRING);
			return (-1);
		}
		kvlist_set(kv, k, e->u.string);
	}
	return (0);
}

/* Duplicate a string that may be NULL. */
static char *
airlift_dup(const char *s)
{
	return (s != NULL ? xstrdup(s) : NULL);
}

/* Decode PUT /v1/announcement/{nodeId}'s body. */
int
airlift_decode_announcement(const char *body, size_t len,
    struct airlift_announcement *a, char **cause)
{
	yajl_val		 t, svcs, sv;
	struct airlift_service	*s;
	const char		*env, *pool, *loc, *id, *type;
	size_t			 i, j;

	memset(a, 0, sizeof *a);
	*cause = NULL;
	if ((t = airlift_parse(body, len, cause)) == NULL)
		return (-1);
	env = airlift_str(t, "environment", 1, cause, 0);
	if (*cause != NULL)
		goto fail;
	pool = airlift_str(t, "pool", 1, cause, 1);
	if (*cause != NULL)
		goto fail;
	loc = airlift_str(t, "location", 0, cause, 0);
	if (*cause != NULL)
		goto fail;
	svcs = airlift_get(t, "services");
	if (svcs == NULL || !YAJL_IS_ARRAY(svcs)) {
		*cause = xstrdup("services must be an array");
		goto fail;
	}
	if (svcs->u.array.len > AIRLIFT_MAX_SERVICES) {
		xasprintf(cause, "more than %d services in one announcement",
		    AIRLIFT_MAX_SERVICES);
		goto fail;
	}
	a->environment = xstrdup(env);
	a->pool = xstrdup(pool);
	a->location = airlift_dup(loc);
	a->services = xcalloc(svcs->u.array.len + 1, sizeof *a->services);
	for (i = 0; i < svcs->u.array.len; i++) {
		sv = svcs->u.array.values[i];
		if (!YAJL_IS_OBJECT(sv)) {
			xasprintf(cause, "services[%zu] must be an object", i);
			goto fail;
		}
		id = airlift_str(sv, "id", 1, cause, 1);
		if (*cause != NULL)
			goto fail;
		type = airlift_str(sv, "type", 1, cause, 1);
		if (*cause != NULL)
			goto fail;
		for (j = 0; j < a->n; j++) {
			if (strcmp(a->services[j].id, id) == 0) {
				xasprintf(cause, "service id %s given twice",
				    id);
				goto fail;
			}
		}
		s = &a->services[a->n++];
		s->id = xstrdup(id);
		s->type = xstrdup(type);
		if (airlift_props(airlift_get(sv, "properties"),
		    &s->properties, cause) != 0)
			goto fail;
	}
	yajl_tree_free(t);
	return (0);
fail:
	yajl_tree_free(t);
	airlift_announcement_clear(a);
	return (-1);
}

/* Decode POST /v1/announcement/static's body. */
int
airlift_decode_static(const char *body, size_t len, struct airlift_service *s,
    char **environment, char **cause)
{
	yajl_val	 t;
	const char	*env, *type = NULL, *pool = NULL, *loc = NULL;

	memset(s, 0, sizeof *s);
	*environment = NULL;
	*cause = NULL;
	if ((t = airlift_parse(body, len, cause)) == NULL)
		return (-1);
	env = airlift_str(t, "environment", 1, cause, 0);
	if (*cause == NULL)
		type = airlift_str(t, "type", 1, cause, 1);
	if (*cause == NULL)
		pool = airlift_str(t, "pool", 1, cause, 1);
	if (*cause == NULL)
		loc = airlift_str(t, "location", 0, cause, 0);
	if (*cause == NULL)
		(void)airlift_props(airlift_get(t, "properties"),
		    &s->properties, cause);
	if (*cause != NULL) {
		yajl_tree_free(t);
		airlift_service_clear(s);
		return (-1);
	}
	*environment = xstrdup(env);
	s->type = xstrdup(type);
	s->pool = xstrdup(pool);
	s->location = airlift_dup(loc);
	yajl_tree_free(t);
	return (0);
}

/* A string or null. */
static void
airlift_add_str(struct buf *b, const char *s)
{
	if (s == NULL)
		buf_adds(b, "null");
	else
		json_add_string(b, s);
}

/* The inventory's head. */
void
airlift_encode_services_open(struct buf *b, const char *environment)
{
	buf_adds(b, "{\"environment\":");
	airlift_add_str(b, environment);
	buf_adds(b, ",\"services\":[");
}

/* One service of the inventory (first: no leading comma). */
void
airlift_encode_service(struct buf *b, const struct airlift_service *s,
    int first)
{
	size_t	i, shown = 0;

	if (!first)
		buf_addc(b, ',');
	buf_adds(b, "{\"id\":");
	airlift_add_str(b, s->id);
	buf_adds(b, ",\"nodeId\":");
	airlift_add_str(b, s->node_id);
	buf_adds(b, ",\"type\":");
	airlift_add_str(b, s->type);
	buf_adds(b, ",\"pool\":");
	airlift_add_str(b, s->pool);
	buf_adds(b, ",\"location\":");
	airlift_add_str(b, s->location);
	buf_adds(b, ",\"properties\":{");
	for (i = 0; i < s->properties.n; i++) {
		if (strncmp(s->properties.v[i].key, AIRLIFT_RESERVED_PREFIX,
		    strlen(AIRLIFT_RESERVED_PREFIX)) == 0)
			continue;	/* the server's own keys */
		if (shown++ > 0)
			buf_addc(b, ',');
		json_add_string(b, s->properties.v[i].key);
		buf_addc(b, ':');
		airlift_add_str(b, s->properties.v[i].value);
	}
	buf_adds(b, "}}");
}

/* The inventory's tail. */
void
airlift_encode_services_close(struct buf *b)
{
	buf_adds(b, "]}");
}
