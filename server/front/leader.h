/*
 * leader.h: one leader per application (README, "Watch and leader").
 *
 * The leader is computed, never stored: from the replicated copies every
 * peer holds, so converged peers agree. Among the visible UP instances of
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
 * GET, PUT ?id=ID and DELETE on apps/{app}/leader (rel is the path after
 * {base}heureka/); reads wait for the gate. Returns 1 when it replied,
 * 0 when rel is not its.
 */
int		 leader_http(struct registry *, const struct gate *,
		     struct evhttp_request *, const char *rel,
		     const struct evkeyvalq *query, struct hk_time now);

#endif
