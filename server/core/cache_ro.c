/*
 * cache_ro.c: the bodies other than the full registry, built in one call
 * (the delta, one application, a VIP), the side list that keeps VIP
 * bodies and Eureka's read-only snapshots (bounded by MAX_SIDE_ENTRIES),
 * and the read-only layer's refresh, a slice at a time from server.c's
 * timer (cache_refresh_step). With the read-only layer on, bodies are
 * served from snapshots refreshed every read_only_ms, as Eureka's
 * readOnlyCacheMap is from its read-write cache.
 */
#include <stdlib.h>
#include <string.h>

#include "cache_int.h"
#include "xmalloc.h"

/* Free a side list. */
void
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

/* Encode a struct applications for variant v, gzip if asked. */
static struct cache_body *
encode_applications(struct cache_reaper *rp, const struct applications *as,
    int v, int gz)
{
	struct buf	b, z;

	buf_init(&b, 0);
	vcodec(v)->encode_applications(&b, as, vflags(v));
	if (!gz)
		return (body_from_buf(rp, &b));
	buf_init(&z, 0);
	gzip_compress(b.data != NULL ? b.data : "", b.len, &z, GZIP_LEVEL);
	buf_free(&b);
	return (body_from_buf(rp, &z));
}

/* The delta (GET apps/delta), live; O(changes). */
struct cache_body *
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
			z->body = body_from_buf(c->rp, &b);
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
	s->body = encode_applications(c->rp, as, v, 0);
	applications_free(as);
	s->gen = registry_gen(c->reg);
	s->dsize = registry_delta_size(c->reg);
	s->expires = cache_until(c, now);
	s->handoff = 0;
	c->stats.delta_builds++;
	return (body_ref(s->body));
}

/* One application (GET apps/{app}), live; NULL when it has no instance. */
struct cache_body *
cache_app_live(struct cache *c, const struct cache_key *k, const char *name,
    int64_t now)
{
	struct reg_app		*app = registry_app_find(c->reg, name);
	struct appfrag		*af;
	struct cache_body	*hb;
	struct buf		 b, z;
	int			 v = variant(k), g = k->gzip ? 1 : 0;

	if (app == NULL || reg_app_size(app) == 0)
		return (NULL);
	af = frag_lookup(c, reg_app_name(app), reg_app_hash(app));
	/* The sliced build's body, in the turn it was finished. */
	if ((hb = app_handoff(af, v, g, now)) != NULL) {
		c->stats.hits++;
		return (body_ref(hb));
	}
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
		af->root[v][g] = body_from_buf(c->rp, &z);
	} else
		af->root[v][g] = body_from_buf(c->rp, &b);
	return (body_ref(af->root[v][g]));
}

/* Find a side entry. */
struct side *
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
struct side *
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
struct cache_body *
cache_vip_live(struct cache *c, const struct cache_key *k, const char *vip,
    int secure, int64_t now)
{
	enum side_kind		 kind = secure ? SIDE_SVIP : SIDE_VIP;
	struct side		*s = side_find(c->vips, kind, k, vip);
	struct applications	*as;

	if (s != NULL && vip_fresh(c, s, now)) {
		c->stats.hits++;
		return (body_ref(s->body));
	}
	if (s == NULL)
		s = side_add(&c->vips, &c->nvips, kind, k, vip, 0);
	cache_body_unref(s->body);
	s->handoff = 0;
	as = registry_vip(c->reg, vip, secure);
	as->versions_delta = -1;
	free(as->apps_hashcode);
	as->apps_hashcode = applications_hashcode(as);
	s->body = encode_applications(c->rp, as, variant(k), k->gzip);
	applications_free(as);
	s->gen = registry_gen(c->reg);
	s->expires = cache_until(c, now);
	return (body_ref(s->body));
}

/* Compute any kind of body live. */
struct cache_body *
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
	CACHE_CHECKED(c);
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
		c->rp->any = 1;
		cache_body_unref(s->body);
		c->rp->any = 0;
		reap_batch_flush(c->rp);
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
	CACHE_CHECKED(c);
	c->ro_busy = 0;
	(void)cache_refresh_step(c, 0, now);
}
