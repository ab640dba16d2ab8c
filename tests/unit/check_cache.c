/*
 * tests/unit/check_cache.c: the response cache. Stitched full bodies must
 * equal a from-scratch encode of the same registry (JSON and XML, full and
 * compact), gzip bodies must inflate to the plain ones, a change must
 * re-encode only its application, heartbeats must not invalidate, deltas
 * must carry a fresh version, the read-only layer must stay stale until
 * its refresh, and nothing may expire by time without that layer. The
 * incremental build (cache_apps_step) is driven slice by slice by hand:
 * each slice does a bounded amount of encoding, changes between slices
 * (an app changed, one added, one dropped) end up in the body, and the
 * body and its hash code equal a from-scratch encode. Time is passed by
 * hand.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "buf.h"
#include "cache.h"
#include "cache_int.h"	/* cache_check's test breaks it */
#include "fixture.h"
#include "gzip.h"
#include "hash.h"
#include "instance.h"
#include "json.h"
#include "registry.h"
#include "testutil.h"
#include "xml.h"

#define T0	1700000000000LL

static struct registry	*reg;
static struct cache	*cache;

/* A valid instance of app with id. */
static struct instance *
mkinst(const char *app, const char *id, enum instance_status st)
{
	struct instance	*in = fixture_instance(app, id, st, T0);

	in->vip_address = strdup("vip-a,vip-b");
	in->has_dc = 1;
	kvlist_set(&in->metadata, "zone", "z1");
	return (in);
}

/* Registry with apps A0..A(napps-1), per instances each. */
static void
setup_n(int napps, int per)
{
	struct registry_conf	rc;
	char			app[32], id[32];
	int			a, i;

	registry_conf_defaults(&rc);
	reg = registry_new(&rc, T0);
	for (a = 0; a < napps; a++) {
		snprintf(app, sizeof app, "APP%d", a);
		for (i = 0; i < per; i++) {
			snprintf(id, sizeof id, "app%d-i%d", a, i);
			ck_assert_int_eq(registry_register(reg, mkinst(app, id,
			    i % 3 == 0 ? STATUS_DOWN : STATUS_UP), 0, TM(T0)),
			    REG_OK);
		}
	}
	cache = cache_new(reg, 0, 180000);
}

/* Fixture: 5 apps x 4 instances. */
static void
setup(void)
{
	setup_n(5, 4);
}

/* Free the fixture. */
static void
teardown(void)
{
	cache_free(cache);
	registry_free(reg);
}

/* The registry as a struct applications, encoded from scratch. */
static char *
scratch(int xml, int flags, size_t *len)
{
	struct applications	*as = applications_new();
	struct buf		 b;
	size_t			 i, j;

	for (i = 0; i < registry_app_count(reg); i++) {
		struct reg_app		*ra = registry_app_at(reg, i);
		struct application	*a = application_new(reg_app_name(ra));

		for (j = 0; j < reg_app_size(ra); j++)
			application_add(a,
			    instance_dup(reg_app_instance_at(ra, j)));
		applications_add(as, a);
	}
	as->versions_delta = 1;
	as->apps_hashcode = registry_hashcode(reg);
	buf_init(&b, 0);
	if (xml)
		xml_encode_applications(&b, as, flags);
	else
		json_encode_applications(&b, as, flags);
	applications_free(as);
	return (buf_steal(&b, len));
}

/* Fetch a body through the cache as a string. */
static char *
fetch(enum cache_format f, int compact, int gz, size_t *len)
{
	struct cache_key	 k = { f, compact, gz };
	struct cache_body	*b = cache_apps(cache, &k, T0 + 1000);
	char			*p;

	ck_assert_ptr_nonnull(b);
	p = cache_body_copy(b, len);
	cache_body_unref(b);
	return (p);
}

/* Inflate a gzip body. */
static char *
gunzip(const char *p, size_t len, size_t *outlen)
{
	struct buf	b;

	buf_init(&b, 0);
	ck_assert_int_eq(gzip_inflate(p, len, &b, 1 << 28), 0);
	return (buf_steal(&b, outlen));
}

START_TEST(test_stitched_equals_scratch)
{
	int	xml, compact;

	for (xml = 0; xml <= 1; xml++) {
		for (compact = 0; compact <= 1; compact++) {
			size_t	 l1, l2, l3;
			char	*want = scratch(xml, compact ? CODEC_COMPACT :
			    CODEC_FULL, &l1);
			char	*got = fetch(xml ? CACHE_XML : CACHE_JSON,
			    compact, 0, &l2);
			char	*gz = fetch(xml ? CACHE_XML : CACHE_JSON,
			    compact, 1, &l3);
			char	*plain;

			ck_assert_uint_eq(l1, l2);
			ck_assert_str_eq(want, got);
			plain = gunzip(gz, l3, &l3);
			ck_assert_uint_eq(l3, l1);
			ck_assert_str_eq(plain, want);
			free(want);
			free(got);
			free(gz);
			free(plain);
		}
	}
}
END_TEST

START_TEST(test_stitched_parses)
{
	size_t			 len;
	char			*p, *cause = NULL;
	struct applications	*as;

	p = fetch(CACHE_XML, 0, 0, &len);
	as = xml_decode_applications(p, len, T0, &cause);
	ck_assert_msg(as != NULL, "xml: %s", cause);
	ck_assert_uint_eq(applications_count(as), 20);
	ck_assert_str_eq(as->apps_hashcode, "DOWN_10_UP_10_");
	applications_free(as);
	free(p);
	p = fetch(CACHE_JSON, 0, 0, &len);
	as = json_decode_applications(p, len, T0, &cause);
	ck_assert_msg(as != NULL, "json: %s", cause);
	ck_assert_uint_eq(applications_count(as), 20);
	applications_free(as);
	free(p);
}
END_TEST

START_TEST(test_change_reencodes_one_app)
{
	size_t		 len;
	char		*p;
	uint64_t	 before;

	p = fetch(CACHE_JSON, 0, 1, &len);
	free(p);
	before = cache_stats(cache)->fragment_encodes;
	ck_assert_uint_eq(before, 5);
	ck_assert_int_eq(registry_register(reg, mkinst("APP3", "new",
	    STATUS_UP),
	    0, TM(T0 + 500)), REG_OK);
	p = fetch(CACHE_JSON, 0, 1, &len);
	free(p);
	ck_assert_uint_eq(cache_stats(cache)->fragment_encodes, before + 1);
	/* And the result is still exactly a from-scratch encode. */
	{
		size_t	 l1, l2;
		char	*want = scratch(0, CODEC_FULL, &l1);
		char	*gz = fetch(CACHE_JSON, 0, 1, &l2);
		char	*got = gunzip(gz, l2, &l2);

		ck_assert_str_eq(want, got);
		free(want);
		free(gz);
		free(got);
	}
}
END_TEST

START_TEST(test_heartbeat_does_not_invalidate)
{
	size_t			 len;
	char			*p;
	uint64_t		 builds;
	const struct instance	*c = NULL;

	p = fetch(CACHE_XML, 0, 0, &len);
	free(p);
	builds = cache_stats(cache)->full_builds;
	ck_assert_int_eq(registry_renew(reg, "APP1", "app1-i1", -1,
	    STATUS_UNKNOWN, 0, TM(T0 + 2000), &c), REG_OK);
	p = fetch(CACHE_XML, 0, 0, &len);
	free(p);
	ck_assert_uint_eq(cache_stats(cache)->full_builds, builds);
	ck_assert_int_eq(registry_cancel(reg, "APP1", "app1-i1", 0,
	    TM(T0 + 3000), -1),
	    REG_OK);
	p = fetch(CACHE_XML, 0, 0, &len);
	ck_assert_ptr_null(strstr(p, "app1-i1<"));
	free(p);
	ck_assert_uint_eq(cache_stats(cache)->full_builds, builds + 1);
}
END_TEST

START_TEST(test_delta_version_and_hash)
{
	struct cache_key	 k = { CACHE_JSON, 0, 0 };
	struct cache_body	*b;
	char			*p, *cause = NULL;
	struct applications	*as;
	size_t			 len;

	b = cache_delta(cache, &k, T0 + 10);
	p = cache_body_copy(b, &len);
	cache_body_unref(b);
	as = json_decode_applications(p, len, T0, &cause);
	ck_assert_ptr_nonnull(as);
	ck_assert_int_eq(as->versions_delta, 1);
	ck_assert_str_eq(as->apps_hashcode, "DOWN_10_UP_10_");
	ck_assert_uint_eq(applications_count(as), 20);
	applications_free(as);
	free(p);
	ck_assert_int_eq(registry_cancel(reg, "APP0", "app0-i0", 0,
	    TM(T0 + 20), -1),
	    REG_OK);
	b = cache_delta(cache, &k, T0 + 30);
	p = cache_body_copy(b, &len);
	cache_body_unref(b);
	as = json_decode_applications(p, len, T0, &cause);
	ck_assert_ptr_nonnull(as);
	ck_assert_int_eq(as->versions_delta, 2);
	ck_assert_str_eq(as->apps_hashcode, "DOWN_9_UP_10_");
	ck_assert_int_eq(application_find(applications_find(as, "APP0"),
	    "app0-i0")->action_type, ACTION_DELETED);
	applications_free(as);
	free(p);
}
END_TEST

/* The apps hash code of GET apps/delta at now. */
static char *
delta_hash(int64_t now)
{
	struct cache_key	 k = { CACHE_JSON, 0, 0 };
	struct cache_body	*b;
	struct applications	*as;
	char			*p, *h, *cause = NULL;
	size_t			 len;

	b = cache_delta(cache, &k, now);
	p = cache_body_copy(b, &len);
	cache_body_unref(b);
	as = json_decode_applications(p, len, T0, &cause);
	ck_assert_ptr_nonnull(as);
	h = strdup(as->apps_hashcode);
	applications_free(as);
	free(p);
	return (h);
}

START_TEST(test_delta_truncated_never_reconciles)
{
	struct registry_conf	 rc;
	char			*h, id[32];
	int			 i;

	cache_free(cache);
	registry_free(reg);
	registry_conf_defaults(&rc);
	rc.max_delta_bytes = 8192;
	reg = registry_new(&rc, T0);
	cache = cache_new(reg, 0, 180000);
	ck_assert_int_eq(registry_register(reg, mkinst("APP", "keep",
	    STATUS_UP), 0, TM(T0)), REG_OK);
	h = delta_hash(T0 + 1);
	ck_assert_str_eq(h, "UP_1_");
	free(h);
	/* Cancels past the byte bound push "keep"'s record out early. */
	for (i = 0; i < 200; i++) {
		snprintf(id, sizeof id, "c%d", i);
		registry_register(reg, mkinst("APP", id, STATUS_UP), 0,
		    TM(T0 + 2 + i));
		registry_cancel(reg, "APP", id, 0, TM(T0 + 2 + i), -1);
	}
	h = delta_hash(T0 + 300);
	ck_assert_str_eq(h, REGISTRY_HASHCODE_TRUNCATED);
	free(h);
	/* After the retention time of the dropped records, it reconciles. */
	registry_purge_deltas(reg, T0 + 300 + rc.retention_ms);
	h = delta_hash(T0 + 300 + rc.retention_ms);
	ck_assert_str_eq(h, "UP_1_");
	free(h);
}
END_TEST

START_TEST(test_bytes_accounted)
{
	struct cache_reaper	*rp;
	size_t			 len, zlen;
	char			*p, *z;

	p = fetch(CACHE_JSON, 0, 0, &len);
	z = fetch(CACHE_XML, 0, 1, &zlen);
	/* The bodies, their per-app fragments and the gzip fragments. */
	ck_assert_uint_ge(cache_bytes(cache), len + zlen);
	free(p);
	free(z);
	rp = cache_reaper_hold(cache);
	cache_free(cache);
	cache = NULL;
	ck_assert_uint_eq(cache_reaper_bytes(rp), 0);
	cache_reaper_release(rp);
}
END_TEST

START_TEST(test_delta_gzip_is_the_plain_delta)
{
	struct cache_key	 kp = { CACHE_JSON, 0, 0 }, kz = { CACHE_JSON,
	    0, 1 };
	struct cache_body	*b;
	char			*plain, *gz, *inflated;
	size_t			 lp, lz, li;

	b = cache_delta(cache, &kz, T0 + 10);	/* gzip first */
	gz = cache_body_copy(b, &lz);
	cache_body_unref(b);
	b = cache_delta(cache, &kp, T0 + 11);
	plain = cache_body_copy(b, &lp);
	cache_body_unref(b);
	inflated = gunzip(gz, lz, &li);
	/* One delta build, one version: the gzip packs the same payload. */
	ck_assert_str_eq(inflated, plain);
	ck_assert_uint_eq(cache_stats(cache)->delta_builds, 1);
	free(plain);
	free(gz);
	free(inflated);
}
END_TEST

START_TEST(test_app_and_vip)
{
	struct cache_key	 k = { CACHE_JSON, 0, 0 };
	struct cache_body	*b;
	char			*p, *cause = NULL;
	size_t			 len;
	struct application	*a;
	struct applications	*as;

	ck_assert_ptr_null(cache_app(cache, &k, "NOPE", T0));
	b = cache_app(cache, &k, "APP2", T0);
	ck_assert_ptr_nonnull(b);
	p = cache_body_copy(b, &len);
	cache_body_unref(b);
	ck_assert(strncmp(p, "{\"application\":{\"name\":\"APP2\"", 29) == 0);
	a = json_decode_application(p, len, T0, &cause);
	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(a->n, 4);
	application_free(a);
	free(p);

	b = cache_vip(cache, &k, "vip-b", 0, T0);
	p = cache_body_copy(b, &len);
	cache_body_unref(b);
	as = json_decode_applications(p, len, T0, &cause);
	ck_assert_ptr_nonnull(as);
	ck_assert_int_eq(as->versions_delta, -1);
	ck_assert_uint_eq(applications_count(as), 20);
	applications_free(as);
	free(p);
	b = cache_vip(cache, &k, "VIP-B", 0, T0);	/* case-sensitive */
	p = cache_body_copy(b, &len);
	cache_body_unref(b);
	ck_assert_ptr_nonnull(strstr(p, "\"application\":[]"));
	free(p);
}
END_TEST

START_TEST(test_read_only_layer)
{
	struct cache		*ro = cache_new(reg, 30000, 180000);
	struct cache_key	 k = { CACHE_JSON, 0, 0 };
	struct cache_body	*b;
	char			*p;
	size_t			 len;

	b = cache_apps(ro, &k, T0);
	p = cache_body_copy(b, &len);
	cache_body_unref(b);
	ck_assert_ptr_nonnull(strstr(p, "app4-i3"));
	free(p);
	ck_assert_int_eq(registry_cancel(reg, "APP4", "app4-i3", 0, TM(T0 + 1),
	    -1),
	    REG_OK);
	b = cache_apps(ro, &k, T0 + 2);
	p = cache_body_copy(b, &len);
	cache_body_unref(b);
	ck_assert_ptr_nonnull(strstr(p, "app4-i3"));	/* stale, as Eureka */
	free(p);
	cache_refresh_read_only(ro, T0 + 30000);
	b = cache_apps(ro, &k, T0 + 30001);
	p = cache_body_copy(b, &len);
	cache_body_unref(b);
	ck_assert_ptr_null(strstr(p, "app4-i3"));
	free(p);
	cache_free(ro);
}
END_TEST

START_TEST(test_empty_registry)
{
	struct registry_conf	 rc;
	size_t			 len, wlen;
	char			*p, *want;

	cache_free(cache);
	registry_free(reg);
	registry_conf_defaults(&rc);
	reg = registry_new(&rc, T0);
	cache = cache_new(reg, 0, 180000);
	p = fetch(CACHE_XML, 0, 0, &len);
	want = read_fixture("applications-empty.xml", &wlen);
	ck_assert_str_eq(p, want);
	free(want);
	free(p);
	p = fetch(CACHE_JSON, 0, 0, &len);
	want = read_fixture("applications-empty.json", &wlen);
	ck_assert_str_eq(p, want);
	free(want);
	free(p);
}
END_TEST

START_TEST(test_large_registry_segments)
{
	size_t	 l1, l2;
	char	*want, *got;

	teardown();
	setup_n(200, 10);	/* > 128 KiB: served as fragment references */
	want = scratch(0, CODEC_FULL, &l1);
	got = fetch(CACHE_JSON, 0, 0, &l2);
	ck_assert_uint_eq(l1, l2);
	ck_assert(memcmp(want, got, l1) == 0);
	free(want);
	free(got);
}
END_TEST

/* What cache_body_foreach_seg() lent: each segment and its bytes. */
struct segs {
	struct cache_seg	*seg[4096];
	const char		*data[4096];
	size_t			 len[4096];
	size_t			 n;
};

/* cache_body_foreach_seg callback: keep the reference it gives. */
static void
keep_seg_cb(struct cache_seg *seg, const char *data, size_t len, void *arg)
{
	struct segs	*sg = arg;

	ck_assert_uint_lt(sg->n, 4096);
	ck_assert_uint_gt(len, 0);
	sg->seg[sg->n] = seg;
	sg->data[sg->n] = data;
	sg->len[sg->n++] = len;
}

/* The segments' bytes joined, as a front end would send them. */
static char *
segs_join(const struct segs *sg, size_t *len)
{
	struct buf	b;
	size_t		i;

	buf_init(&b, 0);
	for (i = 0; i < sg->n; i++)
		buf_add(&b, sg->data[i], sg->len[i]);
	return (buf_steal(&b, len));
}

/*
 * The zero-copy accessor: the segments, in order, are the body; a lent
 * reference keeps its bytes alive after the body and the whole cache are
 * gone (a response still being written), and its bytes stay counted in
 * cache_bytes() until the last reference goes.
 */
START_TEST(test_segments_outlive_body)
{
	struct cache_key	 k = { CACHE_JSON, 0, 0 };
	struct cache_body	*b;
	struct cache_reaper	*rp;
	static struct segs	 sg;
	size_t			 i, j, l1, l2, total = 0, distinct = 0;
	char			*want, *got;

	teardown();
	setup_n(200, 10);	/* > 128 KiB: many segments */
	b = cache_apps(cache, &k, T0 + 1000);
	want = cache_body_copy(b, &l1);
	sg.n = 0;
	cache_body_foreach_seg(b, keep_seg_cb, &sg);
	ck_assert_uint_gt(sg.n, 1);
	for (i = 0; i < sg.n; i++)
		total += sg.len[i];
	ck_assert_uint_eq(total, cache_body_len(b));
	/* Count each blob once (a body may lend one twice). */
	for (i = 0; i < sg.n; i++) {
		for (j = 0; j < i && sg.seg[j] != sg.seg[i]; j++)
			continue;
		if (j == i)
			distinct += sg.len[i];
	}
	cache_body_unref(b);
	rp = cache_reaper_hold(cache);
	cache_free(cache);
	cache = NULL;
	/*
	 * Each fragment begins with its separator; the body lends the
	 * first one without its ",", which stays counted until it goes.
	 */
	ck_assert_uint_eq(cache_reaper_bytes(rp), distinct + 1);
	got = segs_join(&sg, &l2);
	ck_assert_uint_eq(l1, l2);
	ck_assert(memcmp(want, got, l1) == 0);
	for (i = 0; i < sg.n; i++)
		cache_seg_unref(sg.seg[i]);
	ck_assert_uint_eq(cache_reaper_bytes(rp), 0);
	cache_reaper_release(rp);
	free(want);
	free(got);
}
END_TEST

/*
 * Without the read-only layer nothing expires by time: a fetch long after
 * the auto-expiration time re-encodes nothing (at a million instances
 * that re-encode was seconds on the loop). With the layer, Eureka's
 * read-write expiry still refreshes the bodies.
 */
START_TEST(test_no_time_expiry)
{
	struct cache		*ro;
	struct cache_key	 k = { CACHE_JSON, 0, 1 };
	struct cache_body	*b;
	uint64_t		 enc, builds;
	int			 xml, gz;

	for (xml = 0; xml <= 1; xml++) {
		for (gz = 0; gz <= 1; gz++) {
			struct cache_key kk = { xml ? CACHE_XML : CACHE_JSON,
			    0, gz };

			cache_body_unref(cache_apps(cache, &kk, T0));
		}
	}
	enc = cache_stats(cache)->fragment_encodes;
	builds = cache_stats(cache)->full_builds;
	b = cache_apps(cache, &k, T0 + 10 * 180000);
	cache_body_unref(b);
	ck_assert_uint_eq(cache_stats(cache)->fragment_encodes, enc);
	ck_assert_uint_eq(cache_stats(cache)->full_builds, builds);

	ro = cache_new(reg, 30000, 180000);
	cache_body_unref(cache_apps(ro, &k, T0));
	enc = cache_stats(ro)->fragment_encodes;
	cache_refresh_read_only(ro, T0 + 180001);
	ck_assert_uint_eq(cache_stats(ro)->fragment_encodes, enc + 5);
	cache_free(ro);
}
END_TEST

/* The cache looks fragments up by the registry's hash of the app name. */
START_TEST(test_app_hash_is_hash_str)
{
	size_t	i;

	for (i = 0; i < registry_app_count(reg); i++) {
		struct reg_app	*a = registry_app_at(reg, i);

		ck_assert(reg_app_hash(a) == hash_str(reg_app_name(a)));
	}
}
END_TEST

/* The gzip full body of variant (xml, full) equals a from-scratch encode. */
static void
check_gzip_equals_scratch(int xml)
{
	size_t	 l1, l2;
	char	*want, *gzp, *got;

	want = scratch(xml, CODEC_FULL, &l1);
	gzp = fetch(xml ? CACHE_XML : CACHE_JSON, 0, 1, &l2);
	got = gunzip(gzp, l2, &l2);
	ck_assert_uint_eq(l1, l2);
	ck_assert(memcmp(want, got, l1) == 0);
	free(want);
	free(gzp);
	free(got);
}

/*
 * A large gzip body (400 applications in chunks of ~32, CRCs joined with
 * the precomputed operators) inflates to a from-scratch encode, before
 * and after changes: one application changed (only its chunk is copied
 * again), the first application gone (JSON's first chunk loses its
 * leading separator), a new application.
 */
START_TEST(test_gzip_large_stitch)
{
	struct cache_key	 k = { CACHE_JSON, 0, 1 };
	struct cache_body	*b;
	uint64_t		 built;
	char			 id[32];
	int			 xml, i;

	teardown();
	setup_n(400, 25);
	b = cache_apps(cache, &k, T0 + 1000);
	ck_assert_uint_gt(cache_body_len(b), 128 * 1024);
	cache_body_unref(b);
	for (xml = 0; xml <= 1; xml++)
		check_gzip_equals_scratch(xml);
	built = cache_stats(cache)->gz_chunk_builds;
	ck_assert_uint_gt(built, 2 * 4);	/* several chunks per body */
	ck_assert_int_eq(registry_register(reg, mkinst("APP7", "new",
	    STATUS_UP), 0, TM(T0 + 500)), REG_OK);
	check_gzip_equals_scratch(0);
	ck_assert_uint_le(cache_stats(cache)->gz_chunk_builds, built + 2);
	for (i = 0; i < 25; i++) {
		snprintf(id, sizeof id, "app0-i%d", i);
		ck_assert_int_eq(registry_cancel(reg, "APP0", id, 0,
		    TM(T0 + 600), -1), REG_OK);
	}
	for (xml = 0; xml <= 1; xml++)
		check_gzip_equals_scratch(xml);
	ck_assert_int_eq(registry_register(reg, mkinst("ZNEW", "z1",
	    STATUS_UP), 0, TM(T0 + 700)), REG_OK);
	for (xml = 0; xml <= 1; xml++)
		check_gzip_equals_scratch(xml);
}
END_TEST

/* The body of key, copied out, with the counters unchanged by the fetch. */
static char *
fetch_ready(const struct cache_key *k, size_t *len)
{
	uint64_t		 enc = cache_stats(cache)->fragment_encodes;
	uint64_t		 builds = cache_stats(cache)->full_builds;
	struct cache_body	*b = cache_apps(cache, k, T0 + 1000);
	char			*p;

	ck_assert_uint_eq(cache_stats(cache)->fragment_encodes, enc);
	ck_assert_uint_eq(cache_stats(cache)->full_builds, builds);
	p = cache_body_copy(b, len);
	cache_body_unref(b);
	return (p);
}

/* The body of key (plain or gzip) equals a from-scratch encode. */
static void
check_ready_equals_scratch(const struct cache_key *k)
{
	size_t	 l1, l2;
	char	*want, *got, *plain;

	want = scratch(k->format == CACHE_XML, k->compact ? CODEC_COMPACT :
	    CODEC_FULL, &l1);
	got = fetch_ready(k, &l2);
	if (k->gzip) {
		plain = gunzip(got, l2, &l2);
		free(got);
		got = plain;
	}
	ck_assert_uint_eq(l1, l2);
	ck_assert(memcmp(want, got, l1) == 0);
	free(want);
	free(got);
}

/*
 * Step key with budget until done; each slice may encode at most `most`
 * fragments. The number of slices it took.
 */
static int
step_all(const struct cache_key *k, size_t budget, uint64_t most)
{
	uint64_t	enc;
	int		n, done;

	for (n = 1, done = 0; !done; n++) {
		ck_assert_int_lt(n, 100000);
		enc = cache_stats(cache)->fragment_encodes;
		done = cache_apps_step(cache, k, budget, T0 + 1000);
		ck_assert_uint_le(cache_stats(cache)->fragment_encodes - enc,
		    most);
	}
	return (n - 1);
}

/*
 * A from-scratch build with a tiny budget takes one application per
 * slice (200 apps: about 200 slices, never more than one fragment each)
 * to prepare, and as many to assemble (the walk places one application a
 * slice), and the body it ends with is a from-scratch encode, for every
 * variant; the fetch itself then encodes nothing.
 */
START_TEST(test_step_partial_build)
{
	struct cache_key	 k = { CACHE_JSON, 0, 0 };
	int			 f, c, g, n;

	teardown();
	setup_n(200, 5);
	n = step_all(&k, 1, 1);
	ck_assert_int_ge(n, 400);
	ck_assert_int_le(n, 403);
	ck_assert_uint_eq(cache_stats(cache)->fragment_encodes, 200);
	ck_assert_uint_eq(cache_stats(cache)->full_builds, 1);
	check_ready_equals_scratch(&k);
	for (f = 0; f <= 1; f++)
		for (c = 0; c <= 1; c++)
			for (g = 0; g <= 1; g++) {
				k = (struct cache_key){ f, c, g };
				(void)step_all(&k, 1, 1);
				check_ready_equals_scratch(&k);
			}
	/* Done: a step of a fresh body does nothing and says so. */
	ck_assert_int_eq(cache_apps_step(cache, &k, 1, T0 + 1000), 1);
}
END_TEST

/*
 * cache_ready (issue 21: the memory budget refuses a fetch whose body
 * needs encoding, serves one that is current): false before a build and
 * while one is under way, true once done, false again after a change;
 * cache_abandon gives a build under way up (its bytes go, a later step
 * begins again) for the full body and for the delta, application and VIP.
 */
START_TEST(test_ready_and_abandon)
{
	struct cache_key	 k = { CACHE_JSON, 0, 0 };
	struct cache_key	 kx = { CACHE_XML, 0, 0 };
	size_t			 before;
	int			 n;

	teardown();
	setup_n(50, 5);
	ck_assert(!cache_ready(cache, CACHE_RES_APPS, &k, NULL, T0 + 1000));
	ck_assert_int_eq(cache_step(cache, CACHE_RES_APPS, &k, NULL, 1,
	    T0 + 1000), 0);
	ck_assert(!cache_ready(cache, CACHE_RES_APPS, &k, NULL, T0 + 1000));
	cache_abandon(cache, CACHE_RES_APPS, &k, NULL);
	n = step_all(&k, 1, 1);
	ck_assert_int_ge(n, 2);
	ck_assert(cache_ready(cache, CACHE_RES_APPS, &k, NULL, T0 + 1000));
	ck_assert_int_eq(registry_register(reg, mkinst("APP3", "new",
	    STATUS_UP), 0, TM(T0 + 1000)), REG_OK);
	ck_assert(!cache_ready(cache, CACHE_RES_APPS, &k, NULL, T0 + 1000));

	/* A sliced delta build, abandoned: its buffer's bytes go. */
	ck_assert(!cache_ready(cache, CACHE_RES_DELTA, &kx, NULL, T0 + 1000));
	before = cache_bytes(cache);
	/* (Its first slices only rank the queue's records.) */
	for (n = 0; cache_bytes(cache) == before; n++) {
		ck_assert_int_lt(n, 10000);
		ck_assert_int_eq(cache_step(cache, CACHE_RES_DELTA, &kx, NULL,
		    4096, T0 + 1000), 0);
	}
	cache_abandon(cache, CACHE_RES_DELTA, &kx, NULL);
	ck_assert_uint_eq(cache_bytes(cache), before);
	while (!cache_step(cache, CACHE_RES_DELTA, &kx, NULL, 0, T0 + 1000))
		;
	ck_assert(cache_ready(cache, CACHE_RES_DELTA, &kx, NULL, T0 + 1000));

	/* One application; an unknown one needs nothing. */
	ck_assert(!cache_ready(cache, CACHE_RES_APP, &k, "APP7",
	    T0 + 1000));
	ck_assert_int_eq(cache_step(cache, CACHE_RES_APP, &k, "APP7", 0,
	    T0 + 1000), 1);
	ck_assert(cache_ready(cache, CACHE_RES_APP, &k, "APP7", T0 + 1000));
	ck_assert(cache_ready(cache, CACHE_RES_APP, &k, "NOSUCH", T0 + 1000));
}
END_TEST

/* Register id in app (a new instance). */
static void
add(const char *app, const char *id, int64_t t)
{
	ck_assert_int_eq(registry_register(reg, mkinst(app, id, STATUS_UP), 0,
	    TM(t)), REG_OK);
}

/*
 * Changes in the middle of a multi-slice build: an application already
 * prepared gets an instance (its fragment is encoded again), a new one
 * appears, one is dropped (the registry moves its last application into
 * the hole, below the build's position) and an instance goes OUT_OF_SERVICE
 * (the hash code counts it). The body served is that of the registry
 * after all of them, hash code included, plain and gzip.
 */
START_TEST(test_step_change_in_middle)
{
	struct cache_key	 k = { CACHE_JSON, 0, 0 };
	char			 id[32];
	int			 i, g;

	for (g = 0; g <= 1; g++) {
		teardown();
		setup_n(60, 3);
		k.gzip = g;
		for (i = 0; i < 30; i++)
			ck_assert_int_eq(cache_apps_step(cache, &k, 1,
			    T0 + 1000), 0);
		add("APP2", "late", T0 + 500);
		add("ZLATE", "z1", T0 + 500);
		for (i = 0; i < 3; i++) {
			snprintf(id, sizeof id, "app1-i%d", i);
			ck_assert_int_eq(registry_cancel(reg, "APP1", id, 0,
			    TM(T0 + 600), -1), REG_OK);
		}
		ck_assert_int_eq(registry_status_update(reg, "APP0",
		    "app0-i1", STATUS_OUT_OF_SERVICE, -1, 0, TM(T0 + 700), 0),
		    REG_OK);
		(void)step_all(&k, 1, 2);
		check_ready_equals_scratch(&k);
		k.format = CACHE_XML;
		(void)step_all(&k, 1, 2);
		check_ready_equals_scratch(&k);
		k.format = CACHE_JSON;
	}
}
END_TEST

/*
 * After one change a budget of a few applications' encodings does the
 * whole build in the first slice: the reply goes out in the same turn.
 */
START_TEST(test_step_one_change_in_one_slice)
{
	struct cache_key	 k = { CACHE_XML, 0, 1 };
	size_t			 len;
	char			*p;

	teardown();
	setup_n(100, 4);
	p = fetch(CACHE_XML, 0, 1, &len);
	free(p);
	add("APP50", "new", T0 + 500);
	ck_assert_int_eq(cache_apps_step(cache, &k, 64 * 1024, T0 + 1000), 1);
	check_ready_equals_scratch(&k);
}
END_TEST

/*
 * A change before every slice cannot keep a build from ending: after a
 * few assemblies that ran out of budget the next one runs whole, and the
 * body is still exact.
 */
START_TEST(test_step_ends_under_churn)
{
	struct cache_key	 k = { CACHE_JSON, 0, 1 };
	char			 app[32], id[32];
	int			 n = 0;

	teardown();
	setup_n(40, 3);
	while (!cache_apps_step(cache, &k, 1, T0 + 1000)) {
		/* Change two applications between slices. */
		snprintf(app, sizeof app, "APP%d", n % 40);
		snprintf(id, sizeof id, "churn%d", n);
		add(app, id, T0 + 500);
		snprintf(app, sizeof app, "APP%d", (n + 20) % 40);
		add(app, id, T0 + 500);
		ck_assert_int_lt(++n, 1000);
	}
	ck_assert_uint_ge(cache_stats(cache)->build_aborts, 1);
	check_ready_equals_scratch(&k);
}
END_TEST

/* Two callers stepping the same key share one build: no fragment twice. */
START_TEST(test_step_shared)
{
	struct cache_key	 k = { CACHE_JSON, 1, 0 };
	int			 done = 0;

	teardown();
	setup_n(50, 2);
	while (!done) {
		done = cache_apps_step(cache, &k, 1, T0 + 1000);
		if (!done)
			done = cache_apps_step(cache, &k, 1, T0 + 1000);
	}
	ck_assert_uint_eq(cache_stats(cache)->fragment_encodes, 50);
	check_ready_equals_scratch(&k);
}
END_TEST

/* cache_body_foreach_seg callback: count and release. */
static void
count_seg_cb(struct cache_seg *seg, const char *data, size_t len, void *arg)
{
	(void)data;
	(void)len;
	(*(size_t *)arg)++;
	cache_seg_unref(seg);
}

/* The number of segments of key's current body. */
static size_t
nsegs(const struct cache_key *k)
{
	struct cache_body	*b = cache_apps(cache, k, T0 + 1000);
	size_t			 n = 0;

	cache_body_foreach_seg(b, count_seg_cb, &n);
	cache_body_unref(b);
	return (n);
}

/* Whether c's body for k at t is byte for byte fresh's at T0 + 1000. */
static int
same_at(struct cache *c, struct cache *fresh, const struct cache_key *k,
    int64_t t)
{
	struct cache_body	*a = cache_apps(c, k, t);
	struct cache_body	*b = cache_apps(fresh, k, T0 + 1000);
	size_t			 la, lb;
	char			*pa = cache_body_copy(a, &la);
	char			*pb = cache_body_copy(b, &lb);
	int			 eq = la == lb && memcmp(pa, pb, la) == 0;

	cache_body_unref(a);
	cache_body_unref(b);
	free(pa);
	free(pb);
	return (eq);
}

/*
 * A build in slices encodes each slice's fragments into one run, and a
 * body of runs is one segment per run, not per application: 200 apps in
 * slices of ~25 is a handful of segments. One change splits one run (at
 * most two more segments); when most of a run's applications changed,
 * the others are copied out of it, so the dead bytes go (with the next
 * build, which no longer lends the run). The body stays a from-scratch
 * encode all along.
 */
START_TEST(test_step_runs)
{
	struct cache_key	 k = { CACHE_JSON, 0, 0 };
	size_t			 n0, n1, len, i;
	char			 app[32], id[32];
	char			*p;

	teardown();
	setup_n(200, 5);
	p = fetch(CACHE_JSON, 0, 0, &len);	/* the size of one fragment */
	free(p);
	teardown();
	setup_n(200, 5);
	(void)step_all(&k, len / 8, 200);
	check_ready_equals_scratch(&k);
	n0 = nsegs(&k);
	ck_assert_uint_le(n0, 20);
	add("APP100", "new", T0 + 500);
	ck_assert_int_eq(cache_apps_step(cache, &k, len, T0 + 1000), 1);
	check_ready_equals_scratch(&k);
	n1 = nsegs(&k);
	ck_assert_uint_le(n1, n0 + 2);
	/* Three applications in four change: every run mostly dead. */
	for (i = 0; i < 200; i++) {
		if (i % 4 == 0)
			continue;
		snprintf(app, sizeof app, "APP%zu", i);
		snprintf(id, sizeof id, "more%zu", i);
		add(app, id, T0 + 600);
	}
	ck_assert_int_eq(cache_apps_step(cache, &k, 0, T0 + 1000), 1);
	check_ready_equals_scratch(&k);
	/*
	 * That build still lends the runs for the applications it reached
	 * before their runs were copied out of; the next one does not, and
	 * the runs go. Kept, they would hold ~1.75x the body; now ~1x.
	 */
	add("APP0", "last", T0 + 700);
	ck_assert_int_eq(cache_apps_step(cache, &k, 0, T0 + 1000), 1);
	check_ready_equals_scratch(&k);
	ck_assert_uint_le(cache_bytes(cache), len + len * 4 / 10);
}
END_TEST

/*
 * The bytes of fragments superseded inside a run (their applications
 * changed, re-encoded on their own) are not content: the live ones are
 * moved to a new run once the dead pass a quarter of the run, so the
 * cache holds at most ~1/3 more than its body, not up to twice it. 200
 * apps built in slices (runs of ~25), then two in five changed: each
 * run 40 % dead (on the code before, copied out only past half: 1.4x).
 */
START_TEST(test_run_dead_bytes_bounded)
{
	struct cache_key	 k = { CACHE_JSON, 0, 0 };
	struct cache_body	*b;
	size_t			 len, i;
	char			 app[32], id[32];
	char			*p;

	teardown();
	setup_n(200, 5);
	p = fetch(CACHE_JSON, 0, 0, &len);
	free(p);
	teardown();
	setup_n(200, 5);
	(void)step_all(&k, len / 8, 200);
	check_ready_equals_scratch(&k);
	ck_assert_uint_le(nsegs(&k), 20);
	for (i = 0; i < 200; i++) {
		if (i % 5 != 1 && i % 5 != 3)
			continue;
		snprintf(app, sizeof app, "APP%zu", i);
		snprintf(id, sizeof id, "more%zu", i);
		add(app, id, T0 + 600);
	}
	ck_assert_int_eq(cache_apps_step(cache, &k, 0, T0 + 1000), 1);
	check_ready_equals_scratch(&k);
	/* The next build no longer lends the old runs: they go. */
	add("APP0", "last", T0 + 700);
	ck_assert_int_eq(cache_apps_step(cache, &k, 0, T0 + 1000), 1);
	check_ready_equals_scratch(&k);
	b = cache_apps(cache, &k, T0 + 1000);
	len = cache_body_len(b);
	cache_body_unref(b);
	ck_assert_uint_le(cache_bytes(cache), len + len * 3 / 10);
	/* Still a segment per run and per changed app, not per app. */
	ck_assert_uint_le(nsegs(&k), 20 + 2 * 81);
}
END_TEST

/* Key of variant index i (0..7): format, compact, gzip. */
static struct cache_key
key_at(int i)
{
	return ((struct cache_key){ (enum cache_format)(i >> 2), (i >> 1) & 1,
	    i & 1 });
}

/* c's full body for k at t as a plain string (inflated if gzip). */
static char *
apps_plain(struct cache *c, const struct cache_key *k, int64_t t,
    size_t *len)
{
	struct cache_body	*b = cache_apps(c, k, t);
	char			*p, *q;

	ck_assert_ptr_nonnull(b);
	p = cache_body_copy(b, len);
	cache_body_unref(b);
	if (!k->gzip)
		return (p);
	q = gunzip(p, *len, len);
	free(p);
	return (q);
}

/* Whether body p (len bytes) is a from-scratch encode of the registry. */
static int
is_scratch(const struct cache_key *k, const char *p, size_t len)
{
	size_t	 l;
	char	*want = scratch(k->format == CACHE_XML, k->compact ?
		    CODEC_COMPACT : CODEC_FULL, &l);
	int	 eq = l == len && memcmp(want, p, l) == 0;

	free(want);
	return (eq);
}

/*
 * Every variant's full body, after one change, in one slice: at most one
 * fragment encoded, some of the previous body's segments taken over, and
 * the body byte for byte that of a cache built from scratch over the same
 * registry (gzip too: one deflate level for every fragment, chunk ends by
 * name), plain ones a from-scratch encode, gzip ones inflating to it.
 */
static void
check_one_change(int most)
{
	struct cache_key	 k;
	struct cache		*fresh = cache_new(reg, 0, 0);
	struct htab_stats	 st;
	uint64_t		 enc, reuse;
	size_t			 len;
	char			*p;
	int			 i;

	for (i = 0; i < 8; i++) {
		k = key_at(i);
		enc = cache_stats(cache)->fragment_encodes;
		reuse = cache_stats(cache)->seg_reuses;
		ck_assert_int_eq(cache_apps_step(cache, &k, 1 << 20,
		    T0 + 1000), 1);
		ck_assert_uint_le(cache_stats(cache)->fragment_encodes - enc,
		    (uint64_t)most);
		ck_assert_uint_gt(cache_stats(cache)->seg_reuses, reuse);
		ck_assert(same_at(cache, fresh, &k, T0 + 1000));
		p = apps_plain(cache, &k, T0 + 1000, &len);
		ck_assert(is_scratch(&k, p, len));
		free(p);
	}
	cache_table_stats(cache, &st);
	ck_assert_uint_eq(st.entries, registry_app_count(reg));
	cache_free(fresh);
}

/* Cancel every instance of app (per of them): the app goes. */
static void
drop_app(int a, int per, int64_t t)
{
	char	app[32], id[32];
	int	i;

	snprintf(app, sizeof app, "APP%d", a);
	for (i = 0; i < per; i++) {
		snprintf(id, sizeof id, "app%d-i%d", a, i);
		ck_assert_int_eq(registry_cancel(reg, app, id, 0, TM(t), -1),
		    REG_OK);
	}
}

/*
 * A build after a change takes the previous body's unchanged segments
 * over (its layout) rather than walking every application; whatever the
 * change, the body is the one a from-scratch build makes: an application
 * in the middle changed, a new one at the end, one dropped (the
 * registry's last moves into its place), the first one changed, the
 * first one dropped (JSON's new first application loses its separator).
 * After many changes built in slices (assemblies out of budget, which
 * leave no layout), the next single change reuses segments again.
 */
START_TEST(test_layout_after_change)
{
	struct cache_key	 k;
	char			 app[32];
	int			 i;

	teardown();
	setup_n(300, 3);
	for (i = 0; i < 8; i++) {
		k = key_at(i);
		(void)step_all(&k, 4096, 300);
	}
	ck_assert_int_eq(registry_status_update(reg, "APP150", "app150-i1",
	    STATUS_OUT_OF_SERVICE, -1, 0, TM(T0 + 100), 0), REG_OK);
	check_one_change(1);
	add("ZNEW", "z1", T0 + 200);
	check_one_change(1);
	drop_app(7, 3, T0 + 300);
	check_one_change(0);
	add("APP0", "more", T0 + 400);
	check_one_change(1);
	drop_app(0, 3, T0 + 500);
	ck_assert_int_eq(registry_cancel(reg, "APP0", "more", 0,
	    TM(T0 + 500), -1), REG_OK);
	check_one_change(0);
	for (i = 10; i < 290; i += 2) {
		snprintf(app, sizeof app, "APP%d", i);
		add(app, "burst", T0 + 600);
	}
	for (i = 0; i < 8; i++) {
		k = key_at(i);
		(void)step_all(&k, 2048, 300);
		check_ready_equals_scratch(&k);
	}
	add("APP151", "last", T0 + 700);
	check_one_change(1);
}
END_TEST

/*
 * The read-write layer's walk across slices, taking the previous body's
 * segments over (its layout): after changes in one application in 50,
 * every variant's build in small slices sees a change ahead of the walk
 * (no new start) and one behind it (a new start, the layout's segments
 * and chunks still reused); each body is byte for byte a from-scratch
 * cache's, and the next single change reuses segments again.
 */
START_TEST(test_step_walk_reuse_change_mid)
{
	/*
	 * A gzip body's chunks end where a name's keyed hash says
	 * (GZ_CHUNK_MASK), so with a random key the eight changed
	 * applications below land in every chunk of JSON gzip's body in
	 * about one run in ten (5 of 40 measured) and no segment is left
	 * to reuse. The key is fixed so the layout is the same in every
	 * run (the key "reuse-change-mid" is one of those layouts: it
	 * fails the reuse assertion).
	 */
	static const uint8_t	 key[HASH_KEY_LEN] = "walk-reuse-key-1";
	struct cache_key	 k;
	struct cache		*fresh;
	uint64_t		 a0, p0, r0;
	char			 app[32], id[32];
	int			 i, j, n, done, phase;

	teardown();
	hash_set_key(key);
	setup_n(300, 3);
	for (i = 0; i < 8; i++) {
		k = key_at(i);
		(void)step_all(&k, 0, 300);
	}
	for (i = 0; i < 8; i++) {
		k = key_at(i);
		for (j = 25; j < 300; j += 50) {
			snprintf(app, sizeof app, "APP%d", j);
			snprintf(id, sizeof id, "v%d", i);
			add(app, id, T0 + 100 + i);
		}
		a0 = cache_stats(cache)->build_aborts;
		p0 = cache_stats(cache)->asm_apps;
		r0 = cache_stats(cache)->seg_reuses;
		for (n = 0, done = 0, phase = 0; !done; n++) {
			ck_assert_int_lt(n, 100000);
			done = cache_apps_step(cache, &k, 300, T0 + 1000);
			if (done)
				break;
			if (phase == 0 &&
			    cache_stats(cache)->asm_apps - p0 >= 100) {
				snprintf(id, sizeof id, "ahead%d", i);
				add("APP290", id, T0 + 200 + i);
				phase = 1;
			} else if (phase == 1 &&
			    cache_stats(cache)->asm_apps - p0 >= 200) {
				ck_assert_uint_eq(cache_stats(cache)->build_aborts,
				    a0);
				snprintf(id, sizeof id, "behind%d", i);
				add("APP1", id, T0 + 300 + i);
				phase = 2;
			}
		}
		ck_assert_int_eq(phase, 2);
		ck_assert_uint_eq(cache_stats(cache)->build_aborts, a0 + 1);
		ck_assert_uint_gt(cache_stats(cache)->seg_reuses, r0);
		check_ready_equals_scratch(&k);
		fresh = cache_new(reg, 0, 0);
		ck_assert(same_at(cache, fresh, &k, T0 + 1000));
		cache_free(fresh);
	}
	for (i = 0; i < 8; i++) {
		k = key_at(i);
		(void)step_all(&k, 0, 300);
	}
	add("APP150", "last", T0 + 900);
	check_one_change(1);
}
END_TEST

/*
 * A gzip variant keeps each compressed fragment once, in the chunk that
 * holds it (not also in the fragment record): the cache holds about the
 * plain body plus the gzip body, before and after changes. (A body under
 * 128 KiB is coalesced into one blob of its own, a copy by design: this
 * one is larger.)
 */
START_TEST(test_gzip_bytes_once)
{
	struct cache_key	 kp = { CACHE_JSON, 0, 0 };
	struct cache_key	 kz = { CACHE_JSON, 0, 1 };
	struct cache_body	*b;
	size_t			 plen, zlen;
	int			 i;

	teardown();
	setup_n(600, 3);
	b = cache_apps(cache, &kp, T0 + 1000);
	plen = cache_body_len(b);
	cache_body_unref(b);
	b = cache_apps(cache, &kz, T0 + 1000);
	zlen = cache_body_len(b);
	cache_body_unref(b);
	ck_assert_uint_gt(zlen, 128 * 1024);	/* not coalesced: a copy */
	ck_assert_uint_le(cache_bytes(cache), plen + zlen + zlen / 8);
	for (i = 0; i < 20; i++) {
		add("APP77", i % 2 ? "flip" : "flop", T0 + 100 + i);
		b = cache_apps(cache, &kz, T0 + 1000);
		cache_body_unref(b);
		b = cache_apps(cache, &kp, T0 + 1000);
		cache_body_unref(b);
	}
	ck_assert_uint_le(cache_bytes(cache), plen + zlen + zlen / 8 +
	    4 * plen / 600);
}
END_TEST

/* What body_excess gathers: segment index, how many over, by how much. */
struct excess {
	size_t	i, skip, over, bytes;
};

/*
 * cache_body_foreach_seg callback: a segment that starts its blob (all
 * but a.skip) must lie in an allocation of its bytes and terminator, give
 * or take malloc's rounding (a page for a mapped one).
 */
static void
excess_cb(struct cache_seg *seg, const char *data, size_t len, void *arg)
{
	struct excess	*x = arg;
	size_t		 have, room;

	if (x->i++ != x->skip) {
		have = malloc_usable_size((void *)(uintptr_t)data);
		room = len + 1 + (len >= 64 * 1024 ? 4096 + 32 : 32);
		if (have > room) {
			x->over++;
			x->bytes += have - len - 1;
		}
	}
	cache_seg_unref(seg);
}

/*
 * Bytes allocated past the content by the blobs of c's full body for k
 * (0 when every one is its content's size). A plain JSON body's first
 * application skips its separator, so segment 1 starts inside its blob
 * and is not looked at; every other segment of a full body starts one
 * (gzip: whole blobs; plain: a fragment's own blob, or a run from its
 * first fragment on while no change split it).
 */
static size_t
body_excess(struct cache *c, const struct cache_key *k)
{
	struct cache_body	*b = cache_apps(c, k, T0 + 1000);
	struct excess		 x = { 0, SIZE_MAX, 0, 0 };

	if (k->format == CACHE_JSON && !k->gzip)
		x.skip = 1;
	cache_body_foreach_seg(b, excess_cb, &x);
	cache_body_unref(b);
	return (x.bytes);
}

/*
 * The blobs a body is made of are allocated to their content's size:
 * cache_bytes() counts lengths, so a buffer grown by doubling and kept as
 * it was (a fragment, a run, a gzip chunk) held up to twice what was
 * counted (at 1M, the gzip chunks ~10 B an instance per format; a plain
 * fragment re-encoded after a change 30-60 % over). Every variant built
 * whole (each fragment its own blob), again after a change, and in
 * slices (runs).
 */
START_TEST(test_blobs_exact)
{
	struct cache_key	 k;
	struct cache		*sliced;
	int			 i;

	teardown();
	setup_n(600, 3);
	for (i = 0; i < 8; i++) {
		k = key_at(i);
		ck_assert_uint_eq(body_excess(cache, &k), 0);
	}
	add("APP300", "changed", T0 + 100);
	for (i = 0; i < 8; i++) {
		k = key_at(i);
		ck_assert_uint_eq(body_excess(cache, &k), 0);
	}
	sliced = cache;
	cache = cache_new(reg, 0, 0);
	for (i = 0; i < 8; i++) {
		k = key_at(i);
		(void)step_all(&k, 32 * 1024, 600);
		ck_assert_uint_eq(body_excess(cache, &k), 0);
	}
	cache_free(sliced);
}
END_TEST

/* Step c's build of k at t with budget until done; the slices it took. */
static int
step_at(struct cache *c, const struct cache_key *k, size_t budget, int64_t t)
{
	int	n;

	for (n = 1; !cache_apps_step(c, k, budget, t); n++)
		ck_assert_int_lt(n, 100000);
	return (n);
}

/* The length of c's full body for k at t. */
static size_t
apps_len(struct cache *c, const struct cache_key *k, int64_t t)
{
	struct cache_body	*b = cache_apps(c, k, t);
	size_t			 len = cache_body_len(b);

	cache_body_unref(b);
	return (len);
}

/*
 * gzip-only fetches keep no plain bytes (heureka.cache.plain-idle-ms):
 * never fetched plain, a variant's gzip build, sliced or whole, leaves
 * the cache holding exactly its gzip bodies (600 apps: not coalesced, so
 * a body's blobs are all there is), and so does a change after it (one
 * fragment encoded). Every body is byte for byte a from-scratch cache's.
 * A plain fetch then builds its fragments again in slices and gets the
 * from-scratch bytes; within the idle time a gzip build after a change
 * keeps the plain fragment it made (the next plain fetch encodes
 * nothing); once idle, the next gzip fetch (a hit) drops them all.
 */
START_TEST(test_plain_idle_gzip_only)
{
	struct cache_key	 jz = { CACHE_JSON, 0, 1 };
	struct cache_key	 xz = { CACHE_XML, 1, 1 };
	struct cache_key	 jp = { CACHE_JSON, 0, 0 };
	struct cache		*fresh;
	int64_t			 t = T0 + 1000;
	size_t			 zj, zx, pl;
	uint64_t		 enc;

	teardown();
	setup_n(600, 3);
	cache_set_plain_idle(cache, 90000);
	ck_assert_int_gt(step_at(cache, &jz, 4096, t), 10);
	zj = apps_len(cache, &jz, t);
	ck_assert_uint_gt(zj, 128 * 1024);
	ck_assert_uint_eq(cache_bytes(cache), zj);
	zx = apps_len(cache, &xz, t);		/* whole, unsliced */
	ck_assert_uint_gt(zx, 128 * 1024);
	ck_assert_uint_eq(cache_bytes(cache), zj + zx);
	fresh = cache_new(reg, 0, 0);
	ck_assert(same_at(cache, fresh, &jz, t));
	ck_assert(same_at(cache, fresh, &xz, t));
	cache_free(fresh);

	add("APP77", "more", T0 + 2000);
	enc = cache_stats(cache)->fragment_encodes;
	ck_assert_int_eq(step_at(cache, &jz, 1 << 20, T0 + 3000), 1);
	ck_assert_uint_eq(cache_stats(cache)->fragment_encodes - enc, 1);
	zj = apps_len(cache, &jz, T0 + 3000);
	ck_assert_uint_eq(cache_bytes(cache) - zx, zj);

	/* A plain fetch: its fragments again, in slices, scratch's bytes. */
	enc = cache_stats(cache)->fragment_encodes;
	ck_assert_int_gt(step_at(cache, &jp, 4096, T0 + 4000), 10);
	ck_assert_uint_ge(cache_stats(cache)->fragment_encodes - enc, 600);
	pl = apps_len(cache, &jp, T0 + 4000);
	fresh = cache_new(reg, 0, 0);
	ck_assert(same_at(cache, fresh, &jp, T0 + 4000));
	ck_assert(same_at(cache, fresh, &jz, T0 + 4000));
	ck_assert_uint_ge(cache_bytes(cache) - (zj + zx), pl);

	/* Within the idle time a change's gzip build keeps its plain. */
	add("APP300", "more", T0 + 5000);
	ck_assert_int_eq(step_at(cache, &jz, 1 << 20, T0 + 4000 + 89999), 1);
	enc = cache_stats(cache)->fragment_encodes;
	ck_assert_int_eq(step_at(cache, &jp, 1 << 20, T0 + 4000 + 89999), 1);
	ck_assert_uint_eq(cache_stats(cache)->fragment_encodes, enc);
	ck_assert_uint_eq(cache_stats(cache)->plain_drops, 0);
	cache_free(fresh);
	fresh = cache_new(reg, 0, 0);
	ck_assert(same_at(cache, fresh, &jp, T0 + 4000 + 89999));
	ck_assert(same_at(cache, fresh, &jz, T0 + 4000 + 89999));
	cache_free(fresh);

	/*
	 * Idle: the next gzip fetch, a hit, drops them, to the reaper
	 * (counted until it gives them back).
	 */
	zj = apps_len(cache, &jz, T0 + 4000 + 89999 + 90000);
	ck_assert_uint_eq(cache_stats(cache)->plain_drops, 1);
	ck_assert_uint_ge(cache_bytes(cache), zj + zx + pl);
	while (cache_reap(cache, 64 * 1024))
		;
	ck_assert_uint_eq(cache_bytes(cache), zj + zx);
	fresh = cache_new(reg, 0, 0);
	ck_assert(same_at(cache, fresh, &xz, T0 + 200000));
	ck_assert(same_at(cache, fresh, &jp, T0 + 200000));
	cache_free(fresh);
}
END_TEST

/*
 * Every format and variant, each round: all eight compared with a
 * from-scratch cache (which fetches the plain ones too), then gzip-only
 * after the idle time, then plain, with changes between rounds (a
 * change, an app added, one dropped): each gzip body is a from-scratch
 * cache's and inflates to a from-scratch encode; the cache holds no more
 * than the gzip bodies (twice: one under 128 KiB is coalesced into a
 * copy of its chunks), far under the plain bytes; the plain fetch after
 * the drop has scratch's bytes and its hash code; four drops a round.
 * With plain-idle-ms 0 (today's) the plain bytes stay.
 */
START_TEST(test_plain_idle_every_variant)
{
	struct cache_key	 k;
	struct cache		*fresh;
	struct cache_body	*b;
	size_t			 held, plain, len;
	char			*s;
	int			 i, round;
	int64_t			 t;

	teardown();
	setup_n(200, 3);
	cache_set_plain_idle(cache, 1000);
	for (round = 0; round < 3; round++) {
		if (round == 1)
			add("APP50", "more", T0 + 10);
		if (round == 2)
			drop_app(3, 3, T0 + 20);
		t = T0 + 5000 * round + 2000;
		held = plain = 0;
		fresh = cache_new(reg, 0, 0);
		for (i = 0; i < 8; i++) {
			k = key_at(i);
			ck_assert(same_at(cache, fresh, &k, T0 + 1000));
		}
		cache_free(fresh);
		for (i = 1; i < 8; i += 2) {
			k = key_at(i);
			(void)step_at(cache, &k, 2048, t);
			held += apps_len(cache, &k, t);
			s = apps_plain(cache, &k, t, &len);
			ck_assert(is_scratch(&k, s, len));
			plain += len;
			free(s);
		}
		while (cache_reap(cache, SIZE_MAX))
			;
		ck_assert_msg(cache_bytes(cache) <= 2 * held,
		    "round %d: %zu %zu", round, cache_bytes(cache), held);
		ck_assert_uint_lt(2 * held, plain / 2);
		for (i = 0; i < 8; i += 2) {
			/* As the front asks: cache_step, cache_res_body. */
			k = key_at(i);
			while (!cache_step(cache, CACHE_RES_APPS, &k, NULL, 2048,
			    t + 1000))
				;
			b = cache_res_body(cache, CACHE_RES_APPS, &k, NULL,
			    t + 1000);
			s = cache_body_copy(b, &len);
			cache_body_unref(b);
			ck_assert(is_scratch(&k, s, len));
			free(s);
		}
		ck_assert_uint_gt(cache_bytes(cache), plain);
	}
	fresh = cache_new(reg, 0, 0);
	for (i = 0; i < 8; i++) {
		k = key_at(i);
		ck_assert(same_at(cache, fresh, &k, t + 1000));
	}
	cache_free(fresh);
	ck_assert_uint_eq(cache_stats(cache)->plain_drops, 12);

	/* 0: kept, as before the key. */
	cache_set_plain_idle(cache, 0);
	for (i = 1; i < 8; i += 2) {
		k = key_at(i);
		cache_body_unref(cache_apps(cache, &k, T0 + 900000));
	}
	ck_assert_uint_gt(cache_bytes(cache), plain);
	ck_assert_uint_eq(cache_stats(cache)->plain_drops, 12);
}
END_TEST

/*
 * The read-only layer: a plain full snapshot nobody read within the idle
 * time is dropped at the refresh (not rebuilt), the gzip one's refresh
 * drops the plain fragments, and a plain fetch after that gets a new
 * snapshot with a from-scratch cache's bytes.
 */
START_TEST(test_plain_idle_read_only)
{
	struct cache		*ro, *fresh;
	struct cache_key	 jp = { CACHE_JSON, 0, 0 };
	struct cache_key	 jz = { CACHE_JSON, 0, 1 };
	uint64_t		 enc;
	size_t			 zl;

	teardown();
	setup_n(600, 3);
	ro = cache_new(reg, 30000, 180000);
	cache_set_plain_idle(ro, 90000);
	cache_body_unref(cache_apps(ro, &jp, T0));
	cache_body_unref(cache_apps(ro, &jz, T0));
	/* Within the idle time both are refreshed: no plain re-encode. */
	enc = cache_stats(ro)->fragment_encodes;
	while (!cache_refresh_step(ro, 4096, T0 + 30000))
		;
	ck_assert_uint_eq(cache_stats(ro)->fragment_encodes, enc);
	ck_assert_uint_gt(cache_bytes(ro), apps_len(ro, &jp, T0 + 30000));
	/* Idle: the plain snapshot goes, the gzip one's build drops all. */
	enc = cache_stats(ro)->fragment_encodes;
	while (!cache_refresh_step(ro, 4096, T0 + 120000))
		;
	ck_assert_uint_eq(cache_stats(ro)->fragment_encodes, enc);
	ck_assert_uint_eq(cache_stats(ro)->plain_drops, 1);
	zl = apps_len(ro, &jz, T0 + 120000);
	while (cache_reap(ro, SIZE_MAX))
		;
	ck_assert_uint_eq(cache_bytes(ro), zl);
	fresh = cache_new(reg, 0, 0);
	ck_assert_int_gt(step_at(ro, &jp, 4096, T0 + 121000), 10);
	ck_assert(same_at(ro, fresh, &jp, T0 + 121000));
	ck_assert(same_at(ro, fresh, &jz, T0 + 121000));
	cache_free(fresh);
	cache_free(ro);
}
END_TEST

/*
 * With the read-only layer's expiry on, a sliced build that takes longer
 * than the expiry still ends in slices: the fragments it prepared first
 * are judged by the build's start, not re-encoded in one assembly (before,
 * the assembly aborted MAX_TRIES times and then ran whole: some slice
 * encoded every expired fragment). The body is the registry's.
 */
START_TEST(test_step_longer_than_expiry)
{
	struct cache		*ro;
	struct cache_key	 k = { CACHE_JSON, 0, 0 };
	uint64_t		 enc, full, most = 0;
	int64_t			 t = T0;
	int			 n, done;
	char			*p;
	size_t			 len;

	teardown();
	setup_n(200, 3);
	ro = cache_new(reg, 30000, 1000);	/* expiry 1 s */
	for (n = 1, done = 0; !done; n++) {
		ck_assert_int_lt(n, 10000);
		enc = cache_stats(ro)->fragment_encodes;
		/* 10 ms a slice: 200 slices are twice the expiry. */
		t += 10;
		done = cache_apps_step(ro, &k, 1, t);
		if (cache_stats(ro)->fragment_encodes - enc > most)
			most = cache_stats(ro)->fragment_encodes - enc;
	}
	ck_assert_int_ge(n, 200);
	ck_assert_uint_le(most, 1);
	ck_assert_uint_eq(cache_stats(ro)->build_aborts, 0);
	/* The body just built serves its turn: no second, whole assembly. */
	enc = cache_stats(ro)->fragment_encodes;
	full = cache_stats(ro)->full_builds;
	p = apps_plain(ro, &k, t, &len);
	ck_assert_uint_eq(cache_stats(ro)->full_builds, full);
	ck_assert_uint_eq(cache_stats(ro)->fragment_encodes, enc);
	ck_assert(is_scratch(&k, p, len));
	free(p);
	cache_free(ro);
}
END_TEST

/*
 * One read-only refresh slice assembles at most one full body, whatever
 * its budget left: an assembly walks every application, which the budget
 * (encoding work) does not count, so two or three in a slice were one
 * long turn at 1M (before: this pass of 8 expired full snapshots, 200 apps
 * of 3, took 1 slice of 8 assemblies with a 64 MiB budget).
 */
START_TEST(test_ro_refresh_one_assembly_a_slice)
{
	struct cache		*ro;
	struct cache_key	 k;
	uint64_t		 a0;
	int			 i, n, done;
	const int64_t		 TR = T0 + 180001;	/* all expired */

	teardown();
	setup_n(200, 3);
	ro = cache_new(reg, 30000, 180000);
	for (i = 0; i < 8; i++) {
		k = key_at(i);
		cache_body_unref(cache_apps(ro, &k, T0));
	}
	for (n = 0, done = 0; !done; n++) {
		ck_assert_int_lt(n, 1000);
		a0 = cache_stats(ro)->full_builds +
		    cache_stats(ro)->build_aborts;
		done = cache_refresh_step(ro, 64 * 1024 * 1024, TR);
		ck_assert_uint_le(cache_stats(ro)->full_builds +
		    cache_stats(ro)->build_aborts - a0, 1);
	}
	ck_assert_int_ge(n, 8);
	/* A pass in one go (the timer's old path) is not bounded. */
	cache_refresh_read_only(ro, TR + 180001);
	cache_free(ro);
}
END_TEST

/*
 * The read-only layer's refresh in slices, for every variant at once: at
 * the read-write layer's expiry (Eureka's 180 s: every fragment encodes
 * again, the whole-registry re-encode), a 1-unit budget takes about one
 * slice per application and variant (200 apps, 8 snapshots). Until a
 * snapshot's new body is whole the old one is served (the same immutable
 * body); it changes once in the pass, in one slice, and then is exactly
 * the registry of that moment (hash code included). A change in the
 * middle of the pass is in the snapshots swapped after it (those swapped
 * before are the registry of their moment), and the next pass brings
 * every snapshot up to it. The one-application snapshot is refreshed by
 * the pass too.
 */
START_TEST(test_ro_refresh_in_slices)
{
	struct cache		*ro;
	struct cache_key	 k, jk = { CACHE_JSON, 0, 0 };
	struct cache_body	*b, *held[8];
	char			*last[8], *p;
	size_t			 lastlen[8], len;
	int			 i, n, done, swaps[8], stale_steps = 0, mid = 0;
	int			 before = 0, after = 0;
	/* Past the read-write layer's expiry: every fragment re-encodes. */
	const int64_t		 TR = T0 + 180001;

	teardown();
	setup_n(200, 3);
	ro = cache_new(reg, 30000, 180000);
	for (i = 0; i < 8; i++) {
		k = key_at(i);
		last[i] = apps_plain(ro, &k, T0, &lastlen[i]);
		ck_assert(is_scratch(&k, last[i], lastlen[i]));
		held[i] = cache_apps(ro, &k, T0);
		swaps[i] = 0;
	}
	cache_body_unref(cache_app(ro, &jk, "APP7", T0));
	cache_body_unref(cache_delta(ro, &jk, T0));
	ck_assert_int_eq(registry_cancel(reg, "APP7", "app7-i1", 0,
	    TM(T0 + 1), -1), REG_OK);
	for (n = 1, done = 0; !done; n++) {
		ck_assert_int_lt(n, 100000);
		if (!mid && before >= 1) {
			/* A change while the pass is under way. */
			add("APP150", "mid", T0 + 2);
			mid = 1;
		}
		done = cache_refresh_step(ro, 1, TR);
		for (i = 0; i < 8; i++) {
			k = key_at(i);
			/* The same (immutable) body: the old one, unchanged. */
			b = cache_apps(ro, &k, TR);
			if (b == held[i]) {
				cache_body_unref(b);
				continue;
			}
			cache_body_unref(held[i]);
			held[i] = b;
			p = apps_plain(ro, &k, TR, &len);
			/* Swapped in this slice: the whole current registry. */
			ck_assert(is_scratch(&k, p, len));
			ck_assert(strstr(p, "app7-i1") == NULL);
			if (mid) {
				ck_assert(strstr(p, "\"mid\"") != NULL ||
				    strstr(p, ">mid<") != NULL);
				after++;
			} else
				before++;
			swaps[i]++;
			free(last[i]);
			last[i] = p;
			lastlen[i] = len;
		}
		for (i = 0; i < 8 && !done; i++)
			if (swaps[i] == 0) {
				stale_steps++;
				break;
			}
	}
	ck_assert_int_ge(n, 800);
	ck_assert_int_ge(stale_steps, n - 10);
	ck_assert_int_ge(before, 1);
	ck_assert_int_ge(after, 1);
	ck_assert_uint_eq(cache_stats(ro)->ro_refreshes, 1);
	for (i = 0; i < 8; i++)
		ck_assert_int_eq(swaps[i], 1);
	/* The one-application snapshot and the delta were refreshed too. */
	b = cache_app(ro, &jk, "APP7", TR);
	p = cache_body_copy(b, &len);
	cache_body_unref(b);
	ck_assert(strstr(p, "app7-i1") == NULL);
	free(p);
	/* The next pass brings every snapshot to the registry of now. */
	while (!cache_refresh_step(ro, 1, TR + 30000))
		;
	for (i = 0; i < 8; i++) {
		k = key_at(i);
		p = apps_plain(ro, &k, TR + 30000, &len);
		ck_assert(is_scratch(&k, p, len));
		free(p);
		free(last[i]);
		cache_body_unref(held[i]);
	}
	ck_assert_uint_eq(cache_stats(ro)->ro_refreshes, 2);
	cache_free(ro);
}
END_TEST

/*
 * Budget 0 runs a whole pass in one call; a variant first fetched while a
 * pass is under way gets its snapshot at once and the pass still ends; a
 * refresh after nothing changed swaps in an equal body; a pass with no
 * snapshot is complete at once.
 */
START_TEST(test_ro_refresh_step_edges)
{
	struct cache		*ro;
	struct cache_key	 k = { CACHE_XML, 0, 1 }, jk = { CACHE_JSON, 1, 0 };
	char			*p, *q;
	size_t			 len, qlen;
	int			 n;

	teardown();
	setup_n(100, 2);
	ro = cache_new(reg, 30000, 180000);
	ck_assert_int_eq(cache_refresh_step(ro, 1, T0), 1);
	p = apps_plain(ro, &k, T0, &len);
	ck_assert_int_eq(registry_cancel(reg, "APP3", "app3-i0", 0,
	    TM(T0 + 1), -1), REG_OK);
	ck_assert_int_eq(cache_refresh_step(ro, 0, T0 + 30000), 1);
	q = apps_plain(ro, &k, T0 + 30000, &qlen);
	ck_assert(is_scratch(&k, q, qlen));
	ck_assert(strstr(q, "app3-i0") == NULL);
	free(p);
	free(q);
	/* A new variant in the middle of a pass. */
	ck_assert_int_eq(registry_cancel(reg, "APP4", "app4-i0", 0,
	    TM(T0 + 2), -1), REG_OK);
	ck_assert_int_eq(cache_refresh_step(ro, 1, T0 + 200000), 0);
	/* Not swapped yet: the old body, with the cancelled instance. */
	p = apps_plain(ro, &k, T0 + 200000, &len);
	ck_assert(strstr(p, "app4-i0") != NULL);
	free(p);
	p = apps_plain(ro, &jk, T0 + 200000, &len);
	ck_assert(is_scratch(&jk, p, len));
	free(p);
	for (n = 0; !cache_refresh_step(ro, 1, T0 + 200000); n++)
		ck_assert_int_lt(n, 100000);
	p = apps_plain(ro, &k, T0 + 200000, &len);
	ck_assert(is_scratch(&k, p, len));
	free(p);
	/* cache_refresh_read_only still does a whole pass. */
	add("APP5", "whole", T0 + 3);
	cache_refresh_read_only(ro, T0 + 230000);
	p = apps_plain(ro, &k, T0 + 230000, &len);
	ck_assert(is_scratch(&k, p, len));
	free(p);
	cache_free(ro);
}
END_TEST

/*
 * A read-only refresh assembles a full body over several slices: the
 * walk of every application (looking each one up, placing its fragment,
 * copying a gzip chunk) counts in the slice's budget, so a slice of a
 * large registry's assembly places a bounded number of applications
 * and copies at most about one chunk (before: after the preparation,
 * one slice walked all 2,000 applications and copied every one of the
 * ~60 chunks, whatever its budget; the plain pass took one slice per
 * fragment and one for the whole assembly).
 */
START_TEST(test_ro_refresh_assembly_sliced)
{
	struct cache		*ro, *fresh;
	struct cache_key	 kz = { CACHE_JSON, 0, 1 }, kp = { CACHE_XML, 0, 0 };
	uint64_t		 ch, most = 0;
	int			 n, done;
	const int64_t		 TR = T0 + 180001;	/* all expired */

	teardown();
	setup_n(2000, 1);
	ro = cache_new(reg, 30000, 180000);
	cache_body_unref(cache_apps(ro, &kz, T0));
	for (n = 0, done = 0; !done; n++) {
		ck_assert_int_lt(n, 100000);
		ch = cache_stats(ro)->gz_chunk_builds;
		done = cache_refresh_step(ro, 1, TR);
		if (cache_stats(ro)->gz_chunk_builds - ch > most)
			most = cache_stats(ro)->gz_chunk_builds - ch;
	}
	ck_assert_uint_ge(cache_stats(ro)->gz_chunk_builds, 40);
	ck_assert_msg(most <= 1, "%llu chunks copied in one slice",
	    (unsigned long long)most);
	fresh = cache_new(reg, 0, 0);
	ck_assert(same_at(ro, fresh, &kz, TR));
	cache_free(fresh);
	cache_free(ro);

	/* Plain: one slice per fragment, then the walk, also in slices. */
	ro = cache_new(reg, 30000, 180000);
	cache_body_unref(cache_apps(ro, &kp, T0));
	for (n = 0, done = 0; !done; n++) {
		ck_assert_int_lt(n, 100000);
		done = cache_refresh_step(ro, 1, TR);
	}
	ck_assert_msg(n >= 3000, "%d slices for 2,000 fragments and the "
	    "assembly", n);
	fresh = cache_new(reg, 0, 0);
	ck_assert(same_at(ro, fresh, &kp, TR));
	cache_free(fresh);
	cache_free(ro);
}
END_TEST

/* Whether p (len bytes, inflated when gzip) holds instance id. */
static int
holds_id(const struct cache_key *k, const char *p, const char *id)
{
	char	want[64];

	snprintf(want, sizeof want, k->format == CACHE_XML ? ">%s<" :
	    "\"%s\"", id);
	return (strstr(p, want) != NULL);
}

/*
 * A read-only refresh whose assembly (the walk, sliced) sees changes land
 * between its slices: one in an application the walk has not reached is
 * simply in the body (no new start), one in an application it has placed
 * (an instance added; an application dropped, which moves the registry's
 * last one into its place) starts the walk again. Until the swap the old
 * snapshot is served whole; the body swapped in is byte for byte a
 * from-scratch cache's over the registry after all the changes (its hash
 * code included), plain and gzip.
 */
START_TEST(test_ro_assembly_change_mid)
{
	static const int	 vs[] = { 0, 5, 3 };	/* JSON, XML gzip, ... */
	struct cache		*ro, *fresh;
	struct cache_key	 k;
	uint64_t		 a0, p0, placed;
	char			*p;
	size_t			 len;
	int			 i, n, done, phase;
	const int64_t		 TR = T0 + 180001;	/* all expired */

	for (i = 0; i < 3; i++) {
		teardown();
		setup_n(400, 2);
		k = key_at(vs[i]);
		ro = cache_new(reg, 30000, 180000);
		cache_body_unref(cache_apps(ro, &k, T0));
		a0 = cache_stats(ro)->build_aborts;
		p0 = cache_stats(ro)->asm_apps;
		for (n = 0, done = 0, phase = 0; !done; n++) {
			ck_assert_int_lt(n, 100000);
			done = cache_refresh_step(ro, 1, TR);
			placed = cache_stats(ro)->asm_apps - p0;
			if (done)
				break;
			if (phase == 0 && placed >= 100) {
				/* Ahead of the walk (index 300). */
				add("APP300", "ahead", T0 + 10);
				phase = 1;
			} else if (phase == 1 && placed >= 200) {
				ck_assert_uint_eq(cache_stats(ro)->build_aborts,
				    a0);
				p = apps_plain(ro, &k, TR, &len);
				ck_assert(!holds_id(&k, p, "ahead"));
				free(p);
				/* Behind it: APP399 moves to index 5. */
				drop_app(5, 2, T0 + 20);
				phase = 2;
			} else if (phase == 2 && placed >= 300) {
				ck_assert_uint_eq(cache_stats(ro)->build_aborts,
				    a0 + 1);
				/* Behind the walk started again. */
				add("APP20", "behind", T0 + 30);
				phase = 3;
			}
		}
		ck_assert_int_eq(phase, 3);
		ck_assert_uint_eq(cache_stats(ro)->build_aborts, a0 + 2);
		p = apps_plain(ro, &k, TR, &len);
		ck_assert(is_scratch(&k, p, len));
		ck_assert(holds_id(&k, p, "ahead"));
		ck_assert(holds_id(&k, p, "behind"));
		ck_assert(!holds_id(&k, p, "app5-i0"));
		free(p);
		fresh = cache_new(reg, 0, 0);
		ck_assert(same_at(ro, fresh, &k, TR));
		cache_free(fresh);
		cache_free(ro);
	}
}
END_TEST

/*
 * A change behind the walk before every slice of a read-only refresh's
 * assembly cannot keep it from ending: after MAX_TRIES new starts the
 * walk runs whole, and the body is the registry's.
 */
START_TEST(test_ro_assembly_ends_under_churn)
{
	struct cache		*ro, *fresh;
	struct cache_key	 k = { CACHE_JSON, 1, 1 };
	uint64_t		 p0, f0;
	char			 id[32];
	int			 n, done;
	const int64_t		 TR = T0 + 180001;

	teardown();
	setup_n(300, 2);
	ro = cache_new(reg, 30000, 180000);
	cache_body_unref(cache_apps(ro, &k, T0));
	p0 = cache_stats(ro)->asm_apps;
	f0 = cache_stats(ro)->full_builds;
	for (n = 0, done = 0; !done; n++) {
		ck_assert_int_lt(n, 100000);
		done = cache_refresh_step(ro, 1, TR);
		/* While the walk is under way (the swap is its end). */
		if (cache_stats(ro)->asm_apps > p0 &&
		    cache_stats(ro)->full_builds == f0) {
			snprintf(id, sizeof id, "churn%d", n);
			add("APP0", id, T0 + 10);	/* index 0: behind */
		}
	}
	ck_assert_uint_ge(cache_stats(ro)->build_aborts, 2);
	ck_assert_uint_le(cache_stats(ro)->build_aborts, 8);
	fresh = cache_new(reg, 0, 0);
	ck_assert(same_at(ro, fresh, &k, TR));
	cache_free(fresh);
	cache_free(ro);
}
END_TEST

/*
 * The snapshot a refresh replaces is given back through the reaper, a
 * piece a turn (cache_reap), not freed in the slice of the swap: at 1M
 * the old plain body's runs were ~1 GB of pages freed in one turn of
 * ~150 ms (before: nothing was left for the reaper, its blobs being
 * under the 16 MiB of a big one).
 */
START_TEST(test_ro_swap_reaped)
{
	struct cache		*ro;
	struct cache_key	 k = { CACHE_JSON, 0, 0 };
	size_t			 len, calls = 0;
	const int64_t		 TR = T0 + 180001;

	teardown();
	setup_n(300, 30);
	ro = cache_new(reg, 30000, 180000);
	len = apps_len(ro, &k, T0);
	ck_assert_uint_ge(len, 4 * 1024 * 1024);
	ck_assert_int_eq(cache_reap(ro, SIZE_MAX), 0);
	cache_refresh_read_only(ro, TR);
	ck_assert_uint_ge(cache_bytes(ro), 2 * len - len / 16);
	while (cache_reap(ro, 1024 * 1024)) {
		calls++;
		ck_assert_uint_lt(calls, 1000);
	}
	ck_assert_uint_ge(calls, len / (1024 * 1024) - 1);
	ck_assert_uint_le(cache_bytes(ro), len + len / 16);
	ck_assert_uint_eq(apps_len(ro, &k, TR), len);
	cache_free(ro);
}
END_TEST

/* Expect cache_check to fail with a cause naming what. */
static void
assert_cache_breach(const struct cache *c, const char *what)
{
	char	*cause = NULL;

	ck_assert_int_eq(cache_check(c, &cause), -1);
	ck_assert_msg(cause != NULL && strstr(cause, what) != NULL,
	    "%s: want %s", cause, what);
	free(cause);
}

/*
 * cache_check is able to fail: each count, length and link broken on
 * purpose is named, and the cache passes again once it is mended.
 */
START_TEST(test_cache_check_finds_breaches)
{
	struct cache_key	 k = { CACHE_JSON, 0, 0 };
	struct cache_body	*full;
	struct appfrag		*af;
	struct blob		*bl;
	char			*cause = NULL;
	size_t			 save;
	int			 v;

	cache_body_unref(cache_vip(cache, &k, "vip-b", 0, T0));
	full = cache_apps(cache, &k, T0);
	ck_assert_msg(cache_check(cache, &cause) == 0, "%s", cause);
	v = variant(&k);
	af = frag_lookup(cache, "APP1", hash_str("APP1"));
	ck_assert_ptr_nonnull(af->plain[v]);
	bl = af->plain[v];

	cache->nvips++;
	assert_cache_breach(cache, "VIP bodies");
	cache->nvips--;
	bl->live++;
	assert_cache_breach(cache, "live");
	bl->live--;
	save = af->plen[v];
	af->plen[v] = bl->len + 1;
	assert_cache_breach(cache, "outside its blob");
	af->plen[v] = save;
	full->len++;
	assert_cache_breach(cache, "body len");
	full->len--;
	save = cache->gzc[v].cap;
	cache->gzc[v].cap = cache->gzc[v].n;
	cache->gzc[v].n++;
	assert_cache_breach(cache, "gzip chunks");
	cache->gzc[v].n--;
	cache->gzc[v].cap = save;
	cache->frags.n++;
	assert_cache_breach(cache, "the table counts");
	cache->frags.n--;
	ck_assert_msg(cache_check(cache, &cause) == 0, "%s", cause);
	cache_body_unref(full);
}
END_TEST

/* The suite. */
static Suite *
cache_suite(void)
{
	Suite	*s = suite_create("cache");
	TCase	*tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_stitched_equals_scratch);
	tcase_add_test(tc, test_stitched_parses);
	tcase_add_test(tc, test_change_reencodes_one_app);
	tcase_add_test(tc, test_heartbeat_does_not_invalidate);
	tcase_add_test(tc, test_delta_version_and_hash);
	tcase_add_test(tc, test_delta_truncated_never_reconciles);
	tcase_add_test(tc, test_bytes_accounted);
	tcase_add_test(tc, test_delta_gzip_is_the_plain_delta);
	tcase_add_test(tc, test_app_and_vip);
	tcase_add_test(tc, test_cache_check_finds_breaches);
	tcase_add_test(tc, test_read_only_layer);
	tcase_add_test(tc, test_empty_registry);
	tcase_add_test(tc, test_large_registry_segments);
	tcase_add_test(tc, test_segments_outlive_body);
	tcase_add_test(tc, test_no_time_expiry);
	tcase_add_test(tc, test_app_hash_is_hash_str);
	tcase_add_test(tc, test_gzip_large_stitch);
	tcase_add_test(tc, test_step_partial_build);
	tcase_add_test(tc, test_ready_and_abandon);
	tcase_add_test(tc, test_step_change_in_middle);
	tcase_add_test(tc, test_step_one_change_in_one_slice);
	tcase_add_test(tc, test_step_ends_under_churn);
	tcase_add_test(tc, test_step_shared);
	tcase_add_test(tc, test_step_runs);
	tcase_add_test(tc, test_step_longer_than_expiry);
	tcase_add_test(tc, test_ro_refresh_in_slices);
	tcase_add_test(tc, test_ro_refresh_one_assembly_a_slice);
	tcase_add_test(tc, test_ro_refresh_step_edges);
	tcase_add_test(tc, test_ro_refresh_assembly_sliced);
	tcase_add_test(tc, test_ro_assembly_change_mid);
	tcase_add_test(tc, test_ro_assembly_ends_under_churn);
	tcase_add_test(tc, test_ro_swap_reaped);
	tcase_add_test(tc, test_layout_after_change);
	tcase_add_test(tc, test_step_walk_reuse_change_mid);
	tcase_add_test(tc, test_gzip_bytes_once);
	tcase_add_test(tc, test_blobs_exact);
	tcase_add_test(tc, test_run_dead_bytes_bounded);
	tcase_add_test(tc, test_plain_idle_gzip_only);
	tcase_add_test(tc, test_plain_idle_every_variant);
	tcase_add_test(tc, test_plain_idle_read_only);
	suite_add_tcase(s, tc);
	return (s);
}

/* Run the suite. */
int
main(void)
{
	return (check_run(cache_suite()));
}
