/*
 * selfinfo.c: the InstanceInfo a client registers, built from the
 * eureka.instance.* settings with Spring Cloud's defaults where a setting is
 * absent (spec §8.3; internal.h): the first non-loopback IPv4 address, the
 * host name, the instance id host:app:port, the VIP addresses and the
 * /actuator URLs. Time (the dirty and updated stamps) is passed in.
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "instance.h"
#include "xmalloc.h"

#include "internal.h"

/* First non-loopback IPv4 address (Spring's default), or 127.0.0.1. */
static char *
default_ip(void)
{
	struct ifaddrs		*ifa, *i;
	char			 addr[INET_ADDRSTRLEN];
	char			*s = NULL;
	struct sockaddr_in	*sin;

	if (getifaddrs(&ifa) != 0)
		return (xstrdup("127.0.0.1"));
	for (i = ifa; i != NULL && s == NULL; i = i->ifa_next) {
		if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET ||
		    (i->ifa_flags & IFF_LOOPBACK) || !(i->ifa_flags & IFF_UP))
			continue;
		sin = (struct sockaddr_in *)i->ifa_addr;
		if (inet_ntop(AF_INET, &sin->sin_addr, addr, sizeof addr) !=
		    NULL)
			s = xstrdup(addr);
	}
	freeifaddrs(ifa);
	return (s != NULL ? s : xstrdup("127.0.0.1"));
}

/* Build our InstanceInfo from eureka.instance.* settings. */
struct instance *
hk_instance_from_config(const struct config *cf, int64_t now, char **cause)
{
	struct instance	*in;
	char		 host[256];
	const char	*appname = cf->instance_appname;
	enum instance_status st = STATUS_UP;

	if (appname == NULL || *appname == '\0') {
		*cause = xstrdup("no application name (eureka.instance.appname"
		    " or spring.application.name)");
		return (NULL);
	}
	if (!instance_name_ok(appname, INSTANCE_MAX_NAME)) {
		xasprintf(cause, "bad application name: %s", appname);
		return (NULL);
	}
	if (cf->instance_non_secure_port < 0 ||
	    cf->instance_non_secure_port > 65535) {
		xasprintf(cause, "bad port: %d", cf->instance_non_secure_port);
		return (NULL);
	}
	if (cf->instance_initial_status != NULL &&
	    instance_status_parse(cf->instance_initial_status, &st) != 0) {
		xasprintf(cause, "bad initial status: %s",
		    cf->instance_initial_status);
		return (NULL);
	}
	in = instance_new();
	in->app = xstrdup(appname);
	str_upper(in->app);
	in->ip_addr = cf->instance_ip_address != NULL ?
	    xstrdup(cf->instance_ip_address) : default_ip();
	if (cf->instance_hostname != NULL)
		in->host_name = xstrdup(cf->instance_hostname);
	else if (cf->instance_prefer_ip_address)
		in->host_name = xstrdup(in->ip_addr);
	else {
		if (gethostname(host, sizeof host) != 0)
			snprintf(host, sizeof host, "localhost");
		host[sizeof host - 1] = '\0';
		in->host_name = xstrdup(host);
	}
	in->port = cf->instance_non_secure_port;
	in->port_enabled = cf->instance_non_secure_port_enabled != 0;
	in->secure_port = cf->instance_secure_port;
	in->secure_port_enabled = cf->instance_secure_port_enabled != 0;
	if (cf->instance_id != NULL && *cf->instance_id != '\0')
		in->instance_id = xstrdup(cf->instance_id);
	else
		xasprintf(&in->instance_id, "%s:%s:%d", in->host_name,
		    appname, in->port);
	in->vip_address = xstrdup(cf->instance_virtual_host_name != NULL ?
	    cf->instance_virtual_host_name : appname);
	in->secure_vip_address = xstrdup(
	    cf->instance_secure_virtual_host_name != NULL ?
	    cf->instance_secure_virtual_host_name : appname);
	if (cf->instance_app_group_name != NULL)
		in->app_group_name = xstrdup(cf->instance_app_group_name);
	if (cf->instance_home_page_url != NULL)
		in->home_page_url = xstrdup(cf->instance_home_page_url);
	else
		xasprintf(&in->home_page_url, "http://%s:%d%s", in->host_name,
		    in->port, cf->instance_home_page_url_path != NULL ?
		    cf->instance_home_page_url_path : "/");
	if (cf->instance_status_page_url != NULL)
		in->status_page_url = xstrdup(cf->instance_status_page_url);
	else
		xasprintf(&in->status_page_url, "http://%s:%d%s",
		    in->host_name, in->port,
		    cf->instance_status_page_url_path != NULL ?
		    cf->instance_status_page_url_path : "/actuator/info");
	if (cf->instance_health_check_url != NULL)
		in->health_check_url = xstrdup(cf->instance_health_check_url);
	else if (in->port_enabled)
		xasprintf(&in->health_check_url, "http://%s:%d%s",
		    in->host_name, in->port,
		    cf->instance_health_check_url_path != NULL ?
		    cf->instance_health_check_url_path : "/actuator/health");
	if (cf->instance_secure_health_check_url != NULL)
		in->secure_health_check_url =
		    xstrdup(cf->instance_secure_health_check_url);
	else if (in->secure_port_enabled)
		xasprintf(&in->secure_health_check_url, "https://%s:%d%s",
		    in->host_name, in->secure_port,
		    cf->instance_health_check_url_path != NULL ?
		    cf->instance_health_check_url_path : "/actuator/health");
	in->status = st;
	in->overridden_status = STATUS_UNKNOWN;
	in->has_dc = 1;
	in->dc_name = DC_MYOWN;
	in->has_lease = 1;
	in->lease.renewal_interval_secs =
	    cf->instance_lease_renewal_interval_in_seconds;
	in->lease.duration_secs =
	    cf->instance_lease_expiration_duration_in_seconds;
	kvlist_copy(&in->metadata, &cf->instance_metadata);
	in->last_updated_ts = now;
	in->last_dirty_ts = now;
	in->action_type = ACTION_ADDED;
	return (in);
}
