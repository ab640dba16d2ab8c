/*
 * watch_snap.c: a watch snapshot's frames, encoded once per application
 * generation and shared (watch_int.h).
 *
 * Before, every watcher that opened without a resumable id got its own
 * copy of the whole registry as ADDED frames, made in the turn it opened:
 * issue 21 measured one turn of 1.1 to 2.4 s and heartbeats waiting up to
 * 9 s when 20 watchers opened at once on 50,000 instances, and each
 * watcher that never read held its 36 MiB until it went. Now a snapshot
 * is walked a piece at a time (watch.c), and each piece, about
 * WATCHSNAP_PIECE_BYTES of whole frames, is made once and handed to every
 * watcher by reference. A piece stays valid while its application's
 * generation (reg_app_gen: every change that could alter an encoding
 * bumps it; heartbeats do not) is the one it was made at. Its frames
 * carry the version of the snapshot it was made for, and are handed only
 * to snapshots of that version or a later one: an id is never later than
 * the version a watcher's snapshot stands for (its SYNCED), so a client
 * that resumes from such an id gets every event after it, some twice,
 * which an upsert of whole instances absorbs. A snapshot of an earlier
 * version (a watcher that opened before, slower) makes its own pieces
 * and keeps none.
 */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "json.h"
#include "leader.h"
#include "watch_int.h"
#include "xmalloc.h"

/* Format one SSE frame into b. */
void
watch_format(struct buf *b, const char *type, uint64_t version,
    const struct instance *in, const char *app)
{
	buf_adds(b, "event: ");
	buf_adds(b, type);
	buf_adds(b, "\nid: ");
	buf_add_i64(b, (int64_t)version);
	buf_adds(b, "\ndata: ");
	if (in != NULL)
		json_encode_instance_root(b, in);
	else if (app != NULL) {
		/* No instance: an empty one that names only its app. */
		struct instance	*stub = instance_new();

		stub->app = xstrdup(app);
		stub->status = STATUS_UNKNOWN;
		json_encode_instance_root(b, stub);
		instance_free(stub);
	} else
		buf_adds(b, "{}");
	buf_adds(b, "\n\n");
}

/* Free a kept snapshot; pieces still being sent live on. */
void
watchsnap_free(struct watchsnap *s)
{
	size_t	i;

	if (s == NULL)
		return;
	for (i = 0; i < s->n; i++)
		watch_blob_unref(s->piece[i].blob);
	watch_blob_unref(s->leader);
	free(s->piece);
	free(s);
}

/* *sp for ra's current generation: the kept one, or a new empty one. */
static struct watchsnap *
watchsnap_current(struct watchsnap **sp, const struct watchsnap_ctx *c,
    struct reg_app *ra)
{
	uint64_t	gen = reg_app_gen(ra);

	if (*sp != NULL && (*sp)->gen != gen) {
		watchsnap_free(*sp);
		*sp = NULL;
	}
	if (*sp == NULL) {
		*sp = xcalloc(1, sizeof **sp);
		(*sp)->gen = gen;
		(*sp)->version = c->version;
	}
	return (*sp);
}

/* Encode ADDED frames (id version) of ra's instances from start on. */
static struct watch_blob *
watchsnap_encode(struct watchsnap_ctx *c, uint64_t version,
    struct reg_app *ra, size_t start, size_t *end)
{
	struct buf	b;
	size_t		j, n = reg_app_size(ra);
	int		hide = registry_lease_expiration_enabled(c->reg);

	buf_init(&b, 0);
	for (j = start; j < n && b.len < WATCHSNAP_PIECE_BYTES; j++) {
		if (hide && reg_app_lease_expired(ra, j, c->mono))
			continue;
		watch_format(&b, "ADDED", version,
		    reg_app_instance_at(ra, j), NULL);
	}
	*end = j;
	c->encoded += b.len;
	if (b.len == 0) {
		buf_free(&b);
		return (NULL);
	}
	return (watch_blob_new(c->acct, &b));
}

/* The piece of ra from start (k-th from 0); NULL past the instances. */
struct watch_blob *
watchsnap_piece(struct watchsnap **sp, struct watchsnap_ctx *c,
    struct reg_app *ra, size_t k, size_t start, size_t *end)
{
	struct watchsnap	*s = watchsnap_current(sp, c, ra);
	struct watch_blob	*bl;
	int			 mine = c->version >= s->version;

	/* A kept piece starts where this walk is (same generation). */
	if (mine && k < s->n && (k == 0 ? 0 : s->piece[k - 1].end) == start) {
		*end = s->piece[k].end;
		return (watch_blob_ref(s->piece[k].blob));
	}
	/* Expired leases hidden may leave a stretch empty: go past it. */
	*end = start;
	do {
		if (*end >= reg_app_size(ra))
			return (NULL);
		bl = watchsnap_encode(c, mine ? s->version : c->version, ra,
		    *end, end);
	} while (bl == NULL);
	if (mine && c->retain && k == s->n &&
	    (k == 0 ? 0 : s->piece[k - 1].end) == start) {
		if (s->n == s->cap) {
			s->cap = s->cap ? s->cap * 2 : 4;
			s->piece = xreallocarray(s->piece, s->cap,
			    sizeof *s->piece);
		}
		s->piece[s->n].blob = watch_blob_ref(bl);
		s->piece[s->n].end = *end;
		s->n++;
	}
	return (bl);
}

/* ra's LEADER frame, kept while it names the same instance. */
struct watch_blob *
watchsnap_leader(struct watchsnap **sp, struct watchsnap_ctx *c,
    struct reg_app *ra)
{
	struct watchsnap	*s = watchsnap_current(sp, c, ra);
	const struct instance	*in = leader_find_app(c->reg, ra, c->mono);
	struct buf		 b;
	struct watch_blob	*bl;
	int			 mine = c->version >= s->version;

	if (in == NULL)
		return (NULL);
	if (mine && s->leader != NULL && s->leader_in == in)
		return (watch_blob_ref(s->leader));
	buf_init(&b, 0);
	watch_format(&b, "LEADER", mine ? s->version : c->version, in, NULL);
	c->encoded += b.len;
	bl = watch_blob_new(c->acct, &b);
	if (mine && c->retain) {
		watch_blob_unref(s->leader);
		s->leader = watch_blob_ref(bl);
		s->leader_in = in;
	}
	return (bl);
}
