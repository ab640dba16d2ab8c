/*
 * registry_timing.c: each lease's heartbeat timing for the doctor
 * (registry.h, server/core/doctor.h): the gap between its last two
 * heartbeats that registry_renew keeps (one integer store on the
 * heartbeat path), walked on the doctor's timer. Part of the registry
 * module (registry_int.h).
 */
#include <stdint.h>

#include "registry_int.h"

/* lease_walk state of registry_foreach_timing. */
struct timing_walk {
	registry_timing_cb	 cb;
	void			*arg;
	int			 expired;
};

/* lease_walk callback of registry_foreach_timing. */
static void
timing_walk_cb(struct lease *l, void *arg)
{
	struct timing_walk	*w = arg;
	struct registry_timing	 t;

	t.app = l->app->name;
	t.inst = l->inst;
	t.gap_ms = l->renew_gap_ms;
	t.last_renew_ts = l->renewed ? l->last_renew_ts : 0;
	t.last_renew_mono = l->last_renew_mono;
	t.expired = w->expired;
	t.uncounted = l->uncounted;
	w->cb(&t, w->arg);
}

/* Every registered lease with its heartbeat timing (registry.h). */
size_t
registry_foreach_timing(const struct registry *reg, int64_t mono,
    registry_timing_cb cb, void *arg)
{
	struct timing_walk	w = { cb, arg, 0 };
	size_t			n;

	n = lease_walk(reg, mono, 0, 0, timing_walk_cb, &w);
	w.expired = 1;
	return (n + lease_walk(reg, mono, 0, 1, timing_walk_cb, &w));
}

