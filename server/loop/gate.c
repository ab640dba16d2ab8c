/*
 * gate.c: readiness and the read gate (see gate.h). A handful of fields
 * and an observer list; every transition happens at most once, in the
 * order STARTING -> READY -> STOPPING (STOPPING may also follow STARTING).
 */
#include <stdint.h>
#include <stdlib.h>

#include "gate.h"
#include "xmalloc.h"

struct gate {
	enum gate_state		state;
	int			ready;		/* ever opened */
	int			sync_count;
	int64_t			reads_at;	/* mono; INT64_MAX: never */
	struct hk_time		start;
	struct gate_observer	obs[GATE_MAX_OBSERVERS];
	size_t			nobs;
};

static void	gate_notify(struct gate *, int, struct hk_time);

/* A gate that starts closed, with no read deadline yet. */
struct gate *
gate_new(struct hk_time start)
{
	struct gate	*g = xcalloc(1, sizeof *g);

	g->state = GATE_STARTING;
	g->reads_at = INT64_MAX;
	g->start = start;
	return (g);
}

/* Free the gate. */
void
gate_free(struct gate *g)
{
	free(g);
}

/* Add an observer; more than GATE_MAX_OBSERVERS is our own bug. */
void
gate_observe(struct gate *g, const struct gate_observer *o)
{
	if (g->nobs >= GATE_MAX_OBSERVERS)
		abort();
	g->obs[g->nobs++] = *o;
}

/* Tell every observer of the new state. */
static void
gate_notify(struct gate *g, int count, struct hk_time now)
{
	size_t	i;

	for (i = 0; i < g->nobs; i++)
		g->obs[i].cb(g->state, count, now, g->obs[i].arg);
}

/* Reads may start at `mono` even if the sync has not finished. */
void
gate_allow_reads_at(struct gate *g, int64_t mono)
{
	g->reads_at = mono;
}

/* The start-up sync is done (or given up): open, once. */
void
gate_set_ready(struct gate *g, int count, struct hk_time now)
{
	if (g->ready || g->state == GATE_STOPPING)
		return;
	g->ready = 1;
	g->sync_count = count;
	g->state = GATE_READY;
	gate_notify(g, count, now);
}

/* Shutting down: close for good, once. */
void
gate_set_stopping(struct gate *g, struct hk_time now)
{
	if (g->state == GATE_STOPPING)
		return;
	g->state = GATE_STOPPING;
	gate_notify(g, 0, now);
}

/* The current state. */
enum gate_state
gate_state(const struct gate *g)
{
	return (g->state);
}

/* Has the gate ever opened? */
int
gate_is_ready(const struct gate *g)
{
	return (g->ready);
}

/* Is the server shutting down? */
int
gate_is_stopping(const struct gate *g)
{
	return (g->state == GATE_STOPPING);
}

/* Reads are allowed once opened, or once the empty-sync wait passed. */
int
gate_allow_read(const struct gate *g, int64_t mono)
{
	return (g->ready || mono >= g->reads_at);
}

/* When the server started. */
struct hk_time
gate_started(const struct gate *g)
{
	return (g->start);
}

/* How many instances the start-up sync copied. */
int
gate_sync_count(const struct gate *g)
{
	return (g->sync_count);
}
