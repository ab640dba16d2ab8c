/*
 * tests/unit/check_cache_sliced.c: the response cache's sliced builds of
 * the bodies other than the full registry (cache_step): the delta, one
 * application and a VIP, plain and gzip, JSON and XML, full and compact.
 * Driven a slice at a time by hand with a tiny budget, each build takes
 * many slices, and its body is byte for byte the one-call build's (a
 * second cache over the same registry); a change between slices ends up
 * in the body and its hash code (an application, a VIP) or in the next
 * fetch's (the delta, which never starts over: its body is the queue as
 * it was when it began); a change before every slice still lets the
 * build end, and the delta's never in one slice. Time is passed by hand.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "cache.h"
#include "fixture.h"
#include "gzip.h"
#include "instance.h"
#include "registry.h"
#include "testutil.h"

#define T0	1700000000000LL
#define NOW	(T0 + 1000)

static struct registry	*reg;
static struct cache	*cache;

/* A valid instance of app with id, in VIPs vip-a and vip-b. */
static struct instance *
mkinst(const char *app, const char *id, enum instance_status st)
{
	struct instance	*in = fixture_instance(app, id, st, T0);

	in->vip_address = strdup(strcmp(app, "APP1") == 0 ? "vip-b" :
	    "vip-a,vip-b");
	in->secure_vip_address = strdup("svip");
	in->has_dc = 1;
	kvlist_set(&in->metadata, "zone", "z1");
	return (in);
}

/* Register id in app at t. */
static void
add(const char *app, const char *id, enum instance_status st, int64_t t)
{
	ck_assert_int_eq(registry_register(reg, mkinst(app, id, st), 0, TM(t)),
	    REG_OK);
}

/*
 * Fixture: 6 applications of 30 instances, then changes that make the
 * delta queue deduplicate (re-registrations) and hold a cancel.
 */
static void
setup(void)
{
	struct registry_conf	rc;
	char			app[32], id[32];
	int			a, i;

	registry_conf_defaults(&rc);
	reg = registry_new(&rc, T0);
	for (a = 0; a < 6; a++) {
		snprintf(app, sizeof app, "APP%d", a);
		for (i = 0; i < 30; i++) {
			snprintf(id, sizeof id, "app%d-i%d", a, i);
			add(app, id, i % 3 == 0 ? STATUS_DOWN : STATUS_UP, T0);
		}
	}
	add("APP3", "app3-i4", STATUS_UP, T0 + 1);
	add("APP0", "app0-i0", STATUS_UP, T0 + 2);
	ck_assert_int_eq(registry_cancel(reg, "APP5", "app5-i7", 0,
	    TM(T0 + 3), 0), REG_OK);
	cache = cache_new(reg, 0, 180000);
}

/* Free the fixture. */
static void
teardown(void)
{
	cache_free(cache);
	registry_free(reg);
}

/* Key of variant index i (0..7): format, compact, gzip. */
static struct cache_key
key_at(int i)
{
	return ((struct cache_key){ (enum cache_format)(i >> 2), (i >> 1) & 1,
	    i & 1 });
}

/* c's body of res as a string; NULL when there is none. */
static char *
body_of(struct cache *c, enum cache_res res, const struct cache_key *k,
    const char *name, size_t *len)
{
	struct cache_body	*b = cache_res_body(c, res, k, name, NOW);
	char			*p;

	if (b == NULL)
		return (NULL);
	p = cache_body_copy(b, len);
	cache_body_unref(b);
	return (p);
}

/* Step res's build with budget until it is done: the number of steps. */
static int
steps(enum cache_res res, const struct cache_key *k, const char *name,
    size_t budget)
{
	int	n = 1;

	while (!cache_step(cache, res, k, name, budget, NOW)) {
		n++;
		ck_assert_int_lt(n, 1000000);
	}
	return (n);
}

/*
 * Build res in slices of budget 1 in every variant and compare each body
 * with a one-call build of a second cache, fetched in the same order (so
 * the delta versions agree); sliced says whether it must take more than
 * one slice.
 */
static void
check_equal(enum cache_res res, const char *name, int sliced)
{
	struct cache	*one = cache_new(reg, 0, 180000);
	struct cache_key k;
	char		*a, *b;
	size_t		 alen = 0, blen = 0;
	int		 i, n;

	for (i = 0; i < 8; i++) {
		k = key_at(i);
		b = body_of(one, res, &k, name, &blen);
		n = steps(res, &k, name, 1);
		/* A gzip delta deflates the plain one built just before. */
		if (sliced && (res != CACHE_RES_DELTA || !k.gzip))
			ck_assert_int_gt(n, 5);
		/* Done: the body comes without another encode. */
		a = body_of(cache, res, &k, name, &alen);
		ck_assert_int_eq(cache_step(cache, res, &k, name, 1, NOW), 1);
		if (b == NULL) {
			ck_assert_ptr_null(a);
			continue;
		}
		ck_assert_ptr_nonnull(a);
		ck_assert_uint_eq(alen, blen);
		ck_assert(memcmp(a, b, alen) == 0);
		free(a);
		free(b);
	}
	cache_free(one);
}

START_TEST(test_delta_equals_one_call)
{
	check_equal(CACHE_RES_DELTA, NULL, 1);
}
END_TEST

START_TEST(test_app_equals_one_call)
{
	check_equal(CACHE_RES_APP, "APP3", 1);
	check_equal(CACHE_RES_APP, "app2", 1);	/* any case */
	check_equal(CACHE_RES_APP, "NOPE", 0);	/* none: 404 */
}
END_TEST

START_TEST(test_vip_equals_one_call)
{
	check_equal(CACHE_RES_VIP, "vip-a", 1);
	check_equal(CACHE_RES_VIP, "vip-b", 1);
	check_equal(CACHE_RES_SVIP, "svip", 1);
	check_equal(CACHE_RES_VIP, "nothing", 1);	/* walks all, empty */
}
END_TEST

START_TEST(test_empty_delta)
{
	struct cache_key	 k;
	int			 i;

	/* Past retention the queue is empty: a delta of no application. */
	registry_purge_deltas(reg, T0 + 10 * 60 * 1000);
	ck_assert_uint_eq(registry_delta_size(reg), 0);
	for (i = 0; i < 8; i += 2) {
		k = key_at(i);		/* plain: nothing to walk */
		ck_assert_int_eq(steps(CACHE_RES_DELTA, &k, NULL, 1), 1);
	}
	check_equal(CACHE_RES_DELTA, NULL, 0);
}
END_TEST

/*
 * A change halfway through a sliced build: the body is that of the
 * registry after the change (a one-call build now), its hash code the
 * registry's.
 */
static void
check_change_in_middle(enum cache_res res, const char *name, int gz)
{
	struct cache_key	 k = { CACHE_JSON, 0, gz };
	struct cache		*one;
	char			*a, *b, *hash;
	size_t			 alen, blen;
	int			 i;

	for (i = 0; i < 20; i++)
		ck_assert_int_eq(cache_step(cache, res, &k, name, 1, NOW), 0);
	add("APP3", "app3-new", STATUS_OUT_OF_SERVICE, T0 + 10);
	(void)steps(res, &k, name, 1);
	a = body_of(cache, res, &k, name, &alen);
	one = cache_new(reg, 0, 180000);
	b = body_of(one, res, &k, name, &blen);
	cache_free(one);
	ck_assert_uint_eq(alen, blen);
	ck_assert(memcmp(a, b, alen) == 0);
	if (!gz) {
		ck_assert_ptr_nonnull(strstr(a, "app3-new"));
		hash = registry_hashcode(reg);
		if (res == CACHE_RES_DELTA)
			ck_assert_ptr_nonnull(strstr(a, hash));
		free(hash);
	}
	free(a);
	free(b);
}

/*
 * The delta: a change halfway through does not start the build over.
 * The fetches waiting get, in the turn it ends, the delta of the queue
 * as it was when the build began, with that registry's hash code (a
 * one-call build from before the change, byte for byte); the next fetch
 * (a later turn) has the change, as a one-call build after it.
 */
static void
check_delta_change_in_middle(int gz)
{
	struct cache_key	 k = { CACHE_JSON, 0, gz };
	struct cache		*before, *after;
	char			*a, *b, *hash;
	size_t			 alen, blen;
	int			 i;

	before = cache_new(reg, 0, 180000);
	b = body_of(before, CACHE_RES_DELTA, &k, NULL, &blen);
	cache_free(before);
	hash = registry_hashcode(reg);
	for (i = 0; i < 20; i++)
		ck_assert_int_eq(cache_step(cache, CACHE_RES_DELTA, &k, NULL,
		    1, NOW), 0);
	add("APP3", "app3-new", STATUS_OUT_OF_SERVICE, T0 + 10);
	(void)steps(CACHE_RES_DELTA, &k, NULL, 1);
	a = body_of(cache, CACHE_RES_DELTA, &k, NULL, &alen);
	/* Both are their cache's first delta: the same version. */
	ck_assert_uint_eq(alen, blen);
	ck_assert(memcmp(a, b, alen) == 0);
	free(b);
	if (!gz) {
		ck_assert_ptr_null(strstr(a, "app3-new"));
		ck_assert_ptr_nonnull(strstr(a, hash));
	}
	free(a);
	free(hash);
	/* The next turn's fetch has it, as a one-call build does. */
	a = NULL;
	{
		struct cache_body	*cb;

		cb = cache_res_body(cache, CACHE_RES_DELTA, &k, NULL, NOW + 1);
		a = cache_body_copy(cb, &alen);
		cache_body_unref(cb);
	}
	after = cache_new(reg, 0, 180000);
	b = body_of(after, CACHE_RES_DELTA, &k, NULL, &blen);
	cache_free(after);
	if (!gz) {
		ck_assert_ptr_nonnull(strstr(a, "app3-new"));
		ck_assert_ptr_nonnull(strstr(b, "app3-new"));
		hash = registry_hashcode(reg);
		ck_assert_ptr_nonnull(strstr(a, hash));
		free(hash);
	}
	free(a);
	free(b);
}

START_TEST(test_delta_change_in_middle)
{
	check_delta_change_in_middle(0);
}
END_TEST

START_TEST(test_delta_gzip_change_in_middle)
{
	check_delta_change_in_middle(1);
}
END_TEST

/*
 * A change before every slice of a delta build (a fleet registering all
 * along, issue 21): the build is never done in one slice -- with a budget
 * of 1 a slice looks at one record, so it takes at least a slice per
 * record queued when it began -- and it ends within three passes of them.
 */
START_TEST(test_delta_never_whole_under_churn)
{
	struct cache_key	 k = { CACHE_JSON, 0, 1 };
	char			 id[32];
	size_t			 qn = registry_delta_size(reg);
	int			 n;

	for (n = 0; n < 1000000; n++) {
		snprintf(id, sizeof id, "churn-%d", n);
		add("APP4", id, STATUS_UP, T0 + 20 + n);
		if (cache_step(cache, CACHE_RES_DELTA, &k, NULL, 1, NOW))
			break;
	}
	ck_assert_uint_ge((size_t)n, qn);
	ck_assert_uint_le((size_t)n, 4 * qn + 64);
}
END_TEST

/*
 * A VIP's build with a registration before every slice: past MAX_TRIES
 * starts it used to run whole in one call (59 ms at 1M instances; issue
 * 21); now it goes on in slices, so no call does more than a slice of
 * work, and it ends after about four walks of the registry.
 */
START_TEST(test_vip_never_whole_under_churn)
{
	struct cache_key	 k = { CACHE_JSON, 0, 1 };
	const struct cache_stats *st = cache_stats(cache);
	size_t			 ninst = 0, a;
	uint64_t		 r0 = st->sb_restarts;
	char			 id[32];
	int			 n, n4 = -1;

	for (a = 0; a < registry_app_count(reg); a++)
		ninst += reg_app_size(registry_app_at(reg, a));
	for (n = 0; n < 1000000; n++) {
		snprintf(id, sizeof id, "churn-%d", n);
		add("APP4", id, STATUS_UP, T0 + 20 + n);
		if (cache_step(cache, CACHE_RES_VIP, &k, "vip-a", 1, NOW))
			break;
		if (n4 < 0 && st->sb_restarts - r0 == 4)
			n4 = n;
	}
	ck_assert_uint_eq(st->sb_restarts - r0, 4);
	ck_assert_int_ge(n4, 0);
	/* After the fourth start, a slice a call still: one walk's worth. */
	ck_assert_int_ge(n - n4, (int)ninst / 2);
	ck_assert_uint_le((size_t)n, 6 * (ninst + 16) + 64);
}
END_TEST

/*
 * One application's build with a registration in it before every slice:
 * past MAX_TRIES starts it ran whole in the call of its fourth start (an
 * application of 1M instances: a turn of ~60 ms; issue 21); now it goes
 * on in slices, covering the instances there were when its last walk
 * began. The fetches waiting get that body in the turn it ends (not a
 * whole build of the application as it is now); the next turn's fetch
 * has every change, as a one-call build does.
 */
static void
check_app_never_whole_under_churn(int gz)
{
	struct cache_key	 k = { CACHE_JSON, 0, gz }, kp = k;
	const struct cache_stats *st = cache_stats(cache);
	struct cache_body	*cb;
	struct cache		*one;
	uint64_t		 r0 = st->sb_restarts, t0 = st->sb_tolerant;
	size_t			 n0, len, blen;
	char			 id[32], *a, *b;
	int			 n, n4 = -1;

	kp.gzip = 0;
	n0 = reg_app_size(registry_app_find(reg, "APP4"));
	for (n = 0; n < 1000000; n++) {
		snprintf(id, sizeof id, "churn-%d-%d", gz, n);
		add("APP4", id, STATUS_UP, T0 + 20 + n);
		if (cache_step(cache, CACHE_RES_APP, &k, "APP4", 1, NOW))
			break;
		if (n4 < 0 && st->sb_restarts - r0 == 4)
			n4 = n;
	}
	ck_assert_uint_eq(st->sb_restarts - r0, 4);
	ck_assert_int_ge(n4, 0);
	/* After the fourth start, a slice a call still: one walk's worth. */
	ck_assert_int_ge(n - n4, (int)n0);
	ck_assert_uint_eq(st->sb_tolerant - t0, 1);
	ck_assert_int_le(n, 6 * ((int)n0 + 16));
	if (gz)
		return;
	/* In this turn: the body the build ended with, without the last. */
	a = body_of(cache, CACHE_RES_APP, &kp, "APP4", &len);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_null(strstr(a, id));
	ck_assert_ptr_nonnull(strstr(a, "\"app4-i29\""));
	free(a);
	/* The next turn: the application as it is, as a one-call build. */
	cb = cache_res_body(cache, CACHE_RES_APP, &kp, "APP4", NOW + 1);
	a = cache_body_copy(cb, &len);
	cache_body_unref(cb);
	one = cache_new(reg, 0, 180000);
	b = body_of(one, CACHE_RES_APP, &kp, "APP4", &blen);
	cache_free(one);
	ck_assert_uint_eq(len, blen);
	ck_assert(memcmp(a, b, len) == 0);
	ck_assert_ptr_nonnull(strstr(a, id));
	free(a);
	free(b);
}

START_TEST(test_app_never_whole_under_churn)
{
	check_app_never_whole_under_churn(0);
	check_app_never_whole_under_churn(1);
}
END_TEST

START_TEST(test_app_change_in_middle)
{
	check_change_in_middle(CACHE_RES_APP, "APP3", 0);
	check_change_in_middle(CACHE_RES_APP, "APP3", 1);
}
END_TEST

START_TEST(test_vip_change_in_middle)
{
	check_change_in_middle(CACHE_RES_VIP, "vip-a", 0);
}
END_TEST

START_TEST(test_ends_under_churn)
{
	struct cache_key	 k = { CACHE_XML, 0, 1 };
	static const enum cache_res res[] = { CACHE_RES_DELTA, CACHE_RES_APP,
	    CACHE_RES_VIP };
	char			 id[32];
	int			 r, n;

	/* A change before every slice: each build still ends. */
	for (r = 0; r < 3; r++) {
		for (n = 0; n < 100000; n++) {
			snprintf(id, sizeof id, "churn-%d-%d", r, n);
			add("APP3", id, STATUS_UP, T0 + 20 + n);
			if (cache_step(cache, res[r], &k, "APP3", 1, NOW))
				break;
		}
		ck_assert_int_lt(n, 100000);
	}
}
END_TEST

START_TEST(test_budget_zero_is_one_call)
{
	struct cache_key	 k = { CACHE_JSON, 0, 1 };

	ck_assert_int_eq(cache_step(cache, CACHE_RES_DELTA, &k, NULL, 0, NOW),
	    1);
	ck_assert_int_eq(cache_step(cache, CACHE_RES_VIP, &k, "vip-a", 0,
	    NOW), 1);
	ck_assert_int_eq(cache_step(cache, CACHE_RES_APP, &k, "APP1", 0, NOW),
	    1);
}
END_TEST

START_TEST(test_read_only_refresh_slices_them)
{
	struct cache		*ro;
	struct cache_key	 k = { CACHE_JSON, 0, 1 };
	struct cache_body	*b;
	int			 n = 1;

	cache_free(cache);
	cache = NULL;
	ro = cache_new(reg, 30000, 180000);
	/* A snapshot of each kind, then a refresh pass in slices. */
	cache_body_unref(cache_res_body(ro, CACHE_RES_DELTA, &k, NULL, NOW));
	cache_body_unref(cache_res_body(ro, CACHE_RES_VIP, &k, "vip-a", NOW));
	cache_body_unref(cache_res_body(ro, CACHE_RES_APP, &k, "APP2", NOW));
	add("APP2", "app2-new", STATUS_UP, T0 + 30);
	while (!cache_refresh_step(ro, 1, NOW + 1)) {
		n++;
		ck_assert_int_lt(n, 1000000);
	}
	/* Three whole-body encodes of 180 instances cannot fit one unit. */
	ck_assert_int_gt(n, 50);
	b = cache_res_body(ro, CACHE_RES_APP, &k, "APP2", NOW + 1);
	ck_assert_ptr_nonnull(b);
	cache_body_unref(b);
	cache = ro;
}
END_TEST

/*
 * A big body that goes is given back a piece at a time: counted until
 * cache_reap has freed it, at most the bytes asked for a call.
 */
START_TEST(test_big_body_reaped_in_pieces)
{
	struct cache_key	 k = { CACHE_JSON, 0, 0 };
	struct cache_body	*b;
	char			 id[32];
	size_t			 before, held, len, calls = 0;
	int			 i;

	for (i = 0; i < 30000; i++) {
		snprintf(id, sizeof id, "big-%d", i);
		add("BIG", id, STATUS_UP, T0);
	}
	ck_assert_int_eq(cache_reap(cache, SIZE_MAX), 0);
	before = cache_bytes(cache);
	b = cache_res_body(cache, CACHE_RES_APP, &k, "BIG", NOW);
	len = cache_body_len(b);
	ck_assert_uint_ge(len, 16 * 1024 * 1024);
	cache_body_unref(b);
	held = cache_bytes(cache);
	ck_assert_uint_ge(held, before + len);
	/* A change: the body's last reference goes, to the reaper. */
	add("BIG", "big-0", STATUS_DOWN, T0 + 5);
	b = cache_res_body(cache, CACHE_RES_APP, &k, "BIG", NOW);
	ck_assert_uint_ge(cache_bytes(cache), held + len - 1024);
	while (cache_reap(cache, 1024 * 1024)) {
		calls++;
		ck_assert_uint_lt(calls, 1000);
	}
	/* One MiB a call: the whole body took as many calls. */
	ck_assert_uint_ge(calls, len / (1024 * 1024) - 1);
	ck_assert_uint_le(cache_bytes(cache), held + 1024);
	/* The new body is the cache's: nothing for the reaper. */
	cache_body_unref(b);
	ck_assert_int_eq(cache_reap(cache, SIZE_MAX), 0);
}
END_TEST

/*
 * A gzip delta whose side entry is the oldest, waiting for its plain
 * body, while MAX_SIDE_ENTRIES side builds are in flight: the plain
 * build's new entry pushes the oldest out, which was the gzip one the
 * step still held (a use after free, scan-build's report; ASan catches
 * it). The step must find its entry again after the plain build.
 */
START_TEST(test_gzip_delta_entry_evicted_by_plain)
{
	struct cache_key	 k = key_at(0), kz = key_at(1);
	char			 name[32], *a, *b;
	size_t			 la, lb;
	int			 i;

	ck_assert_int_eq(cache_step(cache, CACHE_RES_DELTA, &k, NULL, 1,
	    NOW), 0);
	ck_assert_int_eq(cache_step(cache, CACHE_RES_DELTA, &kz, NULL, 1,
	    NOW), 0);
	/* 511 VIP builds: the plain delta's entry goes, the gzip's is last. */
	for (i = 0; i < 511; i++) {
		snprintf(name, sizeof name, "vip-%d", i);
		ck_assert_int_eq(cache_step(cache, CACHE_RES_VIP, &k, name, 1,
		    NOW), 0);
	}
	/* The plain build ends in this call; its entry is new. */
	while (!cache_step(cache, CACHE_RES_DELTA, &kz, NULL, 0, NOW))
		;
	a = body_of(cache, CACHE_RES_DELTA, &kz, NULL, &la);
	ck_assert_ptr_nonnull(a);
	b = body_of(cache, CACHE_RES_DELTA, &k, NULL, &lb);
	ck_assert_ptr_nonnull(b);
	free(a);
	free(b);
}
END_TEST

/* The suite. */
static Suite *
cache_sliced_suite(void)
{
	Suite	*s = suite_create("cache_sliced");
	TCase	*tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_delta_equals_one_call);
	tcase_add_test(tc, test_app_equals_one_call);
	tcase_add_test(tc, test_vip_equals_one_call);
	tcase_add_test(tc, test_empty_delta);
	tcase_add_test(tc, test_delta_change_in_middle);
	tcase_add_test(tc, test_delta_gzip_change_in_middle);
	tcase_add_test(tc, test_delta_never_whole_under_churn);
	tcase_add_test(tc, test_vip_never_whole_under_churn);
	tcase_add_test(tc, test_app_never_whole_under_churn);
	tcase_add_test(tc, test_app_change_in_middle);
	tcase_add_test(tc, test_vip_change_in_middle);
	tcase_add_test(tc, test_ends_under_churn);
	tcase_add_test(tc, test_budget_zero_is_one_call);
	tcase_add_test(tc, test_read_only_refresh_slices_them);
	tcase_add_test(tc, test_big_body_reaped_in_pieces);
	tcase_add_test(tc, test_gzip_delta_entry_evicted_by_plain);
	suite_add_tcase(s, tc);
	return (s);
}

/* Run the suite. */
int
main(void)
{
	return (check_run(cache_sliced_suite()));
}
