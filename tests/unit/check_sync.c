/*
 * check_sync.c: unit tests for the start-up sync's and anti-entropy's
 * decisions (server/core/syncrule.c), driven by hand: when the sync is
 * done or retried, what a peer's answer means, when a differing digest
 * leads to a pull, and the reconcile loop over a peer's registry; the
 * pages of a pull (server/core/syncpage.c: cursor order, bounds, buckets,
 * changes between pages) and the per-bucket digest cache
 * (server/core/digest.c); with the registry's time given by each call.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "buf.h"
#include "digest.h"
#include "fixture.h"
#include "hash.h"
#include "instance.h"
#include "json.h"
#include "registry.h"
#include "syncpage.h"
#include "syncrule.h"
#include "testutil.h"

#define T0	1700000000000LL

static struct registry_conf	 cf;

/* Defaults, as heurekad would pass them. */
static void
setup(void)
{
	registry_conf_defaults(&cf);
}

/* An instance with a live-looking lease registered at `reg_ts`. */
static struct instance *
mkinst(const char *app, const char *id, int64_t dirty, int64_t reg_ts)
{
	struct instance	*in = fixture_instance(app, id, STATUS_UP, dirty);

	in->last_updated_ts = dirty;
	in->lease.duration_secs = 90;
	in->lease.registration_ts = reg_ts;
	in->lease.last_renewal_ts = reg_ts;
	return (in);
}

/* A remote registry holding the given instances under APP. */
static struct applications *
mkremote(struct instance **v, size_t n)
{
	struct applications	*as = applications_new();
	struct application	*a = applications_get(as, "APP");
	size_t			 i;

	for (i = 0; i < n; i++)
		application_add(a, v[i]);
	return (as);
}

/* What the cancel callback heard. */
struct cancels {
	int	 n;
	char	 id[8][32];
	int64_t	 ts[8];
};

/* Record a cancel. */
static void
cancel_cb(const char *app, const char *id, int64_t ts, void *arg)
{
	struct cancels	*c = arg;

	ck_assert_str_eq(app, "APP");
	ck_assert_int_lt(c->n, 8);
	snprintf(c->id[c->n], sizeof c->id[c->n], "%s", id);
	c->ts[c->n] = ts;
	c->n++;
}

START_TEST(test_done_on_first_ready_peer)
{
	struct sync_state	st;
	struct sync_next	nx;

	memset(&st, 0, sizeof st);
	sync_round_begin(&st, 3);
	ck_assert_int_eq(st.attempts, 1);
	/* A peer that answered but is not ready: wait for the others. */
	nx = sync_peer_done(&st, 1, 0, 1, 500);
	ck_assert_int_eq(nx.step, SYNC_WAIT);
	ck_assert_int_eq(st.done, 0);
	/* A ready one: done at once, the third is not waited for. */
	nx = sync_peer_done(&st, 1, 1, 1, 500);
	ck_assert_int_eq(nx.step, SYNC_READY);
	ck_assert_str_eq(nx.why, "synced from a ready peer");
	ck_assert_int_eq(st.done, 1);
	ck_assert_uint_eq(st.pending, 1);
}
END_TEST

START_TEST(test_done_when_all_answered_none_ready)
{
	struct sync_state	st;
	struct sync_next	nx;

	memset(&st, 0, sizeof st);
	sync_round_begin(&st, 3);
	/* One fails, two answer "not ready": a cluster starting together. */
	ck_assert_int_eq(sync_peer_done(&st, 0, 0, 1, 500).step, SYNC_WAIT);
	ck_assert_int_eq(sync_peer_done(&st, 1, 0, 1, 500).step, SYNC_WAIT);
	nx = sync_peer_done(&st, 1, 0, 1, 500);
	ck_assert_int_eq(nx.step, SYNC_READY);
	ck_assert_str_eq(nx.why, "synced (no peer was ready yet)");
	ck_assert_int_eq(st.done, 1);
}
END_TEST

START_TEST(test_retry_then_late_retry)
{
	struct sync_state	st;
	struct sync_next	nx;

	memset(&st, 0, sizeof st);
	/* Round 1 of 1 + 1 retry: nobody answers; retry after the wait. */
	sync_round_begin(&st, 2);
	ck_assert_int_eq(sync_peer_done(&st, 0, 0, 1, 500).step, SYNC_WAIT);
	nx = sync_peer_done(&st, 0, 0, 1, 500);
	ck_assert_int_eq(nx.step, SYNC_RETRY);
	ck_assert_int_eq(nx.wait_ms, 500);
	ck_assert_int_eq(nx.gave_up, 0);
	ck_assert_int_eq(st.done, 0);
	/* Round 2: the retries are used up; given up, then every second. */
	sync_round_begin(&st, 2);
	ck_assert_int_eq(st.answered, 0);
	sync_peer_done(&st, 0, 0, 1, 500);
	nx = sync_peer_done(&st, 0, 0, 1, 500);
	ck_assert_int_eq(nx.step, SYNC_RETRY);
	ck_assert_int_eq(nx.wait_ms, SYNC_LATE_RETRY_MS);
	ck_assert_int_eq(nx.gave_up, 1);
	ck_assert_int_eq(st.done, 1);	/* anti-entropy may run now */
	/* Round 3: the warning was said once. */
	sync_round_begin(&st, 2);
	sync_peer_done(&st, 0, 0, 1, 500);
	nx = sync_peer_done(&st, 0, 0, 1, 500);
	ck_assert_int_eq(nx.step, SYNC_RETRY);
	ck_assert_int_eq(nx.wait_ms, SYNC_LATE_RETRY_MS);
	ck_assert_int_eq(nx.gave_up, 0);
	/* Round 4: a peer finally answers: ready. */
	sync_round_begin(&st, 2);
	sync_peer_done(&st, 0, 0, 1, 500);
	nx = sync_peer_done(&st, 1, 0, 1, 500);
	ck_assert_int_eq(nx.step, SYNC_READY);
	ck_assert_int_eq(st.attempts, 4);
}
END_TEST

START_TEST(test_no_retries_gives_up_at_once)
{
	struct sync_state	st;
	struct sync_next	nx;

	memset(&st, 0, sizeof st);
	sync_round_begin(&st, 1);
	nx = sync_peer_done(&st, 0, 0, 0, 500);
	ck_assert_int_eq(nx.step, SYNC_RETRY);
	ck_assert_int_eq(nx.wait_ms, SYNC_LATE_RETRY_MS);
	ck_assert_int_eq(nx.gave_up, 1);
	/* A late answer in a round with nobody pending never underflows. */
	nx = sync_peer_done(&st, 0, 0, 0, 500);
	ck_assert_uint_eq(st.pending, 0);
	ck_assert_int_eq(nx.step, SYNC_RETRY);
}
END_TEST

START_TEST(test_answers)
{
	int	cred;

	/* 503 to the digest: a heureka peer still computing it. */
	ck_assert_int_eq(sync_answer(SYNC_KIND_DIGEST, 503, 0, NULL, &cred),
	    SYNC_ANS_BUSY);
	ck_assert_int_eq(sync_answer(SYNC_KIND_SYNC, 503, 0, NULL, &cred),
	    SYNC_ANS_FAILED);
	/* 404 from a Java peer to heureka/apps: ask GET apps/. */
	ck_assert_int_eq(sync_answer(SYNC_KIND_SYNC, 404, 0, NULL, &cred),
	    SYNC_ANS_JAVA);
	ck_assert_int_eq(sync_answer(SYNC_KIND_PULL, 404, 0, NULL, &cred),
	    SYNC_ANS_JAVA);
	/* ...but only once. */
	ck_assert_int_eq(sync_answer(SYNC_KIND_SYNC, 404, 1, NULL, &cred),
	    SYNC_ANS_FAILED);
	ck_assert_int_eq(sync_answer(SYNC_KIND_DIGEST, 404, 0, NULL, &cred),
	    SYNC_ANS_NO_AE);
	/* A heureka peer still syncing: an answer with nothing in it. */
	ck_assert_int_eq(sync_answer(SYNC_KIND_SYNC, 403, 0, "0", &cred),
	    SYNC_ANS_NOT_READY);
	ck_assert_int_eq(cred, 0);
	/* The same to a digest is a failed round, not bad credentials. */
	ck_assert_int_eq(sync_answer(SYNC_KIND_DIGEST, 403, 0, "0", &cred),
	    SYNC_ANS_FAILED);
	ck_assert_int_eq(cred, 0);
	/* A 403 without the header (or a 401) is our credentials. */
	ck_assert_int_eq(sync_answer(SYNC_KIND_SYNC, 403, 0, NULL, &cred),
	    SYNC_ANS_FAILED);
	ck_assert_int_eq(cred, 1);
	ck_assert_int_eq(sync_answer(SYNC_KIND_SYNC, 401, 1, NULL, &cred),
	    SYNC_ANS_FAILED);
	ck_assert_int_eq(cred, 1);
	/* A Java peer's 403 is its start-up gate (§6.4). */
	ck_assert_int_eq(sync_answer(SYNC_KIND_SYNC, 403, 1, NULL, &cred),
	    SYNC_ANS_FAILED);
	ck_assert_int_eq(cred, 0);
	ck_assert_int_eq(sync_answer(SYNC_KIND_SYNC, 200, 0, "1", &cred),
	    SYNC_ANS_OK);
	ck_assert_int_eq(sync_answer(SYNC_KIND_SYNC, 0, 0, NULL, &cred),
	    SYNC_ANS_FAILED);
	ck_assert_int_eq(sync_answer(SYNC_KIND_PULL, 503, 0, NULL, &cred),
	    SYNC_ANS_FAILED);
	/* Who is ready: a Java peer answering 200, a heureka one saying so. */
	ck_assert_int_eq(sync_peer_ready(1, NULL), 1);
	ck_assert_int_eq(sync_peer_ready(0, "1"), 1);
	ck_assert_int_eq(sync_peer_ready(0, "0"), 0);
	ck_assert_int_eq(sync_peer_ready(0, NULL), 0);
}
END_TEST

START_TEST(test_digest_pull_policy)
{
	const char	*a = "aaaa", *b = "bbbb";
	int		 mm = 0;

	/* Before the gate opens, any difference is pulled at once. */
	ck_assert_int_eq(sync_digest_step(a, b, 0, 5, 1, &mm),
	    SYNC_DIGEST_PULL);
	ck_assert_int_eq(mm, 0);
	/* Equal: in sync, the count restarts. */
	mm = 1;
	ck_assert_int_eq(sync_digest_step(a, a, 1, 0, 0, &mm),
	    SYNC_DIGEST_EQUAL);
	ck_assert_int_eq(mm, 0);
	/* Open: a first difference waits for replication. */
	ck_assert_int_eq(sync_digest_step(a, b, 1, 0, 0, &mm),
	    SYNC_DIGEST_WAIT);
	ck_assert_int_eq(mm, 1);
	/* Outlived a round, but changes are queued or in flight: wait. */
	ck_assert_int_eq(sync_digest_step(a, b, 1, 3, 0, &mm),
	    SYNC_DIGEST_WAIT);
	ck_assert_int_eq(sync_digest_step(a, b, 1, 0, 1, &mm),
	    SYNC_DIGEST_WAIT);
	ck_assert_int_eq(mm, 3);
	/* Nothing that would fix it is pending: pull. */
	ck_assert_int_eq(sync_digest_step(a, b, 1, 0, 0, &mm),
	    SYNC_DIGEST_PULL);
	ck_assert_int_eq(mm, 0);
}
END_TEST

START_TEST(test_reconcile_adopt_keep_cancel)
{
	struct registry		*reg = registry_new(&cf, T0);
	struct applications	*as;
	struct instance		*v[4];
	struct cancels		 c;
	const struct instance	*in;

	memset(&c, 0, sizeof c);
	/* Ours: "old" (to be replaced), "new" (kept), "gone" (cancelled). */
	ck_assert_int_eq(registry_register(reg, mkinst("APP", "old", T0, T0),
	    0, TM(T0)), REG_OK);
	ck_assert_int_eq(registry_register(reg, mkinst("APP", "new",
	    T0 + 500, T0), 0, TM(T0)), REG_OK);
	ck_assert_int_eq(registry_register(reg, mkinst("APP", "gone", T0, T0),
	    0, TM(T0)), REG_OK);
	ck_assert_int_eq(registry_cancel(reg, "APP", "gone", 0,
	    TM(T0 + 100), -1), REG_OK);
	v[0] = mkinst("APP", "old", T0 + 10, T0);	/* newer: adopt */
	v[1] = mkinst("APP", "new", T0 + 10, T0);	/* older: keep */
	v[2] = mkinst("APP", "gone", T0, T0);		/* tombstoned */
	v[3] = mkinst("APP", "fresh", T0, T0);		/* unknown: adopt */
	as = mkremote(v, 4);
	ck_assert_uint_eq(sync_reconcile(reg, as, TM(T0 + 1000), 0,
	    cancel_cb, &c), 2);
	/* Adopted copies are taken from the remote registry, others not. */
	ck_assert_ptr_null(as->apps[0]->instances[0]);
	ck_assert_ptr_nonnull(as->apps[0]->instances[1]);
	ck_assert_ptr_nonnull(as->apps[0]->instances[2]);
	ck_assert_ptr_null(as->apps[0]->instances[3]);
	ck_assert_ptr_nonnull(in = registry_get(reg, "APP", "old", T0 + 1000));
	ck_assert_int_eq(in->last_dirty_ts, T0 + 10);
	ck_assert_ptr_nonnull(in = registry_get(reg, "APP", "new", T0 + 1000));
	ck_assert_int_eq(in->last_dirty_ts, T0 + 500);
	ck_assert_ptr_nonnull(registry_get(reg, "APP", "fresh", T0 + 1000));
	ck_assert_ptr_null(registry_get(reg, "APP", "gone", T0 + 1000));
	/* The peer is told to cancel, with our tombstone's time. */
	ck_assert_int_eq(c.n, 1);
	ck_assert_str_eq(c.id[0], "gone");
	ck_assert_int_eq(c.ts[0], T0 + 100);
	/* A second pass changes nothing: no ping-pong. */
	ck_assert_uint_eq(sync_reconcile(reg, as, TM(T0 + 1000), 0,
	    cancel_cb, &c), 0);
	ck_assert_int_eq(c.n, 2);
	applications_free(as);
	registry_free(reg);
}
END_TEST

START_TEST(test_reconcile_sync_pushes_nothing)
{
	struct registry		*reg = registry_new(&cf, T0);
	struct applications	*as;
	struct instance		*v[1];

	ck_assert_int_eq(registry_cancel(reg, "APP", "gone", 0, TM(T0 + 100),
	    -1), REG_NOT_FOUND);
	v[0] = mkinst("APP", "gone", T0, T0);
	as = mkremote(v, 1);
	/* The start-up sync passes no callback: nothing pushed, none taken. */
	ck_assert_uint_eq(sync_reconcile(reg, as, TM(T0 + 1000), 0, NULL,
	    NULL), 0);
	ck_assert_ptr_nonnull(as->apps[0]->instances[0]);
	ck_assert_ptr_null(registry_get(reg, "APP", "gone", T0 + 1000));
	/* Once the tombstone has aged out (monotonic), the copy is adopted. */
	ck_assert_uint_eq(sync_reconcile(reg, as, TM(T0 + 100 +
	    cf.tombstone_ms + 1), 0, NULL, NULL), 1);
	ck_assert_ptr_null(as->apps[0]->instances[0]);
	applications_free(as);
	registry_free(reg);
}
END_TEST

START_TEST(test_reconcile_skips_and_fills)
{
	struct registry		*reg = registry_new(&cf, T0);
	struct applications	*as;
	struct instance		*v[3];

	v[0] = mkinst(NULL, "noapp", T0, T0);	/* app from the list */
	v[1] = mkinst("APP", "nodirty", T0, T0);
	v[1]->last_dirty_ts = -1;		/* absent on the wire */
	v[2] = mkinst("APP", "", T0, T0);	/* no id, no host name */
	free(v[2]->host_name);
	v[2]->host_name = NULL;
	as = mkremote(v, 3);
	ck_assert_uint_eq(sync_reconcile(reg, as, TM(T0 + 10), 0, NULL, NULL),
	    1);
	ck_assert_ptr_nonnull(registry_get(reg, "APP", "noapp", T0 + 10));
	ck_assert_ptr_null(registry_get(reg, "APP", "nodirty", T0 + 10));
	ck_assert_ptr_nonnull(as->apps[0]->instances[1]);
	ck_assert_ptr_nonnull(as->apps[0]->instances[2]);
	ck_assert_uint_eq(registry_size(reg), 1);
	applications_free(as);
	registry_free(reg);
}
END_TEST

START_TEST(test_reconcile_java_expired_lease)
{
	struct registry		*reg = registry_new(&cf, T0);
	struct applications	*as;
	struct instance		*v[2];

	/* A Java peer's GET apps/ lists leases that ran out on its side. */
	v[0] = mkinst("APP", "dead", T0, T0 - 200000);	/* 90 s lease */
	v[1] = mkinst("APP", "live", T0, T0 - 1000);
	as = mkremote(v, 2);
	ck_assert_uint_eq(sync_reconcile(reg, as, TM(T0), 1, NULL, NULL), 1);
	ck_assert_ptr_null(registry_get(reg, "APP", "dead", T0));
	ck_assert_ptr_nonnull(registry_get(reg, "APP", "live", T0));
	ck_assert_ptr_nonnull(as->apps[0]->instances[0]);
	applications_free(as);
	/* A heureka peer lists live leases only: its copy is taken. */
	v[0] = mkinst("APP", "dead", T0, T0 - 200000);
	as = mkremote(v, 1);
	ck_assert_uint_eq(sync_reconcile(reg, as, TM(T0), 0, NULL, NULL), 1);
	ck_assert_ptr_nonnull(registry_get(reg, "APP", "dead", T0));
	applications_free(as);
	registry_free(reg);
}
END_TEST

/* The suite. */
/* Register APP<a>/id<i> at `now`, as a peer's replicated copy. */
static void
put(struct registry *reg, int a, int i, int64_t dirty, int64_t now)
{
	char	app[32], id[32];

	snprintf(app, sizeof app, "APP%d", a);
	snprintf(id, sizeof id, "id-%03d", i);
	ck_assert_int_eq(registry_register(reg, mkinst(app, id, dirty, now),
	    1, TM(now)), REG_OK);
}

/* A registry of napps applications of per instances each. */
static struct registry *
mkreg(int napps, int per, int64_t now)
{
	struct registry	*reg = registry_new(&cf, now);
	int		 a, i;

	for (a = 0; a < napps; a++)
		for (i = 0; i < per; i++)
			put(reg, a, i, T0 + a, now);
	return (reg);
}

/* What a whole paged pull saw. */
struct pulled {
	int	 seen[64][64];	/* times APP<a>/id-<i> came */
	size_t	 pages;
	size_t	 largest;	/* body bytes */
	size_t	 instances;
};

/* Count one page's instances into pl; -1 when the order went back. */
static void
pulled_add(struct pulled *pl, const struct buf *b)
{
	struct applications	*as;
	struct application	*ap;
	char			*cause = NULL;
	size_t			 i, j;
	int			 a, k;

	as = json_decode_applications(b->data, b->len, T0, &cause);
	ck_assert_msg(as != NULL, "page does not decode: %s", cause);
	for (i = 0; i < as->n; i++) {
		ap = as->apps[i];
		for (j = 0; j < ap->n; j++) {
			ck_assert_int_eq(sscanf(ap->name, "APP%d", &a), 1);
			ck_assert_int_eq(sscanf(instance_id(ap->instances[j]),
			    "id-%d", &k), 1);
			if (a < 64 && k < 64)
				pl->seen[a][k]++;
			pl->instances++;
		}
	}
	applications_free(as);
	pl->pages++;
	if (b->len > pl->largest)
		pl->largest = b->len;
}

/*
 * Pull every page of reg after `start` pages have gone, calling
 * between(reg, page) before each page past the first.
 */
static void
pull_all(struct registry *reg, int64_t mono, uint64_t buckets, size_t max,
    struct pulled *pl, void (*between)(struct registry *, size_t))
{
	struct sync_cursor	 cur = { NULL, NULL };
	struct sync_page	 pg;
	struct buf		 b;
	char			*app = NULL, *id = NULL;

	memset(pl, 0, sizeof *pl);
	for (;;) {
		ck_assert_uint_lt(pl->pages, 10000);
		if (between != NULL && pl->pages > 0)
			between(reg, pl->pages);
		buf_init(&b, 0);
		sync_page_encode(reg, mono, &cur, buckets, max, &b, &pg);
		pulled_add(pl, &b);
		buf_free(&b);
		if (pg.last) {
			ck_assert_ptr_null(pg.next_app);
			break;
		}
		ck_assert_ptr_nonnull(pg.next_app);
		/* The cursor moves on. */
		if (cur.app != NULL)
			ck_assert_msg(sync_cursor_before(&cur, pg.next_app,
			    pg.next_id), "%s/%s then %s/%s", cur.app, cur.id,
			    pg.next_app, pg.next_id);
		free(app);
		free(id);
		cur.app = app = pg.next_app;
		cur.id = id = pg.next_id;
	}
	free(app);
	free(id);
}

START_TEST(test_cursor_order)
{
	struct sync_cursor	 c0 = { NULL, NULL };
	struct sync_cursor	 c1 = { "APP1", "id-005" };
	struct sync_cursor	 c2 = { "APP1", NULL };
	const char		*lo, *hi;
	uint8_t			 key[HASH_KEY_LEN];
	uint64_t		 k1;

	/* The start is before everything. */
	ck_assert(sync_cursor_before(&c0, "APP1", "id-000"));
	/* Within an application: by id. */
	ck_assert(sync_cursor_before(&c1, "APP1", "id-006"));
	ck_assert(!sync_cursor_before(&c1, "APP1", "id-005"));
	ck_assert(!sync_cursor_before(&c1, "APP1", "id-004"));
	/* After the whole application: nothing of it follows. */
	ck_assert(!sync_cursor_before(&c2, "APP1", "id-999"));
	/* Applications by their fixed key, not by name. */
	if (digest_app_key("APP1") < digest_app_key("APP2")) {
		lo = "APP1";
		hi = "APP2";
	} else {
		lo = "APP2";
		hi = "APP1";
	}
	c1.app = lo;
	ck_assert(sync_cursor_before(&c1, hi, "id-000"));
	c1.app = hi;
	ck_assert(!sync_cursor_before(&c1, lo, "id-999"));
	/* The key does not depend on the process key (peers compare). */
	k1 = digest_app_key("APP1");
	memset(key, 7, sizeof key);
	hash_set_key(key);
	ck_assert_uint_eq(digest_app_key("APP1"), k1);
}
END_TEST

START_TEST(test_pages_cover_once)
{
	struct registry	*reg = mkreg(40, 9, T0);
	struct pulled	 pl;
	int		 a, i;

	/* One page holds everything when the bound allows it. */
	pull_all(reg, T0, SYNC_BUCKETS_ALL, 1 << 22, &pl, NULL);
	ck_assert_uint_eq(pl.pages, 1);
	ck_assert_uint_eq(pl.instances, 360);
	/* A tiny bound: many pages, each at most the bound + one instance. */
	pull_all(reg, T0, SYNC_BUCKETS_ALL, 2048, &pl, NULL);
	ck_assert_uint_gt(pl.pages, 40);
	ck_assert_uint_le(pl.largest, 2048 + 1024);
	for (a = 0; a < 40; a++)
		for (i = 0; i < 9; i++)
			ck_assert_int_eq(pl.seen[a][i], 1);
	ck_assert_uint_eq(pl.instances, 360);
	/* The smallest bound still moves by one instance a page. */
	pull_all(reg, T0, SYNC_BUCKETS_ALL, 1, &pl, NULL);
	ck_assert_uint_eq(pl.pages, 360);
	registry_free(reg);
}
END_TEST

START_TEST(test_pages_count_bound)
{
	struct registry	*reg = mkreg(SYNC_PAGE_APPS + 10, 1, T0);
	struct pulled	 pl;

	/* More applications than one page may hold, bytes unbounded. */
	pull_all(reg, T0, SYNC_BUCKETS_ALL, SIZE_MAX / 2, &pl, NULL);
	ck_assert_uint_eq(pl.pages, 2);
	ck_assert_uint_eq(pl.instances, SYNC_PAGE_APPS + 10);
	registry_free(reg);
}
END_TEST

/* Between pages: cancel the first leases of every app (swap-remove moves
   the others), register new ones. */
static void
churn(struct registry *reg, size_t page)
{
	char	app[32], id[32];
	int	a;

	if (page != 3)
		return;
	for (a = 0; a < 40; a++) {
		snprintf(app, sizeof app, "APP%d", a);
		snprintf(id, sizeof id, "id-%03d", 0);
		ck_assert_int_eq(registry_cancel(reg, app, id, 1, TM(T0 + 1),
		    0), REG_OK);
		put(reg, a, 20, T0 + 5, T0 + 1);
	}
}

START_TEST(test_pages_survive_changes)
{
	struct registry	*reg = mkreg(40, 9, T0);
	struct pulled	 pl;
	int		 a, i;

	pull_all(reg, T0 + 1, SYNC_BUCKETS_ALL, 2048, &pl, churn);
	/*
	 * Every lease that did not change between pages came exactly once,
	 * wherever swap-removal moved it; a changed one at most once.
	 */
	for (a = 0; a < 40; a++) {
		for (i = 1; i < 9; i++)
			ck_assert_int_eq(pl.seen[a][i], 1);
		ck_assert_int_le(pl.seen[a][0], 1);
		ck_assert_int_le(pl.seen[a][20], 1);
	}
	registry_free(reg);
}
END_TEST

START_TEST(test_pages_buckets_and_expiry)
{
	struct registry	*reg = mkreg(40, 3, T0);
	struct pulled	 pl;
	uint64_t	 mask;
	char		 app[32];
	int		 a, i, want = 0;

	/* Only the applications of the buckets asked for. */
	mask = 1ULL << DIGEST_BUCKET(digest_app_key("APP7"));
	pull_all(reg, T0, mask, 2048, &pl, NULL);
	for (a = 0; a < 40; a++) {
		snprintf(app, sizeof app, "APP%d", a);
		i = (mask >> DIGEST_BUCKET(digest_app_key(app))) & 1;
		want += 3 * i;
		ck_assert_int_eq(pl.seen[a][0], i);
	}
	ck_assert_int_eq(pl.instances, want);
	ck_assert_int_ge(want, 3);
	/* No bucket: an empty last page. */
	pull_all(reg, T0, 0, 2048, &pl, NULL);
	ck_assert_uint_eq(pl.pages, 1);
	ck_assert_uint_eq(pl.instances, 0);
	/* Expired leases are not sent (90 s lease, none renewed). */
	put(reg, 0, 5, T0 + 100, T0 + 60000);
	pull_all(reg, T0 + 91000, SYNC_BUCKETS_ALL, 2048, &pl, NULL);
	ck_assert_uint_eq(pl.instances, 1);
	ck_assert_int_eq(pl.seen[0][5], 1);
	registry_free(reg);
}
END_TEST

/* The buckets of a registry's digest cache, refreshed in full. */
static void
bucket_hex(struct digest *d, struct registry *reg, int64_t mono,
    char hex[65], char bk[DIGEST_BUCKETS_HEX + 1])
{
	ck_assert_int_eq(digest_refresh(d, reg, mono, SIZE_MAX), 1);
	digest_hex(d, hex, bk, NULL);
}

START_TEST(test_bucket_digest)
{
	struct registry	*a = mkreg(30, 4, T0), *b = registry_new(&cf, T0);
	struct digest	*da = digest_new(), *db = digest_new();
	char		 ha[65], hb[65], full[65];
	char		 ba[DIGEST_BUCKETS_HEX + 1], bb[DIGEST_BUCKETS_HEX + 1];
	uint64_t	 m;
	int		 x, i;

	/* The same registry built in another order. */
	for (x = 29; x >= 0; x--)
		for (i = 3; i >= 0; i--)
			put(b, x, i, T0 + x, T0);
	bucket_hex(da, a, T0, ha, ba);
	bucket_hex(db, b, T0, hb, bb);
	ck_assert_str_eq(ha, hb);
	ck_assert_str_eq(ba, bb);
	ck_assert_uint_eq(digest_differing(ba, bb), 0);
	/* The whole digest is the one-walk digest older peers compute. */
	peer_digest(a, T0, full, NULL);
	ck_assert_str_eq(ha, full);
	/* One change: exactly the bucket of its application differs. */
	ck_assert_int_eq(registry_status_update(b, "APP17", "id-002",
	    STATUS_OUT_OF_SERVICE, 0, 0, TM(T0 + 1), -1), REG_OK);
	bucket_hex(db, b, T0 + 1, hb, bb);
	ck_assert_str_ne(ha, hb);
	m = digest_differing(ba, bb);
	ck_assert_uint_eq(m, 1ULL << DIGEST_BUCKET(digest_app_key("APP17")));
	peer_digest(b, T0 + 1, full, NULL);
	ck_assert_str_eq(hb, full);
	/* Without buckets (an older peer): every bucket. */
	ck_assert_uint_eq(digest_differing(ba, ""), UINT64_MAX);
	digest_free(da);
	digest_free(db);
	registry_free(a);
	registry_free(b);
}
END_TEST

START_TEST(test_digest_cache_incremental)
{
	struct registry	*reg = mkreg(20, 5, T0);
	struct digest	*d = digest_new();
	char		 h[65], full[65], bk[DIGEST_BUCKETS_HEX + 1];
	uint64_t	 n0;
	size_t		 count;
	int		 rounds = 0;

	/* A budget of 12 leases: the first computation takes turns. */
	while (!digest_refresh(d, reg, T0, 12))
		ck_assert_int_lt(++rounds, 100);
	ck_assert_int_ge(rounds, 7);
	digest_hex(d, h, bk, &count);
	peer_digest(reg, T0, full, NULL);
	ck_assert_str_eq(h, full);
	ck_assert_uint_eq(count, 100);
	n0 = digest_hashed(d);
	ck_assert_uint_eq(n0, 100);
	/* Nothing changed: nothing hashed again. */
	ck_assert_int_eq(digest_refresh(d, reg, T0 + 1000, 12), 1);
	ck_assert_uint_eq(digest_hashed(d), n0);
	/* One application changes: only its five leases. */
	put(reg, 3, 1, T0 + 50, T0 + 2000);
	ck_assert_int_eq(digest_refresh(d, reg, T0 + 2000, SIZE_MAX), 1);
	ck_assert_uint_eq(digest_hashed(d), n0 + 5);
	digest_hex(d, h, bk, NULL);
	peer_digest(reg, T0 + 2000, full, NULL);
	ck_assert_str_eq(h, full);
	/* Leases expire with no change at all: the digest follows. */
	ck_assert_int_eq(registry_renew(reg, "APP3", "id-001", -1,
	    STATUS_UNKNOWN, 1, TM(T0 + 80000), NULL), REG_OK);
	ck_assert_int_eq(digest_refresh(d, reg, T0 + 91000, SIZE_MAX), 1);
	digest_hex(d, h, bk, &count);
	peer_digest(reg, T0 + 91000, full, NULL);
	ck_assert_str_eq(h, full);
	ck_assert_uint_eq(count, 1);
	/* An expired lease renewed (no generation bump) comes back. */
	ck_assert_int_eq(registry_renew(reg, "APP4", "id-002", -1,
	    STATUS_UNKNOWN, 1, TM(T0 + 92000), NULL), REG_OK);
	ck_assert_int_eq(digest_refresh(d, reg, T0 + 92000, SIZE_MAX), 1);
	digest_hex(d, h, bk, &count);
	peer_digest(reg, T0 + 92000, full, NULL);
	ck_assert_str_eq(h, full);
	ck_assert_uint_eq(count, 2);
	/* An application gone: its share goes too. */
	ck_assert_int_eq(registry_cancel(reg, "APP4", "id-002", 1,
	    TM(T0 + 93000), 0), REG_OK);
	registry_evict(reg, TM(T0 + 400000));
	ck_assert_int_eq(digest_refresh(d, reg, T0 + 400000, SIZE_MAX), 1);
	digest_hex(d, h, bk, &count);
	peer_digest(reg, T0 + 400000, full, NULL);
	ck_assert_str_eq(h, full);
	digest_free(d);
	registry_free(reg);
}
END_TEST

START_TEST(test_page_step)
{
	/* An older heureka peer (no header) and a last page end a pull. */
	ck_assert_int_eq(sync_page_step(NULL, NULL, "after=", 0),
	    SYNC_PAGE_LAST);
	ck_assert_int_eq(sync_page_step("last", "after=X", "after=", 0),
	    SYNC_PAGE_LAST);
	ck_assert_int_eq(sync_page_step("more", "after=APP1&id=a%20b",
	    "after=", 0), SYNC_PAGE_MORE);
	/* More without a next, a next that does not move, junk: failed. */
	ck_assert_int_eq(sync_page_step("more", NULL, "after=", 0),
	    SYNC_PAGE_BAD);
	ck_assert_int_eq(sync_page_step("more", "after=A", "after=A", 3),
	    SYNC_PAGE_BAD);
	ck_assert_int_eq(sync_page_step("more", "after=A B", "after=", 1),
	    SYNC_PAGE_BAD);
	ck_assert_int_eq(sync_page_step("more", "after=A#", "after=", 1),
	    SYNC_PAGE_BAD);
	ck_assert_int_eq(sync_page_step("more", "", "after=", 1),
	    SYNC_PAGE_BAD);
	ck_assert_int_eq(sync_page_step("what", "after=B", "after=A", 1),
	    SYNC_PAGE_BAD);
	/* A peer cannot keep a pull going forever. */
	ck_assert_int_eq(sync_page_step("more", "after=B", "after=A",
	    SYNC_PAGES_MAX), SYNC_PAGE_BAD);
}
END_TEST

static Suite *
sync_suite(void)
{
	Suite	*s = suite_create("sync");
	TCase	*tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_done_on_first_ready_peer);
	tcase_add_test(tc, test_done_when_all_answered_none_ready);
	tcase_add_test(tc, test_retry_then_late_retry);
	tcase_add_test(tc, test_no_retries_gives_up_at_once);
	tcase_add_test(tc, test_answers);
	tcase_add_test(tc, test_digest_pull_policy);
	tcase_add_test(tc, test_reconcile_adopt_keep_cancel);
	tcase_add_test(tc, test_reconcile_sync_pushes_nothing);
	tcase_add_test(tc, test_reconcile_skips_and_fills);
	tcase_add_test(tc, test_reconcile_java_expired_lease);
	tcase_add_test(tc, test_cursor_order);
	tcase_add_test(tc, test_pages_cover_once);
	tcase_add_test(tc, test_pages_count_bound);
	tcase_add_test(tc, test_pages_survive_changes);
	tcase_add_test(tc, test_pages_buckets_and_expiry);
	tcase_add_test(tc, test_bucket_digest);
	tcase_add_test(tc, test_digest_cache_incremental);
	tcase_add_test(tc, test_page_step);
	suite_add_tcase(s, tc);
	return (s);
}

/* Run the suite. */
int
main(void)
{
	return (check_run(sync_suite()));
}
