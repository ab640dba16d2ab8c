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
 *
 * This file is the facade (new, free, get, step, stats); the rest lives
 * behind cache_int.h: blobs, bodies and the reaper (cache_blob.c),
 * fragments (cache_frag.c), gzip chunks (cache_gzchunk.c), the full
 * build (cache_full.c), the other bodies and the read-only layer
 * (cache_ro.c), and their sliced builds (cache_sliced.c).
 */
#include <stdlib.h>
#include <string.h>

#include "cache_int.h"
#include "json.h"
#include "xml.h"
#include "xmalloc.h"

/* Variant index of a key. */
int
variant(const struct cache_key *k)
{
	return ((int)k->format * 2 + (k->compact ? 1 : 0));
}

/* Codec flags of a variant. */
int
vflags(int v)
{
	return ((v & 1) ? CODEC_COMPACT : CODEC_FULL);
}

/* The codec of a variant: variant() puts the format in bit 1. */
const struct codec *
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
int64_t
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
	c->rp = xcalloc(1, sizeof *c->rp);
	c->rp->refs = 1;
	c->rp->live = 1;
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
	CACHE_CHECKED(c);
	c->plain_idle_ms = idle_ms > 0 ? idle_ms : 0;
}

/* Whether nobody fetched variant v plain within the idle time. */
int
plain_idle(const struct cache *c, int v, int64_t now)
{
	if (c->plain_idle_ms <= 0)
		return (0);
	return (c->plain_seen[v] == INT64_MIN ||
	    now - c->plain_seen[v] >= c->plain_idle_ms);
}

/* A fetch of variant v plain at now (its fragments are wanted). */
void
plain_fetched(struct cache *c, int v, int64_t now)
{
	if (c->plain_seen[v] == INT64_MIN || now > c->plain_seen[v])
		c->plain_seen[v] = now;
}

/* Free everything; bodies still referenced by responses live on. */
void
cache_free(struct cache *c)
{
	int		 v, g;

	if (c == NULL)
		return;
	/* An operation under way: the cache_reap calls below do not walk. */
	c->op_depth++;
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
	c->rp->live = 0;
	while (cache_reap(c, SIZE_MAX))
		;
	reaper_unref(c->rp);
	free(c);
}

/* Counters for /metrics and the benchmarks. */
const struct cache_stats *
cache_stats(const struct cache *c)
{
	return (&c->stats);
}

/*
 * Bytes of the encoded bodies alive, cached or in flight (this cache),
 * and of the builds under way (what they encoded so far).
 */
size_t
cache_bytes(const struct cache *c)
{
	return (c->rp->bytes + sb_bytes(c));
}

/* Whether res's body is current: cache_step would encode nothing. */
int
cache_ready(struct cache *c, enum cache_res res, const struct cache_key *k,
    const char *name, int64_t now)
{
	enum side_kind	kind = (enum side_kind)res;

	if (c->ro_ms > 0 && side_find(c->ro, kind, k, name) != NULL)
		return (1);
	if (kind == SIDE_APPS)
		return (apps_ready(c, k, now));
	return (side_ready(c, kind, k, name, now));
}

/* Give up the build of res's body under way (a 503: no room for it). */
void
cache_abandon(struct cache *c, enum cache_res res, const struct cache_key *k,
    const char *name)
{
	if ((enum side_kind)res == SIDE_APPS)
		apps_abandon(c, k);
	else
		sb_abandon(c, (enum side_kind)res, k, name);
}

/* Size and longest chain of the fragment table, for /metrics. */
void
cache_table_stats(struct cache *c, struct htab_stats *st)
{
	CACHE_CHECKED(c);
	htab_stats_scan(&c->frags, &c->fscan, HTAB_SCAN_BUCKETS, st);
}

/* Encode the registry's opening (or closing) piece for variant v. */
void
apps_piece(struct buf *b, int v, int closing, int64_t version,
    const char *hash)
{
	if (closing)
		vcodec(v)->apps_close(b, vflags(v), version, hash);
	else
		vcodec(v)->apps_open(b, vflags(v), version, hash);
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
	CACHE_CHECKED(c);
	return (cache_get(c, SIDE_APPS, k, NULL, now));
}

/* The delta. */
struct cache_body *
cache_delta(struct cache *c, const struct cache_key *k, int64_t now)
{
	CACHE_CHECKED(c);
	return (cache_get(c, SIDE_DELTA, k, NULL, now));
}

/* One application, NULL when absent. */
struct cache_body *
cache_app(struct cache *c, const struct cache_key *k, const char *app,
    int64_t now)
{
	CACHE_CHECKED(c);
	return (cache_get(c, SIDE_APP, k, app, now));
}

/* A VIP or secure VIP. */
struct cache_body *
cache_vip(struct cache *c, const struct cache_key *k, const char *vip,
    int secure, int64_t now)
{
	CACHE_CHECKED(c);
	return (cache_get(c, secure ? SIDE_SVIP : SIDE_VIP, k, vip, now));
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
	CACHE_CHECKED(c);

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
	CACHE_CHECKED(c);
	return (cache_get(c, (enum side_kind)res, k, name, now));
}
