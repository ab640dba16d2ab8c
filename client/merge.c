/*
 * merge.c: the client's copy of the registry meets what the server sent
 * (spec §7.5; internal.h): a delta is applied instance by instance (ADDED
 * and MODIFIED replace by id, DELETED removes, an application left empty
 * goes), and two full copies are compared; either way only a real
 * difference is reported to the change callback, since deltas repeat
 * changes across polls.
 */
#include <string.h>

#include "instance.h"

#include "internal.h"

/* Whether two copies of one instance differ in a way worth reporting. */
static int
inst_changed(const struct instance *a, const struct instance *b)
{
	return (a->status != b->status ||
	    a->overridden_status != b->overridden_status ||
	    a->last_updated_ts != b->last_updated_ts ||
	    a->last_dirty_ts != b->last_dirty_ts ||
	    a->port != b->port ||
	    (a->ip_addr == NULL) != (b->ip_addr == NULL) ||
	    (a->ip_addr != NULL && strcmp(a->ip_addr, b->ip_addr) != 0));
}

/* Apply one delta instance to the local copy. */
void
hk_merge_one(struct applications *local, const char *name,
    const struct instance *in, hk_change_cb cb, void *arg)
{
	struct application	*a;
	const struct instance	*old;
	const char		*id = instance_id(in);

	switch (in->action_type) {
	case ACTION_ADDED:
	case ACTION_MODIFIED:
		a = applications_get(local, name);
		old = application_find(a, id);
		if (cb != NULL && old == NULL)
			cb(ACTION_ADDED, in, arg);
		else if (cb != NULL && inst_changed(old, in))
			cb(ACTION_MODIFIED, in, arg);
		application_add(a, instance_dup(in));
		break;
	case ACTION_DELETED:
		a = applications_find(local, name);
		if (a == NULL || application_find(a, id) == NULL)
			break;
		if (cb != NULL)
			cb(ACTION_DELETED, in, arg);
		application_remove(a, id);
		if (a->n == 0)
			applications_remove(local, a->name);
		break;
	case ACTION_NONE:
		break;
	}
}

/*
 * Apply a delta (§7.5): ADDED and MODIFIED replace by id, creating the
 * application; DELETED removes, and an application left empty goes too.
 * Deltas repeat changes across polls, so only real differences are
 * reported to cb.
 */
void
hk_merge_delta(struct applications *local, const struct applications *delta,
    hk_change_cb cb, void *arg)
{
	const struct application	*da;
	const struct instance		*in;
	const char			*name;
	size_t				 i, j;

	for (i = 0; i < delta->n; i++) {
		da = delta->apps[i];
		for (j = 0; j < da->n; j++) {
			in = da->instances[j];
			name = in->app != NULL ? in->app : da->name;
			if (name != NULL)
				hk_merge_one(local, name, in, cb, arg);
		}
	}
}

/* Report the differences between two registry copies (full fetches). */
void
hk_diff(const struct applications *old, const struct applications *new,
    hk_change_cb cb, void *arg)
{
	const struct application	*a, *oa;
	const struct instance		*in, *o;
	size_t				 i, j;

	for (i = 0; i < new->n; i++) {
		a = new->apps[i];
		oa = old != NULL ? applications_find(old, a->name) : NULL;
		for (j = 0; j < a->n; j++) {
			in = a->instances[j];
			o = oa != NULL ? application_find(oa, instance_id(in)) :
			    NULL;
			if (o == NULL)
				cb(ACTION_ADDED, in, arg);
			else if (inst_changed(o, in))
				cb(ACTION_MODIFIED, in, arg);
		}
	}
	if (old == NULL)
		return;
	for (i = 0; i < old->n; i++) {
		oa = old->apps[i];
		a = applications_find(new, oa->name);
		for (j = 0; j < oa->n; j++) {
			o = oa->instances[j];
			if (a == NULL || application_find(a, instance_id(o)) ==
			    NULL)
				cb(ACTION_DELETED, o, arg);
		}
	}
}
