/*
 * ratelimit.c: token buckets per key in a bounded table. Each entry keeps
 * its token count and when it was last refilled; entries sit in a hash
 * table (common/hash.c: keyed, so addresses a client picks cannot all
 * share a bucket, and growing with the entries) and on a
 * least-recently-used list. An entry idle long enough to have
 * refilled to the burst is the same as no entry, so those are dropped
 * from the cold end as the table is used; when the table is still full,
 * the least recently used key goes and starts over with a full bucket.
 * Memory is thus bounded by max_entries, whatever the keys. A take of
 * several tokens (an airlift announcement of many services) may leave a
 * bucket in debt; such an entry is kept until the debt is paid.
 */
#include <sys/queue.h>

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "ratelimit.h"
#include "xmalloc.h"

/* One key's bucket. */
struct rl_entry {
	struct htab_node	 node;		/* in ratelimit->tab, by key */
	TAILQ_ENTRY(rl_entry)	 lru;		/* least recently used first */
	char			*key;
	double			 tokens;
	int64_t			 last;		/* refilled up to this ms */
};
TAILQ_HEAD(rl_list, rl_entry);

struct ratelimit {
	double		  rate;		/* tokens per second */
	double		  burst;
	size_t		  max;
	struct htab	  tab;
	size_t		  n;
	struct rl_list	  lru;
};

static void	ratelimit_drop(struct ratelimit *, struct rl_entry *);

/* A limiter; rate <= 0 makes ratelimit_take() always allow. */
struct ratelimit *
ratelimit_new(double rate, double burst, size_t max_entries)
{
	struct ratelimit	*rl = xcalloc(1, sizeof *rl);

	rl->rate = rate;
	rl->burst = burst < 1 ? 1 : burst;
	rl->max = max_entries < 1 ? 1 : max_entries;
	htab_init(&rl->tab, 16);
	TAILQ_INIT(&rl->lru);
	return (rl);
}

/* Free the limiter and every entry; NULL is fine. */
void
ratelimit_free(struct ratelimit *rl)
{
	struct rl_entry	*e;

	if (rl == NULL)
		return;
	while ((e = TAILQ_FIRST(&rl->lru)) != NULL)
		ratelimit_drop(rl, e);
	htab_clear(&rl->tab);
	free(rl);
}

/* Unlink and free one entry. */
static void
ratelimit_drop(struct ratelimit *rl, struct rl_entry *e)
{
	htab_remove(&rl->tab, &e->node);
	TAILQ_REMOVE(&rl->lru, e, lru);
	rl->n--;
	free(e->key);
	free(e);
}

/* Take a token for key; 0 when allowed, else ms until one is available. */
int64_t
ratelimit_take(struct ratelimit *rl, const char *key, int64_t now)
{
	return (ratelimit_take_n(rl, key, 1, now));
}

/* Whether an entry has refilled to the burst by now. */
static int
ratelimit_full(const struct ratelimit *rl, const struct rl_entry *e,
    int64_t now)
{
	return (now > e->last && e->tokens + (double)(now - e->last) *
	    rl->rate / 1000.0 >= rl->burst);
}

/* Take n tokens for key; see ratelimit.h. */
int64_t
ratelimit_take_n(struct ratelimit *rl, const char *key, double n,
    int64_t now)
{
	struct htab_node	*nd;
	struct rl_entry		*e;
	uint64_t		 h;
	double			 need;
	int64_t			 wait;

	if (rl == NULL || rl->rate <= 0 || key == NULL)
		return (0);
	if (n < 1)
		n = 1;
	need = n < rl->burst ? n : rl->burst;
	/* Entries refilled to the burst by now carry no state: forget. */
	while ((e = TAILQ_FIRST(&rl->lru)) != NULL && ratelimit_full(rl, e,
	    now))
		ratelimit_drop(rl, e);

	h = hash_str(key);
	e = NULL;
	for (nd = htab_first(&rl->tab, h); nd != NULL; nd = nd->next) {
		e = (struct rl_entry *)(void *)((char *)nd -
		    offsetof(struct rl_entry, node));
		if (nd->hash == h && strcmp(e->key, key) == 0)
			break;
		e = NULL;
	}
	if (e == NULL) {
		if (rl->n >= rl->max)
			ratelimit_drop(rl, TAILQ_FIRST(&rl->lru));
		e = xcalloc(1, sizeof *e);
		e->key = xstrdup(key);
		e->tokens = rl->burst;
		e->last = now;
		htab_insert(&rl->tab, &e->node, h);
		TAILQ_INSERT_TAIL(&rl->lru, e, lru);
		rl->n++;
	} else {
		if (now > e->last) {
			e->tokens += (double)(now - e->last) * rl->rate /
			    1000.0;
			if (e->tokens > rl->burst)
				e->tokens = rl->burst;
		}
		e->last = now > e->last ? now : e->last;
		TAILQ_REMOVE(&rl->lru, e, lru);
		TAILQ_INSERT_TAIL(&rl->lru, e, lru);
	}
	if (e->tokens >= need) {
		e->tokens -= n;
		return (0);
	}
	wait = (int64_t)((need - e->tokens) * 1000.0 / rl->rate) + 1;
	return (wait);
}

/* The wait for key's next token, nothing taken; see ratelimit.h. */
int64_t
ratelimit_wait(const struct ratelimit *rl, const char *key, int64_t now)
{
	struct htab_node	*n;
	const struct rl_entry	*e;
	uint64_t		 h;
	double			 tokens;

	if (rl == NULL || rl->rate <= 0 || key == NULL)
		return (0);
	h = hash_str(key);
	for (n = htab_first(&rl->tab, h); n != NULL; n = n->next) {
		e = (const struct rl_entry *)(const void *)((const char *)n -
		    offsetof(struct rl_entry, node));
		if (n->hash != h || strcmp(e->key, key) != 0)
			continue;
		tokens = e->tokens;
		if (now > e->last)
			tokens += (double)(now - e->last) * rl->rate / 1000.0;
		if (tokens >= 1)
			return (0);
		return ((int64_t)((1 - tokens) * 1000.0 / rl->rate) + 1);
	}
	return (0);
}

/* Number of keys tracked. */
size_t
ratelimit_size(const struct ratelimit *rl)
{
	return (rl != NULL ? rl->n : 0);
}
