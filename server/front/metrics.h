/*
 * metrics.h: counters and histograms for /metrics (Prometheus text
 * exposition), fed by rest.c for HTTP and read from the registry and peers
 * for the rest at scrape time.
 */
#ifndef METRICS_H
#define METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "clock.h"

struct buf;
struct audit;
struct cache;
struct doctor;
struct config;
struct gate;
struct looplag;
struct metrics;
struct peers;
struct registry;

/* What a scrape reads, borrowed from their owners (they outlive it). */
struct metrics_deps {
	struct registry		*reg;
	struct cache		*cache;
	const struct gate	*gate;		/* ready, start time */
	const struct config	*conf;		/* max-metric-applications */
	struct peers *const	*peers;		/* *peers: NULL until listening */
	const struct looplag	*looplag;
	const unsigned		*open_connections;
	size_t			 memory_budget;	/* resolved max-memory-bytes */
	struct doctor *const	*doctor;	/* NULL or *NULL: none */
	struct audit *const	*audit;		/* NULL or *NULL: none */
};

struct metrics	*metrics_new(const struct metrics_deps *);
void		 metrics_free(struct metrics *);
/* One HTTP request served: route is a fixed label such as "apps". */
void		 metrics_http(struct metrics *, const char *route, int status,
		     int64_t usec);
/*
 * Limits counted here (those the registry refuses are read from its
 * stats): each hit is one heureka_limit_rejections_total{limit=...}.
 */
enum metrics_limit {
	METRICS_LIMIT_REGISTER_RATE = 0,	/* 429 per client address */
	METRICS_LIMIT_METADATA,			/* key or value too long */
	METRICS_LIMIT_METRIC_APPS,		/* apps folded into "other" */
	METRICS_LIMIT_BODY,			/* body refused at its head */
	METRICS_LIMIT_BATCH,			/* batch refused at its head */
	METRICS_LIMIT_INSTANCES,		/* registry full: 503 */
	METRICS_LIMIT_METADATA_ENTRIES,		/* too many metadata entries */
	METRICS_LIMIT_CONNECTIONS,		/* closed past the cap */
	METRICS_LIMIT_FETCH_MEMORY,		/* no room to encode: 503 */
	METRICS_LIMIT_AUTH_RATE,		/* 429: failed authentications */
	METRICS_LIMIT_DESCRIPTORS,		/* closed: descriptor reserve */
	METRICS_LIMIT_HANDSHAKE_TIMEOUT,	/* TLS handshake too slow */
	METRICS_LIMIT_HEAD_TIMEOUT,		/* request head too slow */
	METRICS_LIMIT_HEAD_MEMORY,		/* closed: heads past budget */
};
#define METRICS_NLIMITS	14
void		 metrics_limit(struct metrics *, enum metrics_limit,
		     uint64_t n);
uint64_t	 metrics_limit_count(const struct metrics *,
		     enum metrics_limit);

/* Render the whole exposition as of now. */
void		 metrics_render(struct metrics *, struct buf *, struct hk_time now);

#endif
