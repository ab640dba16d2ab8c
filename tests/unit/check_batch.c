/*
 * tests/unit/check_batch.c: the apply of a replication batch (batch.c)
 * on a real registry, with time passed by hand: every action and each of
 * its per-item answers (200, 400 bad item or future timestamp, 404 for an
 * unknown instance, 409 with our copy or against a tombstone, 413 and
 * 503 for the bounds), validation failures swallowed, what is counted and
 * noted for the caller, that applied items reach the observers as
 * replicated (so they are not replicated on), and that applying the same
 * batch twice leaves the registry as once. Decoded instances are packed
 * (one block): the writes on them (a blank Amazon id filled, a metadata
 * merge) unpack them first, and the registry's byte count follows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "batch.h"
#include "cache.h"
#include "fixture.h"
#include "instance.h"
#include "json.h"
#include "registry.h"
#include "repl.h"
#include "testutil.h"

#define T0	1700000000000LL
#define AT(ms)	((struct hk_time){ .wall_ms = T0 + (ms), \
		    .mono_ms = (ms) })
#define SKEW	300000

static struct registry_conf	 cf;
static struct batch_limits	 lim;

/* What the observer saw. */
struct seen {
	int	events;
	int	not_replicated;
	int	by_type[REG_EV_METADATA + 1];
};

/* Defaults as heurekad passes them, with small, known bounds. */
static void
setup(void)
{
	registry_conf_defaults(&cf);
	cf.max_skew_ms = SKEW;
	memset(&lim, 0, sizeof lim);
	lim.max_metadata_entries = 4;
	lim.max_metadata_key_bytes = 16;
	lim.max_metadata_value_bytes = 2048;
	lim.max_instance_bytes = cf.max_instance_bytes;
	lim.memory_budget = 12345;
	lim.max_instances = cf.max_instances;
	lim.max_clock_skew_ms = SKEW;
}

/* Observer: count events, and those not marked replicated. */
static void
seen_cb(const struct registry_event *ev, void *arg)
{
	struct seen	*s = arg;

	s->events++;
	if (!ev->replicated)
		s->not_replicated++;
	if ((unsigned)ev->type <= REG_EV_METADATA)
		s->by_type[ev->type]++;
}

/* A registrable instance of APP as a peer sends it. */
static struct instance *
mkinst(const char *id, int64_t dirty)
{
	struct instance	*in = fixture_instance("APP", id, STATUS_UP, dirty);

	in->has_dc = in->has_dc_name = 1;
	in->dc_name = DC_MYOWN;
	in->last_updated_ts = dirty;
	return (in);
}

/* Append an item; app or id NULL leaves it out. */
static struct repl_item *
add(struct repl_list *l, enum repl_action a, const char *app, const char *id)
{
	struct repl_item	*it = repl_list_add(l);

	it->action = a;
	it->app_name = app != NULL ? strdup(app) : NULL;
	it->id = id != NULL ? strdup(id) : NULL;
	return (it);
}

/* Append a Register item carrying in. */
static struct repl_item *
add_register(struct repl_list *l, struct instance *in)
{
	struct repl_item	*it = add(l, REPL_REGISTER, "app",
				    instance_id(in));

	it->info = in;
	it->has_last_dirty = 1;
	it->last_dirty_ts = in->last_dirty_ts;
	return (it);
}

/* Append an item with a lastDirtyTimestamp. */
static struct repl_item *
add_dirty(struct repl_list *l, enum repl_action a, const char *id,
    int64_t dirty)
{
	struct repl_item	*it = add(l, a, "app", id);

	it->has_last_dirty = 1;
	it->last_dirty_ts = dirty;
	return (it);
}

/* Apply l at now into out (cleared first) and free the list. */
static void
apply(struct registry *reg, struct cache *c, struct repl_list *l,
    struct repl_response *out, struct hk_time now, struct batch_result *r)
{
	repl_response_clear(out);
	batch_apply(reg, c, &lim, l, out, now, r);
	ck_assert_uint_eq(out->n, l->n);
	repl_list_clear(l);
}

/* Apply one Register of in at now; the status answered. */
static int
apply_register(struct registry *reg, struct instance *in, struct hk_time now)
{
	struct repl_list	 l = { 0 };
	struct repl_response	 out = { 0 };
	struct batch_result	 r = { 0 };
	int			 code;

	add_register(&l, in);
	apply(reg, NULL, &l, &out, now, &r);
	code = out.items[0].status_code;
	repl_response_clear(&out);
	return (code);
}

START_TEST(test_register)
{
	struct registry		*reg = registry_new(&cf, T0);
	struct repl_list	 l = { 0 };
	struct repl_response	 out = { 0 };
	struct batch_result	 r = { 0 };
	struct seen		 s = { 0 };
	const struct instance	*in;

	registry_add_observer(reg, seen_cb, &s);
	add_register(&l, mkinst("i1", 100));
	batch_apply(reg, NULL, &lim, &l, &out, AT(1000), &r);
	ck_assert_uint_eq(out.n, 1);
	ck_assert_int_eq(out.items[0].status_code, 200);
	ck_assert_ptr_null(out.items[0].entity);
	/* Taken over, not copied. */
	ck_assert_ptr_null(l.items[0].info);
	/* The item's lower-case app name is matched upper case. */
	ck_assert_ptr_nonnull(in = registry_get(reg, "APP", "i1", 1000));
	ck_assert_int_eq(in->last_dirty_ts, 100);
	ck_assert_int_eq(s.by_type[REG_EV_REGISTER], 1);
	ck_assert_int_eq(s.not_replicated, 0);
	ck_assert_uint_eq(r.limit_metadata + r.limit_metadata_entries +
	    r.limit_instances, 0);
	repl_list_clear(&l);
	repl_response_clear(&out);
	registry_free(reg);
}
END_TEST

START_TEST(test_register_invalid_swallowed)
{
	struct registry		*reg = registry_new(&cf, T0);
	struct repl_list	 l = { 0 };
	struct repl_response	 out = { 0 };
	struct batch_result	 r = { 0 };
	struct seen		 s = { 0 };
	struct instance		*in;
	size_t			 i;

	registry_add_observer(reg, seen_cb, &s);
	in = mkinst("i1", 100);
	free(in->host_name);
	in->host_name = NULL;			/* Missing hostname */
	add_register(&l, in);
	in = mkinst("i2", 100);
	free(in->app);
	in->app = strdup("OTHER");		/* Mismatched appName */
	add_register(&l, in);
	in = mkinst("i3", 100);
	in->has_dc = 0;			/* Missing dataCenterInfo */
	add_register(&l, in);
	add(&l, REPL_REGISTER, "app", "i4");	/* no instance at all */
	apply(reg, NULL, &l, &out, AT(1000), &r);
	/* Eureka answers 200 and drops them: a resend would fail alike. */
	for (i = 0; i < out.n; i++)
		ck_assert_int_eq(out.items[i].status_code, 200);
	ck_assert_uint_eq(registry_size(reg), 0);
	ck_assert_int_eq(s.events, 0);
	repl_response_clear(&out);
	registry_free(reg);
}
END_TEST

START_TEST(test_register_metadata_bounds)
{
	struct registry		*reg = registry_new(&cf, T0);
	struct repl_list	 l = { 0 };
	struct repl_response	 out = { 0 };
	struct batch_result	 r = { 0 };
	struct instance		*in;
	char			 key[32];
	int			 i;

	in = mkinst("many", 100);
	for (i = 0; i < 5; i++) {
		snprintf(key, sizeof key, "k%d", i);
		kvlist_set(&in->metadata, key, "v");
	}
	add_register(&l, in);
	in = mkinst("long1", 100);
	kvlist_set(&in->metadata, "a-key-longer-than-16", "v");
	add_register(&l, in);
	in = mkinst("long2", 100);
	kvlist_set(&in->metadata, "k", "v");
	kvlist_set(&in->metadata, "another-key-too-long", "v");
	add_register(&l, in);
	in = mkinst("ok", 100);
	kvlist_set(&in->metadata, "sixteen-bytes-ok", "v");
	add_register(&l, in);
	apply(reg, NULL, &l, &out, AT(1000), &r);
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(out.items[i].status_code, 200);
	ck_assert_uint_eq(registry_size(reg), 1);
	ck_assert_ptr_nonnull(registry_get(reg, "APP", "ok", 1000));
	ck_assert_uint_eq(r.limit_metadata_entries, 1);
	ck_assert_uint_eq(r.limit_metadata, 2);
	/* The first line of the kind is kept for the log. */
	ck_assert_str_eq(r.note[BATCH_NOTE_METADATA],
	    "limit: too many metadata entries (5 > 4)");
	repl_response_clear(&out);
	registry_free(reg);
}
END_TEST

START_TEST(test_register_too_large)
{
	struct registry		*reg;
	struct repl_list	 l = { 0 };
	struct repl_response	 out = { 0 };
	struct batch_result	 r = { 0 };
	struct instance		*in;
	char			 big[1025];

	cf.max_instance_bytes = 1024;
	lim.max_instance_bytes = 1024;
	reg = registry_new(&cf, T0);
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	in = mkinst("big", 100);
	kvlist_set(&in->metadata, "blob", big);
	add_register(&l, in);
	add_register(&l, mkinst("small", 100));
	apply(reg, NULL, &l, &out, AT(1000), &r);
	ck_assert_int_eq(out.items[0].status_code, 413);
	ck_assert_int_eq(out.items[1].status_code, 200);
	ck_assert_ptr_null(registry_get(reg, "APP", "big", 1000));
	ck_assert_ptr_nonnull(registry_get(reg, "APP", "small", 1000));
	ck_assert_str_eq(r.note[BATCH_NOTE_SIZE], "limit: APP/big refused: "
	    "instance too large (eureka.server.max-instance-bytes 1024)");
	repl_response_clear(&out);
	registry_free(reg);
}
END_TEST

START_TEST(test_register_future_timestamp)
{
	struct registry		*reg = registry_new(&cf, T0);
	struct repl_list	 l = { 0 };
	struct repl_response	 out = { 0 };
	struct batch_result	 r = { 0 };

	/* At the skew bound is taken; one millisecond past it is not. */
	add_register(&l, mkinst("edge", T0 + 1000 + SKEW));
	add_register(&l, mkinst("ahead", T0 + 1000 + SKEW + 1));
	apply(reg, NULL, &l, &out, AT(1000), &r);
	ck_assert_int_eq(out.items[0].status_code, 200);
	ck_assert_int_eq(out.items[1].status_code, 400);
	ck_assert_ptr_null(registry_get(reg, "APP", "ahead", 1000));
	ck_assert_str_eq(r.note[BATCH_NOTE_FUTURE], "APP/ahead refused: "
	    "lastDirtyTimestamp is ahead of this server's clock by more "
	    "than eureka.server.max-clock-skew-ms (300000)");
	repl_response_clear(&out);
	registry_free(reg);
}
END_TEST

START_TEST(test_register_stale_vs_tombstone)
{
	struct registry		*reg = registry_new(&cf, T0);
	struct repl_list	 l = { 0 };
	struct repl_response	 out = { 0 };
	struct batch_result	 r = { 0 };

	ck_assert_int_eq(apply_register(reg, mkinst("i1", 100), AT(1000)),
	    200);
	add_dirty(&l, REPL_CANCEL, "i1", 500);
	apply(reg, NULL, &l, &out, AT(2000), &r);
	ck_assert_int_eq(out.items[0].status_code, 200);
	/* A copy the cancel at 500 covers comes back late: refused. */
	ck_assert_int_eq(apply_register(reg, mkinst("i1", 400), AT(3000)),
	    409);
	ck_assert_int_eq(apply_register(reg, mkinst("i1", 500), AT(3000)),
	    409);
	ck_assert_ptr_null(registry_get(reg, "APP", "i1", 3000));
	/* A copy registered after the cancel beats it. */
	ck_assert_int_eq(apply_register(reg, mkinst("i1", 600), AT(4000)),
	    200);
	ck_assert_ptr_nonnull(registry_get(reg, "APP", "i1", 4000));
	repl_response_clear(&out);
	registry_free(reg);
}
END_TEST

/* Registry memory after registering ids[0..n) with dirty 100 at 1000. */
static size_t
memory_after(const char **ids, int n)
{
	struct registry	*reg;
	size_t		 used;
	int		 i;

	cf.max_bytes = 0;
	reg = registry_new(&cf, T0);
	for (i = 0; i < n; i++)
		ck_assert_int_eq(apply_register(reg, mkinst(ids[i], 100),
		    AT(1000)), 200);
	used = registry_memory_used(reg);
	registry_free(reg);
	return (used);
}

START_TEST(test_register_memory_counts_cache)
{
	static const char	*ids[] = { "a", "b" };
	struct registry		*reg;
	struct cache		*c;
	struct cache_key	 k = { CACHE_JSON, 0, 0 };
	struct repl_list	 l = { 0 };
	struct repl_response	 out = { 0 };
	struct batch_result	 r = { 0 };
	size_t			 both;

	/* A budget that holds both leases exactly, and nothing more. */
	both = memory_after(ids, 2);
	cf.max_bytes = both;
	reg = registry_new(&cf, T0);
	c = cache_new(reg, 0, 0);
	add_register(&l, mkinst("a", 100));
	apply(reg, c, &l, &out, AT(1000), &r);
	ck_assert_int_eq(out.items[0].status_code, 200);
	/* The cache now holds an encoding, which the budget counts. */
	cache_body_unref(cache_apps(c, &k, 1000));
	ck_assert_uint_gt(cache_bytes(c), 0);
	add_register(&l, mkinst("b", 100));
	apply(reg, c, &l, &out, AT(1000), &r);
	ck_assert_int_eq(out.items[0].status_code, 503);
	ck_assert_ptr_null(registry_get(reg, "APP", "b", 1000));
	ck_assert_str_eq(r.note[BATCH_NOTE_MEMORY], "limit: APP/b refused: "
	    "memory budget reached (eureka.server.max-memory-bytes 12345): "
	    "new registrations refused, registered instances keep renewing");
	cache_free(c);
	registry_free(reg);

	/* Without the cache's bytes the same lease fits. */
	cf.max_bytes = both;
	reg = registry_new(&cf, T0);
	ck_assert_int_eq(apply_register(reg, mkinst("a", 100), AT(1000)),
	    200);
	ck_assert_int_eq(apply_register(reg, mkinst("b", 100), AT(1000)),
	    200);
	repl_response_clear(&out);
	registry_free(reg);
}
END_TEST

START_TEST(test_heartbeat)
{
	struct registry		*reg = registry_new(&cf, T0);
	struct repl_list	 l = { 0 };
	struct repl_response	 out = { 0 };
	struct batch_result	 r = { 0 };
	struct seen		 s = { 0 };

	ck_assert_int_eq(apply_register(reg, mkinst("i1", 100), AT(1000)),
	    200);
	registry_add_observer(reg, seen_cb, &s);
	add(&l, REPL_HEARTBEAT, "app", "unknown");
	add(&l, REPL_HEARTBEAT, "app", "i1");
	add_dirty(&l, REPL_HEARTBEAT, "i1", 100);
	add_dirty(&l, REPL_HEARTBEAT, "i1", 50);	/* peer's older */
	add_dirty(&l, REPL_HEARTBEAT, "i1", 150);	/* ours older */
	apply(reg, NULL, &l, &out, AT(2000), &r);
	/* 404 makes the peer send its Register (§6.3). */
	ck_assert_int_eq(out.items[0].status_code, 404);
	ck_assert_ptr_null(out.items[0].entity);
	ck_assert_int_eq(out.items[1].status_code, 200);
	ck_assert_int_eq(out.items[2].status_code, 200);
	/* 409 carries our copy, which the peer adopts. */
	ck_assert_int_eq(out.items[3].status_code, 409);
	ck_assert_ptr_nonnull(out.items[3].entity);
	ck_assert_str_eq(instance_id(out.items[3].entity), "i1");
	ck_assert_int_eq(out.items[3].entity->last_dirty_ts, 100);
	ck_assert_int_eq(out.items[4].status_code, 404);
	ck_assert_ptr_null(out.items[4].entity);
	ck_assert_int_eq(s.by_type[REG_EV_RENEW], 4);
	ck_assert_int_eq(s.not_replicated, 0);
	repl_response_clear(&out);
	registry_free(reg);
}
END_TEST

START_TEST(test_cancel)
{
	struct registry		*reg = registry_new(&cf, T0);
	struct repl_list	 l = { 0 };
	struct repl_response	 out = { 0 };
	struct batch_result	 r = { 0 };

	ck_assert_int_eq(apply_register(reg, mkinst("i1", 100), AT(1000)),
	    200);
	ck_assert_int_eq(apply_register(reg, mkinst("i2", 900), AT(1000)),
	    200);
	add(&l, REPL_CANCEL, "app", "i1");
	add(&l, REPL_CANCEL, "app", "unknown");
	/* i2 was registered again after this cancel: it stays. */
	add_dirty(&l, REPL_CANCEL, "i2", 800);
	apply(reg, NULL, &l, &out, AT(2000), &r);
	ck_assert_int_eq(out.items[0].status_code, 200);
	ck_assert_int_eq(out.items[1].status_code, 404);
	ck_assert_int_eq(out.items[2].status_code, 409);
	ck_assert_ptr_null(registry_get(reg, "APP", "i1", 2000));
	ck_assert_ptr_nonnull(registry_get(reg, "APP", "i2", 2000));
	/* The unknown one still leaves its tombstone. */
	ck_assert_int_eq(apply_register(reg, mkinst("unknown", T0),
	    AT(3000)), 409);
	repl_response_clear(&out);
	registry_free(reg);
}
END_TEST

START_TEST(test_status_update)
{
	struct registry		*reg = registry_new(&cf, T0);
	struct repl_list	 l = { 0 };
	struct repl_response	 out = { 0 };
	struct batch_result	 r = { 0 };
	struct repl_item	*it;
	const struct instance	*in;

	ck_assert_int_eq(apply_register(reg, mkinst("i1", 100), AT(1000)),
	    200);
	add_dirty(&l, REPL_STATUS_UPDATE, "i1", 100);	/* no status */
	it = add_dirty(&l, REPL_STATUS_UPDATE, "unknown", 100);
	it->has_status = 1;
	it->status = STATUS_OUT_OF_SERVICE;
	it = add_dirty(&l, REPL_STATUS_UPDATE, "i1", T0 + 2000 + SKEW + 1);
	it->has_status = 1;
	it->status = STATUS_DOWN;
	it = add_dirty(&l, REPL_STATUS_UPDATE, "i1", 100);
	it->has_status = 1;
	it->status = STATUS_OUT_OF_SERVICE;
	/* The origin's stamp, carried in the item's instance. */
	it->info = mkinst("i1", 100);
	it->info->last_updated_ts = T0 + 1500;
	apply(reg, NULL, &l, &out, AT(2000), &r);
	ck_assert_int_eq(out.items[0].status_code, 400);
	ck_assert_int_eq(out.items[1].status_code, 404);
	ck_assert_int_eq(out.items[2].status_code, 400);
	ck_assert_int_eq(out.items[3].status_code, 200);
	ck_assert_ptr_nonnull(in = registry_get(reg, "APP", "i1", 2000));
	ck_assert_int_eq(in->status, STATUS_OUT_OF_SERVICE);
	ck_assert_int_eq(in->last_updated_ts, T0 + 1500);
	ck_assert_int_eq(registry_override(reg, "i1", 2000),
	    STATUS_OUT_OF_SERVICE);
	repl_response_clear(&out);
	registry_free(reg);
}
END_TEST

START_TEST(test_delete_override)
{
	struct registry		*reg = registry_new(&cf, T0);
	struct repl_list	 l = { 0 };
	struct repl_response	 out = { 0 };
	struct batch_result	 r = { 0 };
	struct repl_item	*it;
	const struct instance	*in;

	ck_assert_int_eq(apply_register(reg, mkinst("i1", 100), AT(1000)),
	    200);
	it = add_dirty(&l, REPL_STATUS_UPDATE, "i1", 100);
	it->has_status = 1;
	it->status = STATUS_OUT_OF_SERVICE;
	apply(reg, NULL, &l, &out, AT(1500), &r);
	ck_assert_int_eq(out.items[0].status_code, 200);
	add_dirty(&l, REPL_DELETE_STATUS_OVERRIDE, "unknown", 100);
	add_dirty(&l, REPL_DELETE_STATUS_OVERRIDE, "i1", T0 + 2000 + SKEW + 1);
	it = add_dirty(&l, REPL_DELETE_STATUS_OVERRIDE, "i1", 100);
	it->has_status = 1;
	it->status = STATUS_UP;
	apply(reg, NULL, &l, &out, AT(2000), &r);
	ck_assert_int_eq(out.items[0].status_code, 404);
	ck_assert_int_eq(out.items[1].status_code, 400);
	ck_assert_int_eq(out.items[2].status_code, 200);
	ck_assert_ptr_nonnull(in = registry_get(reg, "APP", "i1", 2000));
	ck_assert_int_eq(in->status, STATUS_UP);
	ck_assert_int_eq(registry_override(reg, "i1", 2000), STATUS_UNKNOWN);
	repl_response_clear(&out);
	registry_free(reg);
}
END_TEST

START_TEST(test_bad_items)
{
	struct registry		*reg = registry_new(&cf, T0);
	struct repl_list	 l = { 0 };
	struct repl_response	 out = { 0 };
	struct batch_result	 r = { 0 };
	struct repl_item	*it;
	char			 longname[INSTANCE_MAX_NAME + 2];
	size_t			 i;

	memset(longname, 'A', sizeof longname - 1);
	longname[sizeof longname - 1] = '\0';
	ck_assert_int_eq(apply_register(reg, mkinst("i1", 100), AT(1000)),
	    200);
	add(&l, REPL_HEARTBEAT, NULL, "i1");
	add(&l, REPL_CANCEL, "app", NULL);
	add(&l, REPL_CANCEL, "app", "i1/x");
	add(&l, REPL_HEARTBEAT, longname, "i1");
	add(&l, (enum repl_action)99, "app", "i1");
	/* A register needs no item names: its instance has them. */
	it = add(&l, REPL_REGISTER, NULL, NULL);
	it->info = mkinst("i2", 100);
	apply(reg, NULL, &l, &out, AT(2000), &r);
	for (i = 0; i < 5; i++)
		ck_assert_int_eq(out.items[i].status_code, 400);
	ck_assert_int_eq(out.items[5].status_code, 200);
	/* Nothing the bad items named changed. */
	ck_assert_ptr_nonnull(registry_get(reg, "APP", "i1", 2000));
	ck_assert_ptr_nonnull(registry_get(reg, "APP", "i2", 2000));
	repl_response_clear(&out);
	registry_free(reg);
}
END_TEST

START_TEST(test_amazon_id_filled)
{
	struct registry		*reg = registry_new(&cf, T0);
	struct instance		*in = mkinst("i-1", 100);
	const struct instance	*got;

	in->dc_name = DC_AMAZON;
	ck_assert_int_eq(apply_register(reg, in, AT(1000)), 200);
	ck_assert_ptr_nonnull(got = registry_get(reg, "APP", "i-1", 1000));
	ck_assert_str_eq(kvlist_get(&got->dc_metadata, "instance-id"), "i-1");
	registry_free(reg);
}
END_TEST

/* A batch with one item of every action, all applicable. */
static void
every_action(struct repl_list *l)
{
	struct repl_item	*it;

	add_register(l, mkinst("i1", 100));
	add_register(l, mkinst("i2", 100));
	add_register(l, mkinst("i3", 100));
	add_dirty(l, REPL_HEARTBEAT, "i1", 100);
	it = add_dirty(l, REPL_STATUS_UPDATE, "i2", 100);
	it->has_status = 1;
	it->status = STATUS_OUT_OF_SERVICE;
	it = add_dirty(l, REPL_DELETE_STATUS_OVERRIDE, "i2", 100);
	it->has_status = 1;
	it->status = STATUS_UP;
	add_dirty(l, REPL_CANCEL, "i3", 100);
}

START_TEST(test_applied_as_replicated)
{
	struct registry		*reg = registry_new(&cf, T0);
	struct repl_list	 l = { 0 };
	struct repl_response	 out = { 0 };
	struct batch_result	 r = { 0 };
	struct seen		 s = { 0 };
	size_t			 i;

	registry_add_observer(reg, seen_cb, &s);
	every_action(&l);
	apply(reg, NULL, &l, &out, AT(1000), &r);
	for (i = 0; i < out.n; i++)
		ck_assert_int_eq(out.items[i].status_code, 200);
	/* Every action reached the observers, none as a local change. */
	ck_assert_int_eq(s.by_type[REG_EV_REGISTER], 3);
	ck_assert_int_eq(s.by_type[REG_EV_RENEW], 1);
	ck_assert_int_eq(s.by_type[REG_EV_STATUS_UPDATE], 1);
	ck_assert_int_eq(s.by_type[REG_EV_DELETE_OVERRIDE], 1);
	ck_assert_int_eq(s.by_type[REG_EV_CANCEL], 1);
	ck_assert_int_eq(s.events, 7);
	ck_assert_int_eq(s.not_replicated, 0);
	repl_response_clear(&out);
	registry_free(reg);
}
END_TEST

/*
 * A batch as the decoder hands it over (names in the list's blocks, the
 * app name upper-cased there already) applies as one built by hand: a
 * register, a heartbeat of it and one of an unknown instance.
 */
START_TEST(test_decoded_batch)
{
	static const char	 body[] = "{\"replicationList\":[{"
	    "\"appName\":\"app\",\"id\":\"d1\",\"lastDirtyTimestamp\":100,"
	    "\"instanceInfo\":{\"instanceId\":\"d1\",\"hostName\":\"h\","
	    "\"app\":\"app\",\"ipAddr\":\"10.0.0.1\",\"dataCenterInfo\":{"
	    "\"name\":\"MyOwn\"},\"lastDirtyTimestamp\":100},"
	    "\"action\":\"Register\"},{\"appName\":\"app\",\"id\":\"d1\","
	    "\"lastDirtyTimestamp\":100,\"action\":\"Heartbeat\"},"
	    "{\"appName\":\"app\",\"id\":\"nope\",\"action\":\"Heartbeat\"}]}";
	struct registry		*reg = registry_new(&cf, T0);
	struct repl_list	 l = { 0 };
	struct repl_response	 out = { 0 };
	struct batch_result	 r = { 0 };
	char			*cause = NULL;

	ck_assert_int_eq(json_decode_repl_list(body, sizeof body - 1, &l,
	    T0, &cause), 0);
	ck_assert(l.items[1].decoded);
	apply(reg, NULL, &l, &out, AT(1000), &r);
	ck_assert_int_eq(out.items[0].status_code, 200);
	ck_assert_int_eq(out.items[1].status_code, 200);
	ck_assert_int_eq(out.items[2].status_code, 404);
	ck_assert_ptr_nonnull(registry_get(reg, "APP", "d1", 1000));
	repl_response_clear(&out);
	registry_free(reg);
}
END_TEST

/*
 * A decoded batch's instances are packed; stored, they are counted as one
 * block each. Filling a blank Amazon instance-id (batch_fill_amazon_id)
 * and a metadata merge (registry_update_metadata, as a leader pin) write
 * to them: each unpacks first, so nothing inside a block is freed or
 * grown (ASan's build), and the count stays exact after each.
 */
START_TEST(test_packed_writes)
{
	static const char	 body[] = "{\"replicationList\":["
	    "{\"appName\":\"app\",\"id\":\"p1\",\"lastDirtyTimestamp\":100,"
	    "\"instanceInfo\":"
	    "{\"instanceId\":\"p1\",\"hostName\":\"h1\",\"app\":\"app\","
	    "\"ipAddr\":\"10.0.0.1\","
	    "\"status\":\"UP\",\"metadata\":{\"zone\":\"a\"},"
	    "\"dataCenterInfo\":{\"name\":\"MyOwn\"},"
	    "\"lastDirtyTimestamp\":100},\"action\":\"Register\"},"
	    "{\"appName\":\"app\",\"id\":\"p2\",\"lastDirtyTimestamp\":100,"
	    "\"instanceInfo\":"
	    "{\"instanceId\":\"p2\",\"hostName\":\"h2\",\"app\":\"app\","
	    "\"ipAddr\":\"10.0.0.2\","
	    "\"status\":\"UP\",\"dataCenterInfo\":{\"name\":\"Amazon\","
	    "\"metadata\":{\"instance-id\":\"\"}},"
	    "\"lastDirtyTimestamp\":100},\"action\":\"Register\"}]}";
	struct registry		*reg = registry_new(&cf, T0);
	struct repl_list	 l = { 0 };
	struct repl_response	 out = { 0 };
	struct batch_result	 r = { 0 };
	const struct instance	*a, *b;
	struct kvlist		 kv;
	size_t			 lease;

	ck_assert_int_eq(json_decode_repl_list(body, sizeof body - 1, &l,
	    T0, NULL), 0);
	ck_assert(l.items[0].info->packed);
	ck_assert(l.items[1].info->packed);
	apply(reg, NULL, &l, &out, AT(1000), &r);
	ck_assert_int_eq(out.items[0].status_code, 200);
	ck_assert_int_eq(out.items[1].status_code, 200);
	ck_assert_ptr_nonnull(a = registry_get(reg, "APP", "p1", 1000));
	ck_assert_ptr_nonnull(b = registry_get(reg, "APP", "p2", 1000));
	/* Stored as decoded; the Amazon one was written, so unpacked. */
	ck_assert(a->packed);
	ck_assert(!b->packed);
	ck_assert_str_eq(kvlist_get(&b->dc_metadata, "instance-id"), "p2");
	lease = registry_bytes(reg) - instance_stored_size(a) -
	    instance_stored_size(b);
	ck_assert_uint_eq(lease % 2, 0);
	lease /= 2;
	ck_assert_uint_lt(lease, 256);

	/* A pin on the packed one: merged into a packed copy, counted again. */
	memset(&kv, 0, sizeof kv);
	kvlist_set(&kv, INSTANCE_LEADER_PIN_KEY, "1700000000000");
	kvlist_set(&kv, "zone", "b-longer");
	ck_assert_int_eq(registry_update_metadata(reg, "APP", "p1", &kv,
	    AT(2000)), REG_OK);
	kvlist_clear(&kv);
	ck_assert_ptr_nonnull(a = registry_get(reg, "APP", "p1", 2000));
	ck_assert(a->packed);
	ck_assert_str_eq(kvlist_get(&a->metadata, "zone"), "b-longer");
	ck_assert_int_eq(instance_leader_pin(a), 1700000000000LL);
	ck_assert_str_eq(a->host_name, "h1");
	ck_assert_uint_eq(registry_bytes(reg), 2 * lease +
	    instance_stored_size(a) + instance_stored_size(b));
	/* A refused merge still leaves the count exact. */
	memset(&kv, 0, sizeof kv);
	kvlist_set(&kv, "k", "v");
	ck_assert_int_eq(registry_update_metadata(reg, "APP", "nope", &kv,
	    AT(2001)), REG_NOT_FOUND);
	kvlist_clear(&kv);
	ck_assert_int_eq(registry_cancel(reg, "APP", "p1", 0, AT(3000), -1),
	    REG_OK);
	ck_assert_int_eq(registry_cancel(reg, "APP", "p2", 0, AT(3000), -1),
	    REG_OK);
	ck_assert_uint_eq(registry_bytes(reg), 0);
	repl_response_clear(&out);
	registry_free(reg);
}
END_TEST

/* The registry's state as one comparable string, into buf. */
static void
state_of(struct registry *reg, int64_t mono, char *buf, size_t len)
{
	const char		*ids[] = { "i1", "i2", "i3" };
	char			*hc = registry_hashcode(reg);
	const struct instance	*in;
	unsigned long long	 h[3];
	int			 i;

	for (i = 0; i < 3; i++) {
		in = registry_get(reg, "APP", ids[i], mono);
		h[i] = in != NULL ? (unsigned long long)
		    (registry_copy_hash(in) ^ (uint64_t)in->status) : 0;
	}
	snprintf(buf, len, "%s %zu %llx %llx %llx", hc, registry_size(reg),
	    h[0], h[1], h[2]);
	free(hc);
}

START_TEST(test_reapply_idempotent)
{
	struct registry		*reg = registry_new(&cf, T0);
	struct repl_list	 l = { 0 };
	struct repl_response	 out = { 0 };
	struct batch_result	 r = { 0 };
	char			 once[256], twice[256];
	size_t			 i;

	every_action(&l);
	apply(reg, NULL, &l, &out, AT(1000), &r);
	state_of(reg, 1000, once, sizeof once);
	ck_assert_uint_eq(registry_size(reg), 2);
	/* The peer resends the batch (its answer was lost). */
	every_action(&l);
	apply(reg, NULL, &l, &out, AT(2000), &r);
	state_of(reg, 2000, twice, sizeof twice);
	ck_assert_str_eq(once, twice);
	/*
	 * The same answers, but for i3: the cancel that followed its
	 * Register the first time covers the resent copy (409), and there
	 * is nothing left to cancel (404).
	 */
	for (i = 0; i < out.n; i++)
		ck_assert_int_eq(out.items[i].status_code, i == 2 ? 409 :
		    i == 6 ? 404 : 200);
	repl_response_clear(&out);
	registry_free(reg);
}
END_TEST

static Suite *
batch_suite(void)
{
	Suite	*s = suite_create("batch");
	TCase	*tc = tcase_create("apply");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_register);
	tcase_add_test(tc, test_register_invalid_swallowed);
	tcase_add_test(tc, test_register_metadata_bounds);
	tcase_add_test(tc, test_register_too_large);
	tcase_add_test(tc, test_register_future_timestamp);
	tcase_add_test(tc, test_register_stale_vs_tombstone);
	tcase_add_test(tc, test_register_memory_counts_cache);
	tcase_add_test(tc, test_heartbeat);
	tcase_add_test(tc, test_cancel);
	tcase_add_test(tc, test_status_update);
	tcase_add_test(tc, test_delete_override);
	tcase_add_test(tc, test_bad_items);
	tcase_add_test(tc, test_amazon_id_filled);
	tcase_add_test(tc, test_applied_as_replicated);
	tcase_add_test(tc, test_reapply_idempotent);
	tcase_add_test(tc, test_decoded_batch);
	tcase_add_test(tc, test_packed_writes);
	suite_add_tcase(s, tc);
	return (s);
}

/* Run the suite. */
int
main(void)
{
	return (check_run(batch_suite()));
}
