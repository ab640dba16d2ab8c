/*
 * dashboard.h: the operator's HTML page (default at /), /lastn, the JSON
 * feed the page refreshes from, and the history its charts draw (sampled
 * by dashboard_history_tick()). The HTML, CSS and JS are embedded at build
 * time (dashboard_assets.c). The operations endpoints are ops.h's.
 */
#ifndef DASHBOARD_H
#define DASHBOARD_H

#include "clock.h"

struct access;
struct config;
struct csrf;
struct doctor;
struct dashboard;
struct hreq;
struct gate;
struct history;
struct ops;
struct peers;
struct registry;

/* What the dashboard shows, borrowed from their owners (they outlive it). */
struct dashboard_deps {
	struct registry		*reg;
	const struct gate	*gate;		/* ready, stopping, reads, start */
	const struct config	*conf;		/* eureka.dashboard.*, labels */
	struct peers *const	*peers;		/* *peers: NULL until listening */
	struct ops		*ops;		/* StatusInfo figures, self */
	const struct access	*access;	/* actions with authentication */
	const struct csrf	*csrf;		/* the page's action token */
	const struct doctor	*doctor;	/* findings shown */
};

/* A dashboard with an empty history (heureka.dashboard.history-interval-ms). */
struct dashboard *dashboard_new(const struct dashboard_deps *);
void		 dashboard_free(struct dashboard *);	/* NULL is fine */

/*
 * Serve path if it belongs to the dashboard (when enabled, under
 * eureka.dashboard.path); returns 1 when it replied, 0 when the path is
 * not ours (rest.c goes on).
 */
int		 dashboard_handle(struct dashboard *, struct hreq *,
		     const char *path, struct hk_time now);

/*
 * Feed the history ring from the registry's counters and the peers'
 * state; takes a sample when one is due at now.
 */
void		 dashboard_history_tick(struct dashboard *, struct hk_time now);
/* The ring the charts draw, as history.json serves it (read-only). */
const struct history *dashboard_history(const struct dashboard *);

#endif
