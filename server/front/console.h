/*
 * console.h: the operator's console glue (docs/console.md): the audit
 * and the doctor wired to the registry, the requests and the peer list.
 * A registry observer turns every change into an audit record (and its
 * JSON line when heureka.audit.file is set) and hands registrations to
 * the doctor; rest.c says who is acting for each request
 * (console_enter/_leave); server.c runs the doctor's scan on a timer.
 * GET {base}heureka/audit and heureka/doctor are answered here.
 */
#ifndef CONSOLE_H
#define CONSOLE_H

struct hquery;

#include "clock.h"

struct audit;
struct auditfile;
struct doctor;
struct hreq;
struct peers;
struct registry;
struct console;

/* What the console uses, borrowed (they outlive it). */
struct console_deps {
	struct registry		*reg;
	struct audit		*audit;
	struct doctor		*doctor;
	struct auditfile	*file;		/* NULL: no file */
	struct peers		*peers;		/* NULL: none */
	const char		*node;		/* "host:port" */
	const char		*hostname;	/* this node's host name */
	const char		*appname;	/* its own application
						   (eureka.instance.appname;
						   NULL: HEUREKA), copied */
};

/* Observe the registry; console_free stops observing nothing (the
 * registry goes first at exit). */
struct console	*console_new(const struct console_deps *);
void		 console_free(struct console *);	/* NULL is fine */

/*
 * A request begins: who is acting (user as access_check_user says;
 * replicated: a peer's batch or replicated call). console_leave ends it.
 */
void		 console_enter(struct console *, struct hreq *,
		     const char *user, int replicated);
void		 console_leave(struct console *);

/*
 * GET {base}heureka/audit[?app=&id=&since=&limit=] and heureka/doctor:
 * 1 when rest (the path after "heureka/") is one of them and the reply
 * was sent, else 0.
 */
int		 console_http(struct console *, struct hreq *,
		     const char *rest, const struct hquery *query,
		     struct hk_time now);

/*
 * A client's registration refused for a lastDirtyTimestamp too far ahead
 * (eureka.server.max-clock-skew-ms): the doctor's clock-skew sees it.
 */
void		 console_refused_future(struct console *, const char *app,
		     const char *id, int64_t client_ts, struct hk_time now);

/* One doctor scan: leases, peers, self-preservation. */
void		 console_scan(struct console *, struct hk_time now);
/*
 * The same a slice at a time (a bounded number of leases a call); 1 when
 * the scan is complete, 0 when the next call goes on.
 */
int		 console_scan_step(struct console *, struct hk_time now);

#endif
