/*
 * defaults.h: heureka's default settings, written once. The config key
 * table (config_table.c, through NUM()), the registry's defaults for a
 * registry made without a configuration (registry_conf_defaults) and the
 * client library's fallbacks (client.c) all take them from here, so they
 * cannot drift apart (check_config test_defaults_one_set). Eureka's own
 * defaults are cited where they are Eureka's (spec §8.1, §8.2); the
 * lease's are instance.h's LEASE_DEFAULT_*.
 *
 * Plain literals: NUM() turns each into the table's default string.
 */
#ifndef DEFAULTS_H
#define DEFAULTS_H

/* eureka.server.* (Eureka's EurekaServerConfig defaults) */
#define DEFAULT_RENEWAL_PERCENT_THRESHOLD	0.85
#define DEFAULT_EVICTION_INTERVAL_MS		60000
#define DEFAULT_DELTA_RETENTION_MS		180000

/* heureka's bounds */
#define DEFAULT_MAX_INSTANCES			1000000
#define DEFAULT_MAX_INSTANCE_BYTES		131072	/* 2 x the body cap */
#define DEFAULT_MAX_DELTA_QUEUE_BYTES		67108864	/* 64 MiB */
#define DEFAULT_MAX_CLOCK_SKEW_MS		300000

/* eureka.client.* (Eureka's EurekaClientConfig defaults) */
#define DEFAULT_SERVICE_URL			"http://localhost:8761/eureka/"
#define DEFAULT_FETCH_INTERVAL_SECS		30
#define DEFAULT_REPLICATION_INTERVAL_SECS	30
#define DEFAULT_INITIAL_REPLICATION_SECS	40

#endif
