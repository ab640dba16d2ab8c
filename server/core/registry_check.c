/*
 * registry_check.c: registry_check(), the walk that verifies every
 * counter and index of the registry against what it holds (registry.h
 * lists them), and the hook that runs it at the end of each public
 * operation in the unit tests and fuzz targets (REGISTRY_CHECKED,
 * registry_int.h; bug.h). A failed walk names the first breach; the
 * tests break each counter on purpose to see it named
 * (check_registry's test_registry_check_finds_breaches).
 *
 * The walk is O(leases + delta records): the queue's leases are sorted
 * once so that each lease's references can be counted by a binary
 * search, and each id chain is walked once from its head.
 */
#include <sys/queue.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bug.h"
#include "hash.h"
#include "instance.h"
#include "log.h"
#include "registry.h"
#include "registry_int.h"
#include "xmalloc.h"

static int	rcheck_fail(char **, const char *, ...)
		    __attribute__((format(printf, 2, 3)));
static int	rcheck_ptr_cmp(const void *, const void *);
static size_t	rcheck_occurs(struct lease **, size_t, const struct lease *);
static int	rcheck_lease(const struct registry *, const struct reg_app *,
		    size_t, struct lease **, size_t, char **);
static int	rcheck_queue(const struct registry *, struct lease **,
		    char **);
static int	rcheck_tombs(const struct registry *,
		    const struct tombstone_list *, unsigned, size_t *, size_t *,
		    char **);
static int	rcheck_side_tables(const struct registry *, char **);

/* Record the first breach the walk finds; -1. */
static int
rcheck_fail(char **cause, const char *fmt, ...)
{
	va_list	 ap;
	char	*msg;

	va_start(ap, fmt);
	xvasprintf(&msg, fmt, ap);
	va_end(ap);
	xasprintf(cause, "registry: %s", msg);
	free(msg);
	return (-1);
}

/* Order of lease pointers, for counting the queue's references. */
static int
rcheck_ptr_cmp(const void *a, const void *b)
{
	uintptr_t	x = (uintptr_t)*(struct lease *const *)a;
	uintptr_t	y = (uintptr_t)*(struct lease *const *)b;

	return (x < y ? -1 : x > y);
}

/* How many times l is in the sorted v[n]. */
static size_t
rcheck_occurs(struct lease **v, size_t n, const struct lease *l)
{
	size_t	lo = 0, hi = n, mid, k = 0;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if ((uintptr_t)v[mid] < (uintptr_t)l)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo + k < n && v[lo + k] == l)
		k++;
	return (k);
}

/* One registered lease of app a, at position j. */
static int
rcheck_lease(const struct registry *reg, const struct reg_app *a, size_t j,
    struct lease **qv, size_t qn, char **cause)
{
	const struct lease	*l = a->leases[j];
	const char		*id;
	struct reg_key		 k;

	if (l == NULL || l->inst == NULL)
		return (rcheck_fail(cause, "%s[%zu]: no lease or instance",
		    a->name, j));
	id = lease_id(l);
	if (l->idx != j)
		return (rcheck_fail(cause, "%s/%s: idx %u at position %zu",
		    a->name, id, l->idx, j));
	if (l->app != a)
		return (rcheck_fail(cause, "%s/%s: lease names another app",
		    a->name, id));
	if ((unsigned)l->inst->status >= STATUS_COUNT)
		return (rcheck_fail(cause, "%s/%s: status %d", a->name, id,
		    (int)l->inst->status));
	if (l->duration_secs <= 0)
		return (rcheck_fail(cause, "%s/%s: duration %d", a->name, id,
		    (int)l->duration_secs));
	if (l->app_hash != a->node.hash || l->id_hash != hash_str(id))
		return (rcheck_fail(cause, "%s/%s: stale key hashes", a->name,
		    id));
	if (l->refs != 1 + rcheck_occurs(qv, qn, l))
		return (rcheck_fail(cause, "%s/%s: refs %u, held %zu times",
		    a->name, id, l->refs, 1 + rcheck_occurs(qv, qn, l)));
	if (l->bytes != lease_cost(l))
		return (rcheck_fail(cause, "%s/%s: bytes %zu, costs %zu",
		    a->name, id, l->bytes, lease_cost(l)));
	k.app = a->name;
	k.id = id;
	k.ah = l->app_hash;
	k.ih = l->id_hash;
	if (lease_find(reg, &k) != l)
		return (rcheck_fail(cause, "%s/%s: the lease index does not "
		    "find it", a->name, id));
	/*
	 * The id index: l heads its id's chain (and the index finds it
	 * there) or follows a lease of the same id that links back to it.
	 * registry_check walks each chain once from its head.
	 */
	if (l->id_prev == NULL) {
		if (id_first(reg, id, l->id_hash) != l)
			return (rcheck_fail(cause, "%s/%s: heads no chain the id "
			    "index finds", a->name, id));
	} else if (l->id_prev->id_next != l ||
	    strcmp(lease_id(l->id_prev), id) != 0)
		return (rcheck_fail(cause, "%s/%s: id chain link broken",
		    a->name, id));
	if (l->id_next != NULL && l->id_next->id_prev != l)
		return (rcheck_fail(cause, "%s/%s: id chain back link broken",
		    a->name, id));
	return (0);
}

/* The delta queue: bounds, and what its cancelled leases hold. */
static int
rcheck_queue(const struct registry *reg, struct lease **qv, char **cause)
{
	const struct lease	*l;
	size_t			 i, qbytes = 0;

	if ((reg->q == NULL) != (reg->qcap == 0))
		return (rcheck_fail(cause, "queue array and qcap %zu disagree",
		    reg->qcap));
	if (reg->qn > reg->qcap || (reg->qcap > 0 && reg->qhead >= reg->qcap))
		return (rcheck_fail(cause, "queue qn %zu, qhead %zu, qcap %zu",
		    reg->qn, reg->qhead, reg->qcap));
	if (reg->qcap > reg->qmax)
		return (rcheck_fail(cause, "queue qcap %zu over qmax %zu",
		    reg->qcap, reg->qmax));
	for (i = 0; i < reg->qn; i++) {
		qv[i] = reg->q[(reg->qhead + i) % reg->qcap].lease;
		if (qv[i] == NULL || qv[i]->inst == NULL)
			return (rcheck_fail(cause, "queue entry %zu empty", i));
	}
	qsort(qv, reg->qn, sizeof *qv, rcheck_ptr_cmp);
	for (i = 0; i < reg->qn; i++) {
		l = qv[i];
		if (i > 0 && qv[i - 1] == l)
			continue;
		if (l->app != NULL)
			continue;	/* registered: rcheck_lease's */
		if (l->refs != rcheck_occurs(qv, reg->qn, l))
			return (rcheck_fail(cause, "cancelled %s: refs %u, "
			    "queued %zu times", lease_id(l), l->refs,
			    rcheck_occurs(qv, reg->qn, l)));
		qbytes += l->bytes;
	}
	if (qbytes != reg->qbytes)
		return (rcheck_fail(cause, "qbytes %zu, its cancelled leases "
		    "hold %zu", reg->qbytes, qbytes));
	return (0);
}

/*
 * One tombstone list (unheld: the list of instances never held here):
 * each entry on the list its flag says, hashed under its (app, id); *n
 * and *bytes what the list holds, as registry_tomb.c counts them.
 */
static int
rcheck_tombs(const struct registry *reg, const struct tombstone_list *l,
    unsigned unheld, size_t *n, size_t *bytes, char **cause)
{
	const struct tombstone	*t;
	const char		*app, *id;

	(void)reg;
	*n = *bytes = 0;
	TAILQ_FOREACH(t, l, entry) {
		app = t->key;
		id = t->key + t->idoff;
		if (t->unheld != unheld)
			return (rcheck_fail(cause, "tombstone %s/%s on the "
			    "wrong list", app, id));
		if (t->idoff != strlen(app) + 1 || t->node.hash !=
		    registry_key_hash(hash_str_upper(app), hash_str(id)))
			return (rcheck_fail(cause, "tombstone %s/%s hashed "
			    "under another key", app, id));
		(*n)++;
		*bytes += TOMB_OVERHEAD + strlen(app) + 1 + strlen(id) + 1;
	}
	return (0);
}

/* Overrides and tombstones: table, list and count agree. */
static int
rcheck_side_tables(const struct registry *reg, char **cause)
{
	const struct override	*o;
	size_t			 n = 0, bytes, all, tbytes;

	TAILQ_FOREACH(o, &reg->override_lru, entry) {
		if ((unsigned)o->status >= STATUS_COUNT ||
		    o->node.hash != hash_str(o->id))
			return (rcheck_fail(cause, "override %s: status %d or "
			    "hash", o->id, (int)o->status));
		n++;
	}
	if (n != reg->noverrides || htab_count(&reg->override_tab) != n)
		return (rcheck_fail(cause, "overrides: %zu listed, noverrides "
		    "%zu, table %zu", n, reg->noverrides,
		    htab_count(&reg->override_tab)));
	if (rcheck_tombs(reg, &reg->tomb_fifo, 0, &n, &bytes, cause) != 0)
		return (-1);
	if (n != reg->ntombs)
		return (rcheck_fail(cause, "tombstones: %zu held listed, ntombs "
		    "%zu", n, reg->ntombs));
	all = n;
	tbytes = bytes;
	if (rcheck_tombs(reg, &reg->tomb_unheld, 1, &n, &bytes, cause) != 0)
		return (-1);
	if (n != reg->nunheld || bytes != reg->unheld_bytes)
		return (rcheck_fail(cause, "tombstones: %zu unheld listed (%zu "
		    "bytes), nunheld %zu (%zu bytes)", n, bytes, reg->nunheld,
		    reg->unheld_bytes));
	all += n;
	tbytes += bytes;
	if (htab_count(&reg->tomb_tab) != all || tbytes != reg->tomb_bytes)
		return (rcheck_fail(cause, "tombstones: table %zu, listed %zu; "
		    "tomb_bytes %zu, theirs %zu", htab_count(&reg->tomb_tab),
		    all, reg->tomb_bytes, tbytes));
	return (0);
}

/* Walk the registry; 0 when every counter and index holds (registry.h). */
int
registry_check(const struct registry *reg, char **cause)
{
	const struct reg_app	*a;
	const struct lease	*f;
	struct lease		**qv;
	size_t			 i, j, size = 0, bytes = 0, heads = 0;
	size_t			 chained = 0;
	size_t			 uncounted = 0;
	size_t			 counts[STATUS_COUNT] = { 0 };
	size_t			 acounts[STATUS_COUNT];
	int			 rc = -1, s;

	*cause = NULL;
	qv = xreallocarray(NULL, reg->qn + 1, sizeof *qv);
	if (rcheck_queue(reg, qv, cause) != 0)
		goto out;
	if (reg->napps > reg->capapps ||
	    htab_count(&reg->app_tab) != reg->napps) {
		rcheck_fail(cause, "napps %zu, capapps %zu, table %zu",
		    reg->napps, reg->capapps, htab_count(&reg->app_tab));
		goto out;
	}
	for (i = 0; i < reg->napps; i++) {
		a = reg->apps[i];
		if (a == NULL || a->idx != i || a->n == 0 || a->n > a->cap ||
		    registry_app_find_hashed(reg, a->name,
		    hash_str_upper(a->name)) != a) {
			rcheck_fail(cause, "app at %zu: idx, size or table "
			    "entry wrong", i);
			goto out;
		}
		memset(acounts, 0, sizeof acounts);
		for (j = 0; j < a->n; j++) {
			if (rcheck_lease(reg, a, j, qv, reg->qn, cause) != 0)
				goto out;
			acounts[a->leases[j]->inst->status]++;
			bytes += a->leases[j]->bytes;
			uncounted += a->leases[j]->uncounted;
			if (a->leases[j]->id_prev != NULL)
				continue;
			heads++;
			for (f = a->leases[j]; f != NULL &&
			    chained <= reg->size; f = f->id_next)
				chained++;
		}
		for (s = 0; s < STATUS_COUNT; s++) {
			if (acounts[s] != a->counts[s]) {
				rcheck_fail(cause, "%s: %zu %s counted, %zu "
				    "held", a->name, a->counts[s],
				    instance_status_name((enum instance_status)s),
				    acounts[s]);
				goto out;
			}
			counts[s] += acounts[s];
		}
		size += a->n;
	}
	if (size != reg->size || hidx_count(&reg->lease_idx) != size) {
		rcheck_fail(cause, "size %zu, leases %zu, lease index %zu",
		    reg->size, size, hidx_count(&reg->lease_idx));
		goto out;
	}
	for (s = 0; s < STATUS_COUNT; s++) {
		if (counts[s] != reg->counts[s]) {
			rcheck_fail(cause, "%zu %s counted, %zu held",
			    reg->counts[s], instance_status_name((enum instance_status)s),
			    counts[s]);
			goto out;
		}
	}
	if (chained != size) {
		rcheck_fail(cause, "id chains hold %zu leases, %zu registered",
		    chained, size);
		goto out;
	}
	if (hidx_count(&reg->id_idx) != heads) {
		rcheck_fail(cause, "id index holds %zu, %zu ids registered",
		    hidx_count(&reg->id_idx), heads);
		goto out;
	}
	if (bytes != reg->bytes) {
		rcheck_fail(cause, "bytes %zu, its leases hold %zu",
		    reg->bytes, bytes);
		goto out;
	}
	if ((size_t)reg->ev.uncounted != uncounted) {
		rcheck_fail(cause, "evict counts %d uncounted leases, %zu "
		    "registered", reg->ev.uncounted, uncounted);
		goto out;
	}
	if (rcheck_side_tables(reg, cause) != 0)
		goto out;
	rc = 0;
out:
	free(qv);
	return (rc);
}

/*
 * The outermost public operation ended with self-checks on
 * (registry_int.h's registry_self_check): the walk runs when due; a breach
 * is fatal (the tests' mode).
 */
void
registry_self_check_walk(struct registry **regp)
{
	struct registry	*reg = *regp;
	char		*cause = NULL;

	if (!bug_check_due_slow(&reg->check_left, reg->size + reg->qn))
		return;
	if (registry_check(reg, &cause) != 0)
		fatalx("%s: %s", __func__, cause);
}
