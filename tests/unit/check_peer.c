/*
 * check_peer.c: unit tests for the cluster's building blocks, driven
 * without a network or a clock: the per-peer replication queue (coalescing,
 * bound, batching, expiry, re-queueing), the back-off, peer URL parsing,
 * self detection and the anti-entropy digest.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "buf.h"
#include "fixture.h"
#include "instance.h"
#include "json.h"
#include "digest.h"
#define PEERQ_PRIVATE		/* peerq_check's test breaks the queue */
#include "peerq.h"
#include "url.h"
#include "registry.h"
#include "xmalloc.h"
#include "testutil.h"

#define T0	1000000

/* A heartbeat task for APP/id carrying a lastDirtyTimestamp marker. */
static struct peer_task *
hb(const char *id, int64_t dirty, int64_t expiry)
{
	struct peer_task	*t;

	t = peer_task_new(REPL_HEARTBEAT, "APP", id, expiry);
	t->item.has_last_dirty = 1;
	t->item.last_dirty_ts = dirty;
	return (t);
}

START_TEST(test_task_key)
{
	struct peer_task	*t;

	t = peer_task_new(REPL_HEARTBEAT, "APP", "i-1", T0);
	ck_assert_str_eq(t->key, "heartbeat#APP/i-1");
	peer_task_free(t);
	t = peer_task_new(REPL_DELETE_STATUS_OVERRIDE, "A", "b", T0);
	ck_assert_str_eq(t->key, "deleteStatusOverride#A/b");
	peer_task_free(t);
	t = peer_task_new(REPL_REGISTER, "A", "b", T0);
	ck_assert_str_eq(t->key, "register#A/b");
	peer_task_free(t);
	peer_task_free(NULL);
}
END_TEST

START_TEST(test_coalesce_keeps_position_newest_wins)
{
	struct peer_queue	*q = peer_queue_new(100);
	struct peer_task	*out[10];
	size_t			 n;

	ck_assert_int_eq(peer_queue_push(q, hb("a", 1, T0 + 9999), T0),
	    PEER_PUSH_ADDED);
	ck_assert_int_eq(peer_queue_push(q, hb("b", 1, T0 + 9999), T0 + 1),
	    PEER_PUSH_ADDED);
	ck_assert_int_eq(peer_queue_push(q, hb("c", 1, T0 + 9999), T0 + 2),
	    PEER_PUSH_ADDED);
	/* A newer heartbeat for "a" replaces it, first place kept. */
	ck_assert_int_eq(peer_queue_push(q, hb("a", 2, T0 + 9999), T0 + 3),
	    PEER_PUSH_REPLACED);
	/* And for the tail element too. */
	ck_assert_int_eq(peer_queue_push(q, hb("c", 7, T0 + 9999), T0 + 4),
	    PEER_PUSH_REPLACED);
	ck_assert_uint_eq(peer_queue_len(q), 3);
	ck_assert_uint_eq(peer_queue_stats(q)->coalesced, 2);
	/* The age of the position is the first task's. */
	ck_assert_int_eq(peer_queue_due(q, T0 + 10, 20), 10);
	n = peer_queue_take(q, out, 10, T0 + 5);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(out[0]->item.id, "a");
	ck_assert_int_eq(out[0]->item.last_dirty_ts, 2);
	ck_assert_str_eq(out[1]->item.id, "b");
	ck_assert_str_eq(out[2]->item.id, "c");
	ck_assert_int_eq(out[2]->item.last_dirty_ts, 7);
	ck_assert_uint_eq(peer_queue_len(q), 0);
	while (n > 0)
		peer_task_free(out[--n]);
	/* The queue works after being emptied (hash chains intact). */
	ck_assert_int_eq(peer_queue_push(q, hb("a", 3, T0 + 9999), T0),
	    PEER_PUSH_ADDED);
	ck_assert_int_eq(peer_queue_push(q, hb("a", 4, T0 + 9999), T0),
	    PEER_PUSH_REPLACED);
	ck_assert_uint_eq(peer_queue_len(q), 1);
	peer_queue_free(q);
}
END_TEST

START_TEST(test_different_actions_do_not_coalesce)
{
	struct peer_queue	*q = peer_queue_new(100);

	peer_queue_push(q, peer_task_new(REPL_REGISTER, "APP", "a", T0 + 99),
	    T0);
	peer_queue_push(q, peer_task_new(REPL_HEARTBEAT, "APP", "a", T0 + 99),
	    T0);
	peer_queue_push(q, peer_task_new(REPL_HEARTBEAT, "APP2", "a",
	    T0 + 99), T0);
	ck_assert_uint_eq(peer_queue_len(q), 3);
	peer_queue_free(q);
}
END_TEST

START_TEST(test_bound_drops_oldest_and_counts)
{
	struct peer_queue	*q = peer_queue_new(3);
	struct peer_task	*out[10];
	size_t			 n;

	peer_queue_push(q, hb("a", 1, T0 + 9999), T0);
	peer_queue_push(q, hb("b", 1, T0 + 9999), T0);
	peer_queue_push(q, hb("c", 1, T0 + 9999), T0);
	ck_assert_int_eq(peer_queue_push(q, hb("d", 1, T0 + 9999), T0),
	    PEER_PUSH_DROPPED);
	ck_assert_int_eq(peer_queue_push(q, hb("e", 1, T0 + 9999), T0),
	    PEER_PUSH_DROPPED);
	/* Replacing a pending id never drops. */
	ck_assert_int_eq(peer_queue_push(q, hb("e", 2, T0 + 9999), T0),
	    PEER_PUSH_REPLACED);
	ck_assert_uint_eq(peer_queue_len(q), 3);
	ck_assert_uint_eq(peer_queue_stats(q)->overflow, 2);
	n = peer_queue_take(q, out, 10, T0);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(out[0]->item.id, "c");
	ck_assert_str_eq(out[1]->item.id, "d");
	ck_assert_str_eq(out[2]->item.id, "e");
	while (n > 0)
		peer_task_free(out[--n]);
	peer_queue_free(q);
}
END_TEST

START_TEST(test_batch_at_most_250_in_order)
{
	struct peer_queue	*q = peer_queue_new(1000);
	struct peer_task	*out[PEER_BATCH_MAX];
	char			 id[16];
	size_t			 i, n;

	for (i = 0; i < 600; i++) {
		snprintf(id, sizeof id, "i-%04zu", i);
		peer_queue_push(q, hb(id, 1, T0 + 9999), T0);
	}
	/* A full batch is due at once, whatever its age. */
	ck_assert_int_eq(peer_queue_due(q, T0, PEER_BATCH_AGE_MS), 0);
	n = peer_queue_take(q, out, PEER_BATCH_MAX, T0);
	ck_assert_uint_eq(n, 250);
	for (i = 0; i < n; i++) {
		snprintf(id, sizeof id, "i-%04zu", i);
		ck_assert_str_eq(out[i]->item.id, id);
		peer_task_free(out[i]);
	}
	n = peer_queue_take(q, out, PEER_BATCH_MAX, T0);
	ck_assert_uint_eq(n, 250);
	ck_assert_str_eq(out[0]->item.id, "i-0250");
	for (i = 0; i < n; i++)
		peer_task_free(out[i]);
	ck_assert_uint_eq(peer_queue_len(q), 100);
	/* 100 pending, younger than the batching delay: not yet due. */
	ck_assert_int_eq(peer_queue_due(q, T0 + 100, PEER_BATCH_AGE_MS), 400);
	ck_assert_int_eq(peer_queue_due(q, T0 + 500, PEER_BATCH_AGE_MS), 0);
	peer_queue_free(q);
	q = peer_queue_new(10);
	ck_assert_int_eq(peer_queue_due(q, T0, 20), -1);
	peer_queue_free(q);
}
END_TEST

START_TEST(test_expired_tasks_dropped)
{
	struct peer_queue	*q = peer_queue_new(10);
	struct peer_task	*out[10];
	size_t			 n;

	peer_queue_push(q, hb("a", 1, T0 + 100), T0);
	peer_queue_push(q, hb("b", 1, T0 + 500), T0);
	peer_queue_push(q, hb("c", 1, T0 + 50), T0);
	n = peer_queue_take(q, out, 10, T0 + 100);	/* expiry <= now */
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(out[0]->item.id, "b");
	ck_assert_uint_eq(peer_queue_stats(q)->expired, 2);
	peer_task_free(out[0]);
	peer_queue_free(q);
}
END_TEST

START_TEST(test_requeue_front_skips_expired_and_superseded)
{
	struct peer_queue	*q = peer_queue_new(4);
	struct peer_task	*out[10];
	size_t			 n;

	peer_queue_push(q, hb("a", 1, T0 + 1000), T0);
	peer_queue_push(q, hb("b", 1, T0 + 100), T0);
	peer_queue_push(q, hb("c", 1, T0 + 1000), T0);
	n = peer_queue_take(q, out, 10, T0);
	ck_assert_uint_eq(n, 3);
	/* While in flight: a newer "c" and a new "d" arrive. */
	peer_queue_push(q, hb("c", 9, T0 + 1000), T0 + 10);
	peer_queue_push(q, hb("d", 1, T0 + 1000), T0 + 10);
	/* The batch failed: back to the front, minus expired b, old c. */
	peer_queue_requeue(q, out, n, T0 + 200);
	ck_assert_uint_eq(peer_queue_len(q), 3);
	ck_assert_uint_eq(peer_queue_stats(q)->expired, 1);
	n = peer_queue_take(q, out, 10, T0 + 200);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(out[0]->item.id, "a");
	ck_assert_str_eq(out[1]->item.id, "c");
	ck_assert_int_eq(out[1]->item.last_dirty_ts, 9);
	ck_assert_str_eq(out[2]->item.id, "d");
	while (n > 0)
		peer_task_free(out[--n]);
	peer_queue_free(q);
}
END_TEST

START_TEST(test_urgent_count_and_due)
{
	struct peer_queue	*q = peer_queue_new(100);
	struct peer_task	*out[10];
	size_t			 n;

	/* Heartbeats alone are not urgent: they wait for Eureka's age. */
	peer_queue_push(q, hb("a", 1, T0 + 9999), T0);
	peer_queue_push(q, hb("a", 2, T0 + 9999), T0 + 1);	/* coalesced */
	ck_assert_uint_eq(peer_queue_urgent(q), 0);
	ck_assert_int_eq(peer_queue_batch_delay(q), PEER_BATCH_AGE_MS);
	ck_assert_int_eq(peer_queue_due(q, T0 + PEER_DISPATCH_MS,
	    peer_queue_batch_delay(q)), PEER_BATCH_AGE_MS - PEER_DISPATCH_MS);
	/* A registration makes the batch go at once, heartbeats with it. */
	peer_queue_push(q, peer_task_new(REPL_REGISTER, "APP", "b", T0 + 9999),
	    T0 + 2);
	peer_queue_push(q, peer_task_new(REPL_REGISTER, "APP", "b", T0 + 9999),
	    T0 + 3);					/* coalesced */
	ck_assert_uint_eq(peer_queue_urgent(q), 1);
	ck_assert_int_eq(peer_queue_batch_delay(q), PEER_DISPATCH_MS);
	ck_assert_int_eq(peer_queue_due(q, T0 + PEER_DISPATCH_MS,
	    peer_queue_batch_delay(q)), 0);
	/* Taken, then put back after a failure: the count follows. */
	n = peer_queue_take(q, out, 10, T0 + 30);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(peer_queue_urgent(q), 0);
	peer_queue_requeue(q, out, n, T0 + 40);
	ck_assert_uint_eq(peer_queue_urgent(q), 1);
	ck_assert_uint_eq(peer_queue_len(q), 2);
	n = peer_queue_take(q, out, 10, T0 + 50);
	while (n > 0)
		peer_task_free(out[--n]);
	ck_assert_uint_eq(peer_queue_urgent(q), 0);
	peer_queue_free(q);
}
END_TEST

START_TEST(test_full_queue_drops_heartbeats_first)
{
	struct peer_queue	*q = peer_queue_new(3);
	struct peer_task	*out[10];
	size_t			 n;

	peer_queue_push(q, peer_task_new(REPL_REGISTER, "APP", "r", T0 + 9999),
	    T0);
	peer_queue_push(q, hb("h", 1, T0 + 9999), T0 + 1);
	peer_queue_push(q, peer_task_new(REPL_CANCEL, "APP", "c", T0 + 9999),
	    T0 + 2);
	/* Full: the heartbeat goes, not the older registration. */
	ck_assert_int_eq(peer_queue_push(q, hb("x", 1, T0 + 9999), T0 + 3),
	    PEER_PUSH_DROPPED);
	ck_assert_uint_eq(peer_queue_stats(q)->overflow, 1);
	n = peer_queue_take(q, out, 10, T0 + 4);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(out[0]->item.id, "r");
	ck_assert_str_eq(out[1]->item.id, "c");
	ck_assert_str_eq(out[2]->item.id, "x");
	while (n > 0)
		peer_task_free(out[--n]);
	/* Only changes queued: the oldest of them is dropped. */
	peer_queue_push(q, peer_task_new(REPL_REGISTER, "APP", "a", T0 + 9999),
	    T0);
	peer_queue_push(q, peer_task_new(REPL_REGISTER, "APP", "b", T0 + 9999),
	    T0);
	peer_queue_push(q, peer_task_new(REPL_REGISTER, "APP", "c", T0 + 9999),
	    T0);
	peer_queue_push(q, peer_task_new(REPL_REGISTER, "APP", "d", T0 + 9999),
	    T0);
	n = peer_queue_take(q, out, 10, T0 + 4);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(out[0]->item.id, "b");
	while (n > 0)
		peer_task_free(out[--n]);
	peer_queue_free(q);
}
END_TEST

START_TEST(test_requeue_bounded)
{
	struct peer_queue	*q = peer_queue_new(2);
	struct peer_task	*out[10];
	size_t			 n;

	peer_queue_push(q, hb("a", 1, T0 + 1000), T0);
	peer_queue_push(q, hb("b", 1, T0 + 1000), T0);
	n = peer_queue_take(q, out, 10, T0);
	peer_queue_push(q, hb("c", 1, T0 + 1000), T0);
	peer_queue_push(q, hb("d", 1, T0 + 1000), T0);
	peer_queue_requeue(q, out, n, T0);
	ck_assert_uint_eq(peer_queue_len(q), 2);
	ck_assert_uint_eq(peer_queue_stats(q)->overflow, 2);
	peer_queue_free(q);
}
END_TEST

/* Expect peerq_check to fail with a cause naming what. */
static void
assert_breach(const struct peer_queue *q, const char *what)
{
	char	*cause = NULL;

	ck_assert_int_eq(peerq_check(q, &cause), -1);
	ck_assert_msg(strstr(cause, what) != NULL, "%s: want %s", cause, what);
	free(cause);
}

/*
 * peerq_check is able to fail: each counter, link and index broken on
 * purpose is reported, and the queue passes again once it is mended.
 */
START_TEST(test_peerq_check_finds_breaches)
{
	struct peer_queue	*q = peer_queue_new(8);
	struct peer_task	*t, *mid;
	char			*cause = NULL;

	peer_queue_push(q, hb("a", 1, T0 + 1000), T0);
	peer_queue_push(q, peer_task_new(REPL_CANCEL, "APP", "b", T0 + 1000),
	    T0);
	peer_queue_push(q, hb("c", 1, T0 + 1000), T0);
	ck_assert_msg(peerq_check(q, &cause) == 0, "%s", cause);

	q->len++;
	assert_breach(q, "len differs");
	q->len--;
	q->urgent = 0;
	assert_breach(q, "urgent differs");
	q->urgent = 1;
	mid = q->head->next;
	t = mid->prev;
	mid->prev = NULL;
	assert_breach(q, "back link");
	mid->prev = t;
	t = q->tail;
	q->tail = mid;
	assert_breach(q, "tail is not the last");
	q->tail = t;
	mid->hnode.hash ^= 1;
	assert_breach(q, "index does not find");
	mid->hnode.hash ^= 1;
	q->max = 2;
	assert_breach(q, "more tasks than max");
	q->max = 8;
	ck_assert_msg(peerq_check(q, &cause) == 0, "%s", cause);
	peer_queue_free(q);
}
END_TEST

START_TEST(test_backoff_doubles_with_jitter_and_cap)
{
	struct peer_backoff	bo = { 0, 0 };
	int64_t			d, nominal = PEER_TRANSIENT_MS;
	int			i;

	ck_assert(peer_backoff_ready(&bo, T0));
	for (i = 0; i < 20; i++) {
		/* rnd = 0 gives the lower bound, UINT32_MAX near the top. */
		struct peer_backoff lo = bo, hi = bo;

		d = peer_backoff_fail(&lo, PEER_FAIL_TRANSIENT, 0, T0);
		ck_assert_int_eq(d, nominal / 2);
		d = peer_backoff_fail(&hi, PEER_FAIL_TRANSIENT,
		    (uint32_t)(nominal - nominal / 2), T0);
		ck_assert_int_eq(d, nominal);
		d = peer_backoff_fail(&bo, PEER_FAIL_TRANSIENT, 12345, T0);
		ck_assert_int_ge(d, nominal / 2);
		ck_assert_int_le(d, nominal);
		ck_assert_int_le(d, PEER_BACKOFF_CAP_MS);
		ck_assert_int_eq(bo.until, T0 + d);
		ck_assert(!peer_backoff_ready(&bo, T0 + d - 1));
		ck_assert(peer_backoff_ready(&bo, T0 + d));
		nominal *= 2;
		if (nominal > PEER_BACKOFF_CAP_MS)
			nominal = PEER_BACKOFF_CAP_MS;
	}
	ck_assert_uint_eq(bo.failures, 20);
	/* Capped at 30 s after many failures. */
	d = peer_backoff_fail(&bo, PEER_FAIL_CONGESTION, UINT32_MAX, T0);
	ck_assert_int_le(d, PEER_BACKOFF_CAP_MS);
	ck_assert_int_ge(d, PEER_BACKOFF_CAP_MS / 2);
	/* Success resets. */
	peer_backoff_ok(&bo);
	ck_assert_uint_eq(bo.failures, 0);
	ck_assert(peer_backoff_ready(&bo, T0));
	d = peer_backoff_fail(&bo, PEER_FAIL_TRANSIENT, 0, T0);
	ck_assert_int_eq(d, PEER_TRANSIENT_MS / 2);
}
END_TEST

START_TEST(test_no_immediate_retry_after_timeout)
{
	struct peer_backoff	bo = { 0, 0 };
	uint32_t		rnd;
	int64_t			d;

	/* Whatever the jitter, a timeout pauses at least 500 ms. */
	for (rnd = 0; rnd < 2000; rnd += 7) {
		bo.failures = 0;
		d = peer_backoff_fail(&bo, PEER_FAIL_CONGESTION, rnd, T0);
		ck_assert_int_ge(d, PEER_CONGESTION_MS / 2);
		ck_assert_int_le(d, PEER_CONGESTION_MS);
		ck_assert(!peer_backoff_ready(&bo, T0 + 499));
	}
	/* The second consecutive timeout waits longer still. */
	bo.failures = 0;
	peer_backoff_fail(&bo, PEER_FAIL_CONGESTION, 0, T0);
	d = peer_backoff_fail(&bo, PEER_FAIL_CONGESTION, 0, T0);
	ck_assert_int_eq(d, PEER_CONGESTION_MS);
}
END_TEST

START_TEST(test_url_parse)
{
	struct peer_url	 u;
	char		*cause = NULL;

	ck_assert_int_eq(peer_url_parse("http://a:8761/eureka/", &u, &cause),
	    0);
	ck_assert_str_eq(u.host, "a");
	ck_assert_int_eq(u.port, 8761);
	ck_assert_str_eq(u.path, "/eureka/");
	ck_assert_ptr_null(u.userinfo);
	peer_url_clear(&u);

	ck_assert_int_eq(peer_url_parse("http://user:p%40ss@Host.example/"
	    "eureka/v2", &u, &cause), 0);
	ck_assert_str_eq(u.userinfo, "user:p%40ss");
	ck_assert_str_eq(u.host, "Host.example");
	ck_assert_int_eq(u.port, 80);
	ck_assert_str_eq(u.path, "/eureka/v2/");
	ck_assert_str_eq(u.display, "http://Host.example:80/eureka/v2/");
	ck_assert_ptr_null(strstr(u.display, "user"));
	peer_url_clear(&u);

	ck_assert_int_eq(peer_url_parse("https://[::1]:9/", &u, &cause), 0);
	ck_assert_str_eq(u.host, "::1");
	ck_assert_int_eq(u.port, 9);
	ck_assert_str_eq(u.display, "https://[::1]:9/");
	peer_url_clear(&u);

	ck_assert_int_eq(peer_url_parse("http://h", &u, &cause), 0);
	ck_assert_str_eq(u.path, "/");
	peer_url_clear(&u);

	ck_assert_int_eq(peer_url_parse("ftp://h/", &u, &cause), -1);
	ck_assert_ptr_nonnull(cause);
	free(cause);
	cause = NULL;
	ck_assert_int_eq(peer_url_parse("http://h:0/", &u, &cause), -1);
	free(cause);
	cause = NULL;
	ck_assert_int_eq(peer_url_parse("http://h:99999/", &u, &cause), -1);
	free(cause);
	cause = NULL;
	ck_assert_int_eq(peer_url_parse("http://h:x/", &u, &cause), -1);
	free(cause);
	cause = NULL;
	ck_assert_int_eq(peer_url_parse("http:///eureka/", &u, &cause), -1);
	free(cause);
	cause = NULL;
	ck_assert_int_eq(peer_url_parse("http://[::1/", &u, &cause), -1);
	free(cause);
}
END_TEST

/* Test double for "does this host name mean this machine?". */
static int
fake_local(const char *host, void *arg)
{
	(void)arg;
	return (strcmp(host, "127.0.0.1") == 0 || strcmp(host, "me") == 0);
}

/* Parse and ask peer_url_is_self. */
static int
is_self(const char *url, const char *my_url, int my_port)
{
	struct peer_url	 u;
	char		*cause = NULL;
	int		 r;

	ck_assert_int_eq(peer_url_parse(url, &u, &cause), 0);
	r = peer_url_is_self(url, &u, my_url, my_port, fake_local, NULL);
	peer_url_clear(&u);
	return (r);
}

START_TEST(test_self_detection)
{
	/* Three nodes on one host keep each other: the port decides. */
	ck_assert(is_self("http://127.0.0.1:8761/eureka/", NULL, 8761));
	ck_assert(!is_self("http://127.0.0.1:8762/eureka/", NULL, 8761));
	ck_assert(is_self("http://me:8762/eureka/", NULL, 8762));
	ck_assert(!is_self("http://other:8761/eureka/", NULL, 8761));
	ck_assert(is_self("http://u:p@me:8761/eureka/", NULL, 8761));
	/* my_url decides alone, exact but for a trailing slash. */
	ck_assert(is_self("http://a:8761/eureka/", "http://a:8761/eureka",
	    1));
	ck_assert(is_self("http://a:8761/eureka", "http://a:8761/eureka/",
	    1));
	ck_assert(!is_self("http://127.0.0.1:8761/eureka/",
	    "http://a:8761/eureka/", 8761));
	ck_assert(!is_self("http://a:8761/eureka/v2/",
	    "http://a:8761/eureka/", 8761));
	ck_assert(is_self("http://127.0.0.1:8761/eureka/", "", 8761));
}
END_TEST

/* Register APP/id with lastDirty and status into reg. */
static void
reg_add(struct registry *reg, const char *app, const char *id, int64_t dirty,
    enum instance_status st, int64_t now)
{
	struct instance	*in = fixture_instance(app, id, st, dirty);

	in->vip_address = xstrdup(app);
	in->lease.renewal_interval_secs = 30;
	in->lease.duration_secs = 90;
	ck_assert_int_eq(registry_register(reg, in, 1, TM(now)), REG_OK);
}

START_TEST(test_digest_order_independent)
{
	struct registry_conf	 rc;
	struct registry		*a, *b;
	char			 ha[65], hb2[65];
	size_t			 na, nb;

	registry_conf_defaults(&rc);
	a = registry_new(&rc, T0);
	b = registry_new(&rc, T0);
	reg_add(a, "X", "1", 10, STATUS_UP, T0);
	reg_add(a, "Y", "2", 20, STATUS_UP, T0);
	reg_add(a, "X", "3", 30, STATUS_UP, T0);
	reg_add(b, "X", "3", 30, STATUS_UP, T0);
	reg_add(b, "Y", "2", 20, STATUS_UP, T0);
	reg_add(b, "X", "1", 10, STATUS_UP, T0);
	peer_digest(a, T0, ha, &na);
	peer_digest(b, T0, hb2, &nb);
	ck_assert_uint_eq(na, 3);
	ck_assert_uint_eq(nb, 3);
	ck_assert_uint_eq(strlen(ha), 64);
	ck_assert_str_eq(ha, hb2);
	/* A newer lastDirtyTimestamp changes it. */
	reg_add(b, "X", "1", 11, STATUS_UP, T0);
	peer_digest(b, T0, hb2, NULL);
	ck_assert_str_ne(ha, hb2);
	/* So does a cancel. */
	reg_add(b, "X", "1", 10, STATUS_UP, T0);
	peer_digest(b, T0, hb2, NULL);
	ck_assert_str_ne(ha, hb2);	/* register kept the newer copy */
	registry_free(a);
	registry_free(b);
}
END_TEST

START_TEST(test_digest_empty)
{
	struct registry_conf	 rc;
	struct registry		*a;
	char			 h[65];
	size_t			 n = 99;

	registry_conf_defaults(&rc);
	a = registry_new(&rc, T0);
	peer_digest(a, T0, h, &n);
	ck_assert_uint_eq(n, 0);
	/* Sums over nothing. */
	ck_assert_str_eq(h, "00000000000000000000000000000000"
	    "00000000000000000000000000000000");
	registry_free(a);
}
END_TEST

START_TEST(test_digest_covers_override_and_metadata)
{
	struct registry_conf	 rc;
	struct registry		*a, *b;
	char			 ha[65], hb[65];
	struct kvlist		 kv;

	registry_conf_defaults(&rc);
	a = registry_new(&rc, T0);
	b = registry_new(&rc, T0);
	reg_add(a, "X", "1", 10, STATUS_UP, T0);
	reg_add(b, "X", "1", 10, STATUS_UP, T0);
	peer_digest(a, T0, ha, NULL);
	peer_digest(b, T0, hb, NULL);
	ck_assert_str_eq(ha, hb);
	/* An override on one side only, lastDirtyTimestamp unchanged. */
	ck_assert_int_eq(registry_status_update(b, "X", "1",
	    STATUS_OUT_OF_SERVICE, 0, 0, TM(T0 + 1), -1), REG_OK);
	ck_assert_int_eq(registry_status_update(b, "X", "1", STATUS_UP, 0, 0,
	    TM(T0 + 2), -1), REG_OK);
	/* Status back to UP, but overriddenstatus is UP, not UNKNOWN. */
	peer_digest(b, T0 + 2, hb, NULL);
	ck_assert_str_ne(ha, hb);
	registry_free(b);
	/* A metadata difference alone. */
	b = registry_new(&rc, T0);
	reg_add(b, "X", "1", 10, STATUS_UP, T0);
	memset(&kv, 0, sizeof kv);
	kvlist_set(&kv, "zone", "a");
	ck_assert_int_eq(registry_update_metadata(b, "X", "1", &kv,
	    TM(T0 + 1)), REG_OK);
	kvlist_clear(&kv);
	peer_digest(b, T0 + 1, hb, NULL);
	ck_assert_str_ne(ha, hb);
	registry_free(a);
	registry_free(b);
}
END_TEST

START_TEST(test_copy_hash_survives_replication)
{
	struct registry		*reg;
	struct registry_conf	 rc;
	const struct instance	*in;
	struct instance		*back;
	struct buf		 b;
	char			*cause = NULL;

	registry_conf_defaults(&rc);
	reg = registry_new(&rc, T0);
	reg_add(reg, "X", "1", 10, STATUS_UP, T0);
	ck_assert_int_eq(registry_status_update(reg, "X", "1",
	    STATUS_OUT_OF_SERVICE, 0, 0, TM(T0 + 1), -1), REG_OK);
	in = registry_get(reg, "X", "1", T0 + 1);
	/* What a peer decodes from our JSON hashes the same as ours. */
	buf_init(&b, 0);
	json_encode_instance_root(&b, in);
	back = json_decode_instance(b.data, b.len, T0, &cause);
	ck_assert_msg(back != NULL, "%s", cause != NULL ? cause : "");
	ck_assert_uint_eq(registry_copy_hash(back), registry_copy_hash(in));
	instance_free(back);
	buf_free(&b);
	registry_free(reg);
}
END_TEST

START_TEST(test_tasks_from_events)
{
	struct registry_event	 ev;
	struct instance		*in = instance_new();
	struct peer_task	*t;

	in->app = xstrdup("APP");
	in->instance_id = xstrdup("i-1");
	in->status = STATUS_UP;
	in->last_dirty_ts = 77;
	in->has_lease = 1;
	in->lease.renewal_interval_secs = 5;
	memset(&ev, 0, sizeof ev);
	ev.app = "APP";
	ev.id = "i-1";
	ev.inst = in;
	ev.override = STATUS_UNKNOWN;
	/* A register carries the copy and expires with its lease interval. */
	ev.type = REG_EV_REGISTER;
	t = peer_task_from_event(&ev, T0, 30000);
	ck_assert_str_eq(t->key, "register#APP/i-1");
	ck_assert_ptr_nonnull(t->item.info);
	ck_assert_int_eq(t->expiry, T0 + 5000);
	ck_assert_int_eq(t->item.last_dirty_ts, 77);
	ck_assert_int_eq(t->item.status, STATUS_UP);
	peer_task_free(t);
	/* A re-registration (metadata) replicates as a Register. */
	ev.type = REG_EV_METADATA;
	t = peer_task_from_event(&ev, T0, 30000);
	ck_assert_int_eq(t->item.action, REPL_REGISTER);
	peer_task_free(t);
	/* A heartbeat carries the override, not the copy. */
	ev.type = REG_EV_RENEW;
	ev.override = STATUS_OUT_OF_SERVICE;
	t = peer_task_from_event(&ev, T0, 30000);
	ck_assert_str_eq(t->key, "heartbeat#APP/i-1");
	ck_assert_ptr_null(t->item.info);
	ck_assert_int_eq(t->item.has_overridden, 1);
	ck_assert_int_eq(t->item.overridden_status, STATUS_OUT_OF_SERVICE);
	peer_task_free(t);
	/* Status changes expire after max-time-for-replication. */
	ev.type = REG_EV_STATUS_UPDATE;
	t = peer_task_from_event(&ev, T0, 30000);
	ck_assert_int_eq(t->item.action, REPL_STATUS_UPDATE);
	ck_assert_int_eq(t->expiry, T0 + 30000);
	ck_assert_ptr_nonnull(t->item.info);
	peer_task_free(t);
	/* A cancel has no copy: the tombstone's time is its lastDirty. */
	ev.type = REG_EV_CANCEL;
	ev.inst = NULL;
	ev.cancel_ts = 99;
	t = peer_task_from_event(&ev, T0, 30000);
	ck_assert_int_eq(t->item.action, REPL_CANCEL);
	ck_assert_int_eq(t->item.has_last_dirty, 1);
	ck_assert_int_eq(t->item.last_dirty_ts, 99);
	peer_task_free(t);
	/* Evictions are never replicated; a register without a copy neither. */
	ev.type = REG_EV_EVICT;
	ck_assert_ptr_null(peer_task_from_event(&ev, T0, 30000));
	ev.type = REG_EV_REGISTER;
	ck_assert_ptr_null(peer_task_from_event(&ev, T0, 30000));
	/* The repair tasks: our copy for a 404, our tombstone's Cancel. */
	in->has_lease = 0;
	t = peer_task_register("APP", "i-1", in, T0);
	ck_assert_str_eq(t->key, "register#APP/i-1");
	ck_assert_int_eq(t->expiry, T0 + 90000);	/* default lease */
	ck_assert_int_eq(t->item.last_dirty_ts, 77);
	peer_task_free(t);
	t = peer_task_cancel("APP", "i-1", 55, T0, 30000);
	ck_assert_str_eq(t->key, "cancel#APP/i-1");
	ck_assert_int_eq(t->item.last_dirty_ts, 55);
	ck_assert_int_eq(t->expiry, T0 + 30000);
	peer_task_free(t);
	instance_free(in);
}
END_TEST

START_TEST(test_parse_digest)
{
	char	hex[65];
	char	ok[128];

	snprintf(ok, sizeof ok, "{\"digest\":\"%064d\",\"count\":3}", 7);
	ck_assert_int_eq(peer_parse_digest(ok, hex), 0);
	ck_assert_uint_eq(strlen(hex), 64);
	ck_assert_int_eq(hex[63], '7');
	/* Wrong length, wrong type, not JSON: refused. */
	ck_assert_int_eq(peer_parse_digest("{\"digest\":\"abc\"}", hex), -1);
	ck_assert_int_eq(peer_parse_digest("{\"digest\":5}", hex), -1);
	ck_assert_int_eq(peer_parse_digest("{\"count\":1}", hex), -1);
	ck_assert_int_eq(peer_parse_digest("nope", hex), -1);
}
END_TEST

/* The suite. */
static Suite *
peer_suite(void)
{
	Suite	*s = suite_create("peer");
	TCase	*tc;

	tc = tcase_create("queue");
	tcase_add_test(tc, test_task_key);
	tcase_add_test(tc, test_urgent_count_and_due);
	tcase_add_test(tc, test_full_queue_drops_heartbeats_first);
	tcase_add_test(tc, test_coalesce_keeps_position_newest_wins);
	tcase_add_test(tc, test_different_actions_do_not_coalesce);
	tcase_add_test(tc, test_bound_drops_oldest_and_counts);
	tcase_add_test(tc, test_batch_at_most_250_in_order);
	tcase_add_test(tc, test_expired_tasks_dropped);
	tcase_add_test(tc, test_requeue_front_skips_expired_and_superseded);
	tcase_add_test(tc, test_requeue_bounded);
	tcase_add_test(tc, test_peerq_check_finds_breaches);
	tcase_add_test(tc, test_tasks_from_events);
	suite_add_tcase(s, tc);

	tc = tcase_create("backoff");
	tcase_add_test(tc, test_backoff_doubles_with_jitter_and_cap);
	tcase_add_test(tc, test_no_immediate_retry_after_timeout);
	suite_add_tcase(s, tc);

	tc = tcase_create("url");
	tcase_add_test(tc, test_url_parse);
	tcase_add_test(tc, test_self_detection);
	suite_add_tcase(s, tc);

	tc = tcase_create("digest");
	tcase_add_test(tc, test_digest_order_independent);
	tcase_add_test(tc, test_digest_empty);
	tcase_add_test(tc, test_digest_covers_override_and_metadata);
	tcase_add_test(tc, test_copy_hash_survives_replication);
	tcase_add_test(tc, test_parse_digest);
	suite_add_tcase(s, tc);
	return (s);
}

/* Run the suite. */
int
main(void)
{
	return (check_run(peer_suite()));
}
