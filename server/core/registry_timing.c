/*
 * registry_timing.c: each lease's heartbeat timing for the doctor
 * (registry.h, server/core/doctor.h): the gap between its last two
 * heartbeats that registry_renew keeps (one integer store on the
 * heartbeat path), walked on the doctor's timer, a slice at a time
 * (registry_timing_step: at 1M instances the whole walk held the loop
 * 55 ms of CPU, 110 ms of wall time on a loaded machine). Part of the
 * registry module (registry_int.h).
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


/* A slice of the walk of registry_foreach_timing (registry.h). */
int
registry_timing_step(const struct registry *reg, int64_t mono,
    struct reg_timing_cursor *cur, size_t max, registry_timing_cb cb,
    void *arg)
{
	struct timing_walk	 w = { cb, arg, 0 };
	struct reg_app		*a;
	struct lease		*l;
	size_t			 done = 0;

	for (; cur->expired < 2; cur->expired++, cur->app = cur->lease = 0) {
		w.expired = cur->expired;
		for (; cur->app < reg->napps; cur->app++, cur->lease = 0) {
			a = reg->apps[cur->app];
			for (; cur->lease < a->n; cur->lease++) {
				if (done++ == max)
					return (0);
				l = a->leases[cur->lease];
				if (lease_is_expired(l, 0, mono) ==
				    cur->expired)
					timing_walk_cb(l, &w);
			}
		}
	}
	return (1);
}
