/*
 * metrics.c: the numbers behind /metrics, rendered in the Prometheus text
 * exposition format 0.0.4. Only the HTTP side is counted here (rest.c calls
 * metrics_http() after every response): requests per (route, status) and a
 * latency histogram per route, in fixed tables so a scrape or a request
 * never allocates. Everything else (registry counters, instances by status,
 * self-preservation, peers) is read from its owner at scrape time, so there
 * is one source of truth and nothing to keep in sync.
 */
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heureka-config.h"

#include "audit.h"
#include "buf.h"
#include "bug.h"
#include "config.h"
#include "hash.h"
#include "instance.h"
#include "doctor.h"
#include "gate.h"
#include "log.h"
#include "procstat.h"
#include "xmalloc.h"

#include "cache.h"
#include "looplag.h"
#include "metrics.h"
#include "peers.h"
#include "registry.h"

/*
 * The route labels rest.c uses. Anything else is counted as "other", so a
 * caller bug (or a new route) can never grow the series set.
 */
static const char *metrics_routes[] = {
	"apps", "apps_delta", "app", "instance", "register", "renew",
	"cancel", "status", "metadata", "vips", "batch", "asg",
	"status_info", "statusoverrides", "heureka", "dashboard",
	"airlift_announce", "airlift_static", "airlift_service", "watch",
	"leader", "other",
};
#define METRICS_NROUTES	(sizeof metrics_routes / sizeof metrics_routes[0])
#define METRICS_OTHER	(METRICS_NROUTES - 1)

/* HTTP status codes 100..599 get a slot each; anything else lands in 0. */
#define METRICS_NCODES	600

/* Upper bounds (seconds) of the latency buckets, Prometheus' defaults + 1 ms. */
static const double metrics_buckets[] = {
	0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
	1, 2.5, 5, 10,
};
#define METRICS_NBUCKETS (sizeof metrics_buckets / sizeof metrics_buckets[0])

struct metrics {
	uint64_t	requests[METRICS_NROUTES][METRICS_NCODES];
	uint64_t	bucket[METRICS_NROUTES][METRICS_NBUCKETS];
	uint64_t	count[METRICS_NROUTES];
	double		sum[METRICS_NROUTES];		/* seconds */
	uint64_t	limits[METRICS_NLIMITS];
	size_t		apps_omitted;		/* at the last scrape */
	struct metrics_deps d;			/* borrowed */
};

/* Label values of heureka_limit_rejections_total, by enum metrics_limit. */
static const char *metrics_limit_names[METRICS_NLIMITS] = {
	"register-rate", "max-metadata-bytes", "max-metric-applications",
	"max-body-bytes", "max-batch-bytes", "max-instances",
	"max-metadata-entries", "max-connections", "fetch-memory",
	"auth-failure-rate", "descriptor-reserve", "handshake-timeout",
	"head-timeout", "head-memory",
};

/* The series cap is hit on every scrape: say so once a minute at most. */
static struct log_ratelim metrics_rl = LOG_RATELIM_INIT(60000, 1);

static size_t	metrics_route_index(const char *);
static void	metrics_add_label(struct buf *, const char *);
static void	metrics_header(struct buf *, const char *, const char *,
		    const char *);
static void	metrics_render_http(struct metrics *, struct buf *);
static void	metrics_render_looplag(const struct looplag *, struct buf *);
static void	metrics_render_registry(struct metrics *, struct buf *);
static void	metrics_render_instances(struct metrics *, struct buf *);
static void	metrics_render_peers(struct metrics *, struct buf *);
static void	metrics_render_limits(struct metrics *, struct buf *);
static void	metrics_render_console(struct metrics *, struct buf *);

/* A zeroed metrics table that reads the rest from deps at scrape time. */
struct metrics *
metrics_new(const struct metrics_deps *deps)
{
	struct metrics	*m = xcalloc(1, sizeof *m);

	m->d = *deps;
	return (m);
}

/* Release m; NULL is fine. */
void
metrics_free(struct metrics *m)
{
	free(m);
}

/* Index of a route label in metrics_routes, "other" when unknown. */
static size_t
metrics_route_index(const char *route)
{
	size_t	i;

	if (route == NULL)
		return (METRICS_OTHER);
	for (i = 0; i < METRICS_NROUTES; i++) {
		if (strcmp(metrics_routes[i], route) == 0)
			return (i);
	}
	return (METRICS_OTHER);
}

/* Count n hits of a limit. */
void
metrics_limit(struct metrics *m, enum metrics_limit l, uint64_t n)
{
	if (m != NULL && (unsigned)l < METRICS_NLIMITS)
		m->limits[l] += n;
}

/* Hits of a limit so far. */
uint64_t
metrics_limit_count(const struct metrics *m, enum metrics_limit l)
{
	if (m == NULL || (unsigned)l >= METRICS_NLIMITS)
		return (0);
	return (m->limits[l]);
}

/* Count one served request; usec is its handling time. */
void
metrics_http(struct metrics *m, const char *route, int status, int64_t usec)
{
	size_t	r, b;
	double	secs;

	if (m == NULL)
		return;
	r = metrics_route_index(route);
	if (status < 100 || status >= METRICS_NCODES)
		status = 0;
	m->requests[r][status]++;

	if (usec < 0)
		usec = 0;
	secs = (double)usec / 1e6;
	m->count[r]++;
	m->sum[r] += secs;
	for (b = 0; b < METRICS_NBUCKETS; b++) {
		if (secs <= metrics_buckets[b]) {
			m->bucket[r][b]++;
			break;
		}
	}
}

/*
 * Append a label value, escaped as the exposition format wants: backslash,
 * double quote and newline. App names and peer URLs come from clients and
 * configuration, so this is what keeps a hostile name from forging series.
 */
static void
metrics_add_label(struct buf *b, const char *s)
{
	buf_addc(b, '"');
	for (; s != NULL && *s != '\0'; s++) {
		switch (*s) {
		case '\\':
			buf_adds(b, "\\\\");
			break;
		case '"':
			buf_adds(b, "\\\"");
			break;
		case '\n':
			buf_adds(b, "\\n");
			break;
		default:
			buf_addc(b, *s);
			break;
		}
	}
	buf_addc(b, '"');
}

/* The # HELP and # TYPE lines of one metric family. */
static void
metrics_header(struct buf *b, const char *name, const char *type,
    const char *help)
{
	buf_addf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* One unlabelled metric: its # HELP and # TYPE lines and its value. */
static void
metrics_u64(struct buf *b, const char *name, const char *type,
    const char *help, uint64_t v)
{
	metrics_header(b, name, type, help);
	buf_addf(b, "%s %llu\n", name, (unsigned long long)v);
}

/* Requests by route and code, and the latency histogram by route. */
static void
metrics_render_http(struct metrics *m, struct buf *b)
{
	size_t		 r, c, i;
	uint64_t	 cum;

	metrics_header(b, "heureka_http_requests_total", "counter",
	    "HTTP requests served, by route and status code.");
	for (r = 0; r < METRICS_NROUTES; r++) {
		for (c = 0; c < METRICS_NCODES; c++) {
			if (m->requests[r][c] == 0)
				continue;
			buf_addf(b, "heureka_http_requests_total{route=\"%s\","
			    "code=\"%zu\"} %llu\n", metrics_routes[r], c,
			    (unsigned long long)m->requests[r][c]);
		}
	}

	metrics_header(b, "heureka_http_request_duration_seconds", "histogram",
	    "Time to handle an HTTP request, by route.");
	for (r = 0; r < METRICS_NROUTES; r++) {
		if (m->count[r] == 0)
			continue;
		cum = 0;
		for (i = 0; i < METRICS_NBUCKETS; i++) {
			cum += m->bucket[r][i];
			buf_addf(b, "heureka_http_request_duration_seconds_bucket"
			    "{route=\"%s\",le=\"%g\"} %llu\n", metrics_routes[r],
			    metrics_buckets[i], (unsigned long long)cum);
		}
		buf_addf(b, "heureka_http_request_duration_seconds_bucket"
		    "{route=\"%s\",le=\"+Inf\"} %llu\n", metrics_routes[r],
		    (unsigned long long)m->count[r]);
		buf_addf(b, "heureka_http_request_duration_seconds_sum"
		    "{route=\"%s\"} %.9g\n", metrics_routes[r], m->sum[r]);
		buf_addf(b, "heureka_http_request_duration_seconds_count"
		    "{route=\"%s\"} %llu\n", metrics_routes[r],
		    (unsigned long long)m->count[r]);
	}
}

/* A histogram: cumulative buckets by bound(i) s, +Inf, sum (us) and count. */
static void
metrics_histogram(struct buf *b, const char *name, const char *help,
    const uint64_t *bucket, int n, double (*bound)(int), uint64_t count,
    int64_t sum_us)
{
	uint64_t	cum = 0;
	int		i;

	metrics_header(b, name, "histogram", help);
	for (i = 0; i < n; i++) {
		cum += bucket[i];
		buf_addf(b, "%s_bucket{le=\"%g\"} %llu\n", name, bound(i),
		    (unsigned long long)cum);
	}
	buf_addf(b, "%s_bucket{le=\"+Inf\"} %llu\n", name,
	    (unsigned long long)count);
	buf_addf(b, "%s_sum %.6f\n", name, (double)sum_us / 1e6);
	buf_addf(b, "%s_count %llu\n", name, (unsigned long long)count);
}

/* The loop-latency probe: histogram, and the last interval's max and p99. */
static void
metrics_render_looplag(const struct looplag *ll, struct buf *b)
{
	metrics_histogram(b, "heureka_loop_lag_seconds",
	    "How late a timer due every 10 ms ran: event-loop stalls.",
	    ll->bucket, LOOPLAG_NBUCKETS, looplag_bound, ll->count,
	    ll->sum_us);
	metrics_header(b, "heureka_loop_lag_max_seconds", "gauge",
	    "Largest loop lag of the last completed 10 s interval.");
	buf_addf(b, "heureka_loop_lag_max_seconds %.6f\n",
	    (double)ll->last_max_us / 1e6);
	metrics_header(b, "heureka_loop_lag_p99_seconds", "gauge",
	    "99th percentile loop lag of the last completed 10 s interval.");
	buf_addf(b, "heureka_loop_lag_p99_seconds %.6f\n",
	    (double)ll->last_p99_us / 1e6);
	metrics_header(b, "heureka_loop_lag_max_since_start_seconds", "gauge",
	    "Largest loop lag since heurekad started.");
	buf_addf(b, "heureka_loop_lag_max_since_start_seconds %.6f\n",
	    (double)ll->max_us / 1e6);
	metrics_histogram(b, "heureka_loop_turn_cpu_seconds",
	    "CPU time of each event-loop turn (heurekad's own, without "
	    "preemption).", ll->turn_bucket, LOOPLAG_TURN_NBUCKETS,
	    looplag_turn_bound, ll->turns, ll->turn_sum_us);
	metrics_header(b, "heureka_loop_turn_cpu_max_seconds", "gauge",
	    "Longest loop turn (CPU) of the last completed 10 s interval.");
	buf_addf(b, "heureka_loop_turn_cpu_max_seconds %.6f\n",
	    (double)ll->turn_last_max_us / 1e6);
	metrics_header(b, "heureka_loop_turn_cpu_max_since_start_seconds",
	    "gauge", "Longest loop turn (CPU) since heurekad started.");
	buf_addf(b, "heureka_loop_turn_cpu_max_since_start_seconds %.6f\n",
	    (double)ll->turn_max_us / 1e6);
}

/* The registry's counters: exposition name, help, field. */
static const struct {
	const char	*name;
	const char	*help;
	size_t		 off;
} counters[] = {
	{ "heureka_registrations_total",
	    "Registrations received (local and replicated).",
	    offsetof(struct registry_stats, registrations) },
	{ "heureka_renewals_total",
	    "Heartbeats received (local and replicated).",
	    offsetof(struct registry_stats, renewals) },
	{ "heureka_renewals_not_found_total",
	    "Heartbeats for unknown instances (answered 404).",
	    offsetof(struct registry_stats, renewals_not_found) },
	{ "heureka_cancels_total",
	    "Cancels received (local and replicated).",
	    offsetof(struct registry_stats, cancels) },
	{ "heureka_evictions_total",
	    "Leases evicted because they expired.",
	    offsetof(struct registry_stats, evictions) },
	{ "heureka_status_updates_total",
	    "Status overrides set.",
	    offsetof(struct registry_stats, status_updates) },
	{ "heureka_stale_refused_total",
	    "Replicated registers or cancels refused: a tombstone or a newer "
	    "copy covered them.",
	    offsetof(struct registry_stats, stale_refused) },
	{ "heureka_future_refused_total",
	    "Changes refused: a timestamp beyond max-clock-skew-ms.",
	    offsetof(struct registry_stats, future_refused) },
	{ "heureka_tombstones_dropped_total",
	    "Tombstones of instances never held here dropped early "
	    "(max-unknown-tombstones).",
	    offsetof(struct registry_stats, tombstones_dropped) },
};

/* Lease counters and the self-preservation gauges, from the registry. */
static void
metrics_render_registry(struct metrics *m, struct buf *b)
{
	const struct metrics_deps	*d = &m->d;
	const struct registry_stats	*st;
	static const struct registry_stats zero;
	size_t				 i;
	int				 active = 0;
	long				 threshold = 0, last_min = 0;

	st = &zero;
	if (d->reg != NULL) {
		st = registry_stats(d->reg);
		active = !registry_lease_expiration_enabled(d->reg);
		threshold = registry_renew_threshold(d->reg);
		last_min = registry_renews_last_min(d->reg);
	}

	for (i = 0; i < sizeof counters / sizeof counters[0]; i++) {
		metrics_header(b, counters[i].name, "counter",
		    counters[i].help);
		buf_addf(b, "%s %llu\n", counters[i].name,
		    (unsigned long long)*(const uint64_t *)(const void *)
		    ((const char *)st + counters[i].off));
	}

	metrics_header(b, "heureka_self_preservation_active", "gauge",
	    "1 while eviction is suspended because renewals are below the "
	    "threshold.");
	buf_addf(b, "heureka_self_preservation_active %d\n", active);
	metrics_header(b, "heureka_renews_threshold", "gauge",
	    "Renewals per minute below which self-preservation starts.");
	buf_addf(b, "heureka_renews_threshold %ld\n", threshold);
	metrics_header(b, "heureka_renews_last_minute", "gauge",
	    "Renewals received in the last complete minute.");
	buf_addf(b, "heureka_renews_last_minute %ld\n", last_min);
}

/* The doctor's findings by kind and the audit ring's size. */
static void
metrics_render_console(struct metrics *m, struct buf *b)
{
	const struct doctor	*doc;
	const struct audit	*au;
	enum doctor_kind	 k;

	if (m == NULL)
		return;
	doc = m->d.doctor != NULL ? *m->d.doctor : NULL;
	au = m->d.audit != NULL ? *m->d.audit : NULL;
	if (doc != NULL) {
		metrics_header(b, "heureka_doctor_findings", "gauge",
		    "The doctor's findings now, by kind (GET heureka/doctor "
		    "says what they are).");
		for (k = 0; k < DOCTOR_NKINDS; k++)
			buf_addf(b, "heureka_doctor_findings{kind=\"%s\"} "
			    "%zu\n", doctor_kind_name(k),
			    doctor_count_kind(doc, k));
	}
	if (au != NULL) {
		metrics_header(b, "heureka_audit_records", "gauge",
		    "Audit records in the ring.");
		buf_addf(b, "heureka_audit_records %zu\n", audit_count(au));
		metrics_header(b, "heureka_audit_bytes", "gauge",
		    "Bytes the audit ring holds (heureka.audit.max-bytes).");
		buf_addf(b, "heureka_audit_bytes %zu\n", audit_bytes(au));
		metrics_header(b, "heureka_audit_dropped_total", "counter",
		    "Audit records the ring's bound pushed out.");
		buf_addf(b, "heureka_audit_dropped_total %llu\n",
		    (unsigned long long)audit_dropped(au));
	}
}

/*
 * Instances by application and status, under our name and under the name
 * Spring Cloud's server exposes, so existing Grafana boards keep working.
 * Only non-zero series are written. Past max-metric-applications apps the
 * rest are summed into application="other" (lower case, so no app name,
 * stored upper case, can be it), and the number folded is counted.
 */
static void
metrics_render_instances(struct metrics *m, struct buf *b)
{
	const struct metrics_deps	*d = &m->d;
	static const char	*names[] = {
		"heureka_instances", "eureka_server_instances",
	};
	struct reg_app		*app;
	size_t			 counts[STATUS_COUNT], other[STATUS_COUNT];
	size_t			 i, k, napps, cap, omitted = 0;
	int			 st;

	napps = d->reg != NULL ? registry_app_count(d->reg) : 0;
	cap = d->conf != NULL && d->conf->max_metric_applications >= 0 ?
	    (size_t)d->conf->max_metric_applications : napps;
	for (k = 0; k < sizeof names / sizeof names[0]; k++) {
		metrics_header(b, names[k], "gauge",
		    "Registered instances by application and status.");
		memset(other, 0, sizeof other);
		for (i = 0; i < napps; i++) {
			app = registry_app_at(d->reg, i);
			/* Kept by the registry: a scrape costs O(apps). */
			reg_app_status_counts(app, counts);
			for (st = 0; st < STATUS_COUNT; st++) {
				if (counts[st] == 0)
					continue;
				if (i >= cap) {
					other[st] += counts[st];
					continue;
				}
				buf_addf(b, "%s{application=", names[k]);
				metrics_add_label(b, reg_app_name(app));
				buf_addf(b, ",status=\"%s\"} %zu\n",
				    instance_status_name((enum instance_status)st),
				    counts[st]);
			}
		}
		for (st = 0; st < STATUS_COUNT; st++) {
			if (other[st] > 0)
				buf_addf(b, "%s{application=\"other\","
				    "status=\"%s\"} %zu\n", names[k],
				    instance_status_name((enum instance_status)st),
				    other[st]);
		}
	}
	if (napps > cap)
		omitted = napps - cap;
	if (m != NULL) {
		m->apps_omitted = omitted;
		if (omitted > 0) {
			m->limits[METRICS_LIMIT_METRIC_APPS] += omitted;
			if (log_ratelim_allow(&metrics_rl))
				log_warnx("metrics: %zu applications past "
				    "eureka.server.max-metric-applications "
				    "(%zu) summed as application=\"other\"",
				    omitted, cap);
		}
	}
	metrics_u64(b, "heureka_metrics_applications_omitted", "gauge",
	    "Applications summed into application=\"other\" by the "
	    "series cap.", omitted);
}

/*
 * Every bound that refused or dropped something, one series per limit;
 * the registry's come from its stats, the rest from metrics_limit().
 */
static void
metrics_render_limits(struct metrics *m, struct buf *b)
{
	const struct metrics_deps	*d = &m->d;
	static const struct registry_stats zero;
	const struct registry_stats	*st = &zero;
	const struct cache_stats	*cst;
	size_t				 i, held, unheld;

	if (d->reg != NULL)
		st = registry_stats(d->reg);
	metrics_header(b, "heureka_limit_rejections_total", "counter",
	    "Requests refused or records dropped because a bound was hit.");
	buf_addf(b, "heureka_limit_rejections_total"
	    "{limit=\"max-instance-bytes\"} %llu\n",
	    (unsigned long long)st->refused_too_large);
	buf_addf(b, "heureka_limit_rejections_total"
	    "{limit=\"max-memory-bytes\"} %llu\n",
	    (unsigned long long)st->refused_memory);
	buf_addf(b, "heureka_limit_rejections_total"
	    "{limit=\"max-delta-queue-bytes\"} %llu\n",
	    (unsigned long long)st->delta_dropped);
	for (i = 0; i < METRICS_NLIMITS; i++)
		buf_addf(b, "heureka_limit_rejections_total{limit=\"%s\"} "
		    "%llu\n", metrics_limit_names[i],
		    (unsigned long long)(m != NULL ? m->limits[i] : 0));

	metrics_header(b, "heureka_memory_bytes", "gauge",
	    "Bytes counted against eureka.server.max-memory-bytes, by part.");
	if (d->reg != NULL) {
		buf_addf(b, "heureka_memory_bytes{part=\"registry\"} %zu\n",
		    registry_bytes(d->reg));
		buf_addf(b, "heureka_memory_bytes{part=\"delta-queue\"} %zu\n",
		    registry_delta_bytes(d->reg));
		buf_addf(b, "heureka_memory_bytes{part=\"tombstones\"} %zu\n",
		    registry_tombstone_bytes(d->reg));
	}
	if (d->cache != NULL)
		buf_addf(b, "heureka_memory_bytes{part=\"encodings\"} %zu\n",
		    cache_bytes(d->cache));
	if (d->cache != NULL) {
		cst = cache_stats(d->cache);
		metrics_header(b, "heureka_cache_build_restarts_total",
		    "counter", "Sliced builds (full, delta, application, VIP) "
		    "begun again because the registry changed under them.");
		buf_addf(b, "heureka_cache_build_restarts_total %llu\n",
		    (unsigned long long)(cst->build_aborts + cst->sb_restarts));
		metrics_header(b, "heureka_cache_build_tolerant_total",
		    "counter", "Application and VIP builds that, begun again "
		    "4 times, went on in slices through later changes "
		    "instead of again.");
		buf_addf(b, "heureka_cache_build_tolerant_total %llu\n",
		    (unsigned long long)cst->sb_tolerant);
	}
	if (d->reg != NULL) {
		buf_addf(b, "heureka_memory_bytes{part=\"watch\"} %zu\n",
		    registry_external_bytes(d->reg, REG_EXT_WATCH));
		buf_addf(b, "heureka_memory_bytes{part=\"heads\"} %zu\n",
		    registry_external_bytes(d->reg, REG_EXT_HEADS));
		registry_tombstone_counts(d->reg, &held, &unheld);
		metrics_header(b, "heureka_tombstones", "gauge",
		    "Tombstones of recent cancels: of instances held here, "
		    "and of instances never held (max-unknown-tombstones).");
		buf_addf(b, "heureka_tombstones{kind=\"held\"} %zu\n", held);
		buf_addf(b, "heureka_tombstones{kind=\"unknown\"} %zu\n",
		    unheld);
	}
	metrics_u64(b, "heureka_memory_budget_bytes", "gauge",
	    "The memory budget past which new registrations get 503.",
	    d->memory_budget);
}

/* The peer list itself: how many, and how it followed DNS. */
static void
metrics_render_peer_list(const struct peers *ps, struct buf *b)
{
	struct peers_totals	t;

	peers_totals(ps, &t);
	metrics_u64(b, "heureka_peers", "gauge",
	    "Peers now (one per address of a peer name).", peers_count(ps));
	metrics_u64(b, "heureka_peer_names_unresolved", "gauge",
	    "Configured peer URLs whose name does not resolve now.",
	    t.unresolved);
	metrics_u64(b, "heureka_peer_dns_lookups_total", "counter",
	    "Lookups of peer names.", t.dns_lookups);
	metrics_u64(b, "heureka_peer_dns_failures_total", "counter",
	    "Lookups of peer names that failed or gave no address.",
	    t.dns_failures);
	metrics_u64(b, "heureka_peers_joined_total", "counter",
	    "Peers that joined the list (a new address of a name).", t.added);
	metrics_u64(b, "heureka_peers_left_total", "counter",
	    "Peers that left the list (an address gone).", t.removed);
	metrics_u64(b, "heureka_peers_left_dropped_total", "counter",
	    "Replication tasks dropped with the queues of peers that left.",
	    t.removed_dropped);
}

/* Per-peer replication counters and queue depth. */
static void
metrics_render_peers(struct metrics *m, struct buf *b)
{
	const struct metrics_deps	*d = &m->d;
	static const struct {
		const char	*name;
		const char	*type;
		const char	*help;
	} fams[] = {
		{ "heureka_replication_batches_total", "counter",
		  "Replication batches sent to a peer." },
		{ "heureka_replication_items_total", "counter",
		  "Replication items sent to a peer." },
		{ "heureka_replication_failures_total", "counter",
		  "Replication requests to a peer that failed." },
		{ "heureka_replication_dropped_total", "counter",
		  "Replication items dropped (queue full or expired)." },
		{ "heureka_replication_queue_depth", "gauge",
		  "Replication items waiting for a peer." },
		{ "heureka_peer_up", "gauge",
		  "1 when the last request to a peer succeeded." },
	};
	struct peer_info	 pi;
	size_t			 npeers, f, i;
	uint64_t		 v;

	npeers = *d->peers != NULL ? peers_count(*d->peers) : 0;
	for (f = 0; f < sizeof fams / sizeof fams[0]; f++) {
		metrics_header(b, fams[f].name, fams[f].type, fams[f].help);
		for (i = 0; i < npeers; i++) {
			memset(&pi, 0, sizeof pi);
			peers_info(*d->peers, i, &pi);
			switch (f) {
			case 0:
				v = pi.batches_sent;
				break;
			case 1:
				v = pi.items_sent;
				break;
			case 2:
				v = pi.failures;
				break;
			case 3:
				v = pi.dropped;
				break;
			case 4:
				v = pi.queue_depth;
				break;
			default:
				v = pi.reachable ? 1 : 0;
				break;
			}
			buf_addf(b, "%s{peer=", fams[f].name);
			metrics_add_label(b, pi.url != NULL ? pi.url : "");
			buf_addf(b, "} %llu\n", (unsigned long long)v);
		}
	}
	metrics_render_peer_list(*d->peers, b);
}

#define METRICS_MAX_TABLES	8

/* The tables gathered for one scrape. */
struct metrics_tables {
	const char		*name[METRICS_MAX_TABLES];
	struct htab_stats	 st[METRICS_MAX_TABLES];
	size_t			 n;
};

/* registry_foreach_table callback: keep one table's figures. */
static void
metrics_table_cb(const char *name, const struct htab_stats *st, void *arg)
{
	struct metrics_tables	*t = arg;

	if (t->n == METRICS_MAX_TABLES)
		return;
	t->name[t->n] = name;
	t->st[t->n++] = *st;
}

/*
 * Every name-keyed hash table: buckets, entries and the longest chain. A
 * long chain under load means names collide (hash flooding); the keyed,
 * growing tables keep it at a handful.
 */
static void
metrics_render_tables(struct metrics *m, struct buf *b)
{
	const struct metrics_deps	*d = &m->d;
	static const struct {
		const char	*name;
		const char	*help;
		size_t		 off;
	} fams[] = {
		{ "heureka_hash_table_buckets", "Buckets of a hash table.",
		    offsetof(struct htab_stats, buckets) },
		{ "heureka_hash_table_entries", "Entries in a hash table.",
		    offsetof(struct htab_stats, entries) },
		{ "heureka_hash_table_longest_chain",
		    "Entries in the fullest bucket of a hash table.",
		    offsetof(struct htab_stats, longest) },
	};
	struct metrics_tables	 t;
	size_t			 f, i;

	t.n = 0;
	if (d->reg != NULL)
		registry_foreach_table(d->reg, metrics_table_cb, &t);
	if (d->cache != NULL && t.n < METRICS_MAX_TABLES) {
		cache_table_stats(d->cache, &t.st[t.n]);
		t.name[t.n++] = "cache_fragments";
	}
	for (f = 0; f < sizeof fams / sizeof fams[0]; f++) {
		metrics_header(b, fams[f].name, "gauge", fams[f].help);
		for (i = 0; i < t.n; i++)
			buf_addf(b, "%s{table=\"%s\"} %zu\n", fams[f].name,
			    t.name[i], *(const size_t *)(const void *)
			    ((const char *)&t.st[i] + fams[f].off));
	}
}

/*
 * The process collector every Prometheus client library exports, under
 * the same names, types and units (client_golang's and client_python's),
 * so the usual dashboards and alerts work unchanged.
 */
static void
metrics_render_process(struct buf *b)
{
	struct procstat	ps;

	if (procstat_read(&ps) != 0)
		return;
	metrics_header(b, "process_cpu_seconds_total", "counter",
	    "Total user and system CPU time spent in seconds.");
	buf_addf(b, "process_cpu_seconds_total %.2f\n", ps.cpu_seconds);
	metrics_u64(b, "process_resident_memory_bytes", "gauge",
	    "Resident memory size in bytes.", ps.rss_bytes);
	metrics_u64(b, "process_virtual_memory_bytes", "gauge",
	    "Virtual memory size in bytes.", ps.vsize_bytes);
	if (ps.open_fds >= 0) {
		metrics_header(b, "process_open_fds", "gauge",
		    "Number of open file descriptors.");
		buf_addf(b, "process_open_fds %lld\n",
		    (long long)ps.open_fds);
	}
	if (ps.max_fds >= 0) {
		metrics_header(b, "process_max_fds", "gauge",
		    "Maximum number of open file descriptors.");
		buf_addf(b, "process_max_fds %lld\n", (long long)ps.max_fds);
	}
	if (ps.start_time > 0) {
		metrics_header(b, "process_start_time_seconds", "gauge",
		    "Start time of the process since unix epoch in seconds.");
		buf_addf(b, "process_start_time_seconds %.2f\n",
		    ps.start_time);
	}
}

/*
 * Render the whole exposition into b, as of now (every figure is read at
 * scrape time; none of today's depends on the clock).
 */
void
metrics_render(struct metrics *m, struct buf *b, struct hk_time now)
{
	const struct metrics_deps	*d = &m->d;

	(void)now;
	metrics_header(b, "heureka_up", "gauge",
	    "1 while heurekad is running.");
	buf_adds(b, "heureka_up 1\n");
	metrics_header(b, "heureka_ready", "gauge",
	    "1 once the start-up registry sync is over.");
	buf_addf(b, "heureka_ready %d\n",
	    gate_is_ready(d->gate) && !gate_is_stopping(d->gate));
	metrics_header(b, "heureka_start_time_seconds", "gauge",
	    "Start time of heurekad since the Unix epoch.");
	buf_addf(b, "heureka_start_time_seconds %.3f\n",
	    (double)gate_started(d->gate).wall_ms / 1000.0);
	metrics_header(b, "heureka_build_info", "gauge",
	    "Always 1; the labels say which heurekad runs.");
	buf_adds(b, "heureka_build_info{version=");
	metrics_add_label(b, PACKAGE_VERSION);
	buf_adds(b, ",revision=");
	metrics_add_label(b, HK_REVISION);
	buf_adds(b, "} 1\n");
	metrics_render_process(b);
	metrics_header(b, "heureka_open_connections", "gauge",
	    "Client connections currently open.");
	buf_addf(b, "heureka_open_connections %u\n", *d->open_connections);
	metrics_u64(b, "heureka_bugs_total", "counter",
	    "Broken internal invariants (HK_BUG) since the start; each site "
	    "is logged once. Anything above 0 is a heureka bug to report.",
	    bug_count());

	metrics_render_looplag(d->looplag, b);
	metrics_render_registry(m, b);
	metrics_render_instances(m, b);
	metrics_render_limits(m, b);
	metrics_render_peers(m, b);
	metrics_render_console(m, b);
	metrics_render_tables(m, b);
	if (m != NULL)
		metrics_render_http(m, b);
}
