/*
 * config.c: heureka's configuration, as one static table (nginx/redis
 * style). Each row names a setting with every spelling Eureka users write
 * (Spring kebab-case first, which is the canonical name, then Netflix
 * camelCase and the bare Netflix "eureka." form), its type, the field of
 * struct config it fills, its bounds, its default and a line of help.
 *
 * Keys are matched after "relaxed binding" normalisation, as Spring Boot
 * does: lower-case, '-' and '_' dropped, so eviction-interval-timer-in-ms,
 * evictionIntervalTimerInMs and EVICTION_INTERVAL_TIMER_IN_MS (from the
 * environment, where '_' first becomes '.') are one key. A '*' in a table
 * name matches one dotted component; a trailing ".*" matches the rest of
 * the key (maps such as eureka.instance.metadata-map.<key>).
 *
 * Keys that Eureka has but that make no sense here (AWS bindings, thread
 * pools, remote regions, the rate limiter) are accepted and ignored, so a
 * pasted Spring application.yml loads; each is logged once. Anything else
 * unknown is an error, as is an out-of-range or malformed value.
 *
 * Files are .yml/.yaml (libyaml events; nested mappings flattened with
 * '.', lists of scalars joined with ',', all documents merged) or Java
 * .properties (parsed here). Durations are plain integers in the unit the
 * key's name says.
 */
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <yaml.h>

#include "config.h"
#include "instance.h"
#include "log.h"
#include "tls.h"
#include "xmalloc.h"

#ifndef nitems
#define nitems(a)	(sizeof (a) / sizeof (a)[0])
#endif

#define CONFIG_KEY_MAX		256	/* longest key */
#define CONFIG_VALUE_MAX	65536	/* longest single value */
#define CONFIG_FILE_MAX		(4 * 1024 * 1024)
#define CONFIG_YAML_DEPTH	32
#define CONFIG_NAMES		6
#define CONFIG_SECRET_MAX	4096	/* longest password (file) */

enum config_type {
	CONF_BOOL,
	CONF_INT,
	CONF_INT64,
	CONF_SIZE,
	CONF_DOUBLE,
	CONF_STRING,
	CONF_URLLIST,		/* comma-separated http(s) URLs */
	CONF_MAP,		/* prefix.* -> kvlist */
	CONF_SECRET,		/* a string never shown (passwords) */
};

struct config_opt {
	const char		*names[CONFIG_NAMES];	/* [0] canonical */
	enum config_type	 type;
	size_t			 off;
	double			 min;
	double			 max;
	const char		*def;
	const char		*help;
	int			 ignored;
};

#define OFF(f)		offsetof(struct config, f)
#define NOFIELD		((size_t)-1)
#define MS_MAX		604800000.0	/* one week in ms */
#define SEC_MAX		604800.0	/* one week in s */

/* A bool, int, ... row; N() lists the spellings. */
#define N(...)		{ __VA_ARGS__ }
#define NUM_(x)		#x
#define NUM(x)		NUM_(x)		/* a numeric constant as a default */
#define BOOL(n, f, d, h)	{ n, CONF_BOOL, OFF(f), 0, 1, d, h, 0 }
#define INT(n, f, lo, hi, d, h)	{ n, CONF_INT, OFF(f), lo, hi, d, h, 0 }
#define I64(n, f, lo, hi, d, h) { n, CONF_INT64, OFF(f), lo, hi, d, h, 0 }
#define SIZE(n, f, lo, hi, d, h) { n, CONF_SIZE, OFF(f), lo, hi, d, h, 0 }
#define DBL(n, f, lo, hi, d, h) { n, CONF_DOUBLE, OFF(f), lo, hi, d, h, 0 }
#define STR(n, f, d, h)		{ n, CONF_STRING, OFF(f), 0, 0, d, h, 0 }
#define URLS(n, f, d, h)	{ n, CONF_URLLIST, OFF(f), 0, 0, d, h, 0 }
#define MAP(n, f, h)		{ n, CONF_MAP, OFF(f), 0, 0, NULL, h, 0 }
#define SECRET(n, f, h)		{ n, CONF_SECRET, OFF(f), 0, 0, NULL, h, 0 }
#define IGN(n, h)		{ n, CONF_STRING, NOFIELD, 0, 0, NULL, h, 1 }

static const struct config_opt config_opts[] = {
	/* server.*, heureka.* */
	STR(N("server.address"), server_address, "0.0.0.0",
	    "address to listen on"),
	INT(N("server.port"), server_port, 0, 65535, "8761",
	    "port to listen on (0: any free port, see heureka.port-file)"),
	STR(N("heureka.port-file"), port_file, NULL,
	    "write the bound port to this file once listening"),

	/* TLS (Spring Boot's server.ssl.* names; common/tls.c) */
	BOOL(N("server.ssl.enabled"), ssl_enabled, "false",
	    "serve TLS only on server.port"),
	STR(N("server.ssl.certificate"), ssl_certificate, NULL,
	    "the server's PEM certificate chain (leaf first)"),
	STR(N("server.ssl.certificate-private-key"), ssl_certificate_key,
	    NULL, "the PEM private key of server.ssl.certificate"),
	STR(N("server.ssl.trust-certificate"), ssl_trust_certificate, NULL,
	    "PEM CA bundle client certificates must chain to (the peer CA)"),
	STR(N("server.ssl.client-auth"), ssl_client_auth, "none",
	    "client certificates: none, want (ask) or need (require)"),
	STR(N("server.ssl.enabled-protocols"), ssl_enabled_protocols,
	    "TLSv1.2,TLSv1.3", "TLS versions (TLSv1.2, TLSv1.3; no older)"),
	STR(N("server.ssl.ciphers"), ssl_ciphers, NULL,
	    "OpenSSL TLS 1.2 cipher list (default: ECDHE with AES-GCM or "
	    "ChaCha20)"),
	INT(N("heureka.server.plain-port"), plain_port, -1, 65535, "-1",
	    "with TLS on, also serve /health* in plain HTTP on this port "
	    "(-1: off, 0: any)"),
	STR(N("heureka.server.plain-address"), plain_address, "127.0.0.1",
	    "address of heureka.server.plain-port"),
	STR(N("heureka.server.plain-port-file"), plain_port_file, NULL,
	    "write the bound plain port to this file"),
	STR(N("heureka.peer.ssl.certificate"), peer_ssl_certificate, NULL,
	    "PEM client certificate presented to https:// peers (mutual TLS)"),
	STR(N("heureka.peer.ssl.certificate-private-key"), peer_ssl_key, NULL,
	    "the PEM private key of heureka.peer.ssl.certificate"),
	STR(N("heureka.peer.ssl.trust-certificate"), peer_ssl_trust, NULL,
	    "PEM CA bundle https:// peers are verified against (default: "
	    "the system's)"),
	I64(N("heureka.peer.resolve-interval-ms"), peer_resolve_interval_ms,
	    100, MS_MAX, "30000",
	    "re-resolve peer host names this often; a name with several "
	    "addresses is one peer per address"),
	STR(N("heureka.dns.nameservers"), dns_nameservers, NULL,
	    "DNS servers (host[:port], comma-separated) peer names are "
	    "resolved with (default: /etc/resolv.conf)"),
	I64(N("heureka.drain.fetch-window-ms"), drain_fetch_window_ms,
	    0, MS_MAX, "90000",
	    "drain barrier: clients that fetched this long before a change "
	    "must fetch again (or the window pass) before it is drained"),

	/* eureka.server.* (spec 8.1) */
	BOOL(N("eureka.server.enable-self-preservation",
	    "eureka.enableSelfPreservation"), enable_self_preservation, "true",
	    "stop expiring leases when renewals drop below the threshold"),
	DBL(N("eureka.server.renewal-percent-threshold",
	    "eureka.renewalPercentThreshold"), renewal_percent_threshold,
	    0, 1, "0.85",
	    "self-preservation threshold; also caps evictions per run"),
	I64(N("eureka.server.renewal-threshold-update-interval-ms",
	    "eureka.renewalThresholdUpdateIntervalMs"),
	    renewal_threshold_update_interval_ms, 1, MS_MAX, "900000",
	    "period of the expected-clients recount"),
	INT(N("eureka.server.expected-client-renewal-interval-seconds",
	    "eureka.expectedClientRenewalIntervalSeconds"),
	    expected_client_renewal_interval_seconds, INT_MIN, SEC_MAX,
	    NUM(LEASE_DEFAULT_RENEWAL_SECS), "client heartbeat period "
	    "assumed by the threshold (<= 0: "
	    NUM(LEASE_DEFAULT_RENEWAL_SECS) ")"),
	I64(N("eureka.server.eviction-interval-timer-in-ms",
	    "eureka.evictionIntervalTimerInMs"), eviction_interval_timer_in_ms,
	    1, MS_MAX, "60000", "eviction task period"),
	I64(N("eureka.server.retention-time-in-ms-in-delta-queue",
	    "eureka.retentionTimeInMSInDeltaQueue"),
	    retention_time_in_ms_in_delta_queue, 1, MS_MAX, "180000",
	    "how long a change stays in apps/delta"),
	I64(N("eureka.server.delta-retention-timer-interval-in-ms",
	    "eureka.deltaRetentionTimerIntervalInMs"),
	    delta_retention_timer_interval_in_ms, 1, MS_MAX, "30000",
	    "period of the delta-queue cleanup"),
	BOOL(N("eureka.server.disable-delta", "eureka.disableDelta"),
	    disable_delta, "false", "answer apps/delta with 403"),
	I64(N("eureka.server.response-cache-auto-expiration-in-seconds",
	    "eureka.responseCacheAutoExpirationInSeconds"),
	    response_cache_auto_expiration_in_seconds, 1, SEC_MAX, "180",
	    "read-write response cache TTL (with the read-only layer)"),
	I64(N("eureka.server.response-cache-update-interval-ms",
	    "eureka.responseCacheUpdateIntervalMs"),
	    response_cache_update_interval_ms, 1, MS_MAX, "30000",
	    "read-only response cache refresh period"),
	BOOL(N("eureka.server.use-read-only-response-cache",
	    "eureka.shouldUseReadOnlyResponseCache",
	    "eureka.server.shouldUseReadOnlyResponseCache"),
	    use_read_only_response_cache, "false",
	    "serve Eureka's 30 s stale read-only layer (Eureka: true)"),
	I64(N("eureka.server.wait-time-in-ms-when-sync-empty",
	    "eureka.waitTimeInMsWhenSyncEmpty"),
	    wait_time_in_ms_when_sync_empty, 0, MS_MAX, "300000",
	    "refuse reads (403) this long after an empty start-up sync"),
	INT(N("eureka.server.registry-sync-retries",
	    "eureka.numberRegistrySyncRetries",
	    "eureka.server.numberRegistrySyncRetries"), registry_sync_retries,
	    0, 1000, "0", "start-up sync attempts (Netflix: 5)"),
	I64(N("eureka.server.registry-sync-retry-wait-ms",
	    "eureka.registrySyncRetryWaitMs"), registry_sync_retry_wait_ms,
	    0, MS_MAX, "30000", "pause between start-up sync attempts"),
	I64(N("eureka.server.peer-eureka-nodes-update-interval-ms",
	    "eureka.peerEurekaNodesUpdateIntervalMs"),
	    peer_eureka_nodes_update_interval_ms, 1, MS_MAX, "600000",
	    "peer list refresh period"),
	I64(N("eureka.server.peer-node-connect-timeout-ms",
	    "eureka.peerNodeConnectTimeoutMs"), peer_node_connect_timeout_ms,
	    1, MS_MAX, "200", "replication connect timeout (Netflix: 1000)"),
	I64(N("eureka.server.peer-node-read-timeout-ms",
	    "eureka.peerNodeReadTimeoutMs"), peer_node_read_timeout_ms,
	    1, MS_MAX, "200", "replication read timeout (Netflix: 5000)"),
	INT(N("eureka.server.max-elements-in-peer-replication-pool",
	    "eureka.maxElementsInPeerReplicationPool"),
	    max_elements_in_peer_replication_pool, 1, 10000000, "10000",
	    "replication queue bound per peer"),
	I64(N("eureka.server.max-time-for-replication",
	    "eureka.maxTimeForReplication"), max_time_for_replication,
	    1, MS_MAX, "30000",
	    "queued cancel/status tasks expire after this many ms"),
	BOOL(N("eureka.server.sync-when-timestamp-differs",
	    "eureka.syncWhenTimestampDiffers"), sync_when_timestamp_differs,
	    "true", "compare lastDirtyTimestamp on heartbeats (404/409)"),
	BOOL(N("eureka.server.enable-replicated-request-compression",
	    "eureka.enableReplicatedRequestCompression"),
	    enable_replicated_request_compression, "false",
	    "gzip replication request bodies"),
	INT(N("eureka.server.min-available-instances-for-peer-replication",
	    "eureka.minAvailableInstancesForPeerReplication"),
	    min_available_instances_for_peer_replication, -1, 1000000, "-1",
	    "if >= 0, status reports healthy only with this many peers up"),
	STR(N("eureka.server.my-url", "eureka.myUrl"), my_url, NULL,
	    "our own URL, to drop it from the peer list"),
	INT(N("eureka.instance.registry.expected-number-of-clients-sending-renews",
	    "eureka.server.expectedNumberOfRenewsPerMin",
	    "eureka.server.expected-number-of-renews-per-min"),
	    expected_number_of_clients_sending_renews, 0, 100000000, "1",
	    "initial expected clients for self-preservation"),
	INT(N("eureka.instance.registry.default-open-for-traffic-count",
	    "eureka.server.defaultOpenForTrafficCount",
	    "eureka.server.default-open-for-traffic-count"),
	    default_open_for_traffic_count, 0, 100000000, "1",
	    "count used when the start-up sync copied nothing"),
	I64(N("eureka.server.anti-entropy-interval-ms"),
	    anti_entropy_interval_ms, 0, MS_MAX, "30000",
	    "heureka: peer digest comparison period (0: off)"),
	SIZE(N("eureka.server.sync-page-bytes"), sync_page_bytes,
	    1024, 67108864.0, "1048576",
	    "heureka: JSON bytes per page of a peer's registry pull"),
	I64(N("eureka.server.max-clock-skew-ms",
	    "heureka.server.max-clock-skew-ms"),
	    max_clock_skew_ms, 0, MS_MAX, "300000",
	    "heureka: registrations whose lastDirtyTimestamp is further "
	    "ahead of our clock get 400 (0: off)"),
	SIZE(N("eureka.server.max-body-bytes"), max_body_bytes,
	    1024, 1073741824.0, "65536", "heureka: largest request body"),
	SIZE(N("eureka.server.max-batch-bytes"), max_batch_bytes,
	    1024, 1073741824.0, "8388608",
	    "heureka: largest replication batch body"),
	SIZE(N("eureka.server.max-instances"), max_instances,
	    1, 100000000, "1000000", "heureka: registry size bound"),
	INT(N("eureka.server.max-metadata-entries"), max_metadata_entries,
	    0, 100000, "128", "heureka: metadata entries per instance"),
	INT(N("eureka.server.max-connections"), max_connections,
	    1, 1000000, "10000", "heureka: concurrent client connections"),
	SIZE(N("eureka.server.max-instance-bytes",
	    "heureka.server.max-instance-bytes"), max_instance_bytes,
	    1024, 1073741824.0, "131072",
	    "heureka: stored size of one instance (REST and replication)"),
	INT(N("eureka.server.max-metadata-key-bytes",
	    "heureka.server.max-metadata-key-bytes"), max_metadata_key_bytes,
	    1, INSTANCE_MAX_NAME, "256", "heureka: longest metadata key"),
	INT(N("eureka.server.max-metadata-value-bytes",
	    "heureka.server.max-metadata-value-bytes"),
	    max_metadata_value_bytes, 0, INSTANCE_MAX_STRING, "4096",
	    "heureka: longest metadata value"),
	SIZE(N("eureka.server.max-memory-bytes",
	    "heureka.server.max-memory-bytes"), max_memory_bytes,
	    0, 1099511627776.0, "0",
	    "heureka: registry + encodings budget; new registrations get 503 "
	    "past it (0: half the RAM or cgroup limit)"),
	SIZE(N("eureka.server.max-delta-queue-bytes",
	    "heureka.server.max-delta-queue-bytes"), max_delta_queue_bytes,
	    65536, 1099511627776.0, "67108864",
	    "heureka: apps/delta change records; past it the oldest go"),
	DBL(N("eureka.server.register-rate-per-second",
	    "heureka.server.register-rate-per-second"),
	    register_rate_per_second, 0, 1000000, "500",
	    "heureka: registrations per second per client address (0: off)"),
	INT(N("eureka.server.register-rate-burst",
	    "heureka.server.register-rate-burst"), register_rate_burst,
	    1, 100000000, "5000",
	    "heureka: registrations one address may send at once"),
	INT(N("eureka.server.max-metric-applications",
	    "heureka.server.max-metric-applications"),
	    max_metric_applications, 0, 100000000, "5000",
	    "heureka: applications with their own /metrics series"),

	/* airlift / Trino discovery */
	BOOL(N("heureka.airlift.enabled"), airlift_enabled, "true",
	    "serve airlift's discovery protocol under /v1/"),
	I64(N("heureka.airlift.max-age-ms"), airlift_max_age_ms,
	    1000, 86400000, "30000",
	    "lease of an airlift announcement (whole seconds on the wire)"),
	STR(N("heureka.airlift.environment"), airlift_environment, NULL,
	    "environment announcements must name (unset: eureka.environment)"),

	/* heureka.watch.* (server/watch.c; README "Watch and leader") */
	INT(N("heureka.watch.max-watchers"), watch_max_watchers, 0, 1000000,
	    "2048", "open watch streams at most; past it a watch gets 503"),
	SIZE(N("heureka.watch.max-buffer-bytes"), watch_max_buffer_bytes,
	    1024, (size_t)1 << 30, "1048576",
	    "unsent bytes one watcher may hold; past it: RESET and close"),
	INT(N("heureka.watch.window"), watch_window, 1, 1000000, "1024",
	    "recent events kept for Last-Event-ID resumes"),
	SIZE(N("heureka.watch.window-bytes"), watch_window_bytes, 4096,
	    (size_t)1 << 32, "8388608",
	    "bytes of recent events kept for resumes; the oldest go first"),
	I64(N("heureka.watch.keepalive-interval-ms"), watch_keepalive_ms, 10,
	    3600000, "15000", "a comment line to every watcher this often"),

	/* heureka.cache.* (server/core/cache.c; README "Performance") */
	SIZE(N("heureka.cache.encode-slice-bytes"), cache_encode_slice_bytes,
	    0, (size_t)1 << 40, "1048576",
	    "encoding one loop turn does for a fetch not cached (full, "
	    "delta, one app, a VIP) or a read-only refresh (a deflated byte "
	    "counts 4, an application placed in a full body 256); the rest "
	    "waits for the next turns. 0: all at once"),
	I64(N("heureka.cache.plain-idle-ms"), cache_plain_idle_ms, 0, MS_MAX,
	    "90000",
	    "a full registry's plain JSON or XML encoding is kept only while "
	    "it is fetched plain this often; gzip fetches alone keep only "
	    "the compressed bytes. 0: always kept"),

	/* dashboard, environment */
	STR(N("eureka.dashboard.path"), dashboard_path, "/",
	    "where the status page is served"),
	BOOL(N("eureka.dashboard.enabled"), dashboard_enabled, "true",
	    "serve the status page"),
	I64(N("heureka.dashboard.history-interval-ms"),
	    dashboard_history_interval_ms, 1000, 3600000, "60000",
	    "one dashboard chart sample this often (60 kept)"),
	STR(N("eureka.environment"), environment, "test",
	    "environment shown on the dashboard"),
	STR(N("eureka.datacenter"), datacenter, "default",
	    "data center shown on the dashboard"),

	/* logging */
	STR(N("logging.level.root", "heureka.log.level"), log_level, "info",
	    "error, warn, info or debug"),
	STR(N("heureka.log.format"), log_format, "text", "text or json"),
	STR(N("heureka.log.access"), access_log, NULL,
	    "access log file (\"-\": stderr; unset: off)"),

	/* Spring Security's basic-auth user; heureka's peer identity */
	STR(N("spring.security.user.name"), security_user_name, "user",
	    "HTTP Basic user name clients send"),
	SECRET(N("spring.security.user.password"), security_user_password,
	    "HTTP Basic password; setting it turns authentication on"),
	STR(N("heureka.security.user.password-file"),
	    security_user_password_file, NULL,
	    "read spring.security.user.password from this file"),
	BOOL(N("heureka.security.read-anonymous"), security_read_anonymous,
	    "false", "reads need no credentials (writes still do)"),
	STR(N("heureka.security.peer.name"), security_peer_name, NULL,
	    "user name of peers (unset: spring.security.user.name)"),
	SECRET(N("heureka.security.peer.password"), security_peer_password,
	    "password of peers (unset: spring.security.user.password)"),
	STR(N("heureka.security.peer.password-file"),
	    security_peer_password_file, NULL,
	    "read heureka.security.peer.password from this file"),

	/* eureka.client.* (spec 8.2) */
	URLS(N("eureka.client.service-url.defaultZone",
	    "eureka.serviceUrl.default", "eureka.serviceUrl.defaultZone"),
	    service_url_default_zone, "http://localhost:8761/eureka/",
	    "comma-separated Eureka URLs (peers for the server)"),
	BOOL(N("eureka.client.register-with-eureka",
	    "eureka.registration.enabled"), register_with_eureka, "true",
	    "register this instance"),
	BOOL(N("eureka.client.fetch-registry", "eureka.shouldFetchRegistry"),
	    fetch_registry, "true", "fetch and cache the registry"),
	INT(N("eureka.client.registry-fetch-interval-seconds",
	    "eureka.client.refresh.interval"),
	    registry_fetch_interval_seconds, 1, SEC_MAX, "30",
	    "registry fetch period"),
	INT(N("eureka.client.instance-info-replication-interval-seconds",
	    "eureka.appinfo.replicate.interval"),
	    instance_info_replication_interval_seconds, 1, SEC_MAX, "30",
	    "period and rate limit of re-registration on change"),
	INT(N("eureka.client.initial-instance-info-replication-interval-seconds",
	    "eureka.appinfo.initial.replicate.time"),
	    initial_instance_info_replication_interval_seconds, 0, SEC_MAX,
	    "40", "delay of the first replicator run"),
	BOOL(N("eureka.client.should-unregister-on-shutdown",
	    "eureka.shouldUnregisterOnShutdown"),
	    should_unregister_on_shutdown, "true", "cancel the lease on exit"),
	BOOL(N("eureka.client.on-demand-update-status-change",
	    "eureka.shouldOnDemandUpdateStatusChange"),
	    on_demand_update_status_change, "true",
	    "push status changes at once"),
	BOOL(N("eureka.client.filter-only-up-instances",
	    "eureka.shouldFilterOnlyUpInstances"), filter_only_up_instances,
	    "true", "keep only UP instances in the local copy"),
	BOOL(N("eureka.client.disable-delta"), client_disable_delta, "false",
	    "always fetch the full registry"),
	INT(N("eureka.client.eureka-server-connect-timeout-seconds",
	    "eureka.eurekaServer.connectTimeout"),
	    eureka_server_connect_timeout_seconds, 1, 3600, "5",
	    "connect timeout to the servers"),
	INT(N("eureka.client.eureka-server-read-timeout-seconds",
	    "eureka.eurekaServer.readTimeout"),
	    eureka_server_read_timeout_seconds, 1, 3600, "8",
	    "read timeout from the servers"),
	STR(N("heureka.client.ssl.trust-certificate"), client_ssl_trust, NULL,
	    "PEM CA bundle https:// servers are verified against (default: "
	    "the system's)"),
	STR(N("heureka.client.ssl.certificate"), client_ssl_certificate, NULL,
	    "PEM client certificate presented to https:// servers"),
	STR(N("heureka.client.ssl.certificate-private-key"), client_ssl_key,
	    NULL, "the PEM private key of heureka.client.ssl.certificate"),
	BOOL(N("heureka.client.ssl.insecure"), client_ssl_insecure, "false",
	    "do not verify https:// servers (logs a warning; tests only)"),
	INT(N("eureka.client.heartbeat-executor-exponential-back-off-bound",
	    "eureka.client.heartbeat.exponentialBackOffBound"),
	    heartbeat_executor_exponential_back_off_bound, 1, 1000, "10",
	    "heartbeat back-off cap, in heartbeat periods"),
	INT(N("eureka.client.cache-refresh-executor-exponential-back-off-bound",
	    "eureka.client.cacheRefresh.exponentialBackOffBound"),
	    cache_refresh_executor_exponential_back_off_bound, 1, 1000, "10",
	    "fetch back-off cap, in fetch periods"),
	STR(N("eureka.client.region", "eureka.region"), region, "us-east-1",
	    "region of this client"),

	/* eureka.instance.* (spec 8.3) */
	STR(N("eureka.instance.appname", "spring.application.name",
	    "eureka.name"), instance_appname, NULL,
	    "application name to register under (Eureka: unknown)"),
	STR(N("eureka.instance.instance-id", "eureka.instanceId"), instance_id,
	    NULL, "instance id (unset: host:app:port)"),
	STR(N("eureka.instance.hostname", "eureka.hostname"),
	    instance_hostname, NULL, "host name (unset: gethostname)"),
	STR(N("eureka.instance.ip-address"), instance_ip_address, NULL,
	    "IP address (unset: first non-loopback)"),
	BOOL(N("eureka.instance.prefer-ip-address"),
	    instance_prefer_ip_address, "false",
	    "advertise the IP address instead of the host name"),
	INT(N("eureka.instance.non-secure-port", "eureka.port"),
	    instance_non_secure_port, 0, 65535, "0",
	    "service port (0: server.port)"),
	BOOL(N("eureka.instance.non-secure-port-enabled",
	    "eureka.port.enabled"),
	    instance_non_secure_port_enabled, "true",
	    "the plain port is enabled"),
	INT(N("eureka.instance.secure-port", "eureka.securePort"),
	    instance_secure_port, 0, 65535, "443", "TLS service port"),
	BOOL(N("eureka.instance.secure-port-enabled",
	    "eureka.securePort.enabled"), instance_secure_port_enabled,
	    "false", "the TLS port is enabled"),
	INT(N("eureka.instance.lease-renewal-interval-in-seconds",
	    "eureka.lease.renewalInterval"),
	    instance_lease_renewal_interval_in_seconds, 1, SEC_MAX,
	    NUM(LEASE_DEFAULT_RENEWAL_SECS),
	    "heartbeat period"),
	INT(N("eureka.instance.lease-expiration-duration-in-seconds",
	    "eureka.lease.duration"),
	    instance_lease_expiration_duration_in_seconds, 1, SEC_MAX,
	    NUM(LEASE_DEFAULT_DURATION_SECS),
	    "lease lifetime without heartbeat"),
	STR(N("eureka.instance.virtual-host-name", "eureka.vipAddress"),
	    instance_virtual_host_name, NULL, "VIP address (unset: app name)"),
	STR(N("eureka.instance.secure-virtual-host-name",
	    "eureka.secureVipAddress"), instance_secure_virtual_host_name,
	    NULL, "secure VIP address (unset: app name)"),
	STR(N("eureka.instance.app-group-name", "eureka.appGroup"),
	    instance_app_group_name, NULL, "application group"),
	STR(N("eureka.instance.status-page-url-path",
	    "eureka.statusPageUrlPath"), instance_status_page_url_path,
	    "/actuator/info", "status page path (Netflix: /Status)"),
	STR(N("eureka.instance.status-page-url", "eureka.statusPageUrl"),
	    instance_status_page_url, NULL, "absolute status page URL"),
	STR(N("eureka.instance.home-page-url-path", "eureka.homePageUrlPath"),
	    instance_home_page_url_path, "/", "home page path"),
	STR(N("eureka.instance.home-page-url", "eureka.homePageUrl"),
	    instance_home_page_url, NULL, "absolute home page URL"),
	STR(N("eureka.instance.health-check-url-path",
	    "eureka.healthCheckUrlPath"), instance_health_check_url_path,
	    "/actuator/health", "health check path (Netflix: /healthcheck)"),
	STR(N("eureka.instance.health-check-url", "eureka.healthCheckUrl"),
	    instance_health_check_url, NULL, "absolute health check URL"),
	STR(N("eureka.instance.secure-health-check-url",
	    "eureka.secureHealthCheckUrl"), instance_secure_health_check_url,
	    NULL, "absolute secure health check URL"),
	STR(N("eureka.instance.initial-status"), instance_initial_status, "UP",
	    "status at registration (UP, STARTING, ...)"),
	MAP(N("eureka.instance.metadata-map.*", "eureka.metadata.*"),
	    instance_metadata, "metadata entries (key case is kept)"),

	/* Accepted, ignored: AWS, pools, remote regions, rate limiter. */
	IGN(N("eureka.server.initial-capacity-of-response-cache",
	    "eureka.initialCapacityOfResponseCache"), "Java cache sizing"),
	IGN(N("eureka.server.peer-node-total-connections",
	    "eureka.peerNodeTotalConnections"), "HTTP client pool"),
	IGN(N("eureka.server.peer-node-total-connections-per-host",
	    "eureka.peerNodeTotalConnectionsPerHost"), "HTTP client pool"),
	IGN(N("eureka.server.peer-node-connection-idle-timeout-seconds",
	    "eureka.peerNodeConnectionIdleTimeoutSeconds"), "HTTP client pool"),
	IGN(N("eureka.server.max-threads-for-peer-replication",
	    "eureka.maxThreadsForPeerReplication"), "thread pool"),
	IGN(N("eureka.server.min-threads-for-peer-replication",
	    "eureka.minThreadsForPeerReplication"), "thread pool"),
	IGN(N("eureka.server.max-idle-thread-age-in-minutes-for-peer-replication",
	    "eureka.maxIdleThreadAgeInMinutesForPeerReplication"),
	    "thread pool"),
	IGN(N("eureka.server.max-elements-in-status-replication-pool",
	    "eureka.maxElementsInStatusReplicationPool"), "ASG replication"),
	IGN(N("eureka.server.max-threads-for-status-replication",
	    "eureka.maxThreadsForStatusReplication"), "thread pool"),
	IGN(N("eureka.server.min-threads-for-status-replication",
	    "eureka.minThreadsForStatusReplication"), "thread pool"),
	IGN(N("eureka.server.max-idle-thread-in-minutes-age-for-status-replication",
	    "eureka.maxIdleThreadAgeInMinutesForStatusReplication"),
	    "thread pool"),
	IGN(N("eureka.server.number-of-replication-retries",
	    "eureka.numberOfReplicationRetries"), "unused in Eureka"),
	IGN(N("eureka.server.batch-replication",
	    "eureka.shouldBatchReplication"), "always batched"),
	IGN(N("eureka.server.peer-eureka-status-refresh-time-interval-ms",
	    "eureka.peerEurekaStatusRefreshTimeIntervalMs"),
	    "unused in Eureka"),
	IGN(N("eureka.server.prime-aws-replica-connections",
	    "eureka.primeAwsReplicaConnections"), "AWS"),
	IGN(N("eureka.server.json-codec-name", "eureka.jsonCodecName"),
	    "Java codecs"),
	IGN(N("eureka.server.xml-codec-name", "eureka.xmlCodecName"),
	    "Java codecs"),
	IGN(N("eureka.server.log-identity-headers",
	    "eureka.auth.shouldLogIdentityHeaders"), "identity headers"),
	IGN(N("eureka.server.rate-limiter-enabled",
	    "eureka.server.rate-limiter.*", "eureka.rateLimiter.*"),
	    "rate limiter"),
	IGN(N("eureka.server.rate-limiter-throttle-standard-clients",
	    "eureka.server.rate-limiter-privileged-clients",
	    "eureka.server.rate-limiter-burst-size"), "rate limiter"),
	IGN(N("eureka.server.rate-limiter-registry-fetch-average-rate",
	    "eureka.server.rate-limiter-full-fetch-average-rate"),
	    "rate limiter"),
	IGN(N("eureka.server.remote-region-urls-with-name",
	    "eureka.server.remote-region-urls-with-name.*",
	    "eureka.remoteRegionUrlsWithName", "eureka.remoteRegionUrls",
	    "eureka.server.remote-region-urls"), "remote regions"),
	IGN(N("eureka.server.remote-region-app-whitelist",
	    "eureka.server.remote-region-app-whitelist.*",
	    "eureka.remoteRegion.*"), "remote regions"),
	IGN(N("eureka.server.remote-region-registry-fetch-interval",
	    "eureka.server.remote-region-fetch-thread-pool-size",
	    "eureka.server.remote-region-connect-timeout-ms",
	    "eureka.server.remote-region-read-timeout-ms",
	    "eureka.server.remote-region-total-connections",
	    "eureka.server.remote-region-total-connections-per-host"),
	    "remote regions"),
	IGN(N("eureka.server.remote-region-connection-idle-timeout-seconds",
	    "eureka.server.g-zip-content-from-remote-region",
	    "eureka.server.remote-region-trust-store",
	    "eureka.server.remote-region-trust-store-password",
	    "eureka.server.disable-transparent-fallback-to-other-region",
	    "eureka.server.disable-delta-for-remote-regions"),
	    "remote regions"),
	IGN(N("eureka.remoteRegionConnectTimeoutMs",
	    "eureka.remoteRegionReadTimeoutMs",
	    "eureka.remoteRegionTotalConnections",
	    "eureka.remoteRegionTotalConnectionsPerHost",
	    "eureka.remoteRegionConnectionIdleTimeoutSeconds",
	    "eureka.disableDeltaForRemoteRegions"), "remote regions"),
	IGN(N("eureka.server.eip-bind-rebind-retries",
	    "eureka.eipBindRebindRetries",
	    "eureka.server.eip-binding-retry-interval-ms-when-unbound",
	    "eureka.eipBindRebindRetryIntervalMsWhenUnbound",
	    "eureka.server.eip-binding-retry-interval-ms",
	    "eureka.eipBindRebindRetryIntervalMs"), "AWS EIP"),
	IGN(N("eureka.server.route53-bind-rebind-retries",
	    "eureka.route53BindRebindRetries",
	    "eureka.server.route53-binding-retry-interval-ms",
	    "eureka.route53BindRebindRetryIntervalMs",
	    "eureka.server.route53-domain-t-t-l", "eureka.route53DomainTTL"),
	    "AWS Route53"),
	IGN(N("eureka.server.binding-strategy", "eureka.awsBindingStrategy",
	    "eureka.server.aws-access-id", "eureka.server.aws-secret-key",
	    "eureka.awsAccessId", "eureka.awsSecretKey"), "AWS"),
	IGN(N("eureka.server.use-aws-asg-api", "eureka.shouldUseAwsAsgApi",
	    "eureka.server.asg-query-timeout-ms", "eureka.asgQueryTimeoutMs",
	    "eureka.server.asg-update-interval-ms",
	    "eureka.asgUpdateIntervalMs"),
	    "AWS ASG"),
	IGN(N("eureka.server.asg-cache-expiry-timeout-ms",
	    "eureka.asgCacheExpiryTimeoutMs",
	    "eureka.server.list-auto-scaling-groups-role-name",
	    "eureka.listAutoScalingGroupsRoleName"), "AWS ASG"),
	IGN(N("eureka.server.experimental.*", "eureka.experimental.*"),
	    "experimental switches"),

	IGN(N("eureka.client.eureka-service-url-poll-interval-seconds",
	    "eureka.serviceUrlPollIntervalMs"), "URLs are read at start"),
	IGN(N("eureka.client.should-enforce-registration-at-init",
	    "eureka.shouldEnforceRegistrationAtInit",
	    "eureka.shouldEnforceFetchRegistryAtInit",
	    "eureka.client.should-enforce-fetch-registry-at-init"),
	    "start-up enforcement"),
	IGN(N("eureka.client.registry-refresh-single-vip-address",
	    "eureka.registryRefreshSingleVipAddress",
	    "eureka.client.fetch-remote-regions-registry",
	    "eureka.fetchRemoteRegionsRegistry"), "remote regions, VIP fetch"),
	IGN(N("eureka.client.availability-zones.*",
	    "eureka.*.availabilityZones", "eureka.client.service-url.*",
	    "eureka.serviceUrl.*", "eureka.client.prefer-same-zone-eureka",
	    "eureka.preferSameZone"), "zones other than defaultZone"),
	IGN(N("eureka.client.use-dns-for-fetching-service-urls",
	    "eureka.shouldUseDns", "eureka.client.eureka-server-u-r-l-context",
	    "eureka.client.eureka-server-port",
	    "eureka.client.eureka-server-d-n-s-name", "eureka.eurekaServer.*"),
	    "DNS-based server lists"),
	IGN(N("eureka.client.allow-redirects", "eureka.allowRedirects",
	    "eureka.client.log-delta-diff", "eureka.printDeltaFullDiff",
	    "eureka.client.g-zip-content"), "Java client tuning"),
	IGN(N("eureka.client.eureka-server-total-connections",
	    "eureka.client.eureka-server-total-connections-per-host",
	    "eureka.client.eureka-connection-idle-timeout-seconds",
	    "eureka.client.heartbeat-executor-thread-pool-size",
	    "eureka.client.cache-refresh-executor-thread-pool-size",
	    "eureka.client.*.threadPoolSize"), "thread and connection pools"),
	IGN(N("eureka.client.dollar-replacement", "eureka.dollarReplacement",
	    "eureka.client.escape-char-replacement",
	    "eureka.escapeCharReplacement", "eureka.client.encoder-name",
	    "eureka.client.decoder-name"), "Java codecs"),
	IGN(N("eureka.encoderName", "eureka.decoderName",
	    "eureka.client.client-data-accept", "eureka.clientDataAccept",
	    "eureka.client.backup-registry-impl", "eureka.backupregistry"),
	    "Java codecs, backup registry"),
	IGN(N("eureka.client.proxy-host", "eureka.client.proxy-port",
	    "eureka.client.proxy-user-name", "eureka.client.proxy-password",
	    "eureka.client.transport.*", "eureka.transport.*"),
	    "proxy and transport tuning"),
	IGN(N("eureka.client.enabled", "eureka.client.healthcheck.*",
	    "eureka.client.order", "eureka.client.refresh.enable",
	    "eureka.client.jersey.*", "eureka.client.webclient.*"),
	    "Spring client wiring"),
	IGN(N("eureka.client.restclient.*", "eureka.client.tls.*"),
	    "Spring client wiring"),

	IGN(N("eureka.instance.a-s-g-name", "eureka.asgName",
	    "eureka.traffic.enabled", "eureka.instance.namespace",
	    "eureka.instance.default-address-resolution-order",
	    "eureka.instance.data-center-info"), "AWS and Java wiring"),
	IGN(N("spring.profiles", "spring.profiles.*", "spring.config.*",
	    "spring.main.*", "spring.cloud.*", "spring.freemarker.*"),
	    "Spring Boot wiring"),
	IGN(N("management.*", "logging.level.*", "logging.pattern.*",
	    "logging.file.*"), "Spring Boot wiring"),
};

/* Whether each ignored row was reported already (log once). */
static unsigned char config_ignored_seen[nitems(config_opts)];

static int	 config_normalise(const char *, char *, size_t, int);
static int	 config_glob(const char *, const char *, const char **);
static const struct config_opt *config_find(const char *, int, const char **);
static const char *config_suggest(const char *);
static int	 config_apply(struct config *, const struct config_opt *,
		     const char *, const char *, char **);
static int	 config_set_key(struct config *, const char *, const char *,
		     int, char **);
static int	 config_parse_bool(const char *, int *);
static int	 config_parse_int(const char *, long long *);
static char	*config_trim(const char *);
static int	 config_read_file(const char *, char **, size_t *, char **);
static int	 config_load_yaml(struct config *, const char *,
		     const char *, size_t, char **);
static int	 config_load_properties(struct config *, const char *,
		     const char *, size_t, char **);
static int	 config_check_urls(const char *, const char *, char **);
static int	 config_secret(char **, char *const *, const char *,
		     const char *, char **);

/*
 * Normalise a key for relaxed binding: lower-case, drop '-' and '_'. For
 * environment names ('env'), '_' becomes '.' first, as Spring does. Spring's
 * "map[key]" becomes "map.key". -1 if the key does not fit.
 */
static int
config_normalise(const char *in, char *out, size_t outlen, int env)
{
	size_t	n = 0;

	for (; *in != '\0'; in++) {
		char	c = *in;

		if (c == '_' && env)
			c = '.';
		else if (c == '-' || c == '_' || c == ']')
			continue;
		else if (c == '[')
			c = '.';
		if (n + 1 >= outlen)
			return (-1);
		out[n++] = (char)tolower((unsigned char)c);
	}
	out[n] = '\0';
	return (0);
}

/*
 * Match normalised key s against normalised pattern pat: '*' matches one
 * dotted component, a final '*' the (non-empty) rest, returned in *rest.
 */
static int
config_glob(const char *pat, const char *s, const char **rest)
{
	for (;;) {
		if (*pat == '*') {
			if (pat[1] == '\0') {
				if (*s == '\0')
					return (0);
				if (rest != NULL)
					*rest = s;
				return (1);
			}
			if (*s == '\0' || *s == '.')
				return (0);
			while (*s != '\0' && *s != '.')
				s++;
			pat++;
			continue;
		}
		if (*pat != *s)
			return (0);
		if (*pat == '\0')
			return (1);
		pat++;
		s++;
	}
}

/*
 * Find the row for normalised key 'norm': exact names win over patterns.
 * With 'nodots' (environment fallback), dots are ignored on both sides and
 * the match must be unique. *rest gets the tail a pattern matched.
 */
static const struct config_opt *
config_find(const char *norm, int nodots, const char **rest)
{
	const struct config_opt	*o, *found = NULL;
	char			 pat[CONFIG_KEY_MAX], a[CONFIG_KEY_MAX];
	char			*p, *q;
	size_t			 i, j;

	if (rest != NULL)
		*rest = NULL;
	if (nodots) {
		for (p = a, q = (char *)norm; *q != '\0'; q++)
			if (*q != '.')
				*p++ = *q;
		*p = '\0';
	}
	/* Exact names first. */
	for (i = 0; i < nitems(config_opts); i++) {
		o = &config_opts[i];
		for (j = 0; j < CONFIG_NAMES && o->names[j] != NULL; j++) {
			if (strchr(o->names[j], '*') != NULL)
				continue;
			if (config_normalise(o->names[j], pat, sizeof pat,
			    0) != 0)
				continue;
			if (nodots) {
				for (p = q = pat; *q != '\0'; q++)
					if (*q != '.')
						*p++ = *q;
				*p = '\0';
				if (strcmp(pat, a) != 0)
					continue;
				if (found != NULL && found != o)
					return (NULL);	/* ambiguous */
				found = o;
				continue;
			}
			if (strcmp(pat, norm) == 0)
				return (o);
		}
	}
	if (nodots)
		return (found);
	/* Then patterns, in table order. */
	for (i = 0; i < nitems(config_opts); i++) {
		o = &config_opts[i];
		for (j = 0; j < CONFIG_NAMES && o->names[j] != NULL; j++) {
			if (strchr(o->names[j], '*') == NULL)
				continue;
			if (config_normalise(o->names[j], pat, sizeof pat,
			    0) != 0)
				continue;
			if (config_glob(pat, norm, rest))
				return (o);
		}
	}
	return (NULL);
}

/* Edit distance between two short strings (for "did you mean"). */
static size_t
config_distance(const char *a, const char *b)
{
	size_t	la = strlen(a), lb = strlen(b), i, j, d;
	size_t	row0[CONFIG_KEY_MAX + 1], row1[CONFIG_KEY_MAX + 1];
	size_t	*prev = row0, *cur = row1, *t;

	if (la > CONFIG_KEY_MAX || lb > CONFIG_KEY_MAX)
		return (SIZE_MAX);
	for (j = 0; j <= lb; j++)
		prev[j] = j;
	for (i = 1; i <= la; i++) {
		cur[0] = i;
		for (j = 1; j <= lb; j++) {
			d = prev[j - 1] + (a[i - 1] != b[j - 1]);
			if (prev[j] + 1 < d)
				d = prev[j] + 1;
			if (cur[j - 1] + 1 < d)
				d = cur[j - 1] + 1;
			cur[j] = d;
		}
		t = prev;
		prev = cur;
		cur = t;
	}
	return (prev[lb]);
}

/* The known spelling closest to normalised key 'norm', or NULL if none is. */
static const char *
config_suggest(const char *norm)
{
	const char	*best = NULL;
	char		 pat[CONFIG_KEY_MAX];
	size_t		 i, j, d, bestd = SIZE_MAX, limit;

	limit = strlen(norm) / 5;
	if (limit < 2)
		limit = 2;
	for (i = 0; i < nitems(config_opts); i++) {
		if (config_opts[i].ignored)
			continue;
		for (j = 0; j < CONFIG_NAMES &&
		    config_opts[i].names[j] != NULL; j++) {
			if (strchr(config_opts[i].names[j], '*') != NULL)
				continue;
			if (config_normalise(config_opts[i].names[j], pat,
			    sizeof pat, 0) != 0)
				continue;
			d = config_distance(norm, pat);
			if (d < bestd) {
				bestd = d;
				best = config_opts[i].names[j];
			}
		}
	}
	return (bestd <= limit ? best : NULL);
}

/* Parse Spring's boolean spellings. */
static int
config_parse_bool(const char *s, int *out)
{
	static const char *yes[] = { "true", "yes", "on", "1" };
	static const char *no[] = { "false", "no", "off", "0" };
	size_t	i;

	for (i = 0; i < nitems(yes); i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*out = 1;
			return (0);
		}
		if (strcasecmp(s, no[i]) == 0) {
			*out = 0;
			return (0);
		}
	}
	return (-1);
}

/* Parse a whole decimal integer; -1 on junk or overflow. */
static int
config_parse_int(const char *s, long long *out)
{
	char	*end;

	if (*s == '\0')
		return (-1);
	errno = 0;
	*out = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return (-1);
	return (0);
}

/* A copy of s without leading and trailing white space. */
static char *
config_trim(const char *s)
{
	size_t	n;

	while (isspace((unsigned char)*s))
		s++;
	n = strlen(s);
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		n--;
	return (xstrndup(s, n));
}

/* Every http(s) URL in comma list 'v' is well formed, or -1 with *cause. */
static int
config_check_urls(const char *name, const char *v, char **cause)
{
	char	**urls = NULL;
	size_t	  n, i;
	int	  rc = 0;
	struct config tmp;

	memset(&tmp, 0, sizeof tmp);
	tmp.service_url_default_zone = (char *)v;
	n = config_service_urls(&tmp, &urls);
	for (i = 0; i < n; i++) {
		if (rc == 0 && strncasecmp(urls[i], "http://", 7) != 0 &&
		    strncasecmp(urls[i], "https://", 8) != 0) {
			char	*r = config_redact(urls[i]);

			xasprintf(cause, "%s: '%s' is not an http(s) URL",
			    name, r);
			free(r);
			rc = -1;
		}
		free(urls[i]);
	}
	free(urls);
	return (rc);
}

/* Store 'value' into the field of row 'o'; mapkey is set for maps. */
static int
config_apply(struct config *cf, const struct config_opt *o,
    const char *mapkey, const char *value, char **cause)
{
	const char	*name = o->names[0];
	char		*v = NULL, **sp;
	void		*field = (char *)cf + o->off;
	long long	 ll;
	double		 d;
	char		*end;
	int		 b, rc = -1;

	if (o->type != CONF_MAP)
		v = config_trim(value);
	switch (o->type) {
	case CONF_BOOL:
		if (config_parse_bool(v, &b) != 0) {
			xasprintf(cause, "%s: '%s' is not a boolean "
			    "(true/false/yes/no/on/off/1/0)", name, v);
			goto out;
		}
		*(int *)field = b;
		break;
	case CONF_INT:
	case CONF_INT64:
	case CONF_SIZE:
		if (config_parse_int(v, &ll) != 0) {
			xasprintf(cause, "%s: '%s' is not an integer", name, v);
			goto out;
		}
		if ((double)ll < o->min || (double)ll > o->max) {
			xasprintf(cause, "%s: %s is out of range (%.15g .. "
			    "%.15g)", name, v, o->min, o->max);
			goto out;
		}
		if (o->type == CONF_INT)
			*(int *)field = (int)ll;
		else if (o->type == CONF_INT64)
			*(int64_t *)field = (int64_t)ll;
		else
			*(size_t *)field = (size_t)ll;
		break;
	case CONF_DOUBLE:
		errno = 0;
		d = strtod(v, &end);
		if (*v == '\0' || *end != '\0' || errno != 0 || !isfinite(d)) {
			xasprintf(cause, "%s: '%s' is not a number", name, v);
			goto out;
		}
		if (d < o->min || d > o->max) {
			xasprintf(cause, "%s: %s is out of range (%.15g .. "
			    "%.15g)", name, v, o->min, o->max);
			goto out;
		}
		*(double *)field = d;
		break;
	case CONF_URLLIST:
		if (config_check_urls(name, v, cause) != 0)
			goto out;
		/* FALLTHROUGH */
	case CONF_STRING:
	case CONF_SECRET:
		if (strlen(value) > CONFIG_VALUE_MAX) {
			xasprintf(cause, "%s: value too long", name);
			goto out;
		}
		sp = field;
		if (*v == '\0') {
			/* An empty URL list is allowed: "no peers". */
			if (o->def != NULL && o->type == CONF_STRING) {
				xasprintf(cause, "%s: must not be empty", name);
				goto out;
			}
			free(*sp);
			*sp = NULL;
			break;
		}
		free(*sp);
		*sp = xstrdup(v);
		break;
	case CONF_MAP:
		if (strlen(value) > INSTANCE_MAX_STRING ||
		    strlen(mapkey) > INSTANCE_MAX_NAME) {
			xasprintf(cause, "%s: entry '%s' too long", name,
			    mapkey);
			goto out;
		}
		if (kvlist_get(field, mapkey) == NULL &&
		    ((struct kvlist *)field)->n >= INSTANCE_MAX_METADATA) {
			xasprintf(cause, "%s: more than %d entries", name,
			    INSTANCE_MAX_METADATA);
			goto out;
		}
		kvlist_set(field, mapkey, value);
		break;
	}
	rc = 0;
out:
	free(v);
	return (rc);
}

/*
 * Set one key from any source. 'env' selects environment-name rules
 * ('_' is a separator; unknown names are the caller's business).
 */
static int
config_set_key(struct config *cf, const char *key, const char *value,
    int env, char **cause)
{
	const struct config_opt	*o;
	const char		*rest, *sugg, *p;
	char			 norm[CONFIG_KEY_MAX], *mapkey = NULL;
	size_t			 skip, n;
	int			 rc;

	if (value == NULL)
		value = "";
	if (strchr(key, '.') == NULL)
		env = 1;	/* SERVER_PORT given on the command line */
	if (config_normalise(key, norm, sizeof norm, env) != 0) {
		xasprintf(cause, "key too long: '%.40s...'", key);
		return (-1);
	}
	o = config_find(norm, 0, &rest);
	if (o == NULL && env)
		o = config_find(norm, 1, NULL);
	if (o == NULL) {
		if ((sugg = config_suggest(norm)) != NULL)
			xasprintf(cause, "unknown key '%s' (did you mean "
			    "'%s'?)", key, sugg);
		else
			xasprintf(cause, "unknown key '%s'", key);
		return (-1);
	}
	if (o->ignored) {
		if (!config_ignored_seen[o - config_opts]) {
			config_ignored_seen[o - config_opts] = 1;
			log_info("config: %s ignored (%s: does not apply to "
			    "heureka)", key, o->help);
		}
		return (0);
	}
	if (o->type == CONF_MAP) {
		/*
		 * Keep the entry name's case: find where the normalised
		 * tail starts in the original key (normalising drops only
		 * '-', '_' and ']' and turns '[' into '.').
		 */
		if (env)
			mapkey = xstrdup(rest);
		else {
			skip = (size_t)(rest - norm);
			for (p = key, n = 0; *p != '\0' && n < skip; p++)
				if (*p != '-' && *p != '_' && *p != ']')
					n++;
			mapkey = xstrdup(p);
			n = strlen(mapkey);
			if (n > 0 && mapkey[n - 1] == ']')
				mapkey[n - 1] = '\0';
		}
	}
	rc = config_apply(cf, o, mapkey, value, cause);
	free(mapkey);
	return (rc);
}

/* Fill every field with its default from the table. */
void
config_defaults(struct config *cf)
{
	char	*cause = NULL;
	size_t	 i;

	memset(cf, 0, sizeof *cf);
	for (i = 0; i < nitems(config_opts); i++) {
		if (config_opts[i].ignored || config_opts[i].def == NULL)
			continue;
		if (config_apply(cf, &config_opts[i], NULL,
		    config_opts[i].def, &cause) != 0)
			fatalx("config table: %s", cause);
	}
}

/* Free every owned string and the metadata map; the struct stays. */
void
config_free(struct config *cf)
{
	size_t	i;
	char	**sp;

	if (cf == NULL)
		return;
	for (i = 0; i < nitems(config_opts); i++) {
		if (config_opts[i].ignored)
			continue;
		if (config_opts[i].type == CONF_STRING ||
		    config_opts[i].type == CONF_URLLIST ||
		    config_opts[i].type == CONF_SECRET) {
			sp = (char **)((char *)cf + config_opts[i].off);
			if (config_opts[i].type == CONF_SECRET && *sp != NULL)
				explicit_bzero(*sp, strlen(*sp));
			free(*sp);
			*sp = NULL;
		}
	}
	kvlist_clear(&cf->instance_metadata);
}

/* Set one key, in any accepted spelling. */
int
config_set(struct config *cf, const char *key, const char *value,
    char **cause)
{
	return (config_set_key(cf, key, value, 0, cause));
}

/* Canonical (Spring) name of a key, or NULL if unknown or a map entry. */
const char *
config_canonical_name(const char *key)
{
	const struct config_opt	*o;
	char			 norm[CONFIG_KEY_MAX];
	int			 env;

	env = strchr(key, '.') == NULL;
	if (config_normalise(key, norm, sizeof norm, env) != 0)
		return (NULL);
	if ((o = config_find(norm, 0, NULL)) == NULL &&
	    (!env || (o = config_find(norm, 1, NULL)) == NULL))
		return (NULL);
	if (o->type == CONF_MAP)
		return (NULL);
	return (o->names[0]);
}

/*
 * Check the table itself: no spelling may normalise to another row's, and
 * every default must parse. For the unit tests; -1 with *cause.
 */
int
config_table_check(char **cause)
{
	char		 a[CONFIG_KEY_MAX], b[CONFIG_KEY_MAX];
	size_t		 i, j, k, l;
	struct config	 cf;

	for (i = 0; i < nitems(config_opts); i++) {
		for (j = 0; j < CONFIG_NAMES &&
		    config_opts[i].names[j] != NULL; j++) {
			if (config_normalise(config_opts[i].names[j], a,
			    sizeof a, 0) != 0) {
				xasprintf(cause, "%s: too long",
				    config_opts[i].names[j]);
				return (-1);
			}
			for (k = i + 1; k < nitems(config_opts); k++) {
				for (l = 0; l < CONFIG_NAMES &&
				    config_opts[k].names[l] != NULL; l++) {
					config_normalise(
					    config_opts[k].names[l], b,
					    sizeof b, 0);
					if (strcmp(a, b) == 0) {
						xasprintf(cause, "%s and %s "
						    "collide",
						    config_opts[i].names[j],
						    config_opts[k].names[l]);
						return (-1);
					}
				}
			}
		}
	}
	config_defaults(&cf);		/* fatal on a bad default */
	config_free(&cf);
	return (0);
}

/* Read a whole (bounded) file into memory, NUL-terminated. */
static int
config_read_file(const char *path, char **data, size_t *len, char **cause)
{
	FILE		*f;
	struct stat	 st;
	char		*buf = NULL;
	size_t		 n;
	int		 rc = -1;

	if ((f = fopen(path, "r")) == NULL) {
		xasprintf(cause, "%s: %s", path, strerror(errno));
		return (-1);
	}
	if (fstat(fileno(f), &st) != 0) {
		xasprintf(cause, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > CONFIG_FILE_MAX) {
		xasprintf(cause, "%s: not a regular file of at most %d bytes",
		    path, CONFIG_FILE_MAX);
		goto out;
	}
	buf = xmalloc((size_t)st.st_size + 1);
	n = fread(buf, 1, (size_t)st.st_size, f);
	if (ferror(f)) {
		xasprintf(cause, "%s: %s", path, strerror(errno));
		free(buf);
		goto out;
	}
	buf[n] = '\0';
	*data = buf;
	*len = n;
	rc = 0;
out:
	fclose(f);
	return (rc);
}

/* A YAML nesting level being flattened. */
struct yaml_frame {
	int	is_seq;
	size_t	base;		/* key length where this level's keys go */
	int	have_key;
};

/* Append ".k" (or "k" at the root) to path, bounded. */
static int
config_yaml_push_key(char *path, size_t base, const char *k)
{
	size_t	n = strlen(k);

	if (n >= 2 && k[0] == '[' && k[n - 1] == ']') {	/* "[a.b]" */
		k++;
		n -= 2;
	}
	if (base + 1 + n + 1 > CONFIG_KEY_MAX)
		return (-1);
	if (base > 0)
		path[base++] = '.';
	memcpy(path + base, k, n);
	path[base + n] = '\0';
	return (0);
}

/* Is this scalar YAML's null (a plain ~, null or nothing)? */
static int
config_yaml_is_null(const yaml_event_t *ev)
{
	const char	*v = (const char *)ev->data.scalar.value;

	if (ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return (0);
	return (*v == '\0' || strcmp(v, "~") == 0 || strcmp(v, "null") == 0 ||
	    strcmp(v, "Null") == 0 || strcmp(v, "NULL") == 0);
}

/*
 * Flatten a YAML stream: mapping keys joined with '.', sequences of
 * scalars joined with ',', every document merged into cf in order.
 */
static int
config_load_yaml(struct config *cf, const char *path, const char *data,
    size_t len, char **cause)
{
	yaml_parser_t		 parser;
	yaml_event_t		 ev;
	struct yaml_frame	 st[CONFIG_YAML_DEPTH];
	char			 key[CONFIG_KEY_MAX];
	char			*seq = NULL, *err = NULL;
	size_t			 seqlen = 0, line;
	int			 depth = 0, done = 0, rc = -1;
	const char		*v;
	struct yaml_frame	*top;

	key[0] = '\0';
	if (!yaml_parser_initialize(&parser))
		fatalx("yaml_parser_initialize");
	yaml_parser_set_input_string(&parser, (const unsigned char *)data, len);
	while (!done) {
		if (!yaml_parser_parse(&parser, &ev)) {
			xasprintf(cause, "%s:%zu: %s", path,
			    (size_t)parser.problem_mark.line + 1,
			    parser.problem != NULL ? parser.problem :
			    "YAML syntax error");
			goto out;
		}
		line = ev.start_mark.line + 1;
		top = depth > 0 ? &st[depth - 1] : NULL;
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = 1;
			break;
		case YAML_DOCUMENT_START_EVENT:
			depth = 0;
			key[0] = '\0';
			break;
		case YAML_ALIAS_EVENT:
			xasprintf(&err, "YAML aliases are not supported");
			break;
		case YAML_MAPPING_START_EVENT:
			if (top != NULL && (top->is_seq || !top->have_key)) {
				xasprintf(&err, "%s: lists of mappings and "
				    "complex keys are not supported",
				    top->is_seq ? key : "key");
				break;
			}
			if (depth == CONFIG_YAML_DEPTH) {
				xasprintf(&err, "nested too deeply");
				break;
			}
			st[depth].is_seq = 0;
			st[depth].have_key = 0;
			st[depth].base = strlen(key);
			depth++;
			break;
		case YAML_MAPPING_END_EVENT:
		case YAML_SEQUENCE_END_EVENT:
			if (ev.type == YAML_SEQUENCE_END_EVENT &&
			    config_set_key(cf, key, seq != NULL ? seq : "", 0,
			    &err) != 0)
				break;
			free(seq);
			seq = NULL;
			seqlen = 0;
			if (--depth > 0) {
				top = &st[depth - 1];
				key[top->base] = '\0';
				top->have_key = 0;
			}
			break;
		case YAML_SEQUENCE_START_EVENT:
			if (top == NULL || top->is_seq || !top->have_key) {
				xasprintf(&err, "a list is only allowed as "
				    "the value of a key");
				break;
			}
			st[depth].is_seq = 1;
			st[depth].have_key = 0;
			st[depth].base = strlen(key);
			depth++;
			break;
		case YAML_SCALAR_EVENT:
			v = (const char *)ev.data.scalar.value;
			if (top == NULL) {
				if (!config_yaml_is_null(&ev))
					xasprintf(&err, "expected a mapping "
					    "of keys to values");
				break;
			}
			if (top->is_seq) {
				if (config_yaml_is_null(&ev))
					break;
				if (seqlen + strlen(v) + 2 > CONFIG_VALUE_MAX) {
					xasprintf(&err, "%s: list too long",
					    key);
					break;
				}
				seq = xrealloc(seq, seqlen + strlen(v) + 2);
				if (seqlen > 0)
					seq[seqlen++] = ',';
				memcpy(seq + seqlen, v, strlen(v) + 1);
				seqlen += strlen(v);
				break;
			}
			if (!top->have_key) {
				if (config_yaml_push_key(key, top->base, v)
				    != 0) {
					xasprintf(&err, "key too long");
					break;
				}
				top->have_key = 1;
				break;
			}
			if (!config_yaml_is_null(&ev) &&
			    config_set_key(cf, key, v, 0, &err) != 0)
				break;
			key[top->base] = '\0';
			top->have_key = 0;
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
		if (err != NULL) {
			xasprintf(cause, "%s:%zu: %s", path, line, err);
			goto out;
		}
	}
	rc = 0;
out:
	free(err);
	free(seq);
	yaml_parser_delete(&parser);
	return (rc);
}

/* Encode code point c as UTF-8 at p; returns the bytes written. */
static size_t
config_utf8(char *p, unsigned c)
{
	if (c < 0x80) {
		p[0] = (char)c;
		return (1);
	}
	if (c < 0x800) {
		p[0] = (char)(0xc0 | (c >> 6));
		p[1] = (char)(0x80 | (c & 0x3f));
		return (2);
	}
	p[0] = (char)(0xe0 | (c >> 12));
	p[1] = (char)(0x80 | ((c >> 6) & 0x3f));
	p[2] = (char)(0x80 | (c & 0x3f));
	return (3);
}

/*
 * Unescape one .properties token from s (stopping, if 'key', at an
 * unescaped '=', ':' or white space) into out; returns where it stopped.
 * The output is never longer than the input.
 */
static const char *
config_prop_token(const char *s, char *out, int key, int *bad)
{
	unsigned	 c;
	int		 i;

	while (*s != '\0') {
		if (key && (*s == '=' || *s == ':' || *s == ' ' ||
		    *s == '\t' || *s == '\f'))
			break;
		if (*s != '\\') {
			*out++ = *s++;
			continue;
		}
		s++;
		switch (*s) {
		case '\0':
			continue;
		case 't':
			*out++ = '\t';
			break;
		case 'n':
			*out++ = '\n';
			break;
		case 'r':
			*out++ = '\r';
			break;
		case 'f':
			*out++ = '\f';
			break;
		case 'u':
			c = 0;
			for (i = 1; i <= 4; i++) {
				if (!isxdigit((unsigned char)s[i])) {
					*bad = 1;
					*out = '\0';
					return (s);
				}
				c = c * 16 + (unsigned)(isdigit(
				    (unsigned char)s[i]) ? s[i] - '0' :
				    tolower((unsigned char)s[i]) - 'a' + 10);
			}
			out += config_utf8(out, c);	/* <= 3 of 6 bytes */
			s += 4;
			break;
		default:
			*out++ = *s;
			break;
		}
		s++;
	}
	*out = '\0';
	return (s);
}

/*
 * Java .properties: "key=value", "key: value" or "key value"; '#' and '!'
 * comment lines; a line ending in an odd number of '\' continues on the
 * next one (its leading blanks dropped); keys and values trimmed.
 */
static int
config_load_properties(struct config *cf, const char *path, const char *data,
    size_t len, char **cause)
{
	const char	*p = data, *end = data + len, *eol, *s;
	char		*logical, *k, *v, *err = NULL;
	size_t		 ll, n, bs, line = 1, start, nextline;
	int		 bad, rc = -1, more;

	logical = xmalloc(len + 1);
	k = xmalloc(len + 1);
	v = xmalloc(len + 1);
	while (p < end) {
		start = line;
		ll = 0;
		more = 1;
		/* Leading blanks of the first physical line. */
		while (p < end && (*p == ' ' || *p == '\t' || *p == '\f'))
			p++;
		if (p < end && (*p == '#' || *p == '!'))
			more = 0;	/* a comment never continues */
		for (;;) {
			for (eol = p; eol < end && *eol != '\n' &&
			    *eol != '\r'; eol++)
				;
			n = (size_t)(eol - p);
			nextline = 0;
			if (eol < end) {
				nextline = 1;
				if (*eol == '\r' && eol + 1 < end &&
				    eol[1] == '\n')
					eol++;
				eol++;
			}
			for (bs = 0; bs < n && p[n - 1 - bs] == '\\'; bs++)
				;
			if (more) {
				memcpy(logical + ll, p, n);
				ll += n;
			}
			p = eol;
			line += nextline;
			if (!more || bs % 2 == 0)
				break;
			ll--;			/* drop the '\' */
			if (p >= end)
				break;
			while (p < end && (*p == ' ' || *p == '\t' ||
			    *p == '\f'))
				p++;
		}
		if (!more)
			continue;
		logical[ll] = '\0';
		if (ll == 0)
			continue;
		bad = 0;
		s = config_prop_token(logical, k, 1, &bad);
		while (*s == ' ' || *s == '\t' || *s == '\f')
			s++;
		if (*s == '=' || *s == ':')
			s++;
		while (*s == ' ' || *s == '\t' || *s == '\f')
			s++;
		if (!bad)
			config_prop_token(s, v, 0, &bad);
		if (bad) {
			xasprintf(cause, "%s:%zu: bad \\u escape", path,
			    start);
			goto out;
		}
		n = strlen(v);
		while (n > 0 && isspace((unsigned char)v[n - 1]))
			v[--n] = '\0';
		if (config_set_key(cf, k, v, 0, &err) != 0) {
			xasprintf(cause, "%s:%zu: %s", path, start, err);
			goto out;
		}
	}
	rc = 0;
out:
	free(err);
	free(logical);
	free(k);
	free(v);
	return (rc);
}

/* Load a .yml/.yaml or .properties file, chosen by its suffix. */
int
config_load_file(struct config *cf, const char *path, char **cause)
{
	const char	*dot = strrchr(path, '.');
	char		*data = NULL;
	size_t		 len;
	int		 rc = -1, yaml;

	if (dot != NULL && (strcasecmp(dot, ".yml") == 0 ||
	    strcasecmp(dot, ".yaml") == 0))
		yaml = 1;
	else if (dot != NULL && strcasecmp(dot, ".properties") == 0)
		yaml = 0;
	else {
		xasprintf(cause, "%s: unknown file type (want .yml, .yaml or "
		    ".properties)", path);
		return (-1);
	}
	if (config_read_file(path, &data, &len, cause) != 0)
		return (-1);
	if (yaml)
		rc = config_load_yaml(cf, path, data, len, cause);
	else
		rc = config_load_properties(cf, path, data, len, cause);
	free(data);
	return (rc);
}

/* Load .yml (yaml set) or .properties text from memory; name is for messages. */
int
config_load_buffer(struct config *cf, const char *name, int yaml,
    const char *data, size_t len, char **cause)
{
	if (yaml)
		return (config_load_yaml(cf, name, data, len, cause));
	return (config_load_properties(cf, name, data, len, cause));
}

/*
 * Apply environment variables with Spring's relaxed binding. Only names
 * under our prefixes are considered; an unknown one is logged and skipped
 * (the environment is not ours to reject), a bad value is an error.
 */
int
config_load_env(struct config *cf, char **envp, char **cause)
{
	static const char *prefixes[] = {
		"EUREKA_", "SERVER_", "SPRING_APPLICATION_NAME", "HEUREKA_",
		"LOGGING_LEVEL_ROOT", "SPRING_SECURITY_USER_"
	};
	const struct config_opt	*o;
	const char		*eq, *rest;
	char			*name, *err = NULL, norm[CONFIG_KEY_MAX];
	size_t			 i;
	int			 rc = 0;

	for (; envp != NULL && *envp != NULL; envp++) {
		if ((eq = strchr(*envp, '=')) == NULL)
			continue;
		for (i = 0; i < nitems(prefixes); i++)
			if (strncmp(*envp, prefixes[i],
			    strlen(prefixes[i])) == 0)
				break;
		if (i == nitems(prefixes))
			continue;
		name = xstrndup(*envp, (size_t)(eq - *envp));
		if (config_normalise(name, norm, sizeof norm, 1) != 0 ||
		    ((o = config_find(norm, 0, &rest)) == NULL &&
		    (o = config_find(norm, 1, NULL)) == NULL)) {
			log_warnx("config: environment variable %s matches "
			    "no key, ignored", name);
			free(name);
			continue;
		}
		if (config_set_key(cf, name, eq + 1, 1, &err) != 0) {
			xasprintf(cause, "environment %s: %s", name, err);
			free(err);
			free(name);
			rc = -1;
			break;
		}
		free(name);
	}
	return (rc);
}

/*
 * Resolve one password: from *file (which wins only when *pw is unset, and
 * both set is an error) into *pw. The file holds the password, one final
 * newline ignored; it is read here, before the loop starts, and again on
 * SIGHUP. Errors never quote the file's content.
 */
static int
config_secret(char **pw, char *const *file, const char *pwkey,
    const char *filekey, char **cause)
{
	char	*data = NULL;
	size_t	 len;

	if (*file == NULL)
		return (0);
	if (*pw != NULL) {
		xasprintf(cause, "%s and %s are both set: use one", pwkey,
		    filekey);
		return (-1);
	}
	if (config_read_file(*file, &data, &len, cause) != 0)
		return (-1);
	if (len > 0 && data[len - 1] == '\n')
		data[--len] = '\0';
	if (len > 0 && data[len - 1] == '\r')
		data[--len] = '\0';
	if (len == 0 || len > CONFIG_SECRET_MAX || strlen(data) != len) {
		xasprintf(cause, "%s: %s must hold one password of 1 to %d "
		    "bytes", filekey, *file, CONFIG_SECRET_MAX);
		explicit_bzero(data, len);
		free(data);
		return (-1);
	}
	*pw = data;
	return (0);
}

/* Cross-field checks, and the defaults that depend on other keys. */
int
config_validate(struct config *cf, char **cause)
{
	enum log_level		lvl;
	enum log_format		fmt;
	enum instance_status	status;
	enum tls_client_auth	auth;

	if (cf->expected_client_renewal_interval_seconds <= 0)
		cf->expected_client_renewal_interval_seconds =
		    LEASE_DEFAULT_RENEWAL_SECS;	/* Eureka */
	if (cf->instance_non_secure_port == 0)
		cf->instance_non_secure_port = cf->server_port;
	if (cf->dashboard_path == NULL || cf->dashboard_path[0] != '/') {
		xasprintf(cause, "eureka.dashboard.path: '%s' must start "
		    "with '/'", cf->dashboard_path != NULL ?
		    cf->dashboard_path : "");
		return (-1);
	}
	if (log_parse_level(cf->log_level, &lvl) != 0) {
		xasprintf(cause, "logging.level.root: '%s' is not one of "
		    "error, warn, info, debug", cf->log_level);
		return (-1);
	}
	if (log_parse_format(cf->log_format, &fmt) != 0) {
		xasprintf(cause, "heureka.log.format: '%s' is not text or "
		    "json", cf->log_format);
		return (-1);
	}
	if (tls_parse_client_auth(cf->ssl_client_auth, &auth) != 0) {
		xasprintf(cause, "server.ssl.client-auth: '%s' is not none, "
		    "want or need", cf->ssl_client_auth);
		return (-1);
	}
	if (instance_status_parse(cf->instance_initial_status, &status)
	    != 0) {
		xasprintf(cause, "eureka.instance.initial-status: '%s' is not "
		    "UP, DOWN, STARTING, OUT_OF_SERVICE or UNKNOWN",
		    cf->instance_initial_status);
		return (-1);
	}
	/*
	 * A change must outlive a client's fetch period in the delta queue,
	 * or clients miss it and fall back to full fetches (Eureka keeps
	 * 180 s against 30 s); and the cleanup must run inside that window.
	 */
	if (cf->retention_time_in_ms_in_delta_queue <
	    cf->delta_retention_timer_interval_in_ms) {
		xasprintf(cause, "eureka.server.retention-time-in-ms-in-delta-"
		    "queue (%lld) must be at least eureka.server.delta-"
		    "retention-timer-interval-in-ms (%lld)",
		    (long long)cf->retention_time_in_ms_in_delta_queue,
		    (long long)cf->delta_retention_timer_interval_in_ms);
		return (-1);
	}
	/* A lease shorter than its heartbeat period always expires. */
	if (cf->instance_lease_expiration_duration_in_seconds <=
	    cf->instance_lease_renewal_interval_in_seconds) {
		xasprintf(cause, "eureka.instance.lease-expiration-duration-"
		    "in-seconds (%d) must be greater than eureka.instance."
		    "lease-renewal-interval-in-seconds (%d)",
		    cf->instance_lease_expiration_duration_in_seconds,
		    cf->instance_lease_renewal_interval_in_seconds);
		return (-1);
	}
	if (cf->my_url != NULL &&
	    config_check_urls("eureka.server.my-url", cf->my_url, cause) != 0)
		return (-1);
	if (config_secret(&cf->security_user_password,
	    &cf->security_user_password_file, "spring.security.user.password",
	    "heureka.security.user.password-file", cause) != 0 ||
	    config_secret(&cf->security_peer_password,
	    &cf->security_peer_password_file, "heureka.security.peer.password",
	    "heureka.security.peer.password-file", cause) != 0)
		return (-1);
	/* Basic auth splits "name:password" at the first ':'. */
	if (strchr(cf->security_user_name, ':') != NULL ||
	    (cf->security_peer_name != NULL &&
	    strchr(cf->security_peer_name, ':') != NULL)) {
		xasprintf(cause, "spring.security.user.name and heureka."
		    "security.peer.name must not contain ':'");
		return (-1);
	}
	if (cf->security_user_password == NULL &&
	    (cf->security_peer_name != NULL ||
	    cf->security_peer_password != NULL)) {
		xasprintf(cause, "heureka.security.peer.* needs spring."
		    "security.user.password (without it authentication is "
		    "off)");
		return (-1);
	}
	if (!cf->instance_non_secure_port_enabled &&
	    !cf->instance_secure_port_enabled && cf->register_with_eureka) {
		xasprintf(cause, "eureka.instance: registering needs "
		    "non-secure-port-enabled or secure-port-enabled");
		return (-1);
	}
	return (0);
}

/* A copy of s with "user:pass@" in every URL replaced by "***@". */
char *
config_redact(const char *s)
{
	char		*out, *o;
	const char	*p, *auth, *at;

	out = o = xmalloc(strlen(s) * 2 + 1);	/* "***" < 2x anything */
	p = s;
	while (*p != '\0') {
		if (strncmp(p, "://", 3) != 0) {
			*o++ = *p++;
			continue;
		}
		memcpy(o, "://", 3);
		o += 3;
		auth = p + 3;
		at = NULL;
		for (p = auth; *p != '\0' && *p != '/' && *p != ',' &&
		    !isspace((unsigned char)*p); p++)
			if (*p == '@')
				at = p;
		if (at != NULL) {
			memcpy(o, "***", 3);
			o += 3;
			p = at;		/* copy from the '@' on */
		} else
			p = auth;
	}
	*o = '\0';
	return (out);
}

/* Write every key as canonical=value (credentials hidden). */
void
config_dump(const struct config *cf, FILE *f)
{
	const struct config_opt	*o;
	const void		*field;
	const struct kvlist	*kv;
	char			*r, prefix[CONFIG_KEY_MAX];
	size_t			 i, j;

	for (i = 0; i < nitems(config_opts); i++) {
		o = &config_opts[i];
		if (o->ignored)
			continue;
		field = (const char *)cf + o->off;
		switch (o->type) {
		case CONF_BOOL:
			fprintf(f, "%s=%s\n", o->names[0],
			    *(const int *)field ? "true" : "false");
			break;
		case CONF_INT:
			fprintf(f, "%s=%d\n", o->names[0],
			    *(const int *)field);
			break;
		case CONF_INT64:
			fprintf(f, "%s=%lld\n", o->names[0],
			    (long long)*(const int64_t *)field);
			break;
		case CONF_SIZE:
			fprintf(f, "%s=%zu\n", o->names[0],
			    *(const size_t *)field);
			break;
		case CONF_DOUBLE:
			fprintf(f, "%s=%.15g\n", o->names[0],
			    *(const double *)field);
			break;
		case CONF_STRING:
		case CONF_URLLIST:
			if (*(char *const *)field == NULL) {
				fprintf(f, "%s=\n", o->names[0]);
				break;
			}
			r = config_redact(*(char *const *)field);
			fprintf(f, "%s=%s\n", o->names[0], r);
			free(r);
			break;
		case CONF_SECRET:
			/* Never the value, not even its length. */
			fprintf(f, "%s=%s\n", o->names[0],
			    *(char *const *)field != NULL ? "<hidden>" : "");
			break;
		case CONF_MAP:
			kv = field;
			/* The name without its final '*'. */
			snprintf(prefix, sizeof prefix, "%.*s",
			    (int)strlen(o->names[0]) - 1, o->names[0]);
			for (j = 0; j < kv->n; j++) {
				r = config_redact(kv->v[j].value);
				fprintf(f, "%s%s=%s\n", prefix, kv->v[j].key,
				    r);
				free(r);
			}
			break;
		}
	}
}

/* List every key with its type, default, bounds, aliases and help. */
void
config_help(FILE *f)
{
	static const char *types[] = { "bool", "int", "int64", "size",
	    "double", "string", "url-list", "map", "secret" };
	const struct config_opt	*o;
	size_t			 i, j;

	for (i = 0; i < nitems(config_opts); i++) {
		o = &config_opts[i];
		if (o->ignored)
			continue;
		fprintf(f, "%s (%s", o->names[0], types[o->type]);
		if (o->def != NULL)
			fprintf(f, ", default %s", o->def);
		if (o->type == CONF_INT || o->type == CONF_INT64 ||
		    o->type == CONF_SIZE || o->type == CONF_DOUBLE)
			fprintf(f, ", %.15g .. %.15g", o->min, o->max);
		fprintf(f, ")\n\t%s\n", o->help);
		for (j = 1; j < CONFIG_NAMES && o->names[j] != NULL; j++)
			fprintf(f, "\talso: %s\n", o->names[j]);
	}
}

/*
 * Split the service URL list: trimmed, empties dropped, each ending in
 * '/'. *urls is a new array of new strings (NULL when the count is 0).
 */
size_t
config_service_urls(const struct config *cf, char ***urls)
{
	const char	*p, *q, *list = cf->service_url_default_zone;
	char		*u, **v = NULL;
	size_t		 n = 0, len;

	*urls = NULL;
	if (list == NULL)
		return (0);
	for (p = list; *p != '\0'; p = *q == ',' ? q + 1 : q) {
		for (q = p; *q != '\0' && *q != ','; q++)
			;
		while (p < q && isspace((unsigned char)*p))
			p++;
		len = (size_t)(q - p);
		while (len > 0 && isspace((unsigned char)p[len - 1]))
			len--;
		if (len == 0)
			continue;
		if (p[len - 1] == '/')
			u = xstrndup(p, len);
		else {
			u = xmalloc(len + 2);
			memcpy(u, p, len);
			u[len] = '/';
			u[len + 1] = '\0';
		}
		v = xreallocarray(v, n + 1, sizeof *v);
		v[n++] = u;
	}
	*urls = v;
	return (n);
}
