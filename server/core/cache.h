/*
 * cache.h: the response cache (design.md, spec §5.12). Encoded bodies keyed
 * by (resource, format, full/compact, gzip), built once per change and
 * handed out as refcounted immutable bodies made of shared segments, which
 * the front end sends without copying (rest.c hands each segment to
 * evbuffer_add_reference; this layer knows no libevent). Full registries
 * are stitched from per-application fragments, so a change re-encodes only
 * its application; gzip bodies are stitched from sync-flushed deflate
 * fragments joined with crc32_combine. A full body that needs much
 * encoding can be built in slices (cache_apps_step) so that the event
 * loop is never held for long. Heartbeats never invalidate (as
 * Eureka), so the lease timestamps in a body are those of the
 * application's last change; only with the read-only layer on does a body
 * also expire after the auto-expiration time, as Eureka's read-write cache.
 */
#ifndef CACHE_H
#define CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "registry.h"

struct cache;
struct cache_body;
struct cache_seg;

enum cache_format {
	CACHE_JSON = 0,
	CACHE_XML,
};

struct cache_key {
	enum cache_format	 format;
	int			 compact;
	int			 gzip;
};

struct cache_stats {
	uint64_t	fragment_encodes;	/* per-app re-encodes */
	uint64_t	full_builds;		/* stitched full bodies */
	uint64_t	gz_chunk_builds;	/* gzip chunks copied */
	uint64_t	build_steps;		/* cache_apps_step() slices */
	uint64_t	build_aborts;		/* assemblies begun again */
	uint64_t	sb_restarts;		/* side builds begun again */
	uint64_t	sb_tolerant;		/* app, VIP builds past MAX_TRIES */
	uint64_t	asm_apps;		/* applications they placed */
	uint64_t	seg_reuses;		/* segments taken over */
	uint64_t	ro_steps;		/* cache_refresh_step() slices */
	uint64_t	ro_refreshes;		/* read-only passes completed */
	uint64_t	delta_builds;
	uint64_t	plain_drops;		/* plain_idle drops */
	uint64_t	hits;
	size_t		bytes;			/* bytes held, approx. */
};

/*
 * read_only_ms > 0 keeps Eureka's read-only layer: bodies are served from
 * a snapshot refreshed every read_only_ms, and expire_ms re-encodes
 * fragments older than that (Eureka: 180 s); without it nothing expires.
 */
struct cache	*cache_new(struct registry *, int64_t read_only_ms,
		     int64_t expire_ms);
void		 cache_free(struct cache *);
/*
 * Keep a plain variant's per-application fragments (and its full body)
 * only while GET apps is asked for it plain at least every idle_ms: a
 * gzip build of a variant idle plain deflates from a scratch encode and
 * keeps none, and drops those kept from before; a plain fetch after that
 * builds them again (cache_apps_step, in slices). The read-only layer
 * drops a plain full snapshot idle so at its refresh instead of
 * rebuilding it. Bodies are the same bytes either way. 0 (the default):
 * always kept.
 */
void		 cache_set_plain_idle(struct cache *, int64_t idle_ms);

/*
 * Bodies; the caller owns one reference and must cache_body_unref() it.
 * cache_app returns NULL when the app has no instances.
 */
struct cache_body *cache_apps(struct cache *, const struct cache_key *,
		     int64_t now);
struct cache_body *cache_delta(struct cache *, const struct cache_key *,
		     int64_t now);
struct cache_body *cache_app(struct cache *, const struct cache_key *,
		     const char *app, int64_t now);
struct cache_body *cache_vip(struct cache *, const struct cache_key *,
		     const char *vip, int secure, int64_t now);
/*
 * Incremental full builds, so that no fetch stalls the loop on a
 * from-scratch encode (the first fetch of a variant, or after many
 * changes): one slice of the work of cache_apps(k), at most about budget
 * units of work (a byte of JSON or XML encoded is 1, a byte deflated 3
 * more, an application looked at or placed in the body a few hundred, a
 * byte of a gzip chunk copied 1; one application, or one gzip chunk of
 * ~32, is never split, so a slice may pass the budget by that much). 1
 * when cache_apps(k) now returns a current body without encoding (call it
 * before control returns to the loop), 0 when more slices are needed.
 * Callers for the same key share one build. The missing fragments are
 * prepared first, then the body is assembled by a walk of the registry
 * that keeps its place between slices. The body holds one registry
 * version, its apps hash code exactly that of its contents: a change to
 * an application the walk has not reached yet is simply in the body, one
 * to an application it has placed (or a dropped one, whose place the
 * registry's last application takes) starts the walk again, and after a
 * few such new starts the walk runs whole, so a build always ends. The
 * opening piece, which carries the hash code, is made when the walk ends.
 * budget 0: no bound.
 */
int		 cache_apps_step(struct cache *, const struct cache_key *,
		     size_t budget, int64_t now);
/* The resources a body is built for (cache_step, cache_res_body). */
enum cache_res {
	CACHE_RES_APPS = 0,	/* GET apps */
	CACHE_RES_DELTA,	/* GET apps/delta */
	CACHE_RES_APP,		/* GET apps/{name} */
	CACHE_RES_VIP,		/* GET vips/{name} */
	CACHE_RES_SVIP,		/* GET svips/{name} */
};
/*
 * cache_apps_step for any resource (name: the application or VIP, else
 * NULL): one slice of its body's build, at most about budget units of
 * encoding, 1 when cache_res_body(res) now returns a current body without
 * encoding (call it before control returns to the loop). The delta, one
 * application and a VIP are encoded by a walk that keeps its place
 * between slices (one instance is never split) and begins again when
 * what it reads moved meanwhile (the delta queue, that application, the
 * registry), so a body holds one registry version; their gzip bodies
 * deflate the plain ones a slice at a time. After a few such new
 * beginnings a build runs whole, so it always ends. The bytes are those
 * of the one-call builds. budget 0: no bound.
 */
int		 cache_step(struct cache *, enum cache_res,
		     const struct cache_key *, const char *name,
		     size_t budget, int64_t now);
struct cache_body *cache_res_body(struct cache *, enum cache_res,
		     const struct cache_key *, const char *name, int64_t now);
/*
 * Whether res's body is current, so that cache_step would return 1
 * without encoding anything (the caller may refuse a fetch that needs
 * encoding, but serves one that does not).
 */
int		 cache_ready(struct cache *, enum cache_res,
		     const struct cache_key *, const char *name, int64_t now);
/*
 * Give up the build under way of res's body (the caller refuses the fetch:
 * the memory budget has no room for it); what it had encoded for the
 * body alone goes, fragments of the full registry stay (counted).
 */
void		 cache_abandon(struct cache *, enum cache_res,
		     const struct cache_key *, const char *name);
/*
 * The read-only layer's refresh in slices, so that no refresh holds the
 * loop for a whole-registry encode: one slice of a pass that replaces
 * every snapshot the layer holds with a body built now from the
 * read-write layer, at most about budget units of encoding (as
 * cache_step: every body is built in its slices).
 * A call when no pass is under way starts one. Until its new body is
 * whole, each snapshot keeps being served; then it is swapped in, in one
 * call, so a reader gets the old body or the new one, never a part. 1
 * when the pass is complete, 0 when more slices are needed (call again on
 * a later loop turn). budget 0: no bound.
 */
int		 cache_refresh_step(struct cache *, size_t budget, int64_t now);
/* A whole refresh pass in one call (any pass under way starts over). */
void		 cache_refresh_read_only(struct cache *, int64_t now);
const struct cache_stats *cache_stats(const struct cache *);
/*
 * Bytes of the encoded bodies alive (cached or in flight) and of the
 * builds under way, for the registry's memory budget.
 */
size_t		 cache_bytes(const struct cache *);
struct htab_stats;
void		 cache_table_stats(struct cache *, struct htab_stats *);

size_t		 cache_body_len(const struct cache_body *);
void		 cache_body_unref(struct cache_body *);
/*
 * Zero-copy sending: fn gets each non-empty segment of the body in order,
 * its bytes and a new reference to it, which fn owns whatever it does:
 * cache_seg_unref() releases it once the bytes are no longer needed (when
 * they are written out, for a send by reference). The bytes stay valid
 * and unchanged while the reference lives, even after the body is gone.
 * The caller keeps its own reference to the body.
 */
void		 cache_body_foreach_seg(const struct cache_body *,
		     void (*fn)(struct cache_seg *, const char *data,
		     size_t len, void *arg), void *arg);
void		 cache_seg_unref(struct cache_seg *);
/*
 * Dead blobs of 16 MiB or more are freed a piece at a time: give back at
 * most max bytes of the cache's (the loop calls this once a turn; freeing
 * a gigabyte at once is a 100 ms stall); 1 while some remain. cache_bytes
 * counts them until they are gone. Once the cache is freed, its blobs
 * still in flight go at once when their last reference does.
 */
#define CACHE_REAP_BYTES	(64 * 1024 * 1024)	/* per loop turn */
int		 cache_reap(struct cache *, size_t max);
/*
 * A cache's byte count and reaper outlive it while bodies it made are in
 * flight: hold a reference to read cache_reaper_bytes() after
 * cache_free() (tests), release it when done.
 */
struct cache_reaper *cache_reaper_hold(struct cache *);
size_t		 cache_reaper_bytes(const struct cache_reaper *);
void		 cache_reaper_release(struct cache_reaper *);
/* Copy the whole body out (tests). Caller frees. */
char		*cache_body_copy(const struct cache_body *, size_t *);

/*
 * Walk the cache and verify what it can see of its counts and indexes:
 * the fragment table against its records (each found under its hash,
 * with its cache's reaper), each record's plain fragments inside their
 * blobs and at their place in their run, a blob's live bytes equal to
 * its records' fragments and its references at least their holds, every
 * body the cache keeps (slots, per-app roots, VIP and read-only entries)
 * with a length its segments' and each segment inside a live blob, the
 * side lists against their counts and bound, the gzip chunks' blobs,
 * and the reaper (held, its dead list ending at its tail, with no
 * references). 0 when all holds; -1 and *cause (caller frees). The unit
 * tests and fuzz targets run it after every operation (bug.h).
 */
int		 cache_check(const struct cache *, char **cause);

#endif
