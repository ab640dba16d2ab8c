/*
 * fuzz_core_ops.c: libFuzzer target for the core's structures rather
 * than a decoder: the input is a program of operations on a small
 * registry (register, renew, cancel, status changes and overrides, a
 * metadata update, eviction slices, delta purges, time steps), the
 * response cache over it (builds of each body kind, slices, reaps) and
 * a peer queue (push, take, requeue), and after every operation
 * registry_check, cache_check and peerq_check must pass (bug.h: the
 * structures also walk themselves, and a broken HK_BUG aborts).
 *
 * Each operation is two bytes: an opcode and an argument that picks the
 * app (of 3), the instance (of 8), a status or an amount. Times only go
 * forward, so the program explores leases expiring and records aging.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bug.h"
#include "cache.h"
#include "clock.h"
#include "instance.h"
#include "log.h"
#include "peerq.h"
#include "registry.h"
#include "xmalloc.h"

#define T0		1700000000000LL
#define FUZZ_MAX_OPS	512

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* The structures under test and the program's clock. */
struct core {
	struct registry		*reg;
	struct cache		*cache;
	struct peer_queue	*q;
	struct peer_task	*taken[16];
	size_t			 ntaken;
	struct hk_time		 now;
	int64_t			 dirty;
	int			 ro;		/* the read-only layer is on */
};

/* Every walker, after each operation: a breach is a crash. */
static void
core_check(const struct core *c)
{
	char	*cause = NULL;

	if (registry_check(c->reg, &cause) != 0 ||
	    cache_check(c->cache, &cause) != 0 ||
	    peerq_check(c->q, &cause) != 0)
		fatalx("walk after an operation: %s", cause);
}

/* A registrable instance of app a, id i, status st. */
static struct instance *
core_inst(struct core *c, unsigned a, unsigned i, enum instance_status st)
{
	struct instance	*in = instance_new();
	char		 buf[32];

	snprintf(buf, sizeof buf, "APP%u", a);
	in->app = xstrdup(buf);
	snprintf(buf, sizeof buf, "i%u", i);
	in->instance_id = xstrdup(buf);
	in->host_name = xstrdup("h.example");
	in->ip_addr = xstrdup("10.0.0.1");
	in->vip_address = xstrdup(a == 0 ? "v0" : "v0,v1");
	in->status = st;
	in->last_dirty_ts = ++c->dirty;
	in->has_lease = 1;
	if (i % 4 == 3)
		kvlist_set(&in->metadata, REGISTRY_UNCOUNTED_KEY, "true");
	return (in);
}

/* One operation: opcode op, argument x. */
static void
core_op(struct core *c, uint8_t op, uint8_t x)
{
	struct cache_key	 k = { (enum cache_format)(x & 1), (x >> 1) & 1,
				    (x >> 2) & 1 };
	unsigned		 a = x % 3, i = (x >> 2) % 8;
	enum instance_status	 st = (enum instance_status)(x % STATUS_COUNT);
	char			 app[16], id[16];
	struct kvlist		 md = { NULL, 0, 0 };
	int			 evicted;

	snprintf(app, sizeof app, "APP%u", a);
	snprintf(id, sizeof id, "i%u", i);
	switch (op % 16) {
	case 0:
	case 1:
		registry_register(c->reg, core_inst(c, a, i, st), op & 1,
		    c->now);
		break;
	case 2:
		registry_renew(c->reg, app, id, x & 1 ? c->dirty : -1,
		    STATUS_UNKNOWN, op & 16 ? 1 : 0, c->now, NULL);
		break;
	case 3:
		registry_cancel(c->reg, app, id, x & 1, c->now, -1);
		break;
	case 4:
		registry_status_update(c->reg, app, id, st, ++c->dirty, 0,
		    c->now, -1);
		break;
	case 5:
		registry_delete_override(c->reg, app, id, st, ++c->dirty, 0,
		    c->now, -1);
		break;
	case 6:
		registry_set_override(c->reg, id, st, c->now.mono_ms);
		break;
	case 7:
		kvlist_set(&md, "zone", x & 1 ? "a" : "b");
		registry_update_metadata(c->reg, app, id, &md, c->now);
		kvlist_clear(&md);
		break;
	case 8:
		registry_evict_step(c->reg, c->now, 1 + x % 4, &evicted);
		break;
	case 9:
		registry_purge_deltas_step(c->reg, c->now.mono_ms, 1 + x % 8);
		break;
	case 10:
		/* Time goes forward: up to ~4 minutes a step. */
		c->now.wall_ms += (int64_t)x * 1000;
		c->now.mono_ms += (int64_t)x * 1000;
		registry_tick_minute(c->reg, c->now.mono_ms);
		break;
	case 11:
		cache_body_unref(cache_res_body(c->cache,
		    (enum cache_res)(x % 5), &k, x & 8 ? "v0" : app,
		    c->now.mono_ms));
		break;
	case 12:
		cache_step(c->cache, (enum cache_res)(x % 5), &k,
		    x & 8 ? "v1" : app, 1 + (size_t)x * 64, c->now.mono_ms);
		break;
	case 13:
		cache_reap(c->cache, (size_t)x * 1024);
		if (c->ro)
			cache_refresh_step(c->cache, (size_t)x * 256,
			    c->now.mono_ms);
		break;
	case 14:
		peer_queue_push(c->q, peer_task_new((enum repl_action)(x % 5),
		    app, id, c->now.mono_ms + (x & 7) * 1000), c->now.mono_ms);
		break;
	case 15:
		if (c->ntaken == 0 || x & 1)
			c->ntaken += peer_queue_take(c->q, c->taken + c->ntaken,
			    sizeof c->taken / sizeof c->taken[0] - c->ntaken,
			    c->now.mono_ms);
		else {
			peer_queue_requeue(c->q, c->taken, c->ntaken,
			    c->now.mono_ms);
			c->ntaken = 0;
		}
		break;
	}
	core_check(c);
}

/* One input: a program of two-byte operations. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct registry_conf	 rc;
	struct core		 c;
	size_t			 i;

	/* A broken invariant aborts; walkers run after each operation. */
	bug_set_fatal(1);
	bug_set_self_check(1);
	memset(&c, 0, sizeof c);
	registry_conf_defaults(&rc);
	rc.max_instances = 16;
	rc.retention_ms = 60000;
	rc.tombstone_ms = 60000;
	rc.override_ttl_ms = 120000;
	c.now.wall_ms = T0;
	c.now.mono_ms = 1000;
	c.dirty = T0;
	c.reg = registry_new(&rc, c.now.mono_ms);
	c.ro = len > 0 && (data[0] & 1);
	c.cache = cache_new(c.reg, c.ro ? 30000 : 0, 180000);
	c.q = peer_queue_new(8);
	for (i = 0; i + 1 < len && i / 2 < FUZZ_MAX_OPS; i += 2)
		core_op(&c, data[i], data[i + 1]);
	for (i = 0; i < c.ntaken; i++)
		peer_task_free(c.taken[i]);
	peer_queue_free(c.q);
	cache_free(c.cache);
	registry_free(c.reg);
	return (0);
}
