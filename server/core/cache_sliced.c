/*
 * cache_sliced.c: the sliced builds of the delta, one application and a
 * VIP body (cache_step), with the same bytes as their one-call builds in
 * cache_ro.c, so a parked fetch or a read-only refresh never encodes a
 * big body in one loop turn. Each build walks its source and starts over
 * when the source moved, but the delta's, which never starts over; see
 * the comment above struct sbuild.
 */
#include <stdlib.h>
#include <string.h>

#include "cache_int.h"
#include "xmalloc.h"

/*
 * Sliced builds of the other bodies (cache_step): the delta, one
 * application and a VIP, with the same bytes as their one-call builds
 * (cache_ro.c). The plain body is encoded by a walk of its source that keeps
 * its place between calls (the delta: a registry_dwalk; an application
 * or a VIP: an index into the registry) and starts over when the source
 * moved meanwhile (the delta queue, the application's generation, the
 * registry's); the opening piece, which carries the version and hash
 * code, is written last, so the body is one registry version. A gzip
 * body deflates the current plain body a slice at a time (gzip_stream),
 * starting over when that body is replaced. After MAX_TRIES starts an
 * application's or a VIP's build goes on in slices through changes
 * (sb_moved, sb_walk_app), so each always ends, never whole. The
 * delta's walk covers the queue as it was when it began and never starts
 * over (delta_plain_step), and its gzip deflates the plain body it began
 * from, so it ends in slices whatever changes meanwhile. The builds
 * under way are a list bounded by MAX_SIDE_ENTRIES (each waits for a
 * parked fetch or a read-only refresh; past the bound the oldest goes).
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
	int			 tolerant;	/* no more starts */
	const struct reg_app	*at_app;	/* the app walked */
	size_t			 app_n;		/* its size then */
	size_t			 end_ai;	/* VIP: apps at the start */
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
	sb->at_app = NULL;
	sb->inapp = sb->started = 0;
	memset(sb->counts, 0, sizeof sb->counts);
	cache_body_unref(sb->src);
	sb->src = NULL;
	sb->pos = 0;
	gzip_stream_free(sb->zs);
	sb->zs = NULL;
}

/* Unlink and free a build. */
void
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

/*
 * zlib's deflate state at level 6 (windowBits 15, memLevel 8): 256 KiB of
 * window and hash tables and 64 KiB of pending output, about.
 */
#define SB_ZSTATE_BYTES		(320 * 1024)

/* Bytes held by the builds under way, for the memory budget. */
size_t
sb_bytes(const struct cache *c)
{
	const struct sbuild	*sb;
	size_t			 n = 0;

	for (sb = c->sb; sb != NULL; sb = sb->next)
		n += sb->b.size + (sb->zs != NULL ? SB_ZSTATE_BYTES : 0);
	return (n);
}

/* Drop the build of (kind, k, name), if one is under way. */
void
sb_abandon(struct cache *c, enum side_kind kind, const struct cache_key *k,
    const char *name)
{
	struct sbuild	*sb;

	for (sb = c->sb; sb != NULL; sb = sb->next)
		if (sb->kind == kind && memcmp(&sb->key, k, sizeof *k) == 0 &&
		    ((sb->name == NULL && name == NULL) ||
		    (sb->name != NULL && name != NULL &&
		    strcmp(sb->name, name) == 0))) {
			sb_free(c, sb);
			return;
		}
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
sb_restart(struct cache *c, struct sbuild *sb)
{
	sb_reset(sb);
	sb->tries++;
	c->stats.sb_restarts++;
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
sb_apps_body(struct cache_reaper *rp, struct sbuild *sb, int64_t version,
    const char *hash)
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
	body_push(cb, &cap, blob_from_buf(rp, &head));
	body_push(cb, &cap, blob_from_buf(rp, &sb->b));
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
int
delta_fresh(const struct cache *c, const struct slot *s, int64_t now)
{
	return (s->body != NULL && ((s->gen == registry_gen(c->reg) &&
	    s->dsize == registry_delta_size(c->reg) && now < s->expires) ||
	    (s->handoff && s->handoff_at == now)));
}

/*
 * Whether a VIP's body can be served (cache_vip_live's test): current, or
 * finished by a sliced build in this very call's turn (now), for the
 * fetches parked on it, though the registry changed meanwhile (vip_step).
 */
int
vip_fresh(const struct cache *c, const struct side *s, int64_t now)
{
	return (s->body != NULL && ((s->gen == registry_gen(c->reg) &&
	    now < s->expires) || (s->handoff && s->handoff_at == now)));
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
	s->body = sb_apps_body(c->rp, sb, ++c->delta_version, sb->hash);
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
		/*
		 * The plain build's new side entry may have pushed the
		 * oldest out (MAX_SIDE_ENTRIES), and that may be this one:
		 * find it again (sb_get makes a fresh one if it went).
		 */
		sb = sb_get(c, SIDE_DELTA, k, NULL);
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
	z->body = body_from_buf(c->rp, &sb->b);
	z->src = body_ref(sb->src);
	z->handoff = 1;
	z->handoff_at = now;
	sb_free(c, sb);
	return (1);
}

/*
 * Whether the delta's, an application's or a VIP's body for k is current,
 * so that its step encodes nothing (the same tests as delta_step,
 * app_step and vip_step make first).
 */
int
side_ready(struct cache *c, enum side_kind kind, const struct cache_key *k,
    const char *name, int64_t now)
{
	int			 v = variant(k), g = k->gzip ? 1 : 0;
	const struct slot	*p = &c->delta[v][0], *z = &c->delta[v][1];
	const struct side	*s;
	struct reg_app		*app;
	struct appfrag		*af;

	switch (kind) {
	case SIDE_DELTA:
		return (delta_fresh(c, p, now) &&
		    (!g || (z->body != NULL && z->src == p->body)));
	case SIDE_APP:
		if ((app = registry_app_find(c->reg, name)) == NULL ||
		    reg_app_size(app) == 0)
			return (1);
		af = frag_lookup(c, reg_app_name(app), reg_app_hash(app));
		if (app_handoff(af, v, g, now) != NULL)
			return (1);
		return (af->gen == reg_app_gen(app) &&
		    now < cache_until(c, af->built) && af->root[v][g] != NULL);
	case SIDE_VIP:
	case SIDE_SVIP:
		s = side_find(c->vips, kind, k, name);
		return (s != NULL && vip_fresh(c, s, now));
	default:
		return (0);
	}
}

/*
 * The body of GET apps/{app} for variant v (g: gzip) a sliced build ended
 * in this very call's turn (now) though the application changed
 * meanwhile (app_step), for the fetches parked on it; NULL when there is
 * none. One from an earlier turn is let go.
 */
struct cache_body *
app_handoff(struct appfrag *af, int v, int g, int64_t now)
{
	if (af->hand != NULL && af->hand_at != now) {
		cache_body_unref(af->hand);
		af->hand = NULL;
	}
	return (af->hand != NULL && af->hand_vg == v * 2 + g ? af->hand :
	    NULL);
}

/*
 * The source of a build under way moved (gen is its version now): the
 * build starts over, MAX_TRIES times; after that it used to run whole,
 * and a fleet registering every 20 ms made a fetch at 1M instances a turn
 * of ~60 ms (issue 21). Now it goes on in slices instead ("tolerant",
 * counted), the walk (sb_walk_app) covering what was there when it began.
 * A build that ends so keeps the version it began at, so the next fetch
 * after the change builds again.
 */
static void
sb_moved(struct cache *c, struct sbuild *sb, uint64_t gen)
{
	if (!sb->started || sb->gen == gen || sb->tolerant)
		return;
	if (sb->tries < MAX_TRIES)
		sb_restart(c, sb);
	else {
		sb->tolerant = 1;
		c->stats.sb_tolerant++;
	}
}

/* What a walk does with one instance of app (sb_walk_app). */
typedef void	(*sb_visit_cb)(struct cache *, struct sbuild *,
		    const struct reg_app *, const struct instance *);

/*
 * Walk app's instances from sb->ii on, calling visit for each; 0 when the
 * slice (begun at work w0) spent its budget first. It covers the
 * instances the application had when the walk got to it (sb->app_n), so
 * what is added behind it cannot keep it going. An application's array
 * grows at its end and a removal moves its last element into the hole
 * (registry.c), so the walk sees every instance present throughout once,
 * never twice, each as it was when the walk passed it; a removal behind
 * the walk can hide the one element it moves.
 */
static int
sb_walk_app(struct cache *c, struct sbuild *sb, const struct reg_app *app,
    size_t w0, size_t budget, sb_visit_cb visit)
{
	size_t	n;

	if (sb->at_app == NULL) {
		sb->at_app = app;
		sb->app_n = reg_app_size(app);
	}
	n = reg_app_size(app);
	if (n > sb->app_n)
		n = sb->app_n;
	for (; sb->ii < n; sb->ii++) {
		if (sb_spent(c, w0, budget))
			return (0);
		visit(c, sb, app, reg_app_instance_at(app, sb->ii));
	}
	return (1);
}

/* sb_walk_app's visit for GET apps/{name}: encode the instance. */
static void
app_visit_cb(struct cache *c, struct sbuild *sb, const struct reg_app *app,
    const struct instance *in)
{
	const struct codec	*cc = vcodec(variant(&sb->key));
	size_t			 len0 = sb->b.len;

	(void)app;
	if (sb->ii > 0 || cc->sep_around)
		buf_adds(&sb->b, cc->sep);
	cc->encode_instance(&sb->b, in, vflags(variant(&sb->key)), 1);
	c->work += sb->b.len - len0;
}

/*
 * One slice of GET apps/{name} for k; 1 when cache_app_live returns it
 * without encoding (or the application has no instance). A gzip body
 * deflates a plain one the build keeps to itself, as the one-call build.
 * A change in the application starts the walk over, MAX_TRIES times, then
 * it goes on through changes (sb_moved, sb_walk_app): the application
 * has no hash code in its body, and what the body holds is the
 * instances it had when the walk began, each as the walk saw it. Such a
 * body is handed to the fetches waiting in the turn it ends
 * (app_handoff), not kept: the next fetch builds the application as it
 * is then.
 */
static int
app_step(struct cache *c, const struct cache_key *k, const char *name,
    size_t budget, int64_t now)
{
	struct reg_app		*app = registry_app_find(c->reg, name);
	const struct codec	*cc = vcodec(variant(k));
	struct cache_body	*cb;
	struct appfrag		*af;
	struct sbuild		*sb;
	size_t			 w0 = c->work;
	int			 v = variant(k), g = k->gzip ? 1 : 0;

	if (app == NULL || reg_app_size(app) == 0) {
		sb_abandon(c, SIDE_APP, k, name);
		return (1);
	}
	af = frag_lookup(c, reg_app_name(app), reg_app_hash(app));
	if (app_handoff(af, v, g, now) != NULL)
		return (1);
	frag_sync(c, af, app, now, 0);
	if (af->root[v][g] != NULL)
		return (1);
	sb = sb_get(c, SIDE_APP, k, name);
	sb_moved(c, sb, reg_app_gen(app));
	if (sb->at_app != NULL && sb->at_app != app) {
		/* Dropped and made again: none of its instances is old. */
		sb->at_app = app;
		sb->app_n = sb->ii;
	}
	if (!sb->started) {
		sb->started = 1;
		sb->gen = reg_app_gen(app);
		buf_adds(&sb->b, cc->app_doc_open);
		cc->app_open(&sb->b, reg_app_name(app), 0);
	}
	if (sb->src == NULL) {
		if (!sb_walk_app(c, sb, app, w0, budget, app_visit_cb))
			return (0);
		if (cc->sep_around)
			buf_adds(&sb->b, cc->sep);
		cc->app_close(&sb->b, 0);
		buf_adds(&sb->b, cc->app_doc_close);
		sb->src = body_from_buf(c->rp, &sb->b);
		buf_init(&sb->b, 0);
	}
	if (g && !gz_slices(c, sb, w0, budget))
		return (0);
	cb = g ? body_from_buf(c->rp, &sb->b) : body_ref(sb->src);
	if (sb->gen == reg_app_gen(app))
		af->root[v][g] = cb;
	else {
		/* Changed meanwhile: the fetches waiting get it. */
		cache_body_unref(af->hand);
		af->hand = cb;
		af->hand_at = now;
		af->hand_vg = v * 2 + g;
	}
	sb_free(c, sb);
	return (1);
}

/* sb_walk_app's visit for a VIP: the instance if it is in the VIP. */
static void
vip_visit_cb(struct cache *c, struct sbuild *sb, const struct reg_app *app,
    const struct instance *in)
{
	c->work += WALK_WEIGHT / 2;
	if (!instance_has_vip(sb->kind == SIDE_SVIP ? in->secure_vip_address :
	    in->vip_address, sb->name, INSTANCE_VIP_EXACT))
		return;
	sb_instance(c, sb, reg_app_name(app), in, sb->open_ai != sb->ai + 1);
	sb->open_ai = sb->ai + 1;
	if ((unsigned)in->status < STATUS_COUNT)
		sb->counts[in->status]++;
}

/*
 * One slice of GET vips/{vip} (svips/ when secure) for k; 1 when
 * cache_vip_live returns it without encoding. The walk looks at every
 * instance of the registry, so each one seen counts WALK_WEIGHT / 2.
 * A change anywhere in the registry starts the walk over, MAX_TRIES
 * times, then it goes on through changes (sb_moved, sb_walk_app), over
 * the applications there were when it began (another application moved
 * to the walk's index by a removal is walked from its start). The hash
 * code counts what the body holds.
 */
static int
vip_step(struct cache *c, const struct cache_key *k, const char *vip,
    int secure, size_t budget, int64_t now)
{
	enum side_kind		 kind = secure ? SIDE_SVIP : SIDE_VIP;
	struct side		*s = side_find(c->vips, kind, k, vip);
	struct reg_app		*app;
	struct sbuild		*sb;
	size_t			 w0 = c->work;
	char			*hash;

	if (s != NULL && vip_fresh(c, s, now))
		return (1);
	sb = sb_get(c, kind, k, vip);
	sb_moved(c, sb, registry_gen(c->reg));
	if (!sb->started) {
		sb->started = 1;
		sb->gen = registry_gen(c->reg);
		sb->end_ai = registry_app_count(c->reg);
	}
	/*
	 * The walk covers the applications there were when it began, and
	 * of each the instances there were when it got there: what is added
	 * behind it meanwhile cannot keep it going (a registration before
	 * every slice, check_cache_sliced's test_ends_under_churn).
	 */
	for (; sb->src == NULL && sb->ai < registry_app_count(c->reg) &&
	    sb->ai < sb->end_ai; sb->ai++, sb->ii = 0, sb->at_app = NULL) {
		app = registry_app_at(c->reg, sb->ai);
		if (sb->at_app != NULL && sb->at_app != app) {
			/* A removal moved another application here. */
			sb->ii = 0;
			sb->open_ai = 0;
			sb->at_app = NULL;
		}
		if (!sb_walk_app(c, sb, app, w0, budget, vip_visit_cb))
			return (0);
	}
	if (sb->src == NULL) {
		hash = instance_hashcode(sb->counts);
		sb->src = sb_apps_body(c->rp, sb, -1, hash);
		free(hash);
	}
	if (k->gzip && !gz_slices(c, sb, w0, budget))
		return (0);
	if (s == NULL)
		s = side_add(&c->vips, &c->nvips, kind, k, vip, 0);
	cache_body_unref(s->body);
	s->body = k->gzip ? body_from_buf(c->rp, &sb->b) : body_ref(sb->src);
	s->gen = sb->gen;	/* changed meanwhile: the next fetch builds */
	s->handoff = 1;		/* but the fetches waiting get this one */
	s->handoff_at = now;
	s->expires = cache_until(c, now);
	sb_free(c, sb);
	return (1);
}

/* One slice of any body but the full registry's; see cache_step. */
int
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
