/*
 * ops.h: the operations endpoints, outside the Eureka bases: /health with
 * its readiness and liveness forms (under /actuator too), /info
 * (/actuator/info), /metrics (/actuator/prometheus; metrics.c renders it),
 * and Eureka's StatusInfo for GET {version}/status (§10.4), whose figures
 * and self-description the dashboard shows as well.
 */
#ifndef OPS_H
#define OPS_H

#include <stddef.h>
#include <stdint.h>

#include "clock.h"

struct config;
struct hreq;
struct gate;
struct instance;
struct metrics;
struct ops;
struct peers;

/* What the operations endpoints use (borrowed; they outlive the ops). */
struct ops_deps {
	const struct gate	*gate;		/* up, ready, stopping, start */
	const struct config	*conf;
	struct metrics		*metrics;	/* /metrics */
	struct peers *const	*peers;		/* *peers: NULL until listening */
	const char		*hostname;	/* gethostname() */
	const int		*port;		/* bound port, once listening */
};

struct ops	*ops_new(const struct ops_deps *);
void		 ops_free(struct ops *);	/* NULL is fine */

/*
 * Serve path if it is an operations endpoint; returns 1 when it replied,
 * 0 when the path is not ours (the dashboard may have it).
 */
int		 ops_handle(struct ops *, struct hreq *,
		     const char *path, struct hk_time now);
/*
 * Whether path is one of the health probes ops_handle() answers (open to
 * every caller, README "Security"): the router takes a target's role from
 * this, the same reading of the path that ops_handle() dispatches on.
 */
int		 ops_is_probe(const char *path);

/*
 * GET {version}/status: StatusInfo as XML (root
 * com.netflix.eureka.util.StatusInfo) or, when json != 0, as a JSON object
 * (Eureka answers 500 there; we do not). Replies exactly once.
 */
void		 ops_status_info(struct ops *, struct hreq *,
		     int json, struct hk_time now);

/*
 * StatusInfo's general stats (the first OPS_GENERAL_STATS) and application
 * stats, as strings in Eureka's order and wording.
 */
#define OPS_NSTATS		8
#define OPS_GENERAL_STATS	5
struct ops_stats {
	const char	*key[OPS_NSTATS];
	char		*value[OPS_NSTATS];
	size_t		 n;
};
void		 ops_stats_fill(struct ops *, struct hk_time now,
		     struct ops_stats *);
void		 ops_stats_clear(struct ops_stats *);
/* This server described as an instance (a new one, the caller frees). */
struct instance	*ops_self_instance(struct ops *);

/* Eureka's uptime since the start, "[N day|N days ]HH:MM", into out. */
void		 ops_uptime(struct ops *, struct hk_time now, char *out,
		     size_t len);
/* ms since the epoch as ISO 8601 UTC; "-" for 0 (never). */
void		 ops_time_iso(int64_t ms, char *out, size_t len);

#endif
