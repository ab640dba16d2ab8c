/*
 * syncpage.c: one page of a registry pull in the fixed pull order
 * (syncpage.h). The applications after the cursor are picked with a
 * bounded heap (the SYNC_PAGE_APPS first in order, O(A log K) whatever
 * the registry holds), then each one's live leases after the cursor the
 * same way, sorted and encoded until the page is full.
 */

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "codec.h"
#include "digest.h"
#include "instance.h"
#include "json.h"
#include "registry.h"
#include "syncpage.h"
#include "xmalloc.h"

/* An item of the order: (key, name) for apps, (0, id) for leases. */
struct pick {
	uint64_t	 k;
	const char	*s;
	size_t		 idx;
};

/* The first `cap` items in order, kept in a max-heap while collecting. */
struct picks {
	struct pick	*v;
	size_t		 n;
	size_t		 cap;
	size_t		 dropped;	/* items past cap */
};

/* Order of the pull: key, then the string. */
static int
pick_cmp(const struct pick *a, const struct pick *b)
{
	if (a->k != b->k)
		return (a->k < b->k ? -1 : 1);
	return (strcmp(a->s, b->s));
}

/* qsort adapter of pick_cmp. */
static int
pick_qcmp(const void *a, const void *b)
{
	return (pick_cmp(a, b));
}

/* Swap two heap slots. */
static void
pick_swap(struct pick *v, size_t i, size_t j)
{
	struct pick	t = v[i];

	v[i] = v[j];
	v[j] = t;
}

/* Restore the max-heap from slot i down. */
static void
picks_down(struct picks *ps, size_t i)
{
	size_t	l, r, m;

	for (;;) {
		l = 2 * i + 1;
		r = l + 1;
		m = i;
		if (l < ps->n && pick_cmp(&ps->v[l], &ps->v[m]) > 0)
			m = l;
		if (r < ps->n && pick_cmp(&ps->v[r], &ps->v[m]) > 0)
			m = r;
		if (m == i)
			return;
		pick_swap(ps->v, i, m);
		i = m;
	}
}

/* Offer an item: kept if among the first cap so far. */
static void
picks_offer(struct picks *ps, const struct pick *it)
{
	size_t	i, up;

	if (ps->cap == 0) {
		ps->dropped++;
		return;
	}
	if (ps->n < ps->cap) {
		i = ps->n++;
		ps->v[i] = *it;
		while (i > 0) {
			up = (i - 1) / 2;
			if (pick_cmp(&ps->v[up], &ps->v[i]) >= 0)
				break;
			pick_swap(ps->v, i, up);
			i = up;
		}
		return;
	}
	ps->dropped++;
	if (pick_cmp(it, &ps->v[0]) < 0) {
		ps->v[0] = *it;
		picks_down(ps, 0);
	}
}

/* Room for cap items. */
static void
picks_init(struct picks *ps, size_t cap)
{
	memset(ps, 0, sizeof *ps);
	ps->cap = cap;
	ps->v = xcalloc(cap > 0 ? cap : 1, sizeof *ps->v);
}

/* Does (app, id) come after the cursor in the pull order? */
int
sync_cursor_before(const struct sync_cursor *cur, const char *app,
    const char *id)
{
	struct pick	a, c;
	int		d;

	if (cur->app == NULL)
		return (1);
	a.k = digest_app_key(app);
	a.s = app;
	c.k = digest_app_key(cur->app);
	c.s = cur->app;
	if ((d = pick_cmp(&c, &a)) != 0)
		return (d < 0);
	return (cur->id != NULL && id != NULL && strcmp(cur->id, id) < 0);
}

/* Append the page after cur (syncpage.h). */
void
sync_page_encode(struct registry *reg, int64_t mono,
    const struct sync_cursor *cur, uint64_t buckets, size_t max_bytes,
    struct buf *out, struct sync_page *pg)
{
	struct picks		 apps, ids;
	struct pick		 it, ck;
	struct reg_app		*a;
	const struct instance	*in;
	const char		*last_app = NULL, *last_id = NULL;
	const char		*seen_app = NULL;
	size_t			 i, j, n, start = out->len, room;
	char			*hash;
	int			 full = 0, open, d;

	memset(pg, 0, sizeof *pg);
	memset(&ck, 0, sizeof ck);
	if (cur->app != NULL) {
		ck.k = digest_app_key(cur->app);
		ck.s = cur->app;
	}
	picks_init(&apps, SYNC_PAGE_APPS);
	n = registry_app_count(reg);
	for (i = 0; i < n; i++) {
		a = registry_app_at(reg, i);
		it.s = reg_app_name(a);
		it.k = digest_app_key(it.s);
		it.idx = i;
		if ((buckets & (1ULL << DIGEST_BUCKET(it.k))) == 0)
			continue;
		if (cur->app != NULL && ((d = pick_cmp(&it, &ck)) < 0 ||
		    (d == 0 && cur->id == NULL)))
			continue;
		picks_offer(&apps, &it);
	}
	qsort(apps.v, apps.n, sizeof *apps.v, pick_qcmp);

	hash = registry_hashcode(reg);
	json_apps_open(out, CODEC_FULL, (int64_t)registry_gen(reg), hash);
	for (i = 0; i < apps.n && !full; i++) {
		a = registry_app_at(reg, apps.v[i].idx);
		seen_app = reg_app_name(a);
		room = SYNC_PAGE_INSTANCES - pg->instances;
		picks_init(&ids, room < reg_app_size(a) ? room :
		    reg_app_size(a));
		for (j = 0; j < reg_app_size(a); j++) {
			if (reg_app_lease_expired(a, j, mono))
				continue;
			in = reg_app_instance_at(a, j);
			it.k = 0;
			it.s = instance_id(in);
			it.idx = j;
			/* The cursor's own app: only the ids after it. */
			if (cur->app != NULL && cur->id != NULL &&
			    pick_cmp(&apps.v[i], &ck) == 0 &&
			    strcmp(it.s, cur->id) <= 0)
				continue;
			picks_offer(&ids, &it);
		}
		qsort(ids.v, ids.n, sizeof *ids.v, pick_qcmp);
		open = 0;
		for (j = 0; j < ids.n; j++) {
			if (pg->instances > 0 && out->len - start >= max_bytes) {
				full = 1;
				break;
			}
			if (!open) {
				if (pg->apps++ > 0)
					buf_addc(out, ',');
				json_app_open(out, seen_app);
				open = 1;
			} else
				buf_addc(out, ',');
			json_encode_instance(out,
			    reg_app_instance_at(a, ids.v[j].idx), CODEC_FULL);
			pg->instances++;
			last_app = seen_app;
			last_id = ids.v[j].s;
		}
		if (open)
			json_app_close(out);
		if (ids.dropped > 0)
			full = 1;
		free(ids.v);
	}
	json_apps_close(out, CODEC_FULL, (int64_t)registry_gen(reg), hash);
	free(hash);
	if (!full && apps.dropped == 0)
		pg->last = 1;
	else if (last_app != NULL) {
		pg->next_app = xstrdup(last_app);
		pg->next_id = xstrdup(last_id);
	} else if (seen_app != NULL)
		/* Only applications without a live lease: skip past them. */
		pg->next_app = xstrdup(seen_app);
	else
		pg->last = 1;
	free(apps.v);
}

/* Free a page's cursor strings. */
void
sync_page_clear(struct sync_page *pg)
{
	free(pg->next_app);
	free(pg->next_id);
	pg->next_app = pg->next_id = NULL;
}
