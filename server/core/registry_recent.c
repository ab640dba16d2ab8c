/*
 * registry_recent.c: the last-1000 registered and cancelled rings that
 * the dashboard and /eureka/lastn show (Eureka's recentRegisteredQueue
 * and recentCanceledQueue), each a fixed ring of "APP(id)" strings whose
 * buffers are reused. Part of the registry module (registry_int.h).
 */
#include <stdlib.h>
#include <string.h>

#include "registry_int.h"
#include "xmalloc.h"

/*
 * Record "APP(id)" in a last-1000 ring, overwriting the oldest; evicted:
 * the cancelled ring's entry was an eviction (/lastn says which).
 */
void
recent_add(struct recent_ring *r, int64_t ts, const char *app,
    const char *id, int evicted)
{
	struct recent	*e = &r->v[r->next];
	size_t		 an = strlen(app), in = strlen(id);

	/* What xasprintf("%s(%s)") wrote, in the slot's bytes if they do. */
	if (e->cap < an + in + 3) {
		free(e->what);
		e->cap = an + in + 3;
		e->what = xmalloc(e->cap);
	}
	memcpy(e->what, app, an);
	e->what[an] = '(';
	memcpy(e->what + an + 1, id, in);
	memcpy(e->what + an + 1 + in, ")", 2);
	e->ts = ts;
	e->evicted = evicted;
	r->next = (r->next + 1) % REGISTRY_RECENT_MAX;
	if (r->n < REGISTRY_RECENT_MAX)
		r->n++;
}

/* Free a ring's strings. */
void
recent_clear(struct recent_ring *r)
{
	size_t	i;

	for (i = 0; i < REGISTRY_RECENT_MAX; i++)
		free(r->v[i].what);
	memset(r, 0, sizeof *r);
}

/* Walk a last-1000 ring, newest first, saying which were evictions. */
void
registry_foreach_recent_how(const struct registry *reg, int cancelled,
    void (*cb)(int64_t, const char *, int, void *), void *arg)
{
	const struct recent_ring	*r;
	size_t				 i, k;

	r = cancelled ? &reg->cancelled : &reg->registered;
	for (i = 0; i < r->n; i++) {
		k = (r->next + REGISTRY_RECENT_MAX - 1 - i) %
		    REGISTRY_RECENT_MAX;
		cb(r->v[k].ts, r->v[k].what, r->v[k].evicted, arg);
	}
}
