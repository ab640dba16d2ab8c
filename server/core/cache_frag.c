/*
 * cache_frag.c: per-application fragments, the first layer of the cache
 * (cache.c's head comment): the JSON/XML encoding of one application as
 * it sits in the full registry, kept in runs (one slice's fragments back
 * to back in one blob, compacted when partly superseded), and its raw
 * deflate fragment, re-encoded only when the application's generation
 * moves. Plain fragments of a variant nobody fetches plain are dropped
 * (plain_drop) and a gzip build deflates from a scratch encode instead.
 */
#include <stdlib.h>
#include <string.h>

#include "cache_int.h"
#include "xmalloc.h"

/*
 * Move the fragments still live in run bl (variant v) into a new run of
 * their own, back to back in the same order, one copy of the live bytes:
 * the records point into it, and the old run, now without records
 * (run_dead), goes with the bodies that still hold it.
 */
void
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
	nb->rp = bl->rp;
	nb->rp->refs++;
	nb->rp->bytes += off;
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
			af->rp->bytes -= af->gz[v].len;
			gzip_frag_clear(&af->gz[v]);
		}
		af->has_gz[v] = 0;
		for (g = 0; g < 2; g++) {
			cache_body_unref(af->root[v][g]);
			af->root[v][g] = NULL;
		}
	}
}

/* htab_sweep callback: free a fragment record (arg NULL: cache_free). */
int
frag_free_cb(struct htab_node *n, void *arg)
{
	struct appfrag	*af = CONTAINER_OF(n, struct appfrag, node);

	frag_clear(af, arg != NULL);
	cache_body_unref(af->hand);
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

/*
 * The fragment record of an application, created on demand; h is
 * hash_str(name), which the registry already keeps (reg_app_hash): a full
 * build looks up every application, and at 10,000 of them hashing the
 * names again was 40 % of a gzip fetch after one change.
 */
struct appfrag *
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
	af->rp = c->rp;
	htab_insert(&c->frags, &af->node, h);
	return (af);
}

/*
 * Drop fragment records of applications that no longer exist. A full
 * build gives every application a record, so there are stale ones only
 * when the records outnumber the applications: only then is the table
 * walked.
 */
void
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
void
frag_sync(struct cache *c, struct appfrag *af, const struct reg_app *app,
    int64_t now, int64_t judge)
{
	int64_t	t = judge > 0 && judge < now ? judge : now;

	(void)app_handoff(af, 0, 0, now);	/* lets one from before go */
	if (af->gen == reg_app_gen(app) && t < cache_until(c, af->built))
		return;
	frag_clear(af, 1);
	af->gen = reg_app_gen(app);
	af->built = now;
}

/* Encode an application's instances (between app_open and app_close). */
void
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
struct blob *
frag_plain(struct cache *c, struct appfrag *af, const struct reg_app *app,
    int v)
{
	struct buf	b;

	if (af->plain[v] == NULL) {
		buf_init(&b, 0);
		frag_presize(&b, af, v);
		buf_adds(&b, vcodec(v)->sep);
		encode_app(&b, app, v, 1);
		af->plain[v] = blob_from_buf(c->rp, &b);
		af->poff[v] = 0;
		af->plen[v] = af->plain[v]->live = af->plain[v]->len;
		c->stats.fragment_encodes++;
		c->work += af->plen[v];
		c->plain_kept[v] = 1;
	}
	return (af->plain[v]);
}

/* Deflate an app's fragment for variant v (its bytes p, len, separator). */
void
frag_deflate(struct cache *c, struct appfrag *af, int v, const char *p,
    size_t len)
{
	size_t	sl = strlen(vcodec(v)->sep);

	/* Without the separator: the stitch adds its own. */
	gzip_frag_make(&af->gz[v], p + sl, len - sl, FRAG_LEVEL);
	af->rp->bytes += af->gz[v].len;
	c->work += GZ_WEIGHT * len;
	af->gzser[v] = ++c->gzserial;
	af->has_gz[v] = 1;
}

/*
 * Deflate an app's fragment for variant v from a scratch encode, kept
 * nowhere: the plain variant is idle (plain_idle).
 */
void
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
const struct gz_frag *
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
void
plain_drop(struct cache *c, int v, int64_t now)
{
	struct slot	*s = &c->full[v][0];

	if (!c->plain_kept[v] || !plain_idle(c, v, now))
		return;
	c->rp->any = 1;
	walk_drop(c, s);
	cache_body_unref(s->body);
	s->body = NULL;
	fmap_clear(&s->map);
	s->pending = 0;
	s->next = 0;
	s->tries = 0;
	htab_sweep(&c->frags, frag_unplain_cb, &v);
	c->rp->any = 0;
	reap_batch_flush(c->rp);
	c->plain_kept[v] = 0;
	c->stats.plain_drops++;
}
