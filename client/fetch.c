/*
 * fetch.c: the local copy of the registry (spec §7.5, §7.6): the cache
 * refresh task with its supervisor back-off, full and delta fetches, the
 * delta merged and reconciled by the apps hash code, the shuffle, and the
 * change and leader callbacks told after each fetch.
 */

#include <stddef.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/thread.h>

#include "buf.h"
#include "clock.h"
#include "config.h"
#include "hash.h"
#include "httputil.h"
#include "instance.h"
#include "json.h"
#include "log.h"
#include "tls.h"
#include "url.h"
#include "xmalloc.h"

#include "heureka.h"
#include "internal.h"

/* Bridge a model change to the user's callback. */
void
hk_change_bridge(enum action_type at, const struct instance *in, void *arg)
{
	struct heureka_client	*c = arg;
	struct heureka_instance	*hi;
	enum heureka_change	 kind;

	if (c->change_cb == NULL)
		return;
	kind = at == ACTION_ADDED ? HEUREKA_ADDED : at == ACTION_MODIFIED ?
	    HEUREKA_MODIFIED : HEUREKA_DELETED;
	hi = hk_instance_export(in);
	c->change_cb(c, kind, hi, c->change_arg);
	heureka_instance_free(hi);
}

/* The leader of one application of the local copy (the server's rule). */
struct instance *
hk_app_leader(const struct application *a)
{
	struct instance	*best = NULL;
	size_t		 i;

	for (i = 0; i < a->n; i++) {
		if (a->instances[i]->status == STATUS_UP && (best == NULL ||
		    instance_leader_before(a->instances[i], best)))
			best = a->instances[i];
	}
	return (best);
}

/* The stored "APP\0id" entry of app, or NULL. */
static char **
leader_slot(struct heureka_client *c, const char *app)
{
	size_t	i;

	for (i = 0; i < c->nleaders; i++)
		if (strcasecmp(c->leaders[i], app) == 0)
			return (&c->leaders[i]);
	return (NULL);
}

/*
 * After a fetch: tell the leader callback of every application whose
 * leader differs from the one last told (NULL: it has none any more).
 * O(apps^2) name matches per fetch, only with a callback set.
 */
void
hk_leaders_check(struct heureka_client *c)
{
	struct application	*a;
	struct instance		*in;
	struct heureka_instance	*hi;
	char			**slot, *e;
	size_t			 i, alen;

	if (c->leader_cb == NULL)
		return;
	for (i = 0; i < c->apps->n; i++) {
		a = c->apps->apps[i];
		in = hk_app_leader(a);
		slot = leader_slot(c, a->name);
		alen = strlen(a->name);
		if (in == NULL ? slot == NULL : slot != NULL &&
		    strcmp(*slot + alen + 1, instance_id(in)) == 0)
			continue;
		if (in == NULL) {
			free(*slot);
			*slot = c->leaders[--c->nleaders];
		} else {
			e = xmalloc(alen + strlen(instance_id(in)) + 2);
			memcpy(e, a->name, alen + 1);
			strcpy(e + alen + 1, instance_id(in));
			if (slot != NULL) {
				free(*slot);
				*slot = e;
			} else {
				c->leaders = xreallocarray(c->leaders,
				    c->nleaders + 1, sizeof *c->leaders);
				c->leaders[c->nleaders++] = e;
			}
		}
		hi = in != NULL ? hk_instance_export(in) : NULL;
		c->leader_cb(c, a->name, hi, c->leader_arg);
		heureka_instance_free(hi);
	}
	/* Applications gone from the copy: no leader. */
	for (i = 0; i < c->nleaders; ) {
		if (applications_find(c->apps, c->leaders[i]) != NULL) {
			i++;
			continue;
		}
		e = c->leaders[i];
		c->leaders[i] = c->leaders[--c->nleaders];
		c->leader_cb(c, e, NULL, c->leader_arg);
		free(e);
	}
}

/* Shuffle each application's instances (§7.6; lookups filter UP). */
static void
shuffle(struct heureka_client *c)
{
	struct application	*a;
	struct instance		*t;
	size_t			 i, j, k;

	for (i = 0; i < c->apps->n; i++) {
		a = c->apps->apps[i];
		for (j = a->n; j > 1; j--) {
			c->rnd ^= c->rnd << 13;
			c->rnd ^= c->rnd >> 7;
			c->rnd ^= c->rnd << 17;
			k = c->rnd % j;
			t = a->instances[j - 1];
			a->instances[j - 1] = a->instances[k];
			a->instances[k] = t;
		}
	}
}

/* A fetch cycle ended: reset the back-off and schedule the next one. */
static void
refresh_finish(struct heureka_client *c)
{
	hk_disarm(c, c->t_rf_timeout);
	hk_arm(c, c->t_refresh, hk_backoff_done(&c->rf_bo));
}

/* GET apps/ answered: replace the local copy. */
static void
full_done(int status, const char *body, size_t len, void *arg)
{
	struct heureka_client	*c = arg;
	struct applications	*as, *old;
	char			*cause = NULL, sb[HK_STATUS_MAX];

	if (status != 200) {
		log_warnx("heureka: full registry fetch failed: %s",
		    hk_status_str(status, sb, sizeof sb));
		goto out;
	}
	if ((as = json_decode_applications(body, len, c->sc.now(c->sc.ctx),
	    &cause)) == NULL) {
		log_warnx("heureka: bad registry from server: %s", cause);
		free(cause);
		goto out;
	}
	old = c->apps;
	c->apps = as;
	shuffle(c);
	c->fetched = 1;
	hk_diff(old, as, hk_change_bridge, c);
	applications_free(old);
	hk_leaders_check(c);
	/*
	 * Detect the watch now, and again at a later full fetch (an empty
	 * copy makes every fetch full: not more than every 5 minutes).
	 */
	if (c->w_handle == NULL && !c->w_wait && (!c->w_none ||
	    c->sc.now(c->sc.ctx) - c->w_none_at >= HK_WATCH_REDETECT_MS))
		hk_watch_open(c);
out:
	refresh_finish(c);
}

/* GET apps/delta answered: merge, then reconcile by hash code. */
static void
delta_done(int status, const char *body, size_t len, void *arg)
{
	struct heureka_client	*c = arg;
	struct applications	*d;
	char			*cause = NULL, *hash;
	int			 mismatch;

	if (status != 200) {
		log_debug("%s: delta answered %d, full fetch", __func__,
		    status);
		hk_fetch_start(c, 1);
		return;
	}
	if ((d = json_decode_applications(body, len, c->sc.now(c->sc.ctx),
	    &cause)) == NULL) {
		log_warnx("heureka: bad delta from server: %s", cause);
		free(cause);
		hk_fetch_start(c, 1);
		return;
	}
	hk_merge_delta(c->apps, d, hk_change_bridge, c);
	c->apps->versions_delta = d->versions_delta;
	hk_leaders_check(c);
	shuffle(c);
	hash = applications_hashcode(c->apps);
	mismatch = d->apps_hashcode != NULL &&
	    strcmp(hash, d->apps_hashcode) != 0;
	if (mismatch)
		log_debug("%s: hash %s, server %s: full fetch", __func__,
		    hash, d->apps_hashcode);
	free(hash);
	applications_free(d);
	if (mismatch && !c->stopping)
		hk_fetch_start(c, 1);
	else
		refresh_finish(c);
}

/* fetchRegistry(forceFull): full when asked, disabled delta or empty copy. */
void
hk_fetch_start(struct heureka_client *c, int force_full)
{
	if (c->stopping)
		return;
	if (force_full || c->disable_delta || !c->fetched ||
	    c->apps->n == 0 || c->apps->versions_delta == -1)
		hk_op_start(c, &c->rf_op, HK_REQ_FULL, "GET", "apps/", NULL,
		    full_done, c);
	else
		hk_op_start(c, &c->rf_op, HK_REQ_DELTA, "GET", "apps/delta",
		    NULL, delta_done, c);
}

/* Cache refresh timer. */
void
hk_refresh_cb(void *arg)
{
	struct heureka_client	*c = arg;

	LOCK(c);
	if (!c->stopping && c->rf_op == NULL) {
		hk_arm(c, c->t_rf_timeout, c->rf_bo.base_ms);
		hk_fetch_start(c, 0);
	}
	UNLOCK(c);
}

/* The fetch took longer than its interval: back off. */
void
hk_rf_timeout_cb(void *arg)
{
	struct heureka_client	*c = arg;

	LOCK(c);
	hk_op_cancel(c, c->rf_op);
	hk_arm(c, c->t_refresh, hk_backoff_timeout(&c->rf_bo));
	UNLOCK(c);
}
