/*
 * cache_full.c: the full registry body (GET apps), built from the
 * fragments: the layout of the last body (struct fmap) lets the next
 * build after a change take over every segment whose applications did
 * not change; a build with many fragments missing runs in slices
 * (cache_apps_step): bounded fragment encodes, then an assembly walk
 * (struct walk) that keeps its place between calls and starts over when
 * an application it placed changed, so the body is one registry version.
 */
#include <stdlib.h>
#include <string.h>

#include "cache_int.h"
#include "xmalloc.h"

/* Forget a body's layout. */
void
fmap_clear(struct fmap *m)
{
	free(m->gens);
	free(m->segs);
	memset(m, 0, sizeof *m);
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
		/* A plain walk reuses segments of its previous body only. */
		HK_ASSERT(ob != NULL);
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
int
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
void
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
		w->cb->segs[0].bl = blob_from_buf(c->rp, &b);
	} else
		w->cb->segs[0].bl = blob_from_buf(c->rp, &p);
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
		body_push(w->cb, &w->cap, blob_from_buf(c->rp, &b));
		buf_free(&p);
	} else
		body_push(w->cb, &w->cap, blob_from_buf(c->rp, &p));
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
		/* build_full returns NULL only with its walk under way. */
		HK_ASSERT(s->walk != NULL);
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

/* Whether k's full body is current (apps_step would encode nothing). */
int
apps_ready(const struct cache *c, const struct cache_key *k, int64_t now)
{
	return (slot_fresh(c, &c->full[variant(k)][k->gzip ? 1 : 0], now));
}

/*
 * Drop the assembly under way for k: its walk goes (the fragments it
 * encoded stay, counted, for a later build), and a later call begins
 * again as if none had been under way.
 */
void
apps_abandon(struct cache *c, const struct cache_key *k)
{
	struct slot	*s = &c->full[variant(k)][k->gzip ? 1 : 0];

	walk_drop(c, s);
	s->pending = 0;
	s->next = 0;
	s->tries = 0;
}

/* The full registry (GET apps), live. */
struct cache_body *
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
	bl = blob_from_buf(c->rp, &r->b);
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
	CACHE_CHECKED(c);
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
int
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
