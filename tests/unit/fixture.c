/*
 * fixture.c: the registrable instance the check unit tests share
 * (fixture.h). Allocation failures abort (xstrdup), never a NULL field.
 */
#include <stdint.h>

#include "fixture.h"
#include "instance.h"
#include "xmalloc.h"

/* A registrable instance of app/id, status st, last dirty at dirty. */
struct instance *
fixture_instance(const char *app, const char *id, enum instance_status st,
    int64_t dirty)
{
	struct instance	*in = instance_new();

	if (app != NULL)
		in->app = xstrdup(app);
	in->instance_id = xstrdup(id);
	in->host_name = xstrdup("host.example");
	in->ip_addr = xstrdup("10.0.0.1");
	in->status = st;
	in->last_dirty_ts = dirty;
	in->has_lease = 1;
	return (in);
}
