/*
 * internal.h: libheureka's private interfaces, shared by the files of the
 * protocol logic (client.c: register, heartbeat, lifecycle; ops.c:
 * requests with failover; fetch.c: the local copy; watch.c: the watch
 * stream; api.c: the public API), transport.c (the libevent
 * implementations of the transport and scheduler), the CLI and the unit
 * tests, which link the library's objects whole (libheureka_core.la). Not
 * installed.
 *
 * The protocol logic never touches a socket or a clock: requests go through
 * struct hk_transport and timers through struct hk_sched, both tables of
 * function pointers, so tests substitute fakes and drive time by hand.
 *
 * Internal symbols carry an hk_ prefix so they never clash with a name of
 * the host program's; libheureka.so exports none of them, only the
 * heureka_* API (client/include.am, checked by tests/abi/lib-symbols.sh).
 */
#ifndef HEUREKA_INTERNAL_H
#define HEUREKA_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "config.h"
#include "instance.h"

struct event_base;
struct ssl_ctx_st;
struct heureka_client;

/* What a request is, which decides which answers are accepted (§7.7). */
enum hk_req_kind {
	HK_REQ_REGISTER = 0,	/* 2xx, 302, 404 accepted */
	HK_REQ_HEARTBEAT,	/* 2xx, 302, 404 */
	HK_REQ_CANCEL,		/* any HTTP status */
	HK_REQ_FULL,		/* 2xx, 302 */
	HK_REQ_DELTA,		/* 2xx, 302, 403, 404 */
	HK_REQ_QUERY,		/* 2xx, 302, 404 (CLI lookups, status) */
};

/*
 * Why an exchange got no HTTP answer. A done callback's status is the HTTP
 * status, or one of these negated; 0 is "no answer" with no reason known
 * (a transport that cannot tell). hk_status_str says it in words.
 */
enum hk_neterr {
	HK_NET_UNKNOWN = 0,	/* no answer, reason unknown */
	HK_NET_REFUSED,		/* connection refused */
	HK_NET_TIMEOUT,		/* no answer within the timeout */
	HK_NET_DNS,		/* the host name did not resolve */
	HK_NET_TLS,		/* TLS verification failed */
	HK_NET_HANDSHAKE,	/* TLS handshake failed */
	HK_NET_CLOSED,		/* closed before a whole answer */
	HK_NET_BADURL,		/* not a usable http(s) URL */
	HK_NET_PROTO,		/* not an HTTP answer */
	HK_NET_TOOBIG,		/* answer over the body bound */
	HK_NET_BADBODY,		/* bad gzip body */
	HK_NET_LOCAL,		/* could not send (out of memory, ...) */
	HK_NET_NOMEM,		/* not tried: the library is low on memory */
};
#define HK_NET_STATUS(e)	(-(int)(e))	/* as a done status */
#define HK_STATUS_MAX		128		/* hk_status_str's buffer */

/*
 * Completion of one HTTP exchange: status > 0 is the HTTP status, <= 0
 * no answer (-status is an enum hk_neterr); body is the decoded
 * (inflated) body, borrowed for the call, NUL-terminated.
 */
typedef void (*hk_done_cb)(int status, const char *body, size_t len,
    void *arg);

/*
 * A streamed GET (the watch): chunk is called with each piece of the body
 * of a 200 text/event-stream answer as it arrives (borrowed, not
 * NUL-terminated); end is called once when the stream is over: status 200
 * if it was a stream that ended or dropped, HK_STREAM_NOT_SSE for a 2xx
 * that is not an event stream, else the HTTP status (<= 0: no answer, as
 * for hk_done_cb).
 */
#define HK_STREAM_NOT_SSE	1
typedef void (*hk_chunk_cb)(const char *data, size_t len, void *arg);
typedef void (*hk_end_cb)(int status, void *arg);

/*
 * The transport. send() never calls done from within itself; done is called
 * exactly once unless the request is cancelled first. send() and stream()
 * return NULL with errno set when nothing was queued (EINVAL: the URL is
 * not usable). url is a service URL
 * ending in '/', path is relative to it ("apps/FOO"). stream() (NULL: not
 * offered) opens a streamed GET with an optional Last-Event-ID; the same
 * cancel() drops it without calling end.
 */
struct hk_transport {
	void	*(*send)(void *ctx, const char *url, const char *method,
		    const char *path, const char *body, size_t len,
		    hk_done_cb done, void *arg);
	void	 (*cancel)(void *ctx, void *handle);
	void	 (*free)(void *ctx);
	void	  *ctx;
	void	*(*stream)(void *ctx, const char *url, const char *path,
		    const char *last_id, hk_chunk_cb chunk, hk_end_cb end,
		    void *arg);
};

/* Timers and the wall clock. A timer fires once per add(). */
struct hk_sched {
	void	*(*timer_new)(void *ctx, void (*cb)(void *), void *arg);
	void	 (*timer_add)(void *ctx, void *timer, int64_t ms);
	void	 (*timer_del)(void *ctx, void *timer);
	void	 (*timer_free)(void *ctx, void *timer);
	int64_t	 (*now)(void *ctx);		/* wall ms */
	void	 (*free)(void *ctx);
	void	  *ctx;
};

/* transport.c: the evhttp transport and the libevent scheduler. */
int	hk_transport_evhttp(struct hk_transport *, struct event_base *,
	    const char *my_ip, int connect_timeout_s, int read_timeout_s,
	    struct ssl_ctx_st *tls_ctx);	/* https://; NULL: http only */
void	hk_sched_libevent(struct hk_sched *, struct event_base *);

/* Token bucket (Netflix RateLimiter): burst, then `per_min` per minute. */
struct hk_ratelim {
	int	burst;
	int	per_min;
	int	consumed;
	int64_t	last_refill;		/* 0: never */
};
void	hk_ratelim_init(struct hk_ratelim *, int burst, int per_min);
int	hk_ratelim_acquire(struct hk_ratelim *, int64_t now);

/* TimedSupervisorTask back-off: delay doubles on timeout, up to a bound. */
struct hk_backoff {
	int64_t	base_ms;
	int64_t	max_ms;
	int64_t	delay_ms;
};
void	hk_backoff_init(struct hk_backoff *, int64_t base_ms, int bound);
int64_t	hk_backoff_timeout(struct hk_backoff *);	/* returns new delay */
int64_t	hk_backoff_done(struct hk_backoff *);		/* returns base */

/* Service URL list with quarantine (RetryableEurekaHttpClient). */
#define HK_MAX_URLS	16
#define HK_RETRIES	3
struct hk_endpoints {
	char	*urls[HK_MAX_URLS];
	size_t	 n;
	uint8_t	 quarantined[HK_MAX_URLS];
	int	 pinned;			/* -1: none */
};
void	hk_endpoints_init(struct hk_endpoints *, const char *list);
void	hk_endpoints_clear(struct hk_endpoints *);
size_t	hk_endpoints_candidates(struct hk_endpoints *, int *out);
void	hk_endpoints_failed(struct hk_endpoints *, int);
int	hk_req_accepted(enum hk_req_kind, int status);
/* A status in words ("connection refused", "404 Not Found"), in buf. */
const char *hk_status_str(int status, char *buf, size_t len);

/*
 * sse.c: a text/event-stream reader. Lines are bounded (a longer one is
 * dropped); each whole frame goes to the callback: its event (NULL:
 * "message"), id (NULL: none) and data (NUL-terminated). A callback that
 * returns nonzero stops the reader: the rest is discarded until a reset.
 */
#define HK_SSE_LINE_MAX	(1024 * 1024)
typedef int (*hk_sse_frame_cb)(const char *event, const char *id,
    const char *data, size_t len, void *arg);
struct hk_sse {
	struct buf	 line;		/* the partial line */
	int		 skip;		/* dropping an overlong line */
	int		 stopped;	/* the callback said stop */
	char		*event;		/* event: of this frame */
	char		*id;		/* id: of this frame */
	struct buf	 data;		/* data: of this frame */
};
void	hk_sse_init(struct hk_sse *);
void	hk_sse_reset(struct hk_sse *);	/* for a new stream */
void	hk_sse_free(struct hk_sse *);
void	hk_sse_feed(struct hk_sse *, const char *, size_t, hk_sse_frame_cb,
	    void *);

/* Merging (§7.5) and change reporting. */
typedef void (*hk_change_cb)(enum action_type, const struct instance *,
    void *);
/* One delta instance into local (the watch stream applies events so). */
void	hk_merge_one(struct applications *local, const char *app,
	    const struct instance *, hk_change_cb, void *);
void	hk_merge_delta(struct applications *local,
	    const struct applications *delta, hk_change_cb, void *);
void	hk_diff(const struct applications *old,
	    const struct applications *new, hk_change_cb, void *);

/*
 * The client core. hk_client_new_with takes ownership of the transport and
 * scheduler tables' contexts (it calls their free). The config is copied.
 * A "bare" client (no app name, registration off) serves the CLI queries.
 */
struct heureka_client *hk_client_new_with(const struct config *,
	    struct hk_transport *, struct hk_sched *, char **cause);
int	hk_client_start(struct heureka_client *);
void	hk_client_shutdown(struct heureka_client *);
struct instance *hk_client_self(struct heureka_client *);
const struct applications *hk_client_apps(struct heureka_client *);
int	hk_client_is_dirty(struct heureka_client *, int64_t *ts);
void	hk_client_mark_dirty(struct heureka_client *);
int64_t	hk_client_heartbeat_delay(struct heureka_client *);
int64_t	hk_client_refresh_delay(struct heureka_client *);
int	hk_client_watching(struct heureka_client *);	/* stream up */

/* A one-off request with failover; cb gets the accepted answer or 0. */
void	hk_client_request(struct heureka_client *, enum hk_req_kind,
	    const char *method, const char *path, const char *body,
	    hk_done_cb, void *);

/* export.c: a self-contained public copy of a model instance. */
struct heureka_instance *hk_instance_export(const struct instance *);
/* The same appended to a growing array of *n. */
void	hk_instance_list_add(struct heureka_instance **, size_t *n,
	    const struct instance *);

/* Build the instance description from config (Spring defaults, §8.3). */
struct instance *hk_instance_from_config(const struct config *, int64_t now,
	    char **cause);

/*
 * The client itself, shared by the files of the library: ops.c (requests
 * with failover), client.c (register, heartbeat, replicator, lifecycle),
 * fetch.c (the local copy), watch.c (the watch stream) and api.c (the
 * public API). Every field is guarded by mu.
 */
#include <sys/queue.h>
#include <pthread.h>

#include <openssl/ssl.h>

#include "hash.h"
#include "heureka.h"


/* One logical request walking the endpoint list (RetryableEurekaHttpClient). */
struct hk_op {
	struct heureka_client	*c;
	enum hk_req_kind	 kind;
	char			*method;
	char			*path;
	char			*body;
	int			 cand[HK_MAX_URLS];
	size_t			 ncand;
	int			 have_cand;
	size_t			 idx;
	int			 attempt;
	int			 cur;
	int			 last;		/* last attempt's status */
	void			*handle;
	hk_done_cb		 cb;
	void			*arg;
	struct hk_op		**slot;		/* the owner's handle, or NULL */
	TAILQ_ENTRY(hk_op)	 entry;
};
TAILQ_HEAD(hk_ops, hk_op);

/* Round-robin position of one app, in c->rr by its upper-cased name. */
struct hk_rr {
	struct htab_node	 node;
	char			*app;
	unsigned		 next;
};

#define CONTAINER_OF(p, type, member) \
	((type *)(void *)((char *)(p) - offsetof(type, member)))

struct heureka_client {
	pthread_mutex_t		 mu;
	int			 attached;
	int			 started;
	int			 stopping;
	struct hk_transport	 tr;
	struct hk_sched		 sc;
	struct hk_endpoints	 ep;
	struct hk_ops		 ops;

	/* Settings (from struct config). */
	int			 do_register;
	int			 do_fetch;
	int			 unregister_on_shutdown;
	int			 on_demand;
	int			 filter_up;
	int			 disable_delta;
	int64_t			 renew_ms;
	int64_t			 fetch_ms;
	int64_t			 repl_initial_ms;
	int64_t			 repl_ms;
	int			 connect_timeout_s;
	int			 read_timeout_s;
	SSL_CTX			*tls_ctx;	/* https:// URLs, or NULL */

	/* Our instance and its dirty flag (ApplicationInfoManager). */
	struct instance		*self;
	char			*self_path;	/* apps/APP/ID, encoded */
	int			 dirty;
	int			 registered;
	struct hk_op		*reg_op;
	int64_t			 reg_dirty_ts;
	int			 reg_again;
	struct hk_ratelim	 rl;

	/* Tasks. */
	void			*t_heartbeat;
	void			*t_hb_timeout;
	void			*t_refresh;
	void			*t_rf_timeout;
	void			*t_repl;
	void			*t_kick;
	void			*t_final;
	void			*t_stop;
	struct hk_backoff	 hb_bo;
	struct hk_backoff	 rf_bo;
	struct hk_op		*hb_op;
	struct hk_op		*rf_op;
	struct hk_op		*cancel_op;

	/* The local copy of the registry (unfiltered; lookups filter). */
	struct applications	*apps;
	int			 fetched;
	struct htab		 rr;		/* struct hk_rr */
	uint64_t		 rnd;
	heureka_change_cb	 change_cb;
	void			*change_arg;
	heureka_leader_cb	 leader_cb;
	void			*leader_arg;
	char			**leaders;	/* "APP\0id" per app last told */
	size_t			 nleaders;

	/* The watch stream (SSE): its handle, parse state and retry. */
	void			*w_handle;
	int			 w_none;	/* server has no watch */
	int64_t			 w_none_at;	/* when it said so */
	int			 w_wait;	/* reconnect timer armed */
	int			 w_up;		/* an event came since open */
	char			*w_last_id;	/* Last-Event-ID to resume */
	struct hk_sse		 w_sse;		/* the stream's reader */
	void			*t_watch;
	struct hk_backoff	 w_bo;

	/* Threading and shutdown. */
	struct event_base	*own_base;
	pthread_t		 thread;
	int			 threaded;
	heureka_done_cb		 stop_cb;
	void			*stop_arg;
};

#define LOCK(c)		pthread_mutex_lock(&(c)->mu)
#define UNLOCK(c)	pthread_mutex_unlock(&(c)->mu)

#define HK_WATCH_REDETECT_MS	(5 * 60 * 1000)	/* no watch: ask again */
#define HK_WATCH_BO_MS		500		/* first reconnect delay */
#define HK_WATCH_BO_BOUND	60		/* up to 30 s */

/* ops.c */
void		 hk_op_start(struct heureka_client *, struct hk_op **slot,
		     enum hk_req_kind, const char *, const char *,
		     const char *, hk_done_cb, void *);
void		 hk_op_cancel(struct heureka_client *, struct hk_op *);

/* client.c */
struct heureka_client *hk_client_alloc(const struct config *, char **);
int	hk_client_attach(struct heureka_client *, struct hk_transport *,
	    struct hk_sched *);
void	hk_client_free(struct heureka_client *);
void	hk_arm(struct heureka_client *, void *, int64_t);
void	hk_disarm(struct heureka_client *, void *);
void	hk_mark_dirty(struct heureka_client *);

/* fetch.c */
void	hk_fetch_start(struct heureka_client *, int);
void	hk_refresh_cb(void *);
void	hk_rf_timeout_cb(void *);
void	hk_change_bridge(enum action_type, const struct instance *, void *);
void	hk_leaders_check(struct heureka_client *);
struct instance *hk_app_leader(const struct application *);

/* watch.c */
void	hk_watch_open(struct heureka_client *);
void	hk_watch_stop(struct heureka_client *);
void	hk_watch_cb(void *);

/* api.c */
int	hk_rr_free_cb(struct htab_node *, void *);

#endif
