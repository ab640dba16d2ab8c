/*
 * instdump.c: an instance's every field as "name=value" lines (NULL as
 * "name=(null)", maps in their order), and a JSON fixture decoded by the
 * function its name calls for with each instance it holds dumped in
 * document order. Built into check_json; the golden files under
 * tests/data/decoded/ are this output of the decoder before instances
 * were packed, so the test proves the two read every fixture alike.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "instance.h"
#include "instdump.h"
#include "json.h"
#include "repl.h"
#include "xml.h"

/* One string field. */
static void
dump_str(struct buf *b, const char *name, const char *s)
{
	buf_addf(b, "%s=%s\n", name, s != NULL ? s : "(null)");
}

/* One map, entry by entry. */
static void
dump_map(struct buf *b, const char *name, const struct kvlist *kv)
{
	size_t	i;

	buf_addf(b, "%s.n=%zu\n", name, kv->n);
	for (i = 0; i < kv->n; i++)
		buf_addf(b, "%s[%s]=%s\n", name, kv->v[i].key,
		    kv->v[i].value);
}

/* Every field of in. */
void
instance_dump(struct buf *b, const struct instance *in)
{
	const struct lease_info	*l = &in->lease;

	dump_str(b, "instanceId", in->instance_id);
	dump_str(b, "id", instance_id(in));
	dump_str(b, "hostName", in->host_name);
	dump_str(b, "app", in->app);
	dump_str(b, "ipAddr", in->ip_addr);
	dump_str(b, "sid", in->sid);
	buf_addf(b, "status=%d overridden=%d port=%d/%d secure=%d/%d\n",
	    in->status, in->overridden_status, in->port, in->port_enabled,
	    in->secure_port, in->secure_port_enabled);
	buf_addf(b, "dc=%d/%d/%d lease=%d coord=%d country=%d\n", in->has_dc,
	    in->has_dc_name, in->dc_name, in->has_lease, in->is_coordinating,
	    in->country_id);
	dump_map(b, "dcmeta", &in->dc_metadata);
	buf_addf(b, "lease=%d/%d reg=%lld renew=%lld evict=%lld up=%lld\n",
	    l->renewal_interval_secs, l->duration_secs,
	    (long long)l->registration_ts, (long long)l->last_renewal_ts,
	    (long long)l->eviction_ts, (long long)l->service_up_ts);
	dump_map(b, "meta", &in->metadata);
	dump_str(b, "appGroupName", in->app_group_name);
	dump_str(b, "homePageUrl", in->home_page_url);
	dump_str(b, "statusPageUrl", in->status_page_url);
	dump_str(b, "healthCheckUrl", in->health_check_url);
	dump_str(b, "secureHealthCheckUrl", in->secure_health_check_url);
	dump_str(b, "vipAddress", in->vip_address);
	dump_str(b, "secureVipAddress", in->secure_vip_address);
	buf_addf(b, "updated=%lld dirty=%lld action=%d\n",
	    (long long)in->last_updated_ts, (long long)in->last_dirty_ts,
	    in->action_type);
	dump_str(b, "asgName", in->asg_name);
}

/* Every instance of an application, in order. */
static void
dump_app(struct buf *b, const struct application *a)
{
	size_t	i;

	dump_str(b, "application", a->name);
	for (i = 0; i < a->n; i++)
		instance_dump(b, a->instances[i]);
}

/* Decode by the fixture's name and dump what it holds. */
int
fixture_dump(struct buf *b, const char *name, const char *data, size_t len,
    int64_t now)
{
	struct applications	*as;
	struct application	*a;
	struct instance		*in;
	struct repl_list	 rl;
	struct repl_response	 rr;
	char			*cause = NULL;
	size_t			 i, n = strlen(name);
	int			 rc = 0, xml;

	xml = n > 4 && strcmp(name + n - 4, ".xml") == 0;

	if (strstr(name, "replication-batch-request") != NULL) {
		memset(&rl, 0, sizeof rl);
		if ((rc = json_decode_repl_list(data, len, &rl, now,
		    &cause)) == 0)
			for (i = 0; i < rl.n; i++) {
				dump_str(b, "item", rl.items[i].id);
				if (rl.items[i].info != NULL)
					instance_dump(b, rl.items[i].info);
			}
		repl_list_clear(&rl);
	} else if (strstr(name, "replication-batch-response") != NULL) {
		memset(&rr, 0, sizeof rr);
		if ((rc = json_decode_repl_response(data, len, &rr, now,
		    &cause)) == 0)
			for (i = 0; i < rr.n; i++) {
				buf_addf(b, "code=%d\n",
				    rr.items[i].status_code);
				if (rr.items[i].entity != NULL)
					instance_dump(b, rr.items[i].entity);
			}
		repl_response_clear(&rr);
	} else if (strncmp(name, "application.", 12) == 0) {
		if ((a = xml ? xml_decode_application(data, len, now,
		    &cause) : json_decode_application(data, len, now,
		    &cause)) == NULL)
			rc = -1;
		else
			dump_app(b, a);
		application_free(a);
	} else if (strncmp(name, "applications", 12) == 0 ||
	    strncmp(name, "delta", 5) == 0) {
		if ((as = xml ? xml_decode_applications(data, len, now,
		    &cause) : json_decode_applications(data, len, now,
		    &cause)) == NULL)
			rc = -1;
		else
			for (i = 0; i < as->n; i++)
				dump_app(b, as->apps[i]);
		applications_free(as);
	} else {
		if ((in = xml ? xml_decode_instance(data, len, now,
		    &cause) : json_decode_instance(data, len, now,
		    &cause)) == NULL)
			rc = -1;
		else
			instance_dump(b, in);
		instance_free(in);
	}
	free(cause);
	return (rc);
}
