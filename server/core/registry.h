/*
 * registry.h: the lease table (spec §5). app name -> instance id -> lease,
 * the status-override map, the recently-changed queue for deltas, the
 * last-1000 registered/cancelled rings; eviction and self-preservation
 * through evict.c, which holds their policy.
 *
 * A plain data structure: no libevent, no I/O, no clock reads. Every call
 * takes the time so tests drive it by hand: calls that stamp wire values
 * take a struct hk_time (both clocks); calls that only measure durations
 * take `mono`, monotonic ms. Leases, eviction, retention, override expiry
 * and tombstone lifetime never look at the wall clock.
 *
 * Which copy wins (docs/cluster.md): every decision compares times the
 * origin stamped and replication carries unchanged: lastDirtyTimestamp,
 * then lastUpdatedTimestamp (stamped by the node that took the change from
 * a client or operator, kept as carried by replicated registrations and
 * status changes), then the copy hash as a tie-break. A cancel leaves a
 * tombstone stamped with max(the cancelled copy's lastDirtyTimestamp, the
 * origin's wall clock) -- carried as a replicated Cancel's
 * lastDirtyTimestamp -- also when the instance is unknown; a replicated
 * Register whose lastDirtyTimestamp is not newer is refused.
 *
 * Ownership: registry_register() owns `inst` from the call on, success or
 * not. Every const struct instance * returned is borrowed and valid until
 * the next mutating call. Observers are told about every change after it
 * is applied.
 *
 * App names are matched ignoring case (they are stored upper case); ids
 * are case-sensitive. An app whose last lease goes is dropped, so app
 * pointers and indexes are also valid only until the next mutating call.
 */
#ifndef REGISTRY_H
#define REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#include "clock.h"
#include "instance.h"

struct registry;
struct reg_app;

struct registry_conf {
	int	 self_preservation;		/* enableSelfPreservation */
	double	 renewal_percent_threshold;	/* 0.85 */
	int	 expected_client_renewal_interval_secs;	/* 30 */
	int	 expected_initial;		/* Spring: 1 */
	int64_t	 retention_ms;			/* delta queue: 180000 */
	int64_t	 override_ttl_ms;		/* 3600000 */
	int64_t	 tombstone_ms;			/* >= retention_ms */
	int64_t	 eviction_interval_ms;		/* compensation baseline */
	size_t	 max_instances;			/* hard bound, register refuses;
						   0: 1000000 */
	int	 sync_when_timestamp_differs;	/* true */
	size_t	 max_instance_bytes;		/* one instance's stored size;
						   0: no bound */
	size_t	 max_bytes;			/* memory budget for new leases;
						   0: no bound */
	size_t	 max_delta_bytes;		/* delta queue; 0: no bound */
	int64_t	 max_skew_ms;			/* lastDirtyTimestamp ahead of
						   the wall clock refused;
						   0: no check */
	size_t	 max_unheld_tombs;		/* tombstones of instances
						   never held here; 0:
						   REGISTRY_UNHELD_TOMBS */
};

void	registry_conf_defaults(struct registry_conf *);

/*
 * A lease whose metadata holds this key when it is created (airlift's
 * announcements, server/airlift.c) renews on its own protocol's terms:
 * it is left out of self-preservation's expected clients and its renewals
 * are not counted, so a quiet airlift node never looks like a network
 * partition to Eureka's side and vice versa.
 */
#define REGISTRY_UNCOUNTED_KEY	"airlift.type"

enum registry_rc {
	REG_OK = 0,
	REG_NOT_FOUND,		/* 404 */
	REG_CONFLICT,		/* 409: *conflict holds the stored copy */
	REG_FULL,		/* max_instances reached */
	REG_INVALID,		/* bad argument */
	REG_TOO_LARGE,		/* instance above max_instance_bytes */
	REG_NO_MEMORY,		/* a new lease would pass max_bytes */
	REG_STALE,		/* a tombstone or a newer copy covers it */
	REG_FUTURE,		/* lastDirtyTimestamp beyond max_skew_ms */
};

enum registry_event_type {
	REG_EV_REGISTER = 0,
	REG_EV_RENEW,
	REG_EV_CANCEL,
	REG_EV_STATUS_UPDATE,
	REG_EV_DELETE_OVERRIDE,
	REG_EV_EVICT,		/* never replicated */
	REG_EV_METADATA,	/* re-registered; replicated as Register */
};

struct registry_event {
	enum registry_event_type	 type;
	const char			*app;
	uint64_t			 app_hash;	/* hash_str_upper(app):
							   for
							   registry_app_find_hashed */
	const char			*id;
	const struct instance		*inst;	/* stored copy; NULL if gone
						   (always for CANCEL, EVICT) */
	int				 replicated;
	enum instance_status		 override;	/* current override or UNKNOWN */
	int64_t				 cancel_ts;	/* CANCEL: origin
							   time of the
							   tombstone */
	int				 created;	/* REGISTER: a new
							   lease, not a
							   re-registration */
	int				 revived;	/* RENEW: the lease
							   had expired */
	struct hk_time			 now;
};

typedef void (*registry_observer_cb)(const struct registry_event *, void *);

struct registry_stats {
	uint64_t	registrations;
	uint64_t	renewals;
	uint64_t	renewals_not_found;
	uint64_t	cancels;
	uint64_t	cancels_not_found;
	uint64_t	evictions;
	uint64_t	status_updates;
	uint64_t	refused_too_large;	/* REG_TOO_LARGE answers */
	uint64_t	refused_memory;		/* REG_NO_MEMORY answers */
	uint64_t	delta_dropped;		/* records dropped early */
	uint64_t	stale_refused;	/* replicated copies a tombstone or a
					   newer copy covered */
	uint64_t	future_refused;	/* lastDirtyTimestamp too far ahead */
	uint64_t	tombstones_dropped;	/* unheld ones gone early */
};

struct registry	*registry_new(const struct registry_conf *, int64_t now);
void		 registry_free(struct registry *);
void		 registry_add_observer(struct registry *, registry_observer_cb,
		     void *);

/*
 * §5.3. Validation is the caller's job (rest.c, batch.c); inst is owned
 * from here.
 * REG_FUTURE when lastDirtyTimestamp is more than max_skew_ms ahead of
 * now.wall_ms; REG_STALE when replicated and a live tombstone is at or
 * after its lastDirtyTimestamp. A client's own register always wins: if a
 * tombstone covers it, its lastDirtyTimestamp is raised past the tombstone
 * so that the copy replication carries beats the tombstone on every peer.
 */
enum registry_rc registry_register(struct registry *, struct instance *,
		     int replicated, struct hk_time now);
/*
 * §5.4 + §2.7. last_dirty < 0: not given. override: the replicated
 * overriddenstatus (STATUS_UNKNOWN if none). On REG_CONFLICT *conflict is
 * the stored copy (replicated callers answer 409 with it); non-replicated
 * callers get REG_OK in that case, as Eureka.
 */
enum registry_rc registry_renew(struct registry *, const char *app,
		     const char *id, int64_t last_dirty,
		     enum instance_status override, int replicated,
		     struct hk_time now, const struct instance **conflict);
/*
 * §5.5. Always leaves a tombstone, also for an unknown instance (answered
 * REG_NOT_FOUND, yet replicated: a peer may hold the copy). cancel_ts is a
 * replicated Cancel's lastDirtyTimestamp (<= 0: none, and the cancel is
 * stamped here as an origin's). REG_STALE, nothing removed, when the
 * stored copy's lastDirtyTimestamp is newer than the replicated cancel.
 */
enum registry_rc registry_cancel(struct registry *, const char *app,
		     const char *id, int replicated, struct hk_time now,
		     int64_t cancel_ts);
/*
 * §5.6; last_dirty <= 0 means not given. This, delete_override and
 * update_metadata answer REG_NOT_FOUND also for a lease hidden as expired
 * (§2.9: getInstanceByAppAndId), so rest.c needs no lookup first.
 * updated_ts is the origin's lastUpdatedTimestamp a replicated change
 * carries (<= 0: stamp now.wall_ms, as the origin does); REG_FUTURE when
 * last_dirty is beyond max_skew_ms.
 */
enum registry_rc registry_status_update(struct registry *, const char *app,
		     const char *id, enum instance_status, int64_t last_dirty,
		     int replicated, struct hk_time now, int64_t updated_ts);
/* §5.7; status is what the instance is left in (UNKNOWN by default). */
enum registry_rc registry_delete_override(struct registry *, const char *app,
		     const char *id, enum instance_status, int64_t last_dirty,
		     int replicated, struct hk_time now, int64_t updated_ts);
/*
 * §2.11: merge metadata, then re-register as a non-replicated register.
 * REG_INVALID, nothing changed, past INSTANCE_MAX_METADATA entries;
 * REG_TOO_LARGE or REG_NO_MEMORY, nothing changed, past the byte bounds.
 */
enum registry_rc registry_update_metadata(struct registry *, const char *app,
		     const char *id, const struct kvlist *, struct hk_time now);
/* Store an override learnt from a peer (§6.2 sync-from-peer). */
void		 registry_set_override(struct registry *, const char *id,
		     enum instance_status, int64_t mono);

/*
 * Anti-entropy (docs/cluster.md), loop-free. registry_reconcile() decides
 * what to do with a peer's copy: adopt it (newer by origin times, or we
 * hold none and no tombstone covers it), keep ours, or answer the peer
 * with a Cancel (*cancel_ts: our tombstone's time) because a tombstone
 * here is at or after its lastDirtyTimestamp. registry_adopt() applies an
 * adoption (override and copy); it owns r from the call on.
 */
enum registry_recon {
	RECON_KEEP = 0,
	RECON_ADOPT,
	RECON_CANCEL,
};
enum registry_recon registry_reconcile(struct registry *,
		     const struct instance *r, int64_t mono,
		     int64_t *cancel_ts);
enum registry_rc registry_adopt(struct registry *, struct instance *r,
		     struct hk_time now);
/*
 * Hash of every field replication carries (not leaseInfo, actionType,
 * lastUpdatedTimestamp or isCoordinatingDiscoveryServer, which each node
 * sets itself): the anti-entropy digest sums it, so a difference in
 * status, overriddenStatus, metadata or any other field shows.
 */
uint64_t	 registry_copy_hash(const struct instance *);
/* Whether the i-th lease of an app has expired (monotonic clock). */
int		 reg_app_lease_expired(const struct reg_app *, size_t,
		     int64_t mono);
/* Monotonic ms after which it has (INT64_MIN: it already has, evicted). */
int64_t		 reg_app_lease_deadline(const struct reg_app *, size_t);
/*
 * The live-lease walk: cb(app, instance, arg) for every lease that has
 * not expired at mono (monotonic ms), app by app, the leases of one app
 * together; expired ones are skipped whatever self-preservation says (the
 * anti-entropy digest, heureka/apps). cb must not mutate the registry.
 * Returns how many leases cb saw.
 */
typedef void (*registry_live_cb)(const struct reg_app *,
		     const struct instance *, void *);
size_t		 registry_foreach_live(const struct registry *, int64_t mono,
		     registry_live_cb, void *);

/*
 * A lease's heartbeat timing for the doctor (doctor.h): the gap between
 * its last two heartbeats (-1: fewer than two), when the last one came
 * (wall; 0: never renewed), whether it has expired (kept by
 * self-preservation while eviction is off), and whether it is left out
 * of self-preservation's figures. Lent for the callback only.
 */
struct registry_timing {
	const char		*app;
	const struct instance	*inst;
	int32_t			 gap_ms;
	int64_t			 last_renew_ts;
	int64_t			 last_renew_mono;
	int			 expired;
	int			 uncounted;
};
typedef void (*registry_timing_cb)(const struct registry_timing *, void *);
/* Every registered lease, live ones then expired ones; how many. */
size_t		 registry_foreach_timing(const struct registry *, int64_t mono,
		     registry_timing_cb, void *);
/*
 * The same a slice at a time: from *cur (zeroed to begin), at most max
 * leases looked at; 1 when the walk is complete. Between slices the
 * registry may change: a lease moved by a removal may then be missed or
 * passed twice in that walk (the doctor's findings are idempotent, and
 * its next scan sees it).
 */
struct reg_timing_cursor {
	size_t		 app, lease;
	int		 expired;
};
int		 registry_timing_step(const struct registry *, int64_t mono,
		     struct reg_timing_cursor *, size_t max,
		     registry_timing_cb, void *);

/*
 * Lookups; expired leases are hidden while expiration is enabled (§2.6).
 * From here on `now` is monotonic ms.
 */
const struct instance *registry_get(struct registry *, const char *app,
		     const char *id, int64_t now);
const struct instance *registry_find_id(struct registry *, const char *id,
		     int64_t now);
/* Whether a lease of (app, id) is stored, expired or not. */
int		 registry_holds(const struct registry *, const char *app,
		     const char *id);
/* The override for an id, STATUS_UNKNOWN if none. */
enum instance_status registry_override(struct registry *, const char *id,
		     int64_t now);
/* Snapshot of the override map: calls cb(id, status) for each entry. */
void		 registry_foreach_override(struct registry *,
		     void (*)(const char *, enum instance_status, void *),
		     void *, int64_t now);

/*
 * Iteration for encoders, by index (O(1) each). Order is unspecified, as
 * Eureka's. An app index is valid until the next mutating call.
 */
size_t		 registry_app_count(const struct registry *);
struct reg_app	*registry_app_at(const struct registry *, size_t);
struct reg_app	*registry_app_find(const struct registry *, const char *);
struct reg_app	*registry_app_find_hashed(const struct registry *, const char *,
		    uint64_t);	/* hash_str_upper(name) known */
const char	*reg_app_name(const struct reg_app *);
size_t		 reg_app_size(const struct reg_app *);
void		 reg_app_status_counts(const struct reg_app *,
		     size_t counts[STATUS_COUNT]);
const struct instance *reg_app_instance_at(const struct reg_app *, size_t);
/*
 * Bumped on every change that invalidates this app's encodings. Values
 * come from the registry-wide counter, so a dropped and re-created app
 * never reuses one. Heartbeats do not bump; a heartbeat that rewrites the
 * status silently (§5.4) and a peer override that changes an instance's
 * overriddenStatus do, since our caches never expire by time.
 */
uint64_t	 reg_app_gen(const struct reg_app *);
/* hash_str() of the (upper-case) name, kept by the registry's table. */
uint64_t	 reg_app_hash(const struct reg_app *);
/* Bumped on every change that invalidates any encoding. */
uint64_t	 registry_gen(const struct registry *);
size_t		 registry_size(const struct registry *);	/* instances */
char		*registry_hashcode(const struct registry *);	/* new string */
void		 registry_status_counts(const struct registry *,
		     size_t counts[STATUS_COUNT]);

/*
 * Deltas (§5.9): a deep copy of the current state of every lease in the
 * recently-changed queue, deduplicated per (app, id) with the last
 * occurrence winning, grouped by app in order of first appearance. Costs
 * O(changes). versions_delta and apps_hashcode are left for the caller.
 */
struct applications *registry_delta(struct registry *, int64_t now);
void		 registry_purge_deltas(struct registry *, int64_t now);
/* The same, at most max records and tombstones a call: 1 when done. */
#define REGISTRY_PURGE_SLICE		65536	/* records per loop turn */
int		 registry_purge_deltas_step(struct registry *, int64_t now,
		     size_t max);
size_t		 registry_delta_size(const struct registry *);
/*
 * The same delta walked a bounded amount at a time (the response cache's
 * sliced delta body): registry_delta()'s records, deduplication, grouping
 * and order, each instance lent to emit as it comes, not copied. A walk
 * covers the records queued at registry_dwalk_new and is sound across
 * any change between steps: records appended since are not in it,
 * records dequeued since (retention, the byte bound) are left out, and
 * each emitted instance is the lease's state at the step. So it always
 * ends, within its record count; registry_dwalk_valid() says whether
 * nothing changed since it began (its delta is then exact for the
 * registry as it is). registry_dwalk_step looks at up to max queue records (*done
 * says how many) and returns 1 when the walk is complete; emit gets the
 * application's name, the instance, and whether it is the first of its
 * application (the applications come one after another), and stops the
 * step early by returning nonzero.
 */
struct reg_dwalk;
struct reg_dwalk *registry_dwalk_new(const struct registry *);
void		 registry_dwalk_free(struct reg_dwalk *);	/* NULL ok */
int		 registry_dwalk_valid(const struct registry *,
		     const struct reg_dwalk *);
int		 registry_dwalk_step(const struct registry *,
		     struct reg_dwalk *, size_t max, size_t *done,
		     int (*emit)(const char *app, const struct instance *,
		     int first, void *), void *arg);
/*
 * The delta queue holds compact records: a reference to the live lease,
 * or, once it is cancelled, a copy without metadata or URLs. It is bounded
 * by max_delta_bytes (and a count); past the bound the oldest records go
 * before their retention time. While such a dropped record is younger
 * than retention_ms, some client's delta may lack it, so deltas are
 * incomplete: the caller then serves REGISTRY_HASHCODE_TRUNCATED as the
 * apps hash code, which no registry produces (zero counts are never
 * written), and every client's reconciliation falls back to a full fetch.
 */
#define REGISTRY_HASHCODE_TRUNCATED	"DELTA_TRUNCATED_0_"
int		 registry_delta_complete(const struct registry *, int64_t now);
size_t		 registry_delta_bytes(const struct registry *);

/*
 * Memory accounting: running byte counters kept on every insert, replace
 * and remove (instance_stored_size plus the lease), never a walk. The
 * budget max_bytes covers the leases, the delta queue, the tombstones
 * and the external bytes the caller reports (the response cache's encodings); past it a
 * NEW lease is refused with REG_NO_MEMORY, while re-registrations that do
 * not grow, heartbeats and everything else keep working.
 */
size_t		 registry_bytes(const struct registry *);	/* leases */
/* Who holds the external bytes: each part is set on its own. */
enum registry_ext {
	REG_EXT_ENCODINGS = 0,	/* the response cache's bodies */
	REG_EXT_WATCH,		/* the watch's events and snapshot pieces */
	REG_EXT_HEADS,		/* connections' unfinished first heads */
	REG_EXT_COUNT
};
void		 registry_set_external_bytes(struct registry *,
		     enum registry_ext, size_t);
size_t		 registry_external_bytes(const struct registry *,
		     enum registry_ext);
size_t		 registry_memory_used(const struct registry *);
/* max_bytes as configured (0: no budget). */
size_t		 registry_memory_budget(const struct registry *);

/* VIP / SVIP (§2.13): instances whose comma-separated list holds vip. */
struct applications *registry_vip(struct registry *, const char *vip,
		     int secure);

/*
 * Eviction and self-preservation (§5.11, with heureka's improvements):
 * the policy lives in evict.c; these forward to the registry's copy.
 */
void		 registry_open_for_traffic(struct registry *, int count,
		     int64_t now);
int		 registry_evict(struct registry *, struct hk_time now);
		     /* number evicted */
/*
 * The same run in slices, so that a registry of a million leases is
 * never walked in one loop turn: a call when no run is under way plans
 * one at now; each call looks at up to max leases (a removal counts
 * REGISTRY_EVICT_REMOVE_WEIGHT more), sets *evicted to the number it
 * removed and returns 1 when the run is complete (0: call again on a
 * later turn). Expiry is judged at the run's start; the leases to evict
 * are a uniform random choice of the expired, as many as evict.c allows.
 * Nothing is held between calls but a place in the walk, so changes in
 * between are safe (a lease moved past the place waits for the next run).
 */
#define REGISTRY_EVICT_SLICE		32768	/* leases per loop turn */
#define REGISTRY_EVICT_REMOVE_WEIGHT	255
int		 registry_evict_step(struct registry *, struct hk_time now,
		     size_t max, int *evicted);
void		 registry_tick_minute(struct registry *, int64_t now);
int		 registry_lease_expiration_enabled(const struct registry *);
int		 registry_is_below_threshold(const struct registry *);
int		 registry_expected_clients(const struct registry *);
/* Live leases carrying REGISTRY_UNCOUNTED_KEY. */
int		 registry_uncounted(const struct registry *);
int		 registry_renew_threshold(const struct registry *);
long		 registry_renews_last_min(const struct registry *);
const struct registry_stats *registry_stats(const struct registry *);

/*
 * Each name-keyed table's size and longest chain, for /metrics: the chain
 * by a bounded scan resumed from call to call (htab_stats_scan).
 */
struct htab_stats;
void		 registry_foreach_table(struct registry *,
		     void (*)(const char *, const struct htab_stats *, void *),
		     void *);

/*
 * Tombstones: the origin time of the cancel of (app, id), 0 if none lives
 * (tombstone_ms on the monotonic clock since it was last set). Set by
 * every cancel (not evictions: a live peer may rightly bring an evicted
 * lease back); cleared by a register that beats it. A replicated register
 * with a lastDirtyTimestamp at or before it is refused (REG_STALE).
 */
int64_t		 registry_tombstone(struct registry *, const char *app,
		     const char *id, int64_t now);
/*
 * A tombstone of an instance this node never held (a DELETE of an id it
 * does not know, a peer's Cancel of one) costs TOMB_OVERHEAD (about 80
 * bytes) plus its names. Those are kept up to max_unheld_tombs and
 * 1/REGISTRY_UNHELD_SHARE of max_bytes, whichever comes first; past it
 * the oldest goes (stats.tombstones_dropped). Tombstones of leases held
 * here are bounded by max_instances, as the leases were. Both kinds
 * count in registry_memory_used().
 */
#define REGISTRY_UNHELD_TOMBS	65536
#define REGISTRY_UNHELD_SHARE	16
size_t		 registry_tombstone_bytes(const struct registry *);
void		 registry_tombstone_counts(const struct registry *,
		     size_t *held, size_t *unheld);

/*
 * Last-1000 rings for /lastn, newest first: cb(ts, "APP(id)", evicted),
 * evicted 1 for an eviction.
 */
#define REGISTRY_RECENT_MAX	1000
void		 registry_foreach_recent_how(const struct registry *,
		     int cancelled, void (*)(int64_t, const char *, int,
		     void *), void *);

/*
 * Expiry judged from an instance's shown leaseInfo, wall ms: only for
 * copies another node sent (ours are judged by reg_app_lease_expired).
 */
int		 registry_lease_expired(const struct instance *, int64_t extra,
		     int64_t wall);

/*
 * Walk the registry and verify every counter and index against what it
 * holds: the apps' array positions and name table; each lease's
 * position, app, status, key hashes, cost (bytes), reference count (one
 * while registered plus one per delta-queue record) and its entries in
 * the lease index and on its id's chain in the id index; the per-app and
 * registry status counts, size, bytes and the eviction's uncounted
 * leases; the delta queue's bounds (qcap > 0 once it holds anything),
 * its cancelled leases' references and qbytes; the override and
 * tombstone tables against their lists and counts. 0 when all holds;
 * -1 and *cause (the first breach; caller frees). O(size + queue): the
 * unit tests and fuzz targets run it after every operation (bug.h).
 */
int		 registry_check(const struct registry *, char **cause);

#endif
