/*
 * ops.c: one logical request of libheureka walking the service URLs
 * (Netflix RetryableEurekaHttpClient, spec §7.7): the pinned server first,
 * else the candidates outside quarantine, at most HK_RETRIES attempts, an
 * answer accepted by the request's kind ends it. The owner's slot (the
 * client's hb_op, reg_op, rf_op, cancel_op) is set before the first send
 * and cleared when the operation ends, whichever way it ends.
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

static void	 op_send(struct hk_op *);

/* Free an operation that is no longer in the list. */
static void
op_free(struct hk_op *op)
{
	free(op->method);
	free(op->path);
	free(op->body);
	free(op);
}

/*
 * Hand the final answer of an operation to its owner. The owner's slot is
 * cleared first: the callback may start the next operation into it.
 */
static void
op_finish(struct hk_op *op, int status, const char *body, size_t len)
{
	struct heureka_client	*c = op->c;

	TAILQ_REMOVE(&c->ops, op, entry);
	if (op->slot != NULL && *op->slot == op)
		*op->slot = NULL;
	if (op->cb != NULL)
		op->cb(status, body != NULL ? body : "", len, op->arg);
	op_free(op);
}

/* The transport answered one attempt. */
static void
op_done_cb(int status, const char *body, size_t len, void *arg)
{
	struct hk_op		*op = arg;
	struct heureka_client	*c = op->c;

	LOCK(c);
	op->handle = NULL;
	if (hk_req_accepted(op->kind, status)) {
		c->ep.pinned = op->cur;
		op_finish(op, status, body, len);
	} else {
		char	*shown = http_url_scrub(c->ep.urls[op->cur]);
		char	 sb[HK_STATUS_MAX];

		log_debug("%s: %s %s%s: %s, trying the next server", __func__,
		    op->method, shown, op->path,
		    hk_status_str(status, sb, sizeof sb));
		free(shown);
		op->last = status;
		hk_endpoints_failed(&c->ep, op->cur);
		op->attempt++;
		op_send(op);
	}
	UNLOCK(c);
}

/*
 * Send the next attempt of an operation, or fail it with the last
 * attempt's status (an HTTP status no answer was accepted for, or why
 * there was none).
 */
static void
op_send(struct hk_op *op)
{
	struct heureka_client	*c = op->c;

	if (op->attempt >= HK_RETRIES || c->ep.n == 0)
		goto fail;
	if (c->ep.pinned >= 0 && (size_t)c->ep.pinned < c->ep.n)
		op->cur = c->ep.pinned;
	else {
		if (!op->have_cand) {
			op->ncand = hk_endpoints_candidates(&c->ep, op->cand);
			op->have_cand = 1;
		}
		if (op->idx >= op->ncand)
			goto fail;
		op->cur = op->cand[op->idx++];
	}
	op->handle = c->tr.send(c->tr.ctx, c->ep.urls[op->cur], op->method,
	    op->path, op->body, op->body != NULL ? strlen(op->body) : 0,
	    op_done_cb, op);
	if (op->handle != NULL)
		return;
	op->last = HK_NET_STATUS(errno == EINVAL ? HK_NET_BADURL :
	    HK_NET_LOCAL);
	hk_endpoints_failed(&c->ep, op->cur);
	op->attempt++;
	op_send(op);
	return;
fail:
	op_finish(op, op->last, NULL, 0);
}

/*
 * Start a request on the first acceptable endpoint. *slot (NULL: the
 * caller keeps no handle) is set before the first send and cleared when
 * the operation ends, so a send the transport refuses at once, which ends
 * the operation before this returns, leaves no freed pointer behind.
 * When the library is low on memory (its reserve spent and not taken
 * back: xmalloc.h) nothing is sent and cb hears HK_NET_NOMEM at once, as
 * from a refused send: the task's next run retries.
 */
void
hk_op_start(struct heureka_client *c, struct hk_op **slot,
    enum hk_req_kind kind, const char *method, const char *path,
    const char *body, hk_done_cb cb, void *arg)
{
	struct hk_op	*op;

	if (xmalloc_ready() != 0) {
		if (cb != NULL)
			cb(HK_NET_STATUS(HK_NET_NOMEM), "", 0, arg);
		return;
	}
	op = xcalloc(1, sizeof *op);
	op->c = c;
	op->kind = kind;
	op->method = xstrdup(method);
	op->path = xstrdup(path);
	op->body = body != NULL ? xstrdup(body) : NULL;
	op->cb = cb;
	op->arg = arg;
	op->cur = -1;
	op->last = HK_NET_STATUS(HK_NET_BADURL);	/* no URL to try */
	op->slot = slot;
	if (slot != NULL)
		*slot = op;
	TAILQ_INSERT_TAIL(&c->ops, op, entry);
	op_send(op);
}

/* Drop an operation without calling its owner; clear its slot. */
void
hk_op_cancel(struct heureka_client *c, struct hk_op *op)
{
	struct hk_op	*o;

	if (op == NULL)
		return;
	if (op->slot != NULL && *op->slot == op)
		*op->slot = NULL;
	TAILQ_FOREACH(o, &c->ops, entry) {
		if (o == op)
			break;
	}
	if (o == NULL)
		return;		/* already finished */
	if (op->handle != NULL)
		c->tr.cancel(c->tr.ctx, op->handle);
	TAILQ_REMOVE(&c->ops, op, entry);
	op_free(op);
}

/* Public-to-the-CLI one-off request. */
void
hk_client_request(struct heureka_client *c, enum hk_req_kind kind,
    const char *method, const char *path, const char *body, hk_done_cb cb,
    void *arg)
{
	LOCK(c);
	hk_op_start(c, NULL, kind, method, path, body, cb, arg);
	UNLOCK(c);
}
