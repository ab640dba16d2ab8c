/*
 * tests/unit/check_registry.c: the lease table, driven by hand-picked
 * times (no sleeps): register/renew/cancel, lastDirty conflicts,
 * overrides and the status rule chain, metadata, deltas, hash codes,
 * VIPs, expiry, eviction and self-preservation, tombstones, observers,
 * bounds, which copy wins (tombstones, origin timestamps, override repair,
 * clock steps, future timestamps), and a 100k-instance consistency run
 * (REGISTRY_TEST_N shrinks it, e.g. under valgrind).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <check.h>

#include "fixture.h"
#include "hash.h"
#include "instance.h"
#include "registry.h"
#include "registry_int.h"	/* registry_check's test breaks it */
#include "testutil.h"

#define T0	1700000000000LL

static struct registry_conf	 cf;

/* Defaults, as heurekad would pass them. */
static void
setup(void)
{
	registry_conf_defaults(&cf);
}

/* A registrable instance. */
static struct instance *
mkinst(const char *app, const char *id, enum instance_status st,
    int64_t dirty)
{
	return (fixture_instance(app, id, st, dirty));
}

/* Register n UP instances APP/i<k> at now; fail the test if refused. */
static void
fill_registry(struct registry *reg, int n, int64_t now)
{
	char	id[32];
	int	i;

	for (i = 0; i < n; i++) {
		snprintf(id, sizeof id, "i%d", i);
		ck_assert_int_eq(registry_register(reg,
		    mkinst("APP", id, STATUS_UP, 1), 0, TM(now)), REG_OK);
	}
}

/* The hash code as a comparable string (freed here). */
static int
hash_is(struct registry *reg, const char *want)
{
	char	*h = registry_hashcode(reg);
	int	 ok = strcmp(h, want) == 0;

	if (!ok)
		fprintf(stderr, "hashcode %s, want %s\n", h, want);
	free(h);
	return (ok);
}

/* Find an instance by id in a snapshot, or NULL. */
static const struct instance *
snap_find(const struct applications *as, const char *app, const char *id)
{
	struct application	*a = applications_find(as, app);

	return (a == NULL ? NULL : application_find(a, id));
}

START_TEST(test_register_renew_cancel)
{
	struct registry		*reg = registry_new(&cf, T0);
	const struct instance	*in;

	ck_assert_int_eq(registry_register(reg, mkinst("app", "i1", STATUS_UP,
	    5), 0, TM(T0)), REG_OK);
	ck_assert_uint_eq(registry_size(reg), 1);
	ck_assert_uint_eq(registry_app_count(reg), 1);
	ck_assert_str_eq(reg_app_name(registry_app_at(reg, 0)), "APP");

	in = registry_get(reg, "APP", "i1", T0);
	ck_assert_ptr_nonnull(in);
	ck_assert_ptr_eq(registry_get(reg, "app", "i1", T0), in);
	ck_assert_int_eq(in->status, STATUS_UP);
	ck_assert_int_eq(in->action_type, ACTION_ADDED);
	ck_assert_int_eq(in->last_updated_ts, T0);
	ck_assert(in->has_lease);
	ck_assert_int_eq(in->lease.registration_ts, T0);
	ck_assert_int_eq(in->lease.last_renewal_ts, T0);
	ck_assert_int_eq(in->lease.service_up_ts, T0);
	ck_assert_int_eq(in->lease.eviction_ts, 0);
	ck_assert_int_eq(in->lease.duration_secs, 90);
	ck_assert_int_eq(in->lease.renewal_interval_secs, 30);
	ck_assert_int_eq(in->is_coordinating, 0);

	ck_assert_int_eq(registry_renew(reg, "APP", "i1", -1, STATUS_UNKNOWN,
	    0, TM(T0 + 30000), NULL), REG_OK);
	/* Shown as Eureka does: last renewal + duration. */
	ck_assert_int_eq(in->lease.last_renewal_ts, T0 + 30000 + 90000);
	ck_assert_int_eq(in->lease.registration_ts, T0);

	ck_assert_int_eq(registry_renew(reg, "APP", "nope", -1,
	    STATUS_UNKNOWN, 0, TM(T0), NULL), REG_NOT_FOUND);
	ck_assert_int_eq(registry_renew(reg, "OTHER", "i1", -1,
	    STATUS_UNKNOWN, 0, TM(T0), NULL), REG_NOT_FOUND);
	ck_assert_int_eq(registry_cancel(reg, "APP", "i1", 0, TM(T0 + 40000),
	    -1),
	    REG_OK);
	ck_assert_int_eq(registry_cancel(reg, "APP", "i1", 0, TM(T0 + 40000),
	    -1),
	    REG_NOT_FOUND);
	ck_assert_int_eq(registry_renew(reg, "APP", "i1", -1, STATUS_UNKNOWN,
	    0, TM(T0 + 40000), NULL), REG_NOT_FOUND);
	ck_assert_ptr_null(registry_get(reg, "APP", "i1", T0 + 40000));
	ck_assert_uint_eq(registry_size(reg), 0);
	ck_assert_uint_eq(registry_app_count(reg), 0);
	ck_assert_ptr_null(registry_app_find(reg, "APP"));
	ck_assert_int_eq(registry_status_update(reg, "APP", "i1",
	    STATUS_DOWN, 0, 0, TM(T0), -1), REG_NOT_FOUND);
	ck_assert_int_eq(registry_delete_override(reg, "APP", "i1",
	    STATUS_UNKNOWN, 0, 0, TM(T0), -1), REG_NOT_FOUND);

	/* Bad input is refused, not crashed on. */
	ck_assert_int_eq(registry_register(reg, mkinst("A/B", "x", STATUS_UP,
	    0), 0, TM(T0)), REG_INVALID);
	ck_assert_int_eq(registry_register(reg, NULL, 0, TM(T0)), REG_INVALID);
	ck_assert_int_eq(registry_cancel(reg, NULL, "x", 0, TM(T0), -1),
	    REG_INVALID);
	registry_free(reg);
}
END_TEST

/*
 * heureka: a replicated registration keeps the registrationTimestamp its
 * origin stamped, a client's own registration is stamped here, and an
 * event says whether the lease is new (the watch's ADDED vs MODIFIED).
 */
struct created_log {
	int	n;
	int	created[4];
};

/* Observer: record the created flag of register events. */
static void
created_cb(const struct registry_event *ev, void *arg)
{
	struct created_log	*c = arg;

	if (ev->type == REG_EV_REGISTER && c->n < 4)
		c->created[c->n++] = ev->created;
}

START_TEST(test_registration_ts_origin)
{
	struct registry		*reg = registry_new(&cf, T0);
	struct instance		*in;
	const struct instance	*got;
	struct created_log	 c = { 0 };

	registry_add_observer(reg, created_cb, &c);
	in = mkinst("APP", "i1", STATUS_UP, 100);
	in->lease.registration_ts = T0 - 7000;		/* the origin's */
	ck_assert_int_eq(registry_register(reg, in, 1, TM(T0)), REG_OK);
	got = registry_get(reg, "APP", "i1", T0);
	ck_assert_int_eq(got->lease.registration_ts, T0 - 7000);
	/* A newer replicated copy carries the origin's stamp again. */
	in = mkinst("APP", "i1", STATUS_UP, 200);
	in->lease.registration_ts = T0 - 6000;
	ck_assert_int_eq(registry_register(reg, in, 1, TM(T0 + 10)), REG_OK);
	got = registry_get(reg, "APP", "i1", T0 + 10);
	ck_assert_int_eq(got->lease.registration_ts, T0 - 6000);
	/* The client's own registration is stamped here. */
	in = mkinst("APP", "i2", STATUS_UP, 100);
	in->lease.registration_ts = T0 - 9000;
	ck_assert_int_eq(registry_register(reg, in, 0, TM(T0 + 20)), REG_OK);
	got = registry_get(reg, "APP", "i2", T0 + 20);
	ck_assert_int_eq(got->lease.registration_ts, T0 + 20);
	ck_assert_int_eq(c.n, 3);
	ck_assert_int_eq(c.created[0], 1);
	ck_assert_int_eq(c.created[1], 0);
	ck_assert_int_eq(c.created[2], 1);
	registry_free(reg);
}
END_TEST

START_TEST(test_reregister_older_dirty)
{
	struct registry		*reg = registry_new(&cf, T0);
	struct instance		*in;
	const struct instance	*got;
	struct applications	*d;

	in = mkinst("APP", "i1", STATUS_UP, 200);
	kvlist_set(&in->metadata, "k", "v1");
	registry_register(reg, in, 0, TM(T0));
	registry_purge_deltas(reg, T0 + 200000);
	ck_assert_uint_eq(registry_delta_size(reg), 0);

	in = mkinst("APP", "i1", STATUS_UP, 100);
	kvlist_set(&in->metadata, "k", "v2");
	ck_assert_int_eq(registry_register(reg, in, 1, TM(T0 + 5000)), REG_OK);
	got = registry_get(reg, "APP", "i1", T0 + 5000);
	ck_assert_str_eq(kvlist_get(&got->metadata, "k"), "v1");
	ck_assert_int_eq(got->last_dirty_ts, 200);
	/*
	 * A fresh lease, serviceUp copied; registrationTimestamp stays
	 * the one of the copy kept (the leader rule orders by it).
	 */
	ck_assert_int_eq(got->lease.registration_ts, T0);
	ck_assert_int_eq(got->lease.service_up_ts, T0);
	ck_assert_uint_eq(registry_size(reg), 1);

	d = registry_delta(reg, T0 + 5000);
	ck_assert_uint_eq(d->n, 1);
	ck_assert_int_eq(d->apps[0]->instances[0]->action_type, ACTION_ADDED);
	applications_free(d);

	/* Equal or newer: the incoming copy replaces the stored one. */
	in = mkinst("APP", "i1", STATUS_UP, 200);
	kvlist_set(&in->metadata, "k", "v3");
	registry_register(reg, in, 0, TM(T0 + 6000));
	got = registry_get(reg, "APP", "i1", T0 + 6000);
	ck_assert_str_eq(kvlist_get(&got->metadata, "k"), "v3");
	registry_free(reg);
}
END_TEST

START_TEST(test_renew_dirty_timestamps)
{
	struct registry		*reg = registry_new(&cf, T0);
	const struct instance	*conflict = NULL, *stored;

	registry_register(reg, mkinst("APP", "i1", STATUS_UP, 100), 0, TM(T0));
	stored = registry_get(reg, "APP", "i1", T0);

	ck_assert_int_eq(registry_renew(reg, "APP", "i1", 100, STATUS_UNKNOWN,
	    1, TM(T0 + 1000), &conflict), REG_OK);
	ck_assert_ptr_null(conflict);
	ck_assert_int_eq(registry_renew(reg, "APP", "i1", 200, STATUS_UNKNOWN,
	    0, TM(T0 + 2000), &conflict), REG_NOT_FOUND);
	/* The lease was renewed before the comparison. */
	ck_assert_int_eq(stored->lease.last_renewal_ts, T0 + 2000 + 90000);
	ck_assert_int_eq(registry_renew(reg, "APP", "i1", 200, STATUS_UNKNOWN,
	    1, TM(T0 + 2000), &conflict), REG_NOT_FOUND);
	ck_assert_int_eq(registry_renew(reg, "APP", "i1", 50, STATUS_UNKNOWN,
	    1, TM(T0 + 3000), &conflict), REG_CONFLICT);
	ck_assert_ptr_eq(conflict, stored);
	ck_assert_int_eq(registry_renew(reg, "APP", "i1", 50, STATUS_UNKNOWN,
	    0, TM(T0 + 3000), &conflict), REG_OK);
	ck_assert_ptr_null(conflict);

	/* Newer + replicated + override: the override is stored. */
	ck_assert_int_eq(registry_override(reg, "i1", T0), STATUS_UNKNOWN);
	ck_assert_int_eq(registry_renew(reg, "APP", "i1", 300,
	    STATUS_OUT_OF_SERVICE, 1, TM(T0 + 4000), NULL), REG_NOT_FOUND);
	ck_assert_int_eq(registry_override(reg, "i1", T0 + 4000),
	    STATUS_OUT_OF_SERVICE);
	ck_assert_int_eq(stored->overridden_status, STATUS_OUT_OF_SERVICE);

	/* Not compared when sync_when_timestamp_differs is off. */
	cf.sync_when_timestamp_differs = 0;
	registry_free(reg);
	reg = registry_new(&cf, T0);
	registry_register(reg, mkinst("APP", "i1", STATUS_UP, 100), 0, TM(T0));
	ck_assert_int_eq(registry_renew(reg, "APP", "i1", 200, STATUS_UNKNOWN,
	    1, TM(T0 + 1000), NULL), REG_OK);
	registry_free(reg);
}
END_TEST

START_TEST(test_override_lifecycle)
{
	struct registry		*reg = registry_new(&cf, T0);
	const struct instance	*in;
	struct applications	*d;
	uint64_t		 gen;

	registry_register(reg, mkinst("APP", "i1", STATUS_UP, 10), 0, TM(T0));
	in = registry_get(reg, "APP", "i1", T0);

	/* Equal to the current status: OK, but no override, no change. */
	gen = registry_gen(reg);
	ck_assert_int_eq(registry_status_update(reg, "APP", "i1", STATUS_UP,
	    0, 0, TM(T0 + 1), -1), REG_OK);
	ck_assert_int_eq(registry_override(reg, "i1", T0 + 1), STATUS_UNKNOWN);
	ck_assert_uint_eq(registry_gen(reg), gen);

	ck_assert_int_eq(registry_status_update(reg, "APP", "i1",
	    STATUS_OUT_OF_SERVICE, 50, 0, TM(T0 + 1000), -1), REG_OK);
	ck_assert_int_eq(in->status, STATUS_OUT_OF_SERVICE);
	ck_assert_int_eq(in->overridden_status, STATUS_OUT_OF_SERVICE);
	ck_assert_int_eq(in->action_type, ACTION_MODIFIED);
	ck_assert_int_eq(in->last_dirty_ts, 50);
	ck_assert_int_eq(in->last_updated_ts, T0 + 1000);
	ck_assert_int_eq(registry_override(reg, "i1", T0 + 1000),
	    STATUS_OUT_OF_SERVICE);
	ck_assert_uint_gt(registry_gen(reg), gen);
	ck_assert(hash_is(reg, "OUT_OF_SERVICE_1_"));

	/* Renew keeps it. */
	ck_assert_int_eq(registry_renew(reg, "APP", "i1", -1, STATUS_UNKNOWN,
	    0, TM(T0 + 2000), NULL), REG_OK);
	ck_assert_int_eq(in->status, STATUS_OUT_OF_SERVICE);

	/* The client re-registers UP: the override still wins. */
	registry_register(reg, mkinst("APP", "i1", STATUS_UP, 60), 0,
	    TM(T0 + 3000));
	in = registry_get(reg, "APP", "i1", T0 + 3000);
	ck_assert_int_eq(in->status, STATUS_OUT_OF_SERVICE);
	ck_assert_int_eq(in->overridden_status, STATUS_OUT_OF_SERVICE);

	/* Deleting without a value leaves UNKNOWN; the next renew is 404. */
	ck_assert_int_eq(registry_delete_override(reg, "APP", "i1",
	    STATUS_UNKNOWN, 0, 0, TM(T0 + 4000), -1), REG_OK);
	ck_assert_int_eq(in->status, STATUS_UNKNOWN);
	ck_assert_int_eq(in->overridden_status, STATUS_UNKNOWN);
	ck_assert_int_eq(in->action_type, ACTION_MODIFIED);
	ck_assert_int_eq(registry_override(reg, "i1", T0 + 4000),
	    STATUS_UNKNOWN);
	ck_assert(hash_is(reg, "UNKNOWN_1_"));
	d = registry_delta(reg, T0 + 4000);
	ck_assert_int_eq(d->apps[0]->instances[0]->action_type,
	    ACTION_MODIFIED);
	applications_free(d);
	ck_assert_int_eq(registry_renew(reg, "APP", "i1", -1, STATUS_UNKNOWN,
	    0, TM(T0 + 5000), NULL), REG_NOT_FOUND);
	ck_assert_uint_eq(registry_stats(reg)->renewals_not_found, 1);

	/* Delete with no override present: OK, nothing changes. */
	gen = registry_gen(reg);
	ck_assert_int_eq(registry_delete_override(reg, "APP", "i1",
	    STATUS_UP, 0, 0, TM(T0 + 6000), -1), REG_OK);
	ck_assert_int_eq(in->status, STATUS_UNKNOWN);
	ck_assert_uint_eq(registry_gen(reg), gen);

	/* Re-registering UP fixes it. */
	registry_register(reg, mkinst("APP", "i1", STATUS_UP, 70), 0,
	    TM(T0 + 7000));
	ck_assert(hash_is(reg, "UP_1_"));
	ck_assert_int_eq(registry_renew(reg, "APP", "i1", -1, STATUS_UNKNOWN,
	    0, TM(T0 + 8000), NULL), REG_OK);
	registry_free(reg);
}
END_TEST

START_TEST(test_override_from_peer_and_register)
{
	struct registry		*reg = registry_new(&cf, T0);
	struct instance		*in;
	const struct instance	*got;

	/* A registrant carrying an override stores it (not yet in the map). */
	in = mkinst("APP", "i1", STATUS_UP, 10);
	in->overridden_status = STATUS_OUT_OF_SERVICE;
	registry_register(reg, in, 1, TM(T0));
	got = registry_get(reg, "APP", "i1", T0);
	ck_assert_int_eq(got->status, STATUS_OUT_OF_SERVICE);
	ck_assert_int_eq(registry_override(reg, "i1", T0),
	    STATUS_OUT_OF_SERVICE);

	/* DOWN from the instance is trusted over the override (rule 1). */
	registry_register(reg, mkinst("APP", "i1", STATUS_DOWN, 20), 0,
	    TM(T0 + 1));
	got = registry_get(reg, "APP", "i1", T0 + 1);
	ck_assert_int_eq(got->status, STATUS_DOWN);

	/* A peer override then a heartbeat: silent rewrite, gen bumped. */
	registry_register(reg, mkinst("APP", "i2", STATUS_UP, 10), 0, TM(T0));
	registry_set_override(reg, "i2", STATUS_DOWN, T0);
	got = registry_get(reg, "APP", "i2", T0);
	ck_assert_int_eq(got->overridden_status, STATUS_DOWN);
	ck_assert_int_eq(got->status, STATUS_UP);
	ck_assert_int_eq(registry_renew(reg, "APP", "i2", -1, STATUS_UNKNOWN,
	    0, TM(T0 + 10), NULL), REG_OK);
	ck_assert_int_eq(got->status, STATUS_DOWN);
	ck_assert(hash_is(reg, "DOWN_2_"));

	/* Cancel removes the override for the id. */
	registry_cancel(reg, "APP", "i2", 0, TM(T0 + 20), -1);
	ck_assert_int_eq(registry_override(reg, "i2", T0 + 20),
	    STATUS_UNKNOWN);
	registry_free(reg);
}
END_TEST

/* Override map collector for registry_foreach_override. */
static void
count_override_cb(const char *id, enum instance_status st, void *arg)
{
	(void)id;
	(void)st;
	(*(int *)arg)++;
}

START_TEST(test_override_ttl)
{
	struct registry	*reg = registry_new(&cf, T0);
	int		 n = 0;

	registry_set_override(reg, "x", STATUS_OUT_OF_SERVICE, T0);
	registry_set_override(reg, "y", STATUS_DOWN, T0);
	registry_set_override(reg, "z", STATUS_UNKNOWN, T0);	/* ignored */
	registry_foreach_override(reg, count_override_cb, &n, T0);
	ck_assert_int_eq(n, 2);
	/* An access within the hour keeps x alive for another hour. */
	ck_assert_int_eq(registry_override(reg, "x", T0 + 3600000),
	    STATUS_OUT_OF_SERVICE);
	ck_assert_int_eq(registry_override(reg, "y", T0 + 3600001),
	    STATUS_UNKNOWN);
	ck_assert_int_eq(registry_override(reg, "x", T0 + 7200000),
	    STATUS_OUT_OF_SERVICE);
	n = 0;
	registry_foreach_override(reg, count_override_cb, &n, T0 + 7200000);
	ck_assert_int_eq(n, 1);
	registry_purge_deltas(reg, T0 + 7200000 + 3600001);
	n = 0;
	registry_foreach_override(reg, count_override_cb, &n, T0 + 7200000);
	ck_assert_int_eq(n, 0);
	registry_free(reg);
}
END_TEST

/* Observer log. */
struct evlog {
	int				n;
	enum registry_event_type	type[32];
	int				replicated[32];
	int				has_inst[32];
	enum instance_status		override[32];
	char				id[32][16];
};

/* Record each event. */
static void
log_cb(const struct registry_event *ev, void *arg)
{
	struct evlog	*lg = arg;

	if (lg->n >= 32)
		return;
	lg->type[lg->n] = ev->type;
	lg->replicated[lg->n] = ev->replicated;
	lg->has_inst[lg->n] = ev->inst != NULL;
	lg->override[lg->n] = ev->override;
	snprintf(lg->id[lg->n], sizeof lg->id[0], "%s", ev->id);
	lg->n++;
}

/* Observer: count events whose app_hash is not hash_str_upper(app). */
static void
app_hash_cb(const struct registry_event *ev, void *arg)
{
	int	*c = arg;

	if (ev->app_hash != hash_str_upper(ev->app))
		c[0]++;
	c[1]++;
}

/*
 * Every event carries its app's hash (the watch finds the app with it
 * instead of hashing the name again), including the cancel that drops
 * the app's last lease and the cancel of an unknown instance.
 */
START_TEST(test_event_app_hash)
{
	struct registry	*reg = registry_new(&cf, T0);
	int		 c[2] = { 0, 0 };

	registry_add_observer(reg, app_hash_cb, c);
	ck_assert_int_eq(registry_register(reg, mkinst("App", "i1", STATUS_UP,
	    10), 0, TM(T0)), REG_OK);
	ck_assert_int_eq(registry_renew(reg, "app", "i1", -1, STATUS_UNKNOWN,
	    0, TM(T0 + 1), NULL), REG_OK);
	ck_assert_int_eq(registry_status_update(reg, "APP", "i1",
	    STATUS_DOWN, 20, 0, TM(T0 + 2), -1), REG_OK);
	ck_assert_int_eq(registry_delete_override(reg, "aPP", "i1",
	    STATUS_UNKNOWN, 30, 0, TM(T0 + 3), -1), REG_OK);
	ck_assert_int_eq(registry_cancel(reg, "app", "i1", 0, TM(T0 + 4), -1),
	    REG_OK);
	ck_assert_ptr_null(registry_app_find(reg, "APP"));
	ck_assert_int_eq(registry_cancel(reg, "Gone", "x", 0, TM(T0 + 5), -1),
	    REG_NOT_FOUND);
	ck_assert_int_eq(c[1], 6);
	ck_assert_int_eq(c[0], 0);
	registry_free(reg);
}
END_TEST

/*
 * The app registered into last is remembered (its hash is not taken
 * again): a run into one app, another app between, and that app dropped
 * with its last lease and made again, each lands in the right app, and
 * the remembered one never outlives its app (ASan: no use after free).
 */
START_TEST(test_last_app_remembered)
{
	struct registry	*reg = registry_new(&cf, T0);
	struct reg_app	*a;
	int		 c[2] = { 0, 0 };

	registry_add_observer(reg, app_hash_cb, c);
	ck_assert_int_eq(registry_register(reg, mkinst("App", "i1", STATUS_UP,
	    10), 0, TM(T0)), REG_OK);
	ck_assert_int_eq(registry_register(reg, mkinst("app", "i2", STATUS_UP,
	    10), 0, TM(T0)), REG_OK);
	ck_assert_int_eq(registry_register(reg, mkinst("Other", "i1",
	    STATUS_UP, 10), 0, TM(T0)), REG_OK);
	ck_assert_int_eq(registry_register(reg, mkinst("APP", "i3", STATUS_UP,
	    10), 0, TM(T0)), REG_OK);
	ck_assert_uint_eq(registry_app_count(reg), 2);
	ck_assert_uint_eq(reg_app_size(registry_app_find(reg, "app")), 3);
	ck_assert_uint_eq(reg_app_size(registry_app_find(reg, "OTHER")), 1);
	ck_assert_ptr_nonnull(registry_get(reg, "aPp", "i3", T0));
	ck_assert_ptr_nonnull(registry_get(reg, "other", "i1", T0));
	ck_assert_ptr_nonnull(registry_find_id(reg, "i1", T0));
	/* APP goes with its last lease, then comes back. */
	ck_assert_int_eq(registry_cancel(reg, "APP", "i1", 0, TM(T0 + 1), -1),
	    REG_OK);
	ck_assert_int_eq(registry_cancel(reg, "APP", "i2", 0, TM(T0 + 1), -1),
	    REG_OK);
	ck_assert_int_eq(registry_cancel(reg, "APP", "i3", 0, TM(T0 + 1), -1),
	    REG_OK);
	ck_assert_ptr_null(registry_app_find(reg, "APP"));
	ck_assert_int_eq(registry_register(reg, mkinst("app", "i4", STATUS_UP,
	    10), 0, TM(T0 + 2)), REG_OK);
	ck_assert_ptr_nonnull(a = registry_app_find(reg, "APP"));
	ck_assert_uint_eq(reg_app_size(a), 1);
	ck_assert_uint_eq(reg_app_hash(a), hash_str_upper("app"));
	ck_assert_ptr_eq(reg_app_instance_at(a, 0),
	    registry_get(reg, "APP", "i4", T0 + 2));
	/* The cancelled ids left tombstones under the same key. */
	ck_assert_int_eq(registry_tombstone(reg, "app", "i2", T0 + 2), T0 + 1);
	ck_assert_int_eq(registry_register(reg, mkinst("APP", "i2", STATUS_UP,
	    T0), 1, TM(T0 + 3)), REG_STALE);
	ck_assert_uint_eq(registry_size(reg), 2);
	ck_assert_int_eq(c[0], 0);
	registry_free(reg);
}
END_TEST

START_TEST(test_metadata_update)
{
	struct registry		*reg = registry_new(&cf, T0);
	struct kvlist		 kv = { 0 };
	const struct instance	*in;
	struct applications	*d;
	struct evlog		 lg = { 0 };
	uint64_t		 gen, agen;
	char			 key[16];
	int			 i;

	registry_register(reg, mkinst("APP", "i1", STATUS_UP, 10), 0, TM(T0));
	registry_status_update(reg, "APP", "i1", STATUS_DOWN, 0, 0, TM(T0 + 1),
	    -1);
	registry_add_observer(reg, log_cb, &lg);
	gen = registry_gen(reg);
	agen = reg_app_gen(registry_app_find(reg, "APP"));
	kvlist_set(&kv, "zone", "a");
	kvlist_set(&kv, "ver", "2");
	ck_assert_int_eq(registry_update_metadata(reg, "APP", "i1", &kv,
	    TM(T0 + 1000)), REG_OK);
	in = registry_get(reg, "APP", "i1", T0 + 1000);
	ck_assert_str_eq(kvlist_get(&in->metadata, "zone"), "a");
	ck_assert_str_eq(kvlist_get(&in->metadata, "ver"), "2");
	ck_assert_int_eq(in->action_type, ACTION_ADDED);
	ck_assert_int_eq(in->last_dirty_ts, 10);
	ck_assert_int_eq(in->status, STATUS_DOWN);
	/* In place: the registration keeps its origin's stamp. */
	ck_assert_int_eq(in->lease.registration_ts, T0);
	ck_assert_uint_gt(registry_gen(reg), gen);
	ck_assert_uint_gt(reg_app_gen(registry_app_find(reg, "APP")), agen);
	ck_assert_int_eq(lg.n, 1);
	ck_assert_int_eq(lg.type[0], REG_EV_METADATA);
	ck_assert_int_eq(lg.replicated[0], 0);
	ck_assert_int_eq(registry_expected_clients(reg), 2);

	d = registry_delta(reg, T0 + 1000);
	ck_assert_uint_eq(d->n, 1);
	ck_assert_uint_eq(d->apps[0]->n, 1);
	ck_assert_int_eq(d->apps[0]->instances[0]->action_type, ACTION_ADDED);
	applications_free(d);

	ck_assert_int_eq(registry_update_metadata(reg, "APP", "nope", &kv,
	    TM(T0)), REG_NOT_FOUND);
	kvlist_clear(&kv);

	/* Past the metadata bound: refused, nothing merged. */
	for (i = 0; i < INSTANCE_MAX_METADATA; i++) {
		snprintf(key, sizeof key, "k%d", i);
		kvlist_set(&kv, key, "v");
	}
	gen = registry_gen(reg);
	ck_assert_int_eq(registry_update_metadata(reg, "APP", "i1", &kv,
	    TM(T0 + 2000)), REG_INVALID);
	ck_assert_uint_eq(in->metadata.n, 2);
	ck_assert_uint_eq(registry_gen(reg), gen);
	kvlist_clear(&kv);
	registry_free(reg);
}
END_TEST

START_TEST(test_heartbeat_keeps_gen)
{
	struct registry	*reg = registry_new(&cf, T0);
	uint64_t	 gen, agen;

	fill_registry(reg, 3, T0);
	gen = registry_gen(reg);
	agen = reg_app_gen(registry_app_at(reg, 0));
	ck_assert_int_eq(registry_renew(reg, "APP", "i1", -1, STATUS_UNKNOWN,
	    0, TM(T0 + 30000), NULL), REG_OK);
	ck_assert_int_eq(registry_renew(reg, "APP", "i2", -1, STATUS_UNKNOWN,
	    1, TM(T0 + 30000), NULL), REG_OK);
	ck_assert_uint_eq(registry_gen(reg), gen);
	ck_assert_uint_eq(reg_app_gen(registry_app_at(reg, 0)), agen);
	ck_assert_uint_eq(registry_delta_size(reg), 3);
	registry_cancel(reg, "APP", "i0", 0, TM(T0 + 31000), -1);
	ck_assert_uint_gt(registry_gen(reg), gen);
	registry_free(reg);
}
END_TEST

START_TEST(test_delta_order_dedupe_retention)
{
	struct registry		*reg = registry_new(&cf, T0);
	struct applications	*d;
	const struct instance	*x;

	registry_register(reg, mkinst("A1", "i1", STATUS_UP, 1), 0, TM(T0));
	registry_register(reg, mkinst("A2", "i2", STATUS_UP, 1), 0, TM(T0 + 1));
	registry_register(reg, mkinst("A1", "i3", STATUS_UP, 1), 0, TM(T0 + 2));
	registry_status_update(reg, "A1", "i1", STATUS_DOWN, 0, 0, TM(T0 + 3),
	    -1);
	ck_assert_uint_eq(registry_delta_size(reg), 4);

	d = registry_delta(reg, T0 + 3);
	ck_assert_ptr_null(d->apps_hashcode);
	ck_assert_uint_eq(d->n, 2);
	ck_assert_str_eq(d->apps[0]->name, "A1");
	ck_assert_str_eq(d->apps[1]->name, "A2");
	ck_assert_uint_eq(d->apps[0]->n, 2);
	/* i1 changed last: it takes the last position. */
	ck_assert_str_eq(d->apps[0]->instances[0]->instance_id, "i3");
	ck_assert_str_eq(d->apps[0]->instances[1]->instance_id, "i1");
	ck_assert_int_eq(d->apps[0]->instances[1]->action_type,
	    ACTION_MODIFIED);
	ck_assert_int_eq(d->apps[0]->instances[1]->status, STATUS_DOWN);
	ck_assert(d->apps[0]->instances[1]->has_lease);
	ck_assert_int_eq(d->apps[0]->instances[1]->lease.registration_ts, T0);
	applications_free(d);

	/* A cancelled lease stays, DELETED, with its eviction time. */
	registry_cancel(reg, "A2", "i2", 0, TM(T0 + 10), -1);
	d = registry_delta(reg, T0 + 10);
	x = snap_find(d, "A2", "i2");
	ck_assert_ptr_nonnull(x);
	ck_assert_int_eq(x->action_type, ACTION_DELETED);
	ck_assert_int_eq(x->lease.eviction_ts, T0 + 10);
	ck_assert_int_eq(x->last_updated_ts, T0 + 10);
	ck_assert_str_eq(d->apps[0]->name, "A1");
	applications_free(d);

	/* Cancel then register again: one entry, ADDED. */
	registry_register(reg, mkinst("A2", "i2", STATUS_UP, 2), 0,
	    TM(T0 + 20));
	d = registry_delta(reg, T0 + 20);
	ck_assert_uint_eq(applications_count(d), 3);
	x = snap_find(d, "A2", "i2");
	ck_assert_int_eq(x->action_type, ACTION_ADDED);
	ck_assert_int_eq(x->lease.eviction_ts, 0);
	applications_free(d);

	/* Retention: entries older than 180 s go, newer ones stay. */
	registry_purge_deltas(reg, T0 + 2 + 180000);
	ck_assert_uint_eq(registry_delta_size(reg), 4);
	registry_purge_deltas(reg, T0 + 3 + 180001);
	ck_assert_uint_eq(registry_delta_size(reg), 2);
	registry_purge_deltas(reg, T0 + 20 + 180001);
	ck_assert_uint_eq(registry_delta_size(reg), 0);
	d = registry_delta(reg, T0 + 400000);
	ck_assert_uint_eq(d->n, 0);
	applications_free(d);
	registry_free(reg);
}
END_TEST

START_TEST(test_hashcode_each_change)
{
	struct registry	*reg = registry_new(&cf, T0);
	size_t		 counts[STATUS_COUNT];

	ck_assert(hash_is(reg, ""));
	registry_register(reg, mkinst("A", "1", STATUS_UP, 1), 0, TM(T0));
	ck_assert(hash_is(reg, "UP_1_"));
	registry_register(reg, mkinst("A", "2", STATUS_DOWN, 1), 0, TM(T0));
	ck_assert(hash_is(reg, "DOWN_1_UP_1_"));
	registry_register(reg, mkinst("B", "3", STATUS_STARTING, 1), 0, TM(T0));
	ck_assert(hash_is(reg, "DOWN_1_STARTING_1_UP_1_"));
	registry_status_update(reg, "A", "1", STATUS_OUT_OF_SERVICE, 0, 0,
	    TM(T0), -1);
	ck_assert(hash_is(reg, "DOWN_1_OUT_OF_SERVICE_1_STARTING_1_"));
	registry_register(reg, mkinst("B", "3", STATUS_UP, 2), 0, TM(T0));
	ck_assert(hash_is(reg, "DOWN_1_OUT_OF_SERVICE_1_UP_1_"));
	registry_cancel(reg, "A", "2", 0, TM(T0), -1);
	ck_assert(hash_is(reg, "OUT_OF_SERVICE_1_UP_1_"));
	registry_delete_override(reg, "A", "1", STATUS_UP, 0, 0, TM(T0), -1);
	ck_assert(hash_is(reg, "UP_2_"));
	registry_status_counts(reg, counts);
	ck_assert_uint_eq(counts[STATUS_UP], 2);
	ck_assert_uint_eq(counts[STATUS_DOWN], 0);
	registry_free(reg);
}
END_TEST

START_TEST(test_vip_exact_match)
{
	struct registry		*reg = registry_new(&cf, T0);
	struct applications	*as;
	struct instance		*in;

	in = mkinst("A", "1", STATUS_UP, 1);
	in->vip_address = strdup("alpha,beta,gamma");
	in->secure_vip_address = strdup("sec");
	registry_register(reg, in, 0, TM(T0));
	in = mkinst("B", "2", STATUS_UP, 1);
	in->vip_address = strdup("beta");
	registry_register(reg, in, 0, TM(T0));
	in = mkinst("B", "3", STATUS_DOWN, 1);
	in->vip_address = strdup("Beta");
	registry_register(reg, in, 0, TM(T0));

	as = registry_vip(reg, "beta", 0);
	ck_assert_int_eq(as->versions_delta, -1);
	ck_assert_uint_eq(applications_count(as), 2);
	ck_assert_ptr_nonnull(snap_find(as, "A", "1"));
	ck_assert_ptr_nonnull(snap_find(as, "B", "2"));
	ck_assert_str_eq(as->apps_hashcode, "UP_2_");
	ck_assert(snap_find(as, "A", "1")->has_lease);
	applications_free(as);

	as = registry_vip(reg, "Beta", 0);
	ck_assert_uint_eq(applications_count(as), 1);
	ck_assert_ptr_nonnull(snap_find(as, "B", "3"));
	applications_free(as);

	as = registry_vip(reg, "alpha,beta", 0);
	ck_assert_uint_eq(applications_count(as), 0);
	applications_free(as);
	as = registry_vip(reg, "gamma", 0);
	ck_assert_uint_eq(applications_count(as), 1);
	applications_free(as);
	as = registry_vip(reg, "sec", 1);
	ck_assert_uint_eq(applications_count(as), 1);
	applications_free(as);
	as = registry_vip(reg, "sec", 0);
	ck_assert_uint_eq(applications_count(as), 0);
	ck_assert_str_eq(as->apps_hashcode, "");
	applications_free(as);
	as = registry_vip(reg, "alp", 0);
	ck_assert_uint_eq(as->n, 0);
	applications_free(as);
	registry_free(reg);
}
END_TEST

/* The one VIP list rule (instance.h), both ways of comparing. */
START_TEST(test_vip_list_rule)
{
	ck_assert(instance_has_vip("alpha,beta", "beta", INSTANCE_VIP_EXACT));
	ck_assert(instance_has_vip("alpha,beta", "alpha", INSTANCE_VIP_EXACT));
	ck_assert(!instance_has_vip("alpha,beta", "Beta", INSTANCE_VIP_EXACT));
	ck_assert(instance_has_vip("alpha,beta", "Beta", INSTANCE_VIP_ICASE));
	ck_assert(instance_has_vip("ALPHA", "alpha", INSTANCE_VIP_ICASE));
	ck_assert(!instance_has_vip("alphabet", "alpha", INSTANCE_VIP_ICASE));
	ck_assert(!instance_has_vip("alpha,beta", "alpha,beta",
	    INSTANCE_VIP_EXACT));
	ck_assert(!instance_has_vip("alpha, beta", "beta", INSTANCE_VIP_EXACT));
	ck_assert(instance_has_vip("a,,b", "", INSTANCE_VIP_EXACT));
	ck_assert(!instance_has_vip(NULL, "a", INSTANCE_VIP_ICASE));
	ck_assert(!instance_has_vip("a", NULL, INSTANCE_VIP_EXACT));
}
END_TEST

START_TEST(test_expiry_after_duration)
{
	struct registry		*reg;
	const struct instance	*in;
	struct instance		*x;

	cf.self_preservation = 0;
	reg = registry_new(&cf, T0);
	ck_assert(registry_lease_expiration_enabled(reg));
	registry_register(reg, mkinst("APP", "i1", STATUS_UP, 1), 0, TM(T0));
	registry_renew(reg, "APP", "i1", -1, STATUS_UNKNOWN, 0, TM(T0 + 10000),
	    NULL);
	in = registry_get(reg, "APP", "i1", T0 + 100000);
	ck_assert_ptr_nonnull(in);
	ck_assert(!registry_lease_expired(in, 0, T0 + 100000));
	ck_assert(registry_lease_expired(in, 0, T0 + 100001));
	ck_assert(!registry_lease_expired(in, 1, T0 + 100001));
	ck_assert_int_eq(registry_evict(reg, TM(T0 + 100000)), 0);
	/* Hidden once expired, though not yet evicted. */
	ck_assert_ptr_null(registry_get(reg, "APP", "i1", T0 + 100001));
	ck_assert_ptr_null(registry_find_id(reg, "i1", T0 + 100001));
	ck_assert_int_eq(registry_status_update(reg, "APP", "i1",
	    STATUS_DOWN, 0, 0, TM(T0 + 100001), -1), REG_NOT_FOUND);
	ck_assert_uint_eq(registry_size(reg), 1);
	/* Eureka would wait 2 x duration after a renewal; we do not. */
	ck_assert_int_eq(registry_evict(reg, TM(T0 + 100001)), 1);
	ck_assert_uint_eq(registry_size(reg), 0);
	ck_assert_uint_eq(registry_stats(reg)->evictions, 1);

	/* Never renewed: duration after registration, from leaseInfo. */
	x = mkinst("APP", "i2", STATUS_UP, 1);
	x->lease.duration_secs = 10;
	registry_register(reg, x, 0, TM(T0));
	ck_assert_ptr_nonnull(registry_get(reg, "APP", "i2", T0 + 10000));
	ck_assert_ptr_null(registry_get(reg, "APP", "i2", T0 + 10001));
	registry_free(reg);
}
END_TEST

/* registry_foreach_live: a count and a name list, in walk order. */
struct live_seen {
	size_t	n;
	char	ids[256];
	const struct reg_app *last;
	int	apps;
};

/* registry_live_cb: note the id, and each new app once. */
static void
live_seen_cb(const struct reg_app *a, const struct instance *in, void *arg)
{
	struct live_seen	*ls = arg;

	ck_assert_ptr_nonnull(a);
	ck_assert_str_eq(reg_app_name(a), in->app);
	if (a != ls->last) {
		ls->apps++;
		ls->last = a;
	}
	ls->n++;
	snprintf(ls->ids + strlen(ls->ids), sizeof ls->ids - strlen(ls->ids),
	    "%s ", instance_id(in));
}

/* The live walk skips expired leases, self-preservation or not. */
START_TEST(test_foreach_live)
{
	struct registry		*reg = registry_new(&cf, T0);
	struct live_seen	 ls;
	struct instance		*x;

	registry_register(reg, mkinst("A", "a1", STATUS_UP, 1), 0, TM(T0));
	registry_register(reg, mkinst("B", "b1", STATUS_DOWN, 1), 0, TM(T0));
	registry_register(reg, mkinst("A", "a2", STATUS_UP, 1), 0, TM(T0));
	x = mkinst("B", "b2", STATUS_UP, 1);
	x->lease.duration_secs = 10;
	registry_register(reg, x, 0, TM(T0));
	ck_assert(!registry_lease_expiration_enabled(reg));

	memset(&ls, 0, sizeof ls);
	ck_assert_uint_eq(registry_foreach_live(reg, T0 + 10000, live_seen_cb,
	    &ls), 4);
	ck_assert_uint_eq(ls.n, 4);
	ck_assert_int_eq(ls.apps, 2);		/* an app's leases together */

	/* b2 expired; self-preservation still shows it to lookups. */
	memset(&ls, 0, sizeof ls);
	ck_assert_uint_eq(registry_foreach_live(reg, T0 + 10001, live_seen_cb,
	    &ls), 3);
	ck_assert_ptr_null(strstr(ls.ids, "b2"));
	ck_assert_ptr_nonnull(registry_get(reg, "B", "b2", T0 + 10001));

	/* a2 renewed at T0 + 50000 outlives a1 and b1. */
	registry_renew(reg, "A", "a2", -1, STATUS_UNKNOWN, 0, TM(T0 + 50000),
	    NULL);
	memset(&ls, 0, sizeof ls);
	ck_assert_uint_eq(registry_foreach_live(reg, T0 + 90001, live_seen_cb,
	    &ls), 1);
	ck_assert_str_eq(ls.ids, "a2 ");
	registry_free(reg);
}
END_TEST

START_TEST(test_expired_visible_while_self_preserving)
{
	struct registry	*reg = registry_new(&cf, T0);

	fill_registry(reg, 2, T0);
	ck_assert(!registry_lease_expiration_enabled(reg));
	/* Expiration disabled: expired leases are still served. */
	ck_assert_ptr_nonnull(registry_get(reg, "APP", "i0", T0 + 500000));
	ck_assert_ptr_nonnull(registry_find_id(reg, "i1", T0 + 500000));
	registry_free(reg);
}
END_TEST

START_TEST(test_selfpreserve_blocks_eviction)
{
	struct registry	*reg = registry_new(&cf, T0);

	fill_registry(reg, 10, T0);		/* 10 leases renewed at T0 */
	ck_assert_int_eq(registry_renews_last_min(reg), 0);
	ck_assert_int_eq(registry_evict(reg, TM(T0 + 91000)), 0);
	ck_assert(!registry_lease_expiration_enabled(reg));
	ck_assert(registry_is_below_threshold(reg));
	ck_assert_uint_eq(registry_size(reg), 10);
	registry_free(reg);
}
END_TEST

START_TEST(test_eviction_allowed_above_threshold)
{
	struct registry	*reg;
	char		 id[16];
	int		 i, k;

	cf.expected_initial = 0;
	reg = registry_new(&cf, T0);
	fill_registry(reg, 20, T0);
	ck_assert_int_eq(registry_expected_clients(reg), 20);
	ck_assert_int_eq(registry_renew_threshold(reg), 34);
	/* Ten of them heartbeat 4 times in the minute: 40 > 34. */
	for (k = 1; k <= 4; k++) {
		for (i = 0; i < 10; i++) {
			snprintf(id, sizeof id, "i%d", i);
			ck_assert_int_eq(registry_renew(reg, "APP", id, -1,
			    STATUS_UNKNOWN, 0, TM(T0 + 15000 * k), NULL),
			    REG_OK);
		}
	}
	ck_assert(!registry_lease_expiration_enabled(reg));
	registry_tick_minute(reg, T0 + 60000);
	ck_assert_int_eq(registry_renews_last_min(reg), 40);
	ck_assert(registry_lease_expiration_enabled(reg));
	ck_assert(!registry_is_below_threshold(reg));
	/* i10..i19 expired at T0 + 90000; cap 20 - (int)(17.0) = 3. */
	ck_assert_int_eq(registry_evict(reg, TM(T0 + 91000)), 3);
	ck_assert_uint_eq(registry_size(reg), 17);
	ck_assert_int_eq(registry_expected_clients(reg), 17);
	ck_assert_int_eq(registry_renew_threshold(reg), 28);
	/* The renewing ones are never picked. */
	for (i = 0; i < 10; i++) {
		snprintf(id, sizeof id, "i%d", i);
		ck_assert_ptr_nonnull(registry_get(reg, "APP", id, T0 + 91000));
	}
	registry_free(reg);
}
END_TEST

/*
 * An eviction run in slices: each call looks at a bounded number of
 * leases, the run takes as many calls as the walks need, it evicts what
 * the one-call run would (the 15 % cap, expired leases only), and changes
 * between slices (a cancel, new registrations, a renewal, a whole
 * application going) leave it sound.
 */
START_TEST(test_eviction_in_slices)
{
	struct registry	*reg;
	char		 app[16], id[16];
	int		 i, n, total = 0, calls = 0;

	cf.self_preservation = 0;
	reg = registry_new(&cf, T0);
	/* 40 apps x 25: the even apps' leases expire, the odd ones renew. */
	for (i = 0; i < 1000; i++) {
		snprintf(app, sizeof app, "A%d", i % 40);
		snprintf(id, sizeof id, "i%d", i);
		ck_assert_int_eq(registry_register(reg,
		    mkinst(app, id, STATUS_UP, 1), 0, TM(T0)), REG_OK);
	}
	for (i = 0; i < 1000; i++) {
		snprintf(app, sizeof app, "A%d", i % 40);
		snprintf(id, sizeof id, "i%d", i);
		if (i % 40 % 2 == 1)
			ck_assert_int_eq(registry_renew(reg, app, id, -1,
			    STATUS_UNKNOWN, 0, TM(T0 + 80000), NULL), REG_OK);
	}
	/* 500 expired at T0 + 90001, the cap 1000 - 850 = 150. */
	for (;;) {
		calls++;
		ck_assert_int_lt(calls, 10000);
		if (registry_evict_step(reg, TM(T0 + 90001), 10, &n)) {
			total += n;
			break;
		}
		/* Ten leases looked at: at most one removal among them. */
		ck_assert_int_le(n, 1);
		total += n;
	}
	/* Two walks of ~1,000 leases, ten a call, plus the removals. */
	ck_assert_int_gt(calls, 150);
	ck_assert_int_eq(total, 150);
	ck_assert_uint_eq(registry_stats(reg)->evictions, 150);
	ck_assert_uint_eq(registry_size(reg), 850);
	/* The renewed leases are all there. */
	for (i = 0; i < 1000; i++) {
		snprintf(app, sizeof app, "A%d", i % 40);
		snprintf(id, sizeof id, "i%d", i);
		if (i % 40 % 2 == 1)
			ck_assert_ptr_nonnull(registry_get(reg, app, id,
			    T0 + 90001));
	}
	/*
	 * The next run (cap 850 - 722 = 128) with changes between its
	 * slices: a cancel, a registration, a whole application going.
	 * What it counted and then saw go is not replaced, so it may take
	 * fewer; never more, never a live lease.
	 */
	for (calls = 0, total = 0;;) {
		calls++;
		ck_assert_int_lt(calls, 10000);
		if (calls == 5) {
			ck_assert_int_eq(registry_cancel(reg, "A1", "i1", 0,
			    TM(T0 + 150001), 0), REG_OK);
			ck_assert_int_eq(registry_register(reg,
			    mkinst("NEW", "n1", STATUS_UP, 1), 0,
			    TM(T0 + 150001)), REG_OK);
		}
		if (calls == 9)
			for (i = 38; i < 1000; i += 40) {
				snprintf(id, sizeof id, "i%d", i);
				(void)registry_cancel(reg, "A38", id, 0,
				    TM(T0 + 150001), 0);
			}
		if (calls == 150)
			for (i = 2; i < 1000; i += 40) {
				snprintf(id, sizeof id, "i%d", i);
				(void)registry_cancel(reg, "A2", id, 0,
				    TM(T0 + 150001), 0);
			}
		if (registry_evict_step(reg, TM(T0 + 150001), 10, &n)) {
			total += n;
			break;
		}
		total += n;
	}
	ck_assert_int_gt(total, 64);
	ck_assert_int_le(total, 128);
	ck_assert_ptr_nonnull(registry_get(reg, "NEW", "n1", T0 + 150001));
	ck_assert_ptr_nonnull(registry_get(reg, "A3", "i3", T0 + 150001));
	/* One call with no bound is registry_evict's run. */
	ck_assert_int_eq(registry_evict_step(reg, TM(T0 + 210001), SIZE_MAX,
	    &n), 1);
	ck_assert_int_gt(n, 0);
	registry_free(reg);
}
END_TEST

/* Fail unless every app's kept status counts equal a walk's. */
static void
check_app_counts(struct registry *reg)
{
	size_t	want[STATUS_COUNT], got[STATUS_COUNT], i, j;
	struct reg_app *a;

	for (i = 0; i < registry_app_count(reg); i++) {
		a = registry_app_at(reg, i);
		memset(want, 0, sizeof want);
		for (j = 0; j < reg_app_size(a); j++)
			want[reg_app_instance_at(a, j)->status]++;
		reg_app_status_counts(a, got);
		ck_assert(memcmp(want, got, sizeof want) == 0);
	}
}

/*
 * Per-application status counts (what /metrics reads instead of walking
 * every instance) follow registrations, re-registrations with another
 * status, status updates, cancels and evictions.
 */
START_TEST(test_app_status_counts)
{
	struct registry	*reg;
	char		 id[16];
	int		 i, n;

	cf.self_preservation = 0;
	reg = registry_new(&cf, T0);
	for (i = 0; i < 60; i++) {
		snprintf(id, sizeof id, "i%d", i);
		ck_assert_int_eq(registry_register(reg, mkinst(i % 2 ? "A" :
		    "B", id, i % 3 ? STATUS_UP : STATUS_STARTING, 1), 0,
		    TM(T0)), REG_OK);
	}
	check_app_counts(reg);
	ck_assert_int_eq(registry_register(reg, mkinst("A", "i1",
	    STATUS_DOWN, 2), 0, TM(T0 + 1)), REG_OK);
	ck_assert_int_eq(registry_status_update(reg, "B", "i2",
	    STATUS_OUT_OF_SERVICE, -1, 0, TM(T0 + 2), 0), REG_OK);
	check_app_counts(reg);
	ck_assert_int_eq(registry_cancel(reg, "A", "i3", 0, TM(T0 + 3), 0),
	    REG_OK);
	check_app_counts(reg);
	while (!registry_evict_step(reg, TM(T0 + 200000), 7, &n))
		check_app_counts(reg);
	check_app_counts(reg);
	registry_free(reg);
}
END_TEST

START_TEST(test_eviction_cap_per_run)
{
	struct registry	*reg;

	cf.self_preservation = 0;
	reg = registry_new(&cf, T0);
	fill_registry(reg, 100, T0);
	ck_assert_int_eq(registry_evict(reg, TM(T0 + 90001)), 15);
	ck_assert_uint_eq(registry_size(reg), 85);
	ck_assert_int_eq(registry_evict(reg, TM(T0 + 150001)), 13);
	ck_assert_uint_eq(registry_size(reg), 72);
	ck_assert_uint_eq(registry_stats(reg)->evictions, 28);
	ck_assert_uint_eq(registry_stats(reg)->cancels, 0);
	ck_assert_uint_eq(registry_delta_size(reg), 128);
	registry_free(reg);
}
END_TEST

START_TEST(test_eviction_compensation)
{
	struct registry	*reg;

	cf.self_preservation = 0;
	reg = registry_new(&cf, T0);
	fill_registry(reg, 1, T0);		/* expires after T0 + 90000 */
	ck_assert_int_eq(registry_evict(reg, TM(T0 + 30000)), 0);
	/* 100 s since the last run: 40 s late, so 40 s more grace. */
	ck_assert_int_eq(registry_evict(reg, TM(T0 + 130000)), 0);
	ck_assert_int_eq(registry_evict(reg, TM(T0 + 190000)), 1);
	registry_free(reg);
}
END_TEST

START_TEST(test_threshold_follows_registrations)
{
	struct registry	*reg = registry_new(&cf, T0);

	ck_assert_int_eq(registry_expected_clients(reg), 1);
	ck_assert_int_eq(registry_renew_threshold(reg), 1);
	fill_registry(reg, 1, T0);
	ck_assert_int_eq(registry_expected_clients(reg), 2);
	ck_assert_int_eq(registry_renew_threshold(reg), 3);
	/* A re-register is not a new client. */
	fill_registry(reg, 1, T0 + 1);
	ck_assert_int_eq(registry_expected_clients(reg), 2);
	registry_cancel(reg, "APP", "i0", 0, TM(T0 + 2), -1);
	ck_assert_int_eq(registry_expected_clients(reg), 1);
	ck_assert_int_eq(registry_renew_threshold(reg), 1);
	registry_open_for_traffic(reg, 10, T0 + 3);
	ck_assert_int_eq(registry_expected_clients(reg), 10);
	ck_assert_int_eq(registry_renew_threshold(reg), 17);
	registry_open_for_traffic(reg, 0, T0 + 4);
	ck_assert_int_eq(registry_renew_threshold(reg), 0);
	/* Cancel at zero stays at zero; register from zero counts. */
	fill_registry(reg, 1, T0 + 5);
	ck_assert_int_eq(registry_expected_clients(reg), 1);
	registry_cancel(reg, "APP", "i0", 0, TM(T0 + 6), -1);
	registry_cancel(reg, "APP", "i0", 0, TM(T0 + 6), -1);
	ck_assert_int_eq(registry_expected_clients(reg), 0);
	registry_free(reg);

	cf.expected_client_renewal_interval_secs = 10;
	cf.renewal_percent_threshold = 0.5;
	reg = registry_new(&cf, T0);
	registry_open_for_traffic(reg, 7, T0);
	ck_assert_int_eq(registry_renew_threshold(reg), 21);	/* 7*6*.5 */
	registry_free(reg);
}
END_TEST

START_TEST(test_tombstones)
{
	struct registry	*reg = registry_new(&cf, T0);

	fill_registry(reg, 2, T0);
	ck_assert_int_eq(registry_tombstone(reg, "APP", "i0", T0), 0);
	registry_cancel(reg, "APP", "i0", 1, TM(T0 + 1000), -1);
	ck_assert_int_eq(registry_tombstone(reg, "APP", "i0", T0 + 1000),
	    T0 + 1000);
	ck_assert_int_eq(registry_tombstone(reg, "app", "i0", T0 + 1000),
	    T0 + 1000);
	/* A replicated register older than the cancel leaves it. */
	registry_register(reg, mkinst("APP", "i0", STATUS_UP, T0), 1,
	    TM(T0 + 2000));
	ck_assert_int_eq(registry_tombstone(reg, "APP", "i0", T0 + 2000),
	    T0 + 1000);
	/* A newer one clears it. */
	registry_register(reg, mkinst("APP", "i0", STATUS_UP, T0 + 1500), 1,
	    TM(T0 + 3000));
	ck_assert_int_eq(registry_tombstone(reg, "APP", "i0", T0 + 3000), 0);

	/* A client's own register clears it whatever its clock says. */
	registry_cancel(reg, "APP", "i1", 0, TM(T0 + 4000), -1);
	registry_register(reg, mkinst("APP", "i1", STATUS_UP, 1), 0,
	    TM(T0 + 5000));
	ck_assert_int_eq(registry_tombstone(reg, "APP", "i1", T0 + 5000), 0);

	/* Expiry and purge. */
	registry_cancel(reg, "APP", "i1", 0, TM(T0 + 6000), -1);
	ck_assert_int_eq(registry_tombstone(reg, "APP", "i1",
	    T0 + 6000 + 180000), T0 + 6000);
	ck_assert_int_eq(registry_tombstone(reg, "APP", "i1",
	    T0 + 6000 + 180001), 0);
	registry_cancel(reg, "APP", "i0", 0, TM(T0 + 7000), -1);
	registry_purge_deltas(reg, T0 + 7000 + 180001);
	ck_assert_int_eq(registry_tombstone(reg, "APP", "i0", T0 + 7000), 0);

	/* Evictions leave no tombstone (a live peer may bring it back). */
	cf.self_preservation = 0;
	registry_free(reg);
	reg = registry_new(&cf, T0);
	fill_registry(reg, 1, T0);
	ck_assert_int_eq(registry_evict(reg, TM(T0 + 90001)), 1);
	ck_assert_int_eq(registry_tombstone(reg, "APP", "i0", T0 + 90001), 0);
	registry_free(reg);
}
END_TEST

START_TEST(test_find_id)
{
	struct registry		*reg = registry_new(&cf, T0);
	const struct instance	*in;

	registry_register(reg, mkinst("A", "shared", STATUS_UP, 1), 0, TM(T0));
	registry_register(reg, mkinst("B", "shared", STATUS_DOWN, 1), 0,
	    TM(T0));
	registry_register(reg, mkinst("B", "solo", STATUS_UP, 1), 0, TM(T0));
	ck_assert_uint_eq(registry_size(reg), 3);
	in = registry_find_id(reg, "solo", T0);
	ck_assert_ptr_nonnull(in);
	ck_assert_str_eq(in->app, "B");
	ck_assert_ptr_nonnull(registry_find_id(reg, "shared", T0));
	registry_cancel(reg, "A", "shared", 0, TM(T0), -1);
	in = registry_find_id(reg, "shared", T0);
	ck_assert_ptr_nonnull(in);
	ck_assert_str_eq(in->app, "B");
	registry_cancel(reg, "B", "shared", 0, TM(T0), -1);
	ck_assert_ptr_null(registry_find_id(reg, "shared", T0));
	ck_assert_ptr_null(registry_find_id(reg, "SOLO", T0));
	registry_free(reg);
}
END_TEST

/* registry_foreach_table callback: keep the figures of the table named. */
struct table_want {
	const char		*name;
	struct htab_stats	 st;
	int			 found;
};

static void
table_cb(const char *name, const struct htab_stats *st, void *arg)
{
	struct table_want	*w = arg;

	if (strcmp(name, w->name) == 0) {
		w->st = *st;
		w->found = 1;
	}
}

/* The stats of one registry table (fails the test if it is not listed). */
static struct htab_stats
table_stats(struct registry *reg, const char *name)
{
	struct table_want	w = { name, { 0, 0, 0 }, 0 };

	registry_foreach_table(reg, table_cb, &w);
	ck_assert_msg(w.found, "no table %s", name);
	return (w.st);
}

/*
 * One id in many apps is one id-index entry (it was one chain of all the
 * leases, walked on every removal); lookups, overrides and eviction in
 * random order keep working, and every table grew past its start size.
 */
START_TEST(test_shared_id_many_apps)
{
	struct registry		*reg;
	struct htab_stats	 st;
	const struct instance	*in;
	char			 app[32];
	int			 i, n = 5000;

	cf.self_preservation = 0;
	cf.renewal_percent_threshold = 0;
	reg = registry_new(&cf, T0);
	for (i = 0; i < n; i++) {
		snprintf(app, sizeof app, "APP%d", i);
		ck_assert_int_eq(registry_register(reg,
		    mkinst(app, "shared", STATUS_UP, 1), 0, TM(T0)), REG_OK);
	}
	st = table_stats(reg, "registry_ids");
	ck_assert_uint_eq(st.entries, 1);
	st = table_stats(reg, "registry_apps");
	ck_assert_uint_eq(st.entries, (size_t)n);
	ck_assert_uint_ge(st.buckets, (size_t)n);
	ck_assert_uint_le(st.longest, 12);
	st = table_stats(reg, "registry_leases");
	ck_assert_uint_ge(st.buckets, (size_t)n);
	ck_assert_uint_le(st.longest, 12);
	for (i = 0; i < n; i += 7) {
		snprintf(app, sizeof app, "app%d", i);
		in = registry_get(reg, app, "shared", T0);
		ck_assert_ptr_nonnull(in);
		ck_assert_int_eq(strcasecmp(in->app, app), 0);
	}
	registry_set_override(reg, "shared", STATUS_OUT_OF_SERVICE, T0);
	for (i = 0; i < n; i++) {
		snprintf(app, sizeof app, "APP%d", i);
		in = registry_get(reg, app, "shared", T0);
		ck_assert_int_eq(in->overridden_status, STATUS_OUT_OF_SERVICE);
	}
	/* Cancel a third from the middle, then evict the rest at random. */
	for (i = n / 3; i < 2 * n / 3; i++) {
		snprintf(app, sizeof app, "APP%d", i);
		ck_assert_int_eq(registry_cancel(reg, app, "shared", 0, TM(T0), 0),
		    REG_OK);
	}
	ck_assert_ptr_nonnull(registry_find_id(reg, "shared", T0));
	ck_assert_int_eq(registry_evict(reg, TM(T0 + 200000)),
	    n - (2 * n / 3 - n / 3));
	ck_assert_uint_eq(registry_size(reg), 0);
	ck_assert_ptr_null(registry_find_id(reg, "shared", T0 + 200000));
	st = table_stats(reg, "registry_ids");
	ck_assert_uint_eq(st.entries, 0);
	st = table_stats(reg, "registry_apps");
	ck_assert_uint_eq(st.entries, 0);
	ck_assert_uint_lt(st.buckets, (size_t)n);	/* gave buckets back */
	registry_free(reg);
}
END_TEST

START_TEST(test_max_instances)
{
	struct registry	*reg;

	cf.max_instances = 3;
	reg = registry_new(&cf, T0);
	fill_registry(reg, 3, T0);
	ck_assert_int_eq(registry_register(reg, mkinst("APP", "x", STATUS_UP,
	    1), 0, TM(T0)), REG_FULL);
	ck_assert_uint_eq(registry_size(reg), 3);
	/* Re-registering a known lease still works when full. */
	ck_assert_int_eq(registry_register(reg, mkinst("APP", "i1", STATUS_UP,
	    2), 0, TM(T0 + 1)), REG_OK);
	registry_cancel(reg, "APP", "i1", 0, TM(T0 + 2), -1);
	ck_assert_int_eq(registry_register(reg, mkinst("APP", "x", STATUS_UP,
	    1), 0, TM(T0 + 3)), REG_OK);
	registry_free(reg);
}
END_TEST

START_TEST(test_observers)
{
	struct registry	*reg;
	struct evlog	 lg = { 0 };

	cf.self_preservation = 0;
	reg = registry_new(&cf, T0);
	registry_add_observer(reg, log_cb, &lg);
	registry_register(reg, mkinst("APP", "a", STATUS_UP, 1), 1, TM(T0));
	registry_register(reg, mkinst("APP", "b", STATUS_UP, 1), 0, TM(T0));
	registry_status_update(reg, "APP", "a", STATUS_OUT_OF_SERVICE, 0, 1,
	    TM(T0 + 1), -1);
	registry_renew(reg, "APP", "a", -1, STATUS_UNKNOWN, 0, TM(T0 + 2),
	    NULL);
	registry_renew(reg, "APP", "zz", -1, STATUS_UNKNOWN, 0, TM(T0 + 2),
	    NULL);
	/* Unknown here, but a peer may hold it: the cancel is replicated. */
	registry_cancel(reg, "APP", "zz", 0, TM(T0 + 3), -1);
	registry_delete_override(reg, "APP", "a", STATUS_UP, 0, 0, TM(T0 + 4),
	    -1);
	registry_cancel(reg, "APP", "a", 1, TM(T0 + 5), -1);
	registry_evict(reg, TM(T0 + 100000));

	ck_assert_int_eq(lg.n, 8);
	ck_assert_int_eq(lg.type[0], REG_EV_REGISTER);
	ck_assert_int_eq(lg.replicated[0], 1);
	ck_assert(lg.has_inst[0]);
	ck_assert_int_eq(lg.type[1], REG_EV_REGISTER);
	ck_assert_int_eq(lg.replicated[1], 0);
	ck_assert_int_eq(lg.type[2], REG_EV_STATUS_UPDATE);
	ck_assert_int_eq(lg.replicated[2], 1);
	ck_assert_int_eq(lg.override[2], STATUS_OUT_OF_SERVICE);
	ck_assert_int_eq(lg.type[3], REG_EV_RENEW);
	ck_assert_int_eq(lg.replicated[3], 0);
	ck_assert_int_eq(lg.override[3], STATUS_OUT_OF_SERVICE);
	ck_assert_str_eq(lg.id[3], "a");
	ck_assert_int_eq(lg.type[4], REG_EV_CANCEL);
	ck_assert_int_eq(lg.replicated[4], 0);
	ck_assert_str_eq(lg.id[4], "zz");
	ck_assert(!lg.has_inst[4]);
	ck_assert_int_eq(lg.type[5], REG_EV_DELETE_OVERRIDE);
	ck_assert_int_eq(lg.override[5], STATUS_UNKNOWN);
	ck_assert_int_eq(lg.type[6], REG_EV_CANCEL);
	ck_assert_int_eq(lg.replicated[6], 1);
	ck_assert(!lg.has_inst[6]);
	ck_assert_int_eq(lg.type[7], REG_EV_EVICT);
	ck_assert_int_eq(lg.replicated[7], 0);
	ck_assert_str_eq(lg.id[7], "b");
	registry_free(reg);
}
END_TEST

START_TEST(test_stats)
{
	struct registry			*reg = registry_new(&cf, T0);
	const struct registry_stats	*st = registry_stats(reg);

	fill_registry(reg, 3, T0);
	registry_renew(reg, "APP", "i0", -1, STATUS_UNKNOWN, 0, TM(T0), NULL);
	registry_renew(reg, "APP", "i1", -1, STATUS_UNKNOWN, 1, TM(T0), NULL);
	registry_renew(reg, "APP", "no", -1, STATUS_UNKNOWN, 0, TM(T0), NULL);
	registry_cancel(reg, "APP", "i2", 0, TM(T0), -1);
	registry_cancel(reg, "APP", "i2", 0, TM(T0), -1);
	registry_status_update(reg, "APP", "i0", STATUS_DOWN, 0, 0, TM(T0), -1);
	ck_assert_uint_eq(st->registrations, 3);
	ck_assert_uint_eq(st->renewals, 2);
	ck_assert_uint_eq(st->renewals_not_found, 1);
	ck_assert_uint_eq(st->cancels, 1);
	ck_assert_uint_eq(st->cancels_not_found, 1);
	ck_assert_uint_eq(st->status_updates, 1);
	ck_assert_uint_eq(st->evictions, 0);
	registry_tick_minute(reg, T0 + 60000);
	ck_assert_int_eq(registry_renews_last_min(reg), 2);
	registry_tick_minute(reg, T0 + 120000);
	ck_assert_int_eq(registry_renews_last_min(reg), 0);
	registry_free(reg);
}
END_TEST

/* Collects the ring for test_recent_rings. */
struct ringlog {
	int	n;
	int64_t	first_ts;
	char	first[64];
};

/* Count entries and keep the first (newest). */
static void
ring_cb(int64_t ts, const char *what, int evicted, void *arg)
{
	struct ringlog	*rl = arg;

	(void)evicted;
	if (rl->n++ == 0) {
		rl->first_ts = ts;
		snprintf(rl->first, sizeof rl->first, "%s", what);
	}
}

START_TEST(test_recent_rings)
{
	struct registry	*reg = registry_new(&cf, T0);
	struct ringlog	 rl = { 0 };

	fill_registry(reg, 1005, T0);
	registry_register(reg, mkinst("last", "z", STATUS_UP, 1), 1,
	    TM(T0 + 1));
	registry_foreach_recent_how(reg, 0, ring_cb, &rl);
	ck_assert_int_eq(rl.n, REGISTRY_RECENT_MAX);
	ck_assert_str_eq(rl.first, "LAST(z)");
	ck_assert_int_eq(rl.first_ts, T0 + 1);

	registry_cancel(reg, "APP", "i3", 0, TM(T0 + 2), -1);
	registry_cancel(reg, "gone", "q", 0, TM(T0 + 3),
	    -1);	/* recorded anyway */
	memset(&rl, 0, sizeof rl);
	registry_foreach_recent_how(reg, 1, ring_cb, &rl);
	ck_assert_int_eq(rl.n, 2);
	ck_assert_str_eq(rl.first, "GONE(q)");
	registry_free(reg);
}
END_TEST

/* Size of the scale test; REGISTRY_TEST_N overrides (valgrind). */
static int
scale_n(void)
{
	const char	*s = getenv("REGISTRY_TEST_N");
	int		 n;

	if (s != NULL && (n = atoi(s)) >= 100)
		return (n);
	return (100000);
}

START_TEST(test_scale_consistency)
{
	struct registry		*reg;
	struct reg_app		*a;
	const struct instance	*in;
	char			 app[32], id[32], want[64];
	size_t			 i, j, total;
	int			 n = scale_n(), k;

	cf.max_instances = (size_t)n;
	cf.self_preservation = 0;
	reg = registry_new(&cf, T0);
	for (k = 0; k < n; k++) {
		snprintf(app, sizeof app, "APP-%d", k % (n / 100));
		snprintf(id, sizeof id, "host-%d:%d", k, k * 7);
		ck_assert_int_eq(registry_register(reg, mkinst(app, id,
		    STATUS_UP, k), 0, TM(T0)), REG_OK);
	}
	ck_assert_uint_eq(registry_size(reg), (size_t)n);
	ck_assert_uint_eq(registry_app_count(reg), (size_t)(n / 100));
	ck_assert_int_eq(registry_register(reg, mkinst("X", "x", STATUS_UP,
	    1), 0, TM(T0)), REG_FULL);
	for (k = 0; k < n; k++) {
		snprintf(app, sizeof app, "APP-%d", k % (n / 100));
		snprintf(id, sizeof id, "host-%d:%d", k, k * 7);
		in = registry_get(reg, app, id, T0);
		ck_assert_ptr_nonnull(in);
		ck_assert_int_eq(in->last_dirty_ts, k);
		ck_assert_ptr_eq(registry_find_id(reg, id, T0), in);
	}
	/* Remove every other one. */
	for (k = 0; k < n; k += 2) {
		snprintf(app, sizeof app, "APP-%d", k % (n / 100));
		snprintf(id, sizeof id, "host-%d:%d", k, k * 7);
		ck_assert_int_eq(registry_cancel(reg, app, id, 0, TM(T0 + 1),
		    -1),
		    REG_OK);
	}
	ck_assert_uint_eq(registry_size(reg), (size_t)(n - (n + 1) / 2));
	snprintf(want, sizeof want, "UP_%d_", n - (n + 1) / 2);
	ck_assert(hash_is(reg, want));
	for (k = 0; k < n; k++) {
		snprintf(app, sizeof app, "APP-%d", k % (n / 100));
		snprintf(id, sizeof id, "host-%d:%d", k, k * 7);
		in = registry_get(reg, app, id, T0 + 1);
		if (k % 2 == 0)
			ck_assert_ptr_null(in);
		else
			ck_assert_ptr_nonnull(in);
	}
	/* Index iteration sees each live lease once, and finds it back. */
	total = 0;
	for (i = 0; i < registry_app_count(reg); i++) {
		a = registry_app_at(reg, i);
		ck_assert_ptr_eq(registry_app_find(reg, reg_app_name(a)), a);
		for (j = 0; j < reg_app_size(a); j++) {
			in = reg_app_instance_at(a, j);
			ck_assert_ptr_eq(registry_get(reg, reg_app_name(a),
			    instance_id(in), T0 + 1), in);
			total++;
		}
	}
	ck_assert_uint_eq(total, registry_size(reg));
	/* Evict the rest in capped runs; everything stays consistent. */
	k = 0;
	while (registry_size(reg) > 0 && k++ < 200)
		registry_evict(reg, TM(T0 + 100000 + k * 60000LL));
	ck_assert_uint_eq(registry_size(reg), 0);
	ck_assert_uint_eq(registry_app_count(reg), 0);
	ck_assert(hash_is(reg, ""));
	registry_purge_deltas(reg, T0 + 100000 + 300 * 60000LL);
	ck_assert_uint_eq(registry_delta_size(reg), 0);
	registry_free(reg);
}
END_TEST

/* Both clocks given apart, for the clock-step tests. */
static struct hk_time
tw(int64_t wall, int64_t mono)
{
	struct hk_time	t;

	t.wall_ms = wall;
	t.mono_ms = mono;
	return (t);
}

START_TEST(test_tombstone_refuses_stale_copy)
{
	struct registry	*reg = registry_new(&cf, T0);
	struct instance	*r;
	int64_t		 ts;

	ck_assert_int_eq(registry_register(reg, mkinst("APP", "a", STATUS_UP,
	    T0 - 500), 0, TM(T0)), REG_OK);
	ck_assert_int_eq(registry_cancel(reg, "APP", "a", 0, TM(T0 + 10), -1),
	    REG_OK);
	/* The client's cancel is stamped with our wall clock. */
	ck_assert_int_eq(registry_tombstone(reg, "APP", "a", T0 + 10),
	    T0 + 10);
	/* A queued or re-sent copy from before the cancel stays out... */
	ck_assert_int_eq(registry_register(reg, mkinst("APP", "a", STATUS_UP,
	    T0 - 500), 1, TM(T0 + 20000)), REG_STALE);
	ck_assert_ptr_null(registry_get(reg, "APP", "a", T0 + 20000));
	ck_assert_uint_eq(registry_stats(reg)->stale_refused, 1);
	/* ...also one stamped at the very time of the cancel. */
	ck_assert_int_eq(registry_register(reg, mkinst("APP", "a", STATUS_UP,
	    T0 + 10), 1, TM(T0 + 20000)), REG_STALE);
	/* Anti-entropy answers a peer's stale copy with a Cancel. */
	r = mkinst("APP", "a", STATUS_UP, T0 - 500);
	ck_assert_int_eq(registry_reconcile(reg, r, T0 + 20000, &ts),
	    RECON_CANCEL);
	ck_assert_int_eq(ts, T0 + 10);
	/* The tombstone lives tombstone_ms on the monotonic clock. */
	ck_assert_int_eq(registry_reconcile(reg, r, T0 + 10 + cf.tombstone_ms,
	    &ts), RECON_CANCEL);
	ck_assert_int_eq(registry_reconcile(reg, r,
	    T0 + 10 + cf.tombstone_ms + 1, &ts), RECON_ADOPT);
	instance_free(r);
	registry_free(reg);
}
END_TEST

START_TEST(test_cancel_before_register)
{
	struct registry	*reg = registry_new(&cf, T0);
	struct evlog	 lg = { 0 };

	registry_add_observer(reg, log_cb, &lg);
	/* B's cancel of a copy dirty at T0 reaches us before A's register. */
	ck_assert_int_eq(registry_cancel(reg, "APP", "a", 1, TM(T0 + 5000),
	    T0), REG_NOT_FOUND);
	ck_assert_int_eq(registry_tombstone(reg, "APP", "a", T0 + 5000), T0);
	ck_assert_int_eq(lg.n, 1);
	ck_assert_int_eq(lg.type[0], REG_EV_CANCEL);
	ck_assert_int_eq(lg.replicated[0], 1);	/* not sent on */
	ck_assert_int_eq(registry_register(reg, mkinst("APP", "a", STATUS_UP,
	    T0), 1, TM(T0 + 6000)), REG_STALE);
	ck_assert_uint_eq(registry_size(reg), 0);
	ck_assert_int_eq(registry_delta_size(reg), 0);
	ck_assert_int_eq(lg.n, 1);

	/* A client's cancel of an instance we never saw: tombstone too. */
	ck_assert_int_eq(registry_cancel(reg, "APP", "b", 0, TM(T0 + 7000),
	    -1), REG_NOT_FOUND);
	ck_assert_int_eq(registry_tombstone(reg, "APP", "b", T0 + 7000),
	    T0 + 7000);
	ck_assert_int_eq(lg.n, 2);
	ck_assert_int_eq(lg.replicated[1], 0);	/* peers may hold it */
	ck_assert_int_eq(registry_register(reg, mkinst("APP", "b", STATUS_UP,
	    T0 + 6999), 1, TM(T0 + 7001)), REG_STALE);
	registry_free(reg);
}
END_TEST

START_TEST(test_newer_registration_beats_tombstone)
{
	struct registry		*reg = registry_new(&cf, T0);
	const struct instance	*in;

	ck_assert_int_eq(registry_cancel(reg, "APP", "a", 1, TM(T0 + 10),
	    T0 + 5), REG_NOT_FOUND);
	/* The client restarted: a newer lastDirtyTimestamp wins. */
	ck_assert_int_eq(registry_register(reg, mkinst("APP", "a", STATUS_UP,
	    T0 + 6), 1, TM(T0 + 20)), REG_OK);
	ck_assert_ptr_nonnull(registry_get(reg, "APP", "a", T0 + 20));
	ck_assert_int_eq(registry_tombstone(reg, "APP", "a", T0 + 20), 0);

	/*
	 * A client registering itself always wins, and its copy is raised
	 * past the tombstone so that every peer takes it too.
	 */
	ck_assert_int_eq(registry_cancel(reg, "APP", "a", 0, TM(T0 + 100),
	    -1), REG_OK);
	ck_assert_int_eq(registry_register(reg, mkinst("APP", "a", STATUS_UP,
	    T0 + 6), 0, TM(T0 + 200)), REG_OK);
	ck_assert_ptr_nonnull(in = registry_get(reg, "APP", "a", T0 + 200));
	ck_assert_int_eq(in->last_dirty_ts, T0 + 101);
	ck_assert_int_eq(registry_tombstone(reg, "APP", "a", T0 + 200), 0);
	registry_free(reg);
}
END_TEST

START_TEST(test_replicated_cancel_spares_newer_copy)
{
	struct registry	*reg = registry_new(&cf, T0);

	ck_assert_int_eq(registry_register(reg, mkinst("APP", "a", STATUS_UP,
	    T0 + 50), 0, TM(T0 + 50)), REG_OK);
	/* A cancel of the copy dirty at T0 + 10: ours is newer. */
	ck_assert_int_eq(registry_cancel(reg, "APP", "a", 1, TM(T0 + 60),
	    T0 + 10), REG_STALE);
	ck_assert_ptr_nonnull(registry_get(reg, "APP", "a", T0 + 60));
	/* One at or after it removes it. */
	ck_assert_int_eq(registry_cancel(reg, "APP", "a", 1, TM(T0 + 70),
	    T0 + 50), REG_OK);
	ck_assert_ptr_null(registry_get(reg, "APP", "a", T0 + 70));
	ck_assert_int_eq(registry_tombstone(reg, "APP", "a", T0 + 70), T0 + 50);
	registry_free(reg);
}
END_TEST

START_TEST(test_reconcile_origin_times)
{
	struct registry		*reg = registry_new(&cf, T0);
	struct instance		*r;
	const struct instance	*in;

	/* Absent, no tombstone: adopt. */
	r = mkinst("APP", "a", STATUS_UP, T0);
	r->last_updated_ts = T0;
	ck_assert_int_eq(registry_reconcile(reg, r, T0, NULL), RECON_ADOPT);
	ck_assert_int_eq(registry_adopt(reg, r, TM(T0 + 5000)), REG_OK);
	/* The origin's lastUpdatedTimestamp is kept, not our apply time. */
	ck_assert_ptr_nonnull(in = registry_get(reg, "APP", "a", T0 + 5000));
	ck_assert_int_eq(in->last_updated_ts, T0);

	/* The same copy: keep. An older one: keep. */
	r = mkinst("APP", "a", STATUS_UP, T0);
	r->last_updated_ts = T0;
	ck_assert_int_eq(registry_reconcile(reg, r, T0 + 5000, NULL),
	    RECON_KEEP);
	r->last_dirty_ts = T0 - 1;
	ck_assert_int_eq(registry_reconcile(reg, r, T0 + 5000, NULL),
	    RECON_KEEP);
	/* A newer lastDirtyTimestamp wins whatever else. */
	r->last_dirty_ts = T0 + 1;
	r->last_updated_ts = 1;
	ck_assert_int_eq(registry_reconcile(reg, r, T0 + 5000, NULL),
	    RECON_ADOPT);
	/*
	 * Same lastDirtyTimestamp, different content: the later origin
	 * stamp wins, whatever our local apply time was (T0 + 5000).
	 */
	r->last_dirty_ts = T0;
	kvlist_set(&r->metadata, "zone", "b");
	r->last_updated_ts = T0 + 1;
	ck_assert_int_eq(registry_reconcile(reg, r, T0 + 5000, NULL),
	    RECON_ADOPT);
	r->last_updated_ts = T0 - 1;
	ck_assert_int_eq(registry_reconcile(reg, r, T0 + 5000, NULL),
	    RECON_KEEP);
	instance_free(r);
	registry_free(reg);
}
END_TEST

START_TEST(test_reconcile_hash_breaks_ties)
{
	struct registry		*a = registry_new(&cf, T0);
	struct registry		*b = registry_new(&cf, T0);
	struct instance		*ra, *rb;
	const struct instance	*ia, *ib;
	int			 adopt_ab, adopt_ba;

	/* Same origin times, different content: neither time decides. */
	ra = mkinst("APP", "x", STATUS_UP, T0);
	ra->last_updated_ts = T0;
	kvlist_set(&ra->metadata, "zone", "a");
	rb = mkinst("APP", "x", STATUS_UP, T0);
	rb->last_updated_ts = T0;
	kvlist_set(&rb->metadata, "zone", "b");
	ck_assert_int_eq(registry_adopt(a, ra, TM(T0)), REG_OK);
	ck_assert_int_eq(registry_adopt(b, rb, TM(T0)), REG_OK);
	ia = registry_get(a, "APP", "x", T0);
	ib = registry_get(b, "APP", "x", T0);
	ck_assert_uint_ne(registry_copy_hash(ia), registry_copy_hash(ib));
	/* Exactly one side adopts the other's copy: the larger hash wins. */
	ra = instance_dup(ia);
	rb = instance_dup(ib);
	adopt_ab = registry_reconcile(b, ra, T0 + 10, NULL) == RECON_ADOPT;
	adopt_ba = registry_reconcile(a, rb, T0 + 10, NULL) == RECON_ADOPT;
	ck_assert_int_eq(adopt_ab + adopt_ba, 1);
	ck_assert_int_eq(adopt_ab, registry_copy_hash(ia) >
	    registry_copy_hash(ib));
	/* Once adopted, both hold the same copy and keep it. */
	if (adopt_ab) {
		ck_assert_int_eq(registry_adopt(b, ra, TM(T0 + 10)), REG_OK);
		instance_free(rb);
	} else {
		ck_assert_int_eq(registry_adopt(a, rb, TM(T0 + 10)), REG_OK);
		instance_free(ra);
	}
	ia = registry_get(a, "APP", "x", T0 + 10);
	ib = registry_get(b, "APP", "x", T0 + 10);
	ck_assert_uint_eq(registry_copy_hash(ia), registry_copy_hash(ib));
	ra = instance_dup(ia);
	ck_assert_int_eq(registry_reconcile(b, ra, T0 + 20, NULL), RECON_KEEP);
	ck_assert_int_eq(registry_reconcile(a, ra, T0 + 20, NULL), RECON_KEEP);
	instance_free(ra);
	registry_free(a);
	registry_free(b);
}
END_TEST

START_TEST(test_reconcile_expired_copy)
{
	struct registry	*reg;
	struct instance	*r;
	int64_t		 late = T0 + 10 * 60 * 1000;	/* lease long gone */

	/* Self-preservation holds our expired copy: an older one loses. */
	reg = registry_new(&cf, T0);
	ck_assert_int_eq(registry_register(reg, mkinst("APP", "a", STATUS_UP,
	    T0), 1, TM(T0)), REG_OK);
	r = mkinst("APP", "a", STATUS_UP, T0 - 100);
	ck_assert_int_eq(registry_reconcile(reg, r, late, NULL), RECON_KEEP);
	registry_free(reg);
	/* Without it an expired copy counts as none: the peer's is taken. */
	cf.self_preservation = 0;
	reg = registry_new(&cf, T0);
	ck_assert_int_eq(registry_register(reg, mkinst("APP", "a", STATUS_UP,
	    T0), 1, TM(T0)), REG_OK);
	ck_assert_int_eq(registry_reconcile(reg, r, T0 + 1000, NULL),
	    RECON_KEEP);
	ck_assert_int_eq(registry_reconcile(reg, r, late, NULL), RECON_ADOPT);
	ck_assert_int_eq(registry_adopt(reg, r, TM(late)), REG_OK);
	/*
	 * The lease lives again; as in any register, the stored copy with
	 * the newer lastDirtyTimestamp (ours) is the one kept.
	 */
	ck_assert_ptr_nonnull(registry_get(reg, "APP", "a", late));
	ck_assert_int_eq(registry_get(reg, "APP", "a", late)->last_dirty_ts,
	    T0);
	registry_free(reg);
}
END_TEST

START_TEST(test_reconcile_repairs_override)
{
	struct registry		*a = registry_new(&cf, T0);
	struct registry		*b = registry_new(&cf, T0);
	struct instance		*r;
	const struct instance	*ia, *ib;

	ck_assert_int_eq(registry_register(a, mkinst("APP", "x", STATUS_UP,
	    T0), 1, TM(T0)), REG_OK);
	ck_assert_int_eq(registry_register(b, mkinst("APP", "x", STATUS_UP,
	    T0), 1, TM(T0)), REG_OK);
	ia = registry_get(a, "APP", "x", T0);
	ib = registry_get(b, "APP", "x", T0);
	ck_assert_uint_eq(registry_copy_hash(ia), registry_copy_hash(ib));
	/* The operator's override reached A only (lastDirty unchanged). */
	ck_assert_int_eq(registry_status_update(a, "APP", "x",
	    STATUS_OUT_OF_SERVICE, 0, 0, TM(T0 + 100), -1), REG_OK);
	ia = registry_get(a, "APP", "x", T0 + 100);
	ck_assert_int_eq(ia->last_dirty_ts, T0);
	ck_assert_uint_ne(registry_copy_hash(ia), registry_copy_hash(ib));
	/* B pulls A's copy: newer origin stamp, so B adopts the override. */
	r = instance_dup(ia);
	ck_assert_int_eq(registry_reconcile(b, r, T0 + 200, NULL), RECON_ADOPT);
	ck_assert_int_eq(registry_adopt(b, r, TM(T0 + 9000)), REG_OK);
	ib = registry_get(b, "APP", "x", T0 + 9000);
	ck_assert_int_eq(ib->status, STATUS_OUT_OF_SERVICE);
	ck_assert_int_eq(registry_override(b, "x", T0 + 9000),
	    STATUS_OUT_OF_SERVICE);
	ck_assert_uint_eq(registry_copy_hash(ia), registry_copy_hash(ib));
	/* And A, pulling B's copy back, keeps its own: no ping-pong. */
	r = instance_dup(ib);
	ck_assert_int_eq(registry_reconcile(a, r, T0 + 9000, NULL), RECON_KEEP);
	instance_free(r);

	/* A deleted override travels the same way. */
	ck_assert_int_eq(registry_delete_override(a, "APP", "x", STATUS_UP, 0,
	    0, TM(T0 + 10000), -1), REG_OK);
	r = instance_dup(registry_get(a, "APP", "x", T0 + 10000));
	ck_assert_int_eq(registry_reconcile(b, r, T0 + 10000, NULL),
	    RECON_ADOPT);
	ck_assert_int_eq(registry_adopt(b, r, TM(T0 + 10001)), REG_OK);
	ck_assert_int_eq(registry_override(b, "x", T0 + 10001), STATUS_UNKNOWN);
	ck_assert_int_eq(registry_get(b, "APP", "x", T0 + 10001)->status,
	    STATUS_UP);
	registry_free(a);
	registry_free(b);
}
END_TEST

START_TEST(test_replicated_status_keeps_origin_stamp)
{
	struct registry		*reg = registry_new(&cf, T0);
	const struct instance	*in;

	registry_register(reg, mkinst("APP", "x", STATUS_UP, T0), 1, TM(T0));
	ck_assert_int_eq(registry_status_update(reg, "APP", "x",
	    STATUS_OUT_OF_SERVICE, T0, 1, TM(T0 + 30000), T0 + 7), REG_OK);
	in = registry_get(reg, "APP", "x", T0 + 30000);
	ck_assert_int_eq(in->last_updated_ts, T0 + 7);
	registry_free(reg);
}
END_TEST

START_TEST(test_copy_hash_covers_fields)
{
	struct instance	*a = mkinst("APP", "x", STATUS_UP, T0);
	struct instance	*b = instance_dup(a);
	uint64_t	 h = registry_copy_hash(a);

	/* Local bookkeeping does not count. */
	b->lease.registration_ts = 12345;
	b->last_updated_ts = 99;
	b->action_type = ACTION_MODIFIED;
	ck_assert_uint_eq(registry_copy_hash(b), h);
	/* Every replicated field does. */
	b->overridden_status = STATUS_OUT_OF_SERVICE;
	ck_assert_uint_ne(registry_copy_hash(b), h);
	b->overridden_status = a->overridden_status;
	kvlist_set(&b->metadata, "k", "v");
	ck_assert_uint_ne(registry_copy_hash(b), h);
	kvlist_clear(&b->metadata);
	ck_assert_uint_eq(registry_copy_hash(b), h);
	b->port = 1234;
	ck_assert_uint_ne(registry_copy_hash(b), h);
	b->port = a->port;
	b->status = STATUS_DOWN;
	ck_assert_uint_ne(registry_copy_hash(b), h);
	instance_free(a);
	instance_free(b);
}
END_TEST

START_TEST(test_wall_step_changes_no_expiry)
{
	struct registry		*reg;
	const struct instance	*in;
	int64_t			 m = 5000;	/* monotonic: any origin */

	cf.self_preservation = 0;
	reg = registry_new(&cf, T0);
	registry_register(reg, mkinst("APP", "live", STATUS_UP, 1), 0,
	    tw(T0, m));
	registry_register(reg, mkinst("APP", "dead", STATUS_UP, 1), 0,
	    tw(T0, m));
	/* The wall clock jumps a day ahead: nothing expires early. */
	ck_assert_int_eq(registry_renew(reg, "APP", "live", -1, STATUS_UNKNOWN,
	    0, tw(T0 + 86400000, m + 30000), NULL), REG_OK);
	ck_assert_int_eq(registry_evict(reg, tw(T0 + 86400000, m + 60000)), 0);
	ck_assert_ptr_nonnull(registry_get(reg, "APP", "dead", m + 60000));
	/* The wire still shows wall-clock times. */
	in = registry_get(reg, "APP", "live", m + 60000);
	ck_assert_int_eq(in->lease.last_renewal_ts, T0 + 86400000 + 90000);
	ck_assert_int_eq(in->lease.registration_ts, T0);
	/* Then back by an hour: the dead lease goes on time all the same. */
	ck_assert_int_eq(registry_renew(reg, "APP", "live", -1, STATUS_UNKNOWN,
	    0, tw(T0 - 3600000, m + 60000), NULL), REG_OK);
	ck_assert_int_eq(registry_evict(reg, tw(T0 - 3600000, m + 90000)), 0);
	ck_assert_int_eq(registry_evict(reg, tw(T0 - 3600000, m + 90001)), 1);
	ck_assert_ptr_null(registry_get(reg, "APP", "dead", m + 90001));
	ck_assert_ptr_nonnull(registry_get(reg, "APP", "live", m + 90001));
	/* Delta retention and tombstones measure on the monotonic clock. */
	ck_assert_int_eq(registry_cancel(reg, "APP", "live", 0,
	    tw(T0 + 86400000, m + 100000), -1), REG_OK);
	ck_assert_int_eq(registry_tombstone(reg, "APP", "live", m + 100000),
	    T0 + 86400000);
	registry_purge_deltas(reg, m + 100000 + cf.retention_ms);
	ck_assert_uint_gt(registry_delta_size(reg), 0);
	registry_purge_deltas(reg, m + 100001 + cf.tombstone_ms);
	ck_assert_uint_eq(registry_delta_size(reg), 0);
	ck_assert_int_eq(registry_tombstone(reg, "APP", "live",
	    m + 100001 + cf.tombstone_ms), 0);
	registry_free(reg);
}
END_TEST

/*
 * The skew rule covers a Cancel's time (issue 21): a replicated Cancel
 * stamped beyond it is refused and leaves nothing; a replicated copy's
 * lastUpdatedTimestamp beyond it too; and a tombstone from the future
 * (this clock stepped back since) never raises a client's registration
 * to a time its peers would refuse.
 */
START_TEST(test_future_cancel_refused)
{
	struct registry		*reg;
	const struct instance	*in;
	struct instance		*r;
	struct hk_time		 back;

	cf.max_skew_ms = 60000;
	reg = registry_new(&cf, T0);
	ck_assert_int_eq(registry_register(reg, mkinst("APP", "x", STATUS_UP,
	    T0), 0, TM(T0)), REG_OK);
	ck_assert_int_eq(registry_cancel(reg, "APP", "x", 1, TM(T0 + 1),
	    T0 + 1 + 60001), REG_FUTURE);
	ck_assert_ptr_nonnull(registry_get(reg, "APP", "x", T0 + 1));
	ck_assert_int_eq(registry_tombstone(reg, "APP", "x", T0 + 1), 0);
	ck_assert_int_eq(registry_cancel(reg, "APP", "unknown", 1, TM(T0 + 1),
	    T0 + 86400000), REG_FUTURE);
	ck_assert_int_eq(registry_tombstone(reg, "APP", "unknown", T0 + 1), 0);
	ck_assert_uint_eq(registry_stats(reg)->future_refused, 2);
	/* At the bound it is taken. */
	ck_assert_int_eq(registry_cancel(reg, "APP", "x", 1, TM(T0 + 1),
	    T0 + 1 + 60000), REG_OK);
	ck_assert_int_eq(registry_tombstone(reg, "APP", "x", T0 + 1),
	    T0 + 1 + 60000);

	/* A replicated copy's lastUpdatedTimestamp passes it as well. */
	r = mkinst("APP", "u", STATUS_UP, T0);
	r->last_updated_ts = T0 + 2 + 60001;
	ck_assert_int_eq(registry_register(reg, r, 1, TM(T0 + 2)),
	    REG_FUTURE);
	ck_assert_ptr_null(registry_get(reg, "APP", "u", T0 + 2));

	/*
	 * This node cancels z with its clock an hour ahead, then the clock
	 * steps back (the monotonic one goes on): the client's register is
	 * not raised past that tombstone.
	 */
	ck_assert_int_eq(registry_register(reg, mkinst("APP", "z", STATUS_UP,
	    T0), 0, TM(T0 + 3)), REG_OK);
	ck_assert_int_eq(registry_cancel(reg, "APP", "z", 0,
	    TM(T0 + 3600000), -1), REG_OK);
	back.wall_ms = T0 + 10;
	back.mono_ms = T0 + 3600000 + 10;
	ck_assert_int_eq(registry_register(reg, mkinst("APP", "z", STATUS_UP,
	    T0 + 5), 0, back), REG_OK);
	in = registry_get(reg, "APP", "z", back.mono_ms);
	ck_assert_ptr_nonnull(in);
	ck_assert_int_le(in->last_dirty_ts, back.wall_ms + cf.max_skew_ms);
	ck_assert_int_eq(registry_tombstone(reg, "APP", "z", back.mono_ms), 0);
	/* One within the skew still raises it, as before. */
	ck_assert_int_eq(registry_cancel(reg, "APP", "z", 0,
	    TM(back.wall_ms + 1000), -1), REG_OK);
	ck_assert_int_eq(registry_register(reg, mkinst("APP", "z", STATUS_UP,
	    T0 + 5), 0, TM(back.wall_ms + 2000)), REG_OK);
	ck_assert_int_eq(registry_get(reg, "APP", "z", back.wall_ms + 2000)->
	    last_dirty_ts, back.wall_ms + 1001);
	registry_free(reg);
}
END_TEST

/*
 * Tombstones of instances never held are bounded by max_unheld_tombs and
 * a sixteenth of max_bytes, the oldest going first; those of leases held
 * are kept apart; both count in registry_memory_used (issue 21).
 */
START_TEST(test_unheld_tombstones_bounded)
{
	struct registry	*reg;
	char		 id[32];
	size_t		 held, unheld;
	int		 i;

	cf.max_unheld_tombs = 100;
	reg = registry_new(&cf, T0);
	fill_registry(reg, 3, T0);
	ck_assert_int_eq(registry_cancel(reg, "APP", "i0", 0, TM(T0), -1),
	    REG_OK);
	for (i = 0; i < 250; i++) {
		snprintf(id, sizeof id, "ghost-%d", i);
		ck_assert_int_eq(registry_cancel(reg, "APP", id, i % 2,
		    TM(T0 + i), -1), REG_NOT_FOUND);
	}
	registry_tombstone_counts(reg, &held, &unheld);
	ck_assert_uint_eq(held, 1);
	ck_assert_uint_eq(unheld, 100);
	ck_assert_uint_eq(registry_stats(reg)->tombstones_dropped, 150);
	/* The oldest went; the held one stays. */
	ck_assert_int_eq(registry_tombstone(reg, "APP", "ghost-149", T0), 0);
	ck_assert_int_eq(registry_tombstone(reg, "APP", "ghost-150", T0),
	    T0 + 150);
	ck_assert_int_eq(registry_tombstone(reg, "APP", "i0", T0), T0);
	ck_assert_uint_gt(registry_tombstone_bytes(reg), 100 * 64);
	ck_assert_uint_eq(registry_memory_used(reg), registry_bytes(reg) +
	    registry_delta_bytes(reg) + registry_tombstone_bytes(reg));
	/* Gone with their retention, both kinds. */
	registry_purge_deltas(reg, T0 + 250 + cf.tombstone_ms + 1);
	registry_tombstone_counts(reg, &held, &unheld);
	ck_assert_uint_eq(held + unheld, 0);
	ck_assert_uint_eq(registry_tombstone_bytes(reg), 0);
	registry_free(reg);

	/* A budget of 128 KiB leaves them 8 KiB: fewer than 100 fit. */
	cf.max_bytes = 128 * 1024;
	reg = registry_new(&cf, T0);
	for (i = 0; i < 250; i++) {
		snprintf(id, sizeof id, "ghost-%d", i);
		registry_cancel(reg, "APP", id, 0, TM(T0), -1);
	}
	ck_assert_uint_le(registry_tombstone_bytes(reg), 8 * 1024);
	registry_tombstone_counts(reg, &held, &unheld);
	ck_assert_uint_gt(unheld, 50);
	ck_assert_uint_lt(unheld, 100);
	registry_free(reg);
}
END_TEST

START_TEST(test_future_timestamp_refused)
{
	struct registry		*reg;
	const struct instance	*in;

	cf.max_skew_ms = 60000;
	reg = registry_new(&cf, T0);
	ck_assert_int_eq(registry_register(reg, mkinst("APP", "x", STATUS_UP,
	    T0 + 60001), 0, TM(T0)), REG_FUTURE);
	ck_assert_int_eq(registry_register(reg, mkinst("APP", "x", STATUS_UP,
	    T0 + 315360000000LL), 1, TM(T0)), REG_FUTURE);
	ck_assert_uint_eq(registry_size(reg), 0);
	ck_assert_uint_eq(registry_stats(reg)->future_refused, 2);
	/* Within the skew is fine, and the owner's later copies win. */
	ck_assert_int_eq(registry_register(reg, mkinst("APP", "x", STATUS_UP,
	    T0 + 60000), 0, TM(T0)), REG_OK);
	ck_assert_int_eq(registry_register(reg, mkinst("APP", "x", STATUS_UP,
	    T0 + 60001), 0, TM(T0 + 1)), REG_OK);
	in = registry_get(reg, "APP", "x", T0 + 1);
	ck_assert_int_eq(in->last_dirty_ts, T0 + 60001);
	/* A status change cannot smuggle one in either. */
	ck_assert_int_eq(registry_status_update(reg, "APP", "x", STATUS_DOWN,
	    T0 + 1 + 60001, 1, TM(T0 + 1), -1), REG_FUTURE);
	ck_assert_int_eq(registry_delete_override(reg, "APP", "x", STATUS_UP,
	    T0 + 1 + 60001, 0, TM(T0 + 1), -1), REG_FUTURE);
	ck_assert_int_eq(registry_get(reg, "APP", "x", T0 + 1)->status,
	    STATUS_UP);
	registry_free(reg);
	/* 0 turns the check off. */
	cf.max_skew_ms = 0;
	reg = registry_new(&cf, T0);
	ck_assert_int_eq(registry_register(reg, mkinst("APP", "x", STATUS_UP,
	    T0 + 315360000000LL), 0, TM(T0)), REG_OK);
	registry_free(reg);
}
END_TEST

/* The suite. */
/* An instance with n metadata entries of len-byte values. */
static struct instance *
mkinst_meta(const char *app, const char *id, int n, size_t len,
    int64_t dirty)
{
	struct instance	*in = mkinst(app, id, STATUS_UP, dirty);
	char		 key[16], *v = malloc(len + 1);
	int		 i;

	memset(v, 'v', len);
	v[len] = '\0';
	for (i = 0; i < n; i++) {
		snprintf(key, sizeof key, "k%d", i);
		kvlist_set(&in->metadata, key, v);
	}
	free(v);
	return (in);
}

/*
 * The registry stores every instance trimmed (instance_trim: no spare map
 * capacity) and counts exactly what it holds: after each change, the
 * registry's bytes are one constant lease overhead per lease plus the
 * stored copies' sizes. Status update, metadata update, re-registration
 * with a new copy, a second lease of the same id in another app (the id
 * index, which keeps no copy of the id) and cancels all keep it so.
 */
START_TEST(test_stored_accounting)
{
	struct registry		*reg = registry_new(&cf, T0);
	const struct instance	*a, *b;
	struct applications	*d;
	struct instance		*in;
	struct kvlist		 kv;
	size_t			 lease;

	in = mkinst("APP", "x", STATUS_UP, 1);
	kvlist_set(&in->metadata, "zone", "a");
	ck_assert_int_eq(registry_register(reg, in, 0, TM(T0)), REG_OK);
	ck_assert_ptr_nonnull(a = registry_get(reg, "APP", "x", T0));
	ck_assert_uint_eq(a->metadata.cap, 1);
	ck_assert_uint_gt(registry_bytes(reg), instance_stored_size(a));
	lease = registry_bytes(reg) - instance_stored_size(a);
	ck_assert_uint_lt(lease, 256);

	/* Status update: scalars change in place. */
	ck_assert_int_eq(registry_status_update(reg, "APP", "x",
	    STATUS_OUT_OF_SERVICE, 2, 0, TM(T0 + 1), 0), REG_OK);
	ck_assert_ptr_eq(registry_get(reg, "APP", "x", T0 + 1), a);
	ck_assert_int_eq(a->status, STATUS_OUT_OF_SERVICE);
	ck_assert_uint_eq(registry_bytes(reg), lease +
	    instance_stored_size(a));

	/* Metadata update: merged, trimmed again, counted again. */
	memset(&kv, 0, sizeof kv);
	kvlist_set(&kv, "zone", "b-with-a-longer-value");
	kvlist_set(&kv, "rack", "r1");
	ck_assert_int_eq(registry_update_metadata(reg, "APP", "x", &kv,
	    TM(T0 + 2)), REG_OK);
	kvlist_clear(&kv);
	ck_assert_ptr_nonnull(a = registry_get(reg, "APP", "x", T0 + 2));
	ck_assert_uint_eq(a->metadata.cap, 2);
	ck_assert_str_eq(kvlist_get(&a->metadata, "zone"),
	    "b-with-a-longer-value");
	ck_assert_str_eq(kvlist_get(&a->metadata, "rack"), "r1");
	ck_assert_str_eq(a->host_name, "host.example");
	ck_assert_uint_eq(registry_bytes(reg), lease +
	    instance_stored_size(a));

	/* Re-registration with a new copy replaces the stored one. */
	in = mkinst("APP", "x", STATUS_UP, 3);
	free(in->host_name);
	in->host_name = strdup("a-much-longer-host-name.example.com");
	ck_assert_int_eq(registry_register(reg, in, 0, TM(T0 + 3)), REG_OK);
	ck_assert_ptr_nonnull(a = registry_get(reg, "APP", "x", T0 + 3));
	ck_assert_str_eq(a->host_name, "a-much-longer-host-name.example.com");
	ck_assert_uint_eq(a->metadata.n, 0);
	ck_assert_uint_eq(registry_bytes(reg), lease +
	    instance_stored_size(a));

	/* The same id in a second app: both in the id index, newest first. */
	ck_assert_int_eq(registry_register(reg, mkinst("OTHER", "x",
	    STATUS_UP, 4), 0, TM(T0 + 4)), REG_OK);
	ck_assert_ptr_nonnull(b = registry_get(reg, "OTHER", "x", T0 + 4));
	ck_assert_ptr_eq(registry_find_id(reg, "x", T0 + 4), b);
	ck_assert_uint_eq(registry_bytes(reg), 2 * lease +
	    instance_stored_size(a) + instance_stored_size(b));
	registry_set_override(reg, "x", STATUS_DOWN, T0 + 4);
	ck_assert_int_eq(a->overridden_status, STATUS_DOWN);
	ck_assert_int_eq(b->overridden_status, STATUS_DOWN);

	/* Cancels: the older one moves up in the index, then none is left. */
	ck_assert_int_eq(registry_cancel(reg, "OTHER", "x", 0, TM(T0 + 5), -1),
	    REG_OK);
	ck_assert_ptr_eq(registry_find_id(reg, "x", T0 + 5), a);
	ck_assert_uint_eq(registry_bytes(reg), lease +
	    instance_stored_size(a));
	ck_assert_int_eq(registry_cancel(reg, "APP", "x", 0, TM(T0 + 6), -1),
	    REG_OK);
	ck_assert_ptr_null(registry_find_id(reg, "x", T0 + 6));
	ck_assert_uint_eq(registry_bytes(reg), 0);
	/* The delta queue's DELETED copies still read (compact, packed). */
	d = registry_delta(reg, T0 + 7);
	ck_assert_ptr_nonnull(snap_find(d, "APP", "x"));
	ck_assert_int_eq(snap_find(d, "APP", "x")->action_type,
	    ACTION_DELETED);
	ck_assert_str_eq(instance_id(snap_find(d, "OTHER", "x")), "x");
	applications_free(d);
	registry_free(reg);
}
END_TEST

START_TEST(test_bytes_accounting)
{
	struct registry		*reg = registry_new(&cf, T0);
	struct applications	*d;
	const struct instance	*del;
	struct instance		*in;
	struct kvlist		 kv;
	size_t			 sz, b1, b2, q0;

	q0 = registry_delta_bytes(reg);
	ck_assert_uint_eq(registry_bytes(reg), 0);
	in = mkinst_meta("APP", "a", 40, 1000, 1);
	sz = instance_stored_size(in);
	ck_assert_uint_gt(sz, 40 * 1000);
	ck_assert_int_eq(registry_register(reg, in, 0, TM(T0)), REG_OK);
	/* Stored trimmed: the metadata array's spare room is given back. */
	sz -= 24 * sizeof(struct kv);
	ck_assert_uint_eq(instance_stored_size(registry_get(reg, "APP", "a",
	    T0)), sz);
	b1 = registry_bytes(reg);
	ck_assert_uint_ge(b1, sz);
	ck_assert_uint_lt(b1, sz + 1024);

	/* A smaller copy replaces it: the counter follows. */
	ck_assert_int_eq(registry_register(reg, mkinst("APP", "a", STATUS_UP,
	    2), 0, TM(T0 + 1)), REG_OK);
	b2 = registry_bytes(reg);
	ck_assert_uint_lt(b2, 2048);

	/*
	 * A metadata merge: stored as a packed copy, the counter follows it
	 * exactly (the copy registered here was not packed, so it may shrink).
	 */
	sz = instance_stored_size(registry_get(reg, "APP", "a", T0 + 1));
	memset(&kv, 0, sizeof kv);
	kvlist_set(&kv, "zone", "eu-west-1a-with-a-long-value");
	ck_assert_int_eq(registry_update_metadata(reg, "APP", "a", &kv,
	    TM(T0 + 2)), REG_OK);
	kvlist_clear(&kv);
	ck_assert(registry_get(reg, "APP", "a", T0 + 2)->packed);
	ck_assert_str_eq(kvlist_get(&registry_get(reg, "APP", "a",
	    T0 + 2)->metadata, "zone"), "eu-west-1a-with-a-long-value");
	ck_assert_uint_eq(registry_bytes(reg), b2 - sz +
	    instance_stored_size(registry_get(reg, "APP", "a", T0 + 2)));

	/* A second lease adds exactly its own cost. */
	in = mkinst_meta("APP", "b", 10, 100, 1);
	sz = instance_stored_size(in);
	b2 = registry_bytes(reg);
	ck_assert_int_eq(registry_register(reg, in, 0, TM(T0 + 3)), REG_OK);
	ck_assert_uint_ge(registry_bytes(reg) - b2, sz);
	ck_assert_uint_lt(registry_bytes(reg) - b2, sz + 512);

	/*
	 * Cancelled: the registry's count drops to zero and the delta queue
	 * holds a compact DELETED copy, without the 40 KB of metadata.
	 */
	registry_cancel(reg, "APP", "b", 0, TM(T0 + 4), -1);
	ck_assert_int_eq(registry_register(reg, mkinst_meta("APP", "a", 40,
	    1000, 3), 0, TM(T0 + 5)), REG_OK);
	registry_cancel(reg, "APP", "a", 0, TM(T0 + 6), -1);
	ck_assert_uint_eq(registry_bytes(reg), 0);
	ck_assert_uint_gt(registry_delta_bytes(reg), q0);
	ck_assert_uint_lt(registry_delta_bytes(reg), 4096);
	d = registry_delta(reg, T0 + 7);
	ck_assert_ptr_nonnull(del = snap_find(d, "APP", "a"));
	ck_assert_int_eq(del->action_type, ACTION_DELETED);
	ck_assert_str_eq(instance_id(del), "a");
	ck_assert_uint_eq(del->metadata.n, 0);
	applications_free(d);
	/* The cancel's tombstone counts too. */
	ck_assert_uint_gt(registry_tombstone_bytes(reg), 0);
	ck_assert_uint_eq(registry_memory_used(reg),
	    registry_delta_bytes(reg) + registry_tombstone_bytes(reg));

	/* Past retention the cancelled copies are freed and uncounted. */
	registry_purge_deltas(reg, T0 + 7 + cf.retention_ms + 1);
	ck_assert_uint_eq(registry_delta_size(reg), 0);
	ck_assert_uint_lt(registry_delta_bytes(reg), 2048);
	registry_free(reg);
}
END_TEST

START_TEST(test_instance_too_large)
{
	struct registry	*reg;
	struct kvlist	 kv;
	char		 v[1001];

	cf.max_instance_bytes = 8192;
	reg = registry_new(&cf, T0);
	ck_assert_int_eq(registry_register(reg, mkinst_meta("APP", "big", 10,
	    1000, 1), 1, TM(T0)), REG_TOO_LARGE);
	ck_assert_uint_eq(registry_size(reg), 0);
	ck_assert_int_eq(registry_register(reg, mkinst_meta("APP", "ok", 4,
	    1000, 1), 0, TM(T0)), REG_OK);
	/* A merge past the bound changes nothing. */
	memset(v, 'v', 1000);
	v[1000] = '\0';
	memset(&kv, 0, sizeof kv);
	kvlist_set(&kv, "x1", v);
	kvlist_set(&kv, "x2", v);
	kvlist_set(&kv, "x3", v);
	kvlist_set(&kv, "x4", v);
	kvlist_set(&kv, "x5", v);
	ck_assert_int_eq(registry_update_metadata(reg, "APP", "ok", &kv,
	    TM(T0 + 1)), REG_TOO_LARGE);
	kvlist_clear(&kv);
	ck_assert_uint_eq(registry_get(reg, "APP", "ok", T0 + 1)->metadata.n,
	    4);
	ck_assert_uint_eq(registry_stats(reg)->refused_too_large, 2);
	registry_free(reg);
}
END_TEST

/*
 * The bound judges a metadata merge by the bytes the merged copy will
 * hold stored (packed), as a registration's: a packed instance just under
 * max-instance-bytes takes a small merge (before: its unpacked copy, a
 * malloc per string, was judged, and the merge got REG_TOO_LARGE), and
 * stays packed.
 */
START_TEST(test_merge_judged_packed)
{
	struct registry	*reg;
	struct instance	*in, *p;
	const struct instance	*got;
	struct kvlist	 kv;
	size_t		 packed;

	in = mkinst_meta("APP", "near", 8, 100, 1);
	p = instance_pack(in);
	instance_free(in);
	packed = instance_stored_size(p);
	cf.max_instance_bytes = packed + 64;
	reg = registry_new(&cf, T0);
	ck_assert_int_eq(registry_register(reg, p, 0, TM(T0)), REG_OK);
	memset(&kv, 0, sizeof kv);
	kvlist_set(&kv, "z", "1");
	ck_assert_int_eq(registry_update_metadata(reg, "APP", "near", &kv,
	    TM(T0 + 1)), REG_OK);
	kvlist_clear(&kv);
	got = registry_get(reg, "APP", "near", T0 + 1);
	ck_assert(got->packed);
	ck_assert_str_eq(kvlist_get(&got->metadata, "z"), "1");
	ck_assert_uint_le(instance_stored_size(got), cf.max_instance_bytes);
	ck_assert_uint_eq(registry_stats(reg)->refused_too_large, 0);
	registry_free(reg);
}
END_TEST

/*
 * How long a lookup lends (registry.h, ARCHITECTURE.md): until the next
 * call that changes the registry, not until the loop turn ends. A
 * re-registration in the same turn puts another instance in its place.
 */
START_TEST(test_lookup_lent_until_next_change)
{
	struct registry		*reg = registry_new(&cf, T0);
	const struct instance	*before, *after;

	ck_assert_int_eq(registry_register(reg, mkinst("APP", "i1", STATUS_UP,
	    1), 0, TM(T0)), REG_OK);
	before = registry_get(reg, "APP", "i1", T0);
	ck_assert_ptr_nonnull(before);
	/* A read is no change: the same instance. */
	ck_assert_ptr_eq(registry_get(reg, "APP", "i1", T0), before);
	ck_assert_int_eq(registry_register(reg, mkinst("APP", "i1",
	    STATUS_DOWN, 2), 0, TM(T0 + 1)), REG_OK);
	after = registry_get(reg, "APP", "i1", T0 + 1);
	ck_assert_ptr_nonnull(after);
	ck_assert_ptr_ne(after, before);
	ck_assert_int_eq(after->status, STATUS_DOWN);
	registry_free(reg);
}
END_TEST

/* Expect registry_check to fail with a cause naming what. */
static void
assert_breach(const struct registry *reg, const char *what)
{
	char	*cause = NULL;

	ck_assert_int_eq(registry_check(reg, &cause), -1);
	ck_assert_msg(cause != NULL && strstr(cause, what) != NULL,
	    "%s: want %s", cause, what);
	free(cause);
}

/*
 * registry_check is able to fail: each counter and index broken on
 * purpose is named, and the registry passes again once it is mended.
 */
START_TEST(test_registry_check_finds_breaches)
{
	struct registry	*reg = registry_new(&cf, T0);
	struct reg_app	*a;
	struct lease	*l, *other;
	char		*cause = NULL;
	size_t		 save;

	fill_registry(reg, 4, T0);
	ck_assert_int_eq(registry_register(reg, mkinst("B", "b1", STATUS_DOWN,
	    1), 0, TM(T0)), REG_OK);
	ck_assert_int_eq(registry_cancel(reg, "APP", "i3", 0, TM(T0 + 1), 0),
	    REG_OK);
	registry_set_override(reg, "i1", STATUS_OUT_OF_SERVICE, T0);
	ck_assert_msg(registry_check(reg, &cause) == 0, "%s", cause);
	a = registry_app_find(reg, "APP");
	l = a->leases[0];
	other = a->leases[1];

	reg->counts[STATUS_UP]++;
	assert_breach(reg, "UP counted");
	reg->counts[STATUS_UP]--;
	a->counts[STATUS_DOWN]++;
	assert_breach(reg, "APP: 1 DOWN counted");
	a->counts[STATUS_DOWN]--;
	reg->size++;
	assert_breach(reg, "size");
	reg->size--;
	reg->bytes += 8;
	assert_breach(reg, "bytes");
	reg->bytes -= 8;
	l->refs++;
	assert_breach(reg, "refs");
	l->refs--;
	l->idx = 1;
	assert_breach(reg, "idx 1 at position 0");
	l->idx = 0;
	a->leases[0] = other;
	a->leases[1] = l;
	assert_breach(reg, "idx");
	a->leases[0] = l;
	a->leases[1] = other;
	reg->qbytes++;
	assert_breach(reg, "qbytes");
	reg->qbytes--;
	save = reg->qcap;
	reg->qcap = 0;
	assert_breach(reg, "qcap");
	reg->qcap = save;
	reg->noverrides++;
	assert_breach(reg, "overrides");
	reg->noverrides--;
	reg->ntombs--;
	assert_breach(reg, "tombstones");
	reg->ntombs++;
	l->id_hash ^= 1;
	assert_breach(reg, "stale key hashes");
	l->id_hash ^= 1;
	reg->ev.uncounted++;
	assert_breach(reg, "uncounted");
	reg->ev.uncounted--;
	ck_assert_msg(registry_check(reg, &cause) == 0, "%s", cause);
	registry_free(reg);
}
END_TEST

/*
 * Leases marked with REGISTRY_UNCOUNTED_KEY (airlift announcements) are
 * neither expected clients nor counted renewals, on register, renew,
 * cancel, eviction and the start-up sync's open-for-traffic count.
 */
START_TEST(test_uncounted_leases)
{
	struct registry	*reg;
	struct instance	*in;
	char		 id[32];
	int		 i, base;

	reg = registry_new(&cf, T0);
	base = registry_expected_clients(reg);
	for (i = 0; i < 3; i++) {
		snprintf(id, sizeof id, "n:%d", i);
		in = mkinst("AIRLIFT-TRINO", id, STATUS_UP, 1);
		kvlist_set(&in->metadata, REGISTRY_UNCOUNTED_KEY, "trino");
		ck_assert_int_eq(registry_register(reg, in, 0, TM(T0)), REG_OK);
	}
	ck_assert_int_eq(registry_expected_clients(reg), base);
	ck_assert_int_eq(registry_register(reg, mkinst("APP", "e1", STATUS_UP,
	    1), 0, TM(T0)), REG_OK);
	ck_assert_int_eq(registry_expected_clients(reg), base + 1);

	/* Only the Eureka heartbeat counts in the minute's renewals. */
	for (i = 0; i < 3; i++) {
		snprintf(id, sizeof id, "n:%d", i);
		ck_assert_int_eq(registry_renew(reg, "AIRLIFT-TRINO", id, -1,
		    STATUS_UNKNOWN, 0, TM(T0 + 1000), NULL), REG_OK);
	}
	ck_assert_int_eq(registry_renew(reg, "APP", "e1", -1, STATUS_UNKNOWN,
	    0, TM(T0 + 1000), NULL), REG_OK);
	registry_tick_minute(reg, T0 + 60000);
	ck_assert_int_eq(registry_renews_last_min(reg), 1);

	/* Cancelling one leaves the expected count alone. */
	ck_assert_int_eq(registry_cancel(reg, "AIRLIFT-TRINO", "n:0", 0,
	    TM(T0 + 2000), 0), REG_OK);
	ck_assert_int_eq(registry_expected_clients(reg), base + 1);

	/* What the server's gate observer subtracts from the sync's count. */
	ck_assert_int_eq(registry_uncounted(reg), 2);
	registry_open_for_traffic(reg, 1, T0 + 3000);

	/*
	 * Self-preservation (no renewals last minute) keeps the expired
	 * Eureka lease but not the expired uncounted ones.
	 */
	registry_tick_minute(reg, T0 + 120000);
	ck_assert(!registry_lease_expiration_enabled(reg));
	ck_assert_int_eq(registry_evict(reg, TM(T0 + 200000)), 2);
	ck_assert_uint_eq(registry_size(reg), 1);
	ck_assert_ptr_nonnull(registry_app_find(reg, "APP"));
	ck_assert_ptr_null(registry_app_find(reg, "AIRLIFT-TRINO"));
	registry_free(reg);
}
END_TEST

START_TEST(test_memory_budget)
{
	struct registry	*reg;
	char		 id[32];
	int		 n;

	cf.max_bytes = 64 * 1024;
	reg = registry_new(&cf, T0);
	for (n = 0; n < 100; n++) {
		snprintf(id, sizeof id, "i%d", n);
		if (registry_register(reg, mkinst_meta("APP", id, 5, 1000, 1),
		    0, TM(T0)) != REG_OK)
			break;
	}
	ck_assert_int_gt(n, 5);
	ck_assert_int_lt(n, 100);
	ck_assert_uint_eq(registry_size(reg), (size_t)n);
	ck_assert_uint_le(registry_memory_used(reg), cf.max_bytes);
	ck_assert_uint_eq(registry_stats(reg)->refused_memory, 1);

	/* What is registered stays, renews and may re-register as it is. */
	ck_assert_int_eq(registry_renew(reg, "APP", "i0", -1, STATUS_UNKNOWN,
	    0, TM(T0 + 1), NULL), REG_OK);
	ck_assert_int_eq(registry_register(reg, mkinst_meta("APP", "i0", 5,
	    1000, 2), 0, TM(T0 + 2)), REG_OK);
	/* ... but not grow past the budget. */
	ck_assert_int_eq(registry_register(reg, mkinst_meta("APP", "i0", 50,
	    1000, 3), 0, TM(T0 + 3)), REG_NO_MEMORY);
	ck_assert_uint_eq(registry_get(reg, "APP", "i0", T0 + 3)->metadata.n,
	    5);
	ck_assert_uint_eq(registry_size(reg), (size_t)n);

	/* Room made by a cancel is usable once the queue lets go of it. */
	registry_cancel(reg, "APP", "i1", 0, TM(T0 + 4), -1);
	registry_cancel(reg, "APP", "i2", 0, TM(T0 + 4), -1);
	ck_assert_int_eq(registry_register(reg, mkinst_meta("APP", "new", 5,
	    1000, 1), 0, TM(T0 + 5)), REG_OK);

	/* The caller's encodings count against the same budget. */
	registry_set_external_bytes(reg, REG_EXT_ENCODINGS, cf.max_bytes);
	registry_cancel(reg, "APP", "i3", 0, TM(T0 + 6), -1);
	ck_assert_int_eq(registry_register(reg, mkinst("APP", "tiny",
	    STATUS_UP, 1), 0, TM(T0 + 7)), REG_NO_MEMORY);
	registry_set_external_bytes(reg, REG_EXT_ENCODINGS, 0);
	ck_assert_int_eq(registry_register(reg, mkinst("APP", "tiny",
	    STATUS_UP, 1), 0, TM(T0 + 8)), REG_OK);
	registry_free(reg);
}
END_TEST

START_TEST(test_delta_queue_bound)
{
	struct registry		*reg;
	struct applications	*d;
	int64_t			 t = T0;
	int			 i;

	cf.max_delta_bytes = 16384;
	reg = registry_new(&cf, T0);
	ck_assert_int_eq(registry_register(reg, mkinst("APP", "keep",
	    STATUS_UP, 1), 0, TM(t)), REG_OK);
	ck_assert(registry_delta_complete(reg, t));
	/* Churn of one big instance: compact records, bounded in bytes. */
	for (i = 0; i < 300; i++) {
		t++;
		ck_assert_int_eq(registry_register(reg, mkinst_meta("APP", "c",
		    20, 1000, t), 0, TM(t)), REG_OK);
		registry_cancel(reg, "APP", "c", 0, TM(t), -1);
		ck_assert_uint_le(registry_delta_bytes(reg),
		    cf.max_delta_bytes);
	}
	ck_assert_uint_gt(registry_stats(reg)->delta_dropped, 0);
	/* "keep"'s record went early: deltas are incomplete, and say so. */
	d = registry_delta(reg, t);
	ck_assert_ptr_null(snap_find(d, "APP", "keep"));
	ck_assert_ptr_nonnull(snap_find(d, "APP", "c"));
	applications_free(d);
	ck_assert(!registry_delta_complete(reg, t));
	/* At least keep's record (at T0) was still in its retention time. */
	ck_assert(!registry_delta_complete(reg, T0 + cf.retention_ms));
	/* Once every dropped record would have expired, complete again. */
	ck_assert(registry_delta_complete(reg, t + cf.retention_ms + 1));
	/* Expiry by retention is no truncation. */
	registry_purge_deltas(reg, t + cf.retention_ms + 1);
	ck_assert(registry_delta_complete(reg, t + cf.retention_ms + 1));
	registry_free(reg);
}
END_TEST

static Suite *
registry_suite(void)
{
	Suite	*s = suite_create("registry");
	TCase	*tc = tcase_create("core");
	TCase	*tcs = tcase_create("scale");
	TCase	*tco;

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_register_renew_cancel);
	tcase_add_test(tc, test_reregister_older_dirty);
	tcase_add_test(tc, test_registration_ts_origin);
	tcase_add_test(tc, test_renew_dirty_timestamps);
	tcase_add_test(tc, test_override_lifecycle);
	tcase_add_test(tc, test_override_from_peer_and_register);
	tcase_add_test(tc, test_override_ttl);
	tcase_add_test(tc, test_event_app_hash);
	tcase_add_test(tc, test_last_app_remembered);
	tcase_add_test(tc, test_metadata_update);
	tcase_add_test(tc, test_heartbeat_keeps_gen);
	tcase_add_test(tc, test_delta_order_dedupe_retention);
	tcase_add_test(tc, test_hashcode_each_change);
	tcase_add_test(tc, test_vip_exact_match);
	tcase_add_test(tc, test_vip_list_rule);
	tcase_add_test(tc, test_expiry_after_duration);
	tcase_add_test(tc, test_expired_visible_while_self_preserving);
	tcase_add_test(tc, test_foreach_live);
	tcase_add_test(tc, test_selfpreserve_blocks_eviction);
	tcase_add_test(tc, test_eviction_allowed_above_threshold);
	tcase_add_test(tc, test_eviction_cap_per_run);
	tcase_add_test(tc, test_eviction_in_slices);
	tcase_add_test(tc, test_app_status_counts);
	tcase_add_test(tc, test_eviction_compensation);
	tcase_add_test(tc, test_threshold_follows_registrations);
	tcase_add_test(tc, test_tombstones);
	tcase_add_test(tc, test_find_id);
	tcase_add_test(tc, test_shared_id_many_apps);
	tcase_add_test(tc, test_max_instances);
	tcase_add_test(tc, test_observers);
	tcase_add_test(tc, test_stats);
	tcase_add_test(tc, test_recent_rings);
	tcase_add_test(tc, test_bytes_accounting);
	tcase_add_test(tc, test_stored_accounting);
	tcase_add_test(tc, test_instance_too_large);
	tcase_add_test(tc, test_merge_judged_packed);
	tcase_add_test(tc, test_memory_budget);
	tcase_add_test(tc, test_uncounted_leases);
	tcase_add_test(tc, test_delta_queue_bound);
	tcase_add_test(tc, test_registry_check_finds_breaches);
	tcase_add_test(tc, test_lookup_lent_until_next_change);
	suite_add_tcase(s, tc);

	tco = tcase_create("ordering");
	tcase_add_checked_fixture(tco, setup, NULL);
	tcase_add_test(tco, test_tombstone_refuses_stale_copy);
	tcase_add_test(tco, test_cancel_before_register);
	tcase_add_test(tco, test_newer_registration_beats_tombstone);
	tcase_add_test(tco, test_replicated_cancel_spares_newer_copy);
	tcase_add_test(tco, test_reconcile_origin_times);
	tcase_add_test(tco, test_reconcile_repairs_override);
	tcase_add_test(tco, test_reconcile_hash_breaks_ties);
	tcase_add_test(tco, test_reconcile_expired_copy);
	tcase_add_test(tco, test_replicated_status_keeps_origin_stamp);
	tcase_add_test(tco, test_copy_hash_covers_fields);
	tcase_add_test(tco, test_wall_step_changes_no_expiry);
	tcase_add_test(tco, test_future_timestamp_refused);
	tcase_add_test(tco, test_future_cancel_refused);
	tcase_add_test(tco, test_unheld_tombstones_bounded);
	suite_add_tcase(s, tco);

	tcase_add_checked_fixture(tcs, setup, NULL);
	tcase_add_test(tcs, test_scale_consistency);
	tcase_set_timeout(tcs, 600);
	suite_add_tcase(s, tcs);
	return (s);
}

/* Run the suite. */
int
main(void)
{
	return (check_run(registry_suite()));
}
