/*
 * tests/unit/check_leader.c: the leader kept from event to event
 * (struct leader_track, server/front/leader.c) against a fresh ranking.
 * A model test: random registrations (own and replicated, with carried
 * registrationTimestamps that tie), heartbeats, status changes, override
 * removals, cancels, pins and releases, evictions, bursts of leaders
 * going one after another (a rolling restart), self-preservation
 * switching lease expiration off and on, and time stepped by hand (also
 * backwards) drive a registry, with few instances per app (all kept as
 * contenders) or many (more than LEADER_TRACK_TOP); an observer keeps
 * two tracks per app, one updated the way the watch does (heartbeats and
 * unchanged status updates only noted) and one updated on every event,
 * and after each event where it updates them compares both with
 * leader_find_app at the event's time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "fixture.h"
#include "instance.h"
#include "leader.h"
#include "registry.h"
#include "testutil.h"

#define T0		1700000000000LL
#define NAPPS		3
#define NIDS		80	/* ids per app: more than LEADER_TRACK_TOP */

static const char *const apps[NAPPS] = { "A", "B", "C" };

/* What the observer keeps per app, as watch.c keeps a watch_app. */
struct model_app {
	struct leader_track	 watch;		/* updated as the watch does */
	struct leader_track	 every;		/* updated on every event */
	uint64_t		 gen;
	int			 known;		/* the watch has a watch_app */
};

struct model {
	struct registry		*reg;
	struct model_app	 a[NAPPS];
	uint64_t		 checks;	/* comparisons made */
	uint64_t		 changes;	/* leader changes seen */
	uint64_t		 notes;		/* events only noted */
	uint64_t		 hidden;	/* checks with expiry enabled */
	uint64_t		 shown;		/* ... and disabled */
	uint64_t		 partial;	/* ... some contenders not kept */
	int			 nids;		/* ids per app in this run */
	int			 life;		/* lease seconds, at most */
	uint64_t		 mismatches;
};

/* The index of an app name. */
static int
app_index(const char *name)
{
	int	i;

	for (i = 0; i < NAPPS; i++)
		if (strcmp(apps[i], name) == 0)
			return (i);
	ck_abort_msg("unknown app %s", name);
	return (-1);
}

/* One track against leader_find_app; a mismatch is printed and counted. */
static void
model_compare(struct model *m, struct leader_track *t,
    struct reg_app *ra, const struct registry_event *ev, const char *what)
{
	const struct instance	*want, *got;
	char			*before;
	int			 changed;

	before = t->id != NULL ? strdup(t->id) : NULL;
	changed = leader_track_update(t, m->reg, ra, ev);
	got = leader_track_leader(t, m->reg, ev);
	want = leader_find_app(m->reg, ra, ev->now.mono_ms);
	if ((want == NULL) != (t->id == NULL) || (want != NULL &&
	    strcmp(instance_id(want), t->id) != 0) ||
	    changed != ((before == NULL) != (t->id == NULL) ||
	    (before != NULL && strcmp(before, t->id) != 0)) ||
	    got != want) {
		fprintf(stderr, "%s track of %s after event %d on %s at %lld: "
		    "leader %s, want %s (changed %d)\n", what, ev->app,
		    ev->type, ev->id, (long long)(ev->now.mono_ms - T0),
		    t->id != NULL ? t->id : "none",
		    want != NULL ? instance_id(want) : "none", changed);
		m->mismatches++;
	}
	if (changed)
		m->changes++;
	free(before);
}

/* The observer: what watch_observe_cb does with its app, then compare. */
static void
model_observe(const struct registry_event *ev, void *arg)
{
	struct model		*m = arg;
	struct model_app	*ma = &m->a[app_index(ev->app)];
	struct reg_app		*ra;

	ra = registry_app_find(m->reg, ev->app);
	model_compare(m, &ma->every, ra, ev, "every-event");
	if ((ev->type == REG_EV_RENEW || ev->type == REG_EV_STATUS_UPDATE ||
	    ev->type == REG_EV_DELETE_OVERRIDE) &&
	    (ra == NULL || (ma->known && ma->gen == reg_app_gen(ra)))) {
		if (ma->known)
			leader_track_note(&ma->watch, ev);
		m->notes++;
		return;
	}
	if (!ma->known && ra == NULL)
		return;
	ma->known = 1;
	model_compare(m, &ma->watch, ra, ev, "watch");
	m->checks++;
	if (!ma->watch.complete)
		m->partial++;
	if (registry_lease_expiration_enabled(m->reg))
		m->hidden++;
	else
		m->shown++;
	ma->gen = ra != NULL ? reg_app_gen(ra) : 0;
	if (ra == NULL && ma->watch.id == NULL) {
		leader_track_clear(&ma->watch);
		ma->known = 0;
	}
}

/* A registrable instance; replicated ones carry registrationTimestamp. */
static struct instance *
mkinst(const char *app, const char *id, enum instance_status st,
    int64_t dirty, int64_t reg_ts, int duration)
{
	struct instance	*in = fixture_instance(app, id, st, dirty);

	in->lease.duration_secs = duration;
	in->lease.registration_ts = reg_ts;
	return (in);
}

/* Make the leader id of app stop leading, one of three ways, at t. */
static void
model_unlead(struct model *m, const char *app, const char *id, int64_t t,
    int64_t dirty)
{
	switch (random() % 8) {
	case 0:
	case 1:
	case 2:
	case 3:
	case 4:
	case 5:		/* re-registered: to the back */
		(void)registry_register(m->reg, mkinst(app, id, STATUS_UP,
		    T0 + t + dirty, 0, 5 + (int)(random() % m->life)), 0,
		    TM(T0 + t));
		break;
	case 6:
		(void)registry_status_update(m->reg, app, id,
		    STATUS_OUT_OF_SERVICE, -1, 0, TM(T0 + t), 0);
		break;
	default:
		(void)registry_cancel(m->reg, app, id, 0, TM(T0 + t), 0);
		break;
	}
}

/* Run one random sequence of n operations from seed. */
static void
model_run(struct model *m, unsigned seed, int n)
{
	static const enum instance_status sts[] = { STATUS_UP, STATUS_UP,
	    STATUS_DOWN, STATUS_OUT_OF_SERVICE, STATUS_STARTING };
	struct registry_conf	 cf;
	struct kvlist		 kv;
	char			 id[16], pin[32];
	const struct instance	*lead;
	const char		*app;
	int64_t			 t = 0, dirty = 0;
	long			 j;
	int			 i, k;

	srandom(seed);
	/* Few ids: every contender kept; many: the kept ones run out. */
	m->nids = seed % 3 == 0 ? 6 : NIDS;
	m->life = seed % 3 == 0 ? 30 : 3600;
	registry_conf_defaults(&cf);
	/* Odd seeds: expiry always on; even: self-preservation flips it. */
	cf.self_preservation = seed % 2 == 0;
	cf.renewal_percent_threshold = 0.2;
	cf.expected_initial = 0;
	cf.max_skew_ms = 0;
	m->reg = registry_new(&cf, T0);
	registry_add_observer(m->reg, model_observe, m);
	/* Many ids: every app starts full, so the kept ones are a few. */
	for (i = 0; m->nids > 6 && i < NAPPS * m->nids; i++) {
		snprintf(id, sizeof id, "i%d", i % m->nids);
		(void)registry_register(m->reg, mkinst(apps[i / m->nids], id,
		    STATUS_UP, T0 + ++dirty, T0 + 1000 * (random() % 4),
		    m->life), 1, TM(T0));
	}
	for (i = 0; i < n; i++) {
		app = apps[random() % NAPPS];
		snprintf(id, sizeof id, "i%ld", random() % m->nids);
		dirty++;
		switch (random() % 17) {
		case 0:
		case 1:		/* time passes, past leases now and then */
			t += random() % 4 == 0 ? random() % 40000 :
			    random() % 3000;
			break;
		case 2:		/* the clock steps back a little */
			if (m->nids > 6 && random() % 8 != 0)
				break;	/* many: let the kept ones run out */
			t -= random() % 2000;
			break;
		case 3:		/* an own registration: stamped now */
			(void)registry_register(m->reg, mkinst(app, id,
			    sts[random() % (m->nids > 6 ? 2 : 5)],
			    T0 + t + dirty, 0,
			    5 + (int)(random() % m->life)), 0, TM(T0 + t));
			break;
		case 4:		/* replicated: carried stamps that tie */
			(void)registry_register(m->reg, mkinst(app, id,
			    sts[random() % 5], T0 + t + dirty,
			    T0 + 1000 * (random() % 4),
			    5 + (int)(random() % m->life)), 1, TM(T0 + t));
			break;
		case 5:
		case 6:
		case 7:
			(void)registry_renew(m->reg, app, id, -1,
			    STATUS_UNKNOWN, 0, TM(T0 + t), NULL);
			break;
		case 8:
			(void)registry_status_update(m->reg, app, id,
			    sts[random() % 4], -1, random() % 2, TM(T0 + t),
			    0);
			break;
		case 9:
			(void)registry_delete_override(m->reg, app, id,
			    random() % 2 ? STATUS_UP : STATUS_UNKNOWN, -1, 0,
			    TM(T0 + t), 0);
			break;
		case 10:
			if (m->nids > 6 && random() % 4 != 0)
				break;	/* many contenders: fewer leave */
			(void)registry_cancel(m->reg, app, id, 0, TM(T0 + t),
			    0);
			break;
		case 11:	/* a pin, newer or older, or its release */
		case 12:
			memset(&kv, 0, sizeof kv);
			k = (int)(random() % 4);
			snprintf(pin, sizeof pin, "%lld",
			    k == 0 ? 0LL : (long long)(T0 + 1000 * k));
			kvlist_set(&kv, LEADER_PIN_KEY, k == 0 ? "" : pin);
			(void)registry_update_metadata(m->reg, app, id, &kv,
			    TM(T0 + t));
			kvlist_clear(&kv);
			break;
		case 13:
			(void)registry_evict(m->reg, TM(T0 + t));
			break;
		case 14:	/* self-preservation decides on expiry */
			registry_tick_minute(m->reg, T0 + t);
			break;
		case 16:	/* leaders go one by one: a rolling restart */
			for (j = random() % 24; j >= 0; j--) {
				if ((lead = leader_find(m->reg, app,
				    T0 + t)) == NULL)
					break;
				snprintf(id, sizeof id, "%s",
				    instance_id(lead));
				model_unlead(m, app, id, t, dirty++);
			}
			break;
		case 15:	/* an app's other metadata: rank unchanged */
			memset(&kv, 0, sizeof kv);
			kvlist_set(&kv, "k", random() % 2 ? "x" : "y");
			(void)registry_update_metadata(m->reg, app, id, &kv,
			    TM(T0 + t));
			kvlist_clear(&kv);
			break;
		}
	}
	registry_free(m->reg);
	for (i = 0; i < NAPPS; i++) {
		leader_track_clear(&m->a[i].watch);
		leader_track_clear(&m->a[i].every);
		memset(&m->a[i], 0, sizeof m->a[i]);
	}
}

/* The kept leader is leader_find_app's at every event, seed by seed. */
START_TEST(test_track_model)
{
	struct model	m;
	unsigned	seed;

	memset(&m, 0, sizeof m);
	for (seed = 1; seed <= 200; seed++) {
		model_run(&m, seed, 3000);
		if (m.mismatches > 0 && getenv("LDEBUG"))
			fprintf(stderr, "seed %u\n", seed);
	}
	fprintf(stderr, "leader model: %llu checks, %llu noted, %llu leader "
	    "changes, %llu/%llu checks with expiry on/off, %llu with "
	    "contenders not kept, %llu mismatches\n",
	    (unsigned long long)m.checks, (unsigned long long)m.notes,
	    (unsigned long long)m.changes, (unsigned long long)m.hidden,
	    (unsigned long long)m.shown, (unsigned long long)m.partial,
	    (unsigned long long)m.mismatches);
	ck_assert_uint_eq(m.mismatches, 0);
	/* The sequences reach every case the rule has. */
	ck_assert_uint_gt(m.changes, 10000);
	ck_assert_uint_gt(m.notes, 10000);
	ck_assert_uint_gt(m.hidden, 10000);
	ck_assert_uint_gt(m.shown, 10000);
	ck_assert_uint_gt(m.partial, 10000);
	ck_assert_uint_gt(m.checks - m.partial, 10000);
}
END_TEST

/* A leader whose lease ran out without an event is replaced at once. */
START_TEST(test_track_expired_leader)
{
	struct model		 m;
	struct registry_conf	 cf;

	memset(&m, 0, sizeof m);
	m.nids = NIDS;
	registry_conf_defaults(&cf);
	cf.self_preservation = 0;
	m.reg = registry_new(&cf, T0);
	registry_add_observer(m.reg, model_observe, &m);
	ck_assert_int_eq(registry_register(m.reg, mkinst("A", "old", STATUS_UP,
	    1, 0, 10), 0, TM(T0)), REG_OK);
	ck_assert_int_eq(registry_register(m.reg, mkinst("A", "new", STATUS_UP,
	    2, 0, 60), 0, TM(T0 + 1000)), REG_OK);
	ck_assert_str_eq(m.a[0].watch.id, "old");
	/* old's 10 s pass unseen; new's heartbeat is noted, then a change. */
	ck_assert_int_eq(registry_renew(m.reg, "A", "new", -1, STATUS_UNKNOWN,
	    0, TM(T0 + 20000), NULL), REG_OK);
	ck_assert_int_eq(registry_register(m.reg, mkinst("A", "third",
	    STATUS_UP, 3, 0, 60), 0, TM(T0 + 20001)), REG_OK);
	ck_assert_str_eq(m.a[0].watch.id, "new");
	/* old heartbeats again: noted, and the next change ranks it first. */
	ck_assert_int_eq(registry_renew(m.reg, "A", "old", -1, STATUS_UNKNOWN,
	    0, TM(T0 + 20002), NULL), REG_OK);
	ck_assert_str_eq(m.a[0].watch.id, "new");	/* no check yet */
	ck_assert_int_eq(registry_register(m.reg, mkinst("A", "fourth",
	    STATUS_UP, 4, 0, 60), 0, TM(T0 + 20003)), REG_OK);
	ck_assert_str_eq(m.a[0].watch.id, "old");
	ck_assert_uint_eq(m.mismatches, 0);
	registry_free(m.reg);
	leader_track_clear(&m.a[0].watch);
	leader_track_clear(&m.a[0].every);
}
END_TEST

/* The suite. */
static Suite *
leader_suite(void)
{
	Suite	*s = suite_create("leader");
	TCase	*tc = tcase_create("track");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_track_model);
	tcase_add_test(tc, test_track_expired_leader);
	suite_add_tcase(s, tc);
	return (s);
}

/* Run the suite. */
int
main(void)
{
	return (check_run(leader_suite()));
}
