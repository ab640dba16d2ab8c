/*
 * peerq.c: replication tasks, the bounded per-peer queue and the back-off
 * (peerq.h). Plain data structures: no libevent, no clock; `now` is the
 * caller's monotonic ms.
 *
 * The queue is a list in arrival order plus a hash table by task key, so a
 * newer task for the same key replaces the pending one in place (newest
 * wins, the oldest position and age are kept, as Eureka does). When full,
 * the oldest heartbeat near the head is dropped rather than a
 * registration or a cancel: a lost heartbeat is repaired by the next one.
 */

#include <stdlib.h>
#include <string.h>

#define PEERQ_PRIVATE
#include "bug.h"
#include "instance.h"
#include "peerq.h"
#include "log.h"
#include "registry.h"
#include "xmalloc.h"

#define PEER_DROP_SCAN		64	/* tasks looked at for a heartbeat
					   to drop when a queue is full */
#define PEER_DEFAULT_LEASE_MS	(LEASE_DEFAULT_DURATION_SECS * 1000LL)

static void	peerq_self_check(struct peer_queue *);


/* ------------------------------------------------------------------ */
/* Tasks and the queue.                                                 */

/* Eureka's task-id prefix for an action. */
static const char *
peer_task_prefix(enum repl_action a)
{
	switch (a) {
	case REPL_HEARTBEAT:
		return ("heartbeat");
	case REPL_REGISTER:
		return ("register");
	case REPL_CANCEL:
		return ("cancel");
	case REPL_STATUS_UPDATE:
		return ("statusUpdate");
	case REPL_DELETE_STATUS_OVERRIDE:
		return ("deleteStatusOverride");
	}
	return ("unknown");
}

/* A new task with its key; the caller fills the rest of item. */
struct peer_task *
peer_task_new(enum repl_action a, const char *app, const char *id,
    int64_t expiry)
{
	struct peer_task	*t;

	t = xcalloc(1, sizeof *t);
	xasprintf(&t->key, "%s#%s/%s", peer_task_prefix(a), app, id);
	t->item.action = a;
	t->item.app_name = xstrdup(app);
	t->item.id = xstrdup(id);
	t->item.overridden_status = STATUS_UNKNOWN;
	t->item.status = STATUS_UNKNOWN;
	t->expiry = expiry;
	return (t);
}

/* Release a task and what its item owns. */
void
peer_task_free(struct peer_task *t)
{
	if (t == NULL)
		return;
	free(t->key);
	free(t->item.app_name);
	free(t->item.id);
	free(t->item.origin_node);
	free(t->item.origin_user);
	free(t->item.origin_addr);
	instance_free(t->item.info);
	free(t);
}

/* A queue holding at most max tasks (at least one). */
struct peer_queue *
peer_queue_new(size_t max)
{
	struct peer_queue	*q;

	q = xcalloc(1, sizeof *q);
	q->max = max > 0 ? max : 1;
	htab_init(&q->tab, 64);
	return (q);
}

/* Free the queue and every pending task. */
void
peer_queue_free(struct peer_queue *q)
{
	struct peer_task	*t, *next;

	if (q == NULL)
		return;
	for (t = q->head; t != NULL; t = next) {
		next = t->next;
		peer_task_free(t);
	}
	htab_clear(&q->tab);
	free(q);
}

/* The pending task with this key, or NULL. */
static struct peer_task *
peer_queue_find(const struct peer_queue *q, const char *key)
{
	struct htab_node	*n;
	struct peer_task	*t;
	uint64_t		 h = hash_str(key);

	for (n = htab_first(&q->tab, h); n != NULL; n = n->next) {
		t = (struct peer_task *)(void *)((char *)n -
		    offsetof(struct peer_task, hnode));
		if (n->hash == h && strcmp(t->key, key) == 0)
			return (t);
	}
	return (NULL);
}

/* Unlink t from the order list and its hash chain; does not free. */
static void
peer_queue_unlink(struct peer_queue *q, struct peer_task *t)
{
	if (t->prev != NULL)
		t->prev->next = t->next;
	else
		q->head = t->next;
	if (t->next != NULL)
		t->next->prev = t->prev;
	else
		q->tail = t->prev;
	htab_remove(&q->tab, &t->hnode);
	t->prev = t->next = NULL;
	if (HK_BUG(q->len == 0))
		return;
	q->len--;
	if (t->item.action != REPL_HEARTBEAT && !HK_BUG(q->urgent == 0))
		q->urgent--;
}

/* Hash t (already linked in order). */
static void
peer_queue_hash(struct peer_queue *q, struct peer_task *t)
{
	htab_insert(&q->tab, &t->hnode, hash_str(t->key));
	q->len++;
	if (t->item.action != REPL_HEARTBEAT)
		q->urgent++;
}

/* Append a task, coalescing by key and dropping the oldest when full. */
enum peer_push
peer_queue_push(struct peer_queue *q, struct peer_task *t, int64_t now)
{
	struct peer_task	*old;
	enum peer_push		 rc = PEER_PUSH_ADDED;

	if ((old = peer_queue_find(q, t->key)) != NULL) {
		/* Newest wins, oldest position (and age) kept (Eureka). */
		t->queued_at = old->queued_at;
		t->prev = old->prev;
		t->next = old->next;
		if (t->prev != NULL)
			t->prev->next = t;
		else
			q->head = t;
		if (t->next != NULL)
			t->next->prev = t;
		else
			q->tail = t;
		old->prev = old->next = NULL;
		/* Swap in the hash table: unhash old, hash t. */
		htab_remove(&q->tab, &old->hnode);
		q->len--;
		if (old->item.action != REPL_HEARTBEAT &&
		    !HK_BUG(q->urgent == 0))
			q->urgent--;
		peer_queue_hash(q, t);
		peer_task_free(old);
		q->stats.coalesced++;
		peerq_self_check(q);
		return (PEER_PUSH_REPLACED);
	}
	if (q->len >= q->max) {
		/*
		 * Full: drop the oldest heartbeat near the head rather than a
		 * registration or cancel (a lost heartbeat is repaired by the
		 * next one; a lost registration is not). The scan is bounded.
		 */
		size_t	 scan = 0;

		for (old = q->head; old != NULL && scan < PEER_DROP_SCAN &&
		    old->item.action != REPL_HEARTBEAT; old = old->next)
			scan++;
		if (old == NULL || old->item.action != REPL_HEARTBEAT)
			old = q->head;
		peer_queue_unlink(q, old);
		peer_task_free(old);
		q->stats.overflow++;
		rc = PEER_PUSH_DROPPED;
	}
	t->queued_at = now;
	t->next = NULL;
	t->prev = q->tail;
	if (q->tail != NULL)
		q->tail->next = t;
	else
		q->head = t;
	q->tail = t;
	peer_queue_hash(q, t);
	peerq_self_check(q);
	return (rc);
}

/* Number of pending tasks. */
size_t
peer_queue_len(const struct peer_queue *q)
{
	return (q->len);
}

/* Number of pending tasks that change what clients see (not heartbeats). */
size_t
peer_queue_urgent(const struct peer_queue *q)
{
	return (q->urgent);
}

/* Is a task of the caller's order `seq` or earlier still queued? */
int
peer_queue_holds(const struct peer_queue *q, uint64_t seq)
{
	const struct peer_task	*t;

	for (t = q->head; t != NULL; t = t->next)
		if (t->seq != 0 && t->seq <= seq)
			return (1);
	return (0);
}

/* Drop and overflow counters. */
const struct peer_queue_stats *
peer_queue_stats(const struct peer_queue *q)
{
	return (&q->stats);
}

/* 0 when a batch should go now, else ms to wait, -1 when empty. */
int64_t
peer_queue_due(const struct peer_queue *q, int64_t now, int64_t min_age)
{
	int64_t	age;

	if (q->head == NULL)
		return (-1);
	if (q->len >= PEER_BATCH_MAX || q->len >= q->max)
		return (0);
	age = now - q->head->queued_at;
	if (age >= min_age)
		return (0);
	return (min_age - age);
}

/* Take up to max live tasks in queue order; expired ones are dropped. */
size_t
peer_queue_take(struct peer_queue *q, struct peer_task **out, size_t max,
    int64_t now)
{
	struct peer_task	*t;
	size_t			 n = 0;

	while (n < max && (t = q->head) != NULL) {
		peer_queue_unlink(q, t);
		if (t->expiry <= now) {
			q->stats.expired++;
			peer_task_free(t);
			continue;
		}
		out[n++] = t;
	}
	peerq_self_check(q);
	return (n);
}

/* Return a failed batch to the front of the queue, order kept. */
void
peer_queue_requeue(struct peer_queue *q, struct peer_task **v, size_t n,
    int64_t now)
{
	struct peer_task	*t;
	size_t			 i;

	for (i = n; i-- > 0;) {
		t = v[i];
		v[i] = NULL;
		if (t->expiry <= now) {
			q->stats.expired++;
			peer_task_free(t);
			continue;
		}
		if (peer_queue_find(q, t->key) != NULL) {
			/* A newer task for the same id is pending. */
			q->stats.coalesced++;
			peer_task_free(t);
			continue;
		}
		if (q->len >= q->max) {
			q->stats.overflow++;
			peer_task_free(t);
			continue;
		}
		t->prev = NULL;
		t->next = q->head;
		if (q->head != NULL)
			q->head->prev = t;
		else
			q->tail = t;
		q->head = t;
		peer_queue_hash(q, t);
	}
	peerq_self_check(q);
}

/* A breach found by peerq_check: the cause, and -1. */
static int
peerq_breach(char **cause, const char *what, size_t a, size_t b)
{
	xasprintf(cause, "peer queue: %s (%zu, %zu)", what, a, b);
	return (-1);
}

/* Walk the queue; 0 when every link, counter and index holds. */
int
peerq_check(const struct peer_queue *q, char **cause)
{
	const struct peer_task	*t, *prev = NULL;
	size_t			 n = 0, urgent = 0;

	if (q->max == 0)
		return (peerq_breach(cause, "max is 0", 0, 0));
	if ((q->head == NULL) != (q->tail == NULL))
		return (peerq_breach(cause, "one end of the list is NULL",
		    q->head == NULL, q->tail == NULL));
	for (t = q->head; t != NULL; prev = t, t = t->next) {
		if (t->prev != prev)
			return (peerq_breach(cause, "back link broken at task",
			    n, 0));
		if (t->key == NULL || t->item.app_name == NULL ||
		    t->item.id == NULL)
			return (peerq_breach(cause, "task without key or name",
			    n, 0));
		if (peer_queue_find(q, t->key) != t)
			return (peerq_breach(cause, "key index does not find "
			    "task", n, 0));
		if (t->hnode.hash != hash_str(t->key))
			return (peerq_breach(cause, "task hashed under another "
			    "key", n, 0));
		if (t->item.action != REPL_HEARTBEAT)
			urgent++;
		if (++n > q->len)
			return (peerq_breach(cause, "list longer than len",
			    n, q->len));
	}
	if (prev != q->tail)
		return (peerq_breach(cause, "tail is not the last task", n, 0));
	if (n != q->len)
		return (peerq_breach(cause, "len differs from the list", q->len,
		    n));
	if (n > q->max)
		return (peerq_breach(cause, "more tasks than max", n, q->max));
	if (urgent != q->urgent)
		return (peerq_breach(cause, "urgent differs from the list",
		    q->urgent, urgent));
	if (htab_count(&q->tab) != n)
		return (peerq_breach(cause, "key table size differs from len",
		    htab_count(&q->tab), n));
	return (0);
}

/* After an operation, in the tests: a queue that fails its walk aborts. */
static void
peerq_self_check(struct peer_queue *q)
{
	char	*cause = NULL;

	if (!bug_check_due(&q->check_left, q->len))
		return;
	if (peerq_check(q, &cause) != 0)
		fatalx("%s: %s", __func__, cause);
}

/* ------------------------------------------------------------------ */
/* Back-off.                                                            */

/*
 * Pause after a failure: the nominal pause starts at Eureka's (1 s for
 * congestion, 100 ms otherwise), doubles per consecutive failure up to
 * 30 s, and the pause taken is uniformly in [nominal/2, nominal] so that
 * peers which failed together do not retry together.
 */
int64_t
peer_backoff_fail(struct peer_backoff *bo, enum peer_failure kind,
    uint32_t rnd, int64_t now)
{
	int64_t		nominal, half, delay;
	unsigned	shift;

	nominal = kind == PEER_FAIL_CONGESTION ? PEER_CONGESTION_MS :
	    PEER_TRANSIENT_MS;
	shift = bo->failures < 16 ? bo->failures : 16;
	nominal <<= shift;
	if (nominal > PEER_BACKOFF_CAP_MS)
		nominal = PEER_BACKOFF_CAP_MS;
	half = nominal / 2;
	delay = half + (int64_t)(rnd % (uint32_t)(nominal - half + 1));
	if (bo->failures < UINT32_MAX)
		bo->failures++;
	bo->until = now + delay;
	return (delay);
}

/* A request succeeded: no more pause. */
void
peer_backoff_ok(struct peer_backoff *bo)
{
	bo->failures = 0;
	bo->until = 0;
}

/* May we send now? */
int
peer_backoff_ready(const struct peer_backoff *bo, int64_t now)
{
	return (now >= bo->until);
}

/* ------------------------------------------------------------------ */
/* The batching delay and the tasks made from registry events.          */

/* Changes go out within PEER_DISPATCH_MS, heartbeats alone in 500 ms. */
int64_t
peer_queue_batch_delay(const struct peer_queue *q)
{
	return (peer_queue_urgent(q) > 0 ? PEER_DISPATCH_MS :
	    PEER_BATCH_AGE_MS);
}

/* Expiry of a Register/Heartbeat task (§6.2 table). */
int64_t
peer_lease_expiry(const struct instance *in, int64_t now)
{
	if (in != NULL && in->has_lease && in->lease.renewal_interval_secs > 0)
		return (now + (int64_t)in->lease.renewal_interval_secs * 1000);
	return (now + PEER_DEFAULT_LEASE_MS);
}

/* Build the task for one registry event, NULL if nothing to send. */
struct peer_task *
peer_task_from_event(const struct registry_event *ev, int64_t mono,
    int64_t max_time)
{
	struct peer_task	*t;
	const struct instance	*in = ev->inst;

	switch (ev->type) {
	case REG_EV_REGISTER:
	case REG_EV_METADATA:
		if (in == NULL)
			return (NULL);
		t = peer_task_new(REPL_REGISTER, ev->app, ev->id,
		    peer_lease_expiry(in, mono));
		t->item.info = instance_dup(in);
		break;
	case REG_EV_RENEW:
		if (in == NULL)
			return (NULL);
		t = peer_task_new(REPL_HEARTBEAT, ev->app, ev->id,
		    peer_lease_expiry(in, mono));
		if (ev->override != STATUS_UNKNOWN) {
			t->item.has_overridden = 1;
			t->item.overridden_status = ev->override;
		}
		break;
	case REG_EV_CANCEL:
		/* The tombstone's origin time travels as lastDirtyTimestamp. */
		t = peer_task_new(REPL_CANCEL, ev->app, ev->id,
		    mono + max_time);
		t->item.has_last_dirty = ev->cancel_ts > 0;
		t->item.last_dirty_ts = ev->cancel_ts;
		return (t);
	case REG_EV_STATUS_UPDATE:
	case REG_EV_DELETE_OVERRIDE:
		if (in == NULL)
			return (NULL);
		t = peer_task_new(ev->type == REG_EV_STATUS_UPDATE ?
		    REPL_STATUS_UPDATE : REPL_DELETE_STATUS_OVERRIDE,
		    ev->app, ev->id, mono + max_time);
		/* As Eureka: the copy rides along, with its origin stamp. */
		t->item.info = instance_dup(in);
		break;
	default:
		return (NULL);	/* evictions are never replicated */
	}
	t->item.has_last_dirty = 1;
	t->item.last_dirty_ts = in->last_dirty_ts;
	t->item.has_status = 1;
	t->item.status = in->status;
	return (t);
}

/* A Register of our copy of (app, id). */
struct peer_task *
peer_task_register(const char *app, const char *id,
    const struct instance *in, int64_t now)
{
	struct peer_task	*t;

	t = peer_task_new(REPL_REGISTER, app, id, peer_lease_expiry(in, now));
	t->item.info = instance_dup(in);
	t->item.has_last_dirty = 1;
	t->item.last_dirty_ts = in->last_dirty_ts;
	t->item.has_status = 1;
	t->item.status = in->status;
	return (t);
}

/* A Cancel whose lastDirtyTimestamp is our tombstone's time. */
struct peer_task *
peer_task_cancel(const char *app, const char *id, int64_t cancel_ts,
    int64_t now, int64_t max_time)
{
	struct peer_task	*t;

	t = peer_task_new(REPL_CANCEL, app, id, now + max_time);
	t->item.has_last_dirty = 1;
	t->item.last_dirty_ts = cancel_ts;
	return (t);
}
