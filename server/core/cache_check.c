/*
 * cache_check.c: cache_check(), the walk that verifies the response
 * cache's counters and indexes against what it holds (cache.h lists
 * them), and the hook that runs it at the end of each public operation
 * in the unit tests and fuzz targets (CACHE_CHECKED, cache_int.h;
 * bug.h). check_cache breaks each on purpose to see it named
 * (test_cache_check_finds_breaches).
 *
 * What the walk cannot see it does not claim: a body lent to a client
 * holds blob references the cache no longer knows, so a blob's count is
 * checked to be at least the holds the cache has, not equal to them.
 * O(fragment records + body segments + side entries).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bug.h"
#include "cache.h"
#include "cache_int.h"
#include "hash.h"
#include "log.h"
#include "xmalloc.h"

/* A blob the fragment records point at, with what they account for. */
struct ccheck_hold {
	const struct blob	*bl;
	size_t			 plen;		/* their fragments' bytes */
	unsigned		 holds;		/* records holding it */
};

static int	ccheck_fail(char **, const char *, ...)
		    __attribute__((format(printf, 2, 3)));
static int	ccheck_hold_cmp(const void *, const void *);
static int	ccheck_body(const struct cache_body *, const char *, char **);
static int	ccheck_frag(const struct cache *, const struct appfrag *,
		    struct ccheck_hold *, size_t *, char **);
static int	ccheck_holds(struct ccheck_hold *, size_t, char **);
static int	ccheck_frags(const struct cache *, char **);
static int	ccheck_slots(const struct cache *, char **);
static int	ccheck_sides(const struct side *, size_t, const char *,
		    char **);
static int	ccheck_reaper(const struct cache *, char **);

/* Record the first breach the walk finds; -1. */
static int
ccheck_fail(char **cause, const char *fmt, ...)
{
	va_list	 ap;
	char	*msg;

	va_start(ap, fmt);
	xvasprintf(&msg, fmt, ap);
	va_end(ap);
	xasprintf(cause, "cache: %s", msg);
	free(msg);
	return (-1);
}

/* Order of holds by blob address. */
static int
ccheck_hold_cmp(const void *a, const void *b)
{
	uintptr_t	x = (uintptr_t)((const struct ccheck_hold *)a)->bl;
	uintptr_t	y = (uintptr_t)((const struct ccheck_hold *)b)->bl;

	return (x < y ? -1 : x > y);
}

/* A body: referenced, its length its segments', each inside its blob. */
static int
ccheck_body(const struct cache_body *b, const char *what, char **cause)
{
	size_t	i, len = 0;

	if (b == NULL)
		return (0);
	if (b->refs == 0)
		return (ccheck_fail(cause, "%s: body without references",
		    what));
	for (i = 0; i < b->nseg; i++) {
		if (b->segs[i].bl == NULL || b->segs[i].bl->refs == 0)
			return (ccheck_fail(cause, "%s: segment %zu on a dead "
			    "blob", what, i));
		if (b->segs[i].off > b->segs[i].bl->len ||
		    b->segs[i].len > b->segs[i].bl->len - b->segs[i].off)
			return (ccheck_fail(cause, "%s: segment %zu past its "
			    "blob", what, i));
		len += b->segs[i].len;
	}
	if (len != b->len)
		return (ccheck_fail(cause, "%s: body len %zu, segments %zu",
		    what, b->len, len));
	return (0);
}

/* One fragment record: its table entry, plain fragments and bodies. */
static int
ccheck_frag(const struct cache *c, const struct appfrag *af,
    struct ccheck_hold *h, size_t *nh, char **cause)
{
	const struct htab_node	*n;
	const struct blob	*bl;
	int			 v, g;

	for (n = htab_first(&c->frags, af->node.hash); n != NULL;
	    n = n->next)
		if (n == &af->node)
			break;
	if (n == NULL)
		return (ccheck_fail(cause, "%s: not found under its hash",
		    af->name));
	if (af->rp != c->rp)
		return (ccheck_fail(cause, "%s: another cache's reaper",
		    af->name));
	for (v = 0; v < NVARIANT; v++) {
		if ((bl = af->plain[v]) != NULL) {
			if (bl->refs == 0 || af->poff[v] > bl->len ||
			    af->plen[v] > bl->len - af->poff[v])
				return (ccheck_fail(cause, "%s: variant %d's "
				    "fragment outside its blob", af->name, v));
			if (bl->mem != NULL && (af->pidx[v] >= bl->nmem ||
			    bl->mem[af->pidx[v]] != af))
				return (ccheck_fail(cause, "%s: variant %d not "
				    "at its place in its run", af->name, v));
			h[*nh].bl = bl;
			h[*nh].plen = af->plen[v];
			h[*nh].holds = 1;
			(*nh)++;
		}
		if (af->gzbl[v] != NULL && (af->gzbl[v]->refs == 0 ||
		    !af->has_gz[v]))
			return (ccheck_fail(cause, "%s: variant %d's gzip "
			    "chunk dead or unmarked", af->name, v));
		for (g = 0; g < 2; g++)
			if (ccheck_body(af->root[v][g], af->name, cause) != 0)
				return (-1);
	}
	if (ccheck_body(af->hand, af->name, cause) != 0)
		return (-1);
	return (0);
}

/*
 * The blobs the records share: each holds at least one reference per
 * record, and a blob's live bytes are its records' fragments.
 */
static int
ccheck_holds(struct ccheck_hold *h, size_t nh, char **cause)
{
	size_t		i, j, plen;
	unsigned	holds;

	qsort(h, nh, sizeof *h, ccheck_hold_cmp);
	for (i = 0; i < nh; i = j) {
		plen = 0;
		holds = 0;
		for (j = i; j < nh && h[j].bl == h[i].bl; j++) {
			plen += h[j].plen;
			holds++;
		}
		if (h[i].bl->refs < holds)
			return (ccheck_fail(cause, "blob with %u references "
			    "held by %u records", h[i].bl->refs, holds));
		if (h[i].bl->live != plen)
			return (ccheck_fail(cause, "blob live %zu, its records' "
			    "fragments %zu", h[i].bl->live, plen));
	}
	return (0);
}

/* Every fragment record, reached through the table's buckets. */
static int
ccheck_frags(const struct cache *c, char **cause)
{
	const struct htab	*t = &c->frags;
	const struct htab_node	*n;
	struct ccheck_hold	*h;
	size_t			 i, count = 0, nh = 0, cap;
	int			 rc = -1, pass;

	cap = (htab_count(t) + 1) * NVARIANT;
	h = xreallocarray(NULL, cap, sizeof *h);
	for (pass = 0; pass < 2; pass++) {
		struct htab_node *const	*b = pass == 0 ? t->b : t->old;
		size_t			 nb = pass == 0 ? t->nb : t->onb;

		for (i = 0; b != NULL && i < nb; i++) {
			for (n = b[i]; n != NULL; n = n->next) {
				if (++count > htab_count(t)) {
					ccheck_fail(cause, "more records than "
					    "the table counts (%zu)",
					    htab_count(t));
					goto out;
				}
				if (ccheck_frag(c, CONTAINER_OF(n,
				    struct appfrag, node), h, &nh, cause) != 0)
					goto out;
			}
		}
	}
	if (count != htab_count(t)) {
		ccheck_fail(cause, "%zu records, the table counts %zu", count,
		    htab_count(t));
		goto out;
	}
	rc = ccheck_holds(h, nh, cause);
out:
	free(h);
	return (rc);
}

/* The whole-body slots and the last gzip build's chunks. */
static int
ccheck_slots(const struct cache *c, char **cause)
{
	const struct gzchunks	*gc;
	size_t			 i;
	int			 v, g;

	for (v = 0; v < NVARIANT; v++) {
		for (g = 0; g < 2; g++) {
			if (ccheck_body(c->full[v][g].body, "full", cause) ||
			    ccheck_body(c->full[v][g].src, "full src", cause) ||
			    ccheck_body(c->delta[v][g].body, "delta", cause) ||
			    ccheck_body(c->delta[v][g].src, "delta src",
			    cause))
				return (-1);
		}
		gc = &c->gzc[v];
		if (gc->n > gc->cap)
			return (ccheck_fail(cause, "variant %d: %zu gzip chunks, "
			    "room for %zu", v, gc->n, gc->cap));
		for (i = 0; i < gc->n; i++)
			if (gc->v[i].bl == NULL || gc->v[i].bl->refs == 0)
				return (ccheck_fail(cause, "variant %d: gzip "
				    "chunk %zu on a dead blob", v, i));
	}
	return (0);
}

/* A side list (VIP bodies, read-only snapshots): its count and bodies. */
static int
ccheck_sides(const struct side *s, size_t n, const char *what, char **cause)
{
	size_t	count = 0;

	for (; s != NULL; s = s->next) {
		if (++count > n)
			return (ccheck_fail(cause, "%s: more entries than %zu",
			    what, n));
		if (ccheck_body(s->body, what, cause) != 0)
			return (-1);
	}
	if (count != n || n > MAX_SIDE_ENTRIES)
		return (ccheck_fail(cause, "%s: %zu entries, counted %zu", what,
		    count, n));
	return (0);
}

/* The reaper: held by the cache, its dead list well formed. */
static int
ccheck_reaper(const struct cache *c, char **cause)
{
	const struct cache_reaper	*rp = c->rp;
	const struct blob		*bl, *last = NULL;

	if (rp == NULL || rp->refs == 0)
		return (ccheck_fail(cause, "reaper missing or unreferenced"));
	for (bl = rp->head; bl != NULL; last = bl, bl = bl->dead)
		if (bl->refs != 0)
			return (ccheck_fail(cause, "a blob to reap has %u "
			    "references", bl->refs));
	if (last != rp->tail)
		return (ccheck_fail(cause, "reaper's tail is not its last "
		    "blob"));
	return (0);
}

/* Walk the cache; 0 when every count and index holds (cache.h). */
int
cache_check(const struct cache *c, char **cause)
{
	*cause = NULL;
	if (ccheck_reaper(c, cause) != 0 || ccheck_frags(c, cause) != 0 ||
	    ccheck_slots(c, cause) != 0 ||
	    ccheck_sides(c->vips, c->nvips, "VIP bodies", cause) != 0 ||
	    ccheck_sides(c->ro, c->nro, "read-only snapshots", cause) != 0)
		return (-1);
	return (0);
}

/*
 * The outermost public operation ended with self-checks on
 * (cache_int.h's cache_self_check): the walk runs when due; a breach is
 * fatal (the tests' mode).
 */
void
cache_self_check_walk(struct cache **cp)
{
	struct cache	*c = *cp;
	char		*cause = NULL;

	if (!bug_check_due_slow(&c->check_left, htab_count(&c->frags) +
	    c->nvips + c->nro))
		return;
	if (cache_check(c, &cause) != 0)
		fatalx("%s: %s", __func__, cause);
}
