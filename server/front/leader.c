/*
 * leader.c: the leader rule and its REST face (README, "Watch and
 * leader"). The rule reads only what replication carries unchanged (the
 * instance id, status, registrationTimestamp as the origin stamped it and
 * the LEADER_PIN_KEY metadata), so every converged peer names the same
 * leader. A pin is written as a metadata update, which replicates as a
 * Register and which anti-entropy compares like any other field.
 */
#include <sys/queue.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "buf.h"
#include "httputil.h"
#include "instance.h"
#include "json.h"
#include "leader.h"
#include "gate.h"
#include "log.h"
#include "registry.h"
#include "xml.h"
#include "xmalloc.h"

#define LEADER_MAX_PINS	64	/* stale pins released per PUT at most */

/*
 * The visible UP instance of a ranked first (NULL: none), with its index
 * and pin: the one scan, for leader_find_app and the track's rescans.
 */
static const struct instance *
leader_scan(struct registry *reg, struct reg_app *a, int64_t mono,
    size_t *idx, int64_t *pinp)
{
	const struct instance	*in, *best = NULL;
	int			 hide = registry_lease_expiration_enabled(reg);
	int64_t			 pin, best_pin = 0;
	size_t			 i, n;

	*idx = 0;
	*pinp = 0;
	if (a == NULL)
		return (NULL);
	/* Each instance's pin once, the best's kept. */
	for (i = 0, n = reg_app_size(a); i < n; i++) {
		in = reg_app_instance_at(a, i);
		if (in->status != STATUS_UP ||
		    (hide && reg_app_lease_expired(a, i, mono)))
			continue;
		pin = instance_leader_pin(in);
		if (best == NULL ||
		    instance_leader_before_pinned(in, pin, best, best_pin)) {
			best = in;
			best_pin = pin;
			*idx = i;
		}
	}
	*pinp = best_pin;
	return (best);
}

/* The leader of app: a visible UP instance ranked first, or NULL. */
const struct instance *
leader_find(struct registry *reg, const char *app, int64_t mono)
{
	return (leader_find_app(reg, registry_app_find(reg, app), mono));
}

/* The same for an app already found (NULL: none). */
const struct instance *
leader_find_app(struct registry *reg, struct reg_app *a, int64_t mono)
{
	size_t	i;
	int64_t	pin;

	return (leader_scan(reg, a, mono, &i, &pin));
}

/* Forget the tracked leader. */
void
leader_track_clear(struct leader_track *t)
{
	free(t->id);
	memset(t, 0, sizeof *t);
}

/*
 * An unchecked event of the app. Such an event changed no status, pin or
 * membership (the caller saw the app's generation unmoved), so only a
 * lease coming back can add a contender: a renewal of an expired lease,
 * or any event stamped before the latest one seen (the clock went back:
 * a lease expired then may be alive now, and a renewal may bring the
 * leader's deadline nearer than the one read).
 */
void
leader_track_note(struct leader_track *t, const struct registry_event *ev)
{
	if (ev->revived || ev->now.mono_ms < t->mono)
		t->valid = 0;
	else
		t->mono = ev->now.mono_ms;
}

/* Whether in, pinned at pin, ranks before the tracked leader. */
static int
leader_track_before(const struct leader_track *t, const struct instance *in,
    int64_t pin)
{
	struct instance	key;

	/* The rule reads only the id and registrationTimestamp, and the pin. */
	memset(&key, 0, sizeof key);
	key.instance_id = t->id;
	key.lease.registration_ts = t->reg_ts;
	return (instance_leader_before_pinned(in, pin, &key, t->pin));
}

/*
 * Whether the tracked leader still leads after ev without a rescan. The
 * leader is still a contender (its lease lives until the deadline, and
 * its own event, which may change anything about it, is not this one);
 * every other contender was one at the last update, since only events
 * revive leases and each was noted; so only ev's instance can overtake
 * it, by ranking before it.
 */
static int
leader_track_holds(const struct leader_track *t,
    const struct registry_event *ev, int hide)
{
	const struct instance	*in = ev->inst;

	if (!t->valid || hide != t->hide || ev->now.mono_ms < t->mono)
		return (0);
	if (t->id == NULL)	/* none: unless ev's instance is UP now */
		return (in == NULL || in->status != STATUS_UP);
	if (hide && ev->now.mono_ms > t->deadline)
		return (0);
	if (strcmp(t->id, ev->id) == 0)
		return (0);
	return (in == NULL || in->status != STATUS_UP ||
	    !leader_track_before(t, in, instance_leader_pin(in)));
}

/* Bring the track up to date after ev (leader.h). */
int
leader_track_update(struct leader_track *t, struct registry *reg,
    struct reg_app *a, const struct registry_event *ev,
    const struct instance **leader)
{
	const struct instance	*best;
	int			 hide = registry_lease_expiration_enabled(reg);
	int			 changed;
	size_t			 i;
	int64_t			 pin;

	*leader = NULL;
	if (leader_track_holds(t, ev, hide)) {
		t->mono = ev->now.mono_ms;
		return (0);
	}
	best = leader_scan(reg, a, ev->now.mono_ms, &i, &pin);
	changed = best == NULL ? t->id != NULL : t->id == NULL ||
	    strcmp(t->id, instance_id(best)) != 0;
	if (changed) {
		free(t->id);
		t->id = best != NULL ? xstrdup(instance_id(best)) : NULL;
	}
	if (best != NULL) {
		t->pin = pin;
		t->reg_ts = best->lease.registration_ts;
		t->deadline = reg_app_lease_deadline(a, i);
	}
	if (ev->now.mono_ms > t->mono)
		t->mono = ev->now.mono_ms;	/* the latest seen */
	t->hide = hide;
	t->valid = 1;
	*leader = best;
	return (changed);
}

/* First value of a query parameter. */
static const char *
leader_query(const struct evkeyvalq *q, const char *name)
{
	struct evkeyval	*e;

	TAILQ_FOREACH(e, q, next)
		if (strcmp(e->key, name) == 0)
			return (e->value);
	return (NULL);
}

/* The app of "apps/{app}/leader", decoded and upper case; NULL if not. */
static char *
leader_path_app(const char *rel)
{
	const char	*p, *e;
	char		*raw, *app;
	size_t		 len;

	if (strncmp(rel, "apps/", 5) != 0)
		return (NULL);
	p = rel + 5;
	if ((e = strchr(p, '/')) == NULL || strcmp(e, "/leader") != 0 ||
	    e == p)
		return (NULL);
	raw = xstrndup(p, (size_t)(e - p));
	app = evhttp_uridecode(raw, 0, &len);
	free(raw);
	if (app == NULL)
		return (NULL);
	if (strlen(app) != len) {
		free(app);
		return (NULL);
	}
	return (app);
}

/* Set the pin key of one instance to value (a metadata update). */
static enum registry_rc
leader_set_pin(struct registry *reg, const char *app, const char *id,
    const char *value, struct hk_time now)
{
	struct kvlist		 kv;
	enum registry_rc	 rc;

	memset(&kv, 0, sizeof kv);
	kvlist_set(&kv, LEADER_PIN_KEY, value);
	rc = registry_update_metadata(reg, app, id, &kv, now);
	kvlist_clear(&kv);
	return (rc);
}

/* Release every pin in app except keep's; the ids are copied first. */
static void
leader_release(struct registry *reg, const char *app, const char *keep,
    struct hk_time now)
{
	struct reg_app	*a = registry_app_find(reg, app);
	char		*ids[LEADER_MAX_PINS];
	size_t		 i, n = 0;

	if (a == NULL)
		return;
	for (i = 0; i < reg_app_size(a) && n < LEADER_MAX_PINS; i++) {
		const struct instance *in = reg_app_instance_at(a, i);

		if (kvlist_get(&in->metadata, LEADER_PIN_KEY) == NULL ||
		    *kvlist_get(&in->metadata, LEADER_PIN_KEY) == '\0')
			continue;
		if (keep != NULL && strcmp(instance_id(in), keep) == 0)
			continue;
		ids[n++] = xstrdup(instance_id(in));
	}
	for (i = 0; i < n; i++) {
		(void)leader_set_pin(reg, app, ids[i], "", now);
		free(ids[i]);
	}
}

/* Answer the leader instance like apps/{app}/{id}. */
static void
leader_reply(struct evhttp_request *req, const struct instance *in)
{
	struct buf	b;
	int		json = http_wants_json(req);

	buf_init(&b, 0);
	if (json)
		json_encode_instance_root(&b, in);
	else
		xml_encode_instance(&b, in, CODEC_FULL, 0);
	http_reply(req, 200, json ? "application/json" : "application/xml",
	    b.data, b.len);
	buf_free(&b);
}

/* apps/{app}/leader: GET answers it, PUT ?id= pins, DELETE releases. */
int
leader_http(struct registry *reg, const struct gate *gate,
    struct evhttp_request *req, const char *rel,
    const struct evkeyvalq *query, struct hk_time now)
{
	enum evhttp_cmd_type	 m = evhttp_request_get_command(req);
	const struct instance	*in;
	const char		*id;
	char			*app, stamp[32];

	if ((app = leader_path_app(rel)) == NULL)
		return (0);
	if (!instance_name_ok(app, INSTANCE_MAX_NAME)) {
		http_error(req, 400, "invalid application name");
		goto done;
	}
	str_upper(app);
	switch (m) {
	case EVHTTP_REQ_GET:
	case EVHTTP_REQ_HEAD:
		if (!gate_allow_read(gate, now.mono_ms)) {
			http_reply(req, 403, NULL, NULL, 0);
			break;
		}
		if ((in = leader_find(reg, app, now.mono_ms)) == NULL)
			http_error(req, 404, "no leader");
		else
			leader_reply(req, in);
		break;
	case EVHTTP_REQ_PUT:
		id = leader_query(query, "id");
		if (id == NULL || !instance_name_ok(id, INSTANCE_MAX_NAME)) {
			http_error(req, 400, "id must name an instance");
			break;
		}
		if (registry_get(reg, app, id, now.mono_ms) == NULL) {
			http_error(req, 404, "no such instance");
			break;
		}
		leader_release(reg, app, id, now);
		snprintf(stamp, sizeof stamp, "%" PRId64, now.wall_ms);
		if (leader_set_pin(reg, app, id, stamp, now) != REG_OK) {
			http_error(req, 409, "the instance cannot take the pin");
			break;
		}
		log_info("leader of %s pinned to %s", app, id);
		http_reply(req, 200, NULL, NULL, 0);
		break;
	case EVHTTP_REQ_DELETE:
		if (registry_app_find(reg, app) == NULL) {
			http_error(req, 404, "no such application");
			break;
		}
		leader_release(reg, app, NULL, now);
		log_info("leader pin of %s released", app);
		http_reply(req, 200, NULL, NULL, 0);
		break;
	default:
		http_error(req, 405, "method not allowed");
		break;
	}
done:
	free(app);
	return (1);
}
