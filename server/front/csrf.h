/*
 * csrf.h: dashboard actions are protected against cross-site requests
 * (docs/console.md). The dashboard's page gets a token bound to it: an
 * HMAC-SHA256 of a per-process secret and the request's credentials
 * (its Authorization header, or "-" without one), sent back in the
 * X-Heureka-Token header with every action.
 *
 * The rule, for writes only (any method but GET, HEAD and OPTIONS): a
 * request that comes from a browser, that is one with an Origin, a
 * Sec-Fetch-Site, a Referer or an X-Heureka-Token header (csrf.c says
 * why not a Cookie), must carry the right
 * token, and its Origin (else its Referer) must name this server's Host
 * and Sec-Fetch-Site, when sent, must be "same-origin"; else 403 with the
 * reason. With authentication off, browser writes are refused unless
 * heureka.dashboard.actions is true. A request with none of those
 * headers (curl, every Eureka client and peer) is judged as before.
 */
#ifndef CSRF_H
#define CSRF_H

#include <stddef.h>

struct hreq;
struct csrf;

#define CSRF_TOKEN_LEN	32	/* hex characters */

struct csrf	*csrf_new(void);		/* a fresh random secret */
void		 csrf_free(struct csrf *);	/* NULL is fine */
/* The token for req's credentials, CSRF_TOKEN_LEN + 1 bytes into out. */
void		 csrf_token(const struct csrf *, struct hreq *,
		     char *out);
/* Whether req comes from a browser (the headers above). */
int		 csrf_is_browser(struct hreq *);
/*
 * Judge a write: 0 when it may go on, else -1 with *reason set (a
 * static string) for the 403. actions: dashboard actions are on.
 */
int		 csrf_check(const struct csrf *, struct hreq *,
		     int actions, const char **reason);

#endif
