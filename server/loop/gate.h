/*
 * gate.h: whether heurekad serves, and who hears when that changes.
 *
 * One small object replaces the readiness flags that used to live in both
 * the server and the peers: the start-up sync (or its giving up) opens the
 * gate once; reads of the registry (apps, delta, app, vips) are allowed
 * once it is open, or once the empty-sync wait has passed (spec §6.4,
 * shouldAllowAccess with waitTimeInMsWhenSyncEmpty); shutdown closes it
 * for good. Observers hear each transition (the server turns it into
 * sd_notify, the registry's open-for-traffic and a log line).
 *
 * No libevent and no clock reads: every time comes in as a parameter.
 * Modules that only ask get a `const struct gate *`; only the start-up sync
 * and the server's shutdown change it.
 */
#ifndef GATE_H
#define GATE_H

#include <stdint.h>

#include "clock.h"

struct gate;

enum gate_state {
	GATE_STARTING = 0,	/* syncing from peers */
	GATE_READY,		/* synced, or given up: open */
	GATE_STOPPING,		/* shutting down: /health DOWN */
};

/*
 * Told of every transition. `count` is the number of instances the
 * start-up sync copied (GATE_READY only, else 0); `now` the caller's.
 */
struct gate_observer {
	void	(*cb)(enum gate_state, int count, struct hk_time now,
		    void *arg);
	void	 *arg;
};

/* A gate started at `start` (wall and monotonic). Never NULL. */
struct gate	*gate_new(struct hk_time start);
void		 gate_free(struct gate *);	/* NULL is fine */
/* Add an observer; at most GATE_MAX_OBSERVERS. */
#define GATE_MAX_OBSERVERS	4
void		 gate_observe(struct gate *, const struct gate_observer *);

/* Reads are allowed from `mono` on even before the gate opens. */
void		 gate_allow_reads_at(struct gate *, int64_t mono);
/* Open (once; later calls are ignored): the sync copied `count`. */
void		 gate_set_ready(struct gate *, int count, struct hk_time now);
/* Close for good (once). */
void		 gate_set_stopping(struct gate *, struct hk_time now);

enum gate_state	 gate_state(const struct gate *);
int		 gate_is_ready(const struct gate *);	/* opened, even if
							   now stopping */
int		 gate_is_stopping(const struct gate *);
/* May the registry be read at `mono` (§6.4)? */
int		 gate_allow_read(const struct gate *, int64_t mono);
/* When the server started: wall clock for the wire, mono for uptime. */
struct hk_time	 gate_started(const struct gate *);
/* The instance count the start-up sync reported (0 before ready). */
int		 gate_sync_count(const struct gate *);

#endif
