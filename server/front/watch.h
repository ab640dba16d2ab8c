/*
 * watch.h: the watch stream, GET {base}heureka/watch[?app=APP], as
 * Server-Sent Events (docs/api.md, "Watch and leader").
 *
 * A registry observer turns every change (local or replicated; not
 * heartbeats) into one event, `event: ADDED|MODIFIED|DELETED|LEADER`,
 * `id:` the watch version after it, `data:` the instance as JSON. The last
 * heureka.watch.window events are kept so that a Last-Event-ID inside the
 * window resumes with exactly the missed events; otherwise a stream starts
 * with a snapshot (ADDED per instance, LEADER per app, then SYNCED). With
 * no watcher connected, once no id a stream carried can be in the window,
 * no event is framed or kept at all (watch.c: the ring is dormant).
 * Versions start at the start time in microseconds and step by one per
 * event, so an id from an earlier process is never taken for a recent one.
 *
 * Every watcher's unsent bytes are bounded, the kernel's unacknowledged
 * ones included: an event that would pass heureka.watch.max-buffer-bytes,
 * or bytes nobody reads for heureka.watch.stall-timeout-ms, end the
 * stream with `event: RESET` and a close, so a slow reader never holds
 * the loop, memory or anybody else. A snapshot is sent a piece at a time
 * while the reader keeps up, from encodings shared by every watcher; the
 * work of snapshots and fan-out is bounded per loop turn
 * (heureka.watch.slice-bytes). The number of watchers is capped (503).
 */
#ifndef WATCH_H
#define WATCH_H

struct hconn;
struct hquery;
struct hreq;

#include <stddef.h>
#include <stdint.h>

#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "clock.h"

struct config;
struct event_base;
struct gate;
struct registry;
struct watch;

/* What a watch uses (borrowed; they outlive it). */
struct watch_deps {
	struct event_base	*base;		/* keep-alive and close timers */
	struct registry		*reg;		/* observed, read for snapshots */
	const struct gate	*gate;		/* reads allowed, stopping, start */
	const struct config	*conf;		/* heureka.watch.* */
};

struct watch_stats {
	uint64_t	events;		/* events made */
	uint64_t	frames;		/* ... of which formatted (a watcher
					   was or may resume) */
	uint64_t	streams;	/* streams opened */
	uint64_t	resumed;	/* ... of which resumed, no snapshot */
	uint64_t	resets;		/* watchers cut off (RESET) */
	uint64_t	stalls;		/* ... of which for not reading */
	size_t		bytes;		/* frames and pieces alive */
	uint64_t	refused;	/* 503 at the cap */
	size_t		watchers;	/* open now */
	uint64_t	version;	/* the last event's id */
};

/* Observe deps->reg; the keep-alive timer runs on deps->base. */
struct watch	*watch_new(const struct watch_deps *);
/* Close every stream and free (NULL is fine). */
void		 watch_free(struct watch *);
/* A connection is being freed (server.c's close callback). */
void		 watch_conn_closed(struct watch *, struct hconn *);
/* End every stream (shutdown). */
void		 watch_close_all(struct watch *);
/* A last SHUTDOWN event and a clean end for every stream (draining). */
void		 watch_drain(struct watch *);
/*
 * Serve rel, "watch" or "watch/stats" (rest.c's route table reaches it
 * under {base}heureka/); returns the route label it served under, NULL
 * when rel is not its.
 */
const char	*watch_http(struct watch *, struct hreq *,
		     const char *rel, const struct hquery *query,
		     struct hk_time now);
const struct watch_stats *watch_stats(const struct watch *);
/*
 * Open streams covering app that have not written out every event up to
 * `version` (a watch_stats version) yet: the drain barrier's watchers.
 */
size_t		 watch_unsent(const struct watch *, const char *app,
		     uint64_t version);

#endif
