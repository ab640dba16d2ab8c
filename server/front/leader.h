/*
 * leader.h: one leader per application (docs/api.md, "Watch and leader").
 *
 * The leader is computed from the replicated copies every peer holds, so
 * converged peers agree (the watch keeps it between events, as the same
 * rule would compute it). Among the visible UP instances of
 * an app, a pinned one wins (the newest pin, then the smallest id); else
 * the one with the oldest registrationTimestamp as the origin stamped it
 * (replication carries it unchanged), the smallest instance id breaking
 * ties. A pin is the reserved metadata key LEADER_PIN_KEY on the instance,
 * holding the origin's wall-clock ms of the pin ("" once released): it
 * replicates as a metadata update and anti-entropy repairs it like any
 * other metadata.
 */
#ifndef LEADER_H
#define LEADER_H

struct hquery;
struct hreq;

#include <stdint.h>

#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "clock.h"
#include "instance.h"
#include "registry.h"

#define LEADER_PIN_KEY	INSTANCE_LEADER_PIN_KEY

struct gate;

/* The leader of app (NULL if none); borrowed, as registry lookups. */
const struct instance *leader_find(struct registry *, const char *app,
		     int64_t mono);
/* The same for an app already found (the watch has it); NULL: none. */
const struct instance *leader_find_app(struct registry *, struct reg_app *,
		     int64_t mono);

/*
 * The leader of one app kept from event to event, so that the watch ranks
 * an app's instances only now and then instead of on every change: the
 * best LEADER_TRACK_TOP contenders (visible UP instances) are kept in rank
 * order, each event takes its instance out and puts it back by its rank
 * now, and the first kept one leads while its lease is known to live. The
 * app is ranked afresh when none is kept (and others contend), when the
 * first one's lease is past the deadline last read, when expiration is
 * switched, when the clock went back, and after a renewal that revived an
 * expired lease. At every update it names what leader_find_app would
 * (check_leader proves it).
 */
#define LEADER_TRACK_TOP	16

/* One kept contender, as the rule ranks it. */
struct leader_rank {
	char		*id;
	int64_t		 pin;		/* pin stamp, 0: none */
	int64_t		 reg_ts;	/* registrationTimestamp */
	int64_t		 deadline;	/* its lease lives at least until */
};

struct leader_track {
	char			*id;		/* the leader; NULL: none */
	struct leader_rank	*top;		/* best first */
	size_t			 n, cap;
	int			 complete;	/* every contender is kept */
	int64_t			 mono;		/* the latest event time seen */
	int			 hide;		/* expiration enabled then */
	int			 valid;		/* 0: rank the app afresh */
};

/* Forget the leader (the track may be reused or freed after). */
void		 leader_track_clear(struct leader_track *);
/*
 * An event of the track's app that the caller does not check (a
 * heartbeat or a status update that changed nothing): note what it may
 * change without computing anything.
 */
void		 leader_track_note(struct leader_track *,
		     const struct registry_event *);
/*
 * Bring the track to the leader of a (NULL: the app is gone) after ev, an
 * event of that app: 1 when the leader is another than before (or none
 * now), 0 when it is the same.
 */
int		 leader_track_update(struct leader_track *, struct registry *,
		     struct reg_app *, const struct registry_event *);
/*
 * The tracked leader's instance right after the update for ev (borrowed;
 * NULL: none): ev's own, or a lookup, so ask only when it is needed.
 */
const struct instance *leader_track_leader(const struct leader_track *,
		     struct registry *, const struct registry_event *);

/*
 * GET, PUT ?id=ID and DELETE on {base}heureka/apps/{app}/leader; app is
 * the path segment as the router decoded it (rest.c routes here). Reads
 * wait for the gate. Replies exactly once.
 */
void		 leader_http(struct registry *, const struct gate *,
		     struct hreq *, const char *app,
		     const struct hquery *query, struct hk_time now);

#endif
