/*
 * airlift.c: airlift's discovery protocol (what Trino's nodes speak) served
 * from heureka's lease table, so that announcements expire, replicate to
 * every peer, sync at start-up, take part in anti-entropy and show in
 * /metrics and on the dashboard exactly as Eureka leases do.
 *
 * The mapping (docs/airlift.md):
 *  - an announced service is an instance of the application
 *    AIRLIFT-<TYPE upper-cased>; its id is "<nodeId>:<serviceId>" (a static
 *    announcement's is "static:<id>"), so two nodes never share an id;
 *  - its metadata holds the reserved keys airlift.type, airlift.id,
 *    airlift.pool, airlift.location, airlift.environment and airlift.nodeId
 *    (or airlift.static), then the service's properties unchanged, which
 *    is why property names starting with "airlift." are refused;
 *  - hostName, ipAddr and port come from the "http" (else "https")
 *    property when it is a URL, so Eureka clients can call the service;
 *  - the lease lasts heureka.airlift.max-age-ms (whole seconds, as Eureka's
 *    leaseInfo counts them); a static announcement's lasts ten years;
 *  - the airlift.type key keeps the lease out of self-preservation's
 *    figures (registry.h, REGISTRY_UNCOUNTED_KEY).
 *
 * A re-announcement whose services are unchanged renews their leases (a
 * heartbeat, replicated as one); a changed service is re-registered; a
 * service the node no longer announces is cancelled. The inventory is
 * built from the table on every GET, hiding expired leases whatever
 * self-preservation says and anything not UP (an operator can take an
 * airlift service out with Eureka's status override).
 */
#include <sys/types.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "admit.h"
#include "airlift_codec.h"
#include "buf.h"
#include "config.h"
#include "hash.h"
#include "http.h"
#include "httputil.h"
#include "instance.h"
#include "log.h"
#include "registry.h"
#include "airlift.h"
#include "xmalloc.h"

#define AIRLIFT_STATIC_SECS	(10 * 365 * 86400)	/* "never" */
#define AIRLIFT_STATIC_NODE	"static"
#define AIRLIFT_LOOKUP_MAX_AGE	10	/* s: airlift's default delay */
#define AIRLIFT_RESERVED	7	/* reserved metadata keys at most */

#define K_TYPE		AIRLIFT_META_TYPE
#define K_ID		AIRLIFT_META_ID
#define K_POOL		AIRLIFT_META_POOL
#define K_LOCATION	AIRLIFT_META_LOCATION
#define K_ENV		AIRLIFT_META_ENV
#define K_NODE		AIRLIFT_META_NODE
#define K_STATIC	AIRLIFT_META_STATIC

/* An (app, id) pair of a stored airlift lease, copied out of the table. */
struct airlift_ref {
	char	*app;
	char	*id;
};

/*
 * The airlift routes: the lease table, the configuration and the
 * registration rate limit, borrowed.
 */
struct airlift {
	struct registry		*reg;
	const struct config	*conf;
	struct admit		*admit;
};

/* What one request needs. */
struct airlift_req {
	struct airlift		*al;
	struct hreq		*req;
	enum evhttp_cmd_type	 method;
	char			**seg;
	int			 nseg;
	struct hk_time		 now;
};

static int	airlift_send(struct airlift_req *, int, const char *,
		    const char *, size_t);

/* The environment announcements must name. */
static const char *
airlift_environment(const struct airlift *al)
{
	if (al->conf->airlift_environment != NULL &&
	    al->conf->airlift_environment[0] != '\0')
		return (al->conf->airlift_environment);
	return (al->conf->environment);
}

/* The lease of a dynamic announcement, in whole seconds (at least 1). */
static int
airlift_lease_secs(const struct airlift *al)
{
	int64_t	secs = (al->conf->airlift_max_age_ms + 999) / 1000;

	return (secs < 1 ? 1 : (int)secs);
}

/* "AIRLIFT-<TYPE>": a new string. */
static char *
airlift_app_name(const char *type)
{
	char	*app;

	xasprintf(&app, "%s%s", AIRLIFT_APP_PREFIX, type);
	str_upper(app);
	return (app);
}

/* Send a reply with an optional body; returns the code. */
static int
airlift_send(struct airlift_req *r, int code, const char *ctype,
    const char *body, size_t len)
{
	struct hhdrs		*h = hreq_output_headers(r->req);
	struct evbuffer		*b = NULL;
	const char		*reason;

	switch (code) {
	case 201: reason = "Created"; break;
	case 202: reason = "Accepted"; break;
	case 304: reason = "Not Modified"; break;
	default: reason = http_reason(code); break;
	}
	if (ctype != NULL)
		hhdrs_add(h, "Content-Type", ctype);
	if (body != NULL && len > 0) {
		b = evbuffer_new();
		evbuffer_add(b, body, len);
	}
	hreq_send_reply(r->req, code, reason, b);
	if (b != NULL)
		evbuffer_free(b);
	return (code);
}

/* A plain-text error with its reason; returns the code. */
static int
airlift_error(struct airlift_req *r, int code, const char *reason)
{
	hreq_error(r->req, code, reason);
	log_debug("%s: %s -> %d %s", __func__,
	    hreq_uri(r->req), code, reason);
	return (code);
}

/* Add "Cache-Control: max-age=secs". */
static void
airlift_max_age(struct airlift_req *r, int secs)
{
	char	v[32];

	snprintf(v, sizeof v, "max-age=%d", secs);
	hhdrs_add(hreq_output_headers(r->req),
	    "Cache-Control", v);
}

/* Whether a stored instance is an airlift lease. */
static int
airlift_is_ours(const struct instance *in)
{
	return (in->app != NULL && strncmp(in->app, AIRLIFT_APP_PREFIX,
	    strlen(AIRLIFT_APP_PREFIX)) == 0 &&
	    kvlist_get(&in->metadata, K_TYPE) != NULL &&
	    kvlist_get(&in->metadata, K_ID) != NULL);
}

/* Borrowed view of a stored instance as an airlift service. */
static void
airlift_view(const struct instance *in, struct airlift_service *v)
{
	memset(v, 0, sizeof *v);
	v->id = (char *)kvlist_get(&in->metadata, K_ID);
	v->node_id = (char *)kvlist_get(&in->metadata, K_NODE);
	v->type = (char *)kvlist_get(&in->metadata, K_TYPE);
	v->pool = (char *)kvlist_get(&in->metadata, K_POOL);
	v->location = (char *)kvlist_get(&in->metadata, K_LOCATION);
	v->properties = in->metadata;	/* the encoder skips airlift.* */
}

/* host, ip and port from a property that is an http(s) URL. */
static void
airlift_address(struct instance *in, const struct kvlist *props)
{
	struct evhttp_uri	*u;
	const char		*url, *host;
	int			 secure = 0, port;

	if ((url = kvlist_get(props, "http")) == NULL) {
		if ((url = kvlist_get(props, "https")) == NULL)
			return;
		secure = 1;
	}
	if ((u = evhttp_uri_parse(url)) == NULL)
		return;
	if ((host = evhttp_uri_get_host(u)) != NULL && *host != '\0' &&
	    strlen(host) < INSTANCE_MAX_NAME) {
		str_replace(&in->host_name, host);
		str_replace(&in->ip_addr, host);
		port = evhttp_uri_get_port(u);
		if (port <= 0)
			port = secure ? 443 : 80;
		if (secure) {
			in->secure_port = port;
			in->secure_port_enabled = 1;
			in->port_enabled = 0;
		} else {
			in->port = port;
			in->port_enabled = 1;
		}
	}
	evhttp_uri_free(u);
}

/*
 * The instance an airlift service is stored as. node NULL: a static
 * announcement. Reserved keys come first, then the properties.
 */
static struct instance *
airlift_instance(const struct airlift *al, const struct airlift_service *svc,
    const char *node, int secs, struct hk_time now)
{
	struct instance	*in = instance_new();
	size_t		 i;

	xasprintf(&in->instance_id, "%s:%s", node != NULL ? node :
	    AIRLIFT_STATIC_NODE, svc->id);
	in->app = airlift_app_name(svc->type);
	in->host_name = xstrdup(node != NULL ? node : AIRLIFT_STATIC_NODE);
	in->ip_addr = xstrdup("0.0.0.0");
	in->port_enabled = 0;
	in->vip_address = xstrdup(svc->type);
	in->has_dc = in->has_dc_name = 1;
	in->dc_name = DC_MYOWN;
	in->has_lease = 1;
	in->lease.duration_secs = secs;
	in->lease.renewal_interval_secs = secs > 1 ? secs * 4 / 5 : 1;
	in->last_dirty_ts = now.wall_ms;
	in->last_updated_ts = now.wall_ms;
	kvlist_set(&in->metadata, K_TYPE, svc->type);
	kvlist_set(&in->metadata, K_ID, svc->id);
	kvlist_set(&in->metadata, K_POOL, svc->pool);
	kvlist_set(&in->metadata, K_LOCATION, svc->location);
	kvlist_set(&in->metadata, K_ENV, airlift_environment(al));
	if (node != NULL)
		kvlist_set(&in->metadata, K_NODE, node);
	else
		kvlist_set(&in->metadata, K_STATIC, "true");
	for (i = 0; i < svc->properties.n; i++)
		kvlist_set(&in->metadata, svc->properties.v[i].key,
		    svc->properties.v[i].value);
	airlift_address(in, &svc->properties);
	return (in);
}

/* The configured metadata bounds, applied to a service's properties. */
static int
airlift_check_props(struct airlift_req *r, const struct kvlist *p,
    char *msg, size_t len)
{
	const struct config	*cf = r->al->conf;
	size_t			 i;

	if ((int)(p->n + AIRLIFT_RESERVED) > cf->max_metadata_entries) {
		snprintf(msg, len, "too many properties (%zu; at most %d with "
		    "eureka.server.max-metadata-entries %d)", p->n,
		    cf->max_metadata_entries - AIRLIFT_RESERVED,
		    cf->max_metadata_entries);
		return (-1);
	}
	for (i = 0; i < p->n; i++) {
		if (strlen(p->v[i].key) >
		    (size_t)cf->max_metadata_key_bytes ||
		    strlen(p->v[i].value) >
		    (size_t)cf->max_metadata_value_bytes) {
			snprintf(msg, len, "property %.64s: name or value "
			    "longer than eureka.server.max-metadata-key-bytes "
			    "%d / max-metadata-value-bytes %d", p->v[i].key,
			    cf->max_metadata_key_bytes,
			    cf->max_metadata_value_bytes);
			return (-1);
		}
	}
	return (0);
}

/* Whether two metadata maps are equal, order included. */
static int
airlift_same_metadata(const struct kvlist *a, const struct kvlist *b)
{
	size_t	i;

	if (a->n != b->n)
		return (0);
	for (i = 0; i < a->n; i++) {
		if (strcmp(a->v[i].key, b->v[i].key) != 0 ||
		    strcmp(a->v[i].value != NULL ? a->v[i].value : "",
		    b->v[i].value != NULL ? b->v[i].value : "") != 0)
			return (0);
	}
	return (1);
}

/*
 * The airlift leases of a node (node NULL: the static ones), of one type
 * if type is not NULL, copied out so that they can be cancelled.
 */
static size_t
airlift_find(struct airlift *al, const char *node, const char *type,
    struct airlift_ref **out)
{
	struct reg_app		*a;
	const struct instance	*in;
	const char		*v;
	size_t			 i, j, n = 0, cap = 0;

	*out = NULL;
	for (i = 0; i < registry_app_count(al->reg); i++) {
		a = registry_app_at(al->reg, i);
		if (strncmp(reg_app_name(a), AIRLIFT_APP_PREFIX,
		    strlen(AIRLIFT_APP_PREFIX)) != 0)
			continue;
		for (j = 0; j < reg_app_size(a); j++) {
			in = reg_app_instance_at(a, j);
			if (!airlift_is_ours(in))
				continue;
			v = kvlist_get(&in->metadata, node != NULL ? K_NODE :
			    K_STATIC);
			if (v == NULL || (node != NULL && strcmp(v, node) != 0))
				continue;
			if (type != NULL && strcmp(kvlist_get(&in->metadata,
			    K_TYPE), type) != 0)
				continue;
			if (n == cap) {
				cap = cap == 0 ? 8 : cap * 2;
				*out = xreallocarray(*out, cap, sizeof **out);
			}
			(*out)[n].app = xstrdup(in->app);
			(*out)[n].id = xstrdup(instance_id(in));
			n++;
		}
	}
	return (n);
}

/* Free what airlift_find gave. */
static void
airlift_refs_free(struct airlift_ref *refs, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		free(refs[i].app);
		free(refs[i].id);
	}
	free(refs);
}

/* Cancel every ref not in keep (ids; NULL keeps none); the count. */
static size_t
airlift_cancel(struct airlift *al, struct airlift_ref *refs, size_t n,
    char **keep, size_t nkeep, struct hk_time now)
{
	size_t	i, k, done = 0;

	for (i = 0; i < n; i++) {
		for (k = 0; k < nkeep; k++) {
			if (strcmp(refs[i].id, keep[k]) == 0)
				break;
		}
		if (k < nkeep)
			continue;
		(void)registry_cancel(al->reg, refs[i].app, refs[i].id, 0, now,
		    0);
		done++;
	}
	return (done);
}

/* Read the body; -1 after an error reply. */
static int
airlift_body(struct airlift_req *r, struct buf *body, int *code)
{
	const char	*ct = hreq_header(r->req, "Content-Type");
	const char	*cause = NULL;
	int		 rc;

	if (ct != NULL && strcasestr(ct, "json") == NULL) {
		*code = airlift_error(r, 415, "Content-Type must be "
		    "application/json");
		return (-1);
	}
	if ((rc = hreq_read_body(r->req, r->al->conf->max_body_bytes, body,
	    &cause)) != 0) {
		*code = airlift_error(r, rc, cause);
		return (-1);
	}
	return (0);
}

/*
 * Whether storing in would renew the lease stored for it (unchanged and
 * UP) rather than register: a registration is an entry the rate limit
 * counts.
 */
static int
airlift_is_renewal(struct airlift_req *r, const struct instance *in)
{
	const struct instance	*old;

	old = registry_get(r->al->reg, in->app, instance_id(in),
	    r->now.mono_ms);
	return (old != NULL && old->status == STATUS_UP &&
	    old->lease.duration_secs == in->lease.duration_secs &&
	    airlift_same_metadata(&old->metadata, &in->metadata));
}

/*
 * The registration rate limit for n entries (admit.c); -1 with the 429
 * sent when hit.
 */
static int
airlift_admit(struct airlift_req *r, size_t n, int *code)
{
	char	msg[200];

	if (admit_take(r->al->admit, r->req, n, "airlift services",
	    r->now.mono_ms, msg, sizeof msg) == 0)
		return (0);
	*code = airlift_error(r, 429, msg);
	return (-1);
}

/* Store one instance; 0, or -1 with an error reply sent. */
static int
airlift_store(struct airlift_req *r, struct instance *in, int *code)
{
	enum registry_rc	 rc;
	char			*app = xstrdup(in->app);
	char			*id = xstrdup(instance_id(in));

	if (airlift_is_renewal(r, in) &&
	    registry_renew(r->al->reg, app, id, -1, STATUS_UNKNOWN, 0, r->now,
	    NULL) == REG_OK) {
		instance_free(in);
		rc = REG_OK;
	} else
		rc = registry_register(r->al->reg, in, 0, r->now);
	free(app);
	free(id);
	switch (rc) {
	case REG_OK:
		return (0);
	case REG_FULL:
	case REG_NO_MEMORY:
		*code = airlift_error(r, 503, "registry full");
		return (-1);
	case REG_TOO_LARGE:
		*code = airlift_error(r, 413, "service too large "
		    "(eureka.server.max-instance-bytes)");
		return (-1);
	default:
		*code = airlift_error(r, 400, "service refused");
		return (-1);
	}
}

/* The environment check, with airlift's own message; -1 after a 400. */
static int
airlift_check_env(struct airlift_req *r, const char *env, int *code)
{
	char	*msg;

	if (strcmp(env, airlift_environment(r->al)) == 0)
		return (0);
	xasprintf(&msg, "Environment mismatch. Expected: %s, Provided: %s",
	    airlift_environment(r->al), env);
	*code = airlift_error(r, 400, msg);
	free(msg);
	return (-1);
}

/* PUT announcement/{nodeId} */
static int
airlift_announce(struct airlift_req *r)
{
	struct airlift_announcement	 a;
	struct airlift_service		*svc;
	struct airlift_ref		*refs = NULL;
	struct instance			**ins = NULL;
	struct buf			 body;
	const char			*node = r->seg[1];
	char				*cause = NULL, **keep = NULL;
	char				 msg[256];
	size_t				 i, n = 0, nrefs, nnew;
	int				 code = 202, secs;

	memset(&a, 0, sizeof a);
	buf_init(&body, 0);
	secs = airlift_lease_secs(r->al);
	if (!airlift_name_ok(node) || strcmp(node, AIRLIFT_STATIC_NODE) == 0) {
		code = airlift_error(r, 400, "invalid node id: printable "
		    "characters without '/', '?', '#', ':' or spaces, at most "
		    "128 bytes, not \"static\"");
		goto out;
	}
	if (airlift_body(r, &body, &code) != 0)
		goto out;
	if (airlift_decode_announcement(body.data != NULL ? body.data : "",
	    body.len, &a, &cause) != 0) {
		code = airlift_error(r, 400, cause);
		goto out;
	}
	if (airlift_check_env(r, a.environment, &code) != 0)
		goto out;
	/* Build and check everything before the table changes. */
	ins = xcalloc(a.n + 1, sizeof *ins);
	keep = xcalloc(a.n + 1, sizeof *keep);
	for (n = 0; n < a.n; n++) {
		svc = &a.services[n];
		if (airlift_check_props(r, &svc->properties, msg,
		    sizeof msg) != 0) {
			code = airlift_error(r, 400, msg);
			goto out;
		}
		svc->pool = xstrdup(a.pool);
		if (a.location != NULL)
			svc->location = xstrdup(a.location);
		else
			xasprintf(&svc->location, "/somewhere/%s", node);
		ins[n] = airlift_instance(r->al, svc, node, secs, r->now);
		if (r->al->conf->max_instance_bytes > 0 &&
		    instance_stored_size(ins[n]) >
		    r->al->conf->max_instance_bytes) {
			n++;
			code = airlift_error(r, 413, "service too large "
			    "(eureka.server.max-instance-bytes)");
			goto out;
		}
		keep[n] = xstrdup(instance_id(ins[n]));
	}
	/* New or changed services enter the registry: the rate limit. */
	for (i = 0, nnew = 0; i < n; i++)
		nnew += !airlift_is_renewal(r, ins[i]);
	if (airlift_admit(r, nnew, &code) != 0)
		goto out;
	/* Leases no longer announced go first, then the set is stored. */
	nrefs = airlift_find(r->al, node, NULL, &refs);
	airlift_cancel(r->al, refs, nrefs, keep, a.n, r->now);
	airlift_refs_free(refs, nrefs);
	for (i = 0; i < n; i++) {
		struct instance *in = ins[i];

		ins[i] = NULL;
		if (airlift_store(r, in, &code) != 0)
			goto out;
	}
	airlift_max_age(r, secs);
	code = airlift_send(r, 202, NULL, NULL, 0);
out:
	for (i = 0; i < n; i++) {
		instance_free(ins != NULL ? ins[i] : NULL);
		free(keep != NULL ? keep[i] : NULL);
	}
	free(ins);
	free(keep);
	free(cause);
	buf_free(&body);
	airlift_announcement_clear(&a);
	return (code);
}

/* DELETE announcement/{nodeId} and announcement/{nodeId}/{type} */
static int
airlift_unannounce(struct airlift_req *r)
{
	struct airlift_ref	*refs;
	size_t			 n;

	n = airlift_find(r->al, r->seg[1], r->nseg > 2 ? r->seg[2] : NULL,
	    &refs);
	airlift_cancel(r->al, refs, n, NULL, 0, r->now);
	airlift_refs_free(refs, n);
	return (airlift_send(r, 204, NULL, NULL, 0));
}

/* A fresh random UUID (version 4) as a new string. */
static char *
airlift_uuid(void)
{
	uint8_t	 k[HASH_KEY_LEN];
	char	*s;

	hash_key_random(k);
	k[6] = (uint8_t)((k[6] & 0x0f) | 0x40);
	k[8] = (uint8_t)((k[8] & 0x3f) | 0x80);
	xasprintf(&s, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
	    "%02x%02x%02x%02x%02x%02x", k[0], k[1], k[2], k[3], k[4], k[5],
	    k[6], k[7], k[8], k[9], k[10], k[11], k[12], k[13], k[14], k[15]);
	return (s);
}

/* POST announcement/static */
static int
airlift_static_post(struct airlift_req *r)
{
	struct airlift_service	 svc;
	struct instance		*in;
	struct buf		 body, out;
	char			*cause = NULL, *env = NULL, *loc;
	char			 msg[256];
	int			 code;

	memset(&svc, 0, sizeof svc);
	buf_init(&body, 0);
	buf_init(&out, 0);
	if (airlift_body(r, &body, &code) != 0)
		goto out;
	if (airlift_decode_static(body.data != NULL ? body.data : "",
	    body.len, &svc, &env, &cause) != 0) {
		code = airlift_error(r, 400, cause);
		goto out;
	}
	if (airlift_check_env(r, env, &code) != 0)
		goto out;
	if (airlift_check_props(r, &svc.properties, msg, sizeof msg) != 0) {
		code = airlift_error(r, 400, msg);
		goto out;
	}
	if (airlift_admit(r, 1, &code) != 0)
		goto out;
	svc.id = airlift_uuid();
	if (svc.location == NULL)
		xasprintf(&svc.location, "/somewhere/%s", svc.id);
	in = airlift_instance(r->al, &svc, NULL, AIRLIFT_STATIC_SECS, r->now);
	if (airlift_store(r, in, &code) != 0)
		goto out;
	airlift_encode_service(&out, &svc, 1);
	xasprintf(&loc, "/v1/announcement/static/%s", svc.id);
	hhdrs_add(hreq_output_headers(r->req),
	    "Location", loc);
	free(loc);
	code = airlift_send(r, 201, "application/json", out.data, out.len);
out:
	free(cause);
	free(env);
	buf_free(&body);
	buf_free(&out);
	airlift_service_clear(&svc);
	return (code);
}

/* DELETE announcement/static/{id}: 204 whether or not it existed. */
static int
airlift_static_delete(struct airlift_req *r)
{
	const struct instance	*in;
	char			*id, *app;

	xasprintf(&id, "%s:%s", AIRLIFT_STATIC_NODE, r->seg[2]);
	in = registry_find_id(r->al->reg, id, r->now.mono_ms);
	if (in != NULL && airlift_is_ours(in) &&
	    kvlist_get(&in->metadata, K_STATIC) != NULL) {
		app = xstrdup(in->app);
		(void)registry_cancel(r->al->reg, app, id, 0, r->now, 0);
		free(app);
	}
	free(id);
	return (airlift_send(r, 204, NULL, NULL, 0));
}

/* Whether one header's comma-separated list names etag (or is "*"). */
static int
airlift_etag_in(const char *v, const char *etag)
{
	size_t	n, el = strlen(etag);

	while (*v != '\0') {
		v += strspn(v, " \t,");
		if (strncmp(v, "W/", 2) == 0)
			v += 2;
		n = strcspn(v, ",");
		while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
			n--;
		if ((n == el && strncmp(v, etag, el) == 0) ||
		    (n == 1 && *v == '*'))
			return (1);
		v += strcspn(v, ",");
	}
	return (0);
}

/*
 * Whether the request carries the current ETag: in If-None-Match, or in
 * an ETag request header, which is how airlift's lookup client sends it.
 */
static int
airlift_etag_matches(struct airlift_req *r, const char *etag)
{
	const char	*v;

	if ((v = hreq_header(r->req, "If-None-Match")) != NULL &&
	    airlift_etag_in(v, etag))
		return (1);
	return ((v = hreq_header(r->req, "ETag")) != NULL &&
	    airlift_etag_in(v, etag));
}

/*
 * GET service[/{type}[/{pool}]] and GET announcement/static: the live
 * services, with an ETag over the answer's bytes (the same on every
 * node) and a max-age that paces airlift's lookup refresh.
 */
static int
airlift_inventory(struct airlift_req *r, const char *type, const char *pool,
    int static_only)
{
	struct reg_app		*a;
	const struct instance	*in;
	struct airlift_service	 v;
	struct buf		 b;
	char			*app = NULL, etag[32];
	size_t			 i, j, napps;
	int			 first = 1;
	int			 code, age;

	buf_init(&b, 0);
	airlift_encode_services_open(&b, airlift_environment(r->al));
	/* One type: its one application, found by name. */
	if (type != NULL)
		app = airlift_app_name(type);
	napps = app != NULL ? 1 : registry_app_count(r->al->reg);
	for (i = 0; i < napps; i++) {
		a = app != NULL ? registry_app_find(r->al->reg, app) :
		    registry_app_at(r->al->reg, i);
		if (a == NULL || (app == NULL && strncmp(reg_app_name(a),
		    AIRLIFT_APP_PREFIX, strlen(AIRLIFT_APP_PREFIX)) != 0))
			continue;
		for (j = 0; j < reg_app_size(a); j++) {
			in = reg_app_instance_at(a, j);
			if (!airlift_is_ours(in) || in->status != STATUS_UP ||
			    reg_app_lease_expired(a, j, r->now.mono_ms))
				continue;
			airlift_view(in, &v);
			if ((type != NULL && strcmp(v.type, type) != 0) ||
			    (pool != NULL && (v.pool == NULL ||
			    strcmp(v.pool, pool) != 0)) ||
			    (static_only && v.node_id != NULL))
				continue;
			airlift_encode_service(&b, &v, first);
			first = 0;
		}
	}
	airlift_encode_services_close(&b);
	snprintf(etag, sizeof etag, "\"%016" PRIx64 "\"",
	    hash_fixed(0x6169726c696674ULL, b.data, b.len));
	age = airlift_lease_secs(r->al);
	if (age > AIRLIFT_LOOKUP_MAX_AGE)
		age = AIRLIFT_LOOKUP_MAX_AGE;
	hhdrs_add(hreq_output_headers(r->req), "ETag",
	    etag);
	airlift_max_age(r, age);
	if (airlift_etag_matches(r, etag))
		code = airlift_send(r, 304, NULL, NULL, 0);
	else
		code = airlift_send(r, 200, "application/json", b.data, b.len);
	free(app);
	buf_free(&b);
	return (code);
}

/* The airlift routes over reg and cf (both borrowed). */
struct airlift *
airlift_new(struct registry *reg, const struct config *cf,
    struct admit *admit)
{
	struct airlift	*al = xcalloc(1, sizeof *al);

	al->reg = reg;
	al->conf = cf;
	al->admit = admit;
	return (al);
}

/* Free the routes' object (not the registry or the configuration). */
void
airlift_free(struct airlift *al)
{
	free(al);
}

/* Entry point: see airlift.h. */
int
airlift_http(struct airlift *al, struct hreq *req,
    enum evhttp_cmd_type method, char **seg, int nseg, struct hk_time now)
{
	struct airlift_req	r;
	int			get;

	r.al = al;
	r.req = req;
	r.method = method;
	r.seg = seg;
	r.nseg = nseg;
	r.now = now;
	get = method == EVHTTP_REQ_GET || method == EVHTTP_REQ_HEAD;
	if (strcmp(seg[0], "service") == 0 && get && nseg <= 3) {
		if (nseg >= 2 && !airlift_name_ok(seg[1]))
			return (airlift_error(&r, 400, "invalid type"));
		if (nseg == 3 && !airlift_name_ok(seg[2]))
			return (airlift_error(&r, 400, "invalid pool"));
		return (airlift_inventory(&r, nseg >= 2 ? seg[1] : NULL,
		    nseg == 3 ? seg[2] : NULL, 0));
	}
	if (strcmp(seg[0], "announcement") != 0 || nseg < 2)
		return (airlift_error(&r, 404, "no such resource"));
	if (strcmp(seg[1], AIRLIFT_STATIC_NODE) == 0) {
		if (nseg == 2 && get)
			return (airlift_inventory(&r, NULL, NULL, 1));
		if (nseg == 2 && method == EVHTTP_REQ_POST)
			return (airlift_static_post(&r));
		if (nseg == 3 && method == EVHTTP_REQ_DELETE)
			return (airlift_static_delete(&r));
		return (airlift_error(&r, 405, "method not allowed"));
	}
	if (nseg == 2 && method == EVHTTP_REQ_PUT)
		return (airlift_announce(&r));
	if ((nseg == 2 || nseg == 3) && method == EVHTTP_REQ_DELETE)
		return (airlift_unannounce(&r));
	return (airlift_error(&r, 405, "method not allowed"));
}
