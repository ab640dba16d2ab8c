/*
 * dashboard.h: the operator's HTML page (default at /), /lastn, its JSON
 * feed, and the operations endpoints (/health, /metrics, /info). The
 * HTML, CSS and JS are embedded at build time (dashboard_assets.c).
 */
#ifndef DASHBOARD_H
#define DASHBOARD_H

struct server;
struct evhttp_request;

/*
 * Serve path if it belongs to the dashboard or the operations endpoints;
 * returns 1 when it replied, 0 when the path is not ours (rest.c goes on).
 */
int	dashboard_handle(struct server *, struct evhttp_request *,
	    const char *path);

/*
 * GET {version}/status (spec §10.4): Eureka's StatusInfo, as XML (root
 * com.netflix.eureka.util.StatusInfo) or, when json != 0, as a JSON object
 * (Eureka answers 500 there; we do not). Replies exactly once.
 */
void	dashboard_status_info(struct server *, struct evhttp_request *,
	    int json);

/*
 * Feed the dashboard history (history.c) from the registry's counters and
 * the peers' state; takes a sample when one is due at now (wall ms).
 */
void	dashboard_history_tick(struct server *, int64_t now);

#endif
