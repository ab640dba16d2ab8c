/*
 * sse.c: a reader of text/event-stream bodies (the server's watch stream,
 * docs/api.md, "Watch and leader"; internal.h). Bytes come in pieces of
 * any size; they are cut into lines (LF or CRLF), each line bounded, and the event:,
 * id: and data: fields of a frame are collected until its blank line, when
 * the whole frame is handed to the caller. Comment lines (keep-alives) and
 * unknown fields are ignored; a line or a frame's data over the bound is
 * dropped with a warning, the stream goes on. The caller may stop the
 * reader from its frame callback, after which the rest of the stream is
 * discarded until hk_sse_reset().
 */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "log.h"
#include "xmalloc.h"

#include "internal.h"

/* An empty reader. */
void
hk_sse_init(struct hk_sse *r)
{
	memset(r, 0, sizeof *r);
	buf_init(&r->line, 0);
	buf_init(&r->data, 0);
}

/* Forget the frame being read. */
static void
sse_frame_reset(struct hk_sse *r)
{
	free(r->event);
	free(r->id);
	r->event = r->id = NULL;
	buf_reset(&r->data);
}

/* Ready for a new stream: no partial line or frame, not stopped. */
void
hk_sse_reset(struct hk_sse *r)
{
	r->skip = 0;
	r->stopped = 0;
	buf_reset(&r->line);
	sse_frame_reset(r);
}

/* Free what the reader holds. */
void
hk_sse_free(struct hk_sse *r)
{
	sse_frame_reset(r);
	buf_free(&r->line);
	buf_free(&r->data);
}

/* One line of the stream, its end removed. */
static void
sse_line(struct hk_sse *r, const char *l, size_t len, hk_sse_frame_cb cb,
    void *arg)
{
	const char	*v;
	size_t		 n, vlen;

	if (len > 0 && l[len - 1] == '\r')
		len--;
	if (len == 0) {
		if ((r->event != NULL || r->data.len > 0) &&
		    cb(r->event, r->id, r->data.len > 0 ? r->data.data : "",
		    r->data.len, arg) != 0)
			r->stopped = 1;
		sse_frame_reset(r);
		return;
	}
	if (l[0] == ':')
		return;			/* keep-alive comment */
	v = memchr(l, ':', len);
	n = v != NULL ? (size_t)(v - l) : len;
	v = v != NULL ? v + 1 : l + len;
	vlen = len - (size_t)(v - l);
	if (vlen > 0 && *v == ' ') {
		v++;
		vlen--;
	}
	if (n == 5 && memcmp(l, "event", 5) == 0) {
		free(r->event);
		r->event = xstrndup(v, vlen);
	} else if (n == 2 && memcmp(l, "id", 2) == 0) {
		free(r->id);
		r->id = xstrndup(v, vlen);
	} else if (n == 4 && memcmp(l, "data", 4) == 0) {
		if (r->data.len > 0)
			buf_addc(&r->data, '\n');
		if (r->data.len + vlen > HK_SSE_LINE_MAX) {
			log_warnx("heureka: watch event too long, dropped");
			buf_reset(&r->data);
			return;
		}
		buf_add(&r->data, v, vlen);
		buf_addc(&r->data, '\0');
		r->data.len--;
	}
}

/* A piece of the stream: split into bounded lines, frames to cb. */
void
hk_sse_feed(struct hk_sse *r, const char *p, size_t len, hk_sse_frame_cb cb,
    void *arg)
{
	const char	*nl;
	size_t		 n;

	while (len > 0 && !r->stopped) {
		nl = memchr(p, '\n', len);
		n = nl != NULL ? (size_t)(nl - p) : len;
		if (r->skip) {
			/* An overlong line: drop it up to its end. */
		} else if (r->line.len + n > HK_SSE_LINE_MAX) {
			log_warnx("heureka: watch line over %d bytes, dropped",
			    HK_SSE_LINE_MAX);
			buf_reset(&r->line);
			r->skip = 1;
		} else
			buf_add(&r->line, p, n);
		if (nl == NULL)
			break;
		if (r->skip)
			r->skip = 0;
		else
			sse_line(r, r->line.data != NULL ? r->line.data : "",
			    r->line.len, cb, arg);
		buf_reset(&r->line);
		p = nl + 1;
		len -= n + 1;
	}
}
