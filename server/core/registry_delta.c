/*
 * registry_delta.c: the recently-changed queue behind the delta fetch
 * (spec §5.12, Eureka's recentlyChangedQueue): a ring of refcounted
 * lease references, retained retention_ms and bounded by count and by
 * the bytes of the cancelled leases it keeps alive; registry_delta()
 * and the resumable delta walk that builds the delta a slice at a time,
 * and the purge that also ages tombstones and overrides. The ring grows
 * from empty (qcap 0) on the first enqueue, so every `% qcap` runs with
 * records in it and qcap > 0. Part of the registry module
 * (registry_int.h).
 */
#include <stdlib.h>
#include <string.h>

#include "registry_int.h"
#include "xmalloc.h"

static void	registry_dequeue(struct registry *, int64_t, int);

/*
 * Drop the oldest queue record. early: it goes before its retention time
 * (a bound was hit), so deltas stay marked incomplete until it would have
 * expired anyway, and encodings are invalidated to carry the mark.
 */
static void
registry_dequeue(struct registry *reg, int64_t now, int early)
{
	struct change	*c;

	/* The rule every `% qcap` relies on (see above). */
	HK_ASSERT(reg->qn > 0 && reg->qcap > 0);
	c = &reg->q[reg->qhead];
	if (early && c->ts >= now - reg->conf.retention_ms) {
		if (c->ts > reg->qtrunc_ts)
			reg->qtrunc_ts = c->ts;
		reg->stats.delta_dropped++;
		registry_touch(reg, NULL);
	}
	lease_unref(reg, c->lease);
	reg->qhead = (reg->qhead + 1) % reg->qcap;
	reg->qn--;
	reg->qseq++;
}

/*
 * Append to the recently-changed queue; past the count or the byte bound
 * the oldest records go (never the one just added).
 */
void
registry_enqueue(struct registry *reg, struct lease *l, int64_t now)
{
	struct change	*nq;
	size_t		 i, ncap;

	if (reg->qn == reg->qmax)
		registry_dequeue(reg, now, 1);
	/* The ring itself takes at most half the byte bound. */
	if (reg->qn == reg->qcap && reg->qcap > 0 &&
	    reg->conf.max_delta_bytes > 0 && reg->qcap * 2 * sizeof *reg->q >
	    reg->conf.max_delta_bytes / 2)
		registry_dequeue(reg, now, 1);
	if (reg->qn == reg->qcap) {
		ncap = reg->qcap == 0 ? 64 : reg->qcap * 2;
		if (ncap > reg->qmax)
			ncap = reg->qmax;
		nq = xreallocarray(NULL, ncap, sizeof *nq);
		for (i = 0; i < reg->qn; i++)
			nq[i] = reg->q[(reg->qhead + i) % reg->qcap];
		free(reg->q);
		reg->q = nq;
		reg->qcap = ncap;
		reg->qhead = 0;
	}
	/* Grown above if full: room for one more, so qcap > 0. */
	HK_ASSERT(reg->qn < reg->qcap);
	l->refs++;
	reg->q[(reg->qhead + reg->qn) % reg->qcap].lease = l;
	reg->q[(reg->qhead + reg->qn) % reg->qcap].ts = now;
	reg->qn++;
	while (reg->conf.max_delta_bytes > 0 && reg->qn > 1 &&
	    registry_delta_bytes(reg) > reg->conf.max_delta_bytes)
		registry_dequeue(reg, now, 1);
}

/*
 * The delta (§5.9) in O(changes): a backward pass marks the last queue
 * entry of each (app, id), a forward pass groups apps by first appearance
 * and copies the marked leases' current state in queue order.
 */
struct applications *
registry_delta(struct registry *reg, int64_t now)
{
	struct applications	 *as = applications_new();
	struct application	**groups;
	struct lease		 *l, *o;
	size_t			 *heads, *next, *gheads, *gnext, nb, i, j, k;
	char			 *win;
	uint64_t		  h;
	REGISTRY_CHECKED(reg);

	(void)now;
	if (reg->qn == 0)
		return (as);
	for (nb = 16; nb < reg->qn * 2; nb *= 2)
		;
	heads = xreallocarray(NULL, nb, sizeof *heads);
	gheads = xreallocarray(NULL, nb, sizeof *gheads);
	for (i = 0; i < nb; i++)
		heads[i] = gheads[i] = SIZE_MAX;
	next = xreallocarray(NULL, reg->qn, sizeof *next);
	gnext = xreallocarray(NULL, reg->qn, sizeof *gnext);
	groups = xcalloc(reg->qn, sizeof *groups);
	win = xcalloc(reg->qn, 1);

	for (k = reg->qn; k-- > 0;) {
		l = reg->q[(reg->qhead + k) % reg->qcap].lease;
		h = lease_key_hash(l) & (nb - 1);
		for (j = heads[h]; j != SIZE_MAX; j = next[j]) {
			o = reg->q[(reg->qhead + j) % reg->qcap].lease;
			if (o == l || (strcmp(lease_id(o), lease_id(l)) == 0 &&
			    strcasecmp(o->inst->app, l->inst->app) == 0))
				break;
		}
		if (j != SIZE_MAX)
			continue;
		win[k] = 1;
		next[k] = heads[h];
		heads[h] = k;
	}

	for (k = 0; k < reg->qn; k++) {
		l = reg->q[(reg->qhead + k) % reg->qcap].lease;
		h = l->app_hash & (nb - 1);
		for (j = gheads[h]; j != SIZE_MAX; j = gnext[j]) {
			if (strcasecmp(groups[j]->name, l->inst->app) == 0)
				break;
		}
		if (j == SIZE_MAX) {
			j = k;
			groups[k] = application_new(l->inst->app);
			applications_add(as, groups[k]);
			gnext[k] = gheads[h];
			gheads[h] = k;
		}
		if (win[k])
			app_append(groups[j], instance_dup(l->inst));
	}

	free(heads);
	free(next);
	free(gheads);
	free(gnext);
	free(groups);
	free(win);
	return (as);
}

/*
 * A delta walk (registry.h): registry_delta()'s two passes over the
 * queue, then the emission, each resumable at a record index. Pass 1
 * (from the tail) marks each lease's last record, the winner; pass 2
 * (from the head) finds each record's group, the first record of its
 * application, and chains the winners of a group in queue order; the
 * emission follows the groups in order of first appearance.
 *
 * The walk covers the records queued when it began, named by their
 * sequence numbers (reg->qseq counts the records dequeued), never by
 * ring positions, so changes between steps cannot mislead it: records
 * appended since are not in this walk, and records dequeued since (past
 * retention, or dropped at the byte bound: the oldest go first) are
 * skipped. The queue holds a reference on each record's lease, so a
 * record still queued has its lease; one dequeued is never touched again.
 * Pass 1 meets records newest first and compares each with newer ones
 * only, which outlive it; pass 2 and the emission compare group names
 * with copies kept by the walk (gname).
 */
struct reg_dwalk {
	uint64_t	 gen;
	uint64_t	 seq0;		/* record 0's sequence number */
	size_t		 qn;
	int		 phase;		/* 0 winners, 1 groups, 2 emit, 3 done */
	size_t		 k;		/* the next record of the phase */
	size_t		 nb;
	size_t		*heads, *next;	/* pass 1: by lease key */
	size_t		*gheads, *gnext;	/* pass 2: by app */
	size_t		*gfirst, *gtail;	/* a group's winners, */
	size_t		*link;		/* chained in queue order */
	size_t		*order;		/* the group heads, in order */
	char		**gname;	/* a group head record's app name */
	size_t		 ng, gi;	/* groups; the next one to emit */
	size_t		 at;		/* its next winner, SIZE_MAX: first */
	int		 gemitted;	/* an instance of it was emitted */
	uint8_t		*win;
};

/* The lease of the walk's record k, NULL once it left the queue. */
static struct lease *
dwalk_lease(const struct registry *reg, const struct reg_dwalk *w, size_t k)
{
	uint64_t	seq = w->seq0 + k;

	if (seq < reg->qseq || seq >= reg->qseq + reg->qn)
		return (NULL);
	return (reg->q[(reg->qhead + (size_t)(seq - reg->qseq)) %
	    reg->qcap].lease);
}

/* Begin a walk of the delta as the queue is now. */
struct reg_dwalk *
registry_dwalk_new(const struct registry *reg)
{
	struct reg_dwalk	*w = xcalloc(1, sizeof *w);
	size_t			 i, n = reg->qn;

	w->gen = reg->gen;
	w->seq0 = reg->qseq;
	w->qn = n;
	if (n == 0) {
		w->phase = 3;
		return (w);
	}
	for (w->nb = 16; w->nb < n * 2; w->nb *= 2)
		;
	w->heads = xreallocarray(NULL, w->nb, sizeof *w->heads);
	w->gheads = xreallocarray(NULL, w->nb, sizeof *w->gheads);
	for (i = 0; i < w->nb; i++)
		w->heads[i] = w->gheads[i] = SIZE_MAX;
	w->next = xreallocarray(NULL, n, sizeof *w->next);
	w->gnext = xreallocarray(NULL, n, sizeof *w->gnext);
	w->gfirst = xreallocarray(NULL, n, sizeof *w->gfirst);
	w->gtail = xreallocarray(NULL, n, sizeof *w->gtail);
	w->link = xreallocarray(NULL, n, sizeof *w->link);
	w->order = xreallocarray(NULL, n, sizeof *w->order);
	w->win = xcalloc(n, 1);
	w->k = n;		/* pass 1 runs from the tail */
	return (w);
}

/* Free a walk. */
void
registry_dwalk_free(struct reg_dwalk *w)
{
	size_t	i;

	if (w == NULL)
		return;
	for (i = 0; i < w->ng; i++)
		free(w->gname[w->order[i]]);
	free(w->gname);
	free(w->heads);
	free(w->next);
	free(w->gheads);
	free(w->gnext);
	free(w->gfirst);
	free(w->gtail);
	free(w->link);
	free(w->order);
	free(w->win);
	free(w);
}

/* Whether the queue is still the one the walk began on (no change). */
int
registry_dwalk_valid(const struct registry *reg, const struct reg_dwalk *w)
{
	return (w->gen == reg->gen && w->seq0 == reg->qseq &&
	    w->qn == reg->qn);
}

/* Pass 1, one record: whether k is the last record of its lease. */
static void
dwalk_winner(const struct registry *reg, struct reg_dwalk *w, size_t k,
    struct lease *l)
{
	struct lease	*o;
	size_t		 h, j;

	h = lease_key_hash(l) & (w->nb - 1);
	for (j = w->heads[h]; j != SIZE_MAX; j = w->next[j]) {
		o = dwalk_lease(reg, w, j);	/* newer than k: queued */
		if (o == l || (strcmp(lease_id(o), lease_id(l)) == 0 &&
		    strcasecmp(o->inst->app, l->inst->app) == 0))
			return;
	}
	w->win[k] = 1;
	w->next[k] = w->heads[h];
	w->heads[h] = k;
}

/* Up to max records of the walk; 1 when it is complete. */
int
registry_dwalk_step(const struct registry *reg, struct reg_dwalk *w,
    size_t max, size_t *donep, int (*emit)(const char *,
    const struct instance *, int, void *), void *arg)
{
	struct lease	*l;
	size_t		 done = 0, h, j, k;
	int		 first;

	while (w->phase == 0 && done < max) {
		if (w->k == 0) {
			w->phase = 1;
			free(w->heads);
			free(w->next);
			w->heads = w->next = NULL;
			w->gname = xcalloc(w->qn, sizeof *w->gname);
			break;
		}
		k = --w->k;
		done++;
		if ((l = dwalk_lease(reg, w, k)) == NULL) {
			/* Dequeued, and every older record with it. */
			w->k = 0;
			continue;
		}
		dwalk_winner(reg, w, k, l);
	}
	while (w->phase == 1 && done < max) {
		if (w->k == w->qn) {
			w->phase = 2;
			w->at = SIZE_MAX;
			w->gemitted = 0;
			break;
		}
		k = w->k++;
		done++;
		if ((l = dwalk_lease(reg, w, k)) == NULL) {
			w->win[k] = 0;		/* dequeued since pass 1 */
			continue;
		}
		h = l->app_hash & (w->nb - 1);
		for (j = w->gheads[h]; j != SIZE_MAX; j = w->gnext[j]) {
			if (strcasecmp(w->gname[j], l->inst->app) == 0)
				break;
		}
		if (j == SIZE_MAX) {
			j = k;
			w->gnext[k] = w->gheads[h];
			w->gheads[h] = k;
			w->gtail[k] = w->gfirst[k] = SIZE_MAX;
			w->gname[k] = xstrdup(l->inst->app);
			w->order[w->ng++] = k;
		}
		if (!w->win[k])
			continue;
		w->link[k] = SIZE_MAX;
		if (w->gtail[j] == SIZE_MAX)
			w->gfirst[j] = k;
		else
			w->link[w->gtail[j]] = k;
		w->gtail[j] = k;
	}
	while (w->phase == 2 && done < max) {
		if (w->gi == w->ng) {
			w->phase = 3;
			break;
		}
		j = w->order[w->gi];
		k = w->at == SIZE_MAX ? w->gfirst[j] : w->link[w->at];
		if (k == SIZE_MAX) {
			w->gi++;
			w->at = SIZE_MAX;
			w->gemitted = 0;
			continue;
		}
		done++;
		w->at = k;
		if ((l = dwalk_lease(reg, w, k)) == NULL)
			continue;		/* dequeued since */
		first = !w->gemitted;
		w->gemitted = 1;
		if (emit(w->gname[j], l->inst, first, arg))
			break;
	}
	*donep = done;
	return (w->phase == 3);
}

/*
 * The retention timer's work: drop queue items older than retention_ms
 * from the head, and expired tombstones and overrides (monotonic ms).
 */
void
registry_purge_deltas(struct registry *reg, int64_t now)
{
	REGISTRY_CHECKED(reg);
	(void)registry_purge_deltas_step(reg, now, SIZE_MAX);
}

/*
 * The same, at most max queue records and tombstones a call (a million
 * records can fall past retention at once after a preload): 1 when all
 * that is due is gone, 0 when a later call must go on.
 */
int
registry_purge_deltas_step(struct registry *reg, int64_t now, size_t max)
{
	struct tombstone	*t;
	size_t			 done = 0;
	REGISTRY_CHECKED(reg);

	while (reg->qn > 0 &&
	    reg->q[reg->qhead].ts < now - reg->conf.retention_ms) {
		if (done++ == max)
			return (0);
		registry_dequeue(reg, now, 0);
	}
	while ((t = TAILQ_FIRST(&reg->tomb_fifo)) != NULL &&
	    now - t->mono > reg->conf.tombstone_ms) {
		if (done++ == max)
			return (0);
		tomb_del(reg, t);
	}
	while ((t = TAILQ_FIRST(&reg->tomb_unheld)) != NULL &&
	    now - t->mono > reg->conf.tombstone_ms) {
		if (done++ == max)
			return (0);
		tomb_del(reg, t);
	}
	override_purge(reg, now);
	return (1);
}

/* Entries in the recently-changed queue. */
size_t
registry_delta_size(const struct registry *reg)
{
	return (reg->qn);
}

/* 0 while a record younger than the retention time was dropped early. */
int
registry_delta_complete(const struct registry *reg, int64_t now)
{
	return (reg->qtrunc_ts == 0 ||
	    reg->qtrunc_ts < now - reg->conf.retention_ms);
}

/* Bytes of the delta queue: its ring and the cancelled leases it holds. */
size_t
registry_delta_bytes(const struct registry *reg)
{
	return (reg->qcap * sizeof *reg->q + reg->qbytes);
}
