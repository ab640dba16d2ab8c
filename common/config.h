/*
 * config.h: heureka's one configuration table (nginx/redis style). Every
 * setting has a name, type, bounds and default in common/config.c; it is
 * filled, weakest first, from built-in defaults, a .yml (libyaml) or
 * .properties file, environment variables (Spring relaxed binding:
 * EUREKA_SERVER_EVICTIONINTERVALTIMERINMS, SERVER_PORT) and the command
 * line (-D key=value, --key=value). Both Spring (kebab-case) and Netflix
 * (camelCase) spellings are accepted. Unknown keys and out-of-range values
 * are errors (heurekad exits 78, EX_CONFIG, before the loop starts).
 *
 * The same table serves heurekad (eureka.server.*, server.*, eureka.client
 * service URLs for peers) and libheureka / the heureka CLI
 * (eureka.client.*, eureka.instance.*).
 */
#ifndef CONFIG_H
#define CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "instance.h"

#define CONFIG_EX_CONFIG	78

struct config {
	/* server.* */
	char		*server_address;	/* server.address: "0.0.0.0" */
	int		 server_port;		/* server.port: 8761 */
	char		*port_file;		/* --port-file: write bound port */

	/* server.ssl.*, heureka.server.plain-*, heureka.peer.ssl.* (TLS) */
	int		 ssl_enabled;			/* false */
	char		*ssl_certificate;		/* PEM chain */
	char		*ssl_certificate_key;		/* PEM key */
	char		*ssl_trust_certificate;		/* client CA bundle */
	char		*ssl_client_auth;		/* none, want, need */
	char		*ssl_enabled_protocols;		/* TLSv1.2,TLSv1.3 */
	char		*ssl_ciphers;			/* null: ours */
	int		 plain_port;			/* -1: off */
	int		 plain_max_connections;
	char		*plain_address;			/* 127.0.0.1 */
	char		*plain_port_file;		/* null */
	int64_t		 shutdown_grace_ms;		/* 10000 */
	char		*peer_ssl_certificate;		/* mutual TLS */
	char		*peer_ssl_key;
	char		*peer_ssl_trust;		/* null: system CAs */
	int64_t		 peer_resolve_interval_ms;	/* heureka: 30000 */
	char		*dns_nameservers;		/* null: resolv.conf */
	int64_t		 drain_fetch_window_ms;		/* heureka: 90000 */

	/* eureka.server.* (spec §8.1) */
	int		 enable_self_preservation;	/* true */
	double		 renewal_percent_threshold;	/* 0.85 */
	int64_t		 renewal_threshold_update_interval_ms;	/* 900000 */
	int		 expected_client_renewal_interval_seconds; /* 30 */
	int64_t		 eviction_interval_timer_in_ms;	/* 60000 */
	int64_t		 retention_time_in_ms_in_delta_queue;	/* 180000 */
	int64_t		 delta_retention_timer_interval_in_ms;	/* 30000 */
	int		 disable_delta;			/* false */
	int64_t		 response_cache_auto_expiration_in_seconds; /* 180 */
	int64_t		 response_cache_update_interval_ms;	/* 30000 */
	int		 use_read_only_response_cache;	/* false (heureka) */
	int64_t		 wait_time_in_ms_when_sync_empty;	/* 300000 */
	int		 registry_sync_retries;		/* Spring: 0 */
	int64_t		 registry_sync_retry_wait_ms;	/* 30000 */
	int64_t		 peer_eureka_nodes_update_interval_ms;	/* 600000 */
	int64_t		 peer_node_connect_timeout_ms;	/* Spring: 200 */
	int64_t		 peer_node_read_timeout_ms;	/* Spring: 200 */
	int		 max_elements_in_peer_replication_pool;	/* 10000 */
	int64_t		 max_time_for_replication;	/* 30000 */
	int		 sync_when_timestamp_differs;	/* true */
	int		 enable_replicated_request_compression;	/* false */
	int		 min_available_instances_for_peer_replication; /* -1 */
	char		*my_url;			/* null */
	int		 expected_number_of_clients_sending_renews; /* 1 */
	int		 default_open_for_traffic_count;	/* 1 */
	int64_t		 anti_entropy_interval_ms;	/* heureka: 30000 */
	size_t		 sync_page_bytes;		/* heureka: 1 MiB */
	int64_t		 max_clock_skew_ms;	/* heureka: 300000 */
	size_t		 max_unknown_tombstones;	/* heureka: 65536 */
	size_t		 max_body_bytes;		/* heureka: 65536 */
	size_t		 max_batch_bytes;		/* heureka: 8 MiB */
	size_t		 max_instances;			/* heureka: 1000000 */
	int		 max_metadata_entries;		/* heureka: 128 */
	int		 max_connections;		/* heureka: 10000 */
	int		 descriptor_reserve;		/* heureka: 64 */
	int64_t		 handshake_timeout_ms;		/* heureka: 5000 */
	int64_t		 head_timeout_ms;		/* heureka: 10000 */
	size_t		 max_instance_bytes;		/* heureka: 131072 */
	int		 max_metadata_key_bytes;	/* heureka: 256 */
	int		 max_metadata_value_bytes;	/* heureka: 4096 */
	size_t		 max_memory_bytes;		/* heureka: 0 (RAM/2) */
	size_t		 max_delta_queue_bytes;		/* heureka: 64 MiB */
	double		 register_rate_per_second;	/* heureka: 500 */
	int		 register_rate_burst;		/* heureka: 5000 */
	int		 max_metric_applications;	/* heureka: 5000 */
	/* heureka.watch.* */
	int		 watch_max_watchers;		/* 2048 */
	size_t		 watch_max_buffer_bytes;	/* 1 MiB */
	int		 watch_window;			/* 1024 events */
	size_t		 watch_window_bytes;		/* 8 MiB of them */
	int64_t		 watch_keepalive_ms;		/* 15000 */
	int64_t		 watch_stall_ms;		/* 30000 */
	size_t		 watch_slice_bytes;		/* 1 MiB a turn */
	/* heureka.cache.* (server/core/cache.c) */
	size_t		 cache_encode_slice_bytes;	/* 1 MiB, 0: whole */
	int64_t		 cache_plain_idle_ms;	/* 90000, 0: keep */

	/* heureka.airlift.* (airlift / Trino discovery, server/airlift.c) */
	int		 airlift_enabled;		/* true */
	int64_t		 airlift_max_age_ms;		/* 30000 */
	char		*airlift_environment;		/* null: eureka's */

	/* heureka.dns.* (server/front/dnssrv.c; docs/dns-consul.md) */
	int		 dns_enabled;			/* false */
	int		 dns_port;			/* 8600, UDP and TCP */
	char		*dns_bind;			/* null: server.address */
	char		*dns_domain;			/* "heureka." */
	int		 dns_ttl;			/* 5 s */
	int		 dns_max_tcp;			/* 64 connections */
	int64_t		 dns_tcp_idle_ms;		/* 10000 */
	/* heureka.consul.* (server/front/consul.c; docs/dns-consul.md) */
	int		 consul_enabled;		/* true */
	char		*consul_tags_key;		/* "tags" */
	int64_t		 consul_max_wait_ms;		/* 600000 */

	/* eureka.dashboard.*, eureka.environment, eureka.datacenter */
	char		*dashboard_path;		/* "/" */
	int		 dashboard_enabled;		/* true */
	int64_t		 dashboard_history_interval_ms;	/* 60000 */
	int		 dashboard_actions;		/* false: actions only
							   with authentication */

	/* heureka.audit.*, heureka.doctor.* (docs/console.md) */
	size_t		 audit_max_bytes;		/* 1 MiB */
	char		*audit_file;			/* null: off */
	size_t		 audit_file_max_bytes;		/* 10 MiB */
	int		 audit_file_keep;		/* 5 */
	int64_t		 doctor_interval_ms;		/* 10000 */
	int64_t		 doctor_window_ms;		/* 600000 */
	int		 doctor_storm_per_minute;	/* 10 */
	int64_t		 doctor_clock_skew_ms;		/* 30000 */
	char		*environment;			/* "test" */
	char		*datacenter;			/* "default" */

	/* logging (logging.level.root, heureka.log.*) */
	char		*log_level;			/* "info" */
	char		*log_format;			/* "text" */
	char		*access_log;			/* null: off */

	/* spring.security.*, heureka.security.* (docs/security.md) */
	char		*security_user_name;		/* "user" */
	char		*security_user_password;	/* null: security off */
	char		*security_user_password_file;
	int		 security_read_anonymous;	/* false */
	char		*security_peer_name;		/* null: the user's */
	char		*security_peer_password;	/* null: the user's */
	char		*security_peer_password_file;
	double		 security_auth_failures_per_second; /* 1 */
	int		 security_auth_failure_burst;	/* 10 */

	/* eureka.client.* (peers for the server, servers for clients) */
	char		*service_url_default_zone;	/* comma list */
	int		 register_with_eureka;		/* true */
	int		 fetch_registry;		/* true */
	int		 registry_fetch_interval_seconds;	/* 30 */
	int		 instance_info_replication_interval_seconds; /* 30 */
	int		 initial_instance_info_replication_interval_seconds; /* 40 */
	int		 should_unregister_on_shutdown;	/* true */
	int		 on_demand_update_status_change;	/* true */
	int		 filter_only_up_instances;	/* true */
	int		 client_disable_delta;		/* false */
	int		 eureka_server_connect_timeout_seconds;	/* 5 */
	int		 eureka_server_read_timeout_seconds;	/* 8 */
	char		*client_ssl_trust;		/* heureka.client.ssl */
	char		*client_ssl_certificate;
	char		*client_ssl_key;
	int		 client_ssl_insecure;		/* false */
	int		 heartbeat_executor_exponential_back_off_bound;	/* 10 */
	int		 cache_refresh_executor_exponential_back_off_bound; /* 10 */
	char		*region;			/* "us-east-1" */

	/* eureka.instance.* (spec §8.3, Spring defaults) */
	char		*instance_appname;		/* spring.application.name */
	char		*instance_id;			/* host:app:port */
	char		*instance_hostname;		/* gethostname() */
	char		*instance_ip_address;		/* first non-loopback */
	int		 instance_prefer_ip_address;	/* false */
	int		 instance_non_secure_port;	/* server.port */
	int		 instance_non_secure_port_enabled;	/* true */
	int		 instance_secure_port;		/* 443 */
	int		 instance_secure_port_enabled;	/* false */
	int		 instance_lease_renewal_interval_in_seconds;	/* 30 */
	int		 instance_lease_expiration_duration_in_seconds;	/* 90 */
	char		*instance_virtual_host_name;	/* app name */
	char		*instance_secure_virtual_host_name;	/* app name */
	char		*instance_app_group_name;
	char		*instance_status_page_url_path;	/* /actuator/info */
	char		*instance_status_page_url;
	char		*instance_home_page_url_path;	/* / */
	char		*instance_home_page_url;
	char		*instance_health_check_url_path;	/* /actuator/health */
	char		*instance_health_check_url;
	char		*instance_secure_health_check_url;
	char		*instance_initial_status;	/* UP */
	struct kvlist	 instance_metadata;		/* metadata-map.* */
};

/* Fill every field with its default. */
void	config_defaults(struct config *);
void	config_free(struct config *);		/* frees contents only */

/* Set one key (any accepted spelling); -1 with *cause if unknown/invalid. */
int	config_set(struct config *, const char *key, const char *value,
	    char **cause);
/* Load a .yml/.yaml or .properties file (chosen by suffix). */
int	config_load_file(struct config *, const char *path, char **cause);
/* The same from memory: YAML when yaml is set, else .properties. */
int	config_load_buffer(struct config *, const char *name, int yaml,
	    const char *data, size_t len, char **cause);
/* Apply environment variables (relaxed binding) from envp. */
int	config_load_env(struct config *, char **envp, char **cause);
/*
 * Cross-field checks after everything is loaded. Also fills the settings
 * that default to another one: instance_non_secure_port 0 -> server_port,
 * expected_client_renewal_interval_seconds <= 0 -> 30 (as Eureka).
 */
int	config_validate(struct config *, char **cause);
/* A copy of s with the "user:pass@" of every URL in it made "***@". */
char	*config_redact(const char *);
/* Write every key with its current value (--check-config, /info). */
void	config_dump(const struct config *, FILE *);

/*
 * Split the comma-separated service URL list (trimmed, empties dropped,
 * each ending in '/'); returns the count. *urls is a new array of new
 * strings, NULL when the count is 0: free each string, then the array.
 */
size_t	config_service_urls(const struct config *, char ***urls);

/* List every key with type, default, bounds, aliases, help (--help-config). */
void	config_help(FILE *);
/* Canonical (Spring) name for any accepted spelling; NULL if unknown. */
const char *config_canonical_name(const char *key);
/* Self-check of the table (no two rows share a spelling); for tests. */
int	config_table_check(char **cause);

#endif
