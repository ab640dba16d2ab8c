/*
 * api.c: libheureka's public API (heureka.h): building a client from
 * struct heureka_options, starting it on the caller's loop or on its own
 * thread, stopping and freeing it, the setters that dirty the instance,
 * and the lookups over the local copy (copies the caller owns).
 */

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/thread.h>

#include "buf.h"
#include "clock.h"
#include "config.h"
#include "hash.h"
#include "httputil.h"
#include "instance.h"
#include "json.h"
#include "log.h"
#include "tls.h"
#include "url.h"
#include "xmalloc.h"

#include "heureka.h"
#include "internal.h"

/* htab_sweep callback: free one round-robin entry. */
int
hk_rr_free_cb(struct htab_node *n, void *arg)
{
	struct hk_rr	*rr = CONTAINER_OF(n, struct hk_rr, node);

	(void)arg;
	free(rr->app);
	free(rr);
	return (1);
}

/* Whether an instance shows up in lookups (shouldFilterOnlyUpInstances). */
static int
visible(struct heureka_client *c, const struct instance *in)
{
	return (!c->filter_up || in->status == STATUS_UP);
}

/* Copies of the (UP) instances of an application. */
size_t
heureka_client_get_app(struct heureka_client *c, const char *app,
    struct heureka_instance **list)
{
	struct application	*a;
	size_t			 i, n = 0;

	*list = NULL;
	if (app == NULL || xmalloc_ready() != 0)
		return (0);
	LOCK(c);
	if ((a = applications_find(c->apps, app)) != NULL) {
		for (i = 0; i < a->n; i++) {
			if (visible(c, a->instances[i]))
				hk_instance_list_add(list, &n, a->instances[i]);
		}
	}
	UNLOCK(c);
	return (n);
}

/* Copies of the (UP) instances whose vipAddress lists vip. */
size_t
heureka_client_get_vip(struct heureka_client *c, const char *vip,
    struct heureka_instance **list)
{
	struct instance	*in;
	size_t		 i, j, n = 0;

	*list = NULL;
	if (vip == NULL || xmalloc_ready() != 0)
		return (0);
	LOCK(c);
	for (i = 0; i < c->apps->n; i++) {
		for (j = 0; j < c->apps->apps[i]->n; j++) {
			in = c->apps->apps[i]->instances[j];
			if (visible(c, in) && instance_has_vip(
			    in->vip_address, vip, INSTANCE_VIP_ICASE))
				hk_instance_list_add(list, &n, in);
		}
	}
	UNLOCK(c);
	return (n);
}

/* A copy of the instance with that id (any status), or NULL. */
struct heureka_instance *
heureka_client_get_instance(struct heureka_client *c, const char *id)
{
	struct instance		*in = NULL;
	struct heureka_instance	*hi = NULL;
	size_t			 i;

	if (id == NULL || xmalloc_ready() != 0)
		return (NULL);
	LOCK(c);
	for (i = 0; i < c->apps->n && in == NULL; i++)
		in = application_find(c->apps->apps[i], id);
	if (in != NULL)
		hi = hk_instance_export(in);
	UNLOCK(c);
	return (hi);
}

/* The leader of app in the local copy, by the server's rule. */
struct heureka_instance *
heureka_client_leader(struct heureka_client *c, const char *app)
{
	struct application	*a;
	struct instance		*best = NULL;
	struct heureka_instance	*hi = NULL;

	if (app == NULL || xmalloc_ready() != 0)
		return (NULL);
	LOCK(c);
	if ((a = applications_find(c->apps, app)) != NULL)
		best = hk_app_leader(a);
	if (best != NULL)
		hi = hk_instance_export(best);
	UNLOCK(c);
	return (hi);
}

/* Round robin over the UP instances of app. */
struct heureka_instance *
heureka_client_next_up(struct heureka_client *c, const char *app)
{
	struct application	*a;
	struct heureka_instance	*hi = NULL;
	struct hk_rr		*rr = NULL;
	struct htab_node	*hn;
	uint64_t		 h;
	size_t			 i, n = 0, k;

	if (app == NULL || xmalloc_ready() != 0)
		return (NULL);
	LOCK(c);
	if ((a = applications_find(c->apps, app)) == NULL)
		goto out;
	for (i = 0; i < a->n; i++)
		n += a->instances[i]->status == STATUS_UP;
	if (n == 0)
		goto out;
	h = hash_str_upper(app);
	for (hn = htab_first(&c->rr, h); hn != NULL; hn = hn->next) {
		rr = CONTAINER_OF(hn, struct hk_rr, node);
		if (hn->hash == h && strcasecmp(rr->app, app) == 0)
			break;
		rr = NULL;
	}
	if (rr == NULL) {
		rr = xcalloc(1, sizeof *rr);
		rr->app = xstrdup(app);
		htab_insert(&c->rr, &rr->node, h);
	}
	k = rr->next++ % n;
	for (i = 0; i < a->n; i++) {
		if (a->instances[i]->status != STATUS_UP)
			continue;
		if (k-- == 0) {
			hi = hk_instance_export(a->instances[i]);
			break;
		}
	}
out:
	UNLOCK(c);
	return (hi);
}

/* Instances in the local copy, -1 before the first fetch. */
long
heureka_client_count(struct heureka_client *c)
{
	long	n;

	LOCK(c);
	n = c->fetched ? (long)applications_count(c->apps) : -1;
	UNLOCK(c);
	return (n);
}

/* Register the leader-change callback. */
void
heureka_client_on_leader_change(struct heureka_client *c,
    heureka_leader_cb cb, void *arg)
{
	LOCK(c);
	c->leader_cb = cb;
	c->leader_arg = arg;
	UNLOCK(c);
}

/* Register the change callback. */
void
heureka_client_on_change(struct heureka_client *c, heureka_change_cb cb,
    void *arg)
{
	LOCK(c);
	c->change_cb = cb;
	c->change_arg = arg;
	UNLOCK(c);
}

/* Our instance id. */
const char *
heureka_client_instance_id(struct heureka_client *c)
{
	return (c->self != NULL ? instance_id(c->self) : NULL);
}

/* Change our status: dirty, and an on-demand update if the limiter allows. */
int
heureka_client_set_status(struct heureka_client *c, const char *status)
{
	enum instance_status	st;

	if (status == NULL || instance_status_parse(status, &st) != 0) {
		errno = EINVAL;
		return (-1);
	}
	if (xmalloc_ready() != 0)
		return (-1);
	LOCK(c);
	if (c->self == NULL) {
		UNLOCK(c);
		errno = EINVAL;		/* a client that does not register */
		return (-1);
	}
	if (c->self->status != st) {
		c->self->status = st;
		hk_mark_dirty(c);
		if (c->on_demand && c->started && !c->stopping) {
			if (hk_ratelim_acquire(&c->rl, c->sc.now(c->sc.ctx)))
				hk_arm(c, c->t_kick, 0);
			else
				log_info("heureka: status %s of %s/%s held back "
				    "by the rate limit (%d a minute after a "
				    "burst of %d): it is sent by the next "
				    "replicator run, within %lld s",
				    instance_status_name(st), c->self->app,
				    instance_id(c->self), c->rl.per_min,
				    c->rl.burst, (long long)(c->repl_ms /
				    1000));
		}
	}
	UNLOCK(c);
	return (0);
}

/* Set one metadata entry; the replicator pushes it. */
int
heureka_client_set_metadata(struct heureka_client *c, const char *key,
    const char *value)
{
	const char	*old;

	if (key == NULL || value == NULL || *key == '\0') {
		errno = EINVAL;
		return (-1);
	}
	if (xmalloc_ready() != 0)
		return (-1);
	LOCK(c);
	if (c->self == NULL) {
		UNLOCK(c);
		errno = EINVAL;		/* a client that does not register */
		return (-1);
	}
	if (c->self->metadata.n >= INSTANCE_MAX_METADATA &&
	    kvlist_get(&c->self->metadata, key) == NULL) {
		UNLOCK(c);
		errno = ENOSPC;
		return (-1);
	}
	old = kvlist_get(&c->self->metadata, key);
	if (old == NULL || strcmp(old, value) != 0) {
		kvlist_set(&c->self->metadata, key, value);
		hk_mark_dirty(c);
	}
	UNLOCK(c);
	return (0);
}

/*
 * The library's process-wide set-up, once: its own log level (warn, as
 * heureka.h documents; lines go to stderr until the host gives a
 * callback). Nothing in it ends the host: it links the flavour of
 * xmalloc, log and bug that cannot (common/xmalloc.h), and every entry
 * point that allocates asks xmalloc_ready() first (ENOMEM when low).
 */
static void
lib_init_once(void)
{
	log_set_level(LOG_LEVEL_WARN);
}

/* Run lib_init_once, from every entry point that logs or configures. */
static void
lib_init(void)
{
	static pthread_once_t	once = PTHREAD_ONCE_INIT;

	pthread_once(&once, lib_init_once);
}

/*
 * The caller's options, as far as its struct goes (o->size: fields added
 * after the caller was compiled read as 0). A larger struct, from a newer
 * heureka.h, is taken if the fields this library does not know are 0.
 */
static int
options_copy(const struct heureka_options *o, struct heureka_options *out,
    char **cause)
{
	const unsigned char	*tail;
	size_t			 i;

	memset(out, 0, sizeof *out);
	if (o == NULL || o->size < HEUREKA_OPTIONS_MIN_SIZE) {
		xasprintf(cause, "struct heureka_options: size %zu is not "
		    "set (initialise it with HEUREKA_OPTIONS_INIT)",
		    o != NULL ? o->size : 0);
		return (-1);
	}
	if (o->size > sizeof *out) {
		tail = (const unsigned char *)o;
		for (i = sizeof *out; i < o->size; i++) {
			if (tail[i] != 0) {
				xasprintf(cause, "struct heureka_options: "
				    "size %zu sets fields this libheureka "
				    "(%zu) does not know", o->size,
				    sizeof *out);
				return (-1);
			}
		}
	}
	memcpy(out, o, o->size < sizeof *out ? o->size : sizeof *out);
	return (0);
}

/* Build a struct config from options (weakest first) and make a client. */
struct heureka_client *
heureka_client_new(const struct heureka_options *opts, char **cause)
{
	struct heureka_options	 oc, *o = &oc;
	struct config		 cf;
	struct heureka_client	*c = NULL;
	extern char		**environ;
	const char *const	*s;
	char			*k, *v, buf[32];

	lib_init();
	*cause = NULL;
	if (xmalloc_ready() != 0)
		return (NULL);		/* ENOMEM, no cause */
	if (options_copy(opts, &oc, cause) != 0)
		return (NULL);
	config_defaults(&cf);
	if (o->config_file != NULL &&
	    config_load_file(&cf, o->config_file, cause) != 0)
		goto out;
	if (o->use_env && config_load_env(&cf, environ, cause) != 0)
		goto out;
	for (s = o->settings; s != NULL && *s != NULL; s++) {
		k = xstrdup(*s);
		if ((v = strchr(k, '=')) == NULL) {
			xasprintf(cause, "%s: expected key=value", *s);
			free(k);
			goto out;
		}
		*v++ = '\0';
		if (config_set(&cf, k, v, cause) != 0) {
			free(k);
			goto out;
		}
		free(k);
	}
#define SET(key, val) do {						\
	if ((val) != NULL && config_set(&cf, key, val, cause) != 0)	\
		goto out;						\
} while (0)
	SET("eureka.instance.appname", o->app_name);
	SET("eureka.client.service-url.defaultZone", o->service_url);
	SET("eureka.instance.hostname", o->host_name);
	SET("eureka.instance.ip-address", o->ip_addr);
	SET("eureka.instance.instance-id", o->instance_id);
	if (o->port != 0) {
		snprintf(buf, sizeof buf, "%d", o->port);
		SET("eureka.instance.non-secure-port", buf);
	}
	if (o->no_register)
		SET("eureka.client.register-with-eureka", "false");
	if (o->no_fetch)
		SET("eureka.client.fetch-registry", "false");
	SET("heureka.client.ssl.trust-certificate", o->cacert);
	SET("heureka.client.ssl.certificate", o->client_cert);
	SET("heureka.client.ssl.certificate-private-key", o->client_key);
	if (o->insecure)
		SET("heureka.client.ssl.insecure", "true");
#undef SET
	c = hk_client_alloc(&cf, cause);
out:
	config_free(&cf);
	return (c);
}

/* Run on the caller's loop; -1 with errno (heureka.h) if it cannot. */
int
heureka_client_start(struct heureka_client *c, struct event_base *base)
{
	struct hk_transport	tr;
	struct hk_sched		sc;

	if (c == NULL || base == NULL) {
		errno = EINVAL;
		return (-1);
	}
	if (c->attached) {
		errno = EALREADY;
		return (-1);
	}
	if (xmalloc_ready() != 0)
		return (-1);
	if (hk_transport_evhttp(&tr, base, c->self != NULL ?
	    c->self->ip_addr : NULL, c->connect_timeout_s,
	    c->read_timeout_s, c->tls_ctx) != 0)
		return (-1);
	hk_sched_libevent(&sc, base);
	if (hk_client_attach(c, &tr, &sc) != 0)
		return (-1);
	return (hk_client_start(c));
}

/* Thread body: run the client's own loop until it is told to exit. */
static void *
loop_thread(void *arg)
{
	struct heureka_client	*c = arg;

	event_base_loop(c->own_base, EVLOOP_NO_EXIT_ON_EMPTY);
	return (NULL);
}

/* A threaded client is asked to stop: shut down on the loop thread. */
static void
stop_cb(void *arg)
{
	hk_client_shutdown(arg);
}

/*
 * Run on a new thread with its own loop; -1 with errno if it cannot (the
 * client is then not running, for heureka_client_free).
 */
int
heureka_client_start_thread(struct heureka_client *c)
{
	int	rc;

	if (c == NULL) {
		errno = EINVAL;
		return (-1);
	}
	if (c->attached) {
		errno = EALREADY;
		return (-1);
	}
	if (xmalloc_ready() != 0)
		return (-1);
	if (evthread_use_pthreads() != 0 ||
	    (c->own_base = event_base_new()) == NULL) {
		errno = ENOMEM;
		return (-1);
	}
	c->threaded = 1;
	if (heureka_client_start(c, c->own_base) != 0) {
		c->threaded = 0;
		return (-1);
	}
	if ((c->t_stop = c->sc.timer_new(c->sc.ctx, stop_cb, c)) == NULL) {
		c->threaded = 0;
		errno = ENOMEM;
		return (-1);
	}
	if ((rc = pthread_create(&c->thread, NULL, loop_thread, c)) != 0) {
		c->threaded = 0;
		errno = rc;
		return (-1);
	}
	return (0);
}

/* Cancel, stop and free; see heureka.h for threaded vs loop. */
void
heureka_client_stop(struct heureka_client *c, heureka_done_cb cb, void *arg)
{
	if (c == NULL)
		return;
	if (!c->started) {
		hk_client_free(c);
		if (cb != NULL)
			cb(arg);
		return;
	}
	LOCK(c);
	c->stop_cb = cb;
	c->stop_arg = arg;
	if (c->threaded) {
		c->sc.timer_add(c->sc.ctx, c->t_stop, 0);
		UNLOCK(c);
		pthread_join(c->thread, NULL);
		hk_client_free(c);
		if (cb != NULL)
			cb(arg);
		return;
	}
	UNLOCK(c);
	hk_client_shutdown(c);
}

/* Free at once, without cancelling. */
void
heureka_client_free(struct heureka_client *c)
{
	if (c == NULL)
		return;
	if (c->threaded) {
		event_base_loopexit(c->own_base, NULL);
		pthread_join(c->thread, NULL);
	}
	hk_client_free(c);
}

/* Library log level (process-wide; heureka.h). */
void
heureka_set_log_level(int level)
{
	lib_init();
	if (level < LOG_LEVEL_ERROR)
		level = LOG_LEVEL_ERROR;
	if (level > LOG_LEVEL_DEBUG)
		level = LOG_LEVEL_DEBUG;
	log_set_level((enum log_level)level);
}


/* The host's log callback, called from log.c's sink. */
static heureka_log_cb	 log_cb;
static void		*log_cb_arg;

/* log.c's sink: hand the line to the host. */
static void
log_to_host(enum log_level level, const char *msg, void *arg)
{
	(void)arg;
	if (log_cb != NULL)
		log_cb((int)level, msg, log_cb_arg);
}

/* Route the library's lines to the host (NULL: back to stderr). */
void
heureka_set_log_callback(heureka_log_cb cb, void *arg)
{
	lib_init();
	log_cb = cb;
	log_cb_arg = arg;
	log_set_sink(cb != NULL ? log_to_host : NULL, NULL);
}
