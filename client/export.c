/*
 * export.c: the public, self-contained copy of an instance that lookups
 * hand to the application (struct heureka_instance in heureka.h), made
 * from the model instance, and the frees heureka.h promises for it. The
 * copy shares nothing with the client's registry, so it stays valid after
 * the next fetch replaces that.
 */
#include <stdlib.h>

#include "instance.h"
#include "xmalloc.h"

#include "heureka.h"
#include "internal.h"

/* Copy a model instance into the public, self-contained shape. */
struct heureka_instance *
hk_instance_export(const struct instance *in)
{
	struct heureka_instance	*hi = xcalloc(1, sizeof *hi);
	size_t			 i;

#define DUP(s)	((s) != NULL ? xstrdup(s) : NULL)
	hi->app = DUP(in->app);
	hi->instance_id = xstrdup(instance_id(in));
	hi->host_name = DUP(in->host_name);
	hi->ip_addr = DUP(in->ip_addr);
	hi->status = xstrdup(instance_status_name(in->status));
	hi->vip_address = DUP(in->vip_address);
	hi->secure_vip_address = DUP(in->secure_vip_address);
	hi->home_page_url = DUP(in->home_page_url);
	hi->status_page_url = DUP(in->status_page_url);
	hi->health_check_url = DUP(in->health_check_url);
#undef DUP
	hi->port = in->port;
	hi->port_enabled = in->port_enabled;
	hi->secure_port = in->secure_port;
	hi->secure_port_enabled = in->secure_port_enabled;
	hi->last_updated_ts = in->last_updated_ts;
	hi->last_dirty_ts = in->last_dirty_ts;
	hi->nmetadata = in->metadata.n;
	if (in->metadata.n > 0)
		hi->metadata = xcalloc(in->metadata.n, sizeof *hi->metadata);
	for (i = 0; i < in->metadata.n; i++) {
		hi->metadata[i].key = xstrdup(in->metadata.v[i].key);
		hi->metadata[i].value = xstrdup(in->metadata.v[i].value);
	}
	return (hi);
}

/* Free the contents of one exported instance. */
static void
instance_clear(struct heureka_instance *hi)
{
	size_t	i;

	free(hi->app);
	free(hi->instance_id);
	free(hi->host_name);
	free(hi->ip_addr);
	free(hi->status);
	free(hi->vip_address);
	free(hi->secure_vip_address);
	free(hi->home_page_url);
	free(hi->status_page_url);
	free(hi->health_check_url);
	for (i = 0; i < hi->nmetadata; i++) {
		free(hi->metadata[i].key);
		free(hi->metadata[i].value);
	}
	free(hi->metadata);
}

/* Free one instance returned by a lookup. NULL is fine. */
void
heureka_instance_free(struct heureka_instance *hi)
{
	if (hi == NULL)
		return;
	instance_clear(hi);
	free(hi);
}

/* Free an array returned by a list lookup. NULL is fine. */
void
heureka_instances_free(struct heureka_instance *list, size_t n)
{
	size_t	i;

	if (list == NULL)
		return;
	for (i = 0; i < n; i++)
		instance_clear(&list[i]);
	free(list);
}

/* Append a copy of in to a growing list. */
void
hk_instance_list_add(struct heureka_instance **list, size_t *n,
    const struct instance *in)
{
	struct heureka_instance	*hi = hk_instance_export(in);

	*list = xreallocarray(*list, *n + 1, sizeof **list);
	(*list)[(*n)++] = *hi;
	free(hi);
}
