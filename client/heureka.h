/*
 * heureka.h: libheureka, a C client for Eureka-compatible service
 * registries (heurekad, Netflix Eureka, Spring Cloud Eureka). A service
 * links -lheureka (pkg-config heureka) and in a few lines registers itself,
 * heartbeats, and discovers other services, the way the Java
 * DiscoveryClient does:
 *
 *	struct heureka_options	 o = HEUREKA_OPTIONS_INIT;
 *	o.app_name = "hello";
 *	o.port = 8080;
 *	struct heureka_client	*c = heureka_client_new(&o, &cause);
 *	heureka_client_start(c, base);		   (or _start_thread(c))
 *	...
 *	inst = heureka_client_next_up(c, "OTHER"); (copy; heureka_instance_free)
 *	...
 *	heureka_client_stop(c, done_cb, arg);	   (cancels, then frees c)
 *
 * Ownership, once for the whole API:
 *  - heureka_client_new gives a client; heureka_client_stop or
 *    heureka_client_free release it (never both).
 *  - Every lookup returns COPIES the caller owns and releases with
 *    heureka_instance_free / heureka_instances_free. Nothing returned is
 *    borrowed, so results stay valid after the registry changes and across
 *    threads.
 *  - Strings passed in are copied; the caller keeps its own.
 *
 * Threads: with heureka_client_start the client runs on the caller's
 * event_base and every function must be called from that loop's thread.
 * With heureka_client_start_thread the client runs its own loop on its own
 * thread; then every function here may be called from any thread (lookups
 * and setters take the client's lock). Callbacks run on the loop's thread,
 * with the client's lock held: they may call lookups and setters, and
 * (on the caller's loop only) heureka_client_stop; never
 * heureka_client_free, and never heureka_client_stop of a threaded client
 * (it joins the very thread the callback runs on).
 *
 * No function here blocks on the network, except heureka_client_stop for
 * a threaded client, which waits (bounded by the read timeout) for the
 * cancel to be answered.
 *
 * Errors: the library never exits its host (it imports no abort() or
 * exit(); make check verifies it). A function that fails returns -1 (or
 * NULL) with errno set (EINVAL a bad argument or a client that does not
 * register, EALREADY already started, ENOMEM out of memory,
 * ENOSPC too many metadata entries), or a message in *cause. What happens
 * on the network (a failed heartbeat, an unreachable server) is retried
 * and said in the library's log (heureka_set_log_callback).
 *
 * Out of memory: the library holds a reserve of 8 MiB of address space
 * (not resident). When an allocation fails, it gives the reserve back and
 * the operation in progress finishes whole; until the reserve can be taken
 * again, every function that allocates fails with ENOMEM before doing
 * anything (heureka_client_new: NULL, *cause NULL; the lookups: 0 or
 * NULL, so set errno to 0 first to tell "none" from ENOMEM; the setters
 * and starts: -1), and the client's tasks (heartbeat, registration,
 * fetch, cancel, the watch) send nothing, log "out of memory" and try
 * again at their next run. Only an allocation that fails while the reserve
 * is already spent waits for memory (retrying, up to a second apart)
 * instead of returning. Allocations inside libevent, OpenSSL, yajl and
 * zlib are theirs: they report failure to the library as an error.
 */
#ifndef HEUREKA_H
#define HEUREKA_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#ifdef __cplusplus
extern "C" {
#endif

struct heureka_client;

/*
 * What to build the client from. Initialise it with HEUREKA_OPTIONS_INIT,
 * which sets size to the size the caller was compiled with: fields added
 * to a later heureka.h go last, and a library reads only what the
 * caller's struct holds, so a program built against an older heureka.h
 * keeps working (heureka_client_new refuses a size of 0).
 * Fields left 0/NULL take their defaults.
 * Settings are applied weakest first: built-in (Spring Cloud) defaults,
 * config_file (.yml/.yaml/.properties, the eureka.client.* and
 * eureka.instance.* keys in Spring or Netflix spelling), the environment
 * (when use_env: EUREKA_CLIENT_SERVICEURL_DEFAULTZONE,
 * EUREKA_INSTANCE_HOSTNAME, ...), settings[] ("key=value" strings, a NULL
 * terminated array), then the named fields below.
 */
struct heureka_options {
	size_t			 size;		/* HEUREKA_OPTIONS_INIT */
	const char		*app_name;	/* unless no_register */
	int			 port;		/* non-secure port */
	const char		*service_url;	/* comma list of server URLs */
	const char		*host_name;	/* default: gethostname() */
	const char		*ip_addr;	/* default: non-loopback */
	const char		*instance_id;	/* default: host:app:port */
	const char		*config_file;
	int			 use_env;
	const char *const	*settings;
	int			 no_register;	/* discovery only */
	int			 no_fetch;	/* registration only */
	/*
	 * https:// service URLs (added in 0.1: new fields go last). The
	 * server's certificate is verified against cacert (the system's
	 * CAs when NULL) and must match the URL's host; client_cert and
	 * client_key (PEM) are presented when set; insecure turns
	 * verification off, with a warning in the log.
	 */
	const char		*cacert;	/* PEM CA bundle */
	const char		*client_cert;	/* PEM chain */
	const char		*client_key;	/* PEM key */
	int			 insecure;
};
#define HEUREKA_OPTIONS_INIT	{ sizeof(struct heureka_options) }
/* The size of the first struct heureka_options with a size (0.2). */
#define HEUREKA_OPTIONS_MIN_SIZE					\
	(offsetof(struct heureka_options, insecure) + sizeof(int))

/* A key/value pair of an instance's metadata. */
struct heureka_kv {
	char	*key;
	char	*value;
};

/* One registered instance (a copy; see the ownership rules above). */
struct heureka_instance {
	char			*app;		/* upper case */
	char			*instance_id;
	char			*host_name;
	char			*ip_addr;
	char			*status;	/* "UP", "DOWN", ... */
	char			*vip_address;	/* may be NULL */
	char			*secure_vip_address;
	char			*home_page_url;
	char			*status_page_url;
	char			*health_check_url;
	int			 port;
	int			 port_enabled;
	int			 secure_port;
	int			 secure_port_enabled;
	int64_t			 last_updated_ts;
	int64_t			 last_dirty_ts;
	struct heureka_kv	*metadata;
	size_t			 nmetadata;
};

/* Kinds of change reported by heureka_client_on_change. */
enum heureka_change {
	HEUREKA_ADDED = 1,
	HEUREKA_MODIFIED,
	HEUREKA_DELETED,
};

typedef void (*heureka_change_cb)(struct heureka_client *,
    enum heureka_change, const struct heureka_instance *, void *arg);
typedef void (*heureka_done_cb)(void *arg);
/* A new leader of app (NULL: it has none); see heureka_client_leader. */
typedef void (*heureka_leader_cb)(struct heureka_client *, const char *app,
    const struct heureka_instance *, void *arg);

/*
 * Create a client; NULL with a message in *cause (caller frees) on a bad
 * setting or an options struct without its size. Nothing is sent until it
 * is started.
 */
struct heureka_client	*heureka_client_new(const struct heureka_options *,
			     char **cause);

/*
 * Run on the caller's event_base (which must outlive the client). -1 with
 * errno: EALREADY started, EINVAL no base, ENOMEM no timers or out of
 * memory.
 */
int	heureka_client_start(struct heureka_client *, struct event_base *);
/*
 * Run on a new thread with its own event_base; lookups become
 * thread-safe. -1 with errno as heureka_client_start, or pthread_create's.
 */
int	heureka_client_start_thread(struct heureka_client *);

/*
 * Cancel the registration (DELETE, when registered and
 * shouldUnregisterOnShutdown), stop every task, free the client, then call
 * done (may be NULL). On the caller's loop this returns at once and done
 * runs later from the loop; keep the loop running until then. For a
 * threaded client it blocks until everything is freed and calls done
 * before returning.
 */
void	heureka_client_stop(struct heureka_client *, heureka_done_cb, void *);
/* Free without cancelling (never started, or on a fatal path). */
void	heureka_client_free(struct heureka_client *);

/*
 * Change the local instance: marks it dirty so the next replicator run (or,
 * for a status, an immediate rate-limited update) re-registers it.
 * status is one of UP, DOWN, STARTING, OUT_OF_SERVICE, UNKNOWN. A status
 * change the on-demand rate limit holds back (two at once, then four a
 * minute by default) is said in the log at info and sent by the next
 * replicator run. -1 with errno EINVAL (not a status, or a client that
 * does not register) or ENOSPC (metadata full).
 */
int	heureka_client_set_status(struct heureka_client *, const char *status);
int	heureka_client_set_metadata(struct heureka_client *, const char *key,
	    const char *value);

/* Lookups in the local copy (no I/O). Only UP instances by default. */
size_t	heureka_client_get_app(struct heureka_client *, const char *app,
	    struct heureka_instance **list);
size_t	heureka_client_get_vip(struct heureka_client *, const char *vip,
	    struct heureka_instance **list);
struct heureka_instance *heureka_client_get_instance(struct heureka_client *,
	    const char *id);
/* Round robin over the UP instances of app; NULL if there is none. */
struct heureka_instance *heureka_client_next_up(struct heureka_client *,
	    const char *app);
/*
 * The leader of app in the local copy (no I/O): the same rule as
 * heurekad's GET {base}heureka/apps/{app}/leader (docs/api.md, "Watch and
 * leader"); a copy to free, NULL if app has no UP instance.
 */
struct heureka_instance *heureka_client_leader(struct heureka_client *,
	    const char *app);
/* Number of instances in the local copy (any status); -1 before a fetch. */
long	heureka_client_count(struct heureka_client *);

/* Called after a fetch for each application whose leader changed. */
void	heureka_client_on_leader_change(struct heureka_client *,
	    heureka_leader_cb, void *);
/* Called for every change seen in the local copy (after each fetch). */
void	heureka_client_on_change(struct heureka_client *, heureka_change_cb,
	    void *);

/* Our own instance id (borrowed; valid until the client is freed). */
const char *heureka_client_instance_id(struct heureka_client *);

void	heureka_instance_free(struct heureka_instance *);
void	heureka_instances_free(struct heureka_instance *, size_t);

/*
 * The library's log, process-wide (every client): lines at or above the
 * level (default HEUREKA_LOG_WARN) go to stderr, or, once a callback is
 * set, to the callback with their level and the message alone (no time
 * stamp, no newline), so the host routes them into its own logging. The
 * callback runs on whichever thread logs (a threaded client's own); set
 * it before creating clients. NULL goes back to stderr.
 */
enum heureka_log_level {
	HEUREKA_LOG_ERROR = 0,
	HEUREKA_LOG_WARN,
	HEUREKA_LOG_INFO,
	HEUREKA_LOG_DEBUG,
};
typedef void (*heureka_log_cb)(int level, const char *message, void *arg);
void	heureka_set_log_level(int);
void	heureka_set_log_callback(heureka_log_cb, void *);

#ifdef __cplusplus
}
#endif

#endif
