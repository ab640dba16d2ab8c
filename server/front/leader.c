/*
 * leader.c: the leader rule and its REST face (docs/api.md, "Watch and
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
#include "http.h"
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
 * The visible UP instances of a ranked first, best first: up to k of them
 * (their indexes in idx, pins in pins); returns how many, and in *all how
 * many contend. The one scan, for leader_find_app (k = 1) and the track.
 */
static size_t
leader_scan(struct registry *reg, struct reg_app *a, int64_t mono,
    size_t k, size_t *idx, int64_t *pins, size_t *all)
{
	const struct instance	*in;
	int			 hide = registry_lease_expiration_enabled(reg);
	int64_t			 pin;
	size_t			 i, j, n, got = 0;

	*all = 0;
	if (a == NULL)
		return (0);
	/* Each instance's pin once; most rank after the k-th: one compare. */
	for (i = 0, n = reg_app_size(a); i < n; i++) {
		in = reg_app_instance_at(a, i);
		if (in->status != STATUS_UP ||
		    (hide && reg_app_lease_expired(a, i, mono)))
			continue;
		(*all)++;
		pin = instance_leader_pin(in);
		if (got == k && !instance_leader_before_pinned(in, pin,
		    reg_app_instance_at(a, idx[k - 1]), pins[k - 1]))
			continue;
		if (got < k)
			got++;
		for (j = got - 1; j > 0 && instance_leader_before_pinned(in,
		    pin, reg_app_instance_at(a, idx[j - 1]), pins[j - 1]);
		    j--) {
			idx[j] = idx[j - 1];
			pins[j] = pins[j - 1];
		}
		idx[j] = i;
		pins[j] = pin;
	}
	return (got);
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
	size_t	i, all;
	int64_t	pin;

	if (leader_scan(reg, a, mono, 1, &i, &pin, &all) == 0)
		return (NULL);
	return (reg_app_instance_at(a, i));
}

/* Forget the tracked leader and contenders. */
void
leader_track_clear(struct leader_track *t)
{
	size_t	i;

	for (i = 0; i < t->n; i++)
		free(t->top[i].id);
	free(t->top);
	free(t->id);
	memset(t, 0, sizeof *t);
}

/*
 * An unchecked event of the app. Such an event changed no status, pin or
 * membership (the caller saw the app's generation unmoved), so only a
 * lease coming back can add a contender: a renewal of an expired lease,
 * or any event stamped before the latest one seen (the clock went back:
 * a lease expired then may be alive now, and a renewal may bring a
 * deadline nearer than the one read).
 */
void
leader_track_note(struct leader_track *t, const struct registry_event *ev)
{
	if (ev->revived || ev->now.mono_ms < t->mono)
		t->valid = 0;
	if (ev->now.mono_ms > t->mono)
		t->mono = ev->now.mono_ms;	/* the latest seen */
}

/* Whether in, pinned at pin, ranks before the kept contender r. */
static int
leader_rank_before(const struct instance *in, int64_t pin,
    const struct leader_rank *r, struct instance *key)
{
	/* The rule reads only the id and registrationTimestamp, and the pin. */
	key->instance_id = r->id;
	key->lease.registration_ts = r->reg_ts;
	return (instance_leader_before_pinned(in, pin, key, r->pin));
}

/* Drop the i-th kept contender. */
static void
leader_track_drop(struct leader_track *t, size_t i)
{
	free(t->top[i].id);
	memmove(&t->top[i], &t->top[i + 1], (t->n - i - 1) * sizeof *t->top);
	t->n--;
}

/*
 * Keep in (pinned at pin) at position i; past LEADER_TRACK_TOP the last
 * goes (in itself, if it ranks last), and the kept ones no longer hold
 * every contender.
 */
static void
leader_track_insert(struct leader_track *t, size_t i,
    const struct instance *in, int64_t pin, int64_t deadline)
{
	if (t->n == LEADER_TRACK_TOP) {
		t->complete = 0;
		if (i == t->n)
			return;
		leader_track_drop(t, t->n - 1);
	}
	if (t->n == t->cap) {
		t->cap = t->cap == 0 ? 1 : t->cap * 2 < LEADER_TRACK_TOP ?
		    t->cap * 2 : LEADER_TRACK_TOP;
		t->top = xreallocarray(t->top, t->cap, sizeof *t->top);
	}
	memmove(&t->top[i + 1], &t->top[i], (t->n - i) * sizeof *t->top);
	t->top[i].id = xstrdup(instance_id(in));
	t->top[i].pin = pin;
	t->top[i].reg_ts = in->lease.registration_ts;
	t->top[i].deadline = deadline;
	t->n++;
}

/* Rank the app afresh: its best contenders with their deadlines. */
static void
leader_track_scan(struct leader_track *t, struct registry *reg,
    struct reg_app *a, int64_t mono)
{
	size_t	idx[LEADER_TRACK_TOP], i, n, all;
	int64_t	pins[LEADER_TRACK_TOP];

	while (t->n > 0)
		leader_track_drop(t, t->n - 1);
	n = leader_scan(reg, a, mono, LEADER_TRACK_TOP, idx, pins, &all);
	for (i = 0; i < n; i++)
		leader_track_insert(t, i, reg_app_instance_at(a, idx[i]),
		    pins[i], reg_app_lease_deadline(a, idx[i]));
	t->complete = all == n;
}

/*
 * Apply ev to the kept contenders; 0 when they cannot name the leader
 * (rank afresh). The invariant: every contender not kept ranks after
 * every kept one (none is left out when complete), and a kept one's
 * deadline is no later than its lease's. ev's instance may have changed
 * in any way, so it is taken out and put back by its rank now; an event
 * carrying the instance has just renewed its lease, so it contends while
 * UP. No other instance gained (only events and revivals, which were
 * noted, do that), and losses do not matter unless the first kept one is
 * lost: its lease past the deadline read is the one to look at again.
 */
static int
leader_track_apply(struct leader_track *t, const struct registry_event *ev,
    int hide)
{
	const struct instance	*in = ev->inst;
	struct instance		 key;
	int64_t			 pin, mono = ev->now.mono_ms;
	size_t			 i;

	if (!t->valid || hide != t->hide || mono < t->mono)
		return (0);
	for (i = 0; i < t->n; i++)
		if (strcmp(t->top[i].id, ev->id) == 0) {
			leader_track_drop(t, i);
			break;
		}
	if (in != NULL && in->status == STATUS_UP) {
		pin = instance_leader_pin(in);
		memset(&key, 0, sizeof key);
		/* Most rank after the last kept one: one compare. */
		if (t->complete || (t->n > 0 && leader_rank_before(in, pin,
		    &t->top[t->n - 1], &key))) {
			for (i = 0; i < t->n && !leader_rank_before(in, pin,
			    &t->top[i], &key); i++)
				;
			leader_track_insert(t, i, in, pin, mono);
		}
	}
	if (t->n == 0)
		return (t->complete);
	return (!hide || mono <= t->top[0].deadline);
}

/* Bring the track up to date after ev (leader.h). */
int
leader_track_update(struct leader_track *t, struct registry *reg,
    struct reg_app *a, const struct registry_event *ev)
{
	int		 hide = registry_lease_expiration_enabled(reg);
	const char	*id;
	int		 changed;

	if (a == NULL || !leader_track_apply(t, ev, hide))
		leader_track_scan(t, reg, a, ev->now.mono_ms);
	id = t->n > 0 ? t->top[0].id : NULL;
	changed = id == NULL ? t->id != NULL : t->id == NULL ||
	    strcmp(t->id, id) != 0;
	if (changed) {
		free(t->id);
		t->id = id != NULL ? xstrdup(id) : NULL;
	}
	if (ev->now.mono_ms > t->mono)
		t->mono = ev->now.mono_ms;	/* the latest seen */
	t->hide = hide;
	t->valid = 1;
	return (changed);
}

/* The tracked leader's instance after the update for ev (leader.h). */
const struct instance *
leader_track_leader(const struct leader_track *t, struct registry *reg,
    const struct registry_event *ev)
{
	if (t->id == NULL)
		return (NULL);
	if (ev->inst != NULL && strcmp(ev->id, t->id) == 0)
		return (ev->inst);
	return (registry_get(reg, ev->app, t->id, ev->now.mono_ms));
}

/* First value of a query parameter. */
static const char *
leader_query(const struct hquery *q, const char *name)
{

	return (hquery_get(q, name));
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
leader_reply(struct hreq *req, const struct instance *in)
{
	struct buf	b;
	int		json = hreq_wants_json(req);

	buf_init(&b, 0);
	if (json)
		json_encode_instance_root(&b, in);
	else
		xml_encode_instance(&b, in, CODEC_FULL, 0);
	hreq_reply(req, 200, json ? "application/json" : "application/xml",
	    b.data, b.len);
	buf_free(&b);
}

/* apps/{app}/leader: GET answers it, PUT ?id= pins, DELETE releases. */
void
leader_http(struct registry *reg, const struct gate *gate,
    struct hreq *req, const char *name,
    const struct hquery *query, struct hk_time now)
{
	enum evhttp_cmd_type	 m = hreq_method(req);
	const struct instance	*in;
	const char		*id;
	char			*app, stamp[32];

	app = xstrdup(name);
	if (!instance_name_ok(app, INSTANCE_MAX_NAME)) {
		hreq_error(req, 400, "invalid application name");
		goto done;
	}
	str_upper(app);
	switch (m) {
	case EVHTTP_REQ_GET:
	case EVHTTP_REQ_HEAD:
		if (!gate_allow_read(gate, now.mono_ms)) {
			hreq_reply(req, 403, NULL, NULL, 0);
			break;
		}
		if ((in = leader_find(reg, app, now.mono_ms)) == NULL)
			hreq_error(req, 404, "no leader");
		else
			leader_reply(req, in);
		break;
	case EVHTTP_REQ_PUT:
		id = leader_query(query, "id");
		if (id == NULL || !instance_name_ok(id, INSTANCE_MAX_NAME)) {
			hreq_error(req, 400, "id must name an instance");
			break;
		}
		if (registry_get(reg, app, id, now.mono_ms) == NULL) {
			hreq_error(req, 404, "no such instance");
			break;
		}
		leader_release(reg, app, id, now);
		snprintf(stamp, sizeof stamp, "%" PRId64, now.wall_ms);
		if (leader_set_pin(reg, app, id, stamp, now) != REG_OK) {
			hreq_error(req, 409, "the instance cannot take the pin");
			break;
		}
		log_info("leader of %s pinned to %s", app, id);
		hreq_reply(req, 200, NULL, NULL, 0);
		break;
	case EVHTTP_REQ_DELETE:
		if (registry_app_find(reg, app) == NULL) {
			hreq_error(req, 404, "no such application");
			break;
		}
		leader_release(reg, app, NULL, now);
		log_info("leader pin of %s released", app);
		hreq_reply(req, 200, NULL, NULL, 0);
		break;
	default:
		hreq_error(req, 405, "method not allowed");
		break;
	}
done:
	free(app);
}
