/*
 * watchout.c: the bytes the watch hands to its connections (watch_int.h).
 *
 * Blobs are sent by reference, so an event or a snapshot piece is held
 * once whatever the number of watchers. A connection's unsent bytes are
 * its output buffer plus what the kernel holds unacknowledged (Linux
 * SIOCOUTQ, BSD FIONWRITE): issue 21 measured 500 watchers that never
 * read holding 800 MiB with a 64 MiB budget, the kernel's send buffer
 * (autotuned to 4 MiB each) taking what the output buffers no longer
 * could. The kernel's send buffer is also capped near the watcher's
 * bound, so that the RESET which ends a full watcher still fits in it
 * and is delivered after the close.
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <stdlib.h>
#include <string.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif
#if defined(__linux__)
#include <linux/sockios.h>
#endif

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/http.h>

#include "watch_int.h"
#include "xmalloc.h"

/* Room kept in the kernel's send buffer past the bound: a RESET. */
#define WATCH_SNDBUF_SPARE	(16 * 1024)

/* A new account with one reference (the watch's). */
struct watch_acct *
watch_acct_new(void)
{
	struct watch_acct	*a = xcalloc(1, sizeof *a);

	a->refs = 1;
	return (a);
}

/* Drop one reference; the last frees it. */
void
watch_acct_unref(struct watch_acct *a)
{
	if (a != NULL && --a->refs == 0)
		free(a);
}

/* A blob of b's bytes; b is left empty. */
struct watch_blob *
watch_blob_new(struct watch_acct *a, struct buf *b)
{
	struct watch_blob	*bl = xcalloc(1, sizeof *bl);

	bl->data = buf_steal(b, &bl->len);
	bl->refs = 1;
	bl->acct = a;
	a->refs++;
	a->bytes += bl->len;
	a->blobs++;
	return (bl);
}

/* One more reference. */
struct watch_blob *
watch_blob_ref(struct watch_blob *bl)
{
	bl->refs++;
	return (bl);
}

/* Drop one reference; the last frees the bytes and leaves the count. */
void
watch_blob_unref(struct watch_blob *bl)
{
	if (bl == NULL || --bl->refs > 0)
		return;
	bl->acct->bytes -= bl->len;
	bl->acct->blobs--;
	watch_acct_unref(bl->acct);
	free(bl->data);
	free(bl);
}

/* evbuffer's cleanup for a blob sent by reference. */
static void
watch_blob_sent_cb(const void *data, size_t len, void *arg)
{
	(void)data;
	(void)len;
	watch_blob_unref(arg);
}

/* The connection's socket, -1 when it has none. */
static evutil_socket_t
watch_conn_fd(struct evhttp_connection *evcon)
{
	struct bufferevent	*bev;

	bev = evhttp_connection_get_bufferevent(evcon);
	return (bev != NULL ? bufferevent_getfd(bev) : -1);
}

/* Output buffer plus the kernel's unacknowledged bytes. */
size_t
watch_conn_pending(struct evhttp_connection *evcon)
{
	struct bufferevent	*bev;
	size_t			 n = 0;
	evutil_socket_t		 fd;
	int			 q = 0;

	bev = evhttp_connection_get_bufferevent(evcon);
	if (bev == NULL)
		return (0);
	n = evbuffer_get_length(bufferevent_get_output(bev));
	if ((fd = bufferevent_getfd(bev)) < 0)
		return (n);
#if defined(SIOCOUTQ)
	if (ioctl(fd, SIOCOUTQ, &q) == 0 && q > 0)
		n += (size_t)q;
#elif defined(FIONWRITE)
	if (ioctl(fd, FIONWRITE, &q) == 0 && q > 0)
		n += (size_t)q;
#endif
	return (n);
}

/* SO_SNDBUF near bound (the kernel doubles it for its bookkeeping). */
void
watch_conn_cap(struct evhttp_connection *evcon, size_t bound)
{
	evutil_socket_t	 fd = watch_conn_fd(evcon);
	int		 v;

	if (fd < 0)
		return;
	v = bound + WATCH_SNDBUF_SPARE > (size_t)1 << 30 ? 1 << 30 :
	    (int)(bound + WATCH_SNDBUF_SPARE);
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof v);
}

/* One blob as one chunk, by reference; the output's growth. */
size_t
watch_send_blob(struct evhttp_request *req, struct evbuffer *tmp,
    struct watch_blob *bl)
{
	struct evhttp_connection *evcon = evhttp_request_get_connection(req);
	struct bufferevent	*bev;
	struct evbuffer		*out = NULL;
	size_t			 before = 0;

	if (evcon != NULL &&
	    (bev = evhttp_connection_get_bufferevent(evcon)) != NULL) {
		out = bufferevent_get_output(bev);
		before = evbuffer_get_length(out);
	}
	if (evbuffer_add_reference(tmp, bl->data, bl->len,
	    watch_blob_sent_cb, watch_blob_ref(bl)) != 0) {
		watch_blob_unref(bl);
		return (0);
	}
	evhttp_send_reply_chunk(req, tmp);
	/* Whatever evhttp did not take goes now (its cleanup runs). */
	evbuffer_drain(tmp, evbuffer_get_length(tmp));
	if (out == NULL)
		return (bl->len);
	return (evbuffer_get_length(out) > before ?
	    evbuffer_get_length(out) - before : 0);
}

/* malloc_trim where there is one. */
void
watch_trim(void)
{
#if defined(__GLIBC__)
	(void)malloc_trim(0);
#endif
}
