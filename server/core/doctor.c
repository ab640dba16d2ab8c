/*
 * doctor.c: the findings and the table of recent registrations
 * (doctor.h). Every threshold is a fact of the protocol or a bound of
 * ours:
 *
 *   renew-interval   Eureka's self-preservation threshold counts on each
 *                    client renewing every leaseInfo.renewalIntervalInSecs
 *                    (spring-cloud-netflix #373: a client renewing at
 *                    another rate breaks it silently); a gap between two
 *                    heartbeats beyond renew_factor (2) times the declared
 *                    interval, or below it divided by 2, is reported.
 *   id-conflict      two processes with one id re-register over each
 *                    other: the address flips back at least twice within
 *                    the window (10 min).
 *   reregister-storm registrations of one id within a minute at or above
 *                    storm_per_minute (10): a client in a restart or
 *                    re-register loop. (A window shorter than a minute
 *                    shortens that period too, for tests.)
 *   clock-skew       a client's lastDirtyTimestamp ahead of our clock by
 *                    more than skew_ms (30 s): the origin timestamps
 *                    reconciliation compares would be wrong. A peer's:
 *                    the Date header of its last answer (RFC 9110
 *                    §6.6.1, whole seconds; every heureka reply and
 *                    Tomcat's carry one) off our clock by more than
 *                    skew_ms either way, seen within the window. The
 *                    error of that estimate is the round trip plus the
 *                    header's second, far below 30 s.
 *   peer             a peer list entry naming this node, a peer that does
 *                    not answer or refuses our credentials (the server
 *                    glue judges those), and Eureka's replica check:
 *                    StatusUtil.isReplicaAvailable lists a peer URL as
 *                    available only if an instance of the server's own
 *                    application is registered with the URL's host as
 *                    its hostName (PeerEurekaNodes.isInstanceURL; the
 *                    ipAddr only with applicationsResolverUseIp), the
 *                    usual cause of "unavailable-replicas" (Netflix/eureka
 *                    #1008: a URL naming an address or a short name
 *                    while the node registers its full host name). Judged
 *                    only where the own application has instances here,
 *                    that is where the nodes register themselves (as
 *                    Spring Cloud Eureka servers do): a heureka cluster
 *                    whose nodes do not would flag every peer otherwise.
 *   self-preservation  asserted by the scan from the eviction figures.
 *
 * The table of registrations is open addressing over DOCTOR_MAX_TRACK
 * slots with a probe of DOCTOR_PROBE: a lookup reads at most that many
 * slots, an insert into a full probe replaces the least recently seen.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "doctor.h"
#include "hash.h"
#include "instance.h"
#include "json.h"
#include "registry.h"
#include "xmalloc.h"

#define DOCTOR_PROBE		16
#define DOCTOR_MINUTE_MS	60000
#define DOCTOR_KEPT_SAMPLE	5

struct doctor_track {
	uint64_t	 hash;		/* of app and id; 0: free slot */
	char		*app;
	char		*id;
	char		*where;		/* the last registration's */
	char		*other;		/* the one before a flip */
	int64_t		 last_mono;	/* last registration */
	int64_t		 flip_mono;	/* last change of address */
	unsigned	 flips;		/* within the window */
	int64_t		 min_start;	/* this minute's count began */
	unsigned	 min_count;
	unsigned	 prev_count;	/* the minute before */
	int64_t		 skew_ms;	/* client ahead by */
	int64_t		 skew_mono;	/* when seen, 0 never */
};

struct doctor {
	struct doctor_conf	 conf;
	int64_t			 period_ms;	/* re-registrations counted
						   over: a minute, or the
						   window when shorter */
	struct doctor_finding	 f[DOCTOR_MAX_FINDINGS];
	size_t			 nf;
	uint64_t		 suppressed;
	unsigned		 gen;
	struct hk_time		 now;		/* of the scan */
	struct doctor_track	*track;		/* DOCTOR_MAX_TRACK */
	size_t			 kept;		/* expired leases kept */
	char			 kept_ids[DOCTOR_DETAIL / 2];
};

static const char *doctor_names[DOCTOR_NKINDS] = {
	[DOCTOR_RENEW_INTERVAL] = "renew-interval",
	[DOCTOR_ID_CONFLICT] = "id-conflict",
	[DOCTOR_REREGISTER_STORM] = "reregister-storm",
	[DOCTOR_PEER] = "peer",
	[DOCTOR_CLOCK_SKEW] = "clock-skew",
	[DOCTOR_SELF_PRESERVATION] = "self-preservation",
};

/* The defaults the header comment explains. */
void
doctor_conf_defaults(struct doctor_conf *c)
{
	c->window_ms = 600000;
	c->storm_per_minute = 10;
	c->skew_ms = 30000;
	c->renew_factor = 2;
}

/* A doctor with conf (copied). */
struct doctor *
doctor_new(const struct doctor_conf *c)
{
	struct doctor	*d = xcalloc(1, sizeof *d);

	doctor_set_conf(d, c);
	d->track = xcalloc(DOCTOR_MAX_TRACK, sizeof *d->track);
	return (d);
}

/* Forget one registration slot. */
static void
doctor_track_clear(struct doctor_track *t)
{
	free(t->app);
	free(t->id);
	free(t->where);
	free(t->other);
	memset(t, 0, sizeof *t);
}

/* Free the doctor. */
void
doctor_free(struct doctor *d)
{
	size_t	i;

	if (d == NULL)
		return;
	for (i = 0; i < DOCTOR_MAX_TRACK; i++)
		doctor_track_clear(&d->track[i]);
	free(d->track);
	free(d);
}

/* New thresholds (SIGHUP); bad values fall back to the defaults'. */
void
doctor_set_conf(struct doctor *d, const struct doctor_conf *c)
{
	struct doctor_conf	def;

	doctor_conf_defaults(&def);
	d->conf = *c;
	if (d->conf.window_ms <= 0)
		d->conf.window_ms = def.window_ms;
	if (d->conf.storm_per_minute <= 0)
		d->conf.storm_per_minute = def.storm_per_minute;
	if (d->conf.skew_ms <= 0)
		d->conf.skew_ms = def.skew_ms;
	if (d->conf.renew_factor < 2)
		d->conf.renew_factor = def.renew_factor;
	d->period_ms = d->conf.window_ms < DOCTOR_MINUTE_MS ?
	    d->conf.window_ms : DOCTOR_MINUTE_MS;
}

/* The name of a kind. */
const char *
doctor_kind_name(enum doctor_kind k)
{
	return (k < DOCTOR_NKINDS ? doctor_names[k] : "other");
}

/* The slot of app/id, a free one, or the stalest of the probe. */
static struct doctor_track *
doctor_track_find(struct doctor *d, const char *app, const char *id)
{
	struct doctor_track	*t, *victim = NULL;
	uint64_t		 h;
	size_t			 i, start;

	h = (hash_str(app) * 0x9e3779b97f4a7c15ULL ^ hash_str(id)) | 1;
	start = (size_t)(h % DOCTOR_MAX_TRACK);
	for (i = 0; i < DOCTOR_PROBE; i++) {
		t = &d->track[(start + i) % DOCTOR_MAX_TRACK];
		if (t->hash == h && strcmp(t->app, app) == 0 &&
		    strcmp(t->id, id) == 0)
			return (t);
		if (t->hash == 0) {
			if (victim == NULL || victim->hash != 0)
				victim = t;
		} else if (victim == NULL || (victim->hash != 0 &&
		    t->last_mono < victim->last_mono))
			victim = t;
	}
	doctor_track_clear(victim);
	victim->hash = h;
	victim->app = xstrdup(app);
	victim->id = xstrdup(id);
	return (victim);
}

/* A registration (doctor.h). */
void
doctor_register(struct doctor *d, const char *app, const char *id,
    const char *where, int created, int64_t client_ts, struct hk_time now)
{
	struct doctor_track	*t;

	(void)created;
	if (d == NULL || app == NULL || id == NULL)
		return;
	t = doctor_track_find(d, app, id);
	if (where != NULL && t->where != NULL && strcmp(t->where, where) != 0) {
		/* A flip back to the address before counts as alternation. */
		if (now.mono_ms - t->flip_mono > d->conf.window_ms)
			t->flips = 0;
		t->flips++;
		t->flip_mono = now.mono_ms;
		free(t->other);
		t->other = t->where;
		t->where = NULL;
	}
	if (where != NULL && t->where == NULL)
		t->where = xstrdup(where);
	if (now.mono_ms - t->min_start >= d->period_ms) {
		t->prev_count = now.mono_ms - t->min_start <
		    2 * d->period_ms ? t->min_count : 0;
		t->min_count = 0;
		t->min_start = now.mono_ms;
	}
	t->min_count++;
	t->last_mono = now.mono_ms;
	if (client_ts > 0 && client_ts - now.wall_ms > d->conf.skew_ms) {
		t->skew_ms = client_ts - now.wall_ms;
		t->skew_mono = now.mono_ms;
	}
}

/* Assert a finding in this scan: kept with its since, or added. */
static void
doctor_assert(struct doctor *d, enum doctor_kind k, const char *app,
    const char *id, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static void
doctor_assert(struct doctor *d, enum doctor_kind k, const char *app,
    const char *id, const char *fmt, ...)
{
	struct doctor_finding	*f = NULL;
	va_list			 ap;
	size_t			 i;

	app = app != NULL ? app : "";
	id = id != NULL ? id : "";
	for (i = 0; i < d->nf; i++) {
		if (d->f[i].kind == k && strcmp(d->f[i].app, app) == 0 &&
		    strcmp(d->f[i].id, id) == 0) {
			f = &d->f[i];
			break;
		}
	}
	if (f == NULL) {
		if (d->nf == DOCTOR_MAX_FINDINGS) {
			d->suppressed++;
			return;
		}
		f = &d->f[d->nf++];
		memset(f, 0, sizeof *f);
		f->kind = k;
		snprintf(f->app, sizeof f->app, "%s", app);
		snprintf(f->id, sizeof f->id, "%s", id);
		f->since_ms = d->now.wall_ms;
	}
	va_start(ap, fmt);
	vsnprintf(f->detail, sizeof f->detail, fmt, ap);
	va_end(ap);
	f->gen = d->gen;
}

/* Start a scan at now. */
void
doctor_scan_begin(struct doctor *d, struct hk_time now)
{
	d->gen++;
	d->now = now;
	d->kept = 0;
	d->kept_ids[0] = '\0';
	d->suppressed = 0;
}

/* One lease's heartbeat timing. */
void
doctor_scan_lease(struct doctor *d, const struct registry_timing *t)
{
	const struct instance	*in = t->inst;
	int64_t			 declared, gap, since;
	size_t			 used;

	if (t->uncounted)
		return;
	if (t->expired) {
		if (d->kept++ < DOCTOR_KEPT_SAMPLE) {
			used = strlen(d->kept_ids);
			snprintf(d->kept_ids + used, sizeof d->kept_ids - used,
			    "%s%s/%s", used > 0 ? ", " : "", t->app,
			    instance_id(in));
		}
		return;
	}
	declared = (in->has_lease && in->lease.renewal_interval_secs > 0 ?
	    in->lease.renewal_interval_secs : LEASE_DEFAULT_RENEWAL_SECS) *
	    (int64_t)1000;
	/* Never renewed since registration: no rate to judge yet. */
	if (t->last_renew_ts == 0)
		return;
	gap = t->gap_ms > 0 ? t->gap_ms : -1;
	since = d->now.mono_ms - t->last_renew_mono;
	/* A heartbeat overdue already says as much as a long gap. */
	if (since > gap && since > declared * d->conf.renew_factor)
		gap = since;
	if (gap <= 0 || (gap <= declared * d->conf.renew_factor &&
	    gap * d->conf.renew_factor >= declared))
		return;
	doctor_assert(d, DOCTOR_RENEW_INTERVAL, t->app, instance_id(in),
	    "renews every %.1f s but declares leaseInfo."
	    "renewalIntervalInSecs %lld: self-preservation counts on %lld "
	    "renewals a minute from it, it sends about %.1f",
	    (double)gap / 1000, (long long)(declared / 1000),
	    (long long)(60000 / declared),
	    gap > 0 ? 60000.0 / (double)gap : 0.0);
}

/* A peer's problem, if any. */
void
doctor_scan_peer(struct doctor *d, const char *url, const char *problem)
{
	if (problem != NULL)
		doctor_assert(d, DOCTOR_PEER, "", url, "%s", problem);
}

/* A peer's clock (doctor.h). */
void
doctor_scan_peer_clock(struct doctor *d, const char *url, int64_t skew_ms,
    int64_t seen_mono)
{
	int64_t	mag = skew_ms < 0 ? -skew_ms : skew_ms;

	if (seen_mono <= 0 || d->now.mono_ms - seen_mono > d->conf.window_ms ||
	    mag <= d->conf.skew_ms)
		return;
	doctor_assert(d, DOCTOR_CLOCK_SKEW, "", url, "the peer's clock is "
	    "%.0f s %s this node's (the Date header of its last answer): "
	    "origin timestamps it stamps win or lose wrongly when copies "
	    "are reconciled, and lease times it reports are off; run NTP on "
	    "both", (double)mag / 1000, skew_ms > 0 ? "ahead of" : "behind");
}

/* Eureka's replica check for one peer (doctor.h). */
void
doctor_scan_replica(struct doctor *d, const struct registry *reg,
    const char *own_app, const char *url, const char *host)
{
	const struct instance	*in, *by_ip = NULL;
	struct reg_app		*a;
	char			 names[DOCTOR_DETAIL / 2];
	size_t			 i, n, used = 0;

	if (reg == NULL || own_app == NULL || host == NULL ||
	    (a = registry_app_find(reg, own_app)) == NULL ||
	    (n = reg_app_size(a)) == 0)
		return;
	names[0] = '\0';
	for (i = 0; i < n; i++) {
		if ((in = reg_app_instance_at(a, i)) == NULL)
			continue;
		if (in->host_name != NULL &&
		    strcasecmp(in->host_name, host) == 0)
			return;
		if (by_ip == NULL && in->ip_addr != NULL &&
		    strcmp(in->ip_addr, host) == 0)
			by_ip = in;
		if (i < DOCTOR_KEPT_SAMPLE && used < sizeof names)
			used += (size_t)snprintf(names + used, sizeof names -
			    used, "%s%s", used > 0 ? ", " : "",
			    in->host_name != NULL ? in->host_name : "?");
	}
	if (by_ip != NULL)
		doctor_assert(d, DOCTOR_PEER, "", url, "its host %s is the "
		    "ipAddr of %s instance %s, registered with hostName %s: "
		    "Java Eureka's replica check compares a peer URL's host "
		    "with hostName (ipAddr only with applicationsResolverUseIp) "
		    "and lists this peer under unavailable-replicas; name the "
		    "peer by its host name, or register the node with that "
		    "address as its host name", host, own_app,
		    instance_id(by_ip), by_ip->host_name != NULL ?
		    by_ip->host_name : "?");
	else
		doctor_assert(d, DOCTOR_PEER, "", url, "no instance of %s "
		    "registered here has its host %s as hostName (%zu "
		    "registered: %s%s): Java Eureka's replica check lists this "
		    "peer under unavailable-replicas; name the peer by the host "
		    "name its node registers with", own_app, host, n, names,
		    n > DOCTOR_KEPT_SAMPLE ? ", ..." : "");
}

/* Self-preservation's figures. */
void
doctor_scan_selfpres(struct doctor *d, int active, long expected,
    long actual)
{
	/*
	 * Reported while it matters: eviction is off and it keeps leases
	 * that would be gone (in a server's first minute the renewals of
	 * the minute are not counted yet, and Eureka is "below" then too).
	 */
	if (!active || d->kept == 0)
		return;
	doctor_assert(d, DOCTOR_SELF_PRESERVATION, "", "",
	    "self-preservation is on: %ld renewals in the last minute, "
	    "%ld expected; it keeps %zu expired lease%s that would otherwise "
	    "be evicted%s%s%s", actual, expected, d->kept,
	    d->kept == 1 ? "" : "s", d->kept > 0 ? " (" : "", d->kept_ids,
	    d->kept > DOCTOR_KEPT_SAMPLE ? ", ...)" : d->kept > 0 ? ")" : "");
}

/* The table's findings for one slot; drop it past the window. */
static void
doctor_scan_track(struct doctor *d, struct doctor_track *t)
{
	int64_t		now = d->now.mono_ms, w = d->conf.window_ms;
	unsigned	count;

	if (now - t->last_mono > w && now - t->last_mono > 2 *
	    d->period_ms) {
		doctor_track_clear(t);
		return;
	}
	if (t->flips >= 2 && now - t->flip_mono <= w)
		doctor_assert(d, DOCTOR_ID_CONFLICT, t->app, t->id,
		    "registered alternately from %s and %s (%u changes of "
		    "address): two processes share this instance id",
		    t->where != NULL ? t->where : "?",
		    t->other != NULL ? t->other : "?", t->flips);
	count = now - t->min_start < d->period_ms ?
	    (t->min_count > t->prev_count ? t->min_count : t->prev_count) :
	    now - t->min_start < 2 * d->period_ms ? t->min_count : 0;
	if (count >= (unsigned)d->conf.storm_per_minute)
		doctor_assert(d, DOCTOR_REREGISTER_STORM, t->app, t->id,
		    "registered %u times in %lld s (a client re-registering "
		    "in a loop, or restarting)", count,
		    (long long)(d->period_ms / 1000));
	if (t->skew_mono > 0 && now - t->skew_mono <= w)
		doctor_assert(d, DOCTOR_CLOCK_SKEW, t->app, t->id,
		    "the client's clock is %.1f s ahead of this node's (its "
		    "lastDirtyTimestamp)", (double)t->skew_ms / 1000);
}

/* End a scan: the table's findings, then clear what was not asserted. */
void
doctor_scan_end(struct doctor *d)
{
	size_t	i, j;

	for (i = 0; i < DOCTOR_MAX_TRACK; i++)
		if (d->track[i].hash != 0)
			doctor_scan_track(d, &d->track[i]);
	for (i = 0, j = 0; i < d->nf; i++) {
		if (d->f[i].gen != d->gen)
			continue;
		if (i != j)
			d->f[j] = d->f[i];
		j++;
	}
	d->nf = j;
}

/* How many findings. */
size_t
doctor_count(const struct doctor *d)
{
	return (d != NULL ? d->nf : 0);
}

/* How many of one kind. */
size_t
doctor_count_kind(const struct doctor *d, enum doctor_kind k)
{
	size_t	i, n = 0;

	for (i = 0; d != NULL && i < d->nf; i++)
		n += d->f[i].kind == k;
	return (n);
}

/* Findings past DOCTOR_MAX_FINDINGS in the last scan. */
uint64_t
doctor_suppressed(const struct doctor *d)
{
	return (d != NULL ? d->suppressed : 0);
}

/* The i-th finding, NULL past the end. */
const struct doctor_finding *
doctor_get(const struct doctor *d, size_t i)
{
	return (d != NULL && i < d->nf ? &d->f[i] : NULL);
}

/* The findings as JSON (doctor.h). */
void
doctor_json(const struct doctor *d, struct buf *b)
{
	const struct doctor_finding	*f;
	size_t				 i;

	buf_adds(b, "{\"findings\":[");
	for (i = 0; (f = doctor_get(d, i)) != NULL; i++) {
		if (i > 0)
			buf_addc(b, ',');
		buf_adds(b, "{\"kind\":");
		json_add_string(b, doctor_kind_name(f->kind));
		if (f->app[0] != '\0') {
			buf_adds(b, ",\"app\":");
			json_add_string(b, f->app);
		}
		if (f->id[0] != '\0') {
			buf_adds(b, ",\"id\":");
			json_add_string(b, f->id);
		}
		buf_adds(b, ",\"detail\":");
		json_add_string(b, f->detail);
		buf_adds(b, ",\"since\":");
		buf_add_i64(b, f->since_ms);
		buf_addc(b, '}');
	}
	buf_adds(b, "],\"suppressed\":");
	buf_add_i64(b, (int64_t)doctor_suppressed(d));
	buf_addc(b, '}');
}
