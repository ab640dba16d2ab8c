/*
 * check_client.c: libheureka's protocol logic driven through a fake
 * transport (requests are recorded; the test answers them) and a fake
 * scheduler (time moves only when the test says so): delta merge, hash
 * code reconcile, non-200 delta, the dirty-flag race, the rate limiter,
 * the supervisor back-off, failover and quarantine, 404 heartbeats and
 * cancel on stop, and the watch stream (pushed events, no-watch fallback,
 * reconnect with Last-Event-ID), whose chunks the test feeds by hand.
 * Issue 22: a send the transport refuses at once on every attempt leaves
 * no freed operation in the client's slots (heartbeat, register, fetch,
 * cancel go on); the log callback, its default level and the rate-limit
 * line; a failed request says why (never a bare 0); struct
 * heureka_options' size.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "config.h"
#include "instance.h"
#include "json.h"
#include "testutil.h"
#include "xmalloc.h"

#include "heureka.h"
#include "internal.h"

#define T0	1700000000000LL
#define MAXREQ	256
#define MAXTIM	32

struct freq {
	char		*url;
	char		*method;
	char		*path;
	char		*body;
	hk_done_cb	 done;
	void		*arg;
	int		 pending;
};
static struct freq	reqs[MAXREQ];
static int		nreqs;
static int		send_refusals;	/* f_send refuses this many */

#define MAXSTR	32
struct fstream {
	char		*url;
	char		*path;
	char		*last_id;
	hk_chunk_cb	 chunk;
	hk_end_cb	 end;
	void		*arg;
	int		 open;
};
static struct fstream	streams[MAXSTR];
static int		nstreams;

struct ftimer {
	void	(*cb)(void *);
	void	*arg;
	int64_t	 due;
	int	 armed;
	int	 used;
};
static struct ftimer	timers[MAXTIM];
static int64_t		now_ms;
static int		stopped;

/* Fake transport: record the request. */
static void *
f_send(void *ctx, const char *url, const char *method, const char *path,
    const char *body, size_t len, hk_done_cb done, void *arg)
{
	struct freq	*r;

	if (send_refusals > 0) {
		send_refusals--;
		return (NULL);		/* refused at once, nothing queued */
	}
	ck_assert_int_lt(nreqs, MAXREQ);
	r = &reqs[nreqs++];
	r->url = xstrdup(url);
	r->method = xstrdup(method);
	r->path = xstrdup(path);
	r->body = body != NULL ? xstrdup(body) : NULL;
	r->done = done;
	r->arg = arg;
	r->pending = 1;
	return (r);
}

/* Fake transport: record a stream. */
static void *
f_stream(void *ctx, const char *url, const char *path, const char *last_id,
    hk_chunk_cb chunk, hk_end_cb end, void *arg)
{
	struct fstream	*st;

	ck_assert_int_lt(nstreams, MAXSTR);
	st = &streams[nstreams++];
	st->url = xstrdup(url);
	st->path = xstrdup(path);
	st->last_id = last_id != NULL ? xstrdup(last_id) : NULL;
	st->chunk = chunk;
	st->end = end;
	st->arg = arg;
	st->open = 1;
	return (st);
}

/* Fake transport: forget a request or a stream. */
static void
f_cancel(void *ctx, void *h)
{
	if ((char *)h >= (char *)streams &&
	    (char *)h < (char *)(streams + MAXSTR))
		((struct fstream *)h)->open = 0;
	else
		((struct freq *)h)->pending = 0;
}

/* Push text down stream i. */
static void
push(int i, const char *text)
{
	ck_assert_int_lt(i, nstreams);
	ck_assert_msg(streams[i].open, "stream %d not open", i);
	streams[i].chunk(text, strlen(text), streams[i].arg);
}

/* End stream i with a status. */
static void
endstream(int i, int status)
{
	ck_assert_msg(streams[i].open, "stream %d not open", i);
	streams[i].open = 0;
	streams[i].end(status, streams[i].arg);
}

/* Fake transport: nothing to free (requests freed by reset). */
static void
f_free(void *ctx)
{
}

/* Fake scheduler. */
static void *
f_timer_new(void *ctx, void (*cb)(void *), void *arg)
{
	int	i;

	for (i = 0; i < MAXTIM; i++) {
		if (!timers[i].used) {
			timers[i].used = 1;
			timers[i].cb = cb;
			timers[i].arg = arg;
			timers[i].armed = 0;
			return (&timers[i]);
		}
	}
	ck_abort_msg("too many timers");
	return (NULL);
}

static void
f_timer_add(void *ctx, void *t, int64_t ms)
{
	((struct ftimer *)t)->armed = 1;
	((struct ftimer *)t)->due = now_ms + ms;
}

static void
f_timer_del(void *ctx, void *t)
{
	((struct ftimer *)t)->armed = 0;
}

static void
f_timer_free(void *ctx, void *t)
{
	memset(t, 0, sizeof(struct ftimer));
}

static int64_t
f_now(void *ctx)
{
	return (now_ms);
}

static void
f_sched_free(void *ctx)
{
}

/* Move time forward, firing due timers in order. */
static void
advance(int64_t ms)
{
	int64_t	 target = now_ms + ms;
	int	 i, best;

	for (;;) {
		best = -1;
		for (i = 0; i < MAXTIM; i++) {
			if (timers[i].used && timers[i].armed &&
			    timers[i].due <= target && (best == -1 ||
			    timers[i].due < timers[best].due))
				best = i;
		}
		if (best == -1)
			break;
		now_ms = timers[best].due;
		timers[best].armed = 0;
		timers[best].cb(timers[best].arg);
	}
	now_ms = target;
}

/* Answer request i. */
static void
reply(int i, int status, const char *body)
{
	ck_assert_int_lt(i, nreqs);
	ck_assert_msg(reqs[i].pending, "request %d not pending", i);
	reqs[i].pending = 0;
	reqs[i].done(status, body != NULL ? body : "",
	    body != NULL ? strlen(body) : 0, reqs[i].arg);
}

/* Index of the last request. */
static int
last(void)
{
	ck_assert_int_gt(nreqs, 0);
	return (nreqs - 1);
}

static void
reset(void)
{
	int	i;

	for (i = 0; i < nreqs; i++) {
		free(reqs[i].url);
		free(reqs[i].method);
		free(reqs[i].path);
		free(reqs[i].body);
	}
	memset(reqs, 0, sizeof reqs);
	nreqs = 0;
	for (i = 0; i < nstreams; i++) {
		free(streams[i].url);
		free(streams[i].path);
		free(streams[i].last_id);
	}
	memset(streams, 0, sizeof streams);
	nstreams = 0;
	memset(timers, 0, sizeof timers);
	now_ms = T0;
	stopped = 0;
	send_refusals = 0;
}

/* A client on the fakes. */
static struct heureka_client *
mkclient(const char *urls, int reg, int fetch)
{
	struct config		 cf;
	struct hk_transport	 tr = { f_send, f_cancel, f_free, NULL,
				    f_stream };
	struct hk_sched		 sc = { f_timer_new, f_timer_add, f_timer_del,
				    f_timer_free, f_now, f_sched_free, NULL };
	struct heureka_client	*c;
	char			*cause = NULL;

	reset();
	config_defaults(&cf);
	str_replace(&cf.instance_appname, "hello");
	str_replace(&cf.instance_hostname, "h1");
	str_replace(&cf.instance_ip_address, "10.0.0.1");
	str_replace(&cf.service_url_default_zone, urls);
	cf.instance_non_secure_port = 8080;
	cf.register_with_eureka = reg;
	cf.fetch_registry = fetch;
	c = hk_client_new_with(&cf, &tr, &sc, &cause);
	ck_assert_msg(c != NULL, "client: %s", cause);
	config_free(&cf);
	return (c);
}

/* A model instance. */
static struct instance *
mkinst(const char *app, const char *id, enum instance_status st,
    enum action_type at)
{
	struct instance	*in = instance_new();

	in->app = xstrdup(app);
	in->instance_id = xstrdup(id);
	in->host_name = xstrdup(id);
	in->ip_addr = xstrdup("10.1.1.1");
	in->status = st;
	in->action_type = at;
	in->has_dc = 1;
	in->last_updated_ts = T0;
	return (in);
}

/* JSON body of a registry with the given version and hash. */
static char *
apps_json(struct applications *as, int64_t version, const char *hash)
{
	struct buf	 b;
	char		*s;

	as->versions_delta = version;
	free(as->apps_hashcode);
	as->apps_hashcode = hash != NULL ? xstrdup(hash) :
	    applications_hashcode(as);
	buf_init(&b, 0);
	json_encode_applications(&b, as, CODEC_FULL);
	s = buf_steal(&b, NULL);
	applications_free(as);
	return (s);
}

static int	nchanges[4];

static void
count_cb(enum action_type at, const struct instance *in, void *arg)
{
	nchanges[at]++;
}

static void
stop_done(void *arg)
{
	stopped++;
}

START_TEST(test_merge_actions)
{
	struct applications	*local = applications_new(), *d;
	struct application	*a;

	a = applications_get(local, "A");
	application_add(a, mkinst("A", "a1", STATUS_UP, ACTION_ADDED));
	application_add(a, mkinst("A", "a2", STATUS_UP, ACTION_ADDED));
	a = applications_get(local, "C");
	application_add(a, mkinst("C", "c1", STATUS_UP, ACTION_ADDED));

	d = applications_new();
	application_add(applications_get(d, "B"),
	    mkinst("B", "b1", STATUS_UP, ACTION_ADDED));
	application_add(applications_get(d, "A"),
	    mkinst("A", "a1", STATUS_DOWN, ACTION_MODIFIED));
	application_add(applications_get(d, "A"),
	    mkinst("A", "a2", STATUS_UP, ACTION_DELETED));
	application_add(applications_get(d, "C"),
	    mkinst("C", "c1", STATUS_UP, ACTION_DELETED));
	memset(nchanges, 0, sizeof nchanges);
	hk_merge_delta(local, d, count_cb, NULL);

	ck_assert_ptr_nonnull(applications_find(local, "B"));
	ck_assert_ptr_null(applications_find(local, "C"));	/* emptied */
	a = applications_find(local, "A");
	ck_assert_uint_eq(a->n, 1);
	ck_assert_int_eq(application_find(a, "a1")->status, STATUS_DOWN);
	ck_assert_int_eq(nchanges[ACTION_ADDED], 1);
	ck_assert_int_eq(nchanges[ACTION_MODIFIED], 1);
	ck_assert_int_eq(nchanges[ACTION_DELETED], 2);

	/* The same delta again changes nothing (deltas repeat). */
	memset(nchanges, 0, sizeof nchanges);
	hk_merge_delta(local, d, count_cb, NULL);
	ck_assert_int_eq(nchanges[ACTION_ADDED] + nchanges[ACTION_MODIFIED] +
	    nchanges[ACTION_DELETED], 0);
	ck_assert_uint_eq(applications_count(local), 2);
	applications_free(d);
	applications_free(local);
}
END_TEST

/* Full fetch, then a delta whose hash does not match: a full fetch. */
START_TEST(test_hash_mismatch_full_fetch)
{
	struct heureka_client	*c = mkclient("http://s1/eureka/", 0, 1);
	struct applications	*as;
	char			*body;
	int			 i;

	ck_assert_int_eq(hk_client_start(c), 0);
	i = last();
	ck_assert_str_eq(reqs[i].path, "apps/");
	as = applications_new();
	application_add(applications_get(as, "A"),
	    mkinst("A", "a1", STATUS_UP, ACTION_ADDED));
	body = apps_json(as, 1, NULL);
	reply(i, 200, body);
	free(body);
	ck_assert_int_eq(heureka_client_count(c), 1);

	advance(30000);
	i = last();
	ck_assert_str_eq(reqs[i].path, "apps/delta");
	as = applications_new();
	application_add(applications_get(as, "A"),
	    mkinst("A", "a2", STATUS_UP, ACTION_ADDED));
	body = apps_json(as, 2, "UP_5_");		/* we will have UP_2_ */
	reply(i, 200, body);
	free(body);
	ck_assert_int_eq(heureka_client_count(c), 2);
	i = last();
	ck_assert_str_eq(reqs[i].path, "apps/");
	ck_assert(reqs[i].pending);

	/* A matching delta does not. */
	as = applications_new();
	application_add(applications_get(as, "A"),
	    mkinst("A", "a1", STATUS_UP, ACTION_ADDED));
	body = apps_json(as, 3, NULL);
	reply(i, 200, body);
	free(body);
	ck_assert_int_eq(heureka_client_count(c), 1);
	advance(30000);
	i = last();
	ck_assert_str_eq(reqs[i].path, "apps/delta");
	as = applications_new();
	application_add(applications_get(as, "A"),
	    mkinst("A", "a3", STATUS_DOWN, ACTION_ADDED));
	body = apps_json(as, 4, "DOWN_1_UP_1_");
	reply(i, 200, body);
	free(body);
	ck_assert_int_eq(last(), i);
	ck_assert_int_eq(heureka_client_count(c), 2);
	heureka_client_free(c);
}
END_TEST

/* A delta answered 403 falls back to a full fetch. */
START_TEST(test_delta_non200_full)
{
	struct heureka_client	*c = mkclient("http://s1/eureka/", 0, 1);
	struct applications	*as;
	char			*body;
	int			 i;

	hk_client_start(c);
	as = applications_new();
	application_add(applications_get(as, "A"),
	    mkinst("A", "a1", STATUS_UP, ACTION_ADDED));
	body = apps_json(as, 1, NULL);
	reply(last(), 200, body);
	free(body);
	advance(30000);
	i = last();
	ck_assert_str_eq(reqs[i].path, "apps/delta");
	reply(i, 403, NULL);
	ck_assert_int_eq(last(), i + 1);
	ck_assert_str_eq(reqs[i + 1].path, "apps/");
	ck_assert_str_eq(reqs[i + 1].method, "GET");
	heureka_client_free(c);
}
END_TEST

/* An empty local copy always fetches in full. */
START_TEST(test_empty_copy_full)
{
	struct heureka_client	*c = mkclient("http://s1/eureka/", 0, 1);
	char			*body;

	hk_client_start(c);
	body = apps_json(applications_new(), 1, "");
	reply(last(), 200, body);
	free(body);
	advance(30000);
	ck_assert_str_eq(reqs[last()].path, "apps/");
	heureka_client_free(c);
}
END_TEST

/* Dirtied again while a registration is in flight: stays dirty. */
START_TEST(test_dirty_race)
{
	struct heureka_client	*c = mkclient("http://s1/eureka/", 1, 0);
	int64_t			 ts;
	int			 i;

	hk_client_start(c);
	i = last();
	ck_assert_str_eq(reqs[i].method, "POST");
	ck_assert_str_eq(reqs[i].path, "apps/HELLO");
	ck_assert_ptr_nonnull(strstr(reqs[i].body, "\"h1:hello:8080\""));
	ck_assert(hk_client_is_dirty(c, NULL));
	advance(5);
	hk_client_mark_dirty(c);		/* during the registration */
	reply(i, 204, NULL);
	ck_assert(hk_client_is_dirty(c, &ts));
	ck_assert_int_eq(ts, T0 + 5);

	/* The replicator's run (40 s) registers again, then it is clean. */
	advance(40000);
	i = last();
	ck_assert_str_eq(reqs[i].method, "POST");
	reply(i, 204, NULL);
	ck_assert(!hk_client_is_dirty(c, NULL));
	heureka_client_free(c);
}
END_TEST

/* A status change during a registration registers again after it. */
START_TEST(test_status_on_demand)
{
	struct heureka_client	*c = mkclient("http://s1/eureka/", 1, 0);
	int			 i;

	hk_client_start(c);
	i = last();
	ck_assert_int_eq(heureka_client_set_status(c, "DOWN"), 0);
	advance(0);			/* the on-demand kick */
	ck_assert_int_eq(last(), i);	/* one registration at a time */
	reply(i, 204, NULL);
	ck_assert(hk_client_is_dirty(c, NULL));
	i = last();
	ck_assert_int_eq(i, 1);
	ck_assert_ptr_nonnull(strstr(reqs[i].body, "\"DOWN\""));
	reply(i, 204, NULL);
	ck_assert(!hk_client_is_dirty(c, NULL));
	ck_assert_int_eq(heureka_client_set_status(c, "BOGUS"), -1);
	heureka_client_free(c);
}
END_TEST

START_TEST(test_ratelim)
{
	struct hk_ratelim	rl;

	hk_ratelim_init(&rl, 2, 4);
	ck_assert(hk_ratelim_acquire(&rl, T0));
	ck_assert(hk_ratelim_acquire(&rl, T0));
	ck_assert(!hk_ratelim_acquire(&rl, T0));	/* burst spent */
	ck_assert(!hk_ratelim_acquire(&rl, T0 + 14999));
	ck_assert(hk_ratelim_acquire(&rl, T0 + 15000));	/* 4/min */
	ck_assert(!hk_ratelim_acquire(&rl, T0 + 20000));
	ck_assert(hk_ratelim_acquire(&rl, T0 + 30000));
	ck_assert(!hk_ratelim_acquire(&rl, T0 + 30000));
	/* A long pause refills only up to the burst. */
	ck_assert(hk_ratelim_acquire(&rl, T0 + 600000));
	ck_assert(hk_ratelim_acquire(&rl, T0 + 600000));
	ck_assert(!hk_ratelim_acquire(&rl, T0 + 600000));
}
END_TEST

/* Status changes beyond the limiter's budget wait for the replicator. */
START_TEST(test_status_rate_limited)
{
	struct heureka_client	*c = mkclient("http://s1/eureka/", 1, 0);
	const char		*st[] = { "DOWN", "UP", "DOWN" };
	int			 i, k;

	hk_client_start(c);
	reply(last(), 204, NULL);
	for (k = 0; k < 3; k++) {
		i = nreqs;
		heureka_client_set_status(c, st[k]);
		advance(0);
		if (k < 2) {
			ck_assert_int_eq(nreqs, i + 1);
			reply(last(), 204, NULL);
		} else
			ck_assert_int_eq(nreqs, i);	/* limited */
	}
	ck_assert(hk_client_is_dirty(c, NULL));
	heureka_client_free(c);
}
END_TEST

/*
 * Setters before the start (the agent registers STARTING): no scheduler
 * yet, and the first registration carries them.
 */
START_TEST(test_set_before_start)
{
	struct heureka_client	*c = mkclient("http://s1/eureka/", 1, 0);

	ck_assert_int_eq(heureka_client_set_status(c, "STARTING"), 0);
	ck_assert_int_eq(heureka_client_set_metadata(c, "zone", "a"), 0);
	ck_assert_int_eq(heureka_client_set_status(c, "SIDEWAYS"), -1);
	ck_assert_int_eq(errno, EINVAL);
	hk_client_start(c);
	ck_assert_str_eq(reqs[last()].method, "POST");
	ck_assert_ptr_nonnull(strstr(reqs[last()].body,
	    "\"status\":\"STARTING\""));
	ck_assert_ptr_nonnull(strstr(reqs[last()].body, "\"zone\":\"a\""));
	heureka_client_free(c);
}
END_TEST

/* The lines the library logged, through heureka_set_log_callback. */
#define MAXLOG	64
static char	*logged[MAXLOG];
static int	 logged_level[MAXLOG];
static int	 nlogged;

/* Log callback: keep the line. */
static void
log_keep(int level, const char *msg, void *arg)
{
	(void)arg;
	if (nlogged < MAXLOG) {
		logged_level[nlogged] = level;
		logged[nlogged++] = xstrdup(msg);
	}
}

/* The first kept line containing s at level, or -1. */
static int
log_find(int level, const char *s)
{
	int	i;

	for (i = 0; i < nlogged; i++) {
		if (logged_level[i] == level && strstr(logged[i], s) != NULL)
			return (i);
	}
	return (-1);
}

/* Forget the kept lines and give the log back to stderr. */
static void
log_drop(void)
{
	int	i;

	heureka_set_log_callback(NULL, NULL);
	for (i = 0; i < nlogged; i++)
		free(logged[i]);
	nlogged = 0;
}

/* A status change the rate limit holds back is said, not silent. */
START_TEST(test_status_rate_limited_logged)
{
	struct heureka_client	*c = mkclient("http://s1/eureka/", 1, 0);
	const char		*st[] = { "DOWN", "UP", "DOWN" };
	int			 k;

	heureka_set_log_callback(log_keep, NULL);
	heureka_set_log_level(HEUREKA_LOG_INFO);
	hk_client_start(c);
	reply(last(), 204, NULL);
	for (k = 0; k < 3; k++) {
		heureka_client_set_status(c, st[k]);
		advance(0);
		if (k < 2)
			reply(last(), 204, NULL);
	}
	k = log_find(HEUREKA_LOG_INFO, "held back by the rate limit");
	ck_assert_msg(k >= 0, "no line says the status was held back");
	ck_assert_ptr_nonnull(strstr(logged[k], "status DOWN of HELLO/"));
	log_drop();
	heureka_client_free(c);
}
END_TEST

/*
 * The log callback gets the library's lines with their level; the default
 * level is warn, as heureka.h says (an info line is not passed on).
 */
START_TEST(test_log_callback)
{
	struct heureka_client	*c;

	heureka_set_log_callback(log_keep, NULL);
	c = mkclient("http://s1/eureka/", 1, 0);
	hk_client_start(c);
	reply(last(), 204, NULL);		/* "registered": info */
	ck_assert_int_eq(log_find(HEUREKA_LOG_INFO, "registered"), -1);
	advance(30000);
	while (reqs[last()].pending)		/* every attempt */
		reply(last(), HK_NET_STATUS(HK_NET_REFUSED), NULL);
	ck_assert_int_ge(log_find(HEUREKA_LOG_WARN, "heartbeat of "
	    "HELLO/h1:hello:8080 failed: connection refused"), 0);
	advance(30000);
	while (reqs[last()].pending)
		reply(last(), 0, NULL);		/* no reason known */
	ck_assert_int_ge(log_find(HEUREKA_LOG_WARN, "failed: no answer"), 0);
	heureka_set_log_level(HEUREKA_LOG_INFO);
	advance(30000);
	reply(last(), 404, NULL);
	ck_assert_int_ge(log_find(HEUREKA_LOG_INFO, "heartbeat 404"), 0);
	log_drop();
	heureka_client_free(c);
}
END_TEST

/* A request no server accepted reports the last answer, not 0. */
static int	last_status;

/* Keep a one-off request's status. */
static void
keep_status(int status, const char *body, size_t len, void *arg)
{
	(void)body;
	(void)len;
	(void)arg;
	last_status = status;
}

START_TEST(test_failed_request_says_why)
{
	struct heureka_client	*c = mkclient("http://a/e/,http://b/e/", 0, 0);
	char			 sb[HK_STATUS_MAX];

	last_status = 12345;
	hk_client_request(c, HK_REQ_QUERY, "GET", "apps/X", NULL,
	    keep_status, NULL);
	reply(last(), HK_NET_STATUS(HK_NET_TIMEOUT), NULL);
	reply(last(), 401, NULL);		/* refused by every server */
	ck_assert_int_eq(last_status, 401);
	hk_client_request(c, HK_REQ_FULL, "GET", "apps/", NULL,
	    keep_status, NULL);
	reply(last(), 404, NULL);
	reply(last(), HK_NET_STATUS(HK_NET_REFUSED), NULL);
	ck_assert_int_eq(last_status, HK_NET_STATUS(HK_NET_REFUSED));
	ck_assert_str_eq(hk_status_str(last_status, sb, sizeof sb),
	    "connection refused");
	ck_assert_str_eq(hk_status_str(0, sb, sizeof sb), "no answer");
	ck_assert_str_eq(hk_status_str(401, sb, sizeof sb),
	    "401 Unauthorized");
	ck_assert_str_eq(hk_status_str(418, sb, sizeof sb), "HTTP 418");
	heureka_client_free(c);
}
END_TEST

/*
 * struct heureka_options carries its size: 0 is refused with a reason, a
 * struct from an older heureka.h (only the fields up to insecure) works,
 * a newer one works while the fields this library lacks are 0.
 */
START_TEST(test_options_size)
{
	struct {
		struct heureka_options	o;
		int			newer;
	}			 big;
	struct heureka_options	 o;
	struct heureka_client	*c;
	char			*cause = NULL;

	memset(&o, 0, sizeof o);
	o.app_name = "hello";
	o.port = 8080;
	o.service_url = "http://s1/eureka/";
	ck_assert_ptr_null(heureka_client_new(&o, &cause));
	ck_assert_ptr_nonnull(strstr(cause, "HEUREKA_OPTIONS_INIT"));
	free(cause);

	o.size = HEUREKA_OPTIONS_MIN_SIZE;
	c = heureka_client_new(&o, &cause);
	ck_assert_msg(c != NULL, "old size refused: %s", cause);
	ck_assert_str_eq(heureka_client_instance_id(c), instance_id(
	    hk_client_self(c)));
	ck_assert_int_eq(hk_client_self(c)->port, 8080);
	heureka_client_free(c);

	memset(&big, 0, sizeof big);
	big.o = o;
	big.o.size = sizeof big;
	c = heureka_client_new(&big.o, &cause);
	ck_assert_msg(c != NULL, "zero tail refused: %s", cause);
	heureka_client_free(c);
	big.newer = 1;
	ck_assert_ptr_null(heureka_client_new(&big.o, &cause));
	ck_assert_ptr_nonnull(strstr(cause, "does not know"));
	free(cause);
}
END_TEST

START_TEST(test_backoff)
{
	struct heureka_client	*c = mkclient("http://s1/eureka/", 1, 0);
	struct hk_backoff	 bo;
	int			 i;

	hk_backoff_init(&bo, 30000, 10);
	ck_assert_int_eq(hk_backoff_timeout(&bo), 60000);
	ck_assert_int_eq(hk_backoff_timeout(&bo), 120000);
	ck_assert_int_eq(hk_backoff_timeout(&bo), 240000);
	ck_assert_int_eq(hk_backoff_timeout(&bo), 300000);	/* cap */
	ck_assert_int_eq(hk_backoff_timeout(&bo), 300000);
	ck_assert_int_eq(hk_backoff_done(&bo), 30000);

	/* The heartbeat task: unanswered heartbeats double the delay. */
	hk_client_start(c);
	reply(last(), 204, NULL);
	advance(30000);
	i = last();
	ck_assert_str_eq(reqs[i].method, "PUT");
	advance(30000);				/* timeout */
	ck_assert(!reqs[i].pending);		/* cancelled */
	ck_assert_int_eq(hk_client_heartbeat_delay(c), 60000);
	advance(60000);
	i = last();
	ck_assert_str_eq(reqs[i].method, "PUT");
	advance(30000);
	ck_assert_int_eq(hk_client_heartbeat_delay(c), 120000);
	advance(120000);
	advance(30000);
	ck_assert_int_eq(hk_client_heartbeat_delay(c), 240000);
	advance(240000);
	advance(30000);
	ck_assert_int_eq(hk_client_heartbeat_delay(c), 300000);
	advance(300000);
	i = last();
	ck_assert(reqs[i].pending);
	reply(i, 200, NULL);			/* any completion resets */
	ck_assert_int_eq(hk_client_heartbeat_delay(c), 30000);
	heureka_client_free(c);
}
END_TEST

START_TEST(test_quarantine)
{
	struct hk_endpoints	ep;
	int			c[HK_MAX_URLS];

	hk_endpoints_init(&ep, "http://a/eureka,http://b/eureka/, http://c/"
	    ",http://d/,http://e/");
	ck_assert_uint_eq(ep.n, 5);
	ck_assert_str_eq(ep.urls[0], "http://a/eureka/");
	ck_assert_uint_eq(hk_endpoints_candidates(&ep, c), 5);
	hk_endpoints_failed(&ep, 0);
	hk_endpoints_failed(&ep, 2);
	/* floor(5 * 0.66) = 3: two quarantined are skipped. */
	ck_assert_uint_eq(hk_endpoints_candidates(&ep, c), 3);
	ck_assert_int_eq(c[0], 1);
	ck_assert_int_eq(c[1], 3);
	hk_endpoints_failed(&ep, 1);
	/* Three reach the threshold: cleared, everyone is a candidate. */
	ck_assert_uint_eq(hk_endpoints_candidates(&ep, c), 5);
	ck_assert_int_eq(c[0], 0);
	hk_endpoints_clear(&ep);

	ck_assert(hk_req_accepted(HK_REQ_HEARTBEAT, 404));
	ck_assert(!hk_req_accepted(HK_REQ_FULL, 403));
	ck_assert(hk_req_accepted(HK_REQ_DELTA, 403));
	ck_assert(hk_req_accepted(HK_REQ_CANCEL, 500));
	ck_assert(!hk_req_accepted(HK_REQ_CANCEL, 0));
	ck_assert(!hk_req_accepted(HK_REQ_REGISTER, 500));
}
END_TEST

/* Failover order over live requests, pinning and quarantine. */
START_TEST(test_failover)
{
	struct heureka_client	*c = mkclient(
	    "http://a/e/,http://b/e/,http://c/e/,http://d/e/,http://e/e/",
	    1, 0);
	int			 i;

	hk_client_start(c);
	i = last();
	ck_assert_str_eq(reqs[i].url, "http://a/e/");
	reply(i, 0, NULL);			/* connection refused */
	ck_assert_str_eq(reqs[last()].url, "http://b/e/");
	reply(last(), 503, NULL);
	ck_assert_str_eq(reqs[last()].url, "http://c/e/");
	reply(last(), 204, NULL);		/* pinned to c */
	ck_assert(!hk_client_is_dirty(c, NULL));

	advance(30000);
	ck_assert_str_eq(reqs[last()].url, "http://c/e/");
	reply(last(), 500, NULL);		/* c quarantined too: 3 >= 3 */
	ck_assert_str_eq(reqs[last()].url, "http://a/e/");
	reply(last(), 500, NULL);
	ck_assert_str_eq(reqs[last()].url, "http://b/e/");
	i = nreqs;
	reply(last(), 500, NULL);		/* three tries, then give up */
	ck_assert_int_eq(nreqs, i);

	/* Quarantine {a, b}: the next request starts at c. */
	advance(30000);
	ck_assert_str_eq(reqs[last()].url, "http://c/e/");
	reply(last(), 200, NULL);
	heureka_client_free(c);
}
END_TEST

/* A 404 heartbeat registers again at once, with a new dirty timestamp. */
START_TEST(test_heartbeat_404)
{
	struct heureka_client	*c = mkclient("http://s1/eureka/", 1, 0);
	int64_t			 ts0, ts1;
	int			 i;
	char			 want[128];

	hk_client_start(c);
	reply(last(), 204, NULL);
	hk_client_is_dirty(c, &ts0);
	advance(30000);
	i = last();
	snprintf(want, sizeof want, "apps/HELLO/h1:hello:8080?status=UP&"
	    "lastDirtyTimestamp=%lld", (long long)ts0);
	ck_assert_str_eq(reqs[i].path, want);
	reply(i, 404, NULL);
	ck_assert_int_eq(last(), i + 1);
	ck_assert_str_eq(reqs[i + 1].method, "POST");
	ck_assert(hk_client_is_dirty(c, &ts1));
	ck_assert_int_gt(ts1, ts0);
	reply(i + 1, 204, NULL);
	ck_assert(!hk_client_is_dirty(c, NULL));
	heureka_client_free(c);
}
END_TEST

/* Stop: DELETE our registration, then free and call back. */
START_TEST(test_cancel_on_stop)
{
	struct heureka_client	*c = mkclient("http://s1/eureka/", 1, 1);
	int			 i, j;

	hk_client_start(c);
	reply(1, 204, NULL);		/* 0 is the full fetch, 1 register */
	ck_assert(reqs[0].pending);
	heureka_client_stop(c, stop_done, NULL);
	ck_assert(!reqs[0].pending);	/* the fetch was cancelled */
	i = last();
	ck_assert_str_eq(reqs[i].method, "DELETE");
	ck_assert_str_eq(reqs[i].path, "apps/HELLO/h1:hello:8080");
	ck_assert_int_eq(stopped, 0);
	reply(i, 200, NULL);
	advance(0);
	ck_assert_int_eq(stopped, 1);
	for (j = 0; j < MAXTIM; j++)
		ck_assert(!timers[j].used);	/* every timer freed */
}
END_TEST

/* Requests with this method and path prefix among reqs[from..]. */
static int
count_reqs(int from, const char *method, const char *prefix)
{
	int	i, n = 0;

	for (i = from; i < nreqs; i++) {
		if (strcmp(reqs[i].method, method) == 0 &&
		    strncmp(reqs[i].path, prefix, strlen(prefix)) == 0)
			n++;
	}
	return (n);
}

/*
 * A heartbeat the transport refuses at once (every attempt) must not
 * leave a freed operation in hb_op: heartbeats go on, so the lease lives.
 */
START_TEST(test_refused_heartbeat_continues)
{
	struct heureka_client	*c = mkclient("http://s1/eureka/", 1, 0);
	int			 from;

	hk_client_start(c);
	reply(last(), 204, NULL);		/* registered */
	send_refusals = HK_RETRIES;
	advance(30000);				/* this heartbeat is refused */
	from = nreqs;
	advance(10 * 60 * 1000);
	ck_assert_int_ge(count_reqs(from, "PUT", "apps/HELLO/"), 1);
	ck_assert_ptr_null(c->hb_op);
	heureka_client_free(c);
}
END_TEST

/* Refused registrations: the replicator registers again later. */
START_TEST(test_refused_register_continues)
{
	struct heureka_client	*c = mkclient("http://s1/eureka/", 1, 0);

	send_refusals = HK_RETRIES;
	hk_client_start(c);			/* the POST is refused */
	ck_assert_int_eq(nreqs, 0);
	advance(10 * 60 * 1000);
	ck_assert_int_ge(count_reqs(0, "POST", "apps/HELLO"), 1);
	heureka_client_free(c);
}
END_TEST

/* Refused registry fetches: the refresh task fetches again later. */
START_TEST(test_refused_fetch_continues)
{
	struct heureka_client	*c = mkclient("http://s1/eureka/", 0, 1);

	send_refusals = HK_RETRIES;
	hk_client_start(c);			/* the GET apps/ is refused */
	ck_assert_int_eq(nreqs, 0);
	advance(10 * 60 * 1000);
	ck_assert_int_ge(count_reqs(0, "GET", "apps/"), 1);
	heureka_client_free(c);
}
END_TEST

/* A refused cancel: the stop completes and leaves no stale cancel_op. */
START_TEST(test_refused_cancel_finishes)
{
	struct heureka_client	*c = mkclient("http://s1/eureka/", 1, 0);
	int			 j;

	hk_client_start(c);
	reply(last(), 204, NULL);
	send_refusals = HK_RETRIES;
	hk_client_shutdown(c);			/* the DELETE is refused */
	ck_assert_ptr_null(c->cancel_op);
	ck_assert_int_eq(count_reqs(0, "DELETE", "apps/"), 0);
	c->stop_cb = stop_done;
	advance(0);
	ck_assert_int_eq(stopped, 1);
	for (j = 0; j < MAXTIM; j++)
		ck_assert(!timers[j].used);
}
END_TEST

/* Lookups: only UP, round robin, VIPs, ids. */
START_TEST(test_lookups)
{
	struct heureka_client	*c = mkclient("http://s1/eureka/", 0, 1);
	struct applications	*as = applications_new();
	struct application	*a = applications_get(as, "A");
	struct heureka_instance	*list, *x, *y, *z;
	struct instance		*in;
	char			*body;
	size_t			 n;

	application_add(a, mkinst("A", "a1", STATUS_UP, ACTION_ADDED));
	application_add(a, mkinst("A", "a2", STATUS_UP, ACTION_ADDED));
	in = mkinst("A", "a3", STATUS_DOWN, ACTION_ADDED);
	in->vip_address = xstrdup("x,alpha");
	application_add(a, in);
	hk_client_start(c);
	body = apps_json(as, 1, NULL);
	reply(last(), 200, body);
	free(body);
	n = heureka_client_get_app(c, "a", &list);
	ck_assert_uint_eq(n, 2);
	heureka_instances_free(list, n);
	x = heureka_client_next_up(c, "A");
	y = heureka_client_next_up(c, "A");
	z = heureka_client_next_up(c, "A");
	ck_assert_str_ne(x->instance_id, y->instance_id);
	ck_assert_str_eq(x->instance_id, z->instance_id);
	heureka_instance_free(x);
	heureka_instance_free(y);
	heureka_instance_free(z);
	ck_assert_uint_eq(heureka_client_get_vip(c, "ALPHA", &list), 0);
	x = heureka_client_get_instance(c, "a3");
	ck_assert_ptr_nonnull(x);
	ck_assert_str_eq(x->status, "DOWN");
	heureka_instance_free(x);
	ck_assert_ptr_null(heureka_client_next_up(c, "NOPE"));
	heureka_client_free(c);
}
END_TEST

/* VIP lookups ignore case, as the Java client's upper-cased VIP maps. */
START_TEST(test_vip_ignores_case)
{
	struct heureka_client	*c = mkclient("http://s1/eureka/", 0, 1);
	struct applications	*as = applications_new();
	struct application	*a = applications_get(as, "A");
	struct heureka_instance	*list;
	struct instance		*in;
	char			*body;

	in = mkinst("A", "a1", STATUS_UP, ACTION_ADDED);
	in->vip_address = xstrdup("x,alpha");
	application_add(a, in);
	in = mkinst("A", "a2", STATUS_UP, ACTION_ADDED);
	in->vip_address = xstrdup("alphabet");
	application_add(a, in);
	hk_client_start(c);
	body = apps_json(as, 1, NULL);
	reply(last(), 200, body);
	free(body);
	ck_assert_uint_eq(heureka_client_get_vip(c, "ALPHA", &list), 1);
	ck_assert_str_eq(list[0].instance_id, "a1");
	heureka_instances_free(list, 1);
	ck_assert_uint_eq(heureka_client_get_vip(c, "Alpha", &list), 1);
	heureka_instances_free(list, 1);
	ck_assert_uint_eq(heureka_client_get_vip(c, "X", &list), 1);
	heureka_instances_free(list, 1);
	ck_assert_uint_eq(heureka_client_get_vip(c, "alph", &list), 0);
	ck_assert_uint_eq(heureka_client_get_vip(c, "x,alpha", &list), 0);
	heureka_client_free(c);
}
END_TEST

/* Leader-change callback: a log of "APP id" ("APP -" for none). */
struct leader_log {
	int	n;
	char	line[8][64];
};

/* Record one leader change. */
static void
leader_log_cb(struct heureka_client *c, const char *app,
    const struct heureka_instance *hi, void *arg)
{
	struct leader_log	*l = arg;

	(void)c;
	if (l->n < 8)
		snprintf(l->line[l->n++], sizeof l->line[0], "%s %s", app,
		    hi != NULL ? hi->instance_id : "-");
}

/* heureka_client_leader: the server's rule over the local copy. */
START_TEST(test_leader)
{
	struct heureka_client	*c = mkclient("http://s1/eureka/", 0, 1);
	struct applications	*as = applications_new();
	struct application	*a = applications_get(as, "A");
	struct heureka_instance	*x;
	struct instance		*in;
	struct leader_log	 ll = { 0 };
	char			*body;

	in = mkinst("A", "b", STATUS_UP, ACTION_ADDED);
	in->has_lease = 1;
	in->lease.registration_ts = 2000;
	application_add(a, in);
	in = mkinst("A", "c", STATUS_UP, ACTION_ADDED);
	in->has_lease = 1;
	in->lease.registration_ts = 1000;		/* the oldest UP */
	application_add(a, in);
	in = mkinst("A", "a", STATUS_DOWN, ACTION_ADDED);
	in->has_lease = 1;
	in->lease.registration_ts = 500;		/* older, not UP */
	application_add(a, in);
	in = mkinst("A", "d", STATUS_UP, ACTION_ADDED);
	in->has_lease = 1;
	in->lease.registration_ts = 1000;		/* tie: id decides */
	application_add(a, in);
	hk_client_start(c);
	body = apps_json(as, 1, NULL);
	reply(last(), 200, body);
	free(body);
	x = heureka_client_leader(c, "a");
	ck_assert_ptr_nonnull(x);
	ck_assert_str_eq(x->instance_id, "c");
	heureka_instance_free(x);
	ck_assert_ptr_null(heureka_client_leader(c, "NOPE"));
	heureka_client_free(c);

	/* A pin wins over seniority; the callback tells each change. */
	c = mkclient("http://s1/eureka/", 0, 1);
	heureka_client_on_leader_change(c, leader_log_cb, &ll);
	as = applications_new();
	a = applications_get(as, "A");
	in = mkinst("A", "old", STATUS_UP, ACTION_ADDED);
	in->has_lease = 1;
	in->lease.registration_ts = 1000;
	application_add(a, in);
	in = mkinst("A", "pinned", STATUS_UP, ACTION_ADDED);
	in->has_lease = 1;
	in->lease.registration_ts = 9000;
	kvlist_set(&in->metadata, INSTANCE_LEADER_PIN_KEY, "5");
	application_add(a, in);
	hk_client_start(c);
	body = apps_json(as, 1, NULL);
	reply(last(), 200, body);
	free(body);
	x = heureka_client_leader(c, "A");
	ck_assert_str_eq(x->instance_id, "pinned");
	heureka_instance_free(x);
	ck_assert_int_eq(ll.n, 1);
	ck_assert_str_eq(ll.line[0], "A pinned");
	/* The next delta: the pinned one turns DOWN, "old" takes over. */
	as = applications_new();
	a = applications_get(as, "A");
	in = mkinst("A", "pinned", STATUS_DOWN, ACTION_MODIFIED);
	kvlist_set(&in->metadata, INSTANCE_LEADER_PIN_KEY, "5");
	application_add(a, in);
	body = apps_json(as, 2, NULL);
	advance(30000);
	ck_assert_str_eq(reqs[last()].path, "apps/delta");
	reply(last(), 200, body);
	free(body);
	ck_assert_int_eq(ll.n, 2);
	ck_assert_str_eq(ll.line[1], "A old");
	heureka_client_free(c);
}
END_TEST

/* An SSE frame carrying one instance. */
static char *
frame(const char *event, int id, struct instance *in)
{
	struct buf	 b;

	buf_init(&b, 0);
	buf_addf(&b, "event: %s\nid: %d\ndata: ", event, id);
	json_encode_instance_root(&b, in);
	buf_adds(&b, "\n\n");
	instance_free(in);
	return (buf_steal(&b, NULL));
}

/* A client that made its first full fetch (one instance A/a1). */
static struct heureka_client *
fetched_client(void)
{
	struct heureka_client	*c = mkclient("http://s1/eureka/", 0, 1);
	struct applications	*as = applications_new();
	char			*body;

	application_add(applications_get(as, "A"),
	    mkinst("A", "a1", STATUS_UP, ACTION_ADDED));
	ck_assert_int_eq(hk_client_start(c), 0);
	ck_assert_int_eq(nstreams, 0);		/* not before the fetch */
	body = apps_json(as, 1, NULL);
	reply(last(), 200, body);
	free(body);
	return (c);
}

/* A pushed ADDED is seen by lookups at once; DELETED removes. */
START_TEST(test_watch_push)
{
	struct heureka_client	*c = fetched_client();
	struct heureka_instance	*list;
	char			*f;
	size_t			 n, half;
	int			 r0 = nreqs;

	ck_assert_int_eq(nstreams, 1);
	ck_assert_str_eq(streams[0].url, "http://s1/eureka/");
	ck_assert_str_eq(streams[0].path, "heureka/watch");
	ck_assert_ptr_null(streams[0].last_id);
	ck_assert_int_eq(heureka_client_get_app(c, "B", &list), 0);

	/* Split mid-line, with CRLF line ends and a comment. */
	f = frame("ADDED", 7, mkinst("B", "b1", STATUS_UP, ACTION_NONE));
	push(0, ": keep-alive\r\n\r\n");
	half = strlen(f) / 2;
	streams[0].chunk(f, half, streams[0].arg);
	ck_assert_int_eq(heureka_client_get_app(c, "B", &list), 0);
	push(0, f + half);
	free(f);
	n = heureka_client_get_app(c, "B", &list);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(list[0].instance_id, "b1");
	heureka_instances_free(list, n);
	ck_assert_int_eq(heureka_client_count(c), 2);
	ck_assert(hk_client_watching(c));

	f = frame("MODIFIED", 8, mkinst("B", "b1", STATUS_DOWN, ACTION_NONE));
	push(0, f);
	free(f);
	ck_assert_uint_eq(heureka_client_get_app(c, "B", &list), 0);
	f = frame("DELETED", 9, mkinst("A", "a1", STATUS_UP, ACTION_NONE));
	push(0, f);
	free(f);
	ck_assert_uint_eq(heureka_client_get_app(c, "A", &list), 0);
	ck_assert_int_eq(heureka_client_count(c), 1);
	ck_assert_int_eq(nreqs, r0);		/* no poll did it */
	heureka_client_free(c);
}
END_TEST

/* A line past the bound is dropped whole; the stream goes on. */
START_TEST(test_watch_line_bound)
{
	struct heureka_client	*c = fetched_client();
	struct heureka_instance	*list;
	char			*big, *f;
	size_t			 n, i;

	big = xmalloc(64 * 1024 + 1);
	memset(big, 'x', 64 * 1024);
	big[64 * 1024] = '\0';
	push(0, "data: ");
	for (i = 0; i < 20; i++)		/* 1.25 MiB, no line end */
		push(0, big);
	free(big);
	push(0, "\n\n");
	f = frame("ADDED", 3, mkinst("B", "b1", STATUS_UP, ACTION_NONE));
	push(0, f);
	free(f);
	n = heureka_client_get_app(c, "B", &list);
	ck_assert_uint_eq(n, 1);
	heureka_instances_free(list, n);
	heureka_client_free(c);
}
END_TEST

/* No watch (404): polls only, no retry until the next full fetch. */
START_TEST(test_watch_absent)
{
	struct heureka_client	*c = fetched_client();
	struct applications	*as;
	char			*body;
	int			 k, i;

	ck_assert_int_eq(nstreams, 1);
	endstream(0, 404);
	for (k = 0; k < 10; k++) {		/* five minutes of polls */
		advance(30000);
		i = last();
		ck_assert_str_eq(reqs[i].path, "apps/delta");
		as = applications_new();
		body = apps_json(as, 2 + k, "UP_1_");
		reply(i, 200, body);
		free(body);
	}
	ck_assert_int_eq(nstreams, 1);
	/* A delta hash mismatch forces a full fetch: detect once more. */
	advance(30000);
	body = apps_json(applications_new(), 12, "UP_9_");
	reply(last(), 200, body);
	free(body);
	i = last();
	ck_assert_str_eq(reqs[i].path, "apps/");
	as = applications_new();
	application_add(applications_get(as, "A"),
	    mkinst("A", "a1", STATUS_UP, ACTION_ADDED));
	body = apps_json(as, 20, NULL);
	reply(i, 200, body);
	free(body);
	ck_assert_int_eq(nstreams, 2);
	endstream(1, HK_STREAM_NOT_SSE);
	advance(120000);
	ck_assert_int_eq(nstreams, 2);
	heureka_client_free(c);
}
END_TEST

/* An empty copy fetches in full each poll: detection every 5 min only. */
START_TEST(test_watch_absent_empty)
{
	struct heureka_client	*c = mkclient("http://s1/eureka/", 0, 1);
	char			*body;
	int			 k, i;

	hk_client_start(c);
	for (k = 0; k < 12; k++) {		/* six minutes of polls */
		if (k > 0)
			advance(30000);
		i = last();
		ck_assert_str_eq(reqs[i].path, "apps/");
		body = apps_json(applications_new(), 1 + k, "");
		reply(i, 200, body);
		free(body);
		if (nstreams > 0 && streams[nstreams - 1].open)
			endstream(nstreams - 1, 404);
	}
	ck_assert_int_eq(nstreams, 2);		/* at 0 and at 5 min */
	heureka_client_free(c);
}
END_TEST

/* A dropped or RESET stream reconnects with Last-Event-ID, backing off. */
START_TEST(test_watch_reconnect)
{
	struct heureka_client	*c = fetched_client();
	char			*f;

	f = frame("ADDED", 41, mkinst("B", "b1", STATUS_UP, ACTION_NONE));
	push(0, f);
	free(f);
	endstream(0, 200);			/* dropped */
	ck_assert_int_eq(nstreams, 1);
	advance(999);
	ck_assert_int_eq(nstreams, 1);		/* not at once */
	advance(1);
	ck_assert_int_eq(nstreams, 2);
	ck_assert_str_eq(streams[1].last_id, "41");

	/* RESET: the client closes it and resumes from the last id. */
	push(1, "event: RESET\ndata: {}\n\n");
	advance(0);
	ck_assert(!streams[1].open);
	ck_assert_int_eq(nstreams, 3);
	ck_assert_str_eq(streams[2].last_id, "41");

	/* No event since: failures in a row back off, 2 s, then 4 s. */
	endstream(2, 0);
	advance(1999);
	ck_assert_int_eq(nstreams, 3);
	advance(1);
	ck_assert_int_eq(nstreams, 4);
	endstream(3, 503);
	advance(3999);
	ck_assert_int_eq(nstreams, 4);
	advance(1);
	ck_assert_int_eq(nstreams, 5);
	ck_assert_str_eq(streams[4].last_id, "41");
	heureka_client_free(c);
	ck_assert(!streams[4].open);
}
END_TEST

/* What the SSE reader handed over: each frame as "event|id|data". */
struct sse_seen {
	char	frames[8][256];
	int	n;
	int	stop_at;	/* return nonzero on this frame (-1: never) */
};

/* The reader's frame callback: record it, stop where told. */
static int
sse_record(const char *event, const char *id, const char *data, size_t len,
    void *arg)
{
	struct sse_seen	*s = arg;

	ck_assert_int_lt(s->n, 8);
	ck_assert_uint_eq(strlen(data), len);
	snprintf(s->frames[s->n], sizeof s->frames[0], "%s|%s|%s",
	    event != NULL ? event : "-", id != NULL ? id : "-", data);
	return (s->n++ == s->stop_at);
}

/* Feed a whole string. */
static void
sse_feed_str(struct hk_sse *r, const char *str, struct sse_seen *s)
{
	hk_sse_feed(r, str, strlen(str), sse_record, s);
}

/*
 * The SSE reader: the same frames whatever the pieces (whole, or a byte
 * at a time), CRLF and LF, comments skipped, data lines joined by LF, an
 * overlong line dropped without losing the next frame, and a stop from
 * the callback discarding the rest until a reset.
 */
START_TEST(test_sse_reader)
{
	static const char stream[] =
	    ": keep-alive\n"
	    "event: ADDED\r\nid: 7\r\ndata: {\"a\":1}\r\n\r\n"
	    "data: one\ndata: two\n\n"
	    "event: RESET\n\n"
	    "event: SYNCED\nid: 9\n\n";
	struct hk_sse	r;
	struct sse_seen	s;
	char		*big;
	size_t		 i, k;

	for (k = 0; k < 2; k++) {
		hk_sse_init(&r);
		memset(&s, 0, sizeof s);
		s.stop_at = -1;
		if (k == 0)
			hk_sse_feed(&r, stream, sizeof stream - 1, sse_record,
			    &s);
		else
			for (i = 0; i < sizeof stream - 1; i++)
				hk_sse_feed(&r, stream + i, 1, sse_record, &s);
		ck_assert_int_eq(s.n, 4);
		ck_assert_str_eq(s.frames[0], "ADDED|7|{\"a\":1}");
		ck_assert_str_eq(s.frames[1], "-|-|one\ntwo");
		ck_assert_str_eq(s.frames[2], "RESET|-|");
		ck_assert_str_eq(s.frames[3], "SYNCED|9|");
		hk_sse_free(&r);
	}

	/* A line past the bound goes; the frame after it still comes. */
	hk_sse_init(&r);
	memset(&s, 0, sizeof s);
	s.stop_at = -1;
	big = malloc(HK_SSE_LINE_MAX + 16);
	ck_assert_ptr_nonnull(big);
	memcpy(big, "data: ", 6);
	memset(big + 6, 'x', HK_SSE_LINE_MAX + 16 - 6);
	hk_sse_feed(&r, big, HK_SSE_LINE_MAX + 16, sse_record, &s);
	hk_sse_feed(&r, big, 100, sse_record, &s);	/* still that line */
	sse_feed_str(&r, "\n\nevent: ok\n\n", &s);
	free(big);
	ck_assert_int_eq(s.n, 1);
	ck_assert_str_eq(s.frames[0], "ok|-|");

	/* Stop on the first frame: nothing more until a reset. */
	memset(&s, 0, sizeof s);
	s.stop_at = 0;
	sse_feed_str(&r, "event: a\n\nevent: b\n\n", &s);
	sse_feed_str(&r, "event: c\n\n", &s);
	ck_assert_int_eq(s.n, 1);
	ck_assert_str_eq(s.frames[0], "a|-|");
	hk_sse_reset(&r);
	s.stop_at = -1;
	sse_feed_str(&r, "event: d\n\n", &s);
	ck_assert_int_eq(s.n, 2);
	ck_assert_str_eq(s.frames[1], "d|-|");
	hk_sse_free(&r);
}
END_TEST

static Suite *
client_suite(void)
{
	Suite	*s = suite_create("client");
	TCase	*tc = tcase_create("core");

	tcase_add_test(tc, test_merge_actions);
	tcase_add_test(tc, test_hash_mismatch_full_fetch);
	tcase_add_test(tc, test_delta_non200_full);
	tcase_add_test(tc, test_empty_copy_full);
	tcase_add_test(tc, test_dirty_race);
	tcase_add_test(tc, test_status_on_demand);
	tcase_add_test(tc, test_ratelim);
	tcase_add_test(tc, test_status_rate_limited);
	tcase_add_test(tc, test_status_rate_limited_logged);
	tcase_add_test(tc, test_set_before_start);
	tcase_add_test(tc, test_log_callback);
	tcase_add_test(tc, test_failed_request_says_why);
	tcase_add_test(tc, test_options_size);
	tcase_add_test(tc, test_backoff);
	tcase_add_test(tc, test_quarantine);
	tcase_add_test(tc, test_failover);
	tcase_add_test(tc, test_heartbeat_404);
	tcase_add_test(tc, test_cancel_on_stop);
	tcase_add_test(tc, test_refused_heartbeat_continues);
	tcase_add_test(tc, test_refused_register_continues);
	tcase_add_test(tc, test_refused_fetch_continues);
	tcase_add_test(tc, test_refused_cancel_finishes);
	tcase_add_test(tc, test_lookups);
	tcase_add_test(tc, test_vip_ignores_case);
	tcase_add_test(tc, test_leader);
	tcase_add_test(tc, test_sse_reader);
	tcase_add_test(tc, test_watch_push);
	tcase_add_test(tc, test_watch_line_bound);
	tcase_add_test(tc, test_watch_absent);
	tcase_add_test(tc, test_watch_absent_empty);
	tcase_add_test(tc, test_watch_reconnect);
	suite_add_tcase(s, tc);
	return (s);
}

/* Run the suite, then drop what the tests left behind. */
int
main(void)
{
	int	rc = check_run(client_suite());

	reset();
	return (rc);
}
