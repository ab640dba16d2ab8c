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

#endif
