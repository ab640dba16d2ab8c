/*
 * registry_int.h: the registry module's private structures (the lease,
 * the app, the override, tombstone and delta-queue records, the
 * registry itself) and the functions its files share. Included only by
 * registry.c and registry_*.c (tests/layers enforces it): everything
 * else goes through registry.h.
 */
#ifndef REGISTRY_INT_H
#define REGISTRY_INT_H

#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>

#include "bug.h"
#include "defaults.h"
#include "evict.h"
#include "hash.h"
#include "instance.h"
#include "registry.h"

/* hash_fixed's starting value for the copy hash (peers compare it). */
#define REGISTRY_COPY_HASH_SEED		1469598103934665603ULL
#define REGISTRY_QUEUE_SLACK		4096	/* delta queue above 4 x max */

#define CONTAINER_OF(p, type, member) \
	((type *)(void *)((char *)(p) - offsetof(type, member)))

/*
 * A lease. Internal times (last_renew_mono, duration_secs) are kept apart
 * from the values shown in inst->lease (wall clock), which are refreshed
 * after each change. Its key is instance_id(inst) (lease_id()): no
 * stored string of an instance changes its id, and a replacing copy
 * carries the same id.
 * refs: one for the registry while registered, one per delta-queue entry.
 * The two large indexes (lease_idx by (app, id), id_idx by id) are
 * open-addressed (hash.h, struct hidx): their slots hold the hashes, so
 * a lookup at a million leases reads one run of slots and touches only
 * leases whose hash matches, and the lease carries no nodes. The id
 * index holds the newest registered lease of each id; the older ones
 * hang off it by id_next (one id in many apps is one index entry, and
 * each lease leaves it in O(1)).
 * Every lease costs this struct at 1M instances: keep it small.
 */
struct lease {
	struct lease	*id_next;	/* an older lease with this id */
	struct lease	*id_prev;	/* a newer one; NULL: the first */
	uint64_t	 app_hash;	/* hash_str_upper(app) */
	uint64_t	 id_hash;	/* hash_str(id) */
	struct instance	*inst;		/* owned */
	struct reg_app	*app;		/* NULL once cancelled */
	int64_t		 registration_ts;	/* wall, shown */
	int64_t		 last_renew_ts;	/* wall, shown */
	int64_t		 last_renew_mono;	/* expiry counts from it */
	int64_t		 eviction_ts;
	int64_t		 service_up_ts;
	size_t		 bytes;		/* accounted: in reg->bytes while
					   registered, then in reg->qbytes */
	uint32_t	 idx;		/* position in app->leases */
	int32_t		 duration_secs;	/* > 0 */
	int32_t		 renew_gap_ms;	/* between the last two heartbeats
					   (the doctor's renew-interval);
					   -1: fewer than two */
	unsigned	 refs;
	unsigned	 renewed:1;	/* renewed since registration */
	unsigned	 uncounted:1;	/* REGISTRY_UNCOUNTED_KEY: not in
					   self-preservation's figures (a
					   bit: the lease's size is budgeted) */
};

struct reg_app {
	struct htab_node	  node;
	char		 *name;		/* upper case */
	struct lease	**leases;
	size_t		  n;
	size_t		  cap;
	size_t		  idx;		/* position in registry->apps */
	uint64_t	  gen;
	size_t		  counts[STATUS_COUNT];	/* its leases by status */
};

/* Override map entry: keyed by id only, expires after last access. */
struct override {
	struct htab_node		 node;
	TAILQ_ENTRY(override)	 entry;		/* least recently used first */
	char			*id;
	enum instance_status	 status;
	int64_t			 access_ts;	/* mono */
};
TAILQ_HEAD(override_list, override);

/*
 * A recently cancelled (app, id): one allocation, the app's name and the
 * id stored after it (key: app, NUL, id, NUL). Kept on one of two lists,
 * oldest first: tombstones of leases this node held, bounded by
 * max_instances as the leases were, and those of instances it never held
 * (a DELETE of an unknown id, a peer's Cancel of one), bounded apart
 * (registry.h, REGISTRY_UNHELD_TOMBS). Their bytes count in the budget.
 */
struct tombstone {
	struct htab_node		 node;
	TAILQ_ENTRY(tombstone)	 entry;		/* oldest first */
	int64_t			 ts;		/* origin time (wall) */
	int64_t			 mono;		/* set at, for retention */
	uint32_t		 idoff;		/* the id at key + idoff */
	uint32_t		 unheld;	/* on tomb_unheld */
	char			 key[];
};
TAILQ_HEAD(tombstone_list, tombstone);
/*
 * What a tombstone counts against max_bytes: its block, malloc's header
 * and rounding (16), and its share of the table's bucket array (two
 * pointers a tombstone at the table's load).
 */
#define TOMB_OVERHEAD	(sizeof(struct tombstone) + 16 + 2 * sizeof(void *))

struct change {
	struct lease	*lease;
	int64_t		 ts;		/* mono */
};

struct recent {
	int64_t		 ts;
	char		*what;		/* "APP(id)" */
	size_t		 cap;		/* what's bytes, reused when enough */
	int		 evicted;	/* cancelled ring: an eviction */
};

struct recent_ring {
	struct recent	 v[REGISTRY_RECENT_MAX];
	size_t		 next;		/* slot written next */
	size_t		 n;
};

struct observer {
	registry_observer_cb	 cb;
	void			*arg;
};

/*
 * An eviction run in slices (registry_evict_step): a count of the
 * candidates, then the removal of a uniform random choice of them
 * (selection sampling, so nothing is held between slices but a place in
 * the walk: leases and apps are walked from the last, so a removal, which
 * moves the last lease or app into the hole, moves only what was seen).
 */
struct evict_slices {
	int		 busy;
	int		 phase;		/* 0 count, 1 remove */
	struct evict_run run;
	int64_t		 mono;		/* the run's time: expiry is of then */
	size_t		 size;		/* leases when it began */
	size_t		 ai, li;	/* the walk's next place, + 1 */
	size_t		 nexp, seen, limit, taken;
};

/* registry_foreach_live's callback and its argument. */
struct live_walk {
	registry_live_cb	 cb;
	void			*arg;
};

/*
 * An (app, id) with both keyed hashes, taken once per operation and
 * handed to every table it touches (leases, ids, tombstones, apps).
 */
struct reg_key {
	const char	*app;
	const char	*id;
	uint64_t	 ah;		/* hash_str_upper(app) */
	uint64_t	 ih;		/* hash_str(id) */
};

struct registry {
	struct registry_conf	 conf;

	struct htab		 app_tab;
	struct reg_app		**apps;
	size_t			  napps;
	size_t			  capapps;

	struct hidx		 lease_idx;	/* (app, id) */
	struct hidx		 id_idx;	/* id -> its newest lease */
	size_t			 size;
	size_t			 counts[STATUS_COUNT];
	uint64_t		 gen;

	struct htab		 override_tab;
	struct override_list	 override_lru;
	size_t			 noverrides;

	struct htab		 tomb_tab;
	struct tombstone_list	 tomb_fifo;	/* of leases held here */
	struct tombstone_list	 tomb_unheld;	/* of instances never held */
	size_t			 ntombs;	/* on tomb_fifo */
	size_t			 nunheld;	/* on tomb_unheld */
	size_t			 tomb_bytes;	/* both, in the budget */
	size_t			 unheld_bytes;	/* tomb_unheld's share */

	struct change		*q;		/* recently-changed ring */
	size_t			 qhead;
	size_t			 qn;
	size_t			 qcap;
	size_t			 qmax;
	size_t			 qbytes;	/* cancelled leases it holds */
	uint64_t		 qseq;		/* the head record's number:
						   records dequeued so far */
	int64_t			 qtrunc_ts;	/* newest early drop */

	size_t			 bytes;		/* registered leases */
	size_t			 ext_bytes[REG_EXT_COUNT];	/* the
						   caller's parts */

	struct recent_ring	 registered;
	struct recent_ring	 cancelled;

	struct reg_app		*last_app;	/* the last registered into */

	struct observer		*obs;
	size_t			 nobs;
	int			 notify_created;	/* for the next event */
	int			 notify_revived;	/* for the next event */

	struct evict		 ev;		/* evict.c: self-preservation */
	struct evict_slices	 evs;		/* the eviction run under way */
	struct htab_scan	 tscan[5];	/* registry_foreach_table's */

	struct registry_stats	 stats;
	uint64_t		 check_left;	/* operations to the next walk */
	unsigned		 op_depth;	/* public operations under way */
};

/*
 * Declared first in each public operation that reads or changes the
 * registry: in the tests and fuzz targets the walk (registry_check) runs
 * at its end, by whichever return (bug.h, HK_CHECK_AT_EXIT). Only the
 * outermost operation's end walks: an observer called in the middle of
 * a change may call back (registry_get) and would see it half done.
 */
#define REGISTRY_CHECKED(reg)						\
	HK_CHECK_AT_EXIT(struct registry, registry_self_check,		\
	    registry_enter(reg))

/* registry_check.c: the walk at the outermost operation's end. */
void		 registry_self_check_walk(struct registry **);

/* A public operation begins (REGISTRY_CHECKED). */
static inline struct registry *
registry_enter(struct registry *reg)
{
	reg->op_depth++;
	return (reg);
}

/*
 * A public operation ends (REGISTRY_CHECKED): inline, so that with
 * self-checks off (a server) it costs a decrement and one predictable
 * branch, no call.
 */
static inline void
registry_self_check(struct registry **regp)
{
	if (--(*regp)->op_depth > 0 || __builtin_expect(
	    !__atomic_load_n(&bug_checks, __ATOMIC_RELAXED), 1))
		return;
	registry_self_check_walk(regp);
}

/* registry.c: keys, the id index, the lease table. */
uint64_t	 registry_key_hash(uint64_t, uint64_t);
void		 reg_key_set(struct reg_key *, const char *, const char *);
uint64_t	 lease_key_hash(const struct lease *);
const char	*lease_id(const struct lease *);
struct lease	*id_first(const struct registry *, const char *, uint64_t);
struct lease	*lease_find(const struct registry *, const struct reg_key *);
void		 lease_unref(struct registry *, struct lease *);
size_t		 lease_cost(const struct lease *);
int		 lease_is_expired(const struct lease *, int64_t, int64_t);
void		 registry_touch(struct registry *, struct reg_app *);
void		 registry_remove(struct registry *, struct lease *, int, int,
		     int64_t, struct hk_time);
void		 app_append(struct application *, struct instance *);

/* registry_delta.c */
void		 registry_enqueue(struct registry *, struct lease *, int64_t);

/* registry_override.c */
struct override	*override_find(struct registry *, const char *, int64_t,
		     int);
void		 override_put(struct registry *, const char *,
		     enum instance_status, int64_t);
int		 override_del(struct registry *, const char *);
void		 override_purge(struct registry *, int64_t);

/* registry_tomb.c */
struct tombstone *tomb_live(struct registry *, const struct reg_key *,
		     int64_t);
void		 tomb_set(struct registry *, const struct reg_key *, int,
		     int64_t, int64_t);
void		 tomb_del(struct registry *, struct tombstone *);

/* registry_recent.c */
/* The walk over every lease of registry.c (registry_timing.c uses it). */
size_t		 lease_walk(const struct registry *, int64_t mono,
		     int64_t extra, int expired,
		     void (*)(struct lease *, void *), void *);
void		 recent_add(struct recent_ring *, int64_t, const char *,
		     const char *, int evicted);
void		 recent_clear(struct recent_ring *);

#endif /* REGISTRY_INT_H */
