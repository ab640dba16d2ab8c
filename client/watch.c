/*
 * watch.c: the client side of heurekad's watch stream (docs/api.md,
 * "Watch and leader"): opened after the first full fetch on the server
 * last talked to, each ADDED/MODIFIED/DELETED event merged into the
 * local copy at once, resumed with Last-Event-ID after a drop (with
 * back-off), and given up (polls only) on a server that has no watch.
 */

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

#define HK_WATCH_BO_MS		500		/* first reconnect delay */
#define HK_WATCH_BO_BOUND	60		/* up to 30 s */

/* A whole frame came: apply it to the local copy; nonzero: read no more. */
static int
watch_event(const char *event, const char *id, const char *data, size_t len,
    void *arg)
{
	struct heureka_client	*c = arg;
	struct instance		*in;
	char			*cause = NULL;
	const char		*ev = event != NULL ? event : "message";
	enum action_type	 at;

	if (c->stopping)
		return (1);
	if (strcmp(ev, "RESET") == 0) {
		/* The server drops us: resume from a clean stack. */
		if (!c->w_wait) {
			c->w_wait = 1;
			hk_arm(c, c->t_watch, 0);
		}
		return (1);
	}
	if (id != NULL) {
		free(c->w_last_id);
		c->w_last_id = xstrdup(id);
	}
	c->w_up = 1;
	hk_backoff_done(&c->w_bo);
	if (strcmp(ev, "ADDED") == 0)
		at = ACTION_ADDED;
	else if (strcmp(ev, "MODIFIED") == 0)
		at = ACTION_MODIFIED;
	else if (strcmp(ev, "DELETED") == 0)
		at = ACTION_DELETED;
	else
		return (0);	/* SYNCED, LEADER (computed here), others */
	in = json_decode_instance(data, len, c->sc.now(c->sc.ctx), &cause);
	if (in == NULL) {
		log_warnx("heureka: bad watch event %s: %s", ev, cause);
		free(cause);
		return (0);
	}
	if (in->app != NULL && instance_id(in) != NULL) {
		in->action_type = at;
		hk_merge_one(c->apps, in->app, in, hk_change_bridge, c);
		hk_leaders_check(c);
	}
	instance_free(in);
	return (0);
}

/* A piece of the stream, for the reader. */
static void
watch_chunk(const char *p, size_t len, void *arg)
{
	struct heureka_client	*c = arg;

	LOCK(c);
	if (!c->stopping)
		hk_sse_feed(&c->w_sse, p, len, watch_event, c);
	UNLOCK(c);
}

/* Clear the per-stream state. */
static void
watch_clear(struct heureka_client *c)
{
	c->w_handle = NULL;
	c->w_up = 0;
	hk_sse_reset(&c->w_sse);
}

/* The stream ended: no watch here (poll only), or reconnect later. */
static void
watch_end(int status, void *arg)
{
	struct heureka_client	*c = arg;
	char			 sb[HK_STATUS_MAX];

	LOCK(c);
	watch_clear(c);
	if (c->stopping) {
		UNLOCK(c);
		return;
	}
	if (status == 403 || status == 404 || status == 405 ||
	    status == HK_STREAM_NOT_SSE) {
		log_info("heureka: the server has no watch (%s): polling",
		    status == HK_STREAM_NOT_SSE ? "not an event stream" :
		    hk_status_str(status, sb, sizeof sb));
		c->w_none = 1;
		c->w_none_at = c->sc.now(c->sc.ctx);
	} else if (!c->w_wait) {
		c->w_wait = 1;
		hk_arm(c, c->t_watch, hk_backoff_timeout(&c->w_bo));
	}
	UNLOCK(c);
}

/* Open the stream on the server we last talked to. */
void
hk_watch_open(struct heureka_client *c)
{
	int	i;

	if (c->tr.stream == NULL || c->stopping || c->ep.n == 0)
		return;
	i = c->ep.pinned >= 0 && (size_t)c->ep.pinned < c->ep.n ?
	    c->ep.pinned : 0;
	c->w_none = 0;
	watch_clear(c);
	/* Low on memory (xmalloc.h): not now, the reconnect timer retries. */
	c->w_handle = xmalloc_ready() != 0 ? NULL : c->tr.stream(c->tr.ctx,
	    c->ep.urls[i], "heureka/watch", c->w_last_id, watch_chunk,
	    watch_end, c);
	if (c->w_handle == NULL && !c->w_wait) {
		c->w_wait = 1;
		hk_arm(c, c->t_watch, hk_backoff_timeout(&c->w_bo));
	}
}

/* Reconnect timer (also closes a stream the server RESET). */
void
hk_watch_cb(void *arg)
{
	struct heureka_client	*c = arg;

	LOCK(c);
	c->w_wait = 0;
	if (c->w_handle != NULL) {
		c->tr.cancel(c->tr.ctx, c->w_handle);
		watch_clear(c);
	}
	if (!c->stopping)
		hk_watch_open(c);
	UNLOCK(c);
}

/* Drop the stream and its timer (shutdown). */
void
hk_watch_stop(struct heureka_client *c)
{
	hk_disarm(c, c->t_watch);
	c->w_wait = 0;
	if (c->w_handle != NULL) {
		c->tr.cancel(c->tr.ctx, c->w_handle);
		watch_clear(c);
	}
}
