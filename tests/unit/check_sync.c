/*
 * check_sync.c: unit tests for the start-up sync's and anti-entropy's
 * decisions (server/core/syncrule.c), driven by hand: when the sync is
 * done or retried, what a peer's answer means, when a differing digest
 * leads to a pull, and the reconcile loop over a peer's registry, with
 * the registry's time given by each call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "instance.h"
#include "registry.h"
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
	struct instance	*in = instance_new();

	if (app != NULL)
		in->app = strdup(app);
	in->instance_id = strdup(id);
	in->host_name = strdup("host.example");
	in->ip_addr = strdup("10.0.0.1");
	in->status = STATUS_UP;
	in->last_dirty_ts = dirty;
	in->last_updated_ts = dirty;
	in->has_lease = 1;
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
	suite_add_tcase(s, tc);
	return (s);
}

/* Run the suite. */
int
main(void)
{
	return (check_run(sync_suite()));
}
