/*
 * cache_int.h: the response cache's private structures (blobs, bodies,
 * fragment records, gzip chunks, slots, side entries, the cache and its
 * reaper), its tuning constants, and the functions its files share.
 * Included only by cache.c and cache_*.c (tests/layers enforces it):
 * everything else goes through cache.h.
 */
#ifndef CACHE_INT_H
#define CACHE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "bug.h"
#include "cache.h"
#include "codec.h"
#include "gzip.h"
#include "hash.h"
#include "registry.h"

#include "xml.h"
#include "xmalloc.h"

#define NVARIANT		4	/* {json, xml} x {full, compact} */
#define GZIP_LEVEL		6	/* whole bodies: delta, app, VIP */
/*
 * Per-application deflate fragments: level 3 (zlib's fastest matcher,
 * deflate_fast, with its longest chains) costs a third of level 6 on an
 * application of 100 instances (JSON 97 KB: 1.33M instructions against
 * 4.0M; XML 159 KB: 2.6M against 6.9M) for 11-13 % more compressed bytes
 * (2,988 against 2,696; 3,725 against 3,292); levels 1 and 2 cost the
 * same and compress less, Z_RLE and Z_HUFFMAN_ONLY far less. One level
 * for every fragment, from scratch or after a change, so that a body's
 * bytes depend on the registry alone.
 */
#define FRAG_LEVEL		3
#define COALESCE_BELOW		(128 * 1024)
#define MAX_SIDE_ENTRIES	512	/* VIP and read-only entries */
#define GZ_CHUNK_MASK		31	/* chunk ends after a name hash & 31 == 0 */
#define GZ_CHUNK_MAX		(1024 * 1024)	/* or at this many bytes */
/*
 * Slice units: a byte of plain encoding is 1, a byte deflated GZ_WEIGHT
 * (callgrind and wall clock: deflate at level 6 costs about three times
 * the JSON or XML encode of the same bytes).
 */
#define GZ_WEIGHT		3
/*
 * An application looked at or placed by an assembly's walk (a lookup, a
 * generation check, a segment or chunk entry), in slice units: at 10,000
 * applications a plain walk is ~6 ms, about what encoding 2.5 MB takes.
 * Looking at an application whose fragment is current, when preparing,
 * is a quarter of that, and so is a byte of a gzip chunk copied.
 */
#define ASM_WEIGHT		256
/* New starts of an assembly's walk before one runs unbounded. */
#define MAX_TRIES		4
/* A run of plain fragments (one slice's) ends at this many bytes. */
#define RUN_MAX			(4 * 1024 * 1024)

#define CONTAINER_OF(p, type, member) \
	((type *)(void *)((char *)(p) - offsetof(type, member)))

/*
 * An immutable, refcounted byte string (cache.h's struct cache_seg). A
 * plain fragment blob may hold a run of applications' fragments (those one
 * slice of a build encoded, back to back); live counts the bytes fragment
 * records still point at, mem lists those records (NULL where one left),
 * so that a run partly superseded is compacted (run_leave).
 */
struct appfrag;
struct blob {
	unsigned	  refs;
	size_t		  len;
	size_t		  live;
	char		 *data;
	struct appfrag	**mem;		/* a run's records, else NULL */
	size_t		  nmem;
	struct blob	 *dead;		/* in the reaper's list (cache_reap) */
	struct cache_reaper *rp;	/* counts its bytes, may reap it */
};

/* A piece of a body: len bytes of a blob from byte off on. */
struct bseg {
	struct blob	*bl;
	size_t		 off, len;
};

struct cache_body {
	unsigned	  refs;
	size_t		  len;
	size_t		  nseg;
	struct bseg	 *segs;
};

/* One application's encodings, valid for one registry generation. */
struct appfrag {
	char		*name;
	uint64_t	 gen;
	int64_t		 built;
	struct blob	*plain[NVARIANT];	/* its run, or its own */
	size_t		 poff[NVARIANT];	/* the fragment in it */
	size_t		 plen[NVARIANT];
	size_t		 pidx[NVARIANT];	/* its place in the run's mem */
	struct gz_frag	 gz[NVARIANT];	/* data: own, or gzbl[v]'s */
	struct blob	*gzbl[NVARIANT];	/* the chunk holding gz[v] */
	uint64_t	 gzser[NVARIANT];	/* serial of gz[v] */
	uint8_t		 has_gz[NVARIANT];
	struct cache_body *root[NVARIANT][2];	/* GET apps/{app} */
	struct cache_body *hand;	/* a sliced build's body, */
	int64_t		 hand_at;	/* served in the turn it ended */
	int		 hand_vg;	/* for variant hand_vg / 2 */
	struct htab_node node;		/* in cache->frags, by name */
	struct cache_reaper *rp;	/* the cache's: counts gz[v] */
};

/*
 * The deflate fragments of consecutive applications copied into one blob:
 * a gzip full body is a header, its chunks by reference and a trailer. A
 * chunk ends after an application whose name hashes to 0 mod 32 (or at
 * GZ_CHUNK_MAX bytes), so its boundaries depend on the names alone and a
 * change rebuilds only the chunk around it: one change copies ~32
 * fragments instead of the whole registry, and a send costs one evbuffer
 * reference per ~32 applications instead of one per fragment.
 */
struct gzchunk {
	struct blob	*bl;
	struct gz_frag	 sum;		/* crc, raw_len, op of bl (no data) */
	int		 lead;		/* begins with a separator */
	size_t		 n;
	uint64_t	*ser;		/* gzser of its fragments, in order */
};

struct gzchunks {
	struct gzchunk	*v;
	size_t		 n, cap;
};

/*
 * The layout of a full body, so that the next build after a change reuses
 * its segments instead of walking every application: the generation of
 * each application index when it was built, and, for each segment between
 * the opening and closing pieces (a run of plain fragments, or a gzip
 * chunk), the applications [first, end) it holds and whether it begins
 * with a separator. Generations come from the registry's one counter, so
 * an index whose generation is unchanged holds the same application in
 * the same state; a segment all of whose indexes are unchanged holds
 * exactly the bytes a new walk would put there.
 */
struct fmseg {
	size_t		 first, end;
	int		 lead;
};

struct fmap {
	uint64_t	*gens;
	size_t		 napps;
	struct fmseg	*segs;
	size_t		 nseg, cap;
};

/*
 * A whole-body cache slot (full registry or delta). A full slot may have
 * an incremental build under way (cache_apps_step): the index of the next
 * application to prepare, its assembly's walk once begun and how many
 * times that began again; map is the layout of its body (none while
 * map.gens is NULL, and while a walk is under way: the walk has it).
 */
struct walk;
struct slot {
	uint64_t	 gen;
	size_t		 dsize;		/* delta queue length when built */
	int64_t		 expires;
	struct cache_body *body;
	struct cache_body *src;		/* gzip slot: the plain body it packs */
	int		 pending;	/* a build is under way */
	int		 handoff;	/* a delta finished at handoff_at: */
	int64_t		 handoff_at;	/* served then, current or not */
	size_t		 next;		/* its next application index */
	unsigned	 tries;		/* its walk's new starts */
	int64_t		 started;	/* when the build under way began */
	struct walk	*walk;		/* its assembly, NULL before */
	struct fmap	 map;
};

/* In cache_res's order (cache.h): cache_step casts one to the other. */
enum side_kind {
	SIDE_APPS = 0,
	SIDE_DELTA,
	SIDE_APP,
	SIDE_VIP,
	SIDE_SVIP,
};

/* VIP bodies and read-only snapshots, keyed by kind, variant and name. */
struct side {
	enum side_kind	 kind;
	struct cache_key key;
	char		*name;
	uint64_t	 gen;
	int64_t		 expires;
	struct cache_body *body;
	uint64_t	 pass;		/* read-only refresh pass it is from */
	int		 handoff;	/* VIP: a sliced build's body, */
	int64_t		 handoff_at;	/* served in the turn it ended */
	struct side	*next;
};

struct cache {
	struct registry	*reg;
	int64_t		 ro_ms;
	int64_t		 expire_ms;
	struct htab	 frags;		/* struct appfrag, keyed hash of name */
	struct slot	 full[NVARIANT][2];
	struct slot	 delta[NVARIANT][2];
	int64_t		 delta_version;
	struct side	*vips;
	size_t		 nvips;
	struct side	*ro;
	size_t		 nro;
	uint64_t	 ro_pass;	/* the read-only refresh pass */
	int		 ro_busy;	/* a pass is under way */
	struct gz_frag	 gzsep[NVARIANT];
	struct gzchunks	 gzc[NVARIANT];		/* of the last gzip build */
	uint64_t	 gzserial;
	size_t		 work;		/* encoding work done, in slice units */
	int64_t		 plain_idle_ms;	/* 0: plain always kept */
	int64_t		 plain_seen[NVARIANT]; /* last plain fetch */
	int		 plain_kept[NVARIANT]; /* plain bytes kept */
	struct cache_stats stats;
	struct sbuild	*sb;		/* sliced builds under way */
	size_t		 nsb;
	struct htab_scan fscan;		/* cache_table_stats' */
	struct cache_reaper *rp;	/* its blobs' bytes and reaper */
	uint64_t	 check_left;	/* operations to the next walk */
	unsigned	 op_depth;	/* public operations under way */
};

/*
 * Declared first in each public operation: in the tests and fuzz targets
 * the walk (cache_check) runs at its end, by whichever return (bug.h),
 * the outermost operation's only.
 */
#define CACHE_CHECKED(c)						\
	HK_CHECK_AT_EXIT(struct cache, cache_self_check, cache_enter(c))

/*
 * The reaper (cache_reap) and the byte count of the encodings, one per
 * cache and shared with every blob it made: a blob may outlive the cache
 * (a body in flight to a client), so each live blob holds a reference,
 * as the cache does, and the last one frees it.
 */
struct cache_reaper {
	unsigned	  refs;		/* the cache's and its live blobs' */
	/*
	 * Bytes of every live blob, in the cache or still in flight to a
	 * client, and of the per-app gzip fragments: one running total kept
	 * where they are made and freed, reported through cache_bytes() so
	 * the registry's memory budget can count encodings.
	 */
	size_t		  bytes;
	/* The cache is alive; without it a big blob is freed at once. */
	int		  live;
	/*
	 * Set while plain_drop() runs: every blob that dies is gathered in
	 * batch, then handed to the reaper highest address first.
	 */
	int		  any;
	struct blob	**batch;
	size_t		  nbatch, batchcap;
	struct blob	 *head, *tail;	/* the dead blobs, by ->dead */
};

/* cache_check.c: the walk at the outermost operation's end. */
void		 cache_self_check_walk(struct cache **);

/* A public operation begins (CACHE_CHECKED). */
static inline struct cache *
cache_enter(struct cache *c)
{
	c->op_depth++;
	return (c);
}

/*
 * A public operation ends (CACHE_CHECKED): inline, so that with
 * self-checks off (a server) it costs a decrement and one predictable
 * branch, no call.
 */
static inline void
cache_self_check(struct cache **cp)
{
	if (--(*cp)->op_depth > 0 || __builtin_expect(
	    !__atomic_load_n(&bug_checks, __ATOMIC_RELAXED), 1))
		return;
	cache_self_check_walk(cp);
}

/* cache.c */
int		variant(const struct cache_key *);
int		vflags(int);
const struct codec *vcodec(int);
int64_t		cache_until(const struct cache *, int64_t);
int		plain_idle(const struct cache *, int, int64_t);
void		plain_fetched(struct cache *, int, int64_t);
void		apps_piece(struct buf *, int, int, int64_t, const char *);

/* cache_blob.c */
void		reap_batch_flush(struct cache_reaper *);
void		reaper_unref(struct cache_reaper *);
struct blob	*blob_from_buf(struct cache_reaper *, struct buf *);
void		blob_unref(struct blob *);
struct cache_body *body_from_buf(struct cache_reaper *, struct buf *);
struct cache_body *body_ref(struct cache_body *);
void		body_push_slice(struct cache_body *, size_t *, struct blob *,
		     size_t, size_t);
void		body_push(struct cache_body *, size_t *, struct blob *);
void		body_push_shared(struct cache_body *, size_t *, struct blob *,
		     size_t, size_t);
void		body_push_ref(struct cache_body *, size_t *, struct blob *);
struct cache_body *body_coalesce(struct cache_body *);

/* cache_frag.c */
void		run_compact(struct blob *, int);
int		frag_free_cb(struct htab_node *, void *);
struct appfrag *frag_lookup(struct cache *, const char *, uint64_t);
void		frag_sweep(struct cache *);
void		frag_sync(struct cache *, struct appfrag *,
		     const struct reg_app *, int64_t, int64_t);
void		encode_app(struct buf *, const struct reg_app *, int, int);
struct blob	*frag_plain(struct cache *, struct appfrag *,
		     const struct reg_app *, int);
void		frag_deflate(struct cache *, struct appfrag *, int,
		     const char *, size_t);
void		frag_deflate_scratch(struct cache *, struct appfrag *,
		     const struct reg_app *, int);
const struct gz_frag *frag_gz(struct cache *, struct appfrag *,
		     const struct reg_app *, int, int);
void		plain_drop(struct cache *, int, int64_t);

/* cache_gzchunk.c */
void		chunks_free(struct gzchunks *);
struct gzchunk *chunk_get(struct cache *, int, struct gzchunks *, size_t *,
		     struct gzchunks *, struct appfrag **, const uint64_t *,
		     size_t, int);
void		chunks_keep(struct gzchunks *, struct gzchunks *, size_t);

/* cache_full.c */
struct cache_body *cache_apps_live(struct cache *, const struct cache_key *,
		     int64_t);
int		apps_step(struct cache *, const struct cache_key *, size_t,
		     int64_t);
void		walk_drop(struct cache *, struct slot *);
void		fmap_clear(struct fmap *);
int		run_dead(const struct blob *);

/* cache_ro.c */
struct side	*side_find(struct side *, enum side_kind,
		     const struct cache_key *, const char *);
struct cache_body *cache_delta_live(struct cache *, const struct cache_key *,
		     int64_t);
struct cache_body *cache_app_live(struct cache *, const struct cache_key *,
		     const char *, int64_t);
struct cache_body *cache_vip_live(struct cache *, const struct cache_key *,
		     const char *, int, int64_t);
void		side_free_all(struct side **, size_t *);
struct side	*side_add(struct side **, size_t *, enum side_kind,
		     const struct cache_key *, const char *, uint64_t);
struct cache_body *side_compute(struct cache *, enum side_kind,
		     const struct cache_key *, const char *, int64_t);

/* cache_sliced.c */
int		delta_fresh(const struct cache *, const struct slot *, int64_t);
int		vip_fresh(const struct cache *, const struct side *, int64_t);
struct cache_body *app_handoff(struct appfrag *, int, int, int64_t);
int		side_step(struct cache *, enum side_kind,
		     const struct cache_key *, const char *, size_t, int64_t);
void		sb_free(struct cache *, struct sbuild *);
/* Bytes the builds under way hold (their buffers, deflate states). */
size_t		sb_bytes(const struct cache *);
/* Drop the build of (kind, k, name) under way, if any. */
void		sb_abandon(struct cache *, enum side_kind,
		    const struct cache_key *, const char *);
/* Drop the full body's build under way for k (its walk), if any. */
void		apps_abandon(struct cache *, const struct cache_key *);
/* Whether apps_step (side_step) would encode nothing: the body is current. */
int		apps_ready(const struct cache *, const struct cache_key *,
		    int64_t);
int		side_ready(struct cache *, enum side_kind,
		    const struct cache_key *, const char *, int64_t);

#endif /* CACHE_INT_H */
