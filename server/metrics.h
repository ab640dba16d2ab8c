/*
 * metrics.h: counters and histograms for /metrics (Prometheus text
 * exposition), fed by rest.c for HTTP and read from the registry and peers
 * for the rest at scrape time.
 */
#ifndef METRICS_H
#define METRICS_H

#include <stdint.h>

struct server;
struct buf;
struct metrics;

struct metrics	*metrics_new(void);
void		 metrics_free(struct metrics *);
/* One HTTP request served: route is a fixed label such as "apps". */
void		 metrics_http(struct metrics *, const char *route, int status,
		     int64_t usec);
/* Render the whole exposition. */
void		 metrics_render(struct metrics *, struct server *, struct buf *);

#endif
