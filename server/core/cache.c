/*
 * cache.c: encoded response bodies, built once per change (spec §5.12,
 * design.md). Three layers:
 *
 *  - per-application fragments: the JSON/XML (full and compact) encoding of
 *    one application as it sits inside the full registry, plus its raw
 *    deflate fragment, re-encoded only when that application's generation
 *    moves (register, cancel, status change, metadata: never a heartbeat);
 *  - stitched bodies: the full registry is open + fragments + close. Plain
 *    bodies are a list of references to the fragment blobs (no copy; each
 *    fragment begins with its separator, and the fragments a slice of a
 *    build encodes share one blob, a run, lent as one segment); gzip
 *    bodies are one contiguous gzip stream assembled from the deflate
 *    fragments, copied into chunks of ~32 (each compressed fragment is
 *    kept once, in its chunk), their CRCs joined with combine operators
 *    precomputed when each chunk is made. A build after a change takes
 *    over the previous body's segments whose applications did not change
 *    (struct fmap), so one change costs one application's encode, its
 *    chunk's copy and a generation check per application;
 *  - optional Eureka read-only layer: snapshots refreshed on a timer.
 *
 * A full body that lacks many fragments (the first fetch of a variant, or
 * after many changes) can be built in slices, cache_apps_step(): the
 * missing fragments are encoded a bounded amount per call, then the body
 * is assembled by a walk that keeps its place between calls and begins
 * again when an application it has placed changed meanwhile (one registry
 * version, its hash code exact; struct walk).
 *
 * Bodies never expire by time unless the read-only layer is on (then, as
 * Eureka's read-write cache, after the auto-expiration time).
 *
 * A plain variant's fragments are kept only while that variant is fetched
 * (cache_set_plain_idle): a gzip build deflates the JSON or XML of a
 * variant nobody fetched plain within the idle time from a scratch
 * buffer, and drops the fragments (and the plain body) left from before;
 * Java and Spring Cloud clients only ask for gzip.
 *
 * Deltas are encoded from registry_delta(), which costs O(changes), or
 * a slice at a time from a registry_dwalk that never starts over (a
 * delta after 200,000 recent registrations held the loop 1 to 1.5 s
 * while a fleet kept registering: each change restarted the walk, and
 * the fourth start ran whole; issue 21, 77-delta-churn.sh).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cache.h"
#include "codec.h"
#include "gzip.h"
#include "hash.h"
#include "json.h"
#include "log.h"
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
	struct htab_node node;		/* in cache->frags, by name */
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
};

/*
 * Bytes of every live blob, in the cache or still in flight to a client,
 * and of the per-app gzip fragments: one running total kept where they
 * are made and freed, reported through
 * cache_bytes() so the registry's memory budget can count encodings.
 */
static size_t	cache_blob_bytes;
/* Caches alive; without one a big blob is freed at once (see cache_reap). */
static unsigned	reap_caches;
/*
 * Set while plain_drop() runs: every blob that dies is gathered in
 * reap_batch, then handed to the reaper highest address first.
 */
static int	reap_any;
static struct blob **reap_batch;
static size_t	reap_nbatch, reap_batchcap;

static void	chunks_free(struct gzchunks *);
static struct side *side_find(struct side *, enum side_kind,
		     const struct cache_key *, const char *);
static struct cache_body *cache_apps_live(struct cache *,
		     const struct cache_key *, int64_t);
static int	delta_fresh(const struct cache *, const struct slot *,
		    int64_t);
static struct cache_body *cache_delta_live(struct cache *,
		     const struct cache_key *, int64_t);
static struct cache_body *cache_app_live(struct cache *,
		     const struct cache_key *, const char *, int64_t);
static struct cache_body *cache_vip_live(struct cache *,
		     const struct cache_key *, const char *, int, int64_t);
static int	side_step(struct cache *, enum side_kind,
		     const struct cache_key *, const char *, size_t, int64_t);
static void	sb_free(struct cache *, struct sbuild *);
static int	reap_push(struct blob *);
static void	reap_batch_flush(void);
static int	apps_step(struct cache *, const struct cache_key *, size_t,
		     int64_t);
static void	walk_drop(struct cache *, struct slot *);

/*
 * A blob that takes over a buffer's bytes, allocated to their size: the
 * buffer grew by doubling, and what cache_bytes() counts is the length
 * (a run, a fragment, a gzip chunk kept at its buffer's size held up to
 * twice that).
 */
static struct blob *
blob_from_buf(struct buf *b)
{
	struct blob	*bl = xcalloc(1, sizeof *bl);

	bl->refs = 1;
	buf_trim(b);
	bl->data = buf_steal(b, &bl->len);
	cache_blob_bytes += bl->len;
	return (bl);
}

/* Drop a reference; NULL is fine. */
static void
blob_unref(struct blob *bl)
{
	if (bl == NULL || --bl->refs > 0 || reap_push(bl))
		return;
	cache_blob_bytes -= bl->len;
	free(bl->mem);
	free(bl->data);
	free(bl);
}

/* A body of one segment that takes over a buffer. */
static struct cache_body *
body_from_buf(struct buf *b)
{
	struct cache_body	*cb = xcalloc(1, sizeof *cb);

	cb->refs = 1;
	cb->segs = xmalloc(sizeof *cb->segs);
	cb->segs[0].bl = blob_from_buf(b);
	cb->segs[0].off = 0;
	cb->segs[0].len = cb->segs[0].bl->len;
	cb->nseg = 1;
	cb->len = cb->segs[0].len;
	return (cb);
}

/* Take another reference to a body. */
static struct cache_body *
body_ref(struct cache_body *cb)
{
	cb->refs++;
	return (cb);
}

/* Drop a reference; the last one frees the segments' references. */
void
cache_body_unref(struct cache_body *cb)
{
	size_t	i;

	if (cb == NULL || --cb->refs > 0)
		return;
	for (i = 0; i < cb->nseg; i++)
		blob_unref(cb->segs[i].bl);
	free(cb->segs);
	free(cb);
}

/* Total length in bytes. */
size_t
cache_body_len(const struct cache_body *cb)
{
	return (cb->len);
}

/* Lend each non-empty segment to fn, with a reference fn owns. */
void
cache_body_foreach_seg(const struct cache_body *cb,
    void (*fn)(struct cache_seg *, const char *, size_t, void *), void *arg)
{
	size_t	i;

	for (i = 0; i < cb->nseg; i++) {
		struct blob	*bl = cb->segs[i].bl;

		if (cb->segs[i].len == 0)
			continue;
		bl->refs++;
		fn((struct cache_seg *)(void *)bl, bl->data + cb->segs[i].off,
		    cb->segs[i].len, arg);
	}
}

/* Release a segment reference cache_body_foreach_seg() gave. */
void
cache_seg_unref(struct cache_seg *seg)
{
	blob_unref((struct blob *)(void *)seg);
}

/* Contiguous copy, for tests and the read-only layer's comparisons. */
char *
cache_body_copy(const struct cache_body *cb, size_t *lenp)
{
	char	*p = xmalloc(cb->len + 1), *q = p;
	size_t	 i;

	for (i = 0; i < cb->nseg; i++) {
		memcpy(q, cb->segs[i].bl->data + cb->segs[i].off,
		    cb->segs[i].len);
		q += cb->segs[i].len;
	}
	*q = '\0';
	if (lenp != NULL)
		*lenp = cb->len;
	return (p);
}

/* Variant index of a key. */
static int
variant(const struct cache_key *k)
{
	return ((int)k->format * 2 + (k->compact ? 1 : 0));
}

/* Codec flags of a variant. */
static int
vflags(int v)
{
	return ((v & 1) ? CODEC_COMPACT : CODEC_FULL);
}

/* The codec of a variant: variant() puts the format in bit 1. */
static const struct codec *
vcodec(int v)
{
	static const struct codec *const codecs[] = {
		[CACHE_JSON] = &json_codec,
		[CACHE_XML] = &xml_codec,
	};

	return (codecs[v >> 1]);
}

/*
 * When a body built at t stops being served: never, unless Eureka's
 * read-only layer is on. heureka invalidates on every change (the
 * generations), so a time limit only re-encodes unchanged bodies; at a
 * million instances that is seconds of encoding on the loop when the
 * whole registry expires at once. With the read-only layer, Eureka's
 * read-write cache expires entries after expire_ms (lease timestamps in
 * the bodies refresh that often) and so does ours.
 */
static int64_t
cache_until(const struct cache *c, int64_t t)
{
	if (c->expire_ms <= 0 || t > INT64_MAX - c->expire_ms)
		return (INT64_MAX);
	return (t + c->expire_ms);
}

/* A new cache over reg. */
struct cache *
cache_new(struct registry *reg, int64_t read_only_ms, int64_t expire_ms)
{
	struct cache	*c = xcalloc(1, sizeof *c);
	int		 v;

	c->reg = reg;
	c->ro_ms = read_only_ms;
	reap_caches++;
	for (v = 0; v < NVARIANT; v++)
		c->plain_seen[v] = INT64_MIN;
	if (read_only_ms > 0)
		c->expire_ms = expire_ms > 0 ? expire_ms : 180000;
	htab_init(&c->frags, 64);
	for (v = 0; v < NVARIANT; v++) {
		const char *s = vcodec(v)->sep;

		gzip_frag_make(&c->gzsep[v], s, strlen(s), FRAG_LEVEL);
	}
	return (c);
}

/* Keep a plain variant's fragments only while it is fetched; see cache.h. */
void
cache_set_plain_idle(struct cache *c, int64_t idle_ms)
{
	c->plain_idle_ms = idle_ms > 0 ? idle_ms : 0;
}

/* Whether nobody fetched variant v plain within the idle time. */
static int
plain_idle(const struct cache *c, int v, int64_t now)
{
	if (c->plain_idle_ms <= 0)
		return (0);
	return (c->plain_seen[v] == INT64_MIN ||
	    now - c->plain_seen[v] >= c->plain_idle_ms);
}

/* A fetch of variant v plain at now (its fragments are wanted). */
static void
plain_fetched(struct cache *c, int v, int64_t now)
{
	if (c->plain_seen[v] == INT64_MIN || now > c->plain_seen[v])
		c->plain_seen[v] = now;
}

/*
 * Move the fragments still live in run bl (variant v) into a new run of
 * their own, back to back in the same order, one copy of the live bytes:
 * the records point into it, and the old run, now without records
 * (run_dead), goes with the bodies that still hold it.
 */
static void
run_compact(struct blob *bl, int v)
{
	struct blob	*nb = xcalloc(1, sizeof *nb);
	struct appfrag	*af;
	size_t		 i, n = 0, off = 0;

	for (i = 0; i < bl->nmem; i++)
		if (bl->mem[i] != NULL)
			n++;
	nb->data = xmalloc(bl->live + 1);
	nb->mem = xreallocarray(NULL, n, sizeof *nb->mem);
	for (i = 0; i < bl->nmem; i++) {
		if ((af = bl->mem[i]) == NULL)
			continue;
		memcpy(nb->data + off, bl->data + af->poff[v], af->plen[v]);
		af->plain[v] = nb;
		af->poff[v] = off;
		af->pidx[v] = nb->nmem;
		nb->mem[nb->nmem++] = af;
		off += af->plen[v];
		bl->mem[i] = NULL;
	}
	nb->data[off] = '\0';
	nb->len = nb->live = off;
	nb->refs = (unsigned)n;
	cache_blob_bytes += off;
	/* The records' holds moved; the caller's keeps bl alive. */
	bl->refs -= (unsigned)n;
	bl->live = 0;
}

/*
 * af's fragment for v leaves its blob. When it was a run's and the run's
 * dead bytes pass a quarter of it (compact set), the live fragments move
 * to a new run (run_compact), so the dead ones go with the bodies that
 * hold the old run: the cache holds at most a third more than its live
 * fragments, not up to twice them. The copy is of at most three quarters
 * of a run (RUN_MAX), about three times the changed fragments' bytes
 * over the changes that lead to it; the live fragments stay one run, one
 * segment of a body, rather than one each.
 */
static void
run_leave(struct appfrag *af, int v, int compact)
{
	struct blob	*bl = af->plain[v];

	bl->live -= af->plen[v];
	if (bl->mem != NULL) {
		bl->mem[af->pidx[v]] = NULL;
		if (compact && bl->live > 0 && bl->live * 4 < bl->len * 3)
			run_compact(bl, v);
	}
	blob_unref(bl);
	af->plain[v] = NULL;
}

/*
 * Release one application's encodings; compact: let its runs copy the
 * others out (not when the whole cache goes).
 */
static void
frag_clear(struct appfrag *af, int compact)
{
	int	v, g;

	for (v = 0; v < NVARIANT; v++) {
		if (af->plain[v] != NULL)
			run_leave(af, v, compact);
		if (af->gzbl[v] != NULL) {
			/* Its bytes are its chunk's. */
			blob_unref(af->gzbl[v]);
			af->gzbl[v] = NULL;
			memset(&af->gz[v], 0, sizeof af->gz[v]);
		} else if (af->has_gz[v]) {
			cache_blob_bytes -= af->gz[v].len;
			gzip_frag_clear(&af->gz[v]);
		}
		af->has_gz[v] = 0;
		for (g = 0; g < 2; g++) {
			cache_body_unref(af->root[v][g]);
			af->root[v][g] = NULL;
		}
	}
}

/* Free a side list. */
static void
side_free_all(struct side **head, size_t *n)
{
	struct side	*s, *next;

	for (s = *head; s != NULL; s = next) {
		next = s->next;
		cache_body_unref(s->body);
		free(s->name);
		free(s);
	}
	*head = NULL;
	*n = 0;
}

/* htab_sweep callback: free a fragment record (arg NULL: cache_free). */
static int
frag_free_cb(struct htab_node *n, void *arg)
{
	struct appfrag	*af = CONTAINER_OF(n, struct appfrag, node);

	frag_clear(af, arg != NULL);
	free(af->name);
	free(af);
	return (1);
}

/* htab_sweep callback: free the record of an app that has gone. */
static int
frag_stale_cb(struct htab_node *n, void *arg)
{
	struct cache	*c = arg;
	struct appfrag	*af = CONTAINER_OF(n, struct appfrag, node);
	struct reg_app	*app;

	app = registry_app_find_hashed(c->reg, af->name, n->hash);
	if (app != NULL && reg_app_size(app) > 0)
		return (0);
	return (frag_free_cb(n, c));
}

/* Forget a body's layout. */
static void
fmap_clear(struct fmap *m)
{
	free(m->gens);
	free(m->segs);
	memset(m, 0, sizeof *m);
}

/* Free everything; bodies still referenced by responses live on. */
void
cache_free(struct cache *c)
{
	int		 v, g;

	if (c == NULL)
		return;
	htab_sweep(&c->frags, frag_free_cb, NULL);
	htab_clear(&c->frags);
	for (v = 0; v < NVARIANT; v++) {
		for (g = 0; g < 2; g++) {
			walk_drop(c, &c->full[v][g]);
			cache_body_unref(c->full[v][g].body);
			fmap_clear(&c->full[v][g].map);
			cache_body_unref(c->delta[v][g].body);
			cache_body_unref(c->delta[v][g].src);
		}
		gzip_frag_clear(&c->gzsep[v]);
		chunks_free(&c->gzc[v]);
	}
	side_free_all(&c->vips, &c->nvips);
	side_free_all(&c->ro, &c->nro);
	while (c->sb != NULL)
		sb_free(c, c->sb);
	if (--reap_caches == 0)
		while (cache_reap(SIZE_MAX))
			;
	free(c);
}

/* Counters for /metrics and the benchmarks. */
const struct cache_stats *
cache_stats(const struct cache *c)
{
	return (&c->stats);
}

/* Bytes of the encoded bodies alive, cached or in flight (all caches). */
size_t
cache_bytes(const struct cache *c)
{
	(void)c;
	return (cache_blob_bytes);
}

/* Size and longest chain of the fragment table, for /metrics. */
void
cache_table_stats(struct cache *c, struct htab_stats *st)
{
	htab_stats_scan(&c->frags, &c->fscan, HTAB_SCAN_BUCKETS, st);
}

/*
 * The fragment record of an application, created on demand; h is
 * hash_str(name), which the registry already keeps (reg_app_hash): a full
 * build looks up every application, and at 10,000 of them hashing the
 * names again was 40 % of a gzip fetch after one change.
 */
static struct appfrag *
frag_lookup(struct cache *c, const char *name, uint64_t h)
{
	struct htab_node	*n;
	struct appfrag		*af;

	for (n = htab_first(&c->frags, h); n != NULL; n = n->next) {
		af = CONTAINER_OF(n, struct appfrag, node);
		if (n->hash == h && strcmp(af->name, name) == 0)
			return (af);
	}
	af = xcalloc(1, sizeof *af);
	af->name = xstrdup(name);
	af->gen = UINT64_MAX;
	htab_insert(&c->frags, &af->node, h);
	return (af);
}

/*
 * Drop fragment records of applications that no longer exist. A full
 * build gives every application a record, so there are stale ones only
 * when the records outnumber the applications: only then is the table
 * walked.
 */
static void
frag_sweep(struct cache *c)
{
	if (htab_count(&c->frags) > registry_app_count(c->reg))
		htab_sweep(&c->frags, frag_stale_cb, c);
}

/*
 * Make sure af reflects the app's current generation (and is not too old).
 * Age is judged at now, or during a sliced full build at judge, the time
 * the build began (0: none): with the read-only layer's expiry on, a
 * build that takes about the expiry time would otherwise see the
 * fragments it prepared first expire before its assembly, and end by
 * encoding whole in one turn. A body so built is at most the expiry plus
 * its build old.
 */
static void
frag_sync(struct cache *c, struct appfrag *af, const struct reg_app *app,
    int64_t now, int64_t judge)
{
	int64_t	t = judge > 0 && judge < now ? judge : now;

	if (af->gen == reg_app_gen(app) && t < cache_until(c, af->built))
		return;
	frag_clear(af, 1);
	af->gen = reg_app_gen(app);
	af->built = now;
}

/* Encode an application's instances (between app_open and app_close). */
static void
encode_app(struct buf *b, const struct reg_app *app, int v, int indent)
{
	const struct codec	*cc = vcodec(v);
	size_t			 i, n = reg_app_size(app);

	cc->app_open(b, reg_app_name(app), indent);
	for (i = 0; i < n; i++) {
		if (i > 0 || cc->sep_around)
			buf_adds(b, cc->sep);
		cc->encode_instance(b, reg_app_instance_at(app, i), vflags(v),
		    indent + 1);
	}
	if (cc->sep_around)
		buf_adds(b, cc->sep);
	cc->app_close(b, indent);
}

/*
 * Room in b for af's fragment for v, guessed from its length when it was
 * last encoded (plen outlives the fragment, and a scratch encode sets it
 * too) with an eighth more: an application re-encoded after a change then
 * grows in place, not by doubling with a copy per step (blob_from_buf
 * trims what is left over).
 */
static void
frag_presize(struct buf *b, const struct appfrag *af, int v)
{
	if (af->plen[v] > 0)
		buf_prealloc(b, af->plen[v] + af->plen[v] / 8 + 256);
}

/*
 * The plain fragment of an app for variant v, encoding it if needed. It
 * begins with the separator that joins it to the one before (a full body
 * skips it for its first application unless the codec has sep_around), so
 * a body is one reference per application, not two: at 10,000 apps that
 * is half of a plain fetch's send cost (callgrind).
 */
static struct blob *
frag_plain(struct cache *c, struct appfrag *af, const struct reg_app *app,
    int v)
{
	struct buf	b;

	if (af->plain[v] == NULL) {
		buf_init(&b, 0);
		frag_presize(&b, af, v);
		buf_adds(&b, vcodec(v)->sep);
		encode_app(&b, app, v, 1);
		af->plain[v] = blob_from_buf(&b);
		af->poff[v] = 0;
		af->plen[v] = af->plain[v]->live = af->plain[v]->len;
		c->stats.fragment_encodes++;
		c->work += af->plen[v];
		c->plain_kept[v] = 1;
	}
	return (af->plain[v]);
}

/* Deflate an app's fragment for variant v (its bytes p, len, separator). */
static void
frag_deflate(struct cache *c, struct appfrag *af, int v, const char *p,
    size_t len)
{
	size_t	sl = strlen(vcodec(v)->sep);

	/* Without the separator: the stitch adds its own. */
	gzip_frag_make(&af->gz[v], p + sl, len - sl, FRAG_LEVEL);
	cache_blob_bytes += af->gz[v].len;
	c->work += GZ_WEIGHT * len;
	af->gzser[v] = ++c->gzserial;
	af->has_gz[v] = 1;
}

/*
 * Deflate an app's fragment for variant v from a scratch encode, kept
 * nowhere: the plain variant is idle (plain_idle).
 */
static void
frag_deflate_scratch(struct cache *c, struct appfrag *af,
    const struct reg_app *app, int v)
{
	struct buf	b;

	buf_init(&b, 0);
	frag_presize(&b, af, v);
	buf_adds(&b, vcodec(v)->sep);
	encode_app(&b, app, v, 1);
	c->stats.fragment_encodes++;
	c->work += b.len;
	af->plen[v] = b.len;	/* the next one's size guess only */
	frag_deflate(c, af, v, b.data, b.len);
	buf_free(&b);
}

/*
 * The deflate fragment of an app for variant v (with its CRC operator),
 * from its plain fragment, or, when the plain variant is idle and has
 * none, from a scratch encode.
 */
static const struct gz_frag *
frag_gz(struct cache *c, struct appfrag *af, const struct reg_app *app, int v,
    int idle)
{
	struct blob	*bl;

	if (!af->has_gz[v]) {
		if (idle && af->plain[v] == NULL) {
			frag_deflate_scratch(c, af, app, v);
			return (&af->gz[v]);
		}
		bl = frag_plain(c, af, app, v);
		frag_deflate(c, af, v, bl->data + af->poff[v], af->plen[v]);
	}
	return (&af->gz[v]);
}

/* Encode the registry's opening (or closing) piece for variant v. */
static void
apps_piece(struct buf *b, int v, int closing, int64_t version,
    const char *hash)
{
	if (closing)
		vcodec(v)->apps_close(b, vflags(v), version, hash);
	else
		vcodec(v)->apps_open(b, vflags(v), version, hash);
}

/* Append len bytes of a blob from byte off on (the body's reference). */
static void
body_push_slice(struct cache_body *cb, size_t *cap, struct blob *bl,
    size_t off, size_t len)
{
	if (cb->nseg == *cap) {
		*cap = *cap == 0 ? 16 : *cap * 2;
		cb->segs = xreallocarray(cb->segs, *cap, sizeof *cb->segs);
	}
	cb->segs[cb->nseg].bl = bl;
	cb->segs[cb->nseg].off = off;
	cb->segs[cb->nseg++].len = len;
	cb->len += len;
}

/* Append a whole blob. */
static void
body_push(struct cache_body *cb, size_t *cap, struct blob *bl)
{
	body_push_slice(cb, cap, bl, 0, bl->len);
}

/*
 * Append a shared slice: it extends the last segment when it follows it
 * in the same blob (fragments of one run), else takes a reference.
 */
static void
body_push_shared(struct cache_body *cb, size_t *cap, struct blob *bl,
    size_t off, size_t len)
{
	struct bseg	*last = cb->nseg > 0 ? &cb->segs[cb->nseg - 1] : NULL;

	if (last != NULL && last->bl == bl && last->off + last->len == off) {
		last->len += len;
		cb->len += len;
		return;
	}
	bl->refs++;
	body_push_slice(cb, cap, bl, off, len);
}

/* Append a shared blob (one more reference to it). */
static void
body_push_ref(struct cache_body *cb, size_t *cap, struct blob *bl)
{
	bl->refs++;
	body_push(cb, cap, bl);
}

/* Merge a many-segment body into one blob when it is small. */
static struct cache_body *
body_coalesce(struct cache_body *cb)
{
	struct buf	b;
	size_t		i;

	if (cb->nseg <= 1 || cb->len >= COALESCE_BELOW)
		return (cb);
	buf_init(&b, 0);
	for (i = 0; i < cb->nseg; i++) {
		buf_add(&b, cb->segs[i].bl->data + cb->segs[i].off,
		    cb->segs[i].len);
		blob_unref(cb->segs[i].bl);
	}
	cb->segs[0].bl = blob_from_buf(&b);
	cb->segs[0].off = 0;
	cb->segs[0].len = cb->segs[0].bl->len;
	cb->nseg = 1;
	return (cb);
}

/* Free a chunk list. */
static void
chunks_free(struct gzchunks *l)
{
	size_t	i;

	for (i = 0; i < l->n; i++) {
		blob_unref(l->v[i].bl);
		free(l->v[i].ser);
	}
	free(l->v);
	memset(l, 0, sizeof *l);
}

/*
 * Point the fragments a new chunk copied at their bytes in it and free
 * their own (or drop their hold on the chunk they were in before): each
 * compressed fragment is kept once, in the chunk that holds it, and a
 * chunk rebuilt after a change copies its other fragments from there.
 */
static void
chunk_adopt(struct gzchunk *k, int v, struct appfrag **afv,
    const size_t *off)
{
	struct appfrag	*af;
	size_t		 j;

	for (j = 0; j < k->n; j++) {
		af = afv[j];
		if (af->gzbl[v] == k->bl)
			continue;
		if (af->gzbl[v] != NULL)
			blob_unref(af->gzbl[v]);
		else {
			cache_blob_bytes -= af->gz[v].len;
			free(af->gz[v].data);
		}
		af->gz[v].data = k->bl->data + off[j];
		af->gzbl[v] = k->bl;
		k->bl->refs++;
	}
}

/*
 * The chunk of the fragments of afv[0..n) for v (serials ser, a leading
 * separator when lead): moved from the previous build's list when it
 * holds the same fragments (looked for a few places ahead of *oi, as both
 * lists are in registry order), else copied anew. Appended to nw.
 */
static struct gzchunk *
chunk_get(struct cache *c, int v, struct gzchunks *old, size_t *oi,
    struct gzchunks *nw, struct appfrag **afv, const uint64_t *ser,
    size_t n, int lead)
{
	struct gzchunk	*k, *o;
	struct buf	 b;
	size_t		 j, len, *off;

	if (nw->n == nw->cap) {
		nw->cap = nw->cap == 0 ? 16 : nw->cap * 2;
		nw->v = xreallocarray(nw->v, nw->cap, sizeof *nw->v);
	}
	k = &nw->v[nw->n++];
	for (j = *oi; j < old->n && j < *oi + 4; j++) {
		o = &old->v[j];
		if (o->bl != NULL && o->n == n && o->lead == lead &&
		    memcmp(o->ser, ser, n * sizeof *ser) == 0) {
			*k = *o;
			o->bl = NULL;
			o->ser = NULL;
			*oi = j + 1;
			return (k);
		}
	}
	memset(k, 0, sizeof *k);
	buf_init(&b, 0);
	/* Its exact size: one allocation, no copies as it grows. */
	for (j = 0, len = 0; j < n; j++)
		len += (j > 0 || lead ? c->gzsep[v].len : 0) +
		    afv[j]->gz[v].len;
	buf_prealloc(&b, len);
	off = xreallocarray(NULL, n, sizeof *off);
	k->sum.crc = 0;
	for (j = 0; j < n; j++) {
		if (j > 0 || lead)
			gzip_stitch_add(&b, &c->gzsep[v], &k->sum.crc,
			    &k->sum.raw_len);
		off[j] = b.len;
		gzip_stitch_add(&b, &afv[j]->gz[v], &k->sum.crc,
		    &k->sum.raw_len);
	}
	k->bl = blob_from_buf(&b);
	c->stats.gz_chunk_builds++;
	c->work += k->bl->len / 4;	/* the copy: a quarter of an encode */
	k->sum.len = k->bl->len;
	k->sum.op = gzip_combine_op(k->sum.raw_len);
	k->lead = lead;
	k->n = n;
	k->ser = xreallocarray(NULL, n, sizeof *k->ser);
	memcpy(k->ser, ser, n * sizeof *ser);
	chunk_adopt(k, v, afv, off);
	free(off);
	return (k);
}

/*
 * An aborted gzip build: the chunks it made or moved (nw, for the
 * applications before where it stopped) and the previous build's chunks it
 * had not reached yet (old from *oi) stay, in registry order, for the next
 * attempt to reuse; the ones it skipped go.
 */
static void
chunks_keep(struct gzchunks *nw, struct gzchunks *old, size_t oi)
{
	size_t	i;

	for (i = oi; i < old->n; i++) {
		if (old->v[i].bl == NULL)
			continue;
		if (nw->n == nw->cap) {
			nw->cap = nw->cap == 0 ? 16 : nw->cap * 2;
			nw->v = xreallocarray(nw->v, nw->cap, sizeof *nw->v);
		}
		nw->v[nw->n++] = old->v[i];
		old->v[i].bl = NULL;
		old->v[i].ser = NULL;
	}
	chunks_free(old);
}

/* Append a segment [first, end) to a layout. */
static void
fmap_push(struct fmap *m, size_t first, size_t end, int lead)
{
	if (m->nseg == m->cap) {
		m->cap = m->cap == 0 ? 64 : m->cap * 2;
		m->segs = xreallocarray(m->segs, m->cap, sizeof *m->segs);
	}
	m->segs[m->nseg].first = first;
	m->segs[m->nseg].end = end;
	m->segs[m->nseg++].lead = lead;
}

/*
 * Whether segment ms of layout om holds what a walk would put there from
 * application index i on, with lead the separator it would begin with:
 * the same indexes at the same generations (see struct fmap).
 */
static int
fmap_same(const struct cache *c, const struct fmap *om, size_t ms, size_t i,
    int lead)
{
	const struct fmseg	*g = &om->segs[ms];
	size_t			 j;

	if (g->first != i || g->lead != lead || g->end > om->napps ||
	    g->end > registry_app_count(c->reg))
		return (0);
	for (j = g->first; j < g->end; j++)
		if (reg_app_gen(registry_app_at(c->reg, j)) != om->gens[j])
			return (0);
	return (1);
}

/*
 * A walk of the registry for a full body (build_full), kept by its slot
 * between slices: the body so far (its first segment left empty for the
 * opening piece, which carries the hash code and is made at the end), its
 * layout (nm; gens[j] the generation application index j had when placed,
 * for every j < i), the previous body and layout it takes segments over
 * from, for gzip the chunk being gathered and the running CRC and length
 * of what follows the opening piece. Between slices it holds no fragment
 * record (where a gzip walk stops, its chunk ends: the bytes are the same
 * wherever chunks end, only the next build's reuse of that one is lost),
 * only references to blobs and chunks, so nothing can dangle when the
 * registry or another build changes the records meanwhile. The body is the registry's at the
 * end of the walk when no index below i changed generation since it was
 * placed (walk_valid): indexes at or past i are read as they are then, a
 * new application is appended, and a dropped one moves the last into its
 * index, which changes that index's generation.
 */
struct walk {
	struct cache		 *c;
	int			  v, gz;
	int			  idle;		/* plain_idle() */
	struct cache_body	 *cb;
	size_t			  cap;
	struct fmap		  nm;
	size_t			  gcap;		/* nm.gens allocated */
	struct fmap		  om;		/* the previous layout, if used */
	int			  use;
	struct cache_body	 *ob;		/* the previous body, if used */
	size_t			  i, ms;	/* next index, next om segment */
	uint64_t		  seen;		/* registry_gen when it stopped */
	int64_t			  oldest;	/* oldest fragment placed */
	int			  first;	/* no app placed yet */
	struct gzchunks		  old;		/* the previous ones */
	size_t			  oi;
	struct appfrag		**afv;		/* the chunk gathered */
	uint64_t		 *ser;
	size_t			  m, mcap, mbytes, mfirst;
	int			  lead;
	uint32_t		  crc;
	size_t			  raw;
};

/* Close the chunk being gathered, ending before application index end. */
static void
walk_chunk(struct walk *w, size_t end)
{
	struct gzchunk	*k;

	k = chunk_get(w->c, w->v, &w->old, &w->oi, &w->c->gzc[w->v], w->afv,
	    w->ser, w->m, w->lead);
	body_push_ref(w->cb, &w->cap, k->bl);
	gzip_stitch_fold(&k->sum, &w->crc, &w->raw);
	fmap_push(&w->nm, w->mfirst, end, w->lead);
	w->m = w->mbytes = 0;
}

/* Place application index i (af its record) in the body. */
static void
walk_app(struct walk *w, size_t i, struct appfrag *af,
    const struct reg_app *app)
{
	struct cache	*c = w->c;
	int		 v = w->v, lead = !w->first || vcodec(v)->sep_around;
	size_t		 skip, nseg = w->cb->nseg;
	struct blob	*bl;

	if (w->gz) {
		if (w->m == w->mcap) {
			w->mcap = w->mcap == 0 ? 64 : w->mcap * 2;
			w->afv = xreallocarray(w->afv, w->mcap,
			    sizeof *w->afv);
			w->ser = xreallocarray(w->ser, w->mcap,
			    sizeof *w->ser);
		}
		if (w->m == 0) {
			w->lead = lead;
			w->mfirst = i;
		}
		w->mbytes += frag_gz(c, af, app, v, w->idle)->len;
		w->afv[w->m] = af;
		w->ser[w->m++] = af->gzser[v];
		if ((af->node.hash & GZ_CHUNK_MASK) == 0 ||
		    w->mbytes >= GZ_CHUNK_MAX)
			walk_chunk(w, i + 1);
	} else {
		bl = frag_plain(c, af, app, v);
		skip = lead ? 0 : strlen(vcodec(v)->sep);
		body_push_shared(w->cb, &w->cap, bl, af->poff[v] + skip,
		    af->plen[v] - skip);
		if (w->cb->nseg > nseg)
			fmap_push(&w->nm, i, i + 1, lead);
		else
			w->nm.segs[w->nm.nseg - 1].end = i + 1;
	}
	w->first = 0;
}

/*
 * Reuse segment ms of the previous body (layout om, body ob): its chunk
 * moved to the new list, or its run referenced again.
 */
static void
walk_reuse(struct walk *w, const struct fmap *om,
    const struct cache_body *ob, size_t ms)
{
	const struct fmseg	*g = &om->segs[ms];
	const struct bseg	*bs;
	struct gzchunks		*nw = &w->c->gzc[w->v];
	struct gzchunk		*k;
	size_t			 nseg = w->cb->nseg;

	w->c->work += ASM_WEIGHT;
	w->c->stats.asm_apps += g->end - g->first;

	if (w->gz) {
		if (nw->n == nw->cap) {
			nw->cap = nw->cap == 0 ? 16 : nw->cap * 2;
			nw->v = xreallocarray(nw->v, nw->cap, sizeof *nw->v);
		}
		k = &nw->v[nw->n++];
		*k = w->old.v[ms];
		w->old.v[ms].bl = NULL;
		w->old.v[ms].ser = NULL;
		w->oi = ms + 1;
		body_push_ref(w->cb, &w->cap, k->bl);
		gzip_stitch_fold(&k->sum, &w->crc, &w->raw);
		fmap_push(&w->nm, g->first, g->end, g->lead);
	} else {
		bs = &ob->segs[ms + 1];
		body_push_shared(w->cb, &w->cap, bs->bl, bs->off, bs->len);
		if (w->cb->nseg > nseg)
			fmap_push(&w->nm, g->first, g->end, g->lead);
		else
			w->nm.segs[w->nm.nseg - 1].end = g->end;
	}
	w->first = 0;
	w->c->stats.seg_reuses++;
}

/*
 * Whether a layout describes its slot's body: every segment between the
 * opening and closing pieces is one of its entries (a coalesced body has
 * none), and for gzip the chunk list is that body's. Only without time
 * expiry: an unchanged generation then means unchanged bytes.
 */
static int
fmap_usable(const struct cache *c, const struct slot *s, int v, int gz)
{
	if (s->map.gens == NULL || s->body == NULL || c->expire_ms > 0)
		return (0);
	if (gz)
		return (c->gzc[v].n == s->map.nseg);
	return (s->body->nseg == s->map.nseg + 2);
}

/*
 * Whether a plain segment's blob is a run whose records have moved out of
 * it (run_compact): reusing it would keep the dead run alive.
 */
static int
run_dead(const struct blob *bl)
{
	return (bl->mem != NULL && bl->live * 2 < bl->len);
}

/* Let go of a walk's previous body and layout. */
static void
walk_unuse(struct walk *w)
{
	cache_body_unref(w->ob);
	w->ob = NULL;
	free(w->om.segs);
	w->om.segs = NULL;
	w->use = 0;
}

/*
 * Drop slot s's walk, if any (its new start, or the slot's end): the
 * chunks it made or moved and the previous build's it had not reached
 * stay, in registry order, for the next walk to reuse; the ones it
 * skipped go (chunks_keep). The fragments it encoded stay too.
 */
static void
walk_drop(struct cache *c, struct slot *s)
{
	struct walk	*w = s->walk;

	if (w == NULL)
		return;
	if (w->gz)
		chunks_keep(&c->gzc[w->v], &w->old, w->oi);
	walk_unuse(w);
	fmap_clear(&w->nm);
	free(w->afv);
	free(w->ser);
	cache_body_unref(w->cb);
	free(w);
	s->walk = NULL;
}

/*
 * Begin slot s's walk for variant v. The slot's layout is taken over (a
 * walk dropped before its end leaves it none) and the new generations are
 * written over the old ones, in place: an index below the walk's is never
 * read again, and a reused segment's are equal (no copy, no clearing of
 * ~80 KB per build).
 */
static struct walk *
walk_begin(struct cache *c, struct slot *s, int v, int gz, int64_t now)
{
	struct walk	*w = xcalloc(1, sizeof *w);
	size_t		 napps = registry_app_count(c->reg);

	w->c = c;
	w->v = v;
	w->gz = gz;
	w->idle = gz && plain_idle(c, v, now);
	w->first = 1;
	w->use = fmap_usable(c, s, v, gz);
	w->om = s->map;
	memset(&s->map, 0, sizeof s->map);
	if (!w->use)
		fmap_clear(&w->om);
	else
		w->ob = body_ref(s->body);
	w->gcap = napps > 0 ? napps : 1;
	w->nm.gens = xreallocarray(w->om.gens, w->gcap, sizeof *w->nm.gens);
	w->om.gens = w->nm.gens;
	w->oldest = now;
	w->cb = xcalloc(1, sizeof *w->cb);
	w->cb->refs = 1;
	body_push_slice(w->cb, &w->cap, NULL, 0, 0);	/* opening, at the end */
	if (gz) {
		w->old = c->gzc[v];
		memset(&c->gzc[v], 0, sizeof c->gzc[v]);
	}
	s->walk = w;
	return (w);
}

/*
 * Whether the walk's body so far is still the registry's: no index below
 * the walk's changed generation since it was placed (struct walk). Only
 * looked at when the registry moved since the walk stopped.
 */
static int
walk_valid(const struct cache *c, const struct walk *w)
{
	size_t	j;

	if (registry_gen(c->reg) == w->seen)
		return (1);
	if (w->i > registry_app_count(c->reg))
		return (0);
	for (j = 0; j < w->i; j++)
		if (reg_app_gen(registry_app_at(c->reg, j)) != w->nm.gens[j])
			return (0);
	return (1);
}

/* The opening and closing pieces around the walk's body, now whole. */
static struct cache_body *
walk_finish(struct cache *c, struct walk *w)
{
	struct buf	 b, p;
	struct gz_frag	 piece, rest;
	char		*hash = registry_hashcode(c->reg);
	uint32_t	 crc;
	size_t		 raw;

	if (w->gz && w->m > 0)
		walk_chunk(w, registry_app_count(c->reg));
	buf_init(&p, 0);
	apps_piece(&p, w->v, 0, 1, hash);
	if (w->gz) {
		buf_init(&b, 0);
		gzip_stitch_begin(&b, &crc, &raw);
		gzip_frag_store(&piece, p.data, p.len);
		gzip_stitch_add(&b, &piece, &crc, &raw);
		gzip_frag_clear(&piece);
		buf_free(&p);
		/* What the walk folded, after the opening piece. */
		memset(&rest, 0, sizeof rest);
		rest.crc = w->crc;
		rest.raw_len = w->raw;
		rest.op = gzip_combine_op(w->raw);
		gzip_stitch_fold(&rest, &crc, &raw);
		w->cb->segs[0].bl = blob_from_buf(&b);
	} else
		w->cb->segs[0].bl = blob_from_buf(&p);
	w->cb->segs[0].len = w->cb->segs[0].bl->len;
	w->cb->len += w->cb->segs[0].len;
	buf_init(&p, 0);
	if (vcodec(w->v)->sep_around)
		buf_adds(&p, vcodec(w->v)->sep);
	apps_piece(&p, w->v, 1, 1, hash);
	if (w->gz) {
		buf_init(&b, 0);
		gzip_frag_store(&piece, p.data, p.len);
		gzip_stitch_add(&b, &piece, &crc, &raw);
		gzip_frag_clear(&piece);
		gzip_stitch_end(&b, crc, raw);
		body_push(w->cb, &w->cap, blob_from_buf(&b));
		buf_free(&p);
	} else
		body_push(w->cb, &w->cap, blob_from_buf(&p));
	free(hash);
	return (w->cb);
}

/*
 * Build the full registry body for variant v (slot s) from fragments.
 * Plain: a list of references to them between an opening and a closing
 * piece. Gzip: a header, chunks of ~32 applications' compressed fragments
 * (struct gzchunk) by reference, a trailer; CRCs folded with precomputed
 * operators. Not a reference per fragment: a gzip fragment is ~2-3 KB,
 * and each reference costs an evbuffer chain (an allocation and an iovec)
 * on every send (callgrind: 205k instructions per cached gzip fetch at
 * N = 10k with a reference per fragment, 40k with one copy). Not one
 * copy of everything either: at N = 1M that is 26 MB per change.
 *
 * The previous body's segments whose applications did not change (its
 * layout, struct fmap) are taken over as they are, so a build after one
 * change looks up and places only the applications of the segment that
 * holds it: at 10,000 applications the walk of every record was ~2.3M
 * instructions, the generation check of every index is ~0.15M.
 *
 * The walk (struct walk) goes on from where the last call stopped, or
 * begins again when the registry changed behind it (after MAX_TRIES new
 * starts it runs whole), until its work since this call began (slice
 * units, ASM_WEIGHT an application, with the fragments it encodes and
 * the chunks it copies) passes limit (SIZE_MAX: none): then it stops,
 * keeps its place and returns NULL; at the registry's end it returns the
 * body (one registry version, its hash code exact), *oldest the time of
 * the oldest fragment in it. Fragments are judged by judge (frag_sync).
 */
static struct cache_body *
build_full(struct cache *c, struct slot *s, int v, int gz, int64_t now,
    int64_t judge, size_t limit, int64_t *oldest)
{
	struct walk		*w = s->walk;
	struct cache_body	*cb;
	size_t			 w0 = c->work;

	if (w != NULL && !walk_valid(c, w)) {
		walk_drop(c, s);
		w = NULL;
		s->tries++;
		c->stats.build_aborts++;
	}
	if (s->tries >= MAX_TRIES)
		limit = SIZE_MAX;
	if (w == NULL)
		w = walk_begin(c, s, v, gz, now);
	if (w->use && w->ob != s->body)
		walk_unuse(w);		/* (a body the layout does not describe) */
	while (w->i < registry_app_count(c->reg)) {
		struct reg_app	*app;
		struct appfrag	*af;
		size_t		 i = w->i;

		if (limit != SIZE_MAX && c->work - w0 > limit) {
			/* A chunk ends where a walk stops (struct walk). */
			if (w->m > 0)
				walk_chunk(w, i);
			w->seen = registry_gen(c->reg);
			return (NULL);
		}
		if (w->use && w->m == 0) {
			while (w->ms < w->om.nseg && w->om.segs[w->ms].first < i)
				w->ms++;
			if (w->ms < w->om.nseg && fmap_same(c, &w->om, w->ms, i,
			    !w->first || vcodec(v)->sep_around) &&
			    (gz || !run_dead(w->ob->segs[w->ms + 1].bl))) {
				walk_reuse(w, &w->om, w->ob, w->ms);
				w->i = w->om.segs[w->ms++].end;
				continue;
			}
		}
		if (i >= w->gcap) {
			w->gcap *= 2;
			w->nm.gens = xreallocarray(w->nm.gens, w->gcap,
			    sizeof *w->nm.gens);
			w->om.gens = w->nm.gens;
		}
		app = registry_app_at(c->reg, i);
		w->nm.gens[i] = reg_app_gen(app);
		if (reg_app_size(app) > 0) {
			af = frag_lookup(c, reg_app_name(app),
			    reg_app_hash(app));
			frag_sync(c, af, app, now, judge);
			if (af->built < w->oldest)
				w->oldest = af->built;
			walk_app(w, i, af, app);
			c->work += ASM_WEIGHT;
			c->stats.asm_apps++;
		}
		w->i = i + 1;
	}
	w->nm.napps = registry_app_count(c->reg);
	cb = walk_finish(c, w);
	*oldest = w->oldest;
	w->cb = NULL;
	if (gz)
		chunks_free(&w->old);
	frag_sweep(c);
	c->stats.full_builds++;
	walk_unuse(w);
	s->map = w->nm;
	free(w->afv);
	free(w->ser);
	free(w);
	s->walk = NULL;
	return (body_coalesce(cb));
}

/* htab_sweep callback: release a record's plain fragment for *(int *)arg. */
static int
frag_unplain_cb(struct htab_node *n, void *arg)
{
	struct appfrag	*af = CONTAINER_OF(n, struct appfrag, node);
	int		 v = *(int *)arg;

	if (af->plain[v] != NULL)
		run_leave(af, v, 0);
	return (0);
}

/*
 * Before a gzip build or fetch of variant v: when the plain variant is
 * idle and fragments of it are kept, drop them and the plain full body
 * (every record's fragment leaves, so no run is compacted; a body still
 * in flight keeps its blobs until it is sent). What dies goes to the
 * reaper whatever its size (cache_reap): at a million instances this is
 * 1-1.5 GB of runs and fragments, 100-200 ms of page freeing in one
 * turn. A later plain fetch builds them again in slices, as a first
 * fetch does.
 */
static void
plain_drop(struct cache *c, int v, int64_t now)
{
	struct slot	*s = &c->full[v][0];

	if (!c->plain_kept[v] || !plain_idle(c, v, now))
		return;
	reap_any = 1;
	walk_drop(c, s);
	cache_body_unref(s->body);
	s->body = NULL;
	fmap_clear(&s->map);
	s->pending = 0;
	s->next = 0;
	s->tries = 0;
	htab_sweep(&c->frags, frag_unplain_cb, &v);
	reap_any = 0;
	reap_batch_flush();
	c->plain_kept[v] = 0;
	c->stats.plain_drops++;
}

/* Whether a full slot's body is current. */
static int
slot_fresh(const struct cache *c, const struct slot *s, int64_t now)
{
	return (s->body != NULL && s->gen == registry_gen(c->reg) &&
	    now < s->expires);
}

/*
 * Assemble a full slot's body within limit, fragments judged by judge
 * (see build_full); 1 when it is current, 0 when the walk stopped (it
 * goes on from there; the preparation, s->next, from there or beyond).
 */
static int
slot_assemble(struct cache *c, int v, int g, int64_t now, size_t limit,
    int64_t judge)
{
	struct slot		*s = &c->full[v][g];
	struct cache_body	*cb;
	int64_t			 oldest;

	if ((cb = build_full(c, s, v, g, now, judge, limit, &oldest)) == NULL) {
		if (!s->pending) {
			s->started = now;
			s->next = 0;
		}
		s->pending = 1;
		if (s->next < s->walk->i)
			s->next = s->walk->i;
		return (0);
	}
	cache_body_unref(s->body);
	s->body = cb;
	s->gen = registry_gen(c->reg);
	/*
	 * A sliced build may take fragments older than the expiry (frag_sync,
	 * judge): its body still serves the turn it was assembled in, so
	 * the caller gets it instead of assembling again whole.
	 */
	s->expires = cache_until(c, oldest);
	if (s->expires <= now)
		s->expires = now + 1;
	s->pending = 0;
	s->tries = 0;
	return (1);
}

/* The full registry (GET apps), live. */
static struct cache_body *
cache_apps_live(struct cache *c, const struct cache_key *k, int64_t now)
{
	int		 v = variant(k), g = k->gzip ? 1 : 0;
	struct slot	*s = &c->full[v][g];

	if (g)
		plain_drop(c, v, now);
	if (slot_fresh(c, s, now)) {
		c->stats.hits++;
		return (body_ref(s->body));
	}
	slot_assemble(c, v, g, now, SIZE_MAX, s->pending ? s->started : 0);
	return (body_ref(s->body));
}

/*
 * The plain fragments one slice encodes, back to back in one buffer that
 * becomes one blob (a run): a body built from them is one reference per
 * run, not per application. Records point into the buffer only once it is
 * a blob (run_close), all within one call: nothing dangles.
 */
struct run {
	struct buf	  b;
	struct appfrag	**af;
	size_t		 *off;
	size_t		  n, cap;
};

/* Encode an app's fragment for variant v into run r (and deflate it). */
static void
run_add(struct cache *c, struct run *r, struct appfrag *af,
    const struct reg_app *app, int v, int gz)
{
	size_t	off = r->b.len;

	if (r->n == r->cap) {
		r->cap = r->cap == 0 ? 64 : r->cap * 2;
		r->af = xreallocarray(r->af, r->cap, sizeof *r->af);
		r->off = xreallocarray(r->off, r->cap, sizeof *r->off);
	}
	buf_adds(&r->b, vcodec(v)->sep);
	encode_app(&r->b, app, v, 1);
	r->af[r->n] = af;
	r->off[r->n++] = off;
	af->plen[v] = r->b.len - off;
	c->stats.fragment_encodes++;
	c->work += af->plen[v];
	if (gz && !af->has_gz[v])
		frag_deflate(c, af, v, r->b.data + off, af->plen[v]);
}

/* Make run r's buffer a blob its records point into; r starts afresh. */
static void
run_close(struct cache *c, struct run *r, int v)
{
	struct blob	*bl;
	size_t		 i;

	if (r->n == 0)
		return;
	bl = blob_from_buf(&r->b);
	bl->refs = (unsigned)r->n;
	bl->live = bl->len;
	for (i = 0; i < r->n; i++) {
		r->af[i]->plain[v] = bl;
		r->af[i]->poff[v] = r->off[i];
		r->af[i]->pidx[v] = i;
	}
	bl->mem = r->af;
	bl->nmem = r->n;
	c->plain_kept[v] = 1;
	r->af = NULL;
	free(r->off);
	r->off = NULL;
	r->n = r->cap = 0;
	buf_init(&r->b, 0);
}

/*
 * Encode the missing fragments of variant v (and their deflate, gz) from
 * application *next on, until the work since w0 passes limit (each
 * application looked at counts ASM_WEIGHT / 4), fragments judged by judge
 * (frag_sync): 1 when it reached the last application. Only an index is
 * kept between calls, so nothing here can dangle when the registry
 * changes in between: an app moved below the index by a removal is
 * simply found by the assembly.
 */
static int
build_prepare(struct cache *c, int v, int gz, size_t *next, size_t w0,
    size_t limit, int64_t now, int64_t judge)
{
	struct reg_app	*app;
	struct appfrag	*af;
	struct run	 r = { .n = 0 };
	int		 done = 1, idle = gz && plain_idle(c, v, now);

	buf_init(&r.b, 0);
	for (; *next < registry_app_count(c->reg); (*next)++) {
		if (c->work - w0 > limit) {
			done = 0;
			break;
		}
		app = registry_app_at(c->reg, *next);
		if (reg_app_size(app) == 0)
			continue;
		c->work += ASM_WEIGHT / 4;
		af = frag_lookup(c, reg_app_name(app), reg_app_hash(app));
		frag_sync(c, af, app, now, judge);
		if (af->plain[v] == NULL && idle) {
			if (!af->has_gz[v])
				frag_deflate_scratch(c, af, app, v);
		} else if (af->plain[v] == NULL)
			run_add(c, &r, af, app, v, gz);
		else if (gz)
			(void)frag_gz(c, af, app, v, idle);
		if (r.b.len >= RUN_MAX)
			run_close(c, &r, v);
	}
	run_close(c, &r, v);
	buf_free(&r.b);
	free(r.af);
	free(r.off);
	return (done);
}

/*
 * One slice of the full registry's build for k; see cache.h. The first
 * call tries the whole build within the budget (after one change it fits,
 * and the reply goes out in the same turn; a body never built starts
 * with the preparation instead, so that all its fragments come in runs);
 * when that runs out, the
 * following calls prepare the remaining fragments a slice at a time, from
 * where the walk stopped, then let the walk go on (build_full). A walk
 * begun again MAX_TRIES times runs whole, so a build always ends. The
 * build's start judges its fragments' age throughout (frag_sync).
 */
int
cache_apps_step(struct cache *c, const struct cache_key *k, size_t budget,
    int64_t now)
{
	if (!k->gzip)
		plain_fetched(c, variant(k), now);
	if (c->ro_ms > 0 && side_find(c->ro, SIDE_APPS, k, NULL) != NULL)
		return (1);
	return (apps_step(c, k, budget == 0 ? SIZE_MAX : budget, now));
}

/*
 * One slice of the read-write layer's full body for k, within budget
 * (SIZE_MAX: no bound), whether or not a read-only snapshot stands in
 * front of it; see cache_apps_step.
 */
static int
apps_step(struct cache *c, const struct cache_key *k, size_t budget,
    int64_t now)
{
	int		 v = variant(k), g = k->gzip ? 1 : 0;
	struct slot	*s = &c->full[v][g];
	size_t		 w0 = c->work;

	if (g)
		plain_drop(c, v, now);
	if (slot_fresh(c, s, now)) {
		s->pending = 0;
		return (1);
	}
	c->stats.build_steps++;
	if (s->body == NULL && !s->pending && budget != SIZE_MAX) {
		/* Never built: prepare in runs from the start. */
		s->pending = 1;
		s->next = 0;
		s->started = now;
	}
	if (s->pending && (!build_prepare(c, v, g, &s->next, w0, budget, now,
	    s->started) || c->work - w0 > budget))
		return (0);
	return (slot_assemble(c, v, g, now, budget == SIZE_MAX ? SIZE_MAX :
	    budget - (c->work - w0), s->pending ? s->started : 0));
}

/* Encode a struct applications for variant v, gzip if asked. */
static struct cache_body *
encode_applications(const struct applications *as, int v, int gz)
{
	struct buf	b, z;

	buf_init(&b, 0);
	vcodec(v)->encode_applications(&b, as, vflags(v));
	if (!gz)
		return (body_from_buf(&b));
	buf_init(&z, 0);
	gzip_compress(b.data != NULL ? b.data : "", b.len, &z, GZIP_LEVEL);
	buf_free(&b);
	return (body_from_buf(&z));
}

/* The delta (GET apps/delta), live; O(changes). */
static struct cache_body *
cache_delta_live(struct cache *c, const struct cache_key *k, int64_t now)
{
	int			 v = variant(k);
	struct slot		*s = &c->delta[v][0], *z = &c->delta[v][1];
	struct applications	*as;
	struct cache_key	 plain = *k;
	struct cache_body	*src;
	char			*p;
	size_t			 len;
	struct buf		 b;

	if (k->gzip) {
		/* The sliced build's body, in the turn it was finished. */
		if (z->body != NULL && z->handoff && z->handoff_at == now) {
			c->stats.hits++;
			return (body_ref(z->body));
		}
		/*
		 * Eureka keeps a payload and its gzip in one cache value, so
		 * both carry the same delta version: compress the plain body
		 * rather than building the delta a second time. z holds a
		 * reference to its source, so the pointer test is sound.
		 */
		plain.gzip = 0;
		src = cache_delta_live(c, &plain, now);
		if (z->body == NULL || z->src != src) {
			cache_body_unref(z->body);
			cache_body_unref(z->src);
			p = cache_body_copy(src, &len);
			buf_init(&b, 0);
			gzip_compress(p, len, &b, GZIP_LEVEL);
			free(p);
			z->body = body_from_buf(&b);
			z->src = body_ref(src);
			z->handoff = 0;
		} else
			c->stats.hits++;
		cache_body_unref(src);
		return (body_ref(z->body));
	}
	if (delta_fresh(c, s, now)) {
		c->stats.hits++;
		return (body_ref(s->body));
	}
	cache_body_unref(s->body);
	as = registry_delta(c->reg, now);
	/* Eureka bumps the delta version on every generation (§5.12). */
	as->versions_delta = ++c->delta_version;
	free(as->apps_hashcode);
	/* A delta that may lack a dropped change must not reconcile. */
	as->apps_hashcode = registry_delta_complete(c->reg, now) ?
	    registry_hashcode(c->reg) : xstrdup(REGISTRY_HASHCODE_TRUNCATED);
	s->body = encode_applications(as, v, 0);
	applications_free(as);
	s->gen = registry_gen(c->reg);
	s->dsize = registry_delta_size(c->reg);
	s->expires = cache_until(c, now);
	s->handoff = 0;
	c->stats.delta_builds++;
	return (body_ref(s->body));
}

/* One application (GET apps/{app}), live; NULL when it has no instance. */
static struct cache_body *
cache_app_live(struct cache *c, const struct cache_key *k, const char *name,
    int64_t now)
{
	struct reg_app	*app = registry_app_find(c->reg, name);
	struct appfrag	*af;
	struct buf	 b, z;
	int		 v = variant(k), g = k->gzip ? 1 : 0;

	if (app == NULL || reg_app_size(app) == 0)
		return (NULL);
	af = frag_lookup(c, reg_app_name(app), reg_app_hash(app));
	frag_sync(c, af, app, now, 0);
	if (af->root[v][g] != NULL) {
		c->stats.hits++;
		return (body_ref(af->root[v][g]));
	}
	buf_init(&b, 0);
	buf_adds(&b, vcodec(v)->app_doc_open);
	encode_app(&b, app, v, 0);
	buf_adds(&b, vcodec(v)->app_doc_close);
	if (g) {
		buf_init(&z, 0);
		gzip_compress(b.data, b.len, &z, GZIP_LEVEL);
		buf_free(&b);
		af->root[v][g] = body_from_buf(&z);
	} else
		af->root[v][g] = body_from_buf(&b);
	return (body_ref(af->root[v][g]));
}

/* Find a side entry. */
static struct side *
side_find(struct side *head, enum side_kind kind, const struct cache_key *k,
    const char *name)
{
	struct side	*s;

	for (s = head; s != NULL; s = s->next) {
		if (s->kind == kind && s->key.format == k->format &&
		    s->key.compact == k->compact && s->key.gzip == k->gzip &&
		    ((s->name == NULL && name == NULL) ||
		    (s->name != NULL && name != NULL &&
		    strcmp(s->name, name) == 0)))
			return (s);
	}
	return (NULL);
}

/* Unlink and free a side entry. */
static void
side_remove(struct side **head, size_t *n, struct side *s)
{
	struct side	**pp;

	for (pp = head; *pp != s; pp = &(*pp)->next)
		;
	*pp = s->next;
	(*n)--;
	cache_body_unref(s->body);
	free(s->name);
	free(s);
}

/* Add a side entry, flushing the list when it reaches its bound. */
static struct side *
side_add(struct side **head, size_t *n, enum side_kind kind,
    const struct cache_key *k, const char *name, uint64_t pass)
{
	struct side	*s;

	if (*n >= MAX_SIDE_ENTRIES)
		side_free_all(head, n);
	s = xcalloc(1, sizeof *s);
	s->kind = kind;
	s->key = *k;
	s->name = name != NULL ? xstrdup(name) : NULL;
	s->pass = pass;
	s->next = *head;
	*head = s;
	(*n)++;
	return (s);
}

/* VIP or SVIP lookup (GET vips/{vip}), live. */
static struct cache_body *
cache_vip_live(struct cache *c, const struct cache_key *k, const char *vip,
    int secure, int64_t now)
{
	enum side_kind		 kind = secure ? SIDE_SVIP : SIDE_VIP;
	struct side		*s = side_find(c->vips, kind, k, vip);
	struct applications	*as;

	if (s != NULL && s->gen == registry_gen(c->reg) && now < s->expires) {
		c->stats.hits++;
		return (body_ref(s->body));
	}
	if (s == NULL)
		s = side_add(&c->vips, &c->nvips, kind, k, vip, 0);
	cache_body_unref(s->body);
	as = registry_vip(c->reg, vip, secure);
	as->versions_delta = -1;
	free(as->apps_hashcode);
	as->apps_hashcode = applications_hashcode(as);
	s->body = encode_applications(as, variant(k), k->gzip);
	applications_free(as);
	s->gen = registry_gen(c->reg);
	s->expires = cache_until(c, now);
	return (body_ref(s->body));
}

/* Compute any kind of body live. */
static struct cache_body *
side_compute(struct cache *c, enum side_kind kind, const struct cache_key *k,
    const char *name, int64_t now)
{
	switch (kind) {
	case SIDE_APPS:
		return (cache_apps_live(c, k, now));
	case SIDE_DELTA:
		return (cache_delta_live(c, k, now));
	case SIDE_APP:
		return (cache_app_live(c, k, name, now));
	case SIDE_VIP:
		return (cache_vip_live(c, k, name, 0, now));
	case SIDE_SVIP:
		return (cache_vip_live(c, k, name, 1, now));
	}
	return (NULL);
}

/* Through the read-only layer when it is on (Eureka parity), else live. */
static struct cache_body *
cache_get(struct cache *c, enum side_kind kind, const struct cache_key *k,
    const char *name, int64_t now)
{
	struct side	*s;

	if (kind == SIDE_APPS && !k->gzip)
		plain_fetched(c, variant(k), now);
	if (c->ro_ms <= 0)
		return (side_compute(c, kind, k, name, now));
	if ((s = side_find(c->ro, kind, k, name)) == NULL) {
		s = side_add(&c->ro, &c->nro, kind, k, name, c->ro_pass);
		s->body = side_compute(c, kind, k, name, now);
	}
	return (s->body != NULL ? body_ref(s->body) : NULL);
}

/* The full registry. */
struct cache_body *
cache_apps(struct cache *c, const struct cache_key *k, int64_t now)
{
	return (cache_get(c, SIDE_APPS, k, NULL, now));
}

/* The delta. */
struct cache_body *
cache_delta(struct cache *c, const struct cache_key *k, int64_t now)
{
	return (cache_get(c, SIDE_DELTA, k, NULL, now));
}

/* One application, NULL when absent. */
struct cache_body *
cache_app(struct cache *c, const struct cache_key *k, const char *app,
    int64_t now)
{
	return (cache_get(c, SIDE_APP, k, app, now));
}

/* A VIP or secure VIP. */
struct cache_body *
cache_vip(struct cache *c, const struct cache_key *k, const char *vip,
    int secure, int64_t now)
{
	return (cache_get(c, secure ? SIDE_SVIP : SIDE_VIP, k, vip, now));
}

/*
 * One slice of the read-only layer's refresh; see cache.h. A pass stamps
 * each snapshot it replaces with its number, so the next slice finds the
 * first one left without keeping a pointer into the list (a fetch may add
 * a snapshot, or flush the list at its bound, between slices; one added
 * meanwhile is current and carries the pass's number already). A full
 * body is built through the read-write layer's slices (side_step), and
 * its snapshot replaced only once that body is whole.
 */
int
cache_refresh_step(struct cache *c, size_t budget, int64_t now)
{
	struct side		*s;
	struct cache_body	*cb;
	size_t			 w0 = c->work, used, left;
	uint64_t		 asm0 = c->stats.full_builds +
				     c->stats.build_aborts;

	if (budget == 0)
		budget = SIZE_MAX;
	if (!c->ro_busy) {
		c->ro_pass++;
		c->ro_busy = 1;
	}
	c->stats.ro_steps++;
	for (;;) {
		for (s = c->ro; s != NULL && s->pass == c->ro_pass; s = s->next)
			;
		if (s == NULL)
			break;
		if (s->kind == SIDE_APPS && !s->key.gzip &&
		    plain_idle(c, variant(&s->key), now)) {
			/* Nobody reads it: it goes, not rebuilt plain. */
			side_remove(&c->ro, &c->nro, s);
			continue;
		}
		used = c->work - w0;
		if (used > budget)
			return (0);
		left = budget == SIZE_MAX ? SIZE_MAX : budget - used;
		if (!side_step(c, s->kind, &s->key, s->name,
		    left > 0 ? left : 1, now))
			return (0);
		cb = side_compute(c, s->kind, &s->key, s->name, now);
		/*
		 * What dies with the old snapshot goes to the reaper, a piece
		 * a turn: at 1M the old plain body's runs, expired, are ~1 GB
		 * whose pages freed at once were a turn of ~150 ms.
		 */
		reap_any = 1;
		cache_body_unref(s->body);
		reap_any = 0;
		reap_batch_flush();
		s->body = cb;
		s->pass = c->ro_pass;
		/*
		 * At most one assembly ends a slice, whatever its budget left
		 * (at 1M, two or three in one turn were 110-150 ms when the
		 * walk was not counted in the budget; it is now, ASM_WEIGHT).
		 */
		if (budget != SIZE_MAX && c->stats.full_builds +
		    c->stats.build_aborts != asm0)
			return (0);
	}
	c->ro_busy = 0;
	c->stats.ro_refreshes++;
	return (1);
}

/* Read-only layer timer, in one go: a whole pass of its own. */
void
cache_refresh_read_only(struct cache *c, int64_t now)
{
	c->ro_busy = 0;
	(void)cache_refresh_step(c, 0, now);
}

/*
 * Sliced builds of the other bodies (cache_step): the delta, one
 * application and a VIP, with the same bytes as their one-call builds
 * above. The plain body is encoded by a walk of its source that keeps
 * its place between calls (the delta: a registry_dwalk; an application
 * or a VIP: an index into the registry) and starts over when the source
 * moved meanwhile (the delta queue, the application's generation, the
 * registry's); the opening piece, which carries the version and hash
 * code, is written last, so the body is one registry version. A gzip
 * body deflates the current plain body a slice at a time (gzip_stream),
 * starting over when that body is replaced. After MAX_TRIES starts a
 * build runs whole, so it always ends. The delta is the exception: its
 * walk covers the queue as it was when it began and never starts over
 * (delta_plain_step), and its gzip deflates the plain body it began
 * from, so it ends in slices whatever changes meanwhile. The builds under way are a list
 * bounded by MAX_SIDE_ENTRIES (each waits for a parked fetch or a
 * read-only refresh; past the bound the oldest goes).
 */
#define WALK_WEIGHT		64	/* a delta record or VIP instance seen */
#define GZ_PIECE_MIN		16384	/* bytes deflated a slice, at least */

struct sbuild {
	enum side_kind		 kind;
	struct cache_key	 key;
	char			*name;
	int			 started;
	uint64_t		 gen;		/* the source when it began */
	struct reg_dwalk	*dw;		/* the delta's walk */
	size_t			 dsize;		/* its queue length, */
	char			*hash;		/* hash code when it began */
	size_t			 ai, ii;	/* next app, next instance */
	size_t			 napps;		/* applications written */
	size_t			 open_ai;	/* VIP: the app open, + 1 */
	int			 inapp;		/* one is open */
	size_t			 counts[STATUS_COUNT];	/* VIP hash code */
	struct buf		 b;		/* what is encoded so far */
	struct cache_body	*src;		/* gzip: the plain body */
	size_t			 pos;		/* its bytes deflated */
	struct gzip_stream	*zs;
	unsigned		 tries;
	struct sbuild		*next;
};

/* Forget a build's progress (it starts over on the next call). */
static void
sb_reset(struct sbuild *sb)
{
	registry_dwalk_free(sb->dw);
	sb->dw = NULL;
	free(sb->hash);
	sb->hash = NULL;
	buf_free(&sb->b);
	buf_init(&sb->b, 0);
	sb->ai = sb->ii = sb->napps = sb->open_ai = 0;
	sb->inapp = sb->started = 0;
	memset(sb->counts, 0, sizeof sb->counts);
	cache_body_unref(sb->src);
	sb->src = NULL;
	sb->pos = 0;
	gzip_stream_free(sb->zs);
	sb->zs = NULL;
}

/* Unlink and free a build. */
static void
sb_free(struct cache *c, struct sbuild *sb)
{
	struct sbuild	**pp;

	for (pp = &c->sb; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == sb) {
			*pp = sb->next;
			c->nsb--;
			break;
		}
	}
	sb_reset(sb);
	buf_free(&sb->b);
	free(sb->name);
	free(sb);
}

/* The build for (kind, k, name), made when absent. */
static struct sbuild *
sb_get(struct cache *c, enum side_kind kind, const struct cache_key *k,
    const char *name)
{
	struct sbuild	*sb, *last = NULL;

	for (sb = c->sb; sb != NULL; last = sb, sb = sb->next) {
		if (sb->kind == kind && memcmp(&sb->key, k, sizeof *k) == 0 &&
		    ((sb->name == NULL && name == NULL) ||
		    (sb->name != NULL && name != NULL &&
		    strcmp(sb->name, name) == 0)))
			return (sb);
	}
	if (c->nsb >= MAX_SIDE_ENTRIES && last != NULL)
		sb_free(c, last);	/* the oldest: new ones go first */
	sb = xcalloc(1, sizeof *sb);
	sb->kind = kind;
	sb->key = *k;
	sb->name = name != NULL ? xstrdup(name) : NULL;
	buf_init(&sb->b, 0);
	sb->next = c->sb;
	c->sb = sb;
	c->nsb++;
	return (sb);
}

/* The build is to start over (its source moved). */
static void
sb_restart(struct sbuild *sb)
{
	sb_reset(sb);
	sb->tries++;
}

/* Whether a slice that began at work w0 has used its budget. */
static int
sb_spent(const struct cache *c, size_t w0, size_t budget)
{
	return (c->work - w0 > budget);
}

/* Append one instance of application app to a walk's body. */
static void
sb_instance(struct cache *c, struct sbuild *sb, const char *app,
    const struct instance *in, int first)
{
	const struct codec	*cc = vcodec(variant(&sb->key));
	size_t			 len0 = sb->b.len;

	if (first) {
		if (sb->inapp) {
			if (cc->sep_around)
				buf_adds(&sb->b, cc->sep);
			cc->app_close(&sb->b, 1);
		}
		if (sb->napps++ > 0 || cc->sep_around)
			buf_adds(&sb->b, cc->sep);
		cc->app_open(&sb->b, app, 1);
		sb->inapp = 1;
	}
	if (!first || cc->sep_around)
		buf_adds(&sb->b, cc->sep);
	cc->encode_instance(&sb->b, in, vflags(variant(&sb->key)), 2);
	c->work += sb->b.len - len0;
}

/*
 * The walk's body as a registry document: the opening piece (version,
 * hash code) before what it encoded, the closing piece after; two
 * segments, nothing copied.
 */
static struct cache_body *
sb_apps_body(struct sbuild *sb, int64_t version, const char *hash)
{
	const struct codec	*cc = vcodec(variant(&sb->key));
	struct cache_body	*cb = xcalloc(1, sizeof *cb);
	struct buf		 head;
	size_t			 cap = 0;

	if (sb->inapp) {
		if (cc->sep_around)
			buf_adds(&sb->b, cc->sep);
		cc->app_close(&sb->b, 1);
	}
	if (cc->sep_around)
		buf_adds(&sb->b, cc->sep);
	apps_piece(&sb->b, variant(&sb->key), 1, version, hash);
	buf_init(&head, 0);
	apps_piece(&head, variant(&sb->key), 0, version, hash);
	cb->refs = 1;
	body_push(cb, &cap, blob_from_buf(&head));
	body_push(cb, &cap, blob_from_buf(&sb->b));
	buf_init(&sb->b, 0);
	sb->inapp = 0;
	return (body_coalesce(cb));
}

/* sb_instance for the delta walk; stops the step once the slice is spent. */
struct sb_emit {
	struct cache	*c;
	struct sbuild	*sb;
	size_t		 w0, budget;
};

/* registry_dwalk_step's emit: one instance of the delta. */
static int
sb_delta_emit(const char *app, const struct instance *in, int first,
    void *arg)
{
	struct sb_emit	*e = arg;

	sb_instance(e->c, e->sb, app, in, first);
	return (sb_spent(e->c, e->w0, e->budget));
}

/*
 * Whether the plain delta slot can be served (cache_delta_live's test):
 * current, or finished by a sliced build in this very call's turn (now),
 * for the fetches parked on it.
 */
static int
delta_fresh(const struct cache *c, const struct slot *s, int64_t now)
{
	return (s->body != NULL && ((s->gen == registry_gen(c->reg) &&
	    s->dsize == registry_delta_size(c->reg) && now < s->expires) ||
	    (s->handoff && s->handoff_at == now)));
}

/*
 * One slice of the plain delta for variant v; 1 when its slot can be
 * served. The walk covers the queue as it was when the build began and
 * never starts over (registry_dwalk_*): a fleet registering all along
 * cannot make it begin again, nor run whole in one turn (issue 21, a
 * delta after 200,000 registrations: turns of 1 to 1.5 s). Its body
 * carries the hash code of the registry at that start; the slot keeps
 * that version, so a change made meanwhile makes the next fetch build
 * again, and the fetches waiting get this body in the turn it is done.
 */
static int
delta_plain_step(struct cache *c, const struct cache_key *k, size_t budget,
    int64_t now)
{
	struct slot	*s = &c->delta[variant(k)][0];
	struct sbuild	*sb;
	struct sb_emit	 e;
	size_t		 w0 = c->work, left, done;
	int		 fin;

	if (delta_fresh(c, s, now))
		return (1);
	sb = sb_get(c, SIDE_DELTA, k, NULL);
	if (sb->dw == NULL) {
		sb->dw = registry_dwalk_new(c->reg);
		sb->gen = registry_gen(c->reg);
		sb->dsize = registry_delta_size(c->reg);
		/* A delta that may lack a dropped change must not reconcile. */
		sb->hash = registry_delta_complete(c->reg, now) ?
		    registry_hashcode(c->reg) :
		    xstrdup(REGISTRY_HASHCODE_TRUNCATED);
	}
	e = (struct sb_emit){ c, sb, w0, budget };
	for (;;) {
		left = budget == SIZE_MAX ? SIZE_MAX :
		    (budget - (c->work - w0)) / WALK_WEIGHT + 1;
		fin = registry_dwalk_step(c->reg, sb->dw, left, &done,
		    sb_delta_emit, &e);
		c->work += done * WALK_WEIGHT;
		if (fin)
			break;
		if (sb_spent(c, w0, budget))
			return (0);
	}
	cache_body_unref(s->body);
	s->body = sb_apps_body(sb, ++c->delta_version, sb->hash);
	s->gen = sb->gen;
	s->dsize = sb->dsize;
	s->expires = cache_until(c, now);
	s->handoff = 1;
	s->handoff_at = now;
	c->stats.delta_builds++;
	sb_free(c, sb);
	return (1);
}

/*
 * Deflate the build's plain body (sb->src) from where the last slice
 * stopped, within the slice's budget: 1 when the gzip body is whole (in
 * sb->b).
 */
static int
gz_slices(struct cache *c, struct sbuild *sb, size_t w0, size_t budget)
{
	const struct bseg	*sg;
	size_t			 i, off, n, want;

	if (sb->zs == NULL) {
		sb->zs = gzip_stream_new(GZIP_LEVEL);
		sb->pos = 0;
	}
	while (sb->pos < sb->src->len) {
		if (sb_spent(c, w0, budget))
			return (0);
		want = budget == SIZE_MAX ? SIZE_MAX :
		    (budget - (c->work - w0)) / GZ_WEIGHT + 1;
		if (want < GZ_PIECE_MIN)
			want = GZ_PIECE_MIN;
		/* The segment holding byte pos. */
		for (i = 0, off = 0; i < sb->src->nseg; i++) {
			sg = &sb->src->segs[i];
			if (sb->pos < off + sg->len)
				break;
			off += sg->len;
		}
		sg = &sb->src->segs[i];
		n = off + sg->len - sb->pos;
		if (n > want)
			n = want;
		gzip_stream_add(sb->zs, sg->bl->data + sg->off +
		    (sb->pos - off), n, &sb->b, 0);
		sb->pos += n;
		c->work += n * GZ_WEIGHT;
	}
	gzip_stream_add(sb->zs, NULL, 0, &sb->b, 1);
	return (1);
}

/*
 * One slice of the delta for k; 1 when its slot can be served. A gzip
 * body deflates the plain body it began from to the end (a reference
 * keeps it), whatever plain fetches or changes do meanwhile.
 */
static int
delta_step(struct cache *c, const struct cache_key *k, size_t budget,
    int64_t now)
{
	struct slot		*z = &c->delta[variant(k)][1];
	struct cache_body	*src;
	struct cache_key	 plain = *k;
	struct sbuild		*sb;
	size_t			 w0 = c->work;

	plain.gzip = 0;
	if (!k->gzip)
		return (delta_plain_step(c, &plain, budget, now));
	if (z->body != NULL && z->handoff && z->handoff_at == now)
		return (1);
	sb = sb_get(c, SIDE_DELTA, k, NULL);
	if (sb->src == NULL) {
		if (!delta_plain_step(c, &plain, budget, now))
			return (0);
		src = c->delta[variant(k)][0].body;
		if (z->body != NULL && z->src == src) {
			sb_free(c, sb);
			return (1);
		}
		sb->src = body_ref(src);
	}
	if (!gz_slices(c, sb, w0, budget))
		return (0);
	cache_body_unref(z->body);
	cache_body_unref(z->src);
	z->body = body_from_buf(&sb->b);
	z->src = body_ref(sb->src);
	z->handoff = 1;
	z->handoff_at = now;
	sb_free(c, sb);
	return (1);
}

/*
 * One slice of GET apps/{name} for k; 1 when cache_app_live returns it
 * without encoding (or the application has no instance). A gzip body
 * deflates a plain one the build keeps to itself, as the one-call build.
 */
static int
app_step(struct cache *c, const struct cache_key *k, const char *name,
    size_t budget, int64_t now)
{
	struct reg_app		*app = registry_app_find(c->reg, name);
	const struct codec	*cc = vcodec(variant(k));
	struct appfrag		*af;
	struct sbuild		*sb;
	size_t			 w0 = c->work, n, len0;
	int			 v = variant(k), g = k->gzip ? 1 : 0;

	if (app == NULL || reg_app_size(app) == 0)
		return (1);
	af = frag_lookup(c, reg_app_name(app), reg_app_hash(app));
	frag_sync(c, af, app, now, 0);
	if (af->root[v][g] != NULL)
		return (1);
	sb = sb_get(c, SIDE_APP, k, name);
	if (sb->started && sb->gen != reg_app_gen(app))
		sb_restart(sb);
	if (sb->tries >= MAX_TRIES)
		budget = SIZE_MAX;
	if (!sb->started) {
		sb->started = 1;
		sb->gen = reg_app_gen(app);
		buf_adds(&sb->b, cc->app_doc_open);
		cc->app_open(&sb->b, reg_app_name(app), 0);
	}
	if (sb->src == NULL) {
		n = reg_app_size(app);
		for (; sb->ii < n; sb->ii++) {
			if (sb_spent(c, w0, budget))
				return (0);
			len0 = sb->b.len;
			if (sb->ii > 0 || cc->sep_around)
				buf_adds(&sb->b, cc->sep);
			cc->encode_instance(&sb->b, reg_app_instance_at(app,
			    sb->ii), vflags(v), 1);
			c->work += sb->b.len - len0;
		}
		if (cc->sep_around)
			buf_adds(&sb->b, cc->sep);
		cc->app_close(&sb->b, 0);
		buf_adds(&sb->b, cc->app_doc_close);
		if (!g) {
			af->root[v][0] = body_from_buf(&sb->b);
			sb_free(c, sb);
			return (1);
		}
		sb->src = body_from_buf(&sb->b);
		buf_init(&sb->b, 0);
	}
	if (!gz_slices(c, sb, w0, budget))
		return (0);
	af->root[v][1] = body_from_buf(&sb->b);
	sb_free(c, sb);
	return (1);
}

/*
 * One slice of GET vips/{vip} (svips/ when secure) for k; 1 when
 * cache_vip_live returns it without encoding. The walk looks at every
 * instance of the registry, so each one seen counts WALK_WEIGHT / 2.
 */
static int
vip_step(struct cache *c, const struct cache_key *k, const char *vip,
    int secure, size_t budget, int64_t now)
{
	enum side_kind		 kind = secure ? SIDE_SVIP : SIDE_VIP;
	struct side		*s = side_find(c->vips, kind, k, vip);
	const struct instance	*in;
	struct reg_app		*app;
	struct sbuild		*sb;
	size_t			 w0 = c->work, n;
	char			*hash;

	if (s != NULL && s->gen == registry_gen(c->reg) && now < s->expires)
		return (1);
	sb = sb_get(c, kind, k, vip);
	if (sb->started && sb->gen != registry_gen(c->reg))
		sb_restart(sb);
	if (sb->tries >= MAX_TRIES)
		budget = SIZE_MAX;
	if (!sb->started) {
		sb->started = 1;
		sb->gen = registry_gen(c->reg);
	}
	for (; sb->src == NULL && sb->ai < registry_app_count(c->reg);
	    sb->ai++, sb->ii = 0) {
		app = registry_app_at(c->reg, sb->ai);
		n = reg_app_size(app);
		for (; sb->ii < n; sb->ii++) {
			if (sb_spent(c, w0, budget))
				return (0);
			c->work += WALK_WEIGHT / 2;
			in = reg_app_instance_at(app, sb->ii);
			if (!instance_has_vip(secure ? in->secure_vip_address :
			    in->vip_address, vip, INSTANCE_VIP_EXACT))
				continue;
			sb_instance(c, sb, reg_app_name(app), in,
			    sb->open_ai != sb->ai + 1);
			sb->open_ai = sb->ai + 1;
			if ((unsigned)in->status < STATUS_COUNT)
				sb->counts[in->status]++;
		}
	}
	if (sb->src == NULL) {
		hash = instance_hashcode(sb->counts);
		sb->src = sb_apps_body(sb, -1, hash);
		free(hash);
	}
	if (k->gzip && !gz_slices(c, sb, w0, budget))
		return (0);
	if (s == NULL)
		s = side_add(&c->vips, &c->nvips, kind, k, vip, 0);
	cache_body_unref(s->body);
	s->body = k->gzip ? body_from_buf(&sb->b) : body_ref(sb->src);
	s->gen = registry_gen(c->reg);
	s->expires = cache_until(c, now);
	sb_free(c, sb);
	return (1);
}

/* One slice of any body but the full registry's; see cache_step. */
static int
side_step(struct cache *c, enum side_kind kind, const struct cache_key *k,
    const char *name, size_t budget, int64_t now)
{
	switch (kind) {
	case SIDE_APPS:
		return (apps_step(c, k, budget, now));
	case SIDE_DELTA:
		return (delta_step(c, k, budget, now));
	case SIDE_APP:
		return (app_step(c, k, name, budget, now));
	case SIDE_VIP:
	case SIDE_SVIP:
		return (vip_step(c, k, name, kind == SIDE_SVIP, budget, now));
	}
	return (1);
}

/*
 * One slice of resource res's body; see cache.h. With the read-only layer
 * on, a snapshot that stands answers at once.
 */
int
cache_step(struct cache *c, enum cache_res res, const struct cache_key *k,
    const char *name, size_t budget, int64_t now)
{
	enum side_kind	kind = (enum side_kind)res;

	if (kind == SIDE_APPS && !k->gzip)
		plain_fetched(c, variant(k), now);
	if (c->ro_ms > 0 && side_find(c->ro, kind, k, name) != NULL)
		return (1);
	return (side_step(c, kind, k, name, budget == 0 ? SIZE_MAX : budget,
	    now));
}

/* Resource res's body (cache_apps, cache_delta, cache_app, cache_vip). */
struct cache_body *
cache_res_body(struct cache *c, enum cache_res res,
    const struct cache_key *k, const char *name, int64_t now)
{
	return (cache_get(c, (enum side_kind)res, k, name, now));
}

/*
 * Big blobs are given back a piece at a time (cache_reap): freeing a body
 * of a gigabyte (a delta right after a million registrations) is about
 * 100 ms of page freeing in one call. A blob of REAP_ABOVE bytes or more
 * (any, while plain_drop releases an idle plain variant) whose last
 * reference goes joins a list, counted in cache_bytes until it
 * is gone; the loop shrinks the list's head by at most the given bytes a
 * turn (realloc to a smaller size hands the tail pages back).
 */
#define REAP_ABOVE	(16 * 1024 * 1024)
static struct blob	*reap_head, *reap_tail;

/* Take a dying blob into the list: 1 when it is the reaper's now. */
static int
reap_push(struct blob *bl)
{
	if ((bl->len < REAP_ABOVE && !reap_any) || reap_caches == 0)
		return (0);
	free(bl->mem);
	bl->mem = NULL;
	bl->dead = NULL;
	if (reap_any) {
		if (reap_nbatch == reap_batchcap) {
			reap_batchcap = reap_batchcap == 0 ? 64 :
			    reap_batchcap * 2;
			reap_batch = xreallocarray(reap_batch, reap_batchcap,
			    sizeof *reap_batch);
		}
		reap_batch[reap_nbatch++] = bl;
		return (1);
	}
	if (reap_tail != NULL)
		reap_tail->dead = bl;
	else
		reap_head = bl;
	reap_tail = bl;
	return (1);
}

/* qsort: blobs by the address of their bytes, highest first. */
static int
reap_cmp(const void *a, const void *b)
{
	uintptr_t	x = (uintptr_t)(*(struct blob *const *)a)->data;
	uintptr_t	y = (uintptr_t)(*(struct blob *const *)b)->data;

	return (x < y ? 1 : x > y ? -1 : 0);
}

/*
 * The blobs plain_drop() released join the reaper's list highest address
 * first: most sit in malloc's heap, and one freed below the others gives
 * nothing back until the one above it goes, then all of them in one trim
 * of the heap's top; top down, each turn's frees are given back as they
 * go. (A free region left below them, such as another variant's dropped
 * before, still joins the last trim: RESULTS.md, plaindrop.)
 */
static void
reap_batch_flush(void)
{
	size_t	i;

	if (reap_nbatch > 0)	/* (the array may be NULL when empty) */
		qsort(reap_batch, reap_nbatch, sizeof *reap_batch, reap_cmp);
	for (i = 0; i < reap_nbatch; i++) {
		if (reap_tail != NULL)
			reap_tail->dead = reap_batch[i];
		else
			reap_head = reap_batch[i];
		reap_tail = reap_batch[i];
	}
	free(reap_batch);
	reap_batch = NULL;
	reap_nbatch = reap_batchcap = 0;
}

/* Give back at most max bytes of dead blobs; 1 while some remain. */
int
cache_reap(size_t max)
{
	struct blob	*bl;
	char		*p;
	size_t		 n;

	while ((bl = reap_head) != NULL && max > 0) {
		n = bl->len < max ? bl->len : max;
		max -= n;
		cache_blob_bytes -= n;
		if (n < bl->len) {
			bl->len -= n;
			if ((p = realloc(bl->data, bl->len)) != NULL)
				bl->data = p;
			break;
		}
		reap_head = bl->dead;
		if (reap_head == NULL)
			reap_tail = NULL;
		free(bl->data);
		free(bl);
	}
	return (reap_head != NULL);
}
