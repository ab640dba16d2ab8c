/*
 * watch_out.c: the bytes the watch hands to its connections (watch_int.h).
 *
 * Blobs are sent by reference, so an event or a snapshot piece is held
 * once whatever the number of watchers. A connection's unsent bytes are
 * its output buffer plus what the kernel holds unacknowledged (Linux
 * SIOCOUTQ, BSD FIONWRITE): issue 21 measured 500 watchers that never
 * read holding 800 MiB with a 64 MiB budget, the kernel's send buffer
 * (autotuned to 4 MiB each) taking what the output buffers no longer
 * could, so that no watcher was ever found full. The kernel's send
 * buffer is also set (twice the bound: its bookkeeping counts too), so
 * that the RESET which ends a full watcher still fits in it and is
 * delivered after the close. A blob goes into the output as one ready
 * chunk (watch_int.h), not through the front's chunk framing.
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <stdio.h>
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

#include "http.h"
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

/* A blob of b's bytes framed as one chunk; b is left empty. */
struct watch_blob *
watch_blob_new(struct watch_acct *a, struct buf *b)
{
	struct watch_blob	*bl = xcalloc(1, sizeof *bl);
	char			 head[32];
	int			 n;

	n = snprintf(head, sizeof head, "%zx\r\n", b->len);
	bl->off = (size_t)n;
	bl->len = b->len;
	bl->size = bl->off + bl->len + 2;
	bl->data = xmalloc(bl->size);
	memcpy(bl->data, head, bl->off);
	if (b->len > 0)
		memcpy(bl->data + bl->off, b->data, b->len);
	memcpy(bl->data + bl->off + bl->len, "\r\n", 2);
	buf_free(b);
	bl->refs = 1;
	bl->acct = a;
	a->refs++;
	a->bytes += bl->size;
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
	bl->acct->bytes -= bl->size;
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
watch_conn_fd(struct hconn *evcon)
{
	struct bufferevent	*bev;

	bev = hconn_bufferevent(evcon);
	return (bev != NULL ? bufferevent_getfd(bev) : -1);
}

/* The connection's output buffer. */
size_t
watch_conn_output(struct hconn *evcon)
{
	struct bufferevent	*bev;

	bev = hconn_bufferevent(evcon);
	return (bev != NULL ?
	    evbuffer_get_length(bufferevent_get_output(bev)) : 0);
}

/* Output buffer plus the kernel's unacknowledged bytes. */
size_t
watch_conn_pending(struct hconn *evcon)
{
	struct bufferevent	*bev;
	size_t			 n = 0;
	evutil_socket_t		 fd;
	int			 q = 0;

	bev = hconn_bufferevent(evcon);
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

/*
 * SO_SNDBUF at twice the bound: what the kernel holds is already within
 * the bound (watch_conn_pending counts it), so this only leaves room for
 * the RESET after a full queue. Twice, because the kernel charges its
 * buffers' overhead to the same limit: set at the bound plus 16 KiB it
 * took 1,042,580 bytes of frames for a 1 MiB bound, and the RESET stayed
 * behind in the output and was lost at the close.
 */
void
watch_conn_cap(struct hconn *evcon, size_t bound)
{
	evutil_socket_t	 fd = watch_conn_fd(evcon);
	int		 v;

	if (fd < 0)
		return;
	v = bound > ((size_t)1 << 29) - WATCH_SNDBUF_SPARE ? 1 << 30 :
	    (int)(2 * bound + WATCH_SNDBUF_SPARE);
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof v);
}

/* One blob into the output by reference; the bytes added. */
size_t
watch_send_blob(struct hconn *evcon, int chunked,
    struct watch_blob *bl)
{
	struct bufferevent	*bev;
	const char		*p = chunked ? bl->data : bl->data + bl->off;
	size_t			 n = chunked ? bl->size : bl->len;

	if (evcon == NULL || bl->len == 0 ||
	    (bev = hconn_bufferevent(evcon)) == NULL)
		return (0);
	/* bufferevent writes it out as the socket takes it (EV_WRITE). */
	if (evbuffer_add_reference(bufferevent_get_output(bev), p, n,
	    watch_blob_sent_cb, watch_blob_ref(bl)) != 0) {
		watch_blob_unref(bl);
		return (0);
	}
	return (n);
}

/* malloc_trim where there is one. */
void
watch_trim(void)
{
#if defined(__GLIBC__)
	(void)malloc_trim(0);
#endif
}
