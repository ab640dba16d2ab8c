/*
 * registry_tomb.c: tombstones of recent cancels, so a late copy of a
 * cancelled instance (a replicated register or a sync page older than
 * the cancel) does not bring it back. Each keeps its origin time (wall,
 * compared with the copy's, registry.h's rule) and a retention clock
 * (monotonic, tombstone_ms). Those of leases this node held are
 * bounded by max_instances, those of instances it never held (a DELETE
 * of an unknown id, a peer's Cancel of one) by max_unheld_tombs and a
 * sixteenth of the budget (issue 21: 250,000 DELETEs of made-up ids took
 * 135 MiB, uncounted); the oldest of a kind goes. One allocation each,
 * its bytes counted in registry_memory_used(). Part of the registry
 * module (registry_int.h).
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

	if (reg->ntombs == 0 && reg->nunheld == 0)
		return (NULL);
	h = registry_key_hash(k->ah, k->ih);
	for (n = htab_first(&reg->tomb_tab, h); n != NULL; n = n->next) {
		if (n->hash != h)
			continue;
		t = CONTAINER_OF(n, struct tombstone, node);
		if (strcmp(t->key + t->idoff, k->id) == 0 &&
		    strcasecmp(t->key, k->app) == 0)
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

/* The bytes tomb_unheld may hold: REGISTRY_UNHELD_SHARE of the budget. */
static size_t
tomb_unheld_max_bytes(const struct registry *reg)
{
	return (reg->conf.max_bytes > 0 ? reg->conf.max_bytes /
	    REGISTRY_UNHELD_SHARE : SIZE_MAX);
}

/*
 * Remember that (app, id) was cancelled at origin time ts (a later one
 * never moves it back); retention restarts. held: this node held the
 * lease (a tombstone once held stays so). Bounded: past max_instances
 * held ones, or past max_unheld tombstones or their share of the budget
 * for instances never held, the oldest of that kind goes.
 */
void
tomb_set(struct registry *reg, const struct reg_key *k, int held, int64_t ts,
    int64_t mono)
{
	struct tombstone	*t;
	size_t			 an, in, bytes;
	size_t			 umax = reg->conf.max_unheld_tombs;

	if ((t = tomb_find(reg, k)) != NULL) {
		if (t->ts > ts)
			ts = t->ts;
		if (!t->unheld)
			held = 1;
		tomb_del(reg, t);
	}
	an = strlen(k->app);
	in = strlen(k->id);
	bytes = TOMB_OVERHEAD + an + in + 2;
	if (held) {
		if (reg->ntombs >= reg->conf.max_instances &&
		    (t = TAILQ_FIRST(&reg->tomb_fifo)) != NULL)
			tomb_del(reg, t);
	} else {
		if (umax == 0)
			umax = REGISTRY_UNHELD_TOMBS;
		while ((t = TAILQ_FIRST(&reg->tomb_unheld)) != NULL &&
		    (reg->nunheld >= umax || reg->unheld_bytes + bytes >
		    tomb_unheld_max_bytes(reg))) {
			reg->stats.tombstones_dropped++;
			tomb_del(reg, t);
		}
	}
	t = xmalloc(sizeof *t + an + in + 2);
	memset(t, 0, sizeof *t);
	memcpy(t->key, k->app, an + 1);
	t->idoff = (uint32_t)(an + 1);
	memcpy(t->key + t->idoff, k->id, in + 1);
	t->ts = ts;
	t->mono = mono;
	t->unheld = !held;
	htab_insert(&reg->tomb_tab, &t->node, registry_key_hash(k->ah,
	    k->ih));
	if (held) {
		TAILQ_INSERT_TAIL(&reg->tomb_fifo, t, entry);
		reg->ntombs++;
	} else {
		TAILQ_INSERT_TAIL(&reg->tomb_unheld, t, entry);
		reg->nunheld++;
		reg->unheld_bytes += bytes;
	}
	reg->tomb_bytes += bytes;
}

/* Forget one tombstone. */
void
tomb_del(struct registry *reg, struct tombstone *t)
{
	size_t	bytes = TOMB_OVERHEAD + strlen(t->key) + 1 +
		    strlen(t->key + t->idoff) + 1;

	htab_remove(&reg->tomb_tab, &t->node);
	if (t->unheld) {
		TAILQ_REMOVE(&reg->tomb_unheld, t, entry);
		reg->nunheld--;
		reg->unheld_bytes -= bytes;
	} else {
		TAILQ_REMOVE(&reg->tomb_fifo, t, entry);
		reg->ntombs--;
	}
	reg->tomb_bytes -= bytes;
	free(t);
}

/* Bytes of the tombstones, of both kinds. */
size_t
registry_tombstone_bytes(const struct registry *reg)
{
	return (reg->tomb_bytes);
}

/* Tombstones held: of leases this node held, and of others. */
void
registry_tombstone_counts(const struct registry *reg, size_t *held,
    size_t *unheld)
{
	*held = reg->ntombs;
	*unheld = reg->nunheld;
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
