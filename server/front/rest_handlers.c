/*
 * rest_handlers.c: the Eureka REST handlers that change or read single
 * records (spec §2, §5, §6): register, renew, cancel, status overrides,
 * metadata, instances by id, the override list, ASG status, the
 * replication batch (decoded here, applied by batch.c, its answer
 * encoded here) and airlift's routes; with the body-format, rate and
 * memory limits that guard them. Writes go to the registry, whose
 * observers (cache, replication) react.
 */


#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/http.h>

#include "admit.h"
#include "airlift.h"
#include "consul.h"
#include "batch.h"
#include "buf.h"
#include "cache.h"
#include "barrier.h"
#include "console.h"
#include "config.h"
#include "ext.h"
#include "http.h"
#include "httputil.h"
#include "instance.h"
#include "json.h"
#include "leader.h"
#include "log.h"
#include "metrics.h"
#include "ops.h"
#include "registry.h"
#include "rest_int.h"
#include "watch.h"
#include "xml.h"

static struct log_ratelim rest_rl = LOG_RATELIM_INIT(10000, 10);
/* Limits are logged once a minute each, whatever the request rate. */
static struct log_ratelim limit_size_rl = LOG_RATELIM_INIT(60000, 1);
static struct log_ratelim limit_memory_rl = LOG_RATELIM_INIT(60000, 1);
static struct log_ratelim limit_meta_rl = LOG_RATELIM_INIT(60000, 1);
static struct log_ratelim limit_full_rl = LOG_RATELIM_INIT(60000, 1);

/* Which codec a request body (len bytes) uses: 0 JSON, 1 XML, -1 none. */
static int
body_format(struct rctx *x, const char *body, size_t len)
{
	const char	*ct = hreq_header(x->req, "Content-Type");
	const char	*p;
	size_t		 i;

	if (ct == NULL || *ct == '\0') {
		/* No type given: sniff, as lenient as a client could want. */
		for (i = 0; i < len && (body[i] == ' ' || body[i] == '\t' ||
		    body[i] == '\r' || body[i] == '\n'); i++)
			;
		if (i == len)
			return (-1);
		return (body[i] == '{' ? 0 : body[i] == '<' ? 1 : -1);
	}
	/* Eureka decodes UTF-8 and ISO-8859-1 only (§2, Content-Type). */
	if ((p = http_find_word(ct, "charset=")) != NULL) {
		p += 8;
		if (*p == '"')
			p++;
		if (strncasecmp(p, "utf-8", 5) != 0 &&
		    strncasecmp(p, "iso-8859-1", 10) != 0)
			return (-1);
	}
	if (http_find_word(ct, "json") != NULL)
		return (0);
	if (http_find_word(ct, "xml") != NULL || strncasecmp(ct, "*/*", 3) == 0)
		return (1);
	return (-1);
}

/* The bounds batch.c checks writes against, from the configuration. */
static void
rest_limits(const struct rest_deps *d, struct batch_limits *lim)
{
	memset(lim, 0, sizeof *lim);
	lim->max_metadata_entries = d->conf->max_metadata_entries;
	lim->max_metadata_key_bytes = d->conf->max_metadata_key_bytes;
	lim->max_metadata_value_bytes = d->conf->max_metadata_value_bytes;
	lim->max_instance_bytes = d->conf->max_instance_bytes;
	lim->memory_budget = d->memory_budget;
	lim->max_instances = d->conf->max_instances;
	lim->max_clock_skew_ms = d->conf->max_clock_skew_ms;
	lim->audit = d->audit;
}

/*
 * Record what batch.c found: the limits hit in /metrics, and each kind of
 * refusal in the log, once a minute per kind.
 */
static void
rest_note(const struct rest_deps *d, const struct batch_result *r)
{
	static struct log_ratelim *const rl[BATCH_NNOTES] = {
		[BATCH_NOTE_METADATA] = &limit_meta_rl,
		[BATCH_NOTE_SIZE] = &limit_size_rl,
		[BATCH_NOTE_MEMORY] = &limit_memory_rl,
		[BATCH_NOTE_FULL] = &limit_full_rl,
		[BATCH_NOTE_FUTURE] = &rest_rl,
	};
	int	i;

	if (r->limit_metadata > 0)
		metrics_limit(d->metrics, METRICS_LIMIT_METADATA,
		    r->limit_metadata);
	if (r->limit_metadata_entries > 0)
		metrics_limit(d->metrics, METRICS_LIMIT_METADATA_ENTRIES,
		    r->limit_metadata_entries);
	if (r->limit_instances > 0)
		metrics_limit(d->metrics, METRICS_LIMIT_INSTANCES,
		    r->limit_instances);
	for (i = 0; i < BATCH_NNOTES; i++) {
		if (r->note[i][0] != '\0')
			log_warnx_rl(rl[i], "%s", r->note[i]);
	}
}

/*
 * The registration rate limit (admit.c) for one entry of kind what: 1,
 * with the 429 and its Retry-After sent, when hit. Peers' replication is
 * never limited.
 */
static int
register_rate_limited(struct rctx *x, const char *what)
{
	char	msg[200];

	if (x->replicated || admit_take(x->d->admit, x->req, 1, what,
	    x->now.mono_ms, msg, sizeof msg) == 0)
		return (0);
	reply_error(x, 429, msg);
	return (1);
}

/*
 * Eureka's unparsable-body answer (§2.5) in the body's own format, with
 * heureka's reason added so a developer sees what was wrong.
 */
static void
reply_parse_error(struct rctx *x, int json, const char *cause)
{
	struct buf	e;

	if (cause == NULL)
		cause = "cannot parse request body";
	buf_init(&e, 0);
	if (json) {
		buf_adds(&e, "{\"error\":\"cannot parse request body\","
		    "\"reason\":");
		json_add_string(&e, cause);
		buf_addc(&e, '}');
	} else {
		buf_adds(&e, "<error><message>cannot parse request body"
		    "</message><reason>");
		xml_add_escaped(&e, cause);
		buf_adds(&e, "</reason></error>");
	}
	reply(x, 400, json ? "application/json" : "application/xml", e.data,
	    e.len);
	buf_free(&e);
}

/* POST apps/{app}: register; 204 on success as Java clients require. */
void
h_register(struct rctx *x)
{
	struct buf	 body;
	const char	*cause = NULL, *bad, *data;
	char		*dcause = NULL, msg[512];
	struct instance	*in;
	size_t		 len, idlen;
	int		 code, fmt;
	int64_t		 dirty;
	enum registry_rc rc;
	struct batch_limits lim;
	struct batch_result res;

	buf_init(&body, 0);
	rest_limits(x->d, &lim);
	memset(&res, 0, sizeof res);
	if (register_rate_limited(x, "registrations"))
		goto out;
	/* The decoders read the request's own bytes: no copy. */
	if ((code = hreq_body_view(x->req, x->d->conf->max_body_bytes, &body,
	    &data, &len, &cause)) != 0) {
		reply_error(x, code, cause);
		goto out;
	}
	if ((fmt = body_format(x, data, len)) < 0) {
		reply_error(x, 415, "unsupported Content-Type: send "
		    "application/json or application/xml in UTF-8");
		goto out;
	}
	in = fmt == 0 ? json_decode_instance(data, len, x->now.wall_ms,
	    &dcause) : xml_decode_instance(data, len, x->now.wall_ms, &dcause);
	if (in == NULL) {
		log_warnx_rl(&rest_rl, "register %s: %s", x->seg[1],
		    dcause != NULL ? dcause : "cannot parse request body");
		reply_parse_error(x, fmt == 0, dcause);
		free(dcause);
		goto out;
	}
	if ((bad = batch_check_instance(&lim, in, x->seg[1], msg,
	    sizeof msg, &res)) != NULL) {
		reply_error(x, 400, bad);
		instance_free(in);
		goto out;
	}
	in = batch_fill_amazon_id(in);
	/* The id for the refusal's reason (in may be freed by then). */
	if ((idlen = strlen(instance_id(in))) >= sizeof msg)
		idlen = sizeof msg - 1;
	memcpy(msg, instance_id(in), idlen);
	msg[idlen] = '\0';
	registry_set_external_bytes(x->d->reg, REG_EXT_ENCODINGS,
	    cache_bytes(x->d->cache));
	dirty = in->last_dirty_ts;
	rc = registry_register(x->d->reg, in, x->replicated, x->now);
	if (rc == REG_FUTURE && !x->replicated)
		console_refused_future(x->d->console, x->seg[1], msg, dirty,
		    x->now);
	if (rc != REG_OK) {
		char	reason[256];

		code = batch_refusal(&lim, rc, x->seg[1], msg, reason,
		    sizeof reason, &res);
		reply_error(x, code, reason);
	} else
		reply(x, 204, NULL, NULL, 0);
out:
	rest_note(x->d, &res);
	buf_free(&body);
}

/* GET apps/{app}/{id}: hidden when expired (§2.6). */
void
h_instance(struct rctx *x)
{
	const struct instance	*in;

	if ((in = registry_get(x->d->reg, x->seg[1], x->seg[2],
	    x->now.mono_ms)) == NULL) {
		reply(x, 404, NULL, NULL, 0);
		return;
	}
	reply_instance(x, 200, in);
}

/* GET instances/{id}: the first non-expired lease with that id. */
void
h_instance_by_id(struct rctx *x)
{
	const struct instance	*in;

	if (!instance_name_ok(x->seg[1], INSTANCE_MAX_NAME)) {
		reply_error(x, 400, "invalid instance id");
		return;
	}
	if ((in = registry_find_id(x->d->reg, x->seg[1], x->now.mono_ms)) ==
	    NULL) {
		reply(x, 404, NULL, NULL, 0);
		return;
	}
	reply_instance(x, 200, in);
}

/*
 * PUT apps/{app}/{id}: heartbeat (§2.7). Eureka answers 404 for an
 * unknown instance so the client re-registers, and 409 with its copy to a
 * peer holding an older one. Do not "fix" either.
 */
void
h_renew(struct rctx *x)
{
	int64_t			 dirty = -1;
	enum instance_status	 ov = STATUS_UNKNOWN;
	const struct instance	*conflict = NULL;
	enum registry_rc	 rc;

	if (query_dirty(x, &dirty) != 0)
		return;
	if (query_status(x, "overriddenstatus", &ov) < 0) {
		reply_error(x, 400, "invalid overriddenstatus");
		return;
	}
	rc = registry_renew(x->d->reg, x->seg[1], x->seg[2], dirty, ov,
	    x->replicated, x->now, &conflict);
	switch (rc) {
	case REG_OK:
		reply(x, 200, NULL, NULL, 0);
		break;
	case REG_CONFLICT:
		if (conflict != NULL)
			reply_instance(x, 409, conflict);
		else
			reply(x, 409, NULL, NULL, 0);
		break;
	default:
		reply(x, 404, NULL, NULL, 0);
		break;
	}
}

/*
 * DELETE apps/{app}/{id}: cancel. A client's cancel of an instance this
 * node does not hold still leaves a tombstone: it takes a registration
 * token (admit.c), so ids never registered cannot be cancelled faster.
 */
void
h_cancel(struct rctx *x)
{
	if (!registry_holds(x->d->reg, x->seg[1], x->seg[2]) &&
	    register_rate_limited(x, "cancels of unknown instances"))
		return;
	if (registry_cancel(x->d->reg, x->seg[1], x->seg[2], x->replicated,
	    x->now, -1) != REG_OK) {
		reply(x, 404, NULL, NULL, 0);
		return;
	}
	reply(x, 200, NULL, NULL, 0);
}

/*
 * The answer to a status override or its removal: 200, 404 for an unknown
 * instance, 400 when the request's lastDirtyTimestamp is in the future.
 */
static void
reply_override_rc(struct rctx *x, enum registry_rc rc)
{
	if (rc == REG_FUTURE)
		reply_error(x, 400, "lastDirtyTimestamp is ahead of this "
		    "server's clock by more than eureka.server."
		    "max-clock-skew-ms");
	else
		reply(x, rc == REG_OK ? 200 : 404, NULL, NULL, 0);
}

/* PUT apps/{app}/{id}/status?value=S: operator override (§2.9). */
void
h_status_put(struct rctx *x)
{
	enum instance_status	 st;
	enum registry_rc	 rc;
	int64_t			 dirty = 0;

	if (query_status(x, "value", &st) <= 0) {
		reply_error(x, 400, BAD_STATUS);
		return;
	}
	if (query_dirty(x, &dirty) != 0)
		return;
	rc = registry_status_update(x->d->reg, x->seg[1], x->seg[2], st, dirty,
	    x->replicated, x->now, -1);
	reply_override_rc(x, rc);
}

/* DELETE apps/{app}/{id}/status[?value=S]: remove the override (§2.10). */
void
h_status_delete(struct rctx *x)
{
	enum instance_status	 st = STATUS_UNKNOWN;
	enum registry_rc	 rc;
	int64_t			 dirty = 0;

	if (query_status(x, "value", &st) < 0) {
		reply_error(x, 400, BAD_STATUS);
		return;
	}
	if (query_dirty(x, &dirty) != 0)
		return;
	rc = registry_delete_override(x->d->reg, x->seg[1], x->seg[2], st,
	    dirty, x->replicated, x->now, -1);
	reply_override_rc(x, rc);
}

/* PUT apps/{app}/{id}/metadata?k=v...: merge and re-register (§2.11). */
void
h_metadata(struct rctx *x)
{
	struct kvlist		 kv;
	const struct hkv		*e;
	const struct instance	*cur;
	size_t			 max = (size_t)x->d->conf->max_metadata_entries;
	size_t			 fresh = 0;
	enum registry_rc	 rc;
	char			 msg[256];
	int			 code;
	struct batch_limits	 lim;
	struct batch_result	 res;

	memset(&kv, 0, sizeof kv);
	memset(&res, 0, sizeof res);
	rest_limits(x->d, &lim);
	if ((cur = registry_get(x->d->reg, x->seg[1], x->seg[2],
	    x->now.mono_ms)) == NULL) {
		reply(x, 404, NULL, NULL, 0);
		return;
	}
	for (e = (&x->query)->kv; e < (&x->query)->kv + (&x->query)->n; e++) {
		if (e->key[0] == '\0' || strlen(e->key) > INSTANCE_MAX_NAME ||
		    strlen(e->value) > INSTANCE_MAX_STRING) {
			kvlist_clear(&kv);
			reply_error(x, 400, "invalid metadata key or value");
			return;
		}
		if (strlen(e->key) >
		    (size_t)x->d->conf->max_metadata_key_bytes ||
		    strlen(e->value) >
		    (size_t)x->d->conf->max_metadata_value_bytes) {
			kvlist_set(&kv, e->key, e->value);
			reply_error(x, 400, batch_check_metadata(&lim, &kv, msg,
			    sizeof msg, &res));
			rest_note(x->d, &res);
			kvlist_clear(&kv);
			return;
		}
		/* Eureka takes the first value of a repeated parameter. */
		if (kvlist_get(&kv, e->key) != NULL)
			continue;
		/* Stop at the bound: the merged map must stay within it. */
		if (kvlist_get(&cur->metadata, e->key) == NULL &&
		    cur->metadata.n + ++fresh > max) {
			kvlist_clear(&kv);
			metrics_limit(x->d->metrics,
			    METRICS_LIMIT_METADATA_ENTRIES, 1);
			log_warnx_rl(&limit_meta_rl, "limit: %s/%s: more than "
			    "eureka.server.max-metadata-entries (%zu)",
			    x->seg[1], x->seg[2], max);
			reply_error(x, 400, "too many metadata entries");
			return;
		}
		kvlist_set(&kv, e->key, e->value);
	}
	registry_set_external_bytes(x->d->reg, REG_EXT_ENCODINGS,
	    cache_bytes(x->d->cache));
	rc = registry_update_metadata(x->d->reg, x->seg[1], x->seg[2], &kv,
	    x->now);
	if (rc == REG_INVALID)
		reply_error(x, 400, "too many metadata entries");
	else if (rc == REG_TOO_LARGE || rc == REG_NO_MEMORY) {
		code = batch_refusal(&lim, rc, x->seg[1], x->seg[2], msg,
		    sizeof msg, &res);
		rest_note(x->d, &res);
		reply_error(x, code, msg);
	} else if (rc != REG_OK)
		reply(x, 404, NULL, NULL, 0);
	else
		reply(x, 200, NULL, NULL, 0);
	kvlist_clear(&kv);
}

/* Append one override to the JSON map. */
static void
override_cb(const char *id, enum instance_status st, void *arg)
{
	struct buf	*b = arg;

	if (b->len > 1)
		buf_addc(b, ',');
	json_add_string(b, id);
	buf_addc(b, ':');
	json_add_string(b, instance_status_name(st));
}

/* GET serverinfo/statusoverrides: id -> overridden status (§2.16). */
void
h_overrides(struct rctx *x)
{
	struct buf	b;

	buf_init(&b, 0);
	buf_addc(&b, '{');
	registry_foreach_override(x->d->reg, override_cb, &b, x->now.mono_ms);
	buf_addc(&b, '}');
	reply(x, 200, "application/json", b.data, b.len);
	buf_free(&b);
}

/* PUT asg/{name}/status: heureka is not an AWS registry (§2.15). */
void
h_asg(struct rctx *x)
{
	reply_error(x, 400, "ASG status is only supported by an AWS registry");
}

/* GET status: StatusInfo (§10.4), rendered by ops.c. */
void
h_status_info(struct rctx *x)
{
	ops_status_info(x->d->ops, x->req, hreq_wants_json(x->req), x->now);
	rest_record(x, 200);
}

/* POST peerreplication/batch: a peer's ReplicationList (§6.3). */
void
h_batch(struct rctx *x)
{
	struct buf		 body, out;
	struct repl_list	 l;
	struct repl_response	 r;
	struct batch_limits	 lim;
	struct batch_result	 res;
	const char		*cause = NULL, *data;
	char			*dcause = NULL;
	size_t			 len;
	int			 code;

	memset(&l, 0, sizeof l);
	memset(&r, 0, sizeof r);
	buf_init(&body, 0);
	buf_init(&out, 0);
	/* The decoder reads the request's own bytes: no copy. */
	if ((code = hreq_body_view(x->req, x->d->conf->max_batch_bytes, &body,
	    &data, &len, &cause)) != 0) {
		reply_error(x, code, cause);
		goto out;
	}
	if (json_decode_repl_list(data, len, &l, x->now.wall_ms,
	    &dcause) != 0) {
		log_warnx_rl(&rest_rl, "replication batch refused: %s",
		    dcause != NULL ? dcause : "?");
		reply_error(x, 400, dcause != NULL ? dcause :
		    "cannot parse replication batch");
		free(dcause);
		goto out;
	}
	rest_limits(x->d, &lim);
	memset(&res, 0, sizeof res);
	batch_apply(x->d->reg, x->d->cache, &lim, &l, &r, x->now, &res);
	rest_note(x->d, &res);
	json_encode_repl_response(&out, &r);
	reply(x, 200, "application/json", out.data, out.len);
out:
	repl_list_clear(&l);
	repl_response_clear(&r);
	buf_free(&body);
	buf_free(&out);
}

/*
 * airlift's discovery protocol (server/airlift.c): under /v1/ only, and
 * only while heureka.airlift.enabled. Inventory reads wait for the
 * start-up sync as Eureka's do.
 */
void
h_airlift(struct rctx *x)
{
	const char		*path = hreq_path(x->req);

	if (!x->d->conf->airlift_enabled || path == NULL ||
	    strncmp(path, "/v1/", 4) != 0) {
		reply_error(x, 404, "no such resource");
		return;
	}
	if ((x->method == EVHTTP_REQ_GET || x->method == EVHTTP_REQ_HEAD) &&
	    check_access(x) != 0)
		return;
	rest_record(x, airlift_http(x->d->airlift, x->req, x->method, x->seg,
	    x->nseg, x->now));
}

/* GET heureka/watch and heureka/watch/stats: the streams (watch.c). */
void
h_watch(struct rctx *x)
{
	const char	*label;

	label = watch_http(x->d->watch, x->req, x->nseg == 3 ? "watch/stats" :
	    "watch", &x->query, x->now);
	if (label != NULL)
		x->route = label;
	rest_record(x, hreq_response_code(x->req));
}

/* heureka/apps/{app}/leader: the pinned or elected leader (leader.c). */
void
h_leader(struct rctx *x)
{
	leader_http(x->d->reg, x->d->gate, x->req, x->seg[2], &x->query,
	    x->now);
	rest_record(x, hreq_response_code(x->req));
}

/* heureka/digest, heureka/apps, heureka/stats: the peers' (ext.c). */
void
h_ext(struct rctx *x)
{
	if (x->d->ext == NULL) {
		reply(x, 404, NULL, NULL, 0);
		return;
	}
	ext_http(x->d->ext, x->req, x->seg[1]);
	rest_record(x, hreq_response_code(x->req));
}

/* GET heureka/audit and heureka/doctor: the console (console.c). */
void
h_console(struct rctx *x)
{
	if (!console_http(x->d->console, x->req, x->seg[1], &x->query,
	    x->now)) {
		reply_error(x, 404, "no such resource");
		return;
	}
	rest_record(x, hreq_response_code(x->req));
}

/* GET heureka/apps/{app}/{id}/drained: the drain barrier (barrier.c). */
void
h_drained(struct rctx *x)
{
	barrier_http(x->d->barrier, x->req, x->seg[2], x->seg[3], &x->query,
	    x->now);
	rest_record(x, hreq_response_code(x->req));
}

/*
 * Consul's read-only catalog and health API (consul.c): under /v1/ only,
 * while heureka.consul.enabled; reads wait for the start-up sync as
 * Eureka's do. A blocking query is recorded when it is held.
 */
void
h_consul(struct rctx *x)
{
	const char		*path = hreq_path(x->req);

	if (!x->d->conf->consul_enabled || x->d->consul == NULL ||
	    path == NULL || strncmp(path, "/v1/", 4) != 0) {
		reply_error(x, 404, "no such resource");
		return;
	}
	if (check_access(x) != 0)
		return;
	rest_record(x, consul_http(x->d->consul, x->req, x->seg, x->nseg,
	    &x->query, x->now));
}
