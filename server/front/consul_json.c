/*
 * consul_json.c: Consul's JSON shapes (hashicorp/consul api/catalog.go
 * CatalogService and Node, api/health.go ServiceEntry and HealthCheck,
 * api/agent.go AgentService) built from the lease table. The mapping
 * (docs/dns-consul.md):
 *
 *  - a service is an application, named in lower case; its instances
 *    are the leases not expired (any status: Consul's catalog lists a
 *    service whatever its health);
 *  - ServiceID is the instance id, ServiceAddress the ipAddr,
 *    ServicePort the port (the secure port when only it is enabled),
 *    ServiceMeta the metadata, ServiceTags the comma-separated value of
 *    the metadata key heureka.consul.tags-key ("tags");
 *  - a node is a host: Node is the hostName, Address the ipAddr, so
 *    instances on one host share a node; Datacenter is
 *    eureka.datacenter;
 *  - each instance has one check, "service:<id>", whose Status follows
 *    the Eureka status: UP passing, STARTING and UNKNOWN warning, DOWN
 *    and OUT_OF_SERVICE critical (Consul's maintenance mode is
 *    critical too);
 *  - the index (X-Consul-Index, CreateIndex, ModifyIndex) is the
 *    registry's generation plus one: the application's for one service
 *    (so a blocking query on it wakes only for its changes), the whole
 *    registry's for the lists. Heartbeats move neither; a lease that
 *    expires shows at its eviction.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "config.h"
#include "consul_int.h"
#include "instance.h"
#include "json.h"
#include "registry.h"
#include "xmalloc.h"

/* PACKAGE_VERSION: autoconf's header, named so it cannot shadow ours. */
#include "heureka-config.h"
#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

/* The index of what q reads: never 0 (Consul clients treat 0 as none). */
uint64_t
consul_index(struct registry *reg, const struct consul_q *q)
{
	struct reg_app	*a;

	if ((q->kind == CONSUL_SERVICE || q->kind == CONSUL_HEALTH) &&
	    (a = registry_app_find(reg, q->name)) != NULL)
		return (reg_app_gen(a) + 1);
	return (registry_gen(reg) + 1);
}

/* Whether the i-th lease of a is listed (not expired while that hides). */
static int
consul_listed(const struct consul_view *v, const struct reg_app *a, size_t i)
{
	return (!(registry_lease_expiration_enabled(v->reg) &&
	    reg_app_lease_expired(a, i, v->mono)));
}

/* Append a JSON string, "" for NULL. */
static void
consul_str(struct buf *b, const char *s)
{
	json_add_string(b, s != NULL ? s : "");
}

/* The service name of an application: its name in lower case. */
static void
consul_name(struct buf *b, const char *app)
{
	char	*s = xstrdup(app);

	for (char *p = s; *p != '\0'; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p += 'a' - 'A';
	json_add_string(b, s);
	free(s);
}

/*
 * Call cb for each tag of in (the tags key's comma-separated value,
 * spaces around a tag trimmed, empty ones skipped); stops when cb
 * returns nonzero. tag is NUL-terminated in a copy.
 */
static void
consul_foreach_tag(const struct instance *in, const char *key,
    int (*cb)(const char *, void *), void *arg)
{
	const char	*v = kvlist_get(&in->metadata, key);
	char		*copy, *p, *tag, *e;

	if (v == NULL || *v == '\0')
		return;
	copy = xstrdup(v);
	for (p = copy; p != NULL; p = e) {
		if ((e = strchr(p, ',')) != NULL)
			*e++ = '\0';
		while (*p == ' ' || *p == '\t')
			p++;
		tag = p;
		p += strlen(p);
		while (p > tag && (p[-1] == ' ' || p[-1] == '\t'))
			*--p = '\0';
		if (*tag != '\0' && cb(tag, arg) != 0)
			break;
	}
	free(copy);
}

/* Tags written as a JSON array's members. */
struct consul_tagw {
	struct buf	*b;
	int		 n;
};

/* Append one tag to the array. */
static int
consul_tag_write_cb(const char *tag, void *arg)
{
	struct consul_tagw	*w = arg;

	if (w->n++ > 0)
		buf_addc(w->b, ',');
	json_add_string(w->b, tag);
	return (0);
}

/* The instance's tags as a JSON array. */
static void
consul_tags(struct buf *b, const struct consul_view *v,
    const struct instance *in)
{
	struct consul_tagw	w = { b, 0 };

	buf_addc(b, '[');
	consul_foreach_tag(in, v->conf->consul_tags_key, consul_tag_write_cb,
	    &w);
	buf_addc(b, ']');
}

/* Looking for one tag. */
struct consul_tagf {
	const char	*want;
	int		 found;
};

/* Whether this tag is the one wanted. */
static int
consul_tag_find_cb(const char *tag, void *arg)
{
	struct consul_tagf	*f = arg;

	if (strcmp(tag, f->want) == 0)
		f->found = 1;
	return (f->found);
}

/* Whether in carries every tag q filters on. */
static int
consul_has_tags(const struct consul_view *v, const struct consul_q *q,
    const struct instance *in)
{
	struct consul_tagf	f;
	int			i;

	for (i = 0; i < q->ntags; i++) {
		f.want = q->tags[i];
		f.found = 0;
		consul_foreach_tag(in, v->conf->consul_tags_key,
		    consul_tag_find_cb, &f);
		if (!f.found)
			return (0);
	}
	return (1);
}

/* A metadata list as a JSON object. */
static void
consul_meta(struct buf *b, const struct kvlist *kv)
{
	size_t	i;

	buf_addc(b, '{');
	for (i = 0; i < kv->n; i++)
		json_add_member(b, kv->v[i].key, kv->v[i].value, i > 0);
	buf_addc(b, '}');
}

/* An instance's node name: its host name, else its address, else id. */
static const char *
consul_node(const struct instance *in)
{
	if (in->host_name != NULL && *in->host_name != '\0')
		return (in->host_name);
	if (in->ip_addr != NULL && *in->ip_addr != '\0')
		return (in->ip_addr);
	return (instance_id(in));
}

/* An instance's address: ipAddr, else the host name. */
static const char *
consul_addr(const struct instance *in)
{
	if (in->ip_addr != NULL && *in->ip_addr != '\0')
		return (in->ip_addr);
	return (in->host_name);
}

/* The port clients should call. */
static int
consul_port(const struct instance *in)
{
	return (!in->port_enabled && in->secure_port_enabled ?
	    in->secure_port : in->port);
}

/* Consul's check status for a Eureka status. */
static const char *
consul_status(enum instance_status st)
{
	switch (st) {
	case STATUS_UP:
		return ("passing");
	case STATUS_STARTING:
	case STATUS_UNKNOWN:
		return ("warning");
	default:
		return ("critical");
	}
}

/* The node's members (without braces): ID, Node, Address, ... */
static void
consul_node_members(struct buf *b, const struct consul_view *v,
    const char *node, const char *addr, uint64_t idx, int catalog)
{
	buf_adds(b, "\"ID\":\"\",\"Node\":");
	consul_str(b, node);
	buf_adds(b, ",\"Address\":");
	consul_str(b, addr);
	buf_adds(b, ",\"Datacenter\":");
	consul_str(b, v->conf->datacenter);
	buf_adds(b, ",\"TaggedAddresses\":{\"lan\":");
	consul_str(b, addr);
	buf_adds(b, "},");
	buf_adds(b, catalog ? "\"NodeMeta\":{}" : "\"Meta\":{}");
	if (!catalog)
		buf_addf(b, ",\"CreateIndex\":%" PRIu64 ",\"ModifyIndex\":%"
		    PRIu64, idx, idx);
}

/* One CatalogService. */
static void
consul_catalog_service(struct buf *b, const struct consul_view *v,
    const char *app, const struct instance *in, uint64_t idx)
{
	buf_addc(b, '{');
	consul_node_members(b, v, consul_node(in), consul_addr(in), idx, 1);
	buf_adds(b, ",\"ServiceKind\":\"\",\"ServiceID\":");
	consul_str(b, instance_id(in));
	buf_adds(b, ",\"ServiceName\":");
	consul_name(b, app);
	buf_adds(b, ",\"ServiceAddress\":");
	consul_str(b, consul_addr(in));
	buf_adds(b, ",\"ServiceTaggedAddresses\":{},\"ServiceTags\":");
	consul_tags(b, v, in);
	buf_adds(b, ",\"ServiceMeta\":");
	consul_meta(b, &in->metadata);
	buf_addf(b, ",\"ServicePort\":%d,\"ServiceWeights\":{\"Passing\":1,"
	    "\"Warning\":1},\"ServiceEnableTagOverride\":false,"
	    "\"ServiceProxy\":null,\"CreateIndex\":%" PRIu64
	    ",\"ModifyIndex\":%" PRIu64 "}", consul_port(in), idx, idx);
}

/* One ServiceEntry: Node, Service, Checks. */
static void
consul_health_entry(struct buf *b, const struct consul_view *v,
    const char *app, const struct instance *in, uint64_t idx)
{
	buf_adds(b, "{\"Node\":{");
	consul_node_members(b, v, consul_node(in), consul_addr(in), idx, 0);
	buf_adds(b, "},\"Service\":{\"ID\":");
	consul_str(b, instance_id(in));
	buf_adds(b, ",\"Service\":");
	consul_name(b, app);
	buf_adds(b, ",\"Tags\":");
	consul_tags(b, v, in);
	buf_adds(b, ",\"Meta\":");
	consul_meta(b, &in->metadata);
	buf_addf(b, ",\"Port\":%d,\"Address\":", consul_port(in));
	consul_str(b, consul_addr(in));
	buf_addf(b, ",\"Weights\":{\"Passing\":1,\"Warning\":1},"
	    "\"EnableTagOverride\":false,\"CreateIndex\":%" PRIu64
	    ",\"ModifyIndex\":%" PRIu64 "},\"Checks\":[{\"Node\":", idx, idx);
	consul_str(b, consul_node(in));
	buf_adds(b, ",\"CheckID\":\"service:");
	/* The id inside a string we opened: escape it alone. */
	{
		struct buf	id;

		buf_init(&id, 0);
		consul_str(&id, instance_id(in));
		buf_add(b, id.data + 1, id.len - 1);
		buf_free(&id);
	}
	buf_addf(b, ",\"Name\":\"Eureka status\",\"Status\":\"%s\","
	    "\"Notes\":\"\",\"Output\":\"Eureka status %s\",\"ServiceID\":",
	    consul_status(in->status), instance_status_name(in->status));
	consul_str(b, instance_id(in));
	buf_adds(b, ",\"ServiceName\":");
	consul_name(b, app);
	buf_adds(b, ",\"ServiceTags\":");
	consul_tags(b, v, in);
	buf_addf(b, ",\"Type\":\"eureka\",\"CreateIndex\":%" PRIu64
	    ",\"ModifyIndex\":%" PRIu64 "}]}", idx, idx);
}

/* catalog/service/<name> and health/service/<name>: arrays. */
static void
consul_service(struct buf *b, const struct consul_view *v,
    const struct consul_q *q)
{
	struct reg_app		*a = registry_app_find(v->reg, q->name);
	const struct instance	*in;
	size_t			 i, n;
	uint64_t		 idx = consul_index(v->reg, q);
	int			 first = 1;

	buf_addc(b, '[');
	for (i = 0, n = a != NULL ? reg_app_size(a) : 0; i < n; i++) {
		in = reg_app_instance_at(a, i);
		if (!consul_listed(v, a, i) || !consul_has_tags(v, q, in) ||
		    (q->passing && in->status != STATUS_UP))
			continue;
		if (!first)
			buf_addc(b, ',');
		first = 0;
		if (q->kind == CONSUL_SERVICE)
			consul_catalog_service(b, v, reg_app_name(a), in, idx);
		else
			consul_health_entry(b, v, reg_app_name(a), in, idx);
	}
	buf_addc(b, ']');
}

/* The distinct tags of one service, collected. */
struct consul_tagset {
	char	*v[CONSUL_MAX_APP_TAGS];
	size_t	 n;
};

/* Keep a tag unless known or the set is full. */
static int
consul_tagset_add_cb(const char *tag, void *arg)
{
	struct consul_tagset	*s = arg;
	size_t			 i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->v[i], tag) == 0)
			return (0);
	if (s->n == CONSUL_MAX_APP_TAGS)
		return (1);
	s->v[s->n++] = xstrdup(tag);
	return (0);
}

/* catalog/services: {"name": [tags], ...} over listed instances. */
static void
consul_services(struct buf *b, const struct consul_view *v)
{
	struct consul_tagset	 ts;
	struct reg_app		*a;
	size_t			 i, j, n, na = registry_app_count(v->reg);
	int			 listed, first = 1;

	buf_addc(b, '{');
	for (i = 0; i < na; i++) {
		a = registry_app_at(v->reg, i);
		ts.n = 0;
		listed = 0;
		for (j = 0, n = reg_app_size(a); j < n; j++) {
			if (!consul_listed(v, a, j))
				continue;
			listed = 1;
			consul_foreach_tag(reg_app_instance_at(a, j),
			    v->conf->consul_tags_key, consul_tagset_add_cb,
			    &ts);
		}
		if (listed) {
			if (!first)
				buf_addc(b, ',');
			first = 0;
			consul_name(b, reg_app_name(a));
			buf_addc(b, ':');
			buf_addc(b, '[');
			for (j = 0; j < ts.n; j++) {
				if (j > 0)
					buf_addc(b, ',');
				json_add_string(b, ts.v[j]);
			}
			buf_addc(b, ']');
		}
		for (j = 0; j < ts.n; j++)
			free(ts.v[j]);
	}
	buf_addc(b, '}');
}

/*
 * catalog/nodes: each host once (the first instance seen names its
 * address). Hosts are few next to instances; a name table keeps it
 * O(instances).
 */
static void
consul_nodes(struct buf *b, const struct consul_view *v)
{
	struct applications	*seen = applications_new();
	struct reg_app		*a;
	const struct instance	*in;
	const char		*node;
	size_t			 i, j, n, na = registry_app_count(v->reg);
	uint64_t		 idx = registry_gen(v->reg) + 1;
	int			 first = 1;

	buf_addc(b, '[');
	for (i = 0; i < na; i++) {
		a = registry_app_at(v->reg, i);
		for (j = 0, n = reg_app_size(a); j < n; j++) {
			if (!consul_listed(v, a, j))
				continue;
			in = reg_app_instance_at(a, j);
			node = consul_node(in);
			if (applications_find(seen, node) != NULL)
				continue;
			applications_add(seen, application_new(node));
			if (!first)
				buf_addc(b, ',');
			first = 0;
			buf_addc(b, '{');
			consul_node_members(b, v, node, consul_addr(in), idx,
			    0);
			buf_addc(b, '}');
		}
	}
	buf_addc(b, ']');
	applications_free(seen);
}

/* agent/self: what clients read of it (Config.Datacenter above all). */
static void
consul_self(struct buf *b, const struct consul_view *v)
{
	buf_adds(b, "{\"Config\":{\"Datacenter\":");
	consul_str(b, v->conf->datacenter);
	buf_adds(b, ",\"PrimaryDatacenter\":");
	consul_str(b, v->conf->datacenter);
	buf_adds(b, ",\"NodeName\":");
	consul_str(b, v->hostname);
	buf_adds(b, ",\"NodeID\":\"\",\"Server\":true,\"Revision\":\"\","
	    "\"Version\":\"heureka-" PACKAGE_VERSION "\"},\"Member\":{"
	    "\"Name\":");
	consul_str(b, v->hostname);
	buf_addf(b, ",\"Addr\":\"\",\"Port\":%d,\"Tags\":{\"role\":\"consul\","
	    "\"dc\":", v->port);
	consul_str(b, v->conf->datacenter);
	buf_adds(b, "},\"Status\":1},\"Meta\":{},\"Stats\":{}}");
}

/* Encode what q reads. */
void
consul_encode(struct buf *b, const struct consul_view *v,
    const struct consul_q *q)
{
	char	*hp;

	switch (q->kind) {
	case CONSUL_SERVICES:
		consul_services(b, v);
		break;
	case CONSUL_SERVICE:
	case CONSUL_HEALTH:
		consul_service(b, v, q);
		break;
	case CONSUL_NODES:
		consul_nodes(b, v);
		break;
	case CONSUL_LEADER:
	case CONSUL_PEERS:
		/* This node answers for the catalog: it is the "leader". */
		xasprintf(&hp, "%s:%d", v->hostname, v->port);
		if (q->kind == CONSUL_PEERS)
			buf_addc(b, '[');
		json_add_string(b, hp);
		if (q->kind == CONSUL_PEERS)
			buf_addc(b, ']');
		free(hp);
		break;
	case CONSUL_SELF:
		consul_self(b, v);
		break;
	}
}
