/*
 * check_config.c: unit tests for the configuration table: every spelling
 * of a key reaches the same field, relaxed binding from the environment,
 * .yml and .properties parsing, precedence, error texts, defaults, the
 * dump's credential hiding and service URL splitting.
 */
#include <sys/stat.h>

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "defaults.h"
#include "instance.h"
#include "registry.h"
#include "testutil.h"

static struct config	 cf;
static char		 tmpdir[] = "/tmp/check_config.XXXXXX";
static char		*cause;

/* Fresh defaults and a scratch directory for every test. */
static void
setup(void)
{
	config_defaults(&cf);
	cause = NULL;
	ck_assert_ptr_nonnull(mkdtemp(strcpy(tmpdir,
	    "/tmp/check_config.XXXXXX")));
}

/* Free the config and remove the scratch files. */
static void
teardown(void)
{
	char	cmd[256];

	config_free(&cf);
	free(cause);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	ck_assert_int_eq(system(cmd), 0);
}

/* Write text into tmpdir/name; returns the path (static buffer). */
static const char *
write_file(const char *name, const char *text)
{
	static char	 path[512];
	FILE		*f;

	snprintf(path, sizeof path, "%s/%s", tmpdir, name);
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
	return (path);
}

/* Set a key that must be accepted. */
static void
set_ok(const char *k, const char *v)
{
	char	*c = NULL;

	if (config_set(&cf, k, v, &c) != 0)
		ck_abort_msg("config_set(%s, %s): %s", k, v, c);
}

/* Set a key that must be refused; returns the (owned by test) cause. */
static const char *
set_fail(const char *k, const char *v)
{
	free(cause);
	cause = NULL;
	ck_assert_int_eq(config_set(&cf, k, v, &cause), -1);
	ck_assert_ptr_nonnull(cause);
	return (cause);
}

START_TEST(test_table_consistent)
{
	ck_assert_msg(config_table_check(&cause) == 0, "%s", cause);
}
END_TEST

START_TEST(test_spellings_same_field)
{
	static const char *evict[] = {
		"eureka.server.eviction-interval-timer-in-ms",
		"eureka.server.evictionIntervalTimerInMs",
		"eureka.evictionIntervalTimerInMs",
		"eureka.server.eviction_interval_timer_in_ms",
		"EUREKA_SERVER_EVICTION_INTERVAL_TIMER_IN_MS",
		"eureka.server.EvictionIntervalTimerInMS",
	};
	static const char *urls[] = {
		"eureka.client.service-url.defaultZone",
		"eureka.client.serviceUrl.defaultZone",
		"eureka.serviceUrl.default",
		"eureka.serviceUrl.defaultZone",
		"eureka.client.service-url.default-zone",
	};
	char	v[32];
	size_t	i;

	for (i = 0; i < sizeof evict / sizeof evict[0]; i++) {
		snprintf(v, sizeof v, "%zu", 1000 + i);
		set_ok(evict[i], v);
		ck_assert_int_eq(cf.eviction_interval_timer_in_ms,
		    (int64_t)(1000 + i));
	}
	for (i = 0; i < sizeof urls / sizeof urls[0]; i++) {
		snprintf(v, sizeof v, "http://h%zu/eureka/", i);
		set_ok(urls[i], v);
		ck_assert_str_eq(cf.service_url_default_zone, v);
	}
	set_ok("eureka.shouldUseReadOnlyResponseCache", "true");
	ck_assert_int_eq(cf.use_read_only_response_cache, 1);
	set_ok("eureka.server.use-read-only-response-cache", "false");
	ck_assert_int_eq(cf.use_read_only_response_cache, 0);
	set_ok("eureka.server.shouldUseReadOnlyResponseCache", "on");
	ck_assert_int_eq(cf.use_read_only_response_cache, 1);

	set_ok("spring.application.name", "a1");
	ck_assert_str_eq(cf.instance_appname, "a1");
	set_ok("eureka.instance.appname", "a2");
	ck_assert_str_eq(cf.instance_appname, "a2");
	set_ok("eureka.name", "a3");
	ck_assert_str_eq(cf.instance_appname, "a3");

	set_ok("eureka.numberRegistrySyncRetries", "3");
	ck_assert_int_eq(cf.registry_sync_retries, 3);
	set_ok("eureka.server.registry-sync-retries", "4");
	ck_assert_int_eq(cf.registry_sync_retries, 4);

	set_ok("eureka.server.expectedNumberOfRenewsPerMin", "7");
	ck_assert_int_eq(cf.expected_number_of_clients_sending_renews, 7);
	set_ok("eureka.instance.registry.expected-number-of-clients-"
	    "sending-renews", "8");
	ck_assert_int_eq(cf.expected_number_of_clients_sending_renews, 8);
	set_ok("eureka.server.defaultOpenForTrafficCount", "0");
	ck_assert_int_eq(cf.default_open_for_traffic_count, 0);

	set_ok("eureka.client.refresh.interval", "11");
	ck_assert_int_eq(cf.registry_fetch_interval_seconds, 11);
	set_ok("eureka.lease.duration", "120");
	ck_assert_int_eq(cf.instance_lease_expiration_duration_in_seconds,
	    120);
	set_ok("heureka.log.level", "debug");
	ck_assert_str_eq(cf.log_level, "debug");
	set_ok("logging.level.root", "WARN");
	ck_assert_str_eq(cf.log_level, "WARN");

	/* Bare eureka.disableDelta is the server's; the client has its own. */
	set_ok("eureka.disableDelta", "true");
	ck_assert_int_eq(cf.disable_delta, 1);
	ck_assert_int_eq(cf.client_disable_delta, 0);
	set_ok("eureka.client.disable-delta", "true");
	ck_assert_int_eq(cf.client_disable_delta, 1);

	ck_assert_str_eq(config_canonical_name(
	    "EUREKA_SERVER_EVICTIONINTERVALTIMERINMS"),
	    "eureka.server.eviction-interval-timer-in-ms");
	ck_assert_ptr_null(config_canonical_name("no.such.key"));
}
END_TEST

START_TEST(test_env_relaxed_binding)
{
	char *env[] = {
		"PATH=/usr/bin:/bin",
		"EUREKA_SERVER_EVICTIONINTERVALTIMERINMS=1234",
		"SERVER_PORT=9999",
		"SERVER_ADDRESS=127.0.0.1",
		"SPRING_APPLICATION_NAME=svc",
		"HEUREKA_PORT_FILE=/tmp/port",	/* dots ignored */
		"EUREKA_CLIENT_SERVICEURL_DEFAULTZONE=http://a/eureka/",
		"EUREKA_UNRELATED_THING=1",	/* warned, skipped */
		"LOGGING_LEVEL_ROOT=debug",
		"EUREKA_INSTANCE_METADATAMAP_ZONE=z1",
		"EUREKA_SERVER_ENABLESELFPRESERVATION=off",
		"EUREKA_SERVER_EIPBINDREBINDRETRIES=3",	/* ignored key */
		"HOME=/root",
		NULL
	};
	char *bad[] = { "SERVER_PORT=abc", NULL };

	ck_assert_msg(config_load_env(&cf, env, &cause) == 0, "%s", cause);
	ck_assert_int_eq(cf.eviction_interval_timer_in_ms, 1234);
	ck_assert_int_eq(cf.server_port, 9999);
	ck_assert_str_eq(cf.server_address, "127.0.0.1");
	ck_assert_str_eq(cf.instance_appname, "svc");
	ck_assert_str_eq(cf.port_file, "/tmp/port");
	ck_assert_str_eq(cf.service_url_default_zone, "http://a/eureka/");
	ck_assert_str_eq(cf.log_level, "debug");
	ck_assert_int_eq(cf.enable_self_preservation, 0);
	ck_assert_ptr_nonnull(kvlist_get(&cf.instance_metadata, "zone"));
	ck_assert_str_eq(kvlist_get(&cf.instance_metadata, "zone"), "z1");

	ck_assert_int_eq(config_load_env(&cf, bad, &cause), -1);
	ck_assert_ptr_nonnull(strstr(cause, "SERVER_PORT"));
	ck_assert_ptr_nonnull(strstr(cause, "'abc' is not an integer"));
	ck_assert_int_eq(cf.server_port, 9999);
}
END_TEST

START_TEST(test_yaml_nested_list_multidoc)
{
	const char *path = write_file("application.yml",
	    "# a pasted Spring file\n"
	    "server:\n"
	    "  port: 8762\n"
	    "eureka:\n"
	    "  server:\n"
	    "    enable-self-preservation: false\n"
	    "    renewalPercentThreshold: 0.5\n"
	    "    eip-bind-rebind-retries: 3\n"
	    "  client:\n"
	    "    register-with-eureka: no\n"
	    "    service-url:\n"
	    "      defaultZone: [http://a:8761/eureka, "
	    "\"http://b:8761/eureka/\"]\n"
	    "  instance:\n"
	    "    hostname: ~\n"
	    "    metadata-map:\n"
	    "      zone: z1\n"
	    "      \"[management.port]\": 9090\n"
	    "      Mixed-Case: yes\n"
	    "---\n"
	    "spring:\n"
	    "  application:\n"
	    "    name: my-svc\n"
	    "server:\n"
	    "  port: 8763\n"
	    "eureka.dashboard:\n"
	    "  path: /dash\n"
	    "eureka.client.region:\n"
	    "  - eu-west-1\n");

	ck_assert_msg(config_load_file(&cf, path, &cause) == 0, "%s", cause);
	ck_assert_int_eq(cf.server_port, 8763);
	ck_assert_int_eq(cf.enable_self_preservation, 0);
	ck_assert(cf.renewal_percent_threshold == 0.5);
	ck_assert_int_eq(cf.register_with_eureka, 0);
	ck_assert_str_eq(cf.service_url_default_zone,
	    "http://a:8761/eureka,http://b:8761/eureka/");
	ck_assert_ptr_null(cf.instance_hostname);
	ck_assert_str_eq(kvlist_get(&cf.instance_metadata, "zone"), "z1");
	ck_assert_str_eq(kvlist_get(&cf.instance_metadata, "management.port"),
	    "9090");
	ck_assert_str_eq(kvlist_get(&cf.instance_metadata, "Mixed-Case"),
	    "yes");
	ck_assert_str_eq(cf.instance_appname, "my-svc");
	ck_assert_str_eq(cf.dashboard_path, "/dash");
	ck_assert_str_eq(cf.region, "eu-west-1");
}
END_TEST

START_TEST(test_yaml_errors)
{
	const char *p;

	p = write_file("a.yml", "server:\n  port: 1\n  nosuch: 2\n");
	ck_assert_int_eq(config_load_file(&cf, p, &cause), -1);
	ck_assert_ptr_nonnull(strstr(cause, "a.yml:3: unknown key "
	    "'server.nosuch'"));
	free(cause);
	cause = NULL;

	p = write_file("b.yaml", "server:\n  port: [1\n");
	ck_assert_int_eq(config_load_file(&cf, p, &cause), -1);
	ck_assert_ptr_nonnull(strstr(cause, "b.yaml:"));
	free(cause);
	cause = NULL;

	p = write_file("c.yml", "a: &x 1\nb: *x\n");
	ck_assert_int_eq(config_load_file(&cf, p, &cause), -1);
	free(cause);
	cause = NULL;

	p = write_file("d.yml", "eureka:\n  client:\n    service-url:\n"
	    "      defaultZone:\n        - url: x\n");
	ck_assert_int_eq(config_load_file(&cf, p, &cause), -1);
	ck_assert_ptr_nonnull(strstr(cause, "d.yml:5:"));
	free(cause);
	cause = NULL;

	p = write_file("e.conf", "x=1\n");
	ck_assert_int_eq(config_load_file(&cf, p, &cause), -1);
	ck_assert_ptr_nonnull(strstr(cause, "unknown file type"));
	free(cause);
	cause = NULL;

	ck_assert_int_eq(config_load_file(&cf, "/nonexistent/x.yml", &cause),
	    -1);
	ck_assert_ptr_nonnull(strstr(cause, "/nonexistent/x.yml: "));
}
END_TEST

START_TEST(test_properties)
{
	const char *p = write_file("app.properties",
	    "# comment\n"
	    "! also a comment\n"
	    "\n"
	    "eureka.server.evictionIntervalTimerInMs = 5000\n"
	    "eureka.client.serviceUrl.defaultZone: http://a/eureka/,\\\n"
	    "    http://b/eureka/\n"
	    "  server.port   8770  \r\n"
	    "eureka.instance.metadata-map.Key\\u0041=v\\tw\n"
	    "# a comment ending in a backslash does not continue \\\n"
	    "eureka.server.disable-delta=true\n"
	    "spring.application.name=svc\\\\\n"
	    "eureka.instance.metadata-map.last=end\\");

	ck_assert_msg(config_load_file(&cf, p, &cause) == 0, "%s", cause);
	ck_assert_int_eq(cf.eviction_interval_timer_in_ms, 5000);
	ck_assert_str_eq(cf.service_url_default_zone,
	    "http://a/eureka/,http://b/eureka/");
	ck_assert_int_eq(cf.server_port, 8770);
	ck_assert_str_eq(kvlist_get(&cf.instance_metadata, "KeyA"), "v\tw");
	ck_assert_int_eq(cf.disable_delta, 1);
	ck_assert_str_eq(cf.instance_appname, "svc\\");
	ck_assert_str_eq(kvlist_get(&cf.instance_metadata, "last"), "end");
}
END_TEST

START_TEST(test_properties_error_line)
{
	const char *p = write_file("x.properties",
	    "server.port=1\n"
	    "eureka.client.serviceUrl.defaultZone=http://a/,\\\n"
	    "  http://b/\n"
	    "eureka.server.renewal-percent-threshold=2\n");

	ck_assert_int_eq(config_load_file(&cf, p, &cause), -1);
	ck_assert_str_eq(strstr(cause, "x.properties:"), "x.properties:4: "
	    "eureka.server.renewal-percent-threshold: 2 is out of range "
	    "(0 .. 1)");
	free(cause);
	cause = NULL;
	p = write_file("y.properties", "a.b=\\u00zz\n");
	ck_assert_int_eq(config_load_file(&cf, p, &cause), -1);
	ck_assert_ptr_nonnull(strstr(cause, "y.properties:1: bad \\u"));
}
END_TEST

START_TEST(test_bad_input_no_crash)
{
	char		 deep[40 * 34 + 16], *big;
	const char	*p;
	size_t		 i, n = 0;
	FILE		*f;

	/* Nesting beyond the bound is refused. */
	for (i = 0; i < 40; i++)
		n += (size_t)snprintf(deep + n, sizeof deep - n, "%*sk%zu:\n",
		    (int)i, "", i);
	p = write_file("deep.yml", deep);
	ck_assert_int_eq(config_load_file(&cf, p, &cause), -1);
	ck_assert_ptr_nonnull(strstr(cause, "deep.yml:"));
	free(cause);
	cause = NULL;

	/* Binary junk in either format. */
	p = write_file("junk.yml", "\x01\x02\xff\xfe: [\n\t{");
	ck_assert_int_eq(config_load_file(&cf, p, &cause), -1);
	free(cause);
	cause = NULL;
	p = write_file("junk.properties", "\xff\xfe\x01=\\u12\n=\n:\n");
	ck_assert_int_eq(config_load_file(&cf, p, &cause), -1);
	free(cause);
	cause = NULL;

	/* An over-long key and an over-long value. */
	big = malloc(70000);
	ck_assert_ptr_nonnull(big);
	memset(big, 'a', 69999);
	big[69999] = '\0';
	set_fail(big, "1");
	ck_assert_ptr_nonnull(strstr(cause, "key too long"));
	set_fail("eureka.server.my-url", big);
	ck_assert_ptr_nonnull(strstr(cause, "too long"));
	p = write_file("big.yml", "");
	ck_assert_ptr_nonnull(f = fopen(p, "w"));
	fprintf(f, "eureka.environment: %s\n", big);
	fclose(f);
	free(cause);
	cause = NULL;
	ck_assert_int_eq(config_load_file(&cf, p, &cause), -1);
	ck_assert_ptr_nonnull(strstr(cause, "big.yml:1: "));
	free(big);
	ck_assert_str_eq(cf.environment, "test");
}
END_TEST

START_TEST(test_precedence)
{
	const char	*p = write_file("p.yml",
	    "server:\n  port: 8762\n  address: 10.0.0.1\n"
	    "eureka.server.peer-node-read-timeout-ms: 300\n");
	char		*env[] = { "SERVER_PORT=8763",
			    "EUREKA_SERVER_PEERNODEREADTIMEOUTMS=400", NULL };

	ck_assert_int_eq(cf.server_port, 8761);		/* default */
	ck_assert_msg(config_load_file(&cf, p, &cause) == 0, "%s", cause);
	ck_assert_int_eq(cf.server_port, 8762);		/* file */
	ck_assert_int_eq(cf.peer_node_read_timeout_ms, 300);
	ck_assert_msg(config_load_env(&cf, env, &cause) == 0, "%s", cause);
	ck_assert_int_eq(cf.server_port, 8763);		/* env */
	ck_assert_int_eq(cf.peer_node_read_timeout_ms, 400);
	set_ok("server.port", "8764");			/* cmdline */
	ck_assert_int_eq(cf.server_port, 8764);
	ck_assert_int_eq(cf.peer_node_read_timeout_ms, 400);
	ck_assert_str_eq(cf.server_address, "10.0.0.1");	/* file only */
}
END_TEST

START_TEST(test_unknown_key)
{
	ck_assert_str_eq(set_fail("foo.bar", "1"), "unknown key 'foo.bar'");
	ck_assert_str_eq(set_fail("eureka.server.evictionIntervalTimerInM",
	    "1"), "unknown key 'eureka.server.evictionIntervalTimerInM' "
	    "(did you mean 'eureka.server.eviction-interval-timer-in-ms'?)");
	set_fail("", "1");
	set_fail("eureka.instance.metadata-map", "1");	/* needs a key */
	/* Keys that do not apply are accepted. */
	set_ok("eureka.server.eip-bind-rebind-retries", "3");
	set_ok("eureka.server.rate-limiter-enabled", "true");
	set_ok("eureka.rateLimiter.burstSize", "10");
	set_ok("eureka.client.healthcheck.enabled", "true");
	set_ok("eureka.us-east-1.availabilityZones", "default");
	set_ok("eureka.server.max-threads-for-peer-replication", "20");
	set_ok("management.endpoints.web.exposure.include", "*");
	set_ok("eureka.client.service-url.zone2", "http://z2/eureka/");
	ck_assert_str_eq(cf.service_url_default_zone,
	    "http://localhost:8761/eureka/");
}
END_TEST

START_TEST(test_out_of_range)
{
	ck_assert_str_eq(set_fail("eureka.server.renewal-percent-threshold",
	    "1.5"), "eureka.server.renewal-percent-threshold: 1.5 is out of "
	    "range (0 .. 1)");
	ck_assert_str_eq(set_fail("eureka.renewalPercentThreshold", "-0.1"),
	    "eureka.server.renewal-percent-threshold: -0.1 is out of range "
	    "(0 .. 1)");
	ck_assert_str_eq(set_fail("server.port", "70000"),
	    "server.port: 70000 is out of range (0 .. 65535)");
	ck_assert_str_eq(set_fail("eureka.server.eviction-interval-timer-in-"
	    "ms", "60s"), "eureka.server.eviction-interval-timer-in-ms: "
	    "'60s' is not an integer");
	set_fail("server.port", "99999999999999999999999");
	set_fail("eureka.server.renewal-percent-threshold", "nan");
	set_fail("eureka.server.renewal-percent-threshold", "");
	set_fail("eureka.client.service-url.defaultZone", "ftp://x/");
	set_fail("eureka.dashboard.path", "");	/* has a default */
	ck_assert(cf.renewal_percent_threshold == 0.85);
	ck_assert_int_eq(cf.server_port, 8761);
	set_ok("server.port", " 0 ");
	ck_assert_int_eq(cf.server_port, 0);
	set_ok("eureka.server.my-url", "");	/* no default: NULL */
	ck_assert_ptr_null(cf.my_url);
}
END_TEST

START_TEST(test_bool)
{
	static const char *t[] = { "true", "TRUE", "yes", "on", "1", "On" };
	static const char *f[] = { "false", "False", "no", "off", "0", "NO" };
	size_t	i;

	for (i = 0; i < 6; i++) {
		set_ok("eureka.server.disable-delta", t[i]);
		ck_assert_int_eq(cf.disable_delta, 1);
		set_ok("eureka.server.disable-delta", f[i]);
		ck_assert_int_eq(cf.disable_delta, 0);
	}
	ck_assert_str_eq(set_fail("eureka.server.disable-delta", "maybe"),
	    "eureka.server.disable-delta: 'maybe' is not a boolean "
	    "(true/false/yes/no/on/off/1/0)");
	set_fail("eureka.server.disable-delta", "2");
	set_fail("eureka.server.disable-delta", "");
}
END_TEST

START_TEST(test_defaults)
{
	ck_assert_str_eq(cf.server_address, "0.0.0.0");
	ck_assert_int_eq(cf.server_port, 8761);
	ck_assert_ptr_null(cf.port_file);
	ck_assert_int_eq(cf.enable_self_preservation, 1);
	ck_assert(cf.renewal_percent_threshold == 0.85);
	ck_assert_int_eq(cf.renewal_threshold_update_interval_ms, 900000);
	ck_assert_int_eq(cf.expected_client_renewal_interval_seconds, 30);
	ck_assert_int_eq(cf.eviction_interval_timer_in_ms, 60000);
	ck_assert_int_eq(cf.retention_time_in_ms_in_delta_queue, 180000);
	ck_assert_int_eq(cf.delta_retention_timer_interval_in_ms, 30000);
	ck_assert_int_eq(cf.disable_delta, 0);
	ck_assert_int_eq(cf.response_cache_auto_expiration_in_seconds, 180);
	ck_assert_int_eq(cf.response_cache_update_interval_ms, 30000);
	ck_assert_int_eq(cf.use_read_only_response_cache, 0);
	ck_assert_int_eq(cf.wait_time_in_ms_when_sync_empty, 300000);
	ck_assert_int_eq(cf.registry_sync_retries, 0);
	ck_assert_int_eq(cf.registry_sync_retry_wait_ms, 30000);
	ck_assert_int_eq(cf.peer_eureka_nodes_update_interval_ms, 600000);
	ck_assert_int_eq(cf.peer_node_connect_timeout_ms, 200);
	ck_assert_int_eq(cf.peer_node_read_timeout_ms, 200);
	ck_assert_int_eq(cf.max_elements_in_peer_replication_pool, 10000);
	ck_assert_int_eq(cf.max_time_for_replication, 30000);
	ck_assert_int_eq(cf.sync_when_timestamp_differs, 1);
	ck_assert_int_eq(cf.enable_replicated_request_compression, 0);
	ck_assert_int_eq(cf.min_available_instances_for_peer_replication, -1);
	ck_assert_ptr_null(cf.my_url);
	ck_assert_int_eq(cf.expected_number_of_clients_sending_renews, 1);
	ck_assert_int_eq(cf.default_open_for_traffic_count, 1);
	ck_assert_int_eq(cf.anti_entropy_interval_ms, 30000);
	ck_assert_uint_eq(cf.max_body_bytes, 65536);
	ck_assert_uint_eq(cf.max_instances, 1000000);
	ck_assert_int_eq(cf.max_metadata_entries, 128);
	ck_assert_int_eq(cf.max_connections, 10000);
	ck_assert_str_eq(cf.dashboard_path, "/");
	ck_assert_int_eq(cf.dashboard_enabled, 1);
	ck_assert_str_eq(cf.environment, "test");
	ck_assert_str_eq(cf.datacenter, "default");
	ck_assert_str_eq(cf.log_level, "info");
	ck_assert_str_eq(cf.log_format, "text");
	ck_assert_ptr_null(cf.access_log);
	ck_assert_str_eq(cf.service_url_default_zone,
	    "http://localhost:8761/eureka/");
	ck_assert_int_eq(cf.register_with_eureka, 1);
	ck_assert_int_eq(cf.fetch_registry, 1);
	ck_assert_int_eq(cf.registry_fetch_interval_seconds, 30);
	ck_assert_int_eq(cf.instance_info_replication_interval_seconds, 30);
	ck_assert_int_eq(cf.initial_instance_info_replication_interval_seconds,
	    40);
	ck_assert_int_eq(cf.should_unregister_on_shutdown, 1);
	ck_assert_int_eq(cf.on_demand_update_status_change, 1);
	ck_assert_int_eq(cf.filter_only_up_instances, 1);
	ck_assert_int_eq(cf.client_disable_delta, 0);
	ck_assert_int_eq(cf.eureka_server_connect_timeout_seconds, 5);
	ck_assert_int_eq(cf.eureka_server_read_timeout_seconds, 8);
	ck_assert_int_eq(cf.heartbeat_executor_exponential_back_off_bound, 10);
	ck_assert_int_eq(cf.cache_refresh_executor_exponential_back_off_bound,
	    10);
	ck_assert_str_eq(cf.region, "us-east-1");
	ck_assert_ptr_null(cf.instance_appname);
	ck_assert_ptr_null(cf.instance_id);
	ck_assert_int_eq(cf.instance_prefer_ip_address, 0);
	ck_assert_int_eq(cf.instance_non_secure_port_enabled, 1);
	ck_assert_int_eq(cf.instance_secure_port, 443);
	ck_assert_int_eq(cf.instance_secure_port_enabled, 0);
	ck_assert_int_eq(cf.instance_lease_renewal_interval_in_seconds, 30);
	ck_assert_int_eq(cf.instance_lease_expiration_duration_in_seconds, 90);
	ck_assert_str_eq(cf.instance_status_page_url_path, "/actuator/info");
	ck_assert_str_eq(cf.instance_home_page_url_path, "/");
	ck_assert_str_eq(cf.instance_health_check_url_path,
	    "/actuator/health");
	ck_assert_str_eq(cf.instance_initial_status, "UP");
	ck_assert_uint_eq(cf.instance_metadata.n, 0);
	/* Derived at validation: the service port follows server.port. */
	ck_assert_int_eq(cf.instance_non_secure_port, 0);
	set_ok("server.port", "9000");
	ck_assert_msg(config_validate(&cf, &cause) == 0, "%s", cause);
	ck_assert_int_eq(cf.instance_non_secure_port, 9000);
}
END_TEST

START_TEST(test_metadata_map)
{
	set_ok("eureka.instance.metadata-map.Zone", "a");
	set_ok("eureka.instance.metadataMap.management.port", "8081");
	set_ok("eureka.instance.metadata-map[version.Major]", "2");
	set_ok("eureka.metadata.netflixKey", "n");
	set_ok("eureka.instance.metadata-map.Zone", "b");	/* replaces */
	ck_assert_uint_eq(cf.instance_metadata.n, 4);
	ck_assert_str_eq(cf.instance_metadata.v[0].key, "Zone");
	ck_assert_str_eq(cf.instance_metadata.v[0].value, "b");
	ck_assert_str_eq(kvlist_get(&cf.instance_metadata, "management.port"),
	    "8081");
	ck_assert_str_eq(kvlist_get(&cf.instance_metadata, "version.Major"),
	    "2");
	ck_assert_str_eq(kvlist_get(&cf.instance_metadata, "netflixKey"), "n");
}
END_TEST

START_TEST(test_dump_hides_credentials)
{
	char	*out = NULL;
	size_t	 len = 0;
	FILE	*f;

	set_ok("eureka.client.service-url.defaultZone",
	    "http://user:secret@host1:8761/eureka/, "
	    "https://u2:p2@host2/eureka/");
	set_ok("eureka.server.my-url", "http://me:pw@self:8761/eureka/");
	set_ok("eureka.instance.metadata-map.db", "postgres://a:dbpw@db/x");
	ck_assert_ptr_nonnull(f = open_memstream(&out, &len));
	config_dump(&cf, f);
	fclose(f);
	ck_assert_ptr_null(strstr(out, "secret"));
	ck_assert_ptr_null(strstr(out, "p2@"));
	ck_assert_ptr_null(strstr(out, "pw@"));
	ck_assert_ptr_nonnull(strstr(out,
	    "\neureka.client.service-url.defaultZone=http://***@host1:8761/"
	    "eureka/, https://***@host2/eureka/\n"));
	ck_assert_ptr_nonnull(strstr(out,
	    "\neureka.server.my-url=http://***@self:8761/eureka/\n"));
	ck_assert_ptr_nonnull(strstr(out,
	    "\neureka.instance.metadata-map.db=postgres://***@db/x\n"));
	ck_assert_ptr_nonnull(strstr(out,
	    "\neureka.server.eviction-interval-timer-in-ms=60000\n"));
	ck_assert_ptr_nonnull(strstr(out,
	    "\neureka.server.renewal-percent-threshold=0.85\n"));
	ck_assert_ptr_nonnull(strstr(out, "server.port=8761\n"));
	/* The config itself still holds the credentials. */
	ck_assert_ptr_nonnull(strstr(cf.service_url_default_zone, "secret"));
	free(out);
}
END_TEST

START_TEST(test_dump_reloads)
{
	const char	*p;
	char		 path[512];
	FILE		*f;
	struct config	 cf2;

	set_ok("server.port", "1234");
	set_ok("eureka.instance.metadata-map.k", "v");
	snprintf(path, sizeof path, "%s/dump.properties", tmpdir);
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	config_dump(&cf, f);
	fclose(f);
	p = path;
	config_defaults(&cf2);
	ck_assert_msg(config_load_file(&cf2, p, &cause) == 0, "%s", cause);
	ck_assert_int_eq(cf2.server_port, 1234);
	ck_assert_str_eq(kvlist_get(&cf2.instance_metadata, "k"), "v");
	ck_assert_ptr_null(cf2.my_url);
	config_free(&cf2);
}
END_TEST

START_TEST(test_service_urls)
{
	char	**u;
	size_t	  n, i;

	set_ok("eureka.client.service-url.defaultZone",
	    " http://a/eureka , ,http://b/eureka/,,  https://c:1/e  ");
	n = config_service_urls(&cf, &u);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(u[0], "http://a/eureka/");
	ck_assert_str_eq(u[1], "http://b/eureka/");
	ck_assert_str_eq(u[2], "https://c:1/e/");
	for (i = 0; i < n; i++)
		free(u[i]);
	free(u);

	set_ok("eureka.client.service-url.defaultZone", " , ");
	ck_assert_uint_eq(config_service_urls(&cf, &u), 0);
	ck_assert_ptr_null(u);
	set_ok("eureka.client.service-url.defaultZone", "");
	ck_assert_ptr_null(cf.service_url_default_zone);
	ck_assert_uint_eq(config_service_urls(&cf, &u), 0);
	ck_assert_ptr_null(u);
}
END_TEST

START_TEST(test_validate)
{
	ck_assert_msg(config_validate(&cf, &cause) == 0, "%s", cause);

	set_ok("eureka.dashboard.path", "status");
	ck_assert_int_eq(config_validate(&cf, &cause), -1);
	ck_assert_ptr_nonnull(strstr(cause, "must start with '/'"));
	free(cause);
	cause = NULL;
	set_ok("eureka.dashboard.path", "/status");

	set_ok("eureka.server.retention-time-in-ms-in-delta-queue", "1000");
	ck_assert_int_eq(config_validate(&cf, &cause), -1);
	ck_assert_ptr_nonnull(strstr(cause, "retention"));
	free(cause);
	cause = NULL;
	set_ok("eureka.server.retention-time-in-ms-in-delta-queue", "180000");

	set_ok("eureka.instance.lease-expiration-duration-in-seconds", "30");
	ck_assert_int_eq(config_validate(&cf, &cause), -1);
	free(cause);
	cause = NULL;
	set_ok("eureka.instance.lease-expiration-duration-in-seconds", "90");

	set_ok("logging.level.root", "loud");
	ck_assert_int_eq(config_validate(&cf, &cause), -1);
	ck_assert_ptr_nonnull(strstr(cause, "logging.level.root"));
	free(cause);
	cause = NULL;
	set_ok("logging.level.root", "info");

	set_ok("eureka.instance.initial-status", "up");
	ck_assert_int_eq(config_validate(&cf, &cause), -1);
	free(cause);
	cause = NULL;
	set_ok("eureka.instance.initial-status", "STARTING");

	set_ok("eureka.server.expected-client-renewal-interval-seconds", "0");
	ck_assert_msg(config_validate(&cf, &cause) == 0, "%s", cause);
	ck_assert_int_eq(cf.expected_client_renewal_interval_seconds, 30);
}
END_TEST

START_TEST(test_sample_config_loads)
{
	const char *path = TEST_DATA_DIR "/../../etc/heurekad.yml";

	ck_assert_msg(config_load_file(&cf, path, &cause) == 0, "%s", cause);
	ck_assert_msg(config_validate(&cf, &cause) == 0, "%s", cause);
	ck_assert_int_eq(cf.server_port, 8761);
}
END_TEST

/*
 * One set of defaults (defaults.h): the config table's, the registry's
 * without a configuration and the client library's fallbacks (which
 * read the same constants) are the same numbers.
 */
START_TEST(test_defaults_one_set)
{
	struct config		dcf;
	struct registry_conf	rc;

	config_defaults(&dcf);
	registry_conf_defaults(&rc);
	ck_assert(dcf.renewal_percent_threshold ==
	    DEFAULT_RENEWAL_PERCENT_THRESHOLD);
	ck_assert(rc.renewal_percent_threshold ==
	    DEFAULT_RENEWAL_PERCENT_THRESHOLD);
	ck_assert_int_eq(dcf.eviction_interval_timer_in_ms,
	    DEFAULT_EVICTION_INTERVAL_MS);
	ck_assert_int_eq(rc.eviction_interval_ms, DEFAULT_EVICTION_INTERVAL_MS);
	ck_assert_int_eq(dcf.retention_time_in_ms_in_delta_queue,
	    DEFAULT_DELTA_RETENTION_MS);
	ck_assert_int_eq(rc.retention_ms, DEFAULT_DELTA_RETENTION_MS);
	ck_assert_uint_eq(dcf.max_instances, DEFAULT_MAX_INSTANCES);
	ck_assert_uint_eq(rc.max_instances, DEFAULT_MAX_INSTANCES);
	ck_assert_uint_eq(dcf.max_instance_bytes, DEFAULT_MAX_INSTANCE_BYTES);
	ck_assert_uint_eq(rc.max_instance_bytes, DEFAULT_MAX_INSTANCE_BYTES);
	ck_assert_uint_eq(dcf.max_delta_queue_bytes,
	    DEFAULT_MAX_DELTA_QUEUE_BYTES);
	ck_assert_uint_eq(rc.max_delta_bytes, DEFAULT_MAX_DELTA_QUEUE_BYTES);
	ck_assert_int_eq(dcf.max_clock_skew_ms, DEFAULT_MAX_CLOCK_SKEW_MS);
	ck_assert_int_eq(rc.max_skew_ms, DEFAULT_MAX_CLOCK_SKEW_MS);
	ck_assert_int_eq(dcf.expected_client_renewal_interval_seconds,
	    LEASE_DEFAULT_RENEWAL_SECS);
	ck_assert_int_eq(rc.expected_client_renewal_interval_secs,
	    LEASE_DEFAULT_RENEWAL_SECS);
	ck_assert_str_eq(dcf.service_url_default_zone, DEFAULT_SERVICE_URL);
	ck_assert_int_eq(dcf.registry_fetch_interval_seconds,
	    DEFAULT_FETCH_INTERVAL_SECS);
	ck_assert_int_eq(dcf.instance_info_replication_interval_seconds,
	    DEFAULT_REPLICATION_INTERVAL_SECS);
	ck_assert_int_eq(dcf.initial_instance_info_replication_interval_seconds,
	    DEFAULT_INITIAL_REPLICATION_SECS);
	ck_assert_int_eq(dcf.instance_lease_renewal_interval_in_seconds,
	    LEASE_DEFAULT_RENEWAL_SECS);
	config_free(&dcf);
}
END_TEST

/* The suite, one case per area. */
static Suite *
config_suite(void)
{
	Suite	*s = suite_create("config");
	TCase	*tc;

	tc = tcase_create("table");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_table_consistent);
	tcase_add_test(tc, test_spellings_same_field);
	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_defaults_one_set);
	tcase_add_test(tc, test_metadata_map);
	suite_add_tcase(s, tc);

	tc = tcase_create("values");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_unknown_key);
	tcase_add_test(tc, test_out_of_range);
	tcase_add_test(tc, test_bool);
	tcase_add_test(tc, test_validate);
	tcase_add_test(tc, test_service_urls);
	suite_add_tcase(s, tc);

	tc = tcase_create("sources");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_env_relaxed_binding);
	tcase_add_test(tc, test_yaml_nested_list_multidoc);
	tcase_add_test(tc, test_yaml_errors);
	tcase_add_test(tc, test_properties);
	tcase_add_test(tc, test_properties_error_line);
	tcase_add_test(tc, test_precedence);
	tcase_add_test(tc, test_bad_input_no_crash);
	tcase_add_test(tc, test_sample_config_loads);
	suite_add_tcase(s, tc);

	tc = tcase_create("dump");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_dump_hides_credentials);
	tcase_add_test(tc, test_dump_reloads);
	suite_add_tcase(s, tc);
	return (s);
}

/* Run the suite. */
int
main(void)
{
	return (check_run(config_suite()));
}
