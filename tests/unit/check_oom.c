/*
 * check_oom.c: libheureka out of memory (issue 22, "a library never
 * exits its host"). Linked with the library's flavour of common/xmalloc.c
 * (libcommon_lib.la), as libheureka.so is, and driven through a fake
 * transport and scheduler as check_client.c does.
 *
 * One scenario (create, start, register, full fetch, heartbeats, a delta,
 * lookups and setters, stop with its cancel) is run once to count its
 * allocations, then once for every k from 1 to that count with the k-th
 * allocation failing and the reserve's retake failing too (memory stays
 * short) until the test lifts the shortage. Each run must not crash, must
 * report the shortage to the caller (the next entry point fails with
 * ENOMEM, the next task's request is not sent and says "out of memory"),
 * and once memory is back the same client (or, when the failure came
 * during stop, a new one) registers and heartbeats again. Leaks are the
 * ASan build's to find (LeakSanitizer at exit), HK_BUG hits bug_count's.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bug.h"
#include "buf.h"
#include "config.h"
#include "instance.h"
#include "json.h"
#include "testutil.h"
#include "xmalloc.h"

#include "heureka.h"
#include "internal.h"

#define T0	1700000000000LL
#define MAXREQ	128
#define MAXTIM	32

/* The failure injection: count attempts, fail the k-th and retakes. */
static long	nalloc;		/* ordinary attempts so far */
static long	fail_at;	/* this one fails (0: none) */
static int	short_mem;	/* retaking the reserve fails */
static int	fired;		/* the k-th attempt failed */

/* The xmalloc hook: fail the k-th attempt, and retakes while short. */
static int
fail_hook(size_t size, int reserve, void *arg)
{
	if (reserve)
		return (short_mem);
	if (++nalloc == fail_at) {
		fired = 1;
		return (1);
	}
	return (0);
}

/* The fake transport: requests recorded, answered by answer_all(). */
struct freq {
	char		*method;
	char		*path;
	hk_done_cb	 done;
	void		*arg;
	int		 pending;
};
static struct freq	reqs[MAXREQ];
static int		nreqs;

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
static int		hb_ok;		/* heartbeats answered 200 */
static int		reg_ok;		/* registrations answered 204 */
static int		nomem_lines;	/* "out of memory" in the log */
static int		deltas;		/* deltas answered */
static char		*full_body;	/* the registry, made before a run */
static char		*delta_body;

/* Fake transport: record a request. */
static void *
f_send(void *ctx, const char *url, const char *method, const char *path,
    const char *body, size_t len, hk_done_cb done, void *arg)
{
	struct freq	*r;

	ck_assert_int_lt(nreqs, MAXREQ);
	r = &reqs[nreqs++];
	r->method = xstrdup(method);
	r->path = xstrdup(path);
	r->done = done;
	r->arg = arg;
	r->pending = 1;
	return (r);
}

/* Fake transport: forget a request. */
static void
f_cancel(void *ctx, void *h)
{
	((struct freq *)h)->pending = 0;
}

/* Fake transport: nothing to free. */
static void
f_free(void *ctx)
{
}

/* Fake scheduler: a timer slot. */
static void *
f_timer_new(void *ctx, void (*cb)(void *), void *arg)
{
	int	i;

	for (i = 0; i < MAXTIM; i++) {
		if (!timers[i].used) {
			memset(&timers[i], 0, sizeof timers[i]);
			timers[i].used = 1;
			timers[i].cb = cb;
			timers[i].arg = arg;
			return (&timers[i]);
		}
	}
	ck_abort_msg("too many timers");
	return (NULL);
}

/* Fake scheduler: arm. */
static void
f_timer_add(void *ctx, void *t, int64_t ms)
{
	((struct ftimer *)t)->armed = 1;
	((struct ftimer *)t)->due = now_ms + ms;
}

/* Fake scheduler: disarm. */
static void
f_timer_del(void *ctx, void *t)
{
	((struct ftimer *)t)->armed = 0;
}

/* Fake scheduler: free the slot. */
static void
f_timer_free(void *ctx, void *t)
{
	memset(t, 0, sizeof(struct ftimer));
}

/* Fake scheduler: the test's clock. */
static int64_t
f_now(void *ctx)
{
	return (now_ms);
}

/* Fake scheduler: nothing to free. */
static void
f_sched_free(void *ctx)
{
}

/* Free the recorded requests. */
static void
reqs_clear(void)
{
	int	i;

	for (i = 0; i < nreqs; i++) {
		free(reqs[i].method);
		free(reqs[i].path);
	}
	memset(reqs, 0, sizeof reqs);
	nreqs = 0;
}

/* Answer every pending request as a healthy server would. */
static void
answer_all(void)
{
	struct freq	*r;
	int		 i;

	for (i = 0; i < nreqs; i++) {
		r = &reqs[i];
		if (!r->pending)
			continue;
		r->pending = 0;
		if (strcmp(r->method, "POST") == 0) {
			reg_ok++;
			r->done(204, "", 0, r->arg);
		} else if (strcmp(r->method, "PUT") == 0) {
			hb_ok++;
			r->done(200, "", 0, r->arg);
		} else if (strcmp(r->path, "apps/") == 0)
			r->done(200, full_body, strlen(full_body), r->arg);
		else if (strcmp(r->path, "apps/delta") == 0) {
			deltas++;
			r->done(200, delta_body, strlen(delta_body), r->arg);
		} else
			r->done(200, "", 0, r->arg);	/* DELETE */
	}
	/* Keep the table small: everything so far is answered. */
	for (i = 0; i < nreqs; i++) {
		if (reqs[i].pending)
			return;
	}
	reqs_clear();
}

/* Move time on by ms in steps of a second, answering as it goes. */
static void
drive(int64_t ms)
{
	int64_t	target = now_ms + ms;
	int	i;

	while (now_ms < target) {
		now_ms += 1000;
		for (i = 0; i < MAXTIM; i++) {
			if (timers[i].used && timers[i].armed &&
			    timers[i].due <= now_ms) {
				timers[i].armed = 0;
				timers[i].cb(timers[i].arg);
			}
		}
		answer_all();
	}
}

/* Count the library's "out of memory" lines. */
static void
log_count(int level, const char *msg, void *arg)
{
	if (strstr(msg, "out of memory") != NULL)
		nomem_lines++;
}

/* A registering, fetching client on the fakes, started. */
static struct heureka_client *
start_client(void)
{
	struct config		 cf;
	struct hk_transport	 tr = { f_send, f_cancel, f_free, NULL, NULL };
	struct hk_sched		 sc = { f_timer_new, f_timer_add, f_timer_del,
				    f_timer_free, f_now, f_sched_free, NULL };
	struct heureka_client	*c;
	char			*cause = NULL;

	config_defaults(&cf);
	str_replace(&cf.instance_appname, "hello");
	str_replace(&cf.instance_hostname, "h1");
	str_replace(&cf.instance_ip_address, "10.0.0.1");
	str_replace(&cf.service_url_default_zone, "http://s1/eureka/");
	cf.instance_non_secure_port = 8080;
	c = hk_client_new_with(&cf, &tr, &sc, &cause);
	config_free(&cf);
	ck_assert_msg(c != NULL, "client: %s", cause);
	ck_assert_int_eq(hk_client_start(c), 0);
	return (c);
}

/* Lookups and setters, whose results are freed; errors are allowed. */
static void
use_api(struct heureka_client *c)
{
	struct heureka_instance	*list, *hi;
	size_t			 n;

	n = heureka_client_get_app(c, "OTHER", &list);
	heureka_instances_free(list, n);
	hi = heureka_client_next_up(c, "OTHER");
	heureka_instance_free(hi);
	hi = heureka_client_leader(c, "OTHER");
	heureka_instance_free(hi);
	heureka_client_set_metadata(c, "zone", "z1");
	heureka_client_set_status(c, "UP");
}

/* The stop's done callback. */
static void
stop_done(void *arg)
{
	stopped++;
}

/* Memory is back: c registers and heartbeats again. */
static void
check_recovers(struct heureka_client *c, long k)
{
	int	hb = hb_ok;

	ck_assert_msg(xmalloc_ready() == 0, "k=%ld: no reserve after", k);
	drive(100 * 1000);
	ck_assert_msg(c->registered, "k=%ld: not registered after", k);
	ck_assert_msg(!c->dirty, "k=%ld: still dirty after", k);
	ck_assert_msg(hb_ok > hb, "k=%ld: no heartbeat after", k);
	ck_assert_int_gt(heureka_client_count(c), 0);
}

/*
 * One run; k 0 fails nothing and returns the allocation count.
 */
static long
scenario(long k)
{
	struct heureka_client	*c, *b;
	struct heureka_instance	*hi;
	int			 st;

	reqs_clear();
	memset(timers, 0, sizeof timers);
	now_ms = T0;
	stopped = hb_ok = reg_ok = nomem_lines = deltas = 0;
	nalloc = 0;
	fail_at = k;
	fired = 0;
	short_mem = 1;
	ck_assert_int_eq(xmalloc_ready(), 0);
	xmalloc_set_fail_hook(fail_hook, NULL);

	c = start_client();
	drive(65 * 1000);		/* register, fetch, heartbeats, delta */
	use_api(c);
	if (k == 0) {
		/* The scenario does what it says. */
		ck_assert_int_gt(reg_ok, 0);
		ck_assert_int_gt(hb_ok, 0);
		ck_assert_int_gt(deltas, 0);
		ck_assert_int_eq(heureka_client_count(c), 2);
	}
	if (fired) {
		/* The shortage is the caller's to see... */
		errno = 0;
		ck_assert_int_eq(heureka_client_set_status(c, "DOWN"), -1);
		ck_assert_int_eq(errno, ENOMEM);
		errno = 0;
		hi = heureka_client_get_instance(c, "h1:hello:8080");
		ck_assert_ptr_null(hi);
		ck_assert_int_eq(errno, ENOMEM);
		/* ...and the tasks', which send nothing and say why. */
		nomem_lines = 0;
		drive(35 * 1000);
		ck_assert_msg(nomem_lines > 0, "k=%ld: no line said so", k);
		short_mem = 0;
		check_recovers(c, k);
	}
	st = fired;
	heureka_client_stop(c, stop_done, NULL);
	answer_all();
	drive(5 * 1000);
	ck_assert_msg(stopped == 1, "k=%ld: stop did not finish", k);
	if (fired && !st) {
		/* It failed during stop: the next client works. */
		short_mem = 0;
		b = start_client();
		check_recovers(b, k);
		heureka_client_stop(b, stop_done, NULL);
		answer_all();
		drive(5 * 1000);
		ck_assert_int_eq(stopped, 2);
	}
	xmalloc_set_fail_hook(NULL, NULL);
	short_mem = 0;
	ck_assert_msg(k == 0 || fired, "k=%ld: never reached", k);
	ck_assert_msg(bug_count() == 0, "k=%ld: an HK_BUG held", k);
	if (k == 0)
		ck_assert_int_gt(hb_ok, 0);
	reqs_clear();
	return (nalloc);
}

/* The registry the fake server answers, made before the hook is set. */
static void
bodies_make(void)
{
	struct applications	*as = applications_new(), *d;
	struct application	*a = applications_get(as, "OTHER");
	struct instance		*in;
	struct buf		 b;
	const char		*ids[] = { "o1", "o2" };
	size_t			 i;

	for (i = 0; i < 2; i++) {
		in = instance_new();
		in->app = xstrdup("OTHER");
		in->instance_id = xstrdup(ids[i]);
		in->host_name = xstrdup(ids[i]);
		in->ip_addr = xstrdup("10.1.1.1");
		in->status = STATUS_UP;
		in->action_type = ACTION_ADDED;
		in->has_dc = 1;
		in->last_updated_ts = T0;
		application_add(a, in);
	}
	as->versions_delta = 1;
	as->apps_hashcode = applications_hashcode(as);
	buf_init(&b, 0);
	json_encode_applications(&b, as, CODEC_FULL);
	full_body = buf_steal(&b, NULL);
	/* An empty delta whose hash matches: no full fetch after it. */
	d = applications_new();
	d->versions_delta = 2;
	d->apps_hashcode = xstrdup(as->apps_hashcode);
	buf_init(&b, 0);
	json_encode_applications(&b, d, CODEC_FULL);
	delta_body = buf_steal(&b, NULL);
	applications_free(d);
	applications_free(as);
}

/* Every allocation of the scenario fails once, in its own run. */
START_TEST(test_oom_every_allocation)
{
	long	total, k;

	heureka_set_log_callback(log_count, NULL);
	bodies_make();
	/* Twice: the first run also makes the per-process state once. */
	scenario(0);
	total = scenario(0);
	ck_assert_int_gt(total, 100);
	for (k = 1; k <= total; k++)
		scenario(k);
	printf("check_oom: %ld allocations in the scenario, each failed "
	    "once\n", total);
	free(full_body);
	free(delta_body);
	heureka_set_log_callback(NULL, NULL);
}
END_TEST

/* The server's flavour is not linked: this one holds a reserve. */
START_TEST(test_library_flavour)
{
	ck_assert_int_eq(xmalloc_has_reserve(), 1);
	ck_assert_int_eq(xmalloc_ready(), 0);
}
END_TEST

/* The suite. */
static Suite *
oom_suite(void)
{
	Suite	*s = suite_create("oom");
	TCase	*tc = tcase_create("core");

	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_library_flavour);
	tcase_add_test(tc, test_oom_every_allocation);
	suite_add_tcase(s, tc);
	return (s);
}

/* Run it. */
int
main(void)
{
	return (check_run(oom_suite()));
}
