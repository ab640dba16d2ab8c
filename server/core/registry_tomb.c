/*
 * registry_tomb.c: tombstones of recent cancels, so a late copy of a
 * cancelled instance (a replicated register or a sync page older than
 * the cancel) does not bring it back. Each keeps its origin time (wall,
 * compared with the copy's, registry.h's rule) and a retention clock
 * (monotonic, tombstone_ms); bounded by max_instances, the oldest goes.
 * Part of the registry module (registry_int.h).
 */
#include <stdlib.h>
#include <string.h>

#include "registry_int.h"
#include "xmalloc.h"

static struct tombstone *tomb_find(struct registry *,
		    const struct reg_key *);

/* Tombstone for a key, or NULL. */
static struct tombstone *
tomb_find(struct registry *reg, const struct reg_key *k)
{
	struct htab_node		*n;
	struct tombstone	*t;
	uint64_t		 h;

	if (reg->ntombs == 0)
		return (NULL);
	h = registry_key_hash(k->ah, k->ih);
	for (n = htab_first(&reg->tomb_tab, h); n != NULL; n = n->next) {
		if (n->hash != h)
			continue;
		t = CONTAINER_OF(n, struct tombstone, node);
		if (strcmp(t->id, k->id) == 0 &&
		    strcasecmp(t->app, k->app) == 0)
			return (t);
	}
	return (NULL);
}

/* The tombstone for a key if it is within tombstone_ms of mono. */
struct tombstone *
tomb_live(struct registry *reg, const struct reg_key *k, int64_t mono)
{
	struct tombstone	*t;

	if ((t = tomb_find(reg, k)) == NULL)
		return (NULL);
	if (mono - t->mono > reg->conf.tombstone_ms) {
		tomb_del(reg, t);
		return (NULL);
	}
	return (t);
}

/*
 * Remember that (app, id) was cancelled at origin time ts (a later one
 * never moves it back); bounded, the oldest goes. Retention restarts.
 */
void
tomb_set(struct registry *reg, const struct reg_key *k, int64_t ts,
    int64_t mono)
{
	struct tombstone	*t;

	if ((t = tomb_find(reg, k)) != NULL) {
		if (t->ts > ts)
			ts = t->ts;
		tomb_del(reg, t);
	}
	if (reg->ntombs >= reg->conf.max_instances &&
	    (t = TAILQ_FIRST(&reg->tomb_fifo)) != NULL)
		tomb_del(reg, t);
	t = xcalloc(1, sizeof *t);
	t->app = xstrdup(k->app);
	t->id = xstrdup(k->id);
	t->ts = ts;
	t->mono = mono;
	htab_insert(&reg->tomb_tab, &t->node, registry_key_hash(k->ah,
	    k->ih));
	TAILQ_INSERT_TAIL(&reg->tomb_fifo, t, entry);
	reg->ntombs++;
}

/* Forget one tombstone. */
void
tomb_del(struct registry *reg, struct tombstone *t)
{
	htab_remove(&reg->tomb_tab, &t->node);
	TAILQ_REMOVE(&reg->tomb_fifo, t, entry);
	reg->ntombs--;
	free(t->app);
	free(t->id);
	free(t);
}

/* The origin time of (app, id)'s cancel, 0 if no tombstone lives. */
int64_t
registry_tombstone(struct registry *reg, const char *app, const char *id,
    int64_t mono)
{
	struct tombstone	*t;
	struct reg_key		 k;
	REGISTRY_CHECKED(reg);

	if (app == NULL || id == NULL)
		return (0);
	reg_key_set(&k, app, id);
	if ((t = tomb_live(reg, &k, mono)) == NULL)
		return (0);
	return (t->ts);
}
