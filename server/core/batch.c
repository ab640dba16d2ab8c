/*
 * batch.c: the apply of a peer's replication batch (§6.3) and the
 * register checks it shares with the REST register (see batch.h). Every
 * item is applied as replicated, so the registry's observers do not
 * replicate it on, and answered with Eureka's per-item status: a bad item
 * is refused alone, never the batch. A register item that fails
 * validation is swallowed (200) as Eureka's does: the peer would only
 * send it again.
 *
 * Nothing here logs or counts: the first line of each kind of refusal
 * and the counts of the limits hit go back in a struct batch_result.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "audit.h"
#include "batch.h"
#include "cache.h"
#include "instance.h"
#include "registry.h"
#include "repl.h"

static void	batch_note(struct batch_result *, enum batch_note,
		    const char *, ...) __attribute__((format(printf, 3, 4)));

/* Keep the first log line of a kind of refusal. */
static void
batch_note(struct batch_result *r, enum batch_note kind, const char *fmt, ...)
{
	va_list	ap;

	if (r->note[kind][0] != '\0')
		return;
	va_start(ap, fmt);
	vsnprintf(r->note[kind], sizeof r->note[kind], fmt, ap);
	va_end(ap);
}

/* src into dst (dstsz bytes), cut as snprintf's "%s" would cut it. */
static void
batch_copy_name(char *dst, size_t dstsz, const char *src)
{
	size_t	n = strnlen(src, dstsz - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* Eureka's register validation, then heureka's bounds; see batch.h. */
const char *
batch_check_instance(const struct batch_limits *lim,
    const struct instance *in, const char *app, char *msg, size_t msglen,
    struct batch_result *r)
{
	if (instance_id(in)[0] == '\0')
		return ("Missing instanceId");
	if (in->host_name == NULL || in->host_name[0] == '\0')
		return ("Missing hostname");
	if (in->ip_addr == NULL || in->ip_addr[0] == '\0')
		return ("Missing ip address");
	if (in->app == NULL || in->app[0] == '\0')
		return ("Missing appName");
	if (strcmp(in->app, app) != 0) {
		snprintf(msg, msglen, "Mismatched appName, expecting %s but "
		    "was %s", app, in->app);
		return (msg);
	}
	if (!in->has_dc)
		return ("Missing dataCenterInfo");
	if (!in->has_dc_name)
		return ("Missing dataCenterInfo Name");
	if (!instance_name_ok(instance_id(in), INSTANCE_MAX_NAME))
		return ("invalid instance id: printable characters without "
		    "'/', '?', '#' or spaces, at most 256 bytes");
	if ((int)in->metadata.n > lim->max_metadata_entries) {
		snprintf(msg, msglen, "too many metadata entries (%zu > %d)",
		    in->metadata.n, lim->max_metadata_entries);
		r->limit_metadata_entries++;
		batch_note(r, BATCH_NOTE_METADATA, "limit: %s", msg);
		return (msg);
	}
	return (batch_check_metadata(lim, &in->metadata, msg, msglen, r));
}

/* The metadata key and value length bounds; see batch.h. */
const char *
batch_check_metadata(const struct batch_limits *lim, const struct kvlist *kv,
    char *msg, size_t msglen, struct batch_result *r)
{
	size_t	i, kl, vl;

	for (i = 0; i < kv->n; i++) {
		kl = kv->v[i].key != NULL ? strlen(kv->v[i].key) : 0;
		vl = kv->v[i].value != NULL ? strlen(kv->v[i].value) : 0;
		if (kl <= (size_t)lim->max_metadata_key_bytes &&
		    vl <= (size_t)lim->max_metadata_value_bytes)
			continue;
		r->limit_metadata++;
		snprintf(msg, msglen, "metadata key or value too long (key %zu "
		    "bytes, value %zu; bounds eureka.server.max-metadata-key-"
		    "bytes %d, max-metadata-value-bytes %d)", kl, vl,
		    lim->max_metadata_key_bytes,
		    lim->max_metadata_value_bytes);
		batch_note(r, BATCH_NOTE_METADATA, "limit: %s", msg);
		return (msg);
	}
	return (NULL);
}

/* Fill a blank Amazon instance-id with the instance's id; see batch.h. */
struct instance *
batch_fill_amazon_id(struct instance *in)
{
	const char	*v;

	if (in->dc_name != DC_AMAZON)
		return (in);
	if ((v = kvlist_get(&in->dc_metadata, "instance-id")) == NULL ||
	    *v == '\0') {
		in = instance_unpack(in);
		kvlist_set(&in->dc_metadata, "instance-id", instance_id(in));
	}
	return (in);
}

/* The answer to a write the registry refused; see batch.h. */
int
batch_refusal(const struct batch_limits *lim, enum registry_rc rc,
    const char *app, const char *id, char *msg, size_t msglen,
    struct batch_result *r)
{
	if (rc == REG_TOO_LARGE) {
		snprintf(msg, msglen, "instance too large (eureka.server."
		    "max-instance-bytes %zu)", lim->max_instance_bytes);
		batch_note(r, BATCH_NOTE_SIZE, "limit: %s/%s refused: %s", app,
		    id, msg);
		return (413);
	}
	if (rc == REG_NO_MEMORY) {
		snprintf(msg, msglen, "memory budget reached (eureka.server."
		    "max-memory-bytes %zu): new registrations refused, "
		    "registered instances keep renewing", lim->memory_budget);
		batch_note(r, BATCH_NOTE_MEMORY, "limit: %s/%s refused: %s",
		    app, id, msg);
		return (503);
	}
	if (rc == REG_FULL) {
		snprintf(msg, msglen, "registry is full (eureka.server."
		    "max-instances %zu)", lim->max_instances);
		r->limit_instances++;
		batch_note(r, BATCH_NOTE_FULL, "limit: %s/%s refused: %s", app,
		    id, msg);
		return (503);
	}
	if (rc == REG_FUTURE) {
		snprintf(msg, msglen, "lastDirtyTimestamp is ahead of this "
		    "server's clock by more than eureka.server."
		    "max-clock-skew-ms (%lld)",
		    (long long)lim->max_clock_skew_ms);
		batch_note(r, BATCH_NOTE_FUTURE, "%s/%s refused: %s", app, id,
		    msg);
		return (400);
	}
	if (rc == REG_STALE) {
		snprintf(msg, msglen, "a cancel of this instance at or after "
		    "its lastDirtyTimestamp is known");
		return (409);
	}
	snprintf(msg, msglen, "registration refused");
	return (400);
}

/*
 * Apply a replicated register item: validation failures are swallowed;
 * 400 for a lastDirtyTimestamp beyond the skew, 409 for a copy a
 * tombstone covers, 413 and 503 for the per-instance and memory bounds.
 */
static int
batch_register(struct registry *reg, struct cache *cache,
    const struct batch_limits *lim, struct repl_item *it, struct hk_time now,
    struct batch_result *r)
{
	struct instance	*in;
	char		 msg[512], app[INSTANCE_MAX_NAME + 1];
	char		 id[INSTANCE_MAX_NAME + 1];
	enum registry_rc rc;

	if (it->info == NULL)
		return (200);
	/* Taken over, not copied: the batch is freed after it is applied. */
	in = it->info;
	it->info = NULL;
	batch_copy_name(app, sizeof app, it->app_name != NULL ?
	    it->app_name : (in->app != NULL ? in->app : ""));
	str_upper(app);
	if (batch_check_instance(lim, in, app, msg, sizeof msg, r) != NULL) {
		instance_free(in);
		return (200);
	}
	in = batch_fill_amazon_id(in);
	batch_copy_name(id, sizeof id, instance_id(in));
	if (cache != NULL)
		registry_set_external_bytes(reg, REG_EXT_ENCODINGS,
		    cache_bytes(cache));
	/* The same per-instance and memory bounds as a REST register. */
	rc = registry_register(reg, in, 1, now);
	if (rc == REG_TOO_LARGE || rc == REG_NO_MEMORY || rc == REG_FUTURE ||
	    rc == REG_STALE)
		return (batch_refusal(lim, rc, app, id, msg, sizeof msg, r));
	return (200);
}

/* The lastDirtyTimestamp an item carries, or dflt. */
static int64_t
batch_dirty(const struct repl_item *it, int64_t dflt)
{
	return (it->has_last_dirty ? it->last_dirty_ts : dflt);
}

/* The origin's lastUpdatedTimestamp a status item carries, or -1. */
static int64_t
batch_updated(const struct repl_item *it)
{
	return (it->info != NULL ? it->info->last_updated_ts : -1);
}

/* Apply one item of a known action to app (upper case); its status. */
static int
batch_item(struct registry *reg, struct cache *cache,
    const struct batch_limits *lim, struct repl_item *it, const char *app,
    struct repl_response_item *out, struct hk_time now,
    struct batch_result *r)
{
	const struct instance	*conflict = NULL;
	enum registry_rc	 rc;
	char			 msg[512];

	switch (it->action) {
	case REPL_REGISTER:
		return (batch_register(reg, cache, lim, it, now, r));
	case REPL_HEARTBEAT:
		rc = registry_renew(reg, app, it->id, batch_dirty(it, -1),
		    it->has_overridden ? it->overridden_status :
		    STATUS_UNKNOWN, 1, now, &conflict);
		/* Eureka answers 409 with its own copy (§6.3). */
		if (rc == REG_CONFLICT && conflict != NULL)
			out->entity = instance_dup(conflict);
		return (rc == REG_OK ? 200 : rc == REG_CONFLICT ? 409 : 404);
	case REPL_CANCEL:
		/* Its lastDirtyTimestamp is the tombstone's time. */
		rc = registry_cancel(reg, app, it->id, 1, now,
		    batch_dirty(it, -1));
		if (rc == REG_FUTURE)
			return (batch_refusal(lim, rc, app, it->id, msg,
			    sizeof msg, r));
		return (rc == REG_OK ? 200 : rc == REG_STALE ? 409 : 404);
	case REPL_STATUS_UPDATE:
		if (!it->has_status)
			return (400);
		rc = registry_status_update(reg, app, it->id, it->status,
		    batch_dirty(it, 0), 1, now, batch_updated(it));
		if (rc == REG_FUTURE)
			return (batch_refusal(lim, rc, app, it->id, msg,
			    sizeof msg, r));
		return (rc == REG_OK ? 200 : 404);
	case REPL_DELETE_STATUS_OVERRIDE:
		rc = registry_delete_override(reg, app, it->id,
		    it->has_status ? it->status : STATUS_UNKNOWN,
		    batch_dirty(it, 0), 1, now, batch_updated(it));
		if (rc == REG_FUTURE)
			return (batch_refusal(lim, rc, app, it->id, msg,
			    sizeof msg, r));
		return (rc == REG_OK ? 200 : 404);
	}
	return (400);
}

/* Apply every item of a replication batch; see batch.h. */
void
batch_apply(struct registry *reg, struct cache *cache,
    const struct batch_limits *lim, struct repl_list *l,
    struct repl_response *out, struct hk_time now, struct batch_result *r)
{
	struct repl_item		*it;
	struct repl_response_item	*ri;
	size_t				 i;

	for (i = 0; i < l->n; i++) {
		it = &l->items[i];
		ri = repl_response_add(out);
		if (it->app_name == NULL || it->id == NULL ||
		    !instance_name_ok(it->app_name, INSTANCE_MAX_NAME) ||
		    !instance_name_ok(it->id, INSTANCE_MAX_NAME)) {
			/* A register names its app and id in its instance. */
			ri->status_code = it->action == REPL_REGISTER ?
			    batch_register(reg, cache, lim, it, now, r) : 400;
			continue;
		}
		/* In place (the decoder did it already): the caller's item. */
		if (!it->decoded)
			str_upper(it->app_name);
		/* The audit keeps the origin's record (audit.h). */
		if (it->origin_node != NULL)
			audit_set_origin(lim->audit, it->origin_node,
			    it->origin_user, it->origin_addr);
		ri->status_code = batch_item(reg, cache, lim, it, it->app_name,
		    ri, now, r);
		audit_set_origin(lim->audit, NULL, NULL, NULL);
	}
}
